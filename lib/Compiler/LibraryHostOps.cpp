//===- LibraryHostOps.cpp - run-time shapes as host steps -*- C++ -*-===//
//
// An op that strata-run-time-shapes marked (kernel::Host: it reads what a
// value-dependent op or a run-time If's guard wrote) becomes a step of the
// runtime's generic host kernel for its graph op, "host." and the op's name
// (runtime/lib/kernels/HostOps.cpp): graph.gather_nd -> "host.gather_nd".
// The step carries the op's attributes under their own names (integers,
// floats, strings, integer lists; the sizes of optional operand groups as
// `operand_segment_sizes`, every name in snake_case; a ConstantOfShape's value
// as a number), and the kernel computes its output shapes when it runs.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Library.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "strata/Runtime/Runtime.h"

#include <cctype>

using namespace mlir;

std::string strata::describeRunTimeSource(Operation *op) {
  // Back through the marked ops to a value-dependent op, if one is behind.
  llvm::SmallPtrSet<Operation *, 16> seen;
  SmallVector<Operation *> work = {op};
  while (!work.empty()) {
    Operation *at = work.pop_back_val();
    for (Value operand : at->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !seen.insert(def).second)
        continue;
      if (isValueShapedOp(def))
        return "the value-dependent result of " + describeNode(def);
      if (onRunTimeShapes(def))
        work.push_back(def);
    }
  }
  // Else a guard, or (--host-kernels) any op with a host kernel.
  for (Operation *def : seen)
    if (isa<graph::GuardOp>(def))
      return "a branch of an If decided at run time";
  return "host steps (--host-kernels: every op that has a host kernel runs "
         "on the host)";
}

bool strata::onRunTimeShapes(Operation *op) {
  return kernel::has<kernel::Host>(op);
}

std::optional<strata::LibraryMatch>
strata::matchHostOpKernel(Operation *op, const LibraryRequest &,
                          std::string &whyNot) {
  StringRef name = op->getName().stripDialect();
  // The runtime's registry is the list of host kernels (HostOps.cpp).
  if (!rt::lookupKernel(("host." + name).str())) {
    whyNot = "the runtime has no host kernel for " +
             op->getName().getStringRef().str() +
             " (ops on shapes known only at run time run on the host)";
    return std::nullopt;
  }
  for (Type type :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor) {
      whyNot = "a host kernel takes ranked tensors, not " + [&] {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << type;
        return text;
      }();
      return std::nullopt;
    }
  }
  MLIRContext *context = op->getContext();
  auto i64 = [&](int64_t value) {
    return IntegerAttr::get(IntegerType::get(context, 64), value);
  };
  LibraryMatch match;
  match.library = ("host." + name).str();
  match.ops.push_back(op);
  match.joinReasons.push_back("");
  for (OpOperand &operand : op->getOpOperands())
    match.inputs.push_back(&operand);
  for (NamedAttribute attr : op->getAttrDictionary()) {
    StringRef name = attr.getName().strref();
    if (name.starts_with("strata.") || name.starts_with("graph."))
      continue;
    // Step attributes are snake_case, as ONNX's (graph.gemm's transA is
    // trans_a, the name dnnl.matmul reads).
    std::string key;
    for (char c : name) {
      if (std::isupper(static_cast<unsigned char>(c))) {
        key += '_';
        key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else {
        key += c;
      }
    }
    Attribute value = attr.getValue();
    if (auto integer = dyn_cast<IntegerAttr>(value)) {
      match.attrs.set(key, i64(integer.getType().isInteger(1)
                                   ? integer.getValue().getZExtValue()
                                   : integer.getValue().getSExtValue()));
    } else if (isa<FloatAttr, StringAttr, DenseI64ArrayAttr>(value)) {
      match.attrs.set(key, value);
    } else if (auto ints = dyn_cast<DenseI32ArrayAttr>(value)) {
      SmallVector<int64_t> wide(ints.asArrayRef().begin(),
                                ints.asArrayRef().end());
      match.attrs.set(key, DenseI64ArrayAttr::get(context, wide));
    } else if (auto elements = dyn_cast<DenseElementsAttr>(value);
               elements && elements.getNumElements() == 1) {
      // ConstantOfShape's value.
      Type element = elements.getElementType();
      if (isa<FloatType>(element))
        match.attrs.set(
            key, FloatAttr::get(
                     Float64Type::get(context),
                     elements.getSplatValue<APFloat>().convertToDouble()));
      else
        match.attrs.set(
            key, i64(element.isInteger(1)
                         ? elements.getSplatValue<APInt>().getZExtValue()
                         : elements.getSplatValue<APInt>().getSExtValue()));
    } else {
      whyNot = "its attribute '" + key + "' has no form a host kernel reads";
      return std::nullopt;
    }
  }
  // Why it is a host step, for explain: the value-dependent op behind it,
  // a run-time branch, or no generated code for it.
  bool readsHostValue = llvm::any_of(op->getOperands(), [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && (isValueShapedOp(def) || onRunTimeShapes(def));
  });
  if (isa<graph::GuardOp, graph::MergeOp>(op))
    match.reason = std::string(name) +
                   ": part of an If whose condition is known only at run "
                   "time (docs/runtime.md, \"Run-time branches\")";
  else if (!readsHostValue && !isLowerableToLinalg(op))
    match.reason = std::string(name) +
                   ": no generated code takes it; the runtime's host "
                   "kernel does";
  else
    match.reason = std::string(name) + ": computes from " +
                   describeRunTimeSource(op) +
                   " (shapes or values known only at run time); the "
                   "runtime's host kernel runs it";
  return match;
}
