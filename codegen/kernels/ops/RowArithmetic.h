//===- RowArithmetic.h - Per-row arithmetic shared by the op emitters -----===//
//
// The arithmetic one work item of kf.rms_norm, kf.rope, kf.fp8_sim /
// kf.fp4_sim and kf.hadamard runs on one row, as emit functions on row
// addresses, so that a kernel chaining them on a row of its own (the
// compressor's entry, CompressEmitter.cpp) emits the same operations as
// those kernels rather than a copy of them; and how a cache stores its
// values (CacheAppendEmitter.cpp), which both cache writers share. Internal
// to codegen/kernels: the op kernels' headers (kf/Codegen/*Kernel.h) are
// what the rest of the compiler sees.
//
// Every row is an !llvm.ptr to floats; a row length is a multiple of 16 (one
// vector of 16 floats) unless said otherwise. The functions build at `b`'s
// insertion point and leave it after what they built.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_KERNELS_OPS_ROWARITHMETIC_H
#define KF_CODEGEN_KERNELS_OPS_ROWARITHMETIC_H

#include "kf/Codegen/QuantSimKernel.h"
#include "kf/runtime/format.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace kf::codegen {

//===----------------------------------------------------------------------===//
// kf.rms_norm (RmsNormEmitter.cpp)
//===----------------------------------------------------------------------===//

/// How a row's fp64 sum of squares is added up.
enum class SquareSumOrder {
  /// In 16 lanes, reduced at the end: kf.rms_norm's kernel, which a row of
  /// thousands of values would otherwise hold to one addition at a time.
  /// Within one fp32 ulp of the golden's mean (RmsNormEmitter.cpp).
  Lanes,
  /// One addition at a time in row order, as the golden adds them: the same
  /// mean bit for bit, whatever the values.
  RowOrder,
};

/// kf.rms_norm of the d floats at `x` into `y` (which may be `x`): f32
/// compute, y = bf16(w · (x · r)) with `weight` (d floats; null: y = bf16(x
/// · r)), r = fp32(1 / sqrt(fp32(fp32(Σ x² / d) + eps))) in fp64; bf16
/// compute (weightless), every step rounded to bf16 as the golden's
/// rmsScale rounds it.
void emitRmsNormRow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    mlir::Value weight, mlir::Value y, int64_t d, float eps,
                    bool bf16Compute, SquareSumOrder order);

//===----------------------------------------------------------------------===//
// kf.rope (RopeEmitter.cpp)
//===----------------------------------------------------------------------===//

/// A hash of the frequencies' bits (16 hex digits), the same in every
/// process: the part of a kernel's name that says which frequencies it
/// carries.
std::string getRopeFrequencyHash(llvm::ArrayRef<float> frequencies);

/// Declares in `module`, unless a kernel built before did, the constant table
/// of the rope frequencies (an even number of them), shared by every kernel
/// of the module that rotates by them; returns its name, for
/// emitConstantTableAddress (kf/Codegen/Emitters.h).
std::string declareRopeFrequencyTable(mlir::OpBuilder &b, mlir::Location loc,
                                      mlir::ModuleOp module,
                                      llvm::ArrayRef<float> frequencies);

/// A token's rotation factors on the stack, laid out as the rope part of a
/// row: `cosines` holds c_i at values 2i and 2i + 1, `sines` -s_i at 2i and
/// s_i at 2i + 1 (ropeDim floats each).
struct RopeFactors {
  mlir::Value cosines;
  mlir::Value sines;
};

/// Allocates the factors of a rope part of `ropeDim` floats; at the
/// function's entry, so that LLVM allocates them once.
RopeFactors emitRopeFactorBuffers(mlir::OpBuilder &b, mlir::Location loc,
                                  int64_t ropeDim);

/// Fills `factors` for the token at `position` (an i64): angle_i =
/// fl32(position) · f_i in fp32 (f_i read from `frequencies`, the table's
/// address), c_i = fp32(cos(angle_i)), s_i = ±fp32(sin(angle_i)) in fp64
/// (emitSinCos), negated when `inverse`.
void emitRopeFactors(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Value frequencies, mlir::Value position,
                     int64_t ropeDim, bool inverse, const RopeFactors &factors);

/// Rotates the `ropeDim` floats at `x` into `y` (which may be `x`) by
/// `factors`: (a, b) -> (bf16(a·c - b·s), bf16(a·s + b·c)) in fp32.
void emitRopeRotation(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y, int64_t ropeDim,
                      const RopeFactors &factors);

//===----------------------------------------------------------------------===//
// kf.fp8_sim, kf.fp4_sim (QuantSimEmitter.cpp)
//===----------------------------------------------------------------------===//

/// The golden's fp8Sim or fp4Sim of the `span` floats at `x` into `y` (which
/// may be `x`), in blocks of `block` (span a multiple of it).
void emitQuantSimSpan(mlir::OpBuilder &b, mlir::Location loc,
                      QuantSimFormat format, mlir::Value x, mlir::Value y,
                      int64_t span, int64_t block);

//===----------------------------------------------------------------------===//
// kf.hadamard (HadamardEmitter.cpp)
//===----------------------------------------------------------------------===//

/// Allocates the fp64 row the fast transform of n floats works in; at the
/// function's entry.
mlir::Value emitHadamardScratch(mlir::OpBuilder &b, mlir::Location loc,
                                int64_t n);

/// kf.hadamard's kernel: the fast transform of the n floats at `x` (a power
/// of two up to HadamardKernelSpec::kMaxN) into `y` (which may be `x`)
/// through `scratch` (emitHadamardScratch's), y = bf16(fp32(H x ·
/// fl64(n^-1/2))); bit for bit with the golden where every sum of both orders
/// is exact (HadamardEmitter.cpp).
void emitFastHadamardRow(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                         mlir::Value y, int64_t n, mlir::Value scratch);

/// The golden's hadamard itself: each output's fp64 sum of ±x_j in j order
/// (16 outputs at a time, n² additions), then the same roundings; bit for bit
/// whatever the values. `y` must not be `x` (every output reads all of x).
/// n a power of two from 16 up to HadamardKernelSpec::kMaxN.
void emitHadamardRowInOrder(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value x, mlir::Value y, int64_t n);

//===----------------------------------------------------------------------===//
// Cache elements (CacheAppendEmitter.cpp)
//===----------------------------------------------------------------------===//

/// Whether a cache may store its values as `element`: F32, F16 or BF16.
bool isCacheElement(kf::Format element);

/// `floats` (a vector of f32) as a cache of `element` holds them, read back
/// as fp32 (the interpreter's storedAs): BF16 rounded to nearest even as
/// reference::roundBf16 (NaNs made quiet); F16 as kf::fp16ToFp32(
/// kf::fp32ToFp16(x)) (overflow to inf, subnormal halves, NaNs quiet with
/// their top payload bits), by the target's conversions where
/// `hardwareHalf`, else in integer arithmetic; F32 as they are.
mlir::Value emitStoredAs(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value floats, kf::Format element,
                         bool hardwareHalf);

} // namespace kf::codegen

#endif // KF_CODEGEN_KERNELS_OPS_ROWARITHMETIC_H
