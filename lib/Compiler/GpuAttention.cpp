//===- GpuAttention.cpp - the flash-attention kernel ------------*- C++ -*-===//
//
// Generates the body of an attention kernel (Attention.h: the partitioner
// marks it strata.template = "flash_attention" and records its parameters
// in strata.attention) for NVIDIA GPUs from sm_80 on, in place of the
// generic mapping of strata-gpu-map:
//
//   one thread block of 4 warps per 64 or 128 query rows of one (batch,
//   head) (attentionQueryRows); Q's tile is loaded once, then K and V
//   stream through shared memory in tiles of 64 keys, double-buffered with
//   cp.async (the next tile loads while this one is used):
//
//     S = Q Kᵀ          bf16 or f16 in, f32 accumulators
//     online softmax    scaled into the log2 domain, the running row max m
//                       and sum l per row, exp2; the accumulated O rescaled
//                       by exp2(m_old - m_new) when the max grows (few
//                       instructions per step: the kernel is issue-bound)
//     O += P V          P re-packed from S's accumulators in registers
//                       (their layout is the A operand's)
//
//   and O / l is written once. The scores never reach memory. A causal
//   mask (keys j <= i + offset) is computed from indices, and key tiles
//   past the diagonal are skipped; blocks run in decreasing query order,
//   the heads interleaved, so that the longest causal blocks start first.
//   With wgmma at head dimension 128 the steps are software-pipelined
//   (pipelinedSteps): step j issues tile j + 1's S with tile j's P V and
//   computes tile j + 1's softmax while P V runs, from three stages of K
//   and V. At head dimension 128 with 128-row blocks, and at 64 with
//   192-row blocks, the kernel is warp-specialized (warpSpecialized): two
//   or three consumer warpgroups of 64 rows and a producer warpgroup, which
//   on sm_90a loads Q, K and V by TMA into rings of stages guarded by
//   mbarriers, read by every consumer, and gives its registers to them;
//   there a step takes 128 keys (stepKeys), O's rescale runs under the
//   next S, and a row's max moves only when it grows by more than 2^8
//   (staleMax: GpuAttentionSteps.cpp), so most steps skip the rescale.
//
// The products, by GPU:
//   - sm_90a (wgmma): the 4 warps are one warpgroup. S is wgmma m64n64k16
//     steps with Q and K read from shared memory by descriptor; O is
//     m64n{D}k16 steps with P's words from registers and V read transposed
//     (MN-major). Each batch of products is fenced, committed and waited
//     for before its accumulators are read; the accumulators pass through
//     empty asm statements (fenceOperands) so that no arithmetic on them
//     moves into the asynchronous span.
//   - sm_80 and plain sm_90 (mma.sync m16n8k16): each warp owns 16 or 32
//     rows; fragments are read with ldmatrix (V with ldmatrix.trans).
//
// Shared tiles are one or two column halves of 64 elements, each its rows
// of 128 bytes, with 16-byte chunk c of row r at c ^ (r mod 8): wgmma's
// 128-byte swizzle (tiles start at 1024-byte boundaries), under which the
// 8 rows an ldmatrix reads at one column also fall in 8 distinct bank
// groups.
//
// The body mixes arith, scf and gpu ops with LLVM and NVVM ops for what has
// no higher-level form here (ldmatrix, mma.sync, cp.async, pointers into
// shared memory) and inline PTX for wgmma (its register operands and
// asynchronous groups); the llvm stage lowers the rest around them.
//

#include "GpuAttentionEmitter.h"

#include "Attention.h"
#include "Gpu.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <algorithm>
#include <climits>
#include <cmath>

using namespace mlir;
using namespace strata::attention;
namespace kernel = strata::kernel;
using strata::forLoop;
using strata::ifThen;

namespace {

constexpr const char *kSharedName = "__strata_attention_shared";

/// Whether the kernel is warp-specialized: at head dimension 128 with
/// 128-row blocks (attentionQueryRows: with wgmma), a block is two consumer
/// warpgroups, 64 query rows each, and a producer warpgroup. On sm_90a the
/// producer's first thread loads Q and the K and V tiles with TMA into
/// rings of stages that both consumers read (each stage a full and an
/// empty mbarrier); the consumers wait only for their own data and never
/// for each other. The producer warpgroup gives its registers to the
/// consumers (setmaxnreg, kConsumerRegisters): an SM's four schedulers
/// each hold a quarter of the register file, and 12 warps put 3 on each,
/// so a launch of 384 threads gets 168 registers a thread; the consumers
/// take 232 of them after the producers give theirs back, room for S of
/// 64 x 128 keys beside O (stepKeys). Targets without wgmma keep 64-row
/// blocks, and so does the portable PTX of a module for sm_90a, with a
/// launch of its own (queryRows): launching the cubin's block, with 8
/// compute warps of 16 rows each and the producer warpgroup idle, its
/// threads capped at 168 registers spilled about 70 bytes, and that PTX
/// took 8.3 ms at d128 s4k against the 64-row form's 6.7 on the H200
/// (bench/RESULTS.md, 2026-12-01 10:29).
///
/// At head dimension 64 the block is FA3's: three consumer warpgroups (192
/// query rows) and the producer, so that an SM keeps 12 consumer warps, as
/// the one-warpgroup blocks before it did (3 blocks of 4; the two-consumer
/// form's 8 were much slower there: 2026-12-01 10:19). On the H200 d64 s4k
/// went 2.446 -> 2.160 ms, causal 1.343 -> 1.298 (bench/RESULTS.md,
/// 2026-12-01 19:36). A sequence need not be whole blocks: a consumer
/// whose 64 rows lie past its head's end only releases the stages it would
/// have read, and writes nothing.
bool warpSpecialized(int64_t dim, int64_t rows) {
  return strata::attentionWarpSpecialized(dim, rows);
}

/// The compute warps of a block (a warp per 16 rows in the warp-specialized
/// form, else 4), and its threads (with the producer warpgroup).
int64_t computeWarps(int64_t dim, int64_t rows) {
  return warpSpecialized(dim, rows) ? rows / 16 : 4;
}
int64_t blockThreads(int64_t dim, int64_t rows) {
  return 32 * computeWarps(dim, rows) + (warpSpecialized(dim, rows) ? 128 : 0);
}

/// The registers a thread of the warp-specialized form keeps on sm_90a
/// once the warpgroups have traded them (setmaxnreg), of the 512 a lane's
/// quarter of the register file holds (65536 / 4 / 32): with 2 consumer
/// warps and a producer warp per scheduler, 2 x 232 + 40; with 3 consumer
/// warps (192 rows), FA3's 3 x 160 + 32, the whole quarter (S of 64 x 128
/// keys is 64 a thread at either head dimension, O 32 at D = 64 against
/// 64; ptxas spills 8 bytes of a consumer's at 160).
int32_t consumerRegisters(int64_t rows) { return rows == 192 ? 160 : 232; }
int32_t producerRegisters(int64_t rows) { return rows == 192 ? 32 : 40; }

/// The keys of a step (attentionStepKeys, where the kernel has wgmma; the
/// mma.sync form's steps are 64 keys).
int64_t stepKeys(int64_t dim, int64_t rows, int64_t seqK, bool wgmma) {
  return wgmma ? strata::attentionStepKeys(dim, rows, seqK)
               : strata::kAttentionBlockRows;
}

/// Whether the key steps are software-pipelined (pipelinedKeySteps): with
/// wgmma at head dimension 128, and in the warp-specialized form. On the H200
/// (bench/RESULTS.md, 2026-12-01 03:14), in blocks of one warpgroup, that made
/// the kernel 0.4-1.6% faster at D = 128 (s4k 4.150 -> 4.124 ms, causal 2.263
/// -> 2.227, s16k 8.108 -> 8.076, causal 4.111 -> 4.077), and slower at D = 64,
/// where 56 KiB of shared memory and 114 registers leave 4 blocks per SM
/// instead of 5 (BERT's attention, 512 keys, 0.078 -> 0.089 ms; GPT-2's, 1024
/// keys causal, 0.050 -> 0.052): there the other blocks already hide each one's
/// waits.
bool pipelinedSteps(int64_t dim, int64_t rows, bool wgmma) {
  return wgmma && (dim == 128 || warpSpecialized(dim, rows));
}

/// The keys each of the warp-specialized form's rings holds on sm_90a (K
/// and V have a ring each, so that a step holds the next tile's K and
/// this tile's V while the producer loads past them): 4 stages of 64-key
/// tiles, or 2 of 128, 64 KiB a ring at D = 128. (3 or 5 stages of 64 keys
/// were no faster: bench/RESULTS.md, 2026-12-01 10:11.)
constexpr int64_t kRingKeys = 256;

/// The stages of K's and V's tiles in shared memory: the producer's rings;
/// three when pipelined by the block's own cp.async copies (a step reads
/// K's next tile while the one after it loads), else two.
int64_t keyStages(int64_t dim, int64_t rows, int64_t keys, bool wgmma) {
  if (warpSpecialized(dim, rows))
    return wgmma ? kRingKeys / keys : 2;
  return pipelinedSteps(dim, rows, wgmma) ? 3 : 2;
}

/// The mbarriers of the warp-specialized form on sm_90a: Q's, then a full
/// and an empty one per stage of K, then the same for V.
int64_t barrierBytes(int64_t dim, int64_t rows, int64_t keys, bool wgmma) {
  return warpSpecialized(dim, rows) && wgmma
             ? 8 * (1 + 4 * keyStages(dim, rows, keys, wgmma))
             : 0;
}

/// The kernel's dynamic shared memory: Q's tile (or the consumers' tiles),
/// then the stages of K's and V's, the mbarriers, and the slack to align
/// them for wgmma.
int64_t sharedBytes(int64_t dim, int64_t rows, int64_t keys, bool wgmma) {
  return (rows + 2 * keyStages(dim, rows, keys, wgmma) * keys) * dim * 2 +
         barrierBytes(dim, rows, keys, wgmma) +
         (wgmma ? strata::kWgmmaAlign : 0);
}

/// The query rows of this kernel's blocks: the partitioner's where the
/// kernel has wgmma. Without it (sm_80, sm_90, and the portable PTX of a
/// module for sm_90a) attentionQueryRows's for a target without wgmma: the
/// portable PTX then has a launch of its own (strata.ptx_* on the kernel's
/// declaration, the step's ptx_launch: CudaTarget.cpp, docs/runtime.md).
/// Launching the cubin's 16-warp blocks of 192 rows instead, its 12 compute
/// warps of 16 rows each, it had been 25-33% slower at D = 64 (d64 s4k
/// 3.160 -> 4.191 ms on the H200, bench/RESULTS.md 2026-12-01 20:08), and
/// 24-27% at D = 128.
int64_t queryRows(kernel::AttentionAttr params, bool wgmma) {
  if (wgmma)
    return params.getQueryRows();
  return strata::attentionQueryRows(params.getHeadDim(), params.getSeqQ(),
                                    false);
}

} // namespace

namespace strata::attention {

FlashEmitter::FlashEmitter(func::FuncOp decl, func::FuncOp body,
                           ModuleOp kernels, kernel::AttentionAttr params,
                           bool wgmma)
    : TensorCoreEmitter(decl, body, kernels, wgmma) {
  batch = params.getBatch();
  seqQ = params.getSeqQ();
  seqK = params.getSeqK();
  dim = params.getHeadDim();
  scale = params.getScale().convertToDouble();
  causalOffset = params.getCausalOffset();
  f16 = params.getType().isF16();
  batchDims.assign(params.getBatchDims().begin(), params.getBatchDims().end());
  for (auto [operand, view] : {std::pair(params.getQ(), &views[0]),
                               std::pair(params.getK(), &views[1]),
                               std::pair(params.getV(), &views[2]),
                               std::pair(params.getO(), &views[3])}) {
    if (operand.getArg() >= 0)
      view->arg = operand.getArg();
    view->offset = operand.getOffset();
    view->rowStride = operand.getRowStride();
    view->batchStrides.assign(operand.getBatchStrides().begin(),
                              operand.getBatchStrides().end());
  }
  if (kernel::AttentionBiasAttr entry = params.getBias()) {
    Bias parsed;
    parsed.arg = entry.getArg();
    parsed.batchStrides.assign(entry.getBatchStrides().begin(),
                               entry.getBatchStrides().end());
    parsed.rowStride = entry.getRowStride();
    parsed.keyStride = entry.getKeyStride();
    parsed.factor = entry.getFactor().convertToDouble();
    parsed.type = entry.getType();
    bias = parsed;
    biasBytes = parsed.type.getIntOrFloatBitWidth() / 8;
  }
  zeroMaskedRows = params.getZeroMaskedRows();

  // The block's plan.
  rows = queryRows(params, wgmma);
  specialized = warpSpecialized(dim, rows);
  tma = specialized && wgmma;
  mapsParameter = warpSpecialized(dim, params.getQueryRows());
  warps = computeWarps(dim, rows);
  threads = blockThreads(dim, rows);
  keys = stepKeys(dim, rows, seqK, wgmma);
  // On sm_90a each consumer warpgroup of the warp-specialized form has
  // its own 64 rows and Q tile.
  tileRows = tma ? 64 : rows;
  mTiles = tileRows / (16 * (tma ? 4 : warps));
  steps = seqK / keys;
  pipelined = pipelinedSteps(dim, rows, wgmma);
  stages = keyStages(dim, rows, keys, wgmma);
  qBytes = rows * dim * 2;
  tileBytes = keys * dim * 2;
  blocksPerSeq = strata::attentionBlocksPerSequence(seqQ, rows);
  partial = seqQ % rows != 0;
  heads = causalOffset ? causalHeadGroup() : 1;
  // A consumer's own steps (192-row blocks on sm_90a, causal): up to its
  // own rows' diagonal. The steps after, masked whole for it, it releases
  // without reading (release). On the H200 (bench/RESULTS.md, 2026-12-01
  // 19:58) d64 s4k causal went 1.309 -> 1.244 ms. In 128-row blocks of
  // 128-key steps, whose consumers' last steps are the block's (but for
  // offsets), the same code made d128 s4k and s16k causal 1% slower.
  ownSteps = causalOffset && tma && rows == 192;
  staleMax = pipelined;
  scaleLog2 = scale / std::log(2.0);
  kSteps = dim / 16;
  oTiles = dim / 8;
  oCount = mTiles * oTiles * 4;
  perTile = oTiles * 4;
  pWords = keys / 4;
}

LogicalResult FlashEmitter::run() {
  SmallVector<int64_t> args = {views[0].arg, views[1].arg, views[2].arg};
  if (bias)
    args.push_back(bias->arg);
  if (failed(checkBuffers("the attention kernel", args)))
    return failure();

  // The warp-specialized form on sm_90a loads by TMA: one more parameter
  // after the result, the tensor maps of Q, K and V the runtime encodes
  // (docs/runtime.md, "Tensor maps"), each over its buffer's elements
  // (counted here, before resetBody makes the buffers bytes). The portable
  // PTX's variant takes the parameter too and leaves it unread
  // (mapsParameter).
  for (BlockArgument arg : body.getBody().front().getArguments())
    bufferElements.push_back(cast<MemRefType>(arg.getType()).getNumElements());
  if (failed(checkTensorMaps()))
    return failure();
  if (mapsParameter)
    body.getBody().front().addArgument(MemRefType::get({384}, b.getI8Type()),
                                       loc);
  // The generic body is replaced whole (a causal mask's constant of S x T
  // values goes with it).
  pointers = resetBody(threads);
  Value outPointer =
      mapsParameter ? pointers[pointers.size() - 2] : pointers.back();
  sharedBase = sharedMemory(kSharedName, wgmma);

  tid = threadIndex();
  Value bid = blockIndex();
  // On sm_90a the warp-specialized block's warpgroups: consumers 0 and 1,
  // the producer as 2. A wgmma product gives warp w of its warpgroup
  // rows [16 w, 16 w + 16).
  warpgroup = tma ? uniformWarpgroup(tid) : Value();
  warp = tma ? band(shr(tid, 5), 3) : shr(tid, 5);
  lane = band(tid, 31);
  group = shr(lane, 2);
  quad = band(lane, 3);
  locateBlock(bid);
  locateOperands(outPointer);
  countSteps();
  if (tma)
    initBarriers();
  scf::IfOp roles = specialized ? splitRoles() : scf::IfOp();
  prologue();
  loadQ();
  SmallVector<Value> init = initialState();
  myRow0 = add(myQ0, group);
  SmallVector<Value> results =
      pipelined ? pipelinedKeySteps(init) : keySteps(init);
  if (!tma)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  storeOutput(results);
  if (roles)
    b.setInsertionPointAfter(roles);
  func::ReturnOp::create(b, loc);
  setLaunch();
  return success();
}

/// A map sees Q's, K's or V's buffer as rows of row_stride elements, and a
/// (batch, head)'s first element as a row and a column: each batch stride
/// splits into whole rows and columns, and the columns a head can reach
/// must stay inside one row. The views the partitioner absorbs (transposes
/// and gathers of a contiguous buffer, the head dimension its last) always
/// do; anything else is an internal error, not a wrong read.
LogicalResult FlashEmitter::checkTensorMaps() {
  for (int64_t i = 0; mapsParameter && i < 3; ++i) {
    const View &view = views[i];
    int64_t r = view.rowStride, reach = 0;
    if (r > 0) {
      reach = view.columnsOf(view.offset) + dim;
      for (auto [extent, stride] : llvm::zip(batchDims, view.batchStrides))
        reach += (extent - 1) * view.columnsOf(stride);
    }
    if (r <= 0 || reach > r ||
        view.rowsOf(bufferElements[view.arg]) > INT32_MAX)
      return decl.emitError("internal error: the attention kernel ")
             << decl.getSymName() << " cannot read "
             << (i == 0   ? "Q"
                 : i == 1 ? "K"
                          : "V")
             << " through a tensor map: its heads do not stay inside rows of "
             << r << " elements";
  }
  return success();
}

/// The block's (batch, head) and query block. Blocks start in decreasing
/// query order. Heads go in groups (causalHeadGroup): within a group the
/// block index walks the heads fastest, so that every head's longest blocks
/// start before any head's shorter ones (a causal block's work grows with
/// its query block) and the grid's last blocks are short ones of many
/// heads, not long ones of the last heads. A group of one head (long
/// sequences, and no mask, where every block does the same work) keeps each
/// head's blocks together.
void FlashEmitter::locateBlock(Value bid) {
  Value groupIndex =
      arith::DivUIOp::create(b, loc, bid, c32(heads * blocksPerSeq));
  Value within = arith::RemUIOp::create(b, loc, bid, c32(heads * blocksPerSeq));
  Value head = add(mul(groupIndex, c32(heads)),
                   arith::RemUIOp::create(b, loc, within, c32(heads)));
  Value qBlock =
      arith::SubIOp::create(b, loc, c32(blocksPerSeq - 1),
                            arith::DivUIOp::create(b, loc, within, c32(heads)));
  q0 = mul(qBlock, c32(rows));
  // The first of this thread's rows: a consumer warpgroup's own 64.
  myQ0 = tma ? add(q0, shl(warpgroup, 6)) : q0;
  // The (batch, head) index's digits over the batch dimensions.
  digits.resize(batchDims.size());
  Value rest = head;
  for (int64_t i = int64_t(batchDims.size()) - 1; i >= 0; --i) {
    digits[i] = arith::RemUIOp::create(b, loc, rest, c32(batchDims[i]));
    rest = arith::DivUIOp::create(b, loc, rest, c32(batchDims[i]));
  }
}

/// The byte offset of an operand's first row for this (batch, head), plus
/// `firstRow` rows when given.
Value FlashEmitter::operandStart(const View &view, Value firstRow) {
  Value elements = c64(view.offset);
  for (auto [digit, stride] : llvm::zip(digits, view.batchStrides))
    elements = arith::AddIOp::create(
        b, loc, elements,
        arith::MulIOp::create(b, loc, wide(digit), c64(stride)));
  if (firstRow)
    elements = arith::AddIOp::create(
        b, loc, elements,
        arith::MulIOp::create(b, loc, wide(firstRow), c64(view.rowStride)));
  return arith::MulIOp::create(b, loc, elements, c64(2)).getResult();
}

void FlashEmitter::locateOperands(Value outPointer) {
  qSrc = at(pointers[qView().arg], operandStart(qView(), q0));
  kSrc = at(pointers[kView().arg], operandStart(kView(), Value()));
  vSrc = at(pointers[vView().arg], operandStart(vView(), Value()));
  oDst = at(outPointer, operandStart(oView(), myQ0));
  // The bias's elements for this (batch, head).
  if (bias) {
    Value elements = c64(0);
    for (auto [digit, stride] : llvm::zip(digits, bias->batchStrides))
      if (stride)
        elements = arith::AddIOp::create(
            b, loc, elements,
            arith::MulIOp::create(b, loc, wide(digit), c64(stride)));
    biasSrc = at(pointers[bias->arg],
                 arith::MulIOp::create(b, loc, elements, c64(biasBytes)));
  }
}

// Shared memory: Q's tile (with TMA, a tile of 64 rows per consumer), then
// the stages of K, then those of V, then the mbarriers.
Value FlashEmitter::kTile(Value stage) {
  return at(sharedBase, add(c32(qBytes), mul(stage, c32(tileBytes))));
}
Value FlashEmitter::vTile(Value stage) {
  return at(sharedBase,
            add(c32(qBytes + stages * tileBytes), mul(stage, c32(tileBytes))));
}
/// The byte offset of key step `step`'s first row in K or V.
Value FlashEmitter::keysAt(Value step, const View &view) {
  return arith::MulIOp::create(b, loc, wide(step),
                               c64(keys * view.rowStride * 2))
      .getResult();
}

/// The key steps this block needs: all, or up to the causal diagonal. In
/// the warp-specialized form every consumer takes them all (the producer
/// loads each tile once for all): a consumer's steps past its own rows'
/// diagonal are masked whole, while the last consumer takes the steps the
/// block waits for anyway (but for ownSteps).
void FlashEmitter::countSteps() {
  stepCount = c32(steps);
  if (causalOffset)
    stepCount = diagonalSteps(q0, rows, stepCount);
  consumerSteps = ownSteps ? diagonalSteps(myQ0, 64, stepCount) : stepCount;
}

/// The steps up to the causal diagonal of rows [first, first + count), at
/// most `bound`.
Value FlashEmitter::diagonalSteps(Value first, int64_t count, Value bound) {
  Value last = arith::DivUIOp::create(
      b, loc, add(first, c32(count - 1 + *causalOffset)), c32(keys));
  return arith::MinUIOp::create(b, loc, add(last, c32(1)), bound).getResult();
}

/// The stage that holds key tile `tile`.
Value FlashEmitter::stageOf(Value tile) {
  return arith::RemUIOp::create(b, loc, tile, c32(stages)).getResult();
}

/// Loads tile `tile` of K and V into its stage, when there is one.
void FlashEmitter::prefetch(Value tile) {
  ifThen(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tile, stepCount),
      [&] {
        Value stage = stageOf(tile);
        loadTile(at(kSrc, keysAt(tile, kView())), kTile(stage), keys,
                 kView().rowStride);
        loadTile(at(vSrc, keysAt(tile, vView())), vTile(stage), keys,
                 vView().rowStride);
      });
}

/// The compute warps' barrier: the block's, or (warp-specialized) named
/// barrier 1 for the compute warps alone.
void FlashEmitter::syncCompute() {
  if (specialized)
    namedBarrier(c32(1), 32 * warps);
  else
    gpu::BarrierOp::create(b, loc);
}

/// The warp-specialized form's mbarriers (sm_90a): Q's, then per stage of K
/// a full and an empty one, then V's. A stage is full when the producer has
/// arrived and its TMA copies have landed, empty when every consumer thread
/// has arrived (after the products reading it are done). Tile t is in stage
/// t mod stages, in phase (t / stages) of its barriers.
Value FlashEmitter::ring(int64_t which, Value stage) {
  return add(barriers, shl(add(stage, c32(1 + which * stages)), 3));
}
Value FlashEmitter::phaseOf(Value tile) {
  return band(arith::DivUIOp::create(b, loc, tile, c32(stages)), 1);
}

/// A consumer's release of the stages of tiles [from, stepCount) without
/// reading them, each once it is full, so that every phase of the empty
/// barriers completes for the producer.
void FlashEmitter::release(Value from) {
  forLoop(b, loc, from, stepCount, 1, {},
          [&](Value t, ValueRange) -> SmallVector<Value> {
            Value s = stageOf(t);
            mbarrierWait(kFull(s), phaseOf(t));
            mbarrierArrive(kEmpty(s));
            mbarrierWait(vFull(s), phaseOf(t));
            mbarrierArrive(vEmpty(s));
            return {};
          });
}

void FlashEmitter::initBarriers() {
  int64_t barrierOffset = qBytes + 2 * stages * tileBytes;
  barriers = sharedAddress(at(sharedBase, c32(barrierOffset)));
  qFull = barriers;
  int64_t readers = 32 * warps;
  ifThen(b, loc,
         arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c32(0)),
         [&] {
           mbarrierInit(qFull, 1);
           for (int64_t s = 0; s < stages; ++s) {
             mbarrierInit(kFull(c32(s)), 1);
             mbarrierInit(kEmpty(c32(s)), readers);
             mbarrierInit(vFull(c32(s)), 1);
             mbarrierInit(vEmpty(c32(s)), readers);
           }
           asmBarrier("fence.mbarrier_init.release.cluster;");
         });
  gpu::BarrierOp::create(b, loc);
}

/// The warp-specialized block's roles: the last warpgroup is the producer
/// (its first thread issues every copy), the warps before it compute. The
/// builder is left in the compute warps' branch.
scf::IfOp FlashEmitter::splitRoles() {
  auto roles =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                              tid, c32(32 * warps)),
                        /*withElse=*/true);
  if (tma) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    emitProducer();
  }
  b.setInsertionPointToStart(&roles.getElseRegion().front());
  if (tma) {
    NVVM::SetMaxRegisterOp::create(b, loc, consumerRegisters(rows),
                                   NVVM::SetMaxRegisterAction::increase);
    // A consumer whose rows all lie past the sequence's end (the last
    // block of a head, 192-row blocks) computes nothing: it only releases
    // each stage it would have read, once the stage is full, so that every
    // phase of the empty barriers still completes.
    if (partial) {
      auto idle = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, myQ0,
                                c32(seqQ)),
          /*withElse=*/true);
      b.setInsertionPointToStart(idle.thenBlock());
      release(c32(0));
      b.setInsertionPointToStart(idle.elseBlock());
    }
  }
  return roles;
}

/// The producer warpgroup (sm_90a): gives its registers to the consumers,
/// and its first thread loads Q, then K's and V's tiles into their rings.
void FlashEmitter::emitProducer() {
  NVVM::SetMaxRegisterOp::create(b, loc, producerRegisters(rows),
                                 NVVM::SetMaxRegisterAction::decrease);
  // Each of Q, K and V through its tensor map (128 bytes each, in global
  // memory), the buffer seen as rows of row_stride elements: the (batch,
  // head)'s first element split into a row and a column (checked by
  // checkTensorMaps to keep a head's columns inside one row).
  Value mapBase =
      LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), pointers.back());
  SmallVector<Value> maps, xs, ys;
  for (int64_t i = 0; i < 3; ++i) {
    const View &view = views[i];
    Value x = c32(view.columnsOf(view.offset)),
          y = c32(view.rowsOf(view.offset));
    for (auto [digit, stride] : llvm::zip(digits, view.batchStrides)) {
      if (int64_t columns = view.columnsOf(stride))
        x = add(x, mul(digit, c32(columns)));
      if (int64_t wholeRows = view.rowsOf(stride))
        y = add(y, mul(digit, c32(wholeRows)));
    }
    xs.push_back(x);
    ys.push_back(y);
    maps.push_back(arith::AddIOp::create(b, loc, mapBase, c64(128 * i)));
  }
  // One thread issues every copy: Q's tiles, then K's and V's, each into a
  // stage its readers have released (a fresh barrier's parity 1 is the
  // phase before its first, so the first pass finds every stage empty).
  // Boxes are 64 columns (128 bytes, the swizzle's) by 64 rows; a tile of
  // `count` rows is dim / 64 column halves of `count` rows each, in that
  // many boxes a half.
  ifThen(b, loc,
         arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                               c32(32 * warps)),
         [&] {
           inlineAsm(Type(), ValueRange{maps[0], maps[1], maps[2]},
                     "prefetch.tensormap [$0];\nprefetch.tensormap [$1];\n"
                     "prefetch.tensormap [$2];",
                     "l,l,l,~{memory}");
           auto loadBoxes = [&](Value tile, int64_t count, Value map, Value x,
                                Value y, Value barrier) {
             for (int64_t h = 0; h < dim / 64; ++h)
               for (int64_t r = 0; r < count / 64; ++r)
                 tmaLoad2d(sharedAddress(
                               at(tile, c32(h * count * 128 + r * 64 * 128))),
                           map, add(x, c32(64 * h)), add(y, c32(64 * r)),
                           barrier);
           };
           mbarrierArriveExpect(qFull, qBytes);
           for (int64_t c = 0; c < rows / 64; ++c)
             loadBoxes(at(sharedBase, c32(c * 64 * dim * 2)), 64, maps[0],
                       xs[0], add(ys[0], add(q0, c32(64 * c))), qFull);
           forLoop(b, loc, c32(0), stepCount, 1, {},
                   [&](Value t, ValueRange) -> SmallVector<Value> {
                     Value s = stageOf(t);
                     Value free = bxor(phaseOf(t), c32(1));
                     Value key = mul(t, c32(keys));
                     mbarrierWait(kEmpty(s), free);
                     mbarrierArriveExpect(kFull(s), tileBytes);
                     loadBoxes(kTile(s), keys, maps[1], xs[1], add(ys[1], key),
                               kFull(s));
                     mbarrierWait(vEmpty(s), free);
                     mbarrierArriveExpect(vFull(s), tileBytes);
                     loadBoxes(vTile(s), keys, maps[2], xs[2], add(ys[2], key),
                               vFull(s));
                     return {};
                   });
         });
}

/// Q, then the first K and V tiles, as two commit groups (when pipelined,
/// the second tiles as a third, and Q and the first tiles are waited for
/// here); with TMA, the waits for Q's and K's first tile.
void FlashEmitter::prologue() {
  if (tma) {
    mbarrierWait(qFull, c32(0));
    mbarrierWait(kFull(c32(0)), c32(0));
    return;
  }
  // (Blocks past a sequence's end are 192-row blocks: TMA's.)
  loadTile(qSrc, sharedBase, rows, qView().rowStride);
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  loadTile(kSrc, kTile(c32(0)), keys, kView().rowStride);
  loadTile(vSrc, vTile(c32(0)), keys, vView().rowStride);
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  if (pipelined) {
    prefetch(c32(1));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);
  // wgmma reads shared memory through the async proxy: what cp.async wrote
  // is made visible to it first.
  if (wgmma)
    asmBarrier("fence.proxy.async.shared::cta;");
  syncCompute();
}

/// Q's A fragments (mma.sync): per m-tile of the warp, four words per 16
/// columns. wgmma reads Q from shared memory: the descriptors of Q's tile
/// and of the first stages of K and V.
void FlashEmitter::loadQ() {
  qFrag.resize(mTiles);
  if (!wgmma) {
    Value half = shr(lane, 4);
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      Value row = add(warpRow(mt), band(lane, 15));
      for (int64_t kk = 0; kk < kSteps; ++kk)
        qFrag[mt].push_back(ldmatrix(
            at(sharedBase, swizzled(row, add(c32(kk * 2), half), rows)),
            false));
    }
    return;
  }
  qDesc =
      descriptor(tma ? at(sharedBase, mul(warpgroup, c32(tileRows * dim * 2)))
                     : sharedBase,
                 0, 1024);
  kDesc0 = descriptor(kTile(c32(0)), 0, 1024);
  vDesc0 = descriptor(vTile(c32(0)), keys * 128, 1024);
}

/// The launch and the reason, next to the graph layer's decisions.
void FlashEmitter::setLaunch() {
  int64_t blocks = batch * blocksPerSeq;
  int64_t shared = sharedBytes(dim, rows, keys, wgmma);
  // Q's, K's and V's tensor maps, 7 numbers each (docs/runtime.md): the
  // step operand, the buffer as rows of row_stride elements, boxes of 64
  // columns by 64 rows, the 128-byte swizzle.
  SmallVector<int64_t> maps;
  if (mapsParameter)
    for (int64_t i = 0; i < 3; ++i) {
      const View &view = views[i];
      maps.append({view.arg, view.rowStride,
                   view.rowsOf(bufferElements[view.arg]), view.rowStride * 2,
                   64, 64, 128});
    }
  kernel::set<kernel::Launch>(
      decl, kernel::LaunchAttr::get(b.getContext(), "flash_attention",
                                    {blocks, 1, 1}, {threads, 1, 1}, shared,
                                    /*staticShared=*/0, /*scratch=*/0,
                                    /*vector=*/0, /*persistent=*/0, maps,
                                    /*waitsForGrids=*/false));
  const std::string pipelinedNote =
      "the steps software-pipelined (the next tile's Q K^T and this tile's "
      "P V issued together, the next softmax under P V, O rescaled under "
      "Q K^T and only when a row's max grows by more than 2^8) (";
  std::string form;
  if (tma)
    form = std::string(rows == 192 ? "three" : "two") +
           " consumer warpgroups of 64 rows and a producer warpgroup, " +
           std::to_string(consumerRegisters(rows)) + " and " +
           std::to_string(producerRegisters(rows)) +
           " registers a thread (setmaxnreg)), keys in steps of " +
           std::to_string(keys) + " loaded by the producer with TMA into " +
           std::to_string(stages) + " stages of K and of V that " +
           (rows == 192 ? "every consumer reads" : "both consumers read") +
           " (mbarriers), " + pipelinedNote;
  else
    form = (wgmma ? std::string("one warpgroup")
                  : std::to_string(16 * mTiles) + " rows per warp") +
           "), keys in steps of " + std::to_string(keys) +
           " through shared memory, " +
           (pipelined ? "in three stages with cp.async, " + pipelinedNote
                      : std::string("double-buffered with cp.async ("));
  kernel::set<kernel::GpuReason>(
      decl,
      b.getStringAttr(
          "flash attention: one block of " + std::to_string(threads / 32) +
          " warps per " + std::to_string(rows) + " query rows (" +
          std::to_string(blocks) + " blocks, " + form + std::to_string(shared) +
          " bytes of dynamic shared memory); Q K^T and P V on tensor cores "
          "(" +
          (wgmma ? "wgmma m64n" + std::to_string(keys) + "k16 and m64n" +
                       std::to_string(dim) +
                       "k16 from 128-byte swizzled shared tiles, P from "
                       "registers, "
                 : std::string("mma.sync m16n8k16, ")) +
          (f16 ? "f16" : "bf16") +
          " in, f32 accumulators); the softmax online in registers" +
          (bias ? std::string("; the bias read from memory per key step") +
                      (bias->rowStride ? ""
                                       : " (once per key: broadcast "
                                         "over the query rows)")
                : std::string()) +
          (causalOffset ? "; the causal mask from indices, key steps past "
                          "the diagonal skipped"
                        : "") +
          "; blocks in decreasing query order, " +
          (heads > 1 ? "the " + std::to_string(heads) + " heads interleaved"
                     : std::string("one head after another"))));
}

} // namespace strata::attention

LogicalResult strata::emitFlashAttention(func::FuncOp decl, func::FuncOp body,
                                         ModuleOp kernels,
                                         int64_t dynamicSharedLimit,
                                         bool wgmma) {
  auto params = kernel::get<kernel::Attention>(decl);
  if (!params)
    return decl.emitError("internal error: the attention kernel ")
           << decl.getSymName() << " has no strata.attention parameters";
  int64_t dim = params.getHeadDim();
  int64_t seqQ = params.getSeqQ();
  int64_t seqK = params.getSeqK();
  int64_t rows = queryRows(params, wgmma);
  bool threeConsumers =
      warpSpecialized(dim, rows) && rows == 192 && seqQ % 64 == 0;
  if (!threeConsumers && ((rows != 64 && rows != 128) || seqQ % rows))
    return decl.emitError("the attention kernel ")
           << decl.getSymName() << " asks for blocks of " << rows
           << " query rows; the kernel takes 64 or 128 that divide its " << seqQ
           << ", or 192 at head dimension 64";
  int64_t shared =
      sharedBytes(dim, rows, stepKeys(dim, rows, seqK, wgmma), wgmma);
  if (shared > std::max<int64_t>(dynamicSharedLimit, 48 * 1024))
    return decl.emitError("the attention kernel ")
           << decl.getSymName() << " needs " << shared
           << " bytes of shared memory; this GPU gives a block at most "
           << std::max<int64_t>(dynamicSharedLimit, 48 * 1024);
  return FlashEmitter(decl, body, kernels, params, wgmma).run();
}
