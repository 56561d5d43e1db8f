#include "kf/runtime/dequantize.h"

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/half.h"

static_assert(std::endian::native == std::endian::little,
              "GGUF data is little-endian and is read in place");

namespace kf {
namespace {

uint16_t load_u16(const uint8_t *p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

using BlockDecoder = void (*)(const uint8_t *block, float *out);

void decode_f32(const uint8_t *b, float *y) {
  std::memcpy(y, b, sizeof(float));
}
void decode_f16(const uint8_t *b, float *y) { *y = fp16_to_fp32(load_u16(b)); }
void decode_bf16(const uint8_t *b, float *y) { *y = bf16_to_fp32(load_u16(b)); }

// Q8_0: fp16 scale d, then 32 int8 quants; y = d * q.
void decode_q8_0(const uint8_t *b, float *y) {
  float d = fp16_to_fp32(load_u16(b));
  for (int j = 0; j < 32; ++j)
    y[j] = d * static_cast<float>(static_cast<int8_t>(b[2 + j]));
}

BlockDecoder block_decoder(Format f) {
  switch (f) {
  case Format::F32:
    return decode_f32;
  case Format::F16:
    return decode_f16;
  case Format::BF16:
    return decode_bf16;
  case Format::Q8_0:
    return decode_q8_0;
  }
  return nullptr;
}

} // namespace

absl::Status dequantize(Format f, std::span<const uint8_t> src,
                        std::span<float> dst) {
  const FormatInfo &info = format_info(f);
  BlockDecoder decode = block_decoder(f);
  if (info.role != FormatRole::Weight || decode == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat("dequantize: format ", to_absl(info.name),
                     " has no reference decoder"));
  std::optional<uint64_t> bytes =
      row_bytes(f, static_cast<int64_t>(dst.size()));
  if (!bytes)
    return absl::InvalidArgumentError(absl::StrCat(
        "dequantize ", to_absl(info.name), ": ", dst.size(),
        " elements is not a whole number of blocks of ", info.block_elems));
  if (*bytes != src.size())
    return absl::InvalidArgumentError(
        absl::StrCat("dequantize ", to_absl(info.name), ": ", dst.size(),
                     " elements need ", *bytes, " bytes, got ", src.size()));
  const uint8_t *block = src.data();
  for (size_t i = 0; i < dst.size();
       i += info.block_elems, block += info.block_bytes)
    decode(block, dst.data() + i);
  return absl::OkStatus();
}

} // namespace kf
