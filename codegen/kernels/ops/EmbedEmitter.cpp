//===- EmbedEmitter.cpp - The compiled kf.embed ---------------------------===//
//
// The interpreter's kf.embed: row `id` of the table decoded as kf::dequantize
// decodes it (runtime/quant/plain.cpp, legacy.cpp), then rounded to bf16, in
// vectors of 16 values:
//
// - F32: the floats as stored;
// - F16: each half widened exactly (emitHalfToFloat, kf::fp16ToFp32's
//   values: by F16C where the target has it, else in integer arithmetic);
// - BF16: each value's bits in the high half of a float;
// - Q8_0: per block of 32, d · q in fp32 with d the block's fp16 scale and q
//   its int8 values (the product is exact: 11 by 8 significant bits).
//
// Every step is the decoder's exact widening or its one IEEE product, and
// the bf16 rounding is kf::fp32ToBf16's (emitRoundToBf16, NaNs made quiet),
// so the result is bit for bit. A NaN fp16 that F16C widens with its quiet
// bit set, where kf::fp16ToFp32 keeps a signalling one, is made quiet by the
// bf16 rounding all the same.
//
// The id is compared unsigned, as an i64 sign-extended from the i32: a
// negative id is out of range as much as one of V or more, and either gives
// a row of +0 without reading the table (the interpreter refuses such ids,
// and a kernel cannot report an error).
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/EmbedKernel.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdint>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;
/// Q8_0's block: an fp16 scale, then 32 int8 values.
constexpr int64_t kQ8Elems = 32;
constexpr int64_t kQ8Bytes = 34;

bool isSupported(kf::Format format) {
  return format == kf::Format::F32 || format == kf::Format::F16 ||
         format == kf::Format::BF16 || format == kf::Format::Q8_0;
}

} // namespace

std::string EmbedKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_embed_{0}_v{1}_d{2}", formatInfo(format).name, vocab,
                       d)
      .str();
}

std::string EmbedKernelSpec::describe() const {
  return llvm::formatv("embed kernel [{0}, V = {1}, D = {2}]",
                       formatInfo(format).name, vocab, d)
      .str();
}

llvm::Error verifyEmbedKernel(const EmbedKernelSpec &spec) {
  if (!isSupported(spec.format))
    return llvm::createStringError(
        spec.describe() + ": expected a table of f32, f16, bf16 or q8_0");
  if (spec.vocab < 1)
    return llvm::createStringError(spec.describe() +
                                   ": expected at least one row");
  const int64_t multiple = spec.format == kf::Format::Q8_0 ? kQ8Elems : kLanes;
  if (spec.d <= 0 || spec.d % multiple != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected D a positive multiple of {1}",
                      spec.describe(), multiple)
            .str());
  return llvm::Error::success();
}

llvm::Expected<func::FuncOp>
buildEmbedKernel(ModuleOp module, const EmbedKernelSpec &spec,
                 const target::TargetInfo &target) {
  if (llvm::Error err = verifyEmbedKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  Type i16 = b.getIntegerType(16), i32 = b.getI32Type(), i64 = b.getI64Type();
  auto floats = VectorType::get({kLanes}, b.getF32Type());
  auto halves = VectorType::get({kLanes}, i16);
  auto words = VectorType::get({kLanes}, i32);
  auto forEach = [&](int64_t count, int64_t step,
                     llvm::function_ref<void(Value)> body) {
    kb.forEach(kb.index(0), kb.index(count), step, body);
  };
  const bool hardwareHalf = hasHardwareHalf(target);

  Value ids = emitStepOperand(b, loc, args, 0);
  Value table = emitStepOperand(b, loc, args, 1);
  Value out = emitStepOperand(b, loc, args, 2);
  const int64_t tableRowBytes =
      static_cast<int64_t>(*kf::rowBytes(spec.format, spec.d));
  const int64_t outRowBytes = 4 * spec.d;

  auto tokens = scf::ForOp::create(b, loc, args.begin, args.end, kb.index(1));
  b.setInsertionPointToStart(tokens.getBody());
  Value token = tokens.getInductionVar();
  Value id = arith::ExtSIOp::create(
      b, loc, i64,
      kb.load(i32, ids, arith::MulIOp::create(b, loc, token, kb.index(4)),
              /*alignment=*/4));
  Value outRow = emitByteOffset(
      b, loc, out, arith::MulIOp::create(b, loc, token, kb.index(outRowBytes)));
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id,
                                        kb.index(spec.vocab));
  auto lookup = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/true);

  b.setInsertionPointToStart(&lookup.getThenRegion().front());
  Value row = emitByteOffset(
      b, loc, table,
      arith::MulIOp::create(b, loc, id, kb.index(tableRowBytes)));
  auto storeRounded = [&](Value v, Value element) {
    kb.store(emitRoundToBf16(b, loc, v), outRow,
             arith::MulIOp::create(b, loc, element, kb.index(4)),
             /*alignment=*/4);
  };
  switch (spec.format) {
  case kf::Format::F32:
    forEach(spec.d, kLanes, [&](Value e) {
      storeRounded(kb.load(floats, row,
                           arith::MulIOp::create(b, loc, e, kb.index(4)), 4),
                   e);
    });
    break;
  case kf::Format::F16:
    forEach(spec.d, kLanes, [&](Value e) {
      Value h = kb.load(halves, row,
                        arith::MulIOp::create(b, loc, e, kb.index(2)), 2);
      storeRounded(emitHalfToFloat(b, loc, h, hardwareHalf), e);
    });
    break;
  case kf::Format::BF16:
    forEach(spec.d, kLanes, [&](Value e) {
      Value h = kb.load(halves, row,
                        arith::MulIOp::create(b, loc, e, kb.index(2)), 2);
      Value bits = arith::ShLIOp::create(
          b, loc, arith::ExtUIOp::create(b, loc, words, h),
          emitSplat(b, loc, words, 16));
      storeRounded(arith::BitcastOp::create(b, loc, floats, bits), e);
    });
    break;
  case kf::Format::Q8_0:
    forEach(spec.d / kQ8Elems, 1, [&](Value block) {
      Value blockPtr = emitByteOffset(
          b, loc, row,
          arith::MulIOp::create(b, loc, block, kb.index(kQ8Bytes)));
      // The scale, 2-byte aligned as every block's start is.
      Value scale = emitHalfToFloat(b, loc,
                                    kb.load(VectorType::get({1}, i16), blockPtr,
                                            kb.index(0), /*alignment=*/2),
                                    hardwareHalf);
      Value d = vector::BroadcastOp::create(
          b, loc, floats, vector::ExtractOp::create(b, loc, scale, 0));
      Value first = arith::MulIOp::create(b, loc, block, kb.index(kQ8Elems));
      for (int64_t part = 0; part < kQ8Elems / kLanes; ++part) {
        Value q = kb.load(VectorType::get({kLanes}, b.getI8Type()), blockPtr,
                          kb.index(2 + kLanes * part), /*alignment=*/1);
        Value v = kb.mul(d, arith::SIToFPOp::create(b, loc, floats, q));
        storeRounded(
            v, arith::AddIOp::create(b, loc, first, kb.index(kLanes * part)));
      }
    });
    break;
  default:
    llvm_unreachable("verifyEmbedKernel refuses other formats");
  }

  // An id outside the table: zeros.
  b.setInsertionPointToStart(&lookup.getElseRegion().front());
  Value zeros = kb.splat(floats, 0.0);
  forEach(outRowBytes, 4 * kLanes,
          [&](Value offset) { kb.store(zeros, outRow, offset, 4); });

  b.setInsertionPointAfter(tokens);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
