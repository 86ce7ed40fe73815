//===- GatherSlices.cpp - concats of slices as one gather on GPUs ---------===//
//
// strata-gather-slices (GPU targets, before the partitioner): a concat whose
// operands are all slices of one tensor along the concat's axis becomes one
// graph.gather of that tensor with the concatenated indices. torch.roll
// exports so (Slice(x, s..n), Slice(x, 0..s), Concat: Swin's shifted
// windows, twice per block), and so do reversals and rotations written with
// slices.
//
// Why: on the GPU a kernel of several data-movement ops that the row
// analysis cannot split (slices, then a concat) runs as one thread block for
// the whole tensor (docs/gpu.md, "Partitioning for the GPU"); Swin-T at
// batch 32 spent most of its time in such kernels. A gather is one
// all-parallel op, which the GPU mapping spreads over the grid, and
// elementwise ops after it fuse into it (the residual add after Swin's roll
// back). The rewrite is exact: every output element reads the element the
// slices and the concat would have copied.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

namespace strata {
#define GEN_PASS_DEF_GATHERSLICESPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata;
namespace graph = strata::graph;

namespace {

/// The constant integers of `v` (absent: `fallback`), or nullopt.
std::optional<SmallVector<int64_t>> ints(Value v,
                                         SmallVector<int64_t> fallback) {
  if (!v)
    return fallback;
  SmallVector<int64_t> values;
  if (failed(graph::getConstantIntValues(v, values)))
    return std::nullopt;
  return values;
}

/// The indices along `axis` of `data` that `slice` keeps, when it is a
/// slice of `data` along `axis` alone with step 1 and constant bounds.
std::optional<SmallVector<int64_t>> keptIndices(graph::SliceOp slice,
                                                Value data, int64_t axis) {
  auto in = dyn_cast<RankedTensorType>(data.getType());
  auto out = dyn_cast<RankedTensorType>(slice.getType());
  if (slice.getData() != data || !in || !out || !in.hasStaticShape() ||
      !out.hasStaticShape())
    return std::nullopt;
  auto starts = ints(slice.getStarts(), {});
  auto axes = ints(slice.getAxes(), {0});
  auto steps = ints(slice.getSteps(), {1});
  if (!starts || !axes || !steps || starts->size() != 1 || axes->size() != 1 ||
      steps->size() != 1 || (*steps)[0] != 1 ||
      graph::normalizeAxis((*axes)[0], in.getRank()) != axis)
    return std::nullopt;
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != axis && in.getDimSize(d) != out.getDimSize(d))
      return std::nullopt;
  // ONNX clamps the start to [0, n]; the result's extent is the count.
  int64_t n = in.getDimSize(axis), start = (*starts)[0];
  if (start < 0)
    start += n;
  start = std::clamp<int64_t>(start, 0, n);
  int64_t count = out.getDimSize(axis);
  if (start + count > n)
    return std::nullopt;
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < count; ++i)
    kept.push_back(start + i);
  return kept;
}

/// Rewrites `concat` into a gather when its operands allow; true if it did.
bool gatherSlices(graph::ConcatOp concat) {
  auto type = dyn_cast<RankedTensorType>(concat.getType());
  if (!type || !type.hasStaticShape() || concat.getInputs().size() < 2)
    return false;
  std::optional<int64_t> axis =
      graph::normalizeAxis(int64_t(concat.getAxis()), type.getRank());
  auto first = concat.getInputs().front().getDefiningOp<graph::SliceOp>();
  if (!axis || !first)
    return false;
  Value data = first.getData();
  SmallVector<int64_t> indices;
  for (Value input : concat.getInputs()) {
    auto slice = input.getDefiningOp<graph::SliceOp>();
    std::optional<SmallVector<int64_t>> kept =
        slice ? keptIndices(slice, data, *axis) : std::nullopt;
    if (!kept)
      return false;
    indices.append(kept->begin(), kept->end());
  }
  OpBuilder b(concat);
  auto indexType =
      RankedTensorType::get({int64_t(indices.size())}, b.getI64Type());
  Value constant = graph::ConstantOp::create(
      b, concat.getLoc(),
      cast<ElementsAttr>(DenseElementsAttr::get(indexType, ArrayRef(indices))));
  auto gather = graph::GatherOp::create(b, concat.getLoc(), type, data,
                                        constant, b.getI64IntegerAttr(*axis));
  SmallVector<Operation *> slices;
  for (Value input : concat.getInputs())
    slices.push_back(input.getDefiningOp());
  concat.getOutput().replaceAllUsesWith(gather.getOutput());
  concat.erase();
  for (Operation *slice : slices)
    if (slice->use_empty())
      slice->erase();
  return true;
}

struct GatherSlicesPass : strata::impl::GatherSlicesPassBase<GatherSlicesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<graph::ConcatOp> concats;
    getOperation().walk([&](graph::ConcatOp op) { concats.push_back(op); });
    for (graph::ConcatOp concat : concats)
      gatherSlices(concat);
  }
};

} // namespace
