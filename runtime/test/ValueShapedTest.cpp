//===- ValueShapedTest.cpp - Host buffers of numbers, host.* ----*- C++ -*-===//
//-*-===//
//
// Host buffers of numbers (format 1.4) and the host kernels whose output
// shape depends on values (docs/runtime.md, "Value-dependent shapes"):
// modules built with ModuleBuilder that load or are refused, outputs whose
// run-time shape changes from one run to the next, KernelContext::
// allocateOutput's checks, and host.nonzero, host.compress, host.unique and
// host.non_max_suppression against the ONNX backend test data
// (onnx/backend/test/data/node/test_<op>_*, their test_data_set_0) and,
// where ONNX has no case, numpy.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "strata/Runtime/Testing.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

Step libraryStep(std::string name, std::vector<uint32_t> inputs,
                 std::vector<uint32_t> outputs,
                 std::vector<Attribute> attributes = {}) {
  Step step;
  step.kind = StepKind::Library;
  step.name = std::move(name);
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.attributes = std::move(attributes);
  step.sourceNodes = {"Node_0"};
  return step;
}

Attribute intAttr(std::string key, int64_t value) {
  return {std::move(key), {value}, {}, ""};
}

Attribute intsAttr(std::string key, std::vector<int64_t> values) {
  return {std::move(key), std::move(values), {}, ""};
}

/// A declared output of a one-step module: its type and shape (-1 where
/// the step sets it).
struct OutputDecl {
  DType dtype;
  std::vector<int64_t> shape;
};

/// A module of one library step `kernel` whose inputs are the module's
/// inputs x0, x1, ... (of the tensors' types and shapes) and whose outputs
/// are host buffers y0, y1, ...
std::shared_ptr<const Module> oneStepModule(const std::string &kernel,
                                            const std::vector<Tensor> &inputs,
                                            const std::vector<OutputDecl> &outs,
                                            std::vector<Attribute> attributes) {
  ModuleBuilder b;
  std::vector<uint32_t> ins, outIds;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(b.addInput("x" + std::to_string(i), inputs[i].dtype(),
                             inputs[i].shape()));
  for (const OutputDecl &o : outs)
    outIds.push_back(b.addHostBuffer(o.dtype, o.shape));
  b.addStep(libraryStep(kernel, ins, outIds, std::move(attributes)));
  for (size_t i = 0; i < outIds.size(); ++i)
    b.addOutput("y" + std::to_string(i), outIds[i]);
  return Module::loadFromMemory(b.finish(), kernel + ".strata");
}

/// Runs oneStepModule once and returns its outputs.
std::vector<Tensor> runOnce(const std::string &kernel,
                            const std::vector<Tensor> &inputs,
                            const std::vector<OutputDecl> &outs,
                            std::vector<Attribute> attributes = {}) {
  Session s(oneStepModule(kernel, inputs, outs, std::move(attributes)));
  for (size_t i = 0; i < inputs.size(); ++i)
    s.setInput(i, inputs[i]);
  s.run();
  std::vector<Tensor> results;
  for (size_t i = 0; i < outs.size(); ++i)
    results.push_back(s.output(i));
  return results;
}

/// The error of running oneStepModule once.
std::string runError(const std::string &kernel,
                     const std::vector<Tensor> &inputs,
                     const std::vector<OutputDecl> &outs,
                     std::vector<Attribute> attributes = {}) {
  return errorOf([&] { runOnce(kernel, inputs, outs, std::move(attributes)); });
}

template <typename T> std::vector<T> values(const Tensor &t) {
  const T *p = t.data<T>();
  return std::vector<T>(p, p + t.numElements());
}

using Shape = std::vector<int64_t>;
using I64s = std::vector<int64_t>;

Tensor f32(Shape shape, std::vector<float> v) {
  return Tensor::fromValues<float>(DType::F32, std::move(shape), v);
}
Tensor i64(Shape shape, std::vector<int64_t> v) {
  return Tensor::fromValues<int64_t>(DType::I64, std::move(shape), v);
}
Tensor boolean(Shape shape, std::vector<bool> v) {
  Tensor t = Tensor::zeros(DType::I1, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.data<bool>()[i] = v[i];
  return t;
}

} // namespace

//===----------------------------------------------------------------------===//
// Host buffers of numbers in modules and sessions
//===----------------------------------------------------------------------===//

TEST(HostBuffers, NumbersLoad) {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::F32, {4});
  uint32_t y = b.addHostBuffer(DType::I64, {1, -1});
  uint32_t z = b.addHostBuffer(DType::F16, {3});
  b.addStep(libraryStep("host.nonzero", {x}, {y}));
  b.addOutput("y", y);
  b.addOutput("z", z);
  auto m = Module::loadFromMemory(b.finish(), "host.strata");
  EXPECT_GE(m->versionMinor(), 4);
  EXPECT_EQ(m->buffers()[y].kind, BufferKind::Host);
  EXPECT_EQ(m->buffers()[y].dtype, DType::I64);
  EXPECT_EQ(m->buffers()[y].shape, (Shape{1, -1}));
  // A static host buffer nothing writes is allocated zeroed with the
  // session.
  Session s(m);
  s.setInput("x", f32({4}, {0, 1, 0, 1}));
  s.run();
  EXPECT_EQ(s.output("y").shape(), (Shape{1, 2}));
  EXPECT_EQ(s.output("z").dtype(), DType::F16);
  EXPECT_EQ(values<uint16_t>(s.output("z")), (std::vector<uint16_t>{0, 0, 0}));
}

TEST(HostBuffers, GeneratedKernelsMayNotTouchThem) {
  for (bool writes : {false, true}) {
    ModuleBuilder b;
    uint32_t x = b.addInput("x", DType::F32, {4});
    uint32_t host = b.addHostBuffer(DType::F32, {4});
    uint32_t arena = b.addArenaBuffer(DType::F32, {4});
    Step step = writes ? libraryStep("k", {x}, {host})
                       : libraryStep("k", {host}, {arena});
    step.kind = StepKind::Kernel;
    b.addStep(step);
    b.setCode({0x7f, 'E', 'L', 'F'});
    std::string msg = errorOf(
        [&] { Module::loadFromMemory(b.finish(), "kernel-host.strata"); });
    EXPECT_THAT(msg, HasSubstr("strata module 'kernel-host.strata': step 0 "
                               "('k', from ONNX node 'Node_0') is a generated "
                               "kernel, but it "));
    EXPECT_THAT(msg, HasSubstr(std::string(writes ? "writes" : "reads") +
                               " buffer 1, a host buffer of f32[4] (only "
                               "library kernels use host buffers)"));
  }
}

TEST(HostBuffers, OlderFormatsLoadUnchanged) {
  ModuleBuilder b = addModuleBuilder();
  b.setVersion(kFormatMajor, 3);
  auto m = Module::loadFromMemory(b.finish(), "old.strata");
  EXPECT_EQ(m->versionMinor(), 3);
  Session s(m);
  s.setInput("x", Tensor::zeros(DType::F32, {2, 3}));
  s.run();
  EXPECT_EQ(s.output("y").data<float>()[5], 60.f);
}

TEST(HostBuffers, RunTimeShapeFollowsEachRun) {
  auto m = oneStepModule("host.nonzero", {boolean({2, 3}, {})},
                         {{DType::I64, {2, -1}}}, {});
  Session s(m);
  s.setInput("x0", boolean({2, 3}, {true, false, true, false, false, true}));
  s.run();
  EXPECT_EQ(s.output("y0").shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(s.output("y0")), (I64s{0, 0, 1, 0, 2, 2}));
  s.setInput("x0", boolean({2, 3}, {false, false, false, false, true, false}));
  s.run();
  EXPECT_EQ(s.output("y0").shape(), (Shape{2, 1}));
  EXPECT_EQ(values<int64_t>(s.output("y0")), (I64s{1, 1}));
  s.setInput("x0", boolean({2, 3}, {}));
  s.run();
  EXPECT_EQ(s.output("y0").shape(), (Shape{2, 0}));
}

TEST(HostBuffers, HostOutputFeedsTheNextStep) {
  // unique(x) -> Y (host, [?]) -> nonzero(Y) -> (host, [1, ?]): the second
  // step reads the first's run-time shape and storage.
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::I64, {-1});
  uint32_t y = b.addHostBuffer(DType::I64, {-1});
  uint32_t nz = b.addHostBuffer(DType::I64, {1, -1});
  b.addStep(libraryStep("host.unique", {x}, {y}));
  b.addStep(libraryStep("host.nonzero", {y}, {nz}));
  b.addOutput("y", y);
  b.addOutput("nz", nz);
  Session s(Module::loadFromMemory(b.finish(), "chain.strata"));
  s.setInput("x", i64({6}, {3, 0, 3, 5, 0, 7}));
  s.run();
  EXPECT_EQ(values<int64_t>(s.output("y")), (I64s{0, 3, 5, 7}));
  EXPECT_EQ(values<int64_t>(s.output("nz")), (I64s{1, 2, 3}));
  s.setInput("x", i64({2}, {4, 4}));
  s.run();
  EXPECT_EQ(values<int64_t>(s.output("y")), (I64s{4}));
  EXPECT_EQ(values<int64_t>(s.output("nz")), (I64s{0}));
}

namespace {
/// A test kernel: allocateOutput(0, the attribute `shape`), filled with
/// 7s.
void allocateKernel(KernelContext &ctx) {
  const std::vector<int64_t> &shape = ctx.attrInts("shape");
  TensorView &out = ctx.allocateOutput(0, shape);
  int32_t *p = out.as<int32_t>();
  std::fill(p, p + out.numElements(), 7);
}

std::shared_ptr<const Module> allocateModule(BufferKind kind, Shape declared,
                                             Shape produced) {
  registerKernel("test.allocate", allocateKernel);
  ModuleBuilder b;
  uint32_t y = kind == BufferKind::Host
                   ? b.addHostBuffer(DType::I32, declared)
                   : b.addArenaBuffer(DType::I32, declared);
  b.addStep(
      libraryStep("test.allocate", {}, {y}, {intsAttr("shape", produced)}));
  b.addOutput("y", y);
  return Module::loadFromMemory(b.finish(), "allocate.strata");
}

std::string allocateError(BufferKind kind, Shape declared, Shape produced) {
  return errorOf([&] {
    Session s(allocateModule(kind, declared, produced));
    s.run();
  });
}
} // namespace

TEST(AllocateOutput, ChecksTheShape) {
  std::string step = "strata module 'allocate.strata': step 0 "
                     "('test.allocate', from ONNX node 'Node_0'): ";
  // Run-time dimensions take any size; static ones must match.
  {
    Session s(allocateModule(BufferKind::Host, {-1, 2}, {3, 2}));
    s.run();
    EXPECT_EQ(s.output("y").shape(), (Shape{3, 2}));
    EXPECT_EQ(values<int32_t>(s.output("y")), std::vector<int32_t>(6, 7));
  }
  {
    Session s(allocateModule(BufferKind::Host, {-1, 2}, {0, 2}));
    s.run();
    EXPECT_EQ(s.output("y").shape(), (Shape{0, 2}));
  }
  EXPECT_EQ(allocateError(BufferKind::Host, {-1, 2}, {3}),
            step + "output 0 is i32[?, 2] but the step produced i32[3]");
  EXPECT_EQ(allocateError(BufferKind::Host, {-1, 2}, {3, 4}),
            step + "output 0 is i32[?, 2] but the step produced i32[3, 4]");
  EXPECT_THAT(allocateError(BufferKind::Host, {-1}, {-2}),
              HasSubstr(step + "output 0: shape [?] is not static"));
  // A static host buffer and an arena buffer keep their shape.
  EXPECT_EQ(allocateError(BufferKind::Host, {4}, {5}),
            step + "output 0 is i32[4] but the step produced i32[5]");
  EXPECT_EQ(allocateError(BufferKind::Arena, {2, 2}, {4}),
            step + "output 0 is i32[2, 2] but the step produced i32[4]");
  Session s(allocateModule(BufferKind::Arena, {2, 2}, {2, 2}));
  s.run();
  EXPECT_EQ(values<int32_t>(s.output("y")), std::vector<int32_t>(4, 7));
}

TEST(AllocateOutput, FailuresNameTheStep) {
  auto m = allocateModule(BufferKind::Host, {-1}, {5});
  Session s(m);
  // The run's first allocation is the step's output.
  strata::rt::testing::failAllocationAfter(0);
  std::string msg = errorOf([&] { s.run(); });
  strata::rt::testing::clearAllocationFailure();
  EXPECT_EQ(msg, "strata module 'allocate.strata': step 0 ('test.allocate', "
                 "from ONNX node 'Node_0'): output 0: cannot allocate 20 "
                 "bytes for a tensor of i32[5]");
  s.run();
  EXPECT_EQ(values<int32_t>(s.output("y")), std::vector<int32_t>(5, 7));
}

namespace {
struct RunCount : KernelState {
  int runs = 0;
};

/// First run: allocateOutput, then fail. Later runs: write the output in
/// place, through the view the session gives (a static host buffer).
void failThenWriteInPlace(KernelContext &ctx) {
  if (ctx.state<RunCount>().runs++ == 0) {
    ctx.allocateOutput(0, {4});
    throw ctx.error("fails on purpose");
  }
  const TensorView &out = ctx.output(0);
  ASSERT_EQ(out.shape, (Shape{4}));
  int32_t *p = out.as<int32_t>();
  std::fill(p, p + 4, 9);
}
} // namespace

TEST(AllocateOutput, AStepThatFailsLeavesTheSessionUsable) {
  // The step replaced the output's storage, then failed: the session's view
  // of the buffer must follow, or the next run writes freed memory.
  registerKernel("test.fail_then_write", failThenWriteInPlace);
  ModuleBuilder b;
  uint32_t y = b.addHostBuffer(DType::I32, {4});
  b.addStep(libraryStep("test.fail_then_write", {}, {y}));
  b.addOutput("y", y);
  Session s(Module::loadFromMemory(b.finish(), "fail.strata"));
  EXPECT_THAT(errorOf([&] { s.run(); }), HasSubstr("fails on purpose"));
  s.run();
  EXPECT_EQ(values<int32_t>(s.output("y")), std::vector<int32_t>(4, 9));
}

//===----------------------------------------------------------------------===//
// host.nonzero
//===----------------------------------------------------------------------===//

TEST(HostNonZero, OnnxExample) {
  // test_nonzero_example.
  auto out =
      runOnce("host.nonzero", {boolean({2, 2}, {true, false, true, true})},
              {{DType::I64, {2, -1}}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(out[0]), (I64s{0, 1, 1, 0, 0, 1}));
}

TEST(HostNonZero, FloatsIn3D) {
  // numpy: np.array(np.nonzero(x)); -0.0 is zero, NaN is not.
  float nan = std::numeric_limits<float>::quiet_NaN();
  auto out =
      runOnce("host.nonzero",
              {f32({2, 2, 3}, {0, 1.5f, -0.0f, nan, 0, 0, 0, 0, 2, -3, 0, 0})},
              {{DType::I64, {3, -1}}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(values<int64_t>(out[0]),
            (I64s{0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 2, 0}));
}

TEST(HostNonZero, OtherTypes) {
  // f16: 0x8000 is -0, 0x7e00 NaN; a scalar is one element of one
  // dimension.
  Tensor h = Tensor::fromValues<uint16_t>(DType::F16, {4},
                                          {0x8000, 0x3c00, 0x0000, 0x7e00});
  auto out = runOnce("host.nonzero", {h}, {{DType::I64, {1, -1}}});
  EXPECT_EQ(values<int64_t>(out[0]), (I64s{1, 3}));
  out =
      runOnce("host.nonzero", {Tensor::fromValues<int8_t>(DType::I8, {}, {-1})},
              {{DType::I64, {1, -1}}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1}));
  EXPECT_EQ(values<int64_t>(out[0]), (I64s{0}));
  EXPECT_THAT(runError("host.nonzero", {Tensor::fromStrings({1}, {"a"})},
                       {{DType::I64, {1, -1}}}),
              HasSubstr("step 0 ('host.nonzero', from ONNX node 'Node_0'): "
                        "takes a tensor of numbers, got string[1]"));
  EXPECT_THAT(
      runError("host.nonzero", {f32({2}, {1, 0})}, {{DType::I32, {1, -1}}}),
      HasSubstr("the indices (output 0) must be i64, got i32[1, ?]"));
}

//===----------------------------------------------------------------------===//
// host.compress
//===----------------------------------------------------------------------===//

TEST(HostCompress, OnnxCases) {
  Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  // test_compress_0: axis 0.
  auto out = runOnce("host.compress", {x, boolean({3}, {false, true, true})},
                     {{DType::F32, {-1, 2}}}, {intAttr("axis", 0)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{3, 4, 5, 6}));
  // test_compress_1: axis 1.
  out = runOnce("host.compress", {x, boolean({2}, {false, true})},
                {{DType::F32, {3, -1}}}, {intAttr("axis", 1)});
  EXPECT_EQ(out[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{2, 4, 6}));
  // test_compress_negative_axis: axis -1.
  out = runOnce("host.compress", {x, boolean({2}, {false, true})},
                {{DType::F32, {3, -1}}}, {intAttr("axis", -1)});
  EXPECT_EQ(out[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{2, 4, 6}));
  // test_compress_default_axis: no axis, the input flattened; the
  // condition is shorter than the 6 elements.
  out = runOnce("host.compress",
                {x, boolean({5}, {false, true, false, false, true})},
                {{DType::F32, {-1}}});
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{2, 5}));
}

TEST(HostCompress, ShortConditionsAndOtherTypes) {
  // numpy: np.compress([1, 0, 1], np.arange(24).reshape(2, 4, 3), axis=1).
  std::vector<int32_t> v(24);
  for (int i = 0; i < 24; ++i)
    v[i] = i;
  Tensor x = Tensor::fromValues<int32_t>(DType::I32, {2, 4, 3}, v);
  auto out = runOnce("host.compress", {x, boolean({3}, {true, false, true})},
                     {{DType::I32, {2, -1, 3}}}, {intAttr("axis", 1)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(values<int32_t>(out[0]),
            (std::vector<int32_t>{0, 1, 2, 6, 7, 8, 12, 13, 14, 18, 19, 20}));
  // np.compress([0, 1], x, axis=-1).
  out = runOnce("host.compress", {x, boolean({2}, {false, true})},
                {{DType::I32, {2, 4, -1}}}, {intAttr("axis", -1)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 1}));
  EXPECT_EQ(values<int32_t>(out[0]),
            (std::vector<int32_t>{1, 4, 7, 10, 13, 16, 19, 22}));
  // Falses past the axis are allowed; nothing selected gives 0.
  out = runOnce("host.compress",
                {x, boolean({6}, {false, false, false, false, false, false})},
                {{DType::I32, {2, -1, 3}}}, {intAttr("axis", 1)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 0, 3}));
  // Strings are copied too.
  out = runOnce("host.compress",
                {Tensor::fromStrings({3}, {"a", "b", "c"}),
                 boolean({3}, {true, false, true})},
                {{DType::String, {-1}}}, {intAttr("axis", 0)});
  EXPECT_EQ(out[0].strings(), (std::vector<std::string>{"a", "c"}));
}

TEST(HostCompress, Errors) {
  Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(runError("host.compress",
                       {x, boolean({4}, {false, true, false, true})},
                       {{DType::F32, {-1, 2}}}, {intAttr("axis", 0)}),
              HasSubstr("step 0 ('host.compress', from ONNX node 'Node_0'): "
                        "the condition (4 elements) is true at index 3, past "
                        "the 3 elements of the input along axis 0"));
  EXPECT_THAT(runError("host.compress", {x, boolean({1}, {true})},
                       {{DType::F32, {-1, 2}}}, {intAttr("axis", 2)}),
              HasSubstr("attribute 'axis' is 2, out of range for the input "
                        "f32[3, 2] (valid: -2 to 1)"));
  EXPECT_THAT(
      runError("host.compress", {x, f32({1}, {1})}, {{DType::F32, {-1, 2}}},
               {intAttr("axis", 0)}),
      HasSubstr("the condition must be a 1-D tensor of i1, got f32[1]"));
}

//===----------------------------------------------------------------------===//
// host.unique
//===----------------------------------------------------------------------===//

namespace {
const std::vector<OutputDecl> kUniqueOutputs = {{DType::F32, {-1}},
                                                {DType::I64, {-1}},
                                                {DType::I64, {-1}},
                                                {DType::I64, {-1}}};
} // namespace

TEST(HostUnique, OnnxCasesWithoutAxis) {
  Tensor x = f32({6}, {2, 1, 1, 3, 4, 3});
  // test_unique_sorted_without_axis (no `sorted`: 1).
  auto out = runOnce("host.unique", {x}, kUniqueOutputs);
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (I64s{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[2]), (I64s{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(out[3]), (I64s{2, 1, 2, 1}));
  // test_unique_not_sorted_without_axis.
  out = runOnce("host.unique", {x}, kUniqueOutputs, {intAttr("sorted", 0)});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (I64s{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[2]), (I64s{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(out[3]), (I64s{1, 2, 2, 1}));
}

TEST(HostUnique, OnnxCasesWithAxis) {
  // test_unique_sorted_with_axis.
  auto out = runOnce("host.unique", {f32({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4})},
                     {{DType::F32, {-1, 3}},
                      {DType::I64, {-1}},
                      {DType::I64, {3}},
                      {DType::I64, {-1}}},
                     {intAttr("axis", 0), intAttr("sorted", 1)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (I64s{0, 2}));
  EXPECT_EQ(values<int64_t>(out[2]), (I64s{0, 0, 1}));
  EXPECT_EQ(values<int64_t>(out[3]), (I64s{2, 1}));
  // test_unique_sorted_with_negative_axis.
  out = runOnce("host.unique", {f32({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 3})},
                {{DType::F32, {3, -1}},
                 {DType::I64, {-1}},
                 {DType::I64, {-1}},
                 {DType::I64, {-1}}},
                {intAttr("axis", -1), intAttr("sorted", 1)});
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{0, 1, 0, 1, 3, 2}));
  EXPECT_EQ(values<int64_t>(out[1]), (I64s{1, 0}));
  EXPECT_EQ(values<int64_t>(out[2]), (I64s{1, 0, 0}));
  EXPECT_EQ(values<int64_t>(out[3]), (I64s{2, 1}));
  // test_unique_sorted_with_axis_3d.
  Tensor x3 = f32({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  out = runOnce("host.unique", {x3},
                {{DType::F32, {2, -1, 2}},
                 {DType::I64, {-1}},
                 {DType::I64, {-1}},
                 {DType::I64, {-1}}},
                {intAttr("axis", 1), intAttr("sorted", 1)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<float>(out[0]),
            (std::vector<float>{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}));
  EXPECT_EQ(values<int64_t>(out[1]), (I64s{1, 0, 2}));
  EXPECT_EQ(values<int64_t>(out[2]), (I64s{1, 0, 2, 0}));
  EXPECT_EQ(values<int64_t>(out[3]), (I64s{2, 1, 1}));
  // The same unsorted (numpy: np.unique(..., axis=1), then first-occurrence
  // order, as the ONNX reference reorders it, taking Y along the axis).
  out = runOnce("host.unique", {x3},
                {{DType::F32, {2, -1, 2}},
                 {DType::I64, {-1}},
                 {DType::I64, {-1}},
                 {DType::I64, {-1}}},
                {intAttr("axis", 1), intAttr("sorted", 0)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<float>(out[0]),
            (std::vector<float>{1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1}));
  EXPECT_EQ(values<int64_t>(out[1]), (I64s{0, 1, 2}));
  EXPECT_EQ(values<int64_t>(out[2]), (I64s{0, 1, 2, 1}));
  EXPECT_EQ(values<int64_t>(out[3]), (I64s{1, 2, 1}));
}

TEST(HostUnique, OtherTypes) {
  // numpy: np.unique(x, True, True, True) of an i64[2, 3] (flattened).
  auto out = runOnce("host.unique", {i64({2, 3}, {5, -2, 5, 7, -2, 0})},
                     {{DType::I64, {-1}},
                      {DType::I64, {-1}},
                      {DType::I64, {6}},
                      {DType::I64, {-1}}});
  EXPECT_EQ(values<int64_t>(out[0]), (I64s{-2, 0, 5, 7}));
  EXPECT_EQ(values<int64_t>(out[1]), (I64s{1, 5, 0, 3}));
  EXPECT_EQ(values<int64_t>(out[2]), (I64s{2, 0, 2, 3, 0, 1}));
  EXPECT_EQ(values<int64_t>(out[3]), (I64s{2, 1, 2, 1}));
  // f16 [1.5, -0, 0, NaN, 1.5, -1]: -0 and 0 are one value (the first
  // one's bits), NaN sorts last.
  out = runOnce("host.unique",
                {Tensor::fromValues<uint16_t>(
                    DType::F16, {6}, {15872, 32768, 0, 32256, 15872, 48128})},
                {{DType::F16, {-1}},
                 {DType::I64, {-1}},
                 {DType::I64, {-1}},
                 {DType::I64, {-1}}});
  EXPECT_EQ(values<uint16_t>(out[0]),
            (std::vector<uint16_t>{48128, 32768, 15872, 32256}));
  EXPECT_EQ(values<int64_t>(out[1]), (I64s{5, 1, 0, 3}));
  EXPECT_EQ(values<int64_t>(out[2]), (I64s{2, 1, 1, 3, 2, 0}));
  EXPECT_EQ(values<int64_t>(out[3]), (I64s{1, 2, 2, 1}));
  // Only Y.
  out = runOnce("host.unique", {boolean({3}, {true, false, true})},
                {{DType::I1, {-1}}});
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_EQ(values<bool>(out[0]), (std::vector<bool>{false, true}));
}

TEST(HostUnique, Errors) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_THAT(
      runError("host.unique", {x}, kUniqueOutputs, {intAttr("axis", -3)}),
      HasSubstr("step 0 ('host.unique', from ONNX node 'Node_0'): "
                "attribute 'axis' is -3, out of range for the input "
                "f32[2, 2] (valid: -2 to 1)"));
  EXPECT_THAT(
      runError("host.unique", {x}, {{DType::F32, {-1}}, {DType::I32, {-1}}}),
      HasSubstr("the indices (output 1) must be i64, got i32[?]"));
  EXPECT_THAT(runError("host.unique", {x}, {{DType::F64, {-1}}}),
              HasSubstr("the output is f64[?] but the input is f32[2, 2]"));
}

//===----------------------------------------------------------------------===//
// host.non_max_suppression
//===----------------------------------------------------------------------===//

namespace {
/// The boxes of most ONNX NonMaxSuppression cases (f32[1, 6, 4], corners).
const std::vector<float> kBoxes = {0, 0,     1, 1,     0, 0.1f, 1, 1.1f,
                                   0, -0.1f, 1, 0.9f,  0, 10,   1, 11,
                                   0, 10.1f, 1, 11.1f, 0, 100,  1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

std::vector<float> repeat(const std::vector<float> &v, int times) {
  std::vector<float> out;
  for (int i = 0; i < times; ++i)
    out.insert(out.end(), v.begin(), v.end());
  return out;
}

/// NonMaxSuppression with all three optional inputs.
Tensor nms(Tensor boxes, Tensor scores, int64_t maxOutput, float iou,
           float scoreThreshold, int64_t centerPointBox = 0) {
  std::vector<Attribute> attrs = {intsAttr("optional_inputs", {1, 1, 1})};
  if (centerPointBox)
    attrs.push_back(intAttr("center_point_box", centerPointBox));
  return runOnce("host.non_max_suppression",
                 {std::move(boxes), std::move(scores), i64({1}, {maxOutput}),
                  f32({1}, {iou}), f32({1}, {scoreThreshold})},
                 {{DType::I64, {-1, 3}}}, attrs)[0];
}
} // namespace

TEST(HostNonMaxSuppression, OnnxCases) {
  Tensor boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 1, 6}, kScores);
  // test_nonmaxsuppression_suppress_by_IOU.
  Tensor out = nms(boxes, scores, 3, 0.5f, 0);
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // test_nonmaxsuppression_suppress_by_IOU_and_scores.
  out = nms(boxes, scores, 3, 0.5f, 0.4f);
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3, 0, 0, 0}));
  // test_nonmaxsuppression_limit_output_size.
  out = nms(boxes, scores, 2, 0.5f, 0);
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3, 0, 0, 0}));
  // test_nonmaxsuppression_center_point_box_format.
  out = nms(f32({1, 6, 4},
                {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                 0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1}),
            scores, 3, 0.5f, 0, /*centerPointBox=*/1);
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // test_nonmaxsuppression_flipped_coordinates.
  out = nms(f32({1, 6, 4}, {1, 1,  0, 0,  0, 0.1f,  1, 1.1f,  0, 0.9f, 1, -0.1f,
                            0, 10, 1, 11, 1, 10.1f, 0, 11.1f, 1, 101,  0, 100}),
            scores, 3, 0.5f, 0);
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // test_nonmaxsuppression_identical_boxes.
  out = nms(f32({1, 10, 4}, repeat({0, 0, 1, 1}, 10)),
            f32({1, 1, 10}, std::vector<float>(10, 0.9f)), 3, 0.5f, 0);
  EXPECT_EQ(out.shape(), (Shape{1, 3}));
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 0}));
  // test_nonmaxsuppression_single_box.
  out = nms(f32({1, 1, 4}, {0, 0, 1, 1}), f32({1, 1, 1}, {0.9f}), 3, 0.5f, 0);
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 0}));
  // test_nonmaxsuppression_two_batches.
  out = nms(f32({2, 6, 4}, repeat(kBoxes, 2)),
            f32({2, 1, 6}, repeat(kScores, 2)), 2, 0.5f, 0);
  EXPECT_EQ(out.shape(), (Shape{4, 3}));
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0}));
  // test_nonmaxsuppression_two_classes.
  out = nms(boxes, f32({1, 2, 6}, repeat(kScores, 2)), 2, 0.5f, 0);
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0}));
}

TEST(HostNonMaxSuppression, AbsentInputs) {
  Tensor boxes = f32({1, 6, 4}, kBoxes), scores = f32({1, 1, 6}, kScores);
  // Only max_output_boxes_per_class: iou_threshold 0 suppresses any
  // overlap (boxes 1, 2 overlap box 0 and box 4 overlaps box 3), and no
  // score is filtered.
  Tensor out = runOnce("host.non_max_suppression",
                       {boxes, scores, i64({1}, {6})}, {{DType::I64, {-1, 3}}},
                       {intsAttr("optional_inputs", {1, 0, 0})})[0];
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // Without max_output_boxes_per_class nothing is selected.
  out = runOnce("host.non_max_suppression", {boxes, scores, f32({1}, {0.5f})},
                {{DType::I64, {-1, 3}}},
                {intsAttr("optional_inputs", {0, 1, 0})})[0];
  EXPECT_EQ(out.shape(), (Shape{0, 3}));
  // Without the attribute the inputs present are the first ones, in order:
  // max_output_boxes_per_class and iou_threshold.
  out = runOnce("host.non_max_suppression",
                {boxes, scores, i64({1}, {1}), f32({1}, {0.5f})},
                {{DType::I64, {-1, 3}}})[0];
  EXPECT_EQ(values<int64_t>(out), (I64s{0, 0, 3}));
}

TEST(HostNonMaxSuppression, Errors) {
  std::string step = "strata module 'host.non_max_suppression.strata': step 0 "
                     "('host.non_max_suppression', from ONNX node 'Node_0'): ";
  Tensor scores = f32({1, 1, 6}, kScores);
  EXPECT_EQ(runError("host.non_max_suppression",
                     {f32({6, 4}, std::vector<float>(24)), scores},
                     {{DType::I64, {-1, 3}}}),
            step + "boxes must be f32[batches, boxes, 4], got f32[6, 4]");
  Tensor boxes = f32({1, 6, 4}, kBoxes);
  EXPECT_EQ(runError("host.non_max_suppression",
                     {boxes, f32({1, 1, 5}, std::vector<float>(5))},
                     {{DType::I64, {-1, 3}}}),
            step + "boxes f32[1, 6, 4] and scores f32[1, 1, 5] disagree on the "
                   "batches or the boxes");
  EXPECT_EQ(runError("host.non_max_suppression",
                     {boxes, scores, i64({2}, {1, 2})}, {{DType::I64, {-1, 3}}},
                     {intsAttr("optional_inputs", {1, 0, 0})}),
            step + "max_output_boxes_per_class must hold one value, got "
                   "i64[2]");
  EXPECT_EQ(runError("host.non_max_suppression", {boxes, scores},
                     {{DType::I64, {-1, 3}}},
                     {intsAttr("optional_inputs", {1, 0, 0})}),
            step + "attribute 'optional_inputs' names 1 optional input(s) but "
                   "the step has 0");
  EXPECT_EQ(runError("host.non_max_suppression", {boxes, scores, i64({1}, {3})},
                     {{DType::I64, {-1, 3}}}, {intAttr("center_point_box", 2)}),
            step + "attribute 'center_point_box' must be 0 or 1, got 2");
  EXPECT_EQ(runError("host.non_max_suppression", {boxes, scores, i64({1}, {3})},
                     {{DType::I64, {-1, 4}}}),
            step + "output 0 is i64[?, 4] but the step produced i64[3, 3]");
}

//===----------------------------------------------------------------------===//
// host.loop: carried values moved between iterations and appended to
//===----------------------------------------------------------------------===//

namespace {

Attribute stringsAttr(std::string key, std::vector<std::string> values) {
  Attribute a;
  a.key = std::move(key);
  a.strs = std::move(values);
  return a;
}

/// A Loop of `trips` iterations carrying `a` ([1, 2]) and `rows` ([?, 2]),
/// reading the outer `x` ([1, 2]): each iteration appends a * x to rows
/// (Concat along the first axis) and then sets a = a + x. With
/// `alsoReadRows`, another body op reads rows' argument too, so that the
/// Concat is not its only reader and runs as written. Outputs: a and rows,
/// from the second run of one session (which reuses host storage).
std::vector<Tensor> runAppendLoop(int64_t trips, const Tensor &a,
                                  const Tensor &rows, const Tensor &x,
                                  bool alsoReadRows) {
  ModuleBuilder b;
  std::vector<uint32_t> ins = {b.addInput("trips", DType::I64, {}),
                               b.addInput("a", DType::F32, {1, 2}),
                               b.addInput("rows", DType::F32, rows.shape()),
                               b.addInput("x", DType::F32, {1, 2})};
  std::vector<uint32_t> outs = {b.addHostBuffer(DType::F32, {1, 2}),
                                b.addHostBuffer(DType::F32, {-1, 2})};
  auto f32t = static_cast<int64_t>(DType::F32);
  // Slots: inputs 0-3; arguments 4 (iteration), 5 (condition), 6 (a),
  // 7 (rows); op results 8 (a * x), 9 (a + x), 10 (the Concat), 11 (rows
  // again, with alsoReadRows).
  std::vector<std::string> body = {"host.mul", "host.add", "host.concat"};
  I64s inputs = {2, 6, 3, 2, 6, 3, 2, 7, 8}, counts = {1, 1, 1};
  I64s types = {static_cast<int64_t>(DType::I64),
                0,
                static_cast<int64_t>(DType::I1),
                0,
                f32t,
                2,
                1,
                2,
                f32t,
                2,
                -1,
                2,
                f32t,
                2,
                1,
                2,
                f32t,
                2,
                1,
                2,
                f32t,
                2,
                -1,
                2};
  if (alsoReadRows) {
    body.push_back("host.identity");
    inputs.insert(inputs.end(), {1, 7});
    counts.push_back(1);
    types.insert(types.end(), {f32t, 2, -1, 2});
  }
  std::vector<Attribute> attrs = {
      intAttr("has_max_trip_count", 1),
      intAttr("has_condition", 0),
      intAttr("num_carried", 2),
      intsAttr("outputs", {0, 1}),
      stringsAttr("body", body),
      stringsAttr("body_nodes", std::vector<std::string>(body.size(), "N")),
      intsAttr("body_inputs", inputs),
      intsAttr("body_outputs", counts),
      intsAttr("body_types", types),
      intsAttr("body_yield", {5, 9, 10}),
      intAttr("op2.axis", 0)};
  b.addStep(libraryStep("host.loop", ins, outs, std::move(attrs)));
  b.addOutput("a_out", outs[0]);
  b.addOutput("rows_out", outs[1]);
  Session s(Module::loadFromMemory(b.finish(), "loop.strata"));
  s.setInput(0, Tensor::fromValues<int64_t>(DType::I64, {}, {trips}));
  s.setInput(1, a);
  s.setInput(2, rows);
  s.setInput(3, x);
  s.run();
  s.run();
  return {s.output(0), s.output(1)};
}

} // namespace

TEST(HostLoop, CarriedValuesMoveAndAppendedRowsComeInOrder) {
  Tensor a = f32({1, 2}, {1, -2}), x = f32({1, 2}, {0.5f, 3});
  Tensor rows = f32({1, 2}, {7, 8});
  for (bool alsoRead : {false, true}) {
    for (int64_t trips : {0, 1, 5}) {
      SCOPED_TRACE("trips " + std::to_string(trips) +
                   (alsoRead ? ", rows read twice" : ""));
      std::vector<Tensor> got = runAppendLoop(trips, a, rows, x, alsoRead);
      // The reference: the same recurrence in plain C++.
      std::vector<float> acc = {1, -2}, expectRows = {7, 8};
      for (int64_t t = 0; t < trips; ++t) {
        expectRows.push_back(acc[0] * 0.5f);
        expectRows.push_back(acc[1] * 3);
        acc[0] += 0.5f;
        acc[1] += 3;
      }
      EXPECT_EQ(values<float>(got[0]), acc);
      EXPECT_EQ(got[1].shape(), (Shape{1 + trips, 2}));
      EXPECT_EQ(values<float>(got[1]), expectRows);
    }
  }
}

TEST(HostLoop, AppendedRowsOfAnotherWidthAreAnError) {
  // rows is [1, 3] but a * x is [1, 2]: the Concat's shapes disagree.
  std::string error = errorOf([] {
    runAppendLoop(2, f32({1, 2}, {1, 2}), f32({1, 3}, {1, 2, 3}),
                  f32({1, 2}, {1, 1}), false);
  });
  EXPECT_THAT(error, HasSubstr("step 0 ('host.loop'"));
  EXPECT_THAT(error, HasSubstr("[1, 2]"));
}

TEST(HostScatterElements, WholeRowsAfterTheAxisMatchElementByElement) {
  // data [4, 2, 3], scattered along axis 0 by indices [3, 2, 3]: rows 0 and
  // 2 of the indices hold one value each (copied at once), row 1 does not.
  Shape shape = {4, 2, 3}, ishape = {3, 2, 3};
  std::vector<float> data(24), updates(18);
  for (int i = 0; i < 24; ++i)
    data[i] = static_cast<float>(i);
  for (int i = 0; i < 18; ++i)
    updates[i] = 100.0f + static_cast<float>(i);
  I64s indices = {3, 3, 3, 3, 3, 3, 0, 1, 2, 3, 0, 1, -4, -4, -4, -4, -4, -4};
  // The reference: ONNX's definition, one element at a time.
  std::vector<float> expect = data;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k) {
        int64_t n = (i * 2 + j) * 3 + k, target = indices[n];
        if (target < 0)
          target += 4;
        expect[(target * 2 + j) * 3 + k] = updates[n];
      }
  std::vector<Tensor> got =
      runOnce("host.scatter_elements",
              {f32(shape, data), i64(ishape, indices), f32(ishape, updates)},
              {{DType::F32, shape}}, {intAttr("axis", 0)});
  EXPECT_EQ(values<float>(got[0]), expect);
  // An index out of range is an error in either form.
  indices[0] = 4;
  EXPECT_THAT(
      runError("host.scatter_elements",
               {f32(shape, data), i64(ishape, indices), f32(ishape, updates)},
               {{DType::F32, shape}}, {intAttr("axis", 0)}),
      HasSubstr("4"));
}

TEST(HostEinsum, ProductsDiagonalsAndBroadcastsMatchLoops) {
  auto equation = [](std::string eq) {
    Attribute a;
    a.key = "equation";
    a.str = std::move(eq);
    return a;
  };
  std::vector<float> a(2 * 3 * 4), b(2 * 4 * 5), m(9);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<float>(i % 5) * 0.5f;
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = static_cast<float>(i);
  // A batched product, as written and as the implicit form spells it.
  std::vector<float> expect(2 * 3 * 5, 0);
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k)
        for (int j = 0; j < 4; ++j)
          expect[(p * 3 + i) * 5 + k] +=
              a[(p * 3 + i) * 4 + j] * b[(p * 4 + j) * 5 + k];
  for (const char *eq : {"bij,bjk->bik", "...ij,...jk->...ik"}) {
    SCOPED_TRACE(eq);
    std::vector<Tensor> got =
        runOnce("host.einsum", {f32({2, 3, 4}, a), f32({2, 4, 5}, b)},
                {{DType::F32, {-1, -1, -1}}}, {equation(eq)});
    EXPECT_EQ(got[0].shape(), (Shape{2, 3, 5}));
    EXPECT_EQ(values<float>(got[0]), expect);
  }
  // The diagonal, the trace and a transpose by the implicit output order.
  EXPECT_EQ(
      values<float>(runOnce("host.einsum", {f32({3, 3}, m)},
                            {{DType::F32, {-1}}}, {equation("ii->i")})[0]),
      (std::vector<float>{0, 4, 8}));
  EXPECT_EQ(values<float>(runOnce("host.einsum", {f32({3, 3}, m)},
                                  {{DType::F32, {}}}, {equation("ii")})[0]),
            (std::vector<float>{12}));
  EXPECT_EQ(
      values<float>(runOnce("host.einsum", {f32({3, 3}, m)},
                            {{DType::F32, {-1, -1}}}, {equation("ji")})[0]),
      (std::vector<float>{0, 3, 6, 1, 4, 7, 2, 5, 8}));
  // Ellipsis axes broadcast: [2, 3, 4] against [1, 4, 5] (first axis 1).
  std::vector<float> b1(b.begin(), b.begin() + 20);
  std::vector<Tensor> broadcast =
      runOnce("host.einsum", {f32({2, 3, 4}, a), f32({1, 4, 5}, b1)},
              {{DType::F32, {-1, -1, -1}}}, {equation("...ij,...jk->...ik")});
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k) {
        float sum = 0;
        for (int j = 0; j < 4; ++j)
          sum += a[(p * 3 + i) * 4 + j] * b1[j * 5 + k];
        EXPECT_EQ(broadcast[0].data<float>()[(p * 3 + i) * 5 + k], sum);
      }
  // Sizes that disagree name the input.
  EXPECT_THAT(runError("host.einsum", {f32({2, 3, 4}, a), f32({2, 4, 5}, b)},
                       {{DType::F32, {-1, -1, -1}}},
                       {equation("bij,bik->bjk")}),
              HasSubstr("input 1"));
}
