//===- CausalMasks.cpp - additive causal masks as the causal Where --------===//
//
// strata-causal-masks (GPU targets with tensor cores, before
// strata-pad-attention): an attention block's additive bias that is computed
// from constants alone and holds a causal mask (0 for keys on and below a
// diagonal, the type's lowest or -inf above it) becomes the causal Where of
// the attention matcher (Attention.h):
//
//   S + B   ->   Where(Trilu(true [T_q, T_k], k = offset + 1, upper), -inf, S)
//
// torch's dynamo exporter writes a decoder's causal mask so: positions from
// constants compared (LessEqual of two aranges, And-ed with constant
// conditions), then Where(c, 0, lowest) added to the scores (GPT-2 and Llama
// without a padding mask). The mask is 1M elements at 1,024 tokens, so the
// graph's folders leave it computed (kMaxFoldElements); as a bias the flash
// kernel reads it per key step and computes every key step, as the causal
// Where it skips the steps above the diagonal and reads nothing.
//
// Exact: the block's softmax gives a key with the fill exp(s + fill - m) = 0
// and one with -inf 0, as long as its row keeps a key (the max m is a kept
// score); every row keeps key 0 (offset >= 0), and the fill is at most the
// lowest finite float16 (-65504), as exporters' masks are meant. A bias the
// block scales after the add is kept unless the factor is positive. Masks
// that depend on an input (a padding mask) are not constant and stay biases.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

#include <cmath>
#include <functional>
#include <vector>

namespace strata {
#define GEN_PASS_DEF_CAUSALMASKSPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata;
namespace graph = strata::graph;

namespace {

/// The most elements a value of the mask's computation may hold (a 4,096 x
/// 4,096 mask).
constexpr int64_t kMaxMaskElements = int64_t(1) << 24;
/// The most ops the computation may take.
constexpr int kMaxMaskOps = 64;
/// A masked key's fill: the lowest finite float16 or below.
constexpr double kLeastFill = -65504.0;

/// A value of the mask's computation: its static shape and its elements in
/// row-major order, as doubles (booleans 0 or 1; the aranges of positions
/// are exact).
struct Values {
  SmallVector<int64_t> shape;
  std::vector<double> data;
};

/// `v` read at `index` of a shape it broadcasts to (numpy's rules).
double at(const Values &v, ArrayRef<int64_t> index) {
  int64_t offset = 0, lead = int64_t(index.size()) - int64_t(v.shape.size());
  for (size_t d = 0; d < v.shape.size(); ++d)
    offset = offset * v.shape[d] + (v.shape[d] == 1 ? 0 : index[lead + d]);
  return v.data[offset];
}

/// Evaluates the values of ops computed from constants alone: comparisons,
/// logic, Where, Cast, arithmetic and reshapes. nullopt for anything else,
/// or past the limits.
class Evaluator {
public:
  std::optional<Values> eval(Value v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    std::optional<Values> result =
        ++ops > kMaxMaskOps ? std::nullopt : compute(v);
    if (ops > kMaxMaskOps)
      result.reset();
    memo[v] = result;
    return result;
  }

private:
  std::optional<Values> compute(Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() ||
        type.getNumElements() > kMaxMaskElements)
      return std::nullopt;
    Operation *op = v.getDefiningOp();
    if (!op)
      return std::nullopt;
    if (auto constant = dyn_cast<graph::ConstantOp>(op))
      return fromConstant(constant, type);
    SmallVector<Values, 3> in;
    for (Value operand : op->getOperands()) {
      std::optional<Values> x = eval(operand);
      if (!x)
        return std::nullopt;
      in.push_back(std::move(*x));
    }
    Values out{SmallVector<int64_t>(type.getShape()), {}};
    // Same elements, another shape.
    if (isa<graph::ReshapeOp, graph::UnsqueezeOp, graph::SqueezeOp,
            graph::IdentityOp>(op)) {
      out.data = std::move(in[0].data);
      return out;
    }
    Type element = type.getElementType();
    std::function<double(ArrayRef<double>)> fn;
    if (isa<graph::ExpandOp>(op)) {
      in.resize(1);
      fn = [](ArrayRef<double> x) { return x[0]; };
    } else if (isa<graph::CastOp>(op)) {
      if (element.isInteger(1))
        fn = [](ArrayRef<double> x) { return x[0] != 0 ? 1.0 : 0.0; };
      else if (isa<IntegerType>(element))
        fn = [](ArrayRef<double> x) { return std::trunc(x[0]); };
      else
        fn = [](ArrayRef<double> x) { return x[0]; };
    } else if (isa<graph::NotOp>(op)) {
      fn = [](ArrayRef<double> x) { return x[0] != 0 ? 0.0 : 1.0; };
    } else if (isa<graph::NegOp>(op)) {
      fn = [](ArrayRef<double> x) { return -x[0]; };
    } else if (isa<graph::WhereOp>(op)) {
      fn = [](ArrayRef<double> x) { return x[0] != 0 ? x[1] : x[2]; };
    } else if (in.size() == 2) {
      fn = binary(op);
      if (!fn)
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    int64_t n = ShapedType::getNumElements(out.shape);
    out.data.resize(n);
    SmallVector<int64_t> index(out.shape.size(), 0);
    SmallVector<double, 3> args(in.size());
    for (int64_t flat = 0; flat < n; ++flat) {
      for (size_t i = 0; i < in.size(); ++i)
        args[i] = at(in[i], index);
      out.data[flat] = fn(args);
      for (int64_t d = int64_t(index.size()) - 1; d >= 0; --d) {
        if (++index[d] < out.shape[d])
          break;
        index[d] = 0;
      }
    }
    return out;
  }

  static std::function<double(ArrayRef<double>)> binary(Operation *op) {
    auto truth = [](bool b) { return b ? 1.0 : 0.0; };
    if (isa<graph::AndOp>(op))
      return [=](ArrayRef<double> x) { return truth(x[0] != 0 && x[1] != 0); };
    if (isa<graph::OrOp>(op))
      return [=](ArrayRef<double> x) { return truth(x[0] != 0 || x[1] != 0); };
    if (isa<graph::XorOp>(op))
      return
          [=](ArrayRef<double> x) { return truth((x[0] != 0) != (x[1] != 0)); };
    if (isa<graph::EqualOp>(op))
      return [=](ArrayRef<double> x) { return truth(x[0] == x[1]); };
    if (isa<graph::LessOp>(op))
      return [=](ArrayRef<double> x) { return truth(x[0] < x[1]); };
    if (isa<graph::LessEqualOp>(op))
      return [=](ArrayRef<double> x) { return truth(x[0] <= x[1]); };
    if (isa<graph::GreaterOp>(op))
      return [=](ArrayRef<double> x) { return truth(x[0] > x[1]); };
    if (isa<graph::GreaterEqualOp>(op))
      return [=](ArrayRef<double> x) { return truth(x[0] >= x[1]); };
    if (isa<graph::AddOp>(op))
      return [](ArrayRef<double> x) { return x[0] + x[1]; };
    if (isa<graph::SubOp>(op))
      return [](ArrayRef<double> x) { return x[0] - x[1]; };
    if (isa<graph::MulOp>(op))
      return [](ArrayRef<double> x) { return x[0] * x[1]; };
    return nullptr;
  }

  static std::optional<Values> fromConstant(graph::ConstantOp constant,
                                            RankedTensorType type) {
    auto attr = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!attr)
      return std::nullopt;
    Values v{SmallVector<int64_t>(type.getShape()), {}};
    v.data.reserve(type.getNumElements());
    Type element = type.getElementType();
    if (element.isInteger(1)) {
      for (bool b : attr.getValues<bool>())
        v.data.push_back(b ? 1.0 : 0.0);
    } else if (isa<IntegerType>(element)) {
      for (const APInt &i : attr.getValues<APInt>())
        v.data.push_back(double(i.getSExtValue()));
    } else if (isa<FloatType>(element)) {
      for (const APFloat &f : attr.getValues<APFloat>())
        v.data.push_back(f.convertToDouble());
    } else {
      return std::nullopt;
    }
    return v;
  }

  DenseMap<Value, std::optional<Values>> memo;
  int ops = 0;

public:
  /// Forgets what it evaluated (ops were erased: their values' storage may
  /// be reused).
  void clear() {
    memo.clear();
    ops = 0;
  }
};

} // namespace

bool strata::eraseDeadDefs(Value v) {
  SmallVector<Operation *> work;
  if (Operation *def = v.getDefiningOp())
    work.push_back(def);
  llvm::DenseSet<Operation *> erased;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (erased.contains(op) || !op->use_empty() ||
        !isa<graph::GraphDialect>(op->getDialect()))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
    erased.insert(op);
    op->erase();
  }
  return !erased.empty();
}

namespace {

/// The causal mask's offset when `bias` (already evaluated, broadcast to
/// scores [..., rows, keys]) keeps key j of row i exactly when
/// j <= i + offset, with 0, and drops the others with a fill at most
/// kLeastFill; every leading index the same. nullopt otherwise.
std::optional<int64_t> causalOffset(const Values &bias, int64_t rows,
                                    int64_t keys) {
  int64_t rank = int64_t(bias.shape.size());
  if (rank < 2 || bias.shape[rank - 2] != rows || bias.shape[rank - 1] != keys)
    return std::nullopt;
  // Row 0 keeps keys 0..offset.
  int64_t kept = 0;
  while (kept < keys && bias.data[kept] == 0)
    ++kept;
  if (kept == 0)
    return std::nullopt;
  int64_t offset = kept - 1;
  int64_t planes =
      ShapedType::getNumElements(ArrayRef<int64_t>(bias.shape).drop_back(2));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < keys; ++j) {
        double x = bias.data[(p * rows + i) * keys + j];
        if (j <= i + offset ? x != 0 : !(x <= kLeastFill))
          return std::nullopt;
      }
  return offset;
}

/// Rewrites the additive causal mask of the attention block that `first`
/// (its first product) starts, when it has one; true if it did.
bool rewriteCausalBias(Operation *first, Evaluator &evaluator) {
  std::string why;
  std::optional<AttentionMatch> match =
      matchAttention(first, why, /*anyShape=*/true);
  if (!match || !match->bias || match->mask || match->bias->factor <= 0)
    return false;
  OpOperand *use = match->bias->source;
  auto add = dyn_cast<graph::AddOp>(use->getOwner());
  if (!add)
    return false;
  Value scores = use->getOperandNumber() == 0 ? add.getRhs() : add.getLhs();
  auto scoresType = dyn_cast<RankedTensorType>(scores.getType());
  if (!scoresType || scoresType != add.getType())
    return false;
  std::optional<Values> bias = evaluator.eval(use->get());
  if (!bias)
    return false;
  std::optional<int64_t> offset = causalOffset(*bias, match->seqQ, match->seqK);
  if (!offset)
    return false;
  OpBuilder b(add);
  Location loc = add.getLoc();
  auto maskType =
      RankedTensorType::get({match->seqQ, match->seqK}, b.getI1Type());
  Value all = graph::ConstantOp::create(
      b, loc, cast<ElementsAttr>(DenseElementsAttr::get(maskType, true)));
  auto kType = RankedTensorType::get({}, b.getI64Type());
  Value k = graph::ConstantOp::create(
      b, loc,
      cast<ElementsAttr>(DenseElementsAttr::get(kType, int64_t(*offset + 1))));
  Value tri =
      graph::TriluOp::create(b, loc, maskType, all, k, b.getI64IntegerAttr(1));
  auto fillType = RankedTensorType::get({}, scoresType.getElementType());
  Value fill = graph::ConstantOp::create(
      b, loc,
      cast<ElementsAttr>(DenseElementsAttr::get(
          fillType,
          APFloat::getInf(
              cast<FloatType>(fillType.getElementType()).getFloatSemantics(),
              /*Negative=*/true))));
  auto where = graph::WhereOp::create(b, loc, scoresType, tri, fill, scores);
  Value oldBias = use->get();
  add.getOutput().replaceAllUsesWith(where.getOutput());
  add.erase();
  if (eraseDeadDefs(oldBias))
    evaluator.clear();
  return true;
}

struct CausalMasksPass : strata::impl::CausalMasksPassBase<CausalMasksPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> products;
    getOperation().walk(
        [&](graph::MatMulOp op) { products.push_back(op.getOperation()); });
    Evaluator evaluator;
    for (Operation *op : products)
      rewriteCausalBias(op, evaluator);
  }
};

} // namespace
