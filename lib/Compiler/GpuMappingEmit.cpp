//===- GpuMappingEmit.cpp - the gpu stage: code for each plan ---*- C++ -*-===//
//
// The half of KernelMapper (GpuMapper.h) that rewrites a kernel body for the
// plan GpuMapping.cpp chose: the entry and scratch buffers, staged inputs,
// distributed, register-row and uniform-scalar forms and the block- and
// warp-wide combines; GpuMappingVectors.cpp has the elementwise and
// point-reduction forms and their lane vectors.
//
//===----------------------------------------------------------------------===//

#include "GpuMapper.h"

namespace strata::gpumap {

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
  Operation *yield = op.getBlock()->getTerminator();
  auto yielded = [&](IRMapping &mapping) {
    SmallVector<Value> values;
    for (Value v : yield->getOperands())
      values.push_back(mapping.lookupOrDefault(v));
    return values;
  };
  if (op.isAllParallelLoops()) {
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
  return emitReducedLoops(
      op, ivs, accs, [&](ArrayRef<Value> point, ValueRange iters) {
        IRMapping mapping =
            emitPayload(op, point, SmallVector<Value>(iters), nullptr);
        return yielded(mapping);
      });
}

/// A loop nest over `op`'s reduced loops (each from 0 by 1), carrying
/// `accs`: `body` gets the iteration point (`ivs` with the reduced loops'
/// indices set) and the carried values, at the innermost loop's insertion
/// point, and returns the next values. Returns the last ones.
SmallVector<Value> KernelMapper::emitReducedLoops(
    linalg::LinalgOp op, SmallVector<Value> ivs, ArrayRef<Value> accs,
    function_ref<SmallVector<Value>(ArrayRef<Value>, ValueRange)> body) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> reduced;
  SmallVector<Value> lbs, ubs, steps;
  for (auto [d, kind] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (isParallel(kind))
      continue;
    reduced.push_back(d);
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
                           return body(ivs, iters);
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
  int64_t points = llvm::product_of(parallelRanges);
  int64_t reducedPoints = llvm::product_of(reducedRanges);
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
  if (!plan.registers.enabled ||
      llvm::product_of(op.getStaticLoopRanges()) != 1)
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

} // namespace strata::gpumap
