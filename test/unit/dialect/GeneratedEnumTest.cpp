// The dialect's #kf.format and #kf.kernel ISA enums are generated from the
// runtime's format table and the target layer's ISA table: check that each
// pair agrees row for row, in both directions.
#include "kf/Dialect/KfDialect.h"
#include "kf/Target/KernelIsa.h"
#include "kf/runtime/format.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

namespace {

TEST(FormatEnum, MatchesRuntimeTable) {
  for (const kf::FormatInfo &info : kf::allFormats()) {
    std::optional<mlir::kf::Format> f = mlir::kf::symbolizeFormat(info.name);
    ASSERT_TRUE(f.has_value()) << info.name;
    EXPECT_EQ(static_cast<uint32_t>(*f), info.ggmlType) << info.name;
    EXPECT_EQ(mlir::kf::stringifyFormat(*f).str(), info.name);
  }
  EXPECT_EQ(mlir::kf::getMaxEnumValForFormat(),
            kf::allFormats().back().ggmlType);
}

TEST(FormatEnum, EveryDialectCaseIsARuntimeRow) {
  for (uint32_t v = 0; v <= mlir::kf::getMaxEnumValForFormat(); ++v) {
    std::optional<mlir::kf::Format> f = mlir::kf::symbolizeFormat(v);
    EXPECT_EQ(f.has_value(), kf::formatFromGgmlType(v).has_value()) << v;
  }
}

TEST(KernelIsaEnum, MatchesTheTargetTable) {
  for (kf::target::KernelIsa isa : kf::target::getIsasByPreference()) {
    llvm::StringRef name = kf::target::getIsaName(isa);
    std::optional<mlir::kf::KernelIsa> d = mlir::kf::symbolizeKernelIsa(name);
    ASSERT_TRUE(d.has_value()) << name.str();
    EXPECT_EQ(static_cast<int32_t>(*d), static_cast<int32_t>(isa))
        << name.str();
    EXPECT_EQ(mlir::kf::KernelAttr::getLaneRows(*d),
              kf::target::getIsaRows(isa));
  }
  for (uint32_t v = 0; v <= mlir::kf::getMaxEnumValForKernelIsa(); ++v) {
    std::optional<mlir::kf::KernelIsa> d = mlir::kf::symbolizeKernelIsa(v);
    ASSERT_TRUE(d.has_value()) << v;
    EXPECT_EQ(kf::target::lookupIsa(mlir::kf::stringifyKernelIsa(*d)),
              static_cast<kf::target::KernelIsa>(v));
  }
  EXPECT_EQ(mlir::kf::getMaxEnumValForKernelIsa() + 1,
            kf::target::getIsasByPreference().size());
}

TEST(QWeightType, SizeInBytes) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::kf::KfDialect>();
  auto w =
      mlir::kf::QWeightType::get(&context, mlir::kf::Format::Q8_0, {256, 4096});
  EXPECT_EQ(w.getSizeInBytes(), 256u * 128u * 34u);
  auto experts =
      mlir::kf::QWeightType::get(&context, mlir::kf::Format::BF16, {8, 16, 64});
  EXPECT_EQ(experts.getSizeInBytes(), 8u * 16u * 64u * 2u);
  EXPECT_EQ(experts.getRows(), 16);
}

} // namespace
