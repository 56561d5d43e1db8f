// kf-quality: the quantization quality of every weight format on the same data,
// side by side, as the Markdown table of docs/formats/quality.md.
//
//   kf-quality [--elements N] [--seed S]
//
// Data sets (N elements each, rows of 4096):
//   gaussian   i.i.d. N(0, 1)
//   student-t  i.i.d. Student-t with 3 degrees of freedom (heavy tails)
//   llm-rows   rows shaped like transformer weight matrices: N(0, 1) times a
//              per-column (input channel) scale drawn log-normal (sigma 0.5),
//              with 1% of columns outliers at 8x, times a per-row scale drawn
//              log-normal (sigma 0.2)
// Figures: SQNR = 10 log10(sum x^2 / sum (x - q(x))^2) in dB, cosine
// similarity of x and q(x), and the reference quantizer's speed.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kf/runtime/format.h"
#include "kf/runtime/quant.h"

namespace {

constexpr int64_t kRow = 4096;

struct DataSet {
  const char *name;
  std::vector<float> values;
};

std::vector<DataSet> makeData(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::student_t_distribution<float> student(3.0f);
  std::vector<DataSet> sets = {
      {"gaussian", {}}, {"student-t", {}}, {"llm-rows", {}}};
  for (int64_t i = 0; i < n; ++i)
    sets[0].values.push_back(normal(rng));
  for (int64_t i = 0; i < n; ++i)
    sets[1].values.push_back(student(rng));
  std::lognormal_distribution<float> columnScale(0.0f, 0.5f),
      rowScale(0.0f, 0.2f);
  std::bernoulli_distribution outlier(0.01);
  std::vector<float> columns(kRow);
  for (float &c : columns)
    c = columnScale(rng) * (outlier(rng) ? 8.0f : 1.0f);
  for (int64_t r = 0; r < n / kRow; ++r) {
    float rs = rowScale(rng);
    for (int64_t c = 0; c < kRow; ++c)
      sets[2].values.push_back(normal(rng) * columns[c] * rs);
  }
  return sets;
}

struct Quality {
  double sqnrDb, cosine, nsPerWeight;
};

Quality measure(kf::Format f, const std::vector<float> &x) {
  std::vector<uint8_t> q(*kf::rowBytes(f, kRow) * (x.size() / kRow));
  std::vector<float> y(x.size());
  size_t rowBytes = q.size() / (x.size() / kRow);
  auto start = std::chrono::steady_clock::now();
  for (size_t r = 0; r < x.size() / kRow; ++r) {
    absl::Status s = kf::quantize(f, std::span(x).subspan(r * kRow, kRow),
                                  std::span(q).subspan(r * rowBytes, rowBytes));
    if (!s.ok()) {
      std::fprintf(stderr, "kf-quality: %s\n",
                   std::string(s.message()).c_str());
      std::exit(1);
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (absl::Status s = kf::dequantize(f, q, y); !s.ok()) {
    std::fprintf(stderr, "kf-quality: %s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
  double signal = 0, noise = 0, xy = 0, yy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    signal += double(x[i]) * x[i];
    noise += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    xy += double(x[i]) * y[i];
    yy += double(y[i]) * y[i];
  }
  return {10 * std::log10(signal / noise), xy / std::sqrt(signal * yy),
          seconds * 1e9 / static_cast<double>(x.size())};
}

} // namespace

int main(int argc, char **argv) {
  int64_t n = 1 << 20;
  uint32_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--elements" && i + 1 < argc)
      n = std::atoll(argv[++i]);
    else if (a == "--seed" && i + 1 < argc)
      seed = static_cast<uint32_t>(std::atol(argv[++i]));
    else {
      std::fprintf(stderr, "usage: kf-quality [--elements N] [--seed S]\n");
      return 2;
    }
  }
  if (n < kRow || n % kRow != 0) {
    std::fprintf(stderr,
                 "kf-quality: --elements must be a positive multiple of %lld\n",
                 static_cast<long long>(kRow));
    return 2;
  }
  std::vector<DataSet> data = makeData(n, seed);
  std::printf("| format | bpw |");
  for (const DataSet &d : data)
    std::printf(" %s SQNR dB | %s cosine |", d.name, d.name);
  std::printf(" quantize ns/weight |\n|---|---|");
  for (size_t i = 0; i < data.size(); ++i)
    std::printf("---|---|");
  std::printf("---|\n");
  for (const kf::FormatInfo &info : kf::allFormats()) {
    if (info.role != kf::FormatRole::Weight || !kf::hasQuantize(info.format) ||
        info.format == kf::Format::F32)
      continue;
    std::printf("| %.*s | %.4g |", static_cast<int>(info.name.size()),
                info.name.data(), info.bitsPerWeight());
    double ns = 0;
    for (const DataSet &d : data) {
      Quality q = measure(info.format, d.values);
      std::printf(" %.2f | %.6f |", q.sqnrDb, q.cosine);
      ns += q.nsPerWeight / data.size();
    }
    std::printf(" %.1f |\n", ns);
  }
  return 0;
}
