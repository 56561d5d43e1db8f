//===- FloatBlockBody.cpp - The float family's K block --------------------===//
//
// One K block of a column tile's row group for BF16 and F32 weights: 16
// K-groups of 4 bytes per row (2 bf16 or 1 f32), each one vector load shared
// by every column of the tile, and per column one activation word broadcast
// to the R rows and multiplied into an fp32 accumulator by the ISA's float
// dot emitter (vdpbf16ps, bfdot, or the bf16 widened and an FMA):
//
//   for each K-group g of the block:
//     w = weights[g][0 .. R)
//     for each column j: acc[j][g % chains] += w * x[j][g]
//
// An FMA waits for the previous one on its accumulator (4 cycles on current
// x86 and Arm cores, with 2 FMA pipes), so a column's sum is split over
// chains until about 8 products are in flight; the loop nest adds a column's
// chains pairwise after its K loop. The sum is reordered against kf::dot's
// (which adds the products in double, in element order), so the kernels agree
// with it within a bound, not bit for bit (docs/codegen.md, "Float
// kernels").
//
//===----------------------------------------------------------------------===//

#include "MatmulLoopNest.h"

#include "kf/Codegen/Emitters.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <algorithm>

using namespace mlir;

namespace kf::codegen {
namespace {

/// Products in flight per tile: FMA latency (4) times FMA pipes (2).
constexpr int64_t kProductsInFlight = 8;

class FloatBlockBody : public MatmulBlockBody {
public:
  FloatBlockBody(const MatmulKernelSpec &spec,
                 std::unique_ptr<FloatDotEmitter> dot)
      : spec(spec), dot(std::move(dot)), layout(spec.getWeightLayout()),
        kGroups(kf::kFloatBlockRowBytes / 4) {}

  int64_t getBlockElems() const override {
    return kf::packedBlockElems(spec.format);
  }
  int64_t getBlockBytes() const override {
    return kf::packedBlockBytes(layout);
  }
  int64_t getAccumulators(int64_t width) const override {
    return std::clamp<int64_t>(kProductsInFlight / width, 1, kGroups);
  }

  void emitBlock(OpBuilder &b, Location loc, const BlockOperands &block,
                 SmallVectorImpl<Value> &accs) override {
    const int64_t width = block.activations.size();
    const int64_t chains = getAccumulators(width);
    auto lanesType = VectorType::get({spec.rows}, b.getI32Type());
    for (int64_t g = 0; g < kGroups; ++g) {
      if (block.prefetch)
        block.prefetch(g, kGroups);
      Value lanes = emitWeightLoad(b, loc, lanesType, block.weights,
                                   kf::packedKgroupOffset(layout, g));
      SmallVector<Value, 2> weights = dot->prepareWeights(b, loc, lanes);
      for (auto [j, xBlock] : llvm::enumerate(block.activations)) {
        SmallVector<Value, 2> x = dot->loadActivation(
            b, loc, emitByteOffset(b, loc, xBlock, 4 * g), spec.rows);
        Value &acc = accs[j * chains + g % chains];
        acc = dot->emitDot(b, loc, acc, weights, x);
      }
    }
  }

private:
  const MatmulKernelSpec &spec;
  std::unique_ptr<FloatDotEmitter> dot;
  kf::PackedLayout layout;
  int64_t kGroups;
};

} // namespace

std::unique_ptr<MatmulBlockBody>
createFloatBlockBody(OpBuilder &, Location, const MatmulKernelSpec &spec) {
  return std::make_unique<FloatBlockBody>(
      spec, createFloatDotEmitter(spec.isa, spec.format));
}

} // namespace kf::codegen
