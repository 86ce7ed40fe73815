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
// This file has the ops that make and reshape tensors (Constant, Shape,
// Range, Reshape, Squeeze, Transpose, DepthToSpace, ...), Dropout, the window
// functions and the random ops; SliceOps.cpp those that cut and join them
// (Concat, Slice, Split, Expand, Tile, Pad, Trilu, ReverseSequence);
// GatherOps.cpp those that index them (the gathers and scatters, OneHot,
// Compress, NonZero, Resize, TopK, Unique); TensorOpsCommon.h what they share.
//
//===----------------------------------------------------------------------===//

#include "TensorOpsCommon.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace strata::graph;
using namespace strata::graph::tensor_ops;

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

/// reshape(reshape(x)) as one reshape of x to the static result: a reshape
/// depends only on the element order, which the inner one keeps. Views in a
/// row hide a buffer's layout from the matchers that read through one view
/// (and splitBeforeTranspose leaves one before a transpose).
static LogicalResult composeReshapes(ReshapeOp op, PatternRewriter &rewriter) {
  auto inner = op.getData().getDefiningOp<ReshapeOp>();
  auto result = rankedType(op.getOutput());
  auto x = inner ? rankedType(inner.getData()) : RankedTensorType();
  if (!inner || !result || !x || !result.hasStaticShape() ||
      !x.hasStaticShape())
    return failure();
  rewriter.replaceOp(op,
                     reshapeTo(rewriter, op.getLoc(), inner.getData(), result));
  return success();
}

/// For each dimension of `to`, the consecutive dimensions of `from` it
/// merges (their sizes multiply to it); failure unless `to` only merges
/// `from`'s dimensions, in order.
static FailureOr<SmallVector<SmallVector<int64_t>>>
mergedGroups(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  SmallVector<SmallVector<int64_t>> groups(to.size());
  size_t next = 0;
  for (size_t i = 0; i < to.size(); ++i) {
    int64_t product = 1;
    do {
      if (next == from.size())
        return failure();
      product *= from[next];
      groups[i].push_back(int64_t(next++));
    } while (product < to[i]);
    if (product != to[i])
      return failure();
  }
  if (next != from.size())
    return failure();
  return groups;
}

/// reshape(transpose(x)) as transpose(reshape(x)) when the reshape only
/// splits dimensions of the transpose's result (each is the product of
/// consecutive dimensions of the reshape's): the split moves to the
/// dimension of x it came from, and the transpose permutes the pieces. The
/// dynamo exporter's K^T of nn.MultiheadAttention at a batch B > 1 is
/// [T, B*H, D] transposed to [B*H, D, T], then split into [B, H, D, T]; as
/// one transpose of x viewed [T, B, H, D], it is what the attention matcher
/// reads as K^T.
static LogicalResult splitBeforeTranspose(ReshapeOp op,
                                          PatternRewriter &rewriter) {
  auto transpose = op.getData().getDefiningOp<TransposeOp>();
  if (!transpose || !transpose->hasOneUse())
    return failure();
  auto x = rankedType(transpose.getInput());
  auto b = rankedType(transpose.getOutput());
  auto c = rankedType(op.getOutput());
  if (!x || !b || !c || !x.hasStaticShape() || !b.hasStaticShape() ||
      !c.hasStaticShape() || c.getRank() <= b.getRank())
    return failure();
  SmallVector<int64_t> perm = transposePermutation(transpose, x.getRank());
  if (int64_t(perm.size()) != x.getRank() || !isPermutation(perm))
    return failure();
  // The dimensions of c that each dimension of b splits into.
  auto groups = mergedGroups(c.getShape(), b.getShape());
  if (failed(groups))
    return failure();
  SmallVector<SmallVector<int64_t>> pieces(b.getRank());
  for (auto [i, group] : llvm::enumerate(*groups))
    for (int64_t d : group)
      pieces[i].push_back(c.getDimSize(d));
  // x with each dimension split as its image in b is; then the transpose of
  // the pieces, in b's order.
  SmallVector<int64_t> split, start(x.getRank());
  SmallVector<int64_t> imageOf(x.getRank());
  for (int64_t i = 0; i < b.getRank(); ++i)
    imageOf[perm[i]] = i;
  for (int64_t j = 0; j < x.getRank(); ++j) {
    start[j] = int64_t(split.size());
    llvm::append_range(split, pieces[imageOf[j]]);
  }
  SmallVector<int64_t> composed;
  for (int64_t i = 0; i < b.getRank(); ++i)
    for (int64_t k = 0; k < int64_t(pieces[i].size()); ++k)
      composed.push_back(start[perm[i]] + k);
  Value source = reshapeTo(rewriter, op.getLoc(), transpose.getInput(),
                           RankedTensorType::get(split, x.getElementType()));
  rewriter.replaceOpWithNewOp<TransposeOp>(
      op, op.getType(), source, rewriter.getDenseI64ArrayAttr(composed));
  return success();
}

/// act(reshape(x)) as reshape(act(x)), for an activation `act` (unary and
/// elementwise, so it commutes with any reshape) when x and the reshape
/// have no other reader: a product's epilogue then sees the activation on
/// its result. torch's exporters write linear layers over [B, S, K] as a
/// 2-D Gemm between views (HF's Conv1D in GPT-2: addmm on [B*S, K], viewed
/// back to [B, S, N]), so the activation after FC1 read the view, and
/// cuBLASLt's GELU epilogue and oneDNN's post-ops could not take it.
static LogicalResult activationBeforeReshape(ReshapeOp op,
                                             PatternRewriter &rewriter) {
  if (!op->hasOneUse() || !op.getData().hasOneUse())
    return failure();
  Operation *act = *op->getUsers().begin();
  if (!isa<ReluOp, GeluOp, SigmoidOp, TanhOp, LeakyReluOp, HardSwishOp,
           SoftplusOp>(act))
    return failure();
  auto x = dyn_cast<TensorType>(op.getData().getType());
  auto out = dyn_cast<TensorType>(act->getResult(0).getType());
  if (!x || !out || x.getElementType() != out.getElementType())
    return failure();
  rewriter.setInsertionPoint(op);
  Operation *moved = rewriter.clone(*act);
  moved->setOperand(0, op.getData());
  moved->getResult(0).setType(x);
  auto reshape =
      ReshapeOp::create(rewriter, op.getLoc(), out, moved->getResult(0),
                        op.getShape(), op.getAllowzeroAttr());
  rewriter.replaceOp(act, reshape.getOutput());
  rewriter.eraseOp(op);
  return success();
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add(transposeAfterReshapes);
  patterns.add(splitBeforeTranspose);
  patterns.add(composeReshapes);
  patterns.add(activationBeforeReshape);
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
  // squeeze(unsqueeze(x)) back to x's static shape: both keep the elements'
  // order, so the pair is x.
  if (auto unsqueeze = getInput().getDefiningOp<UnsqueezeOp>())
    if (unsqueeze.getInput().getType() == getType() &&
        cast<TensorType>(getType()).hasStaticShape())
      return unsqueeze.getInput();
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

/// squeeze(transpose(x, p), axes) = transpose(squeeze(x, p[axes]), q), q
/// being p without the squeezed positions, when nothing else reads the
/// transpose: the unit dimensions go before the transpose, where they meet
/// the unsqueeze that made them (nn.MultiheadAttention's packed
/// in-projection, `.unsqueeze(0).transpose(0, -2).squeeze(-2)`), and the
/// transpose is one of the tensor's own dimensions that later rewrites
/// (gatherOfTranspose) can read.
static LogicalResult squeezeOfTranspose(SqueezeOp op,
                                        PatternRewriter &rewriter) {
  auto transpose = op.getInput().getDefiningOp<TransposeOp>();
  if (!transpose || !transpose->hasOneUse())
    return failure();
  auto x = rankedType(transpose.getInput());
  auto result = rankedType(op.getOutput());
  std::optional<SmallVector<int64_t>> known = knownAxes(op);
  if (!x || !result || !x.hasStaticShape() || !result.hasStaticShape() ||
      !known)
    return failure();
  FailureOr<SmallVector<int64_t>> axes = normalizeAxes(*known, x.getRank());
  SmallVector<int64_t> p = transposePermutation(transpose, x.getRank());
  if (failed(axes) || axes->empty() || !isPermutation(p))
    return failure();
  SmallVector<int64_t> removed, q;
  for (int64_t a : *axes)
    removed.push_back(p[a]);
  llvm::sort(removed);
  for (int64_t i = 0; i < x.getRank(); ++i) {
    if (llvm::is_contained(*axes, i))
      continue;
    q.push_back(p[i] -
                llvm::count_if(removed, [&](int64_t r) { return r < p[i]; }));
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (!llvm::is_contained(removed, d))
      shape.push_back(x.getDimSize(d));
  Location loc = op.getLoc();
  Value squeezed = SqueezeOp::create(
      rewriter, loc, RankedTensorType::get(shape, x.getElementType()),
      transpose.getInput(), Value(), rewriter.getDenseI64ArrayAttr(removed));
  rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), squeezed,
                                           rewriter.getDenseI64ArrayAttr(q));
  return success();
}

void SqueezeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add(+[](SqueezeOp op, PatternRewriter &rewriter) {
    return moveConstantOperandToAttr(
        rewriter, op, op.getDynamicAxesMutable(), "axes",
        [&](ArrayRef<int64_t> v) { return i64ArrayAttr(op.getContext(), v); });
  });
  patterns.add(squeezeOfTranspose);
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

/// transpose(transpose(x, p), q) as one transpose of x by p[q[i]], when
/// nothing else reads the inner one: a transpose is a kernel, and one that
/// reads another hides its source from the matchers (torch's dynamo export
/// of nn.MultiheadAttention writes K^T as a transpose of K's [H, T, D]
/// transpose, which the attention matcher then did not see as K^T).
static LogicalResult composeTransposes(TransposeOp op,
                                       PatternRewriter &rewriter) {
  auto inner = op.getInput().getDefiningOp<TransposeOp>();
  auto x = inner ? rankedType(inner.getInput()) : RankedTensorType();
  auto mid = rankedType(op.getInput());
  if (!inner || !inner->hasOneUse() || !x || !mid ||
      x.getRank() != mid.getRank())
    return failure();
  SmallVector<int64_t> p = transposePermutation(inner, x.getRank());
  SmallVector<int64_t> q = transposePermutation(op, mid.getRank());
  if (!isPermutation(p) || !isPermutation(q))
    return failure();
  SmallVector<int64_t> composed;
  for (int64_t i : q)
    composed.push_back(p[i]);
  rewriter.replaceOpWithNewOp<TransposeOp>(
      op, op.getType(), inner.getInput(),
      rewriter.getDenseI64ArrayAttr(composed));
  return success();
}

/// One dimension of the common refinement of two shapes: its size, and
/// the dimension of each shape it is a piece of.
struct Piece {
  int64_t size, from, to;
};

/// The common refinement of `from` and `to` (the same elements): the
/// finest shape that both are merges of, each piece with the dimension of
/// either shape it belongs to. [T, B*H, D] and [T, B, H*D] refine to
/// [T, B, H, D]. Failure when a dimension straddles two of the other's
/// ([6, 4] and [4, 6]). Shapes with unit dimensions refine only when `to`
/// merges `from` (mergedGroups): where a unit piece belongs is ambiguous.
static FailureOr<SmallVector<Piece>> refinement(ArrayRef<int64_t> from,
                                                ArrayRef<int64_t> to) {
  SmallVector<Piece> pieces;
  if (llvm::is_contained(from, 1) || llvm::is_contained(to, 1) ||
      from.empty() || to.empty()) {
    auto groups = mergedGroups(from, to);
    if (failed(groups))
      return failure();
    for (auto [g, group] : llvm::enumerate(*groups))
      for (int64_t d : group)
        pieces.push_back({from[d], d, int64_t(g)});
    return pieces;
  }
  size_t i = 0, j = 0;
  int64_t restFrom = from[0], restTo = to[0];
  while (true) {
    int64_t small = std::min(restFrom, restTo);
    if (restFrom % small != 0 || restTo % small != 0)
      return failure();
    pieces.push_back({small, int64_t(i), int64_t(j)});
    restFrom /= small;
    restTo /= small;
    if (restFrom == 1 && ++i < from.size())
      restFrom = from[i];
    if (restTo == 1 && ++j < to.size())
      restTo = to[j];
    if (i == from.size() || j == to.size())
      break;
  }
  if (i != from.size() || j != to.size())
    return failure();
  return pieces;
}

/// transpose(reshape(transpose(x, p)), q) as reshape(transpose(x', r)) when
/// nothing else reads the inner two and the reshape splits and merges
/// dimensions without straddling them (the shapes have a common
/// refinement): x' is x with each dimension split into its pieces, and r
/// orders the pieces as the two transposes and the reshape do. Exporters
/// write attention's head merge so: nn.MultiheadAttention's output
/// [B*H, T, D] -> [T, B*H, D] viewed [T, B, E] and, with batch_first,
/// switched back to [B, T, E]; as one transpose it is x [B, H, T, D] ->
/// [B, T, H, D].
static LogicalResult composeAcrossMerge(TransposeOp op,
                                        PatternRewriter &rewriter) {
  auto merge = op.getInput().getDefiningOp<ReshapeOp>();
  auto inner =
      merge ? merge.getData().getDefiningOp<TransposeOp>() : TransposeOp();
  if (!inner || !merge->hasOneUse() || !inner->hasOneUse())
    return failure();
  auto x = rankedType(inner.getInput());
  auto y = rankedType(inner.getOutput());
  auto mid = rankedType(merge.getOutput());
  auto result = rankedType(op.getOutput());
  if (!x || !y || !mid || !result || !x.hasStaticShape() ||
      !y.hasStaticShape() || !mid.hasStaticShape() || !result.hasStaticShape())
    return failure();
  auto pieces = refinement(y.getShape(), mid.getShape());
  SmallVector<int64_t> p = transposePermutation(inner, x.getRank());
  SmallVector<int64_t> q = transposePermutation(op, mid.getRank());
  if (failed(pieces) || !isPermutation(p) || !isPermutation(q))
    return failure();
  // x split: each dimension d of x into the pieces of y's dimension that
  // the inner transpose put it at; where each piece lands in x split.
  SmallVector<int64_t> imageOf(x.getRank()), split, at(pieces->size());
  for (int64_t k = 0; k < y.getRank(); ++k)
    imageOf[p[k]] = k;
  for (int64_t d = 0; d < x.getRank(); ++d)
    for (auto [t, piece] : llvm::enumerate(*pieces))
      if (piece.from == imageOf[d]) {
        at[t] = int64_t(split.size());
        split.push_back(piece.size);
      }
  SmallVector<int64_t> composed, shape;
  for (int64_t g : q)
    for (auto [t, piece] : llvm::enumerate(*pieces))
      if (piece.to == g) {
        composed.push_back(at[t]);
        shape.push_back(piece.size);
      }
  Location loc = op.getLoc();
  Value source = inner.getInput();
  auto splitType = RankedTensorType::get(split, x.getElementType());
  if (splitType != x)
    source = reshapeTo(rewriter, loc, source, splitType);
  Value moved = TransposeOp::create(
      rewriter, loc, RankedTensorType::get(shape, x.getElementType()), source,
      rewriter.getDenseI64ArrayAttr(composed));
  rewriter.replaceOp(op, reshapeTo(rewriter, loc, moved, result));
  return success();
}

/// Whether every reader of `v` reaches a transpose through views that the
/// canonicalizations move a transpose across (reshapes that only split,
/// squeezes, gathers of one index), at most `depth` views deep: a
/// transpose put on `v` then composes with those.
static bool readersEndInTransposes(Value v, int depth) {
  if (v.use_empty())
    return false;
  for (Operation *user : v.getUsers()) {
    if (isa<TransposeOp>(user))
      continue;
    if (depth == 0 || user->getNumResults() != 1 || user->getOperand(0) != v)
      return false;
    if (auto gather = dyn_cast<GatherOp>(user)) {
      auto index = rankedType(gather.getIndices());
      if (!index || index.getRank() != 0)
        return false;
    } else if (auto reshape = dyn_cast<ReshapeOp>(user)) {
      auto from = rankedType(reshape.getOutput());
      auto to = rankedType(v);
      // A split of v's dimensions is a merge read backwards.
      if (!from || !to || !from.hasStaticShape() || !to.hasStaticShape() ||
          failed(mergedGroups(from.getShape(), to.getShape())))
        return false;
    } else if (!isa<SqueezeOp>(user)) {
      return false;
    }
    if (!readersEndInTransposes(user->getResult(0), depth - 1))
      return false;
  }
  return true;
}

/// matmul(transpose(x, p), w) as transpose(matmul(x, w), p), with a bias
/// add that follows, when w is a matrix, p keeps the last dimension in
/// place (the product's rows are permuted, its columns are not) and the
/// product's readers end in transposes that the moved one composes with.
/// nn.MultiheadAttention with batch_first switches [B, T, E] to [T, B, E]
/// before its in-projection and splits the heads out with another
/// transpose after it: the first transpose was a kernel of its own.
static LogicalResult transposeAfterProduct(TransposeOp op,
                                           PatternRewriter &rewriter) {
  if (!op->hasOneUse())
    return failure();
  auto matmul = dyn_cast<MatMulOp>(*op->getUsers().begin());
  if (!matmul || matmul.getLhs() != op.getOutput() || !matmul->hasOneUse())
    return failure();
  auto x = rankedType(op.getInput());
  auto w = rankedType(matmul.getRhs());
  auto product = rankedType(matmul.getOutput());
  if (!x || !w || !product || !x.hasStaticShape() || !w.hasStaticShape() ||
      !product.hasStaticShape() || w.getRank() != 2 || x.getRank() < 3)
    return failure();
  SmallVector<int64_t> perm = transposePermutation(op, x.getRank());
  if (!isPermutation(perm) || perm.back() != x.getRank() - 1)
    return failure();
  // The bias: an add of a value that varies along the last dimension only.
  Operation *last = matmul;
  Value bias;
  if (auto add = dyn_cast<AddOp>(*matmul->getUsers().begin())) {
    Value other =
        add.getLhs() == matmul.getOutput() ? add.getRhs() : add.getLhs();
    auto type = rankedType(other);
    if (type && add.getType() == product &&
        type.getRank() <= product.getRank() &&
        (type.getRank() == 0 ||
         llvm::all_of(type.getShape().drop_back(),
                      [](int64_t d) { return d == 1; }))) {
      last = add;
      bias = other;
    }
  }
  if (!readersEndInTransposes(last->getResult(0), 4))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  shape.back() = w.getDimSize(1);
  auto type = RankedTensorType::get(shape, product.getElementType());
  rewriter.setInsertionPoint(last);
  Operation *moved = rewriter.clone(*matmul);
  moved->setOperand(0, op.getInput());
  moved->getResult(0).setType(type);
  if (bias) {
    Operation *add = rewriter.clone(*last);
    add->setOperands({moved->getResult(0), bias});
    add->getResult(0).setType(type);
    moved = add;
  }
  rewriter.replaceOpWithNewOp<TransposeOp>(last, product, moved->getResult(0),
                                           rewriter.getDenseI64ArrayAttr(perm));
  return success();
}

/// transpose(reshape(A @ B), p) as reshape(A' @ B) with A' A's rows in the
/// transposed order, when the reshape splits the product's rows only, p
/// keeps the last dimension in place and A is a view of a transpose (the
/// two then compose). A 2-D product's rows are independent, so permuting
/// its result's rows permutes A's. nn.MultiheadAttention with batch_first
/// computes its out-projection on [T*B, E] and switches the result back to
/// [B, T, E]: the switch was a kernel between the product and the residual
/// add it now gives the product's epilogue.
static LogicalResult transposeBeforeProduct(TransposeOp op,
                                            PatternRewriter &rewriter) {
  auto split = op.getInput().getDefiningOp<ReshapeOp>();
  if (!split || !split->hasOneUse())
    return failure();
  Operation *prod = split.getData().getDefiningOp();
  if (!prod || !prod->hasOneUse() || prod->getNumResults() != 1)
    return failure();
  if (auto gemm = dyn_cast<GemmOp>(prod)) {
    auto c = gemm.getC() ? rankedType(gemm.getC()) : RankedTensorType();
    if (gemm.getTransA() != 0 ||
        (gemm.getC() && (!c || (c.getRank() == 2 && c.getDimSize(0) != 1))))
      return failure();
  } else if (!isa<MatMulOp>(prod)) {
    return failure();
  }
  Value a = prod->getOperand(0);
  auto view = a.getDefiningOp<ReshapeOp>();
  if (!view || !view.getData().getDefiningOp<TransposeOp>())
    return failure();
  auto at = rankedType(a);
  auto pt = rankedType(prod->getResult(0));
  auto st = rankedType(split.getOutput());
  auto result = rankedType(op.getOutput());
  if (!at || !pt || !st || !result || !at.hasStaticShape() ||
      !pt.hasStaticShape() || !st.hasStaticShape() ||
      !result.hasStaticShape() || at.getRank() != 2 || pt.getRank() != 2 ||
      st.getRank() < 3 || st.getShape().back() != pt.getDimSize(1) ||
      product(st.getShape().drop_back()) != pt.getDimSize(0))
    return failure();
  SmallVector<int64_t> perm = transposePermutation(op, st.getRank());
  if (!isPermutation(perm) || perm.back() != st.getRank() - 1)
    return failure();
  Location loc = op.getLoc();
  SmallVector<int64_t> rows(st.getShape().drop_back());
  rows.push_back(at.getDimSize(1));
  Value a3 = reshapeTo(rewriter, loc, a,
                       RankedTensorType::get(rows, at.getElementType()));
  SmallVector<int64_t> permuted;
  for (int64_t d : perm)
    permuted.push_back(rows[d]);
  Value moved = TransposeOp::create(
      rewriter, loc, RankedTensorType::get(permuted, at.getElementType()), a3,
      rewriter.getDenseI64ArrayAttr(perm));
  Value rowsMoved = reshapeTo(rewriter, loc, moved, at);
  Operation *clone = rewriter.clone(*prod);
  clone->setOperand(0, rowsMoved);
  rewriter.replaceOp(op, reshapeTo(rewriter, loc, clone->getResult(0), result));
  return success();
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add(transposeOfUnitDims);
  patterns.add(composeTransposes);
  patterns.add(composeAcrossMerge);
  patterns.add(transposeAfterProduct);
  patterns.add(transposeBeforeProduct);
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

/// Bound on DepthToSpace/SpaceToDepth block sizes, so that blocksize^2
/// cannot overflow.
static constexpr int64_t kMaxBlocksize = 1 << 16;

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
