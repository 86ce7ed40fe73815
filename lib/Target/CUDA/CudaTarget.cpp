//===- CudaTarget.cpp - NVIDIA GPUs -----------------------------*- C++ -*-===//

#include "CUDA/CudaTarget.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "CompilerUtils.h"
#include "Gpu.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace strata;

std::string CudaTarget::checkOptions(const CompileOptions &options) const {
  return checkGpuArchitecture(gpuArchitecture(options));
}

void CudaTarget::registerPasses() const { registerGpuPasses(); }

TargetFacts CudaTarget::facts(const CompileOptions &options) const {
  std::string arch = gpuArchitecture(options);
  TargetFacts facts;
  facts.library = TargetFacts::Library::CublasLt;
  facts.gpu = true;
  facts.tensorCores = gpuHasTensorCores(arch);
  facts.wgmma = gpuHasWgmma(arch);
  facts.gridDependency = gpuHasGridDependency(arch);
  facts.dynamicSharedLimit = gpuDynamicSharedLimit(arch);
  facts.blockSharedLimit = gpuBlockSharedLimit(arch);
  return facts;
}

std::vector<PassEntry>
CudaTarget::beforePartition(const CompileOptions &options) const {
  // Convolutions channels-last (ConvToGemm.cpp): those that read windows
  // as the runtime's cudnn.conv steps (with libraries on), the others
  // im2col + products, depthwise ones elementwise sums (docs/gpu.md,
  // "Convolutions", says why; bench/RESULTS.md has the measurements).
  // Rolls (a concat of slices) as gathers, one all-parallel op each
  // (GatherSlices.cpp). Long column reductions (the means of pooling and
  // squeeze-and-excitation) in stages that spread over the grid
  // (SplitReductions.cpp).
  std::vector<PassEntry> entries = {
      PassEntry{"strata-conv-to-gemm", options.useLibraries ? "cudnn=true" : "",
                false},
      PassEntry{"strata-gather-slices", "", false},
      PassEntry{"strata-split-reductions", "", false}};
  // Attention blocks the flash kernel (mma.sync, sm_80 on) takes once
  // their additive causal masks are the causal Where (CausalMasks.cpp) and
  // once padded to its tile and head dimensions (AttentionPadding.cpp); in
  // the others (a decode step), grouped-query attention's K/V repeat folded
  // into the query rows (FoldHeadRepeats.cpp).
  if (facts(options).tensorCores) {
    entries.push_back(PassEntry{"strata-causal-masks", "", false});
    entries.push_back(PassEntry{"strata-pad-attention", "", false});
    entries.push_back(PassEntry{"strata-fold-head-repeats", "", false});
  }
  return entries;
}

std::vector<PassEntry>
CudaTarget::mappingPipeline(const CompileOptions &options) const {
  return gpuStagePipeline(facts(options));
}

std::vector<PassEntry>
CudaTarget::llvmPipeline(const CompileOptions &options) const {
  return gpuLlvmPipeline(options);
}

std::string CudaTarget::describeCode(
    ModuleOp module, const CompileOptions &options,
    std::vector<std::pair<std::string, std::string>> &fields) const {
  GpuArchitectures archs = gpuCodeArchitectures(module, options);
  fields = {{"cubin_arch", archs.cubin}, {"ptx_arch", archs.ptx}};
  if (archs.ptx != archs.cubin)
    return "a cubin for " + archs.cubin +
           " (its attention and GEMM kernels use wgmma) and PTX for " +
           archs.ptx +
           ", compiled a second time from the kernel stage (those kernels "
           "with mma.sync), which later GPUs JIT-compile";
  return "a cubin and its PTX for " + archs.cubin +
         (archs.cubin == gpuArchitecture(options)
              ? std::string()
              : " (no kernel here has an sm_90a form)");
}

LogicalResult CudaTarget::generateObject(ModuleOp module,
                                         const CompileOptions &options,
                                         std::vector<uint8_t> &object,
                                         std::string &what) const {
  // The object is the PTX (the cubin goes into modules).
  what = "the kernels' PTX";
  GpuCode code;
  if (failed(generateGpuCode(module, options, code)))
    return failure();
  object.assign(code.ptx.begin(), code.ptx.end());
  return success();
}

/// The portable PTX's variant of a kernel may launch differently from the
/// cubin's: the attention kernel's blocks without wgmma (GpuAttention.cpp,
/// queryRows). Such a kernel is renamed in the portable module (`<name>_ptx`)
/// and its launch recorded on the main module's declaration
/// (strata.ptx_kernel, strata.ptx_launch), which the module writer makes
/// the step's ptx_kernel and ptx_launch (docs/runtime.md). The new name makes
/// a runtime that does not read that launch fail to find the kernel in the
/// PTX, with a message naming it, rather than launch it in the cubin's grid.
/// Each launch says whether its kernel waits for the grids before it and
/// whether it walks its work with a stride of its grid (persistent); the gpu
/// stage makes the two variants agree on both, and a difference is an
/// internal error here rather than a kernel contract that depends on which
/// image a driver loads.
/// Every other kernel takes the same grid and block in both and at most the
/// same dynamic shared memory (wgmma's kernels only ever ask for more).
static LogicalResult recordPortableLaunches(ModuleOp module,
                                            ModuleOp portable) {
  ModuleOp kernels = getKernelsModule(portable);
  Builder b(module.getContext());
  for (auto decl : module.getOps<func::FuncOp>()) {
    if (!kernel::isCodegen(decl))
      continue;
    auto other = portable.lookupSymbol<func::FuncOp>(decl.getSymName());
    Operation *body =
        kernels ? kernels.lookupSymbol(decl.getSymName()) : nullptr;
    if (!other || !body)
      return decl.emitError("internal error: kernel ")
             << decl.getSymName() << " is missing from the portable PTX";
    auto launch = kernel::get<kernel::Launch>(decl);
    auto otherLaunch = kernel::get<kernel::Launch>(other);
    if (!launch || !otherLaunch)
      return decl.emitError("internal error: kernel ")
             << decl.getSymName() << " has no launch in one of its variants";
    if (launch.getGrid() == otherLaunch.getGrid() &&
        launch.getBlock() == otherLaunch.getBlock() &&
        otherLaunch.getShared() <= launch.getShared())
      continue;
    if (launch.getPersistent() != otherLaunch.getPersistent() ||
        launch.getWaitsForGrids() != otherLaunch.getWaitsForGrids())
      return decl.emitError("internal error: kernel ")
             << decl.getSymName()
             << " is launched differently in the portable PTX's variant "
                "than in the cubin's, and differs in what a launch of its "
                "own cannot say (persistent blocks, the wait for the grids "
                "before it)";
    std::string name = (decl.getSymName() + "_ptx").str();
    if (portable.lookupSymbol(name) || kernels.lookupSymbol(name))
      return decl.emitError("internal error: the portable PTX's kernel ")
             << name << " exists twice";
    if (failed(SymbolTable::replaceAllSymbolUses(other, b.getStringAttr(name),
                                                 portable)))
      return other.emitError("internal error: cannot rename the kernel");
    SymbolTable::setSymbolName(other, name);
    SymbolTable::setSymbolName(body, name);
    kernel::set<kernel::PtxKernel>(decl, b.getStringAttr(name));
    kernel::set<kernel::PtxLaunch>(decl, otherLaunch);
  }
  return success();
}

LogicalResult CudaTarget::compile(ModuleOp module,
                                  const CompileOptions &options,
                                  std::vector<uint8_t> &moduleBytes,
                                  Stage from) const {
  // On the cuda target by default, a module whose kernels have forms for
  // sm_90a (wgmma) gets its cubin for sm_90a and its PTX, for later GPUs,
  // generated again for sm_90 from the kernel stage on; any other module is
  // compiled once, for sm_90, which is then both (gpuCodeArchitectures).
  CompileOptions effective = options;
  std::string portableArch;
  OwningOpRef<ModuleOp> portableModule;
  if (from <= Stage::Kernel && !gpuPortableArchitecture(options).empty()) {
    if (failed(runStages(module, options, from, Stage::Kernel)))
      return failure();
    from = Stage::Kernel;
    GpuArchitectures archs = gpuCodeArchitectures(module, options);
    if (archs.ptx != archs.cubin) {
      portableArch = archs.ptx;
      portableModule = module.clone();
    } else {
      effective.cpu = archs.cubin;
    }
  }
  if (failed(runStages(module, effective, from, Stage::Llvm)))
    return failure();
  CompileProgress::begin("object stage: LLVM and ptxas on " +
                         generatedKernelsText(module));
  GpuCode gpu;
  if (failed(generateGpuCode(module, effective, gpu)))
    return failure();
  CompileProgress::end("object stage", options.verbose);
  if (portableModule) {
    CompileOptions portableOptions = options;
    portableOptions.cpu = portableArch;
    portableOptions.verbose = false;
    // Its stages' IR goes beside the main dumps, in portable-ptx/.
    std::string dumpDir = getDumpDirectory(options);
    portableOptions.dumpDir = dumpDir.empty() ? "" : dumpDir + "/portable-ptx";
    CompileProgress::begin("portable PTX for " + portableArch);
    GpuCode portableCode;
    if (failed(runStages(*portableModule, portableOptions, Stage::Kernel,
                         Stage::Llvm)) ||
        failed(recordPortableLaunches(module, *portableModule)) ||
        failed(generateGpuCode(*portableModule, portableOptions, portableCode,
                               /*ptxOnly=*/true)))
      return failure();
    gpu.ptx = std::move(portableCode.ptx);
    gpu.ptxArch = portableCode.arch;
    // The portable stages ran quietly (verbose off); this step's time
    // covers them.
    CompileProgress::end("portable PTX for " + portableArch, options.verbose);
  }
  CompileProgress::begin("module stage");
  if (failed(writeGpuModule(module, effective, gpu, moduleBytes)))
    return failure();
  CompileProgress::end("module stage", options.verbose);
  return success();
}
