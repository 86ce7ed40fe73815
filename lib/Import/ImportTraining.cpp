//===- ImportTraining.cpp - training ONNX ops -------------------*- C++ -*-===//
//
// Converters of the "ai.onnx.preview.training" domain: the optimizers
// Adagrad, Momentum and Adam, and Gradient, whose attributes name the values
// it differentiates (they become operands).
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

constexpr const char *kTrainingDomain = "ai.onnx.preview.training";

/// The result types of an optimizer node: ONNX's inferred types, falling
/// back to the element type of the tensors being optimized.
SmallVector<Type> optimizerResultTypes(NodeImporter &n) {
  Type element = n.numInputs() > 2 && n.input(2)
                     ? getElementTypeOrSelf(n.input(2).getType())
                     : Type(Float32Type::get(n.context()));
  SmallVector<Type> types;
  for (unsigned i = 0; i < n.numOutputs(); ++i)
    types.push_back(n.outputType(i, element));
  return types;
}

/// The tensors after R and T.
SmallVector<Value> optimizedInputs(NodeImporter &n) {
  SmallVector<Value> inputs = n.inputs();
  return SmallVector<Value>(ArrayRef(inputs).drop_front(2));
}

LogicalResult convertAdagrad(NodeImporter &n) {
  OpBuilder &b = n.builder();
  auto op = n.create<graph::AdagradOp>(
      optimizerResultTypes(n), n.input(0), n.input(1), optimizedInputs(n),
      b.getF32FloatAttr(n.floatAttr("epsilon", 1e-6f)),
      b.getF32FloatAttr(n.floatAttr("decay_factor", 0.0f)),
      b.getF32FloatAttr(n.floatAttr("norm_coefficient", 0.0f)));
  return n.setOutputs(op.getResults());
}

LogicalResult convertMomentum(NodeImporter &n) {
  OpBuilder &b = n.builder();
  for (StringRef name : {"alpha", "beta", "norm_coefficient", "mode"})
    if (!n.hasAttr(name))
      return n.fail("missing required attribute '" + name + "'");
  auto op = n.create<graph::MomentumOp>(
      optimizerResultTypes(n), n.input(0), n.input(1), optimizedInputs(n),
      b.getF32FloatAttr(n.floatAttr("alpha", 0.0f)),
      b.getF32FloatAttr(n.floatAttr("beta", 0.0f)),
      b.getF32FloatAttr(n.floatAttr("norm_coefficient", 0.0f)),
      b.getStringAttr(n.stringAttr("mode", "")));
  return n.setOutputs(op.getResults());
}

LogicalResult convertAdam(NodeImporter &n) {
  OpBuilder &b = n.builder();
  auto op = n.create<graph::AdamOp>(
      optimizerResultTypes(n), n.input(0), n.input(1), optimizedInputs(n),
      b.getF32FloatAttr(n.floatAttr("alpha", 0.9f)),
      b.getF32FloatAttr(n.floatAttr("beta", 0.999f)),
      b.getF32FloatAttr(n.floatAttr("norm_coefficient", 0.0f)),
      b.getF32FloatAttr(n.floatAttr("norm_coefficient_post", 0.0f)),
      b.getF32FloatAttr(n.floatAttr("epsilon", 1e-6f)));
  return n.setOutputs(op.getResults());
}

/// Looks up the graph values named by a Gradient attribute.
LogicalResult lookupNamed(NodeImporter &n, StringRef attr,
                          ArrayRef<std::string> names,
                          SmallVectorImpl<Value> &values) {
  for (const std::string &name : names) {
    Value value = n.graphImporter().lookup(name);
    if (!value)
      return n.fail("'" + name + "' (named in '" + attr +
                    "') must be computed before the Gradient node");
    values.push_back(value);
  }
  return success();
}

LogicalResult convertGradient(NodeImporter &n) {
  auto xsNames = n.stringsAttr("xs");
  bool hasY = n.hasAttr("y");
  std::string yName = n.stringAttr("y", "");
  if (!xsNames || !hasY)
    return n.fail(Twine("missing required attribute '") +
                  (xsNames ? "y" : "xs") + "'");
  SmallVector<std::string> zsNames =
      n.stringsAttr("zs").value_or(SmallVector<std::string>());
  SmallVector<Value> xs, zs, y;
  if (failed(lookupNamed(n, "xs", *xsNames, xs)) ||
      failed(lookupNamed(n, "zs", zsNames, zs)) ||
      failed(lookupNamed(n, "y", {yName}, y)))
    return failure();
  Type element = getElementTypeOrSelf(y.front().getType());
  SmallVector<Type> types;
  for (unsigned i = 0; i < n.numOutputs(); ++i)
    types.push_back(n.outputType(i, element));
  auto op = n.create<graph::GradientOp>(types, n.inputs(), xs, zs, y.front());
  return n.setOutputs(op.getResults());
}

} // namespace

void strata::onnx_import::registerTrainingConverters(ConverterRegistry &r) {
  r.add("Adagrad", convertAdagrad, kTrainingDomain);
  r.add("Momentum", convertMomentum, kTrainingDomain);
  r.add("Adam", convertAdam, kTrainingDomain);
  r.add("Gradient", convertGradient, kTrainingDomain);
}
