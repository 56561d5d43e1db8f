//===- TuningRules.cpp - The text of tuning rules, and the defaults -------===//

#include "kf/Tuning/TuningRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

namespace kf::tuning {

namespace {

/// The words of one line, up to a '#', and the columns they start at.
std::vector<std::pair<llvm::StringRef, unsigned>>
splitWords(llvm::StringRef text) {
  text = text.take_until([](char c) { return c == '#'; });
  std::vector<std::pair<llvm::StringRef, unsigned>> words;
  for (size_t pos = 0;;) {
    pos = text.find_first_not_of(" \t\r", pos);
    if (pos == llvm::StringRef::npos)
      return words;
    size_t end = std::min(text.find_first_of(" \t\r", pos), text.size());
    words.push_back({text.slice(pos, end), static_cast<unsigned>(pos + 1)});
    pos = end;
  }
}

// The defaults file, as a string literal target/tuning/CMakeLists.txt writes.
constexpr llvm::StringLiteral kDefaultsText =
#include "kf/Tuning/Defaults.inc"
    ;

} // namespace

ParsedRules parseRules(llvm::StringRef text) {
  ParsedRules parsed;
  auto fail = [&](unsigned line, unsigned column, std::string message) {
    parsed.rules.clear();
    parsed.error = SyntaxError{line, column, std::move(message)};
    return parsed;
  };
  llvm::StringRef rest = text;
  for (unsigned line = 1; !rest.empty(); ++line) {
    llvm::StringRef lineText;
    std::tie(lineText, rest) = rest.split('\n');
    auto words = splitWords(lineText);
    if (words.empty())
      continue;
    auto arrow =
        llvm::find_if(words, [](const auto &w) { return w.first == "->"; });
    if (arrow == words.end())
      return fail(line, words.front().second,
                  "expected a rule '<selectors> -> <overrides>', such as "
                  "'format=q8_0 n=2048 -> l1_k=1024'");
    if (arrow + 1 == words.end())
      return fail(line, arrow->second, "expected overrides after '->'");
    Rule rule;
    rule.line = line;
    llvm::StringSet<> seenSelectors, seenSettings;
    for (auto word = words.begin(); word != words.end(); ++word) {
      if (word == arrow)
        continue;
      auto [key, value] = word->first.split('=');
      if (key.empty() || value.empty() || word->first.count('=') != 1)
        return fail(
            line, word->second,
            (llvm::Twine("expected key=value, got '") + word->first + "'")
                .str());
      const bool selector = word < arrow;
      if (!(selector ? seenSelectors : seenSettings).insert(key).second)
        return fail(line, word->second,
                    (llvm::Twine("'") + key + "' is given twice").str());
      (selector ? rule.selectors : rule.settings)
          .push_back({key.str(), value.str(), word->second,
                      static_cast<unsigned>(word->second + key.size() + 1)});
    }
    parsed.rules.push_back(std::move(rule));
  }
  return parsed;
}

llvm::ArrayRef<Rule> getDefaultRules() {
  static const std::vector<Rule> rules = [] {
    ParsedRules parsed = parseRules(kDefaultsText);
    if (parsed.error)
      llvm::report_fatal_error(llvm::Twine("target/tuning/defaults.tuning:") +
                               llvm::Twine(parsed.error->line) + ": " +
                               parsed.error->message);
    return parsed.rules;
  }();
  return rules;
}

std::optional<llvm::StringRef> getDefault(llvm::StringRef setting,
                                          llvm::ArrayRef<Fact> facts) {
  std::optional<llvm::StringRef> value;
  for (const Rule &rule : getDefaultRules()) {
    bool matches = llvm::all_of(rule.selectors, [&](const Word &selector) {
      return llvm::any_of(facts, [&](const Fact &fact) {
        return fact.first == selector.key && fact.second == selector.value;
      });
    });
    if (!matches)
      continue;
    for (const Word &word : rule.settings)
      if (word.key == setting)
        value = word.value;
  }
  return value;
}

std::optional<int64_t> getDefaultNumber(llvm::StringRef setting,
                                        llvm::ArrayRef<Fact> facts) {
  std::optional<llvm::StringRef> text = getDefault(setting, facts);
  int64_t number = 0;
  if (!text || text->getAsInteger(10, number))
    return std::nullopt;
  return number;
}

} // namespace kf::tuning
