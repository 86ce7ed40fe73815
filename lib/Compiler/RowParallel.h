//===- RowParallel.h - splitting kernels into row blocks --------*- C++ -*-===//
//
// A generated kernel is "row-parallel" when every value it computes has the
// same leading dimension D0 and row i of each result depends only on row i
// of the inputs that have rows (or, more generally, the same leading
// dimensions D0..Dk-1, whose index tuples are the rows) (the others, like a
// matmul's weight or a broadcast bias, are read whole). Such a kernel is
// compiled for a block of R rows and its wrapper walks blocks [begin, end) of
// the D0 / R the runtime's `parallel` extent splits over threads, advancing
// each row input and output by R rows per block.
//
// R is the heuristic's (the fewest rows giving a block kMinBlockElements
// elements of its largest row value) unless the caller forces it: the
// decisions file's "tile" entry, or the partitioner's recorded
// `strata.parallel_block` when codegen plans the kernel again.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_COMPILER_ROWPARALLEL_H
#define STRATA_LIB_COMPILER_ROWPARALLEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <string>

namespace strata {

/// A block should hold at least this many elements of its largest row value:
/// smaller blocks cost more in calls than they gain in threads.
inline constexpr int64_t kMinBlockElements = 4096;

/// Bytes per element of a buffer of `type`'s elements (i1 takes a byte).
int64_t rowElementBytes(mlir::Type type);

struct RowPlan {
  /// The rows: the first `dims` dimensions of every row value (`lead`),
  /// collapsed; `rows` is their product. A block holds `block` rows, a
  /// divisor of the last of those dimensions, so that a block is the box
  /// [1, ..., 1, block, rest...] of each row value.
  int64_t dims = 1;
  llvm::SmallVector<int64_t> lead;
  int64_t rows = 0;
  int64_t block = 0;
  /// Values (block arguments and op results) that have rows.
  llvm::DenseSet<mlir::Value> rowValues;
  /// Bytes from one block to the next, per argument then per result; 0
  /// for the arguments read whole.
  llvm::SmallVector<int64_t> blockStrides;
  /// Where `block` came from, in words ("heuristic: ...", "decisions
  /// file", ...), for `strata explain`.
  std::string source;

  int64_t extent() const { return rows / block; }
};

/// The row split of a codegen kernel. `rowsPerBlock` forces the block (it
/// must divide the last rows dimension) over `leadingDims` leading
/// dimensions, or when those are not given over the most leading
/// dimensions that split with it; without it, the kernel's
/// `strata.parallel_block` and `strata.parallel_dims` attributes do when
/// present, else the heuristic decides, over the most leading dimensions
/// that split. Returns nullopt when the kernel's rows are not independent,
/// when the heuristic finds it too small to be worth splitting, or when the
/// forced block does not divide the rows; `whyNot` (when given) then says
/// why in a sentence.
std::optional<RowPlan> planRows(mlir::func::FuncOp kernel,
                                std::optional<int64_t> rowsPerBlock = {},
                                std::string *whyNot = nullptr,
                                std::optional<int64_t> leadingDims = {});

/// Rewrites the kernel's types (arguments, results, every row value) from
/// `plan.rows` to `plan.block` rows.
void applyRowPlan(mlir::func::FuncOp kernel, const RowPlan &plan);

} // namespace strata

#endif // STRATA_LIB_COMPILER_ROWPARALLEL_H
