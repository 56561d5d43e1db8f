// oneDNN's plain int8 and f32 matmuls on the shapes under test, timed in the
// same run: the reference library figures of docs/benchmarks.md.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "buffer.h"

namespace kf::bench {

enum class OneDnnType {
  Int8, // u8 activations x s8 weights -> s32
  F32,  // f32 x f32 -> f32
};

// "u8s8s32" or "f32".
std::string_view onednnTypeName(OneDnnType type);

// oneDNN's version, e.g. "2.6.3".
std::string onednnVersion();

// The number of threads oneDNN's matmuls run on from now on.
absl::Status setOnednnThreads(int threads);

// The instruction sets oneDNN can be limited to, by oneDNN's names
// ("avx512_core_vnni", ...), "all" first.
std::span<const std::string_view> onednnIsaNames();

// Limits oneDNN to `isa` (one of onednnIsaNames()), so that it is
// compared with kernels on the instructions they use: a CPU with AMX runs
// oneDNN's int8 matmuls on AMX otherwise. Only before oneDNN's first
// primitive of the process.
absl::Status setOnednnMaxIsa(std::string_view isa);

// Whether this process has called oneDNN (beyond onednn_version): oneDNN
// keeps the ISA it has seen in effect, and a child forked afterwards would
// inherit it (and perhaps a lock of an OpenMP thread).
bool onednnTouched();

// The instruction set oneDNN's kernels use, e.g. "avx512_core_amx".
std::string onednnEffectiveIsa();

struct OneDnnWeightSet;

// C (M x N) = A (M x K) . B (K x N) with random inputs. The weights are
// reordered once into the layout the primitive prefers, as a compiled
// kernel's weights are repacked once at load time, so the time is oneDNN's
// best and not that of a per-call repack.
class OneDnnMatmul {
public:
  ~OneDnnMatmul();

  // `set_bytes` zero: one weight matrix, reused by every call (hot);
  // otherwise as many copies of it, at distinct addresses, as fit in
  // `set_bytes` (at least one), cycled through call by call (cold). The set
  // takes its buffer from `cache`, when given, and gives it back when no
  // matmul uses it any more.
  // `previous`, the matmul of another M, hands over its weight set when it
  // has the same type, shape and layout, which saves refilling gigabytes per
  // M; otherwise it is freed before the new set is allocated, so that two
  // sets never take memory at once.
  static absl::StatusOr<std::unique_ptr<OneDnnMatmul>>
  create(OneDnnType type, int64_t m, int64_t k, int64_t n, uint64_t setBytes,
         uint64_t seed, std::unique_ptr<OneDnnMatmul> previous = nullptr,
         BufferCache *cache = nullptr);

  // One product, with weight copy `call` modulo copies().
  absl::Status run(int64_t call);

  // Compares a sample of outputs of the last run with plain loops: exact for
  // int8, within γ(K)·Σ|a·b| for f32 (any summation order of K rounded
  // products is within that of the exact sum).
  absl::Status check(uint64_t seed) const;

  OneDnnType type() const { return type_; }
  // The implementation oneDNN chose, e.g. "brg:avx512_core_amx".
  std::string implementation() const;
  // Bytes of one weight copy in oneDNN's layout: what a call reads.
  uint64_t weightBytes() const;
  int64_t copies() const;

  // The inputs, row-major as plain matrices, and the last output, for the
  // tests: A and B hold uint8_t/int8_t or float, C int32_t or float.
  std::span<const uint8_t> a() const;
  std::span<const uint8_t> b() const;
  std::span<const uint8_t> c() const;

private:
  struct Impl;
  explicit OneDnnMatmul(std::unique_ptr<Impl> impl, OneDnnType type);

  std::unique_ptr<Impl> impl_;
  OneDnnType type_;
};

} // namespace kf::bench
