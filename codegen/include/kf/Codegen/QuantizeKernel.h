//===- QuantizeKernel.h - The compiled activation quantizer ---------------===//
//
// The kernel that packs fp32 activations into the blocks the matmul kernels
// read (kf/runtime/packed_layout.h: Q8_0 for the Q8_0 family, Q8_K for the
// K-quants, BF16 or F32 for the float kernels), rounding exactly as the
// runtime's reference packer kf::pack_activations (and so ggml's activation
// quantizers) does. Portable vector code: every target compiles it at its own
// vector width.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_QUANTIZEKERNEL_H
#define KF_CODEGEN_QUANTIZEKERNEL_H

#include "kf/Target/TargetInfo.h"
#include "kf/runtime/format.h"
#include "kf/runtime/kernel_abi.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace kf::codegen {

/// The ABI (kf/runtime/kernel_abi.h): m columns of K floats, ldx floats
/// apart, into m packed columns of K / 32 (Q8_K: K / 256) blocks, or of
/// ceil(K / 32) BF16 or ceil(K / 16) F32 blocks.
using QuantizeKernelFn = kf_quantize_kernel_fn;

struct QuantizeKernelSpec {
  int64_t k = 0; ///< elements per column, a multiple of the block (any for
                 ///< BF16 and F32)
  /// The packed activations written: Q8_0 (blocks of 32), Q8_K (256), BF16
  /// or F32, as kf::pack_activations(activation, ...) writes them.
  kf::Format activation = kf::Format::Q8_0;

  /// "kf_quantize_q8_0_k4096", "kf_quantize_q8_k_k4096".
  std::string getSymbolName() const;
  /// "q8_0 activation quantizer [K = 4096]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless the format is Q8_0 or Q8_K
/// and K a positive multiple of its block (32 or 256), or BF16 or F32 and K
/// positive.
llvm::Error verifyQuantizeKernel(const QuantizeKernelSpec &spec);

} // namespace kf::codegen

#endif // KF_CODEGEN_QUANTIZEKERNEL_H
