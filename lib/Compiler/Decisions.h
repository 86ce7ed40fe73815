//===- Decisions.h - forced decisions from a JSON file ----------*- C++ -*-===//
//
// `--decisions=FILE` overrides the partitioner's choices (docs/explain.md):
//
//   {"apart":   [["Add_1", "Mul_2"]],          nodes never in one kernel
//    "library": ["MatMul_0"],                  a library call, whatever size
//    "codegen": ["Conv_3"],                    generated code, never a library
//    "tile":    {"Softmax_4": {"rows_per_block": 16}},   the kernel's row split
//    "algorithm": {"Conv_5": "direct"}}       a convolution's algorithm:
//                                             oneDNN's kernel on the CPU,
//                                             cuDNN or GEMM on a GPU
//
// Nodes are ONNX node names, as the ops' locations carry them. The file is
// checked against the model when it is loaded (every name must be an op of
// the graph stage's entry function); what can only be checked once kernels
// exist (a tile that does not divide a kernel's rows) is checked by the
// partitioner. Every error names the file and the entry.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_COMPILER_DECISIONS_H
#define STRATA_LIB_COMPILER_DECISIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>
#include <vector>

namespace strata {

/// Every ONNX node name `op` carries: its NameLoc, or each NameLoc of a
/// FusedLoc (the graph layer fuses patterns such as GELU's five nodes into
/// one op). Empty for ops created without a node.
llvm::SmallVector<std::string> getNodeNames(mlir::Operation *op);

/// How messages and reasons name an op: its node name; for an op fused
/// from several nodes, the first and what they became ("Div_3 (+4 nodes:
/// graph.gelu)"); for an op of no node, its op name ("graph.add").
std::string describeOp(mlir::Operation *op);

class Decisions {
public:
  /// A forced row split and the node whose entry asked for it.
  struct Tile {
    int64_t rowsPerBlock = 0;
    std::string node;
  };

  /// No forced decisions.
  Decisions() = default;

  /// Reads `path` and resolves its node names against the ops of `entry`.
  /// Errors are emitted at `entry`'s module: "decisions file 'PATH': ENTRY:
  /// what is wrong".
  static mlir::FailureOr<Decisions> load(llvm::StringRef path,
                                         mlir::func::FuncOp entry);
  /// The same for a file's text already read (`path` names it in messages).
  static mlir::FailureOr<Decisions>
  parse(llvm::StringRef text, llvm::StringRef path, mlir::func::FuncOp entry);

  /// Checks that every forced op can be what it is forced to be: a library
  /// call where `libraryTakes` holds, generated code where
  /// `generatorTakes` does (the partitioner's own tests, passed in so that
  /// the file format stays apart from the kernel decisions and can be read,
  /// and fuzzed, with the graph dialect alone).
  mlir::LogicalResult
  checkForced(llvm::function_ref<bool(mlir::Operation *)> libraryTakes,
              llvm::function_ref<bool(mlir::Operation *)> generatorTakes) const;

  bool empty() const { return path.empty(); }
  llvm::StringRef getPath() const { return path; }

  /// The entry forcing `op` to a library call ("library[0]: 'MatMul_0'"),
  /// or "".
  std::string forcedLibrary(mlir::Operation *op) const;
  /// The entry forcing `op` to generated code ("codegen[1]: 'Conv_3'"), or
  /// "".
  std::string forcedCodegen(mlir::Operation *op) const;
  /// "kept apart from Y by the decisions file" when an "apart" entry
  /// separates `op` from one of `group`'s ops, else "".
  std::string apartReason(llvm::ArrayRef<mlir::Operation *> group,
                          mlir::Operation *op) const;
  /// The tile entry of any of `ops` (those of one kernel). Fails, with an
  /// error, when two of them ask for different splits.
  mlir::FailureOr<std::optional<Tile>>
  tileFor(llvm::ArrayRef<mlir::Operation *> ops, mlir::Operation *at) const;
  /// A convolution's algorithm as an "algorithm" entry forces it, with the
  /// entry ("algorithm[\"Conv_5\"]") for reasons and errors. On the CPU,
  /// oneDNN's kernel: "direct" (never Winograd), "winograd" (Winograd
  /// without timing) or "timed" (both timed at the first run, the faster
  /// kept). On a GPU, the convolution's form (strata-conv-to-gemm):
  /// "cudnn" (cuDNN's step) or "gemm" (strata's own: im2col and a
  /// product, or a grouped sum).
  struct Algorithm {
    std::string name;
    std::string entry;
    bool gpuForm() const { return name == "cudnn" || name == "gemm"; }
  };
  /// The entry of `op` (a Conv, or the channels-last convolution one
  /// became), or null.
  const Algorithm *algorithmFor(mlir::Operation *op) const;
  /// An entry that chooses a GPU form ("cudnn", "gemm"), or null: the
  /// CPU's partitioner refuses them.
  const Algorithm *firstGpuForm() const;
  /// Ops other than convolutions that a GPU form's node names
  /// (strata-conv-to-gemm refuses them before it rewrites convolutions).
  llvm::ArrayRef<std::pair<mlir::Operation *, Algorithm>>
  nonConvolutionForms() const {
    return otherForms;
  }

  /// Every op a tile entry names (to check that each lands in a generated
  /// kernel).
  llvm::SmallVector<std::pair<mlir::Operation *, std::string>> tiledOps() const;

  /// Whether a diagnostic's message is an error about a decisions file (a
  /// user's input, not the compiler's failure: Pipeline.cpp writes no
  /// crash reproducer for it).
  static bool isError(llvm::StringRef message);

  /// Emits "decisions file 'PATH': <entry>: " at `at`; the caller streams
  /// the rest.
  mlir::InFlightDiagnostic error(mlir::Operation *at,
                                 const llvm::Twine &entry) const;

private:
  std::string path;
  /// Where errors are reported (the entry's module).
  mlir::Operation *at = nullptr;
  llvm::DenseMap<mlir::Operation *, std::string> library, codegen;
  /// Pairs of ops never to share a kernel, with their node names.
  struct Apart {
    mlir::Operation *a, *b;
    std::string nameA, nameB;
  };
  std::vector<Apart> apart;
  llvm::DenseMap<mlir::Operation *, Tile> tiles;
  llvm::DenseMap<mlir::Operation *, Algorithm> algorithms;
  std::vector<std::pair<mlir::Operation *, Algorithm>> otherForms;
  /// The GPU-form entries in the file's order.
  std::vector<Algorithm> gpuForms;
};

} // namespace strata

#endif // STRATA_LIB_COMPILER_DECISIONS_H
