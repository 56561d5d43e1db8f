//===- TuningRules.h - The text of tuning rules, and the defaults -*- C++ -*-//
//
// Kernel decisions as text, one rule per line, so that a tuner can append
// to a file and a person can read and edit it:
//
//   # comment
//   format=q8_0 target=znver5 n=2048 -> l2_rows=64 l1_k=1024
//
// Words are `key=value`; those before `->` select the cases a rule applies
// to (all must match), those after set decisions. Every matching rule
// applies, in order, so a later one overrides an earlier one. This reader
// checks the syntax only; what the keys mean is its caller's: a user's
// tuning file (mlir::kf::TuningFile) and the compiler's defaults
// (target/tuning/defaults.tuning, below).
//
//===----------------------------------------------------------------------===//

#ifndef KF_TUNING_TUNINGRULES_H
#define KF_TUNING_TUNINGRULES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kf::tuning {

/// One `key=value` word and the columns its key and value start at.
struct Word {
  std::string key, value;
  unsigned keyColumn = 0, valueColumn = 0;
};

struct Rule {
  unsigned line = 0;
  std::vector<Word> selectors, settings;
};

/// What is wrong with a text, and where.
struct SyntaxError {
  unsigned line = 0, column = 0;
  std::string message;
};

struct ParsedRules {
  std::vector<Rule> rules;
  std::optional<SyntaxError> error; ///< the first problem; no rules then
};

/// The rules of `text`, or its first syntax error: a line without `->` or
/// nothing after it, a word that is not `key=value`, a key given twice on
/// one side.
ParsedRules parseRules(llvm::StringRef text);

/// A fact about a case a rule may select on, e.g. {"format", "q4_0"}.
using Fact = std::pair<llvm::StringRef, std::string>;

/// The compiler's defaults: the rules of target/tuning/defaults.tuning,
/// compiled in. The settings they make: `decode_once_from` (the fewest
/// columns from which a kernel decodes each weight block once, or `none`),
/// `prefetch_l2` and `prefetch_l1` (bytes ahead a column tile prefetches its
/// weights into L2 and L1, 0 for none), `prefetch_order` (`keep` or `free`)
/// and `max_cols` (a matmul's widest column tile); on the facts `format`,
/// `coding` and `width` (the tile's columns).
llvm::ArrayRef<Rule> getDefaultRules();

/// The value the defaults give `setting` for a case of `facts`: that of the
/// last rule that sets it and whose every selector is one of the facts with
/// its value; none when no such rule exists.
std::optional<llvm::StringRef> getDefault(llvm::StringRef setting,
                                          llvm::ArrayRef<Fact> facts = {});

/// getDefault as a number; none also where the value is `none`
/// (decode_once_from). Any other value that is not a number would be a bug
/// in the defaults file, which TuningRulesTest rules out.
std::optional<int64_t> getDefaultNumber(llvm::StringRef setting,
                                        llvm::ArrayRef<Fact> facts = {});

} // namespace kf::tuning

#endif // KF_TUNING_TUNINGRULES_H
