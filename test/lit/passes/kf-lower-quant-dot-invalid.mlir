// RUN: kf-opt %s --split-input-file --kf-lower-quant-dot="require-all" -verify-diagnostics

// expected-error @+1 {{kf-lower-quant-dot: the module has no kf.target; run --kf-set-target first}}
module {
  func.func @no_target(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x16xf32> {
    %y = kf.linear %x, %w : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x16xf32>
    return %y : tensor<4x16xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @undecided(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x16xf32> {
    // expected-error @+1 {{'kf.linear' op kf-lower-quant-dot: no kf.kernel; run --kf-select-kernels first}}
    %y = kf.linear %x, %w : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x16xf32>
    return %y : tensor<4x16xf32>
  }
}

// -----

// With require-all, a linear no emitter builds fails with the reason.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @no_emitter(%x: tensor<1x256xf32>, %w: !kf.qweight<iq2_xs, [16, 256]>) -> tensor<1x16xf32> {
    // expected-error @+1 {{'kf.linear' op kf-lower-quant-dot: matmul kernel iq2_xs/avx2 r8 c1 [16 x 256] bf16: no emitter for this format}}
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xs_r8, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x256xf32>, !kf.qweight<iq2_xs, [16, 256]> -> tensor<1x16xf32>
    return %y : tensor<1x16xf32>
  }
}

// -----

// A decision the target cannot run: AVX-512 VNNI on x86-64-v3.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @missing_feature(%x: tensor<1x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<1x16xf32> {
    // expected-error @+1 {{'kf.linear' op kf-lower-quant-dot: matmul kernel q8_0/avx512vnni r16 c1 [16 x 64] bf16: avx512vnni needs target feature 'avx512f', which target 'x86-64-v3' lacks}}
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
    return %y : tensor<1x16xf32>
  }
}

// -----

// The kernels module's name is taken by something else.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func private @kernels()
  func.func @taken(%x: tensor<1x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<1x16xf32> {
    // expected-error @+1 {{'kf.linear' op kf-lower-quant-dot: the symbol @kernels is taken by a 'func.func', expected the kernels module}}
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
    return %y : tensor<1x16xf32>
  }
}

// -----

// A group that does not start a packed row group.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @group_rows(%x: tensor<?x128xf32>, %w: !kf.qweight<q8_0, [8, 64]>) -> tensor<?x8xf32> {
    // expected-error @+1 {{'kf.grouped_linear' op kf-lower-quant-dot: a group's 4 rows are not a multiple of the layout's row group 8}}
    %y = kf.grouped_linear %x, %w groups(2) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>}
        : tensor<?x128xf32>, !kf.qweight<q8_0, [8, 64]> -> tensor<?x8xf32>
    return %y : tensor<?x8xf32>
  }
}
