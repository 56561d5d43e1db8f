//===- IndexerScoresEmitter.cpp - The compiled kf.indexer_scores ----------===//
//
// The golden's indexerScores, 16 entries at a time, a lane per entry: each
// lane runs the golden's IEEE operations on its entry in the golden's
// order, so every visible score is bit for bit.
//
// - Per call and token: the query's H · d floats widened to fp64 on the
//   stack, so that the inner loop broadcasts a double from memory (a load)
//   rather than converting a float (an instruction on the FMA ports), and
//   w[h] = bf16(fp32(weights[t, h] · scale)) as the interpreter computes it.
// - Per 16 entries: their keys transposed (16 × 16 blocks of floats by
//   vector shuffles) and widened into d vectors of 16 doubles on the stack,
//   one per k, read by every head. A partial last group of an item repeats
//   its last entry in the spare lanes, which are not stored.
// - Per head: dot = Σ_k q[h, k] · key[k] from +0 in k order, each lane its
//   own chain; the product of two floats is exact in fp64, so an FMA rounds
//   as the golden's product and sum, and the portable kernel (which has no
//   FMA instruction: llvm.fma would call libm) multiplies and adds. A tile
//   of heads (8 with AVX-512, 2 with AVX2 or NEON, else 1) shares each key
//   vector, its accumulators independent chains that hide the FMA latency.
//   Then, head by head in order: logit = bf16(fp32(dot)), std::max(logit,
//   0) (logit < 0 ? 0 : logit: a NaN and a -0 stay), bf16(fp32(· w[h])),
//   added to the entry's fp64 sum from +0.
// - score = bf16(fp32(sum)), -inf for entries at or past the visible ones.
//   A group wholly past them is not computed.
//
// The keys of entries past the visible ones may hold anything (a cache's
// unwritten rows): a partly visible group computes them and stores -inf.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/IndexerScoresKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

using namespace mlir;

namespace kf::codegen {

namespace {

/// Entries per group: a vector of 16 floats, two or four of doubles.
constexpr int64_t kLanes = 16;
constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxStackBytes = int64_t{1} << 20;

/// The kernel's stack: the widened query, w, the transposed keys.
int64_t stackBytes(const IndexerScoresKernelSpec &spec) {
  return 8 * spec.heads * spec.dim + 4 * spec.heads + 8 * kLanes * spec.dim;
}

/// Heads per tile: as many as the target's vector registers hold
/// accumulators of 16 doubles for, with the key vector beside them.
int64_t headTile(const target::TargetInfo &target, int64_t heads) {
  int64_t tile = 1;
  if (target.has(target::Feature::AVX512F))
    tile = 8;
  else if (target.has(target::Feature::AVX2) ||
           target.arch == target::Arch::AArch64)
    tile = 2;
  while (heads % tile != 0)
    tile /= 2;
  return tile;
}

bool hasFma(const target::TargetInfo &target) {
  return target.arch == target::Arch::AArch64 ||
         target.has(target::Feature::FMA);
}

/// Transposes the 16 × 16 floats of `rows` (16 vectors of 16): stage by
/// stage, rows i and i + s (i mod 2s < s) swap their off-diagonal s × s
/// blocks, for s = 8, 4, 2, 1.
void emitTranspose(OpBuilder &b, Location loc,
                   llvm::SmallVectorImpl<Value> &rows) {
  for (int64_t s = kLanes / 2; s >= 1; s /= 2) {
    llvm::SmallVector<int64_t, kLanes> low, high;
    for (int64_t l = 0; l < kLanes; ++l) {
      const int64_t group = l / (2 * s) * (2 * s), u = l % (2 * s);
      // Lanes of the first operand are 0..15, of the second 16..31.
      low.push_back(u < s ? group + u : kLanes + group + u - s);
      high.push_back(u < s ? group + s + u : kLanes + group + u);
    }
    for (int64_t i = 0; i < kLanes; ++i) {
      if (i % (2 * s) >= s)
        continue;
      Value a = rows[i], c = rows[i + s];
      rows[i] = vector::ShuffleOp::create(b, loc, a, c, low);
      rows[i + s] = vector::ShuffleOp::create(b, loc, a, c, high);
    }
  }
}

} // namespace

int64_t IndexerScoresKernelSpec::defaultEntryBlock(int64_t entries) {
  if (entries <= 64)
    return std::max<int64_t>(entries, 1);
  for (int64_t block = 64; block >= kLanes; block -= kLanes)
    if (entries % block == 0)
      return block;
  for (int64_t block = 64; block >= kLanes; --block)
    if (entries % block == 0)
      return block;
  // The smallest divisor above 64, up to E itself.
  for (int64_t block = 65; block * block <= entries; ++block)
    if (entries % block == 0)
      return block;
  for (int64_t cofactor = static_cast<int64_t>(std::sqrt(entries));
       cofactor >= 1; --cofactor)
    if (entries % cofactor == 0 && entries / cofactor > 64)
      return entries / cofactor;
  return entries;
}

int64_t IndexerScoresKernelSpec::getItemsPerToken() const {
  return entries / entryBlock;
}

std::string IndexerScoresKernelSpec::getSymbolName() const {
  return llvm::formatv(
             "kf_indexer_scores_h{0}_d{1}_e{2}_r{3}_b{4}_s{5}", heads, dim,
             entries, ratio, entryBlock,
             llvm::format_hex_no_prefix(llvm::bit_cast<uint32_t>(scale), 8))
      .str();
}

std::string IndexerScoresKernelSpec::describe() const {
  return llvm::formatv("indexer_scores kernel [H = {0}, d = {1}, E = {2}, "
                       "scale = {3}, ratio = {4}, block = {5}]",
                       heads, dim, entries, formatShortest(scale), ratio,
                       entryBlock)
      .str();
}

llvm::Error verifyIndexerScoresKernel(const IndexerScoresKernelSpec &spec) {
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError((spec.describe() + ": " + what).str());
  };
  if (spec.heads < 1)
    return fail("expected at least one head");
  if (spec.dim <= 0 || spec.dim % kLanes != 0)
    return fail(
        llvm::formatv("expected d a positive multiple of {0}", kLanes).str());
  if (spec.entries < 1 || spec.entries > kMaxIndex)
    return fail(llvm::formatv("expected E in [1, {0}]", kMaxIndex).str());
  if (spec.ratio < 1)
    return fail("expected a ratio of at least 1");
  if (spec.entryBlock < 1 || spec.entries % spec.entryBlock != 0)
    return fail("expected a block dividing E");
  if (!std::isfinite(spec.scale))
    return fail("expected a finite scale");
  if (stackBytes(spec) > kMaxStackBytes)
    return fail(llvm::formatv("expected H at most {0} for d = {1} (the "
                              "kernel's stack of 1 MiB)",
                              (kMaxStackBytes - 8 * kLanes * spec.dim) /
                                  (8 * spec.dim + 4),
                              spec.dim)
                    .str());
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildIndexerScoresKernel(ModuleOp module, const IndexerScoresKernelSpec &spec,
                         const target::TargetInfo &target) {
  if (llvm::Error err = verifyIndexerScoresKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  using arith::CmpFPredicate;
  using arith::CmpIPredicate;
  Type f32 = b.getF32Type(), f64 = b.getF64Type(), i64 = b.getI64Type();
  auto floats = VectorType::get({kLanes}, f32);
  auto doubles = VectorType::get({kLanes}, f64);
  auto longs = VectorType::get({kLanes}, i64);
  auto times = [&](Value v, int64_t factor) -> Value {
    return arith::MulIOp::create(b, loc, v, kb.index(factor));
  };
  auto plus = [&](Value l, Value r) -> Value {
    return arith::AddIOp::create(b, loc, l, r);
  };
  auto minus = [&](Value l, Value r) -> Value {
    return arith::SubIOp::create(b, loc, l, r);
  };
  auto cmpi = [&](CmpIPredicate p, Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, loc, p, l, r);
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto splat = [&](Type type, Value v) -> Value {
    return vector::BroadcastOp::create(b, loc, type, v);
  };
  auto roundBf16 = [&](Value doublesOrFloats) -> Value {
    auto type = cast<VectorType>(doublesOrFloats.getType());
    Value v = doublesOrFloats;
    if (type.getElementType().isF64())
      v = arith::TruncFOp::create(b, loc, VectorType::get(type.getShape(), f32),
                                  v);
    return emitRoundToBf16(b, loc, v);
  };
  const Value negInf =
      kb.splat(floats, -std::numeric_limits<double>::infinity());

  const int64_t heads = spec.heads, dim = spec.dim, entries = spec.entries;
  const int64_t block = spec.entryBlock, blocks = spec.getItemsPerToken();
  const int64_t tile = headTile(target, heads);
  const bool fma = hasFma(target);
  Value query = emitStepOperand(b, loc, args, 0);
  Value weights = emitStepOperand(b, loc, args, 1);
  Value keys = emitStepOperand(b, loc, args, 2);
  Value positions = emitStepOperand(b, loc, args, 3);
  Value out = emitStepOperand(b, loc, args, 4);
  // The stack, at the entry so that LLVM allocates it once: the widened
  // query [H, d], w [H], the transposed keys [d, 16] (rows of 128 bytes).
  Value wideQuery = LLVM::AllocaOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), b.getI8Type(),
      kb.index(stackBytes(spec)), /*alignment=*/64);
  Value keyColumns = emitByteOffset(b, loc, wideQuery, 8 * heads * dim);
  Value headWeights = emitByteOffset(b, loc, keyColumns, 8 * kLanes * dim);

  llvm::SmallVector<int64_t, kLanes> iotaValues(kLanes);
  std::iota(iotaValues.begin(), iotaValues.end(), 0);
  auto iota = [&]() -> Value {
    return arith::ConstantOp::create(
        b, loc, longs,
        DenseElementsAttr::get(longs, llvm::ArrayRef(iotaValues)));
  };

  // The scores of the `lanes` entries from `first` (the spare lanes repeat
  // the last entry's key).
  auto emitGroup = [&](Value first, int64_t lanes) -> Value {
    // The keys, transposed and widened: keyColumns[k] = the entries' k-th
    // values.
    kb.forEach(kb.index(0), kb.index(dim), kLanes, [&](Value k0) {
      llvm::SmallVector<Value, kLanes> rows;
      for (int64_t i = 0; i < kLanes; ++i) {
        Value entry = plus(first, kb.index(std::min(i, lanes - 1)));
        rows.push_back(kb.load(floats, keys,
                               times(plus(times(entry, dim), k0), 4),
                               /*alignment=*/4));
      }
      emitTranspose(b, loc, rows);
      Value column = times(k0, 8 * kLanes);
      for (int64_t i = 0; i < kLanes; ++i)
        kb.store(arith::ExtFOp::create(b, loc, doubles, rows[i]), keyColumns,
                 plus(column, kb.index(8 * kLanes * i)), /*alignment=*/64);
    });

    // The heads, tile by tile, into the fp64 sum from +0.
    auto tiles =
        scf::ForOp::create(b, loc, kb.index(0), kb.index(heads), kb.index(tile),
                           ValueRange{kb.splat(doubles, 0.0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(tiles.getBody());
      Value head0 = tiles.getInductionVar();
      Value tileQuery =
          emitByteOffset(b, loc, wideQuery, times(head0, 8 * dim));
      llvm::SmallVector<Value> zeros(tile, kb.splat(doubles, 0.0));
      auto dots = scf::ForOp::create(b, loc, kb.index(0), kb.index(dim),
                                     kb.index(1), zeros);
      {
        OpBuilder::InsertionGuard dotGuard(b);
        b.setInsertionPointToStart(dots.getBody());
        Value k = dots.getInductionVar();
        Value key = kb.load(doubles, keyColumns, times(k, 8 * kLanes),
                            /*alignment=*/64);
        llvm::SmallVector<Value> next;
        for (int64_t j = 0; j < tile; ++j) {
          Value q =
              splat(doubles, kb.load(f64, tileQuery,
                                     plus(times(k, 8), kb.index(8 * j * dim)),
                                     /*alignment=*/8));
          Value acc = dots.getRegionIterArg(j);
          next.push_back(
              fma ? vector::FMAOp::create(b, loc, q, key, acc).getResult()
                  : kb.add(acc, kb.mul(q, key)));
        }
        scf::YieldOp::create(b, loc, next);
      }
      Value sum = tiles.getRegionIterArg(0);
      for (int64_t j = 0; j < tile; ++j) {
        Value logit = roundBf16(dots.getResult(j));
        // std::max(logit, 0.0f): logit < 0 ? 0 : logit.
        Value relu = select(arith::CmpFOp::create(b, loc, CmpFPredicate::OLT,
                                                  logit, kb.splat(floats, 0.0)),
                            kb.splat(floats, 0.0), logit);
        Value w = splat(floats, kb.load(f32, headWeights,
                                        times(plus(head0, kb.index(j)), 4),
                                        /*alignment=*/4));
        sum = kb.add(sum, arith::ExtFOp::create(b, loc, doubles,
                                                roundBf16(kb.mul(relu, w))));
      }
      scf::YieldOp::create(b, loc, ValueRange{sum});
    }
    return roundBf16(tiles.getResult(0));
  };

  // Items [begin, end) are tokens' blocks: token by token, its blocks in
  // the range.
  auto any =
      scf::IfOp::create(b, loc, cmpi(CmpIPredicate::slt, args.begin, args.end),
                        /*withElseRegion=*/false);
  b.setInsertionPointToStart(&any.getThenRegion().front());
  Value firstToken =
      arith::DivUIOp::create(b, loc, args.begin, kb.index(blocks));
  Value endToken =
      plus(arith::DivUIOp::create(b, loc, minus(args.end, kb.index(1)),
                                  kb.index(blocks)),
           kb.index(1));
  kb.forEach(firstToken, endToken, 1, [&](Value token) {
    Value tokenItem = times(token, blocks);
    Value blockBegin = arith::MaxSIOp::create(
        b, loc, minus(args.begin, tokenItem), kb.index(0));
    Value blockEnd = arith::MinSIOp::create(b, loc, minus(args.end, tokenItem),
                                            kb.index(blocks));
    Value p = kb.load(i64, positions, times(token, 8), /*alignment=*/8);
    Value visible = arith::MinUIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, plus(p, kb.index(1)),
                               kb.index(spec.ratio)),
        kb.index(entries));
    Value scoreRow = emitByteOffset(b, loc, out, times(token, 4 * entries));

    // The token's query and w, where a block of the range has entries it
    // sees.
    auto prepare = scf::IfOp::create(
        b, loc, cmpi(CmpIPredicate::slt, times(blockBegin, block), visible),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&prepare.getThenRegion().front());
      Value queryRow =
          emitByteOffset(b, loc, query, times(token, 4 * heads * dim));
      kb.forEach(kb.index(0), kb.index(heads * dim), kLanes, [&](Value i) {
        kb.store(arith::ExtFOp::create(
                     b, loc, doubles,
                     kb.load(floats, queryRow, times(i, 4), /*alignment=*/4)),
                 wideQuery, times(i, 8), /*alignment=*/64);
      });
      Value weightRow =
          emitByteOffset(b, loc, weights, times(token, 4 * heads));
      auto single = VectorType::get({1}, f32);
      Value scale = kb.splat(single, spec.scale);
      kb.forEach(kb.index(0), kb.index(heads), 1, [&](Value h) {
        Value w = kb.load(single, weightRow, times(h, 4), /*alignment=*/4);
        kb.store(emitRoundToBf16(b, loc, kb.mul(w, scale)), headWeights,
                 times(h, 4), /*alignment=*/4);
      });
    }

    kb.forEach(blockBegin, blockEnd, 1, [&](Value blockIndex) {
      Value blockFirst = times(blockIndex, block);
      // The group of `lanes` entries from entry `first` of the block.
      auto scoreGroup = [&](Value first, int64_t lanes) {
        auto seen = scf::IfOp::create(b, loc, TypeRange{floats},
                                      cmpi(CmpIPredicate::slt, first, visible),
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&seen.getThenRegion().front());
          scf::YieldOp::create(b, loc, ValueRange{emitGroup(first, lanes)});
          b.setInsertionPointToStart(&seen.getElseRegion().front());
          scf::YieldOp::create(b, loc, ValueRange{negInf});
        }
        Value shown =
            cmpi(CmpIPredicate::slt, plus(splat(longs, first), iota()),
                 splat(longs, visible));
        Value scores = select(shown, seen.getResult(0), negInf);
        if (lanes < kLanes) {
          llvm::SmallVector<int64_t, kLanes> kept(lanes);
          std::iota(kept.begin(), kept.end(), 0);
          scores = vector::ShuffleOp::create(b, loc, scores, scores, kept);
        }
        kb.store(scores, scoreRow, times(first, 4), /*alignment=*/4);
      };
      const int64_t whole = block / kLanes * kLanes;
      if (whole > 0)
        kb.forEach(kb.index(0), kb.index(whole), kLanes, [&](Value offset) {
          scoreGroup(plus(blockFirst, offset), kLanes);
        });
      if (block > whole)
        scoreGroup(plus(blockFirst, kb.index(whole)), block - whole);
    });
  });

  b.setInsertionPointAfter(any);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
