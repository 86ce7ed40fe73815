//===- TestModules.h - Modules shared by the runtime tests ------*- C++ -*-===//
//
// The small modules the tests build with ModuleBuilder, a helper that
// checks that a call throws rt::Error with a given piece of text, and one
// that runs code with an environment variable set.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_TEST_TESTMODULES_H
#define STRATA_RUNTIME_TEST_TESTMODULES_H

#include "strata/Runtime/Cuda.h"
#include "strata/Runtime/Runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace strata::rt::test {

/// A GPU kernel's launch (format 1.6): `grid` blocks of `block` threads,
/// with `shared` bytes of dynamic shared memory.
inline KernelLaunch gpuLaunch(std::array<uint32_t, 3> grid,
                              std::array<uint32_t, 3> block,
                              uint32_t shared = 0) {
  KernelLaunch launch;
  std::copy(grid.begin(), grid.end(), launch.grid);
  std::copy(block.begin(), block.end(), launch.block);
  launch.sharedBytes = shared;
  return launch;
}

/// Runs `body` with $name set to `value`, then gives $name back the value
/// it had (or unsets it).
template <typename F>
void withEnv(const char *name, const char *value, F body) {
  const char *old = std::getenv(name);
  std::optional<std::string> saved;
  if (old)
    saved = old;
  setenv(name, value, 1);
  body();
  if (saved)
    setenv(name, saved->c_str(), 1);
  else
    unsetenv(name);
}

/// y = x + c with x: f32[2, 3] (input), c: a constant, y: arena output.
inline ModuleBuilder addModuleBuilder(std::vector<int64_t> xShape = {2, 3}) {
  ModuleBuilder b;
  b.addMetadata("strata.version", "test");
  b.addMetadata("source", "add.onnx");
  uint32_t x = b.addInput("x", DType::F32, xShape);
  uint32_t c = b.addConstant(Tensor::fromValues<float>(
      DType::F32, {2, 3}, {10.f, 20.f, 30.f, 40.f, 50.f, 60.f}));
  uint32_t y = b.addArenaBuffer(DType::F32, {2, 3});
  Step add;
  add.kind = StepKind::Library;
  add.name = "add.f32";
  add.inputs = {x, c};
  add.outputs = {y};
  add.sourceNodes = {"Add_0"};
  add.attributes.push_back({"note", {}, {}, "unused"});
  b.addStep(add);
  b.addOutput("y", y);
  return b;
}

inline std::vector<uint8_t> addModuleBytes() {
  return addModuleBuilder().finish();
}

/// The message of the Error that `fn` throws; fails the test when it throws
/// nothing or something else.
template <typename Fn> std::string errorOf(Fn &&fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e.what();
  } catch (const std::exception &e) {
    ADD_FAILURE() << "threw a non-rt::Error exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

/// Skips the test, saying why, where no GPU can be used.
#define STRATA_REQUIRE_CUDA()                                                  \
  do {                                                                         \
    std::string why;                                                           \
    if (!::strata::rt::cudaAvailable(&why))                                    \
      GTEST_SKIP() << why;                                                     \
  } while (0)

// Test data of the GPU library steps' tests (CudaLtTest.cpp,
// CudnnConvTest.cpp): values exactly representable in the step's type, the
// bytes of a tensor read back as floats.

inline uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
inline float fromBf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Values of `type` (held as floats, exactly representable) and their bytes.
struct Data {
  std::vector<float> values;
  Tensor tensor;
};

inline Data make(DType type, const std::vector<int64_t> &shape,
                 std::mt19937 &rng, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  Data d;
  d.tensor = Tensor::zeros(type, shape);
  size_t n = static_cast<size_t>(numElements(shape));
  d.values.resize(n);
  auto *bytes = static_cast<uint8_t *>(d.tensor.rawData());
  for (size_t i = 0; i < n; ++i) {
    float v = normal(rng);
    if (type == DType::F32) {
      std::memcpy(bytes + 4 * i, &v, 4);
    } else if (type == DType::BF16) {
      uint16_t h = toBf16(v);
      v = fromBf16(h);
      std::memcpy(bytes + 2 * i, &h, 2);
    } else {
      _Float16 h = static_cast<_Float16>(v);
      v = static_cast<float>(h);
      std::memcpy(bytes + 2 * i, &h, 2);
    }
    d.values[i] = v;
  }
  return d;
}

inline float valueAt(const Tensor &t, size_t i) {
  const auto *bytes = static_cast<const uint8_t *>(t.rawData());
  if (t.dtype() == DType::F32) {
    float v;
    std::memcpy(&v, bytes + 4 * i, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, bytes + 2 * i, 2);
  if (t.dtype() == DType::BF16)
    return fromBf16(h);
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return static_cast<float>(x);
}

/// The largest |got[i] - ref[i]| and its index; a NaN counts as worse than
/// any number.
inline std::pair<double, size_t> worstError(const Tensor &got,
                                            const std::vector<double> &ref) {
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double err = std::abs(valueAt(got, i) - ref[i]);
    if (!(err <= worst)) // NaN too
      worst = err, at = i;
  }
  return {worst, at};
}

} // namespace strata::rt::test

#endif // STRATA_RUNTIME_TEST_TESTMODULES_H
