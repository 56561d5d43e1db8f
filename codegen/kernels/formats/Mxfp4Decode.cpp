//===- Mxfp4Decode.cpp - The decode emitter of MXFP4 ----------------------===//
//
// The packed layout of kf/runtime/packed_layout.h: a block is R E8M0 bytes,
// then Q4_0's K-groups of nibble pairs, which are E2M1 codes here. The codes
// become lanes by a table lookup (the ISA's: vpshufb on x86), of their
// doubled values kMxfp4Values plus 12, so that the lanes are unsigned
// (0 .. 24, 5 bits) like Q4_0's; the offset comes back out through the
// activation's quant sum. The scale 2^(e - 128) is built from its fp32 bits
// with integer arithmetic, exactly, subnormals included.
//
//===----------------------------------------------------------------------===//

#include "formats/DecodeEmitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <array>

using namespace mlir;

namespace kf::codegen {
namespace {

constexpr int64_t kLaneOffset = -*std::min_element(std::begin(kf::kMxfp4Values),
                                                   std::end(kf::kMxfp4Values));

constexpr std::array<int8_t, 16> makeLaneTable() {
  std::array<int8_t, 16> table{};
  for (size_t c = 0; c < table.size(); ++c)
    table[c] = static_cast<int8_t>(kf::kMxfp4Values[c] + kLaneOffset);
  return table;
}

constexpr std::array<int8_t, 16> kLaneTable = makeLaneTable();
static_assert(*std::max_element(kLaneTable.begin(), kLaneTable.end()) < 32,
              "MXFP4 lanes fit 5 bits");

class Mxfp4Decode : public WeightDecodeEmitter {
public:
  LaneRange getLaneRange() const override { return {5, kLaneOffset}; }
  int64_t getStepsPerBlock() const override { return 4; }

  // kf::mxfp4ScaleBits: (e - 1) << 23 for e >= 2, else (e + 1) << 21.
  Value decodeScales(OpBuilder &b, Location loc, Value block,
                     int64_t rows) const override {
    auto i32Type = VectorType::get({rows}, b.getI32Type());
    auto splat = [&](int64_t v) { return emitSplat(b, loc, i32Type, v); };
    Value bytes = emitWeightLoad(b, loc, VectorType::get({rows}, b.getI8Type()),
                                 block, 0);
    Value e = arith::ExtUIOp::create(b, loc, i32Type, bytes);
    Value normal = arith::ShLIOp::create(
        b, loc, arith::SubIOp::create(b, loc, e, splat(1)), splat(23));
    Value subnormal = arith::ShLIOp::create(
        b, loc, arith::AddIOp::create(b, loc, e, splat(1)), splat(21));
    Value isSubnormal =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, e, splat(2));
    Value bits =
        arith::SelectOp::create(b, loc, isSubnormal, subnormal, normal);
    return arith::BitcastOp::create(
        b, loc, VectorType::get({rows}, b.getF32Type()), bits);
  }

  // One load feeds two K-groups, as Q4_0's; each nibble vector is looked up.
  void decodeStep(OpBuilder &b, Location loc, Value block, int64_t rows,
                  int64_t step, const DotEmitter &isa,
                  llvm::SmallVectorImpl<DecodedLanes> &out) const override {
    auto [low, high] = splitNibbles(
        b, loc, loadKGroup(b, loc, kf::Format::MXFP4, block, rows, step));
    out.push_back({isa.emitTableLookup(b, loc, low, kLaneTable), 4 * step});
    out.push_back(
        {isa.emitTableLookup(b, loc, high, kLaneTable), 16 + 4 * step});
  }

  // kf::dot's MXFP4: d_x * d_w * sumi, left to right.
  Value scaleBlock(OpBuilder &b, Location loc, Value dot, Value wScales,
                   Value xScale) const override {
    Value scale = arith::MulFOp::create(b, loc, xScale, wScales);
    return arith::MulFOp::create(b, loc, scale, dot);
  }
};

} // namespace

std::unique_ptr<WeightDecodeEmitter> createMxfp4DecodeEmitter() {
  return std::make_unique<Mxfp4Decode>();
}

} // namespace kf::codegen
