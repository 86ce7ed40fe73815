//===- AttentionPadding.cpp - fit attention blocks to the flash kernel ----===//
//
// strata-pad-attention (cuda target, before the partitioner): an attention
// block (Attention.h) whose sequence lengths are not multiples of the flash
// kernel's 64-row tile, or whose head dimension is not 64 or 128, is padded
// to the next shape the kernel takes, so that it runs as one flash kernel
// rather than as two products and a softmax with the scores in memory.
// Models write such blocks all the time: ViT's 197 tokens (196 patches and
// the class token), Swin's windows of 49 tokens at head dimension 32, an
// encoder or a prefill at the length of its input.
//
// The rewrite is exact:
// - Q, K and V are padded with zeros: zero columns of the head dimension add
//   nothing to Q Kᵀ, and V's zero rows and columns add nothing to P V;
// - keys past the sequence get -inf added to their scores (a constant
//   [T'] bias, or the model's own bias padded with -inf), so their weights
//   are exactly 0; a causal mask that already drops them needs nothing;
// - the result's rows and columns past the real ones are sliced off.
// The kernel's tile pads the work to 64-row blocks anyway; what the rewrite
// adds is a copy of Q, K and V into padded buffers (it takes the place of
// the transposes that separate kernels would do) and of the result out of
// one. Padding is refused where it would multiply the kernel's work by more
// than kMaxPaddedWork (a decode step's single query row padded to 64): the
// block then stays separate kernels, and `strata explain` says why.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MathExtras.h"

#include <sstream>

namespace strata {
#define GEN_PASS_DEF_PADATTENTIONPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata;
namespace graph = strata::graph;

namespace {

/// The most the padding may multiply a block's work (scores and products:
/// Sq * Sk * D) by: ViT's 197 tokens pad to 256 (1.69x), Swin's windows of
/// 49 tokens at head dimension 32 to 64 x 64 (3.4x), while a decode step's
/// one query row would be 64x.
constexpr double kMaxPaddedWork = 4.0;

RankedTensorType withShape(Type type, ArrayRef<int64_t> shape) {
  return cast<RankedTensorType>(type).clone(shape);
}

/// `type` with its last two dimensions replaced by `rows` and `columns`.
RankedTensorType withLastTwo(Type type, int64_t rows, int64_t columns) {
  SmallVector<int64_t> shape(cast<RankedTensorType>(type).getShape());
  shape[shape.size() - 2] = rows;
  shape.back() = columns;
  return withShape(type, shape);
}

Value i64Vector(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({int64_t(values.size())}, b.getI64Type());
  return graph::ConstantOp::create(
      b, loc, cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

/// A float splat or vector constant of `element` type.
Value floatConstant(OpBuilder &b, Location loc, Type element,
                    ArrayRef<int64_t> shape, ArrayRef<APFloat> values) {
  auto type = RankedTensorType::get(shape, element);
  return graph::ConstantOp::create(
      b, loc, cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

APFloat floatOf(Type element, double x) {
  APFloat value(x);
  bool lost;
  value.convert(cast<FloatType>(element).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
  return value;
}

APFloat minusInfinity(Type element) {
  return APFloat::getInf(cast<FloatType>(element).getFloatSemantics(),
                         /*Negative=*/true);
}

/// `v` padded at the end of each axis by `ends[axis]` with `fill`; `v`
/// itself when nothing is padded. The graph.pad comes right after `v`'s
/// definition, where the partitioner, which walks in program order, fuses
/// it into the kernel that computes `v`; `reader` names it.
Value padEnd(OpBuilder &b, Operation *reader, Value v, ArrayRef<int64_t> ends,
             double fill) {
  if (llvm::all_of(ends, [](int64_t e) { return e == 0; }))
    return v;
  OpBuilder::InsertionGuard guard(b);
  if (Operation *def = v.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
  Location loc = reader->getLoc();
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> pads(ends.size(), 0), shape(type.getShape());
  pads.append(ends.begin(), ends.end());
  for (size_t i = 0; i < ends.size(); ++i)
    shape[i] += ends[i];
  Type element = type.getElementType();
  APFloat value =
      std::isinf(fill) ? minusInfinity(element) : floatOf(element, fill);
  Value constant = floatConstant(b, loc, element, {}, value);
  return graph::PadOp::create(b, loc, withShape(type, shape), v,
                              i64Vector(b, loc, pads), constant,
                              b.getStringAttr("constant"));
}

/// [n] of `element`: 0 for the first `kept`, -inf after.
Value keyMask(OpBuilder &b, Location loc, Type element, int64_t kept,
              int64_t n) {
  SmallVector<APFloat> values(kept, floatOf(element, 0.0));
  values.resize(n, minusInfinity(element));
  return floatConstant(b, loc, element, {n}, values);
}

class Padder {
public:
  Padder(AttentionMatch &match) : m(match), b(match.roles.first) {}

  /// Pads the block, or leaves the reason it did not on its first product.
  void run();

private:
  void padQ();
  void padK();
  void padV();
  void padBias();
  void maskKeys();
  void padCausalMask();
  void reshapeScores();
  void sliceResult();

  AttentionMatch &m;
  OpBuilder b;
  int64_t sq = 0, sk = 0, d = 0;
};

void Padder::run() {
  Operation *first = m.roles.first;
  sq = llvm::alignTo(m.seqQ, kAttentionBlockRows);
  sk = llvm::alignTo(m.seqK, kAttentionBlockRows);
  d = m.headDim <= 64 ? 64 : m.headDim <= 128 ? 128 : 0;
  auto note = [&](const std::string &text) {
    kernel::set<kernel::AttentionPadding>(first, b.getStringAttr(text));
  };
  if (!d) {
    note("not padded: the kernel takes head dimensions up to 128");
    return;
  }
  double work = double(sq) * double(sk) * double(d) /
                (double(m.seqQ) * double(m.seqK) * double(m.headDim));
  std::ostringstream what;
  what << m.seqQ << " x " << m.seqK << ", head dim " << m.headDim << " to "
       << sq << " x " << sk << ", head dim " << d;
  if (work > kMaxPaddedWork) {
    std::ostringstream os;
    os.precision(3);
    os << "not padded: " << what.str() << " would multiply the work by " << work
       << " (at most " << kMaxPaddedWork << ")";
    note(os.str());
    return;
  }
  padQ();
  padK();
  padV();
  padCausalMask();
  reshapeScores();
  padBias();
  maskKeys();
  sliceResult();
  note("padded from " + what.str());
}

/// Q [..., Sq, D] (past the scale the kernel absorbs) to [..., Sq', D'].
void Padder::padQ() {
  OpOperand *use = m.roles.q;
  auto type = cast<RankedTensorType>(use->get().getType());
  int64_t r = type.getRank();
  SmallVector<int64_t> ends(r, 0);
  ends[r - 2] = sq - m.seqQ;
  ends[r - 1] = d - m.headDim;
  Operation *owner = use->getOwner();
  use->set(padEnd(b, owner, use->get(), ends, 0.0));
  // A scale between the pad and the product takes the padded shape.
  if (owner != m.roles.first)
    owner->getResult(0).setType(use->get().getType());
}

/// K's transpose input X: Kᵀ's dimension i is X's perm[i], so X's axis
/// perm[r-1] holds the keys and perm[r-2] the head dimension.
void Padder::padK() {
  auto transpose = cast<graph::TransposeOp>(m.roles.kTranspose);
  auto inType = cast<RankedTensorType>(transpose.getInput().getType());
  int64_t r = inType.getRank();
  SmallVector<int64_t> perm = graph::transposePermutation(transpose, r);
  SmallVector<int64_t> ends(r, 0);
  ends[perm[r - 1]] = sk - m.seqK;
  ends[perm[r - 2]] = d - m.headDim;
  Value padded = padEnd(b, transpose, transpose.getInput(), ends, 0.0);
  transpose.getInputMutable().set(padded);
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(cast<RankedTensorType>(padded.getType()).getDimSize(axis));
  transpose.getOutput().setType(withShape(inType, shape));
  // A scale between the transpose and the product (the matcher takes one).
  Operation *scale = m.roles.first->getOperand(1).getDefiningOp();
  if (scale != transpose)
    scale->getResult(0).setType(transpose.getOutput().getType());
}

void Padder::padV() {
  OpOperand &use = m.roles.second->getOpOperand(1);
  auto type = cast<RankedTensorType>(use.get().getType());
  int64_t r = type.getRank();
  SmallVector<int64_t> ends(r, 0);
  ends[r - 2] = sk - m.seqK;
  ends[r - 1] = d - m.headDim;
  use.set(padEnd(b, m.roles.second, use.get(), ends, 0.0));
}

/// The causal mask's Trilu over all-true [..., Sq, Sk] becomes one over
/// [..., Sq', Sk']: the same diagonal keeps the same keys of the real rows.
void Padder::padCausalMask() {
  auto where = dyn_cast_or_null<graph::WhereOp>(m.roles.where);
  if (!where || (sq == m.seqQ && sk == m.seqK))
    return;
  auto trilu = where.getCondition().getDefiningOp<graph::TriluOp>();
  auto type = cast<RankedTensorType>(trilu.getType());
  RankedTensorType padded = withLastTwo(type, sq, sk);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(where);
  Value all = graph::ConstantOp::create(
      b, trilu.getLoc(),
      cast<ElementsAttr>(DenseElementsAttr::get(padded, true)));
  auto fresh = graph::TriluOp::create(b, trilu.getLoc(), padded, all,
                                      trilu.getK(), trilu.getUpperAttr());
  where.getConditionMutable().set(fresh.getOutput());
  if (trilu->use_empty()) {
    Operation *input = trilu.getInput().getDefiningOp();
    trilu->erase();
    if (input && input->use_empty())
      input->erase();
  }
}

/// The scores, from the first product to the softmax's last reader before
/// the second, become [..., Sq', Sk'].
void Padder::reshapeScores() {
  Operation *first = m.roles.first;
  first->getResult(0).setType(
      withLastTwo(first->getResult(0).getType(), sq, sk));
  for (Operation *op : m.roles.scores)
    for (Value result : op->getResults())
      result.setType(withLastTwo(result.getType(), sq, sk));
}

/// The model's own bias, broadcast to [..., Sq, Sk]: padded with 0 along
/// its rows where it has them, and with -inf along its keys (or the key
/// mask added where it broadcasts along them).
void Padder::padBias() {
  OpOperand *use = m.roles.bias;
  if (!use)
    return;
  auto type = cast<RankedTensorType>(use->get().getType());
  int64_t r = type.getRank();
  Operation *owner = use->getOwner();
  Value bias = use->get();
  if (r >= 2 && type.getDimSize(r - 2) == m.seqQ && m.seqQ != 1) {
    SmallVector<int64_t> ends(r, 0);
    ends[r - 2] = sq - m.seqQ;
    bias = padEnd(b, owner, bias, ends, 0.0);
  }
  if (r >= 1 && type.getDimSize(r - 1) == m.seqK && m.seqK != 1) {
    SmallVector<int64_t> ends(r, 0);
    ends[r - 1] = sk - m.seqK;
    bias = padEnd(b, owner, bias, ends, -INFINITY);
  } else if (sk != m.seqK) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(owner);
    auto biasType = cast<RankedTensorType>(bias.getType());
    SmallVector<int64_t> shape(biasType.getShape());
    if (shape.empty())
      shape.push_back(sk);
    shape.back() = sk;
    Value mask =
        keyMask(b, owner->getLoc(), biasType.getElementType(), m.seqK, sk);
    bias = graph::AddOp::create(b, owner->getLoc(), withShape(biasType, shape),
                                bias, mask);
  }
  use->set(bias);
}

/// Without a bias, keys past the sequence get -inf from a mask added to
/// the scores right after the first product, unless the causal mask already
/// drops them for every real row (its last row keeps keys up to
/// Sq - 1 + offset).
void Padder::maskKeys() {
  if (sk == m.seqK || m.roles.bias)
    return;
  if (m.causalOffset && m.seqQ - 1 + *m.causalOffset <= m.seqK - 1)
    return;
  Operation *first = m.roles.first;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(first);
  Value scores = first->getResult(0);
  Value mask = keyMask(b, first->getLoc(),
                       getElementTypeOrSelf(scores.getType()), m.seqK, sk);
  auto add =
      graph::AddOp::create(b, first->getLoc(), scores.getType(), scores, mask);
  scores.replaceAllUsesExcept(add.getOutput(), add);
}

/// The result [..., Sq', D'] sliced back to [..., Sq, D] for its readers.
void Padder::sliceResult() {
  Operation *second = m.roles.second;
  Value result = second->getResult(0);
  auto type = cast<RankedTensorType>(result.getType());
  result.setType(withLastTwo(type, sq, d));
  if (sq == m.seqQ && d == m.headDim)
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(second);
  Location loc = second->getLoc();
  int64_t r = type.getRank();
  auto slice =
      graph::SliceOp::create(b, loc, type, result, i64Vector(b, loc, {0, 0}),
                             i64Vector(b, loc, {m.seqQ, m.headDim}),
                             i64Vector(b, loc, {r - 2, r - 1}), Value());
  result.replaceAllUsesExcept(slice.getOutput(), slice);
}

struct PadAttentionPass : strata::impl::PadAttentionPassBase<PadAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> products;
    getOperation().walk([&](graph::MatMulOp op) { products.push_back(op); });
    for (Operation *op : products) {
      std::string why;
      if (matchAttention(op, why) || why.empty())
        continue;
      std::optional<AttentionMatch> match =
          matchAttention(op, why, /*anyShape=*/true);
      if (!match)
        continue;
      Padder(*match).run();
    }
  }
};

} // namespace
