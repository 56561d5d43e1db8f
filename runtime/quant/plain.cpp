// F32, F16, BF16 and I32: element arrays. Their dot products see activations
// rounded to the weight's type (ggml's vec_dot_type) and accumulate in double,
// as ggml's scalar vec_dot_f16/bf16/f32 do.
#include "quant/codec.h"

namespace kf::quant {
namespace {

void dequantizeF32(const uint8_t *src, float *dst, int64_t n) {
  std::memcpy(dst, src, n * sizeof(float));
}
void quantizeF32(const float *src, uint8_t *dst, int64_t n) {
  std::memcpy(dst, src, n * sizeof(float));
}
float dotF32(const uint8_t *w, const uint8_t *a, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += static_cast<double>(loadF32(w + 4 * i) * loadF32(a + 4 * i));
  return static_cast<float>(sum);
}

// Integer tables decode to the nearest float (exact below 2^24, which covers
// every index table a model stores).
void dequantizeI32(const uint8_t *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    int32_t v;
    std::memcpy(&v, src + 4 * i, sizeof v);
    dst[i] = static_cast<float>(v);
  }
}

template <float (*Decode)(uint16_t), uint16_t (*Encode)(float)> struct Half {
  static void dequantize(const uint8_t *src, float *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      dst[i] = Decode(loadU16(src + 2 * i));
  }
  static void quantize(const float *src, uint8_t *dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      storeU16(dst + 2 * i, Encode(src[i]));
  }
  static float dot(const uint8_t *w, const uint8_t *a, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += static_cast<double>(Decode(loadU16(w + 2 * i)) *
                                 Decode(loadU16(a + 2 * i)));
    return static_cast<float>(sum);
  }
};

using F16 = Half<fp16ToFp32, fp32ToFp16>;
using BF16 = Half<bf16ToFp32, fp32ToBf16>;

constexpr CodecEntry kCodecs[] = {
    {Format::F32, {dequantizeF32, quantizeF32, quantizeF32, dotF32}},
    {Format::F16, {F16::dequantize, F16::quantize, F16::quantize, F16::dot}},
    {Format::BF16,
     {BF16::dequantize, BF16::quantize, BF16::quantize, BF16::dot}},
    {Format::I32, {dequantizeI32, nullptr, nullptr, nullptr}},
};

} // namespace

std::span<const CodecEntry> plainCodecs() { return kCodecs; }

} // namespace kf::quant
