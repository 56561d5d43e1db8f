// libFuzzer target for the GGUF reader (docs/formats/gguf.md). Any bytes are
// either refused with one line or parsed; a parsed file has every metadata
// value and tensor byte read and every decodable tensor decoded, and the
// writer turns it into bytes that parse again and write back unchanged.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kf/runtime/gguf.h"
#include "kf/runtime/gguf_writer.h"
#include "kf/runtime/quant.h"

namespace {

using namespace kf;

[[noreturn]] void fail(const char *what, const absl::Status &status) {
  std::fprintf(stderr, "gguf_fuzzer: %s: %s\n", what,
               status.ToString().c_str());
  std::abort();
}

// Reads every byte of `file` that the reader handed out.
uint64_t touch(const gguf::File &file) {
  uint64_t sum = 0;
  auto add = [&](const auto &v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::string>) {
      for (char c : v)
        sum += static_cast<uint8_t>(c);
    } else { // the bits, whatever the value (a NaN, say)
      uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof v);
      sum += bits;
    }
  };
  for (const gguf::KeyValue &kv : file.metadata()) {
    add(kv.key);
    std::visit(
        [&](const auto &v) {
          if constexpr (gguf::detail::kIsVector<std::decay_t<decltype(v)>>)
            for (const auto &element : v)
              add(static_cast<typename std::decay_t<decltype(v)>::value_type>(
                  element));
          else
            add(v);
        },
        kv.value.storage());
  }
  std::vector<float> decoded;
  for (const gguf::TensorInfo &t : file.tensors()) {
    std::span<const uint8_t> data = file.data(t);
    for (uint8_t b : data)
      sum += b;
    if (!hasDequantize(t.format))
      continue;
    decoded.resize(static_cast<size_t>(t.elements()));
    if (absl::Status s = dequantize(t.format, data, decoded); !s.ok())
      fail("a parsed tensor does not decode", s);
  }
  return sum;
}

} // namespace

// touch()'s sum lands here, so that its reads cannot be optimised away.
volatile uint64_t touched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  absl::StatusOr<gguf::File> file = gguf::File::parse({data, size}, "in.gguf");
  if (!file.ok()) {
    if (file.status().message().find('\n') != absl::string_view::npos)
      fail("an error spans lines", file.status());
    return 0;
  }
  touched = touch(*file);

  absl::StatusOr<std::vector<uint8_t>> once =
      gguf::Writer::copyOf(*file).serialize("once.gguf");
  if (!once.ok())
    fail("the writer refuses what the reader accepted", once.status());
  absl::StatusOr<gguf::File> reread = gguf::File::parse(*once, "once.gguf");
  if (!reread.ok())
    fail("the reader refuses what the writer wrote", reread.status());
  absl::StatusOr<std::vector<uint8_t>> twice =
      gguf::Writer::copyOf(*reread).serialize("twice.gguf");
  if (!twice.ok() || *twice != *once)
    fail("writing a written file again changes it", twice.status());
  return 0;
}
