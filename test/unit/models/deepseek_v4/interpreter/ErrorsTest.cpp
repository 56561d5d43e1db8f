// Bad weights, bad run-time data and ops the interpreter does not run give
// one-line errors naming the op or the tensor, never a stopped program: the
// reference kernels stop on a broken precondition, so the interpreter must
// refuse such data before calling them.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "gmock/gmock.h"

namespace kf::deepseek_v4::interpreter::test {
namespace {

using ::testing::HasSubstr;

/// A one-line message holding `part`.
MATCHER_P(oneLineWith, part, "") {
  return arg.find('\n') == std::string::npos &&
         arg.find(part) != std::string::npos;
}

std::string messageOf(const absl::Status &status) {
  return std::string(status.message());
}

constexpr const char *kSequence = R"mlir(
module {
  kf.weight @e : !kf.qweight<f32, [10, 4]>
  func.func @prefill(%tokens: tensor<?xi32>, %positions: tensor<?xi64>) -> (tensor<?x4xf32>, tensor<?xi32>) {
    %e = kf.get_weight @e : !kf.qweight<f32, [10, 4]>
    %x = kf.embed %tokens, %e : tensor<?xi32>, !kf.qweight<f32, [10, 4]> -> tensor<?x4xf32>
    %a = kf.argmax %x : tensor<?x4xf32> -> tensor<?xi32>
    return %x, %a : tensor<?x4xf32>, tensor<?xi32>
  }
  func.func @decode(%tokens: tensor<1xi32>, %positions: tensor<1xi64>) -> (tensor<1x4xf32>, tensor<1xi32>) {
    %e = kf.get_weight @e : !kf.qweight<f32, [10, 4]>
    %x = kf.embed %tokens, %e : tensor<1xi32>, !kf.qweight<f32, [10, 4]> -> tensor<1x4xf32>
    %a = kf.argmax %x : tensor<1x4xf32> -> tensor<1xi32>
    return %x, %a : tensor<1x4xf32>, tensor<1xi32>
  }
}
)mlir";

class Sequence : public ::testing::Test {
protected:
  void SetUp() override {
    module = parse(*context, kSequence);
    ASSERT_TRUE(module);
    interpreter =
        makeInterpreter(*module, {.floats = {{"e", randomValues(40, 1)}}});
    ASSERT_TRUE(interpreter);
  }

  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<Interpreter> interpreter;
};

TEST_F(Sequence, RunsPrefillThenDecode) {
  std::vector<int32_t> tokens = {1, 2, 3};
  std::vector<int64_t> positions = {0, 1, 2};
  auto prefill = interpreter->run("prefill", tokens, positions);
  ASSERT_TRUE(prefill.ok()) << prefill.status();
  EXPECT_EQ(interpreter->getNextPosition(), 3);
  std::vector<int32_t> one = {4};
  std::vector<int64_t> at = {3};
  auto decode = interpreter->run("decode", one, at);
  ASSERT_TRUE(decode.ok()) << decode.status();
  EXPECT_EQ(interpreter->getNextPosition(), 4);
}

// A prefill continues a sequence in chunks, at its next position only.
TEST_F(Sequence, PrefillContinuesInChunks) {
  std::vector<int32_t> tokens = {1, 2, 3};
  std::vector<int64_t> first = {0, 1, 2}, second = {3, 4, 5}, gap = {9, 10, 11};
  ASSERT_TRUE(interpreter->run("prefill", tokens, first).ok());
  auto chunk = interpreter->run("prefill", tokens, second);
  ASSERT_TRUE(chunk.ok()) << chunk.status();
  EXPECT_EQ(interpreter->getNextPosition(), 6);
  EXPECT_THAT(
      messageOf(interpreter->run("prefill", tokens, gap).status()),
      oneLineWith(
          "starts a sequence at position 0 or continues it at 6, got 9"));
}

TEST_F(Sequence, RefusesBadRuns) {
  std::vector<int32_t> tokens = {1, 2, 3};
  std::vector<int64_t> one = {0};
  auto noSequence = interpreter->run(
      "decode", std::span<const int32_t>(tokens).first(1), one);
  EXPECT_THAT(messageOf(noSequence.status()),
              oneLineWith("no sequence to continue"));

  std::vector<int64_t> late = {1, 2, 3};
  EXPECT_THAT(messageOf(interpreter->run("prefill", tokens, late).status()),
              oneLineWith("start at 0"));
  std::vector<int64_t> gap = {0, 1, 3};
  EXPECT_THAT(messageOf(interpreter->run("prefill", tokens, gap).status()),
              oneLineWith("does not follow 1"));
  std::vector<int64_t> two = {0, 1};
  EXPECT_THAT(messageOf(interpreter->run("prefill", tokens, two).status()),
              oneLineWith("3 tokens and 2 positions"));
  EXPECT_THAT(messageOf(interpreter->run("missing", tokens, late).status()),
              oneLineWith("no function @missing"));

  std::vector<int64_t> positions = {0, 1, 2};
  ASSERT_TRUE(interpreter->run("prefill", tokens, positions).ok());
  std::vector<int64_t> wrong = {7};
  EXPECT_THAT(
      messageOf(
          interpreter
              ->run("decode", std::span<const int32_t>(tokens).first(1), wrong)
              .status()),
      oneLineWith("continues the sequence at position 3, got 7"));
  // @decode takes tensor<1xi32>: two tokens do not fit it.
  std::vector<int64_t> pair = {3, 4};
  EXPECT_THAT(
      messageOf(
          interpreter
              ->run("decode", std::span<const int32_t>(tokens).first(2), pair)
              .status()),
      oneLineWith("argument #0 is tensor<1xi32>"));
}

TEST_F(Sequence, RefusesTokensOutsideTheVocabulary) {
  std::vector<int32_t> tokens = {1, 10};
  std::vector<int64_t> positions = {0, 1};
  absl::Status status = interpreter->run("prefill", tokens, positions).status();
  EXPECT_THAT(messageOf(status), oneLineWith("interpreter: kf.embed"));
  EXPECT_THAT(messageOf(status),
              HasSubstr("token id 10 of token 1 is outside the vocabulary"));
  // The failed call ended the sequence.
  EXPECT_FALSE(interpreter->getNextPosition().has_value());
}

TEST(Errors, WeightsMustMatchTheirDeclarations) {
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(*context, kSequence);
  ASSERT_TRUE(module);
  auto missing = Interpreter::create(*module, InMemoryWeights{});
  EXPECT_THAT(messageOf(missing.status()),
              oneLineWith("interpreter: weight 'e': no fp32 tensor"));
  auto truncated =
      Interpreter::create(*module, {.floats = {{"e", std::vector<float>(39)}}});
  EXPECT_THAT(messageOf(truncated.status()),
              oneLineWith("weight 'e': has 39 values, the graph declares "
                          "!kf.qweight<f32, [10, 4]>"));

  std::vector<float> values(40, 1.0f);
  values[17] = std::numeric_limits<float>::infinity();
  auto infinite = Interpreter::create(*module, {.floats = {{"e", values}}});
  EXPECT_THAT(messageOf(infinite.status()),
              oneLineWith("weight 'e': has the non-finite value inf at "
                          "element 17"));

  // A file whose tensor has another format, then another shape.
  for (auto [format, shape] :
       {std::pair{Format::BF16, std::vector<int64_t>{4, 10}},
        std::pair{Format::F32, std::vector<int64_t>{10, 4}}}) {
    gguf::Writer writer;
    size_t bytes = *rowBytes(format, shape[0]) * shape[1];
    writer.addTensor("e", format, shape, std::vector<uint8_t>(bytes));
    absl::StatusOr<std::vector<uint8_t>> data = writer.serialize("m.gguf");
    ASSERT_TRUE(data.ok()) << data.status();
    absl::StatusOr<gguf::File> file = gguf::File::parse(*data, "m.gguf");
    ASSERT_TRUE(file.ok()) << file.status();
    auto bound = Interpreter::create(*module, *file);
    EXPECT_THAT(messageOf(bound.status()),
                oneLineWith("weight 'e': m.gguf stores it as " +
                            std::string(formatInfo(format).name) + " " +
                            gguf::shapeString(shape)));
  }
}

/// Runs @f of `source` on `arguments` and returns its error message.
std::string errorOf(std::string_view source, std::vector<Tensor> arguments,
                    InMemoryWeights weights = {}) {
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(*context, source);
  if (!module)
    return "does not parse";
  std::unique_ptr<Interpreter> interpreter =
      makeInterpreter(*module, std::move(weights));
  if (!interpreter)
    return "does not bind";
  absl::StatusOr<std::vector<Tensor>> results =
      interpreter->call("f", std::move(arguments));
  return results.ok() ? "no error" : messageOf(results.status());
}

TEST(Errors, UnsupportedOps) {
  EXPECT_THAT(errorOf(R"mlir(
module {
  func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = arith.addf %x, %x : tensor<2xf32>
    return %y : tensor<2xf32>
  }
}
)mlir",
                      {Tensor({2}, std::vector<float>{1, 2})}),
              oneLineWith("interpreter: unsupported op 'arith.addf'"));
}

// A lowered graph's kernel ops need kernels, and a kf.qmatmul needs the
// weight's file bytes to repack.
TEST(Errors, KernelOpsWithoutKernelsOrFileBytes) {
  constexpr const char *kQuantize = R"mlir(
module {
  func.func @f(%x: tensor<?x64xf32>) -> tensor<?x96xi8> {
    %xq = kf.quantize_activations @kernels::@kf_quantize_q8_0_k64(%x) : tensor<?x64xf32> -> tensor<?x96xi8> loc("blk.0.q_a")
    return %xq : tensor<?x96xi8>
  }
  module @kernels {
    func.func private @kf_quantize_q8_0_k64(!llvm.ptr, i64, !llvm.ptr, i64)
  }
}
)mlir";
  EXPECT_THAT(errorOf(kQuantize, {Tensor({1, 64}, randomValues(64, 2))}),
              oneLineWith("kf.quantize_activations at blk.0.q_a: calls a "
                          "compiled kernel, but no kernels were given"));

  constexpr const char *kMatmul = R"mlir(
module {
  kf.weight @w : !kf.qweight<q8_0, [16, 64]>
  func.func @f(%xq: tensor<?x96xi8>) -> tensor<?x16xf32> {
    %w = kf.get_weight @w : !kf.qweight<q8_0, [16, 64]>
    %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2>}
        : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
  module @kernels {
    func.func private @matmul(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
  }
}
)mlir";
  EXPECT_THAT(errorOf(kMatmul, {Tensor({1, 96}, std::vector<int8_t>(96))},
                      {.floats = {{"w", randomValues(16 * 64, 3)}}}),
              oneLineWith("interpreter: weight 'w': is read by a compiled "
                          "kernel, which needs its file bytes"));
}

TEST(Errors, DataTheReferenceWouldStopOn) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_THAT(errorOf(R"mlir(
module {
  func.func @f(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = kf.fp8_sim %x block(64) : tensor<?x64xf32> loc("blk.4.q_a")
    return %y : tensor<?x64xf32>
  }
}
)mlir",
                      {Tensor({1, 64}, std::vector<float>(64, inf))}),
              oneLineWith("interpreter: kf.fp8_sim at blk.4.q_a: row 0 has "
                          "the non-finite value inf at element 0"));

  std::vector<float> q(2 * 64, 0.5f), bank(4 * 64, 0.25f);
  EXPECT_THAT(errorOf(R"mlir(
module {
  kf.weight @s : !kf.qweight<f32, [2]>
  func.func @f(%q: tensor<?x2x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x3xi32>) -> tensor<?x2x64xf32> {
    %s = kf.get_weight @s : !kf.qweight<f32, [2]>
    %o = kf.sparse_attention %q, %kv[%wi] sinks(%s) scale(0.125)
        : tensor<?x2x64xf32>, !kf.qweight<f32, [2]>, tensor<?x64xf32>, tensor<?x3xi32> -> tensor<?x2x64xf32>
    return %o : tensor<?x2x64xf32>
  }
}
)mlir",
                      {Tensor({1, 2, 64}, q), Tensor({4, 64}, bank),
                       Tensor({1, 3}, std::vector<int32_t>{-1, 2, 4})},
                      {.floats = {{"s", {0.0f, 1.0f}}}}),
              oneLineWith("window index 4 of token 0 is outside [-1, 4)"));

  // A fresh bank holds the call's rows only.
  EXPECT_THAT(errorOf(R"mlir(
module {
  func.func @f(%pos: tensor<?xi64>) -> tensor<?x4xi32> {
    %w = kf.window_indices %pos window(4) : tensor<?xi64> -> tensor<?x4xi32>
    return %w : tensor<?x4xi32>
  }
}
)mlir",
                      {Tensor({2}, std::vector<int64_t>{5, 6})}),
              oneLineWith("precedes the call's first position 5"));

  // The causal entries of position 11 at ratio 4 are 3, of which 2 exist.
  EXPECT_THAT(errorOf(R"mlir(
module {
  func.func @f(%s: tensor<?x?xf32>, %pos: tensor<?xi64>) -> tensor<?x?xi32> {
    %i = kf.indexer_topk %s, %pos k(8) ratio(4) : tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xi32>
    return %i : tensor<?x?xi32>
  }
}
)mlir",
                      {Tensor({1, 2}, std::vector<float>{1, 2}),
                       Tensor({1}, std::vector<int64_t>{11})}),
              oneLineWith("sees 3 entries, but only 2 are scored"));

  // Shapes that the static types leave open are checked at run time.
  EXPECT_THAT(errorOf(R"mlir(
module {
  func.func @f(%x: tensor<?x2x8xf32>, %pos: tensor<?xi64>) -> tensor<?x2x8xf32> {
    %r = kf.rope %x, %pos, <dim = 8, base = 1.000000e+04> : tensor<?x2x8xf32>, tensor<?xi64>
    return %r : tensor<?x2x8xf32>
  }
}
)mlir",
                      {Tensor({2, 2, 8}, std::vector<float>(32)),
                       Tensor({3}, std::vector<int64_t>{0, 1, 2})}),
              oneLineWith("the number of positions is 3, expected 2"));
}

TEST(Errors, CompressorsFollowTheirSequence) {
  std::string source = R"mlir(
module {
  kf.weight @kv : !kf.qweight<f32, [16, 8]>
  kf.weight @gate : !kf.qweight<f32, [16, 8]>
  kf.weight @ape : !kf.qweight<f32, [4, 16]>
  kf.weight @norm : !kf.qweight<f32, [8]>
  kf.cache @c : !kf.compressed_cache<ratio = 4, dim = 8, overlap = true, element = bf16>
  func.func @f(%x: tensor<?x8xf32>, %pos: tensor<?xi64>) -> tensor<?x8xf32> {
    %c = kf.get_cache @c : !kf.compressed_cache<ratio = 4, dim = 8, overlap = true, element = bf16>
    %kv = kf.get_weight @kv : !kf.qweight<f32, [16, 8]>
    %gate = kf.get_weight @gate : !kf.qweight<f32, [16, 8]>
    %ape = kf.get_weight @ape : !kf.qweight<f32, [4, 16]>
    %norm = kf.get_weight @norm : !kf.qweight<f32, [8]>
    %v = kf.linear %x, %kv precision(f32) : tensor<?x8xf32>, !kf.qweight<f32, [16, 8]> -> tensor<?x16xf32>
    %g = kf.linear %x, %gate precision(f32) : tensor<?x8xf32>, !kf.qweight<f32, [16, 8]> -> tensor<?x16xf32>
    kf.compress %v, %g, %pos, %c, %ape, %norm, #kf.rope<dim = 4, base = 1.000000e+04> post(none) eps(1.0e-06)
        : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 8, overlap = true, element = bf16>,
          !kf.qweight<f32, [4, 16]>, !kf.qweight<f32, [8]>
    %e = kf.cache_read %c : !kf.compressed_cache<ratio = 4, dim = 8, overlap = true, element = bf16> -> tensor<?x8xf32>
    return %e : tensor<?x8xf32>
  }
}
)mlir";
  InMemoryWeights weights{.floats = {{"kv", randomValues(128, 1)},
                                     {"gate", randomValues(128, 2)},
                                     {"ape", randomValues(64, 3)},
                                     {"norm", randomValues(8, 4)}}};
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = parse(*context, source);
  ASSERT_TRUE(module);
  std::unique_ptr<Interpreter> interpreter =
      makeInterpreter(*module, std::move(weights));
  ASSERT_TRUE(interpreter);
  auto call = [&](std::vector<int64_t> positions) {
    int64_t n = static_cast<int64_t>(positions.size());
    return interpreter->call(
        "f", {Tensor({n, 8}, randomValues(static_cast<size_t>(n) * 8, 5)),
              Tensor({n}, std::move(positions))});
  };
  EXPECT_THAT(messageOf(call({2, 3}).status()),
              oneLineWith("cache @c has taken 0 tokens, so the next one is at "
                          "position 0, got 2"));
  auto first = call({0, 1, 2, 3, 4});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)[0].getDimSize(0), 1); // one complete block of 4
  EXPECT_THAT(messageOf(call({4}).status()), oneLineWith("got 4"));
  auto next = call({5, 6, 7});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ((*next)[0].getDimSize(0), 2);
}

} // namespace
} // namespace kf::deepseek_v4::interpreter::test
