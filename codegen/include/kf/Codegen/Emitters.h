//===- Emitters.h - Per-format decode and per-ISA dot emitters ------------===//
//
// The matmul loop nest (MatmulLoopNest.cpp) is written once. What differs by
// weight format is how a packed block turns into int8 lanes and how its int32
// dot meets the scales (a WeightDecodeEmitter); what differs by ISA is how
// lanes and activation bytes become int32 dot products, and how bytes are
// looked up in a small table (a DotEmitter, which decoders of table formats
// call: MXFP4's codes, and the IQ formats' codebooks). The two meet in the
// lanes: a vector<4R x i8> holding, for each of the group's R rows, 4
// consecutive weights (lanes 4r .. 4r + 3) as w + offset, in the encoding of
// the spec's weight layout (unsigned for x86's unsigned-by-signed dot
// instructions, signed for NEON's sdot); and an activation operand of 4
// signed bytes broadcast to every row.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_EMITTERS_H
#define KF_CODEGEN_EMITTERS_H

#include "kf/Codegen/MatmulKernel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <utility>

namespace kf::codegen {

/// What decoded lanes hold: w + offset, as an unsigned value below 2^bits, or
/// when `isSigned` as a signed bits-bit value (only a signed layout's Q8_0
/// lanes are: w itself, offset 0).
struct LaneRange {
  unsigned bits = 8;
  int64_t offset = 128;
  bool isSigned = false;
  /// The largest |w| where the format bounds it closer than the range does
  /// (IQ1's 8 w in -9..9, lanes 0..18 of 5 bits), which bounds the dots a
  /// sub-block's scale meets; 0: the range's bound.
  int64_t maxWeight = 0;
};

/// Lanes for the 4 weights at elements kOffset .. kOffset + 3 of a block, or
/// for those of them `mask` names (packed-order steps: WeightDecodeEmitter::
/// PackedOrderSteps), whose dot then meets zero activation bytes in the
/// other lanes, whatever they hold.
struct DecodedLanes {
  mlir::Value lanes; ///< vector<4R x i8>
  int64_t kOffset;
  /// Bit i set: lane i is element kOffset + i's weight.
  unsigned mask = 0xf;
};

/// The activation word a DecodedLanes meets: elements kOffset + i for the
/// bits i of `mask`, zero bytes elsewhere.
struct ActivationWord {
  int64_t kOffset;
  unsigned mask;
  bool operator==(const ActivationWord &) const = default;
};

class DotEmitter;

/// Sub-block mins, of the formats that have them (Q4_K, Q5_K): the loop nest
/// multiplies each sub-block's integer min by the activation's sum over the
/// sub-block and adds them up over the block, into the block's integer min
/// sum, whose term the block's contribution then loses.
class SubBlockMinDecode {
public:
  virtual ~SubBlockMinDecode() = default;

  /// Sub-block `j`'s integer min for the R rows (vector<R x i32>).
  virtual mlir::Value getSubBlockMin(mlir::OpBuilder &b, mlir::Location loc,
                                     mlir::Value block, int64_t rows,
                                     int64_t j) const = 0;
  /// The block's contribution `scaled` (WeightDecodeEmitter::scaleBlock's)
  /// minus the min term of the block's integer min sum `minDot` (vector<R x
  /// f32>), in kf::dot's order (the R rows' dmin read from `block`).
  virtual mlir::Value subtractMins(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::Value scaled, mlir::Value minDot,
                                   mlir::Value block, int64_t rows,
                                   mlir::Value xScale) const = 0;
};

/// A decoder's packed-order steps: lanes as the packed K-groups hold them,
/// without the instructions that move them into K order, each met by the
/// activation bytes of its own elements (at any offset, masked where a
/// K-group straddles sub-blocks), at the cost of more dots. It pays where the
/// dots are few, a tile of one column, and the masked words are prepared
/// once per tile (the words getPackedOrderWords lists that are not 4 bytes of
/// one activation block).
class PackedOrderSteps {
public:
  virtual ~PackedOrderSteps() = default;

  /// WeightDecodeEmitter::decodeStep's lanes in the packed order: step
  /// `step` yields whole sub-blocks still, each lane vector with its kOffset
  /// and mask.
  virtual void
  decodePackedOrderStep(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value block, int64_t rows, int64_t step,
                        const DotEmitter &isa,
                        llvm::SmallVectorImpl<DecodedLanes> &out) const = 0;
  /// The activation words the packed-order steps' lanes meet, step by step.
  virtual void
  getPackedOrderWords(llvm::SmallVectorImpl<ActivationWord> &out) const = 0;
};

class WeightDecodeEmitter {
public:
  virtual ~WeightDecodeEmitter() = default;

  virtual LaneRange getLaneRange() const = 0;
  /// Weights per block, the loop nest's K step: 32, FRACTAL64's and VQ3_64's
  /// 64 (two activation blocks), or a K-quant's super-block of 256.
  virtual int64_t getBlockElems() const { return 32; }
  /// Weights per sub-block: the loop nest keeps one exact integer dot per
  /// sub-block (its activation sum, for the offset correction and the min
  /// term, is the packed activation's sum over it), scales it by
  /// getSubBlockScale when there is one and adds it up over the block. The
  /// whole block unless the format has integer sub-block scales.
  virtual int64_t getSubBlockElems() const { return getBlockElems(); }
  /// How many decodeStep calls cover a block.
  virtual int64_t getStepsPerBlock() const = 0;
  /// Sub-block `j`'s integer scale for the R rows (vector<R x i32>), or null
  /// when the format has none (the block's one integer dot goes to
  /// scaleBlock as it is); `isa` provides the target's byte dot.
  virtual mlir::Value getSubBlockScale(mlir::OpBuilder &b, mlir::Location loc,
                                       mlir::Value block, int64_t rows,
                                       int64_t j, const DotEmitter &isa) const {
    return {};
  }
  /// getSubBlockScale's values as fp32 (vector<R x f32>), for a loop nest
  /// that scales sub-block dots in fp32, where the decoder has a way cheaper
  /// than converting the integers (VQ3_64: DotEmitter::emitFloatTableLookup);
  /// null, the default, otherwise.
  virtual mlir::Value getFloatSubBlockScale(mlir::OpBuilder &b,
                                            mlir::Location loc,
                                            mlir::Value block, int64_t rows,
                                            int64_t j,
                                            const DotEmitter &isa) const {
    return {};
  }
  /// The largest |getSubBlockScale| for any block: int16's unless the format
  /// bounds it closer (DotEmitter::emitScaledAdd may use it).
  virtual int64_t getSubBlockScaleBound() const { return 32767; }
  /// The decoder's sub-block mins, for formats with mins (Q4_K's and
  /// Q5_K's); null for the others.
  virtual const SubBlockMinDecode *getSubBlockMins() const { return nullptr; }
  /// Whether each decodeStep yields whole sub-blocks (every lane of a
  /// sub-block in one step), so that the dot emitter can scale a sub-block's
  /// dot as it computes it (ScaledSubBlockDot).
  virtual bool decodesWholeSubBlocks() const { return false; }
  /// The R rows' scales of the packed block at `block` (an !llvm.ptr to the
  /// block, kf::PackedLayout's: the scales, then the lanes), as the exact
  /// fp32 values the reference decoder uses (vector<R x f32>).
  virtual mlir::Value decodeScales(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::Value block, int64_t rows) const = 0;
  /// Appends the lanes of step `step` of the packed block at `block`; `isa`
  /// provides the target's table lookup.
  virtual void decodeStep(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value block, int64_t rows, int64_t step,
                          const DotEmitter &isa,
                          llvm::SmallVectorImpl<DecodedLanes> &out) const = 0;
  /// The decoder's packed-order steps (PackedOrderSteps, VQ3_64's), or null
  /// where it has none.
  virtual const PackedOrderSteps *getPackedOrderSteps() const {
    return nullptr;
  }
  /// A block's contribution to the fp32 accumulator (per activation block it
  /// spans: each half of a 64-weight block meets its own xScale), from its
  /// exact integer dot `dot` (vector<R x f32>), the weights' scales `wScales`
  /// (vector<R x f32>) and the activation's scale `xScale` (splat), in the
  /// order of float operations of the format's reference dot (kf::dot), so that
  /// the kernel rounds as it does.
  virtual mlir::Value scaleBlock(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value dot, mlir::Value wScales,
                                 mlir::Value xScale) const = 0;
  /// Declares in `module` the constants the decode reads (the IQ formats'
  /// grids), before the kernel is built: decodeStep runs while the loop nest
  /// is under construction and cannot reach the module from its builder.
  virtual void declareConstants(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::ModuleOp module) const {}
  /// The fp32 sum over all of K (vector<R x f32>, the blocks' contributions
  /// added in K order) as kf::dot returns it: the sum itself, or IQ2_XXS's
  /// 0.125 * sum (its reference applies the factor once, after the blocks).
  virtual mlir::Value finishSum(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value sum) const {
    return sum;
  }
};

/// The decoder of a Q8_0, Q4_0, MXFP4, Q4_K, Q5_K, Q6_K, IQ2_XXS, IQ1_S,
/// IQ1_M, FRACTAL64 or VQ3_64 layout, whose encoding its lanes keep, for
/// `target` (whose fp16 conversions the fp16 scales use) and the dot emitter
/// `isa` (whose lookups decide how IQ2_XXS steps); null for any other format
/// (verifyMatmulKernel refuses them first).
std::unique_ptr<WeightDecodeEmitter>
createWeightDecodeEmitter(const kf::PackedLayout &layout,
                          const target::TargetInfo &target,
                          const DotEmitter &isa);

class ScaledSubBlockDot;
class CodeBookLookup;

/// How an ISA best scales sub-block dots by their integer scales
/// (DotEmitter::getSubBlockScaleCosts), which the loop nest weighs against
/// the dots' bounds.
struct SubBlockScaleCosts {
  /// The largest dotBound for which emitScaledAdd costs one instruction and
  /// no multiply: the loop nest then splits a sub-block's dot into parts
  /// within it, each scaled on its own, where that saves the multiply (the
  /// lanes carry no offset). 0 when a dot is best summed whole and
  /// multiplied once.
  int64_t cheapScaledAddBound = 0;
  /// Whether sub-block dots best meet their integer scales in fp32 where that
  /// is exact (the loop nest decides by the bounds): the dot's int32 chain
  /// read as a float and one FMA with the row's float scale, shared by the
  /// columns, instead of emitScaledAdd.
  bool prefersFloat = false;
};

class DotEmitter {
public:
  virtual ~DotEmitter() = default;

  /// What the activation's quant sum is multiplied by and subtracted from the
  /// int32 accumulator so that it holds the signed dot sum_k w_k x_k: the
  /// lanes' offset, or 0 when the emitter restores signed weights itself.
  virtual int64_t getCorrectionOffset(LaneRange range) const = 0;
  /// Called once per decoded lane vector; the result is shared by every
  /// column of the tile.
  virtual mlir::Value prepareLanes(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::Value lanes, LaneRange range) const {
    return lanes;
  }
  /// `acc` (vector<R x i32>) plus, for each row r and each i,
  /// sum_{t < 4} lanes[i][4r + t] * acts[i][4r + t].
  virtual mlir::Value emitDot(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value acc,
                              llvm::ArrayRef<mlir::Value> lanes,
                              llvm::ArrayRef<mlir::Value> acts,
                              LaneRange range) const = 0;
  /// `acc` plus scale * dot (vector<R x i32> each), where |dot| <= dotBound
  /// and |scale| <= scaleBound (at most int16's) for any input: a sub-block's
  /// dot meeting its integer scale. The default multiplies and adds.
  virtual mlir::Value emitScaledAdd(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value acc, mlir::Value dot,
                                    mlir::Value scale, int64_t dotBound,
                                    int64_t scaleBound) const;
  /// How the ISA best scales sub-block dots (the defaults: summed whole and
  /// multiplied once by emitScaledAdd).
  virtual SubBlockScaleCosts getSubBlockScaleCosts() const { return {}; }
  /// The row operand emitSumPairTimes takes for the integer factors `factor`
  /// (vector<R x i32>, each fitting int16: a K-quant's sub-block mins);
  /// computed once per row group and block and shared by the tile's columns.
  virtual mlir::Value prepareSumFactor(mlir::OpBuilder &b, mlir::Location loc,
                                       mlir::Value factor) const {
    return factor;
  }
  /// `acc` (vector<R x i32>) plus, for each row r, factor[r] * (lo + hi),
  /// where lo and hi are the two signed int16 at `sums` (an !llvm.ptr: one
  /// column's activation sums over the two halves of a sub-block) and
  /// `factor` is prepareSumFactor's; the caller bounds the sum to int32. The
  /// default adds lo and hi as scalars and multiplies the broadcast sum.
  virtual mlir::Value emitSumPairTimes(mlir::OpBuilder &b, mlir::Location loc,
                                       mlir::Value acc, mlir::Value factor,
                                       mlir::Value sums) const;
  /// `acc` (vector<R x i32>) plus, in each i32 lane, lo(x) * lo(y) + hi(x) *
  /// hi(y) of the lane's two signed int16 halves (x, y: vector<R x i32>; the
  /// caller bounds the sum to int32). The default takes the halves apart
  /// with shifts and multiplies each; AVX-512: one vpdpwssd, AVX2: vpmaddwd
  /// and an add.
  virtual mlir::Value emitPairDot(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value acc, mlir::Value x,
                                  mlir::Value y) const;
  /// The ISA's scaled sub-block dots, when its dot instruction takes a
  /// sub-block's integer scale for free (AVX2: vpmaddwd's multiplier); null
  /// when a dot is best scaled after it is summed (emitScaledAdd).
  virtual const ScaledSubBlockDot *getScaledSubBlockDot() const {
    return nullptr;
  }
  /// LLVM tuning features the kernel's function adds to the target's ("+a,+b"
  /// or empty): code generation choices that suit the dot loops better than
  /// the CPU's defaults.
  virtual llvm::StringRef getTuningFeatures() const { return {}; }
  /// table[indices[i]] for each byte of `indices` (a vector<4R x i8> whose
  /// bytes are all below table.size(), at most 256 entries). The portable
  /// default selects among the entries; an ISA overrides it with its byte
  /// shuffles for the table sizes they cover (x86: 64, by one vpshufb per 16
  /// bytes or, on AVX-512 with VBMI, one vpermb; NEON: 64, by tbl1..tbl4).
  virtual mlir::Value emitTableLookup(mlir::OpBuilder &b, mlir::Location loc,
                                      mlir::Value indices,
                                      llvm::ArrayRef<int8_t> table) const;
  /// table[i mod table.size()] for each byte i of `indices`, a table of 64 or
  /// 128 entries looked up by the indices' low 6 or 7 bits whatever their
  /// high bits, in one instruction; null where the ISA has none for the
  /// vector (the default: a decoder masks the indices and calls
  /// emitTableLookup). AVX-512 with VBMI, 64 bytes: vpermb, vpermi2b.
  virtual mlir::Value
  emitLowBitsTableLookup(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value indices,
                         llvm::ArrayRef<int8_t> table) const {
    return nullptr;
  }
  /// table[i mod 16] (vector<R x f32>) for each i32 lane i of `indices`
  /// (vector<R x i32>), looked up by the lanes' low 4 bits whatever their high
  /// bits, in one instruction; null where the ISA has none for the vector
  /// (the default). AVX-512, 16 lanes: vpermps.
  virtual mlir::Value emitFloatTableLookup(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           mlir::Value indices,
                                           llvm::ArrayRef<float> table) const {
    return nullptr;
  }
  /// Byte `index` (0..3) of each i32 lane of `words` (vector<R x i32>),
  /// zero-extended. The default shifts and masks; AVX-512: one vpshufb.
  virtual mlir::Value emitWordByte(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::Value words, int64_t index) const;
  /// Each byte of `bytes` (a vector of i8) with its bit i taken from bit
  /// from[i] of the same byte, or 0 where from[i] < 0, in one instruction;
  /// null where the ISA has none (the default: a decoder shifts and masks).
  /// AVX-512 with GFNI: vgf2p8affineqb, whose bit matrix moves and masks the
  /// bits at the cost of one byte shift.
  virtual mlir::Value emitByteBitMap(mlir::OpBuilder &b, mlir::Location loc,
                                     mlir::Value bytes,
                                     llvm::ArrayRef<int8_t> from) const {
    return nullptr;
  }
  /// The ISA's code book lookup, or null (the default) when it has none
  /// cheaper than gathering the grid's 8-byte entries (AVX-512 with VBMI).
  virtual const CodeBookLookup *getCodeBookLookup() const { return nullptr; }
};

/// A lookup of IQ2_XXS's code book (DotEmitter::getCodeBookLookup).
class CodeBookLookup {
public:
  virtual ~CodeBookLookup() = default;

  /// How many indices emitCodeBookLanes looks up at once (AVX-512: 64).
  virtual int64_t getCodeBookIndices() const = 0;
  /// Lanes from a book of 256 entries of eight 2-bit codes (`book`, code t in
  /// bits 2t .. 2t + 1: IQ2_XXS's grid as magnitude indices) for
  /// getCodeBookIndices() / R slots of 8 weights of the R rows: `indices` and
  /// `signs` (vector<getCodeBookIndices() x i8>, slot s's row r in byte sR +
  /// r) give each slot's and row's entry and a sign bit per weight (bit t).
  /// Appends per slot its two K-groups of lanes (vector<4R x i8>, weights 0..3
  /// then 4..7), lane 4r + t of K-group h being values[c], or negatedFrom -
  /// values[c] where its sign bit is set, c the code of weight 4h + t of the
  /// row's entry. The 4 values are affine over GF(2) in c (values[3] =
  /// values[0] ^ values[1] ^ values[2]), for GFNI's vgf2p8affineqb.
  virtual void
  emitCodeBookLanes(mlir::OpBuilder &b, mlir::Location loc, mlir::Value indices,
                    mlir::Value signs, llvm::ArrayRef<uint16_t> book,
                    llvm::ArrayRef<int8_t> values, int64_t negatedFrom,
                    llvm::SmallVectorImpl<mlir::Value> &out) const = 0;
  /// Whether emitCodeBookMaskedLanes reads a layout stored for it (AVX-512
  /// with VBMI, GFNI and BMI2), which makes the lanes with neither an index
  /// permute nor a sign mask to build.
  virtual bool hasCodeBookMaskedLanes() const = 0;
  /// emitCodeBookLanes's lanes for R = 16 rows and 4 slots from IQ2_XXS's
  /// code book layout (kf/runtime/packed_layout.h): `indices` in row-pair
  /// order (qword q holds rows 2q, 2q + 1 of every slot, slot s's at bytes
  /// 2s, 2s + 1) and, per slot s and K-group h, masks[2s + h], an i64 whose
  /// bit 4r + t is lane 4r + t's sign.
  virtual void emitCodeBookMaskedLanes(
      mlir::OpBuilder &b, mlir::Location loc, mlir::Value indices,
      llvm::ArrayRef<mlir::Value> masks, llvm::ArrayRef<uint16_t> book,
      llvm::ArrayRef<int8_t> values, int64_t negatedFrom,
      llvm::SmallVectorImpl<mlir::Value> &out) const = 0;
};

/// Dots of whole sub-blocks scaled as they are computed, for decoders of whole
/// sub-blocks (WeightDecodeEmitter::decodesWholeSubBlocks): the loop nest adds
/// each sub-block's scaled dot, with no correction in it, to its integer sum
/// and the corrections -offset * s_k * asum_k two sub-blocks at a time, as
/// one dot of int16 pairs (DotEmitter::emitPairDot).
class ScaledSubBlockDot {
public:
  virtual ~ScaledSubBlockDot() = default;

  /// The row operand emitScaledDot takes for the integer scales `scale`
  /// (vector<R x i32>, each fitting int16); computed once per row group and
  /// block and shared by the tile's columns.
  virtual mlir::Value prepareScale(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::Value scale) const = 0;
  /// `acc` (vector<R x i32>) plus, for each row r, scale[r] times the dot
  /// DotEmitter::emitDot would add: `lanes` and `acts` are one whole
  /// sub-block, `scale` its prepareScale operand.
  virtual mlir::Value emitScaledDot(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value acc,
                                    llvm::ArrayRef<mlir::Value> lanes,
                                    llvm::ArrayRef<mlir::Value> acts,
                                    mlir::Value scale,
                                    LaneRange range) const = 0;
};

/// The dot emitter of the int8 ISA `isa` (null for the float ISAs) for
/// `target`, which can run it: the emitter uses an optional instruction only
/// when the target has it (AVX-512's vpermb, AVX512_VBMI).
std::unique_ptr<DotEmitter> createDotEmitter(KernelIsa isa,
                                             const target::TargetInfo &target);

/// The float family's (BF16, F32) per-ISA part. There is no decoding: a
/// K-group of the packed weights is one vector<R x i32> load, each row's 4
/// bytes holding 2 bf16 (element 2g in the low half, 2g + 1 in the high) or 1
/// f32, and a column's activation word the same 4 bytes of the column; the
/// products go into fp32 accumulators (vector<R x f32>).
class FloatDotEmitter {
public:
  virtual ~FloatDotEmitter() = default;

  /// Called once per K-group's weights; the result is shared by every column
  /// of the tile.
  virtual llvm::SmallVector<mlir::Value, 2>
  prepareWeights(mlir::OpBuilder &b, mlir::Location loc,
                 mlir::Value lanes) const = 0;
  /// The activation word at `ptr` broadcast to the R rows, as emitDot takes
  /// it; once per column and K-group.
  virtual llvm::SmallVector<mlir::Value, 2>
  loadActivation(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ptr,
                 int64_t rows) const = 0;
  /// `acc` plus the K-group's products for every row, each product exact
  /// (bf16) or rounded once with its addition (an FMA), except where the ISA
  /// says otherwise.
  virtual mlir::Value emitDot(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value acc,
                              llvm::ArrayRef<mlir::Value> weights,
                              llvm::ArrayRef<mlir::Value> activation) const = 0;
};

/// The float dot emitter of `isa` for weights of `format` (BF16 or F32; one
/// isaSupportsFormat accepts).
std::unique_ptr<FloatDotEmitter> createFloatDotEmitter(KernelIsa isa,
                                                       kf::Format format);

//===----------------------------------------------------------------------===//
// Building blocks shared by the emitters
//===----------------------------------------------------------------------===//

/// `ptr` + `bytes`, an !llvm.ptr.
mlir::Value emitByteOffset(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value ptr, int64_t bytes);
mlir::Value emitByteOffset(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value ptr, mlir::Value bytes);
/// An unaligned load of `type` at `ptr` + `bytes`.
mlir::Value emitLoad(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                     mlir::Value ptr, int64_t bytes);
/// An unaligned load of weight bytes, marked invariant: no kernel writes
/// its weights, so LLVM may reuse a value loaded in an earlier decode step
/// across the ordering points that keep the prefetch shares in place
/// (`WeightPrefetch::keepOrder`), which otherwise forced each step to load
/// its K-groups again and to repeat everything computed from them
/// (docs/codegen-measurements.md, "Invariant weight loads").
/// Never for the decode-once scratch or fused-quantize columns, which the
/// kernel itself writes.
mlir::Value emitWeightLoad(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, mlir::Value ptr, int64_t bytes);
/// A splat of the integer constant `value` to the integer vector `type`.
mlir::Value emitSplat(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::VectorType type, int64_t value);
/// Int16 pairs (vector<R x i32>): in each i32 lane, `low`'s lane truncated
/// to int16 in the low half and `high`'s in the high half (vector<R x i32>
/// each), the operand form of the int16 pair dots (vpmaddwd, vpdpwssd).
mlir::Value emitInt16Pairs(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value low, mlir::Value high);
/// Bits from .. from + count - 1 of each byte of `bytes` (a vector of i8) at
/// bits to .. to + count - 1, the byte's other bits clear: a mask where from
/// == to, else the ISA's byte bit map where it has one (emitByteBitMap), else
/// a shift and a mask.
mlir::Value emitBitsAt(mlir::OpBuilder &b, mlir::Location loc,
                       const DotEmitter &isa, mlir::Value bytes, int64_t from,
                       int64_t count, int64_t to);
/// DotEmitter::emitTableLookup's portable form: the table's entries selected
/// by the index bits, one bit per level (size - 1 selects, no intrinsic).
mlir::Value emitSelectTableLookup(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value indices,
                                  llvm::ArrayRef<int8_t> table);
/// Whether the target converts between fp16 and fp32 in hardware (x86 F16C,
/// every AArch64). Elsewhere LLVM lowers the conversions to library calls,
/// which a kernel must not depend on, so they are done in integer arithmetic.
bool hasHardwareHalf(const target::TargetInfo &target);
/// fp16 bits (vector<N x i16>) to fp32 (vector<N x f32>), exactly as
/// kf::fp16ToFp32 (NaN payloads kept in the integer path).
mlir::Value emitHalfToFloat(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value halves, bool hardwareHalf);
/// fp32 (a scalar f32) rounded to the nearest fp16 value, ties to even, and
/// returned as fp32: kf::fp16ToFp32(kf::fp32ToFp16(x)) for every finite
/// x >= 0 (an activation block's amax / 127).
mlir::Value emitRoundToHalf(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value x, bool hardwareHalf);
/// fp32 values (a vector<N x f32>) rounded to the nearest bf16 value and
/// returned as fp32: kf::bf16ToFp32(kf::fp32ToBf16(x)) for every x (ties
/// to even, NaNs kept and made quiet), in integer arithmetic.
mlir::Value emitRoundToBf16(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value floats);
/// Transposes the n × n values `tile` (n vectors of n, n a power of two) in
/// place: one stage per bit of the index, each swapping that bit of the row
/// index with the same bit of the column index by two-source shuffles of
/// row pairs.
void emitTransposeTile(mlir::OpBuilder &b, mlir::Location loc,
                       llvm::MutableArrayRef<mlir::Value> tile);
/// e^x for each lane of `x` (a vector of f64) in fp64 arithmetic, for the
/// op kernels, which call nothing (no libm): fdlibm's algorithm, below one
/// fp64 ulp, so within ~1.5 fp64 ulps of glibc's exp (below 0.52). The
/// argument is clamped to [-708, 708]: below, the result is e^-708 (~3e-308)
/// rather than a smaller or subnormal value; above, +inf; a NaN stays one.
mlir::Value emitExp(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// log(1 + x) for each lane of `x` (a vector of f64) in fp64 arithmetic, for
/// the op kernels (no libm): fdlibm's log1p, below one fp64 ulp, so within
/// ~2 fp64 ulps of glibc's. +inf and NaN stay as they are, -1 gives -inf and
/// anything below it NaN.
mlir::Value emitLog1p(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// {sin x, cos x} for each lane of `x` (a vector of f64) in fp64 arithmetic,
/// for the op kernels (no libm): fdlibm's algorithm, below one fp64 ulp for
/// |x| < 2^20 · π/2 (≈ 1.65e6), the range of its argument reduction; beyond,
/// the reduction loses bits.
std::pair<mlir::Value, mlir::Value>
emitSinCos(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// Declares the constant table `name` of i64 `entries` in `module` (internal
/// to it), e.g. an IQ grid, unless a kernel built before did.
void declareConstantTable(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::ModuleOp module, llvm::StringRef name,
                          llvm::ArrayRef<uint64_t> entries);
/// The address of the constant table `name` declareConstantTable declared.
mlir::Value emitConstantTableAddress(mlir::OpBuilder &b, mlir::Location loc,
                                     llvm::StringRef name);
/// table[indices[r]] for each of the R indices (vector<R x i32>, all inside
/// the table): vector<R x i64>, by LLVM's masked gather, which LLVM lowers
/// as its cost model for the target decides (vpgatherdq on znver5, scalar
/// loads on x86-64-v3 and AArch64).
mlir::Value emitTableGather(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value table, mlir::Value indices);
/// An LLVM intrinsic call (llvm.call_intrinsic) returning `resultType`.
mlir::Value emitIntrinsic(mlir::OpBuilder &b, mlir::Location loc,
                          llvm::StringRef name, mlir::Type resultType,
                          mlir::ValueRange args);

} // namespace kf::codegen

#endif // KF_CODEGEN_EMITTERS_H
