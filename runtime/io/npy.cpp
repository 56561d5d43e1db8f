#include "kf/runtime/npy.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kf/runtime/atomic_file.h"
#include "kf/runtime/status_macros.h"

namespace kf {

std::vector<uint8_t> npyFloat32Header(std::span<const int64_t> shape) {
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

absl::Status writeNpyFloat32(const std::string &path,
                             std::span<const int64_t> shape,
                             std::span<const float> values) {
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  if (elements != static_cast<int64_t>(values.size()))
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", values.size(),
                                                   " values for an array of ",
                                                   elements, " elements"));
  KF_ASSIGN_OR_RETURN(AtomicFile out, AtomicFile::create(path));
  KF_RETURN_IF_ERROR(out.write(npyFloat32Header(shape)));
  KF_RETURN_IF_ERROR(out.write(
      {reinterpret_cast<const uint8_t *>(values.data()), values.size_bytes()}));
  return out.commit();
}

} // namespace kf
