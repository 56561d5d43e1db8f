// An op no kernel computes yet: kf-compile-plan.test's error case. The
// target has no compiled kernel for a q5_0 linear.
func.func @unsupported(%x: tensor<?x64xf32>, %w: !kf.qweight<q5_0, [32, 64]>) -> (tensor<?x64xf32>, tensor<?x32xf32>) {
  %h = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
  %y = kf.linear %h, %w : tensor<?x64xf32>, !kf.qweight<q5_0, [32, 64]> -> tensor<?x32xf32>
  return %h, %y : tensor<?x64xf32>, tensor<?x32xf32>
}
