// The i32 case builds IR the kf.linear verifier refuses, to check the pass
// does not rely on it: parse it without verifying.
// RUN: kf-opt %s --split-input-file --kf-select-kernels -verify-diagnostics --mlir-very-unsafe-disable-verifier-on-parsing

// Decisions come from the module's target, never from the host's.
// expected-error @+1 {{kf-select-kernels: the module has no kf.target; run --kf-set-target first}}
module {
  func.func @f(%x: tensor<?x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<?x16xf32> {
    %y = kf.linear %x, %w : tensor<?x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
}

// -----

// An integer table is looked up, never multiplied.
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  func.func @f(%x: tensor<?x64xf32>, %w: !kf.qweight<i32, [16, 64]>) -> tensor<?x16xf32> {
    // expected-error @+1 {{'kf.linear' op weight '!kf.qweight<i32, [16, 64]>' is an integer table, not a weight a matmul multiplies by}}
    %y = kf.linear %x, %w : tensor<?x64xf32>, !kf.qweight<i32, [16, 64]> -> tensor<?x16xf32>
    return %y : tensor<?x16xf32>
  }
}
