//===- QuantSimKernel.h - The compiled kf.fp8_sim and kf.fp4_sim ----------===//
//
// A step kernel (kf/Codegen/StepKernel.h) simulating the model's e4m3 or
// e2m1 activation quantization (docs/engine.md, "Op kernels") on rows of
// floats, one work item per row: each block of the row's leading values
// takes a power-of-two scale from its largest magnitude and is replaced by
// its minifloat code times the scale, bit for bit as the golden's fp8Sim and
// fp4Sim. Operands: the input rows, the output rows (which may be the
// input's; the values past `leading` are copied).
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_QUANTSIMKERNEL_H
#define KF_CODEGEN_QUANTSIMKERNEL_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

/// The minifloat a simulation rounds to.
enum class QuantSimFormat {
  E4m3, ///< kf.fp8_sim: OCP e4m3fn, max 448, scale floor 1e-4
  E2m1, ///< kf.fp4_sim: e2m1, max 6, scale floor 6 · 2^-126
};

struct QuantSimKernelSpec {
  QuantSimFormat format = QuantSimFormat::E4m3;
  int64_t rowLength = 0; ///< floats per row, a positive multiple of 16
  int64_t block = 0;     ///< values per scale, a positive multiple of 16
  /// The op's leading(...): only the first `leading` values of a row are
  /// simulated, a multiple of the block; 0 (no leading) for the whole row.
  int64_t leading = 0;

  /// The values of a row the simulation covers.
  int64_t getSpan() const { return leading == 0 ? rowLength : leading; }
  /// "kf_fp8_sim_n4096_b128", "kf_fp8_sim_n512_b64_l448" (a leading span
  /// of the whole row is named as the row).
  std::string getSymbolName() const;
  /// "fp8_sim kernel [row = 512, block = 64, leading = 448]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless the row length and the block
/// are positive multiples of 16 and the span (leading, or the row) a multiple
/// of the block no longer than the row.
llvm::Error verifyQuantSimKernel(const QuantSimKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildQuantSimKernel(mlir::ModuleOp module, const QuantSimKernelSpec &spec,
                    const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_QUANTSIMKERNEL_H
