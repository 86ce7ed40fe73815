//===- DnnlMatmulTest.cpp - Tests of "dnnl.matmul" --------------*- C++ -*-===//
//
// "dnnl.matmul" against a naive fp64 reference: numpy-style batch
// broadcasting, transposed operands, alpha/beta, a C of several broadcast
// shapes (which take different paths in the kernel), fused activations,
// repeated runs of one session, and the shape checks.
//
//===----------------------------------------------------------------------===//

#include "DnnlTestUtil.h"

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

struct MatmulCase {
  bool transA = false, transB = false;
  double alpha = 1, beta = 1;
  std::string activation;
  double activationAlpha = 0, activationBeta = 0;

  std::vector<Attribute> attrs() const {
    std::vector<Attribute> result = {
        intsAttr("trans_a", {transA}), intsAttr("trans_b", {transB}),
        floatAttr("alpha", alpha), floatAttr("beta", beta)};
    if (!activation.empty()) {
      result.push_back(stringAttr("activation", activation));
      result.push_back(floatAttr("activation_alpha", activationAlpha));
      result.push_back(floatAttr("activation_beta", activationBeta));
    }
    return result;
  }
};

/// Right-aligns `shape` to `rank` with leading 1s.
std::vector<int64_t> padded(const std::vector<int64_t> &shape, size_t rank) {
  std::vector<int64_t> result(rank - shape.size(), 1);
  result.insert(result.end(), shape.begin(), shape.end());
  return result;
}

/// The reference: its own shape inference, then one dot product per output.
std::vector<double> reference(const MatmulCase &mc, const Tensor &a,
                              const Tensor &b, const Tensor *c,
                              std::vector<int64_t> &outShape) {
  size_t rank = std::max(a.shape().size(), b.shape().size());
  std::vector<int64_t> as = padded(a.shape(), rank),
                       bs = padded(b.shape(), rank);
  int64_t m = mc.transA ? as[rank - 1] : as[rank - 2];
  int64_t k = mc.transA ? as[rank - 2] : as[rank - 1];
  int64_t n = mc.transB ? bs[rank - 2] : bs[rank - 1];
  outShape.assign(rank, 0);
  for (size_t d = 0; d + 2 < rank; ++d)
    outShape[d] = std::max(as[d], bs[d]);
  outShape[rank - 2] = m;
  outShape[rank - 1] = n;
  std::vector<int64_t> cs =
      c ? padded(c->shape(), rank) : std::vector<int64_t>();
  std::vector<int64_t> aStr = rowMajor(as), bStr = rowMajor(bs),
                       oStr = rowMajor(outShape),
                       cStr = c ? rowMajor(cs) : std::vector<int64_t>();
  int64_t total = 1;
  for (int64_t d : outShape)
    total *= d;
  std::vector<double> out(total);
  for (int64_t flat = 0; flat < total; ++flat) {
    std::vector<int64_t> idx(rank);
    for (size_t d = 0; d < rank; ++d)
      idx[d] = flat / oStr[d] % outShape[d];
    int64_t aBase = 0, bBase = 0, cOff = 0;
    for (size_t d = 0; d + 2 < rank; ++d) {
      aBase += (as[d] == 1 ? 0 : idx[d]) * aStr[d];
      bBase += (bs[d] == 1 ? 0 : idx[d]) * bStr[d];
    }
    int64_t i = idx[rank - 2], j = idx[rank - 1];
    double acc = 0;
    for (int64_t p = 0; p < k; ++p) {
      double av = a.data<float>()[aBase + (mc.transA ? p * aStr[rank - 2] + i
                                                     : i * aStr[rank - 2] + p)];
      double bv = b.data<float>()[bBase + (mc.transB ? j * bStr[rank - 2] + p
                                                     : p * bStr[rank - 2] + j)];
      acc += av * bv;
    }
    double value = mc.alpha * acc;
    if (c) {
      for (size_t d = 0; d < rank; ++d)
        cOff += (cs[d] == 1 ? 0 : idx[d]) * cStr[d];
      value += mc.beta * c->data<float>()[cOff];
    }
    out[flat] = refActivation(mc.activation, value, mc.activationAlpha,
                              mc.activationBeta);
  }
  return out;
}

void check(const MatmulCase &mc, const std::vector<int64_t> &aShape,
           const std::vector<int64_t> &bShape,
           const std::vector<int64_t> &cShape, bool constantB = false) {
  Tensor a = randomTensor(aShape, 1), b = randomTensor(bShape, 2);
  std::vector<StepOperand> ops = {{a}, {b, constantB}};
  Tensor c;
  if (!cShape.empty()) {
    c = randomTensor(cShape, 3);
    ops.push_back({c});
  }
  std::vector<int64_t> outShape;
  std::vector<double> want =
      reference(mc, a, b, ops.size() == 3 ? &c : nullptr, outShape);
  for (unsigned threads : {1u, 3u}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    expectClose(runStep("dnnl.matmul", ops, outShape, mc.attrs(), threads),
                want);
  }
}

} // namespace

TEST(DnnlMatmul, BroadcastBatchTransposedScaledWithBiasAndRelu) {
  MatmulCase mc;
  mc.transA = mc.transB = true;
  mc.alpha = 0.5;
  mc.beta = 2;
  mc.activation = "relu";
  // A [2, 1, K=5, M=3] (transposed), B [4, N=6, K=5] (transposed):
  // output [2, 4, 3, 6]; C [3, 1] broadcasts along N and the batch.
  check(mc, {2, 1, 5, 3}, {4, 6, 5}, {3, 1});
  // The same with C broadcast along the first batch dimension only.
  check(mc, {2, 1, 5, 3}, {4, 6, 5}, {4, 3, 6});
}

TEST(DnnlMatmul, RowBiasTakesTheNativePath) {
  MatmulCase mc;
  mc.activation = "relu";
  check(mc, {7, 9}, {9, 11}, {11}, /*constantB=*/true);
  check(mc, {3, 7, 9}, {9, 11}, {1, 1, 11});
  // alpha != 1 must not scale the bias.
  mc.alpha = 3;
  check(mc, {7, 9}, {9, 11}, {11});
}

TEST(DnnlMatmul, PlainAndActivations) {
  MatmulCase mc;
  check(mc, {5, 8}, {8, 4}, {});
  mc.transA = true;
  for (auto [act, alpha, beta] :
       std::vector<std::tuple<std::string, double, double>>{
           {"leaky_relu", 0.1, 0},
           {"sigmoid", 0, 0},
           {"tanh", 0, 0},
           {"gelu_erf", 0, 0},
           {"clip", -0.3, 0.4},
           {"elu", 0.7, 0},
           {"hard_sigmoid", 0.3, 0.6}}) {
    SCOPED_TRACE(act);
    mc.activation = act;
    mc.activationAlpha = alpha;
    mc.activationBeta = beta;
    check(mc, {2, 8, 5}, {2, 8, 4}, {5, 4});
  }
}

TEST(DnnlMatmul, RepeatedRunsReuseThePrimitive) {
  MatmulCase mc;
  mc.beta = 0.5;
  Tensor a = randomTensor({4, 6}, 4), b = randomTensor({6, 5}, 5),
         c = randomTensor({1, 5}, 6);
  std::vector<StepOperand> ops = {{a}, {b}, {c}};
  Session session(oneStepModule("dnnl.matmul", ops, {4, 5}, mc.attrs()), {2});
  for (unsigned seed : {10u, 20u, 30u}) {
    ops[0].value = randomTensor({4, 6}, seed);
    ops[2].value = randomTensor({1, 5}, seed + 1);
    std::vector<int64_t> outShape;
    expectClose(runOnce(session, ops),
                reference(mc, ops[0].value, b, &ops[2].value, outShape));
  }
}

// A constant B (a layer's weights) is reordered once into the layout the
// primitive chooses; A's rows over its batch dimensions make one 2-D
// product when B has no batch of its own. Each form against the reference,
// transposed or not, with a native bias, a broadcast C and no C.
TEST(DnnlMatmul, ConstantWeightsArePackedOnce) {
  MatmulCase mc;
  mc.activation = "gelu_erf";
  check(mc, {2, 3, 17, 40}, {40, 24}, {24}, /*constantB=*/true);
  check(mc, {5, 33}, {33, 70}, {}, /*constantB=*/true);
  mc.transB = true;
  check(mc, {3, 9, 16}, {1, 12, 16}, {1, 1, 12}, /*constantB=*/true);
  mc.beta = 0.5;
  check(mc, {3, 9, 16}, {12, 16}, {9, 12}, /*constantB=*/true);
  // A batched B stays batched.
  check(mc, {2, 9, 16}, {2, 12, 16}, {}, /*constantB=*/true);

  // Repeated runs of one session read the packed copy with new A's.
  MatmulCase plain;
  Tensor a = randomTensor({2, 8, 20}, 7), b = randomTensor({20, 48}, 8);
  std::vector<StepOperand> ops = {{a}, {b, /*constant=*/true}};
  Session session(oneStepModule("dnnl.matmul", ops, {2, 8, 48}, plain.attrs()),
                  {2});
  for (unsigned seed : {11u, 21u, 31u}) {
    ops[0].value = randomTensor({2, 8, 20}, seed);
    std::vector<int64_t> outShape;
    expectClose(runOnce(session, ops),
                reference(plain, ops[0].value, b, nullptr, outShape));
  }
}

TEST(DnnlMatmul, ShapeMismatchesAreErrors) {
  auto run = [](std::vector<int64_t> aShape, std::vector<int64_t> bShape,
                std::vector<int64_t> outShape, std::vector<int64_t> cShape = {},
                std::vector<Attribute> attrs = {}) {
    std::vector<StepOperand> ops = {{randomTensor(aShape, 1)},
                                    {randomTensor(bShape, 2)}};
    if (!cShape.empty())
      ops.push_back({randomTensor(cShape, 3)});
    return errorOf([&] { runStep("dnnl.matmul", ops, outShape, attrs); });
  };
  std::string msg = run({4, 5}, {6, 3}, {4, 3});
  EXPECT_THAT(msg, HasSubstr("'dnnl.matmul.strata'"));
  EXPECT_THAT(msg, HasSubstr("step 0 ('dnnl.matmul', from ONNX node "
                             "'Node_0'): has inner dimensions 5 and 6 that "
                             "differ: [4, 5] x [6, 3] -> [4, 3]"));
  EXPECT_THAT(run({2, 4, 5}, {3, 5, 3}, {3, 4, 3}),
              HasSubstr("batch dimensions that do not broadcast"));
  EXPECT_THAT(run({4, 5}, {5, 3}, {4, 4}),
              HasSubstr("expects the output shape [4, 3]"));
  EXPECT_THAT(run({4, 5}, {5, 3}, {4, 3}, {2}),
              HasSubstr("C that does not broadcast"));
  EXPECT_THAT(run({5}, {5, 3}, {3}), HasSubstr("rank >= 2"));
  EXPECT_THAT(run({4, 5}, {5, 3}, {4, 3}, {}, {intsAttr("trans_a", {2})}),
              HasSubstr("must be 0 or 1"));
  EXPECT_THAT(
      run({4, 5}, {5, 3}, {4, 3}, {}, {stringAttr("activation", "frobnicate")}),
      HasSubstr("unknown activation 'frobnicate'"));

  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::I32, {2, 2});
  uint32_t y = b.addArenaBuffer(DType::F32, {2, 2});
  b.addStep({StepKind::Library, "dnnl.matmul", {x, x}, {y}, {}, {}});
  Session session(Module::loadFromMemory(b.finish(), "i32.strata"));
  session.setInput("x", Tensor::zeros(DType::I32, {2, 2}));
  EXPECT_THAT(errorOf([&] { session.run(); }),
              HasSubstr("expects f32 operands, but input 0 is i32[2, 2]"));
}
