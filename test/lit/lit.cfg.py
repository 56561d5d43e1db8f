# -*- Python -*-
import os
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "Kernelforge"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kf_obj_root, "test", "lit")

llvm_config.use_default_substitutions()
tool_dirs = [os.path.join(config.kf_obj_root, "bin"), config.llvm_tools_dir]
# `not` and `count` at the start of a RUN line are found on PATH, as upstream.
for d in tool_dirs:
    llvm_config.with_environment("PATH", d, append_path=True)
llvm_config.add_tool_substitutions(
    ["kf-opt", "kf-compile", "kf-gguf", "kf-run", "kf-bench", "llvm-readelf",
     "llvm-nm"],
    tool_dirs)
config.substitutions.append(("%kf_runtime_lib", config.kf_runtime_lib))
config.substitutions.append(("%kf_src_root", config.kf_src_root))
config.substitutions.append(("%kf_bin", os.path.join(config.kf_obj_root, "bin")))

# Host ISA features as lit features (host-avx2, host-avx512vnni, host-dotprod,
# ...), read with the project's own detection so REQUIRES: lines agree with what
# the compiler targets for "host".
kf_compile = os.path.join(config.kf_obj_root, "bin", "kf-compile")
out = subprocess.run([kf_compile, "--print-target=host"], capture_output=True, text=True)
if out.returncode != 0:
    lit_config.fatal("kf-compile --print-target=host failed: " + out.stderr)
for line in out.stdout.splitlines():
    key, _, value = line.partition(":")
    if key == "features":
        for feature in value.split():
            config.available_features.add("host-" + feature.lstrip("+"))
    elif key == "arch":
        config.available_features.add("host-" + value.strip())
