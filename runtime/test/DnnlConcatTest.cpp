//===- DnnlConcatTest.cpp - Tests of "dnnl.concat" --------------*- C++ -*-===//
//
// "dnnl.concat" against a plain copy: images joined along their channels
// with every mix of row-major and channels-last inputs and output (what the
// compiler's Layouts pass gives a concat between convolutions and generated
// kernels), 2 and 3 spatial dimensions, and the shape checks.
//
//===----------------------------------------------------------------------===//

#include "DnnlTestUtil.h"

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

/// The reference: the inputs' channels one after another, row-major.
std::vector<double> joined(const std::vector<Tensor> &inputs) {
  std::vector<double> out;
  int64_t images = inputs[0].shape()[0];
  for (int64_t n = 0; n < images; ++n)
    for (const Tensor &x : inputs) {
      int64_t perImage = x.numElements() / images;
      const float *data = x.data<float>() + n * perImage;
      out.insert(out.end(), data, data + perImage);
    }
  return out;
}

std::vector<int64_t> outShape(const std::vector<Tensor> &inputs) {
  std::vector<int64_t> shape = inputs[0].shape();
  shape[1] = 0;
  for (const Tensor &x : inputs)
    shape[1] += x.shape()[1];
  return shape;
}

} // namespace

TEST(DnnlConcat, EveryLayoutMix) {
  for (std::vector<int64_t> spatial :
       {std::vector<int64_t>{5, 7}, std::vector<int64_t>{3, 4, 2}}) {
    std::vector<Tensor> inputs;
    for (int64_t channels : {3, 8, 1}) {
      std::vector<int64_t> shape = {2, channels};
      shape.insert(shape.end(), spatial.begin(), spatial.end());
      inputs.push_back(randomTensor(shape, 7 + channels, -1.f, 1.f));
    }
    std::vector<double> want = joined(inputs);
    // Bit i of `mask`: input i channels-last; bit 3: the output.
    for (unsigned mask = 0; mask < 16; ++mask) {
      SCOPED_TRACE("rank " + std::to_string(2 + spatial.size()) + ", mask " +
                   std::to_string(mask));
      std::vector<StepOperand> ops;
      std::vector<Attribute> attrs = {intsAttr("axis", {1})};
      for (size_t i = 0; i < inputs.size(); ++i) {
        bool last = mask >> i & 1;
        ops.push_back({last ? reorderChannels(inputs[i], true) : inputs[i]});
        if (last)
          attrs.push_back(
              stringAttr("src_layout_" + std::to_string(i), "channels_last"));
      }
      bool outLast = mask >> 3 & 1;
      if (outLast)
        attrs.push_back(stringAttr("dst_layout", "channels_last"));
      Tensor out = runStep("dnnl.concat", ops, outShape(inputs), attrs, 2);
      expectClose(outLast ? reorderChannels(out, false) : out, want);
    }
  }
}

TEST(DnnlConcat, ShapesAreChecked) {
  Tensor a = randomTensor({1, 2, 4, 4}, 1, -1.f, 1.f);
  Tensor b = randomTensor({1, 3, 4, 5}, 2, -1.f, 1.f);
  auto run = [&](std::vector<Tensor> in, std::vector<int64_t> out,
                 std::vector<Attribute> attrs) {
    std::vector<StepOperand> ops;
    for (Tensor &t : in)
      ops.push_back({t});
    return errorOf([&] { runStep("dnnl.concat", ops, out, attrs); });
  };
  EXPECT_THAT(run({a, b}, {1, 5, 4, 4}, {intsAttr("axis", {1})}),
              HasSubstr("input 1 [1, 3, 4, 5] does not match the output "
                        "[1, 5, 4, 4] outside axis 1"));
  EXPECT_THAT(run({a, a}, {1, 5, 4, 4}, {intsAttr("axis", {1})}),
              HasSubstr("the inputs have 4 channels in all; the output "
                        "[1, 5, 4, 4] has 5"));
  EXPECT_THAT(run({a, a}, {1, 2, 8, 4}, {intsAttr("axis", {2})}),
              HasSubstr("joins [N, C, D...] tensors along axis 1; got axis 2"));
}
