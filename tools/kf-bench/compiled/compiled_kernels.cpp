#include "compiled_kernels.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/Codegen/MatmulKernel.h"
#include "kf/Target/TargetInfo.h"
#include "kf/Tiling/CacheBlocks.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/packing.h"

namespace kf::bench {

namespace {

using codegen::KernelIsa;

// The weight coding --kf-select-kernels decides for `format` on `isa` and
// `host`; for comparisons, KF_BENCH_CODING=file, ternary or codebook sets it
// where the format has it (else the file's).
absl::StatusOr<WeightCoding> codingOf(Format format, KernelIsa isa,
                                      const target::TargetInfo &host) {
  const char *env = std::getenv("KF_BENCH_CODING");
  if (!env)
    return codegen::getDefaultWeightCoding(format, isa, host);
  std::optional<WeightCoding> coding = kf::weightCodingNamed(env);
  if (!coding)
    return absl::InvalidArgumentError(
        absl::StrCat("KF_BENCH_CODING is '", env, "', expected ",
                     kf::toAbsl(kf::kWeightCodingNames)));
  if (!kf::hasWeightCoding(format, *coding) ||
      (coding == WeightCoding::CodeBook &&
       !codegen::hasCodeBookLayout(isa, host)))
    return WeightCoding::File;
  return *coding;
}

// KF_BENCH_DECODE=once or per_tile: every call of more columns than one tile
// decodes each block once, or in every tile, instead of as
// --kf-select-kernels would decide for the call's static M. For
// comparisons.
absl::StatusOr<std::optional<bool>> decodeOnceOverride() {
  const char *env = std::getenv("KF_BENCH_DECODE");
  if (!env)
    return std::nullopt;
  if (std::string_view(env) != "once" && std::string_view(env) != "per_tile")
    return absl::InvalidArgumentError(absl::StrCat(
        "KF_BENCH_DECODE is '", env, "', expected once or per_tile"));
  return std::string_view(env) == "once";
}

// The JIT-compiled kernels of one ISA, one per (format, N, K) and way of
// decoding: kernels are specialised on the shape, so the first packing of a
// shape compiles them.
class KernelCache {
public:
  KernelCache(KernelIsa isa, int64_t rows, target::TargetInfo host,
              bool fuseQuantize)
      : isa_(isa), rows_(rows), host_(std::move(host)),
        fuseQuantize_(fuseQuantize) {}

  // Compiles the kernels a call of (format, n, k) may run: the one that
  // decodes in every tile, and the one that decodes once where a call of
  // some M would (decodesOnce).
  absl::Status compile(Format format, int64_t n, int64_t k) {
    absl::StatusOr<std::optional<bool>> override = decodeOnceOverride();
    if (!override.ok())
      return override.status();
    absl::StatusOr<WeightCoding> coding = codingOf(format, isa_, host_);
    if (!coding.ok())
      return coding.status();
    const bool mayDecodeOnce =
        !fuseQuantize_ &&
        (override->has_value()
             ? **override
             : codegen::getDecodeOnceMinColumns(format, *coding).has_value());
    for (bool decodeOnce : {false, true}) {
      if (decodeOnce && !mayDecodeOnce)
        continue;
      if (absl::StatusOr<const codegen::JitKernel *> jit =
              get(format, n, k, decodeOnce);
          !jit.ok())
        return jit.status();
    }
    return absl::OkStatus();
  }

  // Whether a call of m columns runs the kernel that decodes once.
  bool decodesOnce(Format format, int64_t m) const {
    if (fuseQuantize_)
      return false;
    absl::StatusOr<std::optional<bool>> override = decodeOnceOverride();
    if (override.ok() && override->has_value())
      return **override;
    absl::StatusOr<WeightCoding> coding = codingOf(format, isa_, host_);
    return coding.ok() &&
           codegen::decodesOnceByDefault(format, *coding, m, kMaxCols);
  }

  absl::StatusOr<const codegen::JitKernel *> get(Format format, int64_t n,
                                                 int64_t k, bool decodeOnce) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto key = std::make_tuple(format, n, k, decodeOnce);
    if (auto it = kernels_.find(key); it != kernels_.end())
      return &it->second;
    codegen::MatmulKernelSpec spec{format, isa_, rows_, k, n, kMaxCols};
    spec.fuseQuantize = fuseQuantize_;
    absl::StatusOr<WeightCoding> coding = codingOf(format, isa_, host_);
    if (!coding.ok())
      return coding.status();
    spec.coding = *coding;
    spec.decodeOnce = decodeOnce;
    // The cache blocks --kf-block-caches decides for this machine, its
    // threads splitting N; the kernels use them when a call has more columns
    // than one tile.
    tiling::CacheBlocks blocks = tiling::blockCaches(
        {.format = format,
         .coding = spec.coding,
         .rows = rows_,
         .columns = spec.maxCols,
         .n = n,
         .k = k,
         .threads = std::max<int64_t>(1, host_.cores),
         .l1dBytes = host_.l1dBytes,
         .l2Bytes = host_.l2Bytes,
         .l1K = std::nullopt,
         .decodeScratchBytes =
             spec.decodeOnce ? std::optional(codegen::kMaxDecodeScratchBytes)
                             : std::nullopt});
    spec.l1K = blocks.l1K;
    spec.l2Rows = blocks.l2Rows;
    // For comparisons: KF_BENCH_NO_CACHE_BLOCKS=1 times the unblocked nest.
    if (const char *env = std::getenv("KF_BENCH_NO_CACHE_BLOCKS");
        env && std::string_view(env) == "1") {
      spec.l1K = spec.l2Rows = 0;
      spec.decodeOnce = false;
    }
    // For sweeps: KF_BENCH_PREFETCH=L2:L1[:free] prefetches the weights L2
    // bytes ahead into L2 and L1 bytes ahead into L1 in every tile (0:
    // none), each share kept at its decode step unless ":free" is given.
    if (const char *env = std::getenv("KF_BENCH_PREFETCH")) {
      std::vector<absl::string_view> parts = absl::StrSplit(env, ':');
      codegen::WeightPrefetch prefetch;
      prefetch.keepOrder = parts.size() == 2;
      if ((parts.size() != 2 && (parts.size() != 3 || parts[2] != "free")) ||
          !absl::SimpleAtoi(parts[0], &prefetch.l2Bytes) ||
          !absl::SimpleAtoi(parts[1], &prefetch.l1Bytes) ||
          prefetch.l2Bytes < 0 || prefetch.l1Bytes < 0)
        return absl::InvalidArgumentError(
            absl::StrCat("KF_BENCH_PREFETCH is '", env,
                         "', expected L2:L1[:free], two byte distances such "
                         "as 4096:1024"));
      spec.prefetch = prefetch;
    }
    llvm::Expected<codegen::JitKernel> kernel = codegen::jitMatmul(spec, host_);
    if (!kernel)
      return absl::InvalidArgumentError(llvm::toString(kernel.takeError()));
    return &kernels_.emplace(key, std::move(*kernel)).first->second;
  }

  // A kernel get() compiled before; the timed calls only look up.
  const codegen::JitKernel *find(Format format, int64_t n, int64_t k,
                                 bool decodeOnce) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kernels_.find(std::make_tuple(format, n, k, decodeOnce));
    return it == kernels_.end() ? nullptr : &it->second;
  }

  int64_t rows() const { return rows_; }

private:
  static constexpr int64_t kMaxCols = 8;

  KernelIsa isa_;
  int64_t rows_;
  target::TargetInfo host_;
  bool fuseQuantize_;
  std::mutex mutex_;
  std::map<std::tuple<Format, int64_t, int64_t, bool>, codegen::JitKernel>
      kernels_;
};

// The kernels of one family on `isa`: the int8 family's (the quantized
// formats, exact), or the float family's (BF16, F32: a reordered fp32 sum,
// named "-float" where the ISA runs both families). With fuseQuantize, the
// kernels that quantize their activations themselves ("-fq"): the bench
// hands them the fp32 rows, and their time includes the quantization the
// others' excludes.
MatmulKernel makeKernel(KernelIsa isa, int64_t rows,
                        const target::TargetInfo &host, bool floats,
                        bool fuseQuantize) {
  auto cache = std::make_shared<KernelCache>(isa, rows, host, fuseQuantize);
  MatmulKernel kernel;
  kernel.name = std::string("kf-") + codegen::getIsaName(isa).str();
  const bool bothFamilies = codegen::isaSupportsFormat(isa, Format::Q8_0) &&
                            codegen::isaSupportsFormat(isa, Format::F32);
  if (floats && bothFamilies)
    kernel.name += "-float";
  if (fuseQuantize)
    kernel.name += "-fq";
  kernel.supports = [isa, floats](Format format) {
    return codegen::isaSupportsFormat(isa, format) &&
           kf::isFloatFormat(format) == floats;
  };
  if (floats)
    kernel.agreement = Agreement::Reordered;
  kernel.rowGroup = rows;
  kernel.packWeights = [cache](Format format, int64_t n, int64_t k,
                               std::span<const uint8_t> fileRows)
      -> absl::StatusOr<std::vector<uint8_t>> {
    if (absl::Status compiled = cache->compile(format, n, k); !compiled.ok())
      return compiled;
    // Both ways of decoding read the same layout.
    return kf::packWeights(cache->find(format, n, k, false)->weightLayout,
                           fileRows, n, k);
  };
  kernel.packActivations =
      [fuseQuantize](
          Format format, int64_t m, int64_t k,
          std::span<const float> rows) -> absl::StatusOr<std::vector<uint8_t>> {
    if (fuseQuantize) {
      const auto *bytes = reinterpret_cast<const uint8_t *>(rows.data());
      return std::vector<uint8_t>(bytes, bytes + m * k * sizeof(float));
    }
    const Format activation = formatInfo(format).dotFormat;
    absl::StatusOr<uint64_t> column = kf::packedActivationBytes(activation, k);
    if (!column.ok())
      return column.status();
    std::vector<uint8_t> out(static_cast<size_t>(m) * *column);
    if (absl::Status s = kf::packActivations(activation, rows, m, k, k, out);
        !s.ok())
      return s;
    return out;
  };
  kernel.run = [cache](const MatmulArgs &args, int64_t rowBegin,
                       int64_t rowEnd) {
    const codegen::JitKernel *jit = cache->find(
        args.format, args.n, args.k, cache->decodesOnce(args.format, args.m));
    if (!jit)
      return absl::FailedPreconditionError(
          "kf kernel run before its weights were packed");
    jit->fn(args.weights, args.activations, args.out, args.n, args.m, rowBegin,
            rowEnd);
    return absl::OkStatus();
  };
  return kernel;
}

} // namespace

std::vector<MatmulKernel> compiledKernels() {
  llvm::Expected<target::TargetInfo> host = target::lookupTarget("host");
  if (!host) {
    llvm::consumeError(host.takeError());
    return {};
  }
  std::vector<MatmulKernel> kernels;

  for (bool floats : {false, true})
    for (KernelIsa isa : target::getIsasByPreference()) {
      const bool family =
          floats ? codegen::isaSupportsFormat(isa, Format::F32) ||
                       codegen::isaSupportsFormat(isa, Format::BF16)
                 : codegen::isaSupportsFormat(isa, Format::Q8_0);
      if (!family || !codegen::canRunIsa(*host, isa))
        continue;
      for (bool fuseQuantize : {false, true})
        kernels.push_back(makeKernel(
            isa, isa == KernelIsa::Scalar ? 4 : codegen::getIsaRows(isa), *host,
            floats, fuseQuantize));
    }
  return kernels;
}

} // namespace kf::bench
