//===- Compiler.cpp - the whole compile path --------------------*- C++ -*-===//

#include "strata/Compiler/Compiler.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <iterator>

#include <chrono>

using namespace mlir;

void strata::dumpStage(const CompileOptions &options, llvm::StringRef stage,
                       Operation *op) {
  if (options.dumpDir.empty())
    return;
  // Numbered in the order the stages run, so a directory listing reads
  // like the pipeline.
  static const char *const order[] = {"imported", "graph", "partitioned",
                                      "kernels-buffers",
                                      "kernels-llvm-dialect"};
  unsigned index = 0;
  for (unsigned i = 0; i < std::size(order); ++i)
    if (stage == order[i])
      index = (i + 1) * 10;
  std::string path = options.dumpDir + "/" +
                     llvm::formatv("{0:2}", index).str() + "-" + stage.str() +
                     ".mlir";
  std::replace(path.begin(), path.end(), ' ', '0');
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "strata: warning: cannot write " << path << ": "
                 << ec.message() << "\n";
    return;
  }
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  flags.elideLargeElementsAttrs(64);
  op->print(os, flags);
}

LogicalResult strata::compileModule(ModuleOp module,
                                    const CompileOptions &options,
                                    std::vector<uint8_t> &moduleBytes) {
  if (options.target != "cpu")
    return module.emitError("unknown target '")
           << options.target << "' (this build compiles for: cpu)";
  auto start = std::chrono::steady_clock::now();
  auto stage = [&](const char *name) {
    if (!options.verbose)
      return;
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    llvm::errs() << "strata: " << name << " done (" << llvm::format("%.0f", ms)
                 << " ms)\n";
  };
  if (!options.dumpDir.empty())
    llvm::sys::fs::create_directories(options.dumpDir);
  dumpStage(options, "imported", module);
  if (failed(specializeShapes(module, options)))
    return failure();
  dumpStage(options, "graph", module);
  stage("graph stage and shape specialization");
  if (failed(partitionIntoKernels(module, options)))
    return failure();
  stage("partitioning");
  dumpStage(options, "partitioned", module);
  std::vector<uint8_t> code;
  if (failed(generateKernelCode(module, options, code)))
    return failure();
  stage("kernel code generation");
  if (failed(writeModule(module, options, code, moduleBytes)))
    return failure();
  stage("memory plan and module");
  return success();
}
