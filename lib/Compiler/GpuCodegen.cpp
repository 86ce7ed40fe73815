//===- GpuCodegen.cpp - the object stage for NVIDIA GPUs --------*- C++ -*-===//
//
// The instruction layer for --target=cuda, after the llvm stage left the
// kernels in `module @kernels` in the LLVM dialect with NVVM intrinsics:
//
//   LLVM dialect --translate--> LLVM IR (kernels get the PTX kernel calling
//     convention; their pointer parameters are noalias and 64-byte aligned,
//     which the runtime guarantees)
//   --link libdevice (only the functions used) when the kernels call it-->
//   --O3 for the NVPTX target machine (NVVMReflect, address-space
//     inference)--> PTX text --ptxas--> cubin
//
// The module carries both: the cubin runs on the GPU it was built for, the
// PTX is JIT-compiled by the driver on any later one (docs/gpu.md says why
// the PTX targets plain sm_90 rather than sm_90a).
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Gpu.h"
#include "LlvmBackend.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>
#include <set>

using namespace mlir;
namespace kernel = strata::kernel;

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

static constexpr const char *kTriple = "nvptx64-nvidia-cuda";

static void initializeNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::string strata::checkGpuArchitecture(llvm::StringRef arch) {
  initializeNvptx();
  std::string error;
  if (llvmKnowsProcessor(kTriple, arch, error))
    return "";
  if (!error.empty())
    return "this LLVM has no NVPTX target: " + error;
  return "unknown GPU '" + arch.str() +
         "' (--cpu for the cuda target names an NVPTX processor such as "
         "sm_90, sm_90a or sm_80; the default, native, is the H100/H200)";
}

/// The CUDA toolkit directories to look in: $CUDA_PATH, $CUDA_HOME,
/// /usr/local/cuda.
static std::vector<std::string> cudaRoots() {
  std::vector<std::string> roots;
  for (const char *var : {"CUDA_PATH", "CUDA_HOME"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(var))
      if (!value->empty())
        roots.push_back(*value);
  roots.push_back("/usr/local/cuda");
  return roots;
}

/// ptxas: $STRATA_PTXAS, else PATH, else the toolkit directories.
static std::optional<std::string> findPtxas() {
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("STRATA_PTXAS"))
    return env->empty() ? std::nullopt : env;
  if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName("ptxas"))
    return *path;
  for (const std::string &root : cudaRoots()) {
    std::string path = root + "/bin/ptxas";
    if (llvm::sys::fs::can_execute(path))
      return path;
  }
  return std::nullopt;
}

/// libdevice.10.bc: $STRATA_LIBDEVICE, else next to ptxas, the toolkit
/// directories, or Debian's nvidia-cuda-toolkit.
static std::optional<std::string> findLibdevice() {
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("STRATA_LIBDEVICE"))
    return env;
  std::vector<std::string> candidates;
  if (std::optional<std::string> ptxas = findPtxas())
    candidates.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
            .str() +
        "/nvvm/libdevice/libdevice.10.bc");
  for (const std::string &root : cudaRoots())
    candidates.push_back(root + "/nvvm/libdevice/libdevice.10.bc");
  candidates.push_back(
      "/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc");
  for (const std::string &path : candidates)
    if (llvm::sys::fs::exists(path))
      return path;
  return std::nullopt;
}

/// Assembles `ptx` for `arch` with ptxas into `cubin`.
static LogicalResult assemble(ModuleOp module, const std::string &ptxas,
                              const std::string &ptx, const std::string &arch,
                              std::vector<uint8_t> &cubin) {
  strata::ExternalToolRun run;
  run.name = "ptxas";
  run.program = ptxas;
  run.inputName = "kernels.ptx";
  run.outputName = "kernels.cubin";
  run.arguments = [&](llvm::StringRef in, llvm::StringRef out) {
    return std::vector<std::string>{"-arch=" + arch, "-O3", "-o", out.str(),
                                    in.str()};
  };
  run.failure = "ptxas failed to assemble the kernels for " + arch;
  // A toolkit older than the architecture says so in its own words ("Value
  // 'sm_90a' is not defined for option 'gpu-name'" before CUDA 12.0).
  run.hint = [arch](llvm::StringRef log) -> std::string {
    if (!log.contains(arch) ||
        !(log.contains("not defined") || log.contains("nsupported") ||
          log.contains("nknown")))
      return "";
    return "this ptxas does not know " + arch +
           ": point $STRATA_PTXAS at a newer one (sm_90a needs CUDA 12.0 or "
           "later), or compile for a GPU it knows with --cpu" +
           (arch == "sm_90a" ? std::string(" (--cpu=sm_90: attention kernels "
                                           "then use mma.sync, not wgmma)")
                             : std::string());
  };
  return strata::runExternalTool(module, run, ptx, cubin);
}

LogicalResult strata::generateGpuCode(ModuleOp module,
                                      const CompileOptions &options,
                                      GpuCode &code, bool ptxOnly) {
  initializeNvptx();
  code = GpuCode();
  code.arch = gpuArchitecture(options);
  code.ptxArch = code.arch;
  ModuleOp kernels = getKernelsModule(module);
  std::vector<std::string> names;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto kind = kernel::get<kernel::Kind>(func);
    // Library calls (cuBLASLt) are the runtime's: no GPU code here.
    if (!kind || kind.getValue() != "codegen")
      continue;
    if (!kernels || !func.isDeclaration() || !kernel::has<kernel::Launch>(func))
      return func.emitError("the module is not at the llvm stage of the cuda "
                            "target: kernel ")
             << func.getSymName() << " was not mapped to the GPU";
    names.push_back(func.getSymName().str());
  }
  if (names.empty())
    return success();
  if (failed(verifyLoweredToLlvm(kernels,
                                 NVVM::NVVMDialect::getDialectNamespace())))
    return failure();

  // Loop annotations: the GEMM kernel's "nounroll" (GpuGemm.cpp).
  attachLoopAnnotations(kernels);

  MLIRContext *context = module.getContext();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  registerNVVMDialectTranslation(*context);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(kernels, llvmContext, "strata_gpu_kernels");
  if (!llvmModule)
    return module.emitError("translating the GPU kernels to LLVM IR failed");

  std::string error;
  llvm::Triple triple(kTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("this LLVM has no NVPTX target: ") << error;
  if (std::string bad = checkGpuArchitecture(code.arch); !bad.empty())
    return module.emitError(bad);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, code.arch, "", llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return module.emitError("LLVM cannot generate code for GPU '")
           << code.arch << "'";
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  std::set<std::string> kernelNames(names.begin(), names.end());
  for (const std::string &name : names) {
    llvm::Function *function = llvmModule->getFunction(name);
    if (!function)
      return module.emitError("internal error: kernel ")
             << name << " disappeared during lowering";
    function->setCallingConv(llvm::CallingConv::PTX_Kernel);
    function->setLinkage(llvm::GlobalValue::ExternalLinkage);
    function->setVisibility(llvm::GlobalValue::DefaultVisibility);
    // One buffer per parameter, never overlapping another the kernel
    // writes, at 64-byte boundaries (docs/runtime.md).
    for (llvm::Argument &arg : function->args())
      if (arg.getType()->isPointerTy()) {
        arg.addAttr(llvm::Attribute::NoAlias);
        arg.addAttr(
            llvm::Attribute::getWithAlignment(llvmContext, llvm::Align(64)));
      }
  }

  // Multiplies and adds may contract into FMAs, as nvcc's --fmad=true
  // does by default: one rounding instead of two, and one instruction.
  // Nothing reassociates (a sum's order stays as the kernel wrote it) and
  // NaN and infinity semantics stay strict. libdevice, linked below, keeps
  // its own flags.
  strata::allowFloatContraction(*llvmModule, /*reassociate=*/false);

  bool needsLibdevice = false;
  for (llvm::Function &function : *llvmModule)
    if (function.isDeclaration() && function.getName().starts_with("__nv_"))
      needsLibdevice = true;
  if (needsLibdevice) {
    std::optional<std::string> path = findLibdevice();
    if (!path)
      return module.emitError(
          "the GPU kernels call math functions from CUDA's libdevice, and "
          "libdevice.10.bc was not found (looked in $STRATA_LIBDEVICE, next "
          "to ptxas, $CUDA_PATH, $CUDA_HOME and /usr/local/cuda under "
          "nvvm/libdevice)");
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> libdevice =
        llvm::parseIRFile(*path, diagnostic, llvmContext);
    if (!libdevice) {
      std::string text;
      llvm::raw_string_ostream os(text);
      diagnostic.print("strata", os);
      return module.emitError("cannot read libdevice ")
             << *path << ": " << text;
    }
    libdevice->setTargetTriple(triple);
    libdevice->setDataLayout(machine->createDataLayout());
    if (llvm::Linker::linkModules(*llvmModule, std::move(libdevice),
                                  llvm::Linker::LinkOnlyNeeded))
      return module.emitError("linking libdevice (") << *path << ") failed";
  }
  // Only the kernels are entry points: everything else may be inlined and
  // dropped.
  for (llvm::Function &function : *llvmModule)
    if (!function.isDeclaration() &&
        !kernelNames.count(function.getName().str()))
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  // libdevice asks NVVMReflect whether to flush denormals: no, as on the
  // CPU.
  llvmModule->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz",
                            static_cast<uint32_t>(0));
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return module.emitError("internal error: invalid LLVM IR for the GPU "
                            "kernels");

  strata::optimizeLlvmModule(*llvmModule, *machine);

  auto emitPtx = [&](llvm::Module &llvmModule,
                     std::string &text) -> LogicalResult {
    llvm::SmallString<0> ptx;
    if (!strata::emitLlvmModule(llvmModule, *machine,
                                llvm::CodeGenFileType::AssemblyFile, ptx))
      return module.emitError("LLVM cannot emit PTX for ") << code.arch;
    text = ptx.str().str();
    return success();
  };
  if (failed(emitPtx(*llvmModule, code.ptx)))
    return failure();
  std::optional<std::string> ptxas = findPtxas();
  std::string dumpDir = getDumpDirectory(options);
  if (!dumpDir.empty()) {
    writeDumpFile(dumpDir, "70-object.ll", [&](llvm::raw_ostream &os) {
      llvmModule->print(os, nullptr);
    });
    writeDumpFile(dumpDir, "70-object.ptx",
                  [&](llvm::raw_ostream &os) { os << code.ptx; });
    // Each kernel's own LLVM IR, PTX and cubin: the module with the other
    // kernels as declarations.
    for (const std::string &name : kernelNames) {
      llvm::ValueToValueMapTy map;
      std::unique_ptr<llvm::Module> one = llvm::CloneModule(
          *llvmModule, map, [&](const llvm::GlobalValue *value) {
            return !kernelNames.count(value->getName().str()) ||
                   value->getName() == name;
          });
      for (llvm::Function &function : llvm::make_early_inc_range(*one))
        if (function.isDeclaration() && function.use_empty() &&
            kernelNames.count(function.getName().str()))
          function.eraseFromParent();
      std::string prefix = "kernels/" + name + "/" + name;
      writeDumpFile(dumpDir, prefix + ".ll",
                    [&](llvm::raw_ostream &os) { one->print(os, nullptr); });
      std::string ptx;
      if (failed(emitPtx(*one, ptx)))
        continue;
      writeDumpFile(dumpDir, prefix + ".ptx",
                    [&](llvm::raw_ostream &os) { os << ptx; });
      std::vector<uint8_t> cubin;
      if (ptxas && succeeded(assemble(module, *ptxas, ptx, code.arch, cubin)))
        writeDumpFile(dumpDir, prefix + ".cubin", [&](llvm::raw_ostream &os) {
          os.write(reinterpret_cast<const char *>(cubin.data()), cubin.size());
        });
    }
    writeDumpIndex(options, module);
  }

  if (ptxOnly)
    return success();
  if (!ptxas) {
    emitWarning(module.getLoc())
        << "ptxas was not found (PATH, $CUDA_PATH, $CUDA_HOME, "
           "/usr/local/cuda/bin): the module carries PTX only, which the "
           "driver compiles when the module is loaded";
    return success();
  }
  if (failed(assemble(module, *ptxas, code.ptx, code.arch, code.cubin)))
    return failure();
  if (!dumpDir.empty())
    writeDumpFile(dumpDir, "70-object.cubin", [&](llvm::raw_ostream &os) {
      os.write(reinterpret_cast<const char *>(code.cubin.data()),
               code.cubin.size());
    });
  return success();
}
