//===- Compiler.cpp - the whole compile path --------------------*- C++ -*-===//

#include "strata/Compiler/Compiler.h"
#include "strata/Compiler/Pipeline.h"
#include "strata/Target/Target.h"

#include "CompilerUtils.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

using namespace mlir;
using namespace strata;

//===----------------------------------------------------------------------===//
// CompileProgress
//===----------------------------------------------------------------------===//

namespace {
thread_local CompileProgress *currentProgress = nullptr;

/// "3.2 s".
std::string secondsText(std::chrono::steady_clock::duration d) {
  std::string text;
  llvm::raw_string_ostream(text)
      << llvm::format("%.1f s", std::chrono::duration<double>(d).count());
  return text;
}
} // namespace

struct CompileProgress::State {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now(), stepStart = start;
  std::chrono::milliseconds after{1000};
  /// never: no line; lines: one per step, from begin(); live: a line on the
  /// terminal, refreshed by `ticker`.
  enum class Mode { Never, Lines, Live } mode = Mode::Never;
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false, shown = false;
  std::string activity;
  /// Lines: whether `activity` has been printed.
  bool printed = false;
  std::thread ticker;

  /// Prints the activity once the compile has taken `after`: refreshed in
  /// place on a terminal, once per activity otherwise. Holds `mutex`.
  void report() {
    auto elapsed = Clock::now() - start;
    if (activity.empty() || elapsed < after)
      return;
    if (mode == Mode::Live) {
      llvm::errs() << "\rstrata: compiling: " << activity << " ("
                   << secondsText(elapsed) << ")\x1b[K";
      shown = true;
    } else if (!printed) {
      llvm::errs() << "strata: compiling (" << secondsText(elapsed)
                   << "): " << activity << "\n";
      printed = true;
    }
  }

  void tick() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stop) {
      wake.wait_for(lock, std::chrono::milliseconds(250));
      if (!stop)
        report();
    }
  }
};

void strata::readCompileEnvironment(CompileOptions &options) {
  if (const char *llvmOptions = std::getenv("STRATA_LLVM_OPTIONS"))
    options.llvmOptions = llvmOptions;
  if (const char *progress = std::getenv("STRATA_PROGRESS"))
    options.progress =
        llvm::StringRef(progress) == "1"   ? CompileOptions::Progress::Lines
        : llvm::StringRef(progress) == "0" ? CompileOptions::Progress::Off
                                           : CompileOptions::Progress::Auto;
  if (const char *ms = std::getenv("STRATA_PROGRESS_AFTER_MS"))
    options.progressAfterMs = std::atol(ms);
}

CompileProgress::CompileProgress(const CompileOptions &options)
    : state(std::make_unique<State>()), outer(currentProgress) {
  currentProgress = this;
  state->after = std::chrono::milliseconds(options.progressAfterMs);
  // Under -v every step is reported as it ends already; a nested compile
  // (the cuda target's portable PTX) reports through its outer one.
  if (options.verbose || outer ||
      options.progress == CompileOptions::Progress::Off)
    return;
  if (options.progress == CompileOptions::Progress::Lines)
    state->mode = State::Mode::Lines;
  else if (llvm::sys::Process::StandardErrIsDisplayed())
    state->mode = State::Mode::Live;
  else
    return;
  state->ticker = std::thread([s = state.get()] { s->tick(); });
}

CompileProgress::~CompileProgress() {
  if (state->ticker.joinable()) {
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      state->stop = true;
    }
    state->wake.notify_all();
    state->ticker.join();
    if (state->shown)
      llvm::errs() << "\r\x1b[K";
  }
  currentProgress = outer;
}

bool CompileProgress::active() { return currentProgress != nullptr; }

void CompileProgress::begin(const std::string &activity, bool timed) {
  CompileProgress *p = currentProgress;
  if (!p)
    return;
  // Nested compiles describe their steps under the outer one's.
  while (p->outer)
    p = p->outer;
  State &s = *p->state;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.activity = activity;
  s.printed = false;
  if (timed)
    s.stepStart = State::Clock::now();
  if (s.mode == State::Mode::Lines)
    s.report();
}

void CompileProgress::end(llvm::StringRef what, bool verbose) {
  CompileProgress *p = currentProgress;
  if (!p || !verbose)
    return;
  State &s = *p->state;
  auto now = State::Clock::now();
  auto ms = [](State::Clock::duration d) {
    return llvm::format("%.0f",
                        std::chrono::duration<double, std::milli>(d).count());
  };
  llvm::errs() << "strata: " << what << ": " << ms(now - s.stepStart) << " ms ("
               << ms(now - s.start) << " ms in all)\n";
}

std::string strata::generatedKernelsText(ModuleOp module) {
  size_t count = 0;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto kind = kernel::get<kernel::Kind>(func);
        kind && kind.getValue() == "codegen")
      ++count;
  return std::to_string(count) + " generated kernel" + (count == 1 ? "" : "s");
}

std::string strata::formatDiagnostic(const Diagnostic &diag,
                                     llvm::StringRef file) {
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
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string message = diag.str();
  // Errors in an MLIR source file (the parser's, or the verifier's on ops
  // that kept their file location) point at the line. The importer's
  // file-level errors use line 0 and keep the plain form.
  auto fileLoc = dyn_cast<FileLineColLoc>(diag.getLocation());
  if (fileLoc && fileLoc.getLine() > 0)
    os << file << ":" << fileLoc.getLine() << ":" << fileLoc.getColumn() << ": "
       << severity << ": " << message;
  else
    os << file << ": " << severity << ": " << message;
  // Verifier errors on imported ops carry the node only in their location.
  if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
    if (message.find("node '") == std::string::npos)
      os << " (at node '" << name.getName().getValue() << "')";
  os << "\n";
  for (const Diagnostic &note : diag.getNotes())
    os << file << ": note: " << note << "\n";
  return text;
}

LogicalResult strata::compileModule(ModuleOp module,
                                    const CompileOptions &options,
                                    std::vector<uint8_t> &moduleBytes,
                                    Stage from) {
  const Target *target = lookupTarget(options);
  if (!target)
    return module.emitError(unknownTargetMessage(options.target));
  if (from > Stage::Llvm)
    return module.emitError("cannot compile from the ")
           << stageName(from) << " stage: it is not MLIR";
  CompileProgress progress(options);
  return target->compile(module, options, moduleBytes, from);
}
