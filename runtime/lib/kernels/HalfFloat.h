//===- HalfFloat.h - f16 and bf16 bits to and from float --------*- C++ -*-===//
//
// The host kernels hold f16 and bf16 elements as their 16 bits; these
// convert them to float exactly and back with round-to-nearest-even (NaN
// stays NaN, overflow becomes infinity), as IEEE 754 and numpy's astype do.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_KERNELS_HALFFLOAT_H
#define STRATA_RUNTIME_LIB_KERNELS_HALFFLOAT_H

#include <cstdint>
#include <cstring>

namespace strata::rt::kernels {

inline float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f,
           mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa) {
    // Subnormal: normalize.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  } else {
    bits = sign;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: keep it quiet and non-zero
    return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
  int32_t exponent = static_cast<int32_t>(magnitude >> 23) - 127 + 15;
  uint32_t mantissa = x & 0x7fffffu;
  if (exponent >= 0x1f)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (exponent <= 0) {
    if (exponent < -10)
      return sign;
    mantissa |= 0x800000u;
    auto shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1), middle = 1u << (shift - 1);
    if (rest > middle || (rest == middle && (half & 1u)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  // A carry out of the mantissa rounds into the exponent, up to infinity.
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half;
  return static_cast<uint16_t>(sign | half);
}

inline uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

} // namespace strata::rt::kernels

#endif // STRATA_RUNTIME_LIB_KERNELS_HALFFLOAT_H
