//===- Partition.cpp - the graph layer's kernel decisions -------*- C++ -*-===//
//
// Groups the entry function's ops into kernels and outlines each group into
// a private function, so that every decision is in the IR (docs/explain.md):
//
//   func.func private @strata_poi_fused_add_gelu_3(...) attributes {
//       strata.kernel, strata.kind = "codegen", strata.category = "poi",
//       strata.nodes = ["Add_1", "Gelu_2"], strata.reason = "...",
//       strata.fused_because = [...], strata.not_fused = [...],
//       strata.tile = {...}}
//
// The entry function keeps graph.constant ops, reshape-like ops that become
// views of their operand's buffer (no kernel, no copy), and one func.call per
// kernel in execution order.
//
// Grouping rule: the ops are visited in program order and a generated kernel
// grows while each next op consumes a value the kernel produces (a chain, a
// reduction with its producers and consumers, a matmul with its epilogue);
// any other op closes it. Kernels are therefore contiguous runs of a
// topological order, which makes them convex: no path leaves a kernel and
// comes back, so outlining cannot create a cycle. Small constants (splats and
// up to kInlineConstantElements elements) are cloned into the kernels that
// use them so that codegen can fold them; larger ones are passed as buffers.
//
// While grouping, the partitioner records why each op joined its kernel and
// why each kernel stopped growing; the reasons on the kernels (fused_because,
// not_fused) are read from that record, not reconstructed afterwards. A
// decisions file (Decisions.h) can keep nodes apart, force library or
// generated code, and force a kernel's row split.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "CompilerUtils.h"
#include "Decisions.h"
#include "Gemm.h"
#include "Gpu.h"
#include "Library.h"
#include "PartitionGroup.h"
#include "RowParallel.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>
#include <deque>

using namespace mlir;
using namespace strata;
using namespace strata::partition;
namespace graph = strata::graph;

//===----------------------------------------------------------------------===//
// Partitioning
//===----------------------------------------------------------------------===//

/// Ops the row analysis (RowParallel.cpp) cannot split a kernel around:
/// gathers read their data at indices computed at run time; a Trilu's
/// result (a causal mask) has rows of its own, unrelated to its readers';
/// a pad's rows past its input's are no rows of the input (fused with the
/// transpose before it, an attention operand's pad ran as one block: ViT-B
/// at batch 32, 3.6 ms a layer).
static bool isolatedOnGpu(Operation *op) {
  return isa<graph::GatherOp, graph::GatherElementsOp, graph::GatherNDOp,
             graph::TriluOp, graph::PadOp>(op);
}

/// Gather and GatherElements: each lowers to one all-parallel linalg.generic
/// reading its data with tensor.extract, which elementwise fusion folds into
/// the ops that read it.
static bool isFusibleGather(Operation *op) {
  return isa<graph::GatherOp, graph::GatherElementsOp>(op);
}

/// What a GPU kernel that stays one all-parallel op may hold.
static bool isElementwiseOrFusibleGather(Operation *op) {
  return isFusibleGather(op) || strata::isLowerableElementwise(op);
}

/// Whether `group` with the elementwise op `op` added stays one all-parallel
/// op once the kernel stage's elementwise fusion has run: its ops are
/// elementwise ops and fusible gathers, and every gather's result is read
/// only inside the kernel, so that fusion
/// folds each gather into its readers instead of keeping it as an op of its
/// own. The GPU mapping then spreads that one op over the whole grid, as it
/// does a gather alone (GPT-2's token and position embeddings and their sum:
/// three kernels and two trips through memory become one kernel).
static bool staysOneParallelOp(const Group &group, Operation *op) {
  if (!strata::isLowerableElementwise(op))
    return false;
  for (Operation *member : group.ops) {
    if (!isElementwiseOrFusibleGather(member))
      return false;
    if (isFusibleGather(member))
      for (Operation *user : member->getResult(0).getUsers())
        if (user != op && !group.members.contains(user))
          return false;
  }
  return true;
}

/// Graph ops whose lowering strata-gpu-pull-fusion reads through (all-parallel
/// linalg ops, slices, inserts, pads; GpuPullFusion.cpp).
static bool isPullableOnGpu(Operation *op) {
  return strata::isLowerableElementwise(op) || strata::isViewOp(op) ||
         isa<graph::GatherOp, graph::GatherElementsOp, graph::TransposeOp,
             graph::SliceOp, graph::ConcatOp, graph::PadOp, graph::ExpandOp,
             graph::TriluOp, graph::WhereOp>(op);
}

/// Whether `group` with `op` added is a pointwise kernel that
/// strata-gpu-pull-fusion makes one all-parallel op: every op one it reads
/// through, and every value but `op`'s read only inside the kernel, so that
/// the kernel has one result. The GPU mapping then spreads it over the
/// whole grid, whatever the row analysis says of its ops (a slice, a
/// transpose and a pad: ViT's query, key and value heads, three kernels and
/// two trips through memory each before).
static bool staysPullable(const Group &group, Operation *op) {
  if (!isPullableOnGpu(op) || op->getNumResults() != 1)
    return false;
  for (Operation *member : group.ops) {
    if (!isPullableOnGpu(member) || member->getNumResults() != 1)
      return false;
    for (Operation *user : member->getResult(0).getUsers())
      if (user != op && !group.members.contains(user))
        return false;
  }
  return true;
}

/// Whether every reader of the view `op` is an op the pointwise kernel it
/// would end may take in (staysPullable) other than a gather: a gather of
/// windows reads the buffer in place inside the reduction that sums them
/// (becomesOneReduction: a depthwise convolution), which a copy through the
/// pointwise kernel would materialize.
static bool viewFeedsPullableOps(Operation *op) {
  return llvm::all_of(op->getResult(0).getUsers(), [](Operation *user) {
    return isPullableOnGpu(user) &&
           !isa<graph::GatherOp, graph::GatherElementsOp>(user);
  });
}

/// Whether the grouping before partitioning may move `op` within `body`: a
/// pullable op of `body` without regions or side effects, not on run-time
/// shapes.
static bool isMovablePullable(Operation *op, Block &body) {
  return op->getBlock() == &body && op->getNumRegions() == 0 &&
         !op->hasTrait<OpTrait::IsTerminator>() && isPullableOnGpu(op) &&
         isMemoryEffectFree(op) && !onRunTimeShapes(op);
}

/// Whether `user` may move up to just after `op`: a movable pullable op
/// whose other operands are computed before `op` or are constants (returned
/// in `constants`, to move with it).
static bool canPullAfter(Operation *user, Operation *op, Block &body,
                         SmallVectorImpl<Operation *> &constants) {
  if (!isMovablePullable(user, body))
    return false;
  for (Value operand : user->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!def || def == op || def->isBeforeInBlock(op))
      continue;
    if (!isa<graph::ConstantOp>(def) || def->getNumOperands() != 0)
      return false;
    constants.push_back(def);
  }
  return true;
}

/// A pullable op read by several pullable ops (RoPE's Q: its product with
/// cos, and the two halves that rotate) has them moved up to just after it,
/// in their order, when each can move (canPullAfter): then the chains that
/// start at them are grouped in turn, and the DAG is one stretch of
/// program order for the partitioner.
static void pullReaders(Operation *op, Block &body) {
  if (!isPullableOnGpu(op) || !isMemoryEffectFree(op))
    return;
  SmallVector<Operation *> users;
  for (Operation *user : op->getResult(0).getUsers())
    if (!llvm::is_contained(users, user))
      users.push_back(user);
  llvm::sort(users,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Operation *> constants;
  for (Operation *user : users)
    if (!canPullAfter(user, op, body, constants))
      return;
  Operation *last = op;
  for (Operation *user : users) {
    user->moveAfter(last);
    last = user;
  }
  for (Operation *constant : constants)
    constant->moveBefore(op);
}

/// On a GPU target, moves each pullable op that is the one reader of a
/// single-result op up to just after it, when everything else it reads is
/// computed before that point (constants, which read nothing, move up with
/// it). The partitioner grows a kernel only while the next op in program
/// order reads from it, and exporters write sibling chains interleaved:
/// ViT's query, key and value slices of the in-projection, then their head
/// splits, then their transposes, each link a kernel of its own. Grouped,
/// each chain is one pointwise kernel (staysPullable). Only ops without
/// regions or side effects move; the order is otherwise the exporter's. A
/// pullable op read by several pullable ops has them all moved after it
/// (pullReaders), so that a small DAG (RoPE's rotation) is grouped too.
static void groupPullableChains(func::FuncOp entry) {
  Block &body = entry.getBody().front();
  SmallVector<Operation *> order;
  for (Operation &op : body.without_terminator())
    order.push_back(&op);
  for (Operation *op : order) {
    // A constant heads no chain: what reads it stays where it computes.
    if (isa<graph::ConstantOp>(op) || op->getNumResults() != 1)
      continue;
    if (!op->getResult(0).hasOneUse()) {
      pullReaders(op, body);
      continue;
    }
    Operation *user = *op->getResult(0).getUsers().begin();
    SmallVector<Operation *> constants;
    if (!canPullAfter(user, op, body, constants))
      continue;
    // Already next but for constants: nothing to gain from moving.
    Operation *next = op->getNextNode();
    while (next != user && isa<graph::ConstantOp>(next))
      next = next->getNextNode();
    if (next == user)
      continue;
    for (Operation *constant : constants)
      constant->moveBefore(op);
    user->moveAfter(op);
  }
}

/// On a GPU target, moves a pullable op whose one reader also reads a
/// product computed after it down to just before that reader. SwiGLU,
/// silu(x @ Wg) * (x @ Wu), is written with the silu before the second
/// product; the partitioner closes a pointwise kernel at a library call, so
/// the silu was a kernel of its own (a read and a write of the gate) and the
/// second product took the multiply as its GEMM kernel's epilogue (another
/// read of the silu), slower than cuBLASLt's product. Moved, the silu and the
/// multiply are one pointwise kernel after both products, reading each once,
/// and the product alone is a library call.
static void sinkToLaterProducts(func::FuncOp entry) {
  Block &body = entry.getBody().front();
  SmallVector<Operation *> order;
  for (Operation &op : body.without_terminator())
    order.push_back(&op);
  // Last to first, so that a chain follows its last op down (the silu's
  // sigmoid after the silu's multiply).
  llvm::SmallPtrSet<Operation *, 16> sunk;
  for (Operation *op : llvm::reverse(order)) {
    if (isa<graph::ConstantOp>(op) || op->getNumResults() != 1 ||
        !op->getResult(0).hasOneUse() || !isMovablePullable(op, body))
      continue;
    Operation *user = *op->getResult(0).getUsers().begin();
    if (user->getBlock() != &body || !isPullableOnGpu(user) ||
        user == op->getNextNode())
      continue;
    bool readsLaterProduct = llvm::any_of(user->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && def->getBlock() == &body && op->isBeforeInBlock(def) &&
             isLibraryAnchor(def);
    });
    if (!readsLaterProduct && !sunk.contains(user))
      continue;
    op->moveBefore(user);
    sunk.insert(op);
  }
}

/// Whether `group` with the reduction `op` added becomes one loop nest with
/// a reduction once the kernel stage's elementwise fusion has run: the
/// group is elementwise ops and fusible gathers (at least one gather: without
/// one, the row analysis splits the kernel anyway), `op` sums, or takes the
/// largest or smallest of, dimensions given as an attribute (one generic
/// with its accumulator's fill), and nothing outside reads a value of the
/// group but `op`, so every member fuses into its loop nest. The GPU
/// mapping gives each thread whole output points over the whole grid: a
/// depthwise convolution's windows (ConvToGemm.cpp) are summed from the
/// input in place instead of being written to memory.
static bool becomesOneReduction(const Group &group, Operation *op) {
  if (!isa<graph::ReduceSumOp, graph::ReduceMaxOp, graph::ReduceMinOp>(op))
    return false;
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (op->getNumOperands() != 1 || !axes || axes.empty() || !input ||
      !input.hasStaticShape())
    return false;
  Operation *producer = op->getOperand(0).getDefiningOp();
  if (!producer || !group.members.contains(producer) ||
      !llvm::any_of(group.ops, isFusibleGather))
    return false;
  for (Operation *member : group.ops) {
    // Already joined (finishesOneReduction asks): the ops after it finish
    // it, which finishesOneReduction checks.
    if (member == op)
      break;
    // A transpose lowers to a generic too (a permuted read), which the
    // kernel stage's elementwise fusion folds into the product after it (a
    // grouped convolution's windows read with Cg outside g, ConvToGemm.cpp).
    if (!isElementwiseOrFusibleGather(member) &&
        !isa<graph::TransposeOp>(member))
      return false;
    for (Operation *user : member->getResult(0).getUsers())
      if (user != op && !group.members.contains(user))
        return false;
  }
  return true;
}

/// Whether `op` finishes the one reduction of `group` (becomesOneReduction)
/// in the thread that computed each point: an elementwise op of the
/// reduction's result type whose operands from the group are the reduction
/// or the ops that finish it already (a depthwise or grouped convolution's
/// bias, then its ReLU6 or SiLU), where every value of that tail is read by
/// elementwise ops of the same type only. A depthwise convolution's bias
/// (ConvNeXt's 7x7 convolutions) was an elementwise kernel of its own, a
/// write and a read of the whole result, and its activation another; the
/// kernel stage fuses the tail into one elementwise op, which the GPU
/// mapping runs as the reduction's epilogue (GpuMapping.cpp, "finished by
/// one elementwise op").
static bool finishesOneReduction(const Group &group, Operation *op) {
  if (!strata::isLowerableElementwise(op) || op->getNumResults() != 1 ||
      group.ops.empty())
    return false;
  auto last = llvm::find_if(llvm::reverse(group.ops), [](Operation *member) {
    return isa<graph::ReduceSumOp, graph::ReduceMaxOp, graph::ReduceMinOp>(
        member);
  });
  if (last == group.ops.rend())
    return false;
  Operation *reduction = *last;
  auto type = dyn_cast<RankedTensorType>(reduction->getResult(0).getType());
  if (!type || op->getResult(0).getType() != type)
    return false;
  llvm::SmallPtrSet<Operation *, 8> tail = {reduction};
  for (auto it = last.base(); it != group.ops.end(); ++it) {
    if (!strata::isLowerableElementwise(*it) || (*it)->getNumResults() != 1 ||
        (*it)->getResult(0).getType() != type)
      return false;
    tail.insert(*it);
  }
  bool readsTail = false;
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp();
        def && group.members.contains(def)) {
      if (!tail.contains(def))
        return false;
      readsTail = true;
    }
  if (!readsTail)
    return false;
  for (Operation *member : tail)
    for (Operation *user : member->getResult(0).getUsers())
      if (!strata::isLowerableElementwise(user) || user->getNumResults() != 1 ||
          user->getResult(0).getType() != type)
        return false;
  return becomesOneReduction(group, reduction);
}

/// Whether every operand of `op` is a model input or a constant.
static bool readsOnlyInputsAndConstants(Operation *op) {
  return llvm::all_of(op->getOperands(), [](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || isa<graph::ConstantOp>(def);
  });
}

/// Whether `op` is a gather of a model input or constant at constant or
/// input indices (a position embedding) that may join `current`, a kernel
/// of elementwise ops and gathers, as a prologue: the ops after it that
/// read both (their sum) then fuse with both into one all-parallel op.
static bool isGatherPrologue(Operation *op, const Group &current) {
  if (!isFusibleGather(op) || !readsOnlyInputsAndConstants(op))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.hasStaticShape() &&
         llvm::all_of(current.ops, isElementwiseOrFusibleGather);
}

/// An operand of `op` that is broadcast over one of the leading dimensions
/// of `op`'s result (all but the last) but not over a later one: a position
/// embedding [S, D] added to [B, S, D], a mask [1, 1, S, T] on [B, H, S, T].
/// Rows that collapse those dimensions cannot advance such an operand by
/// one stride, so a kernel holding `op` splits only over the dimensions
/// before the broadcast one.
static Value partlyBroadcastOperand(Operation *op) {
  // A gather's data is indexed, not broadcast.
  if (op->getNumResults() != 1 ||
      isa<graph::GatherOp, graph::GatherElementsOp, graph::GatherNDOp>(op))
    return {};
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!out || out.getRank() < 3 || !out.hasStaticShape())
    return {};
  int64_t rank = out.getRank();
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape() || type.getRank() > rank)
      continue;
    int64_t pad = rank - type.getRank();
    bool broadcastSeen = false;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      int64_t size = d < pad ? 1 : type.getDimSize(d - pad);
      bool broadcast = size == 1 && out.getDimSize(d) != 1;
      if (broadcastSeen && !broadcast && out.getDimSize(d) != 1)
        return operand;
      broadcastSeen |= broadcast;
    }
  }
  return {};
}

/// The leading dimensions a reduction keeps whole, over which its rows
/// split (those before its first reduced axis), or none for other ops and
/// for reductions whose axes are not known.
static std::optional<int64_t> reductionRowDims(Operation *op) {
  auto input = op->getNumOperands()
                   ? dyn_cast<RankedTensorType>(op->getOperand(0).getType())
                   : RankedTensorType();
  if (!input)
    return std::nullopt;
  int64_t rank = input.getRank();
  auto normalized = [&](int64_t axis) { return axis < 0 ? axis + rank : axis; };
  StringRef name = op->getName().stripDialect();
  if (name.starts_with("reduce_")) {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    if (!axes || axes.empty())
      return std::nullopt;
    int64_t first = rank;
    for (int64_t axis : axes.asArrayRef())
      first = std::min(first, normalized(axis));
    return first;
  }
  if (name == "layer_norm" || name == "softmax" || name == "log_softmax") {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    return normalized(axis ? axis.getInt() : -1);
  }
  return std::nullopt;
}

/// The leading dimensions a transpose leaves in place.
static int64_t keptLeadingDims(graph::TransposeOp transpose) {
  std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
  int64_t kept = 0;
  while (perm && kept < int64_t(perm->size()) && (*perm)[kept] == kept)
    ++kept;
  return kept;
}

/// The first of `group`'s members and `op` that `limits` the other's rows
/// (limits(a, b): a keeps b's rows from splitting), or null.
static Operation *
firstLimiting(const Group &group, Operation *op,
              llvm::function_ref<bool(Operation *, Operation *)> limits) {
  for (Operation *member : group.ops) {
    if (limits(member, op))
      return member;
    if (limits(op, member))
      return op;
  }
  return nullptr;
}

/// A transpose in `group` (or `op`) that moves dimensions a reduction in
/// `group` (or `op`) would split its rows over, or null: fused, the kernel's
/// rows could split only over the dimensions the transpose keeps in place.
static Operation *transposeLimitingRows(const Group &group, Operation *op) {
  auto limits = [](Operation *a, Operation *b) {
    auto transpose = dyn_cast<graph::TransposeOp>(a);
    std::optional<int64_t> rows = reductionRowDims(b);
    return transpose && rows && keptLeadingDims(transpose) < *rows;
  };
  return firstLimiting(group, op, limits);
}

/// A slice or concat in `group` (or `op`) that changes the size of a
/// dimension a reduction in `group` (or `op`) would split its rows over, or
/// null: fused, a row of the result is no longer one row of the input (a
/// Swin's roll, slices and a concat over the image's axes, before its
/// LayerNorm), and the kernel cannot split at all.
static Operation *resizeLimitingRows(const Group &group, Operation *op) {
  auto limits = [](Operation *a, Operation *b) {
    if (!isa<graph::SliceOp, graph::ConcatOp>(a) || a->getNumResults() != 1)
      return false;
    std::optional<int64_t> rows = reductionRowDims(b);
    auto out = dyn_cast<RankedTensorType>(a->getResult(0).getType());
    if (!rows || !out)
      return false;
    for (Value operand : a->getOperands()) {
      auto in = dyn_cast<RankedTensorType>(operand.getType());
      if (!in || in.getRank() != out.getRank())
        continue;
      for (int64_t d = 0; d < std::min<int64_t>(*rows, out.getRank()); ++d)
        if (in.getDimSize(d) != out.getDimSize(d))
          return true;
    }
    return false;
  };
  return firstLimiting(group, op, limits);
}

SmallVector<int64_t> strata::columnReductionAxes(Operation *op) {
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  auto input = op->getNumOperands() == 1
                   ? dyn_cast<RankedTensorType>(op->getOperand(0).getType())
                   : RankedTensorType();
  if (!op->getName().stripDialect().starts_with("reduce_") || !axes ||
      axes.empty() || !input)
    return {};
  int64_t rank = input.getRank();
  SmallVector<int64_t> normalized;
  for (int64_t a : axes.asArrayRef()) {
    a = a < 0 ? a + rank : a;
    if (a < 0 || a >= rank - 1)
      return {};
    normalized.push_back(a);
  }
  llvm::sort(normalized);
  return normalized;
}

/// Why `op` may not join `group` on the GPU, or "". A GPU kernel whose body
/// is several ops that are not one elementwise chain runs them one after
/// another in thread blocks, one block per row block; when the row analysis
/// cannot split it (a gather or a Trilu inside), that is one block for the
/// whole tensor. Alone, a gather or a Trilu is one all-parallel op, which
/// the GPU mapping spreads over the whole grid.
static std::string gpuJoinRefusal(const Group &group, Operation *op) {
  // Its rows do not split (the gathers), and need not: the mapping spreads
  // its output points over the grid.
  if (becomesOneReduction(group, op) || finishesOneReduction(group, op))
    return "";
  // A column reduction (over axes the last follows: a stage of
  // strata-split-reductions, a mean over points) after another reduction:
  // fused, the kernel's rows split only over the axes before the first
  // reduced one (one block for a whole batch-1 tensor). Apart, each is one
  // reduction that the mapping spreads over the grid.
  if (!strata::columnReductionAxes(op).empty())
    for (Operation *member : group.ops)
      if (reductionOf(member).kind != Reduction::None)
        return "on the GPU a reduction over axes before the last does not "
               "join a kernel holding another reduction (" +
               strata::describeOp(member) +
               "): fused, the kernel's rows could split only over the axes "
               "before the reduced ones";
  // A reduction after an op that reads a partly broadcast operand: fused,
  // its rows could split only over the dimensions before the broadcast one
  // (GPT-2's token + position embedding and first LayerNorm: 8 blocks for
  // 8192 rows). Apart, the elementwise op spreads over the whole grid and
  // the reduction splits over every row.
  if (reductionOf(op).kind != Reduction::None)
    for (Operation *member : group.ops)
      if (reductionOf(member).kind == Reduction::None &&
          partlyBroadcastOperand(member))
        return "on the GPU a reduction does not join a kernel that reads a "
               "partly broadcast operand (" +
               strata::describeOp(member) +
               "): fused, its rows could split only over the dimensions "
               "before the broadcast one";
  // A channels-last LayerNorm between two transposes (ConvNeXt's permutes):
  // fused, its rows split only over the images, one block each at batch 1.
  // Apart, the transposes fuse with the elementwise ops around them and
  // spread over the grid, and the norm splits over every position.
  if (Operation *transpose = transposeLimitingRows(group, op))
    return "on the GPU a reduction and a transpose that moves the dimensions "
           "its rows split over are not fused (" +
           strata::describeOp(transpose) +
           "): fused, the rows could split only over the dimensions the "
           "transpose keeps in place";
  if (Operation *resize = resizeLimitingRows(group, op))
    return "on the GPU a reduction and a slice or concat that resizes the "
           "dimensions its rows split over are not fused (" +
           strata::describeOp(resize) +
           "): fused, the kernel's rows could not split at all";
  if (staysOneParallelOp(group, op) || staysPullable(group, op))
    return "";
  if (isolatedOnGpu(op))
    return "on the GPU " + op->getName().stripDialect().str() +
           " starts a kernel of its own (fused with the ops that compute "
           "its operands, the kernel could not spread over thread blocks)";
  for (Operation *member : group.ops) {
    if (isFusibleGather(member))
      return "on the GPU a kernel holding a " +
             member->getName().stripDialect().str() + " (" +
             strata::describeOp(member) +
             ") takes only elementwise ops (and one reduction after them), "
             "and only while nothing outside it reads the gathers' "
             "results";
    if (isolatedOnGpu(member))
      return "on the GPU " + member->getName().stripDialect().str() +
             " is a kernel of its own (" + strata::describeOp(member) +
             " is in the kernel)";
  }
  return "";
}

/// "consumes the result of Gemm_0": why `op` joined the kernel `group`.
static std::string joinReason(const Group &group, Operation *op) {
  SmallVector<std::string> producers;
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp();
        def && group.members.contains(def)) {
      std::string name = strata::describeOp(def);
      if (!llvm::is_contained(producers, name))
        producers.push_back(name);
    }
  std::string text = producers.size() > 1 ? "consumes the results of "
                                          : "consumes the result of ";
  for (auto [i, name] : llvm::enumerate(producers)) {
    if (i == 3) {
      text += " and " + std::to_string(producers.size() - 3) + " more";
      break;
    }
    text += (i == 0 ? "" : i + 1 == producers.size() ? " and " : ", ") + name;
  }
  return text;
}

/// Whether `op` is an elementwise op on model inputs and constants alone
/// whose result is smaller than the values of `current` (a weight's cast
/// next to the activations, not a second branch on the activations).
static bool isWeightPrologue(Operation *op, const Group &current) {
  if (op->getNumOperands() == 0 || op->getNumResults() != 1 ||
      !strata::isLowerableElementwise(op) || !readsOnlyInputsAndConstants(op))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto anchor =
      dyn_cast<RankedTensorType>(current.ops.front()->getResult(0).getType());
  return type && anchor && type.hasStaticShape() && anchor.hasStaticShape() &&
         type.getNumElements() < anchor.getNumElements();
}

namespace {
/// The attention blocks of the entry function, found before the walk.
struct AttentionBlocks {
  std::deque<AttentionMatch> matches;
  /// Each block by its first op in program order.
  llvm::DenseMap<Operation *, AttentionMatch *> at;
  /// Why a product that looked like attention is not a flash-attention
  /// kernel (for its library or codegen reason).
  llvm::DenseMap<Operation *, std::string> notAttention;
  /// Causal masks that only attention kernels read (cloned into them).
  llvm::SmallPtrSet<Operation *, 16> masks;
};

/// The GEMM kernel's match for one product, computed once when first asked
/// for (the library rule and the GEMM kernel's own turn both ask).
class GemmLookup {
public:
  GemmLookup(Operation *op, const LibraryRequest &request)
      : op(op), request(request) {}
  std::optional<GemmMatch> &get() {
    if (!match)
      match = matchGemm(
          op, [](Operation *def) { return isInlinableConstant(def); },
          request.epilogueVeto, whyNot);
    return *match;
  }
  /// Why the GEMM kernel does not take it (after get()).
  std::string whyNot;

private:
  Operation *op;
  const LibraryRequest &request;
  std::optional<std::optional<GemmMatch>> match;
};

/// Groups the entry function's ops into kernels, walking them in program
/// order and growing the current kernel while the next op reads it and the
/// target's rules let it join; then names the groups and outlines each into
/// a kernel function. What each step decided is kept for `strata explain`
/// (Group, Ledger).
class Partitioner {
public:
  Partitioner(ModuleOp module, func::FuncOp entry,
              const CompileOptions &options, const TargetFacts &facts,
              Decisions &decisions)
      : module(module), entry(entry), options(options), facts(facts),
        decisions(decisions) {
    request.library = facts.library;
    request.targetName = options.target;
    request.epilogueVeto = [this](ArrayRef<Operation *> group,
                                  Operation *candidate) -> std::string {
      if (std::string entry = this->decisions.forcedCodegen(candidate);
          !entry.empty())
        return "forced to generated code by the decisions file (" + entry + ")";
      return this->decisions.apartReason(group, candidate);
    };
  }

  LogicalResult run();

private:
  void close(Operation *by, const std::string &why);
  Group *start(Operation *op);
  /// `op` joins the current kernel, for the reason `why` (fused_because).
  Group *join(Operation *op, std::string why);
  /// Adds `ops` after the first to `group`, unexplained (a library call's
  /// epilogue), and claims them all.
  void addMembers(Group *group, ArrayRef<Operation *> ops);

  void findAttentionBlocks();
  /// Places `op` in a kernel; failure is a decisions-file error that ends
  /// the walk (an unsupported op is reported and the walk goes on).
  LogicalResult visit(Operation &op);
  void startAttention(Operation &op, const AttentionMatch &block,
                      const std::string &label);
  /// The library call for `op`, if one takes it; else sets whyNotLibrary,
  /// and `asked` to whether the libraries were asked at all (not with
  /// --no-libraries, nor for a product the decisions file keeps generated).
  std::optional<LibraryMatch>
  matchLibrary(Operation &op, const std::string &forcedLibrary,
               const std::string &forcedCodegen, GemmLookup &gemm,
               std::string &whyNotLibrary, bool &asked);
  /// `op` in a generated kernel: the current one or a new one.
  void placeGenerated(Operation &op, const std::string &label,
                      std::string whyNotLibrary,
                      std::pair<std::string, std::string> notGemm);
  /// The kernel a generated op joins or starts when it does not read the
  /// current one (a weight's or a gather's prologue), or null.
  Group *placeBeside(Operation &op, const std::string &label);

  void separateSharedPrologues();
  LogicalResult nameGroups();
  LogicalResult outlineGroups();

  ModuleOp module;
  func::FuncOp entry;
  const CompileOptions &options;
  const TargetFacts &facts;
  Decisions &decisions;
  LibraryRequest request;
  /// A product that is generated code (no library takes it: --no-libraries,
  /// the decisions file, or cuBLASLt refuses it) is strata's GEMM kernel on
  /// Hopper (Gemm.h, GpuGemm.cpp), with the elementwise ops after it as its
  /// epilogue, rather than the generic mapping's one output per thread.
  /// Where cuBLASLt takes the product it stays cuBLASLt's, unless its
  /// epilogue cannot take all of the ops after it (the exact GELU) and the
  /// product is long enough (kGemmOverLibraryDepth, below).
  bool gemmKernels = false;

  AttentionBlocks attention;
  std::deque<Group> groups; // stable addresses: `current` points in
  Group *current = nullptr;
  Ledger ledger;
  llvm::SmallPtrSet<Operation *, 16> claimed; // library epilogues
  SmallVector<Operation *> joinedPrologues;
  // Unsupported ops are all reported before giving up.
  bool failedAny = false;
};
} // namespace

void Partitioner::close(Operation *by, const std::string &why) {
  if (!current)
    return;
  current->closedBy = by;
  current->closeReason = why;
  current = nullptr;
}

Group *Partitioner::start(Operation *op) {
  groups.emplace_back();
  Group &group = groups.back();
  group.ops.push_back(op);
  group.members.insert(op);
  ledger.groupOf[op] = &group;
  return &group;
}

Group *Partitioner::join(Operation *op, std::string why) {
  current->joined.push_back(std::move(why));
  current->ops.push_back(op);
  current->members.insert(op);
  ledger.groupOf[op] = current;
  return current;
}

void Partitioner::addMembers(Group *group, ArrayRef<Operation *> ops) {
  for (Operation *member : ops.drop_front()) {
    group->ops.push_back(member);
    group->members.insert(member);
    ledger.groupOf[member] = group;
  }
  claimed.insert(ops.begin(), ops.end());
}

// Attention blocks on the GPU (Attention.h) are found before the walk: the
// first of their ops in program order, K's transpose, comes before the
// product that identifies them. Each becomes one flash-attention kernel; a
// causal mask's Trilu that only they read needs no kernel. The
// flash-attention kernel multiplies with mma.sync (sm_80 on).
void Partitioner::findAttentionBlocks() {
  if (!facts.tensorCores)
    return;
  llvm::SmallPtrSet<Operation *, 16> taken;
  for (Operation &op : entry.getBody().front().without_terminator()) {
    std::string why;
    std::optional<AttentionMatch> match = matchAttention(&op, why);
    if (match && llvm::any_of(match->ops, [&](Operation *member) {
          return taken.contains(member);
        }))
      match.reset();
    for (size_t i = 1; match && i < match->ops.size(); ++i) {
      Operation *member = match->ops[i];
      std::string forced = decisions.forcedLibrary(member);
      if (forced.empty())
        forced = decisions.forcedCodegen(member);
      if (!forced.empty())
        why = "the decisions file decides " + describeOp(member) + " (" +
              forced + ")";
      else
        why = decisions.apartReason(ArrayRef(match->ops).take_front(i), member);
      if (!why.empty())
        match.reset();
    }
    if (!match) {
      if (!why.empty())
        attention.notAttention[&op] = why;
      continue;
    }
    taken.insert(match->ops.begin(), match->ops.end());
    match->queryRows = attentionQueryRows(
        match->headDim, match->seqQ, gpuHasWgmma(gpuArchitecture(options)));
    if (!gpuPortableArchitecture(options).empty()) {
      int64_t portable =
          attentionQueryRows(match->headDim, match->seqQ, /*wgmma=*/false);
      if (portable != match->queryRows)
        match->portableQueryRows = portable;
    }
    attention.matches.push_back(std::move(*match));
    attention.at[attention.matches.back().ops.front()] =
        &attention.matches.back();
  }
  for (AttentionMatch &match : attention.matches)
    if (Operation *mask = match.mask)
      if (llvm::all_of(mask->getUsers(),
                       [&](Operation *user) { return taken.contains(user); }))
        attention.masks.insert(mask);
  claimed.insert(attention.masks.begin(), attention.masks.end());
}

void Partitioner::startAttention(Operation &op, const AttentionMatch &block,
                                 const std::string &label) {
  close(&op, label + " starts an attention block (" + block.describe() +
                 "), a flash-attention kernel of its own");
  Group *group = start(&op);
  for (Operation *member : ArrayRef(block.ops).drop_front()) {
    group->joined.push_back(
        describeOp(member) +
        (block.layout.contains(member)
             ? ": a layout op the kernel reads or writes through (its "
               "strides), no copy"
         : block.bias && member == block.bias->source->getOwner()
             ? ": adds the bias, which the kernel reads per key step "
               "(broadcast dimensions with stride 0)"
             : ": part of the attention block"));
    group->ops.push_back(member);
    group->members.insert(member);
    ledger.groupOf[member] = group;
  }
  if (block.mask)
    group->joined.push_back(describeOp(block.mask) +
                            ": the causal mask, computed from indices by "
                            "the kernel");
  claimed.insert(block.ops.begin(), block.ops.end());
  group->attention = block;
}

std::optional<LibraryMatch>
Partitioner::matchLibrary(Operation &op, const std::string &forcedLibrary,
                          const std::string &forcedCodegen, GemmLookup &gemm,
                          std::string &whyNotLibrary, bool &asked) {
  asked = false;
  // Strings and value-dependent shapes have no generated code: their
  // runtime kernels are taken even with --no-libraries, which is about
  // vendor libraries.
  if (!options.useLibraries && !isHostOp(&op)) {
    whyNotLibrary = "--no-libraries";
    return std::nullopt;
  }
  if (!forcedCodegen.empty() && isLibraryAnchor(&op)) {
    whyNotLibrary = "forced to generated code by the decisions file (" +
                    forcedCodegen + ")";
    return std::nullopt;
  }
  asked = true;
  request.forced = !forcedLibrary.empty();
  const Decisions::Algorithm *algorithm = decisions.algorithmFor(&op);
  request.convAlgorithm = algorithm ? algorithm->name : "";
  request.convAlgorithmEntry = algorithm ? algorithm->entry : "";
  std::optional<LibraryMatch> match =
      matchLibraryKernel(&op, request, whyNotLibrary);
  // A product whose epilogue the library call would leave, in part, to a
  // kernel after it: the GEMM kernel fuses all of it, which saves that
  // kernel's pass over the result (docs/gpu.md, "The GEMM kernel": measured
  // on the H200, gelu(x@w+b) 8192x4096x4096 0.40 ms against cuBLASLt's 0.35
  // + the GELU kernel's 0.04, BERT's FFN1 at K = 768 0.165 against 0.116 +
  // 0.065; shorter products stay the library's).
  if (match && !request.forced && gemmKernels && isa<graph::MatMulOp>(op)) {
    const std::optional<GemmMatch> &candidate = gemm.get();
    if (candidate && candidate->ops.size() > match->ops.size() &&
        candidate->depth >= kGemmOverLibraryDepth) {
      whyNotLibrary =
          "its library call would fuse " + std::to_string(match->ops.size()) +
          " of the " + std::to_string(candidate->ops.size()) +
          " ops the GEMM kernel fuses and leave the rest to a kernel after "
          "it; at K = " +
          std::to_string(candidate->depth) +
          " (>= " + std::to_string(kGemmOverLibraryDepth) +
          ") the GEMM kernel's fused epilogue is faster than that kernel's "
          "pass over the result";
      match.reset();
    }
  }
  return match;
}

LogicalResult Partitioner::visit(Operation &op) {
  std::string label = describeOp(&op);
  if (AttentionMatch *block = attention.at.lookup(&op)) {
    startAttention(op, *block, label);
    return success();
  }
  std::string forcedLibrary = decisions.forcedLibrary(&op);
  std::string forcedCodegen = decisions.forcedCodegen(&op);
  if (!forcedLibrary.empty() && !options.useLibraries)
    return decisions.error(module, forcedLibrary)
           << "a library call was asked for, but libraries are off "
              "(--no-libraries)";
  // Why `op` is not a library call, when it is not.
  std::string whyNotLibrary;
  GemmLookup gemm(&op, request);
  bool asked = false;
  if (std::optional<LibraryMatch> match = matchLibrary(
          op, forcedLibrary, forcedCodegen, gemm, whyNotLibrary, asked)) {
    if (auto it = attention.notAttention.find(&op);
        it != attention.notAttention.end())
      match->reason += "; not a flash-attention kernel: " + it->second;
    if (const Decisions::Algorithm *algorithm = decisions.algorithmFor(&op);
        algorithm && !algorithm->gpuForm()) {
      if (match->library != "dnnl.conv")
        return decisions.error(module, algorithm->entry)
               << "only oneDNN's convolutions (dnnl.conv) choose an "
                  "algorithm; this one is a "
               << match->library << " call";
      if (algorithm->name != "direct" && !match->attrs.get("winograd"))
        return decisions.error(module, algorithm->entry)
               << "oneDNN's Winograd convolution takes 2-D 3x3 convolutions "
                  "at stride and dilation 1 without groups; this one is not";
    }
    close(&op, label + " went to " + libraryVendor(match->library) +
                   " as a library call (" + match->library + ")");
    Group *group = start(&op);
    addMembers(group, match->ops);
    group->library = std::move(*match);
    return success();
  }
  if (asked && !forcedLibrary.empty())
    return decisions.error(module, forcedLibrary)
           << "no library kernel can take this node: " << whyNotLibrary;
  // (A GPU form was strata-conv-to-gemm's to follow.)
  if (const Decisions::Algorithm *algorithm = decisions.algorithmFor(&op);
      algorithm && !algorithm->gpuForm())
    return decisions.error(module, algorithm->entry)
           << "only oneDNN's convolutions (dnnl.conv) choose an algorithm, "
              "and this one is generated code: "
           << whyNotLibrary;
  std::pair<std::string, std::string> notGemm;
  if (gemmKernels && isa<graph::MatMulOp>(op)) {
    if (std::optional<GemmMatch> &match = gemm.get()) {
      close(&op, label + " starts a GEMM kernel (" + match->describe() +
                     "), a kernel of its own");
      Group *group = start(&op);
      for (Operation *member : ArrayRef(match->ops).drop_front()) {
        group->joined.push_back(describeOp(member) +
                                ": the GEMM's epilogue, applied to its "
                                "accumulators in registers");
        group->ops.push_back(member);
        group->members.insert(member);
        ledger.groupOf[member] = group;
      }
      claimed.insert(match->ops.begin(), match->ops.end());
      group->gemmReason =
          "a GEMM kernel (" + match->describe() +
          "): tensor-core products into f32 accumulators, the epilogue "
          "applied to them in registers, one write of the result; not a "
          "library call: " +
          whyNotLibrary;
      group->gemm = std::move(*match);
      return success();
    }
    notGemm = {label, gemm.whyNot};
  }
  placeGenerated(op, label, std::move(whyNotLibrary), std::move(notGemm));
  return success();
}

void Partitioner::placeGenerated(Operation &op, const std::string &label,
                                 std::string whyNotLibrary,
                                 std::pair<std::string, std::string> notGemm) {
  bool feedsFromCurrent =
      current && llvm::any_of(op.getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && current->members.contains(def);
      });
  // On the CPU a view of the current kernel's result may be computed in
  // the kernel (a copy that keeps the kernel going). On the GPU only
  // where the kernel stays one that strata-gpu-pull-fusion makes a single
  // all-parallel op (the reshape is an index computation: a slice, the
  // head split's view and a transpose, one kernel); elsewhere the copy
  // would make a multi-op body (see gpuJoinRefusal).
  bool fuseView = feedsFromCurrent && isLowerableToLinalg(&op) &&
                  (!facts.gpu ||
                   (staysPullable(*current, &op) && viewFeedsPullableOps(&op)));
  if (isViewOp(&op) && !fuseView) {
    // A view of a buffer. It closes the current kernel when it reads from
    // it (the kernel must produce the buffer before the view exists).
    ledger.views.insert(&op);
    if (feedsFromCurrent)
      close(&op, label + " is a view of its result (the buffer must be "
                         "written before the view exists)");
    return;
  }
  if (isHostOp(&op)) {
    // No generated code takes shapes known only at run time.
    op.emitError() << describeNode(&op) << " computes from "
                   << describeRunTimeSource(&op)
                   << ", so it must run on the host, but " << whyNotLibrary;
    failedAny = true;
    close(&op, label + " has no host kernel");
    return;
  }
  if (!isLowerableToLinalg(&op)) {
    InFlightDiagnostic diag = op.emitError();
    diag << "'" << op.getName() << "' ";
    if (std::string node = getNodeName(&op); !node.empty())
      diag << "(ONNX node '" << node << "') ";
    diag << "with operand types " << op.getOperandTypes()
         << " has no implementation on the " << options.target << " target yet";
    failedAny = true;
    close(&op, label + " has no generated implementation");
    return;
  }
  Group *group = nullptr;
  if (feedsFromCurrent) {
    std::string refused;
    if (current->ops.size() >= kMaxKernelOps)
      refused = "kernel size limit " + std::to_string(kMaxKernelOps) + " ops";
    else if (facts.gpu)
      refused = gpuJoinRefusal(*current, &op);
    if (refused.empty())
      refused = decisions.apartReason(current->ops, &op);
    if (refused.empty()) {
      group = join(&op, label + ": " + joinReason(*current, &op));
    } else {
      ledger.refusedJoin[&op] = {current, refused};
      close(&op, label + ": " + refused);
    }
  } else {
    group = placeBeside(op, label);
  }
  if (!group)
    current = group = start(&op);
  if (auto it = attention.notAttention.find(&op);
      it != attention.notAttention.end())
    whyNotLibrary += "; not a flash-attention kernel: " + it->second;
  if (!notGemm.first.empty())
    group->notGemm.push_back(std::move(notGemm));
  if (StringRef(whyNotLibrary).starts_with("--no-libraries"))
    group->noLibraries = true;
  else if (isLibraryAnchor(&op))
    group->anchorsNotLibrary.push_back({label, whyNotLibrary});
  else
    group->noLibraryOps.insert(op.getName().getStringRef());
}

Group *Partitioner::placeBeside(Operation &op, const std::string &label) {
  if (current && isWeightPrologue(&op, *current)) {
    // An op on the model's inputs and constants alone (a weight's cast)
    // gets a kernel of its own and leaves the current one open: closing it
    // would send that kernel's value through memory for nothing (RMSNorm's
    // x * rsqrt(mean(x^2)) * float(w)). Its call runs before the current
    // kernel's, which is placed after its last op. On the GPU it joins a
    // kernel that reduces rows instead, computed whole by each block
    // (RowParallel.h) where its values stay in registers: one launch fewer
    // (RMSNorm bf16 16384x4096 spent about 3 us of 71 on the cast's own
    // kernel). If a kernel other than this one reads it, it gets its own
    // after all (separateSharedPrologues).
    if (facts.gpu &&
        llvm::any_of(current->ops,
                     [](Operation *member) {
                       return reductionOf(member).kind != Reduction::None;
                     }) &&
        current->ops.size() < kMaxKernelOps &&
        decisions.apartReason(current->ops, &op).empty()) {
      joinedPrologues.push_back(&op);
      return join(&op, label + ": a weight's prologue (it reads only the "
                               "model's inputs and constants), computed "
                               "whole by each block of the kernel that "
                               "reads it");
    }
    return start(&op);
  }
  if (current && facts.gpu && isGatherPrologue(&op, *current) &&
      current->ops.size() < kMaxKernelOps &&
      decisions.apartReason(current->ops, &op).empty()) {
    // A position embedding next to the token embedding's gather: it joins
    // as a prologue, and their sum (which reads both) then joins too
    // (staysOneParallelOp). If a kernel other than this one reads it, it
    // gets its own after all (separateSharedPrologues).
    joinedPrologues.push_back(&op);
    return join(&op, label + ": a prologue (a gather of the model's inputs "
                             "and constants), fused into the elementwise "
                             "ops after it that read it");
  }
  close(&op, label + ", next in program order, does not read its results");
  return nullptr;
}

// A prologue that joined a kernel (placeBeside) whose result another kernel
// also reads gets a kernel of its own.
void Partitioner::separateSharedPrologues() {
  for (Operation *op : joinedPrologues) {
    Group *group = ledger.groupOf[op];
    if (llvm::all_of(op->getResult(0).getUsers(), [&](Operation *user) {
          return group->members.contains(user);
        }))
      continue;
    group->ops.erase(llvm::find(group->ops, op));
    group->members.erase(op);
    std::string why = describeOp(op) + ": ";
    llvm::erase_if(group->joined, [&](const std::string &reason) {
      return StringRef(reason).starts_with(why);
    });
    start(op);
  }
}

// Names, and the decisions file's tiles, before anything is outlined.
LogicalResult Partitioner::nameGroups() {
  for (auto [index, group] : llvm::enumerate(groups)) {
    group.category = categoryOf(group);
    group.name = kernelName(index, group);
    // Unique even against the model's own function names.
    for (unsigned n = 2; module.lookupSymbol(group.name); ++n)
      group.name = kernelName(index, group) + "_" + std::to_string(n);
    FailureOr<std::optional<Decisions::Tile>> tile =
        decisions.tileFor(group.ops, module);
    if (failed(tile))
      return failure();
    group.tile = *tile;
  }
  SmallVector<std::pair<Operation *, std::string>> tiled = decisions.tiledOps();
  llvm::sort(tiled, [](auto &a, auto &b) { return a.second < b.second; });
  for (auto &[op, node] : tiled) {
    Group *group = ledger.groupOf.lookup(op);
    if (!group)
      return decisions.error(module, "tile[\"" + node + "\"]")
             << "'" << node
             << "' is a view of a buffer, in no kernel; tiles apply to "
                "generated kernels";
    if (group->library)
      return decisions.error(module, "tile[\"" + node + "\"]")
             << "'" << node << "' is in the library call " << group->name
             << " (" << libraryVendor(group->library->library)
             << " chooses its own blocking); tiles apply to "
                "generated kernels";
  }
  return success();
}

LogicalResult Partitioner::outlineGroups() {
  // Every group's neighbours are read before any is outlined (outlining
  // replaces a group's values with its call's results).
  for (Group &group : groups)
    group.notFused = notFusedLines(ledger, group);

  // `groups` is no longer appended to, so the pointers above stay valid
  // until here; outlining erases the grouped ops.
  for (Group &group : groups)
    if (failed(outline(module, entry, group, decisions, facts.gpu)))
      return failure();
  // Causal masks that only attention kernels read were cloned into them.
  for (Operation *mask : attention.masks)
    if (mask->use_empty())
      mask->erase();
  // Constants that only kernels read were cloned into them.
  for (Operation &op :
       llvm::make_early_inc_range(entry.getBody().front().without_terminator()))
    if (isa<graph::ConstantOp>(op) && op.use_empty())
      op.erase();
  return success();
}

LogicalResult Partitioner::run() {
  gemmKernels = facts.wgmma;
  findAttentionBlocks();
  for (Operation &op : entry.getBody().front().without_terminator()) {
    if (isa<graph::ConstantOp>(op) || claimed.contains(&op))
      continue;
    if (failed(visit(op)))
      return failure();
  }
  if (failedAny)
    return failure();
  separateSharedPrologues();
  if (failed(nameGroups()))
    return failure();
  return outlineGroups();
}

LogicalResult strata::partitionIntoKernels(ModuleOp module,
                                           const CompileOptions &options) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");

  const Target *target = lookupTarget(options);
  if (!target)
    return module.emitError(unknownTargetMessage(options.target));
  TargetFacts facts = target->facts(options);
  bool gpuLibraries =
      facts.library == TargetFacts::Library::CublasLt && options.useLibraries;
  pretransposeGemmWeights(entry, gpuLibraries);
  if (gpuLibraries) {
    foldTransposedWeights(entry);
    storeUnalignedWeightsByRows(entry);
  }
  foldEmptyResults(entry);
  if (facts.gpu) {
    groupPullableChains(entry);
    sinkToLaterProducts(entry);
  }

  Decisions decisions;
  if (!options.decisionsFile.empty()) {
    FailureOr<Decisions> loaded = Decisions::load(options.decisionsFile, entry);
    if (failed(loaded) ||
        failed(loaded->checkForced(isLibraryAnchor, isLowerableToLinalg)))
      return failure();
    decisions = std::move(*loaded);
    // "cudnn" and "gemm" are forms strata-conv-to-gemm gives a GPU's
    // convolutions; the CPU's are oneDNN's kernels.
    if (const Decisions::Algorithm *form = decisions.firstGpuForm();
        form && !facts.gpu)
      return decisions.error(module, form->entry)
             << "\"" << form->name
             << "\" chooses a GPU convolution's form; on the " << options.target
             << " target a convolution's algorithm is oneDNN's: \"direct\", "
                "\"winograd\" or \"timed\"";
  }
  return Partitioner(module, entry, options, facts, decisions).run();
}
