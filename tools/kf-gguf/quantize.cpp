#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "commands.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/gguf_writer.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"
#include "progress.h"

namespace kf::gguf_tool {

namespace {

// ggml's GGML_QNT_VERSION: files with quantized tensors carry it.
constexpr std::string_view kQuantizationVersionKey =
    "general.quantization_version";
constexpr uint32_t kQuantizationVersion = 2;

// What happens to one tensor: re-encoded into `target`, or copied as it is.
struct Step {
  const gguf::TensorInfo *tensor;
  std::optional<Format> target;
};

absl::StatusOr<std::vector<Step>>
plan(const gguf::File &file, const Recipe &recipe, std::ostream *log) {
  std::vector<Step> steps;
  for (const gguf::TensorInfo &t : file.tensors()) {
    const Recipe::Rule *rule = recipe.match(t.name);
    Step step{&t, std::nullopt};
    if (rule && rule->target && *rule->target != t.format) {
      const FormatInfo &from = format_info(t.format);
      const FormatInfo &to = format_info(*rule->target);
      auto keep = [&](std::string why) {
        if (log)
          *log << "warning: " << file.name() << ": tensor "
               << gguf::quoted(t.name) << " " << why << "; kept as "
               << from.name << "\n";
      };
      if (from.role != FormatRole::Weight)
        keep("is an integer table");
      else if (t.shape.size() == 1)
        keep("is 1-D");
      else if (t.shape[0] % to.block_elems != 0)
        keep(absl::StrCat("has rows of ", t.shape[0],
                          " elements, not a multiple of ", to.block_elems,
                          " (the block size of ", to_absl(to.name), ")"));
      else if (!has_dequantize(t.format))
        return absl::UnimplementedError(
            absl::StrCat(file.name(), ": tensor ", gguf::quoted(t.name), " is ",
                         to_absl(from.name),
                         ", which Kernelforge cannot decode yet, so rule ",
                         gguf::quoted(rule->text), " cannot re-encode it"));
      else
        step.target = rule->target;
    }
    steps.push_back(step);
  }
  return steps;
}

// Decodes `src` (format `from`) row by row and encodes each row into `dst`
// (format `to`) on `threads` threads. The calling thread works too and is
// the one that draws the progress bar.
absl::Status reencode(std::span<const uint8_t> src, Format from,
                      std::span<uint8_t> dst, Format to, int64_t row_elements,
                      int64_t rows, int threads, Progress &progress,
                      std::string_view label) {
  uint64_t src_row = *row_bytes(from, row_elements);
  uint64_t dst_row = *row_bytes(to, row_elements);
  // Rows are taken in batches of about 64 Ki elements: few enough atomic
  // operations, small enough batches to keep every thread busy to the end.
  int64_t batch = std::max<int64_t>(1, (int64_t{1} << 16) / row_elements);
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  absl::Status error;
  auto work = [&](bool draws) {
    std::vector<float> row(row_elements);
    while (!failed.load(std::memory_order_relaxed)) {
      int64_t begin = next.fetch_add(batch);
      if (begin >= rows)
        return;
      int64_t end = std::min(rows, begin + batch);
      for (int64_t r = begin; r < end; ++r) {
        absl::Status s =
            dequantize(from, src.subspan(r * src_row, src_row), row);
        if (s.ok())
          s = quantize(to, row, dst.subspan(r * dst_row, dst_row));
        if (!s.ok()) {
          std::lock_guard lock(error_mutex);
          if (error.ok())
            error = s;
          failed = true;
          return;
        }
      }
      progress.add(end - begin);
      if (draws)
        progress.draw(label);
    }
  };
  int64_t batches = (rows + batch - 1) / batch;
  std::vector<std::jthread> helpers;
  for (int64_t i = 1; i < std::min<int64_t>(threads, batches); ++i)
    helpers.emplace_back(work, false);
  work(true);
  helpers.clear(); // joins
  progress.draw(label, /*force=*/true);
  return error;
}

} // namespace

absl::Status quantize(const gguf::File &file, const std::string &out_path,
                      const Recipe &recipe, const QuantizeOptions &options) {
  KF_ASSIGN_OR_RETURN(std::vector<Step> steps, plan(file, recipe, options.log));
  gguf::Writer writer;
  for (const gguf::KeyValue &kv : file.metadata())
    writer.add_metadata(kv.key, kv.value);
  uint64_t total_rows = 0;
  bool quantized = false;
  for (const Step &step : steps) {
    Format format = step.target.value_or(step.tensor->format);
    quantized |= format_info(format).block_elems > 1;
    if (step.target)
      total_rows += step.tensor->rows();
  }
  if (quantized && !file.find(kQuantizationVersionKey))
    writer.add_metadata(std::string(kQuantizationVersionKey),
                        kQuantizationVersion);

  Progress progress(options.progress, total_rows);
  int reencoded = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  for (const Step &step : steps) {
    const gguf::TensorInfo &t = *step.tensor;
    std::span<const uint8_t> data = file.data(t);
    bytes_in += t.bytes;
    if (!step.target) {
      bytes_out += t.bytes;
      writer.add_tensor(t.name, t.format, t.shape, data);
      continue;
    }
    ++reencoded;
    bytes_out += *row_bytes(*step.target, t.shape[0]) * t.rows();
    writer.add_tensor(t.name, *step.target, t.shape,
                      [&tensor = t, &options, &progress, data,
                       to = *step.target](std::span<uint8_t> dst) {
                        return reencode(data, tensor.format, dst, to,
                                        tensor.shape[0], tensor.rows(),
                                        options.threads, progress, tensor.name);
                      });
  }
  absl::Status written = writer.write(out_path);
  progress.finish();
  KF_RETURN_IF_ERROR(written);
  if (options.log)
    *options.log << file.name() << " -> " << out_path << ": " << reencoded
                 << " tensors re-encoded, " << steps.size() - reencoded
                 << " kept; " << bytes_in << " -> " << bytes_out
                 << " bytes of tensor data\n";
  return absl::OkStatus();
}

} // namespace kf::gguf_tool
