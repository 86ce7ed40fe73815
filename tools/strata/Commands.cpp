//===- Commands.cpp - strata compile, run and bench -------------*- C++ -*-===//
//
//   strata compile model.onnx -o model.strata [--target=cpu] [--cpu=...]
//   strata compile model.onnx -o out.mlir --compile-to=kernel
//   strata compile in.mlir --compile-from=fused -o model.strata
//   strata compile --print-pipeline
//   strata run model.onnx|model.strata [inputs...]
//   strata bench model.onnx|model.strata [inputs...] [--runs R --warmup W]
//
// Inputs are .npy or ONNX TensorProto (.pb) files, in the model's input order
// or as NAME=FILE; inputs not given are random (fixed seed). An ONNX model
// is compiled for the shapes of the inputs it is given; --input-shape binds
// the dynamic dimensions of random inputs (default 1). Compiled modules go
// through the compile cache (Driver.h; docs/cli.md).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "Explain.h"

#include "strata/Compiler/Pipeline.h"
#include "strata/Target/Target.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

using namespace mlir;
using namespace strata;
using namespace strata::driver;
namespace cl = llvm::cl;

static cl::SubCommand compileCmd("compile",
                                 "Compile an ONNX model into a strata module");
static cl::SubCommand runCmd("run", "Run a model or module once and print "
                                    "its outputs");
static cl::SubCommand benchCmd("bench", "Time a model or module: warm-up "
                                        "runs, then the median of timed runs");

// Optional, so that `compile --print-pipeline` needs no model; each command
// checks that it was given.
static cl::opt<std::string> modelPath(cl::Positional,
                                      cl::desc("<model.onnx|model.strata>"),
                                      cl::sub(compileCmd), cl::sub(runCmd),
                                      cl::sub(benchCmd));
static cl::list<std::string>
    inputFiles(cl::Positional, cl::desc("[input files: FILE or NAME=FILE]"),
               cl::sub(runCmd), cl::sub(benchCmd));
static cl::opt<std::string> compileOutput(
    "o",
    cl::desc("Output file: the module, or with --compile-to the stage's "
             "MLIR ('-': stdout) or the kernels' shared object"),
    cl::value_desc("file"), cl::sub(compileCmd));
static cl::opt<std::string>
    compileTo("compile-to",
              cl::desc("Stop after this stage: import, graph, fused, kernel, "
                       "cpu or gpu (the target's), llvm (write its MLIR), "
                       "object (the kernels' shared object) or module "
                       "(default)"),
              cl::value_desc("stage"), cl::init("module"), cl::sub(compileCmd));
static cl::opt<std::string> compileFrom(
    "compile-from",
    cl::desc("The input is an .mlir file at this stage (import, graph, fused, "
             "kernel, cpu or gpu, llvm); compile the stages after it"),
    cl::value_desc("stage"), cl::sub(compileCmd));
static cl::opt<bool> printPipeline(
    "print-pipeline",
    cl::desc("Print each stage's pass pipeline (with the plugins' edits) and "
             "exit"),
    cl::sub(compileCmd));
static cl::opt<std::string> target("target",
                                   cl::desc("Target: cpu (default), cuda, or "
                                            "rocm (compile-only)"),
                                   cl::init("cpu"), cl::sub(compileCmd),
                                   cl::sub(runCmd), cl::sub(benchCmd));
cl::opt<std::string>
    cpuOption("cpu",
              cl::desc("The processor to generate code for: native "
                       "(default); on cpu avx2, avx512 or an LLVM CPU name, "
                       "on cuda an NVPTX name (sm_90a), on rocm an AMDGPU "
                       "name (gfx942)"),
              cl::init("native"), cl::sub(compileCmd), cl::sub(runCmd),
              cl::sub(benchCmd), cl::sub(conformanceCommand()));
cl::opt<bool> hostKernels(
    "host-kernels",
    cl::desc("Run every op the runtime has a host kernel for on the host, "
             "one op per step: a slow reference for bisecting a result"),
    cl::Hidden, cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd),
    cl::sub(conformanceCommand()));
cl::opt<bool> noLibraries("no-libraries",
                          cl::desc("Generate every kernel (no oneDNN)"),
                          cl::sub(compileCmd), cl::sub(runCmd),
                          cl::sub(benchCmd), cl::sub(conformanceCommand()));
namespace {
/// --precision takes fp32, fp16 or bf16; the command line refuses anything
/// else with the choices, on every command that has the option.
struct PrecisionParser : cl::parser<std::string> {
  using cl::parser<std::string>::parser;
  bool parse(cl::Option &option, llvm::StringRef, llvm::StringRef arg,
             std::string &value) {
    if (arg != "fp32" && arg != "fp16" && arg != "bf16")
      return option.error("'" + arg +
                          "' is not a precision: use fp32, fp16 or bf16");
    value = arg.str();
    return false;
  }
};
} // namespace

static cl::opt<std::string, false, PrecisionParser> precision(
    "precision",
    cl::desc("Store f32 tensors between kernels as fp16 or bf16, computing "
             "in f32 inside kernels (default fp32: as the model says)"),
    cl::value_desc("fp32|fp16|bf16"), cl::init("fp32"), cl::sub(compileCmd),
    cl::sub(runCmd), cl::sub(benchCmd), cl::sub(conformanceCommand()),
    cl::sub(explainCommand()));

std::string strata::driver::precisionFlag() { return precision; }

static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Bind an input's shape: NAME=D0,D1,... (repeatable); "
                         "a sequence input S by S=N and S[0]=..., an "
                         "optional O by O=0 or O=1 and O[0]=..."),
                cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd));
static cl::list<std::string> inputValues(
    "input-value",
    cl::desc("Give a small input's value, NAME=V0,V1,... (repeatable): used "
             "only where a shape or trip count depends on it, and then "
             "required at run time"),
    cl::sub(compileCmd));
static cl::opt<bool> verbose("v", cl::desc("Report each compile stage"),
                             cl::sub(compileCmd), cl::sub(runCmd),
                             cl::sub(benchCmd));
static cl::opt<std::string>
    dumpIr("dump-ir",
           cl::desc("Write each compile stage's IR into this directory"),
           cl::value_desc("dir"), cl::sub(compileCmd), cl::sub(runCmd),
           cl::sub(benchCmd));
static cl::opt<std::string>
    decisionsFile("decisions",
                  cl::desc("A JSON file of forced decisions (docs/explain.md)"),
                  cl::value_desc("file"), cl::sub(compileCmd), cl::sub(runCmd),
                  cl::sub(benchCmd));
static cl::opt<std::string> reproducerDir(
    "reproducer-dir",
    cl::desc("Where a failing pass writes its crash reproducer (default: the "
             "system's temporary directory)"),
    cl::value_desc("dir"), cl::sub(compileCmd), cl::sub(runCmd),
    cl::sub(benchCmd));
static cl::opt<bool>
    noCache("no-cache",
            cl::desc("Compile again instead of using the compile cache"),
            cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd));
static cl::opt<bool> explainCache(
    "explain-cache",
    cl::desc("Say whether the compile cache hit, and on a miss which part of "
             "the key differs from the entries for the same model"),
    cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd));
static cl::opt<unsigned> threads("threads",
                                 cl::desc("Threads to run with (0: all cores)"),
                                 cl::init(1), cl::sub(runCmd),
                                 cl::sub(benchCmd));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of random inputs"),
                              cl::init(0), cl::sub(runCmd), cl::sub(benchCmd));
static cl::opt<bool> allowNewerOpset(
    "allow-newer-opset",
    cl::desc("Read a model of an opset newer than strata knows as the newest "
             "it knows (at your own risk)"),
    cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd));
static cl::opt<std::string>
    outputDir("output-dir", cl::desc("Write the outputs as NAME.npy here"),
              cl::sub(runCmd));
static cl::opt<unsigned> warmup("warmup", cl::desc("Untimed runs first"),
                                cl::init(3), cl::sub(benchCmd));
static cl::opt<unsigned> runs("runs", cl::desc("Timed runs"), cl::init(20),
                              cl::sub(benchCmd));
static cl::opt<bool> profile("profile",
                             cl::desc("Time each step and print the table"),
                             cl::sub(benchCmd));
static cl::opt<bool> json("json", cl::desc("Print the timing as one JSON line"),
                          cl::sub(benchCmd));
static cl::opt<std::string>
    traceFile("trace",
              cl::desc("Write the timed runs' steps as a Chrome/Perfetto "
                       "trace (JSON) to this file"),
              cl::value_desc("file"), cl::sub(benchCmd));

static int fail(const std::string &message) {
  // The runtime's messages name strata themselves ("strata: --target=cuda
  // needs an NVIDIA GPU ..."), for programs that use it as a library; here
  // the prefix below says it once.
  llvm::StringRef text(message);
  text.consume_front("strata: ");
  llvm::errs() << "strata: error: " << text << "\n";
  return 1;
}

/// Parses each `--<flag>` binding of `texts` into `out` with `parse`
/// (parseShapeBinding, parseValueBinding); false after reporting one.
template <typename T>
static bool collectBindings(
    const cl::list<std::string> &texts, const char *flag,
    std::string (*parse)(const std::string &, std::string &, std::vector<T> &),
    std::map<std::string, std::vector<T>> &out) {
  for (const std::string &text : texts) {
    std::string name;
    std::vector<T> list;
    std::string error = parse(text, name, list);
    if (!error.empty()) {
      fail(std::string("--") + flag + ": " + error);
      return false;
    }
    out[name] = list;
  }
  return true;
}

static bool compileFlags(CompileFlags &flags) {
  flags.options.allowNewerOpset = allowNewerOpset;
  flags.options.target = target;
  flags.options.cpu = cpuOption;
  flags.options.verbose = verbose;
  flags.options.useLibraries = !noLibraries;
  flags.options.hostKernels = hostKernels;
  flags.options.precision = precision;
  flags.options.dumpDir = dumpIr;
  flags.options.decisionsFile = decisionsFile;
  flags.options.reproducerDir = reproducerDir;
  flags.useCache = !noCache;
  flags.explainCache = explainCache;
  if (std::string bad = checkTargetOptions(toCompileOptions(flags, {}));
      !bad.empty()) {
    fail(bad);
    return false;
  }
  if (!flags.options.decisionsFile.empty() &&
      !llvm::sys::fs::exists(flags.options.decisionsFile)) {
    fail("--decisions: no such file: " + flags.options.decisionsFile);
    return false;
  }
  return collectBindings(inputShapes, "input-shape", parseShapeBinding,
                         flags.options.inputShapes) &&
         collectBindings(inputValues, "input-value", parseValueBinding,
                         flags.options.inputValues);
}

static tio::HostTensor readTensorFile(const std::string &path) {
  llvm::StringRef p(path);
  if (p.ends_with(".npy"))
    return tio::readNpy(path);
  if (p.ends_with(".pb"))
    return tio::readTensorProto(path).tensor;
  throw tio::TensorIOError(path + ": not a .npy or .pb tensor file");
}

/// Tensors of strings are not bytes: these convert them, and hand every
/// other tensor to toRuntime/toHost.
static rt::Tensor toRuntimeTensor(const tio::HostTensor &tensor) {
  if (tensor.type == tio::ElementType::String)
    return rt::Tensor::fromStrings(tensor.shape, tensor.strings);
  return toRuntime(tensor);
}
static tio::HostTensor toHostTensor(const rt::Tensor &tensor) {
  if (tensor.dtype() == rt::DType::String)
    return tio::makeStringTensor(tensor.shape(), tensor.strings());
  return toHost(tensor);
}

static rt::Tensor randomTensor(rt::DType dtype,
                               const std::vector<int64_t> &shape,
                               std::mt19937_64 &rng) {
  rt::Tensor t = rt::Tensor::zeros(dtype, shape);
  if (dtype == rt::DType::String) {
    // Words rather than noise, so that string ops have something to do.
    std::uniform_int_distribution<int> word(0, 9);
    for (std::string &s : t.strings())
      s = "word" + std::to_string(word(rng));
    return t;
  }
  int64_t n = t.numElements();
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  auto *bytes = static_cast<uint8_t *>(t.rawData());
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
    case rt::DType::F32:
      reinterpret_cast<float *>(bytes)[i] = static_cast<float>(uniform(rng));
      break;
    case rt::DType::F64:
      reinterpret_cast<double *>(bytes)[i] = uniform(rng);
      break;
    case rt::DType::I1:
      bytes[i] = small(rng) & 1;
      break;
    case rt::DType::I8:
    case rt::DType::U8:
      bytes[i] = small(rng);
      break;
    case rt::DType::I32:
    case rt::DType::U32:
      reinterpret_cast<int32_t *>(bytes)[i] = small(rng);
      break;
    case rt::DType::I64:
    case rt::DType::U64:
      reinterpret_cast<int64_t *>(bytes)[i] = small(rng);
      break;
    default:
      // f16, bf16 and 16-bit integers: small integers' bit patterns are
      // valid for all of them; zero keeps it simple and deterministic.
      break;
    }
  }
  return t;
}

namespace {
/// A model or module ready to run with its inputs.
struct Prepared {
  std::shared_ptr<const rt::Module> module;
  std::vector<rt::Tensor> inputs;
};
} // namespace

static bool prepare(Prepared &prepared) {
  CompileFlags flags;
  if (!compileFlags(flags))
    return false;
  if (const Target *t = lookupTarget(flags.options.target)) {
    if (std::string why = t->compileOnlyReason(); !why.empty()) {
      fail(why);
      return false;
    }
  }
  if (modelPath.empty()) {
    fail("give the model (.onnx) or module (.strata)");
    return false;
  }
  bool isModule = isModuleFile(modelPath);
  std::vector<InputInfo> infos;
  try {
    if (isModule) {
      prepared.module = rt::Module::load(modelPath);
      for (const rt::TensorSignature &sig : prepared.module->inputs())
        infos.push_back({sig.name, sig.dtype, sig.shape});
    } else if (!readModelInputs(modelPath, infos,
                                flags.options.allowNewerOpset)) {
      return false;
    }
    // Random or .npy/.pb tensors stand for tensor inputs only.
    for (const InputInfo &info : infos)
      if (!info.container.empty()) {
        fail("input '" + info.name + "' of " + modelPath + " is " +
             (info.container == "optional" ? "an " : "a ") + info.container +
             "; `run` and `bench` take tensor inputs only (`strata "
             "conformance` runs models with sequence and optional inputs, "
             "read from .pb files)");
        return false;
      }

    std::vector<std::optional<rt::Tensor>> given(infos.size());
    std::vector<bool> fromFile(infos.size(), false);
    size_t positional = 0;
    for (const std::string &arg : inputFiles) {
      size_t eq = arg.find('=');
      size_t index = positional;
      std::string file = arg;
      if (eq != std::string::npos) {
        std::string name = arg.substr(0, eq);
        file = arg.substr(eq + 1);
        auto it =
            std::find_if(infos.begin(), infos.end(),
                         [&](const InputInfo &i) { return i.name == name; });
        if (it == infos.end()) {
          fail("the model has no input named '" + name + "'");
          return false;
        }
        index = it - infos.begin();
      } else {
        ++positional;
      }
      if (index >= infos.size()) {
        fail("more input files than the model's " +
             std::to_string(infos.size()) + " inputs");
        return false;
      }
      given[index] = toRuntimeTensor(readTensorFile(file));
      fromFile[index] = true;
      // Strings and numbers never convert: say so before compiling.
      if ((given[index]->dtype() == rt::DType::String) !=
          (infos[index].dtype == rt::DType::String)) {
        fail(file + " holds " + rt::dtypeName(given[index]->dtype()) +
             rt::shapeToString(given[index]->shape()) + ", but input '" +
             infos[index].name + "' is of type " +
             rt::dtypeName(infos[index].dtype));
        return false;
      }
    }

    std::mt19937_64 rng(seed);
    std::map<std::string, std::vector<int64_t>> shapes;
    for (size_t i = 0; i < infos.size(); ++i) {
      if (!given[i]) {
        std::vector<int64_t> shape = infos[i].shape;
        auto bound = flags.options.inputShapes.find(infos[i].name);
        if (bound != flags.options.inputShapes.end()) {
          shape = bound->second;
        } else if (llvm::is_contained(shape, -1)) {
          for (int64_t &d : shape)
            d = d < 0 ? 1 : d;
          llvm::errs() << "strata: note: input '" << infos[i].name
                       << "' has dynamic dimensions; using "
                       << rt::shapeToString(shape)
                       << " (bind with --input-shape)\n";
        }
        given[i] = randomTensor(infos[i].dtype, shape, rng);
      }
      // The key names the shapes compile would be given: bindings of
      // dynamic dimensions, and shapes the user chose over the model's.
      // A static input at its declared shape is left out, so that `run`
      // hits the entry `compile` made without --input-shape.
      if (llvm::is_contained(infos[i].shape, -1) ||
          given[i]->shape() != infos[i].shape ||
          flags.options.inputShapes.count(infos[i].name))
        shapes[infos[i].name] = given[i]->shape();
      // The value of a small input read from a file, for the compiler to
      // use where a shape depends on it (generated inputs are random and
      // offer none). It is part of the cache key.
      if (fromFile[i] && !isModule && given[i]->dtype() != rt::DType::String)
        if (std::optional<std::vector<double>> values =
                smallInputValues(toHost(*given[i])))
          flags.options.inputValues[infos[i].name] = std::move(*values);
      prepared.inputs.push_back(std::move(*given[i]));
    }
    if (!isModule) {
      prepared.module = compileOnnx(modelPath, flags, shapes);
      if (!prepared.module)
        return false;
    }
  } catch (const std::exception &e) {
    fail(e.what());
    return false;
  }
  return true;
}

/// The stage named by --compile-to or --compile-from; an error listing the
/// stages otherwise.
static std::optional<Stage> stageOption(const std::string &value,
                                        const char *flag) {
  if (std::optional<Stage> stage = parseStage(value))
    return stage;
  fail("unknown stage '" + value + "' for --" + flag +
       " (stages: " + stageNameList() + ")");
  return std::nullopt;
}

/// "import, graph, fused, kernel, cpu, llvm".
static std::string irStageList() {
  std::string list;
  for (Stage stage : allStages())
    if (isIRStage(stage))
      list += (list.empty() ? "" : ", ") + stageName(stage).str();
  return list;
}

/// `compile --print-pipeline`: the options recorded on the module, then
/// each IR stage's pass pipeline as strata runs it, the plugins' edits applied
/// (edits that match no pass were reported when the plugins loaded).
static int printStagePipelines(const CompileFlags &flags) {
  CompileOptions options = toCompileOptions(flags, flags.options.inputShapes);
  // What the passes read from the module rather than from option text.
  llvm::outs() << "options: " << compileOptionsText(options) << "\n";
  for (Stage stage : allStages()) {
    if (!isIRStage(stage) || stage == Stage::Import ||
        !stageApplies(stage, options.target))
      continue;
    llvm::outs() << stageName(stage) << ": "
                 << stagePipelineText(stage, options) << "\n";
  }
  return 0;
}

static int writeBytes(const std::string &file, llvm::StringRef bytes,
                      llvm::StringRef what) {
  std::error_code ec;
  llvm::raw_fd_ostream out(file, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write " + file + ": " + ec.message());
  out << bytes;
  out.close();
  if (out.has_error())
    return fail("cannot write " + file + ": " + out.error().message());
  llvm::errs() << "strata: wrote " << file << " (" << what << ", "
               << bytes.size() << " bytes)\n";
  return 0;
}

/// `compile --compile-to=STAGE` for an IR stage or the object: runs the
/// stages after `from` on the input and writes the result.
static int compileToStage(const CompileFlags &flags, Stage from, Stage to) {
  auto context = makeContext(modelPath);
  OwningOpRef<ModuleOp> module = loadSource(*context, modelPath, from);
  if (!module)
    return 1;
  CompileOptions options = toCompileOptions(flags, flags.options.inputShapes);
  clearDumpDirectory(options, modelPath);
  Stage last = to == Stage::Object ? Stage::Llvm : to;
  if (from < last && failed(runStages(*module, options, from, last)))
    return 1;
  if (to == Stage::Object) {
    const Target *target = lookupTarget(options);
    if (!target) {
      llvm::errs() << "strata: error: " << unknownTargetMessage(options.target)
                   << "\n";
      return 1;
    }
    std::vector<uint8_t> object;
    std::string what;
    if (failed(target->generateObject(*module, options, object, what)))
      return 1;
    if (object.empty())
      llvm::errs() << "strata: note: the model has no generated kernels; the "
                      "object is empty\n";
    return writeBytes(
        compileOutput,
        llvm::StringRef(reinterpret_cast<const char *>(object.data()),
                        object.size()),
        what.c_str());
  }
  std::string error;
  auto output = openOutputFile(compileOutput, &error);
  if (!output)
    return fail(error);
  // Locations carry the ONNX node names; printed as aliases so that the
  // file parses again (--compile-from). Constants are printed in full for
  // the same reason.
  OpPrintingFlags printing;
  printing.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(output->os(), printing);
  output->keep();
  return 0;
}

static int runCompile() {
  // The compiler checks the target (CompileOptions::target).
  CompileFlags flags;
  if (!compileFlags(flags))
    return 1;
  if (printPipeline)
    return printStagePipelines(flags);
  if (modelPath.empty())
    return fail("give the model to compile (.onnx, or .mlir with "
                "--compile-from)");

  std::optional<Stage> to = stageOption(compileTo, "compile-to");
  if (!to)
    return 1;
  bool fromGiven = compileFrom.getNumOccurrences() > 0;
  Stage from = Stage::Import;
  if (fromGiven) {
    std::optional<Stage> stage = stageOption(compileFrom, "compile-from");
    if (!stage)
      return 1;
    from = *stage;
    if (!isIRStage(from))
      return fail("--compile-from=" + compileFrom +
                  ": compilation starts from MLIR at one of the stages " +
                  irStageList());
    if (from >= *to)
      return fail("--compile-from=" + compileFrom +
                  " must come before --compile-to=" + compileTo +
                  " (stages in order: " + stageNameList() + ")");
  }
  if (isMlirFile(modelPath) && !fromGiven)
    return fail(modelPath +
                " is an MLIR file: give the stage it is at with "
                "--compile-from=STAGE (one of " +
                irStageList() + ")");
  if (!isMlirFile(modelPath) && from != Stage::Import)
    return fail("--compile-from=" + compileFrom +
                " reads an .mlir file at that stage; " + modelPath +
                " is not one");
  if (from > Stage::Import && !flags.options.inputShapes.empty())
    return fail("--input-shape binds shapes in the graph stage; a module "
                "from the " +
                stageName(from).str() + " stage has its shapes already");
  // Options that decide how the fused stage is made (Pipeline.cpp,
  // Stage::Fused): a module from that stage or a later one was made with its
  // own, and would silently keep them.
  if (from >= Stage::Fused) {
    std::vector<std::string> given;
    if (!flags.options.precision.empty() && flags.options.precision != "fp32")
      given.push_back("--precision=" + flags.options.precision);
    if (!flags.options.decisionsFile.empty())
      given.push_back("--decisions");
    if (!flags.options.useLibraries)
      given.push_back("--no-libraries");
    if (flags.options.hostKernels)
      given.push_back("--host-kernels");
    bool one = given.size() == 1;
    if (!given.empty())
      return fail(llvm::join(given, ", ") + (one ? " decides" : " decide") +
                  " how the fused stage is made; a module from the " +
                  stageName(from).str() +
                  " stage was made with its own: " + "give " +
                  (one ? "it" : "them") + " when compiling to the fused stage");
  }
  if (compileOutput.empty())
    return fail(*to == Stage::Module
                    ? "give the output module file with -o"
                    : "give the output file with -o ('-' for stdout)");
  flags.from = from;

  if (*to != Stage::Module)
    return compileToStage(flags, from, *to);

  std::vector<uint8_t> bytes;
  if (!compileOnnxBytes(modelPath, flags, flags.options.inputShapes, bytes))
    return 1;
  // A compile-only target's output is its code object, not a module.
  const Target *targetOf = lookupTarget(flags.options.target);
  bool compileOnly = targetOf && !targetOf->compileOnlyReason().empty();
  return writeBytes(
      compileOutput,
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                      bytes.size()),
      compileOnly ? "code object" : "module");
}

/// "f32[2, 3]  min -1.2  max 3.4  mean 0.5  [0.1, 0.2, ...]".
static std::string summarize(const rt::Tensor &tensor) {
  tio::HostTensor host = toHostTensor(tensor);
  std::string s;
  llvm::raw_string_ostream os(s);
  os << rt::dtypeName(tensor.dtype()) << rt::shapeToString(tensor.shape());
  int64_t n = host.numElements();
  // Strings have no min, max or mean: their first values say more.
  if (n > 0 && host.type != tio::ElementType::String) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = host.elementAsDouble(i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    os << "  min " << llvm::format("%g", lo) << "  max "
       << llvm::format("%g", hi) << "  mean " << llvm::format("%g", sum / n);
  }
  os << "  [";
  for (int64_t i = 0; i < std::min<int64_t>(n, 6); ++i)
    os << (i ? ", " : "") << host.elementToString(i);
  os << (n > 6 ? ", ...]" : "]");
  return s;
}

static unsigned threadCount() {
  return threads ? threads.getValue()
                 : std::max(1u, std::thread::hardware_concurrency());
}

static double runOnce(rt::Session &session) {
  auto start = std::chrono::steady_clock::now();
  session.run();
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// The file `strata run --output-dir` writes an output to: NAME.npy, with
/// every character other than letters, digits, '.', '_' and '-' made '_'
/// (exporters name outputs "/model/head/Add_output_0"), and the output's
/// index added where that name is empty, taken or a dot file.
static std::string npyFileName(const std::string &name, size_t index,
                               std::set<std::string> &taken) {
  std::string file;
  for (char c : name)
    file += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                    c == '_' || c == '-'
                ? c
                : '_';
  if (file.empty() || file[0] == '.' || taken.count(file + ".npy"))
    file = "output_" + std::to_string(index) + (file.empty() ? "" : "_" + file);
  file += ".npy";
  taken.insert(file);
  return file;
}

static int runRun() {
  Prepared prepared;
  if (!prepare(prepared))
    return 1;
  try {
    rt::SessionOptions options;
    options.threads = threads;
    rt::Session session(prepared.module, options);
    for (size_t i = 0; i < prepared.inputs.size(); ++i)
      session.setInput(i, prepared.inputs[i]);
    double ms = runOnce(session);
    if (!outputDir.empty())
      if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
        return fail("--output-dir " + outputDir +
                    ": cannot create it: " + ec.message());
    const auto &outputs = prepared.module->outputs();
    std::set<std::string> files;
    for (size_t i = 0; i < outputs.size(); ++i) {
      llvm::outs() << outputs[i].name << ": " << summarize(session.output(i))
                   << "\n";
      if (!outputDir.empty())
        tio::writeNpy(outputDir + "/" + npyFileName(outputs[i].name, i, files),
                      toHostTensor(session.output(i)));
    }
    llvm::outs() << "ran in " << llvm::format("%.3f", ms) << " ms ("
                 << prepared.module->steps().size() << " steps, "
                 << threadCount() << " threads)\n";
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  return 0;
}

/// `strata bench --trace FILE`: the timed runs as a Chrome trace-event file
/// (the JSON object format, which Perfetto's UI and chrome://tracing open):
/// one complete ("X") event per step of each run, named as the step (its
/// kernel name says what was fused) with its ONNX nodes, on the host thread
/// or the CUDA stream, inside one event per run. Times in microseconds.
static bool writeTrace(const std::string &path, const rt::Module &module,
                       const std::vector<rt::StepEvent> &events,
                       unsigned threads, std::string &error) {
  bool cuda = module.target() == "cuda";
  const int pid = 1, hostTid = 1, stepTid = cuda ? 2 : 1, runTid = 0;
  llvm::json::Array out;
  auto meta = [&](const char *name, int tid, const std::string &value) {
    llvm::json::Object event{{"name", name},
                             {"ph", "M"},
                             {"pid", pid},
                             {"args", llvm::json::Object{{"name", value}}}};
    if (tid >= 0)
      event["tid"] = tid;
    out.push_back(std::move(event));
  };
  meta("process_name", -1, "strata " + module.name());
  meta("thread_name", runTid, "runs");
  meta("thread_name", hostTid,
       "steps (host, " + std::to_string(threads) + " threads)");
  if (cuda)
    meta("thread_name", stepTid, "steps (CUDA stream)");
  // One event spanning each run's steps.
  std::map<uint32_t, std::pair<double, double>> runs;
  for (const rt::StepEvent &e : events) {
    auto [it, fresh] = runs.try_emplace(e.run, e.start, e.start + e.duration);
    if (!fresh) {
      it->second.first = std::min(it->second.first, e.start);
      it->second.second = std::max(it->second.second, e.start + e.duration);
    }
  }
  for (auto &[run, span] : runs)
    out.push_back(
        llvm::json::Object{{"name", "run " + std::to_string(run)},
                           {"cat", "run"},
                           {"ph", "X"},
                           {"pid", pid},
                           {"tid", runTid},
                           {"ts", span.first * 1e6},
                           {"dur", (span.second - span.first) * 1e6}});
  for (const rt::StepEvent &e : events) {
    const rt::Step &step = module.steps()[e.step];
    bool kernel = step.kind == rt::StepKind::Kernel;
    out.push_back(llvm::json::Object{
        {"name", step.name},
        {"cat", kernel ? "codegen" : "library"},
        {"ph", "X"},
        {"pid", pid},
        {"tid", stepTid},
        {"ts", e.start * 1e6},
        {"dur", e.duration * 1e6},
        {"args",
         llvm::json::Object{{"step", static_cast<int64_t>(e.step)},
                            {"run", static_cast<int64_t>(e.run)},
                            {"nodes", llvm::json::Array(step.sourceNodes)}}}});
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "--trace " + path + ": " + ec.message();
    return false;
  }
  os << llvm::formatv("{0}", llvm::json::Value(llvm::json::Object{
                                 {"traceEvents", std::move(out)},
                                 {"displayTimeUnit", "ms"}}))
     << "\n";
  os.close();
  if (os.has_error()) {
    error = "--trace " + path + ": " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

/// The per-step profile of `strata bench --profile`: average time per run
/// of the timed runs, slowest first, as a table or (with --json) as the
/// "steps" array of the JSON object, so that stdout stays one JSON value.
static llvm::json::Array stepProfile(const rt::Session &session,
                                     const rt::Module &module,
                                     const std::vector<double> &total,
                                     const std::vector<double> &warmupPart,
                                     unsigned timedRuns, bool asTable) {
  std::vector<std::pair<double, size_t>> rows;
  double sum = 0;
  for (size_t i = 0; i < total.size(); ++i) {
    double seconds = (total[i] - warmupPart[i]) / timedRuns;
    rows.push_back({seconds, i});
    sum += seconds;
  }
  std::sort(rows.rbegin(), rows.rend());
  if (asTable)
    llvm::outs() << llvm::format("%10s %6s  %-8s %s\n", "ms/run", "%", "kind",
                                 "step (ONNX nodes)");
  llvm::json::Array steps;
  for (auto [seconds, i] : rows) {
    const rt::Step &step = module.steps()[i];
    const char *kind =
        step.kind == rt::StepKind::Kernel ? "codegen" : "library";
    double share = sum > 0 ? 100 * seconds / sum : 0.0;
    llvm::json::Array nodeList;
    std::string nodes;
    for (const std::string &node : step.sourceNodes) {
      nodes += (nodes.empty() ? "" : ", ") + node;
      nodeList.push_back(node);
    }
    std::string choice = session.stepChoice(i);
    llvm::json::Object entry{{"step", step.name},
                             {"kind", kind},
                             {"ms_per_run", seconds * 1e3},
                             {"percent", share},
                             {"nodes", std::move(nodeList)}};
    if (!choice.empty())
      entry["choice"] = choice;
    steps.push_back(std::move(entry));
    if (!asTable)
      continue;
    if (nodes.size() > 60)
      nodes = nodes.substr(0, 57) + "...";
    llvm::outs() << llvm::format("%10.4f %6.1f  %-8s %s (%s)\n", seconds * 1e3,
                                 share, kind, step.name.c_str(), nodes.c_str());
    if (!choice.empty())
      llvm::outs() << llvm::format("%26s%s\n", "", choice.c_str());
  }
  return steps;
}

static int runBench() {
  Prepared prepared;
  if (!prepare(prepared))
    return 1;
  if (runs == 0)
    return fail("--runs must be at least 1");
  try {
    rt::SessionOptions options;
    options.threads = threads;
    options.profile = profile;
    options.trace = !traceFile.empty();
    rt::Session session(prepared.module, options);
    for (size_t i = 0; i < prepared.inputs.size(); ++i)
      session.setInput(i, prepared.inputs[i]);
    for (unsigned i = 0; i < warmup; ++i)
      session.run();
    session.clearTrace();
    std::vector<double> warmupTimes = session.stepTimes();
    std::vector<double> times;
    for (unsigned i = 0; i < runs; ++i)
      times.push_back(runOnce(session));
    std::sort(times.begin(), times.end());
    double median =
        times.size() % 2
            ? times[times.size() / 2]
            : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
    llvm::json::Array steps;
    if (profile)
      steps = stepProfile(session, *prepared.module, session.stepTimes(),
                          warmupTimes, runs, /*asTable=*/!json);
    if (!traceFile.empty()) {
      std::string error;
      if (!writeTrace(traceFile, *prepared.module, session.traceEvents(),
                      threadCount(), error))
        return fail(error);
    }
    if (json) {
      llvm::outs() << "{\"median_ms\": " << llvm::format("%.6f", median)
                   << ", \"min_ms\": " << llvm::format("%.6f", times.front())
                   << ", \"runs\": " << runs.getValue()
                   << ", \"threads\": " << threadCount();
      if (profile)
        llvm::outs() << ", \"steps\": " << llvm::json::Value(std::move(steps));
      llvm::outs() << "}\n";
    } else
      llvm::outs() << "median " << llvm::format("%.3f", median) << " ms (min "
                   << llvm::format("%.3f", times.front()) << " ms, "
                   << runs.getValue() << " runs after " << warmup.getValue()
                   << " warm-up, " << threadCount() << " threads)\n";
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  return 0;
}

int runConformance();

int strata::driver::dispatchCommands() {
  if (compileCmd)
    return runCompile();
  if (runCmd)
    return runRun();
  if (benchCmd)
    return runBench();
  if (conformanceCommand())
    return runConformance();
  if (explainCommand())
    return runExplain();
  if (cacheCommand())
    return runCacheCommand();
  return -1;
}
