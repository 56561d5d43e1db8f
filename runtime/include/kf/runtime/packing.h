// Packing to the layouts of kf/runtime/packed_layout.h: weights repacked at
// load time with rows interleaved in groups, and activations quantized per
// column into the blocks the kernels read. dequantize_packed reads the packed
// bytes directly, so a repacked tensor can be checked against the reference
// decoder of its file format.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kf/runtime/packed_layout.h"

namespace kf {

// OK when the layout is one this runtime can pack: Q8_0, Q4_0, MXFP4, Q4_K,
// Q5_K, Q6_K, IQ2_XXS, IQ1_S, IQ1_M, FRACTAL64, VQ3_64, BF16 or F32 with 1, 4,
// 8 or 16 rows; the ternary coding for IQ1_S and IQ1_M only.
absl::Status checkLayout(const PackedLayout &layout);

// Bytes of a packed [n, k] tensor: ceil(n / rows) groups of k / 32 blocks
// (k / 256 super-blocks for the K-quants and IQ grid formats, k / 64 blocks
// for FRACTAL64 and VQ3_64; ceil(k / 32) bf16 or ceil(k / 16) f32 blocks, the
// last padded with zeros). Fails on a bad layout, a
// non-positive n or k, or k not a multiple of a quantized format's block.
absl::StatusOr<uint64_t> packedWeightBytes(const PackedLayout &layout,
                                           int64_t n, int64_t k);

// Repacks `n` rows of `k` elements in the layout's file format (ggml's row
// order, `src` exactly n rows) into `dst` (exactly packed_weight_bytes). The
// last group is padded with zero rows (scale 0, weights 0).
absl::Status packWeights(const PackedLayout &layout,
                         std::span<const uint8_t> src, int64_t n, int64_t k,
                         std::span<uint8_t> dst);
absl::StatusOr<std::vector<uint8_t>> packWeights(const PackedLayout &layout,
                                                 std::span<const uint8_t> src,
                                                 int64_t n, int64_t k);

// An expert stack of `experts` [n, k] matrices (ggml's order: expert after
// expert), packed expert by expert: expert e's packed rows start at
// e * packed_weight_bytes(layout, n, k), each expert's last group padded on
// its own, so that an expert's kernel reads it as a whole weight.
absl::StatusOr<std::vector<uint8_t>>
packExpertWeights(const PackedLayout &layout, std::span<const uint8_t> src,
                  int64_t experts, int64_t n, int64_t k);

// The inverse of pack_weights: the file-format rows back, padding dropped.
// Fails on a ternary layout whose codes no packing wrote (no grid entry).
absl::Status unpackWeights(const PackedLayout &layout,
                           std::span<const uint8_t> packed, int64_t n,
                           int64_t k, std::span<uint8_t> dst);

// Decodes a packed tensor straight from its layout into n x k floats, with the
// arithmetic of the file format's reference decoder (so the two agree bit for
// bit on every weight).
absl::Status dequantizePacked(const PackedLayout &layout,
                              std::span<const uint8_t> packed, int64_t n,
                              int64_t k, std::span<float> dst);

// Bytes of one packed column of k elements (k a positive multiple of 32).
absl::StatusOr<uint64_t> packedActivationBytes(int64_t k);

// Quantizes m columns of k floats (`ldx` floats apart in `x`) into `dst`
// (exactly m * packed_activation_bytes(k)), column after column, rounding as
// quantize_activation(Format::Q8_0) does: d = fp16(amax / 127),
// q = round-half-even(x * 127 / amax), so every |q| <= 127.
absl::Status packActivations(std::span<const float> x, int64_t m, int64_t k,
                             int64_t ldx, std::span<uint8_t> dst);

// The same for the packed activations of `activation`, Q8_0 (as above),
// Q8_K (the K-quants'; k a multiple of 256; rounding as
// quantize_activation(Format::Q8_K) does, kf/runtime/packed_layout.h's
// blocks), or BF16 or F32 (the float formats'; any k > 0; the elements as
// quantize_activation(BF16 or F32) stores them, the column's last block
// padded with zeros).
absl::StatusOr<uint64_t> packedActivationBytes(Format activation, int64_t k);
absl::Status packActivations(Format activation, std::span<const float> x,
                             int64_t m, int64_t k, int64_t ldx,
                             std::span<uint8_t> dst);

} // namespace kf
