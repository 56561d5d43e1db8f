//===- IntegerBlockContext.cpp - What the int8 block's parts share --------===//
//
// The int8 block body's parts (IntegerBlockBody.h) all load activations,
// their sums and prepareTile's entries the same way; those loads are here,
// apart from the body and its strategies, so that each of them reads as the
// work it does and the loads stay one definition.
//
//===----------------------------------------------------------------------===//

#include "IntegerBlockBody.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/ErrorHandling.h"

#include <cassert>

using namespace mlir;

namespace kf::codegen {

IntegerBlockContext::IntegerBlockContext(OpBuilder &b, Location loc,
                                         const MatmulKernelSpec &spec,
                                         const WeightDecodeEmitter &decode,
                                         const DotEmitter &dot)
    : b(b), loc(loc), spec(spec), decode(decode), dot(dot),
      range(decode.getLaneRange()), correction(dot.getCorrectionOffset(range)),
      blockElems(decode.getBlockElems()), subElems(decode.getSubBlockElems()),
      act(kf::activationLayout(spec.getActivationFormat())),
      actBlocks(blockElems / act.blockElems) {
  assert(blockElems % subElems == 0 && subElems % act.fineSums.elems == 0);
  assert(blockElems % act.blockElems == 0 &&
         (act.blockElems % subElems == 0 || actBlocks == 1) &&
         "a sub-block lies in one activation block");
}

Value IntegerBlockContext::emitActivationBlock(Value xBlock,
                                               int64_t kOffset) const {
  return emitByteOffset(b, loc, xBlock,
                        kOffset / act.blockElems * act.blockBytes);
}

// The 4 activation bytes at element kOffset of the weight block, broadcast
// to every row: one i32 load and splat (vpbroadcastd, or an embedded
// broadcast).
Value IntegerBlockContext::emitActivation(Value xBlock, int64_t kOffset) const {
  return emitWordSplat(emitLoad(b, loc, b.getI32Type(),
                                emitActivationBlock(xBlock, kOffset),
                                act.quantsOffset + kOffset % act.blockElems));
}

Value IntegerBlockContext::emitWordSplat(Value word) const {
  return vector::BitCastOp::create(
      b, loc, VectorType::get({4 * spec.rows}, b.getI8Type()),
      vector::BroadcastOp::create(b, loc, rowsOf(b.getI32Type()), word));
}

Value IntegerBlockContext::emitActivationByte(Value xBlock, int64_t e) const {
  return emitLoad(b, loc, b.getI8Type(), emitActivationBlock(xBlock, e),
                  act.quantsOffset + e % act.blockElems);
}

// The activations' sums over the sub-block added: the coarsest sums that
// tile it (a Q8_0 block's int32 sum for a sub-block of 32, its int16 sums of
// 8 for one of 8; Q8_K's int16 sums of 16).
Value IntegerBlockContext::emitSubBlockSum(Value xBlock, int64_t sub) const {
  const kf::ActivationSums &sums =
      subElems % act.sums.elems == 0 ? act.sums : act.fineSums;
  Type i32 = b.getI32Type();
  Type sumType = b.getIntegerType(8 * sums.bytes);
  Value total;
  for (int64_t e = sub * subElems; e < (sub + 1) * subElems; e += sums.elems) {
    Value sum =
        emitLoad(b, loc, sumType, emitActivationBlock(xBlock, e),
                 sums.offset + e % act.blockElems / sums.elems * sums.bytes);
    if (sumType != i32)
      sum = arith::ExtSIOp::create(b, loc, i32, sum);
    total = total ? arith::AddIOp::create(b, loc, total, sum) : sum;
  }
  return total;
}

Value IntegerBlockContext::emitTileSlot(Value buffer, int64_t j, Value blk,
                                        int64_t index, int64_t perBlock) const {
  Value slot = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, blk, i64(perBlock)),
      i64((j * (spec.k / blockElems)) * perBlock + index));
  return emitByteOffset(b, loc, buffer,
                        arith::MulIOp::create(b, loc, slot, i64(4)));
}

int64_t IntegerBlockContext::getTileEntries(int64_t width) const {
  int64_t entries = 0;
  for (const TileEntries *part : tileParts)
    entries += part->getTileEntries(width);
  return entries;
}

TileSlice
IntegerBlockContext::getTileSlice(const TileEntries &part,
                                  const BlockOperands &operands) const {
  const int64_t width = operands.activations.size();
  TileSlice slice;
  for (const TileEntries *before : tileParts) {
    if (before == &part)
      break;
    slice.first += before->getTileEntries(width);
  }
  slice.perBlock = getTileEntries(width);
  if (part.getTileEntries(width) != 0)
    slice.buffer = operands.tileState;
  return slice;
}

Value TileEntries::emitTileEntry(Value, int64_t) const {
  llvm_unreachable("only a part with tile entries has them");
}

Value TileSlice::emitLoad(const IntegerBlockContext &ctx, int64_t j, Value blk,
                          int64_t index) const {
  return LLVM::LoadOp::create(ctx.b, ctx.loc, ctx.b.getI32Type(),
                              emitSlot(ctx, j, blk, index), 4);
}

void LaneSource::emitStep(const BlockOperands &operands, int64_t step,
                          SmallVectorImpl<DecodedLanes> &out) const {
  out.clear();
  if (operands.prefetch)
    operands.prefetch(step, ctx.decode.getStepsPerBlock());
  emitLanes(operands, step, out);
}

} // namespace kf::codegen
