//===- KfMatmuls.cpp - The matrix multiplications of kf ops ---------------===//

#include "kf/Dialect/KfMatmuls.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kf;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// kf.moe's weight operands, in operand order: the keys of its kf.kernel
/// dictionary.
constexpr StringLiteral kMoeWeightNames[] = {"gate_exps", "up_exps",
                                             "down_exps", "gate_shexp",
                                             "up_shexp",  "down_shexp"};
constexpr ArrayRef<StringLiteral> kMoeWeights = kMoeWeightNames;

/// The leading dimension of a ranked tensor value, or nullopt when the value
/// is not one (a malformed op).
std::optional<int64_t> leadingDim(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() == 0)
    return std::nullopt;
  return type.getDimSize(0);
}

std::optional<Matmul> makeMatmul(StringRef name, Value weight,
                                 std::optional<int64_t> m, int64_t groups = 1) {
  auto type = dyn_cast<QWeightType>(weight.getType());
  if (!type || !m || type.getShape().size() < 2 || groups <= 0 ||
      type.getRows() % groups != 0)
    return std::nullopt;
  return Matmul{name, type, *m, type.getRows() / groups, type.getCols()};
}

/// The token columns an expert's kernel sees of `tokens`. A token routes to k
/// distinct experts, so a bucket holds at most T tokens: one token's bucket
/// is that token (an empty one runs no kernel), any other's size is the
/// router's to decide.
std::optional<int64_t> expertBucket(std::optional<int64_t> tokens) {
  if (tokens && *tokens != 1)
    return kDynamic;
  return tokens;
}

SmallVector<Matmul> collect(ArrayRef<std::optional<Matmul>> matmuls) {
  SmallVector<Matmul> result;
  for (const std::optional<Matmul> &matmul : matmuls) {
    if (!matmul)
      return {};
    result.push_back(*matmul);
  }
  return result;
}

void printTiles(InFlightDiagnostic &diag, ArrayRef<int64_t> tiles) {
  diag << "[";
  llvm::interleaveComma(tiles, diag);
  diag << "]";
}

/// Checks one matmul's decision against its shapes.
LogicalResult verifyKernel(Operation *op, const Matmul &matmul,
                           KernelAttr kernel) {
  auto error = [&]() {
    InFlightDiagnostic diag = op->emitOpError() << "kf.kernel";
    if (!matmul.name.empty())
      diag << " of " << matmul.name;
    diag << ": ";
    return diag;
  };
  PackedLayout layout = kernel.getLayout();
  if (layout.format != matmul.weight.getFormat())
    return error() << "layout " << stringifyPackedLayout(layout)
                   << " does not hold the weight's format "
                   << stringifyFormat(matmul.weight.getFormat());
  if (std::optional<int64_t> l1K = kernel.getL1K(); l1K && *l1K > matmul.k)
    return error() << "l1_k = " << *l1K << " exceeds K = " << matmul.k;
  ArrayRef<int64_t> tiles = kernel.getColumnTiles();
  if (tiles.empty())
    return success();
  if (ShapedType::isDynamic(matmul.m)) {
    InFlightDiagnostic diag = error() << "static cols ";
    printTiles(diag, tiles);
    return diag << " for a dynamic M (expected cols = dynamic)";
  }
  int64_t sum = 0;
  for (int64_t tile : tiles)
    sum += tile;
  if (sum != matmul.m) {
    InFlightDiagnostic diag = error() << "cols ";
    printTiles(diag, tiles);
    return diag << " sum to " << sum << ", expected M = " << matmul.m;
  }
  return success();
}

} // namespace

bool mlir::kf::isMatmulOp(Operation *op) {
  return isa<LinearOp, GroupedLinearOp, MoeOp, QMatmulOp, ExpertQMatmulOp>(op);
}

SmallVector<Matmul> mlir::kf::getMatmuls(Operation *op) {
  return TypeSwitch<Operation *, SmallVector<Matmul>>(op)
      .Case([](LinearOp linear) {
        return collect({makeMatmul("", linear.getWeight(),
                                   leadingDim(linear.getInput()))});
      })
      .Case([](QMatmulOp qmatmul) {
        // N is the result's: the rows from row_offset a group reads.
        std::optional<Matmul> matmul =
            makeMatmul("", qmatmul.getWeight(), leadingDim(qmatmul.getInput()));
        auto result = dyn_cast<RankedTensorType>(qmatmul.getType());
        if (!matmul || !result || result.getRank() != 2 ||
            result.isDynamicDim(1))
          return SmallVector<Matmul>();
        matmul->n = result.getDimSize(1);
        return SmallVector<Matmul>{*matmul};
      })
      .Case([](ExpertQMatmulOp expert) {
        return collect({makeMatmul("", expert.getWeight(),
                                   expertBucket(leadingDim(expert.getIds())))});
      })
      .Case([](GroupedLinearOp grouped) {
        return collect(
            {makeMatmul("", grouped.getWeight(), leadingDim(grouped.getInput()),
                        static_cast<int64_t>(grouped.getGroups()))});
      })
      .Case([](MoeOp moe) {
        std::optional<int64_t> tokens = leadingDim(moe.getInput());
        std::optional<int64_t> bucket = expertBucket(tokens);
        Value weights[] = {moe.getGateExps(), moe.getUpExps(),
                           moe.getDownExps(), moe.getGateShexp(),
                           moe.getUpShexp(),  moe.getDownShexp()};
        SmallVector<std::optional<Matmul>, 6> matmuls;
        for (auto [i, weight] : llvm::enumerate(weights))
          matmuls.push_back(
              makeMatmul(kMoeWeights[i], weight, i < 3 ? bucket : tokens));
        return collect(matmuls);
      })
      .Default([](Operation *) { return SmallVector<Matmul>(); });
}

KernelAttr mlir::kf::getKernel(Operation *op, StringRef name) {
  Attribute value = op->getAttr(KfDialect::kKernelAttrName);
  if (name.empty())
    return dyn_cast_if_present<KernelAttr>(value);
  auto dict = dyn_cast_if_present<DictionaryAttr>(value);
  return dict ? dict.getAs<KernelAttr>(name) : KernelAttr();
}

void mlir::kf::setKernel(Operation *op, StringRef name, KernelAttr kernel) {
  if (name.empty()) {
    op->setAttr(KfDialect::kKernelAttrName, kernel);
    return;
  }
  NamedAttrList entries;
  if (auto dict = dyn_cast_if_present<DictionaryAttr>(
          op->getAttr(KfDialect::kKernelAttrName)))
    entries.assign(dict.getValue());
  entries.set(name, kernel);
  op->setAttr(KfDialect::kKernelAttrName,
              entries.getDictionary(op->getContext()));
}

LogicalResult mlir::kf::verifyKernelAttribute(Operation *op, Attribute value) {
  if (!isMatmulOp(op))
    return op->emitError() << "'" << KfDialect::kKernelAttrName
                           << "' belongs on kf.linear, kf.grouped_linear, "
                              "kf.moe, kf.qmatmul or kf.expert_qmatmul, not "
                              "on '"
                           << op->getName() << "'";
  SmallVector<Matmul> matmuls = getMatmuls(op);
  if (matmuls.empty())
    return success();
  if (!isa<MoeOp>(op)) {
    auto kernel = dyn_cast<KernelAttr>(value);
    if (!kernel)
      return op->emitOpError()
             << "kf.kernel must be a #kf.kernel, got " << value;
    return verifyKernel(op, matmuls.front(), kernel);
  }
  auto dict = dyn_cast<DictionaryAttr>(value);
  if (!dict)
    return op->emitOpError()
           << "kf.kernel must be a dictionary of #kf.kernel by weight ("
           << llvm::join(kMoeWeights, ", ") << "), got " << value;
  for (NamedAttribute entry : dict)
    if (!llvm::is_contained(kMoeWeights, entry.getName().getValue()))
      return op->emitOpError()
             << "kf.kernel has an entry for '" << entry.getName().getValue()
             << "', which is not a weight (expected "
             << llvm::join(kMoeWeights, ", ") << ")";
  for (const Matmul &matmul : matmuls) {
    Attribute entry = dict.get(matmul.name);
    if (!entry)
      return op->emitOpError()
             << "kf.kernel has no #kf.kernel for " << matmul.name;
    auto kernel = dyn_cast<KernelAttr>(entry);
    if (!kernel)
      return op->emitOpError() << "kf.kernel of " << matmul.name
                               << " must be a #kf.kernel, got " << entry;
    if (failed(verifyKernel(op, matmul, kernel)))
      return failure();
  }
  return success();
}
