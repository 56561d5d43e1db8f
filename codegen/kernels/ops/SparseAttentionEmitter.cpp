//===- SparseAttentionEmitter.cpp - The compiled kf.sparse_attention ------===//
//
// The golden's sparseAttention at Precision::Model for one token's group of
// heads, in its IEEE operations and their order, so bit for bit:
//
//   l_j = scale · fp32(Σ_d q_d · k_j[d])       the dot in fp64, d in order
//   M   = max(sink, l_0, l_1, ...)             std::max's comparisons
//   S   = fp64(fp32(e^(sink − M))) + Σ_j fp32(e^(l_j − M))   in key order
//   p_j = bf16(fp32(e^(l_j − M)) / fp32(S))
//   out = bf16(fp32(Σ_j p_j · k_j))            in fp64, keys in order
//
// Every product of two floats is exact in fp64 (24 + 24 significant bits),
// so the products meet their sums in llvm.fmuladd: fused or not, the sum
// rounds once per term, as the golden's does. e^x is emitExp's (fdlibm's
// algorithm in fp64; the golden calls glibc's exp in fp64 and rounds to
// fp32): here every argument is a float at most 0 (or NaN), and the two fp32
// terms agree for every float in [-110, 0] (HcKernelTest.cpp checks it)
// and are both 0 below. M is the same value whichever order the comparisons
// run in (each lane starts from the sink, and a NaN logit never replaces a
// value), but for the sign of a zero, which no difference l − M or sink − M
// sees; so the logits' maximum runs in 16 lanes.
//
// The item first lists the addresses of its keys (the window's valid
// columns, then the entries'), so that each key row is read for all the
// group's heads at once. The logits run 16 keys at a time, each fp64 lane one
// key's sequential dot: a block of 16 keys × 16 floats is loaded row by row
// and transposed by shuffles into a stack scratch of the block's d columns,
// which every head of the group then reads. Heads go in passes whose
// accumulators stay in registers (8 on AVX-512, 2 on AVX2 and NEON, else 1;
// their exact q values, widened once per item, broadcast from the stack).
// The output runs 16 columns at a time, each lane one output element summing
// the keys in order, each key's 16 values loaded once per pass of heads. The
// scores (the logits, then their exps, then the probabilities, all floats
// held as fp64 so that the output's broadcasts need no conversion) live on
// the stack, per head and key; a block's keys past the item's last are the
// query row's (readable, and their logits are -inf, outside every sum).
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/SparseAttentionKernel.h"

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

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

using namespace mlir;

namespace kf::codegen {

namespace {

/// Keys per logit block and floats per vector: the fp64 lanes of one
/// accumulator, a vector<16 x f64>.
constexpr int64_t kLanes = 16;
/// The most stack scratch a kernel may take: well inside the 8 MiB of a
/// thread's stack.
constexpr int64_t kMaxScratchBytes = int64_t{4} << 20;

/// Room for the keys of one item: every column may be a key, rounded up to
/// whole blocks.
int64_t getKeyCapacity(const SparseAttentionKernelSpec &spec) {
  const int64_t columns = std::max<int64_t>(spec.windowWidth, 0) +
                          std::max<int64_t>(spec.entryWidth, 0);
  return std::max<int64_t>((columns + kLanes - 1) / kLanes * kLanes, kLanes);
}

/// Heads whose sums run side by side, each with a vector<16 x f64>
/// accumulator (2 zmm, 4 ymm, 8 xmm or q registers), so that the register
/// file holds them with the key they meet: a divisor of headsPerItem.
int64_t getHeadsPerPass(const SparseAttentionKernelSpec &spec,
                        const target::TargetInfo &target) {
  int64_t most = 1;
  if (target.arch == target::Arch::X86_64 &&
      target.has(target::Feature::AVX512F))
    most = 8;
  else if (target.arch == target::Arch::AArch64 ||
           (target.arch == target::Arch::X86_64 &&
            target.has(target::Feature::AVX2)))
    most = 2;
  for (int64_t pass = std::min(most, spec.headsPerItem); pass > 1; --pass)
    if (spec.headsPerItem % pass == 0)
      return pass;
  return 1;
}

std::string formatBitsHex(float v) {
  return llvm::formatv(
             "{0}", llvm::format_hex_no_prefix(llvm::bit_cast<uint32_t>(v), 8))
      .str();
}

} // namespace

int64_t SparseAttentionKernelSpec::defaultHeadsPerItem(int64_t heads) {
  const int64_t most = std::min<int64_t>(8, std::max<int64_t>(heads / 2, 1));
  for (int64_t group = most; group > 1; --group)
    if (heads % group == 0)
      return group;
  return 1;
}

std::string SparseAttentionKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_sparse_attention_h{0}_d{1}_w{2}_e{3}_g{4}_s{5}",
                       heads, dim, windowWidth, entryWidth, headsPerItem,
                       formatBitsHex(scale))
      .str();
}

std::string SparseAttentionKernelSpec::describe() const {
  return llvm::formatv("sparse_attention kernel [H = {0}, d = {1}, window = "
                       "{2}, entries = {3}, heads per item = {4}, scale = {5}]",
                       heads, dim, windowWidth, entryWidth, headsPerItem,
                       formatShortest(scale))
      .str();
}

int64_t getSparseAttentionScratchBytes(const SparseAttentionKernelSpec &spec) {
  const int64_t keys = getKeyCapacity(spec);
  const int64_t group = std::max<int64_t>(spec.headsPerItem, 1);
  const int64_t dim = std::max<int64_t>(spec.dim, 0);
  // Key addresses; scores; widened queries; the transposed block; per head
  // the sink's term and the sum.
  return 8 * keys + 8 * group * keys + 8 * group * dim + 4 * kLanes * dim +
         12 * group;
}

llvm::Error verifySparseAttentionKernel(const SparseAttentionKernelSpec &spec) {
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError(spec.describe() + ": expected " + what);
  };
  if (spec.heads < 1)
    return fail("at least one head");
  if (spec.dim <= 0 || spec.dim % kLanes != 0)
    return fail("d a positive multiple of " + llvm::Twine(kLanes));
  if (spec.windowWidth < 0 || spec.entryWidth < 0)
    return fail("index widths not negative");
  if (spec.headsPerItem < 1 || spec.heads % spec.headsPerItem != 0)
    return fail("heads per item dividing H");
  if (getSparseAttentionScratchBytes(spec) > kMaxScratchBytes)
    return fail("at most " + llvm::Twine(kMaxScratchBytes) +
                " bytes of stack scratch, not " +
                llvm::Twine(getSparseAttentionScratchBytes(spec)));
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildSparseAttentionKernel(ModuleOp module,
                           const SparseAttentionKernelSpec &spec,
                           const target::TargetInfo &target) {
  if (llvm::Error err = verifySparseAttentionKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  Type f32 = b.getF32Type(), f64 = b.getF64Type(), i32 = b.getI32Type(),
       i64 = b.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto floats = VectorType::get({kLanes}, f32);
  auto doubles = VectorType::get({kLanes}, f64);
  auto indices = VectorType::get({kLanes}, i64);

  auto times = [&](Value v, int64_t factor) -> Value {
    return arith::MulIOp::create(b, loc, v, kb.index(factor));
  };
  auto plus = [&](Value v, int64_t addend) -> Value {
    return arith::AddIOp::create(b, loc, v, kb.index(addend));
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto less = [&](Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, l, r);
  };
  // Exact: float to double.
  auto widen = [&](Value v) -> Value {
    Type type = f64;
    if (auto vector = dyn_cast<VectorType>(v.getType()))
      type = VectorType::get(vector.getShape(), f64);
    return arith::ExtFOp::create(b, loc, type, v);
  };
  auto narrow = [&](Value v) -> Value {
    Type type = f32;
    if (auto vector = dyn_cast<VectorType>(v.getType()))
      type = VectorType::get(vector.getShape(), f32);
    return arith::TruncFOp::create(b, loc, type, v);
  };
  auto broadcast = [&](VectorType type, Value scalar) -> Value {
    return vector::BroadcastOp::create(b, loc, type, scalar);
  };
  // acc + x · y, the product exact: fused or not, one rounding.
  auto mulAdd = [&](Value x, Value y, Value acc) -> Value {
    return LLVM::FMulAddOp::create(b, loc, x, y, acc);
  };
  auto stackArray = [&](Type element, int64_t count) -> Value {
    return LLVM::AllocaOp::create(b, loc, ptr, element, kb.index(count),
                                  /*alignment=*/64);
  };
  // A loop over [from, to) by `step` carrying `inits`, its body built by
  // `body` (the induction variable and the carried values in, the values
  // to carry out); returns the loop's results.
  auto loop =
      [&](Value from, Value to, int64_t step, ValueRange inits,
          llvm::function_ref<llvm::SmallVector<Value>(Value, ValueRange)> body)
      -> llvm::SmallVector<Value> {
    auto forOp = scf::ForOp::create(b, loc, from, to, kb.index(step), inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      scf::YieldOp::create(
          b, loc, body(forOp.getInductionVar(), forOp.getRegionIterArgs()));
    }
    return llvm::SmallVector<Value>(forOp.getResults());
  };

  const int64_t group = spec.headsPerItem, d = spec.dim, rowBytes = 4 * d;
  const int64_t keyCapacity = getKeyCapacity(spec);
  const int64_t pass = getHeadsPerPass(spec, target);
  const int64_t scoreRowBytes = 8 * keyCapacity;
  const bool hasEntries = spec.entryWidth > 0;

  Value query = emitStepOperand(b, loc, args, 0);
  Value window = emitStepOperand(b, loc, args, 1);
  Value windowIndices = emitStepOperand(b, loc, args, 2);
  Value entries, entryIndices;
  if (hasEntries) {
    entries = emitStepOperand(b, loc, args, 3);
    entryIndices = emitStepOperand(b, loc, args, 4);
  }
  Value sinks = emitStepOperand(b, loc, args, hasEntries ? 5 : 3);
  Value out = emitStepOperand(b, loc, args, hasEntries ? 6 : 4);

  // The item's scratch, at the entry so that LLVM allocates it once.
  Value keys = stackArray(ptr, keyCapacity);           // key row addresses
  Value scores = stackArray(f64, group * keyCapacity); // [head][key]
  Value queries = stackArray(f64, group * d);          // [head][d], widened
  Value columns = stackArray(f32, kLanes * d);         // a block's [d][16 keys]
  Value sinkTerms = stackArray(f64, group);            // fp32(e^(sink - M))
  Value totals = stackArray(f32, group);               // fp32(S)

  llvm::SmallVector<int64_t, kLanes> iotaValues(kLanes);
  std::iota(iotaValues.begin(), iotaValues.end(), 0);
  Value iota = arith::ConstantOp::create(
      b, loc, indices,
      DenseElementsAttr::get(indices, llvm::ArrayRef(iotaValues)));
  const double inf = std::numeric_limits<double>::infinity();

  auto items = scf::ForOp::create(b, loc, args.begin, args.end, kb.index(1));
  b.setInsertionPointToStart(items.getBody());
  Value item = items.getInductionVar();
  const int64_t groups = spec.getItemsPerToken();
  Value token = arith::DivUIOp::create(b, loc, item, kb.index(groups));
  Value firstHead =
      times(arith::RemUIOp::create(b, loc, item, kb.index(groups)), group);
  // The group's heads are consecutive rows of the token's [H, d].
  Value q = emitByteOffset(b, loc, query, times(item, group * rowBytes));
  Value o = emitByteOffset(b, loc, out, times(item, group * rowBytes));
  Value groupSinks = emitByteOffset(b, loc, sinks, times(firstHead, 4));

  kb.forEach(kb.index(0), kb.index(group * rowBytes), 4 * kLanes,
             [&](Value offset) {
               kb.store(widen(kb.load(floats, q, offset, 4)), queries,
                        times(offset, 2), 64);
             });

  // The keys: the valid columns' row addresses, in the interpreter's order.
  auto listKeys = [&](Value count, Value bank, Value indexRows,
                      int64_t width) -> Value {
    Value row = emitByteOffset(b, loc, indexRows, times(token, 4 * width));
    return loop(
        kb.index(0), kb.index(width), 1, ValueRange{count},
        [&](Value column, ValueRange carried) {
          Value n = carried[0];
          Value index = arith::ExtSIOp::create(
              b, loc, i64, kb.load(i32, row, times(column, 4), 4));
          Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              index, kb.index(0));
          // Stored at the next free place either way; only a valid
          // one is kept.
          kb.store(emitByteOffset(
                       b, loc, bank,
                       times(select(valid, index, kb.index(0)), rowBytes)),
                   keys, times(n, 8), 8);
          return llvm::SmallVector<Value>{select(valid, plus(n, 1), n)};
        })[0];
  };
  Value n = listKeys(kb.index(0), window, windowIndices, spec.windowWidth);
  if (hasEntries)
    n = listKeys(n, entries, entryIndices, spec.entryWidth);
  // Whole blocks: the last one's missing keys read the query row.
  Value blocksEnd =
      arith::AndIOp::create(b, loc, plus(n, kLanes - 1), kb.index(-kLanes));
  kb.forEach(n, blocksEnd, 1,
             [&](Value j) { kb.store(q, keys, times(j, 8), 8); });

  // The logits, 16 keys at a time.
  kb.forEach(kb.index(0), blocksEnd, kLanes, [&](Value block) {
    Value blockKeys = emitByteOffset(b, loc, keys, times(block, 8));
    llvm::SmallVector<Value, kLanes> rows;
    for (int64_t k = 0; k < kLanes; ++k)
      rows.push_back(kb.load(ptr, blockKeys, kb.index(8 * k), 8));
    kb.forEach(kb.index(0), kb.index(rowBytes), 4 * kLanes, [&](Value offset) {
      llvm::SmallVector<Value, kLanes> tile;
      for (Value row : rows)
        tile.push_back(kb.load(floats, row, offset, 4));
      emitTransposeTile(b, loc, tile);
      Value at = emitByteOffset(b, loc, columns, times(offset, kLanes));
      for (int64_t c = 0; c < kLanes; ++c)
        kb.store(tile[c], at, kb.index(4 * kLanes * c), 64);
    });
    Value valid = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt,
        arith::AddIOp::create(b, loc, iota, broadcast(indices, block)),
        broadcast(indices, n));
    kb.forEach(kb.index(0), kb.index(group), pass, [&](Value head) {
      Value headQueries = emitByteOffset(b, loc, queries, times(head, 8 * d));
      llvm::SmallVector<Value> zeros(pass, kb.splat(doubles, 0.0));
      llvm::SmallVector<Value> dots = loop(
          kb.index(0), kb.index(d), 1, zeros, [&](Value i, ValueRange acc) {
            Value column =
                widen(kb.load(floats, columns, times(i, 4 * kLanes), 64));
            Value at = emitByteOffset(b, loc, headQueries, times(i, 8));
            llvm::SmallVector<Value> next;
            for (int64_t h = 0; h < pass; ++h)
              next.push_back(mulAdd(
                  broadcast(doubles, kb.load(f64, at, kb.index(8 * d * h), 8)),
                  column, acc[h]));
            return next;
          });
      Value at = emitByteOffset(
          b, loc, scores,
          arith::AddIOp::create(b, loc, times(head, scoreRowBytes),
                                times(block, 8)));
      for (int64_t h = 0; h < pass; ++h) {
        Value logits = kb.mul(kb.splat(floats, spec.scale), narrow(dots[h]));
        kb.store(widen(select(valid, logits, kb.splat(floats, -inf))), at,
                 kb.index(scoreRowBytes * h), 64);
      }
    });
  });

  // Per head: M, the exps and the sink's term.
  kb.forEach(kb.index(0), kb.index(group), 1, [&](Value head) {
    Value sink = kb.load(f32, groupSinks, times(head, 4), 4);
    Value row = emitByteOffset(b, loc, scores, times(head, scoreRowBytes));
    Value lanes = loop(
        kb.index(0), blocksEnd, kLanes, ValueRange{broadcast(floats, sink)},
        [&](Value block, ValueRange carried) {
          Value l = narrow(kb.load(doubles, row, times(block, 8), 64));
          // std::max(max, l): l only where max < l.
          return llvm::SmallVector<Value>{
              select(less(carried[0], l), l, carried[0])};
        })[0];
    Value max = vector::ExtractOp::create(b, loc, lanes, 0);
    for (int64_t k = 1; k < kLanes; ++k) {
      Value l = vector::ExtractOp::create(b, loc, lanes, k);
      max = select(less(max, l), l, max);
    }
    kb.forEach(kb.index(0), blocksEnd, kLanes, [&](Value block) {
      Value offset = times(block, 8);
      Value l = narrow(kb.load(doubles, row, offset, 64));
      Value e =
          narrow(emitExp(b, loc, widen(kb.sub(l, broadcast(floats, max)))));
      kb.store(widen(e), row, offset, 64);
    });
    auto single = VectorType::get({1}, f32);
    Value sinkTerm =
        narrow(emitExp(b, loc, widen(broadcast(single, kb.sub(sink, max)))));
    kb.store(widen(vector::ExtractOp::create(b, loc, sinkTerm, 0)), sinkTerms,
             times(head, 8), 8);
  });

  // S per head, in key order: a pass of heads' sums side by side.
  kb.forEach(kb.index(0), kb.index(group), pass, [&](Value head) {
    Value headTerms = emitByteOffset(b, loc, sinkTerms, times(head, 8));
    Value headScores =
        emitByteOffset(b, loc, scores, times(head, scoreRowBytes));
    llvm::SmallVector<Value> inits;
    for (int64_t h = 0; h < pass; ++h)
      inits.push_back(kb.load(f64, headTerms, kb.index(8 * h), 8));
    llvm::SmallVector<Value> sums =
        loop(kb.index(0), n, 1, inits, [&](Value j, ValueRange acc) {
          Value at = emitByteOffset(b, loc, headScores, times(j, 8));
          llvm::SmallVector<Value> next;
          for (int64_t h = 0; h < pass; ++h)
            next.push_back(kb.add(
                acc[h], kb.load(f64, at, kb.index(scoreRowBytes * h), 8)));
          return next;
        });
    Value headTotals = emitByteOffset(b, loc, totals, times(head, 4));
    for (int64_t h = 0; h < pass; ++h)
      kb.store(narrow(sums[h]), headTotals, kb.index(4 * h), 4);
  });

  // The probabilities, over the exps in place.
  kb.forEach(kb.index(0), kb.index(group), 1, [&](Value head) {
    Value total = broadcast(floats, kb.load(f32, totals, times(head, 4), 4));
    Value row = emitByteOffset(b, loc, scores, times(head, scoreRowBytes));
    kb.forEach(kb.index(0), blocksEnd, kLanes, [&](Value block) {
      Value offset = times(block, 8);
      Value e = narrow(kb.load(doubles, row, offset, 64));
      kb.store(widen(emitRoundToBf16(b, loc,
                                     arith::DivFOp::create(b, loc, e, total))),
               row, offset, 64);
    });
  });

  // The output, 16 columns at a time: per pass of heads, the keys in order.
  kb.forEach(kb.index(0), kb.index(rowBytes), 4 * kLanes, [&](Value offset) {
    kb.forEach(kb.index(0), kb.index(group), pass, [&](Value head) {
      Value headScores =
          emitByteOffset(b, loc, scores, times(head, scoreRowBytes));
      llvm::SmallVector<Value> zeros(pass, kb.splat(doubles, 0.0));
      llvm::SmallVector<Value> sums =
          loop(kb.index(0), n, 1, zeros, [&](Value j, ValueRange acc) {
            Value key = widen(
                kb.load(floats, kb.load(ptr, keys, times(j, 8), 8), offset, 4));
            Value at = emitByteOffset(b, loc, headScores, times(j, 8));
            llvm::SmallVector<Value> next;
            for (int64_t h = 0; h < pass; ++h)
              next.push_back(mulAdd(
                  broadcast(doubles,
                            kb.load(f64, at, kb.index(scoreRowBytes * h), 8)),
                  key, acc[h]));
            return next;
          });
      Value headOut = emitByteOffset(b, loc, o, times(head, rowBytes));
      for (int64_t h = 0; h < pass; ++h)
        kb.store(emitRoundToBf16(b, loc, narrow(sums[h])), headOut,
                 plus(offset, rowBytes * h), 4);
    });
  });

  b.setInsertionPointAfter(items);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
