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
//   strata.gpu_mapping    "elementwise" | "block_ops" | "block_serial"
//   strata.gpu_grid       [x, y, z] blocks
//   strata.gpu_block      [x, y, z] threads per block
//   strata.gpu_shared_bytes  dynamic shared memory (0: the kernels only use
//                         static shared memory, counted in
//                         strata.gpu_static_shared_bytes)
//   strata.gpu_vector     elements per thread access (elementwise)
//   strata.gpu_reason     the choice in words, for people and `explain`
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
//    give consecutive iterations to consecutive threads (coalesced).
//    Reductions whose combiner is a known associative op (sum, product,
//    max, min, bitwise) and whose reduced extent is at least a warp are
//    computed cooperatively: one warp per output point (warp shuffles), or
//    the whole block per point (warp shuffles, then shared memory across
//    warps) when there are fewer points than warps. Other reductions give
//    each thread whole output points. Temporaries live in shared memory
//    when they fit (32 KiB), else in a global scratch buffer with one slice
//    per block. Ops that are not linalg and write memory run on thread 0.
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

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>
#include <numeric>
#include <set>

using namespace mlir;

namespace {

constexpr int64_t kMaxThreads = 256;
constexpr int64_t kWarpSize = 32;
/// Temporaries of one block up to this many bytes live in shared memory.
constexpr int64_t kSharedScratchLimit = 32 * 1024;
/// Inputs several ops read are staged in shared memory while the block's
/// shared memory stays under this (the static limit is 48 KiB; the rest is
/// left for reductions).
constexpr int64_t kSharedStageLimit = 40 * 1024;
/// Bytes one thread moves per vector access.
constexpr int64_t kVectorBytes = 16;

int64_t product(ArrayRef<int64_t> values) {
  int64_t p = 1;
  for (int64_t v : values)
    p *= v;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

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

/// What the pass decided for one kernel.
struct Plan {
  std::string mapping;
  int64_t threads = 1;
  /// Blocks per row block (elementwise).
  int64_t chunks = 1;
  int64_t vector = 1;
  std::vector<std::string> notes;
  SmallVector<std::pair<Operation *, Role>> ops;
  llvm::DenseMap<Operation *, Strategy> strategies;
};

/// Rewrites one kernel body for its plan.
class KernelMapper {
public:
  KernelMapper(func::FuncOp decl, func::FuncOp body, ModuleOp kernels)
      : decl(decl), body(body), kernels(kernels), loc(body.getLoc()),
        b(body.getContext()) {}

  LogicalResult run();

private:
  LogicalResult analyze();
  void emitEntry();
  void emitScratch();
  void emitElementwise(linalg::LinalgOp op);
  void emitDistributed(linalg::LinalgOp op, Strategy strategy);
  void emitThread0(Operation *op);
  void recordDecision();

  // Code for one iteration point.
  IRMapping emitPayload(linalg::LinalgOp op, ArrayRef<Value> ivs,
                        ArrayRef<Value> accs, Operation *skip);
  SmallVector<Value> emitSequentialPoint(linalg::LinalgOp op,
                                         SmallVector<Value> ivs);
  Value combine(const Combiner &c, Value acc, Value x);
  Value warpReduce(const Combiner &c, Value v);
  Value shuffleXor(Value v, int32_t offset);
  Value reductionBuffer(Type type);

  SmallVector<Value> applyMap(AffineMap map, ArrayRef<Value> ivs);
  SmallVector<Value> delinearize(Value linear, ArrayRef<int64_t> extents);
  int64_t baseAlignment(Value memref);

  func::FuncOp decl, body;
  ModuleOp kernels;
  Location loc;
  OpBuilder b;
  Plan plan;
  int64_t extent = 1;
  SmallVector<int64_t> strides;
  Value tid, bid, row;
  /// Byte alignment of the views made at entry.
  llvm::DenseMap<Value, int64_t> rootAlignment;
  /// Each parameter's typed view, and its untyped buffer and shift.
  struct Parameter {
    Value view, raw, shift;
    int64_t bytes;
    bool input;
  };
  SmallVector<Parameter> parameters;
  int64_t stagedBytes = 0;
  int64_t sharedBytes = 0, globalScratchBytes = 0, reductionBytes = 0;
  llvm::DenseMap<Type, Value> reductionBuffers;
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
  if (distributed == 1 && scratch == 0 && thread0 == 0) {
    for (auto [op, role] : plan.ops) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (role != Role::Distribute || !linalgOp.isAllParallelLoops())
        continue;
      plan.mapping = "elementwise";
      return success();
    }
  }
  // block_ops: the block's size from the largest op.
  plan.mapping = "block_ops";
  int64_t work = 1;
  for (auto [op, role] : plan.ops) {
    if (role != Role::Distribute)
      continue;
    auto linalgOp = cast<linalg::LinalgOp>(op);
    SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
    int64_t points = 1, reduced = 1;
    for (auto [range, kind] :
         llvm::zip(ranges, linalgOp.getIteratorTypesArray()))
      (isParallel(kind) ? points : reduced) *= range;
    int64_t opWork = points;
    if (matchCombiner(linalgOp) && reduced >= kWarpSize)
      opWork = points * std::min(reduced, kMaxThreads);
    work = std::max(work, opWork);
  }
  plan.threads = std::clamp(roundUp(work, kWarpSize), kWarpSize, kMaxThreads);
  int64_t warps = plan.threads / kWarpSize;
  int counts[3] = {0, 0, 0};
  for (auto [op, role] : plan.ops) {
    if (role != Role::Distribute)
      continue;
    auto linalgOp = cast<linalg::LinalgOp>(op);
    int64_t points = 1, reduced = 1;
    for (auto [range, kind] : llvm::zip(linalgOp.getStaticLoopRanges(),
                                        linalgOp.getIteratorTypesArray()))
      (isParallel(kind) ? points : reduced) *= range;
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
  if (thread0)
    plan.notes.push_back(std::to_string(thread0) +
                         " op(s) that are not linalg run on thread 0");
  return success();
}

void KernelMapper::emitEntry() {
  Block &entry = body.getBody().front();
  b.setInsertionPointToStart(&entry);
  tid = plan.threads > 1
            ? gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x).getResult()
            : constIndex(b, loc, 0);
  bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  row = constIndex(b, loc, 0);
  if (extent > 1)
    row = plan.chunks > 1 ? arith::DivUIOp::create(
                                b, loc, bid, constIndex(b, loc, plan.chunks))
                                .getResult()
                          : bid;
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
    // Buffers are 64-byte aligned; a row block starts at a multiple of its
    // stride.
    rootAlignment[view] =
        stride && extent > 1 ? std::gcd<int64_t>(64, stride) : 64;
    types.push_back(raw);
  }
  body.setType(FunctionType::get(body.getContext(), types, {}));
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

/// Shared memory (one slice per block) holds the body's temporaries when
/// they fit, and then, for block_ops, the inputs that several ops read: a
/// block copies them once with 16-byte accesses where it can, so that a
/// softmax or a norm reads its rows from device memory once. Temporaries
/// that do not fit live in a global scratch buffer, one slice per block.
void KernelMapper::emitScratch() {
  SmallVector<Operation *> allocs;
  int64_t temporaries = 0;
  SmallVector<int64_t> offsets;
  for (auto [op, role] : plan.ops)
    if (role == Role::Scratch) {
      allocs.push_back(op);
      offsets.push_back(temporaries);
      temporaries += roundUp(
          std::max<int64_t>(
              memrefBytes(cast<MemRefType>(op->getResult(0).getType())), 1),
          64);
    }
  bool sharedTemporaries = temporaries <= kSharedScratchLimit;
  int64_t sharedTotal = sharedTemporaries ? temporaries : 0;
  // Inputs read by two ops or more.
  SmallVector<std::pair<Parameter *, int64_t>> staged;
  if (plan.mapping == "block_ops") {
    llvm::SmallPtrSet<Operation *, 16> distributed;
    for (auto [op, role] : plan.ops)
      if (role == Role::Distribute)
        distributed.insert(op);
    for (Parameter &p : parameters) {
      llvm::SmallPtrSet<Operation *, 4> readers;
      collectReaders(p.view, distributed, readers);
      int64_t bytes = roundUp(std::max<int64_t>(p.bytes, 1), 64);
      if (!p.input || readers.size() < 2 ||
          sharedTotal + bytes > kSharedStageLimit)
        continue;
      staged.push_back({&p, sharedTotal});
      sharedTotal += bytes;
      stagedBytes += p.bytes;
    }
  }
  if (allocs.empty() && staged.empty())
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
  if (sharedTotal) {
    shared = makeGlobal(true, sharedTotal);
    sharedBytes = sharedTotal;
  }

  // The staged inputs: copied by the block's threads, then read from
  // shared memory by every op.
  for (auto [p, offset] : staged) {
    int64_t vector = p->bytes % kVectorBytes == 0 &&
                             baseAlignment(p->view) % kVectorBytes == 0
                         ? kVectorBytes
                         : 1;
    auto bytesType = MemRefType::get({p->bytes}, b.getI8Type());
    Value source = memref::ViewOp::create(b, loc, bytesType, p->raw, p->shift,
                                          ValueRange{});
    Value start = constIndex(b, loc, offset);
    auto loop =
        scf::ForOp::create(b, loc, tid, constIndex(b, loc, p->bytes / vector),
                           constIndex(b, loc, plan.threads));
    loop->setAttr("strata.gpu_distribute", b.getStringAttr("stage"));
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      Value at = arith::MulIOp::create(b, loc, loop.getInductionVar(),
                                       constIndex(b, loc, vector));
      Value to = arith::AddIOp::create(b, loc, at, start);
      if (vector > 1) {
        auto type = VectorType::get({vector}, b.getI8Type());
        Value v = vector::LoadOp::create(b, loc, type, source, ValueRange{at},
                                         /*nontemporal=*/false,
                                         llvm::MaybeAlign(vector));
        vector::StoreOp::create(b, loc, v, shared, ValueRange{to},
                                /*nontemporal=*/false,
                                llvm::MaybeAlign(vector));
      } else {
        Value v = memref::LoadOp::create(b, loc, source, ValueRange{at});
        memref::StoreOp::create(b, loc, v, shared, ValueRange{to});
      }
    }
    auto view = memref::ViewOp::create(b, loc, p->view.getType(), shared, start,
                                       ValueRange{});
    rootAlignment[view] = 64;
    p->view.replaceAllUsesWith(view);
  }
  if (!staged.empty())
    gpu::BarrierOp::create(b, loc);

  if (allocs.empty())
    return;
  Value base = sharedTemporaries ? shared : Value();
  Value blockBase = constIndex(b, loc, 0);
  if (!sharedTemporaries) {
    base = makeGlobal(false, temporaries * extent * plan.chunks);
    globalScratchBytes = temporaries * extent * plan.chunks;
    blockBase =
        arith::MulIOp::create(b, loc, bid, constIndex(b, loc, temporaries));
  }
  for (auto [op, offset] : llvm::zip(allocs, offsets)) {
    b.setInsertionPoint(op);
    Value shift =
        arith::AddIOp::create(b, loc, blockBase, constIndex(b, loc, offset));
    auto view = memref::ViewOp::create(b, loc, op->getResult(0).getType(), base,
                                       shift, ValueRange{});
    rootAlignment[view] = 64;
    // Deallocations of a temporary go with it.
    for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    op->getResult(0).replaceAllUsesWith(view);
    op->erase();
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
                                                     SmallVector<Value> ivs) {
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
  // The outputs are carried through the reduction loops.
  SmallVector<Value> accs;
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
  if (strategy == Strategy::Threads) {
    auto loop = scf::ForOp::create(b, loc, tid, constIndex(b, loc, points),
                                   constIndex(b, loc, plan.threads));
    loop->setAttr("strata.gpu_distribute", b.getStringAttr(tag));
    b.setInsertionPointToStart(loop.getBody());
    setParallel(loop.getInductionVar());
    store(emitSequentialPoint(op, ivs));
  } else {
    Combiner c = *matchCombiner(op);
    Type accType = c.acc.getType();
    Value lane =
        arith::RemUIOp::create(b, loc, tid, constIndex(b, loc, kWarpSize));
    Value warp =
        arith::DivUIOp::create(b, loc, tid, constIndex(b, loc, kWarpSize));
    Value identity = arith::ConstantOp::create(b, loc, c.identity);
    Value zero = constIndex(b, loc, 0);
    int64_t warps = plan.threads / kWarpSize;
    // The reduced elements from `start` in steps of `step`, combined.
    auto partial = [&](Value start, int64_t step) {
      auto loop =
          scf::ForOp::create(b, loc, start, constIndex(b, loc, reducedPoints),
                             constIndex(b, loc, step), ValueRange{identity});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      for (auto [d, iv] : llvm::zip(
               reduced, delinearize(loop.getInductionVar(), reducedRanges)))
        ivs[d] = iv;
      IRMapping mapping = emitPayload(op, ivs, {}, c.op);
      Value next =
          combine(c, loop.getRegionIterArg(0), mapping.lookupOrDefault(c.x));
      scf::YieldOp::create(b, loc, next);
      return loop.getResult(0);
    };
    auto storeCombined = [&](Value total) {
      OpOperand &init = op.getDpsInitsMutable()[0];
      SmallVector<Value> index =
          applyMap(op.getMatchingIndexingMap(&init), ivs);
      Value old = memref::LoadOp::create(b, loc, init.get(), index);
      memref::StoreOp::create(b, loc, combine(c, old, total), init.get(),
                              index);
    };
    auto ifThen = [&](Value cond, function_ref<void()> fn) {
      auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      fn();
    };
    auto isZero = [&](Value v) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, zero);
    };
    if (strategy == Strategy::Warps) {
      tag = "warps";
      auto loop = scf::ForOp::create(b, loc, warp, constIndex(b, loc, points),
                                     constIndex(b, loc, warps));
      loop->setAttr("strata.gpu_distribute", b.getStringAttr(tag));
      b.setInsertionPointToStart(loop.getBody());
      setParallel(loop.getInductionVar());
      Value total = warpReduce(c, partial(lane, kWarpSize));
      ifThen(isZero(lane), [&] { storeCombined(total); });
    } else {
      tag = "block";
      Value buffer = reductionBuffer(accType);
      auto loop = scf::ForOp::create(b, loc, zero, constIndex(b, loc, points),
                                     constIndex(b, loc, 1));
      loop->setAttr("strata.gpu_distribute", b.getStringAttr(tag));
      b.setInsertionPointToStart(loop.getBody());
      setParallel(loop.getInductionVar());
      Value total = warpReduce(c, partial(tid, plan.threads));
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
              memref::LoadOp::create(b, loc, buffer, ValueRange{lane})
                  .getResult());
          b.setInsertionPointToStart(&pick.getElseRegion().front());
          scf::YieldOp::create(b, loc, identity);
        }
        Value blockTotal = warpReduce(c, pick.getResult(0));
        ifThen(isZero(lane), [&] { storeCombined(blockTotal); });
      });
      // The buffer is reused by the next point.
      gpu::BarrierOp::create(b, loc);
    }
  }
  // The next op may read what other threads wrote.
  b.setInsertionPointAfter(op);
  gpu::BarrierOp::create(b, loc);
  op->erase();
}

void KernelMapper::emitElementwise(linalg::LinalgOp op) {
  b.setInsertionPoint(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t total = product(ranges);
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
  guard->setAttr("strata.gpu_distribute", b.getStringAttr("elementwise"));
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  SmallVector<Value> ivs = delinearize(linear, ranges);
  unsigned last = ranges.size() - 1;

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

  // Per lane: the iteration point `last + lane`.
  SmallVector<SmallVector<Value>> laneIvs(vector);
  auto ivsOf = [&](int64_t lane) -> ArrayRef<Value> {
    if (laneIvs[lane].empty()) {
      laneIvs[lane] = ivs;
      if (lane)
        laneIvs[lane][last] =
            arith::AddIOp::create(b, loc, ivs[last], constIndex(b, loc, lane));
    }
    return laneIvs[lane];
  };
  enum class Access { Vector, Broadcast, Gather };
  auto accessOf = [&](OpOperand &operand) {
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
        baseAlignment(operand.get()) % (bytes * vector) == 0;
    return contiguous ? Access::Vector : Access::Gather;
  };
  // Each used operand's value in every lane.
  SmallVector<std::pair<BlockArgument, SmallVector<Value>>> laneValues;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (arg.use_empty())
      continue;
    SmallVector<Value> values;
    if (!isa<MemRefType>(operand.get().getType())) {
      values.assign(vector, operand.get());
    } else {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      switch (accessOf(operand)) {
      case Access::Vector: {
        auto type = cast<MemRefType>(operand.get().getType());
        Value v = vector::LoadOp::create(
            b, loc, VectorType::get({vector}, type.getElementType()),
            operand.get(), applyMap(map, ivs), /*nontemporal=*/false,
            llvm::MaybeAlign(vector * elementBytes(type.getElementType())));
        for (int64_t l = 0; l < vector; ++l)
          values.push_back(vector::ExtractOp::create(b, loc, v, l));
        break;
      }
      case Access::Broadcast:
        values.assign(vector, memref::LoadOp::create(b, loc, operand.get(),
                                                     applyMap(map, ivs)));
        break;
      case Access::Gather:
        for (int64_t l = 0; l < vector; ++l)
          values.push_back(memref::LoadOp::create(b, loc, operand.get(),
                                                  applyMap(map, ivsOf(l))));
        break;
      }
    }
    laneValues.push_back({arg, std::move(values)});
  }
  Operation *yield = op.getBlock()->getTerminator();
  SmallVector<SmallVector<Value>> results(op.getNumDpsInits());
  for (int64_t l = 0; l < vector; ++l) {
    IRMapping mapping;
    for (auto &[arg, values] : laneValues)
      mapping.map(arg, values[l]);
    for (Operation &inner : op.getBlock()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), ivsOf(l)[index.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    for (auto [k, value] : llvm::enumerate(yield->getOperands()))
      results[k].push_back(mapping.lookupOrDefault(value));
  }
  for (auto [k, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    auto type = cast<MemRefType>(init.get().getType());
    if (accessOf(init) == Access::Vector) {
      Value v = vector::FromElementsOp::create(
          b, loc, VectorType::get({vector}, type.getElementType()), results[k]);
      vector::StoreOp::create(
          b, loc, v, init.get(), applyMap(map, ivs), /*nontemporal=*/false,
          llvm::MaybeAlign(vector * elementBytes(type.getElementType())));
    } else {
      for (int64_t l = 0; l < vector; ++l)
        memref::StoreOp::create(b, loc, results[k][l], init.get(),
                                applyMap(map, ivsOf(l)));
    }
  }
  op->erase();
}

void KernelMapper::emitThread0(Operation *op) {
  b.setInsertionPoint(op);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                      constIndex(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  ifOp->setAttr("strata.gpu_distribute", b.getStringAttr("thread0"));
  op->moveBefore(ifOp.getThenRegion().front().getTerminator());
  b.setInsertionPointAfter(ifOp);
  gpu::BarrierOp::create(b, loc);
}

LogicalResult KernelMapper::run() {
  if (auto rows = decl->getAttrOfType<IntegerAttr>("strata.parallel_rows"))
    if (auto block = decl->getAttrOfType<IntegerAttr>("strata.parallel_block"))
      if (block.getInt() > 0)
        extent = rows.getInt() / block.getInt();
  if (auto s = decl->getAttrOfType<DenseI64ArrayAttr>("strata.block_strides"))
    strides.assign(s.asArrayRef().begin(), s.asArrayRef().end());
  if (extent > 1 && strides.size() != body.getNumArguments())
    return decl.emitError("internal error: kernel ")
           << decl.getSymName() << " has " << strides.size()
           << " block strides for " << body.getNumArguments() << " buffers";
  if (failed(analyze()))
    return failure();

  linalg::LinalgOp elementwise;
  if (plan.mapping == "elementwise") {
    for (auto [op, role] : plan.ops)
      if (role == Role::Distribute)
        elementwise = cast<linalg::LinalgOp>(op);
    // The widest element among operands indexed along the innermost loop
    // decides how many elements make a 16-byte access.
    SmallVector<int64_t> ranges = elementwise.getStaticLoopRanges();
    int64_t total = product(ranges);
    int64_t widest = 0;
    if (!ranges.empty())
      for (OpOperand &operand : elementwise->getOpOperands()) {
        auto type = dyn_cast<MemRefType>(operand.get().getType());
        if (type &&
            elementwise.getMatchingIndexingMap(&operand).isFunctionOfDim(
                ranges.size() - 1))
          widest = std::max(widest, elementBytes(type.getElementType()));
      }
    int64_t vector = widest ? kVectorBytes / widest : 1;
    if (vector > 1 && ranges.back() % vector != 0)
      vector = 1;
    plan.vector = vector;
    int64_t threadsNeeded = std::max<int64_t>(1, ceilDiv(total, vector));
    plan.threads =
        std::clamp(roundUp(threadsNeeded, kWarpSize), kWarpSize, kMaxThreads);
    plan.chunks = std::max<int64_t>(1, ceilDiv(threadsNeeded, plan.threads));
  }
  int64_t blocks = extent * plan.chunks;
  if (blocks > std::numeric_limits<int32_t>::max())
    return decl.emitError("kernel ")
           << decl.getSymName() << " needs " << blocks
           << " thread blocks, more than a CUDA grid's x dimension holds";

  emitEntry();
  emitScratch();
  if (plan.mapping == "elementwise") {
    emitElementwise(elementwise);
  } else if (plan.mapping == "block_ops") {
    for (auto [op, role] : plan.ops) {
      if (role == Role::Distribute)
        emitDistributed(cast<linalg::LinalgOp>(op), plan.strategies[op]);
      else if (role == Role::Thread0)
        emitThread0(op);
    }
  }
  recordDecision();
  return success();
}

void KernelMapper::recordDecision() {
  MLIRContext *context = decl.getContext();
  int64_t blocks = extent * plan.chunks;
  decl->setAttr("strata.gpu_mapping", StringAttr::get(context, plan.mapping));
  decl->setAttr("strata.gpu_grid", b.getDenseI64ArrayAttr({blocks, 1, 1}));
  decl->setAttr("strata.gpu_block",
                b.getDenseI64ArrayAttr({plan.threads, 1, 1}));
  decl->setAttr("strata.gpu_shared_bytes", b.getI64IntegerAttr(0));
  decl->setAttr("strata.gpu_static_shared_bytes",
                b.getI64IntegerAttr(sharedBytes + reductionBytes));
  if (globalScratchBytes)
    decl->setAttr("strata.gpu_scratch_bytes",
                  b.getI64IntegerAttr(globalScratchBytes));
  if (plan.mapping == "elementwise")
    decl->setAttr("strata.gpu_vector", b.getI64IntegerAttr(plan.vector));
  std::string reason;
  std::string blocksText = extent > 1 ? std::to_string(extent) + " row blocks"
                                      : std::string("the whole kernel");
  if (plan.mapping == "elementwise")
    reason = "one all-parallel op: " + std::to_string(plan.chunks) +
             " block(s) of " + std::to_string(plan.threads) + " threads per " +
             (extent > 1 ? "row block" : "kernel") + ", " +
             std::to_string(plan.vector) + " element(s) per thread" +
             (plan.vector > 1 ? " in 16-byte accesses" : "");
  else if (plan.mapping == "block_ops")
    reason = "one block of " + std::to_string(plan.threads) + " threads for " +
             blocksText + ", its ops one after another over the threads";
  else
    reason = "one thread for " + blocksText;
  for (const std::string &note : plan.notes)
    reason += "; " + note;
  if (stagedBytes)
    reason += "; inputs read by several ops staged in shared memory (" +
              std::to_string(stagedBytes) + " bytes)";
  if (sharedBytes > stagedBytes)
    reason += "; temporaries in shared memory";
  if (globalScratchBytes)
    reason += "; temporaries in a " + std::to_string(globalScratchBytes) +
              "-byte global scratch buffer";
  decl->setAttr("strata.gpu_reason", StringAttr::get(context, reason));
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
    if (!dtype)
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
    decl->setAttr("strata.kernel", b.getUnitAttr());
    decl->setAttr("strata.kind", b.getStringAttr("codegen"));
    decl->setAttr("strata.nodes", b.getArrayAttr({}));
    decl->setAttr("strata.reason",
                  b.getStringAttr("copies a model input that views read "
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
  StringRef getArgument() const final { return "strata-gpu-map"; }
  StringRef getDescription() const final {
    return "Map each bufferized kernel onto a grid of thread blocks "
           "(records strata.gpu_* on its declaration)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, arith::ArithDialect, gpu::GPUDialect,
                    linalg::LinalgDialect, memref::MemRefDialect,
                    scf::SCFDialect, vector::VectorDialect>();
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
      auto kind = decl->getAttrOfType<StringAttr>("strata.kind");
      if (!kind || kind.getValue() != "codegen")
        continue;
      if (decl->hasAttr("strata.gpu_mapping"))
        continue;
      auto body = kernels.lookupSymbol<func::FuncOp>(decl.getSymName());
      if (!body || body.isDeclaration()) {
        decl.emitError("kernel ")
            << decl.getSymName() << " has no body in module @kernels";
        return signalPassFailure();
      }
      if (failed(KernelMapper(decl, body, kernels).run()))
        return signalPassFailure();
    }
  }
};

} // namespace

std::string strata::gpuCopyKernelName(uint64_t bytes) {
  return "strata_copy_" + std::to_string(bytes);
}

namespace strata {
void registerGpuMapPass() { PassRegistration<GpuMapPass>(); }
} // namespace strata
