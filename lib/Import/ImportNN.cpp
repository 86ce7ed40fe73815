//===- ImportNN.cpp - matmul, convolution, pooling, norms -------*- C++ -*-===//

#include "NodeImporter.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

/// Reads an optional ints attribute into a DenseI64ArrayAttr (null if absent).
DenseI64ArrayAttr intsOrNull(NodeImporter &n, StringRef name) {
  auto values = n.intsAttr(name);
  return values ? n.builder().getDenseI64ArrayAttr(*values)
                : DenseI64ArrayAttr();
}

} // namespace

void strata::onnx_import::registerNNConverters(ConverterRegistry &r) {
  r.add("MatMul", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(
        n.create<graph::MatMulOp>(n.outputType(0), n.input(0), n.input(1)));
  });
  r.add("Gemm", [](NodeImporter &n) -> LogicalResult {
    OpBuilder &b = n.builder();
    return n.setOutput(n.create<graph::GemmOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2),
        b.getF32FloatAttr(n.floatAttr("alpha", 1.0f)),
        b.getF32FloatAttr(n.floatAttr("beta", 1.0f)),
        b.getI64IntegerAttr(n.intAttr("transA", 0)),
        b.getI64IntegerAttr(n.intAttr("transB", 0))));
  });
  r.add("Conv", [](NodeImporter &n) -> LogicalResult {
    OpBuilder &b = n.builder();
    return n.setOutput(n.create<graph::ConvOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2),
        b.getStringAttr(n.stringAttr("auto_pad", "NOTSET")),
        intsOrNull(n, "dilations"), b.getI64IntegerAttr(n.intAttr("group", 1)),
        intsOrNull(n, "kernel_shape"), intsOrNull(n, "pads"),
        intsOrNull(n, "strides")));
  });
  r.add("LayerNormalization", [](NodeImporter &n) -> LogicalResult {
    OpBuilder &b = n.builder();
    Type f32 = b.getF32Type();
    auto op = n.create<graph::LayerNormOp>(
        TypeRange{n.outputType(0), n.outputType(1, f32), n.outputType(2, f32)},
        n.input(0), n.input(1), n.input(2),
        b.getI64IntegerAttr(n.intAttr("axis", -1)),
        b.getF32FloatAttr(n.floatAttr("epsilon", 1e-5f)),
        b.getI64IntegerAttr(n.intAttr("stash_type", 1)));
    return n.setOutputs(op->getResults());
  });
}
