//===- GpuGemm.cpp - the GEMM kernel with a fused epilogue -------*- C++
//-*-===//
//
// Generates the body of a GEMM kernel (Gemm.h: the partitioner marks it
// strata.template = "gemm" and records its shape in strata.gemm) in place
// of strata-gpu-map's generic mapping:
//
//   one block of 8 warps per 128x128 tile of the result; A's [128, 64] and
//   W's [64, 128] tiles stream through shared memory in kGemmStages stages
//   of cp.async copies (two steps load while one is multiplied); the
//   products accumulate in f32 registers, and the epilogue (the bias, the
//   exact GELU, ...) is applied to the accumulators in registers before the
//   one write of the result. The blocks walk the tiles in groups of 8 rows
//   of tiles, so that a wave's blocks share A's and W's tiles in L2.
//
// The partitioner makes it for products that are generated code on sm_90a
// (--no-libraries, the decisions file's "codegen", a product cuBLASLt does
// not take). Where cuBLASLt takes the product, it stays cuBLASLt's: on the
// H200 (bench/RESULTS.md, 2026-11-30 18:29) this kernel multiplies 8192^3
// at 82% of cuBLAS's rate, and its GELU epilogue costs more than the GELU
// kernel it saves (GEMM + GELU 0.47 against 0.36 + 0.04 ms; BERT's FFN1
// 0.196 against 0.117 + 0.065 ms): the two blocks on an SM start together
// and reach their epilogues together, so nothing multiplies meanwhile.
//
// The products, by GPU:
//   - sm_90a (wgmma): the 8 warps are two warpgroups, each 64 rows of the
//     tile, m64n128k16 steps with A (K-major) and W (MN-major) read from
//     shared memory by descriptor.
//   - sm_80 and plain sm_90 (mma.sync m16n8k16, the portable PTX's form):
//     each warp owns 32 rows by 64 columns; fragments are read with
//     ldmatrix (W's with ldmatrix.trans).
//
// The epilogue is the kernel stage's own: the elementwise linalg.generic ops
// that read the product's accumulator buffer (the kernel stage fused the
// chain into one or a few), their bodies cloned once per accumulator pair,
// with each other input read per column, per element or once, as its
// indexing map says. So the kernel computes what the generated kernels
// would, the product's rounding to its type included.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "Gpu.h"
#include "GpuTensorCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <memory>

using namespace mlir;

namespace {

constexpr int64_t kWarps = 8;
constexpr int64_t kThreads = 32 * kWarps;
constexpr int64_t kRows = strata::kGemmTileRows;
constexpr int64_t kDepth = strata::kGemmTileDepth;
/// Tile rows whose blocks run next to each other (L2 reuse of W's tiles).
constexpr int64_t kGroupRows = 8;
constexpr const char *kSharedName = "__strata_gemm_shared";

/// Columns per tile, shared-memory stages of A's and W's tiles (32 KiB
/// each) and blocks per SM. Three stages leave room for two blocks per SM,
/// which hide each other's waits for their products. Measured on the H200
/// against three others (bench/RESULTS.md, 2026-11-30 18:29): 128x256
/// tiles with four stages and one block per SM multiply faster (8192^3
/// 1.51 against 1.66 ms, with one batch of products left in flight per
/// step; 1.89 ms waiting for each), but their epilogue is exposed: the GEMM
/// + GELU workload 0.55 against 0.47 ms.
constexpr int64_t kColumns = strata::kGemmTileColumns;
constexpr int64_t kGemmStages = 3;
constexpr int64_t kMinBlocks = 2;
constexpr int64_t kStageBytes = (kRows + kColumns) * kDepth * 2;

int64_t sharedBytes() {
  return kGemmStages * kStageBytes + strata::kWgmmaAlign;
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
              DictionaryAttr params, bool wgmma)
      : TensorCoreEmitter(decl, body, kernels, wgmma) {
    auto i64 = [&](StringRef name) {
      return cast<IntegerAttr>(params.get(name)).getInt();
    };
    rows = i64("rows");
    columns = i64("columns");
    depth = i64("depth");
    aArg = i64("a");
    wArg = i64("w");
    f16 = cast<StringAttr>(params.get("type")).getValue() == "f16";
  }

  LogicalResult run();

private:
  /// Finds the epilogue's generic ops in the body and clones them (and the
  /// constants they use) into `holder`.
  LogicalResult takeEpilogue();
  /// The epilogue's value at (row, col) of the result from the product's
  /// f32 accumulator `acc`: each step's body cloned on scalars.
  Value epilogue(Value acc, Value row, Value col);
  /// Loads one element of type `type` at element `index` of `base`.
  Value loadElement(Value base, Type type, Value index);

  int64_t rows = 0, columns = 0, depth = 0, aArg = -1, wArg = -1;
  std::unique_ptr<Block> holder;
  SmallVector<EpilogueStep> steps;
  /// The holder's constants, cloned into the kernel's entry.
  IRMapping hoisted;
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

Value GemmEmitter::epilogue(Value acc, Value row, Value col) {
  Value value = acc;
  for (EpilogueStep &step : steps) {
    Block &payload = step.op.getRegion().front();
    IRMapping mapping = hoisted;
    for (auto [in, arg] : llvm::zip(step.inputs, payload.getArguments())) {
      Value loaded;
      switch (in.kind) {
      case EpilogueInput::Chain:
        loaded = value;
        break;
      case EpilogueInput::Once:
        loaded = loadElement(pointers[in.arg], in.type, c64(0));
        break;
      case EpilogueInput::Column:
        loaded = loadElement(pointers[in.arg], in.type, wide(col));
        break;
      case EpilogueInput::Element:
        loaded = loadElement(
            pointers[in.arg], in.type,
            arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, wide(row), c64(columns)),
                wide(col)));
        break;
      }
      mapping.map(arg, loaded);
    }
    for (Operation &op : payload.without_terminator())
      b.clone(op, mapping);
    value = mapping.lookupOrDefault(payload.getTerminator()->getOperand(0));
  }
  return value;
}

LogicalResult GemmEmitter::run() {
  if (failed(checkBuffers("the GEMM kernel", {aArg, wArg})) ||
      failed(takeEpilogue()))
    return failure();

  pointers = resetBody(kThreads);
  // Registers for kMinBlocks blocks per SM (64 accumulators a thread).
  body->setAttr("nvvm.minctasm", b.getI32IntegerAttr(kMinBlocks));
  for (Operation &op : *holder)
    if (!isa<linalg::GenericOp>(op))
      b.clone(op, hoisted);
  Value shared = sharedMemory(kSharedName, /*align=*/true);
  Value tid = threadIndex();
  Value bid = blockIndex();
  Value warp = shr(tid, 5);
  Value lane = band(tid, 31);

  // The block's tile: tile rows in groups of kGroupRows, each group's
  // tiles column by column.
  int64_t tilesM = rows / kRows, tilesN = columns / kColumns;
  Value perGroup = c32(kGroupRows * tilesN);
  Value firstM =
      mul(arith::DivUIOp::create(b, loc, bid, perGroup), c32(kGroupRows));
  Value groupSize = arith::MinUIOp::create(
      b, loc, c32(kGroupRows),
      arith::SubIOp::create(b, loc, c32(tilesM), firstM));
  Value inGroup = arith::RemUIOp::create(b, loc, bid, perGroup);
  Value tileM = add(firstM, arith::RemUIOp::create(b, loc, inGroup, groupSize));
  Value tileN = arith::DivUIOp::create(b, loc, inGroup, groupSize);
  Value m0 = mul(tileM, c32(kRows)), n0 = mul(tileN, c32(kColumns));

  // Where the block's rows of A and columns of W start, and each step's
  // tiles: A's [128, 64] K-major, W's [64, 128] as two column halves.
  Value aSrc = at(pointers[aArg],
                  arith::MulIOp::create(b, loc, wide(m0), c64(depth * 2)));
  Value wSrc = at(pointers[wArg], wide(shl(n0, 1)));
  auto aTile = [&](Value slot) {
    return at(shared, mul(slot, c32(kStageBytes)));
  };
  auto wTile = [&](Value slot) {
    return at(shared,
              add(mul(slot, c32(kStageBytes)), c32(kRows * kDepth * 2)));
  };
  int64_t kSteps = depth / kDepth;
  auto load = [&](Value step, Value slot) {
    Value aOffset = wide(mul(step, c32(kDepth * 2)));
    Value wOffset =
        arith::MulIOp::create(b, loc, wide(step), c64(kDepth * columns * 2));
    loadTile(tid, kThreads, at(aSrc, aOffset), aTile(slot), kRows, kDepth / 8,
             depth * 2);
    loadTile(tid, kThreads, at(wSrc, wOffset), wTile(slot), kDepth,
             kColumns / 8, columns * 2);
  };

  // Prologue: the first kGemmStages - 1 steps, a commit group each.
  for (int64_t s = 0; s + 1 < kGemmStages; ++s) {
    if (s < kSteps)
      load(c32(s), c32(s));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }

  // The accumulators: wgmma's m64n128 (64 a thread) or 2 x 8 mma.sync
  // tiles of 16x8 (64 a thread), in C-fragment order per 8 columns.
  constexpr int64_t kAcc = kColumns / 2;
  Value aDesc0, wDesc0;
  if (wgmma) {
    Value group = shr(warp, 2);
    aDesc0 = descriptor(at(aTile(c32(0)), mul(group, c32(64 * 128))), 0, 1024);
    wDesc0 = descriptor(wTile(c32(0)), kDepth * 128, 1024);
  }
  Value wm = band(warp, 3), wn = shr(warp, 2);
  SmallVector<Value> init(kAcc, cf(0.0));
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, kSteps);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, one, init,
      [&](OpBuilder &nested, Location, Value iv, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(nested.getInsertionBlock());
        Value step = arith::IndexCastOp::create(b, loc, i32(), iv);
        Value slot = arith::RemUIOp::create(b, loc, step, c32(kGemmStages));
        // This step's tiles have landed (each thread waits for its own
        // copies; the barrier, for everyone's), and every warp is done
        // with the slot the next load overwrites (last step's).
        NVVM::CpAsyncWaitGroupOp::create(b, loc, kGemmStages - 2);
        if (wgmma)
          asmBarrier("fence.proxy.async.shared::cta;");
        gpu::BarrierOp::create(b, loc);
        // Past the last step, the last step's tiles again, into a slot no
        // later step reads: no branch around the copies.
        Value ahead = add(step, c32(kGemmStages - 1));
        load(arith::MinUIOp::create(b, loc, ahead, c32(kSteps - 1)),
             arith::RemUIOp::create(b, loc, ahead, c32(kGemmStages)));
        NVVM::CpAsyncCommitGroupOp::create(b, loc);

        SmallVector<Value> acc(state.begin(), state.end());
        if (wgmma) {
          Value offset = wide(mul(slot, c32(kStageBytes >> 4)));
          Value aDesc = arith::AddIOp::create(b, loc, aDesc0, offset);
          Value wDesc = arith::AddIOp::create(b, loc, wDesc0, offset);
          acc = fenceOperands(acc);
          asmBarrier("wgmma.fence.sync.aligned;");
          for (int64_t kk = 0; kk < kDepth / 16; ++kk)
            acc = wgmmaStep(acc, advance(aDesc, kk * 32), {},
                            advance(wDesc, kk * 16 * 128),
                            /*transposeB=*/true, /*accumulate=*/true);
          asmBarrier("wgmma.commit_group.sync.aligned;");
          asmBarrier("wgmma.wait_group.sync.aligned 0;");
          acc = fenceOperands(acc);
        } else {
          // Warp (wm, wn): rows 32 wm.., columns 64 wn...
          Value aBase = aTile(slot), wBase = wTile(slot);
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
              Value chunk =
                  add(add(mul(wn, c32(warpColumns / 8)), c32(dp * 2)), wHalf);
              SmallVector<Value> r =
                  ldmatrix(at(wBase, swizzled(add(wRow, c32(kk * 16)), chunk,
                                              kDepth, kColumns / 8)),
                           true);
              for (int64_t mt = 0; mt < 2; ++mt)
                for (int64_t j = 0; j < 2; ++j) {
                  int64_t first = (mt * nTiles + 2 * dp + j) * 4;
                  SmallVector<Value> d =
                      mma(aFrag[mt], {r[2 * j], r[2 * j + 1]},
                          ArrayRef<Value>(acc).slice(first, 4));
                  std::copy(d.begin(), d.end(), acc.begin() + first);
                }
            }
          }
        }
        scf::YieldOp::create(b, loc, acc);
      });
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  ValueRange acc = loop.getResults();

  // The epilogue, per pair of accumulators (two adjacent columns of one
  // row), written as one 32-bit store. Accumulator 4 t + 2 h + e is column
  // 8 t + 2 (lane mod 4) + e of row (lane / 4) + 8 h of the thread's
  // 16-row slice: with wgmma, t counts the 16 tiles of 8 columns of warp w's
  // slice 16 (w mod 4) of its warpgroup's 64 rows; with mma.sync, t = 8 mt +
  // nt over the warp's 2 x 8 tiles.
  Value group = shr(lane, 2), quad = band(lane, 3);
  Value out = pointers.back();
  for (int64_t t = 0; t < kAcc / 4; ++t)
    for (int64_t h = 0; h < 2; ++h) {
      Value row, col;
      if (wgmma) {
        row = add(add(mul(shr(warp, 2), c32(64)), shl(wm, 4)),
                  add(group, c32(8 * h)));
        col = add(c32(8 * t), shl(quad, 1));
      } else {
        int64_t nTiles = kColumns / 16, mt = t / nTiles, nt = t % nTiles;
        row = add(add(shl(wm, 5), c32(16 * mt)), add(group, c32(8 * h)));
        col = add(add(mul(wn, c32(kColumns / 2)), c32(8 * nt)), shl(quad, 1));
      }
      row = add(m0, row);
      col = add(n0, col);
      Value lo = epilogue(acc[4 * t + 2 * h], row, col);
      Value hi = epilogue(acc[4 * t + 2 * h + 1], row, add(col, c32(1)));
      if (lo.getType() != halfType() || hi.getType() != halfType()) {
        decl.emitError("internal error: the GEMM kernel ")
            << decl.getSymName() << "'s epilogue yields " << lo.getType()
            << ", not its result's type";
        return failure();
      }
      Value word = packPair(lo, hi);
      Value offset = arith::MulIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, wide(row), c64(columns)),
              wide(col)),
          c64(2));
      LLVM::StoreOp::create(b, loc, word, at(out, offset), 4);
    }
  func::ReturnOp::create(b, loc);
  for (Operation &op : *holder)
    op.dropAllUses();
  holder.reset();

  int64_t blocks = tilesM * tilesN;
  decl->setAttr("strata.gpu_mapping", b.getStringAttr("gemm"));
  decl->setAttr("strata.gpu_grid", b.getDenseI64ArrayAttr({blocks, 1, 1}));
  decl->setAttr("strata.gpu_block", b.getDenseI64ArrayAttr({kThreads, 1, 1}));
  decl->setAttr("strata.gpu_shared_bytes", b.getI64IntegerAttr(sharedBytes()));
  decl->setAttr("strata.gpu_static_shared_bytes", b.getI64IntegerAttr(0));
  decl->setAttr(
      "strata.gpu_reason",
      b.getStringAttr(
          "GEMM: one block of " + std::to_string(kWarps) + " warps per " +
          std::to_string(kRows) + "x" + std::to_string(kColumns) +
          " tile of the result (" + std::to_string(blocks) +
          " blocks, in groups of " + std::to_string(kGroupRows) +
          " tile rows), K in steps of " + std::to_string(kDepth) + " through " +
          std::to_string(kGemmStages) + " shared-memory stages of cp.async (" +
          std::to_string(sharedBytes()) +
          " bytes of dynamic shared memory; registers for " +
          std::to_string(kMinBlocks) + " blocks per SM); " +
          (wgmma ? std::string("wgmma m64n128k16 from 128-byte swizzled "
                               "shared tiles, one warpgroup per 64 rows")
                 : std::string("mma.sync m16n8k16, 32x64 per warp")) +
          ", f32 accumulators; the epilogue (" + std::to_string(steps.size()) +
          " elementwise op(s) of the kernel stage) on them in registers"));
  return success();
}

} // namespace

LogicalResult strata::emitGemm(func::FuncOp decl, func::FuncOp body,
                               ModuleOp kernels, int64_t dynamicSharedLimit,
                               bool wgmma) {
  auto params = decl->getAttrOfType<DictionaryAttr>("strata.gemm");
  if (!params)
    return decl.emitError("internal error: the GEMM kernel ")
           << decl.getSymName() << " has no strata.gemm parameters";
  int64_t shared = sharedBytes();
  if (shared > std::max<int64_t>(dynamicSharedLimit, 48 * 1024))
    return decl.emitError("the GEMM kernel ")
           << decl.getSymName() << " needs " << shared
           << " bytes of shared memory; this GPU gives a block at most "
           << std::max<int64_t>(dynamicSharedLimit, 48 * 1024);
  return GemmEmitter(decl, body, kernels, params, wgmma).run();
}
