//===- KfMatmuls.h - The matrix multiplications of kf ops -------*- C++ -*-===//
//
// Kernel decisions are taken per matrix multiplication, and one op may hold
// several (kf.moe multiplies by six weight stacks). This is the one place
// that says which matmuls an op performs, their shapes, and where each one's
// #kf.kernel is kept.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_KFMATMULS_H
#define KF_DIALECT_KFMATMULS_H

#include "kf/Dialect/KfDialect.h"

namespace mlir::kf {

/// One matrix multiplication `y[m, n] = sum_k x[m, k] * w[n, k]` of an op.
struct Matmul {
  /// The weight operand's name in kf.moe ("gate_exps"); empty for the ops
  /// that perform one matmul.
  StringRef name;
  QWeightType weight;
  /// Token columns, ShapedType::kDynamic when only known at run time. For
  /// a kf.moe expert stack, the expert's bucket: dynamic, as the router
  /// fills it, except that a single token's bucket is that token (M = 1).
  int64_t m;
  /// Rows of one matrix: a group's rows for kf.grouped_linear, an expert's
  /// for a stack.
  int64_t n;
  int64_t k;
};

/// Whether `op` is one of the ops a `kf.kernel` attribute decides:
/// kf.linear, kf.grouped_linear and kf.moe, and the kf.qmatmul and
/// kf.expert_qmatmul they are lowered to, which keep their decisions.
bool isMatmulOp(Operation *op);

/// The matmuls of `op`: one for kf.linear, kf.qmatmul, kf.expert_qmatmul (an
/// expert's, over its bucket) and kf.grouped_linear (whose groups share one
/// shape and one decision), six for kf.moe in operand order. Empty for other
/// ops and for matmul ops whose types are malformed, which their verifiers
/// report.
SmallVector<Matmul> getMatmuls(Operation *op);

/// The #kf.kernel of the matmul `name` of `op` (see Matmul::name), or null.
KernelAttr getKernel(Operation *op, StringRef name);
/// Sets the #kf.kernel of the matmul `name` of `op`.
void setKernel(Operation *op, StringRef name, KernelAttr kernel);

/// Checks a `kf.kernel` attribute against the op that holds it: the kind of
/// op, the weight's format, M and K. The dialect's verifyOperationAttribute.
LogicalResult verifyKernelAttribute(Operation *op, Attribute value);

} // namespace mlir::kf

#endif // KF_DIALECT_KFMATMULS_H
