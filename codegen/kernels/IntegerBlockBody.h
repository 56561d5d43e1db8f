//===- IntegerBlockBody.h - The int8 family's K block, in parts -*- C++ -*-===//
//
// The int8 family's block body (IntegerBlockBody.cpp) is a short loop over a
// block's decode steps; what differs by format and ISA is in strategy
// objects it chooses once, when it is built, each holding the state and the
// emission of one way of doing a part of the block:
//
//  * a LaneSource: where a step's lanes come from (decoded in K order, in
//    the decoder's packed order, or loaded back from where the loop nest
//    decoded the block once);
//  * a SubBlockSums: how the lanes' dots meet the sub-blocks' integer scales
//    (int32 chains per part of a sub-block, scaled in integers or in fp32,
//    SubBlockScaling.cpp; or dots scaled as they are computed, where the ISA
//    takes the scale for free);
//  * a SubBlockMinSums for formats with mins.
//
// They share an IntegerBlockContext (IntegerBlockContext.cpp): the kernel,
// its two emitters and the activation loads they all make. This header is the
// contract between the files; nothing outside the int8 body includes it.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_KERNELS_INTEGERBLOCKBODY_H
#define KF_CODEGEN_KERNELS_INTEGERBLOCKBODY_H

#include "MatmulLoopNest.h"

#include "kf/Codegen/Emitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

#include <memory>

namespace kf::codegen {

class TileEntries;
struct TileSlice;

/// What every part of the int8 block body shares: the kernel, its decode and
/// dot emitters, the block's shape and the activation loads.
struct IntegerBlockContext {
  IntegerBlockContext(mlir::OpBuilder &b, mlir::Location loc,
                      const MatmulKernelSpec &spec,
                      const WeightDecodeEmitter &decode, const DotEmitter &dot);

  mlir::OpBuilder &b;
  mlir::Location loc;
  const MatmulKernelSpec &spec;
  const WeightDecodeEmitter &decode;
  const DotEmitter &dot;
  LaneRange range;
  /// DotEmitter::getCorrectionOffset: what a chain's correction multiplies
  /// the activation sum by.
  int64_t correction;
  int64_t blockElems, subElems;
  kf::ActivationLayout act;
  int64_t actBlocks; ///< activation blocks per weight block

  int64_t getSubBlocks() const { return blockElems / subElems; }
  bool isCacheBlocked() const { return spec.l1K != 0 || spec.l2Rows != 0; }
  mlir::Value i64(int64_t v) const {
    return mlir::arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  mlir::VectorType rowsOf(mlir::Type element) const {
    return mlir::VectorType::get({spec.rows}, element);
  }
  /// The activation block (of the actBlocks from xBlock) holding element
  /// kOffset of the weight block.
  mlir::Value emitActivationBlock(mlir::Value xBlock, int64_t kOffset) const;
  /// The 4 activation bytes at element kOffset of the weight block broadcast
  /// to every row, as the dot takes them (vector<4R x i8>).
  mlir::Value emitActivation(mlir::Value xBlock, int64_t kOffset) const;
  /// An activation word (i32) broadcast to every row, as the dot takes it.
  mlir::Value emitWordSplat(mlir::Value word) const;
  /// Element `e`'s activation byte of the weight block at xBlock (i8).
  mlir::Value emitActivationByte(mlir::Value xBlock, int64_t e) const;
  /// The activations' integer sum over sub-block `sub` (i32).
  mlir::Value emitSubBlockSum(mlir::Value xBlock, int64_t sub) const;
  /// Where entry `index` (of perBlock) of column j's block `blk` is in
  /// prepareTile's buffer: buffer[j][blk][index].
  mlir::Value emitTileSlot(mlir::Value buffer, int64_t j, mlir::Value blk,
                           int64_t index, int64_t perBlock) const;

  /// The parts with entries in prepareTile's buffer, in the buffer's order.
  llvm::SmallVector<const TileEntries *, 3> tileParts;
  /// The entries per column and block of a tile of `width` columns.
  int64_t getTileEntries(int64_t width) const;
  /// `part`'s share of the buffer in the block of `operands`.
  TileSlice getTileSlice(const TileEntries &part,
                         const BlockOperands &operands) const;
};

/// A part that computes values per column and block from the activations
/// alone, which prepareTile computes once before a cache-blocked tile's row
/// groups into a stack buffer: the part's entries follow those of the parts
/// before it, for every column and block.
class TileEntries {
public:
  virtual ~TileEntries() = default;
  /// How many entries per column and block a tile of `width` columns keeps.
  virtual int64_t getTileEntries(int64_t width) const { return 0; }
  /// Entry `index` for the column's activation block at xBlock (i32).
  virtual mlir::Value emitTileEntry(mlir::Value xBlock, int64_t index) const;
};

/// A part's share of prepareTile's buffer in one block: entries first ..
/// first + count - 1 of the perBlock per column and block; a null buffer
/// where the tile has none (no cache blocks, or no entries of the part).
struct TileSlice {
  mlir::Value buffer;
  int64_t first = 0, perBlock = 0;

  explicit operator bool() const { return static_cast<bool>(buffer); }
  /// Where the part's entry `index` of column j's block `blk` is.
  mlir::Value emitSlot(const IntegerBlockContext &ctx, int64_t j,
                       mlir::Value blk, int64_t index) const {
    return ctx.emitTileSlot(buffer, j, blk, first + index, perBlock);
  }
  /// The entry itself (i32).
  mlir::Value emitLoad(const IntegerBlockContext &ctx, int64_t j,
                       mlir::Value blk, int64_t index) const;
};

/// Where a block's lanes come from, step by step, and the activation words
/// they meet.
class LaneSource {
public:
  explicit LaneSource(const IntegerBlockContext &ctx) : ctx(ctx) {}
  virtual ~LaneSource() = default;

  /// Step `step`'s lanes as the dot emitter takes them (prepareLanes'),
  /// after the step's share of the block's prefetches.
  void emitStep(const BlockOperands &operands, int64_t step,
                llvm::SmallVectorImpl<DecodedLanes> &out) const;
  /// The activation word lanes `lanes` of column j meet, broadcast to every
  /// row (vector<4R x i8>): the 4 bytes at its kOffset.
  virtual mlir::Value emitActivation(const BlockOperands &operands, int64_t j,
                                     const DecodedLanes &lanes) const {
    return ctx.emitActivation(operands.activations[j], lanes.kOffset);
  }

protected:
  virtual void emitLanes(const BlockOperands &operands, int64_t step,
                         llvm::SmallVectorImpl<DecodedLanes> &out) const = 0;

  const IntegerBlockContext &ctx;
};

/// How a block's lane dots become its integer sums per activation block and
/// column, meeting the sub-blocks' integer scales on the way.
class SubBlockSums : public TileEntries {
public:
  explicit SubBlockSums(const IntegerBlockContext &ctx) : ctx(ctx) {}

  /// isums[h][j]: the integer sum over activation block h of column j (as
  /// toFloat takes it), from the lanes of `lanes`.
  virtual void
  emitSums(const BlockOperands &operands, const LaneSource &lanes,
           llvm::MutableArrayRef<llvm::SmallVector<mlir::Value, 8>> isums) = 0;
  /// An emitSums sum as fp32 (vector<R x f32>), exactly.
  virtual mlir::Value toFloat(mlir::Value isum) const {
    return mlir::arith::SIToFPOp::create(ctx.b, ctx.loc,
                                         ctx.rowsOf(ctx.b.getF32Type()), isum);
  }

protected:
  const IntegerBlockContext &ctx;
};

/// The general case: int32 chains per sub-block, or per part of one, each
/// starting from its correction and scaled when complete (SubBlockScaling.cpp).
std::unique_ptr<SubBlockSums> createSubBlockChains(const IntegerBlockContext &);
/// Dots of whole sub-blocks scaled as they are computed (ScaledSubBlockDot).
std::unique_ptr<SubBlockSums>
createScaledSubBlocks(const IntegerBlockContext &,
                      const ScaledSubBlockDot &scaledDot);

} // namespace kf::codegen

#endif // KF_CODEGEN_KERNELS_INTEGERBLOCKBODY_H
