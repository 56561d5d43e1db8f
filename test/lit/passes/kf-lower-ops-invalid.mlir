// RUN: kf-opt %s --split-input-file --kf-lower-ops -verify-diagnostics

// expected-error @+1 {{kf-lower-ops: the module has no kf.target; run --kf-set-target first}}
module {
  func.func @no_target(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @row_length(%x: tensor<?x40xf32>) -> tensor<?x40xf32> {
    // expected-error @+1 {{'kf.rms_norm' op kf-lower-ops: rms_norm kernel [D = 40, weightless, eps = 1e-06]: expected D a positive multiple of 16}}
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x40xf32>
    return %y : tensor<?x40xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @tensor_weight(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{'kf.rms_norm' op kf-lower-ops: a weight that is not a !kf.qweight has no buffer in a plan (a constant weight of ones is folded away by -canonicalize)}}
    %y = kf.rms_norm %x, %w eps(1.0e-06) : tensor<?x64xf32>, tensor<64xf32>
    return %y : tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @table_format(%t: tensor<?xi32>, %w: !kf.qweight<q4_k, [64, 256]>) -> tensor<?x256xf32> {
    // expected-error @+1 {{'kf.embed' op kf-lower-ops: embed kernel [q4_k, V = 64, D = 256]: expected a table of f32, f16, bf16 or q8_0}}
    %y = kf.embed %t, %w : tensor<?xi32>, !kf.qweight<q4_k, [64, 256]> -> tensor<?x256xf32>
    return %y : tensor<?x256xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @combine_width(%r: tensor<?x2x40xf32>, %s: tensor<?x40xf32>) -> tensor<?x40xf32> {
    // expected-error @+1 {{'kf.moe_combine' op kf-lower-ops: moe_combine kernel [k = 2, D = 40]: expected D a positive multiple of 16}}
    %y = kf.moe_combine %r, %s : tensor<?x2x40xf32>, tensor<?x40xf32> -> tensor<?x40xf32>
    return %y : tensor<?x40xf32>
  }
}

// -----

// A ring's indices are its slots: indices into a ring of 8 slots over a ring of
// 16 rows would address the wrong rows.
module attributes {kf.max_context = 64 : i64, kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.cache @kv : !kf.window_cache<rows = 16, dim = 64, element = bf16>
  func.func @ring(%q: tensor<1x8x64xf32>, %pos: tensor<1xi64>, %s: !kf.qweight<f32, [8]>) -> tensor<1x8x64xf32> {
    %kv = kf.get_cache @kv : !kf.window_cache<rows = 16, dim = 64, element = bf16>
    %ring = kf.cache_read %kv : !kf.window_cache<rows = 16, dim = 64, element = bf16> -> tensor<16x64xf32>
    %wi = kf.window_indices %pos window(8) ring(8) : tensor<1xi64> -> tensor<1x8xi32>
    // expected-error @+1 {{'kf.sparse_attention' op kf-lower-ops: it reads a ring of 16 rows through indices that are not that ring's slots (kf.window_indices ring(16))}}
    %o = kf.sparse_attention %q, %ring[%wi] sinks(%s) scale(0.125)
        : tensor<1x8x64xf32>, !kf.qweight<f32, [8]>, tensor<16x64xf32>, tensor<1x8xi32> -> tensor<1x8x64xf32>
    return %o : tensor<1x8x64xf32>
  }
}
