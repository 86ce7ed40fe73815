//===- Quant.cpp - quantization ops to linalg -------------------*- C++ -*-===//
//
// quantize_linear, dequantize_linear and dynamic_quantize_linear, and the
// integer matmul/convolution ops with their quantized (qlinear) forms.
// Integer products accumulate in i32 after subtracting the zero points;
// requantization computes in f32, rounds half to even and saturates to the
// 8-bit range, as ONNX specifies. Scales and zero points are scalars, or
// for quantize/dequantize and the convolution weight 1-D along the channel
// axis.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Special.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::detail;
using namespace strata::detail::special;
namespace graph = strata::graph;

static RankedTensorType tensorTypeOf(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

static bool isScalarLike(Value value) {
  auto type = staticTensorType(value);
  return type && type.getNumElements() == 1;
}

/// An 8-bit (or 32-bit) integer widened to i32, by its graph type's sign.
static Value widen(OpBuilder &b, Location loc, Value value, bool isUnsigned) {
  Type i32 = b.getI32Type();
  if (value.getType() == i32)
    return value;
  if (isUnsigned)
    return arith::ExtUIOp::create(b, loc, i32, value);
  return arith::ExtSIOp::create(b, loc, i32, value);
}

/// saturate(roundeven(x) + zeroPoint) in the 8-bit type; x and zeroPoint
/// are f32.
static Value saturate8(OpBuilder &b, Location loc, Value x, Value zeroPoint,
                       bool isUnsigned) {
  Value rounded = math::RoundEvenOp::create(b, loc, x);
  Value shifted = arith::AddFOp::create(b, loc, rounded, zeroPoint);
  Type f32 = b.getF32Type();
  Value lo = scalarConstant(b, loc, f32, isUnsigned ? 0 : -128);
  Value hi = scalarConstant(b, loc, f32, isUnsigned ? 255 : 127);
  Value clamped = arith::MinimumFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, shifted, lo), hi);
  Value wide = arith::FPToSIOp::create(b, loc, b.getI32Type(), clamped);
  return arith::TruncIOp::create(b, loc, b.getI8Type(), wide);
}

/// i32 to f32 by the graph type's sign (an i8/ui8 already widened).
static Value intToF32(OpBuilder &b, Location loc, Value value) {
  return arith::SIToFPOp::create(b, loc, b.getF32Type(), value);
}

/// The indexing map of a quantization parameter (scale or zero point)
/// against a tensor of `rank`: a scalar reads its one element, a 1-D
/// parameter the `axis` position.
static std::optional<AffineMap> paramMap(Builder &b, RankedTensorType param,
                                         RankedTensorType data, int64_t axis) {
  int64_t rank = data.getRank();
  if (param.getNumElements() == 1) {
    SmallVector<AffineExpr> zeros(param.getRank(), b.getAffineConstantExpr(0));
    return AffineMap::get(rank, 0, zeros, b.getContext());
  }
  if (param.getRank() == 1 && rank > 0 &&
      param.getDimSize(0) == data.getDimSize(axis))
    return AffineMap::get(rank, 0, b.getAffineDimExpr(axis), b.getContext());
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Quantize, dequantize
//===----------------------------------------------------------------------===//

/// The indexing maps of a (de)quantize op's scale and optional zero point
/// over its input (a scalar, or a 1-D tensor along `axis`).
struct QuantParams {
  AffineMap scale;
  std::optional<AffineMap> zeroPoint;

  /// The maps of the generic's inputs: the input, the scale, the zero point.
  SmallVector<AffineMap> maps(Builder &b, int64_t rank) const {
    SmallVector<AffineMap> result{b.getMultiDimIdentityMap(rank), scale};
    if (zeroPoint)
      result.push_back(*zeroPoint);
    return result;
  }
};

static std::optional<QuantParams> planQuantParams(Operation *op,
                                                  RankedTensorType input,
                                                  int64_t axisAttr, Value scale,
                                                  Value zeroPoint) {
  // The axis matters only for 1-D (per-axis) parameters.
  int64_t axis = 0;
  if (input.getRank() > 0) {
    if (auto normalized = graph::normalizeAxis(axisAttr, input.getRank()))
      axis = *normalized;
    else if (!isScalarLike(scale))
      return std::nullopt;
  }
  Builder probe(op->getContext());
  auto scaleMap = paramMap(probe, tensorTypeOf(scale), input, axis);
  if (!scaleMap)
    return std::nullopt;
  QuantParams params{*scaleMap, std::nullopt};
  if (zeroPoint) {
    params.zeroPoint = paramMap(probe, tensorTypeOf(zeroPoint), input, axis);
    if (!params.zeroPoint)
      return std::nullopt;
  }
  return params;
}

static Lowering lowerQuantize(graph::QuantizeLinearOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = tensorTypeOf(op.getInput());
  Type outElement = tensorTypeOf(op.getOutput()).getElementType();
  bool isUnsigned = outElement.isUnsignedInteger(8);
  std::optional<QuantParams> params = planQuantParams(
      op, input, int64_t(op.getAxis()), op.getScale(), op.getZeroPoint());
  if (!params)
    return nullptr;
  bool hasZp = bool(op.getZeroPoint());
  bool zpUnsigned =
      hasZp && getElementTypeOrSelf(op.getZeroPoint()).isUnsignedInteger();
  bool intInput = isa<IntegerType>(input.getElementType());
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    SmallVector<Value> inputs(operands.begin(), operands.end());
    SmallVector<AffineMap> maps = params->maps(b, input.getRank());
    return buildIndexedGeneric(
        b, loc, type, inputs, maps,
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
          Value x = args[0];
          if (intInput)
            x = intToF32(b, loc, x);
          Value scaled = arith::DivFOp::create(b, loc, x, args[1]);
          Value zp = hasZp
                         ? intToF32(b, loc, widen(b, loc, args[2], zpUnsigned))
                         : scalarConstant(b, loc, b.getF32Type(), 0);
          return saturate8(b, loc, scaled, zp, isUnsigned);
        });
  });
}

static Lowering lowerDequantize(graph::DequantizeLinearOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = tensorTypeOf(op.getInput());
  bool isUnsigned = input.getElementType().isUnsignedInteger();
  std::optional<QuantParams> params = planQuantParams(
      op, input, int64_t(op.getAxis()), op.getScale(), op.getZeroPoint());
  if (!params)
    return nullptr;
  bool hasZp = bool(op.getZeroPoint());
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    SmallVector<Value> inputs(operands.begin(), operands.end());
    SmallVector<AffineMap> maps = params->maps(b, input.getRank());
    return buildIndexedGeneric(
        b, loc, type, inputs, maps,
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
          Value x = widen(b, loc, args[0], isUnsigned);
          if (hasZp)
            x = arith::SubIOp::create(b, loc, x,
                                      widen(b, loc, args[2], isUnsigned));
          return arith::MulFOp::create(b, loc, intToF32(b, loc, x), args[1]);
        });
  });
}

static Lowering lowerDynamicQuantize(graph::DynamicQuantizeLinearOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = tensorTypeOf(op.getInput());
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    int64_t rank = input.getRank();
    Type f32 = b.getF32Type();
    // min(0, min x) and max(0, max x): one reduction into two zeros.
    auto scalarType = RankedTensorType::get({}, f32);
    Value zero = scalarConstant(b, loc, f32, 0);
    Value lo = filledTensor(b, loc, scalarType, zero);
    Value hi = filledTensor(b, loc, scalarType, zero);
    AffineMap toScalar = AffineMap::get(rank, 0, {}, b.getContext());
    auto range = linalg::GenericOp::create(
        b, loc, TypeRange{scalarType, scalarType}, ValueRange{operands[0]},
        ValueRange{lo, hi},
        {b.getMultiDimIdentityMap(rank), toScalar, toScalar},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(
              b, loc,
              ValueRange{arith::MinimumFOp::create(b, loc, args[0], args[1]),
                         arith::MaximumFOp::create(b, loc, args[0], args[2])});
        });
    Value xMin =
        tensor::ExtractOp::create(b, loc, range.getResult(0), ValueRange{});
    Value xMax =
        tensor::ExtractOp::create(b, loc, range.getResult(1), ValueRange{});
    Value scale =
        arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, xMax, xMin),
                              scalarConstant(b, loc, f32, 255));
    // zero point = saturate(round(-min / scale)).
    Value negMin = arith::NegFOp::create(b, loc, xMin);
    Value zp8 = saturate8(b, loc, arith::DivFOp::create(b, loc, negMin, scale),
                          zero, /*isUnsigned=*/true);
    Value zp = arith::UIToFPOp::create(b, loc, f32, zp8);
    Value y = buildIndexedGeneric(
        b, loc, results[0], operands[0], b.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
          return saturate8(b, loc,
                           arith::DivFOp::create(b, loc, args[0], scale), zp,
                           /*isUnsigned=*/true);
        });
    return {y, filledTensor(b, loc, results[1], scale),
            filledTensor(b, loc, results[2], zp8)};
  };
}

//===----------------------------------------------------------------------===//
// Integer matmul
//===----------------------------------------------------------------------===//

namespace {
/// Signedness of the operands of an integer matmul or convolution.
struct IntOperands {
  bool lhsUnsigned, rhsUnsigned;
};
} // namespace

/// (A - azp) x (B - bzp) in i32 over broadcast batch dims; zero points are
/// scalar values (i32) or null.
static Value buildIntMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            Value lhsZp, Value rhsZp, IntOperands sign,
                            RankedTensorType resultType) {
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  int64_t rank = resultType.getRank();
  // Dims: result dims (batch..., m, n), then k.
  int64_t numDims = rank + 1;
  auto operandMap = [&](RankedTensorType t, bool isLhs) {
    SmallVector<AffineExpr> exprs;
    int64_t offset = rank - t.getRank();
    for (int64_t d = 0; d < t.getRank() - 2; ++d) {
      int64_t od = d + offset;
      exprs.push_back(t.getDimSize(d) == 1 && resultType.getDimSize(od) != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(od));
    }
    if (isLhs) {
      exprs.push_back(b.getAffineDimExpr(rank - 2));
      exprs.push_back(b.getAffineDimExpr(rank));
    } else {
      exprs.push_back(b.getAffineDimExpr(rank));
      exprs.push_back(b.getAffineDimExpr(rank - 1));
    }
    return AffineMap::get(numDims, 0, exprs, b.getContext());
  };
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = filledTensor(b, loc, resultType,
                            scalarConstant(b, loc, b.getI32Type(), 0));
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{lhs, rhs},
             ValueRange{init},
             {operandMap(lt, true), operandMap(rt, false),
              AffineMap::get(numDims, 0, outExprs, b.getContext())},
             iterators,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value a = widen(b, loc, args[0], sign.lhsUnsigned);
               Value c = widen(b, loc, args[1], sign.rhsUnsigned);
               if (lhsZp)
                 a = arith::SubIOp::create(b, loc, a, lhsZp);
               if (rhsZp)
                 c = arith::SubIOp::create(b, loc, c, rhsZp);
               Value product = arith::MulIOp::create(b, loc, a, c);
               linalg::YieldOp::create(
                   b, loc,
                   ValueRange{arith::AddIOp::create(b, loc, args[2], product)});
             })
      .getResult(0);
}

/// The result shape is the numpy matmul shape of two operands of rank >= 2.
static bool matmulShapesFit(RankedTensorType lhs, RankedTensorType rhs,
                            RankedTensorType result) {
  if (lhs.getRank() < 2 || rhs.getRank() < 2 ||
      result.getRank() != std::max(lhs.getRank(), rhs.getRank()))
    return false;
  int64_t rank = result.getRank();
  if (lhs.getDimSize(lhs.getRank() - 1) != rhs.getDimSize(rhs.getRank() - 2) ||
      result.getDimSize(rank - 2) != lhs.getDimSize(lhs.getRank() - 2) ||
      result.getDimSize(rank - 1) != rhs.getDimSize(rhs.getRank() - 1))
    return false;
  for (RankedTensorType t : {lhs, rhs})
    for (int64_t d = 0; d < t.getRank() - 2; ++d) {
      int64_t size = t.getDimSize(d),
              out = result.getDimSize(d + rank - t.getRank());
      if (size != out && size != 1)
        return false;
    }
  return true;
}

static Value extractZp(OpBuilder &b, Location loc, Value zp, bool isUnsigned) {
  return widen(b, loc, extractFirst(b, loc, zp), isUnsigned);
}

static Lowering lowerMatMulInteger(graph::MatMulIntegerOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto lhs = tensorTypeOf(op.getLhs()), rhs = tensorTypeOf(op.getRhs());
  if (!matmulShapesFit(lhs, rhs, tensorTypeOf(op.getOutput())))
    return nullptr;
  for (Value zp : {op.getLhsZeroPoint(), op.getRhsZeroPoint()})
    if (zp && !isScalarLike(zp))
      return nullptr;
  IntOperands sign{lhs.getElementType().isUnsignedInteger(),
                   rhs.getElementType().isUnsignedInteger()};
  bool hasLhsZp = bool(op.getLhsZeroPoint());
  bool hasRhsZp = bool(op.getRhsZeroPoint());
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value lhsZp, rhsZp;
    unsigned next = 2;
    if (hasLhsZp)
      lhsZp = extractZp(b, loc, operands[next++], sign.lhsUnsigned);
    if (hasRhsZp)
      rhsZp = extractZp(b, loc, operands[next++], sign.rhsUnsigned);
    return buildIntMatmul(b, loc, operands[0], operands[1], lhsZp, rhsZp, sign,
                          type);
  });
}

/// y = saturate(round(acc * multiplier) + zp) for an i32 accumulator tensor;
/// `multiplier` is an f32 scalar, or an f32 1-D tensor along `axis`.
static Value requantize(OpBuilder &b, Location loc, Value acc, Value multiplier,
                        int64_t axis, Value zp, bool isUnsigned,
                        RankedTensorType type) {
  int64_t rank = type.getRank();
  bool perAxis = isa<RankedTensorType>(multiplier.getType());
  SmallVector<Value> inputs{acc};
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  if (perAxis) {
    inputs.push_back(multiplier);
    maps.push_back(
        AffineMap::get(rank, 0, b.getAffineDimExpr(axis), b.getContext()));
  }
  return buildIndexedGeneric(
      b, loc, type, inputs, maps,
      [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
        Value m = perAxis ? args[1] : multiplier;
        Value x = arith::MulFOp::create(b, loc, intToF32(b, loc, args[0]), m);
        return saturate8(b, loc, x, zp, isUnsigned);
      });
}

static Lowering lowerQLinearMatMul(graph::QLinearMatMulOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto lhs = tensorTypeOf(op.getLhs()), rhs = tensorTypeOf(op.getRhs());
  if (!matmulShapesFit(lhs, rhs, tensorTypeOf(op.getOutput())))
    return nullptr;
  for (Value v :
       {op.getLhsScale(), op.getLhsZeroPoint(), op.getRhsScale(),
        op.getRhsZeroPoint(), op.getOutputScale(), op.getOutputZeroPoint()})
    if (!isScalarLike(v))
      return nullptr;
  IntOperands sign{lhs.getElementType().isUnsignedInteger(),
                   rhs.getElementType().isUnsignedInteger()};
  bool outUnsigned = getElementTypeOrSelf(op.getOutput()).isUnsignedInteger();
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value lhsZp = extractZp(b, loc, operands[2], sign.lhsUnsigned);
    Value rhsZp = extractZp(b, loc, operands[5], sign.rhsUnsigned);
    auto accType = RankedTensorType::get(type.getShape(), b.getI32Type());
    Value acc = buildIntMatmul(b, loc, operands[0], operands[3], lhsZp, rhsZp,
                               sign, accType);
    Value multiplier = arith::DivFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, extractFirst(b, loc, operands[1]),
                              extractFirst(b, loc, operands[4])),
        extractFirst(b, loc, operands[6]));
    Value zp = intToF32(b, loc, extractZp(b, loc, operands[7], outUnsigned));
    return requantize(b, loc, acc, multiplier, 0, zp, outUnsigned, type);
  });
}

//===----------------------------------------------------------------------===//
// Integer convolution
//===----------------------------------------------------------------------===//

namespace {
struct ConvGeometry {
  SmallVector<int64_t> strides, dilations, pads;
  int64_t group;
};
} // namespace

template <typename OpTy>
static std::optional<ConvGeometry> convGeometry(OpTy op, RankedTensorType x,
                                                RankedTensorType w,
                                                RankedTensorType y) {
  int64_t spatial = x.getRank() - 2;
  if (spatial < 1 || w.getRank() != x.getRank() || y.getRank() != x.getRank())
    return std::nullopt;
  if (op.getAutoPad() != "NOTSET" && op.getAutoPad() != "VALID")
    return std::nullopt;
  ConvGeometry g;
  g.strides.assign(spatial, 1);
  g.dilations.assign(spatial, 1);
  g.pads.assign(2 * spatial, 0);
  if (auto s = op.getStrides())
    g.strides = llvm::to_vector(*s);
  if (auto d = op.getDilations())
    g.dilations = llvm::to_vector(*d);
  if (auto p = op.getPads(); p && op.getAutoPad() == "NOTSET")
    g.pads = llvm::to_vector(*p);
  g.group = int64_t(op.getGroup());
  if (int64_t(g.strides.size()) != spatial ||
      int64_t(g.dilations.size()) != spatial ||
      int64_t(g.pads.size()) != 2 * spatial || g.group < 1 ||
      x.getDimSize(1) % g.group != 0 || w.getDimSize(0) % g.group != 0 ||
      w.getDimSize(1) * g.group != x.getDimSize(1) ||
      y.getDimSize(1) != w.getDimSize(0) || y.getDimSize(0) != x.getDimSize(0))
    return std::nullopt;
  for (int64_t s = 0; s < spatial; ++s) {
    int64_t extent = x.getDimSize(2 + s) + g.pads[s] + g.pads[s + spatial] -
                     g.dilations[s] * (w.getDimSize(2 + s) - 1) - 1;
    if (g.strides[s] < 1 || extent < 0 ||
        y.getDimSize(2 + s) != extent / g.strides[s] + 1)
      return std::nullopt;
  }
  return g;
}

/// sum (x - xzp) * (w - wzp) over the window in i32; padding contributes
/// nothing (it holds the zero point). `wZp` is an i32 scalar, a 1-D tensor
/// per output channel, or null.
static Value buildIntConv(OpBuilder &b, Location loc, Value x, Value w,
                          Value xZp, Value wZp, IntOperands sign,
                          const ConvGeometry &g, RankedTensorType resultType) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  int64_t rank = xt.getRank(), spatial = rank - 2;
  // Dims: n, m, o..., c, k...
  int64_t numDims = rank + 1 + spatial;
  auto dim = [&](int64_t d) { return b.getAffineDimExpr(d); };
  SmallVector<AffineExpr> wExprs{dim(1), dim(rank)};
  for (int64_t s = 0; s < spatial; ++s)
    wExprs.push_back(dim(rank + 1 + s));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(dim(d));
  SmallVector<Value> inputs{w};
  SmallVector<AffineMap> maps{
      AffineMap::get(numDims, 0, wExprs, b.getContext())};
  bool perChannelZp = wZp && isa<RankedTensorType>(wZp.getType());
  if (perChannelZp) {
    inputs.push_back(wZp);
    maps.push_back(AffineMap::get(numDims, 0, dim(1), b.getContext()));
  }
  maps.push_back(AffineMap::get(numDims, 0, outExprs, b.getContext()));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(1 + spatial, utils::IteratorType::reduction);
  Value init = filledTensor(b, loc, resultType,
                            scalarConstant(b, loc, b.getI32Type(), 0));
  int64_t outPerGroup = wt.getDimSize(0) / g.group;
  int64_t inPerGroup = wt.getDimSize(1);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
             iterators,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value n = linalg::IndexOp::create(b, loc, 0);
               Value m = linalg::IndexOp::create(b, loc, 1);
               Value c = linalg::IndexOp::create(b, loc, rank);
               // Input channel: group of m, then c within it.
               Value channel = arith::AddIOp::create(
                   b, loc,
                   arith::MulIOp::create(
                       b, loc,
                       arith::DivUIOp::create(
                           b, loc, m, indexConstant(b, loc, outPerGroup)),
                       indexConstant(b, loc, inPerGroup)),
                   c);
               SmallVector<Value> at{n, channel};
               Value inside;
               for (int64_t s = 0; s < spatial; ++s) {
                 Value o = linalg::IndexOp::create(b, loc, 2 + s);
                 Value k = linalg::IndexOp::create(b, loc, rank + 1 + s);
                 Value pos = arith::AddIOp::create(
                     b, loc,
                     arith::MulIOp::create(b, loc, o,
                                           indexConstant(b, loc, g.strides[s])),
                     arith::MulIOp::create(
                         b, loc, k, indexConstant(b, loc, g.dilations[s])));
                 pos = arith::SubIOp::create(b, loc, pos,
                                             indexConstant(b, loc, g.pads[s]));
                 int64_t size = xt.getDimSize(2 + s);
                 Value both = arith::AndIOp::create(
                     b, loc,
                     arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                           pos, indexConstant(b, loc, 0)),
                     arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           pos, indexConstant(b, loc, size)));
                 inside = inside ? arith::AndIOp::create(b, loc, inside, both)
                                 : both;
                 at.push_back(clampIndex(b, loc, pos, size));
               }
               Value xv =
                   widen(b, loc, tensor::ExtractOp::create(b, loc, x, at),
                         sign.lhsUnsigned);
               if (xZp)
                 xv = arith::SubIOp::create(b, loc, xv, xZp);
               Value wv = widen(b, loc, args[0], sign.rhsUnsigned);
               if (perChannelZp)
                 wv = arith::SubIOp::create(
                     b, loc, wv, widen(b, loc, args[1], sign.rhsUnsigned));
               else if (wZp)
                 wv = arith::SubIOp::create(b, loc, wv, wZp);
               Value product = arith::MulIOp::create(b, loc, xv, wv);
               product = arith::SelectOp::create(
                   b, loc, inside, product,
                   scalarConstant(b, loc, b.getI32Type(), 0));
               linalg::YieldOp::create(b, loc,
                                       ValueRange{arith::AddIOp::create(
                                           b, loc, args.back(), product)});
             })
      .getResult(0);
}

/// A weight zero point or scale: one element, or one per output channel.
static bool perChannelOk(Value v, int64_t channels) {
  auto t = staticTensorType(v);
  return t && (t.getNumElements() == 1 ||
               (t.getRank() == 1 && t.getDimSize(0) == channels));
}

static Lowering lowerConvInteger(graph::ConvIntegerOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto x = tensorTypeOf(op.getInput()), w = tensorTypeOf(op.getWeight());
  auto y = tensorTypeOf(op.getOutput());
  auto geometry = convGeometry(op, x, w, y);
  if (!geometry)
    return nullptr;
  if (op.getKernelShape() &&
      ArrayRef<int64_t>(*op.getKernelShape()) != w.getShape().drop_front(2))
    return nullptr;
  if (op.getInputZeroPoint() && !isScalarLike(op.getInputZeroPoint()))
    return nullptr;
  if (op.getWeightZeroPoint() &&
      !perChannelOk(op.getWeightZeroPoint(), w.getDimSize(0)))
    return nullptr;
  IntOperands sign{x.getElementType().isUnsignedInteger(),
                   w.getElementType().isUnsignedInteger()};
  bool hasXZp = bool(op.getInputZeroPoint());
  bool hasWZp = bool(op.getWeightZeroPoint());
  bool wZpScalar = hasWZp && isScalarLike(op.getWeightZeroPoint());
  ConvGeometry g = *geometry;
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value xZp, wZp;
    unsigned next = 2;
    if (hasXZp)
      xZp = extractZp(b, loc, operands[next++], sign.lhsUnsigned);
    if (hasWZp) {
      wZp = operands[next++];
      if (wZpScalar)
        wZp = extractZp(b, loc, wZp, sign.rhsUnsigned);
    }
    return buildIntConv(b, loc, operands[0], operands[1], xZp, wZp, sign, g,
                        type);
  });
}

static Lowering lowerQLinearConv(graph::QLinearConvOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto x = tensorTypeOf(op.getInput()), w = tensorTypeOf(op.getWeight());
  auto y = tensorTypeOf(op.getOutput());
  auto geometry = convGeometry(op, x, w, y);
  if (!geometry)
    return nullptr;
  if (op.getKernelShape() &&
      ArrayRef<int64_t>(*op.getKernelShape()) != w.getShape().drop_front(2))
    return nullptr;
  int64_t channels = w.getDimSize(0);
  for (Value v : {op.getInputScale(), op.getInputZeroPoint(),
                  op.getOutputScale(), op.getOutputZeroPoint()})
    if (!isScalarLike(v))
      return nullptr;
  if (!perChannelOk(op.getWeightScale(), channels) ||
      !perChannelOk(op.getWeightZeroPoint(), channels) ||
      (op.getBias() && !perChannelOk(op.getBias(), channels)))
    return nullptr;
  IntOperands sign{x.getElementType().isUnsignedInteger(),
                   w.getElementType().isUnsignedInteger()};
  bool outUnsigned = y.getElementType().isUnsignedInteger();
  bool wZpScalar = isScalarLike(op.getWeightZeroPoint());
  bool wScaleScalar = isScalarLike(op.getWeightScale());
  bool hasBias = bool(op.getBias());
  ConvGeometry g = *geometry;
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value xZp = extractZp(b, loc, operands[2], sign.lhsUnsigned);
    Value wZp = operands[5];
    if (wZpScalar)
      wZp = extractZp(b, loc, wZp, sign.rhsUnsigned);
    auto accType = RankedTensorType::get(type.getShape(), b.getI32Type());
    Value acc = buildIntConv(b, loc, operands[0], operands[3], xZp, wZp, sign,
                             g, accType);
    int64_t rank = type.getRank();
    if (hasBias) {
      Value bias = operands[8];
      AffineMap biasMap = AffineMap::get(
          rank, 0,
          isScalarLike(bias) &&
                  cast<RankedTensorType>(bias.getType()).getDimSize(0) !=
                      channels
              ? b.getAffineConstantExpr(0)
              : b.getAffineDimExpr(1),
          b.getContext());
      acc = buildIndexedGeneric(
          b, loc, accType, ValueRange{acc, bias},
          {b.getMultiDimIdentityMap(rank), biasMap},
          [](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
            return arith::AddIOp::create(b, loc, args[0], args[1]);
          });
    }
    // multiplier = x_scale * w_scale / y_scale, per output channel when
    // the weight scale is.
    Value xScale = extractFirst(b, loc, operands[1]);
    Value yScale = extractFirst(b, loc, operands[6]);
    Value zp = intToF32(b, loc, extractZp(b, loc, operands[7], outUnsigned));
    if (wScaleScalar) {
      Value multiplier = arith::DivFOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, xScale,
                                extractFirst(b, loc, operands[4])),
          yScale);
      return requantize(b, loc, acc, multiplier, 1, zp, outUnsigned, type);
    }
    auto perChannel = RankedTensorType::get({channels}, b.getF32Type());
    Value multipliers = buildIndexedGeneric(
        b, loc, perChannel, operands[4], b.getMultiDimIdentityMap(1),
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
          return arith::DivFOp::create(
              b, loc, arith::MulFOp::create(b, loc, xScale, args[0]), yScale);
        });
    return requantize(b, loc, acc, multipliers, 1, zp, outUnsigned, type);
  });
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Lowering special::getQuantLowering(Operation *op) {
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case([](graph::QuantizeLinearOp op) { return lowerQuantize(op); })
      .Case([](graph::DequantizeLinearOp op) { return lowerDequantize(op); })
      .Case([](graph::DynamicQuantizeLinearOp op) {
        return lowerDynamicQuantize(op);
      })
      .Case([](graph::MatMulIntegerOp op) { return lowerMatMulInteger(op); })
      .Case([](graph::QLinearMatMulOp op) { return lowerQLinearMatMul(op); })
      .Case([](graph::ConvIntegerOp op) { return lowerConvInteger(op); })
      .Case([](graph::QLinearConvOp op) { return lowerQLinearConv(op); })
      .Default([](Operation *) { return nullptr; });
}
