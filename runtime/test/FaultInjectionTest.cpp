//===- FaultInjectionTest.cpp - Failed allocations --------------*- C++ -*-===//
//
// Allocation failures injected with strata::rt::testing::failAllocationAfter
// (docs/testing.md, "Failure injection"): every allocation point of loading
// a module, creating a session, binding its inputs, running it and copying
// its outputs is failed in turn. Each failure must be an OutOfMemory whose
// message names the module and what the memory was for, and the same request
// made again must succeed with the right values; a session whose run or
// setInput failed keeps working. The C API reports such a failure as
// STRATA_ERROR_OUT_OF_MEMORY.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include "strata/Runtime/Testing.h"
#include "strata/runtime_c.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

/// Makes `request` meet a failed allocation at each of its allocation points
/// in turn (the first, then the second, ...) until it makes no more. Each
/// failure must be an OutOfMemory, and `request` made again right after must
/// succeed. Returns the failures' messages, in order.
template <typename Request>
std::vector<std::string> failEachAllocation(Request request) {
  std::vector<std::string> messages;
  for (uint64_t n = 0;; ++n) {
    if (n == 1000) {
      ADD_FAILURE() << "more than 1000 allocation points";
      break;
    }
    strata::rt::testing::failAllocationAfter(n);
    bool threw = false;
    std::string message;
    try {
      request();
    } catch (const OutOfMemory &e) {
      threw = true;
      message = e.what();
    } catch (const std::exception &e) {
      strata::rt::testing::clearAllocationFailure();
      ADD_FAILURE() << "allocation " << n << " failed with another exception "
                    << "than OutOfMemory: " << e.what();
      break;
    }
    bool pending = strata::rt::testing::clearAllocationFailure();
    if (!threw) {
      // A request that succeeded although its allocation failed would have
      // swallowed the failure.
      EXPECT_TRUE(pending) << "allocation " << n
                           << " failed, but the request succeeded";
      break;
    }
    EXPECT_FALSE(pending) << message;
    messages.push_back(message);
    try {
      request();
    } catch (const std::exception &e) {
      ADD_FAILURE() << "the request after the failure of allocation " << n
                    << " (" << message << ") failed: " << e.what();
    }
  }
  return messages;
}

/// A module file in the test's temporary directory, removed afterwards.
struct ModuleFile {
  std::string path;
  explicit ModuleFile(const std::vector<uint8_t> &bytes) {
    const char *dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/strata-fault-" +
           std::to_string(getpid()) + ".strata";
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }
  ~ModuleFile() { std::remove(path.c_str()); }
};

const std::vector<float> kX = {1, 2, 3, 4, 5, 6};
const std::vector<float> kY = {11, 22, 33, 44, 55, 66};

Step libraryStep(std::string name, std::vector<uint32_t> inputs,
                 std::vector<uint32_t> outputs) {
  Step step;
  step.kind = StepKind::Library;
  step.name = std::move(name);
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.sourceNodes = {"Node_0"};
  return step;
}

} // namespace

TEST(FaultInjection, HookCountsAndDisarms) {
  // Nothing armed: allocations succeed and nothing is pending.
  EXPECT_FALSE(strata::rt::testing::clearAllocationFailure());
  strata::rt::testing::failAllocationAfter(1);
  Tensor first = Tensor::zeros(DType::F32, {4});
  std::string msg = errorOf([] { Tensor::zeros(DType::I64, {2, 5}); });
  EXPECT_EQ(msg, "cannot allocate 80 bytes for a tensor of i64[2, 5]");
  // Fired once, then disarmed.
  EXPECT_FALSE(strata::rt::testing::clearAllocationFailure());
  Tensor after = Tensor::zeros(DType::I64, {2, 5});
  EXPECT_EQ(after.numElements(), 10);
  // Armed but not reached: pending, and clearing disarms it.
  strata::rt::testing::failAllocationAfter(5);
  Tensor::zeros(DType::F32, {1});
  EXPECT_TRUE(strata::rt::testing::clearAllocationFailure());
  Tensor::zeros(DType::F32, {1});
}

TEST(FaultInjection, EveryAllocationOfARequestFailsCleanly) {
  ModuleFile file(addModuleBytes());
  Tensor x = Tensor::fromValues<float>(DType::F32, {2, 3}, kX);
  auto request = [&] {
    std::shared_ptr<const Module> m = Module::load(file.path);
    Session session(m);
    session.setInput("x", x);
    session.run();
    const Tensor &y = session.output("y");
    const float *values = y.data<float>();
    if (std::vector<float>(values, values + 6) != kY)
      throw std::runtime_error("wrong output values");
  };
  std::vector<std::string> messages = failEachAllocation(request);
  // The module's bytes, the arena, the input's copy, the output's copy.
  ASSERT_EQ(messages.size(), 4u) << ::testing::PrintToString(messages);
  std::string module = "strata module '" + file.path + "': ";
  EXPECT_EQ(messages[0], module + "cannot allocate " +
                             std::to_string(addModuleBytes().size()) +
                             " bytes for the file's bytes");
  EXPECT_EQ(messages[1],
            module + "cannot allocate " +
                std::to_string(Module::load(file.path)->arenaSize()) +
                " bytes for its arena");
  EXPECT_EQ(messages[2], module + "input 'x': cannot allocate 24 bytes for a " +
                             "copy of a tensor of f32[2, 3]");
  EXPECT_EQ(messages[3], module + "output 'y': cannot allocate 24 bytes for " +
                             "a tensor of f32[2, 3]");
}

TEST(FaultInjection, StringsFailCleanly) {
  // c: a string constant -> string.cast -> numbers: f32[3] -> string.cast ->
  // text: string[3] (a host buffer allocated with the session); x: string[2]
  // -> string.copy -> copied: string[2].
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::String, {2});
  uint32_t c = b.addStringConstant({3}, {"1.5", "-inf", " 2e3 "});
  uint32_t numbers = b.addArenaBuffer(DType::F32, {3});
  b.addStep(libraryStep("string.cast", {c}, {numbers}));
  uint32_t text = b.addStringBuffer({3});
  b.addStep(libraryStep("string.cast", {numbers}, {text}));
  uint32_t copied = b.addStringBuffer({2});
  b.addStep(libraryStep("string.copy", {x}, {copied}));
  b.addOutput("text", text);
  b.addOutput("copied", copied);
  std::vector<uint8_t> bytes = b.finish();
  Tensor input = Tensor::fromStrings({2}, {"hello", "world"});
  auto request = [&] {
    auto m = Module::loadFromMemory(bytes, "strings.strata");
    Session session(m);
    session.setInput("x", input);
    session.run();
    if (session.output("text").strings() !=
            std::vector<std::string>{"1.5", "-INF", "2000"} ||
        session.output("copied").strings() !=
            std::vector<std::string>{"hello", "world"})
      throw std::runtime_error("wrong output values");
  };
  std::vector<std::string> messages = failEachAllocation(request);
  std::string all = ::testing::PrintToString(messages);
  for (const std::string &m : messages)
    EXPECT_THAT(m, HasSubstr("strata module 'strings.strata': ")) << all;
  // The string table of the constant, the host buffers made with the
  // session, the input's copy and the outputs' copies all fail cleanly.
  auto has = [&](const std::string &text) {
    return std::any_of(messages.begin(), messages.end(),
                       [&](const std::string &m) {
                         return m.find(text) != std::string::npos;
                       });
  };
  EXPECT_TRUE(has("cannot allocate the 3 strings of buffer 1")) << all;
  EXPECT_TRUE(has("bytes for its arena")) << all;
  EXPECT_TRUE(has("buffer 3: cannot allocate a tensor of strings[3]")) << all;
  EXPECT_TRUE(has("input 'x': cannot allocate a copy of a tensor of "
                  "strings[2]"))
      << all;
  EXPECT_TRUE(has("output 'copied': cannot allocate a copy of its 2 strings"))
      << all;
}

TEST(FaultInjection, SessionKeepsWorkingAfterFailures) {
  auto m = Module::loadFromMemory(addModuleBytes(), "add.strata");
  Session session(m);
  Tensor x = Tensor::fromValues<float>(DType::F32, {2, 3}, kX);
  session.setInput("x", x);
  session.run();

  // The run's first allocation is the output's copy.
  strata::rt::testing::failAllocationAfter(0);
  EXPECT_EQ(errorOf([&] { session.run(); }),
            "strata module 'add.strata': output 'y': cannot allocate 24 bytes "
            "for a tensor of f32[2, 3]");
  // No output of a failed run is shown...
  EXPECT_THAT(errorOf([&] { session.output("y"); }),
              HasSubstr("is not available before a successful run()"));
  // ...and the next run gives them.
  session.run();
  const float *y = session.output("y").data<float>();
  EXPECT_EQ(std::vector<float>(y, y + 6), kY);

  // A setInput whose copy fails leaves the input as it was.
  Tensor zeros = Tensor::zeros(DType::F32, {2, 3});
  strata::rt::testing::failAllocationAfter(0);
  EXPECT_THAT(errorOf([&] { session.setInput("x", zeros); }),
              HasSubstr("strata module 'add.strata': input 'x': cannot "
                        "allocate 24 bytes"));
  session.run();
  y = session.output("y").data<float>();
  EXPECT_EQ(std::vector<float>(y, y + 6), kY);
  session.setInput("x", zeros);
  session.run();
  y = session.output("y").data<float>();
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{10, 20, 30, 40, 50, 60}));
}

TEST(FaultInjection, CApiReportsOutOfMemory) {
  std::vector<uint8_t> bytes = addModuleBytes();
  strata_module *module = nullptr;
  strata::rt::testing::failAllocationAfter(0);
  EXPECT_EQ(strata_module_load_from_memory(bytes.data(), bytes.size(),
                                           "add.strata", &module),
            STRATA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(module, nullptr);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("strata module 'add.strata': cannot allocate"));
  EXPECT_FALSE(strata::rt::testing::clearAllocationFailure());
  // The next call works.
  ASSERT_EQ(strata_module_load_from_memory(bytes.data(), bytes.size(),
                                           "add.strata", &module),
            STRATA_OK);
  strata_session *session = nullptr;
  strata::rt::testing::failAllocationAfter(0);
  EXPECT_EQ(strata_session_create(module, nullptr, &session),
            STRATA_ERROR_OUT_OF_MEMORY);
  EXPECT_THAT(strata_last_error(),
              HasSubstr("strata module 'add.strata': cannot allocate"));
  ASSERT_EQ(strata_session_create(module, nullptr, &session), STRATA_OK);
  const int64_t shape[2] = {2, 3};
  ASSERT_EQ(strata_session_set_input(session, "x", STRATA_F32, shape, 2,
                                     kX.data(), kX.size() * sizeof(float)),
            STRATA_OK);
  ASSERT_EQ(strata_session_run(session), STRATA_OK) << strata_last_error();
  const void *data = nullptr;
  ASSERT_EQ(strata_session_output(session, "y", nullptr, &data, nullptr),
            STRATA_OK);
  const float *y = static_cast<const float *>(data);
  EXPECT_EQ(std::vector<float>(y, y + 6), kY);
  strata_session_free(session);
  strata_module_free(module);
}
