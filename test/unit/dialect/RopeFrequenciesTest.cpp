// #kf.rope's frequency table (RopeAttr::getFrequencies), which the rope
// kernel carries, against the golden's ropeFrequencies, bit for bit: the
// plain tables and YaRN's blended ones, of the model's two kinds of layer
// and of other dims, bases and ramps; an empty YaRN ramp is refused, as the
// golden refuses it.
#include "kf/Dialect/KfDialect.h"
#include "kf/deepseek_v4/reference/rope.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include "gtest/gtest.h"

#include <bit>
#include <cstdint>
#include <vector>

namespace {

namespace reference = ::kf::deepseek_v4::reference;

mlir::kf::RopeAttr attrOf(mlir::MLIRContext &context,
                          const reference::RopeConfig &config) {
  auto value = [](double v) { return llvm::APFloat(v); };
  if (!config.yarn)
    return mlir::kf::RopeAttr::get(&context, config.ropeDim, value(config.base),
                                   value(0.0), value(0.0), value(0.0), 0);
  return mlir::kf::RopeAttr::get(&context, config.ropeDim, value(config.base),
                                 value(config.yarnFactor),
                                 value(config.betaFast), value(config.betaSlow),
                                 static_cast<int64_t>(config.originalLen));
}

class RopeFrequencies : public ::testing::Test {
protected:
  RopeFrequencies() { context.loadDialect<mlir::kf::KfDialect>(); }

  void expectGoldenTable(const reference::RopeConfig &config) {
    std::vector<float> want(static_cast<size_t>(config.ropeDim / 2));
    reference::ropeFrequencies(config, want);
    mlir::FailureOr<llvm::SmallVector<float>> got =
        attrOf(context, config).getFrequencies();
    ASSERT_TRUE(mlir::succeeded(got));
    ASSERT_EQ(got->size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(std::bit_cast<uint32_t>((*got)[i]),
                std::bit_cast<uint32_t>(want[i]))
          << "f_" << i << ": " << (*got)[i] << " vs " << want[i];
  }

  mlir::MLIRContext context;
};

TEST_F(RopeFrequencies, PlainEqualsGolden) {
  expectGoldenTable(reference::kSwaRope);
  expectGoldenTable({.ropeDim = 128, .base = 10000});
  expectGoldenTable({.ropeDim = 64, .base = 160000});
  expectGoldenTable({.ropeDim = 512, .base = 1e6});
  expectGoldenTable({.ropeDim = 2, .base = 500000});
  expectGoldenTable({.ropeDim = 96, .base = 1.5});
}

TEST_F(RopeFrequencies, YarnEqualsGolden) {
  expectGoldenTable(reference::kCompressedRope);
  expectGoldenTable({.ropeDim = 128, .base = 160000, .yarn = true});
  expectGoldenTable({.ropeDim = 64,
                     .base = 10000,
                     .yarn = true,
                     .yarnFactor = 40,
                     .betaFast = 32,
                     .betaSlow = 1,
                     .originalLen = 4096});
  expectGoldenTable({.ropeDim = 256,
                     .base = 1e6,
                     .yarn = true,
                     .yarnFactor = 4,
                     .betaFast = 64,
                     .betaSlow = 2,
                     .originalLen = 8192});
  // Ramps clipped at dim 0 and at dim - 1.
  expectGoldenTable({.ropeDim = 64,
                     .base = 160000,
                     .yarn = true,
                     .yarnFactor = 16,
                     .betaFast = 1e6,
                     .betaSlow = 1,
                     .originalLen = 65536});
  expectGoldenTable({.ropeDim = 64,
                     .base = 160000,
                     .yarn = true,
                     .yarnFactor = 16,
                     .betaFast = 32,
                     .betaSlow = 1e-9,
                     .originalLen = 65536});
}

TEST_F(RopeFrequencies, RefusesAnEmptyRamp) {
  // Both correction dims below 0: the ramp is [0, 0].
  reference::RopeConfig config{.ropeDim = 64,
                               .base = 10000,
                               .yarn = true,
                               .yarnFactor = 16,
                               .betaFast = 64,
                               .betaSlow = 32,
                               .originalLen = 16};
  reference::YarnRange range = reference::yarnCorrectionRange(config);
  ASSERT_LE(range.hi, range.lo);
  EXPECT_TRUE(mlir::failed(attrOf(context, config).getFrequencies()));
}

} // namespace
