//===- KfOps.td - kf graph ops ------------------------------*- tablegen -*-===//

#ifndef KF_DIALECT_KFOPS
#define KF_DIALECT_KFOPS

include "kf/Dialect/KfTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kf_RmsNormOp : Kf_Op<"rms_norm", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "RMS normalisation over the innermost dimension";
  let description = [{
    `y = x / sqrt(mean(x^2) + eps) * weight` along the innermost dimension of
    `input`. Without a weight the op is the weightless RMSNorm (the weight is
    all ones); canonicalization rewrites a constant all-ones weight into that
    form so later passes need not read the weight. The weight, when present,
    is 1-D and as long as the innermost dimension.

    Example:

    ```mlir
    %y = kf.rms_norm %x, %g eps(1.0e-06) : tensor<?x4096xf32>, tensor<4096xf32>
    %z = kf.rms_norm %x eps(1.0e-06) : tensor<?x4096xf32>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32]>:$input,
    Optional<RankedTensorOf<[F32]>>:$weight,
    F32Attr:$eps
  );
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input (`,` $weight^)? `eps` `(` $eps `)` attr-dict `:` type($input) (`,` type($weight)^)?
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Kf_LinearOp : Kf_Op<"linear", [Pure]> {
  let summary = "Activations times the transpose of a quantized weight";
  let description = [{
    `result[m, n] = sum_k input[m, k] * weight[n, k]` for `input` of shape
    `[M, K]` (M token columns, possibly dynamic) and a 2-D `!kf.qweight` of
    shape `[N, K]` in any weight format. The result is `[M, N]`.

    Example:

    ```mlir
    %y = kf.linear %x, %w : tensor<?x4096xf32>, !kf.qweight<q8_0, [2048, 4096]> -> tensor<?x2048xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$input, Kf_QWeightType:$weight);
  let results = (outs RankedTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` type($input) `,` qualified(type($weight)) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KF_DIALECT_KFOPS
