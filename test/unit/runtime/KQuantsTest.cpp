// Q2_K, Q3_K, Q4_K, Q5_K and Q6_K: known answers from hand-built blocks, the
// reference quantizers (ggml's bytes, round-trip error, edge cases) and the
// dot product against Q8_K.
#include <algorithm>
#include <cstring>
#include <string>

#include "QuantTestUtil.h"
#include "kf/runtime/half.h"

namespace kf {
namespace {

using testing::activation;
using testing::dequantized;
using testing::exactDot;
using testing::gaussian;
using testing::quantized;
using testing::sqnrDb;
using testing::studentT;

constexpr Format kKQuants[] = {Format::Q2_K, Format::Q3_K, Format::Q4_K,
                               Format::Q5_K, Format::Q6_K};

float fp16Value(float x) { return fp16ToFp32(fp32ToFp16(x)); }

void putFp16(uint8_t *p, float x) {
  uint16_t h = fp32ToFp16(x);
  std::memcpy(p, &h, 2);
}

// A deterministic stream of codes in [0, n): the known-answer blocks use
// irregular codes so that reading any element from a wrong place shows.
struct Codes {
  uint32_t state;
  int next(int n) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>(state >> 16) % n;
  }
};

// The fields of one super-block as a test chooses them; the builders below lay
// them out as docs/formats/README.md ("K-quants") describes, with codes stored
// unsigned (Q3_K's code c means q = c - 4, Q6_K's q = c - 32) and Q3_K's
// scales stored as 6-bit values (scale = s - 32).
struct Fields {
  float d = 0, dmin = 0;
  int scale[16] = {};
  int min[16] = {};
  int code[256] = {};
};

// Q2_K: scales[16] (scale | min << 4), qs[64], d @80, dmin @82. Element
// 128h + 32j + l has its code at bits 2j..2j+1 of qs[32h + l].
std::vector<uint8_t> q2kBlock(const Fields &f) {
  std::vector<uint8_t> b(84, 0);
  for (int k = 0; k < 16; ++k)
    b[k] = static_cast<uint8_t>(f.scale[k] | f.min[k] << 4);
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l)
        b[16 + 32 * h + l] |=
            static_cast<uint8_t>(f.code[128 * h + 32 * j + l] << 2 * j);
  putFp16(&b[80], f.d);
  putFp16(&b[82], f.dmin);
  return b;
}

// Q3_K: hmask[32], qs[64] (low two bits, as Q2_K), scales[12], d @108.
// Element 128h + 32j + l has its third bit at bit 4h + j of hmask[l]. Scale k:
// low nibble of byte k (k < 8) or high nibble of byte k-8, and its top two bits
// at bit 2(k/4) of byte 8 + k%4.
std::vector<uint8_t> q3kBlock(const Fields &f) {
  std::vector<uint8_t> b(110, 0);
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l) {
        int c = f.code[128 * h + 32 * j + l];
        b[l] |= static_cast<uint8_t>((c >> 2) << (4 * h + j));
        b[32 + 32 * h + l] |= static_cast<uint8_t>((c & 3) << 2 * j);
      }
  uint8_t *sc = &b[96];
  for (int k = 0; k < 16; ++k) {
    sc[k % 8] |= static_cast<uint8_t>((f.scale[k] & 15) << (k < 8 ? 0 : 4));
    sc[8 + k % 4] |= static_cast<uint8_t>((f.scale[k] >> 4) << 2 * (k / 4));
  }
  putFp16(&b[108], f.d);
  return b;
}

// Q4_K's and Q5_K's 12 scale bytes (as "K-quants" lays them out), for
// sub-blocks 0..7.
void putScalesMinsK4(const Fields &f, uint8_t *p) {
  for (int k = 0; k < 4; ++k) {
    p[k] = static_cast<uint8_t>(f.scale[k] | (f.scale[k + 4] >> 4) << 6);
    p[k + 4] = static_cast<uint8_t>(f.min[k] | (f.min[k + 4] >> 4) << 6);
    p[k + 8] =
        static_cast<uint8_t>((f.scale[k + 4] & 15) | (f.min[k + 4] & 15) << 4);
  }
}

// Q4_K: d @0, dmin @2, scales[12] @4, qs[128] @16: elements 64c + l and
// 64c + 32 + l share qs[32c + l], low and high nibble.
std::vector<uint8_t> q4kBlock(const Fields &f) {
  std::vector<uint8_t> b(144, 0);
  putFp16(&b[0], f.d);
  putFp16(&b[2], f.dmin);
  putScalesMinsK4(f, &b[4]);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l)
      b[16 + 32 * c + l] = static_cast<uint8_t>(f.code[64 * c + l] |
                                                f.code[64 * c + 32 + l] << 4);
  return b;
}

// Q5_K: as Q4_K with qh[32] @16 and qs @48; element 32k + l has its fifth bit
// at bit k of qh[l].
std::vector<uint8_t> q5kBlock(const Fields &f) {
  std::vector<uint8_t> b(176, 0);
  putFp16(&b[0], f.d);
  putFp16(&b[2], f.dmin);
  putScalesMinsK4(f, &b[4]);
  for (int k = 0; k < 8; ++k)
    for (int l = 0; l < 32; ++l)
      b[16 + l] |= static_cast<uint8_t>((f.code[32 * k + l] >> 4) << k);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l)
      b[48 + 32 * c + l] = static_cast<uint8_t>(
          (f.code[64 * c + l] & 15) | (f.code[64 * c + 32 + l] & 15) << 4);
  return b;
}

// Q6_K: ql[128], qh[64] @128, int8 scales[16] @192, d @208. In half h, with
// L = ql + 64h, H = qh + 32h and c_j the code of element 128h + 32j + l:
// L[l] = c_0 | c_2 << 4, L[l + 32] = c_1 | c_3 << 4 (low nibbles) and H[l]
// holds the high two bits of c_0..c_3 at bits 0, 2, 4, 6.
std::vector<uint8_t> q6kBlock(const Fields &f) {
  std::vector<uint8_t> b(210, 0);
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int *c = &f.code[128 * h + l];
      b[64 * h + l] = static_cast<uint8_t>((c[0] & 15) | (c[64] & 15) << 4);
      b[64 * h + l + 32] =
          static_cast<uint8_t>((c[32] & 15) | (c[96] & 15) << 4);
      b[128 + 32 * h + l] =
          static_cast<uint8_t>((c[0] >> 4) | (c[32] >> 4) << 2 |
                               (c[64] >> 4) << 4 | (c[96] >> 4) << 6);
    }
  for (int k = 0; k < 16; ++k)
    b[192 + k] = static_cast<uint8_t>(static_cast<int8_t>(f.scale[k]));
  putFp16(&b[208], f.d);
  return b;
}

// Fields with irregular codes below `codeRange` and scale fp16 values that
// are not powers of two, so that each decoded value is rounded.
Fields irregularFields(uint32_t seed, int codeRange) {
  Fields f;
  f.d = fp16Value(0.1f);
  f.dmin = fp16Value(0.3f);
  Codes codes{seed};
  for (int &c : f.code)
    c = codes.next(codeRange);
  return f;
}

// Two different blocks decode, each by its own fields, to
// y = d * scale * q - dmin * min ("K-quants"), with sub-blocks of `subLen`.
void expectDecodes(Format f, const Fields (&fields)[2],
                   std::vector<uint8_t> (*build)(const Fields &), int subLen,
                   int codeOffset, int scaleOffset) {
  std::vector<uint8_t> data = build(fields[0]);
  std::vector<uint8_t> second = build(fields[1]);
  data.insert(data.end(), second.begin(), second.end());
  std::vector<float> y = dequantized(f, data, 512);
  for (int b = 0; b < 2; ++b) {
    const Fields &fb = fields[b];
    for (int i = 0; i < 256; ++i) {
      int k = i / subLen;
      float expected =
          fb.d * (fb.scale[k] - scaleOffset) * (fb.code[i] - codeOffset) -
          fb.dmin * fb.min[k];
      ASSERT_EQ(y[256 * b + i], expected)
          << formatInfo(f).name << " block " << b << " element " << i;
    }
  }
}

TEST(Q2_K, KnownAnswer) {
  Fields fields[2] = {irregularFields(1, 4), irregularFields(2, 4)};
  // Scales take 1..15 (never 0, so that every code shows), mins 0..15.
  for (int k = 0; k < 16; ++k) {
    fields[0].scale[k] = 1 + (5 * k + 3) % 15;
    fields[0].min[k] = (7 * k + 2) % 16;
    fields[1].scale[k] = 15 - k % 15;
    fields[1].min[k] = 15 - k;
  }
  fields[1].d = fp16Value(-2.5f);
  expectDecodes(Format::Q2_K, fields, q2kBlock, 16, 0, 0);
}

TEST(Q3_K, KnownAnswer) {
  Fields fields[2] = {irregularFields(3, 8), irregularFields(4, 8)};
  for (int k = 0; k < 16; ++k) {
    fields[0].scale[k] = (23 * k + 5) % 64; // 16 different 6-bit values
    fields[1].scale[k] = 63 - 4 * k;
  }
  fields[0].dmin = fields[1].dmin = 0; // Q3_K has no mins
  expectDecodes(Format::Q3_K, fields, q3kBlock, 16, 4, 32);
}

// The split scale bytes of Q3_K, worked by hand from "K-quants"
// (docs/formats/README.md). Scales s_0..s_15 = 0 1 17 33 63 48 5 40 31 32 50 9
// 22 60 44 12: bytes 0..7 pair the low nibbles of s_k and s_{k+8}; byte 8 + r
// holds the top bits of s_r, s_{r+4}, s_{r+8}, s_{r+12} at bits 0, 2, 4, 6
// (byte 8: 0 | 3<<2 | 1<<4 | 1<<6 = 0x5c).
TEST(Q3_K, ScaleBytesByHand) {
  uint8_t block[110] = {};
  const uint8_t scales[12] = {0xf0, 0x01, 0x21, 0x91, 0x6f, 0xc0,
                              0xc5, 0xc8, 0x5c, 0xec, 0xb1, 0x0a};
  std::memcpy(block + 96, scales, 12);
  putFp16(block + 108, 1.0f);
  // hmask and qs all zero: every q is 0 - 4.
  const int s[16] = {0,  1,  17, 33, 63, 48, 5,  40,
                     31, 32, 50, 9,  22, 60, 44, 12};
  std::vector<float> y = dequantized(Format::Q3_K, block, 256);
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(y[i], (s[i / 16] - 32) * -4.0f) << i;
}

TEST(Q4_K, KnownAnswer) {
  Fields fields[2] = {irregularFields(5, 16), irregularFields(6, 16)};
  const int scale[8] = {1, 2, 3, 4, 45, 50, 61, 33},
            min[8] = {5, 6, 7, 8, 20, 37, 52, 63};
  for (int k = 0; k < 8; ++k) {
    fields[0].scale[k] = scale[k];
    fields[0].min[k] = min[k];
    fields[1].scale[k] = min[7 - k];
    fields[1].min[k] = scale[7 - k];
  }
  expectDecodes(Format::Q4_K, fields, q4kBlock, 32, 0, 0);
}

TEST(Q5_K, KnownAnswer) {
  Fields fields[2] = {irregularFields(7, 32), irregularFields(8, 32)};
  const int scale[8] = {63, 17, 40, 9, 30, 1, 58, 22},
            min[8] = {0, 44, 13, 63, 7, 35, 26, 50};
  for (int k = 0; k < 8; ++k) {
    fields[0].scale[k] = scale[k];
    fields[0].min[k] = min[k];
    fields[1].scale[k] = min[k] | 1;
    fields[1].min[k] = scale[7 - k];
  }
  expectDecodes(Format::Q5_K, fields, q5kBlock, 32, 0, 0);
}

// The 12 scale bytes shared by Q4_K and Q5_K, worked by hand from "K-quants".
// With scales 1 2 3 4 45 50 61 33 and mins 5 6 7 8 20 37 52 63: byte 0 =
// 1 | (45 >> 4) << 6 = 0x81, byte 4 = 5 | (20 >> 4) << 6 = 0x45, byte 8 =
// (45 & 15) | (20 & 15) << 4 = 0x4d, and so on. With d = 64, dmin = 1 and every
// q = 1, sub-block k decodes to 64 * scale_k - min_k.
TEST(Q4_K, ScaleBytesByHand) {
  const uint8_t scales[12] = {0x81, 0xc2, 0xc3, 0x84, 0x45, 0x86,
                              0xc7, 0xc8, 0x4d, 0x52, 0x4d, 0xf1};
  const float expected[8] = {59, 122, 185, 248, 2860, 3163, 3852, 2049};
  uint8_t q4[144], q5[176] = {};
  putFp16(q4, 64.0f);
  putFp16(q4 + 2, 1.0f);
  std::memcpy(q4 + 4, scales, 12);
  std::memset(q4 + 16, 0x11, 128); // q = 1 in both nibbles
  std::memcpy(q5, q4, 16);         // Q5_K: same header, qh = 0
  std::memset(q5 + 48, 0x11, 128);
  std::vector<float> y4 = dequantized(Format::Q4_K, q4, 256);
  std::vector<float> y5 = dequantized(Format::Q5_K, q5, 256);
  for (int i = 0; i < 256; ++i) {
    ASSERT_EQ(y4[i], expected[i / 32]) << i;
    ASSERT_EQ(y5[i], expected[i / 32]) << i;
  }
}

TEST(Q6_K, KnownAnswer) {
  Fields fields[2] = {irregularFields(9, 64), irregularFields(10, 64)};
  const int scale[16] = {-128, 127,  1,  -1,  64, -65, 3,  -7,
                         100,  -100, 33, -33, 17, -2,  90, -90};
  for (int k = 0; k < 16; ++k) {
    fields[0].scale[k] = scale[k];
    fields[1].scale[k] = scale[15 - k] / 2;
  }
  fields[0].dmin = fields[1].dmin = 0; // Q6_K has no mins
  expectDecodes(Format::Q6_K, fields, q6kBlock, 16, 32, 0);
}

// One byte each of ql and qh, worked by hand from "K-quants" (Q6_K): in the
// second half, ql[64 + 5] = 0x9c gives elements 133 and 197 the low bits 12
// and 9, ql[96 + 5] = 0x3e gives elements 165 and 229 the low bits 14 and 3,
// and qh[32 + 5] = 0b11100100 gives elements 133, 165, 197, 229 the high bits
// 0, 1, 2, 3.
TEST(Q6_K, LanesByHand) {
  uint8_t block[210] = {};
  block[64 + 5] = 0x9c;
  block[96 + 5] = 0x3e;
  block[128 + 32 + 5] = 0xe4;
  block[192 + 8] = 1;                         // sub-block 8: 128..143
  block[192 + 10] = static_cast<uint8_t>(-2); // sub-block 10: 160..175
  block[192 + 12] = 3;                        // sub-block 12: 192..207
  block[192 + 14] = static_cast<uint8_t>(-4); // sub-block 14: 224..239
  putFp16(block + 208, 0.5f);
  std::vector<float> y = dequantized(Format::Q6_K, block, 256);
  EXPECT_EQ(y[133], 0.5f * 1 * (12 - 32));
  EXPECT_EQ(y[165], 0.5f * -2 * (14 + 16 - 32));
  EXPECT_EQ(y[197], 0.5f * 3 * (9 + 32 - 32));
  EXPECT_EQ(y[229], 0.5f * -4 * (3 + 48 - 32));
  EXPECT_EQ(y[134], 0.5f * 1 * -32); // every other code is 0
  EXPECT_EQ(y[5], 0.0f);             // scale 0
}

// --- Reference quantizers ---

std::string hex(std::span<const uint8_t> bytes) {
  std::string s;
  for (uint8_t b : bytes) {
    s += "0123456789abcdef"[b >> 4];
    s += "0123456789abcdef"[b & 15];
  }
  return s;
}

// One super-block made with integer arithmetic only, so that every standard
// library gives the same floats: sums of three uniform values (roughly
// Gaussian, sigma 1), with an all-zero sub-block (48..63), a constant negative
// run (96..127) and an outlier (200).
std::vector<float> ggmlTestWeights() {
  std::vector<float> x(256);
  uint32_t state = 2463534242u;
  auto uniform = [&state] { // xorshift32, mapped exactly onto [-1, 1)
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<float>(static_cast<int32_t>(state) >> 8) * 0x1p-23f;
  };
  for (float &v : x)
    v = uniform() + uniform() + uniform();
  std::fill(x.begin() + 48, x.begin() + 64, 0.f);
  std::fill(x.begin() + 96, x.begin() + 128, -0.75f);
  x[200] = 8.f;
  return x;
}

// The bytes ggml's quantize_row_q*_K_ref (ggml 0.23.0, x86-64) writes for
// ggmlTestWeights(): the reference quantizers reproduce ggml's searches
// operation for operation, so model files they write are ggml's.
TEST(KQuants, QuantizerWritesGgmlBytes) {
  const struct {
    Format f;
    const char *bytes;
  } cases[] = {
      {Format::Q2_K, "6634b60073d550509495c6c68f54b6f825253a080535342524210a062"
                     "c261f0523013023311021"
                     "123210323220201121054600c1440c078a76cb988a978a4615554edba"
                     "78855878a4e9d83602b3a"
                     "560687323631"},
      {Format::Q3_K,
       "42d644c3436657f797f7e0f295f65043d4e06504f4914060e431c494a5a181c437173e0"
       "1043729"
       "00051c1e0505062014000321002322333122321122003120135b0811c2cd9c5f4409d78"
       "4897e04"
       "cc8a4c5f18e927beeca37bfd11a7e5877aee7599888005a993532959a96afa2b"},
      {Format::Q4_K, "4b2105295857d68098e9b9d3f729eff246579981546621645004994be"
                     "058ff457b76717b767175"
                     "787771797873727575090b0e05050e0c0a0a0b06040a0a080609000e0"
                     "a0e0508060f070c0e0a09"
                     "060b4639120563e06c99499d91ca6b98683568fabf4da1745f7acad60"
                     "d22aea94b5c217311b363"
                     "3120917fc1a4a2858351436352e294713391a25183823424256302"},
      {Format::Q5_K, "351d01295756d54097e9f9d3d7382fff04140782002414b4d4b4a3b19"
                     "6b517000530b495a40094"
                     "9134a09505343410148cbe2301a8cd52d9b0093398e0a1ff9ae6ede2e"
                     "6ebe2eae1eee1e3e1e6e4"
                     "e9ea03070f0a0a0e0a0506070d080604000d04000d040d0b020e0f0e0"
                     "90d04020c088b712319d5"
                     "d0e831924a4293d640d079dff38e8a52e7adf4a4cc0b446b5185c842f"
                     "72396e67240430fb36964"
                     "2b17c387d6b4f54803775374b3271588495bd704"},
      {Format::Q6_K, "cb57a1594089c70f3a5eb10b2af431bde105dbf1d80cbb5b026d78ddf"
                     "3c82d4c0c07090d080502"
                     "02060c060a030900090000000000000000000000000000000058f4470"
                     "40c5083430546d539aef2"
                     "43f3e0c781294b9042f576b6a827e80c84ee6fed0351bada6ab51298f"
                     "7e269368afe59ae0e7009"
                     "2c541e92b8d0087b6a5ff7192935060a392e292a2d050822191009100"
                     "12210211211103112202012"
                     "121121215220e1642c27aa86eb98ae969a661196ad2854bbd77465bd5"
                     "e60d3c8c991e4d3e4e200"
                     "15230c0c1de31f2080e923d80018"},
  };
  std::vector<float> x = ggmlTestWeights();
  for (const auto &c : cases)
    EXPECT_EQ(hex(quantized(c.f, x)), c.bytes) << formatInfo(c.f).name;
}

// 64 super-blocks from the same kind of generator, each at its own scale
// (2^-6 .. 2^6) and most in one of the shapes that take the quantizers'
// special paths: all zero, constant, all positive, all negative, one outlier,
// one zero sub-block, mostly zeros.
std::vector<float> ggmlTestRows() {
  const int nb = 64;
  std::vector<float> x(256 * nb);
  uint32_t state = 88172645u;
  auto uniform = [&state] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<float>(static_cast<int32_t>(state) >> 8) * 0x1p-23f;
  };
  for (int b = 0; b < nb; ++b) {
    float *xb = &x[256 * b];
    float scale = std::ldexp(1.0f, b % 13 - 6);
    for (int i = 0; i < 256; ++i)
      xb[i] = scale * (uniform() + uniform() + uniform());
    switch (b % 8) {
    case 1:
      std::fill(xb, xb + 256, 0.0f);
      break;
    case 2:
      std::fill(xb, xb + 256, b % 16 == 2 ? 0.3f : -0.3f);
      break;
    case 3:
      for (int i = 0; i < 256; ++i)
        xb[i] = std::fabs(xb[i]);
      break;
    case 4:
      for (int i = 0; i < 256; ++i)
        xb[i] = -std::fabs(xb[i]);
      break;
    case 5:
      xb[b % 256] = b % 16 == 5 ? 100.0f : -100.0f;
      break;
    case 6:
      std::fill(xb + 16 * (b % 16), xb + 16 * (b % 16) + 16, 0.0f);
      break;
    case 7:
      for (int i = 0; i < 256; ++i)
        xb[i] = i % 5 == 0 ? xb[i] : 0.0f;
      break;
    }
  }
  return x;
}

uint64_t fnv1a(std::span<const uint8_t> bytes) {
  uint64_t h = 14695981039346656037u;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 1099511628211u;
  }
  return h;
}

// The same for ggmlTestRows(), by the FNV-1a hash of ggml's bytes (the
// bytes themselves would fill pages).
TEST(KQuants, QuantizerWritesGgmlBytesOnManyBlocks) {
  const struct {
    Format f;
    uint64_t fnv1a;
  } cases[] = {{Format::Q2_K, 0xb3f265bba3a6c50eu},
               {Format::Q3_K, 0x11e45455661faa85u},
               {Format::Q4_K, 0x2ab27872f9bcb0feu},
               {Format::Q5_K, 0xc4b13e0e67fe9417u},
               {Format::Q6_K, 0x9a10555d87955eb5u}};
  std::vector<float> x = ggmlTestRows();
  for (const auto &c : cases)
    EXPECT_EQ(fnv1a(quantized(c.f, x)), c.fnv1a) << formatInfo(c.f).name;
}

// Round trip of 4096 Gaussian and 4096 Student-t (nu = 3) weights: the SQNR
// each reference quantizer reaches (measured, then floored about 0.25 dB
// lower), and the order of the formats by bits per weight.
TEST(KQuants, RoundTripError) {
  struct Case {
    Format f;
    double gaussianDb, studentTDb;
  };
  const Case cases[] = {
      {Format::Q2_K, 10.4, 8.55},  // measured: 10.62, 8.80
      {Format::Q3_K, 16.3, 13.95}, // 16.53, 14.21
      {Format::Q4_K, 22.65, 20.0}, // 22.90, 20.28
      {Format::Q5_K, 28.65, 26.0}, // 28.92, 26.25
      {Format::Q6_K, 34.85, 31.4}, // 35.11, 31.66
  };
  std::vector<float> g = gaussian(4096, 11), t = studentT(4096, 11);
  double previousG = 0, previousT = 0;
  for (const Case &c : cases) {
    double sg = sqnrDb(g, dequantized(c.f, quantized(c.f, g), g.size()));
    double st = sqnrDb(t, dequantized(c.f, quantized(c.f, t), t.size()));
    EXPECT_GT(sg, c.gaussianDb) << formatInfo(c.f).name;
    EXPECT_GT(st, c.studentTDb) << formatInfo(c.f).name;
    EXPECT_GT(sg, previousG)
        << formatInfo(c.f).name << " below the format before it";
    EXPECT_GT(st, previousT)
        << formatInfo(c.f).name << " below the format before it";
    previousG = sg;
    previousT = st;
  }
}

TEST(KQuants, ZeroBlocksStayZero) {
  std::vector<float> zeros(512, 0.0f);
  std::vector<uint8_t> a = activation(Format::Q8_K, gaussian(512, 5));
  for (Format f : kKQuants) {
    std::vector<uint8_t> q = quantized(f, zeros);
    std::vector<float> y = dequantized(f, q, zeros.size());
    EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return v == 0; }))
        << formatInfo(f).name;
    absl::StatusOr<float> d = dot(f, q, a);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(*d, 0.0f) << formatInfo(f).name;
  }
}

// A constant block comes back as that constant up to the rounding of the
// super-block scale to fp16: at most half an ulp, 2^-11 relative (the float
// steps before it add ~2^-23). The constants are large enough that every d is
// an fp16 normal: below about 0.25, Q6_K's d = c / 4096 is subnormal and keeps
// fewer bits.
TEST(KQuants, ConstantBlocks) {
  for (float c : {0.75f, -3.3f, 200.0f}) {
    std::vector<float> x(256, c);
    for (Format f : kKQuants) {
      std::vector<float> y = dequantized(f, quantized(f, x), x.size());
      for (int i = 0; i < 256; ++i)
        ASSERT_NEAR(y[i], c, std::fabs(c) * 0x1p-11f)
            << formatInfo(f).name << " c=" << c;
    }
  }
}

// One huge weight among small ones (sigma 0.01). It is the top code of the
// sub-block with the largest scale, which the sub-scale quantization keeps at
// full range, so it comes back within the fp16 rounding of d (50 * 2^-11 ~
// 0.024) plus the rounding of a min below 0.05 to 4 or 6 bits. Every value
// stays finite, and the next super-block's bytes are those it gets alone.
TEST(KQuants, OutlierStaysInItsBlock) {
  std::vector<float> x = gaussian(512, 21, 0.01f);
  x[37] = 50.0f;
  std::vector<float> second(x.begin() + 256, x.end());
  for (Format f : kKQuants) {
    const FormatInfo &info = formatInfo(f);
    std::vector<uint8_t> q = quantized(f, x);
    std::vector<float> y = dequantized(f, q, x.size());
    EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) {
      return std::isfinite(v);
    })) << info.name;
    EXPECT_NEAR(y[37], 50.0f, 0.03f) << info.name;
    std::vector<uint8_t> alone = quantized(f, second);
    EXPECT_TRUE(
        std::equal(alone.begin(), alone.end(), q.begin() + info.blockBytes))
        << info.name;
  }
}

// --- Dot product ---

// Where the mins live in the asymmetric formats: the fp16 dmin, and the bytes
// holding the codes (Q5_K: qh and qs).
struct MinsLayout {
  Format f;
  int dmin, codesBegin, codesEnd;
};
constexpr MinsLayout kMinsLayouts[] = {{Format::Q2_K, 82, 16, 80},
                                       {Format::Q4_K, 2, 16, 144},
                                       {Format::Q5_K, 2, 16, 176}};

// The reference dot against the exact dot of the decoded rows.
//
// The bound of exactDot() does not hold here: the K-quant dot computes, per
// super-block, X = (D A) * isum and Y = (M A) * msum (D, M the fp16 d and dmin,
// A the Q8_K scale; isum and msum the integer sums) and subtracts them, so its
// rounding scales with |X| + |Y|, which the mins can make far larger than
// sum |w a| when the two terms cancel. Writing u = 2^-24 and
// gamma_k = k u / (1 - k u):
//  - X has three roundings (D*A; isum to float, inexact past 2^24; the
//    product) and Y three; the subtraction one more. With X, Y the exact
//    values, |P_b - (X - Y)| <= gamma_4 (|X| + |Y|) for the block's result
//    P_b.
//  - The float sum of nb values P_b is off by at most gamma_nb sum |P_b|,
//    and |P_b| <= (1 + gamma_4)(|X| + |Y|).
//  - The decoded weight is (D sc q - M m) rounded once (both products are
//    exact), the decoded activation A a rounded once, so the exact dot of the
//    decoded rows is off the exact sum of X - Y by at most gamma_2 times
//    G = sum_i (|D sc q_i| + |M m_i|) |A a_i|; and sum_b (|X| + |Y|) <= G.
// So |dot - exact| <= (gamma_{nb+4} + gamma_2) G <= gamma_{nb+6} G. The test
// forms G with the decoded activations (|A a_i| <= |a_i decoded| / (1 - u),
// one more gamma) and gamma_{nb+7} <= (nb + 8) u while (nb + 7)(nb + 8) u <= 1:
//   |dot - exact| <= (nb + 8) 2^-24 G,
// which also absorbs the double rounding of `exact` itself (~n 2^-53 G). For
// Q3_K and Q6_K, M = 0 and G = sum |w a|.
TEST(KQuants, DotMatchesDecodedRows) {
  for (Format f : kKQuants) {
    const FormatInfo &info = formatInfo(f);
    const MinsLayout *mins = nullptr;
    for (const MinsLayout &m : kMinsLayouts)
      if (m.f == f)
        mins = &m;
    for (int64_t n : {256, 512, 4096}) {
      // Weights mostly below zero, so that the mins and the scales cancel.
      std::vector<float> x = gaussian(n, 100 + n),
                         w = gaussian(n, 200 + n, 0.02f);
      for (float &v : w)
        v -= 0.03f;
      std::vector<uint8_t> wq = quantized(f, w);
      std::vector<uint8_t> aq = activation(Format::Q8_K, x);
      absl::StatusOr<float> got = dot(f, wq, aq);
      ASSERT_TRUE(got.ok()) << got.status();

      const int64_t nb = n / 256;
      std::vector<float> wd = dequantized(f, wq, n),
                         ad = dequantized(Format::Q8_K, aq, n);
      // D sc q and M m separately: with dmin set to 0 a block decodes to
      // D sc q exactly, with every code set to 0 to -M m.
      std::vector<float> scalePart = wd, minPart(n, 0.0f);
      if (mins) {
        std::vector<uint8_t> noDmin = wq, noCodes = wq;
        for (int64_t b = 0; b < nb; ++b) {
          uint8_t *block = &noDmin[b * info.blockBytes];
          std::memset(block + mins->dmin, 0, 2);
          block = &noCodes[b * info.blockBytes];
          std::memset(block + mins->codesBegin, 0,
                      mins->codesEnd - mins->codesBegin);
        }
        scalePart = dequantized(f, noDmin, n);
        minPart = dequantized(f, noCodes, n);
      }
      double g = 0;
      for (int64_t i = 0; i < n; ++i)
        g += (std::fabs(double(scalePart[i])) + std::fabs(double(minPart[i]))) *
             std::fabs(ad[i]);
      double tolerance = (nb + 8) * std::ldexp(1.0, -24) * g;
      EXPECT_NEAR(*got, exactDot(wd, ad, nb).exact, tolerance)
          << info.name << " n=" << n;
    }
  }
}

} // namespace
} // namespace kf
