//===- PartitionGroup.h - the partitioner's groups, shared --------*- C++
//-*-===//
//
// What the partitioner's walk (Partition.cpp) decides about each kernel, and
// what outlining it (PartitionOutline.cpp) needs: the group of ops, the
// ledger of reasons, and the functions that name and outline a group.
// Private to lib/Compiler.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_PARTITIONGROUP_H
#define STRATA_COMPILER_PARTITIONGROUP_H

#include "Attention.h"
#include "Decisions.h"
#include "Gemm.h"
#include "Library.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>

namespace strata::partition {

using mlir::Operation;

/// A generated kernel takes at most this many ops.
constexpr size_t kMaxKernelOps = 48;

struct Group {
  llvm::SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> members;
  /// Set for a library step (its inputs are in the library's order).
  std::optional<strata::LibraryMatch> library;
  /// Set for a flash-attention kernel (inputs Q, K, V).
  std::optional<strata::AttentionMatch> attention;
  /// Set for the GEMM kernel with its epilogue (Gemm.h), with the reason.
  std::optional<strata::GemmMatch> gemm;
  std::string gemmReason;
  /// Products of generated code that the GEMM kernel does not take, and why.
  llvm::SmallVector<std::pair<std::string, std::string>> notGemm;
  /// Generated kernels: why each op after the first joined.
  llvm::SmallVector<std::string> joined;
  /// Generated kernels: each anchor op (matmul, gemm, conv) and why it is
  /// not a library call, and the other ops no library takes.
  llvm::SmallVector<std::pair<std::string, std::string>> anchorsNotLibrary;
  llvm::SetVector<llvm::StringRef> noLibraryOps;
  bool noLibraries = false;
  /// The op at which the partitioner stopped growing this kernel, and why
  /// (a phrase with that op as its subject).
  Operation *closedBy = nullptr;
  std::string closeReason;
  /// The decisions file's row split for it.
  std::optional<strata::Decisions::Tile> tile;
  /// The kind prefix and the kernel's name.
  std::string category, name;
  /// Why its neighbours are not in it (computed before any outlining).
  llvm::SmallVector<std::string> notFused;
};

/// What the grouping decided about each op, for the not-fused reasons.
struct Ledger {
  llvm::DenseMap<Operation *, Group *> groupOf;
  /// Views left outside every kernel.
  llvm::SmallPtrSet<Operation *, 16> views;
  /// Ops that read the kernel being grown when they came but started their
  /// own: that kernel and why.
  llvm::DenseMap<Operation *, std::pair<Group *, std::string>> refusedJoin;
};

/// How an op reduces: not at all, over whole dimensions (with the number of
/// input elements each output element reduces), or over windows (pooling,
/// LRN: each output reads a neighbourhood, no row to keep in cache).
struct Reduction {
  enum Kind { None, Full, Windowed } kind = None;
  int64_t extent = 0;
};

/// A constant small enough to clone into each kernel that reads it (a
/// splat, or a few elements), so that codegen can fold it.
bool isInlinableConstant(Operation *op);
Reduction reductionOf(Operation *op);
/// The kind prefix of a kernel's name (docs/explain.md).
std::string categoryOf(const Group &group);
/// "strata_poi_fused_add_gelu_3": the kind, what the kernel computes, and
/// its index, as a C identifier.
std::string kernelName(size_t index, const Group &group);
/// The not-fused lines of `group`: its producers, then its consumers, each
/// once, in program order.
llvm::SmallVector<std::string> notFusedLines(const Ledger &ledger,
                                             const Group &group);
/// Outlines `group` into a private kernel function with its decisions and
/// tile, and replaces its ops with a call.
mlir::LogicalResult outline(mlir::ModuleOp module, mlir::func::FuncOp entry,
                            const Group &group,
                            const strata::Decisions &decisions, bool gpu);

/// The entry function's rewrites before the walk (PartitionPrepare.cpp).
/// Gemm's constant transB weights transposed once at compile time.
void pretransposeGemmWeights(mlir::func::FuncOp entry, bool gpuLibraries);
/// On the GPU with libraries: a product with a constant weight and
/// unaligned rows becomes a Gemm with transB over the weight stored [N, K].
void storeUnalignedWeightsByRows(mlir::func::FuncOp entry);
/// On the GPU: MatMul(x, Transpose(w)) becomes Gemm(x, w) with transB.
void foldTransposedWeights(mlir::func::FuncOp entry);
/// A result with no elements becomes an empty constant (no kernel).
void foldEmptyResults(mlir::func::FuncOp entry);

} // namespace strata::partition

#endif // STRATA_COMPILER_PARTITIONGROUP_H
