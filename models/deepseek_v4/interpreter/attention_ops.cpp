//===- attention_ops.cpp - Caches, compressors, indices and attention -----===//
//
// The attention ops by the reference kernels. The reference's attention
// layer builds one bank per query from its ring (or the call's fresh rows)
// and its compressor's entries, and lists the bank rows the query attends
// to; the graph spells the same with caches, index ops and
// kf.sparse_attention, and these handlers keep the reference's addressing:
// window rows first, then entries, −1 for padding. § numbers are sections of
// docs/models/deepseek_v4_model.md.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <cmath>
#include <limits>

#include "kf/deepseek_v4/reference/attention.h"
#include "kf/deepseek_v4/reference/indexer.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/runtime/half.h"
#include "kf/runtime/status_macros.h"

namespace kf::deepseek_v4::interpreter::detail {

using mlir::Operation;

namespace {

template <typename T>
std::span<T> row(std::span<T> values, size_t row, size_t length) {
  return values.subspan(row * length, length);
}

/// A value as a cache of `element` holds it: cache rows are stored in the
/// element type, so reading them back gives its rounding.
float storedAs(mlir::Type element, float value) {
  if (element.isBF16())
    return reference::roundBf16(value);
  if (element.isF16())
    return fp16ToFp32(fp32ToFp16(value));
  return value;
}

absl::Status checkPositions(Operation *op, const Tensor &positions,
                            int64_t tokens) {
  KF_RETURN_IF_ERROR(expectSize(op, "the number of positions",
                                positions.getDimSize(0), tokens));
  for (int64_t p : positions.getLongs())
    if (p < 0 || p >= std::numeric_limits<int32_t>::max())
      return opError(op, "position " + llvm::Twine(p) +
                             " is outside [0, 2^31 − 1)");
  return absl::OkStatus();
}

/// Positions p0, p0 + 1, ...: what a compressor and a fresh bank need.
absl::Status checkConsecutive(Operation *op, const Tensor &positions) {
  std::span<const int64_t> p = positions.getLongs();
  for (size_t t = 1; t < p.size(); ++t)
    if (p[t] != p[t - 1] + 1)
      return opError(op, "position " + llvm::Twine(p[t]) + " of token " +
                             llvm::Twine(t) + " does not follow " +
                             llvm::Twine(p[t - 1]));
  return absl::OkStatus();
}

absl::StatusOr<int> intAttr(Operation *op, llvm::StringRef what,
                            int64_t value) {
  if (value <= 0 || value > std::numeric_limits<int>::max())
    return opError(op, what + " " + llvm::Twine(value) + " is out of range");
  return static_cast<int>(value);
}

// The compressed entries the query at `pos` sees (§4.2), of which the op
// was given `count` (`given` says how): a query seeing more than were built
// is an error, not an out-of-bounds read.
absl::StatusOr<int64_t> visibleEntries(mlir::Operation *op, int64_t pos,
                                       int ratio, int64_t count,
                                       llvm::StringRef given) {
  int64_t visible = reference::visibleCompressed(pos, ratio);
  if (visible > count)
    return opError(op, "the query at position " + llvm::Twine(pos) + " sees " +
                           llvm::Twine(visible) + " entries, but only " +
                           llvm::Twine(count) + " " + given);
  return visible;
}

} // namespace

//===----------------------------------------------------------------------===//
// Caches
//===----------------------------------------------------------------------===//

absl::Status execute(mlir::kf::CacheResetOp op, Frame &frame, Context &) {
  const Tensor &positions = frame.tensor(op.getPositions());
  if (positions.getNumElements() > 0 && positions.getLongs()[0] == 0)
    frame.cache(op.getCache()).reset();
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::CacheAppendOp op, Frame &frame, Context &) {
  Cache &cache = frame.cache(op.getCache());
  auto &ring = std::get<WindowRing>(cache.state);
  const Tensor &rows = frame.tensor(op.getRows());
  const Tensor &positions = frame.tensor(op.getPositions());
  int64_t tokens = rows.getDimSize(0);
  size_t dim = static_cast<size_t>(ring.type.getDim());
  KF_RETURN_IF_ERROR(checkPositions(op, positions, tokens));
  KF_RETURN_IF_ERROR(expectSize(op, "the row length", rows.getDimSize(1),
                                static_cast<int64_t>(dim)));
  mlir::Type element = ring.type.getElement();
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    size_t slot =
        static_cast<size_t>(positions.getLongs()[t] % ring.type.getRows());
    std::span<const float> source = row(rows.getFloats(), t, dim);
    std::span<float> target = row(std::span<float>(ring.rows), slot, dim);
    for (size_t d = 0; d < dim; ++d)
      target[d] = storedAs(element, source[d]);
  }
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::CacheReadOp op, Frame &frame, Context &) {
  Cache &cache = frame.cache(op.getCache());
  if (auto *ring = std::get_if<WindowRing>(&cache.state)) {
    frame.set(op.getResult(),
              Tensor({ring->type.getRows(), ring->type.getDim()}, ring->rows));
    return absl::OkStatus();
  }
  auto &state = std::get<CompressorState>(cache.state);
  int64_t dim = state.type.getDim();
  std::vector<float> entries;
  if (state.compressor) {
    std::span<const float> cached = state.compressor->entries();
    entries.reserve(cached.size());
    for (float v : cached)
      entries.push_back(storedAs(state.type.getElement(), v));
  }
  int64_t count = static_cast<int64_t>(entries.size()) / dim;
  frame.set(op.getResult(), Tensor({count, dim}, std::move(entries)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::CompressOp op, Frame &frame, Context &context) {
  Cache &cache = frame.cache(op.getCache());
  auto &state = std::get<CompressorState>(cache.state);
  const Tensor &values = frame.tensor(op.getValues());
  const Tensor &gates = frame.tensor(op.getGates());
  const Tensor &positions = frame.tensor(op.getPositions());
  int64_t tokens = values.getDimSize(0);
  size_t width = static_cast<size_t>(state.type.getStateWidth());
  KF_RETURN_IF_ERROR(checkPositions(op, positions, tokens));
  KF_RETURN_IF_ERROR(checkConsecutive(op, positions));
  KF_RETURN_IF_ERROR(
      expectSize(op, "the gates' token count", gates.getDimSize(0), tokens));
  KF_RETURN_IF_ERROR(expectSize(op, "the projection width",
                                values.getDimSize(1),
                                static_cast<int64_t>(width)));
  KF_RETURN_IF_ERROR(expectSize(op, "the gates' width", gates.getDimSize(1),
                                static_cast<int64_t>(width)));
  if (tokens == 0)
    return absl::OkStatus();
  std::array<const Weight *, 2> weights = {&frame.weight(op.getApe()),
                                           &frame.weight(op.getNorm())};
  float eps = op.getEps().convertToFloat();
  mlir::kf::EntryPost post = op.getPost();
  int64_t first = positions.getLongs()[0];
  if (first != state.fed)
    return opError(
        op, "cache @" + cache.name + " has taken " + llvm::Twine(state.fed) +
                " tokens, so the next one is at position " +
                llvm::Twine(state.fed) + ", got " + llvm::Twine(first));

  if (!state.compressor) {
    // The compressor of §4.3 as the reference's attention layer makes
    // it: fp8 entries are the main compressor's simulation, Hadamard + fp4
    // the indexer's; `none` is either without simulation. It is fed the
    // projections the graph's linears computed, so it needs no kv and gate
    // weights of its own.
    KF_ASSIGN_OR_RETURN(int ratio, intAttr(op, "ratio", state.type.getRatio()));
    KF_ASSIGN_OR_RETURN(int dim, intAttr(op, "entry dim", state.type.getDim()));
    KF_ASSIGN_OR_RETURN(int ropeDim,
                        intAttr(op, "rope dim", op.getRope().getDim()));
    if (ropeDim >= dim)
      return opError(op, "rope dim " + llvm::Twine(ropeDim) +
                             " leaves no unrotated dims of the " +
                             llvm::Twine(dim) + "-dim entries");
    KF_ASSIGN_OR_RETURN(std::span<const float> freqs,
                        context.getRopeFrequencies(op, op.getRope()));
    KF_ASSIGN_OR_RETURN(std::span<const float> ape,
                        getFloats(frame.weight(op.getApe())));
    KF_ASSIGN_OR_RETURN(std::span<const float> norm,
                        getFloats(frame.weight(op.getNorm())));
    reference::CompressorKind kind = post == mlir::kf::EntryPost::hadamard_fp4
                                         ? reference::CompressorKind::Indexer
                                         : reference::CompressorKind::Main;
    state.compressor.emplace(
        reference::CompressorWeights{{}, {}, ape, norm},
        reference::CompressorShape{ratio, state.type.getOverlap(), dim, ropeDim,
                                   eps},
        kind, freqs,
        reference::Options{.simulateQuantization =
                               post != mlir::kf::EntryPost::none});
    state.weights = weights;
    state.rope = op.getRope();
    state.post = post;
    state.eps = eps;
  } else if (state.weights != weights || state.rope != op.getRope() ||
             state.post != post || state.eps != eps) {
    // The entries so far were built with the first op's weights.
    return opError(op, "cache @" + cache.name +
                           " was fed since its reset by a kf.compress with "
                           "other weights or attributes");
  }

  // The simulated entries take block scales, which need finite values; the
  // pooled entries of finite projections are finite.
  if (post != mlir::kf::EntryPost::none) {
    KF_RETURN_IF_ERROR(expectFinite(op, "the values", values.getFloats()));
    KF_RETURN_IF_ERROR(expectFinite(op, "the gates", gates.getFloats()));
  }
  if (state.fed == 0) {
    // A sequence's first tokens, as the reference's prefill feeds them.
    state.compressor->prefillProjected(values.getFloats(), gates.getFloats());
  } else {
    for (size_t t = 0; t < static_cast<size_t>(tokens); ++t)
      state.compressor->decodeProjected(row(values.getFloats(), t, width),
                                        row(gates.getFloats(), t, width),
                                        positions.getLongs()[t]);
  }
  state.fed += tokens;
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Index sets
//===----------------------------------------------------------------------===//

absl::Status execute(mlir::kf::WindowIndicesOp op, Frame &frame, Context &) {
  const Tensor &positions = frame.tensor(op.getPositions());
  int64_t tokens = positions.getDimSize(0);
  KF_RETURN_IF_ERROR(checkPositions(op, positions, tokens));
  KF_ASSIGN_OR_RETURN(
      int window, intAttr(op, "window", static_cast<int64_t>(op.getWindow())));
  const std::optional<uint64_t> ring = op.getRing();
  if (!ring)
    KF_RETURN_IF_ERROR(checkConsecutive(op, positions));
  // The call's rows went into the ring before it is read: more of them than
  // the slots past the window overwrite the window of the first ones.
  if (ring && static_cast<uint64_t>(tokens) + window - 1 > *ring)
    return opError(
        op, "a call of " + llvm::Twine(tokens) + " tokens through a ring of " +
                llvm::Twine(*ring) + " slots, which holds a window of " +
                llvm::Twine(window) + " and at most " +
                llvm::Twine(*ring - window + 1) + " tokens of a call");
  std::span<const int64_t> p = positions.getLongs();
  std::vector<int32_t> out(static_cast<size_t>(tokens) *
                           static_cast<size_t>(window));
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    std::span<int32_t> indices = row(std::span<int32_t>(out), t, window);
    reference::windowPositions(p[t], indices);
    for (int32_t &q : indices) {
      if (q < 0)
        continue;
      if (ring) {
        q = static_cast<int32_t>(static_cast<uint64_t>(q) % *ring);
      } else if (q < p[0]) {
        // The fresh bank holds the call's own rows only.
        return opError(op, "position " + llvm::Twine(q) + " in the window of " +
                               llvm::Twine(p[t]) +
                               " precedes the call's first position " +
                               llvm::Twine(p[0]) +
                               ", which a bank of fresh rows does not hold");
      } else {
        q -= static_cast<int32_t>(p[0]);
      }
    }
  }
  frame.set(op.getResult(),
            Tensor({tokens, static_cast<int64_t>(window)}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::VisibleEntriesOp op, Frame &frame, Context &) {
  const Tensor &positions = frame.tensor(op.getPositions());
  const Tensor &entries = frame.tensor(op.getEntries());
  int64_t tokens = positions.getDimSize(0), count = entries.getDimSize(0);
  KF_RETURN_IF_ERROR(checkPositions(op, positions, tokens));
  KF_ASSIGN_OR_RETURN(
      int ratio, intAttr(op, "ratio", static_cast<int64_t>(op.getRatio())));
  std::vector<int32_t> out(static_cast<size_t>(tokens * count));
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    int64_t pos = positions.getLongs()[t];
    KF_ASSIGN_OR_RETURN(int64_t visible,
                        visibleEntries(op, pos, ratio, count, "were built"));
    std::span<int32_t> indices = row(std::span<int32_t>(out), t, count);
    for (int64_t c = 0; c < count; ++c)
      indices[c] = c < visible ? static_cast<int32_t>(c) : -1;
  }
  frame.set(op.getResult(), Tensor({tokens, count}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::IndexerScoresOp op, Frame &frame, Context &) {
  const Tensor &query = frame.tensor(op.getQuery());
  const Tensor &weights = frame.tensor(op.getWeights());
  const Tensor &keys = frame.tensor(op.getKeys());
  int64_t tokens = query.getDimSize(0), heads = query.getDimSize(1),
          dim = query.getDimSize(2), count = keys.getDimSize(0);
  KF_RETURN_IF_ERROR(expectSize(op, "the weights' token count",
                                weights.getDimSize(0), tokens));
  KF_RETURN_IF_ERROR(
      expectSize(op, "the weights per token", weights.getDimSize(1), heads));
  KF_RETURN_IF_ERROR(expectSize(op, "the key length", keys.getDimSize(1), dim));
  KF_ASSIGN_OR_RETURN(int h, intAttr(op, "head count", heads));
  KF_ASSIGN_OR_RETURN(int d, intAttr(op, "head dim", dim));
  float scale = op.getScale().convertToFloat();
  std::vector<float> out(static_cast<size_t>(tokens * count));
  std::vector<float> w(static_cast<size_t>(heads));
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    // The reference scales the bf16 projection by an fp32 factor and keeps
    // the product in bf16.
    std::span<const float> projection = row(weights.getFloats(), t, heads);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = reference::roundBf16(projection[i] * scale);
    reference::indexerScores(row(query.getFloats(), t, heads * dim), w,
                             keys.getFloats(), h, d,
                             row(std::span<float>(out), t, count));
  }
  frame.set(op.getResult(), Tensor({tokens, count}, std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::kf::IndexerTopKOp op, Frame &frame, Context &) {
  const Tensor &scores = frame.tensor(op.getScores());
  const Tensor &positions = frame.tensor(op.getPositions());
  int64_t tokens = scores.getDimSize(0), count = scores.getDimSize(1);
  KF_RETURN_IF_ERROR(checkPositions(op, positions, tokens));
  KF_ASSIGN_OR_RETURN(
      int ratio, intAttr(op, "ratio", static_cast<int64_t>(op.getRatio())));
  int64_t picks = std::min(static_cast<int64_t>(op.getK()), count);
  std::vector<int32_t> out(static_cast<size_t>(tokens * picks));
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    int64_t pos = positions.getLongs()[t];
    KF_ASSIGN_OR_RETURN(int64_t visible,
                        visibleEntries(op, pos, ratio, count, "are scored"));
    std::span<const float> candidates = row(scores.getFloats(), t, count);
    for (int64_t c = 0; c < visible; ++c)
      if (std::isnan(candidates[c]))
        return opError(op, "the score of entry " + llvm::Twine(c) +
                               " for token " + llvm::Twine(t) + " is NaN");
    reference::indexerSelect(candidates, static_cast<size_t>(visible),
                             row(std::span<int32_t>(out), t, picks));
  }
  frame.set(op.getResult(), Tensor({tokens, picks}, std::move(out)));
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

absl::Status execute(mlir::kf::SparseAttentionOp op, Frame &frame, Context &) {
  const Tensor &query = frame.tensor(op.getQuery());
  const Tensor &window = frame.tensor(op.getWindow());
  const Tensor &windowIndices = frame.tensor(op.getWindowIndices());
  int64_t tokens = query.getDimSize(0), heads = query.getDimSize(1),
          dim = query.getDimSize(2), windowRows = window.getDimSize(0);
  KF_ASSIGN_OR_RETURN(int h, intAttr(op, "head count", heads));
  KF_ASSIGN_OR_RETURN(int d, intAttr(op, "head dim", dim));
  KF_RETURN_IF_ERROR(
      expectSize(op, "the window row length", window.getDimSize(1), dim));
  KF_RETURN_IF_ERROR(expectSize(op, "the window indices' token count",
                                windowIndices.getDimSize(0), tokens));
  KF_ASSIGN_OR_RETURN(std::span<const float> sinks,
                      getFloats(frame.weight(op.getSinks())));
  KF_RETURN_IF_ERROR(expectSize(op, "the number of sinks",
                                static_cast<int64_t>(sinks.size()), heads));

  // The bank: the window rows, then the entries (reference prefill and
  // decode alike).
  std::vector<float> bank(window.getFloats().begin(), window.getFloats().end());
  const Tensor *entryIndices = nullptr;
  int64_t entryRows = 0;
  if (op.getEntries()) {
    const Tensor &entries = frame.tensor(op.getEntries());
    entryIndices = &frame.tensor(op.getEntryIndices());
    entryRows = entries.getDimSize(0);
    KF_RETURN_IF_ERROR(
        expectSize(op, "the entry row length", entries.getDimSize(1), dim));
    KF_RETURN_IF_ERROR(expectSize(op, "the entry indices' token count",
                                  entryIndices->getDimSize(0), tokens));
    bank.insert(bank.end(), entries.getFloats().begin(),
                entries.getFloats().end());
  }
  if (windowRows + entryRows > std::numeric_limits<int32_t>::max())
    return opError(op, "the bank of " + llvm::Twine(windowRows + entryRows) +
                           " rows is too large to index");

  int64_t windowWidth = windowIndices.getDimSize(1);
  int64_t entryWidth = entryIndices ? entryIndices->getDimSize(1) : 0;
  float scale = op.getScale().convertToFloat();
  size_t qWidth = static_cast<size_t>(heads * dim);
  std::vector<float> out(static_cast<size_t>(tokens) * qWidth);
  std::vector<int32_t> idx;
  for (size_t t = 0; t < static_cast<size_t>(tokens); ++t) {
    idx.clear();
    for (int32_t i : row(windowIndices.getInts(), t, windowWidth)) {
      if (i < -1 || i >= windowRows)
        return opError(op, "window index " + llvm::Twine(i) + " of token " +
                               llvm::Twine(t) + " is outside [-1, " +
                               llvm::Twine(windowRows) + ")");
      idx.push_back(i);
    }
    if (entryIndices) {
      for (int32_t c : row(entryIndices->getInts(), t, entryWidth)) {
        if (c < -1 || c >= entryRows)
          return opError(op, "entry index " + llvm::Twine(c) + " of token " +
                                 llvm::Twine(t) + " is outside [-1, " +
                                 llvm::Twine(entryRows) + ")");
        idx.push_back(c < 0 ? -1 : static_cast<int32_t>(windowRows) + c);
      }
    }
    reference::sparseAttention(row(query.getFloats(), t, qWidth), bank, sinks,
                               idx, h, d, scale,
                               row(std::span<float>(out), t, qWidth));
  }
  frame.set(op.getResult(), Tensor({tokens, heads, dim}, std::move(out)));
  return absl::OkStatus();
}

} // namespace kf::deepseek_v4::interpreter::detail
