//===- interpreter.h - Runs a kf graph with the reference kernels -*- C++
//-*-===//
//
// Executes the DeepSeek-V4 graph module (docs/graph.md) op by op, each kf op
// by the golden reference's kernel for it (models/deepseek_v4/reference), in
// the order of the function body. A graph that says what the reference does
// therefore gives the reference's results bit for bit, which makes this the
// check that a graph (from the builder, or after a pass) still computes the
// model, before any compiled kernel is involved.
//
// Weights are bound by symbol name to a GGUF file's tensors (or to in-memory
// fp32 tensors) and decoded on first use; caches (`kf.cache` symbols) live in
// the interpreter and persist from one call to the next, so a `@prefill`
// followed by `@decode` calls runs a sequence.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DEEPSEEK_V4_INTERPRETER_INTERPRETER_H
#define KF_DEEPSEEK_V4_INTERPRETER_INTERPRETER_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "kf/runtime/gguf.h"
#include "mlir/IR/BuiltinOps.h"

namespace kf::deepseek_v4::interpreter {

/// The element types a tensor holds at run time: activations are f32 (bf16
/// values are f32 tensors holding bf16-exact values), token ids and indices
/// i32, positions i64, packed activations (kf.quantize_activations) bytes.
enum class ElementType { F32, I32, I64, I8 };

/// A row-major tensor with a fully known shape.
class Tensor {
public:
  Tensor() = default;
  Tensor(std::vector<int64_t> shape, std::vector<float> values);
  Tensor(std::vector<int64_t> shape, std::vector<int32_t> values);
  Tensor(std::vector<int64_t> shape, std::vector<int64_t> values);
  Tensor(std::vector<int64_t> shape, std::vector<int8_t> values);

  ElementType getElementType() const;
  std::span<const int64_t> getShape() const { return shape; }
  int64_t getRank() const { return static_cast<int64_t>(shape.size()); }
  int64_t getDimSize(int64_t dim) const { return shape[dim]; }
  /// The number of elements: the product of the dimensions.
  int64_t getNumElements() const;

  /// The elements; each accessor requires the matching element type.
  std::span<const float> getFloats() const;
  std::span<const int32_t> getInts() const;
  std::span<const int64_t> getLongs() const;
  std::span<const int8_t> getBytes() const;
  std::span<float> getMutableFloats();
  std::span<int32_t> getMutableInts();
  std::span<int64_t> getMutableLongs();
  std::span<int8_t> getMutableBytes();

  /// The same elements under another shape of the same element count.
  Tensor reshaped(std::vector<int64_t> newShape) const;

private:
  std::vector<int64_t> shape;
  std::variant<std::vector<float>, std::vector<int32_t>, std::vector<int64_t>,
               std::vector<int8_t>>
      data;
};

/// Weights given in memory instead of a file: each `kf.weight` symbol name
/// maps to its decoded values, fp32 for every format but `i32`, whose tables
/// are given as int32.
struct InMemoryWeights {
  std::map<std::string, std::vector<float>, std::less<>> floats;
  std::map<std::string, std::vector<int32_t>, std::less<>> ints;
};

/// Called after every op that has results, with the op and its results in
/// order; a result that is not a tensor (an index, a weight or a cache
/// reference) is null. The pointers are valid during the call only.
using Observer =
    std::function<void(mlir::Operation *op, std::span<const Tensor *> results)>;

/// Finds a compiled kernel that a lowered graph's kf.quantize_activations
/// or kf.qmatmul calls, by its symbol (the function's name in the kernels
/// module): a JIT's lookup, or the symbols of a loaded object.
using KernelResolver =
    std::function<absl::StatusOr<void *>(std::string_view symbol)>;

class Interpreter {
public:
  /// Binds every `kf.weight` of `module` to the tensor of `file` with its
  /// name, which must have the declared format and shape (the declared
  /// `[rows, cols]` is ggml's `ne` reversed), and creates the module's
  /// caches empty. `module` (verified) and `file` must outlive the
  /// interpreter; tensors are decoded when an op first reads them.
  static absl::StatusOr<Interpreter> create(mlir::ModuleOp module,
                                            const gguf::File &file);
  /// The same with the weights in memory: each must have the declared
  /// element count (int32 for `i32` weights, fp32 for every other format).
  static absl::StatusOr<Interpreter> create(mlir::ModuleOp module,
                                            InMemoryWeights weights);

  Interpreter(Interpreter &&) noexcept;
  Interpreter &operator=(Interpreter &&) noexcept;
  ~Interpreter();

  void setObserver(Observer observer);
  /// How the kernels of a lowered graph are found. A kf.qmatmul reads its
  /// weight repacked from the file's bytes, so it needs an interpreter
  /// created from a file.
  void setKernelResolver(KernelResolver resolver);

  /// Runs `@function` on `tokens` at `positions` (one each per token,
  /// consecutive) and returns the function's results: for the graph's
  /// `@prefill` and `@decode`, the last token's logits `[1, V]` and their
  /// argmax `[1]`. `@prefill` must start at position 0; `@decode` must
  /// continue the sequence of the previous calls. After an error the caches
  /// hold no usable sequence and the next call must be a `@prefill`.
  absl::StatusOr<std::vector<Tensor>> run(llvm::StringRef function,
                                          std::span<const int32_t> tokens,
                                          std::span<const int64_t> positions);

  /// Runs `@function` on arguments of any tensor types, each of which must
  /// fit the declared argument type, and returns its results: for running a
  /// few ops on chosen values. The caches are used as they are, and a
  /// running sequence ends (the next `run` must be a `@prefill`).
  absl::StatusOr<std::vector<Tensor>> call(llvm::StringRef function,
                                           std::vector<Tensor> arguments);

  /// The position the next `@decode` must take, if a sequence is running.
  std::optional<int64_t> getNextPosition() const;

private:
  class Impl;
  explicit Interpreter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace kf::deepseek_v4::interpreter

#endif // KF_DEEPSEEK_V4_INTERPRETER_INTERPRETER_H
