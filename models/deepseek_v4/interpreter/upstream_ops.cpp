//===- upstream_ops.cpp - The tensor and arith ops of the graph -----------===//
//
// The graph reshapes tensors between ops (heads split and merged), takes the
// last token's streams with tensor.dim, arith.subi and
// tensor.extract_slice, and spells their index constants with
// arith.constant; a lowered kf.grouped_linear slices its input per group and
// concatenates the groups' results (tensor.concat). These run directly: they
// move values, they compute none.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <functional>
#include <limits>
#include <numeric>

#include "kf/runtime/status_macros.h"
#include "llvm/ADT/SmallBitVector.h"

namespace kf::deepseek_v4::interpreter::detail {

using mlir::Operation;

namespace {

/// The value of a static or dynamic size, offset or stride.
int64_t resolve(mlir::OpFoldResult value, const Frame &frame) {
  if (auto attr = llvm::dyn_cast_if_present<mlir::Attribute>(value))
    return llvm::cast<mlir::IntegerAttr>(attr).getInt();
  return frame.index(llvm::cast<mlir::Value>(value));
}

/// Copies the box at `offsets` of `sizes` out of a row-major `source` of
/// `shape`, in row-major order.
template <typename T>
std::vector<T>
extractBox(std::span<const T> source, std::span<const int64_t> shape,
           std::span<const int64_t> offsets, std::span<const int64_t> sizes) {
  size_t rank = shape.size();
  int64_t total = 1;
  for (int64_t s : sizes)
    total *= s;
  std::vector<T> out;
  out.reserve(static_cast<size_t>(total));
  if (total == 0)
    return out;
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  // Walk the box one innermost run at a time.
  std::vector<int64_t> at(rank, 0);
  int64_t inner = rank == 0 ? 1 : sizes[rank - 1];
  while (true) {
    int64_t base = 0;
    for (size_t d = 0; d < rank; ++d)
      base += (offsets[d] + at[d]) * strides[d];
    out.insert(out.end(), source.begin() + base, source.begin() + base + inner);
    size_t d = rank == 0 ? 0 : rank - 1;
    while (d-- > 0) {
      if (++at[d] < sizes[d])
        break;
      at[d] = 0;
    }
    if (d == static_cast<size_t>(-1))
      return out;
  }
}

absl::Status checkReshape(Operation *op, const Tensor &source,
                          std::span<const int64_t> shape,
                          llvm::ArrayRef<mlir::ReassociationIndices> groups,
                          bool expand) {
  std::span<const int64_t> small = expand ? source.getShape() : shape;
  std::span<const int64_t> large = expand ? shape : source.getShape();
  for (auto [i, group] : llvm::enumerate(groups)) {
    int64_t product = 1;
    for (int64_t d : group)
      product *= large[d];
    if (product != small[i])
      return opError(op, "dimension " + llvm::Twine(i) + " of " +
                             shapeString(small) + " is not the product of " +
                             "its group of " + shapeString(large));
  }
  return absl::OkStatus();
}

absl::Status indexArithmetic(Operation *op, Frame &frame,
                             bool (*apply)(int64_t, int64_t, int64_t *)) {
  if (!op->getResult(0).getType().isIndex())
    return opError(op, "is interpreted on index values only");
  int64_t result = 0;
  if (apply(frame.index(op->getOperand(0)), frame.index(op->getOperand(1)),
            &result))
    return opError(op, "overflows");
  frame.set(op->getResult(0), result);
  return absl::OkStatus();
}

} // namespace

absl::Status execute(mlir::tensor::ExpandShapeOp op, Frame &frame, Context &) {
  const Tensor &source = frame.tensor(op.getSrc());
  std::vector<int64_t> shape;
  for (mlir::OpFoldResult size : op.getMixedOutputShape()) {
    int64_t value = resolve(size, frame);
    if (value < 0)
      return opError(op, "output size " + llvm::Twine(value) + " is negative");
    shape.push_back(value);
  }
  KF_RETURN_IF_ERROR(
      checkReshape(op, source, shape, op.getReassociationIndices(), true));
  frame.set(op.getResult(), source.reshaped(std::move(shape)));
  return absl::OkStatus();
}

absl::Status execute(mlir::tensor::CollapseShapeOp op, Frame &frame,
                     Context &) {
  const Tensor &source = frame.tensor(op.getSrc());
  std::vector<int64_t> shape;
  for (const mlir::ReassociationIndices &group : op.getReassociationIndices()) {
    int64_t product = 1;
    for (int64_t d : group)
      product *= source.getDimSize(d);
    shape.push_back(product);
  }
  frame.set(op.getResult(), source.reshaped(std::move(shape)));
  return absl::OkStatus();
}

absl::Status execute(mlir::tensor::DimOp op, Frame &frame, Context &) {
  const Tensor &source = frame.tensor(op.getSource());
  int64_t dim = frame.index(op.getIndex());
  if (dim < 0 || dim >= source.getRank())
    return opError(op, "dimension " + llvm::Twine(dim) +
                           " of a tensor of rank " +
                           llvm::Twine(source.getRank()));
  frame.set(op.getResult(), source.getDimSize(dim));
  return absl::OkStatus();
}

absl::Status execute(mlir::tensor::ExtractSliceOp op, Frame &frame, Context &) {
  const Tensor &source = frame.tensor(op.getSource());
  std::vector<int64_t> offsets, sizes;
  for (mlir::OpFoldResult stride : op.getMixedStrides())
    if (resolve(stride, frame) != 1)
      return opError(op, "strides other than 1 are not interpreted");
  for (mlir::OpFoldResult offset : op.getMixedOffsets())
    offsets.push_back(resolve(offset, frame));
  for (mlir::OpFoldResult size : op.getMixedSizes())
    sizes.push_back(resolve(size, frame));
  for (size_t d = 0; d < sizes.size(); ++d)
    if (offsets[d] < 0 || sizes[d] < 0 ||
        offsets[d] > source.getDimSize(static_cast<int64_t>(d)) - sizes[d])
      return opError(op, "the slice of " + llvm::Twine(sizes[d]) + " at " +
                             llvm::Twine(offsets[d]) + " leaves dimension " +
                             llvm::Twine(d) + " of " +
                             shapeString(source.getShape()));
  // A rank-reducing slice drops unit dimensions of the box.
  llvm::SmallBitVector dropped = op.getDroppedDims();
  std::vector<int64_t> shape;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (!dropped.test(d))
      shape.push_back(sizes[d]);
  switch (source.getElementType()) {
  case ElementType::F32:
    frame.set(op.getResult(),
              Tensor(std::move(shape),
                     extractBox(source.getFloats(), source.getShape(), offsets,
                                sizes)));
    break;
  case ElementType::I32:
    frame.set(
        op.getResult(),
        Tensor(std::move(shape), extractBox(source.getInts(), source.getShape(),
                                            offsets, sizes)));
    break;
  case ElementType::I64:
    frame.set(op.getResult(),
              Tensor(std::move(shape),
                     extractBox(source.getLongs(), source.getShape(), offsets,
                                sizes)));
    break;
  case ElementType::I8:
    frame.set(op.getResult(),
              Tensor(std::move(shape),
                     extractBox(source.getBytes(), source.getShape(), offsets,
                                sizes)));
    break;
  }
  return absl::OkStatus();
}

absl::Status execute(mlir::tensor::ConcatOp op, Frame &frame, Context &) {
  // Row-major: each input contributes, per index of the dimensions before
  // `dim`, one contiguous run of its trailing elements.
  int64_t dim = static_cast<int64_t>(op.getDim());
  const Tensor &first = frame.tensor(op.getInputs().front());
  std::vector<int64_t> shape(first.getShape().begin(), first.getShape().end());
  shape[dim] = 0;
  for (mlir::Value input : op.getInputs()) {
    const Tensor &t = frame.tensor(input);
    if (t.getElementType() != ElementType::F32)
      return opError(op, "only f32 tensors are concatenated");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != dim && t.getDimSize(d) != first.getDimSize(d))
        return opError(op, "inputs of shapes " + shapeString(first.getShape()) +
                               " and " + shapeString(t.getShape()) +
                               " differ outside dimension " + llvm::Twine(dim));
    shape[dim] += t.getDimSize(dim);
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  std::vector<float> out;
  out.reserve(static_cast<size_t>(std::accumulate(
      shape.begin(), shape.end(), int64_t{1}, std::multiplies<>())));
  for (int64_t o = 0; o < outer; ++o)
    for (mlir::Value input : op.getInputs()) {
      const Tensor &t = frame.tensor(input);
      int64_t run = t.getNumElements() / std::max<int64_t>(outer, 1);
      std::span<const float> values = t.getFloats().subspan(
          static_cast<size_t>(o * run), static_cast<size_t>(run));
      out.insert(out.end(), values.begin(), values.end());
    }
  frame.set(op.getResult(), Tensor(std::move(shape), std::move(out)));
  return absl::OkStatus();
}

absl::Status execute(mlir::arith::ConstantOp op, Frame &frame, Context &) {
  mlir::Attribute value = op.getValue();
  if (op.getType().isIndex()) {
    frame.set(op.getResult(), llvm::cast<mlir::IntegerAttr>(value).getInt());
    return absl::OkStatus();
  }
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value);
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(op.getType());
  if (dense && type) {
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    mlir::Type element = type.getElementType();
    if (element.isF32()) {
      auto values = dense.getValues<float>();
      frame.set(op.getResult(),
                Tensor(std::move(shape),
                       std::vector<float>(values.begin(), values.end())));
      return absl::OkStatus();
    }
    if (element.isInteger(32) || element.isInteger(64)) {
      std::vector<int64_t> values;
      for (const llvm::APInt &v : dense.getValues<llvm::APInt>())
        values.push_back(v.getSExtValue());
      if (element.isInteger(64)) {
        frame.set(op.getResult(), Tensor(std::move(shape), std::move(values)));
      } else {
        frame.set(op.getResult(),
                  Tensor(std::move(shape),
                         std::vector<int32_t>(values.begin(), values.end())));
      }
      return absl::OkStatus();
    }
  }
  return opError(op, "constants of this type are not interpreted (index, "
                     "and f32, i32 or i64 tensors are)");
}

absl::Status execute(mlir::arith::AddIOp op, Frame &frame, Context &) {
  return indexArithmetic(op, frame, [](int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r);
  });
}

absl::Status execute(mlir::arith::SubIOp op, Frame &frame, Context &) {
  return indexArithmetic(op, frame, [](int64_t a, int64_t b, int64_t *r) {
    return __builtin_sub_overflow(a, b, r);
  });
}

absl::Status execute(mlir::arith::MulIOp op, Frame &frame, Context &) {
  return indexArithmetic(op, frame, [](int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r);
  });
}

} // namespace kf::deepseek_v4::interpreter::detail
