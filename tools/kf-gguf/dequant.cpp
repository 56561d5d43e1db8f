#include "absl/strings/str_cat.h"
#include "commands.h"
#include "kf/runtime/atomic_file.h"
#include "kf/runtime/npy.h"
#include "kf/runtime/status_macros.h"
#include "tensor_rows.h"

namespace kf::gguf_tool {

absl::Status dequant(const gguf::File &file, std::string_view name,
                     const std::string &outPath) {
  const gguf::TensorInfo *tensor = file.findTensor(name);
  if (!tensor)
    return absl::NotFoundError(
        absl::StrCat(file.name(), ": no tensor ", gguf::quoted(name)));
  std::vector<int64_t> numpyShape(tensor->shape.rbegin(), tensor->shape.rend());
  KF_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::create(outPath));
  KF_RETURN_IF_ERROR(out.write(npyFloat32Header(numpyShape)));
  KF_RETURN_IF_ERROR(
      decodeRows(file, *tensor, [&](std::span<const float> values) {
        return out.write({reinterpret_cast<const uint8_t *>(values.data()),
                          values.size_bytes()});
      }));
  return out.commit();
}

} // namespace kf::gguf_tool
