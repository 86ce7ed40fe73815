//===- CudaModuleTest.cpp - CUDA modules without a GPU ----------*- C++ -*-===//
//
// What a CUDA module is before it reaches a GPU: the GPU fields of the module
// file (format 1.1) written by ModuleBuilder and checked by Module::load,
// truncated and corrupted CUDA modules (an Error, never a crash), and the
// plan checks a CUDA session makes before it touches the driver, so that
// they hold on every machine. Running kernels: CudaKernelTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "strata/Runtime/Cuda.h"

#include <algorithm>
#include <cstring>
#include <functional>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

/// Stands for a cubin: the loader does not look inside (the driver does).
std::vector<uint8_t> fakeCubin() {
  std::vector<uint8_t> bytes(300);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  return bytes;
}

const char *const kPtx = ".version 9.0\n.target sm_90a\n.address_size 64\n";

Step gpuStep(std::string name, std::vector<uint32_t> inputs,
             std::vector<uint32_t> outputs) {
  Step step{StepKind::Kernel,
            std::move(name),
            std::move(inputs),
            std::move(outputs),
            {},
            {"Add_0"}};
  step.launch = gpuLaunch({4, 1, 1}, {64, 1, 1});
  return step;
}

/// z = add(x, y) over f32[256] as a CUDA module; `edit` changes the step.
ModuleBuilder cudaAddBuilder() {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {256});
  uint32_t y = b.addInput("y", DType::F32, {256});
  uint32_t z = b.addArenaBuffer(DType::F32, {256});
  b.addStep(gpuStep("strata_cuda_add", {x, y}, {z}));
  b.addOutput("z", z);
  b.setGpuCubin(fakeCubin());
  b.setGpuPtx(kPtx);
  b.setGpuArch("sm_90a");
  return b;
}

/// The error of creating a session for the module `b` describes, or of
/// loading it.
std::string sessionError(const ModuleBuilder &b,
                         const std::string &name = "cuda.strata") {
  return errorOf(
      [&] { Session session(Module::loadFromMemory(b.finish(), name)); });
}

/// The session error of a CUDA module whose one kernel step 'k' writes a
/// buffer of `dtype` [elements], after `edit` changes the step.
std::string kernelStepError(DType dtype, int64_t elements,
                            const std::function<void(Step &)> &edit) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t z = b.addArenaBuffer(dtype, {elements});
  Step step = gpuStep("k", {}, {z});
  edit(step);
  b.addStep(step);
  b.setGpuPtx(kPtx);
  return sessionError(b);
}

} // namespace

TEST(CudaModule, GpuFieldsRoundTrip) {
  auto m = Module::loadFromMemory(cudaAddBuilder().finish(), "cuda.strata");
  EXPECT_EQ(m->target(), "cuda");
  EXPECT_EQ(m->versionMinor(), kFormatMinor);
  std::vector<uint8_t> cubin = fakeCubin();
  ASSERT_NE(m->gpuCubin(), nullptr);
  ASSERT_EQ(m->gpuCubinSize(), cubin.size());
  EXPECT_EQ(std::memcmp(m->gpuCubin(), cubin.data(), cubin.size()), 0);
  // In place in the module, aligned like the CPU code.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m->gpuCubin()) % 64, 0u);
  ASSERT_NE(m->gpuPtx(), nullptr);
  EXPECT_EQ(std::string(m->gpuPtx()), kPtx);
  EXPECT_EQ(m->gpuPtxSize(), std::strlen(kPtx));
  EXPECT_EQ(m->gpuArch(), "sm_90a");
  ASSERT_EQ(m->steps().size(), 1u);
  ASSERT_TRUE(m->steps()[0].launch);
  EXPECT_EQ(m->steps()[0].launch->grid[0], 4u);
  EXPECT_EQ(m->steps()[0].launch->block[0], 64u);
}

TEST(CudaModule, CpuModulesHaveNoGpuCode) {
  auto m = Module::loadFromMemory(addModuleBytes(), "add.strata");
  EXPECT_EQ(m->gpuCubin(), nullptr);
  EXPECT_EQ(m->gpuCubinSize(), 0u);
  EXPECT_EQ(m->gpuPtx(), nullptr);
  EXPECT_EQ(m->gpuArch(), "");
}

// Every field of a step's launches (format 1.6) reads back as written.
TEST(CudaModule, LaunchesRoundTrip) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t z = b.addArenaBuffer(DType::F32, {64});
  Step step = gpuStep("k", {}, {z});
  step.launch = gpuLaunch({7, 2, 3}, {128, 2, 1}, 196608);
  step.launch->persistent = 2;
  step.launch->waitsForGrids = true;
  step.launch->tensorMaps = {0, 16, 4, 64, 16, 4, 64};
  step.ptxKernel = "k_ptx";
  step.ptxLaunch = gpuLaunch({14, 1, 1}, {256, 1, 1}, 1024);
  b.addStep(step);
  b.setGpuPtx(kPtx);
  auto m = Module::loadFromMemory(b.finish(), "launch.strata");
  const Step &read = m->steps().at(0);
  ASSERT_TRUE(read.launch && read.ptxLaunch);
  auto same = [](const KernelLaunch &x, const KernelLaunch &y) {
    return std::equal(x.grid, x.grid + 3, y.grid) &&
           std::equal(x.block, x.block + 3, y.block) &&
           x.sharedBytes == y.sharedBytes && x.persistent == y.persistent &&
           x.waitsForGrids == y.waitsForGrids && x.tensorMaps == y.tensorMaps;
  };
  EXPECT_TRUE(same(*read.launch, *step.launch));
  EXPECT_TRUE(same(*read.ptxLaunch, *step.ptxLaunch));
  EXPECT_EQ(read.ptxKernel, "k_ptx");
  EXPECT_TRUE(read.attributes.empty());
}

TEST(CudaModule, FormatOneZeroModulesStillLoad) {
  // A 1.0 runtime wrote no GPU fields; such files load unchanged.
  ModuleBuilder b = addModuleBuilder();
  b.setVersion(1, 0);
  auto m = Module::loadFromMemory(b.finish(), "old.strata");
  EXPECT_EQ(m->versionMinor(), 0);
  EXPECT_EQ(m->gpuPtx(), nullptr);
}

TEST(CudaModule, PtxWithNulIsRefused) {
  ModuleBuilder b = cudaAddBuilder();
  std::string ptx = kPtx;
  ptx[5] = '\0';
  b.setGpuPtx(ptx);
  EXPECT_THAT(
      errorOf([&] { Module::loadFromMemory(b.finish(), "nul.strata"); }),
      HasSubstr("'nul.strata': the GPU code's PTX contains a NUL byte "
                "at offset 5 of " +
                std::to_string(ptx.size())));
}

TEST(CudaModule, ArchitectureNamesAreChecked) {
  for (const char *good : {"sm_90", "sm_90a", "sm_100f", "sm_80"}) {
    ModuleBuilder b = cudaAddBuilder();
    b.setGpuArch(good);
    EXPECT_EQ(Module::loadFromMemory(b.finish(), "arch.strata")->gpuArch(),
              good);
  }
  for (const char *bad : {"90a", "sm_", "sm_a", "sm_9x0", "sm_90ab", "SM_90",
                          "sm_90A", "compute_90a"}) {
    ModuleBuilder b = cudaAddBuilder();
    b.setGpuArch(bad);
    EXPECT_THAT(
        errorOf([&] { Module::loadFromMemory(b.finish(), "arch.strata"); }),
        HasSubstr("gpu_arch '" + std::string(bad) +
                  "' is not a GPU architecture"))
        << bad;
  }
}

TEST(CudaModule, TruncatedModulesAreErrors) {
  std::vector<uint8_t> bytes = cudaAddBuilder().finish();
  // Every cut, through the cubin and the PTX too: an Error each time.
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + size);
    std::string msg =
        errorOf([&] { Module::loadFromMemory(cut, "cut.strata"); });
    EXPECT_THAT(msg, HasSubstr("'cut.strata'")) << size;
  }
}

TEST(CudaModule, CorruptedModulesNeverCrash) {
  std::vector<uint8_t> bytes = cudaAddBuilder().finish();
  // Flipping any byte either leaves a valid module or gives an Error; under
  // the sanitizers this also proves nothing unverified is read. Each flip
  // is resealed so that it reaches the checks after the checksum's.
  size_t loaded = 0, refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = bytes;
      bad[i] ^= flip;
      detail::sealModule(bad);
      try {
        auto m = Module::loadFromMemory(std::move(bad), "flip.strata");
        if (m->gpuPtx())
          EXPECT_EQ(std::strlen(m->gpuPtx()), m->gpuPtxSize());
        ++loaded;
      } catch (const Error &) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(loaded, 0u); // Flips inside the cubin's bytes are not noticed.
}

//===----------------------------------------------------------------------===//
// Plan checks a CUDA session makes before it opens the driver
//===----------------------------------------------------------------------===//

class CudaPlan : public ::testing::Test {
protected:
  void SetUp() override {
    if (!cudaBackendBuilt())
      GTEST_SKIP() << "this runtime was built without the CUDA executor";
  }
};

TEST(CudaModule, UnbuiltExecutorSaysSo) {
  if (cudaBackendBuilt())
    GTEST_SKIP() << "this runtime has the CUDA executor";
  std::string why;
  EXPECT_FALSE(cudaAvailable(&why));
  EXPECT_THAT(why, HasSubstr("built without its CUDA executor"));
  EXPECT_THAT(sessionError(cudaAddBuilder()),
              HasSubstr("strata module 'cuda.strata' targets 'cuda', but this "
                        "strata runtime was built without its CUDA executor"));
}

TEST_F(CudaPlan, LibraryStepsAreRefused) {
  ModuleBuilder b = addModuleBuilder();
  b.setTarget("cuda");
  EXPECT_THAT(sessionError(b, "gpu.strata"),
              HasSubstr("strata module 'gpu.strata': step 0 ('add.f32', from "
                        "ONNX node 'Add_0') calls library kernel 'add.f32', "
                        "but the module targets 'cuda'"));
}

TEST_F(CudaPlan, GpuStepsDoNotReadWhatHostStepsWrite) {
  // Host steps run on the CPU between the GPU's steps, and what they write
  // stays there: a GPU kernel reading it is named (a host step before GPU
  // work is fine: FakeCudaDriver.HostStepsRunBetweenGpuSteps).
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {256});
  uint32_t h = b.addArenaBuffer(DType::F32, {256});
  uint32_t z = b.addArenaBuffer(DType::F32, {256});
  b.addStep({StepKind::Library, "host.relu", {x}, {h}, {}, {"R_0"}});
  b.addStep(gpuStep("strata_cuda_add", {h, h}, {z}));
  b.addOutput("z", z);
  b.setGpuCubin(fakeCubin());
  b.setGpuPtx(kPtx);
  b.setGpuArch("sm_90a");
  EXPECT_THAT(sessionError(b),
              HasSubstr("runs on the GPU, but buffer 1 is written by a host "
                        "step and lives on the host"));
  // A model output on a host buffer that no step writes.
  ModuleBuilder c = cudaAddBuilder();
  c.addOutput("h", c.addHostBuffer(DType::F32, {2}));
  EXPECT_THAT(sessionError(c),
              HasSubstr("output 'h' is host buffer 3 (f32[2]), which no host "
                        "step writes"));
  // A GPU library step may not use a host buffer either (the loader
  // refuses generated kernels on host buffers of numbers).
  ModuleBuilder d;
  d.setTarget("cuda");
  uint32_t hb = d.addHostBuffer(DType::F32, {4, 4});
  uint32_t o = d.addArenaBuffer(DType::F32, {4, 4});
  d.addStep({StepKind::Library, "cublaslt.matmul", {hb, hb}, {o}, {}, {"MM"}});
  EXPECT_THAT(sessionError(d),
              HasSubstr("step 0 ('cublaslt.matmul', from ONNX node 'MM') runs "
                        "on the GPU, but buffer 0 is a host buffer "
                        "(f32[4, 4]), which only host kernels use"));
}

// Format 1.6: every generated kernel of a GPU module has a typed launch,
// and nothing else has one; older GPU modules are refused by the loader.
TEST_F(CudaPlan, LaunchesAreRequired) {
  EXPECT_THAT(
      kernelStepError(DType::F32, 4, [](Step &step) { step.launch.reset(); }),
      HasSubstr("step 0 ('k', from ONNX node 'Add_0') is a GPU kernel "
                "without a launch"));
  ModuleBuilder old = cudaAddBuilder();
  old.setVersion(1, 5);
  EXPECT_THAT(sessionError(old, "old.strata"),
              HasSubstr("'old.strata': format 1.5 records a GPU kernel's "
                        "launch as step attributes, which this runtime "
                        "(format 1.6) no longer reads: compile the model "
                        "again with this strata"));
  ModuleBuilder library;
  library.setTarget("cuda");
  uint32_t a = library.addInput("a", DType::F32, {4, 4});
  uint32_t o = library.addArenaBuffer(DType::F32, {4, 4});
  Step call{StepKind::Library, "cublaslt.matmul", {a, a}, {o}, {}, {"MM"}};
  call.launch = gpuLaunch({1, 1, 1}, {32, 1, 1});
  library.addStep(call);
  EXPECT_THAT(sessionError(library),
              HasSubstr("step 0 ('cublaslt.matmul', from ONNX node 'MM') has "
                        "a GPU launch, but it is a library call"));
  ModuleBuilder cpu = cudaAddBuilder();
  cpu.setTarget("cpu");
  EXPECT_THAT(sessionError(cpu),
              HasSubstr("has a GPU launch, but it is a generated kernel of a "
                        "'cpu' module"));
}

TEST_F(CudaPlan, LaunchesAreChecked) {
  std::vector<std::pair<std::function<void(KernelLaunch &)>, std::string>>
      cases = {
          {[](KernelLaunch &l) { l.grid[1] = 0; },
           "'s launch has the grid [4, 0, 1]; it must be three extents >= 1 "
           "(x, y, z)"},
          {[](KernelLaunch &l) { l.block[0] = 0; },
           "'s launch has the block [0, 1, 1]"},
          {[](KernelLaunch &l) { l.persistent = 65; },
           "'s launch is persistent with 65 blocks per SM; at most 64 are "
           "allowed"},
          {[](KernelLaunch &l) { l.tensorMaps = {0, 16, 4, 64, 16, 4}; },
           "'s launch has 6 tensor-map numbers; each map has 7"},
      };
  for (const auto &[change, expected] : cases) {
    const auto &edit = change; // the lambda captures a variable
    EXPECT_THAT(
        kernelStepError(DType::F32, 4, [&](Step &step) { edit(*step.launch); }),
        HasSubstr(expected))
        << expected;
    EXPECT_THAT(kernelStepError(DType::F32, 4,
                                [&](Step &step) {
                                  step.ptxKernel = "k_ptx";
                                  step.ptxLaunch = *step.launch;
                                  edit(*step.ptxLaunch);
                                }),
                HasSubstr("'s portable PTX launch" +
                          expected.substr(expected.find(" ", 3))))
        << "ptx: " << expected;
  }
}

// The portable PTX's own kernel and launch: both or neither, so that a step
// never launches the PTX's kernel in the cubin's grid.
TEST_F(CudaPlan, PtxLaunchesAreWhole) {
  EXPECT_THAT(kernelStepError(DType::F32, 4,
                              [](Step &step) { step.ptxKernel = "k_ptx"; }),
              HasSubstr("has the portable PTX's own kernel but not its "
                        "launch; a step has both or neither"));
  EXPECT_THAT(
      kernelStepError(DType::F32, 4,
                      [](Step &step) {
                        step.ptxLaunch = gpuLaunch({2, 1, 1}, {32, 1, 1});
                      }),
      HasSubstr("has the portable PTX's own launch but not its "
                "kernel; a step has both or neither"));
}

// TMA tensor maps (docs/runtime.md, "Tensor maps"): 7 integers a map,
// checked against the step's operands before any driver call.
TEST_F(CudaPlan, TensorMapsAreChecked) {
  // A valid map over z (f32[64], 256 bytes): 4 rows of 16 elements, 64
  // bytes apart, in boxes of 16 x 4 with a 64-byte swizzle.
  const std::vector<int64_t> valid = {0, 16, 4, 64, 16, 4, 64};
  auto edit = [&](size_t at, int64_t value) {
    std::vector<int64_t> v = valid;
    v[at] = value;
    return v;
  };
  std::vector<std::pair<std::vector<int64_t>, std::string>> cases = {
      {edit(0, 3), "launch's tensor_maps (map 0) names operand 3; the step "
                   "has 1"},
      {edit(2, 5), "(map 0) describes 5 rows of 16 elements 64 bytes apart; "
                   "buffer 0 holds 256 bytes"},
      {edit(3, 40), "rows must be 16-byte multiples apart"},
      {edit(4, 32), "(map 0) has boxes of 32x4 and a swizzle of 64 bytes"},
      {edit(5, 300), "boxes are 1 to 256 a side"},
      {edit(6, 48), "the swizzle 0, 32, 64 or 128 bytes"},
  };
  for (const auto &[numbers, expected] : cases) {
    const auto &maps = numbers; // the lambda captures a variable
    EXPECT_THAT(
        kernelStepError(DType::F32, 64,
                        [&](Step &step) { step.launch->tensorMaps = maps; }),
        HasSubstr(expected))
        << expected;
  }
  // Maps over other element types are refused.
  EXPECT_THAT(
      kernelStepError(DType::I32, 64,
                      [&](Step &step) { step.launch->tensorMaps = valid; }),
      HasSubstr("(map 0) is over buffer 0 of i32; tensor maps take "
                "bf16, f16 and f32"));
}

TEST_F(CudaPlan, DynamicInputsAreRefused) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {-1, 3});
  b.addOutput("x_out", x);
  EXPECT_THAT(sessionError(b),
              HasSubstr("input 'x' has the dynamic shape [?, 3]; the CUDA "
                        "executor runs static shapes only"));
}

TEST_F(CudaPlan, KernelStepsNeedGpuCode) {
  ModuleBuilder b = cudaAddBuilder();
  b.setGpuCubin({});
  b.setGpuPtx("");
  EXPECT_THAT(sessionError(b),
              HasSubstr("'cuda.strata': has generated-kernel steps but no GPU "
                        "code (the module has neither gpu_cubin nor "
                        "gpu_ptx)"));
}

TEST_F(CudaPlan, KernelBuffersMustBeAligned) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t z = b.addArenaBuffer(DType::F32, {4}, /*offset=*/16, /*size=*/16);
  b.addStep(gpuStep("k", {}, {z}));
  b.setGpuPtx(kPtx);
  EXPECT_THAT(sessionError(b),
              HasSubstr("needs 64-byte aligned buffers, but buffer 0 is at "
                        "arena offset 16"));
}

TEST_F(CudaPlan, InfoOfACpuSessionIsAnError) {
  Session session(Module::loadFromMemory(addModuleBytes(), "add.strata"));
  EXPECT_THAT(errorOf([&] { cudaSessionInfo(session); }),
              HasSubstr("'add.strata' targets 'cpu', not 'cuda'"));
  EXPECT_THAT(errorOf([&] { cudaTimeRuns(session, 2); }),
              HasSubstr("'add.strata' targets 'cpu', not 'cuda': its session "
                        "has no device runs to time"));
}
