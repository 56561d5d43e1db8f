// RUN: kf-opt %s --split-input-file --kf-select-kernels | FileCheck %s
// RUN: kf-opt %s --split-input-file --kf-select-kernels=threads=2 | FileCheck %s --check-prefix=THREADS

// The target is written into each module, so every ISA's choice is checked
// on any host. znver5 has avx512f, avx512bw and avx512vnni: every weight
// format gets the avx512vnni kernel, rows in groups of 16, one thread per
// core; M does not enter the choice of ISA. One column (M = 1) has its
// kernel quantize its activations (quantize = fused); more columns, or a
// dynamic M, keep the separate quantizer.
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  // CHECK-LABEL: func.func @formats
  func.func @formats(%x1: tensor<1x256xf32>, %x2: tensor<2x256xf32>, %x9: tensor<9x256xf32>,
                     %x17: tensor<17x256xf32>, %xd: tensor<?x256xf32>,
                     %q8: !kf.qweight<q8_0, [64, 256]>, %q4: !kf.qweight<q4_0, [64, 256]>,
                     %mx: !kf.qweight<mxfp4, [64, 256]>, %iq: !kf.qweight<iq2_xxs, [64, 256]>,
                     %bf: !kf.qweight<bf16, [64, 256]>, %q6: !kf.qweight<q6_k, [64, 256]>)
      -> (tensor<1x64xf32>, tensor<2x64xf32>, tensor<9x64xf32>, tensor<17x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
    // CHECK: kf.linear %{{.*}}, %{{.*}} {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, quantize = fused>} : tensor<1x256xf32>
    // THREADS: kf.linear %{{.*}}, %{{.*}} {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 2, quantize = fused>} : tensor<1x256xf32>
    %a = kf.linear %x1, %q8 : tensor<1x256xf32>, !kf.qweight<q8_0, [64, 256]> -> tensor<1x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 16>} : tensor<2x256xf32>
    %b = kf.linear %x2, %q4 : tensor<2x256xf32>, !kf.qweight<q4_0, [64, 256]> -> tensor<2x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>} : tensor<9x256xf32>
    %c = kf.linear %x9, %mx : tensor<9x256xf32>, !kf.qweight<mxfp4, [64, 256]> -> tensor<9x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq2_xxs_r16, max_cols = 8, threads = 16, decode = once>} : tensor<17x256xf32>
    %d = kf.linear %x17, %iq : tensor<17x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<17x64xf32>
    // BF16 takes vdpbf16ps (avx512bf16), not an int8 dot.
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512bf16, layout = bf16_r16, max_cols = 8, threads = 16>} : tensor<?x256xf32>
    %e = kf.linear %xd, %bf precision(f32) : tensor<?x256xf32>, !kf.qweight<bf16, [64, 256]> -> tensor<?x64xf32>
    // Formats without an emitter yet get a decision; the lowering refuses them.
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q6_k_r16, max_cols = 8, threads = 16>} : tensor<?x256xf32>
    %f = kf.linear %xd, %q6 : tensor<?x256xf32>, !kf.qweight<q6_k, [64, 256]> -> tensor<?x64xf32>
    return %a, %b, %c, %d, %e, %f : tensor<1x64xf32>, tensor<2x64xf32>, tensor<9x64xf32>, tensor<17x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
  }

  // IQ1_S and IQ1_M weights are transcoded to the ternary layouts, which
  // decode with shifts instead of grid gathers.
  // CHECK-LABEL: func.func @ternary
  func.func @ternary(%x: tensor<?x256xf32>, %s: !kf.qweight<iq1_s, [64, 256]>,
                     %m: !kf.qweight<iq1_m, [64, 256]>)
      -> (tensor<?x64xf32>, tensor<?x64xf32>) {
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_s_r16_ternary, max_cols = 8, threads = 16>}
    %a = kf.linear %x, %s : tensor<?x256xf32>, !kf.qweight<iq1_s, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_m_r16_ternary, max_cols = 8, threads = 16>}
    %b = kf.linear %x, %m : tensor<?x256xf32>, !kf.qweight<iq1_m, [64, 256]> -> tensor<?x64xf32>
    return %a, %b : tensor<?x64xf32>, tensor<?x64xf32>
  }

  // A grouped linear takes one decision for all its groups; a kf.moe one per
  // weight stack, keyed by operand name (printed in name order).
  // CHECK-LABEL: func.func @grouped_and_moe
  func.func @grouped_and_moe(%o: tensor<?x256xf32>, %wo: !kf.qweight<q8_0, [64, 128]>,
                             %x: tensor<?x64xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                             %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                             %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sg: !kf.qweight<q8_0, [32, 64]>,
                             %su: !kf.qweight<q8_0, [32, 64]>, %sd: !kf.qweight<q4_0, [64, 32]>)
      -> (tensor<?x64xf32>, tensor<?x64xf32>) {
    // CHECK: kf.grouped_linear %{{.*}} groups(2) {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}
    %z = kf.grouped_linear %o, %wo groups(2) : tensor<?x256xf32>, !kf.qweight<q8_0, [64, 128]> -> tensor<?x64xf32>
    // CHECK: kf.moe {{.*}} {kf.kernel = {
    // CHECK-SAME: down_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>,
    // CHECK-SAME: down_shexp = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 16>,
    // CHECK-SAME: gate_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>,
    // CHECK-SAME: gate_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>,
    // CHECK-SAME: up_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>,
    // CHECK-SAME: up_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}}
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
        : tensor<?x64xf32>, tensor<?x2xi32>, tensor<?x2xf32>,
          !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
          !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q4_0, [64, 32]> -> tensor<?x64xf32>
    return %z, %y : tensor<?x64xf32>, tensor<?x64xf32>
  }

  // K = 22400: one packed Q8_0 column (700 blocks of 48 bytes) fits the
  // 1 MiB a kernel may take of its stack; K = 699136 (21848 blocks) does
  // not, and keeps the separate quantizer.
  // CHECK-LABEL: func.func @long_rows
  func.func @long_rows(%x: tensor<1x22400xf32>, %w: !kf.qweight<q8_0, [16, 22400]>,
                       %y: tensor<1x699136xf32>, %v: !kf.qweight<q8_0, [16, 699136]>) -> (tensor<1x16xf32>, tensor<1x16xf32>) {
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, quantize = fused>}
    %a = kf.linear %x, %w : tensor<1x22400xf32>, !kf.qweight<q8_0, [16, 22400]> -> tensor<1x16xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}
    %b = kf.linear %y, %v : tensor<1x699136xf32>, !kf.qweight<q8_0, [16, 699136]> -> tensor<1x16xf32>
    return %a, %b : tensor<1x16xf32>, tensor<1x16xf32>
  }

  // One column read by two kernels of one activation format (Q8_0 and Q4_0
  // weights) is quantized once, by a separate quantizer; a BF16 linear of
  // the same input reads it in its own format and fuses. In a one-token
  // kf.moe the token's row is read by every gate and up projection, each
  // slot's down-projection row by one call only.
  // CHECK-LABEL: func.func @shared_column
  func.func @shared_column(%x: tensor<1x64xf32>, %q8: !kf.qweight<q8_0, [32, 64]>, %q4: !kf.qweight<q4_0, [32, 64]>,
                           %bf: !kf.qweight<bf16, [32, 64]>, %ids: tensor<1x2xi32>, %w: tensor<1x2xf32>,
                           %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                           %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sd: !kf.qweight<q4_0, [64, 32]>)
      -> (tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x64xf32>) {
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>} : tensor<1x64xf32>
    %a = kf.linear %x, %q8 : tensor<1x64xf32>, !kf.qweight<q8_0, [32, 64]> -> tensor<1x32xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 16>} : tensor<1x64xf32>
    %b = kf.linear %x, %q4 : tensor<1x64xf32>, !kf.qweight<q4_0, [32, 64]> -> tensor<1x32xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512bf16, layout = bf16_r16, max_cols = 8, threads = 16, quantize = fused>} : tensor<1x64xf32>
    %c = kf.linear %x, %bf : tensor<1x64xf32>, !kf.qweight<bf16, [32, 64]> -> tensor<1x32xf32>
    // CHECK: kf.moe {{.*}} {kf.kernel = {
    // CHECK-SAME: down_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16, quantize = fused>,
    // CHECK-SAME: down_shexp = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 16, quantize = fused>,
    // CHECK-SAME: gate_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>,
    // CHECK-SAME: gate_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>,
    // CHECK-SAME: up_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>,
    // CHECK-SAME: up_shexp = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 16>}}
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%q8, %q4, %sd) limit(10.0) shared_limit(10.0)
        : tensor<1x64xf32>, tensor<1x2xi32>, tensor<1x2xf32>,
          !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
          !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q4_0, [32, 64]>, !kf.qweight<q4_0, [64, 32]> -> tensor<1x64xf32>
    return %a, %b, %c, %y : tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>, tensor<1x64xf32>
  }

  // Where decoding costs more than reloading its lanes, a call of more
  // columns than one tile decodes each weight block once (decode = once):
  // IQ2_XXS and Q5_K from the first such call, a dynamic M included (and
  // IQ1 in its grid layouts, not in the ternary ones, which decode cheaply); Q6_K from 24 columns, FRACTAL64 from 48, Q4_K and VQ3_64 from
  // 64, Q4_0 and MXFP4 from 128, and not for a dynamic M (mostly an
  // expert's few columns); never Q8_0 or the float formats, nor one tile,
  // nor a fused quantization.
  // CHECK-LABEL: func.func @decode_once
  func.func @decode_once(%x1: tensor<1x256xf32>, %x8: tensor<8x256xf32>, %x9: tensor<9x256xf32>,
                         %x17: tensor<17x256xf32>, %x24: tensor<24x256xf32>, %x48: tensor<48x256xf32>,
                         %x64: tensor<64x256xf32>, %x512: tensor<512x256xf32>, %xd: tensor<?x256xf32>,
                         %iq2: !kf.qweight<iq2_xxs, [64, 256]>, %iq1m: !kf.qweight<iq1_m, [64, 256]>,
                         %q5k: !kf.qweight<q5_k, [64, 256]>, %q6k: !kf.qweight<q6_k, [64, 256]>,
                         %q4k: !kf.qweight<q4_k, [64, 256]>, %f64: !kf.qweight<fractal64, [64, 256]>,
                         %vq3: !kf.qweight<vq3_64, [64, 256]>, %q8: !kf.qweight<q8_0, [64, 256]>,
                         %q4: !kf.qweight<q4_0, [64, 256]>, %mx: !kf.qweight<mxfp4, [64, 256]>,
                         %bf: !kf.qweight<bf16, [64, 256]>) {
    // CHECK: layout = iq2_xxs_r16, max_cols = 8, threads = 16, quantize = fused>} : tensor<1x256xf32>
    %a = kf.linear %x1, %iq2 : tensor<1x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<1x64xf32>
    // CHECK: layout = iq2_xxs_r16, max_cols = 8, threads = 16>} : tensor<8x256xf32>
    %b = kf.linear %x8, %iq2 : tensor<8x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<8x64xf32>
    // CHECK: layout = iq2_xxs_r16, max_cols = 8, threads = 16, decode = once>} : tensor<9x256xf32>
    %c = kf.linear %x9, %iq2 : tensor<9x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<9x64xf32>
    // CHECK: layout = iq1_m_r16_ternary, max_cols = 8, threads = 16>} : tensor<?x256xf32>
    %d = kf.linear %xd, %iq1m : tensor<?x256xf32>, !kf.qweight<iq1_m, [64, 256]> -> tensor<?x64xf32>
    // CHECK: layout = q5_k_r16, max_cols = 8, threads = 16, decode = once>} : tensor<?x256xf32>
    %e = kf.linear %xd, %q5k : tensor<?x256xf32>, !kf.qweight<q5_k, [64, 256]> -> tensor<?x64xf32>
    // CHECK: layout = q6_k_r16, max_cols = 8, threads = 16>} : tensor<17x256xf32>
    %f = kf.linear %x17, %q6k : tensor<17x256xf32>, !kf.qweight<q6_k, [64, 256]> -> tensor<17x64xf32>
    // CHECK: layout = q6_k_r16, max_cols = 8, threads = 16, decode = once>} : tensor<24x256xf32>
    %g = kf.linear %x24, %q6k : tensor<24x256xf32>, !kf.qweight<q6_k, [64, 256]> -> tensor<24x64xf32>
    // CHECK: layout = q6_k_r16, max_cols = 8, threads = 16>} : tensor<?x256xf32>
    %h = kf.linear %xd, %q6k : tensor<?x256xf32>, !kf.qweight<q6_k, [64, 256]> -> tensor<?x64xf32>
    // CHECK: layout = fractal64_r16, max_cols = 8, threads = 16, decode = once>} : tensor<48x256xf32>
    %i = kf.linear %x48, %f64 : tensor<48x256xf32>, !kf.qweight<fractal64, [64, 256]> -> tensor<48x64xf32>
    // CHECK: layout = q4_k_r16, max_cols = 8, threads = 16>} : tensor<48x256xf32>
    %j = kf.linear %x48, %q4k : tensor<48x256xf32>, !kf.qweight<q4_k, [64, 256]> -> tensor<48x64xf32>
    // CHECK: layout = q4_k_r16, max_cols = 8, threads = 16, decode = once>} : tensor<64x256xf32>
    %k = kf.linear %x64, %q4k : tensor<64x256xf32>, !kf.qweight<q4_k, [64, 256]> -> tensor<64x64xf32>
    // CHECK: layout = vq3_64_r16, max_cols = 8, threads = 16, decode = once>} : tensor<64x256xf32>
    %l = kf.linear %x64, %vq3 : tensor<64x256xf32>, !kf.qweight<vq3_64, [64, 256]> -> tensor<64x64xf32>
    // CHECK: layout = q8_0_r16, max_cols = 8, threads = 16>} : tensor<512x256xf32>
    %m = kf.linear %x512, %q8 : tensor<512x256xf32>, !kf.qweight<q8_0, [64, 256]> -> tensor<512x64xf32>
    // CHECK: layout = q4_0_r16, max_cols = 8, threads = 16>} : tensor<64x256xf32>
    %q = kf.linear %x64, %q4 : tensor<64x256xf32>, !kf.qweight<q4_0, [64, 256]> -> tensor<64x64xf32>
    // CHECK: layout = q4_0_r16, max_cols = 8, threads = 16, decode = once>} : tensor<512x256xf32>
    %n = kf.linear %x512, %q4 : tensor<512x256xf32>, !kf.qweight<q4_0, [64, 256]> -> tensor<512x64xf32>
    // CHECK: layout = mxfp4_r16, max_cols = 8, threads = 16>} : tensor<?x256xf32>
    %r = kf.linear %xd, %mx : tensor<?x256xf32>, !kf.qweight<mxfp4, [64, 256]> -> tensor<?x64xf32>
    // CHECK: layout = mxfp4_r16, max_cols = 8, threads = 16, decode = once>} : tensor<512x256xf32>
    %o = kf.linear %x512, %mx : tensor<512x256xf32>, !kf.qweight<mxfp4, [64, 256]> -> tensor<512x64xf32>
    // CHECK: layout = bf16_r16, max_cols = 8, threads = 16>} : tensor<512x256xf32>
    %p = kf.linear %x512, %bf : tensor<512x256xf32>, !kf.qweight<bf16, [64, 256]> -> tensor<512x64xf32>
    return
  }

  // An earlier decision is replaced, later fields and all.
  // CHECK-LABEL: func.func @redecide
  func.func @redecide(%x: tensor<3x256xf32>, %w: !kf.qweight<q8_0, [64, 256]>) -> tensor<3x64xf32> {
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 4, threads = 1, cols = [3], l2_rows = 1, l1_k = 32, decode = once>}
        : tensor<3x256xf32>, !kf.qweight<q8_0, [64, 256]> -> tensor<3x64xf32>
    return %y : tensor<3x64xf32>
  }
}

// -----

// x86-64-v3: avx2 and fma, no AVX-512: the avx2 kernel, rows in groups of 8.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 8>} {
  // CHECK-LABEL: func.func @v3
  func.func @v3(%x: tensor<?x256xf32>, %q4: !kf.qweight<q4_0, [64, 256]>, %iq: !kf.qweight<iq2_xxs, [64, 256]>)
      -> (tensor<?x64xf32>, tensor<?x64xf32>) {
    // CHECK: {kf.kernel = #kf.kernel<isa = avx2, layout = q4_0_r8, max_cols = 8, threads = 8>}
    // THREADS: {kf.kernel = #kf.kernel<isa = avx2, layout = q4_0_r8, max_cols = 8, threads = 2>}
    %a = kf.linear %x, %q4 : tensor<?x256xf32>, !kf.qweight<q4_0, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 8, threads = 8, decode = once>}
    %b = kf.linear %x, %iq : tensor<?x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<?x64xf32>
    return %a, %b : tensor<?x64xf32>, tensor<?x64xf32>
  }
}

// -----

// x86-64-v4 has avx512f and avx512bw but not avx512vnni: still avx2 for the
// int8 formats; the float formats take AVX-512's FMA (avx512; bf16 widened,
// as there is no avx512bf16).
module attributes {kf.target = #kf.target<name = "x86-64-v4", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v4", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq", l1d = 32768, l2 = 1048576, l3 = 16777216, cores = 8>} {
  // CHECK-LABEL: func.func @v4
  func.func @v4(%x: tensor<?x256xf32>, %q8: !kf.qweight<q8_0, [64, 256]>, %bf: !kf.qweight<bf16, [64, 256]>, %f: !kf.qweight<f32, [64, 256]>)
      -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
    // CHECK: {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8>}
    %a = kf.linear %x, %q8 : tensor<?x256xf32>, !kf.qweight<q8_0, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512, layout = bf16_r16, max_cols = 8, threads = 8>}
    %b = kf.linear %x, %bf : tensor<?x256xf32>, !kf.qweight<bf16, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512, layout = f32_r16, max_cols = 8, threads = 8>}
    %c = kf.linear %x, %f : tensor<?x256xf32>, !kf.qweight<f32, [64, 256]> -> tensor<?x64xf32>
    return %a, %b, %c : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
  }
}

// -----

// x86-64-v2 has no AVX2: the portable scalar kernel, one row at a time.
module attributes {kf.target = #kf.target<name = "x86-64-v2", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v2", features = "+sse4.2", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  // CHECK-LABEL: func.func @v2
  func.func @v2(%x: tensor<?x256xf32>, %mx: !kf.qweight<mxfp4, [64, 256]>, %bf: !kf.qweight<bf16, [64, 256]>)
      -> (tensor<?x64xf32>, tensor<?x64xf32>) {
    // CHECK: {kf.kernel = #kf.kernel<isa = scalar, layout = mxfp4_r1, max_cols = 8, threads = 4>}
    %a = kf.linear %x, %mx : tensor<?x256xf32>, !kf.qweight<mxfp4, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = scalar, layout = bf16_r1, max_cols = 8, threads = 4>}
    %b = kf.linear %x, %bf : tensor<?x256xf32>, !kf.qweight<bf16, [64, 256]> -> tensor<?x64xf32>
    return %a, %b : tensor<?x64xf32>, tensor<?x64xf32>
  }
}

// -----

// neoverse-v1: neon with dotprod, rows in groups of 4; bfdot (neon_bf16) for
// BF16, fmla (neon) for F32.
module attributes {kf.target = #kf.target<name = "neoverse-v1", triple = "aarch64-unknown-linux-gnu", cpu = "neoverse-v1", features = "+neon,+dotprod,+i8mm,+sve,+bf16", l1d = 65536, l2 = 1048576, l3 = 33554432, cores = 64>} {
  // CHECK-LABEL: func.func @neoverse
  func.func @neoverse(%x: tensor<?x256xf32>, %q8: !kf.qweight<q8_0, [64, 256]>, %iq: !kf.qweight<iq2_xxs, [64, 256]>,
                      %bf: !kf.qweight<bf16, [64, 256]>, %f: !kf.qweight<f32, [64, 256]>)
      -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
    // CHECK: {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = q8_0_r4, max_cols = 8, threads = 64>}
    %a = kf.linear %x, %q8 : tensor<?x256xf32>, !kf.qweight<q8_0, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = iq2_xxs_r4, max_cols = 8, threads = 64, decode = once>}
    %b = kf.linear %x, %iq : tensor<?x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = neon_bf16, layout = bf16_r4, max_cols = 8, threads = 64>}
    %c = kf.linear %x, %bf : tensor<?x256xf32>, !kf.qweight<bf16, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = neon, layout = f32_r4, max_cols = 8, threads = 64>}
    %d = kf.linear %x, %f : tensor<?x256xf32>, !kf.qweight<f32, [64, 256]> -> tensor<?x64xf32>
    return %a, %b, %c, %d : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
  }

  // CHECK-LABEL: func.func @neoverse_ternary
  func.func @neoverse_ternary(%x: tensor<?x256xf32>, %m: !kf.qweight<iq1_m, [64, 256]>) -> tensor<?x64xf32> {
    // CHECK: {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = iq1_m_r4_ternary, max_cols = 8, threads = 64>}
    %a = kf.linear %x, %m : tensor<?x256xf32>, !kf.qweight<iq1_m, [64, 256]> -> tensor<?x64xf32>
    return %a : tensor<?x64xf32>
  }
}

// -----

// apple-m1: no bf16, so BF16 is widened and multiplied by fmla (neon).
module attributes {kf.target = #kf.target<name = "apple-m1", triple = "aarch64-unknown-linux-gnu", cpu = "apple-m1", features = "+neon,+dotprod", l1d = 131072, l2 = 12582912, l3 = 0, cores = 4>} {
  // CHECK-LABEL: func.func @m1
  func.func @m1(%x: tensor<?x256xf32>, %bf: !kf.qweight<bf16, [64, 256]>) -> tensor<?x64xf32> {
    // CHECK: {kf.kernel = #kf.kernel<isa = neon, layout = bf16_r4, max_cols = 8, threads = 4>}
    %a = kf.linear %x, %bf : tensor<?x256xf32>, !kf.qweight<bf16, [64, 256]> -> tensor<?x64xf32>
    return %a : tensor<?x64xf32>
  }
}

// -----

// znver5 as kf-set-target writes it, with gfni and bmi2: IQ2_XXS takes its
// code book layout, which these kernels read without permuting the indices
// or building the sign masks; the other formats are unchanged.
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+bmi2,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+gfni,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  // CHECK-LABEL: func.func @code_book
  func.func @code_book(%x1: tensor<1x256xf32>, %xd: tensor<?x256xf32>, %iq: !kf.qweight<iq2_xxs, [64, 256]>,
                       %q4: !kf.qweight<q4_0, [64, 256]>) -> (tensor<1x64xf32>, tensor<?x64xf32>, tensor<1x64xf32>) {
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq2_xxs_r16_codebook, max_cols = 8, threads = 16, quantize = fused>} : tensor<1x256xf32>
    %a = kf.linear %x1, %iq : tensor<1x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<1x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq2_xxs_r16_codebook, max_cols = 8, threads = 16, decode = once>} : tensor<?x256xf32>
    %b = kf.linear %xd, %iq : tensor<?x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<?x64xf32>
    // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 16, quantize = fused>} : tensor<1x256xf32>
    %c = kf.linear %x1, %q4 : tensor<1x256xf32>, !kf.qweight<q4_0, [64, 256]> -> tensor<1x64xf32>
    return %a, %b, %c : tensor<1x64xf32>, tensor<?x64xf32>, tensor<1x64xf32>
  }
}
