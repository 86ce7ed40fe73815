//===- Builders.h - helpers of the tensor and NN lowerings ------*- C++ -*-===//
//
// Small helpers shared by Tensor.cpp and NN.cpp: static-shape checks,
// element-type classes, index arithmetic inside `linalg.generic` bodies, and
// builders for the two generic shapes those families use most (a generic
// over the output that reads its inputs through `tensor.extract`, and a
// reshape between any two static shapes of equal size).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_CONVERSION_GRAPHTOLINALG_BUILDERS_H
#define STRATA_LIB_CONVERSION_GRAPHTOLINALG_BUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace strata::detail {

/// `value`'s type when it is a ranked tensor with a static shape, else null.
mlir::RankedTensorType staticTensorType(mlir::Value value);
mlir::RankedTensorType staticTensorType(mlir::Type type);

/// True when every operand and result of `op` is a static-shaped tensor.
bool allStaticTensors(mlir::Operation *op);

/// The float types the kernel layer computes in (f16, bf16, f32, f64).
bool isComputeFloat(mlir::Type type);

/// f16 and bf16, which the kernel layer computes some things of in f32.
bool isHalfFloat(mlir::Type type);

/// The type products and losses over `element` accumulate in: f32 for f16
/// and bf16 (their few mantissa bits would lose most of a long sum), the
/// type itself otherwise.
mlir::Type productAccumulatorType(mlir::Type element);

/// Float or signless integer (i1 included): types for which arith constants
/// and selects can be built.
bool isArithScalar(mlir::Type type);

/// Any integer or float type: enough for ops that only move elements.
bool isMovableScalar(mlir::Type type);

/// The constant integers of `value` (a graph.constant or anything foldable to
/// one), or std::nullopt.
std::optional<llvm::SmallVector<int64_t>> constantInts(mlir::Value value);

/// An `index` constant.
mlir::Value indexConstant(mlir::OpBuilder &b, mlir::Location loc,
                          int64_t value);

/// A constant of a float or signless integer `type`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// An integer scalar (any signless width) or index as an `index`.
mlir::Value toIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

/// Clamps an `index` value into [0, size - 1] (size >= 1), so that reads
/// at out-of-range positions (undefined in ONNX) stay in bounds.
mlir::Value clampIndex(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value index, int64_t size);

/// An ONNX index into a dimension of `size`: negative values count from
/// the end; then clamped as clampIndex does.
mlir::Value wrapIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      int64_t size);

/// Reads element 0 of a scalar-like tensor (0-D, or any shape with at least
/// one element: the first element).
mlir::Value extractFirst(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value tensor);

/// Builds a `linalg.generic` that writes every element of a new tensor of
/// `resultType`. `inputs` are read through `inputMaps` (block arguments);
/// `body` gets the output position (`linalg.index` values) and those
/// arguments and returns the element.
using IndexedBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange ivs,
    mlir::ValueRange args)>;
mlir::Value buildIndexedGeneric(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::RankedTensorType resultType,
                                mlir::ValueRange inputs,
                                llvm::ArrayRef<mlir::AffineMap> inputMaps,
                                IndexedBody body);

/// Reinterprets `value` (static shape) with the static shape of `type`
/// (same element count), through collapse_shape/expand_shape.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::RankedTensorType type);

/// Converts a scalar between float types (extension or truncation) or between
/// signless integer types (sign extension or truncation), for accumulating
/// narrow types in wider ones.
mlir::Value convertNumeric(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value value, mlir::Type to);

} // namespace strata::detail

#endif // STRATA_LIB_CONVERSION_GRAPHTOLINALG_BUILDERS_H
