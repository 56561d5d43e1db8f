//===- AttentionIndexEmitter.cpp - The compiled attention index ops -------===//
//
// kf.window_indices, kf.visible_entries and kf.indexer_topk as the
// interpreter computes them: integer arithmetic and float comparisons only,
// so every index is the interpreter's, bit for bit.
//
// - window_indices: lane i of row t is q = p - window + 1 + i. With a ring,
//   q >= 0 where p + 1 + i >= window, and its slot is ((p + 1) mod window +
//   i) mod window (q ≡ p + 1 + i mod window), the mod of the lane one
//   conditional subtraction; without, the bank row q - positions[0], -1
//   where that is negative (every q < 0 is, and so is every q the bank of
//   the call's rows does not hold, which the interpreter refuses). Lanes in
//   i64, truncated to i32 where they are stored.
// - visible_entries: c where c < min(E, (p + 1) / ratio), else -1.
// - indexer_topk: the golden's order on the visible entries, (score desc,
//   index asc), is a strict total order once a NaN counts as -inf (the
//   interpreter refuses NaN scores), and the golden's masked entries (-inf,
//   of indices above every visible one) come after every visible entry and
//   become -1: so the result is the first min(K, visible) visible entries
//   in that order, then -1s. The row itself holds the best so far, sorted.
//   While it is not full each entry is inserted; then an entry enters only
//   when its score is greater than the last one's (a tie goes to the lower
//   index, which the last one has), and goes after every entry of a score
//   at least its own (a binary search), the ones after it shifted down by
//   one and the last dropped. The threshold only rises, so the scan tests
//   16 scores against it at once and looks at them one by one only where
//   one passes (in index order, the threshold updated after each).
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/AttentionIndexKernels.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;
/// An index is an i32.
constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

/// What the three kernels share: the builder's shorthands and integer
/// helpers at one location.
struct IndexBuilder {
  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  Type i32, i64, f32;

  IndexBuilder(OpBuilder &b, Location loc)
      : b(b), loc(loc), kb(b, loc), i32(b.getI32Type()), i64(b.getI64Type()),
        f32(b.getF32Type()) {}

  Value times(Value v, int64_t factor) {
    return arith::MulIOp::create(b, loc, v, kb.index(factor));
  }
  Value plus(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value minus(Value l, Value r) { return arith::SubIOp::create(b, loc, l, r); }
  Value cmpi(arith::CmpIPredicate p, Value l, Value r) {
    return arith::CmpIOp::create(b, loc, p, l, r);
  }
  Value cmpf(arith::CmpFPredicate p, Value l, Value r) {
    return arith::CmpFOp::create(b, loc, p, l, r);
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, loc, c, t, f);
  }
  Value splat(Type type, Value v) {
    return vector::BroadcastOp::create(b, loc, type, v);
  }
  /// An i64 vector of `lanes` lanes holding 0, 1, ...
  Value iota(int64_t lanes) {
    auto type = VectorType::get({lanes}, i64);
    llvm::SmallVector<int64_t, kLanes> values(lanes);
    std::iota(values.begin(), values.end(), 0);
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, llvm::ArrayRef(values)));
  }
  /// The i64 at `base` + 8 · `index` (a position).
  Value loadI64(Value base, Value index) {
    return kb.load(i64, base, times(index, 8), /*alignment=*/8);
  }

  /// Fills `count` i32 columns of the row at `row`: `lanesOf(columns)` maps
  /// an i64 vector of column indices (16 of them, then one at a time for the
  /// last count mod 16) to their i64 values, stored as i32.
  void emitColumns(Value row, int64_t count,
                   llvm::function_ref<Value(Value)> lanesOf) {
    auto fill = [&](int64_t lanes, int64_t from, int64_t to) {
      if (from >= to)
        return;
      Value laneIota = iota(lanes);
      auto ints = VectorType::get({lanes}, i32);
      auto longs = VectorType::get({lanes}, i64);
      kb.forEach(kb.index(from), kb.index(to), lanes, [&](Value column) {
        Value columns = plus(splat(longs, column), laneIota);
        kb.store(arith::TruncIOp::create(b, loc, ints, lanesOf(columns)), row,
                 times(column, 4), /*alignment=*/4);
      });
    };
    const int64_t vectorColumns = count / kLanes * kLanes;
    fill(kLanes, 0, vectorColumns);
    fill(1, vectorColumns, count);
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// kf.window_indices
//===----------------------------------------------------------------------===//

std::string WindowIndicesKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_window_indices_w{0}{1}", window,
                       ring ? llvm::formatv("_r{0}", ring).str() : "")
      .str();
}

std::string WindowIndicesKernelSpec::describe() const {
  return llvm::formatv("window_indices kernel [window = {0}{1}]", window,
                       ring ? llvm::formatv(", ring = {0}", ring).str() : "")
      .str();
}

llvm::Error verifyWindowIndicesKernel(const WindowIndicesKernelSpec &spec) {
  if (spec.window < 1 || spec.window > kMaxIndex)
    return llvm::createStringError(
        llvm::formatv("{0}: expected a window in [1, {1}]", spec.describe(),
                      kMaxIndex)
            .str());
  if (spec.ring != 0 && (spec.ring < spec.window || spec.ring > kMaxIndex))
    return llvm::createStringError(
        llvm::formatv("{0}: expected a ring of the window's {1} slots to {2}",
                      spec.describe(), spec.window, kMaxIndex)
            .str());
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildWindowIndicesKernel(ModuleOp module, const WindowIndicesKernelSpec &spec,
                         const target::TargetInfo &target) {
  if (llvm::Error err = verifyWindowIndicesKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  IndexBuilder ib(b, loc);
  KernelBuilder &kb = ib.kb;
  using arith::CmpIPredicate;

  Value positions = emitStepOperand(b, loc, args, 0);
  Value out = emitStepOperand(b, loc, args, 1);
  const int64_t window = spec.window;
  kb.forEach(args.begin, args.end, 1, [&](Value token) {
    Value p = ib.loadI64(positions, token);
    Value row = emitByteOffset(b, loc, out, ib.times(token, 4 * window));
    if (spec.ring) {
      // Lane i is q = p - window + 1 + i, in slot q mod R: from the slot of
      // the first lane (p - window + 1 + R is never negative), wrapped at
      // most once, as the lanes span fewer than R slots.
      const int64_t ring = spec.ring;
      Value next = ib.plus(p, kb.index(1));
      Value start = arith::RemUIOp::create(
          b, loc, ib.plus(next, kb.index(ring - window)), kb.index(ring));
      ib.emitColumns(row, window, [&](Value lanes) -> Value {
        Type type = lanes.getType();
        Value shown =
            ib.cmpi(CmpIPredicate::sge, ib.plus(ib.splat(type, next), lanes),
                    ib.splat(type, kb.index(window)));
        Value slot = ib.plus(ib.splat(type, start), lanes);
        Value wrapped = ib.minus(slot, ib.splat(type, kb.index(ring)));
        slot = ib.select(
            ib.cmpi(CmpIPredicate::sge, wrapped, ib.splat(type, kb.index(0))),
            wrapped, slot);
        return ib.select(shown, slot, ib.splat(type, kb.index(-1)));
      });
      return;
    }
    // q - positions[0] = lane + (p - (window - 1) - positions[0]).
    Value base = ib.minus(ib.minus(p, kb.index(window - 1)),
                          ib.loadI64(positions, kb.index(0)));
    ib.emitColumns(row, window, [&](Value lanes) -> Value {
      Type type = lanes.getType();
      Value rowIndex = ib.plus(ib.splat(type, base), lanes);
      return ib.select(
          ib.cmpi(CmpIPredicate::slt, rowIndex, ib.splat(type, kb.index(0))),
          ib.splat(type, kb.index(-1)), rowIndex);
    });
  });

  func::ReturnOp::create(b, loc);
  return args.fn;
}

//===----------------------------------------------------------------------===//
// kf.visible_entries
//===----------------------------------------------------------------------===//

std::string VisibleEntriesKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_visible_entries_e{0}_r{1}", entries, ratio).str();
}

std::string VisibleEntriesKernelSpec::describe() const {
  return llvm::formatv("visible_entries kernel [E = {0}, ratio = {1}]", entries,
                       ratio)
      .str();
}

namespace {

/// Fails, naming the kernel `describe`d, unless its E entries are an i32
/// index's and its ratio positive: what a kernel over compressed entries
/// takes.
llvm::Error verifyEntries(const std::string &describe, int64_t entries,
                          int64_t ratio) {
  if (entries < 1 || entries > kMaxIndex)
    return llvm::createStringError(
        llvm::formatv("{0}: expected E in [1, {1}]", describe, kMaxIndex)
            .str());
  if (ratio < 1)
    return llvm::createStringError(describe +
                                   ": expected a ratio of at least 1");
  return llvm::Error::success();
}

} // namespace

llvm::Error verifyVisibleEntriesKernel(const VisibleEntriesKernelSpec &spec) {
  return verifyEntries(spec.describe(), spec.entries, spec.ratio);
}

namespace {

/// min(E, (p + 1) / ratio): the entries the query at `p` sees, of the E the
/// kernel has.
Value emitVisible(IndexBuilder &ib, Value p, int64_t entries, int64_t ratio) {
  Value visible = arith::DivUIOp::create(
      ib.b, ib.loc, ib.plus(p, ib.kb.index(1)), ib.kb.index(ratio));
  return arith::MinUIOp::create(ib.b, ib.loc, visible, ib.kb.index(entries));
}

} // namespace

llvm::Expected<func::FuncOp>
buildVisibleEntriesKernel(ModuleOp module, const VisibleEntriesKernelSpec &spec,
                          const target::TargetInfo &target) {
  if (llvm::Error err = verifyVisibleEntriesKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  IndexBuilder ib(b, loc);
  KernelBuilder &kb = ib.kb;

  Value positions = emitStepOperand(b, loc, args, 0);
  Value out = emitStepOperand(b, loc, args, 2);

  kb.forEach(args.begin, args.end, 1, [&](Value token) {
    Value visible =
        emitVisible(ib, ib.loadI64(positions, token), spec.entries, spec.ratio);
    Value row = emitByteOffset(b, loc, out, ib.times(token, 4 * spec.entries));
    ib.emitColumns(row, spec.entries, [&](Value columns) -> Value {
      Type type = columns.getType();
      return ib.select(
          ib.cmpi(arith::CmpIPredicate::ult, columns, ib.splat(type, visible)),
          columns, ib.splat(type, kb.index(-1)));
    });
  });

  func::ReturnOp::create(b, loc);
  return args.fn;
}

//===----------------------------------------------------------------------===//
// kf.indexer_topk
//===----------------------------------------------------------------------===//

int64_t IndexerTopKKernelSpec::getPicks() const { return std::min(k, entries); }

std::string IndexerTopKKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_indexer_topk_e{0}_k{1}_r{2}", entries, k, ratio)
      .str();
}

std::string IndexerTopKKernelSpec::describe() const {
  return llvm::formatv("indexer_topk kernel [E = {0}, k = {1}, ratio = {2}]",
                       entries, k, ratio)
      .str();
}

llvm::Error verifyIndexerTopKKernel(const IndexerTopKKernelSpec &spec) {
  if (llvm::Error err =
          verifyEntries(spec.describe(), spec.entries, spec.ratio))
    return err;
  if (spec.k < 1)
    return llvm::createStringError(spec.describe() +
                                   ": expected k of at least 1");
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildIndexerTopKKernel(ModuleOp module, const IndexerTopKKernelSpec &spec,
                       const target::TargetInfo &target) {
  if (llvm::Error err = verifyIndexerTopKKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  IndexBuilder ib(b, loc);
  KernelBuilder &kb = ib.kb;
  using arith::CmpFPredicate;
  using arith::CmpIPredicate;
  const Type i32 = ib.i32, i64 = ib.i64, f32 = ib.f32;
  const int64_t picks = spec.getPicks();
  auto floats = VectorType::get({kLanes}, f32);
  auto ints = VectorType::get({kLanes}, i32);
  const Value negInf = arith::ConstantFloatOp::create(
      b, loc, cast<FloatType>(f32),
      llvm::APFloat::getInf(llvm::APFloat::IEEEsingle(), /*Negative=*/true));

  Value scores = emitStepOperand(b, loc, args, 0);
  Value positions = emitStepOperand(b, loc, args, 1);
  Value out = emitStepOperand(b, loc, args, 2);

  kb.forEach(args.begin, args.end, 1, [&](Value token) {
    Value visible =
        emitVisible(ib, ib.loadI64(positions, token), spec.entries, spec.ratio);
    Value scoreRow =
        emitByteOffset(b, loc, scores, ib.times(token, 4 * spec.entries));
    Value row = emitByteOffset(b, loc, out, ib.times(token, 4 * picks));

    // The rank of entry c: its score, -inf for a NaN.
    auto keyOf = [&](Value entry) -> Value {
      Value v = kb.load(f32, scoreRow, ib.times(entry, 4), /*alignment=*/4);
      return ib.select(ib.cmpf(CmpFPredicate::UNO, v, v), negInf, v);
    };
    auto slotAt = [&](Value slot) -> Value {
      return arith::ExtSIOp::create(
          b, loc, i64, kb.load(i32, row, ib.times(slot, 4), /*alignment=*/4));
    };
    // Places entry c of rank `key` among the first `held` slots (sorted),
    // after those of a rank at least its own, moving slots [j, moved) to
    // [j + 1, moved + 1): moved = held while the row has room, else
    // picks - 1 (the last one dropped).
    auto insert = [&](Value entry, Value key, Value held, Value moved) {
      auto search = scf::WhileOp::create(
          b, loc, TypeRange{i64, i64}, ValueRange{kb.index(0), held},
          [&](OpBuilder &, Location, ValueRange range) {
            scf::ConditionOp::create(
                b, loc, ib.cmpi(CmpIPredicate::slt, range[0], range[1]), range);
          },
          [&](OpBuilder &, Location, ValueRange range) {
            Value mid = arith::ShRUIOp::create(
                b, loc, ib.plus(range[0], range[1]), kb.index(1));
            Value before = ib.cmpf(CmpFPredicate::OGE, keyOf(slotAt(mid)), key);
            scf::YieldOp::create(
                b, loc,
                ValueRange{
                    ib.select(before, ib.plus(mid, kb.index(1)), range[0]),
                    ib.select(before, range[1], mid)});
          });
      Value j = search.getResult(0);
      // Slots [j, moved) up by one: 16 at a time from the top (a vector's
      // store, one slot up, reaches only its own slots and those the vector
      // above it already moved), then the lowest count mod 16 one by one,
      // from the highest down.
      Value count = ib.minus(moved, j);
      Value vectors = arith::ShRUIOp::create(b, loc, count, kb.index(4));
      kb.forEach(kb.index(0), vectors, 1, [&](Value v) {
        Value top = ib.minus(moved, ib.times(v, kLanes));
        Value from = ib.times(ib.minus(top, kb.index(kLanes)), 4);
        Value chunk = kb.load(ints, row, from, /*alignment=*/4);
        kb.store(chunk, row, ib.plus(from, kb.index(4)), /*alignment=*/4);
      });
      Value rest = ib.minus(count, ib.times(vectors, kLanes));
      kb.forEach(kb.index(0), rest, 1, [&](Value i) {
        Value from =
            ib.times(ib.minus(ib.plus(j, rest), ib.plus(i, kb.index(1))), 4);
        kb.store(kb.load(i32, row, from, 4), row, ib.plus(from, kb.index(4)),
                 4);
      });
      kb.store(arith::TruncIOp::create(b, loc, i32, entry), row, ib.times(j, 4),
               /*alignment=*/4);
    };

    // Until the row is full: every entry, among the `entry` held.
    Value filled = arith::MinUIOp::create(b, loc, visible, kb.index(picks));
    kb.forEach(kb.index(0), filled, 1,
               [&](Value entry) { insert(entry, keyOf(entry), entry, entry); });
    // Past the visible entries: -1.
    kb.forEach(filled, kb.index(picks), 1, [&](Value slot) {
      kb.store(arith::ConstantIntOp::create(b, loc, i32, -1), row,
               ib.times(slot, 4), 4);
    });

    // The row full: an entry enters when its score exceeds the last's (a
    // NaN never does). Returns the new threshold.
    Value full = kb.index(picks), lastMoved = kb.index(picks - 1);
    auto lastKey = [&]() -> Value { return keyOf(slotAt(lastMoved)); };
    auto offer = [&](Value entry, Value threshold) -> Value {
      Value v = kb.load(f32, scoreRow, ib.times(entry, 4), /*alignment=*/4);
      auto enters = scf::IfOp::create(b, loc, TypeRange{f32},
                                      ib.cmpf(CmpFPredicate::OGT, v, threshold),
                                      /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&enters.getThenRegion().front());
      insert(entry, v, full, lastMoved);
      scf::YieldOp::create(b, loc, ValueRange{lastKey()});
      b.setInsertionPointToStart(&enters.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{threshold});
      return enters.getResult(0);
    };
    auto scan =
        scf::IfOp::create(b, loc, ib.cmpi(CmpIPredicate::ugt, visible, full),
                          /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&scan.getThenRegion().front());
      // Vectors of 16 scores from entry `picks` on, then the rest.
      Value vectorEnd = ib.plus(
          full, ib.times(arith::ShRUIOp::create(b, loc, ib.minus(visible, full),
                                                kb.index(4)),
                         kLanes));
      auto vectors = scf::ForOp::create(
          b, loc, full, vectorEnd, kb.index(kLanes), ValueRange{lastKey()});
      {
        OpBuilder::InsertionGuard loopGuard(b);
        b.setInsertionPointToStart(vectors.getBody());
        Value start = vectors.getInductionVar();
        Value threshold = vectors.getRegionIterArg(0);
        Value v = kb.load(floats, scoreRow, ib.times(start, 4), 4);
        Value any = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::OR,
            ib.cmpf(CmpFPredicate::OGT, v, ib.splat(floats, threshold)));
        auto check = scf::IfOp::create(b, loc, TypeRange{f32}, any,
                                       /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard ifGuard(b);
          b.setInsertionPointToStart(&check.getThenRegion().front());
          auto lanes = scf::ForOp::create(b, loc, kb.index(0), kb.index(kLanes),
                                          kb.index(1), ValueRange{threshold});
          {
            OpBuilder::InsertionGuard laneGuard(b);
            b.setInsertionPointToStart(lanes.getBody());
            scf::YieldOp::create(
                b, loc,
                ValueRange{offer(ib.plus(start, lanes.getInductionVar()),
                                 lanes.getRegionIterArg(0))});
          }
          scf::YieldOp::create(b, loc, lanes.getResults());
          b.setInsertionPointToStart(&check.getElseRegion().front());
          scf::YieldOp::create(b, loc, ValueRange{threshold});
        }
        scf::YieldOp::create(b, loc, check.getResults());
      }
      auto tail = scf::ForOp::create(b, loc, vectorEnd, visible, kb.index(1),
                                     ValueRange{vectors.getResult(0)});
      {
        OpBuilder::InsertionGuard loopGuard(b);
        b.setInsertionPointToStart(tail.getBody());
        scf::YieldOp::create(b, loc,
                             ValueRange{offer(tail.getInductionVar(),
                                              tail.getRegionIterArg(0))});
      }
    }
  });

  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
