//===- CompilerUtils.cpp - names and facts every compiler pass uses -------===//
//
// The entry function, the names of its arguments, results and nodes as
// messages print them, and which ops are views (CompilerUtils.h).
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Library.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace strata;
namespace graph = strata::graph;

func::FuncOp strata::getEntryFunction(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      return func;
  return nullptr;
}

static std::string nameAttr(DictionaryAttr attrs, const char *fallback,
                            unsigned index) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("graph.name"))
      return name.str();
  return fallback + std::to_string(index);
}

std::string strata::getArgumentName(func::FuncOp func, unsigned index) {
  return nameAttr(func.getArgAttrDict(index), "input", index);
}

std::string strata::getResultName(func::FuncOp func, unsigned index) {
  return nameAttr(func.getResultAttrDict(index), "output", index);
}

std::string strata::getNodeName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "";
}

std::string strata::typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

std::string strata::describeNode(Operation *op) {
  std::string node = getNodeName(op);
  return node.empty() ? "'" + op->getName().getStringRef().str() + "'"
                      : "ONNX node '" + node + "'";
}

bool strata::isViewOp(Operation *op) {
  // An op on the host copies: a view needs arena bytes in the plan.
  if (onRunTimeShapes(op))
    return false;
  if (!isa<graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp,
           graph::UnsqueezeOp, graph::IdentityOp>(op))
    return false;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return in && out && in.hasStaticShape() && out.hasStaticShape() &&
         in.getElementType() == out.getElementType() &&
         in.getNumElements() == out.getNumElements();
}
