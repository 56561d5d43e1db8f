// Quantization recipes: comma-separated REGEX=FORMAT rules choosing a format
// for each tensor by name, e.g. "ffn_.*_exps=iq1_s,attn_.*=q8_0,*=keep".
#pragma once

#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/format.h"

namespace kf {

class Recipe {
public:
  struct Rule {
    std::string text;                // as written, for messages
    std::optional<std::regex> regex; // none for "*", which matches all
    std::optional<Format> target;    // none for "keep"

    bool matches(const std::string &tensor) const;
  };

  // Each regex must match the whole tensor name (ECMAScript syntax; it cannot
  // contain a comma, which separates rules). Every target must be a weight
  // format Kernelforge can quantize to.
  static absl::StatusOr<Recipe> parse(std::string_view text);

  // The first rule matching `tensor`, or null.
  const Rule *match(const std::string &tensor) const;
  // In order, for callers that choose among the matching rules.
  std::span<const Rule> rules() const { return rules_; }

private:
  std::vector<Rule> rules_;
};

} // namespace kf
