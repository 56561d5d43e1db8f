// A block of norms and linears through kf-compile's pipeline, --kf-lower-ops
// and --kf-build-plan, JIT-compiled for this machine and run by the
// runtime's executor, against the golden computed step by step: the
// reference's rmsNorm, fp8Sim and per-head rmsScale, the reference activation
// quantizer and kf::dot with the bf16 rounding of a linear. The integer
// kernels equal kf::dot bit for bit and the norms equal the reference on
// these rows (RmsNormKernelTest), so the plan must too, whatever its arena
// offsets, barriers and thread count: bit for bit, on 1, 2 and 3 threads,
// for every row count from 1 to 17 and the plan's largest, with its kernels
// from the JIT and from the artifact kf-compile --emit=plan writes (a shared
// object the runtime loads without LLVM).
#include <cstring>
#include <random>
#include <vector>

#include "kf/Codegen/KernelCompiler.h"
#include "kf/Codegen/MatmulEmitter.h"
#include "kf/Dialect/Plan/PlanDialect.h"
#include "kf/Passes/InitAll.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/quant_sim.h"
#include "kf/runtime/executor.h"
#include "kf/runtime/half.h"
#include "kf/runtime/packing.h"
#include "kf/runtime/plan_file.h"
#include "kf/runtime/plan_library.h"
#include "kf/runtime/quant.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include "gmock/gmock.h"

namespace kf {
namespace {

namespace reference = ::kf::deepseek_v4::reference;

constexpr int64_t kMaxRows = 24;
constexpr int64_t kD = 256, kA = 192, kHeads = 3, kHead = 64, kB = 128, kO = 96;

// x -> RMSNorm(g) -> FP8 simulation -> linear(wa, q8_0) -> per-head bf16
// scaling -> linear(wb, q4_0) and a grouped linear (wo: three groups of 64
// columns, 32 rows each; its input slices quantized in place, its groups'
// products written into their columns of the result); every linear's
// result is returned, the first also read on.
constexpr const char *kGraph = R"mlir(
func.func @block(%x: tensor<?x256xf32>, %g: !kf.qweight<f32, [256]>,
                 %wa: !kf.qweight<q8_0, [192, 256]>,
                 %wb: !kf.qweight<q4_0, [128, 192]>,
                 %wo: !kf.qweight<q8_0, [96, 64]>)
    -> (tensor<?x128xf32>, tensor<?x192xf32>, tensor<?x96xf32>) {
  %h = kf.rms_norm %x, %g eps(1.0e-06) : tensor<?x256xf32>, !kf.qweight<f32, [256]>
  %s = kf.fp8_sim %h block(128) : tensor<?x256xf32>
  %a = kf.linear %s, %wa : tensor<?x256xf32>, !kf.qweight<q8_0, [192, 256]> -> tensor<?x192xf32>
  %c0 = arith.constant 0 : index
  %t = tensor.dim %a, %c0 : tensor<?x192xf32>
  %e = tensor.expand_shape %a [[0], [1, 2]] output_shape [%t, 3, 64] : tensor<?x192xf32> into tensor<?x3x64xf32>
  %q = kf.rms_norm %e eps(1.0e-06) compute(bf16) : tensor<?x3x64xf32>
  %c = tensor.collapse_shape %q [[0], [1, 2]] : tensor<?x3x64xf32> into tensor<?x192xf32>
  %b = kf.linear %c, %wb : tensor<?x192xf32>, !kf.qweight<q4_0, [128, 192]> -> tensor<?x128xf32>
  %o = kf.grouped_linear %c, %wo groups(3) : tensor<?x192xf32>, !kf.qweight<q8_0, [96, 64]> -> tensor<?x96xf32>
  return %b, %a, %o : tensor<?x128xf32>, tensor<?x192xf32>, tensor<?x96xf32>
}
)mlir";

std::vector<float> gaussian(size_t n, uint32_t seed, float sigma) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

std::vector<uint8_t> quantized(Format format, std::span<const float> values) {
  std::vector<uint8_t> bytes(values.size() / formatInfo(format).blockElems *
                             formatInfo(format).blockBytes);
  EXPECT_TRUE(quantize(format, values, bytes).ok());
  return bytes;
}

float roundBf16(float v) { return bf16ToFp32(fp32ToBf16(v)); }

// y = bf16(kf::dot(w row, q8_0(x))) for each of n rows of w.
std::vector<float> linear(Format format, std::span<const uint8_t> w, int64_t n,
                          std::span<const float> x) {
  const int64_t k = static_cast<int64_t>(x.size());
  std::vector<uint8_t> xq(k / 32 * formatInfo(Format::Q8_0).blockBytes);
  EXPECT_TRUE(quantizeActivation(Format::Q8_0, x, xq).ok());
  const size_t row = w.size() / n;
  std::vector<float> y(n);
  for (int64_t r = 0; r < n; ++r)
    y[r] = roundBf16(*dot(format, w.subspan(r * row, row), xq));
  return y;
}

struct Block {
  std::vector<float> x, g;
  std::vector<uint8_t> wa, wb, wo; // as stored in a file
};

Block makeBlock() {
  Block block;
  block.x = gaussian(kMaxRows * kD, 1, 1.0f);
  // A row far from the others' scale, and one of zeros.
  for (int64_t i = 0; i < kD; ++i) {
    block.x[3 * kD + i] *= 1e-3f;
    block.x[5 * kD + i] = 0.0f;
  }
  block.g = gaussian(kD, 2, 1.0f);
  block.wa = quantized(Format::Q8_0, gaussian(kA * kD, 3, 0.05f));
  block.wb = quantized(Format::Q4_0, gaussian(kB * kA, 4, 0.05f));
  block.wo = quantized(Format::Q8_0, gaussian(kO * kHead, 9, 0.05f));
  return block;
}

struct Outputs {
  std::vector<float> b, a, o;
};

// The golden's results for m rows: b [m, 128], a [m, 192], o [m, 96].
Outputs golden(const Block &block, int64_t m) {
  std::vector<float> b, a, o;
  const size_t groupBytes = (kO / kHeads) * *rowBytes(Format::Q8_0, kHead);
  for (int64_t r = 0; r < m; ++r) {
    std::vector<float> h(kD);
    reference::rmsNorm(std::span(block.x).subspan(r * kD, kD), block.g, 1e-6f,
                       h);
    reference::fp8Sim(h, 128);
    std::vector<float> ar = linear(Format::Q8_0, block.wa, kA, h);
    a.insert(a.end(), ar.begin(), ar.end());
    for (int64_t head = 0; head < kHeads; ++head)
      reference::rmsScale(std::span(ar).subspan(head * kHead, kHead), 1e-6f);
    std::vector<float> br = linear(Format::Q4_0, block.wb, kB, ar);
    b.insert(b.end(), br.begin(), br.end());
    for (int64_t group = 0; group < kHeads; ++group) {
      std::vector<float> orow =
          linear(Format::Q8_0,
                 std::span(block.wo).subspan(group * groupBytes, groupBytes),
                 kO / kHeads, std::span(ar).subspan(group * kHead, kHead));
      o.insert(o.end(), orow.begin(), orow.end());
    }
  }
  return {b, a, o};
}

// Runs `executor` for every row count on 1 to 3 threads against the golden.
void checkRuns(Executor &executor, const Block &block) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t m = 1; m <= kMaxRows; m += (m < 17 ? 1 : kMaxRows - 17)) {
      std::vector<float> x(block.x.begin(), block.x.begin() + m * kD);
      std::vector<float> b(m * kB, -1.0f), a(m * kA, -1.0f), o(m * kO, -1.0f);
      std::vector<std::span<uint8_t>> buffers = {
          {reinterpret_cast<uint8_t *>(x.data()), x.size() * 4},
          {reinterpret_cast<uint8_t *>(b.data()), b.size() * 4},
          {reinterpret_cast<uint8_t *>(a.data()), a.size() * 4},
          {reinterpret_cast<uint8_t *>(o.data()), o.size() * 4}};
      ASSERT_TRUE(executor.run(pool, m, buffers).ok());
      Outputs want = golden(block, m);
      ASSERT_EQ(a, want.a) << m << " rows, " << threads << " threads";
      ASSERT_EQ(b, want.b) << m << " rows, " << threads << " threads";
      ASSERT_EQ(o, want.o) << m << " rows, " << threads << " threads";
    }
  }
}

/// `text` parsed with every dialect a kf graph and its plan use; null after a
/// test failure.
mlir::OwningOpRef<mlir::ModuleOp> parseGraph(mlir::MLIRContext &context,
                                             llvm::StringRef text) {
  mlir::DialectRegistry registry;
  mlir::kf::registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  EXPECT_TRUE(module);
  return module;
}

/// kf-compile's pipeline for this machine, --kf-lower-ops and
/// --kf-build-plan of plans of `maxRows` rows, on `module`.
bool compileToPlan(mlir::ModuleOp module, int64_t maxRows) {
  mlir::PassManager pm(module.getContext());
  mlir::kf::PlanPipelineOptions pipeline;
  pipeline.targetName = "host";
  mlir::kf::buildPlanPipeline(pm, pipeline);
  pm.addPass(mlir::kf::createKfLowerOps());
  mlir::kf::KfBuildPlanOptions build;
  build.maxRows = maxRows;
  pm.addPass(mlir::kf::createKfBuildPlan(build));
  return mlir::succeeded(pm.run(module));
}

/// The plan's kernels, in its order, from `jit`; empty after a test failure.
std::vector<kf_step_fn> lookupKernels(const codegen::JitKernelModule &jit,
                                      const Plan &plan) {
  std::vector<kf_step_fn> kernels;
  for (const std::string &name : plan.kernels) {
    llvm::Expected<void *> fn = jit.lookup(name);
    if (!fn) {
      ADD_FAILURE() << llvm::toString(fn.takeError());
      return {};
    }
    kernels.push_back(reinterpret_cast<kf_step_fn>(*fn));
  }
  return kernels;
}

class BuildPlanTest : public testing::Test {
protected:
  void SetUp() override {
    module = parseGraph(context, kGraph);
    ASSERT_TRUE(module);
    ASSERT_TRUE(compileToPlan(*module, kMaxRows));
  }
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(BuildPlanTest, RunsTheGraphBitForBitJitAndAot) {
  auto planOp = *module->getOps<mlir::kf_plan::PlanOp>().begin();
  Plan plan = mlir::kf_plan::getRuntimePlan(planOp);
  // A matmul reads every thread's packed rows, and a step after it every
  // thread's columns: the first norm, simulation and quantizer share their
  // rows, the per-head norm splits them otherwise than the quantizer after
  // it (4). Each group's matmul reads the rows its quantizer just packed
  // (3); the groups write disjoint columns of one buffer, which needs none.
  EXPECT_EQ(plan.barriers(), 7);
  ASSERT_EQ(plan.weights.size(), 4u);
  EXPECT_EQ(plan.weights[0].name, "arg1");
  EXPECT_FALSE(plan.weights[0].layout);
  EXPECT_EQ(plan.weights[1].format, Format::Q8_0);
  EXPECT_THAT(plan.weights[1].shape, testing::ElementsAre(kA, kD));
  EXPECT_TRUE(plan.weights[1].layout);
  EXPECT_EQ(plan.weights[2].name, "arg3");

  auto kernelsModule = module->lookupSymbol<mlir::ModuleOp>("kernels");
  llvm::Expected<target::TargetInfo> host = target::lookupTarget("host");
  ASSERT_TRUE(static_cast<bool>(host));
  llvm::Expected<codegen::JitKernelModule> jit =
      codegen::jitKernelModule(kernelsModule, *host);
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
  std::vector<kf_step_fn> kernels = lookupKernels(*jit, plan);
  ASSERT_EQ(kernels.size(), plan.kernels.size());

  const Block block = makeBlock();
  // Each weight as stored, packed to the layout its plan entry names.
  std::vector<std::vector<uint8_t>> packed;
  const std::pair<const std::vector<uint8_t> *, std::pair<int64_t, int64_t>>
      sources[] = {{nullptr, {1, kD}},
                   {&block.wa, {kA, kD}},
                   {&block.wb, {kB, kA}},
                   {&block.wo, {kO, kHead}}};
  for (auto op : planOp.getBody().front().getOps<mlir::kf_plan::WeightOp>()) {
    size_t i = packed.size();
    if (!op.getLayout()) {
      ASSERT_EQ(i, 0u);
      packed.emplace_back(reinterpret_cast<const uint8_t *>(block.g.data()),
                          reinterpret_cast<const uint8_t *>(block.g.data()) +
                              block.g.size() * 4);
      continue;
    }
    std::optional<PackedLayout> layout = packedLayoutNamed(*op.getLayout());
    ASSERT_TRUE(layout) << op.getLayout()->str();
    auto [n, k] = sources[i].second;
    absl::StatusOr<std::vector<uint8_t>> bytes =
        packWeights(*layout, *sources[i].first, n, k);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    packed.push_back(std::move(*bytes));
  }
  std::vector<std::span<const uint8_t>> weights(packed.begin(), packed.end());
  absl::StatusOr<Executor> jitExecutor =
      Executor::create(plan, std::move(kernels), weights);
  ASSERT_TRUE(jitExecutor.ok()) << jitExecutor.status();
  checkRuns(*jitExecutor, block);

  // The same plan as one artifact, loaded by the runtime without LLVM.
  std::string path = testing::TempDir() + "/block.kfp";
  absl::StatusOr<std::vector<uint8_t>> bytes =
      serializePlans(std::span<const Plan>(&plan, 1));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  llvm::Error written =
      codegen::emitPlanLibrary(kernelsModule, *bytes, *host, path);
  ASSERT_FALSE(written) << llvm::toString(std::move(written));
  absl::StatusOr<PlanLibrary> library = PlanLibrary::open(path);
  ASSERT_TRUE(library.ok()) << library.status();
  ASSERT_EQ(library->plans().size(), 1u);
  EXPECT_EQ(library->plans()[0], plan);
  absl::StatusOr<Executor> aotExecutor =
      Executor::create(library->plans()[0], library->kernels(0), weights);
  ASSERT_TRUE(aotExecutor.ok()) << aotExecutor.status();
  checkRuns(*aotExecutor, block);
}

// Routed experts, as kf-lower-quant-dot lowers a MoE: the tokens' packed rows
// times the expert each slot routes to (up), then each slot's own packed row
// times its expert again (down, one activation row per slot). The runtime
// buckets the slots, gathers each expert's rows and claims (expert, block of
// 32 rows) items; every slot's rows equal kf::dot of its expert's rows with
// its activations, bit for bit, on 1 to 3 threads, for routings with few
// and many slots per expert (every slot of 17 tokens on one expert).
constexpr int64_t kExperts = 6, kSlots = 2, kUp = 96, kDown = 64, kK = 256;

std::string expertGraph(const codegen::MatmulKernelSpec &up,
                        const codegen::MatmulKernelSpec &down,
                        llvm::StringRef isa) {
  auto kernel = [&](const codegen::MatmulKernelSpec &spec) {
    return llvm::formatv("#kf.kernel<isa = {0}, layout = mxfp4_r{1}, "
                         "max_cols = 8, threads = 2, cols = dynamic, "
                         "l2_rows = 32, l1_k = {2}>",
                         isa, spec.rows, spec.k)
        .str();
  };
  return llvm::formatv(R"mlir(
func.func @experts(%x: tensor<?x256xf32>, %ids: tensor<?x2xi32>,
                   %wu: !kf.qweight<mxfp4, [6, 96, 256]>,
                   %wd: !kf.qweight<mxfp4, [6, 64, 96]>) -> tensor<?x2x64xf32> {
  %xq = kf.quantize_activations @kernels::@kf_quantize_q8_0_k256(%x) : tensor<?x256xf32> -> tensor<?x384xi8>
  %u = kf.expert_qmatmul @kernels::@{0}(%xq, %ids, %wu) {kf.kernel = {2}}
      : tensor<?x384xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [6, 96, 256]> -> tensor<?x2x96xf32>
  %uq = kf.quantize_activations @kernels::@kf_quantize_q8_0_k96(%u) : tensor<?x2x96xf32> -> tensor<?x2x144xi8>
  %d = kf.expert_qmatmul @kernels::@{1}(%uq, %ids, %wd) {kf.kernel = {3}}
      : tensor<?x2x144xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [6, 64, 96]> -> tensor<?x2x64xf32>
  return %d : tensor<?x2x64xf32>
}
// Declared for the parser; the test builds them.
module @kernels {
  func.func private @kf_quantize_q8_0_k256(!llvm.ptr, i64, !llvm.ptr, i64)
  func.func private @kf_quantize_q8_0_k96(!llvm.ptr, i64, !llvm.ptr, i64)
  func.func private @{0}(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
  func.func private @{1}(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
}
)mlir",
                       up.getSymbolName(), down.getSymbolName(), kernel(up),
                       kernel(down))
      .str();
}

TEST(BuildPlanExperts, DispatchesExpertsBitForBit) {
  llvm::Expected<target::TargetInfo> host = target::lookupTarget("host");
  ASSERT_TRUE(static_cast<bool>(host));
  codegen::KernelIsa isa = codegen::KernelIsa::Scalar;
  for (codegen::KernelIsa candidate : target::getIsasByPreference())
    if (target::canRunIsa(*host, candidate) &&
        target::isaTakesFormat(candidate, Format::MXFP4)) {
      isa = candidate;
      break;
    }
  auto spec = [&](int64_t n, int64_t k) {
    codegen::MatmulKernelSpec s;
    s.format = Format::MXFP4;
    s.isa = isa;
    s.rows = target::getIsaRows(isa);
    s.k = k;
    s.n = n;
    s.roundToBf16 = true;
    s.l1K = k;
    s.l2Rows = 32;
    return s;
  };
  const codegen::MatmulKernelSpec up = spec(kUp, kK), down = spec(kDown, kUp);

  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parseGraph(context, expertGraph(up, down, target::getIsaName(isa)));
  ASSERT_TRUE(module);
  (*module)->setAttr(mlir::kf::KfDialect::kTargetAttrName,
                     mlir::kf::TargetAttr::get(&context, *host));
  auto kernels = module->lookupSymbol<mlir::ModuleOp>("kernels");
  for (mlir::Operation &op : llvm::make_early_inc_range(*kernels.getBody()))
    op.erase();
  for (const codegen::MatmulKernelSpec &s : {up, down})
    ASSERT_TRUE(
        static_cast<bool>(codegen::buildMatmulKernel(kernels, s, *host)));
  for (int64_t k : {kK, kUp})
    ASSERT_TRUE(static_cast<bool>(codegen::buildQuantizeKernel(
        kernels, codegen::QuantizeKernelSpec{k}, *host)));
  mlir::PassManager pm(&context);
  mlir::kf::KfBuildPlanOptions build;
  build.maxRows = 17;
  pm.addPass(mlir::kf::createKfBuildPlan(build));
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));

  auto planOp = *module->getOps<mlir::kf_plan::PlanOp>().begin();
  Plan plan = mlir::kf_plan::getRuntimePlan(planOp);
  ASSERT_EQ(plan.steps.size(), 4u);
  EXPECT_EQ(plan.steps[1].kind, StepKind::Experts);
  EXPECT_FALSE(plan.steps[1].experts.rowPerSlot);
  EXPECT_TRUE(plan.steps[3].experts.rowPerSlot);
  EXPECT_EQ(plan.steps[3].group, 32);

  llvm::Expected<codegen::JitKernelModule> jit =
      codegen::jitKernelModule(kernels, *host);
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
  std::vector<kf_step_fn> fns = lookupKernels(*jit, plan);
  ASSERT_EQ(fns.size(), plan.kernels.size());

  const std::vector<uint8_t> wu =
      quantized(Format::MXFP4, gaussian(kExperts * kUp * kK, 5, 0.05f));
  const std::vector<uint8_t> wd =
      quantized(Format::MXFP4, gaussian(kExperts * kDown * kUp, 6, 0.05f));
  std::vector<std::vector<uint8_t>> packed = {
      *packExpertWeights(*plan.weights[0].layout, wu, kExperts, kUp, kK),
      *packExpertWeights(*plan.weights[1].layout, wd, kExperts, kDown, kUp)};
  absl::StatusOr<Executor> executor =
      Executor::create(plan, fns,
                       {std::span<const uint8_t>(packed[0]),
                        std::span<const uint8_t>(packed[1])});
  ASSERT_TRUE(executor.ok()) << executor.status();

  const int64_t upRow = *rowBytes(Format::MXFP4, kK);
  const int64_t downRow = *rowBytes(Format::MXFP4, kUp);
  std::mt19937 rng(7);
  for (bool crowded : {false, true})
    for (int64_t m : {int64_t{1}, int64_t{5}, int64_t{17}}) {
      std::vector<float> x = gaussian(m * kK, 8 + m, 1.0f);
      std::vector<int32_t> ids(m * kSlots);
      for (int64_t t = 0; t < m; ++t) {
        // Two distinct experts per token, or every token's first slot on
        // expert 4.
        int32_t first = crowded ? 4 : static_cast<int32_t>(rng() % kExperts);
        ids[t * kSlots] = first;
        ids[t * kSlots + 1] = (first + 1 + rng() % (kExperts - 1)) % kExperts;
      }
      std::vector<float> want(m * kSlots * kDown);
      for (int64_t t = 0; t < m; ++t)
        for (int64_t j = 0; j < kSlots; ++j) {
          int64_t e = ids[t * kSlots + j];
          std::vector<float> u =
              linear(Format::MXFP4,
                     std::span(wu).subspan(e * kUp * upRow, kUp * upRow), kUp,
                     std::span(x).subspan(t * kK, kK));
          std::vector<float> d = linear(
              Format::MXFP4,
              std::span(wd).subspan(e * kDown * downRow, kDown * downRow),
              kDown, u);
          std::copy(d.begin(), d.end(),
                    want.begin() + (t * kSlots + j) * kDown);
        }
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        std::vector<float> in = x, out(m * kSlots * kDown, -1.0f);
        std::vector<int32_t> route = ids;
        std::vector<std::span<uint8_t>> buffers = {
            {reinterpret_cast<uint8_t *>(in.data()), in.size() * 4},
            {reinterpret_cast<uint8_t *>(route.data()), route.size() * 4},
            {reinterpret_cast<uint8_t *>(out.data()), out.size() * 4}};
        absl::Status s = executor->run(pool, m, buffers);
        ASSERT_TRUE(s.ok()) << s;
        ASSERT_EQ(out, want) << m << " tokens, " << threads << " threads"
                             << (crowded ? ", crowded" : "");
      }
    }

  // An id outside the stack is refused, naming the step and the slot.
  ThreadPool pool(2);
  std::vector<float> in(kK, 0.0f), out(kSlots * kDown);
  std::vector<int32_t> route = {0, kExperts};
  std::vector<std::span<uint8_t>> buffers = {
      {reinterpret_cast<uint8_t *>(in.data()), in.size() * 4},
      {reinterpret_cast<uint8_t *>(route.data()), route.size() * 4},
      {reinterpret_cast<uint8_t *>(out.data()), out.size() * 4}};
  EXPECT_THAT(std::string(executor->run(pool, 1, buffers).message()),
              testing::HasSubstr("slot 1 routes to expert 6, outside [0, 6)"));
}

// A model's ends through a plan: tokens to their embeddings (the Q8_0 table
// read as stored), the output norm and head, and the argmax of each row of
// logits, bit for bit against the golden on 1 to 3 threads; an id outside
// the vocabulary embeds as zeros rather than reading out of the table.
constexpr const char *kModelEnds = R"mlir(
func.func @head(%tok: tensor<?xi32>, %emb: !kf.qweight<q8_0, [64, 256]>,
                %g: !kf.qweight<f32, [256]>, %out: !kf.qweight<q8_0, [64, 256]>)
    -> tensor<?xi32> {
  %x = kf.embed %tok, %emb : tensor<?xi32>, !kf.qweight<q8_0, [64, 256]> -> tensor<?x256xf32>
  %h = kf.rms_norm %x, %g eps(1.0e-06) : tensor<?x256xf32>, !kf.qweight<f32, [256]>
  %l = kf.linear %h, %out : tensor<?x256xf32>, !kf.qweight<q8_0, [64, 256]> -> tensor<?x64xf32>
  %a = kf.argmax %l : tensor<?x64xf32> -> tensor<?xi32>
  return %a : tensor<?xi32>
}
)mlir";

TEST(BuildPlanHead, EmbedsNormsAndPicksBitForBit) {
  constexpr int64_t kVocab = 64, kDim = 256;
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::OwningOpRef<mlir::ModuleOp> module = parseGraph(context, kModelEnds);
  ASSERT_TRUE(module);
  ASSERT_TRUE(compileToPlan(*module, 17));
  auto planOp = *module->getOps<mlir::kf_plan::PlanOp>().begin();
  Plan plan = mlir::kf_plan::getRuntimePlan(planOp);
  // The table is read as stored, the head packed.
  ASSERT_EQ(plan.weights.size(), 3u);
  EXPECT_FALSE(plan.weights[0].layout);
  EXPECT_TRUE(plan.weights[2].layout);

  llvm::Expected<target::TargetInfo> host = target::lookupTarget("host");
  ASSERT_TRUE(static_cast<bool>(host));
  llvm::Expected<codegen::JitKernelModule> jit = codegen::jitKernelModule(
      module->lookupSymbol<mlir::ModuleOp>("kernels"), *host);
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
  std::vector<kf_step_fn> kernels = lookupKernels(*jit, plan);
  ASSERT_EQ(kernels.size(), plan.kernels.size());

  const std::vector<uint8_t> table =
      quantized(Format::Q8_0, gaussian(kVocab * kDim, 11, 1.0f));
  const std::vector<float> g = gaussian(kDim, 12, 1.0f);
  const std::vector<uint8_t> head =
      quantized(Format::Q8_0, gaussian(kVocab * kDim, 13, 0.05f));
  const std::vector<uint8_t> packedHead =
      *packWeights(*plan.weights[2].layout, head, kVocab, kDim);
  absl::StatusOr<Executor> executor = Executor::create(
      plan, kernels,
      {std::span<const uint8_t>(table),
       std::span(reinterpret_cast<const uint8_t *>(g.data()), g.size() * 4),
       std::span<const uint8_t>(packedHead)});
  ASSERT_TRUE(executor.ok()) << executor.status();

  std::vector<float> embeddings(kVocab * kDim);
  ASSERT_TRUE(dequantize(Format::Q8_0, table, embeddings).ok());
  std::mt19937 rng(14);
  for (int64_t m : {int64_t{1}, int64_t{9}, int64_t{17}}) {
    std::vector<int32_t> tokens(m);
    for (int32_t &t : tokens)
      t = static_cast<int32_t>(rng() % kVocab);
    if (m == 17)
      tokens[3] = kVocab; // outside: embeds as zeros
    std::vector<int32_t> want(m);
    for (int64_t t = 0; t < m; ++t) {
      std::vector<float> x(kDim, 0.0f), h(kDim);
      if (tokens[t] < kVocab)
        for (int64_t d = 0; d < kDim; ++d)
          x[d] = roundBf16(embeddings[tokens[t] * kDim + d]);
      reference::rmsNorm(x, g, 1e-6f, h);
      std::vector<float> logits = linear(Format::Q8_0, head, kVocab, h);
      want[t] = static_cast<int32_t>(
          std::max_element(logits.begin(), logits.end()) - logits.begin());
    }
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      std::vector<int32_t> in = tokens, got(m, -1);
      std::vector<std::span<uint8_t>> buffers = {
          {reinterpret_cast<uint8_t *>(in.data()), in.size() * 4},
          {reinterpret_cast<uint8_t *>(got.data()), got.size() * 4}};
      ASSERT_TRUE(executor->run(pool, m, buffers).ok());
      ASSERT_EQ(got, want) << m << " tokens, " << threads << " threads";
    }
  }
}

} // namespace
} // namespace kf
