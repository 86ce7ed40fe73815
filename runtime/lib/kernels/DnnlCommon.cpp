//===- DnnlCommon.cpp - Shared pieces of the oneDNN kernels -----*- C++ -*-===//
//
// The engine, the OpenMP thread count, operand checks, attribute helpers and
// the activation table shared by the oneDNN kernels, and their registration.
//
// Threads: Debian's oneDNN is built with the OpenMP CPU runtime, where the
// thread count of a primitive is that of the OpenMP parallel region it opens
// on the calling thread, i.e. omp_get_max_threads() of that thread. The
// kernels set it to the session's thread count around primitive creation
// (some implementations choose their blocking for it) and execution, and
// restore the caller's value afterwards.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"

#include <cfloat>
#include <omp.h>

namespace strata::rt::kernels {

namespace dnnl_support {

const dnnl::engine &cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

ScopedOmpThreads::ScopedOmpThreads(const KernelContext &ctx)
    : previous_(omp_get_max_threads()) {
  omp_set_num_threads(static_cast<int>(ctx.pool().numThreads()));
}

ScopedOmpThreads::~ScopedOmpThreads() { omp_set_num_threads(previous_); }

void checkOperands(const KernelContext &ctx, size_t minInputs,
                   size_t maxInputs) {
  if (ctx.numInputs() < minInputs || ctx.numInputs() > maxInputs ||
      ctx.numOutputs() != 1)
    throw ctx.error(
        "expects " + std::to_string(minInputs) +
        (maxInputs > minInputs ? " to " + std::to_string(maxInputs) : "") +
        " inputs and 1 output, got " + std::to_string(ctx.numInputs()) +
        " and " + std::to_string(ctx.numOutputs()));
  auto check = [&](const TensorView &v, const std::string &what) {
    if (v.dtype != DType::F32)
      throw ctx.error("expects f32 operands, but " + what + " is " +
                      dtypeName(v.dtype) + shapeToString(v.shape));
  };
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    check(ctx.input(i), "input " + std::to_string(i));
  check(ctx.output(0), "the output");
}

std::vector<int64_t> shapeKey(const KernelContext &ctx) {
  std::vector<int64_t> key;
  auto add = [&](const TensorView &v) {
    key.push_back(static_cast<int64_t>(v.shape.size()));
    key.insert(key.end(), v.shape.begin(), v.shape.end());
  };
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    add(ctx.input(i));
  for (size_t i = 0; i < ctx.numOutputs(); ++i)
    add(ctx.output(i));
  return key;
}

dnnl::memory::dims rowMajorStrides(const dnnl::memory::dims &dims) {
  dnnl::memory::dims strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(dims[i], 1);
  }
  return strides;
}

dnnl::memory::desc rowMajorDesc(const dnnl::memory::dims &dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                            rowMajorStrides(dims));
}

std::vector<int64_t> intsAttr(const KernelContext &ctx, const std::string &key,
                              size_t size, int64_t fallback, int64_t minimum) {
  if (!ctx.hasAttr(key))
    return std::vector<int64_t>(size, fallback);
  const std::vector<int64_t> &values = ctx.attrInts(key);
  if (values.size() != size)
    throw ctx.error("attribute '" + key + "' has " +
                    std::to_string(values.size()) + " values, expected " +
                    std::to_string(size));
  for (int64_t v : values)
    if (v < minimum)
      throw ctx.error("attribute '" + key + "' has value " + std::to_string(v) +
                      ", expected values >= " + std::to_string(minimum));
  return values;
}

double numberAttr(const KernelContext &ctx, const std::string &key,
                  double fallback) {
  if (!ctx.hasAttr(key))
    return fallback;
  const Attribute *attr = nullptr;
  for (const Attribute &a : ctx.step().attributes)
    if (a.key == key)
      attr = &a;
  if (attr->floats.size() == 1 && attr->ints.empty() && attr->str.empty())
    return attr->floats[0];
  if (attr->ints.size() == 1 && attr->floats.empty() && attr->str.empty())
    return static_cast<double>(attr->ints[0]);
  throw ctx.error("attribute '" + key + "' is not one number");
}

void appendActivation(const KernelContext &ctx, dnnl::post_ops &ops) {
  if (!ctx.hasAttr("activation"))
    return;
  const std::string &kind = ctx.attrString("activation");
  if (kind.empty())
    return;
  using dnnl::algorithm;
  // Defaults are ONNX's for the operator of the same name.
  auto alpha = [&](double fallback) {
    return static_cast<float>(numberAttr(ctx, "activation_alpha", fallback));
  };
  auto beta = [&](double fallback) {
    return static_cast<float>(numberAttr(ctx, "activation_beta", fallback));
  };
  auto add = [&](algorithm alg, float a = 0.f, float b = 0.f) {
    ops.append_eltwise(1.f, alg, a, b);
  };
  if (kind == "relu")
    add(algorithm::eltwise_relu);
  else if (kind == "leaky_relu")
    add(algorithm::eltwise_relu, alpha(0.01));
  else if (kind == "sigmoid")
    add(algorithm::eltwise_logistic);
  else if (kind == "tanh")
    add(algorithm::eltwise_tanh);
  else if (kind == "gelu_erf")
    add(algorithm::eltwise_gelu_erf);
  else if (kind == "gelu_tanh")
    add(algorithm::eltwise_gelu_tanh);
  else if (kind == "clip")
    add(algorithm::eltwise_clip, alpha(-FLT_MAX), beta(FLT_MAX));
  else if (kind == "elu")
    add(algorithm::eltwise_elu, alpha(1.0));
  else if (kind == "hard_sigmoid") {
    // This oneDNN has no hardsigmoid: max(0, min(1, alpha * x + beta)).
    add(algorithm::eltwise_linear, alpha(0.2), beta(0.5));
    add(algorithm::eltwise_clip, 0.f, 1.f);
  } else if (kind == "hard_swish")
    add(algorithm::eltwise_hardswish);
  else if (kind == "swish")
    add(algorithm::eltwise_swish, alpha(1.0));
  else if (kind == "mish")
    add(algorithm::eltwise_mish);
  else if (kind == "softplus")
    add(algorithm::eltwise_soft_relu);
  else if (kind == "linear")
    add(algorithm::eltwise_linear, alpha(1.0), beta(0.0));
  else if (kind == "abs")
    add(algorithm::eltwise_abs);
  else if (kind == "sqrt")
    add(algorithm::eltwise_sqrt);
  else if (kind == "square")
    add(algorithm::eltwise_square);
  else if (kind == "exp")
    add(algorithm::eltwise_exp);
  else if (kind == "log")
    add(algorithm::eltwise_log);
  else if (kind == "round")
    add(algorithm::eltwise_round);
  else
    throw ctx.error("unknown activation '" + kind + "'");
}

} // namespace dnnl_support

void registerDnnlKernels(
    const std::function<void(const std::string &, KernelFn)> &add) {
  add("dnnl.matmul", dnnl_support::matmul);
  add("dnnl.conv", dnnl_support::conv);
  add("dnnl.pool", dnnl_support::pool);
}

} // namespace strata::rt::kernels
