// Packing of the IQ1 ternary layouts (kf/runtime/packed_layout.h, "IQ1
// ternary layouts"): one row's super-block at a time, for packing.cpp's loops.
#pragma once

#include <cstdint>

#include "kf/runtime/packed_layout.h"

namespace kf::pack {

// Row r of the packed block `block` from the IQ1_S or IQ1_M file block `in`
// (each weight's grid value as a 2-bit code), or a zero row (d 0, every
// value 0) when `in` is null.
void packTernaryRow(const PackedLayout &layout, const uint8_t *in,
                    uint8_t *block, int r);
// The file block of row r back from the packed block: false when a slot's
// eight codes are not an entry of iq1s_grid (bytes no packing wrote).
bool unpackTernaryRow(const PackedLayout &layout, const uint8_t *block, int r,
                      uint8_t *out);

} // namespace kf::pack
