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
#include "llvm/Support/FormatVariadic.h"

#include <mutex>
#include <optional>

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

/// A model to import: a file (read by importOnnxFile, external data beside
/// it), or a ModelProto's bytes in memory.
struct ModelInput {
  /// The path, or the caller's name for the bytes.
  std::string name;
  std::optional<OnnxSource> inMemory;

  mlir::OwningOpRef<mlir::ModuleOp> import(mlir::MLIRContext &context,
                                           const ImportOptions &options) const {
    return inMemory ? importOnnx(context, *inMemory, options)
                    : importOnnxFile(context, name, options);
  }
};

/// Imports `model` and runs `work` on it (the compile path's stages);
/// throws CompileError with the diagnostics when either fails, and returns
/// the warnings of a success.
template <typename Work>
std::string withImportedModel(const ModelInput &model,
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
  context.getDiagEngine().registerHandler([&](mlir::Diagnostic &d) {
    diagnostics += formatDiagnostic(d, model.name);
    return mlir::success();
  });
  ImportOptions importOptions;
  importOptions.allowNewerOpset = options.allowNewerOpset;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      model.import(context, importOptions);
  if (!module || mlir::failed(work(*module, options))) {
    if (!diagnostics.empty() && diagnostics.back() == '\n')
      diagnostics.pop_back();
    throw CompileError(diagnostics.empty()
                           ? model.name + ": error: the compile failed"
                           : diagnostics);
  }
  return diagnostics;
}

/// A ModelProto's bytes as a model named `name` (which it refers to: both
/// must outlive it). It has no folder, so external data is refused.
ModelInput modelInMemory(std::string_view bytes, const std::string &name) {
  return {name, OnnxSource{llvm::StringRef(bytes.data(), bytes.size()), name,
                           /*dataDir=*/"", /*text=*/false}};
}

CompileResult compileModel(const ModelInput &model,
                           const CompileOptions &options) {
  CompileResult result;
  result.warnings = withImportedModel(
      model, options,
      [&](mlir::ModuleOp module, const CompileOptions &effective) {
        return compileModule(module, effective, result.module);
      });
  return result;
}

/// The explanation of `model` as JSON text.
std::string explainModel(const ModelInput &model, const CompileOptions &options,
                         std::string *warnings) {
  std::string json;
  std::string text = withImportedModel(
      model, options,
      [&](mlir::ModuleOp module, const CompileOptions &effective) {
        if (mlir::failed(
                runStages(module, effective, Stage::Import, Stage::Fused)))
          return mlir::failure();
        mlir::FailureOr<Explanation> e = explainFusedModule(module, effective);
        if (mlir::failed(e))
          return mlir::failure();
        json = llvm::formatv("{0}", explanationJson(*e, model.name, effective))
                   .str();
        return mlir::success();
      });
  if (warnings)
    *warnings = std::move(text);
  return json;
}

} // namespace

CompileResult strata::compileOnnxFile(const std::string &path,
                                      const CompileOptions &options) {
  return compileModel({path, std::nullopt}, options);
}

CompileResult strata::compileOnnx(std::string_view bytes,
                                  const std::string &name,
                                  const CompileOptions &options) {
  return compileModel(modelInMemory(bytes, name), options);
}

std::string strata::explainOnnxFile(const std::string &path,
                                    const CompileOptions &options,
                                    std::string *warnings) {
  return explainModel({path, std::nullopt}, options, warnings);
}

std::string strata::explainOnnx(std::string_view bytes, const std::string &name,
                                const CompileOptions &options,
                                std::string *warnings) {
  return explainModel(modelInMemory(bytes, name), options, warnings);
}
