//===- RopeKernel.h - The compiled kf.rope --------------------------------===//
//
// A step kernel (kf/Codegen/StepKernel.h) rotating the last `dim` floats of
// rows of D floats in interleaved pairs by their token's position, one work
// item per row, with the model's arithmetic (docs/engine.md, "Op kernels"):
// angle = fl32(position) · f_i in fp32, c = fp32(cos(angle)) and s =
// ±fp32(sin(angle)) in fp64, (a, b) -> (bf16(a·c - b·s), bf16(a·s + b·c)).
// The first D - dim floats are copied. Operands: the input rows, the
// positions (one i64 per token, read whole: row i takes positions[i / H]),
// the output rows (which may be the input's).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_ROPEKERNEL_H
#define KF_CODEGEN_ROPEKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

struct RopeKernelSpec {
  int64_t d = 0; ///< floats per row, a positive multiple of 16
  /// The last ropeDim floats of a row rotate: a positive multiple of 16, at
  /// most d.
  int64_t ropeDim = 0;
  /// H: rows per token ([T, H, D]); row i takes token i / H's position.
  int64_t rowsPerToken = 1;
  /// Rotate by -angle (kf.rope's `inverse`: s negated).
  bool inverse = false;
  /// The ropeDim / 2 frequencies f_i (#kf.rope's getFrequencies), finite;
  /// the kernel carries them as a constant table.
  std::vector<float> frequencies;

  /// "kf_rope_d192_r64_h8_f<16 hex digits>" (a hash of the frequencies'
  /// bits), "..._inv" for the inverse.
  std::string getSymbolName() const;
  /// "rope kernel [D = 192, dim = 64, H = 8, inverse]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless D and dim are positive
/// multiples of 16 with dim <= D, H is positive, and there are dim / 2 finite
/// frequencies.
llvm::Error verifyRopeKernel(const RopeKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildRopeKernel(mlir::ModuleOp module, const RopeKernelSpec &spec,
                const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_ROPEKERNEL_H
