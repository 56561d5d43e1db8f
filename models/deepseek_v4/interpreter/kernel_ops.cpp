//===- kernel_ops.cpp - The ops that call compiled kernels ----------------===//
//
// A lowered graph's kf.quantize_activations and kf.qmatmul run the kernels
// --kf-lower-quant-dot built, found through the interpreter's kernel
// resolver, on the whole row range in the calling thread: the interpreter
// checks what the compiled code computes, not how fast.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include "kf/runtime/kernel_abi.h"
#include "kf/runtime/packed_layout.h"
#include "kf/runtime/status_macros.h"

namespace kf::deepseek_v4::interpreter::detail {

absl::Status execute(mlir::kf::QuantizeActivationsOp op, Frame &frame,
                     Context &context) {
  const Tensor &input = frame.tensor(op.getInput());
  int64_t m = input.getDimSize(0), k = input.getDimSize(1);
  KF_ASSIGN_OR_RETURN(void *kernel, context.getKernel(op, op.getCallee()));
  const int64_t columnBytes = ::kf::packed_activation_column_bytes(
      static_cast<::kf::Format>(op.getFormat()), k);
  std::vector<int8_t> packed(static_cast<size_t>(m * columnBytes));
  reinterpret_cast<kf_quantize_kernel_fn>(kernel)(input.getFloats().data(), k,
                                                  packed.data(), m);
  frame.set(op.getResult(), Tensor({m, columnBytes}, std::move(packed)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::QMatmulOp op, Frame &frame, Context &context) {
  const Tensor &input = frame.tensor(op.getInput());
  Weight &weight = frame.weight(op.getWeight());
  auto decision = op->getAttrOfType<mlir::kf::KernelAttr>(
      mlir::kf::KfDialect::kKernelAttrName);
  if (!decision)
    return opError(op, "kf.kernel must be a #kf.kernel");
  KF_ASSIGN_OR_RETURN(std::span<const uint8_t> packedWeight,
                      getPacked(weight, decision.getWeightLayout()));
  KF_ASSIGN_OR_RETURN(void *kernel, context.getKernel(op, op.getCallee()));
  int64_t m = input.getDimSize(0), n = op.getType().getDimSize(1);
  // The kernel was built for the rows from row_offset on (a group's), which
  // start a packed row group: the verifier checked the offset's alignment.
  ::kf::PackedLayout layout = decision.getWeightLayout();
  int64_t firstGroup = op.getRowOffset() / layout.rows;
  int64_t groupBytes = ::kf::packed_group_bytes(layout, weight.type.getCols());
  int64_t groups = (n + layout.rows - 1) / layout.rows;
  if ((firstGroup + groups) * groupBytes >
      static_cast<int64_t>(packedWeight.size()))
    return opError(op, "rows from " + llvm::Twine(op.getRowOffset()) +
                           " leave the packed weight");
  const uint8_t *rows = packedWeight.data() + firstGroup * groupBytes;
  std::vector<float> out(static_cast<size_t>(m * n));
  reinterpret_cast<kf_matmul_kernel_fn>(kernel)(rows, input.getBytes().data(),
                                                out.data(), n, m, 0, n);
  frame.set(op.getResult(), Tensor({m, n}, std::move(out)));
  return absl::OkStatus();
}

} // namespace kf::deepseek_v4::interpreter::detail
