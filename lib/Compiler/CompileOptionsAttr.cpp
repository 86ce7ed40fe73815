//===- CompileOptionsAttr.cpp - the compile's options on the module -------===//
//
// A compilation's options (strata::CompileOptions) travel to its passes as
// one typed attribute on the module, #strata.compile (KernelBase.td):
// runStages records them before the first stage runs, and each pass that
// depends on them reads them back here. A dumped stage, a module compiled
// from one (--compile-from) and MLIR's crash reproducer carry them with the
// IR, so that `strata-opt --strata-stage-fused` on a dump reruns the stage
// the compile ran, and the stage pipelines need no option text.
//
// strata-compile-options sets the attribute from pass options, for
// strata-opt and the registered stage pipelines (strata-stage-<name>{...});
// a pass's own option of the same name, when given, overrides the
// attribute for that pass alone.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace strata {
#define GEN_PASS_DEF_COMPILEOPTIONSPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace kernel = strata::kernel;

kernel::CompileAttr
strata::compileOptionsAttr(MLIRContext *context, const CompileOptions &options,
                           function_ref<InFlightDiagnostic()> emitError) {
  Builder b(context);
  DictionaryAttr shapes, values;
  if (!options.inputShapes.empty()) {
    NamedAttrList entries;
    for (const auto &[name, shape] : options.inputShapes)
      entries.set(name, b.getDenseI64ArrayAttr(shape));
    shapes = entries.getDictionary(context);
  }
  if (!options.inputValues.empty()) {
    NamedAttrList entries;
    for (const auto &[name, list] : options.inputValues)
      entries.set(name, b.getDenseF64ArrayAttr(list));
    values = entries.getDictionary(context);
  }
  StringRef arch = options.cpu.empty() ? StringRef("native") : options.cpu;
  // "fp32" and "" both keep the model's types; one spelling in the IR.
  StringRef precision =
      options.precision == "fp32" ? StringRef() : options.precision;
  return kernel::CompileAttr::getChecked(
      emitError, context, StringRef(options.target), arch, options.useLibraries,
      options.hostKernels, precision, StringRef(options.decisionsFile), shapes,
      values);
}

LogicalResult strata::recordCompileOptions(ModuleOp module,
                                           const CompileOptions &options) {
  kernel::CompileAttr attr = compileOptionsAttr(
      module.getContext(), options, [&] { return module.emitError(); });
  if (!attr)
    return failure();
  kernel::set<kernel::Compile>(module, attr);
  return success();
}

/// Each entry of `dict` (name -> an ArrayAttrT, the verifier's promise)
/// into `lists` by name; nothing for a null dictionary.
template <typename ArrayAttrT, typename Lists>
static void readLists(DictionaryAttr dict, Lists &lists) {
  if (!dict)
    return;
  for (NamedAttribute entry : dict) {
    auto list = cast<ArrayAttrT>(entry.getValue()).asArrayRef();
    lists[entry.getName().str()].assign(list.begin(), list.end());
  }
}

strata::CompileOptions strata::recordedCompileOptions(ModuleOp module) {
  CompileOptions options;
  kernel::CompileAttr attr = kernel::get<kernel::Compile>(module);
  if (!attr)
    return options;
  options.target = attr.getTarget().str();
  options.cpu = attr.getArch().str();
  options.useLibraries = attr.getLibraries();
  options.hostKernels = attr.getHostKernels();
  options.precision = attr.getPrecision().str();
  options.decisionsFile = attr.getDecisions().str();
  readLists<DenseI64ArrayAttr>(attr.getInputShapes(), options.inputShapes);
  readLists<DenseF64ArrayAttr>(attr.getInputValues(), options.inputValues);
  return options;
}

namespace {
struct CompileOptionsPass
    : strata::impl::CompileOptionsPassBase<CompileOptionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    strata::CompileOptions options = strata::recordedCompileOptions(module);
    strata::overrideIfGiven(target, options.target);
    strata::overrideIfGiven(arch, options.cpu);
    strata::overrideIfGiven(libraries, options.useLibraries);
    strata::overrideIfGiven(hostKernels, options.hostKernels);
    strata::overrideIfGiven(precision, options.precision);
    strata::overrideIfGiven(decisions, options.decisionsFile);
    std::string error;
    if (shapes.hasValue() &&
        failed(strata::decodeInputShapes(shapes, options.inputShapes, error))) {
      module.emitError("strata-compile-options: shapes: ") << error;
      return signalPassFailure();
    }
    if (values.hasValue() &&
        failed(strata::decodeInputValues(values, options.inputValues, error))) {
      module.emitError("strata-compile-options: values: ") << error;
      return signalPassFailure();
    }
    if (failed(strata::recordCompileOptions(module, options)))
      signalPassFailure();
  }
};
} // namespace
