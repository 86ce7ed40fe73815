//===- LowerControlFlow.cpp - If and Scan without run-time control flow ---===//
//
// The plan a target runs is a straight list of steps: it has no branches and
// no loops. Two forms of ONNX control flow need neither once the shapes are
// known, and this pass rewrites them into ordinary graph ops:
//
// - An If whose condition is only known at run time, and whose branches
//   yield tensors of the same static type and have no side effects, computes
//   both branches and selects with graph.where. This is what XLA and
//   Inductor do with a data-dependent `torch.where`-like branch: the cost is
//   the sum of the branches, which for the small branches exporters write
//   (a scripted `if` over a scalar, a guard on an empty tensor) is far below
//   a round trip to the host. Sequences that list as many tensors of one
//   type are selected element by element. An If whose branches yield
//   different shapes, or optionals, stays (the target then reports it).
// - A Scan whose trip count is a static dimension of its scan inputs is
//   unrolled: each iteration is a copy of the body, reading its slice of
//   each scan input (graph.gather of one index, which drops the axis) and
//   stacking each scan output (graph.unsqueeze + graph.concat), in the
//   directions the Scan asks for. Bounded by kMaxUnrolledOps, so that a long
//   scan does not grow the graph without limit.
// - A Loop that runs exactly its constant trip count (no condition, or a
//   constant true one that the body passes on unchanged) is unrolled the
//   same way, each copy with its iteration number as a constant.
// - A SequenceMap over sequences whose elements are listed in the graph
//   (graph.sequence_construct, as sequence inputs are bound) is unrolled
//   into one copy of its body per position.
//
// An If with a constant condition is inlined by its canonicalizer before
// this pass runs.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata::graph {
#define GEN_PASS_DEF_GRAPHLOWERCONTROLFLOWPASS
#include "strata/Dialect/Graph/Transforms/Passes.h.inc"
} // namespace strata::graph

using namespace mlir;
using namespace strata::graph;

namespace {

/// The most ops an unrolled Scan may add to the graph (trip count times the
/// body's ops).
constexpr int64_t kMaxUnrolledOps = 16384;

Value i64Constant(PatternRewriter &rewriter, Location loc,
                  ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, rewriter.getI64Type());
  return ConstantOp::create(
      rewriter, loc, cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

YieldOp yieldOf(Region &region) {
  return cast<YieldOp>(region.front().getTerminator());
}

/// Whether every op of `region` (nested ones included) is free of side
/// effects, so that running it when its result is not used changes nothing.
bool isSpeculatable(Region &region) {
  return llvm::all_of(region.front().without_terminator(),
                      [](Operation &op) { return isMemoryEffectFree(&op); });
}

/// If(c) then A else B -> where(c, A, B), both branches computed.
struct SelectBothBranches : OpRewritePattern<IfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(IfOp op,
                                PatternRewriter &rewriter) const override {
    auto condType = dyn_cast<RankedTensorType>(op.getCondition().getType());
    if (!condType || !condType.hasStaticShape() ||
        condType.getNumElements() != 1)
      return rewriter.notifyMatchFailure(op, "condition of unknown size");
    YieldOp thenYield = yieldOf(op.getThenBranch());
    YieldOp elseYield = yieldOf(op.getElseBranch());
    for (auto [a, b, result] : llvm::zip(
             thenYield.getValues(), elseYield.getValues(), op.getResults()))
      if (!selectable(a, b, result.getType()))
        return rewriter.notifyMatchFailure(
            op, "branches yield values of different or dynamic types");
    if (!isSpeculatable(op.getThenBranch()) ||
        !isSpeculatable(op.getElseBranch()))
      return rewriter.notifyMatchFailure(op, "a branch has side effects");

    Location loc = op.getLoc();
    // The condition as a scalar, so that it broadcasts to any result shape.
    Value condition = op.getCondition();
    if (condType.getRank() != 0)
      condition = createInferred<ReshapeOp>(
          rewriter, loc, condType.getElementType(), condition,
          i64Constant(rewriter, loc, {0}, {}));
    SmallVector<Value> thenValues(thenYield.getValues());
    SmallVector<Value> elseValues(elseYield.getValues());
    for (Region *region : {&op.getThenBranch(), &op.getElseBranch()}) {
      Block &block = region->front();
      rewriter.eraseOp(block.getTerminator());
      rewriter.inlineBlockBefore(&block, op);
    }
    SmallVector<Value> selected;
    for (auto [a, b, result] :
         llvm::zip(thenValues, elseValues, op.getResults())) {
      if (isa<TensorType>(a.getType())) {
        selected.push_back(
            WhereOp::create(rewriter, loc, a.getType(), condition, a, b));
        continue;
      }
      // Sequences of one length: element by element.
      SmallVector<Value> elements;
      for (auto [x, y] :
           llvm::zip(*getListedElements(a), *getListedElements(b)))
        elements.push_back(
            WhereOp::create(rewriter, loc, x.getType(), condition, x, y));
      selected.push_back(elements.empty()
                             ? a
                             : SequenceConstructOp::create(
                                   rewriter, loc, result.getType(), elements));
    }
    rewriter.replaceOp(op, selected);
    return success();
  }

private:
  /// Whether the branches' values `a` and `b` can be selected between at
  /// run time: tensors of one static type, or sequences that list as many
  /// tensors, pairwise of one static type.
  static bool selectable(Value a, Value b, Type resultType) {
    auto oneStaticType = [](Value x, Value y) {
      auto type = dyn_cast<RankedTensorType>(x.getType());
      return type && type.hasStaticShape() && x.getType() == y.getType();
    };
    if (isa<TensorType>(resultType))
      return oneStaticType(a, b);
    if (!isa<SequenceType>(resultType))
      return false;
    std::optional<OperandRange> x = getListedElements(a);
    std::optional<OperandRange> y = getListedElements(b);
    if (!x || !y || x->size() != y->size())
      return false;
    return llvm::all_of(llvm::zip(*x, *y), [&](auto pair) {
      return oneStaticType(std::get<0>(pair), std::get<1>(pair));
    });
  }
};

/// A Scan of static trip count, unrolled.
struct UnrollScan : OpRewritePattern<ScanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    int64_t numScanInputs = op.getNumScanInputs();
    int64_t numStates = int64_t(op.getInputs().size()) - numScanInputs;
    int64_t numScanOutputs = int64_t(op.getNumResults()) - numStates;
    auto entry = [](std::optional<ArrayRef<int64_t>> list, int64_t i) {
      return list ? (*list)[i] : 0;
    };
    // Every scan input's axis and the common trip count.
    SmallVector<int64_t> inputAxes;
    int64_t trips = ShapedType::kDynamic;
    for (int64_t i = 0; i < numScanInputs; ++i) {
      auto type =
          dyn_cast<RankedTensorType>(op.getInputs()[numStates + i].getType());
      if (!type)
        return rewriter.notifyMatchFailure(op, "unranked scan input");
      int64_t axis = entry(op.getScanInputAxes(), i);
      if (axis < 0)
        axis += type.getRank();
      if (axis < 0 || axis >= type.getRank())
        return rewriter.notifyMatchFailure(op, "scan input axis out of range");
      int64_t n = type.getDimSize(axis);
      if (ShapedType::isDynamic(n) ||
          (!ShapedType::isDynamic(trips) && trips != n))
        return rewriter.notifyMatchFailure(op, "trip count not static");
      trips = n;
      inputAxes.push_back(axis);
    }
    Block &body = op.getBody().front();
    int64_t bodyOps = std::distance(body.begin(), body.end());
    if (trips < 1 || trips * bodyOps > kMaxUnrolledOps)
      return rewriter.notifyMatchFailure(op, "trip count too large or zero");

    Location loc = op.getLoc();
    SmallVector<Value> states(op.getInputs().take_front(numStates));
    SmallVector<SmallVector<Value>> slices(numScanOutputs);
    for (int64_t t = 0; t < trips; ++t) {
      IRMapping mapping;
      for (int64_t s = 0; s < numStates; ++s)
        mapping.map(body.getArgument(s), states[s]);
      for (int64_t i = 0; i < numScanInputs; ++i) {
        int64_t index =
            entry(op.getScanInputDirections(), i) ? trips - 1 - t : t;
        Value input = op.getInputs()[numStates + i];
        Value slice = createInferred<GatherOp>(
            rewriter, loc, getElementTypeOrSelf(input.getType()), input,
            i64Constant(rewriter, loc, {}, {index}), inputAxes[i]);
        mapping.map(body.getArgument(numStates + i), slice);
      }
      for (Operation &inner : body.without_terminator())
        rewriter.clone(inner, mapping);
      auto yielded = llvm::map_to_vector(
          body.getTerminator()->getOperands(),
          [&](Value v) { return mapping.lookupOrDefault(v); });
      for (int64_t s = 0; s < numStates; ++s)
        states[s] = yielded[s];
      for (int64_t j = 0; j < numScanOutputs; ++j)
        slices[j].push_back(yielded[numStates + j]);
    }

    SmallVector<Value> results(states);
    for (int64_t j = 0; j < numScanOutputs; ++j) {
      auto sliceType = dyn_cast<RankedTensorType>(slices[j].front().getType());
      if (!sliceType)
        return rewriter.notifyMatchFailure(op, "unranked scan output");
      int64_t axis = entry(op.getScanOutputAxes(), j);
      if (axis < 0)
        axis += sliceType.getRank() + 1;
      if (entry(op.getScanOutputDirections(), j))
        std::reverse(slices[j].begin(), slices[j].end());
      SmallVector<Value> parts;
      for (Value slice : slices[j])
        parts.push_back(createInferred<UnsqueezeOp>(
            rewriter, loc, sliceType.getElementType(), slice,
            rewriter.getDenseI64ArrayAttr(axis)));
      results.push_back(createInferred<ConcatOp>(
          rewriter, loc, sliceType.getElementType(), parts, axis));
    }
    // The unrolled values may be more precise than the Scan's declared
    // types; the users' shape functions take them.
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Whether `value` is a constant whose one element is true.
bool isConstantTrue(Value value) {
  DenseElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.getNumElements() == 1 &&
         *attr.getValues<bool>().begin();
}

/// A Loop that runs exactly its constant trip count, unrolled: its
/// condition is absent or constant true and its body yields back the
/// condition it was given, or a constant true (TorchScript's `for i in
/// range(n)` once `n` is known). The iteration number is a constant in each
/// copy; each scan output is stacked along a new leading axis.
struct UnrollCountedLoop : OpRewritePattern<LoopOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LoopOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<int64_t> count;
    if (!op.getMaxTripCount() ||
        failed(getConstantIntValues(op.getMaxTripCount(), count)) ||
        count.size() != 1)
      return rewriter.notifyMatchFailure(op, "trip count not constant");
    if (op.getCondition() && !isConstantTrue(op.getCondition()))
      return rewriter.notifyMatchFailure(op, "condition not constant true");
    Block &body = op.getBody().front();
    Operation *yield = body.getTerminator();
    Value next = yield->getOperand(0);
    if (next != body.getArgument(1) && !isConstantTrue(next))
      return rewriter.notifyMatchFailure(op, "the body decides when to stop");
    int64_t trips = std::max<int64_t>(count.front(), 0);
    int64_t bodyOps = std::distance(body.begin(), body.end());
    size_t numCarried = op.getInitial().size();
    size_t numScanOutputs = op.getNumResults() - numCarried;
    // Zero iterations leave the scan outputs empty, whose shape the body
    // does not say: only a loop without scan outputs is taken then.
    if ((trips == 0 && numScanOutputs) || trips * bodyOps > kMaxUnrolledOps)
      return rewriter.notifyMatchFailure(op, "trip count too large or zero");
    // Scan outputs are stacked tensors (checked before anything is built).
    for (size_t j = 0; j < numScanOutputs; ++j)
      if (!isa<TensorType>(yield->getOperand(1 + numCarried + j).getType()))
        return rewriter.notifyMatchFailure(op, "scan output not a tensor");

    Location loc = op.getLoc();
    Value condition = ConstantOp::create(
        rewriter, loc,
        cast<ElementsAttr>(DenseElementsAttr::get(
            RankedTensorType::get({}, rewriter.getI1Type()), true)));
    SmallVector<Value> carried(op.getInitial());
    SmallVector<SmallVector<Value>> slices(numScanOutputs);
    for (int64_t t = 0; t < trips; ++t) {
      IRMapping mapping;
      mapping.map(body.getArgument(0), i64Constant(rewriter, loc, {}, {t}));
      mapping.map(body.getArgument(1), condition);
      for (size_t c = 0; c < numCarried; ++c)
        mapping.map(body.getArgument(2 + c), carried[c]);
      for (Operation &inner : body.without_terminator())
        rewriter.clone(inner, mapping);
      for (size_t c = 0; c < numCarried; ++c)
        carried[c] = mapping.lookupOrDefault(yield->getOperand(1 + c));
      for (size_t j = 0; j < numScanOutputs; ++j)
        slices[j].push_back(
            mapping.lookupOrDefault(yield->getOperand(1 + numCarried + j)));
    }
    SmallVector<Value> results(carried);
    for (size_t j = 0; j < numScanOutputs; ++j) {
      Type element = getElementTypeOrSelf(slices[j].front().getType());
      SmallVector<Value> parts;
      for (Value slice : slices[j])
        parts.push_back(createInferred<UnsqueezeOp>(
            rewriter, loc, element, slice, rewriter.getDenseI64ArrayAttr(0)));
      results.push_back(
          createInferred<ConcatOp>(rewriter, loc, element, parts, int64_t(0)));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// A SequenceMap over sequences whose elements the graph lists (a sequence
/// the model builds, or a sequence input bound to its elements), unrolled:
/// one copy of the body per position, reading that position's elements,
/// and each result a graph.sequence_construct of the copies' tensors.
struct UnrollSequenceMap : OpRewritePattern<SequenceMapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SequenceMapOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<std::optional<OperandRange>> elements;
    std::optional<size_t> length;
    for (Value operand : op->getOperands()) {
      elements.push_back(std::nullopt);
      if (!isa<SequenceType>(operand.getType()))
        continue;
      elements.back() = getListedElements(operand);
      if (!elements.back())
        return rewriter.notifyMatchFailure(op, "a sequence is not listed");
      if (length && *length != elements.back()->size())
        return rewriter.notifyMatchFailure(op, "sequences of other lengths");
      length = elements.back()->size();
    }
    Block &body = op.getBody().front();
    int64_t bodyOps = std::distance(body.begin(), body.end());
    if (static_cast<int64_t>(*length) * bodyOps > kMaxUnrolledOps)
      return rewriter.notifyMatchFailure(op, "too many positions");
    Operation *yield = body.getTerminator();
    SmallVector<SmallVector<Value>> yielded(op.getNumResults());
    for (size_t t = 0; t < *length; ++t) {
      IRMapping mapping;
      for (auto [k, operand] : llvm::enumerate(op->getOperands()))
        mapping.map(body.getArgument(k),
                    elements[k] ? (*elements[k])[t] : operand);
      for (Operation &inner : body.without_terminator())
        rewriter.clone(inner, mapping);
      for (auto [j, value] : llvm::enumerate(yield->getOperands()))
        yielded[j].push_back(mapping.lookupOrDefault(value));
    }
    SmallVector<Value> results;
    for (auto [j, result] : llvm::enumerate(op.getResults())) {
      auto type = cast<SequenceType>(result.getType());
      if (yielded[j].empty())
        results.push_back(SequenceEmptyOp::create(
            rewriter, op.getLoc(), type,
            TypeAttr::get(getElementTypeOrSelf(type.getElementType()))));
      else
        results.push_back(SequenceConstructOp::create(rewriter, op.getLoc(),
                                                      type, yielded[j]));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct GraphLowerControlFlowPass
    : strata::graph::impl::GraphLowerControlFlowPassBase<
          GraphLowerControlFlowPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SelectBothBranches, UnrollScan, UnrollCountedLoop,
                 UnrollSequenceMap>(&getContext());
    IfOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // An unrolled value may be more precise than the op's declared type.
    syncFunctionResultTypes(getOperation());
  }
};

} // namespace
