//===- KernelCodegen.cpp - the object stage: kernels to x86-64 --*- C++ -*-===//
//
// The instruction layer for the CPU, after the llvm stage (Pipeline.h) left
// the generated kernels in `module @kernels` in the LLVM dialect:
//
//   LLVM dialect --translate--> LLVM IR
//     --one wrapper per kernel with the runtime's ABI, O3 for the chosen
//       CPU--> object file --ld.lld--> shared object
//
// The wrapper is `void name(void *const *buffers, int64_t begin, int64_t
// end)` (docs/runtime.md); it loads the buffer pointers and calls the
// lowered body, which takes one pointer per input and output.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "LlvmBackend.h"
#include "RowParallel.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Pipeline.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/StructuralHash.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/FunctionComparator.h"

#include <map>
#include <mutex>
#include <optional>
#include <sstream>

using namespace mlir;
namespace kernel = strata::kernel;
namespace graph = strata::graph;

void strata::registerCompilerDialects(DialectRegistry &registry) {
  strata::registerAllDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  // Plugins' dialects (Pipeline.h).
  strata::applyDialectRegistrations(registry);
}

/// LLVM's native target, once.
static void initializeCodegen() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// Gives LLVM the compile's options (CompileOptions::llvmOptions). LLVM
/// keeps them per process: the first options given are applied (a compile
/// without any before them leaves nothing to undo), and a later compile
/// that asks for others is refused rather than silently compiled with the
/// first. Options LLVM rejects stay rejected for every later compile that
/// asks for them: LLVM may have taken some of them before it stopped.
static LogicalResult applyLlvmOptions(ModuleOp module,
                                      const std::string &text) {
  static std::mutex mutex;
  static std::optional<std::string> applied;
  static std::string rejection;
  std::lock_guard<std::mutex> lock(mutex);
  if (!applied && text.empty())
    return success();
  if (!applied) {
    applied = text;
    std::vector<std::string> words{"strata"};
    std::istringstream in(text);
    for (std::string w; in >> w;)
      words.push_back(w);
    std::vector<const char *> argv;
    for (auto &w : words)
      argv.push_back(w.c_str());
    llvm::raw_string_ostream errors(rejection);
    if (llvm::cl::ParseCommandLineOptions(argv.size(), argv.data(), "",
                                          &errors))
      rejection.clear();
    else if (rejection.empty())
      rejection = "LLVM's command line parser refused them";
  }
  if (*applied != text)
    return module.emitError("LLVM's options are set once per process: this "
                            "one has '")
           << *applied << "', and this compile asks for '" << text << "'";
  if (!rejection.empty())
    return module.emitError("LLVM options '")
           << text << "' are not valid: " << llvm::StringRef(rejection).trim();
  return success();
}

/// The LLVM CPU name for an option value.
static std::string resolveCpu(const std::string &cpu) {
  if (cpu.empty() || cpu == "native")
    return llvm::sys::getHostCPUName().str();
  if (cpu == "avx2")
    return "x86-64-v3";
  if (cpu == "avx512")
    return "x86-64-v4";
  return cpu;
}

std::string strata::checkHostCpu(llvm::StringRef cpu) {
  if (cpu.empty() || cpu == "native" || cpu == "avx2" || cpu == "avx512")
    return "";
  initializeCodegen();
  std::string triple = llvm::sys::getDefaultTargetTriple(), error;
  if (llvmKnowsProcessor(triple, cpu, error))
    return "";
  if (!error.empty())
    return "no LLVM target for " + triple + ": " + error;
  std::string message = "unknown CPU '" + cpu.str() +
                        "' (--cpu for the cpu target is native, avx2, avx512 "
                        "or an x86-64 processor such as x86-64-v3 or skylake";
  if (cpu.starts_with("sm_") || cpu.starts_with("gfx"))
    message += "; '" + cpu.str() + "' is a GPU: add --target=cuda";
  return message + ")";
}

static std::string hostFeatures(const std::string &cpu) {
  if (!(cpu.empty() || cpu == "native"))
    return "";
  std::string features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty())
      features += ",";
    features += (feature.second ? "+" : "-") + feature.first().str();
  }
  return features;
}

/// Adds `void name(void *const *buffers, int64_t begin, int64_t end)` around
/// the lowered body `name` (renamed name.body and made internal). Without
/// `blockStrides` the body runs once on whole buffers; with them it runs
/// once per row block in [begin, end), each buffer advanced by its stride
/// (0 for the buffers every block reads whole).
static void addAbiWrapper(llvm::Module &module, llvm::Function *body,
                          const std::string &name,
                          ArrayRef<int64_t> blockStrides) {
  llvm::LLVMContext &context = module.getContext();
  body->setName(name + ".body");
  body->setLinkage(llvm::GlobalValue::InternalLinkage);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  auto *ptrTy = llvm::PointerType::getUnqual(context);
  auto *i64Ty = llvm::Type::getInt64Ty(context);
  auto *i8Ty = llvm::Type::getInt8Ty(context);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                       {ptrTy, i64Ty, i64Ty}, false);
  auto *wrapper = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, name, module);
  wrapper->setVisibility(llvm::GlobalValue::DefaultVisibility);
  auto *entry = llvm::BasicBlock::Create(context, "entry", wrapper);
  llvm::IRBuilder<> b(entry);
  llvm::Value *buffers = wrapper->getArg(0);
  llvm::SmallVector<llvm::Value *> bases;
  for (unsigned i = 0; i < body->arg_size(); ++i) {
    llvm::Value *slot = b.CreateConstInBoundsGEP1_64(ptrTy, buffers, i);
    bases.push_back(b.CreateAlignedLoad(ptrTy, slot, llvm::Align(8)));
  }
  if (blockStrides.empty()) {
    b.CreateCall(body, bases);
    b.CreateRetVoid();
    return;
  }
  // for (block = begin; block < end; ++block) body(base_i + block * s_i)
  llvm::Value *begin = wrapper->getArg(1), *end = wrapper->getArg(2);
  auto *header = llvm::BasicBlock::Create(context, "block.header", wrapper);
  auto *loop = llvm::BasicBlock::Create(context, "block.body", wrapper);
  auto *exit = llvm::BasicBlock::Create(context, "exit", wrapper);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode *block = b.CreatePHI(i64Ty, 2, "block");
  block->addIncoming(begin, entry);
  b.CreateCondBr(b.CreateICmpSLT(block, end), loop, exit);
  b.SetInsertPoint(loop);
  llvm::SmallVector<llvm::Value *> args;
  for (auto [base, stride] : llvm::zip(bases, blockStrides)) {
    if (stride == 0) {
      args.push_back(base);
      continue;
    }
    llvm::Value *offset = b.CreateMul(block, b.getInt64(stride));
    args.push_back(b.CreateInBoundsGEP(i8Ty, base, offset));
  }
  b.CreateCall(body, args);
  block->addIncoming(b.CreateAdd(block, b.getInt64(1)), loop);
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
}

/// The kernels among `names` whose lowered bodies repeat an earlier one's,
/// each mapped to that first kernel: the same instructions on the same
/// types and constants (LLVM's FunctionComparator, which MergeFunctions
/// uses; it errs on the side of "different") with the same row-block
/// strides. A model's repeated layers lower to the same kernels (BERT-base:
/// 72 kernels, 6 distinct), and LLVM's O3 and code generation, most of a
/// compile, then run once per distinct kernel instead of once per layer.
static std::map<std::string, std::string> findRepeatedKernels(
    llvm::Module &module, ArrayRef<std::string> names,
    const std::map<std::string, SmallVector<int64_t>> &strides) {
  std::map<std::string, std::string> sameAs;
  llvm::GlobalNumberState globals;
  // Candidates by structural hash and strides, then compared in full.
  std::map<std::pair<llvm::stable_hash, SmallVector<int64_t>>,
           SmallVector<llvm::Function *>>
      firsts;
  for (const std::string &name : names) {
    llvm::Function *body = module.getFunction(name);
    auto it = strides.find(name);
    SmallVector<int64_t> blockStrides =
        it == strides.end() ? SmallVector<int64_t>() : it->second;
    SmallVector<llvm::Function *> &candidates =
        firsts[{llvm::StructuralHash(*body), blockStrides}];
    llvm::Function *same = nullptr;
    for (llvm::Function *first : candidates)
      if (llvm::FunctionComparator(first, body, &globals).compare() == 0) {
        same = first;
        break;
      }
    if (same)
      sameAs[name] = same->getName().str();
    else
      candidates.push_back(body);
  }
  return sameAs;
}

static LogicalResult emitError(ModuleOp module, const llvm::Twine &message) {
  return module.emitError(message);
}

/// Links `object` into a shared object with ld.lld.
static LogicalResult linkSharedObject(ModuleOp module,
                                      llvm::ArrayRef<char> object,
                                      std::vector<uint8_t> &sharedObject) {
  std::optional<std::string> lld = strata::findLdLld();
  if (!lld)
    return emitError(module, strata::kNoLdLld);

  strata::ExternalToolRun run;
  run.name = "ld.lld";
  run.program = *lld;
  run.inputName = "kernels.o";
  run.outputName = "kernels.so";
  run.arguments = [](llvm::StringRef in, llvm::StringRef out) {
    return std::vector<std::string>{
        "-shared", "--hash-style=gnu", "-z",    "noexecstack", "-O1",
        "-o",      out.str(),          in.str()};
  };
  run.failure = "linking the kernels failed";
  return runExternalTool(
      module, run, llvm::StringRef(object.data(), object.size()), sharedObject);
}

LogicalResult strata::generateKernelCode(ModuleOp module,
                                         const CompileOptions &options,
                                         std::vector<uint8_t> &sharedObject) {
  initializeCodegen();
  if (failed(applyLlvmOptions(module, options.llvmOptions)))
    return failure();
  sharedObject.clear();
  ModuleOp kernels = getKernelsModule(module);
  // The generated kernels (declarations at the top level, with their
  // decisions) and, for row-parallel ones, each buffer's bytes per block.
  std::vector<std::string> names;
  std::map<std::string, SmallVector<int64_t>> strides;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto kind = kernel::get<kernel::Kind>(func);
    if (!kind || kind.getValue() != "codegen")
      continue;
    if (!kernels || !func.isDeclaration())
      return func.emitError("the module is not at the llvm stage: kernel ")
             << func.getSymName() << " was not lowered";
    names.push_back(func.getSymName().str());
    if (auto block = kernel::get<kernel::BlockStrides>(func))
      strides[names.back()] = SmallVector<int64_t>(block.asArrayRef());
  }
  if (names.empty())
    return success();
  bool inLLVM = true;
  kernels.walk([&](Operation *op) {
    if (op != kernels && !isa<LLVM::LLVMDialect>(op->getDialect()))
      inLLVM = false;
  });
  if (!inLLVM)
    return kernels.emitError("the kernels are not in the LLVM dialect (the "
                             "module is not at the llvm stage)");

  // strata-vectorize-inner-loops' "do not unroll" marks.
  attachLoopAnnotations(kernels);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(kernels, llvmContext, "strata_kernels");
  if (!llvmModule)
    return emitError(module, "translating the kernels to LLVM IR failed");

  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
  if (!target)
    return emitError(module, "no LLVM target for " + triple + ": " + error);
  if (std::string bad = checkHostCpu(options.cpu); !bad.empty())
    return emitError(module, bad);
  std::string cpu = resolveCpu(options.cpu);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      llvm::Triple(triple), cpu, hostFeatures(options.cpu),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return emitError(module, "LLVM cannot generate code for CPU '" + cpu + "'");
  llvmModule->setTargetTriple(llvm::Triple(triple));
  llvmModule->setDataLayout(machine->createDataLayout());

  for (const std::string &name : names)
    if (!llvmModule->getFunction(name))
      return emitError(module, "internal error: kernel " + name +
                                   " disappeared during lowering");
  std::map<std::string, std::string> sameAs =
      findRepeatedKernels(*llvmModule, names, strides);
  for (const std::string &name : names) {
    llvm::Function *body = llvmModule->getFunction(name);
    if (sameAs.count(name)) {
      body->eraseFromParent();
      continue;
    }
    auto it = strides.find(name);
    addAbiWrapper(*llvmModule, body, name,
                  it == strides.end() ? ArrayRef<int64_t>()
                                      : ArrayRef<int64_t>(it->second));
  }
  // A repeated kernel is its first occurrence's code under its own name,
  // which the runtime looks up as any other.
  for (const auto &[name, first] : sameAs) {
    llvm::Function *wrapper = llvmModule->getFunction(first);
    auto *alias = llvm::GlobalAlias::create(wrapper->getFunctionType(), 0,
                                            llvm::GlobalValue::ExternalLinkage,
                                            name, wrapper, llvmModule.get());
    alias->setVisibility(llvm::GlobalValue::DefaultVisibility);
  }
  // Let LLVM reassociate floating-point arithmetic and contract it into
  // FMAs: without reassociation it cannot vectorize a reduction (a matmul's
  // or a softmax's sum), which measured 3-5x slower on small matmuls. NaN
  // and infinity semantics stay strict (no nnan/ninf): ONNX's tests check
  // them.
  strata::allowFloatContraction(*llvmModule, /*reassociate=*/true);
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return emitError(module, "internal error: invalid LLVM IR for kernels");

  strata::optimizeLlvmModule(*llvmModule, *machine);

  auto emitObject = [&](llvm::Module &llvmModule,
                        llvm::SmallVectorImpl<char> &object) {
    if (!strata::emitLlvmModule(llvmModule, *machine,
                                llvm::CodeGenFileType::ObjectFile, object))
      return emitError(module, "LLVM cannot emit an object file for " + cpu);
    return success();
  };
  std::string dumpDir = getDumpDirectory(options);
  if (!dumpDir.empty()) {
    writeDumpFile(dumpDir, "70-object.ll", [&](llvm::raw_ostream &os) {
      llvmModule->print(os, nullptr);
    });
    // Each kernel's own LLVM IR and object: the module with only its
    // wrapper and body defined (a repeated kernel's: its first
    // occurrence's, which its symbol is an alias of).
    for (const std::string &name : names) {
      auto same = sameAs.find(name);
      std::string code = same == sameAs.end() ? name : same->second;
      llvm::ValueToValueMapTy map;
      std::unique_ptr<llvm::Module> one = llvm::CloneModule(
          *llvmModule, map, [&](const llvm::GlobalValue *value) {
            if (isa<llvm::GlobalVariable>(value))
              return true;
            return value->getName() == code ||
                   value->getName() == code + ".body";
          });
      std::string prefix = "kernels/" + name + "/" + name;
      writeDumpFile(dumpDir, prefix + ".ll", [&](llvm::raw_ostream &os) {
        if (code != name)
          os << "; kernel " << name << " is the code of " << code
             << " (the same body): its symbol is an alias of " << code
             << "'s\n";
        one->print(os, nullptr);
      });
      llvm::SmallVector<char, 0> object;
      if (succeeded(emitObject(*one, object)))
        writeDumpFile(dumpDir, prefix + ".o", [&](llvm::raw_ostream &os) {
          os.write(object.data(), object.size());
        });
    }
    writeDumpIndex(options, module);
  }
  llvm::SmallVector<char, 0> object;
  if (failed(emitObject(*llvmModule, object)))
    return failure();
  return linkSharedObject(module, object, sharedObject);
}
