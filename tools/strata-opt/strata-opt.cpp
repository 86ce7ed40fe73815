//===- strata-opt.cpp - strata's MLIR optimizer driver ----------*- C++ -*-===//
//
// mlir-opt with strata's dialects and passes, the compile path's stage
// pipelines (--strata-stage-<name>), and the run-time plugins named in
// STRATA_PLUGIN_PATHS, so that a stage can be rerun alone exactly as the
// compiler runs it, plugin edits included.
//
//===----------------------------------------------------------------------===//

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Pipeline.h"
#include "strata/Plugin/Loader.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

int main(int argc, char **argv) {
  // strata's and MLIR's passes and the stage pipelines first, so that a
  // plugin whose pass reuses one of their names fails while it registers,
  // naming the pass.
  strata::registerStagePipelines();
  // Plugins before the options are parsed (they list the passes) and before
  // any stage pipeline is built (they edit them).
  std::string error;
  if (!strata::plugin::loadPluginsFromEnvironment(error)) {
    llvm::errs() << "strata-opt: error: " << error << "\n";
    return 1;
  }
  // The compile path's registry, which includes the plugins' dialects.
  mlir::DialectRegistry registry;
  strata::registerCompilerDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "strata optimizer driver\n", registry));
}
