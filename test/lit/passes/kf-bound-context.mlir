// RUN: kf-opt %s --split-input-file --kf-bound-context=max-context=1024 | FileCheck %s
// RUN: not kf-opt %s --split-input-file --kf-bound-context=max-context=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: kf-opt %s --split-input-file --kf-bound-context=max-context=1024 --kf-bound-context=max-context=1024 | FileCheck %s
// RUN: not kf-opt %s --split-input-file --kf-bound-context=max-context=1024 --kf-bound-context=max-context=2048 2>&1 | FileCheck %s --check-prefix=TWICE

// Sequences of at most 1024 tokens: the ratio-4 compressor holds 1024 / 4 =
// 256 entries and the ratio-16 one 64; the scores have a column per entry,
// the top-k min(8, 256) = 8, the visible entries 64; the function returns
// them with their bounds. The window ring is static already.

// CHECK: module attributes {kf.max_context = 1024 : i64
// CHECK: func.func @decode({{.*}}) -> (tensor<1x16xi32>, tensor<1x8xi32>, tensor<1x64xi32>)
// CHECK: kf.cache_read {{.*}} -> tensor<256x128xf32>
// CHECK: kf.indexer_scores {{.*}} -> tensor<1x256xf32>
// CHECK: kf.indexer_topk {{.*}} : tensor<1x256xf32>, tensor<1xi64> -> tensor<1x8xi32>
// CHECK: kf.cache_read {{.*}} -> tensor<64x64xf32>
// CHECK: kf.visible_entries {{.*}} : tensor<1xi64>, tensor<64x64xf32> -> tensor<1x64xi32>

// ZERO: error: kf-bound-context: max-context must be positive, got 0
// TWICE: error: kf-bound-context: the module is bounded to 1024 tokens already, not 2048

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.cache @kv : !kf.window_cache<rows = 16, dim = 64, element = bf16>
  kf.cache @c : !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>
  kf.cache @h : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
  func.func @decode(%kvrow: tensor<1x64xf32>, %v: tensor<1x256xf32>, %g: tensor<1x256xf32>, %pos: tensor<1xi64>,
                    %q: tensor<1x2x128xf32>, %w: tensor<1x2xf32>,
                    %ape: !kf.qweight<f32, [4, 256]>, %norm: !kf.qweight<f32, [128]>)
      -> (tensor<1x16xi32>, tensor<1x?xi32>, tensor<1x?xi32>) {
    %kv = kf.get_cache @kv : !kf.window_cache<rows = 16, dim = 64, element = bf16>
    %c = kf.get_cache @c : !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>
    %h = kf.get_cache @h : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
    kf.cache_append %kv, %kvrow, %pos : !kf.window_cache<rows = 16, dim = 64, element = bf16>, tensor<1x64xf32>, tensor<1xi64>
    %wi = kf.window_indices %pos window(16) ring(16) : tensor<1xi64> -> tensor<1x16xi32>
    kf.compress %v, %g, %pos, %c, %ape, %norm, <dim = 64, base = 1.000000e+04> post(fp8) eps(1.0e-06)
        : tensor<1x256xf32>, tensor<1x256xf32>, tensor<1xi64>, !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16>,
          !kf.qweight<f32, [4, 256]>, !kf.qweight<f32, [128]>
    %e = kf.cache_read %c : !kf.compressed_cache<ratio = 4, dim = 128, overlap = true, element = bf16> -> tensor<?x128xf32>
    %s = kf.indexer_scores %q, %w, %e scale(0.125) : tensor<1x2x128xf32>, tensor<1x2xf32>, tensor<?x128xf32> -> tensor<1x?xf32>
    %picks = kf.indexer_topk %s, %pos k(8) ratio(4) : tensor<1x?xf32>, tensor<1xi64> -> tensor<1x?xi32>
    %he = kf.cache_read %h : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16> -> tensor<?x64xf32>
    %vis = kf.visible_entries %pos, %he ratio(16) : tensor<1xi64>, tensor<?x64xf32> -> tensor<1x?xi32>
    return %wi, %picks, %vis : tensor<1x16xi32>, tensor<1x?xi32>, tensor<1x?xi32>
  }
}
