//===- ImportControlFlow.cpp - If, Loop, Scan -------------------*- C++ -*-===//
//
// Control-flow nodes carry subgraphs as attributes; each becomes a region,
// imported by the GraphImporter with the enclosing values in scope.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

/// The subgraph attribute `name`, or null after an error.
const onnx::GraphProto *subgraph(NodeImporter &n, StringRef name) {
  const onnx::AttributeProto *attr = n.rawAttr(name);
  if (!attr || !attr->has_g()) {
    n.emitError("missing subgraph attribute '" + name + "'");
    return nullptr;
  }
  return &attr->g();
}

/// Result types of a control-flow node: ONNX's inferred types, falling back
/// to the element type the subgraph declares for the matching output.
SmallVector<Type> resultTypes(NodeImporter &n, const onnx::GraphProto &body,
                              unsigned firstBodyOutput) {
  SmallVector<Type> types;
  for (unsigned i = 0; i < n.numOutputs(); ++i) {
    Type element;
    unsigned j = firstBodyOutput + i;
    if (int(j) < body.output_size() && body.output(j).type().has_tensor_type())
      element = convertElementType(
          n.context(), body.output(j).type().tensor_type().elem_type());
    types.push_back(n.outputType(i, element ? element : Type()));
  }
  return types;
}

LogicalResult convertIf(NodeImporter &n) {
  const onnx::GraphProto *thenGraph = subgraph(n, "then_branch");
  const onnx::GraphProto *elseGraph = subgraph(n, "else_branch");
  if (!thenGraph || !elseGraph)
    return failure();
  auto op = graph::IfOp::create(n.builder(), n.loc(),
                                resultTypes(n, *thenGraph, 0), n.input(0));
  GraphImporter &g = n.graphImporter();
  if (failed(g.importSubgraph(*thenGraph, op.getThenBranch(), {}, n.loc())) ||
      failed(g.importSubgraph(*elseGraph, op.getElseBranch(), {}, n.loc())))
    return n.failReported();
  n.refine(op);
  return n.setOutputs(op.getResults());
}

LogicalResult convertLoop(NodeImporter &n) {
  const onnx::GraphProto *body = subgraph(n, "body");
  if (!body)
    return failure();
  SmallVector<Value> initial;
  SmallVector<Type> argTypes = {
      RankedTensorType::get({}, IntegerType::get(n.context(), 64)),
      RankedTensorType::get({}, IntegerType::get(n.context(), 1))};
  for (unsigned i = 2; i < n.numInputs(); ++i) {
    Value v = n.input(i);
    if (!v)
      return n.fail("loop-carried input " + Twine(i) + " is empty");
    initial.push_back(v);
    argTypes.push_back(v.getType());
  }
  auto op =
      graph::LoopOp::create(n.builder(), n.loc(), resultTypes(n, *body, 1),
                            n.input(0), n.input(1), initial);
  if (failed(n.graphImporter().importSubgraph(*body, op.getBody(), argTypes,
                                              n.loc())))
    return n.failReported();
  n.refine(op);
  return n.setOutputs(op.getResults());
}

LogicalResult convertScan(NodeImporter &n) {
  const onnx::GraphProto *body = subgraph(n, "body");
  if (!body)
    return failure();
  std::optional<int64_t> numScanInputs = n.optionalIntAttr("num_scan_inputs");
  if (!numScanInputs)
    return n.fail("missing required attribute 'num_scan_inputs'");
  if (n.opset() < 9)
    return n.fail("the opset-8 form of Scan (with sequence_lens) is not "
                  "supported");
  OpBuilder &b = n.builder();
  auto op = graph::ScanOp::create(
      b, n.loc(), resultTypes(n, *body, 0), n.inputs(),
      b.getI64IntegerAttr(*numScanInputs), n.intsAttrOrNull("scan_input_axes"),
      n.intsAttrOrNull("scan_input_directions"),
      n.intsAttrOrNull("scan_output_axes"),
      n.intsAttrOrNull("scan_output_directions"));
  // Body argument types come from the subgraph's own declarations.
  if (failed(
          n.graphImporter().importSubgraph(*body, op.getBody(), {}, n.loc())))
    return n.failReported();
  n.refine(op);
  return n.setOutputs(op.getResults());
}

} // namespace

void strata::onnx_import::registerControlFlowConverters(ConverterRegistry &r) {
  r.add("If", convertIf);
  r.add("Loop", convertLoop);
  r.add("Scan", convertScan);
}
