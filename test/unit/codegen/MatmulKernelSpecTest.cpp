// What a matmul kernel spec may be, checked before any IR exists: the ISA's
// target features, formats and rows, the code book layout's lookup, the
// weight layout each ISA reads, and the refusals of bad specs, each with its
// one-line error.
#include "HostIsa.h"
#include "TestTarget.h"
#include "kf/Codegen/KernelCompiler.h"

#include "gtest/gtest.h"

namespace kf::codegen {
namespace {

using target::TargetInfo;

std::string errorOf(llvm::Error err) {
  return err ? llvm::toString(std::move(err)) : "";
}

// A target without the ISA's features is refused before any IR exists, with
// one line naming the kernel, the feature and the target.
TEST(MatmulKernel, RefusesMissingFeatures) {
  MatmulKernelSpec vnni{Format::Q8_0, KernelIsa::Avx512Vnni, 16, 64, 32, 8};
  EXPECT_EQ(errorOf(emitObject(vnni, testTarget("x86-64-v4"), "/dev/null")),
            "matmul kernel q8_0/avx512vnni r16 c8 [32 x 64]: avx512vnni needs "
            "target feature 'avx512vnni', which target 'x86-64-v4' lacks");
  llvm::Expected<std::string> assembly =
      emitAssembly(vnni, testTarget("x86-64-v3"));
  ASSERT_FALSE(static_cast<bool>(assembly));
  EXPECT_EQ(errorOf(assembly.takeError()),
            "matmul kernel q8_0/avx512vnni r16 c8 [32 x 64]: avx512vnni needs "
            "target feature 'avx512f', which target 'x86-64-v3' lacks");

  MatmulKernelSpec avx2{Format::Q4_0, KernelIsa::Avx2, 8, 64, 32, 8};
  EXPECT_EQ(errorOf(emitObject(avx2, testTarget("neoverse-v1"), "/dev/null")),
            "matmul kernel q4_0/avx2 r8 c8 [32 x 64]: avx2 is an x86-64 ISA, "
            "target 'neoverse-v1' is aarch64");
  avx2.rows = 16;
  EXPECT_EQ(errorOf(emitObject(avx2, testTarget("x86-64-v3"), "/dev/null")),
            "matmul kernel q4_0/avx2 r16 c8 [32 x 64]: avx2 holds 8 rows per "
            "vector, expected rows = 8");

  MatmulKernelSpec neon{Format::Q8_0, KernelIsa::NeonDotprod, 4, 64, 32, 8};
  EXPECT_EQ(errorOf(emitObject(neon, testTarget("znver5"), "/dev/null")),
            "matmul kernel q8_0/neon_dotprod r4 c8 [32 x 64]: neon_dotprod is "
            "an aarch64 ISA, target 'znver5' is x86_64");
  TargetInfo armv8 = testTarget("neoverse-v1");
  armv8.name = "armv8-a";
  armv8.cpu = "generic";
  armv8.features.reset(static_cast<size_t>(target::Feature::DotProd));
  EXPECT_EQ(errorOf(emitObject(neon, armv8, "/dev/null")),
            "matmul kernel q8_0/neon_dotprod r4 c8 [32 x 64]: neon_dotprod "
            "needs target feature 'dotprod', which target 'armv8-a' lacks");
  neon.rows = 16;
  EXPECT_EQ(errorOf(verifyMatmulKernel(neon, testTarget("neoverse-v1"))),
            "matmul kernel q8_0/neon_dotprod r16 c8 [32 x 64]: neon_dotprod "
            "holds 4 rows per vector, expected rows = 4");

  // vdpbf16ps needs avx512bf16, which x86-64-v4 (and skylake-avx512) lacks:
  // those get the avx512 kernel, which widens bf16 by shifts.
  MatmulKernelSpec bf16{Format::BF16, KernelIsa::Avx512Bf16, 16, 64, 32, 8};
  EXPECT_EQ(errorOf(emitObject(bf16, testTarget("x86-64-v4"), "/dev/null")),
            "matmul kernel bf16/avx512bf16 r16 c8 [32 x 64]: avx512bf16 needs "
            "target feature 'avx512bf16', which target 'x86-64-v4' lacks");
  bf16.isa = KernelIsa::Avx512;
  EXPECT_EQ(errorOf(verifyMatmulKernel(bf16, testTarget("x86-64-v4"))), "");
  MatmulKernelSpec bfdot{Format::BF16, KernelIsa::NeonBf16, 4, 64, 32, 8};
  EXPECT_EQ(errorOf(verifyMatmulKernel(bfdot, testTarget("apple-m1"))),
            "matmul kernel bf16/neon_bf16 r4 c8 [32 x 64]: neon_bf16 needs "
            "target feature 'bf16', which target 'apple-m1' lacks");
  EXPECT_EQ(errorOf(verifyMatmulKernel(bfdot, testTarget("neoverse-v1"))), "");
}

// IQ2_XXS's code book layout is read by the AVX-512 VNNI kernels of targets
// with VBMI, GFNI and BMI2 alone, and chosen by default there alone.
TEST(MatmulKernel, CodeBookLayoutNeedsItsLookup) {
  MatmulKernelSpec spec{Format::IQ2_XXS, KernelIsa::Avx512Vnni, 16, 256, 32, 8};
  spec.coding = WeightCoding::CodeBook;
  const TargetInfo znver5 = testTarget("znver5");
  EXPECT_EQ(errorOf(verifyMatmulKernel(spec, znver5)), "");
  EXPECT_EQ(getDefaultWeightCoding(Format::IQ2_XXS, spec.isa, znver5),
            WeightCoding::CodeBook);
  TargetInfo noGfni = znver5;
  noGfni.features.reset(static_cast<size_t>(target::Feature::GFNI));
  EXPECT_EQ(errorOf(verifyMatmulKernel(spec, noGfni)),
            "matmul kernel iq2_xxs codebook/avx512vnni r16 c8 [32 x 256]: a "
            "code book layout needs avx512vbmi, gfni and bmi2, of which "
            "target 'znver5' lacks gfni");
  EXPECT_EQ(getDefaultWeightCoding(Format::IQ2_XXS, spec.isa, noGfni),
            WeightCoding::File);
  EXPECT_EQ(getDefaultWeightCoding(Format::IQ2_XXS, KernelIsa::Avx2, znver5),
            WeightCoding::File);
  MatmulKernelSpec avx2 = spec;
  avx2.isa = KernelIsa::Avx2;
  avx2.rows = 8;
  EXPECT_EQ(errorOf(verifyMatmulKernel(avx2, znver5)),
            "matmul kernel iq2_xxs codebook/avx2 r8 c8 [32 x 256]: a code "
            "book layout needs avx512vnni kernels, not avx2 ones");
  spec.format = Format::IQ1_S;
  EXPECT_EQ(errorOf(verifyMatmulKernel(spec, znver5)),
            "matmul kernel iq1_s codebook/avx512vnni r16 c8 [32 x 256]: a code "
            "book layout is IQ2_XXS's, expected iq2_xxs weights");
}

// Each ISA builds the kernels of its family only.
TEST(MatmulKernel, RefusesFormatsTheIsaHasNoKernelsFor) {
  auto error = [](Format format, KernelIsa isa, int64_t rows,
                  llvm::StringRef target) {
    return errorOf(
        verifyMatmulKernel({format, isa, rows, 64, 32, 8}, testTarget(target)));
  };
  EXPECT_EQ(error(Format::BF16, KernelIsa::Avx512Vnni, 16, "znver5"),
            "matmul kernel bf16/avx512vnni r16 c8 [32 x 64]: avx512vnni has "
            "no kernels for bf16 weights");
  EXPECT_EQ(error(Format::F32, KernelIsa::Avx512Bf16, 16, "znver5"),
            "matmul kernel f32/avx512bf16 r16 c8 [32 x 64]: avx512bf16 has "
            "no kernels for f32 weights");
  EXPECT_EQ(error(Format::Q8_0, KernelIsa::Neon, 4, "neoverse-v1"),
            "matmul kernel q8_0/neon r4 c8 [32 x 64]: neon has no kernels "
            "for q8_0 weights");
  for (Format format : {Format::BF16, Format::F32}) {
    EXPECT_EQ(error(format, KernelIsa::Avx512, 16, "znver5"), "");
    EXPECT_EQ(error(format, KernelIsa::Avx2, 8, "x86-64-v3"), "");
    EXPECT_EQ(error(format, KernelIsa::Neon, 4, "apple-m1"), "");
    EXPECT_EQ(error(format, KernelIsa::Scalar, 1, "x86-64-v2"), "");
  }
  // Any K > 0: the packed rows end in a zero-padded block.
  EXPECT_EQ(
      errorOf(verifyMatmulKernel({Format::F32, KernelIsa::Scalar, 4, 7, 8, 8},
                                 testTarget("x86-64-v2"))),
      "");
}

// sdot multiplies signed bytes, so NEON kernels read the signed layouts; the
// others, and the portable kernel on any target, the unsigned ones.
TEST(MatmulKernel, WeightLayoutFollowsTheIsa) {
  auto layout = [](Format format, KernelIsa isa, int64_t rows) {
    return layoutName(
        MatmulKernelSpec{format, isa, rows, 64, 8, 8}.getWeightLayout());
  };
  EXPECT_EQ(layout(Format::Q8_0, KernelIsa::NeonDotprod, 4), "q8_0_r4s");
  EXPECT_EQ(layout(Format::Q4_0, KernelIsa::NeonDotprod, 4), "q4_0_r4");
  EXPECT_EQ(layout(Format::Q8_0, KernelIsa::Scalar, 4), "q8_0_r4");
  EXPECT_EQ(layout(Format::Q8_0, KernelIsa::Avx512Vnni, 16), "q8_0_r16");
  EXPECT_EQ(layout(Format::BF16, KernelIsa::Avx512Bf16, 16), "bf16_r16");
  EXPECT_EQ(layout(Format::F32, KernelIsa::Neon, 4), "f32_r4");
  EXPECT_EQ(lookupIsa("neon_dotprod"), KernelIsa::NeonDotprod);
  EXPECT_EQ(getIsaName(KernelIsa::NeonDotprod), "neon_dotprod");
  for (KernelIsa isa : target::getIsasByPreference())
    EXPECT_EQ(lookupIsa(getIsaName(isa)), isa);
}

TEST(MatmulKernel, RefusesBadSpecs) {
  const TargetInfo target = testTarget("x86-64-v2");
  auto error = [&](MatmulKernelSpec spec) {
    return errorOf(verifyMatmulKernel(spec, target));
  };
  EXPECT_EQ(error({Format::Q3_K, KernelIsa::Scalar, 4, 256, 8, 8}),
            "matmul kernel q3_k/scalar r4 c8 [8 x 256]: no emitter for this "
            "format, expected q8_0, q4_0, mxfp4, q4_k, q5_k, q6_k, iq2_xxs, "
            "iq1_s, iq1_m, fractal64, vq3_64, bf16 or f32");
  EXPECT_EQ(error({Format::Q4_K, KernelIsa::Scalar, 4, 96, 8, 8}),
            "matmul kernel q4_k/scalar r4 c8 [8 x 96]: expected K a positive "
            "multiple of 256");
  EXPECT_EQ(error({Format::Q8_0, KernelIsa::Scalar, 4, 48, 8, 8}),
            "matmul kernel q8_0/scalar r4 c8 [8 x 48]: expected K a positive "
            "multiple of 32");
  EXPECT_NE(error({Format::Q8_0, KernelIsa::Scalar, 3, 64, 8, 8}), "");
  EXPECT_NE(error({Format::Q8_0, KernelIsa::Scalar, 4, 64, 0, 8}), "");
  EXPECT_NE(error({Format::Q8_0, KernelIsa::Scalar, 4, 64, 8, 9}), "");
  MatmulKernelSpec blocked{Format::Q8_0, KernelIsa::Scalar, 4, 64, 8, 8};
  blocked.l1K = 48;
  EXPECT_EQ(error(blocked),
            "matmul kernel q8_0/scalar r4 c8 [8 x 64] l1_k 48 l2_rows 0: "
            "expected l1_k a multiple of 32 below K, K itself, or 0");
  blocked.l1K = 32;
  blocked.l2Rows = 6;
  EXPECT_NE(error(blocked), "");
  // A fused quantization's eight packed columns of K = 90112 (2816 blocks of
  // 48 bytes each) would take more than 1 MiB of stack; K = 87360 fits.
  MatmulKernelSpec fused{Format::Q8_0, KernelIsa::Scalar, 4, 90112, 8, 8};
  fused.fuseQuantize = true;
  EXPECT_EQ(error(fused),
            "matmul kernel q8_0/scalar r4 c8 [8 x 90112] fused quantize: a "
            "fused quantization packs 1081344 bytes on the stack, expected at "
            "most 1048576");
  fused.k = 87360;
  EXPECT_EQ(error(fused), "");
  // Decoding once needs cache blocks, a quantized format and calls of more
  // columns than one tile, and its scratch must fit 1 MiB: 128 rows of
  // 8192 decoded weights do, 136 do not.
  auto decodeOnce = [&](int64_t l2Rows, bool fuseQuantize) {
    MatmulKernelSpec spec{Format::IQ2_XXS, KernelIsa::Scalar, 4, 8192, 256, 8};
    spec.decodeOnce = true;
    spec.l2Rows = l2Rows;
    spec.fuseQuantize = fuseQuantize;
    return error(spec);
  };
  EXPECT_EQ(decodeOnce(0, false),
            "matmul kernel iq2_xxs/scalar r4 c8 [256 x 8192] decode once: "
            "decode once needs cache blocks (l1_k or l2_rows), the blocks it "
            "decodes");
  EXPECT_EQ(decodeOnce(128, false), "");
  EXPECT_EQ(decodeOnce(136, false),
            "matmul kernel iq2_xxs/scalar r4 c8 [256 x 8192] l1_k 0 l2_rows "
            "136 decode once: decoding once takes 1114112 bytes of stack, "
            "expected at most 1048576");
  EXPECT_EQ(decodeOnce(4, true),
            "matmul kernel iq2_xxs/scalar r4 c8 [256 x 8192] l1_k 0 l2_rows 4 "
            "fused quantize decode once: decode once needs calls of more "
            "columns than one tile, which a fused quantization never makes");
  MatmulKernelSpec floats{Format::BF16, KernelIsa::Scalar, 4, 64, 8, 8};
  floats.decodeOnce = true;
  floats.l1K = 32;
  EXPECT_EQ(error(floats),
            "matmul kernel bf16/scalar r4 c8 [8 x 64] l1_k 32 l2_rows 0 "
            "decode once: decode once needs a quantized format, whose "
            "weights are decoded");
  MatmulKernelSpec twice{Format::Q8_0, KernelIsa::Scalar, 4, 64, 8, 8};
  llvm::Expected<std::vector<JitKernel>> kernels =
      jitMatmuls({twice, twice}, target);
  ASSERT_FALSE(static_cast<bool>(kernels));
  EXPECT_EQ(errorOf(kernels.takeError()),
            "matmul kernel q8_0/scalar r4 c8 [8 x 64] is requested twice");
}

TEST(MatmulKernel, RefusesToJitForAnotherArchitecture) {
  MatmulKernelSpec spec{Format::Q8_0, KernelIsa::Scalar, 4, 64, 8, 8};
  const TargetInfo other = testTarget(
      hostTarget().arch == target::Arch::X86_64 ? "neoverse-v1" : "x86-64-v2");
  llvm::Expected<JitKernel> jit = jitMatmul(spec, other);
  ASSERT_FALSE(static_cast<bool>(jit));
  EXPECT_NE(errorOf(jit.takeError()).find("cannot run code for target"),
            std::string::npos);
}

} // namespace
} // namespace kf::codegen
