//===- TuningFile.h - Kernel decisions measured on a machine ----*- C++ -*-===//
//
// A tuning file overrides what --kf-select-kernels decides for the matmuls
// its rules match. It is text, one rule per line, read by the reader the
// compiler's defaults share (kf/Tuning/TuningRules.h), so that a tuner can
// append to it and a person can read and edit it:
//
//   # format, target, isa, m, n, k select; the keys after '->' override
//   format=q8_0 target=znver5 n=2048 k=4096 -> l2_rows=64 l1_k=1024
//   format=iq2_xxs isa=avx2 -> rows=16
//   m=dynamic -> max_cols=4 threads=8
//   m=4 -> quantize=separate
//   format=iq1_s -> coding=file
//   format=q4_k m=dynamic -> decode=once
//
// A rule's selectors must all match (a missing one matches anything); `isa`
// selects on the ISA the target would get, `m` is a static M or `dynamic`.
// Every matching rule applies, in file order. Overrides: isa, rows,
// max_cols, threads, l2_rows, l1_k, quantize (fused or separate), decode
// (once or per_tile), coding (the weights' coding in the layout: file,
// ternary, IQ1_S's and IQ1_M's, or codebook, IQ2_XXS's on AVX-512 VNNI
// targets with VBMI, GFNI and BMI2). A rule that sets isa also resets the
// coding to that ISA's default.
//
//===----------------------------------------------------------------------===//

#ifndef KF_TUNING_TUNINGFILE_H
#define KF_TUNING_TUNINGFILE_H

#include "kf/Dialect/KfDialect.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::kf {

/// The facts a rule selects on.
struct TuningKey {
  Format format;
  StringRef target;
  KernelIsa isa;
  int64_t m; ///< ShapedType::kDynamic for a dynamic M
  int64_t n, k;
};

/// One rule: selectors, then the decisions it overrides.
struct TuningRule {
  unsigned line = 0;
  std::optional<Format> format;
  std::optional<std::string> target;
  std::optional<KernelIsa> isa;
  std::optional<int64_t> m, n, k;

  std::optional<KernelIsa> setIsa;
  std::optional<int64_t> setRows, setMaxCols, setThreads, setL2Rows, setL1K;
  std::optional<ActivationQuantize> setQuantize;
  std::optional<::kf::WeightCoding> setCoding;
  std::optional<WeightDecode> setDecode;

  bool matches(const TuningKey &key) const;
};

struct TuningFile {
  std::string path;
  std::vector<TuningRule> rules;

  /// Reads `path`. A line that is not a rule is an error located at that
  /// line and column of the file.
  static FailureOr<TuningFile> read(MLIRContext *context, StringRef path);
};

} // namespace mlir::kf

#endif // KF_TUNING_TUNINGFILE_H
