// The packed IQ grid layouts (kf/runtime/packed_layout.h): each field of the
// file's block moves to its place in the group, the rows side by side;
// IQ2_XXS's 7-bit sign indices become the 8-bit masks ksigns_iq2xs gives, and
// go back by dropping the parity bit (bit 7), which ksigns_iq2xs derives from
// the other seven. Decoding goes back to the file's block and through the
// reference decoder, so a packed tensor decodes as the file does by
// construction, and the checks test the moves.
#include "pack/grid_packing.h"

#include <array>
#include <cstring>
#include <span>

#include "kf/runtime/quant.h"
#include "quant/codec.h"
#include "quant/grids.h"

namespace kf::pack {
namespace {

using quant::grids::ksigns_iq2xs;

// IQ2_XXS file block: fp16 d, then per group g of 32 weights 8 bytes: four
// grid indices and a u32 of four 7-bit sign indices (bits 7l..7l + 6) and the
// 4-bit scale (bits 28..31).
constexpr int kIq2xxsBytes = 66;
constexpr int kIq2xxsGroupOffset = 2;

void pack_iq2_xxs(const PackedLayout &layout, const uint8_t *in, uint8_t *block,
                  int r) {
  std::memcpy(block + iq2_xxs_d_offset(r), in, 2);
  uint8_t scales[4] = {};
  for (int g = 0; g < 8; ++g) {
    const uint8_t *q = in + kIq2xxsGroupOffset + 8 * g;
    uint32_t signs_scale = quant::load_u32(q + 4);
    scales[g / 2] |= static_cast<uint8_t>((signs_scale >> 28) << 4 * (g % 2));
    for (int l = 0; l < 4; ++l) {
      block[iq2_xxs_index_offset(layout, 4 * g + l, r)] = q[l];
      block[iq2_xxs_signs_offset(layout, 4 * g + l, r)] =
          ksigns_iq2xs[(signs_scale >> 7 * l) & 127];
    }
  }
  for (int p = 0; p < 4; ++p)
    block[iq2_xxs_scale_offset(layout, p, r)] = scales[p];
}

void unpack_iq2_xxs(const PackedLayout &layout, const uint8_t *block, int r,
                    uint8_t *out) {
  std::memcpy(out, block + iq2_xxs_d_offset(r), 2);
  for (int g = 0; g < 8; ++g) {
    uint8_t *q = out + kIq2xxsGroupOffset + 8 * g;
    uint32_t scale =
        block[iq2_xxs_scale_offset(layout, g / 2, r)] >> 4 * (g % 2) & 15;
    uint32_t signs_scale = scale << 28;
    for (int l = 0; l < 4; ++l) {
      q[l] = block[iq2_xxs_index_offset(layout, 4 * g + l, r)];
      signs_scale |=
          static_cast<uint32_t>(
              block[iq2_xxs_signs_offset(layout, 4 * g + l, r)] & 127)
          << 7 * l;
    }
    quant::store_u32(q + 4, signs_scale);
  }
}

} // namespace

void pack_grid_row(const PackedLayout &layout, const uint8_t *in,
                   uint8_t *block, int r) {
  // A padding row: the file block of zeros, d 0, weights 0.
  static constexpr std::array<uint8_t, kIq2xxsBytes> kZeroBlock{};
  pack_iq2_xxs(layout, in ? in : kZeroBlock.data(), block, r);
}

void unpack_grid_row(const PackedLayout &layout, const uint8_t *block, int r,
                     uint8_t *out) {
  unpack_iq2_xxs(layout, block, r, out);
}

void dequantize_grid_row(const PackedLayout &layout, const uint8_t *block,
                         int r, float *y) {
  std::array<uint8_t, kIq2xxsBytes> file;
  unpack_grid_row(layout, block, r, file.data());
  // A whole block of the format: the checked API cannot fail on it.
  (void)dequantize(layout.format, file, std::span(y, 256));
}

} // namespace kf::pack
