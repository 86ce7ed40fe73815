//===- Explain.h - strata explain -------------------------------*- C++ -*-===//
//
//   strata explain model.onnx [--input-shape NAME=D0,D1,...] [--decisions=FILE]
//                             [--cpu=...] [--no-libraries] [--json]
//
// Runs the compile path through the fused stage and prints, for every
// kernel in execution order, the decisions the partitioner recorded on it
// (docs/explain.md): its source nodes, why its ops were fused and why its
// neighbours were not, library or generated code and why, and its row
// split and where that came from; then a summary.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_EXPLAIN_H
#define STRATA_TOOLS_STRATA_EXPLAIN_H

#include "llvm/Support/CommandLine.h"

namespace strata::driver {

/// The `explain` subcommand (a function: options in other files may
/// register with it, and static initialization order across files is
/// unspecified).
llvm::cl::SubCommand &explainCommand();

/// Runs `strata explain` once the command line chose it; the exit status.
int runExplain();

} // namespace strata::driver

#endif // STRATA_TOOLS_STRATA_EXPLAIN_H
