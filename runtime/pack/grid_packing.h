// Packing of the IQ grid formats (kf/runtime/packed_layout.h, "IQ grid
// formats", and IQ1's "ternary layouts", pack/ternary_packing.cpp): one row's
// super-block at a time, for packing.cpp's loops.
#pragma once

#include <cstdint>

#include "kf/runtime/packed_layout.h"

namespace kf::pack {

// Row r of the packed block `block` from the file block `in`, or a zero row
// (every weight 0) when `in` is null.
void packGridRow(const PackedLayout &layout, const uint8_t *in, uint8_t *block,
                 int r);
// The file block of row r back from the packed block; false when a ternary
// layout's codes are no grid entry (bytes no packing wrote).
bool unpackGridRow(const PackedLayout &layout, const uint8_t *block, int r,
                   uint8_t *out);
// Row r's 256 weights from the packed block, as the reference decoder gives
// them for the file block; false as unpackGridRow.
bool dequantizeGridRow(const PackedLayout &layout, const uint8_t *block, int r,
                       float *y);

} // namespace kf::pack
