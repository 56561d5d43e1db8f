// Packing of Kernelforge's own formats FRACTAL64 and VQ3_64
// (kf/runtime/packed_layout.h, "Kernelforge's own formats"): one row's block
// of 64 weights at a time, for packing.cpp's loops.
#pragma once

#include <cstdint>

#include "kf/runtime/packed_layout.h"

namespace kf::pack {

// Row r of the packed block `block` from the file block `in`, or a zero row
// (every weight 0) when `in` is null.
void packPrivateRow(const PackedLayout &layout, const uint8_t *in,
                    uint8_t *block, int r);
// The file block of row r back from the packed block.
void unpackPrivateRow(const PackedLayout &layout, const uint8_t *block, int r,
                      uint8_t *out);
// Row r's 64 weights from the packed block, as the reference decoder gives
// them for the file block.
void dequantizePrivateRow(const PackedLayout &layout, const uint8_t *block,
                          int r, float *y);

} // namespace kf::pack
