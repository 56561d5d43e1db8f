//===- Passes.td - kf passes --------------------------------*- tablegen -*-===//

#ifndef KF_PASSES_PASSES
#define KF_PASSES_PASSES

include "mlir/Pass/PassBase.td"

def KfSetTarget : Pass<"kf-set-target", "::mlir::ModuleOp"> {
  let summary = "Attach the #kf.target the module is compiled for";
  let description = [{
    Sets the module's `kf.target` attribute to the description of a named
    target (`x86-64-v3`, `znver5`, `neoverse-v1`, ...; `kf-compile
    --list-targets` lists them) or of the host CPU (`host`, the default:
    detected ISA features, cache sizes from sysfs, usable cores). Every later
    kernel decision reads this attribute, never the machine running the
    compiler, so a plan for any target can be compiled and tested anywhere.

    An existing `kf.target` is replaced. An unknown name fails the pass.

    Example: `kf-opt --kf-set-target=target=znver5 in.mlir`
  }];
  let options = [
    Option<"targetName", "target", "std::string", /*default=*/"\"host\"",
           "named target, or 'host' for the CPU running the compiler">
  ];
  let dependentDialects = ["::mlir::kf::KfDialect"];
}

#endif // KF_PASSES_PASSES
