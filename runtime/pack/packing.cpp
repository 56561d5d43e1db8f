// Packed weight and activation layouts (docs/codegen.md): Q8_0, Q4_0, MXFP4
// and Kernelforge's own FRACTAL64 and VQ3_64 (pack/private_packing.cpp)
// weights with Q8_0 activations; Q4_K, Q5_K, Q6_K and the IQ grid formats
// IQ2_XXS, IQ1_S, IQ1_M (pack/grid_packing.cpp; IQ1's ternary layouts,
// pack/ternary_packing.cpp) with Q8_K activations; BF16
// and F32 weights with activations of their own format. Every entry point
// validates its sizes first, so the loops below never see a partial block or
// a short buffer.
#include "kf/runtime/packing.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/half.h"
#include "kf/runtime/quant.h"
#include "pack/grid_packing.h"
#include "pack/private_packing.h"
#include "quant/codec.h"

namespace kf {
namespace {

using quant::loadFp16;
using quant::storeF32;
using quant::storeU32;

constexpr int64_t kBlockElems = 32;

// Bytes of one row's block in the file format (and in the packed payload,
// scale aside).
int64_t fileBlockBytes(Format f) { return formatInfo(f).blockBytes; }

// Elements of one (super-)block: 32, or 256 for the K-quants.
int64_t blockElems(Format f) { return packedBlockElems(f); }

bool isKquant(Format f) {
  return f == Format::Q4_K || f == Format::Q5_K || f == Format::Q6_K;
}

// Weight bytes of one row's block: 32 for Q8_0, 16 nibble pairs for Q4_0 and
// MXFP4.
int64_t payloadBytes(Format f) {
  return fileBlockBytes(f) - packedScaleBytes(f);
}

std::string shape(const PackedLayout &layout, int64_t n, int64_t k) {
  return absl::StrCat(layoutName(layout), " [", n, ", ", k, "]");
}

// A ternary layout's block whose codes no packing wrote.
absl::Status badCodes(const char *what, const PackedLayout &layout, int64_t n,
                      int64_t k, int64_t row, int64_t block) {
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": ", shape(layout, n, k), ": row ", row, ", super-block ", block,
      ": a slot's 2-bit codes are no entry of iq1s_grid"));
}

absl::Status checkShape(const char *what, const PackedLayout &layout, int64_t n,
                        int64_t k) {
  if (absl::Status s = checkLayout(layout); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", s.message()));
  if (isFloatFormat(layout.format)) {
    if (n <= 0 || k <= 0)
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": ", shape(layout, n, k), ": expected n > 0 and k > 0"));
    return absl::OkStatus();
  }
  const int64_t elems = blockElems(layout.format);
  if (n <= 0 || k <= 0 || k % elems != 0)
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", shape(layout, n, k),
                     ": expected n > 0 and k a positive multiple of ", elems));
  return absl::OkStatus();
}

absl::Status checkBytes(const char *what, const char *buffer, uint64_t want,
                        uint64_t got) {
  if (want == got)
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": ", buffer, " holds ", got, " bytes, expected ", want));
}

// Both the file rows and the packed tensor of [n, k]: checks everything
// pack/unpack/dequantize need before they touch a byte.
absl::Status checkTensor(const char *what, const PackedLayout &layout,
                         int64_t n, int64_t k, uint64_t packedBytes) {
  if (absl::Status s = checkShape(what, layout, n, k); !s.ok())
    return s;
  return checkBytes(what, "the packed tensor", *packedWeightBytes(layout, n, k),
                    packedBytes);
}

uint64_t fileBytes(Format f, int64_t n, int64_t k) {
  return static_cast<uint64_t>(n) * (k / formatInfo(f).blockElems) *
         fileBlockBytes(f);
}

// Calls fn(row, element, packedByte) for the first byte of every element
// slot of a packed float tensor: row -1 for a padding row, element >= k for
// the padding of a row's last block.
template <typename Fn>
void forEachFloatSlot(const PackedLayout &layout, int64_t n, int64_t k, Fn fn) {
  const int64_t blocks = packedKBlocks(layout.format, k);
  const int64_t groups = (n + layout.rows - 1) / layout.rows;
  const int64_t blockBytes = packedBlockBytes(layout);
  const int64_t elems = packedBlockElems(layout.format);
  const int64_t perGroup = packedKgroupElems(layout.format);
  const int64_t elemBytes = 4 / perGroup;
  for (int64_t grp = 0; grp < groups; ++grp)
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t g = 0; g < elems / perGroup; ++g)
        for (int r = 0; r < layout.rows; ++r)
          for (int64_t i = 0; i < perGroup; ++i) {
            const int64_t row = grp * layout.rows + r;
            fn(row < n ? row : -1, b * elems + g * perGroup + i,
               (grp * blocks + b) * blockBytes +
                   packedKgroupOffset(layout, g, r) + i * elemBytes);
          }
}

// The packed lane byte for file byte `b` of a row's payload.
uint8_t toLane(const PackedLayout &layout, uint8_t b) {
  if (layout.format == Format::Q8_0)
    return static_cast<uint8_t>(b + laneOffset(layout));
  return b; // Q4_0 and MXFP4 nibbles are stored as in the file
}

uint8_t fromLane(const PackedLayout &layout, uint8_t lane) {
  if (layout.format == Format::Q8_0)
    return static_cast<uint8_t>(lane - laneOffset(layout));
  return lane;
}

// The lane byte of a padding row: weights 0 (Q4_0's nibbles 8, MXFP4's code 0;
// a K-quant's padding rows have all scales 0, so their codes do not matter).
uint8_t zeroLane(const PackedLayout &layout) {
  switch (layout.format) {
  case Format::Q4_0:
    return 0x88;
  case Format::Q8_0:
    return toLane(layout, 0);
  default:
    return 0x00;
  }
}

// The file's byte offset of header byte j and of payload (weight) byte p.
int64_t fileHeaderByte(Format f, int64_t j) { return fileScaleOffset(f) + j; }
int64_t filePayloadByte(Format f, int64_t p) {
  return fileScaleOffset(f) == 0 ? packedScaleBytes(f) + p : p;
}

// Calls fn(file_row_block, packed_block, r) for every real row of every
// packed block, with the packed block's base and the row's lane in it.
template <typename Fn>
void forEachRowBlock(const PackedLayout &layout, int64_t n, int64_t k, Fn fn) {
  const int64_t blocks = k / blockElems(layout.format);
  const int64_t groups = (n + layout.rows - 1) / layout.rows;
  const int64_t blockBytes = packedBlockBytes(layout);
  for (int64_t grp = 0; grp < groups; ++grp)
    for (int64_t b = 0; b < blocks; ++b)
      for (int r = 0; r < layout.rows; ++r) {
        int64_t row = grp * layout.rows + r;
        fn(row < n ? row : -1, b, (grp * blocks + b) * blockBytes, r);
      }
}

// A K-quant super-block of row r straight from the packed block, in the
// reference decoder's arithmetic (kquants.cpp's dequantizeK): per sub-block
// dl = d * scale and ml = dmin * min, then dl * q - ml.
void dequantizeKquant(const PackedLayout &layout, const uint8_t *block, int r,
                      float *y) {
  auto header = [&](int64_t j) -> uint8_t {
    return block[packedScaleOffset(layout, j, r)];
  };
  auto payload = [&](int64_t p) -> int {
    return block[packedKgroupOffset(layout, p / 4, r) + p % 4];
  };
  auto half = [&](int64_t j) {
    return fp16ToFp32(static_cast<uint16_t>(header(j) | header(j + 1) << 8));
  };
  if (layout.format == Format::Q6_K) {
    const float d = half(16);
    for (int i = 0; i < 256; ++i) {
      int h = i / 128, j = i % 128 / 32, l = i % 32;
      int low = (payload(64 * h + 32 * (j % 2) + l) >> (4 * (j / 2))) & 15;
      int high = (payload(128 + 32 * h + l) >> (2 * j)) & 3;
      float dl = d * static_cast<int8_t>(header(i / 16));
      y[i] = dl * ((low | high << 4) - 32) - 0.f;
    }
    return;
  }
  const float d = half(0), dmin = half(2);
  const int64_t qs = layout.format == Format::Q5_K ? 32 : 0;
  for (int k = 0; k < 8; ++k) {
    int sc, m;
    if (k < 4) {
      sc = header(4 + k) & 63;
      m = header(8 + k) & 63;
    } else {
      sc = (header(12 + k - 4) & 15) | (header(4 + k - 4) >> 6) << 4;
      m = (header(12 + k - 4) >> 4) | (header(8 + k - 4) >> 6) << 4;
    }
    float dl = d * sc, ml = dmin * m;
    for (int i = 32 * k; i < 32 * k + 32; ++i) {
      int q = (payload(qs + 32 * (i / 64) + i % 32) >> (4 * (i / 32 % 2))) & 15;
      if (layout.format == Format::Q5_K)
        q |= ((payload(i % 32) >> (i / 32)) & 1) << 4;
      y[i] = dl * q - ml;
    }
  }
}

} // namespace

absl::Status checkLayout(const PackedLayout &layout) {
  if (!hasWeightCoding(layout.format, layout.coding))
    return absl::InvalidArgumentError(absl::StrCat(
        layout.coding == WeightCoding::Ternary ? "no ternary layout"
                                               : "no code book layout",
        " for format ", toAbsl(formatInfo(layout.format).name),
        layout.coding == WeightCoding::Ternary ? ": expected iq1_s or iq1_m"
                                               : ": expected iq2_xxs"));
  if (layout.format != Format::Q8_0 && layout.format != Format::Q4_0 &&
      layout.format != Format::MXFP4 && !isKquant(layout.format) &&
      !isIqGridFormat(layout.format) && !isPrivateFormat(layout.format) &&
      !isFloatFormat(layout.format))
    return absl::InvalidArgumentError(absl::StrCat(
        "no packed layout for format ", toAbsl(formatInfo(layout.format).name),
        ": expected q8_0, q4_0, mxfp4, q4_k, q5_k, q6_k, iq2_xxs, iq1_s, "
        "iq1_m, fractal64, vq3_64, bf16 or f32"));
  if (layout.rows != 1 && layout.rows != 4 && layout.rows != 8 &&
      layout.rows != 16)
    return absl::InvalidArgumentError(
        absl::StrCat("packed layout with ", layout.rows,
                     " rows per group: expected 1, 4, 8 or 16"));
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> packedWeightBytes(const PackedLayout &layout,
                                           int64_t n, int64_t k) {
  if (absl::Status s = checkShape("packed_weight_bytes", layout, n, k); !s.ok())
    return s;
  uint64_t groups = static_cast<uint64_t>((n + layout.rows - 1) / layout.rows);
  return groups * static_cast<uint64_t>(packedGroupBytes(layout, k));
}

absl::Status packWeights(const PackedLayout &layout,
                         std::span<const uint8_t> src, int64_t n, int64_t k,
                         std::span<uint8_t> dst) {
  if (absl::Status s = checkTensor("pack_weights", layout, n, k, dst.size());
      !s.ok())
    return s;
  if (absl::Status s = checkBytes("pack_weights", "the source rows",
                                  fileBytes(layout.format, n, k), src.size());
      !s.ok())
    return s;
  const Format f = layout.format;
  if (isFloatFormat(f)) {
    const int64_t elemBytes = fileBlockBytes(f);
    forEachFloatSlot(layout, n, k, [&](int64_t row, int64_t e, int64_t at) {
      if (row < 0 || e >= k)
        std::memset(dst.data() + at, 0, elemBytes);
      else
        std::memcpy(dst.data() + at, src.data() + (row * k + e) * elemBytes,
                    elemBytes);
    });
    return absl::OkStatus();
  }
  const int64_t rowBytes = (k / blockElems(f)) * fileBlockBytes(f);
  const int64_t scaleBytes = packedScaleBytes(f);
  const int64_t groupsPerBlock = payloadBytes(f) / 4;
  forEachRowBlock(
      layout, n, k, [&](int64_t row, int64_t b, int64_t base, int r) {
        uint8_t *block = dst.data() + base;
        // The IQ grid and private formats pack one row's block at a time.
        if (auto packRow = isIqGridFormat(f)    ? pack::packGridRow
                           : isPrivateFormat(f) ? pack::packPrivateRow
                                                : nullptr) {
          packRow(layout,
                  row < 0 ? nullptr
                          : src.data() + row * rowBytes + b * fileBlockBytes(f),
                  block, r);
          return;
        }
        if (row < 0) { // padding: scales 0 and weights 0
          for (int64_t j = 0; j < scaleBytes; ++j)
            block[packedScaleOffset(layout, j, r)] = 0;
          for (int64_t g = 0; g < groupsPerBlock; ++g)
            std::memset(block + packedKgroupOffset(layout, g, r),
                        zeroLane(layout), 4);
          return;
        }
        const uint8_t *in = src.data() + row * rowBytes + b * fileBlockBytes(f);
        for (int64_t j = 0; j < scaleBytes; ++j)
          block[packedScaleOffset(layout, j, r)] = in[fileHeaderByte(f, j)];
        for (int64_t g = 0; g < groupsPerBlock; ++g)
          for (int i = 0; i < 4; ++i)
            block[packedKgroupOffset(layout, g, r) + i] =
                toLane(layout, in[filePayloadByte(f, g * 4 + i)]);
      });
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint8_t>> packWeights(const PackedLayout &layout,
                                                 std::span<const uint8_t> src,
                                                 int64_t n, int64_t k) {
  absl::StatusOr<uint64_t> bytes = packedWeightBytes(layout, n, k);
  if (!bytes.ok())
    return bytes.status();
  std::vector<uint8_t> out(*bytes);
  if (absl::Status s = packWeights(layout, src, n, k, out); !s.ok())
    return s;
  return out;
}

absl::StatusOr<std::vector<uint8_t>>
packExpertWeights(const PackedLayout &layout, std::span<const uint8_t> src,
                  int64_t experts, int64_t n, int64_t k) {
  absl::StatusOr<uint64_t> bytes = packedWeightBytes(layout, n, k);
  if (!bytes.ok())
    return bytes.status();
  if (experts <= 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "pack_expert_weights: ", experts, " experts, expected > 0"));
  const uint64_t expertFileBytes = fileBytes(layout.format, n, k);
  if (absl::Status s = checkBytes(
          "pack_expert_weights", "the source stack",
          static_cast<uint64_t>(experts) * expertFileBytes, src.size());
      !s.ok())
    return s;
  std::vector<uint8_t> out(static_cast<size_t>(experts) * *bytes);
  for (int64_t e = 0; e < experts; ++e)
    if (absl::Status s = packWeights(
            layout, src.subspan(e * expertFileBytes, expertFileBytes), n, k,
            std::span<uint8_t>(out).subspan(e * *bytes, *bytes));
        !s.ok())
      return s;
  return out;
}

absl::Status unpackWeights(const PackedLayout &layout,
                           std::span<const uint8_t> packed, int64_t n,
                           int64_t k, std::span<uint8_t> dst) {
  if (absl::Status s =
          checkTensor("unpack_weights", layout, n, k, packed.size());
      !s.ok())
    return s;
  if (absl::Status s = checkBytes("unpack_weights", "the destination rows",
                                  fileBytes(layout.format, n, k), dst.size());
      !s.ok())
    return s;
  const Format f = layout.format;
  if (isFloatFormat(f)) {
    const int64_t elemBytes = fileBlockBytes(f);
    forEachFloatSlot(layout, n, k, [&](int64_t row, int64_t e, int64_t at) {
      if (row >= 0 && e < k)
        std::memcpy(dst.data() + (row * k + e) * elemBytes, packed.data() + at,
                    elemBytes);
    });
    return absl::OkStatus();
  }
  const int64_t rowBytes = (k / blockElems(f)) * fileBlockBytes(f);
  const int64_t scaleBytes = packedScaleBytes(f);
  const int64_t groupsPerBlock = payloadBytes(f) / 4;
  absl::Status bad;
  forEachRowBlock(
      layout, n, k, [&](int64_t row, int64_t b, int64_t base, int r) {
        if (row < 0)
          return;
        const uint8_t *block = packed.data() + base;
        uint8_t *out = dst.data() + row * rowBytes + b * fileBlockBytes(f);
        if (isIqGridFormat(f)) {
          if (!pack::unpackGridRow(layout, block, r, out) && bad.ok())
            bad = badCodes("unpack_weights", layout, n, k, row, b);
          return;
        }
        if (isPrivateFormat(f)) {
          pack::unpackPrivateRow(layout, block, r, out);
          return;
        }
        for (int64_t j = 0; j < scaleBytes; ++j)
          out[fileHeaderByte(f, j)] = block[packedScaleOffset(layout, j, r)];
        for (int64_t g = 0; g < groupsPerBlock; ++g)
          for (int i = 0; i < 4; ++i)
            out[filePayloadByte(f, g * 4 + i)] =
                fromLane(layout, block[packedKgroupOffset(layout, g, r) + i]);
      });
  return bad;
}

absl::Status dequantizePacked(const PackedLayout &layout,
                              std::span<const uint8_t> packed, int64_t n,
                              int64_t k, std::span<float> dst) {
  if (absl::Status s =
          checkTensor("dequantize_packed", layout, n, k, packed.size());
      !s.ok())
    return s;
  if (dst.size() != static_cast<uint64_t>(n) * static_cast<uint64_t>(k))
    return absl::InvalidArgumentError(
        absl::StrCat("dequantize_packed: the destination holds ", dst.size(),
                     " floats, expected ", n * k));
  if (isFloatFormat(layout.format)) {
    // The reference decoders' conversions: bf16 widened, f32 as stored.
    const bool bf16 = layout.format == Format::BF16;
    forEachFloatSlot(layout, n, k, [&](int64_t row, int64_t e, int64_t at) {
      if (row >= 0 && e < k)
        dst[row * k + e] = bf16 ? bf16ToFp32(quant::loadU16(packed.data() + at))
                                : quant::loadF32(packed.data() + at);
    });
    return absl::OkStatus();
  }
  const int offset = laneOffset(layout);
  const int64_t elems = blockElems(layout.format);
  absl::Status bad;
  forEachRowBlock(
      layout, n, k, [&](int64_t row, int64_t b, int64_t base, int r) {
        if (row < 0)
          return;
        const uint8_t *block = packed.data() + base;
        float *y = dst.data() + row * k + b * elems;
        if (isKquant(layout.format)) {
          dequantizeKquant(layout, block, r, y);
          return;
        }
        if (isIqGridFormat(layout.format)) {
          if (!pack::dequantizeGridRow(layout, block, r, y) && bad.ok())
            bad = badCodes("dequantize_packed", layout, n, k, row, b);
          return;
        }
        if (isPrivateFormat(layout.format)) {
          pack::dequantizePrivateRow(layout, block, r, y);
          return;
        }
        auto lane = [&](int64_t g, int i) -> int {
          return block[packedKgroupOffset(layout, g, r) + i];
        };
        if (layout.format == Format::MXFP4) {
          // The reference decoder's value * d, with d = 2^(e - 128) built
          // from its bits as the kernels build it.
          float d = mxfp4Scale(block[r]);
          for (int64_t g = 0; g < 4; ++g)
            for (int i = 0; i < 4; ++i) {
              y[g * 4 + i] = kMxfp4Values[lane(g, i) & 15] * d;
              y[16 + g * 4 + i] = kMxfp4Values[lane(g, i) >> 4] * d;
            }
          return;
        }
        float d = loadFp16(block + r * packedScaleBytes(layout.format));
        if (layout.format == Format::Q8_0) {
          for (int64_t g = 0; g < 8; ++g)
            for (int i = 0; i < 4; ++i)
              // The reference decoder's d * int8: the same float product.
              y[g * 4 + i] = d * static_cast<int8_t>(lane(g, i) - offset);
          return;
        }
        for (int64_t g = 0; g < 4; ++g)
          for (int i = 0; i < 4; ++i) {
            y[g * 4 + i] = d * ((lane(g, i) & 15) - offset);
            y[16 + g * 4 + i] = d * ((lane(g, i) >> 4) - offset);
          }
      });
  return bad;
}

absl::StatusOr<uint64_t> packedActivationBytes(int64_t k) {
  return packedActivationBytes(Format::Q8_0, k);
}

absl::StatusOr<uint64_t> packedActivationBytes(Format activation, int64_t k) {
  if (activation != Format::Q8_0 && activation != Format::Q8_K &&
      !isFloatFormat(activation))
    return absl::InvalidArgumentError(absl::StrCat(
        "packed_activation_bytes: no packed activations of format ",
        toAbsl(formatInfo(activation).name),
        ", expected q8_0, q8_k, bf16 or f32"));
  const ActivationLayout act = activationLayout(activation);
  if (isFloatFormat(activation)) {
    if (k <= 0)
      return absl::InvalidArgumentError(
          absl::StrCat("packed_activation_bytes: k = ", k, ", expected k > 0"));
    return static_cast<uint64_t>(packedActivationColumnBytes(activation, k));
  }
  if (k <= 0 || k % act.blockElems != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("packed_activation_bytes: k = ", k,
                     ", expected a positive multiple of ", act.blockElems));
  return static_cast<uint64_t>(k / act.blockElems) * act.blockBytes;
}

absl::Status packActivations(std::span<const float> x, int64_t m, int64_t k,
                             int64_t ldx, std::span<uint8_t> dst) {
  return packActivations(Format::Q8_0, x, m, k, ldx, dst);
}

namespace {

// One Q8_0-family block of 32: quantize_activation(Q8_0)'s arithmetic, the
// scale as fp16, the quants from the unrounded 127 / amax, rounded half to
// even.
void packQ8_0Block(const float *in, uint8_t *out) {
  float amax = quant::absmax(in, kBlockElems);
  float id = amax != 0 ? 127.f / amax : 0.f;
  storeF32(out + kActivationScaleOffset, fp16ToFp32(fp32ToFp16(amax / 127.f)));
  int32_t sum = 0;
  int16_t sums8[kBlockElems / 8] = {};
  for (int64_t i = 0; i < kBlockElems; ++i) {
    int q = static_cast<int>(std::nearbyintf(in[i] * id));
    out[kActivationQuantsOffset + i] =
        static_cast<uint8_t>(static_cast<int8_t>(q));
    sum += q;
    sums8[i / 8] = static_cast<int16_t>(sums8[i / 8] + q);
  }
  storeU32(out + kActivationSumOffset, static_cast<uint32_t>(sum));
  std::memcpy(out + kActivationSums8Offset, sums8, sizeof sums8);
}

// One Q8_K block of 256: quantize_activation(Q8_K)'s arithmetic (q8_k.cpp):
// the signed extreme (the first of largest magnitude) maps to -127, iscale =
// -127 / max, q = min(127, nearestInt(iscale * x)), d = 1 / iscale; an
// all-zero block is all zero bytes.
void packQ8_KBlock(const float *in, uint8_t *out) {
  std::memset(out, 0, kQ8KActivationBlockBytes);
  float max = quant::signedAbsmax(in, 256);
  if (max == 0)
    return;
  float iscale = -127.f / max;
  for (int k = 0; k < 16; ++k) {
    int sum = 0;
    for (int i = 16 * k; i < 16 * k + 16; ++i) {
      int q = std::min(127, quant::nearestInt(iscale * in[i]));
      out[kQ8KActivationQuantsOffset + i] =
          static_cast<uint8_t>(static_cast<int8_t>(q));
      sum += q;
    }
    quant::storeU16(out + kQ8KActivationSumsOffset + 2 * k,
                    static_cast<uint16_t>(static_cast<int16_t>(sum)));
  }
  storeF32(out + kQ8KActivationScaleOffset, 1.f / iscale);
}

} // namespace

absl::Status packActivations(Format activation, std::span<const float> x,
                             int64_t m, int64_t k, int64_t ldx,
                             std::span<uint8_t> dst) {
  absl::StatusOr<uint64_t> column = packedActivationBytes(activation, k);
  if (!column.ok())
    return column.status();
  if (m < 0 || ldx < k)
    return absl::InvalidArgumentError(
        absl::StrCat("pack_activations: m = ", m, ", ldx = ", ldx,
                     ": expected m >= 0 and ldx >= k = ", k));
  uint64_t need = m == 0 ? 0 : static_cast<uint64_t>((m - 1) * ldx + k);
  if (x.size() < need)
    return absl::InvalidArgumentError(
        absl::StrCat("pack_activations: the input holds ", x.size(),
                     " floats, expected at least ", need));
  if (absl::Status s =
          checkBytes("pack_activations", "the destination",
                     static_cast<uint64_t>(m) * *column, dst.size());
      !s.ok())
    return s;
  const ActivationLayout act = activationLayout(activation);
  if (isFloatFormat(activation)) {
    // quantize_activation's elements (bf16 rounded to nearest even, f32 as
    // they are), then zeros up to the column's last whole block.
    std::memset(dst.data(), 0, dst.size());
    const int64_t elemBytes = formatInfo(activation).blockBytes;
    for (int64_t j = 0; j < m; ++j)
      if (absl::Status s =
              quantizeActivation(activation, x.subspan(j * ldx, k),
                                 dst.subspan(j * *column, k * elemBytes));
          !s.ok())
        return s;
    return absl::OkStatus();
  }
  for (int64_t j = 0; j < m; ++j)
    for (int64_t b = 0; b < k / act.blockElems; ++b) {
      const float *in = x.data() + j * ldx + b * act.blockElems;
      uint8_t *out = dst.data() + j * *column + b * act.blockBytes;
      if (activation == Format::Q8_K)
        packQ8_KBlock(in, out);
      else
        packQ8_0Block(in, out);
    }
  return absl::OkStatus();
}

} // namespace kf
