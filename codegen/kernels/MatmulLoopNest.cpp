//===- MatmulLoopNest.cpp - The matmul loop nest, for every kernel family -===//
//
// One loop nest for every format and ISA (docs/codegen.md):
//
//   for each row group g of R rows in [nBegin, nEnd):
//     for each column tile (width c from the run-time decomposition of m):
//       acc[c] = 0                                  (vector<R x f32> each)
//       for each K block b:                         (weights read once per
//         prefetch the weights ahead                 tile, from L1/L2 after
//         the family's block body (MatmulBlockBody)  the first tile)
//       store acc[j] to y[j][g*R ..]                 (masked past N)
//
// Each column tile width is its own straight-line micro-kernel (every
// column's accumulators live in registers), chosen at run time by an
// scf.index_switch on the width nextColumnTile gives. The block body updates
// the accumulators: the int8 family decodes the weights into int8 lanes and
// scales exact integer dots (IntegerBlockBody.cpp), the float family
// multiplies and adds in fp32 (FloatBlockBody.cpp).
//
// With cache blocks (the spec's l1K / l2Rows) and more columns than one tile,
// K and the rows are blocked around the column tiles (see build()), so that a
// tile's activations stay in L1 and a row block's weights in L2; a kernel that
// decodes once (the spec's decodeOnce) decodes each row block into a stack
// scratch before its tiles, which then read the lanes there instead of
// decoding them again.
//
//===----------------------------------------------------------------------===//

#include "MatmulLoopNest.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/MatmulEmitter.h"
#include "kf/Tiling/ColumnTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace kf::codegen {

Value emitEntryAlloca(OpBuilder &b, Location loc, Block *entry, Type element,
                      int64_t count) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  Value size = arith::ConstantIntOp::create(b, loc, b.getI64Type(), count);
  return LLVM::AllocaOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), element, size, 64);
}

void emitColumnLoop(OpBuilder &b, Location loc, Value m,
                    function_ref<Value(Value col)> step) {
  Type i64 = b.getI64Type();
  scf::WhileOp::create(
      b, loc, TypeRange{i64},
      ValueRange{arith::ConstantIntOp::create(b, loc, i64, 0)},
      [&](OpBuilder &, Location, ValueRange cols) {
        Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           cols[0], m);
        scf::ConditionOp::create(b, loc, more, cols);
      },
      [&](OpBuilder &, Location, ValueRange cols) {
        Value taken = step(cols[0]);
        scf::YieldOp::create(
            b, loc, ValueRange{arith::AddIOp::create(b, loc, cols[0], taken)});
      });
}

namespace {

class MatmulLoopNest {
public:
  MatmulLoopNest(OpBuilder &b, Location loc, const MatmulKernelSpec &spec,
                 MatmulBlockBody &body)
      : b(b), loc(loc), spec(spec), body(body),
        blockBytes(body.getBlockBytes()), blockElems(body.getBlockElems()),
        kBlocks(llvm::divideCeil(spec.k, blockElems)),
        blockKBlocks(spec.l1K != 0 ? llvm::divideCeil(spec.l1K, blockElems)
                                   : kBlocks),
        blockRowGroups(spec.l2Rows != 0 ? spec.l2Rows / spec.rows : 1),
        act(kf::activationLayout(spec.getActivationFormat())) {
    assert(blockElems % act.blockElems == 0 &&
           "a weight block covers whole activation blocks");
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
  /// [groupBegin, groupEnd) and the K blocks [kBegin, kEnd), and where they
  /// are decoded when the nest decodes them once (else null).
  struct TileRange {
    Value groupBegin, groupEnd, kBegin, kEnd, decoded;
  };
  bool isCacheBlocked() const { return spec.l1K != 0 || spec.l2Rows != 0; }
  /// For each K block of kStep blocks, each row block of groupStep groups of
  /// [first, last): the column tiles, after decoding the row block into
  /// `scratch` when given.
  void emitNest(const KernelArgs &args, Value first, Value last, Value kStep,
                Value groupStep, Value scratch);
  void emitDecodeOnce(const KernelArgs &args, const TileRange &range);
  Value emitDecodedSlot(const TileRange &range, Value g, Value blk);
  /// Row group g's packed weights.
  Value emitGroupWeights(const KernelArgs &args, Value g);
  void emitColumnTiles(const KernelArgs &args, const TileRange &range);
  void emitTile(const KernelArgs &args, int64_t width, Value col,
                const TileRange &range);
  void emitTileGroup(const KernelArgs &args, int64_t width, Value col, Value g,
                     const TileRange &range, Value tileState);
  /// Prefetches share `step` of `steps` of the `bytes` at `block` `plan`'s
  /// distances ahead (by default all of them).
  void emitPrefetch(Value block, int64_t bytes, const WeightPrefetch &plan,
                    int64_t step = 0, int64_t steps = 1);
  Value emitRowMask(Value rowBase);
  Value emitLoadY(Value yPtr, Value rowBase);
  void emitStore(Value acc, Value yPtr, Value rowBase);

  OpBuilder &b;
  Location loc;
  const MatmulKernelSpec &spec;
  MatmulBlockBody &body;
  int64_t blockBytes, blockElems, kBlocks;
  /// The K blocks of an L1 block and the row groups of an L2 block, when
  /// the nest is cache-blocked and the call has more than one tile.
  int64_t blockKBlocks, blockRowGroups;
  kf::ActivationLayout act;
};

// Without cache blocks (or with at most one column tile) the nest is: for
// each row group, each column tile over all of K; the group's weights are
// read from memory once and stay in L1/L2 for the group's other tiles. With
// them, for m > maxCols:
//
//   for each K block of l1K elements:
//     for each row block of l2Rows rows of [nBegin, nEnd):
//       [decode once: decode the row block's blocks into the scratch]
//       for each column tile:            (its activations stay in L1)
//         for each row group of the block: (the block's weights in L2)
//           acc = first K block ? 0 : y;  ... ;  y = acc
//
// y holds the fp32 sums between K blocks: storing and reloading them is
// exact, and the blocks are still added in K order, so the results are the
// same bits as unblocked. Decoding once changes where the tiles' lanes come
// from, not what they are, so neither does it.
void MatmulLoopNest::build(const KernelArgs &args) {
  // nBegin is a multiple of R; nEnd is one too or N, whose group is partial.
  Value rows = i64(spec.rows);
  Value first = arith::DivSIOp::create(b, loc, args.nBegin, rows);
  Value last = arith::DivSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, args.nEnd, i64(spec.rows - 1)),
      rows);
  if (!isCacheBlocked()) {
    emitNest(args, first, last, i64(kBlocks), i64(1), {});
    return;
  }
  Value wide = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, args.m,
                                     i64(spec.maxCols));
  Value blockK = i64(blockKBlocks), blockGroups = i64(blockRowGroups);
  // A call of one column tile runs it over all the rows at once (the
  // same traversal as group by group), so what the body prepares once per
  // tile (the int8 family's corrections, a one-column tile's masked
  // activation words) is computed once per call.
  Value allGroups = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, last, first), i64(1));
  if (!spec.decodeOnce) {
    emitNest(args, first, last,
             arith::SelectOp::create(b, loc, wide, blockK, i64(kBlocks)),
             arith::SelectOp::create(b, loc, wide, blockGroups, allGroups), {});
    return;
  }
  // A one-tile call decodes as it goes, as without decode once: it reads
  // each block once anyway. The scratch is allocated here, in the entry
  // block: decode once never runs in a fused quantization's chunk loop
  // (verifyMatmulKernel refuses both).
  assert(body.getDecodedBlockBytes() * blockKBlocks * blockRowGroups ==
             spec.getDecodeScratchBytes() &&
         "the scratch holds a row block's blocks decoded");
  Value scratch = emitEntryAlloca(b, loc, b.getInsertionBlock(), b.getI8Type(),
                                  spec.getDecodeScratchBytes());
  scf::IfOp::create(
      b, loc, wide,
      [&](OpBuilder &, Location) {
        emitNest(args, first, last, blockK, blockGroups, scratch);
        scf::YieldOp::create(b, loc);
      },
      [&](OpBuilder &, Location) {
        emitNest(args, first, last, i64(kBlocks), allGroups, {});
        scf::YieldOp::create(b, loc);
      });
}

void MatmulLoopNest::emitNest(const KernelArgs &args, Value first, Value last,
                              Value kStep, Value groupStep, Value scratch) {
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
              TileRange range{g, gEnd, kBegin, kEnd, scratch};
              if (scratch)
                emitDecodeOnce(args, range);
              emitColumnTiles(args, range);
              scf::YieldOp::create(b, loc);
            });
        scf::YieldOp::create(b, loc);
      });
}

// The row block's blocks decoded into the scratch, group after group, each
// group's K blocks in order (emitDecodedSlot), as the column tiles then read
// them. The decode reads the packed weights once, a sequential stream as a
// one-column tile's, and prefetches it as one does.
void MatmulLoopNest::emitDecodeOnce(const KernelArgs &args,
                                    const TileRange &range) {
  WeightPrefetch plan =
      spec.prefetch.value_or(getDefaultWeightPrefetch(spec.format, 1));
  scf::ForOp::create(
      b, loc, range.groupBegin, range.groupEnd, i64(1), ValueRange{},
      [&](OpBuilder &, Location, Value g, ValueRange) {
        Value group = emitGroupWeights(args, g);
        scf::ForOp::create(
            b, loc, range.kBegin, range.kEnd, i64(1), ValueRange{},
            [&](OpBuilder &, Location, Value blk, ValueRange) {
              Value block = emitByteOffset(
                  b, loc, group,
                  arith::MulIOp::create(b, loc, blk, i64(blockBytes)));
              emitPrefetch(block, blockBytes, plan);
              body.emitDecode(b, loc, block, emitDecodedSlot(range, g, blk));
              scf::YieldOp::create(b, loc);
            });
        scf::YieldOp::create(b, loc);
      });
}

// Where block `blk` of row group `g` is decoded in the scratch: the row
// block's groups one after another, each holding blockKBlocks blocks (the
// last K block may fill fewer).
Value MatmulLoopNest::emitDecodedSlot(const TileRange &range, Value g,
                                      Value blk) {
  Value slot = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc,
                            arith::SubIOp::create(b, loc, g, range.groupBegin),
                            i64(blockKBlocks)),
      arith::SubIOp::create(b, loc, blk, range.kBegin));
  return emitByteOffset(
      b, loc, range.decoded,
      arith::MulIOp::create(b, loc, slot, i64(body.getDecodedBlockBytes())));
}

Value MatmulLoopNest::emitGroupWeights(const KernelArgs &args, Value g) {
  return emitByteOffset(
      b, loc, args.w,
      arith::MulIOp::create(b, loc, g, i64(kBlocks * blockBytes)));
}

void MatmulLoopNest::emitColumnTiles(const KernelArgs &args,
                                     const TileRange &range) {
  SmallVector<int64_t, 5> widths = tiling::columnTileWidths(spec.maxCols);
  emitColumnLoop(b, loc, args.m, [&](Value col) {
    Value remaining = arith::SubIOp::create(b, loc, args.m, col);
    Value width = emitNextColumnTile(b, loc, remaining, spec.maxCols);
    Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), width);
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
      b.setInsertionPointToStart(&dispatch.getDefaultRegion().emplaceBlock());
      scf::YieldOp::create(b, loc); // nextColumnTile returns no other
    }
    return width;
  });
}

void MatmulLoopNest::emitTile(const KernelArgs &args, int64_t width, Value col,
                              const TileRange &range) {
  Value tileState =
      body.prepareTile(b, loc, args, width, col, range.kBegin, range.kEnd);
  scf::ForOp::create(b, loc, range.groupBegin, range.groupEnd, i64(1),
                     ValueRange{},
                     [&](OpBuilder &, Location, Value g, ValueRange) {
                       emitTileGroup(args, width, col, g, range, tileState);
                       scf::YieldOp::create(b, loc);
                     });
}

void MatmulLoopNest::emitTileGroup(const KernelArgs &args, int64_t width,
                                   Value col, Value g, const TileRange &range,
                                   Value tileState) {
  Value group = emitGroupWeights(args, g);
  Value rowBase = arith::MulIOp::create(b, loc, g, i64(spec.rows));
  Value kBegin = range.kBegin, kEnd = range.kEnd;
  int64_t columnBytes = spec.getActivationColumnBytes();
  SmallVector<Value, 8> xColumns;
  for (int64_t j = 0; j < width; ++j) {
    Value column = arith::AddIOp::create(b, loc, col, i64(j));
    xColumns.push_back(emitByteOffset(
        b, loc, args.x,
        arith::MulIOp::create(b, loc, column, i64(columnBytes))));
  }

  VectorType f32Rows = rowsOf(b.getF32Type());
  Value zero = arith::ConstantOp::create(
      b, loc, f32Rows, DenseElementsAttr::get(f32Rows, b.getF32FloatAttr(0)));
  const int64_t perColumn = body.getAccumulators(width);
  SmallVector<Value, 32> inits(width * perColumn, zero);
  auto yPointer = [&](int64_t j) {
    Value column = arith::AddIOp::create(b, loc, col, i64(j));
    Value element = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, column, args.ldy), rowBase);
    return emitByteOffset(b, loc, args.y,
                          arith::MulIOp::create(b, loc, element, i64(4)));
  };
  Value lastK;
  if (isCacheBlocked()) {
    // After the first K block, the sums so far are in y.
    Value firstK =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kBegin, i64(0));
    lastK = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kEnd,
                                  i64(kBlocks));
    for (int64_t j = 0; j < width; ++j)
      inits[j * perColumn] = arith::SelectOp::create(
          b, loc, firstK, zero, emitLoadY(yPointer(j), rowBase));
  }

  auto loop = scf::ForOp::create(
      b, loc, kBegin, kEnd, i64(1), inits,
      [&](OpBuilder &, Location, Value blk, ValueRange accs) {
        Value block = emitByteOffset(
            b, loc, group, arith::MulIOp::create(b, loc, blk, i64(blockBytes)));
        // The tile's stream: the packed weights, or the decoded ones.
        WeightPrefetch plan = spec.prefetch.value_or(
            getDefaultWeightPrefetch(spec.format, width));
        Value decoded, stream = block;
        int64_t streamBytes = blockBytes;
        if (range.decoded) {
          decoded = stream = emitDecodedSlot(range, g, blk);
          streamBytes = body.getDecodedBlockBytes();
        }
        // In shares as the body decodes the block (emitPrefetch's comment
        // says why); a tile reading decoded lanes prefetches them at once.
        auto prefetchShare = [&](int64_t step, int64_t steps) {
          emitPrefetch(stream, streamBytes, plan, step, steps);
        };
        llvm::function_ref<void(int64_t, int64_t)> prefetch;
        if (!range.decoded)
          prefetch = prefetchShare;
        else
          emitPrefetch(stream, streamBytes, plan);
        // A weight block may span several activation blocks (FRACTAL64's
        // and VQ3_64's 64 weights, two Q8_0 blocks); xBlocks is the first.
        Value xOffset = arith::MulIOp::create(
            b, loc, blk, i64(blockElems / act.blockElems * act.blockBytes));
        SmallVector<Value, 8> xBlocks;
        for (Value column : xColumns)
          xBlocks.push_back(emitByteOffset(b, loc, column, xOffset));
        SmallVector<Value, 32> next(accs.begin(), accs.end());
        body.emitBlock(
            b, loc, {block, blk, xBlocks, tileState, decoded, prefetch}, next);
        scf::YieldOp::create(b, loc, next);
      });

  for (int64_t j = 0; j < width; ++j) {
    // A column's chains, added pairwise: (c0 + c1) + (c2 + c3), ...
    SmallVector<Value, 8> sums(
        loop.getResults().slice(j * perColumn, perColumn));
    while (sums.size() > 1) {
      SmallVector<Value, 8> pairs;
      for (size_t i = 0; i + 1 < sums.size(); i += 2)
        pairs.push_back(arith::AddFOp::create(b, loc, sums[i], sums[i + 1]));
      if (sums.size() % 2 != 0)
        pairs.push_back(sums.back());
      sums = std::move(pairs);
    }
    // The format's last factor and the bf16 rounding apply once, after the
    // last K block; y holds the plain sums before it.
    Value acc = sums.front();
    Value result = body.finishSum(b, loc, acc);
    if (spec.roundToBf16)
      result = emitRoundToBf16(b, loc, result);
    if (lastK && result != acc)
      result = arith::SelectOp::create(b, loc, lastK, result, acc);
    emitStore(result, yPointer(j), rowBase);
  }
}

// The weights are one sequential stream per thread (row groups, and the K
// blocks in each, are contiguous) and, at m <= maxCols, read once from DRAM.
// The hardware prefetchers alone keep too few lines in flight for that
// stream while the core also works on it, so each K block prefetches the
// bytes some distance ahead: one prefetch per 64-byte line of a block, and
// consecutive blocks' prefetches are at most 64 bytes apart, so no line is
// skipped. How far, and into which cache, depends on how fast the tile eats
// the stream (getDefaultWeightPrefetch): a fast tile needs prefetches far
// ahead into L2, whose miss queue is deeper than the L1's miss buffers,
// beside near ones into L1 (docs/codegen.md, "Weight prefetch"; the sweeps
// are in docs/codegen-measurements.md, "Weight prefetch"). Prefetches past
// the end of the tensor are hints and never fault. With cache blocks the
// weights of later column tiles come from L2, where the prefetches are cheap
// and still run ahead; decoding once, the tiles' stream is the decoded row
// block, prefetched the same way, and the decode's the packed weights, as a
// one-column tile's.
//
// A tile that decodes its weights issues a block's prefetches in shares, one
// per decode step (BlockOperands::prefetch), each share's far lines and then
// its near ones: with all of a block's far prefetches before all of its
// near ones, the near lines it was about to load would queue behind
// prefetches to DRAM (most likely for the L1's miss buffers). Nothing depends
// on a prefetch, so LLVM's machine scheduler would gather the shares again into
// one burst (of 36 to 53 at the loop's end in Q6_K's 4-column tile). With the
// plan's keepOrder an empty asm statement with side effects follows each share:
// it emits no instruction, but no memory operation moves across it, so the
// share stays between its step's loads. getDefaultWeightPrefetch says where
// the order is not kept (docs/codegen.md, "Prefetches in order"; the gains
// are in docs/codegen-measurements.md, "Prefetches in order"). The tiles
// that read the decode-once scratch, and the decode pass, prefetch a whole
// block at its start.
void MatmulLoopNest::emitPrefetch(Value block, int64_t bytes,
                                  const WeightPrefetch &plan, int64_t step,
                                  int64_t steps) {
  const int64_t lines = llvm::divideCeil(bytes, 64);
  const int64_t first = llvm::divideCeil(step * lines, steps);
  const int64_t end = llvm::divideCeil((step + 1) * lines, steps);
  for (auto [distance, locality] :
       {std::pair{plan.l2Bytes, 2}, std::pair{plan.l1Bytes, 3}}) {
    if (distance == 0)
      continue;
    for (int64_t line = first; line < end; ++line)
      LLVM::Prefetch::create(
          b, loc, emitByteOffset(b, loc, block, distance + 64 * line),
          /*rw=*/0, /*hint=*/locality, /*cache=*/1);
  }
  if (plan.keepOrder && steps > 1)
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, ValueRange{},
                              /*asm_string=*/"", /*constraints=*/"",
                              /*has_side_effects=*/true,
                              /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None,
                              LLVM::AsmDialectAttr{}, ArrayAttr{});
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

void emitMatmulLoopNest(OpBuilder &b, Location loc,
                        const MatmulKernelSpec &spec, MatmulBlockBody &body,
                        const KernelArgs &args) {
  MatmulLoopNest(b, loc, spec, body).build(args);
}

} // namespace kf::codegen
