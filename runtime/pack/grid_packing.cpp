// The packed IQ grid layouts (kf/runtime/packed_layout.h): each field of the
// file's block moves to its place in the group, the rows side by side. IQ1_S
// and IQ1_M keep the file's bytes; IQ2_XXS's 7-bit sign indices become the
// 8-bit masks ksigns_iq2xs gives, and go back by dropping the parity bit (bit
// 7), which ksigns_iq2xs derives from the other seven. Decoding goes back to
// the file's block and through the reference decoder, so a packed tensor
// decodes as the file does by construction and the checks test the moves.
// IQ2_XXS's code book layout moves the indices and the masks' bits elsewhere
// (iq2xxsCodebookIndexOffset, iq2xxsCodebookSignBit), the same way.
#include "pack/grid_packing.h"
#include "pack/bit_array.h"
#include "pack/ternary_packing.h"

#include <array>
#include <cstring>
#include <span>

#include "kf/runtime/quant.h"
#include "quant/codec.h"
#include "quant/grids.h"

namespace kf::pack {
namespace {

using quant::grids::ksigns_iq2xs;

// The largest file block of the grid formats (IQ2_XXS's).
constexpr int kMaxFileBlock = 66;

// IQ2_XXS file block: fp16 d, then per group g of 32 weights 8 bytes: four
// grid indices and a u32 of four 7-bit sign indices (bits 7l..7l + 6) and the
// 4-bit scale (bits 28..31).
constexpr int kIq2xxsGroupOffset = 2;

// Where slot s's grid index and sign mask of row r lie: the grid layout's
// bytes, or the code book layout's index byte and the mask's 8 scattered
// bits.
int64_t iq2xxsIndexAt(const PackedLayout &layout, int s, int r) {
  return layout.coding == WeightCoding::CodeBook
             ? iq2xxsCodebookIndexOffset(layout, s, r)
             : iq2xxsIndexOffset(layout, s, r);
}

void storeIQ2_XXSSigns(const PackedLayout &layout, uint8_t *block, int s, int r,
                       uint8_t mask) {
  if (layout.coding != WeightCoding::CodeBook) {
    block[iq2xxsSignsOffset(layout, s, r)] = mask;
    return;
  }
  for (int j = 0; j < 8; ++j)
    setBit(block, iq2xxsCodebookSignBit(layout, s, r, j), mask >> j & 1);
}

uint8_t loadIQ2_XXSSigns(const PackedLayout &layout, const uint8_t *block,
                         int s, int r) {
  if (layout.coding != WeightCoding::CodeBook)
    return block[iq2xxsSignsOffset(layout, s, r)];
  uint8_t mask = 0;
  for (int j = 0; j < 8; ++j)
    mask |= static_cast<uint8_t>(
        getBit(block, iq2xxsCodebookSignBit(layout, s, r, j)) << j);
  return mask;
}

void packIQ2_XXS(const PackedLayout &layout, const uint8_t *in, uint8_t *block,
                 int r) {
  std::memcpy(block + iq2xxsDOffset(r), in, 2);
  uint8_t scales[4] = {};
  for (int g = 0; g < 8; ++g) {
    const uint8_t *q = in + kIq2xxsGroupOffset + 8 * g;
    uint32_t signsScale = quant::loadU32(q + 4);
    scales[g / 2] |= static_cast<uint8_t>((signsScale >> 28) << 4 * (g % 2));
    for (int l = 0; l < 4; ++l) {
      block[iq2xxsIndexAt(layout, 4 * g + l, r)] = q[l];
      storeIQ2_XXSSigns(layout, block, 4 * g + l, r,
                        ksigns_iq2xs[(signsScale >> 7 * l) & 127]);
    }
  }
  for (int p = 0; p < 4; ++p)
    block[iq2xxsScaleOffset(layout, p, r)] = scales[p];
}

void unpackIQ2_XXS(const PackedLayout &layout, const uint8_t *block, int r,
                   uint8_t *out) {
  std::memcpy(out, block + iq2xxsDOffset(r), 2);
  for (int g = 0; g < 8; ++g) {
    uint8_t *q = out + kIq2xxsGroupOffset + 8 * g;
    uint32_t scale =
        block[iq2xxsScaleOffset(layout, g / 2, r)] >> 4 * (g % 2) & 15;
    uint32_t signsScale = scale << 28;
    for (int l = 0; l < 4; ++l) {
      q[l] = block[iq2xxsIndexAt(layout, 4 * g + l, r)];
      signsScale |= static_cast<uint32_t>(
                        loadIQ2_XXSSigns(layout, block, 4 * g + l, r) & 127)
                    << 7 * l;
    }
    quant::storeU32(q + 4, signsScale);
  }
}

// Where each byte of an IQ1 file block goes in the packed block: the two
// formats only move bytes.
template <typename Fn>
void forEachIq1Byte(const PackedLayout &layout, int r, Fn fn) {
  if (layout.format == Format::IQ1_S) {
    // fp16 d, qs[32], u16 qh[8]
    for (int i = 0; i < 2; ++i)
      fn(i, iq1sDOffset(r) + i);
    for (int s = 0; s < 32; ++s)
      fn(2 + s, iq1sIndexOffset(layout, s, r));
    for (int g = 0; g < 8; ++g)
      for (int i = 0; i < 2; ++i)
        fn(34 + 2 * g + i, iq1sQhOffset(layout, g, r) + i);
    return;
  }
  // IQ1_M: qs[32], qh[16], u16 scales[4]
  for (int s = 0; s < 32; ++s)
    fn(s, iq1mIndexOffset(layout, s, r));
  for (int i = 0; i < 16; ++i)
    fn(32 + i, iq1mQhOffset(layout, i, r));
  for (int p = 0; p < 4; ++p)
    for (int i = 0; i < 2; ++i)
      fn(48 + 2 * p + i, iq1mScalesOffset(layout, p, r) + i);
}

} // namespace

void packGridRow(const PackedLayout &layout, const uint8_t *in, uint8_t *block,
                 int r) {
  // A padding row: the file block of zeros, d 0 (IQ1_M's too), weights 0.
  static constexpr std::array<uint8_t, kMaxFileBlock> kZeroBlock{};
  if (layout.coding == WeightCoding::Ternary) {
    packTernaryRow(layout, in, block, r);
    return;
  }
  if (in == nullptr)
    in = kZeroBlock.data();
  if (layout.format == Format::IQ2_XXS) {
    packIQ2_XXS(layout, in, block, r);
    return;
  }
  forEachIq1Byte(layout, r,
                 [&](int file, int64_t packed) { block[packed] = in[file]; });
}

bool unpackGridRow(const PackedLayout &layout, const uint8_t *block, int r,
                   uint8_t *out) {
  if (layout.coding == WeightCoding::Ternary)
    return unpackTernaryRow(layout, block, r, out);
  if (layout.format == Format::IQ2_XXS) {
    unpackIQ2_XXS(layout, block, r, out);
    return true;
  }
  forEachIq1Byte(layout, r,
                 [&](int file, int64_t packed) { out[file] = block[packed]; });
  return true;
}

bool dequantizeGridRow(const PackedLayout &layout, const uint8_t *block, int r,
                       float *y) {
  const int bytes = formatInfo(layout.format).blockBytes;
  std::array<uint8_t, kMaxFileBlock> file;
  if (!unpackGridRow(layout, block, r, file.data()))
    return false;
  // A whole block of the format: the checked API cannot fail on it.
  (void)dequantize(layout.format, std::span(file.data(), bytes),
                   std::span(y, 256));
  return true;
}

} // namespace kf::pack
