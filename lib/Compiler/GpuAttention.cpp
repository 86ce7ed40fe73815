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
//   (staleMax in run), so most steps skip the rescale.
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
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "Gpu.h"
#include "GpuTensorCore.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>

using namespace mlir;
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

/// Whether the key steps are software-pipelined (FlashEmitter::run): with
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

/// The query rows of a block as the partitioner chose them for the module's
/// target (strata.attention's query_rows), or attentionQueryRows for this
/// one.
int64_t partitionRows(DictionaryAttr params, bool wgmma) {
  if (auto rows = params.getAs<IntegerAttr>("query_rows"))
    return rows.getInt();
  return strata::attentionQueryRows(
      cast<IntegerAttr>(params.get("head_dim")).getInt(),
      cast<IntegerAttr>(params.get("seq_q")).getInt(), wgmma);
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
int64_t queryRows(DictionaryAttr params, bool wgmma) {
  if (wgmma)
    return partitionRows(params, wgmma);
  return strata::attentionQueryRows(
      cast<IntegerAttr>(params.get("head_dim")).getInt(),
      cast<IntegerAttr>(params.get("seq_q")).getInt(), false);
}

class FlashEmitter : strata::TensorCoreEmitter {
public:
  FlashEmitter(func::FuncOp decl, func::FuncOp body, ModuleOp kernels,
               DictionaryAttr params, bool wgmma)
      : TensorCoreEmitter(decl, body, kernels, wgmma) {
    auto i64 = [&](StringRef name) {
      return cast<IntegerAttr>(params.get(name)).getInt();
    };
    batch = i64("batch");
    seqQ = i64("seq_q");
    seqK = i64("seq_k");
    dim = i64("head_dim");
    scale = cast<FloatAttr>(params.get("scale")).getValueAsDouble();
    if (auto offset = params.getAs<IntegerAttr>("causal_offset"))
      causalOffset = offset.getInt();
    f16 = cast<StringAttr>(params.get("type")).getValue() == "f16";
    batchDims.assign(
        cast<DenseI64ArrayAttr>(params.get("batch_dims")).asArrayRef().begin(),
        cast<DenseI64ArrayAttr>(params.get("batch_dims")).asArrayRef().end());
    for (auto [name, view] :
         {std::pair("q", &views[0]), std::pair("k", &views[1]),
          std::pair("v", &views[2]), std::pair("o", &views[3])}) {
      auto entry = cast<DictionaryAttr>(params.get(name));
      if (auto arg = entry.getAs<IntegerAttr>("arg"))
        view->arg = arg.getInt();
      view->offset = cast<IntegerAttr>(entry.get("offset")).getInt();
      view->rowStride = cast<IntegerAttr>(entry.get("row_stride")).getInt();
      ArrayRef<int64_t> strides =
          cast<DenseI64ArrayAttr>(entry.get("batch_strides")).asArrayRef();
      view->batchStrides.assign(strides.begin(), strides.end());
    }
    if (auto entry = params.getAs<DictionaryAttr>("bias")) {
      Bias parsed;
      parsed.arg = cast<IntegerAttr>(entry.get("arg")).getInt();
      ArrayRef<int64_t> strides =
          cast<DenseI64ArrayAttr>(entry.get("batch_strides")).asArrayRef();
      parsed.batchStrides.assign(strides.begin(), strides.end());
      parsed.rowStride = cast<IntegerAttr>(entry.get("row_stride")).getInt();
      parsed.keyStride = cast<IntegerAttr>(entry.get("key_stride")).getInt();
      parsed.factor = cast<FloatAttr>(entry.get("factor")).getValueAsDouble();
      StringRef type = cast<StringAttr>(entry.get("type")).getValue();
      parsed.type = type == "f32"   ? Type(b.getF32Type())
                    : type == "f16" ? Type(b.getF16Type())
                                    : Type(b.getBF16Type());
      bias = parsed;
    }
    zeroMaskedRows = params.get("zero_masked_rows") != nullptr;
    rows = queryRows(params, wgmma);
    specialized = warpSpecialized(dim, rows);
    mapsParameter = warpSpecialized(dim, partitionRows(params, wgmma));
    warps = computeWarps(dim, rows);
    threads = blockThreads(dim, rows);
    keys = stepKeys(dim, rows, seqK, wgmma);
    // On sm_90a each consumer warpgroup of the warp-specialized form has
    // its own 64 rows and Q tile.
    tileRows = specialized && wgmma ? 64 : rows;
    mTiles = tileRows / (16 * (specialized && wgmma ? 4 : warps));
  }

  LogicalResult run();

private:
  /// The heads whose blocks a causal kernel interleaves (FlashEmitter::run):
  /// all of them when their K and V fit in kInterleaveBytes together, half
  /// of the H100's and H200's 50 MiB L2, else one. Measured on the H200
  /// (bench/RESULTS.md, 2026-11-30 04:36): GPT-2 small's 96 heads of 1024
  /// keys (24 MiB) interleaved, 5.27 -> 5.07 ms; groups of 25 heads of 4096
  /// keys at head dimension 64 (each group's K and V in 25 MiB), 1.72 ->
  /// 1.84 ms, where one head's 32 blocks together already put the long
  /// ones first and share their K and V in L2.
  int64_t causalHeadGroup() const {
    constexpr int64_t kInterleaveBytes = 25ll << 20;
    int64_t perHead = 2 * seqK * dim * 2;
    return batch * perHead <= kInterleaveBytes ? batch : 1;
  }

  /// The byte offset of 16-byte chunk `chunk` of row `row` in a K, V or Q
  /// tile of `tileRows` rows (GpuTensorCore.h).
  Value swizzled(Value row, Value chunk, int64_t tileRows) {
    return TensorCoreEmitter::swizzled(row, chunk, tileRows, dim / 8);
  }
  /// Issues the cp.async copies of a [count, dim] tile whose first row is
  /// at global `src`, rows `rowStride` elements apart, into the shared tile
  /// at `tile`.
  void loadTile(Value src, Value tile, int64_t count, int64_t rowStride) {
    TensorCoreEmitter::loadTile(tid, 32 * warps, src, tile, count, dim / 8,
                                rowStride * 2);
  }
  /// 2^x with subnormal results flushed to zero: one MUFU.EX2, where
  /// llvm.exp2's ex2.approx.f32 (which keeps them) costs three more
  /// instructions. The kernel's exponents are x - max <= 0 and what they
  /// give is summed against the max's own 1, so a result below 2^-126
  /// changes nothing.
  Value exp2(Value x) {
    return LLVM::CallIntrinsicOp::create(
               b, loc, f32(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
               ValueRange{x})
        .getResult(0);
  }

  int64_t batch = 1, seqQ = 0, seqK = 0, dim = 0;
  double scale = 1.0;
  std::optional<int64_t> causalOffset;
  /// The scores' additive bias (Attention.h's AttentionBias): its buffer's
  /// parameter, strides in elements (0 along broadcast dimensions), the
  /// factor it is multiplied by, and its element type.
  struct Bias {
    int64_t arg = -1, rowStride = 0, keyStride = 0;
    SmallVector<int64_t> batchStrides;
    double factor = 1.0;
    Type type;
  };
  std::optional<Bias> bias;
  /// Rows whose every key the bias masks with -inf give 0, not NaN.
  bool zeroMaskedRows = false;
  /// Query rows per block, and 16-row m-tiles per warp.
  int64_t rows = 64, mTiles = 1;
  /// Warp-specialized (warpSpecialized); the compute warps, the block's
  /// threads; the rows of a Q tile in shared memory (a consumer
  /// warpgroup's 64 in the warp-specialized form on sm_90a, else `rows`).
  bool specialized = false;
  /// Whether the kernel takes the tensor maps' parameter after the result:
  /// the warp-specialized form's, and the portable PTX's variant of it,
  /// which leaves it unread (the step passes what the cubin's form takes).
  bool mapsParameter = false;
  int64_t warps = 4, threads = 128, tileRows = 64;
  /// The keys of a step (stepKeys).
  int64_t keys = 64;
  /// Q's batch dimensions, and where Q, K, V and O are (Attention.h's
  /// AttentionOperand; `arg` is the buffer's parameter, -1 for O: the last).
  SmallVector<int64_t> batchDims;
  struct View {
    int64_t arg = -1, offset = 0, rowStride = 0;
    SmallVector<int64_t> batchStrides;
    /// The view as a tensor map sees its buffer, rows of rowStride
    /// elements (rowStride > 0): an element offset (the first element's,
    /// or a batch stride) split into whole rows and the columns left over.
    int64_t rowsOf(int64_t elements) const { return elements / rowStride; }
    int64_t columnsOf(int64_t elements) const { return elements % rowStride; }
  } views[4];

  // Per-thread values set by run().
  Value tid, lane, sharedBase;
};

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
  // (mapsParameter). Without wgmma no block is warp-specialized
  // (queryRows), so `specialized` is the TMA form.
  bool tma = specialized && wgmma;
  SmallVector<int64_t> bufferElements;
  for (BlockArgument arg : body.getBody().front().getArguments())
    bufferElements.push_back(cast<MemRefType>(arg.getType()).getNumElements());
  // A map sees Q's, K's or V's buffer as rows of row_stride elements, and
  // a (batch, head)'s first element as a row and a column: each batch
  // stride splits into whole rows and columns, and the columns a head can
  // reach must stay inside one row. The views the partitioner absorbs
  // (transposes and gathers of a contiguous buffer, the head dimension its
  // last) always do; anything else is an internal error, not a wrong read.
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
  if (mapsParameter)
    body.getBody().front().addArgument(MemRefType::get({384}, b.getI8Type()),
                                       loc);
  // The generic body is replaced whole (a causal mask's constant of S x T
  // values goes with it).
  SmallVector<Value> pointers = resetBody(threads);
  Value outPointer =
      mapsParameter ? pointers[pointers.size() - 2] : pointers.back();
  sharedBase = sharedMemory(kSharedName, wgmma);

  tid = threadIndex();
  Value bid = blockIndex();
  // On sm_90a the warp-specialized block's warpgroups: consumers 0 and 1,
  // the producer as 2. A wgmma product gives warp w of its warpgroup
  // rows [16 w, 16 w + 16).
  Value warpgroup = tma ? uniformWarpgroup(tid) : Value();
  Value warp = tma ? band(shr(tid, 5), 3) : shr(tid, 5);
  lane = band(tid, 31);
  Value group = shr(lane, 2), quad = band(lane, 3);

  // The block's (batch, head) and query block. Blocks start in decreasing
  // query order. Heads go in groups (causalHeadGroup): within a group the
  // block index walks the heads fastest, so that every head's longest
  // blocks start before any head's shorter ones (a causal block's work
  // grows with its query block) and the grid's last blocks are short ones
  // of many heads, not long ones of the last heads. A group of one head
  // (long sequences, and no mask, where every block does the same work)
  // keeps each head's blocks together.
  int64_t blocksPerSeq = strata::attentionBlocksPerSequence(seqQ, rows);
  // Whether a head's last block ends past its sequence (192-row blocks, on
  // sm_90a only; sequences are whole 64-row parts, a consumer warpgroup's).
  bool partial = seqQ % rows != 0;
  int64_t heads = causalOffset ? causalHeadGroup() : 1;
  Value groupIndex =
      arith::DivUIOp::create(b, loc, bid, c32(heads * blocksPerSeq));
  Value within = arith::RemUIOp::create(b, loc, bid, c32(heads * blocksPerSeq));
  Value head = add(mul(groupIndex, c32(heads)),
                   arith::RemUIOp::create(b, loc, within, c32(heads)));
  Value qBlock =
      arith::SubIOp::create(b, loc, c32(blocksPerSeq - 1),
                            arith::DivUIOp::create(b, loc, within, c32(heads)));
  Value q0 = mul(qBlock, c32(rows));
  // The first of this thread's rows: a consumer warpgroup's own 64.
  Value myQ0 = tma ? add(q0, shl(warpgroup, 6)) : q0;
  // The (batch, head) index's digits over the batch dimensions, and each
  // operand's first row for them, in bytes.
  SmallVector<Value> digits(batchDims.size());
  {
    Value rest = head;
    for (int64_t i = int64_t(batchDims.size()) - 1; i >= 0; --i) {
      digits[i] = arith::RemUIOp::create(b, loc, rest, c32(batchDims[i]));
      rest = arith::DivUIOp::create(b, loc, rest, c32(batchDims[i]));
    }
  }
  auto start = [&](const View &view, Value firstRow) {
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
  };
  const View &qView = views[0], &kView = views[1], &vView = views[2],
             &oView = views[3];
  Value qSrc = at(pointers[qView.arg], start(qView, q0));
  Value kSrc = at(pointers[kView.arg], start(kView, Value()));
  Value vSrc = at(pointers[vView.arg], start(vView, Value()));
  Value oDst = at(outPointer, start(oView, myQ0));
  // The bias's elements for this (batch, head) start at biasSrc.
  Value biasSrc;
  int64_t biasBytes = bias ? bias->type.getIntOrFloatBitWidth() / 8 : 0;
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

  // Shared memory: Q's tile (with TMA, a tile of 64 rows per consumer),
  // then the stages of K, then those of V, then the mbarriers.
  bool pipelined = pipelinedSteps(dim, rows, wgmma);
  int64_t stages = keyStages(dim, rows, keys, wgmma);
  int64_t qBytes = rows * dim * 2, tileBytes = keys * dim * 2;
  auto kTile = [&](Value stage) {
    return at(sharedBase, add(c32(qBytes), mul(stage, c32(tileBytes))));
  };
  auto vTile = [&](Value stage) {
    return at(sharedBase, add(c32(qBytes + stages * tileBytes),
                              mul(stage, c32(tileBytes))));
  };
  auto keysAt = [&](Value step, const View &view) {
    return arith::MulIOp::create(b, loc, wide(step),
                                 c64(keys * view.rowStride * 2))
        .getResult();
  };

  // The key steps this block needs: all, or up to the causal diagonal. In
  // the warp-specialized form every consumer takes them all (the producer
  // loads each tile once for all): a consumer's steps past its own rows'
  // diagonal are masked whole, while the last consumer takes the steps the
  // block waits for anyway.
  int64_t steps = seqK / keys;
  Value stepCount = c32(steps);
  // The steps up to the causal diagonal of rows [first, first + count),
  // at most `bound`.
  auto diagonalSteps = [&](Value first, int64_t count, Value bound) {
    Value last = arith::DivUIOp::create(
        b, loc, add(first, c32(count - 1 + *causalOffset)), c32(keys));
    return arith::MinUIOp::create(b, loc, add(last, c32(1)), bound).getResult();
  };
  if (causalOffset)
    stepCount = diagonalSteps(q0, rows, stepCount);
  // A consumer's own steps (192-row blocks on sm_90a, causal): up to its
  // own rows' diagonal. The steps after, masked whole for it, it releases
  // without reading (release). On the H200 (bench/RESULTS.md, 2026-12-01
  // 19:58) d64 s4k causal went 1.309 -> 1.244 ms. In 128-row blocks of
  // 128-key steps, whose consumers' last steps are the block's (but for
  // offsets), the same code made d128 s4k and s16k causal 1% slower.
  bool ownSteps = causalOffset && specialized && wgmma && rows == 192;
  Value consumerSteps =
      ownSteps ? diagonalSteps(myQ0, 64, stepCount) : stepCount;

  // The stage that holds key tile `tile`.
  auto stageOf = [&](Value tile) {
    return arith::RemUIOp::create(b, loc, tile, c32(stages)).getResult();
  };
  // Loads tile `tile` of K and V into its stage, when there is one.
  auto prefetch = [&](Value tile) {
    ifThen(b, loc,
           arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tile,
                                 stepCount),
           [&] {
             Value stage = stageOf(tile);
             loadTile(at(kSrc, keysAt(tile, kView)), kTile(stage), keys,
                      kView.rowStride);
             loadTile(at(vSrc, keysAt(tile, vView)), vTile(stage), keys,
                      vView.rowStride);
           });
  };

  // The compute warps' barrier: the block's, or (warp-specialized) named
  // barrier 1 for the compute warps alone.
  auto syncCompute = [&] {
    if (specialized)
      namedBarrier(c32(1), 32 * warps);
    else
      gpu::BarrierOp::create(b, loc);
  };

  // The warp-specialized form's mbarriers (sm_90a): Q's, then per stage of
  // K a full and an empty one, then V's. A stage is full when the producer
  // has arrived and its TMA copies have landed, empty when every consumer
  // thread has arrived (after the products reading it are done). Tile t is
  // in stage t mod stages, in phase (t / stages) of its barriers.
  int64_t barrierOffset = qBytes + 2 * stages * tileBytes;
  Value barriers, qFull;
  auto ring = [&](int64_t which, Value stage) {
    return add(barriers, shl(add(stage, c32(1 + which * stages)), 3));
  };
  auto kFull = [&](Value s) { return ring(0, s); };
  auto kEmpty = [&](Value s) { return ring(1, s); };
  auto vFull = [&](Value s) { return ring(2, s); };
  auto vEmpty = [&](Value s) { return ring(3, s); };
  auto phaseOf = [&](Value tile) {
    return band(arith::DivUIOp::create(b, loc, tile, c32(stages)), 1);
  };
  // A consumer's release of the stages of tiles [from, stepCount) without
  // reading them, each once it is full, so that every phase of the empty
  // barriers completes for the producer.
  auto release = [&](Value from) {
    forLoop(b, loc, from, stepCount, 1, {},
            [&](Value t, ValueRange) -> SmallVector<Value> {
              Value s = stageOf(t);
              mbarrierWait(kFull(s), phaseOf(t));
              mbarrierArrive(kEmpty(s));
              mbarrierWait(vFull(s), phaseOf(t));
              mbarrierArrive(vEmpty(s));
              return {};
            });
  };
  scf::IfOp roles;
  if (tma) {
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
  if (specialized) {
    // The last warpgroup is the producer (its first thread issues every
    // copy); the warps before it compute.
    roles = scf::IfOp::create(b, loc,
                              arith::CmpIOp::create(b, loc,
                                                    arith::CmpIPredicate::uge,
                                                    tid, c32(32 * warps)),
                              /*withElse=*/true);
    if (tma) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&roles.getThenRegion().front());
      // The producer warpgroup's registers go to the consumers.
      NVVM::SetMaxRegisterOp::create(b, loc, producerRegisters(rows),
                                     NVVM::SetMaxRegisterAction::decrease);
      // Each of Q, K and V through its tensor map (128 bytes each, in
      // global memory), the buffer seen as rows of row_stride elements:
      // the (batch, head)'s first element split into a row and a column
      // (checked above to keep a head's columns inside one row).
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
      // One thread issues every copy: Q's tiles, then K's and V's, each
      // into a stage its readers have released (a fresh barrier's parity
      // 1 is the phase before its first, so the first pass finds every
      // stage empty). Boxes are 64 columns (128 bytes, the swizzle's) by
      // 64 rows; a tile of `count` rows is dim / 64 column halves of
      // `count` rows each, in that many boxes a half.
      ifThen(b, loc,
             arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                   c32(32 * warps)),
             [&] {
               inlineAsm(Type(), ValueRange{maps[0], maps[1], maps[2]},
                         "prefetch.tensormap [$0];\nprefetch.tensormap [$1];\n"
                         "prefetch.tensormap [$2];",
                         "l,l,l,~{memory}");
               auto loadBoxes = [&](Value tile, int64_t count, Value map,
                                    Value x, Value y, Value barrier) {
                 for (int64_t h = 0; h < dim / 64; ++h)
                   for (int64_t r = 0; r < count / 64; ++r)
                     tmaLoad2d(sharedAddress(at(
                                   tile, c32(h * count * 128 + r * 64 * 128))),
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
                         loadBoxes(kTile(s), keys, maps[1], xs[1],
                                   add(ys[1], key), kFull(s));
                         mbarrierWait(vEmpty(s), free);
                         mbarrierArriveExpect(vFull(s), tileBytes);
                         loadBoxes(vTile(s), keys, maps[2], xs[2],
                                   add(ys[2], key), vFull(s));
                         return {};
                       });
             });
    }
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    if (tma) {
      NVVM::SetMaxRegisterOp::create(b, loc, consumerRegisters(rows),
                                     NVVM::SetMaxRegisterAction::increase);
      // A consumer whose rows all lie past the sequence's end (the last
      // block of a head, 192-row blocks) computes nothing: it only
      // releases each stage it would have read, once the stage is full,
      // so that every phase of the empty barriers still completes.
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
  }

  // Prologue: Q, then the first K and V tiles, as two commit groups (when
  // pipelined, the second tiles as a third, and Q and the first tiles are
  // waited for here); with TMA, the waits for Q's and K's first tile.
  if (tma) {
    mbarrierWait(qFull, c32(0));
    mbarrierWait(kFull(c32(0)), c32(0));
  } else {
    // (Blocks past a sequence's end are 192-row blocks: TMA's.)
    loadTile(qSrc, sharedBase, rows, qView.rowStride);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    loadTile(kSrc, kTile(c32(0)), keys, kView.rowStride);
    loadTile(vSrc, vTile(c32(0)), keys, vView.rowStride);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    if (pipelined) {
      prefetch(c32(1));
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);
    // wgmma reads shared memory through the async proxy: what cp.async
    // wrote is made visible to it first.
    if (wgmma)
      asmBarrier("fence.proxy.async.shared::cta;");
    syncCompute();
  }

  // The first row of m-tile mt that warp w owns: with mma.sync, warp w owns
  // rows [w * 16 * mTiles, (w + 1) * 16 * mTiles); a warpgroup product
  // gives warp w rows [16 w, 16 w + 16) of each 64-row m-tile.
  int64_t kSteps = dim / 16;
  auto warpRow = [&](int64_t mt) {
    return wgmma ? add(shl(warp, 4), c32(64 * mt))
                 : add(mul(warp, c32(16 * mTiles)), c32(16 * mt));
  };
  // Q's A fragments (mma.sync): per m-tile of the warp, four words per 16
  // columns. wgmma reads Q from shared memory.
  SmallVector<SmallVector<SmallVector<Value>>> qFrag(mTiles);
  if (!wgmma) {
    Value half = shr(lane, 4);
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      Value row = add(warpRow(mt), band(lane, 15));
      for (int64_t kk = 0; kk < kSteps; ++kk)
        qFrag[mt].push_back(ldmatrix(
            at(sharedBase, swizzled(row, add(c32(kk * 2), half), rows)),
            false));
    }
  }
  // The descriptors of Q's tile and of the first stages of K and V.
  Value qDesc, kDesc0, vDesc0;
  if (wgmma) {
    qDesc =
        descriptor(tma ? at(sharedBase, mul(warpgroup, c32(tileRows * dim * 2)))
                       : sharedBase,
                   0, 1024);
    kDesc0 = descriptor(kTile(c32(0)), 0, 1024);
    vDesc0 = descriptor(vTile(c32(0)), keys * 128, 1024);
  }
  // Loop state, per m-tile: O's accumulators (dim/8 tiles of 4), then m and
  // l for the thread's two rows (group and group + 8).
  int64_t oTiles = dim / 8;
  int64_t oCount = mTiles * oTiles * 4;
  auto oIndex = [&](int64_t mt, int64_t dt, int64_t e) {
    return (mt * oTiles + dt) * 4 + e;
  };
  SmallVector<Value> init(oCount, cf(0.0));
  Value negInf = cf(-std::numeric_limits<double>::infinity());
  init.append(2 * mTiles, negInf);
  init.append(2 * mTiles, cf(0.0));

  // The descriptors of a stage's K and V tiles: the stages' tiles are
  // consecutive.
  auto stageOffset = [&](Value stage) {
    return wide(mul(stage, c32(tileBytes >> 4)));
  };
  using Scores = SmallVector<SmallVector<SmallVector<Value>>>;
  // S = Q Kᵀ on wgmma, the K tile in `stage`: one warpgroup product per
  // m-tile and 16 columns of Q (the k-step's 32 bytes within a 128-byte
  // half row), issued and committed; the caller waits for them.
  auto issueScores = [&](Value stage, bool fence = true) {
    Value kDesc = arith::AddIOp::create(b, loc, kDesc0, stageOffset(stage));
    Value poison = LLVM::PoisonOp::create(b, loc, f32());
    if (fence)
      asmBarrier("wgmma.fence.sync.aligned;");
    SmallVector<SmallVector<Value>> acc(mTiles,
                                        SmallVector<Value>(keys / 2, poison));
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t kk = 0; kk < kSteps; ++kk)
        acc[mt] =
            wgmmaStep(acc[mt],
                      advance(qDesc, (kk / 4) * tileRows * 128 + mt * 64 * 128 +
                                         (kk % 4) * 32),
                      {}, advance(kDesc, (kk / 4) * keys * 128 + (kk % 4) * 32),
                      /*transposeB=*/false, /*accumulate=*/kk > 0);
    asmBarrier("wgmma.commit_group.sync.aligned;");
    return acc;
  };
  // wgmma's accumulators, once waited for, as S's per m-tile, tiles of 8
  // keys.
  auto toScores = [&](SmallVector<SmallVector<Value>> acc) {
    Scores s(mTiles, SmallVector<SmallVector<Value>>(keys / 8));
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      acc[mt] = fenceOperands(acc[mt]);
      for (int64_t nt = 0; nt < keys / 8; ++nt)
        s[mt][nt].assign(acc[mt].begin() + 4 * nt,
                         acc[mt].begin() + 4 * nt + 4);
    }
    return s;
  };
  // S = Q Kᵀ, the K tile in `stage`, computed and waited for.
  auto scores = [&](Value stage) {
    if (wgmma) {
      SmallVector<SmallVector<Value>> acc = issueScores(stage);
      asmBarrier("wgmma.wait_group.sync.aligned 0;");
      return toScores(acc);
    }
    // Each K fragment feeds every m-tile.
    Value zero = cf(0.0);
    Scores s(mTiles, SmallVector<SmallVector<Value>>(
                         keys / 8, SmallVector<Value>(4, zero)));
    Value kBase = kTile(stage);
    Value row = add(band(lane, 7), shl(shr(lane, 4), 3));
    Value half = band(shr(lane, 3), 1);
    for (int64_t np = 0; np < keys / 16; ++np)
      for (int64_t kk = 0; kk < kSteps; ++kk) {
        SmallVector<Value> r =
            ldmatrix(at(kBase, swizzled(add(row, c32(np * 16)),
                                        add(c32(kk * 2), half), keys)),
                     false);
        for (int64_t mt = 0; mt < mTiles; ++mt) {
          s[mt][2 * np] = mma(qFrag[mt][kk], {r[0], r[1]}, s[mt][2 * np]);
          s[mt][2 * np + 1] =
              mma(qFrag[mt][kk], {r[2], r[3]}, s[mt][2 * np + 1]);
        }
      }
    return s;
  };

  // The causal mask and the online softmax of key step `step`'s scores:
  // updates m and l (the thread's 2 rows per m-tile), and returns P, S's
  // exponentials packed as the A fragments of P V (per m-tile, four words
  // per 16 keys), and each row's correction of O.
  double scaleLog2 = scale / std::log(2.0);
  // When pipelined, a row's max moves only when a step's scores pass it by
  // more than kStaleMaxLog2 (FlashAttention-4's rescaling threshold): the
  // exponentials then stay below 2^8 and O and l below 2^8 times their
  // exact values, which the f32 accumulators and P's bf16 or f16 hold as
  // exactly, and O / l is the same for any max. Most steps then leave
  // every row's max, and a warp whose rows all kept theirs skips O's
  // rescale (rescale). Measured on the H200 with 64-key steps (2026-12-01
  // 12:52): d128 s4k 4.37 -> 4.28 ms, and 4.22-4.26 with O rescaled under
  // the next S.
  constexpr double kStaleMaxLog2 = 8.0;
  bool staleMax = pipelined;
  Value myRow0 = add(myQ0, group);
  // The scores of key step `step` scaled into the log2 domain with the
  // bias added: x * scale / ln 2 + bias * factor / ln 2, one multiply-add.
  // The bias is read once per (row, key) the thread holds, once per key
  // when it is broadcast over the rows. Its masked entries are made finite
  // so that a key step every key of which a row's mask drops cannot turn
  // the running max (and with it O) into NaN: -inf becomes kMaskedLog2 and
  // anything finite is kept above kLowestLog2, 10 times higher. A row's
  // final max below kMaskedLog2 / 2 then means every key had -inf (the
  // reference's NaN, or 0 under zeroMaskedRows: the epilogue), while a row
  // whose keys all carry the type's lowest value gets their uniform
  // weights, as the softmax of equal scores does.
  constexpr double kMaskedLog2 = -1e38, kLowestLog2 = -1e37;
  // Where element e of S's tile (mt, nt) lies, in the accumulators' layout:
  // the thread's rows group and group + 8 of the m-tile, its keys 2 * quad
  // and 2 * quad + 1 of the 8-key tile. `key0` is the step's first key for
  // this thread (firstKey).
  auto firstKey = [&](Value step) {
    return add(mul(step, c32(keys)), shl(quad, 1));
  };
  auto fragmentRow = [&](int64_t mt, int64_t e) {
    return add(add(myRow0, warpRow(mt)), c32(8 * (e / 2)));
  };
  auto fragmentKey = [&](Value key0, int64_t nt, int64_t e) {
    return add(key0, c32(nt * 8 + e % 2));
  };
  auto addBias = [&](Value step, Scores &s) {
    Value key0 = firstKey(step);
    llvm::DenseMap<std::pair<int64_t, int64_t>, Value> loaded;
    auto term = [&](int64_t mt, int64_t e, int64_t nt) {
      int64_t rowKey = bias->rowStride ? 2 * mt + e / 2 : -1;
      Value &cached = loaded[{rowKey, nt * 2 + e % 2}];
      if (cached)
        return cached;
      Value keyIndex = fragmentKey(key0, nt, e);
      Value elements =
          arith::MulIOp::create(b, loc, wide(keyIndex), c64(bias->keyStride));
      if (bias->rowStride) {
        Value row = fragmentRow(mt, e);
        elements = arith::AddIOp::create(
            b, loc, elements,
            arith::MulIOp::create(b, loc, wide(row), c64(bias->rowStride)));
      }
      Value x = LLVM::LoadOp::create(
          b, loc, bias->type,
          at(biasSrc, arith::MulIOp::create(b, loc, elements, c64(biasBytes))));
      if (!x.getType().isF32())
        x = arith::ExtFOp::create(b, loc, f32(), x);
      x = arith::MulFOp::create(b, loc, x, cf(bias->factor / std::log(2.0)));
      Value dropped =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                cf(-std::numeric_limits<double>::infinity()));
      x = arith::SelectOp::create(
          b, loc, dropped, cf(kMaskedLog2),
          arith::MaxNumFOp::create(b, loc, x, cf(kLowestLog2)));
      cached = x;
      return x;
    };
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t nt = 0; nt < keys / 8; ++nt)
        for (int64_t e = 0; e < 4; ++e) {
          Value &x = s[mt][nt][e];
          x = arith::AddFOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, x, cf(scaleLog2),
                                    arith::FastMathFlags::contract),
              term(mt, e, nt), arith::FastMathFlags::contract);
        }
  };
  auto softmax = [&](Value step, Scores s, MutableArrayRef<Value> m,
                     MutableArrayRef<Value> l,
                     SmallVector<Value> &corrections) {
    // With a positive scale the maximum is taken of the raw scores and each
    // exponent is one fused multiply-add, s * scale - m (below). Any other
    // scale is applied first, so that the mask's -inf stays -inf (masked
    // before a negative scale it became +inf, and NaN with a zero one).
    bool positive = scaleLog2 > 0 && !bias;
    if (bias)
      addBias(step, s);
    else if (!positive)
      for (auto &tile : s)
        for (auto &fragment : tile)
          for (Value &x : fragment)
            x = arith::MulFOp::create(b, loc, x, cf(scaleLog2));
    // The causal mask, on the key steps that cross the diagonal only: a
    // step is masked when its last key is past the block's first row's
    // limit (every other step is whole for every row).
    if (causalOffset) {
      Value lastKey = add(mul(step, c32(keys)), c32(keys - 1));
      Value crosses =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, lastKey,
                                add(myQ0, c32(*causalOffset)));
      SmallVector<Value> flat;
      for (auto &tile : s)
        for (auto &fragment : tile)
          flat.append(fragment.begin(), fragment.end());
      SmallVector<Type> types(flat.size(), f32());
      auto masked = scf::IfOp::create(b, loc, types, crosses, true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(masked.thenBlock());
        SmallVector<Value> kept;
        Value key0 = firstKey(step);
        for (int64_t mt = 0; mt < mTiles; ++mt)
          for (int64_t nt = 0; nt < keys / 8; ++nt)
            for (int64_t e = 0; e < 4; ++e) {
              Value limit = add(fragmentRow(mt, e), c32(*causalOffset));
              Value keyIndex = fragmentKey(key0, nt, e);
              Value keep = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ule, keyIndex, limit);
              kept.push_back(
                  arith::SelectOp::create(b, loc, keep, s[mt][nt][e], negInf));
            }
        scf::YieldOp::create(b, loc, kept);
        b.setInsertionPointToStart(masked.elseBlock());
        scf::YieldOp::create(b, loc, flat);
      }
      size_t i = 0;
      for (auto &tile : s)
        for (auto &fragment : tile)
          for (Value &x : fragment)
            x = masked.getResult(i++);
    }

    // Per m-tile and row half h.
    corrections.clear();
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t h = 0; h < 2; ++h) {
        int64_t r = 2 * mt + h;
        SmallVector<Value> row;
        for (int64_t nt = 0; nt < keys / 8; ++nt)
          for (int64_t e = 0; e < 2; ++e)
            row.push_back(s[mt][nt][2 * h + e]);
        // Trees (combinePairwise): the row max and sum are on each key
        // step's critical path.
        Value rowMax =
            strata::combinePairwise(row, [&](Value x, Value y) -> Value {
              return arith::MaxNumFOp::create(b, loc, x, y);
            });
        for (int32_t mask : {1, 2})
          rowMax = arith::MaxNumFOp::create(b, loc, rowMax,
                                            shuffleXor(rowMax, mask));
        if (positive)
          rowMax = arith::MulFOp::create(b, loc, rowMax, cf(scaleLog2));
        Value mNew;
        if (staleMax) {
          // A first finite max always moves m (its distance from -inf is
          // +inf); a row masked whole keeps its m (NaN > 8 is false).
          Value grow = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OGT,
              arith::SubFOp::create(b, loc, rowMax, m[r]), cf(kStaleMaxLog2));
          mNew = arith::SelectOp::create(b, loc, grow, rowMax, m[r]);
        } else {
          mNew = arith::MaxNumFOp::create(b, loc, m[r], rowMax);
        }
        Value correction =
            exp2(arith::SubFOp::create(b, loc, m[r], mNew).getResult());
        SmallVector<Value> terms;
        for (int64_t nt = 0; nt < keys / 8; ++nt)
          for (int64_t e = 0; e < 2; ++e) {
            Value &x = s[mt][nt][2 * h + e];
            Value exponent =
                positive
                    ? arith::SubFOp::create(
                          b, loc,
                          arith::MulFOp::create(b, loc, x, cf(scaleLog2),
                                                arith::FastMathFlags::contract),
                          mNew, arith::FastMathFlags::contract)
                          .getResult()
                    : arith::SubFOp::create(b, loc, x, mNew).getResult();
            x = exp2(exponent);
            terms.push_back(x);
          }
        Value sum =
            strata::combinePairwise(terms, [&](Value x, Value y) -> Value {
              return arith::AddFOp::create(b, loc, x, y);
            });
        l[r] = arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, l[r], correction), sum);
        m[r] = mNew;
        corrections.push_back(correction);
      }
    SmallVector<SmallVector<Value>> p(mTiles);
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t ks = 0; ks < keys / 16; ++ks) {
        auto &t0 = s[mt][2 * ks], &t1 = s[mt][2 * ks + 1];
        p[mt].append({pack(t0[0], t0[1]), pack(t0[2], t0[3]),
                      pack(t1[0], t1[1]), pack(t1[2], t1[3])});
      }
    return p;
  };
  // O rescaled by each row's correction (exactly 1 where the row's max did
  // not move). With the stale max (staleMax) a warp whose rows all kept
  // theirs skips it, a branch on a warp vote; without, most steps move some
  // row's max, and skipping behind a branch was slower on the H200
  // (bench/RESULTS.md, 2026-11-30 12:41).
  auto rescale = [&](MutableArrayRef<Value> o, ArrayRef<Value> corrections) {
    std::optional<OpBuilder::InsertionGuard> guard;
    scf::IfOp skip;
    if (staleMax) {
      Value any = arith::ConstantIntOp::create(b, loc, 0, 1);
      for (Value c : corrections)
        any = arith::OrIOp::create(
            b, loc, any,
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, c,
                                  cf(1.0)));
      Value warpAny = NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), c32(-1),
                                               any, NVVM::VoteSyncKind::any);
      SmallVector<Type> types(o.size(), f32());
      skip = scf::IfOp::create(b, loc, types, warpAny, true);
      guard.emplace(b);
      b.setInsertionPointToStart(skip.elseBlock());
      scf::YieldOp::create(b, loc, SmallVector<Value>(o.begin(), o.end()));
      b.setInsertionPointToStart(skip.thenBlock());
    }
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t dt = 0; dt < oTiles; ++dt)
          for (int64_t e = 0; e < 2; ++e) {
            Value &acc = o[oIndex(mt, dt, 2 * h + e)];
            acc = arith::MulFOp::create(b, loc, acc, corrections[2 * mt + h]);
          }
    if (staleMax) {
      scf::YieldOp::create(b, loc, SmallVector<Value>(o.begin(), o.end()));
      guard.reset();
      for (size_t i = 0; i < o.size(); ++i)
        o[i] = skip.getResult(i);
    }
  };
  // wgmma's operands of O += P V, O's accumulators and P's words, fenced:
  // nothing computing them moves past this point.
  int64_t perTile = oTiles * 4;
  auto fenceProductOperands = [&](MutableArrayRef<Value> o,
                                  SmallVector<SmallVector<Value>> &p) {
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      SmallVector<Value> both(o.begin() + mt * perTile,
                              o.begin() + (mt + 1) * perTile);
      both.append(p[mt]);
      both = fenceOperands(both);
      std::copy(both.begin(), both.begin() + perTile, o.begin() + mt * perTile);
      p[mt].assign(both.begin() + perTile, both.end());
    }
  };
  // O += P V, V's tile in `stage`. With wgmma the products are committed
  // and, with `wait`, waited for (else O's accumulators are still being
  // written: the caller waits before reading them). `fenced`: the caller
  // fenced the operands and issued wgmma.fence.
  auto attend = [&](MutableArrayRef<Value> o, SmallVector<SmallVector<Value>> p,
                    Value stage, bool wait, bool fenced = false) {
    if (wgmma) {
      // One warpgroup product per m-tile and 16 keys, P from registers, V
      // MN-major (its rows are keys): 16 keys are 2048 bytes.
      Value vDesc = arith::AddIOp::create(b, loc, vDesc0, stageOffset(stage));
      if (!fenced) {
        fenceProductOperands(o, p);
        asmBarrier("wgmma.fence.sync.aligned;");
      }
      for (int64_t mt = 0; mt < mTiles; ++mt)
        for (int64_t ks = 0; ks < keys / 16; ++ks) {
          SmallVector<Value> d =
              wgmmaStep(ArrayRef<Value>(o).slice(mt * perTile, perTile),
                        Value(), ArrayRef<Value>(p[mt]).slice(4 * ks, 4),
                        advance(vDesc, ks * 16 * 128), /*transposeB=*/true,
                        /*accumulate=*/true);
          std::copy(d.begin(), d.end(), o.begin() + mt * perTile);
        }
      asmBarrier("wgmma.commit_group.sync.aligned;");
      if (wait)
        asmBarrier("wgmma.wait_group.sync.aligned 0;");
      for (int64_t mt = 0; mt < mTiles; ++mt) {
        SmallVector<Value> fenced =
            fenceOperands(ArrayRef<Value>(o).slice(mt * perTile, perTile));
        std::copy(fenced.begin(), fenced.end(), o.begin() + mt * perTile);
      }
      return;
    }
    // Each V fragment feeds every m-tile.
    Value vBase = vTile(stage);
    Value row = add(band(lane, 7), shl(band(shr(lane, 3), 1), 3));
    Value half = shr(lane, 4);
    for (int64_t ks = 0; ks < keys / 16; ++ks) {
      for (int64_t dp = 0; dp < dim / 16; ++dp) {
        SmallVector<Value> r =
            ldmatrix(at(vBase, swizzled(add(row, c32(ks * 16)),
                                        add(c32(dp * 2), half), keys)),
                     true);
        for (int64_t mt = 0; mt < mTiles; ++mt)
          for (int64_t j = 0; j < 2; ++j) {
            int64_t first = oIndex(mt, 2 * dp + j, 0);
            SmallVector<Value> d = mma(ArrayRef<Value>(p[mt]).slice(4 * ks, 4),
                                       {r[2 * j], r[2 * j + 1]},
                                       ArrayRef<Value>(o).slice(first, 4));
            std::copy(d.begin(), d.end(), o.begin() + first);
          }
      }
    }
  };

  // The key-step loops' state: O's accumulators, then m and l (the
  // thread's 2 rows per m-tile each) and, when pipelined, P's words (per
  // m-tile, four per 16 keys) and O's pending corrections (c, one per m
  // and l).
  int64_t pWords = keys / 4;
  struct StepState {
    SmallVector<Value> o, m, l;
    SmallVector<SmallVector<Value>> p;
    SmallVector<Value> c;
  };
  auto unpackState = [&](ValueRange values, bool withP) {
    auto it = values.begin();
    auto take = [&](int64_t n) {
      SmallVector<Value> part(it, it + n);
      it += n;
      return part;
    };
    StepState state{take(oCount), take(2 * mTiles), take(2 * mTiles), {}};
    if (withP) {
      for (int64_t mt = 0; mt < mTiles; ++mt)
        state.p.push_back(take(pWords));
      state.c = take(2 * mTiles);
    }
    return state;
  };
  auto packState = [&](const StepState &state) {
    SmallVector<Value> values = state.o;
    values.append(state.m.begin(), state.m.end());
    values.append(state.l.begin(), state.l.end());
    for (const SmallVector<Value> &words : state.p)
      values.append(words.begin(), words.end());
    values.append(state.c.begin(), state.c.end());
    return values;
  };

  SmallVector<Value> results;
  if (!pipelined) {
    ValueRange done =
        forLoop(b, loc, c32(0), stepCount, 1, init,
                [&](Value step, ValueRange state) -> SmallVector<Value> {
                  Value stage = stageOf(step);
                  // The next tiles load while this one is used. (Issuing them
                  // after this step's wait and barrier instead, which saves the
                  // barrier at the end of the step, was 4% slower at head
                  // dimension 64 on the H200: bench/RESULTS.md, 2026-11-30
                  // 12:54.)
                  prefetch(add(step, c32(1)));
                  NVVM::CpAsyncCommitGroupOp::create(b, loc);
                  NVVM::CpAsyncWaitGroupOp::create(b, loc, 1);
                  if (wgmma)
                    asmBarrier("fence.proxy.async.shared::cta;");
                  syncCompute();

                  StepState now = unpackState(state, /*withP=*/false);
                  SmallVector<Value> corrections;
                  SmallVector<SmallVector<Value>> p =
                      softmax(step, scores(stage), now.m, now.l, corrections);
                  rescale(now.o, corrections);
                  attend(now.o, p, stage, /*wait=*/true);
                  // Every warp is done with this stage before it is loaded
                  // again.
                  syncCompute();
                  return packState(now);
                });
    results.assign(done.begin(), done.end());
  } else {
    // Software-pipelined key steps (FA3's intra-warpgroup overlap): step j
    // issues S for key tile j + 1 and O += P V for tile j together, then
    // computes the softmax of tile j + 1 while P V runs, so the tensor
    // cores and the softmax's arithmetic overlap within the warpgroup. The
    // loop carries P (tile j's probabilities, packed) beside O, m and l;
    // three stages of K and V let tile j + 2 load during step j.
    StepState tile0 = unpackState(init, /*withP=*/false);
    SmallVector<Value> corrections;
    // Tile 0: its scores and probabilities (O is 0: no correction).
    Scores s0 = scores(c32(0));
    if (tma)
      mbarrierArrive(kEmpty(c32(0)));
    tile0.p = softmax(c32(0), std::move(s0), tile0.m, tile0.l, corrections);
    tile0.c = corrections;
    Value last = arith::SubIOp::create(b, loc, consumerSteps, c32(1));
    ValueRange done =
        forLoop(b, loc, c32(0), last, 1, packState(tile0),
                [&](Value step, ValueRange state) -> SmallVector<Value> {
                  Value next = add(step, c32(1));
                  Value nextStage = stageOf(next);
                  Value stage = stageOf(step);
                  if (tma) {
                    // K's tile j + 1 and V's tile j have landed.
                    mbarrierWait(kFull(nextStage), phaseOf(next));
                    mbarrierWait(vFull(stage), phaseOf(step));
                  } else {
                    // Tile j + 1 is in shared memory, and every warp is done
                    // with the stage of tile j - 1 (its P V was waited for at
                    // the end of step j - 1): tile j + 2 loads there.
                    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
                    asmBarrier("fence.proxy.async.shared::cta;");
                    syncCompute();
                    prefetch(add(step, c32(2)));
                    NVVM::CpAsyncCommitGroupOp::create(b, loc);
                  }

                  StepState now = unpackState(state, /*withP=*/true);
                  // S for tile j + 1 first; O's rescale for tile j's max
                  // (FA3's order) runs while it does, then P V. Each batch
                  // of products has its own wgmma.fence, its operands fenced
                  // first: an instruction writing a wgmma's input registers
                  // inside another's span makes ptxas serialize them. (With
                  // 64-key steps and O rescaled after P V's wait, as before,
                  // this order alone was 3% slower, d128 s4k 4.37 -> 4.49 ms;
                  // with the stale max it was 1-3% faster, and with 128-key
                  // steps 1-2%: bench/RESULTS.md, 2026-12-01 12:52.)
                  SmallVector<SmallVector<Value>> acc =
                      issueScores(nextStage, /*fence=*/true);
                  rescale(now.o, now.c);
                  fenceProductOperands(now.o, now.p);
                  asmBarrier("wgmma.fence.sync.aligned;");
                  attend(now.o, now.p, stage, /*wait=*/false, /*fenced=*/true);
                  asmBarrier("wgmma.wait_group.sync.aligned 1;");
                  // With TMA, K's stage is released once S is done, V's once
                  // P V is.
                  if (tma)
                    mbarrierArrive(kEmpty(nextStage));
                  SmallVector<Value> corrections;
                  SmallVector<SmallVector<Value>> pNext =
                      softmax(next, toScores(acc), now.m, now.l, corrections);
                  asmBarrier("wgmma.wait_group.sync.aligned 0;");
                  if (tma)
                    mbarrierArrive(vEmpty(stage));
                  now.o = fenceOperands(now.o);
                  // P's words stay live until P V is done: the next P would
                  // otherwise take their registers while the products still
                  // read them (ptxas then serializes the products).
                  for (auto &words : now.p)
                    fenceOperands(words);
                  now.c = std::move(corrections);
                  now.p = std::move(pNext);
                  return packState(now);
                });
    // The last tile's P V.
    StepState end = unpackState(done, /*withP=*/true);
    rescale(end.o, end.c);
    if (tma)
      mbarrierWait(vFull(stageOf(last)), phaseOf(last));
    attend(end.o, end.p, stageOf(last), /*wait=*/true);
    // The steps this consumer leaves to the others (consumerSteps).
    if (ownSteps) {
      mbarrierArrive(vEmpty(stageOf(last)));
      release(add(last, c32(1)));
    }
    end.p.clear();
    end.c.clear();
    results = packState(end);
  }
  if (!tma)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  // O / l, written where the warp's rows lie inside the sequence (all of
  // them or none: 64-row parts).
  std::optional<OpBuilder::InsertionGuard> storeGuard;
  if (partial) {
    auto inside = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                              add(myQ0, warpRow(0)), c32(seqQ)),
        /*withElse=*/false);
    storeGuard.emplace(b);
    b.setInsertionPointToStart(inside.thenBlock());
  }
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      Value l = results[oCount + 2 * mTiles + 2 * mt + h];
      for (int32_t mask : {1, 2})
        l = arith::AddFOp::create(b, loc, l, shuffleXor(l, mask));
      Value inverse = arith::DivFOp::create(b, loc, cf(1.0), l);
      if (bias) {
        // Every key of the row masked with -inf (addBias).
        Value m = results[oCount + 2 * mt + h];
        Value dropped = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                              m, cf(kMaskedLog2 / 2));
        inverse = arith::SelectOp::create(
            b, loc, dropped,
            cf(zeroMaskedRows ? 0.0 : std::numeric_limits<double>::quiet_NaN()),
            inverse);
      }
      Value row = add(add(warpRow(mt), group), c32(8 * h));
      for (int64_t dt = 0; dt < oTiles; ++dt) {
        Value lo = arith::MulFOp::create(b, loc, results[oIndex(mt, dt, 2 * h)],
                                         inverse);
        Value hi = arith::MulFOp::create(
            b, loc, results[oIndex(mt, dt, 2 * h + 1)], inverse);
        Value column = add(c32(dt * 8), shl(quad, 1));
        Value offset = arith::MulIOp::create(
            b, loc,
            arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, wide(row), c64(oView.rowStride)),
                wide(column)),
            c64(2));
        LLVM::StoreOp::create(b, loc, pack(lo, hi), at(oDst, offset), 4);
      }
    }
  storeGuard.reset();
  if (roles)
    b.setInsertionPointAfter(roles);
  func::ReturnOp::create(b, loc);

  // The launch and the reason, next to the graph layer's decisions.
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
  return success();
}

} // namespace

LogicalResult strata::emitFlashAttention(func::FuncOp decl, func::FuncOp body,
                                         ModuleOp kernels,
                                         int64_t dynamicSharedLimit,
                                         bool wgmma) {
  auto params = kernel::get<kernel::Attention>(decl);
  if (!params)
    return decl.emitError("internal error: the attention kernel ")
           << decl.getSymName() << " has no strata.attention parameters";
  int64_t dim = cast<IntegerAttr>(params.get("head_dim")).getInt();
  int64_t seqQ = cast<IntegerAttr>(params.get("seq_q")).getInt();
  int64_t seqK = cast<IntegerAttr>(params.get("seq_k")).getInt();
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
