//===- HcMix.h - What the hyper-connection kernels share ------------------===//
//
// What more than one of the kf.hc_* kernels emits: their specs' checks and
// names, their entry's loop over tokens (with the mixes of the tokens'
// streams, for the kernels that mix), and the golden's hyper-connection
// arithmetic (hyper_connections.cpp) they share: the sigmoid input weights
// and the weighted sum of the streams. Every sum runs in the golden's order,
// in fp64 where it accumulates in fp64, so that each result is the golden's
// IEEE operation on the same operands.
//
//===----------------------------------------------------------------------===//

#ifndef KF_CODEGEN_KERNELS_OPS_HCMIX_H
#define KF_CODEGEN_KERNELS_OPS_HCMIX_H

#include "kf/Target/TargetInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace kf::codegen::hc {

/// Floats per vector of the kernels' loops over a stream.
constexpr int64_t kLanes = 16;

/// Fails, naming the kernel (`what`), unless mult is in [1, kMaxHcMult] and
/// D a positive multiple of kLanes.
llvm::Error verifyShape(const std::string &what, int64_t mult, int64_t d);
/// Fails, naming the kernel, unless eps and normEps are finite and
/// non-negative.
llvm::Error verifyEpsilons(const std::string &what, float eps, float normEps);

/// "kf_<op>_m<mult>_d<d>", the start of a kernel's symbol.
std::string getSymbolName(llvm::StringRef op, int64_t mult, int64_t d);
/// "<op> kernel [mult = <mult>, D = <d><more>]", for messages.
std::string describe(llvm::StringRef op, int64_t mult, int64_t d,
                     llvm::StringRef more = "");
/// `v`'s bits in hex ("358637bd"), for symbols.
std::string getBitsHex(float v);

/// What a kernel does for one token: `operands` are the step's operand
/// addresses, `token` its index (i64); `b` is inside the token loop.
using TokenBody = llvm::function_ref<void(
    mlir::OpBuilder &b, mlir::Location loc,
    llvm::ArrayRef<mlir::Value> operands, mlir::Value token)>;
/// Appends the step kernel `name` to `module` for `target`: one work item
/// per token, each running `body` on the addresses of the step's
/// `operandCount` operands.
mlir::func::FuncOp buildTokenKernel(mlir::ModuleOp module, llvm::StringRef name,
                                    const target::TargetInfo &target,
                                    int64_t operandCount, TokenBody body);
/// What a mixing kernel does for one token once its mixes are known:
/// `operands` are the step's operand addresses, `token` its index (i64), `m`
/// its mixes (f32 scalars); `b` is inside the token loop.
using MixedTokenBody =
    llvm::function_ref<void(mlir::OpBuilder &b, mlir::Location loc,
                            llvm::ArrayRef<mlir::Value> operands,
                            mlir::Value token, llvm::ArrayRef<mlir::Value> m)>;
/// The mixes a kernel computes per token: its streams' `width` values with
/// each of the first `rows` rows of fn, and their inverse RMS's epsilon.
struct MixShape {
  int64_t width = 0;
  int64_t rows = 0;
  float normEps = 0.0f;
};
/// Appends the step kernel `name` to `module` for `target`: one work item
/// per token, operand 0 the tokens' streams (rows of shape.width floats) and
/// operand 1 fn (rows of as many). Each token's mixes are the golden's: m_i
/// = fp32(Σ_n z_n · fn_in, in fp64 from 0 in n's order) · r, z the token's
/// stream values and r their inverse RMS with shape.normEps, as the golden's
/// inverseRms computes it: an item range's tokens in blocks of the target's
/// fp64 lanes, a lone token alone (HcMix.cpp). Then `body` runs on each
/// token's mixes and the addresses of the step's `operandCount` operands.
mlir::func::FuncOp buildMixKernel(mlir::ModuleOp module, llvm::StringRef name,
                                  const target::TargetInfo &target,
                                  int64_t operandCount, const MixShape &shape,
                                  MixedTokenBody body);
/// Token `token`'s row of `floats` floats in the rows at `ptr`.
mlir::Value emitTokenRow(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value ptr, mlir::Value token, int64_t floats);

/// An i64 constant.
mlir::Value emitIndex(mlir::OpBuilder &b, mlir::Location loc, int64_t value);
/// `lanes` floats (vector<lanes x f32>) at `ptr` + `bytes`.
mlir::Value emitLoadFloats(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value ptr, mlir::Value bytes, int64_t lanes);
/// One float (f32) at `ptr` + 4 · `index`.
mlir::Value emitLoadFloat(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value ptr, int64_t index);
/// A vector of `lanes` copies of the scalar `value`.
mlir::Value emitBroadcast(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, int64_t lanes);

/// fp32(1 / (1 + e^-x)) in fp64 for each lane of `x` (vector<N x f32>), the
/// golden's sigmoidF32 with emitExp's e^x.
mlir::Value emitSigmoid(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// The lanes of `parts` (f32 scalars) as one vector<N x f32>.
mlir::Value emitVectorOf(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<mlir::Value> parts);

/// The input weights pre_j = sigmoid(scale · m_j + base_j) + eps of the mult
/// mixes `m` (f32 scalars), `base` the address of their bases and `scale`
/// an f32 scalar: a vector<mult x f32>.
mlir::Value emitPreWeights(mlir::OpBuilder &b, mlir::Location loc,
                           llvm::ArrayRef<mlir::Value> m, mlir::Value base,
                           mlir::Value scale, float eps);

/// out_d = bf16(fp32(Σ_j weight_j · stream_j,d, in fp64 from 0 in j's
/// order)) for the D values of one token: `streams` its mult streams of `d`
/// floats, `weights` a vector<mult x f32>, `out` D floats.
void emitWeightedStreamSum(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value streams, mlir::Value weights, int64_t d,
                           mlir::Value out);

} // namespace kf::codegen::hc

#endif // KF_CODEGEN_KERNELS_OPS_HCMIX_H
