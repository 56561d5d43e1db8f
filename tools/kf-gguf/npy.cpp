#include "npy.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kf::gguf_tool {

std::vector<uint8_t> npy_float32_header(std::span<const int64_t> shape) {
  // A 1-tuple needs its trailing comma: "(5,)".
  std::string dims = absl::StrJoin(shape, ", ");
  if (shape.size() == 1)
    dims += ",";
  std::string dict = absl::StrCat("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (",
                                  dims, "), }");
  // Magic (6), version (2), header length (2), then the dictionary padded
  // with spaces and ended by a newline.
  constexpr size_t kPrefix = 10, kAlign = 64;
  size_t total = (kPrefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
  dict.resize(total - kPrefix - 1, ' ');
  dict += '\n';
  std::vector<uint8_t> header = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  uint16_t length = static_cast<uint16_t>(dict.size());
  header.push_back(static_cast<uint8_t>(length & 0xff));
  header.push_back(static_cast<uint8_t>(length >> 8));
  header.insert(header.end(), dict.begin(), dict.end());
  return header;
}

} // namespace kf::gguf_tool
