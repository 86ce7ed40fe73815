//===- CApiTest.cpp - Tests of the C API (strata/runtime_c.h) ---*- C++ -*-===//
//
// The C API over the add module (TestModules.h): signatures, a run, and each
// kind of failure with its status and message; the library must stay usable
// after every one of them.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "strata/runtime_c.h"

#include <thread>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

strata_module *loadAdd(std::vector<int64_t> xShape = {2, 3}) {
  std::vector<uint8_t> bytes = addModuleBuilder(xShape).finish();
  strata_module *module = nullptr;
  EXPECT_EQ(strata_module_load_from_memory(bytes.data(), bytes.size(),
                                           "add.strata", &module),
            STRATA_OK)
      << strata_last_error();
  return module;
}

const float kX[6] = {1, 2, 3, 4, 5, 6};
const int64_t kShape[2] = {2, 3};

} // namespace

TEST(CApi, RunsAdd) {
  strata_module *module = loadAdd();
  ASSERT_NE(module, nullptr);
  EXPECT_STREQ(strata_module_target(module), "cpu");
  ASSERT_EQ(strata_module_num_inputs(module), 1u);
  ASSERT_EQ(strata_module_num_outputs(module), 1u);
  strata_tensor_info in;
  ASSERT_EQ(strata_module_input(module, 0, &in), STRATA_OK);
  EXPECT_STREQ(in.name, "x");
  EXPECT_EQ(in.dtype, STRATA_F32);
  ASSERT_EQ(in.rank, 2u);
  EXPECT_EQ(in.shape[0], 2);
  EXPECT_EQ(in.shape[1], 3);

  strata_session_options *options = nullptr;
  ASSERT_EQ(strata_session_options_create(&options), STRATA_OK);
  ASSERT_EQ(strata_session_options_set_threads(options, 2), STRATA_OK);
  // A CPU module ignores the CUDA options.
  ASSERT_EQ(strata_session_options_set_cuda_library_tuning(options, 0),
            STRATA_OK);
  ASSERT_EQ(
      strata_session_options_set_cuda_library_choices(options, "unused.txt"),
      STRATA_OK);
  strata_session *session = nullptr;
  ASSERT_EQ(strata_session_create(module, options, &session), STRATA_OK);
  strata_session_options_free(options);
  // Its choices are a CUDA session's.
  const char *choices = "unset";
  EXPECT_EQ(strata_session_cuda_library_choices(session, &choices),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(choices, nullptr);
  EXPECT_THAT(strata_last_error(), HasSubstr("targets 'cpu', not 'cuda'"));
  // The session keeps the module alive.
  strata_module_free(module);

  ASSERT_EQ(strata_session_set_input(session, "x", STRATA_F32, kShape, 2, kX,
                                     sizeof kX),
            STRATA_OK);
  ASSERT_EQ(strata_session_run(session), STRATA_OK) << strata_last_error();
  strata_tensor_info out;
  const void *data = nullptr;
  size_t size = 0;
  ASSERT_EQ(strata_session_output(session, "y", &out, &data, &size), STRATA_OK);
  EXPECT_STREQ(out.name, "y");
  EXPECT_EQ(out.dtype, STRATA_F32);
  ASSERT_EQ(out.rank, 2u);
  EXPECT_EQ(out.shape[1], 3);
  ASSERT_EQ(size, 6 * sizeof(float));
  const float *y = static_cast<const float *>(data);
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{11, 22, 33, 44, 55, 66}));
  EXPECT_STREQ(strata_last_error(), "");
  strata_session_free(session);
}

// strata_session_bind_input reads the caller's memory in place: a change
// made after binding is what the run sees; its checks are set_input's.
TEST(CApi, BoundInputsAreReadInPlace) {
  strata_module *module = loadAdd();
  ASSERT_NE(module, nullptr);
  strata_session *session = nullptr;
  ASSERT_EQ(strata_session_create(module, nullptr, &session), STRATA_OK);
  strata_module_free(module);
  float x[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(strata_session_bind_input(session, "x", STRATA_F32, kShape, 2, x,
                                      sizeof x),
            STRATA_OK)
      << strata_last_error();
  x[5] = -60.f;
  ASSERT_EQ(strata_session_run(session), STRATA_OK) << strata_last_error();
  const void *data = nullptr;
  ASSERT_EQ(strata_session_output(session, "y", nullptr, &data, nullptr),
            STRATA_OK);
  EXPECT_EQ(static_cast<const float *>(data)[5], 0.f);
  EXPECT_EQ(strata_session_bind_input(session, "x", STRATA_F32, kShape, 2, x,
                                      sizeof x - 4),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("f32[2, 3] takes 24 bytes, 20 were given"));
  EXPECT_EQ(strata_session_bind_input(session, "x", STRATA_F32, kShape, 2,
                                      nullptr, sizeof x),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("strata_session_bind_input: data is NULL"));
  strata_session_free(session);
}

// strata_session_bind_output: each run writes the output into the
// caller's memory, strata_session_output refuses it, NULL unbinds.
TEST(CApi, BoundOutputsAreWrittenInPlace) {
  strata_module *module = loadAdd();
  ASSERT_NE(module, nullptr);
  strata_session *session = nullptr;
  ASSERT_EQ(strata_session_create(module, nullptr, &session), STRATA_OK);
  strata_module_free(module);
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {};
  ASSERT_EQ(strata_session_bind_input(session, "x", STRATA_F32, kShape, 2, x,
                                      sizeof x),
            STRATA_OK);
  ASSERT_EQ(strata_session_bind_output(session, "y", y, sizeof y), STRATA_OK)
      << strata_last_error();
  ASSERT_EQ(strata_session_run(session), STRATA_OK) << strata_last_error();
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{11, 22, 33, 44, 55, 66}));
  EXPECT_EQ(strata_session_output(session, "y", nullptr, nullptr, nullptr),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(), HasSubstr("written into the caller's"));
  EXPECT_EQ(strata_session_bind_output(session, "y", y, sizeof y - 4),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("output 'y': f32[2, 3] takes 24 bytes, 20 were given"));
  EXPECT_EQ(strata_session_bind_output(session, "z", y, sizeof y),
            STRATA_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(strata_session_bind_output(session, "y", nullptr, 0), STRATA_OK);
  ASSERT_EQ(strata_session_run(session), STRATA_OK) << strata_last_error();
  const void *data = nullptr;
  ASSERT_EQ(strata_session_output(session, "y", nullptr, &data, nullptr),
            STRATA_OK);
  EXPECT_EQ(static_cast<const float *>(data)[0], 11.f);
  strata_session_free(session);
}

TEST(CApi, CorruptModulesAreRefused) {
  std::vector<uint8_t> bytes = addModuleBytes();
  strata_module *module = reinterpret_cast<strata_module *>(&bytes);
  // Truncated: the module is refused, and *module is cleared.
  EXPECT_EQ(strata_module_load_from_memory(bytes.data(), bytes.size() / 2,
                                           "half.strata", &module),
            STRATA_ERROR_INVALID_MODULE);
  EXPECT_EQ(module, nullptr);
  EXPECT_THAT(strata_last_error(), HasSubstr("'half.strata'"));
  // One byte of a constant changed: the checksum catches it.
  bytes[bytes.size() - 9] ^= 0x40;
  EXPECT_EQ(strata_module_load_from_memory(bytes.data(), bytes.size(),
                                           "flipped.strata", &module),
            STRATA_ERROR_INVALID_MODULE);
  EXPECT_THAT(strata_last_error(), HasSubstr("'flipped.strata'"));
  EXPECT_EQ(strata_module_load("/nonexistent/m.strata", &module),
            STRATA_ERROR_INVALID_MODULE);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("'/nonexistent/m.strata': cannot open the file"));
  // And the library still works.
  module = loadAdd();
  EXPECT_NE(module, nullptr);
  strata_module_free(module);
}

TEST(CApi, BadInputsAreNamed) {
  strata_module *module = loadAdd();
  strata_session *session = nullptr;
  ASSERT_EQ(strata_session_create(module, nullptr, &session), STRATA_OK);
  strata_module_free(module);

  EXPECT_EQ(strata_session_set_input(session, "z", STRATA_F32, kShape, 2, kX,
                                     sizeof kX),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("has no input named 'z' (its inputs are 'x')"));

  const int64_t wide[2] = {2, 4};
  float x8[8] = {};
  EXPECT_EQ(strata_session_set_input(session, "x", STRATA_F32, wide, 2, x8,
                                     sizeof x8),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("input 'x' expects f32[2, 3], got f32[2, 4]"));

  EXPECT_EQ(strata_session_set_input(session, "x", STRATA_I32, kShape, 2, kX,
                                     sizeof kX),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(), HasSubstr("(element type differs)"));

  EXPECT_EQ(strata_session_set_input(session, "x", STRATA_F32, kShape, 2, kX,
                                     sizeof kX - 1),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("input 'x': f32[2, 3] takes 24 bytes, 23 were given"));

  const int64_t negative[2] = {-2, 3};
  EXPECT_EQ(strata_session_set_input(session, "x", STRATA_F32, negative, 2, kX,
                                     sizeof kX),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(), HasSubstr("is not static"));

  const int64_t huge[2] = {int64_t(1) << 62, 8};
  EXPECT_EQ(strata_session_set_input(session, "x", STRATA_F32, huge, 2, kX,
                                     sizeof kX),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(), HasSubstr("too many"));

  EXPECT_EQ(strata_session_set_input(session, "x",
                                     static_cast<strata_dtype>(99), kShape, 2,
                                     kX, sizeof kX),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(), HasSubstr("99 is not a strata_dtype"));

  // Nothing bound yet: the run names the input; outputs are not there.
  EXPECT_EQ(strata_session_run(session), STRATA_ERROR_RUNTIME);
  EXPECT_THAT(strata_last_error(), HasSubstr("input 'x' was not set"));
  EXPECT_EQ(strata_session_output(session, "y", nullptr, nullptr, nullptr),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("is not available before a successful run()"));

  // The session still runs once given a good input.
  ASSERT_EQ(strata_session_set_input(session, "x", STRATA_F32, kShape, 2, kX,
                                     sizeof kX),
            STRATA_OK);
  EXPECT_EQ(strata_session_run(session), STRATA_OK);
  EXPECT_EQ(strata_session_output(session, "w", nullptr, nullptr, nullptr),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(), HasSubstr("(its outputs are 'y')"));
  strata_session_free(session);
}

TEST(CApi, NullArgumentsAreNamed) {
  strata_module *module = nullptr;
  EXPECT_EQ(strata_module_load(nullptr, &module),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(strata_last_error(), "strata_module_load: path is NULL");
  EXPECT_EQ(strata_session_run(nullptr), STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(strata_last_error(), "strata_session_run: session is NULL");
  strata_session *session = nullptr;
  EXPECT_EQ(strata_session_create(nullptr, nullptr, &session),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(strata_module_input(nullptr, 0, nullptr),
            STRATA_ERROR_INVALID_ARGUMENT);
  module = loadAdd();
  strata_tensor_info info;
  EXPECT_EQ(strata_module_output(module, 1, &info),
            STRATA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(strata_last_error(), HasSubstr("has no output 1 (it has 1)"));
  strata_module_free(module);
  // The free functions accept NULL.
  strata_module_free(nullptr);
  strata_session_free(nullptr);
  strata_session_options_free(nullptr);
}

TEST(CApi, LastErrorIsPerThread) {
  strata_module *module = nullptr;
  EXPECT_EQ(strata_module_load("/nonexistent/a.strata", &module),
            STRATA_ERROR_INVALID_MODULE);
  std::string other = "unset";
  std::thread([&] { other = strata_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_THAT(strata_last_error(), HasSubstr("a.strata"));
}

TEST(CApi, NamesAndSizes) {
  EXPECT_STREQ(strata_status_name(STRATA_ERROR_OUT_OF_MEMORY),
               "STRATA_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(strata_dtype_size(STRATA_BF16), 2u);
  EXPECT_EQ(strata_dtype_size(STRATA_BOOL), 1u);
  EXPECT_EQ(strata_dtype_size(STRATA_STRING), 0u);
  EXPECT_EQ(strata_dtype_size(static_cast<strata_dtype>(40)), 0u);
  EXPECT_STREQ(strata_dtype_name(STRATA_I64), "i64");
  EXPECT_STRNE(strata_version(), "");
}
