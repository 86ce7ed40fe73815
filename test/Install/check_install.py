#!/usr/bin/env python3
"""Installs strata into a fresh prefix and uses it as a user would.

  check_install.py BUILD_DIR SOURCE_DIR WORK_DIR

- `cmake --install` puts the tools, libraries, headers and packages in
  WORK_DIR/prefix.
- examples/embed is configured with find_package(strata) against that prefix
  and built: a C and a C++ program on libstrata_runtime.so and the C program
  on the static archive. The C program is built a second time with nothing
  but `pkg-config --cflags --libs strata-runtime`.
- examples/plugin is built against the installed plugin header
  (strata::plugin) and loaded by the installed strata.
- The installed strata compiles models/resnet_small; every program runs the
  module on the model's stored test input, and each output is compared with
  the model's stored output (the ONNX test-data layout).
- compile_and_run compiles the model in its own process through the
  installed compiler library (strata::compiler) and runs it; a model with an
  unsupported op gives strata::CompileError's one-line message.
- A truncated module gives the C API's one-line error and exit status 1.
- The installed Python package (when built) compiles and runs the model.

Any difference or failed step fails the test, naming the step.
"""

import glob
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, numpy_helper


def run(step, cmd, env=None, expect=0):
    result = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    if result.returncode != expect:
        sys.exit(f"check_install: {step} exited with {result.returncode} "
                 f"(expected {expect}):\n$ {' '.join(cmd)}\n{result.stdout}")
    return result.stdout


def read_tensor(path):
    tensor = TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor.name, numpy_helper.to_array(tensor)


def main():
    build, source, work = (os.path.abspath(p) for p in sys.argv[1:4])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "prefix")
    run("install", ["cmake", "--install", build, "--prefix", prefix])

    generator = ["-G", "Ninja"] if shutil.which("ninja") else []

    def build_example(name):
        """Configures and builds examples/NAME against the prefix."""
        directory = os.path.join(work, name)
        run(f"configuring examples/{name}",
            ["cmake", "-S", os.path.join(source, "examples", name), "-B",
             directory, f"-DCMAKE_PREFIX_PATH={prefix}",
             "-DCMAKE_BUILD_TYPE=Release"] + generator)
        run(f"building examples/{name}", ["cmake", "--build", directory])
        return directory

    embed = build_example("embed")

    # The C program again, from pkg-config's flags alone.
    pc_env = dict(os.environ,
                  PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    libdir = run("pkg-config", ["pkg-config", "--variable=libdir",
                                "strata-runtime"], env=pc_env).strip()
    flags = run("pkg-config", ["pkg-config", "--cflags", "--libs",
                               "strata-runtime"], env=pc_env).split()
    pc_program = os.path.join(work, "run_module_pkgconfig")
    run("building run_module.c with pkg-config",
        ["cc", "-O1", os.path.join(source, "examples/embed/run_module.c"),
         "-o", pc_program] + flags + [f"-Wl,-rpath,{libdir}"])

    plugin = build_example("plugin")

    strata = os.path.join(prefix, "bin", "strata")
    model_dir = os.path.join(source, "models", "resnet_small")
    module = os.path.join(work, "resnet_small.strata")
    plugin_so = os.path.join(plugin, "libstrata-example-plugin.so")
    env = dict(os.environ, STRATA_CACHE_DIR=os.path.join(work, "cache"),
               STRATA_PLUGIN_PATHS=plugin_so)
    # The plugin's pass runs in the kernel stage (its default edit) and
    # annotates each kernel.
    kernels = run("the installed strata-opt with the plugin",
                  [os.path.join(prefix, "bin", "strata-opt"),
                   "--strata-stage-kernel",
                   os.path.join(source, "test/Compile/Inputs/"
                                "precision-fused.mlir")], env=env)
    if "example.linalg_ops" not in kernels:
        sys.exit("check_install: the plugin built against the installed "
                 "strata did not edit the kernel stage")
    run("compiling with the installed strata and plugin",
        [strata, "compile", os.path.join(model_dir, "model.onnx"), "-o",
         module], env=env)

    inputs = os.path.join(work, "inputs")
    os.makedirs(inputs)
    data_set = os.path.join(model_dir, "test_data_set_0")
    expected = {}
    for name in sorted(os.listdir(data_set)):
        tensor_name, array = read_tensor(os.path.join(data_set, name))
        if name.startswith("input_"):
            array.tofile(os.path.join(inputs, tensor_name + ".bin"))
        else:
            expected[tensor_name] = array

    def run_and_compare(program, args, env=None):
        """Runs `program` ARGS --inputs ... --outputs DIR and compares every
        output it writes with the stored one."""
        label = os.path.basename(program)
        outputs = os.path.join(work, "out-" + label)
        os.makedirs(outputs)
        text = run(label, [program] + args + ["--inputs", inputs,
                                              "--outputs", outputs], env=env)
        for name, want in expected.items():
            got = np.fromfile(os.path.join(outputs, name + ".bin"),
                              dtype=want.dtype)
            if got.size != want.size or not np.allclose(
                    got, want.reshape(-1), rtol=1e-3, atol=1e-4):
                sys.exit(f"check_install: {label}: output '{name}' differs "
                         f"from the stored output\n{text}")

    programs = [os.path.join(embed, p) for p in
                ("run_module", "run_module_cpp", "run_module_static")]
    programs.append(pc_program)
    for program in programs:
        run_and_compare(program, [module, "--threads", "2"])

    # The compiler as a library: compile_and_run compiles the model in its
    # own process (strata::compiler) and runs it.
    compile_and_run = os.path.join(embed, "compile_and_run")
    if glob.glob(os.path.join(prefix, "lib*", "libstrata_compiler.so*")) and \
            not os.path.exists(compile_and_run):
        sys.exit("check_install: examples/embed did not build compile_and_run "
                 "although the prefix has the compiler library")
    if os.path.exists(compile_and_run):
        run_and_compare(compile_and_run,
                        [os.path.join(model_dir, "model.onnx")], env=env)
        programs.append(compile_and_run)
        # A model the compiler refuses: strata::CompileError, one line
        # naming the file and the node.
        bad = os.path.join(source, "test", "BadInput",
                           "unknown-onnx-op.onnxtxt")
        text = run("compile_and_run on an unsupported op",
                   [compile_and_run, bad], env=env, expect=1)
        want = f"compile_and_run: {bad}: error: "
        if want not in text or "reproducer" in text:
            sys.exit(f"check_install: compile_and_run's error is\n{text}\n"
                     f"and does not contain\n{want}")

    truncated = os.path.join(work, "truncated.strata")
    with open(module, "rb") as f:
        head = f.read(1000)
    with open(truncated, "wb") as f:
        f.write(head)
    text = run("run_module on a truncated module",
               [programs[0], truncated], expect=1)
    want = "run_module: loading the module: STRATA_ERROR_INVALID_MODULE: " \
           f"strata module '{truncated}': "
    if want not in text:
        sys.exit(f"check_install: the truncated module's error is\n{text}\n"
                 f"and does not contain\n{want}")
    # The installed Python package, when the build has one: it compiles and
    # runs the model from the prefix alone.
    sites = glob.glob(os.path.join(prefix, "lib*", "python3*",
                                   "dist-packages"))
    if sites:
        script = (
            "import sys, numpy as np, strata\n"
            "m = strata.compile(sys.argv[1])\n"
            "x = np.fromfile(sys.argv[2], np.float32).reshape(1, 3, 32, 32)\n"
            "want = np.fromfile(sys.argv[3], np.float32).reshape(1, 10)\n"
            "np.testing.assert_allclose(m.run({'x': x})['y'], want,\n"
            "                           rtol=1e-3, atol=1e-4)\n"
            "assert strata.__file__.startswith(sys.argv[4]), strata.__file__\n")
        run("the installed Python package",
            ["/usr/bin/python3", "-c", script,
             os.path.join(model_dir, "model.onnx"),
             os.path.join(inputs, "x.bin"),
             os.path.join(work, "out-run_module", "y.bin"), sites[0]],
            env=dict(os.environ, PYTHONPATH=sites[0]))
    print(f"check_install: {len(programs)} programs built against {prefix} "
          f"match {model_dir}'s stored outputs"
          + (", and so does the installed Python package" if sites else ""))


if __name__ == "__main__":
    main()
