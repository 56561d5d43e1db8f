// RUN: kf-opt %s --kf-set-target=target=znver5 | FileCheck %s --check-prefix=ZEN5
// RUN: kf-opt %s --kf-set-target=target=x86-64-v3 | FileCheck %s --check-prefix=V3
// RUN: kf-opt %s --kf-set-target=target=neoverse-v1 | FileCheck %s --check-prefix=NV1
// RUN: kf-opt %s --kf-set-target | FileCheck %s --check-prefix=HOST
// RUN: not kf-opt %s --kf-set-target=target=pentium 2>&1 | FileCheck %s --check-prefix=BAD

// The named targets are data: the same attribute on every host.
// ZEN5: module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+bmi2,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+gfni,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>}
// V3: #kf.target<name = "x86-64-v3", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v3", features = "+sse4.2,+avx2,+fma,+f16c,+bmi2", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 8>
// NV1: #kf.target<name = "neoverse-v1", triple = "aarch64-unknown-linux-gnu", cpu = "neoverse-v1", features = "+neon,+dotprod,+i8mm,+sve,+bf16", l1d = 65536, l2 = 1048576, l3 = 33554432, cores = 64>
// HOST: #kf.target<name = "host", triple = "{{.+}}", cpu = "{{.+}}", features = "{{.*}}", l1d = {{[1-9][0-9]*}}, l2 = {{[1-9][0-9]*}}, l3 = {{[0-9]+}}, cores = {{[1-9][0-9]*}}>
// BAD: error: kf-set-target: unknown target 'pentium' (expected host or one of: x86-64-v2, x86-64-v3, x86-64-v4, znver4, znver5, sapphirerapids, neoverse-v1, apple-m1)

// An existing target is replaced, and the module's other attributes are kept.
// ZEN5-NOT: x86-64-v2
// ZEN5-SAME: {{^}}
module attributes {kf.target = #kf.target<name = "x86-64-v2", triple = "x86_64-unknown-linux-gnu", cpu = "x86-64-v2", features = "+sse4.2", l1d = 32768, l2 = 262144, l3 = 8388608, cores = 4>} {
  func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    return %x : tensor<2x4xf32>
  }
}
