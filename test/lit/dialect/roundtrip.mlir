// RUN: kf-opt %s --split-input-file | FileCheck %s
// The printed form parses back to the same IR.
// RUN: kf-opt %s --split-input-file | kf-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @qweight_types
// CHECK-SAME: !kf.qweight<f32, [7, 3]>
// CHECK-SAME: !kf.qweight<f16, [1, 1]>
// CHECK-SAME: !kf.qweight<bf16, [16, 64]>
// CHECK-SAME: !kf.qweight<q8_0, [2048, 4096]>
// CHECK-SAME: !kf.qweight<q8_0, [256, 2048, 4096]>
// CHECK-SAME: !kf.qweight<iq1_m, [256, 2048, 4096]>
// CHECK-SAME: !kf.qweight<fractal64, [8, 64]>
// CHECK-SAME: !kf.qweight<vq3_64, [8, 128]>
// CHECK-SAME: !kf.qweight<mxfp4, [8, 32]>
func.func @qweight_types(%a: !kf.qweight<f32, [7, 3]>, %b: !kf.qweight<f16, [1, 1]>,
                         %c: !kf.qweight<bf16, [16, 64]>, %d: !kf.qweight<q8_0, [2048, 4096]>,
                         %e: !kf.qweight<q8_0, [256, 2048, 4096]>,
                         %f: !kf.qweight<iq1_m, [256, 2048, 4096]>, %g: !kf.qweight<fractal64, [8, 64]>,
                         %h: !kf.qweight<vq3_64, [8, 128]>, %i: !kf.qweight<mxfp4, [8, 32]>) {
  return
}

// -----

// CHECK-LABEL: func.func @rms_norm
func.func @rms_norm(%x: tensor<?x64xf32>, %g: tensor<64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  // CHECK: kf.rms_norm %{{.*}}, %{{.*}} eps(9.99999997E-7) : tensor<?x64xf32>, tensor<64xf32>
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<?x64xf32>, tensor<64xf32>
  // CHECK: kf.rms_norm %{{.*}} eps(9.99999974E-6) : tensor<?x64xf32>
  %1 = kf.rms_norm %x eps(1.0e-05) : tensor<?x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm_rank3_dynamic_weight
func.func @rms_norm_rank3_dynamic_weight(%x: tensor<2x3x64xf32>, %g: tensor<?xf32>) -> tensor<2x3x64xf32> {
  // CHECK: kf.rms_norm {{.*}} : tensor<2x3x64xf32>, tensor<?xf32>
  %0 = kf.rms_norm %x, %g eps(1.0e-06) : tensor<2x3x64xf32>, tensor<?xf32>
  return %0 : tensor<2x3x64xf32>
}

// -----

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x4096xf32>, %w: !kf.qweight<q8_0, [2048, 4096]>,
                  %y: tensor<5x3xf32>, %v: !kf.qweight<f32, [7, 3]>) -> (tensor<?x2048xf32>, tensor<5x7xf32>) {
  // CHECK: kf.linear %{{.*}}, %{{.*}} : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  %0 = kf.linear %x, %w : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  // CHECK: kf.linear %{{.*}}, %{{.*}} : tensor<5x3xf32>, !kf.qweight<f32, [7, 3]> -> tensor<5x7xf32>
  %1 = kf.linear %y, %v : tensor<5x3xf32>, !kf.qweight<f32, [7, 3]> -> tensor<5x7xf32>
  return %0, %1 : tensor<?x2048xf32>, tensor<5x7xf32>
}

// -----

// CHECK: module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 8>}
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu",
    cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144,
    l3 = 8388608, cores = 8>} {
}

// -----

// An AArch64 target with no L3.
// CHECK: #kf.target<name = "m", triple = "aarch64-unknown-linux-gnu", cpu = "apple-m1", features = "+neon,+dotprod", l1d = 131072, l2 = 12582912, l3 = 0, cores = 4>
module attributes {kf.target = #kf.target<name = "m", triple = "aarch64-unknown-linux-gnu",
    cpu = "apple-m1", features = "+neon,+dotprod", l1d = 131072, l2 = 12582912, l3 = 0, cores = 4>} {
}
// -----

// CHECK-LABEL: func.func @qweight_vectors_and_tables
// CHECK-SAME: !kf.qweight<f32, [4096]>
// CHECK-SAME: !kf.qweight<q8_0, [64]>
// CHECK-SAME: !kf.qweight<i32, [129280, 6]>
// CHECK-SAME: !kf.qweight<i32, [6]>
// CHECK-SAME: !kf.qweight<i32, [2, 3, 5]>
func.func @qweight_vectors_and_tables(%a: !kf.qweight<f32, [4096]>, %b: !kf.qweight<q8_0, [64]>,
                                      %c: !kf.qweight<i32, [129280, 6]>, %d: !kf.qweight<i32, [6]>,
                                      %e: !kf.qweight<i32, [2, 3, 5]>) {
  return
}

// -----

// CHECK-LABEL: func.func @cache_types
// CHECK-SAME: !kf.window_cache<rows = 128, dim = 512, element = bf16>
// CHECK-SAME: !kf.window_cache<rows = 1, dim = 1, element = f32>
// CHECK-SAME: !kf.window_cache<rows = 16, dim = 64, element = f16>
// CHECK-SAME: !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>
// CHECK-SAME: !kf.compressed_cache<ratio = 128, dim = 512, overlap = false, element = bf16>
// CHECK-SAME: !kf.compressed_cache<ratio = 1, dim = 8, overlap = false, element = f32>
func.func @cache_types(%a: !kf.window_cache<rows = 128, dim = 512, element = bf16>,
                       %b: !kf.window_cache<rows = 1, dim = 1, element = f32>,
                       %c: !kf.window_cache<rows = 16, dim = 64, element = f16>,
                       %d: !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>,
                       %e: !kf.compressed_cache<ratio = 128, dim = 512, overlap = false, element = bf16>,
                       %f: !kf.compressed_cache<ratio = 1, dim = 8, overlap = false, element = f32>) {
  return
}

// -----

// The parameters print in declaration order whatever order they are written
// in, and YaRN's defaults are elided. (The function's attributes print
// sorted by name.)
// CHECK-LABEL: func.func @rope_attrs
// CHECK-SAME: reordered = #kf.rope<dim = 2, base = 1.000000e+06, yarn_factor = 4.000000e+00, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00, original_context = 4096>
// CHECK-SAME: rope = #kf.rope<dim = 64, base = 1.000000e+04>
// CHECK-SAME: yarn = #kf.rope<dim = 64, base = 1.600000e+05, yarn_factor = 1.600000e+01, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00, original_context = 65536>
func.func @rope_attrs() attributes {
    rope = #kf.rope<dim = 64, base = 1.000000e+04>,
    yarn = #kf.rope<dim = 64, base = 1.600000e+05, yarn_factor = 1.600000e+01,
                    beta_fast = 3.200000e+01, beta_slow = 1.000000e+00,
                    original_context = 65536>,
    reordered = #kf.rope<original_context = 4096, beta_slow = 1.0, beta_fast = 32.0,
                         yarn_factor = 4.0, base = 1000000.0, dim = 2>} {
  return
}

// -----

// CHECK-LABEL: func.func @rms_norm_forms
func.func @rms_norm_forms(%x: tensor<?x4096xf32>, %g: tensor<4096xf32>, %h: tensor<?x64x512xf32>,
                          %v: !kf.qweight<f32, [512]>) {
  // The ODS examples.
  // CHECK: kf.rms_norm %arg0, %arg1 eps(9.99999997E-7) : tensor<?x4096xf32>, tensor<4096xf32>
  %y = kf.rms_norm %x, %g eps(1.0e-06) : tensor<?x4096xf32>, tensor<4096xf32>
  // CHECK: kf.rms_norm %arg0 eps(9.99999997E-7) : tensor<?x4096xf32>
  %z = kf.rms_norm %x eps(1.0e-06) : tensor<?x4096xf32>
  // CHECK: kf.rms_norm %arg2 eps(9.99999997E-7) compute(bf16) : tensor<?x64x512xf32>
  %q = kf.rms_norm %h eps(1.0e-06) compute(bf16) : tensor<?x64x512xf32>
  // A !kf.qweight vector weight.
  // CHECK: kf.rms_norm %arg2, %arg3 eps(9.99999997E-7) : tensor<?x64x512xf32>, !kf.qweight<f32, [512]>
  %a = kf.rms_norm %h, %v eps(1.0e-06) : tensor<?x64x512xf32>, !kf.qweight<f32, [512]>
  // The default compute(f32) is not printed.
  // CHECK: kf.rms_norm %arg0 eps(9.99999997E-7) : tensor<?x4096xf32>
  %c = kf.rms_norm %x eps(1.0e-06) compute(f32) : tensor<?x4096xf32>
  // A 1-D input: one row.
  // CHECK: kf.rms_norm %arg1 eps(9.99999997E-7) : tensor<4096xf32>
  %d = kf.rms_norm %g eps(1.0e-06) : tensor<4096xf32>
  return
}

// -----

// CHECK-LABEL: func.func @linear_precision
func.func @linear_precision(%x: tensor<?x4096xf32>, %w: !kf.qweight<q8_0, [2048, 4096]>,
                            %x1: tensor<1x4096xf32>, %h: !kf.qweight<q8_0, [32256, 4096]>) {
  // The ODS examples.
  // CHECK: kf.linear %arg0, %arg1 : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  %y = kf.linear %x, %w : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  // CHECK: kf.linear %arg2, %arg3 precision(f32) : tensor<1x4096xf32>, !kf.qweight<q8_0, [32256, 4096]> -> tensor<1x32256xf32>
  %l = kf.linear %x1, %h precision(f32) : tensor<1x4096xf32>, !kf.qweight<q8_0, [32256, 4096]> -> tensor<1x32256xf32>
  // The default precision(bf16) is not printed.
  // CHECK: kf.linear %arg0, %arg1 : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  %b = kf.linear %x, %w precision(bf16) : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  return
}

// -----

// CHECK-LABEL: module @symbols
module @symbols {
  // The ODS examples.
  // CHECK: kf.weight @blk.0.attn_q_a.weight : !kf.qweight<q8_0, [1024, 4096]>
  kf.weight @blk.0.attn_q_a.weight : !kf.qweight<q8_0, [1024, 4096]>
  // CHECK: kf.weight @blk.0.ffn_gate_tid2eid.weight : !kf.qweight<i32, [129280, 6]>
  kf.weight @blk.0.ffn_gate_tid2eid.weight : !kf.qweight<i32, [129280, 6]>
  // CHECK: kf.weight @output_norm.weight : !kf.qweight<f32, [4096]>
  kf.weight @output_norm.weight : !kf.qweight<f32, [4096]>
  // CHECK: kf.cache @blk.0.kv : !kf.window_cache<rows = 128, dim = 512, element = bf16>
  kf.cache @blk.0.kv : !kf.window_cache<rows = 128, dim = 512, element = bf16>
  // CHECK: kf.cache @blk.1.compressor : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>
  kf.cache @blk.1.compressor : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>

  // CHECK-LABEL: func.func @use
  func.func @use(%pos: tensor<?xi64>) {
    // CHECK: kf.get_weight @blk.0.attn_q_a.weight : !kf.qweight<q8_0, [1024, 4096]>
    %w = kf.get_weight @blk.0.attn_q_a.weight : !kf.qweight<q8_0, [1024, 4096]>
    // CHECK: kf.get_weight @blk.0.ffn_gate_tid2eid.weight : !kf.qweight<i32, [129280, 6]>
    %t = kf.get_weight @blk.0.ffn_gate_tid2eid.weight : !kf.qweight<i32, [129280, 6]>
    // CHECK: kf.get_weight @output_norm.weight : !kf.qweight<f32, [4096]>
    %n = kf.get_weight @output_norm.weight : !kf.qweight<f32, [4096]>
    // CHECK: %[[C:.*]] = kf.get_cache @blk.0.kv : !kf.window_cache<rows = 128, dim = 512, element = bf16>
    %c = kf.get_cache @blk.0.kv : !kf.window_cache<rows = 128, dim = 512, element = bf16>
    // CHECK: %[[D:.*]] = kf.get_cache @blk.1.compressor : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>
    %d = kf.get_cache @blk.1.compressor : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>
    // CHECK: kf.cache_reset %[[C]] at %{{.*}} : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<?xi64>
    kf.cache_reset %c at %pos : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<?xi64>
    // CHECK: kf.cache_reset %[[D]] at %{{.*}} : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>, tensor<?xi64>
    kf.cache_reset %d at %pos : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>, tensor<?xi64>
    return
  }
}

// -----

// CHECK-LABEL: func.func @cache_append_read
func.func @cache_append_read(%c: !kf.window_cache<rows = 128, dim = 512, element = bf16>,
                             %d: !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>,
                             %kv: tensor<?x512xf32>, %pos: tensor<?xi64>,
                             %kv1: tensor<1x512xf32>, %pos1: tensor<1xi64>) {
  // The ODS examples.
  // CHECK: kf.cache_append %arg0, %arg2, %arg3 : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<?x512xf32>, tensor<?xi64>
  kf.cache_append %c, %kv, %pos : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<?x512xf32>, tensor<?xi64>
  // CHECK: kf.cache_read %arg0 : !kf.window_cache<rows = 128, dim = 512, element = bf16> -> tensor<128x512xf32>
  %ring = kf.cache_read %c : !kf.window_cache<rows = 128, dim = 512, element = bf16> -> tensor<128x512xf32>
  // CHECK: kf.cache_read %arg1 : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16> -> tensor<?x512xf32>
  %e = kf.cache_read %d : !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16> -> tensor<?x512xf32>
  // One decode token; a window read with dynamic sizes.
  // CHECK: kf.cache_append %arg0, %arg4, %arg5 : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<1x512xf32>, tensor<1xi64>
  kf.cache_append %c, %kv1, %pos1 : !kf.window_cache<rows = 128, dim = 512, element = bf16>, tensor<1x512xf32>, tensor<1xi64>
  // CHECK: kf.cache_read %arg0 : !kf.window_cache<rows = 128, dim = 512, element = bf16> -> tensor<?x?xf32>
  %dyn = kf.cache_read %c : !kf.window_cache<rows = 128, dim = 512, element = bf16> -> tensor<?x?xf32>
  return
}

// -----

// CHECK-LABEL: func.func @embed
func.func @embed(%tokens: tensor<?xi32>, %e: !kf.qweight<q8_0, [32256, 4096]>,
                 %t3: tensor<3xi32>, %f: !kf.qweight<bf16, [10, 8]>) {
  // The ODS example.
  // CHECK: kf.embed %arg0, %arg1 : tensor<?xi32>, !kf.qweight<q8_0, [32256, 4096]> -> tensor<?x4096xf32>
  %x = kf.embed %tokens, %e : tensor<?xi32>, !kf.qweight<q8_0, [32256, 4096]> -> tensor<?x4096xf32>
  // CHECK: kf.embed %arg2, %arg3 : tensor<3xi32>, !kf.qweight<bf16, [10, 8]> -> tensor<3x8xf32>
  %y = kf.embed %t3, %f : tensor<3xi32>, !kf.qweight<bf16, [10, 8]> -> tensor<3x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @hyper_connections
func.func @hyper_connections(%x: tensor<?x4096xf32>, %f: tensor<?x4096xf32>,
                             %fn: !kf.qweight<f32, [24, 16384]>, %base: !kf.qweight<f32, [24]>,
                             %scale: !kf.qweight<f32, [3]>, %s1: tensor<1x4x4096xf32>,
                             %hfn: !kf.qweight<f32, [4, 16384]>, %hbase: !kf.qweight<f32, [4]>,
                             %hscale: !kf.qweight<f32, [1]>) {
  // The ODS examples.
  // CHECK: %[[S:.*]] = kf.hc_expand %arg0 : tensor<?x4096xf32> -> tensor<?x4x4096xf32>
  %s = kf.hc_expand %x : tensor<?x4096xf32> -> tensor<?x4x4096xf32>
  // CHECK: %{{[a-z0-9_]+}}, %[[POST:[a-z0-9_]+]], %[[COMB:[a-z0-9_]+]] = kf.hc_pre %[[S]], %arg2, %arg3, %arg4 sinkhorn(20) eps(9.99999997E-7) norm_eps(9.99999997E-7) : tensor<?x4x4096xf32>, !kf.qweight<f32, [24, 16384]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]> -> tensor<?x4096xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  %x2, %post, %comb = kf.hc_pre %s, %fn, %base, %scale sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<?x4x4096xf32>, !kf.qweight<f32, [24, 16384]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]>
      -> tensor<?x4096xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
  // CHECK: kf.hc_post %arg1, %[[S]], %[[POST]], %[[COMB]] : tensor<?x4096xf32>, tensor<?x4x4096xf32>, tensor<?x4xf32>, tensor<?x4x4xf32> -> tensor<?x4x4096xf32>
  %n = kf.hc_post %f, %s, %post, %comb : tensor<?x4096xf32>, tensor<?x4x4096xf32>, tensor<?x4xf32>, tensor<?x4x4xf32> -> tensor<?x4x4096xf32>
  // CHECK: kf.hc_head %arg5, %arg6, %arg7, %arg8 eps(9.99999997E-7) norm_eps(9.99999997E-7) : tensor<1x4x4096xf32>, !kf.qweight<f32, [4, 16384]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x4096xf32>
  %y = kf.hc_head %s1, %hfn, %hbase, %hscale eps(1.0e-06) norm_eps(1.0e-06)
      : tensor<1x4x4096xf32>, !kf.qweight<f32, [4, 16384]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<1x4096xf32>
  return
}

// -----

// Static token counts, two streams, a quantized fn, distinct epsilons.
// CHECK-LABEL: func.func @hyper_connections_static
func.func @hyper_connections_static(%s: tensor<3x2x64xf32>, %fn: !kf.qweight<q8_0, [8, 128]>,
                                    %base: !kf.qweight<f32, [8]>, %scale: !kf.qweight<f32, [3]>,
                                    %hfn: !kf.qweight<bf16, [2, 128]>, %hbase: !kf.qweight<f32, [2]>,
                                    %hscale: !kf.qweight<f32, [1]>) {
  // CHECK: kf.hc_pre %arg0, %arg1, %arg2, %arg3 sinkhorn(1) eps(9.99999974E-6) norm_eps(9.99999997E-7) : tensor<3x2x64xf32>, !kf.qweight<q8_0, [8, 128]>, !kf.qweight<f32, [8]>, !kf.qweight<f32, [3]> -> tensor<3x64xf32>, tensor<3x2xf32>, tensor<3x2x2xf32>
  %x, %post, %comb = kf.hc_pre %s, %fn, %base, %scale sinkhorn(1) eps(1.0e-05) norm_eps(1.0e-06)
      : tensor<3x2x64xf32>, !kf.qweight<q8_0, [8, 128]>, !kf.qweight<f32, [8]>, !kf.qweight<f32, [3]>
      -> tensor<3x64xf32>, tensor<3x2xf32>, tensor<3x2x2xf32>
  // CHECK: kf.hc_head %arg0, %arg4, %arg5, %arg6 eps(9.99999974E-6) norm_eps(9.99999997E-7) : tensor<3x2x64xf32>, !kf.qweight<bf16, [2, 128]>, !kf.qweight<f32, [2]>, !kf.qweight<f32, [1]> -> tensor<3x64xf32>
  %y = kf.hc_head %s, %hfn, %hbase, %hscale eps(1.0e-05) norm_eps(1.0e-06)
      : tensor<3x2x64xf32>, !kf.qweight<bf16, [2, 128]>, !kf.qweight<f32, [2]>, !kf.qweight<f32, [1]> -> tensor<3x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @grouped_linear
func.func @grouped_linear(%o: tensor<?x32768xf32>, %w: !kf.qweight<q8_0, [8192, 4096]>) {
  // The ODS example.
  // CHECK: kf.grouped_linear %arg0, %arg1 groups(8) : tensor<?x32768xf32>, !kf.qweight<q8_0, [8192, 4096]> -> tensor<?x8192xf32>
  %z = kf.grouped_linear %o, %w groups(8) : tensor<?x32768xf32>, !kf.qweight<q8_0, [8192, 4096]> -> tensor<?x8192xf32>
  // CHECK: kf.grouped_linear %arg0, %arg1 groups(8) precision(f32) : tensor<?x32768xf32>, !kf.qweight<q8_0, [8192, 4096]> -> tensor<?x8192xf32>
  %f = kf.grouped_linear %o, %w groups(8) precision(f32) : tensor<?x32768xf32>, !kf.qweight<q8_0, [8192, 4096]> -> tensor<?x8192xf32>
  // CHECK: kf.grouped_linear %arg0, %arg1 groups(8) : tensor<?x32768xf32>, !kf.qweight<q8_0, [8192, 4096]> -> tensor<?x8192xf32>
  %b = kf.grouped_linear %o, %w groups(8) precision(bf16) : tensor<?x32768xf32>, !kf.qweight<q8_0, [8192, 4096]> -> tensor<?x8192xf32>
  return
}

// -----

// CHECK-LABEL: func.func @rope
func.func @rope(%x: tensor<?x64x512xf32>, %y: tensor<?x64x512xf32>, %pos: tensor<?xi64>,
                %kv: tensor<?x512xf32>) {
  // The ODS examples.
  // CHECK: kf.rope %arg0, %arg2, <dim = 64, base = 1.000000e+04> : tensor<?x64x512xf32>, tensor<?xi64>
  %q = kf.rope %x, %pos, <dim = 64, base = 1.000000e+04> : tensor<?x64x512xf32>, tensor<?xi64>
  // CHECK: kf.rope %arg1, %arg2, <dim = 64, base = 1.000000e+04> inverse : tensor<?x64x512xf32>, tensor<?xi64>
  %o = kf.rope %y, %pos, <dim = 64, base = 1.000000e+04> inverse : tensor<?x64x512xf32>, tensor<?xi64>
  // YaRN, on a [T, D] input.
  // CHECK: kf.rope %arg3, %arg2, <dim = 64, base = 1.600000e+05, yarn_factor = 1.600000e+01, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00, original_context = 65536> : tensor<?x512xf32>, tensor<?xi64>
  %k = kf.rope %kv, %pos, <dim = 64, base = 1.600000e+05, yarn_factor = 1.600000e+01,
                           beta_fast = 3.200000e+01, beta_slow = 1.000000e+00,
                           original_context = 65536> : tensor<?x512xf32>, tensor<?xi64>
  // The prefixed form parses where no `:` follows it, and prints stripped.
  // A rope over the whole row.
  // CHECK: kf.rope %arg3, %arg2, <dim = 512, base = 1.000000e+04> inverse : tensor<?x512xf32>, tensor<?xi64>
  %w = kf.rope %kv, %pos, #kf.rope<dim = 512, base = 1.000000e+04> inverse : tensor<?x512xf32>, tensor<?xi64>
  return
}

// -----

// CHECK-LABEL: func.func @hadamard_and_quant_sim
func.func @hadamard_and_quant_sim(%q: tensor<?x64x128xf32>, %x: tensor<?x4096xf32>,
                                  %kv: tensor<?x512xf32>, %h: tensor<?x64x128xf32>,
                                  %v: tensor<128xf32>) {
  // The ODS examples.
  // CHECK: kf.hadamard %arg0 : tensor<?x64x128xf32>
  %hq = kf.hadamard %q : tensor<?x64x128xf32>
  // CHECK: kf.fp8_sim %arg1 block(128) : tensor<?x4096xf32>
  %a = kf.fp8_sim %x block(128) : tensor<?x4096xf32>
  // CHECK: kf.fp8_sim %arg2 block(64) leading(448) : tensor<?x512xf32>
  %k = kf.fp8_sim %kv block(64) leading(448) : tensor<?x512xf32>
  // CHECK: kf.fp4_sim %arg3 block(32) : tensor<?x64x128xf32>
  %f = kf.fp4_sim %h block(32) : tensor<?x64x128xf32>
  // The other forms: rank 1, fp4 with leading.
  // CHECK: kf.hadamard %arg4 : tensor<128xf32>
  %hv = kf.hadamard %v : tensor<128xf32>
  // CHECK: kf.fp8_sim %arg4 block(128) : tensor<128xf32>
  %av = kf.fp8_sim %v block(128) : tensor<128xf32>
  // CHECK: kf.fp4_sim %arg2 block(32) leading(448) : tensor<?x512xf32>
  %fl = kf.fp4_sim %kv block(32) leading(448) : tensor<?x512xf32>
  return
}

// -----

// CHECK-LABEL: func.func @compress
func.func @compress(%kv: tensor<?x1024xf32>, %score: tensor<?x1024xf32>, %pos: tensor<?xi64>,
                    %c: !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>,
                    %ape: !kf.qweight<f32, [4, 1024]>, %norm: !kf.qweight<f32, [512]>,
                    %hv: tensor<?x512xf32>, %hg: tensor<?x512xf32>,
                    %h: !kf.compressed_cache<ratio = 128, dim = 512, overlap = false, element = bf16>,
                    %hape: !kf.qweight<bf16, [128, 512]>,
                    %iv: tensor<?x256xf32>, %ig: tensor<?x256xf32>,
                    %i: !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>,
                    %iape: !kf.qweight<f32, [4, 256]>, %inorm: !kf.qweight<f32, [128]>) {
  // The ODS example.
  // CHECK: kf.compress %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, <dim = 64, base = 1.600000e+05> post(fp8) eps(9.99999997E-7) : tensor<?x1024xf32>, tensor<?x1024xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>, !kf.qweight<f32, [4, 1024]>, !kf.qweight<f32, [512]>
  kf.compress %kv, %score, %pos, %c, %ape, %norm, <dim = 64, base = 1.600000e+05> post(fp8) eps(1.0e-06)
      : tensor<?x1024xf32>, tensor<?x1024xf32>, tensor<?xi64>,
        !kf.compressed_cache<ratio = 4, dim = 512, overlap = true, element = bf16>,
        !kf.qweight<f32, [4, 1024]>, !kf.qweight<f32, [512]>
  // Without overlap (HCA), post(none), YaRN, a bf16 ape.
  // CHECK: kf.compress %arg6, %arg7, %arg2, %arg8, %arg9, %arg5, <dim = 64, base = 1.600000e+05, yarn_factor = 1.600000e+01, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00, original_context = 65536> post(none) eps(9.99999997E-7) : tensor<?x512xf32>, tensor<?x512xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 128, dim = 512, overlap = false, element = bf16>, !kf.qweight<bf16, [128, 512]>, !kf.qweight<f32, [512]>
  kf.compress %hv, %hg, %pos, %h, %hape, %norm,
      <dim = 64, base = 1.600000e+05, yarn_factor = 1.600000e+01, beta_fast = 3.200000e+01,
       beta_slow = 1.000000e+00, original_context = 65536> post(none) eps(1.0e-06)
      : tensor<?x512xf32>, tensor<?x512xf32>, tensor<?xi64>,
        !kf.compressed_cache<ratio = 128, dim = 512, overlap = false, element = bf16>,
        !kf.qweight<bf16, [128, 512]>, !kf.qweight<f32, [512]>
  // The indexer's compressor: post(hadamard_fp4); a prefixed #kf.rope parses
  // here as nothing but `post` follows it.
  // CHECK: kf.compress %arg10, %arg11, %arg2, %arg12, %arg13, %arg14, <dim = 64, base = 1.600000e+05> post(hadamard_fp4) eps(9.99999997E-7) : tensor<?x256xf32>, tensor<?x256xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [128]>
  kf.compress %iv, %ig, %pos, %i, %iape, %inorm, #kf.rope<dim = 64, base = 1.600000e+05> post(hadamard_fp4) eps(1.0e-06)
      : tensor<?x256xf32>, tensor<?x256xf32>, tensor<?xi64>,
        !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>,
        !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [128]>
  return
}

// -----

// CHECK-LABEL: func.func @attention_indices
func.func @attention_indices(%pos: tensor<?xi64>, %pos1: tensor<1xi64>, %e: tensor<?x512xf32>,
                             %q: tensor<?x64x128xf32>, %w: tensor<?x64xf32>, %k: tensor<?x128xf32>,
                             %s: tensor<?x?xf32>, %s3: tensor<3x5xf32>, %pos3: tensor<3xi64>) {
  // The ODS examples.
  // CHECK: kf.window_indices %arg0 window(128) : tensor<?xi64> -> tensor<?x128xi32>
  %wi = kf.window_indices %pos window(128) : tensor<?xi64> -> tensor<?x128xi32>
  // CHECK: kf.window_indices %arg1 window(128) ring(128) : tensor<1xi64> -> tensor<1x128xi32>
  %r = kf.window_indices %pos1 window(128) ring(128) : tensor<1xi64> -> tensor<1x128xi32>
  // CHECK: kf.visible_entries %arg0, %arg2 ratio(128) : tensor<?xi64>, tensor<?x512xf32> -> tensor<?x?xi32>
  %i = kf.visible_entries %pos, %e ratio(128) : tensor<?xi64>, tensor<?x512xf32> -> tensor<?x?xi32>
  // CHECK: kf.indexer_scores %arg3, %arg4, %arg5 scale(0.0110485433) : tensor<?x64x128xf32>, tensor<?x64xf32>, tensor<?x128xf32> -> tensor<?x?xf32>
  %sc = kf.indexer_scores %q, %w, %k scale(0.0110485433)
      : tensor<?x64x128xf32>, tensor<?x64xf32>, tensor<?x128xf32> -> tensor<?x?xf32>
  // CHECK: kf.indexer_topk %arg6, %arg0 k(512) ratio(4) : tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xi32>
  %t = kf.indexer_topk %s, %pos k(512) ratio(4) : tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xi32>
  // Fewer entries than k: min(k, E) picks.
  // CHECK: kf.indexer_topk %arg7, %arg8 k(512) ratio(4) : tensor<3x5xf32>, tensor<3xi64> -> tensor<3x5xi32>
  %t5 = kf.indexer_topk %s3, %pos3 k(512) ratio(4) : tensor<3x5xf32>, tensor<3xi64> -> tensor<3x5xi32>
  return
}

// -----

// CHECK-LABEL: func.func @sparse_attention
func.func @sparse_attention(%q: tensor<?x64x512xf32>, %kv: tensor<?x512xf32>, %wi: tensor<?x128xi32>,
                            %e: tensor<?x512xf32>, %ei: tensor<?x?xi32>, %s: !kf.qweight<f32, [64]>) {
  // The ODS example: a window and compressed entries.
  // CHECK: kf.sparse_attention %arg0, %arg1[%arg2], %arg3[%arg4] sinks(%arg5) scale(0.0441941731) : tensor<?x64x512xf32>, !kf.qweight<f32, [64]>, tensor<?x512xf32>, tensor<?x128xi32>, tensor<?x512xf32>, tensor<?x?xi32> -> tensor<?x64x512xf32>
  %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.0441941731)
      : tensor<?x64x512xf32>, !kf.qweight<f32, [64]>, tensor<?x512xf32>, tensor<?x128xi32>,
        tensor<?x512xf32>, tensor<?x?xi32> -> tensor<?x64x512xf32>
  // A sliding-window layer: no entries.
  // CHECK: kf.sparse_attention %arg0, %arg1[%arg2] sinks(%arg5) scale(0.0441941731) : tensor<?x64x512xf32>, !kf.qweight<f32, [64]>, tensor<?x512xf32>, tensor<?x128xi32> -> tensor<?x64x512xf32>
  %w = kf.sparse_attention %q, %kv[%wi] sinks(%s) scale(0.0441941731)
      : tensor<?x64x512xf32>, !kf.qweight<f32, [64]>, tensor<?x512xf32>, tensor<?x128xi32> -> tensor<?x64x512xf32>
  return
}

// -----

// CHECK-LABEL: func.func @moe
func.func @moe(%l: tensor<?x256xf32>, %b: !kf.qweight<f32, [256]>, %tid2eid: !kf.qweight<i32, [129280, 6]>,
               %tokens: tensor<?xi32>, %x: tensor<?x4096xf32>, %ids: tensor<?x6xi32>, %w: tensor<?x6xf32>,
               %g: !kf.qweight<mxfp4, [256, 2048, 4096]>, %u: !kf.qweight<mxfp4, [256, 2048, 4096]>,
               %d: !kf.qweight<mxfp4, [256, 4096, 2048]>, %sg: !kf.qweight<q8_0, [2048, 4096]>,
               %su: !kf.qweight<q8_0, [2048, 4096]>, %sd: !kf.qweight<q8_0, [4096, 2048]>) {
  // The ODS examples.
  // CHECK: = kf.moe_gate %arg0 bias(%arg1 : !kf.qweight<f32, [256]>) k(6) route_scale(1.500000e+00) : tensor<?x256xf32> -> tensor<?x6xi32>, tensor<?x6xf32>
  %ids0, %w0 = kf.moe_gate %l bias(%b : !kf.qweight<f32, [256]>) k(6) route_scale(1.5)
      : tensor<?x256xf32> -> tensor<?x6xi32>, tensor<?x6xf32>
  // CHECK: = kf.moe_gate %arg0 hash(%arg2 : !kf.qweight<i32, [129280, 6]>[%arg3 : tensor<?xi32>]) k(6) route_scale(1.500000e+00) : tensor<?x256xf32> -> tensor<?x6xi32>, tensor<?x6xf32>
  %hid, %hw = kf.moe_gate %l hash(%tid2eid : !kf.qweight<i32, [129280, 6]>[%tokens : tensor<?xi32>]) k(6) route_scale(1.5)
      : tensor<?x256xf32> -> tensor<?x6xi32>, tensor<?x6xf32>
  // CHECK: kf.moe %arg4, %arg5, %arg6 experts(%arg7, %arg8, %arg9) shared(%arg10, %arg11, %arg12) limit(1.000000e+01) shared_limit(1.000000e+01) fp8_activations : tensor<?x4096xf32>, tensor<?x6xi32>, tensor<?x6xf32>, !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 4096, 2048]>, !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [4096, 2048]> -> tensor<?x4096xf32>
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0) fp8_activations
      : tensor<?x4096xf32>, tensor<?x6xi32>, tensor<?x6xf32>,
        !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 4096, 2048]>,
        !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [4096, 2048]> -> tensor<?x4096xf32>
  // Without fp8_activations (--no-sim), different limits.
  // CHECK: kf.moe %arg4, %arg5, %arg6 experts(%arg7, %arg8, %arg9) shared(%arg10, %arg11, %arg12) limit(1.000000e+01) shared_limit(7.500000e+00) : tensor<?x4096xf32>, tensor<?x6xi32>, tensor<?x6xf32>, !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 4096, 2048]>, !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [4096, 2048]> -> tensor<?x4096xf32>
  %n = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(7.5)
      : tensor<?x4096xf32>, tensor<?x6xi32>, tensor<?x6xf32>,
        !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 2048, 4096]>, !kf.qweight<mxfp4, [256, 4096, 2048]>,
        !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [2048, 4096]>, !kf.qweight<q8_0, [4096, 2048]> -> tensor<?x4096xf32>
  return
}

// -----

// CHECK-LABEL: func.func @argmax
func.func @argmax(%logits: tensor<1x32256xf32>, %v: tensor<?xf32>) {
  // The ODS example.
  // CHECK: kf.argmax %arg0 : tensor<1x32256xf32> -> tensor<1xi32>
  %tok = kf.argmax %logits : tensor<1x32256xf32> -> tensor<1xi32>
  // CHECK: kf.argmax %arg1 : tensor<?xf32> -> tensor<i32>
  %one = kf.argmax %v : tensor<?xf32> -> tensor<i32>
  return
}

// -----

// The kernel decisions, at every stage of the kernel passes.
// CHECK-LABEL: func.func @kernel_decisions
func.func @kernel_decisions(%x: tensor<17x4096xf32>, %w: !kf.qweight<q8_0, [2048, 4096]>,
                            %xd: tensor<?x256xf32>, %iq: !kf.qweight<iq2_xxs, [64, 256]>,
                            %o: tensor<?x256xf32>, %wo: !kf.qweight<bf16, [64, 128]>,
                            %iq1: !kf.qweight<iq1_m, [64, 256]>) {
  // The ODS example.
  // CHECK: kf.linear %arg0, %arg1 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = [8, 4, 3, 2], l2_rows = 128, l1_k = 2048>} : tensor<17x4096xf32>
  %a = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx512vnni,
      layout = q8_0_r16, max_cols = 8, threads = 16, cols = [8, 4, 3, 2],
      l2_rows = 128, l1_k = 2048>}
      : tensor<17x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<17x2048xf32>
  // Before --kf-tile-columns; fields in any order.
  // CHECK: {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 8, threads = 8>}
  %b = kf.linear %xd, %iq {kf.kernel = #kf.kernel<threads = 8, max_cols = 8, layout = iq2_xxs_r8, isa = avx2>}
      : tensor<?x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<?x64xf32>
  // Decoding each row block once; per_tile, the default, is not printed.
  // CHECK: {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = iq2_xxs_r4, max_cols = 4, threads = 64, cols = dynamic, l2_rows = 64, l1_k = 256, decode = once>}
  %c = kf.linear %xd, %iq {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = iq2_xxs_r4, max_cols = 4, threads = 64, cols = dynamic, l2_rows = 64, l1_k = 256, decode = once>}
      : tensor<?x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<?x64xf32>
  // CHECK: {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 8, threads = 8, l2_rows = 64>}
  %c2 = kf.linear %xd, %iq {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 8, threads = 8, l2_rows = 64, decode = per_tile>}
      : tensor<?x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<?x64xf32>
  // CHECK: kf.grouped_linear %arg4, %arg5 groups(2) {kf.kernel = #kf.kernel<isa = scalar, layout = bf16_r1, max_cols = 3, threads = 1, cols = dynamic, l2_rows = 32, l1_k = 128>}
  %d = kf.grouped_linear %o, %wo groups(2) {kf.kernel = #kf.kernel<isa = scalar, layout = bf16_r1, max_cols = 3, threads = 1, cols = dynamic, l2_rows = 32, l1_k = 128>}
      : tensor<?x256xf32>, !kf.qweight<bf16, [64, 128]> -> tensor<?x64xf32>
  // IQ1_M transcoded to the ternary layout.
  // CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_m_r16_ternary, max_cols = 8, threads = 2>}
  %e = kf.linear %xd, %iq1 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_m_r16_ternary, max_cols = 8, threads = 2>}
      : tensor<?x256xf32>, !kf.qweight<iq1_m, [64, 256]> -> tensor<?x64xf32>
  return
}

// -----

// A kf.moe holds one decision per weight stack. A single token's expert
// buckets hold at most that token: M = 1.
// CHECK-LABEL: func.func @moe_kernels
func.func @moe_kernels(%x: tensor<1x64xf32>, %ids: tensor<1x2xi32>, %w: tensor<1x2xf32>,
                       %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                       %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sg: !kf.qweight<q8_0, [32, 64]>,
                       %su: !kf.qweight<q8_0, [32, 64]>, %sd: !kf.qweight<q8_0, [64, 32]>) {
  // CHECK: kf.moe {{.*}} {kf.kernel = {down_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8, cols = [1]>, down_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8, cols = [1]>, gate_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8, cols = [1]>, gate_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8, cols = [1]>, up_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8, cols = [1]>, up_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8, cols = [1]>}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      {kf.kernel = {gate_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8, cols = [1]>,
                    up_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8, cols = [1]>,
                    down_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8, cols = [1]>,
                    gate_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8, cols = [1]>,
                    up_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8, cols = [1]>,
                    down_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8, cols = [1]>}}
      : tensor<1x64xf32>, tensor<1x2xi32>, tensor<1x2xf32>,
        !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
        !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<1x64xf32>
  return
}

// -----

// The kernel ops --kf-lower-quant-dot writes, calling kernels of the nested
// kernels module (declared here; the pass builds their bodies).
// CHECK-LABEL: func.func @kernel_ops
// CHECK: %[[X:.*]] = kf.quantize_activations @kernels::@quantize(%arg0) : tensor<?x64xf32> -> tensor<?x96xi8>
// CHECK: kf.qmatmul @kernels::@matmul(%[[X]], %arg1) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2, cols = dynamic>} : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
// CHECK: kf.qmatmul @kernels::@matmul(%[[X]], %arg1) precision(f32) {kf.kernel
// CHECK: kf.qmatmul @kernels::@matmul(%[[X]], %arg1) row_offset(8) {kf.kernel{{.*}} -> tensor<?x8xf32>
module {
  func.func @kernel_ops(%x: tensor<?x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
    %xq = kf.quantize_activations @kernels::@quantize(%x) : tensor<?x64xf32> -> tensor<?x96xi8>
    %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
    %z = kf.qmatmul @kernels::@matmul(%xq, %w) precision(f32) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
    %g = kf.qmatmul @kernels::@matmul(%xq, %w) row_offset(8) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x8xf32>
    return %y, %z : tensor<?x16xf32>, tensor<?x16xf32>
  }
  // CHECK-LABEL: func.func @kquant_ops
  // CHECK: %[[XK:.*]] = kf.quantize_activations @kernels::@quantize(%arg0) format(q8_k) : tensor<?x512xf32> -> tensor<?x584xi8>
  // CHECK: kf.qmatmul @kernels::@matmul(%[[XK]], %arg1) {kf.kernel = #kf.kernel<isa = avx2, layout = q4_k_r8, max_cols = 8, threads = 2, cols = dynamic>} : tensor<?x584xi8>, !kf.qweight<q4_k, [16, 512]> -> tensor<?x16xf32>
  func.func @kquant_ops(%x: tensor<?x512xf32>, %w: !kf.qweight<q4_k, [16, 512]>) -> tensor<?x16xf32> {
    %xq = kf.quantize_activations @kernels::@quantize(%x) format(q8_k) : tensor<?x512xf32> -> tensor<?x584xi8>
    %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q4_k_r8, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x584xi8>, !kf.qweight<q4_k, [16, 512]> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
  // The float formats: bf16 activations in 64-byte blocks of 32, the last
  // padded (K = 100: 4 blocks), for vdpbf16ps.
  // CHECK-LABEL: func.func @float_ops
  // CHECK: %[[XB:.*]] = kf.quantize_activations @kernels::@quantize(%arg0) format(bf16) : tensor<?x100xf32> -> tensor<?x256xi8>
  // CHECK: kf.qmatmul @kernels::@matmul(%[[XB]], %arg1) {kf.kernel = #kf.kernel<isa = avx512bf16, layout = bf16_r16, max_cols = 8, threads = 2, cols = dynamic>} : tensor<?x256xi8>, !kf.qweight<bf16, [16, 100]> -> tensor<?x16xf32>
  func.func @float_ops(%x: tensor<?x100xf32>, %w: !kf.qweight<bf16, [16, 100]>) -> tensor<?x16xf32> {
    %xq = kf.quantize_activations @kernels::@quantize(%x) format(bf16) : tensor<?x100xf32> -> tensor<?x256xi8>
    %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx512bf16, layout = bf16_r16, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x256xi8>, !kf.qweight<bf16, [16, 100]> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
  // A kernel that quantizes its activations takes them as fp32.
  // CHECK-LABEL: func.func @fused_ops
  // CHECK: kf.qmatmul @kernels::@matmul(%arg0, %arg1) {kf.kernel = #kf.kernel<isa = avx2, layout = q4_k_r8, max_cols = 8, threads = 2, cols = [1], quantize = fused>} : tensor<1x512xf32>, !kf.qweight<q4_k, [16, 512]> -> tensor<1x16xf32>
  // CHECK: kf.expert_qmatmul @kernels::@matmul(%arg2, %arg3, %arg4) {kf.kernel = #kf.kernel<{{.*}}quantize = fused>} : tensor<1x2x64xf32>, tensor<1x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<1x2x32xf32>
  // CHECK: module @kernels
  func.func @fused_ops(%x: tensor<1x512xf32>, %w: !kf.qweight<q4_k, [16, 512]>, %h: tensor<1x2x64xf32>,
                       %ids: tensor<1x2xi32>, %e: !kf.qweight<mxfp4, [4, 32, 64]>) -> (tensor<1x16xf32>, tensor<1x2x32xf32>) {
    %y = kf.qmatmul @kernels::@matmul(%x, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q4_k_r8, max_cols = 8, threads = 2, cols = [1], quantize = fused>}
        : tensor<1x512xf32>, !kf.qweight<q4_k, [16, 512]> -> tensor<1x16xf32>
    %z = kf.expert_qmatmul @kernels::@matmul(%h, %ids, %e) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2, cols = [1], quantize = fused>}
        : tensor<1x2x64xf32>, tensor<1x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<1x2x32xf32>
    return %y, %z : tensor<1x16xf32>, tensor<1x2x32xf32>
  }
  module @kernels {
    func.func private @quantize(!llvm.ptr, i64, !llvm.ptr, i64)
    func.func private @matmul(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
  }
}

// -----

// The ops a kf.moe is lowered to: per-slot quantized activations, expert
// matmuls over the routing, the weighted SwiGLU and the combination.
// CHECK-LABEL: func.func @expert_ops
// CHECK: %[[XQ:.*]] = kf.quantize_activations @kernels::@quantize(%arg0) : tensor<?x64xf32> -> tensor<?x96xi8>
// CHECK: %[[G:.*]] = kf.expert_qmatmul @kernels::@gate(%[[XQ]], %arg1, %arg3) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2, cols = dynamic>} : tensor<?x96xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<?x2x32xf32>
// CHECK: %[[H:.*]] = kf.swiglu %[[G]], %[[G]] weights(%arg2 : tensor<?x2xf32>) limit(1.000000e+01) : tensor<?x2x32xf32>
// CHECK: kf.swiglu %{{.*}}, %{{.*}} limit(7.500000e+00) : tensor<?x16xf32>
// CHECK: %[[HQ:.*]] = kf.quantize_activations @kernels::@quantize_h(%[[H]]) : tensor<?x2x32xf32> -> tensor<?x2x48xi8>
// CHECK: %[[D:.*]] = kf.expert_qmatmul @kernels::@down(%[[HQ]], %arg1, %arg4) precision(f32) {kf.kernel = {{.*}}} : tensor<?x2x48xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 64, 32]> -> tensor<?x2x64xf32>
// CHECK: kf.moe_combine %[[D]], %{{.*}} : tensor<?x2x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
module {
  func.func @expert_ops(%x: tensor<?x64xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                        %gate: !kf.qweight<mxfp4, [4, 32, 64]>, %down: !kf.qweight<mxfp4, [4, 64, 32]>,
                        %sg: tensor<?x16xf32>, %shared: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %xq = kf.quantize_activations @kernels::@quantize(%x) : tensor<?x64xf32> -> tensor<?x96xi8>
    %g = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %gate) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x96xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<?x2x32xf32>
    %h = kf.swiglu %g, %g weights(%w : tensor<?x2xf32>) limit(10.0) : tensor<?x2x32xf32>
    %s = kf.swiglu %sg, %sg limit(7.5) : tensor<?x16xf32>
    %hq = kf.quantize_activations @kernels::@quantize_h(%h) : tensor<?x2x32xf32> -> tensor<?x2x48xi8>
    %d = kf.expert_qmatmul @kernels::@down(%hq, %ids, %down) precision(f32) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2, cols = dynamic>}
        : tensor<?x2x48xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 64, 32]> -> tensor<?x2x64xf32>
    %y = kf.moe_combine %d, %shared : tensor<?x2x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
  module @kernels {
    func.func private @quantize(!llvm.ptr, i64, !llvm.ptr, i64)
    func.func private @quantize_h(!llvm.ptr, i64, !llvm.ptr, i64)
    func.func private @gate(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
    func.func private @down(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64)
  }
}

// -----

// A step calling a step kernel of the nested kernels module: items per token
// row, inputs read whole.
// CHECK-LABEL: func.func @step_ops
// CHECK: %[[Y:.*]] = kf.step @kernels::@norm(%arg0, %arg1) items(1) : (tensor<?x64xf32>, !kf.qweight<f32, [64]>) -> tensor<?x64xf32>
// CHECK: kf.step @kernels::@heads(%arg2, %[[Y]]) items(4) whole [1] : (tensor<?x4x16xf32>, tensor<?x64xf32>) -> tensor<?x4x16xf32>
module {
  func.func @step_ops(%x: tensor<?x64xf32>, %w: !kf.qweight<f32, [64]>, %h: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
    %y = kf.step @kernels::@norm(%x, %w) items(1) : (tensor<?x64xf32>, !kf.qweight<f32, [64]>) -> tensor<?x64xf32>
    %z = kf.step @kernels::@heads(%h, %y) items(4) whole [1] : (tensor<?x4x16xf32>, tensor<?x64xf32>) -> tensor<?x4x16xf32>
    return %z : tensor<?x4x16xf32>
  }
  module @kernels {
    func.func private @norm(!llvm.ptr, i64, i64, i64)
    func.func private @heads(!llvm.ptr, i64, i64, i64)
  }
}
