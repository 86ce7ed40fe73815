//===- KernelCodegen.cpp - generated kernels to x86-64 code -----*- C++ -*-===//
//
// The kernel and instruction layers for the CPU. The codegen kernels of a
// partitioned module are copied into one module and lowered together:
//
//   graph ops --strata-convert-graph-to-linalg--> linalg on tensors
//     --elementwise fusion, one-shot bufferization--> linalg on memrefs,
//       results turned into out-parameters (the arena buffers the runtime
//       passes)
//     --loops, LLVM dialect (bare-pointer calling convention)--> LLVM IR
//     --one wrapper per kernel with the runtime's ABI, O3 for the chosen
//       CPU--> object file --ld.lld--> shared object
//
// The wrapper is `void name(void *const *buffers, int64_t begin, int64_t
// end)` (docs/runtime.md); it loads the buffer pointers and calls the
// lowered body, which takes one pointer per input and output.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "RowParallel.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
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
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <map>
#include <mutex>
#include <sstream>

using namespace mlir;
namespace graph = strata::graph;

void strata::registerCompilerDialects(DialectRegistry &registry) {
  strata::registerAllDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
}

/// Upstream passes are looked up by name in the lowering pipeline below.
static void registerCodegenPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerAllPasses();
    strata::registerAllPasses();
    if (const char *opts = std::getenv("STRATA_LLVM_OPTIONS")) {
      std::vector<std::string> words{"strata"};
      std::istringstream in(opts);
      for (std::string w; in >> w;)
        words.push_back(w);
      std::vector<const char *> argv;
      for (auto &w : words)
        argv.push_back(w.c_str());
      llvm::cl::ParseCommandLineOptions(argv.size(), argv.data());
    }
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// From graph ops to buffers (passes of a builtin.module pass manager).
/// Kernels have static shapes, which the bare-pointer calling convention of
/// the second half needs.
static const char *const kBufferizePipeline =
    "strata-convert-graph-to-linalg,"
    "canonicalize,linalg-fuse-elementwise-ops,canonicalize,cse,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs=true "
    "modify-public-functions=true},"
    "canonicalize,"
    "ownership-based-buffer-deallocation,canonicalize,"
    "buffer-deallocation-simplification,bufferization-lower-deallocations";

/// From buffers to the LLVM dialect.
static const char *const kLowerToLLVMPipeline =
    "convert-linalg-to-loops,lower-affine,convert-scf-to-cf,"
    "convert-math-to-llvm,convert-math-to-funcs,convert-math-to-libm,"
    "arith-expand,expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
    "convert-arith-to-llvm,convert-index-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=true},"
    "convert-cf-to-llvm,reconcile-unrealized-casts";

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

/// tensor<...xuiN> as tensor<...xiN>; other types unchanged.
static Type signless(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  auto integer =
      tensor ? dyn_cast<IntegerType>(tensor.getElementType()) : IntegerType();
  if (!integer || integer.isSignless())
    return type;
  return tensor.clone(IntegerType::get(type.getContext(), integer.getWidth()));
}

/// Gives a kernel a signature of signless integers (arith, and so the
/// lowered code, knows no unsigned types; the bytes are the same). Casts to
/// and from the graph ops' unsigned types are inserted at the boundary; they
/// cancel against the graph-to-linalg conversion's own casts.
static void makeSignatureSignless(func::FuncOp func) {
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Type> inputs, results;
  for (BlockArgument arg : entry.getArguments()) {
    Type original = arg.getType(), converted = signless(original);
    inputs.push_back(converted);
    if (converted == original)
      continue;
    arg.setType(converted);
    auto cast = UnrealizedConversionCastOp::create(b, func.getLoc(), original,
                                                   ValueRange{arg});
    arg.replaceAllUsesExcept(cast.getResult(0), cast);
  }
  func.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Type original = operand.get().getType(), converted = signless(original);
      if (converted != original)
        operand.set(UnrealizedConversionCastOp::create(
                        b, ret.getLoc(), converted, ValueRange{operand.get()})
                        .getResult(0));
    }
  });
  for (Type type : func.getFunctionType().getResults())
    results.push_back(signless(type));
  func.setType(FunctionType::get(func.getContext(), inputs, results));
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

static LogicalResult emitError(ModuleOp module, const llvm::Twine &message) {
  return module.emitError(message);
}

/// Links `object` into a shared object with ld.lld.
static LogicalResult linkSharedObject(ModuleOp module,
                                      llvm::ArrayRef<char> object,
                                      std::vector<uint8_t> &sharedObject) {
  llvm::ErrorOr<std::string> lld = llvm::sys::findProgramByName("ld.lld-22");
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld");
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld", {"/usr/lib/llvm-22/bin"});
  if (!lld)
    return emitError(module, "cannot find the linker ld.lld (install the "
                             "Debian package lld-22)");

  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("strata-link", dir))
    return emitError(module,
                     "cannot create a temporary directory: " + ec.message());
  llvm::SmallString<128> objPath(dir), soPath(dir), logPath(dir);
  llvm::sys::path::append(objPath, "kernels.o");
  llvm::sys::path::append(soPath, "kernels.so");
  llvm::sys::path::append(logPath, "link.log");
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(objPath);
    llvm::sys::fs::remove(soPath);
    llvm::sys::fs::remove(logPath);
    llvm::sys::fs::remove(dir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec);
    if (ec)
      return emitError(module, "cannot write " + objPath + ": " + ec.message());
    os.write(object.data(), object.size());
  }
  llvm::SmallVector<llvm::StringRef> args = {
      *lld,   "-shared", "--hash-style=gnu", "-z", "noexecstack", "-O1", "-o",
      soPath, objPath};
  std::string errorText;
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  int rc = llvm::sys::ExecuteAndWait(*lld, args, std::nullopt, redirects, 0, 0,
                                     &errorText);
  if (rc != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
      log = (*buffer)->getBuffer().str();
    return emitError(module, "linking the kernels failed (" + *lld +
                                 "): " + (errorText.empty() ? log : errorText));
  }
  auto buffer = llvm::MemoryBuffer::getFile(soPath);
  if (!buffer)
    return emitError(module, "cannot read the linked kernels " + soPath);
  llvm::StringRef bytes = (*buffer)->getBuffer();
  sharedObject.assign(bytes.begin(), bytes.end());
  return success();
}

LogicalResult strata::generateKernelCode(ModuleOp module,
                                         const CompileOptions &options,
                                         std::vector<uint8_t> &sharedObject) {
  registerCodegenPasses();
  MLIRContext *context = module.getContext();

  // The codegen kernels, copied into a module of their own.
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(module.getLoc());
  std::vector<std::string> names;
  // Row-parallel kernels: bytes per block of each argument and result.
  std::map<std::string, SmallVector<int64_t>> strides;
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(kernels->getBody());
  for (auto func : module.getOps<func::FuncOp>()) {
    auto kind = func->getAttrOfType<StringAttr>("strata.kind");
    if (!kind || kind.getValue() != "codegen")
      continue;
    auto copy = cast<func::FuncOp>(builder.clone(*func));
    copy.setPublic();
    names.push_back(func.getSymName().str());
    if (func->hasAttr("strata.parallel_block")) {
      std::optional<RowPlan> plan = planRows(copy);
      auto block = func->getAttrOfType<IntegerAttr>("strata.parallel_block");
      if (!plan || plan->block != block.getInt())
        return func.emitError("internal error: the kernel's row split "
                              "changed between partitioning and codegen");
      applyRowPlan(copy, *plan);
      strides[names.back()] = plan->blockStrides;
    }
  }
  sharedObject.clear();
  if (names.empty())
    return success();

  for (auto func : kernels->getOps<func::FuncOp>()) {
    makeSignatureSignless(func);
    // Inputs may be constants or other steps' live results: bufferization
    // must copy rather than write into them.
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      func.setArgAttr(i, "bufferization.writable",
                      BoolAttr::get(context, false));
  }
  // Constants cloned into kernels become arith constants, which
  // bufferization turns into read-only globals.
  kernels->walk([](graph::ConstantOp constant) {
    OpBuilder b(constant);
    auto value = dyn_cast<TypedAttr>(constant.getValue());
    if (!value)
      return;
    Value replacement =
        arith::ConstantOp::create(b, constant.getLoc(), value).getResult();
    constant.replaceAllUsesWith(replacement);
    constant.erase();
  });
  auto runPipeline = [&](const char *pipeline) {
    PassManager pm(context);
    if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
      return emitError(module, "internal error: bad lowering pipeline");
    return pm.run(*kernels);
  };
  if (failed(runPipeline(kBufferizePipeline)))
    return failure();
  dumpStage(options, "kernels-buffers", *kernels);
  // A memref.copy between strided buffers lowers to a call of MLIR's
  // runner library (memrefCopy), which kernels must not need: copy with
  // linalg instead, which becomes loops.
  kernels->walk([](memref::CopyOp copy) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  });
  if (failed(runPipeline(kLowerToLLVMPipeline)))
    return failure();

  dumpStage(options, "kernels-llvm-dialect", *kernels);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*kernels, llvmContext, "strata_kernels");
  if (!llvmModule)
    return emitError(module, "translating the kernels to LLVM IR failed");

  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), error);
  if (!target)
    return emitError(module, "no LLVM target for " + triple + ": " + error);
  std::string cpu = resolveCpu(options.cpu);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      llvm::Triple(triple), cpu, hostFeatures(options.cpu),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return emitError(module, "LLVM cannot generate code for CPU '" + cpu + "'");
  llvmModule->setTargetTriple(llvm::Triple(triple));
  llvmModule->setDataLayout(machine->createDataLayout());

  for (const std::string &name : names) {
    llvm::Function *body = llvmModule->getFunction(name);
    if (!body)
      return emitError(module, "internal error: kernel " + name +
                                   " disappeared during lowering");
    auto it = strides.find(name);
    addAbiWrapper(*llvmModule, body, name,
                  it == strides.end() ? ArrayRef<int64_t>()
                                      : ArrayRef<int64_t>(it->second));
  }
  // Let LLVM reassociate floating-point arithmetic and contract it into
  // FMAs: without reassociation it cannot vectorize a reduction (a matmul's
  // or a softmax's sum), which measured 3-5x slower on small matmuls. NaN
  // and infinity semantics stay strict (no nnan/ninf): ONNX's tests check
  // them.
  for (llvm::Function &function : *llvmModule)
    for (llvm::Instruction &inst : llvm::instructions(function))
      if (isa<llvm::FPMathOperator>(inst)) {
        llvm::FastMathFlags flags = inst.getFastMathFlags();
        flags.setAllowReassoc();
        flags.setAllowContract();
        inst.setFastMathFlags(flags);
      }
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return emitError(module, "internal error: invalid LLVM IR for kernels");

  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    // LLVM's O3 with its default unrolling. Static shapes make every trip
    // count known, so small loop nests are unrolled whole: measured on
    // models/gpt_decoder, this makes the attention kernel ~10x faster than
    // with unrolling limited (-unroll-threshold=100), at the price of ~4 s of
    // compile time instead of ~0.5 s. Tiling and vectorizing at the linalg
    // level (docs/compiler.md, next steps) is the way to get both.
    // STRATA_LLVM_OPTIONS passes options to LLVM for such experiments.
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    llvm::PassBuilder passBuilder(machine.get(), tuning);
    passBuilder.registerModuleAnalyses(mam);
    passBuilder.registerCGSCCAnalyses(cgam);
    passBuilder.registerFunctionAnalyses(fam);
    passBuilder.registerLoopAnalyses(lam);
    passBuilder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm =
        passBuilder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(*llvmModule, mam);
  }

  if (!options.dumpDir.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.dumpDir + "/50-kernels-optimized.ll", ec);
    if (!ec)
      llvmModule->print(os, nullptr);
  }
  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return emitError(module, "LLVM cannot emit an object file for " + cpu);
    codegen.run(*llvmModule);
  }
  return linkSharedObject(module, object, sharedObject);
}
