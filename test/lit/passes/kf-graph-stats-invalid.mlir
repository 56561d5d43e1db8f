// RUN: kf-opt %s --kf-graph-stats -verify-diagnostics -o /dev/null

// The experts a token reads are neither a kf.moe_gate's k nor static.
module {
  kf.weight @gate_exps : !kf.qweight<mxfp4, [4, 32, 64]>

  func.func @decode(%x: tensor<1x64xf32>, %ids: tensor<1x?xi32>, %w: tensor<1x?xf32>,
                    %u: !kf.qweight<mxfp4, [4, 32, 64]>, %d: !kf.qweight<mxfp4, [4, 64, 32]>,
                    %sg: !kf.qweight<q8_0, [32, 64]>, %su: !kf.qweight<q8_0, [32, 64]>,
                    %sd: !kf.qweight<q8_0, [64, 32]>) -> tensor<1x64xf32> {
    %g = kf.get_weight @gate_exps : !kf.qweight<mxfp4, [4, 32, 64]>
    // expected-error @+1 {{kf-graph-stats: cannot count the experts a token reads: the kf.moe ids come from no kf.moe_gate and are 'tensor<1x?xi32>', expected a static [T, k]}}
    %y = kf.moe %x, %ids, %w experts(%g, %u, %d) shared(%sg, %su, %sd) limit(10.0) shared_limit(10.0)
        : tensor<1x64xf32>, tensor<1x?xi32>, tensor<1x?xf32>,
          !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 32, 64]>, !kf.qweight<mxfp4, [4, 64, 32]>,
          !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [32, 64]>, !kf.qweight<q8_0, [64, 32]> -> tensor<1x64xf32>
    return %y : tensor<1x64xf32>
  }
}
