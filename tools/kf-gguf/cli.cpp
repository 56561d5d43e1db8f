// kf-gguf's command line: a subcommand, its positional arguments and its
// options, checked before anything is read or written.
#include <algorithm>
#include <map>
#include <optional>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "kf/deepseek_v4/presets.h"
#include "kf/deepseek_v4/tensors.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/status_macros.h"

namespace kf::gguf_tool {

namespace {

constexpr std::string_view kUsage =
    "usage: kf-gguf COMMAND ...\n"
    "  info FILE                       header, metadata, tensors and totals\n"
    "  dequant FILE TENSOR -o OUT.npy  decode a tensor to a float32 .npy "
    "file\n"
    "  verify FILE                     decode every tensor, report "
    "non-finite values\n"
    "  quantize IN OUT --recipe R [--threads N]\n"
    "                                  re-encode tensors chosen by R, "
    "comma-separated\n"
    "                                  REGEX=FORMAT rules (first match wins; "
    "'*' matches\n"
    "                                  all, 'keep' keeps), e.g. "
    "'attn_.*=q8_0,*=keep'\n"
    "  synth --preset P --seed S -o OUT [--recipe R] [--threads N] "
    "[--vocab F]\n"
    "        [--margins natural|wide]\n"
    "                                  write a random-weight DeepSeek-V4 "
    "model: P is tiny,\n"
    "                                  flash-slice:N or flash; R's rules "
    "come before the\n"
    "                                  default recipe; F is the "
    "deepseek-coder vocabulary\n"
    "                                  that tiny embeds; wide margins make "
    "every routing\n"
    "                                  choice clear\n"
    "  config FILE | config --preset P DeepSeek-V4 configuration and "
    "parameter counts of a\n"
    "                                  file, its tensors validated, or of "
    "a preset\n";

struct Command {
  std::string_view name;
  size_t minPositionals, maxPositionals;
  std::vector<std::string_view> required; // options, each with a value
  std::vector<std::string_view> optional;
};

const Command kCommands[] = {
    {"info", 1, 1, {}, {}},
    {"dequant", 2, 2, {"-o"}, {}},
    {"verify", 1, 1, {}, {}},
    {"quantize", 2, 2, {"--recipe"}, {"--threads"}},
    {"synth",
     0,
     0,
     {"--preset", "--seed", "-o"},
     {"--recipe", "--threads", "--vocab", "--margins"}},
    {"config", 0, 1, {}, {"--preset"}},
};

struct Arguments {
  const Command *command = nullptr;
  std::vector<std::string> positionals;
  std::map<std::string, std::string, std::less<>> options;
  int threads =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  uint64_t seed = 0;
};

// Fills `parsed`; returns the one-line message of a usage error, if any.
std::optional<std::string> parse(std::span<const std::string> args,
                                 Arguments &parsed) {
  for (const Command &c : kCommands)
    if (args[0] == c.name)
      parsed.command = &c;
  if (!parsed.command)
    return absl::StrCat("unknown command '", args[0], "'");
  const Command &c = *parsed.command;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positionals.push_back(arg);
      continue;
    }
    // "--name value" or "--name=value".
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    if (std::find(c.required.begin(), c.required.end(), name) ==
            c.required.end() &&
        std::find(c.optional.begin(), c.optional.end(), name) ==
            c.optional.end())
      return absl::StrCat("unknown option '", name, "' for ", toAbsl(c.name));
    if (eq != std::string::npos)
      parsed.options[name] = arg.substr(eq + 1);
    else if (i + 1 < args.size())
      parsed.options[name] = args[++i];
    else
      return absl::StrCat("option '", name, "' needs a value");
  }
  size_t n = parsed.positionals.size();
  if (n < c.minPositionals || n > c.maxPositionals)
    return c.minPositionals == c.maxPositionals
               ? absl::StrCat(toAbsl(c.name), " takes ", c.minPositionals,
                              " arguments, got ", n)
               : absl::StrCat(toAbsl(c.name), " takes ", c.minPositionals,
                              " to ", c.maxPositionals, " arguments, got ", n);
  for (std::string_view name : c.required)
    if (!parsed.options.contains(name))
      return absl::StrCat(toAbsl(c.name), " needs ", toAbsl(name));
  if (auto n = parsed.options.find("--threads"); n != parsed.options.end())
    if (!absl::SimpleAtoi(n->second, &parsed.threads) || parsed.threads < 1)
      return absl::StrCat("--threads is '", n->second,
                          "', expected a number >= 1");
  if (auto s = parsed.options.find("--seed"); s != parsed.options.end())
    if (!absl::SimpleAtoi(s->second, &parsed.seed))
      return absl::StrCat("--seed is '", s->second,
                          "', expected a number from 0 to 2^64 - 1");
  if (auto m = parsed.options.find("--margins"); m != parsed.options.end() &&
                                                 m->second != "natural" &&
                                                 m->second != "wide")
    return absl::StrCat("--margins is '", m->second,
                        "', expected natural or wide");
  if (c.name == "config" && (n == 1) == parsed.options.contains("--preset"))
    return std::string("config takes a FILE or --preset NAME");
  return std::nullopt;
}

absl::Status runCommand(const Arguments &a, std::ostream &out,
                        std::ostream &err, bool progressBar, int &exitCode) {
  std::string_view command = a.command->name;
  if (command == "synth") {
    SynthOptions options;
    options.preset = a.options.at("--preset");
    options.seed = a.seed;
    if (auto r = a.options.find("--recipe"); r != a.options.end())
      options.recipe = r->second;
    auto v = a.options.find("--vocab");
    options.vocab = v != a.options.end() ? v->second : KF_DEFAULT_VOCAB;
    options.threads = a.threads;
    if (auto m = a.options.find("--margins"); m != a.options.end())
      options.margins = m->second == "wide" ? deepseek_v4::Margins::Wide
                                            : deepseek_v4::Margins::Natural;
    options.log = &err;
    options.progress = progressBar ? &err : nullptr;
    return synth(options, a.options.at("-o"));
  }
  if (command == "config" && a.options.contains("--preset")) {
    const std::string &name = a.options.at("--preset");
    KF_ASSIGN_OR_RETURN(deepseek_v4::Preset preset, deepseek_v4::preset(name));
    printConfig(preset.config, absl::StrCat("preset ", name), out);
    return absl::OkStatus();
  }
  std::optional<Recipe> recipe;
  if (command == "quantize") { // a bad recipe fails before any reading
    KF_ASSIGN_OR_RETURN(recipe, Recipe::parse(a.options.at("--recipe")));
  }
  KF_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(a.positionals[0]));
  if (command == "info") {
    info(file, out);
    return absl::OkStatus();
  }
  if (command == "dequant")
    return dequant(file, a.positionals[1], a.options.at("-o"));
  if (command == "config") {
    KF_ASSIGN_OR_RETURN(deepseek_v4::Config config,
                        deepseek_v4::Config::fromGguf(file));
    KF_RETURN_IF_ERROR(deepseek_v4::validateTensors(config, file));
    printConfig(config, file.name(), out);
    return absl::OkStatus();
  }
  if (command == "verify") {
    KF_ASSIGN_OR_RETURN(int bad, verify(file, out));
    exitCode = bad > 0 ? 1 : 0;
    return absl::OkStatus();
  }
  QuantizeOptions options{a.threads, &err, progressBar ? &err : nullptr};
  return quantize(file, a.positionals[1], *recipe, options);
}

} // namespace

int run(std::span<const std::string> args, std::ostream &out, std::ostream &err,
        bool progressBar) {
  if (args.empty()) {
    err << kUsage;
    return 2;
  }
  if (args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    out << kUsage;
    return 0;
  }
  Arguments parsed;
  if (std::optional<std::string> problem = parse(args, parsed)) {
    err << "kf-gguf: " << *problem << " (kf-gguf --help for usage)\n";
    return 2;
  }
  int exitCode = 0;
  if (absl::Status s = runCommand(parsed, out, err, progressBar, exitCode);
      !s.ok()) {
    err << "kf-gguf: " << s.message() << "\n";
    return 1;
  }
  return exitCode;
}

} // namespace kf::gguf_tool
