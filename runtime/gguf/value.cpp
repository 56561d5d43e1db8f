#include "kf/runtime/gguf_value.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"

namespace kf::gguf {

namespace {

// The value type of each scalar alternative of Value::Storage, in order.
constexpr std::array<ValueType, Value::kScalarCount> kScalarTypes = {
    ValueType::Uint8,   ValueType::Int8,   ValueType::Uint16,
    ValueType::Int16,   ValueType::Uint32, ValueType::Int32,
    ValueType::Float32, ValueType::Bool,   ValueType::String,
    ValueType::Uint64,  ValueType::Int64,  ValueType::Float64,
};
static_assert(std::variant_size_v<Value::Storage> == 2 * Value::kScalarCount);
static_assert(Value::kIndexOf<std::string> ==
              static_cast<size_t>(ValueType::String));
static_assert(Value::kIndexOf<uint64_t> ==
              static_cast<size_t>(ValueType::Uint64) - 1);

} // namespace

std::string_view valueTypeName(ValueType type) {
  switch (type) {
  case ValueType::Uint8:
    return "uint8";
  case ValueType::Int8:
    return "int8";
  case ValueType::Uint16:
    return "uint16";
  case ValueType::Int16:
    return "int16";
  case ValueType::Uint32:
    return "uint32";
  case ValueType::Int32:
    return "int32";
  case ValueType::Float32:
    return "float32";
  case ValueType::Bool:
    return "bool";
  case ValueType::String:
    return "string";
  case ValueType::Array:
    return "array";
  case ValueType::Uint64:
    return "uint64";
  case ValueType::Int64:
    return "int64";
  case ValueType::Float64:
    return "float64";
  }
  return "unknown";
}

size_t Value::size() const {
  return std::visit(
      [](const auto &v) -> size_t {
        if constexpr (detail::kIsVector<std::decay_t<decltype(v)>>)
          return v.size();
        else
          return 1;
      },
      storage_);
}

ValueType Value::scalarTypeOfIndex(size_t index) {
  return kScalarTypes[index % kScalarCount];
}

std::string Value::describeIndex(size_t index) {
  absl::string_view element = toAbsl(valueTypeName(scalarTypeOfIndex(index)));
  return index >= kScalarCount ? absl::StrCat("array of ", element)
                               : std::string(element);
}

} // namespace kf::gguf
