//===- GraphStats.cpp - What a kf model graph costs -----------------------===//

#include "kf/Analysis/GraphStats.h"

#include "kf/runtime/format.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::kf;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool isIntegerTable(QWeightType type) {
  auto format = static_cast<::kf::Format>(type.getFormat());
  return ::kf::formatInfo(format).role == ::kf::FormatRole::Integer;
}

uint64_t elementCount(QWeightType type) {
  uint64_t n = 1;
  for (int64_t d : type.getShape())
    n *= static_cast<uint64_t>(d);
  return n;
}

uint64_t elementBytes(Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

//===----------------------------------------------------------------------===//
// Weights one decode token touches
//===----------------------------------------------------------------------===//

/// What a use of a weight reads for one token.
struct Touch {
  uint64_t bytes = 0;
  uint64_t parameters = 0;
};

Touch wholeWeight(QWeightType type) {
  return {type.getSizeInBytes(), isIntegerTable(type) ? 0 : elementCount(type)};
}

/// A lookup table reads one row per token and multiplies none of it, so it
/// adds no active parameters (as the embedding in parameters.cpp).
Touch oneRow(QWeightType type) {
  uint64_t rows = elementCount(type) / static_cast<uint64_t>(type.getCols());
  return {type.getSizeInBytes() / rows, 0};
}

/// The experts per token of `op` (a kf.moe or a kf.expert_qmatmul): the k
/// of the kf.moe_gate that routes its `ids`, else their static width.
FailureOr<int64_t> expertsPerToken(Operation *op, Value ids) {
  if (auto gate = ids.getDefiningOp<MoeGateOp>())
    return static_cast<int64_t>(gate.getK());
  auto type = cast<RankedTensorType>(ids.getType());
  if (!type.isDynamicDim(1))
    return type.getDimSize(1);
  return op->emitError() << "kf-graph-stats: cannot count the experts a token "
                            "reads: the "
                         << op->getName() << " ids come from no kf.moe_gate "
                         << "and are " << type << ", expected a static [T, k]";
}

/// What a token reads of an expert stack: k of its E equal experts.
FailureOr<Touch> expertSlices(Operation *op, Value ids, QWeightType type) {
  FailureOr<int64_t> k = expertsPerToken(op, ids);
  if (failed(k))
    return failure();
  auto experts = static_cast<uint64_t>(type.getShape().front());
  auto used = static_cast<uint64_t>(std::min<int64_t>(*k, experts));
  Touch all = wholeWeight(type);
  return Touch{all.bytes / experts * used, all.parameters / experts * used};
}

/// Sums the weights @decode and the functions it calls read for one token,
/// each weight once, by its most expensive use.
class DecodeWeightCounter {
public:
  FailureOr<DecodeWeightStats> count(func::FuncOp decode) {
    SmallVector<FunctionOpInterface> functions = {
        cast<FunctionOpInterface>(decode.getOperation())};
    DenseSet<Operation *> seen = {decode.getOperation()};
    for (size_t i = 0; i < functions.size(); ++i) {
      WalkResult walk = functions[i]->walk([&](Operation *op) {
        if (auto call = dyn_cast<CallOpInterface>(op))
          if (FunctionOpInterface callee = calleeOf(call))
            if (seen.insert(callee.getOperation()).second)
              functions.push_back(callee);
        auto get = dyn_cast<GetWeightOp>(op);
        if (get && failed(countUses(get.getResult(), get.getNameAttr())))
          return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return failure();
    }
    DecodeWeightStats stats;
    for (const Touch &touch : llvm::make_second_range(touched)) {
      stats.bytes += touch.bytes;
      stats.activeParameters += touch.parameters;
    }
    return stats;
  }

private:
  FunctionOpInterface calleeOf(CallOpInterface call) {
    auto callee = dyn_cast_or_null<FunctionOpInterface>(
        call.resolveCallableInTable(&symbols));
    return callee && !callee.isExternal() ? callee : FunctionOpInterface();
  }

  /// Follows a weight value into the callees it is passed to, so a graph
  /// split into functions counts the same.
  LogicalResult countUses(Value weight, FlatSymbolRefAttr name) {
    if (!visited.insert(weight).second)
      return success();
    auto type = cast<QWeightType>(weight.getType());
    for (OpOperand &use : weight.getUses()) {
      if (auto call = dyn_cast<CallOpInterface>(use.getOwner())) {
        FunctionOpInterface callee = calleeOf(call);
        unsigned first = call.getArgOperands().getBeginOperandIndex();
        unsigned index = use.getOperandNumber() - first;
        if (callee && use.getOperandNumber() >= first &&
            index < callee.getNumArguments()) {
          if (failed(countUses(callee.getArgument(index), name)))
            return failure();
          continue;
        }
      }
      FailureOr<Touch> touch = touchOf(use, type);
      if (failed(touch))
        return failure();
      Touch &total = touched[name.getAttr()];
      total.bytes = std::max(total.bytes, touch->bytes);
      total.parameters = std::max(total.parameters, touch->parameters);
    }
    return success();
  }

  FailureOr<Touch> touchOf(OpOperand &use, QWeightType type) {
    Operation *user = use.getOwner();
    if (auto moe = dyn_cast<MoeOp>(user)) {
      bool stack = &use == &moe.getGateExpsMutable() ||
                   &use == &moe.getUpExpsMutable() ||
                   &use == &moe.getDownExpsMutable();
      if (!stack)
        return wholeWeight(type);
      return expertSlices(moe, moe.getIds(), type);
    }
    // A lowered kf.moe's routed stacks, each read by its expert matmul.
    if (auto expert = dyn_cast<ExpertQMatmulOp>(user))
      return expertSlices(expert, expert.getIds(), type);
    if (auto embed = dyn_cast<EmbedOp>(user);
        embed && &use == &embed.getTableMutable())
      return oneRow(type);
    if (auto gate = dyn_cast<MoeGateOp>(user);
        gate && use.get() == gate.getTid2eid())
      return oneRow(type);
    return wholeWeight(type);
  }

  SymbolTableCollection symbols;
  DenseSet<Value> visited;
  llvm::MapVector<StringAttr, Touch> touched;
};

//===----------------------------------------------------------------------===//
// KV caches
//===----------------------------------------------------------------------===//

/// One layer's caches (`blk.L.kv`, `blk.L.compressor`, `blk.L.indexer`),
/// named by the part of the symbol before its last dot.
struct LayerCaches {
  SmallVector<std::pair<StringRef, Type>> caches; // role, type
  CacheOp first;                                  // the layer's first cache
  StringAttr kind; // the model's kf.layer_kind, if it names one
};

std::string describeCache(StringRef role, Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << role << " ";
  if (auto ring = dyn_cast<WindowCacheType>(type)) {
    os << "ring " << ring.getRows() << " x " << ring.getDim() << " "
       << ring.getElement();
  } else {
    auto compressed = cast<CompressedCacheType>(type);
    os << compressed.getDim() << " " << compressed.getElement() << " per "
       << compressed.getRatio() << " tokens";
  }
  return text;
}

/// The compressor's running state: fp32 projections and scores (two arrays)
/// of `ratio` token slots, twice as many when overlapping, each as wide as
/// the state (docs/models/deepseek_v4_model.md §4.3).
uint64_t stateBytes(CompressedCacheType type) {
  uint64_t slots = (type.getOverlap() ? 2 : 1) * type.getRatio();
  return 2 * slots * static_cast<uint64_t>(type.getStateWidth()) * 4;
}

/// The layers' caches grouped by kind. A layer's kind is what the model
/// names it (the caches' kf.layer_kind, which must agree within a layer), or
/// else its caches' roles joined by '+', e.g. "kv+compressor".
FailureOr<SmallVector<CacheKindStats>> countCaches(ModuleOp module,
                                                   int64_t context) {
  llvm::MapVector<StringRef, LayerCaches> layers;
  for (CacheOp cache : module.getOps<CacheOp>()) {
    auto [name, role] = cache.getSymName().rsplit('.');
    if (role.empty())
      role = name;
    LayerCaches &layer = layers[name];
    auto kind = cache->getAttrOfType<StringAttr>(KfDialect::kLayerKindAttrName);
    auto quoted = [](StringAttr kind) {
      return kind ? ("\"" + kind.getValue() + "\"").str() : "none";
    };
    if (layer.first && kind != layer.kind)
      return cache.emitOpError()
             << "names its layer's kind " << quoted(kind) << " but "
             << layer.first.getSymName() << " names it " << quoted(layer.kind);
    if (!layer.first) {
      layer.first = cache;
      layer.kind = kind;
    }
    layer.caches.push_back({role, cache.getType()});
  }

  llvm::MapVector<std::string, CacheKindStats, std::map<std::string, unsigned>>
      kinds;
  for (const LayerCaches &layer : llvm::make_second_range(layers)) {
    std::string kind = layer.kind ? layer.kind.str() : std::string();
    uint64_t fixed = 0, atContext = 0;
    double perToken = 0;
    std::string caches;
    for (auto [role, type] : layer.caches) {
      if (!caches.empty())
        caches += ", ";
      caches += describeCache(role, type);
      if (!layer.kind) {
        if (!kind.empty())
          kind += '+';
        kind.append(role.begin(), role.end());
      }
      if (auto ring = dyn_cast<WindowCacheType>(type)) {
        fixed += static_cast<uint64_t>(ring.getRows()) * ring.getDim() *
                 elementBytes(ring.getElement());
        continue;
      }
      auto store = cast<CompressedCacheType>(type);
      uint64_t entry = store.getDim() * elementBytes(store.getElement());
      fixed += stateBytes(store);
      perToken += static_cast<double>(entry) / store.getRatio();
      atContext += static_cast<uint64_t>(context / store.getRatio()) * entry;
    }
    CacheKindStats &stats = kinds[kind + ": " + caches];
    stats.kind = kind;
    stats.caches = caches;
    stats.layers += 1;
    stats.fixedBytes = fixed;
    stats.bytesPerToken = perToken;
    stats.bytesAtContext += fixed + atContext;
  }
  return SmallVector<CacheKindStats>(llvm::make_second_range(kinds));
}

//===----------------------------------------------------------------------===//
// Activation arena
//===----------------------------------------------------------------------===//

/// Estimates the arena of one function: every tensor an op of its body
/// produces is a buffer, live from that op to its last use in program
/// order; the estimate is the peak of the bytes live at once.
class ArenaEstimator {
public:
  /// `tokens` replaces the dynamic token dimension; `context` is the
  /// sequence length the caches hold when the function reads them.
  ArenaEstimator(int64_t tokens, int64_t context)
      : tokens(tokens), context(context) {}

  ArenaStats estimate(func::FuncOp function) {
    SmallVector<Operation *> order;
    for (Block &block : function.getBody())
      for (Operation &op : block)
        order.push_back(&op);

    struct Buffer {
      uint64_t bytes;
      size_t first, last;
    };
    llvm::MapVector<Value, Buffer> buffers;
    DenseMap<Value, Value> root; // a reshape's result is its operand's buffer
    for (auto [index, op] : llvm::enumerate(order)) {
      for (Value result : op->getResults()) {
        if (!isa<RankedTensorType>(result.getType()))
          continue;
        // A reshape of an argument is the caller's memory too.
        if (Value source = reshapeSource(op)) {
          if (Value buffer = root.lookup(source))
            root[result] = buffer;
          continue;
        }
        root[result] = result;
        buffers[result] = {bytesOf(result), index, index};
      }
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (auto it = root.find(operand); it != root.end())
            buffers[it->second].last = index;
      });
    }

    // Bytes entering at an op and leaving after it, then a running sum.
    SmallVector<int64_t> delta(order.size() + 1, 0);
    for (const Buffer &buffer : llvm::make_second_range(buffers)) {
      delta[buffer.first] += static_cast<int64_t>(buffer.bytes);
      delta[buffer.last + 1] -= static_cast<int64_t>(buffer.bytes);
    }
    ArenaStats stats;
    stats.function = function.getSymName().str();
    stats.tokens = tokens;
    stats.context = context;
    int64_t live = 0;
    size_t peak = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      live += delta[i];
      if (static_cast<uint64_t>(live) > stats.peakBytes) {
        stats.peakBytes = static_cast<uint64_t>(live);
        peak = i;
      }
    }
    if (stats.peakBytes > 0)
      stats.peakAt = describeOp(order[peak]);
    return stats;
  }

private:
  static Value reshapeSource(Operation *op) {
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      return expand.getSrc();
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
      return collapse.getSrc();
    if (auto cast = dyn_cast<tensor::CastOp>(op))
      return cast.getSource();
    return Value();
  }

  static std::string describeOp(Operation *op) {
    std::string text = op->getName().getStringRef().str();
    // The builder names ops "blk.L.step"; a parsed file without debug
    // info has only its line.
    if (auto name = op->getLoc()->findInstanceOf<NameLoc>())
      text += " (" + name.getName().str() + ")";
    else if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
      text += llvm::formatv(" ({0}:{1})", file.getFilename(), file.getLine());
    return text;
  }

  uint64_t bytesOf(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    uint64_t bytes = elementBytes(type.getElementType());
    for (int64_t dim : shapeOf(value))
      bytes *= static_cast<uint64_t>(dim);
    return bytes;
  }

  /// The static shape of a tensor with its dynamic dimensions sized: a
  /// compressed cache holds context / ratio entries; the entry columns of
  /// the indexer scores and of the visible entries follow their entries;
  /// the indexer picks min(k, entries); every other dynamic dimension is
  /// the token count.
  SmallVector<int64_t> shapeOf(Value value) {
    if (auto it = shapes.find(value); it != shapes.end())
      return it->second;
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    Operation *op = value.getDefiningOp();
    for (auto [dim, size] : llvm::enumerate(shape)) {
      if (!ShapedType::isDynamic(size))
        continue;
      size = tokens;
      if (!op)
        continue;
      if (auto read = dyn_cast<CacheReadOp>(op)) {
        if (auto store =
                dyn_cast<CompressedCacheType>(read.getCache().getType()))
          size = context / store.getRatio();
      } else if (dim == 1) {
        if (auto scores = dyn_cast<IndexerScoresOp>(op))
          size = shapeOf(scores.getKeys())[0];
        else if (auto visible = dyn_cast<VisibleEntriesOp>(op))
          size = shapeOf(visible.getEntries())[0];
        else if (auto topk = dyn_cast<IndexerTopKOp>(op))
          size = std::min(static_cast<int64_t>(topk.getK()),
                          shapeOf(topk.getScores())[1]);
      }
    }
    shapes[value] = shape;
    return shape;
  }

  int64_t tokens, context;
  DenseMap<Value, SmallVector<int64_t>> shapes;
};

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// "284332240471 (284.33 B)", as kf-gguf prints parameter counts.
std::string count(uint64_t n) {
  std::string text = std::to_string(n);
  if (n >= 1'000'000'000)
    return text + llvm::formatv(" ({0:F2} B)", n / 1e9).str();
  if (n >= 1'000'000)
    return text + llvm::formatv(" ({0:F2} M)", n / 1e6).str();
  return text;
}

/// "13377352 bytes (12.76 MiB)".
std::string bytes(uint64_t n) {
  std::string text = std::to_string(n) + " bytes";
  static constexpr std::pair<double, const char *> units[] = {
      {kGiB, "GiB"}, {1024.0 * 1024.0, "MiB"}, {1024.0, "KiB"}};
  for (auto [size, unit] : units)
    if (n >= size)
      return text + llvm::formatv(" ({0:F2} {1})", n / size, unit).str();
  return text;
}

/// Per-token bytes are fractional when an entry is shorter than its ratio.
std::string perToken(double n) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.6g", n);
  return text;
}

} // namespace

uint64_t GraphStats::kvBytes() const {
  uint64_t total = 0;
  for (const CacheKindStats &kind : caches)
    total += kind.bytesAtContext;
  return total;
}

uint64_t GraphStats::arenaBytes() const {
  uint64_t peak = 0;
  for (const std::optional<ArenaStats> &arena : {prefillArena, decodeArena})
    if (arena)
      peak = std::max(peak, arena->peakBytes);
  return peak;
}

FailureOr<GraphStats> GraphStats::compute(ModuleOp module,
                                          const GraphStatsOptions &options) {
  GraphStats stats;
  stats.options = options;

  std::map<uint32_t, WeightFormatStats> formats;
  for (WeightOp weight : module.getOps<WeightOp>()) {
    QWeightType type = weight.getWeightType();
    WeightFormatStats &format =
        formats[static_cast<uint32_t>(type.getFormat())];
    format.format = type.getFormat();
    format.tensors += 1;
    format.elements += elementCount(type);
    format.bytes += type.getSizeInBytes();
    stats.weightBytes += type.getSizeInBytes();
    if (!isIntegerTable(type))
      stats.parameters += elementCount(type);
  }
  stats.formats.assign(llvm::make_second_range(formats).begin(),
                       llvm::make_second_range(formats).end());

  auto function = [&](StringRef name) {
    auto f = module.lookupSymbol<func::FuncOp>(name);
    return f && !f.isExternal() ? f : func::FuncOp();
  };
  if (func::FuncOp decode = function("decode")) {
    FailureOr<DecodeWeightStats> weights = DecodeWeightCounter().count(decode);
    if (failed(weights))
      return failure();
    stats.decode = *weights;
    stats.decodeArena =
        ArenaEstimator(1, options.contextTokens).estimate(decode);
  }
  // A prefill starts at position 0: its caches hold its own tokens.
  if (func::FuncOp prefill = function("prefill"))
    stats.prefillArena =
        ArenaEstimator(options.prefillTokens, options.prefillTokens)
            .estimate(prefill);
  FailureOr<SmallVector<CacheKindStats>> caches =
      countCaches(module, options.contextTokens);
  if (failed(caches))
    return failure();
  stats.caches = std::move(*caches);
  module.walk([&](Operation *op) {
    MatmulStats &m = stats.matmuls;
    TypeSwitch<Operation *>(op)
        .Case([&](QMatmulOp) { ++m.qmatmuls; })
        .Case([&](ExpertQMatmulOp) { ++m.expertMatmuls; })
        .Case([&](MoeCombineOp) { ++m.loweredMoes; })
        .Case([&](LinearOp) { ++m.linears; })
        .Case([&](GroupedLinearOp) { ++m.groupedLinears; })
        .Case([&](MoeOp) { ++m.moes; });
  });
  return stats;
}

void GraphStats::print(raw_ostream &os) const {
  int64_t context = options.contextTokens;
  os << "kf-graph-stats: tokens=" << context
     << " prefill-tokens=" << options.prefillTokens << "\n";

  os << "weights:\n";
  os << llvm::formatv("  {0,-10} {1,8} {2,16} {3,16}\n", "format", "tensors",
                      "elements", "bytes");
  int64_t tensors = 0;
  for (const WeightFormatStats &format : formats) {
    tensors += format.tensors;
    os << llvm::formatv("  {0,-10} {1,8} {2,16} {3,16}\n",
                        stringifyFormat(format.format), format.tensors,
                        format.elements, format.bytes);
  }
  os << llvm::formatv("  {0,-10} {1,8} {2,16} {3,16}\n", "total", tensors, "",
                      weightBytes);
  os << "  total bytes        " << bytes(weightBytes) << "\n";
  os << "  parameters         " << count(parameters)
     << "; integer tables are not parameters\n";

  os << "decode, one token (@decode; k of E experts, one row of a lookup):\n";
  if (decode) {
    os << "  weight bytes read  " << bytes(decode->bytes) << "\n";
    os << "  active parameters  " << count(decode->activeParameters) << "\n";
  } else {
    os << "  no @decode\n";
  }

  os << "kv cache at " << context
     << " tokens (per layer: bytes/token, fixed bytes; bytes: all layers):\n";
  // The kind column is as wide as the longest kind a model or the roles name.
  size_t width = 6;
  for (const CacheKindStats &kind : caches)
    width = std::max(width, kind.kind.size());
  auto row = [&](StringRef kind, auto layers, auto perTokenText, auto fixed,
                 auto total) {
    os << llvm::formatv("  {0} {1,6} {2,14} {3,14} {4,18}\n",
                        llvm::left_justify(kind, width), layers, perTokenText,
                        fixed, total);
  };
  row("kind", "layers", "bytes/token", "fixed bytes", "bytes");
  int64_t layers = 0;
  double tokenBytes = 0;
  uint64_t fixedBytes = 0;
  for (const CacheKindStats &kind : caches) {
    layers += kind.layers;
    tokenBytes += kind.layers * kind.bytesPerToken;
    fixedBytes += kind.layers * kind.fixedBytes;
    row(kind.kind, kind.layers, perToken(kind.bytesPerToken), kind.fixedBytes,
        kind.bytesAtContext);
  }
  row("total", layers, perToken(tokenBytes), fixedBytes, kvBytes());
  for (const CacheKindStats &kind : caches)
    os << "  " << kind.kind << ": " << kind.caches << "\n";
  os << "  total bytes        " << bytes(kvBytes()) << "\n";

  os << "activation arena (peak of live op results):\n";
  for (const std::optional<ArenaStats> &arena : {prefillArena, decodeArena}) {
    if (!arena)
      continue;
    os << "  @" << arena->function << " T=" << arena->tokens;
    if (arena->context != arena->tokens)
      os << " context=" << arena->context;
    os << ": " << bytes(arena->peakBytes);
    if (!arena->peakAt.empty())
      os << " at " << arena->peakAt;
    os << "\n";
  }
  if (!prefillArena && !decodeArena)
    os << "  no @prefill or @decode\n";

  uint64_t footprint = weightBytes + kvBytes() + arenaBytes();
  // Rounded up: a budget a hundredth of a GiB short does not fit.
  double gib = std::ceil(footprint / kGiB * 100) / 100;
  os << llvm::formatv("fits in {0:F2} GiB: weights {1} + kv at {2} tokens {3} "
                      "+ arena {4} = {5} bytes\n",
                      gib, weightBytes, context, kvBytes(), arenaBytes(),
                      footprint);
  os << "matmuls (kernel ops call compiled kernels; the others run the "
        "reference kernels):\n";
  os << llvm::formatv("  compiled       kf.qmatmul {0}, kf.expert_qmatmul {1} "
                      "(the routed experts of {2} kf.moe)\n",
                      matmuls.qmatmuls, matmuls.expertMatmuls,
                      matmuls.loweredMoes);
  os << llvm::formatv("  not compiled   kf.linear {0}, kf.grouped_linear {1}, "
                      "kf.moe {2}\n",
                      matmuls.linears, matmuls.groupedLinears, matmuls.moes);
}
