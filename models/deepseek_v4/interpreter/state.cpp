//===- state.cpp - Weights, caches, values and checks ---------------------===//

#include "internal.h"

#include <cmath>
#include <cstring>

#include "kf/deepseek_v4/reference/rope.h"
#include "kf/runtime/packing.h"
#include "kf/runtime/quant.h"
#include "llvm/Support/raw_ostream.h"

namespace kf::deepseek_v4::interpreter::detail {

using mlir::Operation;

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

namespace {

absl::Status weightError(const Weight &weight, const llvm::Twine &message) {
  return absl::InvalidArgumentError(
      ("interpreter: weight '" + weight.name + "': " + message).str());
}

} // namespace

absl::Status checkFinite(const Weight &weight) {
  for (size_t i = 0; i < weight.floats.size(); ++i)
    if (!std::isfinite(weight.floats[i]))
      return weightError(
          weight,
          "has the non-finite value " +
              llvm::Twine(std::isnan(weight.floats[i]) ? "nan" : "inf") +
              " at element " + llvm::Twine(i));
  return absl::OkStatus();
}

namespace {

/// Decodes a file-bound weight once: fp32 through the reference codecs, i32
/// tables as they are stored (little-endian int32, as GGUF files are).
absl::Status load(Weight &weight) {
  if (weight.loaded)
    return absl::OkStatus();
  std::span<const uint8_t> bytes = weight.file->data(*weight.tensor);
  size_t n = static_cast<size_t>(weight.tensor->elements());
  if (weight.type.getFormat() == mlir::kf::Format::I32) {
    if (bytes.size() != n * sizeof(int32_t))
      return weightError(weight, "holds " + llvm::Twine(bytes.size()) +
                                     " bytes, expected " +
                                     llvm::Twine(n * sizeof(int32_t)));
    weight.ints.resize(n);
    std::memcpy(weight.ints.data(), bytes.data(), bytes.size());
  } else {
    weight.floats.resize(n);
    absl::Status decoded =
        dequantize(weight.tensor->format, bytes, weight.floats);
    if (!decoded.ok()) {
      weight.floats.clear();
      return weightError(weight, std::string(decoded.message()));
    }
  }
  if (absl::Status finite = checkFinite(weight); !finite.ok()) {
    weight.floats.clear();
    return finite;
  }
  weight.loaded = true;
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<std::span<const float>> getFloats(Weight &weight) {
  if (weight.type.getFormat() == mlir::kf::Format::I32)
    return weightError(weight, "is an i32 table where fp32 values are read");
  if (absl::Status loaded = load(weight); !loaded.ok())
    return loaded;
  return std::span<const float>(weight.floats);
}

absl::StatusOr<std::span<const int32_t>> getInts(Weight &weight) {
  if (weight.type.getFormat() != mlir::kf::Format::I32)
    return weightError(weight, "is not an i32 table");
  if (absl::Status loaded = load(weight); !loaded.ok())
    return loaded;
  return std::span<const int32_t>(weight.ints);
}

absl::StatusOr<std::span<const uint8_t>>
getPacked(Weight &weight, const ::kf::PackedLayout &layout) {
  std::string name = layoutName(layout);
  if (auto it = weight.packed.find(name); it != weight.packed.end())
    return std::span<const uint8_t>(it->second);
  if (!weight.file)
    return weightError(weight, "is read by a compiled kernel, which needs its "
                               "file bytes; weights given in memory have none");
  mlir::kf::QWeightType type = weight.type;
  std::span<const uint8_t> bytes = weight.file->data(*weight.tensor);
  absl::StatusOr<std::vector<uint8_t>> packed =
      type.isExpertStack()
          ? packExpertWeights(layout, bytes, type.getShape().front(),
                              type.getRows(), type.getCols())
          : packWeights(layout, bytes, type.getRows(), type.getCols());
  if (!packed.ok())
    return weightError(weight, "repacking to " + name + ": " +
                                   std::string(packed.status().message()));
  auto [it, inserted] = weight.packed.emplace(name, std::move(*packed));
  return std::span<const uint8_t>(it->second);
}

//===----------------------------------------------------------------------===//
// Caches
//===----------------------------------------------------------------------===//

void Cache::reset() {
  if (auto *ring = std::get_if<WindowRing>(&state)) {
    std::fill(ring->rows.begin(), ring->rows.end(), 0.0f);
    return;
  }
  auto &compressed = std::get<CompressorState>(state);
  compressed = CompressorState{compressed.type, std::nullopt, {}, {}, {}, 0, 0};
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

const RuntimeValue *Frame::lookup(mlir::Value value) const {
  auto it = values.find(value);
  return it == values.end() ? nullptr : &it->second;
}

const Tensor &Frame::tensor(mlir::Value value) const {
  return *std::get<std::shared_ptr<const Tensor>>(values.find(value)->second);
}

int64_t Frame::index(mlir::Value value) const {
  return std::get<int64_t>(values.find(value)->second);
}

Weight &Frame::weight(mlir::Value value) const {
  return *std::get<Weight *>(values.find(value)->second);
}

Cache &Frame::cache(mlir::Value value) const {
  return *std::get<Cache *>(values.find(value)->second);
}

void Frame::set(mlir::Value value, RuntimeValue runtimeValue) {
  values[value] = std::move(runtimeValue);
}

void Frame::set(mlir::Value value, Tensor tensor) {
  values[value] = std::make_shared<const Tensor>(std::move(tensor));
}

//===----------------------------------------------------------------------===//
// RoPE tables
//===----------------------------------------------------------------------===//

absl::StatusOr<void *> Context::getKernel(Operation *op,
                                          mlir::SymbolRefAttr callee) {
  if (auto it = kernelAddresses.find(callee); it != kernelAddresses.end())
    return it->second;
  if (!kernels)
    return opError(op, "calls a compiled kernel, but no kernels were given "
                       "(Interpreter::setKernelResolver)");
  absl::StatusOr<void *> address =
      kernels(callee.getLeafReference().getValue());
  if (!address.ok())
    return opError(op, "kernel " + callee.getLeafReference().getValue() + ": " +
                           std::string(address.status().message()));
  kernelAddresses[callee] = *address;
  return *address;
}

absl::StatusOr<std::span<const float>>
Context::getRopeFrequencies(Operation *op, mlir::kf::RopeAttr rope) {
  auto it = tables.find(rope);
  if (it != tables.end())
    return std::span<const float>(it->second);
  reference::RopeConfig config{
      .ropeDim = static_cast<int>(rope.getDim()),
      .base = rope.getBase().convertToDouble(),
      .yarn = rope.hasYarn(),
      .yarnFactor = rope.getYarnFactor().convertToDouble(),
      .betaFast = rope.getBetaFast().convertToDouble(),
      .betaSlow = rope.getBetaSlow().convertToDouble(),
      .originalLen = static_cast<double>(rope.getOriginalContext())};
  // rope_frequencies stops the program on what it cannot tabulate: refuse
  // that here instead.
  if (rope.getDim() <= 0 || rope.getDim() % 2 != 0)
    return opError(op, "rope dim " + llvm::Twine(rope.getDim()) +
                           " is not a positive even number");
  if (config.yarn) {
    reference::YarnRange range = reference::yarnCorrectionRange(config);
    if (range.hi <= range.lo)
      return opError(op, "the YaRN ramp of the rope is empty (dims " +
                             llvm::Twine(range.lo) + " to " +
                             llvm::Twine(range.hi) + ")");
  }
  std::vector<float> freqs(static_cast<size_t>(rope.getDim() / 2));
  reference::ropeFrequencies(config, freqs);
  return std::span<const float>(
      tables.try_emplace(rope, std::move(freqs)).first->second);
}

//===----------------------------------------------------------------------===//
// Errors and checks
//===----------------------------------------------------------------------===//

absl::Status opError(Operation *op, const llvm::Twine &message) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "interpreter: " << op->getName();
  mlir::Location loc = op->getLoc();
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    os << " at " << name.getName().getValue();
  else if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    os << " at " << file.getFilename().getValue() << ":" << file.getLine()
       << ":" << file.getColumn();
  os << ": " << message;
  return absl::InvalidArgumentError(text);
}

std::string shapeString(std::span<const int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

namespace {

std::optional<ElementType> elementTypeOf(mlir::Type type) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isInteger(32))
    return ElementType::I32;
  if (type.isInteger(64))
    return ElementType::I64;
  if (type.isInteger(8))
    return ElementType::I8;
  return std::nullopt;
}

const char *elementName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::I8:
    return "i8";
  }
  return "?";
}

/// Checks a tensor against a ranked tensor type: element type, rank and
/// every static dimension.
absl::Status checkTensor(Operation *op, const llvm::Twine &what,
                         const Tensor &tensor, mlir::RankedTensorType type) {
  std::optional<ElementType> element = elementTypeOf(type.getElementType());
  if (!element)
    return opError(op, what + " has an element type the interpreter does not "
                              "hold (f32, i32 and i64 only)");
  if (*element != tensor.getElementType())
    return opError(op, what + " holds " + elementName(tensor.getElementType()) +
                           " values, expected " + elementName(*element));
  bool agree = tensor.getRank() == type.getRank();
  for (int64_t d = 0; agree && d < type.getRank(); ++d)
    agree = type.isDynamicDim(d) || type.getDimSize(d) == tensor.getDimSize(d);
  if (!agree) {
    std::string expected;
    llvm::raw_string_ostream os(expected);
    os << type;
    return opError(op, what + " has shape " + shapeString(tensor.getShape()) +
                           ", which does not fit " + expected);
  }
  return absl::OkStatus();
}

} // namespace

absl::Status checkOperands(Operation *op, const Frame &frame) {
  for (mlir::OpOperand &operand : op->getOpOperands()) {
    std::string what =
        ("operand #" + llvm::Twine(operand.getOperandNumber())).str();
    const RuntimeValue *value = frame.lookup(operand.get());
    mlir::Type type = operand.get().getType();
    if (!value || std::holds_alternative<std::monostate>(*value))
      return opError(op, what + " has no value");
    bool ok = false;
    if (auto tensorType = llvm::dyn_cast<mlir::RankedTensorType>(type)) {
      const auto *tensor = std::get_if<std::shared_ptr<const Tensor>>(value);
      if (tensor)
        return checkTensor(op, what, **tensor, tensorType);
    } else if (type.isIndex()) {
      ok = std::holds_alternative<int64_t>(*value);
    } else if (llvm::isa<mlir::kf::QWeightType>(type)) {
      ok = std::holds_alternative<Weight *>(*value);
    } else if (llvm::isa<mlir::kf::WindowCacheType,
                         mlir::kf::CompressedCacheType>(type)) {
      ok = std::holds_alternative<Cache *>(*value);
    }
    if (!ok)
      return opError(op, what + " does not hold a value of its type");
  }
  return absl::OkStatus();
}

absl::Status checkResult(Operation *op, unsigned resultIndex,
                         const Tensor &tensor) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(
      op->getResult(resultIndex).getType());
  if (!type)
    return opError(op, "result #" + llvm::Twine(resultIndex) +
                           " is not a ranked tensor");
  return checkTensor(op, "result #" + llvm::Twine(resultIndex), tensor, type);
}

absl::Status expectSize(Operation *op, const llvm::Twine &what, int64_t actual,
                        int64_t expected) {
  if (actual == expected)
    return absl::OkStatus();
  return opError(op, what + " is " + llvm::Twine(actual) + ", expected " +
                         llvm::Twine(expected));
}

absl::Status expectFinite(Operation *op, const llvm::Twine &what,
                          std::span<const float> values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      return opError(op, what + " has the non-finite value " +
                             (std::isnan(values[i]) ? "nan" : "inf") +
                             " at element " + llvm::Twine(i));
  return absl::OkStatus();
}

} // namespace kf::deepseek_v4::interpreter::detail
