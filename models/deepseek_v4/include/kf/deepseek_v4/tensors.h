// The tensors of a DeepSeek-V4 GGUF file (docs/models/deepseek_v4_model.md
// §1.3 under llama.cpp's names, docs/models/deepseek_v4.md): what a Config
// needs, with ggml-order shapes and the formats each may be stored in, and
// the check that a file holds exactly that.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "kf/deepseek_v4/config.h"
#include "kf/runtime/format.h"
#include "kf/runtime/gguf.h"

namespace kf::deepseek_v4 {

// What a tensor is to the model: it decides the formats it may have, how it
// counts as parameters and how synth draws it.
enum class TensorKind {
  Embedding,     // token_embd: one row read per token
  Output,        // the LM head
  Projection,    // an attention, indexer or compressor matrix
  IndexerWeight, // indexer.proj: the per-head weights of the index scores
  Router,        // ffn_gate_inp
  RoutedExperts, // ffn_{gate,up,down}_exps: E experts, k of them active
  SharedExperts, // ffn_{gate,up,down}_shexp
  Norm,          // an RMSNorm weight
  HcFn,          // a hyper-connection mix projection
  HcBase,        // a hyper-connection bias
  HcScale,       // a hyper-connection scale
  Sinks,         // per-head attention sink logits
  CompressorApe, // a compressor's per-slot score bias
  GateBias,      // exp_probs_b: the routing bias of learned layers
  Tid2Eid,       // the token -> experts table of hash-routed layers
};

struct TensorSpec {
  std::string name;
  TensorKind kind;
  // ggml order: shape[0] (ne[0]) is the row length, the input dimension of
  // a matrix.
  std::vector<int64_t> shape;
  int64_t elements() const;
  int64_t rows() const { return elements() / shape[0]; }
};

// Every tensor of the model in llama.cpp's load order: globals, then each
// layer's. MTP/DSpark stages are not part of it.
std::vector<TensorSpec> tensorSpecs(const Config &config);

// Whether a tensor of `kind` may be stored in `format` (llama.cpp's type
// rules, docs/models/deepseek_v4.md): norms, HC bases and scales, sinks and
// the gate bias f32; tid2eid i32; compressor ape f32 or bf16; every other kind
// any weight format.
bool accepts(TensorKind kind, Format format);
// The format a kind must have when it allows only one, e.g. f32 for a norm.
std::optional<Format> fixedFormat(TensorKind kind);

// Checks the nVocab rows of nExpertUsed expert ids of a tid2eid table:
// each names distinct experts below nExpert (a repeated expert has no agreed
// meaning: the reference adds it once, llama.cpp twice). Errors start with
// `what`, e.g. "m.gguf: tensor 'blk.0.ffn_gate_tid2eid.weight'".
absl::Status checkTid2eidRows(const Config &config,
                              std::span<const int32_t> table,
                              std::string_view what);

// Checks that `file` holds exactly the tensors of `config`: none missing,
// none extra, each with its shape and an accepted format, and every tid2eid
// row naming k distinct experts below E. One-line errors name the file and
// the tensor.
absl::Status validateTensors(const Config &config, const gguf::File &file);

} // namespace kf::deepseek_v4
