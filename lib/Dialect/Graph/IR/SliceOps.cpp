//===- SliceOps.cpp - ops that cut and join tensors
//-------------------------===//
//
// Shape inference, verifiers and folders of Concat, Slice, Split, Expand,
// Tile, Pad, Trilu and ReverseSequence (TensorOps.td; TensorOps.cpp has the
// conventions they follow).
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
