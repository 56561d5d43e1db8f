//===- BlockCaches.cpp - Size each matmul's L2 and L1 blocks --------------===//

#include "kf/Passes/Passes.h"

#include "KernelDecisions.h"
#include "kf/Codegen/MatmulKernel.h"
#include "kf/Tiling/CacheBlocks.h"

namespace mlir::kf {
#define GEN_PASS_DEF_KFBLOCKCACHES
#include "kf/Passes/Passes.h.inc"

namespace {

struct BlockCachesPass : impl::KfBlockCachesBase<BlockCachesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = getTargetOrError(module, "kf-block-caches");
    if (!target)
      return signalPassFailure();
    WalkResult walk = module.walk([&](Operation *op) {
      if (!isMatmulOp(op))
        return WalkResult::advance();
      for (const Matmul &matmul : getMatmuls(op)) {
        KernelAttr kernel = getKernelOrError(op, matmul, "kf-block-caches");
        if (!kernel)
          return WalkResult::interrupt();
        // Blocks from the tuning file (or written by hand) are kept.
        if (kernel.getL2Rows() && kernel.getL1K())
          continue;
        ::kf::tiling::CacheBlockProblem problem{
            .format = static_cast<::kf::Format>(kernel.getLayout().format),
            .coding = kernel.getLayout().coding,
            .rows = kernel.getRows(),
            .columns = kernel.getWidestColumnTile(),
            .n = matmul.n,
            .k = matmul.k,
            .threads = kernel.getThreads(),
            .l1dBytes = target.getL1d(),
            .l2Bytes = target.getL2(),
            .l1K = kernel.getL1K()};
        if (kernel.isDecodedOnce())
          problem.decodeScratchBytes = ::kf::codegen::kMaxDecodeScratchBytes;
        ::kf::tiling::CacheBlocks blocks = ::kf::tiling::blockCaches(problem);
        setKernel(op, matmul.name,
                  kernel.withCacheBlocks(
                      kernel.getL2Rows().value_or(blocks.l2Rows), blocks.l1K));
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::kf
