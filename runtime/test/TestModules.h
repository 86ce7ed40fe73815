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
#include <cstdlib>
#include <optional>
#include <string>

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

} // namespace strata::rt::test

#endif // STRATA_RUNTIME_TEST_TESTMODULES_H
