//===- DnnlCommon.cpp - Shared pieces of the oneDNN kernels -----*- C++ -*-===//
//
// The engine, the OpenMP thread count, operand checks, attribute helpers,
// layout conversions and the activation table shared by the oneDNN kernels,
// and their registration.
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
#include "Omp.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

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

dnnl::memory::desc channelsLastDesc(const dnnl::memory::dims &dims) {
  dnnl::memory::dims strides(dims.size());
  int64_t stride = std::max<int64_t>(dims[1], 1);
  strides[1] = 1;
  for (size_t i = dims.size(); i-- > 2;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(dims[i], 1);
  }
  strides[0] = stride;
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

dnnl::memory::desc activationDesc(const KernelContext &ctx,
                                  const std::string &attr,
                                  const dnnl::memory::dims &dims) {
  if (!ctx.hasAttr(attr))
    return rowMajorDesc(dims);
  const std::string &layout = ctx.attrString(attr);
  if (layout == "channels_last" && dims.size() >= 3)
    return channelsLastDesc(dims);
  if (layout == "row_major")
    return rowMajorDesc(dims);
  throw ctx.error("has " + attr + " = '" + layout +
                  "'; expected 'row_major' or 'channels_last' (for a tensor "
                  "[N, C, spatial...])");
}

namespace {

/// dst[c][r] = src[r][c] for the tile [r0, r1) x [c0, c1) of a `rows` x
/// `cols` matrix.
void transposeTile(const float *src, float *dst, int64_t rows, int64_t cols,
                   int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  int64_t r = r0;
#if defined(__SSE__)
  // 4 x 4 blocks in registers.
  for (; r + 4 <= r1; r += 4) {
    int64_t c = c0;
    for (; c + 4 <= c1; c += 4) {
      const float *s = src + r * cols + c;
      __m128 a = _mm_loadu_ps(s), b = _mm_loadu_ps(s + cols),
             e = _mm_loadu_ps(s + 2 * cols), f = _mm_loadu_ps(s + 3 * cols);
      _MM_TRANSPOSE4_PS(a, b, e, f);
      float *d = dst + c * rows + r;
      _mm_storeu_ps(d, a);
      _mm_storeu_ps(d + rows, b);
      _mm_storeu_ps(d + 2 * rows, e);
      _mm_storeu_ps(d + 3 * rows, f);
    }
    for (; c < c1; ++c)
      for (int64_t i = 0; i < 4; ++i)
        dst[c * rows + r + i] = src[(r + i) * cols + c];
  }
#endif
  for (; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c)
      dst[c * rows + r] = src[r * cols + c];
}

/// Transposes `images` consecutive `rows` x `cols` matrices.
void transposeImages(const float *src, float *dst, int64_t images, int64_t rows,
                     int64_t cols) {
  // Tiles that keep the stores' rows few: with many rows (a long spatial
  // axis in the destination's rows), 8 destination rows of 64 values; else
  // 32 x 32. Measured on an AVX-512 Xeon for the shapes of small CNNs.
  int64_t tileRows = rows > cols ? 64 : 32, tileCols = rows > cols ? 8 : 32;
  int64_t rowTiles = (rows + tileRows - 1) / tileRows;
  int64_t colTiles = (cols + tileCols - 1) / tileCols;
  int64_t tiles = images * rowTiles * colTiles;
  // About 16 KiB of values per chunk.
  int64_t grain = std::max<int64_t>(1, 4096 / (tileRows * tileCols));
  // On OpenMP threads, as oneDNN's own work (ScopedOmpThreads set the
  // count): the session's pool would compete with libgomp's workers, which
  // spin for a while after the convolution's parallel region. Each thread
  // takes a contiguous run of chunks of `grain` tiles.
  auto run = [&](int64_t first, int64_t last) {
    for (int64_t t = first; t < last; ++t) {
      int64_t image = t / (rowTiles * colTiles);
      int64_t rt = t / colTiles % rowTiles, ct = t % colTiles;
      int64_t r0 = rt * tileRows, c0 = ct * tileCols;
      transposeTile(src + image * rows * cols, dst + image * rows * cols, rows,
                    cols, r0, std::min(r0 + tileRows, rows), c0,
                    std::min(c0 + tileCols, cols));
    }
  };
  auto share = [&](int64_t first, int64_t last) {
    run(first * grain, std::min(tiles, last * grain));
  };
  omp::shareOverThreads((tiles + grain - 1) / grain, share);
}

} // namespace

void copyInParallel(void *dst, const void *src, size_t bytes) {
  // Chunks of 256 KiB: below two of them, a team costs more than it gains.
  constexpr size_t kChunk = size_t{1} << 18;
  auto *to = static_cast<char *>(dst);
  const auto *from = static_cast<const char *>(src);
  auto share = [&](int64_t first, int64_t last) {
    size_t begin = static_cast<size_t>(first) * kChunk;
    size_t end = std::min(bytes, static_cast<size_t>(last) * kChunk);
    if (begin < end)
      std::memcpy(to + begin, from + begin, end - begin);
  };
  omp::shareOverThreads(static_cast<int64_t>((bytes + kChunk - 1) / kChunk),
                        share);
}

LayoutConversion::LayoutConversion(const dnnl::memory::desc &from,
                                   const dnnl::memory::desc &to,
                                   const dnnl::memory::dims &dims) {
  if (dims.size() >= 3) {
    dnnl::memory::desc rowMajor = rowMajorDesc(dims),
                       channelsLast = channelsLastDesc(dims);
    bool toLast = from == rowMajor && to == channelsLast;
    bool fromLast = from == channelsLast && to == rowMajor;
    if (toLast || fromLast) {
      kind_ = toLast ? Kind::ToChannelsLast : Kind::FromChannelsLast;
      images_ = dims[0];
      channels_ = dims[1];
      spatial_ = 1;
      for (size_t i = 2; i < dims.size(); ++i)
        spatial_ *= dims[i];
      return;
    }
  }
  reorder_ = dnnl::reorder(
      dnnl::reorder::primitive_desc(cpuEngine(), from, cpuEngine(), to));
}

void LayoutConversion::execute(dnnl::stream &stream, const dnnl::memory &from,
                               const dnnl::memory &to) const {
  if (kind_ == Kind::Reorder) {
    dnnl::memory src = from, dst = to; // handles: copies share the data
    reorder_.execute(stream, src, dst);
    return;
  }
  stream.wait();
  const float *src = static_cast<const float *>(from.get_data_handle());
  float *dst = static_cast<float *>(to.get_data_handle());
  if (kind_ == Kind::ToChannelsLast)
    transposeImages(src, dst, images_, channels_, spatial_);
  else
    transposeImages(src, dst, images_, spatial_, channels_);
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
    if (v < minimum || v > kMaxWindowAttr)
      throw ctx.error("attribute '" + key + "' has value " + std::to_string(v) +
                      ", expected values from " + std::to_string(minimum) +
                      " to " + std::to_string(kMaxWindowAttr));
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

void PrimitiveWeights::prepare(const dnnl::memory::desc &user,
                               const dnnl::memory::desc &wanted,
                               const dnnl::engine &engine) {
  user_ = user;
  from_ = nullptr;
  reorder_ = wanted != user;
  reordered_ = dnnl::memory();
  if (reorder_) {
    reordered_ = dnnl::memory(wanted, engine);
    reorderPrimitive_ = dnnl::reorder(
        dnnl::reorder::primitive_desc(engine, user, engine, wanted));
  }
}

dnnl::memory PrimitiveWeights::get(const KernelContext &ctx, size_t input,
                                   dnnl::stream &stream, const void *data) {
  dnnl::memory given(user_, cpuEngine(), const_cast<void *>(data));
  if (!reorder_)
    return given;
  bool constant = ctx.inputIsConstant(input);
  if (!constant || from_ != data) {
    reorderPrimitive_.execute(stream, given, reordered_);
    from_ = constant ? data : nullptr;
  }
  return reordered_;
}

} // namespace dnnl_support

void registerDnnlKernels(
    const std::function<void(const std::string &, KernelFn)> &add) {
  add("dnnl.matmul", dnnl_support::matmul);
  // graph.matmul and graph.gemm on rows known only at run time, as host
  // steps of a GPU module (lib/Compiler/LibraryHostOps.cpp; on the CPU the
  // partitioner makes them dnnl.matmul steps with their epilogues).
  add("host.matmul", dnnl_support::matmul);
  add("host.gemm", dnnl_support::matmul);
  add("dnnl.conv", dnnl_support::conv);
  // Convolutions on images known only at run time (a detector's mask and
  // keypoint heads over its detections), as host steps on every target.
  add("host.conv", dnnl_support::conv);
  add("host.conv_transpose", dnnl_support::convTranspose);
  add("dnnl.pool", dnnl_support::pool);
  add("dnnl.concat", dnnl_support::concat);
}

} // namespace strata::rt::kernels
