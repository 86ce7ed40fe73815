//===- TestCasesTest.cpp - Finding conformance test cases -------*- C++ -*-===//
//
// findCases on the installed ONNX test data (case counts per suite, a case
// given directly, the file lists of known cases) and on a synthetic layout
// with ten or more inputs and data sets, where numeric order differs from
// string order; plus the errors for gaps and for directories without cases.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <algorithm>
#include <filesystem>

using namespace strata::tio;
using namespace strata::tio::test;
namespace fs = std::filesystem;

namespace {

std::string base(const std::string &path) {
  return fs::path(path).filename().string();
}

TEST(FindCases, NodeSuite) {
  std::vector<TestCase> cases = findCases({testData("node")});
  EXPECT_EQ(cases.size(), 932u);
  EXPECT_TRUE(std::is_sorted(
      cases.begin(), cases.end(),
      [](const TestCase &a, const TestCase &b) { return a.dir < b.dir; }));
  auto add = std::find_if(cases.begin(), cases.end(), [](const TestCase &c) {
    return c.name == "test_add";
  });
  ASSERT_NE(add, cases.end());
  EXPECT_EQ(add->suite, "node");
  EXPECT_EQ(add->modelPath, testData("node/test_add/model.onnx"));
  ASSERT_EQ(add->dataSets.size(), 1u);
  EXPECT_EQ(base(add->dataSets[0].dir), "test_data_set_0");
  ASSERT_EQ(add->dataSets[0].inputs.size(), 2u);
  EXPECT_EQ(add->dataSets[0].inputs[1],
            testData("node/test_add/test_data_set_0/input_1.pb"));
  ASSERT_EQ(add->dataSets[0].outputs.size(), 1u);
  for (const TestCase &c : cases)
    EXPECT_FALSE(c.dataSets.empty()) << c.dir;
}

TEST(FindCases, AllSuitesAndSingleCases) {
  std::vector<TestCase> cases =
      findCases({testData("node"), testData("pytorch-converted"),
                 testData("pytorch-operator"), testData("simple")});
  EXPECT_EQ(cases.size(), 932u + 82u + 35u + 23u);
  // The suite of real models only has download stubs (no model.onnx).
  EXPECT_THROW(findCases({testData("real")}), TensorIOError);

  // A case directory given directly, with or without a trailing slash, and
  // mixed with a suite.
  std::vector<TestCase> one =
      findCases({testData("node/test_adam_multiple/"), testData("simple")});
  ASSERT_EQ(one.size(), 24u);
  EXPECT_EQ(one[0].name, "test_adam_multiple");
  EXPECT_EQ(one[0].suite, "node");
  std::vector<TestCase> dot =
      findCases({testData("node/test_add/test_data_set_0/..")});
  EXPECT_EQ(dot.at(0).name, "test_add");
  const TestDataSet &set = one[0].dataSets.at(0);
  ASSERT_EQ(set.inputs.size(), 10u);
  for (size_t k = 0; k < set.inputs.size(); ++k)
    EXPECT_EQ(base(set.inputs[k]), "input_" + std::to_string(k) + ".pb");
  EXPECT_EQ(set.outputs.size(), 6u);
  EXPECT_EQ(one[1].suite, "simple");
}

TEST(FindCases, NumericOrderPastNine) {
  ScratchDir dir;
  fs::path caseDir = dir.path / "suite" / "test_many";
  fs::create_directories(caseDir);
  writeBytes((caseDir / "model.onnx").string(), {});
  for (int n = 0; n < 12; ++n) {
    fs::path set = caseDir / ("test_data_set_" + std::to_string(n));
    fs::create_directories(set);
    for (int k = 0; k < 12; ++k)
      writeBytes((set / ("input_" + std::to_string(k) + ".pb")).string(), {});
    writeBytes((set / "output_0.pb").string(), {});
    // Not part of the numbering: ignored.
    writeBytes((set / "input_x.pb").string(), {});
    writeBytes((set / "notes.txt").string(), {});
  }
  // A non-case subdirectory of the suite is skipped.
  fs::create_directories(dir.path / "suite" / "not_a_case");
  std::vector<TestCase> cases = findCases({(dir.path / "suite").string()});
  ASSERT_EQ(cases.size(), 1u);
  ASSERT_EQ(cases[0].dataSets.size(), 12u);
  for (int n = 0; n < 12; ++n) {
    const TestDataSet &set = cases[0].dataSets[n];
    EXPECT_EQ(base(set.dir), "test_data_set_" + std::to_string(n));
    ASSERT_EQ(set.inputs.size(), 12u);
    for (int k = 0; k < 12; ++k)
      EXPECT_EQ(base(set.inputs[k]), "input_" + std::to_string(k) + ".pb");
    EXPECT_EQ(set.outputs.size(), 1u);
  }
}

TEST(FindCases, Errors) {
  ScratchDir dir;
  EXPECT_THROW(findCases({(dir.path / "missing").string()}), TensorIOError);
  try {
    findCases({dir.path.string()});
    FAIL();
  } catch (const TensorIOError &e) {
    EXPECT_NE(std::string(e.what()).find("holds no test case"),
              std::string::npos);
  }
  fs::path set = dir.path / "test_gap" / "test_data_set_0";
  fs::create_directories(set);
  writeBytes((dir.path / "test_gap" / "model.onnx").string(), {});
  writeBytes((set / "input_0.pb").string(), {});
  writeBytes((set / "input_2.pb").string(), {});
  try {
    findCases({(dir.path / "test_gap").string()});
    FAIL();
  } catch (const TensorIOError &e) {
    EXPECT_NE(
        std::string(e.what()).find("input_1.pb is missing (found input_2.pb)"),
        std::string::npos)
        << e.what();
  }
}

} // namespace
