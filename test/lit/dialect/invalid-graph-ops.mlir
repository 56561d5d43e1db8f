// RUN: kf-opt %s --split-input-file --verify-diagnostics

// The graph ops (KfGraphOps.td) refuse ill-formed operands and attributes.

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

func.func @embed_tokens_rank(%t: tensor<1x4xi32>, %e: !kf.qweight<q8_0, [100, 64]>) {
  // expected-error @+1 {{'kf.embed' op tokens must be [?], got [1, 4]}}
  %x = kf.embed %t, %e : tensor<1x4xi32>, !kf.qweight<q8_0, [100, 64]> -> tensor<4x64xf32>
  return
}

// -----

func.func @embed_table_rank(%t: tensor<4xi32>, %e: !kf.qweight<q8_0, [2, 100, 64]>) {
  // expected-error @+1 {{'kf.embed' op table must be [?, ?], got [2, 100, 64]}}
  %x = kf.embed %t, %e : tensor<4xi32>, !kf.qweight<q8_0, [2, 100, 64]> -> tensor<4x64xf32>
  return
}

// -----

func.func @embed_integer_table(%t: tensor<4xi32>, %e: !kf.qweight<i32, [100, 6]>) {
  // expected-error @+1 {{'kf.embed' op table must be a float weight, got '!kf.qweight<i32, [100, 6]>'}}
  %x = kf.embed %t, %e : tensor<4xi32>, !kf.qweight<i32, [100, 6]> -> tensor<4x6xf32>
  return
}

// -----

func.func @embed_result(%t: tensor<4xi32>, %e: !kf.qweight<q8_0, [100, 64]>) {
  // expected-error @+1 {{'kf.embed' op result must be [4, 64], got [4, 32]}}
  %x = kf.embed %t, %e : tensor<4xi32>, !kf.qweight<q8_0, [100, 64]> -> tensor<4x32xf32>
  return
}

// -----

func.func @hc_expand_input(%x: tensor<4x2x64xf32>) {
  // expected-error @+1 {{'kf.hc_expand' op input must be [?, ?], got [4, 2, 64]}}
  %s = kf.hc_expand %x : tensor<4x2x64xf32> -> tensor<4x4x64xf32>
  return
}

// -----

func.func @hc_expand_dynamic_mult(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{'kf.hc_expand' op result needs a static dimension 1, got 'tensor<?x?x64xf32>'}}
  %s = kf.hc_expand %x : tensor<?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @hc_expand_result(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{'kf.hc_expand' op result must be [?, ?, 64], got [?, 4, 32]}}
  %s = kf.hc_expand %x : tensor<?x64xf32> -> tensor<?x4x32xf32>
  return
}

// -----

func.func @hc_pre_streams_rank(%s: tensor<?x256xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                               %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op streams must be [?, ?, ?], got [?, 256]}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x256xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_dynamic_mult(%s: tensor<?x?x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                               %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op streams needs a static dimension 1, got 'tensor<?x?x64xf32>'}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x?x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_dynamic_dim(%s: tensor<?x4x?xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                              %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op streams needs a static dimension 2, got 'tensor<?x4x?xf32>'}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x?xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_fn(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [16, 256]>,
                     %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op fn must be [24, 256], got [16, 256]}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [16, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_fn_integer(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<i32, [24, 256]>,
                             %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op fn must be a float weight, got '!kf.qweight<i32, [24, 256]>'}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<i32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_base(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                       %b: !kf.qweight<f32, [16]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op base must be [24], got [16]}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [16]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_base_format(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                              %b: !kf.qweight<bf16, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op base must be an f32 vector, got '!kf.qweight<bf16, [24]>'}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<bf16, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_scale(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                        %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_pre' op scale must be [3], got [1]}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [1]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_scale_format(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                               %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f16, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op scale must be an f32 vector, got '!kf.qweight<f16, [3]>'}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f16, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_x(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                    %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op x must be [?, 64], got [?, 256]}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x256xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_post(%s: tensor<2x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                       %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op post must be [2, 4], got [3, 4]}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<2x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<2x64xf32>, tensor<3x4xf32>, tensor<2x4x4xf32>
  return
}

// -----

func.func @hc_pre_comb(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                       %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op comb must be [?, 4, 4], got [?, 16]}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x16xf32>
  return
}

// -----

func.func @hc_pre_eps(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                      %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op eps must be positive and finite, got -1.000000e-06}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(-1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_norm_eps(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                           %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op norm_eps must be positive and finite, got 0}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(20) eps(1.0e-06) norm_eps(0.0)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_pre_sinkhorn(%s: tensor<?x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                           %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_pre' op attribute 'sinkhorn_iters' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %x, %p, %c = kf.hc_pre %s, %fn, %b, %sc sinkhorn(0) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  return
}

// -----

func.func @hc_post_streams(%f: tensor<?x64xf32>, %s: tensor<?x?x64xf32>, %p: tensor<?x4xf32>, %c: tensor<?x4x4xf32>) {
  // expected-error @+1 {{'kf.hc_post' op streams needs a static dimension 1, got 'tensor<?x?x64xf32>'}}
  %n = kf.hc_post %f, %s, %p, %c : tensor<?x64xf32>, tensor<?x?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32> -> tensor<?x4x64xf32>
  return
}

// -----

func.func @hc_post_input(%f: tensor<?x32xf32>, %s: tensor<?x4x64xf32>, %p: tensor<?x4xf32>, %c: tensor<?x4x4xf32>) {
  // expected-error @+1 {{'kf.hc_post' op input must be [?, 64], got [?, 32]}}
  %n = kf.hc_post %f, %s, %p, %c : tensor<?x32xf32>, tensor<?x4x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32> -> tensor<?x4x64xf32>
  return
}

// -----

func.func @hc_post_post(%f: tensor<?x64xf32>, %s: tensor<?x4x64xf32>, %p: tensor<?x2xf32>, %c: tensor<?x4x4xf32>) {
  // expected-error @+1 {{'kf.hc_post' op post must be [?, 4], got [?, 2]}}
  %n = kf.hc_post %f, %s, %p, %c : tensor<?x64xf32>, tensor<?x4x64xf32>, tensor<?x2xf32>, tensor<?x4x4xf32> -> tensor<?x4x64xf32>
  return
}

// -----

func.func @hc_post_comb(%f: tensor<?x64xf32>, %s: tensor<?x4x64xf32>, %p: tensor<?x4xf32>, %c: tensor<?x4x2xf32>) {
  // expected-error @+1 {{'kf.hc_post' op comb must be [?, 4, 4], got [?, 4, 2]}}
  %n = kf.hc_post %f, %s, %p, %c : tensor<?x64xf32>, tensor<?x4x64xf32>, tensor<?x4xf32>, tensor<?x4x2xf32> -> tensor<?x4x64xf32>
  return
}

// -----

func.func @hc_post_result(%f: tensor<2x64xf32>, %s: tensor<2x4x64xf32>, %p: tensor<2x4xf32>, %c: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'kf.hc_post' op result must be [2, 4, 64], got [1, 4, 64]}}
  %n = kf.hc_post %f, %s, %p, %c : tensor<2x64xf32>, tensor<2x4x64xf32>, tensor<2x4xf32>, tensor<2x4x4xf32> -> tensor<1x4x64xf32>
  return
}

// -----

func.func @hc_head_streams(%s: tensor<1x256xf32>, %fn: !kf.qweight<f32, [4, 256]>,
                           %b: !kf.qweight<f32, [4]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op streams must be [?, ?, ?], got [1, 256]}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x256xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x64xf32>
  return
}

// -----

func.func @hc_head_fn(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<f32, [24, 256]>,
                      %b: !kf.qweight<f32, [4]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op fn must be [4, 256], got [24, 256]}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x64xf32>
  return
}

// -----

func.func @hc_head_fn_integer(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<i32, [4, 256]>,
                              %b: !kf.qweight<f32, [4]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op fn must be a float weight, got '!kf.qweight<i32, [4, 256]>'}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x4x64xf32>, !kf.qweight<i32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x64xf32>
  return
}

// -----

func.func @hc_head_base(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<f32, [4, 256]>,
                        %b: !kf.qweight<f32, [24]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op base must be [4], got [24]}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [1]> -> tensor<1x64xf32>
  return
}

// -----

func.func @hc_head_base_format(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<f32, [4, 256]>,
                               %b: !kf.qweight<i32, [4]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op base must be an f32 vector, got '!kf.qweight<i32, [4]>'}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<i32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x64xf32>
  return
}

// -----

func.func @hc_head_scale(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<f32, [4, 256]>,
                         %b: !kf.qweight<f32, [4]>, %sc: !kf.qweight<f32, [3]>) {
  // expected-error @+1 {{'kf.hc_head' op scale must be [1], got [3]}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [3]> -> tensor<1x64xf32>
  return
}

// -----

func.func @hc_head_scale_format(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<f32, [4, 256]>,
                                %b: !kf.qweight<f32, [4]>, %sc: !kf.qweight<bf16, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op scale must be an f32 vector, got '!kf.qweight<bf16, [1]>'}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<bf16, [1]> -> tensor<1x64xf32>
  return
}

// -----

func.func @hc_head_result(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<f32, [4, 256]>,
                          %b: !kf.qweight<f32, [4]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op result must be [1, 64], got [1, 4, 64]}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x4x64xf32>
  return
}

// -----

func.func @hc_head_eps(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<f32, [4, 256]>,
                       %b: !kf.qweight<f32, [4]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op eps must be positive and finite, got 0}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(0.0) norm_eps(1.0e-06)
      : tensor<1x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x64xf32>
  return
}

// -----

func.func @hc_head_norm_eps(%s: tensor<1x4x64xf32>, %fn: !kf.qweight<f32, [4, 256]>,
                            %b: !kf.qweight<f32, [4]>, %sc: !kf.qweight<f32, [1]>) {
  // expected-error @+1 {{'kf.hc_head' op norm_eps must be positive and finite, got INF}}
  %y = kf.hc_head %s, %fn, %b, %sc eps(1.0e-06) norm_eps(0x7F800000)
      : tensor<1x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x64xf32>
  return
}

// -----

func.func @rms_norm_qweight_format(%x: tensor<4x64xf32>, %g: !kf.qweight<q8_0, [64]>) {
  // expected-error @+1 {{'kf.rms_norm' op weight must be an f32 vector, got '!kf.qweight<q8_0, [64]>'}}
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<4x64xf32>, !kf.qweight<q8_0, [64]>
  return
}

// -----

func.func @rms_norm_qweight_rank(%x: tensor<4x64xf32>, %g: !kf.qweight<f32, [1, 64]>) {
  // expected-error @+1 {{'kf.rms_norm' op weight must be 1-D, got rank 2}}
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<4x64xf32>, !kf.qweight<f32, [1, 64]>
  return
}

// -----

func.func @rms_norm_qweight_length(%x: tensor<4x64xf32>, %g: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.rms_norm' op weight has 32 elements but the input's innermost dimension is 64}}
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<4x64xf32>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @rms_norm_eps_nan(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'kf.rms_norm' op eps must be positive and finite, got nan}}
  %0 = kf.rms_norm %x eps(0x7FC00000) : tensor<4x64xf32>
  return
}

// -----

func.func @linear_integer_weight(%x: tensor<4x6xf32>, %w: !kf.qweight<i32, [16, 6]>) {
  // expected-error @+1 {{'kf.linear' op weight must be a float weight, got '!kf.qweight<i32, [16, 6]>'}}
  %0 = kf.linear %x, %w : tensor<4x6xf32>, !kf.qweight<i32, [16, 6]> -> tensor<4x16xf32>
  return
}

// -----

func.func @grouped_linear_dynamic_k(%x: tensor<?x?xf32>, %w: !kf.qweight<q8_0, [64, 32]>) {
  // expected-error @+1 {{'kf.grouped_linear' op input needs a static dimension 1, got 'tensor<?x?xf32>'}}
  %0 = kf.grouped_linear %x, %w groups(8) : tensor<?x?xf32>, !kf.qweight<q8_0, [64, 32]> -> tensor<?x64xf32>
  return
}

// -----

func.func @grouped_linear_input_rank(%x: tensor<?x256x2xf32>, %w: !kf.qweight<q8_0, [64, 32]>) {
  // expected-error @+1 {{'kf.grouped_linear' op input must be [?, 256], got [?, 256, 2]}}
  %0 = kf.grouped_linear %x, %w groups(8) : tensor<?x256x2xf32>, !kf.qweight<q8_0, [64, 32]> -> tensor<?x64xf32>
  return
}

// -----

func.func @grouped_linear_groups(%x: tensor<?x256xf32>, %w: !kf.qweight<f32, [64, 36]>) {
  // expected-error @+1 {{'kf.grouped_linear' op input has K = 256 columns, not a multiple of 7 groups}}
  %0 = kf.grouped_linear %x, %w groups(7) : tensor<?x256xf32>, !kf.qweight<f32, [64, 36]> -> tensor<?x64xf32>
  return
}

// -----

func.func @grouped_linear_weight(%x: tensor<?x256xf32>, %w: !kf.qweight<q8_0, [64, 256]>) {
  // expected-error @+1 {{'kf.grouped_linear' op weight must be [?, 32], got [64, 256]}}
  %0 = kf.grouped_linear %x, %w groups(8) : tensor<?x256xf32>, !kf.qweight<q8_0, [64, 256]> -> tensor<?x64xf32>
  return
}

// -----

func.func @grouped_linear_integer_weight(%x: tensor<?x256xf32>, %w: !kf.qweight<i32, [64, 32]>) {
  // expected-error @+1 {{'kf.grouped_linear' op weight must be a float weight, got '!kf.qweight<i32, [64, 32]>'}}
  %0 = kf.grouped_linear %x, %w groups(8) : tensor<?x256xf32>, !kf.qweight<i32, [64, 32]> -> tensor<?x64xf32>
  return
}

// -----

func.func @grouped_linear_weight_rows(%x: tensor<?x256xf32>, %w: !kf.qweight<q8_0, [60, 32]>) {
  // expected-error @+1 {{'kf.grouped_linear' op weight has 60 rows, not a multiple of 8 groups}}
  %0 = kf.grouped_linear %x, %w groups(8) : tensor<?x256xf32>, !kf.qweight<q8_0, [60, 32]> -> tensor<?x60xf32>
  return
}

// -----

func.func @grouped_linear_result(%x: tensor<?x256xf32>, %w: !kf.qweight<q8_0, [64, 32]>) {
  // expected-error @+1 {{'kf.grouped_linear' op result must be [?, 64], got [?, 32]}}
  %0 = kf.grouped_linear %x, %w groups(8) precision(f32) : tensor<?x256xf32>, !kf.qweight<q8_0, [64, 32]> -> tensor<?x32xf32>
  return
}

// -----

func.func @grouped_linear_zero_groups(%x: tensor<?x256xf32>, %w: !kf.qweight<q8_0, [64, 32]>) {
  // expected-error @+1 {{'kf.grouped_linear' op attribute 'groups' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = kf.grouped_linear %x, %w groups(0) : tensor<?x256xf32>, !kf.qweight<q8_0, [64, 32]> -> tensor<?x64xf32>
  return
}

// -----

func.func @rope_input_rank(%x: tensor<64xf32>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{'kf.rope' op input must have rank 2 to 3, got 'tensor<64xf32>'}}
  %0 = kf.rope %x, %pos, <dim = 64, base = 1.000000e+04> : tensor<64xf32>, tensor<?xi64>
  return
}

// -----

func.func @rope_dynamic_row(%x: tensor<?x?xf32>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{'kf.rope' op input needs a static dimension 1, got 'tensor<?x?xf32>'}}
  %0 = kf.rope %x, %pos, <dim = 64, base = 1.000000e+04> : tensor<?x?xf32>, tensor<?xi64>
  return
}

// -----

func.func @rope_positions(%x: tensor<4x64xf32>, %pos: tensor<3xi64>) {
  // expected-error @+1 {{'kf.rope' op positions must be [4], got [3]}}
  %0 = kf.rope %x, %pos, <dim = 64, base = 1.000000e+04> inverse : tensor<4x64xf32>, tensor<3xi64>
  return
}

// -----

func.func @rope_dim(%x: tensor<?x8x32xf32>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{'kf.rope' op rope dim 64 exceeds the row length 32}}
  %0 = kf.rope %x, %pos, <dim = 64, base = 1.000000e+04> : tensor<?x8x32xf32>, tensor<?xi64>
  return
}

// -----

// A prefixed #kf.rope right before the `:` takes the type list as its own
// type; the ops print the parameters without the prefix.
func.func @rope_prefixed_before_colon(%x: tensor<?x64xf32>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{expected ':'}}
  %0 = kf.rope %x, %pos, #kf.rope<dim = 64, base = 1.000000e+04> : tensor<?x64xf32>, tensor<?xi64>
  return
}

// -----

func.func @hadamard_rank(%x: tensor<1x2x3x128xf32>) {
  // expected-error @+1 {{'kf.hadamard' op input must have rank 1 to 3, got 'tensor<1x2x3x128xf32>'}}
  %0 = kf.hadamard %x : tensor<1x2x3x128xf32>
  return
}

// -----

func.func @hadamard_dynamic_row(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{'kf.hadamard' op input needs a static dimension 1, got 'tensor<4x?xf32>'}}
  %0 = kf.hadamard %x : tensor<4x?xf32>
  return
}

// -----

func.func @hadamard_power_of_two(%x: tensor<?x96xf32>) {
  // expected-error @+1 {{'kf.hadamard' op the row length 96 is not a power of two}}
  %0 = kf.hadamard %x : tensor<?x96xf32>
  return
}

// -----

func.func @fp8_sim_rank(%x: tensor<f32>) {
  // expected-error @+1 {{'kf.fp8_sim' op input must have rank 1 to 3, got 'tensor<f32>'}}
  %0 = kf.fp8_sim %x block(128) : tensor<f32>
  return
}

// -----

func.func @fp8_sim_dynamic_row(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{'kf.fp8_sim' op input needs a static dimension 1, got 'tensor<?x?xf32>'}}
  %0 = kf.fp8_sim %x block(128) : tensor<?x?xf32>
  return
}

// -----

func.func @fp8_sim_row_length(%x: tensor<?x100xf32>) {
  // expected-error @+1 {{'kf.fp8_sim' op the row length (100) is not a multiple of block(128)}}
  %0 = kf.fp8_sim %x block(128) : tensor<?x100xf32>
  return
}

// -----

func.func @fp8_sim_leading_exceeds(%x: tensor<?x512xf32>) {
  // expected-error @+1 {{'kf.fp8_sim' op leading(576) exceeds the row length 512}}
  %0 = kf.fp8_sim %x block(64) leading(576) : tensor<?x512xf32>
  return
}

// -----

func.func @fp8_sim_leading_block(%x: tensor<?x512xf32>) {
  // expected-error @+1 {{'kf.fp8_sim' op leading(448) is not a multiple of block(128)}}
  %0 = kf.fp8_sim %x block(128) leading(448) : tensor<?x512xf32>
  return
}

// -----

func.func @fp8_sim_zero_block(%x: tensor<?x512xf32>) {
  // expected-error @+1 {{'kf.fp8_sim' op attribute 'block' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = kf.fp8_sim %x block(0) : tensor<?x512xf32>
  return
}

// -----

func.func @fp8_sim_zero_leading(%x: tensor<?x512xf32>) {
  // expected-error @+1 {{'kf.fp8_sim' op attribute 'leading' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = kf.fp8_sim %x block(64) leading(0) : tensor<?x512xf32>
  return
}

// -----

func.func @fp8_sim_result(%x: tensor<?x512xf32>) {
  // expected-error @+1 {{'kf.fp8_sim' op failed to verify that all of {input, result} have same type}}
  %0 = "kf.fp8_sim"(%x) <{block = 64 : i64}> : (tensor<?x512xf32>) -> tensor<4x512xf32>
  return
}

// -----

func.func @fp4_sim_row_length(%x: tensor<?x64x48xf32>) {
  // expected-error @+1 {{'kf.fp4_sim' op the row length (48) is not a multiple of block(32)}}
  %0 = kf.fp4_sim %x block(32) : tensor<?x64x48xf32>
  return
}

// -----

func.func @fp4_sim_leading(%x: tensor<?x128xf32>) {
  // expected-error @+1 {{'kf.fp4_sim' op leading(256) exceeds the row length 128}}
  %0 = kf.fp4_sim %x block(32) leading(256) : tensor<?x128xf32>
  return
}

// -----

// An overlapping compressor projects to twice the entry width.
func.func @compress_values(%v: tensor<?x32xf32>, %g: tensor<?x32xf32>, %pos: tensor<?xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.compress' op values must be [?, 64], got [?, 32]}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @compress_gates(%v: tensor<4x64xf32>, %g: tensor<3x64xf32>, %pos: tensor<4xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.compress' op gates must be [4, 64], got [3, 64]}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<4x64xf32>, tensor<3x64xf32>, tensor<4xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @compress_positions(%v: tensor<4x64xf32>, %g: tensor<4x64xf32>, %pos: tensor<2xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.compress' op positions must be [4], got [2]}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<4x64xf32>, tensor<4x64xf32>, tensor<2xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @compress_ape(%v: tensor<?x64xf32>, %g: tensor<?x64xf32>, %pos: tensor<?xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [128, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.compress' op ape must be [4, 64], got [128, 64]}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<f32, [128, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @compress_norm(%v: tensor<?x64xf32>, %g: tensor<?x64xf32>, %pos: tensor<?xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<f32, [64]>) {
  // expected-error @+1 {{'kf.compress' op norm must be [32], got [64]}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [64]>
  return
}

// -----

func.func @compress_norm_format(%v: tensor<?x64xf32>, %g: tensor<?x64xf32>, %pos: tensor<?xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<bf16, [32]>) {
  // expected-error @+1 {{'kf.compress' op norm must be an f32 vector, got '!kf.qweight<bf16, [32]>'}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<f32, [4, 64]>, !kf.qweight<bf16, [32]>
  return
}

// -----

func.func @compress_ape_format(%v: tensor<?x64xf32>, %g: tensor<?x64xf32>, %pos: tensor<?xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<q8_0, [4, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.compress' op ape must be f32 or bf16, got '!kf.qweight<q8_0, [4, 64]>'}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<q8_0, [4, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @compress_rope_dim(%v: tensor<?x64xf32>, %g: tensor<?x64xf32>, %pos: tensor<?xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.compress' op rope dim 64 exceeds the entry length 32}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 64, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @compress_eps(%v: tensor<?x64xf32>, %g: tensor<?x64xf32>, %pos: tensor<?xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.compress' op eps must be positive and finite, got 0}}
  kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(0.0)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @compress_window_cache(%v: tensor<?x64xf32>, %pos: tensor<?xi64>, %c: !kf.window_cache<rows = 4, dim = 32, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{'kf.compress' op operand #3 must be a compressor's cache of entries and its running state, but got '!kf.window_cache<rows = 4, dim = 32, element = bf16>'}}
  kf.compress %v, %v, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp8) eps(1.0e-06)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.window_cache<rows = 4, dim = 32, element = bf16>, !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @compress_post(%v: tensor<?x64xf32>, %pos: tensor<?xi64>, %c: !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
    %ape: !kf.qweight<f32, [4, 64]>, %norm: !kf.qweight<f32, [32]>) {
  // expected-error @+1 {{custom op 'kf.compress' expected string or keyword containing one of the following enum values for attribute 'post' [none, fp8, hadamard_fp4]}}
  kf.compress %v, %v, %pos, %c, %ape, %norm, <dim = 16, base = 1.000000e+04> post(fp4) eps(1.0e-06)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
        !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
  return
}

// -----

func.func @window_indices_positions(%pos: tensor<1x4xi64>) {
  // expected-error @+1 {{'kf.window_indices' op positions must be [?], got [1, 4]}}
  %w = kf.window_indices %pos window(128) : tensor<1x4xi64> -> tensor<4x128xi32>
  return
}

// -----

func.func @window_indices_result(%pos: tensor<4xi64>) {
  // expected-error @+1 {{'kf.window_indices' op result must be [4, 128], got [4, 64]}}
  %w = kf.window_indices %pos window(128) ring(128) : tensor<4xi64> -> tensor<4x64xi32>
  return
}

// -----

func.func @window_indices_small_ring(%pos: tensor<4xi64>) {
  // expected-error @+1 {{'kf.window_indices' op a ring of 64 slots cannot hold a window of 128}}
  %w = kf.window_indices %pos window(128) ring(64) : tensor<4xi64> -> tensor<4x128xi32>
  return
}

// -----

func.func @window_indices_zero(%pos: tensor<4xi64>) {
  // expected-error @+1 {{'kf.window_indices' op attribute 'window' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %w = kf.window_indices %pos window(0) : tensor<4xi64> -> tensor<4x0xi32>
  return
}

// -----

func.func @visible_entries_positions(%pos: tensor<?x1xi64>, %e: tensor<?x512xf32>) {
  // expected-error @+1 {{'kf.visible_entries' op positions must be [?], got [?, 1]}}
  %i = kf.visible_entries %pos, %e ratio(128) : tensor<?x1xi64>, tensor<?x512xf32> -> tensor<?x?xi32>
  return
}

// -----

func.func @visible_entries_entries(%pos: tensor<?xi64>, %e: tensor<512xf32>) {
  // expected-error @+1 {{'kf.visible_entries' op entries must be [?, ?], got [512]}}
  %i = kf.visible_entries %pos, %e ratio(128) : tensor<?xi64>, tensor<512xf32> -> tensor<?x?xi32>
  return
}

// -----

func.func @visible_entries_result(%pos: tensor<4xi64>, %e: tensor<3x512xf32>) {
  // expected-error @+1 {{'kf.visible_entries' op result must be [4, 3], got [4, 512]}}
  %i = kf.visible_entries %pos, %e ratio(128) : tensor<4xi64>, tensor<3x512xf32> -> tensor<4x512xi32>
  return
}

// -----

func.func @indexer_scores_query(%q: tensor<?x8192xf32>, %w: tensor<?x64xf32>, %k: tensor<?x128xf32>) {
  // expected-error @+1 {{'kf.indexer_scores' op query must be [?, ?, ?], got [?, 8192]}}
  %s = kf.indexer_scores %q, %w, %k scale(0.0110485433) : tensor<?x8192xf32>, tensor<?x64xf32>, tensor<?x128xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @indexer_scores_weights(%q: tensor<?x64x128xf32>, %w: tensor<?x32xf32>, %k: tensor<?x128xf32>) {
  // expected-error @+1 {{'kf.indexer_scores' op weights must be [?, 64], got [?, 32]}}
  %s = kf.indexer_scores %q, %w, %k scale(0.0110485433) : tensor<?x64x128xf32>, tensor<?x32xf32>, tensor<?x128xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @indexer_scores_keys(%q: tensor<?x64x128xf32>, %w: tensor<?x64xf32>, %k: tensor<?x512xf32>) {
  // expected-error @+1 {{'kf.indexer_scores' op keys must be [?, 128], got [?, 512]}}
  %s = kf.indexer_scores %q, %w, %k scale(0.0110485433) : tensor<?x64x128xf32>, tensor<?x64xf32>, tensor<?x512xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @indexer_scores_result(%q: tensor<2x64x128xf32>, %w: tensor<2x64xf32>, %k: tensor<5x128xf32>) {
  // expected-error @+1 {{'kf.indexer_scores' op result must be [2, 5], got [2, 64]}}
  %s = kf.indexer_scores %q, %w, %k scale(0.0110485433) : tensor<2x64x128xf32>, tensor<2x64xf32>, tensor<5x128xf32> -> tensor<2x64xf32>
  return
}

// -----

func.func @indexer_scores_scale(%q: tensor<?x64x128xf32>, %w: tensor<?x64xf32>, %k: tensor<?x128xf32>) {
  // expected-error @+1 {{'kf.indexer_scores' op scale must be positive and finite, got 0}}
  %s = kf.indexer_scores %q, %w, %k scale(0.0) : tensor<?x64x128xf32>, tensor<?x64xf32>, tensor<?x128xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @indexer_topk_scores(%s: tensor<?xf32>, %pos: tensor<?xi64>) {
  // expected-error @+1 {{'kf.indexer_topk' op scores must be [?, ?], got [?]}}
  %i = kf.indexer_topk %s, %pos k(512) ratio(4) : tensor<?xf32>, tensor<?xi64> -> tensor<?x?xi32>
  return
}

// -----

func.func @indexer_topk_positions(%s: tensor<4x?xf32>, %pos: tensor<2xi64>) {
  // expected-error @+1 {{'kf.indexer_topk' op positions must be [4], got [2]}}
  %i = kf.indexer_topk %s, %pos k(512) ratio(4) : tensor<4x?xf32>, tensor<2xi64> -> tensor<4x?xi32>
  return
}

// -----

// Fewer entries than k: one pick per entry.
func.func @indexer_topk_result(%s: tensor<4x5xf32>, %pos: tensor<4xi64>) {
  // expected-error @+1 {{'kf.indexer_topk' op result must be [4, 5], got [4, 512]}}
  %i = kf.indexer_topk %s, %pos k(512) ratio(4) : tensor<4x5xf32>, tensor<4xi64> -> tensor<4x512xi32>
  return
}

// -----

func.func @indexer_topk_more_than_k(%s: tensor<4x?xf32>, %pos: tensor<4xi64>) {
  // expected-error @+1 {{'kf.indexer_topk' op result has 600 columns, more than k(512)}}
  %i = kf.indexer_topk %s, %pos k(512) ratio(4) : tensor<4x?xf32>, tensor<4xi64> -> tensor<4x600xi32>
  return
}

// -----

func.func @indexer_topk_zero_k(%s: tensor<4x?xf32>, %pos: tensor<4xi64>) {
  // expected-error @+1 {{'kf.indexer_topk' op attribute 'k' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %i = kf.indexer_topk %s, %pos k(0) ratio(4) : tensor<4x?xf32>, tensor<4xi64> -> tensor<4x?xi32>
  return
}

// -----

func.func @sparse_attention_query(%q: tensor<?x512xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x16xi32>, %e: tensor<?x64xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op query must be [?, ?, ?], got [?, 512]}}
  %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.125)
      : tensor<?x512xf32>, !kf.qweight<f32, [8]>, tensor<?x64xf32>, tensor<?x16xi32>, tensor<?x64xf32>, tensor<?x?xi32> -> tensor<?x512xf32>
  return
}

// -----

func.func @sparse_attention_window(%q: tensor<?x8x64xf32>, %kv: tensor<?x32xf32>, %wi: tensor<?x16xi32>, %e: tensor<?x64xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op window must be [?, 64], got [?, 32]}}
  %o = kf.sparse_attention %q, %kv[%wi] sinks(%s) scale(0.125)
      : tensor<?x8x64xf32>, !kf.qweight<f32, [8]>, tensor<?x32xf32>, tensor<?x16xi32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @sparse_attention_window_indices(%q: tensor<4x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<3x16xi32>, %e: tensor<?x64xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op window indices must be [4, ?], got [3, 16]}}
  %o = kf.sparse_attention %q, %kv[%wi] sinks(%s) scale(0.125)
      : tensor<4x8x64xf32>, !kf.qweight<f32, [8]>, tensor<?x64xf32>, tensor<3x16xi32> -> tensor<4x8x64xf32>
  return
}

// -----

func.func @sparse_attention_sinks(%q: tensor<?x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x16xi32>, %e: tensor<?x64xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<f32, [16]>) {
  // expected-error @+1 {{'kf.sparse_attention' op sinks must be [8], got [16]}}
  %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.125)
      : tensor<?x8x64xf32>, !kf.qweight<f32, [16]>, tensor<?x64xf32>, tensor<?x16xi32>, tensor<?x64xf32>, tensor<?x?xi32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @sparse_attention_sinks_format(%q: tensor<?x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x16xi32>, %e: tensor<?x64xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<bf16, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op sinks must be an f32 vector, got '!kf.qweight<bf16, [8]>'}}
  %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.125)
      : tensor<?x8x64xf32>, !kf.qweight<bf16, [8]>, tensor<?x64xf32>, tensor<?x16xi32>, tensor<?x64xf32>, tensor<?x?xi32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @sparse_attention_result(%q: tensor<?x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x16xi32>, %e: tensor<?x64xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op result must be [?, 8, 64], got [?, 512]}}
  %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.125)
      : tensor<?x8x64xf32>, !kf.qweight<f32, [8]>, tensor<?x64xf32>, tensor<?x16xi32>, tensor<?x64xf32>, tensor<?x?xi32> -> tensor<?x512xf32>
  return
}

// -----

func.func @sparse_attention_scale(%q: tensor<?x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x16xi32>, %e: tensor<?x64xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op scale must be positive and finite, got -1.250000e-01}}
  %o = kf.sparse_attention %q, %kv[%wi] sinks(%s) scale(-0.125)
      : tensor<?x8x64xf32>, !kf.qweight<f32, [8]>, tensor<?x64xf32>, tensor<?x16xi32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @sparse_attention_entries(%q: tensor<?x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x16xi32>, %e: tensor<?x128xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op entries must be [?, 64], got [?, 128]}}
  %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.125)
      : tensor<?x8x64xf32>, !kf.qweight<f32, [8]>, tensor<?x64xf32>, tensor<?x16xi32>, tensor<?x128xf32>, tensor<?x?xi32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @sparse_attention_entry_indices(%q: tensor<4x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<4x16xi32>, %e: tensor<?x64xf32>, %ei: tensor<?xi32>, %s: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op entry indices must be [4, ?], got [?]}}
  %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.125)
      : tensor<4x8x64xf32>, !kf.qweight<f32, [8]>, tensor<?x64xf32>, tensor<4x16xi32>, tensor<?x64xf32>, tensor<?xi32> -> tensor<4x8x64xf32>
  return
}

// -----

// The custom form cannot separate them; the generic one can.
func.func @sparse_attention_entries_alone(%q: tensor<?x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x16xi32>,
                                          %e: tensor<?x64xf32>, %s: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.sparse_attention' op entries and entry indices come together}}
  %o = "kf.sparse_attention"(%q, %kv, %wi, %e, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1>, scale = 0.125 : f32}>
      : (tensor<?x8x64xf32>, tensor<?x64xf32>, tensor<?x16xi32>, tensor<?x64xf32>, !kf.qweight<f32, [8]>) -> tensor<?x8x64xf32>
  return
}

// -----

func.func @moe_gate_logits(%l: tensor<16xf32>, %b: !kf.qweight<f32, [16]>) {
  // expected-error @+1 {{'kf.moe_gate' op logits must be [?, ?], got [16]}}
  %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [16]>) k(4) route_scale(1.5) : tensor<16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @moe_gate_k(%l: tensor<?x16xf32>, %b: !kf.qweight<f32, [16]>) {
  // expected-error @+1 {{'kf.moe_gate' op k(32) exceeds the 16 experts}}
  %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [16]>) k(32) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x32xi32>, tensor<?x32xf32>
  return
}

// -----

func.func @moe_gate_no_routing(%l: tensor<?x16xf32>, %b: !kf.qweight<f32, [16]>) {
  // expected-error @+1 {{'kf.moe_gate' op needs exactly one of bias (learned) and hash (table) routing}}
  %ids, %w = kf.moe_gate %l  k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @moe_gate_both_routings(%l: tensor<?x16xf32>, %b: !kf.qweight<f32, [16]>, %t: !kf.qweight<i32, [100, 4]>, %tok: tensor<?xi32>) {
  // expected-error @+1 {{'kf.moe_gate' op needs exactly one of bias (learned) and hash (table) routing}}
  %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [16]>) hash(%t : !kf.qweight<i32, [100, 4]>[%tok : tensor<?xi32>]) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @moe_gate_table_format(%l: tensor<?x16xf32>, %t: !kf.qweight<f32, [100, 4]>, %tok: tensor<?xi32>) {
  // expected-error @+1 {{'kf.moe_gate' op tid2eid must be an i32 table, got '!kf.qweight<f32, [100, 4]>'}}
  %ids, %w = kf.moe_gate %l hash(%t : !kf.qweight<f32, [100, 4]>[%tok : tensor<?xi32>]) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @moe_gate_table_shape(%l: tensor<?x16xf32>, %t: !kf.qweight<i32, [100, 6]>, %tok: tensor<?xi32>) {
  // expected-error @+1 {{'kf.moe_gate' op tid2eid must be [?, 4], got [100, 6]}}
  %ids, %w = kf.moe_gate %l hash(%t : !kf.qweight<i32, [100, 6]>[%tok : tensor<?xi32>]) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @moe_gate_tokens(%l: tensor<3x16xf32>, %t: !kf.qweight<i32, [100, 4]>, %tok: tensor<2xi32>) {
  // expected-error @+1 {{'kf.moe_gate' op tokens must be [3], got [2]}}
  %ids, %w = kf.moe_gate %l hash(%t : !kf.qweight<i32, [100, 4]>[%tok : tensor<2xi32>]) k(4) route_scale(1.5) : tensor<3x16xf32> -> tensor<3x4xi32>, tensor<3x4xf32>
  return
}

// -----

func.func @moe_gate_bias(%l: tensor<?x16xf32>, %b: !kf.qweight<f32, [8]>) {
  // expected-error @+1 {{'kf.moe_gate' op bias must be [16], got [8]}}
  %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [8]>) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @moe_gate_bias_format(%l: tensor<?x16xf32>, %b: !kf.qweight<bf16, [16]>) {
  // expected-error @+1 {{'kf.moe_gate' op bias must be an f32 vector, got '!kf.qweight<bf16, [16]>'}}
  %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<bf16, [16]>) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @moe_gate_ids(%l: tensor<?x16xf32>, %b: !kf.qweight<f32, [16]>) {
  // expected-error @+1 {{'kf.moe_gate' op ids must be [?, 4], got [?, 6]}}
  %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [16]>) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x6xi32>, tensor<?x4xf32>
  return
}

// -----

func.func @moe_gate_weights(%l: tensor<3x16xf32>, %b: !kf.qweight<f32, [16]>) {
  // expected-error @+1 {{'kf.moe_gate' op weights must be [3, 4], got [4, 4]}}
  %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [16]>) k(4) route_scale(1.5) : tensor<3x16xf32> -> tensor<3x4xi32>, tensor<4x4xf32>
  return
}

// -----

func.func @moe_gate_route_scale(%l: tensor<?x16xf32>, %b: !kf.qweight<f32, [16]>) {
  // expected-error @+1 {{'kf.moe_gate' op route_scale must be positive and finite, got 0}}
  %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [16]>) k(4) route_scale(0.0) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
  return
}

// -----

// The custom form keeps the token ids inside hash(...); the generic one does not.
func.func @moe_gate_hash_without_tokens(%l: tensor<?x16xf32>, %t: !kf.qweight<i32, [100, 4]>) {
  // expected-error @+1 {{'kf.moe_gate' op hash routing needs the token ids}}
  %ids, %w = "kf.moe_gate"(%l, %t) <{operandSegmentSizes = array<i32: 1, 0, 1, 0>, k = 4 : i64, route_scale = 1.5 : f32}>
      : (tensor<?x16xf32>, !kf.qweight<i32, [100, 4]>) -> (tensor<?x4xi32>, tensor<?x4xf32>)
  return
}

// -----

func.func @moe_gate_tokens_without_hash(%l: tensor<?x16xf32>, %b: !kf.qweight<f32, [16]>, %tok: tensor<?xi32>) {
  // expected-error @+1 {{'kf.moe_gate' op token ids are only for hash routing}}
  %ids, %w = "kf.moe_gate"(%l, %b, %tok) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>, k = 4 : i64, route_scale = 1.5 : f32}>
      : (tensor<?x16xf32>, !kf.qweight<f32, [16]>, tensor<?xi32>) -> (tensor<?x4xi32>, tensor<?x4xf32>)
  return
}

// -----

func.func @moe_dynamic_width(%x: tensor<?x?xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op input needs a static dimension 1, got 'tensor<?x?xf32>'}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x?xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_input_rank(%x: tensor<?x64x1xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op input must be [?, 64], got [?, 64, 1]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64x1xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_gate_experts(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op gate experts must be [?, ?, 64], got [32, 64]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_shared_gate(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 128]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op shared gate must be [?, 64], got [96, 128]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 128]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_ids(%x: tensor<4x64xf32>, %ids: tensor<3x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op ids must be [4, ?], got [3, 4]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<4x64xf32>, tensor<3x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<4x64xf32>
  return
}

// -----

func.func @moe_weights(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x6xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op weights must be [?, 4], got [?, 6]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x6xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_up_experts(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [8, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op up experts must be [16, 32, 64], got [8, 32, 64]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [8, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_down_experts(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 32, 64]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op down experts must be [16, 64, 32], got [16, 32, 64]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_shared_up(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [64, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op shared up must be [96, 64], got [64, 64]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_shared_down(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 64]>) {
  // expected-error @+1 {{'kf.moe' op shared down must be [64, 96], got [64, 64]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 64]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_result(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op result must be [?, 64], got [?, 32]}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x32xf32>
  return
}

// -----

func.func @moe_integer_experts(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<i32, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op down experts must be a float weight, got '!kf.qweight<i32, [16, 64, 32]>'}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<i32, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_integer_shared(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<i32, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op shared gate must be a float weight, got '!kf.qweight<i32, [96, 64]>'}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<i32, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_limit(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op limit must be positive and finite, got 0}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(0.0) shared_limit(10.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_shared_limit(%x: tensor<?x64xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 32, 64]>, %u: !kf.qweight<q8_0, [16, 32, 64]>, %d: !kf.qweight<q8_0, [16, 64, 32]>,
    %sg: !kf.qweight<q8_0, [96, 64]>, %su: !kf.qweight<q8_0, [96, 64]>, %sd: !kf.qweight<q8_0, [64, 96]>) {
  // expected-error @+1 {{'kf.moe' op shared_limit must be positive and finite, got -1.000000e+00}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(-1.0)
      : tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 32, 64]>, !kf.qweight<q8_0, [16, 64, 32]>,
        !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [96, 64]>, !kf.qweight<q8_0, [64, 96]> -> tensor<?x64xf32>
  return
}

// -----

func.func @argmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'kf.argmax' op input must have at least one dimension}}
  %i = kf.argmax %x : tensor<f32> -> tensor<i32>
  return
}

// -----

func.func @argmax_result(%x: tensor<4x100xf32>) {
  // expected-error @+1 {{'kf.argmax' op result must be [4], got [4, 1]}}
  %i = kf.argmax %x : tensor<4x100xf32> -> tensor<4x1xi32>
  return
}

// -----

func.func @rms_norm_bf16_with_weight(%x: tensor<?x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'kf.rms_norm' op compute(bf16) is the weightless scaling and takes no weight}}
  %0 = kf.rms_norm %x, %g eps(1.0e-06) compute(bf16) : tensor<?x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @kernel_layout_mismatch(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'kf.linear' op kf.kernel: layout q4_0_r16 does not hold the weight's format q8_0}}
  %0 = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 1>}
      : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @kernel_l1_k_beyond_k(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'kf.linear' op kf.kernel: l1_k = 128 exceeds K = 64}}
  %0 = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, l1_k = 128>}
      : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @kernel_cols_sum(%x: tensor<9x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<9x16xf32> {
  // expected-error @+1 {{'kf.linear' op kf.kernel: cols [8] sum to 8, expected M = 9}}
  %0 = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, cols = [8]>}
      : tensor<9x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<9x16xf32>
  return %0 : tensor<9x16xf32>
}

// -----

func.func @kernel_cols_dynamic_m(%x: tensor<?x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.linear' op kf.kernel: static cols [4, 4] for a dynamic M (expected cols = dynamic)}}
  %0 = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, cols = [4, 4]>}
      : tensor<?x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

func.func @kernel_not_a_kernel(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'kf.linear' op kf.kernel must be a #kf.kernel, got 16 : i64}}
  %0 = kf.linear %x, %w {kf.kernel = 16} : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @kernel_not_a_matmul(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'kf.kernel' belongs on kf.linear, kf.grouped_linear, kf.moe, kf.qmatmul or kf.expert_qmatmul, not on 'kf.rms_norm'}}
  %0 = kf.rms_norm %x eps(1.0e-06) {kf.kernel = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 8, threads = 1>} : tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @moe_kernel_missing(%x: tensor<1x64xf32>, %ids: tensor<1x2xi32>, %w: tensor<1x2xf32>,
                              %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                              %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sg: !kf.qweight<q8_0, [32, 64]>,
                              %su: !kf.qweight<q8_0, [32, 64]>, %sd: !kf.qweight<q8_0, [64, 32]>) -> tensor<1x64xf32> {
  // expected-error @+1 {{'kf.moe' op kf.kernel has no #kf.kernel for up_exps}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      {kf.kernel = {gate_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8, cols = dynamic>}}
      : tensor<1x64xf32>, tensor<1x2xi32>, tensor<1x2xf32>,
        !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
        !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// -----

func.func @moe_kernel_unknown(%x: tensor<1x64xf32>, %ids: tensor<1x2xi32>, %w: tensor<1x2xf32>,
                              %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                              %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sg: !kf.qweight<q8_0, [32, 64]>,
                              %su: !kf.qweight<q8_0, [32, 64]>, %sd: !kf.qweight<q8_0, [64, 32]>) -> tensor<1x64xf32> {
  // expected-error @+1 {{'kf.moe' op kf.kernel has an entry for 'router', which is not a weight (expected gate_exps, up_exps, down_exps, gate_shexp, up_shexp, down_shexp)}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      {kf.kernel = {router = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8>}}
      : tensor<1x64xf32>, tensor<1x2xi32>, tensor<1x2xf32>,
        !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
        !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}

// -----

// An expert's bucket is dynamic for more than one token.
func.func @moe_kernel_static_bucket(%x: tensor<2x64xf32>, %ids: tensor<2x2xi32>, %w: tensor<2x2xf32>,
                                    %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                                    %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sg: !kf.qweight<q8_0, [32, 64]>,
                                    %su: !kf.qweight<q8_0, [32, 64]>, %sd: !kf.qweight<q8_0, [64, 32]>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'kf.moe' op kf.kernel of gate_exps: static cols [2] for a dynamic M (expected cols = dynamic)}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      {kf.kernel = {gate_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8, cols = [2]>,
                    up_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8>,
                    down_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8>,
                    gate_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8>,
                    up_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8>,
                    down_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8>}}
      : tensor<2x64xf32>, tensor<2x2xi32>, tensor<2x2xf32>,
        !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
        !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<2x64xf32>
  return %y : tensor<2x64xf32>
}

// -----

func.func @swiglu_weights_shape(%g: tensor<?x2x32xf32>, %w: tensor<?x3xf32>) -> tensor<?x2x32xf32> {
  // expected-error @+1 {{'kf.swiglu' op weights must be [?, 2], got [?, 3]}}
  %h = kf.swiglu %g, %g weights(%w : tensor<?x3xf32>) limit(10.0) : tensor<?x2x32xf32>
  return %h : tensor<?x2x32xf32>
}

// -----

func.func @swiglu_limit(%g: tensor<?x32xf32>) -> tensor<?x32xf32> {
  // expected-error @+1 {{'kf.swiglu' op limit must be positive and finite, got 0}}
  %h = kf.swiglu %g, %g limit(0.0) : tensor<?x32xf32>
  return %h : tensor<?x32xf32>
}

// -----

func.func @moe_combine_rank(%r: tensor<?x64xf32>, %s: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'kf.moe_combine' op routed must be [T, k, D], got 'tensor<?x64xf32>'}}
  %y = kf.moe_combine %r, %s : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @moe_combine_shared(%r: tensor<3x2x64xf32>, %s: tensor<3x32xf32>) -> tensor<3x64xf32> {
  // expected-error @+1 {{'kf.moe_combine' op shared must be [3, 64], got [3, 32]}}
  %y = kf.moe_combine %r, %s : tensor<3x2x64xf32>, tensor<3x32xf32> -> tensor<3x64xf32>
  return %y : tensor<3x64xf32>
}

// -----

func.func @moe_fp8_blocks(%x: tensor<?x128xf32>, %ids: tensor<?x4xi32>, %w: tensor<?x4xf32>,
    %g: !kf.qweight<q8_0, [16, 64, 128]>, %u: !kf.qweight<q8_0, [16, 64, 128]>, %d: !kf.qweight<q8_0, [16, 128, 64]>,
    %sg: !kf.qweight<q8_0, [128, 128]>, %su: !kf.qweight<q8_0, [128, 128]>, %sd: !kf.qweight<q8_0, [128, 128]>) {
  // expected-error @+1 {{'kf.moe' op fp8_activations simulates blocks of 128, so D, F and the shared F must be multiples of it, got 64}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0) fp8_activations
      : tensor<?x128xf32>, tensor<?x4xi32>, tensor<?x4xf32>, !kf.qweight<q8_0, [16, 64, 128]>, !kf.qweight<q8_0, [16, 64, 128]>, !kf.qweight<q8_0, [16, 128, 64]>,
        !kf.qweight<q8_0, [128, 128]>, !kf.qweight<q8_0, [128, 128]>, !kf.qweight<q8_0, [128, 128]> -> tensor<?x128xf32>
  return
}
