//===- KernelIsa.cpp - The kernel ISA table ------------------------------===//

#include "kf/Target/KernelIsa.h"

#include "kf/runtime/packed_layout.h"

#include "llvm/ADT/STLExtras.h"

#include <array>

namespace kf::target {

namespace {

constexpr size_t kMaxFeatures = 4;

struct IsaRow {
  KernelIsa isa;
  llvm::StringRef name;
  int64_t rows;
  IsaFormats formats;
  std::array<Feature, kMaxFeatures> features;
  size_t numFeatures;
};

template <typename... Features>
constexpr IsaRow makeRow(KernelIsa isa, llvm::StringRef name, int64_t rows,
                         IsaFormats formats, Features... features) {
  static_assert(sizeof...(Features) <= kMaxFeatures);
  return {isa, name, rows, formats, {features...}, sizeof...(Features)};
}

using enum Feature;
using enum IsaFormats;

constexpr IsaRow kIsas[] = {
#define KF_KERNEL_ISA(E, mnemonic, value, rows, formats, ...)                  \
  makeRow(KernelIsa::E, mnemonic, rows, formats __VA_OPT__(, ) __VA_ARGS__),
#include "kf/Target/KernelIsas.def"
};

constexpr auto kByPreference = [] {
  std::array<KernelIsa, std::size(kIsas)> order{};
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = kIsas[i].isa;
  return order;
}();

const IsaRow &row(KernelIsa isa) {
  const IsaRow *r =
      llvm::find_if(kIsas, [&](const IsaRow &r) { return r.isa == isa; });
  assert(r != std::end(kIsas) && "every KernelIsa has a row");
  return *r;
}

} // namespace

llvm::StringRef getIsaName(KernelIsa isa) { return row(isa).name; }

std::optional<KernelIsa> lookupIsa(llvm::StringRef name) {
  for (const IsaRow &r : kIsas)
    if (r.name == name)
      return r.isa;
  return std::nullopt;
}

llvm::ArrayRef<KernelIsa> getIsasByPreference() { return kByPreference; }

int64_t getIsaRows(KernelIsa isa) { return row(isa).rows; }

IsaFormats getIsaFormats(KernelIsa isa) { return row(isa).formats; }

bool isaTakesFormat(KernelIsa isa, kf::Format format) {
  const bool isFloat = kf::isFloatFormat(format);
  switch (getIsaFormats(isa)) {
  case AllFormats:
    return true;
  case IntegerFormats:
    return !isFloat;
  case FloatFormats:
    return isFloat;
  case Bf16Only:
    return format == kf::Format::BF16;
  }
  return false;
}

llvm::ArrayRef<Feature> getRequiredFeatures(KernelIsa isa) {
  const IsaRow &r = row(isa);
  return llvm::ArrayRef(r.features.data(), r.numFeatures);
}

bool canRunIsa(const TargetInfo &target, KernelIsa isa) {
  return llvm::all_of(getRequiredFeatures(isa),
                      [&](Feature f) { return target.has(f); });
}

} // namespace kf::target
