//===- TensorOps.cpp - shape and data-movement ops --------------*- C++ -*-===//
//
// Shape inference, verifiers and folders of the ops in TensorOps.td. Shape
// inference returns as much as is known: ops whose result shape depends on
// an operand's values (Reshape's shape, Slice's starts) use them when they
// are constant and fall back to dynamic dimensions of a known rank, or to an
// unranked type, when they are not.
//
// The constant folders of data-movement ops (Gather, Concat, Slice, ...) are
// meant for the small shape computations that exporters emit (Shape ->
// Gather -> Unsqueeze -> Concat -> Reshape); they refuse tensors larger than
// kFoldLimit elements so that canonicalization never copies weights.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace strata::graph;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Largest tensor (in elements) that data-movement folders read or produce.
static constexpr int64_t kFoldLimit = 1 << 16;

static bool isDynamic(int64_t dim) { return ShapedType::isDynamic(dim); }

/// The constant integers of `value`, or std::nullopt when it is not constant.
static std::optional<SmallVector<int64_t>> constantInts(Value value) {
  SmallVector<int64_t> values;
  if (!value || failed(getConstantIntValues(value, values)))
    return std::nullopt;
  return values;
}

/// The ranked type of `value`, or null when it is unranked.
static RankedTensorType rankedType(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

/// `type` as a static-shaped tensor type small enough to fold into; null
/// otherwise.
static RankedTensorType foldableType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape() ||
      ranked.getNumElements() > kFoldLimit)
    return {};
  return ranked;
}

/// `attr` as dense elements small enough to fold; null otherwise.
static DenseElementsAttr foldableElements(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || (!dense.isSplat() && dense.getNumElements() > kFoldLimit))
    return {};
  return dense;
}

/// Product of `dims`; dynamic when any is.
static int64_t product(ArrayRef<int64_t> dims) {
  int64_t result = 1;
  for (int64_t dim : dims) {
    if (isDynamic(dim))
      return kDynamic;
    result *= dim;
  }
  return result;
}

/// Converts the linear index `linear` into a multi-index of `shape`.
static void delinearize(int64_t linear, ArrayRef<int64_t> shape,
                        SmallVectorImpl<int64_t> &index) {
  index.resize(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    index[d] = shape[d] == 0 ? 0 : linear % shape[d];
    linear = shape[d] == 0 ? 0 : linear / shape[d];
  }
}

/// Row-major linear index of `index` in `shape`.
static int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (auto [i, dim] : llvm::zip(index, shape))
    linear = linear * dim + i;
  return linear;
}

/// Builds a constant of `resultType` whose element at each multi-index is
/// `source`'s element at the linear index `sourceIndex` returns (-1: the
/// index is out of bounds and folding gives up).
static DenseElementsAttr
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
static bool hasConsistentTypes(Operation *op) {
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
static OpFoldResult reshapeConstant(Attribute attr, Type resultType) {
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
static bool isScalarLike(Value value) {
  auto type = rankedType(value);
  if (!type)
    return true;
  if (type.getRank() == 0)
    return true;
  return type.getRank() == 1 &&
         (isDynamic(type.getDimSize(0)) || type.getDimSize(0) == 1);
}

/// Checks that `value` is 1-D when ranked.
static bool isVectorLike(Value value) {
  auto type = rankedType(value);
  return !type || type.getRank() == 1;
}

/// The static length of a 1-D operand, or std::nullopt (also for an absent
/// optional operand).
static std::optional<int64_t> staticLength(Value value) {
  if (!value)
    return std::nullopt;
  auto type = rankedType(value);
  if (!type || type.getRank() != 1 || isDynamic(type.getDimSize(0)))
    return std::nullopt;
  return type.getDimSize(0);
}

static LogicalResult verifySameElementType(Operation *op, Value input,
                                           Value output) {
  if (getElementTypeOrSelf(input) != getElementTypeOrSelf(output))
    return op->emitOpError("result element type ")
           << getElementTypeOrSelf(output) << " differs from the input's "
           << getElementTypeOrSelf(input);
  return success();
}

/// Pushes a type of `result`'s element type with `shape` (unranked when
/// std::nullopt).
static void pushShape(SmallVectorImpl<Type> &types, Value result,
                      std::optional<ArrayRef<int64_t>> shape) {
  types.push_back(withShape(result.getType(), shape));
}

/// A rank-`rank` shape of dynamic dimensions.
static SmallVector<int64_t> dynamicShape(int64_t rank) {
  return SmallVector<int64_t>(rank, kDynamic);
}

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
// Shape, Size
//===----------------------------------------------------------------------===//

/// The [start, end) range of dimensions Shape returns for a rank-`rank`
/// input (ONNX clamps both to [0, rank] after adding rank to negatives).
static std::pair<int64_t, int64_t> shapeRange(ShapeOp op, int64_t rank) {
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(int64_t(op.getStart()));
  int64_t end = op.getEnd() ? clamp(int64_t(*op.getEnd())) : rank;
  return {start, std::max(start, end)};
}

LogicalResult ShapeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    pushShape(types, getOutput(), ArrayRef<int64_t>{kDynamic});
    return success();
  }
  auto [start, end] = shapeRange(*this, input.getRank());
  pushShape(types, getOutput(), ArrayRef<int64_t>{end - start});
  return success();
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto input = rankedType(getInput());
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!input || !type || !type.hasStaticShape())
    return {};
  auto [start, end] = shapeRange(*this, input.getRank());
  ArrayRef<int64_t> dims = input.getShape().slice(start, end - start);
  if (llvm::any_of(dims, isDynamic) ||
      type.getDimSize(0) != int64_t(dims.size()))
    return {};
  return DenseElementsAttr::get(type, dims);
}

LogicalResult SizeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  pushShape(types, getOutput(), ArrayRef<int64_t>{});
  return success();
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto input = rankedType(getInput());
  if (!input || !input.hasStaticShape())
    return {};
  return DenseElementsAttr::get(cast<ShapedType>(getType()),
                                input.getNumElements());
}

//===----------------------------------------------------------------------===//
// ConstantOfShape, Range, EyeLike
//===----------------------------------------------------------------------===//

LogicalResult
ConstantOfShapeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  Type element = getValue().getElementType();
  if (auto shape = constantInts(getShape())) {
    if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
      return failure();
    types.push_back(RankedTensorType::get(*shape, element));
  } else if (auto length = staticLength(getShape())) {
    types.push_back(RankedTensorType::get(dynamicShape(*length), element));
  } else {
    types.push_back(UnrankedTensorType::get(element));
  }
  return success();
}

LogicalResult ConstantOfShapeOp::verify() {
  if (getValue().getNumElements() != 1)
    return emitOpError("value must hold exactly one element, got ")
           << getValue().getType();
  if (!isVectorLike(getShape()))
    return emitOpError("shape operand must be 1-D, got ")
           << getShape().getType();
  if (auto shape = constantInts(getShape()))
    if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
      return emitOpError("shape [") << *shape << "] has a negative dimension";
  return success();
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  // A splat stores one value, so any size folds.
  auto type = dyn_cast<RankedTensorType>(getType());
  auto value = dyn_cast<DenseElementsAttr>(getValue());
  if (!type || !type.hasStaticShape() || !value ||
      value.getNumElements() != 1 ||
      value.getElementType() != type.getElementType())
    return {};
  return DenseElementsAttr::get(type, *value.getValues<Attribute>().begin());
}

/// Reads a constant scalar as a double (integers and floats).
static std::optional<double> constantScalar(Value value) {
  DenseElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)) ||
      attr.getNumElements() != 1)
    return std::nullopt;
  Attribute element = *attr.getValues<Attribute>().begin();
  if (auto i = dyn_cast<IntegerAttr>(element))
    return i.getType().isUnsignedInteger()
               ? double(i.getValue().getZExtValue())
               : double(i.getValue().getSExtValue());
  if (auto f = dyn_cast<FloatAttr>(element))
    return f.getValueAsDouble();
  return std::nullopt;
}

/// Range's element count: max(ceil((limit - start) / delta), 0).
static std::optional<int64_t> rangeCount(RangeOp op) {
  auto start = constantScalar(op.getStart());
  auto limit = constantScalar(op.getLimit());
  auto delta = constantScalar(op.getDelta());
  if (!start || !limit || !delta || *delta == 0)
    return std::nullopt;
  double count = std::ceil((*limit - *start) / *delta);
  if (!(count < double(int64_t(1) << 40)))
    return std::nullopt;
  return std::max<int64_t>(int64_t(count), 0);
}

LogicalResult RangeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  int64_t count = rangeCount(*this).value_or(kDynamic);
  pushShape(types, getOutput(), ArrayRef<int64_t>{count});
  return success();
}

LogicalResult RangeOp::verify() {
  Type element = getElementTypeOrSelf(getOutput());
  for (Value operand : getOperands()) {
    if (getElementTypeOrSelf(operand) != element)
      return emitOpError("operand element type ")
             << getElementTypeOrSelf(operand) << " differs from the result's "
             << element;
    if (!isScalarLike(operand))
      return emitOpError("start, limit and delta must be scalars, got ")
             << operand.getType();
  }
  if (auto delta = constantScalar(getDelta()); delta && *delta == 0)
    return emitOpError("delta must not be zero");
  return success();
}

OpFoldResult RangeOp::fold(FoldAdaptor) {
  auto type = foldableType(getType());
  auto count = rangeCount(*this);
  if (!type || !count || type.getDimSize(0) != *count)
    return {};
  double start = *constantScalar(getStart());
  double delta = *constantScalar(getDelta());
  Type element = type.getElementType();
  if (auto intType = dyn_cast<IntegerType>(element)) {
    // Integer ranges are computed in integers: doubles lose precision past
    // 2^53.
    SmallVector<APInt> values;
    int64_t s = int64_t(start), d = int64_t(delta);
    for (int64_t i = 0; i < *count; ++i)
      values.push_back(APInt(intType.getWidth(), uint64_t(s + i * d),
                             /*isSigned=*/true, /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, values);
  }
  auto floatType = dyn_cast<FloatType>(element);
  if (!floatType)
    return {};
  SmallVector<APFloat> values;
  for (int64_t i = 0; i < *count; ++i) {
    APFloat v(start + double(i) * delta);
    bool lost;
    v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &lost);
    values.push_back(v);
  }
  return DenseElementsAttr::get(type, values);
}

LogicalResult EyeLikeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  pushShape(types, getOutput(),
            input ? std::optional<ArrayRef<int64_t>>(input.getShape())
                  : std::optional<ArrayRef<int64_t>>(
                        ArrayRef<int64_t>{kDynamic, kDynamic}));
  return success();
}

LogicalResult EyeLikeOp::verify() {
  auto input = rankedType(getInput());
  if (input && input.getRank() != 2)
    return emitOpError("input must be 2-D, got ") << input;
  return success();
}

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
      if (!input.hasRank())
        shape.push_back(kDynamic);
      else if (int64_t(i) >= input.getRank())
        return failure();
      else
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
        if (isDynamic(dim))
          return shape;
        known *= dim;
      }
    if (known == 0 || input.getNumElements() % known != 0)
      return failure();
    shape[inferIndex] = input.getNumElements() / known;
  }
  if (input.hasStaticShape() && llvm::none_of(shape, isDynamic)) {
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
  auto requested = constantInts(getShape());
  if (!requested) {
    if (auto length = staticLength(getShape()))
      pushShape(types, getOutput(), ArrayRef<int64_t>(dynamicShape(*length)));
    else
      pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  auto shape = reshapeResultShape(input, *requested, getAllowzero() != 0);
  if (failed(shape))
    return failure();
  pushShape(types, getOutput(), ArrayRef<int64_t>(*shape));
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (!isVectorLike(getShape()))
    return emitOpError("shape operand must be 1-D, got ")
           << getShape().getType();
  if (failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  auto requested = constantInts(getShape());
  if (requested &&
      failed(reshapeResultShape(cast<TensorType>(getData().getType()),
                                *requested, getAllowzero() != 0)))
    return emitOpError("cannot reshape ")
           << getData().getType() << " to [" << *requested << "]";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getData().getType() == getType() &&
      cast<TensorType>(getType()).hasStaticShape())
    return getData();
  return reshapeConstant(adaptor.getData(), getType());
}

static bool isPermutation(ArrayRef<int64_t> perm);

/// `v` reshaped to `type` (a static shape, given as a constant operand).
static Value reshapeTo(OpBuilder &b, Location loc, Value v,
                       RankedTensorType type) {
  auto shapeType = RankedTensorType::get({type.getRank()}, b.getI64Type());
  Value shape = ConstantOp::create(
      b, loc,
      cast<ElementsAttr>(DenseElementsAttr::get(shapeType, type.getShape())));
  return ReshapeOp::create(b, loc, type, v, shape);
}

/// reshape(transpose(reshape(x))) as transpose(reshape(x)), the transpose
/// last: the inner reshape gives x trailing dimensions T after some leading
/// ones, the transpose permutes only T, and the outer reshape regroups only
/// the leading ones (its result ends in the permuted T). Each element keeps
/// its trailing index and its flattened leading one, so reshaping x straight
/// to the outer leading dimensions and T, then permuting T, is the same.
/// torch's exporters write a batched product's transposed operand so
/// (attention's K^T as [B*H, T, D] -> [B*H, D, T] -> [B, H, D, T], with
/// grouped-query attention's repeated heads merged into B*H): after the
/// rewrite K^T is one transpose of K (an identity reshape folds away), which
/// the attention matcher reads, and the repeat's merge a reshape of its own.
static LogicalResult transposeAfterReshapes(ReshapeOp op,
                                            PatternRewriter &rewriter) {
  auto transpose = op.getData().getDefiningOp<TransposeOp>();
  auto inner =
      transpose ? transpose.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
  if (!inner || !transpose->hasOneUse())
    return failure();
  auto x = rankedType(inner.getData());
  auto a = rankedType(inner.getOutput());
  auto b = rankedType(transpose.getOutput());
  auto c = rankedType(op.getOutput());
  if (!x || !a || !b || !c || !x.hasStaticShape() || !a.hasStaticShape() ||
      !b.hasStaticShape() || !c.hasStaticShape())
    return failure();
  SmallVector<int64_t> perm = transposePermutation(transpose, a.getRank());
  if (int64_t(perm.size()) != a.getRank() || !isPermutation(perm))
    return failure();
  // The transpose keeps a's first `kept` dimensions in place and permutes
  // the `tail` after them; c ends in the same permuted dimensions.
  int64_t kept = 0;
  while (kept < a.getRank() && perm[kept] == kept)
    ++kept;
  int64_t tail = a.getRank() - kept;
  int64_t lead = c.getRank() - tail;
  if (tail == 0 || lead < 0 ||
      c.getShape().drop_front(lead) != b.getShape().drop_front(kept))
    return failure();
  SmallVector<int64_t> grouped(c.getShape().take_front(lead));
  grouped.append(a.getShape().begin() + kept, a.getShape().end());
  auto groupedType = RankedTensorType::get(grouped, x.getElementType());
  Value source = inner.getData();
  if (groupedType != x)
    source = reshapeTo(rewriter, op.getLoc(), source, groupedType);
  SmallVector<int64_t> composed = llvm::to_vector(llvm::seq<int64_t>(0, lead));
  for (int64_t i = kept; i < a.getRank(); ++i)
    composed.push_back(lead + perm[i] - kept);
  rewriter.replaceOpWithNewOp<TransposeOp>(
      op, op.getType(), source, rewriter.getDenseI64ArrayAttr(composed));
  return success();
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add(transposeAfterReshapes);
}

//===----------------------------------------------------------------------===//
// Flatten, Squeeze, Unsqueeze
//===----------------------------------------------------------------------===//

LogicalResult FlattenOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    pushShape(types, getOutput(), ArrayRef<int64_t>{kDynamic, kDynamic});
    return success();
  }
  int64_t rank = input.getRank();
  int64_t axis =
      int64_t(getAxis()) < 0 ? int64_t(getAxis()) + rank : int64_t(getAxis());
  if (axis < 0 || axis > rank)
    return failure();
  pushShape(types, getOutput(),
            ArrayRef<int64_t>{product(input.getShape().take_front(axis)),
                              product(input.getShape().drop_front(axis))});
  return success();
}

LogicalResult FlattenOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  auto input = rankedType(getInput());
  if (input && (int64_t(getAxis()) < -input.getRank() ||
                int64_t(getAxis()) > input.getRank()))
    return emitOpError("axis ")
           << int64_t(getAxis()) << " is out of range for rank "
           << input.getRank();
  return success();
}

OpFoldResult FlattenOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return reshapeConstant(adaptor.getInput(), getType());
}

/// Squeeze's and Unsqueeze's axes when they are known at compile time: the
/// `axes` attribute, or a constant `dynamic_axes` operand.
template <typename Op>
static std::optional<SmallVector<int64_t>> knownAxes(Op op) {
  if (auto axes = op.getAxes())
    return llvm::to_vector(*axes);
  SmallVector<int64_t> values;
  if (Value dynamicAxes = op.getDynamicAxes();
      dynamicAxes && succeeded(getConstantIntValues(dynamicAxes, values)))
    return values;
  return std::nullopt;
}

/// Squeeze's result shape for `axes` (std::nullopt: every size-1 dimension);
/// std::nullopt (inside success) when it cannot be known: no axes and a
/// dynamic dimension that may or may not be 1.
static FailureOr<std::optional<SmallVector<int64_t>>>
squeezeShape(Value inputValue, std::optional<ArrayRef<int64_t>> axesList) {
  using Result = std::optional<SmallVector<int64_t>>;
  auto input = rankedType(inputValue);
  if (!input)
    return Result();
  SmallVector<int64_t> shape;
  if (!axesList) {
    for (int64_t dim : input.getShape()) {
      if (isDynamic(dim))
        return Result();
      if (dim != 1)
        shape.push_back(dim);
    }
    return Result(shape);
  }
  auto axes = normalizeAxes(*axesList, input.getRank());
  if (failed(axes))
    return failure();
  for (auto [i, dim] : llvm::enumerate(input.getShape())) {
    if (!llvm::is_contained(*axes, int64_t(i)))
      shape.push_back(dim);
    else if (!isDynamic(dim) && dim != 1)
      return failure();
  }
  return Result(shape);
}

/// Squeeze's result shape for axes computed at run time, of which only the
/// count may be known. A count of n leaves rank - n dimensions, and the
/// static dimensions other than 1 are certainly among them: when there are
/// exactly rank - n of those, they are the result.
static FailureOr<std::optional<SmallVector<int64_t>>>
dynamicSqueezeShape(Value inputValue, std::optional<int64_t> count) {
  using Result = std::optional<SmallVector<int64_t>>;
  auto input = rankedType(inputValue);
  if (!input || !count)
    return Result();
  int64_t rank = input.getRank();
  if (*count > rank)
    return failure();
  // An empty axes list removes nothing, as an empty `axes` attribute does.
  if (*count == 0)
    return Result(llvm::to_vector(input.getShape()));
  SmallVector<int64_t> kept;
  for (int64_t dim : input.getShape())
    if (!isDynamic(dim) && dim != 1)
      kept.push_back(dim);
  if (int64_t(kept.size()) > rank - *count)
    return failure();
  if (int64_t(kept.size()) == rank - *count)
    return Result(kept);
  return Result(dynamicShape(rank - *count));
}

/// Squeeze's result shape from whichever form its axes take.
static FailureOr<std::optional<SmallVector<int64_t>>>
squeezeShape(SqueezeOp op) {
  auto axes = knownAxes(op);
  if (axes)
    return squeezeShape(op.getInput(), ArrayRef<int64_t>(*axes));
  if (Value dynamicAxes = op.getDynamicAxes())
    return dynamicSqueezeShape(op.getInput(), staticLength(dynamicAxes));
  return squeezeShape(op.getInput(), std::nullopt);
}

/// Checks that at most one of an op's attribute and operand forms of a list
/// is present, and that the operand is 1-D.
static LogicalResult verifyListForms(Operation *op, StringRef what,
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

LogicalResult SqueezeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto shape = squeezeShape(*this);
  if (failed(shape))
    return failure();
  if (*shape)
    pushShape(types, getOutput(), ArrayRef<int64_t>(**shape));
  else
    pushShape(types, getOutput(), std::nullopt);
  return success();
}

LogicalResult SqueezeOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())) ||
      failed(verifyListForms(*this, "axes", bool(getAxes()), getDynamicAxes())))
    return failure();
  auto input = rankedType(getInput());
  if (!input)
    return success();
  if (auto axes = knownAxes(*this)) {
    if (failed(normalizeAxes(*axes, input.getRank())))
      return emitOpError("axes [")
             << ArrayRef<int64_t>(*axes)
             << "] are out of range or repeated for rank " << input.getRank();
  } else if (auto count = staticLength(getDynamicAxes());
             count && *count > input.getRank()) {
    return emitOpError("has ")
           << *count << " axes for an input of rank " << input.getRank();
  }
  if (failed(squeezeShape(*this)))
    return emitOpError("cannot squeeze a dimension other than 1 in ") << input;
  return success();
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() &&
      cast<TensorType>(getType()).hasStaticShape())
    return getInput();
  return reshapeConstant(adaptor.getInput(), getType());
}

LogicalResult UnsqueezeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  auto knownList = knownAxes(*this);
  if (!knownList) {
    // Axes computed at run time: the rank is known with their count, the
    // dimensions are not (which of them are the new 1s is unknown).
    Value dynamicAxes = getDynamicAxes();
    if (!dynamicAxes)
      return failure(); // Neither form: the verifier reports it.
    std::optional<int64_t> count = staticLength(dynamicAxes);
    if (!input || !count)
      pushShape(types, getOutput(), std::nullopt);
    else
      pushShape(types, getOutput(),
                ArrayRef<int64_t>(dynamicShape(input.getRank() + *count)));
    return success();
  }
  if (!input) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  int64_t rank = input.getRank() + int64_t(knownList->size());
  auto axes = normalizeAxes(*knownList, rank);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> rest = input.getShape();
  for (int64_t i = 0; i < rank; ++i) {
    if (llvm::is_contained(*axes, i)) {
      shape.push_back(1);
    } else {
      shape.push_back(rest.front());
      rest = rest.drop_front();
    }
  }
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult UnsqueezeOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())) ||
      failed(verifyListForms(*this, "axes", bool(getAxes()), getDynamicAxes())))
    return failure();
  if (!getAxes() && !getDynamicAxes())
    return emitOpError("needs axes, as the `axes` attribute or an operand");
  auto input = rankedType(getInput());
  auto axes = knownAxes(*this);
  if (!input || !axes)
    return success();
  int64_t rank = input.getRank() + int64_t(axes->size());
  if (failed(normalizeAxes(*axes, rank)))
    return emitOpError("axes [")
           << ArrayRef<int64_t>(*axes)
           << "] are out of range or repeated for result rank " << rank;
  return success();
}

void SqueezeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add(+[](SqueezeOp op, PatternRewriter &rewriter) {
    return moveConstantOperandToAttr(
        rewriter, op, op.getDynamicAxesMutable(), "axes",
        [&](ArrayRef<int64_t> v) { return i64ArrayAttr(op.getContext(), v); });
  });
}

void UnsqueezeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add(+[](UnsqueezeOp op, PatternRewriter &rewriter) {
    return moveConstantOperandToAttr(
        rewriter, op, op.getDynamicAxesMutable(), "axes",
        [&](ArrayRef<int64_t> v) { return i64ArrayAttr(op.getContext(), v); });
  });
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return reshapeConstant(adaptor.getInput(), getType());
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

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
  auto input = rankedType(getInput());
  if (!input) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  SmallVector<int64_t> perm = transposePermutation(*this, input.getRank());
  if (int64_t(perm.size()) != input.getRank() || !isPermutation(perm))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(input.getDimSize(p));
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult TransposeOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  auto input = rankedType(getInput());
  if (!input || !getPerm())
    return success();
  ArrayRef<int64_t> perm = *getPerm();
  if (int64_t(perm.size()) != input.getRank() || !isPermutation(perm))
    return emitOpError("perm [") << perm << "] is not a permutation of the "
                                 << input.getRank() << " input dimensions";
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  auto input = rankedType(getInput());
  if (!input)
    return {};
  SmallVector<int64_t> perm = transposePermutation(*this, input.getRank());
  if (getInput().getType() == getType() &&
      llvm::all_of(llvm::enumerate(perm), [](auto pair) {
        return int64_t(pair.index()) == pair.value();
      }))
    return getInput();
  if (!input.hasStaticShape() || !hasConsistentTypes(*this))
    return {};
  SmallVector<int64_t> source(perm.size());
  return remapElements(foldableElements(adaptor.getInput()), getType(),
                       [&](ArrayRef<int64_t> index) {
                         for (auto [i, p] : llvm::enumerate(perm))
                           source[p] = index[i];
                         return linearize(source, input.getShape());
                       });
}

/// A transpose that moves only dimensions of size 1 as a reshape: its
/// elements keep their order ([1, S, E] -> [S, 1, E], the batch-first
/// switch of a batch of one). A reshape is a view, a transpose a kernel.
static LogicalResult transposeOfUnitDims(TransposeOp op,
                                         PatternRewriter &rewriter) {
  auto input = rankedType(op.getInput());
  auto result = rankedType(op.getOutput());
  if (!input || !result || !input.hasStaticShape() || !result.hasStaticShape())
    return failure();
  SmallVector<int64_t> perm = transposePermutation(op, input.getRank());
  SmallVector<int64_t> moved;
  for (int64_t p : perm)
    if (input.getDimSize(p) != 1)
      moved.push_back(p);
  if (!llvm::is_sorted(moved))
    return failure();
  if (input == result) {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
  rewriter.replaceOp(op,
                     reshapeTo(rewriter, op.getLoc(), op.getInput(), result));
  return success();
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add(transposeOfUnitDims);
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

/// Bound on DepthToSpace/SpaceToDepth block sizes, so that blocksize^2
/// cannot overflow.
static constexpr int64_t kMaxBlocksize = 1 << 16;

/// Multiplies a dimension by `factor` (dynamic stays dynamic).
static int64_t scaleDim(int64_t dim, int64_t factor) {
  int64_t result;
  // An overflowing size (a malformed model) is left unknown; the verifier
  // does not need to reject it.
  if (isDynamic(dim) || llvm::MulOverflow(dim, factor, result))
    return kDynamic;
  return result;
}

/// Divides a dimension by `divisor`; fails when it does not divide.
static FailureOr<int64_t> divideDim(int64_t dim, int64_t divisor) {
  if (isDynamic(dim))
    return kDynamic;
  if (divisor <= 0 || dim % divisor != 0)
    return failure();
  return dim / divisor;
}

LogicalResult DepthToSpaceOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    pushShape(types, getOutput(), ArrayRef<int64_t>(dynamicShape(4)));
    return success();
  }
  int64_t b = int64_t(getBlocksize());
  if (input.getRank() != 4 || b <= 0 || b > kMaxBlocksize)
    return failure();
  auto channels = divideDim(input.getDimSize(1), b * b);
  if (failed(channels))
    return failure();
  pushShape(types, getOutput(),
            ArrayRef<int64_t>{input.getDimSize(0), *channels,
                              scaleDim(input.getDimSize(2), b),
                              scaleDim(input.getDimSize(3), b)});
  return success();
}

/// Shared checks of DepthToSpace and SpaceToDepth.
static LogicalResult verifyBlockOp(Operation *op, Value input, Value output,
                                   int64_t blocksize) {
  if (failed(verifySameElementType(op, input, output)))
    return failure();
  if (blocksize <= 0 || blocksize > kMaxBlocksize)
    return op->emitOpError("blocksize must be in [1, ")
           << kMaxBlocksize << "], got " << blocksize;
  auto type = rankedType(input);
  if (type && type.getRank() != 4)
    return op->emitOpError("input must be 4-D (NCHW), got ") << type;
  return success();
}

LogicalResult DepthToSpaceOp::verify() {
  if (failed(verifyBlockOp(*this, getInput(), getOutput(),
                           int64_t(getBlocksize()))))
    return failure();
  if (getMode() != "DCR" && getMode() != "CRD")
    return emitOpError("mode must be DCR or CRD, got '") << getMode() << "'";
  auto input = rankedType(getInput());
  if (input &&
      failed(divideDim(input.getDimSize(1),
                       int64_t(getBlocksize()) * int64_t(getBlocksize()))))
    return emitOpError("channels ")
           << input.getDimSize(1) << " are not divisible by blocksize^2 = "
           << int64_t(getBlocksize()) * int64_t(getBlocksize());
  return success();
}

LogicalResult SpaceToDepthOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    pushShape(types, getOutput(), ArrayRef<int64_t>(dynamicShape(4)));
    return success();
  }
  int64_t b = int64_t(getBlocksize());
  if (input.getRank() != 4 || b <= 0 || b > kMaxBlocksize)
    return failure();
  auto height = divideDim(input.getDimSize(2), b);
  auto width = divideDim(input.getDimSize(3), b);
  if (failed(height) || failed(width))
    return failure();
  pushShape(types, getOutput(),
            ArrayRef<int64_t>{input.getDimSize(0),
                              scaleDim(input.getDimSize(1), b * b), *height,
                              *width});
  return success();
}

LogicalResult SpaceToDepthOp::verify() {
  if (failed(verifyBlockOp(*this, getInput(), getOutput(),
                           int64_t(getBlocksize()))))
    return failure();
  auto input = rankedType(getInput());
  if (input &&
      (failed(divideDim(input.getDimSize(2), int64_t(getBlocksize()))) ||
       failed(divideDim(input.getDimSize(3), int64_t(getBlocksize())))))
    return emitOpError("spatial dimensions of ")
           << input << " are not divisible by blocksize "
           << int64_t(getBlocksize());
  return success();
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  std::optional<SmallVector<int64_t>> shape;
  int64_t axis = 0;
  for (Value input : getInputs()) {
    auto type = rankedType(input);
    if (!type) {
      pushShape(types, getOutput(), std::nullopt);
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
        acc = isDynamic(acc) || isDynamic(dim) ? kDynamic : acc + dim;
      } else if (isDynamic(acc)) {
        acc = dim;
      } else if (!isDynamic(dim) && dim != acc) {
        return failure();
      }
    }
  }
  if (!shape)
    return failure();
  pushShape(types, getOutput(), ArrayRef<int64_t>(*shape));
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
    return emitOpError("axis ")
           << int64_t(getAxis()) << " is out of range for rank " << rank;
  SmallVector<Type> types;
  if (failed(inferResultTypes(types)))
    return emitOpError("inputs differ in a dimension other than axis ")
           << int64_t(getAxis());
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  // Concatenation of constants (the shape lists exporters assemble).
  auto type = foldableType(getType());
  if (!type)
    return {};
  auto normalized = normalizeAxis(getAxis(), type.getRank());
  if (!normalized || !hasConsistentTypes(*this))
    return {};
  int64_t axis = *normalized;
  SmallVector<SmallVector<Attribute>> values;
  SmallVector<RankedTensorType> inputTypes;
  for (auto [input, attr] : llvm::zip(getInputs(), adaptor.getInputs())) {
    auto dense = foldableElements(attr);
    auto inputType = rankedType(input);
    if (!dense || !inputType || !inputType.hasStaticShape() ||
        dense.getType() != inputType)
      return {};
    values.push_back(
        dense.isSplat()
            ? SmallVector<Attribute>(dense.getNumElements(),
                                     dense.getSplatValue<Attribute>())
            : SmallVector<Attribute>(dense.getValues<Attribute>()));
    inputTypes.push_back(inputType);
  }
  SmallVector<Attribute> result;
  SmallVector<int64_t> index, local;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    delinearize(i, type.getShape(), index);
    local.assign(index.begin(), index.end());
    for (auto [inputType, inputValues] : llvm::zip(inputTypes, values)) {
      int64_t size = inputType.getDimSize(axis);
      if (local[axis] < size) {
        result.push_back(inputValues[linearize(local, inputType.getShape())]);
        break;
      }
      local[axis] -= size;
    }
  }
  if (int64_t(result.size()) != type.getNumElements())
    return {};
  return DenseElementsAttr::get(type, result);
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

namespace {
/// One axis of a resolved slice: the first index, the step and the count.
struct SliceDim {
  int64_t start = 0, step = 1, count = kDynamic;
};
} // namespace

/// Resolves ONNX Slice's (start, end, step) on a dimension of size `dim`:
/// negative indices count from the end, then both are clamped (to
/// [0, dim] for positive steps, [-1, dim - 1] for negative ones).
static SliceDim resolveSlice(int64_t start, int64_t end, int64_t step,
                             int64_t dim) {
  SliceDim result;
  result.step = step;
  // -step must not overflow; no dimension is that large anyway.
  if (isDynamic(dim) || step == std::numeric_limits<int64_t>::min())
    return result;
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    result.count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    result.count = start > end ? (start - end - step - 1) / -step : 0;
  }
  result.start = start;
  return result;
}

/// Resolves a Slice against its data shape: one entry per data axis (the
/// untouched ones take the whole dimension). std::nullopt inside success
/// when the sliced axes are not known (non-constant axes, or starts of
/// unknown length); failure on inconsistent constant operands.
static FailureOr<std::optional<SmallVector<SliceDim>>>
resolveSliceOp(SliceOp op, ArrayRef<int64_t> shape) {
  using Result = std::optional<SmallVector<SliceDim>>;
  int64_t rank = shape.size();
  auto starts = constantInts(op.getStarts());
  auto ends = constantInts(op.getEnds());
  auto steps = op.getSteps() ? constantInts(op.getSteps()) : std::nullopt;
  std::optional<int64_t> count = starts ? std::optional<int64_t>(starts->size())
                                        : staticLength(op.getStarts());
  if (!count)
    count = ends ? std::optional<int64_t>(ends->size())
                 : staticLength(op.getEnds());
  SmallVector<int64_t> axes;
  if (op.getAxes()) {
    auto values = constantInts(op.getAxes());
    if (!values)
      return Result();
    axes = *values;
  } else {
    if (!count)
      return Result();
    axes = llvm::to_vector(llvm::seq<int64_t>(0, *count));
  }
  if (count && int64_t(axes.size()) != *count)
    return failure();
  if ((starts && starts->size() != axes.size()) ||
      (ends && ends->size() != axes.size()) ||
      (steps && steps->size() != axes.size()))
    return failure();
  auto normalized = normalizeAxes(axes, rank);
  if (failed(normalized))
    return failure();
  SmallVector<SliceDim> dims;
  for (int64_t dim : shape)
    dims.push_back({0, 1, dim});
  for (auto [i, axis] : llvm::enumerate(*normalized)) {
    int64_t step = op.getSteps() ? (steps ? (*steps)[i] : 0) : 1;
    if (steps && step == 0)
      return failure();
    if (!starts || !ends || step == 0) {
      dims[axis] = SliceDim();
      continue;
    }
    dims[axis] = resolveSlice((*starts)[i], (*ends)[i], step, shape[axis]);
  }
  return Result(dims);
}

LogicalResult SliceOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto data = rankedType(getData());
  if (!data) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  auto dims = resolveSliceOp(*this, data.getShape());
  if (failed(dims))
    return failure();
  if (!*dims) {
    pushShape(types, getOutput(),
              ArrayRef<int64_t>(dynamicShape(data.getRank())));
    return success();
  }
  SmallVector<int64_t> shape;
  for (const SliceDim &dim : **dims)
    shape.push_back(dim.count);
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult SliceOp::verify() {
  if (failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  for (Value operand : {getStarts(), getEnds(), getAxes(), getSteps()})
    if (operand && !isVectorLike(operand))
      return emitOpError("starts, ends, axes and steps must be 1-D, got ")
             << operand.getType();
  SmallVector<int64_t> lengths;
  for (Value operand : {getStarts(), getEnds(), getAxes(), getSteps()})
    if (operand)
      if (auto length = staticLength(operand))
        lengths.push_back(*length);
  if (!llvm::all_equal(lengths))
    return emitOpError("starts, ends, axes and steps differ in length");
  if (auto steps = constantInts(getSteps()))
    if (llvm::is_contained(*steps, 0))
      return emitOpError("steps must not be zero");
  auto data = rankedType(getData());
  if (data && failed(resolveSliceOp(*this, data.getShape())))
    return emitOpError("axes are out of range or repeated for rank ")
           << data.getRank();
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  auto data = rankedType(getData());
  if (!data || !data.hasStaticShape())
    return {};
  auto resolved = resolveSliceOp(*this, data.getShape());
  if (failed(resolved) || !*resolved || !hasConsistentTypes(*this))
    return {};
  ArrayRef<SliceDim> dims = **resolved;
  if (llvm::any_of(dims, [](const SliceDim &d) { return isDynamic(d.count); }))
    return {};
  bool identity = llvm::all_of(llvm::enumerate(dims), [&](auto pair) {
    const SliceDim &d = pair.value();
    return d.count == data.getDimSize(pair.index()) &&
           (d.count <= 1 || (d.start == 0 && d.step == 1));
  });
  if (identity && getData().getType() == getType())
    return getData();
  SmallVector<int64_t> source(dims.size());
  return remapElements(foldableElements(adaptor.getData()), getType(),
                       [&](ArrayRef<int64_t> index) {
                         for (auto [i, d] : llvm::enumerate(dims))
                           source[i] = d.start + index[i] * d.step;
                         return linearize(source, data.getShape());
                       });
}

/// Slice(Slice(x)) as one Slice of x, when both resolve to constant starts,
/// steps and counts on a static x: Swin's patch merging takes every second
/// row, then every second column, as two slices (x[:, 0::2, 0::2, :]), and
/// the partitioner and the kernels then see one strided read. The
/// composition on each axis reads x at s1 + st1 * (s2 + st2 * i).
static LogicalResult composeSlices(SliceOp op, PatternRewriter &rewriter) {
  auto inner = op.getData().getDefiningOp<SliceOp>();
  if (!inner)
    return failure();
  auto x = rankedType(inner.getData());
  auto middle = rankedType(op.getData());
  auto result = rankedType(op.getOutput());
  if (!x || !middle || !result || !x.hasStaticShape() ||
      !middle.hasStaticShape() || !result.hasStaticShape())
    return failure();
  auto first = resolveSliceOp(inner, x.getShape());
  auto second = resolveSliceOp(op, middle.getShape());
  if (failed(first) || failed(second) || !*first || !*second)
    return failure();
  SmallVector<int64_t> axes, starts, ends, steps;
  for (int64_t axis = 0; axis < x.getRank(); ++axis) {
    const SliceDim &a = (**first)[axis], &b = (**second)[axis];
    if (isDynamic(a.count) || isDynamic(b.count) || b.count == 0 ||
        b.count != result.getDimSize(axis))
      return failure();
    int64_t start = a.start + a.step * b.start, step = a.step * b.step;
    if (b.count == x.getDimSize(axis) && start == 0 && step == 1)
      continue;
    // One past the last element read, in the step's direction; a negative
    // end below -dim reads down to index 0 (ONNX adds dim once, then
    // clamps to -1).
    int64_t last = start + (b.count - 1) * step;
    int64_t end = step > 0   ? last + 1
                  : last > 0 ? last - 1
                             : std::numeric_limits<int64_t>::min();
    axes.push_back(axis);
    starts.push_back(start);
    ends.push_back(end);
    steps.push_back(step);
  }
  Location loc = op.getLoc();
  auto list = [&](ArrayRef<int64_t> values) -> Value {
    auto type =
        RankedTensorType::get({int64_t(values.size())}, rewriter.getI64Type());
    return ConstantOp::create(
        rewriter, loc,
        cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
  };
  if (axes.empty()) {
    if (inner.getData().getType() != op.getType())
      return failure();
    rewriter.replaceOp(op, inner.getData());
    return success();
  }
  rewriter.replaceOpWithNewOp<SliceOp>(op, op.getType(), inner.getData(),
                                       list(starts), list(ends), list(axes),
                                       list(steps));
  return success();
}

void SliceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add(composeSlices);
}

//===----------------------------------------------------------------------===//
// Split
//===----------------------------------------------------------------------===//

/// Checks explicit split `sizes` against the number of results and the
/// split dimension `dim`.
static FailureOr<SmallVector<int64_t>>
checkSplitSizes(ArrayRef<int64_t> sizes, int64_t parts, int64_t dim) {
  if (int64_t(sizes.size()) != parts ||
      llvm::any_of(sizes, [](int64_t s) { return s < 0; }))
    return failure();
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s;
  if (!isDynamic(dim) && total != dim)
    return failure();
  return llvm::to_vector(sizes);
}

/// The size of each result along the axis; dynamic entries when unknown.
static FailureOr<SmallVector<int64_t>> splitSizes(SplitOp op, int64_t dim) {
  int64_t parts = op.getNumResults();
  if (auto split = op.getSplit())
    return checkSplitSizes(*split, parts, dim);
  if (Value dynamicSplit = op.getDynamicSplit()) {
    SmallVector<int64_t> sizes;
    if (succeeded(getConstantIntValues(dynamicSplit, sizes)))
      return checkSplitSizes(sizes, parts, dim);
    // Sizes computed at run time: only their count can be checked.
    if (auto count = staticLength(dynamicSplit); count && *count != parts)
      return failure();
    return SmallVector<int64_t>(parts, kDynamic);
  }
  if (isDynamic(dim) || parts == 0)
    return SmallVector<int64_t>(parts, kDynamic);
  int64_t chunk = (dim + parts - 1) / parts;
  if (chunk * (parts - 1) > dim)
    return failure();
  SmallVector<int64_t> sizes(parts, chunk);
  sizes.back() = dim - chunk * (parts - 1);
  return sizes;
}

LogicalResult SplitOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    for (Value result : getOutputs())
      pushShape(types, result, std::nullopt);
    return success();
  }
  auto axis = normalizeAxis(getAxis(), input.getRank());
  if (!axis)
    return failure();
  auto sizes = splitSizes(*this, input.getDimSize(*axis));
  if (failed(sizes))
    return failure();
  for (auto [result, size] : llvm::zip(getOutputs(), *sizes)) {
    SmallVector<int64_t> shape(input.getShape());
    shape[*axis] = size;
    pushShape(types, result, ArrayRef<int64_t>(shape));
  }
  return success();
}

LogicalResult SplitOp::verify() {
  if (getOutputs().empty())
    return emitOpError("needs at least one result");
  for (Value result : getOutputs())
    if (failed(verifySameElementType(*this, getInput(), result)))
      return failure();
  Value dynamicSplit = getDynamicSplit();
  if (failed(verifyListForms(*this, "split", bool(getSplit()), dynamicSplit)))
    return failure();
  std::optional<SmallVector<int64_t>> split;
  if (auto attr = getSplit())
    split = llvm::to_vector(*attr);
  else if (SmallVector<int64_t> sizes;
           dynamicSplit && succeeded(getConstantIntValues(dynamicSplit, sizes)))
    split = sizes;
  else if (auto count = staticLength(dynamicSplit);
           count && *count != getNumResults())
    return emitOpError("split operand has ")
           << *count << " sizes for " << getNumResults() << " results";
  if (split) {
    if (split->size() != getNumResults())
      return emitOpError("split has ")
             << split->size() << " sizes for " << getNumResults() << " results";
    if (llvm::any_of(*split, [](int64_t s) { return s < 0; }))
      return emitOpError("split sizes must not be negative");
  }
  auto input = rankedType(getInput());
  if (!input)
    return success();
  auto axis = normalizeAxis(getAxis(), input.getRank());
  if (!axis)
    return emitOpError("axis ")
           << int64_t(getAxis()) << " is out of range for rank "
           << input.getRank();
  if (failed(splitSizes(*this, input.getDimSize(*axis))))
    return emitOpError("cannot split dimension ")
           << input.getDimSize(*axis) << " into " << getNumResults() << " parts"
           << (split ? " of the given sizes" : "");
  return success();
}

void SplitOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add(+[](SplitOp op, PatternRewriter &rewriter) {
    return moveConstantOperandToAttr(
        rewriter, op, op.getDynamicSplitMutable(), "split",
        [&](ArrayRef<int64_t> v) { return i64ArrayAttr(op.getContext(), v); });
  });
}

LogicalResult SplitOp::fold(FoldAdaptor adaptor,
                            SmallVectorImpl<OpFoldResult> &results) {
  auto input = rankedType(getInput());
  if (!input || !input.hasStaticShape())
    return failure();
  if (getNumResults() == 1 && getInput().getType() == getResult(0).getType()) {
    results.push_back(getInput());
    return success();
  }
  auto dense = foldableElements(adaptor.getInput());
  if (!dense)
    return failure();
  if (!hasConsistentTypes(*this))
    return failure();
  int64_t axis = *normalizeAxis(getAxis(), input.getRank());
  auto sizes = splitSizes(*this, input.getDimSize(axis));
  // Sizes computed at run time leave nothing to fold.
  if (failed(sizes) || llvm::any_of(*sizes, isDynamic))
    return failure();
  int64_t offset = 0;
  SmallVector<int64_t> source;
  for (auto [result, size] : llvm::zip(getOutputs(), *sizes)) {
    auto folded =
        remapElements(dense, result.getType(), [&](ArrayRef<int64_t> index) {
          source.assign(index.begin(), index.end());
          source[axis] += offset;
          return linearize(source, input.getShape());
        });
    if (!folded)
      return results.clear(), failure();
    results.push_back(folded);
    offset += size;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Expand, Tile
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    // The input's rank, and so the result's, is unknown.
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  if (auto shape = constantInts(getShape())) {
    if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
      return failure();
    auto result = broadcastShapes(input.getShape(), *shape);
    if (!result)
      return failure();
    pushShape(types, getOutput(), ArrayRef<int64_t>(*result));
    return success();
  }
  auto length = staticLength(getShape());
  if (!length) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  // Without the values: a static input dimension other than 1 survives
  // (the requested one must be 1 or equal); everything else is unknown.
  int64_t rank = std::max<int64_t>(input.getRank(), *length);
  SmallVector<int64_t> shape = dynamicShape(rank);
  for (auto [i, dim] : llvm::enumerate(input.getShape()))
    if (!isDynamic(dim) && dim != 1)
      shape[rank - input.getRank() + i] = dim;
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult ExpandOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  if (!isVectorLike(getShape()))
    return emitOpError("shape operand must be 1-D, got ")
           << getShape().getType();
  auto input = rankedType(getInput());
  auto shape = constantInts(getShape());
  if (shape && llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return emitOpError("shape [") << *shape << "] has a negative dimension";
  if (input && shape && !broadcastShapes(input.getShape(), *shape))
    return emitOpError("cannot broadcast ")
           << input << " to [" << *shape << "]";
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || !type.hasStaticShape())
    return {};
  if (getInput().getType() == getType())
    return getInput();
  // Broadcasting a splat is a splat of any size.
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
      dense && dense.isSplat() &&
      dense.getElementType() == type.getElementType())
    return DenseElementsAttr::get(type, dense.getSplatValue<Attribute>());
  // Any other small constant, by numpy's rules (shapes aligned at the
  // right, a dimension of 1 read at 0): exporters build index tensors so
  // (Swin's attention masks: ScatterND indices from Expand of a Range).
  auto input = rankedType(getInput());
  if (!input || !input.hasStaticShape() || input.getRank() > type.getRank())
    return {};
  int64_t lead = type.getRank() - input.getRank();
  SmallVector<int64_t> source(input.getRank());
  return remapElements(
      foldableElements(adaptor.getInput()), type, [&](ArrayRef<int64_t> index) {
        for (int64_t i = 0; i < input.getRank(); ++i)
          source[i] = input.getDimSize(i) == 1 ? 0 : index[lead + i];
        return linearize(source, input.getShape());
      });
}

LogicalResult TileOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  SmallVector<int64_t> shape = dynamicShape(input.getRank());
  if (auto repeats = constantInts(getRepeats())) {
    if (int64_t(repeats->size()) != input.getRank() ||
        llvm::any_of(*repeats, [](int64_t r) { return r < 0; }))
      return failure();
    for (auto [i, dim] : llvm::enumerate(input.getShape()))
      shape[i] = scaleDim(dim, (*repeats)[i]);
  }
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult TileOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  if (!isVectorLike(getRepeats()))
    return emitOpError("repeats must be 1-D, got ") << getRepeats().getType();
  auto input = rankedType(getInput());
  auto length = staticLength(getRepeats());
  if (input && length && *length != input.getRank())
    return emitOpError("repeats has ")
           << *length << " entries for an input of rank " << input.getRank();
  if (auto repeats = constantInts(getRepeats()))
    if (llvm::any_of(*repeats, [](int64_t r) { return r < 0; }))
      return emitOpError("repeats must not be negative");
  return success();
}

//===----------------------------------------------------------------------===//
// Pad, Trilu, ReverseSequence
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto data = rankedType(getData());
  if (!data) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  int64_t rank = data.getRank();
  SmallVector<int64_t> shape = dynamicShape(rank);
  if (auto pads = constantInts(getPads())) {
    if (int64_t(pads->size()) != 2 * rank)
      return failure();
    for (int64_t i = 0; i < rank; ++i) {
      int64_t dim = data.getDimSize(i);
      if (isDynamic(dim))
        continue;
      if (llvm::AddOverflow(dim, (*pads)[i], shape[i]) ||
          llvm::AddOverflow(shape[i], (*pads)[rank + i], shape[i]))
        shape[i] = kDynamic;
      else if (shape[i] < 0)
        return failure();
    }
  }
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  auto pads = constantInts(getPads());
  if (!pads || getData().getType() != getType() ||
      llvm::any_of(*pads, [](int64_t pad) { return pad != 0; }))
    return {};
  return getData();
}

LogicalResult PadOp::verify() {
  if (failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  if (getMode() != "constant" && getMode() != "reflect" && getMode() != "edge")
    return emitOpError("mode must be constant, reflect or edge, got '")
           << getMode() << "'";
  if (!isVectorLike(getPads()))
    return emitOpError("pads must be 1-D, got ") << getPads().getType();
  if (Value value = getConstantValue()) {
    if (!isScalarLike(value))
      return emitOpError("constant_value must be a scalar, got ")
             << value.getType();
    if (getElementTypeOrSelf(value) != getElementTypeOrSelf(getData()))
      return emitOpError("constant_value element type differs from the "
                         "data's");
  }
  auto data = rankedType(getData());
  auto length = staticLength(getPads());
  if (data && length && *length != 2 * data.getRank())
    return emitOpError("pads has ")
           << *length << " entries; an input of rank " << data.getRank()
           << " needs " << 2 * data.getRank();
  SmallVector<Type> types;
  if (data && failed(inferResultTypes(types)))
    return emitOpError("pads crop a dimension below zero");
  return success();
}

LogicalResult TriluOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  pushShape(types, getOutput(),
            input ? std::optional<ArrayRef<int64_t>>(input.getShape())
                  : std::nullopt);
  return success();
}

LogicalResult TriluOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  auto input = rankedType(getInput());
  if (input && input.getRank() < 2)
    return emitOpError("input must have rank >= 2, got ") << input;
  if (getK() && !isScalarLike(getK()))
    return emitOpError("k must be a scalar, got ") << getK().getType();
  return success();
}

LogicalResult
ReverseSequenceOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  pushShape(types, getOutput(),
            input ? std::optional<ArrayRef<int64_t>>(input.getShape())
                  : std::nullopt);
  return success();
}

LogicalResult ReverseSequenceOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  int64_t batch = int64_t(getBatchAxis()), time = int64_t(getTimeAxis());
  if ((batch != 0 && batch != 1) || (time != 0 && time != 1) || batch == time)
    return emitOpError("batch_axis and time_axis must be 0 and 1 in some "
                       "order, got ")
           << batch << " and " << time;
  auto input = rankedType(getInput());
  if (input && input.getRank() < 2)
    return emitOpError("input must have rank >= 2, got ") << input;
  if (!isVectorLike(getSequenceLens()))
    return emitOpError("sequence_lens must be 1-D");
  auto length = staticLength(getSequenceLens());
  if (input && length && !isDynamic(input.getDimSize(batch)) &&
      *length != input.getDimSize(batch))
    return emitOpError("sequence_lens has ")
           << *length << " entries for a batch of " << input.getDimSize(batch);
  return success();
}

//===----------------------------------------------------------------------===//
// Gather, GatherElements, GatherND
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto data = rankedType(getData());
  auto indices = rankedType(getIndices());
  if (!data || !indices) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  auto axis = normalizeAxis(getAxis(), data.getRank());
  if (!axis)
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult GatherOp::verify() {
  if (failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  auto data = rankedType(getData());
  if (data && !normalizeAxis(getAxis(), data.getRank()))
    return emitOpError("axis ")
           << int64_t(getAxis()) << " is out of range for data of rank "
           << data.getRank();
  auto indices = constantInts(getIndices());
  if (!data || !indices)
    return success();
  int64_t dim = data.getDimSize(*normalizeAxis(getAxis(), data.getRank()));
  if (!isDynamic(dim)) {
    for (int64_t index : *indices)
      if (index < -dim || index >= dim)
        return emitOpError("index ") << index << " is out of range for "
                                     << "dimension " << dim;
  }
  return success();
}

/// Gather(Shape(x), indices) where every dimension it picks is static, even
/// though others of x are not: torchvision's MultiScaleRoIAlign checks
/// `x.shape[1] == 1` on a [?, 1] tensor before squeezing it.
static OpFoldResult foldGatherOfShape(GatherOp op) {
  auto shape = op.getData().getDefiningOp<ShapeOp>();
  auto type = dyn_cast<RankedTensorType>(op.getType());
  auto indices = constantInts(op.getIndices());
  if (!shape || !type || !type.hasStaticShape() || !indices)
    return {};
  auto input = rankedType(shape.getInput());
  if (!input)
    return {};
  auto [start, end] = shapeRange(shape, input.getRank());
  SmallVector<int64_t> dims;
  for (int64_t index : *indices) {
    int64_t count = end - start;
    if (index < -count || index >= count)
      return {};
    int64_t dim = input.getDimSize(start + (index < 0 ? index + count : index));
    if (isDynamic(dim))
      return {};
    dims.push_back(dim);
  }
  if (type.getNumElements() != static_cast<int64_t>(dims.size()) ||
      !type.getElementType().isInteger(64))
    return {};
  return DenseElementsAttr::get(type, ArrayRef<int64_t>(dims));
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult folded = foldGatherOfShape(*this))
    return folded;
  auto data = rankedType(getData());
  auto indicesType = rankedType(getIndices());
  auto indices = constantInts(getIndices());
  if (!data || !data.hasStaticShape() || !indicesType || !indices)
    return {};
  if (!hasConsistentTypes(*this))
    return {};
  int64_t axis = *normalizeAxis(getAxis(), data.getRank());
  int64_t dim = data.getDimSize(axis);
  int64_t indexRank = indicesType.getRank();
  SmallVector<int64_t> source(data.getRank());
  return remapElements(
      foldableElements(adaptor.getData()), getType(),
      [&](ArrayRef<int64_t> index) -> int64_t {
        // index = data prefix, indices index, data suffix.
        ArrayRef<int64_t> position = index.slice(axis, indexRank);
        int64_t which = (*indices)[linearize(position, indicesType.getShape())];
        if (which < -dim || which >= dim)
          return -1;
        for (int64_t d = 0; d < axis; ++d)
          source[d] = index[d];
        source[axis] = which < 0 ? which + dim : which;
        for (int64_t d = axis + 1; d < data.getRank(); ++d)
          source[d] = index[d - 1 + indexRank];
        return linearize(source, data.getShape());
      });
}

LogicalResult GatherElementsOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto indices = rankedType(getIndices());
  pushShape(types, getOutput(),
            indices ? std::optional<ArrayRef<int64_t>>(indices.getShape())
                    : std::nullopt);
  return success();
}

/// Shared checks of GatherElements and ScatterElements: data and indices
/// have the same rank and `axis` is valid for it.
static LogicalResult verifyElementsAxis(Operation *op, Value data,
                                        Value indices, int64_t axis) {
  auto dataType = rankedType(data);
  auto indicesType = rankedType(indices);
  if (dataType && indicesType && dataType.getRank() != indicesType.getRank())
    return op->emitOpError("indices rank ")
           << indicesType.getRank() << " differs from the data rank "
           << dataType.getRank();
  if (dataType && !normalizeAxis(axis, dataType.getRank()))
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << dataType.getRank();
  return success();
}

LogicalResult GatherElementsOp::verify() {
  if (failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  return verifyElementsAxis(*this, getData(), getIndices(), int64_t(getAxis()));
}

/// GatherND's result shape: data[:b] + indices[b:-1] + data[b + k:], with k
/// the last indices dimension.
static FailureOr<std::optional<SmallVector<int64_t>>>
gatherNDShape(GatherNDOp op) {
  using Result = std::optional<SmallVector<int64_t>>;
  auto data = rankedType(op.getData());
  auto indices = rankedType(op.getIndices());
  if (!data || !indices)
    return Result();
  int64_t b = int64_t(op.getBatchDims());
  int64_t r = data.getRank(), q = indices.getRank();
  if (q < 1 || b < 0 || b >= std::min(r, q))
    return failure();
  int64_t k = indices.getDimSize(q - 1);
  if (isDynamic(k))
    return Result();
  if (k < 1 || k > r - b)
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(b));
  llvm::append_range(shape, indices.getShape().slice(b, q - 1 - b));
  llvm::append_range(shape, data.getShape().drop_front(b + k));
  return Result(shape);
}

LogicalResult GatherNDOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto shape = gatherNDShape(*this);
  if (failed(shape))
    return failure();
  pushShape(types, getOutput(),
            *shape ? std::optional<ArrayRef<int64_t>>(**shape) : std::nullopt);
  return success();
}

LogicalResult GatherNDOp::verify() {
  if (failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  if (failed(gatherNDShape(*this)))
    return emitOpError("batch_dims ")
           << int64_t(getBatchDims()) << " or the index tuple length of "
           << getIndices().getType() << " does not fit data "
           << getData().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// ScatterElements, ScatterND
//===----------------------------------------------------------------------===//

static LogicalResult verifyReductionName(Operation *op, StringRef reduction) {
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return op->emitOpError("reduction must be none, add, mul, max or min, "
                           "got '")
           << reduction << "'";
  return success();
}

/// Scatters return data's shape.
static void inferLikeData(Value data, Value output,
                          SmallVectorImpl<Type> &types) {
  auto type = rankedType(data);
  pushShape(types, output,
            type ? std::optional<ArrayRef<int64_t>>(type.getShape())
                 : std::nullopt);
}

LogicalResult
ScatterElementsOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  inferLikeData(getData(), getOutput(), types);
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  if (failed(verifySameElementType(*this, getData(), getOutput())) ||
      failed(verifySameElementType(*this, getUpdates(), getOutput())) ||
      failed(verifyReductionName(*this, getReduction())) ||
      failed(verifyElementsAxis(*this, getData(), getIndices(),
                                int64_t(getAxis()))))
    return failure();
  if (failed(verifyCompatibleShape(getIndices().getType(),
                                   getUpdates().getType())))
    return emitOpError("updates ")
           << getUpdates().getType() << " differ in shape from the indices "
           << getIndices().getType();
  return success();
}

LogicalResult ScatterNDOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  inferLikeData(getData(), getOutput(), types);
  return success();
}

LogicalResult ScatterNDOp::verify() {
  if (failed(verifySameElementType(*this, getData(), getOutput())) ||
      failed(verifySameElementType(*this, getUpdates(), getOutput())) ||
      failed(verifyReductionName(*this, getReduction())))
    return failure();
  auto data = rankedType(getData());
  auto indices = rankedType(getIndices());
  auto updates = rankedType(getUpdates());
  if (!data || !indices || !updates)
    return success();
  int64_t q = indices.getRank(), r = data.getRank();
  int64_t k = q > 0 ? indices.getDimSize(q - 1) : kDynamic;
  if (q < 1 || (!isDynamic(k) && k > r))
    return emitOpError("indices ")
           << indices << " do not index data of rank " << r;
  if (isDynamic(k))
    return success();
  // updates = indices[:-1] + data[k:].
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(k));
  if (failed(verifyCompatibleShape(expected, updates.getShape())))
    return emitOpError("updates ")
           << updates << " must have shape [" << expected << "]";
  return success();
}

/// Small constants scattered into small constants without a reduction (the
/// masks models build from shapes: Swin's shifted-window mask writes region
/// numbers into zeros by ScatterND). Duplicate indices: the last wins.
OpFoldResult ScatterNDOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = foldableType(getType());
  DenseElementsAttr data = foldableElements(adaptor.getData());
  DenseElementsAttr updates = foldableElements(adaptor.getUpdates());
  auto indices = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getIndices());
  if (getReduction() != "none" || !type || !data || !updates || !indices ||
      indices.getNumElements() > kFoldLimit ||
      data.getElementType() != type.getElementType() ||
      updates.getElementType() != type.getElementType() ||
      indices.getType().getRank() < 1)
    return {};
  ArrayRef<int64_t> shape = type.getShape();
  int64_t k = indices.getType().getShape().back();
  if (k < 1 || k > type.getRank())
    return {};
  int64_t slice = product(shape.drop_front(k));
  int64_t tuples = indices.getNumElements() / k;
  if (updates.getNumElements() != tuples * slice && !updates.isSplat())
    return {};
  SmallVector<Attribute> values =
      data.isSplat() ? SmallVector<Attribute>(type.getNumElements(),
                                              data.getSplatValue<Attribute>())
                     : SmallVector<Attribute>(data.getValues<Attribute>());
  SmallVector<Attribute> news =
      updates.isSplat()
          ? SmallVector<Attribute>(tuples * slice,
                                   updates.getSplatValue<Attribute>())
          : SmallVector<Attribute>(updates.getValues<Attribute>());
  SmallVector<int64_t> at = llvm::to_vector(
      llvm::map_range(indices.getValues<APInt>(),
                      [](const APInt &v) { return v.getSExtValue(); }));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = at[t * k + j];
      if (i < 0)
        i += shape[j];
      if (i < 0 || i >= shape[j])
        return {};
      offset = offset * shape[j] + i;
    }
    std::copy_n(news.begin() + t * slice, slice,
                values.begin() + offset * slice);
  }
  return DenseElementsAttr::get(type, values);
}

//===----------------------------------------------------------------------===//
// OneHot, Compress, NonZero
//===----------------------------------------------------------------------===//

LogicalResult OneHotOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto indices = rankedType(getIndices());
  if (!indices) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  int64_t rank = indices.getRank() + 1;
  auto axis = normalizeAxis(getAxis(), rank);
  if (!axis)
    return failure();
  auto constantDepth = constantScalar(getDepth());
  int64_t depth = constantDepth ? int64_t(*constantDepth) : kDynamic;
  if (!isDynamic(depth) && depth < 0)
    return failure();
  SmallVector<int64_t> shape(indices.getShape());
  shape.insert(shape.begin() + *axis, depth);
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult OneHotOp::verify() {
  if (failed(verifySameElementType(*this, getValues(), getOutput())))
    return failure();
  if (!isScalarLike(getDepth()))
    return emitOpError("depth must be a scalar, got ") << getDepth().getType();
  if (auto values = rankedType(getValues());
      values && (values.getRank() != 1 || (!isDynamic(values.getDimSize(0)) &&
                                           values.getDimSize(0) != 2)))
    return emitOpError("values must hold [off, on], got ") << values;
  auto indices = rankedType(getIndices());
  if (indices && !normalizeAxis(getAxis(), indices.getRank() + 1))
    return emitOpError("axis ")
           << int64_t(getAxis()) << " is out of range for rank "
           << indices.getRank() + 1;
  if (auto depth = constantScalar(getDepth()); depth && *depth < 0)
    return emitOpError("depth must not be negative");
  return success();
}

LogicalResult CompressOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  // The count of selected slices is known when the condition is constant.
  std::optional<int64_t> selected;
  DenseElementsAttr condition;
  if (matchPattern(getCondition(), m_Constant(&condition)))
    selected = llvm::count(condition.getValues<bool>(), true);
  if (!getAxis()) {
    pushShape(types, getOutput(),
              ArrayRef<int64_t>{selected.value_or(kDynamic)});
    return success();
  }
  if (!input) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  auto axis = normalizeAxis(int64_t(*getAxis()), input.getRank());
  if (!axis)
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  shape[*axis] = selected.value_or(kDynamic);
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult CompressOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  if (!isVectorLike(getCondition()))
    return emitOpError("condition must be 1-D, got ")
           << getCondition().getType();
  auto input = rankedType(getInput());
  if (input && getAxis() &&
      !normalizeAxis(int64_t(*getAxis()), input.getRank()))
    return emitOpError("axis ")
           << int64_t(*getAxis()) << " is out of range for rank "
           << input.getRank();
  return success();
}

namespace {
/// Compress with a constant condition selects known slices: a gather of
/// their indices (of the flattened input when there is no axis), which
/// every target generates code for. With a condition known only at run
/// time, the result's size depends on values and the op stays for the
/// runtime's host kernel.
struct CompressOfConstantCondition : OpRewritePattern<CompressOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CompressOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr condition;
    auto input = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!matchPattern(op.getCondition(), m_Constant(&condition)) || !input ||
        !input.hasStaticShape())
      return failure();
    int64_t axis = 0;
    int64_t extent = input.getNumElements();
    if (op.getAxis()) {
      std::optional<int64_t> normalized =
          normalizeAxis(int64_t(*op.getAxis()), input.getRank());
      if (!normalized)
        return failure();
      axis = *normalized;
      extent = input.getDimSize(axis);
    }
    SmallVector<int64_t> indices;
    for (auto [i, selected] : llvm::enumerate(condition.getValues<bool>()))
      if (selected) {
        // A selection past the end is an error the runtime reports.
        if (int64_t(i) >= extent)
          return failure();
        indices.push_back(int64_t(i));
      }
    Location loc = op.getLoc();
    auto i64 = rewriter.getI64Type();
    Value data = op.getInput();
    if (!op.getAxis()) {
      data = reshapeTo(rewriter, loc, data,
                       RankedTensorType::get({extent}, input.getElementType()));
    }
    auto indexType = RankedTensorType::get({int64_t(indices.size())}, i64);
    Value positions =
        ConstantOp::create(rewriter, loc,
                           cast<ElementsAttr>(DenseElementsAttr::get(
                               indexType, ArrayRef<int64_t>(indices))));
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(data.getType()).getShape());
    shape[axis] = int64_t(indices.size());
    rewriter.replaceOpWithNewOp<GatherOp>(
        op, RankedTensorType::get(shape, input.getElementType()), data,
        positions, axis);
    return success();
  }
};
} // namespace

void CompressOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                             MLIRContext *context) {
  patterns.add<CompressOfConstantCondition>(context);
}

LogicalResult NonZeroOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  pushShape(types, getOutput(),
            ArrayRef<int64_t>{input ? input.getRank() : kDynamic, kDynamic});
  return success();
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

/// Reads a constant float tensor (Resize's scales).
static std::optional<SmallVector<double>> constantFloats(Value value) {
  DenseFPElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> values;
  for (const APFloat &v : attr.getValues<APFloat>())
    values.push_back(v.convertToDouble());
  return values;
}

LogicalResult ResizeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    pushShape(types, getOutput(), std::nullopt);
    return success();
  }
  int64_t rank = input.getRank();
  SmallVector<int64_t> shape = dynamicShape(rank);
  if (auto sizes = constantInts(getSizes())) {
    if (int64_t(sizes->size()) != rank ||
        llvm::any_of(*sizes, [](int64_t s) { return s < 0; }))
      return failure();
    shape = *sizes;
  } else if (auto scales = constantFloats(getScales());
             scales && !scales->empty()) {
    if (int64_t(scales->size()) != rank)
      return failure();
    // tf_crop_and_resize scales the region of interest, not the input.
    if (getCoordinateTransformationMode() != "tf_crop_and_resize")
      for (int64_t i = 0; i < rank; ++i)
        if (!isDynamic(input.getDimSize(i))) {
          double size = std::floor(double(input.getDimSize(i)) * (*scales)[i]);
          // Sizes that do not fit (absurd scales) stay unknown.
          if (size >= 0 && size < double(int64_t(1) << 40))
            shape[i] = int64_t(size);
        }
  }
  pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult ResizeOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  if (!getScales() && !getSizes())
    return emitOpError("needs scales or sizes");
  if (getScales() && getSizes())
    return emitOpError("takes scales or sizes, not both");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, getMode()))
    return emitOpError("mode must be nearest, linear or cubic, got '")
           << getMode() << "'";
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "tf_half_pixel_for_nn", "pytorch_half_pixel",
                           "align_corners", "asymmetric", "tf_crop_and_resize"},
                          getCoordinateTransformationMode()))
    return emitOpError("unknown coordinate_transformation_mode '")
           << getCoordinateTransformationMode() << "'";
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          getNearestMode()))
    return emitOpError("unknown nearest_mode '") << getNearestMode() << "'";
  auto input = rankedType(getInput());
  for (Value operand : {getScales(), getSizes()}) {
    if (!operand)
      continue;
    if (!isVectorLike(operand))
      return emitOpError("scales and sizes must be 1-D, got ")
             << operand.getType();
    auto length = staticLength(operand);
    if (input && length && *length != input.getRank())
      return emitOpError("scales or sizes has ")
             << *length << " entries for an input of rank " << input.getRank();
  }
  if (auto scales = constantFloats(getScales()))
    if (llvm::any_of(*scales, [](double s) { return !(s > 0); }))
      return emitOpError("scales must be positive");
  return success();
}

//===----------------------------------------------------------------------===//
// TopK, Unique
//===----------------------------------------------------------------------===//

/// TopK's K when known at compile time: the `k` attribute, or a constant
/// `dynamic_k` operand of one value.
static std::optional<int64_t> knownK(TopKOp op) {
  if (auto k = op.getK())
    return int64_t(*k);
  SmallVector<int64_t> values;
  if (Value dynamicK = op.getDynamicK();
      dynamicK && succeeded(getConstantIntValues(dynamicK, values)) &&
      values.size() == 1)
    return values.front();
  return std::nullopt;
}

LogicalResult TopKOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  if (!input) {
    pushShape(types, getValues(), std::nullopt);
    pushShape(types, getIndices(), std::nullopt);
    return success();
  }
  auto axis = normalizeAxis(getAxis(), input.getRank());
  if (!axis)
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  // K computed at run time: the axis dimension is unknown.
  shape[*axis] = kDynamic;
  if (auto k = knownK(*this)) {
    int64_t dim = input.getDimSize(*axis);
    if (*k < 0 || (!isDynamic(dim) && *k > dim))
      return failure();
    shape[*axis] = *k;
  } else if (!getDynamicK()) {
    return failure(); // Neither form: the verifier reports it.
  }
  pushShape(types, getValues(), ArrayRef<int64_t>(shape));
  pushShape(types, getIndices(), ArrayRef<int64_t>(shape));
  return success();
}

LogicalResult TopKOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getValues())))
    return failure();
  Value dynamicK = getDynamicK();
  if (getK() && dynamicK)
    return emitOpError(
        "takes k either as the `k` attribute or as an operand, not both");
  if (!getK() && !dynamicK)
    return emitOpError("needs k, as the `k` attribute or an operand");
  // ONNX's K is a 1-D tensor of one element; 0-D is accepted as well.
  if (dynamicK && !isScalarLike(dynamicK))
    return emitOpError("k operand must hold a single value, got ")
           << dynamicK.getType();
  auto k = knownK(*this);
  if (k && *k < 0)
    return emitOpError("k must not be negative, got ") << *k;
  auto input = rankedType(getInput());
  if (!input)
    return success();
  auto axis = normalizeAxis(getAxis(), input.getRank());
  if (!axis)
    return emitOpError("axis ")
           << int64_t(getAxis()) << " is out of range for rank "
           << input.getRank();
  int64_t dim = input.getDimSize(*axis);
  if (k && !isDynamic(dim) && *k > dim)
    return emitOpError("k = ") << *k << " exceeds the dimension " << dim;
  return success();
}

void TopKOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add(+[](TopKOp op, PatternRewriter &rewriter) {
    return moveConstantOperandToAttr(
        rewriter, op, op.getDynamicKMutable(), "k",
        [&](ArrayRef<int64_t> v) { return i64ScalarAttr(op.getContext(), v); });
  });
}

LogicalResult UniqueOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = rankedType(getInput());
  // The unique count is only known at run time; the inverse map has one
  // entry per input element (or slice along axis).
  int64_t inverse = kDynamic;
  if (!getAxis()) {
    pushShape(types, getOutput(), ArrayRef<int64_t>{kDynamic});
    if (input)
      inverse = product(input.getShape());
  } else if (!input) {
    pushShape(types, getOutput(), std::nullopt);
  } else {
    auto axis = normalizeAxis(int64_t(*getAxis()), input.getRank());
    if (!axis)
      return failure();
    SmallVector<int64_t> shape(input.getShape());
    shape[*axis] = kDynamic;
    pushShape(types, getOutput(), ArrayRef<int64_t>(shape));
    inverse = input.getDimSize(*axis);
  }
  pushShape(types, getIndices(), ArrayRef<int64_t>{kDynamic});
  pushShape(types, getInverseIndices(), ArrayRef<int64_t>{inverse});
  pushShape(types, getCounts(), ArrayRef<int64_t>{kDynamic});
  return success();
}

LogicalResult UniqueOp::verify() {
  if (failed(verifySameElementType(*this, getInput(), getOutput())))
    return failure();
  auto input = rankedType(getInput());
  if (input && getAxis() &&
      !normalizeAxis(int64_t(*getAxis()), input.getRank()))
    return emitOpError("axis ")
           << int64_t(*getAxis()) << " is out of range for rank "
           << input.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto data = rankedType(getData());
  auto shape =
      data ? std::optional<ArrayRef<int64_t>>(data.getShape()) : std::nullopt;
  pushShape(types, getOutput(), shape);
  pushShape(types, getMask(), shape);
  return success();
}

LogicalResult DropoutOp::verify() {
  if (failed(verifySameElementType(*this, getData(), getOutput())))
    return failure();
  if (getRatio() && !isScalarLike(getRatio()))
    return emitOpError("ratio must be a scalar, got ") << getRatio().getType();
  if (getTrainingMode() && !isScalarLike(getTrainingMode()))
    return emitOpError("training_mode must be a scalar, got ")
           << getTrainingMode().getType();
  if (auto ratio = constantScalar(getRatio());
      ratio && !(*ratio >= 0 && *ratio < 1))
    return emitOpError("ratio must be in [0, 1), got ") << *ratio;
  return success();
}

namespace {
/// Outside training, Dropout is the identity and its mask is all true; so
/// it is in training with a ratio of 0 (torchvision's Swin exports its
/// attention's dropout so: p = 0, training_mode true).
struct DropoutInInference : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if (Value training = op.getTrainingMode()) {
      DenseElementsAttr mode;
      std::optional<double> ratio = constantScalar(op.getRatio());
      bool keepsAll = op.getRatio() && ratio && *ratio == 0.0;
      if (!keepsAll && (!matchPattern(training, m_Constant(&mode)) ||
                        *mode.getValues<bool>().begin()))
        return failure();
    }
    if (op.getOutput().getType() != op.getData().getType())
      return failure();
    // A null replacement is fine for a result without uses.
    Value mask;
    if (!op.getMask().use_empty()) {
      auto type = dyn_cast<RankedTensorType>(op.getMask().getType());
      if (!type || !type.hasStaticShape())
        return failure();
      mask = ConstantOp::create(rewriter, op.getLoc(),
                                DenseElementsAttr::get(type, true));
    }
    rewriter.replaceOp(op, {op.getData(), mask});
    return success();
  }
};
} // namespace

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<DropoutInInference>(context);
}

//===----------------------------------------------------------------------===//
// Window functions
//===----------------------------------------------------------------------===//

/// Shape inference of the window ops: [size] when size is constant.
static LogicalResult inferWindow(Value size, Value output,
                                 SmallVectorImpl<Type> &types) {
  auto count = constantScalar(size);
  if (count && *count < 0)
    return failure();
  pushShape(types, output,
            ArrayRef<int64_t>{count ? int64_t(*count) : kDynamic});
  return success();
}

static LogicalResult verifyWindow(Operation *op, Value size, Value output) {
  if (!isScalarLike(size))
    return op->emitOpError("size must be a scalar, got ") << size.getType();
  if (auto count = constantScalar(size); count && *count < 0)
    return op->emitOpError("size must not be negative, got ") << *count;
  return success();
}

/// Folds a generalized cosine window sum_k (-1)^k a_k cos(2 pi k n / N'),
/// N' = size (periodic) or size - 1 (symmetric), into a float constant.
static OpFoldResult foldWindow(Value size, Type resultType, bool periodic,
                               ArrayRef<double> coefficients) {
  auto type = foldableType(resultType);
  auto count = constantScalar(size);
  if (!type || !count || !isa<FloatType>(type.getElementType()) ||
      type.getDimSize(0) != int64_t(*count))
    return {};
  int64_t n = int64_t(*count);
  double denominator = double(periodic ? n : n - 1);
  // A symmetric window of one sample divides by zero; leave it to run time.
  if (n > 0 && denominator <= 0)
    return {};
  const auto &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> values;
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0, sign = 1;
    for (auto [k, a] : llvm::enumerate(coefficients)) {
      sum +=
          sign * a * std::cos(2 * M_PI * double(k) * double(i) / denominator);
      sign = -sign;
    }
    APFloat v(sum);
    bool lost;
    v.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v);
  }
  return DenseElementsAttr::get(type, values);
}

#define STRATA_WINDOW_OP(Op, ...)                                              \
  LogicalResult Op::inferResultTypes(SmallVectorImpl<Type> &types) {           \
    return inferWindow(getSize(), getOutput(), types);                         \
  }                                                                            \
  LogicalResult Op::verify() {                                                 \
    return verifyWindow(*this, getSize(), getOutput());                        \
  }                                                                            \
  OpFoldResult Op::fold(FoldAdaptor) {                                         \
    return foldWindow(getSize(), getType(), getPeriodic() != 0,                \
                      {__VA_ARGS__});                                          \
  }

// The coefficients are ONNX's (Hamming's a0 is 25/46, not 0.54).
STRATA_WINDOW_OP(HannWindowOp, 0.5, 0.5)
STRATA_WINDOW_OP(HammingWindowOp, 25.0 / 46.0, 1.0 - 25.0 / 46.0)
STRATA_WINDOW_OP(BlackmanWindowOp, 0.42, 0.5, 0.08)
#undef STRATA_WINDOW_OP

//===----------------------------------------------------------------------===//
// Random values
//===----------------------------------------------------------------------===//

static LogicalResult verifyRandomShape(Operation *op, ArrayRef<int64_t> shape) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return op->emitOpError("shape [") << shape << "] has a negative dimension";
  return success();
}

LogicalResult RandomNormalOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  if (llvm::any_of(getShape(), [](int64_t d) { return d < 0; }))
    return failure();
  pushShape(types, getOutput(), getShape());
  return success();
}

LogicalResult RandomNormalOp::verify() {
  return verifyRandomShape(*this, getShape());
}

LogicalResult RandomUniformOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  if (llvm::any_of(getShape(), [](int64_t d) { return d < 0; }))
    return failure();
  pushShape(types, getOutput(), getShape());
  return success();
}

LogicalResult RandomUniformOp::verify() {
  if (getHigh().convertToDouble() < getLow().convertToDouble())
    return emitOpError("high ")
           << getHigh().convertToDouble() << " is below low "
           << getLow().convertToDouble();
  return verifyRandomShape(*this, getShape());
}

LogicalResult
RandomNormalLikeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  inferLikeData(getInput(), getOutput(), types);
  return success();
}

LogicalResult
RandomUniformLikeOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  inferLikeData(getInput(), getOutput(), types);
  return success();
}

LogicalResult RandomUniformLikeOp::verify() {
  if (getHigh().convertToDouble() < getLow().convertToDouble())
    return emitOpError("high ")
           << getHigh().convertToDouble() << " is below low "
           << getLow().convertToDouble();
  return success();
}

LogicalResult BernoulliOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  inferLikeData(getInput(), getOutput(), types);
  return success();
}

LogicalResult BernoulliOp::verify() {
  if (!isa<FloatType>(getElementTypeOrSelf(getInput())))
    return emitOpError("input must hold float probabilities, got ")
           << getInput().getType();
  return success();
}
