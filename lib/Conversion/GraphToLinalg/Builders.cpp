//===- Builders.cpp - helpers of the tensor and NN lowerings ----*- C++ -*-===//
//
// See Builders.h.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace strata::detail {

RankedTensorType staticTensorType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape())
    return nullptr;
  return ranked;
}

RankedTensorType staticTensorType(Value value) {
  return staticTensorType(value.getType());
}

bool allStaticTensors(Operation *op) {
  auto isStatic = [](Type type) { return bool(staticTensorType(type)); };
  return llvm::all_of(op->getOperandTypes(), isStatic) &&
         llvm::all_of(op->getResultTypes(), isStatic);
}

bool isComputeFloat(Type type) {
  return isHalfFloat(type) || type.isF32() || type.isF64();
}

bool isHalfFloat(Type type) { return type.isF16() || type.isBF16(); }

Type productAccumulatorType(Type element) {
  return isHalfFloat(element) ? Float32Type::get(element.getContext())
                              : element;
}

bool isArithScalar(Type type) {
  return isComputeFloat(type) || type.isSignlessInteger();
}

bool isMovableScalar(Type type) { return isa<IntegerType, FloatType>(type); }

std::optional<SmallVector<int64_t>> constantInts(Value value) {
  SmallVector<int64_t> values;
  if (!value || failed(graph::getConstantIntValues(value, values)))
    return std::nullopt;
  return values;
}

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(b.getFloatAttr(type, value)));
  return arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getIntegerAttr(type, int64_t(value))));
}

Value toIndex(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isIndex())
    return value;
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), value);
}

Value clampIndex(OpBuilder &b, Location loc, Value index, int64_t size) {
  Value low = arith::MaxSIOp::create(b, loc, index, indexConstant(b, loc, 0));
  return arith::MinSIOp::create(
      b, loc, low, indexConstant(b, loc, std::max<int64_t>(size - 1, 0)));
}

Value wrapIndex(OpBuilder &b, Location loc, Value value, int64_t size) {
  Value index = toIndex(b, loc, value);
  Value zero = indexConstant(b, loc, 0);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  Value shifted =
      arith::AddIOp::create(b, loc, index, indexConstant(b, loc, size));
  index = arith::SelectOp::create(b, loc, negative, shifted, index);
  return clampIndex(b, loc, index, size);
}

Value extractFirst(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> indices(type.getRank(), indexConstant(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, tensor, indices);
}

Value buildIndexedGeneric(OpBuilder &b, Location loc,
                          RankedTensorType resultType, ValueRange inputs,
                          ArrayRef<AffineMap> inputMaps, IndexedBody body) {
  int64_t rank = resultType.getRank();
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        SmallVector<Value> ivs;
        for (int64_t d = 0; d < rank; ++d)
          ivs.push_back(linalg::IndexOp::create(nested, bodyLoc, d));
        Value element = body(nested, bodyLoc, ivs, args.drop_back());
        linalg::YieldOp::create(nested, bodyLoc, element);
      });
  return generic.getResult(0);
}

Value reshapeTo(OpBuilder &b, Location loc, Value value,
                RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from.getShape() == type.getShape())
    return value;
  // A single collapse or expansion when the shapes allow one.
  if (from.getRank() != type.getRank() && from.getRank() > 0 &&
      type.getRank() > 0) {
    if (auto reassociation = getReassociationIndicesForReshape(from, type)) {
      if (from.getRank() > type.getRank())
        return tensor::CollapseShapeOp::create(b, loc, type, value,
                                               *reassociation);
      return tensor::ExpandShapeOp::create(b, loc, type, value, *reassociation);
    }
  }
  // Otherwise through 1-D: collapse everything, then expand to the target.
  // A rank-0 tensor has one element; the empty reassociation moves between
  // it and all-ones shapes.
  auto flat =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  auto all = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t i = 0; i < rank; ++i)
      group.push_back(i);
    return SmallVector<ReassociationIndices>{group};
  };
  Value mid = value;
  if (from.getRank() == 0)
    mid = tensor::ExpandShapeOp::create(b, loc, flat, value,
                                        SmallVector<ReassociationIndices>{});
  else if (from.getRank() > 1)
    mid = tensor::CollapseShapeOp::create(b, loc, flat, value,
                                          all(from.getRank()));
  if (type.getRank() == 1)
    return mid;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, mid,
                                           SmallVector<ReassociationIndices>{});
  return tensor::ExpandShapeOp::create(b, loc, type, mid, all(type.getRank()));
}

Value convertNumeric(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (isa<FloatType>(from) && isa<FloatType>(to)) {
    unsigned fromWidth = from.getIntOrFloatBitWidth();
    unsigned toWidth = to.getIntOrFloatBitWidth();
    if (fromWidth < toWidth)
      return arith::ExtFOp::create(b, loc, to, value);
    if (fromWidth > toWidth)
      return arith::TruncFOp::create(b, loc, to, value);
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (isa<FloatType>(to))
    return arith::SIToFPOp::create(b, loc, to, value);
  if (isa<FloatType>(from))
    return arith::FPToSIOp::create(b, loc, to, value);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, to, value);
  return arith::TruncIOp::create(b, loc, to, value);
}

} // namespace strata::detail
