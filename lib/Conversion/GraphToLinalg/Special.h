//===- Special.h - shared plumbing of the special-op lowerings --*- C++ -*-===//
//
// The special family (Special.cpp) dispatches to per-topic files:
// Sampling.cpp (resize, grid sample, roi align), Scatter.cpp (scatter,
// max-unpool, top-k, max-pool indices) and Quant.cpp (quantization, integer
// matmul/convolution) and Misc.cpp (einsum, det, windows, DFT). Each returns a
// plan (`Lowering`) for an op it handles, or null; a non-null plan is a promise
// to rewrite the op, which is what makes canLowerSpecial exact.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_CONVERSION_GRAPHTOLINALG_SPECIAL_H
#define STRATA_LIB_CONVERSION_GRAPHTOLINALG_SPECIAL_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include "Patterns.h"
#include <functional>

#include <optional>

namespace strata::detail::special {

using detail::Lowering;

/// A lowering with one result.
template <typename Fn> Lowering single(Fn fn) {
  return [fn](mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange operands,
              llvm::ArrayRef<mlir::RankedTensorType> results)
             -> llvm::SmallVector<mlir::Value> {
    return {fn(b, loc, operands, results[0])};
  };
}

Lowering getSamplingLowering(mlir::Operation *op);
Lowering getScatterLowering(mlir::Operation *op);
Lowering getQuantLowering(mlir::Operation *op);
Lowering getMiscLowering(mlir::Operation *op);

/// The constant float values of `value` (any float element type), or
/// std::nullopt when it is not a constant.
std::optional<llvm::SmallVector<double>> constantFloats(mlir::Value value);

/// A dense constant tensor of `shape` holding `values` converted to `type`
/// (a float or signless integer type).
mlir::Value denseConstant(mlir::OpBuilder &b, mlir::Location loc,
                          llvm::ArrayRef<int64_t> shape, mlir::Type type,
                          llvm::ArrayRef<double> values);

/// A tensor of `type` filled with `value`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value value);

/// Loops over every position of `shape` in row-major order (an scf.for
/// nest), carrying `init`; `body` returns the next values of the carried
/// tensors. Returns their final values.
llvm::SmallVector<mlir::Value>
loopOver(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<int64_t> shape,
         mlir::ValueRange init,
         llvm::function_ref<llvm::SmallVector<mlir::Value>(
             mlir::OpBuilder &, mlir::Location, mlir::ValueRange ivs,
             mlir::ValueRange carried)>
             body);

} // namespace strata::detail::special

#endif // STRATA_LIB_CONVERSION_GRAPHTOLINALG_SPECIAL_H
