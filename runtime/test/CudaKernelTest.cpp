//===- CudaKernelTest.cpp - Running GPU kernels from modules ----*- C++ -*-===//
//
// Runs the hand-written kernels of test/cuda/TestKernels.cu (compiled by the
// build with nvcc to PTX and cubins) through Session, as the compiler's
// kernels will be: results against a host reference, the cubin and the PTX
// fallback (PTX only; a cubin for another architecture plus PTX), CUDA graph
// replay against direct launches over runs with changing inputs, dynamic
// shared memory beyond 48 KiB, TMA tensor maps, and the errors for missing
// kernels, kernels whose parameters do not match their step and launches
// the GPU cannot do.
// Every test needs a GPU and skips with the reason when there is none.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "strata/Runtime/Cuda.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

/// The architecture of device 0, read through a session of a module
/// without steps; empty when no GPU can be used (`why` says why).
std::string deviceArch(std::string &why) {
  if (!cudaAvailable(&why))
    return "";
  ModuleBuilder b;
  b.setTarget("cuda");
  Session session(Module::loadFromMemory(b.finish(), "probe.strata"));
  return cudaSessionInfo(session).deviceArch;
}

// The test kernels are built for sm_90a (H100, H200): other GPUs can run
// neither their cubin nor their PTX.
#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    std::string why;                                                           \
    std::string arch = deviceArch(why);                                        \
    if (arch.empty())                                                          \
      GTEST_SKIP() << why;                                                     \
    if (arch != "sm_90")                                                       \
      GTEST_SKIP() << "the test kernels are built for sm_90a; this GPU is "    \
                   << arch;                                                    \
  } while (0)

std::string kernelsDir() {
  if (const char *dir = std::getenv("STRATA_RT_CUDA_TEST_KERNELS"))
    return dir;
  return STRATA_RT_CUDA_TEST_KERNELS;
}

std::vector<uint8_t> readKernels(const std::string &file) {
  std::string path = kernelsDir() + "/" + file;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<uint8_t> cubin90a() {
  return readKernels("TestKernels.sm_90a.cubin");
}
std::vector<uint8_t> cubin80() {
  return readKernels("TestKernels.sm_80.cubin");
}
std::string ptx() {
  std::vector<uint8_t> bytes = readKernels("TestKernels.ptx");
  return std::string(bytes.begin(), bytes.end());
}

/// Which GPU code a test module carries.
enum class Image { Cubin, PtxOnly, WrongCubinAndPtx, WrongCubinOnly };

void setImage(ModuleBuilder &b, Image image) {
  switch (image) {
  case Image::Cubin:
    b.setGpuCubin(cubin90a());
    b.setGpuArch("sm_90a");
    b.setGpuPtx(ptx()); // Present, but the cubin must win.
    break;
  case Image::PtxOnly:
    b.setGpuPtx(ptx());
    break;
  case Image::WrongCubinAndPtx:
    b.setGpuCubin(cubin80());
    b.setGpuArch("sm_80");
    b.setGpuPtx(ptx());
    break;
  case Image::WrongCubinOnly:
    b.setGpuCubin(cubin80());
    b.setGpuArch("sm_80");
    break;
  }
}

Step gpuStep(std::string name, std::vector<uint32_t> inputs,
             std::vector<uint32_t> outputs, std::vector<int64_t> grid,
             std::vector<int64_t> block, std::string node) {
  Step step{StepKind::Kernel,
            std::move(name),
            std::move(inputs),
            std::move(outputs),
            {},
            {std::move(node)}};
  auto extents = [](const std::vector<int64_t> &v) {
    return std::array<uint32_t, 3>{uint32_t(v.at(0)), uint32_t(v.at(1)),
                                   uint32_t(v.at(2))};
  };
  step.launch = gpuLaunch(extents(grid), extents(block));
  return step;
}

constexpr int64_t kRows = 48, kCols = 512;

std::vector<float> biasValues() {
  std::vector<float> bias(kCols);
  for (int64_t c = 0; c < kCols; ++c)
    bias[c] = 0.125f * static_cast<float>(c % 17) - 1.0f;
  return bias;
}

/// z = x + y (strata_cuda_add, 1-D grid), then w = 2.5 z + bias
/// (strata_cuda_scale_bias, 2-D grid, a constant bias) over f32[48, 512].
/// `second` replaces the second step's kernel name; `ptxKernel`, when not
/// empty, is the first step's portable PTX's own kernel, with `ptxLaunch`.
ModuleBuilder
addScaleBuilder(Image image,
                const std::string &second = "strata_cuda_scale_bias",
                const std::string &ptxKernel = "",
                const std::optional<KernelLaunch> &ptxLaunch = std::nullopt) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {kRows, kCols});
  uint32_t y = b.addInput("y", DType::F32, {kRows, kCols});
  uint32_t bias = b.addConstant(
      Tensor::fromValues<float>(DType::F32, {kCols}, biasValues()));
  uint32_t z = b.addArenaBuffer(DType::F32, {kRows, kCols});
  uint32_t w = b.addArenaBuffer(DType::F32, {kRows, kCols});
  Step add = gpuStep("strata_cuda_add", {x, y}, {z},
                     {kRows * kCols / 256, 1, 1}, {256, 1, 1}, "Add_0");
  add.ptxKernel = ptxKernel;
  add.ptxLaunch = ptxLaunch;
  b.addStep(std::move(add));
  b.addStep(gpuStep(second, {z, bias}, {w}, {kCols / 128, kRows, 1},
                    {128, 1, 1}, "Mul_0"));
  b.addOutput("z", z);
  b.addOutput("w", w);
  setImage(b, image);
  return b;
}

std::shared_ptr<const Module> addScaleModule(Image image,
                                             const std::string &name) {
  return Module::loadFromMemory(addScaleBuilder(image).finish(), name);
}

/// "base-N.strata", a new N on each call: the PTX notice is printed once per
/// module name, so a test that checks it (also under --gtest_repeat) needs
/// a name no earlier session used.
std::string freshName(const std::string &base) {
  static int counter = 0;
  return base + "-" + std::to_string(++counter) + ".strata";
}

std::vector<float> randomValues(std::mt19937 &rng, size_t n) {
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> values(n);
  for (float &v : values)
    v = dist(rng);
  return values;
}

std::vector<float> values(const Tensor &t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numElements());
}

/// Runs the add/scale module on fresh random inputs and checks both outputs
/// against the host; returns w for comparisons between sessions.
std::vector<float> runAndCheck(Session &session, std::mt19937 &rng) {
  size_t n = kRows * kCols;
  std::vector<float> xs = randomValues(rng, n), ys = randomValues(rng, n);
  session.setInput("x",
                   Tensor::fromValues<float>(DType::F32, {kRows, kCols}, xs));
  session.setInput("y",
                   Tensor::fromValues<float>(DType::F32, {kRows, kCols}, ys));
  session.run();
  std::vector<float> z = values(session.output("z"));
  std::vector<float> w = values(session.output("w"));
  EXPECT_EQ(z.size(), n);
  EXPECT_EQ(w.size(), n);
  std::vector<float> bias = biasValues();
  size_t bad = 0;
  for (size_t i = 0; i < n && i < z.size() && i < w.size(); ++i) {
    // f32 addition is exact in IEEE arithmetic on both sides; the scale may
    // be one fused multiply-add on the GPU, hence the tolerance.
    float zRef = xs[i] + ys[i];
    double wRef = 2.5 * static_cast<double>(zRef) + bias[i % kCols];
    if (z[i] != zRef ||
        std::fabs(w[i] - wRef) > 1e-6 * std::fabs(wRef) + 1e-6) {
      if (++bad <= 5)
        ADD_FAILURE() << "element " << i << ": z " << z[i] << " (expected "
                      << zRef << "), w " << w[i] << " (expected " << wRef
                      << ")";
    }
  }
  EXPECT_EQ(bad, 0u);
  return w;
}

} // namespace

TEST(CudaKernel, RunsTheCubin) {
  REQUIRE_GPU();
  Session session(addScaleModule(Image::Cubin, "cubin.strata"));
  std::mt19937 rng(1);
  runAndCheck(session, rng);
  runAndCheck(session, rng);
  CudaSessionInfo info = cudaSessionInfo(session);
  EXPECT_EQ(info.loadedImage, "cubin");
  EXPECT_EQ(info.cubinRejected, "");
  EXPECT_EQ(info.graphCaptures, 1u);
  EXPECT_EQ(info.graphRuns, 2u);
}

TEST(CudaKernel, PtxOnlyIsJitCompiled) {
  REQUIRE_GPU();
  std::string name = freshName("ptx");
  auto module = addScaleModule(Image::PtxOnly, name);
  testing::internal::CaptureStderr();
  std::unique_ptr<Session> first, second;
  try {
    first = std::make_unique<Session>(module);
    second = std::make_unique<Session>(module);
  } catch (...) {
    testing::internal::GetCapturedStderr();
    throw;
  }
  std::string err = testing::internal::GetCapturedStderr();
  CudaSessionInfo info = cudaSessionInfo(*first);
  EXPECT_EQ(info.loadedImage, "ptx");
  EXPECT_EQ(info.cubinRejected, "the module has no cubin");
  std::string line = "strata: no cubin for " + info.deviceArch +
                     " in the module '" + name + "'; JIT-compiling its PTX\n";
  EXPECT_EQ(err, line) << "said once for two sessions of the module";
  std::mt19937 rng(2);
  runAndCheck(*first, rng);
  runAndCheck(*second, rng);
}

TEST(CudaKernel, CubinForAnotherGpuFallsBackToPtx) {
  REQUIRE_GPU();
  std::string name = freshName("sm80");
  testing::internal::CaptureStderr();
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(
        addScaleModule(Image::WrongCubinAndPtx, name));
  } catch (...) {
    testing::internal::GetCapturedStderr();
    throw;
  }
  std::string err = testing::internal::GetCapturedStderr();
  CudaSessionInfo info = cudaSessionInfo(*session);
  EXPECT_EQ(info.loadedImage, "ptx");
  EXPECT_THAT(info.cubinRejected,
              HasSubstr("cuModuleLoadData failed with CUDA_ERROR_"));
  EXPECT_THAT(info.cubinRejected, HasSubstr("for its cubin (for sm_80)"));
  EXPECT_EQ(err, "strata: no cubin for " + info.deviceArch +
                     " in the module '" + name +
                     "'; JIT-compiling its PTX (its cubin is for sm_80)\n");
  std::mt19937 rng(3);
  runAndCheck(*session, rng);
}

// A step whose portable PTX has its own kernel and launch (the step's
// ptx_kernel and ptx_launch, docs/runtime.md): the PTX's kernel
// strata_cuda_add_pairs takes two elements a thread, half strata_cuda_add's
// grid. The session takes it where it loads the PTX, and the step's own where
// it loads the cubin.
TEST(CudaKernel, PtxTakesItsOwnLaunch) {
  REQUIRE_GPU();
  for (Image image : {Image::Cubin, Image::PtxOnly, Image::WrongCubinAndPtx}) {
    ModuleBuilder b = addScaleBuilder(
        image, "strata_cuda_scale_bias", "strata_cuda_add_pairs",
        gpuLaunch({kRows * kCols / 2 / 128, 1, 1}, {128, 1, 1}));
    std::string name = freshName("own-launch");
    testing::internal::CaptureStderr();
    std::unique_ptr<Session> session;
    try {
      session =
          std::make_unique<Session>(Module::loadFromMemory(b.finish(), name));
    } catch (...) {
      testing::internal::GetCapturedStderr();
      throw;
    }
    testing::internal::GetCapturedStderr();
    std::mt19937 rng(4);
    runAndCheck(*session, rng);
    runAndCheck(*session, rng);
    CudaSessionInfo info = cudaSessionInfo(*session);
    bool ptx = image != Image::Cubin;
    EXPECT_EQ(info.loadedImage, ptx ? "ptx" : "cubin");
    EXPECT_EQ(info.ownPtxLaunches, ptx ? 1u : 0u) << info.loadedImage;
  }
}

TEST(CudaKernel, CubinForAnotherGpuWithoutPtxIsAnError) {
  REQUIRE_GPU();
  std::string msg = errorOf([] {
    Session session(addScaleModule(Image::WrongCubinOnly, "only80.strata"));
  });
  EXPECT_THAT(msg, HasSubstr("strata module 'only80.strata': loading its "
                             "cubin (for sm_80) on "));
  EXPECT_THAT(msg, HasSubstr("the GPU cannot run it (cuModuleLoadData failed "
                             "with CUDA_ERROR_"));
  EXPECT_THAT(msg, HasSubstr("and the module has no PTX to JIT-compile"));
}

TEST(CudaKernel, GraphReplayMatchesDirectLaunches) {
  REQUIRE_GPU();
  auto module = addScaleModule(Image::Cubin, "graph.strata");
  Session graphed(module);
  SessionOptions direct;
  direct.cuda.graphs = false;
  direct.cuda.pinnedStaging = false; // The pageable copies, too.
  Session launched(module, direct);
  // The same fresh inputs for both sessions on every run: the graph must
  // see each run's inputs, not the first run's.
  std::mt19937 rngA(4), rngB(4);
  std::vector<float> previous;
  for (int run = 0; run < 6; ++run) {
    std::vector<float> a = runAndCheck(graphed, rngA);
    std::vector<float> b = runAndCheck(launched, rngB);
    EXPECT_EQ(a, b) << "run " << run;
    EXPECT_NE(a, previous) << "run " << run;
    previous = a;
  }
  CudaSessionInfo g = cudaSessionInfo(graphed);
  EXPECT_EQ(g.graphFallback, "");
  EXPECT_EQ(g.graphCaptures, 1u);
  EXPECT_EQ(g.graphRuns, 6u);
  EXPECT_EQ(g.directRuns, 0u);
  CudaSessionInfo l = cudaSessionInfo(launched);
  EXPECT_EQ(l.graphCaptures, 0u);
  EXPECT_EQ(l.graphRuns, 0u);
  EXPECT_EQ(l.directRuns, 6u);
}

/// A chain of `steps` strata_cuda_rotate_add_one kernels over f32[n], each
/// reading the one before's output and marked waits_for_grids.
std::shared_ptr<const Module> rotateChainModule(int steps, int64_t n) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t value = b.addInput("x", DType::F32, {n});
  for (int k = 0; k < steps; ++k) {
    uint32_t next = b.addArenaBuffer(DType::F32, {n});
    Step step =
        gpuStep("strata_cuda_rotate_add_one", {value}, {next}, {n / 256, 1, 1},
                {256, 1, 1}, "Rotate_" + std::to_string(k));
    step.launch->waitsForGrids = true;
    b.addStep(std::move(step));
    value = next;
  }
  b.addOutput("y", value);
  setImage(b, Image::Cubin);
  return Module::loadFromMemory(b.finish(), "rotate.strata");
}

TEST(CudaKernel, ProgrammaticLaunchesWaitForTheKernelBefore) {
  REQUIRE_GPU();
  // 32 steps over 2^20 elements (4096 blocks each): every element of a
  // step's output depends on one written half a grid away by the step
  // before, so a kernel that started early without waiting would read a
  // stale value. y[i] = x[(i + 32 (n/2 + 1)) % n] + 32 = x[(i + 32) % n] +
  // 32, exact for the small integers of x.
  constexpr int kSteps = 32;
  constexpr int64_t n = 1 << 20;
  auto module = rotateChainModule(kSteps, n);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>((i * 7919) % 4096);
  auto check = [&](Session &session, const char *what) {
    for (int run = 0; run < 3; ++run) {
      session.setInput("x", Tensor::fromValues<float>(DType::F32, {n}, x));
      session.run();
      std::vector<float> y = values(session.output("y"));
      ASSERT_EQ(y.size(), static_cast<size_t>(n));
      size_t bad = 0;
      for (int64_t i = 0; i < n; ++i)
        if (y[i] != x[(i + kSteps) % n] + kSteps && ++bad <= 5)
          ADD_FAILURE() << what << ", run " << run << ", element " << i << ": "
                        << y[i] << " (expected " << x[(i + kSteps) % n] + kSteps
                        << ")";
      EXPECT_EQ(bad, 0u) << what << ", run " << run;
    }
  };
  Session graphed(module);
  check(graphed, "graph replay");
  CudaSessionInfo g = cudaSessionInfo(graphed);
  EXPECT_EQ(g.programmaticLaunches, static_cast<size_t>(kSteps));
  EXPECT_EQ(g.graphFallback, "");
  EXPECT_EQ(g.graphRuns, 3u);
  SessionOptions direct;
  direct.cuda.graphs = false;
  Session launched(module, direct);
  check(launched, "direct launches");
  EXPECT_EQ(cudaSessionInfo(launched).programmaticLaunches,
            static_cast<size_t>(kSteps));
  // STRATA_CUDA_PDL=0: plain launches, the same results.
  withEnv("STRATA_CUDA_PDL", "0", [&] {
    Session plain(module);
    check(plain, "STRATA_CUDA_PDL=0");
    EXPECT_EQ(cudaSessionInfo(plain).programmaticLaunches, 0u);
  });
}

TEST(CudaKernel, TimedRunsReplayTheGraph) {
  REQUIRE_GPU();
  Session session(addScaleModule(Image::Cubin, "timed.strata"));
  EXPECT_THAT(errorOf([&] { cudaTimeRuns(session, 2); }),
              HasSubstr("'timed.strata': timing its device runs needs a run "
                        "first"));
  std::mt19937 rng(9);
  runAndCheck(session, rng);
  std::vector<double> ms = cudaTimeRuns(session, 5);
  ASSERT_EQ(ms.size(), 5u);
  for (double t : ms)
    EXPECT_GT(t, 0.0);
  CudaSessionInfo info = cudaSessionInfo(session);
  EXPECT_EQ(info.graphCaptures, 1u);
  EXPECT_EQ(info.graphRuns, 6u);
  // The timed runs leave the session as it was: later runs see their own
  // inputs and are right.
  runAndCheck(session, rng);
}

TEST(CudaKernel, SessionsRunConcurrently) {
  REQUIRE_GPU();
  // Each session has its own stream and memory in the shared primary
  // context; each thread pushes the context for its own calls.
  auto module = addScaleModule(Image::Cubin, "threads.strata");
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&module, t] {
      Session session(module);
      std::mt19937 rng(100 + t);
      for (int run = 0; run < 4; ++run)
        runAndCheck(session, rng);
    });
  for (std::thread &t : threads)
    t.join();
}

TEST(CudaKernel, ProfileTimesEachStep) {
  REQUIRE_GPU();
  SessionOptions options;
  options.profile = true;
  Session session(addScaleModule(Image::Cubin, "profile.strata"), options);
  std::mt19937 rng(5);
  runAndCheck(session, rng);
  runAndCheck(session, rng);
  ASSERT_EQ(session.stepTimes().size(), 2u);
  for (double seconds : session.stepTimes()) {
    EXPECT_GT(seconds, 0.0);
    EXPECT_LT(seconds, 10.0);
  }
  CudaSessionInfo info = cudaSessionInfo(session);
  EXPECT_EQ(info.directRuns, 2u); // Per-step timing launches directly.
  EXPECT_EQ(info.graphRuns, 0u);
}

TEST(CudaKernel, MissingKernelIsNamed) {
  REQUIRE_GPU();
  for (Image image : {Image::Cubin, Image::PtxOnly}) {
    auto module = Module::loadFromMemory(
        addScaleBuilder(image, "strata_cuda_missing").finish(),
        "missing.strata");
    testing::internal::CaptureStderr();
    std::string msg = errorOf([&] { Session session(module); });
    testing::internal::GetCapturedStderr();
    EXPECT_THAT(
        msg, HasSubstr("strata module 'missing.strata': step 1 "
                       "('strata_cuda_missing', from ONNX node 'Mul_0') is "
                       "a generated kernel, but the module's GPU code (its " +
                       std::string(image == Image::Cubin ? "cubin" : "PTX") +
                       ") has no kernel 'strata_cuda_missing' "
                       "(cuModuleGetFunction failed with "
                       "CUDA_ERROR_NOT_FOUND"));
  }
}

TEST(CudaKernel, ParametersMustMatchTheStep) {
  REQUIRE_GPU();
  struct Case {
    std::string kernel;
    size_t inputs;
    std::string expected;
  };
  for (const Case &c : std::vector<Case>{
           // strata_cuda_add takes x, y and z.
           {"strata_cuda_add", 1,
            "kernel 'strata_cuda_add' takes 3 parameters, but the step passes "
            "1 inputs and 1 outputs (one device pointer each)"},
           {"strata_cuda_add", 3,
            "kernel 'strata_cuda_add' takes 3 parameters, but the step passes "
            "3 inputs and 1 outputs (one device pointer each)"},
           {"strata_cuda_scalar_param", 1,
            "parameter 1 of kernel 'strata_cuda_scalar_param' takes 4 bytes; "
            "the ABI passes only device pointers (8 bytes)"},
       }) {
    ModuleBuilder b;
    b.setTarget("cuda");
    uint32_t x = b.addInput("x", DType::F32, {256});
    uint32_t z = b.addArenaBuffer(DType::F32, {256});
    b.addStep(gpuStep(c.kernel, std::vector<uint32_t>(c.inputs, x), {z},
                      {1, 1, 1}, {256, 1, 1}, "Add_0"));
    b.addOutput("z", z);
    setImage(b, Image::Cubin);
    EXPECT_THAT(
        errorOf([&] {
          Session session(Module::loadFromMemory(b.finish(), "params.strata"));
        }),
        HasSubstr("strata module 'params.strata': step 0 ('" + c.kernel +
                  "', from ONNX node 'Add_0'): " + c.expected));
  }
}

namespace {
/// out = each 256-float chunk of `in` reversed, through `shared` bytes of
/// dynamic shared memory; sizes[b] = the dynamic shared memory block b got.
ModuleBuilder reverseBuilder(int64_t blocks, std::vector<int64_t> block,
                             int64_t shared) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t in = b.addInput("in", DType::F32, {blocks * 256});
  uint32_t out = b.addArenaBuffer(DType::F32, {blocks * 256});
  uint32_t sizes = b.addArenaBuffer(DType::U32, {blocks});
  Step step = gpuStep("strata_cuda_reverse_blocks", {in}, {out, sizes},
                      {blocks, 1, 1}, std::move(block), "Reverse_0");
  step.launch->sharedBytes = static_cast<uint32_t>(shared);
  b.addStep(step);
  b.addOutput("out", out);
  b.addOutput("sizes", sizes);
  setImage(b, Image::Cubin);
  return b;
}
} // namespace

TEST(CudaKernel, DynamicSharedMemoryBeyond48KiB) {
  REQUIRE_GPU();
  const int64_t blocks = 40;
  // 100 KiB: more than a kernel gets without opting in (48 KiB).
  const int64_t shared = 100 * 1024;
  Session session(Module::loadFromMemory(
      reverseBuilder(blocks, {256, 1, 1}, shared).finish(), "smem.strata"));
  std::mt19937 rng(6);
  for (int run = 0; run < 2; ++run) {
    std::vector<float> in = randomValues(rng, blocks * 256);
    session.setInput("in",
                     Tensor::fromValues<float>(DType::F32, {blocks * 256}, in));
    session.run();
    std::vector<float> out = values(session.output("out"));
    ASSERT_EQ(out.size(), in.size());
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t t = 0; t < 256; ++t)
        ASSERT_EQ(out[b * 256 + t], in[b * 256 + 255 - t])
            << "block " << b << " thread " << t;
    const Tensor &sizes = session.output("sizes");
    for (int64_t b = 0; b < blocks; ++b)
      EXPECT_EQ(sizes.data<uint32_t>()[b], static_cast<uint32_t>(shared));
  }
  EXPECT_EQ(cudaSessionInfo(session).graphRuns, 2u);
}

// A step with a tensor map: the executor encodes it over the step's input
// and passes it after the output; the kernel copies the input box by box
// with TMA, so the output equals the input only if the map's address,
// extents, stride and box are right.
TEST(CudaKernel, TensorMapsDescribeTheStepsOperands) {
  REQUIRE_GPU();
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t in = b.addInput("in", DType::F32, {64, 64});
  uint32_t out = b.addArenaBuffer(DType::F32, {64, 64});
  Step step = gpuStep("strata_cuda_tma_copy", {in}, {out}, {2, 4, 1},
                      {128, 1, 1}, "Identity_0");
  step.launch->tensorMaps = {0, 64, 64, 256, 32, 16, 0};
  b.addStep(step);
  b.addOutput("out", out);
  setImage(b, Image::Cubin);
  Session session(Module::loadFromMemory(b.finish(), "tma.strata"));
  std::mt19937 rng(7);
  for (int run = 0; run < 2; ++run) {
    std::vector<float> x = randomValues(rng, 64 * 64);
    session.setInput("in", Tensor::fromValues<float>(DType::F32, {64, 64}, x));
    session.run();
    std::vector<float> y = values(session.output("out"));
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(y[i], x[i]) << "element " << i;
  }
  EXPECT_EQ(cudaSessionInfo(session).graphRuns, 2u);
}

TEST(CudaKernel, LaunchesBeyondTheGpuAreRefused) {
  REQUIRE_GPU();
  struct Case {
    std::vector<int64_t> block;
    int64_t shared;
    std::string expected;
  };
  for (const Case &c : std::vector<Case>{
           {{2048, 1, 1}, 1024, "block x = 2048 exceeds the GPU's 1024"},
           {{32, 32, 2},
            1024,
            "a block of 32x32x2 = 2048 threads; kernel "
            "'strata_cuda_reverse_blocks' allows at most "},
           {{256, 1, 1},
            1 << 20,
            "bytes of dynamic shared memory; a block may have at most "},
       }) {
    std::string msg = errorOf([&] {
      Session session(Module::loadFromMemory(
          reverseBuilder(4, c.block, c.shared).finish(), "limits.strata"));
    });
    EXPECT_THAT(msg, HasSubstr("strata module 'limits.strata': step 0 "
                               "('strata_cuda_reverse_blocks', from ONNX node "
                               "'Reverse_0'): "));
    EXPECT_THAT(msg, HasSubstr(c.expected));
  }
}
