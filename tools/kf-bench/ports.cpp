#include "ports.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "timing.h"

namespace kf::bench {

namespace {

using LoopFn = void (*)(int64_t iterations);

struct Case {
  const char *name;
  int perGroup; // instructions per loop iteration
  LoopFn loop;
};

#if defined(__x86_64__)

// Twelve instructions, each writing its own register 0..11 from sources
// 12..15 (AVX2 has 16 registers) or 30, 31 (AVX-512): no dependence between
// them beyond an accumulator's own, whose latency (at most 5 cycles here) 12
// registers hide.
#define KF_X12(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)
#define KF_X8(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7)
#define KF_ZMM_CLOBBERS                                                        \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",      \
      "xmm9", "xmm10", "xmm11", "xmm30", "xmm31"
#define KF_YMM_CLOBBERS                                                        \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",      \
      "xmm9", "xmm10", "xmm11", "xmm14", "xmm15"

// Sources hold the float 1.0 (also a harmless int), destinations start at 0:
// no float op meets a denormal or a NaN, whose assists would be timed.
#define KF_ZERO_ZMM(n) "vpxord %%zmm" #n ", %%zmm" #n ", %%zmm" #n "\n\t"
#define KF_ZERO_YMM(n) "vpxor %%ymm" #n ", %%ymm" #n ", %%ymm" #n "\n\t"
#define KF_ZMM_SETUP                                                           \
  "vpbroadcastd %[one], %%zmm30\n\tvmovdqa64 %%zmm30, %%zmm31\n\t" KF_X12(     \
      KF_ZERO_ZMM)
#define KF_YMM_SETUP                                                           \
  "vmovd %[one], %%xmm14\n\tvpbroadcastd %%xmm14, %%ymm14\n\t"                 \
  "vmovdqa %%ymm14, %%ymm15\n\t" KF_X12(KF_ZERO_YMM)

// Gathers read 8-byte entries from kGatherTable, in L1 (the IQ grid
// kernels' lookups), at the indices kLaneIndices: 8 different lines.
alignas(64) const uint64_t kGatherTable[64] = {};
alignas(32) const int32_t kLaneIndices[8] = {0, 8, 16, 24, 32, 40, 48, 56};

#define KF_LOOP(fname, target_features, setup, body, ...)                      \
  __attribute__((target(target_features))) void fname(int64_t n) {             \
    asm volatile(setup "1:\n\t" body "dec %[n]\n\tjnz 1b\n\t"                  \
                 : [n] "+r"(n)                                                 \
                 : [one] "r"(0x3f800000), [table] "r"(kGatherTable),           \
                   [lanes] "m"(kLaneIndices)                                   \
                 : __VA_ARGS__, "cc");                                         \
  }

#define KF_AVX512 "avx512f,avx512bw,avx512vl,avx512vnni"
#define KF_Z3(op, n) op " %%zmm30, %%zmm31, %%zmm" #n "\n\t"
#define KF_Z2(op, n) op " %%zmm30, %%zmm" #n "\n\t"
#define KF_Y3(op, n) op " %%ymm14, %%ymm15, %%ymm" #n "\n\t"
#define KF_Y2(op, n) op " %%ymm14, %%ymm" #n "\n\t"

#define KF_ZDPBUSD(n) KF_Z3("vpdpbusd", n)
#define KF_ZDPWSSD(n) KF_Z3("vpdpwssd", n)
#define KF_ZMULLD(n) KF_Z3("vpmulld", n)
#define KF_ZADDD(n) KF_Z3("vpaddd", n)
#define KF_ZSHUFB(n) KF_Z3("vpshufb", n)
#define KF_ZTERN(n) "vpternlogd $0xca, %%zmm30, %%zmm31, %%zmm" #n "\n\t"
#define KF_ZSRLW(n) "vpsrlw $4, %%zmm30, %%zmm" #n "\n\t"
#define KF_ZCVT(n) KF_Z2("vcvtdq2ps", n)
#define KF_ZMULPS(n) KF_Z3("vmulps", n)
#define KF_ZFMA(n) KF_Z3("vfmadd231ps", n)
#define KF_ZCHAIN(n) "vpaddd %%zmm0, %%zmm0, %%zmm0\n\t"

KF_LOOP(zChain, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZCHAIN), KF_ZMM_CLOBBERS)
KF_LOOP(zDpbusd, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZDPBUSD), KF_ZMM_CLOBBERS)
KF_LOOP(zDpwssd, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZDPWSSD), KF_ZMM_CLOBBERS)
KF_LOOP(zMulld, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZMULLD), KF_ZMM_CLOBBERS)
KF_LOOP(zAddd, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZADDD), KF_ZMM_CLOBBERS)
KF_LOOP(zShufb, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZSHUFB), KF_ZMM_CLOBBERS)
KF_LOOP(zTern, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZTERN), KF_ZMM_CLOBBERS)
KF_LOOP(zSrlw, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZSRLW), KF_ZMM_CLOBBERS)
KF_LOOP(zCvt, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZCVT), KF_ZMM_CLOBBERS)
KF_LOOP(zMulps, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZMULPS), KF_ZMM_CLOBBERS)
KF_LOOP(zFma, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZFMA), KF_ZMM_CLOBBERS)
// A Q8_0 block's column: 8 dots, then its sum converted, scaled by the
// weight and activation scales and added (kf::dot's order).
KF_LOOP(zQ8Column, KF_AVX512, KF_ZMM_SETUP,
        KF_X8(KF_ZDPBUSD) KF_ZCVT(8) KF_ZMULPS(9) KF_ZMULPS(10)
            KF_Z3("vaddps", 11),
        KF_ZMM_CLOBBERS)
// The dots' latency (one accumulator) and the 8-column tile's dots: 8
// accumulators, each the previous iteration's, from registers or, as the
// kernels take the activations, from an embedded broadcast of 4 bytes in L1;
// and the same with 12 accumulators.
#define KF_ZDPCHAIN(n) "vpdpbusd %%zmm30, %%zmm31, %%zmm0\n\t"
#define KF_ZDPBCST(n)                                                          \
  "vpdpbusd " #n "*4(%[table])%{1to16%}, %%zmm31, %%zmm" #n "\n\t"
KF_LOOP(zDpbusdChain, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZDPCHAIN),
        KF_ZMM_CLOBBERS)
KF_LOOP(zDpbusd8, KF_AVX512, KF_ZMM_SETUP, KF_X8(KF_ZDPBUSD), KF_ZMM_CLOBBERS)
KF_LOOP(zDpbusd8Bcst, KF_AVX512, KF_ZMM_SETUP, KF_X8(KF_ZDPBCST),
        KF_ZMM_CLOBBERS, "memory")
KF_LOOP(zDpbusd12Bcst, KF_AVX512, KF_ZMM_SETUP, KF_X12(KF_ZDPBCST),
        KF_ZMM_CLOBBERS, "memory")
// A K-quant sub-block's column: 8 dots and two vpmulld (its scale and min).
KF_LOOP(zKquantSub, KF_AVX512, KF_ZMM_SETUP,
        KF_X8(KF_ZDPBUSD) KF_ZMULLD(8) KF_ZMULLD(9), KF_ZMM_CLOBBERS)
// The same with one vpdpwssd per product instead.
KF_LOOP(zKquantSubWssd, KF_AVX512, KF_ZMM_SETUP,
        KF_X8(KF_ZDPBUSD) KF_ZDPWSSD(8) KF_ZDPWSSD(9), KF_ZMM_CLOBBERS)

// A gather behind the instruction that sets its mask (the gather clears
// it): 6 per iteration.
#define KF_ZGATHER(n)                                                          \
  "kxnorb %%k" #n ", %%k" #n ", %%k" #n "\n\t"                                 \
  "vpgatherdq (%[table], %%ymm29, 8), %%zmm" #n "%{%%k" #n "%}\n\t"
KF_LOOP(zGather, KF_AVX512, "vmovdqu32 %[lanes], %%ymm29\n\t",
        KF_ZGATHER(1) KF_ZGATHER(2) KF_ZGATHER(3) KF_ZGATHER(4) KF_ZGATHER(5)
            KF_ZGATHER(6),
        "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm29", "k1", "k2",
        "k3", "k4", "k5", "k6", "memory")

#define KF_YGATHER(n)                                                          \
  "vpcmpeqd %%ymm1" #n ", %%ymm1" #n ", %%ymm1" #n "\n\t"                      \
  "vpgatherdq %%ymm1" #n ", (%[table], %%xmm9, 8), %%ymm" #n "\n\t"
KF_LOOP(yGather, "avx2", "vmovdqu %[lanes], %%xmm9\n\t",
        KF_YGATHER(0) KF_YGATHER(1) KF_YGATHER(2) KF_YGATHER(3) KF_YGATHER(4)
            KF_YGATHER(5),
        "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory")

#define KF_YMADDUBSW(n) KF_Y3("vpmaddubsw", n)
#define KF_YMADDWD(n) KF_Y3("vpmaddwd", n)
#define KF_YMULLD(n) KF_Y3("vpmulld", n)
#define KF_YADDD(n) KF_Y3("vpaddd", n)
#define KF_YSHUFB(n) KF_Y3("vpshufb", n)
#define KF_YCVT(n) KF_Y2("vcvtdq2ps", n)
#define KF_YMULPS(n) KF_Y3("vmulps", n)
#define KF_YFMA(n) KF_Y3("vfmadd231ps", n)
#define KF_YCHAIN(n) "vpaddd %%ymm0, %%ymm0, %%ymm0\n\t"
// AVX2's dot of 32 bytes: vpmaddubsw to int16 pairs, vpmaddwd widening.
#define KF_YDOT(n) KF_YMADDUBSW(n) KF_Y3("vpmaddwd", n)

KF_LOOP(yChain, "avx2", KF_YMM_SETUP, KF_X12(KF_YCHAIN), KF_YMM_CLOBBERS)
KF_LOOP(yDot, "avx2", KF_YMM_SETUP, KF_X12(KF_YDOT), KF_YMM_CLOBBERS)
KF_LOOP(yMaddubsw, "avx2", KF_YMM_SETUP, KF_X12(KF_YMADDUBSW), KF_YMM_CLOBBERS)
KF_LOOP(yMaddwd, "avx2", KF_YMM_SETUP, KF_X12(KF_YMADDWD), KF_YMM_CLOBBERS)
KF_LOOP(yMulld, "avx2", KF_YMM_SETUP, KF_X12(KF_YMULLD), KF_YMM_CLOBBERS)
KF_LOOP(yAddd, "avx2", KF_YMM_SETUP, KF_X12(KF_YADDD), KF_YMM_CLOBBERS)
KF_LOOP(yShufb, "avx2", KF_YMM_SETUP, KF_X12(KF_YSHUFB), KF_YMM_CLOBBERS)
KF_LOOP(yCvt, "avx2", KF_YMM_SETUP, KF_X12(KF_YCVT), KF_YMM_CLOBBERS)
KF_LOOP(yMulps, "avx2", KF_YMM_SETUP, KF_X12(KF_YMULPS), KF_YMM_CLOBBERS)
KF_LOOP(yFma, "avx2,fma", KF_YMM_SETUP, KF_X12(KF_YFMA), KF_YMM_CLOBBERS)
// A Q8_0 block's column on AVX2: 4 dots of 32 bytes (8 instructions),
// converted, scaled twice, added.
KF_LOOP(yQ8Column, "avx2", KF_YMM_SETUP,
        KF_YDOT(0) KF_YDOT(1) KF_YDOT(2) KF_YDOT(3) KF_YCVT(8) KF_YMULPS(9)
            KF_YMULPS(10) KF_Y3("vaddps", 11),
        KF_YMM_CLOBBERS)

__attribute__((noinline)) void scalarChain(int64_t n) {
  uint64_t x = 3;
  for (int64_t i = 0; i < n; ++i)
    asm volatile("imul %[x], %[x]\n\timul %[x], %[x]\n\timul %[x], %[x]\n\t"
                 "imul %[x], %[x]"
                 : [x] "+r"(x));
}

const Case kAvx512Cases[] = {
    {"vpdpbusd zmm", 12, zDpbusd},
    {"vpdpwssd zmm", 12, zDpwssd},
    {"vpmulld zmm", 12, zMulld},
    {"vpaddd zmm", 12, zAddd},
    {"vpshufb zmm", 12, zShufb},
    {"vpternlogd zmm", 12, zTern},
    {"vpsrlw zmm", 12, zSrlw},
    {"vcvtdq2ps zmm", 12, zCvt},
    {"vmulps zmm", 12, zMulps},
    {"vfmadd231ps zmm", 12, zFma},
    {"vpdpbusd zmm, one accumulator (1 / latency)", 12, zDpbusdChain},
    {"vpdpbusd zmm, 8 accumulators", 8, zDpbusd8},
    {"vpdpbusd zmm, 8 accumulators, m32 broadcast", 8, zDpbusd8Bcst},
    {"vpdpbusd zmm, 12 accumulators, m32 broadcast", 12, zDpbusd12Bcst},
    {"8 vpdpbusd + vcvtdq2ps, 2 vmulps, vaddps", 12, zQ8Column},
    {"8 vpdpbusd + 2 vpmulld", 10, zKquantSub},
    {"8 vpdpbusd + 2 vpdpwssd", 10, zKquantSubWssd},
    {"vpgatherdq zmm (8 entries from L1) + kxnorb", 6, zGather},
};

const Case kAvx2Cases[] = {
    {"vpmaddubsw ymm", 12, yMaddubsw},
    {"vpmaddwd ymm", 12, yMaddwd},
    {"vpmulld ymm", 12, yMulld},
    {"vpaddd ymm", 12, yAddd},
    {"vpshufb ymm", 12, yShufb},
    {"vcvtdq2ps ymm", 12, yCvt},
    {"vmulps ymm", 12, yMulps},
    {"vfmadd231ps ymm", 12, yFma},
    {"4 (vpmaddubsw, vpmaddwd) + vcvtdq2ps, 2 vmulps, vaddps", 12, yQ8Column},
    {"vpgatherdq ymm (4 entries from L1) + vpcmpeqd", 6, yGather},
};

#endif // __x86_64__

// Which ISA's cases `isa` names ("avx512vnni", "avx2"; empty: the best
// this CPU runs), with the dependent chain that times a cycle.
struct IsaCases {
  std::string isa;
  LoopFn chain;
  std::span<const Case> cases;
};

absl::StatusOr<IsaCases> casesFor(std::string_view isa) {
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512vnni") &&
                      __builtin_cpu_supports("avx512bw");
  const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa.empty())
    isa = avx512 ? "avx512vnni" : "avx2";
  if (isa == "avx512vnni" && avx512)
    return IsaCases{std::string(isa), zChain, kAvx512Cases};
  if (isa == "avx2" && avx2)
    return IsaCases{std::string(isa), yChain, kAvx2Cases};
  if (isa == "avx512vnni" || isa == "avx2")
    return absl::FailedPreconditionError(
        absl::StrFormat("--isa %s: this CPU does not run it", isa));
  return absl::InvalidArgumentError(
      absl::StrFormat("--isa is '%s', expected avx512vnni or avx2", isa));
#else
  (void)isa;
  return absl::FailedPreconditionError(
      "ports measures x86-64 vector instructions; this is not an x86-64 CPU");
#endif
}

double secondsOf(LoopFn loop, int64_t iterations) {
  auto start = std::chrono::steady_clock::now();
  loop(iterations);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// Iterations that take about `seconds`, from a short first run.
int64_t iterationsFor(LoopFn loop, double seconds) {
  constexpr int64_t kProbe = 20000;
  secondsOf(loop, kProbe);
  double probe = secondsOf(loop, kProbe);
  return std::max<int64_t>(kProbe, int64_t(seconds / probe * kProbe));
}

// Seconds of one cycle, timed by `chain` (12 dependent one-cycle
// instructions an iteration).
double cycleSeconds(LoopFn chain, int64_t iterations) {
  return secondsOf(chain, iterations) / (iterations * 12.0);
}

// Instructions of `c` one core issues per cycle: the median of `rounds`,
// each against the chain timed before and after it, the faster of the
// two (a chain run that another process interrupts would inflate the rate).
double ratePerCycle(const Case &c, LoopFn chain, int64_t chainIterations,
                    int rounds, double secondsPerRun) {
  const int64_t iters = iterationsFor(c.loop, secondsPerRun);
  std::vector<double> rates;
  for (int r = 0; r < rounds; ++r) {
    double before = cycleSeconds(chain, chainIterations);
    double perIter = secondsOf(c.loop, iters) / iters;
    double perCycle = std::min(before, cycleSeconds(chain, chainIterations));
    rates.push_back(c.perGroup / (perIter / perCycle));
  }
  return median(rates);
}

} // namespace

absl::StatusOr<PortReport> measurePorts(std::string_view isa, int rounds,
                                        double secondsPerRun) {
  absl::StatusOr<IsaCases> cases = casesFor(isa);
  if (!cases.ok())
    return cases.status();
#if defined(__x86_64__)
  PortReport report;
  report.isa = cases->isa;
  // Seconds per cycle, each round's own: the chain is timed next to every
  // case so that a clock that moves (turbo, another process) moves both.
  const int64_t chainIters = iterationsFor(cases->chain, secondsPerRun);
  const int64_t scalarIters = iterationsFor(scalarChain, secondsPerRun);
  std::vector<double> scalar, vector;
  for (int r = 0; r < rounds; ++r) {
    scalar.push_back(secondsOf(scalarChain, scalarIters) /
                     (scalarIters * 12.0));
    vector.push_back(cycleSeconds(cases->chain, chainIters));
  }
  report.scalarGhz = 1e-9 / median(scalar);
  report.vectorGhz = 1e-9 / median(vector);
  for (const Case &c : cases->cases)
    report.rates.push_back(
        {c.name, c.perGroup,
         ratePerCycle(c, cases->chain, chainIters, rounds, secondsPerRun)});
  return report;
#else
  (void)rounds;
  (void)secondsPerRun;
  return cases.status();
#endif
}

absl::StatusOr<Int8Peak> measureInt8Peak(int rounds, double secondsPerRun) {
  absl::StatusOr<IsaCases> cases = casesFor("");
  if (!cases.ok())
    return cases.status();
#if defined(__x86_64__)
  const bool vnni = cases->isa == "avx512vnni";
  const Case dot = vnni ? Case{"vpdpbusd zmm", 12, zDpbusd}
                        : Case{"vpmaddubsw + vpmaddwd ymm", 12, yDot};
  Int8Peak peak;
  peak.instruction = dot.name;
  peak.macsPerInstruction = vnni ? 64 : 32;
  const int64_t chainIters = iterationsFor(cases->chain, secondsPerRun);
  std::vector<double> cycles;
  for (int r = 0; r < rounds; ++r)
    cycles.push_back(cycleSeconds(cases->chain, chainIters));
  peak.ghz = 1e-9 / median(cycles);
  peak.perCycle =
      ratePerCycle(dot, cases->chain, chainIters, rounds, secondsPerRun);
  peak.macsPerSecond = peak.perCycle * peak.macsPerInstruction * peak.ghz * 1e9;
  return peak;
#else
  (void)rounds;
  (void)secondsPerRun;
  return cases.status();
#endif
}

void printPorts(const PortReport &report, std::ostream &out) {
  out << absl::StrFormat(
      "# %s instructions one core issues per cycle (independent within a loop "
      "iteration; medians)\n# clock %.2f GHz under vector work (dependent "
      "vpaddd), %.2f GHz scalar (dependent imul)\n",
      report.isa, report.vectorGhz, report.scalarGhz);
  out << absl::StrFormat("%-56s %9s %9s\n", "instructions per iteration",
                         "per cycle", "cycles");
  for (const PortRate &r : report.rates)
    out << absl::StrFormat("%-56s %9.2f %9.2f\n", r.name, r.perCycle,
                           r.perGroup / r.perCycle);
}

} // namespace kf::bench
