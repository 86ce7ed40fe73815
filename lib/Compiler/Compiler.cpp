//===- Compiler.cpp - the whole compile path --------------------*- C++ -*-===//

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Pipeline.h"

#include "Gpu.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <iterator>

#include <chrono>

using namespace mlir;

LogicalResult strata::compileModule(ModuleOp module,
                                    const CompileOptions &options,
                                    std::vector<uint8_t> &moduleBytes,
                                    Stage from) {
  if (options.target != "cpu" && options.target != "cuda")
    return module.emitError("unknown target '")
           << options.target << "' (this build compiles for: cpu, cuda)";
  if (from > Stage::Llvm)
    return module.emitError("cannot compile from the ")
           << stageName(from) << " stage: it is not MLIR";
  if (failed(runStages(module, options, from, Stage::Llvm)))
    return failure();
  auto start = std::chrono::steady_clock::now();
  auto done = [&](const char *name) {
    if (!options.verbose)
      return;
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    llvm::errs() << "strata: " << name << " done (" << llvm::format("%.0f", ms)
                 << " ms)\n";
  };
  if (options.target == "cuda") {
    GpuCode gpu;
    if (failed(generateGpuCode(module, options, gpu)))
      return failure();
    done("object");
    if (failed(writeGpuModule(module, options, gpu, moduleBytes)))
      return failure();
    done("module");
    return success();
  }
  std::vector<uint8_t> code;
  if (failed(generateKernelCode(module, options, code)))
    return failure();
  done("object");
  if (failed(writeModule(module, options, code, moduleBytes)))
    return failure();
  done("module");
  return success();
}
