// The tiny model's graph through kf-compile's pipeline for this machine
// (--kf-plan-pipeline: its quantized linears lowered to kernels the JIT
// compiles), run by the interpreter, against the reference: every compiled
// matmul of a 200-token prefill and 20 decode steps on the real activations
// it meets in the model, and the logits of every step.
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
// Exceeding it is a kernel bug; the largest share of it an output used is
// printed (the quantization term is a worst case that random signs rarely
// approach). The typical error is checked too: for activations that are
// roughly normal, a block's amax is about 2.5 sigma, so the quantization
// noise has an RMS of d / sqrt(12) = 2.5 sigma / 127 / 3.46, 0.57 % of the
// activations' and so of each output's RMS; each kf.qmatmul's relative RMS
// error must stay below 1 % (measured: 0.55-0.62 %, bf16 rounding included).
//
// The logits cannot match the reference's closely: the tiny model's random
// weights amplify 0.6 % per matmul to about 2 % of the residual stream after
// one layer and 10-15 % after seven (measured), and some greedy tokens flip.
// At least two thirds of the 21 steps must pick the reference's token; a
// wrong kernel yields noise that agrees in almost none.
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
#include "kf/runtime/half.h"
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

/// Checks each kf.qmatmul the interpreter runs against the double-precision
/// product of its fp32 input (what its kf.quantize_activations read) and the
/// file's decoded weight.
class MatmulChecker {
public:
  explicit MatmulChecker(const gguf::File &file) : file(file) {}

  void observe(mlir::Operation *op, std::span<const Tensor *> results) {
    // Keep the fp32 values each quantizer will read.
    for (auto [value, tensor] : llvm::zip_equal(op->getResults(), results))
      if (tensor && tensor->getElementType() == ElementType::F32 &&
          llvm::any_of(value.getUsers(), [](mlir::Operation *user) {
            return llvm::isa<mlir::kf::QuantizeActivationsOp>(user);
          }))
        inputs[value].assign(tensor->getFloats().begin(),
                             tensor->getFloats().end());
    if (auto qmatmul = llvm::dyn_cast<mlir::kf::QMatmulOp>(op))
      check(qmatmul, *results[0]);
  }

  int64_t checked = 0;
  double worstShare = 0, worstRms = 0;

private:
  std::span<const float> weight(mlir::kf::QMatmulOp op) {
    auto get = op.getWeight().getDefiningOp<mlir::kf::GetWeightOp>();
    std::string name = get.getName().str();
    auto [it, inserted] = weights.try_emplace(name);
    if (inserted) {
      const gguf::TensorInfo *tensor = file.find_tensor(name);
      it->second.resize(static_cast<size_t>(tensor->elements()));
      EXPECT_TRUE(
          dequantize(tensor->format, file.data(*tensor), it->second).ok());
    }
    return it->second;
  }

  void check(mlir::kf::QMatmulOp op, const Tensor &y) {
    auto quantize =
        op.getInput().getDefiningOp<mlir::kf::QuantizeActivationsOp>();
    ASSERT_TRUE(quantize);
    auto found = inputs.find(quantize.getInput());
    ASSERT_NE(found, inputs.end()) << "the quantizer's input was not seen";
    const std::vector<float> &x = found->second;
    // The rows from row_offset on (a kf.grouped_linear's group).
    const int64_t n = y.getDimSize(1);
    const int64_t k = op.getWeight().getType().getCols();
    std::span<const float> w =
        weight(op).subspan(static_cast<size_t>(op.getRowOffset() * k));
    const int64_t m = y.getDimSize(0), blocks = k / 32;
    const bool bf16 = op.getPrecision() == mlir::kf::Precision::bf16;
    double squaredError = 0, squaredWant = 0;
    ASSERT_EQ(static_cast<int64_t>(x.size()), m * k);
    std::vector<double> d(static_cast<size_t>(blocks));
    for (int64_t j = 0; j < m; ++j) {
      const float *xj = x.data() + j * k;
      for (int64_t b = 0; b < blocks; ++b) {
        float amax = 0;
        for (int64_t i = 0; i < 32; ++i)
          amax = std::max(amax, std::fabs(xj[b * 32 + i]));
        d[b] = fp16_to_fp32(fp32_to_fp16(amax / 127.0f));
      }
      for (int64_t r = 0; r < n; ++r) {
        const float *wr = w.data() + r * k;
        double exact = 0, quantization = 0, magnitude = 0;
        for (int64_t b = 0; b < blocks; ++b)
          for (int64_t i = b * 32; i < b * 32 + 32; ++i) {
            exact += static_cast<double>(xj[i]) * wr[i];
            quantization += d[b] / 2 * std::fabs(wr[i]);
            magnitude += (std::fabs(xj[i]) + d[b] / 2) * std::fabs(wr[i]);
          }
        float want = static_cast<float>(exact);
        if (bf16)
          want = bf16_to_fp32(fp32_to_bf16(want));
        float got = y.getFloats()[j * n + r];
        double bound = quantization + (blocks + 2) * 0x1p-24 * magnitude;
        if (bf16)
          bound += 0x1p-8 * (std::fabs(got) + std::fabs(want));
        double error = std::fabs(static_cast<double>(got) - want);
        ASSERT_LE(error, bound)
            << "kf.qmatmul at " << locationOf(op) << ", column " << j
            << ", row " << r << ": " << got << " vs the reference's " << want;
        if (bound > 0)
          worstShare = std::max(worstShare, error / bound);
        squaredError += error * error;
        squaredWant += static_cast<double>(want) * want;
      }
    }
    ++checked;
    double rms = std::sqrt(squaredError / std::max(squaredWant, 1e-300));
    worstRms = std::max(worstRms, rms);
    EXPECT_LE(rms, 0.01) << "kf.qmatmul at " << locationOf(op)
                         << ": relative RMS error";
  }

  const gguf::File &file;
  llvm::DenseMap<mlir::Value, std::vector<float>> inputs;
  std::map<std::string, std::vector<float>> weights;
};

TEST(CompiledGolden, LoweredMatmulsStayWithinTheirBoundsAndTheTokensAgree) {
  std::unique_ptr<TinyModel> model = makeTinyModel(5);
  ASSERT_TRUE(model);
  const Config &config = model->config;
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> graph =
      build_graph(*context, config, model->formats,
                  GraphOptions{.name = "tiny", .simulate = true});
  ASSERT_TRUE(graph);
  mlir::PassManager pm(context.get());
  mlir::kf::buildPlanPipeline(pm, mlir::kf::PlanPipelineOptions());
  ASSERT_TRUE(mlir::succeeded(pm.run(*graph)));
  int64_t lowered = 0;
  graph->walk([&](mlir::kf::QMatmulOp) { ++lowered; });
  ASSERT_GT(lowered, 0) << "the pipeline lowered no linear";

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
  interpreter->setObserver(
      [&](mlir::Operation *op, std::span<const Tensor *> results) {
        checker.observe(op, results);
      });
  reference::Model reference(*model->weights,
                             reference::Options{.simulate_quantization = true});

  const TokenRun run(config, kPrefill, kDecode, 17);
  int agreeing = 0;
  double worstLogit = 0;
  for (size_t step = 0; step < run.steps(); ++step) {
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
  std::printf("%lld compiled matmuls checked: largest share of the bound "
              "%.3f, largest relative RMS error %.3g; greedy tokens agree in "
              "%d of %zu steps; largest logit difference %.3g of the largest "
              "logit\n",
              static_cast<long long>(checker.checked), checker.worstShare,
              checker.worstRms, agreeing, kDecode + 1, worstLogit);
  EXPECT_GT(checker.checked, 0);
  EXPECT_GE(3 * agreeing, 2 * static_cast<int>(kDecode + 1));
}

// A grouped linear of super-block weights through the pipeline: each group's
// kf.qmatmul reads its rows in place (row_offset into the packed super-blocks
// of Q4_K, or of the IQ formats' own layouts) with Q8_K activations, and
// equals kf::dot of the file's rows with the group's quantized slice, rounded
// to bf16, bit for bit.
void checkGroupsReadTheirRows(Format format) {
  SCOPED_TRACE(format_info(format).name);
  constexpr int64_t kGroups = 2, kRows = 16, kCols = 256, kTokens = 3;
  std::vector<float> values = randomValues(kGroups * kRows * kCols, 7);
  std::vector<uint8_t> rows(*row_bytes(format, values.size()));
  ASSERT_TRUE(quantize(format, values, rows).ok());
  gguf::Writer writer;
  writer.add_tensor("wo", format, {kCols, kGroups * kRows}, rows);
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
                                     format_info(format).name)
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

  const size_t rowBytes = *row_bytes(format, kCols);
  const size_t actBytes = *row_bytes(Format::Q8_K, kCols);
  std::vector<uint8_t> xq(actBytes);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t g = 0; g < kGroups; ++g) {
      ASSERT_TRUE(quantize_activation(
                      Format::Q8_K,
                      std::span(x).subspan((t * kGroups + g) * kCols, kCols),
                      xq)
                      .ok());
      for (int64_t r = 0; r < kRows; ++r) {
        int64_t row = g * kRows + r;
        float want =
            *dot(format, std::span(rows).subspan(row * rowBytes, rowBytes), xq);
        want = bf16_to_fp32(fp32_to_bf16(want));
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
