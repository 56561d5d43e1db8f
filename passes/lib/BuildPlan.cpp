//===- BuildPlan.cpp - Functions of kernel calls to kf_plan.plan ----------===//
//
// A function whose ops all call compiled kernels becomes the plan the
// runtime executes (docs/engine.md, "Building a plan"). Three decisions are
// made here, in op order:
//
// - where each tensor lives: a run buffer for the function's arguments and
//   the values it returns (written there directly, no copy), else a range of
//   the activation arena sized for the plan's rows, first fit among the
//   ranges of tensors dead before the last barrier (a reshape shares its
//   operand's range), so that reusing memory never costs a barrier;
// - what each kernel call is as a step: its kernel in the step ABI (the
//   matmul and quantizer kernels through the adapters of MatmulSteps.h),
//   its work items, their split and its operands with their extents;
// - where threads wait: before a step that touches bytes another thread may
//   have touched since the last barrier, a write on either side, unless
//   both steps go through those bytes item by item with the same items,
//   split the same way — then every thread touches only its own.
//
//===----------------------------------------------------------------------===//

#include "kf/Passes/Passes.h"

#include "KernelDecisions.h"

#include "kf/Codegen/CompressKernel.h"
#include "kf/Codegen/LastRowKernel.h"
#include "kf/Codegen/MatmulKernel.h"
#include "kf/Codegen/MatmulSteps.h"
#include "kf/runtime/packing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <optional>
#include <tuple>

namespace mlir::kf {
#define GEN_PASS_DEF_KFBUILDPLAN
#include "kf/Passes/Passes.h.inc"

namespace {

namespace codegen = ::kf::codegen;
using kf_plan::OperandKind;
using kf_plan::WorkSplit;

/// Arena ranges start at multiples of a cache line (every vector width's).
constexpr int64_t kAlignment = 64;
/// The packed weight bytes a thread claims of a matmul at a time: long
/// enough to keep a stream going (of the order of an expert step's blocks,
/// 352 rows of Flash's MXFP4 experts, 766 KB), short enough that the last
/// claims even the threads out.
constexpr int64_t kClaimBytes = int64_t{1} << 20;
/// The fewest batches a matmul's rows are claimed in; a smaller matrix is
/// split a block a thread.
constexpr int64_t kMinClaims = 4;

int64_t alignUp(int64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/// First-fit ranges of the activation arena.
class ArenaAllocator {
public:
  int64_t allocate(int64_t bytes) {
    bytes = alignUp(std::max<int64_t>(bytes, 1));
    int64_t offset = 0;
    for (auto [begin, size] : used) {
      if (begin >= offset + bytes)
        break;
      offset = std::max(offset, begin + size);
    }
    used[offset] = bytes;
    high = std::max(high, offset + bytes);
    return offset;
  }
  void release(int64_t offset) { used.erase(offset); }
  int64_t size() const { return high; }

private:
  std::map<int64_t, int64_t> used; // offset -> bytes, in offset order
  int64_t high = 0;
};

/// Where a tensor lives.
struct Place {
  OperandKind kind = OperandKind::arena;
  int64_t index = 0; // the run buffer's; 0 in the arena
  int64_t offset = 0;
  // The buffer's bytes per token row, and the tensor's columns of them: all
  // of a row, or for a column slice and a part of a concatenation, `width`
  // bytes from `column` on.
  int64_t rowBytes = 0;
  int64_t column = 0;
  int64_t width = 0;
  // In the state: the bytes, which do not grow with the rows.
  int64_t stateBytes = 0;
  // One row whatever the run's (a prefill's last row, its head): its
  // bytes do not grow with the rows either.
  bool oneRow = false;

  bool isWholeRows() const { return column == 0 && width == rowBytes; }
};

/// A cache's bytes in the model's state.
struct CacheSlot {
  std::string name;
  int64_t offset = 0;
  int64_t bytes = 0;
};

/// The model's state: its caches, in declaration order, and the longest
/// sequence they hold. Every plan of the module lays it out alike.
struct StateLayout {
  std::vector<CacheSlot> caches;
  int64_t bytes = 0;
  int64_t maxContext = 0;

  const CacheSlot *lookup(StringRef name) const {
    for (const CacheSlot &c : caches)
      if (c.name == name)
        return &c;
    return nullptr;
  }
};

/// How one step touches a byte range, for the barriers: the range at the
/// plan's rows, and, when it goes item by item, how its items are split.
struct Access {
  OperandKind kind;
  int64_t index;
  int64_t begin, end;
  // The columns of each row touched: [column, column + width) of rows of
  // rowBytes.
  int64_t rowBytes, column, width;
  bool write;
  // itemsFixed, itemsPerRow, group, bytesPerItem; none: any thread may
  // touch any byte of the range.
  std::optional<std::tuple<int64_t, int64_t, int64_t, int64_t>> items;

  /// Whether a thread of one of the two steps may touch a byte a thread of
  /// the other touches, with a write on either side.
  bool conflicts(const Access &other) const {
    if (kind != other.kind || index != other.index || !(write || other.write))
      return false;
    if (end <= other.begin || other.end <= begin)
      return false;
    // Other columns of the same rows (the groups of a concatenation).
    if (rowBytes == other.rowBytes && begin == other.begin &&
        (column + width <= other.column ||
         other.column + other.width <= column))
      return false;
    // The same rows item by item from the same first byte: each thread
    // touches the bytes of its own items in both steps.
    return !(items && other.items && *items == *other.items &&
             begin == other.begin);
  }
};

struct WeightEntry {
  std::string name;
  QWeightType type;
  std::optional<std::string> layout; // none: as stored
  // Whether a step has read it yet (and so fixed its layout).
  bool used = false;
};

struct StepEntry {
  std::string name;
  SymbolRefAttr callee;
  int64_t itemsFixed = 0, itemsPerRow = 0;
  WorkSplit split = WorkSplit::blocks;
  int64_t group = 1;
  bool barrier = false;
  SmallVector<Attribute> operands;
  // A routed expert matmul's shape (StepKind::Experts), which the runtime
  // dispatches.
  std::optional<::kf::ExpertShape> experts;
  // The rows its kernel is called with: 0 for the run's, 1 on one-row
  // tensors.
  int64_t rows = 0;
};

/// The bytes per token row of `type`, or failure when they are not whole
/// bytes or its other dimensions are not static.
FailureOr<int64_t> getRowBytes(RankedTensorType type) {
  if (type.getRank() < 1 || !type.getElementType().isIntOrFloat())
    return failure();
  int64_t elements = 1;
  for (int64_t d = 1; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d))
      return failure();
    elements *= type.getDimSize(d);
  }
  int64_t bits = elements * type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return failure();
  return bits / 8;
}

/// The op's name for errors and profiles: its location's name, else the
/// kernel it calls.
std::string getStepName(Operation *op, SymbolRefAttr callee) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  return callee.getLeafReference().str();
}

class PlanBuilder {
public:
  PlanBuilder(func::FuncOp fn, ModuleOp kernels, int64_t maxRows,
              const ::kf::target::TargetInfo &target, const StateLayout &state)
      : fn(fn), kernels(kernels), maxRows(maxRows), target(target),
        state(state) {}

  /// Builds the plan before `fn` (which the caller erases); failure after
  /// reporting the first op that cannot be planned.
  FailureOr<kf_plan::PlanOp> build() {
    if (failed(findRows()) || failed(placeArguments()) ||
        failed(findLiveness()))
      return failure();
    for (auto [i, op] : llvm::enumerate(fn.getBody().front())) {
      if (failed(plan(&op)))
        return failure();
      release(i);
    }
    return emit();
  }

private:
  /// The plan's rows: a static leading dimension every tensor shares, or
  /// maxRows when it is dynamic.
  LogicalResult findRows() {
    std::optional<int64_t> leading;
    auto check = [&](Value v) -> LogicalResult {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        return success();
      if (type.getRank() < 1 || failed(getRowBytes(type)))
        return emitValueError(v, "must have a leading token dimension and "
                                 "static others of whole bytes");
      if (!leading)
        leading = type.getDimSize(0);
      else if (*leading != type.getDimSize(0) &&
               !(ShapedType::isDynamic(*leading) && type.getDimSize(0) == 1))
        return emitValueError(v, "has another token dimension than the "
                                 "function's first tensor");
      return success();
    };
    for (Value arg : fn.getArguments())
      if (failed(check(arg)))
        return failure();
    WalkResult walk = fn.walk([&](Operation *op) {
      // A cache's rows are state, not token rows.
      if (isa<CacheReadOp>(op))
        return WalkResult::advance();
      for (Value v : op->getResults())
        if (failed(check(v)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    dynamicRows = leading && ShapedType::isDynamic(*leading);
    rows = !leading || dynamicRows ? maxRows : *leading;
    if (rows < 1)
      return fn.emitOpError() << "kf-build-plan: a plan needs at least one "
                                 "token row, got "
                              << rows;
    return success();
  }

  /// Whether `v` has one row whatever the run's: a static leading 1 in a
  /// function of any number of rows (a prefill's last row and its head).
  bool isOneRow(Value v) const {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return dynamicRows && type && type.getRank() >= 1 &&
           type.getDimSize(0) == 1;
  }

  LogicalResult emitValueError(Value v, const Twine &what) {
    InFlightDiagnostic d = fn.emitOpError() << "kf-build-plan: ";
    if (auto arg = dyn_cast<BlockArgument>(v))
      d << "argument " << arg.getArgNumber();
    else
      d << "the result of '" << v.getDefiningOp()->getName() << "'";
    d << " " << what;
    return d;
  }

  /// Run buffers for the tensor arguments and returned values, weights for
  /// the !kf.qweight arguments.
  LogicalResult placeArguments() {
    for (BlockArgument arg : fn.getArguments()) {
      std::string name = "arg" + std::to_string(arg.getArgNumber());
      if (auto weight = dyn_cast<QWeightType>(arg.getType())) {
        weightIndex[arg] = weights.size();
        weights.push_back({name, weight, std::nullopt});
        continue;
      }
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type)
        return emitValueError(arg, "is neither a tensor nor a weight");
      int64_t rowBytes = *getRowBytes(type);
      Place place{OperandKind::input,
                  static_cast<int64_t>(buffers.size()),
                  0,
                  rowBytes,
                  0,
                  rowBytes};
      place.oneRow = isOneRow(arg);
      places[arg] = place;
      buffers.push_back({name, rowBytes, false, place.oneRow});
    }
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    for (auto [j, v] : llvm::enumerate(ret.getOperands())) {
      // Through the reshapes it comes from: a slice there is a view.
      Value part = v;
      while (Operation *def = part.getDefiningOp()) {
        if (isa<tensor::ExtractSliceOp>(def))
          return ret.emitOpError() << "kf-build-plan: returns a column "
                                      "slice, which a plan would have to copy";
        if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
          break;
        part = def->getOperand(0);
      }
      Value root = getRoot(v);
      if (isa<BlockArgument>(root))
        return ret.emitOpError()
               << "kf-build-plan: returns (a reshape of) argument "
               << cast<BlockArgument>(root).getArgNumber()
               << ", which a plan would have to copy";
      auto type = cast<RankedTensorType>(root.getType());
      int64_t rowBytes = *getRowBytes(type);
      if (!outputs.try_emplace(root, buffers.size()).second)
        return ret.emitOpError() << "kf-build-plan: returns one value twice";
      auto named = fn.getResultAttrOfType<StringAttr>(static_cast<unsigned>(j),
                                                      KfDialect::kNameAttrName);
      std::string name = named ? named.str() : "result" + std::to_string(j);
      if (llvm::any_of(buffers, [&](const auto &b) { return b.name == name; }))
        return ret.emitOpError()
               << "kf-build-plan: two run buffers are named '" << name << "'";
      buffers.push_back({name, rowBytes, true, isOneRow(root)});
    }
    return success();
  }

  /// The value whose place `v` shares: itself, or the operand of the
  /// reshapes it comes from.
  Value getRoot(Value v) {
    for (;;) {
      Operation *def = v.getDefiningOp();
      // The run's last row is copied into a row of its own.
      if (def && isa<tensor::ExtractSliceOp>(def) && isOneRow(v) &&
          !isOneRow(def->getOperand(0)))
        return v;
      if (def && isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                     tensor::ExtractSliceOp>(def)) {
        v = def->getOperand(0);
      } else if (auto concat = getConcatOf(v)) {
        v = concat.getResult();
      } else {
        return v;
      }
    }
  }

  /// The concatenation `v` is written into in place: its only user, when
  /// it is one along the innermost dimension.
  static tensor::ConcatOp getConcatOf(Value v) {
    if (!v.hasOneUse())
      return {};
    auto concat = dyn_cast<tensor::ConcatOp>(*v.getUsers().begin());
    if (!concat || concat.getDim() != static_cast<uint64_t>(
                                          concat.getResultType().getRank() - 1))
      return {};
    return concat;
  }

  /// The op index after which each arena tensor is dead.
  LogicalResult findLiveness() {
    for (auto [i, op] : llvm::enumerate(fn.getBody().front())) {
      for (Value v : op.getOperands())
        lastUse[getRoot(v)] = i;
      for (Value v : op.getResults())
        if (v == getRoot(v))
          lastUse.try_emplace(v, i);
    }
    return success();
  }

  /// Sets aside the arena ranges of the tensors whose last use is op `i`:
  /// a step may still be reading them on another thread, so they are
  /// reused only after the next barrier, and reusing them never adds one.
  void release(size_t i) {
    for (auto it = live.begin(); it != live.end();) {
      if (lastUse.lookup(*it) == i) {
        quarantine.push_back(places[*it].offset);
        it = live.erase(it);
      } else {
        ++it;
      }
    }
  }

  /// The place of `v`, a result of the op being planned: its run buffer
  /// when the function returns it, else a new arena range.
  Place placeResult(Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t rowBytes = *getRowBytes(type);
    if (tensor::ConcatOp concat = getConcatOf(v)) {
      // The concatenation's buffer, placed with its first part; this part
      // its columns.
      Value whole = concat.getResult();
      if (!places.count(whole))
        placeResult(whole);
      Place place = places[whole];
      for (Value part : concat.getInputs()) {
        if (part == v)
          break;
        place.column += *getRowBytes(cast<RankedTensorType>(part.getType()));
      }
      place.width = rowBytes;
      places[v] = place;
      return place;
    }
    Place place;
    const bool oneRow = isOneRow(v);
    if (auto it = outputs.find(v); it != outputs.end()) {
      place = {OperandKind::input,
               static_cast<int64_t>(it->second),
               0,
               rowBytes,
               0,
               rowBytes};
    } else {
      place = {
          OperandKind::arena, 0, arena.allocate(rowBytes * (oneRow ? 1 : rows)),
          rowBytes,           0, rowBytes};
      live.push_back(v);
    }
    place.oneRow = oneRow;
    places[v] = place;
    return place;
  }

  /// The state bytes of cache `v` (a kf.get_cache result) from `offset` on.
  FailureOr<Place> placeCache(Operation *op, Value v, int64_t offset,
                              int64_t bytes) {
    auto get = v.getDefiningOp<GetCacheOp>();
    const CacheSlot *slot = get ? state.lookup(get.getName()) : nullptr;
    if (!slot)
      return op->emitOpError()
             << "kf-build-plan: its cache is not a kf.get_cache of the "
                "module's caches";
    Place place{OperandKind::state, 0, slot->offset + offset, 0, 0, 0, bytes};
    return place;
  }

  Attribute operand(const Place &place, int64_t fixed, int64_t perRow) {
    return kf_plan::OperandAttr::get(fn.getContext(), place.kind, place.index,
                                     place.offset, fixed, perRow);
  }

  /// A tensor operand of a step and how it is touched: item by item (when
  /// `itemsPerRow` > 0, with `group`) or in full.
  void addTensor(StepEntry &step, const Place &place, bool write,
                 int64_t itemsFixed, int64_t itemsPerRow, int64_t group) {
    if (place.kind == OperandKind::state) {
      // Any thread may touch any byte of it.
      step.operands.push_back(operand(place, place.stateBytes, 0));
      pending.push_back({place.kind, 0, place.offset,
                         place.offset + place.stateBytes, place.stateBytes, 0,
                         place.stateBytes, write, std::nullopt});
      return;
    }
    if (place.oneRow) {
      // Any thread may touch any byte of its one row.
      step.operands.push_back(operand(place, place.rowBytes, 0));
      pending.push_back({place.kind, place.index, place.offset,
                         place.offset + place.rowBytes, place.rowBytes,
                         place.column, place.width, write, std::nullopt});
      return;
    }
    step.operands.push_back(operand(place, 0, place.rowBytes));
    Access access{place.kind,     place.index,
                  place.offset,   place.offset + place.rowBytes * rows,
                  place.rowBytes, place.column,
                  place.width,    write,
                  std::nullopt};
    if (itemsPerRow > 0 && itemsFixed == 0)
      access.items = {itemsFixed, itemsPerRow, group,
                      place.rowBytes / itemsPerRow};
    pending.push_back(access);
  }

  /// A weight operand, read in full in `layout` (none: as stored).
  LogicalResult addWeight(StepEntry &step, Operation *op, Value value,
                          std::optional<::kf::PackedLayout> layout,
                          int64_t rowOffset) {
    auto it = weightIndex.find(value);
    if (it == weightIndex.end())
      return op->emitOpError()
             << "kf-build-plan: its weight is neither an argument nor a "
                "kf.get_weight";
    WeightEntry &weight = weights[it->second];
    std::optional<std::string> name;
    if (layout)
      name = ::kf::packedLayoutName(*layout);
    if (weight.used && weight.layout != name)
      return op->emitOpError()
             << "kf-build-plan: reads weight " << weight.name << " as "
             << name.value_or("stored") << ", another step as "
             << weight.layout.value_or("stored");
    weight.used = true;
    weight.layout = name;
    QWeightType type = weight.type;
    int64_t bytes = static_cast<int64_t>(type.getSizeInBytes());
    int64_t offset = 0;
    if (layout) {
      // An expert stack is packed expert by expert.
      const int64_t experts = type.isExpertStack() ? type.getShape()[0] : 1;
      auto packed =
          ::kf::packedWeightBytes(*layout, type.getRows(), type.getCols());
      auto group =
          ::kf::packedWeightBytes(*layout, layout->rows, type.getCols());
      if (!packed.ok() || !group.ok())
        return op->emitOpError()
               << "kf-build-plan: weight " << weight.name << " has no " << *name
               << " layout: "
               << std::string(
                      (packed.ok() ? group : packed).status().message());
      offset = rowOffset / layout->rows * static_cast<int64_t>(*group);
      bytes = experts * static_cast<int64_t>(*packed) - offset;
    }
    Place place{OperandKind::weight, static_cast<int64_t>(it->second), offset,
                0};
    step.operands.push_back(operand(place, bytes, 0));
    return success();
  }

  /// Adds `step` to the plan, behind a barrier if its accesses conflict
  /// with those since the last one.
  void addStep(StepEntry step) {
    for (const Access &a : pending)
      for (const Access &b : sinceBarrier)
        if (a.conflicts(b))
          step.barrier = true;
    if (step.barrier) {
      sinceBarrier.clear();
      for (int64_t offset : quarantine)
        arena.release(offset);
      quarantine.clear();
    }
    sinceBarrier.append(pending.begin(), pending.end());
    pending.clear();
    steps.push_back(std::move(step));
  }

  FailureOr<SymbolRefAttr> adapt(Operation *op,
                                 llvm::Expected<func::FuncOp> fn) {
    if (!fn) {
      op->emitOpError() << "kf-build-plan: " << llvm::toString(fn.takeError());
      return failure();
    }
    MLIRContext *context = op->getContext();
    return SymbolRefAttr::get(
        StringAttr::get(context, kernels.getSymName().value_or("kernels")),
        {FlatSymbolRefAttr::get(context, fn->getSymName())});
  }

  LogicalResult plan(Operation *op) {
    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](GetWeightOp get) {
          std::string name = get.getName().str();
          auto found = llvm::find_if(
              weights, [&](const WeightEntry &w) { return w.name == name; });
          weightIndex[get.getResult()] = found - weights.begin();
          if (found == weights.end())
            weights.push_back({name, get.getType(), std::nullopt});
          return success();
        })
        .Case<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
            [&](auto reshape) -> LogicalResult {
              // The token dimension must stay a dimension of its own, so that
              // a row keeps its bytes.
              auto groups = reshape.getReassociationIndices();
              if (groups.empty() || groups.front().size() != 1)
                return reshape.emitOpError()
                       << "kf-build-plan: reshapes the token dimension";
              FailureOr<Place> place = placeOf(reshape, reshape.getSrc());
              if (failed(place))
                return failure();
              places[reshape.getResult()] = *place;
              return success();
            })
        .Case([&](tensor::ExtractSliceOp slice) { return planSlice(slice); })
        .Case([&](tensor::ConcatOp concat) { return planConcat(concat); })
        .Case<arith::ConstantIndexOp, arith::SubIOp, tensor::DimOp, GetCacheOp>(
            [&](Operation *) { return success(); })
        .Case([&](CacheReadOp read) -> LogicalResult {
          // A view of the state: a ring's rows, a compressor's entries
          // (the first bytes of its cache).
          auto type = cast<RankedTensorType>(read.getType());
          FailureOr<Place> place =
              placeCache(read, read.getCache(), 0, type.getNumElements() * 4);
          if (failed(place))
            return failure();
          places[read.getResult()] = *place;
          return success();
        })
        .Case([&](StepOp step) { return planStep(step); })
        .Case([&](QuantizeActivationsOp quantize) {
          return planQuantize(quantize);
        })
        .Case([&](QMatmulOp matmul) { return planMatmul(matmul); })
        .Case([&](ExpertQMatmulOp matmul) { return planExperts(matmul); })
        .Case([&](func::ReturnOp) { return success(); })
        .Default([&](Operation *other) {
          // Most often the op reads a weight of a format no matmul kernel
          // reads yet: name the tensors and their formats.
          std::string weights;
          for (Value operand : other->getOperands()) {
            auto type = dyn_cast<QWeightType>(operand.getType());
            if (!type)
              continue;
            auto format = static_cast<::kf::Format>(type.getFormat());
            if (codegen::hasMatmulEmitter(format))
              continue;
            auto get = operand.getDefiningOp<GetWeightOp>();
            std::string name =
                get ? get.getName().str()
                    : "argument " +
                          std::to_string(
                              cast<BlockArgument>(operand).getArgNumber());
            weights += (weights.empty() ? "" : ", ") + name + " (" +
                       std::string(::kf::formatInfo(format).name) + ")";
          }
          InFlightDiagnostic diag =
              other->emitOpError()
              << "kf-build-plan: no compiled kernel computes this op yet";
          if (!weights.empty())
            diag << ": no kernel reads the format of " << weights;
          diag << ", so a plan cannot run it";
          return failure();
        });
  }

  /// A slice of a tensor's innermost columns, all of its rows: a view of
  /// its buffer (a quantizer reads it in place, rows apart).
  LogicalResult planSlice(tensor::ExtractSliceOp op) {
    auto source = op.getSourceType();
    auto type = op.getResultType();
    if (isOneRow(op.getResult()) && !isOneRow(op.getSource()))
      return planLastRow(op);
    const int64_t last = source.getRank() - 1;
    // Of a [T, N] tensor only: the barriers see a slice as one run of
    // columns per row, which a slice of [T, H, D] is not.
    bool columns =
        source.getRank() == 2 && type.getRank() == 2 && op.hasUnitStride();
    for (int64_t d = 0; columns && d < last; ++d)
      columns = op.getStaticOffsets()[d] == 0 &&
                type.getDimSize(d) == source.getDimSize(d);
    if (!columns || ShapedType::isDynamic(op.getStaticOffsets()[last]))
      return op.emitOpError() << "kf-build-plan: a plan takes slices of a "
                                 "[T, N] tensor's columns only";
    FailureOr<Place> sourcePlace = placeOf(op, op.getSource());
    if (failed(sourcePlace))
      return failure();
    Place place = *sourcePlace;
    const int64_t bits = type.getElementTypeBitWidth();
    place.column += op.getStaticOffsets()[last] * bits / 8;
    place.width = *getRowBytes(type);
    places[op.getResult()] = place;
    return success();
  }

  /// The run's last row of a tensor (`x[dim(x, 0) - 1]`), copied into a row
  /// of its own by a step: where it lies depends on the run's rows.
  LogicalResult planLastRow(tensor::ExtractSliceOp op) {
    auto source = op.getSourceType();
    auto type = op.getResultType();
    bool lastRow = op.hasUnitStride() && type.getRank() == source.getRank() &&
                   op.getOffsets().size() == 1 &&
                   ShapedType::isDynamic(op.getStaticOffsets()[0]);
    for (int64_t d = 1; lastRow && d < source.getRank(); ++d)
      lastRow = op.getStaticOffsets()[d] == 0 &&
                type.getDimSize(d) == source.getDimSize(d);
    if (lastRow) {
      // offset = dim(x, 0) - 1, x a tensor of the run's rows.
      auto sub = op.getOffsets()[0].getDefiningOp<arith::SubIOp>();
      auto one = sub ? sub.getRhs().getDefiningOp<arith::ConstantIndexOp>()
                     : arith::ConstantIndexOp();
      auto dim =
          sub ? sub.getLhs().getDefiningOp<tensor::DimOp>() : tensor::DimOp();
      std::optional<int64_t> index =
          dim ? dim.getConstantIndex() : std::nullopt;
      lastRow =
          one && one.value() == 1 && index == 0 &&
          cast<RankedTensorType>(dim.getSource().getType()).isDynamicDim(0);
    }
    if (!lastRow)
      return op.emitOpError() << "kf-build-plan: a plan takes one slice of "
                                 "rows only, the run's last row";
    FailureOr<Place> x = wholeRowsOf(op, op.getSource());
    if (failed(x))
      return failure();
    FailureOr<Place> out = wholeRows(op, placeResult(op.getResult()));
    if (failed(out))
      return failure();
    ::kf::codegen::LastRowKernelSpec spec{x->rowBytes};
    auto existing = kernels.lookupSymbol<func::FuncOp>(spec.getSymbolName());
    FailureOr<SymbolRefAttr> callee =
        existing ? adapt(op, existing)
                 : adapt(op, ::kf::codegen::buildLastRowKernel(kernels, spec,
                                                               target));
    if (failed(callee))
      return failure();
    StepEntry step{getStepName(op, *callee), *callee};
    step.itemsFixed = 1;
    addTensor(step, *x, /*write=*/false, 0, 0, 1);
    addTensor(step, *out, /*write=*/true, 0, 0, 1);
    addStep(std::move(step));
    return success();
  }

  /// A concatenation along the innermost dimension, whose parts were
  /// written into its buffer by the matmuls computing them.
  LogicalResult planConcat(tensor::ConcatOp op) {
    auto placed = places.find(op.getResult());
    int64_t column = 0;
    for (Value part : op.getInputs()) {
      auto it = places.find(part);
      if (placed == places.end() || getConcatOf(part) != op ||
          it == places.end() || it->second.kind != placed->second.kind ||
          it->second.index != placed->second.index ||
          it->second.offset != placed->second.offset ||
          it->second.column != column)
        return op.emitOpError()
               << "kf-build-plan: concatenates a value that is not computed "
                  "in its place (an argument, or a value used elsewhere too)";
      column += it->second.width;
    }
    return success();
  }

  /// The place of `v`, which `op` reads; failure when it has none (a value
  /// a concatenation was to hold, which nothing computed in it).
  FailureOr<Place> placeOf(Operation *op, Value v) {
    auto it = places.find(v);
    if (it == places.end())
      return op->emitOpError()
             << "kf-build-plan: reads a value the plan has no place for";
    return it->second;
  }

  /// The place of `v`, which `op` reads in whole rows.
  FailureOr<Place> wholeRowsOf(Operation *op, Value v) {
    FailureOr<Place> place = placeOf(op, v);
    if (failed(place))
      return failure();
    return wholeRows(op, *place);
  }

  /// `place`, which `op` reads or writes in whole rows.
  FailureOr<Place> wholeRows(Operation *op, const Place &place) {
    // The columns of a single row are bytes of their own.
    if (!place.isWholeRows() && (place.oneRow || rows == 1)) {
      Place columns = place;
      columns.offset += place.column;
      columns.rowBytes = place.width;
      columns.column = 0;
      return columns;
    }
    if (!place.isWholeRows())
      return op->emitOpError()
             << "kf-build-plan: reads or writes a column slice, which only "
                "a quantizer's input and a matmul's output may be";
    return place;
  }

  LogicalResult planStep(StepOp op) {
    StepEntry step{getStepName(op, op.getCallee()), op.getCallee()};
    const int64_t perRow = op.getItemsPerRow();
    step.itemsPerRow = perRow;
    llvm::SmallDenseSet<int64_t> whole(op.getWhole().begin(),
                                       op.getWhole().end());
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      if (isa<QWeightType>(input.getType())) {
        if (failed(addWeight(step, op, input, std::nullopt, 0)))
          return failure();
        continue;
      }
      if (isa<WindowCacheType, CompressedCacheType>(input.getType())) {
        // Read and written in place, whole.
        const CacheSlot *slot = nullptr;
        if (auto get = input.getDefiningOp<GetCacheOp>())
          slot = state.lookup(get.getName());
        FailureOr<Place> place =
            placeCache(op, input, 0, slot ? slot->bytes : 0);
        if (failed(place))
          return failure();
        addTensor(step, *place, /*write=*/true, 0, 0, 1);
        continue;
      }
      FailureOr<Place> place = wholeRowsOf(op, input);
      if (failed(place))
        return failure();
      addTensor(step, *place, /*write=*/false, 0,
                whole.contains(i) ? 0 : perRow, 1);
    }
    for (Value result : op.getResults()) {
      FailureOr<Place> place = wholeRows(op, placeResult(result));
      if (failed(place))
        return failure();
      addTensor(step, *place, /*write=*/true, 0, perRow, 1);
    }
    if (llvm::any_of(op.getResults(), [&](Value v) { return isOneRow(v); }))
      onOneRow(step);
    addStep(std::move(step));
    return success();
  }

  /// `step`, whose results are one-row tensors: its items are one row's, its
  /// kernel called with one row.
  static void onOneRow(StepEntry &step) {
    step.itemsFixed += step.itemsPerRow;
    step.itemsPerRow = 0;
    step.rows = 1;
  }

  LogicalResult planQuantize(QuantizeActivationsOp op) {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto packed = cast<RankedTensorType>(op.getResult().getType());
    int64_t rowsPerToken = 1;
    for (int64_t d = 1; d + 1 < input.getRank(); ++d)
      rowsPerToken *= input.getDimSize(d);
    // The input may be columns of a wider buffer, read in place.
    FailureOr<Place> inputPlace = placeOf(op, op.getInput());
    if (failed(inputPlace))
      return failure();
    const Place x = *inputPlace;
    FailureOr<Place> out = wholeRows(op, placeResult(op.getResult()));
    if (failed(out))
      return failure();
    FailureOr<SymbolRefAttr> callee =
        adapt(op, codegen::getOrBuildQuantizeStep(
                      kernels, op.getCallee().getLeafReference(),
                      input.getShape().back(), x.rowBytes / rowsPerToken / 4,
                      x.column, packed.getShape().back(), target));
    if (failed(callee))
      return failure();
    StepEntry step{getStepName(op, *callee), *callee};
    step.itemsPerRow = rowsPerToken;
    addTensor(step, x, /*write=*/false, 0, rowsPerToken, 1);
    addTensor(step, *out, /*write=*/true, 0, rowsPerToken, 1);
    if (out->oneRow)
      onOneRow(step);
    addStep(std::move(step));
    return success();
  }

  LogicalResult planMatmul(QMatmulOp op) {
    auto kernel = op->getAttrOfType<KernelAttr>(KfDialect::kKernelAttrName);
    int64_t n = cast<RankedTensorType>(op.getType()).getShape().back();
    // The output may be columns of a concatenation, written in place.
    FailureOr<Place> x = wholeRowsOf(op, op.getInput());
    if (failed(x))
      return failure();
    const Place y = placeResult(op.getResult());
    FailureOr<SymbolRefAttr> callee =
        adapt(op, codegen::getOrBuildMatmulStep(
                      kernels, op.getCallee().getLeafReference(),
                      y.rowBytes / 4, y.column, target));
    if (failed(callee))
      return failure();
    StepEntry step{getStepName(op, *callee), *callee};
    // Items are the output's columns, in whole row groups of the layout.
    // A matrix of kMinClaims batches of kClaimBytes or more has them claimed
    // from a counter a batch (at least the kernel's L2 row block) at a time:
    // threads of one machine do not stream at one rate — on a shared host
    // one core's neighbours are busier — and with a block each a faster
    // thread waited for the slower one at the next barrier. A smaller one
    // is split in a block a thread, as claims and calls of a few rows each
    // cost more than the threads' difference on it.
    step.itemsFixed = n;
    const int64_t group = kernel.getRows();
    step.group = group;
    absl::StatusOr<uint64_t> groupBytes = ::kf::packedWeightBytes(
        kernel.getWeightLayout(), group, op.getWeight().getType().getCols());
    if (!groupBytes.ok())
      return op.emitOpError()
             << "kf-build-plan: " << std::string(groupBytes.status().message());
    const int64_t batch = std::max<int64_t>(
        {1,
         kClaimBytes / static_cast<int64_t>(std::max<uint64_t>(*groupBytes, 1)),
         (kernel.getL2Rows().value_or(0) + group - 1) / group});
    if (n / group >= kMinClaims * batch) {
      step.split = WorkSplit::claim;
      step.group = batch * group;
    }
    if (failed(addWeight(step, op, op.getWeight(), kernel.getWeightLayout(),
                         op.getRowOffset())))
      return failure();
    addTensor(step, *x, /*write=*/false, 0, 0, 1);
    addTensor(step, y, /*write=*/true, n, 0, step.group);
    if (y.oneRow)
      step.rows = 1;
    addStep(std::move(step));
    return success();
  }

  /// A routed expert matmul: a step the runtime dispatches, on work items
  /// of (expert, block of output rows) — the L2 row block its kernel was
  /// decided with — through the expert's own matmul kernel.
  LogicalResult planExperts(ExpertQMatmulOp op) {
    auto kernel = op->getAttrOfType<KernelAttr>(KfDialect::kKernelAttrName);
    QWeightType stack = op.getWeight().getType();
    auto x = cast<RankedTensorType>(op.getInput().getType());
    auto ids = cast<RankedTensorType>(op.getIds().getType());
    const int64_t rows = stack.getRows();
    absl::StatusOr<uint64_t> expertBytes = ::kf::packedWeightBytes(
        kernel.getWeightLayout(), rows, stack.getCols());
    if (!expertBytes.ok())
      return op.emitOpError() << "kf-build-plan: "
                              << std::string(expertBytes.status().message());
    StepEntry step{getStepName(op, op.getCallee()), op.getCallee()};
    step.split = WorkSplit::claim;
    step.itemsFixed = rows;
    int64_t block = kernel.getL2Rows().value_or(rows);
    step.group = block > 0 && block < rows ? block : rows;
    // One activation row per token ([T, B]), or per slot ([T, k, B]).
    const bool rowPerSlot = x.getRank() == 3;
    step.experts =
        ::kf::ExpertShape{stack.getShape()[0],
                          ids.getShape().back(),
                          rows,
                          rowPerSlot,
                          *getRowBytes(x) / (rowPerSlot ? x.getDimSize(1) : 1),
                          static_cast<int64_t>(*expertBytes)};
    if (failed(
            addWeight(step, op, op.getWeight(), kernel.getWeightLayout(), 0)))
      return failure();
    FailureOr<Place> rowsIn = wholeRowsOf(op, op.getInput());
    FailureOr<Place> route = wholeRowsOf(op, op.getIds());
    if (failed(rowsIn) || failed(route))
      return failure();
    FailureOr<Place> out = wholeRows(op, placeResult(op.getResult()));
    if (failed(out))
      return failure();
    addTensor(step, *rowsIn, /*write=*/false, 0, 0, 1);
    addTensor(step, *route, /*write=*/false, 0, 0, 1);
    addTensor(step, *out, /*write=*/true, rows, 0, step.group);
    addStep(std::move(step));
    return success();
  }

  kf_plan::PlanOp emit() {
    OpBuilder b(fn);
    MLIRContext *context = fn.getContext();
    auto plan = kf_plan::PlanOp::create(
        b, fn.getLoc(), fn.getSymName(), rows, arena.size(), state.bytes,
        state.caches.empty() ? 0 : state.maxContext);
    Block *body = b.createBlock(&plan.getBody());
    b.setInsertionPointToStart(body);
    Location loc = fn.getLoc();
    for (const Buffer &buffer : buffers)
      kf_plan::BufferOp::create(
          b, loc, buffer.name, buffer.oneRow ? buffer.rowBytes : 0,
          buffer.oneRow ? 0 : buffer.rowBytes, buffer.output);
    for (const WeightEntry &w : weights)
      kf_plan::WeightOp::create(
          b, loc, b.getStringAttr(w.name), TypeAttr::get(w.type),
          w.layout ? b.getStringAttr(*w.layout) : StringAttr());
    for (const CacheSlot &c : state.caches)
      kf_plan::CacheOp::create(b, loc, c.name, c.offset, c.bytes);
    for (const StepEntry &s : steps) {
      if (s.experts) {
        const ::kf::ExpertShape &e = *s.experts;
        kf_plan::ExpertsOp::create(
            b, loc, b.getStringAttr(s.name), s.callee,
            b.getI64IntegerAttr(e.experts), b.getI64IntegerAttr(e.slots),
            b.getI64IntegerAttr(e.rows), b.getI64IntegerAttr(s.group),
            b.getI64IntegerAttr(e.xRowBytes),
            b.getI64IntegerAttr(e.expertBytes),
            e.rowPerSlot ? b.getUnitAttr() : UnitAttr(),
            s.barrier ? b.getUnitAttr() : UnitAttr(),
            b.getArrayAttr(s.operands));
        continue;
      }
      kf_plan::StepOp::create(
          b, loc, b.getStringAttr(s.name), s.callee,
          b.getI64IntegerAttr(s.itemsFixed), b.getI64IntegerAttr(s.itemsPerRow),
          kf_plan::WorkSplitAttr::get(context, s.split),
          b.getI64IntegerAttr(s.group),
          s.barrier ? b.getUnitAttr() : UnitAttr(), b.getArrayAttr(s.operands),
          b.getI64IntegerAttr(s.rows));
    }
    return plan;
  }

  struct Buffer {
    std::string name;
    int64_t rowBytes;
    bool output;
    bool oneRow; // its one row, whatever the run's
  };

  func::FuncOp fn;
  ModuleOp kernels;
  int64_t maxRows;
  const ::kf::target::TargetInfo &target;
  const StateLayout &state;
  int64_t rows = 0;
  // Whether the run's rows vary, so that a tensor of a static leading 1 is
  // one row whatever they are.
  bool dynamicRows = false;

  std::vector<Buffer> buffers;
  std::vector<WeightEntry> weights;
  std::vector<StepEntry> steps;
  llvm::DenseMap<Value, size_t> weightIndex;
  llvm::DenseMap<Value, Place> places;
  llvm::DenseMap<Value, size_t> outputs; // returned value -> run buffer
  llvm::DenseMap<Value, size_t> lastUse;
  std::vector<Value> live;         // arena tensors not yet dead
  std::vector<int64_t> quarantine; // dead since the last barrier
  ArenaAllocator arena;
  SmallVector<Access> pending, sinceBarrier;
};

/// The model's state: its caches one after the other, 64-byte aligned, in
/// declaration order: a window ring as its rows, a compressor as its
/// entries for the module's longest sequence and its running state
/// (docs/engine.md, "State").
FailureOr<StateLayout> layOutState(ModuleOp module) {
  StateLayout layout;
  auto bound =
      module->getAttrOfType<IntegerAttr>(KfDialect::kMaxContextAttrName);
  for (CacheOp cache : module.getOps<CacheOp>()) {
    if (!bound)
      return cache.emitOpError() << "kf-build-plan: the module's caches are "
                                    "not bounded; run --kf-bound-context first";
    layout.maxContext = bound.getInt();
    int64_t bytes = 0;
    if (auto ring = dyn_cast<WindowCacheType>(cache.getType())) {
      bytes = 4 * ring.getRows() * ring.getDim();
    } else {
      auto compressed = cast<CompressedCacheType>(cache.getType());
      bytes =
          ::kf::codegen::CompressedCacheLayout{
              compressed.getRatio(), compressed.getDim(),
              compressed.getOverlap(),
              compressed.getCapacity(layout.maxContext)}
              .getBytes();
    }
    layout.caches.push_back({cache.getSymName().str(), layout.bytes, bytes});
    layout.bytes = alignUp(layout.bytes + bytes);
  }
  return layout;
}

struct BuildPlanPass : impl::KfBuildPlanBase<BuildPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr targetAttr = getTargetOrError(module, "kf-build-plan");
    if (!targetAttr)
      return signalPassFailure();
    ::kf::target::TargetInfo target = targetAttr.getTargetInfo();
    // Runs larger than the window rings were sized for would overwrite the
    // window before the call's rows.
    if (auto sized =
            module->getAttrOfType<IntegerAttr>(KfDialect::kMaxRowsAttrName);
        sized && static_cast<int64_t>(maxRows) > sized.getInt()) {
      module.emitError() << "kf-build-plan: max-rows "
                         << static_cast<int64_t>(maxRows) << " exceeds the "
                         << sized.getInt()
                         << " rows the module's window rings hold beside the "
                            "window (kf.max_rows); build the graph for it";
      return signalPassFailure();
    }
    ModuleOp kernels = module.lookupSymbol<ModuleOp>("kernels");
    FailureOr<StateLayout> state = layOutState(module);
    if (failed(state))
      return signalPassFailure();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : functions) {
      if (fn.isExternal())
        continue;
      // A function of no kernel call (or of ops no kernel computes, which
      // the plan names below) calls into an empty kernels module.
      if (!kernels) {
        OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
        kernels = ModuleOp::create(b, module.getLoc(), "kernels");
      }
      PlanBuilder builder(fn, kernels, maxRows, target, *state);
      if (failed(builder.build()))
        return signalPassFailure();
      fn.erase();
    }
  }
};

} // namespace
} // namespace mlir::kf
