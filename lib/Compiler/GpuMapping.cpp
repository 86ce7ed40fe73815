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

#include "GpuMapper.h"
#include "Passes.h"

namespace strata {
#define GEN_PASS_DEF_GPUMAPPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::gpumap;
namespace kernel = strata::kernel;

namespace strata::gpumap {

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
  if (distributed == 3 && scratch <= 1 && thread0 == 0) {
    // The same with an elementwise op after the reduction (the cast of an
    // f32 accumulator back to f16 or bf16, through a temporary; a mean's
    // division, in place on the output): each thread finishes its point.
    SmallVector<linalg::LinalgOp, 3> ops;
    Operation *temp = nullptr;
    for (auto [op, role] : plan.ops) {
      if (role == Role::Distribute)
        ops.push_back(cast<linalg::LinalgOp>(op));
      if (role == Role::Scratch)
        temp = op;
    }
    if (pointPerThread(ops[0], ops[1]) && pointEpilogue(ops[1], ops[2], temp)) {
      plan.mapping = "elementwise";
      plan.fill = cast<linalg::FillOp>(ops[0].getOperation());
      plan.epilogue = ops[2];
      plan.epilogueTemp = temp;
      for (auto &[op, role] : plan.ops)
        if (temp && op == temp)
          role = Role::Uniform; // erased once the epilogue has run
      plan.notes.push_back("the reduction's result finished by one "
                           "elementwise op in the same thread");
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

/// How many consecutive output points of the reduction `op` one thread
/// computes under pointPerThread: where the innermost loop is parallel (a
/// depthwise convolution's channels), the points along it share everything
/// the reduced loops compute but the element itself (the window's input
/// position, its padding test, the loop), so a thread takes up to 16 bytes
/// of the narrowest operand along it (innermostVector) and the shared work
/// is done once for them, the inputs along it read as vectors. Where the
/// extent is shorter than that or not a multiple of it, the largest power of
/// two that divides it (a grouped convolution's 4 output channels per group
/// take 4 lanes). Halved while the grid would have fewer than
/// kPointLaneThreads threads: a small kernel keeps its parallelism.
int64_t KernelMapper::pointLanes(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  if (kinds.empty() || !isParallel(kinds.back()))
    return 1;
  int64_t vector = innermostVector(op, /*narrowest=*/true, /*divisor=*/true);
  int64_t points = pointsAndReduced(op).first;
  while (vector > 1 && points / vector < kPointLaneThreads)
    vector /= 2;
  return vector;
}

/// How many rows of lanes one thread of the reduction `op` computes under
/// pointPerThread, and along which loop: the thread's `vector` lanes
/// repeated at consecutive indices of a parallel loop other than the
/// innermost, so that every operand that loop does not index is read (and
/// converted) once for all rows. A grouped convolution's weight is read
/// once for as many images (its windows' index and padding test are shared
/// too); a generated product's B once for as many rows of A. Rows need such
/// an operand, read inside the reduced loops, and go along the outermost
/// loop whose extent they divide (the images, else the output points).
/// Up to strata-gpu-map{point-rows=N} (default 1: none), halved while the
/// grid would keep fewer than kPointRowThreads threads. Off by default: on
/// an H100 (bench/RESULTS.md, 2026-12-07 16:02 and 16:28) rows made
/// ResNeXt-50's stride-1 grouped sums up to a third faster and ConvNeXt-T's
/// first depthwise sums a tenth, but the stride-2 grouped sums of ResNeXt
/// and RegNetY up to 30% slower; no rule that keeps only the wins has been
/// measured yet. Returns {1, 0} for none.
std::pair<int64_t, unsigned> KernelMapper::pointRows(linalg::LinalgOp op,
                                                     int64_t vector) {
  SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (kinds.size() < 2 || ShapedType::isDynamicShape(ranges))
    return {1, 0};
  int64_t points = pointsAndReduced(op).first;
  unsigned last = kinds.size() - 1;
  // Whether some input read in the loop nest does not depend on loop `d`.
  auto shares = [&](unsigned d) {
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto type = dyn_cast<MemRefType>(input->get().getType());
      if (!type || type.getNumElements() <= 1 ||
          op.getMatchingBlockArgument(input).use_empty())
        continue;
      AffineMap map = op.getMatchingIndexingMap(input);
      if (!map.isFunctionOfDim(d))
        return true;
    }
    return false;
  };
  for (int64_t rows = maxPointRows; rows > 1; rows /= 2) {
    if (points / (vector * rows) < kPointRowThreads)
      continue;
    for (unsigned d = 0; d < last; ++d)
      if (isParallel(kinds[d]) && ranges[d] % rows == 0 && shares(d))
        return {rows, d};
  }
  return {1, 0};
}

/// Whether `epilogue` can run in the thread that computed each output point
/// of the reduction `op`: it is all-parallel over the reduction's output
/// points in their order, reads the reduction's result at its own point,
/// and writes only its outputs. The result is the temporary `temp`, which
/// nothing else but the fill uses, or, without one, the kernel's output,
/// which the epilogue then overwrites in place at the same point (a mean's
/// division after its sum; the kernel holds nothing else).
bool KernelMapper::pointEpilogue(linalg::LinalgOp op, linalg::LinalgOp epilogue,
                                 Operation *temp) {
  if (!epilogue.isAllParallelLoops() || op.getNumDpsInits() != 1 ||
      (temp && op.getDpsInitOperand(0)->get() != temp->getResult(0)))
    return false;
  bool inPlace = !temp;
  Value buffer = op.getDpsInitOperand(0)->get();
  // The reduction writes its parallel loops in order (the reduced ones
  // dropped), and the epilogue iterates over the same points.
  AffineMap init = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<int64_t> points;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned next = 0;
  for (AffineExpr expr : init.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || dim.getPosition() < next ||
        !isParallel(op.getIteratorTypesArray()[dim.getPosition()]))
      return false;
    next = dim.getPosition() + 1;
    points.push_back(ranges[dim.getPosition()]);
  }
  for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    if (isParallel(kind) &&
        !llvm::is_contained(init.getResults(),
                            getAffineDimExpr(i, init.getContext())))
      return false;
  if (epilogue.getStaticLoopRanges() != points)
    return false;
  int reads = 0;
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (input->get() == buffer) {
      if (!epilogue.getMatchingIndexingMap(input).isIdentity())
        return false;
      ++reads;
    }
  for (OpOperand &out : epilogue.getDpsInitsMutable())
    if ((out.get() == buffer &&
         (!inPlace || !epilogue.getMatchingIndexingMap(&out).isIdentity())) ||
        !epilogue.getMatchingBlockArgument(&out).use_empty())
      return false;
  // Nothing else reads the temporary.
  if (!inPlace)
    for (Operation *user : buffer.getUsers())
      if (user != op && user != epilogue && user != plan.fill &&
          !isa<linalg::FillOp>(user))
        return false;
  return reads == 1;
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

  SmallVector<RowBuffer> buffers = rowBuffers(ordered, ops, row);
  if (buffers.empty())
    return;
  chooseRowBlock(ordered, buffers, std::move(ops), row);
}

/// The buffers that only the row's ops touch, each in row order, that
/// stay in registers: an input read twice or more, a temporary, an output
/// written once at the end or once at the start (write-through).
SmallVector<KernelMapper::RowBuffer>
KernelMapper::rowBuffers(MutableArrayRef<linalg::LinalgOp> ordered,
                         const llvm::SmallPtrSet<Operation *, 8> &ops,
                         int64_t row) {
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
  SmallVector<RowBuffer> buffers;
  auto consider = [&](RowBuffer buffer, bool input) {
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
  return buffers;
}

/// The row's block for `buffers` in registers: the group of elements a
/// thread moves at once, and the warps that share the row's groups, in
/// plan.registers; nothing when no block holds them.
void KernelMapper::chooseRowBlock(ArrayRef<linalg::LinalgOp> ordered,
                                  ArrayRef<RowBuffer> buffers,
                                  llvm::SmallPtrSet<Operation *, 8> ops,
                                  int64_t row) {
  RegisterRows &rows = plan.registers;
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
      for (const RowBuffer &buffer : buffers) {
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
    for (const RowBuffer &buffer : buffers) {
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
      if (role == Role::Distribute && op != plan.fill &&
          op != plan.epilogue.getOperation())
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
    } else if ((vector = pointLanes(elementwise)) > 1) {
      plan.notes.push_back("each thread " + std::to_string(vector) +
                           " consecutive output points, their " +
                           std::to_string(reduced) +
                           " reduced elements in one loop");
    } else {
      plan.notes.push_back("each thread one output point, its " +
                           std::to_string(reduced) +
                           " reduced elements in a loop");
    }
    if (plan.fill) {
      std::tie(plan.rows, plan.rowDim) = pointRows(elementwise, vector);
      if (plan.rows > 1)
        plan.notes.push_back(
            "as many at " + std::to_string(plan.rows) +
            " consecutive indices of loop " + std::to_string(plan.rowDim) +
            ", reading what that loop does not index once for them");
    }
    plan.vector = vector;
    int64_t threadsNeeded =
        std::max<int64_t>(1, ceilDiv(total, vector * plan.rows));
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
  // A note an earlier pass left (strata-gpu-pull-fusion) follows.
  if (auto earlier = kernel::get<kernel::GpuReason>(decl))
    reason += "; " + earlier.getValue().str();
  kernel::set<kernel::GpuReason>(decl, StringAttr::get(context, reason));
}

/// The kernels that copy model inputs which views read (ModuleWriter.cpp's
/// plan copies such inputs, since input buffers are bound per run): one
/// per distinct size, an elementwise copy of bytes.
} // namespace strata::gpumap

namespace {

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

struct GpuMapPass : strata::impl::GpuMapPassBase<GpuMapPass> {
  using Base::Base;

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
                                     packRows, pointRows)
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

std::string strata::gpuCopyKernelName(uint64_t bytes) {
  return "strata_copy_" + std::to_string(bytes);
}
