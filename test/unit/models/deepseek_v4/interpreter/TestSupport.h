// Shared by the interpreter's tests: an MLIR context with the graph's
// dialects, parsing, random values and a tiny model file in memory.
#ifndef KF_TEST_UNIT_INTERPRETER_TESTSUPPORT_H
#define KF_TEST_UNIT_INTERPRETER_TESTSUPPORT_H

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kf/Dialect/KfDialect.h"
#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/interpreter/interpreter.h"
#include "kf/deepseek_v4/presets.h"
#include "kf/deepseek_v4/reference/model.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/weights.h"
#include "kf/deepseek_v4/synthetic.h"
#include "kf/deepseek_v4/tensor_formats.h"
#include "kf/deepseek_v4/tensors.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/gguf_writer.h"
#include "kf/runtime/quant.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

namespace kf::deepseek_v4::interpreter::test {

inline std::unique_ptr<mlir::MLIRContext> makeContext() {
  auto context = std::make_unique<mlir::MLIRContext>();
  context
      ->loadDialect<mlir::kf::KfDialect, mlir::func::FuncDialect,
                    mlir::tensor::TensorDialect, mlir::arith::ArithDialect>();
  return context;
}

/// Parses and verifies `source`; a null module (and a test failure) if
/// either fails.
inline mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &context,
                                               std::string_view source) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          llvm::StringRef(source.data(), source.size()), &context);
  EXPECT_TRUE(module) << "does not parse:\n" << source;
  if (module && mlir::failed(mlir::verify(*module))) {
    ADD_FAILURE() << "does not verify:\n" << source;
    return nullptr;
  }
  return module;
}

/// N(0, scale²) values rounded to bf16, as activations are.
inline std::vector<float> randomValues(size_t n, uint32_t seed,
                                       float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(n);
  for (float &v : values)
    v = reference::roundBf16(normal(rng));
  return values;
}

/// The interpreter over `module` with in-memory weights; fails the test if
/// binding fails.
inline std::unique_ptr<Interpreter> makeInterpreter(mlir::ModuleOp module,
                                                    InMemoryWeights weights) {
  absl::StatusOr<Interpreter> interpreter =
      Interpreter::create(module, std::move(weights));
  EXPECT_TRUE(interpreter.ok()) << interpreter.status();
  if (!interpreter.ok())
    return nullptr;
  return std::make_unique<Interpreter>(*std::move(interpreter));
}

/// The tiny preset itself (docs/models/deepseek_v4_model.md §9: ratios
/// [0, 0, 4, 128, 4, 128, 4], window 16, the deepseek-coder vocabulary's
/// 32256 tokens): the model the graph must reproduce. Its full vocabulary
/// costs the golden test about 1.5 s over a 2048-token one.
inline Config tinyConfig() { return preset("tiny")->config; }

/// A model file in memory as kf-gguf synth writes it (with `margins`): the
/// default recipe's
/// formats (q8_0 matrices, mxfp4 routed experts, f32 for the rest, so that
/// binding decodes block formats) and synth's values, except that norms are
/// 1 + N(0, 0.1) rather than ones, so that a norm applied with the wrong
/// weight shows.
struct TinyModel {
  Config config;
  std::vector<Format> formats; // of tensorSpecs(config), in order
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<reference::Weights> weights;
};

inline std::unique_ptr<TinyModel>
makeTinyModel(uint64_t seed, Margins margins = Margins::Natural) {
  auto model = std::make_unique<TinyModel>();
  model->config = tinyConfig();
  const Config &config = model->config;
  gguf::Writer writer;
  for (gguf::KeyValue &kv : config.ggufMetadata())
    writer.addMetadata(std::move(kv.key), std::move(kv.value));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::vector<TensorSpec> specs = tensorSpecs(config);
  absl::StatusOr<std::vector<Format>> formats =
      tensorFormats(specs, std::nullopt, nullptr);
  EXPECT_TRUE(formats.ok()) << formats.status();
  if (!formats.ok())
    return nullptr;
  model->formats = *std::move(formats);
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec &spec = specs[i];
    Format format = model->formats[i];
    TensorDraw draw(spec, config, seed, margins);
    size_t cols = static_cast<size_t>(spec.shape[0]);
    size_t rowBytes = *kf::rowBytes(format, spec.shape[0]);
    std::vector<uint8_t> data(rowBytes * static_cast<size_t>(spec.rows()));
    std::vector<float> values(cols);
    std::vector<int32_t> ids(cols);
    for (int64_t r = 0; r < spec.rows(); ++r) {
      std::span<uint8_t> target(data.data() + r * rowBytes, rowBytes);
      if (format == Format::I32) {
        draw.experts(r, ids);
        std::memcpy(target.data(), ids.data(), rowBytes);
        continue;
      }
      draw.row(r, values);
      if (spec.kind == TensorKind::Norm)
        for (float &v : values)
          v = 1.0f + normal(rng);
      absl::Status encoded = quantize(format, values, target);
      EXPECT_TRUE(encoded.ok()) << spec.name << ": " << encoded;
    }
    writer.addTensor(spec.name, format, spec.shape, std::move(data));
  }
  absl::StatusOr<std::vector<uint8_t>> bytes = writer.serialize("tiny.gguf");
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  if (!bytes.ok())
    return nullptr;
  model->bytes = *std::move(bytes);
  absl::StatusOr<gguf::File> file =
      gguf::File::parse(model->bytes, "tiny.gguf");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok())
    return nullptr;
  model->file = std::make_unique<gguf::File>(*std::move(file));
  absl::StatusOr<reference::Weights> weights =
      reference::Weights::fromGguf(config, *model->file);
  EXPECT_TRUE(weights.ok()) << weights.status();
  if (!weights.ok())
    return nullptr;
  model->weights = std::make_unique<reference::Weights>(*std::move(weights));
  return model;
}

/// A prefill of `prefill` random tokens of the vocabulary, then `decode`
/// steps of one token each, at positions 0, 1, ...; the same for the same
/// seed. Step 0 is the prefill, step s > 0 the decode at prefill + s - 1.
class TokenRun {
public:
  /// `prefill` tokens as prefill calls of at most `chunk` tokens each (all
  /// of them in one by default), then `decode` single-token steps.
  TokenRun(const Config &config, size_t prefill, size_t decode, uint32_t seed,
           size_t chunk = 0)
      : prefill(prefill), chunk(chunk ? chunk : prefill),
        chunks((prefill + this->chunk - 1) / this->chunk),
        tokens(prefill + decode), positions(prefill + decode) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int32_t> draw(
        0, static_cast<int32_t>(config.nVocab) - 1);
    for (int32_t &t : tokens)
      t = draw(rng);
    for (size_t t = 0; t < positions.size(); ++t)
      positions[t] = static_cast<int64_t>(t);
  }

  size_t steps() const { return tokens.size() - prefill + chunks; }
  bool isPrefill(size_t step) const { return step < chunks; }
  /// The last prefill call: the one whose logits are the prompt's.
  bool isLastPrefill(size_t step) const { return step + 1 == chunks; }
  /// The interpreter's function for the step: "prefill" or "decode".
  const char *function(size_t step) const {
    return isPrefill(step) ? "prefill" : "decode";
  }
  std::span<const int32_t> stepTokens(size_t step) const {
    return std::span<const int32_t>(tokens).subspan(first(step), count(step));
  }
  std::span<const int64_t> stepPositions(size_t step) const {
    return std::span<const int64_t>(positions).subspan(first(step),
                                                       count(step));
  }
  /// The whole prompt, every prefill call's tokens.
  std::span<const int32_t> promptTokens() const {
    return std::span<const int32_t>(tokens).first(prefill);
  }
  /// "prefill at position P" or "decode at position P", for messages.
  std::string describe(size_t step) const {
    return (isPrefill(step) ? "prefill" : "decode") +
           std::string(" at position ") + std::to_string(first(step));
  }
  /// The reference forward's result for the step, `reference` having run
  /// the steps before (a prefill in one call: the reference has no other).
  reference::ForwardResult runReference(reference::Model &reference,
                                        size_t step) const {
    return isPrefill(step) ? reference.prefill(stepTokens(step))
                           : reference.decode(tokens[first(step)]);
  }

private:
  size_t first(size_t step) const {
    return isPrefill(step) ? step * chunk : prefill + step - chunks;
  }
  size_t count(size_t step) const {
    return isPrefill(step) ? std::min(chunk, prefill - first(step)) : 1;
  }

  size_t prefill, chunk, chunks;
  std::vector<int32_t> tokens;
  std::vector<int64_t> positions;
};

/// `kf.weight` declarations of every tensor of `file`, by name, with its
/// format and its shape in the graph's order (ggml's reversed).
inline std::string weightDeclarations(const gguf::File &file) {
  std::string text;
  for (const gguf::TensorInfo &t : file.tensors()) {
    text += "  kf.weight @" + t.name + " : !kf.qweight<" +
            std::string(formatInfo(t.format).name) + ", [";
    for (size_t d = t.shape.size(); d-- > 0;)
      text += std::to_string(t.shape[d]) + (d ? ", " : "");
    text += "]>\n";
  }
  return text;
}

/// The graph's type of the weight `name` of `file`.
inline std::string weightType(const gguf::File &file, std::string_view name) {
  const gguf::TensorInfo *t = file.findTensor(name);
  EXPECT_TRUE(t) << name;
  if (!t)
    return "";
  std::string text =
      "!kf.qweight<" + std::string(formatInfo(t->format).name) + ", [";
  for (size_t d = t->shape.size(); d-- > 0;)
    text += std::to_string(t->shape[d]) + (d ? ", " : "");
  return text + "]>";
}

} // namespace kf::deepseek_v4::interpreter::test

#endif // KF_TEST_UNIT_INTERPRETER_TESTSUPPORT_H
