#include "absl/strings/str_cat.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"
#include "matmul_kernel.h"

namespace kf::bench {

MatmulKernel referenceKernel() {
  MatmulKernel kernel;
  kernel.name = "reference";
  kernel.supports = [](Format f) { return hasDot(f); };
  kernel.run = [](const MatmulArgs &a, int64_t rowBegin,
                  int64_t rowEnd) -> absl::Status {
    std::optional<uint64_t> wBytes = rowBytes(a.format, a.k);
    std::optional<uint64_t> aBytes =
        rowBytes(formatInfo(a.format).dotFormat, a.k);
    if (!wBytes || !aBytes)
      return absl::InvalidArgumentError(
          absl::StrCat("K = ", a.k, " is not a whole number of ",
                       toAbsl(formatInfo(a.format).name), " blocks"));
    for (int64_t j = rowBegin; j < rowEnd; ++j) {
      std::span<const uint8_t> w(a.weights + j * *wBytes, *wBytes);
      for (int64_t i = 0; i < a.m; ++i) {
        std::span<const uint8_t> x(a.activations + i * *aBytes, *aBytes);
        KF_ASSIGN_OR_RETURN(a.out[i * a.n + j], dot(a.format, w, x));
      }
    }
    return absl::OkStatus();
  };
  kernel.agreement = Agreement::Exact;
  return kernel;
}

} // namespace kf::bench
