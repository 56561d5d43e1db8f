// AArch64 kernels run, on any host, one test per ISA (HostIsa.h's naming, so
// that scripts/isa-summary counts them): the NEON (dotprod, float, bf16) and
// portable kernels are compiled ahead of time for neoverse-v1 (emitObject),
// linked with a small C driver (AArch64MatmulDriver.c) by clang-22 for
// aarch64-linux-gnu, and run under qemu-aarch64, which compares each output
// with kf::dot's, computed here, as each format's Tolerance says
// (KernelCases.h: bit for bit for the int8 family, within
// floatKernelTolerance for the float family); the kernels are the table's
// (getCrossSpecs). clang-22, lld, qemu-user and the cross libc come from
// scripts/setup; a missing one fails the test, it is never skipped.
#include "HostIsa.h"
#include "KernelCases.h"
#include "MatmulReference.h"

#include "kf/Codegen/KernelCompiler.h"

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

class AArch64CrossOnIsa : public testing::TestWithParam<KernelIsa> {};

INSTANTIATE_TEST_SUITE_P(
    Isa, AArch64CrossOnIsa,
    testing::ValuesIn(getKernelIsas(target::Arch::AArch64)), isaParamName);

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
  const std::vector<MatmulKernelSpec> specs = getCrossSpecs(GetParam());
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
