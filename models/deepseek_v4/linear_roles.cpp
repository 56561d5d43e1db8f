#include "kf/deepseek_v4/linear_roles.h"

#include <array>

namespace kf::deepseek_v4 {

namespace {

using enum LinearRole;
using enum LinearArithmetic;

// The dtypes of docs/models/deepseek_v4_model.md §1.3. wo_a is stored FP8 but
// dequantized to bf16 by the official converter and run as a bf16 linear; the
// experts' FP4 and the attention's FP8 both take FP8 activations.
constexpr std::array kRoles = {
    LinearRoleInfo{AttnQA, "attn_q_a", "fp8 e4m3", Quantized},
    LinearRoleInfo{AttnQB, "attn_q_b", "fp8 e4m3", Quantized},
    LinearRoleInfo{AttnKv, "attn_kv", "fp8 e4m3", Quantized},
    LinearRoleInfo{AttnOutputA, "attn_output_a", "bf16 (fp8, dequantized)",
                   Bf16},
    LinearRoleInfo{AttnOutputB, "attn_output_b", "fp8 e4m3", Quantized},
    LinearRoleInfo{IndexerQB, "indexer.attn_q_b", "fp8 e4m3", Quantized},
    LinearRoleInfo{IndexerProj, "indexer.proj", "bf16", Bf16},
    LinearRoleInfo{Compressor, "{attn,indexer}_compressor_{kv,gate}",
                   "bf16, held in fp32", Fp32},
    LinearRoleInfo{Router, "ffn_gate_inp", "bf16, used in fp32", Fp32},
    LinearRoleInfo{RoutedExpert, "ffn_{gate,up,down}_exps", "fp4 e2m1",
                   Quantized},
    LinearRoleInfo{SharedExpert, "ffn_{gate,up,down}_shexp", "fp8 e4m3",
                   Quantized},
    LinearRoleInfo{Output, "output", "bf16, held in fp32", Fp32},
};

} // namespace

const LinearRoleInfo &linearRole(LinearRole role) {
  for (const LinearRoleInfo &info : kRoles)
    if (info.role == role)
      return info;
  return kRoles.front(); // unreachable: every role has a row
}

} // namespace kf::deepseek_v4
