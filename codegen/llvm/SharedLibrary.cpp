//===- SharedLibrary.cpp - Kernels as a shared library --------------------===//
//
// An AOT plan's kernels as a shared library the runtime can dlopen without
// LLVM: the object emitObject writes, linked by lld (`ld.lld -shared`, the
// linker the build already uses; it reads the object's architecture, so
// AArch64 libraries link on x86 too). `--no-undefined` makes a kernel that
// calls out of its library (a libcall LLVM chose) an error here rather than
// at load time.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/KernelCompiler.h"

#include "kf/runtime/plan_abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <optional>

namespace kf::codegen {

namespace {

/// Removes a temporary file when it goes out of scope.
struct TemporaryFile {
  llvm::SmallString<128> path;
  ~TemporaryFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

llvm::Expected<std::string> findLinker() {
  for (llvm::StringRef name : {"ld.lld-22", "ld.lld"})
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name))
      return *path;
  return llvm::createStringError(
      "linking a shared library needs ld.lld (Debian's lld, which "
      "scripts/setup installs), found in no directory of PATH");
}

} // namespace

llvm::Error emitSharedLibrary(mlir::ModuleOp kernels,
                              const target::TargetInfo &target,
                              llvm::StringRef path) {
  llvm::Expected<std::string> linker = findLinker();
  if (!linker)
    return linker.takeError();
  TemporaryFile object, library, log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("kf-kernels", "o", object.path))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  if (llvm::Error err = emitObject(kernels, target, object.path))
    return err;
  // Linked next to `path` and renamed over it, so that a failure leaves no
  // partial library.
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", library.path))
    return llvm::createStringError("cannot write '" + path +
                                   "': " + ec.message());
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("kf-ld", "log", log.path))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());

  llvm::StringRef args[] = {*linker,      "-shared",     "--no-undefined",
                            "-z",         "noexecstack", "-o",
                            library.path, object.path};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path.str(),
                                                log.path.str()};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*linker, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/300, 0, &error);
  if (rc != 0) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> output =
        llvm::MemoryBuffer::getFile(log.path);
    std::string message =
        error.empty() && output ? (*output)->getBuffer().trim().str() : error;
    // One line: the linker's first.
    message = llvm::StringRef(message).split('\n').first.str();
    return llvm::createStringError("linking '" + path + "' with " + *linker +
                                   " failed: " + message);
  }
  if (std::error_code ec = llvm::sys::fs::rename(library.path, path))
    return llvm::createStringError("cannot write '" + path +
                                   "': " + ec.message());
  library.path.clear();
  return llvm::Error::success();
}

llvm::Error emitPlanLibrary(mlir::ModuleOp kernels,
                            llvm::ArrayRef<uint8_t> plan,
                            const target::TargetInfo &target,
                            llvm::StringRef path) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = kernels.clone();
  mlir::MLIRContext *context = copy->getContext();
  context->loadDialect<mlir::LLVM::LLVMDialect>();
  mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(copy->getBody());
  mlir::Location loc = copy->getLoc();
  auto bytes = mlir::LLVM::LLVMArrayType::get(b.getI8Type(), plan.size());
  mlir::LLVM::GlobalOp::create(
      b, loc, bytes, /*isConstant=*/true, mlir::LLVM::Linkage::External,
      KF_PLAN_DATA_SYMBOL,
      b.getStringAttr(llvm::StringRef(
          reinterpret_cast<const char *>(plan.data()), plan.size())));
  mlir::LLVM::GlobalOp::create(
      b, loc, b.getI64Type(), /*isConstant=*/true,
      mlir::LLVM::Linkage::External, KF_PLAN_SIZE_SYMBOL,
      b.getI64IntegerAttr(static_cast<int64_t>(plan.size())));
  return emitSharedLibrary(*copy, target, path);
}

} // namespace kf::codegen
