// GGUF metadata values: the 13 value types of the format and a Value holding
// one scalar, string or homogeneous array of them (docs/formats/gguf.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace kf::gguf {

// enum gguf_type: the id of each value type in a file.
enum class ValueType : uint32_t {
  Uint8 = 0,
  Int8 = 1,
  Uint16 = 2,
  Int16 = 3,
  Uint32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  Uint64 = 10,
  Int64 = 11,
  Float64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;

// GGUF's own lower-case names: "uint8", ..., "string", "array", "float64".
std::string_view valueTypeName(ValueType type);

namespace detail {
template <typename... T>
using ScalarsThenArrays = std::variant<T..., std::vector<T>...>;

template <typename T, typename Variant> struct AlternativeIndex;
template <typename T, typename... Ts>
struct AlternativeIndex<T, std::variant<Ts...>> {
  static constexpr size_t value = [] {
    constexpr bool same[] = {std::is_same_v<T, Ts>...};
    size_t i = 0;
    while (i < sizeof...(Ts) && !same[i])
      ++i;
    return i;
  }();
};

template <typename T> inline constexpr bool kIsVector = false;
template <typename T> inline constexpr bool kIsVector<std::vector<T>> = true;

// How Value::as<T> reads a T: the alternative it is stored as. Scalars are
// copied; strings and arrays are viewed in place.
template <typename T> struct StoredAs { using type = T; };
template <> struct StoredAs<std::string_view> { using type = std::string; };
template <typename E> struct StoredAs<std::span<const E>> {
  using type = std::vector<E>;
};
} // namespace detail

class Value {
public:
  // The scalar alternatives are in ValueType order (Array left out), then an
  // array of each: the index of an alternative says its type.
  using Storage =
      detail::ScalarsThenArrays<uint8_t, int8_t, uint16_t, int16_t, uint32_t,
                                int32_t, float, bool, std::string, uint64_t,
                                int64_t, double>;
  static constexpr size_t kScalarCount = kValueTypeCount - 1;

  // Index of alternative T in Storage, std::variant_size_v<Storage> if none.
  template <typename T>
  static constexpr size_t kIndexOf =
      detail::AlternativeIndex<T, Storage>::value;
  template <typename T>
  static constexpr bool kIsAlternative =
      kIndexOf<T> < std::variant_size_v<Storage>;

  // Exactly the alternatives' types, so that no literal converts silently
  // (an `int` is an int32, a `const char *` a string, never a bool).
  template <typename T>
  requires kIsAlternative<T> Value(T value)
      : storage_(std::in_place_type<T>, std::move(value)) {}
  Value(const char *s) : Value(std::string(s)) {}
  Value(std::string_view s) : Value(std::string(s)) {}

  // Array for arrays; elementType() is then the type of their elements.
  ValueType type() const {
    return isArray() ? ValueType::Array : elementType();
  }
  ValueType elementType() const { return scalarTypeOfIndex(storage_.index()); }
  bool isArray() const { return storage_.index() >= kScalarCount; }
  // Elements of an array; 1 for a scalar.
  size_t size() const;

  // "uint32", "string", "array of string", ...
  std::string typeDescription() const {
    return describeIndex(storage_.index());
  }

  template <typename T> const T *getIf() const {
    return std::get_if<T>(&storage_);
  }

  // The value as T when it holds exactly that type: a scalar type (a copy),
  // std::string_view (a string) or std::span<const E> (an array of E, E not
  // bool: read those with get_if<std::vector<bool>>()).
  template <typename T> std::optional<T> as() const {
    using Stored = typename detail::StoredAs<T>::type;
    static_assert(kIsAlternative<Stored>, "not a GGUF value type");
    static_assert(!std::is_same_v<T, std::span<const bool>>,
                  "std::vector<bool> has no span: use get_if");
    if (const Stored *stored = getIf<Stored>())
      return T(*stored);
    return std::nullopt;
  }

  // What as<T>() expects, in the words of typeDescription().
  template <typename T> static std::string describe() {
    return describeIndex(kIndexOf<typename detail::StoredAs<T>::type>);
  }

  const Storage &storage() const { return storage_; }

  bool operator==(const Value &) const = default;

private:
  static ValueType scalarTypeOfIndex(size_t index);
  static std::string describeIndex(size_t index);

  Storage storage_;
};

} // namespace kf::gguf
