// Kernelforge's own formats (docs/formats/): FRACTAL64 and VQ3_64.
#include "quant/private_formats.h"

namespace kf::quant {

std::span<const CodecEntry> privateCodecs() {
  static const CodecEntry codecs[] = {
      {Format::FRACTAL64, kFractal64Codec},
      {Format::VQ3_64, kVq3_64Codec},
  };
  return codecs;
}

} // namespace kf::quant
