//===- DnnlConv.cpp - "dnnl.conv": oneDNN convolutions ----------*- C++ -*-===//
//
// ONNX Conv over 1, 2 or 3 spatial dimensions with groups, strides,
// dilations and asymmetric pads, plus fused epilogues: a bias, a `sum` input
// added after the convolution (a residual connection; oneDNN's sum post-op,
// which accumulates into the destination, so the sum is put there first) and
// an activation.
//
// The module's activations are row-major (ncw/nchw/ncdhw), but oneDNN 2.6
// has fast (JIT, blocked-layout) convolutions only for its own layouts: with
// row-major source and destination it falls back to im2col + GEMM, which is
// several times slower, and far slower for depthwise convolutions. So the
// primitive is created with every layout left to oneDNN (format_tag::any),
// and the step converts at its edges: the input is reordered into the
// primitive's source layout, the sum into its destination layout, and the
// result back into the row-major output, each by a reorder primitive created
// with the convolution. A layout that oneDNN leaves row-major (the source of
// a first convolution with few channels, say) is used in place. Weights that
// are module constants are reordered once and kept in the step's state;
// others are reordered on every run.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"

#include <cstring>

namespace strata::rt::kernels::dnnl_support {

namespace {

struct ConvState : KernelState {
  std::vector<int64_t> key;
  dnnl::convolution_forward primitive;
  /// The module's descriptors: row-major, or channels-last for the
  /// activations the step's *_layout attributes name.
  dnnl::memory::desc userSrc, userWeights, bias, userDst, userSum;
  /// The source and destination in the primitive's layouts, with the
  /// reorders into and out of them, when those differ from the module's.
  bool reorderSrc = false, reorderDst = false;
  dnnl::memory src, dst;
  LayoutConversion srcReorder, sumReorder, dstReorder;
  /// Whether the sum is converted (else copied) into the destination.
  bool reorderSum = false;
  /// The weights in the primitive's layout when it differs from the
  /// module's, and the constant they were reordered from.
  bool reorderWeights = false;
  dnnl::reorder weightsReorder;
  dnnl::memory weights;
  const void *weightsFrom = nullptr;
  dnnl::stream stream;
};

} // namespace

void conv(KernelContext &ctx) {
  checkOperands(ctx, 2, 4);
  const TensorView &x = ctx.input(0), &w = ctx.input(1), &out = ctx.output(0);
  size_t rank = x.shape.size();
  // The optional inputs: B [M] and the sum (the output's shape). With three
  // inputs, the rank tells which one is there.
  const TensorView *bias = nullptr, *sum = nullptr;
  if (ctx.numInputs() == 4) {
    bias = &ctx.input(2);
    sum = &ctx.input(3);
  } else if (ctx.numInputs() == 3) {
    (ctx.input(2).shape.size() == 1 ? bias : sum) = &ctx.input(2);
  }
  auto shapes = [&] {
    std::string s =
        "X " + shapeToString(x.shape) + ", W " + shapeToString(w.shape);
    if (bias)
      s += ", B " + shapeToString(bias->shape);
    if (sum)
      s += ", sum " + shapeToString(sum->shape);
    return s + " -> " + shapeToString(out.shape);
  };
  if (rank < 3 || rank > 5)
    throw ctx.error("supports 1 to 3 spatial dimensions, got " + shapes());
  size_t k = rank - 2;
  if (w.shape.size() != rank || out.shape.size() != rank)
    throw ctx.error("expects X, W and the output of one rank, got " + shapes());
  std::vector<int64_t> strides = intsAttr(ctx, "strides", k, 1, 1);
  std::vector<int64_t> dilations = intsAttr(ctx, "dilations", k, 1, 1);
  std::vector<int64_t> pads = intsAttr(ctx, "pads", 2 * k, 0, 0);
  int64_t group = ctx.hasAttr("group") ? ctx.attrInt("group") : 1;
  int64_t n = x.shape[0], channels = x.shape[1], m = w.shape[0];
  if (group < 1 || channels % group != 0 || m % group != 0 ||
      w.shape[1] * group != channels)
    throw ctx.error("has channels that do not fit group " +
                    std::to_string(group) + ": " + shapes());
  std::vector<int64_t> expected = {n, m};
  for (size_t i = 0; i < k; ++i) {
    int64_t extent = (w.shape[2 + i] - 1) * dilations[i] + 1;
    int64_t padded = x.shape[2 + i] + pads[i] + pads[k + i];
    if (w.shape[2 + i] < 1 || padded < extent)
      throw ctx.error("has a kernel larger than the padded input: " + shapes());
    expected.push_back((padded - extent) / strides[i] + 1);
  }
  if (out.shape != expected)
    throw ctx.error("expects the output shape " + shapeToString(expected) +
                    ", got " + shapes());
  if (bias && bias->shape != std::vector<int64_t>{m})
    throw ctx.error("expects B of shape [" + std::to_string(m) + "], got " +
                    shapes());
  if (sum && sum->shape != out.shape)
    throw ctx.error("expects the sum input in the output's shape, got " +
                    shapes());
  if (out.numElements() == 0)
    return;
  if (x.numElements() == 0 || w.numElements() == 0)
    throw ctx.error("does not support empty inputs: " + shapes());

  translateErrors(ctx, [&] {
    ScopedOmpThreads threads(ctx);
    ConvState &state = ctx.state<ConvState>();
    const dnnl::engine &engine = cpuEngine();
    std::vector<int64_t> key = shapeKey(ctx);
    if (state.key != key) {
      state.key.clear();
      state.weightsFrom = nullptr;
      using tag = dnnl::memory::format_tag;
      auto f32 = dnnl::memory::data_type::f32;
      state.userSrc = activationDesc(ctx, "src_layout", x.shape);
      state.userDst = activationDesc(ctx, "dst_layout", out.shape);
      state.userSum = activationDesc(ctx, "sum_layout", out.shape);
      // Grouped weights are [G, M/G, C/G, K...]: the same bytes as W.
      dnnl::memory::dims weightDims = w.shape;
      if (group > 1) {
        weightDims[0] = m / group;
        weightDims.insert(weightDims.begin(), group);
      }
      state.userWeights = rowMajorDesc(weightDims);
      dnnl::memory::desc anySrc(x.shape, f32, tag::any),
          anyWeights(weightDims, f32, tag::any),
          anyDst(out.shape, f32, tag::any);
      dnnl::memory::dims dnnlDilations, padL, padR;
      for (size_t i = 0; i < k; ++i) {
        dnnlDilations.push_back(dilations[i] - 1);
        padL.push_back(pads[i]);
        padR.push_back(pads[k + i]);
      }
      auto kind = dnnl::prop_kind::forward_inference;
      auto alg = dnnl::algorithm::convolution_direct;
      std::unique_ptr<dnnl::convolution_forward::desc> desc;
      if (bias) {
        state.bias = rowMajorDesc({m});
        desc = std::make_unique<dnnl::convolution_forward::desc>(
            kind, alg, anySrc, anyWeights, state.bias, anyDst, strides,
            dnnlDilations, padL, padR);
      } else {
        desc = std::make_unique<dnnl::convolution_forward::desc>(
            kind, alg, anySrc, anyWeights, anyDst, strides, dnnlDilations, padL,
            padR);
      }
      dnnl::post_ops ops;
      if (sum)
        ops.append_sum(1.f);
      appendActivation(ctx, ops);
      dnnl::primitive_attr attr;
      attr.set_post_ops(ops);
      dnnl::convolution_forward::primitive_desc pd(*desc, attr, engine);
      state.primitive = dnnl::convolution_forward(pd);

      state.reorderSrc = pd.src_desc() != state.userSrc;
      state.src = dnnl::memory();
      if (state.reorderSrc) {
        state.src = dnnl::memory(pd.src_desc(), engine);
        state.srcReorder =
            LayoutConversion(state.userSrc, pd.src_desc(), x.shape);
      }
      state.reorderDst = pd.dst_desc() != state.userDst;
      state.dst = dnnl::memory();
      if (state.reorderDst) {
        state.dst = dnnl::memory(pd.dst_desc(), engine);
        state.dstReorder =
            LayoutConversion(pd.dst_desc(), state.userDst, out.shape);
      }
      // The sum goes into the destination the primitive writes.
      const dnnl::memory::desc &sumTarget =
          state.reorderDst ? pd.dst_desc() : state.userDst;
      state.reorderSum = sum && state.userSum != sumTarget;
      if (state.reorderSum)
        state.sumReorder =
            LayoutConversion(state.userSum, sumTarget, out.shape);
      state.reorderWeights = pd.weights_desc() != state.userWeights;
      state.weights = dnnl::memory();
      if (state.reorderWeights) {
        state.weights = dnnl::memory(pd.weights_desc(), engine);
        state.weightsReorder = dnnl::reorder(dnnl::reorder::primitive_desc(
            engine, state.userWeights, engine, pd.weights_desc()));
      }
      state.stream = dnnl::stream(engine);
      state.key = std::move(key);
    }

    dnnl::memory weights(state.userWeights, engine, w.data);
    if (state.reorderWeights) {
      // A constant's bytes never change: reorder it once.
      bool cached = ctx.inputIsConstant(1) && state.weightsFrom == w.data;
      if (!cached) {
        state.weightsReorder.execute(state.stream, weights, state.weights);
        state.weightsFrom = ctx.inputIsConstant(1) ? w.data : nullptr;
      }
      weights = state.weights;
    }
    dnnl::memory src(state.userSrc, engine, x.data);
    if (state.reorderSrc) {
      state.srcReorder.execute(state.stream, src, state.src);
      src = state.src;
    }
    dnnl::memory userDst(state.userDst, engine, out.data);
    dnnl::memory dst = state.reorderDst ? state.dst : userDst;
    if (sum) {
      // The sum post-op accumulates into the destination.
      if (state.reorderSum) {
        dnnl::memory userSum(state.userSum, engine, sum->data);
        state.sumReorder.execute(state.stream, userSum, dst);
      } else if (sum->data != dst.get_data_handle())
        std::memcpy(dst.get_data_handle(), sum->data, out.byteSize());
    }
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias)
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(state.bias, engine, bias->data));
    state.primitive.execute(state.stream, args);
    if (state.reorderDst)
      state.dstReorder.execute(state.stream, dst, userDst);
    state.stream.wait();
  });
}

} // namespace strata::rt::kernels::dnnl_support
