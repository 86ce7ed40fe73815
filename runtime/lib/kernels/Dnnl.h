//===- Dnnl.h - Shared pieces of the oneDNN library kernels -----*- C++ -*-===//
//
// The oneDNN kernels ("dnnl.matmul", "dnnl.conv", "dnnl.pool",
// "dnnl.concat") create their
// primitive on the first run of a step and keep it in the step's
// KernelContext::state, keyed by the operand shapes (an Input buffer with
// dynamic dimensions may change shape between runs). This header holds what
// they share: the engine, the OpenMP thread count, operand checks, layout
// conversions and the mapping of the `activation` attributes to eltwise
// post-ops.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_KERNELS_DNNL_H
#define STRATA_RUNTIME_LIB_KERNELS_DNNL_H

#include "Kernels.h"

#include <dnnl.hpp>

namespace strata::rt::kernels::dnnl_support {

/// The process's CPU engine, created on first use.
const dnnl::engine &cpuEngine();

/// Sets the calling thread's OpenMP thread count (which this oneDNN build
/// uses for its parallel regions) to the session's for the lifetime of the
/// object, then restores it: the caller's own OpenMP code is left alone.
class ScopedOmpThreads {
public:
  explicit ScopedOmpThreads(const KernelContext &ctx);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads &) = delete;
  ScopedOmpThreads &operator=(const ScopedOmpThreads &) = delete;

private:
  int previous_;
};

/// Throws ctx.error unless the step has between `minInputs` and `maxInputs`
/// inputs, one output, and every operand is f32.
void checkOperands(const KernelContext &ctx, size_t minInputs,
                   size_t maxInputs);

/// The shapes of all operands, flattened with their ranks: what a cached
/// primitive was created for.
std::vector<int64_t> shapeKey(const KernelContext &ctx);

/// Row-major strides of `dims`.
dnnl::memory::dims rowMajorStrides(const dnnl::memory::dims &dims);
/// Copies `bytes` bytes with the OpenMP threads the step was given (a
/// residual into a convolution's destination: one thread alone cannot
/// fill the memory bandwidth that two or more share).
void copyInParallel(void *dst, const void *src, size_t bytes);
/// A plain (row-major) f32 descriptor of `dims`.
dnnl::memory::desc rowMajorDesc(const dnnl::memory::dims &dims);
/// The dense channels-last (nhwc) f32 descriptor of `dims` [N, C, ...].
dnnl::memory::desc channelsLastDesc(const dnnl::memory::dims &dims);
/// The layout of an activation buffer as the step's attribute `attr` says
/// ("row_major", the default, or "channels_last": the compiler keeps a
/// buffer channels-last between oneDNN steps that all read it so,
/// lib/Compiler/Layouts.cpp); throws on another value.
dnnl::memory::desc activationDesc(const KernelContext &ctx,
                                  const std::string &attr,
                                  const dnnl::memory::dims &dims);

/// Converts activations [N, C, spatial...] from one layout to another, for
/// the reorders at the edges of a primitive that runs in its own layout.
/// Between row-major and channels-last (nhwc) it transposes each image's
/// [C, spatial] matrix itself, on OpenMP threads: oneDNN 2.6's reorders
/// for this pair took up to about twice as long at the sizes of small CNNs
/// (1x96x32x32 to row-major: 86 us against 33-49 us, one thread), as their
/// tiles store to many rows 4 KiB apart, which alias in the L1 cache. Any
/// other pair is a oneDNN reorder.
class LayoutConversion {
public:
  LayoutConversion() = default;
  LayoutConversion(const dnnl::memory::desc &from, const dnnl::memory::desc &to,
                   const dnnl::memory::dims &dims);
  /// Converts `from` (in the `from` layout) into `to`, after the work
  /// already queued on `stream` (waiting for it before transposing).
  void execute(dnnl::stream &stream, const dnnl::memory &from,
               const dnnl::memory &to) const;

private:
  enum class Kind { Reorder, ToChannelsLast, FromChannelsLast };
  Kind kind_ = Kind::Reorder;
  dnnl::reorder reorder_;
  int64_t images_ = 0, channels_ = 0, spatial_ = 0;
};

/// A primitive's weights: the module's bytes when the primitive takes them
/// in the module's layout, else a copy reordered into its own, made once
/// for a module constant (whose bytes never change) and on every run for
/// weights computed by the model.
class PrimitiveWeights {
public:
  /// For a primitive made for `wanted` weights, given `user` ones.
  void prepare(const dnnl::memory::desc &user, const dnnl::memory::desc &wanted,
               const dnnl::engine &engine);
  /// The weights to pass for the step's input `input`, whose bytes are
  /// `data`; a reorder is queued on `stream` when one is needed.
  dnnl::memory get(const KernelContext &ctx, size_t input, dnnl::stream &stream,
                   const void *data);

private:
  dnnl::memory::desc user_;
  bool reorder_ = false;
  dnnl::reorder reorderPrimitive_;
  dnnl::memory reordered_;
  /// The constant `reordered_` was made from.
  const void *from_ = nullptr;
};

/// The largest stride, dilation, pad or kernel attribute value a step may
/// hold: anything larger is no convolution or pool of a real model, and
/// products of such values with a tensor's dimensions would overflow (found
/// by fuzz/module.cpp).
constexpr int64_t kMaxWindowAttr = (int64_t{1} << 31) - 1;

/// An integer list attribute of `size` values, `fallback` each when absent;
/// throws ctx.error when it has another size or a value below `minimum` or
/// above kMaxWindowAttr.
std::vector<int64_t> intsAttr(const KernelContext &ctx, const std::string &key,
                              size_t size, int64_t fallback, int64_t minimum);
/// A scalar attribute that may be stored as an int or a float.
double numberAttr(const KernelContext &ctx, const std::string &key,
                  double fallback);

/// Appends the eltwise post-ops for the step's `activation`,
/// `activation_alpha` and `activation_beta` attributes (docs/runtime.md);
/// throws ctx.error for an activation it does not know.
void appendActivation(const KernelContext &ctx, dnnl::post_ops &ops);

/// Runs `body`, turning oneDNN's exceptions into ctx.error.
template <typename Fn>
void translateErrors(const KernelContext &ctx, Fn &&body) {
  try {
    body();
  } catch (const dnnl::error &e) {
    throw ctx.error(std::string("oneDNN: ") + e.what() + " (status " +
                    std::to_string(static_cast<int>(e.status)) + ")");
  }
}

/// The kernels (DnnlMatmul.cpp, DnnlConv.cpp, DnnlPool.cpp).
void matmul(KernelContext &ctx);
void conv(KernelContext &ctx);
/// ONNX ConvTranspose as oneDNN's deconvolution (DnnlConv.cpp).
void convTranspose(KernelContext &ctx);
void pool(KernelContext &ctx);
void concat(KernelContext &ctx);

} // namespace strata::rt::kernels::dnnl_support

#endif // STRATA_RUNTIME_LIB_KERNELS_DNNL_H
