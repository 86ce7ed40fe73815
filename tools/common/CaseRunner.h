//===- CaseRunner.h - running conformance cases -----------------*- C++ -*-===//
//
// What `strata conformance` and `strata-run-cases` share: reading a data
// set's inputs, comparing a session's outputs with the stored ones (numpy
// allclose; ONNX 1.12 stores bfloat16 and float16 tensors as uint16 bits),
// the expected-failures file, and running each case in a child process
// (up to `jobs` at a time, with a time limit) so that a crash, a hang or a
// GPU fault is one failed case rather than a lost run, with the table,
// the `N passed, N failed` line and the JSON report.
//
// Header-only and free of LLVM and MLIR: strata-run-cases links only the
// runtime and the tensor IO library, so that it can be carried to a GPU
// machine that has neither.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_COMMON_CASERUNNER_H
#define STRATA_TOOLS_COMMON_CASERUNNER_H

#include "strata/Runtime/Runtime.h"
#include "strata/TensorIO/TensorIO.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace strata::cases {

/// What one case came to.
struct Outcome {
  bool passed = false;
  std::string message;
};

inline rt::Tensor toRuntimeTensor(const tio::HostTensor &tensor) {
  // The two type enums number alike, String last in both.
  static_assert(static_cast<int>(tio::ElementType::String) ==
                static_cast<int>(rt::DType::String));
  if (tensor.type == tio::ElementType::String)
    return rt::Tensor::fromStrings(tensor.shape, tensor.strings);
  rt::Tensor t =
      rt::Tensor::zeros(static_cast<rt::DType>(tensor.type), tensor.shape);
  if (!tensor.bytes.empty())
    std::memcpy(t.rawData(), tensor.bytes.data(), tensor.bytes.size());
  return t;
}

inline tio::HostTensor toHostTensor(const rt::Tensor &tensor) {
  if (tensor.dtype() == rt::DType::String)
    return tio::makeStringTensor(tensor.shape(), tensor.strings());
  return tio::makeTensor(static_cast<tio::ElementType>(tensor.dtype()),
                         tensor.shape(), tensor.rawData(), tensor.byteSize());
}

/// "test_data_set_0" for a data set.
inline std::string dataSetName(const tio::TestDataSet &set) {
  return set.dir.substr(set.dir.find_last_of('/') + 1);
}

/// Reads a data set's inputs for a model whose inputs have `dtypes`.
/// Returns "" or what is wrong.
inline std::string readInputs(const tio::TestDataSet &set,
                              const std::vector<rt::DType> &dtypes,
                              std::vector<rt::Tensor> &inputs) {
  if (set.inputs.size() != dtypes.size())
    return dataSetName(set) + ": " + std::to_string(set.inputs.size()) +
           " input files for " + std::to_string(dtypes.size()) +
           " model inputs";
  inputs.clear();
  for (size_t i = 0; i < dtypes.size(); ++i) {
    tio::HostTensor tensor = tio::readTensorProto(set.inputs[i]).tensor;
    if ((tensor.type == tio::ElementType::String) !=
        (dtypes[i] == rt::DType::String))
      return set.inputs[i] + ": holds " + tensor.describe() +
             " but model input " + std::to_string(i) + " is of type " +
             rt::dtypeName(dtypes[i]);
    if (tensor.type == tio::ElementType::U16 &&
        (dtypes[i] == rt::DType::BF16 || dtypes[i] == rt::DType::F16))
      tensor = tio::bitcast(std::move(tensor),
                            static_cast<tio::ElementType>(dtypes[i]));
    inputs.push_back(toRuntimeTensor(tensor));
  }
  return "";
}

/// Runs `module` on a data set's inputs and compares every output with the
/// stored one. Returns "" when all match, else the first mismatch.
inline std::string runDataSet(std::shared_ptr<const rt::Module> module,
                              const tio::TestDataSet &set,
                              const std::vector<rt::Tensor> &inputs,
                              double rtol, double atol,
                              const rt::SessionOptions &sessionOptions = {}) {
  std::string where = dataSetName(set);
  rt::Session session(module, sessionOptions);
  for (size_t i = 0; i < inputs.size(); ++i)
    session.setInput(i, inputs[i]);
  session.run();
  if (set.outputs.size() != module->outputs().size())
    return where + ": " + std::to_string(set.outputs.size()) +
           " expected outputs for " + std::to_string(module->outputs().size()) +
           " model outputs";
  for (size_t i = 0; i < set.outputs.size(); ++i) {
    tio::HostTensor actual = toHostTensor(session.output(i));
    tio::HostTensor expected = tio::readTensorProto(set.outputs[i]).tensor;
    if (expected.type == tio::ElementType::U16 &&
        (actual.type == tio::ElementType::BF16 ||
         actual.type == tio::ElementType::F16))
      expected = tio::bitcast(std::move(expected), actual.type);
    tio::CompareResult result = tio::allClose(actual, expected, rtol, atol);
    if (!result.passed)
      return where + " output '" + module->outputs()[i].name +
             "': " + result.summary();
  }
  return "";
}

/// Reads the first `limit` bytes of a file.
inline std::string readHead(const std::string &path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), limit);
  text.resize(in.gcount());
  return text;
}

/// The first error line of a captured stderr, without the file prefix.
inline std::string firstError(const std::string &log) {
  std::istringstream lines(log);
  std::string line, first;
  while (std::getline(lines, line)) {
    if (first.empty() && !line.empty())
      first = line;
    size_t at = line.find(": error: ");
    if (at != std::string::npos)
      return line.substr(at + 2);
  }
  return first;
}

/// The expected-failures file: one 'suite/case' a line, text after '#' is
/// the reason. `ok` is false (and a message printed) when it cannot be
/// read.
inline std::map<std::string, std::string>
loadExpectedFailures(const std::string &path, bool &ok) {
  std::map<std::string, std::string> expected;
  ok = true;
  if (path.empty())
    return expected;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "error: cannot read " << path << "\n";
    ok = false;
    return expected;
  }
  std::string line;
  while (std::getline(in, line)) {
    size_t hash = line.find('#');
    std::string reason = hash == std::string::npos ? "" : line.substr(hash + 1);
    line = line.substr(0, hash);
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty())
      expected[line] = reason;
  }
  return expected;
}

struct RunOptions {
  /// Cases at once (0: one per core).
  unsigned jobs = 0;
  /// Seconds per case.
  unsigned timeout = 300;
  std::string expectedFailures;
  std::string writeExpectedFailures;
  std::string jsonReport;
  /// List only unexpected results.
  bool quiet = false;
  /// A listed case that passes is an error (XPASS) unless this is set (a
  /// compile-only run cannot tell whether a listed case would pass).
  bool listedMayPass = false;
  /// Called in the case's process with its final outcome.
  std::function<void(const tio::TestCase &, const Outcome &)> afterCase;
};

/// Runs every case through `runOne` in a child process and reports. The
/// child's stderr is captured: a failure whose message is "compile failed"
/// or "import failed" gets the first error line appended. Returns the exit
/// status: 0 exactly when every result is as expected.
inline int
runCases(const std::vector<tio::TestCase> &cases, const RunOptions &options,
         const std::function<Outcome(const tio::TestCase &)> &runOne) {
  bool ok = true;
  std::map<std::string, std::string> expected =
      loadExpectedFailures(options.expectedFailures, ok);
  if (!ok)
    return 1;
  char tmpl[] = "/tmp/strata-cases-XXXXXX";
  if (!::mkdtemp(tmpl)) {
    std::cerr << "error: cannot create a temporary directory\n";
    return 1;
  }
  std::string tmp = tmpl;
  unsigned parallel = options.jobs
                          ? options.jobs
                          : std::max(1u, std::thread::hardware_concurrency());
  struct Running {
    size_t index;
    pid_t pid;
    std::chrono::steady_clock::time_point start;
    bool killed = false;
  };
  std::vector<Running> running;
  std::vector<tio::CaseResult> results(cases.size());
  size_t next = 0, done = 0;
  unsigned passed = 0, failed = 0, expectedFailures = 0;

  auto childMain = [&](size_t index) {
    std::string base = tmp + "/" + std::to_string(index);
    std::string logPath = base + ".log";
    int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (log >= 0) {
      ::dup2(log, 2);
      ::close(log);
    }
    Outcome outcome;
    try {
      outcome = runOne(cases[index]);
    } catch (const std::exception &e) {
      outcome.message = e.what();
    }
    std::cerr.flush();
    std::fflush(stderr);
    if (!outcome.passed && (outcome.message == "compile failed" ||
                            outcome.message == "import failed")) {
      std::string detail = firstError(readHead(logPath, 1 << 16));
      if (!detail.empty())
        outcome.message += ": " + detail;
    }
    if (options.afterCase) {
      try {
        options.afterCase(cases[index], outcome);
      } catch (const std::exception &e) {
        outcome.passed = false;
        outcome.message = e.what();
      }
    }
    std::ofstream out(base + ".result", std::ios::binary);
    out << (outcome.passed ? "PASS" : "FAIL") << "\n" << outcome.message;
    out.close();
    std::_Exit(0);
  };

  auto finish = [&](const Running &r, int status) {
    const tio::TestCase &test = cases[r.index];
    std::string id = test.suite + "/" + test.name;
    std::string base = tmp + "/" + std::to_string(r.index);
    tio::CaseResult &result = results[r.index];
    result.name = id;
    result.seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - r.start)
                         .count();
    bool pass = false;
    if (r.killed) {
      result.message =
          "timed out after " + std::to_string(options.timeout) + " s";
    } else if (WIFSIGNALED(status)) {
      result.message =
          std::string("crashed (") + strsignal(WTERMSIG(status)) + ")";
      std::string detail = firstError(readHead(base + ".log", 1 << 16));
      if (!detail.empty())
        result.message += ": " + detail;
    } else {
      std::string text = readHead(base + ".result", 1 << 14);
      pass = text.rfind("PASS", 0) == 0;
      size_t nl = text.find('\n');
      result.message =
          nl == std::string::npos ? "no result" : text.substr(nl + 1);
      if (text.empty())
        result.message = "the case's process exited without a result";
    }
    ::unlink((base + ".result").c_str());
    ::unlink((base + ".log").c_str());
    bool isExpected = expected.count(id) != 0;
    const char *label;
    bool unexpected = false;
    if (pass && (!isExpected || options.listedMayPass)) {
      result.status = tio::CaseStatus::Passed;
      label = "PASS ";
      ++passed;
    } else if (pass) {
      result.status = tio::CaseStatus::Failed;
      result.message = "passes but is listed in " + options.expectedFailures +
                       "; remove it from the list";
      label = "XPASS";
      unexpected = true;
      ++failed;
    } else if (isExpected) {
      result.status = tio::CaseStatus::ExpectedFailure;
      label = "XFAIL";
      ++expectedFailures;
    } else {
      result.status = tio::CaseStatus::Failed;
      label = "FAIL ";
      unexpected = true;
      ++failed;
    }
    ++done;
    if (!options.quiet || unexpected) {
      char head[160];
      std::snprintf(head, sizeof(head), "%-5s %-60s %7.2fs", label, id.c_str(),
                    result.seconds);
      std::cout << head;
      if (result.status != tio::CaseStatus::Passed)
        std::cout << "  " << result.message.substr(0, 300);
      std::cout << "\n" << std::flush;
    }
  };

  std::cout << std::flush;
  std::cerr << std::flush;
  while (done < cases.size()) {
    while (running.size() < parallel && next < cases.size()) {
      size_t index = next++;
      pid_t pid = ::fork();
      if (pid == 0)
        childMain(index);
      if (pid < 0) {
        std::cerr << "error: fork failed: " << std::strerror(errno) << "\n";
        return 1;
      }
      running.push_back({index, pid, std::chrono::steady_clock::now()});
    }
    bool reaped = false;
    for (size_t i = 0; i < running.size();) {
      int status = 0;
      pid_t pid = ::waitpid(running[i].pid, &status, WNOHANG);
      if (pid == running[i].pid) {
        finish(running[i], status);
        running.erase(running.begin() + i);
        reaped = true;
        continue;
      }
      if (!running[i].killed &&
          std::chrono::steady_clock::now() - running[i].start >
              std::chrono::seconds(options.timeout)) {
        ::kill(running[i].pid, SIGKILL);
        running[i].killed = true;
      }
      ++i;
    }
    if (!reaped)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::rmdir(tmp.c_str());

  if (!options.jsonReport.empty())
    tio::writeJsonReport(options.jsonReport, results);
  if (!options.writeExpectedFailures.empty()) {
    std::ofstream out(options.writeExpectedFailures);
    out << "# Conformance cases expected to fail (--expected-failures).\n"
           "# One 'suite/case' a line; text after '#' is the reason.\n";
    for (const tio::CaseResult &r : results)
      if (r.status != tio::CaseStatus::Passed) {
        std::string reason = r.message.substr(0, 160);
        std::replace(reason.begin(), reason.end(), '\n', ' ');
        out << r.name << "  # " << reason << "\n";
      }
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (expectedFailures)
    std::cout << ", " << expectedFailures << " expected failures";
  std::cout << " (of " << cases.size() << " cases)\n" << std::flush;
  return failed ? 1 : 0;
}

} // namespace strata::cases

#endif // STRATA_TOOLS_COMMON_CASERUNNER_H
