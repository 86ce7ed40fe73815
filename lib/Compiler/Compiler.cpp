//===- Compiler.cpp - the whole compile path --------------------*- C++ -*-===//

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Pipeline.h"

#include "CompilerUtils.h"
#include "Gpu.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <iterator>

#include <chrono>

using namespace mlir;

/// The portable PTX's variant of a kernel may launch differently from the
/// cubin's: the attention kernel's blocks without wgmma (GpuAttention.cpp,
/// queryRows). Such a kernel is renamed in the portable module (`<name>_ptx`)
/// and its launch recorded on the main module's declaration
/// (strata.ptx_kernel, strata.ptx_grid, strata.ptx_block,
/// strata.ptx_shared_bytes), which the module writer makes the step's ptx_*
/// attributes (docs/runtime.md). The new name makes a runtime that predates
/// those attributes fail to find the kernel in the PTX, with a message
/// naming it, rather than launch it in the cubin's grid. What a launch does
/// not carry must agree: whether the kernel waits for the grids before it,
/// and whether it walks its work with a stride of its grid (persistent).
/// Every other kernel takes the same grid and block in both and at most the
/// same dynamic shared memory (wgmma's kernels only ever ask for more).
static LogicalResult recordPortableLaunches(ModuleOp module,
                                            ModuleOp portable) {
  ModuleOp kernels = strata::getKernelsModule(portable);
  Builder b(module.getContext());
  for (auto decl : module.getOps<func::FuncOp>()) {
    auto kind = decl->getAttrOfType<StringAttr>("strata.kind");
    if (!kind || kind.getValue() != "codegen")
      continue;
    auto other = portable.lookupSymbol<func::FuncOp>(decl.getSymName());
    Operation *body =
        kernels ? kernels.lookupSymbol(decl.getSymName()) : nullptr;
    if (!other || !body)
      return decl.emitError("internal error: kernel ")
             << decl.getSymName() << " is missing from the portable PTX";
    auto bytes = [](func::FuncOp f) {
      auto a = f->getAttrOfType<IntegerAttr>("strata.gpu_shared_bytes");
      return a ? a.getInt() : 0;
    };
    auto same = [&](StringRef name) {
      return decl->getAttr(name) == other->getAttr(name);
    };
    if (same("strata.gpu_grid") && same("strata.gpu_block") &&
        bytes(other) <= bytes(decl))
      continue;
    if (!same("strata.gpu_persistent") ||
        decl->hasAttr("strata.gpu_waits_for_grids") !=
            other->hasAttr("strata.gpu_waits_for_grids"))
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
    decl->setAttr("strata.ptx_kernel", b.getStringAttr(name));
    decl->setAttr("strata.ptx_grid", other->getAttr("strata.gpu_grid"));
    decl->setAttr("strata.ptx_block", other->getAttr("strata.gpu_block"));
    decl->setAttr("strata.ptx_shared_bytes", b.getI64IntegerAttr(bytes(other)));
  }
  return success();
}

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
  // On the cuda target by default, a module whose kernels have forms for
  // sm_90a (wgmma) gets its cubin for sm_90a and its PTX, for later GPUs,
  // generated again for sm_90 from the kernel stage on; any other module is
  // compiled once, for sm_90, which is then both (gpuCodeArchitectures).
  CompileOptions effective = options;
  std::string portableArch;
  OwningOpRef<ModuleOp> portableModule;
  if (options.target == "cuda" && from <= Stage::Kernel &&
      !gpuPortableArchitecture(options).empty()) {
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
    if (failed(generateGpuCode(module, effective, gpu)))
      return failure();
    done("object");
    if (portableModule) {
      CompileOptions portableOptions = options;
      portableOptions.cpu = portableArch;
      portableOptions.verbose = false;
      // Its stages' IR goes beside the main dumps, in portable-ptx/.
      std::string dumpDir = getDumpDirectory(options);
      portableOptions.dumpDir =
          dumpDir.empty() ? "" : dumpDir + "/portable-ptx";
      GpuCode portableCode;
      if (failed(runStages(*portableModule, portableOptions, Stage::Kernel,
                           Stage::Llvm)) ||
          failed(recordPortableLaunches(module, *portableModule)) ||
          failed(generateGpuCode(*portableModule, portableOptions, portableCode,
                                 /*ptxOnly=*/true)))
        return failure();
      gpu.ptx = std::move(portableCode.ptx);
      gpu.ptxArch = portableCode.arch;
      done(("portable PTX for " + portableArch).c_str());
    }
    if (failed(writeGpuModule(module, effective, gpu, moduleBytes)))
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
