//===- ImportElementwise.cpp - elementwise ONNX ops -------------*- C++ -*-===//

#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

template <typename OpTy>
LogicalResult convertUnary(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return n.fail("missing input");
  return n.setOutput(n.create<OpTy>(n.outputType(0), x));
}

template <typename OpTy>
LogicalResult convertBinary(NodeImporter &n) {
  Value a = n.input(0), b = n.input(1);
  if (!a || !b)
    return n.fail("expects two inputs");
  return n.setOutput(n.create<OpTy>(n.outputType(0), a, b));
}

template <typename OpTy>
LogicalResult convertCompare(NodeImporter &n) {
  Value a = n.input(0), b = n.input(1);
  if (!a || !b)
    return n.fail("expects two inputs");
  Type i1 = IntegerType::get(n.context(), 1);
  return n.setOutput(n.create<OpTy>(n.outputType(0, i1), a, b));
}

/// Sum, Mean, Max, Min take any number of inputs: a left-to-right chain of
/// the binary op (Mean divides the sum by the count).
template <typename OpTy>
LogicalResult convertVariadic(NodeImporter &n) {
  SmallVector<Value> inputs = n.inputs();
  if (inputs.empty())
    return n.fail("expects at least one input");
  Value acc = inputs.front();
  Type element = getElementTypeOrSelf(acc.getType());
  for (Value next : llvm::drop_begin(inputs))
    acc = n.create<OpTy>(UnrankedTensorType::get(element), acc, next);
  if (n.node().op_type() == "Mean" && inputs.size() > 1) {
    auto scalar = RankedTensorType::get({}, element);
    auto count = cast<ElementsAttr>(DenseElementsAttr::get(
        scalar, n.builder().getFloatAttr(element, double(inputs.size()))));
    Value divisor = n.create<graph::ConstantOp>(count);
    acc = n.create<graph::DivOp>(UnrankedTensorType::get(element), acc,
                                 divisor);
  }
  Type declared = n.outputType(0);
  if (acc.getType() != declared) {
    Type joined = graph::joinTypes(acc.getType(), declared);
    if (!joined)
      return n.fail("inputs broadcast to a shape other than the declared one");
    acc.setType(joined);
  }
  return n.setOutput(acc);
}

} // namespace

void strata::onnx_import::registerElementwiseConverters(
    ConverterRegistry &r) {
  r.add("Abs", convertUnary<graph::AbsOp>);
  r.add("Neg", convertUnary<graph::NegOp>);
  r.add("Exp", convertUnary<graph::ExpOp>);
  r.add("Log", convertUnary<graph::LogOp>);
  r.add("Sqrt", convertUnary<graph::SqrtOp>);
  r.add("Reciprocal", convertUnary<graph::ReciprocalOp>);
  r.add("Relu", convertUnary<graph::ReluOp>);
  r.add("Sigmoid", convertUnary<graph::SigmoidOp>);
  r.add("Tanh", convertUnary<graph::TanhOp>);
  r.add("Erf", convertUnary<graph::ErfOp>);
  r.add("Identity", convertUnary<graph::IdentityOp>);

  r.add("Add", convertBinary<graph::AddOp>);
  r.add("Sub", convertBinary<graph::SubOp>);
  r.add("Mul", convertBinary<graph::MulOp>);
  r.add("Div", convertBinary<graph::DivOp>);
  r.add("Pow", convertBinary<graph::PowOp>);

  r.add("Equal", convertCompare<graph::EqualOp>);
  r.add("Less", convertCompare<graph::LessOp>);
  r.add("Greater", convertCompare<graph::GreaterOp>);

  r.add("Sum", convertVariadic<graph::AddOp>);
  r.add("Mean", convertVariadic<graph::AddOp>);
  r.add("Max", convertVariadic<graph::MaxOp>);
  r.add("Min", convertVariadic<graph::MinOp>);

  r.add("Cast", [](NodeImporter &n) -> LogicalResult {
    Value x = n.input(0);
    int64_t to = n.intAttr("to", 0);
    Type element = convertElementType(n.context(), int32_t(to));
    if (!element)
      return n.fail("cast to " + elementTypeName(int32_t(to)) +
                    " is not supported");
    n.ignoreAttr("saturate");
    return n.setOutput(n.create<graph::CastOp>(n.outputType(0, element), x));
  });
}
