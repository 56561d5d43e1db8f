//===- EmitterUtils.cpp - Building blocks shared by the kernel emitters ---===//
//
// Kernels address raw bytes (the ABI passes plain pointers into packed
// buffers), so memory is !llvm.ptr with i8 GEPs and unaligned llvm.load;
// arithmetic stays in arith/vector so the standard conversions lower it.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/bit.h"

#include <array>
#include <cassert>
#include <limits>

using namespace mlir;

namespace kf::codegen {

Value emitByteOffset(OpBuilder &b, Location loc, Value ptr, int64_t bytes) {
  if (bytes == 0)
    return ptr;
  Value offset = arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes);
  return emitByteOffset(b, loc, ptr, offset);
}

Value emitByteOffset(OpBuilder &b, Location loc, Value ptr, Value bytes) {
  return LLVM::GEPOp::create(b, loc, ptr.getType(), b.getI8Type(), ptr,
                             ValueRange{bytes});
}

Value emitLoad(OpBuilder &b, Location loc, Type type, Value ptr,
               int64_t bytes) {
  return LLVM::LoadOp::create(b, loc, type, emitByteOffset(b, loc, ptr, bytes),
                              /*alignment=*/1);
}

Value emitWeightLoad(OpBuilder &b, Location loc, Type type, Value ptr,
                     int64_t bytes) {
  return LLVM::LoadOp::create(b, loc, type, emitByteOffset(b, loc, ptr, bytes),
                              /*alignment=*/1, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, /*isInvariant=*/true);
}

Value emitSplat(OpBuilder &b, Location loc, VectorType type, int64_t value) {
  auto elementType = cast<IntegerType>(type.getElementType());
  APInt bits(elementType.getWidth(), value, /*isSigned=*/true);
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, bits));
}

Value emitInt16Pairs(OpBuilder &b, Location loc, Value low, Value high) {
  auto type = cast<VectorType>(low.getType());
  Value lowHalf =
      arith::AndIOp::create(b, loc, low, emitSplat(b, loc, type, 0xffff));
  Value highHalf =
      arith::ShLIOp::create(b, loc, high, emitSplat(b, loc, type, 16));
  return arith::OrIOp::create(b, loc, lowHalf, highHalf);
}

Value emitBitsAt(OpBuilder &b, Location loc, const DotEmitter &isa, Value bytes,
                 int64_t from, int64_t count, int64_t to) {
  assert(count > 0 && from >= 0 && to >= 0 && from + count <= 8 &&
         to + count <= 8 && "bits of a byte");
  auto type = cast<VectorType>(bytes.getType());
  if (from != to) {
    std::array<int8_t, 8> map;
    map.fill(-1);
    for (int64_t i = 0; i < count; ++i)
      map[to + i] = static_cast<int8_t>(from + i);
    if (Value moved = isa.emitByteBitMap(b, loc, bytes, map))
      return moved;
    bytes = from < to
                ? arith::ShLIOp::create(b, loc, bytes,
                                        emitSplat(b, loc, type, to - from))
                      .getResult()
                : arith::ShRUIOp::create(b, loc, bytes,
                                         emitSplat(b, loc, type, from - to))
                      .getResult();
  }
  return arith::AndIOp::create(
      b, loc, bytes, emitSplat(b, loc, type, ((1 << count) - 1) << to));
}

// Level by level from the lowest index bit, entries 2t and 2t + 1 merge into
// one by that bit of the index, until one remains; an odd level is padded
// with zeros, which no index reaches.
Value emitSelectTableLookup(OpBuilder &b, Location loc, Value indices,
                            ArrayRef<int8_t> table) {
  auto type = cast<VectorType>(indices.getType());
  assert(!table.empty() && table.size() <= 256 && "a table of byte indices");
  SmallVector<Value, 16> entries;
  for (int8_t v : table)
    entries.push_back(emitSplat(b, loc, type, v));
  Value zero = emitSplat(b, loc, type, 0);
  for (int bit = 1; entries.size() > 1; bit <<= 1) {
    if (entries.size() % 2 != 0)
      entries.push_back(zero);
    Value mask = emitSplat(b, loc, type, static_cast<int8_t>(bit));
    Value set = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, indices, mask), zero);
    SmallVector<Value, 16> merged;
    for (size_t t = 0; t < entries.size(); t += 2)
      merged.push_back(
          arith::SelectOp::create(b, loc, set, entries[t + 1], entries[t]));
    entries = std::move(merged);
  }
  return entries.front();
}

// Internal linkage: every module (one JIT dylib, one object file) carries
// its own copy, so kernels compiled separately never clash on the symbol.
void declareConstantTable(OpBuilder &b, Location loc, ModuleOp module,
                          llvm::StringRef name, ArrayRef<uint64_t> entries) {
  auto type = LLVM::LLVMArrayType::get(b.getI64Type(), entries.size());
  if (auto global = module.lookupSymbol<LLVM::GlobalOp>(name)) {
    assert(global.getType() == type && "one table per name");
    return;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto values = RankedTensorType::get({static_cast<int64_t>(entries.size())},
                                      b.getI64Type());
  SmallVector<APInt> bits;
  for (uint64_t e : entries)
    bits.emplace_back(64, e);
  LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                         LLVM::Linkage::Internal, name,
                         DenseElementsAttr::get(values, bits),
                         /*alignment=*/64);
}

Value emitConstantTableAddress(OpBuilder &b, Location loc,
                               llvm::StringRef name) {
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), name);
}

Value emitTableGather(OpBuilder &b, Location loc, Value table, Value indices) {
  int64_t rows = cast<VectorType>(indices.getType()).getNumElements();
  Type pointers = LLVM::getVectorType(table.getType(), rows);
  Value addresses = LLVM::GEPOp::create(b, loc, pointers, b.getI64Type(), table,
                                        ValueRange{indices});
  auto entries = VectorType::get({rows}, b.getI64Type());
  auto maskType = VectorType::get({rows}, b.getI1Type());
  Value all = arith::ConstantOp::create(b, loc, maskType,
                                        DenseElementsAttr::get(maskType, true));
  Value passThrough = emitSplat(b, loc, entries, 0);
  return LLVM::masked_gather::create(b, loc, entries, addresses, all,
                                     ValueRange{passThrough},
                                     /*alignment=*/8);
}

Value emitIntrinsic(OpBuilder &b, Location loc, llvm::StringRef name,
                    Type resultType, ValueRange args) {
  return LLVM::CallIntrinsicOp::create(b, loc, resultType,
                                       b.getStringAttr(name), args)
      .getResult(0);
}

bool hasHardwareHalf(const target::TargetInfo &target) {
  return target.arch == target::Arch::AArch64 ||
         (target.arch == target::Arch::X86_64 &&
          target.has(target::Feature::F16C));
}

// The integer path: normals and inf/NaN rebias the exponent; subnormals are
// the integer mantissa times 2^-24, exact in fp32.
Value emitHalfToFloat(OpBuilder &b, Location loc, Value halves,
                      bool hardwareHalf) {
  int64_t n = cast<VectorType>(halves.getType()).getNumElements();
  auto i32Type = VectorType::get({n}, b.getI32Type());
  auto f32Type = VectorType::get({n}, b.getF32Type());
  if (hardwareHalf) {
    Value f16 = arith::BitcastOp::create(
        b, loc, VectorType::get({n}, b.getF16Type()), halves);
    return arith::ExtFOp::create(b, loc, f32Type, f16);
  }
  auto splat = [&](int64_t v) { return emitSplat(b, loc, i32Type, v); };
  Value h = arith::ExtUIOp::create(b, loc, i32Type, halves);
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, h, splat(0x8000)), splat(16));
  Value magnitude = arith::AndIOp::create(b, loc, h, splat(0x7fff));
  Value shifted = arith::ShLIOp::create(b, loc, magnitude, splat(13));
  Value normal = arith::AddIOp::create(b, loc, shifted, splat(112 << 23));
  Value infNan = arith::OrIOp::create(b, loc, shifted, splat(0x7f800000));
  Value isInfNan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         magnitude, splat(0x7c00));
  Value bits = arith::SelectOp::create(b, loc, isInfNan, infNan, normal);
  Value subnormal = arith::MulFOp::create(
      b, loc, arith::SIToFPOp::create(b, loc, f32Type, magnitude),
      arith::ConstantOp::create(
          b, loc, f32Type,
          DenseElementsAttr::get(f32Type, b.getF32FloatAttr(0x1p-24f))));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                            magnitude, splat(0x400));
  bits = arith::SelectOp::create(
      b, loc, isSubnormal, arith::BitcastOp::create(b, loc, i32Type, subnormal),
      bits);
  bits = arith::OrIOp::create(b, loc, bits, sign);
  return arith::BitcastOp::create(b, loc, f32Type, bits);
}

// The integer path, for x >= 0 (kf::fp32ToFp16's cases): past the largest
// half it is inf; in the half normal range, dropping 13 mantissa bits with
// ties to even; below it, a multiple of 2^-24 rounded by the float adder
// (x * 2^24 < 2^14, so adding and removing 2^23 rounds it to an integer,
// ties to even), scaled back exactly.
Value emitRoundToHalf(OpBuilder &b, Location loc, Value x, bool hardwareHalf) {
  if (hardwareHalf) {
    Value half = arith::TruncFOp::create(b, loc, b.getF16Type(), x);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), half);
  }
  Type i32 = b.getI32Type();
  Type f32 = b.getF32Type();
  auto int32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  auto float32 = [&](float v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          llvm::APFloat(v));
  };
  Value u = arith::BitcastOp::create(b, loc, i32, x);
  Value odd = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, u, int32(13)), int32(1));
  Value rounded = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, u,
                            arith::AddIOp::create(b, loc, odd, int32(0xfff))),
      int32(~0x1fff));
  Value normal = arith::BitcastOp::create(b, loc, f32, rounded);
  Value scaled = arith::MulFOp::create(b, loc, x, float32(0x1p24f));
  Value integer = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, scaled, float32(0x1p23f)),
      float32(0x1p23f));
  Value subnormal = arith::MulFOp::create(b, loc, integer, float32(0x1p-24f));
  Value isSubnormal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            u, int32(0x38800000));
  Value overflows = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, u,
                                          int32(0x477ff000));
  Value result =
      arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
  return arith::SelectOp::create(
      b, loc, overflows, float32(std::numeric_limits<float>::infinity()),
      result);
}

// kf::fp32ToBf16 then back to fp32, on the integer bits: round to nearest,
// ties to even, by adding 0x7fff plus the kept part's lowest bit; a NaN is
// truncated and made quiet instead, as the carry could turn it into an
// infinity.
Value emitRoundToBf16(OpBuilder &b, Location loc, Value floats) {
  auto type = cast<VectorType>(floats.getType());
  VectorType i32Rows = VectorType::get(type.getShape(), b.getI32Type());
  auto splat = [&](int64_t v) { return emitSplat(b, loc, i32Rows, v); };
  Value bits = vector::BitCastOp::create(b, loc, i32Rows, floats);
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
  return vector::BitCastOp::create(b, loc, type, truncated);
}

// fdlibm's __ieee754_exp, whose error is below one fp64 ulp: x = k ln2 + r
// with k = round(x / ln2) (the float adder's rounding: adding and removing
// 1.5 · 2^52), ln2 split in a part whose products with k are exact and a
// correction (hi - lo = r); e^r = 1 - ((lo - r·c / (2 - c)) - hi), where c =
// r - r²·P(r²) with fdlibm's degree-5 Remez polynomial P; times 2^k built in
// the exponent field. Arguments are clamped to ±708, where 2^k is normal.
void emitTransposeTile(OpBuilder &b, Location loc,
                       MutableArrayRef<Value> tile) {
  const int64_t n = static_cast<int64_t>(tile.size());
  for (int64_t bit = 1; bit < n; bit *= 2)
    for (int64_t r = 0; r < n; ++r) {
      if (r & bit)
        continue;
      SmallVector<int64_t> low, high;
      for (int64_t c = 0; c < n; ++c) {
        low.push_back(c & bit ? n + (c ^ bit) : c);
        high.push_back(c & bit ? n + c : c ^ bit);
      }
      Value first = tile[r], second = tile[r | bit];
      tile[r] = vector::ShuffleOp::create(b, loc, first, second, low);
      tile[r | bit] = vector::ShuffleOp::create(b, loc, first, second, high);
    }
}

Value emitExp(OpBuilder &b, Location loc, Value x) {
  auto doubles = cast<VectorType>(x.getType());
  auto longs = VectorType::get(doubles.getShape(), b.getI64Type());
  KernelBuilder kb(b, loc);
  auto less = [&](Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, l, r);
  };
  // fdlibm e_exp.c's constants.
  constexpr double kInvLn2 = 1.44269504088896338700e+00;
  constexpr double kLn2Hi = 6.93147180369123816490e-01; // 32 bits: k·hi exact
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kP1 = 1.66666666666666019037e-01;
  constexpr double kP2 = -2.77777777770155933842e-03;
  constexpr double kP3 = 6.61375632143793436117e-05;
  constexpr double kP4 = -1.65339022054652515390e-06;
  constexpr double kP5 = 4.13813679705723846039e-08;
  constexpr double kMagic = 0x1.8p52; // rounds |v| < 2^51 to an integer
  constexpr double kBound = 708.0;

  Value bound = kb.splat(doubles, kBound),
        minusBound = kb.splat(doubles, -kBound);
  Value clamped = arith::SelectOp::create(
      b, loc, less(x, minusBound), minusBound,
      arith::SelectOp::create(b, loc, less(bound, x), bound, x));
  Value magic = kb.splat(doubles, kMagic);
  Value shifted = kb.add(kb.mul(clamped, kb.splat(doubles, kInvLn2)), magic);
  Value k = kb.sub(shifted, magic);
  Value hi = kb.sub(clamped, kb.mul(k, kb.splat(doubles, kLn2Hi)));
  Value lo = kb.mul(k, kb.splat(doubles, kLn2Lo));
  Value r = kb.sub(hi, lo);
  Value t = kb.mul(r, r);
  Value poly =
      kb.add(kb.splat(doubles, kP4), kb.mul(t, kb.splat(doubles, kP5)));
  poly = kb.add(kb.splat(doubles, kP3), kb.mul(t, poly));
  poly = kb.add(kb.splat(doubles, kP2), kb.mul(t, poly));
  poly = kb.add(kb.splat(doubles, kP1), kb.mul(t, poly));
  Value c = kb.sub(r, kb.mul(t, poly));
  Value quotient = arith::DivFOp::create(b, loc, kb.mul(r, c),
                                         kb.sub(kb.splat(doubles, 2.0), c));
  Value y = kb.sub(kb.splat(doubles, 1.0), kb.sub(kb.sub(lo, quotient), hi));
  // 2^k: k is shifted's bits less magic's (an integer below 2^51 held with
  // a unit step), put in the exponent field; no float-to-int conversion,
  // which LLVM makes poison on a NaN.
  Value kBits = arith::SubIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, longs, shifted),
      emitSplat(b, loc, longs, llvm::bit_cast<int64_t>(kMagic)));
  Value twoToK = arith::BitcastOp::create(
      b, loc, doubles,
      arith::ShLIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, kBits, emitSplat(b, loc, longs, 1023)),
          emitSplat(b, loc, longs, 52)));
  return arith::SelectOp::create(
      b, loc, less(bound, x),
      kb.splat(doubles, std::numeric_limits<double>::infinity()),
      kb.mul(y, twoToK));
}

// log(1 + x) by fdlibm's s_log1p.c, branch free. Below sqrt(2) - 1 and
// above sqrt(2)/2 - 1 (fdlibm's bounds, by their high words) f = x itself and k
// = 0; elsewhere u = 1 + x is rounded, c = the rounding's error over u
// (fdlibm's correction term), and u = 2^k · (1 + f) with sqrt(2)/2 <= 1 + f <
// sqrt(2), by the exponent and high mantissa bits (fdlibm's hu < 0x6a09e). Then
// s = f / (2 + f) and log(1 + f) = f - (f²/2 - s·(f²/2 + R(s²))), R fdlibm's
// degree-7 Remez polynomial (Lp1..Lp7), plus k·ln2 in two parts and c. fdlibm's
// shortcuts for |x| < 2^-29 and |f| < 2^-20 only save work: the general path is
// as accurate there. +inf and NaN are returned as they are, -1 gives -inf and
// below it NaN.
Value emitLog1p(OpBuilder &b, Location loc, Value x) {
  auto doubles = cast<VectorType>(x.getType());
  auto longs = VectorType::get(doubles.getShape(), b.getI64Type());
  KernelBuilder kb(b, loc);
  auto cmp = [&](arith::CmpFPredicate predicate, Value l, Value r) -> Value {
    return arith::CmpFOp::create(b, loc, predicate, l, r);
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  auto longSplat = [&](int64_t v) { return emitSplat(b, loc, longs, v); };
  auto splat = [&](double v) { return kb.splat(doubles, v); };
  // fdlibm s_log1p.c's constants.
  constexpr double kLn2Hi = 6.93147180369123816490e-01; // 32 bits: k·hi exact
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kLp[] = {6.666666666666735130e-01, 3.999999999940941908e-01,
                            2.857142874366239149e-01, 2.222219843214978396e-01,
                            1.818357216161805012e-01, 1.531383769920937332e-01,
                            1.479819860511658591e-01};
  constexpr double kInf = std::numeric_limits<double>::infinity();

  Value one = splat(1.0);
  Value u = kb.add(one, x);
  Value uBits = arith::BitcastOp::create(b, loc, longs, u);
  Value high = arith::ShRUIOp::create(b, loc, uBits, longSplat(32));
  Value hu = arith::AndIOp::create(b, loc, high, longSplat(0x000fffff));
  Value exponent = arith::SubIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, uBits, longSplat(52)),
          longSplat(0x7ff)),
      longSplat(1023));
  // 1 + f in [sqrt(2)/2, sqrt(2)): the mantissa with exponent 0, or -1 (and
  // k one more) where the mantissa is sqrt(2) or more.
  Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, hu,
                                      longSplat(0x6a09e));
  Value kLong = select(below, exponent,
                       arith::AddIOp::create(b, loc, exponent, longSplat(1)));
  Value newHigh = arith::OrIOp::create(
      b, loc, hu, select(below, longSplat(0x3ff00000), longSplat(0x3fe00000)));
  Value normalized = arith::BitcastOp::create(
      b, loc, doubles,
      arith::OrIOp::create(
          b, loc, arith::ShLIOp::create(b, loc, newHigh, longSplat(32)),
          arith::AndIOp::create(b, loc, uBits, longSplat(0xffffffff))));
  Value kReduced = arith::SIToFPOp::create(b, loc, doubles, kLong);
  // The error of u = 1 + x, over u: exact differences either way of k.
  Value c = arith::DivFOp::create(
      b, loc,
      select(cmp(arith::CmpFPredicate::OGT, kReduced, splat(0.0)),
             kb.sub(one, kb.sub(u, x)), kb.sub(x, kb.sub(u, one))),
      u);
  // fdlibm's k = 0 range, where f = x is exact.
  Value small = arith::AndIOp::create(
      b, loc, cmp(arith::CmpFPredicate::OLT, x, splat(0x1.a827ap-2)),
      cmp(arith::CmpFPredicate::OGT, x, splat(-0x1.2bec4p-2)));
  Value zero = splat(0.0);
  Value f = select(small, x, kb.sub(normalized, one));
  Value k = select(small, zero, kReduced);
  c = select(small, zero, c);

  Value hfsq = kb.mul(kb.mul(splat(0.5), f), f);
  Value s = arith::DivFOp::create(b, loc, f, kb.add(splat(2.0), f));
  Value z = kb.mul(s, s);
  Value r = splat(kLp[6]);
  for (int i = 5; i >= 0; --i)
    r = kb.add(splat(kLp[i]), kb.mul(z, r));
  r = kb.mul(z, r);
  // k·ln2_hi - ((hfsq - (s·(hfsq + R) + (k·ln2_lo + c))) - f); for k = 0
  // (c = 0) the very value of fdlibm's f - (hfsq - s·(hfsq + R)).
  Value y =
      kb.sub(kb.mul(k, splat(kLn2Hi)),
             kb.sub(kb.sub(hfsq, kb.add(kb.mul(s, kb.add(hfsq, r)),
                                        kb.add(kb.mul(k, splat(kLn2Lo)), c))),
                    f));
  Value special =
      arith::OrIOp::create(b, loc, cmp(arith::CmpFPredicate::UNO, x, x),
                           cmp(arith::CmpFPredicate::OEQ, x, splat(kInf)));
  y = select(special, x, y);
  y = select(cmp(arith::CmpFPredicate::OEQ, x, splat(-1.0)), splat(-kInf), y);
  return select(cmp(arith::CmpFPredicate::OLT, x, splat(-1.0)),
                splat(std::numeric_limits<double>::quiet_NaN()), y);
}

// sin x and cos x by fdlibm's algorithm (FreeBSD msun's e_rem_pio2.c
// medium path, k_sin.c and k_cos.c), branch free. The argument is reduced to
// y0 + y1 = x - n·π/2, |y0| <= ~π/4, with n = rnint(x · 2/π) (the float
// adder's rounding: adding and removing 1.5 · 2^52) and π/2 in three parts
// of 33 bits and a tail (Cody and Waite): x - n·p1 is exact for |n| < 2^20;
// a second round subtracts n·p2 and keeps that subtraction's error by a
// two-sum, with the tail n·p2t; where the second round cancelled more than
// 49 bits of x (fdlibm's "i > 49", by a select) a third round with p3 and
// p3t replaces its result, r being then the exact t - n·p2. fdlibm runs the
// second round only where the first leaves less than 2^-16 of x; elsewhere
// it is exact too (|n·p2| lies far below the remainder) and only adds bits.
// Every step is exact or good to 118 bits below 2^20 · π/2; beyond, n·p1 is
// no longer exact and the result loses bits. sin and cos of y0 + y1 are
// fdlibm's kernel polynomials, both computed (each lane may need either),
// swapped and negated by n mod 4.
std::pair<Value, Value> emitSinCos(OpBuilder &b, Location loc, Value x) {
  auto doubles = cast<VectorType>(x.getType());
  auto longs = VectorType::get(doubles.getShape(), b.getI64Type());
  KernelBuilder kb(b, loc);
  auto bits = [&](Value v) -> Value {
    return arith::BitcastOp::create(b, loc, longs, v);
  };
  auto longSplat = [&](int64_t v) { return emitSplat(b, loc, longs, v); };
  // The biased exponent field of each lane.
  auto exponent = [&](Value v) -> Value {
    return arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, bits(v), longSplat(52)),
        longSplat(0x7ff));
  };

  // e_rem_pio2.c's constants: 2/π, and π/2 as p1 + p2 + p3 + p3t (each of
  // p1, p2, p3 33 bits, so that n·p is exact for |n| < 2^20), p2t = p3 + p3t
  // rounded.
  constexpr double kInvPio2 = 6.36619772367581382433e-01;
  constexpr double kPio2_1 = 1.57079632673412561417e+00;
  constexpr double kPio2_2 = 6.07710050630396597660e-11;
  constexpr double kPio2_2t = 2.02226624879595063154e-21;
  constexpr double kPio2_3 = 2.02226624871116645580e-21;
  constexpr double kPio2_3t = 8.47842766036889956997e-32;
  constexpr double kMagic = 0x1.8p52; // rounds |v| < 2^51 to an integer
  // k_sin.c's and k_cos.c's polynomials.
  constexpr double kS1 = -1.66666666666666324348e-01;
  constexpr double kS2 = 8.33333333332248946124e-03;
  constexpr double kS3 = -1.98412698298579493134e-04;
  constexpr double kS4 = 2.75573137070700676789e-06;
  constexpr double kS5 = -2.50507602534068634195e-08;
  constexpr double kS6 = 1.58969099521155010221e-10;
  constexpr double kC1 = 4.16666666666666019037e-02;
  constexpr double kC2 = -1.38888888888741095749e-03;
  constexpr double kC3 = 2.48015872894767294178e-05;
  constexpr double kC4 = -2.75573143513906633035e-07;
  constexpr double kC5 = 2.08757232129817482790e-09;
  constexpr double kC6 = -1.13596475577881948265e-11;

  // n = rnint(x · 2/π); n's integer from the shifted value's bits, no
  // float-to-int conversion (which LLVM makes poison on a NaN).
  Value magic = kb.splat(doubles, kMagic);
  Value shifted = kb.add(kb.mul(x, kb.splat(doubles, kInvPio2)), magic);
  Value fn = kb.sub(shifted, magic);
  Value n = arith::SubIOp::create(b, loc, bits(shifted),
                                  longSplat(llvm::bit_cast<int64_t>(kMagic)));
  // The first round, x - n·p1, exact; the second, its error kept by the
  // two-sum (t - r) - w.
  Value t = kb.sub(x, kb.mul(fn, kb.splat(doubles, kPio2_1)));
  Value w = kb.mul(fn, kb.splat(doubles, kPio2_2));
  Value r = kb.sub(t, w);
  w = kb.sub(kb.mul(fn, kb.splat(doubles, kPio2_2t)), kb.sub(kb.sub(t, r), w));
  // The third where the second cancelled more than 49 bits of x: then r is
  // the exact t - n·p2 and the third subtracts n·(p3 + p3t) from it.
  Value y0 = kb.sub(r, w);
  Value cancelled = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sgt,
      arith::SubIOp::create(b, loc, exponent(x), exponent(y0)), longSplat(49));
  t = r;
  Value w3 = kb.mul(fn, kb.splat(doubles, kPio2_3));
  Value r3 = kb.sub(t, w3);
  w3 = kb.sub(kb.mul(fn, kb.splat(doubles, kPio2_3t)),
              kb.sub(kb.sub(t, r3), w3));
  r = arith::SelectOp::create(b, loc, cancelled, r3, r);
  w = arith::SelectOp::create(b, loc, cancelled, w3, w);
  y0 = kb.sub(r, w);
  Value y1 = kb.sub(kb.sub(r, y0), w);

  Value half = kb.splat(doubles, 0.5), one = kb.splat(doubles, 1.0);
  Value z = kb.mul(y0, y0);
  Value zz = kb.mul(z, z);
  // __kernel_sin(y0, y1, 1).
  Value sr =
      kb.add(kb.add(kb.splat(doubles, kS2),
                    kb.mul(z, kb.add(kb.splat(doubles, kS3),
                                     kb.mul(z, kb.splat(doubles, kS4))))),
             kb.mul(kb.mul(z, zz), kb.add(kb.splat(doubles, kS5),
                                          kb.mul(z, kb.splat(doubles, kS6)))));
  Value v = kb.mul(z, y0);
  Value sinY = kb.sub(
      y0, kb.sub(kb.sub(kb.mul(z, kb.sub(kb.mul(half, y1), kb.mul(v, sr))), y1),
                 kb.mul(v, kb.splat(doubles, kS1))));
  // __kernel_cos(y0, y1).
  Value cr = kb.add(
      kb.mul(z, kb.add(kb.splat(doubles, kC1),
                       kb.mul(z, kb.add(kb.splat(doubles, kC2),
                                        kb.mul(z, kb.splat(doubles, kC3)))))),
      kb.mul(kb.mul(zz, zz),
             kb.add(kb.splat(doubles, kC4),
                    kb.mul(z, kb.add(kb.splat(doubles, kC5),
                                     kb.mul(z, kb.splat(doubles, kC6)))))));
  Value hz = kb.mul(half, z);
  Value wc = kb.sub(one, hz);
  Value cosY = kb.add(wc, kb.add(kb.sub(kb.sub(one, wc), hz),
                                 kb.sub(kb.mul(z, cr), kb.mul(y0, y1))));

  // n mod 4: sin x = sin y, cos y, -sin y, -cos y and cos x = cos y, -sin y,
  // -cos y, sin y; the sign put in by the sign bit, as fdlibm negates.
  Value odd = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne,
      arith::AndIOp::create(b, loc, n, longSplat(1)), longSplat(0));
  auto signOf = [&](Value quadrant) -> Value {
    return arith::ShLIOp::create(
        b, loc, arith::AndIOp::create(b, loc, quadrant, longSplat(2)),
        longSplat(62));
  };
  auto withSign = [&](Value value, Value sign) -> Value {
    return arith::BitcastOp::create(
        b, loc, doubles, arith::XOrIOp::create(b, loc, bits(value), sign));
  };
  Value sinX =
      withSign(arith::SelectOp::create(b, loc, odd, cosY, sinY), signOf(n));
  Value cosX = withSign(arith::SelectOp::create(b, loc, odd, sinY, cosY),
                        signOf(arith::AddIOp::create(b, loc, n, longSplat(1))));
  return {sinX, cosX};
}

} // namespace kf::codegen
