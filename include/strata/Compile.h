//===- Compile.h - compiling ONNX models from C++ ----------------*- C++
//-*-===//
//
// The compiler as a library (find_package(strata): strata::compiler,
// libstrata_compiler.so; docs/embedding.md). An ONNX model in, a module's
// bytes out, which the runtime (strata/Runtime/Runtime.h, strata::runtime)
// loads with rt::Module::loadFromMemory:
//
//   strata::CompileOptions options;            // cpu, native, fp32
//   options.inputShapes["x"] = {8, 3, 224, 224};
//   strata::CompileResult r = strata::compileOnnxFile("model.onnx", options);
//   auto module = strata::rt::Module::loadFromMemory(r.module, "model");
//
// The header needs standard C++ only: LLVM, MLIR and ONNX stay inside the
// library. Compilations may run on several threads at once (each has its
// own context); plugins named by STRATA_PLUGIN_PATHS are loaded by the first
// one, as the tools load them.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILE_H
#define STRATA_COMPILE_H

#include "strata/Compiler/Options.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

/// A model strata cannot compile, or options it refuses. what() holds every
/// diagnostic as the CLI prints them, one per line ("model.onnx: error:
/// ... (at node 'x')").
class CompileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct CompileResult {
  /// The module file's bytes (what `strata compile -o` writes).
  std::vector<uint8_t> module;
  /// The compilation's warnings, one per line; empty when there were none.
  std::string warnings;
};

/// Compiles the ONNX model at `path` (ONNX's textual syntax when it ends in
/// `.onnxtxt`; external data next to it is read). Throws CompileError.
CompileResult compileOnnxFile(const std::string &path,
                              const CompileOptions &options = {});

/// Compiles a serialized ONNX ModelProto held in memory; `name` stands for
/// it in messages. A model whose tensors keep their data in external files
/// is refused (there is no folder to read them from): compile it from its
/// file. Throws CompileError.
CompileResult compileOnnx(std::string_view model, const std::string &name,
                          const CompileOptions &options = {});

/// `strata explain --json` of the model at `path`: the kernels, what each
/// fused and why, as one JSON object (docs/explain.md). `warnings` receives
/// the warnings when not null. Throws CompileError.
std::string explainOnnxFile(const std::string &path,
                            const CompileOptions &options = {},
                            std::string *warnings = nullptr);

/// The same for a serialized ModelProto in memory (as compileOnnx).
std::string explainOnnx(std::string_view model, const std::string &name,
                        const CompileOptions &options = {},
                        std::string *warnings = nullptr);

} // namespace strata

#endif // STRATA_COMPILE_H
