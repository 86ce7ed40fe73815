//===- CudaSessionTest.cpp - The CUDA executor without kernels --*- C++ -*-===//
//
// The CUDA executor's parts that need no GPU code: the errors on machines
// without an NVIDIA driver or GPU (each test runs only where that is the
// case, and checks the exact reason), and, on a GPU, sessions whose modules
// only move data (inputs and constants copied to the device and back), the
// device option and the session information.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "strata/Runtime/Cuda.h"

#include <dlfcn.h>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

bool libcudaPresent() {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle)
    dlclose(handle);
  return handle != nullptr;
}

/// Outputs: the input x, a constant c and the input again under a second
/// name; no steps, so no GPU code.
std::shared_ptr<const Module> copyModule() {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {3, 5});
  uint32_t c = b.addConstant(
      Tensor::fromValues<int32_t>(DType::I32, {4}, {7, -8, 9, 1 << 30}));
  b.addOutput("x_out", x);
  b.addOutput("c", c);
  b.addOutput("x_again", x);
  return Module::loadFromMemory(b.finish(), "copy.strata");
}

} // namespace

TEST(CudaSession, NoDriverIsNamed) {
  if (libcudaPresent())
    GTEST_SKIP() << "libcuda.so.1 is present here";
  std::string why;
  EXPECT_FALSE(cudaAvailable(&why));
  const std::string expected = "strata: --target=cuda needs an NVIDIA GPU and "
                               "driver: libcuda.so.1 was not found (";
  EXPECT_THAT(why, HasSubstr(expected));
  // The dynamic loader's own words follow, in the parentheses.
  EXPECT_THAT(why, HasSubstr("libcuda.so.1"));
  EXPECT_THAT(errorOf([] { Session session(copyModule()); }),
              HasSubstr(expected));
}

TEST(CudaSession, NoDeviceIsNamed) {
  if (!libcudaPresent())
    GTEST_SKIP() << "libcuda.so.1 is not present here";
  std::string why;
  if (cudaAvailable(&why))
    GTEST_SKIP() << "a GPU is present here";
  EXPECT_THAT(why, HasSubstr("strata: --target=cuda needs an NVIDIA GPU and "
                             "driver: "));
  EXPECT_THAT(errorOf([] { Session session(copyModule()); }), HasSubstr(why));
}

TEST(CudaSession, CopiesInputsAndConstants) {
  STRATA_REQUIRE_CUDA();
  for (bool pinned : {true, false}) {
    SessionOptions options;
    options.cuda.pinnedStaging = pinned;
    Session session(copyModule(), options);
    for (int run = 0; run < 3; ++run) {
      std::vector<float> xs(15);
      for (size_t i = 0; i < xs.size(); ++i)
        xs[i] = 0.25f * static_cast<float>(i) - 3.0f * run;
      session.setInput("x", Tensor::fromValues<float>(DType::F32, {3, 5}, xs));
      session.run();
      for (const char *name : {"x_out", "x_again"}) {
        const Tensor &out = session.output(name);
        ASSERT_EQ(out.shape(), (std::vector<int64_t>{3, 5}));
        EXPECT_EQ(std::vector<float>(out.data<float>(), out.data<float>() + 15),
                  xs)
            << name << " run " << run << " pinned " << pinned;
      }
      const Tensor &c = session.output("c");
      EXPECT_EQ(std::vector<int32_t>(c.data<int32_t>(), c.data<int32_t>() + 4),
                (std::vector<int32_t>{7, -8, 9, 1 << 30}));
    }
    CudaSessionInfo info = cudaSessionInfo(session);
    EXPECT_FALSE(info.deviceName.empty());
    EXPECT_THAT(info.deviceArch, ::testing::StartsWith("sm_"));
    EXPECT_EQ(info.loadedImage, ""); // No GPU code to load.
    EXPECT_EQ(info.directRuns, 3u);  // Nothing to capture either.
    EXPECT_EQ(info.graphRuns, 0u);
  }
}

TEST(CudaSession, InputsMustBeSet) {
  STRATA_REQUIRE_CUDA();
  Session session(copyModule());
  EXPECT_THAT(errorOf([&] { session.run(); }),
              HasSubstr("input 'x' was not set"));
  EXPECT_THAT(errorOf([&] { session.output("c"); }),
              HasSubstr("not available before a successful run()"));
}

TEST(CudaSession, MissingDeviceIsNamed) {
  STRATA_REQUIRE_CUDA();
  SessionOptions options;
  options.cuda.device = 999;
  EXPECT_THAT(errorOf([&] { Session session(copyModule(), options); }),
              HasSubstr("'copy.strata': asks for CUDA device 999, but this "
                        "machine has "));
}

namespace {
/// A CUDA module of string steps only (a StringNormalizer model compiled
/// for --target=cuda): nothing for the GPU.
std::shared_ptr<const Module> stringOnlyModule() {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::String, {3});
  uint32_t words = b.addStringBuffer({-1});
  Step normalize;
  normalize.kind = StepKind::Library;
  normalize.name = "string.normalizer";
  normalize.inputs = {x};
  normalize.outputs = {words};
  normalize.sourceNodes = {"norm"};
  normalize.attributes.push_back({"case_change_action", {}, {}, "UPPER"});
  b.addStep(normalize);
  b.addOutput("words", words);
  return Module::loadFromMemory(b.finish(), "strings-cuda.strata");
}
} // namespace

TEST(CudaSession, StringOnlyModulesRunOnTheHost) {
  std::string why;
  if (!cudaAvailable(&why)) {
    // As for every CUDA module: no GPU, a clear error.
    EXPECT_THAT(errorOf([] { Session s(stringOnlyModule()); }),
                HasSubstr("--target=cuda needs an NVIDIA GPU and driver"));
    return;
  }
  Session session(stringOnlyModule());
  session.setInput("x", Tensor::fromStrings({3}, {"monday", "Tuesday", "a"}));
  session.run();
  const Tensor &out = session.output("words");
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(std::vector<std::string>(out.data<std::string>(),
                                     out.data<std::string>() + 3),
            (std::vector<std::string>{"MONDAY", "TUESDAY", "A"}));
}

namespace {
/// A CUDA module of value-shaped host steps only (a NonZero model compiled
/// for --target=cuda): nothing for the GPU.
std::shared_ptr<const Module> hostOnlyModule() {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {2, 2});
  uint32_t nz = b.addHostBuffer(DType::I64, {2, -1});
  b.addStep({StepKind::Library, "host.nonzero", {x}, {nz}, {}, {"NZ_0"}});
  b.addOutput("nz", nz);
  return Module::loadFromMemory(b.finish(), "nonzero-cuda.strata");
}
} // namespace

TEST(CudaSession, HostOnlyModulesRunOnTheHost) {
  std::string why;
  if (!cudaAvailable(&why)) {
    EXPECT_THAT(errorOf([] { Session s(hostOnlyModule()); }),
                HasSubstr("--target=cuda needs an NVIDIA GPU and driver"));
    return;
  }
  Session session(hostOnlyModule());
  session.setInput("x",
                   Tensor::fromValues<float>(DType::F32, {2, 2}, {1, 0, 0, 2}));
  session.run();
  const Tensor &out = session.output("nz");
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::vector<int64_t>(out.data<int64_t>(), out.data<int64_t>() + 4),
            (std::vector<int64_t>{0, 1, 0, 1}));
}
