// RUN: kf-opt %s --split-input-file --kf-lower-ops | FileCheck %s

// The target is written out: the lowering reads the module's, nothing of
// the machine running the test.

// A weighted norm, one item per token row, and the weightless per-head bf16
// scaling of a [T, H, D] input, H items per token row; two norms of one
// instance share one kernel.
// CHECK-LABEL: func.func @norms
// CHECK:      %[[A:.*]] = kf.step @kernels::@kf_rms_norm_d64_w_e358637bd(%arg0, %arg1) items(1) : (tensor<?x64xf32>, !kf.qweight<f32, [64]>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[B:.*]] = kf.step @kernels::@kf_rms_norm_d64_w_e358637bd(%[[A]], %arg1) items(1)
// CHECK-NEXT: %[[C:.*]] = kf.step @kernels::@kf_rms_norm_d32_nw_e358637bd_bf16(%arg2) items(4) : (tensor<?x4x32xf32>) -> tensor<?x4x32xf32>
// CHECK-NEXT: return %[[B]], %[[C]]
// CHECK:      module @kernels {
// CHECK:        func.func @kf_rms_norm_d64_w_e358637bd(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME:     target_cpu = "x86-64-v3"
// The sum of squares in fp64, 16 lanes.
// CHECK:          arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
// CHECK:          vector.reduction <add>, %{{.*}} : vector<16xf64> into f64
// CHECK:          llvm.intr.sqrt
// CHECK:        func.func @kf_rms_norm_d32_nw_e358637bd_bf16(
// CHECK-NOT:    func.func
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @norms(%x: tensor<?x64xf32>, %w: !kf.qweight<f32, [64]>, %h: tensor<?x4x32xf32>) -> (tensor<?x64xf32>, tensor<?x4x32xf32>) {
    %a = kf.rms_norm %x, %w eps(1.0e-06) : tensor<?x64xf32>, !kf.qweight<f32, [64]>
    %b = kf.rms_norm %a, %w eps(1.0e-06) : tensor<?x64xf32>, !kf.qweight<f32, [64]>
    %c = kf.rms_norm %h eps(1.0e-06) compute(bf16) : tensor<?x4x32xf32>
    return %b, %c : tensor<?x64xf32>, tensor<?x4x32xf32>
  }
}

// -----

// The other op kernels, one innermost row per item: the simulations (a
// leading span named apart), the routed SwiGLU with its weight per row (k
// items per token row), the transform.
// CHECK-LABEL: func.func @ops
// CHECK:      kf.step @kernels::@kf_fp8_sim_n256_b128(%arg0) items(1) : (tensor<?x256xf32>) -> tensor<?x256xf32>
// CHECK-NEXT: kf.step @kernels::@kf_fp8_sim_n192_b64_l128(%arg1) items(1)
// CHECK-NEXT: kf.step @kernels::@kf_swiglu_f128_w_l40000000(%arg2, %arg3, %arg4) items(4) : (tensor<?x4x128xf32>, tensor<?x4x128xf32>, tensor<?x4xf32>) -> tensor<?x4x128xf32>
// CHECK-NEXT: %[[R:.*]] = kf.step @kernels::@kf_hadamard_n128(%arg5) items(8)
// CHECK-NEXT: kf.step @kernels::@kf_fp4_sim_n128_b32(%[[R]]) items(8)
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @ops(%x: tensor<?x256xf32>, %kv: tensor<?x192xf32>, %g: tensor<?x4x128xf32>, %u: tensor<?x4x128xf32>, %w: tensor<?x4xf32>, %q: tensor<?x8x128xf32>) -> (tensor<?x256xf32>, tensor<?x192xf32>, tensor<?x4x128xf32>, tensor<?x8x128xf32>) {
    %a = kf.fp8_sim %x block(128) : tensor<?x256xf32>
    %b = kf.fp8_sim %kv block(64) leading(128) : tensor<?x192xf32>
    %h = kf.swiglu %g, %u weights(%w : tensor<?x4xf32>) limit(2.0) : tensor<?x4x128xf32>
    %r = kf.hadamard %q : tensor<?x8x128xf32>
    %f = kf.fp4_sim %r block(32) : tensor<?x8x128xf32>
    return %a, %b, %h, %f : tensor<?x256xf32>, tensor<?x192xf32>, tensor<?x4x128xf32>, tensor<?x8x128xf32>
  }
}

// -----

// The rope, H items per token row, its positions read whole (operand 1):
// the window layers' frequencies and the compressed layers' YaRN ones, each
// a constant table of the kernels that share it; the inverse named apart.
// CHECK-LABEL: func.func @ropes
// CHECK:      %[[Q:.*]] = kf.step @kernels::@kf_rope_d192_r64_h8_f[[WINDOW:[0-9a-f]+]](%arg0, %arg2) items(8) whole [1] : (tensor<?x8x192xf32>, tensor<?xi64>) -> tensor<?x8x192xf32>
// CHECK-NEXT: %[[K:.*]] = kf.step @kernels::@kf_rope_d192_r64_h1_f[[WINDOW]](%arg1, %arg2) items(1) whole [1] : (tensor<?x192xf32>, tensor<?xi64>) -> tensor<?x192xf32>
// CHECK-NEXT: %[[O:.*]] = kf.step @kernels::@kf_rope_d192_r64_h8_f[[WINDOW]]_inv(%[[Q]], %arg2) items(8) whole [1]
// CHECK-NEXT: %[[Y:.*]] = kf.step @kernels::@kf_rope_d512_r64_h8_f[[YARN:[0-9a-f]+]](%arg3, %arg2) items(8) whole [1]
// CHECK-NEXT: return %[[K]], %[[O]], %[[Y]]
// CHECK:      module @kernels {
// CHECK-DAG:    llvm.mlir.global internal constant @kf_rope_freqs_r64_f[[WINDOW]]({{.*}}) {{.*}} : !llvm.array<16 x i64>
// CHECK-DAG:    llvm.mlir.global internal constant @kf_rope_freqs_r64_f[[YARN]]({{.*}}) {{.*}} : !llvm.array<16 x i64>
// CHECK:        func.func @kf_rope_d192_r64_h8_f[[WINDOW]](%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// The angle in fp32, sin and cos in fp64, 8 angles to a vector.
// CHECK:          arith.sitofp %{{.*}} : i64 to f32
// CHECK:          arith.mulf %{{.*}} : vector<8xf32>
// CHECK:          arith.extf %{{.*}} : vector<8xf32> to vector<8xf64>
// CHECK:          arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
// CHECK-NOT:      func.call
// CHECK:        func.func @kf_rope_d192_r64_h1_f[[WINDOW]](
// CHECK:        func.func @kf_rope_d192_r64_h8_f[[WINDOW]]_inv(
// CHECK:        func.func @kf_rope_d512_r64_h8_f[[YARN]](
// CHECK-NOT:    func.func
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @ropes(%q: tensor<?x8x192xf32>, %kv: tensor<?x192xf32>, %p: tensor<?xi64>, %c: tensor<?x8x512xf32>) -> (tensor<?x192xf32>, tensor<?x8x192xf32>, tensor<?x8x512xf32>) {
    %a = kf.rope %q, %p, <dim = 64, base = 1.000000e+04> : tensor<?x8x192xf32>, tensor<?xi64>
    %k = kf.rope %kv, %p, <dim = 64, base = 1.000000e+04> : tensor<?x192xf32>, tensor<?xi64>
    %o = kf.rope %a, %p, <dim = 64, base = 1.000000e+04> inverse : tensor<?x8x192xf32>, tensor<?xi64>
    %y = kf.rope %c, %p, <dim = 64, base = 1.600000e+05, yarn_factor = 1.600000e+01, beta_fast = 3.200000e+01, beta_slow = 1.000000e+00, original_context = 65536> : tensor<?x8x512xf32>, tensor<?xi64>
    return %k, %o, %y : tensor<?x192xf32>, tensor<?x8x192xf32>, tensor<?x8x512xf32>
  }
}

// -----

// The hyper-connection ops, one token per item: the streams are mixed per
// token (hc_pre's three results from one kernel).
// CHECK-LABEL: func.func @hc
// CHECK:      %[[S:.*]] = kf.step @kernels::@kf_hc_expand_m4_d64(%arg0) items(1) : (tensor<?x64xf32>) -> tensor<?x4x64xf32>
// CHECK-NEXT: %[[P:.*]]:3 = kf.step @kernels::@kf_hc_pre_m4_d64_s20_e358637bd_n358637bd(%[[S]], %arg1, %arg2, %arg3) items(1)
// CHECK-SAME:   -> (tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>)
// CHECK-NEXT: %[[N:.*]] = kf.step @kernels::@kf_hc_post_m4_d64(%[[P]]#0, %[[S]], %[[P]]#1, %[[P]]#2) items(1)
// CHECK-NEXT: kf.step @kernels::@kf_hc_head_m4_d64_e358637bd_n358637bd(%[[N]], %arg4, %arg5, %arg6) items(1)
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @hc(%x: tensor<?x64xf32>, %fn: !kf.qweight<f32, [24, 256]>, %base: !kf.qweight<f32, [24]>, %scale: !kf.qweight<f32, [3]>, %hfn: !kf.qweight<f32, [4, 256]>, %hbase: !kf.qweight<f32, [4]>, %hscale: !kf.qweight<f32, [1]>) -> (tensor<?x4x64xf32>, tensor<?x64xf32>) {
    %s = kf.hc_expand %x : tensor<?x64xf32> -> tensor<?x4x64xf32>
    %h, %post, %comb = kf.hc_pre %s, %fn, %base, %scale sinkhorn(20) eps(1.0e-06) norm_eps(1.0e-06) : tensor<?x4x64xf32>, !kf.qweight<f32, [24, 256]>, !kf.qweight<f32, [24]>, !kf.qweight<f32, [3]> -> tensor<?x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32>
    %n = kf.hc_post %h, %s, %post, %comb : tensor<?x64xf32>, tensor<?x4x64xf32>, tensor<?x4xf32>, tensor<?x4x4xf32> -> tensor<?x4x64xf32>
    %y = kf.hc_head %n, %hfn, %hbase, %hscale eps(1.0e-06) norm_eps(1.0e-06) : tensor<?x4x64xf32>, !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [4]>, !kf.qweight<f32, [1]> -> tensor<?x64xf32>
    return %n, %y : tensor<?x4x64xf32>, tensor<?x64xf32>
  }
}

// -----

// The embedding and the MoE combine, one token per item (the ids, one i32
// per token, read item by item; the table a weight read as stored), and
// the argmax, one innermost row per item: H of them per token row of a
// [T, H, V] input, whose result is [T, H].
// CHECK-LABEL: func.func @tokens
// CHECK:      %[[E:.*]] = kf.step @kernels::@kf_embed_q8_0_v1000_d64(%arg0, %arg1) items(1) : (tensor<?xi32>, !kf.qweight<q8_0, [1000, 64]>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[C:.*]] = kf.step @kernels::@kf_moe_combine_k4_d64(%arg2, %[[E]]) items(1) : (tensor<?x4x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[A:.*]] = kf.step @kernels::@kf_argmax_v100(%arg3) items(1) : (tensor<?x100xf32>) -> tensor<?xi32>
// CHECK-NEXT: %[[H:.*]] = kf.step @kernels::@kf_argmax_v100(%arg4) items(3) : (tensor<?x3x100xf32>) -> tensor<?x3xi32>
// CHECK-NEXT: kf.step @kernels::@kf_embed_bf16_v1000_d64(%arg0, %arg5) items(1)
// CHECK-NEXT: return %[[C]], %[[A]], %[[H]]
// CHECK:      module @kernels {
// CHECK:        func.func @kf_embed_q8_0_v1000_d64(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// An id is compared unsigned, as an i64, against V: a negative one is out
// of range too.
// CHECK:          arith.extsi %{{.*}} : i32 to i64
// CHECK:          arith.cmpi ult, %{{.*}}, %{{.*}} : i64
// CHECK:          arith.sitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// CHECK:        func.func @kf_moe_combine_k4_d64(
// The slots summed in fp64, then rounded to fp32.
// CHECK:          arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
// CHECK:          arith.addf %{{.*}} : vector<16xf64>
// CHECK:          arith.truncf %{{.*}} : vector<16xf64> to vector<16xf32>
// CHECK:        func.func @kf_argmax_v100(
// CHECK:          arith.cmpf ogt, %{{.*}} : vector<16xf32>
// CHECK:          vector.reduction <maxnumf>, %{{.*}} : vector<16xf32> into f32
// CHECK:          vector.reduction <minsi>, %{{.*}} : vector<16xi32> into i32
// CHECK:        func.func @kf_embed_bf16_v1000_d64(
// CHECK-NOT:    func.func
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @tokens(%ids: tensor<?xi32>, %table: !kf.qweight<q8_0, [1000, 64]>, %routed: tensor<?x4x64xf32>, %logits: tensor<?x100xf32>, %heads: tensor<?x3x100xf32>, %table16: !kf.qweight<bf16, [1000, 64]>) -> (tensor<?x64xf32>, tensor<?xi32>, tensor<?x3xi32>, tensor<?x64xf32>) {
    %x = kf.embed %ids, %table : tensor<?xi32>, !kf.qweight<q8_0, [1000, 64]> -> tensor<?x64xf32>
    %y = kf.moe_combine %routed, %x : tensor<?x4x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
    %a = kf.argmax %logits : tensor<?x100xf32> -> tensor<?xi32>
    %h = kf.argmax %heads : tensor<?x3x100xf32> -> tensor<?x3xi32>
    %z = kf.embed %ids, %table16 : tensor<?xi32>, !kf.qweight<bf16, [1000, 64]> -> tensor<?x64xf32>
    return %y, %a, %h, %z : tensor<?x64xf32>, tensor<?xi32>, tensor<?x3xi32>, tensor<?x64xf32>
  }
}

// -----

// The MoE gate, one token per item: the logits, then the bias (learned) or
// the table and the token ids (hash, one i32 per token read item by item),
// then the ids and the weights. Two gates of one instance share a kernel.
// CHECK-LABEL: func.func @gate
// CHECK:      %[[I:.*]]:2 = kf.step @kernels::@kf_moe_gate_e16_k4_s3fc00000(%arg0, %arg1) items(1) : (tensor<?x16xf32>, !kf.qweight<f32, [16]>) -> (tensor<?x4xi32>, tensor<?x4xf32>)
// CHECK-NEXT: %[[H:.*]]:2 = kf.step @kernels::@kf_moe_gate_hash_v1000_e16_k4_s3fc00000(%arg0, %arg2, %arg3) items(1) : (tensor<?x16xf32>, !kf.qweight<i32, [1000, 4]>, tensor<?xi32>) -> (tensor<?x4xi32>, tensor<?x4xf32>)
// CHECK-NEXT: kf.step @kernels::@kf_moe_gate_e16_k4_s3fc00000(%arg0, %arg1) items(1)
// CHECK:      module @kernels {
// CHECK:        func.func @kf_moe_gate_e16_k4_s3fc00000(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// The scores in fp64: sqrt(softplus) rounded to fp32.
// CHECK:          llvm.intr.sqrt(%{{.*}}) : (vector<16xf64>) -> vector<16xf64>
// CHECK:          arith.truncf %{{.*}} : vector<16xf64> to vector<16xf32>
// CHECK:        func.func @kf_moe_gate_hash_v1000_e16_k4_s3fc00000(
// A token id is compared unsigned, as an i64, against V.
// CHECK:          arith.extsi %{{.*}} : i32 to i64
// CHECK:          arith.cmpi ult, %{{.*}}, %{{.*}} : i64
// CHECK-NOT:    func.func
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @gate(%l: tensor<?x16xf32>, %b: !kf.qweight<f32, [16]>, %tid2eid: !kf.qweight<i32, [1000, 4]>, %tokens: tensor<?xi32>) -> (tensor<?x4xi32>, tensor<?x4xf32>, tensor<?x4xi32>, tensor<?x4xf32>, tensor<?x4xf32>) {
    %ids, %w = kf.moe_gate %l bias(%b : !kf.qweight<f32, [16]>) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
    %hids, %hw = kf.moe_gate %l hash(%tid2eid : !kf.qweight<i32, [1000, 4]>[%tokens : tensor<?xi32>]) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
    %ids2, %w2 = kf.moe_gate %l bias(%b : !kf.qweight<f32, [16]>) k(4) route_scale(1.5) : tensor<?x16xf32> -> tensor<?x4xi32>, tensor<?x4xf32>
    return %ids, %w, %hids, %hw, %w2 : tensor<?x4xi32>, tensor<?x4xf32>, tensor<?x4xi32>, tensor<?x4xf32>, tensor<?x4xf32>
  }
}

// -----

// Ops without an emitter stay: a linear is --kf-lower-quant-dot's.
// CHECK-LABEL: func.func @no_emitter
// CHECK: kf.linear
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @no_emitter(%x: tensor<?x64xf32>, %w: !kf.qweight<q5_0, [32, 64]>) -> tensor<?x32xf32> {
    %y = kf.linear %x, %w : tensor<?x64xf32>, !kf.qweight<q5_0, [32, 64]> -> tensor<?x32xf32>
    return %y : tensor<?x32xf32>
  }
}

// -----

// The caches and the attention's index ops of a decode step, bounded to
// 1024 tokens: the reset costs nothing (every cache is addressed by
// position); the append writes its row, the compressor's entries kernel
// reads every token's projections and the state kernel keeps its own;
// the scores take the positions and ratio of the top-k that reads them and
// do a block of 64 of the 256 entries per item.
// CHECK-LABEL: func.func @decode
// CHECK-NOT: kf.cache_reset
// CHECK: kf.step @kernels::@kf_cache_append_r16_d64_bf16(%arg0, %arg3, %0) items(1) : (tensor<1x64xf32>, tensor<1xi64>, !kf.window_cache<rows = 16, dim = 64, element = bf16>) -> ()
// CHECK: kf.step @kernels::@kf_window_indices_w16_r16(%arg3) items(1) whole [0]
// CHECK: kf.step @kernels::@kf_compress_entries_r4_o_d128_rd64_{{.*}}_fp8_bf16_c256(%arg1, %arg2, %arg3, %arg6, %arg7, %1) items(1) whole [0, 1, 2]
// CHECK: kf.step @kernels::@kf_compress_state_r4_o_w256_c256(%arg1, %arg2, %arg3, %1) items(1) whole [2]
// CHECK: %[[E:.*]] = kf.cache_read %1
// CHECK: %[[S:.*]] = kf.step @kernels::@kf_indexer_scores_h2_d128_e256_r4_b64_{{.*}}(%arg4, %arg5, %[[E]], %arg3) items(4) whole [0, 1, 2, 3]
// CHECK: kf.step @kernels::@kf_indexer_topk_e256_k8_r4(%[[S]], %arg3) items(1) whole [1]
// CHECK: %[[H:.*]] = kf.cache_read %2
// CHECK: kf.step @kernels::@kf_visible_entries_e64_r16(%arg3, %[[H]]) items(1) whole [0, 1]
module attributes {kf.max_context = 1024 : i64, kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.cache @kv : !kf.window_cache<rows = 16, dim = 64, element = bf16>
  kf.cache @c : !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>
  kf.cache @h : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
  func.func @decode(%kvrow: tensor<1x64xf32>, %v: tensor<1x256xf32>, %g: tensor<1x256xf32>, %pos: tensor<1xi64>,
                    %q: tensor<1x2x128xf32>, %w: tensor<1x2xf32>,
                    %ape: !kf.qweight<f32, [4, 256]>, %norm: !kf.qweight<f32, [128]>)
      -> (tensor<1x16xi32>, tensor<1x8xi32>, tensor<1x64xi32>) {
    %kv = kf.get_cache @kv : !kf.window_cache<rows = 16, dim = 64, element = bf16>
    %c = kf.get_cache @c : !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>
    %h = kf.get_cache @h : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
    kf.cache_reset %kv at %pos : !kf.window_cache<rows = 16, dim = 64, element = bf16>, tensor<1xi64>
    kf.cache_append %kv, %kvrow, %pos : !kf.window_cache<rows = 16, dim = 64, element = bf16>, tensor<1x64xf32>, tensor<1xi64>
    %wi = kf.window_indices %pos window(16) ring(16) : tensor<1xi64> -> tensor<1x16xi32>
    kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 64, base = 1.000000e+04> post(fp8) eps(1.0e-06)
        : tensor<1x256xf32>, tensor<1x256xf32>, tensor<1xi64>, !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>,
          !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [128]>
    %e = kf.cache_read %c : !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16> -> tensor<256x128xf32>
    %s = kf.indexer_scores %q, %w, %e scale(0.125) : tensor<1x2x128xf32>, tensor<1x2xf32>, tensor<256x128xf32> -> tensor<1x256xf32>
    %picks = kf.indexer_topk %s, %pos k(8) ratio(4) : tensor<1x256xf32>, tensor<1xi64> -> tensor<1x8xi32>
    %he = kf.cache_read %h : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16> -> tensor<64x64xf32>
    %vis = kf.visible_entries %pos, %he ratio(16) : tensor<1xi64>, tensor<64x64xf32> -> tensor<1x64xi32>
    return %wi, %picks, %vis : tensor<1x16xi32>, tensor<1x8xi32>, tensor<1x64xi32>
  }
}

// -----

// Attention: an item is a group of four of a token's eight heads, which
// reads any row of the bank and the token's indices; without entries, the
// window's alone.
// CHECK-LABEL: func.func @attention
// CHECK: kf.step @kernels::@kf_sparse_attention_h8_d64_w16_e8_g4_s3e000000(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) items(2) whole [1, 2, 3, 4]
// CHECK: kf.step @kernels::@kf_sparse_attention_h8_d64_w16_e0_g4_s3e000000(%arg0, %arg1, %arg2, %arg5) items(2) whole [1, 2]
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @attention(%q: tensor<?x8x64xf32>, %kv: tensor<?x64xf32>, %wi: tensor<?x16xi32>, %e: tensor<256x64xf32>,
                       %ei: tensor<?x8xi32>, %s: !kf.qweight<f32, [8]>) -> (tensor<?x8x64xf32>, tensor<?x8x64xf32>) {
    %o = kf.sparse_attention %q, %kv[%wi], %e[%ei] sinks(%s) scale(0.125)
        : tensor<?x8x64xf32>, !kf.qweight<f32, [8]>, tensor<?x64xf32>, tensor<?x16xi32>, tensor<256x64xf32>, tensor<?x8xi32> -> tensor<?x8x64xf32>
    %w = kf.sparse_attention %q, %kv[%wi] sinks(%s) scale(0.125)
        : tensor<?x8x64xf32>, !kf.qweight<f32, [8]>, tensor<?x64xf32>, tensor<?x16xi32> -> tensor<?x8x64xf32>
    return %o, %w : tensor<?x8x64xf32>, tensor<?x8x64xf32>
  }
}
