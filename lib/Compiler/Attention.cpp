//===- Attention.cpp - attention blocks for the flash kernel ----*- C++ -*-===//
//
// Finds softmax(Q Kᵀ · scale [+ bias] [+ causal mask]) V in the graph
// (Attention.h).
// The partitioner makes each match one kernel that GpuAttention.cpp
// generates as a flash-attention kernel: the S x T scores stay in registers,
// tile by tile, instead of four trips through memory in f32.
//
// The pattern is the one exporters write for scaled dot-product attention
// (torch.onnx's for F.scaled_dot_product_attention and for hand-written
// attention, with the casts a bf16 model adds around the softmax, and the
// additive masks of padded batches: transformers' (1 - mask) * lowest and
// torch's Where(mask, 0, -inf)). What the kernel does not take (another
// head dimension, ragged sequence lengths, f32) stays the separate kernels
// it was, and the reason says why.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"

#include "CompilerUtils.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <sstream>

using namespace mlir;
namespace graph = strata::graph;
namespace kernel = strata::kernel;
using strata::staticTensorType;

namespace {

/// The one op that reads `v`, if exactly one does (once).
Operation *soleUser(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  return *v.getUsers().begin();
}

/// The scalar a Mul or Div by a splat float constant multiplies its other
/// operand by, and that operand; nullopt for anything else.
std::optional<double> scalarFactor(Operation *op, OpOperand *&input) {
  if (!isa_and_nonnull<graph::MulOp, graph::DivOp>(op))
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    std::optional<double> factor =
        strata::splatFloatConstant(op->getOperand(1 - side));
    if (!factor)
      continue;
    if (isa<graph::DivOp>(op)) {
      if (side != 0 || *factor == 0)
        return std::nullopt;
      *factor = 1.0 / *factor;
    }
    input = &op->getOpOperand(side);
    return factor;
  }
  return std::nullopt;
}

/// A fill that masks a score out: -inf, or a value so negative that exp of
/// it is 0 next to any unmasked score (exporters use the type's lowest).
bool isMaskFill(Value v) {
  std::optional<double> fill = strata::splatFloatConstant(v);
  return fill && (std::isinf(*fill) ? *fill < 0 : *fill <= -1e30);
}

/// Whether `v` is a constant of all true values.
bool isAllTrue(Value v) {
  DenseElementsAttr attr;
  return matchPattern(v, m_Constant(&attr)) && attr.isSplat() &&
         attr.getElementType().isInteger(1) && attr.getSplatValue<bool>();
}

std::string typeName(Type type) {
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  return "";
}

/// Whether `v` is a constant of all zeros (of a float type).
bool isZeroSplat(Value v) {
  std::optional<double> x = strata::splatFloatConstant(v);
  return x && *x == 0;
}

/// Row-major strides of `shape`, in elements.
SmallVector<int64_t> contiguousStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// A transpose's permutation of its (ranked) input.
SmallVector<int64_t> permutationOf(graph::TransposeOp t) {
  return graph::transposePermutation(
      t, cast<ShapedType>(t.getInput().getType()).getRank());
}

/// A layout op the kernel can read through: a transpose, or a gather of one
/// constant index (a slice that drops its axis).
bool isLayoutOp(Operation *op) {
  if (auto t = dyn_cast_or_null<graph::TransposeOp>(op))
    return staticTensorType(t.getInput()) != RankedTensorType();
  auto g = dyn_cast_or_null<graph::GatherOp>(op);
  if (!g || !staticTensorType(g.getData()))
    return false;
  auto indices = dyn_cast<RankedTensorType>(g.getIndices().getType());
  return indices && indices.getRank() == 0 &&
         strata::splatIntConstant(g.getIndices());
}

/// The layout ops between `use` and the buffer it reads through them,
/// innermost (closest to the block) first, that only `inside` ops read.
SmallVector<Operation *>
layoutChain(OpOperand *use, const llvm::SmallPtrSetImpl<Operation *> &inside) {
  SmallVector<Operation *> chain;
  Operation *def = use->get().getDefiningOp();
  while (isLayoutOp(def) && llvm::all_of(def->getUsers(), [&](Operation *user) {
           return inside.contains(user);
         })) {
    chain.push_back(def);
    def = def->getOperand(0).getDefiningOp();
  }
  return chain;
}

/// The view of the buffer under `chain` (innermost first) that the value
/// read by `use` is, its dimensions then permuted by `perm` (the operand is
/// `use`'s value transposed by it; none when empty); nullopt when its head
/// dimension is not contiguous or a row or batch does not start on 16 bytes
/// (cp.async copies 16 bytes).
std::optional<strata::AttentionOperand>
viewThrough(OpOperand *use, ArrayRef<Operation *> chain, int64_t elementBytes,
            ArrayRef<int64_t> perm = {}) {
  strata::AttentionOperand view;
  Value root = chain.empty() ? use->get() : chain.back()->getOperand(0);
  view.source = chain.empty() ? use : &chain.back()->getOpOperand(0);
  SmallVector<int64_t> strides =
      contiguousStrides(cast<ShapedType>(root.getType()).getShape());
  for (Operation *op : llvm::reverse(chain)) {
    if (auto t = dyn_cast<graph::TransposeOp>(op)) {
      strides = applyPermutation(strides, permutationOf(t));
      continue;
    }
    auto g = cast<graph::GatherOp>(op);
    int64_t rank = int64_t(strides.size());
    int64_t axis = static_cast<int64_t>(g.getAxis());
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return std::nullopt;
    int64_t size = cast<ShapedType>(g.getData().getType()).getDimSize(axis);
    int64_t index = *strata::splatIntConstant(g.getIndices());
    if (index < 0)
      index += size;
    if (index < 0 || index >= size)
      return std::nullopt;
    view.offset += index * strides[axis];
    strides.erase(strides.begin() + axis);
  }
  if (!perm.empty())
    strides = applyPermutation(strides, perm);
  if (strides.size() < 2 || strides.back() != 1)
    return std::nullopt;
  view.rowStride = strides[strides.size() - 2];
  view.batchStrides.assign(strides.begin(), strides.end() - 2);
  int64_t unit = 16 / elementBytes;
  if (view.offset % unit || view.rowStride % unit ||
      llvm::any_of(view.batchStrides, [&](int64_t s) { return s % unit; }))
    return std::nullopt;
  return view;
}

} // namespace

std::optional<strata::HeadRepeat> strata::matchHeadRepeat(Value v) {
  auto merge = v.getDefiningOp<graph::ReshapeOp>();
  auto expand = merge ? merge->getOperand(0).getDefiningOp<graph::ExpandOp>()
                      : graph::ExpandOp();
  Operation *unit = expand ? expand->getOperand(0).getDefiningOp() : nullptr;
  if (!expand || !isa_and_nonnull<graph::UnsqueezeOp, graph::ReshapeOp>(unit) ||
      !merge->hasOneUse() || !expand->hasOneUse() || !unit->hasOneUse())
    return std::nullopt;
  auto x = staticTensorType(unit->getOperand(0));
  auto unitType = staticTensorType(unit->getResult(0));
  auto expanded = staticTensorType(expand.getResult());
  auto merged = staticTensorType(merge.getResult());
  if (!x || !unitType || !expanded || !merged || x.getRank() < 3)
    return std::nullopt;
  int64_t r = x.getRank();
  ArrayRef<int64_t> xs = x.getShape();
  int64_t rep = expanded.getDimSize(r - 2);
  SmallVector<int64_t> withUnit(xs.take_front(r - 2)), withRep, heads;
  withUnit.push_back(1);
  withUnit.append(xs.begin() + r - 2, xs.end());
  withRep = withUnit;
  withRep[r - 2] = rep;
  heads.assign(xs.begin(), xs.end());
  heads[r - 3] *= rep;
  if (rep < 2 || unitType.getShape() != ArrayRef<int64_t>(withUnit) ||
      expanded.getShape() != ArrayRef<int64_t>(withRep) ||
      merged.getShape() != ArrayRef<int64_t>(heads))
    return std::nullopt;
  HeadRepeat repeat;
  repeat.source = &unit->getOpOperand(0);
  repeat.rep = rep;
  repeat.ops = {unit, expand, merge};
  return repeat;
}

kernel::AttentionAttr
strata::AttentionMatch::toAttr(Builder &b, ArrayRef<Value> inputs) const {
  MLIRContext *context = b.getContext();
  auto argOf = [&](OpOperand *source) -> int64_t {
    return llvm::find(inputs, source->get()) - inputs.begin();
  };
  auto operand = [&](const AttentionOperand &x, bool input) {
    return kernel::AttentionOperandAttr::get(
        context, input ? argOf(x.source) : -1, x.offset, x.batchStrides,
        x.rowStride);
  };
  auto typeOf = [&](StringRef name) -> Type {
    return name == "f32"   ? Type(b.getF32Type())
           : name == "f16" ? Type(b.getF16Type())
                           : Type(b.getBF16Type());
  };
  kernel::AttentionBiasAttr biasAttr;
  if (bias)
    biasAttr = kernel::AttentionBiasAttr::get(
        context, argOf(bias->source), bias->batchStrides, bias->rowStride,
        bias->keyStride, llvm::APFloat(bias->factor), typeOf(bias->type));
  return kernel::AttentionAttr::get(
      context, operand(q, true), operand(k, true), operand(v, true),
      operand(out, false), batchDims, batch, seqQ, seqK, headDim, queryRows,
      llvm::APFloat(scale), typeOf(type), causalOffset, biasAttr,
      zeroMaskedRows);
}

std::string strata::AttentionMatch::describe() const {
  std::ostringstream os;
  os << "softmax(Q K^T";
  if (scale != 1.0)
    os << " * " << scale;
  if (bias) {
    os << " + ";
    if (bias->factor != 1.0)
      os << bias->factor << " * ";
    os << "bias [";
    llvm::interleave(
        bias->shape, [&](int64_t d) { os << d; }, [&] { os << ", "; });
    os << "] " << bias->type;
  }
  if (causalOffset)
    os << " + causal mask" << (*causalOffset ? " (keys up to i+" : "")
       << (*causalOffset ? std::to_string(*causalOffset) + ")" : "");
  os << ")" << (zeroMaskedRows ? " (rows masked whole give 0)" : "") << " V in "
     << type << ", " << batch << " x " << seqQ << " x " << seqK << ", head dim "
     << headDim;
  if (headRepeat > 1)
    os << ", each K and V head read by " << headRepeat
       << " query heads (grouped-query attention)";
  if (!padding.empty())
    os << " (" << padding << ")";
  return os.str();
}

namespace {
/// The ops from an attention block's first product to its second: casts,
/// scales, an added bias and a Where (in any order), the softmax, torch's
/// guard for rows masked whole, a cast.
struct ScoreChain {
  /// The first product, the ops between, the second product.
  SmallVector<Operation *> ops;
  graph::MatMulOp second;
  graph::WhereOp where;
  OpOperand *biasUse = nullptr;
  /// The scales after the bias's add (the bias is multiplied by them), and
  /// all scales between the products.
  double biasFactor = 1.0, scale = 1.0;
  bool zeroMaskedRows = false;
};
} // namespace

/// The chain of scores after `first`, or nothing when it is not attention.
static std::optional<ScoreChain> walkScoreChain(graph::MatMulOp first) {
  ScoreChain result;
  SmallVector<Operation *> &chain = result.ops;
  chain.push_back(first);
  Value value = first.getOutput();
  Operation *next = soleUser(value);
  graph::WhereOp &where = result.where;
  OpOperand *&biasUse = result.biasUse;
  double &biasFactor = result.biasFactor;
  // Casts, scales, an added bias and the causal mask, in any order.
  for (int i = 0; i < 6 && next; ++i) {
    OpOperand *input = nullptr;
    if (auto cast = dyn_cast<graph::CastOp>(next)) {
      if (!isa<FloatType>(getElementTypeOrSelf(cast.getType())))
        return std::nullopt;
    } else if (isa<graph::MulOp, graph::DivOp>(next)) {
      std::optional<double> factor = scalarFactor(next, input);
      if (!factor || input->get() != value)
        return std::nullopt;
      result.scale *= *factor;
      if (biasUse)
        biasFactor *= *factor;
    } else if (auto w = dyn_cast<graph::WhereOp>(next)) {
      if (where)
        return std::nullopt;
      where = w;
    } else if (auto add = dyn_cast<graph::AddOp>(next)) {
      if (biasUse || add.getLhs() == add.getRhs())
        return std::nullopt;
      biasUse =
          add.getLhs() == value ? &add.getRhsMutable() : &add.getLhsMutable();
    } else {
      break;
    }
    chain.push_back(next);
    value = next->getResult(0);
    next = soleUser(value);
  }
  auto softmax = dyn_cast_or_null<graph::SoftmaxOp>(next);
  if (!softmax)
    return std::nullopt;
  int64_t rank = cast<ShapedType>(softmax.getType()).getRank();
  int64_t axis = static_cast<int64_t>(softmax.getAxis());
  if (axis != -1 && axis != rank - 1)
    return std::nullopt;
  chain.push_back(softmax);
  value = softmax.getOutput();
  next = soleUser(value);
  // torch's export of scaled_dot_product_attention with a mask zeroes the
  // rows a mask drops whole: Where(IsNaN(P), 0, P).
  if (!next && llvm::range_size(value.getUses()) == 2) {
    graph::IsNaNOp isNaN;
    graph::WhereOp guard;
    for (Operation *user : value.getUsers()) {
      if (auto n = dyn_cast<graph::IsNaNOp>(user))
        isNaN = n;
      else if (auto w = dyn_cast<graph::WhereOp>(user))
        guard = w;
    }
    if (isNaN && guard && soleUser(isNaN.getOutput()) == guard &&
        guard.getCondition() == isNaN.getOutput() && guard.getY() == value &&
        isZeroSplat(guard.getX())) {
      chain.append({isNaN, guard});
      result.zeroMaskedRows = true;
      value = guard.getOutput();
      next = soleUser(value);
    }
  }
  if (auto cast = dyn_cast_or_null<graph::CastOp>(next)) {
    chain.push_back(cast);
    value = cast.getOutput();
    next = soleUser(value);
  }
  auto second = dyn_cast_or_null<graph::MatMulOp>(next);
  if (!second || second.getLhs() != value)
    return std::nullopt;
  chain.push_back(second);
  result.second = second;
  return result;
}

/// The causal mask of `where` into `match` (its offset and Trilu), or false
/// with the reason in `whyNot`.
static bool matchCausalMask(graph::WhereOp where, strata::AttentionMatch &match,
                            std::string &whyNot) {
  // Which operand is the scores decides whether the Trilu marks what is
  // dropped (Where(mask, fill, s)) or what is kept (Where(mask, s, fill)).
  bool dropMarked = isMaskFill(where.getX());
  Value scores = dropMarked ? where.getY() : where.getX();
  Value fill = dropMarked ? where.getX() : where.getY();
  auto trilu = where.getCondition().getDefiningOp<graph::TriluOp>();
  auto maskType = staticTensorType(where.getCondition());
  std::optional<int64_t> diagonal =
      trilu ? (trilu.getK() ? strata::splatIntConstant(trilu.getK()) : 0)
            : std::nullopt;
  bool fullMask = maskType && maskType.getRank() >= 2 &&
                  maskType.getShape().take_back(2) ==
                      ArrayRef<int64_t>{match.seqQ, match.seqK} &&
                  llvm::all_of(maskType.getShape().drop_back(2),
                               [](int64_t d) { return d == 1; });
  if (!trilu || !diagonal || !isAllTrue(trilu.getInput()) || !fullMask ||
      !isMaskFill(fill) || scores == fill) {
    whyNot = "the Where is not a causal mask (a Trilu of all-true [S, T] "
             "selecting -inf)";
    return false;
  }
  // Trilu upper keeps j - i >= k, lower keeps j - i <= k.
  bool upper = trilu.getUpper() != 0;
  if (dropMarked != upper) {
    whyNot = "the mask keeps the upper triangle (not causal)";
    return false;
  }
  int64_t offset = upper ? *diagonal - 1 : *diagonal;
  if (offset < 0) {
    whyNot = "the causal mask drops every key of the first query rows";
    return false;
  }
  match.causalOffset = offset;
  match.mask = trilu;
  return true;
}

/// The bias `biasUse` adds to scores of batch dimensions `batch` into
/// `match`, with its strides over the scores (0 where it broadcasts), or
/// false with the reason in `whyNot`.
static bool matchBias(OpOperand *biasUse, double biasFactor,
                      ArrayRef<int64_t> batch, strata::AttentionMatch &match,
                      std::string &whyNot) {
  // The bias broadcasts to the scores [batch..., S, T]: a dimension it
  // lacks or holds once has stride 0.
  auto biasType = staticTensorType(biasUse->get());
  Type element = biasType ? biasType.getElementType() : Type();
  std::string type = !element          ? ""
                     : element.isF32() ? "f32"
                                       : typeName(element);
  SmallVector<int64_t> scores(batch.begin(), batch.end());
  scores.append({match.seqQ, match.seqK});
  int64_t lead = int64_t(scores.size()) -
                 (biasType ? biasType.getRank() : int64_t(scores.size()) + 1);
  if (type.empty() || lead < 0) {
    whyNot = "the scores' added bias is not a static f32, bf16 or f16 "
             "tensor of at most their rank";
    return false;
  }
  SmallVector<int64_t> contiguous = contiguousStrides(biasType.getShape());
  SmallVector<int64_t> strides;
  for (int64_t i = 0; i < int64_t(scores.size()); ++i) {
    int64_t d = i - lead;
    strides.push_back(d < 0 || biasType.getDimSize(d) == 1 ? 0 : contiguous[d]);
    if (d >= 0 && biasType.getDimSize(d) != 1 &&
        biasType.getDimSize(d) != scores[i]) {
      whyNot = "the added bias does not broadcast to the scores";
      return false;
    }
  }
  strata::AttentionBias bias;
  bias.source = biasUse;
  bias.batchStrides.assign(strides.begin(), strides.end() - 2);
  bias.rowStride = strides[strides.size() - 2];
  bias.keyStride = strides.back();
  bias.factor = biasFactor;
  bias.type = type;
  bias.shape.assign(biasType.getShape().begin(), biasType.getShape().end());
  match.bias = bias;
  return true;
}

/// The permutation that makes K of the transpose `transpose` of K^T (the
/// transpose's with its last two entries swapped), or empty when K^T is not
/// a transpose read only by the product of a buffer whose last dimension is
/// the head dimension.
static SmallVector<int64_t> keyPermutation(graph::TransposeOp transpose) {
  SmallVector<int64_t> kPerm;
  if (transpose && transpose.getOutput().hasOneUse() &&
      staticTensorType(transpose.getInput())) {
    kPerm = permutationOf(transpose);
    int64_t r = int64_t(kPerm.size());
    if (r >= 2) {
      std::swap(kPerm[r - 2], kPerm[r - 1]);
      if (kPerm.back() != r - 1)
        kPerm.clear();
    } else {
      kPerm.clear();
    }
  }
  return kPerm;
}

/// O's strides into `match.out`: contiguous, or written through a
/// transpose of its heads that is its only reader (which then joins the
/// block as a layout op), when its rows start on 16 bytes.
static void matchOutput(graph::MatMulOp second, RankedTensorType oType,
                        int64_t elementBytes, strata::AttentionMatch &match) {
  SmallVector<int64_t> oContiguous = contiguousStrides(oType.getShape());
  match.out.batchStrides.assign(oContiguous.begin(), oContiguous.end() - 2);
  match.out.rowStride = match.headDim;
  if (Operation *user = soleUser(second.getOutput()))
    if (auto merge = dyn_cast<graph::TransposeOp>(user)) {
      SmallVector<int64_t> perm = permutationOf(merge);
      SmallVector<int64_t> strides =
          contiguousStrides(cast<ShapedType>(merge.getType()).getShape());
      // Result dimension i is O's dimension perm[i].
      SmallVector<int64_t> oStrides(perm.size());
      for (size_t i = 0; i < perm.size(); ++i)
        oStrides[perm[i]] = strides[i];
      int64_t unit = 16 / elementBytes;
      if (oStrides.back() == 1 && oStrides[oStrides.size() - 2] % unit == 0) {
        match.out.rowStride = oStrides[oStrides.size() - 2];
        match.out.batchStrides.assign(oStrides.begin(), oStrides.end() - 2);
        match.ops.push_back(merge);
        match.layout.insert(merge);
      }
    }
}

/// The layout chains of Q's, K's and V's uses (`uses`) that the block
/// absorbs beside its ops (`inside`): grown to a fixed point over what the
/// other chains read, and cut back to what every chain still reads.
static void absorbLayoutChains(ArrayRef<OpOperand *> uses,
                               const llvm::SmallPtrSetImpl<Operation *> &inside,
                               SmallVector<Operation *> (&chains)[3]) {
  for (bool changed = true; changed;) {
    changed = false;
    llvm::SmallPtrSet<Operation *, 16> candidates(inside.begin(), inside.end());
    for (OpOperand *use : uses)
      for (Operation *op : layoutChain(use, inside))
        candidates.insert(op);
    for (int i = 0; i < 3; ++i) {
      SmallVector<Operation *> chain = layoutChain(uses[i], candidates);
      if (chain != chains[i]) {
        chains[i] = chain;
        changed = true;
      }
    }
    // Only what every chain still reads is absorbed.
    llvm::SmallPtrSet<Operation *, 16> absorbed(inside.begin(), inside.end());
    for (auto &chain : chains)
      absorbed.insert(chain.begin(), chain.end());
    for (int i = 0; i < 3; ++i) {
      SmallVector<Operation *> kept = layoutChain(uses[i], absorbed);
      if (kept.size() < chains[i].size()) {
        chains[i] = kept;
        changed = true;
      }
    }
  }
}

/// Q's, K's and V's views (`viewOf`) through their chains, into `views`: a
/// chain whose view fails, or whose ops something outside the block reads
/// once another chain was dropped, is dropped (the operand is then read as
/// it is). False when an operand has no view even so.
static bool viewOperands(function_ref<std::optional<strata::AttentionOperand>(
                             int, ArrayRef<Operation *>)>
                             viewOf,
                         const llvm::SmallPtrSetImpl<Operation *> &inside,
                         SmallVector<Operation *> (&chains)[3],
                         strata::AttentionOperand *const (&views)[3]) {
  for (int i = 0; i < 3; ++i) {
    std::optional<strata::AttentionOperand> view = viewOf(i, chains[i]);
    if (!view) {
      chains[i].clear();
      view = viewOf(i, {});
    }
    // Only a head dimension the kernel does not take (anyShape) leaves
    // rows off 16 bytes.
    if (!view)
      return false;
    *views[i] = *view;
  }
  llvm::SmallPtrSet<Operation *, 16> absorbed;
  for (auto &chain : chains)
    absorbed.insert(chain.begin(), chain.end());
  // A chain dropped for its strides may leave another's ops read outside.
  for (int i = 0; i < 3; ++i)
    for (Operation *op : chains[i])
      if (llvm::any_of(op->getUsers(), [&](Operation *user) {
            return !inside.contains(user) && !absorbed.contains(user);
          })) {
        chains[i].clear();
        std::optional<strata::AttentionOperand> view = viewOf(i, {});
        if (!view)
          return false;
        *views[i] = *view;
        break;
      }
  return true;
}

std::optional<strata::AttentionMatch>
strata::matchAttention(Operation *op, std::string &whyNot, bool anyShape) {
  whyNot.clear();
  auto first = dyn_cast<graph::MatMulOp>(op);
  if (!first)
    return std::nullopt;
  AttentionMatch match;

  // Walk the chain first: whether this is attention at all decides whether
  // a refusal is worth a reason.
  std::optional<ScoreChain> scores = walkScoreChain(first);
  if (!scores)
    return std::nullopt;
  SmallVector<Operation *> chain = scores->ops;
  graph::MatMulOp second = scores->second;
  graph::WhereOp where = scores->where;
  OpOperand *biasUse = scores->biasUse;
  match.scale *= scores->scale;
  match.zeroMaskedRows = scores->zeroMaskedRows;
  match.roles.scores.assign(chain.begin() + 1, chain.end() - 1);

  // It is attention; from here on every refusal says why.
  // Q and K^T may each be scaled before the product.
  OpOperand *qUse = &first.getLhsMutable();
  Value kt = first.getRhs();
  for (int side = 0; side < 2; ++side) {
    Operation *def = (side == 0 ? qUse->get() : kt).getDefiningOp();
    OpOperand *input = nullptr;
    std::optional<double> factor = scalarFactor(def, input);
    if (!factor || !def->hasOneUse() ||
        cast<ShapedType>(input->get().getType()).getShape() !=
            cast<ShapedType>(def->getResult(0).getType()).getShape())
      continue;
    match.scale *= *factor;
    chain.push_back(def);
    if (side == 0)
      qUse = input;
    else
      kt = input->get();
  }
  // K^T is a transpose of a buffer X whose last dimension is the head
  // dimension: K is X permuted by kPerm (the transpose's permutation with
  // its last two entries swapped).
  auto transpose = kt.getDefiningOp<graph::TransposeOp>();
  SmallVector<int64_t> kPerm = keyPermutation(transpose);
  if (kPerm.empty()) {
    whyNot = "K^T is not a transpose of K read only by the product";
    return std::nullopt;
  }
  auto qType = staticTensorType(qUse->get()),
       xType = staticTensorType(transpose.getInput()),
       vType = staticTensorType(second.getRhs()),
       oType = staticTensorType(second.getOutput());
  if (!qType || !xType || !vType || !oType) {
    whyNot = "a shape is not static";
    return std::nullopt;
  }
  SmallVector<int64_t> kShape = applyPermutation(xType.getShape(), kPerm);
  auto kType = RankedTensorType::get(kShape, xType.getElementType());
  match.type = typeName(qType.getElementType());
  if (match.type.empty() || kType.getElementType() != qType.getElementType() ||
      vType.getElementType() != qType.getElementType() ||
      oType.getElementType() != qType.getElementType()) {
    whyNot = "Q, K, V and the result are not all bf16 or all f16 (the kernel "
             "multiplies on tensor cores in bf16 or f16)";
    return std::nullopt;
  }
  ArrayRef<int64_t> q = qType.getShape(), k = kShape, v = vType.getShape();
  if (q.size() < 2 || q.size() != k.size() || q.size() != v.size() ||
      q.drop_back(2) != k.drop_back(2) || q.drop_back(2) != v.drop_back(2)) {
    whyNot = "Q, K and V do not have the same batch dimensions";
    return std::nullopt;
  }
  match.seqQ = q[q.size() - 2];
  match.seqK = k[k.size() - 2];
  match.headDim = q.back();
  for (int64_t d : q.drop_back(2))
    match.batch *= d;
  if (k.back() != match.headDim || v.back() != match.headDim ||
      v[v.size() - 2] != match.seqK) {
    whyNot = "V's head dimension differs from Q's and K's";
    return std::nullopt;
  }
  // strata-pad-attention's record: what it padded, or why it did not.
  std::string padding = kernel::text<kernel::AttentionPadding>(first).str();
  auto refuse = [&](std::string why) {
    whyNot = why + (padding.empty() ? "" : "; " + padding);
  };
  if (!anyShape && match.headDim != 64 && match.headDim != 128) {
    refuse("head dimension " + std::to_string(match.headDim) +
           ": the kernel takes 64 or 128");
    return std::nullopt;
  }
  if (!anyShape &&
      (match.seqQ % kAttentionBlockRows || match.seqK % kAttentionBlockRows)) {
    refuse("sequence lengths " + std::to_string(match.seqQ) + " and " +
           std::to_string(match.seqK) + " are not multiples of " +
           std::to_string(kAttentionBlockRows) + ", the kernel's tile");
    return std::nullopt;
  }
  if (!anyShape)
    match.padding = padding;

  if (where && !matchCausalMask(where, match, whyNot))
    return std::nullopt;

  if (biasUse &&
      !matchBias(biasUse, scores->biasFactor, q.drop_back(2), match, whyNot))
    return std::nullopt;

  match.ops.push_back(transpose);
  match.ops.append(chain.begin(), chain.end());
  match.batchDims.assign(q.begin(), q.end() - 2);
  match.roles.first = first;
  match.roles.second = second;
  match.roles.kTranspose = transpose;
  match.roles.where = where;
  match.roles.q = qUse;
  match.roles.bias = biasUse;

  // Q, K and V through the layout ops that only this block reads (a
  // transpose splitting a fused QKV projection into heads feeds all three),
  // and O through a transpose that merges the heads back.
  OpOperand *uses[3] = {qUse, &transpose.getInputMutable(),
                        &second.getRhsMutable()};
  // K's and V's heads repeated for grouped-query attention are read in
  // place: the head dimension of the batch splits into [Hkv, rep], along
  // which the repeated operands have stride 0.
  bool kIdentity = llvm::equal(kPerm, llvm::seq<int64_t>(0, kPerm.size()));
  std::optional<HeadRepeat> repeats[3];
  for (int i = 1; i < 3 && q.size() >= 3; ++i) {
    if (i == 1 && !kIdentity)
      continue;
    repeats[i] = matchHeadRepeat(uses[i]->get());
  }
  if (repeats[1] && repeats[2] && repeats[1]->rep != repeats[2]->rep)
    repeats[1].reset(), repeats[2].reset();
  for (int i = 1; i < 3; ++i)
    if (repeats[i]) {
      match.headRepeat = repeats[i]->rep;
      uses[i] = repeats[i]->source;
      match.ops.append(repeats[i]->ops.begin(), repeats[i]->ops.end());
      match.layout.insert(repeats[i]->ops.begin(), repeats[i]->ops.end());
    }
  int64_t elementBytes = qType.getElementTypeBitWidth() / 8;
  // K is the transpose's input permuted by kPerm.
  auto viewOf = [&](int i, ArrayRef<Operation *> chain) {
    return viewThrough(uses[i], chain, elementBytes,
                       i == 1 ? ArrayRef<int64_t>(kPerm) : ArrayRef<int64_t>());
  };
  llvm::SmallPtrSet<Operation *, 16> inside(match.ops.begin(), match.ops.end());
  SmallVector<Operation *> chains[3];
  absorbLayoutChains(uses, inside, chains);
  AttentionOperand *const views[3] = {&match.q, &match.k, &match.v};
  if (!viewOperands(viewOf, inside, chains, views)) {
    whyNot = "the rows of Q, K or V do not start on 16 bytes";
    return std::nullopt;
  }
  llvm::SmallPtrSet<Operation *, 16> absorbed;
  for (auto &chain : chains)
    absorbed.insert(chain.begin(), chain.end());
  match.layout.insert(absorbed.begin(), absorbed.end());
  match.ops.append(absorbed.begin(), absorbed.end());

  // Grouped-query attention: batch dimension `head` (the last) splits into
  // [Hkv, rep]; an operand read per head keeps stride s as [s * rep, s],
  // a repeated one reads its own head with stride 0 along rep.
  int64_t head = int64_t(match.batchDims.size()) - 1;
  auto splitHeads = [&](SmallVector<int64_t> &strides, bool repeated) {
    if (match.headRepeat == 1)
      return;
    int64_t s = strides[head];
    strides[head] = repeated ? s : s * match.headRepeat;
    strides.insert(strides.begin() + head + 1, repeated ? 0 : s);
  };
  for (int i = 0; i < 3; ++i)
    splitHeads(views[i]->batchStrides, repeats[i].has_value());
  if (match.bias)
    splitHeads(match.bias->batchStrides, false);

  // O: contiguous, or written through a transpose of its heads that is its
  // only reader.
  matchOutput(second, oType, elementBytes, match);
  splitHeads(match.out.batchStrides, false);
  if (match.headRepeat > 1) {
    match.batchDims[head] /= match.headRepeat;
    match.batchDims.insert(match.batchDims.begin() + head + 1,
                           match.headRepeat);
  }
  llvm::sort(match.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return match;
}
