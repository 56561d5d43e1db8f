#include "absl/strings/str_cat.h"
#include "commands.h"
#include "kf/runtime/absl_compat.h"
#include "kf/runtime/gguf_writer.h"
#include "kf/runtime/quant.h"
#include "kf/runtime/status_macros.h"
#include "parallel_rows.h"
#include "progress.h"

namespace kf::gguf_tool {

namespace {

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
// (format `to`) on `threads` threads.
absl::Status reencode(std::span<const uint8_t> src, Format from,
                      std::span<uint8_t> dst, Format to, int64_t row_elements,
                      int64_t rows, int threads, Progress &progress,
                      std::string_view label) {
  uint64_t src_row = *row_bytes(from, row_elements);
  uint64_t dst_row = *row_bytes(to, row_elements);
  return parallel_rows(
      rows, row_elements, threads, progress, label,
      [&](int64_t r, std::span<float> row) {
        KF_RETURN_IF_ERROR(
            dequantize(from, src.subspan(r * src_row, src_row), row));
        return kf::quantize(to, row, dst.subspan(r * dst_row, dst_row));
      });
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
  if (quantized && !file.find(gguf::kQuantizationVersionKey))
    writer.add_metadata(std::string(gguf::kQuantizationVersionKey),
                        gguf::kQuantizationVersion);

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
