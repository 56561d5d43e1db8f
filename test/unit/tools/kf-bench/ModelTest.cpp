// kf-bench model: its options and their one-line errors. The run itself
// needs a compiled artifact: test/lit/tools/kf-bench-model.test runs one.
#include "RunTool.h"
#include "kf/runtime/host_cpu.h"
#include "gmock/gmock.h"

namespace kf::bench {
namespace {

using ::testing::HasSubstr;

std::optional<std::string> parse(std::vector<std::string> args,
                                 ModelOptions &o) {
  return parseModel(args, o);
}

TEST(KfBenchModel, Options) {
  ModelOptions o;
  ASSERT_EQ(parse({"--plan", "m.kfp", "-m", "m.gguf"}, o), std::nullopt);
  EXPECT_EQ(o.plan, "m.kfp");
  EXPECT_EQ(o.model, "m.gguf");
  EXPECT_EQ(o.threads.front(), 1);
  EXPECT_TRUE(o.prompts.empty());
  EXPECT_EQ(o.decode, 32);
  EXPECT_EQ(o.rounds, 3);
  EXPECT_FALSE(o.json);
  EXPECT_FALSE(o.pin);
  EXPECT_FALSE(o.steps);
  // One thread a physical core beside one.
  EXPECT_EQ(o.threads.back(), static_cast<int>(hostCores().size()));
  ASSERT_EQ(parse({"--plan=m.kfp", "-m", "m.gguf", "--threads", "2,1",
                   "--prompt", "8,1", "--decode=1", "--rounds", "1", "--json",
                   "--pin", "--steps"},
                  o),
            std::nullopt);
  EXPECT_TRUE(o.pin);
  EXPECT_TRUE(o.steps);
  EXPECT_EQ(o.threads, (std::vector<int>{2, 1}));
  EXPECT_EQ(o.prompts, (std::vector<int>{8, 1}));
  EXPECT_EQ(o.decode, 1);
  EXPECT_EQ(o.rounds, 1);
  EXPECT_TRUE(o.json);
}

TEST(KfBenchModel, BadOptionsOneLineError) {
  const std::pair<std::vector<std::string>, std::string> bad[] = {
      {{"-m", "m.gguf"}, "kf-bench model needs --plan MODEL.kfp and -m FILE"},
      {{"--plan", "m.kfp", "-m", "m.gguf", "--threads", "0"},
       "--threads 0 is out of range: expected 1 to 1024"},
      {{"--plan", "m.kfp", "-m", "m.gguf", "--rounds", "0"},
       "--rounds 0 is out of range: expected 1 to 1000"},
      {{"--plan", "m.kfp", "-m", "m.gguf", "--decode", "0"},
       "--decode 0 is out of range: expected 1 to 100000"},
      {{"--plan", "m.kfp", "-m", "m.gguf", "--prompt", "x"},
       "--prompt has 'x', expected whole numbers separated by commas"},
      {{"--plan", "m.kfp", "-m", "m.gguf", "--prompt", "0"},
       "--prompt 0 is out of range: expected 1 or more"},
      {{"--plan", "m.kfp", "--cold"}, "unknown option '--cold'"},
      {{"--plan"}, "option '--plan' needs a value"}};
  for (const auto &[args, message] : bad) {
    ModelOptions o;
    std::optional<std::string> problem = parse(args, o);
    ASSERT_TRUE(problem.has_value()) << message;
    EXPECT_THAT(*problem, HasSubstr(message));
    EXPECT_EQ(problem->find('\n'), std::string::npos);
  }
}

// A missing artifact is one line naming it.
TEST(KfBenchModel, NamesAMissingArtifact) {
  testing::Result r = testing::runWith(
      {"model", "--plan", "/nonexistent.kfp", "-m", "/nonexistent.gguf"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("kf-bench: /nonexistent.kfp: cannot load it "
                               "as a compiled plan"));
}

} // namespace
} // namespace kf::bench
