//===- ConvToGemm.cpp - convolutions as matrix products on the GPU -------===//
//
// The cuda target has no convolution library (cuDNN is not used yet), and a
// generated convolution computes each output point in one thread over a
// serial loop. Worse, the partitioner fuses a chain of such convolutions
// (conv -> relu -> conv -> add -> ...) into one kernel whose CUDA blocks are
// the batch's images, so a whole CNN ran in as many blocks as it had images:
// a ResNet-50 took seconds. This pass rewrites convolutions before
// partitioning into ops the GPU already runs well, so that decisions follow
// from the IR for any CNN:
//
//   - group 1 with a 1x1 kernel at stride 1 without padding, one image or
//     at least kMinPointwisePoints output points per image: per image the
//     product W [F, C] . X [C, P] in NCHW order, one batched product with
//     the weight broadcast (cuBLASLt), no gather and no transposes;
//   - other group 1 (any kernel, stride, dilation, padding; 1-3 spatial
//     axes): im2col + one matrix product. One gather reads every output point's
//     windows from the input in place ([N, C, P, KK], with a constant index
//     over the flattened spatial axes; a constant 0/1 mask zeroes what falls
//     in the padding), a transpose makes the columns [N * P, C * KK], and the
//     product with the weight read as [F, C * KK] (only reshaped: transB)
//     and the bias gives [N * P, F], put back as [N, F, O...]. The gather,
//     mask and transpose fuse into one all-parallel loop nest, which the GPU
//     mapping spreads over the whole grid; the product goes to cuBLASLt (the
//     generated GEMM kernel with --no-libraries) on tensor cores, and the
//     last transpose fuses with the elementwise ops after the convolution.
//   - depthwise (group = C = F): the same windows times the weight per
//     channel and offset, summed over the offsets: one loop nest with a
//     short reduction, each output point computed by one thread.
//   - other grouped convolutions, and convolutions whose index would exceed
//     kMaxIndexEntries, stay convolutions (generated).
//
// Every op created carries the convolution's location, so kernel names,
// `strata explain` and decisions files still name the ONNX node.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
namespace graph = strata::graph;

namespace {

/// Kernels larger than this many offsets stay convolutions when depthwise
/// (each thread sums a point's offsets serially).
constexpr int64_t kMaxDepthwiseOffsets = 81;
/// The output points per image from which a 1x1 convolution is one batched
/// product per image (pointwise) rather than im2col's single product over
/// all images' points. Each image's product is [F, C] . [C, P]: with fewer
/// than this many columns it is narrower than cuBLASLt's tiles, and the
/// transposes im2col needs cost less than the tiles left empty (on the H200,
/// bench/RESULTS.md: slower at 49 points, faster from 196). With one image
/// both forms multiply the same matrices and pointwise saves the transposes.
constexpr int64_t kMinPointwisePoints = 128;
/// Output points x kernel offsets above which a convolution keeps its form:
/// the gather's index (8 bytes an entry) and mask would outweigh the model
/// (1M entries: a 7x7 stem at 224x224 has 615K).
constexpr int64_t kMaxIndexEntries = 1 << 20;

/// Collects the ops a rewrite creates, to fold them afterwards (the
/// weights' reshapes are constants).
struct Created : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  SmallVector<Operation *> ops;
};

class ConvRewriter {
public:
  ConvRewriter(graph::ConvOp conv, Created &created)
      : conv(conv), builder(conv, &created), loc(conv.getLoc()) {}

  /// Rewrites the convolution; false when it keeps its form.
  bool run() {
    auto x = dyn_cast<RankedTensorType>(conv.getInput().getType());
    auto w = dyn_cast<RankedTensorType>(conv.getWeight().getType());
    auto y = dyn_cast<RankedTensorType>(conv.getType());
    if (!x || !w || !y || !x.hasStaticShape() || !w.hasStaticShape() ||
        !y.hasStaticShape() || x.getRank() < 3 || x.getRank() > 5 ||
        !isa<FloatType>(x.getElementType()))
      return false;
    element = x.getElementType();
    spatial = x.getRank() - 2;
    batch = x.getDimSize(0);
    channels = x.getDimSize(1);
    filters = w.getDimSize(0);
    for (int64_t i = 0; i < spatial; ++i) {
      kernel.push_back(w.getDimSize(2 + i));
      out.push_back(y.getDimSize(2 + i));
    }
    points = ShapedType::getNumElements(out);
    offsetCount = ShapedType::getNumElements(kernel);
    // The gather's index and mask grow with output points x kernel offsets;
    // past the bound they would outweigh the model.
    if (points * offsetCount > kMaxIndexEntries)
      return false;
    auto attr = [&](std::optional<ArrayRef<int64_t>> a, int64_t size,
                    int64_t fill) {
      SmallVector<int64_t> v(a ? *a : ArrayRef<int64_t>{});
      if (v.empty())
        v.assign(size, fill);
      return v;
    };
    strides = attr(conv.getStrides(), spatial, 1);
    dilations = attr(conv.getDilations(), spatial, 1);
    pads = attr(conv.getPads(), 2 * spatial, 0);
    if (int64_t(strides.size()) != spatial ||
        int64_t(dilations.size()) != spatial ||
        int64_t(pads.size()) != 2 * spatial)
      return false;
    int64_t group = conv.getGroup();
    if (group == 1 && readsInPlace() &&
        (batch == 1 || points >= kMinPointwisePoints))
      return pointwise();
    if (group == 1)
      return im2col();
    if (group == channels && filters == channels && w.getDimSize(1) == 1 &&
        offsetCount <= kMaxDepthwiseOffsets)
      return depthwise();
    return false;
  }

private:
  graph::ConvOp conv;
  OpBuilder builder;
  Location loc;
  Type element;
  int64_t spatial = 0, batch = 0, channels = 0, filters = 0;
  SmallVector<int64_t> kernel, out, strides, dilations, pads;
  /// Output points (prod(out)) and kernel offsets (prod(kernel)).
  int64_t points = 0, offsetCount = 0;

  Value i64s(ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({int64_t(values.size())},
                                      builder.getIntegerType(64));
    return graph::ConstantOp::create(
        builder, loc, cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, element);
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
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(type.getDimSize(p));
    return graph::TransposeOp::create(
        builder, loc, RankedTensorType::get(shape, type.getElementType()), v,
        builder.getDenseI64ArrayAttr(perm));
  }

  Value reshape(Value v, ArrayRef<int64_t> shape) {
    auto type = cast<RankedTensorType>(v.getType());
    return graph::ReshapeOp::create(
        builder, loc, RankedTensorType::get(shape, type.getElementType()), v,
        i64s(shape), builder.getI64IntegerAttr(0));
  }

  /// Input points per output point and kernel offset, over the flattened
  /// spatial axes: index [P, KK] (0 where the offset falls in the padding)
  /// and whether it is inside the input (mask [P, KK], 1 or 0).
  void windows(SmallVectorImpl<int64_t> &index, SmallVectorImpl<double> &mask) {
    auto x = cast<RankedTensorType>(conv.getInput().getType());
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

  /// The windows of every output point, gathered: [N, C, P, KK], zero where
  /// a window reaches into the padding. One gather (and a multiply by the
  /// mask when there is padding) reads the input in place: the ops fuse
  /// into one loop nest spread over the whole GPU. `offsetMajor` gives
  /// [N, C, KK, P] instead (index and mask [KK, P]), for readers whose
  /// consecutive threads take consecutive output points: their index and
  /// mask reads are then contiguous.
  Value gatherWindows(bool offsetMajor = false) {
    auto x = cast<RankedTensorType>(conv.getInput().getType());
    Value flat =
        reshape(conv.getInput(),
                {batch, channels,
                 ShapedType::getNumElements(x.getShape().drop_front(2))});
    SmallVector<int64_t> index;
    SmallVector<double> mask;
    windows(index, mask);
    // A 1x1 window at stride 1 reads every point once, in order: the input
    // itself.
    bool identity = offsetCount == 1;
    for (int64_t p = 0; identity && p < points; ++p)
      identity = index[p] == p && mask[p] == 1.0;
    if (identity)
      return reshape(
          flat, offsetMajor ? SmallVector<int64_t>{batch, channels, 1, points}
                            : SmallVector<int64_t>{batch, channels, points, 1});
    SmallVector<int64_t> shape = {points, offsetCount};
    if (offsetMajor) {
      // [P, KK] -> [KK, P].
      SmallVector<int64_t> byOffset(index.size());
      SmallVector<double> maskByOffset(mask.size());
      for (int64_t p = 0; p < points; ++p)
        for (int64_t k = 0; k < offsetCount; ++k) {
          byOffset[k * points + p] = index[p * offsetCount + k];
          maskByOffset[k * points + p] = mask[p * offsetCount + k];
        }
      index = std::move(byOffset);
      mask = std::move(maskByOffset);
      shape = {offsetCount, points};
    }
    auto indexType = RankedTensorType::get(shape, builder.getI64Type());
    Value indices =
        graph::ConstantOp::create(builder, loc,
                                  cast<ElementsAttr>(DenseElementsAttr::get(
                                      indexType, ArrayRef<int64_t>(index))));
    Value gathered = graph::GatherOp::create(
        builder, loc, tensor({batch, channels, shape[0], shape[1]}), flat,
        indices, builder.getI64IntegerAttr(2));
    if (llvm::all_of(mask, [](double m) { return m == 1.0; }))
      return gathered;
    auto maskType = RankedTensorType::get(shape, element);
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

  /// A convolution that reads every input point in place is, per image, the
  /// product W [F, C] . X [C, P], [F, P] in NCHW order already: one batched
  /// product with the weight broadcast over the images, the bias added per
  /// filter by the elementwise kernel after it. Against im2col's
  /// [N * P, C] . [C, F] it moves no activation through a transpose (one
  /// before the product, one after), which costs more memory traffic than
  /// the product's own reads when C and F are a few hundred.
  bool pointwise() {
    Value x = reshape(conv.getInput(), {batch, channels, points});
    Value weight = reshape(conv.getWeight(), {filters, channels});
    return replaceByChannels(graph::MatMulOp::create(
        builder, loc, tensor({batch, filters, points}), weight, x));
  }

  bool im2col() {
    // [N, C, P, KK] -> [N, P, C, KK] -> columns [N * P, C * KK], which match
    // the weight's own [F, C, K...] read as [F, C * KK]: the product takes it
    // transposed (transB), so the weight is only reshaped.
    int64_t depth = offsetCount * channels;
    Value cols = transpose(gatherWindows(), {0, 2, 1, 3});
    cols = reshape(cols, {batch * points, depth});
    Value weight = reshape(conv.getWeight(), {filters, depth});
    Value gemm = graph::GemmOp::create(
        builder, loc, tensor({batch * points, filters}), cols, weight,
        conv.getBias(), builder.getF32FloatAttr(1.0f),
        builder.getF32FloatAttr(1.0f), builder.getI64IntegerAttr(0),
        builder.getI64IntegerAttr(1));
    SmallVector<int64_t> nhwc = {batch};
    nhwc.append(out.begin(), out.end());
    nhwc.push_back(filters);
    // [N, O..., F] -> [N, F, O...]
    SmallVector<int64_t> back = {0, 1 + spatial};
    for (int64_t i = 0; i < spatial; ++i)
      back.push_back(1 + i);
    Value result = transpose(reshape(gemm, nhwc), back);
    conv.replaceAllUsesWith(result);
    conv.erase();
    return true;
  }

  bool depthwise() {
    // sum over k of windows[n, c, k, p] * weight[c, k]: one product with the
    // weight broadcast over the batch and the points, then a sum over the
    // offsets. The gather, the mask and the product fuse into the sum's
    // loop nest (the partitioner keeps them one kernel, Partition.cpp), so
    // each GPU thread computes whole output points from the input in place,
    // as a direct depthwise convolution does; the windows are never
    // written to memory. Offset-major windows keep the reads of the index,
    // the mask and the input contiguous across a warp's points.
    Value windows = gatherWindows(/*offsetMajor=*/true);
    Value weight = reshape(conv.getWeight(), {1, channels, offsetCount, 1});
    Value terms = graph::MulOp::create(
        builder, loc, tensor({batch, channels, offsetCount, points}), windows,
        weight);
    Value sum = graph::ReduceSumOp::create(
        builder, loc, tensor({batch, channels, points}), terms,
        builder.getDenseI64ArrayAttr({2}), builder.getI64IntegerAttr(0),
        builder.getI64IntegerAttr(0));
    // The bias is added by the kernel after it, with the ops that follow
    // the convolution (an activation, a residual).
    return replaceByChannels(sum);
  }

  /// Replaces the convolution by `flat`, its result as [N, F, P]: the bias
  /// added per filter, put back as [N, F, O...].
  bool replaceByChannels(Value flat) {
    auto type = cast<RankedTensorType>(flat.getType());
    if (Value bias = conv.getBias())
      flat = graph::AddOp::create(builder, loc, type, flat,
                                  reshape(bias, {filters, 1}));
    SmallVector<int64_t> outShape = {batch, filters};
    outShape.append(out.begin(), out.end());
    conv.replaceAllUsesWith(reshape(flat, outShape));
    conv.erase();
    return true;
  }
};

struct ConvToGemmPass : PassWrapper<ConvToGemmPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvToGemmPass)
  StringRef getArgument() const final { return "strata-conv-to-gemm"; }
  StringRef getDescription() const final {
    return "GPU: convolutions as im2col + matrix product, depthwise ones as "
           "sums over their windows (the cuda target has no convolution "
           "library)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<graph::GraphDialect>();
  }
  void runOnOperation() override {
    SmallVector<graph::ConvOp> convs;
    getOperation().walk([&](graph::ConvOp conv) { convs.push_back(conv); });
    Created created;
    for (graph::ConvOp conv : convs)
      ConvRewriter(conv, created).run();
    // Fold what folds among the new ops alone (no pattern: folders only).
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(
        created.ops, FrozenRewritePatternSet(RewritePatternSet(&getContext())),
        config);
  }
};

} // namespace

void strata::registerConvToGemmPass() { PassRegistration<ConvToGemmPass>(); }
