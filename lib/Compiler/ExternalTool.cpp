//===- ExternalTool.cpp - running ld.lld and ptxas on files -----*- C++ -*-===//
//
// The object stages hand their output to an external tool (ld.lld for the
// CPU's shared object, ptxas for the GPU's cubin). Both take a file and
// write a file: the input goes into a fresh temporary directory, the tool
// runs with its output and error streams captured in a log, and the
// directory is removed whatever happens.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;

LogicalResult strata::runExternalTool(Operation *anchor,
                                      const ExternalToolRun &run,
                                      llvm::StringRef input,
                                      std::vector<uint8_t> &output) {
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("strata-" + run.name, dir))
    return anchor->emitError("cannot create a temporary directory: ")
           << ec.message();
  llvm::SmallString<128> inPath(dir), outPath(dir), logPath(dir);
  llvm::sys::path::append(inPath, run.inputName);
  llvm::sys::path::append(outPath, run.outputName);
  llvm::sys::path::append(logPath, run.name + ".log");
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(inPath);
    llvm::sys::fs::remove(outPath);
    llvm::sys::fs::remove(logPath);
    llvm::sys::fs::remove(dir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(inPath, ec);
    if (ec)
      return anchor->emitError("cannot write ")
             << inPath << ": " << ec.message();
    os << input;
  }
  std::vector<std::string> words = run.arguments(inPath, outPath);
  llvm::SmallVector<llvm::StringRef> args = {run.program};
  for (const std::string &word : words)
    args.push_back(word);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  std::string errorText;
  int rc = llvm::sys::ExecuteAndWait(run.program, args, std::nullopt, redirects,
                                     0, 0, &errorText);
  if (rc != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
      log = (*buffer)->getBuffer().str();
    std::string hint = run.hint ? run.hint(log) : std::string();
    return anchor->emitError(run.failure)
           << " (" << run.program
           << "): " << (log.empty() ? errorText : llvm::StringRef(log).rtrim())
           << (hint.empty() ? "" : "\n" + hint);
  }
  auto buffer = llvm::MemoryBuffer::getFile(outPath);
  if (!buffer)
    return anchor->emitError("cannot read what ")
           << run.name << " wrote: " << outPath;
  llvm::StringRef bytes = (*buffer)->getBuffer();
  output.assign(bytes.begin(), bytes.end());
  return success();
}

std::optional<std::string> strata::findLdLld() {
  llvm::ErrorOr<std::string> lld = llvm::sys::findProgramByName("ld.lld-22");
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld");
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld", {"/usr/lib/llvm-22/bin"});
  if (!lld)
    return std::nullopt;
  return *lld;
}
