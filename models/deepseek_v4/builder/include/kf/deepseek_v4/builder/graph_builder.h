// The DeepSeek-V4 forward pass as a kf graph (docs/graph.md): a module with a
// kf.weight symbol per model tensor, a kf.cache per KV ring and compressor,
// and the functions @prefill and @decode.
#pragma once

#include <span>

#include "kf/deepseek_v4/config.h"
#include "kf/deepseek_v4/tensors.h"
#include "kf/runtime/format.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kf::deepseek_v4 {

struct GraphOptions {
  // The module's name, e.g. "deepseek4_tiny".
  std::string name = "deepseek4";
  // Emit the QAT simulations (FP8/FP4 activation rounding, the indexer's
  // Hadamard) as the reference does by default; off matches the reference's
  // Options::simulateQuantization = false.
  bool simulate = true;
  // The most token rows one prefill call takes (kf-compile --max-rows): the
  // KV window rings hold that many beside the window before them, so that
  // a prefill continues a sequence in chunks (docs/graph.md, "Caches").
  int64_t maxRows = 512;
  // What each function shows of its layers (docs/graph.md, "Layer probes"):
  // Observe returns, after the logits and the token, each layer's indexer
  // entries (CSA layers), MoE experts and output streams; TeacherForce also
  // takes, after the tokens and positions, the streams each layer after the
  // first and the head read, in place of the layer before's.
  enum class Probes { None, Observe, TeacherForce };
  Probes probes = Probes::None;
};

// Builds the graph of `config` with `formats[i]` the storage format of
// `tensorSpecs(config)[i]` (a file's formats, or tensor_formats() under a
// recipe). The module verifies; the context must have the kf, func, tensor
// and arith dialects loaded or registered.
mlir::OwningOpRef<mlir::ModuleOp> buildGraph(mlir::MLIRContext &context,
                                             const Config &config,
                                             std::span<const Format> formats,
                                             const GraphOptions &options);

} // namespace kf::deepseek_v4
