#include "kf/deepseek_v4/builder/graph_builder.h"

#include <array>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "kf/Dialect/KfDialect.h"
#include "kf/deepseek_v4/linear_roles.h"
#include "kf/runtime/absl_compat.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

namespace kf::deepseek_v4 {

namespace {

namespace kfd = ::mlir::kf;
using ::mlir::Location;
using ::mlir::OpBuilder;
using ::mlir::RankedTensorType;
using ::mlir::Value;

constexpr int64_t kDynamic = ::mlir::ShapedType::kDynamic;

// The rope of a layer's attention (model §1, §2; bare § numbers in this file
// are sections of docs/models/deepseek_v4_model.md): plain on window-only
// layers, YaRN with the compressed base elsewhere, as the reference's
// layerRope.
kfd::RopeAttr layerRope(mlir::MLIRContext *context, const Config &c,
                        uint32_t layer) {
  auto f = [](double v) { return llvm::APFloat(v); };
  if (c.attention(layer) == AttentionKind::Window)
    return kfd::RopeAttr::get(context, c.ropeDim, f(c.ropeBase), f(0), f(0),
                              f(0), 0);
  return kfd::RopeAttr::get(context, c.ropeDim, f(c.compressRopeBase),
                            f(c.yarnFactor), f(c.yarnBetaFast),
                            f(c.yarnBetaSlow), c.yarnOriginalContext);
}

class GraphBuilder {
public:
  GraphBuilder(mlir::MLIRContext &context, const Config &config,
               const GraphOptions &options)
      : context_(context), c_(config), options_(options), b_(&context) {}

  mlir::OwningOpRef<mlir::ModuleOp> build(std::span<const Format> formats);

private:
  // Declarations.
  void declareWeights(std::span<const Format> formats);
  void declareCaches();

  // One function: @prefill (a sequence from position 0) or @decode.
  void buildFunction(bool decode);
  // HcPre of the layer's "attn" or "ffn" site.
  mlir::kf::HcPreOp hcPre(Value streams, std::string_view site);
  Value attention(Value streams);
  Value moe(Value streams);
  Value head(Value streams);

  // Locations "blk.L.step" inside layer L, "step" outside the layers.
  Location at(std::string_view step) {
    std::string name = layer_ < 0
                           ? std::string(step)
                           : absl::StrCat("blk.", layer_, ".", toAbsl(step));
    return mlir::NameLoc::get(b_.getStringAttr(name));
  }
  std::string layerName(std::string_view tensor) const {
    return absl::StrCat("blk.", layer_, ".", toAbsl(tensor), ".weight");
  }

  // Values.
  RankedTensorType f32(llvm::ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b_.getF32Type());
  }
  Value weight(const std::string &name, Location loc) {
    return kfd::GetWeightOp::create(
        b_, loc, weights_.at(name),
        mlir::FlatSymbolRefAttr::get(&context_, name));
  }
  Value layerWeight(std::string_view tensor, Location loc) {
    return weight(layerName(tensor), loc);
  }
  // Slots of a KV window ring: the window and a prefill call's rows after
  // it.
  int64_t ringRows() const { return int64_t{c_.window} + options_.maxRows - 1; }
  Value cache(std::string_view kind, Location loc) {
    std::string name = absl::StrCat("blk.", layer_, ".", toAbsl(kind));
    return kfd::GetCacheOp::create(
        b_, loc, caches_.at(name),
        mlir::FlatSymbolRefAttr::get(&context_, name));
  }
  // The activation side of a quantized linear: FP8SIM in blocks of 128.
  Value fp8Activation(Value x, Location loc) {
    if (!options_.simulate)
      return x;
    return kfd::Fp8SimOp::create(b_, loc, x.getType(), x,
                                 b_.getI64IntegerAttr(128),
                                 mlir::IntegerAttr());
  }
  Value linear(Value x, Value w, kfd::Precision precision, Location loc) {
    auto type = llvm::cast<kfd::QWeightType>(w.getType());
    auto input = llvm::cast<RankedTensorType>(x.getType());
    return kfd::LinearOp::create(
        b_, loc, f32({input.getDimSize(0), type.getRows()}), x, w,
        kfd::PrecisionAttr::get(&context_, precision));
  }
  // The result precision of a linear of `role`: the arithmetic its role has
  // in the official checkpoint (linear_roles.h), whatever the file stores.
  static kfd::Precision precision(LinearRole role) {
    return linearRole(role).arithmetic == LinearArithmetic::Fp32
               ? kfd::Precision::f32
               : kfd::Precision::bf16;
  }
  // A linear of `role`; Lin of §2 (FP8 activations, simulated) for
  // the roles whose checkpoint weight is FP8 or FP4.
  Value linear(LinearRole role, Value x, Value w, Location loc) {
    if (linearRole(role).arithmetic == LinearArithmetic::Quantized)
      x = fp8Activation(x, loc);
    return linear(x, w, precision(role), loc);
  }
  Value linear(LinearRole role, Value x, std::string_view tensor,
               Location loc) {
    return linear(role, x, layerWeight(tensor, loc), loc);
  }
  Value rmsNorm(Value x, Value w, kfd::Precision compute, Location loc) {
    return kfd::RmsNormOp::create(b_, loc, x.getType(), x, w,
                                  b_.getF32FloatAttr(c_.normEps),
                                  kfd::PrecisionAttr::get(&context_, compute));
  }
  // [T, heads·dim] -> [T, heads, dim].
  Value splitHeads(Value x, int64_t heads, int64_t dim, Location loc);
  // [T, heads, dim] -> [T, heads·dim].
  Value mergeHeads(Value x, Location loc);
  Value rope(Value x, bool inverse, Location loc) {
    return kfd::RopeOp::create(b_, loc, x.getType(), x, positions_, rope_,
                               inverse ? b_.getUnitAttr() : mlir::UnitAttr());
  }
  void compress(std::string_view cacheKind, std::string_view prefix,
                kfd::EntryPost post, Value xn, Location loc);

  mlir::MLIRContext &context_;
  const Config &c_;
  const GraphOptions &options_;
  OpBuilder b_;
  mlir::ModuleOp module_;
  llvm::StringMap<kfd::QWeightType> weights_;
  llvm::StringMap<mlir::Type> caches_;

  // The function being built.
  bool decode_ = false;
  int64_t tokensDim_ = kDynamic; // T: dynamic in prefill, 1 in decode
  Value tokens_, positions_;
  // What the function returns beyond the logits and the token: its layers'
  // probes (GraphOptions::probes), in order, and the run buffers' names
  // ("blk.L.streams").
  llvm::SmallVector<Value> probes_;
  llvm::SmallVector<std::string> probeNames_;
  void probe(Value value, std::string_view what) {
    if (options_.probes == GraphOptions::Probes::None)
      return;
    probes_.push_back(value);
    probeNames_.push_back(absl::StrCat("blk.", layer_, ".", toAbsl(what)));
  }
  int64_t layer_ = -1;
  kfd::RopeAttr rope_;
};

mlir::OwningOpRef<mlir::ModuleOp>
GraphBuilder::build(std::span<const Format> formats) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::NameLoc::get(b_.getStringAttr("model")),
                             llvm::StringRef(options_.name));
  module_ = *module;
  // What the rings were sized for: kf-build-plan takes no larger runs.
  module_->setAttr(kfd::KfDialect::kMaxRowsAttrName,
                   b_.getI64IntegerAttr(options_.maxRows));
  b_.setInsertionPointToEnd(module_.getBody());
  declareWeights(formats);
  declareCaches();
  buildFunction(/*decode=*/false);
  buildFunction(/*decode=*/true);
  return module;
}

void GraphBuilder::declareWeights(std::span<const Format> formats) {
  std::vector<TensorSpec> specs = tensorSpecs(c_);
  Location loc = mlir::NameLoc::get(b_.getStringAttr("weights"));
  for (size_t i = 0; i < specs.size(); ++i) {
    // ggml's shape lists the row length first; the type is row-major.
    llvm::SmallVector<int64_t> shape(specs[i].shape.rbegin(),
                                     specs[i].shape.rend());
    // The dialect's format enum carries the runtime's ids.
    auto type = kfd::QWeightType::get(
        &context_, static_cast<kfd::Format>(formats[i]), shape);
    weights_[specs[i].name] = type;
    kfd::WeightOp::create(b_, loc, b_.getStringAttr(specs[i].name),
                          mlir::TypeAttr::get(type));
  }
}

void GraphBuilder::declareCaches() {
  Location loc = mlir::NameLoc::get(b_.getStringAttr("caches"));
  mlir::Type bf16 = b_.getBF16Type();
  // Each cache names its layer's attention kind, which reports show
  // (kf-compile --emit=stats).
  mlir::StringAttr kind;
  auto declare = [&](std::string name, mlir::Type type) {
    caches_[name] = type;
    auto cache = kfd::CacheOp::create(b_, loc, b_.getStringAttr(name),
                                      mlir::TypeAttr::get(type));
    cache->setAttr(kfd::KfDialect::kLayerKindAttrName, kind);
  };
  for (uint32_t l = 0; l < c_.nLayer; ++l) {
    kind = b_.getStringAttr(attentionKindName(c_.attention(l)));
    declare(absl::StrCat("blk.", l, ".kv"),
            kfd::WindowCacheType::get(&context_, ringRows(), c_.headDim, bf16));
    int64_t ratio = c_.compressRatios[l];
    if (ratio == 0)
      continue;
    declare(absl::StrCat("blk.", l, ".compressor"),
            kfd::CompressedCacheType::get(&context_, ratio, c_.headDim,
                                          c_.compressorHalves(l) == 2, bf16));
    if (c_.attention(l) == AttentionKind::Csa)
      declare(absl::StrCat("blk.", l, ".indexer"),
              kfd::CompressedCacheType::get(&context_, ratio, c_.indexerHeadDim,
                                            true, bf16));
  }
}

Value GraphBuilder::splitHeads(Value x, int64_t heads, int64_t dim,
                               Location loc) {
  llvm::SmallVector<mlir::OpFoldResult> shape;
  if (tokensDim_ == kDynamic)
    shape.push_back(mlir::tensor::DimOp::create(b_, loc, x, 0).getResult());
  else
    shape.push_back(b_.getIndexAttr(tokensDim_));
  shape.push_back(b_.getIndexAttr(heads));
  shape.push_back(b_.getIndexAttr(dim));
  return mlir::tensor::ExpandShapeOp::create(
      b_, loc, f32({tokensDim_, heads, dim}), x,
      llvm::ArrayRef<mlir::ReassociationIndices>{{0}, {1, 2}}, shape);
}

Value GraphBuilder::mergeHeads(Value x, Location loc) {
  auto type = llvm::cast<RankedTensorType>(x.getType());
  return mlir::tensor::CollapseShapeOp::create(
      b_, loc, f32({tokensDim_, type.getDimSize(1) * type.getDimSize(2)}), x,
      llvm::ArrayRef<mlir::ReassociationIndices>{{0}, {1, 2}});
}

void GraphBuilder::compress(std::string_view cacheKind, std::string_view prefix,
                            kfd::EntryPost post, Value xn, Location loc) {
  auto weight = [&](std::string_view what) {
    return layerWeight(
        absl::StrCat(toAbsl(prefix), "_compressor_", toAbsl(what)), loc);
  };
  // The projections are plain linears of the compressor's role, so that
  // they compile as any other matmul; kf.compress pools them.
  Value values = linear(LinearRole::Compressor, xn, weight("kv"), loc);
  Value gates = linear(LinearRole::Compressor, xn, weight("gate"), loc);
  kfd::CompressOp::create(b_, loc, values, gates, positions_,
                          cache(cacheKind, loc), weight("ape"), weight("norm"),
                          rope_, kfd::EntryPostAttr::get(&context_, post),
                          b_.getF32FloatAttr(c_.normEps));
}

kfd::HcPreOp GraphBuilder::hcPre(Value streams, std::string_view site) {
  const int64_t T = tokensDim_, D = c_.nEmbd, M = c_.hc;
  std::string step = absl::StrCat(toAbsl(site), "_hc_pre");
  std::string hc = absl::StrCat("hc_", toAbsl(site), "_");
  Value fn = layerWeight(hc + "fn", at(step));
  Value base = layerWeight(hc + "base", at(step));
  Value scale = layerWeight(hc + "scale", at(step));
  return kfd::HcPreOp::create(
      b_, at(step), f32({T, D}), f32({T, M}), f32({T, M, M}), streams, fn, base,
      scale, b_.getI64IntegerAttr(c_.sinkhornIterations),
      b_.getF32FloatAttr(c_.hcEps), b_.getF32FloatAttr(c_.normEps));
}

Value GraphBuilder::attention(Value streams) {
  const int64_t T = tokensDim_, H = c_.nHead, dh = c_.headDim, W = c_.window;
  const AttentionKind kind = c_.attention(layer_);
  const int64_t ratio = c_.compressRatios[layer_];
  kfd::HcPreOp pre = hcPre(streams, "attn");
  Value xn = rmsNorm(pre.getX(), layerWeight("attn_norm", at("attn_norm")),
                     kfd::Precision::f32, at("attn_norm"));

  // The query (§4.2): low-rank, normed per head in bf16, rotated.
  Value qr = linear(LinearRole::AttnQA, xn, "attn_q_a", at("q_a"));
  qr = rmsNorm(qr, layerWeight("attn_q_a_norm", at("q_a_norm")),
               kfd::Precision::f32, at("q_a_norm"));
  Value q = splitHeads(linear(LinearRole::AttnQB, qr, "attn_q_b", at("q_b")), H,
                       dh, at("q_b"));
  q = rmsNorm(q, Value(), kfd::Precision::bf16, at("q_norm"));
  q = rope(q, /*inverse=*/false, at("q_rope"));

  // The KV latent, one row per token, key and value at once.
  Value kv = linear(LinearRole::AttnKv, xn, "attn_kv", at("kv"));
  kv = rmsNorm(kv, layerWeight("attn_kv_a_norm", at("kv")), kfd::Precision::f32,
               at("kv"));
  kv = rope(kv, /*inverse=*/false, at("kv"));
  if (options_.simulate)
    kv = kfd::Fp8SimOp::create(b_, at("kv"), kv.getType(), kv,
                               b_.getI64IntegerAttr(64),
                               b_.getI64IntegerAttr(dh - c_.ropeDim));

  // The window bank is the ring, which has just received the call's rows
  // and still holds the window before them: a prefill continues a sequence
  // as a decode does.
  Value ring = cache("kv", at("kv_cache"));
  kfd::CacheAppendOp::create(b_, at("kv_cache"), ring, kv, positions_);
  Value bank =
      kfd::CacheReadOp::create(b_, at("kv_cache"), f32({ringRows(), dh}), ring);
  Value window = kfd::WindowIndicesOp::create(
      b_, at("window"), RankedTensorType::get({T, W}, b_.getI32Type()),
      positions_, b_.getI64IntegerAttr(W), b_.getI64IntegerAttr(ringRows()));

  // Compressed entries (§4.3) and the ones each query sees (§4.4).
  Value entries, selected;
  auto indexType = RankedTensorType::get({T, kDynamic}, b_.getI32Type());
  if (kind == AttentionKind::Csa)
    compress("indexer", "indexer",
             options_.simulate ? kfd::EntryPost::hadamard_fp4
                               : kfd::EntryPost::none,
             xn, at("indexer_compress"));
  if (kind != AttentionKind::Window) {
    compress("compressor", "attn",
             options_.simulate ? kfd::EntryPost::fp8 : kfd::EntryPost::none, xn,
             at("compress"));
    entries = kfd::CacheReadOp::create(b_, at("compress"), f32({kDynamic, dh}),
                                       cache("compressor", at("compress")));
  }
  if (kind == AttentionKind::Csa) {
    const int64_t hi = c_.indexerHeads, di = c_.indexerHeadDim;
    Location loc = at("indexer");
    Value qi =
        splitHeads(linear(LinearRole::IndexerQB, qr, "indexer.attn_q_b", loc),
                   hi, di, loc);
    qi = rope(qi, /*inverse=*/false, loc);
    if (options_.simulate) {
      qi = kfd::HadamardOp::create(b_, loc, qi.getType(), qi);
      qi = kfd::Fp4SimOp::create(b_, loc, qi.getType(), qi,
                                 b_.getI64IntegerAttr(32), mlir::IntegerAttr());
    }
    Value weights = linear(LinearRole::IndexerProj, xn, "indexer.proj", loc);
    Value keys = kfd::CacheReadOp::create(b_, loc, f32({kDynamic, di}),
                                          cache("indexer", loc));
    // §4.4: the head weights are scaled by (Di · Hi)^-1/2 in fp32.
    float scale = static_cast<float>(
        1.0 / std::sqrt(static_cast<double>(di) * static_cast<double>(hi)));
    Value scores =
        kfd::IndexerScoresOp::create(b_, loc, f32({T, kDynamic}), qi, weights,
                                     keys, b_.getF32FloatAttr(scale));
    selected = kfd::IndexerTopKOp::create(
        b_, loc, indexType, scores, positions_,
        b_.getI64IntegerAttr(c_.indexerTopK), b_.getI64IntegerAttr(ratio));
    probe(selected, "entries");
  } else if (kind == AttentionKind::Hca) {
    selected =
        kfd::VisibleEntriesOp::create(b_, at("indexer"), indexType, positions_,
                                      entries, b_.getI64IntegerAttr(ratio));
  }

  // §4.2: softmax scale head_dim^-1/2, as the reference's attention_scale.
  float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dh)));
  Value o = kfd::SparseAttentionOp::create(
      b_, at("attention"), f32({T, H, dh}), q, bank, window, entries, selected,
      layerWeight("attn_sinks", at("attention")), b_.getF32FloatAttr(scale));
  o = mergeHeads(rope(o, /*inverse=*/true, at("o_rope")), at("o_rope"));
  Value z = kfd::GroupedLinearOp::create(
      b_, at("o_a"), f32({T, int64_t{c_.oGroups} * c_.oLoraRank}), o,
      layerWeight("attn_output_a", at("o_a")), b_.getI64IntegerAttr(c_.oGroups),
      kfd::PrecisionAttr::get(&context_, precision(LinearRole::AttnOutputA)));
  Value out = linear(LinearRole::AttnOutputB, z, "attn_output_b", at("o_b"));
  return kfd::HcPostOp::create(b_, at("attn_hc_post"), streams.getType(), out,
                               streams, pre.getPost(), pre.getComb());
}

Value GraphBuilder::moe(Value streams) {
  const int64_t T = tokensDim_, D = c_.nEmbd, k = c_.nExpertUsed;
  kfd::HcPreOp pre = hcPre(streams, "ffn");
  Value xn = rmsNorm(pre.getX(), layerWeight("ffn_norm", at("ffn_norm")),
                     kfd::Precision::f32, at("ffn_norm"));
  Value logits = linear(LinearRole::Router, xn, "ffn_gate_inp", at("router"));

  // §4.5: the first layers route by token id, the others by score + bias.
  Value bias, table, tokens;
  if (c_.hashRouted(layer_)) {
    table = layerWeight("ffn_gate_tid2eid", at("gate"));
    tokens = tokens_;
  } else {
    bias =
        weight(absl::StrCat("blk.", layer_, ".exp_probs_b.bias"), at("gate"));
  }
  auto gate = kfd::MoeGateOp::create(
      b_, at("gate"), RankedTensorType::get({T, k}, b_.getI32Type()),
      f32({T, k}), logits, bias, table, tokens, b_.getI64IntegerAttr(k),
      b_.getF32FloatAttr(c_.routeScale));
  probe(gate.getIds(), "experts");
  Location loc = at("moe");
  Value experts[3], shared[3];
  for (int i = 0; i < 3; ++i) {
    std::string_view part = std::array{"gate", "up", "down"}[i];
    experts[i] = layerWeight(absl::StrCat("ffn_", toAbsl(part), "_exps"), loc);
    shared[i] = layerWeight(absl::StrCat("ffn_", toAbsl(part), "_shexp"), loc);
  }
  // One flag for the routed and the shared experts: both are Lin roles
  // (linear_roles.h), so both take FP8 activations when simulating.
  const bool fp8 = options_.simulate &&
                   linearRole(LinearRole::RoutedExpert).arithmetic ==
                       LinearArithmetic::Quantized &&
                   linearRole(LinearRole::SharedExpert).arithmetic ==
                       LinearArithmetic::Quantized;
  Value y = kfd::MoeOp::create(
      b_, loc, f32({T, D}), xn, gate.getIds(), gate.getWeights(), experts[0],
      experts[1], experts[2], shared[0], shared[1], shared[2],
      b_.getF32FloatAttr(c_.swigluClampExp.at(layer_)),
      b_.getF32FloatAttr(c_.swigluClampShexp.at(layer_)),
      fp8 ? b_.getUnitAttr() : mlir::UnitAttr());
  return kfd::HcPostOp::create(b_, at("ffn_hc_post"), streams.getType(), y,
                               streams, pre.getPost(), pre.getComb());
}

Value GraphBuilder::head(Value streams) {
  const int64_t D = c_.nEmbd, M = c_.hc;
  Location loc = at("head");
  // §3, §6: the head reads the last token only.
  Value last = streams;
  if (tokensDim_ != 1) {
    Value zero = mlir::arith::ConstantIndexOp::create(b_, loc, 0);
    Value one = mlir::arith::ConstantIndexOp::create(b_, loc, 1);
    Value count = mlir::tensor::DimOp::create(b_, loc, streams, zero);
    Value index = mlir::arith::SubIOp::create(b_, loc, count, one);
    last = mlir::tensor::ExtractSliceOp::create(
        b_, loc, f32({1, M, D}), streams,
        llvm::ArrayRef<mlir::OpFoldResult>{index, b_.getIndexAttr(0),
                                           b_.getIndexAttr(0)},
        llvm::ArrayRef<mlir::OpFoldResult>{
            b_.getIndexAttr(1), b_.getIndexAttr(M), b_.getIndexAttr(D)},
        llvm::ArrayRef<mlir::OpFoldResult>{
            b_.getIndexAttr(1), b_.getIndexAttr(1), b_.getIndexAttr(1)});
  }
  Value fn = weight("output_hc_fn.weight", loc);
  Value base = weight("output_hc_base.weight", loc);
  Value scale = weight("output_hc_scale.weight", loc);
  Value y = kfd::HcHeadOp::create(b_, loc, f32({1, D}), last, fn, base, scale,
                                  b_.getF32FloatAttr(c_.hcEps),
                                  b_.getF32FloatAttr(c_.normEps));
  y = rmsNorm(y, weight("output_norm.weight", loc), kfd::Precision::f32, loc);
  return linear(LinearRole::Output, y, weight("output.weight", loc), loc);
}

void GraphBuilder::buildFunction(bool decode) {
  decode_ = decode;
  tokensDim_ = decode ? 1 : kDynamic;
  layer_ = -1;
  const int64_t T = tokensDim_;
  auto tokensType = RankedTensorType::get({T}, b_.getI32Type());
  auto positionsType = RankedTensorType::get({T}, b_.getI64Type());
  auto tokenType = RankedTensorType::get({1}, b_.getI32Type());
  Location loc = at(decode ? "decode" : "prefill");
  const auto streamsType = f32({T, int64_t{c_.hc}, int64_t{c_.nEmbd}});
  const bool force = options_.probes == GraphOptions::Probes::TeacherForce;
  llvm::SmallVector<mlir::Type> arguments = {tokensType, positionsType};
  if (force) // the streams of layers 1 .. L-1 and of the head
    arguments.append(c_.nLayer, streamsType);
  // The results' types are set once the body has them.
  auto function =
      mlir::func::FuncOp::create(b_, loc, decode ? "decode" : "prefill",
                                 b_.getFunctionType(arguments, {}));
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(function.addEntryBlock());
  tokens_ = function.getArgument(0);
  positions_ = function.getArgument(1);
  probes_.clear();
  probeNames_.clear();

  if (!decode) { // a prefill starts a sequence (§5), or continues it
    for (uint32_t l = 0; l < c_.nLayer; ++l) {
      layer_ = l;
      for (std::string_view kind : {"kv", "compressor", "indexer"})
        if (caches_.count(absl::StrCat("blk.", l, ".", toAbsl(kind))))
          kfd::CacheResetOp::create(b_, at("reset"), cache(kind, at("reset")),
                                    positions_);
    }
    layer_ = -1;
  }

  Value x = kfd::EmbedOp::create(b_, at("embed"), f32({T, c_.nEmbd}), tokens_,
                                 weight("token_embd.weight", at("embed")));
  Value streams = kfd::HcExpandOp::create(b_, at("embed"), streamsType, x);
  for (uint32_t l = 0; l < c_.nLayer; ++l) {
    layer_ = l;
    rope_ = layerRope(&context_, c_, l);
    if (force && l > 0)
      streams = function.getArgument(1 + l);
    streams = moe(attention(streams));
    probe(streams, "streams");
  }
  layer_ = -1;
  if (force)
    streams = function.getArguments().back();
  Value logits = head(streams);
  Value token =
      kfd::ArgmaxOp::create(b_, at("head"), tokenType, logits).getResult();
  llvm::SmallVector<Value> results = {logits, token};
  results.append(probes_);
  mlir::func::ReturnOp::create(b_, at("head"), results);
  function.setType(
      b_.getFunctionType(arguments, mlir::ValueRange(results).getTypes()));
  // The probes name their plans' run buffers.
  for (auto [i, name] : llvm::enumerate(probeNames_))
    function.setResultAttr(static_cast<unsigned>(2 + i),
                           kfd::KfDialect::kNameAttrName,
                           b_.getStringAttr(name));
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> buildGraph(mlir::MLIRContext &context,
                                             const Config &config,
                                             std::span<const Format> formats,
                                             const GraphOptions &options) {
  context.loadDialect<mlir::kf::KfDialect, mlir::func::FuncDialect,
                      mlir::tensor::TensorDialect, mlir::arith::ArithDialect>();
  return GraphBuilder(context, config, options).build(formats);
}

} // namespace kf::deepseek_v4
