//===- DecodeEmitters.h - The per-format decode emitters, for the factory -===//

#ifndef KF_CODEGEN_KERNELS_FORMATS_DECODEEMITTERS_H
#define KF_CODEGEN_KERNELS_FORMATS_DECODEEMITTERS_H

#include "kf/Codegen/Emitters.h"

#include <utility>

namespace kf::codegen {

std::unique_ptr<WeightDecodeEmitter>
createQ80DecodeEmitter(const kf::PackedLayout &layout, bool hardwareHalf);
std::unique_ptr<WeightDecodeEmitter> createQ40DecodeEmitter(bool hardwareHalf);
std::unique_ptr<WeightDecodeEmitter> createMxfp4DecodeEmitter();
/// Q4_K, Q5_K or Q6_K.
std::unique_ptr<WeightDecodeEmitter>
createKQuantDecodeEmitter(kf::Format format, bool hardwareHalf);

/// IQ2_XXS, IQ1_S or IQ1_M (IQ1's grid or ternary layout); IQ2_XXS looks its
/// slots up in `isa`'s code book where it has one.
std::unique_ptr<WeightDecodeEmitter>
createIqGridDecodeEmitter(const kf::PackedLayout &layout, bool hardwareHalf,
                          const DotEmitter &isa);

/// FRACTAL64 (docs/formats/fractal64.md).
std::unique_ptr<WeightDecodeEmitter>
createFractal64DecodeEmitter(bool hardwareHalf);

/// VQ3_64 (docs/formats/vq3_64.md), whose lanes follow the layout's encoding.
std::unique_ptr<WeightDecodeEmitter>
createVq3DecodeEmitter(const kf::PackedLayout &layout, bool hardwareHalf);

/// The R rows' fp16 values side by side at byte `offset` of a packed block
/// (vector<R x i16>), as the exact fp32 values (vector<R x f32>).
mlir::Value loadHalfScales(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value block, int64_t rows, int64_t offset,
                           bool hardwareHalf);
/// kf::dot's block scaling for Q4_0, FRACTAL64 and VQ3_64: (dot * w) * x,
/// left to right.
mlir::Value emitDotTimesWeightTimesActivation(mlir::OpBuilder &b,
                                              mlir::Location loc,
                                              mlir::Value dot, mlir::Value w,
                                              mlir::Value x);

/// The 4 * rows bytes of K-group `g` of a packed block of `format`.
mlir::Value loadKGroup(mlir::OpBuilder &b, mlir::Location loc,
                       kf::Format format, mlir::Value block, int64_t rows,
                       int64_t g);
/// A K-group of nibble pairs (Q4_0's and MXFP4's bytes) split in two:
/// the low nibbles, elements 4g .. 4g + 3 of the block, and the high ones,
/// elements 16 + 4g .. 16 + 4g + 3 (the file's nibble order).
std::pair<mlir::Value, mlir::Value>
splitNibbles(mlir::OpBuilder &b, mlir::Location loc, mlir::Value bytes);

} // namespace kf::codegen

#endif // KF_CODEGEN_KERNELS_FORMATS_DECODEEMITTERS_H
