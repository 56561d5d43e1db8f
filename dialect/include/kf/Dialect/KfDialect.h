//===- KfDialect.h - The kf dialect -----------------------------*- C++ -*-===//
//
// The one header to include for the kf dialect: dialect, enums, attributes,
// types and ops.
//
//===----------------------------------------------------------------------===//

#ifndef KF_DIALECT_KFDIALECT_H
#define KF_DIALECT_KFDIALECT_H

#include "kf/Target/TargetInfo.h"
#include "kf/runtime/packed_layout.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kf/Dialect/KfDialect.h.inc"
#include "kf/Dialect/KfEnums.h.inc"

namespace mlir::kf {
/// Parses a format mnemonic ("q8_0"); on an unknown one, reports the formats
/// there are.
FailureOr<Format> parseFormat(AsmParser &parser);
/// Parses a float literal into an f64 APFloat (#kf.rope's parameters).
FailureOr<llvm::APFloat> parseDouble(AsmParser &parser);

/// A packed weight layout (docs/codegen.md): `format` with its rows
/// interleaved in groups of `rows`, its weights in `coding`. Written
/// `q8_0_r16`; a ternary layout (IQ1_S's and IQ1_M's) `iq1_s_r16_ternary`.
struct PackedLayout {
  Format format;
  int64_t rows;
  ::kf::WeightCoding coding = ::kf::WeightCoding::File;

  bool operator==(const PackedLayout &other) const = default;
};
llvm::hash_code hash_value(const PackedLayout &layout);
/// "q8_0_r16", "iq1_s_r16_ternary".
std::string stringifyPackedLayout(const PackedLayout &layout);
FailureOr<PackedLayout> parsePackedLayout(AsmParser &parser);
void printPackedLayout(AsmPrinter &printer, const PackedLayout &layout);

/// #kf.kernel's `cols`: `dynamic` or `[8, 4, 3, 2]`.
FailureOr<Attribute> parseColumnTiles(AsmParser &parser);
void printColumnTiles(AsmPrinter &printer, Attribute cols);
} // namespace mlir::kf

#define GET_ATTRDEF_CLASSES
#include "kf/Dialect/KfAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "kf/Dialect/KfTypes.h.inc"

#define GET_OP_CLASSES
#include "kf/Dialect/KfOps.h.inc"

#endif // KF_DIALECT_KFDIALECT_H
