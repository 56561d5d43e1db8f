// DeepSeek-V4 golden reference: the FP8 and FP4 activation simulations
// ("QAT simulation", docs/models/deepseek_v4_model.md §2, precisions §8).
//
// Each simulation quantizes a block to a power-of-two scale and a minifloat
// code and writes back code · scale. Turning a simulation off (a golden run
// without QAT, §10) is the caller's choice: it simply does not call these.
#pragma once

#include <cstddef>
#include <span>

namespace kf::deepseek_v4::reference {

// ceil(log2(v)) of a positive normal fp32 v, read from its bits as the
// reference kernel does: exponent − 127, plus 1 if any mantissa bit is set.
int ceilLog2(float v);

// The ue8m0 block scales of §2: 2^ceil(log2(a · fl32(1/maxCode))), the
// argument formed by a multiply with the fp32 reciprocal as the kernel does.
// fp8: a = max(amax, 1e-4), maxCode 448. fp4: a = max(amax, 6·2^−126),
// maxCode 6. `amax` is the largest |x| of the block.
float fp8BlockScale(float amax);
float fp4BlockScale(float amax);

// Saturating round to nearest even onto the OCP e4m3fn grid (bias 7, 3
// mantissa bits, max ±448, subnormals in steps of 2^−9 below 2^−6): |y| is
// clamped to 448, then rounded.
float roundE4m3(float y);

// Saturating round to nearest even onto the e2m1 grid ±{0, .5, 1, 1.5, 2, 3,
// 4, 6}: |y| is clamped to 6, then rounded; ties go to the even mantissa
// (0.25→0, 0.75→1, 1.25→1, 1.75→2, 2.5→2, 3.5→4, 5→4).
float roundE2m1(float y);

// FP8SIM(x, block) of §2, in place, over consecutive blocks of `block`
// values: s = fp8BlockScale(max |x|), x ← bf16(roundE4m3(x/s) · s).
// x.size() must be a multiple of `block`. Used with block 64 on the KV
// latent's first 448 dims, and with block 128 it is the activation side of
// every quantized linear.
void fp8Sim(std::span<float> x, size_t block);

// FP4SIM(x, block) of §2 (block 32 in the model), in place:
// s = fp4BlockScale(max |x|), x ← bf16(roundE2m1(x/s) · s).
void fp4Sim(std::span<float> x, size_t block);

} // namespace kf::deepseek_v4::reference
