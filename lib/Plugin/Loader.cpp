//===- Loader.cpp - loading run-time plugins --------------------*- C++ -*-===//
//
// Loads plugins (strata/Plugin/Plugin.h) with dlopen and applies what they
// register. A plugin's requests are collected by a Registrar of our own and
// reach the process's pipeline edits only when its registration succeeded,
// so that a refused plugin leaves no half-applied edits behind. Plugins are
// never unloaded, refused ones included: the passes they registered, even
// from a static constructor run by dlopen, point into their code.
//
// Once a plugin is loaded, every context the compile path makes runs each
// pass through an action handler (guardPassExecution) that turns an
// exception thrown by a pass into a failure of that pass, and names the
// plugin (and its file) whose code a failing pass is.
//
//===----------------------------------------------------------------------===//

#include "strata/Plugin/Loader.h"

#include "strata/Compiler/Pipeline.h"
#include "strata/Plugin/Plugin.h"
#include "strata/Target/Target.h"

#include "mlir/IR/Action.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <exception>

using namespace strata;
using namespace strata::plugin;

/// The stages whose pipeline a plugin can edit: the IR stages after the
/// import (which is the importer's output, not a pipeline).
static bool isEditableStage(Stage stage) {
  return isIRStage(stage) && stage != Stage::Import;
}

static std::string editableStageList() {
  std::string names;
  for (Stage stage : allStages())
    if (isEditableStage(stage))
      names += (names.empty() ? "" : ", ") + stageName(stage).str();
  return names;
}

namespace {

/// A pipeline a plugin handed over, with what it was for.
struct PluginPipeline {
  std::string plugin;
  std::string path;
  std::string call;
  std::string pipeline;
};

/// Collects one plugin's requests, checking what can be checked before any
/// pipeline exists (the stage names in anchors); committed by commit().
class CollectingRegistrar final : public Registrar {
public:
  void registerDialects(void (*fn)(mlir::DialectRegistry &)) override {
    if (!fn)
      return fail("registerDialects: the function is null");
    dialectFns.push_back(fn);
  }

  void insertBefore(const char *anchor, const char *pipeline) override {
    add(Kind::InsertBefore, "insertBefore", anchor, pipeline);
  }
  void insertAfter(const char *anchor, const char *pipeline) override {
    add(Kind::InsertAfter, "insertAfter", anchor, pipeline);
  }
  void disablePass(const char *anchor) override {
    add(Kind::Disable, "disablePass", anchor, nullptr);
  }
  void replacePass(const char *anchor, const char *pipeline) override {
    add(Kind::Replace, "replacePass", anchor, pipeline);
  }

  void replaceStage(const char *stage, const char *pipeline) override {
    if (!stage || !*stage)
      return fail("replaceStage: no stage named");
    std::optional<Stage> parsed = parseStage(stage);
    if (!parsed || !isEditableStage(*parsed))
      return fail(std::string("replaceStage: unknown stage '") + stage +
                  "' (stages with a pipeline: " + editableStageList() + ")");
    if (!pipeline || !*pipeline)
      return fail(std::string("replaceStage('") + stage +
                  "'): the pipeline is empty");
    requests.push_back({Kind::ReplaceStage, "", pipeline, *parsed,
                        std::string("replaceStage('") + stage + "')"});
  }

  void error(const char *message) override {
    fail(message && *message ? message : "registration failed");
  }

  /// The first problem, or "" when the registration may be committed.
  const std::string &failure() const { return firstFailure; }

  /// Hands the requests to the process's edits and dialect registrations,
  /// in the order the plugin made them; each pipeline goes to `pipelines`
  /// too, to be checked once every plugin's passes are registered.
  void commit(llvm::StringRef origin, llvm::StringRef path,
              std::vector<PluginPipeline> &pipelines) const {
    PipelineEdits &edits = getPipelineEdits();
    for (const Request &r : requests) {
      if (r.kind != Kind::Disable)
        pipelines.push_back({origin.str(), path.str(), r.call, r.pipeline});
      switch (r.kind) {
      case Kind::InsertBefore:
        edits.insertBefore(r.anchor, r.pipeline, origin);
        break;
      case Kind::InsertAfter:
        edits.insertAfter(r.anchor, r.pipeline, origin);
        break;
      case Kind::Disable:
        edits.disablePass(r.anchor, origin);
        break;
      case Kind::Replace:
        edits.replacePass(r.anchor, r.pipeline, origin);
        break;
      case Kind::ReplaceStage:
        edits.replaceStage(r.stage, r.pipeline, origin);
        break;
      }
    }
    for (auto *fn : dialectFns)
      addDialectRegistration(fn);
  }

private:
  enum class Kind { InsertBefore, InsertAfter, Disable, Replace, ReplaceStage };
  struct Request {
    Kind kind;
    std::string anchor;
    std::string pipeline;
    Stage stage = Stage::Import;
    /// "insertAfter('kernel/cse')", for messages.
    std::string call;
  };

  void fail(std::string message) {
    if (firstFailure.empty())
      firstFailure = std::move(message);
  }

  /// Checks an anchor's form: "stage:NAME", "NAME/pass" or "pass", with a
  /// known stage name. A pass name is not checked here: whether it occurs is
  /// known only once the stage pipelines are built (unmatchedPluginEdits).
  void add(Kind kind, llvm::StringRef what, const char *anchorText,
           const char *pipelineText) {
    llvm::StringRef anchor = anchorText ? anchorText : "";
    if (anchor.empty())
      return fail(what.str() + ": the anchor is empty");
    std::string context = (what + "('" + anchor + "')").str();
    llvm::StringRef stagePart;
    bool wholeStage = anchor.consume_front("stage:");
    if (wholeStage) {
      stagePart = anchor;
    } else if (anchor.contains('/')) {
      auto [stagePrefix, pass] = anchor.split('/');
      stagePart = stagePrefix;
      if (pass.empty())
        return fail(context + ": no pass named after '" + stagePrefix.str() +
                    "/'");
    }
    if (wholeStage || !stagePart.empty()) {
      std::optional<Stage> stage = parseStage(stagePart);
      if (!stage || !isEditableStage(*stage))
        return fail(context + ": unknown stage '" + stagePart.str() +
                    "' (stages with a pipeline: " + editableStageList() + ")");
    }
    if (wholeStage && kind == Kind::Disable)
      return fail(context +
                  ": a whole stage cannot be disabled; replaceStage it");
    if (wholeStage && kind == Kind::Replace)
      return fail(context + ": a whole stage is replaced with replaceStage");
    std::string pipeline = pipelineText ? pipelineText : "";
    if (kind != Kind::Disable && pipeline.empty())
      return fail(context + ": the pipeline is empty");
    requests.push_back(
        {kind, std::string(anchorText), pipeline, Stage::Import, context});
  }

  std::vector<Request> requests;
  std::vector<void (*)(mlir::DialectRegistry &)> dialectFns;
  std::string firstFailure;
};

struct PluginState {
  std::vector<LoadedPlugin> plugins;
  /// The canonical path of each loaded plugin, parallel to `plugins`.
  std::vector<std::string> canonicalPaths;
  /// Where each loaded plugin's file is mapped (dladdr's dli_fbase),
  /// parallel to `plugins`: the code and vtables of its passes lie there.
  std::vector<const void *> bases;
  /// Every pipeline the plugins inserted or replaced something with.
  std::vector<PluginPipeline> pipelines;
  /// Whether the compile path's contexts get guardPassExecution.
  bool guardInstalled = false;
};

/// mlir::Pass keeps whether a run failed behind a protected accessor; the
/// action handler reads it through this member pointer (the standard way to
/// reach a protected member of a class one does not derive from).
struct PassStateAccess : mlir::Pass {
  using mlir::Pass::getPassState;
};

/// How a pass that threw is made to fail. MLIR reads a pass's failure flag
/// right after its runOnOperation returns, inside the action the exception
/// left, so a failure signalled afterwards would go unseen and the pipeline
/// would run on. The verifier that MLIR runs after every pass that did not
/// fail is what stops it: the operation gets the attribute
/// `strata_pass_guard.threw`, which this dialect refuses.
class PassGuardDialect : public mlir::Dialect {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PassGuardDialect)
  explicit PassGuardDialect(mlir::MLIRContext *context)
      : mlir::Dialect(getDialectNamespace(), context,
                      mlir::TypeID::get<PassGuardDialect>()) {}
  static llvm::StringRef getDialectNamespace() { return "strata_pass_guard"; }
  static llvm::StringRef threwAttrName() { return "strata_pass_guard.threw"; }

  /// The pass's error has been reported already; this only fails.
  mlir::LogicalResult verifyOperationAttribute(mlir::Operation *,
                                               mlir::NamedAttribute) override {
    return mlir::failure();
  }
};

} // namespace

/// A fatal error (LLVM's) while a plugin registers: the plugin is named and
/// the process ends, as it would have without the handler, but without a
/// crash report that would blame strata.
static void reportRegistrationFatalError(void *culprit, const char *reason,
                                         bool) {
  llvm::errs() << "strata: error: " << *static_cast<std::string *>(culprit)
               << " failed while registering: " << reason << "\n";
  llvm::errs().flush();
  // No static destructors: the registries may be half-updated.
  std::_Exit(1);
}

static PluginState &state() {
  static PluginState s;
  return s;
}

/// The loaded plugin whose file holds `pass`'s class (its vtable), or null
/// for strata's and MLIR's passes. Only plugins' own passes are found: a
/// plugin's pipeline may also name strata's or MLIR's passes.
static const LoadedPlugin *pluginOf(const mlir::Pass &pass) {
  const PluginState &s = state();
  const void *vtable = *reinterpret_cast<const void *const *>(&pass);
  Dl_info info;
  if (!dladdr(vtable, &info))
    return nullptr;
  for (size_t i = 0; i < s.bases.size(); ++i)
    if (s.bases[i] == info.dli_fbase)
      return &s.plugins[i];
  return nullptr;
}

static std::string describePass(const mlir::Pass &pass,
                                const LoadedPlugin *plugin) {
  std::string text;
  if (plugin)
    text = "plugin '" + plugin->name + "' (" + plugin->path + "): ";
  llvm::StringRef argument = pass.getArgument();
  return text + "pass '" +
         (argument.empty() ? pass.getName() : argument).str() + "'";
}

/// The action handler of every context the compile path makes once a plugin
/// is loaded. MLIR dispatches each pass's run on an operation through it, on
/// the thread that runs the pass (a worker thread for passes nested under
/// another op). LLVM and MLIR are built without exceptions, so an exception
/// a pass throws would pass through their frames and end the process
/// (std::terminate): it is caught here, right around the pass, and becomes
/// that pass's failure, an error naming the pass, and the plugin when the
/// pass is a plugin's. A plugin's pass that fails without throwing (with or
/// without a message of its own) gets an error naming the plugin too.
static void guardPassExecution(llvm::function_ref<void()> transform,
                               const mlir::tracing::Action &action) {
  const auto *execution = llvm::dyn_cast<mlir::PassExecutionAction>(&action);
  if (!execution) {
    transform();
    return;
  }
  auto &pass = const_cast<mlir::Pass &>(execution->getPass());
  mlir::Operation *op = execution->getOp();
  std::string thrown;
  try {
    transform();
  } catch (const std::exception &e) {
    thrown = std::string("threw an exception: ") + e.what();
  } catch (...) {
    thrown = "threw an exception (not a std::exception)";
  }
  const LoadedPlugin *plugin = pluginOf(pass);
  if (thrown.empty()) {
    auto passState = &PassStateAccess::getPassState;
    if (plugin && (pass.*passState)().irAndPassFailed.getInt())
      op->emitError() << describePass(pass, plugin) << " failed on '"
                      << op->getName() << "'";
    return;
  }
  op->emitError() << describePass(pass, plugin) << " " << thrown << " (on '"
                  << op->getName() << "'; what it changed may be left half "
                  << "done)";
  struct Failer : mlir::PassInstrumentation {};
  Failer().signalPassFailure(&pass);
  op->setAttr(PassGuardDialect::threwAttrName(),
              mlir::UnitAttr::get(op->getContext()));
}

static void installPassGuard(mlir::MLIRContext *context,
                             mlir::BuiltinDialect *) {
  // Loaded now: dialects cannot be loaded while passes run.
  context->getOrLoadDialect<PassGuardDialect>();
  context->registerActionHandler(guardPassExecution);
}

/// The file's canonical path (symlinks and '..' resolved), or "" when it
/// cannot be resolved.
static std::string canonicalPath(const std::string &path) {
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(path, real))
    return "";
  return std::string(real);
}

/// Why `path` cannot be dlopen'ed as a plugin, before trying: "" when it is
/// an existing ELF shared object.
static std::string checkSharedObject(const std::string &path) {
  std::string quoted = "plugin '" + path + "'";
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    if (ec == std::errc::no_such_file_or_directory)
      return quoted + " does not exist";
    return quoted + " cannot be read: " + ec.message();
  }
  if (llvm::sys::fs::is_directory(status))
    return quoted + " is not a shared object (it is a directory)";
  llvm::file_magic magic;
  if (std::error_code ec = llvm::identify_magic(path, magic))
    return quoted + " cannot be read: " + ec.message();
  if (magic != llvm::file_magic::elf_shared_object)
    return quoted +
           " is not a shared object (a plugin is a shared library, such as "
           "a CMake MODULE library)";
  return "";
}

bool strata::plugin::loadPlugin(const std::string &path, std::string &error) {
  PluginState &s = state();
  std::string problem = checkSharedObject(path);
  if (!problem.empty()) {
    error = problem;
    return false;
  }
  std::string canonical = canonicalPath(path);
  if (canonical.empty()) {
    // dlopen("") would return the program itself.
    error = "plugin '" + path + "': its path cannot be resolved";
    return false;
  }
  if (llvm::is_contained(s.canonicalPaths, canonical))
    return true;

  // dlopen searches the library path for a name without '/'; a plugin path
  // is a file name, relative to the working directory.
  void *handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    error = "plugin '" + path +
            "' could not be loaded: " + (why ? why : "unknown dlopen error");
    return false;
  }
  auto refuse = [&](std::string message) {
    error = std::move(message);
    return false;
  };
  using EntryPoint = const StrataPluginInfo *(*)();
  auto entry =
      reinterpret_cast<EntryPoint>(dlsym(handle, STRATA_PLUGIN_ENTRY_POINT));
  if (!entry)
    return refuse("plugin '" + path + "' has no entry point: it does not " +
                  "export " STRATA_PLUGIN_ENTRY_POINT "() (define it in " +
                  "extern \"C\" with STRATA_PLUGIN_EXPORT; see " +
                  "strata/Plugin/Plugin.h)");
  const StrataPluginInfo *info = entry();
  if (!info)
    return refuse("plugin '" + path +
                  "': " STRATA_PLUGIN_ENTRY_POINT "() returned null");
  // Only apiVersion may be read before it is known to match: the rest of the
  // struct is laid out as that version's header says.
  if (info->apiVersion != STRATA_PLUGIN_API_VERSION)
    return refuse("plugin '" + path + "' was built for plugin API version " +
                  std::to_string(info->apiVersion) +
                  ", but this strata has version " +
                  std::to_string(STRATA_PLUGIN_API_VERSION) +
                  "; rebuild it against this strata's headers");
  if (info->llvmVersionMajor != LLVM_VERSION_MAJOR)
    return refuse("plugin '" + path + "' was built against LLVM/MLIR " +
                  std::to_string(info->llvmVersionMajor) +
                  ", but this strata uses LLVM/MLIR " +
                  std::to_string(LLVM_VERSION_MAJOR) +
                  "; rebuild it against the same LLVM");
  if (!info->name || !*info->name)
    return refuse("plugin '" + path + "' has no name (StrataPluginInfo::name)");
  if (!info->version)
    return refuse("plugin '" + path +
                  "' has no version (StrataPluginInfo::version)");
  if (!info->registerPlugin)
    return refuse("plugin '" + path +
                  "' has no registration function "
                  "(StrataPluginInfo::registerPlugin)");
  for (const LoadedPlugin &loaded : s.plugins)
    if (loaded.name == info->name)
      return refuse("plugin '" + path + "' is named '" + info->name +
                    "', as is the plugin already loaded from '" + loaded.path +
                    "'");

  CollectingRegistrar registrar;
  std::string name = info->name;
  // MLIR reports a pass argument registered twice (by two plugins, or by a
  // plugin and strata) as a fatal error; say which plugin caused it.
  std::string culprit = "plugin '" + name + "' (" + path + ")";
  llvm::ScopedFatalErrorHandler handler(reportRegistrationFatalError, &culprit);
  try {
    info->registerPlugin(registrar);
  } catch (const std::exception &e) {
    registrar.error((std::string("registration threw: ") + e.what()).c_str());
  } catch (...) {
    registrar.error("registration threw an exception");
  }
  if (!registrar.failure().empty()) {
    error = "plugin '" + name + "' (" + path + "): " + registrar.failure();
    return false;
  }
  registrar.commit(name, path, s.pipelines);
  s.plugins.push_back({name, info->version, path});
  s.canonicalPaths.push_back(canonical);
  Dl_info where;
  s.bases.push_back(dladdr(reinterpret_cast<const void *>(entry), &where)
                        ? where.dli_fbase
                        : nullptr);
  // Every registry the compile path builds gets an extension that installs
  // the guard in the context (the builtin dialect is in every context).
  if (!s.guardInstalled) {
    s.guardInstalled = true;
    addDialectRegistration([](mlir::DialectRegistry &registry) {
      registry.insert<PassGuardDialect>();
      registry.addExtension(+installPassGuard);
    });
  }
  return true;
}

bool strata::plugin::loadPluginsFromEnvironment(std::string &error) {
  const char *paths = std::getenv("STRATA_PLUGIN_PATHS");
  if (!paths || !*paths)
    return true;
  llvm::SmallVector<llvm::StringRef> entries;
  llvm::StringRef(paths).split(entries, ':', /*MaxSplit=*/-1,
                               /*KeepEmpty=*/false);
  for (llvm::StringRef entry : entries)
    if (!entry.trim().empty() && !loadPlugin(entry.trim().str(), error))
      return false;
  if (!checkPluginPipelines(error))
    return false;
  for (const std::string &edit : unmatchedPluginEdits())
    llvm::errs() << "strata: warning: plugin " << edit
                 << "; it has no effect\n";
  return true;
}

bool strata::plugin::checkPluginPipelines(std::string &error) {
  if (state().pipelines.empty())
    return true;
  // Every pass a pipeline may name: strata's, MLIR's, and the plugins'
  // (registered while they loaded).
  registerStagePipelines();
  for (const PluginPipeline &p : state().pipelines) {
    // Plugin pipelines run on a builtin.module: the top-level module or
    // `module @kernels`.
    mlir::OpPassManager pm("builtin.module");
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    if (succeeded(mlir::parsePassPipeline(p.pipeline, pm, os)))
      continue;
    // The parser's first line says what is wrong ("... error: 'x' does not
    // refer to a registered pass or pass pipeline").
    llvm::StringRef why = llvm::StringRef(diagnostics).split('\n').first;
    if (size_t at = why.find("error: "); at != llvm::StringRef::npos)
      why = why.drop_front(at + strlen("error: "));
    error = "plugin '" + p.plugin + "' (" + p.path + "): " + p.call +
            ": the pipeline '" + p.pipeline + "' is not valid: " + why.str();
    return false;
  }
  return true;
}

const std::vector<LoadedPlugin> &strata::plugin::loadedPlugins() {
  return state().plugins;
}

std::vector<std::string> strata::plugin::unmatchedPluginEdits() {
  PipelineEdits &edits = getPipelineEdits();
  if (edits.empty())
    return {};
  // Some passes are in a stage only for some options (a target's own stage,
  // a decisions file, libraries off); building every stage for a few option
  // sets marks every edit that can match.
  std::vector<CompileOptions> variants(2);
  variants[1].inputShapes["input"] = {1};
  variants[1].decisionsFile = "decisions.json";
  for (const Target *target : allTargets()) {
    CompileOptions &variant = variants.emplace_back();
    variant.useLibraries = false;
    variant.target = target->name().str();
  }
  for (const CompileOptions &options : variants)
    for (Stage stage : allStages())
      if (isEditableStage(stage))
        (void)stagePipeline(stage, options);
  return edits.unmatchedEdits();
}
