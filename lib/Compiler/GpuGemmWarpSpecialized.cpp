//===- GpuGemmWarpSpecialized.cpp - the GEMM kernel on sm_90a ----------===//
//
// The GEMM kernel's warp-specialized form (GpuGemm.cpp describes it):
// the ring of TMA stages and its mbarriers, the producer thread, the
// watcher warp, the handoff's epilogue warps, and the consumer
// warpgroups' wgmma products and stores through shared memory.
//
//===----------------------------------------------------------------------===//

#include "GpuGemmEmitter.h"

namespace strata::gemm {

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
  Value previous =
      arith::SelectOp::create(b, loc, equals(s, 0), c32(ring.stages - 1),
                              arith::SubIOp::create(b, loc, s, c32(1)));
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

} // namespace strata::gemm
