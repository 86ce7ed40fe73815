//===- Compile.cpp - compiling ONNX models from C++ -------------*- C++ -*-===//
//
// strata/Compile.h over the compiler's internal API: one MLIR context per
// compilation, diagnostics collected as the CLI prints them, user errors
// without crash reproducers (a model the compiler refuses is the user's to
// fix; an internal failure still aborts with MLIR's report).
//
//===----------------------------------------------------------------------===//

#include "strata/Compile.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Explain.h"
#include "strata/Compiler/Pipeline.h"
#include "strata/Import/OnnxImporter.h"
#include "strata/InitAll.h"
#include "strata/Plugin/Loader.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <mutex>

using namespace strata;

namespace {

/// Registers the passes (the stage pipelines are parsed from text) and
/// loads the plugins of STRATA_PLUGIN_PATHS, once per process.
void initializeCompiler() {
  static std::once_flag once;
  static std::string pluginError;
  std::call_once(once, [] {
    registerAllPasses();
    plugin::loadPluginsFromEnvironment(pluginError);
  });
  if (!pluginError.empty())
    throw CompileError("strata: " + pluginError);
}

/// Imports `source` and runs `work` on it (the compile path's stages);
/// throws CompileError with the diagnostics when either fails, and returns
/// the warnings of a success.
template <typename Work>
std::string withImportedModel(const OnnxSource &source,
                              const CompileOptions &requested, Work &&work) {
  initializeCompiler();
  CompileOptions options = requested;
  // A model the compiler refuses is the user's to fix: no reproducer.
  if (options.reproducerDir.empty())
    options.reproducerDir = "off";
  if (std::string bad = checkTargetOptions(options); !bad.empty())
    throw CompileError("strata: " + bad);
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  std::string file = source.name.str();
  context.getDiagEngine().registerHandler([&](mlir::Diagnostic &d) {
    diagnostics += formatDiagnostic(d, file);
    return mlir::success();
  });
  ImportOptions importOptions;
  importOptions.allowNewerOpset = options.allowNewerOpset;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importOnnx(context, source, importOptions);
  if (!module || mlir::failed(work(*module, options))) {
    if (!diagnostics.empty() && diagnostics.back() == '\n')
      diagnostics.pop_back();
    throw CompileError(diagnostics.empty()
                           ? file + ": error: the compile failed"
                           : diagnostics);
  }
  return diagnostics;
}

/// The file's bytes, and the folder its external data is read from.
struct ModelFile {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::string dir;
  OnnxSource source(const std::string &path) const {
    llvm::StringRef name(path);
    return {buffer->getBuffer(), name, dir, name.ends_with(".onnxtxt")};
  }
};

ModelFile readModelFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true);
  if (!buffer)
    throw CompileError(path + ": error: cannot read '" + path +
                       "': " + buffer.getError().message());
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  return {std::move(*buffer), dir.str().str()};
}

CompileResult compileSource(const OnnxSource &source,
                            const CompileOptions &options) {
  CompileResult result;
  result.warnings = withImportedModel(
      source, options,
      [&](mlir::ModuleOp module, const CompileOptions &effective) {
        return compileModule(module, effective, result.module);
      });
  return result;
}

} // namespace

CompileResult strata::compileOnnxFile(const std::string &path,
                                      const CompileOptions &options) {
  ModelFile file = readModelFile(path);
  return compileSource(file.source(path), options);
}

CompileResult strata::compileOnnx(std::string_view model,
                                  const std::string &name,
                                  const CompileOptions &options) {
  OnnxSource source{llvm::StringRef(model.data(), model.size()), name, "",
                    false};
  return compileSource(source, options);
}

/// The explanation of `source`'s model as JSON text.
static std::string explainSource(const OnnxSource &source,
                                 const CompileOptions &options,
                                 std::string *warnings) {
  std::string json;
  std::string name = source.name.str();
  std::string text = withImportedModel(
      source, options,
      [&](mlir::ModuleOp module, const CompileOptions &effective) {
        if (mlir::failed(
                runStages(module, effective, Stage::Import, Stage::Fused)))
          return mlir::failure();
        mlir::FailureOr<Explanation> e = explainFusedModule(module, effective);
        if (mlir::failed(e))
          return mlir::failure();
        json = llvm::formatv("{0}", explanationJson(*e, name, effective)).str();
        return mlir::success();
      });
  if (warnings)
    *warnings = std::move(text);
  return json;
}

std::string strata::explainOnnxFile(const std::string &path,
                                    const CompileOptions &options,
                                    std::string *warnings) {
  ModelFile file = readModelFile(path);
  return explainSource(file.source(path), options, warnings);
}

std::string strata::explainOnnx(std::string_view model, const std::string &name,
                                const CompileOptions &options,
                                std::string *warnings) {
  OnnxSource source{llvm::StringRef(model.data(), model.size()), name, "",
                    false};
  return explainSource(source, options, warnings);
}
