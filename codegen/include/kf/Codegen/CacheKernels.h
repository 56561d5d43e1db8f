//===- CacheKernels.h - The compiled kf.cache_append ----------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) writing a call's KV rows into a
// window ring (!kf.window_cache<rows R, dim D, element>) in the plan's
// persistent state, as the interpreter's kf.cache_append does, bit for bit
// (docs/engine.md, "Op kernels").
//
// The ring's bytes: [R, D] f32, the row of position p in slot p mod R,
// stored rounded to the element (bf16: to nearest even, as
// reference::roundBf16; f16: through a half, as kf::fp32ToFp16; f32: as is),
// so that reading a slot gives what the interpreter's kf.cache_read gives.
// Nothing reads a slot the sequence has not written, so a reset need not
// clear it.
//
// Operands: the rows f32 [T, D], the positions i64 [T] (consecutive: the
// runtime checks them), the ring. One work item per token: item t writes
// slot positions[t] mod R with its row, rounded, only when no later token of
// the call maps to the same slot (t + R >= T), so that items write disjoint
// bytes and the later position wins, as kf.cache_append says.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_CACHEKERNELS_H
#define KF_CODEGEN_CACHEKERNELS_H

#include "kf/Target/TargetInfo.h"
#include "kf/runtime/format.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct CacheAppendKernelSpec {
  int64_t rows = 0; ///< R: the ring's slots, at least 1
  int64_t dim = 0;  ///< D: floats per row, a positive multiple of 16
  /// What a slot holds: F32, F16 or BF16 (the cache type's element).
  kf::Format element = kf::Format::BF16;

  /// The ring's bytes in the state: R · D floats.
  int64_t getRingBytes() const { return 4 * rows * dim; }
  /// "kf_cache_append_r128_d512_bf16".
  std::string getSymbolName() const;
  /// "cache_append kernel [rows = 128, D = 512, bf16]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless R is at least 1, D a
/// positive multiple of 16, the element F32, F16 or BF16, and the ring's
/// bytes fit an i64.
llvm::Error verifyCacheAppendKernel(const CacheAppendKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildCacheAppendKernel(mlir::ModuleOp module, const CacheAppendKernelSpec &spec,
                       const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_CACHEKERNELS_H
