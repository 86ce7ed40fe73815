//===- FailingPlugin.cpp - a plugin whose pass fails ------------*- C++ -*-===//
//
// A plugin for the loader's tests (test/Plugin/failing-pass.test): registers
// the pass `strata-test-fail`, which fails as its `mode` option says, and
// inserts STRATA_TEST_FAIL_PIPELINE (default `strata-test-fail`) after the
// kernel stage's cse. Modes:
//   throw      throws a std::runtime_error
//   throw-int  throws an int (not a std::exception)
//   fail       signalPassFailure() without a message
//   error      an error diagnostic, then signalPassFailure()
//   abort      calls abort()
//   none       does nothing (the plugin loaded, compiling as usual)
//
//===----------------------------------------------------------------------===//

#include "strata/Plugin/Plugin.h"

#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstdlib>
#include <stdexcept>

namespace {

/// Runs on any operation, so that a pipeline may nest it under func.func
/// (run on several functions at once, on the context's worker threads).
struct FailPass : public mlir::PassWrapper<FailPass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FailPass)
  FailPass() = default;
  FailPass(const FailPass &other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "strata-test-fail"; }
  llvm::StringRef getDescription() const override {
    return "Fails as `mode` says (a test of plugin failures)";
  }

  void runOnOperation() override {
    if (mode == "throw")
      throw std::runtime_error("the test pass throws");
    if (mode == "throw-int")
      throw 42;
    if (mode == "fail")
      return signalPassFailure();
    if (mode == "abort")
      std::abort();
    if (mode == "error") {
      getOperation()->emitError("the test pass reports an error");
      return signalPassFailure();
    }
  }

  Option<std::string> mode{*this, "mode",
                           llvm::cl::desc("throw, throw-int, fail, error, "
                                          "abort or none"),
                           llvm::cl::init("throw")};
};

void registerFailingPlugin(strata::plugin::Registrar &registrar) {
  mlir::PassRegistration<FailPass>();
  const char *pipeline = std::getenv("STRATA_TEST_FAIL_PIPELINE");
  registrar.insertAfter("kernel/cse", pipeline ? pipeline : "strata-test-fail");
}

} // namespace

extern "C" STRATA_PLUGIN_EXPORT const StrataPluginInfo *strataGetPluginInfo() {
  static const StrataPluginInfo info =
      STRATA_PLUGIN_INFO("test-failing", "0.1", registerFailingPlugin);
  return &info;
}
