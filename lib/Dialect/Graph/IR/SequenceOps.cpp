//===- SequenceOps.cpp - sequence and optional graph ops --------*- C++ -*-===//
//
// Verifiers and shape inference of the sequence ops, SequenceMap and the
// optional ops.
//
// joinTypes compares sequence and optional types exactly, so the shape
// inference of an op with such a result returns the op's current result type
// whenever it is compatible with the computed one (and the computed one,
// which the interface verifier then reports, when it is not). Container
// results are therefore checked but not refined; the importer gives them the
// types ONNX's shape inference computed. Tensor results are inferred as usual.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata::graph;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The tensor type of a sequence's elements; null when `type` is not a
/// sequence of tensors.
static TensorType sequenceElement(Type type) {
  auto seq = dyn_cast<SequenceType>(type);
  return seq ? dyn_cast<TensorType>(seq.getElementType()) : TensorType();
}

/// Like joinTypes, but looking into sequence and optional types.
static Type joinValueTypes(Type a, Type b) {
  if (auto seqA = dyn_cast<SequenceType>(a)) {
    auto seqB = dyn_cast<SequenceType>(b);
    Type element =
        seqB ? joinValueTypes(seqA.getElementType(), seqB.getElementType())
             : Type();
    return element ? SequenceType::get(a.getContext(), element) : Type();
  }
  if (auto optA = dyn_cast<OptionalType>(a)) {
    auto optB = dyn_cast<OptionalType>(b);
    Type element =
        optB ? joinValueTypes(optA.getElementType(), optB.getElementType())
             : Type();
    return element ? OptionalType::get(a.getContext(), element) : Type();
  }
  return joinTypes(a, b);
}

/// What shape inference reports for a result of type `current` whose
/// computed type is `inferred` (see the file comment).
static Type inferredResult(Type current, Type inferred) {
  if (isa<TensorType>(inferred))
    return inferred;
  return joinValueTypes(current, inferred) ? current : inferred;
}

/// The type every tensor of {a, b} has: dimensions they disagree on become
/// dynamic, and differing ranks give an unranked tensor. Null when the
/// element types differ.
static TensorType unionTensorTypes(TensorType a, TensorType b) {
  if (a.getElementType() != b.getElementType())
    return {};
  if (!a.hasRank() || !b.hasRank() || a.getRank() != b.getRank())
    return UnrankedTensorType::get(a.getElementType());
  SmallVector<int64_t> shape;
  for (auto [da, db] : llvm::zip(a.getShape(), b.getShape()))
    shape.push_back(da == db ? da : kDynamic);
  return RankedTensorType::get(shape, a.getElementType());
}

/// Checks that `value` is a sequence of tensors; `what` names it.
static LogicalResult verifySequenceOfTensors(Operation *op, Type type,
                                             StringRef what) {
  if (!sequenceElement(type))
    return op->emitOpError()
           << what << " must be a sequence of tensors, got " << type;
  return success();
}

/// Positions are scalars. ONNX asks for a tensor of empty shape, but its own
/// tests also pass one-element 1-D tensors, so those are accepted too.
static LogicalResult verifyPosition(Operation *op, Value position) {
  if (!position)
    return success();
  auto type = cast<TensorType>(position.getType());
  if (type.hasStaticShape() && type.getNumElements() != 1)
    return op->emitOpError("position must hold one element, got ") << type;
  return success();
}

//===----------------------------------------------------------------------===//
// SequenceEmpty
//===----------------------------------------------------------------------===//

LogicalResult SequenceEmptyOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  Type element = getDtype();
  if (isa<ShapedType, SequenceType, OptionalType>(element))
    return failure();
  types.push_back(inferredResult(
      getType(),
      SequenceType::get(getContext(), UnrankedTensorType::get(element))));
  return success();
}

LogicalResult SequenceEmptyOp::verify() {
  if (isa<ShapedType, SequenceType, OptionalType>(getDtype()))
    return emitOpError("dtype must be an element type, got ") << getDtype();
  return verifySequenceOfTensors(*this, getType(), "result");
}

//===----------------------------------------------------------------------===//
// SequenceConstruct
//===----------------------------------------------------------------------===//

LogicalResult
SequenceConstructOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  if (getInputs().empty())
    return failure();
  auto element = cast<TensorType>(getInputs().front().getType());
  for (Value input : getInputs().drop_front()) {
    element = unionTensorTypes(element, cast<TensorType>(input.getType()));
    if (!element)
      return failure();
  }
  types.push_back(
      inferredResult(getType(), SequenceType::get(getContext(), element)));
  return success();
}

LogicalResult SequenceConstructOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one tensor");
  Type element = getElementTypeOrSelf(getInputs().front().getType());
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (getElementTypeOrSelf(input.getType()) != element)
      return emitOpError("input #")
             << i << " has type " << input.getType()
             << ", but the sequence's tensors have element type " << element;
  return verifySequenceOfTensors(*this, getType(), "result");
}

//===----------------------------------------------------------------------===//
// SequenceInsert
//===----------------------------------------------------------------------===//

LogicalResult SequenceInsertOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  TensorType element = sequenceElement(getInputSequence().getType());
  if (!element)
    return failure();
  element = unionTensorTypes(element, getTensor().getType());
  if (!element)
    return failure();
  types.push_back(
      inferredResult(getType(), SequenceType::get(getContext(), element)));
  return success();
}

LogicalResult SequenceInsertOp::verify() {
  if (failed(verifySequenceOfTensors(*this, getInputSequence().getType(),
                                     "input sequence")) ||
      failed(verifySequenceOfTensors(*this, getType(), "result")) ||
      failed(verifyPosition(*this, getPosition())))
    return failure();
  TensorType element = sequenceElement(getInputSequence().getType());
  if (element.getElementType() != getTensor().getType().getElementType())
    return emitOpError("cannot insert a tensor of type ")
           << getTensor().getType() << " into a sequence of " << element;
  return success();
}

//===----------------------------------------------------------------------===//
// SequenceAt
//===----------------------------------------------------------------------===//

LogicalResult SequenceAtOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  TensorType element = sequenceElement(getInputSequence().getType());
  if (!element)
    return failure();
  // At a constant position of a listed sequence, the element's own type
  // (the sequence's element type is the join of all of them).
  SmallVector<int64_t> position;
  std::optional<OperandRange> listed = getListedElements(getInputSequence());
  if (listed && succeeded(getConstantIntValues(getPosition(), position)) &&
      position.size() == 1) {
    int64_t n = listed->size();
    int64_t at = position[0] < 0 ? position[0] + n : position[0];
    if (at >= 0 && at < n)
      if (auto type = dyn_cast<TensorType>((*listed)[at].getType()))
        element = type;
  }
  types.push_back(element);
  return success();
}

/// The element at a constant position of a listed sequence (strata binds
/// sequence inputs to their elements, docs/compiler.md).
OpFoldResult SequenceAtOp::fold(FoldAdaptor adaptor) {
  std::optional<OperandRange> elements = getListedElements(getInputSequence());
  auto position = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getPosition());
  if (!elements || !position || position.getNumElements() != 1)
    return {};
  int64_t n = elements->size();
  int64_t at = (*position.begin()).getSExtValue();
  at = at < 0 ? at + n : at;
  if (at < 0 || at >= n)
    return {};
  // Like every graph folder, only to a value of the same type: shape
  // propagation first refines this result to the element's type.
  Value element = (*elements)[at];
  return element.getType() == getType() ? element : OpFoldResult();
}

LogicalResult SequenceAtOp::verify() {
  return success(succeeded(verifySequenceOfTensors(
                     *this, getInputSequence().getType(), "input sequence")) &&
                 succeeded(verifyPosition(*this, getPosition())));
}

//===----------------------------------------------------------------------===//
// SequenceErase
//===----------------------------------------------------------------------===//

LogicalResult SequenceEraseOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  if (!sequenceElement(getInputSequence().getType()))
    return failure();
  types.push_back(inferredResult(getType(), getInputSequence().getType()));
  return success();
}

LogicalResult SequenceEraseOp::verify() {
  return success(succeeded(verifySequenceOfTensors(
                     *this, getInputSequence().getType(), "input sequence")) &&
                 succeeded(verifyPosition(*this, getPosition())));
}

//===----------------------------------------------------------------------===//
// SequenceLength
//===----------------------------------------------------------------------===//

LogicalResult SequenceLengthOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(
      RankedTensorType::get({}, IntegerType::get(getContext(), 64)));
  return success();
}

OpFoldResult SequenceLengthOp::fold(FoldAdaptor) {
  std::optional<OperandRange> elements = getListedElements(getInputSequence());
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!elements || !type)
    return {};
  return DenseElementsAttr::get(
      type, APInt(64, static_cast<uint64_t>(elements->size())));
}

LogicalResult SequenceLengthOp::verify() {
  return verifySequenceOfTensors(*this, getInputSequence().getType(),
                                 "input sequence");
}

//===----------------------------------------------------------------------===//
// SplitToSequence
//===----------------------------------------------------------------------===//

/// The size of every chunk, when SplitToSequence's `split` makes them equal
/// (ONNX's rule); kDynamic when unknown or unequal.
static int64_t uniformChunkSize(Value split, int64_t dimSize) {
  SmallVector<int64_t> sizes;
  if (failed(getConstantIntValues(split, sizes)) || sizes.empty())
    return kDynamic;
  if (cast<TensorType>(split.getType()).getRank() == 0) {
    // Chunks of sizes[0], the last one possibly smaller.
    if (ShapedType::isDynamic(dimSize) || sizes[0] <= 0 ||
        dimSize % sizes[0] != 0)
      return kDynamic;
    return sizes[0];
  }
  return llvm::all_equal(sizes) ? sizes[0] : kDynamic;
}

LogicalResult
SplitToSequenceOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(getInput().getType());
  Type element = input.getElementType();
  TensorType chunk = UnrankedTensorType::get(element);
  if (input.hasRank()) {
    auto axis = normalizeAxis(getAxis(), input.getRank());
    if (!axis)
      return failure();
    SmallVector<int64_t> shape(input.getShape());
    if (getSplit()) {
      shape[*axis] = uniformChunkSize(getSplit(), shape[*axis]);
    } else if (getKeepdims() != 0) {
      shape[*axis] = 1;
    } else {
      shape.erase(shape.begin() + *axis);
    }
    chunk = RankedTensorType::get(shape, element);
  }
  types.push_back(
      inferredResult(getType(), SequenceType::get(getContext(), chunk)));
  return success();
}

LogicalResult SplitToSequenceOp::verify() {
  if (failed(verifySequenceOfTensors(*this, getType(), "result")))
    return failure();
  auto input = cast<TensorType>(getInput().getType());
  if (input.hasRank() && !normalizeAxis(getAxis(), input.getRank()))
    return emitOpError("axis ")
           << getAxis() << " is out of range for an input of rank "
           << input.getRank();
  if (!getSplit())
    return success();
  auto splitType = cast<TensorType>(getSplit().getType());
  if (splitType.hasRank() && splitType.getRank() > 1)
    return emitOpError("split must be a scalar or a 1-D tensor, got ")
           << splitType;
  SmallVector<int64_t> sizes;
  if (failed(getConstantIntValues(getSplit(), sizes)))
    return success();
  if (sizes.empty())
    return emitOpError("split must not be empty");
  if (splitType.getRank() == 0) {
    if (sizes[0] <= 0)
      return emitOpError("split size must be positive, got ") << sizes[0];
    return success();
  }
  if (llvm::any_of(sizes, [](int64_t size) { return size < 0; }))
    return emitOpError("split sizes must not be negative, got [")
           << sizes << "]";
  if (input.hasRank()) {
    int64_t dim = input.getDimSize(*normalizeAxis(getAxis(), input.getRank()));
    int64_t sum = 0;
    for (int64_t size : sizes)
      sum += size;
    if (!ShapedType::isDynamic(dim) && sum != dim)
      return emitOpError("split sizes [") << sizes << "] add up to " << sum
                                          << ", but the axis has size " << dim;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatFromSequence
//===----------------------------------------------------------------------===//

/// The axis of ConcatFromSequence normalized against the result's rank
/// (`rank` + 1 with new_axis); std::nullopt when out of range.
static std::optional<int64_t> concatAxis(int64_t axis, bool newAxis,
                                         int64_t rank) {
  return normalizeAxis(axis, newAxis ? rank + 1 : rank);
}

LogicalResult
ConcatFromSequenceOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  TensorType element = sequenceElement(getInputSequence().getType());
  if (!element || (getNewAxis() != 0 && getNewAxis() != 1))
    return failure();
  if (!element.hasRank()) {
    types.push_back(UnrankedTensorType::get(element.getElementType()));
    return success();
  }
  bool newAxis = getNewAxis() == 1;
  auto axis = concatAxis(getAxis(), newAxis, element.getRank());
  if (!axis)
    return failure();
  // The sequence's length, and so the size along `axis`, is not known.
  SmallVector<int64_t> shape(element.getShape());
  if (newAxis)
    shape.insert(shape.begin() + *axis, kDynamic);
  else
    shape[*axis] = kDynamic;
  types.push_back(RankedTensorType::get(shape, element.getElementType()));
  return success();
}

LogicalResult ConcatFromSequenceOp::verify() {
  if (failed(verifySequenceOfTensors(*this, getInputSequence().getType(),
                                     "input sequence")))
    return failure();
  if (getNewAxis() != 0 && getNewAxis() != 1)
    return emitOpError("new_axis must be 0 or 1, got ") << getNewAxis();
  TensorType element = sequenceElement(getInputSequence().getType());
  if (element.hasRank() &&
      !concatAxis(getAxis(), getNewAxis() == 1, element.getRank()))
    return emitOpError("axis ")
           << getAxis() << " is out of range for tensors of rank "
           << element.getRank() << (getNewAxis() == 1 ? " with new_axis" : "");
  return success();
}

//===----------------------------------------------------------------------===//
// SequenceMap
//===----------------------------------------------------------------------===//

/// The body's terminator, or null when it is missing.
static SequenceMapYieldOp getMapYield(SequenceMapOp op) {
  if (op.getBody().empty() || op.getBody().front().empty())
    return {};
  return dyn_cast<SequenceMapYieldOp>(op.getBody().front().back());
}

LogicalResult SequenceMapOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  SequenceMapYieldOp yield = getMapYield(*this);
  if (!yield || yield.getValues().size() != getNumResults())
    return failure();
  for (auto [value, result] :
       llvm::zip(yield.getValues(), getOutputs().getTypes()))
    types.push_back(inferredResult(
        result, SequenceType::get(getContext(), value.getType())));
  return success();
}

LogicalResult SequenceMapOp::verify() {
  if (getNumResults() == 0)
    return emitOpError("needs at least one result");
  Block &body = getBody().front();
  if (body.getNumArguments() != getNumOperands())
    return emitOpError("body takes ")
           << body.getNumArguments() << " arguments, expected "
           << getNumOperands() << " (one per operand)";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getOperands(), body.getArgumentTypes()))) {
    auto [operand, argType] = pair;
    Type expected = operand.getType();
    if (isa<SequenceType>(expected)) {
      expected = sequenceElement(expected);
      if (!expected)
        return emitOpError("operand #")
               << i << " must be a sequence of tensors, got "
               << operand.getType();
    }
    if (!joinTypes(expected, argType))
      return emitOpError("body argument #")
             << i << " has type " << argType << ", but operand #" << i
             << " provides " << expected;
  }
  SequenceMapYieldOp yield = getMapYield(*this);
  if (!yield)
    return emitOpError("body must end in graph.sequence_map_yield");
  if (yield.getValues().size() != getNumResults())
    return emitOpError("body yields ")
           << yield.getValues().size() << " values, expected "
           << getNumResults();
  return success();
}

//===----------------------------------------------------------------------===//
// Optional
//===----------------------------------------------------------------------===//

LogicalResult OptionalOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  Type element;
  if (getInput())
    element = getInput().getType();
  else if (getType())
    element = *getType();
  if (!element || !isa<TensorType, SequenceType>(element))
    return failure();
  types.push_back(inferredResult(getOutput().getType(),
                                 OptionalType::get(getContext(), element)));
  return success();
}

LogicalResult OptionalOp::verify() {
  std::optional<Type> type = getType();
  if (type && !isa<TensorType, SequenceType>(*type))
    return emitOpError("type must be a tensor or sequence type, got ") << *type;
  if (!getInput() && !type)
    return emitOpError("needs an input or a type attribute");
  if (getInput() && type && !joinValueTypes(getInput().getType(), *type))
    return emitOpError("type attribute ")
           << *type << " does not match the input type "
           << getInput().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// OptionalHasElement, OptionalGetElement
//===----------------------------------------------------------------------===//

LogicalResult
OptionalHasElementOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get({}, IntegerType::get(getContext(), 1)));
  return success();
}

/// Whether `value` holds something, when the graph says: a tensor or a
/// sequence always does, graph.optional does when it has an operand.
static std::optional<bool> knownPresence(Value value) {
  if (!isa<OptionalType>(value.getType()))
    return true;
  if (auto wrap = value.getDefiningOp<OptionalOp>())
    return wrap.getInput() != nullptr;
  return std::nullopt;
}

OpFoldResult OptionalHasElementOp::fold(FoldAdaptor) {
  std::optional<bool> present = knownPresence(getInput());
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!present || !type)
    return {};
  return DenseElementsAttr::get(type, *present);
}

LogicalResult OptionalHasElementOp::verify() { return success(); }

LogicalResult
OptionalGetElementOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  Type input = getInput().getType();
  if (auto opt = dyn_cast<OptionalType>(input)) {
    input = opt.getElementType();
    // What a graph.optional holds has its own, possibly finer, type.
    if (auto wrap = getInput().getDefiningOp<OptionalOp>())
      if (wrap.getInput())
        input = wrap.getInput().getType();
  }
  if (!isa<TensorType, SequenceType>(input))
    return failure();
  types.push_back(inferredResult(getType(), input));
  return success();
}

OpFoldResult OptionalGetElementOp::fold(FoldAdaptor) {
  Value held = getInput();
  if (isa<OptionalType>(held.getType())) {
    auto wrap = held.getDefiningOp<OptionalOp>();
    if (!wrap || !wrap.getInput())
      return {};
    held = wrap.getInput();
  }
  return held.getType() == getType() ? held : OpFoldResult();
}

LogicalResult OptionalGetElementOp::verify() {
  auto opt = dyn_cast<OptionalType>(getInput().getType());
  if (opt && !isa<TensorType, SequenceType>(opt.getElementType()))
    return emitOpError("the optional must hold a tensor or a sequence, got ")
           << opt;
  return success();
}
