//===- GpuAttentionEmitter.h - the flash-attention kernel's emitter -------===//
//
// The flash-attention kernel's emitter (GpuAttention.cpp: the block's plan,
// where its operands lie, the producer warpgroup, the prologue and the
// launch; GpuAttentionSteps.cpp: a key step's products, the online softmax,
// the step loops and the epilogue). Private to lib/Compiler.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_GPUATTENTIONEMITTER_H
#define STRATA_COMPILER_GPUATTENTIONEMITTER_H

#include "GpuTensorCore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

namespace strata::attention {

using namespace mlir;

/// Emits one attention kernel's body (GpuAttention.cpp's file comment). The
/// constructor reads strata.attention and plans the block (its rows, warps,
/// key steps and shared memory); run() replaces the generic body and sets
/// the launch. Values the whole body uses (the thread's indices, where the
/// operands lie, the step count, the barriers) are members set by run();
/// each part of the body is a method, emitted in run()'s order.
class FlashEmitter : strata::TensorCoreEmitter {
public:
  FlashEmitter(func::FuncOp decl, func::FuncOp body, ModuleOp kernels,
               kernel::AttentionAttr params, bool wgmma);

  LogicalResult run();

private:
  /// S's accumulators per m-tile, per tile of 8 keys: 4 values each.
  using Scores = SmallVector<SmallVector<SmallVector<Value>>>;
  /// Registers per m-tile: wgmma's accumulators, or P's packed words.
  using PerTile = SmallVector<SmallVector<Value>>;
  /// The key-step loops' state: O's accumulators, then m and l (the
  /// thread's 2 rows per m-tile each) and, when pipelined, P's words (per
  /// m-tile, four per 16 keys) and O's pending corrections (c, one per m
  /// and l).
  struct StepState {
    SmallVector<Value> o, m, l;
    PerTile p;
    SmallVector<Value> c;
  };
  /// Where Q, K, V or O lies (Attention.h's AttentionOperand; `arg` is the
  /// buffer's parameter, -1 for O: the last).
  struct View {
    int64_t arg = -1, offset = 0, rowStride = 0;
    SmallVector<int64_t> batchStrides;
    /// The view as a tensor map sees its buffer, rows of rowStride
    /// elements (rowStride > 0): an element offset (the first element's,
    /// or a batch stride) split into whole rows and the columns left over.
    int64_t rowsOf(int64_t elements) const { return elements / rowStride; }
    int64_t columnsOf(int64_t elements) const { return elements % rowStride; }
  };
  const View &qView() const { return views[0]; }
  const View &kView() const { return views[1]; }
  const View &vView() const { return views[2]; }
  const View &oView() const { return views[3]; }

  /// The heads whose blocks a causal kernel interleaves (locateBlock):
  /// all of them when their K and V fit in kInterleaveBytes together, half
  /// of the H100's and H200's 50 MiB L2, else one. Measured on the H200
  /// (bench/RESULTS.md, 2026-11-30 04:36): GPT-2 small's 96 heads of 1024
  /// keys (24 MiB) interleaved, 5.27 -> 5.07 ms; groups of 25 heads of 4096
  /// keys at head dimension 64 (each group's K and V in 25 MiB), 1.72 ->
  /// 1.84 ms, where one head's 32 blocks together already put the long
  /// ones first and share their K and V in L2.
  int64_t causalHeadGroup() const {
    constexpr int64_t kInterleaveBytes = 25ll << 20;
    int64_t perHead = 2 * seqK * dim * 2;
    return batch * perHead <= kInterleaveBytes ? batch : 1;
  }

  // The block (GpuAttention.cpp).
  LogicalResult checkTensorMaps();
  void locateBlock(Value bid);
  Value operandStart(const View &view, Value firstRow);
  void locateOperands(Value outPointer);
  void countSteps();
  Value diagonalSteps(Value first, int64_t count, Value bound);
  void initBarriers();
  scf::IfOp splitRoles();
  void emitProducer();
  void prologue();
  void loadQ();
  void setLaunch();

  // Shared memory: Q's tile, K's and V's stages, the mbarriers.
  Value kTile(Value stage);
  Value vTile(Value stage);
  Value keysAt(Value step, const View &view);
  Value stageOf(Value tile);
  void prefetch(Value tile);
  void syncCompute();
  Value ring(int64_t which, Value stage);
  Value kFull(Value s) { return ring(0, s); }
  Value kEmpty(Value s) { return ring(1, s); }
  Value vFull(Value s) { return ring(2, s); }
  Value vEmpty(Value s) { return ring(3, s); }
  Value phaseOf(Value tile);
  void release(Value from);
  /// The byte offset of 16-byte chunk `chunk` of row `row` in a K, V or Q
  /// tile of `tileRows` rows (GpuTensorCore.h).
  Value swizzled(Value row, Value chunk, int64_t tileRows) {
    return TensorCoreEmitter::swizzled(row, chunk, tileRows, dim / 8);
  }
  /// Issues the cp.async copies of a [count, dim] tile whose first row is
  /// at global `src`, rows `rowStride` elements apart, into the shared tile
  /// at `tile`.
  void loadTile(Value src, Value tile, int64_t count, int64_t rowStride) {
    TensorCoreEmitter::loadTile(tid, 32 * warps, src, tile, count, dim / 8,
                                rowStride * 2);
  }

  // The key steps (GpuAttentionSteps.cpp).
  Value warpRow(int64_t mt);
  int64_t oIndex(int64_t mt, int64_t dt, int64_t e) const {
    return (mt * oTiles + dt) * 4 + e;
  }
  SmallVector<Value> initialState();
  Value stageOffset(Value stage);
  PerTile issueScores(Value stage, bool fence = true);
  Scores toScores(PerTile acc);
  Scores scores(Value stage);
  Value firstKey(Value step);
  Value fragmentRow(int64_t mt, int64_t e);
  Value fragmentKey(Value key0, int64_t nt, int64_t e);
  void addBias(Value step, Scores &s);
  void maskCausal(Value step, Scores &s);
  PerTile softmax(Value step, Scores s, MutableArrayRef<Value> m,
                  MutableArrayRef<Value> l, SmallVector<Value> &corrections);
  void rescale(MutableArrayRef<Value> o, ArrayRef<Value> corrections);
  void fenceProductOperands(MutableArrayRef<Value> o, PerTile &p);
  void attend(MutableArrayRef<Value> o, PerTile p, Value stage, bool wait,
              bool fenced = false);
  StepState unpackState(ValueRange values, bool withP);
  SmallVector<Value> packState(const StepState &state);
  SmallVector<Value> keySteps(ArrayRef<Value> init);
  SmallVector<Value> pipelinedKeySteps(ArrayRef<Value> init);
  void storeOutput(ArrayRef<Value> results);
  /// 2^x with subnormal results flushed to zero: one MUFU.EX2, where
  /// llvm.exp2's ex2.approx.f32 (which keeps them) costs three more
  /// instructions. The kernel's exponents are x - max <= 0 and what they
  /// give is summed against the max's own 1, so a result below 2^-126
  /// changes nothing.
  Value exp2(Value x);

  // What strata.attention says.
  int64_t batch = 1, seqQ = 0, seqK = 0, dim = 0;
  double scale = 1.0;
  std::optional<int64_t> causalOffset;
  /// The scores' additive bias (Attention.h's AttentionBias): its buffer's
  /// parameter, strides in elements (0 along broadcast dimensions), the
  /// factor it is multiplied by, and its element type.
  struct Bias {
    int64_t arg = -1, rowStride = 0, keyStride = 0;
    SmallVector<int64_t> batchStrides;
    double factor = 1.0;
    Type type;
  };
  std::optional<Bias> bias;
  /// Rows whose every key the bias masks with -inf give 0, not NaN.
  bool zeroMaskedRows = false;
  /// Q's batch dimensions, and where Q, K, V and O are.
  SmallVector<int64_t> batchDims;
  View views[4];

  // The block's plan (the constructor).
  /// Query rows per block, and 16-row m-tiles per warp.
  int64_t rows = 64, mTiles = 1;
  /// Warp-specialized (warpSpecialized); the compute warps, the block's
  /// threads; the rows of a Q tile in shared memory (a consumer
  /// warpgroup's 64 in the warp-specialized form on sm_90a, else `rows`).
  bool specialized = false;
  /// The warp-specialized form on sm_90a, which loads by TMA. Without
  /// wgmma no block is warp-specialized (queryRows), so `specialized` with
  /// wgmma is this form.
  bool tma = false;
  /// Whether the kernel takes the tensor maps' parameter after the result:
  /// the warp-specialized form's, and the portable PTX's variant of it,
  /// which leaves it unread (the step passes what the cubin's form takes).
  bool mapsParameter = false;
  int64_t warps = 4, threads = 128, tileRows = 64;
  /// The keys of a step (stepKeys), and the whole steps of a sequence.
  int64_t keys = 64, steps = 1;
  /// Software-pipelined steps (pipelinedSteps), and the stages of K's and
  /// V's tiles (keyStages).
  bool pipelined = false;
  int64_t stages = 2;
  /// Q's tile (the consumers' tiles), and one stage's tile of K or V, in
  /// bytes.
  int64_t qBytes = 0, tileBytes = 0;
  /// The blocks of a sequence, and the heads whose blocks interleave
  /// (causalHeadGroup).
  int64_t blocksPerSeq = 1, heads = 1;
  /// Whether a head's last block ends past its sequence (192-row blocks, on
  /// sm_90a only; sequences are whole 64-row parts, a consumer
  /// warpgroup's).
  bool partial = false;
  /// Whether each consumer stops at its own rows' diagonal (countSteps).
  bool ownSteps = false;
  /// Whether a row's max moves only when it grows by more than
  /// kStaleMaxLog2 (softmax).
  bool staleMax = false;
  /// The scale in the log2 domain (exp2 computes the exponentials).
  double scaleLog2 = 1.0;
  /// 16-column k-steps of Q K^T, O's 8-column tiles, O's accumulators (per
  /// m-tile: perTile), P's words per m-tile.
  int64_t kSteps = 4, oTiles = 8, oCount = 32, perTile = 32, pWords = 16;

  // Set by run(): the buffers' elements (before resetBody makes them
  // bytes) and parameters.
  SmallVector<int64_t> bufferElements;
  SmallVector<Value> pointers;
  // Per-thread values set by run(): the thread's indices, the block's
  // first query row (q0) and this thread's (myQ0, myRow0), the (batch,
  // head)'s digits over the batch dimensions.
  Value tid, lane, sharedBase, warpgroup, warp, group, quad;
  Value q0, myQ0, myRow0;
  SmallVector<Value> digits;
  /// Where this (batch, head)'s Q, K, V, O and bias start (global).
  Value qSrc, kSrc, vSrc, oDst, biasSrc;
  int64_t biasBytes = 0;
  /// The key steps this block takes, and those this consumer takes.
  Value stepCount, consumerSteps;
  /// The mbarriers (tma): the first (Q's) and the rings' after it.
  Value barriers, qFull;
  /// Q's A fragments (mma.sync), or the descriptors of Q's tile and of
  /// K's and V's first stages (wgmma).
  Scores qFrag;
  Value qDesc, kDesc0, vDesc0;
  Value negInf;
};

} // namespace strata::attention

#endif // STRATA_COMPILER_GPUATTENTIONEMITTER_H
