//===- SessionTest.cpp - Tests of sessions and kernels ----------*- C++ -*-===//
//
// Runs the add module end to end, checks setInput's type and shape checks,
// the kernel registry (unknown names fail at session creation, naming the
// step), attributes as kernels see them, and the Tensor helpers.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include <cstring>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

std::shared_ptr<const Module> addModule() {
  return Module::loadFromMemory(addModuleBytes(), "add.strata");
}

Tensor xValues() {
  return Tensor::fromValues<float>(DType::F32, {2, 3},
                                   {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
}

} // namespace

TEST(Session, RunsAdd) {
  for (unsigned threads : {1u, 4u}) {
    Session session(addModule(), {threads});
    session.setInput("x", xValues());
    session.run();
    const Tensor &y = session.output("y");
    EXPECT_EQ(y.dtype(), DType::F32);
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
    std::vector<float> got(y.data<float>(), y.data<float>() + 6);
    EXPECT_EQ(got, (std::vector<float>{11, 22, 33, 44, 55, 66}));
    EXPECT_EQ(&session.output(0), &y);

    // A second run with other values reuses the arena.
    Tensor x = xValues();
    x.data<float>()[0] = -10.f;
    session.setInput(size_t(0), x);
    session.run();
    EXPECT_EQ(session.output("y").data<float>()[0], 0.f);
  }
}

TEST(Session, RunsAddLoadedFromFile) {
  std::string path =
      std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
      "/strata-rt-session-add.strata";
  addModuleBuilder().write(path);
  Session session(Module::load(path), {2});
  std::remove(path.c_str());
  session.setInput("x", xValues());
  session.run();
  EXPECT_EQ(session.output("y").data<float>()[5], 66.f);
}

TEST(Session, LargeAddUsesThePool) {
  const int64_t n = 100000; // several chunks of the kernel's grain
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {n});
  uint32_t y = b.addInput("y", DType::F32, {n});
  uint32_t z = b.addArenaBuffer(DType::F32, {n});
  uint32_t w = b.addArenaBuffer(DType::F32, {n});
  b.addStep({StepKind::Library, "add.f32", {x, y}, {z}, {}, {}});
  b.addStep({StepKind::Library, "copy", {z}, {w}, {}, {}});
  b.addOutput("w", w);
  Session session(Module::loadFromMemory(b.finish(), "big.strata"), {4});
  std::vector<float> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) {
    xs[i] = static_cast<float>(i);
    ys[i] = static_cast<float>(2 * i);
  }
  session.setInput("x", Tensor::fromValues(DType::F32, {n}, xs));
  session.setInput("y", Tensor::fromValues(DType::F32, {n}, ys));
  session.run();
  const float *out = session.output("w").data<float>();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], static_cast<float>(3 * i)) << "at " << i;
}

TEST(Session, SetInputWrongDType) {
  Session session(addModule());
  std::string msg = errorOf([&] {
    session.setInput("x", Tensor::zeros(DType::I32, {2, 3}));
  });
  EXPECT_THAT(msg, HasSubstr("'add.strata'"));
  EXPECT_THAT(msg,
              HasSubstr("input 'x' expects f32[2, 3], got i32[2, 3] (element "
                        "type differs)"));
}

TEST(Session, SetInputWrongShape) {
  Session session(addModule());
  EXPECT_THAT(errorOf([&] {
                session.setInput("x", Tensor::zeros(DType::F32, {2, 4}));
              }),
              HasSubstr("got f32[2, 4] (dimension 1 differs)"));
  EXPECT_THAT(
      errorOf([&] { session.setInput("x", Tensor::zeros(DType::F32, {6})); }),
      HasSubstr("got f32[6] (rank differs)"));
}

TEST(Session, SetInputUnknownName) {
  Session session(addModule());
  EXPECT_THAT(errorOf([&] { session.setInput("nope", xValues()); }),
              HasSubstr("has no input named 'nope'"));
  EXPECT_THAT(errorOf([&] { session.setInput(size_t(3), xValues()); }),
              HasSubstr("has no input 3"));
}

TEST(Session, DynamicDimensionsAcceptAnySize) {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::I64, {-1, 2});
  b.addOutput("x", x);
  Session session(Module::loadFromMemory(b.finish(), "dyn.strata"));
  for (int64_t rows : {1, 5}) {
    Tensor t = Tensor::zeros(DType::I64, {rows, 2});
    t.data<int64_t>()[2 * rows - 1] = rows;
    session.setInput("x", t);
    session.run();
    const Tensor &out = session.output("x");
    EXPECT_EQ(out.shape(), (std::vector<int64_t>{rows, 2}));
    EXPECT_EQ(out.data<int64_t>()[2 * rows - 1], rows);
  }
  EXPECT_THAT(errorOf([&] {
                session.setInput("x", Tensor::zeros(DType::I64, {3, 3}));
              }),
              HasSubstr("expects i64[?, 2], got i64[3, 3]"));
}

// An input the compiler specialized on (format 1.5, required_value): the
// value it was compiled for runs, any other is refused with both values.
TEST(Session, RequiredValueIsChecked) {
  ModuleBuilder b;
  int64_t four = 4;
  std::vector<uint8_t> bytes(sizeof four);
  std::memcpy(bytes.data(), &four, sizeof four);
  uint32_t n = b.addInput("n", DType::I64, {}, bytes);
  b.addOutput("n", n);
  auto module = Module::loadFromMemory(b.finish(), "req.strata");
  ASSERT_EQ(module->inputs()[0].requiredValue, bytes);
  Session session(module);
  Tensor t = Tensor::zeros(DType::I64, {});
  t.data<int64_t>()[0] = 4;
  session.setInput("n", t);
  session.run();
  EXPECT_EQ(session.output("n").data<int64_t>()[0], 4);
  t.data<int64_t>()[0] = 5;
  EXPECT_THAT(errorOf([&] { session.setInput("n", t); }),
              HasSubstr("input 'n' sets a shape, and the module was compiled "
                        "for its value 4, not 5"));
  // The refused value did not replace the one bound.
  session.run();
  EXPECT_EQ(session.output("n").data<int64_t>()[0], 4);
}

// A required value whose size does not match the input's type is a
// malformed module.
TEST(Session, RequiredValueOfWrongSizeIsRefused) {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {2}, std::vector<uint8_t>(4));
  b.addOutput("x", x);
  EXPECT_THAT(
      errorOf([&] { Module::loadFromMemory(b.finish(), "bad.strata"); }),
      HasSubstr("has a required value of 4 bytes, which does not "
                "match its type"));
}

// A required value on a shape whose element count overflows is refused,
// not multiplied past int64 (found by fuzz-module): 7 * 0x6db6db6db6db6db7
// wraps to 1, which would have matched the 4 bytes of one float.
TEST(Session, RequiredValueOfOverflowingShapeIsRefused) {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {7, 0x6db6db6db6db6db7},
                          std::vector<uint8_t>(4));
  b.addOutput("x", x);
  EXPECT_THAT(
      errorOf([&] { Module::loadFromMemory(b.finish(), "bad.strata"); }),
      HasSubstr("input 0 ('x')"));
}

// setInputView reads the caller's memory in place: a change made after
// binding is what the run sees. Memory not aligned to its element type is
// copied instead; unsetInput forgets the binding.
// Device memory is for CUDA sessions (FakeCudaTest:
// DeviceInputsAndOutputsAreCopiedOnTheDevice); a CPU session refuses it.
TEST(Session, DeviceMemoryIsRefusedOnTheCpu) {
  Session session(addModule(), {1});
  EXPECT_THAT(
      errorOf([&] {
        session.setInputDevice(0, DType::F32, {2, 3}, 4096);
      }),
      HasSubstr("inputs in device memory are for CUDA sessions; this session "
                "runs on the CPU"));
  EXPECT_THAT(errorOf([&] { session.setOutputDevice(0, 4096); }),
              HasSubstr("outputs into device memory are for CUDA sessions"));
}

TEST(Session, InputViewsAreReadInPlace) {
  Session session(addModule(), {2});
  alignas(64) float x[6] = {1, 2, 3, 4, 5, 6};
  session.setInputView("x", TensorView{DType::F32, {2, 3}, x});
  x[0] = -10.f;
  session.run();
  std::vector<float> got(session.output("y").data<float>(),
                         session.output("y").data<float>() + 6);
  EXPECT_EQ(got, (std::vector<float>{0, 22, 33, 44, 55, 66}));

  alignas(64) unsigned char bytes[6 * sizeof(float) + 1];
  float ones[6] = {1, 1, 1, 1, 1, 1};
  std::memcpy(bytes + 1, ones, sizeof ones);
  session.setInputView(size_t(0), TensorView{DType::F32, {2, 3}, bytes + 1});
  std::memset(bytes, 0, sizeof bytes); // the copy already holds the ones
  session.run();
  EXPECT_EQ(session.output("y").data<float>()[5], 61.f);

  session.unsetInput(0);
  EXPECT_THAT(errorOf([&] { session.run(); }),
              HasSubstr("input 'x' was not set"));
  EXPECT_THAT(errorOf([&] {
                session.setInputView("x", TensorView{DType::F32, {3, 2}, x});
              }),
              HasSubstr("expects f32[2, 3], got f32[3, 2]"));
  EXPECT_THAT(
      errorOf([&] {
        session.setInputView("x", TensorView{DType::F32, {2, 3}, nullptr});
      }),
      HasSubstr("(no data)"));
}

// setOutputView has each run write the output into the caller's memory:
// output() then refuses it (for the runs that wrote it there), and
// unsetOutputView goes back to the session's tensor. The view must be the
// output's element type and shape.
TEST(Session, OutputViewsAreWrittenInPlace) {
  Session session(addModule(), {2});
  session.setInput("x", xValues());
  float y[6] = {};
  session.setOutputView("y", TensorView{DType::F32, {2, 3}, y});
  session.run();
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{11, 22, 33, 44, 55, 66}));
  EXPECT_THAT(errorOf([&] { session.output("y"); }),
              HasSubstr("output 'y' of the last run was written into the "
                        "caller's memory"));
  session.unsetOutputView(0);
  EXPECT_THAT(errorOf([&] { session.output("y"); }),
              HasSubstr("written into the caller's memory"));
  std::fill(y, y + 6, 0.f);
  session.run();
  EXPECT_EQ(session.output("y").data<float>()[5], 66.f);
  EXPECT_EQ(y[5], 0.f);
  EXPECT_THAT(errorOf([&] {
                session.setOutputView("y", TensorView{DType::F32, {3, 2}, y});
              }),
              HasSubstr("output 'y' (f32[2, 3]) cannot be written into "
                        "f32[3, 2]"));
  EXPECT_THAT(
      errorOf([&] {
        session.setOutputView("y", TensorView{DType::F32, {2, 3}, nullptr});
      }),
      HasSubstr("the memory to write it into is null"));
  EXPECT_THAT(errorOf([&] { session.setOutputView("q", TensorView{}); }),
              HasSubstr("has no output named 'q'"));
}

// The CUDA options' knobs: unset ones take their environment variable,
// else the default; set ones win; a bad variable is an error naming it.
// (Resolved without a GPU: CUDA sessions call resolved() when made.)
TEST(Session, CudaOptionsTakeTheEnvironmentWhenUnset) {
  SessionOptions::Cuda defaults = SessionOptions::Cuda().resolved();
  EXPECT_TRUE(*defaults.tuneLibrary);
  EXPECT_EQ(*defaults.tuneMinFlops, 1e9);
  EXPECT_EQ(*defaults.libraryCandidates, 32);
  EXPECT_EQ(*defaults.splitMinFlops, 4e9);
  EXPECT_TRUE(*defaults.classBatch);
  EXPECT_EQ(*defaults.persistentBlocks, 0u);
  EXPECT_TRUE(*defaults.gridDependency);
  EXPECT_FALSE(*defaults.ptxOnly);
  EXPECT_EQ(*defaults.libraryChoices, "");
  withEnv("STRATA_CUBLASLT_TUNE", "0", [] {
    withEnv("STRATA_CUDA_IMAGE", "ptx", [] {
      SessionOptions::Cuda fromEnv = SessionOptions::Cuda().resolved();
      EXPECT_FALSE(*fromEnv.tuneLibrary);
      EXPECT_TRUE(*fromEnv.ptxOnly);
      withEnv("STRATA_CUBLASLT_CHOICES", "tested.txt", [] {
        EXPECT_EQ(*SessionOptions::Cuda().resolved().libraryChoices,
                  "tested.txt");
        SessionOptions::Cuda own;
        own.libraryChoices = "mine.txt";
        EXPECT_EQ(*own.resolved().libraryChoices, "mine.txt");
      });
      SessionOptions::Cuda pinned;
      pinned.tuneLibrary = true;
      pinned.ptxOnly = false;
      EXPECT_TRUE(*pinned.resolved().tuneLibrary);
      EXPECT_FALSE(*pinned.resolved().ptxOnly);
    });
  });
  withEnv("STRATA_CUBLASLT_CANDIDATES", "many", [] {
    EXPECT_THAT(errorOf([] { SessionOptions::Cuda().resolved(); }),
                HasSubstr("STRATA_CUBLASLT_CANDIDATES must be a whole number "
                          "from 1 to 64, not 'many'"));
  });
  withEnv("STRATA_CUBLASLT_TUNE_MIN_FLOPS", "-1", [] {
    EXPECT_THAT(errorOf([] { SessionOptions::Cuda().resolved(); }),
                HasSubstr("STRATA_CUBLASLT_TUNE_MIN_FLOPS must be a number"));
  });
}

TEST(Session, RunWithoutInput) {
  Session session(addModule());
  EXPECT_THAT(errorOf([&] { session.run(); }),
              HasSubstr("input 'x' was not set"));
  EXPECT_THAT(errorOf([&] { session.output("y"); }),
              HasSubstr("before a successful run()"));
  EXPECT_THAT(errorOf([&] { session.output("q"); }),
              HasSubstr("has no output named 'q'"));
}

TEST(Session, UnknownKernelFailsAtCreation) {
  ModuleBuilder b = addModuleBuilder();
  b.addStep({StepKind::Library, "conv.mystery", {0}, {2}, {}, {"Conv_7"}});
  auto m = Module::loadFromMemory(b.finish(), "unknown.strata");
  std::string msg = errorOf([&] { Session session(m); });
  EXPECT_THAT(msg, HasSubstr("'unknown.strata'"));
  EXPECT_THAT(msg, HasSubstr("step 1 ('conv.mystery', from ONNX node "
                             "'Conv_7') calls unknown library kernel"));
}

TEST(Session, GeneratedKernelsNeedCode) {
  // GeneratedKernelTest.cpp runs real code; without any, a Kernel step is
  // refused when the session is created.
  ModuleBuilder b = addModuleBuilder();
  b.addStep({StepKind::Kernel, "fused_0", {0}, {2}, {}, {}});
  auto m = Module::loadFromMemory(b.finish(), "gen.strata");
  EXPECT_THAT(errorOf([&] { Session session(m); }),
              HasSubstr("'gen.strata': has generated-kernel steps but no "
                        "code"));
}

TEST(Session, OtherTargetsAreRefused) {
  ModuleBuilder b = addModuleBuilder();
  b.setTarget("cuda");
  auto m = Module::loadFromMemory(b.finish(), "gpu.strata");
  EXPECT_THAT(errorOf([&] { Session session(m); }),
              HasSubstr("targets 'cuda'"));
}

TEST(Session, HugeArenaIsAnError) {
  ModuleBuilder b = addModuleBuilder();
  b.setArenaSize(UINT64_MAX / 2);
  auto m = Module::loadFromMemory(b.finish(), "huge.strata");
  std::string msg = errorOf([&] { Session session(m); });
  EXPECT_THAT(msg, HasSubstr("strata module 'huge.strata': cannot allocate"));
  EXPECT_THAT(msg, HasSubstr("bytes for its arena"));
}

TEST(Session, KernelChecksOperands) {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {4});
  uint32_t y = b.addArenaBuffer(DType::F32, {2});
  b.addStep({StepKind::Library, "copy", {x}, {y}, {}, {"Identity_1"}});
  b.addOutput("y", y);
  Session session(Module::loadFromMemory(b.finish(), "bad-copy.strata"));
  session.setInput("x", Tensor::zeros(DType::F32, {4}));
  std::string msg = errorOf([&] { session.run(); });
  EXPECT_THAT(msg, HasSubstr("'bad-copy.strata'"));
  EXPECT_THAT(msg, HasSubstr("step 0 ('copy', from ONNX node 'Identity_1'): "
                             "copies f32[4] to f32[2]"));
}

namespace {
// A registered kernel that reads every kind of attribute and writes them.
void scaleAttrs(KernelContext &ctx) {
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  double scale = ctx.attrFloat("scale");
  int64_t offset = ctx.attrInt("offset");
  const std::vector<int64_t> &extra = ctx.attrInts("extra");
  if (ctx.attrString("mode") != "affine" || ctx.hasAttr("absent"))
    throw ctx.error("unexpected attributes");
  const float *x = in.as<float>();
  float *y = out.as<float>();
  for (int64_t i = 0; i < out.numElements(); ++i)
    y[i] = static_cast<float>(x[i] * scale + offset + extra.at(i % 2));
  (void)ctx.attrFloat("missing"); // throws: the test checks the message
}
} // namespace

TEST(Session, RegisteredKernelSeesAttributes) {
  registerKernel("test.scale", scaleAttrs);
  EXPECT_EQ(lookupKernel("test.scale"), &scaleAttrs);
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {2});
  uint32_t y = b.addArenaBuffer(DType::F32, {2});
  Step s{StepKind::Library, "test.scale", {x}, {y}, {}, {"Mul_2"}};
  s.attributes = {{"scale", {}, {2.0}, ""},
                  {"offset", {1}, {}, ""},
                  {"extra", {100, 200}, {}, ""},
                  {"mode", {}, {}, "affine"}};
  b.addStep(s);
  b.addOutput("y", y);
  Session session(Module::loadFromMemory(b.finish(), "attrs.strata"));
  session.setInput("x", Tensor::fromValues<float>(DType::F32, {2}, {3, 4}));
  std::string msg = errorOf([&] { session.run(); });
  EXPECT_THAT(msg, HasSubstr("step 0 ('test.scale', from ONNX node 'Mul_2'): "
                             "has no attribute 'missing'"));
}

TEST(Session, RegisteredKernelComputes) {
  registerKernel("test.negate", [](KernelContext &ctx) {
    const float *x = ctx.input(0).as<float>();
    float *y = ctx.output(0).as<float>();
    ctx.pool().parallelFor(0, ctx.output(0).numElements(), 1,
                           [&](int64_t b, int64_t e) {
                             for (int64_t i = b; i < e; ++i)
                               y[i] = -x[i];
                           });
  });
  ModuleBuilder b = addModuleBuilder();
  uint32_t z = b.addArenaBuffer(DType::F32, {2, 3});
  b.addStep({StepKind::Library, "test.negate", {2}, {z}, {}, {}});
  b.addOutput("z", z);
  Session session(Module::loadFromMemory(b.finish(), "neg.strata"), {3});
  session.setInput("x", xValues());
  session.run();
  EXPECT_EQ(session.output("z").data<float>()[1], -22.f);
  EXPECT_EQ(session.output("y").data<float>()[1], 22.f);
}

TEST(Tensor, ZerosAndAccess) {
  Tensor t = Tensor::zeros(DType::BF16, {3, 0, 2});
  EXPECT_EQ(t.numElements(), 0);
  Tensor u = Tensor::zeros(DType::I16, {5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(u.rawData()) % 64, 0u);
  EXPECT_EQ(u.byteSize(), 10u);
  EXPECT_EQ(u.data<int16_t>()[4], 0);
  EXPECT_THAT(errorOf([&] { u.data<float>(); }),
              HasSubstr("a tensor of i16 accessed as float"));
  EXPECT_THAT(errorOf([&] { Tensor::zeros(DType::F32, {-1}); }),
              HasSubstr("not static"));
  Tensor copy = u;
  copy.data<int16_t>()[0] = 7;
  EXPECT_EQ(u.data<int16_t>()[0], 0);
  Tensor half = Tensor::zeros(DType::F16, {1});
  EXPECT_NO_THROW(half.data<uint16_t>());
  // Larger than any machine's memory: an error before any allocation
  // (found by fuzz/module.cpp, a string buffer of 2^59 elements).
  EXPECT_THAT(errorOf([&] {
                Tensor::zeros(DType::String, {1 << 20, 1 << 30});
              }),
              HasSubstr("more than this machine's"));
  EXPECT_THAT(errorOf([&] {
                Tensor::zeros(DType::F32, {1 << 20, 1 << 30});
              }),
              HasSubstr("more than this machine's"));
}

TEST(DType, Helpers) {
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I1), 1u);
  EXPECT_EQ(dtypeSize(DType::U64), 8u);
  EXPECT_STREQ(dtypeName(DType::U32), "u32");
  EXPECT_STREQ(dtypeName(static_cast<DType>(200)), "<invalid>");
  EXPECT_EQ(shapeToString({-1, 3}), "[?, 3]");
  EXPECT_EQ(shapeToString({}), "[]");
}

namespace {
struct Counter : KernelState {
  int64_t runs = 0;
};
struct Other : KernelState {};

// Writes how many times this step has run in this session.
void countRuns(KernelContext &ctx) {
  Counter &counter = ctx.state<Counter>();
  ctx.output(0).as<int64_t>()[0] = ++counter.runs;
  if (ctx.hasAttr("wrong_type"))
    ctx.state<Other>();
}
} // namespace

TEST(Session, KernelStatePersistsPerStepAndSession) {
  registerKernel("test.count", countRuns);
  ModuleBuilder b;
  uint32_t first = b.addArenaBuffer(DType::I64, {1});
  uint32_t second = b.addArenaBuffer(DType::I64, {1});
  b.addStep({StepKind::Library, "test.count", {}, {first}, {}, {}});
  b.addStep({StepKind::Library, "test.count", {}, {second}, {}, {}});
  b.addOutput("first", first);
  b.addOutput("second", second);
  auto m = Module::loadFromMemory(b.finish(), "count.strata");
  Session session(m);
  for (int64_t run = 1; run <= 3; ++run) {
    session.run();
    EXPECT_EQ(session.output("first").data<int64_t>()[0], run);
    EXPECT_EQ(session.output("second").data<int64_t>()[0], run);
  }
  Session fresh(m);
  fresh.run();
  EXPECT_EQ(fresh.output("first").data<int64_t>()[0], 1);

  ModuleBuilder w;
  uint32_t out = w.addArenaBuffer(DType::I64, {1});
  Step step{StepKind::Library, "test.count", {}, {out}, {}, {"Count_0"}};
  step.attributes.push_back({"wrong_type", {1}, {}, ""});
  w.addStep(step);
  Session wrong(Module::loadFromMemory(w.finish(), "wrong.strata"));
  EXPECT_THAT(errorOf([&] { wrong.run(); }),
              HasSubstr("step 0 ('test.count', from ONNX node 'Count_0'): "
                        "keeps kernel state of another type"));
}

TEST(Session, TraceRecordsEveryStepOfEveryRun) {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {4});
  uint32_t y = b.addArenaBuffer(DType::F32, {4});
  uint32_t z = b.addArenaBuffer(DType::F32, {4});
  b.addStep({StepKind::Library, "add.f32", {x, x}, {y}, {}, {"Add_0"}});
  b.addStep({StepKind::Library, "copy", {y}, {z}, {}, {"Identity_1"}});
  b.addOutput("z", z);
  SessionOptions options;
  options.trace = true;
  Session session(Module::loadFromMemory(b.finish(), "trace.strata"), options);
  session.setInput("x", Tensor::zeros(DType::F32, {4}));
  session.run();
  session.clearTrace();
  for (int r = 0; r < 3; ++r)
    session.run();
  const std::vector<StepEvent> &events = session.traceEvents();
  ASSERT_EQ(events.size(), 6u);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].run, 1 + i / 2);
    EXPECT_EQ(events[i].step, i % 2);
    EXPECT_GE(events[i].duration, 0.0);
    if (i)
      EXPECT_GE(events[i].start + 1e-9,
                events[i - 1].start + events[i - 1].duration);
  }
  // Tracing implies the profile.
  EXPECT_EQ(session.stepTimes().size(), 2u);
  // Without the option nothing is recorded.
  Session quiet(Module::loadFromMemory(b.finish(), "trace.strata"));
  quiet.setInput("x", Tensor::zeros(DType::F32, {4}));
  quiet.run();
  EXPECT_TRUE(quiet.traceEvents().empty());
}
