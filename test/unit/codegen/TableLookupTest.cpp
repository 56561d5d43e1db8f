// The x86 dot emitters' byte-table lookups (DotEmitter::emitTableLookup), on
// their own (and AVX-512's fp32 one, emitFloatTableLookup, at the end): a
// function that loads a vector of indices, looks them up and stores the bytes,
// built with the emitter of an ISA for a target. Up to 16 entries they are one
// vpshufb; up to 64, one vpermb on AVX-512 with VBMI, else one vpshufb per 16
// entries and selects by index bits 4 and 5. The assembly shows which
// instructions each target gets, and the functions run here, JIT-compiled, per
// x86 ISA (skipped by name where this machine cannot run it), against the
// plain table for every index at every byte position.
#include "HostIsa.h"
#include "KernelCases.h"
#include "TestTarget.h"
#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/KernelCompiler.h"
#include "kf/Codegen/MatmulEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kf::codegen {
namespace {

using target::TargetInfo;

// out[i] = table[in[i]] for the 4R bytes of one vector of `isa`.
using LookupFn = void (*)(const int8_t *in, int8_t *out);

std::string lookupName(size_t entries) {
  return "kf_table_lookup_" + std::to_string(entries);
}

int64_t vectorBytes(KernelIsa isa) { return 4 * getIsaRows(isa); }

// A module of one lookup function per table, built by `isa`'s dot emitter
// for `target`.
mlir::OwningOpRef<mlir::ModuleOp>
buildLookups(mlir::MLIRContext &context, KernelIsa isa,
             const TargetInfo &target,
             const std::vector<std::vector<int8_t>> &tables) {
  loadKernelDialects(context);
  mlir::OpBuilder b(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(b.getUnknownLoc());
  std::unique_ptr<DotEmitter> emitter = createDotEmitter(isa, target);
  EXPECT_TRUE(emitter) << getIsaName(isa).str();
  if (!emitter)
    return module;
  auto ptr = mlir::LLVM::LLVMPointerType::get(&context);
  auto type = mlir::VectorType::get({vectorBytes(isa)}, b.getI8Type());
  for (const std::vector<int8_t> &table : tables) {
    mlir::Location loc = b.getUnknownLoc();
    mlir::func::FuncOp fn = createKernelFunction(
        b, loc, *module, lookupName(table.size()), {ptr, ptr}, target);
    mlir::Value indices = emitLoad(b, loc, type, fn.getArgument(0), 0);
    mlir::Value bytes = emitter->emitTableLookup(b, loc, indices, table);
    mlir::LLVM::StoreOp::create(b, loc, bytes, fn.getArgument(1),
                                /*alignment=*/1);
    mlir::func::ReturnOp::create(b, loc);
  }
  return module;
}

std::vector<int8_t> makeTable(size_t entries, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> table(entries);
  for (int8_t &entry : table)
    entry = static_cast<int8_t>(byte(rng));
  return table;
}

// The assembly lines of `text` that are the instruction `mnemonic` with an
// operand among `registers` (a prefix: "%zmm", "%ymm", or "%" for any).
size_t count(const std::string &text, llvm::StringRef mnemonic,
             llvm::StringRef registers = "%") {
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n');
  size_t n = 0;
  for (llvm::StringRef line : lines) {
    auto [name, operands] = line.trim().split('\t');
    if (name == mnemonic && operands.contains(registers))
      ++n;
  }
  return n;
}

// The AVX-512 VNNI level of Cascade Lake: no VBMI, so no vpermb.
TargetInfo cascadelake() {
  TargetInfo t = testTarget("x86-64-v4");
  t.name = "cascadelake";
  t.cpu = "cascadelake";
  t.features.set(static_cast<size_t>(target::Feature::AVX512VNNI));
  return t;
}

std::string assemblyOf(mlir::ModuleOp module, const TargetInfo &target) {
  llvm::Expected<std::string> text = emitAssembly(module, target);
  EXPECT_TRUE(static_cast<bool>(text)) << llvm::toString(text.takeError());
  return text ? *text : std::string();
}

std::string assemblyOf(KernelIsa isa, const TargetInfo &target,
                       size_t entries) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildLookups(context, isa, target, {makeTable(entries, 1)});
  return assemblyOf(*module, target);
}

// A 64-entry table: one vpermb where the target has VBMI, else one vpshufb
// per 16 entries, on AVX-512 and AVX2 alike.
TEST(TableLookup, X86InstructionsFor64Entries) {
  ASSERT_TRUE(testTarget("znver5").has(target::Feature::AVX512VBMI));
  std::string text =
      assemblyOf(KernelIsa::Avx512Vnni, testTarget("znver5"), 64);
  EXPECT_EQ(count(text, "vpermb", "%zmm"), 1u) << text;
  EXPECT_EQ(count(text, "vpshufb"), 0u) << text;

  TargetInfo noVbmi = cascadelake();
  ASSERT_FALSE(noVbmi.has(target::Feature::AVX512VBMI));
  ASSERT_TRUE(canRunIsa(noVbmi, KernelIsa::Avx512Vnni));
  text = assemblyOf(KernelIsa::Avx512Vnni, noVbmi, 64);
  EXPECT_EQ(count(text, "vpermb"), 0u) << text;
  EXPECT_EQ(count(text, "vpshufb", "%zmm"), 4u) << text;

  text = assemblyOf(KernelIsa::Avx2, testTarget("x86-64-v3"), 64);
  EXPECT_EQ(count(text, "vpermb"), 0u) << text;
  EXPECT_EQ(count(text, "vpshufb", "%ymm"), 4u) << text;
  EXPECT_EQ(text.find("%zmm"), std::string::npos) << text;
}

// Up to 16 entries stay one vpshufb, VBMI or not; 17 take two on targets
// without it.
TEST(TableLookup, X86InstructionsFor16And17Entries) {
  for (const TargetInfo &target : {testTarget("znver5"), cascadelake()}) {
    SCOPED_TRACE(target.name);
    std::string text = assemblyOf(KernelIsa::Avx512Vnni, target, 16);
    EXPECT_EQ(count(text, "vpshufb", "%zmm"), 1u) << text;
    EXPECT_EQ(count(text, "vpermb"), 0u) << text;
  }
  std::string text = assemblyOf(KernelIsa::Avx2, testTarget("x86-64-v3"), 16);
  EXPECT_EQ(count(text, "vpshufb", "%ymm"), 1u) << text;
  text = assemblyOf(KernelIsa::Avx2, testTarget("x86-64-v3"), 17);
  EXPECT_EQ(count(text, "vpshufb", "%ymm"), 2u) << text;
  text = assemblyOf(KernelIsa::Avx512Vnni, cascadelake(), 17);
  EXPECT_EQ(count(text, "vpshufb", "%zmm"), 2u) << text;
  text = assemblyOf(KernelIsa::Avx512Vnni, testTarget("znver5"), 17);
  EXPECT_EQ(count(text, "vpermb", "%zmm"), 1u) << text;
}

// The lookups of each x86 ISA's int8 dot emitter (the ISAs with kernels of
// Tolerance::Exact, KernelCases.h) computed here for every index at every
// byte position: the portable selects (x86-64-v2), AVX2 at its ISA
// level and on this machine's CPU, AVX-512 VNNI without VBMI (the x86-64-v4
// level plus VNNI: vpshufb and masked moves) and on this machine (vpermb
// when it has VBMI).
class TableLookupOnIsa : public testing::TestWithParam<KernelIsa> {};

INSTANTIATE_TEST_SUITE_P(Isa, TableLookupOnIsa,
                         testing::ValuesIn(getKernelIsas(target::Arch::X86_64,
                                                         Tolerance::Exact)),
                         isaParamName);

TEST_P(TableLookupOnIsa, LookupsMatchTheTable) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  std::vector<TargetInfo> targets = {isaTestTarget(isa)};
  if (isa == KernelIsa::Avx512Vnni) {
    // isaTestTarget is the host here; the level without VBMI too.
    targets.push_back(testTarget("x86-64-v4"));
    targets.back().name = "x86-64-v4+avx512vnni";
    targets.back().features.set(
        static_cast<size_t>(target::Feature::AVX512VNNI));
  } else if (isa == KernelIsa::Avx2) {
    targets.push_back(hostTarget());
  }
  const size_t sizes[] = {1, 5, 16, 17, 31, 32, 33, 48, 49, 63, 64};
  const size_t beyond16 =
      llvm::count_if(sizes, [](size_t n) { return n > 16; });

  for (const TargetInfo &target : targets) {
    SCOPED_TRACE(getIsaName(isa).str() + " on " + target.name +
                 (target.has(target::Feature::AVX512VBMI) ? " (vbmi)" : ""));
    ASSERT_TRUE(canRunIsa(target, isa));
    std::vector<std::vector<int8_t>> tables;
    for (size_t entries : sizes)
      tables.push_back(makeTable(entries, static_cast<uint32_t>(entries)));
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        buildLookups(context, isa, target, tables);
    llvm::Expected<JitKernelModule> jit = jitKernelModule(*module, target);
    ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
    // The path is the one meant: vpermb for each table beyond 16 entries on
    // AVX-512 with VBMI, and never without.
    if (isa == KernelIsa::Avx512Vnni) {
      EXPECT_EQ(count(assemblyOf(*module, target), "vpermb"),
                target.has(target::Feature::AVX512VBMI) ? beyond16 : 0);
    }

    const int64_t bytes = vectorBytes(isa);
    for (const std::vector<int8_t> &table : tables) {
      const size_t entries = table.size();
      llvm::Expected<void *> address = jit->lookup(lookupName(entries));
      ASSERT_TRUE(static_cast<bool>(address))
          << llvm::toString(address.takeError());
      auto fn = reinterpret_cast<LookupFn>(*address);
      // Shifting by 0 .. 63 puts every index at every position.
      for (size_t shift = 0; shift < 64; ++shift) {
        std::vector<int8_t> in(bytes), out(bytes, 0);
        for (int64_t i = 0; i < bytes; ++i)
          in[i] = static_cast<int8_t>((i + shift) % entries);
        fn(in.data(), out.data());
        for (int64_t i = 0; i < bytes; ++i)
          ASSERT_EQ(out[i], table[in[i]]) << entries << " entries, index "
                                          << int(in[i]) << " at byte " << i;
      }
    }
  }
}

// out[r] = table[in[r] & 15] for the R lanes of one vector of `isa`.
using FloatLookupFn = void (*)(const int32_t *in, float *out);

// A module of one function that looks up `isa`'s vector of i32 indices in
// `table` by DotEmitter::emitFloatTableLookup and stores the floats; null
// where the emitter has no such lookup.
mlir::OwningOpRef<mlir::ModuleOp>
buildFloatLookup(mlir::MLIRContext &context, KernelIsa isa,
                 const TargetInfo &target, llvm::ArrayRef<float> table) {
  loadKernelDialects(context);
  mlir::OpBuilder b(&context);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  std::unique_ptr<DotEmitter> emitter = createDotEmitter(isa, target);
  EXPECT_TRUE(emitter) << getIsaName(isa).str();
  if (!emitter)
    return {};
  auto ptr = mlir::LLVM::LLVMPointerType::get(&context);
  mlir::func::FuncOp fn = createKernelFunction(
      b, loc, *module, "kf_float_lookup", {ptr, ptr}, target);
  mlir::Value indices =
      emitLoad(b, loc, mlir::VectorType::get({getIsaRows(isa)}, b.getI32Type()),
               fn.getArgument(0), 0);
  mlir::Value floats = emitter->emitFloatTableLookup(b, loc, indices, table);
  if (!floats)
    return {};
  mlir::LLVM::StoreOp::create(b, loc, floats, fn.getArgument(1),
                              /*alignment=*/1);
  mlir::func::ReturnOp::create(b, loc);
  return module;
}

std::array<float, 16> floatTable() {
  std::array<float, 16> table;
  for (int i = 0; i < 16; ++i)
    table[i] = 0.75f * static_cast<float>(i) - 5.0f;
  return table;
}

// The fp32 lookup by an i32 lane's low 4 bits (VQ3_64's sub-scales): one
// vpermps on AVX-512 (LLVM may spell it vpermd), none elsewhere.
TEST(TableLookup, FloatLookupByLowFourBitsIsOneVpermps) {
  const std::array<float, 16> table = floatTable();
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  EXPECT_FALSE(buildFloatLookup(context, KernelIsa::Avx2,
                                testTarget("x86-64-v3"), table));
  EXPECT_FALSE(buildFloatLookup(context, KernelIsa::Scalar,
                                testTarget("x86-64-v2"), table));
  mlir::OwningOpRef<mlir::ModuleOp> module = buildFloatLookup(
      context, KernelIsa::Avx512Vnni, testTarget("znver5"), table);
  ASSERT_TRUE(module);
  std::string text = assemblyOf(*module, testTarget("znver5"));
  EXPECT_EQ(count(text, "vpermps", "%zmm") + count(text, "vpermd", "%zmm"), 1u)
      << text;
}

// The same lookup run here, for every low-bit pattern under random high
// bits.
class FloatTableLookupOnIsa : public testing::TestWithParam<KernelIsa> {};

INSTANTIATE_TEST_SUITE_P(Isa, FloatTableLookupOnIsa,
                         testing::Values(KernelIsa::Avx512Vnni), isaParamName);

TEST_P(FloatTableLookupOnIsa, LookupByLowFourBitsMatchesTheTable) {
  const KernelIsa isa = GetParam();
  KF_SKIP_UNLESS_HOST_RUNS(isa);
  const std::array<float, 16> table = floatTable();
  const TargetInfo &host = hostTarget();
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildFloatLookup(context, isa, host, table);
  ASSERT_TRUE(module);
  llvm::Expected<JitKernelModule> jit = jitKernelModule(*module, host);
  ASSERT_TRUE(static_cast<bool>(jit)) << llvm::toString(jit.takeError());
  llvm::Expected<void *> address = jit->lookup("kf_float_lookup");
  ASSERT_TRUE(static_cast<bool>(address))
      << llvm::toString(address.takeError());
  auto fn = reinterpret_cast<FloatLookupFn>(*address);
  std::mt19937 rng(7);
  for (int round = 0; round < 64; ++round) {
    std::array<int32_t, 16> in;
    std::array<float, 16> out{};
    for (int r = 0; r < 16; ++r)
      in[r] = static_cast<int32_t>((rng() & ~15u) | ((round + r) & 15));
    fn(in.data(), out.data());
    for (int r = 0; r < 16; ++r)
      ASSERT_EQ(out[r], table[in[r] & 15])
          << "lane " << r << ", index " << in[r];
  }
}

} // namespace
} // namespace kf::codegen
