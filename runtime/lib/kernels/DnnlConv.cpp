//===- DnnlConv.cpp - "dnnl.conv": oneDNN convolutions ----------*- C++ -*-===//
//
// ONNX Conv over 1, 2 or 3 spatial dimensions with groups, strides,
// dilations and asymmetric pads, plus fused epilogues: a bias, a `sum` input
// added after the convolution (a residual connection; oneDNN's sum post-op,
// which accumulates into the output, so the sum is copied there first unless
// it already lives there) and an activation.
//
// Activations keep the module's row-major layout (ncw/nchw/ncdhw); the
// weights take whatever layout oneDNN prefers. Weights that are module
// constants are reordered once and kept in the step's state; others are
// reordered on every run.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"

#include <cstring>

namespace strata::rt::kernels::dnnl_support {

namespace {

struct ConvState : KernelState {
  std::vector<int64_t> key;
  dnnl::convolution_forward primitive;
  dnnl::memory::desc src, userWeights, bias, dst;
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
    std::vector<int64_t> key = shapeKey(ctx);
    if (state.key != key) {
      state.key.clear();
      state.weightsFrom = nullptr;
      state.src = rowMajorDesc(x.shape);
      state.dst = rowMajorDesc(out.shape);
      // Grouped weights are [G, M/G, C/G, K...]: the same bytes as W.
      dnnl::memory::dims weightDims = w.shape;
      if (group > 1) {
        weightDims[0] = m / group;
        weightDims.insert(weightDims.begin(), group);
      }
      state.userWeights = rowMajorDesc(weightDims);
      dnnl::memory::desc anyWeights(weightDims, dnnl::memory::data_type::f32,
                                    dnnl::memory::format_tag::any);
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
            kind, alg, state.src, anyWeights, state.bias, state.dst, strides,
            dnnlDilations, padL, padR);
      } else {
        desc = std::make_unique<dnnl::convolution_forward::desc>(
            kind, alg, state.src, anyWeights, state.dst, strides, dnnlDilations,
            padL, padR);
      }
      dnnl::post_ops ops;
      if (sum)
        ops.append_sum(1.f);
      appendActivation(ctx, ops);
      dnnl::primitive_attr attr;
      attr.set_post_ops(ops);
      dnnl::convolution_forward::primitive_desc pd(*desc, attr, cpuEngine());
      state.primitive = dnnl::convolution_forward(pd);
      state.reorderWeights = pd.weights_desc() != state.userWeights;
      if (state.reorderWeights) {
        state.weights = dnnl::memory(pd.weights_desc(), cpuEngine());
        state.weightsReorder = dnnl::reorder(dnnl::reorder::primitive_desc(
            cpuEngine(), state.userWeights, cpuEngine(), pd.weights_desc()));
      }
      state.stream = dnnl::stream(cpuEngine());
      state.key = std::move(key);
    }

    const dnnl::engine &engine = cpuEngine();
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
    if (sum && sum->data != out.data)
      std::memcpy(out.data, sum->data, out.byteSize());
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, dnnl::memory(state.src, engine, x.data)},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, dnnl::memory(state.dst, engine, out.data)}};
    if (bias)
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(state.bias, engine, bias->data));
    state.primitive.execute(state.stream, args);
    state.stream.wait();
  });
}

} // namespace strata::rt::kernels::dnnl_support
