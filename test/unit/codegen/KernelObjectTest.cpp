// Ahead-of-time compilation: object files for named targets of both
// architectures hold the kernels' symbols for the right machine, and the
// instructions each ISA is meant to use are the ones LLVM emitted.
#include "HostIsa.h"
#include "TestTarget.h"
#include "kf/Codegen/KernelCompiler.h"

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <set>
#include <string>

namespace kf::codegen {
namespace {

// Writes the kernels' object for `targetName` and returns its architecture
// and defined symbols.
void checkObject(const KernelSet &kernels, llvm::StringRef targetName,
                 llvm::Triple::ArchType arch) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("kf-kernels", "o", path));
  llvm::Error err = emitObject(kernels, testTarget(targetName), path);
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));

  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> object =
      llvm::object::ObjectFile::createObjectFile(path);
  ASSERT_TRUE(static_cast<bool>(object)) << llvm::toString(object.takeError());
  const llvm::object::ObjectFile &file = *object->getBinary();
  EXPECT_EQ(file.getArch(), arch);
  std::set<std::string> defined;
  for (const llvm::object::SymbolRef &symbol : file.symbols()) {
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    llvm::Expected<llvm::object::SymbolRef::Type> type = symbol.getType();
    if (name && type && *type == llvm::object::SymbolRef::ST_Function)
      defined.insert(name->str());
    else {
      llvm::consumeError(name.takeError());
      llvm::consumeError(type.takeError());
    }
  }
  for (const MatmulKernelSpec &spec : kernels.matmuls)
    EXPECT_TRUE(defined.count(spec.getSymbolName())) << spec.getSymbolName();
  for (const QuantizeKernelSpec &spec : kernels.quantizers)
    EXPECT_TRUE(defined.count(spec.getSymbolName())) << spec.getSymbolName();
  llvm::sys::fs::remove(path);
}

TEST(KernelObject, CrossCompilesForAArch64) {
  checkObject({{{Format::Q8_0, KernelIsa::Scalar, 4, 4096, 2048, 8},
                {Format::Q4_0, KernelIsa::Scalar, 4, 4096, 2048, 8},
                {Format::MXFP4, KernelIsa::Scalar, 4, 4096, 2048, 8},
                {Format::Q8_0, KernelIsa::NeonDotprod, 4, 4096, 2048, 8},
                {Format::Q4_0, KernelIsa::NeonDotprod, 4, 4096, 2048, 8},
                {Format::MXFP4, KernelIsa::NeonDotprod, 4, 4096, 2048, 8}},
               {{4096}}},
              "neoverse-v1", llvm::Triple::aarch64);
}

TEST(KernelObject, CompilesEveryX86Isa) {
  checkObject({{{Format::Q8_0, KernelIsa::Scalar, 1, 256, 37, 8},
                {Format::MXFP4, KernelIsa::Scalar, 1, 256, 37, 8}},
               {{256}}},
              "x86-64-v2", llvm::Triple::x86_64);
  checkObject({{{Format::Q8_0, KernelIsa::Avx2, 8, 256, 37, 8},
                {Format::Q4_0, KernelIsa::Avx2, 8, 256, 37, 8},
                {Format::MXFP4, KernelIsa::Avx2, 8, 256, 37, 8}}},
              "x86-64-v3", llvm::Triple::x86_64);
  checkObject({{{Format::Q8_0, KernelIsa::Avx512Vnni, 16, 256, 37, 8},
                {Format::Q4_0, KernelIsa::Avx512Vnni, 16, 256, 37, 8},
                {Format::MXFP4, KernelIsa::Avx512Vnni, 16, 256, 37, 8}}},
              "znver5", llvm::Triple::x86_64);
}

size_t count(const std::string &text, llvm::StringRef what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

// The most consecutive instruction lines of `text` that hold `what`.
size_t longestRun(const std::string &text, llvm::StringRef what) {
  size_t longest = 0, run = 0;
  llvm::SmallVector<llvm::StringRef, 0> lines;
  llvm::StringRef(text).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.starts_with("\t"))
      continue; // labels and blank lines
    run = line.contains(what) ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// The choices the x86 kernels make per format, seen in their object code
// (each ISA's own instructions are Inspect/KernelObjectOfIsa's): the AVX-512
// kernel's dot products are vpdpbusd on zmm with the activation bytes
// broadcast from memory, its weight prefetches come in shares at their
// decode steps, Q6_K meets its scales with vpdpwssd, MXFP4's codes become
// lanes by vpshufb, IQ2_XXS reads its code book where VBMI and GFNI allow;
// the AVX2 kernel's dots are vpmaddubsw + vpmaddwd on no zmm register; the
// portable one uses no dot instruction.
TEST(KernelObject, X86KernelsMakeTheirFormatChoices) {
  MatmulKernelSpec vnni{Format::Q8_0, KernelIsa::Avx512Vnni, 16, 256, 64, 8};
  llvm::Expected<std::string> text = emitAssembly(vnni, testTarget("znver5"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_GT(count(*text, "vpdpbusd"), 0u);
  EXPECT_GT(count(*text, "{1to16}"), 0u);
  // The weight stream is prefetched ahead of the K block being read: into
  // L1 by every tile, and also into L2 by the single-column one.
  EXPECT_GT(count(*text, "prefetcht0"), 0u);
  EXPECT_GT(count(*text, "prefetcht1"), 0u);
  // A prefetch given in the spec replaces the default in every tile.
  MatmulKernelSpec unprefetched = vnni;
  unprefetched.prefetch = WeightPrefetch{};
  EXPECT_EQ(unprefetched.getSymbolName(), vnni.getSymbolName() + "_pf0x0");
  text = emitAssembly(unprefetched, testTarget("znver5"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_EQ(count(*text, "prefetch"), 0u);
  // A tile issues a block's prefetches in shares, each share's far (L2)
  // lines, then its near (L1) ones: Q4_K's block of 36 lines no longer puts
  // all of its far prefetches before its near ones.
  MatmulKernelSpec oneColumn{
      Format::Q4_K, KernelIsa::Avx512Vnni, 16, 256, 64, 1};
  text = emitAssembly(oneColumn, testTarget("znver5"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  ASSERT_EQ(count(*text, "prefetcht0"), 36u);
  ASSERT_EQ(count(*text, "prefetcht1"), 36u);
  EXPECT_LT(text->find("prefetcht0"), text->rfind("prefetcht1"));
  // So does a wider one: Q5_K's 4-column tile prefetches its 44 lines per
  // block into L2 and L1, in shares of at most 2 far lines.
  MatmulKernelSpec fourColumns{
      Format::Q5_K, KernelIsa::Avx512Vnni, 16, 4096, 64, 4};
  text = emitAssembly(fourColumns, testTarget("znver5"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  ASSERT_GT(count(*text, "prefetcht1"), 0u);
  EXPECT_LE(longestRun(*text, "prefetcht1"), 4u);
  // And the shares stay at their decode steps: Q6_K's 4-column tile has 53
  // lines per block in 16 shares, at most 4 far and 4 near prefetches in a
  // row (LLVM's machine scheduler sank all 53 to the loop's end before the
  // order was kept).
  MatmulKernelSpec q6k{Format::Q6_K, KernelIsa::Avx512Vnni, 16, 4096, 64, 4};
  text = emitAssembly(q6k, testTarget("znver5"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  ASSERT_GT(count(*text, "prefetcht1"), 0u);
  EXPECT_LE(longestRun(*text, "prefetch"), 8u);

  // Q6_K's sub-block dots meet their int8 scales split in bytes (a vpshufb
  // and a vpdpwssd) in every tile, never by a vpmulld.
  for (int64_t maxCols : {8, 4, 1}) {
    MatmulKernelSpec vnniQ6k{Format::Q6_K, KernelIsa::Avx512Vnni, 16, 256, 64,
                             maxCols};
    text = emitAssembly(vnniQ6k, testTarget("znver5"));
    ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
    EXPECT_GT(count(*text, "vpdpwssd"), 0u) << maxCols;
    EXPECT_EQ(count(*text, "vpmulld"), 0u) << maxCols;
  }

  MatmulKernelSpec avx2{Format::Q8_0, KernelIsa::Avx2, 8, 256, 64, 8};
  text = emitAssembly(avx2, testTarget("x86-64-v3"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_GT(count(*text, "vpmaddubsw"), 0u);
  EXPECT_GT(count(*text, "vpmaddwd"), 0u);
  EXPECT_EQ(count(*text, "zmm"), 0u);

  // MXFP4's codes become lanes by vpshufb on both x86 ISAs.
  MatmulKernelSpec vnniFp4{
      Format::MXFP4, KernelIsa::Avx512Vnni, 16, 256, 64, 8};
  text = emitAssembly(vnniFp4, testTarget("znver5"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_GT(count(*text, "vpshufb\t%zmm"), 0u);
  EXPECT_GT(count(*text, "vpdpbusd"), 0u);

  MatmulKernelSpec avx2Fp4{Format::MXFP4, KernelIsa::Avx2, 8, 256, 64, 8};
  text = emitAssembly(avx2Fp4, testTarget("x86-64-v3"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_GT(count(*text, "vpshufb\t%ymm"), 0u);
  EXPECT_EQ(count(*text, "zmm"), 0u);

  // IQ2_XXS's slots: looked up as codes by byte permutes where the target
  // has VBMI, their lanes by vgf2p8affineqb and their sign masks by pext where
  // it has GFNI and BMI2 too, by vpermb where not; gathered without VBMI.
  MatmulKernelSpec vnniIq2{
      Format::IQ2_XXS, KernelIsa::Avx512Vnni, 16, 256, 64, 8};
  text = emitAssembly(vnniIq2, testTarget("znver5"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_GT(count(*text, "vpmultishiftqb"), 0u);
  EXPECT_GT(count(*text, "vpermi2b") + count(*text, "vpermt2b"), 0u);
  EXPECT_GT(count(*text, "vgf2p8affineqb"), 0u);
  EXPECT_GT(count(*text, "pext"), 0u);
  EXPECT_EQ(count(*text, "vpermb"), 0u);
  EXPECT_EQ(count(*text, "gather"), 0u);
  target::TargetInfo noGfni = testTarget("znver5");
  noGfni.features.reset(static_cast<size_t>(target::Feature::GFNI));
  text = emitAssembly(vnniIq2, noGfni);
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_GT(count(*text, "vpermb"), 0u);
  EXPECT_EQ(count(*text, "pext"), 0u);
  target::TargetInfo noVbmi = testTarget("x86-64-v4");
  noVbmi.features.set(static_cast<size_t>(target::Feature::AVX512VNNI));
  text = emitAssembly(vnniIq2, noVbmi);
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_EQ(count(*text, "vpmultishiftqb"), 0u);

  MatmulKernelSpec scalar{Format::Q4_0, KernelIsa::Scalar, 4, 256, 64, 8};
  text = emitAssembly(scalar, testTarget("x86-64-v2"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_EQ(count(*text, "vpdpbusd") + count(*text, "ymm"), 0u);
}

// The NEON kernels' dot products are sdot on 128-bit vectors (4 rows of 4
// bytes); the portable kernel for the same target has none: LLVM does not
// form sdot from plain integer arithmetic.
TEST(KernelObject, NeonDotprodUsesSdotAndTbl) {
  for (Format format : {Format::Q8_0, Format::Q4_0}) {
    MatmulKernelSpec neon{format, KernelIsa::NeonDotprod, 4, 256, 64, 8};
    llvm::Expected<std::string> text =
        emitAssembly(neon, testTarget("neoverse-v1"));
    ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
    EXPECT_GT(count(*text, "sdot\tv"), 0u);

    MatmulKernelSpec scalar{format, KernelIsa::Scalar, 4, 256, 64, 8};
    text = emitAssembly(scalar, testTarget("neoverse-v1"));
    ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
    EXPECT_EQ(count(*text, "sdot"), 0u);
  }

  // MXFP4's codes become lanes by one tbl per nibble vector.
  MatmulKernelSpec fp4{Format::MXFP4, KernelIsa::NeonDotprod, 4, 256, 64, 8};
  llvm::Expected<std::string> text =
      emitAssembly(fp4, testTarget("neoverse-v1"));
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  EXPECT_GT(count(*text, "tbl\tv"), 0u);
  EXPECT_GT(count(*text, "sdot\tv"), 0u);
}

// Every ISA's kernels, compiled for a named target that has it whatever
// this machine is, and inspected for the instructions that make the ISA what
// it is: the object code of the ISAs this machine cannot run is checked here
// all the same (instantiated as "Inspect", so that scripts/isa-summary can
// say so).
struct IsaInstructions {
  KernelIsa isa;
  llvm::StringRef target;
  Format format;
  llvm::SmallVector<llvm::StringRef> present, absent;
};

const IsaInstructions *instructionsOf(KernelIsa isa) {
  static const IsaInstructions table[] = {
      {KernelIsa::Scalar,
       "x86-64-v2",
       Format::Q8_0,
       {"pmaddwd"},
       {"ymm", "zmm"}},
      {KernelIsa::Avx2,
       "x86-64-v3",
       Format::Q8_0,
       {"vpmaddubsw\t%ymm", "vpmaddwd\t%ymm"},
       {"zmm"}},
      {KernelIsa::Avx512Vnni, "znver5", Format::Q8_0, {"vpdpbusd"}, {"ymm"}},
      {KernelIsa::Avx512,
       "x86-64-v4",
       Format::F32,
       {"vfmadd231ps"},
       {"vdpbf16ps"}},
      {KernelIsa::Avx512Bf16, "znver5", Format::BF16, {"vdpbf16ps"}, {}},
      {KernelIsa::NeonDotprod, "neoverse-v1", Format::Q8_0, {"sdot\tv"}, {}},
      {KernelIsa::Neon, "neoverse-v1", Format::F32, {"fmla\tv"}, {"bfdot"}},
      {KernelIsa::NeonBf16, "neoverse-v1", Format::BF16, {"bfdot\tv"}, {}},
  };
  const IsaInstructions *entry = llvm::find_if(
      table, [&](const IsaInstructions &e) { return e.isa == isa; });
  return entry == std::end(table) ? nullptr : entry;
}

class KernelObjectOfIsa : public testing::TestWithParam<KernelIsa> {};

// Every ISA of the target layer's table (kf/Target/KernelIsas.def).
INSTANTIATE_TEST_SUITE_P(Inspect, KernelObjectOfIsa,
                         testing::ValuesIn(target::getIsasByPreference()),
                         isaParamName);

TEST_P(KernelObjectOfIsa, UsesItsInstructions) {
  const IsaInstructions *entry = instructionsOf(GetParam());
  ASSERT_TRUE(entry) << getIsaName(GetParam()).str()
                     << " has no entry in instructionsOf's table";
  const IsaInstructions &want = *entry;
  const target::TargetInfo target = testTarget(want.target);
  ASSERT_TRUE(canRunIsa(target, want.isa)) << want.target.str();
  const int64_t rows = testRows(want.isa);
  MatmulKernelSpec spec{want.format, want.isa, rows, 256, 64, 8};
  llvm::Expected<std::string> text = emitAssembly(spec, target);
  ASSERT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  for (llvm::StringRef what : want.present)
    EXPECT_GT(count(*text, what.str()), 0u) << what.str();
  for (llvm::StringRef what : want.absent)
    EXPECT_EQ(count(*text, what.str()), 0u) << what.str();
}

} // namespace
} // namespace kf::codegen
