//===- GeneratedKernelTest.cpp - Tests of loading generated code -*- C++
//-*-===//
//
// Runs Kernel steps from a real shared object (test/kernels/TestKernels.c,
// built with the tests and embedded in modules with ModuleBuilder::setCode):
// values, the split of `parallel` ranges over the pool, several kernels and
// sessions sharing one loaded object, and the errors for code that is not a
// loadable shared object and for symbols it does not export.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <map>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

std::vector<uint8_t> readCode(const char *path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << "cannot read " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

std::vector<uint8_t> testKernels() { return readCode(STRATA_RT_TEST_KERNELS); }

Step kernelStep(std::string name, std::vector<uint32_t> inputs,
                std::vector<uint32_t> outputs, int64_t parallel = 0) {
  Step step{StepKind::Kernel,
            std::move(name),
            std::move(inputs),
            std::move(outputs),
            {},
            {"Fused_0"}};
  if (parallel)
    step.attributes.push_back({"parallel", {parallel}, {}, ""});
  return step;
}

/// z = (x + y) then w = 3 * z, over x, y: f32[rows, 16].
std::shared_ptr<const Module> addScaleModule(int64_t rows,
                                             std::vector<uint8_t> code) {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {rows, 16});
  uint32_t y = b.addInput("y", DType::F32, {rows, 16});
  uint32_t z = b.addArenaBuffer(DType::F32, {rows, 16});
  uint32_t w = b.addArenaBuffer(DType::F32, {rows, 16});
  b.addStep(kernelStep("strata_test_add", {x, y}, {z}, rows));
  b.addStep(kernelStep("strata_test_scale", {z}, {w}, rows * 16));
  b.addOutput("z", z);
  b.addOutput("w", w);
  b.setCode(std::move(code));
  return Module::loadFromMemory(b.finish(), "gen.strata");
}

/// A module with one Kernel step `name` writing an i64[n] output.
std::shared_ptr<const Module> oneStepModule(const std::string &name, int64_t n,
                                            int64_t parallel,
                                            std::vector<uint8_t> code) {
  ModuleBuilder b;
  uint32_t out = b.addArenaBuffer(DType::I64, {n});
  b.addStep(kernelStep(name, {}, {out}, parallel));
  b.addOutput("out", out);
  b.setCode(std::move(code));
  return Module::loadFromMemory(b.finish(), name + ".strata");
}

} // namespace

TEST(GeneratedKernel, RunsAddAndScale) {
  const int64_t rows = 37;
  auto module = addScaleModule(rows, testKernels());
  std::vector<float> xs(rows * 16), ys(rows * 16);
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = 0.5f + static_cast<float>(i);
    ys[i] = 2.f * static_cast<float>(i % 7);
  }
  for (unsigned threads : {1u, 3u, 8u}) {
    Session session(module, {threads});
    session.setInput("x", Tensor::fromValues(DType::F32, {rows, 16}, xs));
    session.setInput("y", Tensor::fromValues(DType::F32, {rows, 16}, ys));
    session.run();
    const float *z = session.output("z").data<float>();
    const float *w = session.output("w").data<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
      ASSERT_EQ(z[i], xs[i] + ys[i]) << "at " << i << ", threads " << threads;
      ASSERT_NEAR(w[i], 3.f * (xs[i] + ys[i]), 1e-4f * w[i]) << "at " << i;
    }
  }
}

TEST(GeneratedKernel, ParallelRangeIsSplitOverThePool) {
  const int64_t n = 10;
  auto module = oneStepModule("strata_test_chunks", n, n, testKernels());
  for (unsigned threads : {1u, 2u, 4u, 16u}) {
    Session session(module, {threads});
    session.run();
    const int64_t *out = session.output("out").data<int64_t>();
    // Rebuild the chunks: each index must lie in the chunk that wrote it,
    // and the chunks must tile [0, n).
    std::map<int64_t, int64_t> chunks;
    for (int64_t i = 0; i < n; ++i) {
      int64_t begin = out[i] / 1000, end = out[i] % 1000;
      ASSERT_LE(begin, i);
      ASSERT_LT(i, end);
      chunks[begin] = end;
    }
    int64_t covered = 0;
    for (auto [begin, end] : chunks) {
      EXPECT_EQ(begin, covered);
      covered = end;
    }
    EXPECT_EQ(covered, n);
    // One chunk per thread (4 threads: [0,3) [3,6) [6,9) [9,10)).
    size_t expected = std::min<size_t>(threads, n);
    EXPECT_EQ(chunks.size(), expected) << "threads " << threads;
  }
}

TEST(GeneratedKernel, NoParallelAttributeMeansOneCall) {
  auto module = oneStepModule("strata_test_range", 2, 0, testKernels());
  Session session(module, {4});
  session.run();
  const int64_t *out = session.output("out").data<int64_t>();
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 1);
}

TEST(GeneratedKernel, SessionsShareTheLoadedCode) {
  auto module = addScaleModule(2, testKernels());
  auto first = std::make_unique<Session>(module, SessionOptions{2});
  Session second(module);
  first.reset(); // the code stays loaded for the second session
  Tensor ones =
      Tensor::fromValues(DType::F32, {2, 16}, std::vector<float>(32, 1.f));
  second.setInput("x", ones);
  second.setInput("y", ones);
  second.run();
  EXPECT_EQ(second.output("z").data<float>()[31], 2.f);
}

TEST(GeneratedKernel, GarbageCodeIsAnError) {
  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i)
    garbage[i] = static_cast<uint8_t>(i * 131 + 7);
  std::string msg = errorOf([&] { Session s(addScaleModule(1, garbage)); });
  EXPECT_THAT(msg, HasSubstr("'gen.strata'"));
  EXPECT_THAT(msg, HasSubstr("its code is not an ELF file (4096 bytes)"));

  EXPECT_THAT(errorOf([&] { Session s(addScaleModule(1, {})); }),
              HasSubstr("has generated-kernel steps but no code"));
}

TEST(GeneratedKernel, WrongElfKindsAreErrors) {
  std::vector<uint8_t> code = testKernels();
  ASSERT_GE(code.size(), sizeof(Elf64_Ehdr));
  auto patched = [&](auto patch) {
    std::vector<uint8_t> bytes = code;
    Elf64_Ehdr header;
    std::memcpy(&header, bytes.data(), sizeof(header));
    patch(header);
    std::memcpy(bytes.data(), &header, sizeof(header));
    return bytes;
  };
  EXPECT_THAT(errorOf([&] {
                Session s(addScaleModule(1, patched([](Elf64_Ehdr &h) {
                                           h.e_machine =
                                               h.e_machine == EM_AARCH64
                                                   ? EM_X86_64
                                                   : EM_AARCH64;
                                         })));
              }),
              HasSubstr("is ELF code for machine"));
  EXPECT_THAT(errorOf([&] {
                Session s(addScaleModule(
                    1, patched([](Elf64_Ehdr &h) { h.e_type = ET_REL; })));
              }),
              HasSubstr("not a shared object (ET_DYN)"));
  EXPECT_THAT(errorOf([&] {
                Session s(addScaleModule(1, patched([](Elf64_Ehdr &h) {
                                           h.e_ident[EI_CLASS] = ELFCLASS32;
                                         })));
              }),
              HasSubstr("is not a 64-bit ELF file"));
  // A header that passes the checks over a body the loader cannot map: the
  // message carries dlerror()'s text.
  std::vector<uint8_t> truncated(code.begin(), code.begin() + 256);
  std::string msg = errorOf([&] { Session s(addScaleModule(1, truncated)); });
  EXPECT_THAT(msg, HasSubstr("'gen.strata': cannot load its code as a shared "
                             "object: "));
  EXPECT_GT(msg.size(),
            std::string("cannot load its code as a shared object: ").size() +
                20);
}

TEST(GeneratedKernel, MissingSymbolsAreErrors) {
  std::string msg = errorOf([&] {
    Session s(oneStepModule("strata_test_nothing", 2, 1, testKernels()));
  });
  EXPECT_THAT(msg, HasSubstr("'strata_test_nothing.strata'"));
  EXPECT_THAT(msg, HasSubstr("step 0 ('strata_test_nothing', from ONNX node "
                             "'Fused_0') is a generated kernel, but the code "
                             "exports no symbol 'strata_test_nothing'"));
  EXPECT_THAT(errorOf([&] {
                Session s(
                    oneStepModule("strata_test_hidden", 2, 1, testKernels()));
              }),
              HasSubstr("exports no symbol 'strata_test_hidden'"));
  // Found through the object's dependencies (libc), not in the object.
  EXPECT_THAT(
      errorOf([&] { Session s(oneStepModule("memset", 2, 1, testKernels())); }),
      HasSubstr("only a library it depends on does"));
  EXPECT_THAT(errorOf([&] {
                Session s(
                    oneStepModule("strata_test_data", 2, 1, testKernels()));
              }),
              HasSubstr("symbol 'strata_test_data' is not a function"));
}

TEST(GeneratedKernel, BadParallelAttributeIsAnError) {
  ModuleBuilder b;
  uint32_t out = b.addArenaBuffer(DType::I64, {2});
  Step step = kernelStep("strata_test_range", {}, {out});
  step.attributes.push_back({"parallel", {0}, {}, ""});
  b.addStep(step);
  b.setCode(testKernels());
  auto m = Module::loadFromMemory(b.finish(), "par.strata");
  EXPECT_THAT(errorOf([&] { Session s(m); }),
              HasSubstr("attribute 'parallel' must be one integer >= 1"));
}

TEST(GeneratedKernel, PlanMustFitTheAbi) {
  // A dynamic input cannot feed code compiled for static shapes.
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {-1});
  uint32_t y = b.addArenaBuffer(DType::F32, {4});
  b.addStep(kernelStep("strata_test_scale", {x}, {y}, 4));
  b.setCode(testKernels());
  EXPECT_THAT(errorOf([&] {
                Session s(Module::loadFromMemory(b.finish(), "dyn.strata"));
              }),
              HasSubstr("is a generated kernel for static shapes, but buffer "
                        "0 has shape [?]"));
  // Arena buffers must be 64-byte aligned.
  ModuleBuilder c;
  uint32_t in = c.addInput("x", DType::F32, {4});
  uint32_t out = c.addArenaBuffer(DType::F32, {4}, /*offset=*/16, 16);
  c.addStep(kernelStep("strata_test_scale", {in}, {out}, 4));
  c.setCode(testKernels());
  EXPECT_THAT(errorOf([&] {
                Session s(Module::loadFromMemory(c.finish(), "align.strata"));
              }),
              HasSubstr("needs 64-byte aligned buffers, but buffer 1 is at "
                        "arena offset 16"));
}

// Each module's code is its own object, also when several are loaded at
// once: the loader once opened every object through /proc/self/fd/N and
// closed N, so the next module's memory file got the same path and the
// dynamic loader, which matches loaded objects by name, handed it the first
// module's code ("exports no symbol" at best, the wrong kernel at worst).
TEST(GeneratedKernel, ModulesLoadedTogetherRunTheirOwnCode) {
  auto first = oneStepModule("strata_test_range", 2, 0, testKernels());
  auto second = oneStepModule("strata_other_fill", 4, 4,
                              readCode(STRATA_RT_TEST_OTHER_KERNELS));
  for (int round = 0; round < 3; ++round) {
    Session a(first);
    Session b(second);
    Session c(oneStepModule("strata_test_chunks", 3, 3, testKernels()));
    a.run();
    b.run();
    c.run();
    const int64_t *range = a.output("out").data<int64_t>();
    EXPECT_EQ(range[0], 0);
    EXPECT_EQ(range[1], 1);
    const int64_t *fill = b.output("out").data<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(fill, fill + 4),
              (std::vector<int64_t>{7000, 7001, 7002, 7003}));
  }
}
