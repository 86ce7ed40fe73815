//===- ImportTensor.cpp - shape and data-movement ONNX ops ------*- C++ -*-===//

#include "GraphImporter.h"
#include "NodeImporter.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

void strata::onnx_import::registerTensorConverters(ConverterRegistry &r) {
  r.add("Reshape", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::ReshapeOp>(
        n.outputType(0), n.input(0), n.input(1),
        n.builder().getI64IntegerAttr(n.intAttr("allowzero", 0))));
  });
  r.add("Transpose", [](NodeImporter &n) -> LogicalResult {
    auto perm = n.intsAttr("perm");
    return n.setOutput(n.create<graph::TransposeOp>(
        n.outputType(0), n.input(0),
        perm ? n.builder().getDenseI64ArrayAttr(*perm) : DenseI64ArrayAttr()));
  });
  r.add("Concat", [](NodeImporter &n) -> LogicalResult {
    auto axis = n.optionalIntAttr("axis");
    if (!axis)
      return n.fail("missing required attribute 'axis'");
    return n.setOutput(n.create<graph::ConcatOp>(
        n.outputType(0), n.inputs(), n.builder().getI64IntegerAttr(*axis)));
  });
  r.add("Gather", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::GatherOp>(
        n.outputType(0), n.input(0), n.input(1),
        n.builder().getI64IntegerAttr(n.intAttr("axis", 0))));
  });
}
