//===- CudnnConvTest.cpp - cuDNN convolution steps on the GPU ---*- C++ -*-===//
//
// "cudnn.conv" steps (runtime/lib/cuda/Cudnn.h) in modules built here, run
// on the GPU and checked against a float64 convolution computed on the host
// from the same (rounded) inputs: every type, 1, 2 and 3 spatial
// dimensions, strides, dilations, asymmetric pads, groups, a 7x7 stem over 3
// channels, the bias, the residual Z and ReLU on and off, several runs with
// new inputs (the CUDA graph replays) and the plans timed. Skipped without
// a GPU; where cuDNN cannot be loaded on a GPU the tests fail with the
// loader's message. The errors for steps that break the contract need no
// GPU: the session's plan checks name them before the driver is touched.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "strata/Runtime/Cuda.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// Skips a GPU test where this runtime cannot run cuDNN steps at all (its
/// build found no cudnn.h: test NotBuiltIsNamed checks the message).
#if STRATA_HAVE_CUDNN
#define STRATA_REQUIRE_CUDNN_BUILD()                                           \
  do {                                                                         \
  } while (0)
#else
#define STRATA_REQUIRE_CUDNN_BUILD()                                           \
  GTEST_SKIP() << "this runtime was built without cudnn.h"
#endif

/// One convolution: X [n, in..., c], W [f, kernel..., c / group].
struct Conv {
  DType type = DType::BF16;
  int64_t n = 2, c = 32, f = 64;
  std::vector<int64_t> in = {14, 14}, kernel = {3, 3};
  std::vector<int64_t> strides = {1, 1}, dilations = {1, 1};
  std::vector<int64_t> pads = {1, 1, 1, 1}; // begins, then ends
  int64_t group = 1;
  bool bias = false, z = false;
  std::string activation;

  size_t d() const { return in.size(); }
  std::vector<int64_t> out() const {
    std::vector<int64_t> o(d());
    for (size_t i = 0; i < d(); ++i)
      o[i] = (in[i] + pads[i] + pads[d() + i] - dilations[i] * (kernel[i] - 1) -
              1) /
                 strides[i] +
             1;
    return o;
  }
  std::vector<int64_t> xShape() const { return shape(n, in, c); }
  std::vector<int64_t> wShape() const { return shape(f, kernel, c / group); }
  std::vector<int64_t> yShape() const { return shape(n, out(), f); }
  static std::vector<int64_t>
  shape(int64_t outer, const std::vector<int64_t> &spatial, int64_t inner) {
    std::vector<int64_t> s = {outer};
    s.insert(s.end(), spatial.begin(), spatial.end());
    s.push_back(inner);
    return s;
  }
};

/// The step's module: X (and Z) inputs, W and the bias constants, Y in the
/// arena; `edit` changes the step before it is added.
std::shared_ptr<const Module>
convModule(const Conv &k, const Tensor &w, const Tensor &bias,
           const std::function<void(Step &, ModuleBuilder &)> &edit = {}) {
  ModuleBuilder builder;
  builder.setTarget("cuda");
  Step step;
  step.kind = StepKind::Library;
  step.name = "cudnn.conv";
  step.sourceNodes = {"Conv_7"};
  step.inputs = {builder.addInput("x", k.type, k.xShape()),
                 builder.addConstant(w)};
  if (k.bias)
    step.inputs.push_back(builder.addConstant(bias));
  if (k.z)
    step.inputs.push_back(builder.addInput("z", k.type, k.yShape()));
  uint32_t y = builder.addArenaBuffer(k.type, k.yShape());
  step.outputs = {y};
  step.attributes = {{"strides", k.strides, {}, ""},
                     {"dilations", k.dilations, {}, ""},
                     {"pads", k.pads, {}, ""},
                     {"group", {k.group}, {}, ""},
                     {"has_bias", {k.bias}, {}, ""},
                     {"has_z", {k.z}, {}, ""},
                     {"activation", {}, {}, k.activation}};
  if (edit)
    edit(step, builder);
  builder.addStep(step);
  builder.addOutput("y", y);
  return Module::loadFromMemory(builder.finish(), "conv.strata");
}

/// The float64 convolution (cross-correlation) of the rounded values, then
/// the bias, Z and the activation.
std::vector<double> reference(const Conv &k, const std::vector<float> &x,
                              const std::vector<float> &w,
                              const std::vector<float> &bias,
                              const std::vector<float> &z) {
  size_t d = k.d();
  std::vector<int64_t> out = k.out();
  int64_t points = 1, offsets = 1;
  for (size_t i = 0; i < d; ++i)
    points *= out[i], offsets *= k.kernel[i];
  int64_t perGroup = k.c / k.group, filtersPerGroup = k.f / k.group;
  std::vector<double> y(size_t(k.n * points * k.f));
  std::vector<int64_t> o(d), q(d);
  for (int64_t b = 0; b < k.n; ++b)
    for (int64_t p = 0; p < points; ++p) {
      for (int64_t rest = p, i = int64_t(d) - 1; i >= 0; --i)
        o[i] = rest % out[i], rest /= out[i];
      for (int64_t f = 0; f < k.f; ++f) {
        int64_t g = f / filtersPerGroup;
        double acc = 0;
        for (int64_t r = 0; r < offsets; ++r) {
          int64_t kr = r, at = b;
          bool inside = true;
          for (int64_t i = int64_t(d) - 1; i >= 0; --i)
            q[i] = kr % k.kernel[i], kr /= k.kernel[i];
          for (size_t i = 0; i < d; ++i) {
            int64_t s = o[i] * k.strides[i] - k.pads[i] + q[i] * k.dilations[i];
            inside &= s >= 0 && s < k.in[i];
            at = at * k.in[i] + s;
          }
          if (!inside)
            continue;
          const float *xs = &x[size_t(at * k.c + g * perGroup)];
          const float *ws = &w[size_t((f * offsets + r) * perGroup)];
          for (int64_t cc = 0; cc < perGroup; ++cc)
            acc += double(xs[cc]) * double(ws[cc]);
        }
        size_t at = size_t((b * points + p) * k.f + f);
        if (k.bias)
          acc += bias[size_t(f)];
        if (k.z)
          acc += z[at];
        if (k.activation == "relu")
          acc = std::max(acc, 0.0);
        y[at] = acc;
      }
    }
  return y;
}

// The tolerances of CudaLtTest, relative to the largest value: the output's
// rounding (8 bits of bf16, 11 of f16) over an f32 sum; for f32 inputs
// rounded to TF32 (10 bits), that of f16.
constexpr double kBf16 = 1e-2, kF16 = 4e-3, kF32 = 1e-5, kTf32 = 4e-3;

/// Runs the case three times, each with new X (and Z), against the float64
/// convolution; returns what the session says its library step did
/// (CudaSessionInfo::libraryCalls). An f32 convolution that cuDNN runs only
/// in TF32 (its fused forms, Cudnn.cpp) is held to kTf32.
std::string runCase(const Conv &k, double tolerance) {
  std::mt19937 rng(7);
  Data w = make(k.type, k.wShape(), rng, 0.5f);
  Data bias = make(k.type, {k.f}, rng);
  Session session(convModule(k, w.tensor, bias.tensor));
  std::vector<std::string> made = cudaSessionInfo(session).libraryCalls;
  if (k.type == DType::F32 && made.size() == 1 &&
      made[0].find(", TF32") != std::string::npos)
    tolerance = std::max(tolerance, kTf32);
  std::vector<int64_t> yShape = k.yShape();
  for (int run = 0; run < 3; ++run) {
    Data x = make(k.type, k.xShape(), rng);
    Data z = make(k.type, k.z ? yShape : std::vector<int64_t>{1}, rng);
    session.setInput("x", x.tensor);
    if (k.z)
      session.setInput("z", z.tensor);
    session.run();
    const Tensor &got = session.output("y");
    EXPECT_EQ(got.shape(), yShape);
    if (got.shape() != yShape)
      return "";
    std::vector<double> ref =
        reference(k, x.values, w.values, bias.values, z.values);
    double scale = 0;
    for (double v : ref)
      scale = std::max(scale, std::abs(v));
    auto [worst, at] = worstError(got, ref);
    EXPECT_LE(worst, tolerance * scale)
        << "run " << run << ": element " << at << " is " << valueAt(got, at)
        << ", the float64 convolution " << ref[at];
  }
  EXPECT_GE(cudaSessionInfo(session).graphRuns, 1u);
  // cudaTimeRuns replays the same graph, the convolution in it.
  uint64_t before = cudaSessionInfo(session).graphRuns;
  std::vector<double> ms = cudaTimeRuns(session, 2);
  EXPECT_EQ(ms.size(), 2u);
  EXPECT_GT(ms.empty() ? 0.0 : ms[0], 0.0);
  EXPECT_EQ(cudaSessionInfo(session).graphRuns, before + 2);
  std::vector<std::string> calls = cudaSessionInfo(session).libraryCalls;
  EXPECT_EQ(calls.size(), 1u);
  // The choices file is cuBLASLt's alone.
  EXPECT_EQ(cudaSessionInfo(session).libraryChoices, "");
  return calls.empty() ? "" : calls[0];
}

} // namespace

TEST(CudaDnn, Bf16BiasRelu) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.bias = true;
  k.activation = "relu";
  std::string call = runCase(k, kBf16);
  EXPECT_THAT(call, HasSubstr("step 0 ('cudnn.conv', from ONNX node "
                              "'Conv_7'): cuDNN bf16 conv 2x14x14x32 -> "
                              "2x14x14x64, 3x3 stride 1 pad 1, groups 1, "
                              "+bias+relu; engine "));
}

TEST(CudaDnn, Bf16Plain) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  EXPECT_THAT(runCase(Conv{}, kBf16), HasSubstr("groups 1; engine "));
}

TEST(CudaDnn, F16ResidualBiasRelu) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F16;
  k.bias = k.z = true;
  k.activation = "relu";
  EXPECT_THAT(runCase(k, kF16), HasSubstr("+bias+z+relu"));
}

TEST(CudaDnn, F16Residual) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F16;
  k.z = true;
  EXPECT_THAT(runCase(k, kF16), HasSubstr("groups 1, +z;"));
}

// f32 data is convolved in f32 where cuDNN can (Cudnn.cpp takes TF32
// engines only when it has no other): a plain convolution.
TEST(CudaDnn, F32Plain) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F32;
  EXPECT_THAT(runCase(k, kF32), Not(HasSubstr("TF32")));
}

TEST(CudaDnn, F32BiasResidualRelu) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F32;
  k.bias = k.z = true;
  k.activation = "relu";
  runCase(k, kF32);
}

// A grouped convolution with stride 2: 16 groups of 4 channels.
TEST(CudaDnn, Bf16GroupedStride2) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.c = 64;
  k.group = 16;
  k.strides = {2, 2};
  k.bias = true;
  k.activation = "relu";
  EXPECT_THAT(runCase(k, kBf16),
              HasSubstr("bf16 conv 2x14x14x64 -> 2x7x7x64, 3x3 stride 2 pad "
                        "1, groups 16, +bias+relu"));
}

// A 1x1 convolution at stride 1 (the default leaves these to cuBLASLt).
TEST(CudaDnn, F16Pointwise) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F16;
  k.kernel = {1, 1};
  k.pads = {0, 0, 0, 0};
  k.bias = true;
  EXPECT_THAT(runCase(k, kF16),
              HasSubstr("f16 conv 2x14x14x32 -> 2x14x14x64, 1x1 stride 1 pad "
                        "0, groups 1, +bias;"));
}

// A network's stem: 7x7 stride 2 pad 3 over 3 channels (rows of 6 bytes).
TEST(CudaDnn, F16Stem) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F16;
  k.c = 3;
  k.in = {32, 32};
  k.kernel = {7, 7};
  k.strides = {2, 2};
  k.pads = {3, 3, 3, 3};
  k.bias = true;
  k.activation = "relu";
  EXPECT_THAT(runCase(k, kF16),
              HasSubstr("f16 conv 2x32x32x3 -> 2x16x16x64, 7x7 stride 2 pad "
                        "3, groups 1, +bias+relu"));
}

// One spatial dimension (cuDNN sees 2): dilation 2, pads 3 before and 5
// after.
TEST(CudaDnn, Bf16OneDimensional) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.c = 16;
  k.f = 32;
  k.in = {50};
  k.kernel = {5};
  k.strides = {1};
  k.dilations = {2};
  k.pads = {3, 5};
  k.z = true;
  k.activation = "relu";
  EXPECT_THAT(runCase(k, kBf16),
              HasSubstr("bf16 conv 2x50x16 -> 2x50x32, 5 stride 1 dilation 2 "
                        "pads [3, 5], groups 1, +z+relu"));
}

TEST(CudaDnn, F32OneDimensionalStride3) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F32;
  k.c = 8;
  k.f = 16;
  k.in = {40};
  k.kernel = {4};
  k.strides = {3};
  k.dilations = {1};
  k.pads = {0, 0};
  k.bias = true;
  EXPECT_THAT(runCase(k, kF32), HasSubstr("2x40x8 -> 2x13x16, 4 stride 3"));
}

TEST(CudaDnn, F16ThreeDimensional) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F16;
  k.n = 1;
  k.c = 8;
  k.f = 16;
  k.in = {6, 7, 8};
  k.kernel = {3, 3, 3};
  k.strides = {1, 1, 2};
  k.dilations = {1, 1, 1};
  k.pads = {1, 1, 1, 1, 1, 1};
  k.bias = true;
  k.activation = "relu";
  EXPECT_THAT(runCase(k, kF16),
              HasSubstr("f16 conv 1x6x7x8x8 -> 1x6x7x4x16, 3x3x3 stride 1x1x2 "
                        "pad 1, groups 1, +bias+relu"));
}

// Every plan timed (tuneMinFlops 0): the chosen one computes the same
// convolution; with tuning off, the heuristics' first plan, untimed.
TEST(CudaDnn, TunedPlansStayCorrect) {
  STRATA_REQUIRE_CUDA();
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.bias = k.z = true;
  k.activation = "relu";
  withEnv("STRATA_CUBLASLT_TUNE_MIN_FLOPS", "0", [&] {
    std::string call = runCase(k, kBf16);
    EXPECT_THAT(call, ::testing::ContainsRegex(
                          "; engine [0-9]+.* \\(plan [0-9]+ of [0-9]+, "
                          "[0-9.]+ ms\\)$"));
    k.type = DType::F32;
    runCase(k, kF32);
    withEnv("STRATA_CUBLASLT_TUNE", "0",
            [&] { EXPECT_THAT(runCase(k, kF32), Not(HasSubstr("(plan "))); });
  });
}

// The plan checks, made before the driver is touched: every machine names
// the step and what is wrong with it.
TEST(CudaDnn, BadStepsAreNamed) {
  STRATA_REQUIRE_CUDNN_BUILD();
  Conv k;
  k.type = DType::F32;
  k.bias = true;
  std::mt19937 rng(1);
  auto error = [&](const Conv &c,
                   const std::function<void(Step &, ModuleBuilder &)> &edit) {
    std::string message = errorOf([&] {
      Session session(convModule(c, make(c.type, c.wShape(), rng).tensor,
                                 make(c.type, {c.f}, rng).tensor, edit));
    });
    EXPECT_THAT(message, HasSubstr("step 0 ('cudnn.conv', from ONNX node "
                                   "'Conv_7'): "));
    return message;
  };
  auto attr = [](const char *key, std::vector<int64_t> ints) {
    return [key, ints](Step &step, ModuleBuilder &) {
      for (Attribute &a : step.attributes)
        if (a.key == key)
          a.ints = ints;
    };
  };
  // Y 13x13 where the attributes give 14x14.
  EXPECT_THAT(
      error(k,
            [&](Step &step, ModuleBuilder &b) {
              step.outputs = {b.addArenaBuffer(k.type, {2, 13, 13, 64})};
            }),
      HasSubstr("Y [2, 13, 13, 64] does not match X [2, 14, 14, 32] "
                "and W [64, 3, 3, 32] with strides [1, 1], dilations "
                "[1, 1] and pads [1, 1, 1, 1]: its spatial extents "
                "must be [14, 14]"));
  EXPECT_THAT(error(k, attr("group", {2})),
              HasSubstr("X has C = 32 channels and W [64, 3, 3, 32] 64 filters "
                        "of 32 channels: with 2 group(s)"));
  EXPECT_THAT(error(k, attr("pads", {1, 1})),
              HasSubstr("attribute 'pads' must be 4 integers for 2 spatial "
                        "dimensions; it has 2"));
  EXPECT_THAT(error(k, attr("strides", {1, 0})),
              HasSubstr("attribute 'strides' is [1, 0]; each must be at "
                        "least 1"));
  EXPECT_THAT(error(k, attr("has_z", {1})),
              HasSubstr("cudnn.conv takes X, W, the bias, Z and one output; "
                        "the step has 3 inputs and 1 outputs"));
  EXPECT_THAT(error(k,
                    [](Step &step, ModuleBuilder &) {
                      for (Attribute &a : step.attributes)
                        if (a.key == "activation")
                          a.str = "gelu";
                    }),
              HasSubstr("activation 'gelu' is not one that cudnn.conv fuses"));
  EXPECT_THAT(error(k,
                    [&](Step &step, ModuleBuilder &b) {
                      step.inputs[1] = b.addConstant(
                          make(DType::F16, k.wShape(), rng).tensor);
                    }),
              HasSubstr("every operand must be f32 as the output is; buffer"));
  EXPECT_THAT(error(k,
                    [&](Step &step, ModuleBuilder &b) {
                      step.inputs[2] =
                          b.addConstant(make(k.type, {k.f + 1}, rng).tensor);
                    }),
              HasSubstr("the bias [65] must hold F = 64 values"));
  Conv flat = k;
  flat.in = {};
  flat.kernel = {};
  flat.strides = flat.dilations = flat.pads = {};
  EXPECT_THAT(error(flat, {}),
              HasSubstr("X [2, 32], W [64, 32] and Y [2, 64] must be "
                        "channels-last tensors of one rank, 3 to 5"));
  Conv wide = k;
  wide.kernel = {3, 15};
  wide.pads = {1, 0, 1, 0};
  EXPECT_THAT(error(wide,
                    [&](Step &step, ModuleBuilder &b) {
                      step.outputs = {b.addArenaBuffer(k.type, {2, 14, 1, 64})};
                    }),
              HasSubstr("the kernel's spatial dimension 1 (15, dilation 1) "
                        "spans more than X's 14 with its pads"));
}

// Other library names are refused as before, naming what the executor runs.
TEST(CudaDnn, UnknownLibraryIsNamed) {
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t x = b.addInput("x", DType::F32, {2, 4});
  uint32_t y = b.addArenaBuffer(DType::F32, {2, 4});
  b.addStep({StepKind::Library, "cudnn.pool", {x}, {y}, {}, {"Pool_1"}});
  b.addOutput("y", y);
  EXPECT_THAT(errorOf([&] {
                Session s(Module::loadFromMemory(b.finish(), "pool.strata"));
              }),
              HasSubstr("step 0 ('cudnn.pool', from ONNX node 'Pool_1') calls "
                        "library kernel 'cudnn.pool', but the module targets "
                        "'cuda', whose executor runs generated kernels, "
                        "cublaslt.matmul and cudnn.conv"));
}

#if !STRATA_HAVE_CUDNN
// A runtime built without cudnn.h refuses the steps, on any machine.
TEST(CudaDnn, NotBuiltIsNamed) {
  Conv k;
  std::mt19937 rng(1);
  EXPECT_THAT(errorOf([&] {
                Session s(convModule(k, make(k.type, k.wShape(), rng).tensor,
                                     make(k.type, {k.f}, rng).tensor));
              }),
              HasSubstr("step 0 ('cudnn.conv', from ONNX node 'Conv_7') calls "
                        "cudnn.conv, but this runtime was built without "
                        "cudnn.h"));
}
#endif
