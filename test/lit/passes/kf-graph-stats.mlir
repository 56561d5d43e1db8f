// RUN: kf-opt %s --split-input-file --kf-graph-stats="tokens=1000 prefill-tokens=20" -o /dev/null | FileCheck %s
// RUN: kf-opt %s --split-input-file --kf-graph-stats -o /dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: kf-opt %s --split-input-file --kf-plan-pipeline=target=x86-64-v3 --kf-graph-stats="tokens=1000 prefill-tokens=20" -o /dev/null | FileCheck %s --check-prefix=LOWERED
// RUN: not kf-opt %s --split-input-file --kf-graph-stats=tokens=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOKENS
// RUN: not kf-opt %s --split-input-file --kf-graph-stats=prefill-tokens=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=PREFILL

// A four-layer model: layer 0 a window (SWA), layers 1 and 3 CSA, layer 2
// HCA, as its caches' kf.layer_kind name them; one hash-routed MoE. Hidden size 64, vocabulary 32, 8 experts of
// width 32 with k = 2, one attention head of 64, window 4.
//
// Weight bytes (q8_0: 34 bytes per 32, mxfp4: 17 per 32):
//   f32    11 tensors: 256 + 256 + 2048 + 4 + 2048 + 256 + 1024 + 128 + 4
//                      + 4096 + 256 = 10376 bytes, 2594 elements
//   q8_0    5 tensors of 32 x 64 or 64 x 32: 5 * 2176 = 10880 bytes,
//                      5 * 2048 = 10240 elements
//   i32     1 tensor 32 x 2: 256 bytes, 64 elements
//   bf16    7 tensors: 2 * 16384 + 4 * 8192 + 256 = 65792 bytes, 32896
//                      elements
//   mxfp4   3 stacks of 8 x 32 x 64 or 8 x 64 x 32: 3 * 8704 = 26112
//                      bytes, 3 * 16384 = 49152 elements
//   total  27 tensors, 113416 bytes; parameters without the i32 table:
//          2594 + 10240 + 32896 + 49152 = 94882
//
// One decode token reads everything but @unused.weight (256 bytes, 64
// parameters), one 68-byte row of the embedding instead of 2176 (and none
// of its 2048 parameters), one 8-byte row of tid2eid instead of 256, and
// 2 of 8 experts: 3 * 8704 / 8 * 2 = 6528 of 26112 bytes, 12288 of 49152
// parameters. Bytes: 113416 - 256 - 2108 - 248 - 19584 = 91220.
// Active parameters: 94882 - 64 - 2048 - 36864 = 55906.
//
// KV (bf16 caches; state is 2 fp32 arrays of slots x width):
//   SWA  ring 4 x 64 x 2 = 512 fixed, 0 per token.
//   CSA  ring 512; compressor 64 x 2 / 4 = 32 per token, state
//        2 * 8 * 128 * 4 = 8192; indexer 32 x 2 / 4 = 16 per token, state
//        2 * 8 * 64 * 4 = 4096: 12800 fixed, 48 per token.
//   HCA  ring 512; compressor 64 x 2 / 16 = 8 per token, state
//        2 * 16 * 64 * 4 = 8192: 8704 fixed, 8 per token.
// At 1000 tokens: SWA 512; CSA 2 * (12800 + 250 * 128 + 250 * 64) = 121600;
// HCA 8704 + 62 * 128 = 16640; total 138752, 104 bytes per token, 34816
// fixed.
// At 65536 tokens: SWA 512; CSA 2 * (12800 + 16384 * 192) = 6317056; HCA
// 8704 + 4096 * 128 = 532992; total 6850560.
//
// Arena of @decode at a context of 1000: at kf.indexer_scores, x 256 +
// ring 1024 + window indices 16 + compressor entries 250 * 64 * 4 = 64000
// + indexer keys 250 * 32 * 4 = 32000 + index weights 8 + scores 250 * 4 =
// 1000: 98304.
// Arena of @prefill at T = 20: at the CSA compressor's second projection
// (its gates), x 20 * 256 = 5120 + window indices 20 * 4 * 4 = 320 + the
// values and the gates, 20 * 128 * 4 = 10240 each: 25920.
//
// Fits: 113416 + 138752 + 98304 = 350472 bytes, 0.00033 GiB, rounded up.

// CHECK-LABEL: kf-graph-stats: tokens=1000 prefill-tokens=20
// CHECK-NEXT: weights:
// CHECK-NEXT:   format      tensors         elements            bytes
// CHECK-NEXT:   f32              11             2594            10376
// CHECK-NEXT:   q8_0              5            10240            10880
// CHECK-NEXT:   i32               1               64              256
// CHECK-NEXT:   bf16              7            32896            65792
// CHECK-NEXT:   mxfp4             3            49152            26112
// CHECK-NEXT:   total            27                            113416
// CHECK-NEXT:   total bytes        113416 bytes (110.76 KiB)
// CHECK-NEXT:   parameters         94882; integer tables are not parameters
// CHECK-NEXT: decode, one token (@decode; k of E experts, one row of a lookup):
// CHECK-NEXT:   weight bytes read  91220 bytes (89.08 KiB)
// CHECK-NEXT:   active parameters  55906
// CHECK-NEXT: kv cache at 1000 tokens (per layer: bytes/token, fixed bytes; bytes: all layers):
// CHECK-NEXT:   kind   layers    bytes/token    fixed bytes              bytes
// CHECK-NEXT:   SWA         1              0            512                512
// CHECK-NEXT:   CSA         2             48          12800             121600
// CHECK-NEXT:   HCA         1              8           8704              16640
// CHECK-NEXT:   total       4            104          34816             138752
// CHECK-NEXT:   SWA: kv ring 4 x 64 bf16
// CHECK-NEXT:   CSA: kv ring 4 x 64 bf16, compressor 64 bf16 per 4 tokens, indexer 32 bf16 per 4 tokens
// CHECK-NEXT:   HCA: kv ring 4 x 64 bf16, compressor 64 bf16 per 16 tokens
// CHECK-NEXT:   total bytes        138752 bytes (135.50 KiB)
// CHECK-NEXT: activation arena (peak of live op results):
// CHECK-NEXT:   @prefill T=20: 25920 bytes (25.31 KiB) at kf.linear
// CHECK-NEXT:   @decode T=1 context=1000: 98304 bytes (96.00 KiB) at kf.indexer_scores (blk.1.indexer)
// CHECK-NEXT: fits in 0.01 GiB: weights 113416 + kv at 1000 tokens 138752 + arena 98304 = 350472 bytes
// CHECK-NEXT: matmuls (kernel ops call compiled kernels; the others run the reference kernels):
// CHECK-NEXT:   compiled       kf.qmatmul 0, kf.expert_qmatmul 0 (the routed experts of 0 kf.moe)
// CHECK-NEXT:   not compiled   kf.linear 18, kf.grouped_linear 0, kf.moe 2

// Lowered for AVX2, the graph reads the same weights per decode token: the
// expert matmuls read k of E experts as the kf.moe did. Each function's MoE
// becomes 3 expert matmuls and 3 shared kf.qmatmul, its q8_0 head, bf16
// indexer projection and f32 router one more each (the float kernels), and
// its three compressors two bf16 projections each.
// LOWERED:      weight bytes read  91220 bytes
// LOWERED-NEXT: active parameters  55906
// LOWERED:      matmuls (kernel ops call compiled kernels; the others run the reference kernels):
// LOWERED-NEXT:   compiled       kf.qmatmul 24, kf.expert_qmatmul 6 (the routed experts of 2 kf.moe)
// LOWERED-NEXT:   not compiled   kf.linear 0, kf.grouped_linear 0, kf.moe 0

// DEFAULT:      kf-graph-stats: tokens=65536 prefill-tokens=2048
// DEFAULT:      kv cache at 65536 tokens
// DEFAULT:        total       4            104          34816            6850560

// TOKENS: error: kf-graph-stats: tokens must be positive, got 0
// PREFILL: error: kf-graph-stats: prefill-tokens must be positive, got -1

module {
  kf.weight @token_embd.weight : !kf.qweight<q8_0, [32, 64]>
  kf.weight @output_norm.weight : !kf.qweight<f32, [64]>
  kf.weight @output.weight : !kf.qweight<q8_0, [32, 64]>
  // Declared but read by neither function.
  kf.weight @unused.weight : !kf.qweight<f32, [64]>

  kf.weight @blk.0.ffn_gate_inp.weight : !kf.qweight<f32, [8, 64]>
  kf.weight @blk.0.ffn_gate_tid2eid.weight : !kf.qweight<i32, [32, 2]>
  kf.weight @blk.0.ffn_gate_exps.weight : !kf.qweight<mxfp4, [8, 32, 64]>
  kf.weight @blk.0.ffn_up_exps.weight : !kf.qweight<mxfp4, [8, 32, 64]>
  kf.weight @blk.0.ffn_down_exps.weight : !kf.qweight<mxfp4, [8, 64, 32]>
  kf.weight @blk.0.ffn_gate_shexp.weight : !kf.qweight<q8_0, [32, 64]>
  kf.weight @blk.0.ffn_up_shexp.weight : !kf.qweight<q8_0, [32, 64]>
  kf.weight @blk.0.ffn_down_shexp.weight : !kf.qweight<q8_0, [64, 32]>

  kf.weight @blk.1.attn_sinks.weight : !kf.qweight<f32, [1]>
  kf.weight @blk.1.attn_compressor_kv.weight : !kf.qweight<bf16, [128, 64]>
  kf.weight @blk.1.attn_compressor_gate.weight : !kf.qweight<bf16, [128, 64]>
  kf.weight @blk.1.attn_compressor_ape.weight : !kf.qweight<f32, [4, 128]>
  kf.weight @blk.1.attn_compressor_norm.weight : !kf.qweight<f32, [64]>
  kf.weight @blk.1.indexer_compressor_kv.weight : !kf.qweight<bf16, [64, 64]>
  kf.weight @blk.1.indexer_compressor_gate.weight : !kf.qweight<bf16, [64, 64]>
  kf.weight @blk.1.indexer_compressor_ape.weight : !kf.qweight<f32, [4, 64]>
  kf.weight @blk.1.indexer_compressor_norm.weight : !kf.qweight<f32, [32]>
  kf.weight @blk.1.indexer.proj.weight : !kf.qweight<bf16, [2, 64]>

  kf.weight @blk.2.attn_sinks.weight : !kf.qweight<f32, [1]>
  kf.weight @blk.2.attn_compressor_kv.weight : !kf.qweight<bf16, [64, 64]>
  kf.weight @blk.2.attn_compressor_gate.weight : !kf.qweight<bf16, [64, 64]>
  kf.weight @blk.2.attn_compressor_ape.weight : !kf.qweight<f32, [16, 64]>
  kf.weight @blk.2.attn_compressor_norm.weight : !kf.qweight<f32, [64]>

  kf.cache @blk.0.kv {kf.layer_kind = "SWA"} : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  kf.cache @blk.1.kv {kf.layer_kind = "CSA"} : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  kf.cache @blk.1.compressor {kf.layer_kind = "CSA"} : !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16>
  kf.cache @blk.1.indexer {kf.layer_kind = "CSA"} : !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>
  kf.cache @blk.2.kv {kf.layer_kind = "HCA"} : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  kf.cache @blk.2.compressor {kf.layer_kind = "HCA"} : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
  kf.cache @blk.3.kv {kf.layer_kind = "CSA"} : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  kf.cache @blk.3.compressor {kf.layer_kind = "CSA"} : !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16>
  kf.cache @blk.3.indexer {kf.layer_kind = "CSA"} : !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>

  func.func @prefill(%tokens: tensor<?xi32>, %pos: tensor<?xi64>) -> (tensor<1x32xf32>, tensor<1xi32>) {
    %kv1 = kf.get_cache @blk.1.kv : !kf.window_cache<rows = 4, dim = 64, element = bf16>
    %cc1 = kf.get_cache @blk.1.compressor : !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16>
    %ic1 = kf.get_cache @blk.1.indexer : !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>
    %kv2 = kf.get_cache @blk.2.kv : !kf.window_cache<rows = 4, dim = 64, element = bf16>
    %cc2 = kf.get_cache @blk.2.compressor : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
    kf.cache_reset %kv1 at %pos : !kf.window_cache<rows = 4, dim = 64, element = bf16>, tensor<?xi64>
    kf.cache_reset %cc1 at %pos : !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16>, tensor<?xi64>
    kf.cache_reset %ic1 at %pos : !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>, tensor<?xi64>
    kf.cache_reset %kv2 at %pos : !kf.window_cache<rows = 4, dim = 64, element = bf16>, tensor<?xi64>
    kf.cache_reset %cc2 at %pos : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>, tensor<?xi64>

    %emb = kf.get_weight @token_embd.weight : !kf.qweight<q8_0, [32, 64]>
    %x = kf.embed %tokens, %emb : tensor<?xi32>, !kf.qweight<q8_0, [32, 64]> -> tensor<?x64xf32>
    %c0 = arith.constant 0 : index
    %T = tensor.dim %x, %c0 : tensor<?x64xf32>

    // Layer 1, CSA: the window bank is the fresh rows.
    %q = tensor.expand_shape %x [[0], [1, 2]] output_shape [%T, 1, 64] : tensor<?x64xf32> into tensor<?x1x64xf32>
    kf.cache_append %kv1, %x, %pos : !kf.window_cache<rows = 4, dim = 64, element = bf16>, tensor<?x64xf32>, tensor<?xi64>
    %wi = kf.window_indices %pos window(4) : tensor<?xi64> -> tensor<?x4xi32>
    %ckv = kf.get_weight @blk.1.attn_compressor_kv.weight : !kf.qweight<bf16, [128, 64]>
    %cgate = kf.get_weight @blk.1.attn_compressor_gate.weight : !kf.qweight<bf16, [128, 64]>
    %cape = kf.get_weight @blk.1.attn_compressor_ape.weight : !kf.qweight<f32, [4, 128]>
    %cnorm = kf.get_weight @blk.1.attn_compressor_norm.weight : !kf.qweight<f32, [64]>
    %cv1 = kf.linear %x, %ckv precision(f32) : tensor<?x64xf32>, !kf.qweight<bf16, [128, 64]> -> tensor<?x128xf32>
    %cg1 = kf.linear %x, %cgate precision(f32) : tensor<?x64xf32>, !kf.qweight<bf16, [128, 64]> -> tensor<?x128xf32>
    kf.compress %cv1, %cg1, %pos, %cc1, %cape, %cnorm, #kf.rope<dim = 16, base = 1.600000e+05> post(fp8) eps(1.0e-06)
        : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16>,
          !kf.qweight<f32, [4, 128]>, !kf.qweight<f32, [64]>
    %e1 = kf.cache_read %cc1 : !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16> -> tensor<?x64xf32>
    %ikv = kf.get_weight @blk.1.indexer_compressor_kv.weight : !kf.qweight<bf16, [64, 64]>
    %igate = kf.get_weight @blk.1.indexer_compressor_gate.weight : !kf.qweight<bf16, [64, 64]>
    %iape = kf.get_weight @blk.1.indexer_compressor_ape.weight : !kf.qweight<f32, [4, 64]>
    %inorm = kf.get_weight @blk.1.indexer_compressor_norm.weight : !kf.qweight<f32, [32]>
    %cv2 = kf.linear %x, %ikv precision(f32) : tensor<?x64xf32>, !kf.qweight<bf16, [64, 64]> -> tensor<?x64xf32>
    %cg2 = kf.linear %x, %igate precision(f32) : tensor<?x64xf32>, !kf.qweight<bf16, [64, 64]> -> tensor<?x64xf32>
    kf.compress %cv2, %cg2, %pos, %ic1, %iape, %inorm, #kf.rope<dim = 16, base = 1.600000e+05> post(hadamard_fp4) eps(1.0e-06)
        : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
          !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
    %keys = kf.cache_read %ic1 : !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16> -> tensor<?x32xf32>
    %iq = tensor.expand_shape %x [[0], [1, 2]] output_shape [%T, 2, 32] : tensor<?x64xf32> into tensor<?x2x32xf32>
    %iproj = kf.get_weight @blk.1.indexer.proj.weight : !kf.qweight<bf16, [2, 64]>
    %iw = kf.linear %x, %iproj : tensor<?x64xf32>, !kf.qweight<bf16, [2, 64]> -> tensor<?x2xf32>
    %scores = kf.indexer_scores %iq, %iw, %keys scale(0.125) : tensor<?x2x32xf32>, tensor<?x2xf32>, tensor<?x32xf32> -> tensor<?x?xf32>
    %picks = kf.indexer_topk %scores, %pos k(8) ratio(4) : tensor<?x?xf32>, tensor<?xi64> -> tensor<?x?xi32>
    %s1 = kf.get_weight @blk.1.attn_sinks.weight : !kf.qweight<f32, [1]>
    %o1 = kf.sparse_attention %q, %x[%wi], %e1[%picks] sinks(%s1) scale(0.125)
        : tensor<?x1x64xf32>, !kf.qweight<f32, [1]>, tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x64xf32>, tensor<?x?xi32> -> tensor<?x1x64xf32> loc("blk.1.attention")
    %a1 = tensor.collapse_shape %o1 [[0], [1, 2]] : tensor<?x1x64xf32> into tensor<?x64xf32>

    // Layer 2, HCA.
    kf.cache_append %kv2, %a1, %pos : !kf.window_cache<rows = 4, dim = 64, element = bf16>, tensor<?x64xf32>, tensor<?xi64>
    %wi2 = kf.window_indices %pos window(4) : tensor<?xi64> -> tensor<?x4xi32>
    %hkv = kf.get_weight @blk.2.attn_compressor_kv.weight : !kf.qweight<bf16, [64, 64]>
    %hgate = kf.get_weight @blk.2.attn_compressor_gate.weight : !kf.qweight<bf16, [64, 64]>
    %hape = kf.get_weight @blk.2.attn_compressor_ape.weight : !kf.qweight<f32, [16, 64]>
    %hnorm = kf.get_weight @blk.2.attn_compressor_norm.weight : !kf.qweight<f32, [64]>
    %cv3 = kf.linear %a1, %hkv precision(f32) : tensor<?x64xf32>, !kf.qweight<bf16, [64, 64]> -> tensor<?x64xf32>
    %cg3 = kf.linear %a1, %hgate precision(f32) : tensor<?x64xf32>, !kf.qweight<bf16, [64, 64]> -> tensor<?x64xf32>
    kf.compress %cv3, %cg3, %pos, %cc2, %hape, %hnorm, #kf.rope<dim = 16, base = 1.600000e+05> post(fp8) eps(1.0e-06)
        : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xi64>, !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>,
          !kf.qweight<f32, [16, 64]>, !kf.qweight<f32, [64]>
    %e2 = kf.cache_read %cc2 : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16> -> tensor<?x64xf32>
    %vis = kf.visible_entries %pos, %e2 ratio(16) : tensor<?xi64>, tensor<?x64xf32> -> tensor<?x?xi32>
    %q2 = tensor.expand_shape %a1 [[0], [1, 2]] output_shape [%T, 1, 64] : tensor<?x64xf32> into tensor<?x1x64xf32>
    %s2 = kf.get_weight @blk.2.attn_sinks.weight : !kf.qweight<f32, [1]>
    %o2 = kf.sparse_attention %q2, %a1[%wi2], %e2[%vis] sinks(%s2) scale(0.125)
        : tensor<?x1x64xf32>, !kf.qweight<f32, [1]>, tensor<?x64xf32>, tensor<?x4xi32>, tensor<?x64xf32>, tensor<?x?xi32> -> tensor<?x1x64xf32>
    %a2 = tensor.collapse_shape %o2 [[0], [1, 2]] : tensor<?x1x64xf32> into tensor<?x64xf32>

    // Layer 0's MoE, hash-routed.
    %router = kf.get_weight @blk.0.ffn_gate_inp.weight : !kf.qweight<f32, [8, 64]>
    %logits = kf.linear %a2, %router precision(f32) : tensor<?x64xf32>, !kf.qweight<f32, [8, 64]> -> tensor<?x8xf32>
    %t2e = kf.get_weight @blk.0.ffn_gate_tid2eid.weight : !kf.qweight<i32, [32, 2]>
    %ids, %w = kf.moe_gate %logits hash(%t2e : !kf.qweight<i32, [32, 2]>[%tokens : tensor<?xi32>]) k(2) route_scale(1.5)
        : tensor<?x8xf32> -> tensor<?x2xi32>, tensor<?x2xf32>
    %g = kf.get_weight @blk.0.ffn_gate_exps.weight : !kf.qweight<mxfp4, [8, 32, 64]>
    %u = kf.get_weight @blk.0.ffn_up_exps.weight : !kf.qweight<mxfp4, [8, 32, 64]>
    %d = kf.get_weight @blk.0.ffn_down_exps.weight : !kf.qweight<mxfp4, [8, 64, 32]>
    %sg = kf.get_weight @blk.0.ffn_gate_shexp.weight : !kf.qweight<q8_0, [32, 64]>
    %su = kf.get_weight @blk.0.ffn_up_shexp.weight : !kf.qweight<q8_0, [32, 64]>
    %sd = kf.get_weight @blk.0.ffn_down_shexp.weight : !kf.qweight<q8_0, [64, 32]>
    %y = kf.moe %a2, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
        : tensor<?x64xf32>, tensor<?x2xi32>, tensor<?x2xf32>,
          !kf.qweight<mxfp4, [8, 32, 64]>, !kf.qweight<mxfp4, [8, 32, 64]>, !kf.qweight<mxfp4, [8, 64, 32]>,
          !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<?x64xf32>

    // The head, on the last token.
    %c1 = arith.constant 1 : index
    %tl = arith.subi %T, %c1 : index
    %last = tensor.extract_slice %y[%tl, 0] [1, 64] [1, 1] : tensor<?x64xf32> to tensor<1x64xf32>
    %nw = kf.get_weight @output_norm.weight : !kf.qweight<f32, [64]>
    %n = kf.rms_norm %last, %nw eps(1.0e-06) : tensor<1x64xf32>, !kf.qweight<f32, [64]>
    %head = kf.get_weight @output.weight : !kf.qweight<q8_0, [32, 64]>
    %l = kf.linear %n, %head precision(f32) : tensor<1x64xf32>, !kf.qweight<q8_0, [32, 64]> -> tensor<1x32xf32>
    %tok = kf.argmax %l : tensor<1x32xf32> -> tensor<1xi32>
    return %l, %tok : tensor<1x32xf32>, tensor<1xi32>
  }

  func.func @decode(%tokens: tensor<1xi32>, %pos: tensor<1xi64>) -> (tensor<1x32xf32>, tensor<1xi32>) {
    %emb = kf.get_weight @token_embd.weight : !kf.qweight<q8_0, [32, 64]>
    %x = kf.embed %tokens, %emb : tensor<1xi32>, !kf.qweight<q8_0, [32, 64]> -> tensor<1x64xf32>

    // Layer 1, CSA: the bank is the ring.
    %q = tensor.expand_shape %x [[0], [1, 2]] output_shape [1, 1, 64] : tensor<1x64xf32> into tensor<1x1x64xf32>
    %kv1 = kf.get_cache @blk.1.kv : !kf.window_cache<rows = 4, dim = 64, element = bf16>
    kf.cache_append %kv1, %x, %pos : !kf.window_cache<rows = 4, dim = 64, element = bf16>, tensor<1x64xf32>, tensor<1xi64>
    %ring1 = kf.cache_read %kv1 : !kf.window_cache<rows = 4, dim = 64, element = bf16> -> tensor<4x64xf32>
    %wi = kf.window_indices %pos window(4) ring(4) : tensor<1xi64> -> tensor<1x4xi32>
    %cc1 = kf.get_cache @blk.1.compressor : !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16>
    %ckv = kf.get_weight @blk.1.attn_compressor_kv.weight : !kf.qweight<bf16, [128, 64]>
    %cgate = kf.get_weight @blk.1.attn_compressor_gate.weight : !kf.qweight<bf16, [128, 64]>
    %cape = kf.get_weight @blk.1.attn_compressor_ape.weight : !kf.qweight<f32, [4, 128]>
    %cnorm = kf.get_weight @blk.1.attn_compressor_norm.weight : !kf.qweight<f32, [64]>
    %cv4 = kf.linear %x, %ckv precision(f32) : tensor<1x64xf32>, !kf.qweight<bf16, [128, 64]> -> tensor<1x128xf32>
    %cg4 = kf.linear %x, %cgate precision(f32) : tensor<1x64xf32>, !kf.qweight<bf16, [128, 64]> -> tensor<1x128xf32>
    kf.compress %cv4, %cg4, %pos, %cc1, %cape, %cnorm, #kf.rope<dim = 16, base = 1.600000e+05> post(fp8) eps(1.0e-06)
        : tensor<1x128xf32>, tensor<1x128xf32>, tensor<1xi64>, !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16>,
          !kf.qweight<f32, [4, 128]>, !kf.qweight<f32, [64]>
    %e1 = kf.cache_read %cc1 : !kf.compressed_cache<ratio = 4, dim = 64, overlap = true, element = bf16> -> tensor<?x64xf32>
    %ic1 = kf.get_cache @blk.1.indexer : !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>
    %ikv = kf.get_weight @blk.1.indexer_compressor_kv.weight : !kf.qweight<bf16, [64, 64]>
    %igate = kf.get_weight @blk.1.indexer_compressor_gate.weight : !kf.qweight<bf16, [64, 64]>
    %iape = kf.get_weight @blk.1.indexer_compressor_ape.weight : !kf.qweight<f32, [4, 64]>
    %inorm = kf.get_weight @blk.1.indexer_compressor_norm.weight : !kf.qweight<f32, [32]>
    %cv5 = kf.linear %x, %ikv precision(f32) : tensor<1x64xf32>, !kf.qweight<bf16, [64, 64]> -> tensor<1x64xf32>
    %cg5 = kf.linear %x, %igate precision(f32) : tensor<1x64xf32>, !kf.qweight<bf16, [64, 64]> -> tensor<1x64xf32>
    kf.compress %cv5, %cg5, %pos, %ic1, %iape, %inorm, #kf.rope<dim = 16, base = 1.600000e+05> post(hadamard_fp4) eps(1.0e-06)
        : tensor<1x64xf32>, tensor<1x64xf32>, tensor<1xi64>, !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16>,
          !kf.qweight<f32, [4, 64]>, !kf.qweight<f32, [32]>
    %keys = kf.cache_read %ic1 : !kf.compressed_cache<ratio = 4, dim = 32, overlap = true, element = bf16> -> tensor<?x32xf32>
    %iq = tensor.expand_shape %x [[0], [1, 2]] output_shape [1, 2, 32] : tensor<1x64xf32> into tensor<1x2x32xf32>
    %iproj = kf.get_weight @blk.1.indexer.proj.weight : !kf.qweight<bf16, [2, 64]>
    %iw = kf.linear %x, %iproj : tensor<1x64xf32>, !kf.qweight<bf16, [2, 64]> -> tensor<1x2xf32>
    %scores = kf.indexer_scores %iq, %iw, %keys scale(0.125) : tensor<1x2x32xf32>, tensor<1x2xf32>, tensor<?x32xf32> -> tensor<1x?xf32> loc("blk.1.indexer")
    %picks = kf.indexer_topk %scores, %pos k(8) ratio(4) : tensor<1x?xf32>, tensor<1xi64> -> tensor<1x?xi32>
    %s1 = kf.get_weight @blk.1.attn_sinks.weight : !kf.qweight<f32, [1]>
    %o1 = kf.sparse_attention %q, %ring1[%wi], %e1[%picks] sinks(%s1) scale(0.125)
        : tensor<1x1x64xf32>, !kf.qweight<f32, [1]>, tensor<4x64xf32>, tensor<1x4xi32>, tensor<?x64xf32>, tensor<1x?xi32> -> tensor<1x1x64xf32>
    %a1 = tensor.collapse_shape %o1 [[0], [1, 2]] : tensor<1x1x64xf32> into tensor<1x64xf32>

    // Layer 2, HCA.
    %kv2 = kf.get_cache @blk.2.kv : !kf.window_cache<rows = 4, dim = 64, element = bf16>
    kf.cache_append %kv2, %a1, %pos : !kf.window_cache<rows = 4, dim = 64, element = bf16>, tensor<1x64xf32>, tensor<1xi64>
    %ring2 = kf.cache_read %kv2 : !kf.window_cache<rows = 4, dim = 64, element = bf16> -> tensor<4x64xf32>
    %wi2 = kf.window_indices %pos window(4) ring(4) : tensor<1xi64> -> tensor<1x4xi32>
    %cc2 = kf.get_cache @blk.2.compressor : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
    %hkv = kf.get_weight @blk.2.attn_compressor_kv.weight : !kf.qweight<bf16, [64, 64]>
    %hgate = kf.get_weight @blk.2.attn_compressor_gate.weight : !kf.qweight<bf16, [64, 64]>
    %hape = kf.get_weight @blk.2.attn_compressor_ape.weight : !kf.qweight<f32, [16, 64]>
    %hnorm = kf.get_weight @blk.2.attn_compressor_norm.weight : !kf.qweight<f32, [64]>
    %cv6 = kf.linear %a1, %hkv precision(f32) : tensor<1x64xf32>, !kf.qweight<bf16, [64, 64]> -> tensor<1x64xf32>
    %cg6 = kf.linear %a1, %hgate precision(f32) : tensor<1x64xf32>, !kf.qweight<bf16, [64, 64]> -> tensor<1x64xf32>
    kf.compress %cv6, %cg6, %pos, %cc2, %hape, %hnorm, #kf.rope<dim = 16, base = 1.600000e+05> post(fp8) eps(1.0e-06)
        : tensor<1x64xf32>, tensor<1x64xf32>, tensor<1xi64>, !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>,
          !kf.qweight<f32, [16, 64]>, !kf.qweight<f32, [64]>
    %e2 = kf.cache_read %cc2 : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16> -> tensor<?x64xf32>
    %vis = kf.visible_entries %pos, %e2 ratio(16) : tensor<1xi64>, tensor<?x64xf32> -> tensor<1x?xi32>
    %q2 = tensor.expand_shape %a1 [[0], [1, 2]] output_shape [1, 1, 64] : tensor<1x64xf32> into tensor<1x1x64xf32>
    %s2 = kf.get_weight @blk.2.attn_sinks.weight : !kf.qweight<f32, [1]>
    %o2 = kf.sparse_attention %q2, %ring2[%wi2], %e2[%vis] sinks(%s2) scale(0.125)
        : tensor<1x1x64xf32>, !kf.qweight<f32, [1]>, tensor<4x64xf32>, tensor<1x4xi32>, tensor<?x64xf32>, tensor<1x?xi32> -> tensor<1x1x64xf32>
    %a2 = tensor.collapse_shape %o2 [[0], [1, 2]] : tensor<1x1x64xf32> into tensor<1x64xf32>

    // Layer 0's MoE, hash-routed.
    %router = kf.get_weight @blk.0.ffn_gate_inp.weight : !kf.qweight<f32, [8, 64]>
    %logits = kf.linear %a2, %router precision(f32) : tensor<1x64xf32>, !kf.qweight<f32, [8, 64]> -> tensor<1x8xf32>
    %t2e = kf.get_weight @blk.0.ffn_gate_tid2eid.weight : !kf.qweight<i32, [32, 2]>
    %ids, %w = kf.moe_gate %logits hash(%t2e : !kf.qweight<i32, [32, 2]>[%tokens : tensor<1xi32>]) k(2) route_scale(1.5)
        : tensor<1x8xf32> -> tensor<1x2xi32>, tensor<1x2xf32>
    %g = kf.get_weight @blk.0.ffn_gate_exps.weight : !kf.qweight<mxfp4, [8, 32, 64]>
    %u = kf.get_weight @blk.0.ffn_up_exps.weight : !kf.qweight<mxfp4, [8, 32, 64]>
    %d = kf.get_weight @blk.0.ffn_down_exps.weight : !kf.qweight<mxfp4, [8, 64, 32]>
    %sg = kf.get_weight @blk.0.ffn_gate_shexp.weight : !kf.qweight<q8_0, [32, 64]>
    %su = kf.get_weight @blk.0.ffn_up_shexp.weight : !kf.qweight<q8_0, [32, 64]>
    %sd = kf.get_weight @blk.0.ffn_down_shexp.weight : !kf.qweight<q8_0, [64, 32]>
    %y = kf.moe %a2, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
        : tensor<1x64xf32>, tensor<1x2xi32>, tensor<1x2xf32>,
          !kf.qweight<mxfp4, [8, 32, 64]>, !kf.qweight<mxfp4, [8, 32, 64]>, !kf.qweight<mxfp4, [8, 64, 32]>,
          !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<1x64xf32>

    %nw = kf.get_weight @output_norm.weight : !kf.qweight<f32, [64]>
    %n = kf.rms_norm %y, %nw eps(1.0e-06) : tensor<1x64xf32>, !kf.qweight<f32, [64]>
    %head = kf.get_weight @output.weight : !kf.qweight<q8_0, [32, 64]>
    %l = kf.linear %n, %head precision(f32) : tensor<1x64xf32>, !kf.qweight<q8_0, [32, 64]> -> tensor<1x32xf32>
    %tok = kf.argmax %l : tensor<1x32xf32> -> tensor<1xi32>
    return %l, %tok : tensor<1x32xf32>, tensor<1xi32>
  }
}

// -----

// A graph split into functions counts the same: a weight passed to a callee
// counts by its use there, and a weight fetched twice counts once. Without
// a kf.moe_gate a token reads as many experts as its ids are wide: 3 of 4.
//
// Stacks of 4 x 32 x 64 and 4 x 64 x 32 mxfp4: 4352 bytes, 8192 elements
// each; shared q8_0 matrices 2176 bytes, 2048 elements each. Total 3 * 4352
// + 3 * 2176 = 19584 bytes, 3 * 8192 + 3 * 2048 = 30720 parameters.
// Decode: 3 * 4352 / 4 * 3 + 3 * 2176 = 16320 bytes, 3 * 6144 + 3 * 2048 =
// 24576 parameters. No caches. The arena counts @decode's own results (the
// callee's are not entered): the call's 256 bytes.

// CHECK-LABEL: kf-graph-stats: tokens=1000 prefill-tokens=20
// CHECK:        q8_0              3             6144             6528
// CHECK-NEXT:   mxfp4             3            24576            13056
// CHECK-NEXT:   total             6                             19584
// CHECK:        parameters         30720; integer tables are not parameters
// CHECK-NEXT: decode, one token
// CHECK-NEXT:   weight bytes read  16320 bytes (15.94 KiB)
// CHECK-NEXT:   active parameters  24576
// CHECK:        total       0              0              0                  0
// CHECK:      activation arena (peak of live op results):
// CHECK-NEXT:   @decode T=1 context=1000: 256 bytes at func.call
// CHECK-NEXT: fits in 0.01 GiB: weights 19584 + kv at 1000 tokens 0 + arena 256 = 19840 bytes

module {
  kf.weight @gate_exps : !kf.qweight<mxfp4, [4, 32, 64]>
  kf.weight @up_exps : !kf.qweight<mxfp4, [4, 32, 64]>
  kf.weight @down_exps : !kf.qweight<mxfp4, [4, 64, 32]>
  kf.weight @gate_shexp : !kf.qweight<q8_0, [32, 64]>
  kf.weight @up_shexp : !kf.qweight<q8_0, [32, 64]>
  kf.weight @down_shexp : !kf.qweight<q8_0, [64, 32]>

  func.func @decode(%x: tensor<1x64xf32>, %ids: tensor<1x3xi32>, %w: tensor<1x3xf32>) -> tensor<1x64xf32> {
    %g = kf.get_weight @gate_exps : !kf.qweight<mxfp4, [4, 32, 64]>
    %sg = kf.get_weight @gate_shexp : !kf.qweight<q8_0, [32, 64]>
    %h = kf.linear %x, %sg : tensor<1x64xf32>, !kf.qweight<q8_0, [32, 64]> -> tensor<1x32xf32>
    %y = func.call @ffn(%x, %ids, %w, %g) : (tensor<1x64xf32>, tensor<1x3xi32>, tensor<1x3xf32>, !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }

  func.func private @ffn(%x: tensor<1x64xf32>, %ids: tensor<1x3xi32>, %w: tensor<1x3xf32>, %g: !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<1x64xf32> {
    %u = kf.get_weight @up_exps : !kf.qweight<mxfp4, [4, 32, 64]>
    %d = kf.get_weight @down_exps : !kf.qweight<mxfp4, [4, 64, 32]>
    %sg = kf.get_weight @gate_shexp : !kf.qweight<q8_0, [32, 64]>
    %su = kf.get_weight @up_shexp : !kf.qweight<q8_0, [32, 64]>
    %sd = kf.get_weight @down_shexp : !kf.qweight<q8_0, [64, 32]>
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
        : tensor<1x64xf32>, tensor<1x3xi32>, tensor<1x3xf32>,
          !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
          !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }
}

// -----

// Caches no model names a kind for are grouped by their roles.

// CHECK-LABEL: kf-graph-stats: tokens=1000 prefill-tokens=20
// CHECK:        kind               layers    bytes/token    fixed bytes              bytes
// CHECK-NEXT:   kv                      2              0            512               1024
// CHECK-NEXT:   kv+compressor           1              8           8704              16640
// CHECK-NEXT:   total                   3              8           9728              17664
// CHECK-NEXT:   kv: kv ring 4 x 64 bf16
// CHECK-NEXT:   kv+compressor: kv ring 4 x 64 bf16, compressor 64 bf16 per 16 tokens

module {
  kf.cache @blk.0.kv : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  kf.cache @blk.1.kv : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  kf.cache @blk.2.kv : !kf.window_cache<rows = 4, dim = 64, element = bf16>
  kf.cache @blk.2.compressor : !kf.compressed_cache<ratio = 16, dim = 64, overlap = false, element = bf16>
}
