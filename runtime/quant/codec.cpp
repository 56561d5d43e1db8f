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

constexpr size_t formatIndex(Format f) {
  for (size_t i = 0; i < std::size(kFormats); ++i)
    if (kFormats[i].format == f)
      return i;
  return std::size(kFormats);
}

} // namespace

const Codec *findCodec(Format f) {
  static const auto table = [] {
    std::array<const Codec *, std::size(kFormats)> t{};
    for (auto family :
         {plainCodecs(), legacyCodecs(), q8kCodecs(), kquantCodecs(),
          iq1Codecs(), iq2Codecs(), iq4Codecs(), fp4Codecs(), privateCodecs()})
      for (const CodecEntry &e : family)
        t[formatIndex(e.format)] = &e.codec;
    return t;
  }();
  size_t i = formatIndex(f);
  return i < table.size() ? table[i] : nullptr;
}

} // namespace quant

namespace {

using quant::Codec;
using quant::findCodec;

template <typename Fn> Fn get(Format f, Fn Codec::*member) {
  const Codec *c = findCodec(f);
  return c ? c->*member : nullptr;
}

absl::Status missing(absl::string_view what, Format f) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": format ", toAbsl(formatInfo(f).name), " has none"));
}

// Checks that `elems` is a whole number of blocks of `f` and that `bytes`
// is exactly their size.
absl::Status checkSizes(absl::string_view what, Format f, uint64_t elems,
                        uint64_t bytes) {
  const FormatInfo &info = formatInfo(f);
  std::optional<uint64_t> expected = rowBytes(f, static_cast<int64_t>(elems));
  if (!expected)
    return absl::InvalidArgumentError(absl::StrCat(
        what, " ", toAbsl(info.name), ": ", elems,
        " elements is not a whole number of blocks of ", info.blockElems));
  if (*expected != bytes)
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", toAbsl(info.name), ": ", elems,
                     " elements need ", *expected, " bytes, got ", bytes));
  return absl::OkStatus();
}

} // namespace

absl::Status dequantize(Format f, std::span<const uint8_t> src,
                        std::span<float> dst) {
  auto fn = get(f, &Codec::dequantize);
  if (!fn)
    return missing("dequantize", f);
  if (absl::Status s = checkSizes("dequantize", f, dst.size(), src.size());
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
  if (absl::Status s = checkSizes("quantize", f, src.size(), dst.size());
      !s.ok())
    return s;
  if (!src.empty()) // a codec never sees zero elements (nor null buffers)
    fn(src.data(), dst.data(), static_cast<int64_t>(src.size()));
  return absl::OkStatus();
}

absl::Status quantizeActivation(Format f, std::span<const float> src,
                                std::span<uint8_t> dst) {
  auto fn = get(f, &Codec::quantizeActivation);
  if (!fn)
    return missing("quantize_activation", f);
  if (absl::Status s =
          checkSizes("quantize_activation", f, src.size(), dst.size());
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
  const FormatInfo &info = formatInfo(f);
  if (w.size() % info.blockBytes != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("dot ", toAbsl(info.name), ": ", w.size(),
                     " weight bytes is not a whole number of ", info.blockBytes,
                     "-byte blocks"));
  uint64_t n = w.size() / info.blockBytes * info.blockElems;
  if (absl::Status s =
          checkSizes("dot activations", info.dotFormat, n, a.size());
      !s.ok())
    return s;
  return n == 0 ? 0.0f : fn(w.data(), a.data(), static_cast<int64_t>(n));
}

bool hasDequantize(Format f) { return get(f, &Codec::dequantize) != nullptr; }
bool hasQuantize(Format f) { return get(f, &Codec::quantize) != nullptr; }
bool hasQuantizeActivation(Format f) {
  return get(f, &Codec::quantizeActivation) != nullptr;
}
bool hasDot(Format f) { return get(f, &Codec::dot) != nullptr; }

} // namespace kf
