// Kernels linked into a shared library (the AOT form the runtime loads
// without LLVM) run as the JIT's do: the host's kernels of each x86 ISA
// (skipped by name where this machine cannot run it), loaded with dlopen,
// equal kf::dot as their formats' Tolerance says (the formats whose row in
// KernelCases.h says sharedLibrary); a library for AArch64 links
// on this machine too; and a failure writes nothing.
#include "HostIsa.h"
#include "KernelCases.h"
#include "MatmulReference.h"

#include "TestTarget.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/Codegen/MatmulEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <bit>
#include <cmath>
#include <dlfcn.h>

namespace kf::codegen {
namespace {

/// A kernels module holding the kernels of `specs` for `target`, as
/// --kf-lower-quant-dot builds it.
mlir::OwningOpRef<mlir::ModuleOp>
buildKernels(mlir::MLIRContext &context, llvm::ArrayRef<MatmulKernelSpec> specs,
             const target::TargetInfo &target) {
  loadKernelDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  for (const MatmulKernelSpec &spec : specs) {
    llvm::Expected<mlir::func::FuncOp> fn =
        buildMatmulKernel(*module, spec, target);
    EXPECT_TRUE(static_cast<bool>(fn)) << llvm::toString(fn.takeError());
  }
  return module;
}

std::string temporaryPath(llvm::StringRef suffix) {
  llvm::SmallString<128> path;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("kf-test", suffix, path));
  llvm::sys::fs::remove(path);
  return path.str().str();
}

class SharedLibraryOnIsa : public testing::TestWithParam<KernelIsa> {};

INSTANTIATE_TEST_SUITE_P(Isa, SharedLibraryOnIsa,
                         testing::ValuesIn(getIsasWithSpecs(
                             target::Arch::X86_64, getSharedLibrarySpecs)),
                         isaParamName);

TEST_P(SharedLibraryOnIsa, HostKernelsLoadAndEqualTheReference) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const target::TargetInfo &host = hostTarget();
  const std::vector<MatmulKernelSpec> specs = getSharedLibrarySpecs(isa);
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> kernels =
      buildKernels(context, specs, host);
  const std::string path = temporaryPath("so");
  llvm::Error err = emitSharedLibrary(*kernels, host, path);
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));

  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(library) << dlerror();
  uint32_t seed = 3;
  for (const MatmulKernelSpec &spec : specs) {
    SCOPED_TRACE(spec.describe());
    auto fn = reinterpret_cast<MatmulKernelFn>(
        dlsym(library, spec.getSymbolName().c_str()));
    ASSERT_TRUE(fn) << dlerror();
    MatmulReference ref;
    buildMatmulReference(spec, seed += 10, ref);
    ASSERT_FALSE(testing::Test::HasFatalFailure());
    const int64_t m = MatmulReference::kMaxM;
    std::vector<float> y(m * spec.n);
    fn(ref.packedW.data(), ref.kernelX.data(), y.data(), spec.n, m, 0, spec.n);
    // Bit for bit where the tolerance is 0 (Tolerance::Exact), else within
    // it.
    for (size_t i = 0; i < y.size(); ++i) {
      if (ref.tolerance[i] == 0)
        ASSERT_EQ(std::bit_cast<uint32_t>(y[i]),
                  std::bit_cast<uint32_t>(ref.want[i]))
            << "element " << i;
      else
        ASSERT_LE(std::fabs(y[i] - ref.want[i]), ref.tolerance[i])
            << "element " << i;
    }
  }
  dlclose(library);
  llvm::sys::fs::remove(path);
}

TEST(SharedLibrary, LinksForAArch64) {
  const target::TargetInfo neon = testTarget("neoverse-v1");
  mlir::MLIRContext context;
  MatmulKernelSpec spec{Format::Q8_0, KernelIsa::NeonDotprod, 4, 256, 64, 8};
  mlir::OwningOpRef<mlir::ModuleOp> kernels = buildKernels(context, spec, neon);
  const std::string path = temporaryPath("so");
  llvm::Error err = emitSharedLibrary(*kernels, neon, path);
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> object =
      llvm::object::ObjectFile::createObjectFile(path);
  ASSERT_TRUE(static_cast<bool>(object)) << llvm::toString(object.takeError());
  const llvm::object::ObjectFile &file = *object->getBinary();
  EXPECT_EQ(file.getArch(), llvm::Triple::aarch64);
  const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&file);
  ASSERT_TRUE(elf);
  EXPECT_EQ(elf->getEType(), llvm::ELF::ET_DYN);
  llvm::sys::fs::remove(path);
}

TEST(SharedLibrary, AFailureWritesNothing) {
  const target::TargetInfo host = testTarget("host");
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> kernels = buildKernels(
      context, {{Format::Q8_0, KernelIsa::Scalar, 4, 64, 8, 8}}, host);
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kf-test", dir));
  std::string missing = (dir + "/no/such/dir/k.so").str();
  llvm::Error err = emitSharedLibrary(*kernels, host, missing);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("cannot write"),
            std::string::npos);
  std::error_code ec;
  EXPECT_TRUE(llvm::sys::fs::directory_iterator(dir, ec) ==
              llvm::sys::fs::directory_iterator())
      << "something was written in " << dir.str().str();
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
} // namespace kf::codegen
