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

void pack_fractal64(const PackedLayout &layout, const uint8_t *in,
                    uint8_t *block, int r) {
  std::memcpy(block + fractal64_d_offset(r), in, 2);
  std::memcpy(block + fractal64_scales_offset(layout, r), in + 2, 4);
  for (int t = 0; t < 4; ++t)
    std::memset(block + fractal64_low_offset(layout, t, r), 0, 4);
  for (int q = 0; q < 2; ++q)
    std::memset(block + fractal64_high_offset(layout, q, r), 0, 4);
  for (int w = 0; w < 64; ++w) {
    int low = (in[kFractal64Low + w % 16] >> 2 * (w / 16)) & 3;
    int high = (in[kFractal64High + w / 8] >> w % 8) & 1;
    block[fractal64_low_offset(layout, w / 16, r) + w % 4] |=
        static_cast<uint8_t>(low << fractal64_low_shift(w));
    block[fractal64_high_offset(layout, w / 32, r) + w % 4] |=
        static_cast<uint8_t>(high << fractal64_high_bit(w));
  }
}

void unpack_fractal64(const PackedLayout &layout, const uint8_t *block, int r,
                      uint8_t *out) {
  std::memset(out, 0, format_info(Format::FRACTAL64).block_bytes);
  std::memcpy(out, block + fractal64_d_offset(r), 2);
  std::memcpy(out + 2, block + fractal64_scales_offset(layout, r), 4);
  for (int w = 0; w < 64; ++w) {
    int low = (block[fractal64_low_offset(layout, w / 16, r) + w % 4] >>
               fractal64_low_shift(w)) &
              3;
    int high = (block[fractal64_high_offset(layout, w / 32, r) + w % 4] >>
                fractal64_high_bit(w)) &
               1;
    out[kFractal64Low + w % 16] |= static_cast<uint8_t>(low << 2 * (w / 16));
    out[kFractal64High + w / 8] |= static_cast<uint8_t>(high << w % 8);
  }
}

// Low K-group t: byte i, bits 2j..2j + 1 are weight 16t + 4j + i's low bits;
// their high bits are bit 4(t % 2) + j of byte i of high K-group t / 2.
void dequantize_fractal64(const PackedLayout &layout, const uint8_t *block,
                          int r, float *y) {
  const float d = quant::load_fp16(block + fractal64_d_offset(r));
  const uint32_t scales =
      quant::load_u32(block + fractal64_scales_offset(layout, r));
  for (int t = 0; t < 4; ++t) {
    const uint8_t *low = block + fractal64_low_offset(layout, t, r);
    const uint8_t *high = block + fractal64_high_offset(layout, t / 2, r);
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
constexpr int vq3_64_file_stream_byte(int s) {
  return 2 + (s < 22 ? s : s - 2);
}
constexpr int vq3_64_file_stream_shift(int s) { return s < 22 ? 6 : 7; }

// A VQ3_64 row block: the file's bytes into the packed layout, and back. The
// format moves bytes, and the sign and stream bits within them.
void pack_vq3_64(const PackedLayout &layout, const uint8_t *in, uint8_t *block,
                 int r) {
  std::memcpy(block + vq3_64_d_offset(layout, r), in, 2);
  for (int t = 0; t < 22; ++t)
    block[vq3_64_slot_offset(layout, t, r)] =
        vq3_64_slot_index_bits(t, in[2 + t]);
  for (int s = 0; s < 24; ++s) {
    const int bit =
        (in[vq3_64_file_stream_byte(s)] >> vq3_64_file_stream_shift(s)) & 1;
    const Vq3StreamBit at = vq3_64_stream_bit(s);
    block[vq3_64_slot_offset(layout, at.slot, r)] |=
        static_cast<uint8_t>(bit << at.bit);
  }
}

void unpack_vq3_64(const PackedLayout &layout, const uint8_t *block, int r,
                   uint8_t *out) {
  std::memcpy(out, block + vq3_64_d_offset(layout, r), 2);
  for (int t = 0; t < 22; ++t)
    out[2 + t] =
        vq3_64_file_index_bits(t, block[vq3_64_slot_offset(layout, t, r)]);
  for (int s = 0; s < 24; ++s) {
    const Vq3StreamBit at = vq3_64_stream_bit(s);
    const int bit =
        (block[vq3_64_slot_offset(layout, at.slot, r)] >> at.bit) & 1;
    out[vq3_64_file_stream_byte(s)] |=
        static_cast<uint8_t>(bit << vq3_64_file_stream_shift(s));
  }
}

} // namespace

void pack_private_row(const PackedLayout &layout, const uint8_t *in,
                      uint8_t *block, int r) {
  // A padding row: the file block of zeros, d 0, weights 0.
  static constexpr std::array<uint8_t, kMaxFileBlock> kZeroBlock{};
  if (in == nullptr)
    in = kZeroBlock.data();
  if (layout.format == Format::FRACTAL64) {
    pack_fractal64(layout, in, block, r);
    return;
  }
  pack_vq3_64(layout, in, block, r);
}

void unpack_private_row(const PackedLayout &layout, const uint8_t *block, int r,
                        uint8_t *out) {
  if (layout.format == Format::FRACTAL64) {
    unpack_fractal64(layout, block, r, out);
    return;
  }
  unpack_vq3_64(layout, block, r, out);
}

void dequantize_private_row(const PackedLayout &layout, const uint8_t *block,
                            int r, float *y) {
  if (layout.format == Format::FRACTAL64) {
    dequantize_fractal64(layout, block, r, y);
    return;
  }
  const int bytes = format_info(layout.format).block_bytes;
  std::array<uint8_t, kMaxFileBlock> file;
  unpack_private_row(layout, block, r, file.data());
  // A whole block of the format: the checked API cannot fail on it.
  (void)dequantize(layout.format, std::span(file.data(), bytes),
                   std::span(y, 64));
}

} // namespace kf::pack
