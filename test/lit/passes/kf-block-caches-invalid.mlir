// RUN: kf-opt %s --split-input-file --kf-block-caches -verify-diagnostics

// expected-error @+1 {{kf-block-caches: the module has no kf.target; run --kf-set-target first}}
module {
  func.func @f(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x16xf32> {
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 8, threads = 1>}
        : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x16xf32>
    return %y : tensor<4x16xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v2", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v2", features = "+sse4.2", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @f(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x16xf32> {
    // expected-error @+1 {{'kf.linear' op kf-block-caches: no kf.kernel; run --kf-select-kernels first}}
    %y = kf.linear %x, %w : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x16xf32>
    return %y : tensor<4x16xf32>
  }
}
