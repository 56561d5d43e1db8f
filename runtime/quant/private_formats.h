// Internal: the codecs of Kernelforge's own formats, one file each.
#pragma once

#include "quant/codec.h"

namespace kf::quant {

extern const Codec kFractal64Codec; // fractal64.cpp
extern const Codec kVq3_64Codec;    // vq3_64.cpp

} // namespace kf::quant
