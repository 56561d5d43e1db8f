//===- tensor.cpp - Run-time tensors --------------------------------------===//

#include "kf/deepseek_v4/interpreter/interpreter.h"

#include <functional>
#include <numeric>

namespace kf::deepseek_v4::interpreter {

Tensor::Tensor(std::vector<int64_t> shape, std::vector<float> values)
    : shape(std::move(shape)), data(std::move(values)) {}
Tensor::Tensor(std::vector<int64_t> shape, std::vector<int32_t> values)
    : shape(std::move(shape)), data(std::move(values)) {}
Tensor::Tensor(std::vector<int64_t> shape, std::vector<int64_t> values)
    : shape(std::move(shape)), data(std::move(values)) {}
Tensor::Tensor(std::vector<int64_t> shape, std::vector<int8_t> values)
    : shape(std::move(shape)), data(std::move(values)) {}

ElementType Tensor::getElementType() const {
  switch (data.index()) {
  case 0:
    return ElementType::F32;
  case 1:
    return ElementType::I32;
  case 2:
    return ElementType::I64;
  default:
    return ElementType::I8;
  }
}

int64_t Tensor::getNumElements() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<>());
}

std::span<const float> Tensor::getFloats() const {
  return std::get<std::vector<float>>(data);
}
std::span<const int32_t> Tensor::getInts() const {
  return std::get<std::vector<int32_t>>(data);
}
std::span<const int64_t> Tensor::getLongs() const {
  return std::get<std::vector<int64_t>>(data);
}
std::span<const int8_t> Tensor::getBytes() const {
  return std::get<std::vector<int8_t>>(data);
}
std::span<float> Tensor::getMutableFloats() {
  return std::get<std::vector<float>>(data);
}
std::span<int32_t> Tensor::getMutableInts() {
  return std::get<std::vector<int32_t>>(data);
}
std::span<int64_t> Tensor::getMutableLongs() {
  return std::get<std::vector<int64_t>>(data);
}

std::span<int8_t> Tensor::getMutableBytes() {
  return std::get<std::vector<int8_t>>(data);
}

Tensor Tensor::reshaped(std::vector<int64_t> newShape) const {
  Tensor result = *this;
  result.shape = std::move(newShape);
  return result;
}

} // namespace kf::deepseek_v4::interpreter
