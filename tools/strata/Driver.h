//===- Driver.h - shared pieces of the strata commands ----------*- C++ -*-===//
#ifndef STRATA_TOOLS_STRATA_DRIVER_H
#define STRATA_TOOLS_STRATA_DRIVER_H

#include "strata/Runtime/Runtime.h"
#include "strata/TensorIO/TensorIO.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace strata::driver {

/// Prints diagnostics as "<file>: error: <message> (at node 'x')".
void installDiagnosticPrinter(mlir::MLIRContext &context, llvm::StringRef file);

/// A fresh context with everything the compile path needs.
std::unique_ptr<mlir::MLIRContext> makeContext(llvm::StringRef file);

/// What the compile options on the command line say.
struct CompileFlags {
  std::string cpu = "native";
  bool verbose = false;
  bool noLibraries = false;
  std::string dumpDir;
  /// Reuse compiled modules from the compile cache (see compileOnnx).
  bool useCache = false;
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// The compile cache's directory: $STRATA_CACHE_DIR, else
/// $XDG_CACHE_HOME/strata, else ~/.cache/strata.
std::string cacheDirectory();

/// Parses "name=2,3,4" (or "name=" for a scalar); "" on success, else why.
std::string parseShapeBinding(const std::string &text, std::string &name,
                              std::vector<int64_t> &shape);

/// The declared inputs of a model, with dynamic dimensions as -1.
struct InputInfo {
  std::string name;
  rt::DType dtype = rt::DType::F32;
  std::vector<int64_t> shape;
};

/// Imports `path` (an ONNX model) and compiles it for input shapes
/// `shapes` (by input name). Errors are printed; returns null then.
///
/// With flags.useCache, the module is first looked up in the compile cache,
/// keyed by a SHA-256 of the model's bytes, the shapes, the target CPU and
/// options and strata's version; a compiled module is stored there (written
/// to a temporary file and renamed, so readers never see half a file). A
/// cache entry that fails to load (truncated, corrupted, from another
/// format version) is reported, recompiled and replaced.
std::shared_ptr<const rt::Module>
compileOnnx(const std::string &path, const CompileFlags &flags,
            const std::map<std::string, std::vector<int64_t>> &shapes);

/// The same, returning the module file's bytes.
bool compileOnnxBytes(const std::string &path, const CompileFlags &flags,
                      const std::map<std::string, std::vector<int64_t>> &shapes,
                      std::vector<uint8_t> &bytes);

/// The model's declared inputs (imports it; errors printed, false).
bool readModelInputs(const std::string &path, std::vector<InputInfo> &inputs);

/// Conversions between the tensor file library and the runtime.
rt::Tensor toRuntime(const tio::HostTensor &tensor);
tio::HostTensor toHost(const rt::Tensor &tensor);

/// Whether `path` names a compiled module (".strata") rather than a model.
bool isModuleFile(llvm::StringRef path);

/// The `conformance` subcommand (shared by the files that add options to
/// it, hence a function: see Conformance.cpp).
llvm::cl::SubCommand &conformanceCommand();

/// Runs the compile/run/bench/conformance command the command line chose;
/// -1 when it chose none of them.
int dispatchCommands();

} // namespace strata::driver

#endif // STRATA_TOOLS_STRATA_DRIVER_H
