// kf-codebook: trains the VQ3_64 codebooks by a deterministic antipodal
// Lloyd-Max procedure and writes them as C++ data (docs/formats/vq3_64.md).
//
//   kf-codebook --write FILE   write runtime/tables/quant/vq3_64_codebook.inc
//   kf-codebook --check FILE   retrain and fail unless FILE is what it writes
//
// Determinism: the samples come from std::mt19937_64 (whose output the C++
// standard fixes) through a Box-Muller transform written here (so no library
// distribution's implementation is involved), and every sum runs in double in
// a fixed order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kSeed = 0x4b46'7671'3336'3400; // "KFvq364"
constexpr int kSamples = 1 << 17;
constexpr int kIterations = 50;

// Standard normal samples, Box-Muller on 53-bit uniforms in (0, 1].
class Gaussian {
public:
  explicit Gaussian(uint64_t seed) : rng_(seed) {}
  double next() {
    if (hasSpare_) {
      hasSpare_ = false;
      return spare_;
    }
    double u1 = uniform(), u2 = uniform();
    double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
    hasSpare_ = true;
    return r * std::cos(2.0 * std::numbers::pi * u2);
  }

private:
  double uniform() {
    return (static_cast<double>(rng_() >> 11) + 1.0) * 0x1p-53;
  }
  std::mt19937_64 rng_;
  double spare_ = 0;
  bool hasSpare_ = false;
};

// Antipodal Lloyd-Max: `k` centroids c_j stand for the 2k codewords +-c_j. A
// sample goes to the codeword nearest to it, i.e. the j maximising
// 2|<x, c_j>| - |c_j|^2, with the sign of <x, c_j>; a centroid moves to the
// mean of its samples, sign-folded. An empty centroid is re-seeded with the
// sample farthest from its codeword (the first such sample).
std::vector<std::vector<double>> train(int dim, int k, uint64_t seed) {
  Gaussian gauss(seed);
  std::vector<double> x(static_cast<size_t>(kSamples) * dim);
  for (double &v : x)
    v = gauss.next();
  std::vector<std::vector<double>> c(k, std::vector<double>(dim));
  for (int j = 0; j < k; ++j)
    for (int d = 0; d < dim; ++d)
      c[j][d] = x[static_cast<size_t>(j) * dim + d];

  std::vector<int> owner(kSamples);
  std::vector<double> sign(kSamples), err(kSamples);
  for (int iter = 0; iter < kIterations; ++iter) {
    for (int s = 0; s < kSamples; ++s) {
      const double *p = &x[static_cast<size_t>(s) * dim];
      double best = -INFINITY;
      for (int j = 0; j < k; ++j) {
        double dot = 0, norm = 0;
        for (int d = 0; d < dim; ++d) {
          dot += p[d] * c[j][d];
          norm += c[j][d] * c[j][d];
        }
        double score = 2 * std::fabs(dot) - norm;
        if (score > best) {
          best = score;
          owner[s] = j;
          sign[s] = dot < 0 ? -1 : 1;
        }
      }
      double normX = 0;
      for (int d = 0; d < dim; ++d)
        normX += p[d] * p[d];
      err[s] = normX - best;
    }
    std::vector<std::vector<double>> sum(k, std::vector<double>(dim, 0));
    std::vector<int> count(k, 0);
    for (int s = 0; s < kSamples; ++s) {
      ++count[owner[s]];
      for (int d = 0; d < dim; ++d)
        sum[owner[s]][d] += sign[s] * x[static_cast<size_t>(s) * dim + d];
    }
    for (int j = 0; j < k; ++j) {
      if (count[j] > 0) {
        for (int d = 0; d < dim; ++d)
          c[j][d] = sum[j][d] / count[j];
        continue;
      }
      int worst = 0;
      for (int s = 1; s < kSamples; ++s)
        if (err[s] > err[worst])
          worst = s;
      for (int d = 0; d < dim; ++d)
        c[j][d] = x[static_cast<size_t>(worst) * dim + d];
      err[worst] = 0;
    }
  }
  return c;
}

// Orients every centroid so its first non-zero component is positive (the
// stored half of an antipodal book) and orders them by norm, then
// lexicographically, so that index order is readable and reproducible.
std::vector<std::vector<int>> toInt8(std::vector<std::vector<double>> c,
                                     double scale) {
  std::vector<std::vector<int>> q;
  for (auto &v : c) {
    std::vector<int> iv;
    for (double x : v)
      iv.push_back(static_cast<int>(std::lround(x * scale)));
    for (int x : iv)
      if (x != 0) {
        if (x < 0)
          for (int &y : iv)
            y = -y;
        break;
      }
    q.push_back(iv);
  }
  std::sort(q.begin(), q.end(), [](const auto &a, const auto &b) {
    long na = 0, nb = 0;
    for (int x : a)
      na += x * x;
    for (int x : b)
      nb += x * x;
    return na != nb ? na < nb : a < b;
  });
  return q;
}

double maxAbs(const std::vector<std::vector<double>> &c) {
  double m = 0;
  for (const auto &v : c)
    for (double x : v)
      m = std::max(m, std::fabs(x));
  return m;
}

std::string generate() {
  auto book3 = train(3, 64, kSeed);
  auto book2 = train(2, 32, kSeed + 1);
  // One int8 scale for both books: the tail codewords share the block's scales.
  double scale = 127.0 / std::max(maxAbs(book3), maxAbs(book2));
  std::ostringstream out;
  out << "// Generated by tools/kf-codebook (kf-codebook --write). Do not "
         "edit: the test\n"
         "// vq3-codebook-reproducible retrains and compares. "
         "docs/formats/vq3_64.md.\n"
         "//\n"
         "// Antipodal Lloyd-Max on standard normal vectors: "
      << kSamples << " samples, " << kIterations
      << " iterations,\n"
         "// seed 0x"
      << std::hex << kSeed << std::dec
      << " (book3) and seed + 1 (book2). Stored halves: book3[i] for i < 64\n"
         "// (codeword i | 64 is -book3[i]), book2[i] for i < 32 (i | 32 is "
         "-book2[i]).\n"
         "// Components in int8 units; kVq3UnitsPerSigma int8 units = one "
         "standard\n"
         "// deviation of the training data.\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", scale);
  out << "inline constexpr float kVq3UnitsPerSigma = " << buf << "f;\n";
  out << "inline constexpr int8_t kVq3Book3[64][3] = {\n";
  for (const auto &v : toInt8(book3, scale))
    out << "    {" << v[0] << ", " << v[1] << ", " << v[2] << "},\n";
  out << "};\n";
  out << "inline constexpr int8_t kVq3Book2[32][2] = {\n";
  for (const auto &v : toInt8(book2, scale))
    out << "    {" << v[0] << ", " << v[1] << "},\n";
  out << "};\n";
  return out.str();
}

int usage() {
  std::fprintf(stderr, "usage: kf-codebook --write FILE | --check FILE\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3)
    return usage();
  std::string mode = argv[1], path = argv[2];
  if (mode != "--write" && mode != "--check")
    return usage();
  std::string text = generate();
  if (mode == "--write") {
    std::string tmp = path + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary);
      f << text;
      if (!f.flush()) {
        std::fprintf(stderr, "kf-codebook: cannot write %s\n", tmp.c_str());
        return 1;
      }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::fprintf(stderr, "kf-codebook: cannot rename %s to %s\n", tmp.c_str(),
                   path.c_str());
      std::remove(tmp.c_str());
      return 1;
    }
    return 0;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "kf-codebook: cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream existing;
  existing << f.rdbuf();
  if (existing.str() != text) {
    std::fprintf(
        stderr,
        "kf-codebook: %s differs from the codebooks this training produces "
        "(regenerate with kf-codebook --write)\n",
        path.c_str());
    return 1;
  }
  std::printf("kf-codebook: %s is reproducible\n", path.c_str());
  return 0;
}
