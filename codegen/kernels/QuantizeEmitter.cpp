//===- QuantizeEmitter.cpp - The compiled activation quantizers -----------===//
//
// Q8_0, per column and block of 32: amax = max |x|, d = fp16(amax / 127) kept
// as fp32, q = round-half-even(x * (127 / amax)), and the sum of the q. Every
// float operation is the reference packer's (kf::pack_activations), in the
// same precision, so the bytes are identical: the max is order-independent,
// the division and the products are single IEEE operations, and the
// rounding to an integer is done by the float adder (|x * id| <= 127.x, so
// adding and removing 1.5 * 2^23 rounds to the nearest integer, ties to even,
// as nearbyintf does in the default rounding mode).
//
// Q8_K, per block of 256 (q8_k.cpp's quantize_activation): max = the first
// element of largest magnitude (its index is the smallest where |x| equals
// the max of the magnitudes, then the element is loaded), iscale = -127 / max,
// q = min(127, round-half-even(iscale * x)), d = 1 / iscale, and the 16 sums
// of 16 quants; a block whose max is 0 is all zero bytes (iscale 0 gives
// that). The same single IEEE operations as the reference.
//
// BF16 and F32 (the float kernels' activations): each element rounded to the
// nearest bf16 (ties to even, NaNs kept quiet: kf::fp32ToBf16) or copied,
// and the column's last block padded with zeros.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/QuantizeKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/MatmulEmitter.h"
#include "kf/runtime/packed_layout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kf::codegen {

std::string QuantizeKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_quantize_{0}_k{1}", formatInfo(activation).name, k)
      .str();
}

std::string QuantizeKernelSpec::describe() const {
  return llvm::formatv("{0} activation quantizer [K = {1}]",
                       formatInfo(activation).name, k)
      .str();
}

llvm::Error verifyQuantizeKernel(const QuantizeKernelSpec &spec) {
  if (kf::isFloatFormat(spec.activation)) {
    if (spec.k <= 0)
      return llvm::createStringError(spec.describe() + ": expected K > 0");
    return llvm::Error::success();
  }
  if (spec.activation != kf::Format::Q8_0 &&
      spec.activation != kf::Format::Q8_K)
    return llvm::createStringError(
        spec.describe() + ": expected q8_0, q8_k, bf16 or f32 activations");
  int64_t block = kf::activationLayout(spec.activation).blockElems;
  if (spec.k <= 0 || spec.k % block != 0)
    return llvm::createStringError(
        spec.describe() +
        llvm::formatv(": expected K a positive multiple of {0}", block).str());
  return llvm::Error::success();
}

namespace {

constexpr int64_t kBlockElems = 32;

/// max |x| over every lane of `chunks` (f32 vectors of one type), as the
/// reference's absmax finds it: NaNs ignored (std::max(amax, NaN) keeps
/// amax), so 0 when there is nothing else. A float maxnum reduction is
/// lowered to a sequential chain of compares and blends, one per lane
/// (docs/codegen-measurements.md, "Code generation"), so the magnitudes' bit
/// patterns, NaNs' replaced by 0, are compared as integers instead, which
/// orders non-negative floats (+inf included) as floats, in a tree.
Value emitAbsMax(OpBuilder &b, Location loc, ArrayRef<Value> chunks) {
  auto floats = cast<VectorType>(chunks.front().getType());
  auto ints = floats.clone(b.getI32Type());
  Value infinity = emitSplat(b, loc, ints, 0x7f800000);
  Value zero = emitSplat(b, loc, ints, 0);
  Value max;
  for (Value x : chunks) {
    Value bits =
        arith::AndIOp::create(b, loc, arith::BitcastOp::create(b, loc, ints, x),
                              emitSplat(b, loc, ints, 0x7fffffff));
    Value isNan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, bits,
                                        infinity);
    bits = arith::SelectOp::create(b, loc, isNan, zero, bits);
    max = max ? arith::MaxSIOp::create(b, loc, max, bits) : bits;
  }
  return arith::BitcastOp::create(
      b, loc, b.getF32Type(),
      vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXSI, max));
}

/// One block: 32 floats at `in` to the packed block at `out`.
void emitBlock(OpBuilder &b, Location loc, Value in, Value out,
               bool hardwareHalf) {
  Type f32 = b.getF32Type();
  auto floats = VectorType::get({kBlockElems}, f32);
  auto ints = VectorType::get({kBlockElems}, b.getI32Type());
  auto f32Const = [&](float v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          llvm::APFloat(v));
  };
  auto f32Splat = [&](Value v) -> Value {
    return vector::BroadcastOp::create(b, loc, floats, v);
  };

  Value x = LLVM::LoadOp::create(b, loc, floats, in, /*alignment=*/4);
  Value amax = emitAbsMax(b, loc, x);

  Value d = emitRoundToHalf(
      b, loc, arith::DivFOp::create(b, loc, amax, f32Const(127.0f)),
      hardwareHalf);
  Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, amax,
                                     f32Const(0.0f));
  Value id = arith::SelectOp::create(
      b, loc, zero, f32Const(0.0f),
      arith::DivFOp::create(b, loc, f32Const(127.0f), amax));

  Value scaled = arith::MulFOp::create(b, loc, x, f32Splat(id));
  Value magic = f32Splat(f32Const(0x1.8p23f));
  Value rounded = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, scaled, magic), magic);
  Value q = arith::FPToSIOp::create(b, loc, ints, rounded);
  // The sums of 8 (FRACTAL64's and VQ3_64's sub-blocks), |.| <= 8 * 127, by
  // one tree for all four: after adding lane i ^ 4, i ^ 2 and i ^ 1, every
  // lane of a group of 8 holds the group's sum. The block's sum is theirs.
  Value tree = q;
  for (int64_t distance : {4, 2, 1}) {
    SmallVector<int64_t, kBlockElems> partner(kBlockElems);
    for (int64_t i = 0; i < kBlockElems; ++i)
      partner[i] = i ^ distance;
    tree = arith::AddIOp::create(
        b, loc, tree, vector::ShuffleOp::create(b, loc, tree, tree, partner));
  }
  SmallVector<Value, 4> sums8;
  Value sum;
  for (int64_t s = 0; s < kBlockElems / 8; ++s) {
    Value group = vector::ExtractOp::create(b, loc, tree, 8 * s);
    sum = sum ? arith::AddIOp::create(b, loc, sum, group) : group;
    sums8.push_back(arith::TruncIOp::create(b, loc, b.getI16Type(), group));
  }
  Value bytes = arith::TruncIOp::create(
      b, loc, VectorType::get({kBlockElems}, b.getI8Type()), q);

  LLVM::StoreOp::create(b, loc, d,
                        emitByteOffset(b, loc, out, kActivationScaleOffset), 1);
  LLVM::StoreOp::create(b, loc, sum,
                        emitByteOffset(b, loc, out, kActivationSumOffset), 1);
  for (auto [s, sum8] : llvm::enumerate(sums8))
    LLVM::StoreOp::create(
        b, loc, sum8,
        emitByteOffset(b, loc, out, kActivationSums8Offset + 2 * s), 1);
  LLVM::StoreOp::create(
      b, loc, bytes, emitByteOffset(b, loc, out, kActivationQuantsOffset), 1);
}

/// One Q8_K block: 256 floats at `in` to the packed block at `out`, in chunks
/// of 32.
void emitQ8KBlock(OpBuilder &b, Location loc, Value in, Value out) {
  constexpr int64_t kChunks = 8, kChunk = 32;
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto floats = VectorType::get({kChunk}, f32);
  auto ints = VectorType::get({kChunk}, i32);
  auto f32Const = [&](float v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          llvm::APFloat(v));
  };
  auto f32Splat = [&](Value v) -> Value {
    return vector::BroadcastOp::create(b, loc, floats, v);
  };

  SmallVector<Value, 8> xs, mags;
  for (int64_t c = 0; c < kChunks; ++c) {
    Value x = LLVM::LoadOp::create(b, loc, floats,
                                   emitByteOffset(b, loc, in, 4 * kChunk * c),
                                   /*alignment=*/4);
    Value mag = arith::BitcastOp::create(
        b, loc, floats,
        arith::AndIOp::create(b, loc, arith::BitcastOp::create(b, loc, ints, x),
                              emitSplat(b, loc, ints, 0x7fffffff)));
    xs.push_back(x);
    mags.push_back(mag);
  }
  Value amax = emitAbsMax(b, loc, xs);
  // The first index whose magnitude is amax, and the element there (its sign
  // decides the scale's).
  Value amaxSplat = f32Splat(amax);
  Value firstIdx;
  for (int64_t c = 0; c < kChunks; ++c) {
    SmallVector<int32_t> iota(kChunk);
    for (int64_t i = 0; i < kChunk; ++i)
      iota[i] = static_cast<int32_t>(c * kChunk + i);
    Value indices = arith::ConstantOp::create(
        b, loc, ints, DenseElementsAttr::get(ints, ArrayRef(iota)));
    Value isMax = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        mags[c], amaxSplat);
    Value idx = arith::SelectOp::create(b, loc, isMax, indices,
                                        emitSplat(b, loc, ints, 255));
    firstIdx = firstIdx ? arith::MinSIOp::create(b, loc, firstIdx, idx) : idx;
  }
  Value first = vector::ReductionOp::create(
      b, loc, vector::CombiningKind::MINSI, firstIdx);
  Value firstBytes = arith::MulIOp::create(
      b, loc, arith::ExtSIOp::create(b, loc, b.getI64Type(), first),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 4));
  Value max = LLVM::LoadOp::create(b, loc, f32,
                                   emitByteOffset(b, loc, in, firstBytes), 4);

  Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                     f32Const(0.0f));
  Value iscale = arith::SelectOp::create(
      b, loc, zero, f32Const(0.0f),
      arith::DivFOp::create(b, loc, f32Const(-127.0f), max));
  Value d = arith::SelectOp::create(
      b, loc, zero, f32Const(0.0f),
      arith::DivFOp::create(b, loc, f32Const(1.0f), iscale));

  Value magic = f32Splat(f32Const(0x1.8p23f));
  for (int64_t c = 0; c < kChunks; ++c) {
    Value scaled = arith::MulFOp::create(b, loc, xs[c], f32Splat(iscale));
    Value rounded = arith::SubFOp::create(
        b, loc, arith::AddFOp::create(b, loc, scaled, magic), magic);
    Value q = arith::MinSIOp::create(
        b, loc, arith::FPToSIOp::create(b, loc, ints, rounded),
        emitSplat(b, loc, ints, 127));
    for (int64_t h = 0; h < 2; ++h) {
      Value half = vector::ExtractStridedSliceOp::create(
          b, loc, q, ArrayRef<int64_t>{16 * h}, ArrayRef<int64_t>{16},
          ArrayRef<int64_t>{1});
      Value sum =
          vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, half);
      Value sum16 = arith::TruncIOp::create(b, loc, b.getI16Type(), sum);
      LLVM::StoreOp::create(
          b, loc, sum16,
          emitByteOffset(b, loc, out,
                         kQ8KActivationSumsOffset + 2 * (2 * c + h)),
          1);
    }
    Value bytes = arith::TruncIOp::create(
        b, loc, VectorType::get({kChunk}, b.getI8Type()), q);
    LLVM::StoreOp::create(
        b, loc, bytes,
        emitByteOffset(b, loc, out, kQ8KActivationQuantsOffset + kChunk * c),
        1);
  }
  LLVM::StoreOp::create(
      b, loc, d, emitByteOffset(b, loc, out, kQ8KActivationScaleOffset), 1);
}

/// `elems` floats at `in` (at most a block) as the float activation format
/// `format` at `out`: rounded to bf16 (the top halves of
/// kf::bf16ToFp32(kf::fp32ToBf16(x))) or as they are.
void emitFloatElements(OpBuilder &b, Location loc, Value in, Value out,
                       kf::Format format, int64_t elems) {
  auto floats = VectorType::get({elems}, b.getF32Type());
  Value x = LLVM::LoadOp::create(b, loc, floats, in, /*alignment=*/4);
  if (format == kf::Format::F32) {
    LLVM::StoreOp::create(b, loc, x, out, 1);
    return;
  }
  auto ints = VectorType::get({elems}, b.getI32Type());
  Value bits =
      arith::BitcastOp::create(b, loc, ints, emitRoundToBf16(b, loc, x));
  Value halves = arith::TruncIOp::create(
      b, loc, VectorType::get({elems}, b.getI16Type()),
      arith::ShRUIOp::create(b, loc, bits, emitSplat(b, loc, ints, 16)));
  LLVM::StoreOp::create(b, loc, halves, out, 1);
}

} // namespace

void emitQuantizeColumns(OpBuilder &b, Location loc,
                         const QuantizeKernelSpec &spec,
                         const target::TargetInfo &target, Value x, Value ldx,
                         Value packed, Value m) {
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  const bool hardwareHalf = hasHardwareHalf(target);
  const ActivationLayout act = activationLayout(spec.activation);
  const int64_t columnBytes =
      packedActivationColumnBytes(spec.activation, spec.k);
  const bool isFloat = isFloatFormat(spec.activation);
  // Only the float formats have a partial last block (K a multiple of the
  // block otherwise).
  const int64_t tail = spec.k % act.blockElems;
  scf::ForOp::create(
      b, loc, constant(0), m, constant(1), ValueRange{},
      [&](OpBuilder &, Location, Value j, ValueRange) {
        Value in = emitByteOffset(
            b, loc, x,
            arith::MulIOp::create(b, loc, arith::MulIOp::create(b, loc, j, ldx),
                                  constant(4)));
        Value out = emitByteOffset(
            b, loc, packed,
            arith::MulIOp::create(b, loc, j, constant(columnBytes)));
        scf::ForOp::create(
            b, loc, constant(0), constant(spec.k / act.blockElems), constant(1),
            ValueRange{}, [&](OpBuilder &, Location, Value blk, ValueRange) {
              Value blockIn = emitByteOffset(
                  b, loc, in,
                  arith::MulIOp::create(b, loc, blk,
                                        constant(4 * act.blockElems)));
              Value blockOut = emitByteOffset(
                  b, loc, out,
                  arith::MulIOp::create(b, loc, blk, constant(act.blockBytes)));
              if (isFloat)
                emitFloatElements(b, loc, blockIn, blockOut, spec.activation,
                                  act.blockElems);
              else if (spec.activation == kf::Format::Q8_K)
                emitQ8KBlock(b, loc, blockIn, blockOut);
              else
                emitBlock(b, loc, blockIn, blockOut, hardwareHalf);
              scf::YieldOp::create(b, loc);
            });
        if (tail != 0) {
          // The last block: zeros, then the tail's elements over them.
          const int64_t full = spec.k / act.blockElems;
          Value blockOut = emitByteOffset(b, loc, out, full * act.blockBytes);
          auto words = VectorType::get({act.blockBytes / 4}, b.getI32Type());
          LLVM::StoreOp::create(b, loc, emitSplat(b, loc, words, 0), blockOut,
                                1);
          emitFloatElements(
              b, loc, emitByteOffset(b, loc, in, 4 * full * act.blockElems),
              blockOut, spec.activation, tail);
        }
        scf::YieldOp::create(b, loc);
      });
}

llvm::Expected<func::FuncOp>
buildQuantizeKernel(ModuleOp module, const QuantizeKernelSpec &spec,
                    const target::TargetInfo &target) {
  if (llvm::Error err = verifyQuantizeKernel(spec))
    return std::move(err);
  MLIRContext *context = module.getContext();
  loadKernelDialects(*context);
  OpBuilder b(context);
  Location loc = module.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  func::FuncOp fn = createKernelFunction(b, loc, module, spec.getSymbolName(),
                                         {ptr, i64, ptr, i64}, target);
  Block *entry = &fn.front();
  emitQuantizeColumns(b, loc, spec, target, entry->getArgument(0),
                      entry->getArgument(1), entry->getArgument(2),
                      entry->getArgument(3));
  func::ReturnOp::create(b, loc);
  return fn;
}

} // namespace kf::codegen
