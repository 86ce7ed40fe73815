//===- strata-run-cases.cpp - run precompiled conformance cases -*- C++ -*-===//
//
//   strata-run-cases --modules DIR CASE_OR_SUITE_DIR... [--expected-failures
//       FILE] [--json REPORT] [-j N] [--timeout S] [--rtol R] [--atol A]
//       [--quiet] [--profile] [--no-graphs]
//
// Runs the modules `strata conformance --compile-only DIR` wrote
// (DIR/<suite>/<case>/<data set>.strata, or compile-error.txt) against the
// cases' data (test_data_set_N/{input,output}_K.pb), with the conformance
// runner's tolerances, comparison rules, expected failures, table, summary
// line and JSON report (tools/common/CaseRunner.h); inputs and outputs are
// read as the case's model.onnx declares them (tensors, sequences,
// optionals) and passed by the leaf names the module's inputs and outputs
// carry (`s[0]`, `o[0]`: tio::flattenValue). Each case runs in its
// own process, so a GPU fault, which poisons the process's CUDA context,
// fails only its case.
//
// It links only the strata runtime and the tensor IO library, so it runs on
// a machine without LLVM or MLIR: compile on one machine, run on a GPU one.
//
//===----------------------------------------------------------------------===//

#include "../common/CaseRunner.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

using namespace strata;

namespace {

void usage() {
  std::cerr
      << "usage: strata-run-cases --modules DIR CASE_OR_SUITE_DIR...\n"
         "  [--expected-failures FILE] [--write-expected-failures FILE]\n"
         "  [--json REPORT] [-j N] [--timeout SECONDS] [--rtol R] [--atol A]\n"
         "  [--quiet] [--profile] [--no-graphs]\n"
         "Runs the modules `strata conformance --compile-only DIR` wrote "
         "against the cases' data.\n";
}

struct Flags {
  std::string modules;
  std::vector<std::string> dirs;
  double rtol = 1e-3, atol = 1e-5;
  rt::SessionOptions session;
  cases::RunOptions run;
};

/// Parses the command line; false (after a message) when it is wrong.
bool parse(int argc, char **argv, Flags &flags) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *name) -> const char * {
      if (i + 1 >= argc) {
        std::cerr << "strata-run-cases: error: " << name << " needs a value\n";
        return nullptr;
      }
      return argv[++i];
    };
    auto number = [&](const char *name, double &out) {
      const char *text = value(name);
      if (!text)
        return false;
      char *end = nullptr;
      out = std::strtod(text, &end);
      if (!*text || *end) {
        std::cerr << "strata-run-cases: error: " << name
                  << " needs a number, not '" << text << "'\n";
        return false;
      }
      return true;
    };
    const char *text = nullptr;
    double n = 0;
    if (arg == "--modules") {
      if (!(text = value("--modules")))
        return false;
      flags.modules = text;
    } else if (arg == "--expected-failures") {
      if (!(text = value("--expected-failures")))
        return false;
      flags.run.expectedFailures = text;
    } else if (arg == "--write-expected-failures") {
      if (!(text = value("--write-expected-failures")))
        return false;
      flags.run.writeExpectedFailures = text;
    } else if (arg == "--json") {
      if (!(text = value("--json")))
        return false;
      flags.run.jsonReport = text;
    } else if (arg == "-j") {
      if (!number("-j", n) || n < 0)
        return false;
      flags.run.jobs = static_cast<unsigned>(n);
    } else if (arg == "--timeout") {
      if (!number("--timeout", n) || n < 1)
        return false;
      flags.run.timeout = static_cast<unsigned>(n);
    } else if (arg == "--rtol") {
      if (!number("--rtol", flags.rtol))
        return false;
    } else if (arg == "--atol") {
      if (!number("--atol", flags.atol))
        return false;
    } else if (arg == "--quiet") {
      flags.run.quiet = true;
    } else if (arg == "--profile") {
      flags.session.profile = true;
    } else if (arg == "--no-graphs") {
      flags.session.cuda.graphs = false;
    } else if (arg == "-h" || arg == "--help") {
      usage();
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "strata-run-cases: error: unknown option " << arg << "\n";
      return false;
    } else {
      flags.dirs.push_back(arg);
    }
  }
  if (flags.modules.empty() || flags.dirs.empty()) {
    usage();
    return false;
  }
  return true;
}

/// Runs one case's modules on its data sets (in the case's process).
cases::Outcome runCase(const Flags &flags, const tio::TestCase &test) {
  namespace fs = std::filesystem;
  cases::Outcome outcome;
  fs::path dir = fs::path(flags.modules) / test.suite / test.name;
  fs::path error = dir / "compile-error.txt";
  if (fs::exists(error)) {
    std::string text = cases::readHead(error.string(), 1 << 12);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
      text.pop_back();
    outcome.message = text.empty() ? "compile failed" : text;
    return outcome;
  }
  // Which files hold what: each input_K.pb is the K-th declared input.
  tio::ModelSignature signature = tio::readModelSignature(test.modelPath);
  for (const tio::TestDataSet &set : test.dataSets) {
    fs::path path = dir / (cases::dataSetName(set) + ".strata");
    if (!fs::exists(path)) {
      outcome.message = "no compiled module " + path.string();
      return outcome;
    }
    std::shared_ptr<const rt::Module> module = rt::Module::load(path.string());
    std::map<std::string, rt::DType> dtypes;
    for (const rt::TensorSignature &input : module->inputs())
      dtypes[input.name] = input.dtype;
    cases::CaseInputs inputs;
    outcome.message = cases::readInputs(
        set, signature, inputs,
        [&](const std::string &name) -> std::optional<rt::DType> {
          auto it = dtypes.find(name);
          if (it == dtypes.end())
            return std::nullopt;
          return it->second;
        });
    if (outcome.message.empty())
      outcome.message =
          cases::runDataSet(module, set, signature, std::move(inputs),
                            flags.rtol, flags.atol, flags.session);
    if (!outcome.message.empty())
      return outcome;
  }
  outcome.passed = true;
  return outcome;
}

} // namespace

int main(int argc, char **argv) {
  Flags flags;
  if (!parse(argc, argv, flags))
    return 2;
  std::vector<tio::TestCase> found;
  try {
    found = tio::findCases(flags.dirs);
  } catch (const std::exception &e) {
    std::cerr << "strata-run-cases: error: " << e.what() << "\n";
    return 1;
  }
  // The parent never initializes CUDA: each case's process does (a process
  // that forks after initializing the driver cannot use it in the child).
  return cases::runCases(found, flags.run, [&](const tio::TestCase &test) {
    return runCase(flags, test);
  });
}
