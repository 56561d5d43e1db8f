//===- KernelIsa.h - The instruction sets matmul kernels are built for ----===//
//
// One table (KernelIsas.def) describes every ISA family a matmul kernel can
// be generated for: its name, its rows per vector, the formats it takes, the
// features it needs and the order in which they are preferred. The emitters
// use this enum; the dialect's #kf.kernel ISA enum is generated from the same
// table with the same values.
//
//===----------------------------------------------------------------------===//

#ifndef KF_TARGET_KERNELISA_H
#define KF_TARGET_KERNELISA_H

#include "kf/Target/TargetInfo.h"
#include "kf/runtime/format.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace kf::target {

enum class KernelIsa : int32_t {
#define KF_KERNEL_ISA(E, mnemonic, value, ...) E = value,
#include "kf/Target/KernelIsas.def"
};

/// The weights an ISA family's kernels take.
enum class IsaFormats {
  AllFormats,     ///< every format with an emitter
  IntegerFormats, ///< the quantized formats (int8 dot products)
  FloatFormats,   ///< f32 and bf16 (fp32 multiply-adds)
  Bf16Only,       ///< bf16 (a bf16 dot instruction)
};

/// "scalar", "avx2", "avx512vnni", ...: the table's mnemonic.
llvm::StringRef getIsaName(KernelIsa isa);
/// The ISA of mnemonic `name`, if any.
std::optional<KernelIsa> lookupIsa(llvm::StringRef name);
/// Every ISA, most preferred first (scalar last).
llvm::ArrayRef<KernelIsa> getIsasByPreference();

/// The int32 (int8 family) or fp32 (float family) lanes of one vector of
/// `isa`: its rows per group (1 for scalar, which takes any).
int64_t getIsaRows(KernelIsa isa);

/// Which weights `isa`'s family takes; whether a format has kernels at all
/// is the emitters' to say (codegen::isaSupportsFormat).
IsaFormats getIsaFormats(KernelIsa isa);
bool isaTakesFormat(KernelIsa isa, kf::Format format);

/// The target features `isa`'s kernels are built from, on its architecture
/// (none for scalar).
llvm::ArrayRef<Feature> getRequiredFeatures(KernelIsa isa);

/// Whether `target` has every feature getRequiredFeatures(isa) names (a
/// feature names its architecture, so only its own ISAs, and scalar).
bool canRunIsa(const TargetInfo &target, KernelIsa isa);

} // namespace kf::target

#endif // KF_TARGET_KERNELISA_H
