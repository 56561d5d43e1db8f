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
      const FormatInfo &from = formatInfo(t.format);
      const FormatInfo &to = formatInfo(*rule->target);
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
      else if (t.shape[0] % to.blockElems != 0)
        keep(absl::StrCat("has rows of ", t.shape[0],
                          " elements, not a multiple of ", to.blockElems,
                          " (the block size of ", toAbsl(to.name), ")"));
      else if (!hasDequantize(t.format))
        return absl::UnimplementedError(
            absl::StrCat(file.name(), ": tensor ", gguf::quoted(t.name), " is ",
                         toAbsl(from.name),
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
                      std::span<uint8_t> dst, Format to, int64_t rowElements,
                      int64_t rows, int threads, Progress &progress,
                      std::string_view label) {
  uint64_t srcRow = *rowBytes(from, rowElements);
  uint64_t dstRow = *rowBytes(to, rowElements);
  return parallelRows(
      rows, rowElements, threads, progress, label,
      [&](int64_t r, std::span<float> row) {
        KF_RETURN_IF_ERROR(
            dequantize(from, src.subspan(r * srcRow, srcRow), row));
        return kf::quantize(to, row, dst.subspan(r * dstRow, dstRow));
      });
}

} // namespace

absl::Status quantize(const gguf::File &file, const std::string &outPath,
                      const Recipe &recipe, const QuantizeOptions &options) {
  KF_ASSIGN_OR_RETURN(std::vector<Step> steps, plan(file, recipe, options.log));
  gguf::Writer writer;
  for (const gguf::KeyValue &kv : file.metadata())
    writer.addMetadata(kv.key, kv.value);
  uint64_t totalRows = 0;
  bool quantized = false;
  for (const Step &step : steps) {
    Format format = step.target.value_or(step.tensor->format);
    quantized |= formatInfo(format).blockElems > 1;
    if (step.target)
      totalRows += step.tensor->rows();
  }
  if (quantized && !file.find(gguf::kQuantizationVersionKey))
    writer.addMetadata(std::string(gguf::kQuantizationVersionKey),
                       gguf::kQuantizationVersion);

  Progress progress(options.progress, totalRows);
  int reencoded = 0;
  uint64_t bytesIn = 0, bytesOut = 0;
  for (const Step &step : steps) {
    const gguf::TensorInfo &t = *step.tensor;
    std::span<const uint8_t> data = file.data(t);
    bytesIn += t.bytes;
    if (!step.target) {
      bytesOut += t.bytes;
      writer.addTensor(t.name, t.format, t.shape, data);
      continue;
    }
    ++reencoded;
    bytesOut += *rowBytes(*step.target, t.shape[0]) * t.rows();
    writer.addTensor(t.name, *step.target, t.shape,
                     [&tensor = t, &options, &progress, data,
                      to = *step.target](std::span<uint8_t> dst) {
                       return reencode(data, tensor.format, dst, to,
                                       tensor.shape[0], tensor.rows(),
                                       options.threads, progress, tensor.name);
                     });
  }
  absl::Status written = writer.write(outPath);
  progress.finish();
  KF_RETURN_IF_ERROR(written);
  if (options.log)
    *options.log << file.name() << " -> " << outPath << ": " << reencoded
                 << " tensors re-encoded, " << steps.size() - reencoded
                 << " kept; " << bytesIn << " -> " << bytesOut
                 << " bytes of tensor data\n";
  return absl::OkStatus();
}

} // namespace kf::gguf_tool
