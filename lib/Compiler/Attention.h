//===- Attention.h - attention blocks for the flash kernel ------*- C++ -*-===//
//
// The graph layer's view of an attention block, softmax(Q Kᵀ · scale
// [+ causal mask]) V, as the partitioner hands it to the GPU's
// flash-attention kernel (GpuAttention.cpp, docs/gpu.md "Attention").
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_COMPILER_ATTENTION_H
#define STRATA_LIB_COMPILER_ATTENTION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace strata {

/// One attention block of the graph:
///
///   S = MatMul(Q, Transpose(K))        Q [..., S, D], K [..., T, D]
///   [Cast] [Mul or Div by a scalar]    in either order
///   [Where(Trilu(true[S, T], k), fill, S) or Where(Trilu(...), S, fill)]
///   P = Softmax(S, axis = -1) [Cast]
///   O = MatMul(P, V)                   V [..., T, D]
///
/// with every intermediate value read only by the next op.
struct AttentionMatch {
  /// The ops the kernel replaces, in program order (the transpose first).
  llvm::SmallVector<mlir::Operation *> ops;
  /// The causal mask's Trilu, read by the Where: the kernel computes the
  /// mask from indices, so the Trilu is cloned into its body rather than
  /// passed (and disappears when nothing else reads it).
  mlir::Operation *mask = nullptr;
  /// The kernel's operands: Q, K (the transpose's input), V. Kept as the
  /// ops' operands, not values: the partitioner replaces the values they
  /// read while it outlines earlier kernels.
  mlir::OpOperand *q = nullptr, *k = nullptr, *v = nullptr;
  double scale = 1.0;
  /// Keys j with j <= i + causalOffset are kept for query row i.
  std::optional<int64_t> causalOffset;
  int64_t batch = 1, seqQ = 0, seqK = 0, headDim = 0;
  /// "bf16" or "f16": the type of Q, K, V and the result.
  std::string type;

  /// The kernel's parameters as the GPU stage reads them
  /// (strata.attention on the kernel's declaration).
  mlir::DictionaryAttr toAttr(mlir::Builder &b) const;
  /// "softmax(Q K^T * 0.125 + causal mask) V in bf16, 16 x 4096 x 4096,
  /// head dim 64" (ASCII: IR strings escape anything else).
  std::string describe() const;
};

/// The attention block whose first product is `op` (a graph.matmul), on the
/// cuda target. nullopt when `op` does not start one; then `whyNot` is ""
/// when `op` is no attention at all, and says why the kernel cannot take
/// it otherwise ("head dimension 32: the kernel takes 64 or 128").
std::optional<AttentionMatch> matchAttention(mlir::Operation *op,
                                             std::string &whyNot);

/// The query rows one thread block of the flash-attention kernel computes
/// (and the key rows it loads per step): GpuAttention.cpp's tile.
constexpr int64_t kAttentionBlockRows = 64;

} // namespace strata

#endif // STRATA_LIB_COMPILER_ATTENTION_H
