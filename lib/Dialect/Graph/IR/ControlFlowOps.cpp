//===- ControlFlowOps.cpp - If, Loop, Scan ----------------------*- C++ -*-===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata::graph;

/// The yield terminating a single-block region.
static YieldOp getYield(Region &region) {
  if (region.empty())
    return {};
  return dyn_cast<YieldOp>(region.front().getTerminator());
}

/// True when values of types `a` and `b` can flow into each other: the same
/// kind of value around the same element type. Shapes may differ (a loop may
/// grow a tensor or a sequence's tensors), and an optional matches its
/// element type (ONNX's Loop-16 tests carry optional<seq> into seq).
static bool sameElementKind(Type a, Type b) {
  if (auto oa = dyn_cast<OptionalType>(a))
    return sameElementKind(oa.getElementType(), b);
  if (auto ob = dyn_cast<OptionalType>(b))
    return sameElementKind(a, ob.getElementType());
  if (auto sa = dyn_cast<SequenceType>(a)) {
    auto sb = dyn_cast<SequenceType>(b);
    return sb && sameElementKind(sa.getElementType(), sb.getElementType());
  }
  if (isa<SequenceType>(b))
    return false;
  return getElementTypeOrSelf(a) == getElementTypeOrSelf(b);
}

/// Checks that yielded types can flow into `types` (same element type,
/// compatible shapes); `what` names the region in the message.
static LogicalResult verifyYieldTypes(Operation *op, YieldOp yield,
                                      TypeRange types, StringRef what) {
  if (!yield)
    return op->emitOpError() << what << " must end in graph.yield";
  if (yield.getValues().size() != types.size())
    return op->emitOpError() << what << " yields " << yield.getValues().size()
                             << " values, expected " << types.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(yield.getValues(), types))) {
    auto [value, type] = pair;
    if (!sameElementKind(value.getType(), type))
      return op->emitOpError() << what << " value #" << i << " has type "
                               << value.getType() << ", expected " << type;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

LogicalResult IfOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  YieldOp thenYield = getYield(getThenBranch());
  YieldOp elseYield = getYield(getElseBranch());
  if (!thenYield || !elseYield ||
      thenYield.getValues().size() != getNumResults() ||
      elseYield.getValues().size() != getNumResults())
    return failure();
  for (auto [a, b] : llvm::zip(thenYield.getValues(), elseYield.getValues())) {
    if (!sameElementKind(a.getType(), b.getType()))
      return failure(); // The verifier names the mismatch.
    // Branches may yield different shapes: keep what they agree on (a
    // branch yielding [0] and one yielding [?] give [?], not [0]).
    Type joined = unionTypes(a.getType(), b.getType());
    types.push_back(joined ? joined : generalizeShape(a.getType()));
  }
  return success();
}

LogicalResult IfOp::verify() {
  auto cond = cast<TensorType>(getCondition().getType());
  if (cond.hasStaticShape() && cond.getNumElements() != 1)
    return emitOpError("condition must hold one element, got ") << cond;
  if (failed(verifyYieldTypes(*this, getYield(getThenBranch()),
                              getResultTypes(), "then branch")) ||
      failed(verifyYieldTypes(*this, getYield(getElseBranch()),
                              getResultTypes(), "else branch")))
    return failure();
  return success();
}

namespace {
/// An If whose condition is a constant is the branch it takes: its ops move
/// before the If, and the If's results become what that branch yields.
/// TorchScript exports the Python `if`s of scripted helpers this way (e.g.
/// DeBERTa's `if query_size != key_size`), and binding the input shapes makes
/// their conditions constants.
struct InlineConstantIf : OpRewritePattern<IfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(IfOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr condition;
    if (!matchPattern(op.getCondition(), m_Constant(&condition)) ||
        condition.getNumElements() != 1)
      return failure();
    Region &taken = *condition.getValues<bool>().begin() ? op.getThenBranch()
                                                         : op.getElseBranch();
    YieldOp yield = getYield(taken);
    if (!yield)
      return failure();
    // The yielded values replace the results. A branch may yield a more
    // precise shape than the If declares (its type joins both branches), which
    // the users' shape functions take; any other difference (an optional
    // yielded for a sequence) would change what the users read.
    for (auto [value, result] : llvm::zip(yield.getValues(), op.getResults())) {
      Type from = value.getType(), to = result.getType();
      if (from != to &&
          !(isa<TensorType>(from) && isa<TensorType>(to) &&
            getElementTypeOrSelf(from) == getElementTypeOrSelf(to)))
        return failure();
    }
    SmallVector<Value> values(yield.getValues());
    Block &block = taken.front();
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&block, op);
    rewriter.replaceOp(op, values);
    return success();
  }
};
} // namespace

void IfOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                       MLIRContext *context) {
  patterns.add<InlineConstantIf>(context);
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

LogicalResult LoopOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  // A carried value is its initial value or what an iteration yields: the
  // union of the two (Mask R-CNN's masks start [0, 1, 28, 28] and grow by a
  // Concat each iteration: [?, 1, 28, 28]). A scan output stacks what each
  // iteration yields along a new first axis. Either joins the declared type,
  // which may know more (a static trip count).
  YieldOp yield = getYield(getBody());
  size_t carried = getInitial().size();
  for (auto [i, declared] : llvm::enumerate(getResultTypes())) {
    Type inferred;
    if (yield && 1 + i < yield.getValues().size()) {
      Type yielded = yield.getValues()[1 + i].getType();
      if (i < carried) {
        inferred = unionTypes(getInitial()[i].getType(), yielded);
      } else if (auto slice = dyn_cast<RankedTensorType>(yielded)) {
        SmallVector<int64_t> shape = {ShapedType::kDynamic};
        llvm::append_range(shape, slice.getShape());
        inferred = RankedTensorType::get(shape, slice.getElementType());
      }
    }
    Type joined = inferred ? joinTypes(declared, inferred) : Type();
    types.push_back(joined ? joined : declared);
  }
  return success();
}

LogicalResult LoopOp::verify() {
  Block &body = getBody().front();
  size_t carried = getInitial().size();
  if (body.getNumArguments() != carried + 2)
    return emitOpError("body takes ")
           << body.getNumArguments() << " arguments, expected " << carried + 2
           << " (iteration, condition, " << carried << " carried)";
  if (getNumResults() < carried)
    return emitOpError("has fewer results than loop-carried values");
  auto yield = getYield(getBody());
  if (!yield)
    return emitOpError("body must end in graph.yield");
  size_t scanOutputs = getNumResults() - carried;
  if (yield.getValues().size() != 1 + carried + scanOutputs)
    return emitOpError("body yields ")
           << yield.getValues().size() << " values, expected "
           << 1 + carried + scanOutputs;
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getInitial(), getResultTypes()))) {
    auto [init, type] = pair;
    if (!sameElementKind(init.getType(), type))
      return emitOpError("loop-carried value #")
             << i << " changes type from " << init.getType() << " to " << type;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

LogicalResult ScanOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  llvm::append_range(types, getResultTypes());
  return success();
}

LogicalResult ScanOp::verify() {
  int64_t scanInputs = getNumScanInputs();
  int64_t states = int64_t(getInputs().size()) - scanInputs;
  if (scanInputs < 1 || states < 0)
    return emitOpError("num_scan_inputs ")
           << scanInputs << " must be in [1, " << getInputs().size() << "]";
  Block &body = getBody().front();
  if (int64_t(body.getNumArguments()) != states + scanInputs)
    return emitOpError("body takes ")
           << body.getNumArguments() << " arguments, expected "
           << states + scanInputs;
  auto yield = getYield(getBody());
  if (!yield || yield.getValues().size() != getNumResults())
    return emitOpError("body must yield one value per result");
  if (int64_t(getNumResults()) < states)
    return emitOpError("has fewer results than states");
  auto checkLength = [&](std::optional<ArrayRef<int64_t>> attr, int64_t n,
                         StringRef name) -> LogicalResult {
    if (attr && int64_t(attr->size()) != n)
      return emitOpError(name)
             << " has " << attr->size() << " entries, expected " << n;
    return success();
  };
  int64_t scanOutputs = getNumResults() - states;
  return success(succeeded(checkLength(getScanInputAxes(), scanInputs,
                                       "scan_input_axes")) &&
                 succeeded(checkLength(getScanInputDirections(), scanInputs,
                                       "scan_input_directions")) &&
                 succeeded(checkLength(getScanOutputAxes(), scanOutputs,
                                       "scan_output_axes")) &&
                 succeeded(checkLength(getScanOutputDirections(), scanOutputs,
                                       "scan_output_directions")));
}
