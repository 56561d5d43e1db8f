//===- LowerOps.cpp - Graph ops to compiled step kernels ------------------===//
//
// Each graph op with an op emitter becomes a kf.step calling the kernel the
// emitter builds for its instance into the module's `module @kernels`
// (docs/engine.md, "Op kernels"). Every such kernel takes the op's operands
// in order, then its result, and does one innermost row per work item, so a
// [T, H, D] input has H items per token row (a swiglu's [T, k] routing
// weights, one per row, go item by item with them). A rope's positions, one
// per token, are read whole: item i reads the position of token i / H. The
// hyper-connection kernels mix a token's streams, the MoE combine sums a
// token's slots, the embedding looks up a token's id and the MoE gate routes
// a token (the hash gate's token ids read item by item, 4 bytes each): one
// token per item. An argmax reduces each innermost row of its input to one
// index, one row per item.
//
//===----------------------------------------------------------------------===//

#include "kf/Passes/Passes.h"

#include "KernelDecisions.h"
#include "QuantKernels.h"

#include "kf/Codegen/ArgmaxKernel.h"
#include "kf/Codegen/AttentionIndexKernels.h"
#include "kf/Codegen/CacheKernels.h"
#include "kf/Codegen/CompressKernel.h"
#include "kf/Codegen/EmbedKernel.h"
#include "kf/Codegen/HadamardKernel.h"
#include "kf/Codegen/HcExpandKernel.h"
#include "kf/Codegen/HcHeadKernel.h"
#include "kf/Codegen/HcPostKernel.h"
#include "kf/Codegen/HcPreKernel.h"
#include "kf/Codegen/IndexerScoresKernel.h"
#include "kf/Codegen/MoeCombineKernel.h"
#include "kf/Codegen/MoeGateKernel.h"
#include "kf/Codegen/QuantSimKernel.h"
#include "kf/Codegen/RmsNormKernel.h"
#include "kf/Codegen/RopeKernel.h"
#include "kf/Codegen/SparseAttentionKernel.h"
#include "kf/Codegen/SwigluKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFLOWEROPS
#include "kf/Passes/Passes.h.inc"

namespace {

namespace codegen = ::kf::codegen;

/// The rows of the innermost dimension per leading (token) row of `type`.
int64_t innerRowsPerRow(RankedTensorType type) {
  int64_t rows = 1;
  for (int64_t d = 1; d + 1 < type.getRank(); ++d)
    rows *= type.getDimSize(d);
  return rows;
}

struct LowerOpsPass : impl::KfLowerOpsBase<LowerOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = getTargetOrError(module, "kf-lower-ops");
    if (!targetAttr)
      return signalPassFailure();
    ::kf::target::TargetInfo target = targetAttr.getTargetInfo();
    KernelModule kernels(module, target, "kf-lower-ops");
    if (failed(lowerCacheOps(module, kernels)) ||
        failed(lowerIndexOps(module, kernels)))
      return signalPassFailure();

    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<RmsNormOp, Fp8SimOp, Fp4SimOp, SwigluOp, HadamardOp, RopeOp,
              HcExpandOp, HcPreOp, HcPostOp, HcHeadOp, MoeCombineOp, ArgmaxOp,
              EmbedOp, MoeGateOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      FailureOr<SymbolRefAttr> callee =
          TypeSwitch<Operation *, FailureOr<SymbolRefAttr>>(op)
              .Case([&](RmsNormOp norm) { return buildKernel(norm, kernels); })
              .Case<Fp8SimOp, Fp4SimOp>(
                  [&](auto sim) { return buildKernel(sim, kernels); })
              .Case(
                  [&](SwigluOp swiglu) { return buildKernel(swiglu, kernels); })
              .Case([&](HadamardOp hadamard) {
                return buildKernel(hadamard, kernels);
              })
              .Case([&](RopeOp rope) { return buildKernel(rope, kernels); })
              .Case<HcExpandOp, HcPreOp, HcPostOp, HcHeadOp>(
                  [&](auto hc) { return buildKernel(hc, kernels); })
              .Case<MoeCombineOp, ArgmaxOp, EmbedOp, MoeGateOp>(
                  [&](auto other) { return buildKernel(other, kernels); });
      if (failed(callee))
        return signalPassFailure();
      // A rope's item reads its token's position: operand 1, the
      // positions ([T], one per token, not one per item), whole.
      static constexpr int64_t kRopePositions[] = {1};
      ArrayRef<int64_t> whole;
      if (isa<RopeOp>(op))
        whole = kRopePositions;
      // The hyper-connection kernels mix a token's streams, the MoE combine
      // sums a token's slots, the embedding reads a token's id, the MoE gate
      // routes a token (a hash gate reading its id): one item per token.
      std::optional<int64_t> itemsPerRow;
      if (isa<HcExpandOp, HcPreOp, HcPostOp, HcHeadOp, MoeCombineOp, EmbedOp,
              MoeGateOp>(op))
        itemsPerRow = 1;
      // An argmax's result drops the innermost dimension: its items are
      // the input's innermost rows.
      if (auto argmax = dyn_cast<ArgmaxOp>(op))
        itemsPerRow = innerRowsPerRow(argmax.getInput().getType());
      replaceWithStep(op, *callee, whole, itemsPerRow);
    }
  }

  /// Replaces `op` by a kf.step of `callee` on its operands (the kernels
  /// take them in the op's order, results last), one item per innermost row,
  /// the operands `whole` read whole.
  void replaceWithStep(Operation *op, SymbolRefAttr callee,
                       ArrayRef<int64_t> whole,
                       std::optional<int64_t> itemsPerRow) {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    OpBuilder b(op);
    auto step = StepOp::create(
        b, op->getLoc(), op->getResultTypes(), callee, op->getOperands(),
        itemsPerRow.value_or(innerRowsPerRow(type)), whole);
    op->replaceAllUsesWith(step.getResults());
    op->erase();
  }

  /// The cache ops: a reset costs nothing (every cache is addressed by
  /// position, and nothing reads what the sequence has not written); an
  /// append writes its rows into the ring; a compressor's entries kernel
  /// builds the entries its tokens complete and its state kernel then keeps
  /// their projections (docs/engine.md, "State").
  LogicalResult lowerCacheOps(ModuleOp module, KernelModule &kernels) {
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<CacheResetOp, CacheAppendOp, CompressOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (isa<CacheResetOp>(op)) {
        op->erase();
        continue;
      }
      OpBuilder b(op);
      if (auto append = dyn_cast<CacheAppendOp>(op)) {
        WindowCacheType ring = append.getCache().getType();
        std::optional<::kf::Format> element = getElement(op, ring.getElement());
        if (!element)
          return failure();
        codegen::CacheAppendKernelSpec spec{ring.getRows(), ring.getDim(),
                                            *element};
        SymbolRefAttr callee =
            kernels.getOrBuild(op, spec, codegen::buildCacheAppendKernel);
        if (!callee)
          return failure();
        // Item t reads its row and position.
        StepOp::create(b, op->getLoc(), TypeRange{}, callee,
                       ValueRange{append.getRows(), append.getPositions(),
                                  append.getCache()},
                       1, ArrayRef<int64_t>{});
        op->erase();
        continue;
      }
      auto compress = cast<CompressOp>(op);
      CompressedCacheType cache = compress.getCache().getType();
      auto bound =
          module->getAttrOfType<IntegerAttr>(KfDialect::kMaxContextAttrName);
      if (!bound)
        return op->emitOpError()
               << "kf-lower-ops: the module's caches are not bounded; run "
                  "--kf-bound-context first";
      std::optional<::kf::Format> element = getElement(op, cache.getElement());
      if (!element)
        return failure();
      if (compress.getApe().getType().getFormat() != Format::F32)
        return op->emitOpError()
               << "kf-lower-ops: the compressor kernel reads an f32 ape, got "
               << compress.getApe().getType();
      FailureOr<SmallVector<float>> frequencies =
          compress.getRope().getFrequencies();
      if (failed(frequencies))
        return op->emitOpError() << "kf-lower-ops: the YaRN ramp of the "
                                    "rope is empty, so it has no frequencies";
      const int64_t capacity = cache.getCapacity(bound.getInt());
      codegen::CompressEntriesKernelSpec entries;
      entries.ratio = cache.getRatio();
      entries.overlap = cache.getOverlap();
      entries.dim = cache.getDim();
      entries.ropeDim = compress.getRope().getDim();
      entries.frequencies.assign(frequencies->begin(), frequencies->end());
      entries.eps = compress.getEps().convertToFloat();
      switch (compress.getPost()) {
      case EntryPost::none:
        entries.post = codegen::EntryPost::None;
        break;
      case EntryPost::fp8:
        entries.post = codegen::EntryPost::Fp8;
        break;
      case EntryPost::hadamard_fp4:
        entries.post = codegen::EntryPost::HadamardFp4;
        break;
      }
      entries.element = *element;
      entries.capacity = capacity;
      codegen::CompressStateKernelSpec state{cache.getRatio(),
                                             cache.getOverlap(),
                                             cache.getStateWidth(), capacity};
      SymbolRefAttr entriesKernel =
          kernels.getOrBuild(op, entries, codegen::buildCompressEntriesKernel);
      SymbolRefAttr stateKernel =
          kernels.getOrBuild(op, state, codegen::buildCompressStateKernel);
      if (!entriesKernel || !stateKernel)
        return failure();
      // An entry pools the projections of its block's tokens, whichever
      // item computed them: the projections and positions are read whole.
      static constexpr int64_t kEntriesWhole[] = {0, 1, 2};
      StepOp::create(b, op->getLoc(), TypeRange{}, entriesKernel,
                     ValueRange{compress.getValues(), compress.getGates(),
                                compress.getPositions(), compress.getApe(),
                                compress.getNorm(), compress.getCache()},
                     1, kEntriesWhole);
      // Item t keeps its own projections; positions[0] places them.
      static constexpr int64_t kStateWhole[] = {2};
      StepOp::create(b, op->getLoc(), TypeRange{}, stateKernel,
                     ValueRange{compress.getValues(), compress.getGates(),
                                compress.getPositions(), compress.getCache()},
                     1, kStateWhole);
      op->erase();
    }
    return success();
  }

  /// The attention's index ops, one token per item but the indexer's
  /// scores, a block of entries per item. Their compressed entries are
  /// bounded (--kf-bound-context): E static.
  LogicalResult lowerIndexOps(ModuleOp module, KernelModule &kernels) {
    // A ring's indices are its slots: the ring the indices count must be
    // the one the attention reads, or it reads past it.
    WalkResult rings = module.walk([&](SparseAttentionOp op) {
      auto read = op.getWindow().getDefiningOp<CacheReadOp>();
      auto indices = op.getWindowIndices().getDefiningOp<WindowIndicesOp>();
      auto ring = read ? dyn_cast<WindowCacheType>(read.getCache().getType())
                       : WindowCacheType();
      if (!ring && indices && indices.getRing()) {
        op.emitOpError() << "kf-lower-ops: its window indices are a ring's "
                            "slots, but its bank is not a ring read";
        return WalkResult::interrupt();
      }
      if (ring &&
          (!indices || !indices.getRing() ||
           static_cast<int64_t>(*indices.getRing()) != ring.getRows())) {
        op.emitOpError() << "kf-lower-ops: it reads a ring of "
                         << ring.getRows()
                         << " rows through indices that are not that ring's "
                            "slots (kf.window_indices ring("
                         << ring.getRows() << "))";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (rings.wasInterrupted())
      return failure();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<WindowIndicesOp, VisibleEntriesOp, IndexerScoresOp, IndexerTopKOp,
              SparseAttentionOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      auto step = [&](SymbolRefAttr callee, ValueRange inputs,
                      int64_t itemsPerRow, ArrayRef<int64_t> whole) {
        auto created = StepOp::create(b, op->getLoc(), op->getResultTypes(),
                                      callee, inputs, itemsPerRow, whole);
        op->replaceAllUsesWith(created.getResults());
        op->erase();
      };
      auto entriesOf = [&](Value v, int64_t d) -> int64_t {
        return cast<RankedTensorType>(v.getType()).getDimSize(d);
      };
      if (auto window = dyn_cast<WindowIndicesOp>(op)) {
        codegen::WindowIndicesKernelSpec spec{
            static_cast<int64_t>(window.getWindow()),
            static_cast<int64_t>(window.getRing().value_or(0))};
        SymbolRefAttr callee =
            kernels.getOrBuild(op, spec, codegen::buildWindowIndicesKernel);
        if (!callee)
          return failure();
        // Without a ring, a token's rows count from the call's first
        // position.
        static constexpr int64_t kWhole[] = {0};
        step(callee, window->getOperands(), 1, kWhole);
        continue;
      }
      if (auto visible = dyn_cast<VisibleEntriesOp>(op)) {
        int64_t entries = entriesOf(visible.getEntries(), 0);
        if (ShapedType::isDynamic(entries))
          return unbounded(op);
        codegen::VisibleEntriesKernelSpec spec{
            entries, static_cast<int64_t>(visible.getRatio())};
        SymbolRefAttr callee =
            kernels.getOrBuild(op, spec, codegen::buildVisibleEntriesKernel);
        if (!callee)
          return failure();
        static constexpr int64_t kWhole[] = {0, 1};
        step(callee, visible->getOperands(), 1, kWhole);
        continue;
      }
      if (auto topk = dyn_cast<IndexerTopKOp>(op)) {
        int64_t entries = entriesOf(topk.getScores(), 1);
        if (ShapedType::isDynamic(entries))
          return unbounded(op);
        codegen::IndexerTopKKernelSpec spec{
            entries, static_cast<int64_t>(topk.getK()),
            static_cast<int64_t>(topk.getRatio())};
        SymbolRefAttr callee =
            kernels.getOrBuild(op, spec, codegen::buildIndexerTopKKernel);
        if (!callee)
          return failure();
        static constexpr int64_t kWhole[] = {1};
        step(callee, topk->getOperands(), 1, kWhole);
        continue;
      }
      if (auto attention = dyn_cast<SparseAttentionOp>(op)) {
        auto query = cast<RankedTensorType>(attention.getQuery().getType());
        codegen::SparseAttentionKernelSpec spec;
        spec.heads = query.getDimSize(1);
        spec.dim = query.getDimSize(2);
        spec.windowWidth = entriesOf(attention.getWindowIndices(), 1);
        spec.entryWidth = attention.getEntryIndices()
                              ? entriesOf(attention.getEntryIndices(), 1)
                              : 0;
        if (ShapedType::isDynamic(spec.entryWidth))
          return unbounded(op);
        spec.scale = attention.getScale().convertToFloat();
        spec.headsPerItem =
            codegen::SparseAttentionKernelSpec::defaultHeadsPerItem(spec.heads);
        SymbolRefAttr callee =
            kernels.getOrBuild(op, spec, codegen::buildSparseAttentionKernel);
        if (!callee)
          return failure();
        // An item is a group of a token's heads: every bank row and index
        // of the token may be read by each of its groups.
        static constexpr int64_t kWindowWhole[] = {1, 2};
        static constexpr int64_t kEntriesWhole[] = {1, 2, 3, 4};
        step(callee, attention->getOperands(), spec.getItemsPerToken(),
             attention.getEntries() ? ArrayRef<int64_t>(kEntriesWhole)
                                    : ArrayRef<int64_t>(kWindowWhole));
        continue;
      }
      auto scores = cast<IndexerScoresOp>(op);
      // Only the entries a token sees are scored (the others are -inf):
      // their count comes from the top-k that reads the scores.
      IndexerTopKOp topk;
      if (scores->hasOneUse())
        topk = dyn_cast<IndexerTopKOp>(*scores->getUsers().begin());
      if (!topk)
        return op->emitOpError() << "kf-lower-ops: the scores' kernel needs "
                                    "the positions and ratio of the "
                                    "kf.indexer_topk that alone reads them";
      auto query = cast<RankedTensorType>(scores.getQuery().getType());
      codegen::IndexerScoresKernelSpec spec;
      spec.heads = query.getDimSize(1);
      spec.dim = query.getDimSize(2);
      spec.entries = entriesOf(scores.getKeys(), 0);
      if (ShapedType::isDynamic(spec.entries))
        return unbounded(op);
      spec.scale = scores.getScale().convertToFloat();
      spec.ratio = static_cast<int64_t>(topk.getRatio());
      spec.entryBlock =
          codegen::IndexerScoresKernelSpec::defaultEntryBlock(spec.entries);
      SymbolRefAttr callee =
          kernels.getOrBuild(op, spec, codegen::buildIndexerScoresKernel);
      if (!callee)
        return failure();
      // Every block of a token reads its query, weights and position, and
      // every token all keys.
      static constexpr int64_t kWhole[] = {0, 1, 2, 3};
      step(callee,
           ValueRange{scores.getQuery(), scores.getWeights(), scores.getKeys(),
                      topk.getPositions()},
           spec.getItemsPerToken(), kWhole);
    }
    return success();
  }

  static LogicalResult unbounded(Operation *op) {
    return op->emitOpError()
           << "kf-lower-ops: its entries are not bounded; run "
              "--kf-bound-context first";
  }

  /// The storage format of a cache's `element` type; none after reporting
  /// an error on `op`.
  static std::optional<::kf::Format> getElement(Operation *op, Type element) {
    if (element.isF32())
      return ::kf::Format::F32;
    if (element.isF16())
      return ::kf::Format::F16;
    if (element.isBF16())
      return ::kf::Format::BF16;
    op->emitOpError() << "kf-lower-ops: a cache of " << element
                      << " has no kernel; f32, f16 and bf16 do";
    return std::nullopt;
  }

  FailureOr<SymbolRefAttr> built(SymbolRefAttr callee) {
    if (!callee)
      return failure();
    return callee;
  }

  FailureOr<SymbolRefAttr> buildKernel(RmsNormOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    Value weight = op.getWeight();
    if (weight && !isa<QWeightType>(weight.getType()))
      return op.emitOpError()
             << "kf-lower-ops: a weight that is not a !kf.qweight has no "
                "buffer in a plan (a constant weight of ones is folded away "
                "by -canonicalize)";
    codegen::RmsNormKernelSpec spec;
    spec.d = type.getShape().back();
    spec.eps = op.getEps().convertToFloat();
    spec.weighted = static_cast<bool>(weight);
    spec.bf16Compute = op.getCompute() == Precision::bf16;
    return built(kernels.getOrBuild(op, spec, codegen::buildRmsNormKernel));
  }

  template <typename SimOp>
  FailureOr<SymbolRefAttr> buildKernel(SimOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    codegen::QuantSimKernelSpec spec;
    spec.format = std::is_same_v<SimOp, Fp8SimOp>
                      ? codegen::QuantSimFormat::E4m3
                      : codegen::QuantSimFormat::E2m1;
    spec.rowLength = type.getShape().back();
    spec.block = static_cast<int64_t>(op.getBlock());
    spec.leading = static_cast<int64_t>(op.getLeading().value_or(0));
    return built(kernels.getOrBuild(op, spec, codegen::buildQuantSimKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(SwigluOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getGate().getType());
    codegen::SwigluKernelSpec spec;
    spec.f = type.getShape().back();
    spec.limit = op.getLimit().convertToFloat();
    spec.weighted = static_cast<bool>(op.getWeights());
    return built(kernels.getOrBuild(op, spec, codegen::buildSwigluKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(HadamardOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    codegen::HadamardKernelSpec spec;
    spec.n = type.getShape().back();
    return built(kernels.getOrBuild(op, spec, codegen::buildHadamardKernel));
  }

  /// A hyper-connection op's streams: [T, mult, D].
  static std::pair<int64_t, int64_t> streamShape(Value streams) {
    auto type = cast<RankedTensorType>(streams.getType());
    return {type.getDimSize(1), type.getDimSize(2)};
  }

  FailureOr<SymbolRefAttr> buildKernel(HcExpandOp op, KernelModule &kernels) {
    auto [mult, d] = streamShape(op.getResult());
    return built(kernels.getOrBuild(op, codegen::HcExpandKernelSpec{mult, d},
                                    codegen::buildHcExpandKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(HcPreOp op, KernelModule &kernels) {
    auto [mult, d] = streamShape(op.getStreams());
    codegen::HcPreKernelSpec spec{
        mult, d, static_cast<int64_t>(op.getSinkhornIters()),
        op.getEps().convertToFloat(), op.getNormEps().convertToFloat()};
    return built(kernels.getOrBuild(op, spec, codegen::buildHcPreKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(HcPostOp op, KernelModule &kernels) {
    auto [mult, d] = streamShape(op.getStreams());
    return built(kernels.getOrBuild(op, codegen::HcPostKernelSpec{mult, d},
                                    codegen::buildHcPostKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(HcHeadOp op, KernelModule &kernels) {
    auto [mult, d] = streamShape(op.getStreams());
    codegen::HcHeadKernelSpec spec{mult, d, op.getEps().convertToFloat(),
                                   op.getNormEps().convertToFloat()};
    return built(kernels.getOrBuild(op, spec, codegen::buildHcHeadKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(MoeCombineOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getRouted().getType());
    codegen::MoeCombineKernelSpec spec{type.getDimSize(1), type.getDimSize(2)};
    return built(kernels.getOrBuild(op, spec, codegen::buildMoeCombineKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(ArgmaxOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    if (type.getRank() < 2)
      return op.emitOpError()
             << "kf-lower-ops: the argmax of a tensor without a token "
                "dimension is a scalar, which a step does not write";
    codegen::ArgmaxKernelSpec spec{type.getShape().back()};
    return built(kernels.getOrBuild(op, spec, codegen::buildArgmaxKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(EmbedOp op, KernelModule &kernels) {
    QWeightType table = op.getTable().getType();
    // The table is read as stored: the kernel decodes the file's format.
    codegen::EmbedKernelSpec spec{static_cast<::kf::Format>(table.getFormat()),
                                  table.getRows(), table.getCols()};
    return built(kernels.getOrBuild(op, spec, codegen::buildEmbedKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(MoeGateOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getLogits().getType());
    if (type.isDynamicDim(1))
      return op.emitOpError()
             << "kf-lower-ops: the number of experts must be static";
    codegen::MoeGateKernelSpec spec;
    spec.experts = type.getDimSize(1);
    spec.k = static_cast<int64_t>(op.getK());
    spec.routeScale = op.getRouteScale().convertToFloat();
    if (op.isHashRouted())
      spec.vocab = op.getTid2eid().getType().getRows();
    return built(kernels.getOrBuild(op, spec, codegen::buildMoeGateKernel));
  }

  FailureOr<SymbolRefAttr> buildKernel(RopeOp op, KernelModule &kernels) {
    auto type = cast<RankedTensorType>(op.getInput().getType());
    RopeAttr rope = op.getRope();
    FailureOr<SmallVector<float>> frequencies = rope.getFrequencies();
    if (failed(frequencies))
      return op.emitOpError()
             << "kf-lower-ops: the YaRN ramp of the rope is empty, so it has "
                "no frequencies";
    codegen::RopeKernelSpec spec;
    spec.d = type.getShape().back();
    spec.ropeDim = rope.getDim();
    spec.rowsPerToken = innerRowsPerRow(type);
    spec.inverse = op.getInverse();
    spec.frequencies.assign(frequencies->begin(), frequencies->end());
    return built(kernels.getOrBuild(op, spec, codegen::buildRopeKernel));
  }
};

} // namespace
} // namespace mlir::kf
