// ggml's K-quants Q2_K .. Q6_K (spec/quant_formats.md §3.6-3.10).
#include "quant/codec.h"

namespace kf::quant {

std::span<const CodecEntry> kquant_codecs() { return {}; }

} // namespace kf::quant
