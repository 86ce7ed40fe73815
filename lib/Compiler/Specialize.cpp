//===- Specialize.cpp - bind dynamic input dimensions -----------*- C++ -*-===//
//
// strata compiles one static-shape specialization at a time (docs/compiler.md,
// "Dynamic dimensions"): the caller binds every dynamic input dimension, the
// graph stage propagates the shapes, and code generation sees static types
// only. A run of `strata run`/`conformance` on a model with a symbolic batch
// compiles (and caches) one specialization per distinct input shape.
//
// The one exception is a tensor of strings whose size depends on the values
// (StringNormalizer removing stop words): strings live in host buffers that
// the runtime sizes when the step writing them runs (docs/runtime.md,
// "Strings"), so such a value may stay dynamic. Anything that is not a string
// and whose shape follows from one is still an error, naming its node.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"

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

LogicalResult strata::verifyStaticShapes(ModuleOp module,
                                         const CompileOptions &options) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");
  // Every value must now be static: code generation and the memory plan
  // need sizes. Report the first op whose result is not (its consumers would
  // only repeat the message).
  auto isDynamicStrings = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && !type.hasStaticShape() &&
           isa<graph::StringType>(type.getElementType());
  };
  WalkResult walk = entry.walk([&](Operation *op) {
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (type && type.hasStaticShape())
        continue;
      if (isDynamicStrings(result))
        continue;
      if (type) {
        InFlightDiagnostic diag = op->emitError("the shape of this result, ")
                                  << shapeString(type.getShape())
                                  << ", is not known at compile time (it "
                                     "depends on tensor values); the "
                                  << options.target
                                  << " target needs static shapes";
        // Say where a run-time size comes from when a string tensor's
        // value-dependent shape flows into numbers.
        for (Value operand : op->getOperands())
          if (isDynamicStrings(operand)) {
            std::string node = getNodeName(op);
            diag << " (only tensors of strings may have a shape set at run "
                    "time; "
                 << (node.empty() ? std::string("this op")
                                  : "ONNX node '" + node + "'")
                 << " reads the value-dependent strings of ";
            if (Operation *def = operand.getDefiningOp()) {
              std::string source = getNodeName(def);
              diag << (source.empty()
                           ? "'" + def->getName().getStringRef().str()
                           : "ONNX node '" + source)
                   << "'";
            } else {
              diag << "an input";
            }
            diag << ")";
            break;
          }
      } else {
        op->emitError("produces ")
            << result.getType() << ", which the " << options.target
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
