//===- TensorOps.cpp - shape and data-movement ops --------------*- C++ -*-===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata::graph;

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(getValue().getType());
  return success();
}

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("value type ")
           << getValue().getType() << " differs from the result type "
           << getType();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

/// Computes Reshape's output shape from the requested one: 0 copies the input
/// dimension (unless allowzero), -1 takes what is left. Dimensions that
/// depend on unknown input sizes are dynamic.
static FailureOr<SmallVector<int64_t>>
reshapeResultShape(TensorType input, ArrayRef<int64_t> requested,
                   bool allowZero) {
  SmallVector<int64_t> shape;
  int64_t inferIndex = -1;
  for (auto [i, dim] : llvm::enumerate(requested)) {
    if (dim == -1) {
      if (inferIndex >= 0)
        return failure();
      inferIndex = i;
      shape.push_back(kDynamic);
    } else if (dim == 0 && !allowZero) {
      if (!input.hasRank() || int64_t(i) >= input.getRank())
        return failure();
      shape.push_back(input.getDimSize(i));
    } else if (dim < 0) {
      return failure();
    } else {
      shape.push_back(dim);
    }
  }
  if (inferIndex >= 0 && input.hasStaticShape()) {
    int64_t known = 1;
    for (auto [i, dim] : llvm::enumerate(shape))
      if (int64_t(i) != inferIndex) {
        if (ShapedType::isDynamic(dim))
          return shape;
        known *= dim;
      }
    if (known == 0 || input.getNumElements() % known != 0)
      return failure();
    shape[inferIndex] = input.getNumElements() / known;
  }
  if (input.hasStaticShape() && llvm::none_of(shape, ShapedType::isDynamic)) {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    if (count != input.getNumElements())
      return failure();
  }
  return shape;
}

LogicalResult ReshapeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(getData().getType());
  SmallVector<int64_t> requested;
  if (failed(getConstantIntValues(getShape(), requested))) {
    auto shapeType = cast<TensorType>(getShape().getType());
    if (shapeType.hasStaticShape() && shapeType.getRank() == 1) {
      SmallVector<int64_t> dynamic(shapeType.getDimSize(0), kDynamic);
      types.push_back(withShape(getType(), ArrayRef<int64_t>(dynamic)));
    } else {
      types.push_back(withShape(getType(), std::nullopt));
    }
    return success();
  }
  auto shape = reshapeResultShape(input, requested, getAllowzero() != 0);
  if (failed(shape))
    return failure();
  types.push_back(withShape(getType(), ArrayRef<int64_t>(*shape)));
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto shapeType = cast<TensorType>(getShape().getType());
  if (shapeType.hasRank() && shapeType.getRank() != 1)
    return emitOpError("shape operand must be 1-D, got ") << shapeType;
  if (getElementTypeOrSelf(getData()) != getElementTypeOrSelf(getOutput()))
    return emitOpError("result element type differs from the input's");
  SmallVector<int64_t> requested;
  if (succeeded(getConstantIntValues(getShape(), requested)) &&
      failed(reshapeResultShape(cast<TensorType>(getData().getType()),
                                requested, getAllowzero() != 0)))
    return emitOpError("cannot reshape ")
           << getData().getType() << " to [" << requested << "]";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getData().getType() == getType() &&
      cast<TensorType>(getType()).hasStaticShape())
    return getData();
  if (auto elements = dyn_cast_or_null<DenseElementsAttr>(adaptor.getData()))
    if (auto type = dyn_cast<RankedTensorType>(getType());
        type && type.hasStaticShape())
      return elements.reshape(type);
  return {};
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

/// The permutation in effect: `perm` or the reversed axes.
static SmallVector<int64_t> effectivePerm(TransposeOp op, int64_t rank) {
  if (auto perm = op.getPerm())
    return llvm::to_vector(*perm);
  return llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank)));
}

static bool isPermutation(ArrayRef<int64_t> perm) {
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(perm.size()) || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

LogicalResult TransposeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(getInput().getType());
  if (!input.hasRank()) {
    types.push_back(withShape(getType(), std::nullopt));
    return success();
  }
  SmallVector<int64_t> perm = effectivePerm(*this, input.getRank());
  if (int64_t(perm.size()) != input.getRank() || !isPermutation(perm))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(input.getDimSize(p));
  types.push_back(withShape(getType(), ArrayRef<int64_t>(shape)));
  return success();
}

LogicalResult TransposeOp::verify() {
  auto input = cast<TensorType>(getInput().getType());
  if (getElementTypeOrSelf(getInput()) != getElementTypeOrSelf(getOutput()))
    return emitOpError("result element type differs from the input's");
  if (!input.hasRank() || !getPerm())
    return success();
  ArrayRef<int64_t> perm = *getPerm();
  if (int64_t(perm.size()) != input.getRank() || !isPermutation(perm))
    return emitOpError("perm [")
           << perm << "] is not a permutation of the " << input.getRank()
           << " input dimensions";
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  auto input = cast<TensorType>(getInput().getType());
  if (!input.hasRank() || getInput().getType() != getType())
    return {};
  SmallVector<int64_t> perm = effectivePerm(*this, input.getRank());
  for (auto [i, p] : llvm::enumerate(perm))
    if (int64_t(i) != p)
      return {};
  return getInput();
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  std::optional<SmallVector<int64_t>> shape;
  int64_t axis = 0;
  for (Value input : getInputs()) {
    auto type = cast<TensorType>(input.getType());
    if (!type.hasRank()) {
      types.push_back(withShape(getType(), std::nullopt));
      return success();
    }
    if (!shape) {
      auto normalized = normalizeAxis(getAxis(), type.getRank());
      if (!normalized)
        return failure();
      axis = *normalized;
      shape = llvm::to_vector(type.getShape());
      continue;
    }
    if (type.getRank() != int64_t(shape->size()))
      return failure();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t dim = type.getDimSize(d);
      int64_t &acc = (*shape)[d];
      if (d == axis) {
        acc = ShapedType::isDynamic(acc) || ShapedType::isDynamic(dim)
                  ? kDynamic
                  : acc + dim;
      } else if (ShapedType::isDynamic(acc)) {
        acc = dim;
      } else if (!ShapedType::isDynamic(dim) && dim != acc) {
        return failure();
      }
    }
  }
  if (!shape)
    return failure();
  types.push_back(withShape(getType(), ArrayRef<int64_t>(*shape)));
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  Type element = getElementTypeOrSelf(getOutput());
  int64_t rank = -1;
  for (Value input : getInputs()) {
    auto type = cast<TensorType>(input.getType());
    if (type.getElementType() != element)
      return emitOpError("input element type ")
             << type.getElementType() << " differs from the result's "
             << element;
    if (!type.hasRank())
      continue;
    if (rank >= 0 && type.getRank() != rank)
      return emitOpError("inputs have different ranks");
    rank = type.getRank();
  }
  if (rank >= 0 && !normalizeAxis(getAxis(), rank))
    return emitOpError("axis ") << getAxis() << " is out of range for rank "
                                << rank;
  SmallVector<Type> types;
  if (failed(inferResultTypes(types)))
    return emitOpError("inputs differ in a dimension other than axis ")
           << getAxis();
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  return {};
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto data = cast<TensorType>(getData().getType());
  auto indices = cast<TensorType>(getIndices().getType());
  if (!data.hasRank() || !indices.hasRank()) {
    types.push_back(withShape(getType(), std::nullopt));
    return success();
  }
  auto axis = normalizeAxis(getAxis(), data.getRank());
  if (!axis)
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  types.push_back(withShape(getType(), ArrayRef<int64_t>(shape)));
  return success();
}

LogicalResult GatherOp::verify() {
  auto data = cast<TensorType>(getData().getType());
  if (getElementTypeOrSelf(getData()) != getElementTypeOrSelf(getOutput()))
    return emitOpError("result element type differs from the data's");
  if (data.hasRank() && !normalizeAxis(getAxis(), data.getRank()))
    return emitOpError("axis ")
           << getAxis() << " is out of range for data of rank "
           << data.getRank();
  return success();
}
