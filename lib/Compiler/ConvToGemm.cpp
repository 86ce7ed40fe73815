//===- ConvToGemm.cpp - convolutions as matrix products on the GPU -------===//
//
// A generated convolution computes each output point in one thread over a
// serial loop. Worse, the partitioner fuses a chain of such convolutions
// (conv -> relu -> conv -> add -> ...) into one kernel whose CUDA blocks are
// the batch's images, so a whole CNN ran in as many blocks as it had images:
// a ResNet-50 took seconds. This pass rewrites convolutions before
// partitioning into ops the GPU runs well, so that decisions follow from
// the IR for any CNN.
//
// Every rewritten convolution computes channels-last (NHWC): its input is
// transposed to [N, I..., C], its result made as [N, O..., F] and transposed
// back to [N, F, O...]. Channels innermost, a convolution is one matrix
// product over all images' points with the channels as its depth, and the
// windows' channels are contiguous in memory:
//
//   - with `cudnn` (the cuda target's default with libraries on), a
//     convolution of
//     16-bit floats that reads windows (any kernel but a 1x1 at stride 1
//     without padding), group 1 over whole 16-byte vectors of channels
//     (not an RGB stem) or grouped but not depthwise:
//     graph.conv_channels_last on [N, I..., C] and the weight permuted to
//     [F, K..., C/g] at compile time, cuDNN's "cudnn.conv" step
//     (ConvRewriter::cudnnTakes says why those); the decisions file's
//     "algorithm" entry "cudnn" gives any convolution cuDNN's step runs
//     to it, "gemm" keeps one in the forms below;
//   - group 1 (any kernel, stride, dilation, padding; 1-3 spatial axes):
//     the columns [N * P, KK * C] times the weight read as [F, KK * C]
//     (transB) with the bias: one product (cuBLASLt; the generated GEMM
//     kernel with --no-libraries) on tensor cores, the bias in its epilogue.
//     A 1x1 kernel at stride 1 without padding reads every input point in
//     place: the columns are the input itself, only reshaped. Otherwise one
//     gather reads every output point's windows from the input in place
//     ([N, P, KK, C], with a constant index over the flattened spatial axes;
//     a constant 0/1 mask zeroes what falls in the padding): the gather and
//     the mask are one all-parallel kernel, which writes the columns.
//     The weight becomes [F, K..., C] at compile time (a constant transpose).
//   - depthwise (group = C = F): the same windows times the weight per
//     offset and channel, summed over the offsets: one loop nest with a
//     short reduction, each output point computed by one thread, consecutive
//     threads on consecutive channels (contiguous reads).
//   - other grouped convolutions (g groups of Cg channels): the depthwise
//     form with each group's channels summed too, the weight broadcast per
//     group's filters; each thread computes whole output points.
//   - convolutions whose index would exceed kMaxIndexEntries, and grouped
//     ones summing more than kMaxGroupedReduction elements per point, stay
//     convolutions (generated).
//
// The transposes then cancel between convolutions: after the rewrites, a
// transpose to channels-first or to channels-last sinks through the
// elementwise ops after it (ReLU, a residual Add, a bias, SiLU, a
// squeeze-excite scale) as long as their other operands are transposed the
// same way, constants, or small; two transposes in a row compose, and an
// identity disappears. A CNN then stays channels-last from its first
// convolution to its pooling head, and the model's own permutes to and from
// channels-last (ConvNeXt's, Swin's) cancel with the convolutions' too. Only
// those two permutations sink: an attention's [0, 2, 1, 3] head split stays
// where the attention matcher looks for it.
//
// Every op created carries the convolution's location, so kernel names,
// `strata explain` and decisions files still name the ONNX node.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Decisions.h"
#include "Passes.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"

#include <cstring>

namespace strata {
#define GEN_PASS_DEF_CONVTOGEMMPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
using strata::viewAs;
namespace graph = strata::graph;

Value strata::viewAs(OpBuilder &b, Location loc, Value v,
                     ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  auto shapeType =
      RankedTensorType::get({int64_t(shape.size())}, b.getIntegerType(64));
  Value target = graph::ConstantOp::create(
      b, loc, cast<ElementsAttr>(DenseElementsAttr::get(shapeType, shape)));
  return graph::ReshapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v, target,
      b.getI64IntegerAttr(0));
}

namespace {

/// Kernels larger than this many offsets stay convolutions when depthwise
/// (each thread sums a point's offsets serially).
constexpr int64_t kMaxDepthwiseOffsets = 81;
/// The most elements (kernel offsets x channels per group) that a thread of
/// a grouped convolution sums for one output point (grouped): a 3x3 kernel
/// over 512 channels per group.
constexpr int64_t kMaxGroupedReduction = 9 * 512;
/// The output points per image from which a 1x1 convolution that stays
/// channels-first (below) is one batched product per image rather than
/// im2col's single product over all images' points. Each image's product
/// is [F, C] . [C, P]: with fewer than this many columns it is narrower than
/// cuBLASLt's tiles (on the H200, bench/RESULTS.md: slower at 49 points,
/// faster from 196). With one image both forms multiply the same matrices.
constexpr int64_t kMinPointwisePoints = 128;
/// Output points x kernel offsets above which a convolution keeps its form:
/// the gather's index (8 bytes an entry) and mask would outweigh the model
/// (1M entries: a 7x7 stem at 224x224 has 615K).
constexpr int64_t kMaxIndexEntries = 1 << 20;

/// Channels-last back to channels-first: [0, rank - 1, 1, ..., rank - 2].
SmallVector<int64_t> channelsFirst(int64_t rank) {
  return invertPermutationVector(strata::channelsLastOrder(rank));
}

/// `elements` transposed by `perm` (result dimension i is source dimension
/// perm[i]), moved as raw bytes; null for splats and element types that are
/// not whole bytes.
DenseElementsAttr permuteElements(DenseElementsAttr elements,
                                  ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(elements.getType());
  Type element = type.getElementType();
  if (elements.isSplat() || !element.isIntOrFloat() ||
      element.getIntOrFloatBitWidth() % 8 != 0 || !type.hasStaticShape())
    return {};
  int64_t rank = type.getRank();
  size_t width = element.getIntOrFloatBitWidth() / 8;
  SmallVector<int64_t> shape, strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * type.getDimSize(i + 1);
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  ArrayRef<char> from = elements.getRawData();
  std::vector<char> to(from.size());
  SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    int64_t source = 0;
    for (int64_t d = 0; d < rank; ++d)
      source += index[d] * strides[perm[d]];
    std::memcpy(&to[i * width], &from[source * width], width);
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == shape[d]; --d)
      index[d] = 0;
  }
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get(shape, element), to);
}

/// Collects the ops a rewrite creates, to fold them afterwards (the
/// weights' reshapes are constants).
struct Created : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  SmallVector<Operation *> ops;
  /// The convolutions' products [N * P, F] channels-last (and the sums of
  /// depthwise and grouped ones), and the epilogue ops moved next to them
  /// (HoistEpilogueAboveView): the values whose views the cleanup composes.
  llvm::DenseSet<Operation *> products;
  /// Of those, the sums and the ops moved next to them: a view of one may
  /// have several readers (a SiLU's sigmoid and multiply), which all move
  /// above it into the sum's kernel. A product's view keeps one reader, the
  /// op that cuBLASLt's epilogue may take.
  llvm::DenseSet<Operation *> sums;
};

/// Whether a convolution may become cuDNN's: never (the pass's option is
/// off, or a decisions file keeps it off), where cudnnTakes says so (the
/// default with the option on), or whatever its shape (the decisions
/// file's "cudnn").
enum class CudnnChoice { Never, Default, Forced };

/// Why cuDNN's step cannot run `conv` ("" when it can): it takes f32, f16
/// and bf16 over 1 to 3 spatial axes, on static shapes (the runtime's
/// cudnn.conv contract, runtime/lib/cuda/Cudnn.h), and not depthwise
/// convolutions: for a bf16 one (64 groups of one channel) cuDNN 9.14 on
/// the H100 had no engine ("leading_dim_in_bits_in % 32 != 0": a group's
/// 16 bits of channels), so the session could not be made
/// (bench/RESULTS.md, 2026-12-07 22:30).
static std::string cudnnCannot(graph::ConvOp conv) {
  auto x = dyn_cast<RankedTensorType>(conv.getInput().getType());
  auto w = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  auto y = dyn_cast<RankedTensorType>(conv.getType());
  if (!x || !w || !y || !x.hasStaticShape() || !w.hasStaticShape() ||
      !y.hasStaticShape())
    return "cuDNN's step takes static shapes";
  if (x.getRank() < 3 || x.getRank() > 5)
    return "cuDNN's step takes 1 to 3 spatial axes";
  if (!isa<Float32Type, Float16Type, BFloat16Type>(x.getElementType()))
    return "cuDNN's step computes f32, f16 or bf16";
  if (conv.getGroup() > 1 && w.getDimSize(1) == 1)
    return "cuDNN's step does not take depthwise convolutions (one input "
           "channel a group: cuDNN has no engine for them); they stay "
           "strata's sums";
  return "";
}

class ConvRewriter {
public:
  /// `op` is a graph.conv, max_pool, global_average_pool or global_max_pool.
  /// `channelsFirst`: the op's neighbours stay channels-first (layoutOf).
  /// `cudnn`: whether the convolution may become cuDNN's.
  ConvRewriter(Operation *op, Created &created, bool channelsFirst = false,
               CudnnChoice cudnn = CudnnChoice::Never)
      : target(op), input(op->getOperand(0)), created(created),
        builder(op, &created), loc(op->getLoc()),
        keepChannelsFirst(channelsFirst), cudnnChoice(cudnn) {}

  /// Rewrites the op; false when it keeps its form.
  bool run() {
    if (auto conv = dyn_cast<graph::ConvOp>(target))
      return runConv(conv);
    if (auto pool = dyn_cast<graph::MaxPoolOp>(target))
      return runMaxPool(pool);
    if (isa<graph::GlobalAveragePoolOp, graph::GlobalMaxPoolOp>(target))
      return globalPool();
    return false;
  }

private:
  /// The sizes every form reads: input [N, C, I...], result [N, F, O...].
  bool setShapes(RankedTensorType x, RankedTensorType y) {
    if (!x || !y || !x.hasStaticShape() || !y.hasStaticShape() ||
        x.getRank() < 3 || x.getRank() > 5 ||
        !isa<FloatType>(x.getElementType()))
      return false;
    element = x.getElementType();
    spatial = x.getRank() - 2;
    batch = x.getDimSize(0);
    channels = x.getDimSize(1);
    filters = y.getDimSize(1);
    for (int64_t i = 0; i < spatial; ++i)
      out.push_back(y.getDimSize(2 + i));
    points = ShapedType::getNumElements(out);
    return true;
  }

  /// The windows' attributes; false when the index would be too large.
  /// `bounded`: the windows are gathered (an index constant is made).
  bool setWindows(ArrayRef<int64_t> kernelShape,
                  std::optional<ArrayRef<int64_t>> stridesAttr,
                  std::optional<ArrayRef<int64_t>> dilationsAttr,
                  std::optional<ArrayRef<int64_t>> padsAttr,
                  bool bounded = true) {
    kernel.assign(kernelShape.begin(), kernelShape.end());
    if (int64_t(kernel.size()) != spatial)
      return false;
    offsetCount = ShapedType::getNumElements(kernel);
    // The gather's index and mask grow with output points x kernel offsets;
    // past the bound they would outweigh the model.
    if (bounded && points * offsetCount > kMaxIndexEntries)
      return false;
    auto attr = [&](std::optional<ArrayRef<int64_t>> a, int64_t size,
                    int64_t fill) {
      SmallVector<int64_t> v(a ? *a : ArrayRef<int64_t>{});
      if (v.empty())
        v.assign(size, fill);
      return v;
    };
    strides = attr(stridesAttr, spatial, 1);
    dilations = attr(dilationsAttr, spatial, 1);
    pads = attr(padsAttr, 2 * spatial, 0);
    return int64_t(strides.size()) == spatial &&
           int64_t(dilations.size()) == spatial &&
           int64_t(pads.size()) == 2 * spatial;
  }

  bool runConv(graph::ConvOp conv) {
    auto x = dyn_cast<RankedTensorType>(conv.getInput().getType());
    auto w = dyn_cast<RankedTensorType>(conv.getWeight().getType());
    auto y = dyn_cast<RankedTensorType>(conv.getType());
    if (!w || !w.hasStaticShape() || !setShapes(x, y) ||
        !setWindows(w.getShape().drop_front(2), conv.getStrides(),
                    conv.getDilations(), conv.getPads(), /*bounded=*/false))
      return false;
    int64_t group = conv.getGroup();
    if (cudnnChoice == CudnnChoice::Forced ||
        (cudnnChoice == CudnnChoice::Default && cudnnTakes(group)))
      return channelsLastConv(conv);
    if (points * offsetCount > kMaxIndexEntries)
      return false;
    if (group == 1 && keepChannelsFirst && readsInPlace() &&
        (batch == 1 || points >= kMinPointwisePoints))
      return pointwise(conv);
    if (group == 1)
      return im2col(conv);
    if (group == channels && filters == channels && w.getDimSize(1) == 1 &&
        offsetCount <= kMaxDepthwiseOffsets)
      return depthwise(conv);
    if (group > 1 && channels % group == 0 && filters % group == 0 &&
        offsetCount * (channels / group) <= kMaxGroupedReduction)
      return grouped(conv, group);
    return false;
  }

  /// The largest of each window: its offsets gathered channels-last as for
  /// a depthwise convolution, the padding's as -inf, reduced by max. One
  /// loop nest, each thread one output point (a ResNet's stem pooling).
  bool runMaxPool(graph::MaxPoolOp pool) {
    if (!pool.getIndices().use_empty() || pool.getAutoPad() != "NOTSET" ||
        pool.getStorageOrder() != 0 ||
        !setShapes(dyn_cast<RankedTensorType>(pool.getInput().getType()),
                   dyn_cast<RankedTensorType>(pool.getOutput().getType())) ||
        !setWindows(pool.getKernelShape(), pool.getStrides(),
                    pool.getDilations(), pool.getPads()) ||
        offsetCount > kMaxDepthwiseOffsets)
      return false;
    Value windows =
        gatherWindows(/*padWithLowest=*/true, /*splitOffsets=*/true);
    Value largest = graph::ReduceMaxOp::create(
        builder, loc, tensor({batch, points, channels}), windows,
        builder.getDenseI64ArrayAttr(offsetAxes()),
        builder.getI64IntegerAttr(0), builder.getI64IntegerAttr(0));
    return replaceChannelsLast(largest);
  }

  /// The mean (or largest) over all spatial points, read channels-last:
  /// [N, C], viewed as [N, C, 1...]. A reduction over the points with the
  /// channels innermost, each thread one output channel.
  bool globalPool() {
    auto x = dyn_cast<RankedTensorType>(input.getType());
    auto y = dyn_cast<RankedTensorType>(target->getResult(0).getType());
    if (!setShapes(x, y))
      return false;
    Value flat = channelsLastInput();
    auto type = tensor({batch, channels});
    auto axes = builder.getDenseI64ArrayAttr({1});
    Value reduced =
        isa<graph::GlobalAveragePoolOp>(target)
            ? graph::ReduceMeanOp::create(builder, loc, type, flat, axes,
                                          builder.getI64IntegerAttr(0),
                                          builder.getI64IntegerAttr(0))
                  .getResult()
            : graph::ReduceMaxOp::create(builder, loc, type, flat, axes,
                                         builder.getI64IntegerAttr(0),
                                         builder.getI64IntegerAttr(0))
                  .getResult();
    target->getResult(0).replaceAllUsesWith(reshape(reduced, y.getShape()));
    target->erase();
    return true;
  }

  Operation *target;
  Value input;
  Created &created;
  OpBuilder builder;
  Location loc;
  bool keepChannelsFirst;
  CudnnChoice cudnnChoice;
  Type element;
  int64_t spatial = 0, batch = 0, channels = 0, filters = 0;
  SmallVector<int64_t> kernel, out, strides, dilations, pads;
  /// Output points (prod(out)) and kernel offsets (prod(kernel)).
  int64_t points = 0, offsetCount = 0;

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, element);
  }

  /// The axes of the offsets in split windows [N, P, K0, K1, .., C].
  SmallVector<int64_t> offsetAxes() const {
    return llvm::to_vector(llvm::seq<int64_t>(2, 2 + spatial));
  }

  /// Every kernel offset, row-major.
  SmallVector<SmallVector<int64_t>> offsets() {
    SmallVector<SmallVector<int64_t>> all = {{}};
    for (int64_t k : kernel) {
      SmallVector<SmallVector<int64_t>> next;
      for (auto &prefix : all)
        for (int64_t i = 0; i < k; ++i) {
          next.push_back(prefix);
          next.back().push_back(i);
        }
      all = std::move(next);
    }
    return all;
  }

  Value transpose(Value v, ArrayRef<int64_t> perm) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape = applyPermutation(type.getShape(), perm);
    // A permutation that keeps the order of the dimensions larger than 1
    // (a 1x1 kernel's weight to [F, 1, 1, C]) moves no element: a view.
    SmallVector<int64_t> moved;
    for (int64_t p : perm)
      if (type.getDimSize(p) != 1)
        moved.push_back(p);
    if (llvm::is_sorted(moved))
      return reshape(v, shape);
    // A constant (a weight), or a view of one (a grouped convolution's
    // weight split per group), is permuted here, once: the graph's folders
    // leave tensors of more than 64K elements alone (TensorOps.cpp), and a
    // transpose left to them would reach the kernel, which would permute
    // the weight on every run.
    DenseElementsAttr weights;
    if (!matchPattern(v, m_Constant(&weights)))
      if (auto view = v.getDefiningOp<graph::ReshapeOp>();
          view && type.hasStaticShape() &&
          matchPattern(view.getData(), m_Constant(&weights)))
        weights = weights.reshape(type);
    if (weights)
      if (DenseElementsAttr permuted = permuteElements(weights, perm))
        return graph::ConstantOp::create(builder, loc,
                                         cast<ElementsAttr>(permuted));
    return graph::TransposeOp::create(
        builder, loc, RankedTensorType::get(shape, type.getElementType()), v,
        builder.getDenseI64ArrayAttr(perm));
  }

  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return viewAs(builder, loc, v, shape);
  }

  /// Input points per output point and kernel offset, over the flattened
  /// spatial axes: index [P, KK] (0 where the offset falls in the padding)
  /// and whether it is inside the input (mask [P, KK], 1 or 0).
  void windows(SmallVectorImpl<int64_t> &index, SmallVectorImpl<double> &mask) {
    auto x = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> in(x.getShape().drop_front(2));
    SmallVector<SmallVector<int64_t>> offs = offsets();
    SmallVector<int64_t> at(spatial, 0);
    for (int64_t p = 0; p < points; ++p) {
      for (int64_t i = spatial - 1, rest = p; i >= 0; --i) {
        at[i] = rest % out[i];
        rest /= out[i];
      }
      for (auto &offset : offs) {
        int64_t flat = 0;
        bool inside = true;
        for (int64_t i = 0; i < spatial; ++i) {
          int64_t pos = at[i] * strides[i] - pads[i] + offset[i] * dilations[i];
          inside &= pos >= 0 && pos < in[i];
          flat = flat * in[i] + pos;
        }
        index.push_back(inside ? flat : 0);
        mask.push_back(inside ? 1.0 : 0.0);
      }
    }
  }

  /// What a windows constant holds (`kind`: "index", "mask" or "inside"),
  /// for strata-gpu-window-indices, which computes it in the kernel instead
  /// of loading it (GpuWindowIndices.cpp).
  void markWindows(Value constant, StringRef kind) {
    auto x = cast<RankedTensorType>(input.getType());
    MLIRContext *context = builder.getContext();
    auto ints = [&](ArrayRef<int64_t> v) {
      return DenseI64ArrayAttr::get(context, v);
    };
    SmallVector<NamedAttribute> entries = {
        builder.getNamedAttr("kind", builder.getStringAttr(kind)),
        builder.getNamedAttr("input", ints(x.getShape().drop_front(2))),
        builder.getNamedAttr("output", ints(out)),
        builder.getNamedAttr("kernel", ints(kernel)),
        builder.getNamedAttr("strides", ints(strides)),
        builder.getNamedAttr("dilations", ints(dilations)),
        builder.getNamedAttr("pads", ints(pads))};
    strata::kernel::set<strata::kernel::Windows>(
        constant.getDefiningOp(), DictionaryAttr::get(context, entries));
  }

  /// The input channels-last, its spatial axes flattened: [N, Pin, C].
  Value channelsLastInput() {
    auto x = cast<RankedTensorType>(input.getType());
    Value last = transpose(input, strata::channelsLastOrder(spatial + 2));
    return reshape(
        last, {batch, ShapedType::getNumElements(x.getShape().drop_front(2)),
               channels});
  }

  /// The windows of every output point, gathered from the channels-last
  /// input: [N, P, KK, C], zero where a window reaches into the padding. One
  /// gather (and a multiply by the mask when there is padding) reads the
  /// input in place: the ops fuse into one loop nest spread over the whole
  /// GPU, consecutive threads on consecutive channels. With `splitOffsets`
  /// the offsets keep one axis per kernel dimension, [N, P, K0, K1, .., C]:
  /// a sum over them (a depthwise convolution, a pooling) is then one loop
  /// per kernel dimension, whose indices are the offset's coordinates as
  /// they are (strata-gpu-window-indices then divides nothing per tap, and
  /// LLVM unrolls the short innermost loop).
  Value gatherWindows(bool padWithLowest = false, bool splitOffsets = false,
                      ArrayRef<int64_t> channelShape = {}) {
    Value flat = channelsLastInput();
    SmallVector<int64_t> channelDims(channelShape);
    if (channelDims.empty())
      channelDims.push_back(channels);
    else {
      SmallVector<int64_t> viewShape = {
          batch, cast<RankedTensorType>(flat.getType()).getDimSize(1)};
      viewShape.append(channelDims);
      flat = reshape(flat, viewShape);
    }
    SmallVector<int64_t> index;
    SmallVector<double> mask;
    windows(index, mask);
    SmallVector<int64_t> offsetShape = {offsetCount};
    if (splitOffsets)
      offsetShape.assign(kernel.begin(), kernel.end());
    SmallVector<int64_t> shape = {points};
    shape.append(offsetShape);
    SmallVector<int64_t> gatheredShape = {batch, points};
    gatheredShape.append(offsetShape);
    gatheredShape.append(channelDims);
    SmallVector<int64_t> maskShape = shape;
    maskShape.append(channelDims.size(), 1);
    auto indexType = RankedTensorType::get(shape, builder.getI64Type());
    Value indices =
        graph::ConstantOp::create(builder, loc,
                                  cast<ElementsAttr>(DenseElementsAttr::get(
                                      indexType, ArrayRef<int64_t>(index))));
    markWindows(indices, "index");
    Value gathered =
        graph::GatherOp::create(builder, loc, tensor(gatheredShape), flat,
                                indices, builder.getI64IntegerAttr(1));
    if (llvm::all_of(mask, [](double m) { return m == 1.0; }))
      return gathered;
    if (padWithLowest) {
      // The padding never wins a max: where(inside, x, -inf).
      SmallVector<bool> inside;
      for (double m : mask)
        inside.push_back(m == 1.0);
      Value condition = graph::ConstantOp::create(
          builder, loc,
          cast<ElementsAttr>(DenseElementsAttr::get(
              RankedTensorType::get(maskShape, builder.getI1Type()),
              ArrayRef<bool>(inside))));
      markWindows(condition, "inside");
      Value lowest = graph::ConstantOp::create(
          builder, loc,
          cast<ElementsAttr>(DenseElementsAttr::get(
              RankedTensorType::get({1}, element),
              APFloat::getInf(cast<FloatType>(element).getFloatSemantics(),
                              /*Negative=*/true))));
      return graph::WhereOp::create(builder, loc, gathered.getType(), condition,
                                    gathered, lowest);
    }
    auto maskType = RankedTensorType::get(maskShape, element);
    SmallVector<APFloat> values;
    for (double m : mask) {
      APFloat v(m);
      bool lost;
      v.convert(cast<FloatType>(element).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    Value maskValue = graph::ConstantOp::create(
        builder, loc,
        cast<ElementsAttr>(DenseElementsAttr::get(maskType, values)));
    markWindows(maskValue, "mask");
    return graph::MulOp::create(builder, loc, gathered.getType(), gathered,
                                maskValue);
  }

  /// Whether each output point reads its own input point and nothing
  /// else: a 1x1 kernel at stride 1 without padding.
  bool readsInPlace() const {
    return offsetCount == 1 &&
           llvm::all_of(strides, [](int64_t s) { return s == 1; }) &&
           llvm::all_of(pads, [](int64_t p) { return p == 0; });
  }

  /// Whether cuDNN takes the convolution (docs/gpu.md, "Convolutions"):
  /// one of 16-bit floats that reads windows, group 1 or grouped. Those
  /// are where the generated forms pay: an im2col writes KK times the input
  /// as columns before its product, and a grouped sum runs on CUDA cores;
  /// cuDNN's implicit-GEMM kernels read the windows in place, on tensor
  /// cores. A 1x1 convolution at stride 1 reads its columns in place
  /// already and stays cuBLASLt's product (or the channels-first one);
  /// depthwise sums stay generated (one thread per output point, the input
  /// read in place, no product to put on tensor cores); f32 stays with
  /// cuBLASLt's full-fp32 product, as cuDNN may compute f32 in TF32.
  /// A network's first convolution over a few image channels (3: RGB)
  /// stays the im2col product too: cuDNN's tensor-core kernels read a
  /// pixel's channels in 16-byte vectors, and with 6 bytes a pixel its
  /// engines fall back to slow ones (ViT-B/16's 16x16 patches at batch 32:
  /// 356 us through cuDNN, the whole model 10% slower, bench/RESULTS.md
  /// 2026-12-07), while the im2col's columns are KK times as wide.
  bool cudnnTakes(int64_t group) const {
    if (!isa<Float16Type, BFloat16Type>(element))
      return false;
    if (group == 1)
      return !readsInPlace() &&
             (channels * element.getIntOrFloatBitWidth() / 8) % 16 == 0;
    return group < channels && channels % group == 0 && filters % group == 0;
  }

  /// The convolution as cuDNN's, channels-last: [N, I..., C] and the weight
  /// [F, K..., C/g] (permuted at compile time) in, [N, O..., F] out, the
  /// bias with it. The library matcher adds the ops after it that cuDNN
  /// fuses (Library.cpp, "cudnn.conv").
  bool channelsLastConv(graph::ConvOp conv) {
    SmallVector<int64_t> toLast = strata::channelsLastOrder(spatial + 2);
    Value x = transpose(input, toLast);
    Value weight = transpose(conv.getWeight(), toLast);
    SmallVector<int64_t> last = {batch};
    last.append(out.begin(), out.end());
    last.push_back(filters);
    Value result = graph::ConvChannelsLastOp::create(
        builder, loc, tensor(last), x, weight, conv.getBias(),
        builder.getDenseI64ArrayAttr(strides),
        builder.getDenseI64ArrayAttr(dilations),
        builder.getDenseI64ArrayAttr(pads),
        builder.getI64IntegerAttr(conv.getGroup()));
    return replaceChannelsLast(result);
  }

  /// A 1x1 convolution among channels-first neighbours is, per image, the
  /// product W [F, C] . X [C, P], [F, P] in NCHW order already: one batched
  /// product with the weight broadcast over the images, the bias added per
  /// filter after it. Against the channels-last product it moves no
  /// activation through a transpose (one before, one after), which costs
  /// more than the product's own reads when C and F are a few hundred.
  bool pointwise(graph::ConvOp conv) {
    Value x = reshape(input, {batch, channels, points});
    Value weight = reshape(conv.getWeight(), {filters, channels});
    Value flat = graph::MatMulOp::create(
        builder, loc, tensor({batch, filters, points}), weight, x);
    if (Value bias = conv.getBias())
      flat = graph::AddOp::create(builder, loc, flat.getType(), flat,
                                  reshape(bias, {filters, 1}));
    SmallVector<int64_t> shape = {batch, filters};
    shape.append(out.begin(), out.end());
    target->getResult(0).replaceAllUsesWith(reshape(flat, shape));
    target->erase();
    return true;
  }

  /// The columns [N * P, KK * C] times the weight read as [F, KK * C]
  /// (transB), with the bias: [N * P, F], channels-last.
  bool im2col(graph::ConvOp conv) {
    int64_t depth = offsetCount * channels;
    // A 1x1 kernel at stride 1 without padding: the input is the columns.
    Value cols = readsInPlace() ? channelsLastInput() : gatherWindows();
    cols = reshape(cols, {batch * points, depth});
    // [F, C, K...] -> [F, K..., C] -> [F, KK * C]: the columns' order. A
    // constant weight (the usual case) is transposed at compile time.
    Value weight = reshape(
        transpose(conv.getWeight(), strata::channelsLastOrder(spatial + 2)),
        {filters, depth});
    Value gemm = graph::GemmOp::create(
        builder, loc, tensor({batch * points, filters}), cols, weight,
        conv.getBias(), builder.getF32FloatAttr(1.0f),
        builder.getF32FloatAttr(1.0f), builder.getI64IntegerAttr(0),
        builder.getI64IntegerAttr(1));
    created.products.insert(gemm.getDefiningOp());
    return replaceChannelsLast(gemm);
  }

  bool depthwise(graph::ConvOp conv) {
    // sum over k of windows[n, p, k, c] * weight[k, c]: one product with the
    // weight broadcast over the batch and the points, then a sum over the
    // offsets. The gather, the mask and the product fuse into the sum's
    // loop nest (the partitioner keeps them one kernel, Partition.cpp), so
    // each GPU thread computes whole output points from the input in place,
    // as a direct depthwise convolution does; the windows are never
    // written to memory.
    Value windows = gatherWindows(/*padWithLowest=*/false,
                                  /*splitOffsets=*/true);
    SmallVector<int64_t> weightShape = {1, 1};
    weightShape.append(kernel.begin(), kernel.end());
    weightShape.push_back(channels);
    Value weight = reshape(
        transpose(reshape(conv.getWeight(), {channels, offsetCount}), {1, 0}),
        weightShape);
    Value terms =
        graph::MulOp::create(builder, loc, windows.getType(), windows, weight);
    Value sum = graph::ReduceSumOp::create(
        builder, loc, tensor({batch, points, channels}), terms,
        builder.getDenseI64ArrayAttr(offsetAxes()),
        builder.getI64IntegerAttr(0), builder.getI64IntegerAttr(0));
    // The bias is added by the kernel after it, with the ops that follow
    // the convolution (an activation, a residual).
    if (Value bias = conv.getBias())
      sum = graph::AddOp::create(builder, loc, sum.getType(), sum, bias);
    created.products.insert(sum.getDefiningOp());
    created.sums.insert(sum.getDefiningOp());
    return replaceChannelsLast(sum);
  }

  /// A grouped convolution (g groups of Cg input channels and Fg filters):
  /// sum over k and c of windows[n, p, k, g, c] * weight[k, c, g, f], the
  /// depthwise form with each group's channels reduced too. The windows are
  /// gathered as [N, P, K..., g, Cg, 1] and read as [N, P, K..., Cg, g, 1] (a
  /// transpose that the kernel stage folds into the product's reads), times
  /// the weight [K..., Cg, g, Fg] broadcast over the batch and the points,
  /// then summed over the offsets and Cg into [N, P, g, Fg], which is
  /// [N, P, F]. As for a depthwise convolution the gather, the mask and the
  /// product fuse into the sum's loop nest: each GPU thread computes whole
  /// output points, consecutive threads consecutive filters (the innermost
  /// loops, g and Fg, are parallel), and neither the windows nor the
  /// products are written. With Cg outside g, the threads of one offset and
  /// channel load consecutive weights (in [K..., g, Cg, Fg] they were Cg * Fg
  /// apart). ResNeXt's and RegNet's groups of 4 to 64 channels, which a
  /// generated convolution ran in one thread block.
  bool grouped(graph::ConvOp conv, int64_t group) {
    int64_t cg = channels / group, fg = filters / group;
    SmallVector<int64_t> channelShape = {group, cg, 1};
    Value windows = gatherWindows(/*padWithLowest=*/false,
                                  /*splitOffsets=*/true, channelShape);
    int64_t groupAxis = 2 + spatial;
    SmallVector<int64_t> swap =
        llvm::to_vector(llvm::seq<int64_t>(0, groupAxis));
    swap.append({groupAxis + 1, groupAxis, groupAxis + 2});
    windows = transpose(windows, swap);
    // [F, Cg, K...] = [g, Fg, Cg, K...] -> [K..., Cg, g, Fg], at compile
    // time for a constant weight.
    SmallVector<int64_t> split = {group, fg, cg};
    split.append(kernel.begin(), kernel.end());
    Value weightGroups = reshape(conv.getWeight(), split);
    SmallVector<int64_t> perm =
        llvm::to_vector(llvm::seq<int64_t>(3, 3 + spatial));
    perm.append({2, 0, 1});
    SmallVector<int64_t> weightShape = {1, 1};
    weightShape.append(kernel.begin(), kernel.end());
    weightShape.append({cg, group, fg});
    Value weight = reshape(transpose(weightGroups, perm), weightShape);
    SmallVector<int64_t> termsShape = {batch, points};
    termsShape.append(kernel.begin(), kernel.end());
    termsShape.append({cg, group, fg});
    Value terms =
        graph::MulOp::create(builder, loc, tensor(termsShape), windows, weight);
    SmallVector<int64_t> axes = offsetAxes();
    axes.push_back(groupAxis);
    Value sum = graph::ReduceSumOp::create(
        builder, loc, tensor({batch, points, group, fg}), terms,
        builder.getDenseI64ArrayAttr(axes), builder.getI64IntegerAttr(0),
        builder.getI64IntegerAttr(0));
    // The bias per group's filters, before the view: the kernel's threads
    // add it to the sums they computed (Partition.cpp, finishesOneReduction).
    if (Value bias = conv.getBias())
      sum = graph::AddOp::create(builder, loc, sum.getType(), sum,
                                 reshape(bias, {group, fg}));
    created.products.insert(sum.getDefiningOp());
    created.sums.insert(sum.getDefiningOp());
    return replaceChannelsLast(sum);
  }

  /// Replaces the convolution by `flat`, its result channels-last as
  /// [N * P, F], [N, P, F] or [N, P, g, Fg]: put back as [N, F, O...]
  /// through [N, O..., F].
  bool replaceChannelsLast(Value flat) {
    SmallVector<int64_t> last = {batch};
    last.append(out.begin(), out.end());
    last.push_back(filters);
    target->getResult(0).replaceAllUsesWith(
        transpose(reshape(flat, last), channelsFirst(spatial + 2)));
    target->erase();
    return true;
  }
};

/// A transpose whose permutation is `channelsLast` or `channelsFirst` of its
/// rank (3 or more): the layout changes the rewrites make, and the only
/// ones that sink.
bool isLayoutTranspose(graph::TransposeOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!type || type.getRank() < 3 || !type.hasStaticShape())
    return false;
  SmallVector<int64_t> perm = graph::transposePermutation(op, type.getRank());
  return perm == strata::channelsLastOrder(type.getRank()) ||
         perm == channelsFirst(type.getRank());
}

/// transpose(transpose(x, p), q) = transpose(x, p o q); an identity folds
/// away (TransposeOp::fold).
struct ComposeTransposes : OpRewritePattern<graph::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(graph::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<graph::TransposeOp>();
    auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!inner || !type)
      return failure();
    SmallVector<int64_t> outer =
        graph::transposePermutation(op, type.getRank());
    SmallVector<int64_t> first =
        graph::transposePermutation(inner, type.getRank());
    SmallVector<int64_t> composed;
    for (int64_t p : outer)
      composed.push_back(first[p]);
    if (llvm::equal(composed, llvm::seq<int64_t>(0, type.getRank())) &&
        inner.getInput().getType() == op.getType()) {
      rewriter.replaceOp(op, inner.getInput());
      return success();
    }
    rewriter.replaceOpWithNewOp<graph::TransposeOp>(
        op, op.getType(), inner.getInput(),
        rewriter.getDenseI64ArrayAttr(composed));
    return success();
  }
};

/// The static result type of an elementwise graph op with one result (the
/// ops the cleanup moves), or null.
RankedTensorType elementwiseResult(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      !strata::isLowerableElementwise(op))
    return {};
  return strata::staticTensorType(op->getResult(0));
}

/// `op` again, on `operands`, its result of `shape`.
Value cloneElementwise(PatternRewriter &rewriter, Operation *op,
                       ValueRange operands, ArrayRef<int64_t> shape) {
  Operation *moved = rewriter.clone(*op);
  moved->setOperands(operands);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  moved->getResult(0).setType(
      RankedTensorType::get(shape, type.getElementType()));
  return moved->getResult(0);
}

/// op(transpose(a, p), transpose(b, p), c) = transpose(op(a, b, c'), p) for
/// an elementwise op, where c' is c (a constant, or a value at most an
/// eighth of the result's size) put in a's layout: the transpose moves
/// below the op, towards the next convolution's transpose that undoes it.
struct SinkLayoutTranspose : RewritePattern {
  SinkLayoutTranspose(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = elementwiseResult(op);
    if (!type)
      return failure();
    int64_t rank = type.getRank();
    // The permutation: the first layout transpose among the operands, of
    // the result's shape (not broadcast).
    std::optional<SmallVector<int64_t>> perm;
    for (Value operand : op->getOperands())
      if (auto t = operand.getDefiningOp<graph::TransposeOp>())
        if (isLayoutTranspose(t) && t.getType() == operand.getType() &&
            cast<RankedTensorType>(t.getType()).getShape() == type.getShape()) {
          perm = graph::transposePermutation(t, rank);
          break;
        }
    if (!perm)
      return failure();
    SmallVector<int64_t> inverse = invertPermutationVector(*perm);
    int64_t size = type.getNumElements();
    // Each operand in the untransposed layout: a transpose by `perm` gives
    // its input; anything else is transposed by the inverse (constants fold,
    // small values cost little), after padding its rank for broadcasting.
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto t = operand.getDefiningOp<graph::TransposeOp>();
      auto otype = dyn_cast<RankedTensorType>(operand.getType());
      if (!otype || !otype.hasStaticShape() || otype.getRank() > rank)
        return failure();
      if (t && otype.getRank() == rank &&
          graph::transposePermutation(t, rank) == *perm) {
        operands.push_back(t.getInput());
        continue;
      }
      bool constant = operand.getDefiningOp<graph::ConstantOp>() != nullptr;
      if (!constant && otype.getNumElements() * 8 > size)
        return failure();
      operands.push_back(Value());
    }
    Location loc = op->getLoc();
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      if (operands[i])
        continue;
      auto otype = cast<RankedTensorType>(operand.getType());
      SmallVector<int64_t> padded(rank - otype.getRank(), 1);
      padded.append(otype.getShape().begin(), otype.getShape().end());
      auto permutedType = RankedTensorType::get(
          applyPermutation(padded, inverse), otype.getElementType());
      // A constant is permuted here (the driver runs without folding, so
      // that its constants cannot keep it from converging).
      DenseElementsAttr values;
      if (matchPattern(operand, m_Constant(&values))) {
        DenseElementsAttr permuted =
            values.isSplat()
                ? values.resizeSplat(permutedType)
                : permuteElements(values.reshape(RankedTensorType::get(
                                      padded, otype.getElementType())),
                                  inverse);
        if (permuted) {
          operands[i] = graph::ConstantOp::create(rewriter, loc,
                                                  cast<ElementsAttr>(permuted));
          continue;
        }
      }
      Value v = otype.getRank() < rank ? viewAs(rewriter, loc, operand, padded)
                                       : operand;
      operands[i] =
          graph::TransposeOp::create(rewriter, loc, permutedType, v,
                                     rewriter.getDenseI64ArrayAttr(inverse));
    }
    rewriter.replaceOpWithNewOp<graph::TransposeOp>(
        op, type,
        cloneElementwise(rewriter, op, operands,
                         applyPermutation(type.getShape(), inverse)),
        rewriter.getDenseI64ArrayAttr(*perm));
    return success();
  }
};

/// reshape(reshape(p)) = reshape(p), and p itself when the shapes agree,
/// for the views of a convolution's product (Created::products): the
/// channels-last views of one convolution's result and the next one's
/// columns are then one view, or none.
struct ComposeProductViews : OpRewritePattern<graph::ReshapeOp> {
  ComposeProductViews(MLIRContext *context,
                      llvm::DenseSet<Operation *> &products)
      : OpRewritePattern(context), products(products) {}
  llvm::DenseSet<Operation *> &products;

  LogicalResult matchAndRewrite(graph::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getData().getDefiningOp<graph::ReshapeOp>();
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!inner || !type || !type.hasStaticShape() ||
        !products.contains(inner.getData().getDefiningOp()))
      return failure();
    if (inner.getData().getType() == type) {
      rewriter.replaceOp(op, inner.getData());
      return success();
    }
    rewriter.modifyOpInPlace(
        op, [&] { op.getDataMutable().assign(inner.getData()); });
    return success();
  }
};

/// op(reshape(p), ...) = reshape(op(p, ...)) for an elementwise op reading
/// a convolution's result p viewed as [N, O..., F] (channels-last), its
/// other operands of the view's shape (viewed as p's too) or broadcast over
/// all but the last dimension (a bias, viewed as p's trailing dimensions
/// that make up F). p is a matrix product [M, F] or a depthwise or grouped
/// convolution's sum ([N, P, F], [N, P, g, Fg]). The result's reader is
/// then the op itself: cuBLASLt's epilogue takes it (a residual add as its
/// C, a ReLU; Library.cpp), and a sum's kernel computes it in the thread
/// that summed the point (Partition.cpp, finishesOneReduction), instead of a
/// kernel of its own after the view.
struct HoistEpilogueAboveView : RewritePattern {
  HoistEpilogueAboveView(MLIRContext *context, Created &created)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, context),
        products(created.products), sums(created.sums) {}
  llvm::DenseSet<Operation *> &products;
  llvm::DenseSet<Operation *> &sums;

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = elementwiseResult(op);
    if (!type || type.getRank() < 3)
      return failure();
    RankedTensorType flat;
    bool ofSum = false;
    for (Value operand : op->getOperands()) {
      auto view = operand.getDefiningOp<graph::ReshapeOp>();
      Operation *producer = view ? view.getData().getDefiningOp() : nullptr;
      if (!view || operand.getType() != type || !products.contains(producer) ||
          (!view->hasOneUse() && !sums.contains(producer)))
        continue;
      ofSum = sums.contains(producer);
      auto input = dyn_cast<RankedTensorType>(view.getData().getType());
      if (input && input.getRank() >= 2 && input.hasStaticShape()) {
        flat = input;
        break;
      }
    }
    if (!flat)
      return failure();
    int64_t channels = type.getShape().back();
    // p's trailing dimensions that make up the channels: [F] of a product,
    // [g, Fg] of a grouped convolution's sum.
    SmallVector<int64_t> channelShape;
    for (int64_t d = flat.getRank() - 1, size = 1; d >= 0 && size < channels;
         --d) {
      size *= flat.getDimSize(d);
      channelShape.insert(channelShape.begin(), flat.getDimSize(d));
    }
    if (ShapedType::getNumElements(channelShape) != channels)
      return failure();
    if (flat.getRank() == 2)
      channelShape.insert(channelShape.begin(), 1);
    // Check every operand before creating anything: a pattern that fails
    // must leave the IR as it was.
    for (Value operand : op->getOperands()) {
      auto otype = dyn_cast<RankedTensorType>(operand.getType());
      if (!otype || !otype.hasStaticShape())
        return failure();
      if (otype.getShape() == type.getShape())
        continue;
      // Broadcast over every dimension but the last: [F], [1, ..., F], a
      // scalar.
      ArrayRef<int64_t> shape = otype.getShape();
      if (!llvm::all_of(shape.drop_back(shape.empty() ? 0 : 1),
                        [](int64_t d) { return d == 1; }) ||
          (!shape.empty() && shape.back() != 1 && shape.back() != channels))
        return failure();
    }
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto otype = cast<RankedTensorType>(operand.getType());
      if (otype.getShape() == type.getShape())
        operands.push_back(
            viewAs(rewriter, op->getLoc(), operand, flat.getShape()));
      else if (flat.getRank() == 2 && otype.getRank() <= 2)
        operands.push_back(operand);
      else if (otype.getNumElements() == 1)
        operands.push_back(viewAs(rewriter, op->getLoc(), operand, {1}));
      else
        operands.push_back(
            viewAs(rewriter, op->getLoc(), operand, channelShape));
    }
    Value moved = cloneElementwise(rewriter, op, operands, flat.getShape());
    products.insert(moved.getDefiningOp());
    if (ofSum)
      sums.insert(moved.getDefiningOp());
    rewriter.replaceOp(op,
                       viewAs(rewriter, op->getLoc(), moved, type.getShape()));
    return success();
  }
};

/// Whether `conv` computes as well channels-first: a 1x1 convolution at
/// stride 1 without padding (group 1), which reads each point in place.
bool pointwiseConvolution(Operation *op) {
  auto conv = dyn_cast<graph::ConvOp>(op);
  if (!conv || conv.getGroup() != 1)
    return false;
  auto w = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  auto all = [](std::optional<ArrayRef<int64_t>> a, int64_t v) {
    return !a || llvm::all_of(*a, [&](int64_t x) { return x == v; });
  };
  return w && w.hasStaticShape() &&
         llvm::all_of(w.getShape().drop_front(2),
                      [](int64_t d) { return d == 1; }) &&
         all(conv.getStrides(), 1) && all(conv.getPads(), 0);
}

/// The convolutions whose layout is channels-first: those connected (through
/// chains of elementwise ops, either way) only to convolutions that compute
/// as well channels-first. A network with any other convolution (a 3x3, a
/// strided or a depthwise one, or a max pooling) nearby goes channels-last
/// as a whole, so that its transposes cancel; a lone pair of 1x1
/// convolutions between channels-first ops (a bottleneck's expansion and
/// projection given NCHW tensors) keeps NCHW and needs no transpose.
llvm::DenseSet<Operation *>
channelsFirstConvolutions(ArrayRef<Operation *> convs,
                          ArrayRef<Operation *> pools) {
  llvm::EquivalenceClasses<Operation *> classes;
  SmallVector<Operation *> nodes(convs.begin(), convs.end());
  for (Operation *pool : pools)
    if (isa<graph::MaxPoolOp>(pool))
      nodes.push_back(pool);
  llvm::DenseSet<Operation *> members(nodes.begin(), nodes.end());
  for (Operation *node : nodes) {
    classes.insert(node);
    // Forward through elementwise readers to the nodes they feed.
    SmallVector<Value> work = {node->getResult(0)};
    llvm::DenseSet<Operation *> seen;
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (!seen.insert(user).second)
          continue;
        if (members.contains(user) && user->getOperand(0) == v)
          classes.unionSets(node, user);
        else if (strata::isLowerableElementwise(user) &&
                 user->getNumResults() == 1)
          work.push_back(user->getResult(0));
      }
    }
  }
  llvm::DenseSet<Operation *> lastClasses, result;
  for (Operation *node : nodes)
    if (!pointwiseConvolution(node))
      lastClasses.insert(classes.getLeaderValue(node));
  for (Operation *conv : convs)
    if (!lastClasses.contains(classes.getLeaderValue(conv)))
      result.insert(conv);
  return result;
}

struct ConvToGemmPass : strata::impl::ConvToGemmPassBase<ConvToGemmPass> {
  using Base::Base;

  /// Whether each of `convs` may become cuDNN's. The decisions file
  /// (docs/explain.md) overrides the default (the `cudnn` option with
  /// cudnnTakes): "algorithm" "cudnn" takes any convolution cuDNN's step
  /// runs, "gemm" and "codegen" keep one off cuDNN (with "codegen" its
  /// product is generated too).
  LogicalResult chooseCudnn(ArrayRef<Operation *> convs,
                            SmallVectorImpl<CudnnChoice> &choices) {
    strata::CompileOptions options =
        strata::recordedCompileOptions(getOperation());
    func::FuncOp entry = strata::getEntryFunction(getOperation());
    strata::Decisions decisions;
    if (!options.decisionsFile.empty() && entry) {
      FailureOr<strata::Decisions> loaded =
          strata::Decisions::load(options.decisionsFile, entry);
      if (failed(loaded))
        return failure();
      decisions = std::move(*loaded);
    }
    Operation *at = getOperation();
    if (!decisions.nonConvolutionForms().empty()) {
      const auto &[op, form] = decisions.nonConvolutionForms().front();
      return decisions.error(at, form.entry)
             << "'" << strata::describeOp(op) << "' is not a convolution ("
             << op->getName().getStringRef()
             << "); a GPU convolution's form is chosen for Conv nodes";
    }
    for (Operation *conv : convs) {
      std::string codegen = decisions.forcedCodegen(conv);
      CudnnChoice choice =
          cudnn && codegen.empty() ? CudnnChoice::Default : CudnnChoice::Never;
      if (const strata::Decisions::Algorithm *form =
              decisions.algorithmFor(conv)) {
        if (!form->gpuForm())
          return decisions.error(at, form->entry)
                 << "\"" << form->name
                 << "\" chooses a CPU convolution's oneDNN kernel; on the "
                 << options.target
                 << " target a convolution's form is \"cudnn\" or \"gemm\"";
        if (form->name == "gemm") {
          choice = CudnnChoice::Never;
        } else if (!options.useLibraries) {
          return decisions.error(at, form->entry)
                 << "cuDNN's step is a library call, but libraries are off "
                    "(--no-libraries)";
        } else if (options.target != "cuda") {
          return decisions.error(at, form->entry)
                 << "cuDNN is NVIDIA's library; on the " << options.target
                 << " target a convolution's form is \"gemm\"";
        } else if (!codegen.empty()) {
          return decisions.error(at, form->entry)
                 << "asks for cuDNN's step, and " << codegen
                 << " for generated code";
        } else if (std::string why = cudnnCannot(cast<graph::ConvOp>(conv));
                   !why.empty()) {
          return decisions.error(at, form->entry)
                 << why << "; this convolution is " << strata::describeOp(conv)
                 << " of type " << conv->getResult(0).getType();
        } else {
          choice = CudnnChoice::Forced;
        }
      }
      choices.push_back(choice);
    }
    return success();
  }

  void runOnOperation() override {
    // Convolutions first: a pooling is rewritten only where its input
    // already comes channels-last from one (elsewhere it keeps its form).
    SmallVector<Operation *> convs, pools;
    getOperation().walk([&](Operation *op) {
      if (isa<graph::ConvOp>(op))
        convs.push_back(op);
      else if (isa<graph::MaxPoolOp, graph::GlobalAveragePoolOp,
                   graph::GlobalMaxPoolOp>(op))
        pools.push_back(op);
    });
    Created created;
    llvm::DenseSet<Operation *> keepNchw =
        channelsFirstConvolutions(convs, pools);
    SmallVector<CudnnChoice> choices;
    if (failed(chooseCudnn(convs, choices)))
      return signalPassFailure();
    for (auto [conv, choice] : llvm::zip_equal(convs, choices))
      ConvRewriter(conv, created, keepNchw.contains(conv), choice).run();
    if (!created.ops.empty())
      for (Operation *pool : pools)
        ConvRewriter(pool, created).run();
    // Fold what folds among the new ops alone (no pattern: folders only).
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(
        created.ops, FrozenRewritePatternSet(RewritePatternSet(&getContext())),
        config);
    if (created.ops.empty())
      return;
    // Cancel the layout transposes between convolutions (file comment).
    RewritePatternSet patterns(&getContext());
    patterns.add<ComposeTransposes, SinkLayoutTranspose>(&getContext());
    patterns.add<ComposeProductViews>(&getContext(), created.products);
    patterns.add<HoistEpilogueAboveView>(&getContext(), created);
    // The patterns terminate: a sink moves a transpose strictly towards the
    // results, a composition removes a transpose or a view, a hoisted op
    // reads a matrix and cannot hoist again. A deep network needs more than
    // the driver's default ten sweeps (ConvNeXt-T: 12), so there is no limit.
    // Without folding and constant CSE: the patterns permute the constants
    // they create themselves.
    GreedyRewriteConfig sinking;
    sinking.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
        .enableFolding(false)
        .enableConstantCSE(false)
        .setMaxIterations(GreedyRewriteConfig::kNoLimit);
    bool changed = false;
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     sinking, &changed))) {
      getOperation().emitError("strata-conv-to-gemm: cancelling the "
                               "layout transposes did not converge");
      return signalPassFailure();
    }
  }
};

} // namespace
