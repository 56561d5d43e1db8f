#include "cli.h"

#include <algorithm>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/host_cpu.h"
#include "matmul_kernel.h"
#include "model.h"
#include "onednn.h"

namespace kf::bench {

namespace {

constexpr std::string_view kUsage =
    "usage: kf-bench matmul --format F1[,F2...] [options]\n"
    "  times quantized matmul kernels (M activation rows x N weight rows of\n"
    "  K elements) against the DRAM read bandwidth and oneDNN's u8s8s32 and\n"
    "  f32 matmuls, all measured in the same run\n"
    "  --format LIST     weight formats, e.g. q8_0,q4_0,q4_k,iq2_xxs\n"
    "  --m LIST          activation rows per case (1,2,3,4,8,16,64,512)\n"
    "  --k K, --n N      row length and weight rows (4096, 2048)\n"
    "  --threads LIST    thread counts (one a physical core)\n"
    "  --cold | --hot    weights cycled from a set far larger than the\n"
    "                    caches, as MoE experts are (the default), or one\n"
    "                    matrix reused\n"
    "  --reps N          exactly N timed calls per case, or else\n"
    "  --min-time S      timed calls until S seconds, at least 3 (0.5)\n"
    "  --rounds N        every case N times, rounds over all cases, the DRAM\n"
    "                    probe again after each; figures are the medians of\n"
    "                    the rounds (3)\n"
    "  --cold-mib MIB    the cold set and bandwidth buffer (4 x L3, at most\n"
    "                    2048 MiB)\n"
    "  --seed S          of the random weights and activations (1)\n"
    "  --onednn-isa ISA  limits oneDNN to an instruction set, e.g.\n"
    "                    avx512_core_vnni where it would use AMX\n"
    "  --onednn-also ISA oneDNN timed again, limited to ISA, beside its best\n"
    "                    (in a child process); none: not (avx512_core_vnni\n"
    "                    where the CPU has AMX, else none)\n"
    "  --kernels LIST    only these kernels, e.g. kf-avx512vnni,kf-avx2\n"
    "                    (all: reference and the compiled ones)\n"
    "  --json            one JSON object per case and line, no table\n"
    "\n"
    "usage: kf-bench ports [--isa avx512vnni|avx2] [--rounds N] [--min-time "
    "S]\n"
    "  how many of each vector instruction the kernels issue, alone and in a\n"
    "  block's mixes, one core runs per cycle (clocked by a dependent vpaddd\n"
    "  chain): which instructions compete for the same ports\n"
    "  --isa ISA         the instructions measured (the best this CPU runs)\n"
    "  --rounds N        runs per case, of which the median (5)\n"
    "  --min-time S      seconds per run (0.05)\n"
    "\n"
    "usage: kf-bench model --plan MODEL.kfp -m FILE [options]\n"
    "  a compiled model's prefill tokens/s against the threads' int8 peak,\n"
    "  decode tokens/s against the DRAM roofline of the weight bytes one\n"
    "  token reads, both against the golden reference forward, all measured\n"
    "  in the same run; where the time goes by op kind and by layer\n"
    "  --threads LIST    thread counts (1 and one a physical core)\n"
    "  --prompt LIST     tokens of each timed prefill (1, 64 and the plan's\n"
    "                    rows)\n"
    "  --decode N        decode steps after the longest, each timed (32)\n"
    "  --rounds N        everything N times, the DRAM probe in each; figures\n"
    "                    are the medians of the rounds (3)\n"
    "  --pin             each thread pinned to a core of its own\n"
    "  --steps           also each decode step: its time, its wait at the\n"
    "                    barrier before it, and the GB/s it reads its\n"
    "                    weights at\n"
    "  --json            one JSON object per thread count and line\n";

constexpr std::string_view kValueOptions[] = {
    "--format",  "--m",        "--k",          "--n",    "--threads",
    "--reps",    "--min-time", "--cold-mib",   "--seed", "--onednn-isa",
    "--kernels", "--rounds",   "--onednn-also"};
constexpr std::string_view kFlags[] = {"--cold", "--hot", "--json"};

template <typename T>
std::optional<std::string> parseNumber(std::string_view option,
                                       const std::string &text, T &value) {
  if (!absl::SimpleAtoi(text, &value))
    return absl::StrCat(toAbsl(option), " is '", text,
                        "', expected a whole number");
  return std::nullopt;
}

// A comma-separated list of distinct whole numbers.
template <typename T>
std::optional<std::string> parseList(std::string_view option,
                                     const std::string &text,
                                     std::vector<T> &values) {
  values.clear();
  std::set<T> seen;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    T v;
    if (!absl::SimpleAtoi(item, &v))
      return absl::StrCat(toAbsl(option), " has '", item,
                          "', expected whole numbers separated by commas");
    if (!seen.insert(v).second)
      return absl::StrCat(toAbsl(option), " lists ", v, " twice");
    values.push_back(v);
  }
  if (values.empty())
    return absl::StrCat(toAbsl(option), " is empty");
  return std::nullopt;
}

std::optional<std::string> parseSeconds(std::string_view option,
                                        const std::string &text,
                                        double &seconds) {
  if (!absl::SimpleAtod(text, &seconds))
    return absl::StrCat(toAbsl(option), " is '", text,
                        "', expected a number of seconds");
  return std::nullopt;
}

// The one-line error of an argument no option of the command takes: an
// unknown option (`name`, without its '=value'), or a stray argument.
std::string unknownArgument(const std::string &arg, const std::string &name) {
  return arg.starts_with("-") ? absl::StrCat("unknown option '", name, "'")
                              : absl::StrCat("unexpected argument '", arg, "'");
}

// "OPTION V is out of range: expected LO to HI" when V is outside [lo, hi].
template <typename T>
std::optional<std::string> checkRange(std::string_view option, T value, T lo,
                                      T hi) {
  if (value >= lo && value <= hi)
    return std::nullopt;
  return absl::StrCat(toAbsl(option), " ", value, " is out of range: expected ",
                      lo, " to ", hi);
}

// The value of the option args[i]: after its '=', or the next argument
// (then i moves onto it).
std::optional<std::string> takeValue(std::span<const std::string> args,
                                     size_t &i, std::string &value) {
  const std::string &arg = args[i];
  size_t eq = arg.find('=');
  if (eq != std::string::npos)
    value = arg.substr(eq + 1);
  else if (i + 1 < args.size())
    value = args[++i];
  else
    return absl::StrCat("option '", arg, "' needs a value");
  return std::nullopt;
}

std::optional<std::string> parseFormats(const std::string &text,
                                        std::vector<Format> &formats) {
  formats.clear();
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::optional<Format> f =
        formatFromName(std::string_view(item.data(), item.size()));
    if (!f)
      return absl::StrCat("unknown format '", item, "'");
    if (std::find(formats.begin(), formats.end(), *f) != formats.end())
      return absl::StrCat("--format lists ", item, " twice");
    formats.push_back(*f);
  }
  if (formats.empty())
    return std::string("--format is empty");
  return std::nullopt;
}

} // namespace

std::optional<std::string> parseMatmul(std::span<const std::string> args,
                                       MatmulOptions &o) {
  o = MatmulOptions{};
  o.m = {1, 2, 3, 4, 8, 16, 64, 512};
  o.threads = {static_cast<int>(hostCores().size())};
  bool format = false, cold = false, hot = false, reps = false, minTime = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    if (std::find(std::begin(kFlags), std::end(kFlags), name) !=
        std::end(kFlags)) {
      if (eq != std::string::npos)
        return absl::StrCat("option '", name, "' takes no value");
      cold |= name == "--cold";
      hot |= name == "--hot";
      o.json |= name == "--json";
      continue;
    }
    if (std::find(std::begin(kValueOptions), std::end(kValueOptions), name) ==
        std::end(kValueOptions))
      return unknownArgument(arg, name);
    std::string value;
    if (std::optional<std::string> problem = takeValue(args, i, value))
      return problem;

    std::optional<std::string> problem;
    if (name == "--format") {
      problem = parseFormats(value, o.formats);
      format = true;
    } else if (name == "--m") {
      problem = parseList(name, value, o.m);
    } else if (name == "--threads") {
      problem = parseList(name, value, o.threads);
    } else if (name == "--k") {
      problem = parseNumber(name, value, o.k);
    } else if (name == "--n") {
      problem = parseNumber(name, value, o.n);
    } else if (name == "--seed") {
      problem = parseNumber(name, value, o.seed);
    } else if (name == "--reps") {
      int n = 0;
      problem = parseNumber(name, value, n);
      o.reps.reps = n;
      reps = true;
    } else if (name == "--rounds") {
      problem = parseNumber(name, value, o.rounds);
    } else if (name == "--min-time") {
      problem = parseSeconds(name, value, o.reps.minSeconds);
      minTime = true;
    } else if (name == "--onednn-isa" || name == "--onednn-also") {
      auto names = onednnIsaNames();
      bool none = name == "--onednn-also" && value == "none";
      if (!none && std::find(names.begin(), names.end(), value) == names.end())
        problem = absl::StrCat(
            "unknown oneDNN ISA '", value, "': expected ",
            name == "--onednn-also" ? "none, " : "",
            absl::StrJoin(
                names, ", ",
                [](std::string *out, std::string_view n) { out->append(n); }));
      (name == "--onednn-isa" ? o.onednnIsa : o.onednnAlso) = value;
    } else if (name == "--kernels") {
      o.kernels.clear();
      for (absl::string_view item :
           absl::StrSplit(value, ',', absl::SkipEmpty()))
        o.kernels.emplace_back(item);
      if (o.kernels.empty())
        problem = std::string("--kernels is empty");
    } else if (name == "--cold-mib") {
      uint64_t mib;
      problem = parseNumber(name, value, mib);
      if (!problem)
        problem = checkRange(name, mib, uint64_t{1}, uint64_t{1} << 20);
      o.setBytes = mib << 20;
    }
    if (problem)
      return problem;
  }
  if (!format)
    return std::string("matmul needs --format");
  if (cold && hot)
    return std::string("--cold and --hot exclude each other");
  o.cold = !hot;
  if (reps && minTime)
    return std::string("--reps and --min-time exclude each other");
  return validate(o);
}

std::optional<std::string> parsePorts(std::span<const std::string> args,
                                      PortOptions &o) {
  o = PortOptions{};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i].substr(0, args[i].find('='));
    if (name != "--isa" && name != "--rounds" && name != "--min-time")
      return unknownArgument(args[i], name);
    std::string value;
    std::optional<std::string> problem = takeValue(args, i, value);
    if (!problem && name == "--isa")
      o.isa = value;
    else if (!problem && name == "--rounds")
      problem = parseNumber(name, value, o.rounds);
    else if (!problem)
      problem = parseSeconds(name, value, o.secondsPerRun);
    if (problem)
      return problem;
  }
  if (std::optional<std::string> problem =
          checkRange("--rounds", o.rounds, 1, 1000))
    return problem;
  if (!(o.secondsPerRun >= 0.001 && o.secondsPerRun <= 10))
    return std::string(
        "--min-time is out of range: expected 0.001 to 10 seconds");
  return std::nullopt;
}

std::optional<std::string> parseModel(std::span<const std::string> args,
                                      ModelOptions &o) {
  o = ModelOptions{};
  const int cores = static_cast<int>(hostCores().size());
  o.threads = cores > 1 ? std::vector<int>{1, cores} : std::vector<int>{1};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i].substr(0, args[i].find('='));
    if (name == "--json") {
      o.json = true;
      continue;
    }
    if (name == "--pin") {
      o.pin = true;
      continue;
    }
    if (name == "--steps") {
      o.steps = true;
      continue;
    }
    if (name != "--plan" && name != "-m" && name != "--threads" &&
        name != "--prompt" && name != "--decode" && name != "--rounds")
      return unknownArgument(args[i], name);
    std::string value;
    std::optional<std::string> problem = takeValue(args, i, value);
    if (!problem && name == "--plan")
      o.plan = value;
    else if (!problem && name == "-m")
      o.model = value;
    else if (!problem && name == "--threads")
      problem = parseList(name, value, o.threads);
    else if (!problem && name == "--prompt")
      problem = parseList(name, value, o.prompts);
    else if (!problem && name == "--decode")
      problem = parseNumber(name, value, o.decode);
    else if (!problem)
      problem = parseNumber(name, value, o.rounds);
    if (problem)
      return problem;
  }
  if (o.plan.empty() || o.model.empty())
    return std::string("kf-bench model needs --plan MODEL.kfp and -m FILE");
  for (int t : o.threads)
    if (std::optional<std::string> problem =
            checkRange("--threads", t, 1, 1024))
      return problem;
  for (int p : o.prompts)
    if (p < 1)
      return absl::StrCat("--prompt ", p,
                          " is out of range: expected 1 or more");
  if (std::optional<std::string> problem =
          checkRange("--decode", o.decode, 1, 100000))
    return problem;
  return checkRange("--rounds", o.rounds, 1, 1000);
}

int run(std::span<const std::string> args, std::ostream &out, std::ostream &err,
        std::span<const MatmulKernel> compiled) {
  if (args.empty()) {
    err << kUsage;
    return 1;
  }
  if (args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    out << kUsage;
    return 0;
  }
  if (args[0] == "ports") {
    PortOptions options;
    if (std::optional<std::string> problem =
            parsePorts(args.subspan(1), options)) {
      err << "kf-bench: " << *problem << " (kf-bench --help for usage)\n";
      return 1;
    }
    absl::StatusOr<PortReport> report =
        measurePorts(options.isa, options.rounds, options.secondsPerRun);
    if (!report.ok()) {
      err << "kf-bench: " << report.status().message() << "\n";
      return 1;
    }
    printPorts(*report, out);
    return 0;
  }
  if (args[0] == "model") {
    ModelOptions options;
    if (std::optional<std::string> problem =
            parseModel(args.subspan(1), options)) {
      err << "kf-bench: " << *problem << " (kf-bench --help for usage)\n";
      return 1;
    }
    if (absl::Status s = runModel(options, out); !s.ok()) {
      err << "kf-bench: " << s.message() << "\n";
      return 1;
    }
    return 0;
  }
  if (args[0] != "matmul") {
    err << "kf-bench: unknown command '" << args[0]
        << "' (kf-bench --help for usage)\n";
    return 1;
  }
  MatmulOptions options;
  if (std::optional<std::string> problem =
          parseMatmul(args.subspan(1), options)) {
    err << "kf-bench: " << *problem << " (kf-bench --help for usage)\n";
    return 1;
  }
  std::vector<MatmulKernel> kernels = {referenceKernel()};
  kernels.insert(kernels.end(), compiled.begin(), compiled.end());
  if (!options.kernels.empty()) {
    // Only the named kernels, in the order they are always run.
    for (const std::string &name : options.kernels)
      if (std::none_of(kernels.begin(), kernels.end(),
                       [&](const MatmulKernel &k) { return k.name == name; })) {
        std::string known;
        for (const MatmulKernel &k : kernels)
          absl::StrAppend(&known, known.empty() ? "" : ", ", k.name);
        err << "kf-bench: unknown kernel '" << name << "': expected " << known
            << " (kf-bench --help for usage)\n";
        return 1;
      }
    std::erase_if(kernels, [&](const MatmulKernel &k) {
      return std::find(options.kernels.begin(), options.kernels.end(),
                       k.name) == options.kernels.end();
    });
  }
  if (absl::Status s = runMatmul(options, kernels, out); !s.ok()) {
    err << "kf-bench: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

} // namespace kf::bench
