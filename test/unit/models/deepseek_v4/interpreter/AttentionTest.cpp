// One attention sublayer written as docs/graph.md spells it (caches, the
// compressors, the index ops and kf.sparse_attention) gives, run by the
// interpreter, exactly what reference::AttentionLayer gives: for each kind
// of layer (window only, CSA, HCA), through a prefill and the decode steps
// after it, with the quantization simulations and without.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "kf/deepseek_v4/reference/attention.h"
#include "kf/deepseek_v4/reference/attention_layer.h"

namespace kf::deepseek_v4::interpreter::test {
namespace {

/// A float literal that parses back to `value` (shortest round trip, with
/// the decimal point MLIR's float literals need).
std::string literal(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  if (text.find_first_of(".e") == std::string::npos)
    return text + ".0";
  if (text.find('.') == std::string::npos)
    text.insert(text.find('e'), ".0");
  return text;
}

std::string literal(float value) { return literal(static_cast<double>(value)); }

/// A #kf.rope in the ops' own (stripped) spelling: the full
/// `#kf.rope<...>` right before an op's `:` would take the types as its own.
std::string ropeAttr(const reference::RopeConfig &rope) {
  std::string text = "<dim = " + std::to_string(rope.ropeDim) +
                     ", base = " + literal(rope.base);
  if (rope.yarn)
    text += ", yarn_factor = " + literal(rope.yarnFactor) +
            ", beta_fast = " + literal(rope.betaFast) +
            ", beta_slow = " + literal(rope.betaSlow) +
            ", original_context = " +
            std::to_string(static_cast<int64_t>(rope.originalLen));
  return text + ">";
}

std::string f32(std::initializer_list<std::string> dims) {
  std::string text = "tensor<";
  for (const std::string &d : dims)
    text += d + "x";
  return text + "f32>";
}

/// The text of one function's body, op by op.
class Body {
public:
  explicit Body(const gguf::File &file) : file(file) {}

  /// `kf.get_weight` of the tensor `name`; its value and type.
  std::pair<std::string, std::string> weight(const std::string &name) {
    std::string value = fresh(), type = weightType(file, name);
    line(value + " = kf.get_weight @" + name + " : " + type);
    return {value, type};
  }
  std::string fresh() { return "%v" + std::to_string(next++); }
  void line(const std::string &text) { text_ += "    " + text + "\n"; }
  const std::string &text() const { return text_; }

private:
  const gguf::File &file;
  std::string text_;
  int next = 0;
};

/// The attention sublayer of `layer` as a function @prefill or @decode of
/// the normed block input x [T, D] and the positions, returning [T, D].
std::string attentionFunction(const Config &c, uint32_t layer, bool decode,
                              bool simulate, const gguf::File &file) {
  std::string D = std::to_string(c.nEmbd), H = std::to_string(c.nHead),
              Dh = std::to_string(c.headDim), Rq = std::to_string(c.qLoraRank),
              W = std::to_string(c.window),
              hDh = std::to_string(c.nHead * c.headDim),
              gRo = std::to_string(c.oGroups * c.oLoraRank),
              Hi = std::to_string(c.indexerHeads),
              Di = std::to_string(c.indexerHeadDim),
              hiDi = std::to_string(c.indexerHeads * c.indexerHeadDim);
  AttentionKind kind = c.attention(layer);
  uint32_t ratio = c.compressRatios[layer];
  std::string blk = "blk." + std::to_string(layer) + ".";
  std::string rope = ropeAttr(reference::layerRope(c, layer));
  std::string eps = "eps(" + literal(c.normEps) + ")";
  std::string ring =
      "!kf.window_cache<rows = " + W + ", dim = " + Dh + ", element = bf16>";
  std::string compressed =
      "!kf.compressed_cache<ratio = " + std::to_string(ratio) +
      ", dim = " + Dh + ", overlap = " + (ratio == 4 ? "true" : "false") +
      ", element = bf16>";
  std::string indexer = "!kf.compressed_cache<ratio = 4, dim = " + Di +
                        ", overlap = true, element = bf16>";
  std::string xT = f32({"?", D}), posT = "tensor<?xi64>";

  Body b(file);
  b.line("%kvc = kf.get_cache @" + blk + "kv : " + ring);
  if (kind != AttentionKind::Window)
    b.line("%cc = kf.get_cache @" + blk + "compressor : " + compressed);
  if (kind == AttentionKind::Csa)
    b.line("%ic = kf.get_cache @" + blk + "indexer : " + indexer);
  if (!decode) {
    b.line("kf.cache_reset %kvc at %pos : " + ring + ", " + posT);
    if (kind != AttentionKind::Window)
      b.line("kf.cache_reset %cc at %pos : " + compressed + ", " + posT);
    if (kind == AttentionKind::Csa)
      b.line("kf.cache_reset %ic at %pos : " + indexer + ", " + posT);
  }
  b.line("%c0 = arith.constant 0 : index");
  b.line("%T = tensor.dim %x, %c0 : " + xT);
  // An fp8-simulated copy of an activation when simulating.
  auto sim8 = [&](const std::string &v, const std::string &type,
                  const std::string &extra = "") {
    if (!simulate)
      return v;
    std::string out = b.fresh();
    b.line(out + " = kf.fp8_sim " + v + " " + extra + " : " + type);
    return out;
  };
  auto linear = [&](const std::string &x, const std::string &xType,
                    const std::string &name, const std::string &outType) {
    auto [w, wType] = b.weight(name);
    std::string out = b.fresh();
    b.line(out + " = kf.linear " + x + ", " + w + " : " + xType + ", " + wType +
           " -> " + outType);
    return out;
  };
  auto norm = [&](const std::string &x, const std::string &type,
                  const std::string &name) {
    auto [w, wType] = b.weight(name);
    std::string out = b.fresh();
    b.line(out + " = kf.rms_norm " + x + ", " + w + " " + eps + " : " + type +
           ", " + wType);
    return out;
  };

  // Query.
  std::string x8 = sim8("%x", xT, "block(128)");
  std::string qrT = f32({"?", Rq});
  std::string qr = norm(linear(x8, xT, blk + "attn_q_a.weight", qrT), qrT,
                        blk + "attn_q_a_norm.weight");
  std::string qr8 = sim8(qr, qrT, "block(128)");
  std::string qb = linear(qr8, qrT, blk + "attn_q_b.weight", f32({"?", hDh}));
  std::string qT = f32({"?", H, Dh});
  std::string q3 = b.fresh();
  b.line(q3 + " = tensor.expand_shape " + qb +
         " [[0], [1, 2]] output_shape [%T, " + H + ", " + Dh +
         "] : " + f32({"?", hDh}) + " into " + qT);
  std::string qs = b.fresh();
  b.line(qs + " = kf.rms_norm " + q3 + " " + eps + " compute(bf16) : " + qT);
  std::string q = b.fresh();
  b.line(q + " = kf.rope " + qs + ", %pos, " + rope + " : " + qT + ", " + posT);

  // KV.
  std::string kvT = f32({"?", Dh});
  std::string kvn = norm(linear(x8, xT, blk + "attn_kv.weight", kvT), kvT,
                         blk + "attn_kv_a_norm.weight");
  std::string kvr = b.fresh();
  b.line(kvr + " = kf.rope " + kvn + ", %pos, " + rope + " : " + kvT + ", " +
         posT);
  std::string kv =
      sim8(kvr, kvT,
           "block(64) leading(" + std::to_string(c.headDim - c.ropeDim) + ")");
  b.line("kf.cache_append %kvc, " + kv + ", %pos : " + ring + ", " + kvT +
         ", " + posT);
  std::string bank = kv, bankT = kvT;
  if (decode) {
    bank = b.fresh();
    bankT = f32({W, Dh});
    b.line(bank + " = kf.cache_read %kvc : " + ring + " -> " + bankT);
  }
  std::string wiT = "tensor<?x" + W + "xi32>";
  b.line("%wi = kf.window_indices %pos window(" + W + ")" +
         (decode ? " ring(" + W + ")" : "") + " : " + posT + " -> " + wiT);

  // Compressors.
  // The graph's compressor: its projections by two fp32 linears, then
  // kf.compress pools them.
  auto compress = [&](const std::string &cache, const std::string &cacheT,
                      const std::string &prefix, const std::string &post,
                      int64_t width) {
    std::string pT = f32({"?", std::to_string(width)});
    std::string projections[2];
    for (int i = 0; i < 2; ++i) {
      auto [w, wT] =
          b.weight(blk + prefix + (i == 0 ? "_kv" : "_gate") + ".weight");
      projections[i] = b.fresh();
      b.line(projections[i] + " = kf.linear %x, " + w +
             " precision(f32) : " + xT + ", " + wT + " -> " + pT);
    }
    auto [aw, awT] = b.weight(blk + prefix + "_ape.weight");
    auto [nw, nwT] = b.weight(blk + prefix + "_norm.weight");
    b.line("kf.compress " + projections[0] + ", " + projections[1] +
           ", %pos, " + cache + ", " + aw + ", " + nw + ", " + rope + " post(" +
           post + ") " + eps + " : " + pT + ", " + pT + ", " + posT + ", " +
           cacheT + ", " + awT + ", " + nwT);
  };
  std::string entries, entryIndices;
  std::string eiT = "tensor<?x?xi32>";
  if (kind == AttentionKind::Csa)
    compress("%ic", indexer, "indexer_compressor",
             simulate ? "hadamard_fp4" : "none", 2 * c.indexerHeadDim);
  if (kind != AttentionKind::Window) {
    compress("%cc", compressed, "attn_compressor", simulate ? "fp8" : "none",
             (ratio == 4 ? 2 : 1) * c.headDim);
    entries = b.fresh();
    b.line(entries + " = kf.cache_read %cc : " + compressed + " -> " + kvT);
  }
  if (kind == AttentionKind::Csa) {
    std::string iqT = f32({"?", Hi, Di});
    std::string iqb =
        linear(qr8, qrT, blk + "indexer.attn_q_b.weight", f32({"?", hiDi}));
    std::string iq3 = b.fresh();
    b.line(iq3 + " = tensor.expand_shape " + iqb +
           " [[0], [1, 2]] output_shape [%T, " + Hi + ", " + Di +
           "] : " + f32({"?", hiDi}) + " into " + iqT);
    std::string iq = b.fresh();
    b.line(iq + " = kf.rope " + iq3 + ", %pos, " + rope + " : " + iqT + ", " +
           posT);
    if (simulate) {
      std::string h = b.fresh(), s4 = b.fresh();
      b.line(h + " = kf.hadamard " + iq + " : " + iqT);
      b.line(s4 + " = kf.fp4_sim " + h + " block(32) : " + iqT);
      iq = s4;
    }
    std::string iw =
        linear("%x", xT, blk + "indexer.proj.weight", f32({"?", Hi}));
    std::string keys = b.fresh();
    b.line(keys + " = kf.cache_read %ic : " + indexer + " -> " +
           f32({"?", Di}));
    float scale = static_cast<float>(
        1.0 /
        std::sqrt(static_cast<double>(c.indexerHeadDim) * c.indexerHeads));
    std::string scores = b.fresh();
    b.line(scores + " = kf.indexer_scores " + iq + ", " + iw + ", " + keys +
           " scale(" + literal(scale) + ") : " + iqT + ", " + f32({"?", Hi}) +
           ", " + f32({"?", Di}) + " -> " + f32({"?", "?"}));
    entryIndices = b.fresh();
    b.line(entryIndices + " = kf.indexer_topk " + scores + ", %pos k(" +
           std::to_string(c.indexerTopK) + ") ratio(4) : " + f32({"?", "?"}) +
           ", " + posT + " -> " + eiT);
  } else if (kind == AttentionKind::Hca) {
    entryIndices = b.fresh();
    b.line(entryIndices + " = kf.visible_entries %pos, " + entries + " ratio(" +
           std::to_string(ratio) + ") : " + posT + ", " + kvT + " -> " + eiT);
  }

  // Attention and output.
  auto [sinks, sinksT] = b.weight(blk + "attn_sinks.weight");
  std::string o = b.fresh();
  float scale = reference::attentionScale(static_cast<int>(c.headDim));
  std::string entryPart =
      entries.empty() ? "" : ", " + entries + "[" + entryIndices + "]";
  std::string entryTypes = entries.empty() ? "" : ", " + kvT + ", " + eiT;
  b.line(o + " = kf.sparse_attention " + q + ", " + bank + "[%wi]" + entryPart +
         " sinks(" + sinks + ") scale(" + literal(scale) + ") : " + qT + ", " +
         sinksT + ", " + bankT + ", " + wiT + entryTypes + " -> " + qT);
  std::string od = b.fresh();
  b.line(od + " = kf.rope " + o + ", %pos, " + rope + " inverse : " + qT +
         ", " + posT);
  std::string oc = b.fresh();
  b.line(oc + " = tensor.collapse_shape " + od + " [[0], [1, 2]] : " + qT +
         " into " + f32({"?", hDh}));
  auto [wa, waT] = b.weight(blk + "attn_output_a.weight");
  std::string oa = b.fresh();
  b.line(oa + " = kf.grouped_linear " + oc + ", " + wa + " groups(" +
         std::to_string(c.oGroups) + ") : " + f32({"?", hDh}) + ", " + waT +
         " -> " + f32({"?", gRo}));
  std::string oa8 = sim8(oa, f32({"?", gRo}), "block(128)");
  std::string out =
      linear(oa8, f32({"?", gRo}), blk + "attn_output_b.weight", xT);
  b.line("return " + out + " : " + xT);

  return "  func.func @" + std::string(decode ? "decode" : "prefill") +
         "(%x: " + xT + ", %pos: " + posT + ") -> " + xT + " {\n" + b.text() +
         "  }\n";
}

std::string attentionModule(const Config &c, uint32_t layer, bool simulate,
                            const gguf::File &file) {
  std::string blk = "blk." + std::to_string(layer) + ".";
  std::string Dh = std::to_string(c.headDim);
  uint32_t ratio = c.compressRatios[layer];
  std::string text = "module {\n" + weightDeclarations(file);
  text += "  kf.cache @" + blk +
          "kv : !kf.window_cache<rows = " + std::to_string(c.window) +
          ", dim = " + Dh + ", element = bf16>\n";
  if (ratio != 0)
    text +=
        "  kf.cache @" + blk +
        "compressor : !kf.compressed_cache<ratio = " + std::to_string(ratio) +
        ", dim = " + Dh + ", overlap = " + (ratio == 4 ? "true" : "false") +
        ", element = bf16>\n";
  if (ratio == 4)
    text += "  kf.cache @" + blk +
            "indexer : !kf.compressed_cache<ratio = 4, dim = " +
            std::to_string(c.indexerHeadDim) +
            ", overlap = true, element = bf16>\n";
  text += attentionFunction(c, layer, false, simulate, file);
  text += attentionFunction(c, layer, true, simulate, file);
  return text + "}\n";
}

class Attention : public ::testing::TestWithParam<std::tuple<uint32_t, bool>> {
protected:
  static void SetUpTestSuite() { model = makeTinyModel(11).release(); }
  static void TearDownTestSuite() { delete model; }
  static TinyModel *model;
};

TinyModel *Attention::model = nullptr;

// 126 prefill tokens and 6 decode steps: the window ring wraps, decode
// completes ratio-4 blocks (at 127 and 131) and the first ratio-128 block
// (at 127), and the CSA indexer chooses 8 of up to 32 entries.
TEST_P(Attention, EqualsTheReferenceLayer) {
  auto [layer, simulate] = GetParam();
  ASSERT_TRUE(model);
  const Config &config = model->config;
  std::unique_ptr<mlir::MLIRContext> context = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parse(*context, attentionModule(config, layer, simulate, *model->file));
  ASSERT_TRUE(module);
  absl::StatusOr<Interpreter> interpreter =
      Interpreter::create(*module, *model->file);
  ASSERT_TRUE(interpreter.ok()) << interpreter.status();

  reference::AttentionLayer reference(
      config, model->weights->layer(layer), layer,
      reference::Options{.simulateQuantization = simulate});
  constexpr int64_t kPrefill = 126, kDecode = 6;
  size_t dim = config.nEmbd;
  std::vector<float> x = randomValues(kPrefill * dim, 100 + layer);
  std::vector<int64_t> positions(kPrefill);
  for (int64_t t = 0; t < kPrefill; ++t)
    positions[t] = t;
  absl::StatusOr<std::vector<Tensor>> out = interpreter->call(
      "prefill", {Tensor({kPrefill, static_cast<int64_t>(dim)}, x),
                  Tensor({kPrefill}, positions)});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> expected = reference.prefill(x);
  ASSERT_EQ(out->size(), 1u);
  std::vector<float> got((*out)[0].getFloats().begin(),
                         (*out)[0].getFloats().end());
  EXPECT_EQ(got, expected) << "prefill";

  for (int64_t pos = kPrefill; pos < kPrefill + kDecode; ++pos) {
    std::vector<float> x1 = randomValues(dim, 200 + pos);
    out =
        interpreter->call("decode", {Tensor({1, static_cast<int64_t>(dim)}, x1),
                                     Tensor({1}, std::vector<int64_t>{pos})});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> step((*out)[0].getFloats().begin(),
                            (*out)[0].getFloats().end());
    EXPECT_EQ(step, reference.decode(x1, pos)) << "decode at " << pos;
  }
}

std::string
layerName(const ::testing::TestParamInfo<std::tuple<uint32_t, bool>> &info) {
  static const char *kinds[] = {"Window", "Window1", "Csa", "Hca"};
  return std::string(kinds[std::get<0>(info.param)]) +
         (std::get<1>(info.param) ? "Simulated" : "Exact");
}

// Tiny's layers 0 (window only), 2 (CSA) and 3 (HCA).
INSTANTIATE_TEST_SUITE_P(Kinds, Attention,
                         ::testing::Combine(::testing::Values(0u, 2u, 3u),
                                            ::testing::Bool()),
                         layerName);

} // namespace
} // namespace kf::deepseek_v4::interpreter::test
