//===- FakeCudaTest.cpp - CUDA driver failures, without a GPU ---*- C++ -*-===//
//
// The CUDA executor on the fake driver of test/fakecuda (docs/testing.md,
// "Failure injection"), chosen with strata::rt::testing::useCudaDriver before
// the first CUDA use: driver calls are failed on purpose, one at a time, at
// initialization, at module load, during session creation and during runs,
// and as a sticky error that poisons the context. Each failure must be an
// rt::Error (an OutOfMemory for CUDA_ERROR_OUT_OF_MEMORY) that names the
// module, the driver call and the step or phase; nothing may be left behind
// (every allocation, stream, module, event and graph given back, the primary
// context released, the calling thread's current context as it was); and a
// new session, and for non-sticky faults the same session's next run, must
// work. Kernels do nothing on the fake, so no values are checked. Runs in CI
// without a GPU; cuInit failures run in a child process each, since the
// driver is initialized once per process.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestModules.h"

#include "strata/Runtime/Cuda.h"
#include "strata/Runtime/Testing.h"
#include "strata/runtime_c.h"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <thread>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

/// The fake driver's control functions (FakeCuda.h).
struct FakeDriver {
  fakecuda_fail_fn fail = nullptr;
  fakecuda_pending_fn pending = nullptr;
  fakecuda_reset_fn reset = nullptr;
  fakecuda_calls_fn calls = nullptr;
  fakecuda_live_fn live = nullptr;
  fakecuda_kernels_run_fn kernelsRun = nullptr;
  fakecuda_context_depth_fn contextDepth = nullptr;
  fakecuda_set_device_count_fn setDeviceCount = nullptr;
};

/// Opens the fake driver and makes it the runtime's, once per process (the
/// runtime's dlopen of the same file then finds this copy).
const FakeDriver &fake() {
  static const FakeDriver driver = [] {
    void *handle = dlopen(STRATA_RT_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      std::fprintf(stderr, "cannot open the fake CUDA driver: %s\n",
                   why ? why : STRATA_RT_FAKE_CUDA);
      std::abort();
    }
    auto get = [&](const char *name) {
      void *fn = dlsym(handle, name);
      if (!fn) {
        std::fprintf(stderr, "the fake CUDA driver lacks %s\n", name);
        std::abort();
      }
      return fn;
    };
    FakeDriver f;
    f.fail = reinterpret_cast<fakecuda_fail_fn>(get("fakecuda_fail"));
    f.pending = reinterpret_cast<fakecuda_pending_fn>(get("fakecuda_pending"));
    f.reset = reinterpret_cast<fakecuda_reset_fn>(get("fakecuda_reset"));
    f.calls = reinterpret_cast<fakecuda_calls_fn>(get("fakecuda_calls"));
    f.live = reinterpret_cast<fakecuda_live_fn>(get("fakecuda_live"));
    f.kernelsRun =
        reinterpret_cast<fakecuda_kernels_run_fn>(get("fakecuda_kernels_run"));
    f.contextDepth = reinterpret_cast<fakecuda_context_depth_fn>(
        get("fakecuda_context_depth"));
    f.setDeviceCount = reinterpret_cast<fakecuda_set_device_count_fn>(
        get("fakecuda_set_device_count"));
    strata::rt::testing::useCudaDriver(STRATA_RT_FAKE_CUDA);
    return f;
  }();
  return driver;
}

/// Arms a fault; the entry point must be one the fake has.
void failCall(const std::string &entryPoint, long after, CUresult error,
              bool sticky = false) {
  ASSERT_EQ(fake().fail(entryPoint.c_str(), after, error, sticky), 0)
      << entryPoint;
}

const char *const kObjects[] = {"device_memory", "host_memory",    "streams",
                                "modules",       "events",         "graphs",
                                "graph_execs",   "context_retains"};

/// What the fake holds now, by kind.
std::map<std::string, long> liveObjects() {
  std::map<std::string, long> live;
  for (const char *what : kObjects)
    live[what] = fake().live(what);
  return live;
}

/// Nothing of any session is left in the driver, and this thread's current
/// context is as it was.
void expectNothingLive(const std::string &after) {
  for (const char *what : kObjects)
    EXPECT_EQ(fake().live(what), 0) << what << " alive after " << after;
  EXPECT_EQ(fake().contextDepth(), 0) << "context pushed after " << after;
}

/// The driver entry points the runtime calls (CudaDriver.h).
const char *const kEntryPoints[] = {
    "cuGetErrorName",
    "cuGetErrorString",
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease",
    "cuCtxPushCurrent",
    "cuCtxPopCurrent",
    "cuModuleLoadData",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuFuncGetAttribute",
    "cuFuncSetAttribute",
    "cuMemAlloc",
    "cuMemFree",
    "cuMemAllocHost",
    "cuMemFreeHost",
    "cuMemcpyHtoDAsync",
    "cuMemcpyDtoHAsync",
    "cuMemcpyDtoDAsync",
    "cuStreamCreate",
    "cuStreamDestroy",
    "cuStreamSynchronize",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuStreamBeginCapture",
    "cuStreamEndCapture",
    "cuGraphInstantiateWithFlags",
    "cuGraphLaunch",
    "cuGraphExecDestroy",
    "cuGraphDestroy",
    "cuEventCreate",
    "cuEventDestroy",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime",
    "cuTensorMapEncodeTiled",
};

/// How often `work` calls each entry point.
std::map<std::string, long> callsOf(const std::function<void()> &work) {
  std::map<std::string, long> before;
  for (const char *e : kEntryPoints)
    before[e] = fake().calls(e);
  work();
  std::map<std::string, long> made;
  for (const char *e : kEntryPoints)
    if (long n = fake().calls(e) - before[e])
      made[e] = n;
  return made;
}

/// Calls whose failure the runtime cannot report: the pop that ends each
/// driver call's scope (a destructor; the push has succeeded), the error
/// texts (the message then has the number instead), and the releases of a
/// session's destruction, where a failure is ignored so that the rest is
/// still given back.
bool unreportable(const std::string &entryPoint) {
  for (const char *e :
       {"cuCtxPopCurrent", "cuGetErrorName", "cuGetErrorString",
        "cuDevicePrimaryCtxRelease", "cuMemFree", "cuMemFreeHost",
        "cuStreamDestroy", "cuModuleUnload", "cuGraphDestroy",
        "cuGraphExecDestroy", "cuEventDestroy"})
    if (entryPoint == e)
      return true;
  return false;
}

Step kernelStep(std::string name, std::vector<uint32_t> inputs,
                std::vector<uint32_t> outputs, std::string node) {
  Step step{StepKind::Kernel,
            std::move(name),
            std::move(inputs),
            std::move(outputs),
            {},
            {std::move(node)}};
  step.launch = gpuLaunch({4, 1, 1}, {32, 1, 1});
  return step;
}

/// h = scale(x, c), y = relu(h): two kernel steps over f32[4, 8]. The second
/// waits for the first at its entry (waits_for_grids: cuLaunchKernelEx on an
/// sm_90 device, which the fake is), takes 64 KiB of dynamic shared memory
/// (opted into with cuFuncSetAttribute) and reads h through a TMA tensor map
/// (cuTensorMapEncodeTiled, one more allocation and copy). The GPU code is a
/// stand-in: the fake loads any image.
std::shared_ptr<const Module> kernelModule(const std::string &name,
                                           bool cubin = true, bool ptx = true) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {4, 8});
  uint32_t c = b.addConstant(
      Tensor::fromValues<float>(DType::F32, {8}, {1, 2, 3, 4, 5, 6, 7, 8}));
  uint32_t h = b.addArenaBuffer(DType::F32, {4, 8});
  uint32_t y = b.addArenaBuffer(DType::F32, {4, 8});
  b.addStep(kernelStep("scale", {x, c}, {h}, "Mul_0"));
  Step relu = kernelStep("relu", {h}, {y}, "Relu_1");
  relu.launch->sharedBytes = 64 * 1024;
  relu.launch->waitsForGrids = true;
  relu.launch->tensorMaps = {0, 8, 4, 32, 8, 4, 0};
  b.addStep(relu);
  b.addOutput("y", y);
  if (cubin)
    b.setGpuCubin(std::vector<uint8_t>(128, 0x7f));
  if (ptx)
    b.setGpuPtx(".version 8.0\n.target sm_90\n.address_size 64\n");
  b.setGpuArch("sm_90a");
  return Module::loadFromMemory(b.finish(), name);
}

const char *const kScale = "step 0 ('scale', from ONNX node 'Mul_0')";
const char *const kRelu = "step 1 ('relu', from ONNX node 'Relu_1')";

/// Sets x and runs; y must then be there.
void runOnce(Session &session) {
  session.setInput("x", Tensor::fromValues<float>(
                            DType::F32, {4, 8}, std::vector<float>(32, 1.5f)));
  session.run();
  EXPECT_EQ(session.output("y").shape(), (std::vector<int64_t>{4, 8}));
}

/// A new session of `module` is made, runs twice (each run launching both
/// kernels) and leaves nothing behind.
void expectNewSessionWorks(const std::shared_ptr<const Module> &module,
                           const std::string &after,
                           SessionOptions options = {}) {
  long kernels = fake().kernelsRun();
  try {
    Session session(module, options);
    runOnce(session);
    runOnce(session);
  } catch (const std::exception &e) {
    ADD_FAILURE() << "a new session after " << after << " failed: " << e.what();
    return;
  }
  EXPECT_EQ(fake().kernelsRun() - kernels, 4) << after;
  expectNothingLive("a new session after " + after);
}

/// Whether `e` is an OutOfMemory.
bool isOutOfMemory(const Error &e) {
  return dynamic_cast<const OutOfMemory *>(&e) != nullptr;
}

class FakeCudaDriver : public ::testing::Test {
protected:
  void SetUp() override {
    fake().reset();
    std::string why;
    ASSERT_TRUE(cudaAvailable(&why)) << why;
  }
  void TearDown() override {
    EXPECT_EQ(fake().pending(), 0) << "a fault was armed but never reached";
    EXPECT_EQ(fake().contextDepth(), 0);
    fake().reset();
  }
};

} // namespace

TEST_F(FakeCudaDriver, RunsModules) {
  auto m = kernelModule("plain.strata");
  {
    Session session(m);
    CudaSessionInfo info = cudaSessionInfo(session);
    EXPECT_EQ(info.deviceName, "Fake CUDA GPU 0");
    EXPECT_EQ(info.deviceArch, "sm_90");
    EXPECT_EQ(info.loadedImage, "cubin");
    EXPECT_EQ(info.programmaticLaunches, 1u);
    // The arena, the constants, the inputs and the tensor maps; the
    // staging; the stream, the module and the primary context.
    std::map<std::string, long> expected = {
        {"device_memory", 4}, {"host_memory", 1},    {"streams", 1},
        {"modules", 1},       {"events", 0},         {"graphs", 0},
        {"graph_execs", 0},   {"context_retains", 1}};
    EXPECT_EQ(liveObjects(), expected);
    for (int run = 0; run < 3; ++run)
      runOnce(session);
    info = cudaSessionInfo(session);
    EXPECT_EQ(info.graphCaptures, 1u);
    EXPECT_EQ(info.graphRuns, 3u);
    EXPECT_EQ(info.directRuns, 0u);
    EXPECT_EQ(fake().kernelsRun(), 6);
    // Captured once, launched as a graph every run.
    EXPECT_EQ(fake().calls("cuLaunchKernel"), 1);
    EXPECT_EQ(fake().calls("cuLaunchKernelEx"), 1);
    EXPECT_EQ(fake().calls("cuGraphLaunch"), 3);
    expected["graphs"] = expected["graph_execs"] = 1;
    EXPECT_EQ(liveObjects(), expected);
    EXPECT_EQ(cudaTimeRuns(session, 2).size(), 2u);
    EXPECT_EQ(fake().live("events"), 0);
  }
  expectNothingLive("a session");
  SessionOptions direct;
  direct.cuda.graphs = false;
  expectNewSessionWorks(m, "graphs off", direct);
  SessionOptions profile;
  profile.profile = true;
  {
    Session session(m, profile);
    runOnce(session);
    EXPECT_EQ(session.stepTimes().size(), 2u);
    EXPECT_EQ(cudaSessionInfo(session).directRuns, 1u);
  }
  expectNothingLive("a profiled session");
  SessionOptions second;
  second.cuda.device = 1;
  EXPECT_EQ(errorOf([&] { Session session(m, second); }),
            "strata module 'plain.strata': asks for CUDA device 1, but this "
            "machine has 1 device");
  expectNothingLive("a missing device");
}

TEST_F(FakeCudaDriver, HostStepsRunBetweenGpuSteps) {
  // x -> GPU kernel -> y, and x -> host.nonzero -> nz -> host.cast -> nzf:
  // the host step reads x's device buffer (copied to the host behind the
  // kernel before it), and its outputs stay on the host, of the run's shape.
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {6});
  uint32_t y = b.addArenaBuffer(DType::F32, {6});
  uint32_t nz = b.addHostBuffer(DType::I64, {1, -1});
  uint32_t nzf = b.addHostBuffer(DType::F32, {1, -1});
  b.addStep(kernelStep("scale", {x}, {y}, "Mul_0"));
  b.addStep({StepKind::Library, "host.nonzero", {x}, {nz}, {}, {"NZ_1"}});
  b.addStep({StepKind::Library, "host.cast", {nz}, {nzf}, {}, {"Cast_2"}});
  b.addOutput("y", y);
  b.addOutput("nzf", nzf);
  b.setGpuCubin(std::vector<uint8_t>(128, 0x7f));
  b.setGpuArch("sm_90a");
  auto m = Module::loadFromMemory(b.finish(), "host-steps.strata");
  {
    Session session(m);
    for (const std::vector<float> &x : {std::vector<float>{0, 2, 0, 3, 4, 0},
                                        std::vector<float>{1, 0, 0, 0, 0, 0}}) {
      session.setInput("x", Tensor::fromValues<float>(DType::F32, {6}, x));
      session.run();
      std::vector<float> expected;
      for (size_t i = 0; i < x.size(); ++i)
        if (x[i] != 0)
          expected.push_back(static_cast<float>(i));
      const Tensor &got = session.output("nzf");
      ASSERT_EQ(got.shape(),
                (std::vector<int64_t>{1, int64_t(expected.size())}));
      EXPECT_EQ(std::vector<float>(got.data<float>(),
                                   got.data<float>() + expected.size()),
                expected);
    }
    CudaSessionInfo info = cudaSessionInfo(session);
    // Kernels launched one by one around the host steps, no graph.
    EXPECT_EQ(info.graphCaptures, 0u);
    EXPECT_EQ(info.directRuns, 2u);
    EXPECT_NE(info.graphFallback.find("host steps"), std::string::npos);
    EXPECT_EQ(fake().kernelsRun(), 2);
    SessionOptions profile;
    profile.profile = true;
    Session profiled(m, profile);
    profiled.setInput(
        "x", Tensor::fromValues<float>(DType::F32, {6}, {0, 0, 5, 0, 0, 0}));
    profiled.run();
    EXPECT_EQ(profiled.output("nzf").shape(), (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(profiled.stepTimes().size(), 3u);
  }
  expectNothingLive("sessions with host steps");
}

TEST_F(FakeCudaDriver, SessionsMoveBetweenThreads) {
  // Each call of a session pushes its context and pops it again: a session
  // made on one thread runs, fails and is destroyed on others, and leaves
  // no thread with a current context.
  auto m = kernelModule("threads.strata");
  auto session = std::make_unique<Session>(m);
  auto onThread = [](const std::function<void()> &body) {
    std::thread thread([&] {
      body();
      EXPECT_EQ(fake().contextDepth(), 0);
    });
    thread.join();
  };
  onThread([&] { runOnce(*session); });
  onThread([&] {
    failCall("cuGraphLaunch", 0, CUDA_ERROR_LAUNCH_FAILED);
    EXPECT_THAT(
        errorOf([&] { runOnce(*session); }),
        HasSubstr("cuGraphLaunch failed with CUDA_ERROR_LAUNCH_FAILED"));
  });
  onThread([&] { runOnce(*session); });
  onThread([&] { session.reset(); });
  EXPECT_EQ(fake().kernelsRun(), 4);
  expectNothingLive("a session used on four threads");
}

TEST_F(FakeCudaDriver, TheDriverIsChosenOncePerProcess) {
  // Loaded now (SetUp): the same library again is no change, another one
  // is refused.
  strata::rt::testing::useCudaDriver(STRATA_RT_FAKE_CUDA);
  EXPECT_EQ(
      errorOf([] { strata::rt::testing::useCudaDriver(nullptr); }),
      std::string("strata::rt::testing::useCudaDriver(\"libcuda.so.1\"): this "
                  "process loaded its CUDA driver from ") +
          STRATA_RT_FAKE_CUDA +
          " already (the driver is loaded once per process, at the first "
          "CUDA use: choose it before)");
}

namespace {

/// In a child process of its own (the driver is loaded and initialized
/// once per process): loads the fake driver after `arm` has armed its
/// faults, and exits with 0 when cudaAvailable and a session both report
/// `expected`, and cuInit ran once. Prints what it got.
[[noreturn]] void expectDriverError(const std::string &expected,
                                    const std::function<void()> &arm) {
  arm();
  std::string why, again, session;
  bool available = cudaAvailable(&why);
  // Decided once: the same answer without a second cuInit.
  cudaAvailable(&again);
  try {
    Session s(kernelModule("init.strata"));
  } catch (const Error &e) {
    session = e.what();
  }
  bool ok = !available && why == expected && again == why &&
            session == expected && fake().calls("cuInit") == 1;
  std::fprintf(stderr, "cudaAvailable: %s\nsession: %s\n%s\n", why.c_str(),
               session.c_str(), ok ? "result: as expected" : "result: wrong");
  std::fflush(stderr);
  std::exit(ok ? 0 : 1);
}

const std::string kNeedsGpu =
    "strata: --target=cuda needs an NVIDIA GPU and driver: ";

} // namespace

TEST(FakeCudaDriverDeathTest, InitFailuresAreNamed) {
  // A fresh process for each (re-executed), not a fork of this one, whose
  // driver may be loaded already.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      expectDriverError(kNeedsGpu + "the NVIDIA driver found no GPU (cuInit "
                                    "failed with CUDA_ERROR_NO_DEVICE (no "
                                    "CUDA-capable device is detected))",
                        [] { failCall("cuInit", 0, CUDA_ERROR_NO_DEVICE); }),
      ::testing::ExitedWithCode(0), "result: as expected");
  EXPECT_EXIT(
      expectDriverError(kNeedsGpu + "the NVIDIA driver did not initialize "
                                    "(cuInit failed with CUDA_ERROR_UNKNOWN "
                                    "(unknown error))",
                        [] { failCall("cuInit", 0, CUDA_ERROR_UNKNOWN); }),
      ::testing::ExitedWithCode(0), "result: as expected");
  EXPECT_EXIT(expectDriverError(
                  kNeedsGpu + "the NVIDIA driver is installed but found no GPU",
                  [] { fake().setDeviceCount(0); }),
              ::testing::ExitedWithCode(0), "result: as expected");
  EXPECT_EXIT(expectDriverError(
                  kNeedsGpu + "cuDeviceGetCount failed with "
                              "CUDA_ERROR_UNKNOWN (unknown error)",
                  [] { failCall("cuDeviceGetCount", 0, CUDA_ERROR_UNKNOWN); }),
              ::testing::ExitedWithCode(0), "result: as expected");
}

TEST(FakeCudaDriverDeathTest, MissingLibraryIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const char *missing = "/nonexistent/libcuda-missing.so.1";
  // dlerror's words follow in the parentheses.
  EXPECT_EXIT(
      {
        strata::rt::testing::useCudaDriver(missing);
        std::string why;
        bool ok = !cudaAvailable(&why) &&
                  why.rfind(kNeedsGpu + missing + " was not found (", 0) == 0;
        std::fprintf(stderr, "%s\n%s\n", why.c_str(),
                     ok ? "result: as expected" : "result: wrong");
        std::fflush(stderr);
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "result: as expected");
}

TEST_F(FakeCudaDriver, SessionCreationFailsCleanlyAtEveryDriverCall) {
  auto m = kernelModule("create.strata");
  std::map<std::string, long> calls;
  {
    std::unique_ptr<Session> session;
    calls = callsOf([&] { session = std::make_unique<Session>(m); });
  }
  expectNothingLive("an undisturbed session");
  std::vector<std::string> messages;
  for (const auto &[entryPoint, count] : calls) {
    if (unreportable(entryPoint))
      continue;
    for (long n = 0; n < count; ++n) {
      std::string what = "failure of call " + std::to_string(n) + " of " +
                         entryPoint + " in a session's creation";
      failCall(entryPoint, n, CUDA_ERROR_UNKNOWN);
      try {
        Session session(m);
        // Only the page-locked staging may fail: copies are then made
        // from pageable memory.
        EXPECT_EQ(entryPoint, "cuMemAllocHost") << what << ": not reported";
        EXPECT_EQ(fake().live("host_memory"), 0);
        runOnce(session);
      } catch (const Error &e) {
        messages.push_back(e.what());
        EXPECT_THAT(e.what(), StartsWith("strata module 'create.strata': "))
            << what;
        EXPECT_THAT(e.what(), HasSubstr(entryPoint + " failed with "
                                                     "CUDA_ERROR_UNKNOWN "
                                                     "(unknown error)"))
            << what;
        EXPECT_FALSE(isOutOfMemory(e)) << what;
      }
      EXPECT_EQ(fake().pending(), 0) << what << ": not reached";
      expectNothingLive(what);
      expectNewSessionWorks(m, what);
    }
  }
  // Every call of opening the device, loading the image, resolving the
  // kernels and allocating (each of those a call at least).
  EXPECT_GE(messages.size(), 25u) << ::testing::PrintToString(messages);
  for (const char *expected :
       {"strata module 'create.strata': opening CUDA device 0: cuDeviceGet "
        "failed with CUDA_ERROR_UNKNOWN (unknown error)",
        "strata module 'create.strata': opening CUDA device 0: cuStreamCreate "
        "failed with CUDA_ERROR_UNKNOWN (unknown error)",
        "strata module 'create.strata': reading the limits of Fake CUDA GPU 0: "
        "cuDeviceGetAttribute failed with CUDA_ERROR_UNKNOWN (unknown error)",
        "strata module 'create.strata': step 1 ('relu', from ONNX node "
        "'Relu_1'): cuFuncSetAttribute failed with CUDA_ERROR_UNKNOWN "
        "(unknown error)",
        "strata module 'create.strata': copying constant buffer 1 to the GPU: "
        "cuMemcpyHtoDAsync failed with CUDA_ERROR_UNKNOWN (unknown error)",
        "strata module 'create.strata': copying its constants to the GPU: "
        "cuStreamSynchronize failed with CUDA_ERROR_UNKNOWN (unknown error)",
        "strata module 'create.strata': step 1 ('relu', from ONNX node "
        "'Relu_1'): encoding tensor map 0 (buffer 2, 4x8 in boxes of 4x8): "
        "cuTensorMapEncodeTiled failed with CUDA_ERROR_UNKNOWN (unknown "
        "error)",
        "strata module 'create.strata': its 1 TMA tensor maps (128 bytes), "
        "copying them to the GPU: cuMemcpyHtoDAsync failed with "
        "CUDA_ERROR_UNKNOWN (unknown error)"})
    EXPECT_THAT(messages, ::testing::Contains(std::string(expected)));
}

TEST_F(FakeCudaDriver, DeviceAllocationsFailAsOutOfMemory) {
  auto m = kernelModule("oom.strata");
  const std::string module = "strata module 'oom.strata': ";
  const std::string oom =
      ": cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (out of memory)";
  const std::string expected[] = {
      module + "allocating its arena of " + std::to_string(m->arenaSize()) +
          " bytes on the GPU" + oom,
      module + "allocating 256 bytes for its constants on the GPU" + oom,
      module + "allocating 256 bytes for its inputs on the GPU" + oom,
      module + "its 1 TMA tensor maps (128 bytes), allocating them" + oom};
  for (long n = 0; n < 4; ++n) {
    failCall("cuMemAlloc", n, CUDA_ERROR_OUT_OF_MEMORY);
    try {
      Session session(m);
      ADD_FAILURE() << "allocation " << n << " failed, yet a session was made";
    } catch (const OutOfMemory &e) {
      EXPECT_EQ(e.what(), expected[n]);
    }
    expectNothingLive("a failed device allocation");
    expectNewSessionWorks(m, "a failed device allocation");
  }
  // The C API says so too.
  std::vector<uint8_t> bytes;
  strata_module *cm = nullptr;
  {
    ModuleBuilder b;
    b.setTarget("cuda");
    uint32_t x = b.addInput("x", DType::F32, {4});
    b.addOutput("x_out", x);
    bytes = b.finish();
  }
  ASSERT_EQ(strata_module_load_from_memory(bytes.data(), bytes.size(),
                                           "c.strata", &cm),
            STRATA_OK);
  strata_session *session = nullptr;
  failCall("cuMemAlloc", 0, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(strata_session_create(cm, nullptr, &session),
            STRATA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(std::string(strata_last_error()),
            "strata module 'c.strata': allocating 256 bytes for its inputs on "
            "the GPU" +
                oom);
  ASSERT_EQ(strata_session_create(cm, nullptr, &session), STRATA_OK);
  strata_session_free(session);
  strata_module_free(cm);
  expectNothingLive("the C API's sessions");
}

TEST_F(FakeCudaDriver, PinnedStagingIsOptional) {
  auto m = kernelModule("pinned.strata");
  failCall("cuMemAllocHost", 0, CUDA_ERROR_OUT_OF_MEMORY);
  {
    Session session(m);
    EXPECT_EQ(fake().live("host_memory"), 0);
    runOnce(session);
    runOnce(session);
  }
  expectNothingLive("a session without page-locked staging");
}

// An output bound to the caller's memory (Session::setOutputView) gets the
// bytes the session's own tensor gets, through the page-locked staging and
// without it, and the session keeps no tensor of it.
TEST_F(FakeCudaDriver, BoundOutputsGetTheDeviceBytes) {
  auto m = kernelModule("bound.strata");
  for (bool staging : {true, false}) {
    if (!staging)
      failCall("cuMemAllocHost", 0, CUDA_ERROR_OUT_OF_MEMORY);
    Session session(m);
    runOnce(session);
    const Tensor &own = session.output("y");
    std::vector<float> expected(own.data<float>(), own.data<float>() + 32);
    std::vector<float> y(32, -7.f);
    session.setOutputView("y", TensorView{DType::F32, {4, 8}, y.data()});
    session.run();
    EXPECT_EQ(y, expected) << (staging ? "staged" : "not staged");
    EXPECT_THAT(errorOf([&] { session.output("y"); }),
                HasSubstr("written into the caller's memory"));
  }
  expectNothingLive("sessions with bound outputs");
}

// An input and an output in the caller's device memory
// (Session::setInputDevice, setOutputDevice) are copied device to device,
// with no copy through the host: the output gets the bytes the session's own
// tensor gets, and the session keeps no tensor of it. Both are checked as
// their host counterparts are, and unbinding goes back to the host.
TEST_F(FakeCudaDriver, DeviceInputsAndOutputsAreCopiedOnTheDevice) {
  // The caller's memory, allocated in the primary context as PyTorch's is.
  // The fake's device memory is the host's: the test reads it directly.
  void *handle = dlopen(STRATA_RT_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto symbol = [&](const char *name) {
    void *fn = dlsym(handle, name);
    EXPECT_NE(fn, nullptr) << name;
    return fn;
  };
  auto retain = reinterpret_cast<CUresult (*)(CUcontext *, CUdevice)>(
      symbol("cuDevicePrimaryCtxRetain"));
  auto unretain = reinterpret_cast<CUresult (*)(CUdevice)>(
      symbol("cuDevicePrimaryCtxRelease_v2"));
  auto push =
      reinterpret_cast<CUresult (*)(CUcontext)>(symbol("cuCtxPushCurrent_v2"));
  auto pop =
      reinterpret_cast<CUresult (*)(CUcontext *)>(symbol("cuCtxPopCurrent_v2"));
  auto alloc = reinterpret_cast<CUresult (*)(CUdeviceptr *, size_t)>(
      symbol("cuMemAlloc_v2"));
  auto release =
      reinterpret_cast<CUresult (*)(CUdeviceptr)>(symbol("cuMemFree_v2"));
  ASSERT_TRUE(retain && unretain && push && pop && alloc && release);
  CUcontext context = nullptr;
  ASSERT_EQ(retain(&context, 0), CUDA_SUCCESS);
  ASSERT_EQ(push(context), CUDA_SUCCESS);
  CUdeviceptr x = 0, y = 0;
  EXPECT_EQ(alloc(&x, 32 * sizeof(float)), CUDA_SUCCESS);
  EXPECT_EQ(alloc(&y, 32 * sizeof(float)), CUDA_SUCCESS);
  ASSERT_EQ(pop(&context), CUDA_SUCCESS);
  ASSERT_TRUE(x && y);
  std::fill_n(reinterpret_cast<float *>(x), 32, 1.5f);
  auto m = kernelModule("device-io.strata");
  {
    Session session(m);
    runOnce(session);
    const Tensor &own = session.output("y");
    std::vector<float> expected(own.data<float>(), own.data<float>() + 32);
    std::fill_n(reinterpret_cast<float *>(y), 32, -7.f);
    session.setInputDevice(0, DType::F32, {4, 8}, x);
    session.setOutputDevice(0, y);
    long toDevice = fake().calls("cuMemcpyHtoDAsync");
    long onDevice = fake().calls("cuMemcpyDtoDAsync");
    long toHost = fake().calls("cuMemcpyDtoHAsync");
    session.run();
    EXPECT_EQ(fake().calls("cuMemcpyDtoDAsync") - onDevice, 2);
    EXPECT_EQ(fake().calls("cuMemcpyHtoDAsync"), toDevice);
    EXPECT_EQ(fake().calls("cuMemcpyDtoHAsync"), toHost);
    const float *written = reinterpret_cast<const float *>(y);
    EXPECT_EQ(std::vector<float>(written, written + 32), expected);
    EXPECT_THAT(errorOf([&] { session.output("y"); }),
                HasSubstr("written into the caller's memory"));
    EXPECT_THAT(errorOf([&] {
                  session.setInputDevice(0, DType::F32, {4, 9}, x);
                }),
                HasSubstr("(dimension 1 differs)"));
    EXPECT_THAT(errorOf([&] {
                  session.setInputDevice(0, DType::F16, {4, 8}, x);
                }),
                HasSubstr("(element type differs)"));
    EXPECT_THAT(errorOf([&] { session.setOutputDevice(0, 0); }),
                HasSubstr("the memory to write it into is null"));
    // Unbound, the output is the session's again and the input comes from
    // the host.
    session.unsetOutputView(0);
    runOnce(session);
    EXPECT_EQ(fake().calls("cuMemcpyDtoDAsync") - onDevice, 2);
  }
  ASSERT_EQ(push(context), CUDA_SUCCESS);
  EXPECT_EQ(release(x), CUDA_SUCCESS);
  EXPECT_EQ(release(y), CUDA_SUCCESS);
  ASSERT_EQ(pop(&context), CUDA_SUCCESS);
  EXPECT_EQ(unretain(0), CUDA_SUCCESS);
  expectNothingLive("a session with device inputs and outputs");
}

TEST_F(FakeCudaDriver, ModuleLoadFailuresAreNamed) {
  const std::string cubinLoad = "loading its cubin (for sm_90a) on Fake CUDA "
                                "GPU 0 (sm_90): ";
  // Not a refusal of the image: reported as it is, without trying the PTX.
  auto m = kernelModule("load.strata");
  failCall("cuModuleLoadData", 0, CUDA_ERROR_OUT_OF_MEMORY);
  try {
    Session session(m);
    ADD_FAILURE() << "made a session without its module";
  } catch (const OutOfMemory &e) {
    EXPECT_EQ(std::string(e.what()),
              "strata module 'load.strata': " + cubinLoad +
                  "cuModuleLoadData failed with CUDA_ERROR_OUT_OF_MEMORY (out "
                  "of memory)");
  }
  EXPECT_EQ(fake().calls("cuModuleLoadDataEx"), 0);
  expectNothingLive("a failed module load");
  expectNewSessionWorks(m, "a failed module load");

  // A cubin the GPU refuses, and no PTX.
  auto cubinOnly = kernelModule("cubin-only.strata", true, false);
  failCall("cuModuleLoadData", 0, CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(errorOf([&] { Session session(cubinOnly); }),
            "strata module 'cubin-only.strata': " + cubinLoad +
                "the GPU cannot run it (cuModuleLoadData failed with "
                "CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available "
                "for execution on the device)) and the module has no PTX to "
                "JIT-compile instead");
  expectNothingLive("a refused cubin");
  expectNewSessionWorks(cubinOnly, "a refused cubin");

  // A missing kernel.
  failCall("cuModuleGetFunction", 1, CUDA_ERROR_NOT_FOUND);
  EXPECT_EQ(errorOf([&] { Session session(m); }),
            std::string("strata module 'load.strata': ") + kRelu +
                " is a generated kernel, but the module's GPU code (its "
                "cubin) has no kernel 'relu' (cuModuleGetFunction failed with "
                "CUDA_ERROR_NOT_FOUND (named symbol not found))");
  expectNothingLive("a missing kernel");
}

TEST_F(FakeCudaDriver, RefusedCubinFallsBackToPtx) {
  // stderr says it once per module name and architecture in a process: a
  // name of its own for each time the test runs (--gtest_repeat).
  static int repeat = 0;
  const std::string name = "jit-" + std::to_string(++repeat) + ".strata";
  auto m = kernelModule(name);
  failCall("cuModuleLoadData", 0, CUDA_ERROR_NO_BINARY_FOR_GPU);
  ::testing::internal::CaptureStderr();
  {
    Session session(m);
    CudaSessionInfo info = cudaSessionInfo(session);
    EXPECT_EQ(info.loadedImage, "ptx");
    EXPECT_EQ(info.cubinRejected,
              "cuModuleLoadData failed with CUDA_ERROR_NO_BINARY_FOR_GPU (no "
              "kernel image is available for execution on the device) for its "
              "cubin (for sm_90a)");
    EXPECT_EQ(fake().calls("cuModuleLoadDataEx"), 1);
    EXPECT_EQ(fake().live("modules"), 1);
    runOnce(session);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "strata: no cubin for sm_90 in the module '" + name +
                "'; JIT-compiling its PTX (its cubin is for sm_90a)\n");
  expectNothingLive("a session of the PTX");

  // The JIT fails too: its error log is part of the message.
  failCall("cuModuleLoadData", 0, CUDA_ERROR_INVALID_IMAGE);
  failCall("cuModuleLoadDataEx", 0, CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(
      errorOf([&] { Session session(m); }),
      "strata module '" + name +
          "': JIT-compiling its PTX for sm_90: "
          "cuModuleLoadDataEx failed with CUDA_ERROR_INVALID_PTX (a PTX JIT "
          "compilation failed)\nfake ptxas: error: the fault injected into "
          "cuModuleLoadDataEx");
  expectNothingLive("a failed JIT");

  // A PTX newer than the driver: update the driver, it says.
  auto ptxOnly = kernelModule("ptx-only.strata", false, true);
  failCall("cuModuleLoadDataEx", 0, CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  ::testing::internal::CaptureStderr();
  EXPECT_THAT(errorOf([&] { Session session(ptxOnly); }),
              HasSubstr("cuModuleLoadDataEx failed with "
                        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (the provided PTX "
                        "was compiled with an unsupported toolchain.); the PTX "
                        "is newer than this driver (CUDA 13.0): update the "
                        "NVIDIA driver"));
  ::testing::internal::GetCapturedStderr();
  expectNothingLive("a PTX too new");
  expectNewSessionWorks(ptxOnly, "a PTX too new");
}

namespace {

/// How a run is made in RunsFailCleanlyAtEveryDriverCall.
struct RunKind {
  const char *name;
  SessionOptions options;
  /// Runs made before the one that fails (after the first, the CUDA graph
  /// is captured and only launched).
  int runsBefore;
  /// Whether a failure may be survived by giving up the CUDA graph.
  bool capturing;
};

std::vector<RunKind> runKinds() {
  SessionOptions graphs, direct, profile;
  direct.cuda.graphs = false;
  profile.profile = true;
  return {{"a first run (capturing the CUDA graph)", graphs, 0, true},
          {"a later run (launching the CUDA graph)", graphs, 1, false},
          {"a run without CUDA graphs", direct, 0, false},
          {"a profiled run", profile, 0, false},
          {"a later profiled run", profile, 1, false}};
}

} // namespace

TEST_F(FakeCudaDriver, RunsFailCleanlyAtEveryDriverCall) {
  auto m = kernelModule("run.strata");
  const std::string prefix = "strata module 'run.strata': ";
  size_t failures = 0;
  for (const RunKind &kind : runKinds()) {
    std::map<std::string, long> calls;
    {
      Session session(m, kind.options);
      for (int r = 0; r < kind.runsBefore; ++r)
        runOnce(session);
      calls = callsOf([&] { runOnce(session); });
    }
    expectNothingLive(kind.name);
    for (const auto &[entryPoint, count] : calls) {
      if (unreportable(entryPoint))
        continue;
      for (long n = 0; n < count; ++n) {
        std::string what = "failure of call " + std::to_string(n) + " of " +
                           entryPoint + " in " + kind.name;
        {
          Session session(m, kind.options);
          for (int r = 0; r < kind.runsBefore; ++r)
            runOnce(session);
          std::map<std::string, long> live = liveObjects();
          failCall(entryPoint, n, CUDA_ERROR_UNKNOWN);
          ::testing::internal::CaptureStderr();
          try {
            runOnce(session);
            // Only the capture may fail without failing the run: the
            // session then launches the kernels one by one.
            CudaSessionInfo info = cudaSessionInfo(session);
            EXPECT_TRUE(kind.capturing) << what << ": not reported";
            EXPECT_THAT(info.graphFallback, HasSubstr(entryPoint)) << what;
            EXPECT_THAT(info.graphFallback,
                        HasSubstr("failed with CUDA_ERROR_UNKNOWN (unknown "
                                  "error)"))
                << what;
            EXPECT_EQ(info.graphCaptures, 0u) << what;
            EXPECT_EQ(fake().live("graphs"), 0) << what;
            EXPECT_EQ(fake().live("graph_execs"), 0) << what;
          } catch (const Error &e) {
            ++failures;
            EXPECT_THAT(e.what(), StartsWith(prefix)) << what;
            EXPECT_THAT(e.what(), HasSubstr(entryPoint)) << what;
            EXPECT_THAT(e.what(),
                        HasSubstr("failed with CUDA_ERROR_UNKNOWN (unknown "
                                  "error)"))
                << what;
            EXPECT_THAT(errorOf([&] { session.output("y"); }),
                        HasSubstr("not available before a successful run()"))
                << what;
            // Nothing was added (but a first profiled run makes its events,
            // and a first run may have captured its graph).
            std::map<std::string, long> now = liveObjects();
            if (kind.options.profile && kind.runsBefore == 0) {
              now.erase("events");
              live.erase("events");
            }
            if (kind.capturing) {
              for (const char *graphs : {"graphs", "graph_execs"}) {
                now.erase(graphs);
                live.erase(graphs);
              }
            }
            EXPECT_EQ(now, live) << what;
          }
          ::testing::internal::GetCapturedStderr();
          EXPECT_EQ(fake().pending(), 0) << what << ": not reached";
          EXPECT_EQ(fake().contextDepth(), 0) << what;
          // The same session works on.
          try {
            runOnce(session);
            runOnce(session);
          } catch (const std::exception &e) {
            ADD_FAILURE() << "the next run after " << what
                          << " failed: " << e.what();
          }
        }
        expectNothingLive(what);
      }
    }
  }
  EXPECT_GE(failures, 20u);
  expectNewSessionWorks(m, "the failed runs");
}

TEST_F(FakeCudaDriver, CopyFailuresAreNamed) {
  auto m = kernelModule("copy.strata");
  Session session(m);
  failCall("cuMemcpyHtoDAsync", 0, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(errorOf([&] { runOnce(session); }),
            "strata module 'copy.strata': copying input 'x' to the GPU: "
            "cuMemcpyHtoDAsync failed with CUDA_ERROR_INVALID_VALUE (invalid "
            "argument)");
  EXPECT_EQ(fake().kernelsRun(), 0);
  runOnce(session);
  failCall("cuMemcpyDtoHAsync", 0, CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(errorOf([&] { runOnce(session); }),
            "strata module 'copy.strata': copying output 'y' from the GPU: "
            "cuMemcpyDtoHAsync failed with CUDA_ERROR_INVALID_VALUE (invalid "
            "argument)");
  EXPECT_THAT(errorOf([&] { session.output("y"); }),
              HasSubstr("not available before a successful run()"));
  runOnce(session);
  EXPECT_EQ(cudaSessionInfo(session).graphRuns, 3u);
}

TEST_F(FakeCudaDriver, LaunchFailuresNameTheStep) {
  auto m = kernelModule("launch.strata");
  SessionOptions direct;
  direct.cuda.graphs = false;
  Session session(m, direct);
  failCall("cuLaunchKernel", 0, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  EXPECT_EQ(errorOf([&] { runOnce(session); }),
            std::string("strata module 'launch.strata': ") + kScale +
                ": cuLaunchKernel failed with "
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources "
                "requested for launch)");
  EXPECT_EQ(fake().kernelsRun(), 0);
  failCall("cuLaunchKernelEx", 0, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  EXPECT_EQ(errorOf([&] { runOnce(session); }),
            std::string("strata module 'launch.strata': ") + kRelu +
                ": cuLaunchKernelEx (programmatic dependent launch) failed "
                "with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources "
                "requested for launch)");
  EXPECT_EQ(fake().kernelsRun(), 1);
  runOnce(session);
  EXPECT_EQ(fake().kernelsRun(), 3);
  EXPECT_EQ(cudaSessionInfo(session).directRuns, 1u);
}

TEST_F(FakeCudaDriver, FailedCaptureFallsBackToDirectLaunches) {
  auto m = kernelModule("graph.strata");
  struct Case {
    const char *entryPoint;
    CUresult error;
    std::string reason;
  };
  const Case cases[] = {
      {"cuStreamBeginCapture", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
       "cuStreamBeginCapture failed with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED "
       "(operation not permitted when stream is capturing)"},
      {"cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
       std::string(kScale) +
           ": cuLaunchKernel failed with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES "
           "(too many resources requested for launch)"},
      {"cuLaunchKernelEx", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
       std::string(kRelu) +
           ": cuLaunchKernelEx (programmatic dependent launch) failed with "
           "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested "
           "for launch)"},
      {"cuStreamEndCapture", CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
       "cuStreamEndCapture failed with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED "
       "(operation failed due to a previous error during capture)"},
      {"cuGraphInstantiateWithFlags", CUDA_ERROR_OUT_OF_MEMORY,
       "cuGraphInstantiateWithFlags failed with CUDA_ERROR_OUT_OF_MEMORY (out "
       "of memory)"},
  };
  for (const Case &c : cases) {
    fake().reset();
    {
      Session session(m);
      failCall(c.entryPoint, 0, c.error);
      ::testing::internal::CaptureStderr();
      runOnce(session);
      EXPECT_EQ(::testing::internal::GetCapturedStderr(),
                "strata module 'graph.strata': capturing its steps into a "
                "CUDA graph failed (" +
                    c.reason + "); its runs launch the kernels one by one\n");
      CudaSessionInfo info = cudaSessionInfo(session);
      EXPECT_EQ(info.graphFallback, c.reason);
      EXPECT_EQ(info.graphCaptures, 0u);
      EXPECT_EQ(info.directRuns, 1u);
      EXPECT_EQ(fake().kernelsRun(), 2) << c.entryPoint;
      // No graph is left half made, and the capture is not tried again.
      EXPECT_EQ(fake().live("graphs"), 0);
      EXPECT_EQ(fake().live("graph_execs"), 0);
      long captures = fake().calls("cuStreamBeginCapture");
      runOnce(session);
      EXPECT_EQ(fake().calls("cuStreamBeginCapture"), captures);
      EXPECT_EQ(cudaSessionInfo(session).directRuns, 2u);
      EXPECT_EQ(fake().kernelsRun(), 4);
    }
    expectNothingLive(std::string("a failed capture at ") + c.entryPoint);
    expectNewSessionWorks(m,
                          std::string("a failed capture at ") + c.entryPoint);
  }

  // The captured graph fails to launch: the run fails, the next one
  // launches it again.
  Session session(m);
  runOnce(session);
  failCall("cuGraphLaunch", 0, CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(errorOf([&] { runOnce(session); }),
            "strata module 'graph.strata': launching the CUDA graph of its "
            "steps: cuGraphLaunch failed with CUDA_ERROR_LAUNCH_FAILED "
            "(unspecified launch failure)");
  runOnce(session);
  CudaSessionInfo info = cudaSessionInfo(session);
  EXPECT_EQ(info.graphRuns, 2u);
  EXPECT_EQ(info.graphFallback, "");
}

TEST_F(FakeCudaDriver, StickyErrorPoisonsTheContextUntilReset) {
  auto m = kernelModule("sticky.strata");
  const std::string illegal = "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
                              "access was encountered)";
  {
    Session first(m);
    runOnce(first);
    // A kernel's illegal address shows when the stream is synchronized.
    failCall("cuStreamSynchronize", 0, CUDA_ERROR_ILLEGAL_ADDRESS, true);
    EXPECT_EQ(errorOf([&] { runOnce(first); }),
              "strata module 'sticky.strata': running its steps on the GPU "
              "(kernels run asynchronously; SessionOptions::profile "
              "synchronizes after each step and names the one that fails): "
              "cuStreamSynchronize failed with " +
                  illegal);
    // The context refuses everything from now on, and each failure is
    // named as such.
    EXPECT_EQ(errorOf([&] { runOnce(first); }),
              "strata module 'sticky.strata': copying input 'x' to the GPU: "
              "cuMemcpyHtoDAsync failed with " +
                  illegal);
    EXPECT_EQ(errorOf([&] { Session second(m); }),
              "strata module 'sticky.strata': opening CUDA device 0: "
              "cuStreamCreate failed with " +
                  illegal);
    // The failed session gave its context back.
    EXPECT_EQ(fake().live("context_retains"), 1);
    EXPECT_EQ(fake().contextDepth(), 0);
  }
  // The destroyed session released the primary context, though the
  // poisoned context refused to free its memory.
  EXPECT_EQ(fake().live("context_retains"), 0);
  EXPECT_EQ(fake().contextDepth(), 0);
  EXPECT_EQ(fake().live("device_memory"), 4);
  // A fresh context (a new process, on a real GPU): sessions work again.
  fake().reset();
  expectNewSessionWorks(m, "a sticky error, once the driver was reset");

  // Profiled, the step whose kernel faults is named.
  SessionOptions profile;
  profile.profile = true;
  {
    Session session(m, profile);
    failCall("cuEventSynchronize", 0, CUDA_ERROR_ILLEGAL_ADDRESS, true);
    EXPECT_EQ(errorOf([&] { runOnce(session); }),
              std::string("strata module 'sticky.strata': ") + kScale +
                  ": running the kernel: cuEventSynchronize failed with " +
                  illegal);
  }
  EXPECT_EQ(fake().live("context_retains"), 0);
  fake().reset();
  expectNewSessionWorks(m, "a sticky error in a profiled run", profile);
}

TEST_F(FakeCudaDriver, ProfiledRunsSurviveAFailedEventCreation) {
  // Before the fix, the events made before the failure were kept and the
  // missing ones left null, so that every later profiled run of the
  // session failed in cuEventRecord.
  auto m = kernelModule("events.strata");
  SessionOptions profile;
  profile.profile = true;
  Session session(m, profile);
  failCall("cuEventCreate", 2, CUDA_ERROR_OUT_OF_MEMORY);
  try {
    runOnce(session);
    ADD_FAILURE() << "the run succeeded without its events";
  } catch (const OutOfMemory &e) {
    EXPECT_EQ(std::string(e.what()),
              "strata module 'events.strata': creating the events that time "
              "its steps: cuEventCreate failed with CUDA_ERROR_OUT_OF_MEMORY "
              "(out of memory)");
  }
  EXPECT_EQ(fake().live("events"), 0);
  runOnce(session);
  EXPECT_EQ(fake().live("events"), 4);
  EXPECT_EQ(fake().kernelsRun(), 2);
  runOnce(session);
  EXPECT_EQ(fake().kernelsRun(), 4);
}

TEST_F(FakeCudaDriver, TimedRunsFailCleanly) {
  auto m = kernelModule("timed.strata");
  Session session(m);
  runOnce(session);
  failCall("cuEventRecord", 1, CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(errorOf([&] { cudaTimeRuns(session, 3); }),
            "strata module 'timed.strata': timing its runs on the GPU: "
            "cuEventRecord failed with CUDA_ERROR_UNKNOWN (unknown error)");
  EXPECT_EQ(fake().live("events"), 0);
  EXPECT_EQ(cudaTimeRuns(session, 3).size(), 3u);
  EXPECT_EQ(fake().live("events"), 0);
  runOnce(session);
}

TEST_F(FakeCudaDriver, ErrorsWithoutTheDriversTextHaveTheNumber) {
  auto m = kernelModule("numbers.strata");
  Session session(m);
  failCall("cuMemcpyHtoDAsync", 0, CUDA_ERROR_UNKNOWN);
  failCall("cuGetErrorName", 0, CUDA_ERROR_UNKNOWN);
  failCall("cuGetErrorString", 0, CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(errorOf([&] { runOnce(session); }),
            "strata module 'numbers.strata': copying input 'x' to the GPU: "
            "cuMemcpyHtoDAsync failed with CUDA error 999");
  runOnce(session);
}
