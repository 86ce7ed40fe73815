//===- ValueShaped.cpp - host kernels of value-dependent shapes -*- C++ -*-===//
//
// The library kernels for ONNX ops whose output shape depends on the values
// of their inputs. Their outputs are Host buffers (format 1.4) whose -1
// dimensions each step sets when it runs, through
// KernelContext::allocateOutput; they run on the host on every target, like
// the string kernels.
//
// - "host.nonzero": ONNX NonZero, numpy's np.array(np.nonzero(x)).
// - "host.compress": ONNX Compress, numpy's np.compress(condition, x, axis).
// - "host.unique": ONNX Unique, numpy's np.unique with return_index,
//   return_inverse and return_counts, in first-occurrence order for
//   sorted = 0.
// - "host.non_max_suppression": ONNX NonMaxSuppression as the ONNX reference
//   implementation (onnx/reference/ops/op_non_max_suppression.py) does it.
//
//===----------------------------------------------------------------------===//

#include "HalfFloat.h"
#include "Kernels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>

namespace strata::rt::kernels {

namespace {

void checkArity(KernelContext &ctx, size_t minInputs, size_t maxInputs,
                size_t minOutputs, size_t maxOutputs) {
  auto range = [](size_t lo, size_t hi) {
    return lo == hi ? std::to_string(lo)
                    : std::to_string(lo) + " to " + std::to_string(hi);
  };
  if (ctx.numInputs() < minInputs || ctx.numInputs() > maxInputs ||
      ctx.numOutputs() < minOutputs || ctx.numOutputs() > maxOutputs)
    throw ctx.error("expects " + range(minInputs, maxInputs) +
                    " input(s) and " + range(minOutputs, maxOutputs) +
                    " output(s), got " + std::to_string(ctx.numInputs()) +
                    " and " + std::to_string(ctx.numOutputs()));
}

void checkOutputType(KernelContext &ctx, size_t i, DType type,
                     const char *what) {
  const TensorView &out = ctx.output(i);
  if (out.dtype != type)
    throw ctx.error(std::string(what) + " (output " + std::to_string(i) +
                    ") must be " + dtypeName(type) + ", got " +
                    dtypeName(out.dtype) + shapeToString(out.shape));
}

/// The step's `axis` attribute for a tensor of `rank` dimensions, made
/// non-negative; fails naming both when it is out of range.
size_t axisAttr(KernelContext &ctx, size_t rank, const TensorView &x) {
  int64_t axis = ctx.attrInt("axis");
  auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw ctx.error("attribute 'axis' is " + std::to_string(axis) +
                    ", out of range for the input " + describe(x) +
                    (rank ? " (valid: " + std::to_string(-r) + " to " +
                                std::to_string(r - 1) + ")"
                          : std::string(" (a scalar has no axis)")));
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

/// Copies `count` elements from `src` at element `from` to `dst` at element
/// `to` (strings element by element, numbers as bytes).
void copyElements(const TensorView &dst, int64_t to, const TensorView &src,
                  int64_t from, int64_t count) {
  if (count <= 0)
    return;
  if (src.dtype == DType::String) {
    const std::string *s = src.as<std::string>() + from;
    std::string *d = dst.as<std::string>() + to;
    std::copy(s, s + count, d);
    return;
  }
  size_t size = dtypeSize(src.dtype);
  std::memcpy(static_cast<uint8_t *>(dst.data) + to * size,
              static_cast<const uint8_t *>(src.data) + from * size,
              count * size);
}

//===----------------------------------------------------------------------===//
// host.nonzero
//===----------------------------------------------------------------------===//

/// The flat indices of the nonzero elements of `x` (of C++ type T; f16 and
/// bf16 as their bits, where both zeros are zero).
template <typename T>
void nonzeroIndices(const TensorView &x, bool halfBits,
                    std::vector<int64_t> &hits) {
  const T *v = static_cast<const T *>(x.data);
  int64_t n = x.numElements();
  for (int64_t i = 0; i < n; ++i) {
    bool nonzero;
    if constexpr (std::is_same_v<T, uint16_t>)
      nonzero = halfBits ? (v[i] & 0x7fff) != 0 : v[i] != 0;
    else
      nonzero = v[i] != T(0);
    if (nonzero)
      hits.push_back(i);
  }
}

void nonzero(KernelContext &ctx) {
  checkArity(ctx, 1, 1, 1, 1);
  const TensorView &x = ctx.input(0);
  checkOutputType(ctx, 0, DType::I64, "the indices");
  std::vector<int64_t> hits;
  switch (x.dtype) {
  case DType::F32:
    nonzeroIndices<float>(x, false, hits);
    break;
  case DType::F64:
    nonzeroIndices<double>(x, false, hits);
    break;
  case DType::F16:
  case DType::BF16:
    nonzeroIndices<uint16_t>(x, true, hits);
    break;
  case DType::I1:
  case DType::I8:
  case DType::U8:
    nonzeroIndices<uint8_t>(x, false, hits);
    break;
  case DType::I16:
  case DType::U16:
    nonzeroIndices<uint16_t>(x, false, hits);
    break;
  case DType::I32:
  case DType::U32:
    nonzeroIndices<uint32_t>(x, false, hits);
    break;
  case DType::I64:
  case DType::U64:
    nonzeroIndices<uint64_t>(x, false, hits);
    break;
  default:
    throw ctx.error("takes a tensor of numbers, got " + describe(x));
  }
  // A scalar is taken as one element of one dimension (numpy's atleast_1d).
  size_t rank = x.shape.size();
  auto count = static_cast<int64_t>(hits.size());
  TensorView &out = ctx.allocateOutput(
      0, {static_cast<int64_t>(std::max<size_t>(rank, 1)), count});
  int64_t *y = out.as<int64_t>();
  if (rank == 0) {
    std::fill(y, y + count, 0);
    return;
  }
  for (int64_t k = 0; k < count; ++k) {
    int64_t flat = hits[k];
    for (size_t d = rank; d-- > 0;) {
      y[d * count + k] = flat % x.shape[d];
      flat /= x.shape[d];
    }
  }
}

//===----------------------------------------------------------------------===//
// host.compress
//===----------------------------------------------------------------------===//

void compress(KernelContext &ctx) {
  checkArity(ctx, 2, 2, 1, 1);
  const TensorView &x = ctx.input(0), &condition = ctx.input(1);
  const TensorView &out = ctx.output(0);
  if (out.dtype != x.dtype)
    throw ctx.error("the output is " + describe(out) + " but the input is " +
                    describe(x) + " (the types differ)");
  if (condition.dtype != DType::I1 || condition.shape.size() != 1)
    throw ctx.error("the condition must be a 1-D tensor of i1, got " +
                    describe(condition));
  bool hasAxis = ctx.hasAttr("axis");
  // Without an axis, the input is taken flattened.
  std::vector<int64_t> shape =
      hasAxis ? x.shape : std::vector<int64_t>{x.numElements()};
  size_t axis = hasAxis ? axisAttr(ctx, x.shape.size(), x) : 0;
  int64_t outer = product(shape, 0, axis), length = shape[axis],
          inner = product(shape, axis + 1, shape.size());
  const auto *keep = static_cast<const uint8_t *>(condition.data);
  int64_t n = condition.shape[0];
  std::vector<int64_t> selected;
  for (int64_t j = 0; j < n; ++j) {
    if (!keep[j])
      continue;
    if (j >= length)
      throw ctx.error("the condition (" + std::to_string(n) +
                      " elements) is true at index " + std::to_string(j) +
                      ", past the " + std::to_string(length) +
                      " elements of the input" +
                      (hasAxis ? " along axis " + std::to_string(axis)
                               : std::string(" (flattened)")));
    selected.push_back(j);
  }
  auto count = static_cast<int64_t>(selected.size());
  shape[axis] = count;
  TensorView &y = ctx.allocateOutput(0, std::move(shape));
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j : selected) {
      copyElements(y, at, x, (o * length + j) * inner, inner);
      at += inner;
    }
}

//===----------------------------------------------------------------------===//
// host.unique
//===----------------------------------------------------------------------===//

/// Orders values as numpy's sort does: NaNs last (and equal to each other).
template <typename T> bool lessThan(const T &a, const T &b) {
  if constexpr (std::is_floating_point_v<T>)
    return (a < b) || (!std::isnan(a) && std::isnan(b));
  else
    return a < b;
}

/// The keys of the slices of `x` along an axis (or of its elements), as
/// comparable values: `slices` slices of `width` keys each, flattened in
/// numpy's order (np.moveaxis(x, axis, 0).reshape(slices, -1)).
template <typename K> struct SliceKeys {
  std::vector<K> keys;
  int64_t width = 1;

  /// -1, 0 or 1 as slice a orders before, equal to or after slice b
  /// (lexicographically, element by element).
  int compare(int64_t a, int64_t b) const {
    const K *ka = keys.data() + a * width, *kb = keys.data() + b * width;
    for (int64_t t = 0; t < width; ++t) {
      if (lessThan(ka[t], kb[t]))
        return -1;
      if (lessThan(kb[t], ka[t]))
        return 1;
    }
    return 0;
  }
};

/// What np.unique gives: the first occurrence of each distinct slice, the
/// slice each maps to, and the counts, in sorted order; then reordered by
/// first occurrence unless `sorted`.
struct UniqueResult {
  std::vector<int64_t> indices, inverse, counts;
};

template <typename K>
UniqueResult uniqueSlices(const SliceKeys<K> &keys, int64_t slices,
                          bool sorted) {
  std::vector<int64_t> order(slices);
  std::iota(order.begin(), order.end(), 0);
  // Within a group of equal slices the first occurrence comes first, as
  // numpy's return_index (a stable sort) gives: ties broken by index.
  // (std::stable_sort would do too, but libstdc++ 12's warns under clang.)
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    int c = keys.compare(a, b);
    return c != 0 ? c < 0 : a < b;
  });
  UniqueResult r;
  r.inverse.assign(slices, 0);
  for (int64_t k = 0; k < slices; ++k) {
    int64_t j = order[k];
    if (k == 0 || keys.compare(order[k - 1], j) != 0) {
      r.indices.push_back(j);
      r.counts.push_back(0);
    }
    r.inverse[j] = static_cast<int64_t>(r.indices.size()) - 1;
    ++r.counts.back();
  }
  if (sorted)
    return r;
  // First-occurrence order: the groups by their first index.
  size_t groups = r.indices.size();
  std::vector<int64_t> byFirst(groups);
  std::iota(byFirst.begin(), byFirst.end(), 0);
  std::sort(byFirst.begin(), byFirst.end(),
            [&](int64_t a, int64_t b) { return r.indices[a] < r.indices[b]; });
  std::vector<int64_t> rank(groups);
  UniqueResult u;
  for (size_t g = 0; g < groups; ++g) {
    rank[byFirst[g]] = static_cast<int64_t>(g);
    u.indices.push_back(r.indices[byFirst[g]]);
    u.counts.push_back(r.counts[byFirst[g]]);
  }
  u.inverse.resize(slices);
  for (int64_t j = 0; j < slices; ++j)
    u.inverse[j] = rank[r.inverse[j]];
  return u;
}

/// The slices' keys of type K from elements of C++ type T.
template <typename K, typename T, typename Convert>
SliceKeys<K> sliceKeys(const TensorView &x, int64_t outer, int64_t slices,
                       int64_t inner, Convert convert) {
  SliceKeys<K> k;
  k.width = outer * inner;
  k.keys.resize(static_cast<size_t>(slices * k.width));
  const T *v = static_cast<const T *>(x.data);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < slices; ++j)
      for (int64_t i = 0; i < inner; ++i)
        k.keys[j * k.width + o * inner + i] =
            convert(v[(o * slices + j) * inner + i]);
  return k;
}

template <typename T>
UniqueResult uniqueOf(const TensorView &x, int64_t outer, int64_t slices,
                      int64_t inner, bool sorted) {
  auto same = [](const T &v) { return v; };
  return uniqueSlices(sliceKeys<T, T>(x, outer, slices, inner, same), slices,
                      sorted);
}

void unique(KernelContext &ctx) {
  checkArity(ctx, 1, 1, 1, 4);
  const TensorView &x = ctx.input(0);
  if (ctx.output(0).dtype != x.dtype)
    throw ctx.error("the output is " + describe(ctx.output(0)) +
                    " but the input is " + describe(x) + " (the types differ)");
  static const char *const names[] = {"", "the indices", "the inverse indices",
                                      "the counts"};
  for (size_t i = 1; i < ctx.numOutputs(); ++i)
    checkOutputType(ctx, i, DType::I64, names[i]);
  bool sorted = !ctx.hasAttr("sorted") || ctx.attrInt("sorted") != 0;
  bool hasAxis = ctx.hasAttr("axis");
  std::vector<int64_t> shape =
      hasAxis ? x.shape : std::vector<int64_t>{x.numElements()};
  size_t axis = hasAxis ? axisAttr(ctx, x.shape.size(), x) : 0;
  int64_t outer = product(shape, 0, axis), slices = shape[axis],
          inner = product(shape, axis + 1, shape.size());

  UniqueResult r;
  switch (x.dtype) {
  case DType::F16:
    r = uniqueSlices(
        sliceKeys<float, uint16_t>(x, outer, slices, inner, halfToFloat),
        slices, sorted);
    break;
  case DType::BF16:
    r = uniqueSlices(
        sliceKeys<float, uint16_t>(x, outer, slices, inner, bf16ToFloat),
        slices, sorted);
    break;
  case DType::I1:
    r = uniqueOf<uint8_t>(x, outer, slices, inner, sorted);
    break;
  case DType::String:
    r = uniqueOf<std::string>(x, outer, slices, inner, sorted);
    break;
  default:
    if (!dispatchNumeric(x.dtype, [&](auto tag) {
          r = uniqueOf<decltype(tag)>(x, outer, slices, inner, sorted);
        }))
      throw ctx.error("takes a tensor of numbers or strings, got " +
                      describe(x));
  }

  auto k = static_cast<int64_t>(r.indices.size());
  // Y: the unique slices, each from its first occurrence.
  shape[axis] = k;
  TensorView &y = ctx.allocateOutput(0, std::move(shape));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < k; ++g)
      copyElements(y, (o * k + g) * inner, x,
                   (o * slices + r.indices[g]) * inner, inner);
  const std::vector<int64_t> *results[] = {nullptr, &r.indices, &r.inverse,
                                           &r.counts};
  for (size_t i = 1; i < ctx.numOutputs(); ++i) {
    const std::vector<int64_t> &values = *results[i];
    TensorView &out =
        ctx.allocateOutput(i, {static_cast<int64_t>(values.size())});
    std::copy(values.begin(), values.end(), out.as<int64_t>());
  }
}

//===----------------------------------------------------------------------===//
// host.non_max_suppression
//===----------------------------------------------------------------------===//

/// Whether box `a` suppresses box `b` (their IoU is above the threshold),
/// as the ONNX reference's suppress_by_iou: corners [y1, x1, y2, x2] in any
/// order, or [x_center, y_center, width, height]; a box without area
/// suppresses nothing.
bool suppresses(const float *a, const float *b, bool centerPoint,
                float threshold) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (centerPoint) {
    ax0 = a[0] - a[2] / 2;
    ax1 = a[0] + a[2] / 2;
    ay0 = a[1] - a[3] / 2;
    ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2;
    bx1 = b[0] + b[2] / 2;
    by0 = b[1] - b[3] / 2;
    by1 = b[1] + b[3] / 2;
  } else {
    ax0 = std::min(a[1], a[3]);
    ax1 = std::max(a[1], a[3]);
    ay0 = std::min(a[0], a[2]);
    ay1 = std::max(a[0], a[2]);
    bx0 = std::min(b[1], b[3]);
    bx1 = std::max(b[1], b[3]);
    by0 = std::min(b[0], b[2]);
    by1 = std::max(b[0], b[2]);
  }
  float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  if (!(ix1 > ix0))
    return false;
  float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (!(iy1 > iy0))
    return false;
  float intersection = (ix1 - ix0) * (iy1 - iy0);
  if (!(intersection > 0))
    return false;
  float areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  float unionArea = areaA + areaB - intersection;
  if (!(areaA > 0) || !(areaB > 0) || !(unionArea > 0))
    return false;
  return intersection / unionArea > threshold;
}

/// One element of an optional scalar input (ONNX allows it as a scalar or a
/// one-element tensor; an empty tensor counts as absent, as the reference
/// does). False when absent.
template <typename T>
bool scalarInput(KernelContext &ctx, const TensorView *view, DType type,
                 const char *what, T &value) {
  if (!view)
    return false;
  if (view->dtype != type)
    throw ctx.error(std::string(what) + " must be " + dtypeName(type) +
                    ", got " + describe(*view));
  int64_t n = view->numElements();
  if (n == 0)
    return false;
  if (n != 1 || view->shape.size() > 1)
    throw ctx.error(std::string(what) + " must hold one value, got " +
                    describe(*view));
  value = *view->as<T>();
  return true;
}

void nonMaxSuppression(KernelContext &ctx) {
  checkArity(ctx, 2, 5, 1, 1);
  checkOutputType(ctx, 0, DType::I64, "selected_indices");
  // Which of max_output_boxes_per_class, iou_threshold and score_threshold
  // follow boxes and scores.
  std::array<bool, 3> present{};
  if (ctx.hasAttr("optional_inputs")) {
    const std::vector<int64_t> &flags = ctx.attrInts("optional_inputs");
    if (flags.size() != 3)
      throw ctx.error("attribute 'optional_inputs' must be three integers "
                      "(0 or 1), got " +
                      std::to_string(flags.size()));
    size_t count = 0;
    for (size_t k = 0; k < 3; ++k) {
      if (flags[k] != 0 && flags[k] != 1)
        throw ctx.error("attribute 'optional_inputs' must be three integers "
                        "(0 or 1), got " +
                        std::to_string(flags[k]) + " at " + std::to_string(k));
      present[k] = flags[k];
      count += present[k];
    }
    if (ctx.numInputs() != 2 + count)
      throw ctx.error("attribute 'optional_inputs' names " +
                      std::to_string(count) +
                      " optional input(s) but the step has " +
                      std::to_string(ctx.numInputs() - 2));
  } else {
    for (size_t k = 0; k + 2 < ctx.numInputs(); ++k)
      present[k] = true;
  }
  const TensorView *optional[3] = {nullptr, nullptr, nullptr};
  for (size_t k = 0, next = 2; k < 3; ++k)
    if (present[k])
      optional[k] = &ctx.input(next++);

  const TensorView &boxes = ctx.input(0), &scores = ctx.input(1);
  if (boxes.dtype != DType::F32 || boxes.shape.size() != 3 ||
      boxes.shape[2] != 4)
    throw ctx.error("boxes must be f32[batches, boxes, 4], got " +
                    describe(boxes));
  if (scores.dtype != DType::F32 || scores.shape.size() != 3)
    throw ctx.error("scores must be f32[batches, classes, boxes], got " +
                    describe(scores));
  if (scores.shape[0] != boxes.shape[0] || scores.shape[2] != boxes.shape[1])
    throw ctx.error("boxes " + describe(boxes) + " and scores " +
                    describe(scores) + " disagree on the batches or the boxes");
  int64_t centerPointBox =
      ctx.hasAttr("center_point_box") ? ctx.attrInt("center_point_box") : 0;
  if (centerPointBox != 0 && centerPointBox != 1)
    throw ctx.error("attribute 'center_point_box' must be 0 or 1, got " +
                    std::to_string(centerPointBox));

  // Absent inputs: max_output_boxes_per_class 0 (nothing is selected),
  // iou_threshold 0 (any overlap suppresses), no score filtering.
  int64_t maxOutput = 0;
  float iouThreshold = 0, scoreThreshold = 0;
  scalarInput(ctx, optional[0], DType::I64, "max_output_boxes_per_class",
              maxOutput);
  // A negative count selects nothing (the reference and ONNX Runtime take
  // max(count, 0)).
  maxOutput = std::max<int64_t>(maxOutput, 0);
  scalarInput(ctx, optional[1], DType::F32, "iou_threshold", iouThreshold);
  bool filterScores = scalarInput(ctx, optional[2], DType::F32,
                                  "score_threshold", scoreThreshold);

  int64_t batches = boxes.shape[0], classes = scores.shape[1],
          numBoxes = boxes.shape[1];
  const float *boxData = boxes.as<float>();
  const float *scoreData = scores.as<float>();
  std::vector<std::array<int64_t, 3>> selected;
  std::vector<std::pair<float, int64_t>> candidates;
  std::vector<int64_t> kept;
  for (int64_t b = 0; b < batches && maxOutput > 0; ++b) {
    const float *batchBoxes = boxData + b * numBoxes * 4;
    for (int64_t c = 0; c < classes; ++c) {
      const float *classScores = scoreData + (b * classes + c) * numBoxes;
      candidates.clear();
      for (int64_t i = 0; i < numBoxes; ++i)
        if (!filterScores || classScores[i] > scoreThreshold)
          candidates.emplace_back(classScores[i], i);
      // Best score first; equal scores (and NaNs, which go last) keep the
      // lower box first, as a stable sort would.
      std::sort(candidates.begin(), candidates.end(),
                [](const auto &l, const auto &r) {
                  bool ln = std::isnan(l.first), rn = std::isnan(r.first);
                  if (ln != rn)
                    return rn;
                  if (!ln && l.first != r.first)
                    return l.first > r.first;
                  return l.second < r.second;
                });
      kept.clear();
      for (const auto &[score, box] : candidates) {
        if (static_cast<int64_t>(kept.size()) >= maxOutput)
          break;
        const float *candidate = batchBoxes + box * 4;
        bool suppressed = false;
        for (int64_t other : kept)
          if (suppresses(candidate, batchBoxes + other * 4, centerPointBox,
                         iouThreshold)) {
            suppressed = true;
            break;
          }
        if (suppressed)
          continue;
        kept.push_back(box);
        selected.push_back({b, c, box});
      }
    }
  }
  TensorView &out =
      ctx.allocateOutput(0, {static_cast<int64_t>(selected.size()), 3});
  int64_t *y = out.as<int64_t>();
  for (size_t k = 0; k < selected.size(); ++k)
    std::copy(selected[k].begin(), selected[k].end(), y + 3 * k);
}

} // namespace

void registerValueShapedKernels(
    const std::function<void(const std::string &, KernelFn)> &add) {
  add("host.nonzero", nonzero);
  add("host.compress", compress);
  add("host.unique", unique);
  add("host.non_max_suppression", nonMaxSuppression);
}

} // namespace strata::rt::kernels
