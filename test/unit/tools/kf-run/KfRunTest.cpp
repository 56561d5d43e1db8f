// kf-run on a small deepseek4 file written for the test: its output and
// dumps against the reference model run directly, and its errors.
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "ModelTestUtil.h"
#include "TempDir.h"
#include "kf/deepseek_v4/reference/model.h"
#include "kf/runtime/npy.h"
#include "run.h"
#include "gmock/gmock.h"

namespace kf::run_tool {
namespace {

using kf::testing::TempDir;
namespace dsv4 = kf::deepseek_v4;

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The bytes of a float32 .npy file of `shape` holding `values`.
std::vector<uint8_t> npy(std::vector<int64_t> shape,
                         std::span<const float> values) {
  std::vector<uint8_t> bytes = npyFloat32Header(shape);
  const uint8_t *data = reinterpret_cast<const uint8_t *>(values.data());
  bytes.insert(bytes.end(), data, data + values.size_bytes());
  return bytes;
}

struct Result {
  int code;
  std::string out, err;
};

Result runWith(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = run(args, out, err);
  return {code, out.str(), err.str()};
}

// microConfig's four layers (window-only, CSA, HCA, hash and learned
// routing) with N(0, 0.1) f32 weights, written to `path`.
class KfRun : public ::testing::Test {
protected:
  void SetUp() override {
    config_ = dsv4::testing::microConfig();
    std::vector<dsv4::testing::TestTensor> tensors =
        dsv4::testing::modelTensors(config_);
    std::mt19937 rng(4);
    std::normal_distribution<float> normal(0.0f, 0.1f);
    for (dsv4::testing::TestTensor &t : tensors)
      if (t.format == Format::F32)
        for (size_t i = 0; i < t.data.size(); i += 4) {
          float v = normal(rng);
          std::memcpy(&t.data[i], &v, 4);
        }
    dsv4::testing::InMemoryFile file;
    dsv4::testing::write(file, dsv4::testing::modelMetadata(config_), tensors);
    path_ = dir_.file("micro.gguf");
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char *>(file.bytes.data()),
               static_cast<std::streamsize>(file.bytes.size()));
    weights_.emplace(*dsv4::reference::Weights::fromGguf(config_, *file.file));
  }

  TempDir dir_;
  dsv4::Config config_;
  std::string path_;
  std::optional<dsv4::reference::Weights> weights_;
};

TEST_F(KfRun, DumpsTheReferenceLogitsAndStreams) {
  std::string logits = dir_.file("logits.npy");
  std::string hidden = dir_.file("hidden");
  Result r =
      runWith({"--engine", "reference", "-m", path_, "--tokens", "5,17,3,90,1",
               "--no-sim", "--dump-logits", logits, "--dump-hidden", hidden});
  ASSERT_EQ(r.code, 0) << r.err;

  dsv4::reference::Model model(*weights_, {.simulateQuantization = false,
                                           .keepLayerStreams = true,
                                           .keepPositionLogits = true});
  std::vector<int32_t> tokens = {5, 17, 3, 90, 1};
  dsv4::reference::ForwardResult expected = model.prefill(tokens);
  // Every position's logits: a comparison needs one run, not one per prefix.
  EXPECT_EQ(fileBytes(logits), npy({5, 96}, expected.positionLogits));
  for (size_t t = 0; t < tokens.size(); ++t) {
    dsv4::reference::Model prefix(*weights_, {.simulateQuantization = false});
    EXPECT_TRUE(std::equal(
        expected.positionLogits.begin() + t * 96,
        expected.positionLogits.begin() + (t + 1) * 96,
        prefix.prefill(std::span(tokens).first(t + 1)).logits.begin()))
        << "position " << t;
  }
  for (uint32_t l = 0; l < 4; ++l)
    EXPECT_EQ(fileBytes(hidden + "/layer_" + std::to_string(l) + ".npy"),
              npy({5, 4, 64}, expected.layerStreams[l]))
        << l;
  auto best = std::max_element(expected.logits.begin(), expected.logits.end());
  EXPECT_THAT(r.out,
              ::testing::StartsWith(
                  "prefill of 5 tokens: next token " +
                  std::to_string(best - expected.logits.begin()) + " (logit"));
}

// --decode N continues greedily: each token the argmax of the logits before
// it, exactly as Model::decode gives them; the dump holds the prompt's
// logits, then each decoded token's.
TEST_F(KfRun, DecodesGreedily) {
  std::string logits = dir_.file("logits.npy");
  Result r =
      runWith({"--engine", "reference", "-m", path_, "--tokens", "5,17,3",
               "--no-sim", "--decode", "3", "--dump-logits", logits});
  ASSERT_EQ(r.code, 0) << r.err;

  dsv4::reference::Model model(
      *weights_, {.simulateQuantization = false, .keepPositionLogits = true});
  std::vector<int32_t> prompt = {5, 17, 3};
  dsv4::reference::ForwardResult prefill = model.prefill(prompt);
  std::vector<float> last = prefill.logits;
  std::vector<float> all = prefill.positionLogits;
  auto argmax = [](const std::vector<float> &v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) -
                                v.begin());
  };
  std::string decoded = "decoded:";
  for (int step = 0; step < 3; ++step) {
    int32_t token = argmax(last);
    decoded.append(" ").append(std::to_string(token));
    last = model.decode(token).logits;
    all.insert(all.end(), last.begin(), last.end());
  }
  EXPECT_THAT(r.out, ::testing::HasSubstr(decoded + "\n"));
  EXPECT_EQ(fileBytes(logits), npy({6, 96}, all));
}

// --precision f32: the reference's exact-f32 mode, which needs no widths
// the FP8 simulation would (it simulates nothing).
TEST_F(KfRun, RunsTheF32Precision) {
  std::string logits = dir_.file("logits.npy");
  Result r = runWith({"--engine", "reference", "-m", path_, "--tokens",
                      "5,17,3", "--precision", "f32", "--dump-logits", logits});
  ASSERT_EQ(r.code, 0) << r.err;
  dsv4::reference::Model model(*weights_,
                               {.precision = dsv4::reference::Precision::F32,
                                .keepPositionLogits = true});
  std::vector<int32_t> prompt = {5, 17, 3};
  std::vector<float> f32 = model.prefill(prompt).positionLogits;
  EXPECT_EQ(fileBytes(logits), npy({3, 96}, f32));
  dsv4::reference::Model bf16(
      *weights_, {.simulateQuantization = false, .keepPositionLogits = true});
  EXPECT_NE(f32, bf16.prefill(prompt).positionLogits);
}

TEST_F(KfRun, RefusesWhatItCannotRun) {
  auto error = [&](std::vector<std::string> args) {
    Result r = runWith(args);
    EXPECT_NE(r.code, 0);
    return std::to_string(r.code) + " " + r.err;
  };
  EXPECT_EQ(error({"--engine", "jit", "-m", path_, "--tokens", "1"}),
            "2 kf-run: unknown engine 'jit'; expected reference or compiled "
            "(kf-run --help for usage)\n");
  // The compiled engine runs an artifact (test/lit/tools/kf-run-compiled.test
  // runs one).
  EXPECT_EQ(error({"--engine", "compiled", "-m", path_, "--tokens", "1"}),
            "2 kf-run: --engine compiled needs --plan MODEL.kfp (kf-compile "
            "-m FILE -o MODEL.kfp) (kf-run --help for usage)\n");
  EXPECT_EQ(error({"--engine", "compiled", "--plan", "/nonexistent.kfp", "-m",
                   path_, "--tokens", "1", "--threads", "0"}),
            "1 kf-run: --threads: '0' is not a thread count (1 to 1024)\n");
  EXPECT_THAT(error({"--engine", "compiled", "--plan", "/nonexistent.kfp", "-m",
                     path_, "--tokens", "1"}),
              ::testing::StartsWith("1 kf-run: /nonexistent.kfp: cannot load "
                                    "it as a compiled plan: "));
  EXPECT_EQ(error({"--engine", "reference", "--tokens", "1"}),
            "2 kf-run: option '-m' is required (kf-run --help for usage)\n");
  EXPECT_EQ(error({"--engine", "reference", "-m", path_, "--tokens", "1,96",
                   "--no-sim"}),
            "1 kf-run: --tokens: token 96 is outside the 96-token "
            "vocabulary\n");
  EXPECT_EQ(error({"--engine", "reference", "-m", path_, "--tokens", "1",
                   "--decode", "-2", "--no-sim"}),
            "1 kf-run: --decode: '-2' is not a token count (a non-negative "
            "integer)\n");
  EXPECT_EQ(error({"--engine", "reference", "-m", path_, "--tokens", "1",
                   "--precision", "fp16"}),
            "2 kf-run: unknown precision 'fp16'; expected model or f32 "
            "(kf-run --help for usage)\n");
  EXPECT_EQ(error({"--engine", "reference", "-m", path_, "--tokens", "1,x"}),
            "1 kf-run: --tokens: 'x' is not a token id (a non-negative "
            "integer)\n");
  // microConfig's 64-wide embedding cannot take the FP8 simulation.
  EXPECT_EQ(error({"--engine", "reference", "-m", path_, "--tokens", "1"}),
            "1 kf-run: " + path_ +
                ": a linear input of width 64 is not a multiple of 128, which "
                "the FP8 activation simulation needs; run with --no-sim\n");
}

} // namespace
} // namespace kf::run_tool
