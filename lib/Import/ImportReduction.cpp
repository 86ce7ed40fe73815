//===- ImportReduction.cpp - reductions and softmax -------------*- C++ -*-===//

#include "NodeImporter.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

/// Reductions take axes as an attribute before opset 13 (18 for all but
/// ReduceSum) and as an optional constant input after.
template <typename OpTy>
LogicalResult convertReduce(NodeImporter &n) {
  Value x = n.input(0);
  SmallVector<int64_t> axes;
  bool haveAxes = false;
  if (auto attr = n.intsAttr("axes")) {
    axes = *attr;
    haveAxes = true;
  } else if (n.input(1)) {
    if (failed(n.constantInts(1, "axes", axes)))
      return failure();
    haveAxes = true;
  }
  OpBuilder &b = n.builder();
  auto op = n.create<OpTy>(
      n.outputType(0), x,
      haveAxes ? b.getDenseI64ArrayAttr(axes) : DenseI64ArrayAttr(),
      b.getI64IntegerAttr(n.intAttr("keepdims", 1)),
      b.getI64IntegerAttr(n.intAttr("noop_with_empty_axes", 0)));
  return n.setOutput(op);
}

template <typename OpTy>
LogicalResult convertSoftmaxLike(NodeImporter &n) {
  // Opset < 13 coerced the input to 2-D at `axis` (default 1); the version
  // converter rewrites such models, so only the opset-13 form reaches here.
  if (n.opset() < 13)
    return n.fail("the opset " + Twine(n.opset()) +
                  " form (2-D coercion) is not supported");
  auto op = n.create<OpTy>(n.outputType(0), n.input(0),
                           n.builder().getI64IntegerAttr(n.intAttr("axis", -1)));
  return n.setOutput(op);
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
  r.add("Softmax", convertSoftmaxLike<graph::SoftmaxOp>);
  r.add("LogSoftmax", convertSoftmaxLike<graph::LogSoftmaxOp>);
  r.add("Hardmax", convertSoftmaxLike<graph::HardmaxOp>);
}
