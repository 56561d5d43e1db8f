// The linear layers of DeepSeek-V4 by role, and how the official checkpoint
// holds each one's weight, which decides the arithmetic the model runs it in
// (docs/models/deepseek_v4.md, "Linear roles"). A file may store any role in
// any format (F32, Q8_0, MXFP4, ...); the arithmetic follows the role, never
// the file's format.
#pragma once

#include <string_view>

namespace kf::deepseek_v4 {

enum class LinearRole {
  AttnQA,       // attn_q_a
  AttnQB,       // attn_q_b
  AttnKv,       // attn_kv
  AttnOutputA,  // attn_output_a, per group
  AttnOutputB,  // attn_output_b
  IndexerQB,    // indexer.attn_q_b
  IndexerProj,  // indexer.proj (the checkpoint's weights_proj)
  Compressor,   // attn_compressor_{kv,gate}, indexerCompressor_{kv,gate}
  Router,       // ffn_gate_inp
  RoutedExpert, // ffn_{gate,up,down}_exps
  SharedExpert, // ffn_{gate,up,down}_shexp
  Output,       // the LM head
};

enum class LinearArithmetic {
  // Lin of model §2 (docs/models/deepseek_v4_model.md), for FP8 and FP4
  // weights: the activation quantized to FP8 in blocks of 128 (simulated:
  // FP8SIM(x, 128)), the product accumulated in fp32, the result rounded to
  // bf16.
  Quantized,
  // A bf16 weight: bf16 operands, fp32 accumulation, a bf16 result.
  Bf16,
  // A bf16 weight the reference holds in fp32: fp32 throughout.
  Fp32,
};

struct LinearRoleInfo {
  LinearRole role;
  std::string_view tensors;    // the GGUF tensor names it covers
  std::string_view checkpoint; // the official checkpoint's weight dtype
  LinearArithmetic arithmetic;
};

// The row of `role` in the table.
const LinearRoleInfo &linearRole(LinearRole role);

} // namespace kf::deepseek_v4
