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
                                         cl::desc("<model.onnx>"),
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

namespace {
/// One kernel's recorded decisions.
struct KernelInfo {
  std::string name;
  /// "codegen" or "library".
  std::string kind;
  /// The name's kind prefix (poi, red, per, mm, conv, attn, lib).
  std::string category;
  std::string library;
  std::string reason;
  /// strata.layouts: the buffer layouts chosen around a library call.
  std::string layouts;
  /// strata.storage: the types of its operands and results under
  /// --precision.
  std::string storage;
  std::vector<std::string> nodes, fusedBecause, notFused;
  DictionaryAttr attrs, tile;
};
} // namespace

/// The kernel's list of strings `H` (kernel::Nodes, ...).
template <typename H>
static std::vector<std::string> strings(func::FuncOp func) {
  std::vector<std::string> out;
  if (auto array = kernel::get<H>(func))
    for (Attribute item : array)
      out.push_back(cast<StringAttr>(item).str());
  return out;
}

template <typename H> static std::string string(func::FuncOp func) {
  return kernel::text<H>(func).str();
}

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

/// An attribute value as text: strings bare, arrays in brackets.
static std::string attrText(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return std::to_string(i.getInt());
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", f.getValueAsDouble());
    return text;
  }
  if (auto ints = dyn_cast<DenseI64ArrayAttr>(attr)) {
    std::string text = "[";
    for (auto [i, v] : llvm::enumerate(ints.asArrayRef()))
      text += (i ? "," : "") + std::to_string(v);
    return text + "]";
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << attr;
  return text;
}

static json::Value attrJson(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto ints = dyn_cast<DenseI64ArrayAttr>(attr)) {
    json::Array array;
    for (int64_t v : ints.asArrayRef())
      array.push_back(v);
    return array;
  }
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    json::Object object;
    for (NamedAttribute item : dict)
      object[item.getName().str()] = attrJson(item.getValue());
    return object;
  }
  return attrText(attr);
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

static std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    os << type;
    return text;
  }
  os << tensor.getElementType() << "[";
  for (auto [i, d] : llvm::enumerate(tensor.getShape()))
    os << (i ? ", " : "") << d;
  os << "]";
  return text;
}

/// The target's description of its code as JSON fields.
static json::Object
codeObject(llvm::ArrayRef<std::pair<std::string, std::string>> fields) {
  json::Object object;
  for (const auto &[key, value] : fields)
    object[key] = value;
  return object;
}

int strata::driver::runExplain() {
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

  func::FuncOp entry;
  for (auto func : module->getOps<func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      entry = func;
  if (!entry) {
    llvm::errs() << explainModel
                 << ": error: the model has no entry function\n";
    return 1;
  }

  // strata-lower-precision's record: "bf16" or "f16", absent for f32.
  std::string precision;
  if (auto recorded = kernel::get<kernel::Precision>((*module)))
    precision = recorded.str();

  // The kernels in execution order (the entry function's calls), and the
  // views left outside every kernel.
  std::vector<KernelInfo> kernels;
  std::vector<std::string> views;
  for (Operation &op : entry.getBody().front()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = module->lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || !kernel::has<kernel::IsKernel>(callee))
        continue;
      KernelInfo info;
      info.name = callee.getSymName().str();
      info.kind = string<kernel::Kind>(callee);
      info.category = string<kernel::Category>(callee);
      info.library = string<kernel::Library>(callee);
      info.reason = string<kernel::Reason>(callee);
      info.layouts = string<kernel::Layouts>(callee);
      info.storage = string<kernel::Storage>(callee);
      info.nodes = strings<kernel::Nodes>(callee);
      info.fusedBecause = strings<kernel::FusedBecause>(callee);
      info.notFused = strings<kernel::NotFused>(callee);
      info.attrs = kernel::get<kernel::LibraryAttrs>(callee);
      info.tile = kernel::get<kernel::Tile>(callee);
      kernels.push_back(std::move(info));
      continue;
    }
    if (op.getName().getStringRef() == "graph.constant" ||
        op.hasTrait<OpTrait::IsTerminator>())
      continue;
    // Ops left in the entry function are views of other buffers.
    std::string node;
    if (auto name = dyn_cast<NameLoc>(op.getLoc()))
      node = name.getName().str();
    views.push_back(node.empty() ? op.getName().getStringRef().str() : node);
  }

  // The summary's counts.
  std::map<std::string, int> byCategory, byLibrary;
  size_t nodes = 0, split = 0;
  for (const KernelInfo &k : kernels) {
    ++byCategory[k.category];
    if (k.kind == "library")
      ++byLibrary[k.library];
    nodes += k.nodes.size();
    if (k.tile && k.tile.get("rows") &&
        k.tile.getAs<IntegerAttr>("rows").getInt() !=
            k.tile.getAs<IntegerAttr>("rows_per_block").getInt())
      ++split;
  }
  size_t libraryCalls = 0;
  for (auto &[library, count] : byLibrary)
    libraryCalls += count;

  // The code the target generates, as strata::compile chooses it.
  std::vector<std::pair<std::string, std::string>> codeFields;
  std::string gpuCode = target->describeCode(*module, options, codeFields);

  if (explainJson) {
    json::Array kernelArray;
    for (auto [index, k] : llvm::enumerate(kernels)) {
      json::Object object{
          {"index", static_cast<int64_t>(index)},
          {"name", k.name},
          {"kind", k.kind},
          {"category", k.category},
          {"nodes", json::Array(k.nodes)},
          {"fused_because", json::Array(k.fusedBecause)},
          {"not_fused", json::Array(k.notFused)},
          {"reason", k.reason},
          {"tile", k.tile ? attrJson(k.tile) : json::Value(nullptr)}};
      if (!k.layouts.empty())
        object["layouts"] = k.layouts;
      if (!k.storage.empty())
        object["storage"] = k.storage;
      if (k.kind == "library") {
        object["library"] = k.library;
        object["attrs"] = k.attrs ? attrJson(k.attrs) : json::Object();
      }
      kernelArray.push_back(std::move(object));
    }
    json::Object categories, libraries;
    for (auto &[category, count] : byCategory)
      categories[category] = count;
    for (auto &[library, count] : byLibrary)
      libraries[library] = count;
    json::Value root = json::Object{
        {"model", explainModel.getValue()},
        {"decisions", explainDecisions.empty()
                          ? json::Value(nullptr)
                          : json::Value(explainDecisions.getValue())},
        {"target", explainTarget.getValue()},
        {"gpu_code", gpuCode.empty() ? json::Value(nullptr)
                                     : json::Value(codeObject(codeFields))},
        {"libraries", !explainNoLibraries},
        {"precision", precision.empty() ? "fp32" : precision},
        {"kernels", std::move(kernelArray)},
        {"summary",
         json::Object{
             {"kernels", static_cast<int64_t>(kernels.size())},
             {"by_category", std::move(categories)},
             {"library_calls", std::move(libraries)},
             {"generated", static_cast<int64_t>(kernels.size() - libraryCalls)},
             {"split_into_row_blocks", static_cast<int64_t>(split)},
             {"nodes_in_kernels", static_cast<int64_t>(nodes)},
             {"views", json::Array(views)}}}};
    llvm::outs() << llvm::formatv("{0:2}", root) << "\n";
    return 0;
  }

  llvm::raw_ostream &os = llvm::outs();
  os << "strata explain " << explainModel << "\n";
  std::string inputs;
  for (BlockArgument arg : entry.getArguments())
    inputs += (inputs.empty() ? "" : ", ") +
              getArgumentName(entry, arg.getArgNumber()) + " " +
              typeText(arg.getType());
  printWrapped(os, "inputs: ", inputs, 2);
  if (explainTarget != "cpu")
    printWrapped(os, "target: ", explainTarget, 2);
  if (!explainDecisions.empty())
    printWrapped(os, "decisions file: ", explainDecisions, 2);
  if (explainNoLibraries)
    printWrapped(os, "libraries: ", "off (--no-libraries)", 2);
  if (!precision.empty())
    printWrapped(os, "precision: ",
                 precision + " between kernels, where every step that reads "
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
                   attrText(attr.getValue());
        printWrapped(os, "library attributes: ", attrs);
      }
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
  for (auto &[category, count] : byCategory)
    kinds +=
        (kinds.empty() ? "" : ", ") + std::to_string(count) + " " + category;
  printWrapped(os, "kernels: ",
               std::to_string(kernels.size()) +
                   (kinds.empty() ? "" : " (" + kinds + ")"),
               2);
  std::string libraries;
  for (auto &[library, count] : byLibrary)
    libraries +=
        (libraries.empty() ? "" : ", ") + std::to_string(count) + " " + library;
  printWrapped(os, "library calls: ",
               std::to_string(libraryCalls) +
                   (libraries.empty() ? "" : " (" + libraries + ")"),
               2);
  printWrapped(os, "generated kernels: ",
               std::to_string(kernels.size() - libraryCalls) + " (" +
                   std::to_string(split) + " split into row blocks)",
               2);
  if (!gpuCode.empty())
    printWrapped(os, "gpu code: ", gpuCode, 2);
  std::string viewList;
  for (const std::string &view : views)
    viewList += (viewList.empty() ? "" : ", ") + view;
  printWrapped(
      os, "nodes: ",
      std::to_string(nodes) + " in kernels, " + std::to_string(views.size()) +
          (views.size() == 1 ? " view" : " views") + " outside kernels" +
          (views.empty() ? "" : " (" + viewList + ")"),
      2);
  return 0;
}
