//===- ConstantValues.h - small constants as doubles or int64s --*- C++ -*-===//
//
// The folders of the graph ops (ElementwiseOps.cpp, ReductionOps.cpp)
// evaluate small constants, the shape arithmetic of exported models, in
// double (float elements) or int64 (integer elements), then build the
// result in its element type. Private to the dialect's IR library.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_DIALECT_GRAPH_IR_CONSTANTVALUES_H
#define STRATA_LIB_DIALECT_GRAPH_IR_CONSTANTVALUES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace strata::graph::folding {

/// Largest constant (in elements) that folders read or materialize.
constexpr int64_t kMaxFoldElements = 1 << 16;

/// A constant read into doubles (float elements) or int64s (integers;
/// unsigned and i1 elements zero-extended).
struct ConstValues {
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<double> floats;
  llvm::SmallVector<int64_t> ints;
  bool isFloat = false;
};

/// `attr` as values, when it is a dense constant of floats or integers of at
/// most kMaxFoldElements elements.
std::optional<ConstValues> readConstant(mlir::Attribute attr);

/// A constant of `type` (static shape) from doubles, or from int64s when
/// `floats` is empty: floats rounded to nearest even, integers truncated to
/// the element width. Null for other element types.
mlir::Attribute makeConstant(mlir::ShapedType type,
                             llvm::ArrayRef<double> floats,
                             llvm::ArrayRef<int64_t> ints);

} // namespace strata::graph::folding

#endif // STRATA_LIB_DIALECT_GRAPH_IR_CONSTANTVALUES_H
