//===- KfTypes.cpp - kf types ---------------------------------------------===//

#include "kf/Dialect/KfDialect.h"

#include "kf/runtime/format.h"

using namespace mlir;
using namespace mlir::kf;

namespace {

/// The runtime's table row for a dialect format. Both enums are generated from
/// formats.def with the ggml type id as value, so the cast is the mapping.
const ::kf::FormatInfo &formatInfo(Format format) {
  return ::kf::formatInfo(static_cast<::kf::Format>(format));
}

} // namespace

FailureOr<Format> mlir::kf::parseFormat(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (failed(parser.parseKeyword(&keyword)))
    return failure();
  if (std::optional<Format> format = symbolizeFormat(keyword))
    return *format;
  InFlightDiagnostic diag = parser.emitError(loc)
                            << "unknown format '" << keyword
                            << "' (expected one of ";
  llvm::interleaveComma(
      ::kf::allFormats(), diag,
      [&](const ::kf::FormatInfo &info) { diag << info.name; });
  diag << ")";
  return failure();
}

LogicalResult QWeightType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  Format format, ArrayRef<int64_t> shape) {
  const ::kf::FormatInfo &info = formatInfo(format);
  if (info.role == ::kf::FormatRole::Activation)
    return emitError() << "!kf.qweight: " << info.name
                       << " is an activation format and cannot hold weights";
  if (shape.empty() || shape.size() > 3)
    return emitError() << "!kf.qweight: expected shape [cols], [rows, cols] "
                          "or [experts, rows, cols], got "
                       << shape.size() << " dimensions";
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "!kf.qweight: dimensions must be positive, got "
                         << d;
  if (shape.back() % info.blockElems != 0)
    return emitError() << "!kf.qweight: " << info.name
                       << " stores rows in blocks of " << info.blockElems
                       << ", but cols = " << shape.back()
                       << " is not a multiple of " << info.blockElems;
  return success();
}

bool QWeightType::isIntegerTable() const {
  return formatInfo(getFormat()).role == ::kf::FormatRole::Integer;
}

uint64_t QWeightType::getSizeInBytes() const {
  uint64_t rows = 1;
  for (int64_t d : getShape().drop_back())
    rows *= static_cast<uint64_t>(d);
  return rows *
         *::kf::rowBytes(static_cast<::kf::Format>(getFormat()), getCols());
}

namespace {

/// Cache elements are stored as a float type the runtime can hold.
/// `rowsName` names the first size: rows of a ring, ratio of a compressor.
LogicalResult verifyCacheShape(function_ref<InFlightDiagnostic()> emitError,
                               StringRef type, StringRef rowsName, int64_t rows,
                               int64_t dim, Type element) {
  if (rows <= 0 || dim <= 0)
    return emitError() << type << ": " << rowsName
                       << " and dim must be positive, got " << rowsName << " = "
                       << rows << ", dim = " << dim;
  if (!element.isF32() && !element.isBF16() && !element.isF16())
    return emitError() << type << ": element must be f32, bf16 or f16, got "
                       << element;
  return success();
}

} // namespace

LogicalResult
WindowCacheType::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t rows, int64_t dim, Type element) {
  return verifyCacheShape(emitError, "!kf.window_cache", "rows", rows, dim,
                          element);
}

LogicalResult
CompressedCacheType::verify(function_ref<InFlightDiagnostic()> emitError,
                            int64_t ratio, int64_t dim, bool overlap,
                            Type element) {
  return verifyCacheShape(emitError, "!kf.compressed_cache", "ratio", ratio,
                          dim, element);
}
