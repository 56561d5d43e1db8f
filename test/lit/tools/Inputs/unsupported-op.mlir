// An op no kernel computes yet: kf-compile-plan.test's error case.
func.func @unsupported(%x: tensor<?x64xf32>, %p: tensor<?xi64>) -> (tensor<?x64xf32>, tensor<?x128xi32>) {
  %h = kf.rms_norm %x eps(1.0e-06) : tensor<?x64xf32>
  %w = kf.window_indices %p window(128) : tensor<?xi64> -> tensor<?x128xi32>
  return %h, %w : tensor<?x64xf32>, tensor<?x128xi32>
}
