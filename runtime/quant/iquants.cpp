// ggml's IQ formats IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ4_NL, IQ4_XS
// (spec/quant_formats.md §3.11-3.14, §3.21, §4).
#include "quant/codec.h"

namespace kf::quant {

std::span<const CodecEntry> iquant_codecs() { return {}; }

} // namespace kf::quant
