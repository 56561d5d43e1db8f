// ggml's IQ2_XXS and IQ2_XS: grid vector quantizers of signed
// magnitudes (docs/formats/README.md: their block layouts,
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
using grids::iq2xs_grid;
using grids::iq2xxs_grid;
using grids::ksigns_iq2xs;

// --- IQ2_XXS: fp16 d, then per 32-weight group 8 bytes: 4 grid indices and a
// u32 of four 7-bit sign indices (bits 7l..7l+6) and a 4-bit scale (28..31).

constexpr int kIq2xxsBytes = 66;

void dequantizeIQ2_XXS(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq2xxsBytes) {
    float d = loadFp16(src);
    for (int g = 0; g < 8; ++g) {
      const uint8_t *q = src + 2 + 8 * g;
      uint32_t signsScale = loadU32(q + 4);
      float db = d * (0.5f + (signsScale >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l, dst += 8)
        decodeSignedGrid(db, iq2xxs_grid[q[l]],
                         ksigns_iq2xs[(signsScale >> 7 * l) & 127], dst);
    }
  }
}

// Integer sums of grid x sign x q8 per group times the odd integer 2 ls + 1;
// the factor 1/8 that turns 2 ls + 1 into (0.5 + ls) / 4 comes last.
float dotIQ2_XXS(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq2xxsBytes, a += kQ8_KBytes) {
    float d = loadFp16(w) * loadF32(a);
    const int8_t *q8 = q8kQs(a);
    int32_t bsum = 0;
    for (int g = 0; g < 8; ++g) {
      const uint8_t *q = w + 2 + 8 * g;
      uint32_t signsScale = loadU32(q + 4);
      int32_t sumi = 0;
      for (int l = 0; l < 4; ++l, q8 += 8)
        sumi += signedGridDot(iq2xxs_grid[q[l]],
                              ksigns_iq2xs[(signsScale >> 7 * l) & 127], q8);
      bsum += sumi * static_cast<int32_t>(2 * (signsScale >> 28) + 1);
    }
    sumf += d * bsum;
  }
  return 0.125f * sumf;
}

// --- IQ2_XS: fp16 d, u16 qs[32] (9-bit grid index, 7-bit sign index), then
// per 32-weight group a byte of two 4-bit scales (low: weights 0..15).

constexpr int kIq2xsBytes = 74;
constexpr int kIq2xsScalesOffset = 66;

void dequantizeIQ2_XS(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq2xsBytes) {
    float d = loadFp16(src);
    for (int g = 0; g < 8; ++g) {
      uint8_t scales = src[kIq2xsScalesOffset + g];
      float db[2] = {d * (0.5f + (scales & 15)) * 0.25f,
                     d * (0.5f + (scales >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l, dst += 8) {
        uint16_t q = loadU16(src + 2 + 2 * (4 * g + l));
        decodeSignedGrid(db[l / 2], iq2xs_grid[q & 511], ksigns_iq2xs[q >> 9],
                         dst);
      }
    }
  }
}

float dotIQ2_XS(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq2xsBytes, a += kQ8_KBytes) {
    float d = loadFp16(w) * loadF32(a);
    const int8_t *q8 = q8kQs(a);
    int32_t bsum = 0;
    for (int g = 0; g < 8; ++g) {
      uint8_t scales = w[kIq2xsScalesOffset + g];
      for (int half = 0; half < 2; ++half) {
        int32_t sumi = 0;
        for (int l = 2 * half; l < 2 * half + 2; ++l, q8 += 8) {
          uint16_t q = loadU16(w + 2 + 2 * (4 * g + l));
          sumi += signedGridDot(iq2xs_grid[q & 511], ksigns_iq2xs[q >> 9], q8);
        }
        bsum += sumi * (2 * (scales >> 4 * half & 15) + 1);
      }
    }
    sumf += d * bsum;
  }
  return 0.125f * sumf;
}

// --- IQ2: magnitudes {8, 25, 43} with signs, an even number of them negative.

struct Iq2Grid {
  GridClasses classes;
  std::vector<std::array<float, 8>> magnitude; // of classes.order[i]
  std::vector<int> bySlope;                    // classes by n, largest first
};

Iq2Grid makeIq2Grid(std::span<const uint64_t> table) {
  std::vector<std::array<int, 8>> values;
  for (uint64_t entry : table) {
    std::array<int, 8> v;
    for (int j = 0; j < 8; ++j)
      v[j] = gridByte(entry, j);
    values.push_back(v);
  }
  Iq2Grid grid;
  grid.classes = classify(values);
  grid.bySlope =
      bySlope(std::span(grid.classes.norm).first(grid.classes.count));
  for (uint16_t e : grid.classes.order) {
    std::array<float, 8> m;
    for (int j = 0; j < 8; ++j)
      m[j] = static_cast<float>(values[e][j]);
    grid.magnitude.push_back(m);
  }
  return grid;
}

const Iq2Grid &iq2xxsSearchGrid() {
  static const Iq2Grid grid = makeIq2Grid(iq2xxs_grid);
  return grid;
}
const Iq2Grid &iq2xsSearchGrid() {
  static const Iq2Grid grid = makeIq2Grid(iq2xs_grid);
  return grid;
}

struct Iq2Subgroup {
  float sumsq = 0;
  Envelope envelope;

  float error(float s, int *line = nullptr) const {
    return sumsq + envelope.least(s, line);
  }
};

// The signs of x are best, unless an odd number of them is negative: then
// the weight with the least g_j |x_j| takes the other sign, which costs the
// least correlation (2 g_j |x_j|). Zero counts as positive.
Iq2Subgroup iq2Subgroup(const Iq2Grid &grid, const float *x) {
  Iq2Subgroup sub;
  std::array<float, 8> ax;
  uint8_t negative = 0;
  for (int j = 0; j < 8; ++j) {
    ax[j] = std::fabs(x[j]);
    negative |= static_cast<uint8_t>((x[j] < 0) << j);
    sub.sumsq += x[j] * x[j];
  }
  bool odd = std::popcount(negative) & 1;
  const GridClasses &classes = grid.classes;
  std::array<float, kMaxClasses> p;
  std::array<uint16_t, kMaxClasses> entry;
  std::array<uint8_t, kMaxClasses> signs;
  for (int k = 0; k < classes.count; ++k) {
    p[k] = -std::numeric_limits<float>::infinity();
    int best = classes.begin[k];
    for (int i = classes.begin[k]; i < classes.begin[k + 1]; ++i) {
      const std::array<float, 8> &m = grid.magnitude[i];
      float sum = 0, least = m[0] * ax[0];
      for (int j = 0; j < 8; ++j) {
        sum += m[j] * ax[j];
        least = std::min(least, m[j] * ax[j]);
      }
      float corr = odd ? sum - 2 * least : sum;
      if (corr > p[k]) {
        p[k] = corr;
        best = i;
      }
    }
    entry[k] = classes.order[best];
    signs[k] = negative;
    if (odd) {
      const std::array<float, 8> &m = grid.magnitude[best];
      int flip = 0;
      for (int j = 1; j < 8; ++j)
        if (m[j] * ax[j] < m[flip] * ax[flip])
          flip = j;
      signs[k] ^= static_cast<uint8_t>(1 << flip);
    }
  }
  sub.envelope = lowerEnvelope(grid.bySlope, classes.norm.data(), p.data(),
                               entry.data(), signs.data());
  return sub;
}

// The group scale multipliers, as the decoders form them from the code.
constexpr std::array<float, 16> kIq2Multipliers = [] {
  std::array<float, 16> m{};
  for (int ls = 0; ls < 16; ++ls)
    m[ls] = (0.5f + ls) * 0.25f;
  return m;
}();

// IQ2_XXS: 8 groups of 32 weights with a 4-bit scale code each. The grid
// search gives each 8 weights their best (entry, signs) at any scale;
// searchScales picks d and the codes; each 8 weights then take their best
// entry at their final scale. So for every d it tries, the encoding is the
// least-squares one. SQNR: 9.7 dB on Gaussian data, 7.8 dB on Student-t
// (nu = 3).
void quantizeIQ2_XXS(const float *src, uint8_t *dst, int64_t n) {
  const Iq2Grid &grid = iq2xxsSearchGrid();
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq2xxsBytes) {
    std::fill(dst, dst + kIq2xxsBytes, 0);
    float amax = absmax(src, QK);
    if (amax == 0)
      continue;
    std::array<Iq2Subgroup, 32> sub;
    for (int k = 0; k < 32; ++k)
      sub[k] = iq2Subgroup(grid, src + 8 * k);
    auto groupError = [&](int g, float s) {
      float err = 0;
      for (int l = 0; l < 4; ++l)
        err += sub[4 * g + l].error(s);
      return err;
    };
    SuperBlockScales scales = searchScales(
        8, kIq2Multipliers, amax / (43 * kIq2Multipliers[15]), groupError);
    storeFp16(dst, scales.d);
    for (int g = 0; g < 8; ++g) {
      float s = scales.d * kIq2Multipliers[scales.code[g]];
      uint32_t signsScale = static_cast<uint32_t>(scales.code[g]) << 28;
      for (int l = 0; l < 4; ++l) {
        const Envelope &env = sub[4 * g + l].envelope;
        int i = 0;
        env.least(s, &i);
        dst[2 + 8 * g + l] = static_cast<uint8_t>(env.entry[i]);
        signsScale |= static_cast<uint32_t>(env.signs[i] & 127) << 7 * l;
      }
      storeU32(dst + 2 + 8 * g + 4, signsScale);
    }
  }
}

// IQ2_XS: as IQ2_XXS with the 512-entry grid and a scale code per 16 weights.
// SQNR: 10.9 dB on Gaussian data, 9.3 dB on Student-t (nu = 3).
void quantizeIQ2_XS(const float *src, uint8_t *dst, int64_t n) {
  const Iq2Grid &grid = iq2xsSearchGrid();
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq2xsBytes) {
    std::fill(dst, dst + kIq2xsBytes, 0);
    float amax = absmax(src, QK);
    if (amax == 0)
      continue;
    std::array<Iq2Subgroup, 32> sub;
    for (int k = 0; k < 32; ++k)
      sub[k] = iq2Subgroup(grid, src + 8 * k);
    auto groupError = [&](int g, float s) {
      return sub[2 * g].error(s) + sub[2 * g + 1].error(s);
    };
    SuperBlockScales scales = searchScales(
        16, kIq2Multipliers, amax / (43 * kIq2Multipliers[15]), groupError);
    storeFp16(dst, scales.d);
    for (int k = 0; k < 32; ++k) {
      int code = scales.code[k / 2];
      const Envelope &env = sub[k].envelope;
      int i = 0;
      env.least(scales.d * kIq2Multipliers[code], &i);
      storeU16(dst + 2 + 2 * k,
               static_cast<uint16_t>(env.entry[i] | (env.signs[i] & 127) << 9));
      dst[kIq2xsScalesOffset + k / 4] |=
          static_cast<uint8_t>(code << 4 * (k / 2 % 2));
    }
  }
}

constexpr CodecEntry kCodecs[] = {
    {Format::IQ2_XXS,
     {dequantizeIQ2_XXS, quantizeIQ2_XXS, nullptr, dotIQ2_XXS}},
    {Format::IQ2_XS, {dequantizeIQ2_XS, quantizeIQ2_XS, nullptr, dotIQ2_XS}},
};

} // namespace

std::span<const CodecEntry> iq2Codecs() { return kCodecs; }

} // namespace kf::quant
