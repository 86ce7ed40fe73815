//===- Norm.cpp - normalization and dropout graph ops to linalg -*- C++ -*-===//
//
// The normalization half of the LossAndNorm family (Loss.cpp holds the
// losses and the family's entry points): layer_norm, instance_norm,
// group_norm, mean_variance_norm and lrn, plus dropout. See Patterns.h for
// the contract.
//
// The statistic-based normalizations share one shape: the mean and the
// variance over a set of "reduced" dims are linalg.generic reductions into a
// tensor of the remaining ("kept") dims, computed in two passes (the mean
// first, then the mean of squared deviations, as ONNX's reference does:
// E[x^2] - E[x]^2 loses everything when the mean is large), and a final
// parallel generic over the input applies them with the op's scale and bias.
// f16/bf16 accumulate in f32, f64 in f64. Shapes are static.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>

using namespace mlir;
using namespace strata::detail;
namespace graph = strata::graph;

namespace {

/// Computes a scalar from scalars (a generic body without the yield).
using ScalarFn = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

} // namespace

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The type statistics are computed in: f64 for f64, f32 otherwise (the
/// 16-bit floats would lose the sums).
static Type statsType(Type element) {
  if (element.isF64())
    return element;
  return Float32Type::get(element.getContext());
}

/// A tensor of `shape` and `element` filled with `value`.
static Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                          Type element, double value) {
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  return linalg::FillOp::create(b, loc, scalarConstant(b, loc, element, value),
                                init)
      .getResult(0);
}

/// The sizes of the dims of `shape` not marked in `reduced`.
static SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape,
                                      ArrayRef<bool> reduced) {
  SmallVector<int64_t> kept;
  for (auto [size, isReduced] : llvm::zip_equal(shape, reduced))
    if (!isReduced)
      kept.push_back(size);
  return kept;
}

/// The map from the full iteration space to the kept dims.
static AffineMap keptMap(ArrayRef<bool> reduced, MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (auto [d, isReduced] : llvm::enumerate(reduced))
    if (!isReduced)
      exprs.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(reduced.size(), 0, exprs, context);
}

/// Sums `term(x, kept...)` over the `reduced` dims of `x` in `acc`: a tensor
/// of the kept dims. `keptInputs` are tensors of the kept dims, read at the
/// same kept position.
static Value sumOverReduced(OpBuilder &b, Location loc, Value x,
                            ArrayRef<bool> reduced, Type acc,
                            ValueRange keptInputs, ScalarFn term) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  AffineMap kept = keptMap(reduced, b.getContext());
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  maps.append(keptInputs.size() + 1, kept);
  SmallVector<utils::IteratorType> iterators;
  for (bool isReduced : reduced)
    iterators.push_back(isReduced ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
  SmallVector<Value> inputs{x};
  inputs.append(keptInputs.begin(), keptInputs.end());
  Value init =
      filledTensor(b, loc, keptShape(type.getShape(), reduced), acc, 0.0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               SmallVector<Value> scalars{
                   convertNumeric(nb, nl, args.front(), acc)};
               llvm::append_range(scalars, args.drop_front().drop_back());
               Value sum = arith::AddFOp::create(nb, nl, args.back(),
                                                 term(nb, nl, scalars));
               linalg::YieldOp::create(nb, nl, sum);
             })
      .getResult(0);
}

/// Applies `fn` to every element of `value`, giving a tensor of the same
/// shape and `element` type.
static Value mapTensor(OpBuilder &b, Location loc, Value value, Type element,
                       ScalarFn fn) {
  auto type = cast<RankedTensorType>(value.getType());
  return buildIndexedGeneric(b, loc, type.clone(element), value,
                             b.getMultiDimIdentityMap(type.getRank()),
                             [&](OpBuilder &nb, Location nl, ValueRange,
                                 ValueRange args) { return fn(nb, nl, args); });
}

namespace {
/// The statistics of a normalization over the reduced dims, as tensors of
/// the kept dims in the statistics type: the mean and the factor that
/// multiplies x - mean.
struct NormStats {
  Value mean;
  Value factor;
};
} // namespace

/// Mean and normalizing factor of `x` over `reduced`: the factor is
/// 1 / sqrt(var + epsilon), or 1 / (sqrt(var) + epsilon) when
/// `epsilonOutsideSqrt` (MeanVarianceNormalization). The variance is the
/// biased one (divided by the element count), as ONNX specifies.
static NormStats buildStats(OpBuilder &b, Location loc, Value x,
                            ArrayRef<bool> reduced, Type acc, double epsilon,
                            bool epsilonOutsideSqrt) {
  auto type = cast<RankedTensorType>(x.getType());
  double count = 1;
  for (auto [size, isReduced] : llvm::zip_equal(type.getShape(), reduced))
    if (isReduced)
      count *= double(size);
  auto divideByCount = [&](OpBuilder &nb, Location nl, ValueRange args) {
    return arith::DivFOp::create(nb, nl, args[0],
                                 scalarConstant(nb, nl, acc, count))
        .getResult();
  };
  Value sum = sumOverReduced(
      b, loc, x, reduced, acc, {},
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  Value mean = mapTensor(b, loc, sum, acc, divideByCount);
  Value squares =
      sumOverReduced(b, loc, x, reduced, acc, mean,
                     [](OpBuilder &nb, Location nl, ValueRange args) {
                       Value d =
                           arith::SubFOp::create(nb, nl, args[0], args[1]);
                       return arith::MulFOp::create(nb, nl, d, d).getResult();
                     });
  Value factor = mapTensor(
      b, loc, squares, acc, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value variance = divideByCount(nb, nl, args);
        Value eps = scalarConstant(nb, nl, acc, epsilon);
        Value denominator =
            epsilonOutsideSqrt
                ? arith::AddFOp::create(
                      nb, nl, math::SqrtOp::create(nb, nl, variance), eps)
                      .getResult()
                : math::SqrtOp::create(
                      nb, nl, arith::AddFOp::create(nb, nl, variance, eps))
                      .getResult();
        return arith::DivFOp::create(nb, nl, scalarConstant(nb, nl, acc, 1.0),
                                     denominator)
            .getResult();
      });
  return {mean, factor};
}

/// Normalizes `x` with `stats` and applies `params` (scale, then an
/// optional bias, each read through its map): y = (x - mean) * factor *
/// scale + bias, in the statistics type, rounded once to `resultType`.
static Value applyStats(OpBuilder &b, Location loc, Value x,
                        ArrayRef<bool> reduced, const NormStats &stats,
                        Type acc, ValueRange params,
                        ArrayRef<AffineMap> paramMaps,
                        RankedTensorType resultType) {
  int64_t rank = resultType.getRank();
  AffineMap kept = keptMap(reduced, b.getContext());
  SmallVector<Value> inputs{x, stats.mean, stats.factor};
  inputs.append(params.begin(), params.end());
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank), kept, kept};
  maps.append(paramMaps.begin(), paramMaps.end());
  Type element = resultType.getElementType();
  return buildIndexedGeneric(
      b, loc, resultType, inputs, maps,
      [&](OpBuilder &nb, Location nl, ValueRange, ValueRange args) {
        Value v = convertNumeric(nb, nl, args[0], acc);
        v = arith::SubFOp::create(nb, nl, v, args[1]);
        v = arith::MulFOp::create(nb, nl, v, args[2]);
        if (args.size() > 3)
          v = arith::MulFOp::create(nb, nl, v,
                                    convertNumeric(nb, nl, args[3], acc));
        if (args.size() > 4)
          v = arith::AddFOp::create(nb, nl, v,
                                    convertNumeric(nb, nl, args[4], acc));
        return convertNumeric(nb, nl, v, element);
      });
}

/// A static tensor of a compute float type with `element` as its element.
static bool isFloatTensorOf(Value value, Type element) {
  auto type = staticTensorType(value);
  return type && type.getElementType() == element;
}

//===----------------------------------------------------------------------===//
// LayerNormalization
//===----------------------------------------------------------------------===//

/// The map reading a parameter that broadcasts (numpy-style, right-aligned)
/// to `shape`; std::nullopt when it does not.
static std::optional<AffineMap> broadcastMap(RankedTensorType param,
                                             ArrayRef<int64_t> shape,
                                             MLIRContext *context) {
  int64_t rank = shape.size(), offset = rank - param.getRank();
  if (offset < 0)
    return std::nullopt;
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < param.getRank(); ++i) {
    int64_t size = param.getDimSize(i), full = shape[offset + i];
    if (size == full)
      exprs.push_back(getAffineDimExpr(offset + i, context));
    else if (size == 1)
      exprs.push_back(getAffineConstantExpr(0, context));
    else
      return std::nullopt;
  }
  return AffineMap::get(rank, 0, exprs, context);
}

/// LayerNormalization over the dims from `axis` on: y = (x - mean) /
/// sqrt(var + epsilon) * scale + bias, with scale and bias broadcast to x.
/// The Mean and InvStdDev results have x's shape with the normalized dims
/// set to 1.
static Lowering lowerLayerNorm(graph::LayerNormOp op) {
  auto input = staticTensorType(op.getInput());
  if (!input || !isComputeFloat(input.getElementType()) ||
      op.getOutput().getType() != input)
    return nullptr;
  Type element = input.getElementType();
  std::optional<int64_t> axis =
      graph::normalizeAxis(int64_t(op.getAxis()), input.getRank());
  if (!axis)
    return nullptr;
  MLIRContext *context = op.getContext();
  SmallVector<AffineMap> paramMaps;
  SmallVector<Value> params{op.getScale()};
  if (op.getBias())
    params.push_back(op.getBias());
  for (Value param : params) {
    if (!isFloatTensorOf(param, element))
      return nullptr;
    auto map = broadcastMap(staticTensorType(param), input.getShape(), context);
    if (!map)
      return nullptr;
    paramMaps.push_back(*map);
  }
  SmallVector<bool> reduced(input.getRank(), false);
  for (int64_t d = *axis; d < input.getRank(); ++d)
    reduced[d] = true;
  int64_t statsCount = 1;
  for (int64_t d = 0; d < *axis; ++d)
    statsCount *= input.getDimSize(d);
  for (Value stat : {op.getMean(), op.getInvStdDev()}) {
    auto type = staticTensorType(stat);
    if (!type || !isComputeFloat(type.getElementType()) ||
        type.getNumElements() != statsCount)
      return nullptr;
  }
  double epsilon = op.getEpsilon().convertToDouble();
  bool hasBias = bool(op.getBias());
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = statsType(element);
    Value x = operands[0];
    NormStats stats = buildStats(b, loc, x, reduced, acc, epsilon,
                                 /*epsilonOutsideSqrt=*/false);
    ValueRange params = operands.slice(1, hasBias ? 2 : 1);
    Value y = applyStats(b, loc, x, reduced, stats, acc, params, paramMaps,
                         results[0]);
    auto asResult = [&](Value stat, RankedTensorType type) {
      Type to = type.getElementType();
      if (to == acc)
        return reshapeTo(b, loc, stat, type);
      Value converted = mapTensor(
          b, loc, stat, to, [&](OpBuilder &nb, Location nl, ValueRange args) {
            return convertNumeric(nb, nl, args[0], to);
          });
      return reshapeTo(b, loc, converted, type);
    };
    return {y, asResult(stats.mean, results[1]),
            asResult(stats.factor, results[2])};
  };
}

//===----------------------------------------------------------------------===//
// Instance, group and mean-variance normalization
//===----------------------------------------------------------------------===//

/// InstanceNormalization: each (n, c) over the spatial dims, with a scale
/// and bias per channel.
static Lowering lowerInstanceNorm(graph::InstanceNormOp op) {
  auto input = staticTensorType(op.getInput());
  if (!input || input.getRank() < 2 ||
      !isComputeFloat(input.getElementType()) ||
      op.getOutput().getType() != input)
    return nullptr;
  Type element = input.getElementType();
  int64_t rank = input.getRank();
  for (Value param : {op.getScale(), op.getBias()}) {
    auto type = staticTensorType(param);
    if (!isFloatTensorOf(param, element) || type.getRank() != 1 ||
        type.getDimSize(0) != input.getDimSize(1))
      return nullptr;
  }
  double epsilon = op.getEpsilon().convertToDouble();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = statsType(element);
    SmallVector<bool> reduced(rank, true);
    reduced[0] = reduced[1] = false;
    NormStats stats = buildStats(b, loc, operands[0], reduced, acc, epsilon,
                                 /*epsilonOutsideSqrt=*/false);
    AffineMap channel = AffineMap::get(rank, 0, b.getAffineDimExpr(1));
    return {applyStats(b, loc, operands[0], reduced, stats, acc,
                       operands.slice(1, 2), {channel, channel}, results[0])};
  };
}

/// GroupNormalization: x (N, C, D...) is viewed as (N, G, C/G, D...) and
/// each (n, g) normalized over the rest. Scale and bias have one entry per
/// group (opset 18) or per channel (opset 21; channel g * C/G + k).
static Lowering lowerGroupNorm(graph::GroupNormOp op) {
  auto input = staticTensorType(op.getInput());
  if (!input || input.getRank() < 2 ||
      !isComputeFloat(input.getElementType()) ||
      op.getOutput().getType() != input)
    return nullptr;
  Type element = input.getElementType();
  int64_t groups = op.getNumGroups();
  int64_t channels = input.getDimSize(1);
  if (groups < 1 || channels % groups != 0)
    return nullptr;
  SmallVector<int64_t> paramSizes;
  for (Value param : {op.getScale(), op.getBias()}) {
    auto type = staticTensorType(param);
    if (!isFloatTensorOf(param, element) || type.getRank() != 1 ||
        (type.getDimSize(0) != groups && type.getDimSize(0) != channels))
      return nullptr;
    paramSizes.push_back(type.getDimSize(0));
  }
  double epsilon = op.getEpsilon().convertToDouble();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = statsType(element);
    int64_t perGroup = channels / groups;
    SmallVector<int64_t> shape{input.getDimSize(0), groups, perGroup};
    llvm::append_range(shape, input.getShape().drop_front(2));
    auto grouped = RankedTensorType::get(shape, element);
    int64_t rank = grouped.getRank();
    Value x = reshapeTo(b, loc, operands[0], grouped);
    SmallVector<bool> reduced(rank, true);
    reduced[0] = reduced[1] = false;
    NormStats stats = buildStats(b, loc, x, reduced, acc, epsilon,
                                 /*epsilonOutsideSqrt=*/false);
    SmallVector<AffineMap> paramMaps;
    for (int64_t size : paramSizes) {
      AffineExpr index = b.getAffineDimExpr(1);
      // With as many groups as channels both readings agree.
      if (size != groups)
        index = index * perGroup + b.getAffineDimExpr(2);
      paramMaps.push_back(AffineMap::get(rank, 0, index));
    }
    Value y = applyStats(b, loc, x, reduced, stats, acc, operands.slice(1, 2),
                         paramMaps, grouped);
    return {reshapeTo(b, loc, y, results[0])};
  };
}

/// MeanVarianceNormalization over `axes`: (x - mean) / (sqrt(var) + 1e-9),
/// the epsilon of ONNX's function body.
static Lowering lowerMeanVarianceNorm(graph::MeanVarianceNormOp op) {
  auto input = staticTensorType(op.getInput());
  if (!input || !isComputeFloat(input.getElementType()) ||
      op.getOutput().getType() != input)
    return nullptr;
  auto axes = graph::normalizeAxes(op.getAxes(), input.getRank());
  if (failed(axes))
    return nullptr;
  SmallVector<bool> reduced(input.getRank(), false);
  for (int64_t axis : *axes)
    reduced[axis] = true;
  Type element = input.getElementType();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = statsType(element);
    NormStats stats = buildStats(b, loc, operands[0], reduced, acc, 1e-9,
                                 /*epsilonOutsideSqrt=*/true);
    return {applyStats(b, loc, operands[0], reduced, stats, acc, {}, {},
                       results[0])};
  };
}

//===----------------------------------------------------------------------===//
// LRN
//===----------------------------------------------------------------------===//

/// LRN across channels: y = x / (bias + alpha / size * s)^beta, where s sums
/// x^2 over the channels c - floor((size-1)/2) .. c + ceil((size-1)/2) that
/// exist. The squares are written into a copy zero-padded along the channel
/// axis, so the window sum is one generic reading channel c + j with j in
/// [0, size) and never out of bounds.
static Lowering lowerLRN(graph::LRNOp op) {
  auto input = staticTensorType(op.getInput());
  if (!input || input.getRank() < 2 ||
      !isComputeFloat(input.getElementType()) ||
      op.getOutput().getType() != input || op.getSize() < 1)
    return nullptr;
  Type element = input.getElementType();
  int64_t size = op.getSize();
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  double bias = op.getBias().convertToDouble();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Type acc = statsType(element);
    int64_t rank = input.getRank();
    Value x = operands[0];
    Value squares = mapTensor(
        b, loc, x, acc, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value v = convertNumeric(nb, nl, args[0], acc);
          return arith::MulFOp::create(nb, nl, v, v).getResult();
        });

    int64_t before = (size - 1) / 2;
    SmallVector<int64_t> paddedShape(input.getShape());
    paddedShape[1] += size - 1;
    Value padded = filledTensor(b, loc, paddedShape, acc, 0.0);
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    offsets[1] = b.getIndexAttr(before);
    for (int64_t d : input.getShape())
      sizes.push_back(b.getIndexAttr(d));
    padded = tensor::InsertSliceOp::create(b, loc, squares, padded, offsets,
                                           sizes, strides);

    // Loops (d0 .. d{rank-1}, j): the window tensor only gives j its extent.
    MLIRContext *context = b.getContext();
    SmallVector<AffineExpr> paddedExprs, outExprs;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr e = getAffineDimExpr(d, context);
      outExprs.push_back(e);
      paddedExprs.push_back(d == 1 ? e + getAffineDimExpr(rank, context) : e);
    }
    SmallVector<AffineMap> maps{
        AffineMap::get(rank + 1, 0, paddedExprs, context),
        AffineMap::get(rank + 1, 0, getAffineDimExpr(rank, context)),
        AffineMap::get(rank + 1, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value window =
        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{size}, acc);
    Value init = filledTensor(b, loc, input.getShape(), acc, 0.0);
    Value sums =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{padded, window},
            ValueRange{init}, maps, iterators,
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nl,
                  arith::AddFOp::create(nb, nl, args[2], args[0]).getResult());
            })
            .getResult(0);

    AffineMap identity = b.getMultiDimIdentityMap(rank);
    Value y = buildIndexedGeneric(
        b, loc, results[0], {x, sums}, {identity, identity},
        [&](OpBuilder &nb, Location nl, ValueRange, ValueRange args) {
          Value v = convertNumeric(nb, nl, args[0], acc);
          Value base = arith::AddFOp::create(
              nb, nl, scalarConstant(nb, nl, acc, bias),
              arith::MulFOp::create(
                  nb, nl, scalarConstant(nb, nl, acc, alpha / double(size)),
                  args[1]));
          Value denominator = math::PowFOp::create(
              nb, nl, base, scalarConstant(nb, nl, acc, beta));
          return convertNumeric(
              nb, nl, arith::DivFOp::create(nb, nl, v, denominator), element);
        });
    return {y};
  };
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// SplitMix64's finalizer: a bijective mix of a 64-bit counter whose output
/// bits are close to uniform, so hash(index ^ seed) serves as a counter-based
/// random number generator inside a parallel generic.
static Value mix64(OpBuilder &b, Location loc, Value z) {
  Type i64 = b.getI64Type();
  auto constant = [&](uint64_t v) {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, v));
  };
  auto xorShift = [&](Value v, uint64_t shift) {
    return arith::XOrIOp::create(
        b, loc, v, arith::ShRUIOp::create(b, loc, v, constant(shift)));
  };
  z = arith::AddIOp::create(b, loc, z, constant(0x9E3779B97F4A7C15ull));
  z = arith::MulIOp::create(b, loc, xorShift(z, 30),
                            constant(0xBF58476D1CE4E5B9ull));
  z = arith::MulIOp::create(b, loc, xorShift(z, 27),
                            constant(0x94D049BB133111EBull));
  return xorShift(z, 31);
}

/// The same mix on the host, for the seed: nearby seeds give unrelated
/// streams.
static uint64_t mixSeed(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Dropout. Without training_mode (or with it false at run time) the output
/// is the input and the mask all true. In training mode an element is kept
/// when its uniform draw u in [0, 1) is >= ratio (probability 1 - ratio),
/// and kept elements are scaled by 1 / (1 - ratio). The draw hashes the
/// element's linear index with `seed` (0 when absent), so a run is
/// reproducible: ONNX leaves the random sequence unspecified.
static Lowering lowerDropout(graph::DropoutOp op) {
  auto data = staticTensorType(op.getData());
  auto mask = staticTensorType(op.getMask());
  if (!data || !isComputeFloat(data.getElementType()) ||
      op.getOutput().getType() != data || !mask ||
      mask.getShape() != data.getShape() || !mask.getElementType().isInteger(1))
    return nullptr;
  Value ratio = op.getRatio(), training = op.getTrainingMode();
  if (ratio) {
    auto type = staticTensorType(ratio);
    if (!type || !isComputeFloat(type.getElementType()) ||
        type.getNumElements() != 1)
      return nullptr;
  }
  if (training) {
    auto type = staticTensorType(training);
    if (!type || !type.getElementType().isInteger(1) ||
        type.getNumElements() != 1)
      return nullptr;
  }
  bool hasRatio = bool(ratio), hasTraining = bool(training);
  uint64_t seed = op.getSeed() ? uint64_t(*op.getSeed()) : 0;
  Type element = data.getElementType();
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    if (!hasTraining) {
      Value trueValue = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      Value init =
          tensor::EmptyOp::create(b, loc, results[1].getShape(), b.getI1Type());
      return {operands[0],
              linalg::FillOp::create(b, loc, trueValue, init).getResult(0)};
    }
    Type acc = statsType(element);
    Value isTraining = extractFirst(b, loc, operands.back());
    Value rate =
        hasRatio
            ? convertNumeric(b, loc, extractFirst(b, loc, operands[1]), acc)
            : scalarConstant(b, loc, acc, 0.5);
    Value one = scalarConstant(b, loc, acc, 1.0);
    Value scale = arith::SelectOp::create(
        b, loc, isTraining,
        arith::DivFOp::create(b, loc, one,
                              arith::SubFOp::create(b, loc, one, rate)),
        one);

    int64_t rank = data.getRank();
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    Value outInit = tensor::EmptyOp::create(b, loc, data.getShape(), element);
    Value maskInit =
        tensor::EmptyOp::create(b, loc, data.getShape(), b.getI1Type());
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{results[0], results[1]}, ValueRange{operands[0]},
        ValueRange{outInit, maskInit},
        SmallVector<AffineMap>{identity, identity, identity}, parallel,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Type i64 = nb.getI64Type();
          // The row-major linear index of the element.
          Value linear =
              arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(i64, 0));
          for (int64_t d = 0; d < rank; ++d) {
            Value index = arith::IndexCastOp::create(
                nb, nl, i64, linalg::IndexOp::create(nb, nl, d));
            linear = arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(
                    nb, nl, linear,
                    arith::ConstantOp::create(
                        nb, nl, nb.getIntegerAttr(i64, data.getDimSize(d)))),
                index);
          }
          Value bits = mix64(
              nb, nl,
              arith::XOrIOp::create(
                  nb, nl, linear,
                  arith::ConstantOp::create(
                      nb, nl, nb.getIntegerAttr(i64, int64_t(mixSeed(seed))))));
          // The top 24 bits as a float in [0, 1): exact in f32 and f64.
          Value top = arith::ShRUIOp::create(
              nb, nl, bits,
              arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(i64, 40)));
          Value u = arith::MulFOp::create(
              nb, nl, arith::UIToFPOp::create(nb, nl, acc, top),
              scalarConstant(nb, nl, acc, 1.0 / double(1 << 24)));
          Value drawn =
              arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE, u, rate);
          Value notTraining = arith::XOrIOp::create(
              nb, nl, isTraining,
              arith::ConstantOp::create(nb, nl, nb.getBoolAttr(true)));
          Value keep = arith::OrIOp::create(nb, nl, notTraining, drawn);
          Value x = convertNumeric(nb, nl, args[0], acc);
          Value kept = convertNumeric(
              nb, nl, arith::MulFOp::create(nb, nl, x, scale), element);
          Value y = arith::SelectOp::create(
              nb, nl, keep, kept, scalarConstant(nb, nl, element, 0.0));
          linalg::YieldOp::create(nb, nl, ValueRange{y, keep});
        });
    return {generic.getResult(0), generic.getResult(1)};
  };
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

static Lowering getLowering(Operation *op) {
  if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
    return nullptr;
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case([](graph::LayerNormOp op) { return lowerLayerNorm(op); })
      .Case([](graph::InstanceNormOp op) { return lowerInstanceNorm(op); })
      .Case([](graph::GroupNormOp op) { return lowerGroupNorm(op); })
      .Case([](graph::MeanVarianceNormOp op) {
        return lowerMeanVarianceNorm(op);
      })
      .Case([](graph::LRNOp op) { return lowerLRN(op); })
      .Case([](graph::DropoutOp op) { return lowerDropout(op); })
      .Default([](Operation *) { return nullptr; });
}

namespace strata::detail {

bool canLowerNorm(Operation *op) { return bool(getLowering(op)); }

void populateNormToLinalgPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns) {
  addPlannedLowering(converter, patterns, getLowering, "normalization");
}

} // namespace strata::detail
