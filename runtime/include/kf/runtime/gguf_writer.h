// Writing GGUF v3 files in ggml's layout: tensor offsets are the running sum
// of their sizes padded to the alignment, with zero padding after the tensor
// infos and after every tensor. A file without tensors ends right after its
// metadata, as gguf-py writes vocab files, so reading a file and writing it
// back gives the same bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kf/runtime/format.h"
#include "kf/runtime/gguf.h"
#include "kf/runtime/gguf_value.h"

namespace kf::gguf {

class Writer {
public:
  // Fills exactly the tensor's bytes; called once, while the file is written,
  // so that a tensor computed on the fly (re-quantized, say) is only in
  // memory while it is being written.
  using Producer = std::function<absl::Status(std::span<uint8_t> dst)>;
  // A view (the caller keeps the bytes alive until the file is written), an
  // owned buffer, or a producer.
  using Data =
      std::variant<std::span<const uint8_t>, std::vector<uint8_t>, Producer>;

  // The metadata of `file` and views of its tensors; `file` must outlive the
  // Writer.
  static Writer copyOf(const File &file);

  // Entries are written in the order added. The alignment is the value of
  // general.alignment when added, 32 otherwise. kernelforge.private_types is
  // the writer's: whatever value is added is replaced by the private formats
  // the tensors use, or dropped when they use none.
  void addMetadata(std::string key, Value value);
  // `shape` in ggml order (shape[0] is the row length).
  void addTensor(std::string name, Format format, std::vector<int64_t> shape,
                 Data data);

  // Checks everything the reader checks, then writes `path` atomically: a
  // temporary file beside it, synced and renamed over it. On any error `path`
  // is untouched and the temporary file removed.
  absl::Status write(const std::string &path) const;
  // The same bytes in memory; `name` stands for the file in errors.
  absl::StatusOr<std::vector<uint8_t>> serialize(std::string_view name) const;

private:
  struct Tensor {
    std::string name;
    Format format;
    std::vector<int64_t> shape;
    Data data;
  };
  struct Layout;
  using Sink = absl::FunctionRef<absl::Status(std::span<const uint8_t>)>;

  // The alignment, after checking the entries as the reader would.
  absl::StatusOr<uint32_t> checkMetadata(std::string_view name) const;
  // The size of each tensor, after checking it as the reader would.
  absl::StatusOr<std::vector<uint64_t>>
  checkTensors(std::string_view name) const;
  // kernelforge.private_types as the tensors need it: "<id>=<mnemonic>" for
  // each private format used, by id.
  std::vector<std::string> privateTypeEntries() const;
  // The entries in file order, `private_types` in place of the caller's
  // value of that key (or last), or left out when it is empty.
  std::vector<const KeyValue *>
  metadataToWrite(const KeyValue &privateTypes) const;
  // Checks everything and encodes all that precedes the tensor data.
  absl::StatusOr<Layout> layout(std::string_view name) const;
  absl::Status emit(std::string_view name, const Layout &layout,
                    Sink sink) const;

  std::vector<KeyValue> metadata_;
  std::vector<Tensor> tensors_;
};

} // namespace kf::gguf
