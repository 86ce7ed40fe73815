//===- TestUtil.h - Shared helpers of the tensorio tests --------*- C++ -*-===//
//
// Fixture paths, a scratch directory per test, and raw file access, so each
// test file states only what it checks.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TENSORIO_TEST_TESTUTIL_H
#define STRATA_TENSORIO_TEST_TESTUTIL_H

#include "strata/TensorIO/TensorIO.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace strata::tio::test {

inline std::string fixture(const std::string &rel) {
  return std::string(STRATA_TIO_FIXTURES_DIR) + "/" + rel;
}

inline std::string testData(const std::string &rel) {
  return std::string(STRATA_TEST_DATA_DIR) + "/" + rel;
}

inline std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void writeBytes(const std::string &path,
                       const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

/// A fresh directory named after the running test, removed afterwards.
class ScratchDir {
public:
  ScratchDir() {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    path = std::filesystem::temp_directory_path() /
           (std::string("strata-tio-") + info->test_suite_name() + "-" +
            info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string &name) const {
    return (path / name).string();
  }
  std::filesystem::path path;
};

/// A tensor of \p type and \p shape whose bytes follow a fixed pattern (bools
/// 0/1), so round trips have something non-trivial to preserve.
inline HostTensor patternTensor(ElementType type, std::vector<int64_t> shape) {
  HostTensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.bytes.resize(t.numElements() * elementSize(type));
  for (size_t i = 0; i < t.bytes.size(); ++i)
    t.bytes[i] = type == ElementType::Bool ? (i * 7 + 3) % 2
                                           : static_cast<uint8_t>(i * 37 + 11);
  return t;
}

template <typename T>
HostTensor tensorOf(ElementType type, std::vector<int64_t> shape,
                    const std::vector<T> &values) {
  EXPECT_EQ(sizeof(T), elementSize(type));
  return makeTensor(type, std::move(shape), values.data(),
                    values.size() * sizeof(T));
}

} // namespace strata::tio::test

#endif // STRATA_TENSORIO_TEST_TESTUTIL_H
