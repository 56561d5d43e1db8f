//===- TuningFile.cpp - Kernel decisions measured on a machine ------------===//

#include "kf/Tuning/TuningFile.h"

#include "kf/Target/KernelIsa.h"
#include "kf/Tuning/TuningRules.h"
#include "kf/runtime/format.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::kf;

bool TuningRule::matches(const TuningKey &key) const {
  return (!format || *format == key.format) &&
         (!target || *target == key.target) && (!isa || *isa == key.isa) &&
         (!m || *m == key.m) && (!n || *n == key.n) && (!k || *k == key.k);
}

namespace {

class RuleParser {
public:
  RuleParser(MLIRContext *context, StringRef path, unsigned line)
      : context(context), path(path), line(line) {}

  InFlightDiagnostic error(unsigned column) {
    return emitError(FileLineColLoc::get(context, path, line, column));
  }

  /// What the words of one rule mean (the reader checked their syntax).
  LogicalResult parse(const ::kf::tuning::Rule &words, TuningRule &rule) {
    for (const ::kf::tuning::Word &word : words.selectors)
      if (failed(parseSelector(word, rule)))
        return failure();
    for (const ::kf::tuning::Word &word : words.settings)
      if (failed(parseOverride(word, rule)))
        return failure();
    return success();
  }

private:
  LogicalResult parseSelector(const ::kf::tuning::Word &word,
                              TuningRule &rule) {
    StringRef key = word.key, value = word.value;
    unsigned column = word.valueColumn;
    if (key == "format") {
      std::optional<Format> format = symbolizeFormat(value);
      if (!format)
        return error(column) << "unknown format '" << value << "'";
      if (::kf::formatInfo(static_cast<::kf::Format>(*format)).role !=
          ::kf::FormatRole::Weight)
        return error(column)
               << value << " is not a weight format a matmul multiplies by";
      rule.format = format;
      return success();
    }
    if (key == "target") {
      rule.target = value.str();
      return success();
    }
    if (key == "isa")
      return parseIsa(value, column, rule.isa);
    if (key == "m" && value == "dynamic") {
      rule.m = ShapedType::kDynamic;
      return success();
    }
    if (key == "m" || key == "n" || key == "k")
      return parsePositive(key, value, column,
                           key == "m"   ? rule.m
                           : key == "n" ? rule.n
                                        : rule.k);
    return error(word.keyColumn)
           << "unknown selector '" << key
           << "' (expected format, target, isa, m, n or k)";
  }

  LogicalResult parseOverride(const ::kf::tuning::Word &word,
                              TuningRule &rule) {
    StringRef key = word.key, value = word.value;
    unsigned column = word.valueColumn;
    if (key == "isa")
      return parseIsa(value, column, rule.setIsa);
    if (key == "quantize")
      return parseEnum(key, value, column, "fused or separate",
                       rule.setQuantize);
    if (key == "decode")
      return parseEnum(key, value, column, "once or per_tile", rule.setDecode);
    if (key == "coding") {
      std::optional<::kf::WeightCoding> coding = ::kf::weightCodingNamed(value);
      if (!coding)
        return error(column) << "unknown coding '" << value << "' (expected "
                             << ::kf::kWeightCodingNames << ")";
      rule.setCoding = *coding;
      return success();
    }
    std::optional<int64_t> *field =
        llvm::StringSwitch<std::optional<int64_t> *>(key)
            .Case("rows", &rule.setRows)
            .Case("max_cols", &rule.setMaxCols)
            .Case("threads", &rule.setThreads)
            .Case("l2_rows", &rule.setL2Rows)
            .Case("l1_k", &rule.setL1K)
            .Default(nullptr);
    if (!field)
      return error(word.keyColumn)
             << "unknown override '" << key
             << "' (expected isa, rows, max_cols, threads, l2_rows, l1_k, "
                "quantize, decode or coding)";
    return parsePositive(key, value, column, *field);
  }

  /// An override naming one of an enum's cases (`expected` lists them).
  template <typename Enum>
  LogicalResult parseEnum(StringRef key, StringRef value, unsigned column,
                          StringRef expected, std::optional<Enum> &out) {
    out = symbolizeEnum<Enum>(value);
    if (!out)
      return error(column) << "unknown " << key << " '" << value
                           << "' (expected " << expected << ")";
    return success();
  }

  LogicalResult parseIsa(StringRef value, unsigned column,
                         std::optional<KernelIsa> &isa) {
    isa = symbolizeKernelIsa(value);
    if (isa)
      return success();
    InFlightDiagnostic diag = error(column)
                              << "unknown isa '" << value << "' (expected ";
    llvm::interleave(
        ::kf::target::getIsasByPreference(), diag,
        [&](::kf::target::KernelIsa i) { diag << ::kf::target::getIsaName(i); },
        ", ");
    return diag << ")";
  }

  LogicalResult parsePositive(StringRef key, StringRef value, unsigned column,
                              std::optional<int64_t> &field) {
    int64_t number = 0;
    if (value.getAsInteger(10, number) || number <= 0)
      return error(column) << key << "=" << value
                           << ": expected a positive integer";
    field = number;
    return success();
  }

  MLIRContext *context;
  StringRef path;
  unsigned line;
};

} // namespace

FailureOr<TuningFile> TuningFile::read(MLIRContext *context, StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return emitError(UnknownLoc::get(context))
           << "cannot read tuning file '" << path
           << "': " << buffer.getError().message();
  TuningFile file;
  file.path = path.str();
  ::kf::tuning::ParsedRules parsed =
      ::kf::tuning::parseRules((*buffer)->getBuffer());
  if (parsed.error)
    return emitError(FileLineColLoc::get(context, file.path, parsed.error->line,
                                         parsed.error->column))
           << parsed.error->message;
  for (const ::kf::tuning::Rule &words : parsed.rules) {
    TuningRule rule;
    rule.line = words.line;
    if (failed(RuleParser(context, file.path, words.line).parse(words, rule)))
      return failure();
    file.rules.push_back(std::move(rule));
  }
  return file;
}
