//===- NN.cpp - NN graph ops to linalg --------------------------*- C++ -*-===//
//
// Lowers the graph dialect's matmul, gemm, convolution, pooling and
// normalization ops to linalg on tensors. See Patterns.h for the contract.
//
// Shapes are static (the compiler specializes them before codegen). Named
// linalg ops are used where one fits (matmul, batch_matmul, 2-D NCHW
// convolution and pooling), so that later tiling and vectorization see the
// op they know best; other ranks and layouts are one linalg.generic with
// the same structure. Products of f16/bf16 accumulate in f32 and are
// rounded once at the end. Padding is materialized as a padded copy of the
// input (fill + insert_slice), whose extent also covers ceil_mode's extra
// windows, so that every named op reads in bounds.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Patterns.h"
#include "Special.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace strata::detail;
namespace graph = strata::graph;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Floats of the compute set, and signless integers other than i1.
static bool isNumeric(Type type) {
  return isComputeFloat(type) ||
         (type.isSignlessInteger() && type.getIntOrFloatBitWidth() > 1);
}

/// A tensor of `shape` and `element` filled with `value`.
static Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                    Type element, Value value) {
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  return linalg::FillOp::create(b, loc, value, init).getResult(0);
}

/// A tensor of `shape` and `element` filled with zero.
static Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type element) {
  return filled(b, loc, shape, element, scalarConstant(b, loc, element, 0));
}

/// The lowest value of `element` (-inf for floats): the identity of max.
static Value lowestValue(OpBuilder &b, Location loc, Type element) {
  if (auto floatType = dyn_cast<FloatType>(element))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(element, APFloat::getInf(floatType.getFloatSemantics(),
                                                /*Negative=*/true)));
  return arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(
          element, APInt::getSignedMinValue(element.getIntOrFloatBitWidth())));
}

/// Converts every element of `value` to `element` (a no-op when equal).
static Value convertTensor(OpBuilder &b, Location loc, Value value,
                           Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == element)
    return value;
  auto resultType = RankedTensorType::get(type.getShape(), element);
  return buildIndexedGeneric(
      b, loc, resultType, value, b.getMultiDimIdentityMap(type.getRank()),
      [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) {
        return convertNumeric(b, loc, args[0], element);
      });
}

/// Pads the trailing `begins.size()` axes of `value` with `padValue`:
/// `begins[i]` before and `ends[i]` after axis i (both >= 0).
static Value padSpatial(OpBuilder &b, Location loc, Value value,
                        ArrayRef<int64_t> begins, ArrayRef<int64_t> ends,
                        Value padValue) {
  auto type = cast<RankedTensorType>(value.getType());
  if (llvm::all_of(begins, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(ends, [](int64_t v) { return v == 0; }))
    return value;
  int64_t rank = type.getRank(), first = rank - begins.size();
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d) {
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    if (d >= first) {
      shape[d] += begins[d - first] + ends[d - first];
      offsets[d] = b.getIndexAttr(begins[d - first]);
    }
  }
  Value result = filled(b, loc, shape, type.getElementType(), padValue);
  return tensor::InsertSliceOp::create(b, loc, value, result, offsets, sizes,
                                       strides);
}

/// `values` if it has `size` entries, else `size` copies of `fill`.
static SmallVector<int64_t> listOr(std::optional<ArrayRef<int64_t>> values,
                                   int64_t size, int64_t fill) {
  if (values && int64_t(values->size()) == size)
    return llvm::to_vector(*values);
  return SmallVector<int64_t>(size, fill);
}

namespace {
/// A sliding window over the trailing `spatial` axes of an (N, C, D...)
/// tensor: explicit begin/end pads, strides and dilations.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padBegin, padEnd;
};
} // namespace

/// Resolves the window of a conv or pooling op against its static input's
/// spatial sizes; auto_pad SAME_* is resolved like ONNX does (the odd pad at
/// the end for SAME_UPPER). Fails on inconsistent attributes.
static std::optional<Window>
resolveWindow(ArrayRef<int64_t> in, ArrayRef<int64_t> kernel, StringRef autoPad,
              std::optional<ArrayRef<int64_t>> strides,
              std::optional<ArrayRef<int64_t>> dilations,
              std::optional<ArrayRef<int64_t>> pads) {
  int64_t spatial = in.size();
  if (int64_t(kernel.size()) != spatial ||
      (strides && int64_t(strides->size()) != spatial) ||
      (dilations && int64_t(dilations->size()) != spatial) ||
      (pads && int64_t(pads->size()) != 2 * spatial))
    return std::nullopt;
  Window w;
  w.kernel = llvm::to_vector(kernel);
  w.strides = listOr(strides, spatial, 1);
  w.dilations = listOr(dilations, spatial, 1);
  SmallVector<int64_t> p = listOr(pads, 2 * spatial, 0);
  for (int64_t i = 0; i < spatial; ++i) {
    if (w.strides[i] < 1 || w.dilations[i] < 1 || p[i] < 0 ||
        p[i + spatial] < 0 || kernel[i] < 1)
      return std::nullopt;
    int64_t begin = p[i], end = p[i + spatial];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t effective = w.dilations[i] * (kernel[i] - 1) + 1;
      int64_t total = graph::samePadding(in[i], effective, w.strides[i]);
      int64_t small = total / 2;
      begin = autoPad == "SAME_UPPER" ? small : total - small;
      end = total - begin;
    } else if (autoPad == "VALID") {
      begin = end = 0;
    } else if (autoPad != "NOTSET") {
      return std::nullopt;
    }
    w.padBegin.push_back(begin);
    w.padEnd.push_back(end);
  }
  return w;
}

/// The end padding that makes `out` windows fit an axis of size `in` with
/// `begin` padding: at least what ceil_mode's last window needs.
static int64_t neededEnd(int64_t in, int64_t begin, int64_t out, int64_t kernel,
                         int64_t stride, int64_t dilation) {
  int64_t extent = (out - 1) * stride + dilation * (kernel - 1) + 1;
  return std::max<int64_t>(extent - in - begin, 0);
}

/// `attr` as the i64 vector attribute named ops take for strides/dilations.
static NamedAttribute vectorAttr(OpBuilder &b, StringRef name,
                                 ArrayRef<int64_t> values) {
  return b.getNamedAttr(name, b.getI64TensorAttr(values));
}

//===----------------------------------------------------------------------===//
// MatMul and Gemm
//===----------------------------------------------------------------------===//

/// Multiplies `lhs` [lb..., M, K] by `rhs` [rb..., K, N] (batch dims
/// broadcasting like numpy) into a new tensor of `resultType`'s shape
/// [b..., M, N] with element type `acc`.
static Value buildBatchedMatmul(OpBuilder &b, Location loc, Value lhs,
                                Value rhs, ArrayRef<int64_t> resultShape,
                                Type acc) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t rank = resultShape.size(), batch = rank - 2;
  int64_t m = resultShape[rank - 2], n = resultShape[rank - 1];
  int64_t k = lhsType.getDimSize(lhsType.getRank() - 1);
  ArrayRef<int64_t> lhsBatch = lhsType.getShape().drop_back(2);
  ArrayRef<int64_t> rhsBatch = rhsType.getShape().drop_back(2);
  int64_t batchCount = 1;
  for (int64_t d : resultShape.drop_back(2))
    batchCount *= d;
  Type element = lhsType.getElementType();

  // Plain matrices, or a batch of lhs rows against one rhs matrix (the
  // transformer projection): one linalg.matmul on the collapsed rows.
  if (rhsBatch.empty() && int64_t(lhsBatch.size()) == batch) {
    auto rows = RankedTensorType::get({batchCount * m, k}, element);
    Value init = zeros(b, loc, {batchCount * m, n}, acc);
    Value product =
        linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                 ValueRange{reshapeTo(b, loc, lhs, rows), rhs},
                                 ValueRange{init})
            .getResult(0);
    return reshapeTo(b, loc, product, RankedTensorType::get(resultShape, acc));
  }
  // Equal batch dims: one linalg.batch_matmul on the collapsed batch.
  if (lhsBatch == rhsBatch && int64_t(lhsBatch.size()) == batch) {
    Value l = reshapeTo(b, loc, lhs,
                        RankedTensorType::get({batchCount, m, k}, element));
    Value r = reshapeTo(
        b, loc, rhs,
        RankedTensorType::get({batchCount, k, n}, rhsType.getElementType()));
    Value init = zeros(b, loc, {batchCount, m, n}, acc);
    Value product =
        linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                      ValueRange{l, r}, ValueRange{init})
            .getResult(0);
    return reshapeTo(b, loc, product, RankedTensorType::get(resultShape, acc));
  }
  // Broadcast batch dims: a generic contraction over (b..., m, n, k).
  MLIRContext *context = b.getContext();
  int64_t loops = rank + 1;
  auto operandMap = [&](RankedTensorType type, bool isLhs) {
    SmallVector<AffineExpr> exprs;
    int64_t operandBatch = type.getRank() - 2, offset = batch - operandBatch;
    for (int64_t d = 0; d < operandBatch; ++d)
      exprs.push_back(type.getDimSize(d) == 1 && resultShape[d + offset] != 1
                          ? getAffineConstantExpr(0, context)
                          : getAffineDimExpr(d + offset, context));
    AffineExpr mE = getAffineDimExpr(batch, context),
               nE = getAffineDimExpr(batch + 1, context),
               kE = getAffineDimExpr(batch + 2, context);
    exprs.push_back(isLhs ? mE : kE);
    exprs.push_back(isLhs ? kE : nE);
    return AffineMap::get(loops, 0, exprs, context);
  };
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, context));
  SmallVector<AffineMap> maps = {operandMap(lhsType, true),
                                 operandMap(rhsType, false),
                                 AffineMap::get(loops, 0, outExprs, context)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = zeros(b, loc, resultShape, acc);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{lhs, rhs},
             ValueRange{init}, maps, iterators,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value x = convertNumeric(b, loc, args[0], acc);
               Value y = convertNumeric(b, loc, args[1], acc);
               Value product, sum;
               if (isa<FloatType>(acc)) {
                 product = arith::MulFOp::create(b, loc, x, y);
                 sum = arith::AddFOp::create(b, loc, args[2], product);
               } else {
                 product = arith::MulIOp::create(b, loc, x, y);
                 sum = arith::AddIOp::create(b, loc, args[2], product);
               }
               linalg::YieldOp::create(b, loc, sum);
             })
      .getResult(0);
}

static Lowering lowerMatMul(graph::MatMulOp op) {
  auto lhs = staticTensorType(op.getLhs());
  auto rhs = staticTensorType(op.getRhs());
  auto result = staticTensorType(op.getOutput());
  if (!lhs || !rhs || !result || !isNumeric(lhs.getElementType()) ||
      lhs.getElementType() != rhs.getElementType() ||
      lhs.getElementType() != result.getElementType() || lhs.getRank() < 1 ||
      rhs.getRank() < 1)
    return nullptr;
  // Promote 1-D operands to matrices; the result shape with those axes.
  SmallVector<int64_t> lhsShape(lhs.getShape()), rhsShape(rhs.getShape());
  if (lhs.getRank() == 1)
    lhsShape.insert(lhsShape.begin(), 1);
  if (rhs.getRank() == 1)
    rhsShape.push_back(1);
  if (lhsShape.back() != rhsShape[rhsShape.size() - 2])
    return nullptr;
  auto batch = graph::broadcastShapes(ArrayRef(lhsShape).drop_back(2),
                                      ArrayRef(rhsShape).drop_back(2));
  if (!batch)
    return nullptr;
  SmallVector<int64_t> fullShape(*batch);
  fullShape.push_back(lhsShape[lhsShape.size() - 2]);
  fullShape.push_back(rhsShape.back());
  int64_t expected = 1;
  for (int64_t d : fullShape)
    expected *= d;
  if (expected != result.getNumElements())
    return nullptr;
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type element = results[0].getElementType();
    Type acc = productAccumulatorType(element);
    Value l = reshapeTo(b, loc, operands[0],
                        RankedTensorType::get(lhsShape, element));
    Value r = reshapeTo(b, loc, operands[1],
                        RankedTensorType::get(rhsShape, element));
    Value product = buildBatchedMatmul(b, loc, l, r, fullShape, acc);
    product = convertTensor(b, loc, product, element);
    return {reshapeTo(b, loc, product, results[0])};
  };
}

static Lowering lowerGemm(graph::GemmOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto a = cast<RankedTensorType>(op.getA().getType());
  auto bType = cast<RankedTensorType>(op.getB().getType());
  auto result = cast<RankedTensorType>(op.getOutput().getType());
  Type element = result.getElementType();
  float alpha = op.getAlpha().convertToFloat();
  float beta = op.getBeta().convertToFloat();
  // Integer Gemm only without scaling: alpha and beta are floats.
  if (a.getRank() != 2 || bType.getRank() != 2 || result.getRank() != 2 ||
      !isNumeric(element) || a.getElementType() != element ||
      bType.getElementType() != element ||
      (!isa<FloatType>(element) && (alpha != 1.0f || beta != 1.0f)))
    return nullptr;
  bool transA = op.getTransA() != 0, transB = op.getTransB() != 0;
  int64_t m = a.getDimSize(transA ? 1 : 0), k = a.getDimSize(transA ? 0 : 1);
  int64_t n = bType.getDimSize(transB ? 0 : 1);
  if (bType.getDimSize(transB ? 1 : 0) != k || result.getDimSize(0) != m ||
      result.getDimSize(1) != n)
    return nullptr;
  std::optional<RankedTensorType> c;
  if (op.getC()) {
    c = cast<RankedTensorType>(op.getC().getType());
    if (c->getRank() > 2 || c->getElementType() != element)
      return nullptr;
    for (int64_t d = 0; d < c->getRank(); ++d) {
      int64_t size = c->getDimSize(d),
              out = result.getDimSize(d + 2 - c->getRank());
      if (size != 1 && size != out)
        return nullptr;
    }
  }
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = productAccumulatorType(element);
    auto transpose = [&](Value value) {
      auto type = cast<RankedTensorType>(value.getType());
      Value init = tensor::EmptyOp::create(
          b, loc, {type.getDimSize(1), type.getDimSize(0)},
          type.getElementType());
      return linalg::TransposeOp::create(b, loc, value, init,
                                         ArrayRef<int64_t>{1, 0})
          .getResult()[0];
    };
    Value lhs = transA ? transpose(operands[0]) : operands[0];
    Value rhs = transB ? transpose(operands[1]) : operands[1];
    Value init = zeros(b, loc, {m, n}, acc);
    Value product =
        linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                 ValueRange{lhs, rhs}, ValueRange{init})
            .getResult(0);
    // Epilogue: alpha * AB + beta * C, rounded to the result type.
    SmallVector<Value> inputs = {product};
    SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(2)};
    if (c) {
      inputs.push_back(operands[2]);
      SmallVector<AffineExpr> exprs;
      for (int64_t d = 0; d < c->getRank(); ++d) {
        int64_t outDim = d + 2 - c->getRank();
        exprs.push_back(c->getDimSize(d) == 1 &&
                                results[0].getDimSize(outDim) != 1
                            ? b.getAffineConstantExpr(0)
                            : b.getAffineDimExpr(outDim));
      }
      maps.push_back(AffineMap::get(2, 0, exprs, b.getContext()));
    }
    return {buildIndexedGeneric(
        b, loc, results[0], inputs, maps,
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) {
          Value value = args[0];
          if (isa<FloatType>(acc)) {
            if (alpha != 1.0f)
              value = arith::MulFOp::create(b, loc, value,
                                            scalarConstant(b, loc, acc, alpha));
            if (c) {
              Value bias = convertNumeric(b, loc, args[1], acc);
              if (beta != 1.0f)
                bias = arith::MulFOp::create(b, loc, bias,
                                             scalarConstant(b, loc, acc, beta));
              value = arith::AddFOp::create(b, loc, value, bias);
            }
          } else if (c) {
            value = arith::AddIOp::create(b, loc, value, args[1]);
          }
          return convertNumeric(b, loc, value, element);
        })};
  };
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// Convolves the padded input `x` [N, C, D...] with `w` [M, C/G, k...] in
/// `group` groups (stride and dilation from `window`, no padding left to
/// do) into a new tensor of `outShape` [N, M, O...] and element `acc`,
/// initialized with `init` (the bias, or zeros).
static Value buildConv(OpBuilder &b, Location loc, Value x, Value w, Value init,
                       int64_t group, const Window &window) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  auto outType = cast<RankedTensorType>(init.getType());
  int64_t spatial = xType.getRank() - 2;
  SmallVector<NamedAttribute> attrs = {
      vectorAttr(b, "strides", window.strides),
      vectorAttr(b, "dilations", window.dilations)};
  if (spatial == 2 && group == 1)
    return linalg::Conv2DNchwFchwOp::create(b, loc, TypeRange{outType},
                                            ValueRange{x, w}, ValueRange{init},
                                            attrs)
        .getResult(0);
  if (spatial == 1 && group == 1)
    return linalg::Conv1DNcwFcwOp::create(b, loc, TypeRange{outType},
                                          ValueRange{x, w}, ValueRange{init},
                                          attrs)
        .getResult(0);
  if (spatial == 3 && group == 1)
    return linalg::Conv3DNcdhwFcdhwOp::create(b, loc, TypeRange{outType},
                                              ValueRange{x, w},
                                              ValueRange{init}, attrs)
        .getResult(0);
  // Grouped: split the channel axes into (G, C/G) and (G, M/G).
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1);
  int64_t m = wType.getDimSize(0);
  auto split = [&](RankedTensorType type, int64_t axis, int64_t size) {
    SmallVector<int64_t> shape(type.getShape().take_front(axis));
    shape.push_back(group);
    shape.push_back(size / group);
    llvm::append_range(shape, type.getShape().drop_front(axis + 1));
    return RankedTensorType::get(shape, type.getElementType());
  };
  Value gx = reshapeTo(b, loc, x, split(xType, 1, c));
  Value gw = reshapeTo(b, loc, w, split(wType, 0, m));
  Value gInit = reshapeTo(b, loc, init, split(outType, 1, m));
  auto gOutType = cast<RankedTensorType>(gInit.getType());
  Value result;
  if (spatial == 2) {
    result = linalg::Conv2DNgchwGfchwOp::create(b, loc, TypeRange{gOutType},
                                                ValueRange{gx, gw},
                                                ValueRange{gInit}, attrs)
                 .getResult(0);
  } else {
    // Loops (n, g, m, o..., c, k...): in[n, g, c, o*s + k*d],
    // w[g, m, c, k...], out[n, g, m, o...].
    MLIRContext *context = b.getContext();
    int64_t loops = 4 + 2 * spatial;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
    int64_t cDim = 3 + spatial, kDim = 4 + spatial;
    SmallVector<AffineExpr> inExprs = {dim(0), dim(1), dim(cDim)};
    SmallVector<AffineExpr> wExprs = {dim(1), dim(2), dim(cDim)};
    SmallVector<AffineExpr> outExprs = {dim(0), dim(1), dim(2)};
    for (int64_t i = 0; i < spatial; ++i) {
      inExprs.push_back(dim(3 + i) * window.strides[i] +
                        dim(kDim + i) * window.dilations[i]);
      wExprs.push_back(dim(kDim + i));
      outExprs.push_back(dim(3 + i));
    }
    SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, context),
                                   AffineMap::get(loops, 0, wExprs, context),
                                   AffineMap::get(loops, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(3 + spatial,
                                               utils::IteratorType::parallel);
    iterators.append(1 + spatial, utils::IteratorType::reduction);
    Type acc = gOutType.getElementType();
    result = linalg::GenericOp::create(
                 b, loc, TypeRange{gOutType}, ValueRange{gx, gw},
                 ValueRange{gInit}, maps, iterators,
                 [&](OpBuilder &b, Location loc, ValueRange args) {
                   Value p = convertNumeric(b, loc, args[0], acc);
                   Value q = convertNumeric(b, loc, args[1], acc);
                   Value sum;
                   if (isa<FloatType>(acc))
                     sum = arith::AddFOp::create(
                         b, loc, args[2], arith::MulFOp::create(b, loc, p, q));
                   else
                     sum = arith::AddIOp::create(
                         b, loc, args[2], arith::MulIOp::create(b, loc, p, q));
                   linalg::YieldOp::create(b, loc, sum);
                 })
                 .getResult(0);
  }
  (void)n;
  return reshapeTo(b, loc, result, outType);
}

/// The accumulator a convolution starts from: the bias broadcast along the
/// output channels, or zeros.
static Value convInit(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                      Type acc, Value bias) {
  if (!bias)
    return zeros(b, loc, shape, acc);
  auto type = RankedTensorType::get(shape, acc);
  AffineMap map =
      AffineMap::get(shape.size(), 0, b.getAffineDimExpr(1), b.getContext());
  return buildIndexedGeneric(
      b, loc, type, bias, map,
      [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) {
        return convertNumeric(b, loc, args[0], acc);
      });
}

/// Whether a convolution's optional bias is absent or a vector of
/// `channels` elements of type `element`.
static bool biasFits(Value bias, int64_t channels, Type element) {
  if (!bias)
    return true;
  auto type = cast<RankedTensorType>(bias.getType());
  return type.getRank() == 1 && type.getDimSize(0) == channels &&
         type.getElementType() == element;
}

static Lowering lowerConv(graph::ConvOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto weight = cast<RankedTensorType>(op.getWeight().getType());
  auto result = cast<RankedTensorType>(op.getOutput().getType());
  Type element = input.getElementType();
  int64_t rank = input.getRank(), spatial = rank - 2;
  int64_t group = op.getGroup();
  if (spatial < 1 || weight.getRank() != rank || result.getRank() != rank ||
      !isNumeric(element) || weight.getElementType() != element ||
      result.getElementType() != element || group < 1 ||
      input.getDimSize(1) != weight.getDimSize(1) * group ||
      weight.getDimSize(0) % group != 0 ||
      result.getDimSize(1) != weight.getDimSize(0))
    return nullptr;
  if (!biasFits(op.getBias(), weight.getDimSize(0), element))
    return nullptr;
  auto window = resolveWindow(input.getShape().drop_front(2),
                              weight.getShape().drop_front(2), op.getAutoPad(),
                              op.getStrides(), op.getDilations(), op.getPads());
  if (!window)
    return nullptr;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t padded =
        input.getDimSize(i + 2) + window->padBegin[i] + window->padEnd[i];
    int64_t effective = window->dilations[i] * (window->kernel[i] - 1) + 1;
    if (padded < effective || (padded - effective) / window->strides[i] + 1 !=
                                  result.getDimSize(i + 2))
      return nullptr;
  }
  bool hasBias = bool(op.getBias());
  return [=, w = *window](
             OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = productAccumulatorType(element);
    Value x = padSpatial(b, loc, operands[0], w.padBegin, w.padEnd,
                         scalarConstant(b, loc, element, 0));
    Value init = convInit(b, loc, results[0].getShape(), acc,
                          hasBias ? operands[2] : Value());
    Value conv = buildConv(b, loc, x, operands[1], init, group, w);
    return {convertTensor(b, loc, conv, element)};
  };
}

static Lowering lowerConvTranspose(graph::ConvTransposeOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto weight = cast<RankedTensorType>(op.getWeight().getType());
  auto result = cast<RankedTensorType>(op.getOutput().getType());
  Type element = input.getElementType();
  int64_t rank = input.getRank(), spatial = rank - 2;
  int64_t group = op.getGroup();
  if (spatial < 1 || weight.getRank() != rank || result.getRank() != rank ||
      !isComputeFloat(element) || weight.getElementType() != element ||
      result.getElementType() != element || group < 1 ||
      input.getDimSize(1) != weight.getDimSize(0) ||
      weight.getDimSize(0) % group != 0 ||
      result.getDimSize(1) != weight.getDimSize(1) * group)
    return nullptr;
  if (!biasFits(op.getBias(), result.getDimSize(1), element))
    return nullptr;
  StringRef autoPad = op.getAutoPad();
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return nullptr;
  SmallVector<int64_t> kernel(weight.getShape().drop_front(2));
  SmallVector<int64_t> strides = listOr(op.getStrides(), spatial, 1);
  SmallVector<int64_t> dilations = listOr(op.getDilations(), spatial, 1);
  SmallVector<int64_t> pads = listOr(op.getPads(), 2 * spatial, 0);
  SmallVector<int64_t> outputPadding =
      listOr(op.getOutputPadding(), spatial, 0);
  // The begin pad of each axis; the end follows from the output size.
  SmallVector<int64_t> padBegin;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.getDimSize(i + 2), out = result.getDimSize(i + 2);
    int64_t effective = dilations[i] * (kernel[i] - 1) + 1;
    int64_t full = strides[i] * (in - 1) + outputPadding[i] + effective;
    if (op.getOutputShape() || autoPad == "SAME_UPPER" ||
        autoPad == "SAME_LOWER") {
      // ONNX: total = full - out, split evenly with the odd one at the
      // end for SAME_UPPER and at the beginning otherwise. The total is
      // negative when output_shape asks for more than the full size (the
      // extra positions at the end are zeros), hence floor division, as in
      // ONNX's reference.
      int64_t total = full - out;
      int64_t half = llvm::divideFloorSigned(total, 2);
      padBegin.push_back(autoPad == "SAME_UPPER" ? half : total - half);
    } else if (autoPad == "VALID") {
      padBegin.push_back(0);
    } else {
      padBegin.push_back(pads[i]);
    }
    if (out < 1)
      return nullptr;
  }
  bool hasBias = bool(op.getBias());
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    // A transposed convolution is a stride-1 convolution of the input
    // dilated by the strides (zeros between elements) and padded by
    // effective - 1 - pad, with the kernel flipped and its channel axes
    // swapped per group. One generic builds the dilated, padded (or
    // cropped) input; another the rearranged weight.
    Type acc = productAccumulatorType(element);
    int64_t n = input.getDimSize(0), c = input.getDimSize(1);
    int64_t m = results[0].getDimSize(1);
    SmallVector<int64_t> xShape = {n, c}, left;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t effective = dilations[i] * (kernel[i] - 1) + 1;
      left.push_back(effective - 1 - padBegin[i]);
      // Enough positions for every output with stride 1.
      xShape.push_back(results[0].getDimSize(i + 2) + effective - 1);
    }
    Value in = operands[0];
    Value zero = scalarConstant(b, loc, element, 0);
    Value x = buildIndexedGeneric(
        b, loc, RankedTensorType::get(xShape, element), {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          SmallVector<Value> at = {ivs[0], ivs[1]};
          Value valid;
          for (int64_t i = 0; i < spatial; ++i) {
            int64_t size = input.getDimSize(i + 2);
            Value q = arith::SubIOp::create(b, loc, ivs[i + 2],
                                            indexConstant(b, loc, left[i]));
            Value s = indexConstant(b, loc, strides[i]);
            Value inRange = arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, q,
                                      indexConstant(b, loc, 0)),
                arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::sle, q,
                    indexConstant(b, loc, (size - 1) * strides[i])));
            Value onGrid = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq,
                arith::RemSIOp::create(b, loc, q, s), indexConstant(b, loc, 0));
            Value ok = arith::AndIOp::create(b, loc, inRange, onGrid);
            valid = valid ? arith::AndIOp::create(b, loc, valid, ok) : ok;
            at.push_back(
                clampIndex(b, loc, arith::DivSIOp::create(b, loc, q, s), size));
          }
          Value value = tensor::ExtractOp::create(b, loc, in, at);
          return arith::SelectOp::create(b, loc, valid, value, zero);
        });
    // Weight [C, M/G, k...] -> [M, C/G, k...], flipped spatially.
    int64_t cg = c / group, mg = m / group;
    SmallVector<int64_t> wShape = {m, cg};
    llvm::append_range(wShape, kernel);
    Value weightIn = operands[1];
    Value w = buildIndexedGeneric(
        b, loc, RankedTensorType::get(wShape, element), {}, {},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange) -> Value {
          Value g =
              arith::DivUIOp::create(b, loc, ivs[0], indexConstant(b, loc, mg));
          Value mi =
              arith::RemUIOp::create(b, loc, ivs[0], indexConstant(b, loc, mg));
          Value ci = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, g, indexConstant(b, loc, cg)),
              ivs[1]);
          SmallVector<Value> at = {ci, mi};
          for (int64_t i = 0; i < spatial; ++i)
            at.push_back(arith::SubIOp::create(
                b, loc, indexConstant(b, loc, kernel[i] - 1), ivs[i + 2]));
          return tensor::ExtractOp::create(b, loc, weightIn, at);
        });
    Window window;
    window.kernel = kernel;
    window.strides = SmallVector<int64_t>(spatial, 1);
    window.dilations = dilations;
    Value init = convInit(b, loc, results[0].getShape(), acc,
                          hasBias ? operands[2] : Value());
    Value conv = buildConv(b, loc, x, w, init, group, window);
    return {convertTensor(b, loc, conv, element)};
  };
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Reduces windows of the padded `x` [N, C, D...] into `init` [N, C, O...]
/// with max (`isMax`; of unsigned integers with `isUnsigned`) or sum.
static Value buildPool(OpBuilder &b, Location loc, Value x, Value init,
                       const Window &window, bool isMax,
                       bool isUnsigned = false) {
  auto outType = cast<RankedTensorType>(init.getType());
  Type acc = outType.getElementType();
  int64_t spatial = outType.getRank() - 2;
  // Linalg has no NCHW max pool of unsigned numbers: those take the
  // generic below.
  if (spatial == 2 && !isUnsigned) {
    SmallVector<NamedAttribute> attrs = {
        vectorAttr(b, "strides", window.strides),
        vectorAttr(b, "dilations", window.dilations)};
    Value shape = tensor::EmptyOp::create(b, loc, window.kernel, acc);
    if (isMax)
      return linalg::PoolingNchwMaxOp::create(b, loc, TypeRange{outType},
                                              ValueRange{x, shape},
                                              ValueRange{init}, attrs)
          .getResult(0);
    return linalg::PoolingNchwSumOp::create(b, loc, TypeRange{outType},
                                            ValueRange{x, shape},
                                            ValueRange{init}, attrs)
        .getResult(0);
  }
  // Loops (n, c, o..., k...): in[n, c, o*s + k*d], out[n, c, o...].
  MLIRContext *context = b.getContext();
  int64_t loops = 2 + 2 * spatial;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> inExprs = {dim(0), dim(1)},
                          outExprs = {dim(0), dim(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(dim(2 + i) * window.strides[i] +
                      dim(2 + spatial + i) * window.dilations[i]);
    outExprs.push_back(dim(2 + i));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, context),
                                 AffineMap::get(loops, 0, outExprs, context)};
  SmallVector<utils::IteratorType> iterators(2 + spatial,
                                             utils::IteratorType::parallel);
  iterators.append(spatial, utils::IteratorType::reduction);
  // The kernel extents enter through a shape-only operand, as in the named
  // pooling ops: generic infers loop bounds from operand shapes.
  Value shape = tensor::EmptyOp::create(b, loc, window.kernel, acc);
  SmallVector<AffineExpr> kExprs;
  for (int64_t i = 0; i < spatial; ++i)
    kExprs.push_back(dim(2 + spatial + i));
  maps.insert(maps.begin() + 1, AffineMap::get(loops, 0, kExprs, context));
  return linalg::GenericOp::create(
             b, loc, TypeRange{outType}, ValueRange{x, shape}, ValueRange{init},
             maps, iterators,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value v = convertNumeric(b, loc, args[0], acc);
               Value r;
               if (isa<FloatType>(acc))
                 r = isMax
                         ? Value(arith::MaximumFOp::create(b, loc, args[2], v))
                         : Value(arith::AddFOp::create(b, loc, args[2], v));
               else if (isMax && isUnsigned)
                 r = arith::MaxUIOp::create(b, loc, args[2], v);
               else
                 r = isMax ? Value(arith::MaxSIOp::create(b, loc, args[2], v))
                           : Value(arith::AddIOp::create(b, loc, args[2], v));
               linalg::YieldOp::create(b, loc, r);
             })
      .getResult(0);
}

/// Lowers max_pool (indices unused) and average_pool.
template <typename OpTy>
static Lowering lowerPool(OpTy op, bool isMax, bool countIncludePad) {
  auto input = staticTensorType(op->getOperand(0));
  auto result = staticTensorType(op->getResult(0));
  if (!input || !result || input.getRank() < 3 ||
      result.getRank() != input.getRank() ||
      result.getElementType() != input.getElementType())
    return nullptr;
  Type element = input.getElementType();
  // Unsigned integers arrive signless (the pass's type converter): the
  // max compares them unsigned and pads with 0.
  bool isUnsigned = isMax && element.isUnsignedInteger() &&
                    element.getIntOrFloatBitWidth() > 1;
  if (isUnsigned)
    element =
        IntegerType::get(element.getContext(), element.getIntOrFloatBitWidth());
  if (isMax ? !isNumeric(element) : !isComputeFloat(element))
    return nullptr;
  int64_t spatial = input.getRank() - 2;
  auto window = resolveWindow(input.getShape().drop_front(2),
                              op.getKernelShape(), op.getAutoPad(),
                              op.getStrides(), op.getDilations(), op.getPads());
  if (!window || result.getDimSize(0) != input.getDimSize(0) ||
      result.getDimSize(1) != input.getDimSize(1))
    return nullptr;
  SmallVector<int64_t> ends;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t out = result.getDimSize(i + 2);
    if (out < 1)
      return nullptr;
    ends.push_back(neededEnd(input.getDimSize(i + 2), window->padBegin[i], out,
                             window->kernel[i], window->strides[i],
                             window->dilations[i]));
  }
  return [=, w = *window](
             OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = isMax ? element : productAccumulatorType(element);
    Value lowest = isUnsigned ? scalarConstant(b, loc, element, 0)
                              : lowestValue(b, loc, element);
    Value padValue = isMax ? lowest : scalarConstant(b, loc, element, 0);
    Value x = padSpatial(b, loc, operands[0], w.padBegin, ends, padValue);
    RankedTensorType type = results[0];
    Value init = isMax ? filled(b, loc, type.getShape(), acc, lowest)
                       : zeros(b, loc, type.getShape(), acc);
    Value pooled = buildPool(b, loc, x, init, w, isMax, isUnsigned);
    if (isMax)
      return {pooled};
    // Average: divide by the number of counted positions in each window,
    // a compile-time constant per output position: those inside the input
    // (count_include_pad = 0) or inside the explicitly padded input (= 1);
    // ceil_mode's extra positions never count.
    SmallVector<int64_t> outSpatial(type.getShape().drop_front(2));
    int64_t total = 1;
    for (int64_t d : outSpatial)
      total *= d;
    SmallVector<double> counts(total, 1.0);
    for (int64_t linear = 0; linear < total; ++linear) {
      int64_t rest = linear;
      double count = 1;
      for (int64_t i = spatial - 1; i >= 0; --i) {
        int64_t o = rest % outSpatial[i];
        rest /= outSpatial[i];
        int64_t in = input.getDimSize(i + 2);
        int64_t lo = countIncludePad ? -w.padBegin[i] : 0;
        int64_t hi = countIncludePad ? in + w.padEnd[i] : in;
        int64_t n = 0;
        for (int64_t k = 0; k < w.kernel[i]; ++k) {
          int64_t p = o * w.strides[i] + k * w.dilations[i] - w.padBegin[i];
          n += p >= lo && p < hi;
        }
        count *= n;
      }
      counts[linear] = std::max(count, 1.0);
    }
    auto countType = RankedTensorType::get(outSpatial, acc);
    SmallVector<Attribute> countAttrs;
    for (double value : counts)
      countAttrs.push_back(b.getFloatAttr(acc, value));
    Value divisor = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(countType, countAttrs));
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < spatial; ++i)
      exprs.push_back(b.getAffineDimExpr(i + 2));
    AffineMap countMap =
        AffineMap::get(type.getRank(), 0, exprs, b.getContext());
    return {buildIndexedGeneric(
        b, loc, type, ValueRange{pooled, divisor},
        {b.getMultiDimIdentityMap(type.getRank()), countMap},
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) {
          Value mean = arith::DivFOp::create(b, loc, args[0], args[1]);
          return convertNumeric(b, loc, mean, element);
        })};
  };
}

/// Global average/max pooling: a reduction over the spatial axes into
/// [N, C], reshaped to [N, C, 1...].
static Lowering lowerGlobalPool(Operation *op, bool isMax) {
  auto input = staticTensorType(op->getOperand(0));
  auto result = staticTensorType(op->getResult(0));
  if (!input || !result || input.getRank() < 3 ||
      result.getNumElements() != input.getDimSize(0) * input.getDimSize(1))
    return nullptr;
  Type element = input.getElementType();
  if (isMax ? !isNumeric(element) : !isComputeFloat(element))
    return nullptr;
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = isMax ? element : productAccumulatorType(element);
    int64_t rank = input.getRank();
    SmallVector<int64_t> nc = {input.getDimSize(0), input.getDimSize(1)};
    Value init = isMax ? filled(b, loc, nc, acc, lowestValue(b, loc, acc))
                       : zeros(b, loc, nc, acc);
    SmallVector<AffineMap> maps = {
        b.getMultiDimIdentityMap(rank),
        AffineMap::get(rank, 0, {b.getAffineDimExpr(0), b.getAffineDimExpr(1)},
                       b.getContext())};
    SmallVector<utils::IteratorType> iterators(2,
                                               utils::IteratorType::parallel);
    iterators.append(rank - 2, utils::IteratorType::reduction);
    Value reduced =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, operands[0], init, maps,
            iterators,
            [&](OpBuilder &b, Location loc, ValueRange args) {
              Value v = convertNumeric(b, loc, args[0], acc);
              Value r;
              if (isa<FloatType>(acc))
                r = isMax ? Value(arith::MaximumFOp::create(b, loc, args[1], v))
                          : Value(arith::AddFOp::create(b, loc, args[1], v));
              else
                r = Value(arith::MaxSIOp::create(b, loc, args[1], v));
              linalg::YieldOp::create(b, loc, r);
            })
            .getResult(0);
    auto ncType = RankedTensorType::get(nc, element);
    double count = double(input.getNumElements()) / (nc[0] * nc[1]);
    reduced = buildIndexedGeneric(
        b, loc, ncType, reduced, b.getMultiDimIdentityMap(2),
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) {
          Value v = args[0];
          if (!isMax)
            v = arith::DivFOp::create(b, loc, v,
                                      scalarConstant(b, loc, acc, count));
          return convertNumeric(b, loc, v, element);
        });
    return {reshapeTo(b, loc, reduced, results[0])};
  };
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Inference BatchNormalization's per-channel factor scale / sqrt(var + eps)
/// and offset bias - mean * factor, when its four parameters are constants.
static std::optional<std::pair<std::vector<double>, std::vector<double>>>
foldBatchNormConstants(graph::BatchNormOp op, double epsilon) {
  auto scale = special::constantFloats(op.getScale());
  auto bias = special::constantFloats(op.getBias());
  auto mean = special::constantFloats(op.getInputMean());
  auto var = special::constantFloats(op.getInputVar());
  if (!scale || !bias || !mean || !var)
    return std::nullopt;
  size_t channels = scale->size();
  if (bias->size() != channels || mean->size() != channels ||
      var->size() != channels)
    return std::nullopt; // lowerBatchNorm checked [C]; never read past one
  std::vector<double> factor(channels), offset(channels);
  for (size_t c = 0; c < channels; ++c) {
    factor[c] = (*scale)[c] / std::sqrt((*var)[c] + epsilon);
    offset[c] = (*bias)[c] - (*mean)[c] * factor[c];
  }
  return std::make_pair(std::move(factor), std::move(offset));
}

/// BatchNormalization in inference mode: per channel (axis 1),
/// y = (x - mean) / sqrt(var + epsilon) * scale + bias; the running
/// statistics are the inputs unchanged.
static Lowering lowerBatchNorm(graph::BatchNormOp op) {
  if (!allStaticTensors(op) || op.getTrainingMode() != 0)
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  Type element = input.getElementType();
  if (input.getRank() < 2 || !isComputeFloat(element) ||
      op.getOutput().getType() != input)
    return nullptr;
  int64_t channels = input.getDimSize(1);
  for (Value param :
       {op.getScale(), op.getBias(), op.getInputMean(), op.getInputVar()}) {
    auto type = cast<RankedTensorType>(param.getType());
    if (type.getRank() != 1 || type.getDimSize(0) != channels ||
        !isComputeFloat(type.getElementType()))
      return nullptr;
  }
  if (op.getRunningMean().getType() != op.getInputMean().getType() ||
      op.getRunningVar().getType() != op.getInputVar().getType())
    return nullptr;
  double epsilon = op.getEpsilon().convertToDouble();
  // Constant statistics (every exported model in inference mode): the
  // per-channel factor and offset are computed here, in double, so that
  // each element costs one multiply-add instead of a square root, a
  // division and four more operations per element.
  std::optional<std::pair<std::vector<double>, std::vector<double>>> folded =
      foldBatchNormConstants(op, epsilon);
  auto paramType = cast<RankedTensorType>(op.getScale().getType());
  if (folded)
    return [=](OpBuilder &b, Location loc, ValueRange operands,
               ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
      Type acc = productAccumulatorType(element);
      int64_t rank = input.getRank();
      Value factor =
          special::denseConstant(b, loc, paramType.getShape(),
                                 paramType.getElementType(), folded->first);
      Value offset =
          special::denseConstant(b, loc, paramType.getShape(),
                                 paramType.getElementType(), folded->second);
      AffineMap channel =
          AffineMap::get(rank, 0, b.getAffineDimExpr(1), b.getContext());
      Value y = buildIndexedGeneric(
          b, loc, results[0], ValueRange{operands[0], factor, offset},
          {b.getMultiDimIdentityMap(rank), channel, channel},
          [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) {
            SmallVector<Value> v;
            for (Value arg : args)
              v.push_back(convertNumeric(b, loc, arg, acc));
            Value out = arith::AddFOp::create(
                b, loc, arith::MulFOp::create(b, loc, v[0], v[1]), v[2]);
            return convertNumeric(b, loc, out, element);
          });
      return {y, operands[3], operands[4]};
    };
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = productAccumulatorType(element);
    int64_t rank = input.getRank();
    AffineMap channel =
        AffineMap::get(rank, 0, b.getAffineDimExpr(1), b.getContext());
    Value y = buildIndexedGeneric(
        b, loc, results[0], operands.take_front(5),
        {b.getMultiDimIdentityMap(rank), channel, channel, channel, channel},
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) {
          SmallVector<Value> v;
          for (Value arg : args)
            v.push_back(convertNumeric(b, loc, arg, acc));
          Value variance = arith::AddFOp::create(
              b, loc, v[4], scalarConstant(b, loc, acc, epsilon));
          Value scale = arith::MulFOp::create(
              b, loc, v[1], math::RsqrtOp::create(b, loc, variance));
          Value centered = arith::SubFOp::create(b, loc, v[0], v[3]);
          Value out = arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, centered, scale), v[2]);
          return convertNumeric(b, loc, out, element);
        });
    return {y, operands[3], operands[4]};
  };
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

static Lowering getLowering(Operation *op) {
  if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
    return nullptr;
  for (Type type : llvm::concat<Type>(llvm::to_vector(op->getOperandTypes()),
                                      llvm::to_vector(op->getResultTypes()))) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return nullptr;
  }
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case([](graph::MatMulOp op) { return lowerMatMul(op); })
      .Case([](graph::GemmOp op) { return lowerGemm(op); })
      .Case([](graph::ConvOp op) { return lowerConv(op); })
      .Case([](graph::ConvTransposeOp op) { return lowerConvTranspose(op); })
      .Case([](graph::MaxPoolOp op) -> Lowering {
        // The indices result is not computed here.
        if (!op.getIndices().use_empty())
          return nullptr;
        auto lowering = lowerPool(op, /*isMax=*/true, false);
        if (!lowering)
          return nullptr;
        return [lowering](OpBuilder &b, Location loc, ValueRange operands,
                          ArrayRef<RankedTensorType> results) {
          SmallVector<Value> values = lowering(b, loc, operands, results);
          // A placeholder for the unused indices.
          values.push_back(tensor::EmptyOp::create(
              b, loc, results[1].getShape(), results[1].getElementType()));
          return values;
        };
      })
      .Case([](graph::AveragePoolOp op) {
        return lowerPool(op, /*isMax=*/false, op.getCountIncludePad() != 0);
      })
      .Case([](graph::GlobalAveragePoolOp op) {
        return lowerGlobalPool(op, /*isMax=*/false);
      })
      .Case([](graph::GlobalMaxPoolOp op) {
        return lowerGlobalPool(op, /*isMax=*/true);
      })
      .Case([](graph::BatchNormOp op) { return lowerBatchNorm(op); })
      .Default([](Operation *) { return nullptr; });
}

bool strata::detail::canLowerNN(Operation *op) { return bool(getLowering(op)); }

void strata::detail::populateNNToLinalgPatterns(TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  addPlannedLowering(converter, patterns, getLowering, "NN");
}
