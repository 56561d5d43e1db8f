// RUN: kf-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{!kf.qweight: q8_0 stores rows in blocks of 32, but cols = 100 is not a multiple of 32}}
func.func @qweight_partial_block(%w: !kf.qweight<q8_0, [4, 100]>)

// -----

// expected-error @+1 {{!kf.qweight: expected shape [cols], [rows, cols] or [experts, rows, cols], got 4 dimensions}}
func.func @qweight_rank4(%w: !kf.qweight<f32, [2, 2, 2, 64]>)

// -----

// expected-error @+1 {{!kf.qweight: q8_k is an activation format and cannot hold weights}}
func.func @qweight_activation_format(%w: !kf.qweight<q8_k, [4, 256]>)

// -----

// expected-error @+1 {{!kf.qweight: vq3_64 stores rows in blocks of 64, but cols = 96 is not a multiple of 64}}
func.func @qweight_private_partial_block(%w: !kf.qweight<vq3_64, [4, 96]>)

// -----

// expected-error @+1 {{!kf.qweight: dimensions must be positive, got 0}}
func.func @qweight_empty(%w: !kf.qweight<f32, [0, 64]>)

// -----

// expected-error @+2 {{unknown format 'q3_z' (expected one of f32, f16, q4_0, q4_1, q5_0, q8_0, q8_1, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, iq2_xxs, iq2_xs, iq1_s, iq4_nl, iq4_xs, i32, iq1_m, bf16, mxfp4, fractal64, vq3_64)}}
// expected-error @+1 {{failed to parse Kf_QWeightType parameter 'format'}}
func.func @qweight_unknown_format(%w: !kf.qweight<q3_z, [4, 64]>)

// -----

func.func @rms_norm_weight_length(%x: tensor<4x64xf32>, %g: tensor<32xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'kf.rms_norm' op weight has 32 elements but the input's innermost dimension is 64}}
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<4x64xf32>, tensor<32xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @rms_norm_weight_rank(%x: tensor<4x64xf32>, %g: tensor<1x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'kf.rms_norm' op weight must be 1-D, got rank 2}}
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<4x64xf32>, tensor<1x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @rms_norm_eps(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'kf.rms_norm' op eps must be positive and finite, got 0}}
  %0 = kf.rms_norm %x eps(0.0) : tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @rms_norm_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'kf.rms_norm' op input must have at least one dimension}}
  %0 = kf.rms_norm %x eps(1.0e-06) : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @rms_norm_f16(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  // expected-error @+1 {{'kf.rms_norm' op operand #0 must be ranked tensor of 32-bit float values}}
  %0 = kf.rms_norm %x eps(1.0e-06) : tensor<4x64xf16>
  return %0 : tensor<4x64xf16>
}

// -----

func.func @linear_k_mismatch(%x: tensor<4x2048xf32>, %w: !kf.qweight<q8_0, [2048, 4096]>) -> tensor<4x2048xf32> {
  // expected-error @+1 {{'kf.linear' op input has K = 2048 columns but the weight '!kf.qweight<q8_0, [2048, 4096]>' has K = 4096}}
  %0 = kf.linear %x, %w : tensor<4x2048xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<4x2048xf32>
  return %0 : tensor<4x2048xf32>
}

// -----

func.func @linear_n_mismatch(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x32xf32> {
  // expected-error @+1 {{'kf.linear' op result has N = 32 columns but the weight has N = 16 rows}}
  %0 = kf.linear %x, %w : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

func.func @linear_m_mismatch(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<3x16xf32> {
  // expected-error @+1 {{'kf.linear' op result has M = 3 rows but the input has M = 4}}
  %0 = kf.linear %x, %w : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<3x16xf32>
  return %0 : tensor<3x16xf32>
}

// -----

func.func @linear_input_rank(%x: tensor<64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<1x16xf32> {
  // expected-error @+1 {{'kf.linear' op input must be [M, K], got rank 1}}
  %0 = kf.linear %x, %w : tensor<64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
  return %0 : tensor<1x16xf32>
}

// -----

func.func @linear_result_rank(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<64xf32> {
  // expected-error @+1 {{'kf.linear' op result must be [M, N], got rank 1}}
  %0 = kf.linear %x, %w : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @linear_expert_stack(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [8, 16, 64]>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'kf.linear' op weight must be a single [N, K] matrix, got '!kf.qweight<q8_0, [8, 16, 64]>'}}
  %0 = kf.linear %x, %w : tensor<4x64xf32>, !kf.qweight<q8_0, [8, 16, 64]> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// expected-error @+1 {{#kf.target 't': triple 'riscv64-unknown-linux-gnu' is not x86_64 or aarch64}}
module attributes {kf.target = #kf.target<name = "t", triple = "riscv64-unknown-linux-gnu", cpu = "generic", features = "", l1d = 32768, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{#kf.target 't': unknown ISA feature 'avx1024'}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+avx2,+avx1024", l1d = 32768, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{#kf.target 't': ISA feature 'dotprod' is not an x86_64 feature}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+dotprod", l1d = 32768, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{#kf.target 't': l1d and l2 must be non-zero bytes}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "", l1d = 0, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{#kf.target 't': cores must be at least 1}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "", l1d = 32768, l2 = 262144, l3 = 0, cores = 0>} {}

// -----

// expected-error @+1 {{#kf.target 't': empty cpu name}}
module attributes {kf.target = #kf.target<name = "t", triple = "x86_64-unknown-linux-gnu", cpu = "", features = "", l1d = 32768, l2 = 262144, l3 = 0, cores = 1>} {}

// -----

// expected-error @+1 {{'kf.target' must be a #kf.target, got "znver5"}}
module attributes {kf.target = "znver5"} {}

// -----

// expected-error @+1 {{unknown kf attribute 'kf.tile'}}
module attributes {kf.tile = 8} {}
