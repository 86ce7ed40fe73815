//===- Explain.cpp - What a compilation decided, and why --------*- C++ -*-===//
//
// See strata/Compiler/Explain.h. `strata explain` (tools/strata/Explain.cpp)
// prints this record as text or JSON; the Python package returns the JSON.
//
//===----------------------------------------------------------------------===//

#include "strata/Compiler/Explain.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace json = llvm::json;

namespace strata {

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

std::string explainAttrText(Attribute attr) {
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
  return explainAttrText(attr);
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

FailureOr<Explanation> explainFusedModule(ModuleOp module,
                                          const CompileOptions &options) {
  func::FuncOp entry;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      entry = func;
  if (!entry)
    return module.emitError("the model has no entry function");

  Explanation e;
  for (BlockArgument arg : entry.getArguments())
    e.inputs.push_back(getArgumentName(entry, arg.getArgNumber()) + " " +
                       typeText(arg.getType()));
  if (auto recorded = kernel::get<kernel::Precision>(module))
    e.precision = recorded.str();

  // The kernels in execution order (the entry function's calls), and the
  // views left outside every kernel.
  for (Operation &op : entry.getBody().front()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || !kernel::has<kernel::IsKernel>(callee))
        continue;
      ExplainedKernel k;
      k.name = callee.getSymName().str();
      k.kind = string<kernel::Kind>(callee);
      k.category = string<kernel::Category>(callee);
      k.library = string<kernel::Library>(callee);
      k.reason = string<kernel::Reason>(callee);
      k.layouts = string<kernel::Layouts>(callee);
      k.storage = string<kernel::Storage>(callee);
      k.nodes = strings<kernel::Nodes>(callee);
      k.fusedBecause = strings<kernel::FusedBecause>(callee);
      k.notFused = strings<kernel::NotFused>(callee);
      k.attrs = kernel::get<kernel::LibraryAttrs>(callee);
      if (auto accumulates = kernel::get<kernel::Accumulates>(callee))
        k.accumulates = accumulates.getInt();
      k.tile = kernel::get<kernel::Tile>(callee);
      e.kernels.push_back(std::move(k));
      continue;
    }
    if (op.getName().getStringRef() == "graph.constant" ||
        op.hasTrait<OpTrait::IsTerminator>())
      continue;
    // Ops left in the entry function are views of other buffers.
    std::string node;
    if (auto name = dyn_cast<NameLoc>(op.getLoc()))
      node = name.getName().str();
    e.views.push_back(node.empty() ? op.getName().getStringRef().str() : node);
  }

  for (const ExplainedKernel &k : e.kernels) {
    ++e.byCategory[k.category];
    if (k.kind == "library") {
      ++e.byLibrary[k.library];
      ++e.libraryCalls;
    }
    e.nodesInKernels += k.nodes.size();
    if (k.tile && k.tile.get("rows") &&
        k.tile.getAs<IntegerAttr>("rows").getInt() !=
            k.tile.getAs<IntegerAttr>("rows_per_block").getInt())
      ++e.splitKernels;
  }

  // The code the target generates, as strata::compile chooses it.
  if (const Target *target = lookupTarget(options.target))
    e.code = target->describeCode(module, options, e.codeFields);
  return e;
}

json::Value explanationJson(const Explanation &e, llvm::StringRef model,
                            const CompileOptions &options) {
  json::Array kernels;
  for (auto [index, k] : llvm::enumerate(e.kernels)) {
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
      if (k.accumulates)
        object["accumulates"] = *k.accumulates;
    }
    kernels.push_back(std::move(object));
  }
  json::Object categories, libraries, code;
  for (auto &[category, count] : e.byCategory)
    categories[category] = count;
  for (auto &[library, count] : e.byLibrary)
    libraries[library] = count;
  for (const auto &[key, value] : e.codeFields)
    code[key] = value;
  return json::Object{
      {"model", model},
      {"decisions", options.decisionsFile.empty()
                        ? json::Value(nullptr)
                        : json::Value(options.decisionsFile)},
      {"target", options.target},
      {"gpu_code",
       e.code.empty() ? json::Value(nullptr) : json::Value(std::move(code))},
      {"libraries", options.useLibraries},
      {"precision", e.precision.empty() ? "fp32" : e.precision},
      {"kernels", std::move(kernels)},
      {"summary",
       json::Object{
           {"kernels", static_cast<int64_t>(e.kernels.size())},
           {"by_category", std::move(categories)},
           {"library_calls", std::move(libraries)},
           {"generated",
            static_cast<int64_t>(e.kernels.size() - e.libraryCalls)},
           {"split_into_row_blocks", static_cast<int64_t>(e.splitKernels)},
           {"nodes_in_kernels", static_cast<int64_t>(e.nodesInKernels)},
           {"views", json::Array(e.views)}}}};
}

} // namespace strata
