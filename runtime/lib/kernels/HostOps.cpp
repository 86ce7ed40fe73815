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
// This file has the elementwise ops, the reductions, TopK and softmax, and
// the run-time branches; HostLayoutOps.cpp the shapes, layouts, gathers and
// scatters; HostImageOps.cpp Pad, Resize and RoiAlign; HostOpsCommon.h what
// they share.
//
// "host.guard" and "host.merge" carry a run-time If (RunTimeBranches.cpp):
// the executor skips a guard whose condition is not its `expect`, and every
// step that reads a value it skipped (docs/runtime.md, "Run-time branches");
// a merge passes on the value of the branch that ran.
//
//===----------------------------------------------------------------------===//

#include "HostOpsCommon.h"

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

using namespace host;

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
  add("host.where", where);
  add("host.clip", clip);
  add("host.reduce_sum", reduceKernel<Reduce::Sum>);
  add("host.reduce_mean", reduceKernel<Reduce::Mean>);
  add("host.reduce_max", reduceKernel<Reduce::Max>);
  add("host.reduce_min", reduceKernel<Reduce::Min>);
  add("host.reduce_prod", reduceKernel<Reduce::Prod>);
  add("host.arg_max", argReduceKernel<true>);
  add("host.arg_min", argReduceKernel<false>);
  add("host.top_k", topK);
  add("host.mel_weight_matrix", melWeightMatrix);
  add("host.softmax", softmaxKernel<false>);
  add("host.log_softmax", softmaxKernel<true>);
  add("host.guard", guard);
  add("host.merge", merge);
  registerHostLayoutKernels(add);
  registerHostImageKernels(add);
}

} // namespace strata::rt::kernels
