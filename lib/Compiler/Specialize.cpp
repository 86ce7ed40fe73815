//===- Specialize.cpp - bind dynamic input dimensions -----------*- C++ -*-===//
//
// strata compiles one static-shape specialization at a time (docs/compiler.md,
// "Dynamic dimensions"): the caller binds every dynamic input dimension, the
// graph stage propagates the shapes, and code generation sees static types
// only. A run of `strata run`/`conformance` on a model with a symbolic batch
// compiles (and caches) one specialization per distinct input shape.
//
// The exceptions are values whose size depends on tensor values and that
// the runtime's host kernels produce: strings (StringNormalizer removing
// stop words) and the results of NonZero, Compress, Unique and
// NonMaxSuppression. They live in Host buffers that the runtime sizes when
// the step writing them runs (docs/runtime.md, "Strings" and
// "Value-dependent shapes"), so such a value may stay dynamic as long as
// only host steps and the model's outputs read it. Anything else is an
// error naming its node.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Library.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"

#include <set>

using namespace mlir;

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s + "]";
}

LogicalResult strata::bindInputShapes(ModuleOp module,
                                      const CompileOptions &options) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");

  std::set<std::string> used;
  SmallVector<Type> argTypes;
  bool failedAny = false;
  for (BlockArgument arg : entry.getArguments()) {
    std::string name = getArgumentName(entry, arg.getArgNumber());
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type) {
      emitError(entry.getLoc())
          << "input '" << name << "' has type " << arg.getType() << "; the "
          << options.target << " target needs inputs that are ranked tensors";
      failedAny = true;
      argTypes.push_back(arg.getType());
      continue;
    }
    auto it = options.inputShapes.find(name);
    if (it == options.inputShapes.end()) {
      if (!type.hasStaticShape()) {
        emitError(entry.getLoc())
            << "input '" << name << "' has the dynamic shape "
            << shapeString(type.getShape())
            << "; give its shape (e.g. --input-shape " << name << "=...)";
        failedAny = true;
      }
      argTypes.push_back(type);
      continue;
    }
    used.insert(name);
    const std::vector<int64_t> &shape = it->second;
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
      emitError(entry.getLoc())
          << "input '" << name << "' was given the shape " << shapeString(shape)
          << ", which has a negative dimension";
      failedAny = true;
      argTypes.push_back(type);
      continue;
    }
    bool fits = static_cast<int64_t>(shape.size()) == type.getRank();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = type.isDynamicDim(d) || type.getDimSize(d) == shape[d];
    if (!fits) {
      // The model declares another shape. Exporters write declarations from
      // one trace, and the ONNX test data itself has inputs that contradict
      // them (CastLike's `like`): follow the data, say so, and let the graph
      // stage report any op that cannot take it (naming the node).
      emitWarning(entry.getLoc())
          << "input '" << name << "' is declared "
          << shapeString(type.getShape()) << " but given " << shapeString(shape)
          << "; compiling for the given shape";
    }
    argTypes.push_back(type.clone(shape));
  }
  for (const auto &[name, shape] : options.inputShapes)
    if (!used.count(name) && !llvm::any_of(entry.getArguments(), [&](auto a) {
          return getArgumentName(entry, a.getArgNumber()) == name;
        })) {
      emitError(entry.getLoc()) << "a shape was given for '" << name
                                << "', which is not an input of the model";
      failedAny = true;
    }
  if (failedAny)
    return failure();

  for (auto [arg, type] : llvm::zip(entry.getArguments(), argTypes))
    arg.setType(type);
  entry.setType(FunctionType::get(module.getContext(), argTypes,
                                  entry.getFunctionType().getResults()));
  return success();
}

/// "ONNX node 'X'" or "'graph.op'" for messages about `op`.
static std::string describeNode(Operation *op) {
  std::string node = strata::getNodeName(op);
  return node.empty() ? "'" + op->getName().getStringRef().str() + "'"
                      : "ONNX node '" + node + "'";
}

LogicalResult strata::verifyStaticShapes(ModuleOp module,
                                         const CompileOptions &options) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");
  // Every value must now be static: code generation and the memory plan
  // need sizes. The exceptions are values whose size depends on tensor
  // values and which live in Host buffers that the runtime sizes when the
  // step writing them runs: strings, and the results of the host kernels of
  // value-shaped ops (NonZero, Compress, Unique, NonMaxSuppression). Only
  // host steps and the model's outputs may read those. Report the first op
  // at fault (its consumers would only repeat the message).
  auto isDynamic = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && !type.hasStaticShape();
  };
  auto sizedAtRunTime = [&](Value v) {
    if (!isDynamic(v))
      return false;
    if (isa<graph::StringType>(
            cast<RankedTensorType>(v.getType()).getElementType()))
      return true;
    Operation *def = v.getDefiningOp();
    return def && isValueShapedOp(def);
  };
  auto target = options.target;
  WalkResult walk = entry.walk([&](Operation *op) {
    // A value sized at run time read by generated code, or by a view that
    // would need arena bytes.
    if (!isHostOp(op) && !isa<func::ReturnOp>(op)) {
      for (Value operand : op->getOperands()) {
        if (!sizedAtRunTime(operand))
          continue;
        InFlightDiagnostic diag = op->emitError()
                                  << describeNode(op) << " reads ";
        if (Operation *def = operand.getDefiningOp())
          diag << "the result of " << describeNode(def);
        else
          diag << "an input";
        diag << ", whose shape "
             << shapeString(
                    cast<RankedTensorType>(operand.getType()).getShape())
             << " is only known at run time (it depends on tensor values); "
                "on the "
             << target
             << " target only the runtime's host kernels (strings, NonZero, "
                "Compress, Unique, NonMaxSuppression) and the model's outputs "
                "may read such a value";
        return WalkResult::interrupt();
      }
    }
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (type && type.hasStaticShape())
        continue;
      if (sizedAtRunTime(result))
        continue;
      if (type) {
        InFlightDiagnostic diag = op->emitError("the shape of this result, ")
                                  << shapeString(type.getShape())
                                  << ", is not known at compile time (it "
                                     "depends on tensor values); the "
                                  << target << " target needs static shapes";
        // Say where a run-time size comes from when it flows into numbers.
        for (Value operand : op->getOperands())
          if (sizedAtRunTime(operand)) {
            diag << " (" << describeNode(op)
                 << " reads the value-dependent result of ";
            if (Operation *def = operand.getDefiningOp())
              diag << describeNode(def);
            else
              diag << "an input";
            diag << ")";
            break;
          }
      } else {
        op->emitError("produces ")
            << result.getType() << ", which the " << target
            << " target cannot hold in a buffer";
      }
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult strata::specializeShapes(ModuleOp module,
                                       const CompileOptions &options) {
  if (failed(bindInputShapes(module, options)))
    return failure();
  PassManager pm(module.getContext());
  graph::buildGraphPipeline(pm);
  if (failed(pm.run(module)))
    return failure();
  return verifyStaticShapes(module, options);
}
