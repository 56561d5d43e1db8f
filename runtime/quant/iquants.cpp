// ggml's IQ formats: the grid vector quantizers IQ2_XXS, IQ2_XS, IQ1_S and
// IQ1_M, and the non-linear 4-bit IQ4_NL and IQ4_XS
// (docs/formats/README.md: their block layouts, "Lookup grids" and
// "Activation pairing"). The grids are ggml's tables, compiled in from
// quant/grids/ by cmake/KfGrids.cmake.
//
// Decoders and dot products follow ggml's scalar code expression for
// expression, so they round exactly as ggml does. The quantizers are our own
// reference quantizers (no importance matrix): each finds, for a super-block,
// the scales and grid entries of least squared error by the searches described
// at each of them; docs/formats/quality.md has every format's quality and
// each quantizer's speed.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "quant/activation_blocks.h"
#include "quant/codec.h"
#include "quant/grids.h"

namespace kf::quant {
namespace {

using grids::iq1s_grid;
using grids::iq2xs_grid;
using grids::iq2xxs_grid;
using grids::ksigns_iq2xs;
using grids::kvalues_iq4nl;

constexpr int QK = 256;

// IQ1S_DELTA = IQ1M_DELTA: the shift of the IQ1 grid values.
constexpr float kIq1Delta = 0.125f;

// Byte j of a grid entry is the value of weight j ("Lookup grids").
constexpr uint8_t grid_byte(uint64_t entry, int j) {
  return static_cast<uint8_t>(entry >> 8 * j);
}
constexpr int8_t grid_value(uint64_t entry, int j) {
  return static_cast<int8_t>(grid_byte(entry, j));
}

// The IQ2 grids hold magnitudes; a 7-bit sign index selects an 8-bit mask
// (ksigns_iq2xs) whose bit j negates weight j.
void decode_signed_grid(float db, uint64_t grid, uint8_t signs, float *dst) {
  for (int j = 0; j < 8; ++j)
    dst[j] = db * grid_byte(grid, j) * (signs >> j & 1 ? -1.f : 1.f);
}
int32_t signed_grid_dot(uint64_t grid, uint8_t signs, const int8_t *q8) {
  int32_t sumi = 0;
  for (int j = 0; j < 8; ++j)
    sumi += grid_byte(grid, j) * q8[j] * (signs >> j & 1 ? -1 : 1);
  return sumi;
}

// The fp16 value nearest to x: the scale a decoder will read back.
float fp16_round(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }

const int8_t *q8_k_qs(const uint8_t *a) {
  return reinterpret_cast<const int8_t *>(a + kQ8_KQsOffset);
}
int q8_k_bsum(const uint8_t *a, int k) {
  return static_cast<int16_t>(load_u16(a + kQ8_KBsumsOffset + 2 * k));
}

// ============================================================================
// Decoders and dot products
// ============================================================================

// --- IQ2_XXS: fp16 d, then per 32-weight group 8 bytes: 4 grid indices and a
// u32 of four 7-bit sign indices (bits 7l..7l+6) and a 4-bit scale (28..31).

constexpr int kIq2xxsBytes = 66;

void dequantize_iq2_xxs(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq2xxsBytes) {
    float d = load_fp16(src);
    for (int g = 0; g < 8; ++g) {
      const uint8_t *q = src + 2 + 8 * g;
      uint32_t signs_scale = load_u32(q + 4);
      float db = d * (0.5f + (signs_scale >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l, dst += 8)
        decode_signed_grid(db, iq2xxs_grid[q[l]],
                           ksigns_iq2xs[(signs_scale >> 7 * l) & 127], dst);
    }
  }
}

// Integer sums of grid x sign x q8 per group times the odd integer 2 ls + 1;
// the factor 1/8 that turns 2 ls + 1 into (0.5 + ls) / 4 comes last.
float dot_iq2_xxs(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq2xxsBytes, a += kQ8_KBytes) {
    float d = load_fp16(w) * load_f32(a);
    const int8_t *q8 = q8_k_qs(a);
    int32_t bsum = 0;
    for (int g = 0; g < 8; ++g) {
      const uint8_t *q = w + 2 + 8 * g;
      uint32_t signs_scale = load_u32(q + 4);
      int32_t sumi = 0;
      for (int l = 0; l < 4; ++l, q8 += 8)
        sumi += signed_grid_dot(iq2xxs_grid[q[l]],
                                ksigns_iq2xs[(signs_scale >> 7 * l) & 127], q8);
      bsum += sumi * static_cast<int32_t>(2 * (signs_scale >> 28) + 1);
    }
    sumf += d * bsum;
  }
  return 0.125f * sumf;
}

// --- IQ2_XS: fp16 d, u16 qs[32] (9-bit grid index, 7-bit sign index), then
// per 32-weight group a byte of two 4-bit scales (low: weights 0..15).

constexpr int kIq2xsBytes = 74;
constexpr int kIq2xsScalesOffset = 66;

void dequantize_iq2_xs(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq2xsBytes) {
    float d = load_fp16(src);
    for (int g = 0; g < 8; ++g) {
      uint8_t scales = src[kIq2xsScalesOffset + g];
      float db[2] = {d * (0.5f + (scales & 15)) * 0.25f,
                     d * (0.5f + (scales >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l, dst += 8) {
        uint16_t q = load_u16(src + 2 + 2 * (4 * g + l));
        decode_signed_grid(db[l / 2], iq2xs_grid[q & 511], ksigns_iq2xs[q >> 9],
                           dst);
      }
    }
  }
}

float dot_iq2_xs(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq2xsBytes, a += kQ8_KBytes) {
    float d = load_fp16(w) * load_f32(a);
    const int8_t *q8 = q8_k_qs(a);
    int32_t bsum = 0;
    for (int g = 0; g < 8; ++g) {
      uint8_t scales = w[kIq2xsScalesOffset + g];
      for (int half = 0; half < 2; ++half) {
        int32_t sumi = 0;
        for (int l = 2 * half; l < 2 * half + 2; ++l, q8 += 8) {
          uint16_t q = load_u16(w + 2 + 2 * (4 * g + l));
          sumi +=
              signed_grid_dot(iq2xs_grid[q & 511], ksigns_iq2xs[q >> 9], q8);
        }
        bsum += sumi * (2 * (scales >> 4 * half & 15) + 1);
      }
    }
    sumf += d * bsum;
  }
  return 0.125f * sumf;
}

// --- IQ1_S: fp16 d, qs[32] (low 8 bits of the grid indices), then per
// 32-weight group a u16: four 3-bit high index parts (bits 3l..3l+2), a 3-bit
// scale (12..14) and the sign of the delta (15).

constexpr int kIq1sBytes = 50;
constexpr int kIq1sQhOffset = 34;

void dequantize_iq1_s(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq1sBytes) {
    float d = load_fp16(src);
    for (int g = 0; g < 8; ++g) {
      uint16_t qh = load_u16(src + kIq1sQhOffset + 2 * g);
      float dl = d * (2 * (qh >> 12 & 7) + 1);
      float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
      for (int l = 0; l < 4; ++l, dst += 8) {
        uint64_t grid = iq1s_grid[src[2 + 4 * g + l] | (qh >> 3 * l & 7) << 8];
        for (int j = 0; j < 8; ++j)
          dst[j] = dl * (grid_value(grid, j) + delta);
      }
    }
  }
}

// The delta term of a group is delta * (sum of its 32 q8), which Q8_K's bsums
// hold; it is carried as an integer in units of the delta (1/8).
float dot_iq1_s(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq1sBytes, a += kQ8_KBytes) {
    const int8_t *q8 = q8_k_qs(a);
    int sumi = 0, sumi_delta = 0;
    for (int g = 0; g < 8; ++g) {
      uint16_t qh = load_u16(w + kIq1sQhOffset + 2 * g);
      int ls = 2 * (qh >> 12 & 7) + 1;
      int delta = qh & 0x8000 ? -1 : 1;
      int lsum = 0;
      for (int l = 0; l < 4; ++l, q8 += 8) {
        uint64_t grid = iq1s_grid[w[2 + 4 * g + l] | (qh >> 3 * l & 7) << 8];
        for (int j = 0; j < 8; ++j)
          lsum += q8[j] * grid_value(grid, j);
      }
      sumi += ls * lsum;
      sumi_delta +=
          ls * delta * (q8_k_bsum(a, 2 * g) + q8_k_bsum(a, 2 * g + 1));
    }
    sumf += load_fp16(w) * load_f32(a) * (sumi + kIq1Delta * sumi_delta);
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
uint16_t iq1_m_scale_bits(const uint8_t *block) {
  uint16_t sc[4];
  for (int k = 0; k < 4; ++k)
    sc[k] = load_u16(block + kIq1mScalesOffset + 2 * k);
  return static_cast<uint16_t>((sc[0] >> 12) | (sc[1] >> 8 & 0x00f0) |
                               (sc[2] >> 4 & 0x0f00) | (sc[3] & 0xf000));
}

// The 3-bit scale of the 16 weights h (0: first, 1: second) of group g.
int iq1_m_subscale(const uint8_t *block, int g, int h) {
  uint16_t sc = load_u16(block + kIq1mScalesOffset + 2 * (g / 2));
  return sc >> (6 * (g % 2) + 3 * h) & 7;
}

// The 11-bit grid index and the delta sign bit of 8 weights l of group g.
int iq1_m_index(const uint8_t *block, int g, int l) {
  uint8_t qh = block[kIq1mQhOffset + 2 * g + l / 2];
  return block[4 * g + l] | (qh >> 4 * (l % 2) & 7) << 8;
}
bool iq1_m_negative_delta(const uint8_t *block, int g, int l) {
  uint8_t qh = block[kIq1mQhOffset + 2 * g + l / 2];
  return qh >> (4 * (l % 2) + 3) & 1;
}

void dequantize_iq1_m(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq1mBytes) {
    float d = fp16_to_fp32(iq1_m_scale_bits(src));
    for (int g = 0; g < 8; ++g) {
      float dl[2] = {d * (2 * iq1_m_subscale(src, g, 0) + 1),
                     d * (2 * iq1_m_subscale(src, g, 1) + 1)};
      for (int l = 0; l < 4; ++l, dst += 8) {
        uint64_t grid = iq1s_grid[iq1_m_index(src, g, l)];
        float delta = iq1_m_negative_delta(src, g, l) ? -kIq1Delta : kIq1Delta;
        for (int j = 0; j < 8; ++j)
          dst[j] = dl[l / 2] * (grid_value(grid, j) + delta);
      }
    }
  }
}

// The delta has a sign per 8 weights, finer than Q8_K's bsums (16 weights), so
// the q8 are summed here.
float dot_iq1_m(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq1mBytes, a += kQ8_KBytes) {
    const int8_t *q8 = q8_k_qs(a);
    int sumi = 0, sumi_delta = 0;
    for (int g = 0; g < 8; ++g) {
      int sum[2] = {0, 0}, sum_delta[2] = {0, 0};
      for (int l = 0; l < 4; ++l, q8 += 8) {
        uint64_t grid = iq1s_grid[iq1_m_index(w, g, l)];
        int lsum = 0, q8sum = 0;
        for (int j = 0; j < 8; ++j) {
          lsum += q8[j] * grid_value(grid, j);
          q8sum += q8[j];
        }
        sum[l / 2] += lsum;
        sum_delta[l / 2] += iq1_m_negative_delta(w, g, l) ? -q8sum : q8sum;
      }
      int ls1 = 2 * iq1_m_subscale(w, g, 0) + 1;
      int ls2 = 2 * iq1_m_subscale(w, g, 1) + 1;
      sumi += sum[0] * ls1 + sum[1] * ls2;
      sumi_delta += sum_delta[0] * ls1 + sum_delta[1] * ls2;
    }
    sumf += fp16_to_fp32(iq1_m_scale_bits(w)) * load_f32(a) *
            (sumi + kIq1Delta * sumi_delta);
  }
  return sumf;
}

// --- IQ4_NL: fp16 d, qs[16] as Q4_0 (low nibble j, high nibble j + 16);
// y = d * kvalues_iq4nl[nibble].

constexpr int QK4_NL = 32;
constexpr int kIq4nlBytes = 18;

void dequantize_iq4_nl(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK4_NL; ++b, src += kIq4nlBytes, dst += QK4_NL) {
    float d = load_fp16(src);
    for (int j = 0; j < QK4_NL / 2; ++j) {
      dst[j] = d * kvalues_iq4nl[src[2 + j] & 15];
      dst[j + 16] = d * kvalues_iq4nl[src[2 + j] >> 4];
    }
  }
}

float dot_iq4_nl(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK4_NL; ++b, w += kIq4nlBytes, a += kQ8_0Bytes) {
    const int8_t *q8 = reinterpret_cast<const int8_t *>(a + kQ8_0QsOffset);
    float d = load_fp16(a) * load_fp16(w);
    int sumi1 = 0, sumi2 = 0;
    for (int j = 0; j < QK4_NL / 2; ++j) {
      sumi1 += q8[j] * kvalues_iq4nl[w[2 + j] & 15];
      sumi2 += q8[j + 16] * kvalues_iq4nl[w[2 + j] >> 4];
    }
    sumf += d * (sumi1 + sumi2);
  }
  return sumf;
}

// --- IQ4_XS: fp16 d, u16 scales_h, scales_l[4], qs[128]. Group g (32
// weights) has the 6-bit scale ls = nibble g%2 of scales_l[g/2] | bits
// 2g..2g+1 of scales_h << 4, and y = d * (ls - 32) * kvalues_iq4nl[nibble],
// nibbles as IQ4_NL in qs[16g..16g+15].

constexpr int kIq4xsBytes = 136;
constexpr int kIq4xsScalesLOffset = 4;
constexpr int kIq4xsQsOffset = 8;

int iq4_xs_scale(const uint8_t *block, int g) {
  uint16_t scales_h = load_u16(block + 2);
  int low = block[kIq4xsScalesLOffset + g / 2] >> 4 * (g % 2) & 15;
  return low | (scales_h >> 2 * g & 3) << 4;
}

void dequantize_iq4_xs(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += kIq4xsBytes) {
    float d = load_fp16(src);
    for (int g = 0; g < 8; ++g, dst += 32) {
      float dl = d * (iq4_xs_scale(src, g) - 32);
      const uint8_t *qs = src + kIq4xsQsOffset + 16 * g;
      for (int j = 0; j < 16; ++j) {
        dst[j] = dl * kvalues_iq4nl[qs[j] & 15];
        dst[j + 16] = dl * kvalues_iq4nl[qs[j] >> 4];
      }
    }
  }
}

// One float scale per 32 weights, accumulated per group as ggml does.
float dot_iq4_xs(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sumf = 0;
  for (int64_t b = 0; b < n / QK; ++b, w += kIq4xsBytes, a += kQ8_KBytes) {
    float d4d8 = load_fp16(w) * load_f32(a);
    const int8_t *q8 = q8_k_qs(a);
    for (int g = 0; g < 8; ++g, q8 += 32) {
      const uint8_t *qs = w + kIq4xsQsOffset + 16 * g;
      float dl = d4d8 * (iq4_xs_scale(w, g) - 32);
      int sumi1 = 0, sumi2 = 0;
      for (int j = 0; j < 16; ++j) {
        sumi1 += q8[j] * kvalues_iq4nl[qs[j] & 15];
        sumi2 += q8[j + 16] * kvalues_iq4nl[qs[j] >> 4];
      }
      sumf += dl * (sumi1 + sumi2);
    }
  }
  return sumf;
}

// ============================================================================
// Grid search: the shared core of the IQ2 and IQ1 quantizers
// ============================================================================
//
// Every 8 weights x of these formats are one grid entry g (with signs for
// IQ2, with a shift delta = +-1/8 for IQ1) times a scale s > 0 shared by a
// group of 16 or 32 weights. The squared error of entry e at scale s is
//   IQ2: |x|^2 + s (s n_e - 2 p_e),
//   IQ1: |x|^2 - 2 s delta X + 8 s^2 delta^2 + s (s (n_e + 2 delta S_e) - 2
//   p_e),
// with n_e = |g_e|^2, S_e = sum_j g_ej, X = sum_j x_j, and p_e = x . g_e for
// IQ1, the largest sum_j sigma_j g_ej x_j over the allowed sign patterns sigma
// for IQ2. Only the last term depends on the entry: at a fixed scale the best
// entry minimises the line s a_e - 2 p_e, a_e = n_e (IQ2) or n_e + 2 delta S_e
// (IQ1), and neither a_e nor p_e nor the sign pattern depends on s. Entries
// with the same (n_e, S_e) form a class whose member of largest p_e beats the
// others at every scale; the grids have 12 (iq2xxs), 22 (iq2xs) and 39 (iq1s)
// classes. Of their best members, only the lines on the lower envelope over
// s > 0 can win at all, typically 3 to 6. So one pass over the grid per 8
// weights yields the envelope, and from then on the least error at any scale is
// a minimum over a handful of lines: the searches below are exact over entries
// and signs at every scale they try.

// Classes of 8 weights over 3 values: C(10, 2).
constexpr int kMaxClasses = 45;

// A grid's entries ordered by class: class k holds the entries
// order[begin[k]] .. order[begin[k + 1] - 1], which share n and S.
struct GridClasses {
  int count = 0;
  std::array<float, kMaxClasses> norm{}; // n: the sum of squared grid values
  std::array<float, kMaxClasses> sum{};  // S: the sum of grid values
  std::array<int, kMaxClasses + 1> begin{};
  std::vector<uint16_t> order;
};

GridClasses classify(std::span<const std::array<int, 8>> entries) {
  GridClasses c;
  std::vector<std::array<int, 2>> keys; // (n, S) of each class
  std::vector<int> class_of;
  for (const std::array<int, 8> &v : entries) {
    std::array<int, 2> key{0, 0};
    for (int x : v) {
      key[0] += x * x;
      key[1] += x;
    }
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end())
      it = keys.insert(keys.end(), key);
    class_of.push_back(static_cast<int>(it - keys.begin()));
  }
  c.count = static_cast<int>(keys.size());
  for (int k = 0; k < c.count; ++k) {
    c.norm[k] = static_cast<float>(keys[k][0]);
    c.sum[k] = static_cast<float>(keys[k][1]);
    c.begin[k] = static_cast<int>(c.order.size());
    for (size_t e = 0; e < entries.size(); ++e)
      if (class_of[e] == k)
        c.order.push_back(static_cast<uint16_t>(e));
  }
  c.begin[c.count] = static_cast<int>(c.order.size());
  return c;
}

// The lines s a_i - 2 p_i that are least at some s > 0, each with its grid
// entry and sign mask (bit j: weight j negative), in the order in which they
// are least as s grows.
struct Envelope {
  int count = 0;
  std::array<float, kMaxClasses> a, p;
  std::array<uint16_t, kMaxClasses> entry;
  std::array<uint8_t, kMaxClasses> signs;

  // min_i s (s a_i - 2 p_i), and the line reaching it.
  float least(float s, int *line = nullptr) const {
    float best = std::numeric_limits<float>::infinity();
    for (int i = 0; i < count; ++i) {
      float err = s * (s * a[i] - 2 * p[i]);
      if (err < best) {
        best = err;
        if (line)
          *line = i;
      }
    }
    return best;
  }
};

// The classes in order of slope, steepest first.
std::vector<int> by_slope(std::span<const float> a) {
  std::vector<int> order(a.size());
  for (size_t k = 0; k < a.size(); ++k)
    order[k] = static_cast<int>(k);
  std::sort(order.begin(), order.end(),
            [&](int i, int j) { return a[i] != a[j] ? a[i] > a[j] : i < j; });
  return order;
}

// The lower envelope over s > 0 of the classes' lines (the convex hull
// trick), given the classes by slope, steepest first. The line of largest p is
// least just above s = 0 (of equal p, the flatter one), and steeper lines
// never are at s > 0. From it on, a line is dropped when the next one
// undercuts the line before it no later than it does.
Envelope lower_envelope(std::span<const int> by_slope, const float *a,
                        const float *p, const uint16_t *entry,
                        const uint8_t *signs) {
  int first = by_slope[0];
  for (int k : by_slope)
    if (p[k] > p[first] || (p[k] == p[first] && a[k] < a[first]))
      first = k;
  Envelope env;
  // Line m is useless between l and r (a_l > a_m > a_r) when r meets l at
  // s = 2 (p_l - p_r) / (a_l - a_r) no later than m does.
  auto useless = [&](int l, int m, float a_r, float p_r) {
    return (env.p[l] - p_r) * (env.a[l] - env.a[m]) <=
           (env.p[l] - env.p[m]) * (env.a[l] - a_r);
  };
  for (int k : by_slope) {
    if (a[k] > a[first])
      continue;
    if (env.count > 0 && env.a[env.count - 1] == a[k]) {
      if (p[k] <= env.p[env.count - 1])
        continue; // parallel and above
      --env.count;
    }
    while (env.count >= 2 && useless(env.count - 2, env.count - 1, a[k], p[k]))
      --env.count;
    env.a[env.count] = a[k];
    env.p[env.count] = p[k];
    env.entry[env.count] = entry[k];
    env.signs[env.count] = signs[k];
    ++env.count;
  }
  return env;
}

// --- IQ2: magnitudes {8, 25, 43} with signs, an even number of them negative.

struct Iq2Grid {
  GridClasses classes;
  std::vector<std::array<float, 8>> magnitude; // of classes.order[i]
  std::vector<int> by_slope;                   // classes by n, largest first
};

Iq2Grid make_iq2_grid(std::span<const uint64_t> table) {
  std::vector<std::array<int, 8>> values;
  for (uint64_t entry : table) {
    std::array<int, 8> v;
    for (int j = 0; j < 8; ++j)
      v[j] = grid_byte(entry, j);
    values.push_back(v);
  }
  Iq2Grid grid;
  grid.classes = classify(values);
  grid.by_slope =
      by_slope(std::span(grid.classes.norm).first(grid.classes.count));
  for (uint16_t e : grid.classes.order) {
    std::array<float, 8> m;
    for (int j = 0; j < 8; ++j)
      m[j] = static_cast<float>(values[e][j]);
    grid.magnitude.push_back(m);
  }
  return grid;
}

const Iq2Grid &iq2xxs_search_grid() {
  static const Iq2Grid grid = make_iq2_grid(iq2xxs_grid);
  return grid;
}
const Iq2Grid &iq2xs_search_grid() {
  static const Iq2Grid grid = make_iq2_grid(iq2xs_grid);
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
Iq2Subgroup iq2_subgroup(const Iq2Grid &grid, const float *x) {
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
  sub.envelope = lower_envelope(grid.by_slope, classes.norm.data(), p.data(),
                                entry.data(), signs.data());
  return sub;
}

// --- IQ1: values {-1, 0, 1} plus the shift delta.

struct Iq1Grid {
  GridClasses classes;
  // The masks of the +1 and of the -1 weights of classes.order[i].
  std::vector<uint8_t> plus, minus;
  // a = n + 2 delta S of each class for delta = +1/8 and -1/8, and the
  // classes by it, largest first.
  std::array<std::array<float, kMaxClasses>, 2> slope;
  std::array<std::vector<int>, 2> by_slope;
};

const Iq1Grid &iq1s_search_grid() {
  static const Iq1Grid grid = [] {
    std::vector<std::array<int, 8>> values;
    for (uint64_t entry : iq1s_grid) {
      std::array<int, 8> v;
      for (int j = 0; j < 8; ++j)
        v[j] = grid_value(entry, j);
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
      g.by_slope[neg] =
          by_slope(std::span(g.slope[neg]).first(g.classes.count));
    return g;
  }();
  return grid;
}

struct Iq1Subgroup {
  float sumsq = 0, total = 0;       // |x|^2, X
  std::array<Envelope, 2> envelope; // delta = +1/8, -1/8

  float error(float s, bool negative_delta, int *line = nullptr) const {
    float delta = negative_delta ? -kIq1Delta : kIq1Delta;
    return sumsq - 2 * s * delta * total + 8 * s * s * delta * delta +
           envelope[negative_delta].least(s, line);
  }
  // The delta sign of least error at s (ties: positive, the bit left clear).
  bool negative_delta(float s) const {
    return error(s, true) < error(s, false);
  }
};

// x . g_e = (sum of x over the +1 weights) - (sum over the -1 weights): with
// the 256 subset sums of x at hand, two look-ups per entry.
Iq1Subgroup iq1_subgroup(const Iq1Grid &grid, const float *x) {
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
  std::array<uint8_t, kMaxClasses> no_signs{};
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
    sub.envelope[neg] =
        lower_envelope(grid.by_slope[neg], grid.slope[neg].data(), p.data(),
                       entry.data(), no_signs.data());
  return sub;
}

// --- The super-block scale ---------------------------------------------------
//
// A super-block has an fp16 scale d and per group a small integer code c; the
// group's scale is d * multiplier[c] (exactly as the decoder forms it, since
// both factors are short). For each d it tries (rounded to fp16), every group
// takes its best code by error(group, scale), the group's least squared error
// at that scale, and the d of least total error wins. d0 puts the largest
// weight on the largest grid value at the largest multiplier; the sweep runs
// from 0.3 d0 to 2.4 d0 in steps of 2^(1/4), then tries 2^(+-1/16) and
// 2^(+-1/8) around the best: on Gaussian and Student-t data the best d lies
// well inside that range, and a sweep four times as fine gains less than
// 0.01 dB, since the codes absorb most of a change of d.
struct SuperBlockScales {
  float d = 0;
  std::array<uint8_t, 16> code{};
};

template <typename GroupError>
SuperBlockScales search_scales(int groups, std::span<const float> multiplier,
                               float d0, GroupError error) {
  SuperBlockScales best;
  float best_err = std::numeric_limits<float>::infinity();
  auto try_d = [&](float d) {
    SuperBlockScales s;
    s.d = fp16_round(d);
    float total = 0;
    for (int g = 0; g < groups; ++g) {
      float group_best = std::numeric_limits<float>::infinity();
      for (size_t c = 0; c < multiplier.size(); ++c) {
        float err = error(g, s.d * multiplier[c]);
        if (err < group_best) {
          group_best = err;
          s.code[g] = static_cast<uint8_t>(c);
        }
      }
      total += group_best;
    }
    if (total < best_err) {
      best_err = total;
      best = s;
      return true;
    }
    return false;
  };
  float best_coarse = d0;
  for (int i = 0; i <= 12; ++i) {
    float d = 0.3f * d0 * std::exp2(i / 4.0f);
    if (try_d(d))
      best_coarse = d;
  }
  for (int i : {-2, -1, 1, 2})
    try_d(best_coarse * std::exp2(i / 16.0f));
  return best;
}

// The group scale multipliers, as the decoders form them from the code.
constexpr std::array<float, 16> kIq2Multipliers = [] {
  std::array<float, 16> m{};
  for (int ls = 0; ls < 16; ++ls)
    m[ls] = (0.5f + ls) * 0.25f;
  return m;
}();
constexpr std::array<float, 8> kIq1Multipliers = {1, 3, 5, 7, 9, 11, 13, 15};

// ============================================================================
// Quantizers
// ============================================================================

// IQ2_XXS: 8 groups of 32 weights with a 4-bit scale code each. The grid
// search gives each 8 weights their best (entry, signs) at any scale;
// search_scales picks d and the codes; each 8 weights then take their best
// entry at their final scale. So for every d it tries, the encoding is the
// least-squares one. SQNR: 9.7 dB on Gaussian data, 7.8 dB on Student-t
// (nu = 3).
void quantize_iq2_xxs(const float *src, uint8_t *dst, int64_t n) {
  const Iq2Grid &grid = iq2xxs_search_grid();
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq2xxsBytes) {
    std::fill(dst, dst + kIq2xxsBytes, 0);
    float amax = absmax(src, QK);
    if (amax == 0)
      continue;
    std::array<Iq2Subgroup, 32> sub;
    for (int k = 0; k < 32; ++k)
      sub[k] = iq2_subgroup(grid, src + 8 * k);
    auto group_error = [&](int g, float s) {
      float err = 0;
      for (int l = 0; l < 4; ++l)
        err += sub[4 * g + l].error(s);
      return err;
    };
    SuperBlockScales scales = search_scales(
        8, kIq2Multipliers, amax / (43 * kIq2Multipliers[15]), group_error);
    store_fp16(dst, scales.d);
    for (int g = 0; g < 8; ++g) {
      float s = scales.d * kIq2Multipliers[scales.code[g]];
      uint32_t signs_scale = static_cast<uint32_t>(scales.code[g]) << 28;
      for (int l = 0; l < 4; ++l) {
        const Envelope &env = sub[4 * g + l].envelope;
        int i = 0;
        env.least(s, &i);
        dst[2 + 8 * g + l] = static_cast<uint8_t>(env.entry[i]);
        signs_scale |= static_cast<uint32_t>(env.signs[i] & 127) << 7 * l;
      }
      store_u32(dst + 2 + 8 * g + 4, signs_scale);
    }
  }
}

// IQ2_XS: as IQ2_XXS with the 512-entry grid and a scale code per 16 weights.
// SQNR: 10.9 dB on Gaussian data, 9.3 dB on Student-t (nu = 3).
void quantize_iq2_xs(const float *src, uint8_t *dst, int64_t n) {
  const Iq2Grid &grid = iq2xs_search_grid();
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq2xsBytes) {
    std::fill(dst, dst + kIq2xsBytes, 0);
    float amax = absmax(src, QK);
    if (amax == 0)
      continue;
    std::array<Iq2Subgroup, 32> sub;
    for (int k = 0; k < 32; ++k)
      sub[k] = iq2_subgroup(grid, src + 8 * k);
    auto group_error = [&](int g, float s) {
      return sub[2 * g].error(s) + sub[2 * g + 1].error(s);
    };
    SuperBlockScales scales = search_scales(
        16, kIq2Multipliers, amax / (43 * kIq2Multipliers[15]), group_error);
    store_fp16(dst, scales.d);
    for (int k = 0; k < 32; ++k) {
      int code = scales.code[k / 2];
      const Envelope &env = sub[k].envelope;
      int i = 0;
      env.least(scales.d * kIq2Multipliers[code], &i);
      store_u16(dst + 2 + 2 * k, static_cast<uint16_t>(
                                     env.entry[i] | (env.signs[i] & 127) << 9));
      dst[kIq2xsScalesOffset + k / 4] |=
          static_cast<uint8_t>(code << 4 * (k / 2 % 2));
    }
  }
}

// IQ1_S: 8 groups of 32 weights with a 3-bit scale code and one delta sign
// each. A group's error at a scale is the smaller over the two delta signs
// of the sum of its four 8-weight errors; search_scales picks d and the codes,
// then each group its delta and entries at its final scale: least squares
// again for every d tried. SQNR: 7.0 dB on Gaussian data, 5.4 dB on Student-t
// (nu = 3).
void quantize_iq1_s(const float *src, uint8_t *dst, int64_t n) {
  const Iq1Grid &grid = iq1s_search_grid();
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq1sBytes) {
    std::fill(dst, dst + kIq1sBytes, 0);
    float amax = absmax(src, QK);
    if (amax == 0)
      continue;
    std::array<Iq1Subgroup, 32> sub;
    for (int k = 0; k < 32; ++k)
      sub[k] = iq1_subgroup(grid, src + 8 * k);
    auto error_at = [&](int g, float s, bool negative_delta) {
      float err = 0;
      for (int l = 0; l < 4; ++l)
        err += sub[4 * g + l].error(s, negative_delta);
      return err;
    };
    auto group_error = [&](int g, float s) {
      return std::min(error_at(g, s, false), error_at(g, s, true));
    };
    SuperBlockScales scales = search_scales(
        8, kIq1Multipliers, amax / (1.125f * kIq1Multipliers[7]), group_error);
    store_fp16(dst, scales.d);
    for (int g = 0; g < 8; ++g) {
      float s = scales.d * kIq1Multipliers[scales.code[g]];
      bool negative_delta = error_at(g, s, true) < error_at(g, s, false);
      uint16_t qh = static_cast<uint16_t>(scales.code[g] << 12 |
                                          (negative_delta ? 0x8000 : 0));
      for (int l = 0; l < 4; ++l) {
        const Envelope &env = sub[4 * g + l].envelope[negative_delta];
        int i = 0;
        env.least(s, &i);
        dst[2 + 4 * g + l] = static_cast<uint8_t>(env.entry[i]);
        qh |= static_cast<uint16_t>((env.entry[i] >> 8) << 3 * l);
      }
      store_u16(dst + kIq1sQhOffset + 2 * g, qh);
    }
  }
}

// IQ1_M: 16 groups of 16 weights with a 3-bit scale code each, and a delta
// sign per 8 weights, so a group's error at a scale is the sum over its two
// 8 weights of the smaller error over the two delta signs. Otherwise as
// IQ1_S; the fp16 d is scattered over the top nibbles of the scales. SQNR:
// 7.7 dB on Gaussian data, 6.8 dB on Student-t (nu = 3).
void quantize_iq1_m(const float *src, uint8_t *dst, int64_t n) {
  const Iq1Grid &grid = iq1s_search_grid();
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq1mBytes) {
    std::fill(dst, dst + kIq1mBytes, 0);
    float amax = absmax(src, QK);
    if (amax == 0)
      continue;
    std::array<Iq1Subgroup, 32> sub;
    for (int k = 0; k < 32; ++k)
      sub[k] = iq1_subgroup(grid, src + 8 * k);
    auto subgroup_error = [&](int k, float s) {
      return std::min(sub[k].error(s, false), sub[k].error(s, true));
    };
    auto group_error = [&](int g, float s) {
      return subgroup_error(2 * g, s) + subgroup_error(2 * g + 1, s);
    };
    SuperBlockScales scales = search_scales(
        16, kIq1Multipliers, amax / (1.125f * kIq1Multipliers[7]), group_error);
    uint16_t d_bits = fp32_to_fp16(scales.d);
    std::array<uint16_t, 4> sc;
    for (int i = 0; i < 4; ++i)
      sc[i] = static_cast<uint16_t>((d_bits >> 4 * i & 15) << 12);
    for (int k = 0; k < 32; ++k) {
      int code = scales.code[k / 2];
      float s = scales.d * kIq1Multipliers[code];
      bool negative_delta = sub[k].negative_delta(s);
      const Envelope &env = sub[k].envelope[negative_delta];
      int i = 0;
      env.least(s, &i);
      int g = k / 4, l = k % 4;
      dst[4 * g + l] = static_cast<uint8_t>(env.entry[i]);
      dst[kIq1mQhOffset + 2 * g + l / 2] |= static_cast<uint8_t>(
          ((env.entry[i] >> 8) | (negative_delta ? 8 : 0)) << 4 * (l % 2));
      if (l % 2 == 0) // the first 8 of the 16 weights with this code
        sc[g / 2] |= static_cast<uint16_t>(code << (6 * (g % 2) + 3 * (l / 2)));
    }
    for (int i = 0; i < 4; ++i)
      store_u16(dst + kIq1mScalesOffset + 2 * i, sc[i]);
  }
}

// --- IQ4: the 16 non-linear levels of kvalues_iq4nl -------------------------

// The level index nearest to v, in level units: the number of midpoints
// between consecutive levels at or below v (ties go up). Counting, unlike a
// binary search, has no branch to mispredict.
int nearest_iq4_level(float v) {
  static constexpr std::array<float, 15> kMidpoints = [] {
    std::array<float, 15> m{};
    for (int i = 0; i < 15; ++i)
      m[i] = (kvalues_iq4nl[i] + kvalues_iq4nl[i + 1]) / 2.0f;
    return m;
  }();
  int level = 0;
  for (float m : kMidpoints)
    level += v >= m;
  return level;
}

// The squared error of 32 weights at the fixed scale dl, each on its nearest
// level.
float iq4_error(const float *x, float dl) {
  float err = 0;
  for (int j = 0; j < 32; ++j) {
    float q = dl != 0 ? dl * kvalues_iq4nl[nearest_iq4_level(x[j] / dl)] : 0;
    err += (x[j] - q) * (x[j] - q);
  }
  return err;
}

// The least-squares scale of 32 weights: for each trial scale, every weight
// takes its nearest level, and the scale that fits those levels best,
// d = sum x k / sum k^2, leaves the error |x|^2 - (sum x k)^2 / sum k^2. The
// trials map the weight of largest magnitude to -127 f or to 113 f, f from
// 0.7 to 1.3 in 16 geometric steps: either end of the asymmetric level set,
// clipped or not. Returns the best of those d (signed).
float iq4_best_scale(const float *x) {
  float extreme = signed_absmax(x, 32);
  if (extreme == 0)
    return 0;
  static const std::array<float, 16> kTrials = [] {
    std::array<float, 16> f;
    for (int i = 0; i < 16; ++i)
      f[i] = 0.7f * std::pow(1.3f / 0.7f, i / 15.0f);
    return f;
  }();
  float best_d = 0, best_fit = -1;
  for (float end : {-127.0f, 113.0f})
    for (float f : kTrials) {
      float inverse = end * f / extreme;
      float sum_xk = 0, sum_kk = 0;
      for (int j = 0; j < 32; ++j) {
        float k = kvalues_iq4nl[nearest_iq4_level(x[j] * inverse)];
        sum_xk += x[j] * k;
        sum_kk += k * k;
      }
      float fit = sum_xk * sum_xk / sum_kk;
      if (fit > best_fit) {
        best_fit = fit;
        best_d = sum_xk / sum_kk;
      }
    }
  return best_d;
}

// Writes the nibbles of 32 weights at scale dl: low nibble j, high j + 16.
void store_iq4_nibbles(const float *x, float dl, uint8_t *qs) {
  for (int j = 0; j < 16; ++j) {
    int lo = dl != 0 ? nearest_iq4_level(x[j] / dl) : 0;
    int hi = dl != 0 ? nearest_iq4_level(x[j + 16] / dl) : 0;
    qs[j] = static_cast<uint8_t>(lo | hi << 4);
  }
}

// IQ4_NL: the least-squares scale of iq4_best_scale, rounded to fp16, and each
// weight on its nearest level at that scale. SQNR: 22.7 dB on Gaussian data,
// 20.1 dB on Student-t (nu = 3).
void quantize_iq4_nl(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK4_NL; ++b, src += QK4_NL, dst += kIq4nlBytes) {
    float d = fp16_round(iq4_best_scale(src));
    store_fp16(dst, d);
    store_iq4_nibbles(src, d, dst + 2);
  }
}

// IQ4_XS: each group of 32 gets its least-squares scale as IQ4_NL; d puts the
// group scale of largest magnitude on the code -32 (the longer end of the
// 6-bit range -32..31), and each group takes, of its rounded code and the two
// next to it, the one of least error. Then each weight goes on its nearest
// level. SQNR: 22.6 dB on Gaussian data, 20.0 dB on Student-t (nu = 3).
void quantize_iq4_xs(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += kIq4xsBytes) {
    std::fill(dst, dst + kIq4xsBytes, 0);
    std::array<float, 8> group_scale;
    float largest = 0;
    for (int g = 0; g < 8; ++g) {
      group_scale[g] = iq4_best_scale(src + 32 * g);
      if (std::fabs(group_scale[g]) > std::fabs(largest))
        largest = group_scale[g];
    }
    float d = fp16_round(largest / -32);
    store_fp16(dst, d);
    uint16_t scales_h = 0;
    for (int g = 0; g < 8; ++g) {
      const float *x = src + 32 * g;
      int code = 0;
      if (d != 0) {
        int rounded = std::clamp(nearest_int(group_scale[g] / d), -32, 31);
        float best_err = std::numeric_limits<float>::infinity();
        for (int c = std::max(rounded - 1, -32); c <= std::min(rounded + 1, 31);
             ++c) {
          float err = iq4_error(x, d * c);
          if (err < best_err) {
            best_err = err;
            code = c;
          }
        }
      }
      int ls = code + 32;
      dst[kIq4xsScalesLOffset + g / 2] |=
          static_cast<uint8_t>((ls & 15) << 4 * (g % 2));
      scales_h |= static_cast<uint16_t>((ls >> 4) << 2 * g);
      store_iq4_nibbles(x, d * code, dst + kIq4xsQsOffset + 16 * g);
    }
    store_u16(dst + 2, scales_h);
  }
}

constexpr CodecEntry kCodecs[] = {
    {Format::IQ2_XXS,
     {dequantize_iq2_xxs, quantize_iq2_xxs, nullptr, dot_iq2_xxs}},
    {Format::IQ2_XS, {dequantize_iq2_xs, quantize_iq2_xs, nullptr, dot_iq2_xs}},
    {Format::IQ1_S, {dequantize_iq1_s, quantize_iq1_s, nullptr, dot_iq1_s}},
    {Format::IQ1_M, {dequantize_iq1_m, quantize_iq1_m, nullptr, dot_iq1_m}},
    {Format::IQ4_NL, {dequantize_iq4_nl, quantize_iq4_nl, nullptr, dot_iq4_nl}},
    {Format::IQ4_XS, {dequantize_iq4_xs, quantize_iq4_xs, nullptr, dot_iq4_xs}},
};

} // namespace

std::span<const CodecEntry> iquant_codecs() { return kCodecs; }

} // namespace kf::quant
