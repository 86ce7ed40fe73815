//===- GpuMappingEmit.cpp - the gpu stage: code for each plan ---*- C++ -*-===//
//
// The half of KernelMapper (GpuMapper.h) that rewrites a kernel body for the
// plan GpuMapping.cpp chose: the entry and scratch buffers, staged inputs,
// distributed, register-row, uniform-scalar and elementwise forms, lane
// vectors and the block- and warp-wide combines.
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
/// not run, as no thread reads another's point. With plan.vector lanes the
/// thread computes that many consecutive points of the innermost loop (a
/// parallel one, pointLanes): one loop nest over the reduced loops carries
/// an accumulator per lane, and what the lanes share (a depthwise
/// convolution's window index and padding test) is computed once.
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
  int64_t vector = plan.vector;
  OpOperand *init = op.getDpsInitOperand(0);
  Operation *yield = op.getBlock()->getTerminator();
  // One accumulator per lane, carried through the reduced loops.
  SmallVector<Value> values = emitReducedLoops(
      op, ivs, SmallVector<Value>(vector, plan.fill.getInputs()[0]),
      [&](ArrayRef<Value> point, ValueRange iters) {
        LanePoints points{SmallVector<Value>(point), {}};
        LaneValues given;
        given[init->get()] = SmallVector<Value>(iters);
        SmallVector<Value> next;
        for (IRMapping &lane : emitLanes(op, points, vector, nullptr, &given))
          next.push_back(lane.lookupOrDefault(yield->getOperand(0)));
        return next;
      });
  SmallVector<IRMapping> results(vector);
  for (int64_t l = 0; l < vector; ++l)
    results[l].map(yield->getOperand(0), values[l]);
  // The output's map is a projected permutation of the parallel loops
  // (pointPerThread): the reduced loops' entries of `ivs` stay unset.
  if (!plan.epilogue) {
    LanePoints points{ivs, {}};
    storeLanes(op, points, vector, results);
    op->erase();
    plan.fill->erase();
    return;
  }
  // The epilogue at the same points (pointEpilogue), its read of the
  // temporary replaced by the values just computed.
  linalg::LinalgOp epilogue = plan.epilogue;
  LanePoints points{delinearize(linear, epilogue.getStaticLoopRanges()), {}};
  LaneValues given;
  given[init->get()] = values;
  storeLanes(epilogue, points, vector,
             emitLanes(epilogue, points, vector, nullptr, &given));
  epilogue->erase();
  op->erase();
  plan.fill->erase();
  if (plan.epilogueTemp && plan.epilogueTemp->use_empty())
    plan.epilogueTemp->erase();
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
/// read). An operand in `given` is not read: each lane takes its value
/// there (a running accumulator, a result computed before). Returns each
/// lane's values.
SmallVector<IRMapping> KernelMapper::emitLanes(linalg::LinalgOp op,
                                               LanePoints &points,
                                               int64_t vector, Operation *skip,
                                               const LaneValues *given) {
  SmallVector<IRMapping> lanes(vector);
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (given)
      if (auto it = given->find(operand.get()); it != given->end()) {
        for (int64_t l = 0; l < vector; ++l)
          lanes[l].map(arg, it->second[l]);
        continue;
      }
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

} // namespace strata::gpumap
