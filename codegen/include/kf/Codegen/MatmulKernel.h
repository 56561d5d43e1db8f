//===- MatmulKernel.h - What a compiled quantized matmul kernel is --------===//
//
// A MatmulKernelSpec names one kernel: weight format, ISA, rows per
// interleaved group, the K and N it is compiled for and its widest column
// tile. Plain data, no MLIR: the kernel passes, the JIT and kf-bench all speak
// it. The kernel's C ABI and the layouts it reads are docs/codegen.md's.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_MATMULKERNEL_H
#define KF_CODEGEN_MATMULKERNEL_H

#include "kf/Target/KernelIsa.h"
#include "kf/Target/TargetInfo.h"
#include "kf/runtime/kernel_abi.h"
#include "kf/runtime/packed_layout.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kf::codegen {

/// The instruction family a kernel's dot products use, and what the target
/// layer's table (kf/Target/KernelIsas.def) says of it.
using target::canRunIsa;
using target::getIsaName;
using target::getIsaRows;
using target::getRequiredFeatures;
using target::KernelIsa;
using target::lookupIsa;

/// Whether the emitters build matmul kernels for weights of `format` (Q8_0,
/// Q4_0, MXFP4, FRACTAL64, VQ3_64 with Q8_0 activations; Q4_K, Q5_K, Q6_K,
/// IQ2_XXS, IQ1_S, IQ1_M with Q8_K ones; BF16 and F32 with activations of
/// their own format).
bool hasMatmulEmitter(kf::Format format);

/// The software prefetch of a kernel's weight stream: how many bytes ahead of
/// the K block being read a column tile prefetches into L2 (x86 prefetcht1,
/// AArch64 PLDL2KEEP) and into L1 (prefetcht0, PLDL1KEEP); 0: none. A tile
/// that decodes its weights issues a block's prefetches in shares, one per
/// decode step; `keepOrder` keeps each share at its step in the machine code,
/// where LLVM's machine scheduler otherwise gathers them in one burst.
struct WeightPrefetch {
  int64_t l2Bytes = 0;
  int64_t l1Bytes = 0;
  bool keepOrder = false;

  friend bool operator==(const WeightPrefetch &,
                         const WeightPrefetch &) = default;
};

/// What a tile of `width` columns prefetches of weights in `format` by
/// default: the `prefetch_*` settings of target/tuning/defaults.tuning
/// (docs/codegen.md, "Weight prefetch").
WeightPrefetch getDefaultWeightPrefetch(kf::Format format, int64_t width);

/// The weight coding kernels of `format` read best: IQ1_S's and IQ1_M's
/// ternary layouts, whose shifts beat the grid gathers on AVX-512 and AVX2
/// alike despite 40 % more bytes (docs/codegen.md, "IQ grid formats"; NEON
/// reads the grid with scalar loads); IQ2_XXS's code book layout where `isa` on
/// `target` reads it (hasCodeBookLayout); the file's codes otherwise.
kf::WeightCoding getDefaultWeightCoding(kf::Format format, KernelIsa isa,
                                        const target::TargetInfo &target);
/// Whether kernels of `isa` on `target` read IQ2_XXS's code book layout: the
/// AVX-512 VNNI kernels where the target has VBMI, GFNI and BMI2.
bool hasCodeBookLayout(KernelIsa isa, const target::TargetInfo &target);
/// Why kernels of `isa` on `target` cannot read the code book layout, as what
/// it "needs ...", naming what the ISA or the target lacks; empty when they
/// can.
std::string whyNoCodeBookLayout(KernelIsa isa,
                                const target::TargetInfo &target);
/// The fewest columns from which a kernel for weights of `format` in `coding`
/// gains by decoding each block once (MatmulKernelSpec::decodeOnce): the
/// `decode_once_from` setting of target/tuning/defaults.tuning, where the
/// measurements behind each figure are cited; none where decoding once does
/// not pay.
std::optional<int64_t> getDecodeOnceMinColumns(kf::Format format,
                                               kf::WeightCoding coding);

/// Whether a kernel for weights of `format` with widest tile `maxCols`,
/// called with `m` columns (std::nullopt: a dynamic M), decodes once by
/// default: a static M of more than one tile and at least
/// getDecodeOnceMinColumns; a dynamic M where decoding once gains from the
/// first call of more than one tile (a dynamic M is mostly an expert's
/// bucket, of few columns).
bool decodesOnceByDefault(kf::Format format, kf::WeightCoding coding,
                          std::optional<int64_t> m, int64_t maxCols);

/// Whether `isa` has kernels for weights of `format`: an emitter for the
/// format (hasMatmulEmitter) in a family the ISA takes (KernelIsas.def).
bool isaSupportsFormat(KernelIsa isa, kf::Format format);

/// The kernel ABI (kf/runtime/kernel_abi.h): rows [nBegin, nEnd) of y, for
/// m token columns, y[j * ldy + n] = sum_k x[j][k] * w[n][k]. nBegin is a
/// multiple of the spec's rows; nEnd is one too, or N. packedW is the whole
/// tensor in getWeightLayout(), packedX m columns of packed activations.
using MatmulKernelFn = kf_matmul_kernel_fn;

struct MatmulKernelSpec {
  kf::Format format = kf::Format::Q8_0; ///< one hasMatmulEmitter accepts
  KernelIsa isa = KernelIsa::Scalar;
  int64_t rows = 16; ///< rows per group (16 AVX-512, 8 AVX2, 4 NEON)
  int64_t k = 0;     ///< elements per weight row, a multiple of the block (32;
                     ///< 256 for the K-quants and IQ formats; any for BF16
                     ///< and F32, whose packed rows end in a zero-padded
                     ///< block)
  int64_t n = 0;     ///< weight rows
  int64_t maxCols = 8; ///< widest column tile, 1..8
  /// Whether the kernel rounds its results to bf16 (kf::fp32ToBf16: ties
  /// to even, NaNs kept quiet) before storing them: the epilogue of a
  /// `precision(bf16)` linear, fused so the rounding costs no extra pass.
  bool roundToBf16 = false;
  /// Cache blocks (#kf.kernel's l1_k and l2_rows; 0: none), used when a call
  /// has more columns than one tile (m > maxCols): K is walked in blocks of
  /// l1K elements (a multiple of the packed block, or K) so that a column
  /// tile's activations stay in L1, and for each K block a thread's rows in
  /// blocks of l2Rows (a multiple of rows) whose weights stay in L2 while every
  /// column tile runs over them. Calls of at most maxCols columns read the
  /// weights once anyway and walk all of K and their rows in one pass, but
  /// still prepare the tile's activation terms once for all its rows (the
  /// int8 family's corrections; a one-column tile's masked words where the
  /// format decodes in its packed order).
  int64_t l1K = 0;
  int64_t l2Rows = 0;
  /// Whether the kernel quantizes its activations itself, as its prologue:
  /// x is then m rows of K floats, K apart (the fp32 activations), which the
  /// kernel packs into getActivationFormat()'s blocks on its stack, up to
  /// maxCols columns at a time, before the loop nest multiplies them. Every
  /// call (every thread's) packs every column it multiplies, so this pays
  /// when the columns are few (decode): no quantize step, no barrier between
  /// it and the matmul, no packed activations in the arena.
  bool fuseQuantize = false;
  /// Whether a call of more columns than one tile decodes each weight block
  /// once (it needs cache blocks): for each K block and row block, the rows'
  /// blocks are decoded into int8 lanes in a stack scratch buffer, which
  /// every column tile then reads as it would Q8_0's lanes, instead of each
  /// tile decoding them again. This pays where decoding costs more than
  /// storing and reloading the lanes (the grid and codebook formats, the
  /// K-quants) and the columns are many (prefill).
  bool decodeOnce = false;
  /// Every tile's weight prefetch, instead of getDefaultWeightPrefetch's:
  /// for measurements (kf-bench's KF_BENCH_PREFETCH).
  std::optional<WeightPrefetch> prefetch;
  /// The weights' coding in the packed layout: the file's, IQ1_S's and
  /// IQ1_M's 2-bit ternary codes (kf/runtime/packed_layout.h), which decode
  /// with shifts where the file's grid indices need a gather, or IQ2_XXS's
  /// code book layout, stored in the order its code book lookup reads.
  kf::WeightCoding coding = kf::WeightCoding::File;

  /// The function's symbol, e.g.
  /// "kf_matmul_q8_0_avx512vnni_r16_c8_k4096_n2048" ("..._bf16" when it
  /// rounds to bf16; "..._l1k2048_l2r352" with cache blocks;
  /// "..._pf4096x1024o" with a prefetch given (o: in order); "..._fq" when it
  /// quantizes its activations; "..._do" when it decodes once;
  /// "kf_matmul_iq1_s_ternary_..." for a ternary layout,
  /// "kf_matmul_iq2_xxs_codebook_..." for a code book one).
  std::string getSymbolName() const;
  /// The packed weight layout the kernel reads: signed lanes for
  /// NeonDotprod (sdot multiplies signed by signed), unsigned for the others;
  /// the spec's coding.
  kf::PackedLayout getWeightLayout() const;
  /// The packed activations the kernel reads: the format's dot_format, Q8_0,
  /// Q8_K, BF16 or F32 (kf::activationLayout).
  kf::Format getActivationFormat() const;
  /// Bytes of the packed weights, and of one packed activation column.
  int64_t getWeightBytes() const;
  int64_t getActivationColumnBytes() const;
  /// The stack bytes a fused quantization packs into: maxCols packed
  /// activation columns (0 unless fuseQuantize).
  int64_t getPrologueBytes() const;
  /// The stack bytes a decode-once kernel decodes a row block into: one
  /// byte per weight of l2Rows rows (a row group without them) by l1K
  /// elements (all of K without it) rounded up to whole blocks (0 unless
  /// decodeOnce).
  int64_t getDecodeScratchBytes() const;
  /// "q8_0/avx512vnni r16 c8 [2048 x 4096]" (" bf16" appended when it
  /// rounds; "iq1_s ternary/..." for a ternary layout), for messages.
  std::string describe() const;
};

/// The most stack a fused quantization may take (getPrologueBytes): an
/// eighth of the 8 MiB a thread's stack has by default (glibc), which the
/// runtime's threads keep.
inline constexpr int64_t kMaxPrologueBytes = 1 << 20;
/// The most stack a decode-once kernel's scratch may take
/// (getDecodeScratchBytes), the same eighth of a thread's stack.
inline constexpr int64_t kMaxDecodeScratchBytes = 1 << 20;

/// Checks that the emitters can build `spec` and that `target` can run it
/// (its architecture and ISA features), before any IR exists: an intrinsic
/// the target lacks must never reach LLVM, which aborts on it. The error is
/// one line naming the kernel and what was expected.
llvm::Error verifyMatmulKernel(const MatmulKernelSpec &spec,
                               const target::TargetInfo &target);

} // namespace kf::codegen

#endif // KF_CODEGEN_MATMULKERNEL_H
