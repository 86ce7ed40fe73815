//===- DnnlPoolTest.cpp - Tests of "dnnl.pool" ------------------*- C++ -*-===//
//
// "dnnl.pool" against a naive fp64 reference: max and both averages over 1,
// 2 and 3 spatial dimensions with strides, dilations and asymmetric pads,
// outputs one larger than the floor formula (ONNX ceil_mode, where an
// include-pad average counts only the declared pads), and the shape checks.
//
//===----------------------------------------------------------------------===//

#include "DnnlTestUtil.h"

#include <limits>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

struct PoolCase {
  std::string kind;
  std::vector<int64_t> xShape, kernel, strides, pads, dilations;
  bool ceil = false;

  size_t k() const { return xShape.size() - 2; }
  std::vector<int64_t> outShape() const {
    std::vector<int64_t> out = {xShape[0], xShape[1]};
    for (size_t i = 0; i < k(); ++i) {
      int64_t span = xShape[2 + i] + pads[i] + pads[k() + i] -
                     ((kernel[i] - 1) * dilations[i] + 1);
      out.push_back((ceil ? span + strides[i] - 1 : span) / strides[i] + 1);
    }
    return out;
  }
  std::vector<Attribute> attrs() const {
    return {stringAttr("kind", kind), intsAttr("kernel", kernel),
            intsAttr("strides", strides), intsAttr("pads", pads),
            intsAttr("dilations", dilations)};
  }

  std::vector<double> reference(const Tensor &input) const {
    const float *x = input.data<float>();
    std::vector<int64_t> out = outShape();
    std::vector<int64_t> xStr = rowMajor(xShape), oStr = rowMajor(out);
    int64_t total = 1, taps = 1;
    for (int64_t d : out)
      total *= d;
    for (int64_t kk : kernel)
      taps *= kk;
    std::vector<double> result(total);
    for (int64_t flat = 0; flat < total; ++flat) {
      std::vector<int64_t> idx(out.size());
      for (size_t d = 0; d < out.size(); ++d)
        idx[d] = flat / oStr[d] % out[d];
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t inside = 0, insideDeclaredPads = 0;
      for (int64_t t = 0; t < taps; ++t) {
        int64_t off = idx[0] * xStr[0] + idx[1] * xStr[1], rest = t;
        bool in = true, inPads = true;
        for (size_t i = k(); i-- > 0;) {
          int64_t tap = rest % kernel[i];
          rest /= kernel[i];
          int64_t pos = idx[2 + i] * strides[i] - pads[i] + tap * dilations[i];
          in = in && pos >= 0 && pos < xShape[2 + i];
          inPads = inPads && pos < xShape[2 + i] + pads[k() + i];
          off += pos * xStr[2 + i];
        }
        insideDeclaredPads += inPads;
        if (!in)
          continue;
        ++inside;
        sum += x[off];
        best = std::max(best, static_cast<double>(x[off]));
      }
      if (kind == "max")
        result[flat] = best;
      else if (kind == "avg_exclude_pad")
        result[flat] = sum / inside;
      else
        result[flat] = sum / insideDeclaredPads;
    }
    return result;
  }

  void check() const {
    Tensor x = randomTensor(xShape, 11, -2.f, 2.f);
    std::vector<double> want = reference(x);
    for (unsigned threads : {1u, 3u}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      expectClose(runStep("dnnl.pool", {{x}}, outShape(), attrs(), threads),
                  want);
    }
    // The same with channels-last source and destination buffers.
    std::vector<Attribute> lastAttrs = attrs();
    lastAttrs.push_back(stringAttr("src_layout", "channels_last"));
    lastAttrs.push_back(stringAttr("dst_layout", "channels_last"));
    Tensor out = runStep("dnnl.pool", {{reorderChannels(x, true)}}, outShape(),
                         lastAttrs, 2);
    expectClose(reorderChannels(out, false), want);
    // One end channels-last, the other row-major (a pool between a
    // generated kernel and a convolution): the kernel pools in the source's
    // layout and converts the result.
    std::vector<Attribute> srcLast = attrs();
    srcLast.push_back(stringAttr("src_layout", "channels_last"));
    expectClose(runStep("dnnl.pool", {{reorderChannels(x, true)}}, outShape(),
                        srcLast, 2),
                want);
    std::vector<Attribute> dstLast = attrs();
    dstLast.push_back(stringAttr("dst_layout", "channels_last"));
    expectClose(reorderChannels(
                    runStep("dnnl.pool", {{x}}, outShape(), dstLast, 2), false),
                want);
  }
};

PoolCase case2D(std::string kind) {
  PoolCase c;
  c.kind = std::move(kind);
  c.xShape = {2, 3, 7, 9};
  c.kernel = {3, 3};
  c.strides = {2, 2};
  c.pads = {1, 1, 0, 1};
  c.dilations = {1, 1};
  return c;
}

} // namespace

TEST(DnnlPool, Max2DDilatedAsymmetricPads) {
  PoolCase c = case2D("max");
  c.xShape = {2, 3, 9, 8};
  c.kernel = {3, 2};
  c.pads = {1, 0, 1, 1};
  c.dilations = {2, 1};
  c.check();
}

TEST(DnnlPool, AllKindsFloorAndCeil) {
  for (std::string kind : {"max", "avg_exclude_pad", "avg_include_pad"})
    for (bool ceil : {false, true}) {
      SCOPED_TRACE(kind + (ceil ? " ceil" : " floor"));
      PoolCase c = case2D(kind);
      c.ceil = ceil;
      // Floor: [2, 3, 3, 5]; ceil: [2, 3, 4, 5]; the extra row's windows
      // reach past the declared pads.
      EXPECT_EQ(c.outShape()[2], ceil ? 4 : 3);
      c.check();
    }
}

TEST(DnnlPool, OneAndThreeDimensions) {
  PoolCase c1;
  c1.kind = "avg_include_pad";
  c1.xShape = {2, 3, 10};
  c1.kernel = {4};
  c1.strides = {3};
  c1.pads = {2, 1};
  c1.dilations = {1};
  c1.ceil = true;
  c1.check();
  c1.kind = "max";
  c1.check();

  PoolCase c3;
  c3.kind = "max";
  c3.xShape = {1, 2, 7, 7, 5};
  c3.kernel = {2, 3, 2};
  c3.strides = {2, 1, 2};
  c3.pads = {0, 1, 1, 0, 1, 0};
  c3.dilations = {1, 2, 1};
  c3.check();
  c3.kind = "avg_exclude_pad";
  c3.ceil = true;
  c3.check();
}

TEST(DnnlPool, ShapeMismatchesAreErrors) {
  PoolCase c = case2D("max");
  Tensor x = randomTensor(c.xShape, 1);
  auto run = [&](std::vector<int64_t> outShape, std::vector<Attribute> attrs) {
    return errorOf([&] { runStep("dnnl.pool", {{x}}, outShape, attrs); });
  };
  std::string msg = run({2, 3, 5, 5}, c.attrs());
  EXPECT_THAT(msg, HasSubstr("step 0 ('dnnl.pool', from ONNX node 'Node_0'): "
                             "has output size 5 in spatial dimension 0; the "
                             "attributes allow 3 or 4"));
  EXPECT_THAT(run({2, 4, 3, 5}, c.attrs()),
              HasSubstr("expects an output [N, C, ...] of X's rank"));
  PoolCase bad = c;
  bad.kind = "median";
  EXPECT_THAT(run({2, 3, 3, 5}, bad.attrs()),
              HasSubstr("unknown pooling kind 'median'"));
  bad = c;
  bad.kernel = {9, 3};
  EXPECT_THAT(run({2, 3, 1, 5}, bad.attrs()),
              HasSubstr("window larger than the padded input"));
  EXPECT_THAT(run({2, 3, 3, 5}, {stringAttr("kind", "max")}),
              HasSubstr("has no attribute 'kernel'"));
  // Ceil mode where the last window would start in the right padding:
  // X [.., 6] with kernel 2, stride 2, pads 0/1 allows 3 or 4 outputs, but
  // the fourth window starts at 6, past the input.
  bad = c;
  bad.xShape = {2, 3, 6, 9};
  bad.kernel = {2, 3};
  bad.pads = {0, 0, 1, 1};
  x = randomTensor(bad.xShape, 2);
  EXPECT_THAT(run({2, 3, 4, 4}, bad.attrs()),
              HasSubstr("has output size 4 in spatial dimension 0, whose last "
                        "window lies entirely in the padding"));
}
