#include "run.h"

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "agreement.h"
#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/reference/model.h"
#include "kf/deepseek_v4/reference/weights.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/host_cpu.h"
#include "kf/runtime/npy.h"
#include "kf/runtime/progress_bar.h"
#include "kf/runtime/session.h"
#include "kf/runtime/status_macros.h"

namespace kf::run_tool {

namespace {

namespace dsv4 = kf::deepseek_v4;

constexpr std::string_view kUsage =
    "usage: kf-run --engine reference|compiled -m FILE --tokens T1,T2,... "
    "[options]\n"
    "  runs the tokens as one prefill from position 0 and prints the next "
    "token\n"
    "  --engine reference     the golden reference forward\n"
    "  --engine compiled      the plans of --plan, compiled for this model\n"
    "                         by kf-compile -m FILE -o MODEL.kfp\n"
    "  --plan MODEL.kfp       the compiled engine's artifact\n"
    "  --threads N            the compiled engine's threads (default: one\n"
    "                         a physical core)\n"
    "  --pin                  the compiled engine: pins each thread to a\n"
    "                         core of its own, while there are cores\n"
    "  --decode N             then decodes N tokens one at a time, each the\n"
    "                         argmax of the previous logits, and prints them\n"
    "  --dump-logits OUT.npy  the logits of every position computed, float32\n"
    "                         [positions, vocab]: each prompt token's (the\n"
    "                         compiled engine: the last one's), then each\n"
    "                         decoded token's\n"
    "  --dump-hidden DIR      DIR/layer_L.npy: the stream state after layer "
    "L,\n"
    "                         float32 [tokens, streams, embedding], of the "
    "prompt\n"
    "                         (the compiled engine: a plan compiled with\n"
    "                         kf-compile --layer-outputs)\n"
    "  --no-sim               without the reference's quantization "
    "simulations\n"
    "  --compare              the compiled engine: runs the reference engine\n"
    "                         beside it, both fed the reference's tokens,\n"
    "                         and prints how their logits agree (argmax,\n"
    "                         KL divergence, largest difference)\n"
    "  --precision model|f32  model: the model's arithmetic, bf16 where it\n"
    "                         holds bf16 (the default); f32: every activation\n"
    "                         in f32, no simulation, as independent f32\n"
    "                         implementations compute\n";

struct Arguments {
  std::map<std::string, std::string, std::less<>> options;
  bool noSim = false;
  bool compare = false;
  bool pin = false;
};

constexpr std::string_view kValueOptions[] = {
    "--engine",      "-m",          "--tokens", "--decode", "--dump-logits",
    "--dump-hidden", "--precision", "--plan",   "--threads"};
constexpr std::string_view kRequired[] = {"--engine", "-m", "--tokens"};

// Fills `parsed`; returns the one-line message of a usage error, if any.
std::optional<std::string> parse(std::span<const std::string> args,
                                 Arguments &parsed) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--no-sim") {
      parsed.noSim = true;
      continue;
    }
    if (arg == "--compare") {
      parsed.compare = true;
      continue;
    }
    if (arg == "--pin") {
      parsed.pin = true;
      continue;
    }
    if (std::find(std::begin(kValueOptions), std::end(kValueOptions), arg) ==
        std::end(kValueOptions))
      return absl::StrCat("unknown argument '", arg, "'");
    if (i + 1 == args.size())
      return absl::StrCat("option '", arg, "' needs a value");
    parsed.options[arg] = args[++i];
  }
  for (std::string_view name : kRequired)
    if (!parsed.options.contains(name))
      return absl::StrCat("option '", std::string(name), "' is required");
  const std::string &engine = parsed.options["--engine"];
  if (engine != "reference" && engine != "compiled")
    return absl::StrCat("unknown engine '", engine,
                        "'; expected reference or compiled");
  if (engine == "compiled") {
    if (!parsed.options.contains("--plan"))
      return std::string("--engine compiled needs --plan MODEL.kfp "
                         "(kf-compile -m FILE -o MODEL.kfp)");
    // The precision is compiled into a plan.
    if (parsed.options.contains("--precision"))
      return std::string("option '--precision' is the reference engine's");
    if (parsed.noSim)
      return std::string("--no-sim: the compiled engine's simulations are "
                         "its plan's; compile it with kf-compile --no-sim");
  } else {
    for (std::string_view option : {"--plan", "--threads"})
      if (parsed.options.contains(option))
        return absl::StrCat("option '", std::string(option),
                            "' is the compiled engine's");
    if (parsed.pin)
      return std::string("option '--pin' is the compiled engine's");
    if (parsed.compare)
      return std::string("--compare sets the compiled engine against the "
                         "reference: give --engine compiled");
  }
  if (auto p = parsed.options.find("--precision");
      p != parsed.options.end() && p->second != "model" && p->second != "f32")
    return absl::StrCat("unknown precision '", p->second,
                        "'; expected model or f32");
  return std::nullopt;
}

// "1,2,3" as token ids below the vocabulary size.
absl::StatusOr<std::vector<int32_t>> parseTokens(const std::string &list,
                                                 uint32_t vocab) {
  std::vector<int32_t> tokens;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    uint32_t token = 0;
    if (!absl::SimpleAtoi(item, &token))
      return absl::InvalidArgumentError(absl::StrCat(
          "--tokens: '", item, "' is not a token id (a non-negative integer)"));
    if (token >= vocab)
      return absl::InvalidArgumentError(absl::StrCat("--tokens: token ", token,
                                                     " is outside the ", vocab,
                                                     "-token vocabulary"));
    tokens.push_back(static_cast<int32_t>(token));
  }
  return tokens;
}

// The index of the largest logit (the first one on ties).
int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) -
                              logits.begin());
}

// The FP8 activation simulation quantizes every Lin input in blocks of 128
// (docs/models/deepseek_v4_model.md §2): the widths those inputs have must be
// multiples of 128.
absl::Status checkSimulationWidths(const dsv4::Config &c,
                                   const std::string &file) {
  for (uint32_t width : {c.nEmbd, c.qLoraRank, c.oGroups * c.oLoraRank,
                         c.nFfExp, c.nFfExp * c.nExpertShared})
    if (width % 128 != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": a linear input of width ", width,
          " is not a multiple of 128, which the FP8 activation simulation "
          "needs; run with --no-sim"));
  return absl::OkStatus();
}

// --decode's count, 0 without it.
absl::StatusOr<uint32_t> parseDecodeSteps(const Arguments &args) {
  uint32_t steps = 0;
  if (auto decode = args.options.find("--decode");
      decode != args.options.end() && !absl::SimpleAtoi(decode->second, &steps))
    return absl::InvalidArgumentError(
        absl::StrCat("--decode: '", decode->second,
                     "' is not a token count (a non-negative integer)"));
  return steps;
}

// Writes DIR/layer_L.npy for every layer: `layer(L)`, the stream state
// after layer L of the prompt's tokens, float32 [tokens, hc, D].
absl::Status
writeLayerStreams(const std::string &dir, const dsv4::Config &config,
                  size_t tokens,
                  absl::FunctionRef<std::span<const float>(uint32_t)> layer) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    return absl::InternalError(
        absl::StrCat(dir, ": cannot create the directory: ", error.message()));
  int64_t shape[] = {static_cast<int64_t>(tokens), config.hc, config.nEmbd};
  for (uint32_t l = 0; l < config.nLayer; ++l)
    KF_RETURN_IF_ERROR(writeNpyFloat32(absl::StrCat(dir, "/layer_", l, ".npy"),
                                       shape, layer(l)));
  return absl::OkStatus();
}

// The compiled engine: the artifact's prefill and decode plans on the
// model file's weights (docs/engine.md, "Sessions").
absl::Status runCompiled(const Arguments &args, std::ostream &out,
                         std::ostream &err) {
  const std::string &path = args.options.at("-m");
  dsv4::Config config;
  {
    // The plans' weights map the file again, as they bind them.
    KF_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(path));
    KF_ASSIGN_OR_RETURN(config, dsv4::Config::fromGguf(file));
  }
  KF_ASSIGN_OR_RETURN(std::vector<int32_t> tokens,
                      parseTokens(args.options.at("--tokens"), config.nVocab));
  KF_ASSIGN_OR_RETURN(uint32_t steps, parseDecodeSteps(args));
  int threads = static_cast<int>(hostCores().size());
  if (auto t = args.options.find("--threads"); t != args.options.end())
    if (!absl::SimpleAtoi(t->second, &threads) || threads < 1 || threads > 1024)
      return absl::InvalidArgumentError(absl::StrCat(
          "--threads: '", t->second, "' is not a thread count (1 to 1024)"));
  ThreadPool pool(threads, args.pin ? pinningOrder(hostCores(), threads)
                                    : std::vector<int>{});
  if (pool.pinFailures() > 0)
    err << "kf-run: " << pool.pinFailures() << " of " << threads
        << " threads could not be pinned to a CPU; they run unpinned\n";
  LoadProgress progress;
  absl::StatusOr<std::unique_ptr<Session>> opened = [&] {
    ProgressBar bar(progress, "kf-run: packing the weights");
    return Session::open(args.options.at("--plan"), path, pool, &progress);
  }();
  KF_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, std::move(opened));
  if (session->vocabulary() != config.nVocab)
    return absl::InvalidArgumentError(absl::StrCat(
        args.options.at("--plan"), ": its logits are ", session->vocabulary(),
        " tokens wide; ", path, " has ", config.nVocab));
  auto dumpLogits = args.options.find("--dump-logits");
  std::vector<float> dumped;
  // With --compare, the reference engine on the same file, with the
  // simulations kf-compile compiles in by default; every position's logits
  // of both go into the agreement, and the reference's argmax is the next
  // token of both.
  std::optional<dsv4::reference::Weights> referenceWeights;
  std::optional<dsv4::reference::Model> reference;
  LogitsAgreement agreement;
  std::vector<float> referenceLogits;
  if (args.compare) {
    KF_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(path));
    KF_RETURN_IF_ERROR(checkSimulationWidths(config, path));
    KF_ASSIGN_OR_RETURN(referenceWeights,
                        dsv4::reference::Weights::fromGguf(config, file));
    reference.emplace(*referenceWeights,
                      dsv4::reference::Options{.simulateQuantization = true});
    referenceLogits = reference->prefill(tokens).logits;
  }
  // --dump-hidden reads each layer's streams from the plans' outputs.
  auto dumpHiddenDir = args.options.find("--dump-hidden");
  std::vector<const Session::Output *> streams;
  if (dumpHiddenDir != args.options.end()) {
    for (uint32_t l = 0; l < config.nLayer; ++l) {
      std::string name = absl::StrCat("blk.", l, ".streams");
      auto found = std::find_if(
          session->outputs().begin(), session->outputs().end(),
          [&](const Session::Output &o) { return o.name == name; });
      if (found == session->outputs().end())
        return absl::InvalidArgumentError(absl::StrCat(
            args.options.at("--plan"), " gives no ", name,
            ": compile it with kf-compile --layer-outputs for --dump-hidden"));
      streams.push_back(&*found);
    }
  }
  KF_ASSIGN_OR_RETURN(std::span<const float> logits, session->prefill(tokens));
  if (dumpHiddenDir != args.options.end())
    KF_RETURN_IF_ERROR(writeLayerStreams(
        dumpHiddenDir->second, config, tokens.size(), [&](uint32_t l) {
          const std::vector<uint8_t> &bytes = streams[l]->bytes;
          return std::span<const float>(
              reinterpret_cast<const float *>(bytes.data()),
              bytes.size() / sizeof(float));
        }));
  auto nextToken = [&](std::span<const float> compiled) {
    if (!reference)
      return argmax(compiled);
    agreement.add(referenceLogits, compiled);
    return argmax(referenceLogits);
  };
  int32_t next = nextToken(logits);
  out << "prefill of " << tokens.size() << " tokens: next token " << next
      << " (logit " << logits[next] << ")\n";
  dumped.assign(logits.begin(), logits.end());
  if (steps > 0) {
    out << "decoded:";
    for (uint32_t step = 0; step < steps; ++step) {
      out << " " << next;
      if (reference)
        referenceLogits = reference->decode(next).logits;
      KF_ASSIGN_OR_RETURN(logits, session->decode(next));
      next = nextToken(logits);
      if (dumpLogits != args.options.end())
        dumped.insert(dumped.end(), logits.begin(), logits.end());
    }
    out << "\n";
  }
  if (reference)
    out << absl::StrFormat(
        "against the reference engine, both fed its tokens, over %d "
        "positions: argmax equal at %d (%.1f%%), KL(reference || compiled) "
        "mean %.3g nats, largest %.3g; largest |logit difference| %.3g\n",
        agreement.positions, agreement.argmaxEqual,
        100 * agreement.argmaxShare(), agreement.meanKl(), agreement.klMax,
        agreement.maxAbsDiff);
  if (dumpLogits != args.options.end()) {
    int64_t shape[] = {static_cast<int64_t>(1 + steps), config.nVocab};
    KF_RETURN_IF_ERROR(writeNpyFloat32(dumpLogits->second, shape, dumped));
  }
  // What the session holds (as kf-compile --emit=stats predicts it) beside
  // what the process held at its peak.
  const SessionMemory &memory = session->memory();
  out.flush();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  constexpr double kMiB = 1 << 20;
  err << absl::StrFormat(
      "kf-run: memory: packed weights %.1f MiB + weights read in place %.1f "
      "MiB + state %.1f MiB + arenas %.1f MiB = %.1f MiB; peak resident "
      "%.1f MiB\n",
      memory.packedWeights / kMiB, memory.mappedWeights / kMiB,
      memory.state / kMiB, memory.arenas / kMiB, memory.total() / kMiB,
      usage.ru_maxrss * 1024 / kMiB);
  return absl::OkStatus();
}

absl::Status runReference(const Arguments &args, std::ostream &out) {
  const std::string &path = args.options.at("-m");
  KF_ASSIGN_OR_RETURN(gguf::File file, gguf::File::open(path));
  KF_ASSIGN_OR_RETURN(dsv4::Config config, dsv4::Config::fromGguf(file));
  KF_ASSIGN_OR_RETURN(std::vector<int32_t> tokens,
                      parseTokens(args.options.at("--tokens"), config.nVocab));
  KF_ASSIGN_OR_RETURN(uint32_t decodeSteps, parseDecodeSteps(args));
  auto dumpHidden = args.options.find("--dump-hidden");
  auto dumpLogits = args.options.find("--dump-logits");
  auto precision = args.options.find("--precision");
  const dsv4::reference::Options options{
      .precision = precision != args.options.end() && precision->second == "f32"
                       ? dsv4::reference::Precision::F32
                       : dsv4::reference::Precision::Model,
      .simulateQuantization = !args.noSim,
      .keepLayerStreams = dumpHidden != args.options.end(),
      .keepPositionLogits = dumpLogits != args.options.end()};
  if (options.simulates())
    KF_RETURN_IF_ERROR(checkSimulationWidths(config, path));
  KF_ASSIGN_OR_RETURN(dsv4::reference::Weights weights,
                      dsv4::reference::Weights::fromGguf(config, file));
  dsv4::reference::Model model(weights, options);
  dsv4::reference::ForwardResult result = model.prefill(tokens);

  int32_t next = argmax(result.logits);
  out << "prefill of " << tokens.size() << " tokens: next token " << next
      << " (logit " << result.logits[next] << ")\n";
  // Every position's logits, the prompt's and then each decoded token's.
  std::vector<float> logits = std::move(result.positionLogits);
  if (decodeSteps > 0) {
    out << "decoded:";
    for (uint32_t step = 0; step < decodeSteps; ++step) {
      out << " " << next;
      std::vector<float> stepLogits = model.decode(next).logits;
      next = argmax(stepLogits);
      if (options.keepPositionLogits)
        logits.insert(logits.end(), stepLogits.begin(), stepLogits.end());
    }
    out << "\n";
  }
  if (options.keepPositionLogits) {
    int64_t shape[] = {static_cast<int64_t>(tokens.size() + decodeSteps),
                       config.nVocab};
    KF_RETURN_IF_ERROR(writeNpyFloat32(dumpLogits->second, shape, logits));
  }
  if (options.keepLayerStreams)
    KF_RETURN_IF_ERROR(writeLayerStreams(
        dumpHidden->second, config, tokens.size(), [&](uint32_t l) {
          return std::span<const float>(result.layerStreams[l]);
        }));
  return absl::OkStatus();
}

} // namespace

int run(std::span<const std::string> args, std::ostream &out,
        std::ostream &err) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    out << kUsage;
    return 0;
  }
  Arguments parsed;
  if (std::optional<std::string> usage = parse(args, parsed)) {
    err << "kf-run: " << *usage << " (kf-run --help for usage)\n";
    return 2;
  }
  absl::Status status = parsed.options["--engine"] == "compiled"
                            ? runCompiled(parsed, out, err)
                            : runReference(parsed, out);
  if (!status.ok()) {
    err << "kf-run: " << status.message() << "\n";
    return 1;
  }
  return 0;
}

} // namespace kf::run_tool
