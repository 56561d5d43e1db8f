//===- QuantizeEmitter.cpp - The compiled Q8_0 activation quantizer -------===//
//
// Per column and block of 32: amax = max |x|, d = fp16(amax / 127) kept as
// fp32, q = round-half-even(x * (127 / amax)), and the sum of the q. Every
// float operation is the reference packer's (kf::pack_activations), in the
// same precision, so the bytes are identical: the max is order-independent,
// the division and the products are single IEEE operations, and the
// rounding to an integer is done by the float adder (|x * id| <= 127.x, so
// adding and removing 1.5 * 2^23 rounds to the nearest integer, ties to even,
// as nearbyintf does in the default rounding mode).
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
  return llvm::formatv("kf_quantize_q8_0_k{0}", k).str();
}

std::string QuantizeKernelSpec::describe() const {
  return llvm::formatv("q8_0 activation quantizer [K = {0}]", k).str();
}

llvm::Error verifyQuantizeKernel(const QuantizeKernelSpec &spec) {
  if (spec.k <= 0 || spec.k % 32 != 0)
    return llvm::createStringError(spec.describe() +
                                   ": expected K a positive multiple of 32");
  return llvm::Error::success();
}

namespace {

constexpr int64_t kBlockElems = 32;

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
  // |x| by clearing the sign bit; the max of the magnitudes in any order.
  Value magnitudes = arith::BitcastOp::create(
      b, loc, floats,
      arith::AndIOp::create(b, loc, arith::BitcastOp::create(b, loc, ints, x),
                            emitSplat(b, loc, ints, 0x7fffffff)));
  Value amax = vector::ReductionOp::create(
      b, loc, vector::CombiningKind::MAXNUMF, magnitudes);

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
  Value sum =
      vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, q);
  Value bytes = arith::TruncIOp::create(
      b, loc, VectorType::get({kBlockElems}, b.getI8Type()), q);

  LLVM::StoreOp::create(b, loc, d,
                        emitByteOffset(b, loc, out, kActivationScaleOffset), 1);
  LLVM::StoreOp::create(b, loc, sum,
                        emitByteOffset(b, loc, out, kActivationSumOffset), 1);
  LLVM::StoreOp::create(
      b, loc, bytes, emitByteOffset(b, loc, out, kActivationQuantsOffset), 1);
}

} // namespace

llvm::Expected<func::FuncOp>
buildQuantizeKernel(ModuleOp module, const QuantizeKernelSpec &spec,
                    const target::TargetInfo &target) {
  if (llvm::Error err = verifyQuantizeKernel(spec))
    return std::move(err);
  MLIRContext *context = module.getContext();
  loadKernelDialects(*context);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = NameLoc::get(b.getStringAttr(spec.getSymbolName()));
  Type ptr = LLVM::LLVMPointerType::get(context);
  Type i64 = b.getI64Type();
  auto fn = func::FuncOp::create(b, loc, spec.getSymbolName(),
                                 b.getFunctionType({ptr, i64, ptr, i64}, {}));
  fn->setAttr("target_cpu", b.getStringAttr(target.cpu));
  fn->setAttr("target_features", LLVM::TargetFeaturesAttr::get(
                                     context, target.getLLVMFeatureString()));

  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value x = entry->getArgument(0), ldx = entry->getArgument(1);
  Value packed = entry->getArgument(2), m = entry->getArgument(3);
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  const bool hardwareHalf = hasHardwareHalf(target);
  const int64_t columnBytes = spec.k / kBlockElems * kActivationBlockBytes;
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
            b, loc, constant(0), constant(spec.k / kBlockElems), constant(1),
            ValueRange{}, [&](OpBuilder &, Location, Value blk, ValueRange) {
              Value blockIn =
                  emitByteOffset(b, loc, in,
                                 arith::MulIOp::create(
                                     b, loc, blk, constant(4 * kBlockElems)));
              Value blockOut = emitByteOffset(
                  b, loc, out,
                  arith::MulIOp::create(b, loc, blk,
                                        constant(kActivationBlockBytes)));
              emitBlock(b, loc, blockIn, blockOut, hardwareHalf);
              scf::YieldOp::create(b, loc);
            });
        scf::YieldOp::create(b, loc);
      });
  func::ReturnOp::create(b, loc);
  return fn;
}

} // namespace kf::codegen
