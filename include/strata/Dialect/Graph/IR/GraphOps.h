//===- GraphOps.h - strata graph dialect ops --------------------*- C++ -*-===//
//
// Op classes of the graph dialect, plus the shape helpers their verifiers and
// shape inference share (numpy broadcasting, axis normalization).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_DIALECT_GRAPH_IR_GRAPHOPS_H
#define STRATA_DIALECT_GRAPH_IR_GRAPHOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "strata/Dialect/Graph/IR/GraphDialect.h"

#include <optional>

#define GET_TYPEDEF_CLASSES
#include "strata/Dialect/Graph/IR/GraphTypes.h.inc"

namespace strata::graph {

/// Marks a dimension whose size is not known statically.
constexpr int64_t kDynamic = mlir::ShapedType::kDynamic;

/// Broadcasts two shapes like numpy. Dynamic dimensions broadcast against 1
/// and against equal or dynamic dimensions. Returns std::nullopt when the
/// shapes are incompatible.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// Normalizes a possibly negative axis against `rank`; std::nullopt when out
/// of [-rank, rank).
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

/// Normalizes a list of axes against `rank`; fails on an out-of-range or
/// repeated axis.
mlir::FailureOr<llvm::SmallVector<int64_t>>
normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);

/// Total padding of one spatial axis under auto_pad SAME_*, as ONNX computes
/// it: the output has ceil(in / stride) positions. SAME_UPPER puts the odd
/// element at the end, SAME_LOWER at the beginning.
int64_t samePadding(int64_t in, int64_t effectiveKernel, int64_t stride);

/// Returns `type` with its shape replaced, keeping the element type; an
/// unranked result when `shape` is std::nullopt.
mlir::TensorType withShape(mlir::Type type,
                           std::optional<llvm::ArrayRef<int64_t>> shape);

/// The most precise type compatible with both (static dimensions win), also
/// inside sequence and optional types. Null when they conflict (different
/// element types, ranks or static sizes).
mlir::Type joinTypes(mlir::Type a, mlir::Type b);
/// The most precise type that holds a value of type `a` or one of type `b`
/// (the result of a branch yielding either): dimensions they agree on stay,
/// the others are dynamic, and ranks that differ give an unranked tensor.
/// Null when the element types differ.
mlir::Type unionTypes(mlir::Type a, mlir::Type b);

/// `type` with every tensor shape forgotten (unranked), also inside sequence
/// and optional types.
mlir::Type generalizeShape(mlir::Type type);

/// Reads a constant integer tensor (a graph.constant or anything foldable to
/// one) into `values`. Fails when the value is not constant.
mlir::LogicalResult
getConstantIntValues(mlir::Value value, llvm::SmallVectorImpl<int64_t> &values);

// Shared shape inference and verification of the op classes in GraphBase.td.
mlir::LogicalResult
inferUnaryElementwise(mlir::Operation *op,
                      llvm::SmallVectorImpl<mlir::Type> &types);
mlir::LogicalResult verifyUnaryElementwise(mlir::Operation *op);
mlir::LogicalResult
inferBroadcastElementwise(mlir::Operation *op,
                          llvm::SmallVectorImpl<mlir::Type> &types);
mlir::LogicalResult verifyBroadcastElementwise(mlir::Operation *op);
mlir::LogicalResult inferReduction(mlir::Operation *op,
                                   std::optional<llvm::ArrayRef<int64_t>> axes,
                                   bool keepdims, bool noopWithEmptyAxes,
                                   llvm::SmallVectorImpl<mlir::Type> &types);
mlir::LogicalResult
verifyReduction(mlir::Operation *op,
                std::optional<llvm::ArrayRef<int64_t>> axes);

/// Checks every result type against the op's shape inference; used by the
/// InferShapesOpInterface verifier.
mlir::LogicalResult verifyInferredResultTypes(mlir::Operation *op);

} // namespace strata::graph

#include "strata/Dialect/Graph/IR/GraphInterfaces.h.inc"

#define GET_OP_CLASSES
#include "strata/Dialect/Graph/IR/GraphOps.h.inc"

#endif // STRATA_DIALECT_GRAPH_IR_GRAPHOPS_H
