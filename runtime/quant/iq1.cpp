// ggml's IQ1_S and IQ1_M: grid vector quantizers of {-1, 0, 1}
// plus a shift (docs/formats/README.md: their block layouts,
// "Lookup grids" and "Activation pairing"). The grids are ggml's tables,
// compiled in from quant/grids/ by cmake/KfGrids.cmake. Decoders and dot
// products follow ggml's scalar code expression for expression, so they round
// exactly as ggml does; the quantizers are our own reference quantizers (no
// importance matrix), least squares through quant/iq_grid_search.h;
// docs/formats/quality.md has their quality and speed.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "quant/codec.h"
#include "quant/grids.h"
#include "quant/iq_grid_search.h"

namespace kf::quant {
namespace {

using namespace iq;
using grids::iq1s_grid;

// --- IQ1_S: fp16 d, qs[32] (low 8 bits of the grid indices), then per
// 32-weight group a u16: four 3-bit high index parts (bits 3l..3l+2), a 3-bit
// scale (12..14) and the sign of the delta (15).

constexpr int kIq1sBytes = 50;
constexpr int kIq1sQhOffset = 34;

void dequantizeIQ1_S(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq1sBytes) {
    float d = loadFp16(src);
    for (int g = 0; g < 8; ++g) {
      uint16_t qh = loadU16(src + kIq1sQhOffset + 2 * g);
      float dl = d * (2 * (qh >> 12 & 7) + 1);
      float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
      for (int l = 0; l < 4; ++l, dst += 8) {
        uint64_t grid = iq1s_grid[src[2 + 4 * g + l] | (qh >> 3 * l & 7) << 8];
        for (int j = 0; j < 8; ++j)
          dst[j] = dl * (gridValue(grid, j) + delta);
      }
    }
  }
}

// The delta term of a group is delta * (sum of its 32 q8), which Q8_K's bsums
// hold; it is carried as an integer in units of the delta (1/8).
float dotIQ1_S(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq1sBytes, a += kQ8_KBytes) {
    const int8_t *q8 = q8kQs(a);
    int sumi = 0, sumiDelta = 0;
    for (int g = 0; g < 8; ++g) {
      uint16_t qh = loadU16(w + kIq1sQhOffset + 2 * g);
      int ls = 2 * (qh >> 12 & 7) + 1;
      int delta = qh & 0x8000 ? -1 : 1;
      int lsum = 0;
      for (int l = 0; l < 4; ++l, q8 += 8) {
        uint64_t grid = iq1s_grid[w[2 + 4 * g + l] | (qh >> 3 * l & 7) << 8];
        for (int j = 0; j < 8; ++j)
          lsum += q8[j] * gridValue(grid, j);
      }
      sumi += ls * lsum;
      sumiDelta += ls * delta * (q8kBsum(a, 2 * g) + q8kBsum(a, 2 * g + 1));
    }
    sumf += loadFp16(w) * loadF32(a) * (sumi + kIq1Delta * sumiDelta);
  }
  return sumf;
}

// --- IQ1_M: qs[32] (low 8 bits of the grid indices), qh[16] (per 8 weights a
// nibble: 3 high index bits and the delta sign in bit 3), scales[8] read as
// four u16: per 32-weight group two 3-bit scales (bits 6(g%2)..+5 of the u16
// g/2), and the fp16 super-scale in the top nibbles of the four u16.

constexpr int kIq1mBytes = 56;
constexpr int kIq1mQhOffset = 32;
constexpr int kIq1mScalesOffset = 48;

// The super-scale's fp16 bits: nibble k comes from the top of the u16 k.
uint16_t iq1mScaleBits(const uint8_t *block) {
  uint16_t sc[4];
  for (int k = 0; k < 4; ++k)
    sc[k] = loadU16(block + kIq1mScalesOffset + 2 * k);
  return static_cast<uint16_t>((sc[0] >> 12) | (sc[1] >> 8 & 0x00f0) |
                               (sc[2] >> 4 & 0x0f00) | (sc[3] & 0xf000));
}

// The 3-bit scale of the 16 weights h (0: first, 1: second) of group g.
int iq1mSubscale(const uint8_t *block, int g, int h) {
  uint16_t sc = loadU16(block + kIq1mScalesOffset + 2 * (g / 2));
  return sc >> (6 * (g % 2) + 3 * h) & 7;
}

// The 11-bit grid index and the delta sign bit of 8 weights l of group g.
int iq1mIndex(const uint8_t *block, int g, int l) {
  uint8_t qh = block[kIq1mQhOffset + 2 * g + l / 2];
  return block[4 * g + l] | (qh >> 4 * (l % 2) & 7) << 8;
}
bool iq1mNegativeDelta(const uint8_t *block, int g, int l) {
  uint8_t qh = block[kIq1mQhOffset + 2 * g + l / 2];
  return qh >> (4 * (l % 2) + 3) & 1;
}

void dequantizeIQ1_M(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq1mBytes) {
    float d = fp16ToFp32(iq1mScaleBits(src));
    for (int g = 0; g < 8; ++g) {
      float dl[2] = {d * (2 * iq1mSubscale(src, g, 0) + 1),
                     d * (2 * iq1mSubscale(src, g, 1) + 1)};
      for (int l = 0; l < 4; ++l, dst += 8) {
        uint64_t grid = iq1s_grid[iq1mIndex(src, g, l)];
        float delta = iq1mNegativeDelta(src, g, l) ? -kIq1Delta : kIq1Delta;
        for (int j = 0; j < 8; ++j)
          dst[j] = dl[l / 2] * (gridValue(grid, j) + delta);
      }
    }
  }
}

// The delta has a sign per 8 weights, finer than Q8_K's bsums (16 weights), so
// the q8 are summed here.
float dotIQ1_M(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq1mBytes, a += kQ8_KBytes) {
    const int8_t *q8 = q8kQs(a);
    int sumi = 0, sumiDelta = 0;
    for (int g = 0; g < 8; ++g) {
      int sum[2] = {0, 0}, sumDelta[2] = {0, 0};
      for (int l = 0; l < 4; ++l, q8 += 8) {
        uint64_t grid = iq1s_grid[iq1mIndex(w, g, l)];
        int lsum = 0, q8sum = 0;
        for (int j = 0; j < 8; ++j) {
          lsum += q8[j] * gridValue(grid, j);
          q8sum += q8[j];
        }
        sum[l / 2] += lsum;
        sumDelta[l / 2] += iq1mNegativeDelta(w, g, l) ? -q8sum : q8sum;
      }
      int ls1 = 2 * iq1mSubscale(w, g, 0) + 1;
      int ls2 = 2 * iq1mSubscale(w, g, 1) + 1;
      sumi += sum[0] * ls1 + sum[1] * ls2;
      sumiDelta += sumDelta[0] * ls1 + sumDelta[1] * ls2;
    }
    sumf += fp16ToFp32(iq1mScaleBits(w)) * loadF32(a) *
            (sumi + kIq1Delta * sumiDelta);
  }
  return sumf;
}

// --- IQ1: values {-1, 0, 1} plus the shift delta.

struct Iq1Grid {
  GridClasses classes;
  // The masks of the +1 and of the -1 weights of classes.order[i].
  std::vector<uint8_t> plus, minus;
  // a = n + 2 delta S of each class for delta = +1/8 and -1/8, and the
  // classes by it, largest first.
  std::array<std::array<float, kMaxClasses>, 2> slope;
  std::array<std::vector<int>, 2> bySlope;
};

const Iq1Grid &iq1sSearchGrid() {
  static const Iq1Grid grid = [] {
    std::vector<std::array<int, 8>> values;
    for (uint64_t entry : iq1s_grid) {
      std::array<int, 8> v;
      for (int j = 0; j < 8; ++j)
        v[j] = gridValue(entry, j);
      values.push_back(v);
    }
    Iq1Grid g;
    g.classes = classify(values);
    for (uint16_t e : g.classes.order) {
      uint8_t plus = 0, minus = 0;
      for (int j = 0; j < 8; ++j) {
        plus |= static_cast<uint8_t>((values[e][j] > 0) << j);
        minus |= static_cast<uint8_t>((values[e][j] < 0) << j);
      }
      g.plus.push_back(plus);
      g.minus.push_back(minus);
    }
    for (int k = 0; k < g.classes.count; ++k) {
      g.slope[0][k] = g.classes.norm[k] + 2 * kIq1Delta * g.classes.sum[k];
      g.slope[1][k] = g.classes.norm[k] - 2 * kIq1Delta * g.classes.sum[k];
    }
    for (int neg = 0; neg < 2; ++neg)
      g.bySlope[neg] = bySlope(std::span(g.slope[neg]).first(g.classes.count));
    return g;
  }();
  return grid;
}

struct Iq1Subgroup {
  float sumsq = 0, total = 0;       // |x|^2, X
  std::array<Envelope, 2> envelope; // delta = +1/8, -1/8

  float error(float s, bool negativeDelta, int *line = nullptr) const {
    float delta = negativeDelta ? -kIq1Delta : kIq1Delta;
    return sumsq - 2 * s * delta * total + 8 * s * s * delta * delta +
           envelope[negativeDelta].least(s, line);
  }
  // The delta sign of least error at s (ties: positive, the bit left clear).
  bool negativeDelta(float s) const { return error(s, true) < error(s, false); }
};

// x . g_e = (sum of x over the +1 weights) - (sum over the -1 weights): with
// the 256 subset sums of x at hand, two look-ups per entry.
Iq1Subgroup iq1Subgroup(const Iq1Grid &grid, const float *x) {
  Iq1Subgroup sub;
  std::array<float, 256> subset;
  subset[0] = 0;
  for (unsigned m = 1; m < 256; ++m)
    subset[m] = subset[m & (m - 1)] + x[std::countr_zero(m)];
  for (int j = 0; j < 8; ++j)
    sub.sumsq += x[j] * x[j];
  sub.total = subset[255];
  const GridClasses &classes = grid.classes;
  std::array<float, kMaxClasses> p;
  std::array<uint16_t, kMaxClasses> entry;
  std::array<uint8_t, kMaxClasses> noSigns{};
  for (int k = 0; k < classes.count; ++k) {
    p[k] = -std::numeric_limits<float>::infinity();
    int best = classes.begin[k];
    for (int i = classes.begin[k]; i < classes.begin[k + 1]; ++i) {
      float corr = subset[grid.plus[i]] - subset[grid.minus[i]];
      if (corr > p[k]) {
        p[k] = corr;
        best = i;
      }
    }
    entry[k] = classes.order[best];
  }
  for (int neg = 0; neg < 2; ++neg)
    sub.envelope[neg] = lowerEnvelope(grid.bySlope[neg], grid.slope[neg].data(),
                                      p.data(), entry.data(), noSigns.data());
  return sub;
}

// The group scale multipliers, as the decoders form them from the code.
constexpr std::array<float, 8> kIq1Multipliers = {1, 3, 5, 7, 9, 11, 13, 15};

// IQ1_S: 8 groups of 32 weights with a 3-bit scale code and one delta sign
// each. A group's error at a scale is the smaller over the two delta signs
// of the sum of its four 8-weight errors; searchScales picks d and the codes,
// then each group its delta and entries at its final scale: least squares
// again for every d tried. SQNR: 7.0 dB on Gaussian data, 5.4 dB on Student-t
// (nu = 3).
void quantizeIQ1_S(const float *src, uint8_t *dst, int64_t n) {
  const Iq1Grid &grid = iq1sSearchGrid();
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq1sBytes) {
    std::fill(dst, dst + kIq1sBytes, 0);
    float amax = absmax(src, QK);
    if (amax == 0)
      continue;
    std::array<Iq1Subgroup, 32> sub;
    for (int k = 0; k < 32; ++k)
      sub[k] = iq1Subgroup(grid, src + 8 * k);
    auto errorAt = [&](int g, float s, bool negativeDelta) {
      float err = 0;
      for (int l = 0; l < 4; ++l)
        err += sub[4 * g + l].error(s, negativeDelta);
      return err;
    };
    auto groupError = [&](int g, float s) {
      return std::min(errorAt(g, s, false), errorAt(g, s, true));
    };
    SuperBlockScales scales = searchScales(
        8, kIq1Multipliers, amax / (1.125f * kIq1Multipliers[7]), groupError);
    storeFp16(dst, scales.d);
    for (int g = 0; g < 8; ++g) {
      float s = scales.d * kIq1Multipliers[scales.code[g]];
      bool negativeDelta = errorAt(g, s, true) < errorAt(g, s, false);
      uint16_t qh = static_cast<uint16_t>(scales.code[g] << 12 |
                                          (negativeDelta ? 0x8000 : 0));
      for (int l = 0; l < 4; ++l) {
        const Envelope &env = sub[4 * g + l].envelope[negativeDelta];
        int i = 0;
        env.least(s, &i);
        dst[2 + 4 * g + l] = static_cast<uint8_t>(env.entry[i]);
        qh |= static_cast<uint16_t>((env.entry[i] >> 8) << 3 * l);
      }
      storeU16(dst + kIq1sQhOffset + 2 * g, qh);
    }
  }
}

// IQ1_M: 16 groups of 16 weights with a 3-bit scale code each, and a delta
// sign per 8 weights, so a group's error at a scale is the sum over its two
// 8 weights of the smaller error over the two delta signs. Otherwise as
// IQ1_S; the fp16 d is scattered over the top nibbles of the scales. SQNR:
// 7.7 dB on Gaussian data, 6.8 dB on Student-t (nu = 3).
void quantizeIQ1_M(const float *src, uint8_t *dst, int64_t n) {
  const Iq1Grid &grid = iq1sSearchGrid();
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq1mBytes) {
    std::fill(dst, dst + kIq1mBytes, 0);
    float amax = absmax(src, QK);
    if (amax == 0)
      continue;
    std::array<Iq1Subgroup, 32> sub;
    for (int k = 0; k < 32; ++k)
      sub[k] = iq1Subgroup(grid, src + 8 * k);
    auto subgroupError = [&](int k, float s) {
      return std::min(sub[k].error(s, false), sub[k].error(s, true));
    };
    auto groupError = [&](int g, float s) {
      return subgroupError(2 * g, s) + subgroupError(2 * g + 1, s);
    };
    SuperBlockScales scales = searchScales(
        16, kIq1Multipliers, amax / (1.125f * kIq1Multipliers[7]), groupError);
    uint16_t dBits = fp32ToFp16(scales.d);
    std::array<uint16_t, 4> sc;
    for (int i = 0; i < 4; ++i)
      sc[i] = static_cast<uint16_t>((dBits >> 4 * i & 15) << 12);
    for (int k = 0; k < 32; ++k) {
      int code = scales.code[k / 2];
      float s = scales.d * kIq1Multipliers[code];
      bool negativeDelta = sub[k].negativeDelta(s);
      const Envelope &env = sub[k].envelope[negativeDelta];
      int i = 0;
      env.least(s, &i);
      int g = k / 4, l = k % 4;
      dst[4 * g + l] = static_cast<uint8_t>(env.entry[i]);
      dst[kIq1mQhOffset + 2 * g + l / 2] |= static_cast<uint8_t>(
          ((env.entry[i] >> 8) | (negativeDelta ? 8 : 0)) << 4 * (l % 2));
      if (l % 2 == 0) // the first 8 of the 16 weights with this code
        sc[g / 2] |= static_cast<uint16_t>(code << (6 * (g % 2) + 3 * (l / 2)));
    }
    for (int i = 0; i < 4; ++i)
      storeU16(dst + kIq1mScalesOffset + 2 * i, sc[i]);
  }
}

constexpr CodecEntry kCodecs[] = {
    {Format::IQ1_S, {dequantizeIQ1_S, quantizeIQ1_S, nullptr, dotIQ1_S}},
    {Format::IQ1_M, {dequantizeIQ1_M, quantizeIQ1_M, nullptr, dotIQ1_M}},
};

} // namespace

std::span<const CodecEntry> iq1Codecs() { return kCodecs; }

} // namespace kf::quant
