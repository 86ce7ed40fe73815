//===- CudaLtTest.cpp - cuBLASLt library steps on the GPU -------*- C++ -*-===//
//
// "cublaslt.matmul" steps (runtime/lib/cuda/CublasLt.h) in modules built
// here, run on the GPU and checked against a float64 product computed on the
// host from the same (rounded) inputs: every type, both transpositions, the
// bias, the C input with alpha and beta, ReLU and tanh-GELU, broadcast
// batches, several runs (the CUDA graph replays), and the errors for steps
// that break the contract. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "strata/Runtime/Cuda.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

struct Case {
  DType type = DType::F32;
  std::vector<int64_t> a, b; // as stored (transposed when trans_*)
  bool transA = false, transB = false;
  bool bias = false;
  std::vector<int64_t> c; // empty: no C
  double alpha = 1, beta = 1;
  std::string activation;
};

/// The batch (product of all but the last two dims) or 1.
int64_t batchOf(const std::vector<int64_t> &s) {
  int64_t p = 1;
  for (size_t i = 0; i + 2 < s.size(); ++i)
    p *= s[i];
  return p;
}

/// Runs the case three times against the float64 product; returns what the
/// session says its library step did (CudaSessionInfo::libraryCalls), and
/// in `choices` the algorithms it ran (CudaSessionInfo::libraryChoices).
std::string runCase(const Case &k, double tolerance,
                    std::string *choices = nullptr) {
  std::mt19937 rng(42);
  size_t ra = k.a.size(), rb = k.b.size();
  int64_t m = k.a[ra - (k.transA ? 1 : 2)], kk = k.a[ra - (k.transA ? 2 : 1)];
  int64_t n = k.b[rb - (k.transB ? 2 : 1)];
  // The output's batch is the longer operand's.
  std::vector<int64_t> out =
      (ra >= rb ? std::vector<int64_t>(k.a.begin(), k.a.end() - 2)
                : std::vector<int64_t>(k.b.begin(), k.b.end() - 2));
  out.push_back(m);
  out.push_back(n);
  Data a = make(k.type, k.a, rng), b = make(k.type, k.b, rng);
  Data bias = make(k.type, {n}, rng);
  Data c = make(k.type, k.c.empty() ? std::vector<int64_t>{1} : k.c, rng);

  ModuleBuilder builder;
  builder.setTarget("cuda");
  Step step;
  step.kind = StepKind::Library;
  step.name = "cublaslt.matmul";
  step.sourceNodes = {"MatMul_0"};
  step.inputs = {builder.addInput("a", k.type, k.a),
                 builder.addConstant(b.tensor)};
  if (k.bias)
    step.inputs.push_back(builder.addConstant(bias.tensor));
  if (!k.c.empty())
    step.inputs.push_back(builder.addInput("c", k.type, k.c));
  uint32_t y = builder.addArenaBuffer(k.type, out);
  step.outputs = {y};
  step.attributes = {
      {"trans_a", {k.transA}, {}, ""},     {"trans_b", {k.transB}, {}, ""},
      {"has_bias", {k.bias}, {}, ""},      {"has_c", {!k.c.empty()}, {}, ""},
      {"alpha", {}, {k.alpha}, ""},        {"beta", {}, {k.beta}, ""},
      {"activation", {}, {}, k.activation}};
  builder.addStep(step);
  builder.addOutput("y", y);
  Session session(Module::loadFromMemory(builder.finish(), "lt.strata"));

  int64_t batch = batchOf(out);
  int64_t strideA = batchOf(k.a) == 1 ? 0 : m * kk;
  int64_t strideB = batchOf(k.b) == 1 ? 0 : kk * n;
  int64_t strideC = k.c.empty() || batchOf(k.c) == 1 ? 0 : m * n;
  std::vector<double> ref(size_t(batch * m * n));
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t q = 0; q < kk; ++q) {
          double x =
              a.values[p * strideA + (k.transA ? q * m + i : i * kk + q)];
          double w =
              b.values[p * strideB + (k.transB ? j * kk + q : q * n + j)];
          acc += x * w;
        }
        double v = k.alpha * acc;
        if (!k.c.empty())
          v += k.beta * c.values[p * strideC + i * n + j];
        if (k.bias)
          v += bias.values[j];
        if (k.activation == "relu")
          v = std::max(v, 0.0);
        else if (k.activation == "gelu_tanh")
          v = 0.5 * v *
              (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        ref[p * m * n + i * n + j] = v;
      }
  double scale = 0;
  for (double v : ref)
    scale = std::max(scale, std::abs(v));

  for (int run = 0; run < 3; ++run) {
    session.setInput("a", a.tensor);
    if (!k.c.empty())
      session.setInput("c", c.tensor);
    session.run();
    const Tensor &got = session.output("y");
    EXPECT_EQ(got.shape(), out);
    if (got.shape() != out)
      return "";
    auto [worst, at] = worstError(got, ref);
    EXPECT_LE(worst, tolerance * scale)
        << "run " << run << ": element " << at << " is " << valueAt(got, at)
        << ", the float64 product " << ref[at];
  }
  EXPECT_GE(cudaSessionInfo(session).graphRuns, 1u);
  // cudaTimeRuns replays the same graph, the library call in it.
  uint64_t before = cudaSessionInfo(session).graphRuns;
  std::vector<double> ms = cudaTimeRuns(session, 2);
  EXPECT_EQ(ms.size(), 2u);
  EXPECT_GT(ms.empty() ? 0.0 : ms[0], 0.0);
  EXPECT_EQ(cudaSessionInfo(session).graphRuns, before + 2);
  std::vector<std::string> calls = cudaSessionInfo(session).libraryCalls;
  EXPECT_EQ(calls.size(), 1u);
  if (choices)
    *choices = cudaSessionInfo(session).libraryChoices;
  return calls.empty() ? "" : calls[0];
}

/// The lines of a choices file that name algorithms ("step ...").
std::vector<std::string> choiceLines(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("step ", 0) == 0)
      lines.push_back(line);
  return lines;
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

/// The Error a session pinned to `text` throws for the case ("" if none).
std::string pinError(const Case &k, const std::string &text) {
  std::string path = ::testing::TempDir() + "strata-lt-choices.txt";
  writeText(path, text);
  std::string message;
  withEnv("STRATA_CUBLASLT_CHOICES", path.c_str(), [&] {
    try {
      runCase(k, 1e-2);
    } catch (const Error &e) {
      message = e.what();
    }
  });
  return message;
}

} // namespace

TEST(CudaLt, F32Plain) {
  STRATA_REQUIRE_CUDA();
  runCase({DType::F32, {64, 48}, {48, 80}}, 1e-5);
}

TEST(CudaLt, F32TransposedBiasRelu) {
  STRATA_REQUIRE_CUDA();
  Case k{DType::F32, {37, 19}, {53, 37}, true, true, true};
  k.activation = "relu";
  runCase(k, 1e-5);
}

// A batch of products sharing B runs as one product of all its rows.
TEST(CudaLt, Bf16BatchBiasResidualGelu) {
  STRATA_REQUIRE_CUDA();
  Case k{DType::BF16, {3, 2, 33, 40}, {40, 24}, false, false, true};
  k.c = {3, 2, 33, 24};
  k.activation = "gelu_tanh";
  EXPECT_THAT(runCase(k, 1e-2), HasSubstr("as one product of 198 rows"));
}

// Transposed A ([batch, K, M]) keeps the strided batch: its rows do not
// follow on across the batch.
TEST(CudaLt, Bf16BatchTransposedAStaysBatched) {
  STRATA_REQUIRE_CUDA();
  Case k{DType::BF16, {3, 40, 33}, {40, 24}, true, false};
  std::string call = runCase(k, 1e-2);
  EXPECT_THAT(call, HasSubstr("3 x 33x40x24"));
  EXPECT_THAT(call, ::testing::Not(HasSubstr("as one product")));
}

// Rows of 37 bf16 values (74 bytes): every row but the first starts off a
// 16-byte boundary, which the heuristic's alignments must allow for.
TEST(CudaLt, Bf16OddColumns) {
  STRATA_REQUIRE_CUDA();
  Case k{DType::BF16, {2, 40, 32}, {37, 32}, false, true, true};
  runCase(k, 1e-2);
}

// Output rows of 37 bf16 values, the product split into one per class of
// rows starting at the same offset from a 16-byte boundary and two for the
// columns before and after the classes' (CublasLt.h): 8 classes, a
// batch folded into 2 x 45 rows (the last classes one row short), C read
// at the same offsets, the bias from each part's first column (copied to
// aligned addresses), ReLU; every part tuned.
TEST(CudaLt, Bf16UnalignedRowsRunInParts) {
  STRATA_REQUIRE_CUDA();
  withEnv("STRATA_CUBLASLT_SPLIT_MIN_FLOPS", "0", [] {
    withEnv("STRATA_CUBLASLT_TUNE_MIN_FLOPS", "0", [] {
      Case k{DType::BF16, {2, 45, 64}, {37, 64}, false, true, true};
      k.c = {2, 45, 37};
      k.beta = 0.5;
      k.activation = "relu";
      std::string call = runCase(k, 1e-2);
      EXPECT_THAT(call, HasSubstr("'MatMul_0'"));
      EXPECT_THAT(call, HasSubstr("as 10 products: rows of 74 bytes"));
      // From columns 3, 6, 1, 4, 7, 2, 5 (the classes) and 30 (the edge
      // after them): 8 copies; the edge before them starts at column 0.
      EXPECT_THAT(call, HasSubstr("the bias copied to 8 aligned addresses"));
    });
  });
}

// bf16 rows of 75 values (150 bytes) over 2 x 64 rows, with C and ReLU and
// no bias: the 8 classes of 16 rows are one batched product (class j from
// column 5 j, 40 columns each), between the products of the 35 columns
// before and after them; with STRATA_CUBLASLT_CLASS_BATCH=0, a call per
// class as with a bias.
TEST(CudaLt, Bf16UnalignedRowsAsOneBatchedProduct) {
  STRATA_REQUIRE_CUDA();
  withEnv("STRATA_CUBLASLT_SPLIT_MIN_FLOPS", "0", [] {
    withEnv("STRATA_CUBLASLT_TUNE_MIN_FLOPS", "0", [] {
      Case k{DType::BF16, {2, 64, 64}, {75, 64}, false, true};
      k.c = {2, 64, 75};
      k.beta = 0.5;
      k.activation = "relu";
      std::string call = runCase(k, 1e-2);
      EXPECT_THAT(call, HasSubstr("as 3 products: rows of 150 bytes, 8 "
                                  "classes of aligned rows in one batched "
                                  "product; parts 128x64x35"));
      EXPECT_THAT(call, HasSubstr(", 8 x 16x64x40 (algorithm"));
      withEnv("STRATA_CUBLASLT_CLASS_BATCH", "0", [&] {
        EXPECT_THAT(runCase(k, 1e-2), HasSubstr("as 10 products"));
      });
    });
  });
}

// f32 rows of 1001 values (4 classes) with fewer rows than classes' worth
// in the last: 10 rows; and the same product below the size that pays for
// the extra calls (the default threshold) stays one call.
TEST(CudaLt, F32UnalignedRowsRunInParts) {
  STRATA_REQUIRE_CUDA();
  Case k{DType::F32, {10, 32}, {1001, 32}, false, true};
  withEnv("STRATA_CUBLASLT_SPLIT_MIN_FLOPS", "0", [&] {
    EXPECT_THAT(runCase(k, 1e-5), HasSubstr("as 6 products: rows of 4004"));
  });
  std::string call = runCase(k, 1e-5);
  EXPECT_THAT(call, HasSubstr("f32 10x32x1001"));
  EXPECT_THAT(call, Not(HasSubstr("products")));
}

// Every product tuned (CudaSession.cpp, tuneLibrarySteps: each of the
// heuristic's candidates timed on the step's buffers): the chosen
// algorithm computes the same product, with the default number of
// candidates and with the most the session asks for.
TEST(CudaLt, TunedAlgorithmsStayCorrect) {
  STRATA_REQUIRE_CUDA();
  withEnv("STRATA_CUBLASLT_TUNE_MIN_FLOPS", "0", [] {
    Case k{DType::BF16, {3, 64, 96}, {96, 80}, false, false, true};
    k.activation = "gelu_tanh";
    runCase(k, 1e-2);
    withEnv("STRATA_CUBLASLT_CANDIDATES", "64", [&] { runCase(k, 1e-2); });
  });
}

// A session's cuBLASLt algorithms, timed for each of a split product's
// three calls, written as CudaSessionInfo::libraryChoices and pinned in
// another session (SessionOptions::Cuda::libraryChoices, here through
// STRATA_CUBLASLT_CHOICES): it runs the same algorithms, untimed, with the
// same results; a file for another product is refused, naming the step.
TEST(CudaLt, PinnedChoicesRunAgain) {
  STRATA_REQUIRE_CUDA();
  withEnv("STRATA_CUBLASLT_SPLIT_MIN_FLOPS", "0", [] {
    withEnv("STRATA_CUBLASLT_TUNE_MIN_FLOPS", "0", [] {
      Case k{DType::BF16, {2, 64, 64}, {75, 64}, false, true};
      k.c = {2, 64, 75};
      k.beta = 0.5;
      std::string timed;
      EXPECT_THAT(runCase(k, 1e-2, &timed), HasSubstr("(algorithm"));
      EXPECT_EQ(timed.rfind("# strata cuBLASLt choices 1\n", 0), 0u) << timed;
      std::vector<std::string> lines = choiceLines(timed);
      ASSERT_EQ(lines.size(), 3u) << timed;
      EXPECT_THAT(lines[1], HasSubstr("step 0 part 1 shape 8x16x64x40 algo "));

      std::string path = ::testing::TempDir() + "strata-lt-pinned.txt";
      writeText(path, timed);
      std::string pinned, call;
      withEnv("STRATA_CUBLASLT_CHOICES", path.c_str(),
              [&] { call = runCase(k, 1e-2, &pinned); });
      EXPECT_THAT(call, HasSubstr(", 8 x 16x64x40 (pinned)"));
      EXPECT_EQ(choiceLines(pinned), lines);

      auto replaced = [&](const std::string &from, const std::string &to) {
        std::string text = timed;
        size_t at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return at == std::string::npos ? text
                                       : text.replace(at, from.size(), to);
      };
      EXPECT_THAT(pinError(k, replaced("shape 8x16x64x40", "shape 8x16x64x48")),
                  HasSubstr("part 1 is 8x16x64x40 here, 8x16x64x48 in the "
                            "file"));
      EXPECT_THAT(pinError(k, replaced(lines[2] + "\n", "")),
                  HasSubstr("has no algorithm for step 0 ('cublaslt.matmul'"));
      EXPECT_THAT(pinError(k, replaced("# strata", "# other")),
                  HasSubstr(":1: not a choices file"));
      EXPECT_THAT(pinError(k, replaced(" algo ", " algo 0")),
                  HasSubstr(":3: the algorithm is not 128 hex digits"));
      EXPECT_THAT(pinError(k, timed + lines[0] + "\n"),
                  HasSubstr("part 0 is listed twice"));
      EXPECT_THAT(pinError(k, "# strata cuBLASLt choices 1\nstep 7 part 0 "
                              "shape 1x1x1 algo " +
                                  std::string(128, '0') + "\n"),
                  HasSubstr(":2: step 7 is not a cuBLASLt call"));
    });
  });
}

TEST(CudaLt, F16BroadcastAlphaBeta) {
  STRATA_REQUIRE_CUDA();
  Case k{DType::F16, {17, 64}, {4, 64, 32}};
  k.c = {4, 17, 32};
  k.alpha = 2;
  k.beta = 0.5;
  runCase(k, 4e-3);
}

TEST(CudaLt, BadStepsAreNamed) {
  STRATA_REQUIRE_CUDA();
  auto build = [](std::vector<int64_t> aShape, DType bType,
                  std::string activation) {
    ModuleBuilder builder;
    builder.setTarget("cuda");
    Step step;
    step.kind = StepKind::Library;
    step.name = "cublaslt.matmul";
    step.sourceNodes = {"Gemm_7"};
    step.inputs = {builder.addInput("a", DType::F32, aShape),
                   builder.addInput("b", bType, {8, 4})};
    uint32_t y = builder.addArenaBuffer(DType::F32, {2, 4});
    step.outputs = {y};
    step.attributes = {{"activation", {}, {}, activation}};
    builder.addStep(step);
    builder.addOutput("y", y);
    return Module::loadFromMemory(builder.finish(), "bad-lt.strata");
  };
  EXPECT_THAT(errorOf([&] {
                Session s(build({2, 7}, DType::F32, ""));
              }),
              HasSubstr("are not a non-empty matrix product"));
  EXPECT_THAT(errorOf([&] {
                Session s(build({2, 8}, DType::F16, ""));
              }),
              HasSubstr("every operand must be f32"));
  std::string e = errorOf([&] {
    Session s(build({2, 8}, DType::F32, "gelu_erf"));
  });
  EXPECT_THAT(e, HasSubstr("'Gemm_7'"));
  EXPECT_THAT(e, HasSubstr("activation 'gelu_erf' is not one of cuBLASLt's"));
}
