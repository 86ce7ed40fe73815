//===- Attention.h - attention blocks for the flash kernel ------*- C++ -*-===//
//
// The graph layer's view of an attention block, softmax(Q Kᵀ · scale
// [+ bias] [+ causal mask]) V, as the partitioner hands it to the GPU's
// flash-attention kernel (GpuAttention.cpp, docs/gpu.md "Attention").
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_COMPILER_ATTENTION_H
#define STRATA_LIB_COMPILER_ATTENTION_H

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace strata {

/// Where the kernel finds one of Q, K, V or writes O: a buffer read by
/// `source` (the operand of the first op the kernel replaces that reads it),
/// the element offset of the first batch's first row, the stride of each
/// batch dimension of Q and between sequence positions, all in elements.
/// The head dimension is contiguous. Transposes and constant-index gathers
/// between the buffer and the block (a fused QKV projection split into
/// heads, heads merged back) are absorbed: the kernel reads and writes
/// through the strides instead of separate copy kernels.
struct AttentionOperand {
  mlir::OpOperand *source = nullptr;
  int64_t offset = 0;
  llvm::SmallVector<int64_t> batchStrides;
  int64_t rowStride = 0;
};

/// The scores' additive bias (a padding or attention mask as exporters
/// write it: 0 where a key is kept, -inf or the type's lowest where it is
/// not; or any learned bias): a buffer broadcast to [batch..., S, T],
/// read through strides that are 0 along its broadcast dimensions.
struct AttentionBias {
  mlir::OpOperand *source = nullptr;
  llvm::SmallVector<int64_t> batchStrides;
  int64_t rowStride = 0, keyStride = 0;
  /// What the bias is multiplied by (a scale applied after the Add).
  double factor = 1.0;
  /// "f32", "bf16" or "f16".
  std::string type;
  /// Its shape, for the reasons.
  llvm::SmallVector<int64_t> shape;
};

/// One attention block of the graph:
///
///   S = MatMul(Q, Transpose(K))        Q [..., S, D], K [..., T, D]
///   [Cast] [Mul or Div by a scalar] [Add(S, bias)]   in any order
///   [Where(Trilu(true[S, T], k), fill, S) or Where(Trilu(...), S, fill)]
///   P = Softmax(S, axis = -1) [Where(IsNaN(P), 0, P)] [Cast]
///   O = MatMul(P, V)                   V [..., T, D]
///
/// with every intermediate value read only by the next op. Q and Kᵀ may
/// each be multiplied by a scalar before the product (torch's export of
/// scaled_dot_product_attention scales both by the scale's square root),
/// and Kᵀ may be any transpose that leaves the head dimension innermost in
/// K (a [B, T, H, D] projection transposed to [B, H, D, T] at once).
struct AttentionMatch {
  /// The ops the kernel replaces, in program order (the transpose first).
  llvm::SmallVector<mlir::Operation *> ops;
  /// The causal mask's Trilu, read by the Where: the kernel computes the
  /// mask from indices, so the Trilu is cloned into its body rather than
  /// passed (and disappears when nothing else reads it).
  mlir::Operation *mask = nullptr;
  /// The kernel's operands Q, K (the transpose's input), V and its result.
  /// Their sources are kept as the ops' operands, not values: the
  /// partitioner replaces the values they read while it outlines earlier
  /// kernels. `out.source` is unused.
  AttentionOperand q, k, v, out;
  /// Q's batch dimensions (their product is `batch`).
  llvm::SmallVector<int64_t> batchDims;
  /// The layout ops absorbed (also in `ops`), for the reasons.
  llvm::SmallPtrSet<mlir::Operation *, 8> layout;
  double scale = 1.0;
  /// Keys j with j <= i + causalOffset are kept for query row i.
  std::optional<int64_t> causalOffset;
  /// The scores' additive bias, when the block adds one.
  std::optional<AttentionBias> bias;
  /// Grouped-query attention: each of K's and V's heads serves this many
  /// heads of Q (their repeat_kv read in place; `batchDims` then splits the
  /// heads into [heads / headRepeat, headRepeat]).
  int64_t headRepeat = 1;
  /// Rows whose every key is masked with -inf give 0 rather than NaN (the
  /// export's Where(IsNaN(P), 0, P) after the softmax).
  bool zeroMaskedRows = false;
  int64_t batch = 1, seqQ = 0, seqK = 0, headDim = 0;
  /// The query rows a block of the kernel computes (attentionQueryRows, as
  /// the partitioner chose for the target). The portable PTX of a module
  /// for sm_90a takes those for a target without wgmma, and a launch of its
  /// own (GpuAttention.cpp, queryRows).
  int64_t queryRows = 64;
  /// The query rows of the portable PTX's blocks where they differ from
  /// `queryRows` (a module for sm_90a carries PTX for sm_90, whose kernel
  /// takes attentionQueryRows without wgmma and a launch of its own), else
  /// 0.
  int64_t portableQueryRows = 0;
  /// "bf16" or "f16": the type of Q, K, V and the result.
  std::string type;
  /// What strata-pad-attention did to fit the block to the kernel
  /// ("padded from 197 x 197, head dim 64"), else empty.
  std::string padding;

  /// The block's ops by role, for the rewrite that pads it to the kernel's
  /// shapes (AttentionPadding.cpp): the two products, K's transpose, the
  /// ops between the products (the scores' casts, scales, bias add, mask,
  /// softmax), the causal mask's Where, the operand that reads Q (past a
  /// scale the kernel absorbs), and the one that reads the bias.
  struct Roles {
    mlir::Operation *first = nullptr, *second = nullptr, *kTranspose = nullptr,
                    *where = nullptr;
    llvm::SmallVector<mlir::Operation *> scores;
    mlir::OpOperand *q = nullptr, *bias = nullptr;
  } roles;

  /// The kernel's parameters as the GPU stage reads them (the
  /// #strata.attention of the kernel's declaration); `inputs` are the
  /// kernel's operands, in which Q's, K's and V's buffers are found.
  kernel::AttentionAttr toAttr(mlir::Builder &b,
                               llvm::ArrayRef<mlir::Value> inputs) const;
  /// "softmax(Q K^T * 0.125 + bias [2, 1, 1, 128] + causal mask) V in
  /// bf16, 16 x 4096 x 4096, head dim 64" (ASCII: IR strings escape
  /// anything else).
  std::string describe() const;
};

/// Grouped-query attention's repeat of K's or V's heads, as transformers
/// writes it (repeat_kv): Reshape(Expand(Unsqueeze(x))) from x [..., Hkv, T,
/// D] through [..., Hkv, 1, T, D] and [..., Hkv, rep, T, D] to [..., Hkv *
/// rep, T, D], each op read once. The flash kernel reads x in place, each of
/// its heads for `rep` heads of Q; strata-fold-head-repeats folds the repeat
/// into the query rows of a block the kernel does not take.
struct HeadRepeat {
  /// The operand that reads x (the Unsqueeze's).
  mlir::OpOperand *source = nullptr;
  int64_t rep = 1;
  /// The Unsqueeze, the Expand and the Reshape.
  llvm::SmallVector<mlir::Operation *, 3> ops;
};

/// The repeat that makes `v`, or nullopt.
std::optional<HeadRepeat> matchHeadRepeat(mlir::Value v);

/// The attention block whose first product is `op` (a graph.matmul), on the
/// cuda target. nullopt when `op` does not start one; then `whyNot` is ""
/// when `op` is no attention at all, and says why the kernel cannot take
/// it otherwise ("head dimension 32: the kernel takes 64 or 128").
/// `anyShape` skips the checks of the head dimension and the sequence
/// lengths (for strata-pad-attention, which pads the block to fit them).
std::optional<AttentionMatch>
matchAttention(mlir::Operation *op, std::string &whyNot, bool anyShape = false);

/// The key rows the flash-attention kernel loads per step, and the unit its
/// sequence lengths must be multiples of (GpuAttention.cpp).
constexpr int64_t kAttentionBlockRows = 64;

/// The query rows one thread block of the kernel computes, on a GPU with
/// Hopper's warpgroup products (`wgmma`: sm_90a) or without:
/// - head dimension 128 with wgmma, sequences of whole 128-row blocks: 128,
///   two consumer warpgroups of 64 rows each sharing the K and V tiles a
///   producer warpgroup loads (GpuAttention.cpp, "warp-specialized").
///   Without wgmma the 64-row blocks below were 24-27% faster than the
///   same block in mma.sync (H200, bench/RESULTS.md, 2026-12-01 10:29);
/// - head dimension 64 with wgmma and sequences longer than 1024: 192, three
///   consumer warpgroups and a producer warpgroup (FA3's block at D = 64).
///   A sequence need not be whole 192-row blocks: the last block of a head
///   leaves the consumers past its end idle (seq_q stays a multiple of 64);
/// - head dimension 64 and sequences longer than 1024 without wgmma: 128 (4
///   warps of 32 rows), so that each K and V tile read from shared memory
///   feeds twice the rows;
/// - else 64. Measured on the H200 (bench/RESULTS.md, 2026-11-30): 128 rows
///   were 2-4% faster at 4096 keys at head dimension 64, and 64 rows made
///   GPT-2 small's attention (1024 keys, causal) 12% faster, twice the
///   blocks balancing a grid of under two waves; BERT's (512 queries) took
///   0.077-0.079 ms a step in 64-row blocks against 0.080-0.082 in 128-row
///   ones (2026-12-01 13:39).
inline int64_t attentionQueryRows(int64_t headDim, int64_t seqQ, bool wgmma) {
  if (headDim == 128)
    return wgmma && seqQ % 128 == 0 ? 128 : 64;
  if (headDim == 64 && wgmma && seqQ > 1024 && seqQ % 64 == 0)
    return 192;
  return headDim <= 64 && seqQ % 128 == 0 && seqQ > 1024 ? 128 : 64;
}

/// Whether the kernel's block is warp-specialized on sm_90a (a TMA producer
/// warpgroup and consumer warpgroups of 64 rows, GpuAttention.cpp): two
/// consumers at head dimension 128 (128-row blocks), three at 64 (192).
inline bool attentionWarpSpecialized(int64_t headDim, int64_t queryRows) {
  return (headDim == 128 && queryRows == 128) ||
         (headDim == 64 && queryRows == 192);
}

/// The thread blocks of one (batch, head): the last may end past the
/// sequence (192-row blocks).
inline int64_t attentionBlocksPerSequence(int64_t seqQ, int64_t queryRows) {
  return (seqQ + queryRows - 1) / queryRows;
}

/// The keys a step of the kernel takes where the target has wgmma: 128 in
/// the warp-specialized forms (head dimension 128 and 128-row blocks, or 64
/// and 192-row blocks: attentionQueryRows) where the keys are whole 128-key
/// tiles, else 64 (kAttentionBlockRows, also the portable PTX's steps in every
/// module). Twice the keys a step halves the steps' fixed work: the barrier
/// waits, each row's max and sum across a quad of lanes, O's correction. On the
/// H200 (bench/RESULTS.md, 2026-12-01 12:52) d128 s4k went 4.37 -> 3.60 ms,
/// causal 2.25 -> 2.08, s16k causal 4.00 -> 3.60. S's 64 x 128 scores take
/// 64 registers a consumer thread more, which the producer warpgroup gives
/// up (GpuAttention.cpp, kConsumerRegisters). At D = 64, in the 64-row
/// blocks of one warpgroup, 128-key steps were slower (BERT's attention
/// 0.0767 -> 0.0825 ms, 2026-12-01 13:24): 73 KiB of shared memory leave 3
/// blocks per SM instead of 5.
inline int64_t attentionStepKeys(int64_t headDim, int64_t queryRows,
                                 int64_t seqK) {
  return attentionWarpSpecialized(headDim, queryRows) && seqK % 128 == 0
             ? 128
             : kAttentionBlockRows;
}

} // namespace strata

#endif // STRATA_LIB_COMPILER_ATTENTION_H
