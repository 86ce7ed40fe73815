//===- ImportSequence.cpp - sequence and optional ONNX ops ------*- C++ -*-===//
//
// Converters of ONNX's sequence operators, SequenceMap and the optional
// operators.
//
// Sequence and optional results take the type ONNX's shape inference gives
// them (the op's verifier checks it against the operands); without one they
// fall back to a sequence or optional of unranked tensors of the right
// element type.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

/// The type of output `i`, a sequence or optional: ONNX's inferred type when
/// it is of the same kind as `fallback`, else `fallback`.
Type containerType(NodeImporter &n, unsigned i, Type fallback) {
  Type known =
      n.hasOutput(i) ? n.graphImporter().knownType(n.node().output(i)) : Type();
  return known && known.getTypeID() == fallback.getTypeID() ? known : fallback;
}

/// A sequence of unranked tensors of `element`'s element type.
Type sequenceOf(Type element) {
  return graph::SequenceType::get(
      element.getContext(),
      UnrankedTensorType::get(getElementTypeOrSelf(element)));
}

/// The element type of the tensors of a sequence value; null (after an
/// error) when `value` is not a sequence of tensors.
Type sequenceElementType(NodeImporter &n, Value value, StringRef what) {
  auto seq = dyn_cast<graph::SequenceType>(value.getType());
  auto tensor = seq ? dyn_cast<TensorType>(seq.getElementType()) : nullptr;
  if (!tensor) {
    n.emitError(Twine(what) + " must be a sequence of tensors");
    return {};
  }
  return tensor.getElementType();
}

LogicalResult convertSequenceEmpty(NodeImporter &n) {
  int64_t dtype = n.intAttr("dtype", onnx::TensorProto::FLOAT);
  Type element = convertElementType(n.context(), int32_t(dtype));
  if (!element)
    return n.fail("dtype " + elementTypeName(int32_t(dtype)) +
                  " is not supported");
  auto op = n.create<graph::SequenceEmptyOp>(
      containerType(n, 0, sequenceOf(element)), TypeAttr::get(element));
  return n.setOutput(op);
}

LogicalResult convertSequenceConstruct(NodeImporter &n) {
  SmallVector<Value> inputs = n.inputs();
  if (inputs.empty())
    return n.fail("needs at least one tensor");
  if (!isa<TensorType>(inputs.front().getType()))
    return n.fail("inputs must be tensors");
  auto op = n.create<graph::SequenceConstructOp>(
      containerType(n, 0, sequenceOf(inputs.front().getType())), inputs);
  return n.setOutput(op);
}

LogicalResult convertSequenceInsert(NodeImporter &n) {
  Value seq = n.input(0);
  if (!sequenceElementType(n, seq, "input 0"))
    return failure();
  if (!isa<TensorType>(n.input(1).getType()))
    return n.fail("input 1 must be a tensor");
  auto op = n.create<graph::SequenceInsertOp>(
      containerType(n, 0, seq.getType()), seq, n.input(1), n.input(2));
  return n.setOutput(op);
}

LogicalResult convertSequenceAt(NodeImporter &n) {
  Type element = sequenceElementType(n, n.input(0), "input 0");
  if (!element)
    return failure();
  auto op = n.create<graph::SequenceAtOp>(n.outputType(0, element), n.input(0),
                                          n.input(1));
  return n.setOutput(op);
}

LogicalResult convertSequenceErase(NodeImporter &n) {
  Value seq = n.input(0);
  if (!sequenceElementType(n, seq, "input 0"))
    return failure();
  auto op = n.create<graph::SequenceEraseOp>(containerType(n, 0, seq.getType()),
                                             seq, n.input(1));
  return n.setOutput(op);
}

LogicalResult convertSequenceLength(NodeImporter &n) {
  if (!sequenceElementType(n, n.input(0), "input 0"))
    return failure();
  Type i64 = IntegerType::get(n.context(), 64);
  auto op = n.create<graph::SequenceLengthOp>(RankedTensorType::get({}, i64),
                                              n.input(0));
  return n.setOutput(op);
}

LogicalResult convertSplitToSequence(NodeImporter &n) {
  Value input = n.input(0);
  if (!isa<TensorType>(input.getType()))
    return n.fail("input 0 must be a tensor");
  OpBuilder &b = n.builder();
  auto op = n.create<graph::SplitToSequenceOp>(
      containerType(n, 0, sequenceOf(input.getType())), input, n.input(1),
      b.getI64IntegerAttr(n.intAttr("axis", 0)),
      b.getI64IntegerAttr(n.intAttr("keepdims", 1)));
  return n.setOutput(op);
}

LogicalResult convertConcatFromSequence(NodeImporter &n) {
  Type element = sequenceElementType(n, n.input(0), "input 0");
  if (!element)
    return failure();
  std::optional<int64_t> axis = n.optionalIntAttr("axis");
  if (!axis)
    return n.fail("missing required attribute 'axis'");
  OpBuilder &b = n.builder();
  auto op = n.create<graph::ConcatFromSequenceOp>(
      n.outputType(0, element), n.input(0), b.getI64IntegerAttr(*axis),
      b.getI64IntegerAttr(n.intAttr("new_axis", 0)));
  return n.setOutput(op);
}

LogicalResult convertSequenceMap(NodeImporter &n) {
  const onnx::AttributeProto *attr = n.rawAttr("body");
  if (!attr || !attr->has_g())
    return n.fail("missing subgraph attribute 'body'");
  const onnx::GraphProto &body = attr->g();
  SmallVector<Value> operands = n.inputs();
  if (operands.size() != n.numInputs())
    return n.fail("inputs must not be empty");
  if (body.input_size() != int(operands.size()) ||
      body.output_size() != int(n.numOutputs()))
    return n.fail("the body takes " + Twine(body.input_size()) +
                  " inputs and returns " + Twine(body.output_size()) +
                  " outputs, expected " + Twine(operands.size()) + " and " +
                  Twine(n.numOutputs()));
  if (!sequenceElementType(n, operands.front(), "input 0"))
    return failure();

  // The body sees one tensor of each sequence operand per run, and tensor
  // operands whole.
  SmallVector<Type> argTypes;
  for (Value operand : operands) {
    Type type = operand.getType();
    if (auto seq = dyn_cast<graph::SequenceType>(type))
      type = seq.getElementType();
    if (!isa<TensorType>(type))
      return n.fail("inputs must be tensors or sequences of tensors");
    argTypes.push_back(type);
  }

  // Result types come from the body, which is imported into the op.
  SmallVector<Type> placeholders(n.numOutputs(),
                                 sequenceOf(Float32Type::get(n.context())));
  auto op = graph::SequenceMapOp::create(n.builder(), n.loc(), placeholders,
                                         operands.front(),
                                         ArrayRef(operands).drop_front());
  if (failed(n.graphImporter().importSubgraph(body, op.getBody(), argTypes,
                                              n.loc())))
    return n.fail("the body failed to import");

  // importSubgraph ends the body in graph.yield; SequenceMap has its own
  // terminator.
  Block &block = op.getBody().front();
  auto yield = cast<graph::YieldOp>(block.getTerminator());
  OpBuilder::InsertionGuard guard(n.builder());
  n.builder().setInsertionPoint(yield);
  graph::SequenceMapYieldOp::create(n.builder(), yield.getLoc(),
                                    yield.getValues());
  yield.erase();

  for (auto [i, result] : llvm::enumerate(op.getOutputs())) {
    Type yielded = block.getTerminator()->getOperand(i).getType();
    if (!isa<TensorType>(yielded))
      return n.fail("body output " + Twine(i) + " must be a tensor");
    result.setType(
        containerType(n, i, graph::SequenceType::get(n.context(), yielded)));
  }
  n.refine(op);
  return n.setOutputs(op.getResults());
}

LogicalResult convertOptional(NodeImporter &n) {
  Value input = n.input(0);
  TypeAttr typeAttr;
  if (const onnx::AttributeProto *attr = n.rawAttr("type")) {
    if (!attr->has_tp())
      return n.fail("attribute 'type' must be a type");
    std::string whyNot;
    Type type = n.graphImporter().convertTypeProto(attr->tp(), whyNot);
    if (!type)
      return n.fail("attribute 'type' has " + whyNot +
                    ", which strata does not support");
    typeAttr = TypeAttr::get(type);
  }
  Type element = input      ? input.getType()
                 : typeAttr ? typeAttr.getValue()
                            : Type();
  if (!element)
    return n.fail("needs an input or the 'type' attribute");
  auto op = n.create<graph::OptionalOp>(
      containerType(n, 0, graph::OptionalType::get(n.context(), element)),
      input, typeAttr);
  return n.setOutput(op);
}

LogicalResult convertOptionalHasElement(NodeImporter &n) {
  Value input = n.input(0);
  if (!isa<graph::OptionalType>(input.getType()) && n.opset() < 18)
    return n.fail("the input must be an optional before opset 18");
  auto op = n.create<graph::OptionalHasElementOp>(
      RankedTensorType::get({}, IntegerType::get(n.context(), 1)), input);
  return n.setOutput(op);
}

LogicalResult convertOptionalGetElement(NodeImporter &n) {
  Value input = n.input(0);
  Type element = input.getType();
  if (auto opt = dyn_cast<graph::OptionalType>(element))
    element = opt.getElementType();
  else if (n.opset() < 18)
    return n.fail("the input must be an optional before opset 18");
  Type resultType;
  if (isa<graph::SequenceType>(element))
    resultType = containerType(n, 0, element);
  else if (isa<TensorType>(element))
    resultType = n.outputType(0, getElementTypeOrSelf(element));
  else
    return n.fail("the optional must hold a tensor or a sequence");
  auto op = n.create<graph::OptionalGetElementOp>(resultType, input);
  return n.setOutput(op);
}

} // namespace

void strata::onnx_import::registerSequenceConverters(ConverterRegistry &r) {
  r.add("SequenceEmpty", convertSequenceEmpty);
  r.add("SequenceConstruct", convertSequenceConstruct);
  r.add("SequenceInsert", convertSequenceInsert);
  r.add("SequenceAt", convertSequenceAt);
  r.add("SequenceErase", convertSequenceErase);
  r.add("SequenceLength", convertSequenceLength);
  r.add("SplitToSequence", convertSplitToSequence);
  r.add("ConcatFromSequence", convertConcatFromSequence);
  r.add("SequenceMap", convertSequenceMap);
  r.add("Optional", convertOptional);
  r.add("OptionalHasElement", convertOptionalHasElement);
  r.add("OptionalGetElement", convertOptionalGetElement);
}
