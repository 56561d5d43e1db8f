//===- LowerQuantDot.cpp - Matmuls to compiled quantize and dot kernels ---===//
//
// Each decided kf.linear becomes a kf.quantize_activations (fp32 rows into
// packed int8 blocks) and a kf.qmatmul (packed blocks times the quantized
// weight), both calling kernels the emitters build from the op's #kf.kernel
// into the module's nested `module @kernels`; or, where the decision says
// `quantize = fused`, a kf.qmatmul of the fp32 rows whose kernel quantizes
// them itself. The kernels live in the IR, so
// what is printed is what the JIT and the object writer compile, and two
// matmuls of one shape and decision share one function.
//
// A kf.moe becomes the same for its shared expert, and for its routed
// experts kf.expert_qmatmul ops whose kernels are one expert's: which tokens
// an expert serves is decided at run time, so the executor buckets them and
// calls the kernel per expert. The steps between the matmuls keep the
// model's roundings: kf.swiglu (bf16, the routing weight applied before the
// down projection), kf.fp8_sim of each linear's input under fp8_activations,
// and kf.moe_combine (the routed sum plus the shared expert, then bf16).
//
//===----------------------------------------------------------------------===//

#include "kf/Passes/Passes.h"

#include "KernelDecisions.h"
#include "QuantKernels.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFLOWERQUANTDOT
#include "kf/Passes/Passes.h.inc"

namespace {

namespace codegen = ::kf::codegen;
using ::kf::target::TargetInfo;

/// A matmul the emitters build: its decision, spec and kernels.
struct LoweredMatmul {
  KernelAttr kernel;
  codegen::MatmulKernelSpec spec;
  MatmulKernels fns;
};

struct LowerQuantDotPass : impl::KfLowerQuantDotBase<LowerQuantDotPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = getTargetOrError(module, "kf-lower-quant-dot");
    if (!targetAttr)
      return signalPassFailure();
    TargetInfo target = targetAttr.getTargetInfo();

    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<LinearOp, GroupedLinearOp, MoeOp>(op))
        ops.push_back(op);
    });
    KernelModule kernels(module, target, "kf-lower-quant-dot");
    for (Operation *op : ops) {
      LogicalResult lowered = isa<MoeOp>(op)
                                  ? lowerMoe(cast<MoeOp>(op), kernels, target)
                                  : lowerLinear(op, kernels, target);
      if (failed(lowered))
        return signalPassFailure();
    }
  }

  /// The decision and kernel spec of `matmul` of `op` (its kernels not
  /// built yet); nullopt when no emitter builds its decision, which is left
  /// to the graph's reference path unless require-all makes it an error;
  /// failure on an error.
  FailureOr<std::optional<LoweredMatmul>>
  decideMatmul(Operation *op, const Matmul &matmul, Precision precision,
               const TargetInfo &target) {
    KernelAttr kernel = getKernelOrError(op, matmul, "kf-lower-quant-dot");
    if (!kernel)
      return failure();
    std::string reason;
    FailureOr<codegen::MatmulKernelSpec> spec =
        getMatmulSpec(matmul, kernel, precision, target, reason);
    if (failed(spec)) {
      if (!requireAll)
        return std::optional<LoweredMatmul>();
      InFlightDiagnostic diag = op->emitOpError() << "kf-lower-quant-dot: ";
      if (!matmul.name.empty())
        diag << matmul.name << ": ";
      return diag << reason;
    }
    return std::optional<LoweredMatmul>(LoweredMatmul{kernel, *spec, {}});
  }

  /// A kf.qmatmul of `x`'s quantization by `matmul`'s kernels, on the weight
  /// rows from `rowOffset` on.
  static Value createQMatmul(OpBuilder &b, Location loc, Value x, Value weight,
                             const LoweredMatmul &matmul, Precision precision,
                             int64_t rowOffset = 0) {
    Value input =
        createKernelInput(b, loc, x, matmul.fns.quantize, matmul.spec);
    auto type = RankedTensorType::get(
        {cast<RankedTensorType>(x.getType()).getDimSize(0), matmul.spec.n},
        b.getF32Type());
    auto qmatmul =
        QMatmulOp::create(b, loc, type, matmul.fns.matmul, input, weight,
                          PrecisionAttr::get(b.getContext(), precision),
                          b.getI64IntegerAttr(rowOffset));
    qmatmul->setAttr(KfDialect::kKernelAttrName, matmul.kernel);
    return qmatmul;
  }

  /// Lowers a kf.linear, or a kf.grouped_linear as one kf.qmatmul per group
  /// (each on its slice of the input and its rows of the weight, by one
  /// kernel) whose results are concatenated.
  LogicalResult lowerLinear(Operation *op, KernelModule &kernels,
                            const TargetInfo &target) {
    auto grouped = dyn_cast<GroupedLinearOp>(op);
    Precision precision =
        grouped ? grouped.getPrecision() : cast<LinearOp>(op).getPrecision();
    FailureOr<std::optional<LoweredMatmul>> decided =
        decideMatmul(op, getMatmuls(op).front(), precision, target);
    if (failed(decided))
      return failure();
    if (!*decided)
      return success();
    LoweredMatmul &matmul = **decided;
    FailureOr<MatmulKernels> fns = kernels.getOrBuild(op, matmul.spec);
    if (failed(fns))
      return failure();
    matmul.fns = *fns;

    OpBuilder b(op);
    Location loc = op->getLoc();
    Value input = op->getOperand(0), weight = op->getOperand(1);
    Value result;
    if (!grouped) {
      result = createQMatmul(b, loc, input, weight, matmul, precision);
    } else {
      // Group g: columns g·K .. (g+1)·K − 1 of the input, rows g·N ..
      // (g+1)·N − 1 of the weight. A slice quantizes as the whole row does,
      // K being a multiple of the activation block.
      int64_t m = cast<RankedTensorType>(input.getType()).getDimSize(0);
      const int64_t k = matmul.spec.k, n = matmul.spec.n;
      SmallVector<OpFoldResult> sizes = {
          m == ShapedType::kDynamic
              ? OpFoldResult(
                    tensor::DimOp::create(b, loc, input, 0).getResult())
              : OpFoldResult(b.getIndexAttr(m)),
          b.getIndexAttr(k)};
      SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
      SmallVector<Value> groups;
      for (int64_t g = 0; g < static_cast<int64_t>(grouped.getGroups()); ++g) {
        SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                             b.getIndexAttr(g * k)};
        Value slice = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({m, k}, b.getF32Type()), input,
            offsets, sizes, strides);
        groups.push_back(
            createQMatmul(b, loc, slice, weight, matmul, precision, g * n));
      }
      result = tensor::ConcatOp::create(b, loc, /*dim=*/1, groups);
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    return success();
  }

  /// Lowers a kf.moe whose six matmuls the emitters all build; one that
  /// cannot run compiled whole stays for the reference path.
  LogicalResult lowerMoe(MoeOp moe, KernelModule &kernels,
                         const TargetInfo &target) {
    // Every linear of the MoE rounds its result to bf16 (model §4.5,
    // docs/models/deepseek_v4_model.md).
    constexpr Precision kPrecision = Precision::bf16;
    SmallVector<LoweredMatmul, 6> matmuls;
    for (const Matmul &matmul : getMatmuls(moe)) {
      FailureOr<std::optional<LoweredMatmul>> decided =
          decideMatmul(moe, matmul, kPrecision, target);
      if (failed(decided))
        return failure();
      if (!*decided)
        return success();
      matmuls.push_back(**decided);
    }
    // Only now that every stack has an emitter: a kf.moe left whole must
    // leave no kernel behind in the module.
    for (LoweredMatmul &matmul : matmuls) {
      FailureOr<MatmulKernels> fns = kernels.getOrBuild(moe, matmul.spec);
      if (failed(fns))
        return failure();
      matmul.fns = *fns;
    }
    const LoweredMatmul &gate = matmuls[0], &up = matmuls[1],
                        &down = matmuls[2], &sharedGate = matmuls[3],
                        &sharedUp = matmuls[4], &sharedDown = matmuls[5];

    OpBuilder b(moe);
    Location loc = moe.getLoc();
    // Each linear's input takes FP8SIM under fp8_activations; the gate and
    // up projections share theirs (and their quantizations, under CSE).
    auto linearInput = [&](Value x) -> Value {
      if (!moe.getFp8Activations())
        return x;
      return Fp8SimOp::create(b, loc, x.getType(), x,
                              b.getI64IntegerAttr(MoeOp::kFp8ActivationBlock),
                              IntegerAttr());
    };
    auto ids = cast<RankedTensorType>(moe.getIds().getType());
    const int64_t tokens = ids.getDimSize(0), slots = ids.getDimSize(1);
    auto expertMatmul = [&](Value x, Value stack,
                            const LoweredMatmul &matmul) -> Value {
      Value input =
          createKernelInput(b, loc, x, matmul.fns.quantize, matmul.spec);
      auto type =
          RankedTensorType::get({tokens, slots, matmul.spec.n}, b.getF32Type());
      auto op = ExpertQMatmulOp::create(b, loc, type, matmul.fns.matmul, input,
                                        moe.getIds(), stack, kPrecision);
      op->setAttr(KfDialect::kKernelAttrName, matmul.kernel);
      return op;
    };

    Value x = linearInput(moe.getInput());
    Value g = expertMatmul(x, moe.getGateExps(), gate);
    Value u = expertMatmul(x, moe.getUpExps(), up);
    Value h = SwigluOp::create(b, loc, g.getType(), g, u, moe.getWeights(),
                               moe.getLimitAttr());
    Value routed = expertMatmul(linearInput(h), moe.getDownExps(), down);

    Value sg =
        createQMatmul(b, loc, x, moe.getGateShexp(), sharedGate, kPrecision);
    Value su = createQMatmul(b, loc, x, moe.getUpShexp(), sharedUp, kPrecision);
    Value sh = SwigluOp::create(b, loc, sg.getType(), sg, su, Value(),
                                moe.getSharedLimitAttr());
    Value shared = createQMatmul(b, loc, linearInput(sh), moe.getDownShexp(),
                                 sharedDown, kPrecision);

    Value result = MoeCombineOp::create(b, loc, moe.getType(), routed, shared);
    moe.getResult().replaceAllUsesWith(result);
    moe.erase();
    return success();
  }
};

} // namespace
} // namespace mlir::kf
