//===- Compiler.cpp - the whole compile path --------------------*- C++ -*-===//

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Pipeline.h"
#include "strata/Target/Target.h"

#include "CompilerUtils.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace strata;

StageClock::StageClock(const CompileOptions &options)
    : verbose(options.verbose), start(std::chrono::steady_clock::now()) {}

void StageClock::done(llvm::StringRef what) const {
  if (!verbose)
    return;
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  llvm::errs() << "strata: " << what << " done (" << llvm::format("%.0f", ms)
               << " ms)\n";
}

LogicalResult strata::compileModule(ModuleOp module,
                                    const CompileOptions &options,
                                    std::vector<uint8_t> &moduleBytes,
                                    Stage from) {
  const Target *target = lookupTarget(options);
  if (!target)
    return module.emitError(unknownTargetMessage(options.target));
  if (from > Stage::Llvm)
    return module.emitError("cannot compile from the ")
           << stageName(from) << " stage: it is not MLIR";
  return target->compile(module, options, moduleBytes, from);
}
