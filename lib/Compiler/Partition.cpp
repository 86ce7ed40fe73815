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
namespace graph = strata::graph;

static constexpr int64_t kInlineConstantElements = 64;
static constexpr size_t kMaxKernelOps = 48;
/// A reduction whose every output element reduces at most this many input
/// elements makes a persistent-reduction kernel ("per"): one row (32 KiB of
/// f32) stays in L1 while the kernel's producers, the reduction and its
/// consumers run over it in one pass. Larger ones stream ("red").
static constexpr int64_t kMaxPersistentElements = 8192;
/// Kernel names list at most this many distinct op kinds and this many
/// characters of them, then "_etcN" (N: the kinds left out).
static constexpr size_t kNamedOpKinds = 4;
static constexpr size_t kMaxNamedOpChars = 40;

func::FuncOp strata::getEntryFunction(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      return func;
  return nullptr;
}

static std::string nameAttr(DictionaryAttr attrs, const char *fallback,
                            unsigned index) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("graph.name"))
      return name.str();
  return fallback + std::to_string(index);
}

std::string strata::getArgumentName(func::FuncOp func, unsigned index) {
  return nameAttr(func.getArgAttrDict(index), "input", index);
}

std::string strata::getResultName(func::FuncOp func, unsigned index) {
  return nameAttr(func.getResultAttrDict(index), "output", index);
}

std::string strata::getNodeName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "";
}

std::string strata::typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

std::string strata::describeNode(Operation *op) {
  std::string node = getNodeName(op);
  return node.empty() ? "'" + op->getName().getStringRef().str() + "'"
                      : "ONNX node '" + node + "'";
}

bool strata::isViewOp(Operation *op) {
  // An op on the host copies: a view needs arena bytes in the plan.
  if (onRunTimeShapes(op))
    return false;
  if (!isa<graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp,
           graph::UnsqueezeOp, graph::IdentityOp>(op))
    return false;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return in && out && in.hasStaticShape() && out.hasStaticShape() &&
         in.getElementType() == out.getElementType() &&
         in.getNumElements() == out.getNumElements();
}

static bool isInlinableConstant(Operation *op) {
  auto constant = dyn_cast<graph::ConstantOp>(op);
  if (!constant)
    return false;
  auto value = constant.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    if (dense.isSplat())
      return true;
  return value.getNumElements() <= kInlineConstantElements;
}

namespace {
struct Group {
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> members;
  /// Set for a library step (its inputs are in the library's order).
  std::optional<strata::LibraryMatch> library;
  /// Set for a flash-attention kernel (inputs Q, K, V).
  std::optional<strata::AttentionMatch> attention;
  /// Set for the GEMM kernel with its epilogue (Gemm.h), with the reason.
  std::optional<strata::GemmMatch> gemm;
  std::string gemmReason;
  /// Products of generated code that the GEMM kernel does not take, and why.
  SmallVector<std::pair<std::string, std::string>> notGemm;
  /// Generated kernels: why each op after the first joined.
  SmallVector<std::string> joined;
  /// Generated kernels: each anchor op (matmul, gemm, conv) and why it is
  /// not a library call, and the other ops no library takes.
  SmallVector<std::pair<std::string, std::string>> anchorsNotLibrary;
  llvm::SetVector<StringRef> noLibraryOps;
  bool noLibraries = false;
  /// The op at which the partitioner stopped growing this kernel, and why
  /// (a phrase with that op as its subject).
  Operation *closedBy = nullptr;
  std::string closeReason;
  /// The decisions file's row split for it.
  std::optional<strata::Decisions::Tile> tile;
  /// The kind prefix and the kernel's name.
  std::string category, name;
  /// Why its neighbours are not in it (computed before any outlining).
  SmallVector<std::string> notFused;
};

/// What the grouping decided about each op, for the not-fused reasons.
struct Ledger {
  llvm::DenseMap<Operation *, Group *> groupOf;
  /// Views left outside every kernel.
  llvm::SmallPtrSet<Operation *, 16> views;
  /// Ops that read the kernel being grown when they came but started their
  /// own: that kernel and why.
  llvm::DenseMap<Operation *, std::pair<Group *, std::string>> refusedJoin;
};
} // namespace

//===----------------------------------------------------------------------===//
// Kernel kinds and names
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

namespace {
/// How an op reduces: not at all, over whole dimensions (with the number of
/// input elements each output element reduces), or over windows (pooling,
/// LRN: each output reads a neighbourhood, no row to keep in cache).
struct Reduction {
  enum Kind { None, Full, Windowed } kind = None;
  int64_t extent = 0;
};
} // namespace

static Reduction reductionOf(Operation *op) {
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
    return {Reduction::Full, product(shape.drop_front(
                                 std::max<int64_t>(0, std::min(axis, rank))))};
  }
  if (name == "instance_norm" || name.starts_with("global_"))
    return {Reduction::Full,
            product(shape.drop_front(std::min<int64_t>(2, rank)))};
  if (name == "group_norm") {
    auto groups = op->getAttrOfType<IntegerAttr>("num_groups");
    int64_t perSample = product(shape.drop_front(std::min<int64_t>(1, rank)));
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
static std::string categoryOf(const Group &group) {
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
static std::string kernelName(size_t index, const Group &group) {
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
static SmallVector<std::string> notFusedLines(const Ledger &ledger,
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
    int64_t tiles = g.rows / kGemmTileRows * (g.columns / tileColumns);
    tile.set("blocks", IntegerAttr::get(i64, tiles));
    tile.set("source",
             StringAttr::get(
                 context,
                 "the GEMM kernel's tiles: " + std::to_string(kGemmTileRows) +
                     "x" + std::to_string(tileColumns) + " of the result (" +
                     std::to_string(tiles) + " tiles for " +
                     std::to_string(g.rows) + "x" + std::to_string(g.columns) +
                     ") walked by at most one block per SM, " +
                     std::to_string(kGemmTileDepth) + " of K per step (" + why +
                     ")"));
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

static LogicalResult outline(ModuleOp module, func::FuncOp entry,
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

//===----------------------------------------------------------------------===//
// Partitioning
//===----------------------------------------------------------------------===//

/// `v` viewed with `shape` (a graph.reshape; `v` itself when it has it).
static Value reshapeTo(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
  if (type == v.getType())
    return v;
  auto shapeType =
      RankedTensorType::get({int64_t(shape.size())}, b.getI64Type());
  Value shapeValue = graph::ConstantOp::create(
      b, loc, DenseElementsAttr::get(shapeType, shape));
  return graph::ReshapeOp::create(b, loc, type, v, shapeValue);
}

/// x @ wᵀ (+ bias over N) for a matrix w [N, K], as one Gemm with transB:
/// x's leading dimensions folded into rows by views, the product viewed
/// with `yType`'s shape. cuBLASLt reads w's rows of K, which are 16-byte
/// aligned when the product's rows of N need not be: the runtime then runs
/// it as classes of rows that are (runtime/lib/cuda/CublasLt.h).
static Value gemmByRowsOfK(OpBuilder &b, Location loc, Value x, Value w,
                           Value bias, RankedTensorType yType) {
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
  int64_t rows = cast<RankedTensorType>(x.getType()).getNumElements() /
                 std::max<int64_t>(k, 1);
  if (bias)
    bias = reshapeTo(b, loc, bias, {n});
  Value product = graph::GemmOp::create(
      b, loc, RankedTensorType::get({rows, n}, yType.getElementType()),
      reshapeTo(b, loc, x, {rows, k}), w, bias, b.getF32FloatAttr(1.0f),
      b.getF32FloatAttr(1.0f), b.getI64IntegerAttr(0), b.getI64IntegerAttr(1));
  return reshapeTo(b, loc, product, yType.getShape());
}

/// A constant matrix's elements transposed: [rows, cols] -> [cols, rows].
static DenseElementsAttr transposeMatrix(DenseElementsAttr weights) {
  auto type = cast<RankedTensorType>(weights.getType());
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
  ArrayRef<char> from = weights.getRawData();
  std::vector<char> to(from.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&to[(c * rows + r) * width], &from[(r * cols + c) * width],
                  width);
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get({cols, rows}, type.getElementType()), to);
}

/// Gemm's constant transB weights (as PyTorch's Linear exports them) are
/// transposed once here instead of on every run; on the GPU with
/// libraries, not when the product's rows are unaligned and the weight's
/// stored rows are not (rowClassesNeedWeightRowsOfK).
static void pretransposeGemmWeights(func::FuncOp entry, bool gpuLibraries) {
  for (auto gemm : llvm::make_early_inc_range(entry.getOps<graph::GemmOp>())) {
    DenseElementsAttr weights;
    if (!gemm.getTransB() || !matchPattern(gemm.getB(), m_Constant(&weights)))
      continue;
    auto type = cast<RankedTensorType>(weights.getType());
    if (type.getRank() != 2 || !type.getElementType().isIntOrFloat() ||
        type.getElementType().isInteger(1) || weights.isSplat())
      continue;
    if (gpuLibraries &&
        rowClassesNeedWeightRowsOfK(type.getDimSize(0), type.getDimSize(1),
                                    type.getElementType()))
      continue;
    OpBuilder builder(gemm);
    auto transposed =
        graph::ConstantOp::create(builder, gemm.getB().getLoc(),
                                  cast<ElementsAttr>(transposeMatrix(weights)));
    gemm.getBMutable().assign(transposed);
    gemm.setTransB(0);
  }
}

/// On the GPU with libraries, MatMul(x, w) with a constant matrix w [K, N]
/// whose product has unaligned rows (rowClassesNeedWeightRowsOfK: a Linear to
/// 30522 or 50257 outputs, exported with its weight pretransposed) becomes
/// Gemm(x, wᵀ) with transB, wᵀ stored [N, K] once here, x's batch
/// dimensions folded into its rows by views; an Add of N values right
/// after it becomes the Gemm's C (cuBLASLt's bias epilogue).
static void storeUnalignedWeightsByRows(func::FuncOp entry) {
  for (auto matmul :
       llvm::make_early_inc_range(entry.getOps<graph::MatMulOp>())) {
    DenseElementsAttr weights;
    auto xType = dyn_cast<RankedTensorType>(matmul.getLhs().getType());
    auto yType = dyn_cast<RankedTensorType>(matmul.getType());
    if (!matchPattern(matmul.getRhs(), m_Constant(&weights)) || !xType ||
        !yType || xType.getRank() < 2 || !xType.hasStaticShape() ||
        !yType.hasStaticShape() || weights.isSplat())
      continue;
    auto wType = cast<RankedTensorType>(weights.getType());
    if (wType.getRank() != 2 ||
        !rowClassesNeedWeightRowsOfK(wType.getDimSize(1), wType.getDimSize(0),
                                     wType.getElementType()))
      continue;
    int64_t n = wType.getDimSize(1);
    // The bias: an Add of [N] (or [1, ..., N]) values, the product's only
    // reader.
    Operation *last = matmul;
    Value bias;
    if (matmul->hasOneUse())
      if (auto add = dyn_cast<graph::AddOp>(*matmul->user_begin())) {
        Value other =
            add.getLhs() == matmul.getResult() ? add.getRhs() : add.getLhs();
        auto type = dyn_cast<RankedTensorType>(other.getType());
        if (other != matmul.getResult() && add.getType() == yType && type &&
            type.hasStaticShape() && type.getNumElements() == n &&
            type.getShape().back() == n &&
            type.getElementType() == yType.getElementType()) {
          last = add;
          bias = other;
        }
      }
    OpBuilder b(last);
    Location loc =
        last == matmul.getOperation()
            ? matmul.getLoc()
            : FusedLoc::get(b.getContext(), {matmul.getLoc(), last->getLoc()});
    Value w =
        graph::ConstantOp::create(b, matmul.getRhs().getLoc(),
                                  cast<ElementsAttr>(transposeMatrix(weights)));
    Value y = gemmByRowsOfK(b, loc, matmul.getLhs(), w, bias, yType);
    last->getResult(0).replaceAllUsesWith(y);
    if (last != matmul)
      last->erase();
    matmul.erase();
  }
}

/// On the GPU, MatMul(x, Transpose(w)) with a matrix w (a tied embedding's
/// output projection, x @ wteᵀ) becomes Gemm(x, w) with transB, x's batch
/// dimensions folded into its rows by views: cuBLASLt reads w transposed in
/// place. A transpose kernel would write all of w again on every run, and
/// its result's rows (N elements) need not be 16-byte aligned, which keeps
/// cuBLASLt off its fastest kernels; w's rows (K elements) usually are.
static void foldTransposedWeights(func::FuncOp entry) {
  for (auto matmul :
       llvm::make_early_inc_range(entry.getOps<graph::MatMulOp>())) {
    auto transpose = matmul.getRhs().getDefiningOp<graph::TransposeOp>();
    if (!transpose || !transpose.getOutput().hasOneUse())
      continue;
    auto wType = dyn_cast<RankedTensorType>(transpose.getInput().getType());
    auto xType = dyn_cast<RankedTensorType>(matmul.getLhs().getType());
    auto yType = dyn_cast<RankedTensorType>(matmul.getType());
    if (!wType || !xType || !yType || wType.getRank() != 2 ||
        xType.getRank() < 2 || !xType.hasStaticShape() ||
        !wType.hasStaticShape() || !yType.hasStaticShape() ||
        !isa<FloatType>(wType.getElementType()))
      continue;
    if (std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
        perm && (*perm)[0] != 1)
      continue;
    OpBuilder b(matmul);
    Location loc =
        FusedLoc::get(b.getContext(), {transpose.getLoc(), matmul.getLoc()});
    Value y = gemmByRowsOfK(b, loc, matmul.getLhs(), transpose.getInput(),
                            Value(), yType);
    matmul.replaceAllUsesWith(y);
    matmul.erase();
    transpose.erase();
  }
}

/// A result with no elements needs no kernel: it becomes an empty constant
/// (kernels with zero-size buffers cannot take the bare-pointer calling
/// convention, and have nothing to compute).
static void foldEmptyResults(func::FuncOp entry) {
  for (Operation &op : llvm::make_early_inc_range(
           entry.getBody().front().without_terminator())) {
    if (isa<graph::ConstantOp>(op) || op.getNumResults() == 0 ||
        op.getNumRegions() != 0)
      continue;
    bool allEmpty = llvm::all_of(op.getResults(), [](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return type && type.hasStaticShape() && type.getNumElements() == 0;
    });
    if (!allEmpty)
      continue;
    OpBuilder builder(&op);
    for (Value result : op.getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      auto empty =
          graph::ConstantOp::create(builder, op.getLoc(),
                                    cast<ElementsAttr>(DenseElementsAttr::get(
                                        type, ArrayRef<Attribute>{})));
      result.replaceAllUsesWith(empty.getResult());
    }
    op.erase();
  }
}

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

/// On a GPU target, moves each pullable op that is the one reader of a
/// single-result op up to just after it, when everything else it reads is
/// computed before that point (constants, which read nothing, move up with
/// it). The partitioner grows a kernel only while the next op in program
/// order reads from it, and exporters write sibling chains interleaved:
/// ViT's query, key and value slices of the in-projection, then their head
/// splits, then their transposes, each link a kernel of its own. Grouped,
/// each chain is one pointwise kernel (staysPullable). Only ops without
/// regions or side effects move; the order is otherwise the exporter's.
static void groupPullableChains(func::FuncOp entry) {
  Block &body = entry.getBody().front();
  SmallVector<Operation *> order;
  for (Operation &op : body.without_terminator())
    order.push_back(&op);
  for (Operation *op : order) {
    // A constant heads no chain: what reads it stays where it computes.
    if (isa<graph::ConstantOp>(op) || op->getNumResults() != 1 ||
        !op->getResult(0).hasOneUse())
      continue;
    Operation *user = *op->getResult(0).getUsers().begin();
    if (user->getBlock() != &body || user->getNumRegions() != 0 ||
        user->hasTrait<OpTrait::IsTerminator>() || !isPullableOnGpu(user) ||
        !isMemoryEffectFree(user) || onRunTimeShapes(user))
      continue;
    // Already next but for constants: nothing to gain from moving.
    Operation *next = op->getNextNode();
    while (next != user && isa<graph::ConstantOp>(next))
      next = next->getNextNode();
    if (next == user)
      continue;
    bool movable = true;
    SmallVector<Operation *> constants;
    for (Value operand : user->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def == op || def->isBeforeInBlock(op))
        continue;
      if (isa<graph::ConstantOp>(def) && def->getNumOperands() == 0)
        constants.push_back(def);
      else
        movable = false;
    }
    if (!movable)
      continue;
    for (Operation *constant : constants)
      constant->moveBefore(op);
    user->moveAfter(op);
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
    if (!isElementwiseOrFusibleGather(member))
      return false;
    for (Operation *user : member->getResult(0).getUsers())
      if (user != op && !group.members.contains(user))
        return false;
  }
  return true;
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
  if (becomesOneReduction(group, op))
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
  if (facts.gpu)
    groupPullableChains(entry);

  Decisions decisions;
  if (!options.decisionsFile.empty()) {
    FailureOr<Decisions> loaded = Decisions::load(options.decisionsFile, entry);
    if (failed(loaded) ||
        failed(loaded->checkForced(isLibraryAnchor, isLowerableToLinalg)))
      return failure();
    decisions = std::move(*loaded);
  }
  return Partitioner(module, entry, options, facts, decisions).run();
}
