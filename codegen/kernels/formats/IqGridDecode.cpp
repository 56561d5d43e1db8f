//===- IqGridDecode.cpp - Decode emitters of the IQ grid formats ----------===//
//
// The IQ grid formats hold per 8 weights of a row an index into a grid of
// 8-byte entries. A decode step is one grid slot (8 weights) of the R rows:
// their R entries gathered from the grid, a constant table in the kernel's
// module (2 KiB for IQ2_XXS, read from L1), made into lanes and split into
// the slot's two K-groups. The table holds lane bytes rather than the grid's
// values, so that the lanes need no arithmetic beyond the signs.
//
// IQ2_XXS (kf/runtime/packed_layout.h): grid bytes are magnitudes |w| in
// {8, 25, 43} and a sign mask per slot negates some; the table holds 43 +
// |w|, the negation is 86 - (43 + |w|) = 43 - |w|, so the lanes hold w + 43
// (0..86, 7 bits, offset 43). The eight sign masks of 8 rows are the 64-bit
// lane mask of their 64 lanes (one kmov and a masked subtract on AVX-512).
// Each sub-block of 32 weights has the integer scale 2 ls + 1, and kf::dot's
// float work is (d * d_x) * isum per super-block, then 0.125 * sum once
// after the last (finishSum), so the kernel rounds exactly as it does.
//
//===----------------------------------------------------------------------===//

#include "formats/DecodeEmitters.h"

#include "quant/grids.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <array>

using namespace mlir;

namespace kf::codegen {
namespace {

/// IQ2_XXS's lane offset: its largest magnitude.
constexpr int64_t kIq2xxsOffset = 43;

/// The module's symbol of IQ2_XXS's lane table.
constexpr llvm::StringLiteral kIq2xxsTable = "kf_iq2_xxs_lanes";

/// iq2xxs_grid with kIq2xxsOffset added to every byte.
std::array<uint64_t, 256> iq2xxsLaneTable() {
  std::array<uint64_t, 256> table;
  for (auto [entry, grid] : llvm::zip_equal(table, quant::grids::iq2xxs_grid)) {
    entry = 0;
    for (int j = 0; j < 8; ++j)
      entry |= ((grid >> 8 * j & 0xff) + kIq2xxsOffset) << 8 * j;
  }
  return table;
}

/// The R rows' 8-byte entries (vector<8R x i8>, row r's in bytes 8r .. 8r + 7)
/// split into the slot's two K-groups, elements kOffset .. + 3 and + 4 .. + 7.
void splitSlot(OpBuilder &b, Location loc, Value entries, int64_t rows,
               int64_t kOffset, llvm::SmallVectorImpl<DecodedLanes> &out) {
  for (int64_t half = 0; half < 2; ++half) {
    SmallVector<int64_t> mask;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t t = 0; t < 4; ++t)
        mask.push_back(8 * r + 4 * half + t);
    out.push_back({vector::ShuffleOp::create(b, loc, entries, entries, mask),
                   kOffset + 4 * half});
  }
}

class Iq2XxsDecode : public WeightDecodeEmitter {
public:
  explicit Iq2XxsDecode(bool hardwareHalf) : hardwareHalf(hardwareHalf) {}

  LaneRange getLaneRange() const override { return {7, kIq2xxsOffset}; }
  int64_t getBlockElems() const override { return 256; }
  int64_t getSubBlockElems() const override { return 32; }
  int64_t getStepsPerBlock() const override { return 32; }

  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    Value halves = emitLoad(b, loc, VectorType::get({rows}, b.getI16Type()),
                            block, iq2_xxs_d_offset(0));
    return emitHalfToFloat(b, loc, halves, hardwareHalf);
  }

  // 2 ls + 1, ls the 4-bit scale of group j (nibble j % 2 of byte j / 2).
  Value getSubBlockScale(OpBuilder &b, Location loc, Value block, int64_t rows,
                         int64_t j) const override {
    auto bytes = VectorType::get({rows}, b.getI8Type());
    Value packed = emitLoad(b, loc, bytes, block,
                            iq2_xxs_scale_offset(layout(rows), j / 2, 0));
    Value ls = j % 2 == 0 ? arith::AndIOp::create(b, loc, packed,
                                                  emitSplat(b, loc, bytes, 15))
                                .getResult()
                          : arith::ShRUIOp::create(b, loc, packed,
                                                   emitSplat(b, loc, bytes, 4))
                                .getResult();
    auto words = VectorType::get({rows}, b.getI32Type());
    Value wide = arith::ExtUIOp::create(b, loc, words, ls);
    Value twice =
        arith::ShLIOp::create(b, loc, wide, emitSplat(b, loc, words, 1));
    return arith::OrIOp::create(b, loc, twice, emitSplat(b, loc, words, 1));
  }

  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    kf::PackedLayout packed = layout(rows);
    auto rowBytes = VectorType::get({rows}, b.getI8Type());
    Value indices =
        arith::ExtUIOp::create(b, loc, VectorType::get({rows}, b.getI32Type()),
                               emitLoad(b, loc, rowBytes, block,
                                        iq2_xxs_index_offset(packed, step, 0)));
    Value table = emitConstantTableAddress(b, loc, kIq2xxsTable);
    auto bytes = VectorType::get({8 * rows}, b.getI8Type());
    Value plus = vector::BitCastOp::create(
        b, loc, bytes, emitTableGather(b, loc, table, indices));
    Value minus = arith::SubIOp::create(
        b, loc, emitSplat(b, loc, bytes, 2 * kIq2xxsOffset), plus);
    Value signs = emitLoad(b, loc, rowBytes, block,
                           iq2_xxs_signs_offset(packed, step, 0));
    Value negate = vector::BitCastOp::create(
        b, loc, VectorType::get({8 * rows}, b.getI1Type()), signs);
    Value entries = arith::SelectOp::create(b, loc, negate, minus, plus);
    splitSlot(b, loc, entries, rows, 8 * step, out);
  }

  void declareConstants(OpBuilder &b, Location loc,
                        ModuleOp module) const override {
    static const std::array<uint64_t, 256> lanes = iq2xxsLaneTable();
    declareConstantTable(b, loc, module, kIq2xxsTable, lanes);
  }

  // kf::dot's IQ2_XXS sum: (d * d_x) * isum per super-block ...
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    Value scale = arith::MulFOp::create(b, loc, wScales, xScale);
    return arith::MulFOp::create(b, loc, scale, dot);
  }

  // ... and 0.125 * sum after the last.
  Value finishSum(OpBuilder &b, Location loc, Value sum) const override {
    auto type = cast<VectorType>(sum.getType());
    Value eighth = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(0.125f)));
    return arith::MulFOp::create(b, loc, eighth, sum);
  }

private:
  static kf::PackedLayout layout(int64_t rows) {
    return {kf::Format::IQ2_XXS, static_cast<int>(rows)};
  }

  bool hardwareHalf;
};

} // namespace

std::unique_ptr<WeightDecodeEmitter>
createIqGridDecodeEmitter(kf::Format format, bool hardwareHalf) {
  assert(format == kf::Format::IQ2_XXS && "an IQ grid format");
  return std::make_unique<Iq2XxsDecode>(hardwareHalf);
}

} // namespace kf::codegen
