//===- Driver.cpp - shared pieces of the strata commands --------*- C++ -*-===//

#include "Driver.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Import/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <array>
#include <cstdlib>
#include <fstream>

using namespace mlir;

namespace strata::driver {

void installDiagnosticPrinter(MLIRContext &context, llvm::StringRef file) {
  std::string fileName = file.str();
  context.getDiagEngine().registerHandler([fileName](Diagnostic &diag) {
    llvm::raw_ostream &os = llvm::errs();
    const char *severity = "error";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Warning:
      severity = "warning";
      break;
    case DiagnosticSeverity::Note:
      severity = "note";
      break;
    case DiagnosticSeverity::Remark:
      severity = "remark";
      break;
    default:
      break;
    }
    std::string message = diag.str();
    os << fileName << ": " << severity << ": " << message;
    // Verifier errors on imported ops carry the node only in their location.
    if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
      if (message.find("node '") == std::string::npos)
        os << " (at node '" << name.getName().getValue() << "')";
    os << "\n";
    for (const Diagnostic &note : diag.getNotes())
      os << fileName << ": note: " << note << "\n";
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

std::string parseShapeBinding(const std::string &text, std::string &name,
                              std::vector<int64_t> &shape) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return "expected NAME=D0,D1,... in '" + text + "'";
  name = text.substr(0, eq);
  shape.clear();
  std::string dims = text.substr(eq + 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find_first_of(",x", pos);
    std::string part = dims.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char *end = nullptr;
    long long value = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || value < 0)
      return "bad dimension '" + part + "' in '" + text + "'";
    shape.push_back(value);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return "";
}

static OwningOpRef<ModuleOp> importModel(MLIRContext &context,
                                         const std::string &path) {
  ImportOptions options;
  return importOnnxFile(context, path, options);
}

bool readModelInputs(const std::string &path, std::vector<InputInfo> &inputs) {
  auto context = makeContext(path);
  OwningOpRef<ModuleOp> module = importModel(*context, path);
  if (!module)
    return false;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (!func.isPublic())
      continue;
    for (BlockArgument arg : func.getArguments()) {
      InputInfo info;
      info.name = getArgumentName(func, arg.getArgNumber());
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

bool compileOnnxBytes(const std::string &path, const CompileFlags &flags,
                      const std::map<std::string, std::vector<int64_t>> &shapes,
                      std::vector<uint8_t> &bytes) {
  auto context = makeContext(path);
  OwningOpRef<ModuleOp> module = importModel(*context, path);
  if (!module)
    return false;
  CompileOptions options;
  options.cpu = flags.cpu;
  options.verbose = flags.verbose;
  options.useLibraries = !flags.noLibraries;
  options.inputShapes = shapes;
  options.dumpDir = flags.dumpDir;
  return succeeded(compileModule(*module, options, bytes));
}

std::string cacheDirectory() {
  if (const char *dir = std::getenv("STRATA_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/strata";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/strata";
  return "/tmp/strata-cache";
}

/// The cache key of a compilation, or "" when the model cannot be read.
static std::string
cacheKey(const std::string &path, const CompileFlags &flags,
         const std::map<std::string, std::vector<int64_t>> &shapes) {
  auto model = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!model)
    return "";
  llvm::SHA256 hash;
  std::string header =
      "strata 0.1.0 module " + std::to_string(rt::kFormatMajor) + "." +
      std::to_string(rt::kFormatMinor) + " llvm " + LLVM_VERSION_STRING +
      " cpu " + flags.cpu + " " +
      (flags.cpu == "native" ? llvm::sys::getHostCPUName().str() : "") +
      (flags.noLibraries ? " no-libraries" : " libraries");
  // The compiler itself: a rebuilt strata must not reuse modules the old
  // one compiled (its size and modification time stand for its contents).
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable("strata", &anchor);
  llvm::sys::fs::file_status status;
  if (!self.empty() && !llvm::sys::fs::status(self, status))
    header += " compiler " + std::to_string(status.getSize()) + "@" +
              std::to_string(
                  status.getLastModificationTime().time_since_epoch().count());
  if (const char *llvmOptions = std::getenv("STRATA_LLVM_OPTIONS"))
    header += std::string(" llvm-options ") + llvmOptions;
  for (const auto &[name, shape] : shapes) {
    header += " " + name + "=";
    for (int64_t d : shape)
      header += std::to_string(d) + ",";
  }
  hash.update(header);
  hash.update((*model)->getBuffer());
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

static std::shared_ptr<const rt::Module>
loadCompiled(std::vector<uint8_t> bytes, const std::string &path) {
  try {
    return rt::Module::loadFromMemory(std::move(bytes), path);
  } catch (const rt::Error &e) {
    llvm::errs() << path << ": error: " << e.what() << "\n";
    return nullptr;
  }
}

std::shared_ptr<const rt::Module>
compileOnnx(const std::string &path, const CompileFlags &flags,
            const std::map<std::string, std::vector<int64_t>> &shapes) {
  std::string entry;
  if (flags.useCache && flags.dumpDir.empty()) {
    std::string key = cacheKey(path, flags, shapes);
    if (!key.empty())
      entry = cacheDirectory() + "/" + key + ".strata";
  }
  if (!entry.empty() && llvm::sys::fs::exists(entry)) {
    try {
      auto module = rt::Module::load(entry);
      if (flags.verbose)
        llvm::errs() << "strata: using the cached " << entry << "\n";
      return module;
    } catch (const rt::Error &e) {
      llvm::errs() << "strata: warning: ignoring a bad compile cache entry ("
                   << e.what() << "); recompiling\n";
    }
  }
  std::vector<uint8_t> bytes;
  if (!compileOnnxBytes(path, flags, shapes, bytes))
    return nullptr;
  if (!entry.empty()) {
    // Best effort: a cache that cannot be written costs a recompilation
    // next time, nothing else.
    std::string dir = cacheDirectory();
    llvm::SmallString<256> temp;
    if (!llvm::sys::fs::create_directories(dir) &&
        !llvm::sys::fs::createUniqueFile(dir + "/tmp-%%%%%%%%.strata", temp)) {
      std::ofstream out(temp.c_str(), std::ios::binary);
      out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
      out.close();
      if (!out || llvm::sys::fs::rename(temp, entry))
        llvm::sys::fs::remove(temp);
    }
  }
  return loadCompiled(std::move(bytes), path);
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

} // namespace strata::driver
