// RUN: kf-opt %s --split-input-file --kf-tile-columns -verify-diagnostics

func.func @undecided(%x: tensor<4x64xf32>, %w: !kf.qweight<q8_0, [16, 64]>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'kf.linear' op kf-tile-columns: no kf.kernel; run --kf-select-kernels first}}
  %y = kf.linear %x, %w : tensor<4x64xf32>, !kf.qweight<q8_0, [16, 64]> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
