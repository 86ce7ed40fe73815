//===- GraphOps.cpp - graph op classes and shared shape helpers -*- C++ -*-===//
//
// Holds the shape helpers that every
// op family uses (broadcasting, axis normalization, type joins). Per-family
// verifiers, shape functions and folders live in the family's own file
// (ElementwiseOps.cpp, ReductionOps.cpp, TensorOps.cpp, NNOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace strata::graph {

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1) {
      result[i] = db;
    } else if (db == 1) {
      result[i] = da;
    } else if (ShapedType::isDynamic(da)) {
      result[i] = db;
    } else if (ShapedType::isDynamic(db) || da == db) {
      result[i] = da;
    } else {
      return std::nullopt;
    }
  }
  return result;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

int64_t samePadding(int64_t in, int64_t effectiveKernel, int64_t stride) {
  int64_t positions = (in + stride - 1) / stride;
  return std::max<int64_t>(0, (positions - 1) * stride + effectiveKernel - in);
}

TensorType withShape(Type type, std::optional<ArrayRef<int64_t>> shape) {
  Type element = getElementTypeOrSelf(type);
  if (!shape)
    return UnrankedTensorType::get(element);
  return RankedTensorType::get(*shape, element);
}

/// For two sequence types or two optional types: the container of
/// `combine` of their element types (null when that is null or the kinds
/// differ). std::nullopt when `a` is neither.
static std::optional<Type>
combineContainers(Type a, Type b,
                  llvm::function_ref<Type(Type, Type)> combine) {
  if (auto sa = dyn_cast<SequenceType>(a)) {
    auto sb = dyn_cast<SequenceType>(b);
    Type element =
        sb ? combine(sa.getElementType(), sb.getElementType()) : Type();
    return element ? SequenceType::get(a.getContext(), element) : Type();
  }
  if (auto oa = dyn_cast<OptionalType>(a)) {
    auto ob = dyn_cast<OptionalType>(b);
    Type element =
        ob ? combine(oa.getElementType(), ob.getElementType()) : Type();
    return element ? OptionalType::get(a.getContext(), element) : Type();
  }
  return std::nullopt;
}

Type joinTypes(Type a, Type b) {
  if (std::optional<Type> container = combineContainers(a, b, joinTypes))
    return *container;
  auto ta = dyn_cast<TensorType>(a);
  auto tb = dyn_cast<TensorType>(b);
  if (!ta || !tb)
    return a == b ? a : Type();
  if (ta.getElementType() != tb.getElementType())
    return {};
  if (!ta.hasRank())
    return tb;
  if (!tb.hasRank())
    return ta;
  if (ta.getRank() != tb.getRank())
    return {};
  SmallVector<int64_t> shape;
  for (auto [da, db] : llvm::zip(ta.getShape(), tb.getShape())) {
    if (ShapedType::isDynamic(da))
      shape.push_back(db);
    else if (ShapedType::isDynamic(db) || da == db)
      shape.push_back(da);
    else
      return {};
  }
  return RankedTensorType::get(shape, ta.getElementType());
}

Type unionTypes(Type a, Type b) {
  if (std::optional<Type> container = combineContainers(a, b, unionTypes))
    return *container;
  auto ta = dyn_cast<TensorType>(a);
  auto tb = dyn_cast<TensorType>(b);
  if (!ta || !tb)
    return a == b ? a : Type();
  if (ta.getElementType() != tb.getElementType())
    return {};
  if (!ta.hasRank() || !tb.hasRank() || ta.getRank() != tb.getRank())
    return UnrankedTensorType::get(ta.getElementType());
  SmallVector<int64_t> shape;
  for (auto [da, db] : llvm::zip(ta.getShape(), tb.getShape()))
    shape.push_back(da == db ? da : ShapedType::kDynamic);
  return RankedTensorType::get(shape, ta.getElementType());
}

Type generalizeShape(Type type) {
  if (auto seq = dyn_cast<SequenceType>(type))
    return SequenceType::get(type.getContext(),
                             generalizeShape(seq.getElementType()));
  if (auto opt = dyn_cast<OptionalType>(type))
    return OptionalType::get(type.getContext(),
                             generalizeShape(opt.getElementType()));
  if (auto tensor = dyn_cast<TensorType>(type))
    return UnrankedTensorType::get(tensor.getElementType());
  return type;
}

LogicalResult getConstantIntValues(Value value,
                                   SmallVectorImpl<int64_t> &values) {
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return failure();
  values.clear();
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return success();
}

LogicalResult inferUnaryElementwise(Operation *op,
                                    SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(op->getOperand(0).getType());
  auto result = cast<TensorType>(op->getResult(0).getType());
  if (!input.hasRank())
    types.push_back(withShape(result, std::nullopt));
  else
    types.push_back(withShape(result, input.getShape()));
  return success();
}

LogicalResult verifyUnaryElementwise(Operation *op) {
  if (failed(verifyCompatibleShape(op->getOperand(0).getType(),
                                   op->getResult(0).getType())))
    return op->emitOpError("result shape ")
           << op->getResult(0).getType() << " does not match operand shape "
           << op->getOperand(0).getType();
  return success();
}

/// Broadcasts the shapes of all operands of `op`. Returns failure when they
/// are incompatible, and std::nullopt inside success when any is unranked.
static FailureOr<std::optional<SmallVector<int64_t>>>
broadcastOperands(Operation *op) {
  SmallVector<int64_t> shape;
  for (Value operand : op->getOperands()) {
    auto type = cast<TensorType>(operand.getType());
    if (!type.hasRank())
      return std::optional<SmallVector<int64_t>>();
    auto next = broadcastShapes(shape, type.getShape());
    if (!next)
      return failure();
    shape = std::move(*next);
  }
  return std::optional<SmallVector<int64_t>>(shape);
}

LogicalResult inferBroadcastElementwise(Operation *op,
                                        SmallVectorImpl<Type> &types) {
  auto shape = broadcastOperands(op);
  if (failed(shape))
    return failure();
  Type result = op->getResult(0).getType();
  if (!*shape)
    types.push_back(withShape(result, std::nullopt));
  else
    types.push_back(withShape(result, ArrayRef<int64_t>(**shape)));
  return success();
}

LogicalResult verifyBroadcastElementwise(Operation *op) {
  auto shape = broadcastOperands(op);
  if (failed(shape)) {
    auto diag = op->emitOpError("operands are not broadcast-compatible:");
    for (Value operand : op->getOperands())
      diag << " " << operand.getType();
    return diag;
  }
  auto result = cast<TensorType>(op->getResult(0).getType());
  if (*shape && result.hasRank() &&
      failed(verifyCompatibleShape(**shape, result.getShape())))
    return op->emitOpError("result type ")
           << result << " does not match the broadcast shape of the operands";
  return success();
}

FailureOr<SmallVector<int64_t>> normalizeAxes(ArrayRef<int64_t> axes,
                                              int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    auto normalized = normalizeAxis(axis, rank);
    if (!normalized || llvm::is_contained(result, *normalized))
      return failure();
    result.push_back(*normalized);
  }
  return result;
}

LogicalResult inferReduction(Operation *op,
                             std::optional<ArrayRef<int64_t>> axes,
                             bool keepdims, bool noopWithEmptyAxes,
                             SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(op->getOperand(0).getType());
  Type result = op->getResult(0).getType();
  if (!input.hasRank()) {
    types.push_back(withShape(result, std::nullopt));
    return success();
  }
  int64_t rank = input.getRank();
  SmallVector<int64_t> reduced;
  if (axes && !axes->empty()) {
    auto normalized = normalizeAxes(*axes, rank);
    if (failed(normalized))
      return failure();
    reduced = *normalized;
  } else if (!noopWithEmptyAxes) {
    reduced = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!llvm::is_contained(reduced, i))
      shape.push_back(input.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  types.push_back(withShape(result, ArrayRef<int64_t>(shape)));
  return success();
}

LogicalResult verifyReduction(Operation *op,
                              std::optional<ArrayRef<int64_t>> axes) {
  auto input = cast<TensorType>(op->getOperand(0).getType());
  if (!input.hasRank() || !axes)
    return success();
  if (failed(normalizeAxes(*axes, input.getRank())))
    return op->emitOpError("axes [")
           << *axes << "] are out of range or repeated for an input of rank "
           << input.getRank();
  return success();
}

LogicalResult verifyInferredResultTypes(Operation *op) {
  SmallVector<Type> inferred;
  // A failed inference means inconsistent operands; the op's own verifier
  // names the problem.
  if (failed(cast<InferShapesOpInterface>(op).inferResultTypes(inferred)))
    return success();
  if (inferred.size() != op->getNumResults())
    return op->emitOpError("shape inference produced ")
           << inferred.size() << " types for " << op->getNumResults()
           << " results";
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(inferred, op->getResultTypes()))) {
    auto [expected, actual] = pair;
    if (!joinTypes(expected, actual))
      return op->emitOpError("result #")
             << index << " has type " << actual
             << ", incompatible with the inferred type " << expected;
  }
  return success();
}

} // namespace strata::graph

using namespace strata::graph;

#include "strata/Dialect/Graph/IR/GraphInterfaces.cpp.inc"
