//===- DnnlTestUtil.h - Helpers of the oneDNN kernel tests ------*- C++ -*-===//
//
// One-step modules around a library kernel, seeded random tensors, and a
// comparison against the tests' naive fp64 references.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_TEST_DNNLTESTUTIL_H
#define STRATA_RUNTIME_TEST_DNNLTESTUTIL_H

#include "TestModules.h"

#include <cmath>
#include <random>

namespace strata::rt::test {

/// A tensor of uniform values in [lo, hi).
inline Tensor randomTensor(std::vector<int64_t> shape, unsigned seed,
                           float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::zeros(DType::F32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float *data = t.data<float>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    data[i] = dist(rng);
  return t;
}

/// `t` [N, C, spatial...] with its bytes reordered to channels-last
/// ([N, spatial..., C] in memory; the shape stays [N, C, ...]), or back.
inline Tensor reorderChannels(const Tensor &t, bool toChannelsLast) {
  const std::vector<int64_t> &shape = t.shape();
  int64_t n = shape[0], c = shape[1], spatial = 1;
  for (size_t i = 2; i < shape.size(); ++i)
    spatial *= shape[i];
  Tensor result = Tensor::zeros(DType::F32, shape);
  const float *from = t.data<float>();
  float *to = result.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < spatial; ++s) {
        int64_t rowMajor = (i * c + ch) * spatial + s;
        int64_t last = (i * spatial + s) * c + ch;
        if (toChannelsLast)
          to[last] = from[rowMajor];
        else
          to[rowMajor] = from[last];
      }
  return result;
}

struct StepOperand {
  Tensor value;
  /// Stored in the module as a constant rather than bound as an input.
  bool constant = false;
};

/// A module with one Library step `kernel` over `operands` (model inputs
/// "in0", "in1", ... or constants) and an f32 output "out" of `outShape`.
inline std::shared_ptr<const Module>
oneStepModule(const std::string &kernel, const std::vector<StepOperand> &ops,
              std::vector<int64_t> outShape, std::vector<Attribute> attrs) {
  ModuleBuilder b;
  Step step{StepKind::Library, kernel, {}, {}, std::move(attrs), {"Node_0"}};
  for (size_t i = 0; i < ops.size(); ++i)
    step.inputs.push_back(ops[i].constant
                              ? b.addConstant(ops[i].value)
                              : b.addInput("in" + std::to_string(i), DType::F32,
                                           ops[i].value.shape()));
  uint32_t out = b.addArenaBuffer(DType::F32, std::move(outShape));
  step.outputs = {out};
  b.addStep(step);
  b.addOutput("out", out);
  return Module::loadFromMemory(b.finish(), kernel + ".strata");
}

/// Binds the non-constant operands and runs the session once.
inline const Tensor &runOnce(Session &session,
                             const std::vector<StepOperand> &ops) {
  for (size_t i = 0; i < ops.size(); ++i)
    if (!ops[i].constant)
      session.setInput("in" + std::to_string(i), ops[i].value);
  session.run();
  return session.output("out");
}

/// Runs a one-step module with `threads` threads and returns the output.
inline Tensor runStep(const std::string &kernel,
                      const std::vector<StepOperand> &ops,
                      std::vector<int64_t> outShape,
                      std::vector<Attribute> attrs, unsigned threads = 1) {
  Session session(
      oneStepModule(kernel, ops, std::move(outShape), std::move(attrs)),
      {threads});
  return runOnce(session, ops);
}

inline Attribute intsAttr(std::string key, std::vector<int64_t> values) {
  return {std::move(key), std::move(values), {}, ""};
}
inline Attribute floatAttr(std::string key, double value) {
  return {std::move(key), {}, {value}, ""};
}
inline Attribute stringAttr(std::string key, std::string value) {
  return {std::move(key), {}, {}, std::move(value)};
}

/// Expects `got` to match the fp64 reference within a mixed tolerance.
inline void expectClose(const Tensor &got, const std::vector<double> &want,
                        double tolerance = 1e-4) {
  ASSERT_EQ(got.numElements(), static_cast<int64_t>(want.size()));
  const float *data = got.data<float>();
  int reported = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double error = std::abs(static_cast<double>(data[i]) - want[i]);
    if (!(error <= tolerance * (1 + std::abs(want[i]))) && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": got " << data[i] << ", want "
                    << want[i];
  }
  EXPECT_EQ(reported, 0) << "elements off: " << reported;
}

/// The activations of the `activation` attribute, in fp64.
inline double refActivation(const std::string &kind, double x, double alpha,
                            double beta) {
  if (kind.empty())
    return x;
  if (kind == "relu")
    return x > 0 ? x : 0;
  if (kind == "leaky_relu")
    return x > 0 ? x : alpha * x;
  if (kind == "sigmoid")
    return 1 / (1 + std::exp(-x));
  if (kind == "tanh")
    return std::tanh(x);
  if (kind == "gelu_erf")
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (kind == "clip")
    return std::min(beta, std::max(alpha, x));
  if (kind == "elu")
    return x > 0 ? x : alpha * (std::exp(x) - 1);
  if (kind == "hard_sigmoid")
    return std::max(0.0, std::min(1.0, alpha * x + beta));
  ADD_FAILURE() << "no reference for activation " << kind;
  return x;
}

/// Row-major index helpers for the references.
inline std::vector<int64_t> rowMajor(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

} // namespace strata::rt::test

#endif // STRATA_RUNTIME_TEST_DNNLTESTUTIL_H
