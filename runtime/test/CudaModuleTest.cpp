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
            {{"grid", {4, 1, 1}, {}, ""}, {"block", {64, 1, 1}, {}, ""}},
            {"Add_0"}};
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
  EXPECT_EQ(m->steps()[0].attributes.size(), 2u);
}

TEST(CudaModule, CpuModulesHaveNoGpuCode) {
  auto m = Module::loadFromMemory(addModuleBytes(), "add.strata");
  EXPECT_EQ(m->gpuCubin(), nullptr);
  EXPECT_EQ(m->gpuCubinSize(), 0u);
  EXPECT_EQ(m->gpuPtx(), nullptr);
  EXPECT_EQ(m->gpuArch(), "");
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

TEST_F(CudaPlan, LaunchAttributesAreRequired) {
  for (const char *key : {"grid", "block"}) {
    EXPECT_THAT(kernelStepError(DType::F32, 4,
                                [&](Step &step) {
                                  step.attributes.erase(
                                      step.attributes.begin() +
                                      (std::string(key) == "grid" ? 0 : 1));
                                }),
                HasSubstr("step 0 ('k', from ONNX node 'Add_0') is a GPU "
                          "kernel without the launch attribute '" +
                          std::string(key) + "'"));
  }
}

TEST_F(CudaPlan, LaunchAttributesAreChecked) {
  std::vector<std::pair<Attribute, std::string>> cases = {
      {{"grid", {4, 1}, {}, ""}, "attribute 'grid' must be three integers"},
      {{"grid", {4, 0, 1}, {}, ""}, "attribute 'grid' must be three integers"},
      {{"block", {}, {64, 1, 1}, ""},
       "attribute 'block' must be three integers"},
      {{"block", {1LL << 33, 1, 1}, {}, ""},
       "attribute 'block' must be three integers"},
      {{"shared_bytes", {-1}, {}, ""},
       "attribute 'shared_bytes' must be one integer >= 0"},
      {{"shared_bytes", {1, 2}, {}, ""},
       "attribute 'shared_bytes' must be one integer >= 0"},
      {{"grid_dependency", {2}, {}, ""},
       "attribute 'grid_dependency' must be the integer 1"},
      {{"grid_dependency", {}, {}, "yes"},
       "attribute 'grid_dependency' must be the integer 1"},
      {{"ptx_grid", {4, 1}, {}, ""},
       "attribute 'ptx_grid' must be three integers"},
      {{"ptx_block", {0, 1, 1}, {}, ""},
       "attribute 'ptx_block' must be three integers"},
      {{"ptx_shared_bytes", {-1}, {}, ""},
       "attribute 'ptx_shared_bytes' must be one integer >= 0"},
      {{"ptx_kernel", {1}, {}, ""},
       "attribute 'ptx_kernel' must be a kernel's name"},
  };
  for (const auto &[attribute, expected] : cases) {
    const auto &attr = attribute; // the lambda captures a variable
    EXPECT_THAT(
        kernelStepError(DType::F32, 4,
                        [&](Step &step) {
                          if (attr.key == "grid" || attr.key == "block")
                            step.attributes[attr.key == "grid" ? 0 : 1] = attr;
                          else
                            step.attributes.push_back(attr);
                        }),
        HasSubstr(expected))
        << attr.key;
  }
}

// The portable PTX's own launch (docs/runtime.md): all four attributes or
// none, so that a step never launches the PTX's kernel in the cubin's grid.
TEST_F(CudaPlan, PtxLaunchesAreWhole) {
  std::vector<Attribute> all = {{"ptx_kernel", {}, {}, "k_ptx"},
                                {"ptx_grid", {2, 1, 1}, {}, ""},
                                {"ptx_block", {32, 1, 1}, {}, ""},
                                {"ptx_shared_bytes", {0}, {}, ""}};
  for (size_t left = 0; left < all.size(); ++left)
    EXPECT_THAT(kernelStepError(DType::F32, 4,
                                [&](Step &step) {
                                  for (size_t i = 0; i < all.size(); ++i)
                                    if (i != left)
                                      step.attributes.push_back(all[i]);
                                }),
                HasSubstr("the portable PTX's own launch needs all four of "
                          "the attributes 'ptx_kernel', 'ptx_grid', "
                          "'ptx_block' and 'ptx_shared_bytes'"))
        << "without " << all[left].key;
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
  std::vector<std::pair<Attribute, std::string>> cases = {
      {{"tensor_maps", {0, 16, 4, 64, 16, 4}, {}, ""},
       "attribute 'tensor_maps' must be 7 integers per map"},
      {{"tensor_maps", edit(0, 3), {}, ""},
       "attribute 'tensor_maps' (map 0) names operand 3; the step has 1"},
      {{"tensor_maps", edit(2, 5), {}, ""},
       "(map 0) describes 5 rows of 16 elements 64 bytes apart; buffer 0 "
       "holds 256 bytes"},
      {{"tensor_maps", edit(3, 40), {}, ""},
       "rows must be 16-byte multiples apart"},
      {{"tensor_maps", edit(4, 32), {}, ""},
       "(map 0) has boxes of 32x4 and a swizzle of 64 bytes"},
      {{"tensor_maps", edit(5, 300), {}, ""}, "boxes are 1 to 256 a side"},
      {{"tensor_maps", edit(6, 48), {}, ""},
       "the swizzle 0, 32, 64 or 128 bytes"},
      {{"persistent", {0}, {}, ""},
       "attribute 'persistent' must be one integer from 1 to 64"},
  };
  for (const auto &[attribute, expected] : cases) {
    const auto &attr = attribute; // the lambda captures a variable
    EXPECT_THAT(
        kernelStepError(DType::F32, 64,
                        [&](Step &step) { step.attributes.push_back(attr); }),
        HasSubstr(expected))
        << expected;
  }
  // Maps over other element types are refused.
  EXPECT_THAT(kernelStepError(
                  DType::I32, 64,
                  [&](Step &step) {
                    step.attributes.push_back({"tensor_maps", valid, {}, ""});
                  }),
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
