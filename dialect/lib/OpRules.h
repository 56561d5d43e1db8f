//===- OpRules.h - Verification rules shared by the kf ops -----*- C++ -*-===//
//
// Internal to the dialect library: the shape and parameter checks the
// verifiers of KfGraphOps.cpp, KfStateOps.cpp and KfKernelOps.cpp share.
// Defined in KfOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_LIB_OPRULES_H
#define KF_DIALECT_LIB_OPRULES_H

#include "kf/Dialect/KfDialect.h"

namespace mlir::kf::rules {

/// A dimension that agrees with any other.
inline constexpr int64_t kAny = ShapedType::kDynamic;

/// Two dimensions agree when either is dynamic or both are equal.
bool dimsAgree(int64_t a, int64_t b);

/// Checks that `actual` has the rank of `expected` and agrees with it in
/// every dimension (kAny, or a dynamic dimension of `actual`, agrees with
/// anything). Reports "<what> must be [..], got [..]".
LogicalResult checkShape(Operation *op, StringRef what,
                         ArrayRef<int64_t> actual, ArrayRef<int64_t> expected);
/// The same for a tensor's or a weight's shape.
LogicalResult checkShape(Operation *op, StringRef what, Type type,
                         ArrayRef<int64_t> expected);

/// The static size of dimension `dim` of a ranked tensor, or failure with
/// "<what> needs a static dimension <dim>".
FailureOr<int64_t> staticDim(Operation *op, StringRef what, Value value,
                             unsigned dim);

/// The static innermost dimension of a tensor of rank `minRank`..`maxRank`.
FailureOr<int64_t> innermost(Operation *op, StringRef what, Value value,
                             int64_t minRank, int64_t maxRank);

/// The token count of `value`'s leading dimension (kAny when dynamic).
int64_t tokens(Value value);

/// Epsilons, scales and limits must be positive and finite.
LogicalResult checkPositive(Operation *op, StringRef what,
                            const APFloat &value);

/// Integer tables (tid2eid) are looked up by index, never decoded as floats.
LogicalResult checkFloatWeight(Operation *op, StringRef what, QWeightType type);

/// Parameter vectors (norm weights, biases, sinks, hyper-connection bases
/// and scales) must be f32.
LogicalResult checkF32Vector(Operation *op, StringRef what, QWeightType type);

} // namespace mlir::kf::rules

#endif // KF_DIALECT_LIB_OPRULES_H
