// RUN: kf-opt %s --split-input-file --kf-lower-quant-dot --cse | FileCheck %s

// The decisions are written out: the lowering reads the module's target and
// each linear's kf.kernel, nothing of the machine running the test.

// Two linears of one input share its quantizer after CSE; each gets its own
// kernel, bf16 rounding for the default precision, none for f32; the
// decision stays on the kf.qmatmul; a dynamic M keeps every column tile.
// CHECK-LABEL: func.func @avx512
// CHECK:      %[[W1:.*]] = kf.get_weight @w1
// CHECK:      %[[W2:.*]] = kf.get_weight @w2
// CHECK:      %[[X:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k64(%arg0) : tensor<?x64xf32> -> tensor<?x96xi8>
// CHECK-NEXT: %[[A:.*]] = kf.qmatmul @kernels::@kf_matmul_q8_0_avx512vnni_r16_c8_k64_n40_bf16(%[[X]], %[[W1]])
// CHECK-SAME:   {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = dynamic>}
// CHECK-SAME:   : tensor<?x96xi8>, !kf.qweight<q8_0, [40, 64]> -> tensor<?x40xf32>
// CHECK-NEXT: %[[B:.*]] = kf.qmatmul @kernels::@kf_matmul_q4_0_avx512vnni_r16_c8_k64_n32(%[[X]], %[[W2]]) precision(f32)
// CHECK-NEXT: return %[[A]], %[[B]]
// CHECK:      module @kernels {
// CHECK:        func.func @kf_matmul_q8_0_avx512vnni_r16_c8_k64_n40_bf16(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME:     target_cpu = "znver5"
// CHECK:          case 8 {
// The weights' loads are invariant (no kernel writes its weights), the
// activations' are not (a fused prologue writes them).
// CHECK:          llvm.load %{{.*}} invariant {alignment = 1 : i64} : !llvm.ptr -> vector<16xi16>
// CHECK:          llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> f32
// CHECK:          "llvm.x86.avx512.vpdpbusd.512"
// CHECK:          case 2 {
// CHECK:          case 1 {
// CHECK:        func.func @kf_quantize_q8_0_k64(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// CHECK:        func.func @kf_matmul_q4_0_avx512vnni_r16_c8_k64_n32(
// CHECK-NOT:  func.func
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  kf.weight @w1 : !kf.qweight<q8_0, [40, 64]>
  kf.weight @w2 : !kf.qweight<q4_0, [32, 64]>
  func.func @avx512(%x: tensor<?x64xf32>) -> (tensor<?x40xf32>, tensor<?x32xf32>) {
    %w1 = kf.get_weight @w1 : !kf.qweight<q8_0, [40, 64]>
    %w2 = kf.get_weight @w2 : !kf.qweight<q4_0, [32, 64]>
    %a = kf.linear %x, %w1 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x64xf32>, !kf.qweight<q8_0, [40, 64]> -> tensor<?x40xf32>
    %b = kf.linear %x, %w2 precision(f32) {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x64xf32>, !kf.qweight<q4_0, [32, 64]> -> tensor<?x32xf32>
    return %a, %b : tensor<?x40xf32>, tensor<?x32xf32>
  }
}

// -----

// Static M: the kernel holds the widest tile of its decomposition and the
// narrower ones only (M = 1: the 1-wide tile alone). Two linears of one
// shape and decision share a function. AVX2 on x86-64-v3, 8 rows.
// CHECK-LABEL: func.func @static_m
// CHECK: kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c1_k64_n16_bf16(
// CHECK: kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c1_k64_n16_bf16(
// CHECK: kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c4_k64_n16_bf16(
// CHECK: module @kernels {
// CHECK:   func.func @kf_matmul_q8_0_avx2_r8_c1_k64_n16_bf16(
// CHECK-SAME: target_cpu = "x86-64-v3"
// CHECK-NOT:  case 2 {
// CHECK:      "llvm.x86.avx2.pmadd.ub.sw"
// CHECK:   func.func @kf_quantize_q8_0_k64(
// CHECK:   func.func @kf_matmul_q8_0_avx2_r8_c4_k64_n16_bf16(
// CHECK:        case 4 {
// CHECK:        case 3 {
// CHECK:        case 2 {
// CHECK-NOT: func.func
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @w : !kf.qweight<q8_0, [16, 64]>
  func.func @static_m(%x1: tensor<1x64xf32>, %y1: tensor<1x64xf32>, %x9: tensor<9x64xf32>)
      -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<9x16xf32>) {
    %w = kf.get_weight @w : !kf.qweight<q8_0, [16, 64]>
    %a = kf.linear %x1, %w {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
    %b = kf.linear %y1, %w {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
    %c = kf.linear %x9, %w {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = [4, 3, 2]>}
        : tensor<9x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<9x16xf32>
    return %a, %b, %c : tensor<1x16xf32>, tensor<1x16xf32>, tensor<9x16xf32>
  }
}

// -----

// What no emitter builds for the target stays a kf.linear: a format without
// a decode emitter, and an ISA of another architecture. The portable kernel
// serves any target, one row per group.
// CHECK-LABEL: func.func @left_alone
// CHECK: kf.linear %arg0, %{{.*}} {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xs_r8
// CHECK: kf.linear %arg1, %{{.*}} {kf.kernel = #kf.kernel<isa = neon_dotprod
// CHECK: kf.qmatmul @kernels::@kf_matmul_q8_0_scalar_r1_c1_k64_n16_bf16(
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @w3 : !kf.qweight<iq2_xs, [16, 256]>
  kf.weight @w : !kf.qweight<q8_0, [16, 64]>
  func.func @left_alone(%z: tensor<1x256xf32>, %x: tensor<1x64xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
    %w3 = kf.get_weight @w3 : !kf.qweight<iq2_xs, [16, 256]>
    %w = kf.get_weight @w : !kf.qweight<q8_0, [16, 64]>
    %a = kf.linear %z, %w3 {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xs_r8, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x256xf32>, !kf.qweight<iq2_xs, [16, 256]> -> tensor<1x16xf32>
    %b = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = q8_0_r4, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
    %c = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
    return %a, %b, %c : tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
  }
}

// -----

// AArch64: sdot on 4 rows (the weight is repacked with signed lanes).
// CHECK-LABEL: func.func @neon
// CHECK: kf.qmatmul @kernels::@kf_matmul_q4_0_neon_dotprod_r4_c8_k64_n16_bf16(
// CHECK: func.func @kf_matmul_q4_0_neon_dotprod_r4_c8_k64_n16_bf16(
// CHECK-SAME: target_cpu = "neoverse-v1"
// CHECK: "llvm.aarch64.neon.sdot.v4i32.v16i8"
module attributes {kf.target = #kf.target<name = "neoverse-v1", triple = "aarch64-unknown-linux-gnu", cpu = "neoverse-v1", features = "+neon,+dotprod,+i8mm,+sve", l1d = 65536, l2 = 1048576, l3 = 33554432, cores = 4>} {
  kf.weight @w : !kf.qweight<q4_0, [16, 64]>
  func.func @neon(%x: tensor<?x64xf32>) -> tensor<?x16xf32> {
    %w = kf.get_weight @w : !kf.qweight<q4_0, [16, 64]>
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = q4_0_r4, max_cols = 8, threads = 4, cols = dynamic>}
        : tensor<?x64xf32>, !kf.qweight<q4_0, [16, 64]> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
}

// -----

// MXFP4, the routed experts' format, lowers as Q4_0 does; its codes become
// lanes by vpshufb.
// CHECK-LABEL: func.func @mxfp4
// CHECK:      kf.qmatmul @kernels::@kf_matmul_mxfp4_avx2_r8_c1_k64_n16_bf16(
// CHECK:      module @kernels {
// CHECK:        func.func @kf_matmul_mxfp4_avx2_r8_c1_k64_n16_bf16(
// CHECK:          "llvm.x86.avx2.pshuf.b"
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @w : !kf.qweight<mxfp4, [16, 64]>
  func.func @mxfp4(%x: tensor<1x64xf32>) -> tensor<1x16xf32> {
    %w = kf.get_weight @w : !kf.qweight<mxfp4, [16, 64]>
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<mxfp4, [16, 64]> -> tensor<1x16xf32>
    return %y : tensor<1x16xf32>
  }
}

// -----

// kf.grouped_linear: one kf.qmatmul per group on its slice of the input and
// its rows of the weight (row_offset), all by the kernel of one group's
// shape; the groups' results concatenated.
// CHECK-LABEL: func.func @grouped
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK:      %[[M:.*]] = tensor.dim %arg0, %[[C0]]
// CHECK:      %[[S0:.*]] = tensor.extract_slice %arg0[0, 0] [%[[M]], 64] [1, 1] : tensor<?x128xf32> to tensor<?x64xf32>
// CHECK:      %[[Q0:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k64(%[[S0]])
// CHECK:      %[[G0:.*]] = kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c8_k64_n16(%[[Q0]], %{{.*}}) precision(f32)
// CHECK-SAME:   -> tensor<?x16xf32>
// CHECK:      %[[S1:.*]] = tensor.extract_slice %arg0[0, 64] [%[[M]], 64] [1, 1]
// CHECK:      %[[Q1:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k64(%[[S1]])
// CHECK:      %[[G1:.*]] = kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c8_k64_n16(%[[Q1]], %{{.*}}) row_offset(16) precision(f32)
// CHECK:      tensor.concat dim(1) %[[G0]], %[[G1]] : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x32xf32>
// Groups of 4 rows do not start a packed row group of 8: left as it is.
// CHECK:      kf.grouped_linear
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @wo : !kf.qweight<q8_0, [32, 64]>
  kf.weight @small : !kf.qweight<q8_0, [8, 64]>
  func.func @grouped(%x: tensor<?x128xf32>) -> (tensor<?x32xf32>, tensor<?x8xf32>) {
    %wo = kf.get_weight @wo : !kf.qweight<q8_0, [32, 64]>
    %small = kf.get_weight @small : !kf.qweight<q8_0, [8, 64]>
    %y = kf.grouped_linear %x, %wo groups(2) precision(f32) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>}
        : tensor<?x128xf32>, !kf.qweight<q8_0, [32, 64]> -> tensor<?x32xf32>
    %z = kf.grouped_linear %x, %small groups(2) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>}
        : tensor<?x128xf32>, !kf.qweight<q8_0, [8, 64]> -> tensor<?x8xf32>
    return %y, %z : tensor<?x32xf32>, tensor<?x8xf32>
  }
}

// -----

// Q4_K reads Q8_K activations: the quantizer is the Q8_K one (format(q8_k),
// 292 bytes per 256 elements), which a Q6_K linear of the same input shares
// after CSE; the Q8_0 linear beside them gets its own Q8_0 quantizer.
// CHECK-LABEL: func.func @kquants
// CHECK:      %[[XK:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_k_k512(%arg0) format(q8_k) : tensor<?x512xf32> -> tensor<?x584xi8>
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_q4_k_avx512vnni_r16_c8_k512_n32_bf16(%[[XK]], %{{.*}}) {{.*}} : tensor<?x584xi8>, !kf.qweight<q4_k, [32, 512]> -> tensor<?x32xf32>
// CHECK:      %[[X0:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k512(%arg0) : tensor<?x512xf32> -> tensor<?x768xi8>
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_q8_0_avx512vnni_r16_c8_k512_n16_bf16(%[[X0]],
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_q6_k_avx512vnni_r16_c8_k512_n16_bf16(%[[XK]],
// CHECK:      module @kernels {
// CHECK:        func.func @kf_matmul_q4_k_avx512vnni_r16_c8_k512_n32_bf16(
// CHECK:          "llvm.x86.avx512.vpdpbusd.512"
// CHECK:        func.func @kf_quantize_q8_k_k512(
// CHECK:        func.func @kf_matmul_q8_0_avx512vnni_r16_c8_k512_n16_bf16(
// CHECK:        func.func @kf_quantize_q8_0_k512(
// CHECK:        func.func @kf_matmul_q6_k_avx512vnni_r16_c8_k512_n16_bf16(
// CHECK-NOT:  func.func
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  kf.weight @w4 : !kf.qweight<q4_k, [32, 512]>
  kf.weight @w8 : !kf.qweight<q8_0, [16, 512]>
  kf.weight @w6 : !kf.qweight<q6_k, [16, 512]>
  func.func @kquants(%x: tensor<?x512xf32>) -> (tensor<?x32xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
    %w4 = kf.get_weight @w4 : !kf.qweight<q4_k, [32, 512]>
    %w8 = kf.get_weight @w8 : !kf.qweight<q8_0, [16, 512]>
    %w6 = kf.get_weight @w6 : !kf.qweight<q6_k, [16, 512]>
    %a = kf.linear %x, %w4 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_k_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x512xf32>, !kf.qweight<q4_k, [32, 512]> -> tensor<?x32xf32>
    %b = kf.linear %x, %w8 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x512xf32>, !kf.qweight<q8_0, [16, 512]> -> tensor<?x16xf32>
    %c = kf.linear %x, %w6 {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q6_k_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x512xf32>, !kf.qweight<q6_k, [16, 512]> -> tensor<?x16xf32>
    return %a, %b, %c : tensor<?x32xf32>, tensor<?x16xf32>, tensor<?x16xf32>
  }
}

// -----

// IQ2_XXS reads Q8_K activations as the K-quants do. Its kernel gathers the
// lanes of its grid slots from a constant table (the grid with 43 added to
// each byte: entry 0, all 8s, is all 0x33), which the kernels' module holds
// once for all its kernels.
// CHECK-LABEL: func.func @iq2_xxs
// CHECK:      %[[XK:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_k_k512(%arg0) format(q8_k) : tensor<?x512xf32> -> tensor<?x584xi8>
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_iq2_xxs_avx2_r8_c8_k512_n32_bf16(%[[XK]], %{{.*}}) {{.*}} : tensor<?x584xi8>, !kf.qweight<iq2_xxs, [32, 512]> -> tensor<?x32xf32>
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_iq2_xxs_avx2_r8_c8_k512_n16_bf16(%[[XK]],
// CHECK:      module @kernels {
// CHECK:        llvm.mlir.global internal constant @kf_iq2_xxs_lanes(dense<"0x3333333333333333{{[0-9A-F]+}}"> : tensor<256xi64>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<256 x i64>
// CHECK-NOT:    llvm.mlir.global
// CHECK:        func.func @kf_matmul_iq2_xxs_avx2_r8_c8_k512_n32_bf16(
// CHECK:          llvm.mlir.addressof @kf_iq2_xxs_lanes
// CHECK:          llvm.intr.masked.gather
// CHECK:          "llvm.x86.avx2.pmadd.ub.sw"
// CHECK:        func.func @kf_quantize_q8_k_k512(
// CHECK:        func.func @kf_matmul_iq2_xxs_avx2_r8_c8_k512_n16_bf16(
// CHECK-NOT:  func.func
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @a : !kf.qweight<iq2_xxs, [32, 512]>
  kf.weight @b : !kf.qweight<iq2_xxs, [16, 512]>
  func.func @iq2_xxs(%x: tensor<?x512xf32>) -> (tensor<?x32xf32>, tensor<?x16xf32>) {
    %a = kf.get_weight @a : !kf.qweight<iq2_xxs, [32, 512]>
    %b = kf.get_weight @b : !kf.qweight<iq2_xxs, [16, 512]>
    %ya = kf.linear %x, %a {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 8, threads = 4, cols = dynamic>}
        : tensor<?x512xf32>, !kf.qweight<iq2_xxs, [32, 512]> -> tensor<?x32xf32>
    %yb = kf.linear %x, %b {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 8, threads = 4, cols = dynamic>}
        : tensor<?x512xf32>, !kf.qweight<iq2_xxs, [16, 512]> -> tensor<?x16xf32>
    return %ya, %yb : tensor<?x32xf32>, tensor<?x16xf32>
  }
}

// -----

// IQ1_S and IQ1_M share one lane table (iq1s_grid as 8 (v + 1): entry 0 is
// all -1, so all 0x00) in the kernels' module; on AVX-512 the IQ1 lanes go
// into vpdpbusd.
// CHECK-LABEL: func.func @iq1
// CHECK:      kf.qmatmul @kernels::@kf_matmul_iq1_s_avx512vnni_r16_c8_k256_n16_bf16(
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_iq1_m_avx512vnni_r16_c8_k256_n16_bf16(
// CHECK:      module @kernels {
// CHECK:        llvm.mlir.global internal constant @kf_iq1s_lanes(dense<"0x0000000000000000{{[0-9A-F]+}}"> : tensor<2048xi64>)
// CHECK-NOT:    llvm.mlir.global
// CHECK:        func.func @kf_matmul_iq1_s_avx512vnni_r16_c8_k256_n16_bf16(
// CHECK:          llvm.mlir.addressof @kf_iq1s_lanes
// CHECK:          llvm.intr.masked.gather
// CHECK:          "llvm.x86.avx512.vpdpbusd.512"
// CHECK:        func.func @kf_matmul_iq1_m_avx512vnni_r16_c8_k256_n16_bf16(
// CHECK:          llvm.mlir.addressof @kf_iq1s_lanes
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  kf.weight @s : !kf.qweight<iq1_s, [16, 256]>
  kf.weight @m : !kf.qweight<iq1_m, [16, 256]>
  func.func @iq1(%x: tensor<?x256xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
    %s = kf.get_weight @s : !kf.qweight<iq1_s, [16, 256]>
    %m = kf.get_weight @m : !kf.qweight<iq1_m, [16, 256]>
    %ys = kf.linear %x, %s {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_s_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x256xf32>, !kf.qweight<iq1_s, [16, 256]> -> tensor<?x16xf32>
    %ym = kf.linear %x, %m {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_m_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x256xf32>, !kf.qweight<iq1_m, [16, 256]> -> tensor<?x16xf32>
    return %ys, %ym : tensor<?x16xf32>, tensor<?x16xf32>
  }
}

// -----

// The ternary layouts decode IQ1's 2-bit codes with shifts: no lane table,
// no gather.
// CHECK-LABEL: func.func @iq1_ternary
// CHECK:      kf.qmatmul @kernels::@kf_matmul_iq1_s_ternary_avx512vnni_r16_c8_k256_n16_bf16(
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_iq1_m_ternary_avx2_r8_c8_k256_n16_bf16(
// CHECK:      module @kernels {
// CHECK-NOT:    llvm.mlir.global
// CHECK-NOT:    llvm.intr.masked.gather
// CHECK:        func.func @kf_matmul_iq1_s_ternary_avx512vnni_r16_c8_k256_n16_bf16(
// CHECK-NOT:    llvm.intr.masked.gather
// CHECK:          "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT:    llvm.intr.masked.gather
// CHECK:        func.func @kf_matmul_iq1_m_ternary_avx2_r8_c8_k256_n16_bf16(
// CHECK-NOT:    llvm.intr.masked.gather
// CHECK:          "llvm.x86.avx2.pmadd.ub.sw"
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  kf.weight @s : !kf.qweight<iq1_s, [16, 256]>
  kf.weight @m : !kf.qweight<iq1_m, [16, 256]>
  func.func @iq1_ternary(%x: tensor<?x256xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
    %s = kf.get_weight @s : !kf.qweight<iq1_s, [16, 256]>
    %m = kf.get_weight @m : !kf.qweight<iq1_m, [16, 256]>
    %ys = kf.linear %x, %s {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_s_r16_ternary, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x256xf32>, !kf.qweight<iq1_s, [16, 256]> -> tensor<?x16xf32>
    %ym = kf.linear %x, %m {kf.kernel = #kf.kernel<isa = avx2, layout = iq1_m_r8_ternary, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x256xf32>, !kf.qweight<iq1_m, [16, 256]> -> tensor<?x16xf32>
    return %ys, %ym : tensor<?x16xf32>, tensor<?x16xf32>
  }
}

// -----

// FRACTAL64 and VQ3_64 read Q8_0 activations (two blocks per 64 weights), so
// a Q8_0 linear of the same input shares their quantizer; on AVX-512 VBMI
// VQ3_64's 64-entry codebook lookups are vpermb, FRACTAL64's 8 levels vpshufb;
// VQ3_64's sub-scales are one vpermps each, the fp32 m looked up by the low
// bits of the sub-scale's byte.
// CHECK-LABEL: func.func @private_formats
// CHECK:      %[[X:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k128(%arg0) : tensor<?x128xf32> -> tensor<?x192xi8>
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_fractal64_avx512vnni_r16_c8_k128_n16_bf16(%[[X]],
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_vq3_64_avx512vnni_r16_c8_k128_n16_bf16(%[[X]],
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_q8_0_avx512vnni_r16_c8_k128_n16_bf16(%[[X]],
// CHECK:        func.func @kf_matmul_fractal64_avx512vnni_r16_c8_k128_n16_bf16(
// CHECK:          "llvm.x86.avx512.pshuf.b.512"
// CHECK:          "llvm.x86.avx512.vpdpbusd.512"
// CHECK:        func.func @kf_matmul_vq3_64_avx512vnni_r16_c8_k128_n16_bf16(
// CHECK:          "llvm.x86.avx512.permvar.qi.512"
// CHECK:          "llvm.x86.avx512.vpdpbusd.512"
// CHECK:          "llvm.x86.avx512.permvar.sf.512"
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  kf.weight @f : !kf.qweight<fractal64, [16, 128]>
  kf.weight @v : !kf.qweight<vq3_64, [16, 128]>
  kf.weight @q : !kf.qweight<q8_0, [16, 128]>
  func.func @private_formats(%x: tensor<?x128xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
    %f = kf.get_weight @f : !kf.qweight<fractal64, [16, 128]>
    %v = kf.get_weight @v : !kf.qweight<vq3_64, [16, 128]>
    %q = kf.get_weight @q : !kf.qweight<q8_0, [16, 128]>
    %yf = kf.linear %x, %f {kf.kernel = #kf.kernel<isa = avx512vnni, layout = fractal64_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x128xf32>, !kf.qweight<fractal64, [16, 128]> -> tensor<?x16xf32>
    %yv = kf.linear %x, %v {kf.kernel = #kf.kernel<isa = avx512vnni, layout = vq3_64_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x128xf32>, !kf.qweight<vq3_64, [16, 128]> -> tensor<?x16xf32>
    %yq = kf.linear %x, %q {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x128xf32>, !kf.qweight<q8_0, [16, 128]> -> tensor<?x16xf32>
    return %yf, %yv, %yq : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
  }
}

// -----

// The decided cache blocks go into the kernel (and its name) when a call
// can have more columns than one tile; a static M of one tile ignores them.
// CHECK-LABEL: func.func @cache_blocks
// CHECK: kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c8_k64_n16_bf16_l1k32_l2r8(
// CHECK: kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c1_k64_n16_bf16(
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @w : !kf.qweight<q8_0, [16, 64]>
  func.func @cache_blocks(%x: tensor<?x64xf32>, %x1: tensor<1x64xf32>) -> (tensor<?x16xf32>, tensor<1x16xf32>) {
    %w = kf.get_weight @w : !kf.qweight<q8_0, [16, 64]>
    %a = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic, l2_rows = 8, l1_k = 32>}
        : tensor<?x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
    %b = kf.linear %x1, %w {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = [1], l2_rows = 8, l1_k = 32>}
        : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
    return %a, %b : tensor<?x16xf32>, tensor<1x16xf32>
  }
}

// -----

// decode = once: a kernel that can see more columns than one tile (suffix
// _do) decodes each row block once, into a scratch on its stack, before its
// column tiles, and keeps the nest that decodes as it goes for calls of one
// tile (scf.if); a static M of one tile has no cache blocks and decodes as it
// goes.
// CHECK-LABEL: func.func @decode_once
// CHECK: kf.qmatmul @kernels::@kf_matmul_iq1_s_avx2_r8_c8_k512_n16_bf16_l1k256_l2r8_do(
// CHECK: kf.qmatmul @kernels::@kf_matmul_iq1_s_avx2_r8_c1_k512_n16_bf16(
// CHECK: func.func @kf_matmul_iq1_s_avx2_r8_c8_k512_n16_bf16_l1k256_l2r8_do(
// CHECK:   %[[BYTES:.*]] = arith.constant 2048 : i64
// CHECK:   llvm.alloca %[[BYTES]] x i8 {alignment = 64 : i64}
// CHECK:   scf.if
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @w : !kf.qweight<iq1_s, [16, 512]>
  func.func @decode_once(%x: tensor<?x512xf32>, %x1: tensor<1x512xf32>) -> (tensor<?x16xf32>, tensor<1x16xf32>) {
    %w = kf.get_weight @w : !kf.qweight<iq1_s, [16, 512]>
    %a = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = avx2, layout = iq1_s_r8, max_cols = 8, threads = 4, cols = dynamic, l2_rows = 8, l1_k = 256, decode = once>}
        : tensor<?x512xf32>, !kf.qweight<iq1_s, [16, 512]> -> tensor<?x16xf32>
    %b = kf.linear %x1, %w {kf.kernel = #kf.kernel<isa = avx2, layout = iq1_s_r8, max_cols = 8, threads = 4, cols = [1], l2_rows = 8, l1_k = 256, decode = once>}
        : tensor<1x512xf32>, !kf.qweight<iq1_s, [16, 512]> -> tensor<1x16xf32>
    return %a, %b : tensor<?x16xf32>, tensor<1x16xf32>
  }
}

// -----

// The float formats: BF16 by vdpbf16ps (avx512bf16) on bf16 activations, F32
// by FMA (avx512) on f32 activations, each packed by its own converter. K =
// 100 is no multiple of the 64-byte blocks (32 bf16, 16 f32): the packed
// rows end in a zero-padded block, ceil(100 / 32) * 64 and ceil(100 / 16) *
// 64 bytes.
// CHECK-LABEL: func.func @floats
// CHECK:      %[[XB:.*]] = kf.quantize_activations @kernels::@kf_quantize_bf16_k100(%arg0) format(bf16) : tensor<?x100xf32> -> tensor<?x256xi8>
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_bf16_avx512bf16_r16_c8_k100_n32_bf16(%[[XB]], %{{.*}})
// CHECK-SAME:   : tensor<?x256xi8>, !kf.qweight<bf16, [32, 100]> -> tensor<?x32xf32>
// CHECK:      %[[XF:.*]] = kf.quantize_activations @kernels::@kf_quantize_f32_k100(%arg0) format(f32) : tensor<?x100xf32> -> tensor<?x448xi8>
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_f32_avx512_r16_c8_k100_n16(%[[XF]], %{{.*}}) precision(f32)
// CHECK:      module @kernels {
// CHECK:        func.func @kf_matmul_bf16_avx512bf16_r16_c8_k100_n32_bf16(
// CHECK:          "llvm.x86.avx512bf16.dpbf16ps.512"({{.*}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// CHECK:        func.func @kf_quantize_bf16_k100(
// CHECK:        func.func @kf_matmul_f32_avx512_r16_c8_k100_n16(
// CHECK-NOT:      llvm.call_intrinsic
// CHECK:          vector.fma {{.*}} : vector<16xf32>
// CHECK:        func.func @kf_quantize_f32_k100(
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  kf.weight @wb : !kf.qweight<bf16, [32, 100]>
  kf.weight @wf : !kf.qweight<f32, [16, 100]>
  func.func @floats(%x: tensor<?x100xf32>) -> (tensor<?x32xf32>, tensor<?x16xf32>) {
    %wb = kf.get_weight @wb : !kf.qweight<bf16, [32, 100]>
    %wf = kf.get_weight @wf : !kf.qweight<f32, [16, 100]>
    %a = kf.linear %x, %wb {kf.kernel = #kf.kernel<isa = avx512bf16, layout = bf16_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x100xf32>, !kf.qweight<bf16, [32, 100]> -> tensor<?x32xf32>
    %b = kf.linear %x, %wf precision(f32) {kf.kernel = #kf.kernel<isa = avx512, layout = f32_r16, max_cols = 8, threads = 16, cols = dynamic>}
        : tensor<?x100xf32>, !kf.qweight<f32, [16, 100]> -> tensor<?x16xf32>
    return %a, %b : tensor<?x32xf32>, tensor<?x16xf32>
  }
}

// -----

// A kf.moe whose six matmuls all have emitters: the routed stacks become
// kf.expert_qmatmul ops of one expert's kernel (the routing is the
// executor's), the shared expert ordinary kf.qmatmul ops. Under
// fp8_activations each linear's input takes FP8SIM first; the gate and up
// projections, routed and shared, share the input's quantization after CSE.
// The routing weight enters in the SwiGLU, before the down projection.
// CHECK-LABEL: func.func @moe
// CHECK-SAME:   (%[[IN:.*]]: tensor<?x128xf32>, %[[IDS:.*]]: tensor<?x2xi32>, %[[W:.*]]: tensor<?x2xf32>, %[[GE:[^:]*]]: {{.*}}, %[[UE:[^:]*]]: {{.*}}, %[[DE:[^:]*]]: {{.*}}, %[[SG:[^:]*]]: {{.*}}, %[[SU:[^:]*]]: {{.*}}, %[[SD:[^:]*]]: {{.*}})
// CHECK:      %[[X:.*]] = kf.fp8_sim %[[IN]] block(128) : tensor<?x128xf32>
// CHECK-NEXT: %[[XQ:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k128(%[[X]]) : tensor<?x128xf32> -> tensor<?x192xi8>
// CHECK-NEXT: %[[G:.*]] = kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx2_r8_c8_k128_n256_bf16(%[[XQ]], %[[IDS]], %[[GE]])
// CHECK-SAME:   {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = dynamic>}
// CHECK-SAME:   : tensor<?x192xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 256, 128]> -> tensor<?x2x256xf32>
// CHECK-NEXT: %[[U:.*]] = kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx2_r8_c8_k128_n256_bf16(%[[XQ]], %[[IDS]], %[[UE]])
// CHECK-NEXT: %[[H:.*]] = kf.swiglu %[[G]], %[[U]] weights(%[[W]] : tensor<?x2xf32>) limit(2.000000e+00) : tensor<?x2x256xf32>
// CHECK-NEXT: %[[HS:.*]] = kf.fp8_sim %[[H]] block(128) : tensor<?x2x256xf32>
// CHECK-NEXT: %[[HQ:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k256(%[[HS]]) : tensor<?x2x256xf32> -> tensor<?x2x384xi8>
// CHECK-NEXT: %[[D:.*]] = kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx2_r8_c8_k256_n128_bf16(%[[HQ]], %[[IDS]], %[[DE]])
// CHECK-SAME:   : tensor<?x2x384xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 128, 256]> -> tensor<?x2x128xf32>
// CHECK-NEXT: %[[SGY:.*]] = kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c8_k128_n128_bf16(%[[XQ]], %[[SG]])
// CHECK-NEXT: %[[SUY:.*]] = kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c8_k128_n128_bf16(%[[XQ]], %[[SU]])
// CHECK-NEXT: %[[SH:.*]] = kf.swiglu %[[SGY]], %[[SUY]] limit(1.500000e+00) : tensor<?x128xf32>
// CHECK-NEXT: %[[SHS:.*]] = kf.fp8_sim %[[SH]] block(128) : tensor<?x128xf32>
// CHECK-NEXT: %[[SHQ:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k128(%[[SHS]])
// CHECK-NEXT: %[[S:.*]] = kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c8_k128_n128_bf16(%[[SHQ]], %[[SD]])
// CHECK-NEXT: %[[Y:.*]] = kf.moe_combine %[[D]], %[[S]] : tensor<?x2x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
// CHECK-NEXT: return %[[Y]]
// CHECK:      module @kernels {
// CHECK-DAG:    func.func @kf_matmul_mxfp4_avx2_r8_c8_k128_n256_bf16(
// CHECK-DAG:    func.func @kf_matmul_mxfp4_avx2_r8_c8_k256_n128_bf16(
// CHECK-DAG:    func.func @kf_matmul_q8_0_avx2_r8_c8_k128_n128_bf16(
// CHECK-DAG:    func.func @kf_quantize_q8_0_k128(
// CHECK-DAG:    func.func @kf_quantize_q8_0_k256(
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @moe(%x: tensor<?x128xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                 %g: !kf.qweight<mxfp4, [4, 256, 128]>, %u: !kf.qweight<mxfp4, [4, 256, 128]>, %d: !kf.qweight<mxfp4, [4, 128, 256]>,
                 %sg: !kf.qweight<q8_0, [128, 128]>, %su: !kf.qweight<q8_0, [128, 128]>, %sd: !kf.qweight<q8_0, [128, 128]>) -> tensor<?x128xf32> {
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(2.0) shared_limit(1.5) fp8_activations
        {kf.kernel = {gate_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      up_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      down_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      gate_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      up_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>,
                      down_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = dynamic>}}
        : tensor<?x128xf32>, tensor<?x2xi32>, tensor<?x2xf32>,
          !kf.qweight<mxfp4, [4, 256, 128]>, !kf.qweight<mxfp4, [4, 256, 128]>, !kf.qweight<mxfp4, [4, 128, 256]>,
          !kf.qweight<q8_0, [128, 128]>, !kf.qweight<q8_0, [128, 128]>, !kf.qweight<q8_0, [128, 128]> -> tensor<?x128xf32>
    return %y : tensor<?x128xf32>
  }
}

// -----

// quantize = fused: the kernel (suffix _fq) takes the fp32 activations and
// quantizes them itself, so no quantizer is built or called for it; the
// routed experts of one token take their fp32 rows too, the down projection
// one per slot. Where the decision keeps the quantizer separate (the shared
// down projection here), it stays.
// CHECK-LABEL: func.func @fused
// CHECK-SAME:   (%[[IN:[^:]*]]: tensor<1x128xf32>, %[[IDS:[^:]*]]: tensor<1x2xi32>
// CHECK:      %[[L:.*]] = kf.qmatmul @kernels::@kf_matmul_q4_k_avx512vnni_r16_c1_k256_n32_bf16_fq(%[[A:.*]], %{{.*}})
// CHECK-SAME:   quantize = fused>} : tensor<1x256xf32>, !kf.qweight<q4_k, [32, 256]> -> tensor<1x32xf32>
// CHECK:      %[[G:.*]] = kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx512vnni_r16_c1_k128_n64_bf16_fq(%[[IN]], %[[IDS]], %{{.*}})
// CHECK-SAME:   : tensor<1x128xf32>, tensor<1x2xi32>, !kf.qweight<mxfp4, [4, 64, 128]> -> tensor<1x2x64xf32>
// CHECK-NEXT: %[[U:.*]] = kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx512vnni_r16_c1_k128_n64_bf16_fq(%[[IN]], %[[IDS]], %{{.*}})
// CHECK-NEXT: %[[H:.*]] = kf.swiglu %[[G]], %[[U]]
// CHECK-NEXT: %[[D:.*]] = kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx512vnni_r16_c1_k64_n128_bf16_fq(%[[H]], %[[IDS]], %{{.*}})
// CHECK-SAME:   : tensor<1x2x64xf32>, tensor<1x2xi32>, !kf.qweight<mxfp4, [4, 128, 64]> -> tensor<1x2x128xf32>
// CHECK-NEXT: %[[SG:.*]] = kf.qmatmul @kernels::@kf_matmul_q8_0_avx512vnni_r16_c1_k128_n64_bf16_fq(%[[IN]], %{{.*}})
// CHECK-NEXT: %[[SU:.*]] = kf.qmatmul @kernels::@kf_matmul_q8_0_avx512vnni_r16_c1_k128_n64_bf16_fq(%[[IN]], %{{.*}})
// CHECK-NEXT: %[[SH:.*]] = kf.swiglu %[[SG]], %[[SU]]
// CHECK-NEXT: %[[SHQ:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k64(%[[SH]]) : tensor<1x64xf32> -> tensor<1x96xi8>
// CHECK-NEXT: kf.qmatmul @kernels::@kf_matmul_q8_0_avx512vnni_r16_c1_k64_n128_bf16(%[[SHQ]], %{{.*}})
// CHECK:      module @kernels {
// CHECK-NOT:    func.func @kf_quantize_q8_k
// CHECK-NOT:    func.func @kf_quantize_q8_0_k128
// CHECK:        func.func @kf_matmul_q4_k_avx512vnni_r16_c1_k256_n32_bf16_fq(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME:     passthrough = ["no-builtins"]
// CHECK:          llvm.alloca %{{.*}} x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK:          scf.while
// CHECK:          "llvm.x86.avx512.vpdpbusd.512"
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  func.func @fused(%x: tensor<1x128xf32>, %ids: tensor<1x2xi32>, %w: tensor<1x2xf32>, %a: tensor<1x256xf32>,
                   %wk: !kf.qweight<q4_k, [32, 256]>,
                   %g: !kf.qweight<mxfp4, [4, 64, 128]>, %u: !kf.qweight<mxfp4, [4, 64, 128]>, %d: !kf.qweight<mxfp4, [4, 128, 64]>,
                   %sg: !kf.qweight<q8_0, [64, 128]>, %su: !kf.qweight<q8_0, [64, 128]>, %sd: !kf.qweight<q8_0, [128, 64]>)
      -> (tensor<1x32xf32>, tensor<1x128xf32>) {
    %l = kf.linear %a, %wk {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_k_r16, max_cols = 8, threads = 16, cols = [1], quantize = fused>}
        : tensor<1x256xf32>, !kf.qweight<q4_k, [32, 256]> -> tensor<1x32xf32>
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(2.0) shared_limit(1.5)
        {kf.kernel = {gate_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16, cols = [1], quantize = fused>,
                      up_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16, cols = [1], quantize = fused>,
                      down_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16, cols = [1], quantize = fused>,
                      gate_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = [1], quantize = fused>,
                      up_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = [1], quantize = fused>,
                      down_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = [1]>}}
        : tensor<1x128xf32>, tensor<1x2xi32>, tensor<1x2xf32>,
          !kf.qweight<mxfp4, [4, 64, 128]>, !kf.qweight<mxfp4, [4, 64, 128]>, !kf.qweight<mxfp4, [4, 128, 64]>,
          !kf.qweight<q8_0, [64, 128]>, !kf.qweight<q8_0, [64, 128]>, !kf.qweight<q8_0, [128, 64]> -> tensor<1x128xf32>
    return %l, %y : tensor<1x32xf32>, tensor<1x128xf32>
  }
}

// -----

// AArch64 with bf16: bfdot on 4 rows, the bf16 pairs its operands.
// CHECK-LABEL: func.func @neon_floats
// CHECK: kf.qmatmul @kernels::@kf_matmul_bf16_neon_bf16_r4_c1_k64_n8_bf16(
// CHECK: func.func @kf_matmul_bf16_neon_bf16_r4_c1_k64_n8_bf16(
// CHECK-SAME: target_cpu = "neoverse-v1"
// CHECK: "llvm.aarch64.neon.bfdot.v4f32.v8bf16"({{.*}}) : (vector<4xf32>, vector<8xbf16>, vector<8xbf16>) -> vector<4xf32>
module attributes {kf.target = #kf.target<name = "neoverse-v1", triple = "aarch64-unknown-linux-gnu", cpu = "neoverse-v1", features = "+neon,+dotprod,+i8mm,+sve,+bf16", l1d = 65536, l2 = 1048576, l3 = 33554432, cores = 4>} {
  kf.weight @w : !kf.qweight<bf16, [8, 64]>
  func.func @neon_floats(%x: tensor<1x64xf32>) -> tensor<1x8xf32> {
    %w = kf.get_weight @w : !kf.qweight<bf16, [8, 64]>
    %y = kf.linear %x, %w {kf.kernel = #kf.kernel<isa = neon_bf16, layout = bf16_r4, max_cols = 8, threads = 4, cols = [1]>}
        : tensor<1x64xf32>, !kf.qweight<bf16, [8, 64]> -> tensor<1x8xf32>
    return %y : tensor<1x8xf32>
  }
}

// -----

// A decode step (T = 1): every bucket holds the one token, so the expert
// kernels are the 1-column ones; without fp8_activations the input is
// quantized as it is.
// CHECK-LABEL: func.func @moe_decode
// CHECK:      %[[XQ:.*]] = kf.quantize_activations @kernels::@kf_quantize_q8_0_k128(%arg0) : tensor<1x128xf32> -> tensor<1x192xi8>
// CHECK-NEXT: kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx2_r8_c1_k128_n256_bf16(%[[XQ]], %arg1, %arg3) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = [1]>} : tensor<1x192xi8>, tensor<1x2xi32>, {{.*}} -> tensor<1x2x256xf32>
// CHECK:      kf.swiglu
// CHECK-NEXT: kf.quantize_activations @kernels::@kf_quantize_q8_0_k256(%{{.*}}) : tensor<1x2x256xf32> -> tensor<1x2x384xi8>
// CHECK-NEXT: kf.expert_qmatmul @kernels::@kf_matmul_mxfp4_avx2_r8_c1_k256_n128_bf16(
// CHECK:      kf.qmatmul @kernels::@kf_matmul_q8_0_avx2_r8_c1_k128_n128_bf16(%[[XQ]], %arg6)
// CHECK:      kf.moe_combine
// CHECK-NOT:  kf.fp8_sim
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @moe_decode(%x: tensor<1x128xf32>, %ids: tensor<1x2xi32>, %w: tensor<1x2xf32>,
                        %g: !kf.qweight<mxfp4, [4, 256, 128]>, %u: !kf.qweight<mxfp4, [4, 256, 128]>, %d: !kf.qweight<mxfp4, [4, 128, 256]>,
                        %sg: !kf.qweight<q8_0, [128, 128]>, %su: !kf.qweight<q8_0, [128, 128]>, %sd: !kf.qweight<q8_0, [128, 128]>) -> tensor<1x128xf32> {
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(2.0) shared_limit(2.0)
        {kf.kernel = {gate_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = [1]>,
                      up_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = [1]>,
                      down_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 4, cols = [1]>,
                      gate_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = [1]>,
                      up_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = [1]>,
                      down_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 4, cols = [1]>}}
        : tensor<1x128xf32>, tensor<1x2xi32>, tensor<1x2xf32>,
          !kf.qweight<mxfp4, [4, 256, 128]>, !kf.qweight<mxfp4, [4, 256, 128]>, !kf.qweight<mxfp4, [4, 128, 256]>,
          !kf.qweight<q8_0, [128, 128]>, !kf.qweight<q8_0, [128, 128]>, !kf.qweight<q8_0, [128, 128]> -> tensor<1x128xf32>
    return %y : tensor<1x128xf32>
  }
}

// -----

// One stack without an emitter (IQ2_XXS down experts) leaves the whole
// kf.moe to the reference path: neither its other stacks nor its shared
// expert are lowered, and no kernel is built for them.
// CHECK-LABEL: func.func @moe_left_alone
// CHECK:     kf.moe %arg0, %arg1, %arg2
// CHECK-NOT: kf.qmatmul
// CHECK-NOT: kf.expert_qmatmul
// CHECK-NOT: module @kernels
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @moe_left_alone(%x: tensor<?x256xf32>, %ids: tensor<?x2xi32>, %w: tensor<?x2xf32>,
                            %g: !kf.qweight<mxfp4, [4, 256, 256]>, %u: !kf.qweight<mxfp4, [4, 256, 256]>, %d: !kf.qweight<iq2_xs, [4, 256, 256]>,
                            %sg: !kf.qweight<q8_0, [128, 256]>, %su: !kf.qweight<q8_0, [128, 256]>, %sd: !kf.qweight<q8_0, [256, 128]>) -> tensor<?x256xf32> {
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
