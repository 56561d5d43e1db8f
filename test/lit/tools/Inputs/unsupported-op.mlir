// An op no kernel computes yet: kf-compile-plan.test's error case.
func.func @unsupported(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %h = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
  %y = kf.hadamard %h : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
