// RUN: kf-opt %s --split-input-file --kf-select-kernels --kf-tile-columns --kf-block-caches --kf-lower-quant-dot --kf-lower-ops --kf-build-plan=max-rows=16 | FileCheck %s

// The target is written out: the plan depends on the module's, nothing of
// the machine running the test.

// norm -> linear -> weighted norm -> linear. The argument and the result
// are run buffers, the weights packed to their matmuls' layouts or kept as
// stored (the norm's); the first norm and its quantizer share rows (no
// barrier between them), each matmul reads every thread's packed rows and
// the norm after it every thread's columns (barriers); the second
// quantizer's output reuses no range read since the last barrier, so it
// needs none either. The arena is sized for 16 rows: the first norm's
// output (16 x 512 bytes) at 0, reused by the second's once a barrier has
// passed.
// CHECK-LABEL: kf_plan.plan @layer max_rows(16) arena(15360) {
// CHECK-NEXT:    kf_plan.buffer "arg0" bytes(0 + 512)
// CHECK-NEXT:    kf_plan.buffer "result0" bytes(0 + 128) output
// CHECK-NEXT:    kf_plan.weight "arg1" layout("q4_0_r8") : !kf.qweight<q4_0, [32, 64]>
// CHECK-NEXT:    kf_plan.weight "wq" layout("q8_0_r8") : !kf.qweight<q8_0, [64, 128]>
// CHECK-NEXT:    kf_plan.weight "g" : !kf.qweight<f32, [64]>
// CHECK-NEXT:    kf_plan.step "{{.*}}" @kernels::@kf_rms_norm_d128_nw_e358637bd items(0 + 1) blocks(1) [
// CHECK-SAME:      <kind = input, index = 0, offset = 0, fixed = 0, per_row = 512>
// CHECK-SAME:      <kind = arena, index = 0, offset = 0, fixed = 0, per_row = 512>]
// CHECK-NEXT:    kf_plan.step "{{.*}}" @kernels::@kf_quantize_q8_0_k128_step items(0 + 1) blocks(1) [
// CHECK-SAME:      <kind = arena, index = 0, offset = 0, fixed = 0, per_row = 512>
// CHECK-SAME:      <kind = arena, index = 0, offset = 8192, fixed = 0, per_row = 192>]
// CHECK-NEXT:    kf_plan.step "{{.*}}" @kernels::@kf_matmul_q8_0_avx2_r8_c8_k128_n64_bf16_l1k128_l2r16_step_ldy64 items(64 + 0) blocks(8) barrier [
// CHECK-SAME:      <kind = weight, index = 1, offset = 0, fixed = 8704, per_row = 0>
// CHECK-SAME:      <kind = arena, index = 0, offset = 8192, fixed = 0, per_row = 192>
// CHECK-SAME:      <kind = arena, index = 0, offset = 11264, fixed = 0, per_row = 256>]
// CHECK-NEXT:    kf_plan.step "{{.*}}" @kernels::@kf_rms_norm_d64_w_e358637bd items(0 + 1) blocks(1) barrier [
// CHECK-SAME:      <kind = weight, index = 2, offset = 0, fixed = 256, per_row = 0>
// CHECK-SAME:      <kind = arena, index = 0, offset = 0, fixed = 0, per_row = 256>]
// CHECK-NEXT:    kf_plan.step "{{.*}}" @kernels::@kf_quantize_q8_0_k64_step items(0 + 1) blocks(1) [
// CHECK-NEXT:    kf_plan.step "{{.*}}" @kernels::@kf_matmul_q4_0_avx2_r8_c8_k64_n32_bf16_l1k64_l2r8_step_ldy32 items(32 + 0) blocks(8) barrier [
// CHECK-SAME:      <kind = input, index = 1, offset = 0, fixed = 0, per_row = 128>]
// CHECK-NEXT:  }
// The step adapters call the kernels they wrap.
// CHECK:       module @kernels
// CHECK:         func.func @kf_quantize_q8_0_k128_step(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK:           call @kf_quantize_q8_0_k128(
// CHECK:         func.func @kf_matmul_q8_0_avx2_r8_c8_k128_n64_bf16_l1k128_l2r16_step_ldy64(
// CHECK:           call @kf_matmul_q8_0_avx2_r8_c8_k128_n64_bf16_l1k128_l2r16(
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @wq : !kf.qweight<q8_0, [64, 128]>
  kf.weight @g : !kf.qweight<f32, [64]>
  func.func @layer(%x: tensor<?x128xf32>, %w: !kf.qweight<q4_0, [32, 64]>) -> tensor<?x32xf32> {
    %wq = kf.get_weight @wq : !kf.qweight<q8_0, [64, 128]>
    %g = kf.get_weight @g : !kf.qweight<f32, [64]>
    %h = kf.rms_norm %x eps(1.0e-06) : tensor<?x128xf32>
    %a = kf.linear %h, %wq : tensor<?x128xf32>, !kf.qweight<q8_0, [64, 128]> -> tensor<?x64xf32>
    %n = kf.rms_norm %a, %g eps(1.0e-06) : tensor<?x64xf32>, !kf.qweight<f32, [64]>
    %y = kf.linear %n, %w : tensor<?x64xf32>, !kf.qweight<q4_0, [32, 64]> -> tensor<?x32xf32>
    return %y : tensor<?x32xf32>
  }
}

// -----

// A matmul's output rows are claimed in batches of about 1 MiB of packed
// weight, whole row groups of its layout, where it has 4 batches or more:
// Q8_0 rows of 4096 in groups of 8 are 34816 bytes, 30 groups 240 rows (of
// 512 groups); a smaller matrix is a block a thread (above). Its first
// step reads only run buffers: no barrier.
// CHECK-LABEL: kf_plan.plan @wide
// CHECK:         kf_plan.step "{{.*}}" @kernels::@kf_matmul_q8_0_avx2_r8_{{[a-z0-9_]*}} items(4096 + 0) claim(240) [
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @wide(%x: tensor<1x4096xf32>, %w: !kf.qweight<q8_0, [4096, 4096]>) -> tensor<1x4096xf32> {
    %y = kf.linear %x, %w : tensor<1x4096xf32>, !kf.qweight<q8_0, [4096, 4096]> -> tensor<1x4096xf32>
    return %y : tensor<1x4096xf32>
  }
}

// -----

// A per-head norm through reshapes that keep the token dimension: the
// reshapes share the buffer; the heads are the norm's items, 4 per row, so
// the quantizer after it (one item per row) waits at a barrier. A static
// token dimension is the plan's row count.
// CHECK-LABEL: kf_plan.plan @heads max_rows(3) arena(
// CHECK:         kf_plan.step "{{.*}}" @kernels::@kf_rms_norm_d32_nw_e358637bd_bf16 items(0 + 4) blocks(1) [
// CHECK-SAME:      <kind = input, index = 0, offset = 0, fixed = 0, per_row = 512>
// CHECK-SAME:      <kind = arena, index = 0, offset = 0, fixed = 0, per_row = 512>]
// CHECK-NEXT:    kf_plan.step "{{.*}}" @kernels::@kf_quantize_q8_0_k128_step items(0 + 1) blocks(1) barrier [
// CHECK-SAME:      <kind = arena, index = 0, offset = 0, fixed = 0, per_row = 512>
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @heads(%x: tensor<3x128xf32>, %w: !kf.qweight<q8_0, [16, 128]>) -> tensor<3x16xf32> {
    %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [3, 4, 32] : tensor<3x128xf32> into tensor<3x4x32xf32>
    %q = kf.rms_norm %e eps(1.0e-06) compute(bf16) : tensor<3x4x32xf32>
    %c = tensor.collapse_shape %q [[0], [1, 2]] : tensor<3x4x32xf32> into tensor<3x128xf32>
    %y = kf.linear %c, %w : tensor<3x128xf32>, !kf.qweight<q8_0, [16, 128]> -> tensor<3x16xf32>
    return %y : tensor<3x16xf32>
  }
}

// -----

// A decode step's caches: the model's state holds them one after the other
// for sequences of 1024 tokens (the ring 16 x 64 floats, 4096 bytes; the
// ratio-4 compressor 256 entries of 128 floats, 131072 bytes, then its
// ring of 8 slots of values and gates of 256 floats, 16384 bytes; the
// ratio-16 one 64 x 64 floats, 16384 bytes, and 16 slots of 64 floats
// twice, 8192 bytes). Steps reach their caches whole; the compressor's
// state kernel waits for its entries kernel, which reads the ring it
// overwrites, and the scores for the state kernel; nothing wrote the
// ratio-16 cache, so its read waits for nothing.
// CHECK-LABEL: kf_plan.plan @decode max_rows(1) arena({{[0-9]+}}) state(176128) context(1024)
// CHECK: kf_plan.cache "kv" offset(0) bytes(4096)
// CHECK-NEXT: kf_plan.cache "c" offset(4096) bytes(147456)
// CHECK-NEXT: kf_plan.cache "h" offset(151552) bytes(24576)
// CHECK-NEXT: kf_plan.step "kf_cache_append_r16_d64_bf16" {{.*}} items(0 + 1) blocks(1) [{{.*}}#kf_plan.operand<kind = state, index = 0, offset = 0, fixed = 4096, per_row = 0>]
// CHECK-NEXT: kf_plan.step "kf_window_indices_w16_r16"
// CHECK-NEXT: kf_plan.step "kf_compress_entries_{{[^"]*}}" {{.*}} items(0 + 1) blocks(1) [{{.*}}#kf_plan.operand<kind = state, index = 0, offset = 4096, fixed = 147456, per_row = 0>]
// CHECK-NEXT: kf_plan.step "kf_compress_state_r4_o_w256_c256" {{.*}} barrier [{{.*}}#kf_plan.operand<kind = state, index = 0, offset = 4096, fixed = 147456, per_row = 0>]
// CHECK-NEXT: kf_plan.step "kf_indexer_scores_{{[^"]*}}" {{.*}} items(0 + 4) blocks(1) barrier [{{.*}}#kf_plan.operand<kind = state, index = 0, offset = 4096, fixed = 131072, per_row = 0>
// CHECK-NEXT: kf_plan.step "kf_indexer_topk_e256_k8_r4" {{.*}} barrier
// CHECK-NEXT: kf_plan.step "kf_visible_entries_e64_r16" {{.*}} blocks(1) [{{.*}}#kf_plan.operand<kind = state, index = 0, offset = 151552, fixed = 16384, per_row = 0>
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

// A prefill's head reads its last row: a step copies the run's last row
// (m - 1, which only the run knows) into a row of its own, and the steps on
// it have one row's items and are called with one row, whatever the run's;
// the result buffer is one row.
// CHECK-LABEL: kf_plan.plan @head max_rows(16)
// CHECK: kf_plan.buffer "result0" bytes(256 + 0) output
// CHECK: kf_plan.step "kf_last_row_b256" @kernels::@kf_last_row_b256 items(1 + 0) blocks(1) barrier [#kf_plan.operand<kind = arena, index = 0, offset = 0, fixed = 0, per_row = 256>, #kf_plan.operand<kind = arena, index = 0, offset = 4096, fixed = 256, per_row = 0>]
// CHECK-NEXT: kf_plan.step "{{.*}}" @kernels::@kf_rms_norm_d64_nw_e358637bd items(1 + 0) blocks(1) rows(1) barrier [#kf_plan.operand<kind = arena, index = 0, offset = 4096, fixed = 256, per_row = 0>, #kf_plan.operand<kind = input, index = 1, offset = 0, fixed = 256, per_row = 0>]
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @head(%x: tensor<?x64xf32>) -> tensor<1x64xf32> {
    %n = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = tensor.dim %n, %c0 : tensor<?x64xf32>
    %last = arith.subi %t, %c1 : index
    %row = tensor.extract_slice %n[%last, 0] [1, 64] [1, 1] : tensor<?x64xf32> to tensor<1x64xf32>
    %h = kf.rms_norm %row eps(1.0e-06) : tensor<1x64xf32>
    return %h : tensor<1x64xf32>
  }
}

// -----

// A result named by kf.name (the graph builder's layer probes) is the run
// buffer of that name; the others keep result<j>.
// CHECK-LABEL: kf_plan.plan @named
// CHECK-NEXT:    kf_plan.buffer "arg0" bytes(0 + 256)
// CHECK-NEXT:    kf_plan.buffer "result0" bytes(0 + 256) output
// CHECK-NEXT:    kf_plan.buffer "blk.0.streams" bytes(0 + 256) output
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @named(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32> {kf.name = "blk.0.streams"}) {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    %z = kf.rms_norm %y eps(1.0e-06) : tensor<?x64xf32>
    return %y, %z : tensor<?x64xf32>, tensor<?x64xf32>
  }
}
