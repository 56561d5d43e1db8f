//===- SetTarget.cpp - Attach the module's #kf.target ---------------------===//

#include "kf/Passes/Passes.h"

#include "kf/Target/TargetInfo.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFSETTARGET
#include "kf/Passes/Passes.h.inc"

namespace {

struct SetTargetPass : impl::KfSetTargetBase<SetTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<::kf::target::TargetInfo> info =
        ::kf::target::lookupTarget(targetName);
    if (!info) {
      module.emitError() << "kf-set-target: "
                         << llvm::toString(info.takeError());
      return signalPassFailure();
    }
    module->setAttr(KfDialect::kTargetAttrName,
                    TargetAttr::get(&getContext(), *info));
  }
};

} // namespace
} // namespace mlir::kf
