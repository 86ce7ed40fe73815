//===- DnnlConvTest.cpp - Tests of "dnnl.conv" ------------------*- C++ -*-===//
//
// "dnnl.conv" against a naive fp64 reference over 1, 2 and 3 spatial
// dimensions: groups, strides, dilations, asymmetric pads, bias, the `sum`
// input, activations, constant weights reused across runs, the conversions
// to and from oneDNN's layouts, and the shape checks.
//
//===----------------------------------------------------------------------===//

#include "DnnlTestUtil.h"

#include <cstdlib>
#include <optional>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

struct ConvCase {
  std::vector<int64_t> xShape, wShape;
  std::vector<int64_t> strides, dilations, pads;
  int64_t group = 1;
  bool bias = false, sum = false, constantW = false;
  std::string activation;
  double activationAlpha = 0;
  /// X, the sum and the output are channels-last buffers (the step's
  /// src_layout, sum_layout and dst_layout attributes).
  bool channelsLast = false;
  /// The compiler's mark of a Winograd candidate (the `winograd` attribute).
  bool winograd = false;

  size_t k() const { return xShape.size() - 2; }
  std::vector<int64_t> outShape() const {
    std::vector<int64_t> out = {xShape[0], wShape[0]};
    for (size_t i = 0; i < k(); ++i)
      out.push_back((xShape[2 + i] + pads[i] + pads[k() + i] -
                     ((wShape[2 + i] - 1) * dilations[i] + 1)) /
                        strides[i] +
                    1);
    return out;
  }
  std::vector<Attribute> attrs() const {
    std::vector<Attribute> result = {
        intsAttr("strides", strides), intsAttr("dilations", dilations),
        intsAttr("pads", pads), intsAttr("group", {group})};
    if (!activation.empty()) {
      result.push_back(stringAttr("activation", activation));
      result.push_back(floatAttr("activation_alpha", activationAlpha));
    }
    if (channelsLast)
      for (const char *key : {"src_layout", "dst_layout", "sum_layout"})
        result.push_back(stringAttr(key, "channels_last"));
    if (winograd)
      result.push_back(intsAttr("winograd", {1}));
    return result;
  }
  std::vector<StepOperand> operands(unsigned seed) const {
    std::vector<StepOperand> ops = {
        {randomTensor(xShape, seed)},
        {randomTensor(wShape, seed + 1), constantW}};
    if (bias)
      ops.push_back({randomTensor({wShape[0]}, seed + 2)});
    if (sum)
      ops.push_back({randomTensor(outShape(), seed + 3)});
    return ops;
  }

  /// The reference: one loop nest over outputs, input channels of the
  /// group and kernel taps; taps that land in the padding add nothing.
  std::vector<double> reference(const std::vector<StepOperand> &ops) const {
    const float *x = ops[0].value.data<float>(),
                *w = ops[1].value.data<float>();
    const float *b = bias ? ops[2].value.data<float>() : nullptr;
    const float *s = sum ? ops.back().value.data<float>() : nullptr;
    std::vector<int64_t> out = outShape();
    std::vector<int64_t> xStr = rowMajor(xShape), wStr = rowMajor(wShape),
                         oStr = rowMajor(out);
    int64_t total = 1, taps = 1;
    for (int64_t d : out)
      total *= d;
    for (size_t i = 0; i < k(); ++i)
      taps *= wShape[2 + i];
    int64_t cPerGroup = wShape[1], mPerGroup = wShape[0] / group;
    std::vector<double> result(total);
    for (int64_t flat = 0; flat < total; ++flat) {
      std::vector<int64_t> idx(out.size());
      for (size_t d = 0; d < out.size(); ++d)
        idx[d] = flat / oStr[d] % out[d];
      int64_t n = idx[0], m = idx[1], g = m / mPerGroup;
      double acc = b ? b[m] : 0;
      for (int64_t ci = 0; ci < cPerGroup; ++ci)
        for (int64_t t = 0; t < taps; ++t) {
          int64_t xOff = n * xStr[0] + (g * cPerGroup + ci) * xStr[1];
          int64_t wOff = m * wStr[0] + ci * wStr[1];
          bool inside = true;
          int64_t rest = t;
          for (size_t i = k(); i-- > 0;) {
            int64_t tap = rest % wShape[2 + i];
            rest /= wShape[2 + i];
            int64_t pos =
                idx[2 + i] * strides[i] - pads[i] + tap * dilations[i];
            inside = inside && pos >= 0 && pos < xShape[2 + i];
            xOff += pos * xStr[2 + i];
            wOff += tap * wStr[2 + i];
          }
          if (inside)
            acc += static_cast<double>(x[xOff]) * w[wOff];
        }
      if (s)
        acc += s[flat];
      result[flat] = refActivation(activation, acc, activationAlpha, 0);
    }
    return result;
  }

  /// Runs `ops` (row-major) through the session, converting X, the sum and
  /// the output when the buffers are channels-last.
  Tensor run(Session &session, const std::vector<StepOperand> &ops) const {
    if (!channelsLast)
      return runOnce(session, ops);
    std::vector<StepOperand> stored = ops;
    stored[0].value = reorderChannels(ops[0].value, true);
    if (sum)
      stored.back().value = reorderChannels(ops.back().value, true);
    return reorderChannels(runOnce(session, stored), false);
  }

  /// Returns what the step chose (Session::stepChoice).
  std::string check(unsigned threads = 2) const {
    std::vector<StepOperand> ops = operands(7);
    Session session(oneStepModule("dnnl.conv", ops, outShape(), attrs()),
                    {threads});
    expectClose(run(session, ops), reference(ops));
    // A second run with new data (and the cached primitive and weights).
    std::vector<StepOperand> next = operands(70);
    next[1] = ops[1];
    expectClose(run(session, next), reference(next));
    return session.stepChoice(0);
  }
};

} // namespace

TEST(DnnlConv, Conv2DGroupsStridesDilationsPadsBiasSumLeakyRelu) {
  ConvCase c;
  c.xShape = {2, 4, 11, 10};
  c.wShape = {6, 2, 3, 2};
  c.group = 2;
  c.strides = {2, 2};
  c.dilations = {2, 2};
  c.pads = {1, 0, 2, 3};
  c.bias = c.sum = true;
  c.activation = "leaky_relu";
  c.activationAlpha = 0.1;
  EXPECT_EQ(c.outShape(), (std::vector<int64_t>{2, 6, 5, 6}));
  for (bool constantW : {false, true}) {
    SCOPED_TRACE(constantW ? "constant W" : "W an input");
    c.constantW = constantW;
    c.check(1);
    c.check(3);
  }
}

TEST(DnnlConv, Conv1D) {
  ConvCase c;
  c.xShape = {2, 3, 17};
  c.wShape = {5, 3, 4};
  c.strides = {3};
  c.dilations = {1};
  c.pads = {2, 1};
  c.bias = true;
  c.activation = "relu";
  c.check();
}

TEST(DnnlConv, Conv3D) {
  ConvCase c;
  c.xShape = {1, 2, 6, 5, 7};
  c.wShape = {4, 2, 2, 3, 2};
  c.strides = {1, 2, 1};
  c.dilations = {1, 1, 2};
  c.pads = {0, 1, 1, 1, 0, 0};
  c.constantW = true;
  c.check();
}

TEST(DnnlConv, SumWithoutBiasAndDepthwise) {
  ConvCase c;
  c.xShape = {1, 4, 6, 6};
  c.wShape = {4, 1, 3, 3};
  c.group = 4;
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.pads = {1, 1, 1, 1};
  c.sum = true; // three inputs: the third is the sum (rank 4), not a bias
  c.activation = "sigmoid";
  c.check();
}

// Shapes big enough that oneDNN runs channels-last and the kernel's own
// transposes (DnnlCommon.cpp) cover whole tiles, tails and several images:
// a pointwise conv (more spatial positions than channels) and a depthwise
// one with a sum (more channels than output positions).
TEST(DnnlConv, ChannelsLastConversions) {
  ConvCase pointwise;
  pointwise.xShape = {2, 20, 37, 9};
  pointwise.wShape = {24, 20, 1, 1};
  pointwise.strides = {1, 1};
  pointwise.dilations = {1, 1};
  pointwise.pads = {0, 0, 0, 0};
  pointwise.bias = pointwise.constantW = true;
  pointwise.activation = "relu";
  pointwise.check(1);
  pointwise.check(3);

  ConvCase depthwise;
  depthwise.xShape = {3, 72, 13, 11};
  depthwise.wShape = {72, 1, 3, 3};
  depthwise.group = 72;
  depthwise.strides = {2, 2};
  depthwise.dilations = {1, 1};
  depthwise.pads = {1, 1, 1, 1};
  depthwise.bias = depthwise.sum = depthwise.constantW = true;
  depthwise.check(1);
  depthwise.check(3);
}

// Buffers the compiler keeps channels-last between oneDNN steps
// (lib/Compiler/Layouts.cpp): no conversion at the step's edges, and the
// same values.
TEST(DnnlConv, ChannelsLastBuffers) {
  ConvCase c;
  c.xShape = {2, 16, 9, 7};
  c.wShape = {32, 16, 3, 3};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.pads = {1, 1, 1, 1};
  c.bias = c.sum = c.constantW = true;
  c.activation = "relu";
  c.channelsLast = true;
  c.check(1);
  c.check(3);

  ConvCase depthwise;
  depthwise.xShape = {1, 24, 10, 10};
  depthwise.wShape = {24, 1, 3, 3};
  depthwise.group = 24;
  depthwise.strides = {2, 2};
  depthwise.dilations = {1, 1};
  depthwise.pads = {1, 1, 1, 1};
  depthwise.constantW = depthwise.channelsLast = true;
  depthwise.check(2);
}

/// Sets STRATA_CONV_WINOGRAD for a scope ("" unsets it), and restores it.
class ScopedWinogradEnv {
public:
  explicit ScopedWinogradEnv(const std::string &value) {
    if (const char *old = std::getenv(kName))
      old_ = old;
    if (value.empty())
      unsetenv(kName);
    else
      setenv(kName, value.c_str(), 1);
  }
  ~ScopedWinogradEnv() {
    if (old_)
      setenv(kName, old_->c_str(), 1);
    else
      unsetenv(kName);
  }

private:
  static constexpr const char *kName = "STRATA_CONV_WINOGRAD";
  std::optional<std::string> old_;
};

// A 3x3 convolution the compiler marks as a Winograd candidate: the same
// values (against the fp64 reference) whether the runtime times the two
// kernels (unset), takes oneDNN's Winograd kernel ("1") or the direct one
// ("0"), with a bias, a residual and an activation in either layout; and
// the step says what it chose. A machine without AVX-512 has no Winograd
// kernel in oneDNN 2.6: the step then says so and runs the direct one.
TEST(DnnlConv, WinogradCandidate) {
  ConvCase c;
  c.xShape = {2, 32, 14, 13};
  c.wShape = {48, 32, 3, 3};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.pads = {1, 1, 1, 1};
  c.bias = c.sum = c.constantW = c.winograd = true;
  c.activation = "relu";
  for (bool channelsLast : {false, true}) {
    SCOPED_TRACE(channelsLast ? "channels-last" : "row-major");
    c.channelsLast = channelsLast;
    for (unsigned threads : {1u, 2u}) {
      {
        ScopedWinogradEnv env("1");
        std::string choice = c.check(threads);
        EXPECT_TRUE(
            choice.rfind("winograd (STRATA_CONV_WINOGRAD=1) [", 0) == 0 ||
            choice.rfind("direct: oneDNN has no Winograd kernel", 0) == 0)
            << choice;
        if (choice.rfind("winograd", 0) == 0)
          EXPECT_THAT(choice, HasSubstr("wino"));
      }
      {
        ScopedWinogradEnv env("0");
        EXPECT_THAT(c.check(threads),
                    HasSubstr("direct (STRATA_CONV_WINOGRAD=0)"));
      }
      ScopedWinogradEnv env("");
      std::string choice = c.check(threads);
      // Timed by the first session of this shape in the process, taken
      // from it by the later ones.
      EXPECT_TRUE(choice.find(" us winograd, ") != std::string::npos ||
                  choice.find(": as timed by an earlier step of this "
                              "process") != std::string::npos ||
                  choice.rfind("direct: oneDNN has no Winograd kernel", 0) == 0)
          << choice;
    }
  }
  // Without the compiler's mark there is no choice to make.
  c.winograd = false;
  ScopedWinogradEnv env("1");
  EXPECT_EQ(c.check(2), "");
}

TEST(DnnlConv, UnknownLayoutIsAnError) {
  ConvCase c;
  c.xShape = {1, 2, 4, 4};
  c.wShape = {2, 2, 1, 1};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.pads = {0, 0, 0, 0};
  std::vector<Attribute> attrs = c.attrs();
  attrs.push_back(stringAttr("src_layout", "nchw16c"));
  std::vector<StepOperand> ops = c.operands(3);
  Session session(oneStepModule("dnnl.conv", ops, c.outShape(), attrs), {1});
  try {
    runOnce(session, ops);
    FAIL() << "an unknown layout was accepted";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("src_layout = 'nchw16c'"));
  }
}

TEST(DnnlConv, ShapeMismatchesAreErrors) {
  ConvCase c;
  c.xShape = {1, 4, 8, 8};
  c.wShape = {6, 2, 3, 3};
  c.group = 2;
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.pads = {0, 0, 0, 0};
  c.bias = true;
  auto run = [&](const ConvCase &cc, std::vector<int64_t> outShape) {
    return errorOf(
        [&] { runStep("dnnl.conv", cc.operands(1), outShape, cc.attrs()); });
  };
  EXPECT_THAT(run(c, {1, 6, 7, 6}),
              HasSubstr("expects the output shape [1, 6, 6, 6], got X [1, 4, "
                        "8, 8], W [6, 2, 3, 3], B [6] -> [1, 6, 7, 6]"));
  ConvCase badGroup = c;
  badGroup.group = 3;
  EXPECT_THAT(run(badGroup, {1, 6, 6, 6}),
              HasSubstr("channels that do not fit group 3"));
  ConvCase badStrides = c;
  badStrides.strides = {1};
  EXPECT_THAT(run(badStrides, {1, 6, 6, 6}),
              HasSubstr("attribute 'strides' has 1 values, expected 2"));
  badStrides.strides = {0, 1};
  EXPECT_THAT(run(badStrides, {1, 6, 6, 6}),
              HasSubstr("expected values from 1 to 2147483647"));
  // Found by fuzz/module.cpp: a dilation near 2^62 overflowed the kernel's
  // extent before any check.
  ConvCase hugeDilation = c;
  hugeDilation.dilations = {int64_t{4611967493404098561}, 1};
  EXPECT_THAT(run(hugeDilation, {1, 6, 6, 6}),
              HasSubstr("attribute 'dilations' has value 4611967493404098561"));
  ConvCase bigKernel = c;
  bigKernel.wShape = {6, 2, 9, 3};
  EXPECT_THAT(run(bigKernel, {1, 6, 1, 6}),
              HasSubstr("kernel larger than the padded input"));

  std::vector<StepOperand> ops = c.operands(1);
  ops[2].value = randomTensor({5}, 3);
  EXPECT_THAT(errorOf([&] {
                runStep("dnnl.conv", ops, {1, 6, 6, 6}, c.attrs());
              }),
              HasSubstr("expects B of shape [6]"));
  ops = c.operands(1);
  ops.push_back({randomTensor({1, 6, 6, 5}, 4)});
  EXPECT_THAT(errorOf([&] {
                runStep("dnnl.conv", ops, {1, 6, 6, 6}, c.attrs());
              }),
              HasSubstr("sum input in the output's shape"));
  ops = {{randomTensor({4, 8}, 1)}, {randomTensor({6, 4}, 2)}};
  EXPECT_THAT(errorOf([&] {
                runStep("dnnl.conv", ops, {4, 6}, {});
              }),
              HasSubstr("supports 1 to 3 spatial dimensions"));
}

// The compiler's plan lets a convolution with a residual write in place of
// the residual when nothing reads it later (kernel::Accumulates): the sum
// and the output are one arena buffer. Two steps: an identity 1x1
// convolution puts the residual into the arena (row-major), then the
// convolution adds onto it in place, writing row-major (nothing to
// convert) or channels-last (the row-major sum is converted into the
// layout of the buffer that holds it, which cannot be done in place).
TEST(DnnlConv, SumInPlaceOfItsOwnBuffer) {
  ConvCase c;
  c.xShape = {2, 8, 9, 7};
  c.wShape = {16, 8, 3, 3};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.pads = {1, 1, 1, 1};
  c.bias = c.sum = true;
  std::vector<int64_t> out = c.outShape();
  std::vector<StepOperand> ops = c.operands(11);
  Tensor identity = Tensor::zeros(DType::F32, {out[1], out[1], 1, 1});
  for (int64_t i = 0; i < out[1]; ++i)
    identity.data<float>()[i * out[1] + i] = 1.f;
  // The Winograd candidate's timing runs write scratch, never the buffer
  // that holds the sum (timed: unset; "1": the Winograd kernel's blocked
  // destination, into which the sum is converted).
  c.winograd = true;
  for (const char *winograd : {"", "1", "0"})
    for (bool channelsLast : {false, true}) {
      SCOPED_TRACE(channelsLast ? "channels-last output" : "row-major output");
      SCOPED_TRACE(std::string("STRATA_CONV_WINOGRAD=") + winograd);
      ScopedWinogradEnv env(winograd);
      ModuleBuilder b;
      uint32_t x = b.addInput("x", DType::F32, c.xShape);
      uint32_t residual = b.addInput("residual", DType::F32, out);
      uint64_t bytes = ops.back().value.byteSize();
      uint32_t inArena = b.addArenaBuffer(DType::F32, out, 0, bytes);
      uint32_t y = b.addArenaBuffer(DType::F32, out, 0, bytes);
      std::vector<Attribute> unit = {
          intsAttr("strides", {1, 1}), intsAttr("dilations", {1, 1}),
          intsAttr("pads", {0, 0, 0, 0}), intsAttr("group", {1})};
      b.addStep({StepKind::Library,
                 "dnnl.conv",
                 {residual, b.addConstant(identity)},
                 {inArena},
                 unit,
                 {"copy"}});
      std::vector<Attribute> attrs = c.attrs();
      if (channelsLast)
        attrs.push_back(stringAttr("dst_layout", "channels_last"));
      b.addStep({StepKind::Library,
                 "dnnl.conv",
                 {x, b.addConstant(ops[1].value), b.addConstant(ops[2].value),
                  inArena},
                 {y},
                 attrs,
                 {"conv"}});
      b.addOutput("y", y);
      Session session(Module::loadFromMemory(b.finish(), "inplace.strata"),
                      {2});
      for (int round = 0; round < 2; ++round) {
        session.setInput("x", ops[0].value);
        session.setInput("residual", ops.back().value);
        session.run();
        const Tensor &got = session.output("y");
        expectClose(channelsLast ? reorderChannels(got, false) : Tensor(got),
                    c.reference(ops));
      }
    }
}
