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

/// The host.loop step of a Loop left to run time: its body as a sub-plan
/// of host kernels, in the step's attributes (the layout is described in
/// runtime/lib/kernels/HostLoop.cpp).
static std::optional<strata::LibraryMatch>
matchHostLoop(strata::graph::LoopOp loop, const strata::LibraryRequest &request,
              std::string &whyNot) {
  using namespace strata;
  MLIRContext *context = loop->getContext();
  LibraryMatch match;
  match.library = "host.loop";
  match.ops.push_back(loop);
  match.joinReasons.push_back("");
  llvm::DenseMap<Value, int64_t> slots;
  int64_t next = 0;
  for (OpOperand &operand : loop->getOpOperands()) {
    match.inputs.push_back(&operand);
    slots.try_emplace(operand.get(), next++);
  }
  Block &body = loop.getBody().front();
  // The outer values the body reads become inputs after the operands.
  for (Operation &inner : body.without_terminator()) {
    if (inner.getNumRegions()) {
      whyNot = "its body holds " + describeNode(&inner) +
               ", control flow, which the runtime's host loop does not run";
      return std::nullopt;
    }
    for (OpOperand &operand : inner.getOpOperands())
      if (!loop.getBody().isAncestor(operand.get().getParentRegion()) &&
          slots.try_emplace(operand.get(), next).second) {
        match.inputs.push_back(&operand);
        ++next;
      }
  }
  SmallVector<int64_t> types;
  auto addType = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<rt::DType> dtype =
        tensor ? toRuntimeType(tensor.getElementType()) : std::nullopt;
    if (!dtype || *dtype == rt::DType::String)
      return false;
    // Every size is left to run time: the body was typed for the first
    // iteration's values (a carried value that grows by a Concat is typed
    // at its initial size), and a host kernel sizes its outputs itself.
    types.push_back(static_cast<int64_t>(*dtype));
    types.push_back(tensor.getRank());
    types.append(tensor.getRank(), -1);
    return true;
  };
  for (BlockArgument arg : body.getArguments()) {
    slots[arg] = next++;
    if (!addType(arg.getType())) {
      whyNot = "its body takes a value of type " + typeString(arg.getType()) +
               ", which the runtime's host loop does not hold";
      return std::nullopt;
    }
  }
  SmallVector<Attribute> kernels, nodes;
  SmallVector<int64_t> bodyInputs, bodyOutputs;
  int64_t index = 0;
  for (Operation &inner : body.without_terminator()) {
    std::string why;
    std::optional<LibraryMatch> sub = matchHostOpKernel(&inner, request, why);
    if (!sub) {
      whyNot = "its body's " + describeNode(&inner) + " cannot run: " + why;
      return std::nullopt;
    }
    kernels.push_back(StringAttr::get(context, sub->library));
    nodes.push_back(StringAttr::get(context, getNodeName(&inner)));
    bodyInputs.push_back(inner.getNumOperands());
    for (Value operand : inner.getOperands())
      bodyInputs.push_back(slots.lookup(operand));
    bodyOutputs.push_back(inner.getNumResults());
    for (Value result : inner.getResults()) {
      slots[result] = next++;
      if (!addType(result.getType())) {
        whyNot = "its body's " + describeNode(&inner) +
                 " produces a value the runtime's host loop does not hold";
        return std::nullopt;
      }
    }
    for (NamedAttribute attr : sub->attrs)
      match.attrs.set("op" + std::to_string(index) + "." + attr.getName().str(),
                      attr.getValue());
    ++index;
  }
  SmallVector<int64_t> yields, outputs;
  for (Value v : body.getTerminator()->getOperands())
    yields.push_back(slots.lookup(v));
  // The step's outputs are the results something reads (Partition.cpp's
  // outlining keeps those only).
  for (OpResult result : loop->getResults())
    if (!result.use_empty())
      outputs.push_back(result.getResultNumber());
  auto i64 = [&](int64_t value) {
    return IntegerAttr::get(IntegerType::get(context, 64), value);
  };
  match.attrs.set("has_max_trip_count",
                  i64(static_cast<bool>(loop.getMaxTripCount())));
  match.attrs.set("has_condition", i64(static_cast<bool>(loop.getCondition())));
  match.attrs.set("num_carried", i64(loop.getInitial().size()));
  match.attrs.set("outputs", DenseI64ArrayAttr::get(context, outputs));
  match.attrs.set("body", ArrayAttr::get(context, kernels));
  match.attrs.set("body_nodes", ArrayAttr::get(context, nodes));
  match.attrs.set("body_inputs", DenseI64ArrayAttr::get(context, bodyInputs));
  match.attrs.set("body_outputs", DenseI64ArrayAttr::get(context, bodyOutputs));
  match.attrs.set("body_types", DenseI64ArrayAttr::get(context, types));
  match.attrs.set("body_yield", DenseI64ArrayAttr::get(context, yields));
  match.reason = "loop: a Loop whose trip count or condition is known only at "
                 "run time (or too long to unroll); the runtime's host loop "
                 "runs its body of " +
                 std::to_string(index) +
                 " ops, each a host kernel, once per iteration";
  return match;
}

std::optional<strata::LibraryMatch>
strata::matchHostOpKernel(Operation *op, const LibraryRequest &request,
                          std::string &whyNot) {
  if (auto loop = dyn_cast<graph::LoopOp>(op))
    return matchHostLoop(loop, request, whyNot);
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
      whyNot = "a host kernel takes ranked tensors, not " + typeString(type);
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
    // The dialects' own attributes (the kernel layer's decisions, graph
    // ops' bookkeeping) are not the op's.
    StringRef name = attr.getName().strref();
    auto [prefix, rest] = name.split('.');
    if (!rest.empty() &&
        (prefix == kernel::KernelDialect::getDialectNamespace() ||
         prefix == graph::GraphDialect::getDialectNamespace()))
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
