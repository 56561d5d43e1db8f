// The tiny model's graph through kf-compile's pipeline for this machine
// (--kf-plan-pipeline: its quantized linears and its MoE layers' expert
// matmuls lowered to kernels the JIT compiles), run by the interpreter,
// against the reference: every compiled matmul of a 200-token prefill and 20
// decode steps on the real activations it meets in the model, and the
// logits of every step. An expert matmul (kf.expert_qmatmul, run through the
// runtime's MoE dispatch: one kernel call per expert bucket) is checked slot
// by slot: the slot's input row against the rows of the expert it was
// routed to, with the same bound, since each bucket column is one ordinary
// quantized dot product.
//
// Per matmul the tolerance is derived, not guessed. The kernel computes
// sum_k q_k d_b w_k with the activation quantized per block b of 32 to
// q_k = round(x_k / d_b), d_b = fp16(amax_b / 127), so |x_k - q_k d_b| <=
// d_b / 2 (clamping to 127 at the block's largest element errs by at most
// d_b * 127 * 2^-11, less than that). The reference sums x_k w_k in double.
// So, per output:
//   |y - y_ref| <= sum_b d_b / 2 * sum_{k in b} |w_k|        (quantization)
//               + (B + 2) 2^-24 sum_k |q_k d_b w_k|          (the kernel's
//                 float scaling and sum over B blocks; block dots are exact)
//               + 2^-8 (|y| + |y_ref|)                        (each side's
//                 rounding to bf16 for precision(bf16)).
// For BF16 and F32 weights the activation is rounded to bf16 (|x - x_b| <=
// 2^-9 |x|) or kept, and the kernel's fp32 sum is reordered: each term goes
// through at most 2 K_pad roundings (K_pad: K up to the packed block), so
// the bound is 2^-9 sum_k |x_k w_k| (bf16) + (2 K_pad + 2) 2^-24 sum_k |x_k
// w_k| + the bf16 term.
// Exceeding it is a kernel bug; the largest share of it an output used is
// printed (the quantization term is a worst case that random signs rarely
// approach). The typical error is checked too, against what this op's own
// activations predict: the quantization errors e_k = x_k - q_k d_b are known
// (the test quantizes as the kernel does), and with weights of random sign
// an output's error has the variance sum_k w_k^2 e_k^2; a bf16 rounding adds
// a relative variance of 2^-14 / 12 * E[1 / m^2] = 2.75e-6 (a half-ulp
// uniform error at mantissa m, log-uniform on [1, 2): E = 0.541), once per
// side. The RMS of n outputs' errors is itself a sample: for roughly normal
// errors its relative standard deviation is 1 / sqrt(2 n) (a decode step's
// o_a group has n = 64 outputs: 9 %; a prefill's, thousands: under 1 %). Each
// matmul's relative RMS error must stay within (1.1 + 4 / sqrt(2 n)) times
// the predicted one: four standard deviations, and 10 % for the model (the
// roundings of the two sides are correlated, which makes the prediction
// larger, not smaller). For normal activations (a block's amax about 2.5
// sigma) the prediction is about 0.6 %; the SwiGLU outputs the down
// projections read are heavier-tailed, so their blocks' scales are set by
// rarer large values and their error is relatively larger (up to 1.03 %).
// A float kernel's predicted variance is its activations' bf16 rounding
// (known per element, as the quantization's) plus its reordered sum's: K_pad
// roundings of partial sums below sum_k |x_k w_k|, each a uniform error of
// variance u^2 / 3.
//
// The logits cannot match the reference's closely: the tiny model's random
// weights amplify 0.6 % per matmul to about 2 % of the residual stream after
// one layer and 10-15 % after seven (measured), and some greedy tokens flip.
// At least half of the 21 steps must pick the reference's token (measured:
// 14 with the MoE layers compiled, 15 with them on the reference path; which
// tokens flip moves with any change of rounding, an ISA's included, so the
// threshold leaves room below them); a wrong kernel yields noise that agrees
// in almost none (a 32256-token vocabulary). The per-matmul and per-MoE-layer
// bounds above are the precise checks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/Passes/Passes.h"
#include "kf/deepseek_v4/builder/graph_builder.h"
#include "kf/deepseek_v4/reference/model.h"
#include "kf/deepseek_v4/reference/moe.h"
#include "kf/runtime/half.h"
#include "kf/runtime/packed_layout.h"
#include "kf/runtime/quant.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

namespace kf::deepseek_v4::interpreter::test {
namespace {

constexpr size_t kPrefill = 200, kDecode = 20;

/// The interpreter's kernels from a JIT, which must outlive it.
KernelResolver resolverOf(const codegen::JitKernelModule &jit) {
  return [&jit](std::string_view symbol) -> absl::StatusOr<void *> {
    llvm::Expected<void *> address = jit.lookup(symbol);
    if (!address)
      return absl::NotFoundError(llvm::toString(address.takeError()));
    return *address;
  };
}

std::string locationOf(mlir::Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getLoc();
  return text;
}

/// The fp32 activations a kernel op's input comes from: what the
/// kf.quantize_activations producing it read, or the input itself where the
/// kernel quantizes its activations (quantize = fused).
mlir::Value getFp32Input(mlir::Value kernelInput) {
  if (auto quantize =
          kernelInput.getDefiningOp<mlir::kf::QuantizeActivationsOp>())
    return quantize.getInput();
  return kernelInput;
}

/// Whether `user` reads `value` as fp32 activations it quantizes: a
/// quantizer, or a kernel op of a fused quantization.
bool quantizes(mlir::Operation *user, mlir::Value value) {
  if (llvm::isa<mlir::kf::QuantizeActivationsOp>(user))
    return true;
  return llvm::isa<mlir::kf::QMatmulOp, mlir::kf::ExpertQMatmulOp>(user) &&
         user->getOperand(0) == value;
}

/// Checks each kf.qmatmul and kf.expert_qmatmul the interpreter runs
/// against the double-precision product of its fp32 input (what its
/// kf.quantize_activations read) and the file's decoded weight: for an
/// expert matmul, each slot's input row (its token's, or its own for the
/// down projection) against the rows of the expert its id names.
class MatmulChecker {
public:
  explicit MatmulChecker(const gguf::File &file) : file(file) {}

  void observe(mlir::Operation *op, std::span<const Tensor *> results) {
    // Keep the fp32 values each quantizer will read, and the expert ids each
    // expert matmul will follow.
    for (auto [value, tensor] : llvm::zip_equal(op->getResults(), results)) {
      if (!tensor)
        continue;
      if (tensor->getElementType() == ElementType::F32 &&
          llvm::any_of(value.getUsers(), [&](mlir::Operation *user) {
            return quantizes(user, value);
          }))
        inputs[value].assign(tensor->getFloats().begin(),
                             tensor->getFloats().end());
      if (tensor->getElementType() == ElementType::I32 &&
          llvm::any_of(value.getUsers(), [](mlir::Operation *user) {
            return llvm::isa<mlir::kf::ExpertQMatmulOp>(user);
          }))
        ids[value].assign(tensor->getInts().begin(), tensor->getInts().end());
    }
    if (auto qmatmul = llvm::dyn_cast<mlir::kf::QMatmulOp>(op))
      check(qmatmul, *results[0]);
    if (auto expert = llvm::dyn_cast<mlir::kf::ExpertQMatmulOp>(op))
      check(expert, *results[0]);
  }

  int64_t checked = 0, checkedExperts = 0;
  double worstShare = 0, worstRms = 0, worstRatio = 0;

private:
  /// The error of one op's outputs against their references.
  struct Errors {
    double squaredError = 0, squaredWant = 0, squaredPredicted = 0;
    int64_t outputs = 0;
  };

  std::span<const float> weight(mlir::Value value) {
    auto get = value.getDefiningOp<mlir::kf::GetWeightOp>();
    std::string name = get.getName().str();
    auto [it, inserted] = weights.try_emplace(name);
    if (inserted) {
      const gguf::TensorInfo *tensor = file.findTensor(name);
      it->second.resize(static_cast<size_t>(tensor->elements()));
      EXPECT_TRUE(
          dequantize(tensor->format, file.data(*tensor), it->second).ok());
    }
    return it->second;
  }

  /// The fp32 values a kernel op's input `packed` was quantized from.
  const std::vector<float> *quantizerInput(mlir::Value packed) {
    auto found = inputs.find(getFp32Input(packed));
    EXPECT_NE(found, inputs.end()) << "the quantizer's input was not seen";
    return found == inputs.end() ? nullptr : &found->second;
  }

  /// Checks the n outputs `got` of one token column `x` (k values) against
  /// x · wᵀ for the n rows of `w`, within the bound of the file's header.
  void checkColumn(mlir::Operation *op, ::kf::Format format,
                   std::span<const float> x, std::span<const float> w,
                   std::span<const float> got, bool bf16, int64_t column,
                   Errors &errors) {
    // The float kernels: activations rounded to bf16 (BF16 weights) or as
    // they are (F32), a reordered fp32 sum.
    const bool isFloat = ::kf::isFloatFormat(format);
    const auto k = static_cast<int64_t>(x.size());
    const int64_t blocks = isFloat ? 0 : k / 32;
    const int64_t kPad =
        ::kf::packedKBlocks(format, k) * ::kf::packedBlockElems(format);
    const double activationRounding =
        format == ::kf::Format::BF16 ? 0x1p-9 : 0.0;
    std::vector<double> d(static_cast<size_t>(blocks));
    // The squared quantization (or bf16 rounding) error of each activation.
    std::vector<double> e2(x.size());
    for (int64_t i = 0; format == ::kf::Format::BF16 && i < k; ++i) {
      double e = x[i] - bf16ToFp32(fp32ToBf16(x[i]));
      e2[i] = e * e;
    }
    for (int64_t b = 0; b < blocks; ++b) {
      float amax = 0;
      for (int64_t i = 0; i < 32; ++i)
        amax = std::max(amax, std::fabs(x[b * 32 + i]));
      d[b] = fp16ToFp32(fp32ToFp16(amax / 127.0f));
      const float scale = amax == 0 ? 0.0f : 127.0f / amax;
      for (int64_t i = b * 32; i < b * 32 + 32; ++i) {
        double e = x[i] - std::nearbyint(x[i] * scale) * d[b];
        e2[i] = e * e;
      }
    }
    constexpr double kBf16RelativeVariance = 0x1p-14 / 12 * 0.541;
    for (size_t r = 0; r < got.size(); ++r) {
      const float *wr = w.data() + r * k;
      double exact = 0, quantization = 0, magnitude = 0, predicted = 0;
      for (int64_t b = 0; b < blocks; ++b)
        for (int64_t i = b * 32; i < b * 32 + 32; ++i) {
          exact += static_cast<double>(x[i]) * wr[i];
          quantization += d[b] / 2 * std::fabs(wr[i]);
          magnitude += (std::fabs(x[i]) + d[b] / 2) * std::fabs(wr[i]);
          predicted += static_cast<double>(wr[i]) * wr[i] * e2[i];
        }
      for (int64_t i = 0; isFloat && i < k; ++i) {
        const double p = std::fabs(static_cast<double>(x[i]) * wr[i]);
        exact += static_cast<double>(x[i]) * wr[i];
        quantization += activationRounding * p;
        magnitude += p;
        predicted += static_cast<double>(wr[i]) * wr[i] * e2[i];
      }
      if (isFloat)
        predicted +=
            static_cast<double>(kPad) * magnitude * magnitude * 0x1p-48 / 3;
      float want = static_cast<float>(exact);
      if (bf16)
        want = bf16ToFp32(fp32ToBf16(want));
      // The float kernels' sum: each term through at most 2 K_pad roundings
      // (docs/codegen.md, "Float kernels"), and the reference's.
      double bound = quantization + (isFloat ? 2 * kPad + 2 : blocks + 2) *
                                        0x1p-24 * magnitude;
      if (bf16)
        bound += 0x1p-8 * (std::fabs(got[r]) + std::fabs(want));
      double error = std::fabs(static_cast<double>(got[r]) - want);
      ASSERT_LE(error, bound)
          << op->getName().getStringRef().str() << " at " << locationOf(op)
          << ", column " << column << ", row " << r << ": " << got[r]
          << " vs the reference's " << want;
      if (bound > 0)
        worstShare = std::max(worstShare, error / bound);
      errors.squaredError += error * error;
      errors.squaredWant += static_cast<double>(want) * want;
      if (bf16)
        predicted +=
            2 * kBf16RelativeVariance * static_cast<double>(want) * want;
      errors.squaredPredicted += predicted;
      ++errors.outputs;
    }
  }

  void finish(mlir::Operation *op, const Errors &errors) {
    ++checked;
    double want = std::max(errors.squaredWant, 1e-300);
    double rms = std::sqrt(errors.squaredError / want);
    double predicted = std::sqrt(errors.squaredPredicted / want);
    worstRms = std::max(worstRms, rms);
    const double allowed =
        1.1 + 4 / std::sqrt(2.0 * static_cast<double>(errors.outputs));
    if (predicted > 0)
      worstRatio = std::max(worstRatio, rms / predicted / allowed);
    EXPECT_LE(rms, allowed * predicted)
        << op->getName().getStringRef().str() << " at " << locationOf(op)
        << ": relative RMS error against the predicted one";
  }

  void check(mlir::kf::QMatmulOp op, const Tensor &y) {
    const std::vector<float> *x = quantizerInput(op.getInput());
    ASSERT_TRUE(x);
    // The rows from row_offset on (a kf.grouped_linear's group).
    const int64_t m = y.getDimSize(0), n = y.getDimSize(1);
    const int64_t k = op.getWeight().getType().getCols();
    std::span<const float> w =
        weight(op.getWeight())
            .subspan(static_cast<size_t>(op.getRowOffset() * k));
    ASSERT_EQ(static_cast<int64_t>(x->size()), m * k);
    const auto format =
        static_cast<::kf::Format>(op.getWeight().getType().getFormat());
    Errors errors;
    for (int64_t j = 0; j < m; ++j) {
      checkColumn(op, format, std::span(*x).subspan(j * k, k),
                  w.subspan(0, static_cast<size_t>(n * k)),
                  y.getFloats().subspan(j * n, n),
                  op.getPrecision() == mlir::kf::Precision::bf16, j, errors);
      if (::testing::Test::HasFatalFailure())
        return;
    }
    finish(op, errors);
  }

  void check(mlir::kf::ExpertQMatmulOp op, const Tensor &y) {
    const std::vector<float> *x = quantizerInput(op.getInput());
    ASSERT_TRUE(x);
    auto found = ids.find(op.getIds());
    ASSERT_NE(found, ids.end()) << "the expert ids were not seen";
    const std::vector<int32_t> &slots = found->second;
    const int64_t k = op.getWeight().getType().getCols();
    const int64_t n = y.getDimSize(2), perToken = y.getDimSize(1);
    const bool tokenRows =
        llvm::cast<mlir::RankedTensorType>(op.getInput().getType()).getRank() ==
        2;
    std::span<const float> stack = weight(op.getWeight());
    ASSERT_EQ(static_cast<int64_t>(x->size()),
              static_cast<int64_t>(slots.size()) / (tokenRows ? perToken : 1) *
                  k);
    const auto format =
        static_cast<::kf::Format>(op.getWeight().getType().getFormat());
    Errors errors;
    for (size_t s = 0; s < slots.size(); ++s) {
      const int64_t row = tokenRows ? static_cast<int64_t>(s) / perToken
                                    : static_cast<int64_t>(s);
      checkColumn(op, format, std::span(*x).subspan(row * k, k),
                  stack.subspan(static_cast<size_t>(slots[s] * n * k),
                                static_cast<size_t>(n * k)),
                  y.getFloats().subspan(s * n, n),
                  op.getPrecision() == mlir::kf::Precision::bf16,
                  static_cast<int64_t>(s), errors);
      if (::testing::Test::HasFatalFailure())
        return;
    }
    ++checkedExperts;
    finish(op, errors);
  }

  const gguf::File &file;
  llvm::DenseMap<mlir::Value, std::vector<float>> inputs;
  llvm::DenseMap<mlir::Value, std::vector<int32_t>> ids;
  std::map<std::string, std::vector<float>> weights;
};

/// Checks each lowered MoE layer (its kf.moe_combine) against reference::moe
/// run on the same input tokens, so that the steps between the matmuls —
/// routing weights, clamps, FP8 simulations, the per-slot down projection
/// and the combination — are checked as a whole.
///
/// The bound. Both sides simulate FP8 on the same x, so the gate and up
/// projections differ by their quantization alone (relative RMS e = 0.6 %,
/// checked above). h = silu(g) u carries sqrt(1.28^2 + 1) e = 1 % (silu's
/// log-derivative is at most 1.28) plus bf16. FP8SIM(h) then rounds to e4m3,
/// whose grid spacing is s = 2^-3 / m of a value with mantissa m (E[s] =
/// 0.125 / ln 2 / 2 = 0.090 for log-uniform m); an error delta moves an
/// element to the neighbouring code with probability |delta| / (s |h|), so
/// the simulation turns a 1 % error into a relative variance of
/// E|delta| E[s] = sqrt(2 / pi) 0.01 0.090, an RMS of 2.7 %. With the
/// propagated 1 % and the down projection's own 1.1 %, a routed expert's
/// output is off by about 3 %, and so is the sum of k of them and the shared
/// expert (independent errors and values of similar size). A token meets
/// only about 40 such flips (k F elements, each with probability about 8 %),
/// so a decode step's figure is a small sample: the limit is twice the
/// prediction (measured 2.5-4.8 %). A clamp or routing weight applied wrong
/// errs by tens of percent; that the simulations are there at all is the
/// lowering's lit test.
constexpr double kMoeRelativeRms = 0.06;

class MoeChecker {
public:
  MoeChecker(const Config &config, const reference::Weights &weights,
             mlir::ModuleOp graph)
      : config(config), weights(weights) {
    // The layer's input: what its shared gate projection quantized (after
    // the FP8 simulation, which the reference applies itself).
    graph.walk([&](mlir::kf::MoeCombineOp combine) {
      auto down = combine.getShared().getDefiningOp<mlir::kf::QMatmulOp>();
      mlir::Value h = getFp32Input(down.getInput());
      if (auto sim = h.getDefiningOp<mlir::kf::Fp8SimOp>())
        h = sim.getInput();
      auto gate = h.getDefiningOp<mlir::kf::SwigluOp>()
                      .getGate()
                      .getDefiningOp<mlir::kf::QMatmulOp>();
      mlir::Value x = getFp32Input(gate.getInput());
      if (auto sim = x.getDefiningOp<mlir::kf::Fp8SimOp>())
        x = sim.getInput();
      layerInputs[combine] = x;
      captured.insert(x);
    });
  }

  /// The token ids of the step being run (hash-routed layers read them).
  void setTokens(std::span<const int32_t> stepTokens) { tokens = stepTokens; }

  void observe(mlir::Operation *op, std::span<const Tensor *> results) {
    for (auto [value, tensor] : llvm::zip_equal(op->getResults(), results))
      if (tensor && captured.contains(value))
        values[value].assign(tensor->getFloats().begin(),
                             tensor->getFloats().end());
    if (auto combine = llvm::dyn_cast<mlir::kf::MoeCombineOp>(op))
      check(combine, *results[0]);
  }

  int64_t checked = 0;
  double worstRms = 0;

private:
  void check(mlir::kf::MoeCombineOp op, const Tensor &y) {
    auto name = op->getLoc()->findInstanceOf<mlir::NameLoc>();
    ASSERT_TRUE(name);
    unsigned layer = 0;
    ASSERT_EQ(std::sscanf(name.getName().str().c_str(), "blk.%u.moe", &layer),
              1);
    const std::vector<float> &x = values.at(layerInputs.at(op));
    const size_t d = config.nEmbd;
    ASSERT_EQ(x.size(), tokens.size() * d);
    double squaredError = 0, squaredWant = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      std::vector<float> want = reference::moe(
          config, weights.layer(layer), layer, std::span(x).subspan(t * d, d),
          tokens[t], 0, reference::Options{.simulateQuantization = true});
      for (size_t i = 0; i < d; ++i) {
        double error = y.getFloats()[t * d + i] - want[i];
        squaredError += error * error;
        squaredWant += static_cast<double>(want[i]) * want[i];
      }
    }
    double rms = std::sqrt(squaredError / std::max(squaredWant, 1e-300));
    worstRms = std::max(worstRms, rms);
    ++checked;
    EXPECT_LE(rms, kMoeRelativeRms)
        << "kf.moe_combine at " << locationOf(op) << ", " << tokens.size()
        << " tokens: relative RMS error against reference::moe";
  }

  const Config &config;
  const reference::Weights &weights;
  llvm::DenseMap<mlir::Operation *, mlir::Value> layerInputs;
  llvm::DenseSet<mlir::Value> captured;
  llvm::DenseMap<mlir::Value, std::vector<float>> values;
  std::span<const int32_t> tokens;
};

TEST(CompiledGolden, LoweredMatmulsStayWithinTheirBoundsAndTheTokensAgree) {
  std::unique_ptr<TinyModel> model = makeTinyModel(5);
  ASSERT_TRUE(model);
  const Config &config = model->config;
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> graph =
      buildGraph(*context, config, model->formats,
                 GraphOptions{.name = "tiny", .simulate = true});
  ASSERT_TRUE(graph);
  mlir::PassManager pm(context.get());
  mlir::kf::buildPlanPipeline(pm, mlir::kf::PlanPipelineOptions());
  ASSERT_TRUE(mlir::succeeded(pm.run(*graph)));
  int64_t lowered = 0, experts = 0, moes = 0, fused = 0;
  auto countFused = [&](mlir::Operation *op) {
    fused += op->getAttrOfType<mlir::kf::KernelAttr>(
                   mlir::kf::KfDialect::kKernelAttrName)
                 .isQuantizeFused();
  };
  graph->walk([&](mlir::kf::QMatmulOp op) {
    ++lowered;
    countFused(op);
  });
  graph->walk([&](mlir::kf::ExpertQMatmulOp op) {
    ++experts;
    countFused(op);
  });
  graph->walk([&](mlir::kf::MoeOp) { ++moes; });
  ASSERT_GT(lowered, 0) << "the pipeline lowered no linear";
  // A decode step's kernels of a column no other kernel reads quantize it
  // themselves (M = 1; the experts' down projections among them); the
  // prefill's take a separate quantizer's.
  EXPECT_GT(fused, 3 * static_cast<int64_t>(config.nLayer));
  EXPECT_LT(fused, lowered + experts);
  // Every MoE layer's experts run compiled: 3 stacks per layer and function.
  EXPECT_EQ(moes, 0) << "a kf.moe was left to the reference";
  EXPECT_EQ(experts, 3 * 2 * static_cast<int64_t>(config.nLayer));

  auto kernels = graph->lookupSymbol<mlir::ModuleOp>("kernels");
  ASSERT_TRUE(kernels);
  llvm::Expected<codegen::JitKernelModule> jit = codegen::jitKernelModule(
      kernels, mlir::kf::TargetAttr::lookup(*graph).getTargetInfo());
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());

  absl::StatusOr<Interpreter> interpreter =
      Interpreter::create(*graph, *model->file);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  interpreter->setKernelResolver(resolverOf(*jit));
  MatmulChecker checker(*model->file);
  MoeChecker moeChecker(config, *model->weights, *graph);
  interpreter->setObserver(
      [&](mlir::Operation *op, std::span<const Tensor *> results) {
        checker.observe(op, results);
        moeChecker.observe(op, results);
      });
  reference::Model reference(*model->weights,
                             reference::Options{.simulateQuantization = true});

  const TokenRun run(config, kPrefill, kDecode, 17);
  int agreeing = 0;
  double worstLogit = 0;
  for (size_t step = 0; step < run.steps(); ++step) {
    moeChecker.setTokens(run.stepTokens(step));
    absl::StatusOr<std::vector<Tensor>> got = interpreter->run(
        run.function(step), run.stepTokens(step), run.stepPositions(step));
    ASSERT_TRUE(got.ok()) << run.describe(step) << ": " << got.status();
    ASSERT_FALSE(::testing::Test::HasFailure());
    reference::ForwardResult expected = run.runReference(reference, step);
    std::span<const float> logits = (*got)[0].getFloats();
    double scale = 0;
    for (float v : expected.logits)
      scale = std::max(scale, std::fabs(static_cast<double>(v)));
    for (size_t i = 0; i < logits.size(); ++i)
      worstLogit =
          std::max(worstLogit, std::fabs(static_cast<double>(logits[i]) -
                                         expected.logits[i]) /
                                   scale);
    int32_t want = static_cast<int32_t>(
        std::max_element(expected.logits.begin(), expected.logits.end()) -
        expected.logits.begin());
    agreeing += (*got)[1].getInts()[0] == want;
  }
  std::printf("%lld compiled matmuls checked (%lld of them expert matmuls): "
              "largest share of the bound %.3f, largest relative RMS error "
              "%.3g (at most %.3g of its allowance); greedy tokens agree in "
              "%d of %zu steps; largest logit difference %.3g of the largest "
              "logit\n",
              static_cast<long long>(checker.checked),
              static_cast<long long>(checker.checkedExperts),
              checker.worstShare, checker.worstRms, checker.worstRatio,
              agreeing, kDecode + 1, worstLogit);
  std::printf("%lld MoE layer runs checked against reference::moe: largest "
              "relative RMS error %.3g\n",
              static_cast<long long>(moeChecker.checked), moeChecker.worstRms);
  EXPECT_EQ(moeChecker.checked,
            static_cast<int64_t>(run.steps() * config.nLayer));
  EXPECT_GT(checker.checked, 0);
  EXPECT_GT(checker.checkedExperts, 0);
  EXPECT_GE(2 * agreeing, static_cast<int>(kDecode + 1));
}

// A grouped linear of super-block weights through the pipeline: each group's
// kf.qmatmul reads its rows in place (row_offset into the packed super-blocks
// of Q4_K, or of the IQ formats' own layouts) with Q8_K activations, and
// equals kf::dot of the file's rows with the group's quantized slice, rounded
// to bf16, bit for bit.
void checkGroupsReadTheirRows(Format format) {
  SCOPED_TRACE(formatInfo(format).name);
  constexpr int64_t kGroups = 2, kRows = 16, kCols = 256, kTokens = 3;
  std::vector<float> values = randomValues(kGroups * kRows * kCols, 7);
  std::vector<uint8_t> rows(*rowBytes(format, values.size()));
  ASSERT_TRUE(quantize(format, values, rows).ok());
  gguf::Writer writer;
  writer.addTensor("wo", format, {kCols, kGroups * kRows}, rows);
  absl::StatusOr<std::vector<uint8_t>> bytes = writer.serialize("wo.gguf");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<gguf::File> file = gguf::File::parse(*bytes, "wo.gguf");
  ASSERT_TRUE(file.ok()) << file.status();

  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  std::string source = llvm::formatv(R"mlir(
module {{
  kf.weight @wo : !kf.qweight<{0}, [32, 256]>
  func.func @f(%x: tensor<?x512xf32>) -> tensor<?x32xf32> {{
    %w = kf.get_weight @wo : !kf.qweight<{0}, [32, 256]>
    %y = kf.grouped_linear %x, %w groups(2) : tensor<?x512xf32>, !kf.qweight<{0}, [32, 256]> -> tensor<?x32xf32>
    return %y : tensor<?x32xf32>
  }
}
)mlir",
                                     formatInfo(format).name)
                           .str();
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(*context, source);
  ASSERT_TRUE(module);
  mlir::PassManager pm(context.get());
  mlir::kf::PlanPipelineOptions options;
  options.targetName = "host";
  mlir::kf::buildPlanPipeline(pm, options);
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  int64_t lowered = 0;
  module->walk([&](mlir::kf::QMatmulOp) { ++lowered; });
  ASSERT_EQ(lowered, kGroups);

  llvm::Expected<codegen::JitKernelModule> jit = codegen::jitKernelModule(
      module->lookupSymbol<mlir::ModuleOp>("kernels"),
      mlir::kf::TargetAttr::lookup(*module).getTargetInfo());
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
  absl::StatusOr<Interpreter> interpreter = Interpreter::create(*module, *file);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();
  interpreter->setKernelResolver(resolverOf(*jit));
  std::vector<float> x = randomValues(kTokens * kGroups * kCols, 8);
  absl::StatusOr<std::vector<Tensor>> got =
      interpreter->call("f", {Tensor({kTokens, kGroups * kCols}, x)});
  ASSERT_TRUE(got.ok()) << got.status();

  const size_t rowBytes = *kf::rowBytes(format, kCols);
  const size_t actBytes = *kf::rowBytes(Format::Q8_K, kCols);
  std::vector<uint8_t> xq(actBytes);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t g = 0; g < kGroups; ++g) {
      ASSERT_TRUE(quantizeActivation(
                      Format::Q8_K,
                      std::span(x).subspan((t * kGroups + g) * kCols, kCols),
                      xq)
                      .ok());
      for (int64_t r = 0; r < kRows; ++r) {
        int64_t row = g * kRows + r;
        float want =
            *dot(format, std::span(rows).subspan(row * rowBytes, rowBytes), xq);
        want = bf16ToFp32(fp32ToBf16(want));
        EXPECT_EQ((*got)[0].getFloats()[t * kGroups * kRows + row], want)
            << "token " << t << ", row " << row;
      }
    }
}

TEST(CompiledGolden, SuperBlockGroupsReadTheirRows) {
  for (Format format :
       {Format::Q4_K, Format::IQ2_XXS, Format::IQ1_S, Format::IQ1_M})
    checkGroupsReadTheirRows(format);
}

} // namespace
} // namespace kf::deepseek_v4::interpreter::test
