//===- MatmulEmitter.cpp - The quantized matmul loop nest -----------------===//
//
// One loop nest for every format and ISA (docs/codegen.md):
//
//   for each row group g of R rows in [nBegin, nEnd):
//     for each column tile (width c from the run-time decomposition of m):
//       acc[c] = 0                                  (vector<R x f32> each)
//       for each K block b:                         (weights read once per
//         prefetch the weights 2 KiB ahead           tile, from L1/L2 after
//         s_w = decode's R scales                    the first tile)
//         for each column j: iacc[j] = -offset*sum_j
//         for each decode step: lanes = decode(block, step)
//           for each column j: iacc[j] = dot(iacc[j], lanes, x[j] bytes)
//         for each column j: acc[j] += scale(float(iacc[j]), s_w, d_j)
//       store acc[j] to y[j][g*R ..]                 (masked past N)
//
// A block is 32 weights, or a K-quant's super-block of 256 in sub-blocks with
// integer scales (and mins): then the int32 dots are kept per sub-block (each
// starting from -offset * its activation sum), multiplied by the sub-block's
// integer scale and added up, and the mins' term sum_j min_j * asum_j is a
// second integer sum; both meet the float scales once per block, as kf::dot's
// K-quant dot does (docs/codegen.md, "Super-blocks").
//
// The int32 accumulator starts from -offset * sum(q) so it ends holding the
// signed block dot exactly; the float work per block and row lane is then the
// reference dot's, in its order, and the kernel's sums equal kf::dot's bit for
// bit. Each column tile width is its own straight-line micro-kernel (every
// column's accumulators live in registers), chosen at run time by an
// scf.index_switch on the width nextColumnTile gives.
//
// With cache blocks (the spec's l1K / l2Rows) and more columns than one tile,
// K and the rows are blocked around the column tiles (see build()), so that a
// tile's activations stay in L1 and a row block's weights in L2.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/MatmulEmitter.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Tiling/ColumnTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <algorithm>
#include <cassert>

using namespace mlir;

namespace kf::codegen {

void loadKernelDialects(MLIRContext &context) {
  context.loadDialect<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect,
                      scf::SCFDialect, vector::VectorDialect>();
}

Value emitNextColumnTile(OpBuilder &b, Location loc, Value remaining,
                         int64_t maxCols) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  // Built from the narrowest width up, so that a wider width that qualifies
  // overrides: the result is the widest, as nextColumnTile's first match.
  Value fallback = constant(1);
  Value width = fallback;
  SmallVector<int64_t, 5> widths = tiling::columnTileWidths(maxCols);
  widths.pop_back(); // 1 is the fallback's start
  for (int64_t w : llvm::reverse(widths)) {
    Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       remaining, constant(w));
    Value leavesOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            remaining, constant(w + 1));
    Value ok = arith::AndIOp::create(
        b, loc, fits,
        arith::XOrIOp::create(b, loc, leavesOne,
                              arith::ConstantIntOp::create(b, loc, 1, 1)));
    fallback = arith::SelectOp::create(b, loc, fits, constant(w), fallback);
    width = arith::SelectOp::create(b, loc, ok, constant(w), width);
  }
  // No width qualified: the widest that fits (or 1).
  Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, width,
                                     constant(1));
  return arith::SelectOp::create(b, loc, none, fallback, width);
}

namespace {

/// How far ahead of the K block being read the weights are prefetched, in
/// bytes (emitPrefetch): 4 to 8 blocks, about 1 µs of a thread's DRAM stream.
/// Measured on the development VM (Q8_0, Q4_0, MXFP4 at M = 1 and 8, cold):
/// 1024 and 4096 were slower than 2048 at M = 8.
constexpr int64_t kPrefetchDistance = 2048;

struct KernelArgs {
  Value w, x, y, ldy, m, nBegin, nEnd;
};

class MatmulLoopNest {
public:
  MatmulLoopNest(OpBuilder &b, Location loc, const MatmulKernelSpec &spec,
                 const WeightDecodeEmitter &decode, const DotEmitter &dot)
      : b(b), loc(loc), spec(spec), decode(decode), dot(dot),
        range(decode.getLaneRange()),
        correction(dot.getCorrectionOffset(range)),
        blockBytes(kf::packed_block_bytes(spec.getWeightLayout())),
        blockElems(decode.getBlockElems()), subElems(decode.getSubBlockElems()),
        act(kf::activation_layout(spec.getActivationFormat())) {
    assert(blockElems == act.block_elems && "weights and activations agree");
    assert(blockElems % subElems == 0 && subElems % act.sum_elems == 0);
  }

  void build(const KernelArgs &args);

private:
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  VectorType rowsOf(Type element) {
    return VectorType::get({spec.rows}, element);
  }

  /// The part of the nest a column tile runs over: the row groups
  /// [groupBegin, groupEnd) and the K blocks [kBegin, kEnd).
  struct TileRange {
    Value groupBegin, groupEnd, kBegin, kEnd;
  };
  bool isCacheBlocked() const { return spec.l1K != 0 || spec.l2Rows != 0; }
  void emitColumnTiles(const KernelArgs &args, const TileRange &range);
  void emitTile(const KernelArgs &args, int64_t width, Value col,
                const TileRange &range);
  void emitTileGroup(const KernelArgs &args, int64_t width, Value col,
                     Value group, Value rowBase, Value kBegin, Value kEnd,
                     Value corrections);
  /// `count` i32 on the stack, allocated once in the function's entry block.
  Value emitEntryAlloca(int64_t count);
  /// Independent int32 accumulators per column and block. A dot instruction
  /// waits for the previous one on the same accumulator (vpdpbusd: about 5
  /// cycles), so a narrow tile with one accumulator per column would run at
  /// that latency, not at the dot units' throughput; splitting each column's
  /// block dot over chains keeps about 4 in flight, wide tiles having them
  /// already.
  int64_t getIntChains(int64_t width) const {
    int64_t stepsPerSub =
        std::max<int64_t>(1, decode.getStepsPerBlock() * subElems / blockElems);
    return std::clamp<int64_t>(4 / width, 1, stepsPerSub);
  }
  Value emitActivation(Value xBlock, int64_t kOffset);
  /// The activation block's integer sum over sub-block `sub` (i32).
  Value emitSubBlockSum(Value xBlock, int64_t sub);
  void emitPrefetch(Value block);
  Value emitRoundToBf16(Value acc);
  Value emitRowMask(Value rowBase);
  Value emitLoadY(Value yPtr, Value rowBase);
  void emitStore(Value acc, Value yPtr, Value rowBase);

  OpBuilder &b;
  Location loc;
  const MatmulKernelSpec &spec;
  const WeightDecodeEmitter &decode;
  const DotEmitter &dot;
  LaneRange range;
  int64_t correction;
  int64_t blockBytes;
  int64_t blockElems, subElems;
  kf::ActivationLayout act;
  Block *entry = nullptr;
};

// Without cache blocks (or with at most one column tile) the nest is: for
// each row group, each column tile over all of K; the group's weights are
// read from memory once and stay in L1/L2 for the group's other tiles. With
// them, for m > maxCols:
//
//   for each K block of l1K elements:
//     for each row block of l2Rows rows of [nBegin, nEnd):
//       for each column tile:            (its activations stay in L1)
//         for each row group of the block: (the block's weights in L2)
//           acc = first K block ? 0 : y;  ... ;  y = acc
//
// y holds the fp32 sums between K blocks: storing and reloading them is
// exact, and the blocks are still added in K order, so the results are the
// same bits as unblocked.
void MatmulLoopNest::build(const KernelArgs &args) {
  entry = b.getInsertionBlock(); // the function's entry block
  // nBegin is a multiple of R; nEnd is one too or N, whose group is partial.
  Value rows = i64(spec.rows);
  Value first = arith::DivSIOp::create(b, loc, args.nBegin, rows);
  Value last = arith::DivSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, args.nEnd, i64(spec.rows - 1)),
      rows);
  const int64_t kBlocks = spec.k / blockElems;
  Value kStep = i64(kBlocks), groupStep = i64(1);
  if (isCacheBlocked()) {
    Value wide = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                       args.m, i64(spec.maxCols));
    if (spec.l1K != 0)
      kStep = arith::SelectOp::create(b, loc, wide, i64(spec.l1K / blockElems),
                                      kStep);
    // A call of one column tile runs it over all the rows at once (the
    // same traversal as group by group), so the tile's corrections below
    // are computed once per call.
    Value allGroups = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, last, first), i64(1));
    groupStep = arith::SelectOp::create(
        b, loc, wide, spec.l2Rows != 0 ? i64(spec.l2Rows / spec.rows) : i64(1),
        allGroups);
  }
  auto min = [&](Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y).getResult();
  };
  scf::ForOp::create(
      b, loc, i64(0), i64(kBlocks), kStep, ValueRange{},
      [&](OpBuilder &, Location, Value kBegin, ValueRange) {
        Value kEnd =
            min(arith::AddIOp::create(b, loc, kBegin, kStep), i64(kBlocks));
        scf::ForOp::create(
            b, loc, first, last, groupStep, ValueRange{},
            [&](OpBuilder &, Location, Value g, ValueRange) {
              Value gEnd =
                  min(arith::AddIOp::create(b, loc, g, groupStep), last);
              emitColumnTiles(args, {g, gEnd, kBegin, kEnd});
              scf::YieldOp::create(b, loc);
            });
        scf::YieldOp::create(b, loc);
      });
}

void MatmulLoopNest::emitColumnTiles(const KernelArgs &args,
                                     const TileRange &range) {
  Type i64Type = b.getI64Type();
  SmallVector<int64_t, 5> widths = tiling::columnTileWidths(spec.maxCols);
  scf::WhileOp::create(
      b, loc, TypeRange{i64Type}, ValueRange{i64(0)},
      [&](OpBuilder &, Location, ValueRange cols) {
        Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           cols[0], args.m);
        scf::ConditionOp::create(b, loc, more, cols);
      },
      [&](OpBuilder &, Location, ValueRange cols) {
        Value col = cols[0];
        Value remaining = arith::SubIOp::create(b, loc, args.m, col);
        Value width = emitNextColumnTile(b, loc, remaining, spec.maxCols);
        Value index =
            arith::IndexCastOp::create(b, loc, b.getIndexType(), width);
        auto dispatch = scf::IndexSwitchOp::create(b, loc, TypeRange{}, index,
                                                   widths, widths.size());
        for (auto [w, region] :
             llvm::zip_equal(widths, dispatch.getCaseRegions())) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&region.emplaceBlock());
          emitTile(args, w, col, range);
          scf::YieldOp::create(b, loc);
        }
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(
              &dispatch.getDefaultRegion().emplaceBlock());
          scf::YieldOp::create(b, loc); // nextColumnTile returns no other
        }
        Value next = arith::AddIOp::create(b, loc, col, width);
        scf::YieldOp::create(b, loc, ValueRange{next});
      });
}

void MatmulLoopNest::emitTile(const KernelArgs &args, int64_t width, Value col,
                              const TileRange &range) {
  int64_t groupBytes = spec.k / blockElems * blockBytes;
  // With cache blocks a tile runs over many row groups: its columns'
  // corrections -offset * sum(q) are computed once into a stack buffer
  // (corrections[j][block]), and each group's int32 chains start from a
  // broadcast load of them (a load-port uop) rather than a scalar multiply
  // and a broadcast from a general register (a port-5 uop per column and
  // block, of the 104 port-0/5 uops an 8-column Q8_0 block issues).
  Value corrections;
  if (isCacheBlocked() && correction != 0 && subElems == blockElems) {
    const int64_t kBlocks = spec.k / blockElems;
    corrections = emitEntryAlloca(width * kBlocks);
    int64_t columnBytes = spec.getActivationColumnBytes();
    scf::ForOp::create(
        b, loc, range.kBegin, range.kEnd, i64(1), ValueRange{},
        [&](OpBuilder &, Location, Value blk, ValueRange) {
          Value xOffset =
              arith::MulIOp::create(b, loc, blk, i64(act.block_bytes));
          for (int64_t j = 0; j < width; ++j) {
            Value column = arith::AddIOp::create(b, loc, col, i64(j));
            Value xBlock = emitByteOffset(
                b, loc,
                emitByteOffset(
                    b, loc, args.x,
                    arith::MulIOp::create(b, loc, column, i64(columnBytes))),
                xOffset);
            Value init =
                arith::MulIOp::create(b, loc, emitSubBlockSum(xBlock, 0),
                                      arith::ConstantIntOp::create(
                                          b, loc, b.getI32Type(), -correction));
            Value slot = arith::AddIOp::create(b, loc, i64(j * kBlocks), blk);
            LLVM::StoreOp::create(
                b, loc, init,
                emitByteOffset(b, loc, corrections,
                               arith::MulIOp::create(b, loc, slot, i64(4))),
                4);
          }
          scf::YieldOp::create(b, loc);
        });
  }
  scf::ForOp::create(
      b, loc, range.groupBegin, range.groupEnd, i64(1), ValueRange{},
      [&](OpBuilder &, Location, Value g, ValueRange) {
        Value group = emitByteOffset(
            b, loc, args.w, arith::MulIOp::create(b, loc, g, i64(groupBytes)));
        Value rowBase = arith::MulIOp::create(b, loc, g, i64(spec.rows));
        emitTileGroup(args, width, col, group, rowBase, range.kBegin,
                      range.kEnd, corrections);
        scf::YieldOp::create(b, loc);
      });
}

void MatmulLoopNest::emitTileGroup(const KernelArgs &args, int64_t width,
                                   Value col, Value group, Value rowBase,
                                   Value kBegin, Value kEnd,
                                   Value corrections) {
  int64_t columnBytes = spec.getActivationColumnBytes();
  SmallVector<Value, 8> xColumns;
  for (int64_t j = 0; j < width; ++j) {
    Value column = arith::AddIOp::create(b, loc, col, i64(j));
    xColumns.push_back(emitByteOffset(
        b, loc, args.x,
        arith::MulIOp::create(b, loc, column, i64(columnBytes))));
  }

  VectorType f32Rows = rowsOf(b.getF32Type());
  VectorType i32Rows = rowsOf(b.getI32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, f32Rows, DenseElementsAttr::get(f32Rows, b.getF32FloatAttr(0)));
  SmallVector<Value, 8> inits(width, zero);
  auto yPointer = [&](int64_t j) {
    Value column = arith::AddIOp::create(b, loc, col, i64(j));
    Value element = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, column, args.ldy), rowBase);
    return emitByteOffset(b, loc, args.y,
                          arith::MulIOp::create(b, loc, element, i64(4)));
  };
  Value firstK, lastK;
  if (isCacheBlocked()) {
    // After the first K block, the sums so far are in y.
    firstK =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kBegin, i64(0));
    lastK = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kEnd,
                                  i64(spec.k / blockElems));
    for (int64_t j = 0; j < width; ++j)
      inits[j] = arith::SelectOp::create(b, loc, firstK, zero,
                                         emitLoadY(yPointer(j), rowBase));
  }
  SmallVector<DecodedLanes, 2> decoded;
  SmallVector<Value, 2> lanes, acts;

  auto loop = scf::ForOp::create(
      b, loc, kBegin, kEnd, i64(1), inits,
      [&](OpBuilder &, Location, Value blk, ValueRange accs) {
        Value block = emitByteOffset(
            b, loc, group, arith::MulIOp::create(b, loc, blk, i64(blockBytes)));
        emitPrefetch(block);
        Value wScales = decode.decodeScales(b, loc, block, spec.rows);
        Value xOffset =
            arith::MulIOp::create(b, loc, blk, i64(act.block_bytes));
        SmallVector<Value, 8> xBlocks, xScales;
        for (Value column : xColumns) {
          Value xBlock = emitByteOffset(b, loc, column, xOffset);
          xBlocks.push_back(xBlock);
          Value d = emitLoad(b, loc, b.getF32Type(), xBlock, act.scale_offset);
          xScales.push_back(vector::BroadcastOp::create(b, loc, f32Rows, d));
        }

        // Per sub-block and column, independent int32 partial sums (see
        // getIntChains), chain 0 starting from the correction: -offset *
        // sum(q), what the lanes' offset adds to the dot. A sub-block is
        // folded into the block's integer sum (times its integer scale, if
        // any) as soon as its last lanes are in.
        const int64_t numChains = getIntChains(width);
        const int64_t numSubs = blockElems / subElems;
        struct SubBlock {
          SmallVector<SmallVector<Value, 4>, 8> chains; // [column][chain]
          int64_t steps = 0, kGroups = 0;
        };
        SmallVector<SubBlock, 16> subs(numSubs);
        SmallVector<Value, 8> isums(width);
        auto startSub = [&](SubBlock &sub, int64_t index) {
          sub.chains.resize(width);
          for (auto [j, xBlock, columnChains] :
               llvm::enumerate(xBlocks, sub.chains)) {
            Value start = emitSplat(b, loc, i32Rows, 0);
            if (corrections) {
              // Computed before the tile's row groups (emitTile).
              Value slot = arith::AddIOp::create(
                  b, loc, i64(static_cast<int64_t>(j) * (spec.k / blockElems)),
                  blk);
              Value init = LLVM::LoadOp::create(
                  b, loc, b.getI32Type(),
                  emitByteOffset(b, loc, corrections,
                                 arith::MulIOp::create(b, loc, slot, i64(4))),
                  4);
              start = vector::BroadcastOp::create(b, loc, i32Rows, init);
            } else if (correction != 0) {
              Value init = arith::MulIOp::create(
                  b, loc, emitSubBlockSum(xBlock, index),
                  arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                               -correction));
              start = vector::BroadcastOp::create(b, loc, i32Rows, init);
            }
            columnChains.push_back(start);
            for (int64_t c = 1; c < numChains; ++c)
              columnChains.push_back(emitSplat(b, loc, i32Rows, 0));
          }
        };
        // Integer sums are exact in any order, so joining the chains and the
        // sub-blocks keeps the block's integer sum exact.
        auto foldSub = [&](SubBlock &sub, int64_t index) {
          Value scale =
              decode.getSubBlockScale(b, loc, block, spec.rows, index);
          for (auto [columnChains, isum] : llvm::zip_equal(sub.chains, isums)) {
            Value iacc = columnChains.front();
            for (Value chain : ArrayRef(columnChains).drop_front())
              iacc = arith::AddIOp::create(b, loc, iacc, chain);
            if (scale)
              iacc = arith::MulIOp::create(b, loc, iacc, scale);
            isum = isum ? arith::AddIOp::create(b, loc, isum, iacc) : iacc;
          }
        };

        for (int64_t step = 0; step < decode.getStepsPerBlock(); ++step) {
          decoded.clear();
          decode.decodeStep(b, loc, block, spec.rows, step, dot, decoded);
          // The step's lanes by sub-block, in the order decoded.
          SmallVector<std::pair<int64_t, SmallVector<int64_t, 4>>, 4> bySub;
          for (auto [i, d] : llvm::enumerate(decoded)) {
            int64_t index = d.kOffset / subElems;
            if (bySub.empty() || bySub.back().first != index)
              bySub.push_back({index, {}});
            bySub.back().second.push_back(i);
          }
          SmallVector<Value, 4> prepared;
          for (const DecodedLanes &d : decoded)
            prepared.push_back(dot.prepareLanes(b, loc, d.lanes, range));
          for (auto &[index, members] : bySub) {
            SubBlock &sub = subs[index];
            if (sub.chains.empty())
              startSub(sub, index);
            lanes.clear();
            for (int64_t i : members)
              lanes.push_back(prepared[i]);
            for (auto [xBlock, columnChains] :
                 llvm::zip_equal(xBlocks, sub.chains)) {
              acts.clear();
              for (int64_t i : members)
                acts.push_back(emitActivation(xBlock, decoded[i].kOffset));
              Value &chain = columnChains[sub.steps % numChains];
              chain = dot.emitDot(b, loc, chain, lanes, acts, range);
            }
            ++sub.steps;
            sub.kGroups += members.size();
            if (4 * sub.kGroups == subElems)
              foldSub(sub, index);
          }
        }

        // The mins' integer sum, sum_j min_j * asum_j, for formats with mins.
        SmallVector<Value, 8> msums(width);
        for (int64_t index = 0; index < numSubs; ++index) {
          Value mins = decode.getSubBlockMin(b, loc, block, spec.rows, index);
          if (!mins)
            break;
          for (auto [xBlock, msum] : llvm::zip_equal(xBlocks, msums)) {
            Value sum = vector::BroadcastOp::create(
                b, loc, i32Rows, emitSubBlockSum(xBlock, index));
            Value term = arith::MulIOp::create(b, loc, mins, sum);
            msum = msum ? arith::AddIOp::create(b, loc, msum, term) : term;
          }
        }

        SmallVector<Value, 8> next;
        for (auto [acc, isum, msum, xScale] :
             llvm::zip_equal(accs, isums, msums, xScales)) {
          Value sum = arith::SIToFPOp::create(b, loc, f32Rows, isum);
          Value contribution = decode.scaleBlock(b, loc, sum, wScales, xScale);
          if (msum)
            contribution = decode.subtractMins(
                b, loc, contribution,
                arith::SIToFPOp::create(b, loc, f32Rows, msum), block,
                spec.rows, xScale);
          next.push_back(arith::AddFOp::create(b, loc, acc, contribution));
        }
        scf::YieldOp::create(b, loc, next);
      });

  for (int64_t j = 0; j < width; ++j) {
    // The format's last factor and the bf16 rounding apply once, after the
    // last K block; y holds the plain sums before it.
    Value acc = loop.getResult(j);
    Value result = decode.finishSum(b, loc, acc);
    if (spec.roundToBf16)
      result = emitRoundToBf16(result);
    if (lastK && result != acc)
      result = arith::SelectOp::create(b, loc, lastK, result, acc);
    emitStore(result, yPointer(j), rowBase);
  }
}

Value MatmulLoopNest::emitEntryAlloca(int64_t count) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  Value size = arith::ConstantIntOp::create(b, loc, b.getI64Type(), count);
  return LLVM::AllocaOp::create(b, loc,
                                LLVM::LLVMPointerType::get(b.getContext()),
                                b.getI32Type(), size, 64);
}

// kf::fp32_to_bf16 then back to fp32, on the integer bits: round to nearest,
// ties to even, by adding 0x7fff plus the kept part's lowest bit; a NaN is
// truncated and made quiet instead, as the carry could turn it into an
// infinity.
Value MatmulLoopNest::emitRoundToBf16(Value acc) {
  VectorType i32Rows = rowsOf(b.getI32Type());
  auto splat = [&](int64_t v) { return emitSplat(b, loc, i32Rows, v); };
  Value bits = vector::BitCastOp::create(b, loc, i32Rows, acc);
  Value odd = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, splat(16)), splat(1));
  Value rounded = arith::AddIOp::create(
      b, loc, bits, arith::AddIOp::create(b, loc, odd, splat(0x7fff)));
  Value quieted = arith::OrIOp::create(b, loc, bits, splat(0x400000));
  Value isNaN = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ugt,
      arith::AndIOp::create(b, loc, bits, splat(0x7fffffff)),
      splat(0x7f800000));
  Value kept = arith::SelectOp::create(b, loc, isNaN, quieted, rounded);
  Value truncated = arith::AndIOp::create(
      b, loc, kept, splat(static_cast<int32_t>(0xffff0000u)));
  return vector::BitCastOp::create(b, loc, rowsOf(b.getF32Type()), truncated);
}

// The weights are one sequential stream per thread (row groups, and the K
// blocks in each, are contiguous) and, at m <= maxCols, read once from DRAM.
// The hardware prefetchers alone keep too few lines in flight for that
// stream while the core also works on it (cold M = 8 ran at half the DRAM
// roofline, and at M = 1 Q4_0 at 39 %), so each K block prefetches the bytes
// kPrefetchDistance ahead into L1: one prefetch per 64-byte line of a block,
// and consecutive blocks' prefetches are at most 64 bytes apart, so no line
// is skipped. Prefetches past the end of the tensor are hints and never
// fault. With cache blocks the weights of later column tiles come from L2,
// where the prefetches are cheap and still run ahead.
void MatmulLoopNest::emitPrefetch(Value block) {
  for (int64_t offset = 0; offset < blockBytes; offset += 64)
    LLVM::Prefetch::create(
        b, loc, emitByteOffset(b, loc, block, kPrefetchDistance + offset),
        /*rw=*/0, /*hint=*/3, /*cache=*/1);
}

// The 4 activation bytes at element kOffset of the block, broadcast to every
// row: one i32 load and splat (vpbroadcastd, or an embedded broadcast).
Value MatmulLoopNest::emitActivation(Value xBlock, int64_t kOffset) {
  Value word =
      emitLoad(b, loc, b.getI32Type(), xBlock, act.quants_offset + kOffset);
  Value splat =
      vector::BroadcastOp::create(b, loc, rowsOf(b.getI32Type()), word);
  return vector::BitCastOp::create(
      b, loc, VectorType::get({4 * spec.rows}, b.getI8Type()), splat);
}

// The Q8_0 block's int32 sum, or the Q8_K block's int16 sums of 16 that the
// sub-block covers, added.
Value MatmulLoopNest::emitSubBlockSum(Value xBlock, int64_t sub) {
  Type i32 = b.getI32Type();
  Type sumType = b.getIntegerType(8 * act.sum_bytes);
  Value total;
  for (int64_t i = sub * subElems / act.sum_elems;
       i < (sub + 1) * subElems / act.sum_elems; ++i) {
    Value sum =
        emitLoad(b, loc, sumType, xBlock, act.sums_offset + i * act.sum_bytes);
    if (sumType != i32)
      sum = arith::ExtSIOp::create(b, loc, i32, sum);
    total = total ? arith::AddIOp::create(b, loc, total, sum) : sum;
  }
  return total;
}

// Which of the R rows from rowBase are rows of the matrix (< N).
Value MatmulLoopNest::emitRowMask(Value rowBase) {
  VectorType i64Rows = rowsOf(b.getI64Type());
  SmallVector<int64_t> iota(spec.rows);
  for (int64_t r = 0; r < spec.rows; ++r)
    iota[r] = r;
  Value lanes = arith::ConstantOp::create(
      b, loc, i64Rows, DenseElementsAttr::get(i64Rows, ArrayRef(iota)));
  Value valid = vector::BroadcastOp::create(
      b, loc, i64Rows, arith::SubIOp::create(b, loc, i64(spec.n), rowBase));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lanes, valid);
}

// The R floats of y a previous K block stored (masked as emitStore).
Value MatmulLoopNest::emitLoadY(Value yPtr, Value rowBase) {
  VectorType f32Rows = rowsOf(b.getF32Type());
  if (spec.n % spec.rows == 0)
    return LLVM::LoadOp::create(b, loc, f32Rows, yPtr, 4);
  Value mask = emitRowMask(rowBase);
  Value zero = arith::ConstantOp::create(
      b, loc, f32Rows, DenseElementsAttr::get(f32Rows, b.getF32FloatAttr(0)));
  return LLVM::MaskedLoadOp::create(b, loc, f32Rows, yPtr, mask, zero,
                                    b.getI32IntegerAttr(4), nullptr);
}

// y gets R floats, except in the group holding row N - 1 when N is not a
// multiple of R: its padding rows are not the caller's memory.
void MatmulLoopNest::emitStore(Value acc, Value yPtr, Value rowBase) {
  auto fullStore = [&] { LLVM::StoreOp::create(b, loc, acc, yPtr, 4); };
  if (spec.n % spec.rows == 0) {
    fullStore();
    return;
  }
  Value full = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sle,
      arith::AddIOp::create(b, loc, rowBase, i64(spec.rows)), i64(spec.n));
  scf::IfOp::create(
      b, loc, full,
      [&](OpBuilder &, Location) {
        fullStore();
        scf::YieldOp::create(b, loc);
      },
      [&](OpBuilder &, Location) {
        LLVM::MaskedStoreOp::create(b, loc, acc, yPtr, emitRowMask(rowBase), 4);
        scf::YieldOp::create(b, loc);
      });
}

} // namespace

llvm::Expected<func::FuncOp>
buildMatmulKernel(ModuleOp module, const MatmulKernelSpec &spec,
                  const target::TargetInfo &target) {
  if (llvm::Error err = verifyMatmulKernel(spec, target))
    return std::move(err);
  std::unique_ptr<WeightDecodeEmitter> decode =
      createWeightDecodeEmitter(spec.getWeightLayout(), target);
  std::unique_ptr<DotEmitter> dot = createDotEmitter(spec.isa);

  MLIRContext *context = module.getContext();
  loadKernelDialects(*context);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = NameLoc::get(b.getStringAttr(spec.getSymbolName()));
  decode->declareConstants(b, loc, module);
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  auto type = b.getFunctionType({ptr, ptr, ptr, i64, i64, i64, i64}, {});
  auto fn = func::FuncOp::create(b, loc, spec.getSymbolName(), type);
  fn->setAttr("target_cpu", b.getStringAttr(target.cpu));
  fn->setAttr("target_features", LLVM::TargetFeaturesAttr::get(
                                     context, target.getLLVMFeatureString()));

  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  KernelArgs args{entry->getArgument(0), entry->getArgument(1),
                  entry->getArgument(2), entry->getArgument(3),
                  entry->getArgument(4), entry->getArgument(5),
                  entry->getArgument(6)};
  MatmulLoopNest(b, loc, spec, *decode, *dot).build(args);
  func::ReturnOp::create(b, loc);
  return fn;
}

} // namespace kf::codegen
