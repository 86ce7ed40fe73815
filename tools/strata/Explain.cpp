//===- Explain.cpp - strata explain -----------------------------*- C++ -*-===//
//
// See Explain.h. Everything printed is read back from the IR of the fused
// stage (the strata.* attributes on the kernel functions, docs/explain.md),
// so the explanation is the compiled result's own record, not a second
// opinion.
//
//===----------------------------------------------------------------------===//

#include "Explain.h"
#include "Driver.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Explain.h"
#include "strata/Compiler/Pipeline.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>

using namespace mlir;
using namespace strata;
using namespace strata::driver;
namespace cl = llvm::cl;
namespace json = llvm::json;

cl::SubCommand &strata::driver::explainCommand() {
  static cl::SubCommand command(
      "explain", "Say how a model is split into kernels, and why");
  return command;
}

static cl::opt<std::string> explainModel(cl::Positional, cl::Required,
                                         cl::desc("<model.onnx|model.strata>"),
                                         cl::sub(explainCommand()));
static cl::list<std::string>
    explainShapes("input-shape",
                  cl::desc("Bind an input's shape: NAME=D0,D1,... "
                           "(repeatable)"),
                  cl::sub(explainCommand()));
static cl::opt<std::string>
    explainDecisions("decisions",
                     cl::desc("A JSON file of forced decisions "
                              "(docs/explain.md)"),
                     cl::value_desc("file"), cl::sub(explainCommand()));
static cl::opt<std::string>
    explainCpu("cpu",
               cl::desc("The CPU or GPU to compile for: native (default; "
                        "for --target=cuda the H100/H200, for rocm gfx942), "
                        "for the cpu target avx2, avx512 or an LLVM CPU "
                        "name, for cuda an NVPTX name such as sm_90a, sm_90 "
                        "or sm_80, for rocm an AMDGPU name such as gfx1100"),
               cl::init("native"), cl::sub(explainCommand()));
static cl::opt<std::string>
    explainTarget("target",
                  cl::desc("Target whose decisions to explain: cpu (default), "
                           "cuda or rocm"),
                  cl::init("cpu"), cl::sub(explainCommand()));
static cl::opt<bool> explainNoLibraries("no-libraries",
                                        cl::desc("Generate every kernel (no "
                                                 "oneDNN or cuBLASLt)"),
                                        cl::sub(explainCommand()));
static cl::opt<bool> explainJson("json",
                                 cl::desc("Print the explanation as JSON"),
                                 cl::sub(explainCommand()));

/// What each kind prefix stands for.
static StringRef categoryText(StringRef category) {
  return llvm::StringSwitch<StringRef>(category)
      .Case("poi", "generated pointwise kernel")
      .Case("red", "generated reduction kernel")
      .Case("per", "generated persistent-reduction kernel")
      .Case("mm", "generated matmul kernel")
      .Case("conv", "generated convolution kernel")
      .Case("attn", "generated attention kernel: matmul, softmax, matmul")
      .Case("lib", "library call")
      .Default("kernel");
}

/// "256 rows in 4 blocks of 64 (heuristic: ...)", or the source alone.
static std::string tileText(DictionaryAttr tile) {
  if (!tile)
    return "not recorded";
  std::string source;
  if (auto s = tile.getAs<StringAttr>("source"))
    source = s.str();
  auto rows = tile.getAs<IntegerAttr>("rows");
  auto block = tile.getAs<IntegerAttr>("rows_per_block");
  if (!rows || !block)
    return source;
  if (rows.getInt() == block.getInt())
    return llvm::formatv("{0} rows in one block, not split; {1}", rows.getInt(),
                         source)
        .str();
  return llvm::formatv("{0} rows in {1} blocks of {2} row{3}, split over "
                       "threads; {4}",
                       rows.getInt(), rows.getInt() / block.getInt(),
                       block.getInt(), block.getInt() == 1 ? "" : "s", source)
      .str();
}

/// Prints `text` after `label`, wrapped at 100 columns with continuation
/// lines indented under the text.
static void printWrapped(llvm::raw_ostream &os, StringRef label, StringRef text,
                         unsigned indent = 4) {
  constexpr unsigned kWidth = 100;
  std::string prefix = std::string(indent, ' ') + label.str();
  unsigned hang = indent + 2;
  unsigned column = prefix.size();
  os << prefix;
  SmallVector<StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  bool first = true;
  for (StringRef word : words) {
    if (!first && column + 1 + word.size() > kWidth) {
      os << "\n" << std::string(hang, ' ');
      column = hang;
    } else if (!first) {
      os << " ";
      ++column;
    }
    os << word;
    column += word.size();
    first = false;
  }
  os << "\n";
}

static void printList(llvm::raw_ostream &os, StringRef label,
                      const std::vector<std::string> &items, StringRef none) {
  if (items.empty()) {
    printWrapped(os, (label + ": ").str(), none);
    return;
  }
  os << "    " << label << ":\n";
  // One line per distinct reason, in first-seen order: an ONNX node that
  // the importer expands into several ops (HardSwish, LayerNorm) has the
  // same reason for each, and a list of five identical lines says less
  // than one with its count.
  std::vector<std::pair<std::string, unsigned>> distinct;
  for (const std::string &item : items) {
    auto it = llvm::find_if(
        distinct, [&](const auto &seen) { return seen.first == item; });
    if (it != distinct.end())
      ++it->second;
    else
      distinct.push_back({item, 1});
  }
  for (const auto &[item, count] : distinct)
    printWrapped(os, "- ",
                 count == 1 ? item : item + " (x" + std::to_string(count) + ")",
                 6);
}

int strata::driver::runExplain() {
  if (isModuleFile(explainModel)) {
    // A module's shapes, target and decisions are fixed: options that would
    // change them are a mistake, not something to ignore.
    // (cl::list's operator& gives its values: std::addressof the option.)
    const llvm::cl::Option *modelOnly[] = {std::addressof(explainShapes),
                                           &explainDecisions, &explainCpu,
                                           &explainTarget, &explainNoLibraries};
    for (const llvm::cl::Option *option : modelOnly)
      if (option->getNumOccurrences()) {
        llvm::errs() << "strata: error: --" << option->ArgStr << " applies "
                     << "to a model; " << explainModel
                     << " is a compiled module, whose choices are made\n";
        return 1;
      }
    return explainModuleFile(explainModel, explainJson);
  }
  const Target *target = lookupTarget(explainTarget);
  if (!target) {
    llvm::errs() << "strata: error: " << unknownTargetMessage(explainTarget)
                 << "\n";
    return 1;
  }
  CompileOptions options;
  options.target = explainTarget;
  options.cpu = explainCpu;
  options.useLibraries = !explainNoLibraries;
  options.precision = precisionFlag();
  options.decisionsFile = explainDecisions;
  // A rejected decisions file or model is the user's error, not a crash to
  // reproduce.
  options.reproducerDir = "off";
  readCompileEnvironment(options);
  for (const std::string &text : explainShapes) {
    std::string name;
    std::vector<int64_t> shape;
    std::string error = parseShapeBinding(text, name, shape);
    if (!error.empty()) {
      llvm::errs() << "strata: error: --input-shape: " << error << "\n";
      return 1;
    }
    options.inputShapes[name] = shape;
  }

  auto context = makeContext(explainModel);
  OwningOpRef<ModuleOp> module =
      loadSource(*context, explainModel, Stage::Import);
  if (!module)
    return 1;
  if (failed(runStages(*module, options, Stage::Import, Stage::Fused)))
    return 1;
  FailureOr<Explanation> explained = explainFusedModule(*module, options);
  if (failed(explained))
    return 1;
  const Explanation &e = *explained;
  const std::vector<ExplainedKernel> &kernels = e.kernels;

  if (explainJson) {
    llvm::outs() << llvm::formatv("{0:2}",
                                  explanationJson(e, explainModel, options))
                 << "\n";
    return 0;
  }

  llvm::raw_ostream &os = llvm::outs();
  os << "strata explain " << explainModel << "\n";
  std::string inputs;
  for (const std::string &input : e.inputs)
    inputs += (inputs.empty() ? "" : ", ") + input;
  printWrapped(os, "inputs: ", inputs, 2);
  if (explainTarget != "cpu")
    printWrapped(os, "target: ", explainTarget, 2);
  if (!explainDecisions.empty())
    printWrapped(os, "decisions file: ", explainDecisions, 2);
  if (explainNoLibraries)
    printWrapped(os, "libraries: ", "off (--no-libraries)", 2);
  if (!e.precision.empty())
    printWrapped(os, "precision: ",
                 e.precision + " between kernels, where every step that reads "
                               "or writes a tensor takes it (computed in f32 "
                               "inside kernels; the model's inputs and outputs "
                               "stay f32)",
                 2);
  os << "\n";
  for (auto [index, k] : llvm::enumerate(kernels)) {
    os << "#" << index << " " << k.name << "\n";
    printWrapped(os, "kind: ",
                 k.category + " (" +
                     (k.kind == "library" ? "library call to " + k.library
                                          : categoryText(k.category).str()) +
                     ")");
    std::string nodeList;
    for (const std::string &node : k.nodes)
      nodeList += (nodeList.empty() ? "" : ", ") + node;
    printWrapped(os, "nodes: ", nodeList.empty() ? "(none)" : nodeList);
    printList(os, "fused because", k.fusedBecause,
              k.nodes.size() > 1 ? "(no record)" : "(a single op)");
    printList(os, "not fused", k.notFused,
              "(no neighbouring kernels: its inputs and results are the "
              "model's)");
    if (k.kind == "library") {
      printWrapped(os, "library: ", k.reason);
      if (k.attrs && !k.attrs.empty()) {
        std::string attrs;
        for (NamedAttribute attr : k.attrs)
          attrs += (attrs.empty() ? "" : ", ") + attr.getName().str() + "=" +
                   explainAttrText(attr.getValue());
        printWrapped(os, "library attributes: ", attrs);
      }
      if (k.accumulates)
        printWrapped(os, "adds onto: ",
                     "operand " + std::to_string(*k.accumulates) +
                         " (oneDNN's sum post-op); the module writes the "
                         "result in place of that operand's buffer when no "
                         "later step reads it");
    } else {
      printWrapped(os, "codegen: ", k.reason);
    }
    if (!k.layouts.empty())
      printWrapped(os, "layouts: ", k.layouts);
    if (!k.storage.empty())
      printWrapped(os, "storage: ", k.storage);
    printWrapped(os, "tile: ", tileText(k.tile));
    os << "\n";
  }

  os << "summary\n";
  std::string kinds;
  for (auto &[category, count] : e.byCategory)
    kinds +=
        (kinds.empty() ? "" : ", ") + std::to_string(count) + " " + category;
  printWrapped(os, "kernels: ",
               std::to_string(kernels.size()) +
                   (kinds.empty() ? "" : " (" + kinds + ")"),
               2);
  std::string libraries;
  for (auto &[library, count] : e.byLibrary)
    libraries +=
        (libraries.empty() ? "" : ", ") + std::to_string(count) + " " + library;
  printWrapped(os, "library calls: ",
               std::to_string(e.libraryCalls) +
                   (libraries.empty() ? "" : " (" + libraries + ")"),
               2);
  printWrapped(os, "generated kernels: ",
               std::to_string(kernels.size() - e.libraryCalls) + " (" +
                   std::to_string(e.splitKernels) + " split into row blocks)",
               2);
  if (!e.code.empty())
    printWrapped(os, "gpu code: ", e.code, 2);
  std::string viewList;
  for (const std::string &view : e.views)
    viewList += (viewList.empty() ? "" : ", ") + view;
  printWrapped(os, "nodes: ",
               std::to_string(e.nodesInKernels) + " in kernels, " +
                   std::to_string(e.views.size()) +
                   (e.views.size() == 1 ? " view" : " views") +
                   " outside kernels" +
                   (e.views.empty() ? "" : " (" + viewList + ")"),
               2);
  return 0;
}
