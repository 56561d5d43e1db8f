#include "kf/deepseek_v4/reference/hadamard.h"

#include <bit>
#include <cmath>
#include <vector>

#include "internal.h"
#include "kf/deepseek_v4/reference/primitives.h"

namespace kf::deepseek_v4::reference {

void hadamard(std::span<float> x) {
  size_t n = x.size();
  internal::check(n > 0 && std::has_single_bit(n),
                  "hadamard: length must be a power of two");
  std::vector<float> in(x.begin(), x.end());
  double norm = 1.0 / std::sqrt(static_cast<double>(n));
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (size_t j = 0; j < n; ++j)
      sum += std::popcount(i & j) % 2 == 0 ? in[j] : -in[j];
    x[i] = roundBf16(static_cast<float>(sum * norm));
  }
}

} // namespace kf::deepseek_v4::reference
