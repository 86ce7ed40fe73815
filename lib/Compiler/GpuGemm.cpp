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

#include "GpuGemmEmitter.h"

using namespace mlir;
using namespace strata::gemm;
namespace kernel = strata::kernel;

namespace strata::gemm {

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
  int64_t tiles = strata::gemmTileRowCount(rows) * (columns / tn);
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
  int64_t tilesM = strata::gemmTileRowCount(rows), tilesN = columns / tn;
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
              loaded =
                  loadPair(pointers[in.arg], in.type, inResult(place.index));
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
          // The last tile row's rows past the result copy A's last row
          // again; their results are not stored.
          Value lastRow;
          if (rows % kRows)
            lastRow = arith::SubIOp::create(b, loc, c32(rows - 1), m0);
          auto load = [&](Value step, Value slot) {
            Value aOffset = wide(mul(step, c32(kDepth * 2)));
            Value wOffset = arith::MulIOp::create(b, loc, wide(step),
                                                  c64(kDepth * columns * 2));
            loadTile(tid, kMmaThreads, at(aSrc, aOffset), stageA(shared, slot),
                     kRows, kDepth / 8, depth * 2, lastRow);
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
                    auto store = [&] {
                      Value offset =
                          arith::MulIOp::create(b, loc, place.index, c64(2));
                      LLVM::StoreOp::create(b, loc, word, at(out, offset), 4);
                    };
                    if (rows % kRows == 0)
                      return store();
                    ifThen(
                        b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              place.index, c64(rows * columns)),
                        store);
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
  int64_t tiles = strata::gemmTileRowCount(rows) * (columns / tileColumns);
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

} // namespace strata::gemm

LogicalResult strata::emitGemm(func::FuncOp decl, func::FuncOp body,
                               ModuleOp kernels, int64_t blockSharedLimit,
                               bool wgmma) {
  auto params = kernel::get<kernel::Gemm>(decl);
  if (!params)
    return decl.emitError("internal error: the GEMM kernel ")
           << decl.getSymName() << " has no strata.gemm parameters";
  int64_t tileColumns = params.getTileColumns();
  if (tileColumns != kColumns && tileColumns != kWideColumns)
    return decl.emitError("the GEMM kernel ")
           << decl.getSymName() << "'s tiles are " << kColumns << " or "
           << kWideColumns << " columns wide, not " << tileColumns;
  return GemmEmitter(decl, body, kernels, params, blockSharedLimit, wgmma)
      .run();
}
