//===- FaultInjectionTest.cpp - Failed allocations in the readers ---------===//
//
// Allocation failures injected with strata::tio::testing::failAllocationAfter
// (docs/testing.md, "Failure injection"): each allocation of reading a .npy
// or TensorProto file (the file's buffer, the tensor's data or its strings)
// fails in turn. Each must be a TensorIOError naming the file and what the
// memory was for, and reading the same file right after must give the same
// tensor as an undisturbed read.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace strata::tio;
using namespace strata::tio::test;

namespace {

bool sameTensor(const HostTensor &a, const HostTensor &b) {
  return a.type == b.type && a.shape == b.shape && a.bytes == b.bytes &&
         a.strings == b.strings;
}

/// Fails each allocation of `read` in turn until it makes no more; every
/// failure must be a TensorIOError, and `read` made again right after must
/// give `expected`. Returns the failures' messages.
template <typename Read>
std::vector<std::string> failEachAllocation(Read read,
                                            const HostTensor &expected) {
  std::vector<std::string> messages;
  for (uint64_t n = 0; n < 100; ++n) {
    strata::tio::testing::failAllocationAfter(n);
    bool threw = false;
    std::string message;
    HostTensor got;
    try {
      got = read();
    } catch (const TensorIOError &e) {
      threw = true;
      message = e.what();
    }
    bool pending = strata::tio::testing::clearAllocationFailure();
    if (!threw) {
      EXPECT_TRUE(pending) << "allocation " << n
                           << " failed, but the read succeeded";
      EXPECT_TRUE(sameTensor(got, expected));
      return messages;
    }
    EXPECT_FALSE(pending) << message;
    messages.push_back(message);
    EXPECT_TRUE(sameTensor(read(), expected))
        << "the read after the failure of allocation " << n;
  }
  ADD_FAILURE() << "more than 100 allocation points";
  return messages;
}

} // namespace

TEST(FaultInjection, NpyFile) {
  std::string path = fixture("npy/f32.npy");
  HostTensor expected = readNpy(path);
  std::vector<std::string> messages =
      failEachAllocation([&] { return readNpy(path); }, expected);
  ASSERT_EQ(messages.size(), 2u) << ::testing::PrintToString(messages);
  EXPECT_EQ(messages[0], path + ": cannot allocate " +
                             std::to_string(fileBytes(path).size()) +
                             " bytes for the file");
  EXPECT_EQ(messages[1], path + ": cannot allocate " +
                             std::to_string(expected.bytes.size()) +
                             " bytes for the data of " + expected.describe());
}

TEST(FaultInjection, TensorProtoFiles) {
  ScratchDir dir;
  // Typed fields (float_data), and raw_data as writeTensorProto writes it.
  std::string typed = fixture("pb/typed_float.pb");
  std::string raw = dir / "raw.pb";
  writeTensorProto(raw, patternTensor(ElementType::I32, {3, 5}), "t");
  for (const std::string &path : {typed, raw}) {
    HostTensor expected = readTensorProto(path).tensor;
    std::vector<std::string> messages = failEachAllocation(
        [&] { return readTensorProto(path).tensor; }, expected);
    ASSERT_EQ(messages.size(), 2u) << ::testing::PrintToString(messages);
    EXPECT_EQ(messages[0], path + ": cannot allocate " +
                               std::to_string(fileBytes(path).size()) +
                               " bytes for the file");
    EXPECT_EQ(messages[1], path + ": cannot allocate " +
                               std::to_string(expected.bytes.size()) +
                               " bytes for the data of " + expected.describe());
  }
}

TEST(FaultInjection, Strings) {
  ScratchDir dir;
  HostTensor strings;
  strings.type = ElementType::String;
  strings.shape = {2, 2};
  strings.strings = {"a", "bc", "Straße", ""};
  std::string npy = dir / "s.npy", pb = dir / "s.pb";
  writeNpy(npy, strings);
  writeTensorProto(pb, strings, "s");
  std::vector<std::string> fromNpy =
      failEachAllocation([&] { return readNpy(npy); }, strings);
  ASSERT_EQ(fromNpy.size(), 2u) << ::testing::PrintToString(fromNpy);
  EXPECT_EQ(fromNpy[1],
            npy + ": cannot allocate 4 strings for " + strings.describe());
  std::vector<std::string> fromPb =
      failEachAllocation([&] { return readTensorProto(pb).tensor; }, strings);
  ASSERT_EQ(fromPb.size(), 2u) << ::testing::PrintToString(fromPb);
  EXPECT_EQ(fromPb[1],
            pb + ": cannot allocate 4 strings for " + strings.describe());
}
