//===- PipelinePlugin.cpp - inserts the pipeline it is given ----*- C++ -*-===//
//
// A plugin for the loader's tests: inserts STRATA_TEST_PIPELINE after the
// kernel stage's cse, unchecked, so that the tests can hand strata a pipeline
// naming a pass that does not exist, one that a plugin loaded later
// registers, an empty one; "throw" makes the registration throw, and
// "register-cse" registers a pass of its own under an argument MLIR's cse
// already has.
//
//===----------------------------------------------------------------------===//

#include "strata/Plugin/Plugin.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace {

/// A pass that claims MLIR's `cse` argument.
struct NotCsePass
    : public mlir::PassWrapper<NotCsePass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NotCsePass)
  llvm::StringRef getArgument() const override { return "cse"; }
  void runOnOperation() override {}
};

void registerPipelinePlugin(strata::plugin::Registrar &registrar) {
  const char *pipeline = std::getenv("STRATA_TEST_PIPELINE");
  if (pipeline && std::strcmp(pipeline, "throw") == 0)
    throw std::runtime_error("the test plugin throws");
  if (pipeline && std::strcmp(pipeline, "register-cse") == 0) {
    mlir::PassRegistration<NotCsePass>();
    return;
  }
  registrar.insertAfter("kernel/cse", pipeline ? pipeline : "");
}

} // namespace

extern "C" STRATA_PLUGIN_EXPORT const StrataPluginInfo *strataGetPluginInfo() {
  static const StrataPluginInfo info =
      STRATA_PLUGIN_INFO("test-pipeline", "0.1", registerPipelinePlugin);
  return &info;
}
