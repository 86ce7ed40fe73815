//===- GpuMapping.cpp - the gpu stage: kernels onto thread blocks -*- C++
//-*-===//
//
// strata-gpu-map runs on the top-level module after the kernels have been
// bufferized (their bodies are linalg ops on memrefs). For each generated
// kernel it chooses how the kernel covers its outputs from the launch
// geometry, rewrites the body accordingly with gpu dialect ops (thread and
// block ids, barriers, warp shuffles), and records the choice on the
// kernel's top-level declaration:
//
//   strata.launch      #strata.launch<mapping, grid, block, shared memory,
//                      ...> (KernelBase.td): the mapping is "elementwise",
//                      "block_ops" or "block_serial"
//   strata.gpu_reason  the choice in words, for people and `explain`
//
// The grid follows the row split the partitioner recorded
// (strata.parallel_rows / strata.parallel_block, RowParallel.h): the body
// computes one row block, so a row-parallel kernel gets one block of threads
// per row block (block_ops) or a flat set of blocks per row block
// (elementwise), and each pointer parameter is advanced by its
// strata.block_strides entry, exactly as the CPU wrapper does per call.
//
//  - elementwise: the body is one all-parallel linalg op. Each thread
//    computes V consecutive iterations (V * element size = 16 bytes) and
//    moves operands whose innermost index is the innermost loop with one
//    16-byte vector access, so a warp reads 512 contiguous bytes.
//  - block_ops: the body's linalg ops run one after another, each spread
//    over the block's threads, with a barrier between them. All-parallel ops
//    give consecutive groups of iterations to consecutive threads
//    (coalesced; 16-byte accesses where the innermost extent and alignment
//    allow). Reductions whose combiner is a known associative op (sum,
//    product, max, min, bitwise) and whose reduced extent is at least a warp
//    are computed cooperatively: one warp per output point (warp shuffles),
//    or the whole block per point (warp shuffles, then shared memory across
//    warps) when there are fewer points than warps; lanes read 16 bytes per
//    access along a contiguous innermost reduced loop. Other reductions give
//    each thread whole output points. Temporaries live in shared memory
//    when they fit (32 KiB), else in a global scratch buffer with one slice
//    per block. Inputs several ops read, and outputs ops use as scratch
//    before the last writes them, live in shared memory too: static up to
//    40 KiB, else dynamic (long rows; blocks of up to 1024 threads then).
//    Ops that are not linalg and write memory run on thread 0. When every
//    reduction reduces the whole row block to one point, the ops over the
//    row give each thread the same groups of elements, and the buffers only
//    they touch stay in the threads' registers instead (planRegisters).
//    Rows that short a block would have fewer than 128 threads take one
//    warp each instead, several row blocks to a CUDA block, and reduce by
//    warp shuffles alone (planPack).
//  - block_serial: one thread per row block runs the body as the CPU would
//    (when a value computed by such an op is needed by later ops).
//
// Every thread takes the parameters as untyped byte buffers
// (memref<N x i8>) and views them with the body's types, so the kernel's
// parameters are exactly one pointer per step buffer (docs/runtime.md, the
// CUDA executor's ABI).
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Gpu.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"

#include <cstdlib>
#include <limits>
#include <numeric>
#include <set>

using namespace mlir;
namespace kernel = strata::kernel;

namespace {

constexpr int64_t kMaxThreads = 256;
/// Blocks that keep long rows in dynamic shared memory are few per SM: they
/// get up to this many threads, so that enough loads are in flight per SM.
constexpr int64_t kMaxThreadsLongRows = 1024;
constexpr int64_t kWarpSize = 32;
/// Temporaries of one block up to this many bytes live in shared memory.
constexpr int64_t kSharedScratchLimit = 32 * 1024;
/// Inputs several ops read are staged in static shared memory while the
/// block's shared memory stays under this (the static limit is 48 KiB; the
/// rest is left for reductions).
constexpr int64_t kSharedStageLimit = 40 * 1024;
/// What the residency estimate for long rows assumes of an SM (sm_90: 228
/// KiB of shared memory, 1 KiB of it reserved per block; 2048 threads).
constexpr int64_t kSharedPerSM = 228 * 1024;
constexpr int64_t kSharedReservedPerBlock = 1024;
constexpr int64_t kThreadsPerSM = 2048;
/// Bytes one thread moves per vector access.
constexpr int64_t kVectorBytes = 16;
/// Copies one thread of a staging loop issues before it stores any: the
/// loads of a row are in flight together.
constexpr int64_t kStageUnroll = 8;
/// The symbol of the dynamic shared memory (PTX `.extern .shared`: every
/// kernel's starts at its own block's dynamic shared memory).
constexpr llvm::StringLiteral kDynamicSharedName = "__strata_dynamic_shared";
/// CUDA aligns dynamic shared memory to (at least) 16 bytes.
constexpr int64_t kDynamicSharedAlignment = 16;
/// Rows in registers (planRegisters): the 32-bit registers of row values a
/// thread may hold at once, and at 1024 threads (which leave a thread 64
/// registers in all). bench/gpu/micro/rows.cu measured the layouts this
/// chooses between.
constexpr int64_t kRowRegisters = 32;
constexpr int64_t kRowRegisters1024 = 40;
/// The groups (16 or 32 bytes) per thread a row in registers aims at. On the
/// H200 (bench/RESULTS.md, 22:55 and 22:56): an RMSNorm row of 4096 bf16
/// moved 89% of copy bandwidth at 2 groups per thread (256 threads), 81% at
/// 1 (512); layer_norm(gelu) over 4096 f32 95% at 2 (512 threads), 90% at
/// 4 (256); softmax over 4096 f32 93% at 2, 91% at 4.
constexpr int64_t kRowGroups = 2;
/// Short rows in registers (planPack): when the one-row block planRegisters
/// chose has fewer threads than this, a row block takes one warp instead
/// and a CUDA block holds kPackedRowBlocks of them (fewer when they do not
/// divide the row blocks). strata-gpu-map{pack-rows=N} asks for N (1: no
/// packing), for measuring.
constexpr int64_t kPackBelowThreads = 128;
constexpr int64_t kPackedRowBlocks = 4;

int64_t product(ArrayRef<int64_t> values) {
  int64_t p = 1;
  for (int64_t v : values)
    p *= v;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

/// The alignment a vector access of `vector` elements of `bytes` each needs:
/// its own size up to 16 bytes (larger ones are moved in 16-byte pieces).
int64_t vectorAlignment(int64_t bytes, int64_t vector) {
  return std::min(bytes * vector, kVectorBytes);
}

/// Bytes per element in a buffer (i1 takes a byte, as in the runtime).
int64_t elementBytes(Type type) {
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
  return 0;
}

int64_t memrefBytes(MemRefType type) {
  return type.getNumElements() * elementBytes(type.getElementType());
}

bool isParallel(utils::IteratorType kind) {
  return kind == utils::IteratorType::parallel;
}

/// A linalg op's parallel iteration points and reduced elements per point
/// (the products of its parallel and of its reduction loops' extents).
std::pair<int64_t, int64_t> pointsAndReduced(linalg::LinalgOp op) {
  int64_t points = 1, reduced = 1;
  for (auto [range, kind] :
       llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
    (isParallel(kind) ? points : reduced) *= range;
  return {points, reduced};
}

Value constIndex(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// A static memref with the identity layout in the default memory space:
/// what bufferization gives kernel arguments and temporaries.
bool isPlainMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getLayout().isIdentity() &&
         !memref.getMemorySpace() && elementBytes(memref.getElementType()) > 0;
}

bool isScratchAlloc(Operation *op) {
  if (!isa<memref::AllocOp, memref::AllocaOp>(op))
    return false;
  return op->getNumOperands() == 0 && isPlainMemRef(op->getResult(0).getType());
}

/// Whether `op` (with what it contains) may write or free memory, as far as
/// its interfaces say (unknown effects count as writes).
bool writesMemory(Operation *op) {
  if (isMemoryEffectFree(op))
    return false;
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return true;
  return llvm::any_of(*effects, [](const MemoryEffects::EffectInstance &e) {
    return !isa<MemoryEffects::Read>(e.getEffect());
  });
}

/// A linalg op on buffers whose iterations this pass can hand to threads:
/// static loop ranges, and each output indexed by exactly its parallel
/// loops (so distinct output points never write the same element).
bool isDistributable(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.hasDynamicShape())
    return false;
  for (int64_t range : op.getStaticLoopRanges())
    if (ShapedType::isDynamic(range))
      return false;
  unsigned parallel = op.getNumParallelLoops();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!isa<MemRefType>(init.get().getType()))
      return false;
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isProjectedPermutation() || map.getNumResults() != parallel)
      return false;
    for (AffineExpr e : map.getResults())
      if (!isParallel(
              op.getIteratorTypesArray()[cast<AffineDimExpr>(e).getPosition()]))
        return false;
  }
  return true;
}

/// The associative combiner of a single-output reduction:
/// `yield combine(x, acc)` where acc (the output's block argument) is used
/// only there. `x` is what each reduced element contributes.
struct Combiner {
  Operation *op = nullptr;
  Value acc, x;
  TypedAttr identity;
};

std::optional<Combiner> matchCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  Block *body = op.getBlock();
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  Operation *yield = body->getTerminator();
  if (yield->getNumOperands() != 1 || !acc.hasOneUse())
    return std::nullopt;
  Operation *combine = yield->getOperand(0).getDefiningOp();
  if (!combine || combine->getBlock() != body ||
      combine->getNumOperands() != 2 || *acc.getUsers().begin() != combine)
    return std::nullopt;
  Value x = combine->getOperand(0) == acc ? combine->getOperand(1)
                                          : combine->getOperand(0);
  if (x == acc)
    return std::nullopt;
  Type type = acc.getType();
  Builder b(op.getContext());
  TypedAttr identity;
  if (auto ft = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    if (isa<arith::AddFOp>(combine))
      identity = b.getFloatAttr(ft, llvm::APFloat::getZero(sem, true));
    else if (isa<arith::MulFOp>(combine))
      identity = b.getFloatAttr(ft, llvm::APFloat::getOne(sem));
    else if (isa<arith::MaximumFOp>(combine))
      identity = b.getFloatAttr(ft, llvm::APFloat::getInf(sem, true));
    else if (isa<arith::MinimumFOp>(combine))
      identity = b.getFloatAttr(ft, llvm::APFloat::getInf(sem, false));
    else if (isa<arith::MaxNumFOp, arith::MinNumFOp>(combine))
      identity = b.getFloatAttr(ft, llvm::APFloat::getNaN(sem));
  } else if (auto it = dyn_cast<IntegerType>(type)) {
    unsigned w = it.getWidth();
    if (isa<arith::AddIOp, arith::OrIOp, arith::XOrIOp, arith::MaxUIOp>(
            combine))
      identity = b.getIntegerAttr(it, llvm::APInt::getZero(w));
    else if (isa<arith::MulIOp>(combine))
      identity = b.getIntegerAttr(it, llvm::APInt(w, 1));
    else if (isa<arith::AndIOp, arith::MinUIOp>(combine))
      identity = b.getIntegerAttr(it, llvm::APInt::getAllOnes(w));
    else if (isa<arith::MaxSIOp>(combine))
      identity = b.getIntegerAttr(it, llvm::APInt::getSignedMinValue(w));
    else if (isa<arith::MinSIOp>(combine))
      identity = b.getIntegerAttr(it, llvm::APInt::getSignedMaxValue(w));
  }
  if (!identity || type.getIntOrFloatBitWidth() > 64)
    return std::nullopt;
  return Combiner{combine, acc, x, identity};
}

enum class Role { Uniform, Scratch, Distribute, Thread0, Return };
enum class Strategy { Threads, Warps, Block };

/// Where a block keeps its temporaries and the inputs it stages.
struct SharedLayout {
  /// Bytes of the temporaries (64-byte slices, in body order) and each
  /// one's offset.
  int64_t temporaries = 0;
  SmallVector<int64_t> temporaryOffsets;
  bool sharedTemporaries = true;
  /// The staged inputs and the outputs used as scratch, with their offsets.
  struct Slice {
    unsigned arg;
    int64_t offset;
    /// For an output: the op that writes its final value (to the output
    /// itself; every other use moves to the slice).
    Operation *lastWriter;
  };
  SmallVector<Slice> staged;
  /// Shared memory per block: the temporaries when they are shared, and
  /// the staged inputs.
  int64_t total = 0;
  /// In dynamic shared memory (the launch passes its size) rather than
  /// static.
  bool dynamic = false;
};

/// The iteration points of `vector` consecutive iterations of a linalg op's
/// innermost loop from `first`, made when a lane needs them.
struct LanePoints {
  SmallVector<Value> first;
  SmallVector<SmallVector<Value>> lanes;
};

enum class Access { Vector, Broadcast, Gather };

/// block_ops with the row in registers (planRegisters): a block computes one
/// row of `row` elements; thread t owns the groups t, t + threads, ... of
/// `group` consecutive elements, in every op that runs over the row. The
/// buffers only such ops touch, each element at its own position in the
/// row (a softmax's exponentials, an RMSNorm's f32 copy, an input several
/// ops read), live in each thread's registers instead of memory.
struct RegisterRows {
  bool enabled = false;
  int64_t group = 1;
  int64_t threads = 0;
  /// Groups per thread.
  int64_t groups = 0;
  /// The most registers of row values a thread holds at once with
  /// `threads` threads, and with one warp (0: one warp cannot hold the row
  /// within kRowRegisters, or does not share it evenly).
  int64_t peakRegisters = 0, warpPeakRegisters = 0;
  /// The number of buffers kept in registers.
  int64_t buffers = 0;
  /// The ops that run over the row in registers.
  llvm::SmallPtrSet<Operation *, 8> ops;
  /// The buffers kept in registers: temporaries (their allocations) and
  /// parameters (by argument number). For an output, the op that writes
  /// the output itself (every earlier write stays in registers), and the
  /// outputs whose values later ops read from registers (writeThrough: the
  /// first op writes the output whole, as a residual sum a norm then reads).
  llvm::SmallPtrSet<Operation *, 4> allocs;
  llvm::SmallDenseMap<unsigned, Operation *, 4> arguments;
  llvm::SmallDenseSet<unsigned, 4> writeThrough;
};

/// What the pass decided for one kernel.
struct Plan {
  std::string mapping;
  int64_t threads = 1;
  /// Blocks per row block (elementwise).
  int64_t chunks = 1;
  /// block_ops: row blocks per CUDA block, each computed by its own
  /// `threads` threads (planPack); the launch's block has threads * pack.
  int64_t pack = 1;
  int64_t vector = 1;
  /// elementwise: lanes are consecutive iterations of the flat iteration
  /// space, each read element by element, the results written in 16-byte
  /// pieces of the flat output (flatVector).
  bool flat = false;
  /// elementwise over the output points of one reduction: the fill of its
  /// accumulator, which each thread's running value starts from instead
  /// (null for an all-parallel op).
  linalg::FillOp fill;
  std::vector<std::string> notes;
  SmallVector<std::pair<Operation *, Role>> ops;
  llvm::DenseMap<Operation *, Strategy> strategies;
  SharedLayout shared;
  RegisterRows registers;
  /// block_ops: ops whose accesses move 16 bytes per thread.
  int vectorOps = 0;
};

/// Rewrites one kernel body for its plan.
class KernelMapper {
public:
  KernelMapper(func::FuncOp decl, func::FuncOp body, ModuleOp kernels,
               int64_t dynamicSharedLimit, int64_t packRows)
      : decl(decl), body(body), kernels(kernels), loc(body.getLoc()),
        b(body.getContext()), dynamicSharedLimit(dynamicSharedLimit),
        packRows(packRows) {}

  LogicalResult run();

private:
  /// Each parameter's typed view, and its untyped buffer and shift.
  struct Parameter {
    Value view, raw, shift;
    int64_t bytes;
    bool input;
  };

  LogicalResult analyze();
  void planRegisters();
  void planPack();
  void noteRegisters();
  bool rowAccess(linalg::LinalgOp op, OpOperand &operand, int64_t row);
  void planShared();
  Operation *scratchOutputWriter(BlockArgument output,
                                 const llvm::SmallPtrSetImpl<Operation *> &ops);
  void chooseBlock();
  void emitEntry();
  void emitScratch();
  Value dynamicShared(int64_t size);
  void emitStage(const Parameter &p, Value shared, int64_t offset);
  void emitElementwise(linalg::LinalgOp op);
  void emitDistributed(linalg::LinalgOp op, Strategy strategy);
  void emitRegisterRow(linalg::LinalgOp op, Strategy strategy);
  void emitBlockCombine(linalg::LinalgOp op, const Combiner &c,
                        ArrayRef<Value> ivs, Value partial);
  void emitWarpCombine(linalg::LinalgOp op, const Combiner &c,
                       ArrayRef<Value> ivs, Value partial);
  Value combineLanes(linalg::LinalgOp op, const Combiner &c, LanePoints &points,
                     int64_t vector);
  void storeCombined(linalg::LinalgOp op, const Combiner &c,
                     ArrayRef<Value> ivs, Value total);
  void ifThen(Value cond, function_ref<void()> fn);
  Value isZero(Value index);
  Value registerRoot(Value memref);
  const Parameter *parameterOf(Value root) const;
  static Value viewRoot(Value memref);
  void forgetScalars(linalg::LinalgOp op);
  bool isUniformScalar(linalg::LinalgOp op);
  void emitUniformScalar(linalg::LinalgOp op);
  void flushScalars(Operation *before, bool outputsOnly = false);
  void eraseRegisterBuffers();
  void dropUnusedShared();
  void emitThread0(Operation *op);
  void squarePowers();
  void recordDecision();
  /// The launch's thread blocks: the row blocks' chunks, packed pack to a
  /// block.
  int64_t gridBlocks() const { return extent * plan.chunks / plan.pack; }

  // Code for one iteration point.
  IRMapping emitPayload(linalg::LinalgOp op, ArrayRef<Value> ivs,
                        ArrayRef<Value> accs, Operation *skip);
  SmallVector<Value> emitSequentialPoint(linalg::LinalgOp op,
                                         SmallVector<Value> ivs,
                                         ArrayRef<Value> initial = {});
  void emitPointReduction(linalg::LinalgOp op, Value linear);
  bool pointPerThread(linalg::LinalgOp fill, linalg::LinalgOp op);
  Value combine(const Combiner &c, Value acc, Value x);
  Value warpReduce(const Combiner &c, Value v);
  Value shuffleXor(Value v, int32_t offset);
  Value reductionBuffer(Type type);

  // Vector accesses along the innermost loop.
  int64_t innermostVector(linalg::LinalgOp op, bool narrowest = false);
  int64_t flatVector(linalg::LinalgOp op);
  /// The alignment of parameter `arg`'s first byte in a block: buffers are
  /// 64-byte aligned, and a row block starts at a multiple of its stride.
  int64_t parameterAlignment(unsigned arg) const {
    int64_t stride = extent > 1 && !strides.empty() ? strides[arg] : 0;
    return stride ? std::gcd<int64_t>(64, stride) : 64;
  }
  void emitFlatLanes(linalg::LinalgOp op, Value linear,
                     ArrayRef<int64_t> ranges, int64_t vector);
  int64_t reductionVector(linalg::LinalgOp op);
  Access accessOf(linalg::LinalgOp op, OpOperand &operand, int64_t vector);
  ArrayRef<Value> lanePoint(LanePoints &points, int64_t lane);
  SmallVector<IRMapping> emitLanes(linalg::LinalgOp op, LanePoints &points,
                                   int64_t vector, Operation *skip);
  void storeLanes(linalg::LinalgOp op, LanePoints &points, int64_t vector,
                  ArrayRef<IRMapping> lanes);

  SmallVector<Value> applyMap(AffineMap map, ArrayRef<Value> ivs);
  SmallVector<Value> delinearize(Value linear, ArrayRef<int64_t> extents);
  int64_t baseAlignment(Value memref);

  func::FuncOp decl, body;
  ModuleOp kernels;
  Location loc;
  OpBuilder b;
  /// The most dynamic shared memory a block may have (0: none).
  int64_t dynamicSharedLimit;
  /// Row blocks per CUDA block for packed short rows, when forced (the
  /// pass's pack-rows option, a measuring knob); 0: planPack's choice.
  int64_t packRows;
  Plan plan;
  int64_t extent = 1;
  SmallVector<int64_t> strides;
  /// The thread's index among its row block's threads, the CUDA block's
  /// index, the row block's index, and (packed blocks) the row block's
  /// index within the CUDA block.
  Value tid, bid, row, sub;
  /// Byte alignment of the views made at entry.
  llvm::DenseMap<Value, int64_t> rootAlignment;
  SmallVector<Parameter> parameters;
  int64_t stagedBytes = 0, scratchOutputBytes = 0;
  /// The block's static shared memory (emitScratch), as a generic buffer.
  Value staticShared;
  int64_t sharedBytes = 0, dynamicSharedBytes = 0, globalScratchBytes = 0,
          reductionBytes = 0;
  llvm::DenseMap<Type, Value> reductionBuffers;
  /// Rows in registers: each register buffer (its root value) by group,
  /// and the group emitLanes/storeLanes are at (-1: not in such an op).
  llvm::DenseMap<Value, SmallVector<Value>> registerValues;
  llvm::SmallPtrSet<Value, 4> registerRoots;
  /// For an output kept in registers: the op that writes the output itself,
  /// and the outputs whose writer keeps the values in registers too.
  llvm::DenseMap<Value, Operation *> registerFinalWriters;
  llvm::SmallPtrSet<Value, 2> registerWriteThrough;
  int64_t registerGroup = -1;
  /// Rows in registers: the value each thread read of a one-element buffer
  /// (a row's maximum, sum, mean) after the reduction that computed it, by
  /// root, until an op writes the buffer again. Ops that read it use that
  /// value, so a computation two ops repeat (a softmax's exp(x - max), in
  /// the sum and in the output) is one computation for LLVM.
  llvm::DenseMap<Value, Value> knownScalars;
  /// One-element buffers whose known value was computed by every thread
  /// (emitUniformScalar) but not yet written to memory.
  llvm::SetVector<Value> staleScalars;
};

SmallVector<Value> KernelMapper::applyMap(AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<Value> result;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      result.push_back(ivs[d.getPosition()]);
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      result.push_back(constIndex(b, loc, c.getValue()));
    else
      result.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, e), ivs));
  }
  return result;
}

SmallVector<Value> KernelMapper::delinearize(Value linear,
                                             ArrayRef<int64_t> extents) {
  SmallVector<Value> ivs(extents.size());
  Value rest = linear;
  for (int i = static_cast<int>(extents.size()) - 1; i >= 0; --i) {
    if (i == 0) {
      ivs[0] = rest;
      break;
    }
    Value e = constIndex(b, loc, extents[i]);
    ivs[i] = arith::RemUIOp::create(b, loc, rest, e);
    rest = arith::DivUIOp::create(b, loc, rest, e);
  }
  return ivs;
}

/// The alignment in bytes known for a buffer's first element: views made
/// at entry know theirs; reshapes keep their source's.
int64_t KernelMapper::baseAlignment(Value memref) {
  while (true) {
    auto it = rootAlignment.find(memref);
    if (it != rootAlignment.end())
      return it->second;
    Operation *def = memref.getDefiningOp();
    if (!def ||
        !isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
            def))
      return 1;
    memref = def->getOperand(0);
  }
}

LogicalResult KernelMapper::analyze() {
  Block &entry = body.getBody().front();
  for (BlockArgument arg : entry.getArguments())
    if (!isPlainMemRef(arg.getType()))
      return body.emitError("cannot map kernel ")
             << body.getSymName() << " to the GPU: argument "
             << arg.getArgNumber() << " has type " << arg.getType()
             << " (expected a static memref with the identity layout)";
  // The temporaries become slices of scratch memory: their deallocations
  // (through views and base-buffer extractions) go.
  llvm::SmallPtrSet<Operation *, 8> scratchAllocs;
  for (Operation &op : entry)
    if (isScratchAlloc(&op))
      scratchAllocs.insert(&op);
  SmallVector<memref::DeallocOp> deallocs;
  body.walk([&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
  for (memref::DeallocOp dealloc : deallocs) {
    Value root = dealloc.getMemref();
    while (Operation *def = root.getDefiningOp()) {
      if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def))
        root = meta.getSource();
      else if (auto view = dyn_cast<ViewLikeOpInterface>(def))
        root = view.getViewSource();
      else
        break;
    }
    if (root.getDefiningOp() && scratchAllocs.count(root.getDefiningOp()))
      dealloc.erase();
  }
  bool serial = false;
  int distributed = 0, scratch = 0, thread0 = 0;
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    // What the erased deallocations left.
    if (isa<memref::ExtractStridedMetadataOp>(op) && op.use_empty()) {
      op.erase();
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op);
        ifOp && ifOp.getNumResults() == 0 && !ifOp.elseBlock() &&
        ifOp.thenBlock()->without_terminator().empty()) {
      op.erase();
      continue;
    }
    Role role;
    if (isa<func::ReturnOp>(op))
      role = Role::Return;
    else if (isScratchAlloc(&op))
      role = Role::Scratch;
    else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
             linalgOp && isDistributable(linalgOp))
      role = Role::Distribute;
    else if (!writesMemory(&op))
      role = Role::Uniform;
    else
      role = Role::Thread0;
    if (role == Role::Thread0 && !op.use_empty()) {
      serial = true;
      plan.notes.push_back("'" + op.getName().getStringRef().str() +
                           "' writes memory and defines values later ops "
                           "use, so one thread runs the body");
    }
    distributed += role == Role::Distribute;
    scratch += role == Role::Scratch;
    thread0 += role == Role::Thread0;
    plan.ops.push_back({&op, role});
  }
  if (!serial && distributed == 0) {
    serial = true;
    plan.notes.push_back("no linalg op to spread over threads");
  }
  if (serial) {
    plan.mapping = "block_serial";
    plan.threads = 1;
    return success();
  }
  if (distributed == 2 && scratch == 0 && thread0 == 0) {
    // A reduction and the fill of its accumulator: one thread per output
    // point when that beats a block of threads per row block.
    SmallVector<linalg::LinalgOp, 2> ops;
    for (auto [op, role] : plan.ops)
      if (role == Role::Distribute)
        ops.push_back(cast<linalg::LinalgOp>(op));
    if (pointPerThread(ops[0], ops[1])) {
      plan.mapping = "elementwise";
      plan.fill = cast<linalg::FillOp>(ops[0].getOperation());
      return success();
    }
  }
  if (distributed == 1 && scratch == 0 && thread0 == 0) {
    for (auto [op, role] : plan.ops) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (role != Role::Distribute || !linalgOp.isAllParallelLoops())
        continue;
      plan.mapping = "elementwise";
      return success();
    }
  }
  plan.mapping = "block_ops";
  return success();
}

/// Whether the body `fill`, then `op` (a reduction into what `fill` wrote)
/// is best computed with one thread per output point across the grid, each
/// running the reduction in a loop. block_ops gives a row block one block
/// of at most kMaxThreads threads; with P output points of R reduced
/// elements each, its threads do P * R / kMaxThreads steps each (a warp per
/// point, or a thread per point) against R here: fewer as soon as P exceeds
/// kMaxThreads. That happens when the row analysis cannot split the kernel
/// (a gather inside: a depthwise convolution's windows, ConvToGemm.cpp,
/// were one block for the whole tensor), or splits it into blocks of many
/// short rows.
bool KernelMapper::pointPerThread(linalg::LinalgOp fill, linalg::LinalgOp op) {
  auto fillOp = dyn_cast<linalg::FillOp>(fill.getOperation());
  if (!fillOp || op.isAllParallelLoops() || op.getNumDpsInits() != 1 ||
      fillOp.getOutputs().size() != 1 ||
      op.getDpsInitOperand(0)->get() != fillOp.getOutputs()[0] ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isProjectedPermutation())
    return false;
  // The fill's value and every other input are defined outside the loop
  // nest; the output is read by the reduction alone.
  for (OpOperand *input : op.getDpsInputOperands())
    if (input->get() == fillOp.getOutputs()[0])
      return false;
  return pointsAndReduced(op).first > kMaxThreads;
}

/// Whether `op` reaches `operand`'s elements in row order: its iteration
/// points, counted row-major over all its loops, are the `row` elements of
/// the operand's buffer counted row-major, one for one. A thread that owns
/// elements [e, e + group) of the row in one such op owns the same ones in
/// every other.
bool KernelMapper::rowAccess(linalg::LinalgOp op, OpOperand &operand,
                             int64_t row) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getNumElements() != row)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<unsigned> loops, dims;
  for (auto [d, range] : llvm::enumerate(ranges))
    if (range > 1)
      loops.push_back(d);
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (type.getDimSize(i) == 1)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || ranges[dim.getPosition()] != type.getDimSize(i))
      return false;
    dims.push_back(dim.getPosition());
  }
  return dims == loops;
}

/// block_ops kernels whose reductions each reduce the whole row block to
/// one point (a softmax, a norm over long rows) keep the row in registers
/// when it fits: every op over the row (all-parallel ops with one point per
/// row element, and those reductions) gives thread t the same groups of
/// elements, so a buffer only such ops touch, each in row order, is never
/// read by another thread and needs no memory: its values stay in the
/// thread's registers from the op that computes them to the last that
/// reads them, and an input several ops read is loaded once. The reduction
/// results still go through shared memory. bench/gpu/micro/rows.cu measured
/// the layouts on the H200: an RMSNorm row of 4096 bf16 over 256 threads in
/// registers moved 3.67 TB/s, through shared memory 1.92; a 32768-wide f32
/// softmax over 1024 threads 4.14 TB/s against 3.58 staged in dynamic
/// shared memory.
void KernelMapper::planRegisters() {
  RegisterRows &rows = plan.registers;
  if (plan.mapping != "block_ops")
    return;
  auto wholeRowReduction = [&](linalg::LinalgOp op, int64_t row) {
    auto [points, reduced] = pointsAndReduced(op);
    return op.getNumReductionLoops() > 0 && points == 1 &&
           reduced >= kWarpSize && (!row || reduced == row) &&
           op.getNumDpsInits() == 1 && matchCombiner(op).has_value();
  };
  SmallVector<linalg::LinalgOp> distributed;
  for (auto [op, role] : plan.ops)
    if (role == Role::Distribute)
      distributed.push_back(cast<linalg::LinalgOp>(op));
  int64_t row = 0;
  for (linalg::LinalgOp op : distributed)
    if (wholeRowReduction(op, 0)) {
      row = pointsAndReduced(op).second;
      break;
    }
  if (!row)
    return;
  llvm::SmallPtrSet<Operation *, 8> ops;
  SmallVector<linalg::LinalgOp> ordered;
  for (linalg::LinalgOp op : distributed)
    if ((op.getNumReductionLoops() == 0 && pointsAndReduced(op).first == row) ||
        wholeRowReduction(op, row)) {
      ops.insert(op);
      ordered.push_back(op);
    }

  // The buffers that only those ops touch, each in row order.
  std::function<bool(Value, SmallVectorImpl<OpOperand *> &)> rowUses =
      [&](Value value, SmallVectorImpl<OpOperand *> &uses) {
        for (OpOperand &use : value.getUses()) {
          Operation *user = use.getOwner();
          if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp,
                  memref::CastOp>(user)) {
            if (!rowUses(user->getResult(0), uses))
              return false;
            continue;
          }
          if (!ops.contains(user) ||
              !rowAccess(cast<linalg::LinalgOp>(user), use, row))
            return false;
          uses.push_back(&use);
        }
        return true;
      };
  auto reads = [](linalg::LinalgOp op, OpOperand *use) {
    return !op.getMatchingBlockArgument(use).use_empty();
  };
  struct Buffer {
    Value value;
    Operation *alloc = nullptr;
    int64_t arg = -1;
    Operation *finalWriter = nullptr;
    bool writeThrough = false;
    int64_t registers = 0;
    // Positions in `ordered` of the first op that defines its values and
    // the last that reads them.
    int64_t start = -1, end = -1;
  };
  SmallVector<Buffer> buffers;
  auto consider = [&](Buffer buffer, bool input) {
    SmallVector<OpOperand *> uses;
    if (!rowUses(buffer.value, uses) || uses.empty())
      return;
    llvm::SmallPtrSet<Operation *, 4> users;
    for (OpOperand *use : uses)
      users.insert(use->getOwner());
    if (!input && buffer.arg >= 0) {
      // An output: the last op that uses it writes it, without reading
      // it, and the earlier ones keep their values in registers; or the
      // first op writes it, without reading it, no other op writes it, and
      // the later ones read its values from registers (write-through).
      auto writesOnly = [&](linalg::LinalgOp op) {
        bool writes = false;
        for (OpOperand *use : uses)
          if (use->getOwner() == op && op.isDpsInit(use)) {
            if (reads(op, use))
              return false;
            writes = true;
          }
        return writes;
      };
      auto last = llvm::find_if(llvm::reverse(ordered),
                                [&](auto op) { return users.contains(op); });
      auto first =
          llvm::find_if(ordered, [&](auto op) { return users.contains(op); });
      if (writesOnly(*last)) {
        buffer.finalWriter = *last;
      } else if (writesOnly(*first) && llvm::all_of(uses, [&](OpOperand *use) {
                   return use->getOwner() == *first ||
                          !cast<linalg::LinalgOp>(use->getOwner())
                               .isDpsInit(use);
                 })) {
        buffer.finalWriter = *first;
        buffer.writeThrough = true;
      } else {
        return;
      }
    }
    // Values are defined before they are read: inputs by their first read,
    // the others by an op that writes them whole.
    bool defined = input;
    int readers = 0;
    for (auto [position, op] : llvm::enumerate(ordered)) {
      if (!users.contains(op))
        continue;
      bool read = false, write = false;
      for (OpOperand *use : uses)
        if (use->getOwner() == op) {
          read |= reads(op, use);
          write |= op.isDpsInit(use) &&
                   (op != buffer.finalWriter || buffer.writeThrough);
        }
      if (read) {
        if (!defined)
          return;
        ++readers;
        buffer.end = position;
      }
      if (buffer.start < 0 && (read || write))
        buffer.start = position;
      defined |= write;
    }
    if (readers < (input ? 2 : 1))
      return;
    auto type = cast<MemRefType>(buffer.value.getType());
    buffer.registers = elementBytes(type.getElementType());
    buffers.push_back(buffer);
  };
  for (auto [op, role] : plan.ops)
    if (role == Role::Scratch)
      consider({op->getResult(0), op}, false);
  for (BlockArgument arg : body.getBody().front().getArguments())
    consider({arg, nullptr, arg.getArgNumber()},
             arg.getArgNumber() < decl.getNumArguments());
  if (buffers.empty())
    return;

  // Groups of 16 bytes of the narrowest element the ops move along the row,
  // up to 32 bytes of the widest; each op's innermost loop holds whole
  // groups.
  int64_t narrowest = 8, widest = 1;
  for (linalg::LinalgOp op : ordered)
    for (OpOperand &operand : op->getOpOperands())
      if (rowAccess(op, operand, row)) {
        int64_t bytes = elementBytes(
            cast<MemRefType>(operand.get().getType()).getElementType());
        narrowest = std::min(narrowest, bytes);
        widest = std::max(widest, bytes);
      }
  int64_t group = std::max<int64_t>(
      1, std::min(kVectorBytes / narrowest, 2 * kVectorBytes / widest));
  if (row % group != 0 || llvm::any_of(ordered, [&](linalg::LinalgOp op) {
        return op.getStaticLoopRanges().back() % group != 0;
      }))
    return;
  int64_t groups = row / group;
  if (groups < kWarpSize)
    return;

  // The row values a thread holds at once, in 32-bit registers, with
  // `perThread` elements of each buffer.
  auto peak = [&](int64_t perThread) {
    int64_t most = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(ordered.size()); ++i) {
      int64_t across = 0, ending = 0, starting = 0;
      for (const Buffer &buffer : buffers) {
        int64_t regs = ceilDiv(perThread * buffer.registers, 4);
        if (buffer.start < i && buffer.end > i)
          across += regs;
        else if (buffer.end == i)
          ending += regs;
        else if (buffer.start == i)
          starting += regs;
      }
      most = std::max(most, across + std::max(ending, starting));
    }
    return most;
  };
  // The block: whole warps (two at least, when there are the groups: an SM
  // holds at most 32 blocks) that share the groups evenly, keep the row
  // values within kRowRegisters, and give each thread the number of groups
  // closest to kRowGroups (then the most threads).
  int64_t threads = 0, registers = 0;
  int64_t least = groups >= 2 * kWarpSize ? 2 * kWarpSize : kWarpSize;
  for (int64_t t = least; t <= kMaxThreadsLongRows; t += kWarpSize) {
    if (groups % t != 0)
      continue;
    int64_t peakRegisters = peak(groups / t * group);
    if (peakRegisters >
        (t >= kMaxThreadsLongRows ? kRowRegisters1024 : kRowRegisters))
      continue;
    auto distance = [&](int64_t candidate) {
      return std::abs(groups / candidate - kRowGroups);
    };
    if (!threads || distance(t) <= distance(threads)) {
      threads = t;
      registers = peakRegisters;
    }
  }
  if (threads) {
    rows.enabled = true;
    rows.group = group;
    rows.threads = threads;
    rows.groups = groups / threads;
    rows.peakRegisters = registers;
    if (groups % kWarpSize == 0) {
      int64_t warpPeak = peak(groups / kWarpSize * group);
      rows.warpPeakRegisters = warpPeak <= kRowRegisters ? warpPeak : 0;
    }
    rows.buffers = buffers.size();
    rows.ops = std::move(ops);
    for (const Buffer &buffer : buffers) {
      if (buffer.alloc)
        rows.allocs.insert(buffer.alloc);
      else
        rows.arguments[buffer.arg] = buffer.finalWriter;
      if (buffer.writeThrough)
        rows.writeThrough.insert(buffer.arg);
    }
  }
}

/// Short rows in registers: a row that planRegisters gave a block of fewer
/// than kPackBelowThreads threads (GPT-2's and BERT's LayerNorms over 768
/// values: 96 threads with one 16-byte group each) leaves each thread a
/// single load in flight, and every reduction costs the block two barriers
/// and a round trip through shared memory. When one warp can hold the row
/// (its groups a multiple of 32, within kRowRegisters), the row block takes
/// one warp instead (3 groups per thread there): its reductions are warp
/// shuffles alone, which leave the total in every lane, so no barrier and
/// no shared memory. A CUDA block then computes kPackedRowBlocks row
/// blocks, one per warp, so that blocks keep a useful size.
///
/// Only kernels whose row blocks need nothing shared across a CUDA block
/// are packed: no staged inputs, no temporaries beyond static shared memory
/// (each row block gets its own slice), no op on thread 0.
void KernelMapper::planPack() {
  RegisterRows &rows = plan.registers;
  if (!rows.enabled || extent < 2 || rows.threads >= kPackBelowThreads ||
      !rows.warpPeakRegisters)
    return;
  const SharedLayout &layout = plan.shared;
  if (!layout.staged.empty() || layout.dynamic || !layout.sharedTemporaries)
    return;
  if (llvm::any_of(plan.ops, [](const auto &entry) {
        return entry.second == Role::Thread0;
      }))
    return;
  int64_t pack = kPackedRowBlocks;
  if (packRows > 0)
    pack = std::min<int64_t>(packRows, kMaxThreadsLongRows / kWarpSize);
  while (pack > 1 && extent % pack != 0)
    --pack;
  if (pack < 2)
    return;
  rows.groups = rows.groups * rows.threads / kWarpSize;
  rows.threads = kWarpSize;
  rows.peakRegisters = rows.warpPeakRegisters;
  plan.pack = pack;
}

void KernelMapper::noteRegisters() {
  const RegisterRows &rows = plan.registers;
  if (!rows.enabled)
    return;
  plan.notes.push_back(
      "the row (" + std::to_string(rows.groups * rows.threads * rows.group) +
      " elements) in registers: " + std::to_string(rows.groups) +
      " group(s) of " + std::to_string(rows.group) + " elements per thread, " +
      std::to_string(rows.buffers) + " buffer(s) kept there (at most " +
      std::to_string(rows.peakRegisters) +
      " registers of row values per thread)");
  if (plan.pack > 1)
    plan.notes.push_back(
        std::to_string(plan.pack) +
        " row blocks per CUDA block, one warp each: reductions by warp "
        "shuffles alone");
}

/// The distributed ops that read `value` (directly or through reshapes).
static void collectReaders(Value value,
                           const llvm::SmallPtrSetImpl<Operation *> &ops,
                           llvm::SmallPtrSetImpl<Operation *> &readers) {
  for (Operation *user : value.getUsers()) {
    if (ops.contains(user))
      readers.insert(user);
    else if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp,
                 memref::SubViewOp>(user))
      collectReaders(user->getResult(0), ops, readers);
  }
}

/// Temporaries live in shared memory when they fit. A block_ops block also
/// stages the inputs that several of its ops read, so that it reads its rows
/// from device memory once: in static shared memory while that stays under
/// 40 KiB, else in dynamic shared memory up to the limit (rows of a 32K-wide
/// softmax), when that stages more.
void KernelMapper::planShared() {
  SharedLayout &layout = plan.shared;
  for (auto [op, role] : plan.ops)
    if (role == Role::Scratch && !plan.registers.allocs.contains(op)) {
      layout.temporaryOffsets.push_back(layout.temporaries);
      layout.temporaries += roundUp(
          std::max<int64_t>(
              memrefBytes(cast<MemRefType>(op->getResult(0).getType())), 1),
          64);
    }
  layout.sharedTemporaries = layout.temporaries <= kSharedScratchLimit;
  int64_t base = layout.sharedTemporaries ? layout.temporaries : 0;
  layout.total = base;
  if (plan.mapping != "block_ops")
    return;
  llvm::SmallPtrSet<Operation *, 16> distributed;
  for (auto [op, role] : plan.ops)
    if (role == Role::Distribute)
      distributed.insert(op);
  // Inputs read by two ops or more, in parameter order, then outputs that
  // ops use as scratch before the last writes them (a layer norm whose
  // gelu(x) went to its output buffer), with their slices' sizes.
  struct Candidate {
    unsigned arg;
    int64_t bytes;
    Operation *lastWriter;
  };
  SmallVector<Candidate> candidates;
  for (bool inputs : {true, false})
    for (BlockArgument arg : body.getBody().front().getArguments()) {
      if ((arg.getArgNumber() < decl.getNumArguments()) != inputs ||
          plan.registers.arguments.count(arg.getArgNumber()))
        continue;
      llvm::SmallPtrSet<Operation *, 4> readers;
      collectReaders(arg, distributed, readers);
      if (readers.size() < 2)
        continue;
      Operation *lastWriter = nullptr;
      if (!inputs && !(lastWriter = scratchOutputWriter(arg, distributed)))
        continue;
      int64_t bytes = memrefBytes(cast<MemRefType>(arg.getType()));
      candidates.push_back({arg.getArgNumber(),
                            roundUp(std::max<int64_t>(bytes, 1), 64),
                            lastWriter});
    }
  auto stage = [&](int64_t limit,
                   SmallVectorImpl<SharedLayout::Slice> &staged) {
    int64_t total = base;
    for (const Candidate &c : candidates) {
      if (total + c.bytes > limit)
        continue;
      staged.push_back({c.arg, total, c.lastWriter});
      total += c.bytes;
    }
    return total;
  };
  layout.total = stage(kSharedStageLimit, layout.staged);
  if (layout.staged.size() == candidates.size() ||
      dynamicSharedLimit <= kSharedStageLimit)
    return;
  SmallVector<SharedLayout::Slice> dynamicStaged;
  int64_t dynamicTotal = stage(dynamicSharedLimit, dynamicStaged);
  if (dynamicTotal <= layout.total)
    return;
  layout.staged = std::move(dynamicStaged);
  layout.total = dynamicTotal;
  layout.dynamic = true;
}

/// Whether every use of `value` is a distributed op, directly or through
/// reshapes.
static bool
onlyDistributedUsers(Value value,
                     const llvm::SmallPtrSetImpl<Operation *> &ops) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (ops.contains(user))
      return true;
    return isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
               user) &&
           onlyDistributedUsers(user->getResult(0), ops);
  });
}

/// For an output that the body's ops use as scratch: the last op (in body
/// order) that uses it, when it writes the output itself as its init
/// without reading that init, and only distributed ops use the output.
/// Then the earlier ops, and this op's reads, may use a shared slice
/// instead: the output is written once. Null otherwise.
Operation *KernelMapper::scratchOutputWriter(
    BlockArgument output, const llvm::SmallPtrSetImpl<Operation *> &ops) {
  if (!onlyDistributedUsers(output, ops))
    return nullptr;
  llvm::SmallPtrSet<Operation *, 4> users;
  collectReaders(output, ops, users);
  Operation *last = nullptr;
  for (auto [op, role] : plan.ops)
    if (users.contains(op))
      last = op;
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(last);
  if (!linalgOp)
    return nullptr;
  for (OpOperand &init : linalgOp.getDpsInitsMutable())
    if (init.get() == output &&
        linalgOp.getMatchingBlockArgument(&init).use_empty())
      return last;
  return nullptr;
}

/// block_ops: the block's size from the largest op, and how each op is
/// spread over it.
void KernelMapper::chooseBlock() {
  // A block with long rows in dynamic shared memory shares its SM with few
  // others: more threads keep enough loads in flight. (More than 256
  // threads limit the registers a thread may use; the kernel declares its
  // block size, so ptxas keeps within them.)
  int64_t cap = kMaxThreads;
  if (plan.shared.dynamic) {
    int64_t resident = std::max<int64_t>(
        1, kSharedPerSM / (plan.shared.total + kSharedReservedPerBlock));
    cap = std::clamp<int64_t>(
        llvm::bit_floor(static_cast<uint64_t>(kThreadsPerSM / resident)),
        kMaxThreads, kMaxThreadsLongRows);
  }
  int64_t work = 1;
  for (auto [op, role] : plan.ops) {
    if (role != Role::Distribute)
      continue;
    auto linalgOp = cast<linalg::LinalgOp>(op);
    auto [points, reduced] = pointsAndReduced(linalgOp);
    int64_t opWork = points;
    if (matchCombiner(linalgOp) && reduced >= kWarpSize)
      opWork = points * std::min(reduced, cap);
    work = std::max(work, opWork);
  }
  plan.threads = plan.registers.enabled
                     ? plan.registers.threads
                     : std::clamp(roundUp(work, kWarpSize), kWarpSize, cap);
  int64_t warps = plan.threads / kWarpSize;
  int counts[3] = {0, 0, 0};
  for (auto [op, role] : plan.ops) {
    if (role != Role::Distribute)
      continue;
    auto linalgOp = cast<linalg::LinalgOp>(op);
    auto [points, reduced] = pointsAndReduced(linalgOp);
    Strategy strategy = Strategy::Threads;
    if (matchCombiner(linalgOp) && reduced >= kWarpSize &&
        points < plan.threads)
      strategy = points >= warps ? Strategy::Warps : Strategy::Block;
    plan.strategies[op] = strategy;
    ++counts[static_cast<int>(strategy)];
  }
  if (counts[1])
    plan.notes.push_back(std::to_string(counts[1]) +
                         " reduction(s) with one warp per output point");
  if (counts[2])
    plan.notes.push_back(std::to_string(counts[2]) +
                         " reduction(s) with the whole block per output point");
  int64_t thread0 = llvm::count_if(plan.ops, [](const auto &entry) {
    return entry.second == Role::Thread0;
  });
  if (thread0)
    plan.notes.push_back(std::to_string(thread0) +
                         " op(s) that are not linalg run on thread 0");
}

void KernelMapper::emitEntry() {
  Block &entry = body.getBody().front();
  b.setInsertionPointToStart(&entry);
  tid = plan.threads * plan.pack > 1
            ? gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x).getResult()
            : constIndex(b, loc, 0);
  bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  row = constIndex(b, loc, 0);
  if (extent > 1)
    row = plan.chunks > 1 ? arith::DivUIOp::create(
                                b, loc, bid, constIndex(b, loc, plan.chunks))
                                .getResult()
                          : bid;
  if (plan.pack > 1) {
    // Packed row blocks: threads [k * threads, (k + 1) * threads) compute
    // row block bid * pack + k; `tid` counts within it.
    Value threads = constIndex(b, loc, plan.threads);
    sub = arith::DivUIOp::create(b, loc, tid, threads);
    tid = arith::RemUIOp::create(b, loc, tid, threads);
    row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, bid, constIndex(b, loc, plan.pack)), sub);
  }
  // Each parameter becomes an untyped buffer of its whole size, viewed at
  // this block's rows with the body's type.
  SmallVector<Type> types;
  for (BlockArgument arg : entry.getArguments()) {
    auto type = cast<MemRefType>(arg.getType());
    int64_t stride = strides.empty() ? 0 : strides[arg.getArgNumber()];
    int64_t bytes = stride && extent > 1 ? stride * extent : memrefBytes(type);
    auto raw = MemRefType::get({bytes}, b.getI8Type());
    Value shift =
        stride && extent > 1
            ? arith::MulIOp::create(b, loc, row, constIndex(b, loc, stride))
                  .getResult()
            : constIndex(b, loc, 0);
    arg.setType(raw);
    auto view = memref::ViewOp::create(b, loc, type, arg, shift, ValueRange{});
    arg.replaceAllUsesExcept(view, view);
    parameters.push_back({view, arg, shift, memrefBytes(type),
                          arg.getArgNumber() < decl.getNumArguments()});
    rootAlignment[view] = parameterAlignment(arg.getArgNumber());
    types.push_back(raw);
  }
  body.setType(FunctionType::get(body.getContext(), types, {}));
}

/// Shared memory (one slice per block) holds the body's temporaries when
/// they fit, and the inputs planShared chose to stage: a block copies them
/// once, and every op reads them there. Temporaries that do not fit live in
/// a global scratch buffer, one slice per block.
void KernelMapper::emitScratch() {
  const SharedLayout &layout = plan.shared;
  SmallVector<Operation *> allocs;
  for (auto [op, role] : plan.ops)
    if (role == Role::Scratch && !plan.registers.allocs.contains(op))
      allocs.push_back(op);
  if (allocs.empty() && layout.staged.empty())
    return;

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(plan.ops.front().first);
  OpBuilder mb = OpBuilder::atBlockEnd(kernels.getBody());
  auto makeGlobal = [&](bool shared, int64_t size) {
    std::string name =
        ("__strata_" + llvm::Twine(shared ? "shared" : "scratch") + "_" +
         body.getSymName())
            .str();
    auto type =
        MemRefType::get({size}, mb.getI8Type(), MemRefLayoutAttrInterface(),
                        shared ? mb.getI64IntegerAttr(3) : Attribute());
    memref::GlobalOp::create(mb, loc, mb.getStringAttr(name),
                             mb.getStringAttr("private"), TypeAttr::get(type),
                             mb.getUnitAttr(), UnitAttr(),
                             mb.getI64IntegerAttr(64));
    Value base = memref::GetGlobalOp::create(b, loc, type, name);
    if (shared)
      base = memref::MemorySpaceCastOp::create(
          b, loc, MemRefType::get({size}, b.getI8Type()), base);
    return base;
  };
  Value shared;
  int64_t sharedAlignment = 64;
  if (layout.total && layout.dynamic) {
    shared = dynamicShared(layout.total);
    dynamicSharedBytes = layout.total;
    sharedAlignment = kDynamicSharedAlignment;
  } else if (layout.total) {
    // Packed row blocks each have their own slice (planPack: only
    // temporaries, no staged inputs).
    shared = makeGlobal(true, layout.total * plan.pack);
    sharedBytes = layout.total * plan.pack;
    staticShared = shared;
  }

  // The staged inputs: copied by the block's threads, then read from
  // shared memory by every op. Outputs used as scratch: every op but the
  // last writer's write uses the slice.
  bool copied = false;
  for (const SharedLayout::Slice &slice : layout.staged) {
    Parameter &p = parameters[slice.arg];
    if (!slice.lastWriter)
      emitStage(p, shared, slice.offset);
    auto view =
        memref::ViewOp::create(b, loc, p.view.getType(), shared,
                               constIndex(b, loc, slice.offset), ValueRange{});
    rootAlignment[view] = sharedAlignment;
    if (slice.lastWriter) {
      auto writer = cast<linalg::LinalgOp>(slice.lastWriter);
      p.view.replaceUsesWithIf(view, [&](OpOperand &use) {
        return use.getOwner() != slice.lastWriter || !writer.isDpsInit(&use);
      });
      scratchOutputBytes += p.bytes;
    } else {
      p.view.replaceAllUsesWith(view);
      stagedBytes += p.bytes;
      copied = true;
    }
  }
  if (copied)
    gpu::BarrierOp::create(b, loc);

  if (allocs.empty())
    return;
  Value base = layout.sharedTemporaries ? shared : Value();
  int64_t temporaryAlignment = layout.sharedTemporaries ? sharedAlignment : 64;
  Value blockBase =
      sub ? arith::MulIOp::create(b, loc, sub, constIndex(b, loc, layout.total))
                .getResult()
          : constIndex(b, loc, 0);
  if (!layout.sharedTemporaries) {
    int64_t temporaries = layout.temporaries;
    base = makeGlobal(false, temporaries * extent * plan.chunks);
    globalScratchBytes = temporaries * extent * plan.chunks;
    blockBase =
        arith::MulIOp::create(b, loc, bid, constIndex(b, loc, temporaries));
  }
  for (auto [op, offset] : llvm::zip(allocs, layout.temporaryOffsets)) {
    b.setInsertionPoint(op);
    Value shift =
        arith::AddIOp::create(b, loc, blockBase, constIndex(b, loc, offset));
    auto view = memref::ViewOp::create(b, loc, op->getResult(0).getType(), base,
                                       shift, ValueRange{});
    rootAlignment[view] = temporaryAlignment;
    // Deallocations of a temporary go with it.
    for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    op->getResult(0).replaceAllUsesWith(view);
    op->erase();
  }
}

/// The block's dynamic shared memory as a generic buffer of `size` bytes.
/// It is one external declaration in the kernels' module (PTX `.extern
/// .shared ... []`): its size is the launch's, recorded in
/// strata.gpu_shared_bytes.
Value KernelMapper::dynamicShared(int64_t size) {
  auto i8 = b.getI8Type();
  auto workgroup = b.getI64IntegerAttr(3);
  auto declared =
      MemRefType::get({0}, i8, MemRefLayoutAttrInterface(), workgroup);
  if (!kernels.lookupSymbol(kDynamicSharedName)) {
    OpBuilder mb = OpBuilder::atBlockEnd(kernels.getBody());
    memref::GlobalOp::create(mb, loc, mb.getStringAttr(kDynamicSharedName),
                             StringAttr(), TypeAttr::get(declared), Attribute(),
                             UnitAttr(),
                             mb.getI64IntegerAttr(kDynamicSharedAlignment));
  }
  Value base =
      memref::GetGlobalOp::create(b, loc, declared, kDynamicSharedName);
  base = memref::ReinterpretCastOp::create(
      b, loc,
      MemRefType::get({size}, i8, MemRefLayoutAttrInterface(), workgroup), base,
      /*offset=*/0, ArrayRef<int64_t>{size}, ArrayRef<int64_t>{1});
  return memref::MemorySpaceCastOp::create(b, loc, MemRefType::get({size}, i8),
                                           base);
}

/// Copies one staged input into shared memory at `offset`, 16 bytes per
/// access where size and alignment allow (else 8, 4, 2 or 1). Each thread
/// issues up to kStageUnroll loads before it stores, so that a block has its
/// whole row in flight rather than one access per thread.
void KernelMapper::emitStage(const Parameter &p, Value shared, int64_t offset) {
  // The widest access (up to 16 bytes) that size and alignment allow: a row
  // of 4099 f32 still moves 4 bytes at a time.
  int64_t vector = kVectorBytes;
  while (vector > 1 &&
         (p.bytes % vector != 0 || baseAlignment(p.view) % vector != 0))
    vector /= 2;
  auto bytesType = MemRefType::get({p.bytes}, b.getI8Type());
  Value source =
      memref::ViewOp::create(b, loc, bytesType, p.raw, p.shift, ValueRange{});
  Value start = constIndex(b, loc, offset);
  auto load = [&](Value index) -> Value {
    Value at = arith::MulIOp::create(b, loc, index, constIndex(b, loc, vector));
    if (vector == 1)
      return memref::LoadOp::create(b, loc, source, ValueRange{at});
    return vector::LoadOp::create(
        b, loc, VectorType::get({vector}, b.getI8Type()), source,
        ValueRange{at}, /*nontemporal=*/false, llvm::MaybeAlign(vector));
  };
  auto store = [&](Value value, Value index) {
    Value at = arith::MulIOp::create(b, loc, index, constIndex(b, loc, vector));
    Value to = arith::AddIOp::create(b, loc, at, start);
    if (vector == 1)
      memref::StoreOp::create(b, loc, value, shared, ValueRange{to});
    else
      vector::StoreOp::create(b, loc, value, shared, ValueRange{to},
                              /*nontemporal=*/false, llvm::MaybeAlign(vector));
  };
  int64_t count = p.bytes / vector;
  int64_t unroll = 1;
  for (int64_t u = kStageUnroll; u > 1 && unroll == 1; u /= 2)
    if (count >= u * plan.threads)
      unroll = u;
  // [0, main): `unroll` accesses per thread and iteration; [main, count):
  // one.
  int64_t main = unroll > 1
                     ? count / (plan.threads * unroll) * (plan.threads * unroll)
                     : 0;
  if (main) {
    auto loop = scf::ForOp::create(b, loc, tid, constIndex(b, loc, main),
                                   constIndex(b, loc, plan.threads * unroll));
    kernel::set<kernel::GpuDistribute>(loop, b.getStringAttr("stage"));
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> indices, values;
    for (int64_t u = 0; u < unroll; ++u) {
      indices.push_back(
          u ? arith::AddIOp::create(b, loc, loop.getInductionVar(),
                                    constIndex(b, loc, u * plan.threads))
                  .getResult()
            : loop.getInductionVar());
      values.push_back(load(indices.back()));
    }
    for (auto [value, index] : llvm::zip(values, indices))
      store(value, index);
  }
  if (main < count) {
    Value first =
        main ? arith::AddIOp::create(b, loc, tid, constIndex(b, loc, main))
                   .getResult()
             : tid;
    auto loop = scf::ForOp::create(b, loc, first, constIndex(b, loc, count),
                                   constIndex(b, loc, plan.threads));
    kernel::set<kernel::GpuDistribute>(loop, b.getStringAttr("stage"));
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    store(load(loop.getInductionVar()), loop.getInductionVar());
  }
}

IRMapping KernelMapper::emitPayload(linalg::LinalgOp op, ArrayRef<Value> ivs,
                                    ArrayRef<Value> accs, Operation *skip) {
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (arg.use_empty())
      continue;
    if (!isa<MemRefType>(input->get().getType())) {
      mapping.map(arg, input->get());
      continue;
    }
    mapping.map(arg, memref::LoadOp::create(
                         b, loc, input->get(),
                         applyMap(op.getMatchingIndexingMap(input), ivs)));
  }
  for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    BlockArgument arg = op.getMatchingBlockArgument(&init);
    if (k < accs.size() && accs[k])
      mapping.map(arg, accs[k]);
    else if (!arg.use_empty())
      mapping.map(arg, memref::LoadOp::create(
                           b, loc, init.get(),
                           applyMap(op.getMatchingIndexingMap(&init), ivs)));
  }
  for (Operation &inner : op.getBlock()->without_terminator()) {
    if (&inner == skip)
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  return mapping;
}

SmallVector<Value> KernelMapper::emitSequentialPoint(linalg::LinalgOp op,
                                                     SmallVector<Value> ivs,
                                                     ArrayRef<Value> initial) {
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> reduced;
  for (auto [i, kind] : llvm::enumerate(kinds))
    if (!isParallel(kind))
      reduced.push_back(i);
  Operation *yield = op.getBlock()->getTerminator();
  auto yielded = [&](IRMapping &mapping) {
    SmallVector<Value> values;
    for (Value v : yield->getOperands())
      values.push_back(mapping.lookupOrDefault(v));
    return values;
  };
  if (reduced.empty()) {
    IRMapping mapping = emitPayload(op, ivs, {}, nullptr);
    return yielded(mapping);
  }
  // The outputs are carried through the reduction loops, from `initial`
  // or from what the outputs hold.
  SmallVector<Value> accs(initial);
  if (accs.empty())
    for (OpOperand &init : op.getDpsInitsMutable())
      accs.push_back(memref::LoadOp::create(
          b, loc, init.get(), applyMap(op.getMatchingIndexingMap(&init), ivs)));
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned d : reduced) {
    lbs.push_back(constIndex(b, loc, 0));
    ubs.push_back(constIndex(b, loc, ranges[d]));
    steps.push_back(constIndex(b, loc, 1));
  }
  scf::LoopNest nest =
      scf::buildLoopNest(b, loc, lbs, ubs, steps, accs,
                         [&](OpBuilder &nested, Location, ValueRange redIvs,
                             ValueRange iters) -> scf::ValueVector {
                           OpBuilder::InsertionGuard guard(b);
                           b.setInsertionPoint(nested.getInsertionBlock(),
                                               nested.getInsertionPoint());
                           for (auto [d, iv] : llvm::zip(reduced, redIvs))
                             ivs[d] = iv;
                           IRMapping mapping = emitPayload(
                               op, ivs, SmallVector<Value>(iters), nullptr);
                           return yielded(mapping);
                         });
  return SmallVector<Value>(nest.results);
}

Value KernelMapper::combine(const Combiner &c, Value acc, Value x) {
  IRMapping mapping;
  mapping.map(c.acc, acc);
  mapping.map(c.x, x);
  return b.clone(*c.op, mapping)->getResult(0);
}

/// gpu.shuffle moves 32-bit values: narrower ones are widened, 64-bit ones
/// go in two halves.
Value KernelMapper::shuffleXor(Value v, int32_t offset) {
  Type type = v.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  auto intType = b.getIntegerType(width);
  auto i32 = b.getI32Type();
  Value bits = isa<IntegerType>(type)
                   ? v
                   : arith::BitcastOp::create(b, loc, intType, v).getResult();
  auto shuffle = [&](Value word) {
    return gpu::ShuffleOp::create(b, loc, word, offset, kWarpSize,
                                  gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  Value result;
  if (width == 32) {
    result = shuffle(bits);
  } else if (width < 32) {
    Value wide = arith::ExtUIOp::create(b, loc, i32, bits);
    result = arith::TruncIOp::create(b, loc, intType, shuffle(wide));
  } else {
    auto i64 = b.getI64Type();
    Value c32 = arith::ConstantIntOp::create(b, loc, i64, 32);
    Value lo = arith::TruncIOp::create(b, loc, i32, bits);
    Value hi = arith::TruncIOp::create(
        b, loc, i32, arith::ShRUIOp::create(b, loc, bits, c32));
    Value lo2 = arith::ExtUIOp::create(b, loc, i64, shuffle(lo));
    Value hi2 = arith::ExtUIOp::create(b, loc, i64, shuffle(hi));
    result = arith::OrIOp::create(b, loc, lo2,
                                  arith::ShLIOp::create(b, loc, hi2, c32));
  }
  return isa<IntegerType>(type)
             ? result
             : arith::BitcastOp::create(b, loc, type, result).getResult();
}

Value KernelMapper::warpReduce(const Combiner &c, Value v) {
  for (int32_t offset = kWarpSize / 2; offset >= 1; offset /= 2)
    v = combine(c, v, shuffleXor(v, offset));
  return v;
}

/// One value per warp in shared memory, for block-wide reductions.
Value KernelMapper::reductionBuffer(Type type) {
  auto it = reductionBuffers.find(type);
  if (it != reductionBuffers.end())
    return it->second;
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "__strata_reduce_" << body.getSymName() << "_" << type;
  auto bufferType = MemRefType::get(
      {kWarpSize}, type, MemRefLayoutAttrInterface(), b.getI64IntegerAttr(3));
  OpBuilder mb = OpBuilder::atBlockEnd(kernels.getBody());
  memref::GlobalOp::create(
      mb, loc, mb.getStringAttr(name), mb.getStringAttr("private"),
      TypeAttr::get(bufferType), mb.getUnitAttr(), UnitAttr(), IntegerAttr());
  reductionBytes += kWarpSize * elementBytes(type);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(bid.getDefiningOp());
  Value buffer = memref::GetGlobalOp::create(b, loc, bufferType, name);
  reductionBuffers[type] = buffer;
  return buffer;
}

void KernelMapper::emitDistributed(linalg::LinalgOp op, Strategy strategy) {
  if (plan.registers.ops.contains(op))
    return emitRegisterRow(op, strategy);
  if (isUniformScalar(op))
    return emitUniformScalar(op);
  flushScalars(op);
  forgetScalars(op);
  b.setInsertionPoint(op);
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> parallel, reduced;
  SmallVector<int64_t> parallelRanges, reducedRanges;
  for (auto [i, kind] : llvm::enumerate(kinds)) {
    if (isParallel(kind)) {
      parallel.push_back(i);
      parallelRanges.push_back(ranges[i]);
    } else {
      reduced.push_back(i);
      reducedRanges.push_back(ranges[i]);
    }
  }
  int64_t points = product(parallelRanges);
  int64_t reducedPoints = product(reducedRanges);
  SmallVector<Value> ivs(ranges.size());
  auto setParallel = [&](Value linear) {
    for (auto [d, iv] :
         llvm::zip(parallel, delinearize(linear, parallelRanges)))
      ivs[d] = iv;
  };
  auto store = [&](ArrayRef<Value> values) {
    for (auto [value, init] : llvm::zip(values, op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, value, init.get(),
                              applyMap(op.getMatchingIndexingMap(&init), ivs));
  };
  const char *tag = "threads";
  // An all-parallel op: consecutive threads take consecutive groups of
  // `vector` iterations (16-byte accesses, as the elementwise mapping).
  int64_t vector =
      reduced.empty() ? innermostVector(op, /*narrowest=*/true) : 1;
  if (strategy == Strategy::Threads && vector > 1) {
    auto loop =
        scf::ForOp::create(b, loc, tid, constIndex(b, loc, points / vector),
                           constIndex(b, loc, plan.threads));
    kernel::set<kernel::GpuDistribute>(loop, b.getStringAttr(tag));
    b.setInsertionPointToStart(loop.getBody());
    setParallel(arith::MulIOp::create(b, loc, loop.getInductionVar(),
                                      constIndex(b, loc, vector)));
    LanePoints lanePoints{ivs, {}};
    storeLanes(op, lanePoints, vector,
               emitLanes(op, lanePoints, vector, nullptr));
    ++plan.vectorOps;
  } else if (strategy == Strategy::Threads) {
    auto loop = scf::ForOp::create(b, loc, tid, constIndex(b, loc, points),
                                   constIndex(b, loc, plan.threads));
    kernel::set<kernel::GpuDistribute>(loop, b.getStringAttr(tag));
    b.setInsertionPointToStart(loop.getBody());
    setParallel(loop.getInductionVar());
    store(emitSequentialPoint(op, ivs));
  } else {
    Combiner c = *matchCombiner(op);
    Value lane =
        arith::RemUIOp::create(b, loc, tid, constIndex(b, loc, kWarpSize));
    Value warp =
        arith::DivUIOp::create(b, loc, tid, constIndex(b, loc, kWarpSize));
    Value identity = arith::ConstantOp::create(b, loc, c.identity);
    Value zero = constIndex(b, loc, 0);
    int64_t warps = plan.threads / kWarpSize;
    // With the innermost loop reduced and an input contiguous along it, a
    // lane reads `reducedVector` consecutive elements per access.
    int64_t reducedVector = reductionVector(op);
    if (reducedVector > 1)
      ++plan.vectorOps;
    // The reduced elements from `start` in steps of `step` (in groups of
    // reducedVector), combined.
    auto partial = [&](Value start, int64_t step) {
      Value first = reducedVector > 1
                        ? arith::MulIOp::create(
                              b, loc, start, constIndex(b, loc, reducedVector))
                              .getResult()
                        : start;
      auto loop = scf::ForOp::create(
          b, loc, first, constIndex(b, loc, reducedPoints),
          constIndex(b, loc, step * reducedVector), ValueRange{identity});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      for (auto [d, iv] : llvm::zip(
               reduced, delinearize(loop.getInductionVar(), reducedRanges)))
        ivs[d] = iv;
      Value x;
      if (reducedVector > 1) {
        // The group's elements combined pairwise, then into the partial
        // result.
        LanePoints lanePoints{ivs, {}};
        x = combineLanes(op, c, lanePoints, reducedVector);
      } else {
        IRMapping mapping = emitPayload(op, ivs, {}, c.op);
        x = mapping.lookupOrDefault(c.x);
      }
      Value next = combine(c, loop.getRegionIterArg(0), x);
      scf::YieldOp::create(b, loc, next);
      return loop.getResult(0);
    };
    if (strategy == Strategy::Warps) {
      tag = "warps";
      auto loop = scf::ForOp::create(b, loc, warp, constIndex(b, loc, points),
                                     constIndex(b, loc, warps));
      kernel::set<kernel::GpuDistribute>(loop, b.getStringAttr(tag));
      b.setInsertionPointToStart(loop.getBody());
      setParallel(loop.getInductionVar());
      Value total = warpReduce(c, partial(lane, kWarpSize));
      ifThen(isZero(lane), [&] { storeCombined(op, c, ivs, total); });
    } else {
      tag = "block";
      auto loop = scf::ForOp::create(b, loc, zero, constIndex(b, loc, points),
                                     constIndex(b, loc, 1));
      kernel::set<kernel::GpuDistribute>(loop, b.getStringAttr(tag));
      b.setInsertionPointToStart(loop.getBody());
      setParallel(loop.getInductionVar());
      emitBlockCombine(op, c, ivs, partial(tid, plan.threads));
    }
  }
  // The next op may read what other threads wrote.
  b.setInsertionPointAfter(op);
  gpu::BarrierOp::create(b, loc);
  op->erase();
}

/// The parameter whose view (made at entry) `root` is, or null.
const KernelMapper::Parameter *KernelMapper::parameterOf(Value root) const {
  for (const Parameter &p : parameters)
    if (p.view == root)
      return &p;
  return nullptr;
}

/// The buffer kept in registers that `memref` views, or null.
Value KernelMapper::registerRoot(Value memref) {
  Value root = viewRoot(memref);
  return registerRoots.contains(root) ? root : Value();
}

/// An op over the row in registers (planRegisters): thread t computes the
/// groups t, t + threads, ... of `group` elements, unrolled, so that each
/// group's values of a register buffer are SSA values (emitLanes and
/// storeLanes read and define them), and the loads of a thread's groups
/// are independent. A reduction combines its groups, then the block's
/// threads (emitBlockCombine).
void KernelMapper::emitRegisterRow(linalg::LinalgOp op, Strategy strategy) {
  const RegisterRows &rows = plan.registers;
  b.setInsertionPoint(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> reduced;
  SmallVector<int64_t> reducedRanges;
  for (auto [d, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    if (!isParallel(kind)) {
      reduced.push_back(d);
      reducedRanges.push_back(ranges[d]);
    }
  Value first =
      arith::MulIOp::create(b, loc, tid, constIndex(b, loc, rows.group));
  auto groupStart = [&](int64_t k) -> Value {
    if (!k)
      return first;
    return arith::AddIOp::create(
        b, loc, first, constIndex(b, loc, k * rows.threads * rows.group));
  };
  ++plan.vectorOps;
  if (reduced.empty()) {
    for (int64_t k = 0; k < rows.groups; ++k) {
      registerGroup = k;
      LanePoints points{delinearize(groupStart(k), ranges), {}};
      storeLanes(op, points, rows.group,
                 emitLanes(op, points, rows.group, nullptr));
    }
    registerGroup = -1;
  } else {
    // One output point: the whole block combines it, whatever chooseBlock
    // recorded (a block of one warp counts it as a warp reduction).
    (void)strategy;
    Combiner c = *matchCombiner(op);
    // The parallel loops have extent 1.
    SmallVector<Value> ivs(ranges.size(), constIndex(b, loc, 0));
    Value partial = arith::ConstantOp::create(b, loc, c.identity);
    for (int64_t k = 0; k < rows.groups; ++k) {
      registerGroup = k;
      for (auto [d, iv] :
           llvm::zip(reduced, delinearize(groupStart(k), reducedRanges)))
        ivs[d] = iv;
      LanePoints points{ivs, {}};
      partial = combine(c, partial, combineLanes(op, c, points, rows.group));
    }
    registerGroup = -1;
    if (rows.threads == kWarpSize) {
      emitWarpCombine(op, c, ivs, partial);
    } else {
      emitBlockCombine(op, c, ivs, partial);
      OpOperand &init = op.getDpsInitsMutable()[0];
      forgetScalars(op);
      staleScalars.remove(viewRoot(init.get()));
      if (cast<MemRefType>(init.get().getType()).getNumElements() == 1)
        knownScalars[viewRoot(init.get())] = memref::LoadOp::create(
            b, loc, init.get(),
            applyMap(op.getMatchingIndexingMap(&init), ivs));
    }
  }
  // emitBlockCombine ends with a barrier. After an all-parallel op, the
  // next op needs one only when this op touched memory that threads share
  // (a reduction's result, a temporary in shared memory): register values
  // are the thread's own, inputs are only read, and the last op's outputs
  // are read by no later op.
  bool last = true;
  for (auto [other, role] : llvm::reverse(plan.ops)) {
    if (other == op.getOperation())
      break;
    if (role == Role::Distribute || role == Role::Thread0)
      last = false;
  }
  bool shared = false;
  if (reduced.empty() && !last)
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      if (!isa<MemRefType>(value.getType()) || registerRoot(value))
        continue;
      const Parameter *p = parameterOf(viewRoot(value));
      shared |= !p || !p->input;
    }
  if (shared) {
    b.setInsertionPointAfter(op);
    gpu::BarrierOp::create(b, loc);
  }
  op->erase();
}

/// The buffer that `memref` views through reshapes and casts.
Value KernelMapper::viewRoot(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
            def))
      break;
    memref = def->getOperand(0);
  }
  return memref;
}

/// The values known of the buffers `op` writes are stale.
void KernelMapper::forgetScalars(linalg::LinalgOp op) {
  for (OpOperand &init : op.getDpsInitsMutable())
    knownScalars.erase(viewRoot(init.get()));
}

/// In a kernel with the row in registers, an op on one-element buffers
/// alone (a reduction's initial fill, its copy, a mean from a sum) whose
/// inputs every thread knows: every thread computes it (emitUniformScalar),
/// so that no barrier has to publish its result.
bool KernelMapper::isUniformScalar(linalg::LinalgOp op) {
  if (!plan.registers.enabled || product(op.getStaticLoopRanges()) != 1)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    if (type.getNumElements() != 1)
      return false;
    if (op.getMatchingBlockArgument(&operand).use_empty())
      continue;
    Value root = viewRoot(operand.get());
    const Parameter *p = parameterOf(root);
    if (!knownScalars.count(root) &&
        !(p && p->input && op.isDpsInput(&operand)))
      return false;
  }
  return true;
}

/// Every thread computes `op` from the values it knows; its results become
/// known values, written to memory only when something reads the memory
/// (flushScalars).
void KernelMapper::emitUniformScalar(linalg::LinalgOp op) {
  b.setInsertionPoint(op);
  SmallVector<Value> ivs(op.getNumLoops(), constIndex(b, loc, 0));
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (arg.use_empty())
      continue;
    Value value = operand.get();
    if (!isa<MemRefType>(value.getType())) {
      mapping.map(arg, value);
      continue;
    }
    Value known = knownScalars.lookup(viewRoot(value));
    mapping.map(arg,
                known ? known
                      : memref::LoadOp::create(
                            b, loc, value,
                            applyMap(op.getMatchingIndexingMap(&operand), ivs))
                            .getResult());
  }
  for (Operation &inner : op.getBlock()->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  Operation *yield = op.getBlock()->getTerminator();
  for (auto [value, init] :
       llvm::zip(yield->getOperands(), op.getDpsInitsMutable())) {
    Value root = viewRoot(init.get());
    knownScalars[root] = mapping.lookupOrDefault(value);
    staleScalars.insert(root);
  }
  op->erase();
}

/// Before `before`, thread 0 writes the known values that memory lacks (with
/// `outputsOnly`, those of the kernel's outputs, at its end), then a
/// barrier publishes them.
void KernelMapper::flushScalars(Operation *before, bool outputsOnly) {
  SmallVector<Value> roots;
  for (Value root : staleScalars)
    if (const Parameter *p = parameterOf(root);
        !outputsOnly || (p && !p->input))
      roots.push_back(root);
  if (roots.empty())
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(before);
  ifThen(isZero(tid), [&] {
    for (Value root : roots) {
      auto type = cast<MemRefType>(root.getType());
      memref::StoreOp::create(
          b, loc, knownScalars.lookup(root), root,
          SmallVector<Value>(type.getRank(), constIndex(b, loc, 0)));
    }
  });
  if (!outputsOnly)
    gpu::BarrierOp::create(b, loc);
  for (Value root : roots)
    staleScalars.remove(root);
}

/// The temporaries kept in registers have no uses left but views: they go.
/// Erases `op` and, first, the users of its results that end up unused
/// (views of a buffer nothing reads or writes any more).
static void eraseUnused(Operation *op) {
  for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
    eraseUnused(user);
  if (op->use_empty())
    op->erase();
}

void KernelMapper::eraseRegisterBuffers() {
  for (Operation *alloc : plan.registers.allocs)
    eraseUnused(alloc);
}

/// Static shared memory that no op reads or writes after the rewrite (the
/// one-element temporaries of a kernel whose reductions' results every
/// thread knows: planPack) goes, with its views: neither the launch's
/// shared bytes nor the reason count it.
void KernelMapper::dropUnusedShared() {
  if (!staticShared)
    return;
  std::function<bool(Value)> unused = [&](Value value) {
    return llvm::all_of(value.getUsers(), [&](Operation *user) {
      return isa<memref::ViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
                 memref::CastOp>(user) &&
             unused(user->getResult(0));
    });
  };
  if (!unused(staticShared))
    return;
  auto cast = staticShared.getDefiningOp<memref::MemorySpaceCastOp>();
  auto get = cast.getSource().getDefiningOp<memref::GetGlobalOp>();
  Operation *global = kernels.lookupSymbol(get.getNameAttr());
  eraseUnused(get);
  global->erase();
  staticShared = Value();
  sharedBytes = 0;
}

/// What `vector` consecutive reduced elements from `points` contribute to
/// reduction `op`, combined pairwise.
Value KernelMapper::combineLanes(linalg::LinalgOp op, const Combiner &c,
                                 LanePoints &points, int64_t vector) {
  SmallVector<Value> values;
  for (IRMapping &lane : emitLanes(op, points, vector, c.op))
    values.push_back(lane.lookupOrDefault(c.x));
  return strata::combinePairwise(
      std::move(values), [&](Value x, Value y) { return combine(c, x, y); });
}

/// Combines `total` into `op`'s output point at `ivs` (so fills and
/// accumulations keep linalg's meaning).
void KernelMapper::storeCombined(linalg::LinalgOp op, const Combiner &c,
                                 ArrayRef<Value> ivs, Value total) {
  OpOperand &init = op.getDpsInitsMutable()[0];
  SmallVector<Value> index = applyMap(op.getMatchingIndexingMap(&init), ivs);
  Value old = plan.registers.ops.contains(op)
                  ? knownScalars.lookup(viewRoot(init.get()))
                  : Value();
  if (!old)
    old = memref::LoadOp::create(b, loc, init.get(), index);
  memref::StoreOp::create(b, loc, combine(c, old, total), init.get(), index);
}

void KernelMapper::ifThen(Value cond, function_ref<void()> fn) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  fn();
}

Value KernelMapper::isZero(Value index) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                               constIndex(b, loc, 0));
}

/// The whole block's total of each thread's `partial` (warp shuffles, one
/// value per warp through shared memory, shuffles again), combined into
/// `op`'s output point at `ivs`. Ends with a barrier: the output is then
/// visible to every thread, and the per-warp buffer free for the next use.
void KernelMapper::emitBlockCombine(linalg::LinalgOp op, const Combiner &c,
                                    ArrayRef<Value> ivs, Value partial) {
  Type accType = c.acc.getType();
  Value lane =
      arith::RemUIOp::create(b, loc, tid, constIndex(b, loc, kWarpSize));
  Value warp =
      arith::DivUIOp::create(b, loc, tid, constIndex(b, loc, kWarpSize));
  int64_t warps = plan.threads / kWarpSize;
  Value buffer = reductionBuffer(accType);
  Value total = warpReduce(c, partial);
  ifThen(isZero(lane), [&] {
    memref::StoreOp::create(b, loc, total, buffer, ValueRange{warp});
  });
  gpu::BarrierOp::create(b, loc);
  ifThen(isZero(warp), [&] {
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          lane, constIndex(b, loc, warps));
    auto pick = scf::IfOp::create(b, loc, TypeRange{accType}, inRange,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&pick.getThenRegion().front());
      scf::YieldOp::create(
          b, loc,
          memref::LoadOp::create(b, loc, buffer, ValueRange{lane}).getResult());
      b.setInsertionPointToStart(&pick.getElseRegion().front());
      scf::YieldOp::create(
          b, loc, arith::ConstantOp::create(b, loc, c.identity).getResult());
    }
    Value blockTotal = warpReduce(c, pick.getResult(0));
    ifThen(isZero(lane), [&] { storeCombined(op, c, ivs, blockTotal); });
  });
  gpu::BarrierOp::create(b, loc);
}

/// A row block of one warp (planPack): warp shuffles leave the total of
/// each lane's `partial` in every lane. Combined with the output's value,
/// it becomes a known value of every thread, written to memory only when
/// something reads the memory (flushScalars), as emitUniformScalar's are:
/// no barrier, no shared memory. An output of more than one element (which
/// the reduction still reduces to one point) is written by lane 0, then a
/// barrier publishes it.
void KernelMapper::emitWarpCombine(linalg::LinalgOp op, const Combiner &c,
                                   ArrayRef<Value> ivs, Value partial) {
  Value total = warpReduce(c, partial);
  OpOperand &init = op.getDpsInitsMutable()[0];
  Value root = viewRoot(init.get());
  if (cast<MemRefType>(init.get().getType()).getNumElements() != 1) {
    forgetScalars(op);
    staleScalars.remove(root);
    ifThen(isZero(tid), [&] { storeCombined(op, c, ivs, total); });
    gpu::BarrierOp::create(b, loc);
    return;
  }
  Value old = knownScalars.lookup(root);
  if (!old)
    old = memref::LoadOp::create(
        b, loc, init.get(), applyMap(op.getMatchingIndexingMap(&init), ivs));
  knownScalars[root] = combine(c, old, total);
  staleScalars.insert(root);
}

void KernelMapper::emitElementwise(linalg::LinalgOp op) {
  b.setInsertionPoint(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t total = pointsAndReduced(op).first;
  int64_t vector = plan.vector;
  Value chunk =
      plan.chunks > 1
          ? arith::RemUIOp::create(b, loc, bid, constIndex(b, loc, plan.chunks))
                .getResult()
          : constIndex(b, loc, 0);
  Value linear = arith::MulIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, chunk,
                                constIndex(b, loc, plan.threads)),
          tid),
      constIndex(b, loc, vector));
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        linear, constIndex(b, loc, total));
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  kernel::set<kernel::GpuDistribute>(guard, b.getStringAttr("elementwise"));
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  if (plan.fill) {
    emitPointReduction(op, linear);
    return;
  }
  if (plan.flat) {
    emitFlatLanes(op, linear, ranges, vector);
    op->erase();
    return;
  }
  SmallVector<Value> ivs = delinearize(linear, ranges);

  if (vector == 1) {
    IRMapping mapping = emitPayload(op, ivs, {}, nullptr);
    Operation *yield = op.getBlock()->getTerminator();
    for (auto [value, init] :
         llvm::zip(yield->getOperands(), op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, mapping.lookupOrDefault(value),
                              init.get(),
                              applyMap(op.getMatchingIndexingMap(&init), ivs));
    op->erase();
    return;
  }

  LanePoints points{ivs, {}};
  storeLanes(op, points, vector, emitLanes(op, points, vector, nullptr));
  op->erase();
}

/// The output point `linear` (row-major over the parallel loops) of a
/// reduction, its accumulator starting from the fill's value: the fill is
/// not run, as no thread reads another's point.
void KernelMapper::emitPointReduction(linalg::LinalgOp op, Value linear) {
  SmallVector<int64_t> parallelRanges;
  SmallVector<unsigned> parallel;
  for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    if (isParallel(kind)) {
      parallel.push_back(i);
      parallelRanges.push_back(op.getStaticLoopRanges()[i]);
    }
  SmallVector<Value> ivs(op.getNumLoops());
  for (auto [d, iv] : llvm::zip(parallel, delinearize(linear, parallelRanges)))
    ivs[d] = iv;
  Value initial = plan.fill.getInputs()[0];
  SmallVector<Value> values = emitSequentialPoint(op, ivs, {initial});
  OpOperand *init = op.getDpsInitOperand(0);
  memref::StoreOp::create(b, loc, values[0], init->get(),
                          applyMap(op.getMatchingIndexingMap(init), ivs));
  op->erase();
  plan.fill->erase();
}

/// Elements per thread access along `op`'s innermost loop, from the
/// operands indexed by that loop: 16 bytes of the widest element, or, with
/// `narrowest`, 16 bytes of the narrowest (a bf16 input read 8 elements at a
/// time, an f32 result written as two 16-byte pieces) up to 32 bytes of the
/// widest. 1 when the loop's extent is not a multiple of it.
int64_t KernelMapper::innermostVector(linalg::LinalgOp op, bool narrowest) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty())
    return 1;
  int64_t widest = 0, narrow = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type ||
        !op.getMatchingIndexingMap(&operand).isFunctionOfDim(ranges.size() - 1))
      continue;
    int64_t bytes = elementBytes(type.getElementType());
    widest = std::max(widest, bytes);
    if (type.getElementType().getIntOrFloatBitWidth() >= 8)
      narrow = narrow ? std::min(narrow, bytes) : bytes;
  }
  int64_t vector = widest ? kVectorBytes / widest : 1;
  if (narrowest && narrow)
    vector = std::max(
        vector, std::min(kVectorBytes / narrow, 2 * kVectorBytes / widest));
  if (vector > 1 && ranges.back() % vector != 0)
    vector = 1;
  return vector;
}

/// When the innermost loop's extent allows no vector (a slice to 50257
/// columns), the elements per thread for the flat iteration space instead:
/// 16 bytes of the result when every result is written in iteration order
/// (identity indexing into a contiguous, 16-byte aligned buffer) and the
/// total is a multiple of it. The outputs are then written 16 bytes at a
/// time at the flat index; the inputs are read element by element, which
/// consecutive threads still read in order. 1 otherwise.
int64_t KernelMapper::flatVector(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.size() < 2 || ShapedType::isDynamicShape(ranges))
    return 1;
  int64_t bytes = 0;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    auto type = dyn_cast<MemRefType>(init.get().getType());
    if (!type || !type.getLayout().isIdentity() || !type.hasStaticShape() ||
        !op.getMatchingIndexingMap(&init).isIdentity() ||
        !op.getMatchingBlockArgument(&init).use_empty() ||
        type.getElementType().getIntOrFloatBitWidth() < 8)
      return 1;
    // Planned before the parameters become views (emitEntry).
    auto arg = dyn_cast<BlockArgument>(init.get());
    if (!arg || parameterAlignment(arg.getArgNumber()) % kVectorBytes != 0)
      return 1;
    int64_t size = elementBytes(type.getElementType());
    if (bytes && size != bytes)
      return 1;
    bytes = size;
  }
  if (!bytes)
    return 1;
  int64_t vector = kVectorBytes / bytes;
  return vector > 1 && product(ranges) % vector == 0 ? vector : 1;
}

/// `vector` consecutive iterations of the flat iteration space from
/// `linear` (flatVector): each lane's point delinearized, the inputs read
/// per lane, the results stored as one vector into the flattened output.
void KernelMapper::emitFlatLanes(linalg::LinalgOp op, Value linear,
                                 ArrayRef<int64_t> ranges, int64_t vector) {
  SmallVector<SmallVector<Value>> points;
  SmallVector<IRMapping> lanes(vector);
  for (int64_t l = 0; l < vector; ++l)
    points.push_back(delinearize(
        l ? arith::AddIOp::create(b, loc, linear, constIndex(b, loc, l))
                .getResult()
          : linear,
        ranges));
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (arg.use_empty())
      continue;
    if (!isa<MemRefType>(input->get().getType())) {
      for (IRMapping &lane : lanes)
        lane.map(arg, input->get());
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(input);
    for (int64_t l = 0; l < vector; ++l)
      lanes[l].map(arg, memref::LoadOp::create(b, loc, input->get(),
                                               applyMap(map, points[l])));
  }
  for (int64_t l = 0; l < vector; ++l)
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        lanes[l].map(index.getResult(), points[l][index.getDim()]);
        continue;
      }
      b.clone(inner, lanes[l]);
    }
  Operation *yield = op.getBlock()->getTerminator();
  for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    auto type = cast<MemRefType>(init.get().getType());
    SmallVector<Value> values;
    for (const IRMapping &lane : lanes)
      values.push_back(lane.lookupOrDefault(yield->getOperand(k)));
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    Value flat = memref::CollapseShapeOp::create(b, loc, init.get(), all);
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({vector}, type.getElementType()), values);
    vector::StoreOp::create(b, loc, v, flat, ValueRange{linear},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(kVectorBytes));
  }
}

/// Elements one lane of a cooperative reduction reads per access: a 16-byte
/// vector when the innermost loop is reduced and an input is contiguous
/// along it, else 1.
int64_t KernelMapper::reductionVector(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  if (kinds.empty() || isParallel(kinds.back()))
    return 1;
  int64_t vector = innermostVector(op, /*narrowest=*/true);
  if (vector == 1)
    return 1;
  for (OpOperand *input : op.getDpsInputOperands())
    if (isa<MemRefType>(input->get().getType()) &&
        accessOf(op, *input, vector) == Access::Vector)
      return vector;
  return 1;
}

/// How `operand` is accessed at `vector` consecutive iterations of the
/// innermost loop: one vector access when it is contiguous along that loop
/// and aligned for it, once when the loop does not index it, else element
/// by element.
Access KernelMapper::accessOf(linalg::LinalgOp op, OpOperand &operand,
                              int64_t vector) {
  unsigned last = op.getNumLoops() - 1;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  auto type = cast<MemRefType>(operand.get().getType());
  if (!map.isFunctionOfDim(last))
    return Access::Broadcast;
  int64_t bytes = elementBytes(type.getElementType());
  bool contiguous =
      type.getLayout().isIdentity() && type.getRank() >= 1 &&
      map.getResults().back() == getAffineDimExpr(last, b.getContext()) &&
      type.getShape().back() % vector == 0 &&
      type.getElementType().getIntOrFloatBitWidth() >= 8 &&
      baseAlignment(operand.get()) % vectorAlignment(bytes, vector) == 0;
  return contiguous ? Access::Vector : Access::Gather;
}

/// Lane `lane`'s iteration point: the first with the innermost index
/// advanced by `lane`.
ArrayRef<Value> KernelMapper::lanePoint(LanePoints &points, int64_t lane) {
  if (points.lanes.size() <= static_cast<size_t>(lane))
    points.lanes.resize(lane + 1);
  SmallVector<Value> &ivs = points.lanes[lane];
  if (ivs.empty()) {
    ivs = points.first;
    if (lane)
      ivs.back() = arith::AddIOp::create(b, loc, points.first.back(),
                                         constIndex(b, loc, lane));
  }
  return ivs;
}

/// The payload of `op` at `vector` consecutive iterations of its innermost
/// loop: each operand read once per accessOf, then the body once per lane
/// (without `skip`, a reduction's combiner, whose accumulator is then not
/// read). Returns each lane's values.
SmallVector<IRMapping> KernelMapper::emitLanes(linalg::LinalgOp op,
                                               LanePoints &points,
                                               int64_t vector,
                                               Operation *skip) {
  SmallVector<IRMapping> lanes(vector);
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    bool accumulator = op.isDpsInit(&operand) && skip;
    if (arg.use_empty() ||
        (accumulator && llvm::all_of(arg.getUsers(), [&](Operation *user) {
           return user == skip;
         })))
      continue;
    if (!isa<MemRefType>(operand.get().getType())) {
      for (IRMapping &lane : lanes)
        lane.map(arg, operand.get());
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (registerGroup >= 0)
      if (Value root = registerRoot(operand.get())) {
        // A register buffer: its values at this group, which an input's
        // first reader loads.
        SmallVector<Value> &groups = registerValues[root];
        groups.resize(plan.registers.groups);
        if (!groups[registerGroup]) {
          assert(parameterOf(root) && parameterOf(root)->input &&
                 "planRegisters: a register buffer is read before written");
          Type element =
              cast<MemRefType>(operand.get().getType()).getElementType();
          auto type = VectorType::get({vector}, element);
          if (accessOf(op, operand, vector) == Access::Vector) {
            groups[registerGroup] = vector::LoadOp::create(
                b, loc, type, operand.get(), applyMap(map, points.first),
                /*nontemporal=*/false,
                llvm::MaybeAlign(
                    vectorAlignment(elementBytes(element), vector)));
          } else {
            SmallVector<Value> values;
            for (int64_t l = 0; l < vector; ++l)
              values.push_back(memref::LoadOp::create(
                  b, loc, operand.get(), applyMap(map, lanePoint(points, l))));
            groups[registerGroup] =
                vector::FromElementsOp::create(b, loc, type, values);
          }
        }
        for (int64_t l = 0; l < vector; ++l)
          lanes[l].map(
              arg, vector::ExtractOp::create(b, loc, groups[registerGroup], l));
        continue;
      }
    switch (accessOf(op, operand, vector)) {
    case Access::Vector: {
      Type element = cast<MemRefType>(operand.get().getType()).getElementType();
      Value v = vector::LoadOp::create(
          b, loc, VectorType::get({vector}, element), operand.get(),
          applyMap(map, points.first), /*nontemporal=*/false,
          llvm::MaybeAlign(vectorAlignment(elementBytes(element), vector)));
      for (int64_t l = 0; l < vector; ++l)
        lanes[l].map(arg, vector::ExtractOp::create(b, loc, v, l));
      break;
    }
    case Access::Broadcast: {
      Value v =
          registerGroup >= 0 &&
                  cast<MemRefType>(operand.get().getType()).getNumElements() ==
                      1
              ? knownScalars.lookup(viewRoot(operand.get()))
              : Value();
      if (!v)
        v = memref::LoadOp::create(b, loc, operand.get(),
                                   applyMap(map, points.first));
      for (IRMapping &lane : lanes)
        lane.map(arg, v);
      break;
    }
    case Access::Gather:
      for (int64_t l = 0; l < vector; ++l)
        lanes[l].map(
            arg, memref::LoadOp::create(b, loc, operand.get(),
                                        applyMap(map, lanePoint(points, l))));
      break;
    }
  }
  for (int64_t l = 0; l < vector; ++l)
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (&inner == skip)
        continue;
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        lanes[l].map(index.getResult(), lanePoint(points, l)[index.getDim()]);
        continue;
      }
      b.clone(inner, lanes[l]);
    }
  return lanes;
}

/// Writes what each lane yields: one vector store per contiguous output,
/// else element by element.
void KernelMapper::storeLanes(linalg::LinalgOp op, LanePoints &points,
                              int64_t vector, ArrayRef<IRMapping> lanes) {
  Operation *yield = op.getBlock()->getTerminator();
  for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    SmallVector<Value> values;
    for (const IRMapping &lane : lanes)
      values.push_back(lane.lookupOrDefault(yield->getOperand(k)));
    Type element = cast<MemRefType>(init.get().getType()).getElementType();
    if (registerGroup >= 0)
      if (Value root = registerRoot(init.get())) {
        bool final = registerFinalWriters.lookup(root) == op.getOperation();
        if (!final || registerWriteThrough.contains(root)) {
          SmallVector<Value> &groups = registerValues[root];
          groups.resize(plan.registers.groups);
          groups[registerGroup] = vector::FromElementsOp::create(
              b, loc, VectorType::get({vector}, element), values);
        }
        if (!final)
          continue;
      }
    if (accessOf(op, init, vector) == Access::Vector) {
      Value v = vector::FromElementsOp::create(
          b, loc, VectorType::get({vector}, element), values);
      vector::StoreOp::create(
          b, loc, v, init.get(), applyMap(map, points.first),
          /*nontemporal=*/false,
          llvm::MaybeAlign(vectorAlignment(elementBytes(element), vector)));
    } else {
      for (int64_t l = 0; l < vector; ++l)
        memref::StoreOp::create(b, loc, values[l], init.get(),
                                applyMap(map, lanePoint(points, l)));
    }
  }
}

void KernelMapper::emitThread0(Operation *op) {
  flushScalars(op);
  knownScalars.clear();
  b.setInsertionPoint(op);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                      constIndex(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  kernel::set<kernel::GpuDistribute>(ifOp, b.getStringAttr("thread0"));
  op->moveBefore(ifOp.getThenRegion().front().getTerminator());
  b.setInsertionPointAfter(ifOp);
  gpu::BarrierOp::create(b, loc);
}

LogicalResult KernelMapper::run() {
  if (auto rows = kernel::get<kernel::ParallelRows>(decl))
    if (auto block = kernel::get<kernel::ParallelBlock>(decl))
      if (block.getInt() > 0)
        extent = rows.getInt() / block.getInt();
  if (auto s = kernel::get<kernel::BlockStrides>(decl))
    strides.assign(s.asArrayRef().begin(), s.asArrayRef().end());
  if (extent > 1 && strides.size() != body.getNumArguments())
    return decl.emitError("internal error: kernel ")
           << decl.getSymName() << " has " << strides.size()
           << " block strides for " << body.getNumArguments() << " buffers";
  if (failed(analyze()))
    return failure();
  planRegisters();
  planShared();
  planPack();
  noteRegisters();
  if (plan.mapping == "block_ops")
    chooseBlock();

  linalg::LinalgOp elementwise;
  if (plan.mapping == "elementwise") {
    for (auto [op, role] : plan.ops)
      if (role == Role::Distribute && op != plan.fill)
        elementwise = cast<linalg::LinalgOp>(op);
    // The widest element among operands indexed along the innermost loop
    // decides how many elements make a 16-byte access; a reduction's
    // threads take one output point each.
    auto [total, reduced] = pointsAndReduced(elementwise);
    int64_t vector = 1;
    if (!plan.fill) {
      vector = innermostVector(elementwise);
      if (vector == 1 && (vector = flatVector(elementwise)) > 1)
        plan.flat = true;
    } else {
      plan.notes.push_back("each thread one output point, its " +
                           std::to_string(reduced) +
                           " reduced elements in a loop");
    }
    plan.vector = vector;
    int64_t threadsNeeded = std::max<int64_t>(1, ceilDiv(total, vector));
    plan.threads =
        std::clamp(roundUp(threadsNeeded, kWarpSize), kWarpSize, kMaxThreads);
    plan.chunks = std::max<int64_t>(1, ceilDiv(threadsNeeded, plan.threads));
  }
  int64_t blocks = gridBlocks();
  if (blocks > std::numeric_limits<int32_t>::max())
    return decl.emitError("kernel ")
           << decl.getSymName() << " needs " << blocks
           << " thread blocks, more than a CUDA grid's x dimension holds";

  emitEntry();
  for (auto [arg, finalWriter] : plan.registers.arguments) {
    registerRoots.insert(parameters[arg].view);
    if (finalWriter)
      registerFinalWriters[parameters[arg].view] = finalWriter;
    if (plan.registers.writeThrough.contains(arg))
      registerWriteThrough.insert(parameters[arg].view);
  }
  for (Operation *alloc : plan.registers.allocs)
    registerRoots.insert(alloc->getResult(0));
  emitScratch();
  if (plan.mapping == "elementwise") {
    emitElementwise(elementwise);
  } else if (plan.mapping == "block_ops") {
    for (auto [op, role] : plan.ops) {
      if (role == Role::Distribute)
        emitDistributed(cast<linalg::LinalgOp>(op), plan.strategies[op]);
      else if (role == Role::Thread0)
        emitThread0(op);
      else if (role == Role::Return)
        flushScalars(op, /*outputsOnly=*/true);
    }
  }
  eraseRegisterBuffers();
  dropUnusedShared();
  squarePowers();
  recordDecision();
  return success();
}

/// x^2 (an RMSNorm's or a variance's square) becomes x * x, which is exact:
/// on the GPU, math.powf is libdevice's general __nv_powf, tens of
/// instructions with branches per element, enough to make a norm
/// compute-bound. (On the CPU, LLVM simplifies the libm call itself.)
void KernelMapper::squarePowers() {
  SmallVector<math::PowFOp> powers;
  body.walk([&](math::PowFOp pow) {
    FloatAttr exponent;
    if (matchPattern(pow.getRhs(), m_Constant(&exponent)) &&
        exponent.getValue().isExactlyValue(2.0))
      powers.push_back(pow);
  });
  for (math::PowFOp pow : powers) {
    b.setInsertionPoint(pow);
    Value square = arith::MulFOp::create(b, pow.getLoc(), pow.getLhs(),
                                         pow.getLhs(), pow.getFastmathAttr());
    pow.replaceAllUsesWith(square);
    pow.erase();
  }
}

void KernelMapper::recordDecision() {
  MLIRContext *context = decl.getContext();
  int64_t blocks = gridBlocks();
  int64_t threads = plan.threads * plan.pack;
  // The launch's block size is this: the target's code generator keeps
  // each thread's registers within what that many threads may have (64 at
  // 1024 threads on NVIDIA GPUs), so the launch cannot fail for want of
  // registers.
  kernel::set<kernel::MaxThreads>(body, b.getI64IntegerAttr(threads));
  kernel::set<kernel::Launch>(
      decl,
      kernel::LaunchAttr::get(
          context, plan.mapping, {blocks, 1, 1}, {threads, 1, 1},
          dynamicSharedBytes, sharedBytes + reductionBytes, globalScratchBytes,
          plan.mapping == "elementwise" ? plan.vector : 0,
          /*persistent=*/0, /*tensorMaps=*/{}, /*waitsForGrids=*/false));
  std::string reason;
  std::string blocksText = extent > 1 ? std::to_string(extent) + " row blocks"
                                      : std::string("the whole kernel");
  if (plan.mapping == "elementwise" && plan.fill)
    reason = "one reduction: " + std::to_string(plan.chunks) + " block(s) of " +
             std::to_string(plan.threads) + " threads per " +
             (extent > 1 ? "row block" : "kernel");
  else if (plan.mapping == "elementwise")
    reason = "one all-parallel op: " + std::to_string(plan.chunks) +
             " block(s) of " + std::to_string(plan.threads) + " threads per " +
             (extent > 1 ? "row block" : "kernel") + ", " +
             std::to_string(plan.vector) + " element(s) per thread" +
             (plan.flat ? " of the flat iteration space, the results in "
                          "16-byte accesses (the innermost extent allows no "
                          "vector)"
              : plan.vector > 1 ? " in 16-byte accesses"
                                : "");
  else if (plan.mapping == "block_ops" && plan.pack > 1)
    reason = "one block of " + std::to_string(threads) + " threads for " +
             std::to_string(plan.pack) + " of the " + std::to_string(extent) +
             " row blocks, " + std::to_string(plan.threads) +
             " threads each, their ops one after another over those threads";
  else if (plan.mapping == "block_ops")
    reason = "one block of " + std::to_string(plan.threads) + " threads for " +
             blocksText + ", its ops one after another over the threads";
  else
    reason = "one thread for " + blocksText;
  for (const std::string &note : plan.notes)
    reason += "; " + note;
  if (plan.vectorOps)
    reason +=
        "; " + std::to_string(plan.vectorOps) + " op(s) with 16-byte accesses";
  if (stagedBytes)
    reason += "; inputs read by several ops staged in " +
              std::string(dynamicSharedBytes ? "dynamic " : "") +
              "shared memory (" + std::to_string(stagedBytes) + " bytes)";
  if (scratchOutputBytes)
    reason += "; outputs that ops use as scratch before the last writes them "
              "kept in shared memory (" +
              std::to_string(scratchOutputBytes) + " bytes)";
  if (sharedBytes + dynamicSharedBytes > stagedBytes + scratchOutputBytes)
    reason += "; temporaries in shared memory";
  if (globalScratchBytes)
    reason += "; temporaries in a " + std::to_string(globalScratchBytes) +
              "-byte global scratch buffer";
  kernel::set<kernel::GpuReason>(decl, StringAttr::get(context, reason));
}

/// The kernels that copy model inputs which views read (ModuleWriter.cpp's
/// plan copies such inputs, since input buffers are bound per run): one
/// per distinct size, an elementwise copy of bytes.
LogicalResult addCopyKernels(ModuleOp module, ModuleOp kernels) {
  func::FuncOp entry = strata::getEntryFunction(module);
  if (!entry)
    return success();
  std::set<uint64_t> sizes;
  for (BlockArgument arg : entry.getArguments()) {
    bool viewed = llvm::any_of(
        arg.getUsers(), [](Operation *user) { return strata::isViewOp(user); });
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!viewed || !type || !type.hasStaticShape())
      continue;
    std::optional<strata::rt::DType> dtype =
        strata::toRuntimeType(type.getElementType());
    // Strings live on the host (docs/runtime.md, "Strings"): no copy kernel.
    if (!dtype || *dtype == strata::rt::DType::String)
      continue;
    sizes.insert(static_cast<uint64_t>(type.getNumElements()) *
                 strata::rt::dtypeSize(*dtype));
  }
  MLIRContext *context = module.getContext();
  for (uint64_t bytes : sizes) {
    std::string name = strata::gpuCopyKernelName(bytes);
    if (module.lookupSymbol(name))
      continue;
    OpBuilder b(context);
    Location loc = entry.getLoc();
    auto tensor =
        RankedTensorType::get({static_cast<int64_t>(bytes)}, b.getI8Type());
    b.setInsertionPoint(entry);
    auto decl = func::FuncOp::create(
        b, loc, name, FunctionType::get(context, {tensor}, {tensor}));
    decl.setPrivate();
    kernel::set<kernel::IsKernel>(decl, b.getUnitAttr());
    kernel::set<kernel::Kind>(decl, b.getStringAttr("codegen"));
    kernel::set<kernel::Nodes>(decl, b.getArrayAttr({}));
    kernel::set<kernel::Reason>(
        decl, b.getStringAttr("copies a model input that views read "
                              "(input buffers are bound per run)"));
    auto memref = MemRefType::get({static_cast<int64_t>(bytes)}, b.getI8Type());
    b.setInsertionPointToEnd(kernels.getBody());
    auto body = func::FuncOp::create(
        b, loc, name, FunctionType::get(context, {memref, memref}, {}));
    Block *block = body.addEntryBlock();
    b.setInsertionPointToStart(block);
    linalg::CopyOp::create(b, loc, block->getArgument(0),
                           block->getArgument(1));
    func::ReturnOp::create(b, loc);
  }
  return success();
}

struct GpuMapPass : PassWrapper<GpuMapPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GpuMapPass)
  GpuMapPass() = default;
  GpuMapPass(const GpuMapPass &other) : PassWrapper(other) {}
  Option<int64_t> dynamicSharedLimit{
      *this, "dynamic-shared-limit",
      llvm::cl::desc("Most bytes of dynamic shared memory a block may use "
                     "(0: static shared memory only); the default suits "
                     "sm_90, see strata::gpuDynamicSharedLimit"),
      llvm::cl::init(strata::gpuDynamicSharedLimit("sm_90"))};
  Option<int64_t> blockSharedLimit{
      *this, "block-shared-limit",
      llvm::cl::desc("Most bytes of shared memory a block may opt in to, "
                     "for kernels without static shared memory (the GEMM "
                     "kernel); the default suits sm_90, see "
                     "strata::gpuBlockSharedLimit"),
      llvm::cl::init(strata::gpuBlockSharedLimit("sm_90"))};
  Option<bool> wgmma{*this, "wgmma",
                     llvm::cl::desc("Generate Hopper's warpgroup products "
                                    "(wgmma; sm_90a only) in the kernels "
                                    "that have tensor-core forms"),
                     llvm::cl::init(false)};
  Option<bool> gridDependency{
      *this, "grid-dependency",
      llvm::cl::desc("Begin every kernel by waiting for the grids before it "
                     "(griddepcontrol.wait; sm_90 on), then letting the "
                     "next kernel's blocks start, so that the runtime may "
                     "launch it with programmatic dependent launch "
                     "(waits_for_grids in its strata.launch)"),
      llvm::cl::init(false)};
  Option<int64_t> packRows{
      *this, "pack-rows",
      llvm::cl::desc("Row blocks per CUDA block for short rows kept in "
                     "registers, one warp each (1 keeps a block per row "
                     "block; a knob for measuring); 0: the mapping's choice"),
      llvm::cl::init(0)};
  StringRef getArgument() const final { return "strata-gpu-map"; }
  StringRef getDescription() const final {
    return "Map each bufferized kernel onto a grid of thread blocks "
           "(records strata.gpu_* on its declaration)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, arith::ArithDialect, gpu::GPUDialect,
                    linalg::LinalgDialect, LLVM::LLVMDialect,
                    memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect,
                    vector::VectorDialect, kernel::KernelDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleOp kernels = strata::getKernelsModule(module);
    if (!kernels) {
      module.emitError("strata-gpu-map: the module has no `module @kernels` "
                       "(run the kernel stage first)");
      return signalPassFailure();
    }
    if (failed(addCopyKernels(module, kernels)))
      return signalPassFailure();
    for (auto decl : llvm::to_vector(module.getOps<func::FuncOp>())) {
      auto kind = kernel::get<kernel::Kind>(decl);
      if (!kind || kind.getValue() != "codegen")
        continue;
      if (kernel::has<kernel::Launch>(decl))
        continue;
      auto body = kernels.lookupSymbol<func::FuncOp>(decl.getSymName());
      if (!body || body.isDeclaration()) {
        decl.emitError("kernel ")
            << decl.getSymName() << " has no body in module @kernels";
        return signalPassFailure();
      }
      if (auto kind = kernel::get<kernel::Template>(decl)) {
        if (failed(kind.getValue() == "gemm"
                       ? strata::emitGemm(decl, body, kernels, blockSharedLimit,
                                          wgmma)
                       : strata::emitFlashAttention(decl, body, kernels,
                                                    dynamicSharedLimit, wgmma)))
          return signalPassFailure();
      } else if (failed(KernelMapper(decl, body, kernels, dynamicSharedLimit,
                                     packRows)
                            .run())) {
        return signalPassFailure();
      }
      if (gridDependency)
        waitForEarlierGrids(decl, body);
    }
  }

  /// Programmatic dependent launch (docs/gpu.md, "Launches that overlap"):
  /// launched with it, a kernel's blocks may start while the kernel before
  /// it on the stream is still running; `griddepcontrol.wait` blocks until
  /// every grid it depends on has completed and its writes are visible.
  /// It comes first, before any load or store, so nothing the kernel does
  /// can see or disturb the earlier kernel's buffers (the arena reuses
  /// them), and each kernel finishes only after the one before it did,
  /// which makes the order transitive along the stream. Then
  /// `griddepcontrol.launch_dependents` lets the next kernel's blocks be
  /// scheduled once all of this grid's blocks have passed their wait: into
  /// the slots this grid's last wave leaves free, instead of after its
  /// last block has ended and the launch has gone through the front end.
  /// Launched without it (older runtimes, STRATA_CUDA_PDL=0), the wait
  /// returns at once and the trigger does nothing.
  static void waitForEarlierGrids(func::FuncOp decl, func::FuncOp body) {
    OpBuilder b(body.getContext());
    b.setInsertionPointToStart(&body.front());
    NVVM::GriddepcontrolOp::create(b, body.getLoc(),
                                   NVVM::GridDepActionKind::wait);
    NVVM::GriddepcontrolOp::create(b, body.getLoc(),
                                   NVVM::GridDepActionKind::launch_dependents);
    kernel::set<kernel::Launch>(
        decl, kernel::get<kernel::Launch>(decl).withWaitForGrids());
  }
};

} // namespace

Value strata::combinePairwise(SmallVector<Value> values,
                              function_ref<Value(Value, Value)> combine) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(combine(values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

namespace {
/// Shared memory a block of the GPU `arch` may opt in to (CUDA's "maximum
/// shared memory per block (opt-in)"), and what strata-gpu-map gives a
/// kernel's dynamic shared memory in general: that less room for static
/// shared memory and the driver's own. Zeros for GPUs it does not know
/// (static shared memory only).
struct SharedLimits {
  int64_t block = 0, dynamic = 0;
};
SharedLimits sharedLimits(llvm::StringRef arch) {
  // The family: sm_90a and sm_100f are sm_90 and sm_100.
  llvm::StringRef family = arch.take_while([](char c) { return c != 'a'; });
  family = family.take_while([](char c) { return c != 'f'; });
  if (family == "sm_90" || family == "sm_100" || family == "sm_103")
    return {227 * 1024, 200 * 1024};
  if (family == "sm_80" || family == "sm_87")
    return {163 * 1024, 144 * 1024};
  if (family == "sm_86" || family == "sm_89" || family == "sm_120" ||
      family == "sm_121")
    return {99 * 1024, 88 * 1024};
  return {};
}
} // namespace

int64_t strata::gpuBlockSharedLimit(llvm::StringRef arch) {
  return sharedLimits(arch).block;
}

int64_t strata::gpuDynamicSharedLimit(llvm::StringRef arch) {
  return sharedLimits(arch).dynamic;
}

bool strata::gpuHasWgmma(llvm::StringRef arch) { return arch == "sm_90a"; }

/// The NN of "sm_NN" (and of "sm_NNa"), or 0.
static unsigned smVersion(llvm::StringRef arch) {
  unsigned version = 0;
  if (!arch.consume_front("sm_") ||
      arch.take_while(llvm::isDigit).getAsInteger(10, version))
    return 0;
  return version;
}

bool strata::gpuHasGridDependency(llvm::StringRef arch) {
  return smVersion(arch) >= 90;
}

bool strata::gpuHasTensorCores(llvm::StringRef arch) {
  return smVersion(arch) >= 80;
}

bool strata::gpuHasWgmmaForms(ModuleOp module) {
  return llvm::any_of(module.getOps<func::FuncOp>(), [](func::FuncOp f) {
    return kernel::has<kernel::Template>(f);
  });
}

std::string strata::gpuCopyKernelName(uint64_t bytes) {
  return "strata_copy_" + std::to_string(bytes);
}

namespace strata {
void registerGpuMapPass() { PassRegistration<GpuMapPass>(); }
} // namespace strata
