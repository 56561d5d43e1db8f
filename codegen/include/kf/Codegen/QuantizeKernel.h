//===- QuantizeKernel.h - The compiled activation quantizer ---------------===//
//
// The kernel that packs fp32 activations into the blocks the Q8_0-family
// matmul kernels read (kf/runtime/packed_layout.h), rounding exactly as the
// runtime's reference packer kf::pack_activations (and so ggml's x86 Q8_0
// activation quantizer) does. Portable vector code: every target compiles it
// at its own vector width.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_QUANTIZEKERNEL_H
#define KF_CODEGEN_QUANTIZEKERNEL_H

#include "kf/Target/TargetInfo.h"
#include "kf/runtime/kernel_abi.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace kf::codegen {

/// The ABI (kf/runtime/kernel_abi.h): m columns of K floats, ldx floats
/// apart, into m packed columns of K / 32 blocks.
using QuantizeKernelFn = kf_quantize_kernel_fn;

struct QuantizeKernelSpec {
  int64_t k = 0; ///< elements per column, a multiple of 32

  /// "kf_quantize_q8_0_k4096".
  std::string getSymbolName() const;
  /// "q8_0 activation quantizer [K = 4096]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless K is a positive multiple of
/// 32.
llvm::Error verifyQuantizeKernel(const QuantizeKernelSpec &spec);

} // namespace kf::codegen

#endif // KF_CODEGEN_QUANTIZEKERNEL_H
