// oneDNN's int8 (u8 x s8 -> s32) and f32 matmuls, the reference figures of
// every kf-bench run, checked against plain loops on small odd shapes.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

#include "gtest/gtest.h"

namespace {

using Dt = dnnl::memory::data_type;
using Tag = dnnl::memory::format_tag;

template <typename A, typename B, typename C>
void runMatmul(int64_t m, int64_t k, int64_t n, Dt aType, Dt bType, Dt cType,
               std::vector<A> &a, std::vector<B> &b, std::vector<C> &c) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc aMd({m, k}, aType, Tag::ab), bMd({k, n}, bType, Tag::ab),
      cMd({m, n}, cType, Tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(aMd, bMd, cMd), engine);
  dnnl::memory aMem(aMd, engine, a.data()), bMem(bMd, engine, b.data()),
      cMem(cMd, engine, c.data());
  dnnl::matmul(pd).execute(
      stream,
      {{DNNL_ARG_SRC, aMem}, {DNNL_ARG_WEIGHTS, bMem}, {DNNL_ARG_DST, cMem}});
  stream.wait();
}

// Activations below 128, as kf-bench's are: without VNNI (AVX2, AVX-512
// without VNNI) oneDNN's u8 x s8 path is vpmaddubsw, which adds two products
// in 16 bits with saturation: two of up to 255 * 128 overflow it, and oneDNN
// leaves that headroom to its callers. Below 128 a pair stays within
// 2 * 127 * 128 = 32512, so the product must be exact on every ISA.
TEST(OneDnn, Int8MatmulIsExact) {
  const int64_t m = 5, k = 67, n = 13;
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> u8(0, 127), s8(-128, 127);
  std::vector<uint8_t> a(m * k);
  std::vector<int8_t> b(k * n);
  for (auto &v : a)
    v = static_cast<uint8_t>(u8(rng));
  for (auto &v : b)
    v = static_cast<int8_t>(s8(rng));
  std::vector<int32_t> c(m * n);
  runMatmul(m, k, n, Dt::u8, Dt::s8, Dt::s32, a, b, c);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int32_t ref = 0;
      for (int64_t x = 0; x < k; ++x)
        ref += int32_t(a[i * k + x]) * int32_t(b[x * n + j]);
      ASSERT_EQ(c[i * n + j], ref) << i << "," << j;
    }
}

TEST(OneDnn, F32MatmulWithinRoundoff) {
  const int64_t m = 3, k = 129, n = 7;
  std::mt19937 rng(2);
  std::normal_distribution<float> dist;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (auto &v : a)
    v = dist(rng);
  for (auto &v : b)
    v = dist(rng);
  runMatmul(m, k, n, Dt::f32, Dt::f32, Dt::f32, a, b, c);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t x = 0; x < k; ++x) {
        ref += double(a[i * k + x]) * b[x * n + j];
        mag += std::fabs(double(a[i * k + x]) * b[x * n + j]);
      }
      // Any summation order of k fp32 products is within k * 2^-24 * sum|a*b|.
      ASSERT_NEAR(c[i * n + j], ref, k * std::ldexp(1.0, -24) * mag)
          << i << "," << j;
    }
}

} // namespace
