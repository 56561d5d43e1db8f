//===- MatmulLoopNest.h - The matmul loop nest and its block bodies -------===//
//
// The loop nest of every matmul kernel (row groups, column tiles of a
// run-time decomposition of m, cache blocks, weight prefetch, the masked
// stores of y) is written once, in MatmulLoopNest.cpp. What one K block of a
// tile computes differs by kernel family and is a MatmulBlockBody: the int8
// family (the quantized formats: decode emitter and integer dot emitter,
// IntegerBlockBody.cpp) and the float family (BF16 and F32: float dot
// emitter, FloatBlockBody.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_KERNELS_MATMULLOOPNEST_H
#define KF_CODEGEN_KERNELS_MATMULLOOPNEST_H

#include "kf/Codegen/MatmulKernel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>

namespace kf::codegen {

/// The kernel ABI's arguments (kf/runtime/kernel_abi.h).
struct KernelArgs {
  mlir::Value w, x, y, ldy, m, nBegin, nEnd;
};

/// What a body sees of one K block of a column tile's row group.
struct BlockOperands {
  mlir::Value weights; ///< !llvm.ptr: the group's packed block
  mlir::Value index;   ///< i64: the block's index along K
  /// !llvm.ptr per column of the tile: the column's packed activation block
  /// (the first, when the weight block spans several).
  llvm::ArrayRef<mlir::Value> activations;
  /// What prepareTile returned for the tile (or null).
  mlir::Value tileState;
  /// !llvm.ptr: the block as emitDecode wrote it, when the nest decodes each
  /// block once (MatmulKernelSpec::decodeOnce); null: decode `weights`.
  mlir::Value decoded;
  /// When set, emits share `step` of `steps` of the block's prefetches (the
  /// tile's stream ahead of it): the body calls it for step 0 .. steps - 1
  /// in order, each with the loads of its own step, rather than the block's
  /// loads meeting all of its prefetches at once. Null: the nest prefetched
  /// the block before the body.
  llvm::function_ref<void(int64_t step, int64_t steps)> prefetch;
};

/// One kernel family's K block: it updates the fp32 accumulators a column
/// tile carries through its K loop.
class MatmulBlockBody {
public:
  virtual ~MatmulBlockBody() = default;

  /// The elements of K one block covers (the K loop's step) and the bytes of
  /// a row group's packed block.
  virtual int64_t getBlockElems() const = 0;
  virtual int64_t getBlockBytes() const = 0;
  /// The vector<R x f32> accumulators per column the K loop carries: the
  /// first starts from 0 (or y's sums so far), the others from 0, and they
  /// are added pairwise after the loop. 1 unless the body splits a column's
  /// sum over independent chains.
  virtual int64_t getAccumulators(int64_t width) const { return 1; }
  /// Run once per column tile, before its row groups (in the function's
  /// entry block's dominance, so entry allocas are fine): whatever the tile
  /// computes once for every group, handed back in BlockOperands::tileState.
  virtual mlir::Value prepareTile(mlir::OpBuilder &b, mlir::Location loc,
                                  const KernelArgs &args, int64_t width,
                                  mlir::Value col, mlir::Value kBegin,
                                  mlir::Value kEnd) {
    return {};
  }
  /// The bytes a row group's block takes decoded (MatmulKernelSpec::
  /// decodeOnce): rows x getBlockElems() int8 lanes. 0 for a family that
  /// decodes nothing (the float one).
  virtual int64_t getDecodedBlockBytes() const { return 0; }
  /// Decodes the row group's packed block at `weights` into `decoded`
  /// (getDecodedBlockBytes() bytes), as emitBlock reads it back.
  virtual void emitDecode(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value weights, mlir::Value decoded) {}
  /// One K block: `accs` holds getAccumulators(width) accumulators per
  /// column of the tile, column after column, and is updated in place.
  virtual void emitBlock(mlir::OpBuilder &b, mlir::Location loc,
                         const BlockOperands &block,
                         llvm::SmallVectorImpl<mlir::Value> &accs) = 0;
  /// LLVM tuning features the kernel's function adds to the target's ("+a,+b"
  /// or empty; DotEmitter::getTuningFeatures).
  virtual llvm::StringRef getTuningFeatures() const { return {}; }
  /// A column's sum over all of K as the reference returns it (vector<R x
  /// f32>): the sum itself, or a format's last factor applied once after
  /// the blocks (IQ2_XXS's 0.125; WeightDecodeEmitter::finishSum).
  virtual mlir::Value finishSum(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value sum) {
    return sum;
  }
  /// Declares the module-level constants the body's code reads (an IQ
  /// format's grid table), before the kernel function is built.
  virtual void declareConstants(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::ModuleOp module) {}
};

/// The int8 family's body (the quantized formats).
std::unique_ptr<MatmulBlockBody>
createIntegerBlockBody(mlir::OpBuilder &b, mlir::Location loc,
                       const MatmulKernelSpec &spec,
                       const target::TargetInfo &target);
/// The float family's body (BF16 and F32).
std::unique_ptr<MatmulBlockBody>
createFloatBlockBody(mlir::OpBuilder &b, mlir::Location loc,
                     const MatmulKernelSpec &spec);

/// Builds the loop nest of `spec` at b's insertion point, which must be in
/// the kernel function's entry block, around `body`.
void emitMatmulLoopNest(mlir::OpBuilder &b, mlir::Location loc,
                        const MatmulKernelSpec &spec, MatmulBlockBody &body,
                        const KernelArgs &args);

/// A loop over columns [0, m) (i64): `step` emits the work of the columns
/// from `col` on and returns how many it took (i64, at least 1).
void emitColumnLoop(mlir::OpBuilder &b, mlir::Location loc, mlir::Value m,
                    llvm::function_ref<mlir::Value(mlir::Value col)> step);

/// `count` values of `element` on the stack, allocated at the start of the
/// block `entry` (the function's entry block), 64-byte aligned.
mlir::Value emitEntryAlloca(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Block *entry, mlir::Type element,
                            int64_t count);

} // namespace kf::codegen

#endif // KF_CODEGEN_KERNELS_MATMULLOOPNEST_H
