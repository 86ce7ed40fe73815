//===- GpuMapper.h - the gpu stage's kernel mapper ---------*- C++ -*-===//
//
// KernelMapper, which strata-gpu-map runs on each generated kernel body
// (GpuMapping.cpp: the pass, the analysis and the plan; GpuMappingEmit.cpp:
// the code each plan emits), with the limits and small helpers both halves
// share. Private to lib/Compiler; docs/gpu.md describes the mapping.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_COMPILER_GPUMAPPER_H
#define STRATA_LIB_COMPILER_GPUMAPPER_H

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

namespace strata::gpumap {

using namespace mlir;
namespace kernel = strata::kernel;

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
/// A reduction with one thread per output point takes several consecutive
/// points per thread (pointLanes) only while the grid keeps at least this
/// many threads: a block of 256 for each SM of an H100 or H200 (132), so
/// that no SM idles on a small kernel.
constexpr int64_t kPointLaneThreads = 32768;
/// Rows of lanes (pointRows, strata-gpu-map{point-rows=N}) only while the
/// grid keeps this many threads: every SM of an H100 or H200 full (2048
/// threads each on 132). A thread that computes more points hides its
/// loads' latency worse, so rows can pay only where the grid still fills
/// the GPU.
constexpr int64_t kPointRowThreads = 132 * 2048;
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

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

/// The alignment a vector access of `vector` elements of `bytes` each needs:
/// its own size up to 16 bytes (larger ones are moved in 16-byte pieces).
inline int64_t vectorAlignment(int64_t bytes, int64_t vector) {
  return std::min(bytes * vector, kVectorBytes);
}

/// Bytes per element in a buffer (i1 takes a byte, as in the runtime).
inline int64_t elementBytes(Type type) {
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
  return 0;
}

inline int64_t memrefBytes(MemRefType type) {
  return type.getNumElements() * elementBytes(type.getElementType());
}

inline bool isParallel(utils::IteratorType kind) {
  return kind == utils::IteratorType::parallel;
}

/// A linalg op's parallel iteration points and reduced elements per point
/// (the products of its parallel and of its reduction loops' extents).
inline std::pair<int64_t, int64_t> pointsAndReduced(linalg::LinalgOp op) {
  int64_t points = 1, reduced = 1;
  for (auto [range, kind] :
       llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
    (isParallel(kind) ? points : reduced) *= range;
  return {points, reduced};
}

inline Value constIndex(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// A static memref with the identity layout in the default memory space:
/// what bufferization gives kernel arguments and temporaries.
inline bool isPlainMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getLayout().isIdentity() &&
         !memref.getMemorySpace() && elementBytes(memref.getElementType()) > 0;
}

inline bool isScratchAlloc(Operation *op) {
  if (!isa<memref::AllocOp, memref::AllocaOp>(op))
    return false;
  return op->getNumOperands() == 0 && isPlainMemRef(op->getResult(0).getType());
}

/// Whether `op` (with what it contains) may write or free memory, as far as
/// its interfaces say (unknown effects count as writes).
inline bool writesMemory(Operation *op) {
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
inline bool isDistributable(linalg::LinalgOp op) {
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

inline std::optional<Combiner> matchCombiner(linalg::LinalgOp op) {
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

/// Values given to each lane for an operand, instead of reading it.
using LaneValues = llvm::SmallDenseMap<Value, SmallVector<Value>, 2>;

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
  /// elementwise over a reduction's points (`fill`): each thread's lanes
  /// repeated at `rows` consecutive indices of the parallel loop `rowDim`
  /// (pointRows), so that an operand that loop does not index (a
  /// convolution's weight) is read once for all of them.
  int64_t rows = 1;
  unsigned rowDim = 0;
  /// elementwise over the output points of one reduction: the fill of its
  /// accumulator, which each thread's running value starts from instead
  /// (null for an all-parallel op).
  linalg::FillOp fill;
  /// With `fill`: an all-parallel op that reads the reduction's result at
  /// each output point (a cast back from an f32 accumulator) and writes the
  /// kernel's output, computed by the same thread after its reduction; the
  /// temporary between them (`epilogueTemp`) is never written.
  linalg::LinalgOp epilogue;
  Operation *epilogueTemp = nullptr;
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
               int64_t dynamicSharedLimit, int64_t packRows,
               int64_t maxPointRows)
      : decl(decl), body(body), kernels(kernels), loc(body.getLoc()),
        b(body.getContext()), dynamicSharedLimit(dynamicSharedLimit),
        packRows(packRows), maxPointRows(maxPointRows) {}

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
  /// A buffer of the row that planRegisters may keep in registers.
  struct RowBuffer {
    Value value;
    Operation *alloc = nullptr;
    int64_t arg = -1;
    Operation *finalWriter = nullptr;
    bool writeThrough = false;
    int64_t registers = 0;
    // Positions in the row's ops of the first op that defines its values
    // and the last that reads them.
    int64_t start = -1, end = -1;
  };
  SmallVector<RowBuffer>
  rowBuffers(MutableArrayRef<linalg::LinalgOp> ordered,
             const llvm::SmallPtrSet<Operation *, 8> &ops, int64_t row);
  void chooseRowBlock(ArrayRef<linalg::LinalgOp> ordered,
                      ArrayRef<RowBuffer> buffers,
                      llvm::SmallPtrSet<Operation *, 8> ops, int64_t row);
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
  SmallVector<Value> emitReducedLoops(
      linalg::LinalgOp op, SmallVector<Value> ivs, ArrayRef<Value> accs,
      function_ref<SmallVector<Value>(ArrayRef<Value>, ValueRange)> body);
  void emitPointReduction(linalg::LinalgOp op, Value linear);
  bool pointPerThread(linalg::LinalgOp fill, linalg::LinalgOp op);
  int64_t pointLanes(linalg::LinalgOp op);
  std::pair<int64_t, unsigned> pointRows(linalg::LinalgOp op, int64_t vector);
  bool pointEpilogue(linalg::LinalgOp op, linalg::LinalgOp epilogue,
                     Operation *temp);
  Value combine(const Combiner &c, Value acc, Value x);
  Value warpReduce(const Combiner &c, Value v);
  Value shuffleXor(Value v, int32_t offset);
  Value reductionBuffer(Type type);

  // Vector accesses along the innermost loop.
  int64_t innermostVector(linalg::LinalgOp op, bool narrowest = false,
                          bool divisor = false);
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
                                   int64_t vector, Operation *skip,
                                   const LaneValues *given = nullptr);
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
  /// The most rows of lanes a point reduction's thread computes (pointRows;
  /// 1: none).
  int64_t maxPointRows;
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

} // namespace strata::gpumap

#endif // STRATA_LIB_COMPILER_GPUMAPPER_H
