//===- CpuTarget.cpp - x86-64 -----------------------------------*- C++ -*-===//

#include "CPU/CpuTarget.h"

#include "CompilerUtils.h"
#include "LlvmBackend.h"

using namespace mlir;
using namespace strata;

std::string CpuTarget::checkOptions(const CompileOptions &options) const {
  return checkHostCpu(options.cpu);
}

TargetFacts CpuTarget::facts(const CompileOptions &) const {
  TargetFacts facts;
  facts.library = TargetFacts::Library::OneDnn;
  return facts;
}

std::vector<PassEntry>
CpuTarget::afterPartition(const CompileOptions &options) const {
  // oneDNN's convolutions read and write channels-last (Layouts.cpp).
  if (!options.useLibraries)
    return {};
  return {PassEntry{"strata-channels-last", "", false}};
}

std::vector<PassEntry>
CpuTarget::mappingPipeline(const CompileOptions &) const {
  // Generated kernels read and write the channels-last buffers chosen at
  // the fused stage (Layouts.cpp). Loops merged next, on tensors: the
  // reshapes become views when bufferized.
  std::vector<PassEntry> entries = {
      PassEntry{"strata-apply-layouts", "", false},
      PassEntry{"strata-collapse-dims", "", true},
      PassEntry{"canonicalize", "", true}};
  // A result returned through a view of a temporary is computed into its
  // out-parameter (strata-results-in-place).
  std::vector<PassEntry> bufferize =
      bufferizationPasses(/*resultsInPlace=*/true);
  entries.insert(entries.end(), bufferize.begin(), bufferize.end());
  entries.push_back(PassEntry{"strata-copy-to-linalg", "", true});
  entries.push_back(PassEntry{"convert-linalg-to-loops", "", true});
  entries.push_back(PassEntry{"strata-vectorize-inner-loops", "", true});
  return entries;
}

std::vector<PassEntry> CpuTarget::llvmPipeline(const CompileOptions &) const {
  std::vector<PassEntry> entries;
  for (const char *name :
       {"lower-affine", "convert-scf-to-cf", "strata-approximate-math",
        "strata-float-min-max-to-llvm", "convert-math-to-llvm",
        "convert-math-to-funcs", "convert-math-to-libm", "arith-expand",
        "expand-strided-metadata", "lower-affine"})
    entries.push_back(PassEntry{name, "", true});
  std::vector<PassEntry> tail = llvmConversionTail();
  entries.insert(entries.end(), tail.begin(), tail.end());
  return entries;
}

LogicalResult CpuTarget::generateObject(ModuleOp module,
                                        const CompileOptions &options,
                                        std::vector<uint8_t> &object,
                                        std::string &what) const {
  what = "the kernels' shared object";
  return generateKernelCode(module, options, object);
}

LogicalResult CpuTarget::compile(ModuleOp module, const CompileOptions &options,
                                 std::vector<uint8_t> &moduleBytes,
                                 Stage from) const {
  if (failed(runStages(module, options, from, Stage::Llvm)))
    return failure();
  CompileProgress::begin("object stage: LLVM on " +
                         generatedKernelsText(module));
  std::vector<uint8_t> code;
  if (failed(generateKernelCode(module, options, code)))
    return failure();
  CompileProgress::end("object stage", options.verbose);
  CompileProgress::begin("module stage");
  if (failed(writeModule(module, options, code, moduleBytes)))
    return failure();
  CompileProgress::end("module stage", options.verbose);
  return success();
}
