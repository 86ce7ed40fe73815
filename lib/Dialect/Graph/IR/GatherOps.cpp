//===- GatherOps.cpp - ops that index tensors
//-------------------------------===//
//
// Shape inference, verifiers and folders of Gather, GatherElements,
// GatherND, ScatterElements, ScatterND, OneHot, Compress, NonZero, Resize,
// TopK and Unique (TensorOps.td; TensorOps.cpp has the conventions they
// follow).
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

/// gather(transpose(x, p), i, axis a) = transpose(gather(x, i, axis p[a]),
/// q) for a scalar index i, where q orders x's other dimensions as the
/// transpose did (the identity when a is the transpose's only move), when
/// every reader of the transpose is such a gather. PyTorch's packed
/// in-projections pick Q, K and V out of one transposed tensor
/// (nn.MultiheadAttention's `proj.unflatten(-1, (3, E)).unsqueeze(0)
/// .transpose(0, -2).squeeze(-2)` then `proj[0]`, timm's and Swin's
/// `qkv.permute(2, 0, 3, 1, 4)` then `qkv[0]`): the transpose of the whole
/// [3, ...] tensor was a kernel of its own, while each pick alone is a
/// view of the projection that the reader's kernel reads in place.
static LogicalResult gatherOfTranspose(GatherOp op, PatternRewriter &rewriter) {
  auto transpose = op.getData().getDefiningOp<TransposeOp>();
  auto indices = rankedType(op.getIndices());
  if (!transpose || !indices || indices.getRank() != 0)
    return failure();
  auto x = rankedType(transpose.getInput());
  auto data = rankedType(op.getData());
  auto result = rankedType(op.getOutput());
  if (!x || !data || !result || x.getRank() != data.getRank())
    return failure();
  for (Operation *user : transpose->getUsers()) {
    auto gather = dyn_cast<GatherOp>(user);
    auto index = gather ? rankedType(gather.getIndices()) : RankedTensorType();
    if (!index || index.getRank() != 0 || gather.getData() != transpose)
      return failure();
  }
  SmallVector<int64_t> p = transposePermutation(transpose, x.getRank());
  std::optional<int64_t> axis = normalizeAxis(op.getAxis(), data.getRank());
  if (!isPermutation(p) || !axis)
    return failure();
  int64_t from = p[*axis];
  // The picked tensor keeps x's dimensions but `from`, in x's order; the
  // result has them in the transpose's order.
  SmallVector<int64_t> q, shape;
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (d != from)
      shape.push_back(x.getDimSize(d));
  for (int64_t i = 0; i < data.getRank(); ++i)
    if (i != *axis)
      q.push_back(p[i] > from ? p[i] - 1 : p[i]);
  Location loc = op.getLoc();
  Value picked = GatherOp::create(
      rewriter, loc, RankedTensorType::get(shape, x.getElementType()),
      transpose.getInput(), op.getIndices(), rewriter.getI64IntegerAttr(from));
  if (llvm::is_sorted(q)) {
    rewriter.replaceOp(op, picked);
    return success();
  }
  rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), picked,
                                           rewriter.getDenseI64ArrayAttr(q));
  return success();
}

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add(gatherOfTranspose);
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

/// A GatherND of constants: each result element's source is the data
/// element at its batch prefix, then the index tuple, then its suffix.
/// Exporters compute masks so (transformers' packed-sequence ids).
OpFoldResult GatherNDOp::fold(FoldAdaptor adaptor) {
  auto data = rankedType(getData());
  auto indicesType = rankedType(getIndices());
  auto indices = constantInts(getIndices());
  if (!data || !data.hasStaticShape() || !indicesType ||
      !indicesType.hasStaticShape() || !indices || !hasConsistentTypes(*this))
    return {};
  int64_t b = int64_t(getBatchDims());
  int64_t q = indicesType.getRank();
  int64_t k = indicesType.getDimSize(q - 1);
  ArrayRef<int64_t> dataShape = data.getShape();
  SmallVector<int64_t> source(data.getRank()), position;
  return remapElements(
      foldableElements(adaptor.getData()), getType(),
      [&](ArrayRef<int64_t> index) -> int64_t {
        // index = batch prefix, indices' middle dimensions, data suffix.
        position.assign(index.begin(), index.begin() + (q - 1));
        position.push_back(0);
        int64_t tuple = linearize(position, indicesType.getShape());
        for (int64_t d = 0; d < b; ++d)
          source[d] = index[d];
        for (int64_t i = 0; i < k; ++i) {
          int64_t dim = dataShape[b + i], at = (*indices)[tuple + i];
          if (at < -dim || at >= dim)
            return -1;
          source[b + i] = at < 0 ? at + dim : at;
        }
        for (int64_t d = b + k; d < data.getRank(); ++d)
          source[d] = index[q - 1 + d - b - k];
        return linearize(source, dataShape);
      });
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
