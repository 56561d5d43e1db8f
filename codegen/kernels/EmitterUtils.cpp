//===- EmitterUtils.cpp - Building blocks shared by the kernel emitters ---===//
//
// Kernels address raw bytes (the ABI passes plain pointers into packed
// buffers), so memory is !llvm.ptr with i8 GEPs and unaligned llvm.load;
// arithmetic stays in arith/vector so the standard conversions lower it.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/Emitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

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

} // namespace kf::codegen
