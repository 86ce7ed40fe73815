//===- LlvmBackend.cpp - LLVM's optimizer and code emission -----*- C++ -*-===//

#include "LlvmBackend.h"

#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

bool strata::llvmKnowsProcessor(llvm::StringRef triple, llvm::StringRef cpu,
                                std::string &error) {
  llvm::Triple parsed(triple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(parsed, error);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(parsed, "", ""));
  return info && info->isCPUStringValid(cpu);
}

void strata::allowFloatContraction(llvm::Module &module, bool reassociate) {
  for (llvm::Function &function : module)
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (llvm::isa<llvm::FPMathOperator>(inst)) {
        llvm::FastMathFlags flags = inst.getFastMathFlags();
        flags.setAllowContract();
        if (reassociate)
          flags.setAllowReassoc();
        inst.setFastMathFlags(flags);
      }
}

void strata::optimizeLlvmModule(llvm::Module &module,
                                llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // LLVM's O3 with its default unrolling. Static shapes make every trip
  // count known, so small loop nests are unrolled whole: measured on
  // models/gpt_decoder (cpu), this makes the attention kernel ~10x faster
  // than with unrolling limited (-unroll-threshold=100), at the price of
  // ~4 s of compile time instead of ~0.5 s. Tiling and vectorizing at the
  // linalg level (docs/compiler.md, next steps) is the way to get both.
  // STRATA_LLVM_OPTIONS passes options to LLVM for such experiments.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder passBuilder(&machine, tuning);
  passBuilder.registerModuleAnalyses(mam);
  passBuilder.registerCGSCCAnalyses(cgam);
  passBuilder.registerFunctionAnalyses(fam);
  passBuilder.registerLoopAnalyses(lam);
  passBuilder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      passBuilder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

bool strata::emitLlvmModule(llvm::Module &module, llvm::TargetMachine &machine,
                            llvm::CodeGenFileType fileType,
                            llvm::SmallVectorImpl<char> &out) {
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr, fileType))
    return false;
  codegen.run(module);
  return true;
}
