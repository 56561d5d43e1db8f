// The IQ1 ternary layouts: each slot's 11-bit grid index becomes the 2-bit
// codes v + 1 of its eight grid values, and the scales and delta signs move
// into per-row words (IQ1_M's delta signs into per-slot row masks). Going back
// looks the codes up among iq1s_grid's 2048 entries (all distinct), so a packed
// tensor returns the file's bytes, and it decodes through the reference decoder
// of the file's block (packing.cpp).
#include "pack/ternary_packing.h"
#include "pack/bit_array.h"

#include <array>
#include <cstring>

#include "quant/codec.h"
#include "quant/grids.h"

namespace kf::pack {
namespace {

using quant::loadU16;
using quant::loadU32;
using quant::storeU16;
using quant::storeU32;
using quant::grids::iq1s_grid;

// One row's super-block as the two file formats hold it: a grid index and a
// delta sign per slot of 8 weights (IQ1_S's sign is its group's, repeated
// over the group's four slots), and the scales: IQ1_S's fp16 d and 3-bit
// group scales, IQ1_M's four scale words (sub-block scales and d).
struct Iq1Block {
  uint16_t index[32] = {};
  uint32_t negative = 0; // bit s: slot s's delta is -1/8
  uint16_t d = 0;
  uint8_t scale[8] = {};
  uint16_t words[4] = {};
};

// IQ1_S file block: fp16 d, qs[32], u16 qh[8] (the slot's high index bits
// 3l.., the group's scale 12..14 and delta sign 15). IQ1_M: qs[32], qh[16]
// (slot 2i + h's nibble h of byte i: 3 high index bits and the delta sign),
// u16 scales[4].
constexpr int kIq1sQh = 34, kIq1mQh = 32, kIq1mScales = 48;

Iq1Block readBlock(Format format, const uint8_t *in) {
  Iq1Block block;
  const bool m = format == Format::IQ1_M;
  const uint8_t *qs = m ? in : in + 2;
  for (int s = 0; s < 32; ++s) {
    const int g = s / 4, l = s % 4;
    int high;
    bool negative;
    if (m) {
      const int nibble = in[kIq1mQh + s / 2] >> 4 * (s % 2) & 15;
      high = nibble & 7;
      negative = nibble & 8;
    } else {
      const uint16_t qh = loadU16(in + kIq1sQh + 2 * g);
      high = qh >> 3 * l & 7;
      negative = qh >> 15;
      block.scale[g] = qh >> 12 & 7;
    }
    block.index[s] = static_cast<uint16_t>(qs[s] | high << 8);
    block.negative |= static_cast<uint32_t>(negative) << s;
  }
  if (m)
    for (int p = 0; p < 4; ++p)
      block.words[p] = loadU16(in + kIq1mScales + 2 * p);
  else
    block.d = loadU16(in);
  return block;
}

void writeBlock(Format format, const Iq1Block &block, uint8_t *out) {
  const bool m = format == Format::IQ1_M;
  uint8_t *qs = m ? out : out + 2;
  if (m) {
    std::memset(out + kIq1mQh, 0, 16);
    for (int p = 0; p < 4; ++p)
      storeU16(out + kIq1mScales + 2 * p, block.words[p]);
  } else {
    storeU16(out, block.d);
    for (int g = 0; g < 8; ++g)
      storeU16(out + kIq1sQh + 2 * g,
               static_cast<uint16_t>(block.scale[g] << 12 |
                                     (block.negative >> 4 * g & 1) << 15));
  }
  for (int s = 0; s < 32; ++s) {
    qs[s] = static_cast<uint8_t>(block.index[s]);
    const int high = block.index[s] >> 8;
    if (m) {
      out[kIq1mQh + s / 2] |= static_cast<uint8_t>(
          (high | (block.negative >> s & 1) << 3) << 4 * (s % 2));
    } else {
      const int g = s / 4, l = s % 4;
      storeU16(out + kIq1sQh + 2 * g,
               static_cast<uint16_t>(loadU16(out + kIq1sQh + 2 * g) |
                                     high << 3 * l));
    }
  }
}

// The 2-bit codes v + 1 of a grid entry's eight values, weight j's in bits
// 2j..2j + 1.
uint16_t entryCodes(uint64_t entry) {
  uint16_t codes = 0;
  for (int j = 0; j < 8; ++j)
    codes |= static_cast<uint16_t>((static_cast<int8_t>(entry >> 8 * j) + 1)
                                   << 2 * j);
  return codes;
}

constexpr uint16_t kNoEntry = 0xffff;

// The grid index of each 16-bit code word, kNoEntry where none has it.
const std::array<uint16_t, 1 << 16> &codeIndices() {
  static const auto *table = [] {
    auto *t = new std::array<uint16_t, 1 << 16>;
    t->fill(kNoEntry);
    for (uint16_t i = 0; i < std::size(iq1s_grid); ++i)
      (*t)[entryCodes(iq1s_grid[i])] = i;
    return t;
  }();
  return *table;
}

// Row r's IQ1_M delta bits, as Iq1Block's `negative` (bit s: slot s's delta
// is -1/8; the layout's bits are set where it is +1/8).
void storeIQ1_MNegative(const PackedLayout &layout, uint8_t *block, int r,
                        uint32_t negative) {
  uint8_t *deltas = block + iq1mTernaryDeltasOffset(layout);
  for (int s = 0; s < 32; ++s)
    setBit(deltas, iq1mTernaryDeltaBit(layout, s, r), !(negative >> s & 1));
}
uint32_t loadIQ1_MNegative(const PackedLayout &layout, const uint8_t *block,
                           int r) {
  const uint8_t *deltas = block + iq1mTernaryDeltasOffset(layout);
  uint32_t negative = 0;
  for (int s = 0; s < 32; ++s)
    negative |= static_cast<uint32_t>(
                    !getBit(deltas, iq1mTernaryDeltaBit(layout, s, r)))
                << s;
  return negative;
}

// Where weight w's code lies: byte and bit offset of its 2 bits.
int64_t codeByte(const PackedLayout &layout, int w, int r) {
  return iq1TernaryCodesOffset(layout, w / 16, r) + w % 4;
}
int codeShift(int w) { return 2 * (w % 16 / 4); }

} // namespace

void packTernaryRow(const PackedLayout &layout, const uint8_t *in,
                    uint8_t *block, int r) {
  // A zero row (no `in`): every field 0, every value 0 (code 1).
  const Iq1Block fields = in ? readBlock(layout.format, in) : Iq1Block{};
  if (layout.format == Format::IQ1_M) {
    for (int p = 0; p < 4; ++p)
      storeU16(block + iq1mScalesOffset(layout, p, r), fields.words[p]);
    storeIQ1_MNegative(layout, block, r, fields.negative);
  } else {
    storeU16(block + iq1sTernaryDOffset(r), fields.d);
    uint32_t word = 0;
    for (int g = 0; g < 8; ++g)
      word |= static_cast<uint32_t>(fields.scale[g]) << 3 * g |
              (fields.negative >> 4 * g & 1) << (24 + g);
    storeU32(block + iq1sTernaryScalesOffset(layout, r), word);
  }
  for (int t = 0; t < 16; ++t)
    std::memset(block + iq1TernaryCodesOffset(layout, t, r), in ? 0 : 0x55, 4);
  if (!in)
    return;
  for (int s = 0; s < 32; ++s) {
    const uint16_t codes = entryCodes(iq1s_grid[fields.index[s]]);
    for (int j = 0; j < 8; ++j) {
      const int w = 8 * s + j;
      block[codeByte(layout, w, r)] |=
          static_cast<uint8_t>((codes >> 2 * j & 3) << codeShift(w));
    }
  }
}

bool unpackTernaryRow(const PackedLayout &layout, const uint8_t *block, int r,
                      uint8_t *out) {
  Iq1Block fields;
  if (layout.format == Format::IQ1_M) {
    for (int p = 0; p < 4; ++p)
      fields.words[p] = loadU16(block + iq1mScalesOffset(layout, p, r));
    fields.negative = loadIQ1_MNegative(layout, block, r);
  } else {
    fields.d = loadU16(block + iq1sTernaryDOffset(r));
    const uint32_t word = loadU32(block + iq1sTernaryScalesOffset(layout, r));
    for (int g = 0; g < 8; ++g) {
      fields.scale[g] = word >> 3 * g & 7;
      if (word >> (24 + g) & 1)
        fields.negative |= 0xfu << 4 * g;
    }
  }
  for (int s = 0; s < 32; ++s) {
    uint16_t codes = 0;
    for (int j = 0; j < 8; ++j) {
      const int w = 8 * s + j;
      codes |= static_cast<uint16_t>(
          (block[codeByte(layout, w, r)] >> codeShift(w) & 3) << 2 * j);
    }
    fields.index[s] = codeIndices()[codes];
    if (fields.index[s] == kNoEntry)
      return false;
  }
  writeBlock(layout.format, fields, out);
  return true;
}

} // namespace kf::pack
