// DeepSeek-V4 golden reference: the linear layers
// (docs/models/deepseek_v4_model.md §2 "Quantized linear" and "BF16 linear",
// precisions §8).
//
// A weight is [out][in] row-major fp32 (the decoded file tensor, weights.h);
// x is one token's [in] input and y its [out] output. Dot products
// accumulate in fp64 and are rounded once.
#pragma once

#include <span>

#include "kf/deepseek_v4/linear_roles.h"
#include "kf/deepseek_v4/reference/options.h"

namespace kf::deepseek_v4::reference {

// y = x · Wᵀ in fp32: the compressor's wkv and wgate, the MoE gate and the
// LM head, which the reference computes in fp32 (§2, §4.5, §6).
void linearFp32(std::span<const float> x, std::span<const float> weight,
                std::span<float> y);

// y = bf16(x · Wᵀ): the BF16 linears of §2 (`wo_a` per group, the indexer's
// `weights_proj`), bf16 operands with fp32 accumulation and a bf16 result.
void linearBf16(std::span<const float> x, std::span<const float> weight,
                std::span<float> y);

// Lin(x) of §2 for every FP8/FP4 weight, in its golden form: the activation
// quantized and dequantized in blocks of 128 along K (FP8SIM(x, 128)), the
// product with the fp32-decoded weight, the result rounded to bf16. With
// `simulate` false the activation is used as it is (a golden run without the
// quantization simulation). x.size() must be a multiple of 128 when
// simulating.
void lin(std::span<const float> x, std::span<const float> weight, bool simulate,
         std::span<float> y);

// y = x · Wᵀ for a linear of `role`: under Precision::Model in the
// arithmetic its role has in the checkpoint (linear_roles.h) — lin, with
// the activation simulated where options.simulates(), linearBf16 or
// linearFp32 — and under Precision::F32 linearFp32 whatever the role.
void linear(LinearRole role, std::span<const float> x,
            std::span<const float> weight, const Options &options,
            std::span<float> y);

} // namespace kf::deepseek_v4::reference
