//===- Sampling.cpp - resize and grid sample to linalg ----------*- C++ -*-===//
//
// Resize: shapes, scales and the region of interest are constants by the
// time kernels are generated, so where each output coordinate reads from is
// computed here, in double precision exactly as ONNX's reference does, and
// embedded as constant tables: per resized axis, the input index and weight
// of each of its taps (1 for nearest, 2 for linear, 4 for cubic) for every
// output position. The kernel is one linalg.generic whose reduction dims
// walk the taps of the resized axes, reading the input with tensor.extract;
// an axis that is not resized reads the output position directly.
//
// Grid sample and roi align read their coordinates from tensors, so their
// interpolation is computed in the kernel.
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

#include <cmath>
#include <tuple>

using namespace mlir;
using namespace strata::detail;
using namespace strata::detail::special;
namespace graph = strata::graph;

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

namespace {

/// How one axis is resampled.
struct ResizeAxis {
  /// Taps per output position; 0 when the axis is copied unchanged.
  int64_t taps = 0;
  /// Input index and weight of tap t of output position o at o * taps + t
  /// (for nearest, the weight is unused).
  SmallVector<double> index, weight;
  /// Output positions outside the input (tf_crop_and_resize), which take
  /// the extrapolation value.
  SmallVector<double> outside;
  bool anyOutside = false;
};

struct ResizeParams {
  std::string mode, transform, nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false;
};

} // namespace

static double cubicWeight(double a, double d) {
  d = std::fabs(d);
  if (d <= 1)
    return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2)
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

/// The taps of one axis: `scale` is the given scale, or out / in for sizes.
static ResizeAxis planResizeAxis(const ResizeParams &p, int64_t in, int64_t out,
                                 double scale, double roiStart, double roiEnd) {
  ResizeAxis axis;
  int64_t taps = p.mode == "nearest" ? 1 : p.mode == "linear" ? 2 : 4;
  // An axis that maps every output position onto the same input position
  // needs no taps.
  bool identity = in == out && scale == 1.0 &&
                  p.transform != "tf_crop_and_resize" &&
                  p.transform != "tf_half_pixel_for_nn";
  if (identity)
    return axis;
  axis.taps = taps;
  double outWidth = scale * double(in);
  for (int64_t o = 0; o < out; ++o) {
    double x = double(o), src;
    bool outside = false;
    const std::string &t = p.transform;
    if (t == "align_corners") {
      src = outWidth == 1 ? 0.0 : x * double(in - 1) / (outWidth - 1);
    } else if (t == "asymmetric") {
      src = x / scale;
    } else if (t == "tf_crop_and_resize") {
      src = outWidth == 1
                ? (roiEnd - roiStart) * double(in - 1) / 2
                : x * (roiEnd - roiStart) * double(in - 1) / (outWidth - 1);
      src += roiStart * double(in - 1);
      outside = src < 0 || src > double(in - 1);
    } else if (t == "tf_half_pixel_for_nn") {
      src = (x + 0.5) / scale;
    } else if (t == "pytorch_half_pixel") {
      src = outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else {
      src = (x + 0.5) / scale - 0.5;
    }
    axis.outside.push_back(outside ? 1 : 0);
    axis.anyOutside |= outside;
    // The reference prefers the left neighbour: base is the tap left of
    // src and the fraction lies in (0, 1], 1 when src is an integer.
    double base = std::ceil(src) - 1;
    double ratio = src - base;
    auto clamp = [&](double i) {
      return std::min(std::max(i, 0.0), double(in - 1));
    };
    if (p.mode == "nearest") {
      bool right;
      if (ratio == 1)
        right = true;
      else if (p.nearestMode == "round_prefer_ceil")
        right = ratio >= 0.5;
      else if (p.nearestMode == "floor")
        right = false;
      else if (p.nearestMode == "ceil")
        right = true;
      else
        right = ratio > 0.5;
      axis.index.push_back(clamp(base + (right ? 1 : 0)));
      axis.weight.push_back(1);
      continue;
    }
    // Linear taps base, base + 1; cubic base - 1 .. base + 2.
    double first = p.mode == "linear" ? base : base - 1;
    SmallVector<double> w;
    for (int64_t k = 0; k < taps; ++k) {
      double d = src - (first + double(k));
      w.push_back(p.mode == "linear" ? 1 - std::fabs(d)
                                     : cubicWeight(p.cubicA, d));
    }
    if (p.excludeOutside) {
      double sum = 0;
      for (int64_t k = 0; k < taps; ++k) {
        double i = first + double(k);
        if (i < 0 || i > double(in - 1))
          w[k] = 0;
        sum += w[k];
      }
      for (double &v : w)
        v /= sum;
    }
    for (int64_t k = 0; k < taps; ++k) {
      axis.index.push_back(clamp(first + double(k)));
      axis.weight.push_back(w[k]);
    }
  }
  return axis;
}

namespace {
/// f64 scalar arithmetic for the run-time resize tables.
struct F64Math {
  OpBuilder &b;
  Location loc;
  Value c(double v) { return scalarConstant(b, loc, b.getF64Type(), v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value cmp(arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, predicate, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value clamp(Value x, double lo, double hi) {
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, x, c(lo)), c(hi));
  }
};
} // namespace

/// The tables of one axis computed in the kernel, for scales or a region
/// of interest known only at run time: the arithmetic of planResizeAxis
/// (same order of operations, in f64) as a generic over (out, taps) with
/// three results: index (i64), weight (`element`) and outside (i1).
static SmallVector<Value> buildResizeTables(OpBuilder &b, Location loc,
                                            const ResizeParams &p, int64_t in,
                                            int64_t out, int64_t taps,
                                            Value scale, Value roiStart,
                                            Value roiEnd, Type element) {
  SmallVector<Type> types{RankedTensorType::get({out, taps}, b.getI64Type()),
                          RankedTensorType::get({out, taps}, element),
                          RankedTensorType::get({out, taps}, b.getI1Type())};
  SmallVector<Value> inits;
  for (Type type : types) {
    auto tensor = cast<RankedTensorType>(type);
    inits.push_back(tensor::EmptyOp::create(b, loc, tensor.getShape(),
                                            tensor.getElementType()));
  }
  SmallVector<AffineMap> maps(3, b.getMultiDimIdentityMap(2));
  auto generic = linalg::GenericOp::create(
      b, loc, types, ValueRange{}, inits, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange) {
        F64Math m{b, loc};
        using P = arith::CmpFPredicate;
        auto toF64 = [&](Value index) -> Value {
          return arith::SIToFPOp::create(
              b, loc, b.getF64Type(),
              arith::IndexCastOp::create(b, loc, b.getI64Type(), index));
        };
        Value x = toF64(linalg::IndexOp::create(b, loc, 0));
        Value t = toF64(linalg::IndexOp::create(b, loc, 1));
        Value inF = m.c(double(in)), last = m.c(double(in - 1));
        Value outWidth = m.mul(scale, inF);
        Value single = m.cmp(P::OEQ, outWidth, m.c(1));
        Value halfPixel = m.sub(m.div(m.add(x, m.c(0.5)), scale), m.c(0.5));
        Value src;
        Value outside = arith::ConstantIntOp::create(b, loc, 0, 1);
        const std::string &mode = p.transform;
        if (mode == "align_corners") {
          src = m.select(single, m.c(0),
                         m.div(m.mul(x, last), m.sub(outWidth, m.c(1))));
        } else if (mode == "asymmetric") {
          src = m.div(x, scale);
        } else if (mode == "tf_crop_and_resize") {
          Value extent = m.sub(roiEnd, roiStart);
          src = m.select(
              single, m.div(m.mul(extent, last), m.c(2)),
              m.div(m.mul(m.mul(x, extent), last), m.sub(outWidth, m.c(1))));
          src = m.add(src, m.mul(roiStart, last));
          outside = arith::OrIOp::create(b, loc, m.cmp(P::OLT, src, m.c(0)),
                                         m.cmp(P::OGT, src, last));
        } else if (mode == "tf_half_pixel_for_nn") {
          src = m.div(m.add(x, m.c(0.5)), scale);
        } else if (mode == "pytorch_half_pixel") {
          src = m.select(single, m.c(-0.5), halfPixel);
        } else {
          src = halfPixel;
        }
        Value base = m.sub(math::CeilOp::create(b, loc, src), m.c(1));
        Value ratio = m.sub(src, base);
        Value index, weight;
        if (p.mode == "nearest") {
          Value onInput = m.cmp(P::OEQ, ratio, m.c(1));
          Value right;
          if (p.nearestMode == "round_prefer_ceil")
            right = m.cmp(P::OGE, ratio, m.c(0.5));
          else if (p.nearestMode == "floor")
            right = onInput;
          else if (p.nearestMode == "ceil")
            right = arith::ConstantIntOp::create(b, loc, 1, 1);
          else
            right = m.cmp(P::OGT, ratio, m.c(0.5));
          right = arith::OrIOp::create(b, loc, right, onInput);
          index = m.add(base, m.select(right, m.c(1), m.c(0)));
          weight = m.c(1);
        } else {
          Value first = p.mode == "linear" ? base : m.sub(base, m.c(1));
          auto tapWeight = [&](Value pos) -> Value {
            Value d = math::AbsFOp::create(b, loc, m.sub(src, pos));
            if (p.mode == "linear")
              return m.sub(m.c(1), d);
            double a = p.cubicA;
            Value nearW = m.add(
                m.mul(m.mul(m.sub(m.mul(m.c(a + 2), d), m.c(a + 3)), d), d),
                m.c(1));
            Value farW =
                m.sub(m.mul(m.add(m.mul(m.sub(m.mul(m.c(a), d), m.c(5 * a)), d),
                                  m.c(8 * a)),
                            d),
                      m.c(4 * a));
            return m.select(m.cmp(P::OLE, d, m.c(1)), nearW,
                            m.select(m.cmp(P::OLT, d, m.c(2)), farW, m.c(0)));
          };
          auto inRange = [&](Value pos) -> Value {
            return arith::AndIOp::create(b, loc, m.cmp(P::OGE, pos, m.c(0)),
                                         m.cmp(P::OLE, pos, last));
          };
          index = m.add(first, t);
          weight = tapWeight(index);
          if (p.excludeOutside) {
            Value sum = m.c(0);
            for (int64_t k = 0; k < taps; ++k) {
              Value pos = m.add(first, m.c(double(k)));
              sum = m.add(sum, m.select(inRange(pos), tapWeight(pos), m.c(0)));
            }
            weight = m.select(inRange(index), m.div(weight, sum), m.c(0));
          }
        }
        Value clamped = m.clamp(index, 0, double(in - 1));
        linalg::YieldOp::create(
            b, loc,
            ValueRange{arith::FPToSIOp::create(b, loc, b.getI64Type(), clamped),
                       convertNumeric(b, loc, weight, element), outside});
      });
  return generic.getResults();
}

namespace {
/// What lowerResize decides from a Resize's attributes and operand types:
/// each axis's resampling (planResizeAxis), or, where the scales or the
/// region of interest are known only at run time, which axes the kernel
/// resamples with tables it computes itself.
struct ResizePlan {
  ResizeParams p;
  RankedTensorType input;
  int64_t rank = 0, taps = 1;
  bool crop = false, nearest = false;
  SmallVector<double> scales, roi;
  bool runtimeScales = false, runtimeRoi = false;
  SmallVector<ResizeAxis> axes;
  double extrapolation = 0;
  /// Operand positions (AttrSizedOperandSegments: input, roi?, scales?,
  /// sizes?).
  static constexpr unsigned kRoiOperand = 1;
  unsigned scalesOperand = 1;
  bool runtime() const { return runtimeScales || runtimeRoi; }
};

/// Per resized axis, its taps' indices, weights and outside flags.
struct ResizeTables {
  SmallVector<Value> index, weight, outside;
};
} // namespace

/// The plan of a Resize this pass lowers, or std::nullopt: a mode,
/// coordinate transformation or element type it does not take, dynamic
/// shapes, or scales and a region of interest of unusable types.
static std::optional<ResizePlan> planResize(graph::ResizeOp op) {
  ResizePlan plan;
  ResizeParams &p = plan.p;
  auto input = staticTensorType(op.getInput());
  auto result = staticTensorType(op.getOutput());
  if (!input || !result || input.getRank() != result.getRank() ||
      input.getRank() == 0)
    return std::nullopt;
  plan.input = input;
  p.mode = op.getMode().str();
  p.transform = op.getCoordinateTransformationMode().str();
  p.nearestMode = op.getNearestMode().str();
  p.cubicA = op.getCubicCoeffA().convertToDouble();
  p.excludeOutside = op.getExcludeOutside() != 0;
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    return std::nullopt;
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_crop_and_resize",
                           "tf_half_pixel_for_nn"},
                          p.transform))
    return std::nullopt;
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          p.nearestMode))
    return std::nullopt;
  Type element = input.getElementType();
  if (p.mode == "nearest" ? !isMovableScalar(element)
                          : !(element.isF32() || element.isF64()))
    return std::nullopt;
  int64_t rank = plan.rank = input.getRank();
  for (int64_t d = 0; d < rank; ++d)
    if (input.getDimSize(d) == 0 && result.getDimSize(d) != 0)
      return std::nullopt;
  plan.taps = p.mode == "nearest" ? 1 : p.mode == "linear" ? 2 : 4;
  plan.crop = p.transform == "tf_crop_and_resize";

  // Scales, when given (and not empty), decide the coordinate mapping;
  // otherwise the sizes, which the static result shape holds. Scales and
  // the region of interest may be known only at run time (ONNX's tests pass
  // them as inputs): then the tables are computed in the kernel.
  auto staticF32 = [&](Value v, int64_t n) {
    auto type = v ? staticTensorType(v) : RankedTensorType();
    return type && type.getNumElements() == n &&
           isComputeFloat(type.getElementType());
  };
  SmallVector<double> &scales = plan.scales;
  if (op.getScales() && staticTensorType(op.getScales()) &&
      staticTensorType(op.getScales()).getNumElements() > 0) {
    if (auto given = constantFloats(op.getScales()))
      scales = *given;
    else if (staticF32(op.getScales(), rank))
      plan.runtimeScales = true;
    else
      return std::nullopt;
  }
  if (scales.empty() && !plan.runtimeScales) {
    if (!op.getSizes())
      return std::nullopt;
    for (int64_t d = 0; d < rank; ++d)
      scales.push_back(input.getDimSize(d) == 0
                           ? 1.0
                           : double(result.getDimSize(d)) /
                                 double(input.getDimSize(d)));
  }
  if (!plan.runtimeScales &&
      (int64_t(scales.size()) != rank ||
       llvm::any_of(scales, [](double s) { return !(s > 0); })))
    return std::nullopt;
  SmallVector<double> &roi = plan.roi;
  roi.assign(2 * rank, 0.0);
  if (plan.crop) {
    if (!op.getRoi())
      return std::nullopt;
    if (auto given = constantFloats(op.getRoi())) {
      if (int64_t(given->size()) != 2 * rank)
        return std::nullopt;
      roi = *given;
    } else if (staticF32(op.getRoi(), 2 * rank)) {
      plan.runtimeRoi = true;
    } else {
      return std::nullopt;
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!plan.runtime()) {
      plan.axes.push_back(planResizeAxis(p, input.getDimSize(d),
                                         result.getDimSize(d), scales[d],
                                         roi[d], roi[d + rank]));
      continue;
    }
    // Computed in the kernel: every axis is resampled unless its scale is
    // known to be 1 with nothing else moving it.
    ResizeAxis axis;
    bool identity = !plan.runtimeScales && scales[d] == 1.0 &&
                    input.getDimSize(d) == result.getDimSize(d) && !plan.crop &&
                    p.transform != "tf_half_pixel_for_nn";
    axis.taps = identity ? 0 : plan.taps;
    axis.anyOutside = !identity && plan.crop;
    plan.axes.push_back(axis);
  }
  plan.extrapolation = op.getExtrapolationValue().convertToDouble();
  plan.nearest = p.mode == "nearest";
  plan.scalesOperand = op.getRoi() ? 2 : 1;
  return plan;
}

/// The tables of the resized axes: constants where the plan has them, else
/// computed in the kernel from the scales and region of interest.
static ResizeTables resizeTables(const ResizePlan &plan, OpBuilder &b,
                                 Location loc, ValueRange operands,
                                 RankedTensorType type,
                                 ArrayRef<int64_t> resized) {
  const ResizeParams &p = plan.p;
  int64_t rank = plan.rank;
  Type element = type.getElementType();
  Type tableElement = isa<FloatType>(element) ? element : b.getF32Type();
  ResizeTables tables;
  for (int64_t d : resized) {
    int64_t in = plan.input.getDimSize(d), out = type.getDimSize(d);
    const ResizeAxis &axis = plan.axes[d];
    if (!plan.runtime()) {
      SmallVector<int64_t> shape{out, axis.taps};
      tables.index.push_back(
          denseConstant(b, loc, shape, b.getI64Type(), axis.index));
      tables.weight.push_back(
          denseConstant(b, loc, shape, tableElement, axis.weight));
      tables.outside.push_back(
          denseConstant(b, loc, {out, 1}, b.getI1Type(), axis.outside));
      continue;
    }
    auto readF64 = [&](Value tensor, int64_t i) {
      Value v = tensor::ExtractOp::create(b, loc, tensor,
                                          ValueRange{indexConstant(b, loc, i)});
      return convertNumeric(b, loc, v, b.getF64Type());
    };
    Value scale = plan.runtimeScales
                      ? readF64(operands[plan.scalesOperand], d)
                      : scalarConstant(b, loc, b.getF64Type(), plan.scales[d]);
    Value roiStart, roiEnd;
    if (plan.crop) {
      roiStart = plan.runtimeRoi
                     ? readF64(operands[ResizePlan::kRoiOperand], d)
                     : scalarConstant(b, loc, b.getF64Type(), plan.roi[d]);
      roiEnd = plan.runtimeRoi
                   ? readF64(operands[ResizePlan::kRoiOperand], d + rank)
                   : scalarConstant(b, loc, b.getF64Type(), plan.roi[d + rank]);
    }
    SmallVector<Value> built = buildResizeTables(
        b, loc, p, in, out, axis.taps, scale, roiStart, roiEnd, tableElement);
    tables.index.push_back(built[0]);
    tables.weight.push_back(built[1]);
    tables.outside.push_back(built[2]);
  }
  return tables;
}

/// The resampled values: each output element read from its nearest input
/// element, or the weighted sum of its taps (a reduction over one tap
/// dimension per resized axis).
static Value resample(const ResizePlan &plan, OpBuilder &b, Location loc,
                      Value data, RankedTensorType type,
                      ArrayRef<int64_t> resized, const ResizeTables &tables) {
  int64_t rank = plan.rank;
  Type element = type.getElementType();
  auto readInput = [&](OpBuilder &b, Location loc, ValueRange ivs,
                       ArrayRef<Value> tapIndices) -> Value {
    SmallVector<Value> at(ivs.take_front(rank));
    for (auto [k, d] : llvm::enumerate(resized))
      at[d] = toIndex(b, loc, tapIndices[k]);
    return tensor::ExtractOp::create(b, loc, data, at);
  };
  if (plan.nearest) {
    SmallVector<AffineMap> maps;
    for (int64_t d : resized)
      // (o_d, 0): the single tap.
      maps.push_back(AffineMap::get(
          rank, 0, {b.getAffineDimExpr(d), b.getAffineConstantExpr(0)},
          b.getContext()));
    return buildIndexedGeneric(b, loc, type, tables.index, maps,
                               [&](OpBuilder &b, Location loc, ValueRange ivs,
                                   ValueRange args) -> Value {
                                 return readInput(b, loc, ivs,
                                                  llvm::to_vector(args));
                               });
  }
  // Dims: the output dims, then one tap dim per resized axis.
  int64_t numDims = rank + int64_t(resized.size());
  SmallVector<AffineMap> maps;
  for (int pass = 0; pass < 2; ++pass)
    for (auto [k, d] : llvm::enumerate(resized))
      maps.push_back(AffineMap::get(
          numDims, 0,
          {b.getAffineDimExpr(d), b.getAffineDimExpr(rank + int64_t(k))},
          b.getContext()));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  maps.push_back(AffineMap::get(numDims, 0, outExprs, b.getContext()));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(resized.size(), utils::IteratorType::reduction);
  SmallVector<Value> inputs(tables.index);
  inputs.append(tables.weight);
  Value init = filledTensor(b, loc, type, scalarConstant(b, loc, element, 0));
  size_t n = resized.size();
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iterators,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               SmallVector<Value> ivs;
               for (int64_t d = 0; d < rank; ++d)
                 ivs.push_back(linalg::IndexOp::create(b, loc, d));
               Value v =
                   readInput(b, loc, ivs, llvm::to_vector(args.take_front(n)));
               for (size_t k = 0; k < n; ++k)
                 v = arith::MulFOp::create(b, loc, v, args[n + k]);
               Value sum = arith::AddFOp::create(b, loc, args.back(), v);
               linalg::YieldOp::create(b, loc, sum);
             })
      .getResult(0);
}

static Value buildResize(const ResizePlan &plan, OpBuilder &b, Location loc,
                         ValueRange operands, RankedTensorType type) {
  Value data = operands[0];
  int64_t rank = plan.rank;
  Type element = type.getElementType();
  SmallVector<int64_t> resized;
  for (int64_t d = 0; d < rank; ++d)
    if (plan.axes[d].taps)
      resized.push_back(d);
  bool anyOutside = llvm::any_of(
      plan.axes, [](const ResizeAxis &axis) { return axis.anyOutside; });
  // No axis moves (a resize to the input's own size, as VitDet's export
  // resizes its position embeddings): the input itself. The general form
  // below accumulates into its zero-filled init, which without a tap
  // dimension would be an elementwise op reading its own output, and fused
  // into a consumer that broadcasts it, that output is revisited (doubled,
  // then tripled) once per broadcast row.
  if (resized.empty() && !anyOutside)
    return data;
  ResizeTables tables = resizeTables(plan, b, loc, operands, type, resized);
  Value value = resample(plan, b, loc, data, type, resized, tables);
  if (!anyOutside)
    return value;
  // tf_crop_and_resize: positions outside the input on any axis take the
  // extrapolation value.
  SmallVector<Value> flags{value};
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  for (auto [k, d] : llvm::enumerate(resized)) {
    flags.push_back(tables.outside[k]);
    maps.push_back(AffineMap::get(
        rank, 0, {b.getAffineDimExpr(d), b.getAffineConstantExpr(0)},
        b.getContext()));
  }
  Value fill = scalarConstant(b, loc, element, plan.extrapolation);
  return buildIndexedGeneric(
      b, loc, type, flags, maps,
      [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
        Value out = args[1];
        for (Value flag : args.drop_front(2))
          out = arith::OrIOp::create(b, loc, out, flag);
        return arith::SelectOp::create(b, loc, out, fill, args[0]);
      });
}

static Lowering lowerResize(graph::ResizeOp op) {
  std::optional<ResizePlan> plan = planResize(op);
  if (!plan)
    return nullptr;
  return single([plan = std::move(*plan)](OpBuilder &b, Location loc,
                                          ValueRange operands,
                                          RankedTensorType type) -> Value {
    return buildResize(plan, b, loc, operands, type);
  });
}

//===----------------------------------------------------------------------===//
// Grid sample
//===----------------------------------------------------------------------===//

namespace {
/// Scalar f32 helpers for a grid-sample body.
struct GridMath {
  OpBuilder &b;
  Location loc;
  Type f32;
  Value c(double v) { return scalarConstant(b, loc, f32, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value clip(Value x, double lo, double hi) {
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, x, c(lo)), c(hi));
  }
  Value lt(Value x, Value y) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
};
} // namespace

/// Mirrors `x` into [low / 2, high / 2] (PyTorch's reflect_coordinates).
static Value reflect(GridMath &m, Value x, double twiceLow, double twiceHigh) {
  if (twiceLow == twiceHigh)
    return m.c(0);
  double low = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
  Value in = math::AbsFOp::create(m.b, m.loc, m.sub(x, m.c(low)));
  Value flips = m.floor(m.div(in, m.c(span)));
  Value extra = m.sub(in, m.mul(flips, m.c(span)));
  // flips even: low + extra, odd: low + span - extra.
  Value half = m.floor(m.mul(flips, m.c(0.5)));
  Value even = arith::CmpFOp::create(m.b, m.loc, arith::CmpFPredicate::OEQ,
                                     m.mul(half, m.c(2)), flips);
  return m.select(even, m.add(extra, m.c(low)),
                  m.add(m.sub(m.c(span), extra), m.c(low)));
}

static Lowering lowerGridSample(graph::GridSampleOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto grid = cast<RankedTensorType>(op.getGrid().getType());
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  std::string mode = op.getMode().str(), padding = op.getPaddingMode().str();
  if (input.getRank() != 4 || grid.getRank() != 4 || grid.getDimSize(3) != 2 ||
      !input.getElementType().isF32() || !grid.getElementType().isF32() ||
      output.getDimSize(0) != input.getDimSize(0) ||
      output.getDimSize(1) != input.getDimSize(1) ||
      output.getDimSize(2) != grid.getDimSize(1) ||
      output.getDimSize(3) != grid.getDimSize(2) ||
      grid.getDimSize(0) != input.getDimSize(0) || input.getDimSize(2) == 0 ||
      input.getDimSize(3) == 0)
    return nullptr;
  if (!llvm::is_contained({"bilinear", "nearest", "bicubic"}, mode) ||
      !llvm::is_contained({"zeros", "border", "reflection"}, padding))
    return nullptr;
  bool alignCorners = op.getAlignCorners() != 0;
  int64_t height = input.getDimSize(2), width = input.getDimSize(3);
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value data = operands[0];
    auto coordMap = [&](int64_t component) {
      return AffineMap::get(4, 0,
                            {b.getAffineDimExpr(0), b.getAffineDimExpr(2),
                             b.getAffineDimExpr(3),
                             b.getAffineConstantExpr(component)},
                            b.getContext());
    };
    return buildIndexedGeneric(
        b, loc, type, {operands[1], operands[1]}, {coordMap(0), coordMap(1)},
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange args) -> Value {
          GridMath m{b, loc, b.getF32Type()};
          // Normalized [-1, 1] to pixel coordinates.
          auto unnormalize = [&](Value g, int64_t size) {
            if (alignCorners)
              return m.mul(m.mul(m.add(g, m.c(1)), m.c(0.5)),
                           m.c(double(size - 1)));
            return m.mul(
                m.sub(m.mul(m.add(g, m.c(1)), m.c(double(size))), m.c(1)),
                m.c(0.5));
          };
          // The padding mode applied to a coordinate.
          auto pad = [&](Value x, int64_t size) {
            if (padding == "border")
              return m.clip(x, 0, double(size - 1));
            if (padding == "reflection") {
              x = alignCorners ? reflect(m, x, 0, 2.0 * double(size - 1))
                               : reflect(m, x, -1, 2.0 * double(size) - 1);
              return m.clip(x, 0, double(size - 1));
            }
            return x;
          };
          // The input at integer-valued float coordinates, 0 outside.
          auto read = [&](Value y, Value x) -> Value {
            Value inside;
            SmallVector<Value> at{ivs[0], ivs[1]};
            for (auto [v, size] : {std::pair(y, height), std::pair(x, width)}) {
              Value i = arith::FPToSIOp::create(b, loc, b.getI64Type(), v);
              Value idx = toIndex(b, loc, i);
              Value ok = arith::AndIOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, idx,
                                        indexConstant(b, loc, 0)),
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, idx,
                                        indexConstant(b, loc, size)));
              // fptosi truncates toward zero: -0.5 would read index 0.
              ok = arith::AndIOp::create(b, loc, ok, m.lt(m.c(-1), v));
              inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
              at.push_back(clampIndex(b, loc, idx, size));
            }
            Value v = tensor::ExtractOp::create(b, loc, data, at);
            return m.select(inside, v, m.c(0));
          };
          Value x = unnormalize(args[0], width);
          Value y = unnormalize(args[1], height);
          if (mode == "nearest") {
            x = math::RoundEvenOp::create(b, loc, pad(x, width));
            y = math::RoundEvenOp::create(b, loc, pad(y, height));
            return read(y, x);
          }
          if (mode == "bilinear") {
            x = pad(x, width);
            y = pad(y, height);
            Value x0 = m.floor(x), y0 = m.floor(y);
            Value x1 = m.add(x0, m.c(1)), y1 = m.add(y0, m.c(1));
            Value wx1 = m.sub(x, x0), wy1 = m.sub(y, y0);
            Value wx0 = m.sub(m.c(1), wx1), wy0 = m.sub(m.c(1), wy1);
            Value sum = m.mul(m.mul(read(y0, x0), wy0), wx0);
            sum = m.add(sum, m.mul(m.mul(read(y0, x1), wy0), wx1));
            sum = m.add(sum, m.mul(m.mul(read(y1, x0), wy1), wx0));
            return m.add(sum, m.mul(m.mul(read(y1, x1), wy1), wx1));
          }
          // Bicubic (A = -0.75) over the 4x4 neighbourhood; the padding
          // mode applies to each tap.
          const double a = -0.75;
          auto weights = [&](Value t) {
            auto near = [&](Value d) { // |d| <= 1
              return m.add(
                  m.mul(m.mul(m.sub(m.mul(m.c(a + 2), d), m.c(a + 3)), d), d),
                  m.c(1));
            };
            auto far = [&](Value d) { // 1 < |d| < 2
              Value r = m.sub(m.mul(m.c(a), d), m.c(5 * a));
              r = m.add(m.mul(r, d), m.c(8 * a));
              return m.sub(m.mul(r, d), m.c(4 * a));
            };
            Value u = m.sub(m.c(1), t);
            return SmallVector<Value>{far(m.add(t, m.c(1))), near(t), near(u),
                                      far(m.add(u, m.c(1)))};
          };
          Value x0 = m.floor(x), y0 = m.floor(y);
          SmallVector<Value> wx = weights(m.sub(x, x0));
          SmallVector<Value> wy = weights(m.sub(y, y0));
          Value sum = m.c(0);
          for (int64_t i = 0; i < 4; ++i) {
            Value yi = pad(m.add(y0, m.c(double(i - 1))), height);
            Value row = m.c(0);
            for (int64_t j = 0; j < 4; ++j) {
              Value xj = pad(m.add(x0, m.c(double(j - 1))), width);
              row = m.add(row, m.mul(read(yi, xj), wx[j]));
            }
            sum = m.add(sum, m.mul(row, wy[i]));
          }
          return sum;
        });
  });
}

//===----------------------------------------------------------------------===//
// RoiAlign
//===----------------------------------------------------------------------===//

/// Average RoiAlign with a fixed sampling ratio s: one generic over (roi,
/// channel, ph, pw) with two reduction dims over the s x s sample points of
/// each bin, each a bilinear read (onnxruntime's rules at the borders),
/// weighted 1 / (s * s).
static Lowering lowerRoiAlign(graph::RoiAlignOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto rois = cast<RankedTensorType>(op.getRois().getType());
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  int64_t samples = int64_t(op.getSamplingRatio());
  int64_t pooledH = int64_t(op.getOutputHeight());
  int64_t pooledW = int64_t(op.getOutputWidth());
  std::string transform = op.getCoordinateTransformationMode().str();
  if (op.getMode() != "avg" || samples < 1 || input.getRank() != 4 ||
      !input.getElementType().isF32() ||
      rois.getElementType() != input.getElementType() || rois.getRank() != 2 ||
      rois.getDimSize(1) != 4 || output.getRank() != 4 ||
      output.getDimSize(0) != rois.getDimSize(0) ||
      output.getDimSize(1) != input.getDimSize(1) ||
      output.getDimSize(2) != pooledH || output.getDimSize(3) != pooledW ||
      input.getDimSize(0) == 0 || input.getDimSize(2) == 0 ||
      input.getDimSize(3) == 0 ||
      (transform != "half_pixel" && transform != "output_half_pixel"))
    return nullptr;
  double spatialScale = op.getSpatialScale().convertToDouble();
  bool halfPixel = transform == "half_pixel";
  int64_t height = input.getDimSize(2), width = input.getDimSize(3);
  int64_t batches = input.getDimSize(0);
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value x = operands[0], boxes = operands[1], batchIndex = operands[2];
    Type f32 = b.getF32Type();
    Value grid = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{samples, samples}, f32);
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < 4; ++d)
      outExprs.push_back(b.getAffineDimExpr(d));
    SmallVector<AffineMap> maps{
        AffineMap::get(6, 0, {b.getAffineDimExpr(4), b.getAffineDimExpr(5)},
                       b.getContext()),
        AffineMap::get(6, 0, outExprs, b.getContext())};
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    iterators.append(2, utils::IteratorType::reduction);
    Value init = filledTensor(b, loc, type, scalarConstant(b, loc, f32, 0));
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{grid}, ValueRange{init},
               maps, iterators,
               [&](OpBuilder &b, Location loc, ValueRange args) {
                 GridMath m{b, loc, f32};
                 SmallVector<Value> ivs;
                 for (int64_t d = 0; d < 6; ++d)
                   ivs.push_back(linalg::IndexOp::create(b, loc, d));
                 auto toF32 = [&](Value index) -> Value {
                   return arith::SIToFPOp::create(
                       b, loc, f32,
                       arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                                  index));
                 };
                 auto box = [&](int64_t i) {
                   Value v = tensor::ExtractOp::create(
                       b, loc, boxes,
                       ValueRange{ivs[0], indexConstant(b, loc, i)});
                   return m.sub(m.mul(v, m.c(spatialScale)),
                                m.c(halfPixel ? 0.5 : 0.0));
                 };
                 Value startW = box(0), startH = box(1);
                 Value roiW = m.sub(box(2), startW);
                 Value roiH = m.sub(box(3), startH);
                 if (!halfPixel) {
                   roiW = arith::MaximumFOp::create(b, loc, roiW, m.c(1));
                   roiH = arith::MaximumFOp::create(b, loc, roiH, m.c(1));
                 }
                 Value binH = m.div(roiH, m.c(double(pooledH)));
                 Value binW = m.div(roiW, m.c(double(pooledW)));
                 // Sample (iy, ix) of bin (ph, pw).
                 Value y =
                     m.add(m.add(startH, m.mul(toF32(ivs[2]), binH)),
                           m.div(m.mul(m.add(toF32(ivs[4]), m.c(0.5)), binH),
                                 m.c(double(samples))));
                 Value xs =
                     m.add(m.add(startW, m.mul(toF32(ivs[3]), binW)),
                           m.div(m.mul(m.add(toF32(ivs[5]), m.c(0.5)), binW),
                                 m.c(double(samples))));
                 Value outside = arith::OrIOp::create(
                     b, loc,
                     arith::OrIOp::create(b, loc, m.lt(y, m.c(-1)),
                                          m.lt(m.c(double(height)), y)),
                     arith::OrIOp::create(b, loc, m.lt(xs, m.c(-1)),
                                          m.lt(m.c(double(width)), xs)));
                 // Per axis: low/high index and the fraction, clamped at
                 // the last row/column as onnxruntime does.
                 auto axis = [&](Value v, int64_t size) {
                   v = arith::MaximumFOp::create(b, loc, v, m.c(0));
                   Value low = m.floor(v);
                   Value atEnd =
                       arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE,
                                             low, m.c(double(size - 1)));
                   low = m.select(atEnd, m.c(double(size - 1)), low);
                   Value high = m.select(atEnd, low, m.add(low, m.c(1)));
                   v = m.select(atEnd, low, v);
                   Value frac = m.sub(v, low);
                   auto idx = [&](Value f) {
                     return clampIndex(b, loc,
                                       toIndex(b, loc,
                                               arith::FPToSIOp::create(
                                                   b, loc, b.getI64Type(), f)),
                                       size);
                   };
                   return std::tuple(idx(low), idx(high), frac);
                 };
                 auto [yl, yh, ly] = axis(y, height);
                 auto [xl, xh, lx] = axis(xs, width);
                 Value hy = m.sub(m.c(1), ly), hx = m.sub(m.c(1), lx);
                 Value n =
                     wrapIndex(b, loc,
                               tensor::ExtractOp::create(b, loc, batchIndex,
                                                         ValueRange{ivs[0]}),
                               batches);
                 auto read = [&](Value r, Value c) -> Value {
                   return tensor::ExtractOp::create(
                       b, loc, x, ValueRange{n, ivs[1], r, c});
                 };
                 Value v = m.mul(m.mul(hy, hx), read(yl, xl));
                 v = m.add(v, m.mul(m.mul(hy, lx), read(yl, xh)));
                 v = m.add(v, m.mul(m.mul(ly, hx), read(yh, xl)));
                 v = m.add(v, m.mul(m.mul(ly, lx), read(yh, xh)));
                 v = m.select(outside, m.c(0), v);
                 v = m.mul(v, m.c(1.0 / double(samples * samples)));
                 linalg::YieldOp::create(b, loc, ValueRange{m.add(args[1], v)});
               })
        .getResult(0);
  });
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Lowering special::getSamplingLowering(Operation *op) {
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case([](graph::ResizeOp op) { return lowerResize(op); })
      .Case([](graph::GridSampleOp op) { return lowerGridSample(op); })
      .Case([](graph::RoiAlignOp op) { return lowerRoiAlign(op); })
      .Default([](Operation *) { return nullptr; });
}
