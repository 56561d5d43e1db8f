// The packed layouts of FRACTAL64 and VQ3_64 (kf/runtime/packed_layout.h).
// VQ3_64 only moves the file's bytes and bits within them, so it decodes by
// moving them back and running the reference decoder: the checks test the
// moves. FRACTAL64 moves its index bits, so it decodes straight from the
// packed K-groups as a kernel reads them (one shift and mask per 4 weights),
// in the reference decoder's arithmetic d * float(s * L): the checks test the
// layout's description too.
#include "pack/private_packing.h"

#include <array>
#include <cstring>
#include <span>

#include "kf/runtime/quant.h"
#include "quant/codec.h"

namespace kf::pack {
namespace {

// The largest file block of the two formats (FRACTAL64's).
constexpr int kMaxFileBlock = 30;

// FRACTAL64 file block: fp16 d, u32 scales, ql[16] (weight w's low bits at
// byte w % 16, bits 2(w / 16)), u64 qh (weight w's high bit at bit w).
constexpr int kFractal64Low = 6, kFractal64High = 22;

void packFractal64(const PackedLayout &layout, const uint8_t *in,
                   uint8_t *block, int r) {
  std::memcpy(block + fractal64DOffset(r), in, 2);
  std::memcpy(block + fractal64ScalesOffset(layout, r), in + 2, 4);
  for (int t = 0; t < 4; ++t)
    std::memset(block + fractal64LowOffset(layout, t, r), 0, 4);
  for (int q = 0; q < 2; ++q)
    std::memset(block + fractal64HighOffset(layout, q, r), 0, 4);
  for (int w = 0; w < 64; ++w) {
    int low = (in[kFractal64Low + w % 16] >> 2 * (w / 16)) & 3;
    int high = (in[kFractal64High + w / 8] >> w % 8) & 1;
    block[fractal64LowOffset(layout, w / 16, r) + w % 4] |=
        static_cast<uint8_t>(low << fractal64LowShift(w));
    block[fractal64HighOffset(layout, w / 32, r) + w % 4] |=
        static_cast<uint8_t>(high << fractal64HighBit(w));
  }
}

void unpackFractal64(const PackedLayout &layout, const uint8_t *block, int r,
                     uint8_t *out) {
  std::memset(out, 0, formatInfo(Format::FRACTAL64).blockBytes);
  std::memcpy(out, block + fractal64DOffset(r), 2);
  std::memcpy(out + 2, block + fractal64ScalesOffset(layout, r), 4);
  for (int w = 0; w < 64; ++w) {
    int low = (block[fractal64LowOffset(layout, w / 16, r) + w % 4] >>
               fractal64LowShift(w)) &
              3;
    int high = (block[fractal64HighOffset(layout, w / 32, r) + w % 4] >>
                fractal64HighBit(w)) &
               1;
    out[kFractal64Low + w % 16] |= static_cast<uint8_t>(low << 2 * (w / 16));
    out[kFractal64High + w / 8] |= static_cast<uint8_t>(high << w % 8);
  }
}

// Low K-group t: byte i, bits 2j..2j + 1 are weight 16t + 4j + i's low bits;
// their high bits are bit 4(t % 2) + j of byte i of high K-group t / 2.
void dequantizeFractal64(const PackedLayout &layout, const uint8_t *block,
                         int r, float *y) {
  const float d = quant::loadFp16(block + fractal64DOffset(r));
  const uint32_t scales =
      quant::loadU32(block + fractal64ScalesOffset(layout, r));
  for (int t = 0; t < 4; ++t) {
    const uint8_t *low = block + fractal64LowOffset(layout, t, r);
    const uint8_t *high = block + fractal64HighOffset(layout, t / 2, r);
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        const int w = 16 * t + 4 * j + i;
        const int index =
            ((low[i] >> 2 * j) & 3) | ((high[i] >> (4 * (t % 2) + j)) & 1) << 2;
        const int s = 4 + static_cast<int>((scales >> 4 * (w / 8)) & 15);
        y[w] = d * static_cast<float>(s * kFractal64Levels[index]);
      }
  }
}

// The file's VQ3_64 stream bit s: bit 6 of slot s's byte (s < 22), bit 7 of
// slot s - 2's (s = 22, 23: slots 20 and 21).
constexpr int vq3_64FileStreamByte(int s) { return 2 + (s < 22 ? s : s - 2); }
constexpr int vq3_64FileStreamShift(int s) { return s < 22 ? 6 : 7; }

// A VQ3_64 row block: the file's bytes into the packed layout, and back. The
// format moves bytes, and the sign and stream bits within them.
void packVQ3_64(const PackedLayout &layout, const uint8_t *in, uint8_t *block,
                int r) {
  std::memcpy(block + vq3_64DOffset(layout, r), in, 2);
  for (int t = 0; t < 22; ++t)
    block[vq3_64SlotOffset(layout, t, r)] = vq3_64SlotIndexBits(t, in[2 + t]);
  for (int s = 0; s < 24; ++s) {
    const int bit =
        (in[vq3_64FileStreamByte(s)] >> vq3_64FileStreamShift(s)) & 1;
    const Vq3StreamBit at = vq3_64StreamBit(s);
    block[vq3_64SlotOffset(layout, at.slot, r)] |=
        static_cast<uint8_t>(bit << at.bit);
  }
}

void unpackVQ3_64(const PackedLayout &layout, const uint8_t *block, int r,
                  uint8_t *out) {
  std::memcpy(out, block + vq3_64DOffset(layout, r), 2);
  for (int t = 0; t < 22; ++t)
    out[2 + t] = vq3_64FileIndexBits(t, block[vq3_64SlotOffset(layout, t, r)]);
  for (int s = 0; s < 24; ++s) {
    const Vq3StreamBit at = vq3_64StreamBit(s);
    const int bit = (block[vq3_64SlotOffset(layout, at.slot, r)] >> at.bit) & 1;
    out[vq3_64FileStreamByte(s)] |=
        static_cast<uint8_t>(bit << vq3_64FileStreamShift(s));
  }
}

} // namespace

void packPrivateRow(const PackedLayout &layout, const uint8_t *in,
                    uint8_t *block, int r) {
  // A padding row: the file block of zeros, d 0, weights 0.
  static constexpr std::array<uint8_t, kMaxFileBlock> kZeroBlock{};
  if (in == nullptr)
    in = kZeroBlock.data();
  if (layout.format == Format::FRACTAL64) {
    packFractal64(layout, in, block, r);
    return;
  }
  packVQ3_64(layout, in, block, r);
}

void unpackPrivateRow(const PackedLayout &layout, const uint8_t *block, int r,
                      uint8_t *out) {
  if (layout.format == Format::FRACTAL64) {
    unpackFractal64(layout, block, r, out);
    return;
  }
  unpackVQ3_64(layout, block, r, out);
}

void dequantizePrivateRow(const PackedLayout &layout, const uint8_t *block,
                          int r, float *y) {
  if (layout.format == Format::FRACTAL64) {
    dequantizeFractal64(layout, block, r, y);
    return;
  }
  const int bytes = formatInfo(layout.format).blockBytes;
  std::array<uint8_t, kMaxFileBlock> file;
  unpackPrivateRow(layout, block, r, file.data());
  // A whole block of the format: the checked API cannot fail on it.
  (void)dequantize(layout.format, std::span(file.data(), bytes),
                   std::span(y, 64));
}

} // namespace kf::pack
