//===- Pipeline.cpp - the compile path's named stages -----------*- C++ -*-===//
//
// Builds each stage's pass pipeline from its entry list (after the plugins'
// edits), runs the stages, and writes the dumps: each stage's IR, each
// kernel's IR at each stage, and an index from kernels to ONNX nodes and
// decisions (docs/compiler.md, "Stages and dumps").
//
//===----------------------------------------------------------------------===//

#include "strata/Compiler/Pipeline.h"
#include "strata/Target/Target.h"

#include "CompilerUtils.h"
#include "Decisions.h"
#include "Gpu.h"
#include "Passes.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>

using namespace mlir;
using namespace strata;

//===----------------------------------------------------------------------===//
// Stage names
//===----------------------------------------------------------------------===//

static const Stage kStages[] = {Stage::Import, Stage::Graph,  Stage::Fused,
                                Stage::Kernel, Stage::Cpu,    Stage::Gpu,
                                Stage::Llvm,   Stage::Object, Stage::Module};
static const char *const kStageNames[] = {"import", "graph",  "fused",
                                          "kernel", "cpu",    "gpu",
                                          "llvm",   "object", "module"};
static_assert(std::size(kStages) == std::size(kStageNames),
              "every stage has a name");

llvm::ArrayRef<Stage> strata::allStages() { return kStages; }

llvm::StringRef strata::stageName(Stage stage) {
  return kStageNames[static_cast<unsigned>(stage)];
}

std::optional<Stage> strata::parseStage(llvm::StringRef name) {
  for (Stage stage : kStages)
    if (stageName(stage) == name)
      return stage;
  return std::nullopt;
}

bool strata::isIRStage(Stage stage) { return stage <= Stage::Llvm; }

std::string strata::stageNameList() {
  std::string list;
  for (Stage stage : kStages)
    list += (list.empty() ? "" : ", ") + stageName(stage).str();
  return list;
}

bool strata::stageApplies(Stage stage, llvm::StringRef targetName) {
  if (stage != Stage::Cpu && stage != Stage::Gpu)
    return true;
  const Target *target = lookupTarget(targetName);
  return target && target->mappingStage() == stage;
}

/// "20" for the graph stage: dumps sort in pipeline order (the two target
/// stages share 50).
static std::string stageNumber(Stage stage) {
  unsigned position = static_cast<unsigned>(stage);
  if (stage > Stage::Cpu)
    --position;
  return std::to_string((position + 1) * 10);
}

//===----------------------------------------------------------------------===//
// Pass entries and the plugins' edits
//===----------------------------------------------------------------------===//

std::string PassEntry::text() const {
  return options.empty() ? name : name + "{" + options + "}";
}

void PipelineEdits::insertBefore(llvm::StringRef anchor,
                                 llvm::StringRef pipeline,
                                 llvm::StringRef origin) {
  edits.push_back(
      {Kind::InsertBefore, anchor.str(), pipeline.str(), origin.str()});
}
void PipelineEdits::insertAfter(llvm::StringRef anchor,
                                llvm::StringRef pipeline,
                                llvm::StringRef origin) {
  edits.push_back(
      {Kind::InsertAfter, anchor.str(), pipeline.str(), origin.str()});
}
void PipelineEdits::disablePass(llvm::StringRef anchor,
                                llvm::StringRef origin) {
  edits.push_back({Kind::Disable, anchor.str(), "", origin.str()});
}
void PipelineEdits::replacePass(llvm::StringRef anchor,
                                llvm::StringRef pipeline,
                                llvm::StringRef origin) {
  edits.push_back({Kind::Replace, anchor.str(), pipeline.str(), origin.str()});
}
void PipelineEdits::replaceStage(Stage stage, llvm::StringRef pipeline,
                                 llvm::StringRef origin) {
  edits.push_back({Kind::ReplaceStage, ("stage:" + stageName(stage)).str(),
                   pipeline.str(), origin.str()});
}

std::vector<PassEntry>
PipelineEdits::apply(Stage stage, std::vector<PassEntry> entries) const {
  std::string stageAnchor = ("stage:" + stageName(stage)).str();
  auto inserted = [](const Edit &edit, bool onKernels) {
    return PassEntry{edit.pipeline, "", onKernels, edit.origin};
  };
  for (const Edit &edit : edits)
    if (edit.kind == Kind::ReplaceStage && edit.anchor == stageAnchor) {
      entries = {inserted(edit, false)};
      edit.matched = true;
    }
  // An anchor names every occurrence of a pass, or those of one stage
  // ("kernel/canonicalize"). Entries a plugin put in are not anchors.
  auto matches = [&](const Edit &edit, const PassEntry &entry) {
    if (entry.origin != "strata")
      return false;
    return edit.anchor == entry.name ||
           edit.anchor == (stageName(stage) + "/" + entry.name).str();
  };
  std::vector<PassEntry> result;
  for (const Edit &edit : edits)
    if (edit.kind == Kind::InsertBefore && edit.anchor == stageAnchor) {
      result.push_back(inserted(edit, false));
      edit.matched = true;
    }
  for (const PassEntry &entry : entries) {
    for (const Edit &edit : edits)
      if (edit.kind == Kind::InsertBefore && matches(edit, entry)) {
        result.push_back(inserted(edit, entry.onKernels));
        edit.matched = true;
      }
    bool kept = true;
    for (const Edit &edit : edits) {
      if (!kept || !matches(edit, entry))
        continue;
      if (edit.kind == Kind::Disable) {
        kept = false;
        edit.matched = true;
      } else if (edit.kind == Kind::Replace) {
        result.push_back(inserted(edit, entry.onKernels));
        kept = false;
        edit.matched = true;
      }
    }
    if (kept)
      result.push_back(entry);
    for (const Edit &edit : edits)
      if (edit.kind == Kind::InsertAfter && matches(edit, entry)) {
        result.push_back(inserted(edit, entry.onKernels));
        edit.matched = true;
      }
  }
  for (const Edit &edit : edits)
    if (edit.kind == Kind::InsertAfter && edit.anchor == stageAnchor) {
      result.push_back(inserted(edit, false));
      edit.matched = true;
    }
  return result;
}

static const char *kindName(int kind) {
  static const char *const names[] = {"insert before", "insert after",
                                      "disable", "replace", "replace stage"};
  return names[kind];
}

std::vector<std::string> PipelineEdits::unmatchedEdits() const {
  std::vector<std::string> result;
  for (const Edit &edit : edits)
    if (!edit.matched)
      result.push_back(edit.origin + ": " +
                       kindName(static_cast<int>(edit.kind)) + " '" +
                       edit.anchor + "' matches no pass or stage");
  return result;
}

std::vector<std::string> PipelineEdits::describe() const {
  std::vector<std::string> result;
  for (const Edit &edit : edits) {
    std::string line = edit.origin + ": " +
                       kindName(static_cast<int>(edit.kind)) + " " +
                       edit.anchor;
    if (!edit.pipeline.empty())
      line += ": " + edit.pipeline;
    result.push_back(line);
  }
  return result;
}

PipelineEdits &strata::getPipelineEdits() {
  static PipelineEdits edits;
  return edits;
}

static std::vector<std::function<void(DialectRegistry &)>> &
dialectRegistrations() {
  static std::vector<std::function<void(DialectRegistry &)>> functions;
  return functions;
}

void strata::addDialectRegistration(std::function<void(DialectRegistry &)> fn) {
  dialectRegistrations().push_back(std::move(fn));
}

void strata::applyDialectRegistrations(DialectRegistry &registry) {
  for (auto &fn : dialectRegistrations())
    fn(registry);
}

//===----------------------------------------------------------------------===//
// The stages' pipelines
//===----------------------------------------------------------------------===//

std::vector<PassEntry> strata::bufferizationPasses(bool resultsInPlace) {
  auto nested = [](std::string name, std::string opts = "") {
    return PassEntry{std::move(name), std::move(opts), true};
  };
  // Results become out-parameters: the arena buffers the runtime passes.
  // The canonicalization before that folds the views a kernel returns
  // (expand_shape of the collapse_shape that strata-collapse-dims put on its
  // result) back to the allocation they view, so that the allocation is
  // replaced by the out-parameter; otherwise the kernel computes into a
  // temporary heap buffer and copies it out on every call.
  std::vector<PassEntry> entries = {
      nested("one-shot-bufferize",
             "bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map"),
      nested("strata-number-constants"), nested("canonicalize"),
      nested("buffer-results-to-out-params",
             "hoist-static-allocs=true modify-public-functions=true")};
  if (resultsInPlace)
    entries.push_back(nested("strata-results-in-place"));
  for (const char *name :
       {"canonicalize", "ownership-based-buffer-deallocation", "canonicalize",
        "buffer-deallocation-simplification",
        "bufferization-lower-deallocations"})
    entries.push_back(nested(name));
  return entries;
}

std::vector<PassEntry> strata::llvmConversionTail() {
  auto nested = [](std::string name, std::string opts = "") {
    return PassEntry{std::move(name), std::move(opts), true};
  };
  return {nested("finalize-memref-to-llvm"),
          nested("convert-arith-to-llvm"),
          nested("convert-index-to-llvm"),
          nested("convert-func-to-llvm", "use-bare-ptr-memref-call-conv=true"),
          nested("convert-cf-to-llvm"),
          nested("reconcile-unrealized-casts")};
}

std::vector<PassEntry>
strata::defaultStagePipeline(Stage stage, const CompileOptions &options) {
  auto top = [](std::string name, std::string opts = "") {
    return PassEntry{std::move(name), std::move(opts), false};
  };
  auto nested = [](std::string name, std::string opts = "") {
    return PassEntry{std::move(name), std::move(opts), true};
  };
  const Target *targetOf = lookupTarget(options);
  switch (stage) {
  case Stage::Cpu:
  case Stage::Gpu:
    if (!targetOf || targetOf->mappingStage() != stage)
      return {};
    return targetOf->mappingPipeline(options);
  case Stage::Llvm:
    return targetOf ? targetOf->llvmPipeline(options)
                    : std::vector<PassEntry>();
  case Stage::Import:
  case Stage::Object:
  case Stage::Module:
    return {};
  // The passes read the compile's options from the module's
  // #strata.compile (runStages records it): none is passed as option text.
  case Stage::Graph:
    return {
        top("strata-bind-input-shapes"), top("strata-graph-pipeline"),
        top("strata-resolve-sequences"), top("strata-specialize-input-values"),
        top("strata-expand-gradients"),  top("cse"),
        top("strata-run-time-shapes"),   top("strata-verify-static-shapes")};
  case Stage::Fused: {
    std::vector<PassEntry> entries;
    if (targetOf)
      entries = targetOf->beforePartition(options);
    // oneDNN on the CPU, cuBLASLt on NVIDIA GPUs (Library.cpp); the
    // processor decides which kernels the partitioner may choose (tensor
    // cores, wgmma; TargetFacts).
    entries.push_back(top("strata-partition"));
    // --precision=fp16|bf16: storage between kernels (Precision.cpp).
    if (!options.precision.empty() && options.precision != "fp32")
      entries.push_back(top("strata-lower-precision"));
    if (targetOf) {
      std::vector<PassEntry> after = targetOf->afterPartition(options);
      entries.insert(entries.end(), after.begin(), after.end());
    }
    return entries;
  }
  case Stage::Kernel:
    // Kernels have static shapes, which the bare-pointer calling
    // convention of the llvm stage needs.
    return {
        top("strata-outline-kernels"), nested("strata-convert-graph-to-linalg"),
        nested("canonicalize"),        nested("linalg-fuse-elementwise-ops"),
        nested("canonicalize"),        nested("cse")};
  }
  return {};
}

std::vector<PassEntry> strata::stagePipeline(Stage stage,
                                             const CompileOptions &options) {
  return getPipelineEdits().apply(stage, defaultStagePipeline(stage, options));
}

std::string strata::compileOptionsText(const CompileOptions &options) {
  MLIRContext context;
  context.loadDialect<kernel::KernelDialect>();
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel::CompileAttr attr = compileOptionsAttr(
      &context, options, [&] { return emitError(UnknownLoc::get(&context)); });
  if (attr)
    os << attr;
  return text;
}

std::string strata::stagePipelineText(Stage stage,
                                      const CompileOptions &options) {
  std::vector<PassEntry> entries = stagePipeline(stage, options);
  std::string text = "builtin.module(";
  bool first = true;
  for (size_t i = 0; i < entries.size();) {
    text += first ? "" : ",";
    first = false;
    if (!entries[i].onKernels) {
      text += entries[i++].text();
      continue;
    }
    // Consecutive entries on the kernels share one nested pass manager.
    text += "builtin.module(";
    for (bool firstNested = true; i < entries.size() && entries[i].onKernels;
         ++i, firstNested = false)
      text += (firstNested ? "" : ",") + entries[i].text();
    text += ")";
  }
  return text + ")";
}

/// "a,b" for "builtin.module(a,b)": what to add to a pass manager that is
/// already anchored on the module.
static llvm::StringRef withoutAnchor(llvm::StringRef text) {
  return text.drop_front(strlen("builtin.module(")).drop_back();
}

namespace {
/// A stage as one pass (strata-stage-<name>), for strata-opt: it reads the
/// module's #strata.compile (options given change it first, as
/// strata-compile-options does), builds the stage's pipeline for those
/// options, as runStages would, and runs it on the module. So a stage run on
/// a dump of a compile for any target runs that compile's passes, and a
/// stage whose passes depend on the target needs no option to say it.
class StagePass : public PassWrapper<StagePass, OperationPass<ModuleOp>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(StagePass)

  explicit StagePass(Stage stage)
      : stage(stage), argument(("strata-stage-" + stageName(stage)).str()),
        description(("The compile path's " + stageName(stage) +
                     " stage, for the module's #strata.compile")
                        .str()) {}
  StagePass(const StagePass &other)
      : PassWrapper(other), stage(other.stage), argument(other.argument),
        description(other.description), optionsText(other.optionsText) {}

  StringRef getArgument() const override { return argument; }
  StringRef getDescription() const override { return description; }

  /// What any target's pipeline for this stage needs loaded.
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<kernel::KernelDialect>();
    for (const Target *target : allTargets()) {
      CompileOptions options;
      options.target = target->name().str();
      OpPassManager pm(ModuleOp::getOperationName());
      if (succeeded(parsePassPipeline(
              withoutAnchor(stagePipelineText(stage, options)), pm,
              llvm::nulls())))
        pm.getDependentDialects(registry);
    }
  }

  /// Keeps the options' text for strata-compile-options, which applies
  /// them to the module's #strata.compile when the stage runs.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    optionsText = options.str();
    return Pass::initializeOptions(options, errorHandler);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!StringRef(optionsText).trim().empty()) {
      OpPassManager record(ModuleOp::getOperationName());
      record.addPass(createCompileOptionsPass());
      if (failed(record.getPasses().begin()->initializeOptions(
              optionsText,
              [&](const Twine &message) -> LogicalResult {
                return module.emitError(argument) << ": " << message;
              })) ||
          failed(runPipeline(record, module)))
        return signalPassFailure();
    }
    CompileOptions options = recordedCompileOptions(module);
    if (!stageApplies(stage, options.target))
      return;
    std::string text = stagePipelineText(stage, options);
    OpPassManager pm(ModuleOp::getOperationName());
    if (failed(parsePassPipeline(withoutAnchor(text), pm, llvm::errs()))) {
      module.emitError("the ")
          << stageName(stage) << " stage's pipeline is not valid: " << text;
      return signalPassFailure();
    }
    if (failed(runPipeline(pm, module)))
      signalPassFailure();
  }

private:
  Stage stage;
  std::string argument, description, optionsText;
  // The options of strata-compile-options, declared again for --help and
  // for checking them when the pipeline is parsed.
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("the target: cpu, cuda or rocm")};
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("the processor (--cpu)")};
  Option<std::string> shapes{*this, "shapes",
                             llvm::cl::desc("input shapes: name:d0xd1;...")};
  Option<std::string> values{*this, "values",
                             llvm::cl::desc("input values: name:v0,v1;...")};
  Option<bool> libraries{*this, "libraries",
                         llvm::cl::desc("hand ops to vendor libraries")};
  Option<bool> hostKernels{*this, "host-kernels",
                           llvm::cl::desc("every op that has a host kernel "
                                          "runs as one")};
  Option<std::string> decisions{*this, "decisions",
                                llvm::cl::desc("a decisions file")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("storage between kernels: fp32, fp16 or bf16")};
};
} // namespace

void strata::registerStagePipelines() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerAllPasses();
    strata::registerAllPasses();
    registerCompilerPasses();
    for (const Target *target : allTargets())
      target->registerPasses();
    for (Stage stage : kStages)
      if (isIRStage(stage) && stage != Stage::Import)
        PassRegistration<StagePass>(
            [stage] { return std::make_unique<StagePass>(stage); });
  });
}

//===----------------------------------------------------------------------===//
// Dumps
//===----------------------------------------------------------------------===//

std::string strata::getDumpDirectory(const CompileOptions &options) {
  if (!options.dumpDir.empty())
    return options.dumpDir;
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("STRATA_DUMP_DIR"))
    return *env;
  return "";
}

void strata::clearDumpDirectory(const CompileOptions &options,
                                llvm::StringRef keep) {
  std::string dir = getDumpDirectory(options);
  if (dir.empty() || !llvm::sys::fs::is_directory(dir))
    return;
  llvm::SmallString<256> kept;
  if (!keep.empty())
    llvm::sys::fs::real_path(keep, kept);
  std::error_code ec;
  std::vector<std::string> files, dirs;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    bool stageFile = name.size() > 3 && llvm::isDigit(name[0]) &&
                     llvm::isDigit(name[1]) && name[2] == '-' &&
                     llvm::is_contained({".mlir", ".ll", ".ptx", ".s"},
                                        llvm::sys::path::extension(name));
    if (name == "kernels" || name == "portable-ptx")
      dirs.push_back(it->path());
    else if (stageFile || name == "index.json" || name == "index.md")
      files.push_back(it->path());
  }
  for (const std::string &file : files) {
    llvm::SmallString<256> real;
    if (!kept.empty() && !llvm::sys::fs::real_path(file, real) && real == kept)
      continue;
    llvm::sys::fs::remove(file);
  }
  for (const std::string &sub : dirs) {
    llvm::SmallString<256> real;
    if (!kept.empty() && !llvm::sys::fs::real_path(sub, real) &&
        llvm::StringRef(kept).starts_with(real))
      continue;
    llvm::sys::fs::remove_directories(sub);
  }
}

void strata::writeDumpFile(
    const std::string &dir, llvm::StringRef relativePath,
    llvm::function_ref<void(llvm::raw_ostream &)> write) {
  // A directory that cannot take the dumps (read-only, full, not a
  // directory) is reported once; the compile goes on without its dumps.
  static std::mutex mutex;
  static std::set<std::string> failedDirs;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (failedDirs.count(dir))
      return;
  }
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, relativePath);
  // Written next to its place and renamed, so that a full disk leaves no
  // half-written dump behind.
  llvm::SmallString<256> temp;
  int fd = -1;
  std::error_code ec =
      llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
  if (!ec)
    ec = llvm::sys::fs::createUniqueFile(path + "-%%%%%%.tmp", fd, temp);
  if (!ec) {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.close();
    if (os.has_error()) {
      ec = os.error();
      os.clear_error();
    }
  }
  if (!ec)
    ec = llvm::sys::fs::rename(temp, path);
  if (!ec)
    return;
  if (!temp.empty())
    llvm::sys::fs::remove(temp);
  std::lock_guard<std::mutex> lock(mutex);
  if (failedDirs.insert(dir).second)
    llvm::errs() << "strata: warning: cannot write the IR dumps into " << dir
                 << " (" << path << ": " << ec.message()
                 << "); compiling on without them\n";
}

static void printWithLocations(Operation *op, llvm::raw_ostream &os) {
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  flags.elideLargeElementsAttrs(64);
  op->print(os, flags);
  os << "\n";
}

void strata::dumpStage(const CompileOptions &options, Stage stage,
                       Operation *op) {
  std::string dir = getDumpDirectory(options);
  if (dir.empty())
    return;
  std::string number = stageNumber(stage);
  writeDumpFile(dir, number + "-" + stageName(stage).str() + ".mlir",
                [&](llvm::raw_ostream &os) { printWithLocations(op, os); });
  auto module = dyn_cast<ModuleOp>(op);
  if (!module || stage < Stage::Fused)
    return;
  // Each kernel at this stage, in kernels/<name>/.
  ModuleOp kernels = getKernelsModule(module);
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!kernel::has<kernel::IsKernel>(func))
      continue;
    Operation *body = func.isDeclaration() ? nullptr : func.getOperation();
    if (!body && kernels)
      body = SymbolTable::lookupSymbolIn(kernels, func.getSymName());
    if (!body)
      continue;
    writeDumpFile(dir,
                  ("kernels/" + func.getSymName() + "/" + number + "-" +
                   stageName(stage) + ".mlir")
                      .str(),
                  [&](llvm::raw_ostream &os) { printWithLocations(body, os); });
  }
  writeDumpIndex(options, module);
}

/// An attribute as JSON: strings, numbers, arrays and dictionaries as
/// themselves, anything else as its printed form.
static llvm::json::Value toJson(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getValue().getSExtValue();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (isa<UnitAttr>(attr))
    return true;
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array array;
    for (Attribute element : a)
      array.push_back(toJson(element));
    return array;
  }
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return llvm::json::Array(a.asArrayRef());
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute named : d)
      object[named.getName().str()] = toJson(named.getValue());
    return object;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

void strata::writeDumpIndex(const CompileOptions &options, ModuleOp module) {
  std::string dir = getDumpDirectory(options);
  if (dir.empty())
    return;
  llvm::json::Array kernels;
  std::string table = "| kernel | kind | ONNX nodes | decision |\n"
                      "| --- | --- | --- | --- |\n";
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!kernel::has<kernel::IsKernel>(func))
      continue;
    llvm::json::Object kernel;
    std::string name = func.getSymName().str();
    kernel["name"] = name;
    llvm::json::Object decisions;
    for (NamedAttribute attr : func->getDiscardableAttrs()) {
      llvm::StringRef key = attr.getName().getValue();
      if (key.consume_front(kernel::KernelDialect::getDialectNamespace()) &&
          key.consume_front(".") && key != "kernel")
        decisions[key.str()] = toJson(attr.getValue());
    }
    std::string nodes;
    if (auto array = kernel::get<kernel::Nodes>(func))
      for (Attribute node : array)
        if (auto s = dyn_cast<StringAttr>(node))
          nodes += (nodes.empty() ? "" : ", ") + s.str();
    std::string kind = kernel::text<kernel::Kind>(func).str();
    std::string decision = kernel::isLibrary(func)
                               ? (kernel::text<kernel::Library>(func) + ": " +
                                  kernel::text<kernel::Reason>(func))
                                     .str()
                               : kernel::text<kernel::Reason>(func).str();
    table +=
        "| " + name + " | " + kind + " | " + nodes + " | " + decision + " |\n";
    kernel["decisions"] = std::move(decisions);
    // The files dumped for it so far.
    llvm::json::Array files;
    llvm::SmallString<256> kernelDir(dir);
    llvm::sys::path::append(kernelDir, "kernels", name);
    std::error_code ec;
    std::vector<std::string> names;
    for (llvm::sys::fs::directory_iterator it(kernelDir, ec), end;
         it != end && !ec; it.increment(ec))
      names.push_back(
          ("kernels/" + name + "/" + llvm::sys::path::filename(it->path()))
              .str());
    llvm::sort(names);
    for (std::string &file : names)
      files.push_back(std::move(file));
    kernel["files"] = std::move(files);
    kernels.push_back(std::move(kernel));
  }
  llvm::json::Object index;
  if (auto source = module->getAttrOfType<StringAttr>("graph.source"))
    index["model"] = source.str();
  index["target"] = options.target;
  index["kernels"] = std::move(kernels);
  writeDumpFile(dir, "index.json", [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(index))) << "\n";
  });
  writeDumpFile(dir, "index.md", [&](llvm::raw_ostream &os) {
    os << "# Kernels, in execution order\n\n"
       << "Each kernel's IR at each stage is in kernels/<name>/; index.json "
          "has every decision attribute.\n\n"
       << table;
  });
}

//===----------------------------------------------------------------------===//
// Running the stages
//===----------------------------------------------------------------------===//

/// Where a failing stage writes its reproducer.
static std::string reproducerPath(const CompileOptions &options, Stage stage) {
  llvm::SmallString<256> path;
  if (!options.reproducerDir.empty()) {
    path = options.reproducerDir;
    llvm::sys::fs::create_directories(path);
  } else {
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, path);
  }
  llvm::sys::path::append(
      path, "strata-reproducer-" + stageName(stage) + "-" +
                std::to_string(llvm::sys::Process::getProcessId()) + ".mlir");
  return path.str().str();
}

/// Passes whose failures are problems of the user's input, each reported by
/// the pass itself (or the verifier after it) in an error naming the input,
/// node or file: a missing or contradicted input shape, shapes that the bound
/// inputs make inconsistent at a node, a shape only values decide, a
/// decisions file that does not apply, an op the target cannot take. Such a
/// failure is not the compiler's: it gets no reproducer and no pass-manager
/// text, unless --reproducer-dir asks for reproducers. Any other failing pass
/// is an internal error, and its stage writes a reproducer.
static bool checksUserInput(llvm::StringRef pass) {
  return pass == "strata-bind-input-shapes" ||
         pass == "strata-verify-static-shapes" ||
         pass == "strata-graph-propagate-shapes" ||
         pass == "strata-graph-infer-shapes" || pass == "strata-partition";
}

namespace {
/// Records the first pass that fails (the innermost, for nested pipelines).
struct FirstFailure : PassInstrumentation {
  explicit FirstFailure(std::string &pass) : pass(pass) {}
  void runAfterPassFailed(Pass *failed, Operation *) override {
    if (pass.empty())
      pass = failed->getArgument().str();
  }
  std::string &pass;
};
} // namespace

LogicalResult strata::runStages(ModuleOp module, const CompileOptions &options,
                                Stage from, Stage to) {
  registerStagePipelines();
  MLIRContext *context = module.getContext();
  std::optional<CompileProgress> progress;
  if (!CompileProgress::active())
    progress.emplace(options);
  if (from == Stage::Import)
    dumpStage(options, Stage::Import, module);
  // The options every pass reads (CompileOptionsAttr.cpp); a module
  // compiled from a dumped stage takes this compile's, not its dump's.
  if (failed(recordCompileOptions(module, options)))
    return failure();
  for (Stage stage : kStages) {
    if (stage <= from || stage > to || !isIRStage(stage) ||
        !stageApplies(stage, options.target))
      continue;
    // A quiet run inside another step (the portable PTX's stages) is part
    // of that step's time.
    CompileProgress::begin((stageName(stage) + " stage").str(),
                           options.verbose);
    std::string text = stagePipelineText(stage, options);
    PassManager pm(context);
    if (failed(parsePassPipeline(withoutAnchor(text), pm, llvm::errs())))
      return module.emitError("the ")
             << stageName(stage) << " stage's pipeline is not valid: " << text;
    std::string reproducer;
    if (options.reproducerDir != "off") {
      reproducer = reproducerPath(options, stage);
      pm.enableCrashReproducerGeneration(reproducer);
    }
    std::string failedPass;
    pm.addInstrumentation(std::make_unique<FirstFailure>(failedPass));
    // A pass that refused a decisions file's entry (strata-conv-to-gemm
    // reads the convolutions' forms) failed on the user's input too.
    bool decisionsRefused = false;
    auto usersError = [&] {
      return options.reproducerDir.empty() &&
             (checksUserInput(failedPass) || decisionsRefused);
    };
    // The reproducer generator reports every failure ("Failures have been
    // detected while processing an MLIR pass pipeline"); for a user's error
    // that is noise around the one line that matters.
    ScopedDiagnosticHandler quiet(context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error &&
          Decisions::isError(diag.str()))
        decisionsRefused = true;
      return success(
          diag.getSeverity() == DiagnosticSeverity::Error && usersError() &&
          llvm::StringRef(diag.str())
              .starts_with("Failures have been detected while processing"));
    });
    if (failed(pm.run(module))) {
      if (usersError()) {
        if (!reproducer.empty())
          llvm::sys::fs::remove(reproducer);
        return failure();
      }
      if (!reproducer.empty() && llvm::sys::fs::exists(reproducer))
        emitRemark(module.getLoc())
            << "the " << stageName(stage)
            << " stage failed; rerun it with: strata-opt --run-reproducer "
            << reproducer;
      return failure();
    }
    CompileProgress::end((stageName(stage) + " stage").str(), options.verbose);
    dumpStage(options, stage, module);
  }
  return success();
}
