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
// A step the compiler marks `winograd` (a 3x3 convolution at stride 1, no
// groups) has two candidate primitives: oneDNN's direct convolution and its
// Winograd convolution, where the machine has one. The first run times both,
// each with its reorders, on the session's threads (into scratch buffers,
// so that the sum is read, never accumulated twice) and keeps the faster,
// for every later session of the process that runs the same convolution;
// STRATA_CONV_WINOGRAD=0 or 1 skips the timing and takes the direct or the
// Winograd kernel (docs/runtime.md, "Convolutions: Winograd, timed"). A step
// marked `winograd = 2` (the decisions file's "algorithm" entry) takes the
// Winograd kernel without timing, unless STRATA_CONV_WINOGRAD=0.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace strata::rt::kernels::dnnl_support {

namespace {

/// One candidate primitive with the conversions at its edges.
struct ConvPlan {
  dnnl::convolution_forward primitive;
  /// The module's descriptors: row-major, or channels-last for the
  /// activations the step's *_layout attributes name.
  dnnl::memory::desc userSrc, bias, userDst, userSum;
  /// The source and destination in the primitive's layouts, with the
  /// reorders into and out of them, when those differ from the module's.
  bool reorderSrc = false, reorderDst = false;
  dnnl::memory src, dst;
  LayoutConversion srcReorder, sumReorder, dstReorder;
  /// Whether the sum is converted (else copied) into the destination.
  bool reorderSum = false;
  /// The sum's bytes, when it must be converted into its own buffer.
  std::vector<uint8_t> sumCopy;
  PrimitiveWeights weights;
  /// oneDNN's name of the implementation ("brgconv:avx512_core", ...).
  std::string implementation;
};

struct ConvState : KernelState {
  std::vector<int64_t> key;
  ConvPlan plan;
  /// Which candidate the plan is, and how it was chosen ("" when the step
  /// is no Winograd candidate).
  std::string choice;
  dnnl::stream stream;
  std::string describe() const override { return choice; }
};

/// What the step's operands are, for one execution of a plan.
struct ConvOperands {
  const TensorView &x, &w;
  const TensorView *bias, *sum;
  void *out;
  size_t outBytes;
};

/// The plan's primitive for `alg` with `attr`, or false when oneDNN has no
/// implementation of it (Winograd on a machine without AVX-512, or a shape
/// its kernels do not take).
bool makePlan(ConvPlan &plan, const KernelContext &ctx, dnnl::algorithm alg,
              const dnnl::primitive_attr &attr, const ConvOperands &in,
              const dnnl::memory::dims &weightDims,
              const std::vector<int64_t> &outShape,
              const std::vector<int64_t> &strides,
              const dnnl::memory::dims &dilations,
              const dnnl::memory::dims &padL, const dnnl::memory::dims &padR) {
  using tag = dnnl::memory::format_tag;
  auto f32 = dnnl::memory::data_type::f32;
  const dnnl::engine &engine = cpuEngine();
  plan.userSrc = activationDesc(ctx, "src_layout", in.x.shape);
  plan.userDst = activationDesc(ctx, "dst_layout", outShape);
  plan.userSum = activationDesc(ctx, "sum_layout", outShape);
  dnnl::memory::desc userWeights = rowMajorDesc(weightDims);
  dnnl::memory::desc anySrc(in.x.shape, f32, tag::any),
      anyWeights(weightDims, f32, tag::any), anyDst(outShape, f32, tag::any);
  auto kind = dnnl::prop_kind::forward_inference;
  std::unique_ptr<dnnl::convolution_forward::desc> desc;
  if (in.bias) {
    plan.bias = rowMajorDesc({in.w.shape[0]});
    desc = std::make_unique<dnnl::convolution_forward::desc>(
        kind, alg, anySrc, anyWeights, plan.bias, anyDst, strides, dilations,
        padL, padR);
  } else {
    desc = std::make_unique<dnnl::convolution_forward::desc>(
        kind, alg, anySrc, anyWeights, anyDst, strides, dilations, padL, padR);
  }
  dnnl::convolution_forward::primitive_desc pd;
  if (alg == dnnl::algorithm::convolution_direct) {
    pd = dnnl::convolution_forward::primitive_desc(*desc, attr, engine);
  } else {
    // No implementation is an answer here, not an error (allow_empty).
    pd = dnnl::convolution_forward::primitive_desc(*desc, attr, engine,
                                                   /*allow_empty=*/true);
    if (!pd)
      return false;
  }
  plan.primitive = dnnl::convolution_forward(pd);
  plan.implementation = pd.impl_info_str();

  plan.reorderSrc = pd.src_desc() != plan.userSrc;
  plan.src = dnnl::memory();
  if (plan.reorderSrc) {
    plan.src = dnnl::memory(pd.src_desc(), engine);
    plan.srcReorder = LayoutConversion(plan.userSrc, pd.src_desc(), in.x.shape);
  }
  plan.reorderDst = pd.dst_desc() != plan.userDst;
  plan.dst = dnnl::memory();
  if (plan.reorderDst) {
    plan.dst = dnnl::memory(pd.dst_desc(), engine);
    plan.dstReorder = LayoutConversion(pd.dst_desc(), plan.userDst, outShape);
  }
  // The sum goes into the destination the primitive writes.
  const dnnl::memory::desc &sumTarget =
      plan.reorderDst ? pd.dst_desc() : plan.userDst;
  plan.reorderSum = in.sum && plan.userSum != sumTarget;
  if (plan.reorderSum)
    plan.sumReorder = LayoutConversion(plan.userSum, sumTarget, outShape);
  plan.weights.prepare(userWeights, pd.weights_desc(), engine);
  return true;
}

/// Runs `plan` on the operands, its result into `in.out`.
void execute(ConvPlan &plan, const KernelContext &ctx, dnnl::stream &stream,
             const ConvOperands &in) {
  const dnnl::engine &engine = cpuEngine();
  dnnl::memory weights = plan.weights.get(ctx, 1, stream, in.w.data);
  dnnl::memory src(plan.userSrc, engine, in.x.data);
  if (plan.reorderSrc) {
    plan.srcReorder.execute(stream, src, plan.src);
    src = plan.src;
  }
  dnnl::memory userDst(plan.userDst, engine, in.out);
  dnnl::memory dst = plan.reorderDst ? plan.dst : userDst;
  if (in.sum) {
    // The sum post-op accumulates into the destination. The plan gives
    // the result the sum's own buffer when nothing reads the sum later
    // (kernel::Accumulates): then it is there already, unless the
    // destination's layout differs, and a reorder cannot run in place.
    if (plan.reorderSum) {
      const void *from = in.sum->data;
      if (in.sum->data == in.out && !plan.reorderDst) {
        plan.sumCopy.resize(in.outBytes);
        copyInParallel(plan.sumCopy.data(), in.sum->data, in.outBytes);
        from = plan.sumCopy.data();
      }
      dnnl::memory userSum(plan.userSum, engine, const_cast<void *>(from));
      plan.sumReorder.execute(stream, userSum, dst);
    } else if (in.sum->data != dst.get_data_handle()) {
      copyInParallel(dst.get_data_handle(), in.sum->data, in.outBytes);
    }
  }
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (in.bias)
    args.emplace(DNNL_ARG_BIAS, dnnl::memory(plan.bias, engine, in.bias->data));
  plan.primitive.execute(stream, args);
  if (plan.reorderDst)
    plan.dstReorder.execute(stream, dst, userDst);
  stream.wait();
}

/// The fastest of `repeats` runs of `plan` into `scratch` (not the step's
/// output: the sum, which may live there, must stay as it is), seconds.
double timePlan(ConvPlan &plan, const KernelContext &ctx, dnnl::stream &stream,
                ConvOperands in, void *scratch, int repeats) {
  in.out = scratch;
  execute(plan, ctx, stream, in); // warm: caches, the weights' reorder
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    execute(plan, ctx, stream, in);
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

/// How much faster than the direct kernel the Winograd kernel must time to
/// be kept.
constexpr double kWinogradMargin = 0.9;

/// The choices made in this process, by the convolution's shapes and
/// attributes: the first session to run a candidate times it, and every
/// later one (of any module or thread count) takes its answer, so that the
/// sessions of one process compute the same bits.
struct ChoiceMemo {
  std::mutex mutex;
  std::map<std::string, bool> winograd;
};

ChoiceMemo &choiceMemo() {
  static ChoiceMemo *memo = new ChoiceMemo; // never destroyed: used at exit
  return *memo;
}

/// The answer stored for `key`, if a session has timed it.
std::optional<bool> rememberedChoice(const std::string &key) {
  ChoiceMemo &memo = choiceMemo();
  std::lock_guard<std::mutex> lock(memo.mutex);
  auto it = memo.winograd.find(key);
  if (it == memo.winograd.end())
    return std::nullopt;
  return it->second;
}

/// Stores `winograd` for `key` unless another session stored first; returns
/// the stored answer.
bool rememberChoice(const std::string &key, bool winograd) {
  ChoiceMemo &memo = choiceMemo();
  std::lock_guard<std::mutex> lock(memo.mutex);
  return memo.winograd.emplace(key, winograd).first->second;
}

/// What makes two candidate steps the same convolution.
std::string choiceKey(const KernelContext &ctx) {
  std::string key;
  for (int64_t d : shapeKey(ctx))
    key += std::to_string(d) + ",";
  for (const char *name : {"strides", "dilations", "pads"})
    if (ctx.hasAttr(name))
      for (int64_t v : ctx.attrInts(name))
        key += std::string(name) + std::to_string(v) + ",";
  for (const char *name :
       {"src_layout", "dst_layout", "sum_layout", "activation"})
    if (ctx.hasAttr(name))
      key += std::string(name) + "=" + ctx.attrString(name) + ",";
  return key;
}

/// STRATA_CONV_WINOGRAD: "0" never, "1" always where oneDNN has it, unset
/// (or anything else) timed.
int winogradOverride() {
  const char *value = std::getenv("STRATA_CONV_WINOGRAD");
  if (!value)
    return -1;
  std::string v = value;
  return v == "0" ? 0 : v == "1" ? 1 : -1;
}

std::string microseconds(double seconds) {
  return std::to_string(static_cast<long long>(seconds * 1e6 + 0.5)) + " us";
}

} // namespace

void conv(KernelContext &ctx) {
  checkOperands(ctx, 2, 4);
  const TensorView &x = ctx.input(0), &w = ctx.input(1);
  const TensorView *outView = &ctx.output(0);
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
    return s + " -> " + shapeToString(outView->shape);
  };
  if (rank < 3 || rank > 5)
    throw ctx.error("supports 1 to 3 spatial dimensions, got " + shapes());
  size_t k = rank - 2;
  if (w.shape.size() != rank || outView->shape.size() != rank)
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
  // A Host output (rows known only at run time: a detector's heads over its
  // proposals) takes the shape the inputs give.
  bool runTime = std::any_of(outView->shape.begin(), outView->shape.end(),
                             [](int64_t d) { return d < 0; });
  if (outView->shape != expected && !runTime)
    throw ctx.error("expects the output shape " + shapeToString(expected) +
                    ", got " + shapes());
  const TensorView &out = ctx.allocateOutput(0, expected);
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
    ConvOperands in{x, w, bias, sum, out.data, out.byteSize()};
    if (state.key != key) {
      state.key.clear();
      // Grouped weights are [G, M/G, C/G, K...]: the same bytes as W.
      dnnl::memory::dims weightDims = w.shape;
      if (group > 1) {
        weightDims[0] = m / group;
        weightDims.insert(weightDims.begin(), group);
      }
      dnnl::memory::dims dnnlDilations, padL, padR;
      for (size_t i = 0; i < k; ++i) {
        dnnlDilations.push_back(dilations[i] - 1);
        padL.push_back(pads[i]);
        padR.push_back(pads[k + i]);
      }
      dnnl::post_ops ops;
      if (sum)
        ops.append_sum(1.f);
      appendActivation(ctx, ops);
      dnnl::primitive_attr attr;
      attr.set_post_ops(ops);
      state.stream = dnnl::stream(engine);
      auto make = [&](ConvPlan &plan, dnnl::algorithm alg) {
        return makePlan(plan, ctx, alg, attr, in, weightDims, out.shape,
                        strides, dnnlDilations, padL, padR);
      };
      state.plan = ConvPlan();
      state.choice = "";
      int override = winogradOverride();
      // 1: a candidate, timed; 2: the decisions file forces Winograd.
      int64_t mark = ctx.hasAttr("winograd") ? ctx.attrInt("winograd") : 0;
      bool candidate = mark != 0;
      ConvPlan winograd;
      if (candidate && override != 0 &&
          make(winograd, dnnl::algorithm::convolution_winograd)) {
        if (override == 1 || mark == 2) {
          state.plan = std::move(winograd);
          state.choice = override == 1 ? "winograd (STRATA_CONV_WINOGRAD=1)"
                                       : "winograd (the decisions file)";
        } else {
          std::string memoKey = choiceKey(ctx);
          std::optional<bool> chosen = rememberedChoice(memoKey);
          std::string how = ": as timed by an earlier step of this process";
          bool haveDirect = false;
          if (!chosen) {
            make(state.plan, dnnl::algorithm::convolution_direct);
            haveDirect = true;
            std::vector<uint8_t> scratch(out.byteSize());
            constexpr int kRepeats = 3;
            double direct = timePlan(state.plan, ctx, state.stream, in,
                                     scratch.data(), kRepeats);
            double wino = timePlan(winograd, ctx, state.stream, in,
                                   scratch.data(), kRepeats);
            // A margin: the timing runs on hot caches and may be off by a
            // few percent, and a near tie is not worth the reorders that the
            // Winograd kernel's blocked layout costs the steps around it.
            bool faster = wino < kWinogradMargin * direct;
            // A session that timed the same convolution at the same time
            // and stored its answer first decides.
            chosen = rememberChoice(memoKey, faster);
            if (*chosen == faster)
              how = ": timed " + microseconds(wino) + " winograd, " +
                    microseconds(direct) + " direct";
          }
          if (*chosen)
            state.plan = std::move(winograd);
          else if (!haveDirect)
            make(state.plan, dnnl::algorithm::convolution_direct);
          state.choice = std::string(*chosen ? "winograd" : "direct") + how;
        }
      } else {
        make(state.plan, dnnl::algorithm::convolution_direct);
        if (candidate)
          state.choice = override == 0
                             ? "direct (STRATA_CONV_WINOGRAD=0)"
                             : "direct: oneDNN has no Winograd kernel for "
                               "this shape on this machine";
      }
      if (!state.choice.empty())
        state.choice += " [" + state.plan.implementation + "]";
      state.key = std::move(key);
    }
    execute(state.plan, ctx, state.stream, in);
  });
}

namespace {

struct DeconvState : KernelState {
  std::vector<int64_t> key;
  dnnl::deconvolution_forward primitive;
  dnnl::memory::desc src, bias, dst;
  PrimitiveWeights weights;
  dnnl::stream stream;
};

} // namespace

/// ONNX ConvTranspose (X [N, C, D...], W [C, M/group, k...], B [M]) as
/// oneDNN's deconvolution, on row-major activations; the weights are
/// reordered into the primitive's layout (once for a constant). Its steps
/// are the host steps of convolutions on images known only at run time, so
/// the output shape is computed here: stride * (in - 1) + output_padding +
/// dilation * (k - 1) + 1 - pads.
void convTranspose(KernelContext &ctx) {
  checkOperands(ctx, 2, 3);
  const TensorView &x = ctx.input(0), &w = ctx.input(1);
  const TensorView *bias = ctx.numInputs() == 3 ? &ctx.input(2) : nullptr;
  size_t rank = x.shape.size();
  auto shapes = [&] {
    std::string s =
        "X " + shapeToString(x.shape) + ", W " + shapeToString(w.shape);
    if (bias)
      s += ", B " + shapeToString(bias->shape);
    return s;
  };
  if (rank < 3 || rank > 5 || w.shape.size() != rank)
    throw ctx.error("supports 1 to 3 spatial dimensions, got " + shapes());
  std::string autoPad =
      ctx.hasAttr("auto_pad") ? ctx.attrString("auto_pad") : "NOTSET";
  size_t k = rank - 2;
  std::vector<int64_t> strides = intsAttr(ctx, "strides", k, 1, 1);
  std::vector<int64_t> dilations = intsAttr(ctx, "dilations", k, 1, 1);
  std::vector<int64_t> pads(2 * k, 0);
  if (ctx.hasAttr("pads")) {
    pads = ctx.attrInts("pads");
    if (pads.size() != 2 * k)
      throw ctx.error("has " + std::to_string(pads.size()) + " pads for " +
                      std::to_string(k) + " spatial dimensions");
  }
  std::vector<int64_t> extra = intsAttr(ctx, "output_padding", k, 0, 0);
  int64_t group = ctx.hasAttr("group") ? ctx.attrInt("group") : 1;
  int64_t n = x.shape[0], channels = x.shape[1];
  if (group < 1 || channels % group != 0 || w.shape[0] != channels)
    throw ctx.error("has channels that do not fit group " +
                    std::to_string(group) + ": " + shapes());
  int64_t m = w.shape[1] * group;
  if (bias && bias->shape != std::vector<int64_t>{m})
    throw ctx.error("expects B of shape [" + std::to_string(m) + "], got " +
                    shapes());
  // output_shape, or auto_pad SAME_* (in * stride), sets the pads (ONNX's
  // equations; they may be negative: the output then has rows no input
  // reaches, which hold the bias).
  std::vector<int64_t> target;
  if (ctx.hasAttr("output_shape")) {
    const std::vector<int64_t> &given = ctx.attrInts("output_shape");
    if (given.size() < k)
      throw ctx.error("has output_shape of " + std::to_string(given.size()) +
                      " values for " + std::to_string(k) +
                      " spatial dimensions");
    target.assign(given.end() - k, given.end());
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < k; ++i)
      target.push_back(x.shape[2 + i] * strides[i]);
  } else if (autoPad != "NOTSET" && autoPad != "VALID") {
    throw ctx.error("has auto_pad '" + autoPad + "'");
  }
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t total = strides[i] * (x.shape[2 + i] - 1) + extra[i] +
                    (w.shape[2 + i] - 1) * dilations[i] + 1 - target[i];
    int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
    pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
    pads[k + i] = total - pads[i];
  }
  std::vector<int64_t> outShape = {n, m};
  for (size_t i = 0; i < k; ++i) {
    int64_t size = strides[i] * (x.shape[2 + i] - 1) + extra[i] +
                   dilations[i] * (w.shape[2 + i] - 1) + 1 - pads[i] -
                   pads[k + i];
    if (size < 0)
      throw ctx.error("has an output size " + std::to_string(size) +
                      " along spatial axis " + std::to_string(i) + ": " +
                      shapes());
    outShape.push_back(size);
  }
  // oneDNN takes pads of at least 0 and no output_padding: it computes the
  // window those give, and the step places it in the output.
  std::vector<int64_t> padL(k), padR(k), computed = {n, m};
  bool placed = false;
  for (size_t i = 0; i < k; ++i) {
    padL[i] = std::max<int64_t>(pads[i], 0);
    padR[i] = std::max<int64_t>(pads[k + i] - extra[i], 0);
    placed |= padL[i] != pads[i] || padR[i] != pads[k + i] - extra[i];
    computed.push_back(strides[i] * (x.shape[2 + i] - 1) +
                       dilations[i] * (w.shape[2 + i] - 1) + 1 - padL[i] -
                       padR[i]);
  }
  const TensorView &out = ctx.allocateOutput(0, outShape);
  if (out.numElements() == 0)
    return;
  if (x.numElements() == 0 || w.numElements() == 0)
    throw ctx.error("does not support empty inputs: " + shapes());

  translateErrors(ctx, [&] {
    ScopedOmpThreads threads(ctx);
    DeconvState &state = ctx.state<DeconvState>();
    const dnnl::engine &engine = cpuEngine();
    std::vector<int64_t> key = shapeKey(ctx);
    if (state.key != key) {
      state.key.clear();
      using tag = dnnl::memory::format_tag;
      auto f32 = dnnl::memory::data_type::f32;
      state.src = rowMajorDesc(x.shape);
      state.dst = rowMajorDesc(computed);
      // ONNX's W [C, M/G, k...] is oneDNN's weights [M, C, k...] (or
      // [G, M/G, C/G, k...]) in its "io" order.
      dnnl::memory::dims weightDims = {m, channels};
      weightDims.insert(weightDims.end(), w.shape.begin() + 2, w.shape.end());
      int64_t taps = product(w.shape, 2, rank);
      dnnl::memory::dims weightStrides = {taps, m / group * taps};
      for (size_t i = 2; i < rank; ++i)
        weightStrides.push_back(product(w.shape, i + 1, rank));
      if (group > 1) {
        weightDims[0] = m / group;
        weightDims[1] = channels / group;
        weightDims.insert(weightDims.begin(), group);
        weightStrides.insert(weightStrides.begin(),
                             channels / group * weightStrides[1]);
      }
      dnnl::memory::desc userWeights(weightDims, f32, weightStrides);
      dnnl::memory::desc anyWeights(weightDims, f32, tag::any);
      dnnl::memory::dims dnnlDilations;
      for (size_t i = 0; i < k; ++i)
        dnnlDilations.push_back(dilations[i] - 1);
      auto kind = dnnl::prop_kind::forward_inference;
      auto alg = dnnl::algorithm::deconvolution_direct;
      std::unique_ptr<dnnl::deconvolution_forward::desc> desc;
      if (bias) {
        state.bias = rowMajorDesc({m});
        desc = std::make_unique<dnnl::deconvolution_forward::desc>(
            kind, alg, state.src, anyWeights, state.bias, state.dst, strides,
            dnnlDilations, padL, padR);
      } else {
        desc = std::make_unique<dnnl::deconvolution_forward::desc>(
            kind, alg, state.src, anyWeights, state.dst, strides, dnnlDilations,
            padL, padR);
      }
      dnnl::deconvolution_forward::primitive_desc pd(*desc, engine);
      state.primitive = dnnl::deconvolution_forward(pd);
      state.weights.prepare(userWeights, pd.weights_desc(), engine);
      state.stream = dnnl::stream(engine);
      state.key = std::move(key);
    }
    dnnl::memory weights = state.weights.get(ctx, 1, state.stream, w.data);
    Tensor window;
    void *dst = out.data;
    if (placed) {
      window = Tensor::zeros(DType::F32, computed);
      dst = window.rawData();
    }
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, dnnl::memory(state.src, engine, x.data)},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, dnnl::memory(state.dst, engine, dst)}};
    if (bias)
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(state.bias, engine, bias->data));
    state.primitive.execute(state.stream, args);
    state.stream.wait();
    if (!placed)
      return;
    // Output position p is the window's p + pads - padL: outside it, the
    // bias alone.
    const float *from = window.data<float>();
    auto *to = static_cast<float *>(out.data);
    int64_t inner = product(outShape, 2, rank);
    int64_t windowInner = product(computed, 2, rank);
    std::vector<int64_t> index(k);
    for (int64_t image = 0; image < n * m; ++image) {
      float b = bias ? static_cast<const float *>(bias->data)[image % m] : 0.f;
      for (int64_t p = 0; p < inner; ++p) {
        int64_t rest = p, source = 0;
        bool inside = true;
        for (size_t i = k; i-- > 0;) {
          int64_t at = rest % outShape[2 + i] + pads[i] - padL[i];
          rest /= outShape[2 + i];
          inside = inside && at >= 0 && at < computed[2 + i];
          index[i] = at;
        }
        for (size_t i = 0; inside && i < k; ++i)
          source = source * computed[2 + i] + index[i];
        to[image * inner + p] = inside ? from[image * windowInner + source] : b;
      }
    }
  });
}

} // namespace strata::rt::kernels::dnnl_support
