//===- Driver.cpp - shared pieces of the strata commands --------*- C++ -*-===//
//
// Diagnostics, the compile path's input (an ONNX model, or MLIR at a named
// stage), and tensor conversions. The compile cache is CompileCache.cpp.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "Version.h"

#include "strata/Compiler/Pipeline.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Import/OnnxImporter.h"
#include "strata/Plugin/Loader.h"
#include "strata/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <tuple>

using namespace mlir;

namespace strata::driver {

void installDiagnosticPrinter(MLIRContext &context, llvm::StringRef file) {
  std::string fileName = file.str();
  context.getDiagEngine().registerHandler([fileName](Diagnostic &diag) {
    llvm::errs() << formatDiagnostic(diag, fileName);
    return success();
  });
}

std::unique_ptr<MLIRContext> makeContext(llvm::StringRef file) {
  DialectRegistry registry;
  registerCompilerDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  installDiagnosticPrinter(*context, file);
  context->printOpOnDiagnostic(false);
  return context;
}

CompileOptions
toCompileOptions(const CompileFlags &flags,
                 const std::map<std::string, std::vector<int64_t>> &shapes) {
  CompileOptions options = flags.options;
  options.inputShapes = shapes;
  readCompileEnvironment(options);
  return options;
}

/// Splits "NAME=E0<sep>E1..." (the separators being any of `separators`)
/// into `name` and the elements `parse` reads (false: not an element).
/// Returns "" or why not, `form` and `kind` wording it.
template <typename T, typename Parse>
static std::string parseListBinding(const std::string &text, const char *form,
                                    const char *kind, const char *separators,
                                    std::string &name, std::vector<T> &values,
                                    Parse parse) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return std::string("expected ") + form + " in '" + text + "'";
  name = text.substr(0, eq);
  values.clear();
  std::string list = text.substr(eq + 1);
  size_t pos = 0;
  while (pos < list.size()) {
    size_t sep = list.find_first_of(separators, pos);
    std::string part = list.substr(
        pos, sep == std::string::npos ? std::string::npos : sep - pos);
    T value;
    if (part.empty() || !parse(part, value))
      return std::string("bad ") + kind + " '" + part + "' in '" + text + "'";
    values.push_back(value);
    if (sep == std::string::npos)
      break;
    pos = sep + 1;
  }
  return "";
}

std::string parseShapeBinding(const std::string &text, std::string &name,
                              std::vector<int64_t> &shape) {
  return parseListBinding<int64_t>(text, "NAME=D0,D1,...", "dimension", ",x",
                                   name, shape,
                                   [](const std::string &part, int64_t &d) {
                                     char *end = nullptr;
                                     d = std::strtoll(part.c_str(), &end, 10);
                                     return !*end && d >= 0;
                                   });
}

std::string parseValueBinding(const std::string &text, std::string &name,
                              std::vector<double> &values) {
  return parseListBinding<double>(text, "NAME=V0,V1,...", "value", ",", name,
                                  values,
                                  [](const std::string &part, double &v) {
                                    char *end = nullptr;
                                    v = std::strtod(part.c_str(), &end);
                                    return !*end;
                                  });
}

std::optional<std::vector<double>> smallInputValues(const tio::HostTensor &t) {
  if (t.type == tio::ElementType::String ||
      t.numElements() > static_cast<int64_t>(CompileOptions::kMaxValueElements))
    return std::nullopt;
  bool isFloat = tio::isFloatingPoint(t.type);
  if (isFloat && t.type != tio::ElementType::F32 &&
      t.type != tio::ElementType::F64)
    return std::nullopt; // f16/bf16: not worth a conversion of their own
  std::vector<double> values;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.elementAsDouble(i);
    // Integers beyond 2^53 would not come back exactly.
    if (!isFloat && std::fabs(v) > 9007199254740992.0)
      return std::nullopt;
    values.push_back(v);
  }
  return values;
}

static OwningOpRef<ModuleOp> importModel(MLIRContext &context,
                                         const std::string &path,
                                         bool allowNewerOpset) {
  ImportOptions options;
  options.allowNewerOpset = allowNewerOpset;
  return importOnnxFile(context, path, options);
}

OwningOpRef<ModuleOp> loadSource(MLIRContext &context, const std::string &path,
                                 Stage from, bool allowNewerOpset) {
  if (from == Stage::Import && !isMlirFile(path))
    return importModel(context, path, allowNewerOpset);
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer) {
    llvm::errs() << "strata: error: cannot read " << path << ": "
                 << buffer.getError().message() << "\n";
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module)
    llvm::errs() << "strata: error: " << path
                 << " is not valid MLIR for the compile path's dialects (given "
                    "as the "
                 << stageName(from) << " stage)\n";
  return module;
}

bool readModelInputs(const std::string &path, std::vector<InputInfo> &inputs,
                     bool allowNewerOpset) {
  auto context = makeContext(path);
  OwningOpRef<ModuleOp> module = importModel(*context, path, allowNewerOpset);
  if (!module)
    return false;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (!func.isPublic())
      continue;
    for (BlockArgument arg : func.getArguments()) {
      InputInfo info;
      info.name = getArgumentName(func, arg.getArgNumber());
      if (isa<graph::SequenceType, graph::OptionalType>(arg.getType())) {
        info.container =
            isa<graph::SequenceType>(arg.getType()) ? "sequence" : "optional";
        inputs.push_back(std::move(info));
        continue;
      }
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type) {
        llvm::errs() << path << ": error: input '" << info.name
                     << "' is not a ranked tensor\n";
        return false;
      }
      for (int64_t d : type.getShape())
        info.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
      std::optional<rt::DType> dtype = toRuntimeType(type.getElementType());
      if (!dtype) {
        llvm::errs() << path << ": error: input '" << info.name
                     << "' has the unsupported element type "
                     << type.getElementType() << "\n";
        return false;
      }
      info.dtype = *dtype;
      inputs.push_back(std::move(info));
    }
    return true;
  }
  llvm::errs() << path << ": error: the model has no entry function\n";
  return false;
}

bool compileUncached(const std::string &path, const CompileFlags &flags,
                     const std::map<std::string, std::vector<int64_t>> &shapes,
                     std::vector<uint8_t> &bytes) {
  auto context = makeContext(path);
  OwningOpRef<ModuleOp> module =
      loadSource(*context, path, flags.from, flags.options.allowNewerOpset);
  if (!module)
    return false;
  CompileOptions options = toCompileOptions(flags, shapes);
  clearDumpDirectory(options, path);
  return succeeded(compileModule(*module, options, bytes, flags.from));
}

// The two libraries number their element types identically (checked here).
static_assert(static_cast<int>(tio::ElementType::Bool) ==
                  static_cast<int>(rt::DType::I1) &&
              static_cast<int>(tio::ElementType::U64) ==
                  static_cast<int>(rt::DType::U64));

rt::Tensor toRuntime(const tio::HostTensor &tensor) {
  rt::Tensor t =
      rt::Tensor::zeros(static_cast<rt::DType>(tensor.type), tensor.shape);
  if (!tensor.bytes.empty())
    std::memcpy(t.rawData(), tensor.bytes.data(), tensor.bytes.size());
  return t;
}

tio::HostTensor toHost(const rt::Tensor &tensor) {
  return tio::makeTensor(static_cast<tio::ElementType>(tensor.dtype()),
                         tensor.shape(), tensor.rawData(), tensor.byteSize());
}

bool isModuleFile(llvm::StringRef path) { return path.ends_with(".strata"); }

bool isMlirFile(llvm::StringRef path) { return path.ends_with(".mlir"); }

} // namespace strata::driver
