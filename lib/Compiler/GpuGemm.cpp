//===- GpuGemm.cpp - the GEMM kernel with a fused epilogue ----------------===//
//
// Generates the body of a GEMM kernel (Gemm.h: the partitioner marks it
// strata.template = "gemm" and records its shape in strata.gemm) in place
// of strata-gpu-map's generic mapping. On sm_90a (docs/gpu.md, "The GEMM
// kernel"):
//
//   - Persistent: at most one block per SM (the step's "persistent"
//     attribute; the runtime caps the grid), each walking every grid-th
//     tile of the result, in groups of 8 tile rows so that the tiles at
//     work at one time share A's and W's rows in L2. Tiles are 128x128
//     (narrow) or 128x256 (wide), as the partitioner chose (tile_columns
//     in strata.gemm; GemmMatch::tileColumns).
//   - A block is three warpgroups. A producer thread issues TMA copies of
//     A's [128, 64] and W's [64, 128 or 256] tiles (tensor maps the runtime
//     encodes: "tensor_maps") into a ring of shared-memory stages,
//     each with a full and an empty mbarrier. Warp 1 watches the full
//     barriers in the ring's order and hands each stage to its consumer
//     through that consumer's hardware barrier.
//   - Narrow: two consumer warpgroups take the block's tiles in turn, each
//     all 128 rows of its tile: 8 wgmma m64n128k16 per step of 64 of K, one
//     step's products left running while the next step's are issued. Their
//     turns at the tensor cores follow the ring, so one multiplies while
//     the other applies its epilogue and stores: the epilogue is hidden
//     where a tile's products take longer than its epilogue (long K).
//   - Wide: both consumers work on each tile, 64 of its rows each, 4 wgmma
//     m64n256k16 per step (the same 128 accumulators a thread; less copied
//     from L2 and read from shared memory per FLOP), and store their rows
//     a quarter (64 columns) at a time through two buffers each, while the
//     tensor cores wait for their epilogue.
//   - A consumer writes its result into shared memory (in the TMA's
//     128-byte swizzle, so that a warp's writes take every bank once) and
//     one of its threads stores it with TMA copies: 4-byte stores from
//     the accumulators' layout, each warp's touching 8 rows, had made
//     BERT's products a third slower than cuBLASLt.
//   - setmaxnreg moves registers from the producer warpgroup to the
//     consumers (128 f32 accumulators a thread).
//
// The portable PTX (sm_80 and plain sm_90: mma.sync m16n8k16, no TMA) runs
// the same launch: 8 of the 12 warps, each 32 rows by 64 columns of the
// block's tiles one after another, fed by cp.async through three stages
// and ldmatrix (W's with ldmatrix.trans); the tensor maps go unread.
//
// The partitioner makes it for products that are generated code on sm_90a
// (--no-libraries, the decisions file's "codegen", a product cuBLASLt does
// not take) and for long products whose epilogue cuBLASLt would leave in
// part to a kernel of its own (kGemmOverLibraryDepth).
//
// The epilogue is the kernel stage's own: the elementwise linalg.generic ops
// that read the product's accumulator buffer (the kernel stage fused the
// chain into one or a few), their bodies cloned once per accumulator pair,
// with each other input read per column, per element or once, as its
// indexing map says. So the kernel computes what the generated kernels
// would, the product's rounding to its type included.
//
//===----------------------------------------------------------------------===//

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

using namespace mlir;
namespace kernel = strata::kernel;
using strata::forLoop;
using strata::ifThen;

namespace {

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
SharedLayout sharedLayout(bool wide, bool handoff) {
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
Value rootOf(Value v) {
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
              DictionaryAttr params, int64_t blockSharedLimit, bool wgmma)
      : TensorCoreEmitter(decl, body, kernels, wgmma),
        blockSharedLimit(blockSharedLimit) {
    auto i64 = [&](StringRef name) {
      return cast<IntegerAttr>(params.get(name)).getInt();
    };
    rows = i64("rows");
    columns = i64("columns");
    depth = i64("depth");
    aArg = i64("a");
    wArg = i64("w");
    f16 = cast<StringAttr>(params.get("type")).getValue() == "f16";
    tileColumns = i64("tile_columns");
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

LogicalResult GemmEmitter::takeEpilogue() {
  Block &entry = body.getBody().front();
  auto fail = [&](const Twine &what) {
    return decl.emitError("internal error: the GEMM kernel ")
           << decl.getSymName() << ": " << what;
  };
  // The product: the one linalg op with a reduction loop. Its output's root
  // buffer holds the accumulators.
  Value chain;
  for (Operation &op : entry) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp || linalgOp.getNumReductionLoops() == 0)
      continue;
    if (chain)
      return fail("its body has more than one product");
    chain = rootOf(linalgOp.getDpsInitOperand(0)->get());
  }
  if (!chain)
    return fail("its body has no product");
  Value result = entry.getArguments().back();

  holder = std::make_unique<Block>();
  OpBuilder hb(body.getContext());
  hb.setInsertionPointToEnd(holder.get());
  IRMapping constants;
  for (Operation &op : entry) {
    auto generic = dyn_cast<linalg::GenericOp>(&op);
    if (!generic || generic.getNumReductionLoops() != 0 ||
        generic.getNumDpsInits() != 1)
      continue;
    bool readsChain = llvm::any_of(generic.getDpsInputs(), [&](Value input) {
      return rootOf(input) == chain;
    });
    if (!readsChain)
      continue;
    EpilogueStep step;
    int64_t loops = generic.getNumLoops();
    for (OpOperand *input : generic.getDpsInputOperands()) {
      EpilogueInput in;
      Value root = rootOf(input->get());
      AffineMap map = generic.getMatchingIndexingMap(input);
      if (root == chain) {
        if (!map.isIdentity())
          return fail("its epilogue reads the product through a map other "
                      "than the identity");
        step.inputs.push_back(in);
        continue;
      }
      auto arg = dyn_cast<BlockArgument>(root);
      if (!arg || arg.getOwner() != &entry)
        return fail("its epilogue reads a buffer that is not an input");
      in.arg = arg.getArgNumber();
      in.type = cast<MemRefType>(input->get().getType()).getElementType();
      auto isZero = [](AffineExpr e) {
        auto c = dyn_cast<AffineConstantExpr>(e);
        return c && c.getValue() == 0;
      };
      ArrayRef<AffineExpr> exprs = map.getResults();
      if (llvm::all_of(exprs, isZero)) {
        in.kind = EpilogueInput::Once;
      } else if (map.isIdentity()) {
        in.kind = EpilogueInput::Element;
      } else if (llvm::all_of(exprs.drop_back(), isZero) &&
                 exprs.back() ==
                     getAffineDimExpr(loops - 1, map.getContext())) {
        in.kind = EpilogueInput::Column;
      } else {
        return fail("its epilogue reads an input through an unsupported map");
      }
      step.inputs.push_back(in);
    }
    // The constants the body reads from outside come along.
    generic.getRegion().walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && !generic->isAncestor(def) && !constants.contains(operand) &&
            def->hasTrait<OpTrait::ConstantLike>())
          hb.clone(*def, constants);
      }
    });
    step.op = cast<linalg::GenericOp>(hb.clone(*generic, constants));
    steps.push_back(std::move(step));
    Value out = rootOf(generic.getDpsInitOperand(0)->get());
    if (out == result)
      return success();
    chain = out;
  }
  return fail("its epilogue does not end in the result");
}

Value GemmEmitter::loadElement(Value base, Type type, Value index) {
  int64_t bytes = std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
  Value offset = arith::MulIOp::create(b, loc, index, c64(bytes));
  return LLVM::LoadOp::create(b, loc, type, at(base, offset), bytes);
}

std::pair<Value, Value> GemmEmitter::loadPair(Value base, Type type,
                                              Value index) {
  int64_t bits = type.getIntOrFloatBitWidth();
  if (bits < 8)
    return {
        loadElement(base, type, index),
        loadElement(base, type, arith::AddIOp::create(b, loc, index, c64(1)))};
  Value offset = arith::MulIOp::create(b, loc, index, c64(bits / 8));
  // Both elements in one load: the column is even and rows hold a
  // multiple of 128 elements, so the pair is aligned to its size.
  Value pair = LLVM::LoadOp::create(b, loc, VectorType::get({2}, type),
                                    at(base, offset), bits / 4);
  return {LLVM::ExtractElementOp::create(b, loc, pair, c32(0)),
          LLVM::ExtractElementOp::create(b, loc, pair, c32(1))};
}

Value GemmEmitter::cloneSteps(Value value, const PairInputs *inputs, int64_t e,
                              Operation *from, Operation *until) {
  IRMapping mapping = hoisted;
  bool on = !from;
  if (from)
    mapping.map(from->getResult(0), value);
  for (auto [k, step] : llvm::enumerate(steps)) {
    Block &payload = step.op.getRegion().front();
    for (auto [i, in] : llvm::enumerate(step.inputs)) {
      if (in.kind == EpilogueInput::Chain) {
        mapping.map(payload.getArgument(i), value);
      } else if (inputs) {
        const std::pair<Value, Value> &pair = (*inputs)[k][i];
        mapping.map(payload.getArgument(i), e == 0 ? pair.first : pair.second);
      }
    }
    for (Operation &op : payload.without_terminator()) {
      if (on)
        b.clone(op, mapping);
      if (&op == until)
        return mapping.lookup(op.getResult(0));
      on = on || &op == from;
    }
    if (on)
      value = mapping.lookupOrDefault(payload.getTerminator()->getOperand(0));
  }
  return value;
}

void GemmEmitter::findCut() {
  // The ops of every step in order, where each value is defined (its op's
  // position; a step's chain argument, where the step before yielded it),
  // and the last position that reads an input other than the chain.
  SmallVector<Operation *> ops;
  DenseMap<Value, int64_t> position;
  DenseSet<Value> inputs;
  int64_t lastInput = -1, chainAt = -1;
  for (EpilogueStep &step : steps) {
    Block &payload = step.op.getRegion().front();
    for (auto [index, arg] : llvm::enumerate(payload.getArguments())) {
      if (index < step.inputs.size() &&
          step.inputs[index].kind == EpilogueInput::Chain)
        position[arg] = chainAt;
      else
        inputs.insert(arg);
    }
    for (Operation &op : payload.without_terminator()) {
      if (op.getNumRegions() != 0)
        return;
      int64_t at = int64_t(ops.size());
      ops.push_back(&op);
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return inputs.contains(v); }))
        lastInput = at;
      for (Value result : op.getResults())
        position[result] = at;
    }
    chainAt = position.lookup(payload.getTerminator()->getOperand(0));
  }
  // The earliest op at or after the last input's read whose single result
  // of the result's type is all that the ops after it read (and the
  // constants), with ops after it.
  for (int64_t at = std::max<int64_t>(lastInput, 0); at < chainAt; ++at) {
    Operation *op = ops[at];
    if (op->getNumResults() != 1 || op->getResult(0).getType() != halfType())
      continue;
    bool clean = true;
    for (int64_t later = at + 1; later < int64_t(ops.size()) && clean; ++later)
      for (Value v : ops[later]->getOperands()) {
        if (inputs.contains(v) ||
            (position.count(v) && position.lookup(v) < at)) {
          clean = false;
          break;
        }
      }
    if (clean) {
      cutOp = op;
      cutSuffixOps = int64_t(ops.size()) - at - 1;
      return;
    }
  }
}

Value GemmEmitter::blockTiles(int64_t tn, Value &bid, Value &grid) {
  // Block bid takes tiles bid, bid + grid, ...: ceil((tiles - bid) / grid)
  // of them. The grid is at most the tiles: the launch's are the wgmma
  // form's, and the mma.sync form's 128x128 tiles are as many or more.
  int64_t tiles = (rows / kRows) * (columns / tn);
  bid = blockIndex();
  grid = arith::IndexCastOp::create(
      b, loc, i32(), gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  return arith::DivUIOp::create(
      b, loc,
      add(arith::SubIOp::create(b, loc, c32(tiles), bid),
          arith::SubIOp::create(b, loc, grid, c32(1))),
      grid);
}

void GemmEmitter::tileOrigin(int64_t tn, Value tile, Value &m0, Value &n0) {
  // Tile rows in groups of kGroupRows, each group's tiles column by column:
  // the blocks at work at one time share A's and W's tiles in L2.
  int64_t tilesM = rows / kRows, tilesN = columns / tn;
  Value perGroup = c32(kGroupRows * tilesN);
  Value firstM =
      mul(arith::DivUIOp::create(b, loc, tile, perGroup), c32(kGroupRows));
  Value groupSize = arith::MinUIOp::create(
      b, loc, c32(kGroupRows),
      arith::SubIOp::create(b, loc, c32(tilesM), firstM));
  Value inGroup = arith::RemUIOp::create(b, loc, tile, perGroup);
  Value tileM = add(firstM, arith::RemUIOp::create(b, loc, inGroup, groupSize));
  Value tileN = arith::DivUIOp::create(b, loc, inGroup, groupSize);
  m0 = mul(tileM, c32(kRows));
  n0 = mul(tileN, c32(tn));
}

LogicalResult GemmEmitter::storePairs(
    ArrayRef<Value> acc, function_ref<Place(int64_t t, int64_t h)> where,
    function_ref<void(const Place &, int64_t, int64_t, Value)> store,
    bool prefix) {
  // Accumulators 4 t + 2 h and 4 t + 2 h + 1 are two adjacent columns of
  // one row: the epilogue on each, one 32-bit store of the pair. Loads are
  // issued before the arithmetic that uses them, so that they overlap (one
  // load at a time, each waited for where it is used, left the epilogue
  // waiting on L1: ncu, 2026-11-30 21:47): a per-column input's values
  // (once per column) and a value read once, all before the first pair;
  // per-element inputs in chunks of t (kEpilogueChunk).
  int64_t count = int64_t(acc.size()) / 4;
  bool perElement = llvm::any_of(steps, [](const EpilogueStep &step) {
    return llvm::any_of(step.inputs, [](const EpilogueInput &in) {
      return in.kind == EpilogueInput::Element;
    });
  });
  int64_t chunkSize = perElement ? kEpilogueChunk : 1;
  std::map<int64_t, Value> once;
  std::map<std::pair<int64_t, int64_t>, std::pair<Value, Value>> perColumn;
  auto loadReused = [&](const EpilogueInput &in,
                        const Place &place) -> std::pair<Value, Value> {
    if (in.kind == EpilogueInput::Once) {
      Value &v = once[in.arg];
      if (!v)
        v = loadElement(pointers[in.arg], in.type, c64(0));
      return {v, v};
    }
    auto &v = perColumn[{in.arg, place.columnKey}];
    if (!v.first)
      v = loadPair(pointers[in.arg], in.type, place.col);
    return v;
  };
  // Pair 4 t + 2 h's place is places[2 t + h].
  SmallVector<Place> places;
  for (int64_t t = 0; t < count; ++t)
    for (int64_t h = 0; h < 2; ++h)
      places.push_back(where(t, h));
  for (const Place &place : places)
    for (EpilogueStep &step : steps)
      for (const EpilogueInput &in : step.inputs)
        if (in.kind == EpilogueInput::Once || in.kind == EpilogueInput::Column)
          loadReused(in, place);
  for (int64_t chunk = 0; chunk < count; chunk += chunkSize) {
    int64_t end = std::min(count, chunk + chunkSize);
    SmallVector<PairInputs> inputs;
    for (int64_t t = chunk; t < end; ++t)
      for (int64_t h = 0; h < 2; ++h) {
        const Place &place = places[2 * t + h];
        PairInputs &pair = inputs.emplace_back();
        for (EpilogueStep &step : steps) {
          auto &values = pair.emplace_back();
          for (const EpilogueInput &in : step.inputs) {
            std::pair<Value, Value> loaded;
            if (in.kind == EpilogueInput::Element)
              loaded = loadPair(pointers[in.arg], in.type, place.index);
            else if (in.kind != EpilogueInput::Chain)
              loaded = loadReused(in, place);
            values.push_back(loaded);
          }
        }
      }
    Operation *until = prefix ? cutOp : nullptr;
    for (int64_t index = 0; index < 2 * (end - chunk); ++index) {
      int64_t t = chunk + index / 2, h = index % 2;
      Value lo =
          cloneSteps(acc[4 * t + 2 * h], &inputs[index], 0, nullptr, until);
      Value hi =
          cloneSteps(acc[4 * t + 2 * h + 1], &inputs[index], 1, nullptr, until);
      if (lo.getType() != halfType() || hi.getType() != halfType())
        return decl.emitError("internal error: the GEMM kernel ")
               << decl.getSymName() << "'s epilogue yields " << lo.getType()
               << ", not its result's type";
      store(places[2 * t + h], t, h, packPair(lo, hi));
    }
  }
  return success();
}

Value GemmEmitter::equals(Value x, int64_t v) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, c32(v));
}

Value GemmEmitter::wPart(Value s, int64_t part) {
  return at(stageW(ring.shared, s), c32(part * kDepth * 128));
}

Value GemmEmitter::fullBarrier(Value s) {
  return add(ring.barriers, shl(s, 3));
}

Value GemmEmitter::emptyBarrier(Value s) {
  return add(ring.barriers, add(shl(s, 3), c32(8 * ring.stages)));
}

Value GemmEmitter::tileOf(Value j) { return add(ring.bid, mul(j, ring.grid)); }

Value GemmEmitter::ringSlot(Value i) {
  return arith::RemUIOp::create(b, loc, i, c32(ring.stages));
}

SmallVector<Value> GemmEmitter::ringNext(Value s, Value ph) {
  Value n = add(s, c32(1));
  Value wrap = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, n,
                                     c32(ring.stages));
  return {arith::SelectOp::create(b, loc, wrap, c32(0), n),
          arith::SelectOp::create(b, loc, wrap, bxor(ph, c32(1)), ph)};
}

void GemmEmitter::stepBarrier(Value id) { namedBarrier(id, ring.readers + 32); }

// Unrolled over the thread's 128 accumulators (BERT's FFN1: the exact
// GELU), this epilogue had been 3565 of the kernel's 4816 SASS
// instructions, waiting on instruction fetch and issue longer than the
// other consumer's products took (ncu, 2026-12-01 00:50): hence the loop.
void GemmEmitter::applySuffix(Value part, int64_t bytes, Value index,
                              int64_t threads) {
  int64_t chunks = bytes / 16 / threads;
  auto vector8 = VectorType::get({8}, halfType());
  forLoop(b, loc, c32(0), c32(chunks), 1, {},
          [&](Value i, ValueRange) -> SmallVector<Value> {
            Value chunk = at(part, shl(add(index, mul(i, c32(threads))), 4));
            Value in = LLVM::LoadOp::create(b, loc, vector8, chunk, 16);
            SmallVector<Value> out;
            for (int64_t e = 0; e < 8; ++e)
              out.push_back(
                  cloneSteps(LLVM::ExtractElementOp::create(b, loc, in, c32(e)),
                             nullptr, 0, cutOp, nullptr));
            Value packed = LLVM::UndefOp::create(b, loc, vector8);
            for (auto [e, v] : llvm::enumerate(out))
              packed = LLVM::InsertElementOp::create(b, loc, packed, v,
                                                     c32(int64_t(e)));
            LLVM::StoreOp::create(b, loc, packed, chunk, 16);
            return {};
          });
}

Value GemmEmitter::isLastTile(Value j, arith::CmpIPredicate is) {
  return arith::CmpIOp::create(b, loc, is, add(j, c32(1)), ring.mine);
}

void GemmEmitter::arriveAt(int64_t id, int64_t threads) {
  inlineAsm(Type(), ValueRange{c32(id)},
            "bar.arrive $0, " + std::to_string(threads) + ";", "r,~{memory}");
}

LogicalResult GemmEmitter::emitWarpSpecialized(Value shared, Value tid) {
  ring = Ring();
  ring.shared = shared;
  ring.tid = tid;
  ring.warp = shr(tid, 5);
  ring.warpgroup = uniformWarpgroup(tid);
  ring.lane = band(tid, 31);
  // The tensor maps: A's, W's, the result's (128 bytes each, in global
  // memory).
  ring.mapA = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), pointers.back());
  ring.mapW = arith::AddIOp::create(b, loc, ring.mapA, c64(128));
  ring.mapOut = arith::AddIOp::create(b, loc, ring.mapA, c64(256));
  ring.stages = layout.stages;
  ring.barriers = sharedAddress(at(shared, c32(layout.barrierOffset)));
  // Threads that read a stage: one consumer's (narrow), both's (wide).
  ring.readers = wideTiles ? 2 * kConsumerThreads : kConsumerThreads;

  // Thread 0 sets up the barriers: a stage is full when the producer has
  // arrived and its TMA copies have landed, empty when the threads that
  // read it have arrived.
  ifThen(b, loc, equals(tid, 0), [&] {
    for (int64_t s = 0; s < ring.stages; ++s) {
      mbarrierInit(fullBarrier(c32(s)), 1);
      mbarrierInit(emptyBarrier(c32(s)), ring.readers);
    }
    asmBarrier("fence.mbarrier_init.release.cluster;");
  });
  gpu::BarrierOp::create(b, loc);

  // The block's tiles: blockIdx.x, then every gridDim.x-th (the runtime
  // launches at most one block per SM: the "persistent" attribute).
  ring.kSteps = depth / kDepth;
  ring.mine = blockTiles(tileColumns, ring.bid, ring.grid);
  ring.handoffThreads = 2 * kConsumerThreads + kEpilogueThreads;
  ring.tile = at(shared, c32(layout.resultOffset));
  auto roles =
      scf::IfOp::create(b, loc, equals(ring.warpgroup, 0), /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&roles.getThenRegion().front());
  asmBarrier("setmaxnreg.dec.sync.aligned.u32 " +
             std::to_string(kProducerRegisters) + ";");
  emitProducer();
  emitWatcher();
  if (handoff)
    emitHandoffEpilogue();
  b.setInsertionPointToStart(&roles.getElseRegion().front());
  return emitConsumers();
}

void GemmEmitter::emitProducer() {
  // The producer: one thread issues every TMA copy, stage after stage,
  // each into a stage its readers have released.
  ifThen(b, loc, equals(ring.tid, 0), [&] {
    inlineAsm(Type(), ValueRange{ring.mapA, ring.mapW, ring.mapOut},
              "prefetch.tensormap [$0];\nprefetch.tensormap [$1];\n"
              "prefetch.tensormap [$2];",
              "l,l,l,~{memory}");
    forLoop(b, loc, c32(0), ring.mine, 1, {c32(0), c32(0)},
            [&](Value j, ValueRange position) {
              Value m0, n0;
              tileOrigin(tileColumns, tileOf(j), m0, n0);
              return SmallVector<Value>(forLoop(
                  b, loc, c32(0), c32(ring.kSteps), 1, position,
                  [&](Value step, ValueRange at) -> SmallVector<Value> {
                    Value s = at[0], k = mul(step, c32(kDepth));
                    // The first pass finds every stage empty (parity 1 of a
                    // fresh barrier is the phase before its first).
                    mbarrierWait(emptyBarrier(s), bxor(at[1], c32(1)));
                    mbarrierArriveExpect(fullBarrier(s), layout.stageBytes);
                    tmaLoad2d(sharedAddress(stageA(ring.shared, s)), ring.mapA,
                              k, m0, fullBarrier(s));
                    for (int64_t part = 0; part < tileColumns / kDepth; ++part)
                      tmaLoad2d(sharedAddress(wPart(s, part)), ring.mapW,
                                add(n0, c32(part * kDepth)), k, fullBarrier(s));
                    return ringNext(s, at[1]);
                  }));
            });
  });
}

// Warp 1 watches the full barriers, stage after stage in the ring's order,
// and hands each to the consumers that read it through their hardware
// barrier (bar.sync, one step at a time).
// - In ring order, each wait is for the phase after the one it saw
//   complete last, so a barrier's parity names the phase: a consumer of the
//   narrow form waiting on its own could be a whole tile ahead of the ring,
//   where the parity it waits for is an earlier phase's.
// - A wait loop of the consumers' own between a product's issue and its
//   retirement makes ptxas serialize the products (C7514).
void GemmEmitter::emitWatcher() {
  ifThen(b, loc, equals(ring.warp, 1), [&] {
    forLoop(b, loc, c32(0), ring.mine, 1, {c32(0), c32(0)},
            [&](Value j, ValueRange position) {
              Value id = wideTiles ? c32(1) : add(band(j, 1), c32(1));
              return SmallVector<Value>(
                  forLoop(b, loc, c32(0), c32(ring.kSteps), 1, position,
                          [&](Value, ValueRange at) -> SmallVector<Value> {
                            mbarrierWait(fullBarrier(at[0]), at[1]);
                            stepBarrier(id);
                            return ringNext(at[0], at[1]);
                          }));
            });
  });
}

// The handoff's hardware barriers, each the consumers' 256 threads and the
// epilogue warps' 64: 5, the tile is in shared memory (consumers arrive,
// epilogue warps wait); 6, the tile's memory is free again (the other way
// round); 7, the epilogue warps among themselves; 8, a block's last tile is
// ready to store (the consumers, which apply part of its epilogue, arrive;
// the epilogue warps wait).
void GemmEmitter::emitHandoffEpilogue() {
  int64_t threads = ring.handoffThreads;
  Value tile = ring.tile;
  ifThen(b, loc,
         arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, ring.warp,
                               c32(2)),
         [&] {
           Value index = arith::SubIOp::create(b, loc, ring.tid, c32(64));
           Value first = equals(ring.tid, 64);
           arriveAt(6, threads);
           forLoop(b, loc, c32(0), ring.mine, 1, {}, [&](Value j, ValueRange) {
             Value m0, n0;
             tileOrigin(tileColumns, tileOf(j), m0, n0);
             namedBarrier(c32(5), threads);
             // The block's last tile: the rest after the consumers' share,
             // then barrier 8 with them (their share written).
             auto last =
                 scf::IfOp::create(b, loc, isLastTile(j), /*withElse=*/true);
             {
               OpBuilder::InsertionGuard inner(b);
               b.setInsertionPointToStart(&last.getThenRegion().front());
               applySuffix(at(tile, c32(kHandoffConsumerShareBytes)),
                           kHandoffTileBytes - kHandoffConsumerShareBytes,
                           index, kEpilogueThreads);
               asmBarrier("fence.proxy.async.shared::cta;");
               namedBarrier(c32(8), threads);
               b.setInsertionPointToStart(&last.getElseRegion().front());
               applySuffix(tile, kHandoffTileBytes, index, kEpilogueThreads);
               asmBarrier("fence.proxy.async.shared::cta;");
               namedBarrier(c32(7), kEpilogueThreads);
             }
             ifThen(b, loc, first, [&] {
               for (int64_t q = 0; q < kWideColumns / kQuarterColumns; ++q)
                 tmaStore2d(ring.mapOut, add(n0, c32(q * kQuarterColumns)), m0,
                            sharedAddress(at(tile, c32(q * kRows * 128))));
               asmBarrier("cp.async.bulk.commit_group;");
               asmBarrier("cp.async.bulk.wait_group.read 0;");
             });
             ifThen(b, loc, isLastTile(j, arith::CmpIPredicate::ne),
                    [&] { arriveAt(6, threads); });
             return SmallVector<Value>();
           });
           ifThen(b, loc, first,
                  [&] { asmBarrier("cp.async.bulk.wait_group 0;"); });
         });
}

// The consumers, warpgroups 1 and 2. Narrow: they take the block's tiles in
// turn, each all 128 rows of its tile; their turns at the tensor cores
// follow the stages' order, so one multiplies while the other applies its
// epilogue and stores. Wide: both take every tile, consumer c its rows
// 64 c...
LogicalResult GemmEmitter::emitConsumers() {
  asmBarrier("setmaxnreg.inc.sync.aligned.u32 " +
             std::to_string(kConsumerRegisters) + ";");
  Consumer c;
  c.index = arith::SubIOp::create(b, loc, ring.warpgroup, c32(1));
  c.wm = band(ring.warp, 3);
  c.group = shr(ring.lane, 2);
  c.quad = band(ring.lane, 3);
  // The consumer's result tile (narrow) or its two buffers (wide) in
  // shared memory, its first thread (which issues its TMA stores) and its
  // own hardware barrier (3 + c, its 128 threads).
  c.result =
      at(ring.shared,
         add(c32(layout.resultOffset),
             mul(c.index, c32(wideTiles ? 2 * kQuarterBytes : kTileBytes))));
  c.leader = equals(band(ring.tid, 127), 0);
  c.barrier = add(c.index, c32(3));
  // Thread (g, q) of warp w writes its pair of columns 8 t' + 2 q (t' = t
  // mod 8) of row r = 16 w + g + 8 h (narrow: + 64 u) of a 64-column part
  // at byte 128 r + 16 (t' xor (r mod 8)) + 4 q, r mod 8 = g: the TMA's
  // 128-byte swizzle, under which a warp's 32 words fall in 32 banks.
  c.rowBytes = add(shl(add(shl(c.wm, 4), c.group), 7), shl(c.quad, 2));
  LogicalResult stored = success();
  forLoop(b, loc, wideTiles ? c32(0) : c.index, ring.mine, wideTiles ? 1 : 2,
          {}, [&](Value j, ValueRange) {
            if (failed(consumerTile(c, j)))
              stored = failure();
            return SmallVector<Value>();
          });
  // The block's shared memory lives until its last stores have read it.
  ifThen(b, loc, c.leader, [&] { asmBarrier("cp.async.bulk.wait_group 0;"); });
  return stored;
}

void GemmEmitter::consumerBarrier(const Consumer &c) {
  namedBarrier(c.barrier, kConsumerThreads);
}

Value GemmEmitter::swizzledPair(const Consumer &c, int64_t tt) {
  return add(c.rowBytes, shl(bxor(c.group, c32(tt % 8)), 4));
}

// One step of 64 of K on the stage the watcher released: narrow, 4 x 2
// products m64n128k16 (the tile's two 64-row halves); wide, 4 products
// m64n256k16 on the consumer's 64 rows. Each step leaves its products
// running and retires the step before's, releasing that stage. The last
// step waits for its own: ptxas moves reads of the accumulators above a
// final wait that follows a wait for "all but the last group" (seen in the
// SASS of ptxas 13.0: the epilogue's conversions of one half ran before it).
SmallVector<Value> GemmEmitter::consumerStep(const Consumer &c, Value k,
                                             Value s, ValueRange state,
                                             bool last) {
  stepBarrier(wideTiles ? c32(1) : add(c.index, c32(1)));
  // A's rows: the consumer's 64 (wide) or all 128 (narrow).
  Value aDesc =
      wideTiles
          ? descriptor(at(stageA(ring.shared, s), mul(c.index, c32(64 * 128))),
                       0, 1024)
          : descriptor(stageA(ring.shared, s), 0, 1024);
  Value wDesc = descriptor(wPart(s, 0), kDepth * 128, 1024);
  SmallVector<Value> acc = fenceOperands(SmallVector<Value>(state));
  if (wideTiles) {
    for (int64_t kk = 0; kk < kDepth / 16; ++kk)
      acc = wgmmaStep(acc, advance(aDesc, kk * 32), {},
                      advance(wDesc, kk * 16 * 128),
                      /*transposeB=*/true, /*accumulate=*/true);
  } else {
    SmallVector<Value> upper(acc.begin(), acc.begin() + kAccumulators);
    SmallVector<Value> lower(acc.begin() + kAccumulators, acc.end());
    for (int64_t kk = 0; kk < kDepth / 16; ++kk) {
      Value w = advance(wDesc, kk * 16 * 128);
      upper = wgmmaStep(upper, advance(aDesc, kk * 32), {}, w,
                        /*transposeB=*/true, /*accumulate=*/true);
      lower = wgmmaStep(lower, advance(aDesc, 64 * 128 + kk * 32), {}, w,
                        /*transposeB=*/true, /*accumulate=*/true);
    }
    acc.assign(upper.begin(), upper.end());
    acc.append(lower.begin(), lower.end());
  }
  asmBarrier("wgmma.commit_group.sync.aligned;");
  asmBarrier(last ? "wgmma.wait_group.sync.aligned 0;"
                  : "wgmma.wait_group.sync.aligned 1;");
  Value previous = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, c32(0)),
      c32(ring.stages - 1), arith::SubIOp::create(b, loc, s, c32(1)));
  mbarrierArrive(
      emptyBarrier(previous),
      arith::ExtUIOp::create(
          b, loc, i32(),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, k, c32(0))));
  if (last)
    mbarrierArrive(emptyBarrier(s));
  return fenceOperands(acc);
}

LogicalResult GemmEmitter::consumerTile(const Consumer &c, Value j) {
  Value m0, n0;
  tileOrigin(tileColumns, tileOf(j), m0, n0);
  // Only wgmma touches the accumulators from here to the last wait: one
  // fence before the first.
  SmallVector<Value> init =
      fenceOperands(SmallVector<Value>(2 * kAccumulators, cf(0.0)));
  asmBarrier("wgmma.fence.sync.aligned;");
  // The stage of the tile's first step (the consumers need no phase: the
  // watcher waits for them).
  Value first = mul(j, c32(ring.kSteps));
  init.push_back(ringSlot(first));
  ValueRange done = forLoop(b, loc, c32(0), c32(ring.kSteps - 1), 1, init,
                            [&](Value k, ValueRange state) {
                              Value s = state.back();
                              SmallVector<Value> out = consumerStep(
                                  c, k, s, state.drop_back(), false);
                              out.push_back(ringNext(s, c32(0))[0]);
                              return out;
                            });
  // The wide form's steps stay a loop in the PTX (`.pragma "nounroll"`):
  // ptxas 13.0 unrolled all 63 of them at K = 4096, in 23 s, for 0.6% on
  // gelu(x@w+b) 8192x4096x4096 (bench/RESULTS.md, 2026-12-01 08:25). The
  // narrow form's, which ptxas unrolls in part and quickly, are left to it.
  if (wideTiles)
    done.front().getDefiningOp()->setAttr(
        "llvm.loop_annotation", strata::noUnrollAnnotation(b.getContext()));
  SmallVector<Value> acc = consumerStep(c, c32(ring.kSteps - 1), done.back(),
                                        done.drop_back(), true);
  if (!wideTiles)
    return storeNarrowTile(c, acc, m0, n0);
  // Wide: accumulator 4 t + 2 h + e is column 8 t + 2 (lane mod 4) + e of
  // row (lane / 4) + 8 h of warp w's slice 16 (w mod 4) of the consumer's
  // rows 64 c...
  Place origin =
      firstPlace(add(m0, add(shl(c.index, 6), add(shl(c.wm, 4), c.group))),
                 add(n0, shl(c.quad, 1)));
  if (handoff)
    return storeHandoffTile(c, acc, origin, j);
  return storeWideTile(c, acc, origin, m0, n0);
}

// Quarter Q (t = 8 Q..8 Q + 7) of a wide tile's accumulators goes to the
// [64, 64] of a swizzled box at `box` (up to the cut, if any).
LogicalResult GemmEmitter::storeQuarter(const Consumer &c, ArrayRef<Value> acc,
                                        const Place &origin, int64_t q,
                                        Value box) {
  int64_t perQuarter = kQuarterColumns / 8;
  return storePairs(
      acc.slice(4 * perQuarter * q, 4 * perQuarter),
      [&](int64_t t, int64_t h) {
        int64_t tt = perQuarter * q + t;
        return placeAt(origin, 8 * h, 8 * tt, tt);
      },
      [&](const Place &, int64_t t, int64_t h, Value word) {
        Value offset = add(swizzledPair(c, t), c32(8 * h * 128));
        LLVM::StoreOp::create(b, loc, word, at(box, offset), 4);
      },
      /*prefix=*/cutOp != nullptr);
}

// The tile at the cut into shared memory once the epilogue warps have
// stored the last one from there: quarter Q of rows 64 c.. at 16 KiB Q + 8
// KiB c, each a [128, 64] box. A quarter at a time, so that per-column
// inputs are loaded for 8 pairs of columns, not 32 (which spilled).
LogicalResult GemmEmitter::storeHandoffTile(const Consumer &c,
                                            ArrayRef<Value> acc,
                                            const Place &origin, Value j) {
  LogicalResult stored = success();
  Value half = at(ring.tile, shl(c.index, 13));
  namedBarrier(c32(6), ring.handoffThreads);
  for (int64_t q = 0; q < kWideColumns / kQuarterColumns; ++q)
    if (failed(storeQuarter(c, acc, origin, q, at(half, c32(q * kRows * 128)))))
      stored = failure();
  // The block's last tile: the consumers wait for each other's writes
  // (barrier 5 with the epilogue warps) and apply their share of the rest
  // (kHandoffConsumerShareBytes), visible to the epilogue warps' TMA stores
  // after barrier 8. Otherwise they go on to their next tile.
  auto last = scf::IfOp::create(b, loc, isLastTile(j), /*withElse=*/true);
  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(&last.getThenRegion().front());
  namedBarrier(c32(5), ring.handoffThreads);
  applySuffix(ring.tile, kHandoffConsumerShareBytes,
              arith::SubIOp::create(b, loc, ring.tid, c32(kConsumerThreads)),
              2 * kConsumerThreads);
  asmBarrier("fence.proxy.async.shared::cta;");
  arriveAt(8, ring.handoffThreads);
  b.setInsertionPointToStart(&last.getElseRegion().front());
  arriveAt(5, ring.handoffThreads);
  return stored;
}

// Through buffer Q mod 2 once the TMA stores that read it last are done
// (one store group left running); a quarter is stored while the next is
// computed.
LogicalResult GemmEmitter::storeWideTile(const Consumer &c, ArrayRef<Value> acc,
                                         const Place &origin, Value m0,
                                         Value n0) {
  LogicalResult stored = success();
  for (int64_t q = 0; q < kWideColumns / kQuarterColumns; ++q) {
    Value buffer = at(c.result, c32((q % 2) * kQuarterBytes));
    ifThen(b, loc, c.leader,
           [&] { asmBarrier("cp.async.bulk.wait_group.read 1;"); });
    consumerBarrier(c);
    if (failed(storeQuarter(c, acc, origin, q, buffer)))
      stored = failure();
    if (cutOp) {
      consumerBarrier(c);
      applySuffix(buffer, kQuarterBytes, band(ring.tid, kConsumerThreads - 1),
                  kConsumerThreads);
    }
    // Every thread's writes, visible to the TMA, then the quarter.
    asmBarrier("fence.proxy.async.shared::cta;");
    consumerBarrier(c);
    ifThen(b, loc, c.leader, [&] {
      tmaStore2d(ring.mapOut, add(n0, c32(q * kQuarterColumns)),
                 add(m0, shl(c.index, 6)), sharedAddress(buffer));
      asmBarrier("cp.async.bulk.commit_group;");
    });
  }
  return stored;
}

// Accumulator 4 t + 2 h + e of half u is column 8 t + 2 (lane mod 4) + e of
// row (lane / 4) + 8 h of warp w's slice 16 (w mod 4) of rows 64 u... The
// result tile, once the TMA stores of the consumer's last tile have read
// it.
LogicalResult GemmEmitter::storeNarrowTile(const Consumer &c,
                                           ArrayRef<Value> acc, Value m0,
                                           Value n0) {
  Place origin =
      firstPlace(add(m0, add(shl(c.wm, 4), c.group)), add(n0, shl(c.quad, 1)));
  ifThen(b, loc, c.leader,
         [&] { asmBarrier("cp.async.bulk.wait_group.read 0;"); });
  consumerBarrier(c);
  auto perPair = [&](int64_t t) {
    return std::make_pair(t / (kAccumulators / 4), t % (kAccumulators / 4));
  };
  LogicalResult stored = storePairs(
      acc,
      [&](int64_t t, int64_t h) {
        auto [u, tt] = perPair(t);
        return placeAt(origin, 64 * u + 8 * h, 8 * tt, tt);
      },
      [&](const Place &, int64_t t, int64_t h, Value word) {
        auto [u, tt] = perPair(t);
        Value offset = add(swizzledPair(c, tt), c32((tt / 8) * kTileHalfBytes +
                                                    (64 * u + 8 * h) * 128));
        LLVM::StoreOp::create(b, loc, word, at(c.result, offset), 4);
      },
      /*prefix=*/cutOp != nullptr);
  if (cutOp) {
    consumerBarrier(c);
    applySuffix(c.result, kTileBytes, band(ring.tid, kConsumerThreads - 1),
                kConsumerThreads);
  }
  // Every thread's writes, visible to the TMA, then its two halves.
  asmBarrier("fence.proxy.async.shared::cta;");
  consumerBarrier(c);
  ifThen(b, loc, c.leader, [&] {
    for (int64_t half = 0; half < 2; ++half)
      tmaStore2d(ring.mapOut, add(n0, c32(half * kDepth)), m0,
                 sharedAddress(at(c.result, c32(half * kTileHalfBytes))));
    asmBarrier("cp.async.bulk.commit_group;");
  });
  return stored;
}

LogicalResult GemmEmitter::emitMmaSync(Value shared, Value tid) {
  // Warps 8-11 have nothing to do in this form: the block's shape is the
  // warp-specialized form's (one launch for both).
  LogicalResult stored = success();
  ifThen(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                            c32(kMmaThreads)),
      [&] {
        Value warp = shr(tid, 5);
        Value lane = band(tid, 31);
        auto sync = [&] {
          asmBarrier("bar.sync 1, " + std::to_string(kMmaThreads) + ";");
        };
        int64_t kSteps = depth / kDepth;
        Value bid, grid;
        Value mine = blockTiles(kColumns, bid, grid);
        forLoop(b, loc, c32(0), mine, 1, {}, [&](Value j, ValueRange) {
          Value m0, n0;
          tileOrigin(kColumns, add(bid, mul(j, grid)), m0, n0);
          // Where the tile's rows of A and columns of W start, and each step's
          // tiles: A's [128, 64] K-major, W's [64, 128] as two column halves.
          Value aSrc =
              at(pointers[aArg],
                 arith::MulIOp::create(b, loc, wide(m0), c64(depth * 2)));
          Value wSrc = at(pointers[wArg], wide(shl(n0, 1)));
          auto load = [&](Value step, Value slot) {
            Value aOffset = wide(mul(step, c32(kDepth * 2)));
            Value wOffset = arith::MulIOp::create(b, loc, wide(step),
                                                  c64(kDepth * columns * 2));
            loadTile(tid, kMmaThreads, at(aSrc, aOffset), stageA(shared, slot),
                     kRows, kDepth / 8, depth * 2);
            loadTile(tid, kMmaThreads, at(wSrc, wOffset), stageW(shared, slot),
                     kDepth, kColumns / 8, columns * 2);
          };
          // Prologue: the first kMmaStages - 1 steps, a commit group each.
          for (int64_t s = 0; s + 1 < kMmaStages; ++s) {
            if (s < kSteps)
              load(c32(s), c32(s));
            NVVM::CpAsyncCommitGroupOp::create(b, loc);
          }
          Value wm = band(warp, 3), wn = shr(warp, 2);
          SmallVector<Value> init(kAccumulators, cf(0.0));
          ValueRange done = forLoop(
              b, loc, c32(0), c32(kSteps), 1, init,
              [&](Value step, ValueRange state) {
                Value slot =
                    arith::RemUIOp::create(b, loc, step, c32(kMmaStages));
                // This step's tiles have landed (each thread waits for its own
                // copies; the barrier, for everyone's), and every warp is done
                // with the slot the next load overwrites (last step's).
                NVVM::CpAsyncWaitGroupOp::create(b, loc, kMmaStages - 2);
                sync();
                // Past the last step, the last step's tiles again, into a slot
                // no later step reads: no branch around the copies.
                Value ahead = add(step, c32(kMmaStages - 1));
                load(arith::MinUIOp::create(b, loc, ahead, c32(kSteps - 1)),
                     arith::RemUIOp::create(b, loc, ahead, c32(kMmaStages)));
                NVVM::CpAsyncCommitGroupOp::create(b, loc);

                // Warp (wm, wn): rows 32 wm.., columns 64 wn...
                SmallVector<Value> acc(state.begin(), state.end());
                Value aBase = stageA(shared, slot),
                      wBase = stageW(shared, slot);
                Value aRow = add(shl(wm, 5), band(lane, 15));
                Value aHalf = shr(lane, 4);
                Value wRow = add(band(lane, 7), shl(band(shr(lane, 3), 1), 3));
                Value wHalf = shr(lane, 4);
                int64_t warpColumns = kColumns / 2, nTiles = warpColumns / 8;
                for (int64_t kk = 0; kk < kDepth / 16; ++kk) {
                  SmallVector<SmallVector<Value>> aFrag;
                  for (int64_t mt = 0; mt < 2; ++mt)
                    aFrag.push_back(ldmatrix(
                        at(aBase, swizzled(add(aRow, c32(16 * mt)),
                                           add(c32(kk * 2), aHalf), kRows, 8)),
                        false));
                  for (int64_t dp = 0; dp < nTiles / 2; ++dp) {
                    Value chunk = add(
                        add(mul(wn, c32(warpColumns / 8)), c32(dp * 2)), wHalf);
                    SmallVector<Value> r = ldmatrix(
                        at(wBase, swizzled(add(wRow, c32(kk * 16)), chunk,
                                           kDepth, kColumns / 8)),
                        true);
                    for (int64_t mt = 0; mt < 2; ++mt)
                      for (int64_t jj = 0; jj < 2; ++jj) {
                        int64_t at0 = (mt * nTiles + 2 * dp + jj) * 4;
                        SmallVector<Value> d =
                            mma(aFrag[mt], {r[2 * jj], r[2 * jj + 1]},
                                ArrayRef<Value>(acc).slice(at0, 4));
                        std::copy(d.begin(), d.end(), acc.begin() + at0);
                      }
                  }
                }
                return acc;
              });
          // Every warp is done with the stages before the next tile loads.
          NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
          sync();
          // Accumulator 4 t + 2 h + e is column 8 nt + 2 (lane mod 4) + e of
          // row (lane / 4) + 8 h of the warp's 16-row tile mt, t = 8 mt + nt.
          Value group = shr(lane, 2), quad = band(lane, 3);
          Value out = pointers[decl.getNumArguments()];
          SmallVector<Value> acc(done.begin(), done.end());
          Place origin = firstPlace(
              add(m0, add(shl(wm, 5), group)),
              add(n0, add(mul(wn, c32(kColumns / 2)), shl(quad, 1))));
          if (failed(storePairs(
                  acc,
                  [&](int64_t t, int64_t h) {
                    int64_t nTiles = kColumns / 16, mt = t / nTiles,
                            nt = t % nTiles;
                    return placeAt(origin, 16 * mt + 8 * h, 8 * nt, nt);
                  },
                  [&](const Place &place, int64_t, int64_t, Value word) {
                    Value offset =
                        arith::MulIOp::create(b, loc, place.index, c64(2));
                    LLVM::StoreOp::create(b, loc, word, at(out, offset), 4);
                  })))
            stored = failure();
          return SmallVector<Value>();
        });
      });
  return stored;
}

LogicalResult GemmEmitter::run() {
  if (failed(checkBuffers("the GEMM kernel", {aArg, wArg})) ||
      failed(takeEpilogue()))
    return failure();
  // The cut decides the handoff, and with it the layout of shared memory;
  // found for the mma.sync form too, which does not use it, so that its
  // launch is the wgmma form's.
  findCut();
  handoff = wideTiles && cutOp && depth >= strata::kGemmWideCostlyDepth;
  layout = sharedLayout(wideTiles, handoff);
  int64_t limit = std::max<int64_t>(blockSharedLimit, 48 * 1024);
  if (layout.bytes > limit)
    return decl.emitError("the GEMM kernel ")
           << decl.getSymName() << " needs " << layout.bytes
           << " bytes of shared memory; this GPU gives a block at most "
           << limit;

  // One more parameter after the result: the tensor maps (A's, W's) the
  // runtime encodes for the step (docs/runtime.md, "Tensor maps").
  body.getBody().front().addArgument(MemRefType::get({384}, b.getI8Type()),
                                     loc);
  pointers = resetBody(kThreads);
  for (Operation &op : *holder)
    if (!isa<linalg::GenericOp>(op))
      b.clone(op, hoisted);
  Value shared = sharedMemory(kSharedName, /*align=*/true);
  Value tid = threadIndex();
  if (failed(wgmma ? emitWarpSpecialized(shared, tid)
                   : emitMmaSync(shared, tid)))
    return failure();
  func::ReturnOp::create(b, loc);
  for (Operation &op : *holder)
    op.dropAllUses();
  holder.reset();

  // The launch is the wgmma form's, tiles of 128 x tileColumns, in both
  // forms (the portable PTX's variant must launch as the cubin's).
  int64_t tiles = (rows / kRows) * (columns / tileColumns);
  std::string suffixNote;
  if (cutSuffixOps && wgmma)
    suffixNote = "; its last " + std::to_string(cutSuffixOps) +
                 " scalar op(s), which read only the value before them, "
                 "applied there " +
                 (handoff ? "by warps 2 and 3" : "afterwards") +
                 ", 8 values a thread at a time";
  // The tensor maps, 7 numbers each (docs/runtime.md): the step operand,
  // its inner and outer extents, the outer stride in bytes, the box, the
  // swizzle. A [rows, depth] in boxes of 64 x 128 rows; W [depth, columns]
  // in boxes of 64 columns x 64; the result [rows, columns] in boxes of 64
  // columns x 128 rows (wide: x 64 rows, a consumer's). The kernel is
  // persistent: at most one block per SM walks the tiles.
  int64_t resultOperand = decl.getNumArguments();
  int64_t storeRows = wideTiles && !handoff ? kRows / 2 : kRows;
  SmallVector<int64_t> maps = {
      aArg,          depth,   rows,  depth * 2,   kDepth, kRows,     128,
      wArg,          columns, depth, columns * 2, kDepth, kDepth,    128,
      resultOperand, columns, rows,  columns * 2, kDepth, storeRows, 128};
  kernel::set<kernel::Launch>(
      decl, kernel::LaunchAttr::get(b.getContext(), "gemm", {tiles, 1, 1},
                                    {kThreads, 1, 1}, layout.bytes,
                                    /*staticShared=*/0, /*scratch=*/0,
                                    /*vector=*/0, /*persistent=*/1, maps,
                                    /*waitsForGrids=*/false));
  std::string form;
  if (!wgmma)
    form = "8 warps, cp.async through " + std::to_string(kMmaStages) +
           " shared-memory stages, mma.sync m16n8k16 on tiles of 128x128, "
           "32x64 per warp";
  else if (wideTiles)
    form = "a producer warp's TMA copies through " +
           std::to_string(layout.stages) +
           " shared-memory stages, two consumer warpgroups sharing each "
           "tile, 64 of its rows each as one wgmma m64n256k16 per 16 of K";
  else
    form = "a producer warp's TMA copies through " +
           std::to_string(layout.stages) +
           " shared-memory stages, two consumer warpgroups taking tiles in "
           "turn, each tile's 128 rows as two wgmma m64n128k16 per 16 of K";
  std::string stores;
  if (wgmma && handoff)
    stores = ", each tile's result left in shared memory at the cut, where "
             "warps 2 and 3 apply the rest and store it by TMA copies while "
             "the consumers go on to their next tile";
  else if (wgmma)
    stores = wideTiles
                 ? ", each tile's result stored by TMA copies from shared "
                   "memory, 64 columns at a time"
                 : ", each tile's result stored by TMA copies from shared "
                   "memory";
  kernel::set<kernel::GpuReason>(
      decl,
      b.getStringAttr(
          "GEMM: " + std::to_string(tiles) + " tiles of " +
          std::to_string(kRows) + "x" + std::to_string(tileColumns) +
          " (in groups of " + std::to_string(kGroupRows) +
          " tile rows) over at most one block per SM, K in steps of " +
          std::to_string(kDepth) + "; " + form + " (" +
          std::to_string(layout.bytes) +
          " bytes of dynamic shared memory), f32 accumulators; the epilogue (" +
          std::to_string(steps.size()) +
          " elementwise op(s) of the kernel stage) on them in registers" +
          stores + suffixNote));
  return success();
}

} // namespace

LogicalResult strata::emitGemm(func::FuncOp decl, func::FuncOp body,
                               ModuleOp kernels, int64_t blockSharedLimit,
                               bool wgmma) {
  auto params = kernel::get<kernel::Gemm>(decl);
  if (!params)
    return decl.emitError("internal error: the GEMM kernel ")
           << decl.getSymName() << " has no strata.gemm parameters";
  auto tileColumns = dyn_cast_or_null<IntegerAttr>(params.get("tile_columns"));
  auto columns = dyn_cast_or_null<IntegerAttr>(params.get("columns"));
  if (!tileColumns || !columns ||
      (tileColumns.getInt() != kColumns &&
       tileColumns.getInt() != kWideColumns) ||
      columns.getInt() % tileColumns.getInt())
    return decl.emitError("internal error: the GEMM kernel ")
           << decl.getSymName() << "'s strata.gemm has no tile_columns ("
           << kColumns << " or " << kWideColumns << ") that divide its columns";
  return GemmEmitter(decl, body, kernels, params, blockSharedLimit, wgmma)
      .run();
}
