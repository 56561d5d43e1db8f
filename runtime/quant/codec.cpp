#include <array>

#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/quant.h"
#include "quant/codec.h"

static_assert(std::endian::native == std::endian::little,
              "GGUF data is little-endian and is read in place");

namespace kf {
namespace quant {

namespace {

constexpr size_t format_index(Format f) {
  for (size_t i = 0; i < std::size(kFormats); ++i)
    if (kFormats[i].format == f)
      return i;
  return std::size(kFormats);
}

} // namespace

const Codec *find_codec(Format f) {
  static const auto table = [] {
    std::array<const Codec *, std::size(kFormats)> t{};
    for (auto family : {plain_codecs(), legacy_codecs(), q8_k_codecs(),
                        kquant_codecs(), iq1_codecs(), iq2_codecs(),
                        iq4_codecs(), fp4_codecs(), private_codecs()})
      for (const CodecEntry &e : family)
        t[format_index(e.format)] = &e.codec;
    return t;
  }();
  size_t i = format_index(f);
  return i < table.size() ? table[i] : nullptr;
}

} // namespace quant

namespace {

using quant::Codec;
using quant::find_codec;

template <typename Fn> Fn get(Format f, Fn Codec::*member) {
  const Codec *c = find_codec(f);
  return c ? c->*member : nullptr;
}

absl::Status missing(absl::string_view what, Format f) {
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": format ", to_absl(format_info(f).name), " has none"));
}

// Checks that `elems` is a whole number of blocks of `f` and that `bytes`
// is exactly their size.
absl::Status check_sizes(absl::string_view what, Format f, uint64_t elems,
                         uint64_t bytes) {
  const FormatInfo &info = format_info(f);
  std::optional<uint64_t> expected = row_bytes(f, static_cast<int64_t>(elems));
  if (!expected)
    return absl::InvalidArgumentError(absl::StrCat(
        what, " ", to_absl(info.name), ": ", elems,
        " elements is not a whole number of blocks of ", info.block_elems));
  if (*expected != bytes)
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", to_absl(info.name), ": ", elems,
                     " elements need ", *expected, " bytes, got ", bytes));
  return absl::OkStatus();
}

} // namespace

absl::Status dequantize(Format f, std::span<const uint8_t> src,
                        std::span<float> dst) {
  auto fn = get(f, &Codec::dequantize);
  if (!fn)
    return missing("dequantize", f);
  if (absl::Status s = check_sizes("dequantize", f, dst.size(), src.size());
      !s.ok())
    return s;
  if (!dst.empty()) // a codec never sees zero elements (nor null buffers)
    fn(src.data(), dst.data(), static_cast<int64_t>(dst.size()));
  return absl::OkStatus();
}

absl::Status quantize(Format f, std::span<const float> src,
                      std::span<uint8_t> dst) {
  auto fn = get(f, &Codec::quantize);
  if (!fn)
    return missing("quantize", f);
  if (absl::Status s = check_sizes("quantize", f, src.size(), dst.size());
      !s.ok())
    return s;
  if (!src.empty()) // a codec never sees zero elements (nor null buffers)
    fn(src.data(), dst.data(), static_cast<int64_t>(src.size()));
  return absl::OkStatus();
}

absl::Status quantize_activation(Format f, std::span<const float> src,
                                 std::span<uint8_t> dst) {
  auto fn = get(f, &Codec::quantize_activation);
  if (!fn)
    return missing("quantize_activation", f);
  if (absl::Status s =
          check_sizes("quantize_activation", f, src.size(), dst.size());
      !s.ok())
    return s;
  if (!src.empty()) // a codec never sees zero elements (nor null buffers)
    fn(src.data(), dst.data(), static_cast<int64_t>(src.size()));
  return absl::OkStatus();
}

absl::StatusOr<float> dot(Format f, std::span<const uint8_t> w,
                          std::span<const uint8_t> a) {
  auto fn = get(f, &Codec::dot);
  if (!fn)
    return missing("dot", f);
  const FormatInfo &info = format_info(f);
  if (w.size() % info.block_bytes != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("dot ", to_absl(info.name), ": ", w.size(),
                     " weight bytes is not a whole number of ",
                     info.block_bytes, "-byte blocks"));
  uint64_t n = w.size() / info.block_bytes * info.block_elems;
  if (absl::Status s =
          check_sizes("dot activations", info.dot_format, n, a.size());
      !s.ok())
    return s;
  return n == 0 ? 0.0f : fn(w.data(), a.data(), static_cast<int64_t>(n));
}

bool has_dequantize(Format f) { return get(f, &Codec::dequantize) != nullptr; }
bool has_quantize(Format f) { return get(f, &Codec::quantize) != nullptr; }
bool has_quantize_activation(Format f) {
  return get(f, &Codec::quantize_activation) != nullptr;
}
bool has_dot(Format f) { return get(f, &Codec::dot) != nullptr; }

} // namespace kf
