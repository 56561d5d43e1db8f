//===- KfOps.td - kf ops, by level -------------------------*- tablegen -*-===//
//
// "model §N" in the descriptions is section N of
// docs/models/deepseek_v4_model.md, the definition of DeepSeek-V4 these ops
// compute.
//
// The ops come in three levels, one file each: the graph's arithmetic
// (KfGraphOps.td), the weights and caches it reads and keeps (KfStateOps.td),
// and the kernel calls matmuls are lowered to (KfKernelOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_KFOPS
#define KF_DIALECT_KFOPS

include "kf/Dialect/KfTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Activations between kernels: f32 tensors whose values may be bf16-exact.
defvar Kf_F32Tensor = RankedTensorOf<[F32]>;
// A vector of parameters given either as a weight or as a tensor value.
def Kf_VectorLike : AnyTypeOf<[RankedTensorOf<[F32]>, Kf_QWeightType]>;

include "kf/Dialect/KfGraphOps.td"
include "kf/Dialect/KfStateOps.td"
include "kf/Dialect/KfKernelOps.td"

#endif // KF_DIALECT_KFOPS
