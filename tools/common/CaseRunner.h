//===- CaseRunner.h - running conformance cases -----------------*- C++ -*-===//
//
// What `strata conformance` and `strata-run-cases` share: reading a data
// set's inputs by the model's signature (tensors, sequences and optionals;
// a module takes the tensors they flatten into, named `s[0]`, `o[0]`, ...:
// tio::flattenValue), comparing a session's outputs, assembled the same way,
// with the stored ones (numpy allclose; ONNX 1.12 stores bfloat16 and
// float16 tensors as uint16 bits),
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
#include <optional>
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

/// One tensor a compiled module takes: a tensor input of the model, or a
/// tensor inside a sequence or optional input, named by the leaf convention
/// of tio::flattenValue (`s[1]`, `o[0]`, ...).
struct Leaf {
  std::string name;
  tio::HostTensor tensor;
  /// The model input (K of input_K.pb) it belongs to, and its file.
  size_t input = 0;
  std::string file;
  /// Whether it is the whole input (a tensor input) rather than part of one.
  bool whole = true;
};

/// A data set's inputs as a module takes them, and the bindings (input
/// shapes, sequence lengths, optional presence) a model is compiled for.
struct CaseInputs {
  std::vector<Leaf> leaves;
  std::map<std::string, std::vector<int64_t>> bindings;
};

/// The element type a module (or model) input of this name has; none when
/// not known (the leaf is then taken as it is).
using DTypeOf =
    std::function<std::optional<rt::DType>(const std::string &leafName)>;

/// Checks `leaf` against the type `dtypeOf` gives for its name: strings and
/// numbers never convert; u16 data (ONNX 1.12 stores bfloat16 and float16
/// tensors as uint16 bits) is bitcast to bf16 or f16. Returns "" or what is
/// wrong.
inline std::string matchLeafType(Leaf &leaf, const DTypeOf &dtypeOf) {
  std::optional<rt::DType> dtype = dtypeOf(leaf.name);
  if (!dtype)
    return "";
  if ((leaf.tensor.type == tio::ElementType::String) !=
      (*dtype == rt::DType::String)) {
    if (leaf.whole)
      return leaf.file + ": holds " + leaf.tensor.describe() +
             " but model input " + std::to_string(leaf.input) + " is of type " +
             rt::dtypeName(*dtype);
    return leaf.file + ": element '" + leaf.name + "' holds " +
           leaf.tensor.describe() + " but the module input '" + leaf.name +
           "' is of type " + rt::dtypeName(*dtype);
  }
  if (leaf.tensor.type == tio::ElementType::U16 &&
      (*dtype == rt::DType::BF16 || *dtype == rt::DType::F16))
    leaf.tensor = tio::bitcast(std::move(leaf.tensor),
                               static_cast<tio::ElementType>(*dtype));
  return "";
}

/// Reads a data set's inputs by the model's signature: input_K.pb holds the
/// K-th declared input (a TensorProto, SequenceProto or OptionalProto), which
/// is flattened into its leaves and bindings (tio::flattenValue). With
/// `dtypeOf`, each leaf is checked and converted by matchLeafType right
/// after its file is read. Returns "" or what is wrong.
inline std::string readInputs(const tio::TestDataSet &set,
                              const tio::ModelSignature &signature,
                              CaseInputs &inputs,
                              const DTypeOf &dtypeOf = nullptr) {
  if (set.inputs.size() != signature.inputs.size())
    return dataSetName(set) + ": " + std::to_string(set.inputs.size()) +
           " input files for " + std::to_string(signature.inputs.size()) +
           " model inputs";
  inputs = CaseInputs();
  for (size_t i = 0; i < signature.inputs.size(); ++i) {
    const auto &[name, type] = signature.inputs[i];
    tio::HostValue value = tio::readValueProto(set.inputs[i], type);
    std::vector<std::pair<std::string, tio::HostTensor>> leaves;
    tio::flattenValue(name, value, leaves, inputs.bindings);
    for (auto &[leafName, tensor] : leaves) {
      Leaf leaf{leafName, std::move(tensor), i, set.inputs[i],
                type.kind == tio::HostValue::Kind::Tensor};
      if (dtypeOf) {
        std::string problem = matchLeafType(leaf, dtypeOf);
        if (!problem.empty())
          return problem;
      }
      inputs.leaves.push_back(std::move(leaf));
    }
  }
  return "";
}

/// Bitcasts the u16 tensors of a stored value to the bf16 or f16 type of
/// the tensor at the same place of `actual` (see matchLeafType).
inline void bitcastStored(tio::HostValue &expected,
                          const tio::HostValue &actual) {
  if (expected.kind != actual.kind)
    return;
  if (expected.kind == tio::HostValue::Kind::Tensor) {
    if (expected.tensor.type == tio::ElementType::U16 &&
        (actual.tensor.type == tio::ElementType::BF16 ||
         actual.tensor.type == tio::ElementType::F16))
      expected.tensor =
          tio::bitcast(std::move(expected.tensor), actual.tensor.type);
    return;
  }
  for (size_t i = 0; i < expected.elements.size() && i < actual.elements.size();
       ++i)
    bitcastStored(expected.elements[i], actual.elements[i]);
}

/// Runs `module` on a data set's inputs, each leaf set by its name, and
/// compares every output of the model's signature, assembled from the
/// module's outputs by their names (tio::assembleValue), with the stored
/// one. Returns "" when all match, else the first mismatch.
inline std::string runDataSet(std::shared_ptr<const rt::Module> module,
                              const tio::TestDataSet &set,
                              const tio::ModelSignature &signature,
                              CaseInputs inputs, double rtol, double atol,
                              const rt::SessionOptions &sessionOptions = {}) {
  std::string where = dataSetName(set);
  std::map<std::string, rt::DType> inputTypes;
  for (const rt::TensorSignature &input : module->inputs())
    inputTypes[input.name] = input.dtype;
  DTypeOf moduleType = [&](const std::string &name) {
    auto it = inputTypes.find(name);
    return it == inputTypes.end() ? std::nullopt
                                  : std::optional<rt::DType>(it->second);
  };
  rt::Session session(module, sessionOptions);
  for (Leaf &leaf : inputs.leaves) {
    std::string problem = matchLeafType(leaf, moduleType);
    if (!problem.empty())
      return problem;
    session.setInput(leaf.name, toRuntimeTensor(leaf.tensor));
  }
  session.run();
  if (set.outputs.size() != signature.outputs.size())
    return where + ": " + std::to_string(set.outputs.size()) +
           " expected outputs for " + std::to_string(signature.outputs.size()) +
           " model outputs";
  std::map<std::string, size_t> outputIndex;
  for (size_t i = 0; i < module->outputs().size(); ++i)
    outputIndex[module->outputs()[i].name] = i;
  std::map<std::string, tio::HostTensor> taken;
  auto lookup = [&](const std::string &name) -> const tio::HostTensor * {
    auto it = taken.find(name);
    if (it != taken.end())
      return &it->second;
    auto index = outputIndex.find(name);
    if (index == outputIndex.end())
      return nullptr;
    return &taken.emplace(name, toHostTensor(session.output(index->second)))
                .first->second;
  };
  for (size_t i = 0; i < set.outputs.size(); ++i) {
    const auto &[name, type] = signature.outputs[i];
    if (type.kind == tio::HostValue::Kind::Tensor && !lookup(name))
      return where + ": the module has no output '" + name + "'";
    tio::HostValue actual = tio::assembleValue(name, type, lookup);
    tio::HostValue expected = tio::readValueProto(set.outputs[i], type);
    bitcastStored(expected, actual);
    tio::CompareResult result = tio::allClose(actual, expected, rtol, atol);
    if (!result.passed)
      return where + " output '" + name + "': " + result.summary();
  }
  // Every module output must be part of a model output (a leaf past a gap
  // in a sequence's numbering would otherwise go unchecked).
  for (const rt::TensorSignature &output : module->outputs())
    if (!taken.count(output.name))
      return where + ": module output '" + output.name +
             "' is part of no output of the model";
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
loadExpectedFailures(const std::string &paths, bool &ok) {
  std::map<std::string, std::string> expected;
  ok = true;
  // Several lists, comma-separated: a mode's own list beside the target's.
  std::stringstream list(paths);
  std::string path;
  while (std::getline(list, path, ',')) {
    if (path.empty())
      continue;
    std::ifstream in(path);
    if (!in) {
      std::cerr << "error: cannot read " << path << "\n";
      ok = false;
      return expected;
    }
    std::string line;
    while (std::getline(in, line)) {
      size_t hash = line.find('#');
      std::string reason =
          hash == std::string::npos ? "" : line.substr(hash + 1);
      line = line.substr(0, hash);
      line.erase(0, line.find_first_not_of(" \t"));
      line.erase(line.find_last_not_of(" \t\r") + 1);
      if (!line.empty())
        expected[line] = reason;
    }
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
