//===- Conformance.cpp - strata conformance ---------------------*- C++ -*-===//
//
//   strata conformance DIR... [--expected-failures FILE] [--json REPORT]
//
// Runs every case in the ONNX backend-test layout (model.onnx +
// test_data_set_N/{input,output}_K.pb) under the given directories: each
// data set's inputs fix the shapes the model is compiled for, the module
// runs, and each output must match at --rtol/--atol (numpy allclose; NaN
// matches NaN).
//
// Each case runs in a child process (up to -j at a time) with a time limit,
// so that a crash or hang is one failed case, not a lost run. A case listed
// in the expected-failures file that fails is an expected failure; one that
// passes is an error too (the list must shrink when strata improves). The
// exit status is 0 exactly when every result is as expected.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Import/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace strata;
using namespace strata::driver;
namespace cl = llvm::cl;

/// Built on first use: options in Commands.cpp are registered with it too,
/// and static initialization order across files is unspecified (a global
/// SubCommand could be constructed after options had registered with it).
cl::SubCommand &strata::driver::conformanceCommand() {
  static cl::SubCommand command(
      "conformance", "Run ONNX backend-test style cases and compare outputs");
  return command;
}

extern cl::opt<std::string> cpuOption;
extern cl::opt<bool> noLibraries;

static cl::list<std::string> caseDirs(cl::Positional, cl::OneOrMore,
                                      cl::desc("<case or suite directories>"),
                                      cl::sub(conformanceCommand()));
static cl::opt<std::string>
    expectedFile("expected-failures",
                 cl::desc("Cases expected to fail, one 'suite/case' a line"),
                 cl::value_desc("file"), cl::sub(conformanceCommand()));
static cl::opt<std::string>
    writeExpected("write-expected-failures",
                  cl::desc("Write the cases that failed to this file"),
                  cl::value_desc("file"), cl::sub(conformanceCommand()));
static cl::opt<std::string> jsonReport("json",
                                       cl::desc("Write a JSON report here"),
                                       cl::value_desc("file"),
                                       cl::sub(conformanceCommand()));
static cl::opt<unsigned> jobs("j", cl::desc("Cases run at once (0: cores)"),
                              cl::init(0), cl::sub(conformanceCommand()));
static cl::opt<unsigned> timeout("timeout",
                                 cl::desc("Seconds per case (default 300)"),
                                 cl::init(300), cl::sub(conformanceCommand()));
static cl::opt<double> relTol("rtol", cl::desc("Relative tolerance"),
                              cl::init(1e-3), cl::sub(conformanceCommand()));
static cl::opt<double> absTol("atol", cl::desc("Absolute tolerance"),
                              cl::init(1e-5), cl::sub(conformanceCommand()));
static cl::opt<bool> quiet("quiet", cl::desc("List only unexpected results"),
                           cl::sub(conformanceCommand()));

namespace {
struct CaseOutcome {
  bool passed = false;
  std::string message;
};
} // namespace

/// Reads the first `limit` bytes of a file.
static std::string readHead(const std::string &path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), limit);
  text.resize(in.gcount());
  return text;
}

/// The first error line of a captured stderr, without the file prefix.
static std::string firstError(const std::string &log) {
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

/// Runs one case in this (child) process.
static CaseOutcome runCase(const tio::TestCase &test) {
  CaseOutcome outcome;
  CompileFlags flags;
  flags.cpu = cpuOption;
  flags.noLibraries = noLibraries;
  std::vector<InputInfo> infos;
  if (!readModelInputs(test.modelPath, infos)) {
    outcome.message = "import failed";
    return outcome;
  }
  // One compilation per distinct set of input shapes.
  std::map<std::map<std::string, std::vector<int64_t>>,
           std::shared_ptr<const rt::Module>>
      compiled;
  for (const tio::TestDataSet &set : test.dataSets) {
    std::string where = set.dir.substr(set.dir.find_last_of('/') + 1);
    if (set.inputs.size() != infos.size()) {
      outcome.message = where + ": " + std::to_string(set.inputs.size()) +
                        " input files for " + std::to_string(infos.size()) +
                        " model inputs";
      return outcome;
    }
    std::vector<rt::Tensor> inputs;
    std::map<std::string, std::vector<int64_t>> shapes;
    for (size_t i = 0; i < infos.size(); ++i) {
      tio::HostTensor tensor = tio::readTensorProto(set.inputs[i]).tensor;
      // ONNX 1.12's test data stores bfloat16 tensors as uint16 bits.
      if (tensor.type == tio::ElementType::U16 &&
          (infos[i].dtype == rt::DType::BF16 ||
           infos[i].dtype == rt::DType::F16))
        tensor = tio::bitcast(std::move(tensor),
                              static_cast<tio::ElementType>(infos[i].dtype));
      inputs.push_back(toRuntime(tensor));
      shapes[infos[i].name] = inputs.back().shape();
    }
    std::shared_ptr<const rt::Module> &module = compiled[shapes];
    if (!module) {
      module = compileOnnx(test.modelPath, flags, shapes);
      if (!module) {
        outcome.message = "compile failed";
        return outcome;
      }
    }
    rt::Session session(module);
    for (size_t i = 0; i < inputs.size(); ++i)
      session.setInput(i, inputs[i]);
    session.run();
    if (set.outputs.size() != module->outputs().size()) {
      outcome.message = where + ": " + std::to_string(set.outputs.size()) +
                        " expected outputs for " +
                        std::to_string(module->outputs().size()) +
                        " model outputs";
      return outcome;
    }
    for (size_t i = 0; i < set.outputs.size(); ++i) {
      tio::HostTensor actual = toHost(session.output(i));
      tio::HostTensor expected = tio::readTensorProto(set.outputs[i]).tensor;
      // ONNX 1.12's test data stores bfloat16 outputs as uint16 bits.
      if (expected.type == tio::ElementType::U16 &&
          (actual.type == tio::ElementType::BF16 ||
           actual.type == tio::ElementType::F16))
        expected = tio::bitcast(std::move(expected), actual.type);
      tio::CompareResult result =
          tio::allClose(actual, expected, relTol, absTol);
      if (!result.passed) {
        outcome.message = where + " output '" + module->outputs()[i].name +
                          "': " + result.summary();
        return outcome;
      }
    }
  }
  outcome.passed = true;
  return outcome;
}

/// The child's side: runs the case with stderr captured in `logPath` and
/// writes "PASS" or "FAIL\n<message>" to `resultPath`.
[[noreturn]] static void childMain(const tio::TestCase &test,
                                   const std::string &resultPath,
                                   const std::string &logPath) {
  int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (log >= 0) {
    ::dup2(log, 2);
    ::close(log);
  }
  CaseOutcome outcome;
  try {
    outcome = runCase(test);
  } catch (const std::exception &e) {
    outcome.message = e.what();
  }
  llvm::errs().flush();
  if (!outcome.passed && (outcome.message == "compile failed" ||
                          outcome.message == "import failed")) {
    std::string detail = firstError(readHead(logPath, 1 << 16));
    if (!detail.empty())
      outcome.message += ": " + detail;
  }
  std::ofstream out(resultPath, std::ios::binary);
  out << (outcome.passed ? "PASS" : "FAIL") << "\n" << outcome.message;
  out.close();
  std::_Exit(0);
}

static std::map<std::string, std::string> loadExpected(const std::string &path,
                                                       bool &ok) {
  std::map<std::string, std::string> expected;
  ok = true;
  if (path.empty())
    return expected;
  std::ifstream in(path);
  if (!in) {
    llvm::errs() << "strata: error: cannot read " << path << "\n";
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

int runConformance() {
  std::vector<tio::TestCase> cases;
  try {
    cases = tio::findCases(
        std::vector<std::string>(caseDirs.begin(), caseDirs.end()));
  } catch (const std::exception &e) {
    llvm::errs() << "strata: error: " << e.what() << "\n";
    return 1;
  }
  bool ok = true;
  std::map<std::string, std::string> expected = loadExpected(expectedFile, ok);
  if (!ok)
    return 1;

  char tmpl[] = "/tmp/strata-conformance-XXXXXX";
  if (!::mkdtemp(tmpl)) {
    llvm::errs() << "strata: error: cannot create a temporary directory\n";
    return 1;
  }
  std::string tmp = tmpl;

  unsigned parallel = jobs ? jobs.getValue()
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
  std::set<std::string> seenExpected;
  unsigned passed = 0, failed = 0, expectedFailures = 0;

  auto finish = [&](const Running &r, int status) {
    const tio::TestCase &test = cases[r.index];
    std::string id = test.suite + "/" + test.name;
    std::string resultPath = tmp + "/" + std::to_string(r.index) + ".result";
    std::string logPath = tmp + "/" + std::to_string(r.index) + ".log";
    tio::CaseResult &result = results[r.index];
    result.name = id;
    result.seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - r.start)
                         .count();
    bool pass = false;
    if (r.killed) {
      result.message = "timed out after " + std::to_string(timeout) + " s";
    } else if (WIFSIGNALED(status)) {
      result.message =
          std::string("crashed (") + strsignal(WTERMSIG(status)) + ")";
      std::string detail = firstError(readHead(logPath, 1 << 16));
      if (!detail.empty())
        result.message += ": " + detail;
    } else {
      std::string text = readHead(resultPath, 1 << 14);
      pass = text.rfind("PASS", 0) == 0;
      size_t nl = text.find('\n');
      result.message =
          nl == std::string::npos ? "no result" : text.substr(nl + 1);
      if (text.empty())
        result.message = "the case's process exited without a result";
    }
    ::unlink(resultPath.c_str());
    ::unlink(logPath.c_str());
    auto listed = expected.find(id);
    bool isExpected = listed != expected.end();
    if (isExpected)
      seenExpected.insert(id);
    const char *label;
    bool unexpected = false;
    if (pass && !isExpected) {
      result.status = tio::CaseStatus::Passed;
      label = "PASS ";
      ++passed;
    } else if (pass) {
      result.status = tio::CaseStatus::Failed;
      result.message = "passes but is listed in " + expectedFile +
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
    if (!quiet || unexpected) {
      llvm::outs() << llvm::format("%-5s %-60s %7.2fs", label, id.c_str(),
                                   result.seconds);
      if (result.status != tio::CaseStatus::Passed)
        llvm::outs() << "  " << result.message.substr(0, 300);
      llvm::outs() << "\n";
      llvm::outs().flush();
    }
  };

  llvm::outs().flush();
  llvm::errs().flush();
  while (done < cases.size()) {
    while (running.size() < parallel && next < cases.size()) {
      size_t index = next++;
      std::string base = tmp + "/" + std::to_string(index);
      pid_t pid = ::fork();
      if (pid == 0)
        childMain(cases[index], base + ".result", base + ".log");
      if (pid < 0) {
        llvm::errs() << "strata: error: fork failed: " << strerror(errno)
                     << "\n";
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
              std::chrono::seconds(timeout)) {
        ::kill(running[i].pid, SIGKILL);
        running[i].killed = true;
      }
      ++i;
    }
    if (!reaped)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::rmdir(tmp.c_str());

  // Listed cases that did not run are stale entries only if their suite ran.
  if (!jsonReport.empty())
    tio::writeJsonReport(jsonReport, results);
  if (!writeExpected.empty()) {
    std::ofstream out(writeExpected);
    out << "# Conformance cases expected to fail (strata conformance "
           "--expected-failures).\n# One 'suite/case' a line; text after "
           "'#' is the reason.\n";
    for (const tio::CaseResult &r : results)
      if (r.status != tio::CaseStatus::Passed) {
        std::string reason = r.message.substr(0, 160);
        std::replace(reason.begin(), reason.end(), '\n', ' ');
        out << r.name << "  # " << reason << "\n";
      }
  }
  llvm::outs() << passed << " passed, " << failed << " failed";
  if (expectedFailures)
    llvm::outs() << ", " << expectedFailures << " expected failures";
  llvm::outs() << " (of " << cases.size() << " cases)\n";
  return failed ? 1 : 0;
}
