//===- kernel_ops.cpp - The ops that call compiled kernels ----------------===//
//
// A lowered graph's kf.quantize_activations, kf.qmatmul and
// kf.expert_qmatmul (of packed activations, or of fp32 ones where the
// kernel quantizes them) run the kernels --kf-lower-quant-dot built, found
// through the interpreter's kernel resolver, on the whole row range in the
// calling thread (an expert matmul through the runtime's MoE dispatch, one
// call per expert bucket): the interpreter checks what the compiled code
// computes, not how fast.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include "kf/runtime/kernel_abi.h"
#include "kf/runtime/moe_dispatch.h"
#include "kf/runtime/packed_layout.h"
#include "kf/runtime/status_macros.h"

namespace kf::deepseek_v4::interpreter::detail {

absl::Status execute(mlir::kf::QuantizeActivationsOp op, Frame &frame,
                     Context &context) {
  const Tensor &input = frame.tensor(op.getInput());
  // Every innermost row, whatever the leading dimensions (a routed expert's
  // [T, k, F] activations are T·k rows).
  std::vector<int64_t> shape(input.getShape().begin(), input.getShape().end());
  const int64_t k = shape.back(), m = input.getNumElements() / k;
  KF_ASSIGN_OR_RETURN(void *kernel, context.getKernel(op, op.getCallee()));
  const int64_t columnBytes = ::kf::packedActivationColumnBytes(
      static_cast<::kf::Format>(op.getFormat()), k);
  std::vector<int8_t> packed(static_cast<size_t>(m * columnBytes));
  reinterpret_cast<kf_quantize_kernel_fn>(kernel)(input.getFloats().data(), k,
                                                  packed.data(), m);
  shape.back() = columnBytes;
  frame.set(op.getResult(), Tensor(std::move(shape), std::move(packed)));
  return absl::OkStatus();
}

namespace {

/// The kernel op's weight repacked to its decision's layout, and its kernel.
struct CompiledMatmul {
  ::kf::PackedLayout layout;
  std::span<const uint8_t> packedWeight;
  kf_matmul_kernel_fn kernel;
};

absl::StatusOr<CompiledMatmul> getCompiledMatmul(mlir::Operation *op,
                                                 mlir::SymbolRefAttr callee,
                                                 Weight &weight,
                                                 Context &context) {
  auto decision = op->getAttrOfType<mlir::kf::KernelAttr>(
      mlir::kf::KfDialect::kKernelAttrName);
  if (!decision)
    return opError(op, "kf.kernel must be a #kf.kernel");
  CompiledMatmul matmul;
  matmul.layout = decision.getWeightLayout();
  KF_ASSIGN_OR_RETURN(matmul.packedWeight, getPacked(weight, matmul.layout));
  KF_ASSIGN_OR_RETURN(void *kernel, context.getKernel(op, callee));
  matmul.kernel = reinterpret_cast<kf_matmul_kernel_fn>(kernel);
  return matmul;
}

/// A kernel op's input as its kernel reads it: packed activation bytes, or
/// the fp32 activations of a kernel that quantizes them (quantize = fused;
/// the op's verifier ties the element type to the decision).
std::span<const uint8_t> getKernelInput(const Tensor &input) {
  if (input.getElementType() == ElementType::F32) {
    std::span<const float> floats = input.getFloats();
    return {reinterpret_cast<const uint8_t *>(floats.data()),
            floats.size_bytes()};
  }
  std::span<const int8_t> bytes = input.getBytes();
  return {reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()};
}

} // namespace

absl::Status execute(mlir::kf::QMatmulOp op, Frame &frame, Context &context) {
  const Tensor &input = frame.tensor(op.getInput());
  Weight &weight = frame.weight(op.getWeight());
  KF_ASSIGN_OR_RETURN(CompiledMatmul compiled,
                      getCompiledMatmul(op, op.getCallee(), weight, context));
  std::span<const uint8_t> packedWeight = compiled.packedWeight;
  int64_t m = input.getDimSize(0), n = op.getType().getDimSize(1);
  // The kernel was built for the rows from row_offset on (a group's), which
  // start a packed row group: the verifier checked the offset's alignment.
  const ::kf::PackedLayout &layout = compiled.layout;
  int64_t firstGroup = op.getRowOffset() / layout.rows;
  int64_t groupBytes = ::kf::packedGroupBytes(layout, weight.type.getCols());
  int64_t groups = (n + layout.rows - 1) / layout.rows;
  if ((firstGroup + groups) * groupBytes >
      static_cast<int64_t>(packedWeight.size()))
    return opError(op, "rows from " + llvm::Twine(op.getRowOffset()) +
                           " leave the packed weight");
  const uint8_t *rows = packedWeight.data() + firstGroup * groupBytes;
  std::vector<float> out(static_cast<size_t>(m * n));
  compiled.kernel(rows, getKernelInput(input).data(), out.data(), n, m, 0, n);
  frame.set(op.getResult(), Tensor({m, n}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::ExpertQMatmulOp op, Frame &frame,
                     Context &context) {
  const Tensor &input = frame.tensor(op.getInput());
  const Tensor &ids = frame.tensor(op.getIds());
  Weight &weight = frame.weight(op.getWeight());
  const int64_t tokens = ids.getDimSize(0), slots = ids.getDimSize(1);
  const int64_t experts = weight.type.getShape().front();
  const int64_t n = weight.type.getRows();
  KF_RETURN_IF_ERROR(expectSize(op, "the activations' token count",
                                input.getDimSize(0), tokens));
  // One packed row per token (read by each of its slots) or per slot.
  const bool perToken = input.getRank() == 2;
  if (!perToken)
    KF_RETURN_IF_ERROR(expectSize(op, "the activations' slot count",
                                  input.getDimSize(1), slots));
  KF_ASSIGN_OR_RETURN(CompiledMatmul compiled,
                      getCompiledMatmul(op, op.getCallee(), weight, context));
  absl::StatusOr<::kf::ExpertBuckets> buckets =
      ::kf::bucketByExpert(ids.getInts(), experts);
  if (!buckets.ok())
    return opError(op, std::string(buckets.status().message()));
  std::span<const uint8_t> rowsIn = getKernelInput(input);
  const int64_t rowCount = input.getNumElements() / input.getShape().back();
  ::kf::ExpertActivations x{rowsIn,
                            static_cast<int64_t>(rowsIn.size()) / rowCount,
                            perToken ? slots : 1};
  ::kf::ExpertMatmul matmul{
      compiled.kernel, compiled.packedWeight.data(),
      static_cast<int64_t>(compiled.packedWeight.size()) / experts, n};
  std::vector<float> out(static_cast<size_t>(tokens * slots * n));
  if (absl::Status run = ::kf::runExpertMatmul(matmul, *buckets, x, out);
      !run.ok())
    return opError(op, std::string(run.message()));
  frame.set(op.getResult(), Tensor({tokens, slots, n}, std::move(out)));
  return absl::OkStatus();
}

} // namespace kf::deepseek_v4::interpreter::detail
