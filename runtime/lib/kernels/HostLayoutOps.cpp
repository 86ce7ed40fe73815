//===- HostLayoutOps.cpp - the host kernels of shapes and layouts -----------===
//
// The host kernels (HostOps.cpp says when the compiler chooses them) that move
// elements without computing on them, any element type as bytes: Reshape,
// Transpose, Expand, Tile, Concat, Split, Slice, the gathers and scatters,
// Einsum, and the ops that make shapes (Shape, Size, ConstantOfShape, Range).
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
// Shapes and layouts (any element type, moved as bytes).
//===----------------------------------------------------------------------===//

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

} // namespace

void registerHostLayoutKernels(
    const std::function<void(const std::string &, KernelFn)> &add) {
  add("host.identity", identity);
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
}

} // namespace strata::rt::kernels
