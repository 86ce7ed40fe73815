//===- Compare.cpp - numpy-style allClose for host tensors ------*- C++ -*-===//
//
// The comparison the conformance runner applies to each output. Floating
// point elements follow numpy.isclose, |a - e| <= atol + rtol * |e|, computed
// in double (exact for f16, bf16 and f32 inputs, where numpy would round in
// the input's precision; the difference only shows within an ulp of the
// boundary). ONNX's backend runner passes equal_nan=True, so NaN matches NaN;
// an infinity matches only the same infinity. Integers and bools have no
// rounding to forgive and are compared exactly, 64-bit values without going
// through double.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

using namespace strata::tio;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string formatNumber(double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", value);
  return buf;
}
} // namespace

CompareResult strata::tio::allClose(const HostTensor &actual,
                                    const HostTensor &expected, double rtol,
                                    double atol) {
  CompareResult result;
  result.rtol = rtol;
  result.atol = atol;
  if (actual.type != expected.type) {
    result.message = std::string("element type mismatch: actual ") +
                     elementTypeName(actual.type) + ", expected " +
                     elementTypeName(expected.type);
    return result;
  }
  if (actual.shape != expected.shape) {
    result.message = "shape mismatch: actual " +
                     detail::formatShape(actual.shape) + ", expected " +
                     detail::formatShape(expected.shape);
    return result;
  }
  try {
    actual.validate();
    expected.validate();
  } catch (const TensorIOError &error) {
    result.message = error.what();
    return result;
  }

  int64_t count = actual.numElements();
  result.numElements = count;
  if (actual.type == ElementType::String) {
    // Strings are equal or not; the first difference is the worst.
    for (int64_t i = 0; i < count; ++i)
      if (actual.strings[i] != expected.strings[i]) {
        if (result.numMismatches++ == 0)
          result.worstIndex = i;
      }
    if (result.worstIndex < 0 && count > 0)
      result.worstIndex = 0;
  }
  bool isFloat = isFloatingPoint(actual.type);
  size_t size =
      actual.type == ElementType::String ? 0 : elementSize(actual.type);
  // The worst element is the one furthest past (or closest to) its
  // tolerance; NaN and inf mismatches count as infinitely far.
  double worstExcess = -kInf;
  bool worstIsMismatch = false;
  for (int64_t i = 0; i < count && actual.type != ElementType::String; ++i) {
    double a = actual.elementAsDouble(i);
    double e = expected.elementAsDouble(i);
    bool mismatch;
    double excess;
    if (isFloat) {
      if (std::isnan(a) || std::isnan(e)) {
        mismatch = !(std::isnan(a) && std::isnan(e));
        excess = mismatch ? kInf : -kInf;
      } else if (std::isinf(a) || std::isinf(e)) {
        mismatch = a != e;
        excess = mismatch ? kInf : -kInf;
      } else {
        double diff = std::fabs(a - e);
        double tolerance = atol + rtol * std::fabs(e);
        mismatch = diff > tolerance;
        excess = diff - tolerance;
      }
    } else {
      // Exact: compare the bytes, so 64-bit values never round.
      mismatch = std::memcmp(actual.bytes.data() + i * size,
                             expected.bytes.data() + i * size, size) != 0;
      excess = mismatch ? std::fabs(a - e) : 0;
    }
    if (std::isfinite(a) && std::isfinite(e)) {
      double diff = std::fabs(a - e);
      double rel = diff == 0 ? 0 : (e == 0 ? kInf : diff / std::fabs(e));
      result.maxAbsError = std::max(result.maxAbsError, diff);
      result.maxRelError = std::max(result.maxRelError, rel);
    }
    if (mismatch)
      ++result.numMismatches;
    // A mismatch always outranks a passing element, whatever the excess.
    if (result.worstIndex < 0 || (mismatch && !worstIsMismatch) ||
        (mismatch == worstIsMismatch && excess > worstExcess)) {
      result.worstIndex = i;
      worstExcess = excess;
      worstIsMismatch = mismatch;
    }
  }
  result.passed = result.numMismatches == 0;
  if (result.worstIndex >= 0) {
    int64_t rest = result.worstIndex;
    result.worstCoords.assign(actual.shape.size(), 0);
    for (size_t d = actual.shape.size(); d-- > 0;) {
      result.worstCoords[d] = rest % actual.shape[d];
      rest /= actual.shape[d];
    }
    result.worstActual = actual.elementToString(result.worstIndex);
    result.worstExpected = expected.elementToString(result.worstIndex);
  }
  return result;
}

std::string CompareResult::summary() const {
  std::string tolerances =
      "rtol " + formatNumber(rtol) + ", atol " + formatNumber(atol);
  if (!message.empty())
    return "FAILED: " + message;
  std::string errors = "max abs err " + formatNumber(maxAbsError) +
                       ", max rel err " + formatNumber(maxRelError);
  if (passed)
    return "PASSED: " + std::to_string(numElements) + " elements within " +
           tolerances + " (" + errors + ")";
  return "FAILED: " + std::to_string(numMismatches) + " of " +
         std::to_string(numElements) + " elements differ; worst at " +
         detail::formatShape(worstCoords) + ": actual " + worstActual +
         ", expected " + worstExpected + " (" + errors + "; " + tolerances +
         ")";
}
