#include "onednn.h"

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "buffer.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/status_macros.h"
#include "machine.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace kf::bench {

namespace {

using Dt = dnnl::memory::data_type;
using Tag = dnnl::memory::format_tag;

absl::Status onednnError(const dnnl::error &e) {
  return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
}

} // namespace

// The weight copies of a set, shared by the matmuls (one per M) whose
// primitives want the same layout, and the plain matrix they hold.
struct OneDnnWeightSet {
  std::vector<uint8_t> plain; // K x N, row-major
  dnnl::memory::desc desc;
  PageBuffer buffer;
  std::vector<dnnl::memory> copies;
  BufferCache *cache = nullptr; // where `buffer` goes back to

  ~OneDnnWeightSet() {
    if (cache)
      cache->give(std::move(buffer));
  }
};

struct OneDnnMatmul::Impl {
  int64_t m, k, n;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
  std::vector<uint8_t> a, c; // plain row-major A and C
  dnnl::memory aMem, cMem;
  std::shared_ptr<OneDnnWeightSet> weights;
};

std::string_view onednnTypeName(OneDnnType type) {
  return type == OneDnnType::Int8 ? "u8s8s32" : "f32";
}

std::string onednnVersion() {
  const dnnl::version_t *v = dnnl::version();
  return absl::StrCat(v->major, ".", v->minor, ".", v->patch);
}

namespace {
std::atomic<bool> touched{false};
} // namespace

bool onednnTouched() { return touched; }

absl::Status setOnednnThreads(int threads) {
  touched = true;
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  // oneDNN runs its parallel regions on the OpenMP runtime it was built with
  // (Debian's: libgomp). Its omp_set_num_threads is looked up rather than
  // linked because linking OpenMP would bring the compiler's own runtime
  // (clang's libomp), a second runtime that oneDNN does not read.
  using SetThreads = void (*)(int);
  auto set =
      reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (!set)
    return absl::FailedPreconditionError(
        "oneDNN uses OpenMP, but omp_set_num_threads is not loaded");
  set(threads);
  return absl::OkStatus();
#else
  return absl::FailedPreconditionError(
      "oneDNN is built with a threading runtime other than OpenMP; kf-bench "
      "cannot set its thread count");
#endif
}

namespace {

struct IsaName {
  std::string_view name;
  dnnl::cpu_isa isa;
};

constexpr IsaName kIsas[] = {
    {"all", dnnl::cpu_isa::all},
    {"sse41", dnnl::cpu_isa::sse41},
    {"avx", dnnl::cpu_isa::avx},
    {"avx2", dnnl::cpu_isa::avx2},
    {"avx2_vnni", dnnl::cpu_isa::avx2_vnni},
    {"avx512_core", dnnl::cpu_isa::avx512_core},
    {"avx512_core_vnni", dnnl::cpu_isa::avx512_core_vnni},
    {"avx512_core_bf16", dnnl::cpu_isa::avx512_core_bf16},
    {"avx512_core_amx", dnnl::cpu_isa::avx512_core_amx},
};

constexpr auto kIsaNames = [] {
  std::array<std::string_view, std::size(kIsas)> names{};
  for (size_t i = 0; i < names.size(); ++i)
    names[i] = kIsas[i].name;
  return names;
}();

} // namespace

std::span<const std::string_view> onednnIsaNames() { return kIsaNames; }

absl::Status setOnednnMaxIsa(std::string_view name) {
  touched = true;
  for (const IsaName &i : kIsas)
    if (i.name == name) {
      try {
        dnnl::set_max_cpu_isa(i.isa);
      } catch (const dnnl::error &e) {
        return absl::FailedPreconditionError(
            absl::StrCat("oneDNN refuses ISA ", toAbsl(name), ": ", e.what()));
      }
      return absl::OkStatus();
    }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown oneDNN ISA '", toAbsl(name), "'"));
}

std::string onednnEffectiveIsa() {
  touched = true;
  try {
    dnnl::cpu_isa effective = dnnl::get_effective_cpu_isa();
    for (const IsaName &i : kIsas)
      if (i.isa == effective)
        return std::string(i.name);
  } catch (const dnnl::error &) {
  }
  return "unknown";
}

OneDnnMatmul::OneDnnMatmul(std::unique_ptr<Impl> impl, OneDnnType type)
    : impl_(std::move(impl)), type_(type) {}

OneDnnMatmul::~OneDnnMatmul() = default;

absl::StatusOr<std::unique_ptr<OneDnnMatmul>> OneDnnMatmul::create(
    OneDnnType type, int64_t m, int64_t k, int64_t n, uint64_t setBytes,
    uint64_t seed, std::unique_ptr<OneDnnMatmul> previous, BufferCache *cache) {
  touched = true;
  auto impl = std::make_unique<Impl>();
  Impl &d = *impl;
  d.m = m;
  d.k = k;
  d.n = n;
  const bool int8 = type == OneDnnType::Int8;
  const Dt aType = int8 ? Dt::u8 : Dt::f32, bType = int8 ? Dt::s8 : Dt::f32,
           cType = int8 ? Dt::s32 : Dt::f32;
  const size_t element = int8 ? 1 : 4;
  std::mt19937_64 rng(seed);
  // Activations below 128: no pair of u8 x s8 products can saturate a 16-bit
  // sum, so a machine without VNNI computes the exact product too; the time
  // does not depend on the values.
  std::uniform_int_distribution<int> u7(0, 127), s8(-128, 127);
  std::normal_distribution<float> normal;
  auto fill = [&](std::vector<uint8_t> &bytes, bool isA) {
    if (int8) {
      for (uint8_t &v : bytes)
        v = static_cast<uint8_t>(isA ? u7(rng) : s8(rng));
      return;
    }
    for (size_t i = 0; i < bytes.size(); i += 4) {
      float v = normal(rng);
      std::memcpy(&bytes[i], &v, 4);
    }
  };
  d.a.resize(m * k * element);
  d.c.resize(m * n * 4);
  fill(d.a, true);
  try {
    dnnl::memory::desc aMd({m, k}, aType, Tag::ab),
        bPlain({k, n}, bType, Tag::ab), bAny({k, n}, bType, Tag::any),
        cMd({m, n}, cType, Tag::ab);
    d.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(aMd, bAny, cMd),
                                        d.engine);
    d.primitive = dnnl::matmul(d.pd);
    d.aMem = dnnl::memory(aMd, d.engine, d.a.data());
    d.cMem = dnnl::memory(cMd, d.engine, d.c.data());
    dnnl::memory::desc wMd = d.pd.weights_desc();
    const uint64_t copyBytes = wMd.get_size();
    const int64_t copies = setBytes == 0 ? 1 : copiesIn(setBytes, copyBytes);
    if (previous && previous->type_ == type && previous->impl_->k == k &&
        previous->impl_->n == n && previous->impl_->weights->desc == wMd &&
        previous->copies() == copies) {
      d.weights = previous->impl_->weights;
    } else {
      previous.reset();
      auto set = std::make_shared<OneDnnWeightSet>();
      set->plain.resize(k * n * element);
      fill(set->plain, false);
      set->desc = wMd;
      const uint64_t bytes = copyBytes * copies;
      if (cache) {
        KF_ASSIGN_OR_RETURN(set->buffer, cache->take(bytes));
        set->cache = cache;
      } else {
        KF_ASSIGN_OR_RETURN(set->buffer, PageBuffer::allocate(bytes));
      }
      // Reorder once, then copy bytes: every copy is the same matrix at
      // its own address, which is all the caches can tell apart.
      dnnl::memory plain(bPlain, d.engine, set->plain.data());
      dnnl::memory first(wMd, d.engine, set->buffer.data());
      dnnl::reorder(plain, first).execute(d.stream, plain, first);
      d.stream.wait();
      for (int64_t i = 0; i < copies; ++i) {
        uint8_t *p = set->buffer.data() + i * copyBytes;
        if (i > 0)
          std::memcpy(p, set->buffer.data(), copyBytes);
        set->copies.emplace_back(wMd, d.engine, p);
      }
      d.weights = std::move(set);
    }
  } catch (const dnnl::error &e) {
    return onednnError(e);
  }
  return std::unique_ptr<OneDnnMatmul>(new OneDnnMatmul(std::move(impl), type));
}

absl::Status OneDnnMatmul::run(int64_t call) {
  Impl &d = *impl_;
  const auto &copies = d.weights->copies;
  try {
    d.primitive.execute(d.stream,
                        {{DNNL_ARG_SRC, d.aMem},
                         {DNNL_ARG_WEIGHTS, copies[call % copies.size()]},
                         {DNNL_ARG_DST, d.cMem}});
    d.stream.wait();
  } catch (const dnnl::error &e) {
    return onednnError(e);
  }
  return absl::OkStatus();
}

absl::Status OneDnnMatmul::check(uint64_t seed) const {
  const Impl &d = *impl_;
  const std::vector<uint8_t> &b = d.weights->plain;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> anyRow(0, d.m - 1),
      anyColumn(0, d.n - 1);
  auto load = [](const std::vector<uint8_t> &v, int64_t i, auto zero) {
    decltype(zero) x;
    std::memcpy(&x, v.data() + i * sizeof(x), sizeof(x));
    return x;
  };
  for (int sample = 0; sample < 64; ++sample) {
    // The corners first, then drawn outputs.
    int64_t i = sample < 2 ? sample * (d.m - 1) : anyRow(rng);
    int64_t j = sample < 2 ? sample * (d.n - 1) : anyColumn(rng);
    if (type_ == OneDnnType::Int8) {
      int64_t want = 0;
      for (int64_t x = 0; x < d.k; ++x)
        want += int64_t{d.a[i * d.k + x]} * static_cast<int8_t>(b[x * d.n + j]);
      int32_t got = load(d.c, i * d.n + j, int32_t{});
      if (got != want)
        return absl::InternalError(absl::StrCat("oneDNN u8s8s32 output (", i,
                                                ", ", j, ") is ", got,
                                                ", the plain product ", want));
      continue;
    }
    double want = 0, magnitude = 0;
    for (int64_t x = 0; x < d.k; ++x) {
      double p = double(load(d.a, i * d.k + x, float{})) *
                 load(b, x * d.n + j, float{});
      want += p;
      magnitude += std::fabs(p);
    }
    const double nu = d.k * std::ldexp(1.0, -24);
    const double bound = nu / (1 - nu) * magnitude;
    float got = load(d.c, i * d.n + j, float{});
    if (!(std::fabs(got - want) <= bound))
      return absl::InternalError(
          absl::StrFormat("oneDNN f32 output (%d, %d) is %.9g, the plain "
                          "product %.9g: off by more than %.3g",
                          i, j, got, want, bound));
  }
  return absl::OkStatus();
}

std::string OneDnnMatmul::implementation() const {
  try {
    return impl_->pd.impl_info_str();
  } catch (const dnnl::error &) {
    return "unknown";
  }
}

uint64_t OneDnnMatmul::weightBytes() const {
  return impl_->weights->desc.get_size();
}

int64_t OneDnnMatmul::copies() const {
  return static_cast<int64_t>(impl_->weights->copies.size());
}

std::span<const uint8_t> OneDnnMatmul::a() const { return impl_->a; }
std::span<const uint8_t> OneDnnMatmul::b() const {
  return impl_->weights->plain;
}
std::span<const uint8_t> OneDnnMatmul::c() const { return impl_->c; }

} // namespace kf::bench
