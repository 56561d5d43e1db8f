// RUN: kf-opt %s --split-input-file --kf-block-caches | FileCheck %s

// znver5: half of its 48 KiB L1d (24576 bytes) holds the activation tile,
// half of its 1 MiB L2 (524288 bytes) a weight block.
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  // CHECK-LABEL: func.func @znver5
  func.func @znver5(%x17: tensor<17x4096xf32>, %x1: tensor<1x4096xf32>, %q8: !kf.qweight<q8_0, [2048, 4096]>,
                    %x9: tensor<9x7168xf32>, %iq: !kf.qweight<iq2_xxs, [1000, 7168]>,
                    %xd: tensor<?x2048xf32>, %mx: !kf.qweight<mxfp4, [4096, 2048]>,
                    %x2: tensor<2x3000xf32>, %bf: !kf.qweight<bf16, [100, 3000]>)
      -> (tensor<17x2048xf32>, tensor<1x2048xf32>, tensor<9x1000xf32>, tensor<?x4096xf32>, tensor<2x100xf32>) {
    // Q8_0 activations as the kernels read them: 48 bytes per 32. An
    // 8-column tile fits 64 x 32 = 2048 of K in 24 KiB, so K = 4096 is two
    // blocks of 2048. A 2048-long row is 2176
    // bytes: 240 rows fit, more than a thread's 2048 / 16 = 128.
    // CHECK: cols = [8, 4, 3, 2], l2_rows = 128, l1_k = 2048>} : tensor<17x4096xf32>
    %a = kf.linear %x17, %q8 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = [8, 4, 3, 2]>}
        : tensor<17x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<17x2048xf32>
    // One column holds all of K (4352 bytes a row): 120 rows fit, 112 in row
    // groups, so a thread's 128 rows are two blocks of 64.
    // CHECK: cols = [1], l2_rows = 64, l1_k = 4096>} : tensor<1x4096xf32>
    %b = kf.linear %x1, %q8 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = [1]>}
        : tensor<1x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<1x2048xf32>
    // IQ2_XXS pairs with Q8_K (292 bytes per 256); widest tile 4: 21 blocks
    // of 256 fit, so K = 7168 is two blocks of 3584. A row of 3584 is 924
    // bytes: 560 rows fit. N = 1000 is 63 groups of 16 (the last one padded),
    // 1008 rows on one thread: two blocks of 504, rounded up to 512.
    // CHECK: cols = [4, 3, 2], l2_rows = 512, l1_k = 3584>} : tensor<9x7168xf32>
    %c = kf.linear %x9, %iq {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq2_xxs_r16, max_cols = 8, threads = 1, cols = [4, 3, 2]>}
        : tensor<9x7168xf32>, !kf.qweight<iq2_xxs, [1000, 7168]> -> tensor<9x1000xf32>
    // A dynamic M blocks for max_cols: K = 2048 fits; MXFP4 rows of 2048 are
    // 1088 bytes, 480 fit, more than a thread's 256.
    // CHECK: cols = dynamic, l2_rows = 256, l1_k = 2048>} : tensor<?x2048xf32>
    %d = kf.linear %xd, %mx {kf.kernel = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x2048xf32>, !kf.qweight<mxfp4, [4096, 2048]> -> tensor<?x4096xf32>
    // BF16 (block 1): K = 3000 fits whole; a row is 6000 bytes, 80 rows fit;
    // N = 100 is 7 groups, 4 per thread on two threads.
    // CHECK: cols = [2], l2_rows = 64, l1_k = 3000>} : tensor<2x3000xf32>
    %e = kf.linear %x2, %bf {kf.kernel = #kf.kernel<isa = avx512vnni, layout = bf16_r16, max_cols = 8, threads = 2, cols = [2]>}
        : tensor<2x3000xf32>, !kf.qweight<bf16, [100, 3000]> -> tensor<2x100xf32>
    return %a, %b, %c, %d, %e : tensor<17x2048xf32>, tensor<1x2048xf32>, tensor<9x1000xf32>, tensor<?x4096xf32>, tensor<2x100xf32>
  }

  // Tuned blocks are kept; with only l1_k tuned, l2_rows is sized for it:
  // 1024-long Q8_0 rows are 1088 bytes, 480 fit, 2048 rows are 5 blocks of
  // 416.
  // CHECK-LABEL: func.func @tuned
  func.func @tuned(%x: tensor<17x4096xf32>, %q8: !kf.qweight<q8_0, [2048, 4096]>)
      -> (tensor<17x2048xf32>, tensor<17x2048xf32>) {
    // CHECK: l2_rows = 32, l1_k = 64>}
    %a = kf.linear %x, %q8 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, cols = [8, 4, 3, 2], l2_rows = 32, l1_k = 64>}
        : tensor<17x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<17x2048xf32>
    // CHECK: l2_rows = 416, l1_k = 1024>}
    %b = kf.linear %x, %q8 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, cols = [8, 4, 3, 2], l1_k = 1024>}
        : tensor<17x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<17x2048xf32>
    return %a, %b : tensor<17x2048xf32>, tensor<17x2048xf32>
  }

  // A kernel that decodes once keeps each row decoded (one byte per weight)
  // beside its packed bytes: IQ2_XXS rows of 3584 are 924 + 3584 bytes, 116
  // fit, 112 in row groups; a thread's 1008 rows are 9 blocks of 112.
  // CHECK-LABEL: func.func @decode_once
  func.func @decode_once(%x9: tensor<9x7168xf32>, %iq: !kf.qweight<iq2_xxs, [1000, 7168]>) -> tensor<9x1000xf32> {
    // CHECK: cols = [4, 3, 2], l2_rows = 112, l1_k = 3584, decode = once>}
    %a = kf.linear %x9, %iq {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq2_xxs_r16, max_cols = 8, threads = 1, cols = [4, 3, 2], decode = once>}
        : tensor<9x7168xf32>, !kf.qweight<iq2_xxs, [1000, 7168]> -> tensor<9x1000xf32>
    return %a : tensor<9x1000xf32>
  }

  // Q4_K's decoded super-block also holds its 8 mins as 4 int16 pairs, 16
  // bytes per row: rows of 4096 are 2304 + 16 * 272 bytes, 78 fit, 64 in
  // row groups (one byte per weight would fit 81, 80 in row groups), so the
  // thread's 160 rows are 3 blocks of 64 (not 2 of 80).
  // CHECK-LABEL: func.func @decode_once_mins
  func.func @decode_once_mins(%x9: tensor<9x4096xf32>, %w: !kf.qweight<q4_k, [160, 4096]>) -> tensor<9x160xf32> {
    // CHECK: cols = [4, 3, 2], l2_rows = 64, l1_k = 4096, decode = once>}
    %a = kf.linear %x9, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_k_r16, max_cols = 8, threads = 1, cols = [4, 3, 2], decode = once>}
        : tensor<9x4096xf32>, !kf.qweight<q4_k, [160, 4096]> -> tensor<9x160xf32>
    return %a : tensor<9x160xf32>
  }

  // N is one expert's rows, or one group's; small K fits whole.
  // CHECK-LABEL: func.func @moe_and_grouped
  func.func @moe_and_grouped(%x: tensor<?x64xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                             %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                             %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sg: !kf.qweight<q8_0, [32, 64]>,
                             %su: !kf.qweight<q8_0, [32, 64]>, %sd: !kf.qweight<q8_0, [64, 32]>,
                             %o: tensor<2x256xf32>, %wo: !kf.qweight<q8_0, [64, 128]>)
      -> (tensor<?x64xf32>, tensor<2x64xf32>) {
    // CHECK: kf.moe {{.*}} {kf.kernel = {
    // CHECK-SAME: down_exps = #kf.kernel<{{[^>]*}}l2_rows = 64, l1_k = 32>,
    // CHECK-SAME: down_shexp = #kf.kernel<{{[^>]*}}l2_rows = 64, l1_k = 32>,
    // CHECK-SAME: gate_exps = #kf.kernel<{{[^>]*}}l2_rows = 32, l1_k = 64>,
    // CHECK-SAME: gate_shexp = #kf.kernel<{{[^>]*}}l2_rows = 32, l1_k = 64>,
    // CHECK-SAME: up_exps = #kf.kernel<{{[^>]*}}l2_rows = 32, l1_k = 64>,
    // CHECK-SAME: up_shexp = #kf.kernel<{{[^>]*}}l2_rows = 32, l1_k = 64>}}
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
        {kf.kernel = {gate_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 1, cols = dynamic>,
                      up_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 1, cols = dynamic>,
                      down_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 1, cols = dynamic>,
                      gate_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, cols = dynamic>,
                      up_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, cols = dynamic>,
                      down_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, cols = dynamic>}}
        : tensor<?x64xf32>, tensor<?x2xi32>, tensor<?x2xf32>,
          !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
          !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<?x64xf32>
    // Two groups of 32 rows of K = 128.
    // CHECK: kf.grouped_linear {{.*}} {kf.kernel = #kf.kernel<{{[^>]*}}l2_rows = 32, l1_k = 128>}
    %z = kf.grouped_linear %o, %wo groups(2) {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 1, cols = [2]>}
        : tensor<2x256xf32>, !kf.qweight<q8_0, [64, 128]> -> tensor<2x64xf32>
    return %y, %z : tensor<?x64xf32>, tensor<2x64xf32>
  }
}

// -----

// x86-64-v3: 16 KiB of L1d for activations, 128 KiB of L2 for weights.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 8>} {
  // A K tail: 42 blocks of 32 fit the 8-column tile, so K = 4128 (129
  // blocks) takes four blocks, of 1056 each (1032 rounded up to the granule).
  // A Q4_0 row of 1056 is 594 bytes, 216 rows fit in groups of 8; a thread's
  // 512 rows are three blocks of 176.
  // CHECK-LABEL: func.func @v3
  func.func @v3(%x: tensor<17x4128xf32>, %q4: !kf.qweight<q4_0, [4096, 4128]>) -> tensor<17x4096xf32> {
    // CHECK: cols = [8, 4, 3, 2], l2_rows = 176, l1_k = 1056>}
    %a = kf.linear %x, %q4 {kf.kernel = #kf.kernel<isa = avx2, layout = q4_0_r8, max_cols = 8, threads = 8, cols = [8, 4, 3, 2]>}
        : tensor<17x4128xf32>, !kf.qweight<q4_0, [4096, 4128]> -> tensor<17x4096xf32>
    return %a : tensor<17x4096xf32>
  }
}

// -----

// neoverse-v1: 32 KiB of L1d for activations, 512 KiB of L2 for weights; 85
// blocks of 32 fit, so K = 4096 is two blocks of 2048; a thread's rows are
// 4096 / 64 = 64.
module attributes {kf.target = #kf.target<name = "neoverse-v1", triple = "aarch64-unknown-linux-gnu", cpu = "neoverse-v1", features = "+neon,+dotprod,+i8mm,+sve", l1d = 65536, l2 = 1048576, l3 = 33554432, cores = 64>} {
  // CHECK-LABEL: func.func @neoverse
  func.func @neoverse(%x: tensor<?x4096xf32>, %q8: !kf.qweight<q8_0, [4096, 4096]>) -> tensor<?x4096xf32> {
    // CHECK: cols = dynamic, l2_rows = 64, l1_k = 2048>}
    %a = kf.linear %x, %q8 {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = q8_0_r4, max_cols = 8, threads = 64, cols = dynamic>}
        : tensor<?x4096xf32>, !kf.qweight<q8_0, [4096, 4096]> -> tensor<?x4096xf32>
    return %a : tensor<?x4096xf32>
  }
}

// -----

// apple-m1: half of its 12 MiB L2 would hold 1285 IQ1_S rows of 4096 decoded
// (800 + 4096 bytes each), but the kernel decodes at most 1 MiB, 256 rows:
// a thread's 1024 rows are 4 blocks of 256. Decoding in every tile, they
// fit whole.
module attributes {kf.target = #kf.target<name = "apple-m1", triple = "aarch64-unknown-linux-gnu", cpu = "apple-m1", features = "+neon,+dotprod", l1d = 131072, l2 = 12582912, l3 = 0, cores = 4>} {
  // CHECK-LABEL: func.func @scratch_bound
  func.func @scratch_bound(%x: tensor<?x4096xf32>, %iq: !kf.qweight<iq1_s, [4096, 4096]>) -> (tensor<?x4096xf32>, tensor<?x4096xf32>) {
    // CHECK: cols = dynamic, l2_rows = 256, l1_k = 4096, decode = once>}
    %a = kf.linear %x, %iq {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = iq1_s_r4, max_cols = 8, threads = 4, cols = dynamic, decode = once>}
        : tensor<?x4096xf32>, !kf.qweight<iq1_s, [4096, 4096]> -> tensor<?x4096xf32>
    // CHECK: cols = dynamic, l2_rows = 1024, l1_k = 4096>}
    %b = kf.linear %x, %iq {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = iq1_s_r4, max_cols = 8, threads = 4, cols = dynamic>}
        : tensor<?x4096xf32>, !kf.qweight<iq1_s, [4096, 4096]> -> tensor<?x4096xf32>
    return %a, %b : tensor<?x4096xf32>, tensor<?x4096xf32>
  }
}
