# -*- Python -*-
# lit configuration for strata's tests: FileCheck tests of passes and the
# importer, -verify-diagnostics tests of verifiers, and bad-input tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "strata"

# `--param strata_tools_dir=DIR` runs the tests against another build of the
# tools (the sanitizer build).
config.strata_tools_dir = lit_config.params.get("strata_tools_dir",
                                                config.strata_tools_dir)
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.strata_obj_root, "test")
# A run against another build writes its files (lit's %t, the compile cache)
# apart from this build's own run, so that CTest can run the two at once.
if "strata_tools_dir" in lit_config.params:
    config.test_exec_root = os.path.join(
        config.test_exec_root, "Output-" +
        os.path.basename(os.path.dirname(os.path.abspath(config.strata_tools_dir))))
# `--param asan=1`: the tools under test are the AddressSanitizer/UBSan build
# (CTest's asan-bad-input); a test that only repeats, slowly, what the
# others already run under the sanitizers says `UNSUPPORTED: asan`.
if lit_config.params.get("asan"):
    config.available_features.add("asan")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(("%onnx_testdata", config.onnx_testdata_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.strata_tools_dir, append_path=True)

# Sanitizer builds: any leak, memory error or undefined behaviour fails.
config.environment["ASAN_OPTIONS"] = "detect_leaks=1"
# `strata compile/run/bench` use the compile cache: the tests' own, not the
# user's ~/.cache/strata.
config.environment["STRATA_CACHE_DIR"] = os.path.join(config.test_exec_root,
                                                      "strata-cache")
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"

# This build's own libraries (the example plugin), whichever tools run.
config.substitutions.append(("%own_lib",
                             os.path.join(config.strata_obj_root, "lib")))

# strata comes from the tools under test. The sanitizer build makes only
# strata, so strata-opt (pass-level checks) falls back to this build's own.
own_tools_dir = os.path.join(config.strata_obj_root, "bin")
llvm_config.add_tool_substitutions(
    ["strata"], [config.strata_tools_dir, config.llvm_tools_dir])
llvm_config.add_tool_substitutions(
    ["strata-opt"],
    [config.strata_tools_dir, own_tools_dir, config.llvm_tools_dir])
