// A pre-norm projection as a transformer layer starts: RMSNorm with a unit
// weight, then a Q8_0 linear. kf-compile drops the unit weight, records the
// target and the linear's kernel decisions.
func.func @norm_linear(%x: tensor<?x4096xf32>, %w: !kf.qweight<q8_0, [2048, 4096]>) -> tensor<?x2048xf32> {
  %ones = arith.constant dense<1.0> : tensor<4096xf32>
  %h = kf.rms_norm %x, %ones eps(1.0e-06) : tensor<?x4096xf32>, tensor<4096xf32>
  %y = kf.linear %h, %w : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
  return %y : tensor<?x2048xf32>
}
