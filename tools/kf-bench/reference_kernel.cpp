#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"
#include "matmul_kernel.h"

namespace kf::bench {

MatmulKernel reference_kernel() {
  MatmulKernel kernel;
  kernel.name = "reference";
  kernel.supports = [](Format f) { return has_dot(f); };
  kernel.run = [](const MatmulArgs &a, int64_t row_begin,
                  int64_t row_end) -> absl::Status {
    std::optional<uint64_t> w_bytes = row_bytes(a.format, a.k);
    std::optional<uint64_t> a_bytes =
        row_bytes(format_info(a.format).dot_format, a.k);
    if (!w_bytes || !a_bytes)
      return absl::InvalidArgumentError(
          absl::StrCat("K = ", a.k, " is not a whole number of ",
                       to_absl(format_info(a.format).name), " blocks"));
    for (int64_t j = row_begin; j < row_end; ++j) {
      std::span<const uint8_t> w(a.weights + j * *w_bytes, *w_bytes);
      for (int64_t i = 0; i < a.m; ++i) {
        std::span<const uint8_t> x(a.activations + i * *a_bytes, *a_bytes);
        KF_ASSIGN_OR_RETURN(a.out[i * a.n + j], dot(a.format, w, x));
      }
    }
    return absl::OkStatus();
  };
  kernel.agreement = Agreement::Exact;
  return kernel;
}

} // namespace kf::bench
