//===- Options.h - what a compilation is asked for --------------*- C++ -*-===//
//
// The options of a compilation, in standard C++ alone: the compiler's
// internal API (strata/Compiler/Compiler.h) and the installed one
// (strata/Compile.h) share them.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_OPTIONS_H
#define STRATA_COMPILER_OPTIONS_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata {

struct CompileOptions {
  /// The target's name (strata/Target/Target.h): "cpu" (x86-64), "cuda"
  /// (NVIDIA GPUs, docs/gpu.md) or "rocm" (AMD GPUs, compile-only).
  std::string target = "cpu";
  /// The processor to generate code for. cpu: "native" (the host), "avx2"
  /// (x86-64-v3), "avx512" (x86-64-v4), or any LLVM CPU name. cuda:
  /// "native" (the H100/H200: a cubin for sm_90a, with PTX for sm_90 that
  /// later GPUs JIT-compile) or an NVPTX name ("sm_90a", "sm_90", "sm_80")
  /// for both. rocm: "native" (gfx942) or an AMDGPU name.
  std::string cpu = "native";
  /// Shapes for inputs with dynamic dimensions, by input name. Every
  /// dynamic dimension must be bound before code generation.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Values of small inputs, by input name, row-major (docs/compiler.md,
  /// "Values that set shapes"). The graph stage substitutes the value of an
  /// input only when a shape or a loop's trip count depends on it, and the
  /// module then requires that value at run time; other inputs stay
  /// run-time inputs whatever is given here.
  std::map<std::string, std::vector<double>> inputValues;
  /// The most elements an input may have for its value to be taken:
  /// shape-setting inputs are scalars and short lists (a window's size, a
  /// Range's bounds, a trip count).
  static constexpr size_t kMaxValueElements = 16;
  /// Hand matmul and convolution to oneDNN where the partitioner chooses to.
  bool useLibraries = true;
  /// Run every op that has one as the runtime's host kernel, as the ops on
  /// shapes known only at run time run (RunTimeShapes.cpp): a reference
  /// interpreter, for testing those kernels against stored outputs and for
  /// bisecting a wrong result. Slow.
  bool hostKernels = false;
  /// How tensors are stored between kernels: "" or "fp32" (as the model
  /// says), "fp16" or "bf16" (f32 tensors between kernels in that type,
  /// computed in f32 inside kernels; the model's inputs and outputs stay
  /// f32). The fused stage's strata-lower-precision (docs/compiler.md).
  std::string precision;
  /// Report each stage's progress on stderr.
  bool verbose = false;
  /// Without `verbose`, how a compile that takes longer than
  /// `progressAfterMs` shows what it is doing on stderr: Auto, a line
  /// refreshed in place when stderr is a terminal and nothing otherwise;
  /// Lines, a line per step; Off. The strata tools take them from
  /// $STRATA_PROGRESS (1: lines, 0: off) and $STRATA_PROGRESS_AFTER_MS.
  enum class Progress { Auto, Lines, Off };
  Progress progress = Progress::Auto;
  int64_t progressAfterMs = 1000;
  /// When set, each stage writes its IR into this directory
  /// (NN-<stage>.mlir, and the optimized LLVM IR as .ll).
  std::string dumpDir;
  /// A JSON file of forced decisions (docs/explain.md): nodes kept apart,
  /// library or codegen for a node, a kernel's tile. Empty: none.
  std::string decisionsFile;
  /// Where a failing pass writes its crash reproducer; empty: the system's
  /// temporary directory.
  std::string reproducerDir;
  /// Options for LLVM's code generation, as LLVM's own command line takes
  /// them ("-unroll-threshold=100"), for experiments: LLVM keeps them per
  /// process, so a process applies the first it is given and refuses a
  /// compile that asks for others. The strata tools take them from
  /// $STRATA_LLVM_OPTIONS; the compile cache keys on them.
  std::string llvmOptions;
  /// Import a model whose opset is newer than strata knows as the newest it
  /// knows, with a warning (--allow-newer-opset; ImportOptions). Read by
  /// strata/Compile.h's functions; the CLI passes its flag to the importer
  /// itself.
  bool allowNewerOpset = false;
};

/// Sets the fields the environment gives: llvmOptions from
/// STRATA_LLVM_OPTIONS, progress from STRATA_PROGRESS (1: lines, 0: off)
/// and progressAfterMs from STRATA_PROGRESS_AFTER_MS. The compiler reads no
/// environment itself; its tools (the strata commands, the Python module)
/// call this once per compile.
void readCompileEnvironment(CompileOptions &options);

} // namespace strata

#endif // STRATA_COMPILER_OPTIONS_H
