//===- Conformance.cpp - strata conformance ---------------------*- C++ -*-===//
//
//   strata conformance DIR... [--target=cpu|cuda] [--expected-failures FILE]
//                             [--json REPORT] [--compile-only OUTDIR]
//
// Runs every case in the ONNX backend-test layout (model.onnx +
// test_data_set_N/{input,output}_K.pb) under the given directories: each
// data set's inputs fix the shapes the model is compiled for, the module
// runs, and each output must match at --rtol/--atol (numpy allclose; NaN
// matches NaN). input_K.pb and output_K.pb are read as the model declares
// its K-th input and output: a TensorProto, or a SequenceProto or
// OptionalProto, which the compiler specializes on (a sequence's length and
// its elements' shapes, an optional's presence) and the module takes and
// gives as tensors named `s[0]`, `s[1]`, `o[0]` (tio::flattenValue).
//
// Each case runs in a child process (up to -j at a time) with a time limit,
// so that a crash or hang is one failed case, not a lost run. A case listed
// in the expected-failures file that fails is an expected failure; one that
// passes is an error too (the list must shrink when strata improves). The
// exit status is 0 exactly when every result is as expected.
//
// --compile-only OUTDIR compiles each case without running it and writes
// OUTDIR/<suite>/<case>/<data set>.strata (or compile-error.txt), for
// strata-run-cases to run on another machine (a GPU one: docs/gpu.md). A
// case then passes when it compiles; a listed case that compiles is not an
// error, since whether it runs correctly is decided there.
//
// The case running, comparison and reporting are tools/common/CaseRunner.h,
// shared with strata-run-cases.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "../common/CaseRunner.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Target/Target.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>
#include <map>

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
extern cl::opt<bool> hostKernels;

static cl::list<std::string> caseDirs(cl::Positional, cl::OneOrMore,
                                      cl::desc("<case or suite directories>"),
                                      cl::sub(conformanceCommand()));
static cl::opt<std::string>
    expectedFile("expected-failures",
                 cl::desc("Cases expected to fail, one 'suite/case' a line "
                          "(several files: comma-separated)"),
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
static cl::opt<std::string>
    conformanceTarget("target",
                      cl::desc("Target: cpu (default), cuda, or "
                               "rocm (compile-only)"),
                      cl::init("cpu"), cl::sub(conformanceCommand()));
static cl::opt<std::string> compileOnly(
    "compile-only",
    cl::desc("Only compile: write each case's modules under this directory "
             "(<suite>/<case>/<data set>.strata) for strata-run-cases"),
    cl::value_desc("dir"), cl::sub(conformanceCommand()));

/// Compiles a case for every distinct set of input bindings (shapes, and
/// the lengths of sequences and presence of optionals) among its data sets;
/// `use` gets each data set with its module bytes, the model's signature
/// and the data set's inputs.
static cases::Outcome
compileCase(const tio::TestCase &test,
            const std::function<std::string(
                const tio::TestDataSet &, const std::vector<uint8_t> &,
                const tio::ModelSignature &, cases::CaseInputs &)> &use) {
  cases::Outcome outcome;
  CompileFlags flags;
  flags.options.target = conformanceTarget;
  flags.options.cpu = cpuOption;
  flags.options.useLibraries = !noLibraries;
  flags.options.hostKernels = hostKernels;
  flags.options.precision = precisionFlag();
  // A failing case is an expected outcome here, not a bug to reproduce:
  // no crash reproducers.
  flags.options.reproducerDir = "off";
  // A case without data sets would compile nothing and check nothing: a
  // pass that means nothing (a directory copied without its data).
  if (test.dataSets.empty()) {
    outcome.message = "no test_data_set_N directory: nothing to check the "
                      "model against";
    return outcome;
  }
  std::vector<InputInfo> infos;
  if (!readModelInputs(test.modelPath, infos)) {
    outcome.message = "import failed";
    return outcome;
  }
  // The tensor inputs' element types, for the inputs' files to be checked
  // (and u16 bitcast) before compiling; the tensors inside sequences and
  // optionals are checked against the module's inputs when it runs.
  std::map<std::string, rt::DType> dtypes;
  for (const InputInfo &info : infos)
    if (info.container.empty())
      dtypes[info.name] = info.dtype;
  cases::DTypeOf declaredType = [&](const std::string &name) {
    auto it = dtypes.find(name);
    return it == dtypes.end() ? std::nullopt
                              : std::optional<rt::DType>(it->second);
  };
  // Which files hold what: each input_K.pb is the K-th declared input.
  tio::ModelSignature signature;
  try {
    signature = tio::readModelSignature(test.modelPath);
  } catch (const tio::TensorIOError &e) {
    outcome.message = e.what();
    return outcome;
  }
  // Bindings and the values of small inputs (which the compiler uses only
  // where a shape depends on them) to the module compiled for them.
  std::map<std::pair<std::map<std::string, std::vector<int64_t>>,
                     std::map<std::string, std::vector<double>>>,
           std::vector<uint8_t>>
      compiled;
  for (const tio::TestDataSet &set : test.dataSets) {
    cases::CaseInputs inputs;
    outcome.message = cases::readInputs(set, signature, inputs, declaredType);
    if (!outcome.message.empty())
      return outcome;
    const std::map<std::string, std::vector<int64_t>> &bindings =
        inputs.bindings;
    flags.options.inputValues.clear();
    for (const cases::Leaf &leaf : inputs.leaves)
      if (std::optional<std::vector<double>> values =
              smallInputValues(leaf.tensor))
        flags.options.inputValues[leaf.name] = std::move(*values);
    auto it = compiled.find({bindings, flags.options.inputValues});
    if (it == compiled.end()) {
      std::vector<uint8_t> bytes;
      if (!compileOnnxBytes(test.modelPath, flags, bindings, bytes)) {
        outcome.message = "compile failed";
        return outcome;
      }
      it = compiled
               .emplace(std::make_pair(bindings, flags.options.inputValues),
                        std::move(bytes))
               .first;
    }
    outcome.message = use(set, it->second, signature, inputs);
    if (!outcome.message.empty())
      return outcome;
  }
  outcome.passed = true;
  return outcome;
}

/// Compiles and runs one case (in its child process).
static cases::Outcome runCase(const tio::TestCase &test) {
  return compileCase(test, [&](const tio::TestDataSet &set,
                               const std::vector<uint8_t> &bytes,
                               const tio::ModelSignature &signature,
                               cases::CaseInputs &inputs) {
    std::shared_ptr<const rt::Module> module =
        rt::Module::loadFromMemory(bytes, test.modelPath);
    return cases::runDataSet(module, set, signature, std::move(inputs), relTol,
                             absTol);
  });
}

/// <compile-only dir>/<suite>/<case>.
static std::string caseOutputDir(const tio::TestCase &test) {
  return compileOnly + "/" + test.suite + "/" + test.name;
}

/// Compiles one case and writes its modules.
static cases::Outcome writeCase(const tio::TestCase &test) {
  std::string dir = caseOutputDir(test);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    cases::Outcome outcome;
    outcome.message = "cannot create " + dir + ": " + ec.message();
    return outcome;
  }
  return compileCase(
      test, [&](const tio::TestDataSet &set, const std::vector<uint8_t> &bytes,
                const tio::ModelSignature &, cases::CaseInputs &) {
        std::string path = dir + "/" + cases::dataSetName(set) + ".strata";
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
        out.close();
        return out ? std::string() : "cannot write " + path;
      });
}

int runConformance() {
  const Target *target = lookupTarget(conformanceTarget);
  if (!target) {
    llvm::errs() << "strata: error: " << unknownTargetMessage(conformanceTarget)
                 << "\n";
    return 1;
  }
  if (std::string why = target->compileOnlyReason();
      !why.empty() && compileOnly.empty()) {
    llvm::errs() << "strata: error: " << why
                 << "; --compile-only DIR compiles the cases\n";
    return 1;
  }
  std::vector<tio::TestCase> found;
  try {
    found = tio::findCases(
        std::vector<std::string>(caseDirs.begin(), caseDirs.end()));
  } catch (const std::exception &e) {
    llvm::errs() << "strata: error: " << e.what() << "\n";
    return 1;
  }
  cases::RunOptions options;
  options.jobs = jobs;
  options.timeout = timeout;
  options.expectedFailures = expectedFile;
  options.writeExpectedFailures = writeExpected;
  options.jsonReport = jsonReport;
  options.quiet = quiet;
  llvm::outs().flush();
  if (!compileOnly.empty()) {
    options.listedMayPass = true;
    // A case that does not compile leaves the reason for the runner.
    options.afterCase = [](const tio::TestCase &test,
                           const cases::Outcome &outcome) {
      if (outcome.passed)
        return;
      std::string dir = caseOutputDir(test);
      llvm::sys::fs::create_directories(dir);
      std::ofstream(dir + "/compile-error.txt") << outcome.message << "\n";
    };
    return cases::runCases(found, options, writeCase);
  }
  // A GPU run is not forked into cases that share the parent's CUDA state:
  // the parent never touches the driver, each case initializes it.
  return cases::runCases(found, options, runCase);
}
