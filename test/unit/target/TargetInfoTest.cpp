#include "kf/Target/TargetInfo.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace kf::target;

namespace {

TEST(TargetInfo, EveryNamedTargetIsValid) {
  ASSERT_GE(getNamedTargets().size(), 7u);
  for (llvm::StringRef name : getNamedTargets()) {
    llvm::Expected<TargetInfo> t = lookupTarget(name);
    ASSERT_TRUE(static_cast<bool>(t))
        << name.str() << ": " << llvm::toString(t.takeError());
    EXPECT_EQ(t->name, name.str());
    EXPECT_GT(t->l1dBytes, 0u) << name.str();
    EXPECT_GT(t->l2Bytes, t->l1dBytes) << name.str();
    EXPECT_GT(t->cores, 0u) << name.str();
    for (Feature f : allFeatures()) {
      if (t->has(f)) {
        EXPECT_EQ(getFeatureArch(f), t->arch)
            << name.str() << " " << getFeatureName(f).str();
      }
    }
    if (t->arch == Arch::AArch64) {
      EXPECT_TRUE(t->has(Feature::NEON)) << name.str();
    }
  }
}

TEST(TargetInfo, RequiredTargetsHaveTheirIsa) {
  for (llvm::StringRef name : {"x86-64-v3", "x86-64-v4", "znver4", "znver5",
                               "sapphirerapids", "neoverse-v1", "apple-m1"})
    EXPECT_TRUE(static_cast<bool>(lookupTarget(name))) << name.str();
  TargetInfo v3 = llvm::cantFail(lookupTarget("x86-64-v3"));
  EXPECT_TRUE(v3.has(Feature::AVX2));
  EXPECT_FALSE(v3.has(Feature::AVX512F));
  TargetInfo zen5 = llvm::cantFail(lookupTarget("znver5"));
  EXPECT_TRUE(zen5.has(Feature::AVX512VNNI));
  EXPECT_TRUE(zen5.has(Feature::AVX512VBMI));
  EXPECT_TRUE(zen5.has(Feature::GFNI));
  EXPECT_TRUE(zen5.has(Feature::BMI2));
  EXPECT_EQ(zen5.l1dBytes, 48u * 1024);
  TargetInfo v1 = llvm::cantFail(lookupTarget("neoverse-v1"));
  EXPECT_TRUE(v1.has(Feature::SVE));
  EXPECT_EQ(v1.triple, "aarch64-unknown-linux-gnu");
  TargetInfo m1 = llvm::cantFail(lookupTarget("apple-m1"));
  EXPECT_TRUE(m1.has(Feature::DotProd));
  EXPECT_FALSE(m1.has(Feature::I8MM));
}

TEST(TargetInfo, UnknownTargetNamesTheChoices) {
  llvm::Expected<TargetInfo> t = lookupTarget("pentium");
  ASSERT_FALSE(static_cast<bool>(t));
  std::string msg = llvm::toString(t.takeError());
  EXPECT_NE(msg.find("unknown target 'pentium'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("znver5"), std::string::npos) << msg;
}

TEST(TargetInfo, ParseFeatures) {
  FeatureSet s =
      llvm::cantFail(parseFeatures("+avx2, fma,+avx512vnni", Arch::X86_64));
  EXPECT_EQ(s.count(), 3u);
  EXPECT_TRUE(s.test(static_cast<size_t>(Feature::AVX512VNNI)));
  EXPECT_EQ(llvm::cantFail(parseFeatures("", Arch::X86_64)).count(), 0u);

  llvm::Expected<FeatureSet> bad =
      parseFeatures("+avx2,+avx1024", Arch::X86_64);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), "unknown ISA feature 'avx1024'");
  llvm::Expected<FeatureSet> wrongArch = parseFeatures("+sve", Arch::X86_64);
  ASSERT_FALSE(static_cast<bool>(wrongArch));
  EXPECT_EQ(llvm::toString(wrongArch.takeError()),
            "ISA feature 'sve' is not an x86_64 feature");
}

TEST(TargetInfo, FeatureStringRoundTrips) {
  for (llvm::StringRef name : getNamedTargets()) {
    TargetInfo t = llvm::cantFail(lookupTarget(name));
    FeatureSet back =
        llvm::cantFail(parseFeatures(t.getLLVMFeatureString(), t.arch));
    EXPECT_EQ(back, t.features) << name.str();
  }
}

TEST(TargetInfo, HostIsConsistent) {
  TargetInfo host = detectHost();
  EXPECT_EQ(host.name, "host");
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_GE(host.cores, 1u);
  EXPECT_GT(host.l1dBytes, 0u);
  EXPECT_GT(host.l2Bytes, 0u);
#if defined(__x86_64__)
  EXPECT_EQ(host.arch, Arch::X86_64);
  EXPECT_EQ(host.has(Feature::AVX2), __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(host.has(Feature::AVX512F), __builtin_cpu_supports("avx512f") != 0);
  EXPECT_EQ(host.has(Feature::AVX512VNNI),
            __builtin_cpu_supports("avx512vnni") != 0);
  EXPECT_EQ(host.has(Feature::SSE42), __builtin_cpu_supports("sse4.2") != 0);
#elif defined(__aarch64__)
  EXPECT_EQ(host.arch, Arch::AArch64);
  EXPECT_TRUE(host.has(Feature::NEON));
#endif
  EXPECT_EQ(lookupTarget("host")->cpu, host.cpu);
}

TEST(TargetInfo, PrintsEveryField) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::cantFail(lookupTarget("znver4")).print(os);
  EXPECT_NE(out.find("target:   znver4\n"), std::string::npos) << out;
  EXPECT_NE(out.find("+avx512vnni"), std::string::npos) << out;
  EXPECT_NE(out.find("l1d:      32 KiB\n"), std::string::npos) << out;
  EXPECT_NE(out.find("l2:       1 MiB\n"), std::string::npos) << out;
  EXPECT_NE(out.find("cores:    16\n"), std::string::npos) << out;
}

} // namespace
