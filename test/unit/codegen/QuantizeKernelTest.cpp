// The compiled activation quantizer writes the bytes the runtime's reference
// packer (kf::pack_activations) writes, on targets converting to fp16 in
// hardware (F16C) and in integer arithmetic (x86-64-v2), for ordinary data
// and for the edges of its arithmetic: all-zero blocks, fp16 scales that are
// subnormal or overflow, and quants exactly halfway between two integers;
// and the float kernels' BF16 and F32 activations.
#include "TestTarget.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/runtime/packed_layout.h"
#include "kf/runtime/packing.h"

#include "gtest/gtest.h"

#include <cmath>
#include <iterator>
#include <random>

namespace kf::codegen {
namespace {

// m columns of k floats, ldx apart, each block of 32 drawn differently.
std::vector<float> activations(int64_t m, int64_t k, int64_t ldx) {
  std::mt19937 rng(3);
  std::vector<float> x(m * ldx, 0.0f);
  const float scales[] = {1.0f, 1e-4f, 3e-6f, 1e10f, 0.0f, 1.0f, 250.0f};
  for (int64_t j = 0; j < m; ++j)
    for (int64_t b = 0; b < k / 32; ++b) {
      float *block = x.data() + j * ldx + b * 32;
      int kind = static_cast<int>((j * 7 + b) % 8);
      if (kind == 7) {
        // amax 127 gives id = 1: the quants are the values, with ties.
        const float ties[] = {127.0f, 2.5f, -3.5f, 0.5f, -0.5f, 1.5f, -126.5f};
        for (int i = 0; i < 32; ++i)
          block[i] = ties[i % 7];
        continue;
      }
      std::normal_distribution<float> dist(0.0f, scales[kind]);
      for (int i = 0; i < 32; ++i)
        block[i] = dist(rng);
    }
  return x;
}

void checkQuantizer(llvm::StringRef targetName) {
  SCOPED_TRACE(targetName.str());
  const int64_t k = 96, ldx = 104, maxM = 9;
  llvm::Expected<JitQuantizer> quantizer =
      jitQuantizer(QuantizeKernelSpec{k}, testTarget(targetName));
  ASSERT_TRUE(static_cast<bool>(quantizer))
      << llvm::toString(quantizer.takeError());
  std::vector<float> x = activations(maxM, k, ldx);
  const int64_t column = *packedActivationBytes(k);
  for (int64_t m : {int64_t(1), int64_t(2), maxM}) {
    std::vector<uint8_t> want(m * column), got(m * column, 0xa5);
    ASSERT_TRUE(packActivations(x, m, k, ldx, want).ok());
    quantizer->fn(x.data(), ldx, got.data(), m);
    for (int64_t i = 0; i < m * column; ++i)
      ASSERT_EQ(got[i], want[i])
          << "m = " << m << ", byte " << i << " (column " << i / column
          << ", block " << i % column / kActivationBlockBytes << ", offset "
          << i % kActivationBlockBytes << ")";
  }
}

TEST(QuantizeKernel, EqualsTheReferencePackerWithHardwareHalf) {
  checkQuantizer("x86-64-v3");
}

TEST(QuantizeKernel, EqualsTheReferencePackerWithIntegerHalf) {
  checkQuantizer("x86-64-v2");
}

// Q8_K: blocks of 256 of the same kinds, plus a tie of magnitudes between a
// positive and a negative extreme (the first decides the scale's sign).
void checkQ8KQuantizer(llvm::StringRef targetName) {
  SCOPED_TRACE(targetName.str());
  const int64_t k = 768, ldx = 776, maxM = 9;
  llvm::Expected<JitQuantizer> quantizer =
      jitQuantizer(QuantizeKernelSpec{k, Format::Q8_K}, testTarget(targetName));
  ASSERT_TRUE(static_cast<bool>(quantizer))
      << llvm::toString(quantizer.takeError());
  std::vector<float> x = activations(maxM, k, ldx);
  std::fill_n(x.begin() + 256, 256, 0.0f); // an all-zero super-block
  x[ldx + 5] = 300.0f;
  x[ldx + 100] = -300.0f;
  x[2 * ldx + 300] = -301.0f;
  x[2 * ldx + 400] = 301.0f;
  const int64_t column = *packedActivationBytes(Format::Q8_K, k);
  for (int64_t m : {int64_t(1), int64_t(3), maxM}) {
    std::vector<uint8_t> want(m * column), got(m * column, 0xa5);
    ASSERT_TRUE(packActivations(Format::Q8_K, x, m, k, ldx, want).ok());
    quantizer->fn(x.data(), ldx, got.data(), m);
    for (int64_t i = 0; i < m * column; ++i)
      ASSERT_EQ(got[i], want[i])
          << "m = " << m << ", byte " << i << " (column " << i / column
          << ", block " << i % column / 292 << ", offset " << i % 292 << ")";
  }
}

TEST(QuantizeKernel, Q8KEqualsTheReferencePacker) {
  checkQ8KQuantizer("x86-64-v3");
  checkQ8KQuantizer("x86-64-v2");
}

// BF16 and F32 (the float kernels' activations): the elements rounded to
// bf16 or copied, the column's last block padded with zeros; K of 100 and 37
// leaves a partial last block (and an odd bf16 element), K = 64 none. The
// data hits bf16's edges: ties (to even, both ways), values that round up to
// the next binade or to infinity, infinities, NaNs (kept quiet), signed
// zeros and subnormals.
TEST(QuantizeKernel, FloatActivationsEqualTheReferencePacker) {
  const float edges[] = {
      1.0f + 0x1p-8f, 1.0f + 0x3p-8f, -(1.0f + 0x1p-8f), 0x1.ff8p127f,
      0x1.ffp0f,      INFINITY,       -INFINITY,         NAN,
      -0.0f,          0x1p-130f,      -0x1.0101p-140f,   3.0e38f};
  for (llvm::StringRef target : {"x86-64-v3", "x86-64-v2"})
    for (Format format : {Format::BF16, Format::F32})
      for (int64_t k : {int64_t(100), int64_t(37), int64_t(64)}) {
        SCOPED_TRACE(target.str() + " " + std::string(formatInfo(format).name) +
                     " k " + std::to_string(k));
        const int64_t ldx = k + 3, maxM = 5;
        llvm::Expected<JitQuantizer> quantizer =
            jitQuantizer(QuantizeKernelSpec{k, format}, testTarget(target));
        ASSERT_TRUE(static_cast<bool>(quantizer))
            << llvm::toString(quantizer.takeError());
        std::mt19937 rng(11);
        std::normal_distribution<float> dist(0.0f, 3.0f);
        std::vector<float> x(maxM * ldx);
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = i % 5 == 0 ? edges[i / 5 % std::size(edges)] : dist(rng);
        const int64_t column = *packedActivationBytes(format, k);
        EXPECT_EQ(column % 64, 0);
        for (int64_t m : {int64_t(1), maxM}) {
          std::vector<uint8_t> want(m * column), got(m * column, 0xa5);
          ASSERT_TRUE(packActivations(format, x, m, k, ldx, want).ok());
          quantizer->fn(x.data(), ldx, got.data(), m);
          for (int64_t i = 0; i < m * column; ++i)
            ASSERT_EQ(got[i], want[i]) << "m = " << m << ", byte " << i
                                       << " (column " << i / column << ")";
        }
      }
}

// A NaN among a block's values does not decide its scale: the reference's
// max of the magnitudes skips it (std::max(amax, NaN) keeps amax), and so
// must the compiled max, which compares the magnitudes' bits as integers
// (a NaN's are the largest). The NaN's own quant is whatever converting a
// NaN gives, so only the scales and the other quants are compared; a block
// of NaNs and zeros has scale 0.
TEST(QuantizeKernel, NansDoNotDecideTheScale) {
  for (Format format : {Format::Q8_0, Format::Q8_K}) {
    SCOPED_TRACE(formatInfo(format).name);
    const ActivationLayout act = activationLayout(format);
    const int64_t k = 2 * act.blockElems;
    llvm::Expected<JitQuantizer> quantizer =
        jitQuantizer(QuantizeKernelSpec{k, format}, testTarget("x86-64-v3"));
    ASSERT_TRUE(static_cast<bool>(quantizer))
        << llvm::toString(quantizer.takeError());
    std::vector<float> x = activations(1, k, k);
    std::fill_n(x.begin() + act.blockElems, act.blockElems, 0.0f);
    const int64_t nans[] = {3, act.blockElems - 1, act.blockElems + 7};
    for (int64_t i : nans)
      x[i] = i % 2 == 0 ? NAN : -NAN;
    const int64_t column = *packedActivationBytes(format, k);
    std::vector<uint8_t> want(column), got(column, 0xa5);
    ASSERT_TRUE(packActivations(format, x, 1, k, k, want).ok());
    quantizer->fn(x.data(), k, got.data(), 1);
    for (int64_t blk = 0; blk < 2; ++blk) {
      const int64_t base = blk * act.blockBytes;
      for (int64_t i = 0; i < 4; ++i)
        EXPECT_EQ(got[base + act.scaleOffset + i],
                  want[base + act.scaleOffset + i])
            << "block " << blk << ", scale byte " << i;
      for (int64_t i = 0; i < act.blockElems; ++i) {
        if (std::isnan(x[blk * act.blockElems + i]))
          continue;
        EXPECT_EQ(got[base + act.quantsOffset + i],
                  want[base + act.quantsOffset + i])
            << "block " << blk << ", quant " << i;
      }
    }
  }
}

TEST(QuantizeKernel, RefusesBadK) {
  llvm::Expected<JitQuantizer> q8k = jitQuantizer(
      QuantizeKernelSpec{512 + 32, Format::Q8_K}, testTarget("x86-64-v2"));
  ASSERT_FALSE(static_cast<bool>(q8k));
  EXPECT_EQ(llvm::toString(q8k.takeError()),
            "q8_k activation quantizer [K = 544]: expected K a positive "
            "multiple of 256");
  llvm::Expected<JitQuantizer> quantizer =
      jitQuantizer(QuantizeKernelSpec{40}, testTarget("x86-64-v2"));
  ASSERT_FALSE(static_cast<bool>(quantizer));
  EXPECT_EQ(llvm::toString(quantizer.takeError()),
            "q8_0 activation quantizer [K = 40]: expected K a positive "
            "multiple of 32");
}

} // namespace
} // namespace kf::codegen
