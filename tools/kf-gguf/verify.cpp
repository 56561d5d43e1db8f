#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/quant.h"
#include "tensor_rows.h"

namespace kf::gguf_tool {

absl::StatusOr<int> verify(const gguf::File &file, std::ostream &out) {
  int bad = 0, unchecked = 0;
  for (const gguf::TensorInfo &t : file.tensors()) {
    std::string_view format = formatInfo(t.format).name;
    if (!hasDequantize(t.format)) {
      ++unchecked;
      out << absl::StreamFormat("%s (%s): not checked: no decoder for %s\n",
                                t.name, toAbsl(format), toAbsl(format));
      continue;
    }
    uint64_t nonFinite = 0, element = 0, first = 0;
    absl::Status s = decodeRows(file, t, [&](std::span<const float> values) {
      for (float v : values) {
        if (!std::isfinite(v) && nonFinite++ == 0)
          first = element;
        ++element;
      }
      return absl::OkStatus();
    });
    if (!s.ok())
      return s;
    if (nonFinite == 0) {
      out << absl::StreamFormat("%s (%s): ok\n", t.name, toAbsl(format));
      continue;
    }
    ++bad;
    out << absl::StreamFormat(
        "%s (%s): %d non-finite values of %d, the first at element %d\n",
        t.name, toAbsl(format), nonFinite, element, first);
  }
  out << absl::StreamFormat("%s: %d tensors, %d with non-finite values, %d "
                            "not checked\n",
                            file.name(), file.tensors().size(), bad, unchecked);
  return bad;
}

} // namespace kf::gguf_tool
