//===- FoldHeadRepeats.cpp - grouped-query K/V repeats folded into rows ---===//
//
// strata-fold-head-repeats (cuda, after strata-pad-attention): in an
// attention block that the flash kernel does not take (a decode step's one
// query row), the products that read K's or V's heads repeated for
// grouped-query attention (HeadRepeat, Attention.h: [..., Hkv, T, D] to
// [..., Hkv * rep, T, D]) read them once, with the repeat folded into the
// other operand's rows:
//
//   Q [..., H, S, D] x Transpose(Repeat(K))
//     -> Reshape(Reshape(Q, [..., Hkv, rep * S, D]) x Transpose(K),
//                [..., H, S, T])
//   P [..., H, S, T] x Repeat(V)
//     -> Reshape(Reshape(P, [..., Hkv, rep * S, T]) x V, [..., H, S, D])
//
// Head h = kv * rep + r of Q is rows r * S .. r * S + S - 1 of K/V head kv
// in the reshaped operand (a view), so each product is the same sums, rep
// times fewer, larger matrices; no kernel copies K and V rep times (a
// Llama-style decode step spent 8 kernels on the copies, and the products
// read rep times the cache).
//
// A block the flash kernel takes reads x in place already (its batch
// strides): left as it is.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

namespace strata {
#define GEN_PASS_DEF_FOLDHEADREPEATSPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata;
namespace graph = strata::graph;

namespace {

/// Whether `t` swaps the last two dimensions and keeps the others.
bool swapsLastTwo(graph::TransposeOp t) {
  auto type = staticTensorType(t.getInput());
  if (!type || type.getRank() < 2)
    return false;
  SmallVector<int64_t> perm = graph::transposePermutation(t, type.getRank());
  int64_t r = type.getRank();
  for (int64_t i = 0; i < r - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
}

/// Folds the repeat under `product`'s right operand into its left operand's
/// rows; true if it did.
bool fold(graph::MatMulOp product) {
  Value rhs = product.getRhs();
  auto transpose = rhs.getDefiningOp<graph::TransposeOp>();
  if (transpose && (!swapsLastTwo(transpose) || !transpose->hasOneUse()))
    return false;
  std::optional<HeadRepeat> repeat =
      matchHeadRepeat(transpose ? transpose.getInput() : rhs);
  auto lhsType = staticTensorType(product.getLhs());
  auto outType = staticTensorType(product.getOutput());
  if (!repeat || !lhsType || !outType ||
      !repeat->ops.back()->getResult(0).hasOneUse())
    return false;
  Value x = repeat->source->get();
  auto xType = staticTensorType(x);
  int64_t r = lhsType.getRank();
  if (!xType || xType.getRank() != r || outType.getRank() != r || r < 3)
    return false;
  // The left operand's batch is the repeated heads' [..., Hkv * rep].
  ArrayRef<int64_t> lhs = lhsType.getShape(), heads = xType.getShape();
  int64_t rep = repeat->rep;
  if (lhs.take_front(r - 3) != heads.take_front(r - 3) ||
      lhs[r - 3] != heads[r - 3] * rep)
    return false;
  OpBuilder b(product);
  Location loc = product.getLoc();
  SmallVector<int64_t> folded(lhs.take_front(r - 3));
  folded.append({heads[r - 3], rep * lhs[r - 2], lhs[r - 1]});
  Value rows = viewAs(b, loc, product.getLhs(), folded);
  Value operand = x;
  if (transpose) {
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
    std::swap(perm[r - 2], perm[r - 1]);
    SmallVector<int64_t> shape(heads);
    std::swap(shape[r - 2], shape[r - 1]);
    operand = graph::TransposeOp::create(
        b, loc, RankedTensorType::get(shape, xType.getElementType()), x,
        b.getDenseI64ArrayAttr(perm));
  }
  auto operandType = cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> resultShape(folded);
  resultShape.back() = operandType.getShape().back();
  auto folds = graph::MatMulOp::create(
      b, loc, RankedTensorType::get(resultShape, outType.getElementType()),
      rows, operand);
  folds->setAttrs(product->getDiscardableAttrDictionary());
  Value result = viewAs(b, loc, folds.getOutput(), outType.getShape());
  product.getOutput().replaceAllUsesWith(result);
  product.erase();
  eraseDeadDefs(rhs);
  return true;
}

struct FoldHeadRepeatsPass
    : strata::impl::FoldHeadRepeatsPassBase<FoldHeadRepeatsPass> {
  using Base::Base;

  void runOnOperation() override {
    // The blocks the flash kernel takes, left as they are.
    llvm::SmallPtrSet<Operation *, 16> flash;
    SmallVector<graph::MatMulOp> products;
    getOperation().walk([&](graph::MatMulOp op) {
      products.push_back(op);
      std::string why;
      if (std::optional<AttentionMatch> match = matchAttention(op, why))
        flash.insert(match->ops.begin(), match->ops.end());
    });
    for (graph::MatMulOp op : products)
      if (!flash.contains(op))
        fold(op);
  }
};

} // namespace
