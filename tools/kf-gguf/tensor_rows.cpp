#include "tensor_rows.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"

namespace kf::gguf_tool {

absl::Status
decodeRows(const gguf::File &file, const gguf::TensorInfo &tensor,
           absl::FunctionRef<absl::Status(std::span<const float>)> sink) {
  std::string_view format = formatInfo(tensor.format).name;
  if (!hasDequantize(tensor.format))
    return absl::UnimplementedError(absl::StrCat(
        file.name(), ": tensor ", gguf::quoted(tensor.name), " is ",
        toAbsl(format), ", which Kernelforge cannot decode yet"));
  int64_t rows = tensor.rows();
  if (rows == 0)
    return absl::OkStatus();
  uint64_t rowElements = static_cast<uint64_t>(tensor.shape[0]);
  uint64_t rowSize = *rowBytes(tensor.format, tensor.shape[0]);
  uint64_t batch = std::max<uint64_t>(1, (uint64_t{1} << 20) / rowElements);
  std::span<const uint8_t> data = file.data(tensor);
  std::vector<float> decoded;
  for (uint64_t row = 0; row < uint64_t(rows); row += batch) {
    uint64_t n = std::min<uint64_t>(batch, rows - row);
    decoded.resize(n * rowElements);
    KF_RETURN_IF_ERROR(dequantize(
        tensor.format, data.subspan(row * rowSize, n * rowSize), decoded));
    KF_RETURN_IF_ERROR(sink(decoded));
  }
  return absl::OkStatus();
}

} // namespace kf::gguf_tool
