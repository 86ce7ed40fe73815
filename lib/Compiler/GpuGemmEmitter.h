//===- GpuGemmEmitter.h - the GEMM kernel's emitter ----------*- C++ -*-===//
//
// The GEMM kernel's emitter (GpuGemm.cpp: the epilogue, the portable
// mma.sync form and the entry; GpuGemmWarpSpecialized.cpp: the sm_90a form)
// and the tile and shared-memory constants both forms use. Private to
// lib/Compiler.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_GPUGEMMEMITTER_H
#define STRATA_COMPILER_GPUGEMMEMITTER_H

#include "CompilerUtils.h"
#include "Gemm.h"
#include "Gpu.h"
#include "GpuTensorCore.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <memory>

namespace strata::gemm {

using namespace mlir;
namespace kernel = strata::kernel;
using strata::forLoop;
using strata::ifThen;

constexpr int64_t kRows = strata::kGemmTileRows;
constexpr int64_t kColumns = strata::kGemmTileColumns;
constexpr int64_t kDepth = strata::kGemmTileDepth;
/// Tile rows whose blocks run next to each other (L2 reuse of W's tiles).
constexpr int64_t kGroupRows = 8;
constexpr const char *kSharedName = "__strata_gemm_shared";

/// A block is three warpgroups: a producer and two consumers (the
/// mma.sync form uses 8 of its 12 warps).
constexpr int64_t kThreads = 3 * 128;
constexpr int64_t kConsumerThreads = 128;
constexpr int64_t kMmaThreads = 256;
/// Registers a thread after setmaxnreg: the producer gives up what the
/// consumers' 128 accumulators need (40 x 128 + 232 x 256 <= 65536).
constexpr int64_t kProducerRegisters = 40;
constexpr int64_t kConsumerRegisters = 232;
/// Shared-memory stages of A's [128, 64] and W's [64, 128] tiles, 32 KiB
/// each: four for the TMA copies (one block per SM; with the result tiles
/// below they fill the 200 KiB strata gives a block; five, past that, were
/// no faster on the H200, bench/RESULTS.md 2026-12-01 00:06), three for the
/// mma.sync form's cp.async copies.
constexpr int64_t kStageBytes = (kRows + kColumns) * kDepth * 2;
constexpr int64_t kStages = 4;
constexpr int64_t kMmaStages = 3;
/// The wide form's stages of A's [128, 64] and W's [64, 256], 48 KiB each.
constexpr int64_t kWideColumns = strata::kGemmWideTileColumns;
constexpr int64_t kWideStageBytes = (kRows + kWideColumns) * kDepth * 2;
/// Four of them and the result buffers (below) are 230464 bytes, more than
/// the 200 KiB strata-gpu-map gives kernels in general but within the 227
/// KiB a block may opt in to on Hopper, the GEMM kernel having no static
/// shared memory. On the H200 (bench/RESULTS.md, 2026-12-01 08:11) three
/// stages were 0.8% slower on gelu(x@w+b), 8192x4096x4096.
constexpr int64_t kWideStages = 4;
/// With the handoff (the epilogue after the cut in the producer
/// warpgroup's idle warps, on the whole tile in shared memory: 64 KiB),
/// three: 214064 bytes.
constexpr int64_t kHandoffStages = 3;
/// The handoff's epilogue warps: warps 2 and 3.
constexpr int64_t kEpilogueThreads = 64;
/// The handoff's result tile: [128, 256] as four [128, 64] boxes.
constexpr int64_t kHandoffTileBytes = kRows * kWideColumns * 2;
/// A block's last tile has no products after it for the consumers to go
/// on to, so they apply the epilogue after the cut to the first 13/16 of
/// it beside the 2 epilogue warps (13 16-byte chunks a consumer thread,
/// 12 an epilogue warp's thread), which alone had left the last tile's
/// epilogue exposed at the end of the kernel.
constexpr int64_t kHandoffConsumerShareBytes = 13 * 16 * 2 * kConsumerThreads;
static_assert((kHandoffTileBytes - kHandoffConsumerShareBytes) %
                      (16 * kEpilogueThreads) ==
                  0,
              "the epilogue warps' share is whole chunks a thread");
/// f32 accumulators a thread for 64 rows by 128 columns (one m64n128
/// wgmma), or for a warp's 32 x 64 (mma.sync).
constexpr int64_t kAccumulators = kColumns / 2;

/// Accumulator quads whose inputs read per element (a residual) are loaded
/// together (8 pairs): more would not fit next to the 128 accumulators in
/// the 168 registers ptxas gives every thread of a 384-thread block (it
/// does not allocate past that after setmaxnreg.inc). Measured on the H200
/// (bench/RESULTS.md, 2026-11-30 21:55): BERT's output projection (bias
/// and residual) 0.061 ms a quad at a time, 0.052 four at a time.
constexpr int64_t kEpilogueChunk = 4;

/// A consumer's result tile in shared memory (bf16 or f16), which a TMA
/// copy stores: two column halves of [128, 64], 128-byte swizzled.
constexpr int64_t kTileBytes = kRows * kColumns * 2;
constexpr int64_t kTileHalfBytes = kTileBytes / 2;
/// The wide form stores a consumer's 64 rows a quarter (64 columns) at a
/// time, through two buffers of [64, 64] a consumer, 128-byte swizzled.
constexpr int64_t kQuarterColumns = 64;
constexpr int64_t kQuarterBytes = 64 * kQuarterColumns * 2;

/// Where the warp-specialized forms keep what in shared memory: the
/// stages, the consumers' result tiles or buffers, then a full and an
/// empty mbarrier per stage. The launch is the same for the mma.sync form
/// (which uses three of the narrow stages' 32 KiB), so it depends on the
/// shape only.
struct SharedLayout {
  int64_t stages, stageBytes, resultOffset, barrierOffset, bytes;
};
inline SharedLayout sharedLayout(bool wide, bool handoff) {
  SharedLayout l;
  l.stages = handoff ? kHandoffStages : wide ? kWideStages : kStages;
  l.stageBytes = wide ? kWideStageBytes : kStageBytes;
  l.resultOffset = l.stages * l.stageBytes;
  l.barrierOffset = l.resultOffset + (handoff ? kHandoffTileBytes
                                      : wide  ? 2 * 2 * kQuarterBytes
                                              : 2 * kTileBytes);
  // 197696 bytes narrow.
  l.bytes = l.barrierOffset + 2 * l.stages * 8 + strata::kWgmmaAlign;
  return l;
}

/// How the epilogue reads one input of one of its linalg.generic ops.
struct EpilogueInput {
  enum Kind { Chain, Column, Element, Once } kind = Chain;
  /// The kernel argument it reads (not for Chain), and its element type.
  int64_t arg = -1;
  Type type;
};

/// One linalg.generic of the epilogue, cloned out of the body that the
/// kernel replaces (with the constants its body uses).
struct EpilogueStep {
  linalg::GenericOp op;
  SmallVector<EpilogueInput> inputs;
};

/// The root buffer under a chain of views.
inline Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    break;
  }
  return v;
}

class GemmEmitter : strata::TensorCoreEmitter {
public:
  GemmEmitter(func::FuncOp decl, func::FuncOp body, ModuleOp kernels,
              kernel::GemmAttr params, int64_t blockSharedLimit, bool wgmma)
      : TensorCoreEmitter(decl, body, kernels, wgmma),
        blockSharedLimit(blockSharedLimit) {
    rows = params.getRows();
    columns = params.getColumns();
    depth = params.getDepth();
    aArg = params.getA();
    wArg = params.getW();
    f16 = params.getType().isF16();
    tileColumns = params.getTileColumns();
    wideTiles = tileColumns == kWideColumns;
  }

  LogicalResult run();

private:
  /// Finds the epilogue's generic ops in the body and clones them (and the
  /// constants they use) into `holder`.
  LogicalResult takeEpilogue();
  /// Where an accumulator pair goes: its element index and (even) column
  /// in the result (i64), and a number that is equal for pairs of one
  /// column (the column's part that does not depend on the tile), so that
  /// a per-column input is loaded once per thread.
  struct Place {
    Value index, col;
    int64_t columnKey;
  };
  /// The place of the thread's first pair, at row `row0` and column
  /// `col0` (i32).
  Place firstPlace(Value row0, Value col0) {
    Value col = wide(col0);
    return {arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, wide(row0), c64(columns)),
                col),
            col, 0};
  }
  /// `index` (a pair's first element, i64) where it lies in the result;
  /// else the result's last pair. A tile row partly past the result's rows
  /// reads its per-element inputs so: in bounds, for results never stored.
  Value inResult(Value index) {
    if (rows % kRows == 0)
      return index;
    return arith::MinUIOp::create(b, loc, index, c64(rows * columns - 2));
  }
  /// The place of the pair `rows` rows and `cols` columns from `first`: a
  /// constant from the thread's first index, so that the addresses of its
  /// loads and stores are one register and an offset.
  Place placeAt(const Place &first, int64_t rows, int64_t cols,
                int64_t columnKey) {
    return {
        arith::AddIOp::create(b, loc, first.index, c64(rows * columns + cols)),
        arith::AddIOp::create(b, loc, first.col, c64(cols)), columnKey};
  }
  /// The values of one pair's inputs: per step, per input, the pair's two
  /// (null for the chain's).
  using PairInputs = SmallVector<SmallVector<std::pair<Value, Value>>>;
  /// The epilogue's steps cloned on scalars from `value`: the ops after
  /// `from` (all when null; `value` then stands for its result) up to
  /// `until`, whose value it returns (to the end when null). `inputs` are
  /// element `e` (0, 1) of a pair's other inputs; null after the cut, whose
  /// ops read none.
  Value cloneSteps(Value value, const PairInputs *inputs, int64_t e,
                   Operation *from, Operation *until);
  /// Finds the cut: the earliest value of the result's type after which
  /// the epilogue reads no input but that value (BERT's FFN1: the biased
  /// product, which the exact GELU alone reads). Sets cutOp and
  /// cutSuffixOps.
  void findCut();
  /// Two adjacent elements of type `type` at element `index` of `base`.
  std::pair<Value, Value> loadPair(Value base, Type type, Value index);
  /// Loads one element of type `type` at element `index` of `base`.
  Value loadElement(Value base, Type type, Value index);
  /// Stage `s`'s A tile [128, 64] and W tile [64, 128] or [64, 256] (column
  /// parts of 64, 8 KiB apart) in the shared memory at `shared`: the
  /// mma.sync form's layout too (in stages of 32 KiB).
  int64_t stageBytes() { return wgmma ? layout.stageBytes : kStageBytes; }
  Value stageA(Value shared, Value s) {
    return at(shared, mul(s, c32(stageBytes())));
  }
  Value stageW(Value shared, Value s) {
    return at(stageA(shared, s), c32(kRows * kDepth * 2));
  }
  /// How many tiles of `tn` columns this block takes (i32); sets its index
  /// and the grid's size.
  Value blockTiles(int64_t tn, Value &bid, Value &grid);
  /// The first row and column of tile `tile` of `tn` columns (i32).
  void tileOrigin(int64_t tn, mlir::Value tile, mlir::Value &m0,
                  mlir::Value &n0);
  /// The epilogue on accumulator pairs; `where(t, h)` is the place of
  /// accumulator 4 t + 2 h, and `store(place, t, h, word)` stores its pair
  /// (packed in an i32).
  /// With `prefix`, the epilogue up to the cut.
  LogicalResult
  storePairs(ArrayRef<Value> acc,
             function_ref<Place(int64_t t, int64_t h)> where,
             function_ref<void(const Place &, int64_t, int64_t, Value)> store,
             bool prefix = false);
  /// The kernel's body on sm_90a: TMA, mbarriers, wgmma.
  LogicalResult emitWarpSpecialized(Value shared, Value tid);
  /// The portable form: cp.async, ldmatrix, mma.sync.
  LogicalResult emitMmaSync(Value shared, Value tid);

  /// The warp-specialized form's values that its roles share, set at the
  /// start of emitWarpSpecialized.
  struct Ring {
    Value shared, tid, warp, warpgroup, lane;
    /// The tensor maps of A, W and the result (128 bytes each, global).
    Value mapA, mapW, mapOut;
    /// The stages' mbarriers (the full ones, then the empty ones; 8 bytes
    /// each) and the handoff's result tile, in shared memory.
    Value barriers, tile;
    /// How many tiles the block takes, its index and the grid's size.
    Value mine, bid, grid;
    int64_t stages = 0;
    /// Threads that read a stage: one consumer's (narrow), both's (wide).
    int64_t readers = 0;
    /// Steps of kDepth along K a tile.
    int64_t kSteps = 0;
    /// The handoff's hardware barriers' threads: both consumers' and the
    /// epilogue warps'.
    int64_t handoffThreads = 0;
  };
  /// A consumer warpgroup's values (emitConsumers).
  struct Consumer {
    /// The consumer (0, 1), the warp in its warpgroup, the thread's group
    /// of four lanes and its lane in that group.
    Value index, wm, group, quad;
    /// Its result tile (narrow) or two buffers (wide) in shared memory.
    Value result;
    /// Its first thread (which issues its TMA stores) and its own hardware
    /// barrier (3 + its index, its 128 threads).
    Value leader, barrier;
    /// The thread's row's byte offset in a swizzled 64-column part.
    Value rowBytes;
  };
  Value equals(Value x, int64_t v);
  /// Column part `part` ([64, 64], 8 KiB apart) of stage `s`'s W tile.
  Value wPart(Value s, int64_t part);
  /// Stage `s`'s full and empty mbarriers.
  Value fullBarrier(Value s);
  Value emptyBarrier(Value s);
  /// The block's tile `j`: blockIdx.x + j gridDim.x.
  Value tileOf(Value j);
  /// The stage of the ring's step `i`, and the ring's position after
  /// (stage `s`, parity `ph` of its phase).
  Value ringSlot(Value i);
  SmallVector<Value> ringNext(Value s, Value ph);
  /// Named barrier `id`: 1 (wide: both consumers' 256 threads and the
  /// watcher's 32) or 1 + c (narrow: consumer c's 128 and the watcher's).
  void stepBarrier(Value id);
  /// The epilogue after the cut on `bytes` of results in shared memory at
  /// `part`, by `threads` threads (`index`: this one's): each thread 8
  /// consecutive values at a time, warps on 512 contiguous bytes, in a
  /// loop.
  void applySuffix(Value part, int64_t bytes, Value index, int64_t threads);
  /// Whether tile `j` of the block is (eq) or is not (ne) its last.
  Value isLastTile(Value j, arith::CmpIPredicate is = arith::CmpIPredicate::eq);
  /// bar.arrive on hardware barrier `id` of `threads` threads.
  void arriveAt(int64_t id, int64_t threads);
  /// The roles: the producer thread's TMA copies, the watcher warp, the
  /// handoff's epilogue warps, the consumer warpgroups.
  void emitProducer();
  void emitWatcher();
  void emitHandoffEpilogue();
  LogicalResult emitConsumers();
  void consumerBarrier(const Consumer &c);
  Value swizzledPair(const Consumer &c, int64_t tt);
  /// A consumer's step of kDepth along K (the last one waits for its own
  /// products).
  SmallVector<Value> consumerStep(const Consumer &c, Value k, Value s,
                                  ValueRange state, bool last);
  /// A consumer's tile `j`: its products, then its stores.
  LogicalResult consumerTile(const Consumer &c, Value j);
  LogicalResult storeQuarter(const Consumer &c, ArrayRef<Value> acc,
                             const Place &origin, int64_t q, Value box);
  LogicalResult storeHandoffTile(const Consumer &c, ArrayRef<Value> acc,
                                 const Place &origin, Value j);
  LogicalResult storeWideTile(const Consumer &c, ArrayRef<Value> acc,
                              const Place &origin, Value m0, Value n0);
  LogicalResult storeNarrowTile(const Consumer &c, ArrayRef<Value> acc,
                                Value m0, Value n0);
  Ring ring;

  int64_t rows = 0, columns = 0, depth = 0, aArg = -1, wArg = -1;
  /// The wgmma form's tiles: 128x256 (wide: both consumers on each tile)
  /// or 128x128 (each consumer its own); the mma.sync form's are 128x128.
  int64_t tileColumns = kColumns;
  bool wideTiles = false;
  /// Wide tiles whose epilogue has a cut, at K >= kGemmWideCostlyDepth:
  /// the consumers leave the tile in shared memory at the cut and go on to
  /// their next tile's products; the producer warpgroup's warps 2 and 3
  /// apply the rest and store it. On the H200 (bench/RESULTS.md,
  /// 2026-12-01 08:11, p10 of replays, with the exact GELU): 0.3717 ->
  /// 0.3628 ms at K = 4096 (gelu(x@w+b)), but 0.199 -> 0.202 at K = 2048,
  /// 0.236 -> 0.269 at K = 1536 and 0.133 -> 0.200 at 768 (BERT's FFN1,
  /// narrow): two warps' GELU takes longer than a short tile's products.
  bool handoff = false;
  /// The shared memory a block may opt in to, and the layout of it that
  /// run() chooses (once it knows the handoff).
  int64_t blockSharedLimit;
  SharedLayout layout;
  std::unique_ptr<Block> holder;
  SmallVector<EpilogueStep> steps;
  /// The holder's constants, cloned into the kernel's entry.
  IRMapping hoisted;
  /// The cut: the op whose result it is (none: null).
  Operation *cutOp = nullptr;
  /// How many ops come after the cut.
  int64_t cutSuffixOps = 0;
  SmallVector<Value> pointers;
};

} // namespace strata::gemm

#endif // STRATA_COMPILER_GPUGEMMEMITTER_H
