//===- DotEmitters.cpp - The dot emitter of each ISA ----------------------===//

#include "isa/DotEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>

using namespace mlir;

namespace kf::codegen {

Value DotEmitter::emitTableLookup(OpBuilder &b, Location loc, Value indices,
                                  ArrayRef<int8_t> table) const {
  return emitSelectTableLookup(b, loc, indices, table);
}

Value DotEmitter::emitScaledAdd(OpBuilder &b, Location loc, Value acc,
                                Value dot, Value scale, int64_t dotBound,
                                int64_t scaleBound) const {
  return arith::AddIOp::create(b, loc, acc,
                               arith::MulIOp::create(b, loc, dot, scale));
}

Value DotEmitter::emitWordByte(OpBuilder &b, Location loc, Value words,
                               int64_t index) const {
  auto type = cast<VectorType>(words.getType());
  Value shifted =
      index == 0 ? words
                 : arith::ShRUIOp::create(b, loc, words,
                                          emitSplat(b, loc, type, 8 * index))
                       .getResult();
  return index == 3 ? shifted
                    : arith::AndIOp::create(b, loc, shifted,
                                            emitSplat(b, loc, type, 255))
                          .getResult();
}

Value DotEmitter::emitPairDot(OpBuilder &b, Location loc, Value acc, Value x,
                              Value y) const {
  auto type = cast<VectorType>(acc.getType());
  Value sixteen = emitSplat(b, loc, type, 16);
  auto low = [&](Value v) {
    return arith::ShRSIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, v, sixteen), sixteen);
  };
  auto high = [&](Value v) {
    return arith::ShRSIOp::create(b, loc, v, sixteen);
  };
  Value sum = arith::AddIOp::create(
      b, loc, acc, arith::MulIOp::create(b, loc, low(x), low(y)));
  return arith::AddIOp::create(b, loc, sum,
                               arith::MulIOp::create(b, loc, high(x), high(y)));
}

Value DotEmitter::emitSumPairTimes(OpBuilder &b, Location loc, Value acc,
                                   Value factor, Value sums) const {
  Type i16 = b.getI16Type(), i32 = b.getI32Type();
  auto half = [&](int64_t bytes) {
    return arith::ExtSIOp::create(b, loc, i32,
                                  emitLoad(b, loc, i16, sums, bytes));
  };
  Value sum = arith::AddIOp::create(b, loc, half(0), half(2));
  Value splat = vector::BroadcastOp::create(b, loc, acc.getType(), sum);
  return arith::AddIOp::create(b, loc, acc,
                               arith::MulIOp::create(b, loc, factor, splat));
}

Value emitPshufbLookup(OpBuilder &b, Location loc, llvm::StringRef intrinsic,
                       Value indices, ArrayRef<int8_t> table) {
  assert(table.size() <= 16 && "vpshufb looks up 16 bytes");
  auto type = cast<VectorType>(indices.getType());
  SmallVector<int8_t, 64> lanes(type.getNumElements(), 0);
  for (size_t i = 0; i < lanes.size(); ++i)
    if (i % 16 < table.size())
      lanes[i] = table[i % 16];
  Value repeated = arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, ArrayRef(lanes)));
  return emitIntrinsic(b, loc, intrinsic, type, {repeated, indices});
}

// Every part is looked up with the same indices (vpshufb reads their low 4
// bits; bit 7, which would zero the byte, is clear below 64), then index bit
// 4 picks within each pair of parts and bit 5 between the pairs.
Value emitSplitPshufbLookup(OpBuilder &b, Location loc,
                            llvm::StringRef intrinsic, Value indices,
                            ArrayRef<int8_t> table) {
  constexpr size_t kPartBytes = 16;
  assert(table.size() <= 4 * kPartBytes && "4 vpshufb look up 64 bytes");
  if (table.size() <= kPartBytes)
    return emitPshufbLookup(b, loc, intrinsic, indices, table);
  SmallVector<Value, 4> parts;
  for (size_t begin = 0; begin < table.size(); begin += kPartBytes)
    parts.push_back(emitPshufbLookup(
        b, loc, intrinsic, indices,
        table.slice(begin, std::min(kPartBytes, table.size() - begin))));
  auto type = cast<VectorType>(indices.getType());
  Value zero = emitSplat(b, loc, type, 0);
  auto bitSet = [&](int64_t bit) -> Value {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, indices, emitSplat(b, loc, type, bit)),
        zero);
  };
  Value bit4 = bitSet(16);
  Value low = arith::SelectOp::create(b, loc, bit4, parts[1], parts[0]);
  if (parts.size() == 2)
    return low;
  // A third part alone needs no bit 4: its indices are 32 .. 47.
  Value high = parts.size() == 4
                   ? arith::SelectOp::create(b, loc, bit4, parts[3], parts[2])
                   : parts[2];
  return arith::SelectOp::create(b, loc, bitSet(32), high, low);
}

std::unique_ptr<DotEmitter> createDotEmitter(KernelIsa isa,
                                             const target::TargetInfo &target) {
  switch (isa) {
  case KernelIsa::Scalar:
    return createScalarDotEmitter();
  case KernelIsa::Avx2:
    return createAvx2DotEmitter();
  case KernelIsa::Avx512Vnni:
    return createAvx512VnniDotEmitter(
        /*vbmi=*/target.has(target::Feature::AVX512VBMI),
        /*gfni=*/target.has(target::Feature::GFNI),
        /*bmi2=*/target.has(target::Feature::BMI2));
  case KernelIsa::NeonDotprod:
    return createNeonDotprodDotEmitter();
  case KernelIsa::Avx512:
  case KernelIsa::Avx512Bf16:
  case KernelIsa::Neon:
  case KernelIsa::NeonBf16:
    return nullptr; // float ISAs: createFloatDotEmitter
  }
  return nullptr;
}

std::unique_ptr<FloatDotEmitter> createFloatDotEmitter(KernelIsa isa,
                                                       kf::Format format) {
  assert(isaSupportsFormat(isa, format) && kf::isFloatFormat(format));
  switch (isa) {
  case KernelIsa::Avx512Bf16:
    return createAvx512Bf16DotEmitter();
  case KernelIsa::NeonBf16:
    return createNeonBf16DotEmitter();
  case KernelIsa::Scalar:
    // No FMA instruction on the portable targets (llvm.fma would become a
    // library call there).
    return createFloatFmaDotEmitter(format, /*fused=*/false);
  default:
    return createFloatFmaDotEmitter(format, /*fused=*/true);
  }
}

} // namespace kf::codegen
