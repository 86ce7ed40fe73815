//===- Library.h - which ops go to vendor libraries -------------*- C++ -*-===//
#ifndef STRATA_LIB_COMPILER_LIBRARY_H
#define STRATA_LIB_COMPILER_LIBRARY_H

#include "strata/Target/Target.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace strata {

/// A library step: the ops it replaces (the anchor first, then its fused
/// epilogue in order), its operands in the library kernel's order, and its
/// attributes. Operands are kept as the ops' OpOperands, not Values: the
/// values they read are replaced while earlier kernels are outlined.
struct LibraryMatch {
  std::string library;
  llvm::SmallVector<mlir::Operation *> ops;
  llvm::SmallVector<mlir::OpOperand *> inputs;
  mlir::NamedAttrList attrs;
  /// The position in `inputs` of the value the call adds its result onto
  /// (oneDNN's sum post-op), which its result may overwrite
  /// (kernel::Accumulates).
  std::optional<unsigned> accumulates;
  /// Why the library was chosen (kept in the IR for `strata explain`).
  std::string reason;
  /// Why each epilogue op joined, parallel to `ops` ("" for the anchor).
  llvm::SmallVector<std::string> joinReasons;
  /// Ops that read the step's values but were not fused into it, and why
  /// (one entry per op, in the order they were examined).
  llvm::SmallVector<std::pair<mlir::Operation *, std::string>> refused;
};

/// What the partitioner asks of the library matcher beyond the op itself.
struct LibraryRequest {
  /// The target's library (oneDNN on the CPU, cuBLASLt on NVIDIA GPUs): it
  /// decides what a library call takes, and in which types.
  TargetFacts::Library library = TargetFacts::Library::OneDnn;
  /// The target's name, for reasons.
  std::string targetName = "cpu";
  /// Take the op even below the size where generated code wins (the
  /// decisions file asked for a library call).
  bool forced = false;
  /// A convolution's algorithm forced by the decisions file ("direct",
  /// "winograd" or "timed"; "" for the compiler's own choice) and the entry
  /// that asked for it.
  std::string convAlgorithm, convAlgorithmEntry;
  /// Why `candidate` may not join the step `group` (anchor first) as an
  /// epilogue: "" when it may. The decisions file's "apart" and "codegen"
  /// entries come in here.
  std::function<std::string(llvm::ArrayRef<mlir::Operation *> group,
                            mlir::Operation *candidate)>
      epilogueVeto;
};

/// The vendor behind a runtime library kernel, for reasons: "oneDNN" for
/// "dnnl.matmul", "cuBLASLt" for "cublaslt.matmul", "the runtime" otherwise.
std::string libraryVendor(llvm::StringRef library);

/// Whether a cuBLASLt product with rows of N results over K (of float
/// `elementType`) has output rows that are not 16-byte aligned while rows of
/// K are: the runtime runs such a product as classes of rows with aligned
/// rows (runtime/lib/cuda/CublasLt.h) when its weight is stored [N, K]
/// (trans_b) and A is not transposed; a weight stored [K, N] has rows of N,
/// unaligned like the result's, which keeps cuBLASLt on its slow kernels.
bool rowClassesNeedWeightRowsOfK(int64_t n, int64_t k, mlir::Type elementType);

/// Whether `op` is a kind of op some library kernel takes (a matmul, gemm
/// or convolution), whatever its types and sizes.
bool isLibraryAnchor(mlir::Operation *op);

/// The library step anchored at `op`, if `op` is a matmul, gemm or
/// convolution a library handles better than generated code (or that
/// `request` forces to a library and the library can take). Otherwise
/// nullopt, and `whyNot` says why in a sentence ("matmul of 8x8x8 = 512
/// multiply-adds is below oneDNN's threshold of 32768", "no library kernel
/// for graph.softmax").
std::optional<LibraryMatch> matchLibraryKernel(mlir::Operation *op,
                                               const LibraryRequest &request,
                                               std::string &whyNot);

/// The library step for an op on string tensors (LibraryStrings.cpp): the
/// runtime's host kernels for strings, on every target. Otherwise nullopt,
/// and `whyNot` says why.
std::optional<LibraryMatch> matchStringKernel(mlir::Operation *op,
                                              const LibraryRequest &request,
                                              std::string &whyNot);

/// Whether `op` reads or writes a tensor of strings.
bool isStringOp(mlir::Operation *op);

/// Whether `op` is one whose result size depends on its input's values
/// (NonZero, Compress, Unique, NonMaxSuppression): the runtime's host
/// kernels run it, on every target (LibraryValueShaped.cpp).
bool isValueShapedOp(mlir::Operation *op);

/// The host library step for a value-shaped op (isValueShapedOp).
std::optional<LibraryMatch>
matchValueShapedKernel(mlir::Operation *op, const LibraryRequest &request,
                       std::string &whyNot);

/// Whether strata-run-time-shapes marked `op` (kernel::Host): it reads what
/// a value-shaped op or a run-time If's guard wrote, transitively
/// (RunTimeShapes.cpp), and runs as a host kernel (LibraryHostOps.cpp).
bool onRunTimeShapes(mlir::Operation *op);

/// Where the run-time shapes `op` computes from come from, for messages:
/// "the value-dependent result of ONNX node 'X'", or a run-time If's branch.
std::string describeRunTimeSource(mlir::Operation *op);

/// The host step for an op marked kernel::Host: the runtime's
/// "host.<op>" kernel (runtime/lib/kernels/HostOps.cpp) with the op's
/// attributes. Otherwise nullopt, and `whyNot` says why.
std::optional<LibraryMatch> matchHostOpKernel(mlir::Operation *op,
                                              const LibraryRequest &request,
                                              std::string &whyNot);

/// Whether `op` runs as one of the runtime's host kernels on every target,
/// whatever the options say about vendor libraries: string ops,
/// value-shaped ops, and the ops computed from their results (generated
/// code can take none of them).
inline bool isHostOp(mlir::Operation *op) {
  return isStringOp(op) || isValueShapedOp(op) || onRunTimeShapes(op);
}

} // namespace strata

#endif // STRATA_LIB_COMPILER_LIBRARY_H
