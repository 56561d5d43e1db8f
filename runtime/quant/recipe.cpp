#include "kf/runtime/recipe.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/quant.h"

namespace kf {

namespace {

// The formats a recipe may name: weight formats with a quantizer.
std::string quantizableFormats() {
  std::vector<absl::string_view> names;
  for (const FormatInfo &info : allFormats())
    if (info.role == FormatRole::Weight && hasQuantize(info.format))
      names.push_back(toAbsl(info.name));
  return absl::StrJoin(names, ", ");
}

} // namespace

absl::StatusOr<Recipe> Recipe::parse(std::string_view text) {
  Recipe recipe;
  std::vector<absl::string_view> rules = absl::StrSplit(toAbsl(text), ',');
  for (size_t i = 0; i < rules.size(); ++i) {
    std::string rule(rules[i]);
    auto invalid = [&](std::string_view problem) {
      return absl::InvalidArgumentError(absl::StrCat(
          "recipe rule ", i + 1, " '", rule, "': ", toAbsl(problem)));
    };
    // The format is after the last '=': a regex may contain '=', a format not.
    size_t eq = rule.rfind('=');
    if (eq == std::string::npos || eq == 0)
      return invalid("expected REGEX=FORMAT");
    std::string pattern = rule.substr(0, eq), format = rule.substr(eq + 1);
    Rule parsed{rule, std::nullopt, std::nullopt};
    if (pattern != "*") {
      try {
        parsed.regex.emplace(pattern, std::regex::ECMAScript);
      } catch (const std::regex_error &e) {
        return invalid(absl::StrCat("invalid regex: ", e.what()));
      }
    }
    if (format != "keep") {
      std::optional<Format> target = formatFromName(format);
      if (!target)
        return invalid(absl::StrCat("unknown format '", format,
                                    "'; expected keep or one of ",
                                    quantizableFormats()));
      if (formatInfo(*target).role != FormatRole::Weight)
        return invalid(absl::StrCat(format,
                                    " is not a weight format; "
                                    "expected keep or one of ",
                                    quantizableFormats()));
      if (!hasQuantize(*target))
        return invalid(absl::StrCat("Kernelforge has no quantizer for ", format,
                                    " yet; expected keep or one of ",
                                    quantizableFormats()));
      parsed.target = target;
    }
    recipe.rules_.push_back(std::move(parsed));
  }
  return recipe;
}

bool Recipe::Rule::matches(const std::string &tensor) const {
  return !regex || std::regex_match(tensor, *regex);
}

const Recipe::Rule *Recipe::match(const std::string &tensor) const {
  for (const Rule &rule : rules_)
    if (rule.matches(tensor))
      return &rule;
  return nullptr;
}

} // namespace kf
