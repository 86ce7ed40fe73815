//===- DnnlPool.cpp - "dnnl.pool": oneDNN pooling ---------------*- C++ -*-===//
//
// Max and average pooling over 1, 2 or 3 spatial dimensions with strides,
// dilations and asymmetric pads. The output view's shape decides the right
// padding: an output one larger than the floor formula gives (ONNX
// ceil_mode) extends the right padding so that the last window fits.
//
// That extension is not padding the model asked for: an average that counts
// padding ("avg_include_pad") counts only the taps inside the declared pads,
// as ONNX Runtime and PyTorch do. oneDNN would divide by the whole window, so
// the outputs whose window reaches past the declared pads are rescaled after
// the primitive runs.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"

namespace strata::rt::kernels::dnnl_support {

namespace {

struct PoolState : KernelState {
  std::vector<int64_t> key;
  dnnl::pooling_v2_forward primitive;
  /// The step's buffers as the module lays them out.
  dnnl::memory::desc src, dst;
  /// oneDNN's fast pooling needs the source and destination in one layout
  /// (given one channels-last and the other row-major it runs its reference
  /// kernel, ~50x slower): the primitive writes the source's layout into
  /// `written`, converted into `dst` when the two differ.
  bool convertDst = false;
  dnnl::memory written;
  LayoutConversion dstConversion;
  /// Per spatial dimension and output position: the window's taps over the
  /// taps inside the declared pads (include-pad averages only; empty when
  /// every factor is 1).
  std::vector<std::vector<float>> rescale;
  dnnl::stream stream;
};

/// Multiplies each output of `out` [N, C, O...] by the product of its
/// positions' factors; `channelsLast`: `out` is stored [N, O..., C].
void rescaleOutputs(KernelContext &ctx, const TensorView &out,
                    const std::vector<std::vector<float>> &factors,
                    bool channelsLast) {
  size_t k = factors.size();
  int64_t images = out.shape[0], channels = out.shape[1];
  int64_t planeSize = 1;
  for (size_t i = 0; i < k; ++i)
    planeSize *= out.shape[2 + i];
  auto factorAt = [&](int64_t j) {
    float factor = 1.f;
    for (size_t i = k; i-- > 0;) {
      factor *= factors[i][j % out.shape[2 + i]];
      j /= out.shape[2 + i];
    }
    return factor;
  };
  float *data = out.as<float>();
  if (channelsLast) {
    ctx.pool().parallelFor(
        0, images * planeSize, 1, [&](int64_t begin, int64_t end) {
          for (int64_t position = begin; position < end; ++position) {
            float factor = factorAt(position % planeSize);
            for (int64_t c = 0; c < channels; ++c)
              data[position * channels + c] *= factor;
          }
        });
    return;
  }
  ctx.pool().parallelFor(0, images * channels, 1,
                         [&](int64_t begin, int64_t end) {
                           for (int64_t plane = begin; plane < end; ++plane)
                             for (int64_t j = 0; j < planeSize; ++j)
                               data[plane * planeSize + j] *= factorAt(j);
                         });
}

} // namespace

void pool(KernelContext &ctx) {
  checkOperands(ctx, 1, 1);
  const TensorView &x = ctx.input(0), &out = ctx.output(0);
  size_t rank = x.shape.size();
  auto shapes = [&] {
    return shapeToString(x.shape) + " -> " + shapeToString(out.shape);
  };
  if (rank < 3 || rank > 5)
    throw ctx.error("supports 1 to 3 spatial dimensions, got " + shapes());
  size_t k = rank - 2;
  const std::string &kind = ctx.attrString("kind");
  dnnl::algorithm alg;
  if (kind == "max")
    alg = dnnl::algorithm::pooling_max;
  else if (kind == "avg_include_pad")
    alg = dnnl::algorithm::pooling_avg_include_padding;
  else if (kind == "avg_exclude_pad")
    alg = dnnl::algorithm::pooling_avg_exclude_padding;
  else
    throw ctx.error("has unknown pooling kind '" + kind +
                    "' (expected max, avg_include_pad or avg_exclude_pad)");
  if (!ctx.hasAttr("kernel"))
    throw ctx.error("has no attribute 'kernel'");
  std::vector<int64_t> kernel = intsAttr(ctx, "kernel", k, 1, 1);
  std::vector<int64_t> strides = intsAttr(ctx, "strides", k, 1, 1);
  std::vector<int64_t> dilations = intsAttr(ctx, "dilations", k, 1, 1);
  std::vector<int64_t> pads = intsAttr(ctx, "pads", 2 * k, 0, 0);
  if (out.shape.size() != rank || out.shape[0] != x.shape[0] ||
      out.shape[1] != x.shape[1])
    throw ctx.error("expects an output [N, C, ...] of X's rank, got " +
                    shapes());
  std::vector<int64_t> padR(k);
  for (size_t i = 0; i < k; ++i) {
    int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    int64_t span = x.shape[2 + i] + pads[i] + pads[k + i] - extent;
    if (span < 0)
      throw ctx.error("has a window larger than the padded input: " + shapes());
    int64_t floorOut = span / strides[i] + 1;
    int64_t ceilOut = (span + strides[i] - 1) / strides[i] + 1;
    int64_t o = out.shape[2 + i];
    if (o != floorOut && o != ceilOut)
      throw ctx.error("has output size " + std::to_string(o) +
                      " in spatial dimension " + std::to_string(i) +
                      "; the attributes allow " + std::to_string(floorOut) +
                      (ceilOut != floorOut ? " or " + std::to_string(ceilOut)
                                           : std::string()) +
                      ": " + shapes());
    // ONNX Runtime and PyTorch drop a last window that would start in the
    // right padding; oneDNN cannot compute one either.
    if ((o - 1) * strides[i] - pads[i] >= x.shape[2 + i])
      throw ctx.error(
          "has output size " + std::to_string(o) + " in spatial dimension " +
          std::to_string(i) +
          ", whose last window lies entirely in the padding: " + shapes());
    padR[i] = std::max(pads[k + i], (o - 1) * strides[i] + extent -
                                        x.shape[2 + i] - pads[i]);
  }
  if (out.numElements() == 0)
    return;

  translateErrors(ctx, [&] {
    ScopedOmpThreads threads(ctx);
    PoolState &state = ctx.state<PoolState>();
    std::vector<int64_t> key = shapeKey(ctx);
    if (state.key != key) {
      state.key.clear();
      state.src = activationDesc(ctx, "src_layout", x.shape);
      state.dst = activationDesc(ctx, "dst_layout", out.shape);
      dnnl::memory::desc primitiveDst = state.src == rowMajorDesc(x.shape)
                                            ? rowMajorDesc(out.shape)
                                            : channelsLastDesc(out.shape);
      state.convertDst = primitiveDst != state.dst;
      state.written = dnnl::memory();
      if (state.convertDst) {
        state.written = dnnl::memory(primitiveDst, cpuEngine());
        state.dstConversion =
            LayoutConversion(primitiveDst, state.dst, out.shape);
      }
      dnnl::memory::dims dnnlDilations, padL(pads.begin(), pads.begin() + k);
      for (int64_t d : dilations)
        dnnlDilations.push_back(d - 1);
      dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference,
                                          alg, state.src, primitiveDst, strides,
                                          kernel, dnnlDilations, padL, padR);
      state.primitive = dnnl::pooling_v2_forward(
          dnnl::pooling_v2_forward::primitive_desc(desc, cpuEngine()));
      state.rescale.clear();
      bool anyRescale = false;
      std::vector<std::vector<float>> factors(k);
      for (size_t i = 0; i < k; ++i) {
        int64_t limit = x.shape[2 + i] + pads[k + i];
        for (int64_t o = 0; o < out.shape[2 + i]; ++o) {
          int64_t inside = 0;
          for (int64_t t = 0; t < kernel[i]; ++t)
            inside += o * strides[i] - pads[i] + t * dilations[i] < limit;
          float factor = inside > 0 ? static_cast<float>(kernel[i]) /
                                          static_cast<float>(inside)
                                    : 1.f;
          anyRescale = anyRescale || factor != 1.f;
          factors[i].push_back(factor);
        }
      }
      if (alg == dnnl::algorithm::pooling_avg_include_padding && anyRescale)
        state.rescale = std::move(factors);
      state.stream = dnnl::stream(cpuEngine());
      state.key = std::move(key);
    }
    const dnnl::engine &engine = cpuEngine();
    dnnl::memory userDst(state.dst, engine, out.data);
    state.primitive.execute(
        state.stream,
        {{DNNL_ARG_SRC, dnnl::memory(state.src, engine, x.data)},
         {DNNL_ARG_DST, state.convertDst ? state.written : userDst}});
    if (state.convertDst)
      state.dstConversion.execute(state.stream, state.written, userDst);
    state.stream.wait();
    if (!state.rescale.empty())
      rescaleOutputs(ctx, out, state.rescale,
                     state.dst == channelsLastDesc(out.shape) &&
                         state.dst != rowMajorDesc(out.shape));
  });
}

} // namespace strata::rt::kernels::dnnl_support
