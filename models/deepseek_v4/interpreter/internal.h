//===- internal.h - The interpreter's run-time state ------------*- C++ -*-===//
//
// Shared by the interpreter's sources; not part of its API.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DEEPSEEK_V4_INTERPRETER_INTERNAL_H
#define KF_DEEPSEEK_V4_INTERPRETER_INTERNAL_H

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kf/Dialect/KfDialect.h"
#include "kf/deepseek_v4/interpreter/interpreter.h"
#include "kf/deepseek_v4/reference/compressor.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Twine.h"

namespace kf::deepseek_v4::interpreter::detail {

/// A `kf.weight` bound to its values: a tensor of a file, decoded on first
/// use, or values given in memory.
struct Weight {
  std::string name;
  mlir::kf::QWeightType type;
  const gguf::File *file = nullptr;
  const gguf::TensorInfo *tensor = nullptr; // in `file`
  bool loaded = false;
  std::vector<float> floats; // every format but i32
  std::vector<int32_t> ints; // i32 tables
  /// The file's bytes repacked for compiled kernels, by layout name.
  std::map<std::string, std::vector<uint8_t>, std::less<>> packed;
};

/// Fails unless every fp32 value of the weight is finite: a non-finite
/// weight would reach the reference's block scales, which stop the program
/// on it.
absl::Status checkFinite(const Weight &weight);

/// The weight's fp32 values, decoded now if they were not yet; an error if
/// the weight is an i32 table or its data does not decode.
absl::StatusOr<std::span<const float>> getFloats(Weight &weight);
/// An i32 table's values; an error for any other format.
absl::StatusOr<std::span<const int32_t>> getInts(Weight &weight);
/// The weight's file bytes repacked to `layout` (kf::pack_weights; an expert
/// stack expert by expert, kf::pack_expert_weights), once per layout; an
/// error for a weight given in memory, which has no file bytes.
absl::StatusOr<std::span<const uint8_t>>
getPacked(Weight &weight, const ::kf::PackedLayout &layout);

/// The slots of a `!kf.window_cache`: position p's row in slot p mod rows,
/// zeros where nothing was written.
struct WindowRing {
  mlir::kf::WindowCacheType type;
  std::vector<float> rows; // [rows, dim]
};

/// A `!kf.compressed_cache`: the reference compressor that holds its
/// entries and running state, built by the first `kf.compress` after a
/// reset from that op's weights and attributes, which later ones must
/// repeat.
struct CompressorState {
  mlir::kf::CompressedCacheType type;
  std::optional<reference::Compressor> compressor;
  std::array<const Weight *, 2> weights{}; // ape, norm
  mlir::Attribute rope;
  mlir::kf::EntryPost post = mlir::kf::EntryPost::none;
  float eps = 0;
  int64_t fed = 0; // tokens since the reset: the next one's position
};

struct Cache {
  std::string name;
  std::variant<WindowRing, CompressorState> state;

  /// Forgets every row, entry and running state.
  void reset();
};

/// What an SSA value holds at run time. Tensors are shared so that values
/// passed along unchanged are not copied.
using RuntimeValue = std::variant<std::monostate, std::shared_ptr<const Tensor>,
                                  int64_t, Weight *, Cache *>;

/// The values of one function call. Operands are checked present and of the
/// right kind before an op runs (checkOperands), so the accessors below
/// need not fail.
class Frame {
public:
  const RuntimeValue *lookup(mlir::Value value) const;
  const Tensor &tensor(mlir::Value value) const;
  int64_t index(mlir::Value value) const;
  Weight &weight(mlir::Value value) const;
  Cache &cache(mlir::Value value) const;

  void set(mlir::Value value, RuntimeValue runtimeValue);
  void set(mlir::Value value, Tensor tensor);

private:
  llvm::DenseMap<mlir::Value, RuntimeValue> values;
};

/// What outlives a call besides the caches: the RoPE frequency tables, one
/// per #kf.rope.
class Context {
public:
  void setKernelResolver(KernelResolver resolver) {
    kernels = std::move(resolver);
    kernelAddresses.clear();
  }
  /// The compiled kernel `callee` of `op` (the resolver's answer, kept); an
  /// error naming `op` without a resolver or when it finds none.
  absl::StatusOr<void *> getKernel(mlir::Operation *op,
                                   mlir::SymbolRefAttr callee);

  /// reference::rope_frequencies of `rope`, computed once; an error naming
  /// `op` for a rope the reference cannot tabulate.
  absl::StatusOr<std::span<const float>>
  getRopeFrequencies(mlir::Operation *op, mlir::kf::RopeAttr rope);

private:
  llvm::DenseMap<mlir::Attribute, std::vector<float>> tables;
  KernelResolver kernels;
  llvm::DenseMap<mlir::Attribute, void *> kernelAddresses;
};

/// "interpreter: kf.linear at blk.3.q_a: <message>", one line.
absl::Status opError(mlir::Operation *op, const llvm::Twine &message);

/// "[2, 3]".
std::string shapeString(std::span<const int64_t> shape);

/// Checks every operand is computed and holds what its type says (a tensor
/// of a matching shape, an index, a weight or a cache).
absl::Status checkOperands(mlir::Operation *op, const Frame &frame);
/// Checks `tensor` against the static type of `op`'s result `resultIndex`.
absl::Status checkResult(mlir::Operation *op, unsigned resultIndex,
                         const Tensor &tensor);

/// Fails unless `actual == expected`: "<what> is <actual>, expected
/// <expected>".
absl::Status expectSize(mlir::Operation *op, const llvm::Twine &what,
                        int64_t actual, int64_t expected);
/// Fails unless every value of `values` is finite: the reference's block
/// scales need finite inputs.
absl::Status expectFinite(mlir::Operation *op, const llvm::Twine &what,
                          std::span<const float> values);

// The execution of each supported op, by the reference kernels
// (kf_ops.cpp, attention_ops.cpp) or directly (upstream_ops.cpp).
#define KF_EXECUTED_OP(Op)                                                     \
  absl::Status execute(Op op, Frame &frame, Context &context);
#include "executed_ops.def"

} // namespace kf::deepseek_v4::interpreter::detail

#endif // KF_DEEPSEEK_V4_INTERPRETER_INTERNAL_H
