// RUN: kf-opt %s --split-input-file --kf-lower-ops --kf-build-plan -verify-diagnostics

// expected-error @+1 {{kf-lower-ops: the module has no kf.target; run --kf-set-target first}}
module {
  func.func @no_target(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @no_kernel(%x: tensor<?x64xf32>, %w: !kf.qweight<q5_0, [32, 64]>) -> (tensor<?x64xf32>, tensor<?x32xf32>) {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    // A linear is lowered by --kf-lower-quant-dot, which did not run.
    // expected-error @+1 {{'kf.linear' op kf-build-plan: no compiled kernel computes this op yet: no kernel reads the format of argument 1 (q5_0), so a plan cannot run it}}
    %z = kf.linear %x, %w : tensor<?x64xf32>, !kf.qweight<q5_0, [32, 64]> -> tensor<?x32xf32>
    return %y, %z : tensor<?x64xf32>, tensor<?x32xf32>
  }
}

// -----

// A model's weight is named with its format.
module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  kf.weight @blk.0.attn_q_a.weight : !kf.qweight<q4_1, [32, 64]>
  func.func @no_kernel_for_the_file(%x: tensor<?x64xf32>) -> tensor<?x32xf32> {
    %w = kf.get_weight @blk.0.attn_q_a.weight : !kf.qweight<q4_1, [32, 64]>
    // expected-error @+1 {{'kf.linear' op kf-build-plan: no compiled kernel computes this op yet: no kernel reads the format of blk.0.attn_q_a.weight (q4_1), so a plan cannot run it}}
    %z = kf.linear %x, %w : tensor<?x64xf32>, !kf.qweight<q4_1, [32, 64]> -> tensor<?x32xf32>
    return %z : tensor<?x32xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @returns_argument(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    // expected-error @+1 {{'func.return' op kf-build-plan: returns (a reshape of) argument 0, which a plan would have to copy}}
    return %y, %x : tensor<?x64xf32>, tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @returns_twice(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    // expected-error @+1 {{'func.return' op kf-build-plan: returns one value twice}}
    return %y, %y : tensor<?x64xf32>, tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @named_twice(%x: tensor<?x64xf32>) -> (tensor<?x64xf32> {kf.name = "out"}, tensor<?x64xf32> {kf.name = "out"}) {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    %z = kf.rms_norm %y eps(1.0e-06) : tensor<?x64xf32>
    // expected-error @+1 {{'func.return' op kf-build-plan: two run buffers are named 'out'}}
    return %y, %z : tensor<?x64xf32>, tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  // expected-error @+1 {{'func.func' op kf-build-plan: argument 1 has another token dimension than the function's first tensor}}
  func.func @rows(%x: tensor<?x64xf32>, %z: tensor<4x64xf32>) -> tensor<?x64xf32> {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @token_reshape(%x: tensor<?x64xf32>) -> tensor<?xf32> {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    // expected-error @+1 {{'tensor.collapse_shape' op kf-build-plan: reshapes the token dimension}}
    %c = tensor.collapse_shape %y [[0, 1]] : tensor<?x64xf32> into tensor<?xf32>
    return %c : tensor<?xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @concat_arguments(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>) -> (tensor<?x128xf32>, tensor<?x64xf32>) {
    %n = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    // expected-error @+1 {{'tensor.concat' op kf-build-plan: concatenates a value that is not computed in its place (an argument, or a value used elsewhere too)}}
    %c = tensor.concat dim(1) %n, %y : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x128xf32>
    %d = kf.rms_norm %c eps(1.0e-06) : tensor<?x128xf32>
    return %d, %n : tensor<?x128xf32>, tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @slice_to_step(%x: tensor<?x128xf32>) -> tensor<?x64xf32> {
    %c0 = arith.constant 0 : index
    %t = tensor.dim %x, %c0 : tensor<?x128xf32>
    %s = tensor.extract_slice %x[0, 64] [%t, 64] [1, 1] : tensor<?x128xf32> to tensor<?x64xf32>
    // expected-error @+1 {{'kf.step' op kf-build-plan: reads or writes a column slice, which only a quantizer's input and a matmul's output may be}}
    %n = kf.rms_norm %s eps(1.0e-06) : tensor<?x64xf32>
    return %n : tensor<?x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @slice_of_heads(%x: tensor<?x2x64xf32>) -> tensor<?x2x64xf32> {
    %n = kf.rms_norm %x eps(1.0e-06) : tensor<?x2x64xf32>
    %c0 = arith.constant 0 : index
    %t = tensor.dim %n, %c0 : tensor<?x2x64xf32>
    // expected-error @+1 {{'tensor.extract_slice' op kf-build-plan: a plan takes slices of a [T, N] tensor's columns only}}
    %s = tensor.extract_slice %n[0, 0, 0] [%t, 2, 32] [1, 1, 1] : tensor<?x2x64xf32> to tensor<?x2x32xf32>
    return %n : tensor<?x2x64xf32>
  }
}

// -----

module attributes {kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @returns_slice(%x: tensor<?x128xf32>) -> tensor<?x64xf32> {
    %n = kf.rms_norm %x eps(1.0e-06) : tensor<?x128xf32>
    %c0 = arith.constant 0 : index
    %t = tensor.dim %n, %c0 : tensor<?x128xf32>
    %s = tensor.extract_slice %n[0, 64] [%t, 64] [1, 1] : tensor<?x128xf32> to tensor<?x64xf32>
    // expected-error @+1 {{'func.return' op kf-build-plan: returns a column slice, which a plan would have to copy}}
    return %s : tensor<?x64xf32>
  }
}

// -----

// A module whose window rings were sized for runs of 16 rows takes no
// larger ones: kf-build-plan's default max-rows is 512.
// expected-error @+1 {{kf-build-plan: max-rows 512 exceeds the 16 rows the module's window rings hold beside the window (kf.max_rows); build the graph for it}}
module attributes {kf.max_rows = 16 : i64, kf.target = #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @rows(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
    %y = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
    return %y : tensor<?x64xf32>
  }
}
