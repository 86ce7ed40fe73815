//===- HostOps.cpp - graph ops on shapes known only at run time -*- C++ -*-===//
//
// The host kernels of the ops that follow a value-dependent shape: a
// detection model's post-processing after NonZero (Transpose, GatherND,
// TopK with a k computed from a shape, Concat, an If on `numel == 0`, ...).
// Generated code is compiled for static shapes, so the compiler runs every
// op that reads a value sized at run time, or whose own shape follows from
// such a value, as one of these kernels (lib/Compiler/LibraryHostOps.cpp).
// Each kernel is named "host." and its graph op's name ("host.gather_nd"),
// reads the graph op's attributes under their own names (with ONNX's
// defaults where one is absent), computes its output shapes from its
// operands when it runs and gives them storage with allocateOutput.
//
// Semantics are ONNX's, as the ONNX reference implementation has them.
// Arithmetic is in double for floating-point types (f16 and bf16 widened
// exactly, and rounded to nearest even when stored) and in 64-bit integers
// for integer types (i1 as 0/1), stored in the output's type; layout ops
// move any element type but strings as bytes. These kernels are written for
// the small tensors of such tails (boxes, scores, indices): one thread,
// element by element, except RoiAlign and the products (oneDNN) that a
// two-stage detector runs on its proposals.
//
// "host.guard" and "host.merge" carry a run-time If (RunTimeBranches.cpp):
// the executor skips a guard whose condition is not its `expect`, and every
// step that reads a value it skipped (docs/runtime.md, "Run-time branches");
// a merge passes on the value of the branch that ran.
//
//===----------------------------------------------------------------------===//

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

namespace {

using Shape = std::vector<int64_t>;

int64_t attrOr(KernelContext &ctx, const char *key, int64_t fallback) {
  return ctx.hasAttr(key) ? ctx.attrInt(key) : fallback;
}

/// The sizes of the op's operand groups (MLIR's operandSegmentSizes, as
/// operand_segment_sizes), or one per input when the op has no optional
/// operands.
std::vector<int64_t> segments(KernelContext &ctx) {
  if (ctx.hasAttr("operand_segment_sizes"))
    return ctx.attrInts("operand_segment_sizes");
  return std::vector<int64_t>(ctx.numInputs(), 1);
}

/// The input index of operand group `group`, or -1 when it is absent.
int64_t segmentInput(KernelContext &ctx, size_t group) {
  std::vector<int64_t> sizes = segments(ctx);
  if (group >= sizes.size() || sizes[group] == 0)
    return -1;
  int64_t index = 0;
  for (size_t g = 0; g < group; ++g)
    index += sizes[g];
  return index;
}

size_t normalizeAxis(KernelContext &ctx, int64_t axis, size_t rank,
                     const char *what) {
  auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw ctx.error(std::string(what) + " " + std::to_string(axis) +
                    " is out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

void refuseStrings(KernelContext &ctx, const TensorView &view) {
  if (view.dtype == DType::String)
    throw ctx.error("takes numbers, not the strings of " + describe(view));
}

//===----------------------------------------------------------------------===//
// Elements as numbers.
//===----------------------------------------------------------------------===//

enum class Kind { Float, Signed, Unsigned };

Kind kindOf(KernelContext &ctx, DType type) {
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

double loadF(const TensorView &v, int64_t i) { return load<double>(v, i); }
int64_t loadI(const TensorView &v, int64_t i) { return load<int64_t>(v, i); }

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

void storeF(const TensorView &v, int64_t i, double x) { store(v, i, x); }
void storeI(const TensorView &v, int64_t i, int64_t x) { store(v, i, x); }

/// The values of a small integer operand (a shape, axes, k).
std::vector<int64_t> intValues(KernelContext &ctx, size_t input) {
  const TensorView &v = ctx.input(input);
  kindOf(ctx, v.dtype);
  std::vector<int64_t> values(v.numElements());
  for (int64_t i = 0; i < v.numElements(); ++i)
    values[i] = loadI(v, i);
  return values;
}

/// The value of an operand of one element.
int64_t scalarInt(KernelContext &ctx, size_t input, const char *what) {
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

Shape broadcastShape(KernelContext &ctx, const std::vector<Shape> &shapes) {
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
Shape broadcastStrides(const Shape &in, const Shape &out) {
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
void forEachElement(const Shape &shape, const std::vector<Shape> &strides,
                    F &&f) {
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
Shape contiguousStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;)
    strides[k - 1] = strides[k] * shape[k];
  return strides;
}

/// Copies elements of `in` (any type but strings) to `out`, element n of
/// `out` from element offsets[0] of `in`.
void copyStrided(const TensorView &out, const TensorView &in,
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

//===----------------------------------------------------------------------===//
// Elementwise.
//===----------------------------------------------------------------------===//

enum class Binary {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Mod,
  Max,
  Min,
  Equal,
  Less,
  Greater,
  LessEqual,
  GreaterEqual,
  And,
  Or,
  Xor,
  BitAnd,
  BitOr,
  BitXor
};

template <Binary op> void binaryKernel(KernelContext &ctx) {
  if (ctx.numInputs() != 2 || ctx.numOutputs() != 1)
    throw ctx.error("expects 2 inputs and 1 output");
  const TensorView &a = ctx.input(0), &b = ctx.input(1);
  Kind kind = kindOf(ctx, a.dtype);
  kindOf(ctx, b.dtype);
  Shape shape = broadcastShape(ctx, {a.shape, b.shape});
  TensorView &out = ctx.allocateOutput(0, shape);
  kindOf(ctx, out.dtype);
  std::vector<Shape> strides = {broadcastStrides(a.shape, shape),
                                broadcastStrides(b.shape, shape)};
  int64_t fmod = attrOr(ctx, "fmod", 0);
  if (kind == Kind::Float || op == Binary::Pow) {
    forEachElement(shape, strides, [&](int64_t n, const int64_t *o) {
      double x = loadF(a, o[0]), y = loadF(b, o[1]), r = 0;
      switch (op) {
      case Binary::Add:
        r = x + y;
        break;
      case Binary::Sub:
        r = x - y;
        break;
      case Binary::Mul:
        r = x * y;
        break;
      case Binary::Div:
        r = x / y;
        break;
      case Binary::Pow:
        r = std::pow(x, y);
        break;
      case Binary::Mod:
        r = std::fmod(x, y);
        break;
      case Binary::Max:
        r = std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
        break;
      case Binary::Min:
        r = std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
        break;
      case Binary::Equal:
        r = x == y;
        break;
      case Binary::Less:
        r = x < y;
        break;
      case Binary::Greater:
        r = x > y;
        break;
      case Binary::LessEqual:
        r = x <= y;
        break;
      case Binary::GreaterEqual:
        r = x >= y;
        break;
      case Binary::And:
        r = (x != 0) && (y != 0);
        break;
      case Binary::Or:
        r = (x != 0) || (y != 0);
        break;
      case Binary::Xor:
        r = (x != 0) != (y != 0);
        break;
      default:
        throw ctx.error("has no floating-point form");
      }
      storeF(out, n, r);
    });
    return;
  }
  bool isUnsigned = kind == Kind::Unsigned;
  forEachElement(shape, strides, [&](int64_t n, const int64_t *o) {
    int64_t x = loadI(a, o[0]), y = loadI(b, o[1]), r = 0;
    auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    switch (op) {
    case Binary::Add:
      r = static_cast<int64_t>(ux + uy);
      break;
    case Binary::Sub:
      r = static_cast<int64_t>(ux - uy);
      break;
    case Binary::Mul:
      r = static_cast<int64_t>(ux * uy);
      break;
    case Binary::Div:
    case Binary::Mod:
      if (y == 0)
        throw ctx.error("divides an integer by zero");
      if (isUnsigned) {
        r = static_cast<int64_t>(op == Binary::Div ? ux / uy : ux % uy);
      } else if (y == -1) {
        // INT64_MIN / -1 overflows: wrap, as the generated code does.
        r = op == Binary::Div ? static_cast<int64_t>(0 - ux) : 0;
      } else if (op == Binary::Div) {
        r = x / y;
      } else {
        r = x % y;
        if (!fmod && r != 0 && ((r < 0) != (y < 0)))
          r += y;
      }
      break;
    case Binary::Max:
      r = isUnsigned ? static_cast<int64_t>(std::max(ux, uy)) : std::max(x, y);
      break;
    case Binary::Min:
      r = isUnsigned ? static_cast<int64_t>(std::min(ux, uy)) : std::min(x, y);
      break;
    case Binary::Equal:
      r = x == y;
      break;
    case Binary::Less:
      r = isUnsigned ? ux < uy : x < y;
      break;
    case Binary::Greater:
      r = isUnsigned ? ux > uy : x > y;
      break;
    case Binary::LessEqual:
      r = isUnsigned ? ux <= uy : x <= y;
      break;
    case Binary::GreaterEqual:
      r = isUnsigned ? ux >= uy : x >= y;
      break;
    case Binary::And:
      r = (x != 0) && (y != 0);
      break;
    case Binary::Or:
      r = (x != 0) || (y != 0);
      break;
    case Binary::Xor:
      r = (x != 0) != (y != 0);
      break;
    case Binary::BitAnd:
      r = x & y;
      break;
    case Binary::BitOr:
      r = x | y;
      break;
    case Binary::BitXor:
      r = x ^ y;
      break;
    default:
      break;
    }
    storeI(out, n, r);
  });
}

enum class Unary {
  Abs,
  Neg,
  Exp,
  Log,
  Sqrt,
  Reciprocal,
  Relu,
  Sigmoid,
  Tanh,
  Erf,
  Floor,
  Ceil,
  Round,
  Sign,
  Sin,
  Cos,
  Not,
  IsNaN,
  IsInf,
  Cast,
  Identity
};

/// `op` on a floating-point value, computed in double.
template <Unary op>
double applyFloat(double v, bool infPositive, bool infNegative) {
  double r = v;
  switch (op) {
  case Unary::Abs:
    r = std::fabs(v);
    break;
  case Unary::Neg:
    r = -v;
    break;
  case Unary::Exp:
    r = std::exp(v);
    break;
  case Unary::Log:
    r = std::log(v);
    break;
  case Unary::Sqrt:
    r = std::sqrt(v);
    break;
  case Unary::Reciprocal:
    r = 1 / v;
    break;
  case Unary::Relu:
    r = v < 0 ? 0 : v;
    break;
  case Unary::Sigmoid:
    r = 1 / (1 + std::exp(-v));
    break;
  case Unary::Tanh:
    r = std::tanh(v);
    break;
  case Unary::Erf:
    r = std::erf(v);
    break;
  case Unary::Floor:
    r = std::floor(v);
    break;
  case Unary::Ceil:
    r = std::ceil(v);
    break;
  case Unary::Round:
    r = std::nearbyint(v);
    break;
  case Unary::Sign:
    r = v > 0 ? 1 : v < 0 ? -1 : v;
    break;
  case Unary::Sin:
    r = std::sin(v);
    break;
  case Unary::Cos:
    r = std::cos(v);
    break;
  case Unary::Not:
    r = v == 0;
    break;
  case Unary::IsNaN:
    r = std::isnan(v);
    break;
  case Unary::IsInf:
    r = std::isinf(v) && (v > 0 ? infPositive : infNegative);
    break;
  default:
    break;
  }
  return r;
}

template <Unary op> void unaryKernel(KernelContext &ctx) {
  if (ctx.numInputs() != 1 || ctx.numOutputs() != 1)
    throw ctx.error("expects 1 input and 1 output");
  const TensorView &x = ctx.input(0);
  TensorView &out = ctx.allocateOutput(0, x.shape);
  int64_t count = x.numElements();
  if (op == Unary::Identity || (op == Unary::Cast && x.dtype == out.dtype)) {
    refuseStrings(ctx, x);
    if (count)
      std::memcpy(out.data, x.data, x.byteSize());
    return;
  }
  Kind kind = kindOf(ctx, x.dtype);
  Kind outKind = kindOf(ctx, out.dtype);
  bool infPositive = attrOr(ctx, "detect_positive", 1) != 0;
  bool infNegative = attrOr(ctx, "detect_negative", 1) != 0;
  if (x.dtype == DType::F32 && out.dtype == DType::F32) {
    // The common case without the per-element type dispatch below, split
    // over the pool: a mask head's ReLU over [100, 256, 28, 28].
    const auto *src = static_cast<const float *>(x.data);
    auto *dst = static_cast<float *>(out.data);
    ctx.pool().parallelFor(0, count, 1 << 15, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        dst[i] = static_cast<float>(
            applyFloat<op>(src[i], infPositive, infNegative));
    });
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (kind != Kind::Float &&
        (op == Unary::Cast || op == Unary::Abs || op == Unary::Neg ||
         op == Unary::Relu || op == Unary::Sign || op == Unary::Not ||
         op == Unary::Floor || op == Unary::Ceil || op == Unary::Round)) {
      int64_t v = loadI(x, i), r = v;
      if (op == Unary::Abs)
        r = kind == Kind::Signed && v < 0 ? -v : v;
      else if (op == Unary::Neg)
        r = -v;
      else if (op == Unary::Relu)
        r = kind == Kind::Signed && v < 0 ? 0 : v;
      else if (op == Unary::Sign)
        r = v > 0 ? 1 : (v < 0 && kind == Kind::Signed ? -1 : 0);
      else if (op == Unary::Not)
        r = v == 0;
      if (op == Unary::Cast && kind == Kind::Unsigned &&
          outKind == Kind::Float && x.dtype == DType::U64)
        storeF(out, i, static_cast<double>(static_cast<uint64_t>(v)));
      else
        storeI(out, i, r);
      continue;
    }
    storeF(out, i, applyFloat<op>(loadF(x, i), infPositive, infNegative));
  }
}

void where(KernelContext &ctx) {
  const TensorView &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  refuseStrings(ctx, x);
  Shape shape = broadcastShape(ctx, {c.shape, x.shape, y.shape});
  TensorView &out = ctx.allocateOutput(0, shape);
  size_t size = dtypeSize(x.dtype);
  std::vector<Shape> strides = {broadcastStrides(c.shape, shape),
                                broadcastStrides(x.shape, shape),
                                broadcastStrides(y.shape, shape)};
  auto *dst = static_cast<uint8_t *>(out.data);
  forEachElement(shape, strides, [&](int64_t n, const int64_t *o) {
    bool take = static_cast<const uint8_t *>(c.data)[o[0]] != 0;
    const auto *src = static_cast<const uint8_t *>(take ? x.data : y.data);
    std::memcpy(dst + n * size, src + (take ? o[1] : o[2]) * size, size);
  });
}

void clip(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  Kind kind = kindOf(ctx, x.dtype);
  int64_t minIn = segmentInput(ctx, 1), maxIn = segmentInput(ctx, 2);
  TensorView &out = ctx.allocateOutput(0, x.shape);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    if (kind == Kind::Float) {
      double v = loadF(x, i);
      if (minIn >= 0)
        v = std::max(v, loadF(ctx.input(minIn), 0));
      if (maxIn >= 0)
        v = std::min(v, loadF(ctx.input(maxIn), 0));
      storeF(out, i, v);
    } else {
      int64_t v = loadI(x, i);
      if (minIn >= 0)
        v = std::max(v, loadI(ctx.input(minIn), 0));
      if (maxIn >= 0)
        v = std::min(v, loadI(ctx.input(maxIn), 0));
      storeI(out, i, v);
    }
  }
}

//===----------------------------------------------------------------------===//
// Shapes and layouts (any element type, moved as bytes).
//===----------------------------------------------------------------------===//

void copyAs(KernelContext &ctx, const Shape &shape) {
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

void reshape(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  std::vector<int64_t> target = intValues(ctx, 1);
  bool allowZero = attrOr(ctx, "allowzero", 0) != 0;
  int64_t known = 1;
  int64_t inferred = -1;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == 0 && !allowZero) {
      if (d >= x.shape.size())
        throw ctx.error("copies dimension " + std::to_string(d) + " of " +
                        describe(x) + ", which it does not have");
      target[d] = x.shape[d];
    }
    if (target[d] == -1) {
      if (inferred >= 0)
        throw ctx.error("has more than one -1 in its shape");
      inferred = static_cast<int64_t>(d);
      continue;
    }
    if (target[d] < 0)
      throw ctx.error("has a negative dimension in its shape");
    known *= target[d];
  }
  if (inferred >= 0) {
    if (known == 0 || x.numElements() % known)
      throw ctx.error("cannot infer the -1 of its shape from " + describe(x));
    target[inferred] = x.numElements() / known;
  }
  copyAs(ctx, target);
}

void flatten(KernelContext &ctx) {
  const Shape &in = ctx.input(0).shape;
  // Flatten's axis runs over [-rank, rank].
  auto rank = static_cast<int64_t>(in.size());
  int64_t axis = attrOr(ctx, "axis", 1);
  if (axis < -rank || axis > rank)
    throw ctx.error("axis " + std::to_string(axis) +
                    " is out of range for rank " + std::to_string(rank));
  auto at = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  copyAs(ctx, {product(in, 0, at), product(in, at, in.size())});
}

std::vector<int64_t> axesOperandOrAttr(KernelContext &ctx) {
  if (ctx.numInputs() > 1)
    return intValues(ctx, 1);
  if (ctx.hasAttr("axes"))
    return ctx.attrInts("axes");
  return {};
}

void squeeze(KernelContext &ctx) {
  const Shape &in = ctx.input(0).shape;
  std::vector<int64_t> axes = axesOperandOrAttr(ctx);
  std::vector<bool> drop(in.size(), false);
  if (axes.empty()) {
    for (size_t d = 0; d < in.size(); ++d)
      drop[d] = in[d] == 1;
  }
  for (int64_t axis : axes) {
    size_t d = normalizeAxis(ctx, axis, in.size(), "axis");
    if (in[d] != 1)
      throw ctx.error("squeezes dimension " + std::to_string(d) + " of " +
                      describe(ctx.input(0)) + ", which is not 1");
    drop[d] = true;
  }
  Shape shape;
  for (size_t d = 0; d < in.size(); ++d)
    if (!drop[d])
      shape.push_back(in[d]);
  copyAs(ctx, shape);
}

void unsqueeze(KernelContext &ctx) {
  const Shape &in = ctx.input(0).shape;
  std::vector<int64_t> axes = axesOperandOrAttr(ctx);
  size_t rank = in.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : axes)
    inserted[normalizeAxis(ctx, axis, rank, "axis")] = true;
  Shape shape;
  size_t next = 0;
  for (size_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : in[next++]);
  copyAs(ctx, shape);
}

void identity(KernelContext &ctx) { copyAs(ctx, ctx.input(0).shape); }

void transpose(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  refuseStrings(ctx, x);
  size_t rank = x.shape.size();
  std::vector<int64_t> perm;
  if (ctx.hasAttr("perm"))
    perm = ctx.attrInts("perm");
  else
    for (size_t d = rank; d-- > 0;)
      perm.push_back(static_cast<int64_t>(d));
  if (perm.size() != rank)
    throw ctx.error("has a permutation of " + std::to_string(perm.size()) +
                    " axes for " + describe(x));
  Shape shape(rank), strides(rank);
  Shape in = contiguousStrides(x.shape);
  for (size_t d = 0; d < rank; ++d) {
    size_t from = normalizeAxis(ctx, perm[d], rank, "perm entry");
    shape[d] = x.shape[from];
    strides[d] = in[from];
  }
  TensorView &out = ctx.allocateOutput(0, shape);
  copyStrided(out, x, strides);
}

void expand(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  refuseStrings(ctx, x);
  Shape shape = broadcastShape(ctx, {x.shape, intValues(ctx, 1)});
  TensorView &out = ctx.allocateOutput(0, shape);
  copyStrided(out, x, broadcastStrides(x.shape, shape));
}

void tile(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  refuseStrings(ctx, x);
  std::vector<int64_t> repeats = intValues(ctx, 1);
  if (repeats.size() != x.shape.size())
    throw ctx.error("has " + std::to_string(repeats.size()) + " repeats for " +
                    describe(x));
  Shape shape(x.shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] = x.shape[d] * repeats[d];
  TensorView &out = ctx.allocateOutput(0, shape);
  size_t size = dtypeSize(x.dtype);
  Shape in = contiguousStrides(x.shape);
  Shape index(shape.size());
  auto *dst = static_cast<uint8_t *>(out.data);
  const auto *src = static_cast<const uint8_t *>(x.data);
  for (int64_t n = 0; n < out.numElements(); ++n) {
    int64_t offset = 0, rest = n;
    for (size_t d = shape.size(); d-- > 0;) {
      offset += (rest % shape[d]) % x.shape[d] * in[d];
      rest /= shape[d];
    }
    std::memcpy(dst + n * size, src + offset * size, size);
  }
}

void concat(KernelContext &ctx) {
  const TensorView &first = ctx.input(0);
  refuseStrings(ctx, first);
  size_t rank = first.shape.size();
  size_t axis = normalizeAxis(ctx, ctx.attrInt("axis"), rank, "axis");
  Shape shape = first.shape;
  shape[axis] = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const TensorView &in = ctx.input(i);
    for (size_t d = 0; d < rank; ++d)
      if (d != axis && (in.shape.size() != rank || in.shape[d] != shape[d]))
        throw ctx.error("joins " + describe(in) + " to " + describe(first) +
                        " along axis " + std::to_string(axis));
    shape[axis] += in.shape[axis];
  }
  TensorView &out = ctx.allocateOutput(0, shape);
  size_t size = dtypeSize(first.dtype);
  int64_t outer = product(shape, 0, axis);
  int64_t inner = product(shape, axis + 1, rank) * static_cast<int64_t>(size);
  int64_t row = shape[axis] * inner, at = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const TensorView &in = ctx.input(i);
    int64_t chunk = in.shape[axis] * inner;
    for (int64_t o = 0; o < outer && chunk; ++o)
      std::memcpy(static_cast<uint8_t *>(out.data) + o * row + at,
                  static_cast<const uint8_t *>(in.data) + o * chunk, chunk);
    at += chunk;
  }
}

void split(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  refuseStrings(ctx, x);
  size_t rank = x.shape.size();
  size_t axis = normalizeAxis(ctx, attrOr(ctx, "axis", 0), rank, "axis");
  std::vector<int64_t> sizes;
  if (ctx.numInputs() > 1)
    sizes = intValues(ctx, 1);
  else if (ctx.hasAttr("split"))
    sizes = ctx.attrInts("split");
  else {
    auto n = static_cast<int64_t>(ctx.numOutputs());
    int64_t each = (x.shape[axis] + n - 1) / n;
    for (int64_t k = 0; k < n; ++k)
      sizes.push_back(
          std::max<int64_t>(0, std::min(each, x.shape[axis] - k * each)));
  }
  if (sizes.size() != ctx.numOutputs() ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != x.shape[axis])
    throw ctx.error("cannot split " + describe(x) + " along axis " +
                    std::to_string(axis) + " into " +
                    std::to_string(ctx.numOutputs()) +
                    " parts of the sizes "
                    "given");
  size_t size = dtypeSize(x.dtype);
  int64_t outer = product(x.shape, 0, axis);
  int64_t inner = product(x.shape, axis + 1, rank) * static_cast<int64_t>(size);
  int64_t row = x.shape[axis] * inner, at = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape shape = x.shape;
    shape[axis] = sizes[k];
    TensorView &out = ctx.allocateOutput(k, shape);
    int64_t chunk = sizes[k] * inner;
    for (int64_t o = 0; o < outer && chunk; ++o)
      std::memcpy(static_cast<uint8_t *>(out.data) + o * chunk,
                  static_cast<const uint8_t *>(x.data) + o * row + at, chunk);
    at += chunk;
  }
}

void slice(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  refuseStrings(ctx, x);
  size_t rank = x.shape.size();
  std::vector<int64_t> starts = intValues(ctx, 1), ends = intValues(ctx, 2);
  int64_t axesIn = segmentInput(ctx, 3), stepsIn = segmentInput(ctx, 4);
  std::vector<int64_t> axes, steps;
  if (axesIn >= 0)
    axes = intValues(ctx, axesIn);
  else
    for (size_t d = 0; d < starts.size(); ++d)
      axes.push_back(static_cast<int64_t>(d));
  if (stepsIn >= 0)
    steps = intValues(ctx, stepsIn);
  else
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    throw ctx.error("has starts, ends, axes and steps of different lengths");
  Shape begin(rank, 0), step(rank, 1), shape = x.shape;
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t d = normalizeAxis(ctx, axes[k], rank, "axis");
    int64_t dim = x.shape[d], s = steps[k];
    if (s == 0)
      throw ctx.error("has a step of 0");
    int64_t b = starts[k], e = ends[k];
    if (b < 0)
      b += dim;
    if (e < 0)
      e += dim;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[d] = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[d] = b > e ? (b - e + (-s) - 1) / (-s) : 0;
    }
    begin[d] = b;
    step[d] = s;
  }
  TensorView &out = ctx.allocateOutput(0, shape);
  Shape in = contiguousStrides(x.shape), strides(rank);
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) {
    strides[d] = in[d] * step[d];
    base += begin[d] * in[d];
  }
  if (out.numElements() == 0)
    return;
  TensorView shifted = x;
  shifted.data = static_cast<uint8_t *>(x.data) + base * dtypeSize(x.dtype);
  copyStrided(out, shifted, strides);
}

int64_t checkedIndex(KernelContext &ctx, int64_t index, int64_t dim) {
  if (index < -dim || index >= dim)
    throw ctx.error("index " + std::to_string(index) +
                    " is out of range for a dimension of " +
                    std::to_string(dim));
  return index < 0 ? index + dim : index;
}

void gather(KernelContext &ctx) {
  const TensorView &x = ctx.input(0), &indices = ctx.input(1);
  refuseStrings(ctx, x);
  size_t rank = x.shape.size();
  size_t axis = normalizeAxis(ctx, attrOr(ctx, "axis", 0), rank, "axis");
  Shape shape(x.shape.begin(), x.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
  TensorView &out = ctx.allocateOutput(0, shape);
  size_t size = dtypeSize(x.dtype);
  int64_t outer = product(x.shape, 0, axis);
  int64_t inner = product(x.shape, axis + 1, rank) * static_cast<int64_t>(size);
  int64_t count = indices.numElements();
  auto *dst = static_cast<uint8_t *>(out.data);
  const auto *src = static_cast<const uint8_t *>(x.data);
  for (int64_t k = 0; k < count; ++k) {
    int64_t at = checkedIndex(ctx, loadI(indices, k), x.shape[axis]);
    for (int64_t o = 0; o < outer && inner; ++o)
      std::memcpy(dst + (o * count + k) * inner,
                  src + (o * x.shape[axis] + at) * inner, inner);
  }
}

void gatherElements(KernelContext &ctx) {
  const TensorView &x = ctx.input(0), &indices = ctx.input(1);
  refuseStrings(ctx, x);
  size_t rank = x.shape.size();
  size_t axis = normalizeAxis(ctx, attrOr(ctx, "axis", 0), rank, "axis");
  if (indices.shape.size() != rank)
    throw ctx.error("takes indices of the data's rank, got " +
                    describe(indices));
  TensorView &out = ctx.allocateOutput(0, indices.shape);
  size_t size = dtypeSize(x.dtype);
  Shape strides = contiguousStrides(x.shape);
  Shape others = strides;
  others[axis] = 0;
  auto *dst = static_cast<uint8_t *>(out.data);
  const auto *src = static_cast<const uint8_t *>(x.data);
  forEachElement(indices.shape, {others}, [&](int64_t n, const int64_t *o) {
    int64_t offset =
        o[0] +
        checkedIndex(ctx, loadI(indices, n), x.shape[axis]) * strides[axis];
    std::memcpy(dst + n * size, src + offset * size, size);
  });
}

/// ScatterElements: data with each update written (or reduced: "add",
/// "mul", "max", "min") at its index along `axis`.
/// The `reduction` of ScatterElements and ScatterND: 0 none, 1 add, 2 mul,
/// 3 max, 4 min; an Error naming any other. With a reduction, the data's
/// element type must be one kindOf takes.
int scatterReduction(KernelContext &ctx, DType dtype) {
  std::string reduction =
      ctx.hasAttr("reduction") ? ctx.attrString("reduction") : "none";
  int mode = reduction == "none"  ? 0
             : reduction == "add" ? 1
             : reduction == "mul" ? 2
             : reduction == "max" ? 3
             : reduction == "min" ? 4
                                  : -1;
  if (mode < 0)
    throw ctx.error("has reduction '" + reduction + "'");
  if (mode != 0)
    kindOf(ctx, dtype);
  return mode;
}

/// out[at] = out[at] (reduction `mode`, not 0) updates[from].
void reduceInto(const TensorView &out, int64_t at, const TensorView &updates,
                int64_t from, int mode, bool isFloat) {
  auto combine = [mode](auto a, auto b) {
    return mode == 1   ? a + b
           : mode == 2 ? a * b
           : mode == 3 ? std::max(a, b)
                       : std::min(a, b);
  };
  if (isFloat)
    storeF(out, at, combine(loadF(out, at), loadF(updates, from)));
  else
    storeI(out, at, combine(loadI(out, at), loadI(updates, from)));
}

void scatterElements(KernelContext &ctx) {
  const TensorView &x = ctx.input(0), &indices = ctx.input(1),
                   &updates = ctx.input(2);
  refuseStrings(ctx, x);
  size_t rank = x.shape.size();
  size_t axis = normalizeAxis(ctx, attrOr(ctx, "axis", 0), rank, "axis");
  if (indices.shape != updates.shape || indices.shape.size() != rank)
    throw ctx.error("takes indices and updates of one shape and the data's "
                    "rank, got " +
                    describe(indices) + " and " + describe(updates));
  int mode = scatterReduction(ctx, x.dtype);
  TensorView &out = ctx.allocateOutput(0, x.shape);
  if (x.numElements())
    std::memcpy(out.data, x.data, x.byteSize());
  size_t size = dtypeSize(x.dtype);
  // Each index's element of the data: the data's strides on every axis but
  // `axis`, where the index itself says where.
  Shape strides = contiguousStrides(x.shape);
  Shape others = strides;
  others[axis] = 0;
  bool isFloat = mode != 0 && kindOf(ctx, x.dtype) == Kind::Float;
  auto *dst = static_cast<uint8_t *>(out.data);
  const auto *src = static_cast<const uint8_t *>(updates.data);
  int64_t dim = x.shape[axis], step = strides[axis];
  if (mode == 0 && indices.dtype == DType::I64 &&
      std::equal(indices.shape.begin() + axis + 1, indices.shape.end(),
                 x.shape.begin() + axis + 1)) {
    // The dimensions after `axis` are whole, so each index row of them is
    // contiguous in the indices, the updates and the data: copied at once
    // where its indices agree, as an index broadcast along them does
    // (torchvision's RoI pooling scatters [rois, 256, 7, 7] so).
    int64_t inner = product(indices.shape, axis + 1, rank);
    Shape lead(indices.shape.begin(), indices.shape.begin() + axis + 1);
    Shape leadStrides(others.begin(), others.begin() + axis + 1);
    const auto *idx = static_cast<const int64_t *>(indices.data);
    size_t rowBytes = static_cast<size_t>(inner) * size;
    forEachElement(lead, {leadStrides}, [&](int64_t r, const int64_t *o) {
      const int64_t *row = idx + r * inner;
      const uint8_t *from = src + r * rowBytes;
      if (std::all_of(row, row + inner,
                      [&](int64_t v) { return v == row[0]; })) {
        int64_t at = o[0] + checkedIndex(ctx, row[0], dim) * step;
        std::memcpy(dst + at * size, from, rowBytes);
        return;
      }
      for (int64_t j = 0; j < inner; ++j) {
        int64_t at = o[0] + j + checkedIndex(ctx, row[j], dim) * step;
        std::memcpy(dst + at * size, from + j * size, size);
      }
    });
    return;
  }
  forEachElement(indices.shape, {others}, [&](int64_t n, const int64_t *o) {
    int64_t offset = o[0] + checkedIndex(ctx, loadI(indices, n), dim) * step;
    if (mode == 0)
      std::memcpy(dst + offset * size, src + n * size, size);
    else
      reduceInto(out, offset, updates, n, mode, isFloat);
  });
}

/// ONNX Einsum: `equation` names each input's axes by letters ("..." for
/// broadcast leading axes) and, after "->", the output's (without it: the
/// ellipsis axes, then the letters used once, in alphabetical order). Each
/// output element sums the product of the inputs over every other label; a
/// letter repeated within an input reads its diagonal. Computed in double
/// (int64 for integers), one output element at a time over the pool: a host
/// op after a value-dependent shape (Longformer's global attention).
void einsum(KernelContext &ctx) {
  size_t n = ctx.numInputs();
  if (n == 0)
    throw ctx.error("takes at least one input");
  for (size_t i = 0; i < n; ++i) {
    refuseStrings(ctx, ctx.input(i));
    if (ctx.input(i).dtype != ctx.input(0).dtype)
      throw ctx.error("takes inputs of one type, got " +
                      describe(ctx.input(0)) + " and " +
                      describe(ctx.input(i)));
  }
  std::string eq;
  for (char c : ctx.attrString("equation"))
    if (c != ' ')
      eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  if (terms.size() != n)
    throw ctx.error("has " + std::to_string(terms.size()) +
                    " terms in its equation '" + eq + "' for " +
                    std::to_string(n) + " inputs");
  // Labels: letters are their characters; ellipsis axis k (counted from
  // the right) is 256 + k.
  int64_t ellipsisRank = 0;
  auto labelsOf = [&](const std::string &term, int64_t rank) {
    std::vector<int> labels;
    size_t dots = term.find("...");
    std::string head = term.substr(0, dots);
    std::string tail = dots == std::string::npos ? "" : term.substr(dots + 3);
    for (char c : head + tail)
      if (!std::isalpha(static_cast<unsigned char>(c)))
        throw ctx.error("has '" + std::string(1, c) + "' in its equation '" +
                        eq + "'; expected letters, ',', '...' and '->'");
    int64_t letters = static_cast<int64_t>(head.size() + tail.size());
    int64_t ellipsis = dots == std::string::npos ? 0 : rank - letters;
    if (ellipsis < 0 || (dots == std::string::npos && letters != rank))
      throw ctx.error("has the term '" + term + "' for an input of rank " +
                      std::to_string(rank));
    ellipsisRank = std::max(ellipsisRank, ellipsis);
    for (char c : head)
      labels.push_back(c);
    for (int64_t k = ellipsis; k-- > 0;)
      labels.push_back(256 + static_cast<int>(k));
    for (char c : tail)
      labels.push_back(c);
    return labels;
  };
  std::vector<std::vector<int>> inLabels;
  std::map<int, int64_t> sizes;
  for (size_t i = 0; i < n; ++i) {
    const TensorView &x = ctx.input(i);
    inLabels.push_back(
        labelsOf(terms[i], static_cast<int64_t>(x.shape.size())));
    for (size_t d = 0; d < x.shape.size(); ++d) {
      int label = inLabels[i][d];
      int64_t size = x.shape[d];
      auto [it, fresh] = sizes.emplace(label, size);
      if (fresh || it->second == size)
        continue;
      // Ellipsis axes broadcast as numpy's do; letters must agree.
      if (label >= 256 && (it->second == 1 || size == 1)) {
        it->second = std::max(it->second, size);
        continue;
      }
      throw ctx.error("gives the label of axis " + std::to_string(d) +
                      " of input " + std::to_string(i) + " (" + describe(x) +
                      ") size " + std::to_string(size) + ", elsewhere " +
                      std::to_string(it->second));
    }
  }
  std::vector<int> outLabels;
  if (arrow != std::string::npos) {
    // The output's term, read as an input's of the rank it spells.
    std::string out = eq.substr(arrow + 2);
    bool dots = out.find("...") != std::string::npos;
    auto letters = static_cast<int64_t>(out.size()) - (dots ? 3 : 0);
    outLabels = labelsOf(out, letters + (dots ? ellipsisRank : 0));
  } else {
    for (int64_t k = ellipsisRank; k-- > 0;)
      outLabels.push_back(256 + static_cast<int>(k));
    std::map<int, int> counts;
    for (const auto &labels : inLabels)
      for (int l : labels)
        if (l < 256)
          ++counts[l];
    for (auto [l, count] : counts)
      if (count == 1)
        outLabels.push_back(l);
  }
  for (int l : outLabels)
    if (!sizes.count(l))
      throw ctx.error("names '" + std::string(1, static_cast<char>(l)) +
                      "' in its output but in no input ('" + eq + "')");
  std::vector<int> sumLabels;
  for (auto [l, size] : sizes)
    if (std::find(outLabels.begin(), outLabels.end(), l) == outLabels.end())
      sumLabels.push_back(l);
  Shape outShape, sumShape;
  for (int l : outLabels)
    outShape.push_back(sizes[l]);
  for (int l : sumLabels)
    sumShape.push_back(sizes[l]);
  // Each input's element stride per label (0 where it broadcasts).
  std::vector<int> all(outLabels);
  all.insert(all.end(), sumLabels.begin(), sumLabels.end());
  std::vector<Shape> strides(n, Shape(all.size(), 0));
  for (size_t i = 0; i < n; ++i) {
    Shape contiguous = contiguousStrides(ctx.input(i).shape);
    for (size_t d = 0; d < inLabels[i].size(); ++d) {
      if (ctx.input(i).shape[d] == 1 && sizes[inLabels[i][d]] != 1)
        continue;
      size_t at =
          std::find(all.begin(), all.end(), inLabels[i][d]) - all.begin();
      strides[i][at] += contiguous[d];
    }
  }
  TensorView &out = ctx.allocateOutput(0, outShape);
  bool isFloat = kindOf(ctx, out.dtype) == Kind::Float;
  size_t numOut = outLabels.size();
  int64_t inner = numElements(sumShape);
  // Output elements [begin, end): each the sum, over the summed labels'
  // index space, of the inputs' product.
  auto compute = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> base(n), offset(n);
    for (int64_t e = begin; e < end; ++e) {
      int64_t rest = e;
      std::fill(base.begin(), base.end(), 0);
      for (size_t d = numOut; d-- > 0;) {
        int64_t k = rest % outShape[d];
        rest /= outShape[d];
        for (size_t i = 0; i < n; ++i)
          base[i] += k * strides[i][d];
      }
      double sumF = 0;
      int64_t sumI = 0;
      for (int64_t r = 0; r < inner; ++r) {
        int64_t left = r;
        offset = base;
        for (size_t d = all.size(); d-- > numOut;) {
          int64_t k = left % sumShape[d - numOut];
          left /= sumShape[d - numOut];
          for (size_t i = 0; i < n; ++i)
            offset[i] += k * strides[i][d];
        }
        double productF = 1;
        int64_t productI = 1;
        for (size_t i = 0; i < n; ++i) {
          if (isFloat)
            productF *= loadF(ctx.input(i), offset[i]);
          else
            productI *= loadI(ctx.input(i), offset[i]);
        }
        sumF += productF;
        sumI += productI;
      }
      if (isFloat)
        storeF(out, e, sumF);
      else
        storeI(out, e, sumI);
    }
  };
  ctx.pool().parallelFor(0, out.numElements(), 64, compute);
}

/// ONNX ScatterND: the data, with each index tuple's slice (indices
/// [..., k] address the first k axes) replaced by the updates' slice, or
/// combined with it (reduction add, mul, max, min), in index order.
void scatterNd(KernelContext &ctx) {
  const TensorView &x = ctx.input(0), &indices = ctx.input(1),
                   &updates = ctx.input(2);
  refuseStrings(ctx, x);
  size_t q = indices.shape.size(), rank = x.shape.size();
  if (q == 0)
    throw ctx.error("takes indices of rank 1 or more");
  auto depth = static_cast<size_t>(indices.shape.back());
  if (depth > rank)
    throw ctx.error("indexes " + std::to_string(depth) + " dimensions of " +
                    describe(x));
  Shape expect(indices.shape.begin(), indices.shape.end() - 1);
  expect.insert(expect.end(), x.shape.begin() + depth, x.shape.end());
  if (updates.shape != expect || updates.dtype != x.dtype)
    throw ctx.error("takes updates of shape " + shapeToString(expect) +
                    " for " + describe(x) + " and indices " +
                    describe(indices) + ", got " + describe(updates));
  int mode = scatterReduction(ctx, x.dtype);
  bool isFloat = mode != 0 && kindOf(ctx, x.dtype) == Kind::Float;
  TensorView &out = ctx.allocateOutput(0, x.shape);
  if (x.numElements())
    std::memcpy(out.data, x.data, x.byteSize());
  size_t size = dtypeSize(x.dtype);
  int64_t slice = product(x.shape, depth, rank);
  int64_t rows = product(indices.shape, 0, q - 1);
  Shape in = contiguousStrides(x.shape);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (size_t j = 0; j < depth; ++j)
      offset += checkedIndex(ctx,
                             loadI(indices, row * static_cast<int64_t>(depth) +
                                                static_cast<int64_t>(j)),
                             x.shape[j]) *
                in[j];
    if (mode == 0) {
      if (slice)
        std::memcpy(static_cast<uint8_t *>(out.data) + offset * size,
                    static_cast<const uint8_t *>(updates.data) +
                        row * slice * static_cast<int64_t>(size),
                    slice * size);
      continue;
    }
    for (int64_t e = 0; e < slice; ++e)
      reduceInto(out, offset + e, updates, row * slice + e, mode, isFloat);
  }
}

void gatherNd(KernelContext &ctx) {
  const TensorView &x = ctx.input(0), &indices = ctx.input(1);
  refuseStrings(ctx, x);
  auto batch = static_cast<size_t>(attrOr(ctx, "batch_dims", 0));
  size_t q = indices.shape.size();
  if (q == 0)
    throw ctx.error("takes indices of rank 1 or more");
  auto depth = static_cast<size_t>(indices.shape.back());
  if (batch + depth > x.shape.size())
    throw ctx.error("indexes " + std::to_string(depth) +
                    " dimensions past the batch of " + describe(x));
  Shape shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), x.shape.begin() + batch + depth, x.shape.end());
  TensorView &out = ctx.allocateOutput(0, shape);
  size_t size = dtypeSize(x.dtype);
  int64_t slice = product(x.shape, batch + depth, x.shape.size()) *
                  static_cast<int64_t>(size);
  int64_t batches = product(x.shape, 0, batch);
  int64_t perBatch = product(indices.shape, batch, q - 1);
  int64_t dataPerBatch = product(x.shape, batch, x.shape.size());
  Shape in = contiguousStrides(x.shape);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t k = 0; k < perBatch; ++k) {
      int64_t row = b * perBatch + k, offset = b * dataPerBatch;
      for (size_t j = 0; j < depth; ++j)
        offset +=
            checkedIndex(ctx,
                         loadI(indices, row * static_cast<int64_t>(depth) +
                                            static_cast<int64_t>(j)),
                         x.shape[batch + j]) *
            in[batch + j];
      if (slice)
        std::memcpy(static_cast<uint8_t *>(out.data) + row * slice,
                    static_cast<const uint8_t *>(x.data) +
                        offset * static_cast<int64_t>(size),
                    slice);
    }
}

void shapeOf(KernelContext &ctx) {
  const Shape &in = ctx.input(0).shape;
  auto rank = static_cast<int64_t>(in.size());
  int64_t start = attrOr(ctx, "start", 0), end = attrOr(ctx, "end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  int64_t count = std::max<int64_t>(end - start, 0);
  TensorView &out = ctx.allocateOutput(0, {count});
  for (int64_t k = 0; k < count; ++k)
    storeI(out, k, in[start + k]);
}

void sizeOf(KernelContext &ctx) {
  TensorView &out = ctx.allocateOutput(0, {});
  storeI(out, 0, ctx.input(0).numElements());
}

void constantOfShape(KernelContext &ctx) {
  std::vector<int64_t> shape = intValues(ctx, 0);
  for (int64_t d : shape)
    if (d < 0)
      throw ctx.error("has a negative dimension in " + shapeToString(shape));
  TensorView &out = ctx.allocateOutput(0, shape);
  int64_t count = out.numElements();
  if (!count)
    return;
  // One element, then copies of the filled part doubling.
  if (kindOf(ctx, out.dtype) == Kind::Float)
    storeF(out, 0, ctx.hasAttr("value") ? ctx.attrFloat("value") : 0.0);
  else
    storeI(out, 0, attrOr(ctx, "value", 0));
  size_t size = dtypeSize(out.dtype), filled = size, total = count * size;
  auto *bytes = static_cast<uint8_t *>(out.data);
  while (filled < total) {
    size_t chunk = std::min(filled, total - filled);
    std::memcpy(bytes + filled, bytes, chunk);
    filled += chunk;
  }
}

void range(KernelContext &ctx) {
  const TensorView &start = ctx.input(0);
  Kind kind = kindOf(ctx, start.dtype);
  int64_t count;
  TensorView *out;
  if (kind == Kind::Float) {
    double s = loadF(start, 0), l = loadF(ctx.input(1), 0),
           d = loadF(ctx.input(2), 0);
    if (d == 0)
      throw ctx.error("has a delta of 0");
    count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
    out = &ctx.allocateOutput(0, {count});
    for (int64_t k = 0; k < count; ++k)
      storeF(*out, k, s + static_cast<double>(k) * d);
    return;
  }
  int64_t s = loadI(start, 0), l = loadI(ctx.input(1), 0),
          d = loadI(ctx.input(2), 0);
  if (d == 0)
    throw ctx.error("has a delta of 0");
  count = std::max<int64_t>(0, (l - s + d + (d > 0 ? -1 : 1)) / d);
  out = &ctx.allocateOutput(0, {count});
  for (int64_t k = 0; k < count; ++k)
    storeI(*out, k, s + k * d);
}

//===----------------------------------------------------------------------===//
// Reductions, arg-reductions and TopK.
//===----------------------------------------------------------------------===//

enum class Reduce { Sum, Mean, Max, Min, Prod };

template <Reduce op> void reduceKernel(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  Kind kind = kindOf(ctx, x.dtype);
  size_t rank = x.shape.size();
  std::vector<int64_t> axes = axesOperandOrAttr(ctx);
  bool keep = attrOr(ctx, "keepdims", 1) != 0;
  std::vector<bool> reduced(rank, axes.empty());
  if (axes.empty() && attrOr(ctx, "noop_with_empty_axes", 0)) {
    copyAs(ctx, x.shape);
    return;
  }
  for (int64_t a : axes)
    reduced[normalizeAxis(ctx, a, rank, "axis")] = true;
  Shape shape, kept(rank);
  for (size_t d = 0; d < rank; ++d) {
    kept[d] = reduced[d] ? 1 : x.shape[d];
    if (!reduced[d] || keep)
      shape.push_back(kept[d]);
  }
  TensorView &out = ctx.allocateOutput(0, shape);
  int64_t count = numElements(kept);
  int64_t per = count ? x.numElements() / count : 0;
  bool isFloat = kind == Kind::Float || op == Reduce::Mean;
  std::vector<double> f(count);
  std::vector<int64_t> n(count);
  for (int64_t k = 0; k < count; ++k) {
    switch (op) {
    case Reduce::Sum:
    case Reduce::Mean:
      f[k] = 0;
      n[k] = 0;
      break;
    case Reduce::Prod:
      f[k] = 1;
      n[k] = 1;
      break;
    case Reduce::Max:
      f[k] = -std::numeric_limits<double>::infinity();
      n[k] = kind == Kind::Unsigned ? 0 : std::numeric_limits<int64_t>::min();
      break;
    case Reduce::Min:
      f[k] = std::numeric_limits<double>::infinity();
      n[k] = std::numeric_limits<int64_t>::max();
      break;
    }
  }
  // The output element each input element reduces into: `kept`'s
  // strides, 0 on the reduced axes.
  Shape outStrides = contiguousStrides(kept);
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d])
      outStrides[d] = 0;
  forEachElement(x.shape, {outStrides}, [&](int64_t i, const int64_t *o) {
    int64_t k = o[0];
    if (isFloat) {
      double v = loadF(x, i);
      switch (op) {
      case Reduce::Sum:
      case Reduce::Mean:
        f[k] += v;
        break;
      case Reduce::Prod:
        f[k] *= v;
        break;
      case Reduce::Max:
        f[k] = std::isnan(v) || v > f[k] ? v : f[k];
        break;
      case Reduce::Min:
        f[k] = std::isnan(v) || v < f[k] ? v : f[k];
        break;
      }
    } else {
      int64_t v = loadI(x, i);
      switch (op) {
      case Reduce::Sum:
        n[k] += v;
        break;
      case Reduce::Prod:
        n[k] *= v;
        break;
      case Reduce::Max:
        n[k] = std::max(n[k], v);
        break;
      case Reduce::Min:
        n[k] = std::min(n[k], v);
        break;
      default:
        break;
      }
    }
  });
  for (int64_t k = 0; k < count; ++k) {
    if (op == Reduce::Mean)
      storeF(out, k, per ? f[k] / static_cast<double>(per) : NAN);
    else if (isFloat)
      storeF(out, k, f[k]);
    else
      storeI(out, k, n[k]);
  }
}

template <bool largest> void argReduceKernel(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  kindOf(ctx, x.dtype);
  size_t rank = x.shape.size();
  size_t axis = normalizeAxis(ctx, attrOr(ctx, "axis", 0), rank, "axis");
  bool keep = attrOr(ctx, "keepdims", 1) != 0;
  bool last = attrOr(ctx, "select_last_index", 0) != 0;
  if (x.shape[axis] == 0)
    throw ctx.error("reduces an empty axis of " + describe(x));
  Shape shape = x.shape;
  if (keep)
    shape[axis] = 1;
  else
    shape.erase(shape.begin() + axis);
  TensorView &out = ctx.allocateOutput(0, shape);
  int64_t outer = product(x.shape, 0, axis), dim = x.shape[axis];
  int64_t inner = product(x.shape, axis + 1, rank);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double bestValue = loadF(x, o * dim * inner + i);
      for (int64_t k = 1; k < dim; ++k) {
        double v = loadF(x, (o * dim + k) * inner + i);
        bool better = largest ? v > bestValue : v < bestValue;
        if (better || (last && v == bestValue)) {
          best = k;
          bestValue = v;
        }
      }
      storeI(out, o * inner + i, best);
    }
}

void topK(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  kindOf(ctx, x.dtype);
  size_t rank = x.shape.size();
  size_t axis = normalizeAxis(ctx, attrOr(ctx, "axis", -1), rank, "axis");
  int64_t k = ctx.numInputs() > 1 ? scalarInt(ctx, 1, "k") : ctx.attrInt("k");
  int64_t dim = x.shape[axis];
  if (k < 0 || k > dim)
    throw ctx.error("takes the top " + std::to_string(k) +
                    " of a dimension "
                    "of " +
                    std::to_string(dim) + " in " + describe(x));
  bool largest = attrOr(ctx, "largest", 1) != 0;
  Shape shape = x.shape;
  shape[axis] = k;
  TensorView &values = ctx.allocateOutput(0, shape);
  TensorView &indices = ctx.allocateOutput(1, shape);
  int64_t outer = product(x.shape, 0, axis);
  int64_t inner = product(x.shape, axis + 1, rank);
  size_t size = dtypeSize(x.dtype);
  std::vector<int64_t> order(dim);
  std::vector<double> keys(dim);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < dim; ++j)
        keys[j] = loadF(x, (o * dim + j) * inner + i);
      std::iota(order.begin(), order.end(), 0);
      // Sorted by value, ties by index, NaN largest (as ONNX's reference).
      auto before = [&](int64_t a, int64_t b) {
        double va = keys[a], vb = keys[b];
        bool na = std::isnan(va), nb = std::isnan(vb);
        if (na != nb)
          return largest ? na : nb;
        if (!na && va != vb)
          return largest ? va > vb : va < vb;
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        int64_t to = (o * k + j) * inner + i;
        int64_t from = (o * dim + order[j]) * inner + i;
        std::memcpy(static_cast<uint8_t *>(values.data) + to * size,
                    static_cast<const uint8_t *>(x.data) + from * size, size);
        storeI(indices, to, order[j]);
      }
    }
}

/// Softmax (log_softmax with `log`) along `axis` (default -1), in double.
template <bool log> void softmaxKernel(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  if (kindOf(ctx, x.dtype) != Kind::Float)
    throw ctx.error("takes floating-point values, got " + describe(x));
  size_t rank = x.shape.size();
  size_t axis =
      rank ? normalizeAxis(ctx, attrOr(ctx, "axis", -1), rank, "axis") : 0;
  TensorView &out = ctx.allocateOutput(0, x.shape);
  int64_t dim = rank ? x.shape[axis] : 1;
  int64_t outer = rank ? product(x.shape, 0, axis) : 1;
  int64_t inner = rank ? product(x.shape, axis + 1, rank) : 1;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) { return (o * dim + k) * inner + i; };
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < dim; ++k)
        top = std::max(top, loadF(x, at(k)));
      double sum = 0;
      for (int64_t k = 0; k < dim; ++k)
        sum += std::exp(loadF(x, at(k)) - top);
      for (int64_t k = 0; k < dim; ++k) {
        double shifted = loadF(x, at(k)) - top;
        storeF(out, at(k),
               log ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
}

/// MelWeightMatrix as the ONNX reference computes it: triangular filters
/// between mel-spaced bins, [dft_length / 2 + 1, num_mel_bins].
void melWeightMatrix(KernelContext &ctx) {
  int64_t mels = scalarInt(ctx, 0, "num_mel_bins");
  int64_t dft = scalarInt(ctx, 1, "dft_length");
  int64_t rate = scalarInt(ctx, 2, "sample_rate");
  double lower = loadF(ctx.input(3), 0), upper = loadF(ctx.input(4), 0);
  if (mels < 1 || dft < 1 || rate < 1 || ctx.input(3).numElements() != 1 ||
      ctx.input(4).numElements() != 1)
    throw ctx.error("takes positive num_mel_bins, dft_length and sample_rate "
                    "and one lower and upper edge");
  int64_t bins = dft / 2 + 1;
  TensorView &out = ctx.allocateOutput(0, {bins, mels});
  kindOf(ctx, out.dtype);
  auto toMel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double low = toMel(lower), step = (toMel(upper) - low) / (mels + 2);
  std::vector<int64_t> edge(mels + 2);
  for (int64_t k = 0; k < mels + 2; ++k) {
    double hz = 700.0 * (std::pow(10.0, (k * step + low) / 2595.0) - 1.0);
    edge[k] = static_cast<int64_t>(std::floor((dft + 1) * hz / rate));
  }
  std::vector<double> w(bins * mels, 0.0);
  auto at = [&](int64_t j, int64_t i) -> double & {
    if (j < 0 || j >= bins)
      throw ctx.error("has a mel filter edge at bin " + std::to_string(j) +
                      ", past the " + std::to_string(bins) +
                      " bins of the DFT (an edge above the Nyquist rate)");
    return w[j * mels + i];
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
    if (center == left)
      at(center, i) = 1;
    else
      for (int64_t j = left; j <= center; ++j)
        at(j, i) = double(j - left) / double(center - left);
    if (right > center)
      for (int64_t j = center; j < right; ++j)
        at(j, i) = double(right - j) / double(right - center);
  }
  for (int64_t k = 0; k < bins * mels; ++k)
    storeF(out, k, w[k]);
}

//===----------------------------------------------------------------------===//
// RoiAlign.
//===----------------------------------------------------------------------===//

/// ONNX RoiAlign (opset 16) on f32: X [N, C, H, W], rois [R, 4] as (x1, y1,
/// x2, y2), batch_indices [R]; output [R, C, output_height, output_width].
/// As ONNX Runtime's kernel: "output_half_pixel" is torchvision's
/// aligned=False (no half-pixel shift, ROIs at least 1x1), "max" takes the
/// largest weighted corner of each sample. Parallel over the ROIs.
/// ONNX Pad: constant, reflect or edge; negative pads crop.
void pad(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  refuseStrings(ctx, x);
  size_t rank = x.shape.size();
  std::vector<int64_t> pads = intValues(ctx, 1);
  if (pads.size() != 2 * rank)
    throw ctx.error("has " + std::to_string(pads.size()) + " pads for " +
                    describe(x) + "; expected " + std::to_string(2 * rank));
  double value = 0;
  int64_t valueIn = segmentInput(ctx, 2);
  if (valueIn >= 0 && ctx.input(valueIn).numElements() > 0)
    value = loadF(ctx.input(valueIn), 0);
  std::string mode = ctx.hasAttr("mode") ? ctx.attrString("mode") : "constant";
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    throw ctx.error("has mode '" + mode +
                    "'; expected constant, reflect or "
                    "edge");
  Shape shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    shape[d] = x.shape[d] + pads[d] + pads[rank + d];
    if (shape[d] < 0)
      throw ctx.error("crops " + describe(x) + " below nothing on axis " +
                      std::to_string(d));
    if (mode != "constant" && shape[d] > 0 && x.shape[d] == 0)
      throw ctx.error("pads an empty axis in mode " + mode);
    if (mode == "reflect" && x.shape[d] == 1 && shape[d] > 1)
      throw ctx.error("reflects an axis of size 1");
  }
  TensorView &out = ctx.allocateOutput(0, shape);
  size_t width = dtypeSize(x.dtype);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < out.numElements(); ++i) {
    // The source element of output element i, or none (the constant).
    int64_t source = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      int64_t at = index[d] - pads[d], size = x.shape[d];
      if (at < 0 || at >= size) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        if (mode == "edge") {
          at = at < 0 ? 0 : size - 1;
        } else {
          int64_t period = 2 * (size - 1);
          at = ((at % period) + period) % period;
          if (at >= size)
            at = period - at;
        }
      }
      source = source * size + at;
    }
    if (inside)
      std::memcpy(static_cast<uint8_t *>(out.data) + i * width,
                  static_cast<const uint8_t *>(x.data) + source * width, width);
    else
      storeF(out, i, value);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// ONNX Resize on the host: one pass per axis whose coordinates change,
/// each output coordinate a weighted sum of input coordinates along that
/// axis (ONNX's reference interpolates axis by axis the same way). Modes
/// nearest, linear and cubic; every coordinate_transformation_mode of
/// opset 13 (Mask R-CNN pastes each mask at its box's size, bilinear;
/// Keypoint R-CNN's heatmaps are bicubic).
void resize(KernelContext &ctx) {
  const TensorView &x = ctx.input(0);
  refuseStrings(ctx, x);
  size_t rank = x.shape.size();
  int64_t roiIn = segmentInput(ctx, 1), scalesIn = segmentInput(ctx, 2),
          sizesIn = segmentInput(ctx, 3);
  auto text = [&](const char *key, const char *fallback) {
    return ctx.hasAttr(key) ? ctx.attrString(key) : std::string(fallback);
  };
  std::string mode = text("mode", "nearest");
  std::string transform = text("coordinate_transformation_mode", "half_pixel");
  std::string nearest = text("nearest_mode", "round_prefer_floor");
  double a =
      ctx.hasAttr("cubic_coeff_a") ? ctx.attrFloat("cubic_coeff_a") : -0.75;
  double extrapolation = ctx.hasAttr("extrapolation_value")
                             ? ctx.attrFloat("extrapolation_value")
                             : 0.0;
  bool excludeOutside = attrOr(ctx, "exclude_outside", 0) != 0;
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    throw ctx.error("has mode '" + mode +
                    "'; expected nearest, linear or "
                    "cubic");
  static const char *const transforms[] = {
      "half_pixel", "pytorch_half_pixel",   "align_corners",
      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(transforms), std::end(transforms), transform) ==
      std::end(transforms))
    throw ctx.error("has coordinate_transformation_mode '" + transform + "'");
  Shape outShape(rank);
  std::vector<double> scales(rank, 1.0);
  if (sizesIn >= 0 && ctx.input(sizesIn).numElements() > 0) {
    const TensorView &sizes = ctx.input(sizesIn);
    if (static_cast<size_t>(sizes.numElements()) != rank)
      throw ctx.error("has sizes " + describe(sizes) +
                      " for an input of rank " + std::to_string(rank));
    for (size_t d = 0; d < rank; ++d) {
      outShape[d] = loadI(sizes, d);
      if (outShape[d] < 0)
        throw ctx.error("has a negative size " + std::to_string(outShape[d]));
      scales[d] = x.shape[d] ? static_cast<double>(outShape[d]) /
                                   static_cast<double>(x.shape[d])
                             : 1.0;
    }
  } else if (scalesIn >= 0 &&
             static_cast<size_t>(ctx.input(scalesIn).numElements()) == rank) {
    for (size_t d = 0; d < rank; ++d) {
      scales[d] = loadF(ctx.input(scalesIn), d);
      if (!(scales[d] > 0))
        throw ctx.error("has scale " + std::to_string(scales[d]) +
                        "; scales must be positive");
      outShape[d] = static_cast<int64_t>(
          std::floor(static_cast<double>(x.shape[d]) * scales[d]));
    }
  } else {
    throw ctx.error("needs sizes or scales with one value per axis of " +
                    describe(x));
  }
  std::vector<double> roi;
  if (transform == "tf_crop_and_resize") {
    if (roiIn < 0 ||
        static_cast<size_t>(ctx.input(roiIn).numElements()) != 2 * rank)
      throw ctx.error("needs a roi of " + std::to_string(2 * rank) +
                      " values for tf_crop_and_resize");
    for (size_t i = 0; i < 2 * rank; ++i)
      roi.push_back(loadF(ctx.input(roiIn), i));
  }

  // The source coordinate of output coordinate i along an axis of `in`
  // input and `out` output positions (ONNX's reference, in double).
  auto source = [&](size_t d, int64_t i, int64_t in, bool &outside) {
    double scale = scales[d];
    double length = scale * static_cast<double>(in);
    double xi = static_cast<double>(i);
    outside = false;
    if (transform == "align_corners")
      return length == 1 ? 0.0 : xi * (in - 1) / (length - 1);
    if (transform == "asymmetric")
      return xi / scale;
    if (transform == "tf_half_pixel_for_nn")
      return (xi + 0.5) / scale;
    if (transform == "pytorch_half_pixel")
      return length == 1 ? -0.5 : (xi + 0.5) / scale - 0.5;
    if (transform == "tf_crop_and_resize") {
      double start = roi[d], end = roi[rank + d];
      double s = length == 1 ? (end - start) * (in - 1) / 2
                             : xi * (end - start) * (in - 1) / (length - 1);
      s += start * (in - 1);
      outside = s < 0 || s > static_cast<double>(in - 1);
      return s;
    }
    return (xi + 0.5) / scale - 0.5; // half_pixel
  };
  auto cubic = [&](double r) {
    auto far = [&](double t) {
      return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    };
    auto near = [&](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };
    return std::array<double, 4>{far(r + 1), near(r), near(1 - r), far(2 - r)};
  };

  // Values in double, resized one axis at a time.
  Shape shape = x.shape;
  std::vector<double> values(x.numElements());
  for (int64_t i = 0; i < x.numElements(); ++i)
    values[i] = loadF(x, i);
  for (size_t d = 0; d < rank; ++d) {
    int64_t in = shape[d], out = outShape[d];
    bool identity = in == out && scales[d] == 1.0 && roi.empty();
    if (identity &&
        (transform == "half_pixel" || transform == "asymmetric" ||
         transform == "pytorch_half_pixel" || transform == "align_corners"))
      continue;
    // Per output coordinate: its taps (input index, weight), or outside.
    std::vector<std::vector<std::pair<int64_t, double>>> taps(out);
    std::vector<char> outsideAt(out, 0);
    for (int64_t i = 0; i < out && in > 0; ++i) {
      bool outside = false;
      double s = source(d, i, in, outside);
      outsideAt[i] = outside;
      auto clampIndex = [&](int64_t k) {
        return std::min<int64_t>(std::max<int64_t>(k, 0), in - 1);
      };
      double base = std::floor(s);
      double r = s - base;
      auto b = static_cast<int64_t>(base);
      if (mode == "nearest") {
        int64_t k = b;
        if (r != 0) {
          bool up = nearest == "round_prefer_floor"  ? r > 0.5
                    : nearest == "round_prefer_ceil" ? r >= 0.5
                                                     : nearest == "ceil";
          k = up ? b + 1 : b;
        }
        taps[i].push_back({clampIndex(k), 1.0});
        continue;
      }
      std::vector<std::pair<int64_t, double>> t;
      if (mode == "linear") {
        t = {{b, 1 - r}, {b + 1, r}};
      } else {
        std::array<double, 4> c = cubic(r);
        for (int j = 0; j < 4; ++j)
          t.push_back({b - 1 + j, c[j]});
      }
      if (excludeOutside) {
        double sum = 0;
        for (auto &[k, w] : t) {
          if (k < 0 || k >= in)
            w = 0;
          sum += w;
        }
        if (sum != 0)
          for (auto &tap : t)
            tap.second /= sum;
      }
      for (auto &[k, w] : t)
        if (w != 0)
          taps[i].push_back({clampIndex(k), w});
    }
    int64_t outer = product(shape, 0, d), inner = product(shape, d + 1, rank);
    std::vector<double> next(outer * out * inner);
    ctx.pool().parallelFor(0, outer, 1, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o)
        for (int64_t i = 0; i < out; ++i) {
          double *dst = &next[(o * out + i) * inner];
          if (outsideAt[i]) {
            std::fill(dst, dst + inner, extrapolation);
            continue;
          }
          std::fill(dst, dst + inner, 0.0);
          for (auto [k, w] : taps[i]) {
            const double *src = &values[(o * in + k) * inner];
            for (int64_t j = 0; j < inner; ++j)
              dst[j] += w * src[j];
          }
        }
    });
    values = std::move(next);
    shape[d] = out;
  }
  TensorView &y = ctx.allocateOutput(0, outShape);
  for (int64_t i = 0; i < y.numElements(); ++i)
    storeF(y, i, values[i]);
}

void roiAlign(KernelContext &ctx) {
  const TensorView &x = ctx.input(0), &rois = ctx.input(1),
                   &batch = ctx.input(2);
  if (x.dtype != DType::F32 || rois.dtype != DType::F32 ||
      x.shape.size() != 4 || rois.shape.size() != 2 || rois.shape[1] != 4 ||
      batch.shape.size() != 1 || batch.shape[0] != rois.shape[0])
    throw ctx.error("takes X f32[N, C, H, W], rois f32[R, 4] and "
                    "batch_indices [R], got " +
                    describe(x) + ", " + describe(rois) + ", " +
                    describe(batch));
  int64_t n = x.shape[0], channels = x.shape[1], height = x.shape[2],
          width = x.shape[3], count = rois.shape[0];
  int64_t oh = attrOr(ctx, "output_height", 1),
          ow = attrOr(ctx, "output_width", 1);
  int64_t sampling = attrOr(ctx, "sampling_ratio", 0);
  double scale =
      ctx.hasAttr("spatial_scale") ? ctx.attrFloat("spatial_scale") : 1.0;
  std::string mode = ctx.hasAttr("mode") ? ctx.attrString("mode") : "avg";
  std::string transform = ctx.hasAttr("coordinate_transformation_mode")
                              ? ctx.attrString("coordinate_transformation_mode")
                              : "half_pixel";
  if (mode != "avg" && mode != "max")
    throw ctx.error("has mode '" + mode + "'; expected avg or max");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    throw ctx.error("has coordinate_transformation_mode '" + transform +
                    "'; expected half_pixel or output_half_pixel");
  bool halfPixel = transform == "half_pixel";
  bool useMax = mode == "max";
  std::vector<int64_t> batches(count);
  for (int64_t r = 0; r < count; ++r) {
    batches[r] = loadI(batch, r);
    if (batches[r] < 0 || batches[r] >= n)
      throw ctx.error("has batch index " + std::to_string(batches[r]) +
                      " for X of " + std::to_string(n) + " images");
  }
  TensorView &out = ctx.allocateOutput(0, {count, channels, oh, ow});
  const float *box = static_cast<const float *>(rois.data);
  const float *image = static_cast<const float *>(x.data);
  float *y = static_cast<float *>(out.data);
  ctx.pool().parallelFor(0, count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double offset = halfPixel ? 0.5 : 0.0;
      double x1 = box[4 * r] * scale - offset;
      double y1 = box[4 * r + 1] * scale - offset;
      double x2 = box[4 * r + 2] * scale - offset;
      double y2 = box[4 * r + 3] * scale - offset;
      double roiW = x2 - x1, roiH = y2 - y1;
      if (!halfPixel) {
        roiW = std::max(roiW, 1.0);
        roiH = std::max(roiH, 1.0);
      }
      double binH = roiH / static_cast<double>(oh);
      double binW = roiW / static_cast<double>(ow);
      int64_t gridH =
          sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(roiH / oh));
      int64_t gridW =
          sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(roiW / ow));
      double samples = std::max<double>(static_cast<double>(gridH * gridW), 1);
      const float *plane0 = image + batches[r] * channels * height * width;
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          // The sample points of this bin and their four corners' weights,
          // shared by every channel.
          struct Sample {
            int64_t o[4];
            double w[4];
          };
          std::vector<Sample> points;
          for (int64_t iy = 0; iy < gridH; ++iy) {
            double sy = y1 + ph * binH + (iy + 0.5) * binH / gridH;
            for (int64_t ix = 0; ix < gridW; ++ix) {
              double sx = x1 + pw * binW + (ix + 0.5) * binW / gridW;
              Sample p{{0, 0, 0, 0}, {0, 0, 0, 0}};
              if (sy < -1.0 || sy > height || sx < -1.0 || sx > width) {
                points.push_back(p);
                continue;
              }
              sy = std::max(sy, 0.0);
              sx = std::max(sx, 0.0);
              auto yl = static_cast<int64_t>(sy), xl = static_cast<int64_t>(sx);
              int64_t yh, xh;
              if (yl >= height - 1) {
                yh = yl = height - 1;
                sy = static_cast<double>(yl);
              } else {
                yh = yl + 1;
              }
              if (xl >= width - 1) {
                xh = xl = width - 1;
                sx = static_cast<double>(xl);
              } else {
                xh = xl + 1;
              }
              double ly = sy - yl, lx = sx - xl, hy = 1 - ly, hx = 1 - lx;
              p = {{yl * width + xl, yl * width + xh, yh * width + xl,
                    yh * width + xh},
                   {hy * hx, hy * lx, ly * hx, ly * lx}};
              points.push_back(p);
            }
          }
          for (int64_t c = 0; c < channels; ++c) {
            const float *plane = plane0 + c * height * width;
            double acc = 0;
            bool first = true;
            for (const Sample &p : points) {
              if (useMax) {
                double v = std::max(
                    std::max(p.w[0] * plane[p.o[0]], p.w[1] * plane[p.o[1]]),
                    std::max(p.w[2] * plane[p.o[2]], p.w[3] * plane[p.o[3]]));
                acc = first ? v : std::max(acc, v);
                first = false;
              } else {
                acc += p.w[0] * plane[p.o[0]] + p.w[1] * plane[p.o[1]] +
                       p.w[2] * plane[p.o[2]] + p.w[3] * plane[p.o[3]];
              }
            }
            y[((r * channels + c) * oh + ph) * ow + pw] =
                static_cast<float>(useMax ? acc : acc / samples);
          }
        }
    }
  });
}

//===----------------------------------------------------------------------===//
// Run-time branches.
//===----------------------------------------------------------------------===//

/// Passes its value on; the executor runs it only when the condition is
/// the step's `expect`.
void guard(KernelContext &ctx) {
  const TensorView &x = ctx.input(1);
  refuseStrings(ctx, x);
  TensorView &out = ctx.allocateOutput(0, x.shape);
  if (x.numElements())
    std::memcpy(out.data, x.data, x.byteSize());
}

/// The value of the branch the condition took: input 1 when true, 2 when
/// false (the other was skipped).
void merge(KernelContext &ctx) {
  const TensorView &c = ctx.input(0);
  const TensorView &x = ctx.input(loadI(c, 0) ? 1 : 2);
  refuseStrings(ctx, x);
  TensorView &out = ctx.allocateOutput(0, x.shape);
  if (x.numElements())
    std::memcpy(out.data, x.data, x.byteSize());
}

} // namespace

void registerHostOpKernels(
    const std::function<void(const std::string &, KernelFn)> &add) {
  const std::pair<const char *, KernelFn> elementwise[] = {
      {"add", binaryKernel<Binary::Add>},
      {"sub", binaryKernel<Binary::Sub>},
      {"mul", binaryKernel<Binary::Mul>},
      {"div", binaryKernel<Binary::Div>},
      {"pow", binaryKernel<Binary::Pow>},
      {"mod", binaryKernel<Binary::Mod>},
      {"max", binaryKernel<Binary::Max>},
      {"min", binaryKernel<Binary::Min>},
      {"equal", binaryKernel<Binary::Equal>},
      {"less", binaryKernel<Binary::Less>},
      {"greater", binaryKernel<Binary::Greater>},
      {"less_equal", binaryKernel<Binary::LessEqual>},
      {"greater_equal", binaryKernel<Binary::GreaterEqual>},
      {"and", binaryKernel<Binary::And>},
      {"or", binaryKernel<Binary::Or>},
      {"xor", binaryKernel<Binary::Xor>},
      {"bitwise_and", binaryKernel<Binary::BitAnd>},
      {"bitwise_or", binaryKernel<Binary::BitOr>},
      {"bitwise_xor", binaryKernel<Binary::BitXor>},
      {"abs", unaryKernel<Unary::Abs>},
      {"neg", unaryKernel<Unary::Neg>},
      {"exp", unaryKernel<Unary::Exp>},
      {"log", unaryKernel<Unary::Log>},
      {"sqrt", unaryKernel<Unary::Sqrt>},
      {"reciprocal", unaryKernel<Unary::Reciprocal>},
      {"relu", unaryKernel<Unary::Relu>},
      {"sigmoid", unaryKernel<Unary::Sigmoid>},
      {"tanh", unaryKernel<Unary::Tanh>},
      {"erf", unaryKernel<Unary::Erf>},
      {"floor", unaryKernel<Unary::Floor>},
      {"ceil", unaryKernel<Unary::Ceil>},
      {"round", unaryKernel<Unary::Round>},
      {"sign", unaryKernel<Unary::Sign>},
      {"sin", unaryKernel<Unary::Sin>},
      {"cos", unaryKernel<Unary::Cos>},
      {"not", unaryKernel<Unary::Not>},
      {"is_nan", unaryKernel<Unary::IsNaN>},
      {"is_inf", unaryKernel<Unary::IsInf>},
      {"cast", unaryKernel<Unary::Cast>}};
  for (const auto &[name, fn] : elementwise)
    add(std::string("host.") + name, fn);
  add("host.identity", identity);
  add("host.where", where);
  add("host.clip", clip);
  add("host.reshape", reshape);
  add("host.flatten", flatten);
  add("host.squeeze", squeeze);
  add("host.unsqueeze", unsqueeze);
  add("host.transpose", transpose);
  add("host.expand", expand);
  add("host.tile", tile);
  add("host.concat", concat);
  add("host.split", split);
  add("host.slice", slice);
  add("host.gather", gather);
  add("host.gather_elements", gatherElements);
  add("host.gather_nd", gatherNd);
  add("host.einsum", einsum);
  add("host.scatter_nd", scatterNd);
  add("host.scatter_elements", scatterElements);
  add("host.shape", shapeOf);
  add("host.size", sizeOf);
  add("host.constant_of_shape", constantOfShape);
  add("host.range", range);
  add("host.reduce_sum", reduceKernel<Reduce::Sum>);
  add("host.reduce_mean", reduceKernel<Reduce::Mean>);
  add("host.reduce_max", reduceKernel<Reduce::Max>);
  add("host.reduce_min", reduceKernel<Reduce::Min>);
  add("host.reduce_prod", reduceKernel<Reduce::Prod>);
  add("host.arg_max", argReduceKernel<true>);
  add("host.arg_min", argReduceKernel<false>);
  add("host.top_k", topK);
  add("host.roi_align", roiAlign);
  add("host.resize", resize);
  add("host.pad", pad);
  add("host.mel_weight_matrix", melWeightMatrix);
  add("host.softmax", softmaxKernel<false>);
  add("host.log_softmax", softmaxKernel<true>);
  add("host.guard", guard);
  add("host.merge", merge);
}

} // namespace strata::rt::kernels
