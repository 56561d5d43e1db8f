// Kernelforge's own formats FRACTAL64 and VQ3_64 (docs/formats/).
#include "quant/codec.h"

namespace kf::quant {

std::span<const CodecEntry> private_codecs() { return {}; }

} // namespace kf::quant
