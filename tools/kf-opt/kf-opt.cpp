//===- kf-opt.cpp - mlir-opt for the kf dialect ---------------------------===//

#include "kf/Passes/InitAll.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::kf::registerAllDialects(registry);
  mlir::kf::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Kernelforge optimizer driver\n", registry));
}
