//===- RopeEmitter.cpp - The compiled kf.rope -----------------------------===//
//
// The golden's rope (rope.cpp, Model precision): for every pair (a, b) =
// (x[2i], x[2i+1]) of a row's last `dim` values, angle = fl32(position) · f_i
// in fp32, c = fp32(cos(angle)), s = ±fp32(sin(angle)) with both in fp64,
// then bf16(a·c - b·s) and bf16(a·s + b·c), each product and sum in fp32.
//
// c and s depend only on the token, so the kernel computes them once per
// token of its item range, 8 angles to a vector, into a table on the stack
// laid out as the row is: c at both values of a pair, -s at a's and s at b's.
// A row's 16 values v then take v·c + swap(v)·s, swap exchanging each pair's
// two values: a·c + b·(-s) is a·c - b·s and b·c + a·s is a·s + b·c, bit for
// bit (b·(-s) is exactly -(b·s), and a sum of two floats commutes).
//
// A kernel calls nothing (no libm), so sin and cos are emitSinCos's
// (kf/Codegen/Emitters.h): fdlibm's algorithm in fp64, its argument reduction
// exact enough below 2^20 · π/2 ≈ 1.65e6, so for positions up to 1.6
// million (f_0 = 1).
//
// fdlibm's sin and cos err by less than one fp64 ulp and glibc's, which the
// golden calls, by about half of one, so c and s can differ from the
// golden's only where cos or sin lies within ~1.5 fp64 ulps of an fp32
// rounding boundary (a chance of about 2^-28 per value), and then by one fp32
// ulp (2^-24 at most, |c|, |s| <= 1); RopeKernelTest derives what that does
// to the outputs.
//
// The factors and the rotation are emitRopeFactors and emitRopeRotation
// (RowArithmetic.h), which the compressor's kernel reuses for its entries.
//
//===----------------------------------------------------------------------===//

#include "kf/Codegen/RopeKernel.h"

#include "RowArithmetic.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

#include <cmath>

using namespace mlir;

namespace kf::codegen {

namespace {

constexpr int64_t kLanes = 16;          ///< floats per row vector
constexpr int64_t kAngles = kLanes / 2; ///< pairs per row vector

/// A hash of the frequencies' bits, little-endian whatever the host:
/// llvm::hash_combine_range's seed may differ between processes, and the
/// kernel's name must not.
uint64_t hashFrequencies(ArrayRef<float> frequencies) {
  SmallVector<uint8_t> bytes;
  for (float f : frequencies)
    for (int shift = 0; shift < 32; shift += 8)
      bytes.push_back(
          static_cast<uint8_t>(llvm::bit_cast<uint32_t>(f) >> shift));
  return llvm::xxh3_64bits(bytes);
}

} // namespace

std::string getRopeFrequencyHash(ArrayRef<float> frequencies) {
  return llvm::formatv("{0}", llvm::format_hex_no_prefix(
                                  hashFrequencies(frequencies), 16))
      .str();
}

std::string RopeKernelSpec::getSymbolName() const {
  return llvm::formatv("kf_rope_d{0}_r{1}_h{2}_f{3}{4}", d, ropeDim,
                       rowsPerToken, getRopeFrequencyHash(frequencies),
                       inverse ? "_inv" : "")
      .str();
}

std::string RopeKernelSpec::describe() const {
  return llvm::formatv("rope kernel [D = {0}, dim = {1}, H = {2}{3}]", d,
                       ropeDim, rowsPerToken, inverse ? ", inverse" : "")
      .str();
}

llvm::Error verifyRopeKernel(const RopeKernelSpec &spec) {
  if (spec.d <= 0 || spec.d % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected D a positive multiple of {1}",
                      spec.describe(), kLanes)
            .str());
  if (spec.ropeDim <= 0 || spec.ropeDim % kLanes != 0 || spec.ropeDim > spec.d)
    return llvm::createStringError(
        llvm::formatv("{0}: expected dim a positive multiple of {1}, at most D",
                      spec.describe(), kLanes)
            .str());
  if (spec.rowsPerToken <= 0)
    return llvm::createStringError(spec.describe() +
                                   ": expected H, the rows per token, >= 1");
  if (static_cast<int64_t>(spec.frequencies.size()) != spec.ropeDim / 2)
    return llvm::createStringError(
        llvm::formatv("{0}: expected {1} frequencies, got {2}", spec.describe(),
                      spec.ropeDim / 2, spec.frequencies.size())
            .str());
  for (size_t i = 0; i < spec.frequencies.size(); ++i)
    if (!std::isfinite(spec.frequencies[i]))
      return llvm::createStringError(
          llvm::formatv("{0}: expected finite frequencies, got f_{1} = {2}",
                        spec.describe(), i, formatShortest(spec.frequencies[i]))
              .str());
  return llvm::Error::success();
}

std::string declareRopeFrequencyTable(OpBuilder &b, Location loc,
                                      ModuleOp module,
                                      ArrayRef<float> frequencies) {
  // The frequencies as i64 entries, two floats each, the first in the low
  // half: the table's bytes are the floats in order on the little-endian
  // targets (x86-64, AArch64). One table per frequencies, shared by the
  // kernels of every row shape; declared once a kernel's creation has
  // loaded the LLVM dialect.
  SmallVector<uint64_t> entries;
  for (size_t i = 0; i < frequencies.size(); i += 2)
    entries.push_back(
        static_cast<uint64_t>(llvm::bit_cast<uint32_t>(frequencies[i])) |
        static_cast<uint64_t>(llvm::bit_cast<uint32_t>(frequencies[i + 1]))
            << 32);
  std::string table =
      llvm::formatv("kf_rope_freqs_r{0}_f{1}", 2 * frequencies.size(),
                    getRopeFrequencyHash(frequencies))
          .str();
  declareConstantTable(b, loc, module, table, entries);
  return table;
}

RopeFactors emitRopeFactorBuffers(OpBuilder &b, Location loc, int64_t ropeDim) {
  KernelBuilder kb(b, loc);
  Value cosines = LLVM::AllocaOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), b.getF32Type(),
      kb.index(2 * ropeDim), /*alignment=*/64);
  return {cosines, emitByteOffset(b, loc, cosines, 4 * ropeDim)};
}

void emitRopeFactors(OpBuilder &b, Location loc, Value frequencies,
                     Value position, int64_t ropeDim, bool inverse,
                     const RopeFactors &factors) {
  KernelBuilder kb(b, loc);
  Type f32 = b.getF32Type();
  auto angleFloats = VectorType::get({kAngles}, f32);
  auto angleDoubles = VectorType::get({kAngles}, b.getF64Type());
  // Value 2i of a row takes c_i and -s_i, value 2i + 1 takes c_i and s_i.
  SmallVector<int64_t, kLanes> duplicate, interleave;
  for (int64_t i = 0; i < kLanes; ++i) {
    duplicate.push_back(i / 2);
    interleave.push_back(i / 2 + (i % 2) * kAngles);
  }
  Value p = vector::BroadcastOp::create(
      b, loc, angleFloats, arith::SIToFPOp::create(b, loc, f32, position));
  kb.forEach(kb.index(0), kb.index(ropeDim / 2), kAngles, [&](Value pair) {
    Value angle = arith::MulFOp::create(
        b, loc, p,
        kb.load(angleFloats, frequencies,
                arith::MulIOp::create(b, loc, pair, kb.index(4)), 4));
    auto [sinX, cosX] =
        emitSinCos(b, loc, arith::ExtFOp::create(b, loc, angleDoubles, angle));
    Value c = arith::TruncFOp::create(b, loc, angleFloats, cosX);
    Value s = arith::TruncFOp::create(b, loc, angleFloats, sinX);
    if (inverse)
      s = arith::NegFOp::create(b, loc, s);
    Value minusS = arith::NegFOp::create(b, loc, s);
    Value offset = arith::MulIOp::create(b, loc, pair, kb.index(8));
    kb.store(vector::ShuffleOp::create(b, loc, c, c, duplicate),
             factors.cosines, offset, 4);
    kb.store(vector::ShuffleOp::create(b, loc, minusS, s, interleave),
             factors.sines, offset, 4);
  });
}

void emitRopeRotation(OpBuilder &b, Location loc, Value x, Value y,
                      int64_t ropeDim, const RopeFactors &factors) {
  KernelBuilder kb(b, loc);
  auto floats = VectorType::get({kLanes}, b.getF32Type());
  SmallVector<int64_t, kLanes> swap;
  for (int64_t i = 0; i < kLanes; ++i)
    swap.push_back(i ^ 1);
  kb.forEach(kb.index(0), kb.index(4 * ropeDim), 4 * kLanes, [&](Value offset) {
    Value v = kb.load(floats, x, offset, 4);
    Value swapped = vector::ShuffleOp::create(b, loc, v, v, swap);
    Value rotated = arith::AddFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, v,
                              kb.load(floats, factors.cosines, offset, 4)),
        arith::MulFOp::create(b, loc, swapped,
                              kb.load(floats, factors.sines, offset, 4)));
    kb.store(emitRoundToBf16(b, loc, rotated), y, offset, 4);
  });
}

llvm::Expected<func::FuncOp> buildRopeKernel(ModuleOp module,
                                             const RopeKernelSpec &spec,
                                             const target::TargetInfo &target) {
  if (llvm::Error err = verifyRopeKernel(spec))
    return std::move(err);
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args =
      createStepKernelFunction(b, loc, module, spec.getSymbolName(), target);
  KernelBuilder kb(b, loc);
  const std::string table =
      declareRopeFrequencyTable(b, loc, module, spec.frequencies);

  Type i64 = b.getI64Type();
  auto floats = VectorType::get({kLanes}, b.getF32Type());
  auto times = [&](Value v, int64_t factor) -> Value {
    return arith::MulIOp::create(b, loc, v, kb.index(factor));
  };

  Value x = emitStepOperand(b, loc, args, 0);
  Value positions = emitStepOperand(b, loc, args, 1);
  Value y = emitStepOperand(b, loc, args, 2);
  Value frequencies = emitConstantTableAddress(b, loc, table);
  // A token's factors, at the entry so that LLVM allocates them once.
  const RopeFactors factors = emitRopeFactorBuffers(b, loc, spec.ropeDim);
  const int64_t h = spec.rowsPerToken;
  const int64_t rowBytes = 4 * spec.d;
  const int64_t keptBytes = 4 * (spec.d - spec.ropeDim);
  // The copy of the values that do not rotate is a no-op in place.
  Value copies = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, x, y);

  // The tokens of items [begin, end).
  Value firstToken = arith::DivSIOp::create(b, loc, args.begin, kb.index(h));
  Value endToken = arith::DivSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, args.end, kb.index(h - 1)),
      kb.index(h));
  kb.forEach(firstToken, endToken, 1, [&](Value token) {
    Value position = LLVM::LoadOp::create(
        b, loc, i64, emitByteOffset(b, loc, positions, times(token, 8)),
        /*alignment=*/8);
    emitRopeFactors(b, loc, frequencies, position, spec.ropeDim, spec.inverse,
                    factors);

    Value tokenRow = times(token, h);
    Value rowBegin = arith::MaxSIOp::create(b, loc, args.begin, tokenRow);
    Value rowEnd = arith::MinSIOp::create(
        b, loc, args.end, arith::AddIOp::create(b, loc, tokenRow, kb.index(h)));
    kb.forEach(rowBegin, rowEnd, 1, [&](Value row) {
      Value rowOffset = times(row, rowBytes);
      Value xRow = emitByteOffset(b, loc, x, rowOffset);
      Value yRow = emitByteOffset(b, loc, y, rowOffset);
      if (keptBytes > 0) {
        auto copy = scf::IfOp::create(b, loc, copies, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(copy.thenBlock());
        kb.forEach(
            kb.index(0), kb.index(keptBytes), 4 * kLanes, [&](Value offset) {
              kb.store(kb.load(floats, xRow, offset, 4), yRow, offset, 4);
            });
      }
      emitRopeRotation(b, loc, emitByteOffset(b, loc, xRow, keptBytes),
                       emitByteOffset(b, loc, yRow, keptBytes), spec.ropeDim,
                       factors);
    });
  });
  func::ReturnOp::create(b, loc);
  return args.fn;
}

} // namespace kf::codegen
