//===- JsonReportTest.cpp - The conformance JSON report ---------*- C++ -*-===//
//
// The exact document layout, string escaping (quotes, backslashes, control
// characters, invalid UTF-8), and writing to a file.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>

using namespace strata::tio;
using namespace strata::tio::test;

namespace {

TEST(JsonReport, QuotesStrings) {
  EXPECT_EQ(jsonQuote("plain"), "\"plain\"");
  EXPECT_EQ(jsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(jsonQuote("l1\nl2\tx\r\b\f"), "\"l1\\nl2\\tx\\r\\b\\f\"");
  EXPECT_EQ(jsonQuote(std::string("\x01\x1f\x7f", 3)),
            "\"\\u0001\\u001f\\u007f\"");
  EXPECT_EQ(jsonQuote(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
  // Valid UTF-8 passes through; invalid bytes become U+FFFD.
  EXPECT_EQ(jsonQuote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(jsonQuote("a\xff"
                      "b"),
            "\"a\\ufffdb\"");
  EXPECT_EQ(jsonQuote("\xc3"), "\"\\ufffd\"");            // truncated
  EXPECT_EQ(jsonQuote("\xc0\xaf"), "\"\\ufffd\\ufffd\""); // overlong
  EXPECT_EQ(jsonQuote("\xed\xa0\x80"),
            "\"\\ufffd\\ufffd\\ufffd\""); // surrogate
}

TEST(JsonReport, FormatsDocument) {
  std::vector<CaseResult> results = {
      {"test_add", CaseStatus::Passed, "", 0.25},
      {"test_\"odd\"", CaseStatus::Failed, "FAILED: 1 of 3\nelements", 1.5},
      {"test_err", CaseStatus::Error, "x.pb: parse error", 0},
      {"test_xfail", CaseStatus::ExpectedFailure, "known", NAN},
  };
  EXPECT_EQ(formatJsonReport(results),
            "{\n"
            "  \"summary\": {\"passed\": 1, \"failed\": 1, \"error\": 1, "
            "\"expected-failure\": 1, \"total\": 4},\n"
            "  \"cases\": [\n"
            "    {\"name\": \"test_add\", \"status\": \"passed\", \"message\": "
            "\"\", \"time\": 0.250000},\n"
            "    {\"name\": \"test_\\\"odd\\\"\", \"status\": \"failed\", "
            "\"message\": \"FAILED: 1 of 3\\nelements\", \"time\": 1.500000},\n"
            "    {\"name\": \"test_err\", \"status\": \"error\", \"message\": "
            "\"x.pb: parse error\", \"time\": 0.000000},\n"
            "    {\"name\": \"test_xfail\", \"status\": \"expected-failure\", "
            "\"message\": \"known\", \"time\": null}\n"
            "  ]\n"
            "}\n");
  EXPECT_EQ(formatJsonReport({}),
            "{\n  \"summary\": {\"passed\": 0, \"failed\": 0, \"error\": 0, "
            "\"expected-failure\": 0, \"total\": 0},\n  \"cases\": []\n}\n");
}

TEST(JsonReport, WritesFile) {
  ScratchDir dir;
  std::vector<CaseResult> results = {{"a", CaseStatus::Passed, "ok", 1}};
  writeJsonReport(dir / "report.json", results);
  std::vector<uint8_t> bytes = fileBytes(dir / "report.json");
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), formatJsonReport(results));
  EXPECT_THROW(writeJsonReport("/nonexistent/r.json", results), TensorIOError);
}

} // namespace
