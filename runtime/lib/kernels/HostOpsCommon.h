//===- HostOpsCommon.h - what the host kernels share ------------*- C++ -*-===//
//
// The helpers of the runtime's host kernels (HostOps.cpp, HostLayoutOps.cpp,
// HostImageOps.cpp): attributes with ONNX's defaults, elements as numbers
// (loaded and stored in double or 64-bit integers), broadcasting, strided
// copies and a copy under another shape. Private to runtime/lib/kernels.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_KERNELS_HOSTOPSCOMMON_H
#define STRATA_RUNTIME_KERNELS_HOSTOPSCOMMON_H

#include "HalfFloat.h"
#include "Kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <type_traits>

namespace strata::rt::kernels {

/// The host kernels of shapes and layouts (HostLayoutOps.cpp) and of images
/// and boxes (HostImageOps.cpp), registered by registerHostOpKernels.
void registerHostLayoutKernels(
    const std::function<void(const std::string &, KernelFn)> &add);
void registerHostImageKernels(
    const std::function<void(const std::string &, KernelFn)> &add);

namespace host {

using Shape = std::vector<int64_t>;

inline int64_t attrOr(KernelContext &ctx, const char *key, int64_t fallback) {
  return ctx.hasAttr(key) ? ctx.attrInt(key) : fallback;
}

/// The sizes of the op's operand groups (MLIR's operandSegmentSizes, as
/// operand_segment_sizes), or one per input when the op has no optional
/// operands.
inline std::vector<int64_t> segments(KernelContext &ctx) {
  if (ctx.hasAttr("operand_segment_sizes"))
    return ctx.attrInts("operand_segment_sizes");
  return std::vector<int64_t>(ctx.numInputs(), 1);
}

/// The input index of operand group `group`, or -1 when it is absent.
inline int64_t segmentInput(KernelContext &ctx, size_t group) {
  std::vector<int64_t> sizes = segments(ctx);
  if (group >= sizes.size() || sizes[group] == 0)
    return -1;
  int64_t index = 0;
  for (size_t g = 0; g < group; ++g)
    index += sizes[g];
  return index;
}

inline size_t normalizeAxis(KernelContext &ctx, int64_t axis, size_t rank,
                            const char *what) {
  auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw ctx.error(std::string(what) + " " + std::to_string(axis) +
                    " is out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

inline void refuseStrings(KernelContext &ctx, const TensorView &view) {
  if (view.dtype == DType::String)
    throw ctx.error("takes numbers, not the strings of " + describe(view));
}

//===----------------------------------------------------------------------===//
// Elements as numbers.
//===----------------------------------------------------------------------===//

enum class Kind { Float, Signed, Unsigned };

inline Kind kindOf(KernelContext &ctx, DType type) {
  switch (type) {
  case DType::F32:
  case DType::F64:
  case DType::F16:
  case DType::BF16:
    return Kind::Float;
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
    return Kind::Signed;
  case DType::I1:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
    return Kind::Unsigned;
  default:
    throw ctx.error(std::string("has no arithmetic for ") + dtypeName(type) +
                    " on the host (f32, f64 and integers)");
  }
}

/// `x` as an R: floating-point to integer truncates (NaN gives 0), as a C
/// cast does where it is defined.
template <typename R, typename T> R convertTo(T x) {
  if constexpr (std::is_floating_point_v<T> && std::is_integral_v<R>)
    return std::isnan(x) ? R(0) : static_cast<R>(std::trunc(x));
  else
    return static_cast<R>(x);
}

/// Element `i` of `v` (any type but strings) as an R (double or int64_t).
template <typename R> R load(const TensorView &v, int64_t i) {
  const auto *bits = static_cast<const uint16_t *>(v.data);
  switch (v.dtype) {
  case DType::I1:
    return static_cast<R>(static_cast<const uint8_t *>(v.data)[i]);
  case DType::F16:
    return convertTo<R>(halfToFloat(bits[i]));
  case DType::BF16:
    return convertTo<R>(bf16ToFloat(bits[i]));
  default: {
    R r{};
    dispatchNumeric(v.dtype, [&](auto type) {
      using T = decltype(type);
      r = convertTo<R>(static_cast<const T *>(v.data)[i]);
    });
    return r;
  }
  }
}

inline double loadF(const TensorView &v, int64_t i) {
  return load<double>(v, i);
}
inline int64_t loadI(const TensorView &v, int64_t i) {
  return load<int64_t>(v, i);
}

/// Stores `x` (double or int64_t) as element `i` of `v`, in its type (i1:
/// nonzero is true; f16 and bf16 rounded to nearest even).
template <typename S> void store(const TensorView &v, int64_t i, S x) {
  auto *bits = static_cast<uint16_t *>(v.data);
  switch (v.dtype) {
  case DType::I1:
    static_cast<uint8_t *>(v.data)[i] = x != 0;
    return;
  case DType::F16:
    bits[i] = floatToHalf(static_cast<float>(x));
    return;
  case DType::BF16:
    bits[i] = floatToBf16(static_cast<float>(x));
    return;
  default:
    dispatchNumeric(v.dtype, [&](auto type) {
      using T = decltype(type);
      static_cast<T *>(v.data)[i] = convertTo<T>(x);
    });
  }
}

inline void storeF(const TensorView &v, int64_t i, double x) { store(v, i, x); }
inline void storeI(const TensorView &v, int64_t i, int64_t x) {
  store(v, i, x);
}

/// The values of a small integer operand (a shape, axes, k).
inline std::vector<int64_t> intValues(KernelContext &ctx, size_t input) {
  const TensorView &v = ctx.input(input);
  kindOf(ctx, v.dtype);
  std::vector<int64_t> values(v.numElements());
  for (int64_t i = 0; i < v.numElements(); ++i)
    values[i] = loadI(v, i);
  return values;
}

/// The value of an operand of one element.
inline int64_t scalarInt(KernelContext &ctx, size_t input, const char *what) {
  const TensorView &v = ctx.input(input);
  if (v.numElements() != 1)
    throw ctx.error(std::string(what) + " must hold one value, got " +
                    describe(v));
  kindOf(ctx, v.dtype);
  return loadI(v, 0);
}

//===----------------------------------------------------------------------===//
// Broadcasting.
//===----------------------------------------------------------------------===//

inline Shape broadcastShape(KernelContext &ctx,
                            const std::vector<Shape> &shapes) {
  size_t rank = 0;
  for (const Shape &s : shapes)
    rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape &s : shapes)
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t &o = out[rank - s.size() + d];
      if (s[d] == o || s[d] == 1)
        continue;
      if (o != 1)
        throw ctx.error("cannot broadcast " + shapeToString(s) + " with " +
                        shapeToString(out));
      o = s[d];
    }
  // A dimension of 0 against 1 is 0.
  for (const Shape &s : shapes)
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] == 0)
        out[rank - s.size() + d] = 0;
  return out;
}

/// Element strides of `in` as seen through `out`'s dimensions (0 where `in`
/// is broadcast).
inline Shape broadcastStrides(const Shape &in, const Shape &out) {
  Shape strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    size_t d = in.size() - 1 - k;
    size_t o = out.size() - 1 - k;
    strides[o] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  return strides;
}

/// Calls f(outIndex, offsets) for every element of `shape` in row-major
/// order, with each operand's element offset given its `strides`.
template <typename F>
inline void forEachElement(const Shape &shape,
                           const std::vector<Shape> &strides, F &&f) {
  int64_t count = numElements(shape);
  if (count == 0)
    return;
  size_t rank = shape.size();
  Shape index(rank, 0);
  std::vector<int64_t> offsets(strides.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    f(n, offsets.data());
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k]) {
        for (size_t s = 0; s < strides.size(); ++s)
          offsets[s] += strides[s][k];
        break;
      }
      index[k] = 0;
      for (size_t s = 0; s < strides.size(); ++s)
        offsets[s] -= strides[s][k] * (shape[k] - 1);
    }
  }
}

/// Row-major element strides of `shape`.
inline Shape contiguousStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;)
    strides[k - 1] = strides[k] * shape[k];
  return strides;
}

/// Copies elements of `in` (any type but strings) to `out`, element n of
/// `out` from element offsets[0] of `in`.
inline void copyStrided(const TensorView &out, const TensorView &in,
                        const Shape &inStrides) {
  size_t size = dtypeSize(in.dtype);
  auto *dst = static_cast<uint8_t *>(out.data);
  const auto *src = static_cast<const uint8_t *>(in.data);
  if (!out.shape.empty() && inStrides.back() == 1) {
    // Rows contiguous in both: one copy per row.
    Shape rows(out.shape.begin(), out.shape.end() - 1);
    Shape strides(inStrides.begin(), inStrides.end() - 1);
    size_t bytes = static_cast<size_t>(out.shape.back()) * size;
    if (!bytes)
      return;
    forEachElement(rows, {strides}, [&](int64_t n, const int64_t *off) {
      std::memcpy(dst + n * bytes, src + off[0] * size, bytes);
    });
    return;
  }
  // Element by element, with the element's size known to the compiler.
  auto copy = [&](auto type) {
    using T = decltype(type);
    auto *to = reinterpret_cast<T *>(dst);
    const auto *from = reinterpret_cast<const T *>(src);
    forEachElement(out.shape, {inStrides}, [&](int64_t n, const int64_t *off) {
      to[n] = from[off[0]];
    });
  };
  switch (size) {
  case 1:
    return copy(uint8_t());
  case 2:
    return copy(uint16_t());
  case 4:
    return copy(uint32_t());
  case 8:
    return copy(uint64_t());
  default:
    forEachElement(out.shape, {inStrides}, [&](int64_t n, const int64_t *off) {
      std::memcpy(dst + n * size, src + off[0] * size, size);
    });
  }
}

inline void copyAs(KernelContext &ctx, const Shape &shape) {
  const TensorView &x = ctx.input(0);
  refuseStrings(ctx, x);
  if (numElements(shape) != x.numElements())
    throw ctx.error("cannot give the " + std::to_string(x.numElements()) +
                    " elements of " + describe(x) + " the shape " +
                    shapeToString(shape));
  TensorView &out = ctx.allocateOutput(0, shape);
  if (x.numElements())
    std::memcpy(out.data, x.data, x.byteSize());
}

inline std::vector<int64_t> axesOperandOrAttr(KernelContext &ctx) {
  if (ctx.numInputs() > 1)
    return intValues(ctx, 1);
  if (ctx.hasAttr("axes"))
    return ctx.attrInts("axes");
  return {};
}

} // namespace host
} // namespace strata::rt::kernels

#endif // STRATA_RUNTIME_KERNELS_HOSTOPSCOMMON_H
