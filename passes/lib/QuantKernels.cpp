//===- QuantKernels.cpp - Building the kernels of lowered matmuls ---------===//

#include "QuantKernels.h"

#include "kf/Codegen/MatmulEmitter.h"
#include "kf/Codegen/QuantizeKernel.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::kf {

namespace codegen = ::kf::codegen;
using ::kf::target::TargetInfo;

/// The name of the module holding the kernels.
constexpr StringLiteral kKernelsModule = "kernels";

FailureOr<codegen::MatmulKernelSpec>
getMatmulSpec(const Matmul &matmul, KernelAttr kernel, Precision precision,
              const TargetInfo &target, std::string &reason) {
  codegen::MatmulKernelSpec spec;
  spec.format = static_cast<::kf::Format>(matmul.weight.getFormat());
  // One table makes both enums, with the same values (KernelIsas.def).
  spec.isa = static_cast<codegen::KernelIsa>(kernel.getIsa());
  spec.rows = kernel.getRows();
  spec.k = matmul.k;
  spec.n = matmul.n;
  // A static M needs no wider tile than its decomposition has.
  spec.maxCols = kernel.getWidestColumnTile();
  spec.roundToBf16 = precision == Precision::bf16;
  spec.fuseQuantize = kernel.isQuantizeFused();
  spec.coding = kernel.getLayout().coding;
  // The cache blocks --kf-block-caches decided, which the kernel follows
  // when a call has more columns than one tile, decoding each row block once
  // if so decided; a static M of one tile never does.
  if (kernel.hasDynamicColumns() || kernel.getColumnTiles().size() > 1) {
    spec.l1K = kernel.getL1K().value_or(0);
    spec.l2Rows = kernel.getL2Rows().value_or(0);
    spec.decodeOnce = kernel.isDecodedOnce();
  }
  if (llvm::Error err = codegen::verifyMatmulKernel(spec, target)) {
    reason = llvm::toString(std::move(err));
    return failure();
  }
  // A group's kernel reads the group's rows in place, from a packed row
  // group's start.
  if (matmul.n != matmul.weight.getRows() && matmul.n % spec.rows != 0) {
    reason = llvm::formatv("a group's {0} rows are not a multiple of the "
                           "layout's row group {1}",
                           matmul.n, spec.rows)
                 .str();
    return failure();
  }
  return spec;
}

FailureOr<MatmulKernels>
KernelModule::getOrBuild(Operation *op, const codegen::MatmulKernelSpec &spec) {
  MatmulKernels kernels;
  kernels.matmul = getOrBuild(op, spec, codegen::buildMatmulKernel);
  if (!kernels.matmul)
    return failure();
  if (spec.fuseQuantize)
    return kernels;
  kernels.quantize = getOrBuild(
      op, codegen::QuantizeKernelSpec{spec.k, spec.getActivationFormat()},
      codegen::buildQuantizeKernel);
  if (!kernels.quantize)
    return failure();
  return kernels;
}

SymbolRefAttr KernelModule::getOrBuild(
    Operation *op, StringRef name,
    llvm::function_ref<llvm::Expected<func::FuncOp>(ModuleOp)> build) {
  ModuleOp module = getModule(op);
  if (!module)
    return {};
  if (!module.lookupSymbol(name)) {
    llvm::Expected<func::FuncOp> fn = build(module);
    if (!fn) {
      op->emitOpError() << pass << ": " << llvm::toString(fn.takeError());
      return {};
    }
  }
  MLIRContext *context = op->getContext();
  return SymbolRefAttr::get(StringAttr::get(context, kKernelsModule),
                            {FlatSymbolRefAttr::get(context, name)});
}

ModuleOp KernelModule::getModule(Operation *op) {
  if (kernels)
    return kernels;
  Operation *existing = SymbolTable::lookupSymbolIn(parent, kKernelsModule);
  if (existing) {
    kernels = dyn_cast<ModuleOp>(existing);
    if (!kernels)
      op->emitOpError() << pass << ": the symbol @" << kKernelsModule
                        << " is taken by a '" << existing->getName()
                        << "', expected the kernels module";
    return kernels;
  }
  OpBuilder b = OpBuilder::atBlockEnd(parent.getBody());
  kernels = ModuleOp::create(b, parent.getLoc(), kKernelsModule);
  return kernels;
}

Value createKernelInput(OpBuilder &b, Location loc, Value input,
                        SymbolRefAttr quantizer,
                        const codegen::MatmulKernelSpec &spec) {
  if (spec.fuseQuantize)
    return input;
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(input.getType()).getShape());
  shape.back() = spec.getActivationColumnBytes();
  return QuantizeActivationsOp::create(
      b, loc, RankedTensorType::get(shape, b.getI8Type()), quantizer, input,
      static_cast<Format>(spec.getActivationFormat()));
}

} // namespace mlir::kf
