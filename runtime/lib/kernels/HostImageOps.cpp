//===- HostImageOps.cpp - the host kernels of images and boxes --------------===
//
// The host kernels (HostOps.cpp says when the compiler chooses them) over
// images and boxes: Pad, Resize and RoiAlign, which a detection model runs
// on tensors whose shapes are known only at run time.
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

} // namespace

void registerHostImageKernels(
    const std::function<void(const std::string &, KernelFn)> &add) {
  add("host.roi_align", roiAlign);
  add("host.resize", resize);
  add("host.pad", pad);
}

} // namespace strata::rt::kernels
