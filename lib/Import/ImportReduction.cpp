//===- ImportReduction.cpp - reductions, softmax, losses --------*- C++ -*-===//
//
// Converters for the Reduce* ops, ArgMax/ArgMin, CumSum, the softmax family
// and the losses. ONNX passes reduction axes (and CumSum's axis) as tensor
// inputs from opset 13/18 on; constant ones become attributes here, and
// computed ones stay operands for the graph layer to fold or keep.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

/// Reductions take axes as an attribute before opset 13 (18 for all but
/// ReduceSum) and as an optional input after: a constant input becomes the
/// attribute, a computed one the op's `dynamic_axes` operand.
template <typename OpTy> LogicalResult convertReduce(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return n.fail("missing input");
  SmallVector<int64_t> axes;
  bool haveAxes = false;
  Value dynamicAxes;
  if (auto attr = n.intsAttr("axes")) {
    axes = *attr;
    haveAxes = true;
  } else if (Value axesInput = n.input(1)) {
    if (succeeded(graph::getConstantIntValues(axesInput, axes)))
      haveAxes = true;
    else
      dynamicAxes = axesInput;
  }
  OpBuilder &b = n.builder();
  auto op = n.create<OpTy>(
      n.outputType(0), x, dynamicAxes,
      haveAxes ? b.getDenseI64ArrayAttr(axes) : DenseI64ArrayAttr(),
      b.getI64IntegerAttr(n.intAttr("keepdims", 1)),
      b.getI64IntegerAttr(n.intAttr("noop_with_empty_axes", 0)));
  return n.setOutput(op);
}

template <typename OpTy> LogicalResult convertArgReduce(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return n.fail("missing input");
  OpBuilder &b = n.builder();
  auto op =
      n.create<OpTy>(n.outputType(0, b.getI64Type()), x,
                     b.getI64IntegerAttr(n.intAttr("axis", 0)),
                     b.getI64IntegerAttr(n.intAttr("keepdims", 1)),
                     b.getI64IntegerAttr(n.intAttr("select_last_index", 0)));
  return n.setOutput(op);
}

/// Softmax, LogSoftmax and Hardmax. Before opset 13 they coerced the input to
/// 2-D at `axis` (default 1) and normalized over the second dimension; that
/// is a flatten, the opset-13 op over axis 1, and a reshape back. When the
/// axis is the last one, both forms agree and the op is used directly.
template <typename OpTy> LogicalResult convertSoftmaxLike(NodeImporter &n) {
  Value x = n.input(0);
  if (!x)
    return n.fail("missing input");
  OpBuilder &b = n.builder();
  if (n.opset() >= 13)
    return n.setOutput(n.create<OpTy>(
        n.outputType(0), x, b.getI64IntegerAttr(n.intAttr("axis", -1))));

  int64_t axis = n.intAttr("axis", 1);
  auto type = cast<TensorType>(x.getType());
  if (type.hasRank() && (axis == -1 || axis == type.getRank() - 1))
    return n.setOutput(
        n.create<OpTy>(n.outputType(0), x, b.getI64IntegerAttr(-1)));
  Type element = type.getElementType();
  Value flat = n.create<graph::FlattenOp>(UnrankedTensorType::get(element), x,
                                          b.getI64IntegerAttr(axis));
  Value normalized =
      n.create<OpTy>(flat.getType(), flat, b.getI64IntegerAttr(1));
  Value shape = n.create<graph::ShapeOp>(
      RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type()), x,
      b.getI64IntegerAttr(0), IntegerAttr());
  return n.setOutput(n.create<graph::ReshapeOp>(n.outputType(0), normalized,
                                                shape, b.getI64IntegerAttr(0)));
}

/// CumSum's axis is a 0-D input: a constant one becomes the attribute.
LogicalResult convertCumSum(NodeImporter &n) {
  Value x = n.input(0), axisInput = n.input(1);
  if (!x || !axisInput)
    return n.fail("expects two inputs (x, axis)");
  OpBuilder &b = n.builder();
  SmallVector<int64_t> axis;
  IntegerAttr axisAttr;
  Value dynamicAxis = axisInput;
  if (succeeded(graph::getConstantIntValues(axisInput, axis))) {
    if (axis.size() != 1)
      return n.fail("axis must be a scalar, got " + Twine(axis.size()) +
                    " values");
    axisAttr = b.getI64IntegerAttr(axis.front());
    dynamicAxis = Value();
  }
  auto op =
      n.create<graph::CumSumOp>(n.outputType(0), x, dynamicAxis, axisAttr,
                                b.getI64IntegerAttr(n.intAttr("exclusive", 0)),
                                b.getI64IntegerAttr(n.intAttr("reverse", 0)));
  return n.setOutput(op);
}

/// Reads the attributes both losses share.
std::pair<IntegerAttr, StringAttr> lossAttrs(NodeImporter &n) {
  OpBuilder &b = n.builder();
  auto ignoreIndex = n.optionalIntAttr("ignore_index");
  return {ignoreIndex ? b.getI64IntegerAttr(*ignoreIndex) : IntegerAttr(),
          b.getStringAttr(n.stringAttr("reduction", "mean"))};
}

LogicalResult convertNegativeLogLikelihoodLoss(NodeImporter &n) {
  Value input = n.input(0), target = n.input(1);
  if (!input || !target)
    return n.fail("expects inputs 'input' and 'target'");
  auto [ignoreIndex, reduction] = lossAttrs(n);
  return n.setOutput(n.create<graph::NegativeLogLikelihoodLossOp>(
      n.outputType(0), input, target, n.input(2), ignoreIndex, reduction));
}

LogicalResult convertSoftmaxCrossEntropyLoss(NodeImporter &n) {
  Value scores = n.input(0), labels = n.input(1);
  if (!scores || !labels)
    return n.fail("expects inputs 'scores' and 'labels'");
  auto [ignoreIndex, reduction] = lossAttrs(n);
  auto op = n.create<graph::SoftmaxCrossEntropyLossOp>(
      TypeRange{n.outputType(0), n.outputType(1)}, scores, labels, n.input(2),
      ignoreIndex, reduction);
  return n.setOutputs(op->getResults());
}

} // namespace

void strata::onnx_import::registerReductionConverters(ConverterRegistry &r) {
  r.add("ReduceSum", convertReduce<graph::ReduceSumOp>);
  r.add("ReduceMean", convertReduce<graph::ReduceMeanOp>);
  r.add("ReduceMax", convertReduce<graph::ReduceMaxOp>);
  r.add("ReduceMin", convertReduce<graph::ReduceMinOp>);
  r.add("ReduceProd", convertReduce<graph::ReduceProdOp>);
  r.add("ReduceL1", convertReduce<graph::ReduceL1Op>);
  r.add("ReduceL2", convertReduce<graph::ReduceL2Op>);
  r.add("ReduceLogSum", convertReduce<graph::ReduceLogSumOp>);
  r.add("ReduceLogSumExp", convertReduce<graph::ReduceLogSumExpOp>);
  r.add("ReduceSumSquare", convertReduce<graph::ReduceSumSquareOp>);
  r.add("ArgMax", convertArgReduce<graph::ArgMaxOp>);
  r.add("ArgMin", convertArgReduce<graph::ArgMinOp>);
  r.add("CumSum", convertCumSum);
  r.add("Softmax", convertSoftmaxLike<graph::SoftmaxOp>);
  r.add("LogSoftmax", convertSoftmaxLike<graph::LogSoftmaxOp>);
  r.add("Hardmax", convertSoftmaxLike<graph::HardmaxOp>);
  r.add("NegativeLogLikelihoodLoss", convertNegativeLogLikelihoodLoss);
  r.add("SoftmaxCrossEntropyLoss", convertSoftmaxCrossEntropyLoss);
}
