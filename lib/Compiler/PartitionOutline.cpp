//===- PartitionOutline.cpp - a kernel's kind, name, reasons and outline --===//
//
// What the partitioner does with each group its walk formed (Partition.cpp):
// the kernel's kind and name (docs/explain.md), the reasons it records (why
// each op joined, why each neighbour stayed out, why a product is generated
// code), and the outlined kernel function with its decisions as typed
// attributes and its tile, called from the entry function in the group's
// place.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Gpu.h"
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

static constexpr int64_t kInlineConstantElements = 64;
/// A reduction whose every output element reduces at most this many input
/// elements makes a persistent-reduction kernel ("per"): one row (32 KiB of
/// f32) stays in L1 while the kernel's producers, the reduction and its
/// consumers run over it in one pass. Larger ones stream ("red").
static constexpr int64_t kMaxPersistentElements = 8192;
/// Kernel names list at most this many distinct op kinds and this many
/// characters of them, then "_etcN" (N: the kinds left out).
static constexpr size_t kNamedOpKinds = 4;
static constexpr size_t kMaxNamedOpChars = 40;

bool partition::isInlinableConstant(Operation *op) {
  auto constant = dyn_cast<graph::ConstantOp>(op);
  if (!constant)
    return false;
  auto value = constant.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    if (dense.isSplat())
      return true;
  return value.getNumElements() <= kInlineConstantElements;
}

//===----------------------------------------------------------------------===//
// Kernel kinds and names
//===----------------------------------------------------------------------===//

Reduction partition::reductionOf(Operation *op) {
  StringRef name = op->getName().stripDialect();
  if (name == "max_pool" || name == "average_pool" || name == "lp_pool" ||
      name == "lrn")
    return {Reduction::Windowed, 0};
  if (op->getNumOperands() == 0)
    return {};
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!input || !input.hasStaticShape())
    return {};
  ArrayRef<int64_t> shape = input.getShape();
  int64_t rank = input.getRank();
  auto axisAttr = [&](StringRef attr, int64_t fallback) {
    int64_t axis = fallback;
    if (auto value = op->getAttrOfType<IntegerAttr>(attr))
      axis = value.getInt();
    return axis < 0 ? axis + rank : axis;
  };
  auto alongAxis = [&](int64_t axis) -> Reduction {
    if (axis < 0 || axis >= rank)
      return {Reduction::Full, input.getNumElements()};
    return {Reduction::Full, shape[axis]};
  };
  if (name.starts_with("reduce_")) {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    if (!axes || axes.empty()) {
      auto noop = op->getAttrOfType<IntegerAttr>("noop_with_empty_axes");
      // Axes only known at run time reduce some dimensions: count all.
      if (noop && noop.getInt() && op->getNumOperands() == 1)
        return {};
      return {Reduction::Full, input.getNumElements()};
    }
    int64_t extent = 1;
    for (int64_t axis : axes.asArrayRef())
      extent *= shape[axis < 0 ? axis + rank : axis];
    return {Reduction::Full, extent};
  }
  if (name == "softmax" || name == "log_softmax" || name == "hardmax")
    return alongAxis(axisAttr("axis", -1));
  if (name == "arg_max" || name == "arg_min")
    return alongAxis(axisAttr("axis", 0));
  if (name == "cum_sum")
    return op->hasAttr("axis")
               ? alongAxis(axisAttr("axis", 0))
               : Reduction{Reduction::Full, input.getNumElements()};
  if (name == "layer_norm") {
    int64_t axis = axisAttr("axis", -1);
    return {Reduction::Full, llvm::product_of(shape.drop_front(
                                 std::max<int64_t>(0, std::min(axis, rank))))};
  }
  if (name == "instance_norm" || name.starts_with("global_"))
    return {Reduction::Full,
            llvm::product_of(shape.drop_front(std::min<int64_t>(2, rank)))};
  if (name == "group_norm") {
    auto groups = op->getAttrOfType<IntegerAttr>("num_groups");
    int64_t perSample =
        llvm::product_of(shape.drop_front(std::min<int64_t>(1, rank)));
    return {Reduction::Full, groups && groups.getInt() > 0
                                 ? perSample / groups.getInt()
                                 : perSample};
  }
  if (name == "mean_variance_norm") {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    int64_t extent = 1;
    if (axes)
      for (int64_t axis : axes.asArrayRef())
        extent *= shape[axis < 0 ? axis + rank : axis];
    return {Reduction::Full, extent};
  }
  if (name == "negative_log_likelihood_loss" ||
      name == "softmax_cross_entropy_loss")
    return {Reduction::Full, input.getNumElements()};
  return {};
}

static bool isMatmulLike(Operation *op) {
  StringRef name = op->getName().stripDialect();
  return name == "matmul" || name == "gemm" || name == "matmul_integer" ||
         name == "qlinear_matmul" || name == "einsum" || name == "rnn" ||
         name == "gru" || name == "lstm";
}

static bool isConvLike(Operation *op) {
  StringRef name = op->getName().stripDialect();
  return name == "conv" || name == "conv_transpose" || name == "conv_integer" ||
         name == "qlinear_conv";
}

/// Whether the kernel holds matmul -> softmax -> matmul along its own values
/// (an attention block, however its heads are laid out).
static bool holdsAttention(const Group &group) {
  enum : unsigned { AfterMatmul = 1, AfterSoftmax = 2 };
  llvm::DenseMap<Operation *, unsigned> reach;
  for (Operation *op : group.ops) {
    unsigned in = 0;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        in |= reach.lookup(def);
    if (isa<graph::MatMulOp, graph::GemmOp>(op)) {
      if (in & AfterSoftmax)
        return true;
      in |= AfterMatmul;
    }
    if (isa<graph::SoftmaxOp, graph::LogSoftmaxOp>(op) && (in & AfterMatmul))
      in |= AfterSoftmax;
    reach[op] = in;
  }
  return false;
}

/// The kind prefix of a kernel's name (docs/explain.md).
std::string partition::categoryOf(const Group &group) {
  if (group.library)
    return "lib";
  if (holdsAttention(group))
    return "attn";
  if (llvm::any_of(group.ops, isConvLike))
    return "conv";
  if (llvm::any_of(group.ops, isMatmulLike))
    return "mm";
  bool anyReduction = false, persistent = true;
  for (Operation *op : group.ops) {
    Reduction r = reductionOf(op);
    if (r.kind == Reduction::None)
      continue;
    anyReduction = true;
    if (r.kind == Reduction::Windowed || r.extent > kMaxPersistentElements)
      persistent = false;
  }
  if (!anyReduction)
    return "poi";
  return persistent ? "per" : "red";
}

/// "strata_poi_fused_add_gelu_3": the kind, what the kernel computes, and
/// its index, as a C identifier (kernel names are symbols of the shared
/// object). Distinct op kinds in order of appearance, at most kNamedOpKinds
/// of them and kMaxNamedOpChars characters, then "_etcN".
std::string partition::kernelName(size_t index, const Group &group) {
  SmallVector<std::string> kinds;
  for (Operation *op : group.ops) {
    std::string kind;
    for (char c : op->getName().stripDialect())
      kind += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (!llvm::is_contained(kinds, kind))
      kinds.push_back(kind);
  }
  std::string ops;
  size_t named = 0;
  for (const std::string &kind : kinds) {
    if (named == kNamedOpKinds ||
        (named > 0 && ops.size() + 1 + kind.size() > kMaxNamedOpChars))
      break;
    ops += (named ? "_" : "") + kind.substr(0, kMaxNamedOpChars);
    ++named;
  }
  if (named < kinds.size())
    ops += "_etc" + std::to_string(kinds.size() - named);
  // A generated kernel of one op fused nothing; a library step is named by
  // its call and post-ops.
  bool fused = !group.library && group.ops.size() > 1;
  return "strata_" + group.category + (fused ? "_fused_" : "_") + ops + "_" +
         std::to_string(index);
}

//===----------------------------------------------------------------------===//
// Reasons
//===----------------------------------------------------------------------===//

/// Why the consumer `c` is not in the kernel of its producer `p`, from the
/// side of `p`'s kernel (consumerSide) or of `c`'s.
static std::string whyNotFused(const Ledger &ledger, Operation *p, Operation *c,
                               bool consumerSide) {
  if (ledger.views.contains(c) || ledger.views.contains(p))
    return "a view of the buffer, no kernel";
  Group *g = ledger.groupOf.lookup(p);
  Group *h = ledger.groupOf.lookup(c);
  if (!g || !h)
    return "not in a kernel";
  // A consumer that is itself part of a library call is there first of
  // all because of that call.
  if (h->library) {
    if (h->ops.front() == c)
      return consumerSide ? "goes to " + libraryVendor(h->library->library) +
                                " as a library call of its own (" +
                                h->library->library + ")"
                          : libraryVendor(h->library->library) + "'s " +
                                h->library->library +
                                " reads its inputs from memory (no fused "
                                "prologue)";
    for (auto [op, why] : llvm::zip(h->ops, h->library->joinReasons))
      if (op == c)
        return consumerSide
                   ? "fused into the library call " + h->name + " instead (" +
                         why + ")"
                   : "read from memory by this call's post-op (" + why + ")";
  }
  if (g->library) {
    for (auto &[op, why] : g->library->refused)
      if (op == c)
        return consumerSide ? why
                            : "its library call does not take " +
                                  strata::describeOp(c) + ": " + why;
    return "the library call " + g->name + " (" + g->library->library +
           ") takes no further ops";
  }
  if (auto it = ledger.refusedJoin.find(c);
      it != ledger.refusedJoin.end() && it->second.first == g)
    return consumerSide
               ? it->second.second
               : strata::describeOp(c) +
                     " started a kernel of its own: " + it->second.second;
  if (g->closedBy)
    return (consumerSide ? "this kernel was closed before it: "
                         : "its kernel was closed before " +
                               strata::describeOp(c) + " came: ") +
           g->closeReason;
  return "in another kernel";
}

/// The not-fused lines of `group`: its producers, then its consumers, each
/// once, in program order.
SmallVector<std::string> partition::notFusedLines(const Ledger &ledger,
                                                  const Group &group) {
  llvm::SetVector<Operation *> producers, consumers;
  llvm::DenseMap<Operation *, Operation *> firstReader, firstProducer;
  for (Operation *op : group.ops) {
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || group.members.contains(def) || isa<graph::ConstantOp>(def))
        continue;
      // An attention kernel computes its causal mask itself.
      if (group.attention && def == group.attention->mask)
        continue;
      if (producers.insert(def))
        firstReader[def] = op;
    }
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        if (group.members.contains(user) || isa<func::ReturnOp>(user))
          continue;
        if (consumers.insert(user))
          firstProducer[user] = op;
      }
  }
  auto byOrder = [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  };
  SmallVector<Operation *> p(producers.begin(), producers.end());
  SmallVector<Operation *> c(consumers.begin(), consumers.end());
  llvm::sort(p, byOrder);
  llvm::sort(c, byOrder);
  SmallVector<std::string> lines;
  for (Operation *op : p)
    lines.push_back(strata::describeOp(op) + " (producer): " +
                    whyNotFused(ledger, op, firstReader[op],
                                /*consumerSide=*/false));
  for (Operation *op : c)
    lines.push_back(strata::describeOp(op) + " (consumer): " +
                    whyNotFused(ledger, firstProducer[op], op,
                                /*consumerSide=*/true));
  return lines;
}

/// strata.reason of a generated kernel: why it is not a library call.
/// Anchors that share a reason are listed together.
static std::string codegenReason(const Group &group) {
  std::string notGemm;
  for (auto &[op, why] : group.notGemm)
    notGemm += "; " + op + ": not the GEMM kernel: " + why;
  if (group.noLibraries)
    return "--no-libraries: every kernel is generated code" + notGemm;
  SmallVector<std::pair<std::string, std::string>> byReason; // reason, ops
  for (auto &[op, reason] : group.anchorsNotLibrary) {
    const std::string &why = reason;
    auto it = llvm::find_if(byReason, [&](auto &e) { return e.first == why; });
    if (it == byReason.end())
      byReason.push_back({why, op});
    else
      it->second += ", " + op;
  }
  std::string reason;
  for (auto &[why, ops] : byReason)
    reason += (reason.empty() ? "" : "; ") + ops + ": " + why;
  if (!group.noLibraryOps.empty()) {
    std::string ops;
    for (StringRef op : group.noLibraryOps)
      ops += (ops.empty() ? "" : ", ") + op.str();
    reason += (reason.empty() ? "" : "; ") + ("no library kernel for " + ops);
  }
  return reason + notGemm;
}

static ArrayAttr stringArray(MLIRContext *context, ArrayRef<std::string> list) {
  SmallVector<Attribute> attrs;
  for (const std::string &s : list)
    attrs.push_back(StringAttr::get(context, s));
  return ArrayAttr::get(context, attrs);
}

//===----------------------------------------------------------------------===//
// Outlining
//===----------------------------------------------------------------------===//

/// The GPU's row split: kernels with reductions take one row per block from
/// this many elements per row (outline).
static constexpr int64_t kGpuOneRowElements = 512;

namespace {
/// A group's kernel function's interface: its operands from outside the
/// group (a library kernel's in the library's order, repeats included; a
/// generated kernel's each once, in first-use order), the small constants
/// and causal masks cloned in instead, and its results (the values read
/// outside the group).
struct KernelInterface {
  SmallVector<Value> inputs, outputs;
  llvm::SetVector<Operation *> inlined;
};
} // namespace

static KernelInterface kernelInterface(const Group &group) {
  KernelInterface k;
  SmallVector<Value> &inputs = k.inputs;
  llvm::SetVector<Operation *> &inlined = k.inlined;
  // Operands from outside the group, in first-use order; small constants
  // are cloned in instead.
  // A library kernel takes its operands in its own order, repeats included
  // (x @ x passes x twice); a generated kernel takes each value once.
  llvm::SetVector<Value> inputSet;
  if (group.library)
    for (OpOperand *operand : group.library->inputs)
      inputs.push_back(operand->get());
  if (group.attention) {
    inputSet.insert(group.attention->q.source->get());
    inputSet.insert(group.attention->k.source->get());
    inputSet.insert(group.attention->v.source->get());
    // The bias is read from its buffer, even when it is a constant.
    if (group.attention->bias)
      inputSet.insert(group.attention->bias->source->get());
    // The causal mask is computed by the kernel from indices: its Trilu
    // and the Trilu's constants are cloned in, not passed.
    if (Operation *mask = group.attention->mask) {
      for (Value operand : mask->getOperands())
        inlined.insert(operand.getDefiningOp());
      inlined.insert(mask);
    }
  }
  for (Operation *op : group.ops)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && (group.members.contains(def) || inlined.contains(def)))
        continue;
      if (group.library) {
        // The constants a post-op reads (a clip's bounds, which became
        // attributes) are cloned in, so that the body stays valid IR.
        if (def && isa<graph::ConstantOp>(def) &&
            !llvm::is_contained(inputs, operand))
          inlined.insert(def);
        continue;
      }
      if (def && isInlinableConstant(def) && !inputSet.contains(operand))
        inlined.insert(def);
      else
        inputSet.insert(operand);
    }
  if (!group.library)
    inputs.assign(inputSet.begin(), inputSet.end());
  for (Operation *op : group.ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !group.members.contains(user);
          }))
        k.outputs.push_back(result);
  return k;
}

/// The decisions recorded on a group's kernel function: its kind, library
/// or template and their parameters, the reason, the ONNX nodes it computes
/// and why its ops joined (and its neighbours did not).
static void setDecisions(func::FuncOp kernel, const Group &group,
                         ArrayRef<Value> inputs) {
  MLIRContext *context = kernel.getContext();
  OpBuilder builder(context);
  kernel::set<kernel::IsKernel>(kernel, UnitAttr::get(context));
  kernel::set<kernel::Category>(kernel,
                                StringAttr::get(context, group.category));
  SmallVector<std::string> fusedBecause;
  if (group.library) {
    kernel::set<kernel::Kind>(kernel, StringAttr::get(context, "library"));
    kernel::set<kernel::Library>(
        kernel, StringAttr::get(context, group.library->library));
    kernel::set<kernel::LibraryAttrs>(
        kernel, group.library->attrs.getDictionary(context));
    if (group.library->accumulates)
      kernel::set<kernel::Accumulates>(
          kernel, builder.getI64IntegerAttr(*group.library->accumulates));
    kernel::set<kernel::Reason>(
        kernel, StringAttr::get(context, group.library->reason));
    for (auto [op, why] : llvm::zip(group.ops, group.library->joinReasons))
      if (!why.empty())
        fusedBecause.push_back(strata::describeOp(op) + ": " + why);
  } else if (group.gemm) {
    kernel::set<kernel::Kind>(kernel, StringAttr::get(context, "codegen"));
    kernel::set<kernel::Template>(kernel, StringAttr::get(context, "gemm"));
    kernel::set<kernel::Gemm>(kernel, group.gemm->toAttr(builder, inputs));
    kernel::set<kernel::Reason>(kernel,
                                StringAttr::get(context, group.gemmReason));
    fusedBecause.assign(group.joined.begin(), group.joined.end());
  } else if (group.attention) {
    kernel::set<kernel::Kind>(kernel, StringAttr::get(context, "codegen"));
    kernel::set<kernel::Template>(kernel,
                                  StringAttr::get(context, "flash_attention"));
    kernel::set<kernel::Attention>(kernel,
                                   group.attention->toAttr(builder, inputs));
    std::string layout =
        !group.attention->layout.empty()
            ? "; it reads and writes through the strides of " +
                  std::to_string(group.attention->layout.size()) +
                  " layout op(s) (head split and merge), which need no "
                  "kernels"
            : "";
    kernel::set<kernel::Reason>(
        kernel,
        StringAttr::get(context,
                        "a flash-attention kernel for " +
                            group.attention->describe() +
                            ": tensor-core products, the softmax online, "
                            "tile by tile; the scores never leave the chip" +
                            layout));
    fusedBecause.assign(group.joined.begin(), group.joined.end());
  } else {
    kernel::set<kernel::Kind>(kernel, StringAttr::get(context, "codegen"));
    kernel::set<kernel::Reason>(kernel,
                                StringAttr::get(context, codegenReason(group)));
    fusedBecause.assign(group.joined.begin(), group.joined.end());
  }
  SmallVector<std::string> nodes;
  SmallVector<Operation *> computed(group.ops.begin(), group.ops.end());
  if (group.attention && group.attention->mask)
    computed.push_back(group.attention->mask);
  for (Operation *op : computed)
    for (std::string &node : strata::getNodeNames(op))
      if (!llvm::is_contained(nodes, node))
        nodes.push_back(std::move(node));
  // One op of the graph layer that several ONNX nodes became (GELU's Div,
  // Erf, Add and Mul as graph.gelu): nothing joined, but the nodes did fuse.
  if (fusedBecause.empty() && group.ops.size() == 1 && nodes.size() > 1)
    fusedBecause.push_back(strata::describeOp(group.ops.front()) +
                           ": the graph layer formed these " +
                           std::to_string(nodes.size()) + " nodes into one op");
  kernel::set<kernel::Nodes>(kernel, stringArray(context, nodes));
  kernel::set<kernel::FusedBecause>(kernel, stringArray(context, fusedBecause));
  kernel::set<kernel::NotFused>(kernel, stringArray(context, group.notFused));
}

/// Clones the group's ops (and the constants and masks it inlines) into the
/// kernel's body.
static void buildBody(func::FuncOp kernel, const Group &group,
                      const KernelInterface &k) {
  OpBuilder builder(kernel.getContext());
  const SmallVector<Value> &inputs = k.inputs, &outputs = k.outputs;
  const llvm::SetVector<Operation *> &inlined = k.inlined;
  Block *body = kernel.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [value, arg] : llvm::zip(inputs, body->getArguments()))
    if (!mapping.contains(value))
      mapping.map(value, arg);
  for (Operation *op : inlined)
    builder.clone(*op, mapping);
  for (Operation *op : group.ops)
    builder.clone(*op, mapping);
  SmallVector<Value> results;
  for (Value v : outputs)
    results.push_back(mapping.lookup(v));
  func::ReturnOp::create(builder, group.ops.back()->getLoc(), results);
}

/// A generated kernel's row split (RowParallel.h) into `tile`, with the
/// parallel attributes the wrapper walks; failure when the decisions file
/// asks for a split the kernel cannot take.
static LogicalResult planRowTile(ModuleOp module, func::FuncOp kernel,
                                 const Group &group,
                                 const strata::Decisions &decisions, bool gpu,
                                 NamedAttrList &tile) {
  MLIRContext *context = kernel.getContext();
  auto i64 = IntegerType::get(context, 64);
  std::string whyNot;
  std::optional<int64_t> forced;
  if (group.tile)
    forced = group.tile->rowsPerBlock;
  std::optional<RowPlan> plan = planRows(kernel, forced, &whyNot);
  // On the GPU, a kernel that reduces its rows takes one row per block
  // when a row has enough elements for a few warps: every reduction then
  // has one point per block, and the row stays in registers (strata-gpu-
  // map, "rows in registers"; GPT-2's and BERT's LayerNorms over 768
  // columns). The CPU's heuristic gathers rows up to kMinBlockElements
  // for a thread's worth of work.
  std::string gpuSource;
  // The CPU's heuristic finds no block when no divisor of the rows gathers
  // kMinBlockElements (ViT's 197 tokens, a prime, of 768 columns): on the
  // CPU the kernel then runs whole on one thread, which costs little; on
  // the GPU it would be one thread block for the whole tensor (a ViT-B
  // LayerNorm at batch 1: 58 us instead of a few). There a row per block
  // is right whatever the row's length: short rows are packed into warps,
  // several to a block (strata-gpu-map's planPack). Only for persistent
  // reductions (norms, softmax: several ops one after another in a
  // block): a lone reduction or product kernel whole is already spread
  // over the grid, one output point per thread.
  if (gpu && !plan && !forced && group.category == "per")
    if (std::optional<RowPlan> one = planRows(kernel, 1)) {
      plan = one;
      gpuSource = "the GPU's: one row per block (no divisor of the " +
                  std::to_string(one->rows) +
                  " rows gathers the CPU heuristic's " +
                  std::to_string(kMinBlockElements) +
                  " elements; short rows pack into warps)";
    }
  if (gpu && plan && !forced && plan->block > 1 && group.category != "poi") {
    int64_t rowElements = 0;
    for (Type type : kernel.getFunctionType().getResults())
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && tensor.hasStaticShape())
        rowElements =
            std::max(rowElements, tensor.getNumElements() / plan->rows);
    if (rowElements >= kGpuOneRowElements)
      if (std::optional<RowPlan> one =
              planRows(kernel, 1, nullptr, plan->dims)) {
        plan = one;
        gpuSource = "the GPU's: one row per block (" +
                    std::to_string(rowElements) +
                    " elements per row, at least " +
                    std::to_string(kGpuOneRowElements) +
                    "), so each reduction takes the whole block";
      }
  }
  if (!plan && group.tile)
    return decisions.error(module, "tile[\"" + group.tile->node + "\"]")
           << "cannot split " << group.name << " into blocks of "
           << group.tile->rowsPerBlock << " rows: " << whyNot;
  if (plan) {
    tile.set("rows", IntegerAttr::get(i64, plan->rows));
    tile.set("rows_per_block", IntegerAttr::get(i64, plan->block));
    tile.set("blocks", IntegerAttr::get(i64, plan->extent()));
    if (plan->dims > 1)
      tile.set("row_dims", IntegerAttr::get(i64, plan->dims));
    std::string source =
        group.tile ? "decisions file: the tile for '" + group.tile->node + "'"
        : !gpuSource.empty() ? gpuSource
                             : plan->source;
    tile.set("source", StringAttr::get(context, source));
    // One block needs no split: the kernel runs whole, as without a plan.
    if (plan->block < plan->rows) {
      kernel::set<kernel::ParallelRows>(kernel,
                                        IntegerAttr::get(i64, plan->rows));
      kernel::set<kernel::ParallelBlock>(kernel,
                                         IntegerAttr::get(i64, plan->block));
      if (plan->dims > 1)
        kernel::set<kernel::ParallelDims>(kernel,
                                          IntegerAttr::get(i64, plan->dims));
    }
  } else {
    tile.set("source", StringAttr::get(context, "no split: " + whyNot));
  }
  return success();
}

/// The kernel's tile: a library call's (none), the GEMM kernel's tiles,
/// the flash-attention kernel's query rows, or a generated kernel's row
/// split, each with where it came from.
static LogicalResult setTile(ModuleOp module, func::FuncOp kernel,
                             const Group &group,
                             const strata::Decisions &decisions, bool gpu) {
  MLIRContext *context = kernel.getContext();
  auto i64 = IntegerType::get(context, 64);
  NamedAttrList tile;
  if (group.library) {
    tile.set("source", StringAttr::get(
                           context, "none: a library call; " +
                                        libraryVendor(group.library->library) +
                                        " chooses its own blocking and "
                                        "threads"));
  } else if (group.gemm) {
    // Tiles of rows and columns, not row blocks: no rows_per_block. The
    // blocks are persistent: at most one per SM, each taking every
    // grid-th tile ("blocks" is the most there can be).
    const GemmMatch &g = *group.gemm;
    std::string why;
    int64_t tileColumns = g.tileColumns(&why);
    int64_t tiles = gemmTileRowCount(g.rows) * (g.columns / tileColumns);
    std::string padding;
    if (int64_t last = g.rows % kGemmTileRows)
      padding = "; the last tile row holds " + std::to_string(last) +
                " of its " + std::to_string(kGemmTileRows) +
                " rows (the rest zeros, not stored)";
    tile.set("blocks", IntegerAttr::get(i64, tiles));
    tile.set("source",
             StringAttr::get(
                 context,
                 "the GEMM kernel's tiles: " + std::to_string(kGemmTileRows) +
                     "x" + std::to_string(tileColumns) + " of the result (" +
                     std::to_string(tiles) + " tiles for " +
                     std::to_string(g.rows) + "x" + std::to_string(g.columns) +
                     ") walked by at most one block per SM, " +
                     std::to_string(kGemmTileDepth) + " of K per step" +
                     padding + " (" + why + ")"));
  } else if (group.attention) {
    const AttentionMatch &a = *group.attention;
    int64_t rows = a.queryRows;
    tile.set("rows", IntegerAttr::get(i64, a.batch * a.seqQ));
    tile.set("rows_per_block", IntegerAttr::get(i64, rows));
    tile.set("blocks",
             IntegerAttr::get(
                 i64, a.batch * attentionBlocksPerSequence(a.seqQ, rows)));
    tile.set(
        "source",
        StringAttr::get(
            context,
            "the flash-attention kernel's tile: " + std::to_string(rows) +
                " query rows per block, keys in steps of " +
                std::to_string(attentionStepKeys(a.headDim, rows, a.seqK)) +
                (a.portableQueryRows
                     ? "; in the portable PTX (for GPUs the cubin does not "
                       "run on) " +
                           std::to_string(a.portableQueryRows) +
                           " query rows per block, keys in steps of " +
                           std::to_string(kAttentionBlockRows) +
                           ", launched as its own"
                     : std::string())));
  } else if (failed(planRowTile(module, kernel, group, decisions, gpu, tile))) {
    return failure();
  }
  kernel::set<kernel::Tile>(kernel, tile.getDictionary(context));
  return success();
}

LogicalResult partition::outline(ModuleOp module, func::FuncOp entry,
                                 const Group &group,
                                 const strata::Decisions &decisions, bool gpu) {
  MLIRContext *context = module.getContext();
  KernelInterface k = kernelInterface(group);
  SmallVector<Type> inputTypes, outputTypes;
  for (Value v : k.inputs)
    inputTypes.push_back(v.getType());
  for (Value v : k.outputs)
    outputTypes.push_back(v.getType());

  // The kernel and its call are located at every node they compute, so
  // diagnostics and dumps name the nodes.
  SmallVector<Location> locs;
  for (Operation *op : group.ops)
    locs.push_back(op->getLoc());
  Location loc = FusedLoc::get(context, locs);

  OpBuilder builder(context);
  builder.setInsertionPoint(entry);
  auto kernel =
      func::FuncOp::create(builder, loc, group.name,
                           FunctionType::get(context, inputTypes, outputTypes));
  kernel.setPrivate();
  setDecisions(kernel, group, k.inputs);
  buildBody(kernel, group, k);
  if (failed(setTile(module, kernel, group, decisions, gpu)))
    return failure();

  // The call takes the group's place (after its last op: every input is
  // defined before some group op, and no op between the group's ops uses
  // its results, since the group is a contiguous run).
  builder.setInsertionPointAfter(group.ops.back());
  auto call = func::CallOp::create(builder, loc, kernel, k.inputs);
  for (auto [value, result] : llvm::zip(k.outputs, call.getResults()))
    value.replaceAllUsesWith(result);
  for (Operation *op : llvm::reverse(group.ops))
    op->erase();
  return success();
}
