//===- TensorOpsCommon.h - helpers of the tensor ops -------------*- C++
//-*-===//
//
// What the shape inference, verifiers and folders of the ops in TensorOps.td
// share (TensorOps.cpp, SliceOps.cpp, GatherOps.cpp): constant operands,
// types small enough to fold, index arithmetic and element remapping.
// Private to the dialect's IR library.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_DIALECT_GRAPH_IR_TENSOROPSCOMMON_H
#define STRATA_LIB_DIALECT_GRAPH_IR_TENSOROPSCOMMON_H

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

namespace strata::graph::tensor_ops {

using namespace mlir;

/// Largest tensor (in elements) that data-movement folders read or produce.
inline constexpr int64_t kFoldLimit = 1 << 16;

inline bool isDynamic(int64_t dim) { return ShapedType::isDynamic(dim); }

/// The constant integers of `value`, or std::nullopt when it is not constant.
inline std::optional<SmallVector<int64_t>> constantInts(Value value) {
  SmallVector<int64_t> values;
  if (!value || failed(getConstantIntValues(value, values)))
    return std::nullopt;
  return values;
}

/// The ranked type of `value`, or null when it is unranked.
inline RankedTensorType rankedType(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

/// `type` as a static-shaped tensor type small enough to fold into; null
/// otherwise.
inline RankedTensorType foldableType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape() ||
      ranked.getNumElements() > kFoldLimit)
    return {};
  return ranked;
}

/// `attr` as dense elements small enough to fold; null otherwise.
inline DenseElementsAttr foldableElements(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || (!dense.isSplat() && dense.getNumElements() > kFoldLimit))
    return {};
  return dense;
}

/// Product of `dims`; dynamic when any is.
inline int64_t product(ArrayRef<int64_t> dims) {
  int64_t result = 1;
  for (int64_t dim : dims) {
    if (isDynamic(dim))
      return kDynamic;
    result *= dim;
  }
  return result;
}

/// Converts the linear index `linear` into a multi-index of `shape`.
inline void delinearize(int64_t linear, ArrayRef<int64_t> shape,
                        SmallVectorImpl<int64_t> &index) {
  index.resize(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] == 0 ? 0 : linear % shape[d];
    linear = shape[d] == 0 ? 0 : linear / shape[d];
  }
}

/// Row-major linear index of `index` in `shape`.
inline int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (auto [i, dim] : llvm::zip(index, shape))
    linear = linear * dim + i;
  return linear;
}

/// Builds a constant of `resultType` whose element at each multi-index is
/// `source`'s element at the linear index `sourceIndex` returns (-1: the
/// index is out of bounds and folding gives up).
inline DenseElementsAttr
remapElements(DenseElementsAttr source, Type resultType,
              function_ref<int64_t(ArrayRef<int64_t>)> sourceIndex) {
  RankedTensorType type = foldableType(resultType);
  if (!source || !type || type.getElementType() != source.getElementType())
    return {};
  if (source.isSplat())
    return DenseElementsAttr::get(type, source.getSplatValue<Attribute>());
  SmallVector<Attribute> values(source.getValues<Attribute>());
  SmallVector<Attribute> result;
  result.reserve(type.getNumElements());
  SmallVector<int64_t> index;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    delinearize(i, type.getShape(), index);
    int64_t from = sourceIndex(index);
    if (from < 0 || from >= int64_t(values.size()))
      return {};
    result.push_back(values[from]);
  }
  return DenseElementsAttr::get(type, result);
}

/// Whether `op`'s result types agree with its shape inference. Folders run
/// before verification too (the importer folds what it creates), so the
/// data-movement folders check this before indexing by the result shape.
inline bool hasConsistentTypes(Operation *op) {
  SmallVector<Type> inferred;
  if (failed(cast<InferShapesOpInterface>(op).inferResultTypes(inferred)) ||
      inferred.size() != op->getNumResults())
    return false;
  return llvm::all_of(llvm::zip(inferred, op->getResultTypes()), [](auto pair) {
    return bool(joinTypes(std::get<0>(pair), std::get<1>(pair)));
  });
}

/// A fold of `attr` reinterpreted with the (static) result type: for ops that
/// only change the shape.
inline OpFoldResult reshapeConstant(Attribute attr, Type resultType) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!dense || !type || !type.hasStaticShape() ||
      type.getElementType() != dense.getElementType() ||
      type.getNumElements() != dense.getNumElements())
    return {};
  return dense.reshape(type);
}

/// Checks that `value` is a scalar: 0-D, or 1-D of one element (ONNX
/// exporters use both for scalar inputs).
inline bool isScalarLike(Value value) {
  auto type = rankedType(value);
  if (!type)
    return true;
  if (type.getRank() == 0)
    return true;
  return type.getRank() == 1 &&
         (isDynamic(type.getDimSize(0)) || type.getDimSize(0) == 1);
}

/// Checks that `value` is 1-D when ranked.
inline bool isVectorLike(Value value) {
  auto type = rankedType(value);
  return !type || type.getRank() == 1;
}

/// The static length of a 1-D operand, or std::nullopt (also for an absent
/// optional operand).
inline std::optional<int64_t> staticLength(Value value) {
  if (!value)
    return std::nullopt;
  auto type = rankedType(value);
  if (!type || type.getRank() != 1 || isDynamic(type.getDimSize(0)))
    return std::nullopt;
  return type.getDimSize(0);
}

inline LogicalResult verifySameElementType(Operation *op, Value input,
                                           Value output) {
  if (getElementTypeOrSelf(input) != getElementTypeOrSelf(output))
    return op->emitOpError("result element type ")
           << getElementTypeOrSelf(output) << " differs from the input's "
           << getElementTypeOrSelf(input);
  return success();
}

/// Pushes a type of `result`'s element type with `shape` (unranked when
/// std::nullopt).
inline void pushShape(SmallVectorImpl<Type> &types, Value result,
                      std::optional<ArrayRef<int64_t>> shape) {
  types.push_back(withShape(result.getType(), shape));
}

/// A rank-`rank` shape of dynamic dimensions.
inline SmallVector<int64_t> dynamicShape(int64_t rank) {
  return SmallVector<int64_t>(rank, kDynamic);
}

/// Scatters return data's shape.
inline void inferLikeData(Value data, Value output,
                          SmallVectorImpl<Type> &types) {
  auto type = rankedType(data);
  pushShape(types, output,
            type ? std::optional<ArrayRef<int64_t>>(type.getShape())
                 : std::nullopt);
}

/// The [start, end) range of dimensions Shape returns for a rank-`rank`
/// input (ONNX clamps both to [0, rank] after adding rank to negatives).
inline std::pair<int64_t, int64_t> shapeRange(ShapeOp op, int64_t rank) {
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(int64_t(op.getStart()));
  int64_t end = op.getEnd() ? clamp(int64_t(*op.getEnd())) : rank;
  return {start, std::max(start, end)};
}

/// `v` reshaped to `type` (a static shape, given as a constant operand).
inline Value reshapeTo(OpBuilder &b, Location loc, Value v,
                       RankedTensorType type) {
  auto shapeType = RankedTensorType::get({type.getRank()}, b.getI64Type());
  Value shape = ConstantOp::create(
      b, loc,
      cast<ElementsAttr>(DenseElementsAttr::get(shapeType, type.getShape())));
  return ReshapeOp::create(b, loc, type, v, shape);
}

/// Checks that at most one of an op's attribute and operand forms of a list
/// is present, and that the operand is 1-D.
inline LogicalResult verifyListForms(Operation *op, StringRef what,
                                     bool hasAttr, Value operand) {
  if (!operand)
    return success();
  if (hasAttr)
    return op->emitOpError("takes its ")
           << what << " either as the `" << what
           << "` attribute or as an operand, not both";
  if (!isVectorLike(operand))
    return op->emitOpError(what)
           << " operand must be 1-D, got " << operand.getType();
  return success();
}

/// Multiplies a dimension by `factor` (dynamic stays dynamic).
inline int64_t scaleDim(int64_t dim, int64_t factor) {
  int64_t result;
  // An overflowing size (a malformed model) is left unknown; the verifier
  // does not need to reject it.
  if (isDynamic(dim) || llvm::MulOverflow(dim, factor, result))
    return kDynamic;
  return result;
}

} // namespace strata::graph::tensor_ops

#endif // STRATA_LIB_DIALECT_GRAPH_IR_TENSOROPSCOMMON_H
