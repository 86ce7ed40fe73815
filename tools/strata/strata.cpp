//===- strata.cpp - the strata command-line driver --------------*- C++ -*-===//
//
// `strata <command> ...`. Commands: import (ONNX to graph IR) here; compile,
// run and bench in Commands.cpp; conformance in Conformance.cpp; explain in
// Explain.cpp.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/Transforms/Passes.h"
#include "strata/Import/OnnxImporter.h"
#include "strata/InitAll.h"

#include "strata/Plugin/Loader.h"

#include "Driver.h"
#include "Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer build instruments strata but not libLLVM/libMLIR. LLVM's
// BumpPtrAllocator is a header template: when strata's instrumented copy of
// it opens a slab (an attribute storage of the kernel dialect does), it
// poisons the whole slab and unpoisons only its own allocation, and the
// uninstrumented library later hands out the rest of that slab without
// unpoisoning it. The first read of such memory is a false use-after-poison,
// so manual poisoning is off; ASan's own checks all stay on.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
#endif

static cl::SubCommand importCmd("import",
                                "Import an ONNX model and print its graph IR");

static cl::opt<std::string> importInput(cl::Positional, cl::Required,
                                        cl::desc("<model.onnx|model.onnxtxt>"),
                                        cl::sub(importCmd));
static cl::opt<std::string> outputFile("o",
                                       cl::desc("Output file ('-': stdout)"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::sub(importCmd));
static cl::opt<bool> noChecker("no-checker",
                               cl::desc("Skip ONNX's model checker"),
                               cl::sub(importCmd));
static cl::opt<bool> noShapeInference("no-shape-inference",
                                      cl::desc("Skip ONNX's shape inference"),
                                      cl::sub(importCmd));
static cl::opt<int>
    targetOpset("opset",
                cl::desc("Convert older models to this opset (default 17)"),
                cl::init(17), cl::sub(importCmd));
static cl::opt<bool> runGraphStage(
    "graph-pipeline",
    cl::desc(
        "Run the graph stage (fold, decompose, infer shapes) after import"),
    cl::sub(importCmd));
static cl::opt<bool> importAllowNewerOpset(
    "allow-newer-opset",
    cl::desc("Read a model of an opset newer than strata knows as the newest "
             "it knows (at your own risk)"),
    cl::sub(importCmd));
static cl::opt<bool>
    printDebugInfo("print-locations",
                   cl::desc("Print locations (ONNX node names) in the IR"),
                   cl::sub(importCmd));

static int runImport() {
  DialectRegistry registry;
  strata::registerAllDialects(registry);
  MLIRContext context(registry);
  strata::driver::installDiagnosticPrinter(context, importInput);
  context.printOpOnDiagnostic(false);

  strata::ImportOptions options;
  options.runChecker = !noChecker;
  options.runShapeInference = !noShapeInference;
  options.targetOpset = targetOpset;
  options.allowNewerOpset = importAllowNewerOpset;
  OwningOpRef<ModuleOp> module =
      strata::importOnnxFile(context, importInput, options);
  if (!module)
    return 1;

  if (runGraphStage) {
    PassManager pm(&context);
    strata::graph::buildGraphPipeline(pm);
    if (failed(pm.run(*module)))
      return 1;
  }

  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "strata: error: " << error << "\n";
    return 1;
  }
  OpPrintingFlags flags;
  if (printDebugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  flags.elideLargeElementsAttrs(16);
  module->print(output->os(), flags);
  output->keep();
  return 0;
}

/// Each option on the command line from argv[first] up to "--": the
/// argument, and the option's name (without dashes and value; may be
/// empty).
static std::vector<std::pair<llvm::StringRef, llvm::StringRef>>
optionsGiven(int argc, char **argv, int first) {
  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> options;
  for (int i = first; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--")
      break;
    if (arg.starts_with("-") && arg != "-")
      options.push_back({arg, arg.ltrim('-').split('=').first});
  }
  return options;
}

/// The first of LLVM's and MLIR's own options on the command line, or "".
/// They are accepted by every subcommand's parser (they live in the top
/// level), but they change code generation behind the compile cache's back;
/// they go through STRATA_LLVM_OPTIONS, which the cache keys on (docs/cli.md).
/// Read from the arguments and the option tables' names only: the options
/// are objects of libLLVM, built without RTTI, which UBSan's vptr check in
/// the sanitizer build cannot tell the type of.
static std::string llvmOptionGiven(int argc, char **argv) {
  const auto &topLevel =
      cl::getRegisteredOptions(cl::SubCommand::getTopLevel());
  for (auto [arg, name] : optionsGiven(argc, argv, 1)) {
    if (name.empty() || !topLevel.count(name) || name.starts_with("help") ||
        name == "version" || name == "print-options" ||
        name == "print-all-options")
      continue;
    // An option of the chosen subcommand is strata's own.
    bool own = false;
    for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
      if (sub != &cl::SubCommand::getTopLevel() && *sub &&
          cl::getRegisteredOptions(*sub).count(name))
        own = true;
    if (!own)
      return name.str();
  }
  return "";
}

/// The option among `sub`'s own that a user who typed `name`
/// most likely meant, or "": the nearest by edit distance within a third of
/// the name's length (at least 2), else a one-letter option that is the
/// name's first letter (`--verbose` for -v, `--output` for -o). LLVM's own
/// suggestion searches its 370 options too and proposed -o for --verbose.
static std::string suggestOption(cl::SubCommand &sub, llvm::StringRef name) {
  const auto &topLevel =
      cl::getRegisteredOptions(cl::SubCommand::getTopLevel());
  std::string best;
  unsigned bestDistance = std::max<unsigned>(2, name.size() / 3) + 1;
  std::string letter;
  for (const auto &entry : cl::getRegisteredOptions(sub)) {
    llvm::StringRef candidate = entry.first;
    // LLVM's options, --help and --version are in the top level too.
    if (candidate.empty() || topLevel.count(candidate))
      continue;
    unsigned distance = name.edit_distance(candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate.str();
    }
    if (candidate.size() == 1 && name.size() > 1 &&
        name.front() == candidate.front())
      letter = candidate.str();
  }
  if (best.empty())
    best = letter;
  if (best.empty())
    return "";
  return (best.size() == 1 ? "-" : "--") + best;
}

/// Reports the first option on the command line that neither strata nor
/// LLVM knows, with suggestOption's suggestion, and returns true; false when
/// every option is known. Runs before LLVM's parser, whose message and
/// suggestion it replaces. Reads only the option tables' names (see
/// llvmOptionGiven).
static bool reportUnknownOption(int argc, char **argv) {
  cl::SubCommand *chosen = nullptr;
  int first = 1;
  if (argc > 1)
    for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
      if (sub != &cl::SubCommand::getTopLevel() && sub->getName() == argv[1]) {
        chosen = sub;
        first = 2;
      }
  const auto &topLevel =
      cl::getRegisteredOptions(cl::SubCommand::getTopLevel());
  for (auto [arg, name] : optionsGiven(argc, argv, first)) {
    // strata has no prefix options: -ofile is unknown, as LLVM's parser
    // would also say. LLVM's own options (the top level) are accepted here
    // and refused after parsing (llvmOptionGiven).
    if (name.empty() || topLevel.count(name) ||
        (chosen && cl::getRegisteredOptions(*chosen).count(name)))
      continue;
    // The subcommands that do take it: `strata explain --no-cache` is a
    // misplaced option, not a misspelled one.
    std::vector<std::string> takers;
    for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
      if (sub != &cl::SubCommand::getTopLevel() &&
          cl::getRegisteredOptions(*sub).count(name))
        takers.push_back(sub->getName().str());
    std::string option = arg.split('=').first.str();
    if (!takers.empty()) {
      std::sort(takers.begin(), takers.end());
      std::string which = "'strata " + llvm::join(takers, "', 'strata ") +
                          "' " + (takers.size() == 1 ? "takes" : "take");
      if (chosen)
        llvm::errs() << "strata: error: '" << option
                     << "' is not an option of 'strata " << chosen->getName()
                     << "' (" << which << " it); 'strata " << chosen->getName()
                     << " --help' lists its options\n";
      else
        llvm::errs() << "strata: error: '" << option
                     << "' is an option of a command (" << which
                     << " it), and none was given; 'strata --help' lists the "
                        "commands\n";
      return true;
    }
    llvm::errs() << "strata: error: unknown option '" << option << "'";
    if (chosen) {
      std::string suggestion = suggestOption(*chosen, name);
      if (!suggestion.empty())
        llvm::errs() << " (did you mean '" << suggestion << "'?)";
      llvm::errs() << "; 'strata " << chosen->getName()
                   << " --help' lists its options\n";
    } else {
      llvm::errs() << "; 'strata --help' lists the commands\n";
    }
    return true;
  }
  return false;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  strata::registerAllPasses();
  // Plugins register passes and edit the stage pipelines: before any option
  // is parsed or pipeline built.
  std::string pluginError;
  if (!strata::plugin::loadPluginsFromEnvironment(pluginError)) {
    llvm::errs() << "strata: error: " << pluginError << "\n";
    return 1;
  }
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "strata " << strata::driver::kStrataVersion << " (LLVM/MLIR "
       << LLVM_VERSION_STRING << ")\n";
  });
  // Every strata option belongs to a subcommand; what the top level holds
  // besides --help and --version are LLVM's and MLIR's own options (some
  // 370 of them), which `strata --help` listed before the subcommands'
  // usage mattered. They stay accepted (and listed by --help-hidden).
  cl::HideUnrelatedOptions(llvm::ArrayRef<const cl::OptionCategory *>{},
                           cl::SubCommand::getTopLevel());
  if (reportUnknownOption(argc, argv))
    return 2;
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "strata: an ONNX graph compiler\n\n"
          "  strata import model.onnx          print the model's graph IR\n"
          "  strata compile model.onnx -o m.strata\n"
          "                                    compile for the CPU\n"
          "  strata compile model.onnx --compile-to=kernel -o k.mlir\n"
          "                                    stop after a stage "
          "(docs/cli.md)\n"
          "  strata run model.onnx|m.strata    run once, print the outputs\n"
          "  strata bench model.onnx|m.strata  time repeated runs\n"
          "  strata explain model.onnx         why each kernel is what it is\n"
          "  strata conformance DIR...         run ONNX backend-test cases\n"
          "  strata cache stats|clear          the compile cache "
          "(docs/cli.md)\n",
          &llvm::errs()))
    return 2;
  if (std::string name = llvmOptionGiven(argc, argv); !name.empty()) {
    llvm::errs() << "strata: error: --" << name
                 << " is an option of LLVM, not of strata; pass LLVM options "
                    "in STRATA_LLVM_OPTIONS (e.g. STRATA_LLVM_OPTIONS='--"
                 << name << "=...'), which the compile cache keys on\n";
    return 2;
  }
  if (importCmd)
    return runImport();
  if (int rc = strata::driver::dispatchCommands(); rc >= 0)
    return rc;
  llvm::errs() << "strata: no command given; run 'strata --help'\n";
  return 2;
}
