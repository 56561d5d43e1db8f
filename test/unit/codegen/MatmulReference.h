// The data a matmul kernel test runs on and the results it must give: weights
// drawn, quantized by the reference quantizer and packed to the kernel's
// layout; kMaxM activation columns (packed, or the floats for a kernel that
// packs them); and kf::dot of every weight row
// with every column. Shared by the JIT tests (MatmulKernelTest.cpp,
// SharedLibraryTest.cpp) and the AArch64 tests run under QEMU
// (AArch64CrossTest.cpp).
#ifndef KF_TEST_UNIT_CODEGEN_MATMULREFERENCE_H
#define KF_TEST_UNIT_CODEGEN_MATMULREFERENCE_H

#include "kf/Codegen/MatmulKernel.h"

#include <cstdint>
#include <vector>

namespace kf::codegen {

struct MatmulReference {
  static constexpr int64_t kMaxM = 17;

  std::vector<uint8_t> packedW; ///< spec.getWeightLayout()
  /// What the kernel's x points to: kMaxM packed activation columns, or for
  /// a kernel that quantizes its activations (fuseQuantize) the kMaxM
  /// columns of K floats, K apart, that the packed ones are made from.
  std::vector<uint8_t> kernelX;
  std::vector<float> want; ///< [kMaxM][n], kf::dot
  /// [kMaxM][n]: how far the kernel's result may be from `want`, as the
  /// format's Tolerance (KernelCases.h) says: 0 (bit for bit) where Exact,
  /// floatKernelTolerance where FloatBound.
  std::vector<float> tolerance;
};

/// The largest |y - kf::dot| a float-family kernel (BF16, F32) may give for
/// a row and column whose products have absolute sum `absSum` (Σ|w_k x_k| of
/// the decoded operands) and whose reference result is `ref` (kf::dot,
/// before any bf16 rounding). Derived in MatmulReference.cpp.
double floatKernelTolerance(const MatmulKernelSpec &spec, double absSum,
                            double ref);

/// n floats drawn from N(0, sigma^2), the same for the same seed.
std::vector<float> gaussian(size_t n, uint32_t seed, float sigma);

/// Fills `ref` for `spec`, with gtest assertions (check HasFatalFailure()).
/// Some weight rows are heavy, so that blocks hit the extreme codes, and some
/// Q8_0 weights are -128; one
/// column is all zero; and some columns copy weight rows: their block dots
/// are near the largest integers with many significant bits, where a float
/// operation done in another order would round differently (random data
/// rarely gets there). For formats of Tolerance::FloatBound (BF16, F32) the
/// tolerance of each result is floatKernelTolerance's.
void buildMatmulReference(const MatmulKernelSpec &spec, uint32_t seed,
                          MatmulReference &ref);

} // namespace kf::codegen

#endif // KF_TEST_UNIT_CODEGEN_MATMULREFERENCE_H
