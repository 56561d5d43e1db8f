#include "report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kf::bench {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// "170 µs", "12.3 ms", "5.21 s": three significant digits.
std::string duration(double s) {
  if (s < 1e-3)
    return absl::StrFormat("%.3g µs", s * 1e6);
  if (s < 1)
    return absl::StrFormat("%.3g ms", s * 1e3);
  return absl::StrFormat("%.3g s", s);
}

std::string megabytes(uint64_t bytes) {
  return absl::StrFormat("%.2f MB", bytes / 1e6);
}

// A ratio column: "-" where there is nothing to compare with.
std::string ratio(double r) {
  return r > 0 ? absl::StrFormat("%.3f", r) : std::string("-");
}

// A JSON number, or null for what was not measured (JSON has no NaN).
std::string number(double v) {
  return std::isfinite(v) && v > 0 ? absl::StrFormat("%.6g", v)
                                   : std::string("null");
}

std::string jsonString(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      q += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      absl::StrAppendFormat(&q, "\\u%04x", c);
    else
      q += c;
  }
  return q + "\"";
}

} // namespace

void writeHeader(const RunInfo &info, std::ostream &out) {
  const MatmulOptions &o = *info.options;
  out << absl::StrFormat("kf-bench matmul: K = %d, N = %d, M = %s; ", o.k, o.n,
                         absl::StrJoin(o.m, ","));
  if (o.cold)
    out << absl::StrFormat(
        "cold: calls cycle through weight copies filling %d MiB (%s)\n",
        info.set.bytes / kMiB, info.set.why);
  else
    out << "hot: one weight matrix, in cache after the first call; % of "
           "the DRAM roofline may exceed 100\n";
  out << absl::StrFormat(
      "%d round%s over all cases, the DRAM probe measured before the first "
      "and after each; a time is the median of a case's rounds (each the "
      "median of its timed calls), spread (slowest - fastest round) / "
      "median; GFLOP/s counts 2·M·N·K; wt GB/s the bytes a call reads (its "
      "packed layout), %%roof the format's roofline floor (its file bytes, "
      "over the probes' median) over the time; load: CPUs other processes "
      "kept busy meanwhile, the most in any round (figures taken under load "
      "are not the kernel's)\n",
      o.rounds, o.rounds > 1 ? "s" : "");
  for (const BandwidthSeries &series : info.bandwidth) {
    const Bandwidth &first = series.probes.front();
    double load = 0;
    for (const Bandwidth &b : series.probes)
      load = std::max(load, b.otherCpus);
    const double median = series.medianGbps();
    out << absl::StrFormat(
        "DRAM read, %d thread%s: %.1f GB/s, the median of %d probes "
        "(%.1f-%.1f, spread %.1f %%; load %.2f); a probe is the fastest of %d "
        "read patterns, each the median of %d reads of %d MiB with %s loads; "
        "the first probe's fastest: %s\n",
        series.threads, series.threads > 1 ? "s" : "", median,
        series.probes.size(), series.minGbps(), series.maxGbps(),
        median > 0 ? 100 * (series.maxGbps() - series.minGbps()) / median : 0,
        load, first.figures.size(), first.runs, first.bytes / kMiB, first.isa,
        first.best);
    std::vector<std::string> figures;
    for (const PatternFigure &f : first.figures)
      figures.push_back(absl::StrFormat("%s %.1f", f.pattern.name(), f.gbps));
    out << "  the first probe's patterns, GB/s: "
        << absl::StrJoin(figures, ", ") << "\n";
  }
  for (const auto &[format, bytes] : info.weightBytes) {
    std::vector<std::string> floors;
    for (const BandwidthSeries &bw : info.bandwidth)
      floors.push_back(absl::StrFormat(
          "%s on %d thread%s", duration(bytes / (bw.medianGbps() * 1e9)),
          bw.threads, bw.threads > 1 ? "s" : ""));
    std::string copies =
        o.cold ? absl::StrCat(" (", copiesIn(info.set.bytes, bytes),
                              " copies cycled)")
               : "";
    out << absl::StrFormat("roofline floor, %s: %s of weights%s, %s\n", format,
                           megabytes(bytes), copies,
                           absl::StrJoin(floors, ", "));
  }
  out << absl::StrFormat(
      "oneDNN %s (%s%s): u8s8s32 and f32 matmuls on the same shapes, "
      "weights reordered once into the layout oneDNN prefers%s\n",
      info.onednnVersion, info.onednnIsa,
      o.onednnIsa ? ", limited by --onednn-isa" : "",
      o.cold ? " and cycled the same way" : "");
  if (!info.onednnAlsoIsa.empty())
    out << absl::StrFormat(
        "oneDNN limited to %s (%s): the same matmuls, timed in a child "
        "process before the rounds (oneDNN takes one ISA limit per process), "
        "as kernel onednn@%s; its ratios are to the best oneDNN's\n",
        info.onednnAlsoIsa, info.onednnAlsoWhy, info.onednnAlsoIsa);
}

int kernelColumnWidth(const std::vector<CaseResult> &rows) {
  size_t width = std::string_view("kernel").size();
  for (const CaseResult &r : rows)
    width = std::max(width, r.kernel.size());
  return static_cast<int>(width);
}

void writeTableHead(int kernelWidth, std::ostream &out) {
  out << absl::StrFormat(
      "\n%-9s %-*s %5s %3s %9s %6s %9s %8s %6s %7s %7s %6s %5s  %s\n", "format",
      kernelWidth, "kernel", "M", "thr", "time", "spread", "GFLOP/s", "wt GB/s",
      "%roof", "vs int8", "vs f32", "reps", "load", "notes");
}

void writeRow(const CaseResult &r, int kernelWidth, std::ostream &out) {
  out << absl::StrFormat(
      "%-9s %-*s %5d %3d %9s %5.1f%% %9.1f %8.1f %6.1f %7s %7s %6d %5.2f",
      r.format, kernelWidth, r.kernel, r.m, r.threads, duration(r.seconds()),
      100 * r.spread(), r.gflops(), r.weightGbps(), r.rooflinePercent(),
      ratio(r.vsOnednnInt8()), ratio(r.vsOnednnF32()), r.reps(), r.otherCpus);
  if (r.beatsProbe())
    out << "  PROBE FAILURE: faster than every DRAM probe";
  if (!r.implementation.empty())
    out << "  " << r.implementation << ", " << megabytes(r.weightBytes)
        << " of weights";
  out << "\n";
}

void writeFooter(const std::vector<CaseResult> &rows, std::ostream &out) {
  std::vector<std::string> failures;
  for (const CaseResult &r : rows)
    if (r.beatsProbe())
      failures.push_back(absl::StrFormat(
          "%s %s M = %d on %d thread%s (%.1f %%)", r.format, r.kernel, r.m,
          r.threads, r.threads > 1 ? "s" : "", r.rooflinePercent()));
  if (failures.empty()) {
    out << "\nno case read cold weights faster than the fastest DRAM probe\n";
    return;
  }
  out << absl::StrFormat(
      "\nPROBE FAILURE: %d case%s read cold weights faster than the fastest "
      "DRAM probe, so the probe did not find what this machine can read and "
      "their %%roof is no result: %s\n",
      failures.size(), failures.size() > 1 ? "s" : "",
      absl::StrJoin(failures, "; "));
}

void writeJson(const CaseResult &r, const RunInfo &info, std::ostream &out) {
  std::vector<std::string> fields = {
      absl::StrCat("\"kernel\":", jsonString(r.kernel)),
      absl::StrCat("\"format\":", jsonString(r.format)),
      absl::StrCat("\"m\":", r.m),
      absl::StrCat("\"k\":", r.k),
      absl::StrCat("\"n\":", r.n),
      absl::StrCat("\"threads\":", r.threads),
      absl::StrCat("\"mode\":", jsonString(r.cold ? "cold" : "hot")),
      absl::StrCat("\"reps\":", r.reps()),
      absl::StrCat("\"rounds\":", r.rounds.size()),
      absl::StrCat("\"time_s\":", number(r.seconds())),
      absl::StrFormat("\"time_spread\":%.6g", r.spread()),
      absl::StrCat("\"time_min_s\":", number(r.minCallSeconds())),
      absl::StrCat("\"gflops\":", number(r.gflops())),
      absl::StrCat("\"weight_bytes\":", r.weightBytes),
      absl::StrCat("\"floor_bytes\":", r.floorBytes),
      absl::StrCat("\"weight_copies\":", r.copies),
      absl::StrCat("\"weight_gbps\":", number(r.weightGbps())),
      absl::StrCat("\"dram_gbps\":", number(r.dramGbps)),
      absl::StrCat("\"dram_max_gbps\":", number(r.dramMaxGbps)),
      absl::StrCat("\"probe_failure\":", r.beatsProbe() ? "true" : "false"),
      absl::StrFormat("\"other_cpus\":%.3f", r.otherCpus),
      absl::StrCat("\"roofline_floor_s\":", number(r.floorSeconds())),
      absl::StrCat("\"roofline_pct\":", number(r.rooflinePercent())),
      absl::StrCat(
          "\"onednn_int8_gops\":",
          number(r.onednnInt8Seconds > 0
                     ? 2.0 * r.m * r.n * r.k / r.onednnInt8Seconds / 1e9
                     : 0)),
      absl::StrCat("\"onednn_f32_gflops\":",
                   number(r.onednnF32Seconds > 0
                              ? 2.0 * r.m * r.n * r.k / r.onednnF32Seconds / 1e9
                              : 0)),
      absl::StrCat("\"vs_onednn_int8\":", number(r.vsOnednnInt8())),
      absl::StrCat("\"vs_onednn_f32\":", number(r.vsOnednnF32())),
      absl::StrCat("\"set_bytes\":", info.set.bytes),
      absl::StrCat("\"l3_bytes\":", info.l3Bytes),
      absl::StrCat("\"onednn_version\":", jsonString(info.onednnVersion)),
      absl::StrCat("\"onednn_isa\":", jsonString(r.kernel.starts_with("onednn@")
                                                     ? info.onednnAlsoIsa
                                                     : info.onednnIsa)),
  };
  if (!r.implementation.empty())
    fields.push_back(
        absl::StrCat("\"implementation\":", jsonString(r.implementation)));
  out << "{" << absl::StrJoin(fields, ",") << "}\n";
}

} // namespace kf::bench
