// ggml's K-quants Q2_K .. Q6_K (docs/formats/README.md, "K-quants"):
// super-blocks of 256 weights in 16 or 8 sub-blocks, each with an integer
// scale (and, for Q2_K, Q4_K and Q5_K, an integer min) that the super-block's
// fp16 d (and dmin) turn into floats.
//
// Each format is its byte layout (unpack/pack) and its quantizer; decoding,
// the dot product and the last step of every quantizer work on one unpacked
// form, SuperBlock, which holds the integers the layouts' formulas use.
//
// The quantizers are ggml's quantize_row_q*_K_ref, search for search and in
// the same float operations, so they write ggml's bytes (KQuantsTest holds
// bytes ggml wrote).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/activation_blocks.h"
#include "quant/codec.h"

namespace kf::quant {
namespace {

constexpr int QK = 256;

// One super-block as the decoding formula reads it: element i of sub-block k
// is (d * scale[k]) * q[i] - dmin * min[k]. The symmetric formats (Q3_K,
// Q6_K) leave dmin and min[] at 0.
struct SuperBlock {
  float d = 0, dmin = 0;
  int scale[16] = {};
  int min[16] = {};
  int q[QK] = {};
};

float fp16Round(float x) { return fp16ToFp32(fp32ToFp16(x)); }

// ---------------------------------------------------------------------------
// Sub-block fits (ggml's make_qkx2_quants, make_q3_quants, make_qx_quants).
// They return the float scale of one sub-block of n <= 32 elements and its
// codes; the super-block then quantizes the scales, and the codes are redone
// against those (requantize).

// ggml treats a group whose largest magnitude is below this as all zero.
constexpr float kGroupMaxEps = 1e-15f;

// Asymmetric fit x ~ scale * L - *theMin with L in [0, nmax] and *theMin >=
// 0, minimising the w-weighted error (|e| when `absError`, e^2 otherwise).
// Starts from the grid of nmax steps over [min(x, 0), max(x)]; then, for
// nmax + rmin + rdelta * is steps (is = 0..nstep), rounds onto that grid,
// solves the weighted least-squares scale and offset of those codes, and keeps
// the best. An offset above zero is refit through the origin: the offset is a
// min that the format stores unsigned.
float fitScaleMin(const float *x, const float *w, int n, int nmax, float rmin,
                  float rdelta, int nstep, bool absError, int *L,
                  float *theMin) {
  auto error = [absError](float e) { return absError ? std::fabs(e) : e * e; };
  float min = x[0], max = x[0];
  float sumW = w[0], sumX = w[0] * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sumW += w[i];
    sumX += w[i] * x[i];
  }
  min = std::min(min, 0.f);
  if (max == min) { // all elements equal and <= 0: the min alone carries them
    std::fill(L, L + n, 0);
    *theMin = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float bestError = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax);
    bestError += w[i] * error(scale * L[i] + min - x[i]);
  }
  int laux[32];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sumL = 0, sumL2 = 0, sumXl = 0;
    for (int i = 0; i < n; ++i) {
      int l = std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax);
      laux[i] = l;
      sumL += w[i] * l;
      sumL2 += w[i] * l * l;
      sumXl += w[i] * l * x[i];
    }
    float det = sumW * sumL2 - sumL * sumL;
    if (det > 0) {
      float thisScale = (sumW * sumXl - sumX * sumL) / det;
      float thisMin = (sumL2 * sumX - sumL * sumXl) / det;
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = sumXl / sumL2;
      }
      float thisError = 0;
      for (int i = 0; i < n; ++i)
        thisError += w[i] * error(thisScale * laux[i] + thisMin - x[i]);
      if (thisError < bestError) {
        std::copy(laux, laux + n, L);
        bestError = thisError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  *theMin = -min;
  return scale;
}

// Symmetric fit x ~ scale * L, L in [-nmax, nmax - 1], weights x^2. Rounds
// against the scale that puts the extreme on -nmax (so a negative scale when
// the extreme is positive), then runs up to 5 passes of coordinate descent:
// each element in turn moves to the level nearest x / s', s' the least-squares
// scale of the others, if that raises (sum w x L)^2 / sum w L^2, i.e. lowers
// the weighted error at the least-squares scale. ggml refines only where s' >
// 0, that is only sub-blocks whose extreme is negative, and so does this, to
// write ggml's bytes. An all-zero sub-block gets code 0 (L = -nmax), scale 0.
float fitScaleRefined(const float *x, int n, int nmax, int *L) {
  float max = signedAbsmax(x, n);
  if (std::fabs(max) < kGroupMaxEps) {
    std::fill(L, L + n, -nmax);
    return 0.f;
  }
  float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
    float w = x[i] * x[i];
    sumlx += w * x[i] * L[i];
    suml2 += w * L[i] * L[i];
  }
  for (int pass = 0; pass < 5; ++pass) {
    bool changed = false;
    for (int i = 0; i < n; ++i) {
      float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx <= 0)
        continue;
      float sl2 = suml2 - w * L[i] * L[i];
      int l = std::clamp(nearestInt(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (l == L[i])
        continue;
      slx += w * x[i] * l;
      sl2 += w * l * l;
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = l;
        sumlx = slx;
        suml2 = sl2;
        changed = true;
      }
    }
    if (!changed)
      break;
  }
  return suml2 > 0 ? sumlx / suml2 : 0.f;
}

// Symmetric fit x ~ scale * L, L in [-nmax, nmax - 1], weights x^2: rounds
// against the 19 scales that put the extreme at -(nmax + 0.1 is), is = -9..9,
// and keeps the rounding whose least-squares scale has the smallest weighted
// error. An all-zero sub-block gets code 0 (L = -nmax) and scale 0.
float fitScaleSearch(const float *x, int n, int nmax, int *L) {
  float max = signedAbsmax(x, n);
  if (std::fabs(max) < kGroupMaxEps) {
    std::fill(L, L + n, -nmax);
    return 0.f;
  }
  // Rounds x against `iscale` into `codes`; returns sum w x L and sum w L^2.
  auto roundAt = [&](float iscale, int *codes, float &sumlx, float &suml2) {
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      codes[i] = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
      float w = x[i] * x[i];
      sumlx += w * x[i] * codes[i];
      suml2 += w * codes[i] * codes[i];
    }
  };
  float sumlx, suml2;
  roundAt(-nmax / max, L, sumlx, suml2);
  float scale = suml2 != 0 ? sumlx / suml2 : 0.f;
  float best = scale * sumlx; // (sum w x L)^2 / sum w L^2
  int laux[32];
  for (int is = -9; is <= 9; ++is) {
    if (is == 0)
      continue;
    roundAt(-(nmax + 0.1f * is) / max, laux, sumlx, suml2);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      std::copy(laux, laux + n, L);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Redoes the codes of every sub-block against its quantized scale and min,
// clamped to [lo, hi], as the decoder will read them. A sub-block whose scale
// came out 0 keeps the codes of its fit: they decode to the same values
// whatever they are, and ggml writes those. (The symmetric formats' mins are 0,
// and x + 0 rounds to the same code as x.)
void requantize(const float *x, int subLen, int lo, int hi, SuperBlock &s) {
  for (int k = 0; k < QK / subLen; ++k) {
    float dk = s.d * s.scale[k];
    if (dk == 0)
      continue;
    float mk = s.dmin * s.min[k];
    for (int i = k * subLen; i < (k + 1) * subLen; ++i)
      s.q[i] = std::clamp(nearestInt((x[i] + mk) / dk), lo, hi);
  }
}

// ---------------------------------------------------------------------------
// Shared code geometry.

// Q2_K's codes and Q3_K's low two bits: element i sits in byte 32h + l at bit
// 2j, for h = i/128, j = (i%128)/32, l = i%32: each 32-byte quarter of qs holds
// four 32-element runs, one per bit pair.
int pairByte(int i) { return 32 * (i / 128) + i % 32; }
int pairShift(int i) { return 2 * (i % 128 / 32); }

// Q4_K's codes and Q5_K's low four bits: 64-element chunk c is 32 bytes, the
// first 32 elements in the low nibbles, the next 32 in the high ones.
int nibbleByte(int i) { return 32 * (i / 64) + i % 32; }
int nibbleShift(int i) { return 4 * (i / 32 % 2); }

// Q4_K's and Q5_K's 12 scale bytes: eight 6-bit scales and eight 6-bit mins.
// Bytes 0..3 hold scales 0..3 and, in their top two bits, the top two bits of
// scales 4..7; bytes 4..7 do the same for the mins; bytes 8..11 hold the low
// nibbles of scales 4..7 (low) and of mins 4..7 (high).
void unpackScalesMinsK4(const uint8_t *p, SuperBlock &s) {
  for (int k = 0; k < 4; ++k) {
    s.scale[k] = p[k] & 63;
    s.min[k] = p[k + 4] & 63;
    s.scale[k + 4] = (p[k + 8] & 15) | (p[k] >> 6) << 4;
    s.min[k + 4] = (p[k + 8] >> 4) | (p[k + 4] >> 6) << 4;
  }
}

void packScalesMinsK4(const SuperBlock &s, uint8_t *p) {
  for (int k = 0; k < 4; ++k) {
    p[k] = static_cast<uint8_t>(s.scale[k] | (s.scale[k + 4] >> 4) << 6);
    p[k + 4] = static_cast<uint8_t>(s.min[k] | (s.min[k + 4] >> 4) << 6);
    p[k + 8] =
        static_cast<uint8_t>((s.scale[k + 4] & 15) | (s.min[k + 4] & 15) << 4);
  }
}

// Q4_K and Q5_K quantize alike but for the code range and the search grid.
// Sub-block weights are rms(x) + |x|; the 6-bit scales and mins are rounded
// against the largest of each (d = max/63, dmin = maxMin/63).
void quantizeScalesMinsK4(const float *x, int nmax, float rmin, int nstep,
                          SuperBlock &s) {
  float scales[8], mins[8];
  float maxScale = 0, maxMin = 0;
  for (int k = 0; k < 8; ++k) {
    const float *xk = x + 32 * k;
    float sumX2 = 0;
    for (int i = 0; i < 32; ++i)
      sumX2 += xk[i] * xk[i];
    float rms = std::sqrt(sumX2 / 32);
    float w[32];
    for (int i = 0; i < 32; ++i)
      w[i] = rms + std::fabs(xk[i]);
    scales[k] = fitScaleMin(xk, w, 32, nmax, rmin, 0.1f, nstep, false,
                            s.q + 32 * k, &mins[k]);
    maxScale = std::max(maxScale, scales[k]);
    maxMin = std::max(maxMin, mins[k]);
  }
  float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
  float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
  for (int k = 0; k < 8; ++k) {
    s.scale[k] = std::clamp(nearestInt(invScale * scales[k]), 0, 63);
    s.min[k] = std::clamp(nearestInt(invMin * mins[k]), 0, 63);
  }
  s.d = fp16Round(maxScale / 63.f);
  s.dmin = fp16Round(maxMin / 63.f);
  requantize(x, 32, 0, nmax, s);
}

// ---------------------------------------------------------------------------
// Q2_K: scales[16] (low nibble scale, high nibble min), qs[64], fp16 d, dmin.

struct Q2K {
  static constexpr int kBytes = 84, kSubLen = 16;
  static constexpr bool kHasMins = true;
  static constexpr int kScales = 0, kQs = 16, kD = 80, kDmin = 82;

  static void unpack(const uint8_t *b, SuperBlock &s) {
    s.d = loadFp16(b + kD);
    s.dmin = loadFp16(b + kDmin);
    for (int k = 0; k < 16; ++k) {
      s.scale[k] = b[kScales + k] & 15;
      s.min[k] = b[kScales + k] >> 4;
    }
    for (int i = 0; i < QK; ++i)
      s.q[i] = (b[kQs + pairByte(i)] >> pairShift(i)) & 3;
  }

  static void pack(const SuperBlock &s, uint8_t *b) {
    std::memset(b, 0, kBytes);
    for (int k = 0; k < 16; ++k)
      b[kScales + k] = static_cast<uint8_t>(s.scale[k] | s.min[k] << 4);
    for (int i = 0; i < QK; ++i)
      b[kQs + pairByte(i)] |= static_cast<uint8_t>(s.q[i] << pairShift(i));
    storeFp16(b + kD, s.d);
    storeFp16(b + kDmin, s.dmin);
  }

  // Each 16-weight sub-block is fitted over 16 grids of 2.5..4 steps with
  // weights |x| on absolute error, then the 4-bit scales and mins are rounded
  // against the largest of each (d = max/15, dmin = maxMin/15) and the codes
  // redone against them.
  // Round trip (65536 weights): 10.6 dB SQNR on Gaussian, 9.1 dB on
  // Student-t (nu = 3).
  static void quantize(const float *x, SuperBlock &s) {
    float scales[16], mins[16];
    float maxScale = 0, maxMin = 0;
    for (int k = 0; k < 16; ++k) {
      const float *xk = x + 16 * k;
      float w[16];
      for (int i = 0; i < 16; ++i)
        w[i] = std::fabs(xk[i]);
      scales[k] = fitScaleMin(xk, w, 16, 3, -0.5f, 0.1f, 15, true, s.q + 16 * k,
                              &mins[k]);
      maxScale = std::max(maxScale, scales[k]);
      maxMin = std::max(maxMin, mins[k]);
    }
    if (maxScale > 0) {
      float iscale = 15.f / maxScale;
      for (int k = 0; k < 16; ++k)
        s.scale[k] = std::clamp(nearestInt(iscale * scales[k]), 0, 15);
      s.d = fp16Round(maxScale / 15.f);
    }
    if (maxMin > 0) {
      float iscale = 15.f / maxMin;
      for (int k = 0; k < 16; ++k)
        s.min[k] = std::clamp(nearestInt(iscale * mins[k]), 0, 15);
      s.dmin = fp16Round(maxMin / 15.f);
    }
    requantize(x, 16, 0, 3, s);
  }
};

// ---------------------------------------------------------------------------
// Q3_K: hmask[32] (third bits), qs[64] (low two bits), scales[12] (16 6-bit
// scales, offset by 32), fp16 d. Codes are q in -4..3.

struct Q3K {
  static constexpr int kBytes = 110, kSubLen = 16;
  static constexpr bool kHasMins = false;
  static constexpr int kHmask = 0, kQs = 32, kScales = 96, kD = 108;

  // Scale k is lo4 | hi2 << 4: lo4 in the low nibble of byte k for k < 8 and
  // in the high nibble of byte k-8 otherwise; hi2 in byte 8 + k%4 at bit
  // 2(k/4). Element i's third bit is bit i/32 of hmask[i%32]; a set bit means
  // q = low bits, a clear one q = low bits - 4.
  static void unpack(const uint8_t *b, SuperBlock &s) {
    const uint8_t *sc = b + kScales;
    s.d = loadFp16(b + kD);
    for (int k = 0; k < 16; ++k) {
      int lo4 = k < 8 ? sc[k] & 15 : sc[k - 8] >> 4;
      int hi2 = (sc[8 + k % 4] >> (2 * (k / 4))) & 3;
      s.scale[k] = (lo4 | hi2 << 4) - 32;
    }
    for (int i = 0; i < QK; ++i) {
      int low = (b[kQs + pairByte(i)] >> pairShift(i)) & 3;
      int high = (b[kHmask + i % 32] >> (i / 32)) & 1;
      s.q[i] = high ? low : low - 4;
    }
  }

  static void pack(const SuperBlock &s, uint8_t *b) {
    std::memset(b, 0, kBytes);
    uint8_t *sc = b + kScales;
    for (int k = 0; k < 16; ++k) {
      int v = s.scale[k] + 32;
      if (k < 8)
        sc[k] |= static_cast<uint8_t>(v & 15);
      else
        sc[k - 8] |= static_cast<uint8_t>((v & 15) << 4);
      sc[8 + k % 4] |= static_cast<uint8_t>((v >> 4) << (2 * (k / 4)));
    }
    for (int i = 0; i < QK; ++i) {
      int code = s.q[i] + 4;
      b[kQs + pairByte(i)] |= static_cast<uint8_t>((code & 3) << pairShift(i));
      b[kHmask + i % 32] |= static_cast<uint8_t>((code >> 2) << (i / 32));
    }
    storeFp16(b + kD, s.d);
  }

  // Each 16-weight sub-block gets the refined symmetric fit; the signed
  // scales are rounded to -32..31 against the one of largest magnitude, which
  // lands on -32 (d = maxScale / -32); the codes are redone against them.
  // Round trip (65536 weights): 16.4 dB SQNR on Gaussian, 14.6 dB on
  // Student-t (nu = 3).
  static void quantize(const float *x, SuperBlock &s) {
    float scales[16];
    for (int k = 0; k < 16; ++k)
      scales[k] = fitScaleRefined(x + 16 * k, 16, 4, s.q + 16 * k);
    float maxScale = signedAbsmax(scales, 16);
    if (maxScale != 0) {
      float iscale = -32.f / maxScale;
      for (int k = 0; k < 16; ++k)
        s.scale[k] = std::clamp(nearestInt(iscale * scales[k]), -32, 31);
      s.d = fp16Round(1 / iscale);
    } else {
      std::fill(s.scale, s.scale + 16, -32); // stored 0, as ggml leaves them
    }
    requantize(x, 16, -4, 3, s);
  }
};

// ---------------------------------------------------------------------------
// Q4_K: fp16 d, dmin, scales[12] (8 6-bit scales and mins), qs[128].

struct Q4K {
  static constexpr int kBytes = 144, kSubLen = 32;
  static constexpr bool kHasMins = true;
  static constexpr int kD = 0, kDmin = 2, kScales = 4, kQs = 16;

  static void unpack(const uint8_t *b, SuperBlock &s) {
    s.d = loadFp16(b + kD);
    s.dmin = loadFp16(b + kDmin);
    unpackScalesMinsK4(b + kScales, s);
    for (int i = 0; i < QK; ++i)
      s.q[i] = (b[kQs + nibbleByte(i)] >> nibbleShift(i)) & 15;
  }

  static void pack(const SuperBlock &s, uint8_t *b) {
    std::memset(b, 0, kBytes);
    storeFp16(b + kD, s.d);
    storeFp16(b + kDmin, s.dmin);
    packScalesMinsK4(s, b + kScales);
    for (int i = 0; i < QK; ++i)
      b[kQs + nibbleByte(i)] |= static_cast<uint8_t>(s.q[i] << nibbleShift(i));
  }

  // Sub-block fit over 21 grids of 14..16 steps, squared error.
  // Round trip (65536 weights): 22.9 dB SQNR on Gaussian, 20.8 dB on
  // Student-t (nu = 3).
  static void quantize(const float *x, SuperBlock &s) {
    quantizeScalesMinsK4(x, 15, -1.f, 20, s);
  }
};

// ---------------------------------------------------------------------------
// Q5_K: as Q4_K plus qh[32]: the fifth bit of element i is bit i/32 of
// qh[i%32].

struct Q5K {
  static constexpr int kBytes = 176, kSubLen = 32;
  static constexpr bool kHasMins = true;
  static constexpr int kD = 0, kDmin = 2, kScales = 4, kQh = 16, kQs = 48;

  static void unpack(const uint8_t *b, SuperBlock &s) {
    s.d = loadFp16(b + kD);
    s.dmin = loadFp16(b + kDmin);
    unpackScalesMinsK4(b + kScales, s);
    for (int i = 0; i < QK; ++i) {
      int low = (b[kQs + nibbleByte(i)] >> nibbleShift(i)) & 15;
      int high = (b[kQh + i % 32] >> (i / 32)) & 1;
      s.q[i] = low | high << 4;
    }
  }

  static void pack(const SuperBlock &s, uint8_t *b) {
    std::memset(b, 0, kBytes);
    storeFp16(b + kD, s.d);
    storeFp16(b + kDmin, s.dmin);
    packScalesMinsK4(s, b + kScales);
    for (int i = 0; i < QK; ++i) {
      b[kQs + nibbleByte(i)] |=
          static_cast<uint8_t>((s.q[i] & 15) << nibbleShift(i));
      b[kQh + i % 32] |= static_cast<uint8_t>((s.q[i] >> 4) << (i / 32));
    }
  }

  // Sub-block fit over 16 grids of 30.5..32 steps, squared error.
  // Round trip (65536 weights): 28.8 dB SQNR on Gaussian, 26.7 dB on
  // Student-t (nu = 3).
  static void quantize(const float *x, SuperBlock &s) {
    quantizeScalesMinsK4(x, 31, -0.5f, 15, s);
  }
};

// ---------------------------------------------------------------------------
// Q6_K: ql[128] (low four bits), qh[64] (high two bits), int8 scales[16],
// fp16 d. Codes are q in -32..31.

struct Q6K {
  static constexpr int kBytes = 210, kSubLen = 16;
  static constexpr bool kHasMins = false;
  static constexpr int kQl = 0, kQh = 128, kScales = 192, kD = 208;

  // Each 128-element half h has 64 ql bytes and 32 qh bytes. Its element
  // 32j + l (j = 0..3, l = 0..31) takes the nibble j/2 of ql[64h + 32(j%2) + l]
  // and bits 2j..2j+1 of qh[32h + l].
  static int lowByte(int i) {
    return 64 * (i / 128) + 32 * (i / 32 % 2) + i % 32;
  }
  static int lowShift(int i) { return 4 * (i % 128 / 64); }
  static int highByte(int i) { return 32 * (i / 128) + i % 32; }
  static int highShift(int i) { return 2 * (i % 128 / 32); }

  static void unpack(const uint8_t *b, SuperBlock &s) {
    s.d = loadFp16(b + kD);
    for (int k = 0; k < 16; ++k)
      s.scale[k] = static_cast<int8_t>(b[kScales + k]);
    for (int i = 0; i < QK; ++i) {
      int low = (b[kQl + lowByte(i)] >> lowShift(i)) & 15;
      int high = (b[kQh + highByte(i)] >> highShift(i)) & 3;
      s.q[i] = (low | high << 4) - 32;
    }
  }

  static void pack(const SuperBlock &s, uint8_t *b) {
    std::memset(b, 0, kBytes);
    for (int k = 0; k < 16; ++k)
      b[kScales + k] = static_cast<uint8_t>(s.scale[k]);
    for (int i = 0; i < QK; ++i) {
      int code = s.q[i] + 32;
      b[kQl + lowByte(i)] |= static_cast<uint8_t>((code & 15) << lowShift(i));
      b[kQh + highByte(i)] |= static_cast<uint8_t>((code >> 4) << highShift(i));
    }
    storeFp16(b + kD, s.d);
  }

  // Each 16-weight sub-block gets the searched symmetric fit; the signed
  // scales are rounded to int8 against the one of largest magnitude, which
  // lands on -128 (d = maxScale / -128); the codes are redone against them.
  // A block whose scales are all (nearly) zero is written as zero bytes.
  // Round trip (65536 weights): 35.0 dB SQNR on Gaussian, 32.0 dB on
  // Student-t (nu = 3).
  static void quantize(const float *x, SuperBlock &s) {
    float scales[16];
    for (int k = 0; k < 16; ++k)
      scales[k] = fitScaleSearch(x + 16 * k, 16, 32, s.q + 16 * k);
    float maxScale = signedAbsmax(scales, 16), amax = std::fabs(maxScale);
    if (amax < kGroupMaxEps) {
      s = SuperBlock{};
      std::fill(s.q, s.q + QK, -32); // code 0
      return;
    }
    float iscale = -128.f / maxScale;
    s.d = fp16Round(1 / iscale);
    for (int k = 0; k < 16; ++k)
      s.scale[k] = std::clamp(nearestInt(iscale * scales[k]), -128, 127);
    requantize(x, 16, -32, 31, s);
  }
};

// ---------------------------------------------------------------------------
// The codec entry points, one template each over the format structs above.

template <typename F>
void dequantizeK(const uint8_t *src, float *dst, int64_t n) {
  SuperBlock s;
  for (int64_t b = 0; b < n / QK; ++b, src += F::kBytes, dst += QK) {
    F::unpack(src, s);
    for (int k = 0; k < QK / F::kSubLen; ++k) {
      // As ggml's dequantize_row: the sub-block's scale and min in float
      // first. Both products are exact (an fp16 significand times at most 8
      // bits), and so is dl * q (at most 23 bits), so each value is rounded
      // once, in the subtraction. Without mins, ml = 0 and x - 0 is x.
      float dl = s.d * s.scale[k];
      float ml = F::kHasMins ? s.dmin * s.min[k] : 0.f;
      for (int i = k * F::kSubLen; i < (k + 1) * F::kSubLen; ++i)
        dst[i] = dl * s.q[i] - ml;
    }
  }
}

template <typename F>
void quantizeK(const float *src, uint8_t *dst, int64_t n) {
  for (int64_t b = 0; b < n / QK; ++b, src += QK, dst += F::kBytes) {
    SuperBlock s;
    F::quantize(src, s);
    F::pack(s, dst);
  }
}

// Against Q8_K, in ggml's arithmetic (vec_dot_qX_K_q8_K): per super-block the
// exact integer sum over sub-blocks of scale * sum(q * a), and for the mins
// sum(min * bsums) from Q8_K's sums of 16 activations; then d * d_a and
// dmin * d_a in float, one multiply each by those sums, and one float
// accumulator across super-blocks. |isum| < 2^28, so int is wide enough.
// Q2_K's is ggml's expression bit for bit; for Q3_K..Q6_K ggml's generic code
// splits the integer sum into 8 lanes, each scaled and accumulated in float,
// so its result differs from this one in the last bits.
template <typename F>
float dotK(const uint8_t *w, const uint8_t *a, int64_t n) {
  float sum = 0;
  SuperBlock s;
  for (int64_t b = 0; b < n / QK; ++b, w += F::kBytes, a += kQ8_KBytes) {
    F::unpack(w, s);
    int isum = 0, msum = 0;
    for (int k = 0; k < QK / F::kSubLen; ++k) {
      int first = k * F::kSubLen, end = first + F::kSubLen;
      int sub = 0;
      for (int i = first; i < end; ++i)
        sub += s.q[i] * static_cast<int8_t>(a[kQ8_KQsOffset + i]);
      isum += s.scale[k] * sub;
      if constexpr (F::kHasMins) {
        int bsum = 0;
        for (int g = first / 16; g < end / 16; ++g)
          bsum += static_cast<int16_t>(loadU16(a + kQ8_KBsumsOffset + 2 * g));
        msum += s.min[k] * bsum;
      }
    }
    float da = loadF32(a);
    if constexpr (F::kHasMins)
      sum += s.d * da * static_cast<float>(isum) -
             s.dmin * da * static_cast<float>(msum);
    else
      sum += s.d * da * static_cast<float>(isum);
  }
  return sum;
}

template <typename F> constexpr Codec kquantCodec() {
  return {dequantizeK<F>, quantizeK<F>, nullptr, dotK<F>};
}

static_assert(Q2K::kBytes == formatInfo(Format::Q2_K).blockBytes);
static_assert(Q3K::kBytes == formatInfo(Format::Q3_K).blockBytes);
static_assert(Q4K::kBytes == formatInfo(Format::Q4_K).blockBytes);
static_assert(Q5K::kBytes == formatInfo(Format::Q5_K).blockBytes);
static_assert(Q6K::kBytes == formatInfo(Format::Q6_K).blockBytes);

constexpr CodecEntry kCodecs[] = {
    {Format::Q2_K, kquantCodec<Q2K>()}, {Format::Q3_K, kquantCodec<Q3K>()},
    {Format::Q4_K, kquantCodec<Q4K>()}, {Format::Q5_K, kquantCodec<Q5K>()},
    {Format::Q6_K, kquantCodec<Q6K>()},
};

} // namespace

std::span<const CodecEntry> kquantCodecs() { return kCodecs; }

} // namespace kf::quant
