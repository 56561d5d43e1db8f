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
