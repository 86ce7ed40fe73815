//===- Tensor.cpp - Tensor graph ops to linalg ------------------*- C++ -*-===//
//
// Lowers the graph dialect's shape and data movement ops (reshapes,
// transpose, concat, slice, split, gathers, expand, tile, pad, trilu, ...)
// to linalg and tensor ops on tensors. See Patterns.h for the contract.
//
// Shapes are static here (the compiler specializes them before codegen), and
// so are the lists ONNX passes as tensors (Slice's starts, Pad's pads): after
// the graph stage's canonicalization they are graph.constant operands. Pure
// reshapes become collapse_shape/expand_shape, transposes a linalg.generic
// that reads the input permuted (so that it fuses with elementwise ops),
// slices with positive steps extract_slice; the rest are one linalg.generic
// over the output that computes, from the output position, where to read
// the input (`tensor.extract`). Out-of-range indices, which ONNX leaves
// undefined, are clamped into range so that a kernel never reads outside
// its buffers.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>

using namespace mlir;
using namespace strata::detail;
namespace graph = strata::graph;

namespace {

/// A lowering with one result.
template <typename Fn> Lowering single(Fn fn) {
  return [fn](OpBuilder &b, Location loc, ValueRange operands,
              ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    return {fn(b, loc, operands, results[0])};
  };
}

} // namespace

/// The element type of `value`'s tensor type.
static Type elementOf(Value value) { return getElementTypeOrSelf(value); }

static Value arithIndexAdd(OpBuilder &b, Location loc, Value a, int64_t c) {
  if (c == 0)
    return a;
  return arith::AddIOp::create(b, loc, a, indexConstant(b, loc, c));
}

static Value arithIndexMul(OpBuilder &b, Location loc, Value a, int64_t c) {
  if (c == 1)
    return a;
  return arith::MulIOp::create(b, loc, a, indexConstant(b, loc, c));
}

/// Non-negative remainder of an `index` value by a positive constant.
static Value positiveRem(OpBuilder &b, Location loc, Value a, int64_t m) {
  Value mod = indexConstant(b, loc, m);
  Value rem = arith::RemSIOp::create(b, loc, a, mod);
  Value shifted = arith::AddIOp::create(b, loc, rem, mod);
  return arith::RemSIOp::create(b, loc, shifted, mod);
}

//===----------------------------------------------------------------------===//
// Reshapes, transpose, depth/space
//===----------------------------------------------------------------------===//

static Lowering lowerReshapeLike(Operation *op) {
  auto input = staticTensorType(op->getOperand(0));
  auto result = staticTensorType(op->getResult(0));
  if (!input || !result || input.getNumElements() != result.getNumElements())
    return nullptr;
  return single([](OpBuilder &b, Location loc, ValueRange operands,
                   RankedTensorType type) {
    return reshapeTo(b, loc, operands[0], type);
  });
}

static Lowering lowerTranspose(graph::TransposeOp op) {
  auto input = staticTensorType(op.getInput());
  if (!input || !staticTensorType(op.getOutput()))
    return nullptr;
  SmallVector<int64_t> perm = graph::transposePermutation(op, input.getRank());
  return single([perm](OpBuilder &b, Location loc, ValueRange operands,
                       RankedTensorType type) -> Value {
    if (type.getRank() == 0)
      return operands[0];
    // A generic, not linalg.transpose: elementwise fusion folds it into the
    // elementwise ops around it (a permuted read), so that a transpose and
    // the scale and residual add after it are one all-parallel loop nest,
    // which the GPU spreads over its whole grid (ConvNeXt's permutes).
    int64_t rank = type.getRank();
    SmallVector<AffineExpr> reads(rank);
    for (int64_t d = 0; d < rank; ++d)
      reads[perm[d]] = b.getAffineDimExpr(d);
    MLIRContext *context = b.getContext();
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, reads, context),
        AffineMap::getMultiDimIdentityMap(rank, context)};
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{operands[0]},
               ValueRange{init}, maps,
               SmallVector<utils::IteratorType>(rank,
                                                utils::IteratorType::parallel),
               [](OpBuilder &b, Location loc, ValueRange args) {
                 linalg::YieldOp::create(b, loc, args[0]);
               })
        .getResult(0);
  });
}

/// DepthToSpace (DCR or CRD) and SpaceToDepth on (N, C, H, W), as a gather
/// of the input at the position each output element comes from.
static Lowering lowerDepthSpace(Operation *op, int64_t block, bool toSpace,
                                bool crd) {
  auto input = staticTensorType(op->getOperand(0));
  if (!input || input.getRank() != 4 || !staticTensorType(op->getResult(0)) ||
      block < 1)
    return nullptr;
  int64_t inChannels = input.getDimSize(1);
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) {
    Value in = operands[0];
    int64_t outChannels = type.getDimSize(1);
    return buildIndexedGeneric(
        b, loc, type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          Value n = ivs[0], c = ivs[1], h = ivs[2], w = ivs[3];
          Value blockV = indexConstant(b, loc, block);
          SmallVector<Value> at;
          if (toSpace) {
            // out[n, c, h, w] = in[n, channel, h / b, w / b] where the
            // block offsets (h % b, w % b) pick the channel.
            Value bh = arith::RemUIOp::create(b, loc, h, blockV);
            Value bw = arith::RemUIOp::create(b, loc, w, blockV);
            Value offset = arith::AddIOp::create(
                b, loc, arithIndexMul(b, loc, bh, block), bw);
            Value channel;
            if (crd)
              channel = arith::AddIOp::create(
                  b, loc, arithIndexMul(b, loc, c, block * block), offset);
            else
              channel = arith::AddIOp::create(
                  b, loc, arithIndexMul(b, loc, offset, outChannels), c);
            at = {n, channel, arith::DivUIOp::create(b, loc, h, blockV),
                  arith::DivUIOp::create(b, loc, w, blockV)};
          } else {
            // SpaceToDepth: out channel = (bh * b + bw) * C + c.
            Value c0 = arith::RemUIOp::create(
                b, loc, c, indexConstant(b, loc, inChannels));
            Value offset = arith::DivUIOp::create(
                b, loc, c, indexConstant(b, loc, inChannels));
            Value bh = arith::DivUIOp::create(b, loc, offset, blockV);
            Value bw = arith::RemUIOp::create(b, loc, offset, blockV);
            at = {n, c0,
                  arith::AddIOp::create(b, loc, arithIndexMul(b, loc, h, block),
                                        bh),
                  arith::AddIOp::create(b, loc, arithIndexMul(b, loc, w, block),
                                        bw)};
          }
          return tensor::ExtractOp::create(b, loc, in, at);
        });
  });
}

//===----------------------------------------------------------------------===//
// Concat, slice, split
//===----------------------------------------------------------------------===//

static Lowering lowerConcat(graph::ConcatOp op) {
  if (!allStaticTensors(op) || op.getInputs().empty())
    return nullptr;
  int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
  auto axis = graph::normalizeAxis(int64_t(op.getAxis()), rank);
  if (!axis)
    return nullptr;
  return single([axis = *axis](OpBuilder &b, Location loc, ValueRange operands,
                               RankedTensorType type) {
    Value result =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    int64_t offset = 0;
    for (Value operand : operands) {
      auto operandType = cast<RankedTensorType>(operand.getType());
      int64_t size = operandType.getDimSize(axis);
      if (size == 0)
        continue;
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      offsets[axis] = b.getIndexAttr(offset);
      SmallVector<OpFoldResult> sizes,
          strides(type.getRank(), b.getIndexAttr(1));
      for (int64_t dim : operandType.getShape())
        sizes.push_back(b.getIndexAttr(dim));
      result = tensor::InsertSliceOp::create(b, loc, operand, result, offsets,
                                             sizes, strides);
      offset += size;
    }
    return result;
  });
}

namespace {
struct SliceAxis {
  int64_t start = 0, step = 1, count = 0;
};
} // namespace

/// Resolves a Slice with constant starts/ends/axes/steps against its static
/// data shape (ONNX rules: negative positions count from the end, then
/// clamping to [0, dim] for positive steps and [-1, dim - 1] for negative
/// ones). std::nullopt when a list is not constant or inconsistent.
static std::optional<SmallVector<SliceAxis>> resolveSlice(graph::SliceOp op) {
  auto data = staticTensorType(op.getData());
  if (!data)
    return std::nullopt;
  auto starts = constantInts(op.getStarts());
  auto ends = constantInts(op.getEnds());
  if (!starts || !ends || starts->size() != ends->size())
    return std::nullopt;
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (op.getAxes()) {
    auto values = constantInts(op.getAxes());
    if (!values)
      return std::nullopt;
    axes = *values;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  }
  if (op.getSteps()) {
    auto values = constantInts(op.getSteps());
    if (!values)
      return std::nullopt;
    steps = *values;
  }
  if (axes.size() != starts->size() || steps.size() != starts->size())
    return std::nullopt;
  auto normalized = graph::normalizeAxes(axes, data.getRank());
  if (failed(normalized))
    return std::nullopt;
  SmallVector<SliceAxis> result;
  for (int64_t dim : data.getShape())
    result.push_back({0, 1, dim});
  for (auto [i, axis] : llvm::enumerate(*normalized)) {
    int64_t dim = data.getDimSize(axis);
    int64_t start = (*starts)[i], end = (*ends)[i], step = steps[i];
    if (step == 0 || step == std::numeric_limits<int64_t>::min())
      return std::nullopt;
    // ONNX exporters use INT64_MIN/MAX for "to the end": add the dimension
    // only where that cannot overflow.
    if (start < 0)
      start = start < -dim ? -1 : start + dim;
    if (end < 0)
      end = end < -dim ? -1 : end + dim;
    SliceAxis &s = result[axis];
    s.step = step;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      s.count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
      end = std::clamp<int64_t>(end, -1, dim - 1);
      s.count = start > end ? (start - end - 1) / -step + 1 : 0;
    }
    s.start = start;
  }
  return result;
}

/// A Slice whose starts, steps or axes are computed at run time (ONNX test
/// models pass them as inputs): the result shape is static, so only where
/// each axis starts and its step are needed, resolved from the run-time
/// values with the rules of resolveSlice. Constant axes pick the data axis
/// of each entry directly; run-time ones are matched against every axis.
static Lowering lowerRuntimeSlice(graph::SliceOp op) {
  auto data = cast<RankedTensorType>(op.getData().getType());
  int64_t rank = data.getRank();
  int64_t count =
      cast<RankedTensorType>(op.getStarts().getType()).getNumElements();
  for (Value list : {op.getEnds(), op.getAxes(), op.getSteps()})
    if (list &&
        cast<RankedTensorType>(list.getType()).getNumElements() != count)
      return nullptr;
  std::optional<SmallVector<int64_t>> axes;
  if (op.getAxes()) {
    if (auto values = constantInts(op.getAxes())) {
      auto normalized = graph::normalizeAxes(*values, rank);
      if (failed(normalized))
        return nullptr;
      axes = *normalized;
    }
  } else {
    if (count > rank)
      return nullptr;
    axes = llvm::to_vector(llvm::seq<int64_t>(0, count));
  }
  bool hasSteps = bool(op.getSteps());
  int64_t axesIndex = 3, stepsIndex = op.getAxes() ? 4 : 3;
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    if (type.getNumElements() == 0)
      return tensor::EmptyOp::create(b, loc, type.getShape(),
                                     type.getElementType());
    Value zero = indexConstant(b, loc, 0);
    SmallVector<Value> starts(rank, zero);
    SmallVector<Value> steps(rank, indexConstant(b, loc, 1));
    auto read = [&](Value list, int64_t i) {
      return toIndex(b, loc,
                     tensor::ExtractOp::create(
                         b, loc, list, ValueRange{indexConstant(b, loc, i)}));
    };
    for (int64_t i = 0; i < count; ++i) {
      Value start = read(operands[1], i);
      Value step =
          hasSteps ? read(operands[stepsIndex], i) : indexConstant(b, loc, 1);
      Value axis = axes ? Value() : read(operands[axesIndex], i);
      for (int64_t d = 0; d < rank; ++d) {
        if (axes && (*axes)[i] != d)
          continue;
        int64_t dim = data.getDimSize(d);
        Value negative = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, start, zero);
        Value resolved = arith::SelectOp::create(
            b, loc, negative, arithIndexAdd(b, loc, start, dim), start);
        // Clamp to [0, dim] for positive steps, [0, dim - 1] otherwise.
        Value forward = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                              step, zero);
        Value high = arith::SelectOp::create(
            b, loc, forward, indexConstant(b, loc, dim),
            indexConstant(b, loc, std::max<int64_t>(dim - 1, 0)));
        resolved = arith::MaxSIOp::create(b, loc, resolved, zero);
        resolved = arith::MinSIOp::create(b, loc, resolved, high);
        if (axes) {
          starts[d] = resolved;
          steps[d] = step;
          continue;
        }
        Value match = arith::OrIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, axis,
                                  indexConstant(b, loc, d)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, axis,
                                  indexConstant(b, loc, d - rank)));
        starts[d] = arith::SelectOp::create(b, loc, match, resolved, starts[d]);
        steps[d] = arith::SelectOp::create(b, loc, match, step, steps[d]);
      }
    }
    Value in = operands[0];
    return buildIndexedGeneric(
        b, loc, type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value offset = arith::MulIOp::create(b, loc, ivs[d], steps[d]);
            at.push_back(clampIndex(
                b, loc, arith::AddIOp::create(b, loc, starts[d], offset),
                data.getDimSize(d)));
          }
          return tensor::ExtractOp::create(b, loc, in, at);
        });
  });
}

static Lowering lowerSlice(graph::SliceOp op) {
  auto resultType = staticTensorType(op.getOutput());
  if (!resultType)
    return nullptr;
  auto axes = resolveSlice(op);
  if (!axes)
    return lowerRuntimeSlice(op);
  for (auto [axis, s] : llvm::enumerate(*axes))
    if (s.count != resultType.getDimSize(axis))
      return nullptr;
  bool positive =
      llvm::all_of(*axes, [](const SliceAxis &s) { return s.step > 0; });
  return single([axes = *axes, positive](OpBuilder &b, Location loc,
                                         ValueRange operands,
                                         RankedTensorType type) -> Value {
    Value data = operands[0];
    if (type.getNumElements() == 0)
      return tensor::EmptyOp::create(b, loc, type.getShape(),
                                     type.getElementType());
    if (positive) {
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (const SliceAxis &s : axes) {
        offsets.push_back(b.getIndexAttr(s.start));
        sizes.push_back(b.getIndexAttr(s.count));
        strides.push_back(b.getIndexAttr(s.step));
      }
      return tensor::ExtractSliceOp::create(b, loc, type, data, offsets, sizes,
                                            strides);
    }
    // Negative steps: read data[start + i * step] per axis.
    return buildIndexedGeneric(
        b, loc, type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          SmallVector<Value> at;
          for (auto [iv, s] : llvm::zip(ivs, axes))
            at.push_back(arithIndexAdd(
                b, loc, arithIndexMul(b, loc, iv, s.step), s.start));
          return tensor::ExtractOp::create(b, loc, data, at);
        });
  });
}

static Lowering lowerSplit(graph::SplitOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto axis = graph::normalizeAxis(int64_t(op.getAxis()), input.getRank());
  if (!axis)
    return nullptr;
  int64_t total = 0;
  for (Type type : op.getResultTypes())
    total += cast<RankedTensorType>(type).getDimSize(*axis);
  if (total > input.getDimSize(*axis))
    return nullptr;
  return [axis = *axis](OpBuilder &b, Location loc, ValueRange operands,
                        ArrayRef<RankedTensorType> results) {
    SmallVector<Value> values;
    int64_t offset = 0;
    for (RankedTensorType type : results) {
      // An empty part has nothing to read (and its offset may equal the
      // axis size, which extract_slice rejects).
      if (type.getNumElements() == 0) {
        values.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                                 type.getElementType()));
        continue;
      }
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      offsets[axis] = b.getIndexAttr(offset);
      SmallVector<OpFoldResult> sizes,
          strides(type.getRank(), b.getIndexAttr(1));
      for (int64_t dim : type.getShape())
        sizes.push_back(b.getIndexAttr(dim));
      values.push_back(tensor::ExtractSliceOp::create(b, loc, type, operands[0],
                                                      offsets, sizes, strides));
      offset += type.getDimSize(axis);
    }
    return values;
  };
}

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

static Lowering lowerGather(graph::GatherOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto data = cast<RankedTensorType>(op.getData().getType());
  auto indices = cast<RankedTensorType>(op.getIndices().getType());
  auto axis = graph::normalizeAxis(int64_t(op.getAxis()), data.getRank());
  if (!axis)
    return nullptr;
  int64_t q = indices.getRank();
  return single([=, axis = *axis](OpBuilder &b, Location loc,
                                  ValueRange operands, RankedTensorType type) {
    Value dataV = operands[0];
    // The indices are read through an indexing map: output dims
    // [axis, axis + q) are the indices' dims.
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < q; ++i)
      exprs.push_back(b.getAffineDimExpr(axis + i));
    AffineMap map = AffineMap::get(type.getRank(), 0, exprs, b.getContext());
    return buildIndexedGeneric(
        b, loc, type, operands[1], map,
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange args) -> Value {
          SmallVector<Value> at(ivs.take_front(axis));
          at.push_back(wrapIndex(b, loc, args[0], data.getDimSize(axis)));
          for (Value iv : ivs.drop_front(axis + q))
            at.push_back(iv);
          return tensor::ExtractOp::create(b, loc, dataV, at);
        });
  });
}

static Lowering lowerGatherElements(graph::GatherElementsOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto data = cast<RankedTensorType>(op.getData().getType());
  auto axis = graph::normalizeAxis(int64_t(op.getAxis()), data.getRank());
  if (!axis)
    return nullptr;
  return single([=, axis = *axis](OpBuilder &b, Location loc,
                                  ValueRange operands, RankedTensorType type) {
    Value dataV = operands[0];
    return buildIndexedGeneric(
        b, loc, type, operands[1], b.getMultiDimIdentityMap(type.getRank()),
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange args) -> Value {
          SmallVector<Value> at(ivs);
          at[axis] = wrapIndex(b, loc, args[0], data.getDimSize(axis));
          for (int64_t d = 0, e = at.size(); d < e; ++d)
            if (d != axis)
              at[d] = clampIndex(b, loc, at[d], data.getDimSize(d));
          return tensor::ExtractOp::create(b, loc, dataV, at);
        });
  });
}

static Lowering lowerGatherND(graph::GatherNDOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto data = cast<RankedTensorType>(op.getData().getType());
  auto indices = cast<RankedTensorType>(op.getIndices().getType());
  int64_t batch = op.getBatchDims();
  int64_t q = indices.getRank();
  if (q < 1 || batch < 0 || batch >= q)
    return nullptr;
  int64_t k = indices.getDimSize(q - 1);
  if (batch + k > data.getRank())
    return nullptr;
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) {
    Value dataV = operands[0], indicesV = operands[1];
    return buildIndexedGeneric(
        b, loc, type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          // Output dims: batch dims, then the indices' other dims (together
          // the first q - 1), then the data dims after the indexed ones.
          SmallVector<Value> at(ivs.take_front(batch));
          SmallVector<Value> tuple(ivs.take_front(q - 1));
          tuple.push_back(Value());
          for (int64_t j = 0; j < k; ++j) {
            tuple.back() = indexConstant(b, loc, j);
            Value index = tensor::ExtractOp::create(b, loc, indicesV, tuple);
            at.push_back(wrapIndex(b, loc, index, data.getDimSize(batch + j)));
          }
          for (Value iv : ivs.drop_front(q - 1))
            at.push_back(iv);
          return tensor::ExtractOp::create(b, loc, dataV, at);
        });
  });
}

//===----------------------------------------------------------------------===//
// Broadcasting and repetition
//===----------------------------------------------------------------------===//

static Lowering lowerExpand(graph::ExpandOp op) {
  auto input = staticTensorType(op.getInput());
  auto result = staticTensorType(op.getOutput());
  if (!input || !result || input.getRank() > result.getRank())
    return nullptr;
  int64_t offset = result.getRank() - input.getRank();
  for (auto [i, size] : llvm::enumerate(input.getShape()))
    if (size != 1 && size != result.getDimSize(i + offset))
      return nullptr;
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) {
    SmallVector<AffineExpr> exprs;
    for (auto [i, size] : llvm::enumerate(input.getShape()))
      exprs.push_back(size == 1 && type.getDimSize(i + offset) != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(i + offset));
    AffineMap map = AffineMap::get(type.getRank(), 0, exprs, b.getContext());
    return buildIndexedGeneric(b, loc, type, operands[0], map,
                               [](OpBuilder &, Location, ValueRange,
                                  ValueRange args) { return args[0]; });
  });
}

static Lowering lowerTile(graph::TileOp op) {
  auto input = staticTensorType(op.getInput());
  if (!input || !staticTensorType(op.getOutput()) ||
      input.getNumElements() == 0)
    return nullptr;
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) {
    Value in = operands[0];
    return buildIndexedGeneric(
        b, loc, type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          SmallVector<Value> at;
          for (auto [iv, size] : llvm::zip(ivs, input.getShape()))
            at.push_back(size == 1
                             ? indexConstant(b, loc, 0)
                             : arith::RemUIOp::create(
                                   b, loc, iv, indexConstant(b, loc, size)));
          return tensor::ExtractOp::create(b, loc, in, at);
        });
  });
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

static Lowering lowerPad(graph::PadOp op) {
  auto input = staticTensorType(op.getData());
  auto result = staticTensorType(op.getOutput());
  if (!input || !result ||
      cast<RankedTensorType>(op.getPads().getType()).getNumElements() !=
          2 * input.getRank())
    return nullptr;
  // Pads computed at run time are read in the kernel; only the begin pads
  // matter, as the result shape is static.
  std::optional<SmallVector<int64_t>> pads = constantInts(op.getPads());
  StringRef mode = op.getMode();
  Type element = elementOf(op.getData());
  if (mode == "constant") {
    if (!isArithScalar(element))
      return nullptr;
    if (op.getConstantValue() && !staticTensorType(op.getConstantValue()))
      return nullptr;
  } else if (mode != "reflect" && mode != "edge" && mode != "wrap") {
    return nullptr;
  }
  int64_t rank = input.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    if (pads && input.getDimSize(d) + (*pads)[d] + (*pads)[d + rank] !=
                    result.getDimSize(d))
      return nullptr;
    // Other modes need data to read from along every padded axis.
    if (mode != "constant" && input.getDimSize(d) == 0 &&
        result.getDimSize(d) != 0)
      return nullptr;
  }
  bool hasValue = bool(op.getConstantValue());
  return single([=, mode = mode.str()](OpBuilder &b, Location loc,
                                       ValueRange operands,
                                       RankedTensorType type) {
    Value data = operands[0];
    SmallVector<Value> begins;
    for (int64_t d = 0; d < rank; ++d)
      begins.push_back(
          pads ? indexConstant(b, loc, (*pads)[d])
               : toIndex(b, loc,
                         tensor::ExtractOp::create(
                             b, loc, operands[1],
                             ValueRange{indexConstant(b, loc, d)})));
    Value padValue;
    if (mode == "constant")
      padValue = hasValue && cast<RankedTensorType>(operands[2].getType())
                                     .getNumElements() > 0
                     ? extractFirst(b, loc, operands[2])
                     : scalarConstant(b, loc, type.getElementType(), 0);
    return buildIndexedGeneric(
        b, loc, type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          SmallVector<Value> at;
          Value inside;
          for (int64_t d = 0; d < rank; ++d) {
            int64_t size = input.getDimSize(d);
            Value s = arith::SubIOp::create(b, loc, ivs[d], begins[d]);
            if (mode == "constant") {
              Value lo =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, s,
                                        indexConstant(b, loc, 0));
              Value hi =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, s,
                                        indexConstant(b, loc, size));
              Value both = arith::AndIOp::create(b, loc, lo, hi);
              inside =
                  inside ? arith::AndIOp::create(b, loc, inside, both) : both;
              at.push_back(clampIndex(b, loc, s, size));
            } else if (mode == "edge" || size == 1) {
              at.push_back(clampIndex(b, loc, s, size));
            } else if (mode == "wrap") {
              at.push_back(positiveRem(b, loc, s, size));
            } else {
              // reflect: mirror without repeating the edge, with period
              // 2 * (size - 1), as numpy's "reflect" does.
              int64_t period = 2 * (size - 1);
              Value m = positiveRem(b, loc, s, period);
              Value mirrored = arith::SubIOp::create(
                  b, loc, indexConstant(b, loc, period), m);
              Value low =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, m,
                                        indexConstant(b, loc, size));
              at.push_back(arith::SelectOp::create(b, loc, low, m, mirrored));
            }
          }
          if (input.getNumElements() == 0)
            return padValue;
          Value value = tensor::ExtractOp::create(b, loc, data, at);
          if (!inside)
            return value;
          return arith::SelectOp::create(b, loc, inside, value, padValue);
        });
  });
}

//===----------------------------------------------------------------------===//
// Generated values
//===----------------------------------------------------------------------===//

static Lowering lowerConstantOfShape(graph::ConstantOfShapeOp op) {
  auto result = staticTensorType(op.getOutput());
  auto value = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!result || !value || value.getNumElements() != 1 ||
      !isArithScalar(result.getElementType()) ||
      value.getElementType() != result.getElementType())
    return nullptr;
  auto scalar = cast<TypedAttr>(*value.getValues<Attribute>().begin());
  return single([scalar](OpBuilder &b, Location loc, ValueRange,
                         RankedTensorType type) {
    Value fill = arith::ConstantOp::create(b, loc, scalar);
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    return linalg::FillOp::create(b, loc, fill, init).getResult(0);
  });
}

static Lowering lowerRange(graph::RangeOp op) {
  auto result = staticTensorType(op.getOutput());
  Type element = elementOf(op.getOutput());
  if (!result || result.getRank() != 1 || !isArithScalar(element) ||
      element.isInteger(1))
    return nullptr;
  for (Value operand : op->getOperands()) {
    auto type = staticTensorType(operand);
    if (!type || type.getNumElements() != 1 || type.getElementType() != element)
      return nullptr;
  }
  return single([](OpBuilder &b, Location loc, ValueRange operands,
                   RankedTensorType type) {
    Value start = extractFirst(b, loc, operands[0]);
    Value delta = extractFirst(b, loc, operands[2]);
    Type element = type.getElementType();
    return buildIndexedGeneric(
        b, loc, type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          Value i64 =
              arith::IndexCastOp::create(b, loc, b.getI64Type(), ivs[0]);
          if (isa<FloatType>(element)) {
            Value i = arith::SIToFPOp::create(b, loc, element, i64);
            return arith::AddFOp::create(
                b, loc, start, arith::MulFOp::create(b, loc, i, delta));
          }
          Value i = convertNumeric(b, loc, i64, element);
          return arith::AddIOp::create(b, loc, start,
                                       arith::MulIOp::create(b, loc, i, delta));
        });
  });
}

static Lowering lowerTrilu(graph::TriluOp op) {
  auto input = staticTensorType(op.getInput());
  if (!input || input.getRank() < 2 || !staticTensorType(op.getOutput()) ||
      !isArithScalar(input.getElementType()))
    return nullptr;
  if (op.getK() && staticTensorType(op.getK()) &&
      staticTensorType(op.getK()).getNumElements() != 1)
    return nullptr;
  if (op.getK() && !staticTensorType(op.getK()))
    return nullptr;
  bool upper = op.getUpper() != 0;
  bool hasK = bool(op.getK());
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) {
    Value k = hasK ? toIndex(b, loc, extractFirst(b, loc, operands[1]))
                   : indexConstant(b, loc, 0);
    Value zero = scalarConstant(b, loc, type.getElementType(), 0);
    int64_t rank = type.getRank();
    return buildIndexedGeneric(
        b, loc, type, operands[0], b.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange args) -> Value {
          // Element (i, j) is on diagonal j - i.
          Value diagonal =
              arith::SubIOp::create(b, loc, ivs[rank - 1], ivs[rank - 2]);
          Value keep = arith::CmpIOp::create(b, loc,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             diagonal, k);
          return arith::SelectOp::create(b, loc, keep, args[0], zero);
        });
  });
}

static Lowering lowerEyeLike(graph::EyeLikeOp op) {
  auto result = staticTensorType(op.getOutput());
  if (!result || result.getRank() != 2 ||
      !isArithScalar(result.getElementType()))
    return nullptr;
  int64_t k = op.getK();
  return single([k](OpBuilder &b, Location loc, ValueRange,
                    RankedTensorType type) {
    Value one = scalarConstant(b, loc, type.getElementType(), 1);
    Value zero = scalarConstant(b, loc, type.getElementType(), 0);
    return buildIndexedGeneric(
        b, loc, type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          Value diagonal = arith::SubIOp::create(b, loc, ivs[1], ivs[0]);
          Value on = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           diagonal, indexConstant(b, loc, k));
          return arith::SelectOp::create(b, loc, on, one, zero);
        });
  });
}

static Lowering lowerOneHot(graph::OneHotOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto result = cast<RankedTensorType>(op.getOutput().getType());
  auto values = cast<RankedTensorType>(op.getValues().getType());
  Type indexElement = elementOf(op.getIndices());
  if (values.getNumElements() != 2 ||
      values.getElementType() != result.getElementType() ||
      !isArithScalar(indexElement) || indexElement.isInteger(1))
    return nullptr;
  auto axis = graph::normalizeAxis(int64_t(op.getAxis()), result.getRank());
  if (!axis)
    return nullptr;
  int64_t depth = result.getDimSize(*axis);
  return single([=, axis = *axis](OpBuilder &b, Location loc,
                                  ValueRange operands, RankedTensorType type) {
    Value off = tensor::ExtractOp::create(b, loc, operands[2],
                                          ValueRange{indexConstant(b, loc, 0)});
    Value on = tensor::ExtractOp::create(b, loc, operands[2],
                                         ValueRange{indexConstant(b, loc, 1)});
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis)
        exprs.push_back(b.getAffineDimExpr(d));
    AffineMap map = AffineMap::get(type.getRank(), 0, exprs, b.getContext());
    return buildIndexedGeneric(
        b, loc, type, operands[0], map,
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange args) -> Value {
          Value index = args[0];
          if (isa<FloatType>(index.getType()))
            index = arith::FPToSIOp::create(b, loc, b.getI64Type(), index);
          index = toIndex(b, loc, index);
          // Negative indices count from the end of the depth.
          Value negative =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index,
                                    indexConstant(b, loc, 0));
          index = arith::SelectOp::create(
              b, loc, negative, arithIndexAdd(b, loc, index, depth), index);
          Value hot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            index, ivs[axis]);
          return arith::SelectOp::create(b, loc, hot, on, off);
        });
  });
}

static Lowering lowerReverseSequence(graph::ReverseSequenceOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  int64_t batchAxis = op.getBatchAxis(), timeAxis = op.getTimeAxis();
  if (input.getRank() < 2 || batchAxis < 0 || timeAxis < 0 ||
      batchAxis >= input.getRank() || timeAxis >= input.getRank() ||
      batchAxis == timeAxis)
    return nullptr;
  int64_t steps = input.getDimSize(timeAxis);
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) {
    Value in = operands[0];
    AffineMap map = AffineMap::get(
        type.getRank(), 0, b.getAffineDimExpr(batchAxis), b.getContext());
    return buildIndexedGeneric(
        b, loc, type, operands[1], map,
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange args) -> Value {
          // The first len steps are reversed, the rest copied.
          Value length = toIndex(b, loc, args[0]);
          Value t = ivs[timeAxis];
          Value reversed = arith::SubIOp::create(
              b, loc, arithIndexAdd(b, loc, length, -1), t);
          Value inPrefix = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, t, length);
          Value source = arith::SelectOp::create(b, loc, inPrefix, reversed, t);
          SmallVector<Value> at(ivs);
          at[timeAxis] = clampIndex(b, loc, source, steps);
          return tensor::ExtractOp::create(b, loc, in, at);
        });
  });
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

static Lowering getLowering(Operation *op) {
  if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
    return nullptr;
  // Every value these ops touch must be a static tensor of numbers.
  for (Type type : llvm::concat<Type>(llvm::to_vector(op->getOperandTypes()),
                                      llvm::to_vector(op->getResultTypes()))) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        !isMovableScalar(tensor.getElementType()))
      return nullptr;
  }
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case<graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp,
            graph::UnsqueezeOp, graph::IdentityOp>(
          [](Operation *op) { return lowerReshapeLike(op); })
      .Case([](graph::TransposeOp op) { return lowerTranspose(op); })
      .Case([](graph::DepthToSpaceOp op) {
        return lowerDepthSpace(op, op.getBlocksize(), /*toSpace=*/true,
                               op.getMode() == "CRD");
      })
      .Case([](graph::SpaceToDepthOp op) {
        return lowerDepthSpace(op, op.getBlocksize(), /*toSpace=*/false,
                               /*crd=*/false);
      })
      .Case([](graph::ConcatOp op) { return lowerConcat(op); })
      .Case([](graph::SliceOp op) { return lowerSlice(op); })
      .Case([](graph::SplitOp op) { return lowerSplit(op); })
      .Case([](graph::GatherOp op) { return lowerGather(op); })
      .Case([](graph::GatherElementsOp op) { return lowerGatherElements(op); })
      .Case([](graph::GatherNDOp op) { return lowerGatherND(op); })
      .Case([](graph::ExpandOp op) { return lowerExpand(op); })
      .Case([](graph::TileOp op) { return lowerTile(op); })
      .Case([](graph::PadOp op) { return lowerPad(op); })
      .Case(
          [](graph::ConstantOfShapeOp op) { return lowerConstantOfShape(op); })
      .Case([](graph::RangeOp op) { return lowerRange(op); })
      .Case([](graph::TriluOp op) { return lowerTrilu(op); })
      .Case([](graph::EyeLikeOp op) { return lowerEyeLike(op); })
      .Case([](graph::OneHotOp op) { return lowerOneHot(op); })
      .Case(
          [](graph::ReverseSequenceOp op) { return lowerReverseSequence(op); })
      .Default([](Operation *) { return nullptr; });
}

bool strata::detail::canLowerTensor(Operation *op) {
  return bool(getLowering(op));
}

void strata::detail::populateTensorToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  addPlannedLowering(converter, patterns, getLowering, "tensor");
}
