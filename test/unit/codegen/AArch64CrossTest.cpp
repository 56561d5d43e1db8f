// AArch64 kernels run, on any host, one test per ISA (HostIsa.h's naming, so
// that scripts/isa-summary counts them): the NEON (dotprod, float, bf16) and
// portable kernels are compiled ahead of time for neoverse-v1 (emitObject),
// linked with a small C driver (AArch64MatmulDriver.c) by clang-22 for
// aarch64-linux-gnu, and run under qemu-aarch64, which compares each output
// with kf::dot's, computed here: bit for bit for the int8 family
// (MatmulKernelTest.cpp's header gives why they must be equal), within
// floatKernelTolerance for the float family (MatmulReference.cpp). clang-22,
// lld, qemu-user and the cross libc come from scripts/setup; a missing one
// fails the test, it is never skipped.
#include "HostIsa.h"
#include "MatmulReference.h"

#include "kf/Codegen/KernelCompiler.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <optional>
#include <string>
#include <vector>

namespace kf::codegen {
namespace {

constexpr char kSysroot[] = "/usr/aarch64-linux-gnu";

std::string findTool(llvm::StringRef name) {
  llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name);
  EXPECT_TRUE(static_cast<bool>(path))
      << name.str() << " not found in PATH; scripts/setup installs it";
  return path ? *path : "";
}

/// Runs `args` and returns its exit code, with its stdout and stderr in
/// `output`.
int run(llvm::ArrayRef<llvm::StringRef> args, llvm::StringRef outputPath,
        std::string &output) {
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, outputPath,
                                                outputPath};
  std::string error;
  int rc =
      llvm::sys::ExecuteAndWait(args.front(), args, std::nullopt, redirects,
                                /*SecondsToWait=*/120, 0, &error);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(outputPath);
  output = error + (text ? (*text)->getBuffer().str() : "");
  return rc;
}

template <typename T> void writeRaw(llvm::raw_ostream &os, const T &value) {
  os.write(reinterpret_cast<const char *>(&value), sizeof value);
}

template <typename T>
void writeBlob(llvm::raw_ostream &os, const std::vector<T> &data) {
  writeRaw<uint64_t>(os, data.size() * sizeof(T));
  os.write(reinterpret_cast<const char *>(data.data()),
           data.size() * sizeof(T));
}

/// One kernel's entry of the cases file (format in AArch64MatmulDriver.c):
/// every m from 1 to kMaxM over all rows, and a thread's row range.
void writeCases(llvm::raw_ostream &os, const MatmulKernelSpec &spec,
                uint32_t seed) {
  SCOPED_TRACE(spec.describe());
  MatmulReference ref;
  buildMatmulReference(spec, seed, ref);
  ASSERT_FALSE(testing::Test::HasFatalFailure());

  std::string name = spec.getSymbolName();
  writeRaw<uint32_t>(os, name.size());
  os << name;
  writeBlob(os, ref.packedW);
  writeBlob(os, ref.kernelX);

  struct Run {
    int64_t m, nBegin;
  };
  std::vector<Run> runs;
  for (int64_t m = 1; m <= MatmulReference::kMaxM; ++m)
    runs.push_back({m, 0});
  if (spec.n > spec.rows)
    runs.push_back({5, spec.rows});
  writeRaw<uint32_t>(os, runs.size());
  // y has ldy > N: what lies past N, or outside the rows, stays the sentinel.
  const int64_t ldy = spec.n + 5;
  const float sentinel = -12345.0f;
  for (Run run : runs) {
    for (int64_t v : {run.m, ldy, run.nBegin, spec.n})
      writeRaw(os, v);
    writeRaw(os, sentinel);
    std::vector<float> want(run.m * ldy, sentinel);
    for (int64_t j = 0; j < run.m; ++j)
      for (int64_t r = run.nBegin; r < spec.n; ++r)
        want[j * ldy + r] = ref.want[j * spec.n + r];
    os.write(reinterpret_cast<const char *>(want.data()),
             want.size() * sizeof(float));
    std::vector<float> tolerance(run.m * ldy, 0.0f);
    for (int64_t j = 0; j < run.m; ++j)
      for (int64_t r = run.nBegin; r < spec.n; ++r)
        tolerance[j * ldy + r] = ref.tolerance[j * spec.n + r];
    os.write(reinterpret_cast<const char *>(tolerance.data()),
             tolerance.size() * sizeof(float));
  }
}

struct Shape {
  int64_t n, k;
};

// N not a multiple of the row group, one that is, and K of 1, 3 and 8 blocks;
// then narrower widest tiles, whose dispatch tables differ. The K-quants and
// IQ formats the same with K of 1, 3 and 2 super-blocks of 256.
std::vector<MatmulKernelSpec> crossSpecs() {
  std::vector<MatmulKernelSpec> specs;
  for (KernelIsa isa : {KernelIsa::NeonDotprod, KernelIsa::Scalar}) {
    for (Format format : {Format::Q8_0, Format::Q4_0, Format::MXFP4}) {
      for (Shape shape : {Shape{37, 96}, Shape{32, 256}, Shape{5, 32}})
        specs.push_back({format, isa, 4, shape.k, shape.n, 8});
      for (int64_t maxCols : {1, 2, 3, 4})
        specs.push_back({format, isa, 4, 64, 9, maxCols});
    }
    for (Format format : {Format::Q4_K, Format::Q5_K, Format::Q6_K,
                          Format::IQ2_XXS, Format::IQ1_S, Format::IQ1_M}) {
      for (Shape shape : {Shape{37, 256}, Shape{32, 768}, Shape{5, 512}})
        specs.push_back({format, isa, 4, shape.k, shape.n, 8});
      for (int64_t maxCols : {1, 3})
        specs.push_back({format, isa, 4, 256, 9, maxCols});
    }
  }
  // The private formats' blocks of 64, K of 2 and 1 of them, on sdot only:
  // the portable kernel is the same IR the x86 tests run, and every kernel
  // here costs seconds of the test's LLVM compilation.
  for (Format format : {Format::FRACTAL64, Format::VQ3_64}) {
    for (Shape shape : {Shape{37, 128}, Shape{5, 64}})
      specs.push_back({format, KernelIsa::NeonDotprod, 4, shape.k, shape.n, 8});
    specs.push_back({format, KernelIsa::NeonDotprod, 4, 128, 9, 3});
  }
  // VQ3_64's one-column tiles with cache blocks decode in the packed order,
  // their masked activation words prepared once per tile.
  {
    MatmulKernelSpec spec{Format::VQ3_64, KernelIsa::NeonDotprod, 4, 192, 9, 3};
    spec.l1K = 128;
    spec.l2Rows = 8;
    specs.push_back(spec);
  }
  // The float family: K with a padded last block (100, 33) and whole blocks
  // (256), on bfdot, fmla and the portable kernel.
  for (KernelIsa isa :
       {KernelIsa::NeonBf16, KernelIsa::Neon, KernelIsa::Scalar})
    for (Format format : {Format::BF16, Format::F32}) {
      if (!isaSupportsFormat(isa, format))
        continue;
      for (Shape shape : {Shape{37, 100}, Shape{32, 256}, Shape{5, 33}})
        specs.push_back({format, isa, 4, shape.k, shape.n, 8});
      for (int64_t maxCols : {1, 3})
        specs.push_back({format, isa, 4, 70, 9, maxCols});
    }
  // IQ1's ternary layouts, decoded with shifts on sdot.
  for (Format format : {Format::IQ1_S, Format::IQ1_M}) {
    MatmulKernelSpec spec{format, KernelIsa::NeonDotprod, 4, 512, 37, 8};
    spec.coding = WeightCoding::Ternary;
    specs.push_back(spec);
    spec.n = 9;
    spec.maxCols = 3;
    specs.push_back(spec);
  }
  // Kernels that quantize their activations (the quantizers' code for this
  // target: fp16 rounding by fcvt), Q8_0 and Q8_K ones.
  for (auto [format, k] : {std::pair{Format::Q8_0, 64}, {Format::Q4_K, 256}}) {
    MatmulKernelSpec spec{format, KernelIsa::NeonDotprod, 4, k, 9, 3};
    spec.fuseQuantize = true;
    specs.push_back(spec);
  }
  // Kernels that decode each row block once (the lanes stored for sdot, the
  // signed layouts): K of 3 blocks in L1 blocks of 2, row blocks of two
  // groups, widest tile 4, so that m = 5..17 decode once.
  for (Format format :
       {Format::Q8_0, Format::Q4_K, Format::IQ1_M, Format::FRACTAL64}) {
    const int64_t block = packed_block_elems(format);
    MatmulKernelSpec spec{format, KernelIsa::NeonDotprod, 4, 3 * block, 37, 4};
    spec.decodeOnce = true;
    spec.l1K = 2 * block;
    spec.l2Rows = 8;
    specs.push_back(spec);
  }
  return specs;
}

class AArch64CrossOnIsa : public testing::TestWithParam<KernelIsa> {};

INSTANTIATE_TEST_SUITE_P(Isa, AArch64CrossOnIsa,
                         testing::Values(KernelIsa::NeonDotprod,
                                         KernelIsa::Neon, KernelIsa::NeonBf16,
                                         KernelIsa::Scalar),
                         isaParamName);

TEST_P(AArch64CrossOnIsa, KernelsEqualReferenceUnderQemu) {
  const std::string clang = findTool("clang-22");
  const std::string qemu = findTool("qemu-aarch64");
  ASSERT_FALSE(clang.empty() || qemu.empty());
  ASSERT_TRUE(llvm::sys::fs::is_directory(kSysroot))
      << kSysroot << " is missing; scripts/setup installs it";

  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kf-aarch64", dir));
  auto file = [&](llvm::StringRef name) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  const std::string object = file("kernels.o"), driver = file("driver"),
                    cases = file("cases.bin"), log = file("log.txt");

  llvm::Expected<target::TargetInfo> target =
      target::lookupTarget("neoverse-v1");
  ASSERT_TRUE(static_cast<bool>(target)) << llvm::toString(target.takeError());
  std::vector<MatmulKernelSpec> specs = crossSpecs();
  llvm::erase_if(specs, [&](const MatmulKernelSpec &spec) {
    return spec.isa != GetParam();
  });
  ASSERT_FALSE(specs.empty());
  llvm::Error err = emitObject(specs, *target, object);
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));

  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cases, ec);
    ASSERT_FALSE(ec) << ec.message();
    writeRaw<uint32_t>(os, specs.size());
    uint32_t seed = 1;
    for (const MatmulKernelSpec &spec : specs) {
      writeCases(os, spec, seed += 10);
      ASSERT_FALSE(HasFatalFailure());
    }
  }

  std::string output;
  ASSERT_EQ(run({clang, "--target=aarch64-linux-gnu", "-fuse-ld=lld",
                 "-rdynamic", "-O2", "-std=c11", "-Wall", "-Werror",
                 KF_AARCH64_MATMUL_DRIVER, object, "-o", driver},
                log, output),
            0)
      << "linking the AArch64 driver failed:\n"
      << output;
  ASSERT_EQ(run({qemu, "-L", kSysroot, driver, cases}, log, output), 0)
      << output;
  EXPECT_NE(output.find("OK: " + std::to_string(specs.size()) + " kernels"),
            std::string::npos)
      << output;
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
} // namespace kf::codegen
