// An op no kernel computes yet: kf-compile-plan.test's error case.
func.func @unsupported(%x: tensor<?x64xf32>, %p: tensor<?xi64>) -> tensor<?x64xf32> {
  %h = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
  %y = kf.rope %h, %p, <dim = 64, base = 1.000000e+04> : tensor<?x64xf32>, tensor<?xi64>
  return %y : tensor<?x64xf32>
}
