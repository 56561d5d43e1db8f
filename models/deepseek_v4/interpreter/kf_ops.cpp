//===- kf_ops.cpp - The token-wise kf ops by the reference kernels --------===//
//
// Each op runs the reference kernel the golden forward runs for the same
// step, on the same operands, token by token or row by row, so that a graph
// that mirrors the forward reproduces it bit for bit. The reference stops
// the program on a precondition it does not meet; every such precondition
// that run-time data could break is checked here first and reported as an
// error instead.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <cmath>
#include <limits>

#include "kf/deepseek_v4/reference/hadamard.h"
#include "kf/deepseek_v4/reference/hyper_connections.h"
#include "kf/deepseek_v4/reference/linear.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/quant_sim.h"
#include "kf/deepseek_v4/reference/rope.h"
#include "kf/deepseek_v4/reference/routing.h"
#include "kf/runtime/status_macros.h"

namespace kf::deepseek_v4::interpreter::detail {

using mlir::Operation;

namespace {

/// A tensor seen as rows of its innermost dimension.
struct Rows {
  size_t count = 0;
  size_t length = 0;
};

Rows innermostRows(const Tensor &tensor) {
  size_t length = static_cast<size_t>(tensor.getShape().back());
  size_t total = static_cast<size_t>(tensor.getNumElements());
  return {length == 0 ? 0 : total / length, length};
}

std::vector<int64_t> shapeOf(const Tensor &tensor) {
  return {tensor.getShape().begin(), tensor.getShape().end()};
}

/// Row `row` of `length` values.
template <typename T>
std::span<T> row(std::span<T> values, size_t row, size_t length) {
  return values.subspan(row * length, length);
}

/// The reference's hyper-connection parameters, refusing counts an int
/// cannot hold.
absl::StatusOr<reference::HcConfig>
hcConfig(Operation *op, int64_t mult, int64_t iters, float eps, float normEps) {
  if (mult <= 0 || mult > std::numeric_limits<int>::max() || iters <= 0 ||
      iters > std::numeric_limits<int>::max())
    return opError(op, "stream count " + llvm::Twine(mult) +
                           " or Sinkhorn iterations " + llvm::Twine(iters) +
                           " out of range");
  return reference::HcConfig{static_cast<int>(mult), static_cast<int>(iters),
                             eps, normEps};
}

/// The shared prelude of the hyper-connection ops: [T, mult, D] streams with
/// positive sizes.
absl::Status checkStreams(Operation *op, const Tensor &streams) {
  if (streams.getDimSize(1) <= 0 || streams.getDimSize(2) <= 0)
    return opError(op, "streams " + shapeString(streams.getShape()) +
                           " have no values per token");
  return absl::OkStatus();
}

absl::Status quantSim(Operation *op, Frame &frame, mlir::Value input,
                      uint64_t block, std::optional<uint64_t> leading,
                      void (*sim)(std::span<float>, size_t)) {
  Tensor result = frame.tensor(input);
  Rows rows = innermostRows(result);
  size_t span = leading ? static_cast<size_t>(*leading) : rows.length;
  // The verifier checked these for the static innermost dimension; they are
  // what the reference's simulation stops on.
  if (span > rows.length || span % block != 0)
    return opError(op, "rows of " + llvm::Twine(rows.length) +
                           " values cannot take blocks of " +
                           llvm::Twine(block) + " over " + llvm::Twine(span));
  std::span<float> values = result.getMutableFloats();
  for (size_t r = 0; r < rows.count; ++r) {
    std::span<float> part = row(values, r, rows.length).first(span);
    // A block scale is a power of two from the block's largest magnitude,
    // which must be finite.
    KF_RETURN_IF_ERROR(expectFinite(op, "row " + llvm::Twine(r), part));
    sim(part, static_cast<size_t>(block));
  }
  frame.set(op->getResult(0), std::move(result));
  return absl::OkStatus();
}

void fp8Sim(std::span<float> x, size_t block) { reference::fp8Sim(x, block); }
void fp4Sim(std::span<float> x, size_t block) { reference::fp4Sim(x, block); }

} // namespace

//===----------------------------------------------------------------------===//
// Embedding and hyper-connections
//===----------------------------------------------------------------------===//

absl::Status execute(mlir::kf::EmbedOp op, Frame &frame, Context &) {
  const Tensor &tokens = frame.tensor(op.getTokens());
  Weight &table = frame.weight(op.getTable());
  int64_t vocab = table.type.getRows(), dim = table.type.getCols();
  std::span<const int32_t> ids = tokens.getInts();
  for (size_t t = 0; t < ids.size(); ++t)
    if (ids[t] < 0 || ids[t] >= vocab)
      return opError(op, "token id " + llvm::Twine(ids[t]) + " of token " +
                             llvm::Twine(t) +
                             " is outside the vocabulary [0, " +
                             llvm::Twine(vocab) + ")");
  KF_ASSIGN_OR_RETURN(std::span<const float> values, getFloats(table));
  std::vector<float> out(ids.size() * static_cast<size_t>(dim));
  for (size_t t = 0; t < ids.size(); ++t) {
    std::span<const float> source =
        row(values, static_cast<size_t>(ids[t]), static_cast<size_t>(dim));
    std::span<float> target = row(std::span<float>(out), t, dim);
    for (size_t d = 0; d < target.size(); ++d)
      target[d] = reference::roundBf16(source[d]);
  }
  frame.set(op.getResult(),
            Tensor({static_cast<int64_t>(ids.size()), dim}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::HcExpandOp op, Frame &frame, Context &) {
  const Tensor &input = frame.tensor(op.getInput());
  int64_t tokens = input.getDimSize(0), dim = input.getDimSize(1);
  int64_t mult = op.getType().getDimSize(1);
  std::span<const float> x = input.getFloats();
  std::vector<float> out;
  out.reserve(static_cast<size_t>(tokens * mult * dim));
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t j = 0; j < mult; ++j) {
      std::span<const float> source = row(x, t, dim);
      out.insert(out.end(), source.begin(), source.end());
    }
  frame.set(op.getResult(), Tensor({tokens, mult, dim}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::HcPreOp op, Frame &frame, Context &) {
  const Tensor &streams = frame.tensor(op.getStreams());
  KF_RETURN_IF_ERROR(checkStreams(op, streams));
  int64_t tokens = streams.getDimSize(0), mult = streams.getDimSize(1),
          dim = streams.getDimSize(2);
  KF_ASSIGN_OR_RETURN(
      reference::HcConfig config,
      hcConfig(op, mult, static_cast<int64_t>(op.getSinkhornIters()),
               op.getEps().convertToFloat(), op.getNormEps().convertToFloat()));
  KF_ASSIGN_OR_RETURN(std::span<const float> fn,
                      getFloats(frame.weight(op.getFn())));
  KF_ASSIGN_OR_RETURN(std::span<const float> base,
                      getFloats(frame.weight(op.getBase())));
  KF_ASSIGN_OR_RETURN(std::span<const float> scale,
                      getFloats(frame.weight(op.getScale())));
  reference::HcWeights weights{fn, base, scale};
  size_t width = static_cast<size_t>(mult * dim), m = static_cast<size_t>(mult);
  std::vector<float> x(static_cast<size_t>(tokens * dim));
  std::vector<float> post(static_cast<size_t>(tokens) * m);
  std::vector<float> comb(static_cast<size_t>(tokens) * m * m);
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t)
    reference::hcPre(row(streams.getFloats(), t, width), weights, config,
                     row(std::span<float>(x), t, dim),
                     row(std::span<float>(post), t, m),
                     row(std::span<float>(comb), t, m * m));
  frame.set(op.getX(), Tensor({tokens, dim}, std::move(x)));
  frame.set(op.getPost(), Tensor({tokens, mult}, std::move(post)));
  frame.set(op.getComb(), Tensor({tokens, mult, mult}, std::move(comb)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::HcPostOp op, Frame &frame, Context &) {
  const Tensor &input = frame.tensor(op.getInput());
  const Tensor &streams = frame.tensor(op.getStreams());
  const Tensor &post = frame.tensor(op.getPost());
  const Tensor &comb = frame.tensor(op.getComb());
  KF_RETURN_IF_ERROR(checkStreams(op, streams));
  int64_t tokens = streams.getDimSize(0), mult = streams.getDimSize(1),
          dim = streams.getDimSize(2);
  KF_RETURN_IF_ERROR(
      expectSize(op, "the input's token count", input.getDimSize(0), tokens));
  KF_RETURN_IF_ERROR(expectSize(op, "the post weights' token count",
                                post.getDimSize(0), tokens));
  KF_RETURN_IF_ERROR(expectSize(op, "the combination's token count",
                                comb.getDimSize(0), tokens));
  size_t width = static_cast<size_t>(mult * dim), m = static_cast<size_t>(mult);
  std::vector<float> out(static_cast<size_t>(tokens) * width);
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t)
    reference::hcPost(
        row(input.getFloats(), t, dim), row(streams.getFloats(), t, width),
        row(post.getFloats(), t, m), row(comb.getFloats(), t, m * m),
        static_cast<int>(mult), row(std::span<float>(out), t, width));
  frame.set(op.getResult(), Tensor(shapeOf(streams), std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::HcHeadOp op, Frame &frame, Context &) {
  const Tensor &streams = frame.tensor(op.getStreams());
  KF_RETURN_IF_ERROR(checkStreams(op, streams));
  int64_t tokens = streams.getDimSize(0), mult = streams.getDimSize(1),
          dim = streams.getDimSize(2);
  // HcHead has no Sinkhorn; the iteration count is unused.
  KF_ASSIGN_OR_RETURN(reference::HcConfig config,
                      hcConfig(op, mult, 1, op.getEps().convertToFloat(),
                               op.getNormEps().convertToFloat()));
  KF_ASSIGN_OR_RETURN(std::span<const float> fn,
                      getFloats(frame.weight(op.getFn())));
  KF_ASSIGN_OR_RETURN(std::span<const float> base,
                      getFloats(frame.weight(op.getBase())));
  KF_ASSIGN_OR_RETURN(std::span<const float> scale,
                      getFloats(frame.weight(op.getScale())));
  size_t width = static_cast<size_t>(mult * dim);
  std::vector<float> out(static_cast<size_t>(tokens * dim));
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t)
    reference::hcHead(row(streams.getFloats(), t, width), {fn, base, scale},
                      config, row(std::span<float>(out), t, dim));
  frame.set(op.getResult(), Tensor({tokens, dim}, std::move(out)));
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Norms, linears and elementwise transforms
//===----------------------------------------------------------------------===//

absl::Status execute(mlir::kf::RmsNormOp op, Frame &frame, Context &) {
  Tensor result = frame.tensor(op.getInput());
  Rows rows = innermostRows(result);
  float eps = op.getEps().convertToFloat();
  std::span<float> values = result.getMutableFloats();
  if (op.getCompute() == mlir::kf::Precision::bf16) {
    // The reference's bf16 RMS scaling is the weightless per-head one.
    if (op.getWeight())
      return opError(op, "compute(bf16) with a weight has no reference "
                         "kernel (the reference's bf16 scaling is weightless)");
    for (size_t r = 0; r < rows.count; ++r)
      reference::rmsScale(row(values, r, rows.length), eps);
    frame.set(op.getResult(), std::move(result));
    return absl::OkStatus();
  }
  std::vector<float> ones;
  std::span<const float> weight;
  if (mlir::Value w = op.getWeight()) {
    if (llvm::isa<mlir::kf::QWeightType>(w.getType())) {
      KF_ASSIGN_OR_RETURN(weight, getFloats(frame.weight(w)));
    } else {
      weight = frame.tensor(w).getFloats();
    }
    KF_RETURN_IF_ERROR(expectSize(op, "the weight's length",
                                  static_cast<int64_t>(weight.size()),
                                  static_cast<int64_t>(rows.length)));
  } else {
    // The weightless norm is the weighted one with a weight of ones: the
    // products by 1 are exact.
    ones.assign(rows.length, 1.0f);
    weight = ones;
  }
  for (size_t r = 0; r < rows.count; ++r) {
    std::span<float> x = row(values, r, rows.length);
    reference::rmsNorm(x, weight, eps, x);
  }
  frame.set(op.getResult(), std::move(result));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::LinearOp op, Frame &frame, Context &) {
  const Tensor &input = frame.tensor(op.getInput());
  Weight &weight = frame.weight(op.getWeight());
  int64_t tokens = input.getDimSize(0), k = weight.type.getCols(),
          n = weight.type.getRows();
  KF_RETURN_IF_ERROR(
      expectSize(op, "the input's row length", input.getDimSize(1), k));
  KF_ASSIGN_OR_RETURN(std::span<const float> w, getFloats(weight));
  bool bf16 = op.getPrecision() == mlir::kf::Precision::bf16;
  std::vector<float> out(static_cast<size_t>(tokens * n));
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    std::span<const float> x = row(input.getFloats(), t, k);
    std::span<float> y = row(std::span<float>(out), t, n);
    if (bf16)
      reference::linearBf16(x, w, y);
    else
      reference::linearFp32(x, w, y);
  }
  frame.set(op.getResult(), Tensor({tokens, n}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::GroupedLinearOp op, Frame &frame, Context &) {
  const Tensor &input = frame.tensor(op.getInput());
  Weight &weight = frame.weight(op.getWeight());
  size_t groups = static_cast<size_t>(op.getGroups());
  int64_t tokens = input.getDimSize(0), k = input.getDimSize(1);
  size_t groupIn = static_cast<size_t>(weight.type.getCols());
  size_t rank = static_cast<size_t>(weight.type.getRows()) / groups;
  KF_RETURN_IF_ERROR(expectSize(op, "the input's row length", k,
                                static_cast<int64_t>(groups * groupIn)));
  KF_ASSIGN_OR_RETURN(std::span<const float> w, getFloats(weight));
  bool bf16 = op.getPrecision() == mlir::kf::Precision::bf16;
  size_t outWidth = groups * rank;
  std::vector<float> out(static_cast<size_t>(tokens) * outWidth);
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    std::span<const float> x = row(input.getFloats(), t, k);
    std::span<float> y = row(std::span<float>(out), t, outWidth);
    // Group g: its slice of the input times rows g·R .. (g+1)·R − 1.
    for (size_t g = 0; g < groups; ++g) {
      std::span<const float> slice = x.subspan(g * groupIn, groupIn);
      std::span<const float> rows =
          w.subspan(g * rank * groupIn, rank * groupIn);
      std::span<float> part = y.subspan(g * rank, rank);
      if (bf16)
        reference::linearBf16(slice, rows, part);
      else
        reference::linearFp32(slice, rows, part);
    }
  }
  frame.set(op.getResult(),
            Tensor({tokens, static_cast<int64_t>(outWidth)}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::RopeOp op, Frame &frame, Context &context) {
  Tensor result = frame.tensor(op.getInput());
  const Tensor &positions = frame.tensor(op.getPositions());
  int64_t tokens = result.getDimSize(0);
  KF_RETURN_IF_ERROR(expectSize(op, "the number of positions",
                                positions.getDimSize(0), tokens));
  KF_ASSIGN_OR_RETURN(std::span<const float> freqs,
                      context.getRopeFrequencies(op, op.getRope()));
  Rows rows = innermostRows(result);
  size_t ropeDim = static_cast<size_t>(op.getRope().getDim());
  if (ropeDim > rows.length)
    return opError(op, "rope dim " + llvm::Twine(ropeDim) +
                           " exceeds the row length " +
                           llvm::Twine(rows.length));
  size_t perToken = tokens == 0 ? 0 : rows.count / static_cast<size_t>(tokens);
  std::span<float> values = result.getMutableFloats();
  for (size_t r = 0; r < rows.count; ++r) {
    int64_t pos = positions.getLongs()[r / perToken];
    std::span<float> part = row(values, r, rows.length).last(ropeDim);
    if (op.getInverse())
      reference::inverseRope(part, pos, freqs);
    else
      reference::rope(part, pos, freqs);
  }
  frame.set(op.getResult(), std::move(result));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::HadamardOp op, Frame &frame, Context &) {
  Tensor result = frame.tensor(op.getInput());
  Rows rows = innermostRows(result);
  if (rows.length == 0 || (rows.length & (rows.length - 1)) != 0)
    return opError(op, "the row length " + llvm::Twine(rows.length) +
                           " is not a power of two");
  std::span<float> values = result.getMutableFloats();
  for (size_t r = 0; r < rows.count; ++r)
    reference::hadamard(row(values, r, rows.length));
  frame.set(op.getResult(), std::move(result));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::Fp8SimOp op, Frame &frame, Context &) {
  return quantSim(op, frame, op.getInput(), op.getBlock(), op.getLeading(),
                  fp8Sim);
}

absl::Status execute(mlir::kf::Fp4SimOp op, Frame &frame, Context &) {
  return quantSim(op, frame, op.getInput(), op.getBlock(), op.getLeading(),
                  fp4Sim);
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

absl::Status execute(mlir::kf::MoeGateOp op, Frame &frame, Context &) {
  const Tensor &logits = frame.tensor(op.getLogits());
  int64_t tokens = logits.getDimSize(0), experts = logits.getDimSize(1);
  size_t k = static_cast<size_t>(op.getK());
  if (static_cast<int64_t>(k) > experts)
    return opError(op, "k(" + llvm::Twine(k) + ") exceeds the " +
                           llvm::Twine(experts) + " experts");
  float routeScale = op.getRouteScale().convertToFloat();
  std::span<const float> bias;
  std::span<const int32_t> table, ids;
  if (op.isHashRouted()) {
    Weight &tid2eid = frame.weight(op.getTid2eid());
    const Tensor &tokenIds = frame.tensor(op.getTokens());
    KF_RETURN_IF_ERROR(expectSize(op, "the number of token ids",
                                  tokenIds.getDimSize(0), tokens));
    KF_ASSIGN_OR_RETURN(table, getInts(tid2eid));
    ids = tokenIds.getInts();
    int64_t vocab = tid2eid.type.getRows();
    for (size_t t = 0; t < ids.size(); ++t) {
      if (ids[t] < 0 || ids[t] >= vocab)
        return opError(op, "token id " + llvm::Twine(ids[t]) + " of token " +
                               llvm::Twine(t) + " is outside the table's [0, " +
                               llvm::Twine(vocab) + ")");
      for (int32_t e : row(table, static_cast<size_t>(ids[t]), k))
        if (e < 0 || e >= experts)
          return opError(op, "tid2eid row " + llvm::Twine(ids[t]) +
                                 " names expert " + llvm::Twine(e) +
                                 ", outside [0, " + llvm::Twine(experts) + ")");
    }
  } else {
    KF_ASSIGN_OR_RETURN(bias, getFloats(frame.weight(op.getBias())));
    KF_RETURN_IF_ERROR(expectSize(op, "the bias length",
                                  static_cast<int64_t>(bias.size()), experts));
  }
  std::vector<int32_t> outIds(static_cast<size_t>(tokens) * k);
  std::vector<float> outWeights(outIds.size());
  std::vector<float> scores(static_cast<size_t>(experts));
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    std::span<const float> l = row(logits.getFloats(), t, experts);
    for (size_t e = 0; e < scores.size(); ++e) {
      scores[e] = reference::sqrtSoftplus(l[e]);
      // The learned top-k refuses NaN, which sorts nowhere.
      if (!op.isHashRouted() && std::isnan(scores[e] + bias[e]))
        return opError(op, "the biased score of expert " + llvm::Twine(e) +
                               " for token " + llvm::Twine(t) + " is NaN");
    }
    std::span<int32_t> chosen = row(std::span<int32_t>(outIds), t, k);
    std::span<float> weights = row(std::span<float>(outWeights), t, k);
    if (op.isHashRouted())
      reference::routeHash(scores, table, ids[t], routeScale, chosen, weights);
    else
      reference::routeLearned(scores, bias, routeScale, chosen, weights);
  }
  int64_t kk = static_cast<int64_t>(k);
  frame.set(op.getIds(), Tensor({tokens, kk}, std::move(outIds)));
  frame.set(op.getWeights(), Tensor({tokens, kk}, std::move(outWeights)));
  return absl::OkStatus();
}

namespace {

/// reference::expert_ffn for one token, spelled out from the same kernels
/// in the same order so that the activation the down projection simulates
/// can be checked finite first.
absl::Status expertFfn(Operation *op, std::span<const float> x,
                       std::span<const float> w1, std::span<const float> w3,
                       std::span<const float> w2, float limit, float weight,
                       bool simulate, std::span<float> y) {
  std::vector<float> g(w1.size() / x.size()), u(g.size());
  reference::lin(x, w1, simulate, g);
  reference::lin(x, w3, simulate, u);
  reference::swiglu(g, u, limit, weight, g);
  if (simulate)
    KF_RETURN_IF_ERROR(expectFinite(op, "an expert's activation", g));
  reference::lin(g, w2, simulate, y);
  return absl::OkStatus();
}

} // namespace

absl::Status execute(mlir::kf::MoeOp op, Frame &frame, Context &) {
  const Tensor &input = frame.tensor(op.getInput());
  const Tensor &ids = frame.tensor(op.getIds());
  const Tensor &routeWeights = frame.tensor(op.getWeights());
  int64_t tokens = input.getDimSize(0), dim = input.getDimSize(1);
  size_t k = static_cast<size_t>(ids.getDimSize(1));
  KF_RETURN_IF_ERROR(
      expectSize(op, "the ids' token count", ids.getDimSize(0), tokens));
  KF_RETURN_IF_ERROR(expectSize(op, "the weights' token count",
                                routeWeights.getDimSize(0), tokens));
  KF_RETURN_IF_ERROR(expectSize(op, "the weights per token",
                                routeWeights.getDimSize(1),
                                static_cast<int64_t>(k)));
  Weight &gateExps = frame.weight(op.getGateExps());
  Weight &gateShexp = frame.weight(op.getGateShexp());
  int64_t experts = gateExps.type.getShape()[0];
  size_t ff = static_cast<size_t>(gateExps.type.getRows());
  size_t sharedFf = static_cast<size_t>(gateShexp.type.getRows());
  for (int32_t e : ids.getInts())
    if (e < 0 || e >= experts)
      return opError(op, "expert id " + llvm::Twine(e) + " is outside [0, " +
                             llvm::Twine(experts) + ")");
  bool simulate = op.getFp8Activations();
  if (simulate)
    for (size_t width : {static_cast<size_t>(dim), ff, sharedFf})
      if (width % 128 != 0)
        return opError(op, "fp8_activations needs widths that are multiples "
                           "of 128, got " +
                               llvm::Twine(width));
  KF_ASSIGN_OR_RETURN(std::span<const float> w1, getFloats(gateExps));
  KF_ASSIGN_OR_RETURN(std::span<const float> w3,
                      getFloats(frame.weight(op.getUpExps())));
  KF_ASSIGN_OR_RETURN(std::span<const float> w2,
                      getFloats(frame.weight(op.getDownExps())));
  KF_ASSIGN_OR_RETURN(std::span<const float> s1, getFloats(gateShexp));
  KF_ASSIGN_OR_RETURN(std::span<const float> s3,
                      getFloats(frame.weight(op.getUpShexp())));
  KF_ASSIGN_OR_RETURN(std::span<const float> s2,
                      getFloats(frame.weight(op.getDownShexp())));
  float limit = op.getLimit().convertToFloat();
  float sharedLimit = op.getSharedLimit().convertToFloat();
  size_t d = static_cast<size_t>(dim), expertSize = ff * d;
  std::vector<float> out(static_cast<size_t>(tokens) * d);
  std::vector<float> y(d), shared(d);
  std::vector<double> sum(d);
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    std::span<const float> x = row(input.getFloats(), t, d);
    if (simulate)
      KF_RETURN_IF_ERROR(expectFinite(op, "token " + llvm::Twine(t), x));
    // reference::moe: the routed experts summed in fp64 in routing order,
    // then the shared expert, then one rounding to bf16.
    std::fill(sum.begin(), sum.end(), 0.0);
    for (size_t j = 0; j < k; ++j) {
      size_t e = static_cast<size_t>(ids.getInts()[t * k + j]);
      KF_RETURN_IF_ERROR(
          expertFfn(op, x, w1.subspan(e * expertSize, expertSize),
                    w3.subspan(e * expertSize, expertSize),
                    w2.subspan(e * expertSize, expertSize), limit,
                    routeWeights.getFloats()[t * k + j], simulate, y));
      for (size_t i = 0; i < d; ++i)
        sum[i] += y[i];
    }
    KF_RETURN_IF_ERROR(
        expertFfn(op, x, s1, s3, s2, sharedLimit, 1.0f, simulate, shared));
    std::span<float> target = row(std::span<float>(out), t, d);
    for (size_t i = 0; i < d; ++i)
      target[i] = reference::roundBf16(static_cast<float>(sum[i] + shared[i]));
  }
  frame.set(op.getResult(), Tensor({tokens, dim}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::SwigluOp op, Frame &frame, Context &) {
  const Tensor &gate = frame.tensor(op.getGate());
  const Tensor &up = frame.tensor(op.getUp());
  KF_RETURN_IF_ERROR(expectSize(op, "up's element count", up.getNumElements(),
                                gate.getNumElements()));
  Rows rows = innermostRows(gate);
  std::span<const float> weights;
  if (op.getWeights()) {
    weights = frame.tensor(op.getWeights()).getFloats();
    KF_RETURN_IF_ERROR(expectSize(op, "the routing weights' count",
                                  static_cast<int64_t>(weights.size()),
                                  static_cast<int64_t>(rows.count)));
  }
  float limit = op.getLimit().convertToFloat();
  std::vector<float> out(static_cast<size_t>(gate.getNumElements()));
  for (size_t r = 0; r < rows.count; ++r)
    reference::swiglu(row(gate.getFloats(), r, rows.length),
                      row(up.getFloats(), r, rows.length), limit,
                      weights.empty() ? 1.0f : weights[r],
                      row(std::span<float>(out), r, rows.length));
  frame.set(op.getResult(), Tensor(shapeOf(gate), std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::MoeCombineOp op, Frame &frame, Context &) {
  const Tensor &routed = frame.tensor(op.getRouted());
  const Tensor &shared = frame.tensor(op.getShared());
  int64_t tokens = routed.getDimSize(0), dim = routed.getDimSize(2);
  KF_RETURN_IF_ERROR(expectSize(op, "the shared expert's token count",
                                shared.getDimSize(0), tokens));
  size_t k = static_cast<size_t>(routed.getDimSize(1));
  size_t d = static_cast<size_t>(dim);
  std::vector<float> out(static_cast<size_t>(tokens) * d);
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    std::span<const float> s = row(shared.getFloats(), t, d);
    for (size_t i = 0; i < d; ++i) {
      // reference::moe: the slots in fp64 in routing order, then the shared
      // expert, then fp32 and bf16.
      double sum = 0;
      for (size_t j = 0; j < k; ++j)
        sum += routed.getFloats()[(t * k + j) * d + i];
      out[t * d + i] = reference::roundBf16(static_cast<float>(sum + s[i]));
    }
  }
  frame.set(op.getResult(), Tensor({tokens, dim}, std::move(out)));
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Sampling
//===----------------------------------------------------------------------===//

absl::Status execute(mlir::kf::ArgmaxOp op, Frame &frame, Context &) {
  const Tensor &input = frame.tensor(op.getInput());
  Rows rows = innermostRows(input);
  if (rows.length == 0)
    return opError(op, "rows of 0 values have no argmax");
  std::vector<int32_t> out(rows.count);
  for (size_t r = 0; r < rows.count; ++r) {
    std::span<const float> values = row(input.getFloats(), r, rows.length);
    // The first index of the largest value; NaN compares false, so it never
    // wins, and an all-NaN row gives 0.
    size_t best = 0;
    bool found = false;
    for (size_t i = 0; i < values.size(); ++i)
      if (!std::isnan(values[i]) && (!found || values[i] > values[best])) {
        best = i;
        found = true;
      }
    out[r] = static_cast<int32_t>(best);
  }
  std::vector<int64_t> shape = shapeOf(input);
  shape.pop_back();
  frame.set(op.getResult(), Tensor(std::move(shape), std::move(out)));
  return absl::OkStatus();
}

} // namespace kf::deepseek_v4::interpreter::detail
