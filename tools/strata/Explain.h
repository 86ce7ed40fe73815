//===- Explain.h - strata explain -------------------------------*- C++ -*-===//
//
//   strata explain model.onnx [--input-shape NAME=D0,D1,...] [--decisions=FILE]
//                             [--cpu=...] [--no-libraries] [--json]
//   strata explain model.strata [--json]
//
// Runs the compile path through the fused stage and prints, for every
// kernel in execution order, the decisions the partitioner recorded on it
// (docs/explain.md): its source nodes, why its ops were fused and why its
// neighbours were not, library or generated code and why, and its row
// split and where that came from; then a summary. Given a compiled module,
// it prints the module's plan instead (ExplainModule.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_EXPLAIN_H
#define STRATA_TOOLS_STRATA_EXPLAIN_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace strata::driver {

/// The `explain` subcommand (a function: options in other files may
/// register with it, and static initialization order across files is
/// unspecified).
llvm::cl::SubCommand &explainCommand();

/// Runs `strata explain` once the command line chose it; the exit status.
int runExplain();

/// `strata explain model.strata` (ExplainModule.cpp): the plan of a compiled
/// module, read back from the file; the exit status.
int explainModuleFile(const std::string &path, bool json);

} // namespace strata::driver

#endif // STRATA_TOOLS_STRATA_EXPLAIN_H
