//===- TestCases.cpp - Finding ONNX conformance cases -----------*- C++ -*-===//
//
// The ONNX backend test data lays a case out as <case>/model.onnx plus
// <case>/test_data_set_N/{input_K.pb, output_K.pb}. Directory listings come
// back in no particular order and a plain string sort would put input_10
// before input_2, which would silently feed inputs to the wrong model
// inputs; so the numbers are parsed and sorted as numbers, and a gap in the
// numbering is an error rather than a shifted list.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <algorithm>
#include <filesystem>
#include <map>

using namespace strata::tio;
namespace fs = std::filesystem;

namespace {
/// If \p name is prefix + decimal digits + suffix, the number.
std::optional<uint64_t> numberedName(const std::string &name,
                                     std::string_view prefix,
                                     std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() ||
      name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  // Refuse leading zeros ("input_01") and absurd lengths alike: neither is
  // something ONNX writes, and both would make numbering ambiguous.
  if (digits.size() > 9 || (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9')
      return std::nullopt;
  return std::stoull(digits);
}

std::vector<fs::path> listDir(const fs::path &dir) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    entries.push_back(it->path());
  if (ec)
    throw TensorIOError(dir.string() + ": cannot list: " + ec.message());
  return entries;
}

/// The files named prefix<K>.pb in \p dir, in K order; a gap throws.
std::vector<std::string> numberedFiles(const std::vector<fs::path> &entries,
                                       const fs::path &dir,
                                       std::string_view prefix) {
  std::map<uint64_t, std::string> byNumber;
  for (const fs::path &entry : entries)
    if (auto n = numberedName(entry.filename().string(), prefix, ".pb"))
      byNumber.emplace(*n, entry.string());
  std::vector<std::string> files;
  for (auto &[number, path] : byNumber) {
    if (number != files.size())
      throw TensorIOError(dir.string() + ": " + std::string(prefix) +
                          std::to_string(files.size()) +
                          ".pb is missing (found " + std::string(prefix) +
                          std::to_string(number) + ".pb)");
    files.push_back(path);
  }
  return files;
}

TestCase loadCase(const fs::path &dir) {
  TestCase testCase;
  // Names come from the absolute path so that "." or "case/" name the case.
  std::error_code ec;
  fs::path normal = fs::absolute(dir, ec).lexically_normal();
  if (normal.filename().empty())
    normal = normal.parent_path();
  testCase.dir = dir.string();
  testCase.name = normal.filename().string();
  testCase.suite = normal.parent_path().filename().string();
  testCase.modelPath = (dir / "model.onnx").string();

  std::map<uint64_t, fs::path> sets;
  for (const fs::path &entry : listDir(dir))
    if (auto n = numberedName(entry.filename().string(), "test_data_set_", ""))
      if (fs::is_directory(entry, ec))
        sets.emplace(*n, entry);
  for (auto &[number, setDir] : sets) {
    TestDataSet dataSet;
    dataSet.dir = setDir.string();
    std::vector<fs::path> entries = listDir(setDir);
    dataSet.inputs = numberedFiles(entries, setDir, "input_");
    dataSet.outputs = numberedFiles(entries, setDir, "output_");
    testCase.dataSets.push_back(std::move(dataSet));
  }
  return testCase;
}

bool isCaseDir(const fs::path &dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "model.onnx", ec);
}
} // namespace

std::vector<TestCase>
strata::tio::findCases(const std::vector<std::string> &dirs) {
  std::vector<TestCase> cases;
  for (const std::string &name : dirs) {
    fs::path dir(name);
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      throw TensorIOError(name + ": not a directory");
    if (isCaseDir(dir)) {
      cases.push_back(loadCase(dir));
      continue;
    }
    std::vector<fs::path> subdirs;
    for (const fs::path &entry : listDir(dir))
      if (fs::is_directory(entry, ec) && isCaseDir(entry))
        subdirs.push_back(entry);
    if (subdirs.empty())
      throw TensorIOError(name + ": holds no test case (no model.onnx in it "
                                 "or in its subdirectories)");
    std::sort(subdirs.begin(), subdirs.end());
    for (const fs::path &subdir : subdirs)
      cases.push_back(loadCase(subdir));
  }
  return cases;
}
