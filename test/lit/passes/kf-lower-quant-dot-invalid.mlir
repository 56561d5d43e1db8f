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

// -----

// vdpbf16ps on a target without avx512bf16 (x86-64-v4 gets avx512, which
// widens bf16 by shifts): refused before any intrinsic reaches LLVM.
module attributes {kf.target = #kf.target<name = "x86-64-v4", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v4", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq", l1d = 32768, l2 = 1048576, l3 = 16777216, cores = 8>} {
  func.func @missing_bf16(%x: tensor<1x64xf32>, %w: !kf.qweight<bf16, [16, 64]>) -> tensor<1x16xf32> {
    // expected-error @+1 {{'kf.linear' op kf-lower-quant-dot: matmul kernel bf16/avx512bf16 r16 c1 [16 x 64] bf16: avx512bf16 needs target feature 'avx512bf16', which target 'x86-64-v4' lacks}}
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512bf16, layout = bf16_r16, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<bf16, [16, 64]> -> tensor<1x16xf32>
    return %y : tensor<1x16xf32>
  }
}

// -----

// With require-all, a kf.moe with a stack no emitter builds fails naming
// the stack.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @moe_no_emitter(%x: tensor<?x256xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                            %g: !kf.qweight<mxfp4, [4, 256, 256]>, %u: !kf.qweight<mxfp4, [4, 256, 256]>, %d: !kf.qweight<iq2_xs, [4, 256, 256]>,
                            %sg: !kf.qweight<q8_0, [128, 256]>, %su: !kf.qweight<q8_0, [128, 256]>, %sd: !kf.qweight<q8_0, [256, 128]>) -> tensor<?x256xf32> {
    // expected-error @+1 {{'kf.moe' op kf-lower-quant-dot: down_exps: matmul kernel iq2_xs/avx2 r8 c8 [256 x 256] bf16: no emitter for this format}}
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(2.0) shared_limit(2.0)
        {kf.kernel = {gate_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      up_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      down_exps = #kf.kernel<isa = avx2, layout = iq2_xs_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      gate_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      up_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      down_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>}}
        : tensor<?x256xf32>, tensor<?x2xi32>, tensor<?x2xf32>,
          !kf.qweight<mxfp4, [4, 256, 256]>, !kf.qweight<mxfp4, [4, 256, 256]>, !kf.qweight<iq2_xs, [4, 256, 256]>,
          !kf.qweight<q8_0, [128, 256]>, !kf.qweight<q8_0, [128, 256]>, !kf.qweight<q8_0, [256, 128]> -> tensor<?x256xf32>
    return %y : tensor<?x256xf32>
  }
}

// -----

// An ISA of the other family: vdpbf16ps has no int8 kernels.
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  func.func @wrong_family(%x: tensor<1x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<1x16xf32> {
    // expected-error @+1 {{'kf.linear' op kf-lower-quant-dot: matmul kernel q8_0/avx512bf16 r16 c1 [16 x 64] bf16: avx512bf16 has no kernels for q8_0 weights}}
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512bf16, layout = q8_0_r16, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
    return %y : tensor<1x16xf32>
  }
}

// -----

// A kf.moe must have a decision for each of its stacks.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @moe_undecided(%x: tensor<?x256xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                           %g: !kf.qweight<mxfp4, [4, 256, 256]>, %u: !kf.qweight<mxfp4, [4, 256, 256]>, %d: !kf.qweight<mxfp4, [4, 256, 256]>,
                           %sg: !kf.qweight<q8_0, [128, 256]>, %su: !kf.qweight<q8_0, [128, 256]>, %sd: !kf.qweight<q8_0, [256, 128]>) -> tensor<?x256xf32> {
    // expected-error @+1 {{'kf.moe' op kf-lower-quant-dot: no kf.kernel for gate_exps; run --kf-select-kernels first}}
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(2.0) shared_limit(2.0)
        : tensor<?x256xf32>, tensor<?x2xi32>, tensor<?x2xf32>,
          !kf.qweight<mxfp4, [4, 256, 256]>, !kf.qweight<mxfp4, [4, 256, 256]>, !kf.qweight<mxfp4, [4, 256, 256]>,
          !kf.qweight<q8_0, [128, 256]>, !kf.qweight<q8_0, [128, 256]>, !kf.qweight<q8_0, [256, 128]> -> tensor<?x256xf32>
    return %y : tensor<?x256xf32>
  }
}
