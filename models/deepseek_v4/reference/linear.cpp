#include "kf/deepseek_v4/reference/linear.h"

#include <vector>

#include "internal.h"
#include "kf/deepseek_v4/reference/primitives.h"
#include "kf/deepseek_v4/reference/quant_sim.h"

namespace kf::deepseek_v4::reference {

using internal::check;

void linearFp32(std::span<const float> x, std::span<const float> weight,
                std::span<float> y) {
  check(!x.empty() && weight.size() == y.size() * x.size(),
        "linear: weight must be [out][in] for y [out] and x [in]");
  for (size_t n = 0; n < y.size(); ++n) {
    std::span<const float> row = weight.subspan(n * x.size(), x.size());
    double dot = 0;
    for (size_t k = 0; k < x.size(); ++k)
      dot += static_cast<double>(x[k]) * row[k];
    y[n] = static_cast<float>(dot);
  }
}

void linearBf16(std::span<const float> x, std::span<const float> weight,
                std::span<float> y) {
  linearFp32(x, weight, y);
  roundBf16(y);
}

void lin(std::span<const float> x, std::span<const float> weight, bool simulate,
         std::span<float> y) {
  std::vector<float> activation(x.begin(), x.end());
  if (simulate)
    fp8Sim(activation, 128); // the per-128 e4m3 activation quantization
  linearBf16(activation, weight, y);
}

void linear(LinearRole role, std::span<const float> x,
            std::span<const float> weight, const Options &options,
            std::span<float> y) {
  if (options.precision == Precision::F32)
    return linearFp32(x, weight, y);
  switch (linearRole(role).arithmetic) {
  case LinearArithmetic::Quantized:
    return lin(x, weight, options.simulates(), y);
  case LinearArithmetic::Bf16:
    return linearBf16(x, weight, y);
  case LinearArithmetic::Fp32:
    return linearFp32(x, weight, y);
  }
}

} // namespace kf::deepseek_v4::reference
