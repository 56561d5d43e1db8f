#include <algorithm>
#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "kf/runtime/absl_compat.h"

namespace kf::gguf_tool {

namespace {

// Arrays show this many elements and long strings this many bytes.
constexpr size_t kShownElements = 8;
constexpr size_t kShownStringBytes = 64;

std::string show(const std::string &s) {
  std::string shown = absl::StrCat(
      "\"", absl::Utf8SafeCEscape(s.substr(0, kShownStringBytes)), "\"");
  if (s.size() > kShownStringBytes)
    absl::StrAppend(&shown, "... (", s.size(), " bytes)");
  return shown;
}
std::string show(bool b) { return b ? "true" : "false"; }
std::string show(int8_t v) { return absl::StrCat(int{v}); }
std::string show(uint8_t v) { return absl::StrCat(unsigned{v}); }
template <typename T> std::string show(T v) { return absl::StrCat(v); }

std::string show(const gguf::Value &value) {
  return std::visit(
      [](const auto &v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (gguf::detail::kIsVector<T>) {
          std::vector<std::string> shown;
          for (size_t i = 0; i < v.size() && i < kShownElements; ++i)
            shown.push_back(show(static_cast<typename T::value_type>(v[i])));
          if (v.size() > kShownElements)
            shown.push_back("...");
          return absl::StrCat("[", v.size(), "] ", absl::StrJoin(shown, ", "));
        } else {
          return show(v);
        }
      },
      value.storage());
}

std::string bitsPerWeight(uint64_t bytes, int64_t params) {
  return params == 0 ? "-" : absl::StrFormat("%.4f", 8.0 * bytes / params);
}

} // namespace

void info(const gguf::File &file, std::ostream &out) {
  out << absl::StreamFormat("%s: GGUF v%d, %d bytes, alignment %d, %d "
                            "metadata keys, %d tensors, data at byte %d\n",
                            file.name(), file.version(), file.bytes().size(),
                            file.alignment(), file.metadata().size(),
                            file.tensors().size(), file.dataOffset());

  size_t keyWidth = 0, typeWidth = 0;
  for (const gguf::KeyValue &kv : file.metadata()) {
    keyWidth = std::max(keyWidth, kv.key.size());
    typeWidth = std::max(typeWidth, kv.value.typeDescription().size());
  }
  out << "\nmetadata:\n";
  for (const gguf::KeyValue &kv : file.metadata())
    out << absl::StreamFormat("  %-*s  %-*s  %s\n", keyWidth, kv.key, typeWidth,
                              kv.value.typeDescription(), show(kv.value));

  if (file.tensors().empty())
    return;
  size_t nameWidth = 4, shapeWidth = 5;
  for (const gguf::TensorInfo &t : file.tensors()) {
    nameWidth = std::max(nameWidth, t.name.size());
    shapeWidth = std::max(shapeWidth, gguf::shapeString(t.shape).size());
  }
  out << "\ntensors (shape in ggml order, row length first):\n";
  out << absl::StreamFormat("  %-*s  %-*s  %-9s  %s\n", nameWidth, "name",
                            shapeWidth, "shape", "format", "bytes");
  struct Total {
    int tensors = 0;
    int64_t params = 0;
    uint64_t bytes = 0;
  };
  std::map<std::string_view, Total> totals; // by format name
  Total all;
  for (const gguf::TensorInfo &t : file.tensors()) {
    std::string_view format = formatInfo(t.format).name;
    out << absl::StreamFormat("  %-*s  %-*s  %-9s  %d\n", nameWidth, t.name,
                              shapeWidth, gguf::shapeString(t.shape),
                              toAbsl(format), t.bytes);
    for (Total *total : {&totals[format], &all}) {
      ++total->tensors;
      total->params += t.elements();
      total->bytes += t.bytes;
    }
  }
  out << "\ntotals:\n";
  out << absl::StreamFormat("  %-9s  %7s  %14s  %14s  %8s\n", "format",
                            "tensors", "parameters", "bytes", "bpw");
  auto row = [&](std::string_view name, const Total &total) {
    out << absl::StreamFormat("  %-9s  %7d  %14d  %14d  %8s\n", toAbsl(name),
                              total.tensors, total.params, total.bytes,
                              bitsPerWeight(total.bytes, total.params));
  };
  for (const auto &[format, total] : totals)
    row(format, total);
  row("all", all);
}

} // namespace kf::gguf_tool
