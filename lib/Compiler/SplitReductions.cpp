//===- SplitReductions.cpp - long column reductions in stages on GPUs ----===//
//
// strata-split-reductions (GPU targets, before the partitioner): a sum,
// mean, max or min over axes that the last axis follows (a column
// reduction: a squeeze-and-excitation's or a classifier's mean over the
// points of [N, P, C], a batch statistic) whose reduced extent R is long
// becomes a chain of reductions over chunks of L consecutive rows:
//
//   [Pre, R, Post] -> view [Pre, R/L, L, Post] -> reduce axis 2
//                  -> [Pre, R/L, Post] -> ... -> reduce axis 1 -> [Pre, Post]
//
// Why: the GPU mapping runs a reduction kernel with one thread per output
// point, its reduced elements in a loop, or, with fewer points than a
// block has threads, one block for the whole kernel with a warp per point
// (docs/gpu.md, "Mapping kernels"). With few points and a long R both are
// slow: EfficientNet-B0's squeeze-and-excitation means over 112x112 points
// of 32 channels were one block of 256 threads for 400K elements (batch 1),
// or 1,024 threads looping 12,544 times each (batch 32). Each stage here
// has R/L times the points of the last and loops L times, so the first
// stages spread over the grid and the last is short.
//
// Each stage is exact for max and min; a sum or mean of equal chunks is the
// sum or mean of their sums or means (a mean's chunks all hold L rows).
// Partial sums and means of 16-bit floats are kept in f32: the input is
// widened in the first stage's kernel and the result narrowed after the
// last (a max or min is exact in its own type).
// Only static shapes whose R has a divisor in [kMinChunk, kMaxChunk] are
// split; a chunk near kChunk rows is preferred.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

#include <cmath>

namespace strata {
#define GEN_PASS_DEF_SPLITREDUCTIONSPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata;
namespace graph = strata::graph;

namespace {

/// Reduced extents from this long on are split.
constexpr int64_t kMinSplitExtent = 256;
/// The rows each stage reduces: a divisor of the extent, as near kChunk as
/// one lies within [kMinChunk, kMaxChunk].
constexpr int64_t kChunk = 16;
constexpr int64_t kMinChunk = 8;
constexpr int64_t kMaxChunk = 64;

/// The chunk for reduced extent `extent`, or 0 where none divides it.
int64_t chunkFor(int64_t extent) {
  int64_t best = 0;
  double bestDistance = 0;
  for (int64_t d = kMinChunk; d <= kMaxChunk; ++d) {
    if (extent % d != 0)
      continue;
    double distance = std::abs(std::log(double(d) / double(kChunk)));
    if (!best || distance < bestDistance) {
      best = d;
      bestDistance = distance;
    }
  }
  return best;
}

/// The reduction `op`'s axes when it reduces one contiguous run of axes of
/// a static float input that the last axis follows; empty otherwise.
SmallVector<int64_t> columnAxes(Operation *op) {
  SmallVector<int64_t> axes = columnReductionAxes(op);
  if (axes.empty())
    return {};
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  if (!input.hasStaticShape() || !isa<FloatType>(input.getElementType()) ||
      axes.back() - axes.front() + 1 != int64_t(axes.size()))
    return {};
  return axes;
}

/// `op` (reduce_sum, _mean, _max or _min) of `input` over `axis`, without
/// keeping it, into `type`.
Value reduceLike(OpBuilder &b, Operation *op, Value input, int64_t axis,
                 RankedTensorType type) {
  Location loc = op->getLoc();
  DenseI64ArrayAttr axes = b.getDenseI64ArrayAttr({axis});
  IntegerAttr no = b.getI64IntegerAttr(0);
  if (isa<graph::ReduceSumOp>(op))
    return graph::ReduceSumOp::create(b, loc, type, input, axes, no, no);
  if (isa<graph::ReduceMeanOp>(op))
    return graph::ReduceMeanOp::create(b, loc, type, input, axes, no, no);
  if (isa<graph::ReduceMaxOp>(op))
    return graph::ReduceMaxOp::create(b, loc, type, input, axes, no, no);
  return graph::ReduceMinOp::create(b, loc, type, input, axes, no, no);
}

/// Whether `value` is computed from a gather through elementwise ops and
/// transposes: a depthwise or grouped convolution's windows times its
/// weight (ConvToGemm.cpp). Their sum is one kernel in which each thread
/// reads its point's windows in place (Partition.cpp, becomesOneReduction);
/// split, the products would be written out whole for the first stage.
bool sumsGatheredWindows(Value value) {
  SmallVector<Value> work = {value};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<graph::GatherOp>(def))
      return true;
    if (isa<graph::TransposeOp>(def) || strata::isLowerableElementwise(def))
      for (Value operand : def->getOperands())
        work.push_back(operand);
  }
  return false;
}

/// Splits `op` (module comment); whether it did.
bool split(Operation *op) {
  SmallVector<int64_t> axes = columnAxes(op);
  if (axes.empty() || sumsGatheredWindows(op->getOperand(0)))
    return false;
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  ArrayRef<int64_t> shape = input.getShape();
  int64_t pre = 1, extent = 1, post = 1;
  for (int64_t i = 0; i < input.getRank(); ++i) {
    if (i < axes.front())
      pre *= shape[i];
    else if (i <= axes.back())
      extent *= shape[i];
    else
      post *= shape[i];
  }
  int64_t chunk = chunkFor(extent);
  if (extent < kMinSplitExtent || !chunk)
    return false;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type element = input.getElementType();
  // Sums and means of 16-bit floats keep their partial results in f32; a
  // largest or smallest element is exact in any type.
  bool exact = isa<graph::ReduceMaxOp, graph::ReduceMinOp>(op);
  Type wide =
      !exact && element.getIntOrFloatBitWidth() < 32 ? b.getF32Type() : element;
  Value value = op->getOperand(0);
  bool first = true;
  while (extent >= kMinSplitExtent && (chunk = chunkFor(extent))) {
    value = viewAs(b, loc, value, {pre, extent / chunk, chunk, post});
    // The widening cast right before the first stage's reduction, with no
    // view between them, so that the partitioner fuses it into that
    // stage's kernel rather than writing the widened input out.
    if (first && wide != element)
      value = graph::CastOp::create(
          b, loc,
          RankedTensorType::get({pre, extent / chunk, chunk, post}, wide),
          value);
    first = false;
    extent /= chunk;
    value = reduceLike(b, op, value, 2,
                       RankedTensorType::get({pre, extent, post}, wide));
  }
  value = reduceLike(b, op, value, 1, RankedTensorType::get({pre, post}, wide));
  if (wide != element)
    value = graph::CastOp::create(
        b, loc, RankedTensorType::get({pre, post}, element), value);
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  value = viewAs(b, loc, value, result.getShape());
  op->getResult(0).replaceAllUsesWith(value);
  op->erase();
  return true;
}

struct SplitReductionsPass
    : strata::impl::SplitReductionsPassBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> reductions;
    getOperation().walk([&](Operation *op) {
      if (isa<graph::ReduceSumOp, graph::ReduceMeanOp, graph::ReduceMaxOp,
              graph::ReduceMinOp>(op))
        reductions.push_back(op);
    });
    for (Operation *op : reductions)
      split(op);
  }
};

} // namespace
