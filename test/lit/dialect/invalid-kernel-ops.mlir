// RUN: kf-opt %s --split-input-file --verify-diagnostics

// The kernel-call ops (KfKernelOps.td) refuse ill-formed kernels, layouts
// and operands.

module {
  func.func @quantize_k_not_blocks(%x: tensor<?x48xf32>) -> tensor<?x60xi8> {
    // expected-error @+1 {{'kf.quantize_activations' op input has K = 48 columns, expected a multiple of 32}}
    %xq = kf.quantize_activations @kernels::@quantize(%x) : tensor<?x48xf32> -> tensor<?x60xi8>
    return %xq : tensor<?x60xi8>
  }
}

// -----

func.func @quantize_bytes(%x: tensor<?x64xf32>) -> tensor<?x64xi8> {
  // expected-error @+1 {{'kf.quantize_activations' op result must be [?, 96], got [?, 64]}}
  %xq = kf.quantize_activations @kernels::@quantize(%x) : tensor<?x64xf32> -> tensor<?x64xi8>
  return %xq : tensor<?x64xi8>
}

// -----

// bf16 activations: any K, in 64-byte blocks of 32, the last padded (K = 100:
// 4 blocks, 256 bytes, not 200).
func.func @quantize_bf16_bytes(%x: tensor<?x100xf32>) -> tensor<?x200xi8> {
  // expected-error @+1 {{'kf.quantize_activations' op result must be [?, 256], got [?, 200]}}
  %xq = kf.quantize_activations @kernels::@quantize(%x) format(bf16) : tensor<?x100xf32> -> tensor<?x200xi8>
  return %xq : tensor<?x200xi8>
}

// -----

module {
  func.func @quantize_missing_callee(%x: tensor<?x64xf32>) -> tensor<?x96xi8> {
    // expected-error @+1 {{'kf.quantize_activations' op callee @kernels::@quantize is not a function}}
    %xq = kf.quantize_activations @kernels::@quantize(%x) : tensor<?x64xf32> -> tensor<?x96xi8>
    return %xq : tensor<?x96xi8>
  }
}

// -----

module {
  func.func @quantize_callee_abi(%x: tensor<?x64xf32>) -> tensor<?x96xi8> {
    // expected-error @+1 {{'kf.quantize_activations' op callee @kernels::@quantize has type '(!llvm.ptr, i64, !llvm.ptr) -> ()', expected the quantizer ABI '(!llvm.ptr, i64, !llvm.ptr, i64) -> ()'}}
    %xq = kf.quantize_activations @kernels::@quantize(%x) : tensor<?x64xf32> -> tensor<?x96xi8>
    return %xq : tensor<?x96xi8>
  }
  module @kernels {
    func.func private @quantize(!llvm.ptr, i64, !llvm.ptr)
  }
}

// -----

func.func @qmatmul_no_decision(%xq: tensor<?x96xi8>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op needs the kf.kernel decisions its kernel was built from}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @qmatmul_fused_packed(%xq: tensor<?x96xi8>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op input must be the fp32 activations its kernel quantizes (quantize = fused), got 'tensor<?x96xi8>'}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2, quantize = fused>}
      : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @qmatmul_separate_floats(%x: tensor<?x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op input must be packed activations (i8), its kernel's quantize being separate, got 'tensor<?x64xf32>'}}
  %y = kf.qmatmul @kernels::@matmul(%x, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2>}
      : tensor<?x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @qmatmul_fused_k(%x: tensor<?x96xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op input must be [?, 64], got [?, 96]}}
  %y = kf.qmatmul @kernels::@matmul(%x, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2, quantize = fused>}
      : tensor<?x96xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @expert_qmatmul_fused_k(%x: tensor<?x2x32xf32>, %ids: tensor<?x2xi32>, %w: !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<?x2x32xf32> {
  // expected-error @+1 {{'kf.expert_qmatmul' op input must be [?, 2, 64], got [?, 2, 32]}}
  %y = kf.expert_qmatmul @kernels::@matmul(%x, %ids, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2, quantize = fused>}
      : tensor<?x2x32xf32>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<?x2x32xf32>
  return %y : tensor<?x2x32xf32>
}

// -----

func.func @qmatmul_input_bytes(%xq: tensor<?x64xi8>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op input must be [?, 96], got [?, 64]}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2>}
      : tensor<?x64xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @qmatmul_result(%xq: tensor<3x96xi8>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op result must be [3, 16], got [2, 16]}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2>}
      : tensor<3x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

func.func @qmatmul_q8_1_activations(%xq: tensor<?x96xi8>, %w: !kf.qweight<q4_1, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op weight format q4_1 takes q8_1 activations, expected a format that takes q8_0, q8_k, bf16 or f32 (the packed activations' blocks)}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q4_1_r8, max_cols = 8, threads = 2>}
      : tensor<?x96xi8>, !kf.qweight<q4_1, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// A K-quant reads Q8_K activations: 292 bytes per 256, not Q8_0's 320.
func.func @qmatmul_q8_k_bytes(%xq: tensor<?x320xi8>, %w: !kf.qweight<q4_k, [16, 256]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op input must be [?, 292], got [?, 320]}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q4_k_r8, max_cols = 8, threads = 2>}
      : tensor<?x320xi8>, !kf.qweight<q4_k, [16, 256]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @quantize_q8_k_bytes(%x: tensor<?x256xf32>) -> tensor<?x320xi8> {
  // expected-error @+1 {{'kf.quantize_activations' op result must be [?, 292], got [?, 320]}}
  %xq = kf.quantize_activations @kernels::@quantize(%x) format(q8_k) : tensor<?x256xf32> -> tensor<?x320xi8>
  return %xq : tensor<?x320xi8>
}

// -----

func.func @quantize_q8_k_k_not_blocks(%x: tensor<?x288xf32>) -> tensor<?x360xi8> {
  // expected-error @+1 {{'kf.quantize_activations' op input has K = 288 columns, expected a multiple of 256}}
  %xq = kf.quantize_activations @kernels::@quantize(%x) format(q8_k) : tensor<?x288xf32> -> tensor<?x360xi8>
  return %xq : tensor<?x360xi8>
}

// -----

func.func @quantize_format(%x: tensor<?x64xf32>) -> tensor<?x96xi8> {
  // expected-error @+1 {{'kf.quantize_activations' op format q4_0 has no packed activations, expected q8_0, q8_k, bf16 or f32}}
  %xq = kf.quantize_activations @kernels::@quantize(%x) format(q4_0) : tensor<?x64xf32> -> tensor<?x96xi8>
  return %xq : tensor<?x96xi8>
}

// -----

func.func @qmatmul_layout(%xq: tensor<?x96xi8>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op kf.kernel: layout q4_0_r8 does not hold the weight's format q8_0}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q4_0_r8, max_cols = 8, threads = 2>}
      : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

module {
  func.func @qmatmul_callee_abi(%xq: tensor<?x96xi8>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
    // expected-error @+1 {{'kf.qmatmul' op callee @kernels::@matmul has type '(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()', expected the matmul kernel ABI '(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> ()'}}
    %y = kf.qmatmul @kernels::@matmul(%xq, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2>}
        : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
  module @kernels {
    func.func private @matmul(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64)
  }
}

// -----

func.func @qmatmul_rows_outside(%xq: tensor<?x96xi8>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
  // expected-error @+1 {{'kf.qmatmul' op rows 8 .. 23 of the result are not rows of the weight '!kf.qweight<q8_0, [16, 64]>'}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) row_offset(8) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2>}
      : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @qmatmul_offset_alignment(%xq: tensor<?x96xi8>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'kf.qmatmul' op row_offset 4 is not a multiple of the layout's row group 8}}
  %y = kf.qmatmul @kernels::@matmul(%xq, %w) row_offset(4) {kf.kernel = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 2>}
      : tensor<?x96xi8>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @quantize_unknown_format(%x: tensor<?x256xf32>) -> tensor<?x292xi8> {
  // expected-error @+1 {{unknown format 'q3_z'}}
  %xq = kf.quantize_activations @kernels::@quantize(%x) format(q3_z) : tensor<?x256xf32> -> tensor<?x292xi8>
  return %xq : tensor<?x292xi8>
}

// -----

func.func @expert_qmatmul_not_a_stack(%xq: tensor<?x96xi8>, %ids: tensor<?x2xi32>, %w: !kf.qweight<mxfp4, [32, 64]>) -> tensor<?x2x32xf32> {
  // expected-error @+1 {{'kf.expert_qmatmul' op weight must be an [E, N, K] expert stack, got '!kf.qweight<mxfp4, [32, 64]>'}}
  %y = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2>}
      : tensor<?x96xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [32, 64]> -> tensor<?x2x32xf32>
  return %y : tensor<?x2x32xf32>
}

// -----

func.func @expert_qmatmul_input_tokens(%xq: tensor<3x96xi8>, %ids: tensor<2x2xi32>, %w: !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<2x2x32xf32> {
  // expected-error @+1 {{'kf.expert_qmatmul' op input must be [2, 96], got [3, 96]}}
  %y = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2>}
      : tensor<3x96xi8>, tensor<2x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<2x2x32xf32>
  return %y : tensor<2x2x32xf32>
}

// -----

func.func @expert_qmatmul_slot_rows(%xq: tensor<?x3x96xi8>, %ids: tensor<?x2xi32>, %w: !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<?x2x32xf32> {
  // expected-error @+1 {{'kf.expert_qmatmul' op input must be [?, 2, 96], got [?, 3, 96]}}
  %y = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2>}
      : tensor<?x3x96xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<?x2x32xf32>
  return %y : tensor<?x2x32xf32>
}

// -----

func.func @expert_qmatmul_result(%xq: tensor<?x96xi8>, %ids: tensor<?x2xi32>, %w: !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<?x32xf32> {
  // expected-error @+1 {{'kf.expert_qmatmul' op result must be [?, 2, 32], got [?, 32]}}
  %y = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2>}
      : tensor<?x96xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

func.func @expert_qmatmul_no_decision(%xq: tensor<?x96xi8>, %ids: tensor<?x2xi32>, %w: !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<?x2x32xf32> {
  // expected-error @+1 {{'kf.expert_qmatmul' op needs the kf.kernel decisions its kernel was built from}}
  %y = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %w)
      : tensor<?x96xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<?x2x32xf32>
  return %y : tensor<?x2x32xf32>
}

// -----

func.func @expert_qmatmul_q8_1_activations(%xq: tensor<?x96xi8>, %ids: tensor<?x2xi32>, %w: !kf.qweight<q4_1, [4, 32, 64]>) -> tensor<?x2x32xf32> {
  // expected-error @+1 {{'kf.expert_qmatmul' op weight format q4_1 takes q8_1 activations, expected a format that takes q8_0, q8_k, bf16 or f32 (the packed activations' blocks)}}
  %y = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = q4_1_r8, max_cols = 8, threads = 2>}
      : tensor<?x96xi8>, tensor<?x2xi32>, !kf.qweight<q4_1, [4, 32, 64]> -> tensor<?x2x32xf32>
  return %y : tensor<?x2x32xf32>
}

// -----

func.func @expert_qmatmul_static_cols(%xq: tensor<3x96xi8>, %ids: tensor<3x2xi32>, %w: !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<3x2x32xf32> {
  // expected-error @+1 {{'kf.expert_qmatmul' op kf.kernel: static cols [3] for a dynamic M (expected cols = dynamic)}}
  %y = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2, cols = [3]>}
      : tensor<3x96xi8>, tensor<3x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<3x2x32xf32>
  return %y : tensor<3x2x32xf32>
}

// -----

module {
  func.func @expert_qmatmul_callee_abi(%xq: tensor<?x96xi8>, %ids: tensor<?x2xi32>, %w: !kf.qweight<mxfp4, [4, 32, 64]>) -> tensor<?x2x32xf32> {
    // expected-error @+1 {{'kf.expert_qmatmul' op callee @kernels::@gate has type '(!llvm.ptr, i64, !llvm.ptr, i64) -> ()', expected the matmul kernel ABI '(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> ()'}}
    %y = kf.expert_qmatmul @kernels::@gate(%xq, %ids, %w) {kf.kernel = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 2>}
        : tensor<?x96xi8>, tensor<?x2xi32>, !kf.qweight<mxfp4, [4, 32, 64]> -> tensor<?x2x32xf32>
    return %y : tensor<?x2x32xf32>
  }
  module @kernels {
    func.func private @gate(!llvm.ptr, i64, !llvm.ptr, i64)
  }
}

// -----

func.func @quantize_slot_rows(%h: tensor<?x2x32xf32>) -> tensor<?x48xi8> {
  // expected-error @+1 {{'kf.quantize_activations' op result must be [?, 2, 48], got [?, 48]}}
  %hq = kf.quantize_activations @kernels::@quantize(%h) : tensor<?x2x32xf32> -> tensor<?x48xi8>
  return %hq : tensor<?x48xi8>
}

// -----

module {
  func.func @step_callee_abi(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    // expected-error @+1 {{'kf.step' op callee @kernels::@norm has type '(!llvm.ptr, i64, !llvm.ptr, i64) -> ()', expected the step kernel ABI '(!llvm.ptr, i64, i64, i64) -> ()'}}
    %y = kf.step @kernels::@norm(%x) items(1) : (tensor<?x64xf32>) -> tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
  module @kernels {
    func.func private @norm(!llvm.ptr, i64, !llvm.ptr, i64)
  }
}

// -----

func.func @step_items(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'kf.step' op must have at least one item per row, got 0}}
  %y = kf.step @kernels::@norm(%x) items(0) : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @step_split(%x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  // expected-error @+1 {{'kf.step' op input 0: a row of 192 bits does not split into 5 items of whole bytes}}
  %y = kf.step @kernels::@norm(%x) items(5) : (tensor<?x6xf32>) -> tensor<?x6xf32>
  return %y : tensor<?x6xf32>
}

// -----

func.func @step_rows(%x: tensor<?x64xf32>, %z: tensor<4x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'kf.step' op input 1 has another leading dimension than the first tensor read or written item by item}}
  %y = kf.step @kernels::@norm(%x, %z) items(1) : (tensor<?x64xf32>, tensor<4x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @step_whole(%x: tensor<?x64xf32>, %w: !kf.qweight<f32, [64]>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'kf.step' op whole input 1 must be a tensor}}
  %y = kf.step @kernels::@norm(%x, %w) items(1) whole [1] : (tensor<?x64xf32>, !kf.qweight<f32, [64]>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @step_whole_range(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'kf.step' op whole input 2 is not an input}}
  %y = kf.step @kernels::@norm(%x) items(1) whole [2] : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

func.func @step_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'kf.step' op input 0: only the leading dimension may be dynamic, got 'tensor<?x?xf32>'}}
  %y = kf.step @kernels::@norm(%x) items(1) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
