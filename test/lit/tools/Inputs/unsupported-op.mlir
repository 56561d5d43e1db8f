// An op no kernel computes yet: kf-compile-plan.test's error case.
func.func @unsupported(%x: tensor<?x64xf32>) -> tensor<?xi32> {
  %h = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
  %y = kf.argmax %h : tensor<?x64xf32> -> tensor<?xi32>
  return %y : tensor<?xi32>
}
