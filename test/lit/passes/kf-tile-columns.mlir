// RUN: kf-opt %s --split-input-file --kf-tile-columns | FileCheck %s

// The decisions of --kf-select-kernels are written out, so the tiling is
// checked on its own; it reads max_cols and M, nothing of the target.
// CHECK-LABEL: func.func @static_m
func.func @static_m(%x1: tensor<1x64xf32>, %x2: tensor<2x64xf32>, %x9: tensor<9x64xf32>,
                    %x17: tensor<17x64xf32>, %x24: tensor<24x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>)
    -> (tensor<1x16xf32>, tensor<2x16xf32>, tensor<9x16xf32>, tensor<17x16xf32>, tensor<24x16xf32>) {
  // M = 1 is the only M with a 1-wide tile.
  // CHECK: #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16, cols = [1]>} : tensor<1x64xf32>
  %a = kf.linear %x1, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}
      : tensor<1x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<1x16xf32>
  // CHECK: cols = [2]>} : tensor<2x64xf32>
  %b = kf.linear %x2, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}
      : tensor<2x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<2x16xf32>
  // 8 + 1 would leave a 1-wide tail: three tiles, widest first.
  // CHECK: cols = [4, 3, 2]>} : tensor<9x64xf32>
  %c = kf.linear %x9, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}
      : tensor<9x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<9x16xf32>
  // CHECK: cols = [8, 4, 3, 2]>} : tensor<17x64xf32>
  %d = kf.linear %x17, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}
      : tensor<17x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<17x16xf32>
  // CHECK: cols = [8, 8, 8]>} : tensor<24x64xf32>
  %e = kf.linear %x24, %w {kf.kernel = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}
      : tensor<24x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<24x16xf32>
  return %a, %b, %c, %d, %e : tensor<1x16xf32>, tensor<2x16xf32>, tensor<9x16xf32>, tensor<17x16xf32>, tensor<24x16xf32>
}

// -----

// A tuned max_cols narrows the widths.
// CHECK-LABEL: func.func @max_cols
func.func @max_cols(%x17: tensor<17x256xf32>, %x9: tensor<9x256xf32>, %w: !kf.qweight<iq2_xxs, [16, 256]>)
    -> (tensor<17x16xf32>, tensor<9x16xf32>) {
  // CHECK: max_cols = 4, threads = 8, cols = [4, 4, 4, 3, 2]>}
  %a = kf.linear %x17, %w {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 4, threads = 8>}
      : tensor<17x256xf32>, !kf.qweight<iq2_xxs, [16, 256]> -> tensor<17x16xf32>
  // CHECK: max_cols = 3, threads = 8, cols = [3, 3, 3]>}
  %b = kf.linear %x9, %w {kf.kernel = #kf.kernel<isa = avx2, layout = iq2_xxs_r8, max_cols = 3, threads = 8>}
      : tensor<9x256xf32>, !kf.qweight<iq2_xxs, [16, 256]> -> tensor<9x16xf32>
  return %a, %b : tensor<17x16xf32>, tensor<9x16xf32>
}

// -----

// A dynamic M is tiled at run time by a dispatcher; tiles already decided are
// kept.
// CHECK-LABEL: func.func @dynamic_and_kept
func.func @dynamic_and_kept(%xd: tensor<?x64xf32>, %x8: tensor<8x64xf32>, %w: !kf.qweight<mxfp4, [16, 64]>)
    -> (tensor<?x16xf32>, tensor<8x16xf32>) {
  // CHECK: #kf.kernel<isa = neon_dotprod, layout = mxfp4_r4, max_cols = 8, threads = 64, cols = dynamic>}
  %a = kf.linear %xd, %w {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = mxfp4_r4, max_cols = 8, threads = 64>}
      : tensor<?x64xf32>, !kf.qweight<mxfp4, [16, 64]> -> tensor<?x16xf32>
  // CHECK: cols = [4, 4]>}
  %b = kf.linear %x8, %w {kf.kernel = #kf.kernel<isa = neon_dotprod, layout = mxfp4_r4, max_cols = 8, threads = 64, cols = [4, 4]>}
      : tensor<8x64xf32>, !kf.qweight<mxfp4, [16, 64]> -> tensor<8x16xf32>
  return %a, %b : tensor<?x16xf32>, tensor<8x16xf32>
}

// -----

// kf.moe: an expert's bucket of T > 1 tokens is dynamic even when T is
// static; the shared expert sees all T tokens. A grouped linear's groups
// share M.
// CHECK-LABEL: func.func @moe_and_grouped
func.func @moe_and_grouped(%x: tensor<9x64xf32>, %ids: tensor<9x2xi32>, %w: tensor<9x2xf32>,
                           %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                           %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sg: !kf.qweight<q8_0, [32, 64]>,
                           %su: !kf.qweight<q8_0, [32, 64]>, %sd: !kf.qweight<q8_0, [64, 32]>,
                           %o: tensor<2x256xf32>, %wo: !kf.qweight<q8_0, [64, 128]>)
    -> (tensor<9x64xf32>, tensor<2x64xf32>) {
  // CHECK: kf.moe {{.*}} {kf.kernel = {
  // CHECK-SAME: down_exps = #kf.kernel<{{[^>]*}}cols = dynamic>,
  // CHECK-SAME: down_shexp = #kf.kernel<{{[^>]*}}cols = [4, 3, 2]>,
  // CHECK-SAME: gate_exps = #kf.kernel<{{[^>]*}}cols = dynamic>,
  // CHECK-SAME: gate_shexp = #kf.kernel<{{[^>]*}}cols = [4, 3, 2]>,
  // CHECK-SAME: up_exps = #kf.kernel<{{[^>]*}}cols = dynamic>,
  // CHECK-SAME: up_shexp = #kf.kernel<{{[^>]*}}cols = [4, 3, 2]>}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      {kf.kernel = {gate_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8>,
                    up_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8>,
                    down_exps = #kf.kernel<isa = avx2, layout = mxfp4_r8, max_cols = 8, threads = 8>,
                    gate_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8>,
                    up_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8>,
                    down_shexp = #kf.kernel<isa = avx2, layout = q8_0_r8, max_cols = 8, threads = 8>}}
      : tensor<9x64xf32>, tensor<9x2xi32>, tensor<9x2xf32>,
        !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
        !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<9x64xf32>
  // CHECK: kf.grouped_linear {{.*}} groups(2) {kf.kernel = #kf.kernel<{{[^>]*}}cols = [2]>}
  %z = kf.grouped_linear %o, %wo groups(2) {kf.kernel = #kf.kernel<isa = scalar, layout = q8_0_r1, max_cols = 8, threads = 4>}
      : tensor<2x256xf32>, !kf.qweight<q8_0, [64, 128]> -> tensor<2x64xf32>
  return %y, %z : tensor<9x64xf32>, tensor<2x64xf32>
}

// -----

// A decode step's single token is all its experts' buckets can hold (each
// token picks distinct experts): M = 1, no dispatcher.
// CHECK-LABEL: func.func @moe_decode
func.func @moe_decode(%x: tensor<1x64xf32>, %ids: tensor<1x2xi32>, %w: tensor<1x2xf32>,
                      %g: !kf.qweight<mxfp4, [4, 32, 64]>, %u: !kf.qweight<mxfp4, [4, 32, 64]>,
                      %d: !kf.qweight<mxfp4, [4, 64, 32]>, %sg: !kf.qweight<q8_0, [32, 64]>,
                      %su: !kf.qweight<q8_0, [32, 64]>, %sd: !kf.qweight<q8_0, [64, 32]>) -> tensor<1x64xf32> {
  // CHECK: kf.moe {{.*}} {kf.kernel = {
  // CHECK-SAME: down_exps = #kf.kernel<{{[^>]*}}cols = [1]>,
  // CHECK-SAME: down_shexp = #kf.kernel<{{[^>]*}}cols = [1]>,
  // CHECK-SAME: gate_exps = #kf.kernel<{{[^>]*}}cols = [1]>,
  // CHECK-SAME: gate_shexp = #kf.kernel<{{[^>]*}}cols = [1]>,
  // CHECK-SAME: up_exps = #kf.kernel<{{[^>]*}}cols = [1]>,
  // CHECK-SAME: up_shexp = #kf.kernel<{{[^>]*}}cols = [1]>}}
  %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
      {kf.kernel = {gate_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>,
                    up_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>,
                    down_exps = #kf.kernel<isa = avx512vnni, layout = mxfp4_r16, max_cols = 8, threads = 16>,
                    gate_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>,
                    up_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>,
                    down_shexp = #kf.kernel<isa = avx512vnni, layout = q8_0_r16, max_cols = 8, threads = 16>}}
      : tensor<1x64xf32>, tensor<1x2xi32>, tensor<1x2xf32>,
        !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
        !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<1x64xf32>
  return %y : tensor<1x64xf32>
}
