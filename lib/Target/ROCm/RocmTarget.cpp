//===- RocmTarget.cpp - AMD GPUs, compile-only ------------------*- C++ -*-===//
//
// The object stage for --target=rocm, after the llvm stage left the kernels
// in `module @kernels` in the LLVM dialect with ROCDL intrinsics:
//
//   LLVM dialect --translate--> LLVM IR (the AMDGPU kernel calling
//     convention; pointer parameters noalias and 64-byte aligned, as on the
//     cuda target) --O3 for the AMDGPU target machine--> an ELF object
//     --ld.lld -shared--> an HSA code object
//
//===----------------------------------------------------------------------===//

#include "ROCm/RocmTarget.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "CompilerUtils.h"
#include "Gpu.h"
#include "LlvmBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>
#include <set>

using namespace mlir;
using namespace strata;

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
}

static constexpr const char *kTriple = "amdgcn-amd-amdhsa";

/// What --cpu=native means here: the MI300 (CDNA3).
static constexpr const char *kDefaultGpu = "gfx942";

/// The LDS a workgroup may use on CDNA and RDNA GPUs.
static constexpr int64_t kLdsBytes = 64 * 1024;

static void initializeAmdgpu() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
}

std::string strata::rocmArchitecture(const CompileOptions &options) {
  return options.cpu.empty() || options.cpu == "native" ? kDefaultGpu
                                                        : options.cpu;
}

std::string RocmTarget::checkOptions(const CompileOptions &options) const {
  initializeAmdgpu();
  std::string arch = rocmArchitecture(options);
  std::string error;
  if (llvmKnowsProcessor(kTriple, arch, error))
    return "";
  if (!error.empty())
    return "this LLVM has no AMDGPU target: " + error;
  return "unknown GPU '" + arch +
         "' (--cpu for the rocm target names an AMDGPU processor such as "
         "gfx942 or gfx1100; the default, native, is gfx942, the MI300)";
}

void RocmTarget::registerPasses() const {
  // strata-gpu-map, which the gpu stage shares with the cuda target.
  registerGpuPasses();
  registerRocmPasses();
}

TargetFacts RocmTarget::facts(const CompileOptions &) const {
  TargetFacts facts;
  facts.gpu = true;
  // Static LDS only: the kernels declare what they use, and the launch
  // carries no dynamic size (no runtime launches them yet).
  facts.blockSharedLimit = kLdsBytes;
  return facts;
}

std::vector<PassEntry>
RocmTarget::beforePartition(const CompileOptions &) const {
  // Convolutions as products and gathers, as on the cuda target
  // (ConvToGemm.cpp): their generated kernels then map onto blocks; rolls
  // as gathers (GatherSlices.cpp); long column reductions in stages
  // (SplitReductions.cpp).
  return {PassEntry{"strata-conv-to-gemm", "", false},
          PassEntry{"strata-gather-slices", "", false},
          PassEntry{"strata-split-reductions", "", false}};
}

std::vector<PassEntry>
RocmTarget::mappingPipeline(const CompileOptions &options) const {
  return gpuStagePipeline(facts(options));
}

std::vector<PassEntry>
RocmTarget::llvmPipeline(const CompileOptions &options) const {
  std::vector<PassEntry> entries;
  auto nested = [&](std::string name, std::string opts = "") {
    entries.push_back(PassEntry{std::move(name), std::move(opts), true});
  };
  // strata-gpu-to-rocdl comes before the math conversions: it turns the
  // math functions into arithmetic that needs no library.
  nested("lower-affine");
  nested("convert-scf-to-cf");
  nested("strata-gpu-to-rocdl", "chipset=" + rocmArchitecture(options));
  nested("convert-math-to-llvm");
  nested("arith-expand");
  nested("expand-strided-metadata");
  nested("lower-affine");
  nested("convert-vector-to-llvm");
  std::vector<PassEntry> tail = llvmConversionTail();
  entries.insert(entries.end(), tail.begin(), tail.end());
  nested("strata-rocdl-kernels");
  return entries;
}

std::string RocmTarget::describeCode(
    ModuleOp, const CompileOptions &options,
    std::vector<std::pair<std::string, std::string>> &fields) const {
  std::string arch = rocmArchitecture(options);
  fields = {{"code_object_arch", arch}};
  return "an HSA code object for " + arch +
         " (compile-only: no runtime runs AMD GPUs yet)";
}

/// The generated kernels' names: the codegen declarations the gpu stage
/// mapped.
static FailureOr<std::vector<std::string>> kernelNames(ModuleOp module) {
  std::vector<std::string> names;
  for (auto decl : module.getOps<func::FuncOp>()) {
    if (kernel::isLibrary(decl))
      return decl.emitError("the rocm target runs no library kernels, and ")
             << decl.getSymName() << " is one ("
             << kernel::text<kernel::Library>(decl)
             << "): only generated kernels are compiled for AMD GPUs";
    if (!kernel::isCodegen(decl))
      continue;
    if (!kernel::has<kernel::Launch>(decl))
      return decl.emitError("the module is not at the llvm stage of the rocm "
                            "target: kernel ")
             << decl.getSymName() << " was not mapped to the GPU";
    names.push_back(decl.getSymName().str());
  }
  return names;
}

LogicalResult RocmTarget::generateObject(ModuleOp module,
                                         const CompileOptions &options,
                                         std::vector<uint8_t> &object,
                                         std::string &what) const {
  what = "the kernels' HSA code object";
  object.clear();
  initializeAmdgpu();
  FailureOr<std::vector<std::string>> names = kernelNames(module);
  if (failed(names))
    return failure();
  ModuleOp kernels = getKernelsModule(module);
  if (names->empty() || !kernels)
    return success();
  if (failed(verifyLoweredToLlvm(kernels,
                                 ROCDL::ROCDLDialect::getDialectNamespace())))
    return failure();

  MLIRContext *context = module.getContext();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  registerROCDLDialectTranslation(*context);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(kernels, llvmContext, "strata_rocm_kernels");
  if (!llvmModule)
    return module.emitError("translating the GPU kernels to LLVM IR failed");

  std::string arch = rocmArchitecture(options);
  if (std::string bad = checkOptions(options); !bad.empty())
    return module.emitError(bad);
  std::string error;
  llvm::Triple triple(kTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("this LLVM has no AMDGPU target: ") << error;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, arch, "", llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return module.emitError("LLVM cannot generate code for GPU '")
           << arch << "'";
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  std::set<std::string> kernelSet(names->begin(), names->end());
  for (const std::string &name : *names) {
    llvm::Function *function = llvmModule->getFunction(name);
    if (!function)
      return module.emitError("internal error: kernel ")
             << name << " disappeared during lowering";
    if (function->getCallingConv() != llvm::CallingConv::AMDGPU_KERNEL)
      return module.emitError("internal error: kernel ")
             << name
             << " is not an AMDGPU kernel (strata-gpu-to-rocdl did "
                "not run)";
    function->setLinkage(llvm::GlobalValue::ExternalLinkage);
    function->setVisibility(llvm::GlobalValue::ProtectedVisibility);
    for (llvm::Argument &arg : function->args())
      if (arg.getType()->isPointerTy()) {
        arg.addAttr(llvm::Attribute::NoAlias);
        arg.addAttr(
            llvm::Attribute::getWithAlignment(llvmContext, llvm::Align(64)));
      }
  }
  for (llvm::Function &function : *llvmModule) {
    if (!function.isDeclaration() && !kernelSet.count(function.getName().str()))
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
    // The GPU on every function, as clang writes it: AMDGPU's code
    // generator takes each function's subtarget from it (without it, a
    // generic one that has none of the GPU's instructions).
    if (!function.isDeclaration())
      function.addFnAttr("target-cpu", arch);
  }
  for (llvm::Function &function : *llvmModule)
    if (function.isDeclaration() && !function.isIntrinsic() &&
        !function.use_empty())
      return module.emitError("the rocm kernels call '")
             << function.getName()
             << "', which no library here provides (ROCm's device "
                "libraries are not part of this build)";
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return module.emitError("internal error: invalid LLVM IR for the AMD GPU "
                            "kernels");

  optimizeLlvmModule(*llvmModule, *machine);
  std::string dumpDir = getDumpDirectory(options);
  if (!dumpDir.empty())
    writeDumpFile(dumpDir, "70-object.ll", [&](llvm::raw_ostream &os) {
      llvmModule->print(os, nullptr);
    });
  // The assembly from a copy: code generation rewrites the IR it runs on
  // (control flow becomes amdgcn.if/else intrinsics), so it runs once per
  // module.
  if (!dumpDir.empty()) {
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*llvmModule);
    llvm::SmallString<0> assembly;
    if (emitLlvmModule(*copy, *machine, llvm::CodeGenFileType::AssemblyFile,
                       assembly))
      writeDumpFile(dumpDir, "70-object.s",
                    [&](llvm::raw_ostream &os) { os << assembly; });
  }
  llvm::SmallString<0> relocatable;
  if (!emitLlvmModule(*llvmModule, *machine, llvm::CodeGenFileType::ObjectFile,
                      relocatable))
    return module.emitError("LLVM cannot emit an object for ") << arch;

  // The code object is a shared object for the HSA loader.
  std::optional<std::string> lld = findLdLld();
  if (!lld)
    return module.emitError(kNoLdLld);
  ExternalToolRun run;
  run.name = "ld.lld";
  run.program = *lld;
  run.inputName = "kernels.o";
  run.outputName = "kernels.hsaco";
  run.arguments = [](llvm::StringRef in, llvm::StringRef out) {
    return std::vector<std::string>{"-shared", "-o", out.str(), in.str()};
  };
  run.failure = "linking the AMD GPU kernels into a code object failed";
  return runExternalTool(module, run, relocatable.str(), object);
}

std::string RocmTarget::compileOnlyReason() const {
  return "the rocm target is compile-only: no runtime here runs AMD GPUs "
         "(`strata compile --target=rocm` writes the kernels' HSA code "
         "object)";
}

LogicalResult RocmTarget::compile(ModuleOp module,
                                  const CompileOptions &options,
                                  std::vector<uint8_t> &moduleBytes,
                                  Stage from) const {
  if (failed(runStages(module, options, from, Stage::Llvm)))
    return failure();
  CompileProgress::begin("object stage: LLVM on " +
                         generatedKernelsText(module));
  std::string what;
  if (failed(generateObject(module, options, moduleBytes, what)))
    return failure();
  if (moduleBytes.empty())
    return module.emitError("the model has no generated kernels: there is "
                            "no code object to write for the rocm target");
  CompileProgress::end("object stage", options.verbose);
  return success();
}
