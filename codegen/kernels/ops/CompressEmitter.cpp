//===- CompressEmitter.cpp - The compiled kf.compress ---------------------===//
//
// The golden's Compressor (compressor.cpp) on projections the matmul kernels
// computed, bit for bit, its entry built as buildEntry builds it:
//
// - Pooling, per channel: the slots' scores (gate + ape in fp32; an absent
//   previous block's −inf, its value 0), their max by std::max's
//   comparisons in slot order, w_m = fp32(e^(score_m − max)) in fp64, Σ w_m
//   in fp64 in slot order, total = fp32(sum), then Σ fp64(w_m / total) ·
//   value_m in fp64 in slot order, rounded to fp32 and held as bf16. The
//   kernel runs 16 channels to a vector, each lane the golden's operations
//   on its channel in its order; the weights w_m of a group stay on the
//   stack between the sum and the pooling. e^x is emitExp's (fdlibm's), of
//   which only fp32(e^x) is used: that equals glibc's for every float
//   argument (HcKernelTest, ExpTermsEqualGolden), and the argument is
//   score − max <= 0 or −inf (whose e^-708 is 0 in fp32, as glibc's 0).
// - Then the entry's row on the stack: the RMS norm with its squares added
//   in row order (emitRmsNormRow), the rope of its last ropeDim values at
//   position c·r (emitRopeFactors, emitRopeRotation: fdlibm's sin and cos,
//   the one operation that is not the golden's, CompressKernelTest), and the
//   post: fp8Sim of the first D − ropeDim values, or the golden's hadamard
//   (emitHadamardRowInOrder, its sums in its order) and fp4Sim
//   (emitQuantSimSpan); the entry is stored rounded to the cache's element
//   (emitStoredAs).
//
// The block's tokens come from the call's projections where the call has
// them, else from the ring, which holds the last S positions before the call
// (the state kernel's invariant): a block ending in the call starts at most
// r − 1 tokens before it, and the previous block 2r − 1. Only the item
// whose token ends a block works; it writes its own entry row and reads the
// ring, which no item of this kernel writes.
//
// The state kernel copies the last S tokens' projections into their slots,
// one slot per item, after the entries kernel (behind the plan's barrier).
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/CompressKernel.h"

#include "RowArithmetic.h"

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
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;
/// The main compressor's fp8 blocks and the indexer's fp4 blocks
/// (compressor.cpp).
constexpr int64_t kFp8Block = 64;
constexpr int64_t kFp4Block = 32;
/// Bounds the cache's bytes well inside an i64.
constexpr int64_t kMaxCacheFloats = int64_t{1} << 56;

const char *getPostName(EntryPost post) {
  switch (post) {
  case EntryPost::None:
    return "none";
  case EntryPost::Fp8:
    return "fp8";
  case EntryPost::HadamardFp4:
    return "hadamard_fp4";
  }
  llvm_unreachable("an entry post");
}

std::string hexBits(float v) {
  return llvm::formatv(
             "{0}", llvm::format_hex_no_prefix(llvm::bit_cast<uint32_t>(v), 8))
      .str();
}

llvm::Error specError(const std::string &describe, const llvm::Twine &what) {
  return llvm::createStringError(describe + ": " + what.str());
}

} // namespace

//===----------------------------------------------------------------------===//
// The entries kernel
//===----------------------------------------------------------------------===//

std::string CompressEntriesKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_compress_entries_r{0}{1}_d{2}_rd{3}_f{4}_e{5}_{6}_"
                       "{7}_c{8}",
                       ratio, overlap ? "_o" : "", dim, ropeDim,
                       getRopeFrequencyHash(frequencies), hexBits(eps),
                       getPostName(post), kf::formatInfo(element).name,
                       capacity)
      .str();
}

std::string CompressEntriesKernelSpec::describe() const {
  return llvm::formatv("compress_entries kernel [ratio = {0}{1}, D = {2}, "
                       "rope = {3}, eps = {4}, {5}, {6}, capacity = {7}]",
                       ratio, overlap ? ", overlap" : "", dim, ropeDim,
                       formatShortest(eps), getPostName(post),
                       kf::formatInfo(element).name, capacity)
      .str();
}

llvm::Error verifyCompressEntriesKernel(const CompressEntriesKernelSpec &spec) {
  const std::string what = spec.describe();
  if (spec.ratio < 1 || spec.ratio > CompressEntriesKernelSpec::kMaxRatio)
    return specError(what, llvm::formatv("expected a ratio in [1, {0}]",
                                         CompressEntriesKernelSpec::kMaxRatio));
  if (spec.dim <= 0 || spec.dim % kLanes != 0 ||
      spec.dim > CompressEntriesKernelSpec::kMaxDim)
    return specError(what,
                     llvm::formatv("expected D a positive multiple of {0} up "
                                   "to {1}",
                                   kLanes, CompressEntriesKernelSpec::kMaxDim));
  if (spec.ropeDim <= 0 || spec.ropeDim % kLanes != 0 ||
      spec.ropeDim >= spec.dim)
    return specError(
        what, llvm::formatv("expected the rope dim a positive multiple of "
                            "{0} below D",
                            kLanes));
  if (static_cast<int64_t>(spec.frequencies.size()) != spec.ropeDim / 2)
    return specError(what,
                     llvm::formatv("expected {0} frequencies, got {1}",
                                   spec.ropeDim / 2, spec.frequencies.size()));
  for (size_t i = 0; i < spec.frequencies.size(); ++i)
    if (!std::isfinite(spec.frequencies[i]))
      return specError(what,
                       llvm::formatv("expected finite frequencies, got f_{0} "
                                     "= {1}",
                                     i, formatShortest(spec.frequencies[i])));
  if (!std::isfinite(spec.eps) || spec.eps < 0)
    return specError(what, "expected a finite eps >= 0");
  if (spec.post == EntryPost::Fp8 && (spec.dim - spec.ropeDim) % kFp8Block != 0)
    return specError(what, llvm::formatv("expected D - rope dim a multiple of "
                                         "the fp8 block ({0})",
                                         kFp8Block));
  if (spec.post == EntryPost::HadamardFp4 &&
      (!llvm::isPowerOf2_64(static_cast<uint64_t>(spec.dim)) ||
       spec.dim < kFp4Block))
    return specError(what, llvm::formatv("expected D a power of two, at "
                                         "least the fp4 block ({0})",
                                         kFp4Block));
  if (!isCacheElement(spec.element))
    return specError(what, "expected an f32, f16 or bf16 element");
  if (spec.capacity < 1 || spec.capacity > kMaxCacheFloats / spec.dim)
    return specError(what, "expected a capacity of at least one entry whose "
                           "bytes fit an i64");
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildCompressEntriesKernel(ModuleOp module,
                           const CompressEntriesKernelSpec &spec,
                           const target::TargetInfo &target) {
  if (llvm::Error err = verifyCompressEntriesKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  const std::string table =
      declareRopeFrequencyTable(b, loc, module, spec.frequencies);
  const bool hardwareHalf = hasHardwareHalf(target);

  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  auto floats = VectorType::get({kLanes}, f32);
  auto doubles = VectorType::get({kLanes}, b.getF64Type());
  auto cmpi = [&](arith::CmpIPredicate predicate, Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, loc, predicate, l, r);
  };
  auto times = [&](Value v, int64_t factor) -> Value {
    return arith::MulIOp::create(b, loc, v, kb.index(factor));
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto stackFloats = [&](int64_t count) -> Value {
    return LLVM::AllocaOp::create(b, loc, ptr, f32, kb.index(count),
                                  /*alignment=*/64);
  };

  const CompressedCacheLayout layout = spec.getLayout();
  const int64_t r = spec.ratio;
  const int64_t d = spec.dim;
  const int64_t w = layout.getStateWidth();
  const int64_t ringSlots = layout.getRingSlots();
  const int64_t slots = spec.overlap ? 2 * r : r; // pooled per channel
  const int64_t nope = d - spec.ropeDim;
  const int64_t tokenBytes = 4 * w;

  Value values = emitStepOperand(b, loc, args, 0);
  Value gates = emitStepOperand(b, loc, args, 1);
  Value positions = emitStepOperand(b, loc, args, 2);
  Value ape = emitStepOperand(b, loc, args, 3);
  Value norm = emitStepOperand(b, loc, args, 4);
  Value cache = emitStepOperand(b, loc, args, 5);
  Value ringValues = emitByteOffset(b, loc, cache, layout.getValuesOffset());
  Value ringGates = emitByteOffset(b, loc, cache, layout.getGatesOffset());
  Value frequencies = emitConstantTableAddress(b, loc, table);
  // The entry, the softmax weights of a channel group, the rope factors and
  // the Hadamard's output, at the entry so that LLVM allocates them once.
  Value entry = stackFloats(d);
  Value weights = stackFloats(slots * kLanes);
  const RopeFactors factors = emitRopeFactorBuffers(b, loc, spec.ropeDim);
  Value transformed =
      spec.post == EntryPost::HadamardFp4 ? stackFloats(d) : Value();
  auto loadPosition = [&](Value token) -> Value {
    return LLVM::LoadOp::create(
        b, loc, i64, emitByteOffset(b, loc, positions, times(token, 8)),
        /*alignment=*/8);
  };
  Value firstPosition = loadPosition(kb.index(0));
  Value negInf = kb.splat(floats, -std::numeric_limits<float>::infinity());

  kb.forEach(args.begin, args.end, 1, [&](Value token) {
    Value position = loadPosition(token);
    // Unsigned: positions are non-negative (the runtime checks them and the
    // capacity; an entry past it is not written).
    Value c = arith::DivUIOp::create(b, loc, position, kb.index(r));
    Value ends = arith::AndIOp::create(
        b, loc,
        cmpi(arith::CmpIPredicate::eq,
             arith::RemUIOp::create(
                 b, loc, arith::AddIOp::create(b, loc, position, kb.index(1)),
                 kb.index(r)),
             kb.index(0)),
        cmpi(arith::CmpIPredicate::ult, c, kb.index(spec.capacity)));
    auto build = scf::IfOp::create(b, loc, ends, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(build.thenBlock());

    // Slot m of the pooling is token c·r − (overlap ? r : 0) + m.
    Value firstToken = arith::SubIOp::create(b, loc, times(c, r),
                                             kb.index(spec.overlap ? r : 0));
    Value hasPrevious = cmpi(arith::CmpIPredicate::ne, c, kb.index(0));
    // Slot m's value and gate rows (at its column: the second half of the
    // projections for an overlapping entry's own block), its ape row, and
    // whether it is present (not the absent block before entry 0).
    struct Slot {
      Value valueRow, gateRow, apeRow, present;
    };
    auto slotOf = [&](Value m) -> Slot {
      Value token = arith::MaxSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, firstToken, m), kb.index(0));
      Value inCall = cmpi(arith::CmpIPredicate::sge, token, firstPosition);
      Value callRow = times(arith::SubIOp::create(b, loc, token, firstPosition),
                            tokenBytes);
      Value ringRow =
          times(arith::RemUIOp::create(b, loc, token, kb.index(ringSlots)),
                tokenBytes);
      Value apeRow =
          times(arith::RemUIOp::create(b, loc, m, kb.index(r)), tokenBytes);
      Value present;
      if (spec.overlap) {
        Value own = cmpi(arith::CmpIPredicate::sge, m, kb.index(r));
        Value column = select(own, kb.index(4 * d), kb.index(0));
        callRow = arith::AddIOp::create(b, loc, callRow, column);
        ringRow = arith::AddIOp::create(b, loc, ringRow, column);
        apeRow = arith::AddIOp::create(b, loc, apeRow, column);
        present = arith::OrIOp::create(b, loc, own, hasPrevious);
      }
      return {select(inCall, emitByteOffset(b, loc, values, callRow),
                     emitByteOffset(b, loc, ringValues, ringRow)),
              select(inCall, emitByteOffset(b, loc, gates, callRow),
                     emitByteOffset(b, loc, ringGates, ringRow)),
              emitByteOffset(b, loc, ape, apeRow), present};
    };
    // Slot m's scores for the 16 channels at `channel` bytes: gate + ape, or
    // −inf where the slot is absent.
    auto scoreOf = [&](const Slot &slot, Value channel) -> Value {
      Value score = kb.add(kb.load(floats, slot.gateRow, channel, 4),
                           kb.load(floats, slot.apeRow, channel, 4));
      return slot.present ? select(slot.present, score, negInf) : score;
    };
    // A loop over the slots carrying `init`, its body built by `body` at
    // the slot and the carried values.
    auto overSlots =
        [&](ValueRange init,
            llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body)
        -> scf::ForOp {
      auto loop = scf::ForOp::create(b, loc, kb.index(0), kb.index(slots),
                                     kb.index(1), init);
      OpBuilder::InsertionGuard slotGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      scf::YieldOp::create(
          b, loc, body(loop.getInductionVar(), loop.getRegionIterArgs()));
      return loop;
    };

    kb.forEach(kb.index(0), kb.index(4 * d), 4 * kLanes, [&](Value channel) {
      // max = std::max(max, score): replaced only by a greater score.
      scf::ForOp maxLoop =
          overSlots({negInf}, [&](Value m, ValueRange carried) {
            Value score = scoreOf(slotOf(m), channel);
            Value max = carried[0];
            return SmallVector<Value>{
                select(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                             max, score),
                       score, max)};
          });
      Value max = maxLoop.getResult(0);
      // w_m = fp32(e^(score − max)), kept; sum += w_m in fp64 from +0.
      scf::ForOp sumLoop =
          overSlots({kb.splat(doubles, 0.0)}, [&](Value m, ValueRange carried) {
            Value score = scoreOf(slotOf(m), channel);
            Value weight = arith::TruncFOp::create(
                b, loc, floats,
                emitExp(b, loc,
                        arith::ExtFOp::create(b, loc, doubles,
                                              kb.sub(score, max))));
            kb.store(weight, weights, times(m, 4 * kLanes), 64);
            return SmallVector<Value>{kb.add(
                carried[0], arith::ExtFOp::create(b, loc, doubles, weight))};
          });
      Value total =
          arith::TruncFOp::create(b, loc, floats, sumLoop.getResult(0));
      // pooled += fp64(w_m / total) · value_m, from +0.
      scf::ForOp poolLoop =
          overSlots({kb.splat(doubles, 0.0)}, [&](Value m, ValueRange carried) {
            Slot slot = slotOf(m);
            Value value = kb.load(floats, slot.valueRow, channel, 4);
            if (slot.present)
              value = select(slot.present, value, kb.splat(floats, 0.0));
            Value share = arith::DivFOp::create(
                b, loc, kb.load(floats, weights, times(m, 4 * kLanes), 64),
                total);
            return SmallVector<Value>{
                kb.add(carried[0],
                       kb.mul(arith::ExtFOp::create(b, loc, doubles, share),
                              arith::ExtFOp::create(b, loc, doubles, value)))};
          });
      // fp32, then held as bf16.
      kb.store(emitRoundToBf16(b, loc,
                               arith::TruncFOp::create(b, loc, floats,
                                                       poolLoop.getResult(0))),
               entry, channel, 64);
    });

    emitRmsNormRow(b, loc, entry, norm, entry, d, spec.eps,
                   /*bf16Compute=*/false, SquareSumOrder::RowOrder);
    emitRopeFactors(b, loc, frequencies, times(c, r), spec.ropeDim,
                    /*inverse=*/false, factors);
    Value ropePart = emitByteOffset(b, loc, entry, 4 * nope);
    emitRopeRotation(b, loc, ropePart, ropePart, spec.ropeDim, factors);
    Value result = entry;
    switch (spec.post) {
    case EntryPost::None:
      break;
    case EntryPost::Fp8:
      emitQuantSimSpan(b, loc, QuantSimFormat::E4m3, entry, entry, nope,
                       kFp8Block);
      break;
    case EntryPost::HadamardFp4:
      emitHadamardRowInOrder(b, loc, entry, transformed, d);
      emitQuantSimSpan(b, loc, QuantSimFormat::E2m1, transformed, transformed,
                       d, kFp4Block);
      result = transformed;
      break;
    }

    Value row = emitByteOffset(b, loc, cache, times(c, 4 * d));
    kb.forEach(kb.index(0), kb.index(4 * d), 4 * kLanes, [&](Value offset) {
      kb.store(emitStoredAs(b, loc, kb.load(floats, result, offset, 64),
                            spec.element, hardwareHalf),
               row, offset, 4);
    });
  });
  func::ReturnOp::create(b, loc);
  return args.fn;
}

//===----------------------------------------------------------------------===//
// The state kernel
//===----------------------------------------------------------------------===//

std::string CompressStateKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_compress_state_r{0}{1}_w{2}_c{3}", ratio,
                       overlap ? "_o" : "", stateWidth, capacity)
      .str();
}

std::string CompressStateKernelSpec::describe() const {
  return llvm::formatv("compress_state kernel [ratio = {0}{1}, w = {2}, "
                       "capacity = {3}]",
                       ratio, overlap ? ", overlap" : "", stateWidth, capacity)
      .str();
}

llvm::Error verifyCompressStateKernel(const CompressStateKernelSpec &spec) {
  const std::string what = spec.describe();
  if (spec.ratio < 1 || spec.ratio > CompressEntriesKernelSpec::kMaxRatio)
    return specError(what, llvm::formatv("expected a ratio in [1, {0}]",
                                         CompressEntriesKernelSpec::kMaxRatio));
  const int64_t granule = (spec.overlap ? 2 : 1) * kLanes;
  if (spec.stateWidth <= 0 || spec.stateWidth % granule != 0 ||
      spec.stateWidth > 2 * CompressEntriesKernelSpec::kMaxDim)
    return specError(what,
                     llvm::formatv("expected w a positive multiple of {0} up "
                                   "to {1}",
                                   granule,
                                   (spec.overlap ? 2 : 1) *
                                       CompressEntriesKernelSpec::kMaxDim));
  if (spec.capacity < 1 ||
      spec.capacity > kMaxCacheFloats / spec.getLayout().dim)
    return specError(what, "expected a capacity of at least one entry whose "
                           "bytes fit an i64");
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildCompressStateKernel(ModuleOp module, const CompressStateKernelSpec &spec,
                         const target::TargetInfo &target) {
  if (llvm::Error err = verifyCompressStateKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  auto floats = VectorType::get({kLanes}, b.getF32Type());
  const CompressedCacheLayout layout = spec.getLayout();
  const int64_t ringSlots = layout.getRingSlots();
  const int64_t tokenBytes = 4 * spec.stateWidth;

  Value values = emitStepOperand(b, loc, args, 0);
  Value gates = emitStepOperand(b, loc, args, 1);
  Value positions = emitStepOperand(b, loc, args, 2);
  Value cache = emitStepOperand(b, loc, args, 3);
  Value ringValues = emitByteOffset(b, loc, cache, layout.getValuesOffset());
  Value ringGates = emitByteOffset(b, loc, cache, layout.getGatesOffset());

  // The tokens no later token of the call overwrites: t >= T - S.
  Value first = arith::MaxSIOp::create(
      b, loc, args.begin,
      arith::SubIOp::create(b, loc, args.m, kb.index(ringSlots)));
  kb.forEach(first, args.end, 1, [&](Value token) {
    Value position = LLVM::LoadOp::create(
        b, loc, b.getI64Type(),
        emitByteOffset(b, loc, positions,
                       arith::MulIOp::create(b, loc, token, kb.index(8))),
        /*alignment=*/8);
    Value callRow = arith::MulIOp::create(b, loc, token, kb.index(tokenBytes));
    Value ringRow = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, position, kb.index(ringSlots)),
        kb.index(tokenBytes));
    for (auto [from, to] :
         {std::pair(values, ringValues), std::pair(gates, ringGates)}) {
      Value source = emitByteOffset(b, loc, from, callRow);
      Value slot = emitByteOffset(b, loc, to, ringRow);
      kb.forEach(
          kb.index(0), kb.index(tokenBytes), 4 * kLanes, [&](Value offset) {
            kb.store(kb.load(floats, source, offset, 4), slot, offset, 4);
          });
    }
  });
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
