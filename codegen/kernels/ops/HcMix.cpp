//===- HcMix.cpp - What the hyper-connection kernels share ----------------===//
//
// The golden accumulates its dot products and sums one term at a time, from
// 0, in fp64. The kernels keep that order, and every product of two floats
// is exact in fp64 (so fused or not, each term rounds once, as the
// golden's): each sum is the golden's to the bit, and what parallelism there
// is comes from independent sums in flight together.
//
// The mixes are the kernels' bulk: (2 + mult)·mult sums of mult·D terms per
// token. A range of tokens goes in blocks of as many tokens as the target's
// vectors have fp64 lanes, each lane one token's sums: each row of fn and
// the squares get a vector accumulator, chained value by value, so that a
// block has a chain per row in flight (passes of them where the register
// file holds fewer). Chunk by chunk, fn's values are widened onto the stack,
// whence each is broadcast, and the block's stream values are transposed
// (tokens into lanes) and widened beside them. A block short of tokens
// repeats its last one in the spare lanes. A lone token (a decode's, or the
// last of a range) puts fn's rows in the lanes instead, a tile of them
// transposed at a time, each lane one row's sum. A sum over streams is an
// elementwise chain.
//
//===----------------------------------------------------------------------===//

#include "HcMix.h"

#include "kf/Codegen/Emitters.h"
#include "kf/Codegen/HcPreKernel.h"
#include "kf/Codegen/StepKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <utility>

using namespace mlir;

namespace kf::codegen::hc {

namespace {

/// Rows of fn a lone token's pass reads beside its streams. fn's rows are
/// mult · D floats (64 KiB on the model), a multiple of 4 KiB apart, so the
/// lines a pass reads together share a set of L1 and of L2; more rows than
/// those sets have ways evict each other's prefetched lines before use.
constexpr int64_t kPassRows = 8;

/// The most stream values per token a block widens at a time (getChunk),
/// and the most bytes of scratch they and fn's beside them may take: L1's
/// size on most x86 cores, so that they stay in L1 while the sums read them.
constexpr int64_t kMaxChunk = 128;
constexpr int64_t kChunkBytes = 32 << 10;

Value f64Splat(OpBuilder &b, Location loc, VectorType type, double v) {
  return arith::ConstantOp::create(
      b, loc, type, DenseElementsAttr::get(type, b.getF64FloatAttr(v)));
}

/// `type` (a float or a vector of floats) with every lane `v`.
Value emitConstant(OpBuilder &b, Location loc, Type type, double v) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, vector,
        DenseElementsAttr::get(vector,
                               b.getFloatAttr(vector.getElementType(), v)));
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
}

/// `type`'s shape (a scalar's or a vector's) with `element`s.
Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

/// The mixes fp32(dot_i) · r of the `dots` (f64, or vectors of f64 lane by
/// lane), r the inverse RMS of `width` values whose squares sum to
/// `sumOfSquares`, as the golden's inverseRms computes it: mean and var in
/// fp32, the inverse root in fp64.
SmallVector<Value> emitScaledMixes(OpBuilder &b, Location loc,
                                   ArrayRef<Value> dots, Value sumOfSquares,
                                   int64_t width, float normEps) {
  Type doubles = sumOfSquares.getType();
  Type floats = withElement(doubles, b.getF32Type());
  Value mean = arith::TruncFOp::create(
      b, loc, floats,
      arith::DivFOp::create(
          b, loc, sumOfSquares,
          emitConstant(b, loc, doubles, static_cast<double>(width))));
  Value var = arith::AddFOp::create(b, loc, mean,
                                    emitConstant(b, loc, floats, normEps));
  Value r = arith::TruncFOp::create(
      b, loc, floats,
      arith::DivFOp::create(
          b, loc, emitConstant(b, loc, doubles, 1.0),
          LLVM::SqrtOp::create(b, loc,
                               arith::ExtFOp::create(b, loc, doubles, var))));
  SmallVector<Value> m;
  for (Value dot : dots)
    m.push_back(arith::MulFOp::create(
        b, loc, arith::TruncFOp::create(b, loc, floats, dot), r));
  return m;
}

/// The fp64 lanes of the target's vectors (AVX-512's 8, AVX2's 4, else
/// SSE's or NEON's 2): the tokens of a block, the rows of a lone token's
/// tile.
int64_t getF64Lanes(const target::TargetInfo &target) {
  if (target.arch == target::Arch::X86_64 &&
      target.has(target::Feature::AVX512F))
    return 8;
  if (target.arch == target::Arch::X86_64 && target.has(target::Feature::AVX2))
    return 4;
  return 2;
}

/// Accumulators a block chains side by side: as many as the target's vector
/// registers (32 on AVX-512 and NEON, else 16) hold beside the stream
/// values and the fn value they meet.
int64_t getBlockChains(const target::TargetInfo &target) {
  const bool wideFile = target.arch == target::Arch::AArch64 ||
                        target.has(target::Feature::AVX512F);
  return (wideFile ? 32 : 16) - 3;
}

/// Stream values per token a block widens at a time, with fn's beside
/// them: the most, up to kMaxChunk, that divide `width` (a multiple of
/// kLanes) and whose scratch (BlockScratch: 8 · chunk · (rows + lanes)
/// bytes) fits in kChunkBytes. Longer chunks spend less per value on the
/// chunk loop and read each of fn's rows in longer runs.
int64_t getChunk(const MixShape &shape, int64_t lanes) {
  int64_t chunk = kMaxChunk;
  while (chunk > kLanes && (shape.width % chunk != 0 ||
                            8 * chunk * (shape.rows + lanes) > kChunkBytes))
    chunk /= 2;
  return chunk;
}

/// The mixes of one token, its stream values at `z`, in passes of
/// kPassRows rows of fn, each row's sum a lane of vector<lanes x f64>s: a
/// tile of `lanes` values of `lanes` rows at a time, transposed so that
/// each value's rows fill a vector, meets a broadcast of the token's value.
/// The first pass also sums the squares, in every lane of one more vector.
/// Lanes past the last row repeat it.
SmallVector<Value> emitLoneMixes(OpBuilder &b, Location loc, Value z, Value fn,
                                 const MixShape &shape, int64_t lanes) {
  KernelBuilder kb(b, loc);
  auto doubles = VectorType::get({lanes}, b.getF64Type());
  const int64_t rows = shape.rows, rowBytes = 4 * shape.width;
  const int64_t groups = kPassRows / lanes;
  SmallVector<Value> dots;
  Value sumOfSquares;
  for (int64_t first = 0; first < rows; first += kPassRows) {
    const bool squares = first == 0;
    SmallVector<Value> rowStarts;
    for (int64_t r = first; r < first + kPassRows; ++r)
      rowStarts.push_back(
          emitByteOffset(b, loc, fn, std::min(r, rows - 1) * rowBytes));
    SmallVector<Value> zeros(groups + (squares ? 1 : 0),
                             f64Splat(b, loc, doubles, 0.0));
    auto loop = scf::ForOp::create(b, loc, kb.index(0), kb.index(rowBytes),
                                   kb.index(4 * lanes), zeros);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value offset = loop.getInductionVar();
      SmallVector<Value> values;
      for (int64_t e = 0; e < lanes; ++e)
        values.push_back(emitBroadcast(
            b, loc,
            arith::ExtFOp::create(b, loc, b.getF64Type(),
                                  kb.load(b.getF32Type(),
                                          emitByteOffset(b, loc, z, 4 * e),
                                          offset, 4)),
            lanes));
      // acc + w · value, the product exact: fused or not, one rounding, as
      // the golden's +=.
      SmallVector<Value> acc(loop.getRegionIterArgs());
      for (int64_t g = 0; g < groups; ++g) {
        SmallVector<Value> tile;
        for (int64_t l = 0; l < lanes; ++l)
          tile.push_back(
              emitLoadFloats(b, loc, rowStarts[g * lanes + l], offset, lanes));
        emitTransposeTile(b, loc, tile);
        for (int64_t e = 0; e < lanes; ++e)
          acc[g] = LLVM::FMulAddOp::create(
              b, loc, arith::ExtFOp::create(b, loc, doubles, tile[e]),
              values[e], acc[g]);
      }
      if (squares)
        for (Value v : values)
          acc[groups] = LLVM::FMulAddOp::create(b, loc, v, v, acc[groups]);
      scf::YieldOp::create(b, loc, acc);
    }
    for (int64_t r = first; r < std::min(first + kPassRows, rows); ++r)
      dots.push_back(vector::ExtractOp::create(
          b, loc, loop.getResult((r - first) / lanes), (r - first) % lanes));
    if (squares)
      sumOfSquares =
          vector::ExtractOp::create(b, loc, loop.getResult(groups), 0);
  }
  return emitScaledMixes(b, loc, dots, sumOfSquares, shape.width,
                         shape.normEps);
}

/// A block's stack scratch: fn's chunk widened ([row][element], f64) and
/// the streams' chunk widened and transposed ([element][token], f64).
struct BlockScratch {
  Value fn, streams;
};

/// The mixes of the `count` tokens (2 to `lanes`) from `first` of the
/// streams at `streams`, a token per lane of vector<lanes x f32>s; lanes
/// from `count` on repeat the last token. `chains` accumulators at a time.
SmallVector<Value> emitBlockMixes(OpBuilder &b, Location loc,
                                  const BlockScratch &scratch, Value streams,
                                  Value fn, Value first, Value count,
                                  const MixShape &shape, int64_t lanes,
                                  int64_t chains) {
  KernelBuilder kb(b, loc);
  Type f64 = b.getF64Type();
  auto doubles = VectorType::get({lanes}, f64);
  auto wideRow = VectorType::get({kLanes}, f64);
  const int64_t rows = shape.rows, rowBytes = 4 * shape.width;
  const int64_t chunk = getChunk(shape, lanes), lineBytes = 8 * lanes;
  // Lane l's token's streams; a short block's spare lanes read its last
  // token's, in bounds, and their sums are dropped.
  SmallVector<Value> tokenRows;
  Value last = arith::SubIOp::create(b, loc, count, kb.index(1));
  for (int64_t l = 0; l < lanes; ++l)
    tokenRows.push_back(emitTokenRow(
        b, loc, streams,
        arith::AddIOp::create(
            b, loc, first, arith::MinSIOp::create(b, loc, kb.index(l), last)),
        shape.width));
  // Accumulators: fn's rows', then the squares'.
  const int64_t sums = rows + 1;
  const int64_t passes = (sums + chains - 1) / chains;
  const int64_t perPass = (sums + passes - 1) / passes;
  SmallVector<Value> zeros(sums, f64Splat(b, loc, doubles, 0.0));
  auto chunks = scf::ForOp::create(b, loc, kb.index(0), kb.index(rowBytes),
                                   kb.index(4 * chunk), zeros);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(chunks.getBody());
    Value offset = chunks.getInductionVar();
    // `index` times `bytes`, a byte offset.
    auto times = [&](Value index, int64_t bytes) -> Value {
      return arith::MulIOp::create(b, loc, index, kb.index(bytes));
    };
    // Row by row: each row's chunk is one run of memory.
    kb.forEach(kb.index(0), kb.index(rows), 1, [&](Value i) {
      Value from = emitByteOffset(
          b, loc, fn,
          arith::AddIOp::create(b, loc, times(i, rowBytes), offset));
      Value to = emitByteOffset(b, loc, scratch.fn, times(i, 8 * chunk));
      for (int64_t e = 0; e < chunk; e += kLanes)
        kb.store(arith::ExtFOp::create(
                     b, loc, wideRow,
                     emitLoadFloats(b, loc, from, kb.index(4 * e), kLanes)),
                 to, kb.index(8 * e), 64);
    });
    // A tile of `lanes` values of each token at a time, transposed so that
    // each value's tokens fill a vector.
    kb.forEach(kb.index(0), kb.index(chunk), lanes, [&](Value e) {
      Value from = arith::AddIOp::create(b, loc, offset, times(e, 4));
      SmallVector<Value> tile;
      for (Value row : tokenRows)
        tile.push_back(emitLoadFloats(b, loc, row, from, lanes));
      emitTransposeTile(b, loc, tile);
      Value to = emitByteOffset(b, loc, scratch.streams, times(e, lineBytes));
      for (int64_t k = 0; k < lanes; ++k)
        kb.store(arith::ExtFOp::create(b, loc, doubles, tile[k]), to,
                 kb.index(lineBytes * k), lineBytes);
    });
    // The chunk's values in order, a pass of accumulators at a time.
    SmallVector<Value> acc(chunks.getRegionIterArgs());
    for (int64_t p = 0; p < sums; p += perPass) {
      const int64_t n = std::min(perPass, sums - p);
      auto elements =
          scf::ForOp::create(b, loc, kb.index(0), kb.index(chunk), kb.index(1),
                             ArrayRef<Value>(acc).slice(p, n));
      OpBuilder::InsertionGuard passGuard(b);
      b.setInsertionPointToStart(elements.getBody());
      Value element = elements.getInductionVar();
      Value values = kb.load(doubles, scratch.streams,
                             times(element, lineBytes), lineBytes);
      Value weights = emitByteOffset(b, loc, scratch.fn, times(element, 8));
      // acc + values · w, the product exact: fused or not, one rounding, as
      // the golden's +=.
      SmallVector<Value> next;
      for (int64_t a = p; a < p + n; ++a) {
        Value w = a < rows ? emitBroadcast(b, loc,
                                           kb.load(f64, weights,
                                                   kb.index(8 * a * chunk), 8),
                                           lanes)
                           : values;
        next.push_back(LLVM::FMulAddOp::create(
            b, loc, values, w, elements.getRegionIterArg(a - p)));
      }
      scf::YieldOp::create(b, loc, next);
      b.setInsertionPointAfter(elements);
      for (int64_t a = 0; a < n; ++a)
        acc[p + a] = elements.getResult(a);
    }
    scf::YieldOp::create(b, loc, acc);
  }
  SmallVector<Value> dots(chunks.getResults().take_front(rows));
  return emitScaledMixes(b, loc, dots, chunks.getResult(rows), shape.width,
                         shape.normEps);
}

} // namespace

llvm::Error verifyShape(const std::string &what, int64_t mult, int64_t d) {
  if (mult < 1 || mult > kMaxHcMult)
    return llvm::createStringError(
        llvm::formatv("{0}: expected mult in [1, {1}]", what, kMaxHcMult)
            .str());
  if (d <= 0 || d % kLanes != 0)
    return llvm::createStringError(
        llvm::formatv("{0}: expected D a positive multiple of {1}", what,
                      kLanes)
            .str());
  return llvm::Error::success();
}

llvm::Error verifyEpsilons(const std::string &what, float eps, float normEps) {
  for (auto [name, value] : {std::pair("eps", eps), {"norm_eps", normEps}})
    if (!std::isfinite(value) || value < 0)
      return llvm::createStringError(
          llvm::formatv("{0}: expected a finite {1} >= 0", what, name).str());
  return llvm::Error::success();
}

std::string getSymbolName(StringRef op, int64_t mult, int64_t d) {
  return llvm::formatv("kf_{0}_m{1}_d{2}", op, mult, d).str();
}

std::string describe(StringRef op, int64_t mult, int64_t d, StringRef more) {
  return llvm::formatv("{0} kernel [mult = {1}, D = {2}{3}]", op, mult, d, more)
      .str();
}

std::string getBitsHex(float v) {
  return llvm::formatv(
             "{0}", llvm::format_hex_no_prefix(llvm::bit_cast<uint32_t>(v), 8))
      .str();
}

func::FuncOp buildTokenKernel(ModuleOp module, StringRef name,
                              const target::TargetInfo &target,
                              int64_t operandCount, TokenBody body) {
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  StepKernelArgs args = createStepKernelFunction(b, loc, module, name, target);
  SmallVector<Value> operands;
  for (int64_t i = 0; i < operandCount; ++i)
    operands.push_back(emitStepOperand(b, loc, args, i));
  auto tokens =
      scf::ForOp::create(b, loc, args.begin, args.end, emitIndex(b, loc, 1));
  b.setInsertionPointToStart(tokens.getBody());
  body(b, loc, operands, tokens.getInductionVar());
  b.setInsertionPointAfter(tokens);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

func::FuncOp buildMixKernel(ModuleOp module, StringRef name,
                            const target::TargetInfo &target,
                            int64_t operandCount, const MixShape &shape,
                            MixedTokenBody body) {
  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  KernelBuilder kb(b, loc);
  StepKernelArgs args = createStepKernelFunction(b, loc, module, name, target);
  SmallVector<Value> operands;
  for (int64_t i = 0; i < operandCount; ++i)
    operands.push_back(emitStepOperand(b, loc, args, i));
  Value streams = operands[0], fn = operands[1];
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  const int64_t rows = shape.rows, lanes = getF64Lanes(target);
  const int64_t chunk = getChunk(shape, lanes);
  // The scratch, at the entry so that LLVM allocates it once: the block's
  // mixes [row][token], and the block's chunks (BlockScratch).
  auto stackArray = [&](Type element, int64_t count) -> Value {
    return LLVM::AllocaOp::create(b, loc,
                                  LLVM::LLVMPointerType::get(b.getContext()),
                                  element, kb.index(count), /*alignment=*/64);
  };
  Value mixes = stackArray(f32, rows * lanes);
  const BlockScratch scratch{stackArray(f64, rows * chunk),
                             stackArray(f64, chunk * lanes)};
  const int64_t mixLineBytes = 4 * lanes;

  auto blocks =
      scf::ForOp::create(b, loc, args.begin, args.end, kb.index(lanes));
  b.setInsertionPointToStart(blocks.getBody());
  Value first = blocks.getInductionVar();
  Value count = arith::MinSIOp::create(
      b, loc, kb.index(lanes), arith::SubIOp::create(b, loc, args.end, first));
  auto alone =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              count, kb.index(1)),
                        /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(alone.thenBlock());
    SmallVector<Value> m =
        emitLoneMixes(b, loc, emitTokenRow(b, loc, streams, first, shape.width),
                      fn, shape, lanes);
    for (int64_t i = 0; i < rows; ++i)
      kb.store(m[i], mixes, kb.index(mixLineBytes * i), 4);
    b.setInsertionPointToStart(alone.elseBlock());
    m = emitBlockMixes(b, loc, scratch, streams, fn, first, count, shape, lanes,
                       getBlockChains(target));
    for (int64_t i = 0; i < rows; ++i)
      kb.store(m[i], mixes, kb.index(mixLineBytes * i), mixLineBytes);
  }
  kb.forEach(
      first, arith::AddIOp::create(b, loc, first, count), 1, [&](Value token) {
        Value lane = emitByteOffset(
            b, loc, mixes,
            arith::MulIOp::create(b, loc,
                                  arith::SubIOp::create(b, loc, token, first),
                                  kb.index(4)));
        SmallVector<Value> m;
        for (int64_t i = 0; i < rows; ++i)
          m.push_back(kb.load(f32, lane, kb.index(mixLineBytes * i), 4));
        body(b, loc, operands, token, m);
      });
  b.setInsertionPointAfter(blocks);
  func::ReturnOp::create(b, loc);
  return args.fn;
}

Value emitTokenRow(OpBuilder &b, Location loc, Value ptr, Value token,
                   int64_t floats) {
  return emitByteOffset(
      b, loc, ptr,
      arith::MulIOp::create(b, loc, token, emitIndex(b, loc, 4 * floats)));
}

Value emitIndex(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
}

Value emitLoadFloats(OpBuilder &b, Location loc, Value ptr, Value bytes,
                     int64_t lanes) {
  return LLVM::LoadOp::create(b, loc, VectorType::get({lanes}, b.getF32Type()),
                              emitByteOffset(b, loc, ptr, bytes),
                              /*alignment=*/4);
}

Value emitLoadFloat(OpBuilder &b, Location loc, Value ptr, int64_t index) {
  return LLVM::LoadOp::create(b, loc, b.getF32Type(),
                              emitByteOffset(b, loc, ptr, 4 * index),
                              /*alignment=*/4);
}

Value emitBroadcast(OpBuilder &b, Location loc, Value value, int64_t lanes) {
  return vector::BroadcastOp::create(
      b, loc, VectorType::get({lanes}, value.getType()), value);
}

Value emitSigmoid(OpBuilder &b, Location loc, Value x) {
  auto floats = cast<VectorType>(x.getType());
  auto doubles = VectorType::get(floats.getShape(), b.getF64Type());
  Value one = f64Splat(b, loc, doubles, 1.0);
  Value e = emitExp(
      b, loc,
      arith::NegFOp::create(b, loc, arith::ExtFOp::create(b, loc, doubles, x)));
  return arith::TruncFOp::create(
      b, loc, floats,
      arith::DivFOp::create(b, loc, one,
                            arith::AddFOp::create(b, loc, one, e)));
}

Value emitVectorOf(OpBuilder &b, Location loc, ArrayRef<Value> parts) {
  return vector::FromElementsOp::create(
      b, loc,
      VectorType::get({static_cast<int64_t>(parts.size())},
                      parts.front().getType()),
      parts);
}

Value emitPreWeights(OpBuilder &b, Location loc, ArrayRef<Value> m, Value base,
                     Value scale, float eps) {
  const int64_t mult = static_cast<int64_t>(m.size());
  Value arg = arith::AddFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, emitBroadcast(b, loc, scale, mult),
                            emitVectorOf(b, loc, m)),
      emitLoadFloats(b, loc, base, emitIndex(b, loc, 0), mult));
  Value epsSplat = arith::ConstantOp::create(
      b, loc, VectorType::get({mult}, b.getF32Type()),
      DenseElementsAttr::get(VectorType::get({mult}, b.getF32Type()),
                             b.getF32FloatAttr(eps)));
  return arith::AddFOp::create(b, loc, emitSigmoid(b, loc, arg), epsSplat);
}

void emitWeightedStreamSum(OpBuilder &b, Location loc, Value streams,
                           Value weights, int64_t d, Value out) {
  auto doubles = VectorType::get({kLanes}, b.getF64Type());
  auto floats = VectorType::get({kLanes}, b.getF32Type());
  const int64_t mult = cast<VectorType>(weights.getType()).getNumElements();
  SmallVector<Value> weightSplats, streamStart;
  for (int64_t j = 0; j < mult; ++j) {
    Value w = arith::ExtFOp::create(
        b, loc, b.getF64Type(),
        Value(vector::ExtractOp::create(b, loc, weights, j)));
    weightSplats.push_back(emitBroadcast(b, loc, w, kLanes));
    streamStart.push_back(emitByteOffset(b, loc, streams, 4 * j * d));
  }
  Value zeros = f64Splat(b, loc, doubles, 0.0);
  auto loop =
      scf::ForOp::create(b, loc, emitIndex(b, loc, 0), emitIndex(b, loc, 4 * d),
                         emitIndex(b, loc, 4 * kLanes));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value offset = loop.getInductionVar();
  Value sum = zeros;
  for (int64_t j = 0; j < mult; ++j) {
    Value values = arith::ExtFOp::create(
        b, loc, doubles,
        emitLoadFloats(b, loc, streamStart[j], offset, kLanes));
    sum = arith::AddFOp::create(
        b, loc, sum, arith::MulFOp::create(b, loc, weightSplats[j], values));
  }
  LLVM::StoreOp::create(
      b, loc,
      emitRoundToBf16(b, loc, arith::TruncFOp::create(b, loc, floats, sum)),
      emitByteOffset(b, loc, out, offset), /*alignment=*/4);
}

} // namespace kf::codegen::hc
