//===- DotEmitters.h - The per-ISA dot emitters, for the factory ----------===//

#ifndef KF_CODEGEN_KERNELS_ISA_DOTEMITTERS_H
#define KF_CODEGEN_KERNELS_ISA_DOTEMITTERS_H

#include "kf/Codegen/Emitters.h"

namespace kf::codegen {

std::unique_ptr<DotEmitter> createScalarDotEmitter();
std::unique_ptr<DotEmitter> createAvx2DotEmitter();
/// Whether the target has AVX512_VBMI (vpermb), GFNI (vgf2p8affineqb) and
/// BMI2 (pext).
std::unique_ptr<DotEmitter> createAvx512VnniDotEmitter(bool vbmi, bool gfni,
                                                       bool bmi2);
std::unique_ptr<DotEmitter> createNeonDotprodDotEmitter();

/// F32, or BF16 widened to fp32, by FMA (`fused`) or by a multiply and an
/// add (FloatFmaDot.cpp).
std::unique_ptr<FloatDotEmitter> createFloatFmaDotEmitter(kf::Format format,
                                                          bool fused);
/// BF16 pairs by vdpbf16ps and by bfdot (Bf16DotInstructions.cpp).
std::unique_ptr<FloatDotEmitter> createAvx512Bf16DotEmitter();
std::unique_ptr<FloatDotEmitter> createNeonBf16DotEmitter();

/// A lookup of a table of at most 16 bytes with an x86 byte shuffle
/// (`intrinsic`, vpshufb of `indices`' width), which looks up within each
/// 128-bit lane: the table is repeated in every lane.
mlir::Value emitPshufbLookup(mlir::OpBuilder &b, mlir::Location loc,
                             llvm::StringRef intrinsic, mlir::Value indices,
                             llvm::ArrayRef<int8_t> table);
/// A lookup of a table of at most 64 bytes with the same byte shuffle: one
/// emitPshufbLookup of each 16-byte part of the table (up to 4), the results
/// picked among by index bits 4 and 5 (selects, which LLVM turns into blends
/// or masked moves); emitPshufbLookup alone for up to 16 bytes.
mlir::Value emitSplitPshufbLookup(mlir::OpBuilder &b, mlir::Location loc,
                                  llvm::StringRef intrinsic,
                                  mlir::Value indices,
                                  llvm::ArrayRef<int8_t> table);

} // namespace kf::codegen

#endif // KF_CODEGEN_KERNELS_ISA_DOTEMITTERS_H
