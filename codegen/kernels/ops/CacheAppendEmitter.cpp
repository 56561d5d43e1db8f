//===- CacheAppendEmitter.cpp - The compiled kf.cache_append --------------===//
//
// The interpreter's kf.cache_append: ring[positions[t] mod R] =
// storedAs(element, rows[t]) for t in order. Of the tokens of one call that
// share a slot only the last one's row survives, and with consecutive
// positions those are the last R tokens, one per slot; so item t writes only
// when t + R >= T, and the items of a call write disjoint slots, whatever the
// threads. A row is copied 16 floats at a time through the element's
// rounding (emitStoredAs, the interpreter's storedAs), which is an exact
// integer or conversion operation: bit for bit.
//
// The rounding to a half is the target's conversion where it has one (F16C,
// AArch64), else integer arithmetic (LLVM would otherwise call a library
// routine): kf::fp32ToFp16's cases on the magnitude, its sign put back.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/CacheKernels.h"

#include "RowArithmetic.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;

/// kf::fp16ToFp32(kf::fp32ToFp16(x)) for each lane, in integer arithmetic
/// on the magnitude a: a NaN keeps its top 10 payload bits, made quiet; from
/// 65520 (0x477ff000) up it is inf; in the half normal range 13 mantissa
/// bits go, ties to even; below 2^-14 it is a multiple of 2^-24, rounded by
/// the float adder (a · 2^24 < 2^10, so adding and removing 2^23 rounds it
/// to an integer, ties to even, and 2^-25 and below to 0), scaled back
/// exactly. Then the sign.
Value emitRoundToHalfInIntegers(OpBuilder &b, Location loc, Value floats) {
  auto type = cast<VectorType>(floats.getType());
  auto words = VectorType::get(type.getShape(), b.getI32Type());
  KernelBuilder kb(b, loc);
  auto splat = [&](int64_t v) { return emitSplat(b, loc, words, v); };
  auto unsignedAtLeast = [&](Value v, int64_t bound) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, v,
                                 splat(bound));
  };
  Value bits = arith::BitcastOp::create(b, loc, words, floats);
  Value sign = arith::AndIOp::create(b, loc, bits,
                                     splat(static_cast<int32_t>(0x80000000u)));
  Value magnitude = arith::AndIOp::create(b, loc, bits, splat(0x7fffffff));
  Value odd = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, magnitude, splat(13)), splat(1));
  Value normal = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, magnitude,
                            arith::AddIOp::create(b, loc, odd, splat(0xfff))),
      splat(~0x1fff));
  Value scaled = kb.mul(arith::BitcastOp::create(b, loc, type, magnitude),
                        kb.splat(type, 0x1p24));
  Value integer =
      kb.sub(kb.add(scaled, kb.splat(type, 0x1p23)), kb.splat(type, 0x1p23));
  Value subnormal = arith::BitcastOp::create(
      b, loc, words, kb.mul(integer, kb.splat(type, 0x1p-24)));
  Value nan = arith::AndIOp::create(
      b, loc, arith::OrIOp::create(b, loc, magnitude, splat(0x400000)),
      splat(~0x1fff));
  Value rounded = arith::SelectOp::create(
      b, loc, unsignedAtLeast(magnitude, 0x38800000), normal, subnormal);
  rounded =
      arith::SelectOp::create(b, loc, unsignedAtLeast(magnitude, 0x477ff000),
                              splat(0x7f800000), rounded);
  rounded = arith::SelectOp::create(
      b, loc, unsignedAtLeast(magnitude, 0x7f800001), nan, rounded);
  return arith::BitcastOp::create(b, loc, type,
                                  arith::OrIOp::create(b, loc, rounded, sign));
}

} // namespace

bool isCacheElement(kf::Format element) {
  return element == kf::Format::F32 || element == kf::Format::F16 ||
         element == kf::Format::BF16;
}

Value emitStoredAs(OpBuilder &b, Location loc, Value floats, kf::Format element,
                   bool hardwareHalf) {
  switch (element) {
  case kf::Format::BF16:
    return emitRoundToBf16(b, loc, floats);
  case kf::Format::F16: {
    if (!hardwareHalf)
      return emitRoundToHalfInIntegers(b, loc, floats);
    auto type = cast<VectorType>(floats.getType());
    Value halves = arith::TruncFOp::create(
        b, loc, VectorType::get(type.getShape(), b.getF16Type()), floats);
    return arith::ExtFOp::create(b, loc, type, halves);
  }
  default:
    return floats;
  }
}

std::string CacheAppendKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_cache_append_r{0}_d{1}_{2}", rows, dim,
                       kf::formatInfo(element).name)
      .str();
}

std::string CacheAppendKernelSpec::describe() const {
  return llvm::formatv("cache_append kernel [rows = {0}, D = {1}, {2}]", rows,
                       dim, kf::formatInfo(element).name)
      .str();
}

llvm::Error verifyCacheAppendKernel(const CacheAppendKernelSpec &spec) {
  if (spec.rows < 1)
    return llvm::createStringError(spec.describe() +
                                   ": expected at least one row");
  if (spec.dim <= 0 || spec.dim % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected D a positive multiple of {1}",
                      spec.describe(), kLanes)
            .str());
  if (!isCacheElement(spec.element))
    return llvm::createStringError(spec.describe() +
                                   ": expected an f32, f16 or bf16 element");
  if (spec.rows > std::numeric_limits<int64_t>::max() / 4 / spec.dim)
    return llvm::createStringError(spec.describe() +
                                   ": the ring's bytes overflow an i64");
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildCacheAppendKernel(ModuleOp module, const CacheAppendKernelSpec &spec,
                       const target::TargetInfo &target) {
  if (llvm::Error err = verifyCacheAppendKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  auto floats = VectorType::get({kLanes}, b.getF32Type());
  const bool hardwareHalf = hasHardwareHalf(target);

  Value rows = emitStepOperand(b, loc, args, 0);
  Value positions = emitStepOperand(b, loc, args, 1);
  Value ring = emitStepOperand(b, loc, args, 2);
  const int64_t rowBytes = 4 * spec.dim;

  // The tokens no later token of the call overwrites: t >= T - R.
  Value first = arith::MaxSIOp::create(
      b, loc, args.begin,
      arith::SubIOp::create(b, loc, args.m, kb.index(spec.rows)));
  kb.forEach(first, args.end, 1, [&](Value token) {
    Value position = LLVM::LoadOp::create(
        b, loc, b.getI64Type(),
        emitByteOffset(b, loc, positions,
                       arith::MulIOp::create(b, loc, token, kb.index(8))),
        /*alignment=*/8);
    // Unsigned: a slot inside the ring whatever the i64 (positions are
    // non-negative: the runtime checks them).
    Value slot = arith::RemUIOp::create(b, loc, position, kb.index(spec.rows));
    Value source = emitByteOffset(
        b, loc, rows, arith::MulIOp::create(b, loc, token, kb.index(rowBytes)));
    Value slotRow = emitByteOffset(
        b, loc, ring, arith::MulIOp::create(b, loc, slot, kb.index(rowBytes)));
    kb.forEach(kb.index(0), kb.index(rowBytes), 4 * kLanes, [&](Value offset) {
      kb.store(emitStoredAs(b, loc, kb.load(floats, source, offset, 4),
                            spec.element, hardwareHalf),
               slotRow, offset, 4);
    });
  });
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
