//===- Basic.cpp - The built-in library kernels -----------------*- C++ -*-===//
//
// Two small kernels, "add.f32" (elementwise, same shapes) and "copy", that
// exist so that the load/plan/run path can be exercised end to end before
// the real kernels (oneDNN, generated code) arrive. They check their
// operands because a module could pair them with any buffers.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cstring>

namespace strata::rt::kernels {

namespace {

void checkArity(KernelContext &ctx, size_t inputs, size_t outputs) {
  if (ctx.numInputs() != inputs || ctx.numOutputs() != outputs)
    throw ctx.error("expects " + std::to_string(inputs) + " inputs and " +
                    std::to_string(outputs) + " outputs, got " +
                    std::to_string(ctx.numInputs()) + " and " +
                    std::to_string(ctx.numOutputs()));
}

void addF32(KernelContext &ctx) {
  checkArity(ctx, 2, 1);
  const TensorView &a = ctx.input(0), &b = ctx.input(1), &out = ctx.output(0);
  for (const TensorView *v : {&a, &b, &out})
    if (v->dtype != DType::F32)
      throw ctx.error(std::string("expects f32 operands, got ") +
                      dtypeName(v->dtype));
  if (a.shape != b.shape || a.shape != out.shape)
    throw ctx.error("expects operands of one shape, got " +
                    shapeToString(a.shape) + ", " + shapeToString(b.shape) +
                    " -> " + shapeToString(out.shape));
  const float *x = a.as<float>(), *y = b.as<float>();
  float *z = out.as<float>();
  // 16K floats per chunk: large enough that scheduling costs nothing.
  ctx.pool().parallelFor(0, out.numElements(), 1 << 14,
                         [&](int64_t begin, int64_t end) {
                           for (int64_t i = begin; i < end; ++i)
                             z[i] = x[i] + y[i];
                         });
}

void copy(KernelContext &ctx) {
  checkArity(ctx, 1, 1);
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  if (in.dtype != out.dtype || in.shape != out.shape)
    throw ctx.error(std::string("copies ") + dtypeName(in.dtype) +
                    shapeToString(in.shape) + " to " + dtypeName(out.dtype) +
                    shapeToString(out.shape));
  if (size_t bytes = in.byteSize())
    std::memcpy(out.data, in.data, bytes);
}

} // namespace

void registerBasicKernels(
    const std::function<void(const std::string &, KernelFn)> &add) {
  add("add.f32", addF32);
  add("copy", copy);
}

} // namespace strata::rt::kernels
