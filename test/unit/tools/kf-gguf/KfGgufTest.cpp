// kf-gguf: its commands on small files written for each test, its recipe
// rules, its .npy output and its command line, exit codes included.
#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "RunTool.h"
#include "TempDir.h"
#include "commands.h"
#include "kf/runtime/gguf_writer.h"
#include "kf/runtime/npy.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/recipe.h"
#include "progress.h"
#include "gmock/gmock.h"

namespace kf::gguf_tool {
namespace {

using kf::testing::TempDir;
using ::testing::HasSubstr;

std::vector<float> gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

std::vector<uint8_t> encoded(Format f, std::span<const float> x) {
  std::vector<uint8_t> bytes(*rowBytes(f, static_cast<int64_t>(x.size())));
  absl::Status s = kf::quantize(f, x, bytes);
  EXPECT_TRUE(s.ok()) << s;
  return bytes;
}

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A weight format Kernelforge has no decoder (or no quantizer) for yet, to
// test how the tool reports one; none once every format has one.
std::optional<Format> formatWithout(bool (*has)(Format)) {
  for (const FormatInfo &info : allFormats())
    if (info.role == FormatRole::Weight && !has(info.format))
      return info.format;
  return std::nullopt;
}

// Writes `writer` into `dir` and opens it.
gguf::File written(const gguf::Writer &writer, const TempDir &dir,
                   const std::string &name = "in.gguf") {
  std::string path = dir.file(name);
  absl::Status s = writer.write(path);
  EXPECT_TRUE(s.ok()) << s;
  absl::StatusOr<gguf::File> file = gguf::File::open(path);
  EXPECT_TRUE(file.ok()) << file.status();
  return *std::move(file);
}

TEST(Recipe, FirstMatchingRuleWins) {
  absl::StatusOr<Recipe> recipe =
      Recipe::parse("ffn_.*_exps=q4_0,blk\\.0\\..*=f16,attn_.*=q8_0,*=keep");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  auto target = [&](const std::string &name) -> std::string {
    const Recipe::Rule *rule = recipe->match(name);
    if (!rule)
      return "none";
    return rule->target ? std::string(formatInfo(*rule->target).name) : "keep";
  };
  EXPECT_EQ(target("ffn_up_exps"), "q4_0");
  EXPECT_EQ(target("blk.0.ffn_up_exps"), "f16");
  EXPECT_EQ(target("attn_q"), "q8_0");
  EXPECT_EQ(target("blk.1.attn_q"), "keep"); // regexes match whole names
  absl::StatusOr<Recipe> partial = Recipe::parse("attn_.*=q8_0");
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->match("output"), nullptr);
}

TEST(Recipe, Errors) {
  auto error = [](std::string_view text) {
    absl::StatusOr<Recipe> recipe = Recipe::parse(text);
    EXPECT_FALSE(recipe.ok()) << text;
    return std::string(recipe.status().message());
  };
  EXPECT_EQ(error("attn_.*=q8_0,ffn"),
            "recipe rule 2 'ffn': expected REGEX=FORMAT");
  EXPECT_EQ(error("=q8_0"), "recipe rule 1 '=q8_0': expected REGEX=FORMAT");
  EXPECT_EQ(error(""), "recipe rule 1 '': expected REGEX=FORMAT");
  EXPECT_THAT(error("attn_[=q8_0"),
              HasSubstr("recipe rule 1 'attn_[=q8_0': invalid regex: "));
  EXPECT_THAT(error("*=q9_9"),
              ::testing::StartsWith("recipe rule 1 '*=q9_9': unknown format "
                                    "'q9_9'; expected keep or one of f32, "
                                    "f16, q4_0"));
  EXPECT_THAT(error("*=q8_k"),
              ::testing::StartsWith("recipe rule 1 '*=q8_k': q8_k is not a "
                                    "weight format; expected keep or one "
                                    "of f32"));
  EXPECT_THAT(error("*=i32"),
              ::testing::StartsWith("recipe rule 1 '*=i32': i32 is not a "
                                    "weight format; expected keep or one "
                                    "of f32"));
  for (const FormatInfo &info : allFormats()) {
    if (info.role != FormatRole::Weight)
      continue;
    std::string rule = "*=" + std::string(info.name);
    if (hasQuantize(info.format))
      EXPECT_TRUE(Recipe::parse(rule).ok()) << rule;
    else
      EXPECT_THAT(error(rule),
                  ::testing::StartsWith("recipe rule 1 '" + rule +
                                        "': Kernelforge has no quantizer for " +
                                        std::string(info.name) + " yet"));
  }
}

TEST(Npy, HeaderIsNumpyVersionOneAlignedTo64) {
  int64_t shape[] = {3, 64};
  std::vector<uint8_t> header = npyFloat32Header(shape);
  ASSERT_EQ(header.size(), 128u);
  std::string text(header.begin(), header.end());
  EXPECT_EQ(text.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(header[8] | header[9] << 8, 118);
  EXPECT_EQ(text.substr(10), "{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (3, 64), }" +
                                 std::string(57, ' ') + "\n");
  int64_t one[] = {5};
  std::vector<uint8_t> vectorHeader = npyFloat32Header(one);
  EXPECT_THAT(std::string(vectorHeader.begin(), vectorHeader.end()),
              HasSubstr("'shape': (5,), }"));
}

TEST(Progress, Render) {
  EXPECT_EQ(Progress::render(5, 10, "blk.0.attn_q"),
            "[###############               ]  50% 5/10 rows blk.0.attn_q");
  EXPECT_EQ(Progress::render(0, 0, "x"),
            "[##############################] 100% 0/0 rows x");
}

TEST(Info, PrintsHeaderMetadataTensorsAndTotals) {
  TempDir dir;
  gguf::Writer w;
  w.addMetadata("general.architecture", "deepseek4");
  w.addMetadata("ids", std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  w.addMetadata("long", std::string(100, 'x'));
  w.addTensor("a", Format::Q8_0, {64, 2}, std::vector<uint8_t>(136));
  w.addTensor("b", Format::F32, {4}, std::vector<uint8_t>(16));
  w.addTensor("c", Format::Q8_0, {32}, std::vector<uint8_t>(34));
  gguf::File file = written(w, dir);
  std::ostringstream out;
  info(file, out);
  std::string expected =
      file.name() +
      ": GGUF v3, 640 bytes, alignment 32, 3 metadata keys, 3 tensors, data "
      "at byte 384\n"
      "\n"
      "metadata:\n"
      "  general.architecture  string          \"deepseek4\"\n"
      "  ids                   array of int32  [10] 1, 2, 3, 4, 5, 6, 7, 8, "
      "...\n"
      "  long                  string          \"" +
      std::string(64, 'x') +
      "\"... (100 bytes)\n"
      "\n"
      "tensors (shape in ggml order, row length first):\n"
      "  name  shape    format     bytes\n"
      "  a     [64, 2]  q8_0       136\n"
      "  b     [4]      f32        16\n"
      "  c     [32]     q8_0       34\n"
      "\n"
      "totals:\n"
      "  format     tensors      parameters           bytes       bpw\n"
      "  f32              1               4              16   32.0000\n"
      "  q8_0             2             160             170    8.5000\n"
      "  all              3             164             186    9.0732\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(Dequant, WritesTheTensorAsNpyInNumpyOrder) {
  TempDir dir;
  std::vector<float> x = gaussian(64 * 3, 1);
  std::vector<uint8_t> q = encoded(Format::Q8_0, x);
  gguf::Writer w;
  w.addTensor("w", Format::Q8_0, {64, 3}, q);
  gguf::File file = written(w, dir);
  std::string out = dir.file("w.npy");
  absl::Status s = dequant(file, "w", out);
  ASSERT_TRUE(s.ok()) << s;

  std::vector<float> expected(x.size());
  ASSERT_TRUE(kf::dequantize(Format::Q8_0, q, expected).ok());
  int64_t numpyShape[] = {3, 64};
  std::vector<uint8_t> npy = npyFloat32Header(numpyShape);
  const auto *values = reinterpret_cast<const uint8_t *>(expected.data());
  npy.insert(npy.end(), values, values + expected.size() * sizeof(float));
  EXPECT_EQ(fileBytes(out), npy);
}

TEST(Dequant, Errors) {
  TempDir dir;
  gguf::Writer w;
  std::optional<Format> undecodable = formatWithout(hasDequantize);
  if (undecodable)
    w.addTensor("u", *undecodable, {formatInfo(*undecodable).blockElems},
                std::vector<uint8_t>(formatInfo(*undecodable).blockBytes));
  gguf::File file = written(w, dir);
  std::string out = dir.file("u.npy");
  EXPECT_EQ(dequant(file, "nope", out).message(),
            file.name() + ": no tensor 'nope'");
  if (undecodable) {
    std::string name(formatInfo(*undecodable).name);
    EXPECT_EQ(dequant(file, "u", out).message(),
              file.name() + ": tensor 'u' is " + name +
                  ", which Kernelforge cannot decode yet");
  }
  EXPECT_THAT(dir.files(), ::testing::ElementsAre("in.gguf"));
}

TEST(Verify, ReportsNonFiniteValuesPerTensor) {
  TempDir dir;
  std::vector<float> fine = {1, 2, 3, 4};
  std::vector<float> broken = {1, NAN, 3, INFINITY, -INFINITY, 6};
  auto bytes = [](const std::vector<float> &v) {
    const auto *p = reinterpret_cast<const uint8_t *>(v.data());
    return std::vector<uint8_t>(p, p + v.size() * sizeof(float));
  };
  gguf::Writer w;
  w.addTensor("fine", Format::F32, {2, 2}, bytes(fine));
  w.addTensor("broken", Format::F32, {3, 2}, bytes(broken));
  std::optional<Format> undecodable = formatWithout(hasDequantize);
  if (undecodable)
    w.addTensor("u", *undecodable, {formatInfo(*undecodable).blockElems},
                std::vector<uint8_t>(formatInfo(*undecodable).blockBytes));
  gguf::File file = written(w, dir);
  std::ostringstream out;
  absl::StatusOr<int> bad = verify(file, out);
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ(*bad, 1);
  std::string expected = "fine (f32): ok\n"
                         "broken (f32): 3 non-finite values of 6, the first "
                         "at element 1\n";
  if (undecodable) {
    std::string name(formatInfo(*undecodable).name);
    expected += "u (" + name + "): not checked: no decoder for " + name + "\n";
  }
  expected += file.name() + ": " + (undecodable ? "3" : "2") +
              " tensors, 1 with non-finite values, " +
              (undecodable ? "1" : "0") + " not checked\n";
  EXPECT_EQ(out.str(), expected);
}

// The input of the quantize tests: f32 tensors, one 1-D and one whose rows
// are not whole q8_0 blocks, and a q8_0 tensor.
struct QuantizeInput {
  std::vector<float> attn = gaussian(64 * 4, 1);
  std::vector<float> exps = gaussian(64 * 2 * 3, 2);
  std::vector<float> norm = gaussian(64, 3);
  std::vector<float> odd = gaussian(48 * 2, 4);
  std::vector<uint8_t> output = encoded(Format::Q8_0, gaussian(32 * 2, 5));

  gguf::Writer writer() const {
    gguf::Writer w;
    w.addMetadata("general.architecture", "deepseek4");
    auto f32 = [](const std::vector<float> &v) {
      return std::span<const uint8_t>(
          reinterpret_cast<const uint8_t *>(v.data()), v.size() * 4);
    };
    w.addTensor("blk.0.attn_q.weight", Format::F32, {64, 4}, f32(attn));
    w.addTensor("blk.0.ffn_up_exps.weight", Format::F32, {64, 2, 3}, f32(exps));
    w.addTensor("blk.0.attn_norm.weight", Format::F32, {64}, f32(norm));
    w.addTensor("blk.0.attn_odd.weight", Format::F32, {48, 2}, f32(odd));
    w.addTensor("output.weight", Format::Q8_0, {32, 2}, output);
    return w;
  }
};

TEST(Quantize, ReencodesTheTensorsTheRecipeChooses) {
  TempDir dir;
  QuantizeInput input;
  gguf::File file = written(input.writer(), dir);
  absl::StatusOr<Recipe> recipe =
      Recipe::parse(".*ffn_.*_exps.*=q4_0,.*attn_.*=q8_0,output.*=f16");
  ASSERT_TRUE(recipe.ok()) << recipe.status();
  std::ostringstream log;
  std::string out = dir.file("out.gguf");
  absl::Status s = quantize(file, out, *recipe, {.threads = 3, .log = &log});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(log.str(),
            "warning: " + file.name() +
                ": tensor 'blk.0.attn_norm.weight' is 1-D; kept as f32\n"
                "warning: " +
                file.name() +
                ": tensor 'blk.0.attn_odd.weight' has rows of 48 elements, "
                "not a multiple of 32 (the block size of q8_0); kept as f32\n" +
                file.name() + " -> " + out +
                ": 3 tensors re-encoded, 2 kept; 3268 -> 1256 bytes of "
                "tensor data\n");

  absl::StatusOr<gguf::File> result = gguf::File::open(out);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result->get<std::string_view>("general.architecture"),
            "deepseek4");
  EXPECT_EQ(*result->get<uint32_t>("general.quantization_version"), 2u);
  auto tensor = [&](const char *name) { return *result->findTensor(name); };
  auto data = [&](const char *name) {
    std::span<const uint8_t> d = result->data(tensor(name));
    return std::vector<uint8_t>(d.begin(), d.end());
  };
  EXPECT_EQ(tensor("blk.0.attn_q.weight").format, Format::Q8_0);
  EXPECT_EQ(data("blk.0.attn_q.weight"), encoded(Format::Q8_0, input.attn));
  EXPECT_EQ(tensor("blk.0.ffn_up_exps.weight").format, Format::Q4_0);
  EXPECT_EQ(tensor("blk.0.ffn_up_exps.weight").shape,
            std::vector<int64_t>({64, 2, 3}));
  EXPECT_EQ(data("blk.0.ffn_up_exps.weight"),
            encoded(Format::Q4_0, input.exps));
  EXPECT_EQ(tensor("blk.0.attn_norm.weight").format, Format::F32);
  EXPECT_EQ(tensor("blk.0.attn_odd.weight").format, Format::F32);
  std::vector<float> output(64);
  ASSERT_TRUE(kf::dequantize(Format::Q8_0, input.output, output).ok());
  EXPECT_EQ(tensor("output.weight").format, Format::F16);
  EXPECT_EQ(data("output.weight"), encoded(Format::F16, output));

  // One thread writes the same file.
  std::string single = dir.file("single.gguf");
  ASSERT_TRUE(quantize(file, single, *recipe, {.threads = 1}).ok());
  EXPECT_EQ(fileBytes(single), fileBytes(out));
}

TEST(Quantize, KeepsIntegerTablesAndLeavesNoFileOnError) {
  TempDir dir;
  gguf::Writer w;
  w.addMetadata("general.quantization_version", uint32_t{2});
  const int32_t ids[6] = {3, 1, 4, 1, 5, 9};
  const auto *p = reinterpret_cast<const uint8_t *>(ids);
  w.addTensor("blk.0.ffn_gate_tid2eid.weight", Format::I32, {3, 2},
              std::vector<uint8_t>(p, p + sizeof ids));
  gguf::File file = written(w, dir);

  // A token -> expert table is never re-encoded, whatever the rule says.
  std::string out = dir.file("out.gguf");
  absl::StatusOr<Recipe> reencode = Recipe::parse("*=q8_0");
  ASSERT_TRUE(reencode.ok());
  std::ostringstream log;
  ASSERT_TRUE(quantize(file, out, *reencode, {.log = &log}).ok());
  EXPECT_EQ(fileBytes(out), fileBytes(file.name()));
  EXPECT_THAT(log.str(),
              ::testing::HasSubstr("warning: " + file.name() +
                                   ": tensor 'blk.0.ffn_gate_tid2eid.weight' "
                                   "is an integer table; kept as i32\n"));

  // A write that cannot happen leaves nothing behind.
  std::string unwritable = dir.file("no-such-dir/out.gguf");
  EXPECT_FALSE(quantize(file, unwritable, *reencode, {}).ok());
  EXPECT_THAT(dir.files(), ::testing::ElementsAre("in.gguf", "out.gguf"));
}

TEST(CommandLine, UsageErrorsExitWithTwo) {
  Ran none = runTool({});
  EXPECT_EQ(none.code, 2);
  EXPECT_THAT(none.err, ::testing::StartsWith("usage: kf-gguf COMMAND"));
  Ran help = runTool({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, ::testing::StartsWith("usage: kf-gguf COMMAND"));
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"show", "x"}, "unknown command 'show'"},
      {{"info"}, "info takes 1 arguments, got 0"},
      {{"info", "a", "b"}, "info takes 1 arguments, got 2"},
      {{"dequant", "f", "t"}, "dequant needs -o"},
      {{"dequant", "f", "t", "-o"}, "option '-o' needs a value"},
      {{"verify", "f", "--threads=2"}, "unknown option '--threads' for verify"},
      {{"quantize", "a", "b"}, "quantize needs --recipe"},
      {{"quantize", "a", "b", "--recipe=*=keep", "--threads", "0"},
       "--threads is '0', expected a number >= 1"},
  };
  for (const auto &[args, message] : cases) {
    Ran ran = runTool(args);
    EXPECT_EQ(ran.code, 2) << message;
    EXPECT_EQ(ran.err, "kf-gguf: " + message + " (kf-gguf --help for usage)\n");
  }
}

TEST(CommandLine, FailuresExitWithOne) {
  TempDir dir;
  std::string missing = dir.file("missing.gguf");
  for (const char *command : {"info", "verify"}) {
    Ran ran = runTool({command, missing});
    EXPECT_EQ(ran.code, 1);
    EXPECT_EQ(ran.err, "kf-gguf: " + missing +
                           ": cannot open: No such file or directory\n");
  }
  Ran recipe = runTool(
      {"quantize", missing, dir.file("out.gguf"), "--recipe", "attn=q9"});
  EXPECT_EQ(recipe.code, 1);
  EXPECT_THAT(recipe.err,
              ::testing::StartsWith("kf-gguf: recipe rule 1 'attn=q9': unknown "
                                    "format 'q9'"));
  std::ofstream(dir.file("bad.gguf")) << "GGML";
  Ran bad = runTool({"info", dir.file("bad.gguf")});
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(bad.err, "kf-gguf: " + dir.file("bad.gguf") +
                         ": byte 0: expected the magic 'GGUF', found "
                         "'GGML'\n");
}

TEST(CommandLine, EachCommandRuns) {
  TempDir dir;
  QuantizeInput input;
  gguf::File file = written(input.writer(), dir);
  Ran info = runTool({"info", file.name()});
  EXPECT_EQ(info.code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("blk.0.attn_q.weight"));
  Ran verify = runTool({"verify", file.name()});
  EXPECT_EQ(verify.code, 0) << verify.err;
  EXPECT_THAT(verify.out, HasSubstr("0 with non-finite values"));
  Ran dequant = runTool(
      {"dequant", file.name(), "output.weight", "-o", dir.file("o.npy")});
  EXPECT_EQ(dequant.code, 0) << dequant.err;
  EXPECT_EQ(fileBytes(dir.file("o.npy")).size(), 128 + 64 * 4u);
  Ran quantize = runTool({"quantize", file.name(), dir.file("q.gguf"),
                          "--recipe=.*attn_q.*=q8_0", "--threads=2"});
  EXPECT_EQ(quantize.code, 0) << quantize.err;
  EXPECT_THAT(quantize.err, HasSubstr("1 tensors re-encoded, 4 kept"));

  // Non-finite values make verify fail.
  std::vector<float> nan(4, NAN);
  gguf::Writer w;
  w.addTensor("nan", Format::F32, {4},
              std::span(reinterpret_cast<const uint8_t *>(nan.data()), 16));
  gguf::File broken = written(w, dir, "nan.gguf");
  Ran bad = runTool({"verify", broken.name()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.out, HasSubstr("nan (f32): 4 non-finite values"));
}

} // namespace
} // namespace kf::gguf_tool
