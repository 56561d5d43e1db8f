//===- CompressKernel.h - The compiled kf.compress ------------------------===//
//
// The compressor of a compressed attention layer (kf.compress, model §4.3)
// as two step kernels (kf/Codegen/StepKernel.h), run after the matmul
// kernels that project the call's tokens (values = x · Wkvᵀ, gates = x ·
// Wgateᵀ, [T, w] fp32 each, w the cache's state width: 2·dim with overlap,
// dim without), bit for bit with the golden's Compressor (docs/engine.md,
// "Op kernels"):
//
// 1. the entries kernel builds every entry the call's tokens complete, as
//    reference::Compressor::buildEntry does, into the cache;
// 2. the state kernel, behind a barrier (the entries kernel reads the ring
//    slots it overwrites), keeps the call's last projections in the ring for
//    the entries of later calls.
//
// The cache (!kf.compressed_cache<ratio r, dim D, overlap, element>) is a
// region of the plan's persistent state, all f32 (CompressedCacheLayout):
// its `capacity` entries [capacity, D] from byte 0, entry c in row c,
// stored rounded to the element (as the interpreter's kf.cache_read returns
// them); then the running state, a ring of S = (overlap ? 2r : r) slots of
// projections, the values [S, w] and then the gates [S, w], the token at
// position q in slot q mod S. Positions are consecutive from positions[0],
// each below capacity · r (the runtime checks them); nothing reads what the
// sequence has not written, so a reset need not clear anything.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_COMPRESSKERNEL_H
#define KF_CODEGEN_COMPRESSKERNEL_H

#include "kf/Target/TargetInfo.h"
#include "kf/runtime/format.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kf::codegen {

/// What follows the pooling, norm and rope of an entry (kf.compress's
/// `post`, the golden's CompressorKind at Options{simulateQuantization =
/// post != None}).
enum class EntryPost {
  None,        ///< nothing: the entry as the rope leaves it
  Fp8,         ///< the main compressor's fp8Sim of the D − ropeDim first
               ///< values, blocks of 64
  HadamardFp4, ///< the indexer's hadamard of the entry, then fp4Sim, blocks
               ///< of 32
};

/// The bytes of a !kf.compressed_cache in the plan's state.
struct CompressedCacheLayout {
  int64_t ratio = 0;
  int64_t dim = 0;
  bool overlap = false;
  int64_t capacity = 0; ///< entries the cache holds

  /// w: floats of a token's values (and of its gates).
  int64_t getStateWidth() const { return (overlap ? 2 : 1) * dim; }
  /// S: the ring's slots.
  int64_t getRingSlots() const { return (overlap ? 2 : 1) * ratio; }
  /// Where the ring's values start: after the entries.
  int64_t getValuesOffset() const { return 4 * capacity * dim; }
  /// Where the ring's gates start: after its values.
  int64_t getGatesOffset() const {
    return getValuesOffset() + 4 * getRingSlots() * getStateWidth();
  }
  /// The cache's bytes.
  int64_t getBytes() const {
    return getGatesOffset() + 4 * getRingSlots() * getStateWidth();
  }
};

/// The entries kernel. Operands: values f32 [T, w], gates f32 [T, w],
/// positions i64 [T], ape f32 [r, w] (a weight), norm f32 [D] (a weight),
/// the cache. One work item per token: item t does nothing unless its
/// position p completes a block, (p + 1) mod r == 0; then it builds entry c
/// = p / r from the projections of the block's tokens c·r .. c·r + r − 1
/// and, with overlap, of the previous block's (absent for c = 0: value 0,
/// score −inf), token q's being row q − positions[0] of values and gates
/// where q >= positions[0], else ring slot q mod S, and writes entry row c.
/// An entry past the capacity, which the runtime refuses, is not written.
struct CompressEntriesKernelSpec {
  int64_t ratio = 0;    ///< r: tokens per entry, 1 .. kMaxRatio
  bool overlap = false; ///< each entry pools the previous block too
  int64_t dim = 0;      ///< D: floats per entry, a multiple of 16 up to kMaxDim
  /// The last ropeDim floats of an entry rotate: a positive multiple of 16,
  /// below D.
  int64_t ropeDim = 0;
  /// The ropeDim / 2 frequencies f_i (#kf.rope's getFrequencies), finite;
  /// the kernel carries them as a constant table.
  std::vector<float> frequencies;
  float eps = 0.0f; ///< the entry norm's, finite and >= 0
  /// Fp8: D − ropeDim a multiple of 64; HadamardFp4: D a power of two, at
  /// least 32.
  EntryPost post = EntryPost::None;
  kf::Format element = kf::Format::BF16; ///< F32, F16 or BF16
  int64_t capacity = 0;                  ///< entries, at least 1

  /// The softmax's weights of a group of 16 channels stay on the stack, 64
  /// bytes a slot (2r slots with overlap): 128 KiB at most.
  static constexpr int64_t kMaxRatio = 1024;
  /// An entry is built on the stack (twice with HadamardFp4).
  static constexpr int64_t kMaxDim = 4096;

  CompressedCacheLayout getLayout() const {
    return {ratio, dim, overlap, capacity};
  }
  /// "kf_compress_entries_r4_o_d512_rd64_f<16 hex digits>_e358637bd_fp8_bf16
  /// _c1024" (without the break): "_o" with overlap, the frequencies' hash,
  /// eps's bits in hex, the post (fp8, hadamard_fp4, none), the element, the
  /// capacity.
  std::string getSymbolName() const;
  /// "compress_entries kernel [ratio = 4, overlap, D = 512, rope = 64, eps =
  /// 1e-06, fp8, bf16, capacity = 1024]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless the spec is as its fields
/// say.
llvm::Error verifyCompressEntriesKernel(const CompressEntriesKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildCompressEntriesKernel(mlir::ModuleOp module,
                           const CompressEntriesKernelSpec &spec,
                           const target::TargetInfo &target);

/// The state kernel. Operands: values f32 [T, w], gates f32 [T, w],
/// positions i64 [T], the cache. One work item per token: item t copies its
/// values and gates into ring slot positions[t] mod S when t + S >= T (the
/// call's last S tokens, one per slot).
struct CompressStateKernelSpec {
  int64_t ratio = 0; ///< r, at least 1
  bool overlap = false;
  int64_t stateWidth = 0; ///< w: a positive multiple of 16 (of 32 with overlap)
  int64_t capacity = 0;   ///< entries, at least 1

  CompressedCacheLayout getLayout() const {
    return {ratio, overlap ? stateWidth / 2 : stateWidth, overlap, capacity};
  }
  /// "kf_compress_state_r4_o_w1024_c1024".
  std::string getSymbolName() const;
  /// "compress_state kernel [ratio = 4, overlap, w = 1024, capacity =
  /// 1024]", for messages.
  std::string describe() const;
};

/// Fails, in one line naming the kernel, unless the spec is as its fields
/// say.
llvm::Error verifyCompressStateKernel(const CompressStateKernelSpec &spec);

/// Appends the kernel of `spec`, named spec.getSymbolName(), to `module`.
llvm::Expected<mlir::func::FuncOp>
buildCompressStateKernel(mlir::ModuleOp module,
                         const CompressStateKernelSpec &spec,
                         const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_COMPRESSKERNEL_H
