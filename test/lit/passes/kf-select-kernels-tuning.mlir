// --kf-select-kernels with a tuning file: every rule whose selectors match
// applies, in file order; a malformed line fails at its file, line and column.
// RUN: split-file %s %t
// RUN: kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/good.tune | FileCheck %s
// RUN: kf-opt %t/input.mlir --kf-select-kernels="tuning-file=%t/good.tune threads=8" | FileCheck %s --check-prefix=CAP
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/selector.tune 2>&1 | FileCheck %s --check-prefix=SELECTOR
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/override.tune 2>&1 | FileCheck %s --check-prefix=OVERRIDE
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/quantize.tune 2>&1 | FileCheck %s --check-prefix=QUANTIZE
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/coding.tune 2>&1 | FileCheck %s --check-prefix=CODING
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/ternary.tune 2>&1 | FileCheck %s --check-prefix=TERNARY
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/codebook.tune 2>&1 | FileCheck %s --check-prefix=CODEBOOK
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/decode.tune 2>&1 | FileCheck %s --check-prefix=DECODE
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/fused.tune 2>&1 | FileCheck %s --check-prefix=FUSED
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/arrow.tune 2>&1 | FileCheck %s --check-prefix=ARROW
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/value.tune 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/format.tune 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/twice.tune 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/isa.tune 2>&1 | FileCheck %s --check-prefix=ISA
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/rows.tune 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/missing.tune 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kf-opt %t/input.mlir --kf-select-kernels=tuning-file=%t/isaname.tune 2>&1 | FileCheck %s --check-prefix=ISANAME

// The shape rule tunes only the big Q8_0 matrix, which another rule decodes
// once.
// CHECK-LABEL: func.func @tuned
// CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, l2_rows = 64, l1_k = 1024, decode = once>} : tensor<17x4096xf32>
// One column: the kernel quantizes its activations (the default).
// CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, quantize = fused>} : tensor<1x256xf32>
// IQ2_XXS takes the avx2 kernel, then (as a dynamic M) 16 rows and 4
// columns; it decodes once (the default).
// CHECK: {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r16, max_cols = 4, threads = 16, decode = once>} : tensor<?x256xf32>
// Two columns, whose quantization a rule fuses (the default keeps it
// separate beyond one column).
// CHECK: {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 8, threads = 16, quantize = fused>} : tensor<2x256xf32>
// An l1_k longer than K is all of K; fewer threads apply; a rule fuses the
// quantization of nine columns.
// CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q4_0_r16, max_cols = 8, threads = 4, l1_k = 256, quantize = fused>} : tensor<9x256xf32>
// A rule keeps IQ1_S's grid indices (the default transcodes them to the
// ternary layout); its grid gathers then decode once, a dynamic M included,
// and the L2 block of a later rule is clamped to the 64 rows.
// CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_s_r16, max_cols = 8, threads = 16, l2_rows = 64, decode = once>} : tensor<?x256xf32>
// A rule decodes IQ1_M in every tile (as its ternary layout would anyway).
// IQ1_S in its grid layout decodes once by default unless a tuned L2 block
// decoded would not fit the kernel's 1 MiB of scratch: 512 rows of all of K
// (2 MiB) do not, 512 of an L1 block of 2048 do.
// CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_m_r16_ternary, max_cols = 8, threads = 16>} : tensor<17x4096xf32>
// CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_s_r16, max_cols = 8, threads = 16, l2_rows = 512>} : tensor<17x4096xf32>
// CHECK: {kf.kernel = #kf.kernel<isa = avx512vnni, layout = iq1_s_r16, max_cols = 8, threads = 16, l2_rows = 512, l1_k = 2048, decode = once>} : tensor<17x4096xf32>

// The threads option caps what the file asks for.
// CAP: threads = 8, l2_rows = 64, l1_k = 1024, decode = once>} : tensor<17x4096xf32>
// CAP: threads = 4, l1_k = 256, quantize = fused>} : tensor<9x256xf32>
// CAP: threads = 8, l2_rows = 512, l1_k = 2048, decode = once>} : tensor<17x4096xf32>

// SELECTOR: selector.tune:2:13: error: unknown selector 'row' (expected format, target, isa, m, n or k)
// OVERRIDE: override.tune:1:16: error: unknown override 'cols' (expected isa, rows, max_cols, threads, l2_rows, l1_k, quantize, decode or coding)
// QUANTIZE: quantize.tune:1:25: error: unknown quantize 'inline' (expected fused or separate)
// CODING: coding.tune:1:24: error: unknown coding 'trits' (expected file, ternary or codebook)
// TERNARY: input.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kf.linear' op tuning file {{.*}}ternary.tune:1: #kf.kernel: layout q8_0_r16_ternary: ternary codes are IQ1_S's and IQ1_M's, not q8_0's
// CODEBOOK: input.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kf.linear' op tuning file {{.*}}codebook.tune:1: coding = codebook needs avx512vbmi, gfni and bmi2, of which target 'znver5' lacks gfni, bmi2
// DECODE: decode.tune:1:23: error: unknown decode 'twice' (expected once or per_tile)
// FUSED: input.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kf.linear' op tuning file {{.*}}fused.tune:1: #kf.kernel: decode = once needs calls of more columns than one tile, which quantize = fused never makes
// ARROW: arrow.tune:3:1: error: expected a rule '<selectors> -> <overrides>', such as 'format=q8_0 n=2048 -> l1_k=1024'
// VALUE: value.tune:1:21: error: rows=sixteen: expected a positive integer
// FORMAT: format.tune:1:8: error: unknown format 'q9_0'
// TWICE: twice.tune:1:13: error: 'n' is given twice
// ISA: input.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kf.linear' op tuning file {{.*}}isa.tune:1: isa = neon_dotprod needs neon, dotprod, which target 'znver5' lacks
// ROWS: input.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'kf.linear' op tuning file {{.*}}rows.tune:1: #kf.kernel: layout q8_0_r8: rows must be a positive multiple of 16 (avx512vnni's lanes per vector)
// MISSING: error: cannot read tuning file '{{.*}}missing.tune': {{.*}}
// ISANAME: isaname.tune:1:8: error: unknown isa 'sse9' (expected avx512bf16, avx512vnni, avx512, avx2, neon_bf16, neon_dotprod, neon, scalar)

//--- input.mlir
module attributes {kf.target = #kf.target<name = "znver5", triple = "x86_64-unknown-linux-gnu", cpu = "znver5", features = "+sse4.2,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+avx512vbmi,+avx512bf16,+avxvnni", l1d = 49152, l2 = 1048576, l3 = 33554432, cores = 16>} {
  func.func @tuned(%x17: tensor<17x4096xf32>, %big: !kf.qweight<q8_0, [2048, 4096]>,
                   %x1: tensor<1x256xf32>, %small: !kf.qweight<q8_0, [64, 256]>,
                   %xd: tensor<?x256xf32>, %x2: tensor<2x256xf32>, %iq: !kf.qweight<iq2_xxs, [64, 256]>,
                   %x9: tensor<9x256xf32>, %q4: !kf.qweight<q4_0, [64, 256]>,
                   %iq1: !kf.qweight<iq1_s, [64, 256]>,
                   %iq1m: !kf.qweight<iq1_m, [2048, 4096]>, %iq1s: !kf.qweight<iq1_s, [2048, 4096]>,
                   %iq1s2: !kf.qweight<iq1_s, [1024, 4096]>)
      -> (tensor<17x2048xf32>, tensor<1x64xf32>, tensor<?x64xf32>, tensor<2x64xf32>, tensor<9x64xf32>, tensor<?x64xf32>) {
    %a = kf.linear %x17, %big : tensor<17x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<17x2048xf32>
    %b = kf.linear %x1, %small : tensor<1x256xf32>, !kf.qweight<q8_0, [64, 256]> -> tensor<1x64xf32>
    %c = kf.linear %xd, %iq : tensor<?x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<?x64xf32>
    %d = kf.linear %x2, %iq : tensor<2x256xf32>, !kf.qweight<iq2_xxs, [64, 256]> -> tensor<2x64xf32>
    %e = kf.linear %x9, %q4 : tensor<9x256xf32>, !kf.qweight<q4_0, [64, 256]> -> tensor<9x64xf32>
    %f0 = kf.linear %xd, %iq1 : tensor<?x256xf32>, !kf.qweight<iq1_s, [64, 256]> -> tensor<?x64xf32>
    %f = kf.linear %x17, %iq1m : tensor<17x4096xf32>, !kf.qweight<iq1_m, [2048, 4096]> -> tensor<17x2048xf32>
    %g = kf.linear %x17, %iq1s : tensor<17x4096xf32>, !kf.qweight<iq1_s, [2048, 4096]> -> tensor<17x2048xf32>
    %h = kf.linear %x17, %iq1s2 : tensor<17x4096xf32>, !kf.qweight<iq1_s, [1024, 4096]> -> tensor<17x1024xf32>
    return %a, %b, %c, %d, %e, %f0 : tensor<17x2048xf32>, tensor<1x64xf32>, tensor<?x64xf32>, tensor<2x64xf32>, tensor<9x64xf32>, tensor<?x64xf32>
  }
}

//--- good.tune
# Measured on a znver5: one rule per line, selectors -> overrides.

format=q8_0 target=znver5 n=2048 k=4096 -> l2_rows=64 l1_k=1024
format=iq2_xxs isa=avx512vnni -> isa=avx2
	format=iq2_xxs m=dynamic   ->   rows=16 max_cols=4   # the bucket kernel
format=q4_0 -> threads=4 l1_k=8192
m=2 -> quantize=fused
m=9 -> quantize=fused
format=iq1_s -> coding=file
target=x86-64-v3 -> threads=1
format=q8_0 n=2048 -> decode=once
format=iq1_m -> decode=per_tile
format=iq1_s -> l2_rows=512
format=iq1_s n=1024 -> l1_k=2048

//--- selector.tune
format=q8_0 -> l1_k=64
format=q8_0 row=16 -> l1_k=64

//--- override.tune
format=q8_0 -> cols=8

//--- quantize.tune
format=q8_0 -> quantize=inline

//--- coding.tune
format=iq1_s -> coding=trits

//--- ternary.tune
format=q8_0 -> coding=ternary

//--- codebook.tune
format=iq2_xxs -> coding=codebook

//--- decode.tune
format=q8_0 -> decode=twice

//--- fused.tune
m=17 -> quantize=fused decode=once

//--- arrow.tune
# no arrow on line 3

format=q8_0 l1_k=1024

//--- value.tune
format=q8_0 -> rows=sixteen

//--- format.tune
format=q9_0 -> rows=16

//--- twice.tune
n=2048 k=64 n=4096 -> rows=16

//--- isaname.tune
-> isa=sse9
//--- isa.tune
-> isa=neon_dotprod

//--- rows.tune
format=q8_0 -> rows=8
