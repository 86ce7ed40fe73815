//===- Plugin.h - strata's run-time plugin API ------------------*- C++ -*-===//
//
// The whole interface between strata and a plugin: a shared library named in
// STRATA_PLUGIN_PATHS (a.so:b.so) that strata loads at start-up, before any
// pipeline is built. A plugin exports one C function, strataGetPluginInfo(),
// which returns its StrataPluginInfo; strata checks the API version in it and
// then calls its registration function with a Registrar, through which the
// plugin changes the compile path's stage pipelines at named points
// (strata/Compiler/Pipeline.h): insert a pipeline before or after a pass or a
// stage, disable a pass, replace a pass, replace a whole stage, and add
// dialects. The plugin registers its own passes with MLIR
// (mlir::PassRegistration) in the same function and names them in the
// pipeline texts it hands over. docs/plugins.md describes the anchors and the
// stages; examples/plugin/ is a plugin to copy.
//
// ABI. strata and its plugins share one libMLIR.so and one libLLVM.so (a
// plugin links the shared libraries, never the static archives, or it gets a
// pass registry of its own that strata never sees), so they must be built
// against the same LLVM/MLIR major version, with the same C++ standard
// library and RTTI setting; StrataPluginInfo records the LLVM version so that
// a mismatch is refused rather than misbehaving. Across that boundary this
// header uses only what does not depend on strata's own build: plain C
// strings (copied before the call returns), function pointers, and an
// abstract class with pure virtual functions, which a plugin calls through
// the vtable without linking any strata library. Because the vtable's layout
// is the order of the virtual functions below, and StrataPluginInfo's layout
// is its fields, any change to either (or to what the anchors mean) raises
// STRATA_PLUGIN_API_VERSION; strata reads nothing but `apiVersion`, the
// first field, from a plugin built for another version.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_PLUGIN_PLUGIN_H
#define STRATA_PLUGIN_PLUGIN_H

#include "llvm/Config/llvm-config.h"

#include <stdint.h>

/// The version of this API. A plugin built against another version is
/// refused, with a message asking to rebuild it.
#define STRATA_PLUGIN_API_VERSION 1

/// The name of the function every plugin exports.
#define STRATA_PLUGIN_ENTRY_POINT "strataGetPluginInfo"

/// Exports a symbol from a plugin built with -fvisibility=hidden (which keeps
/// a plugin's own classes from clashing with another plugin's).
#define STRATA_PLUGIN_EXPORT __attribute__((visibility("default")))

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace strata {
namespace plugin {

/// What a plugin may ask of strata while it registers. Every call records a
/// request; none of them is applied unless the registration function returns
/// without calling error(), and all are applied before any pipeline is
/// built. Strings are copied during the call.
///
/// Anchors name where an edit applies, in the stage pipelines listed in
/// docs/plugins.md:
///   "canonicalize"         every occurrence of a pass, in every stage
///   "kernel/canonicalize"  the occurrences of a pass in one stage
///   "stage:kernel"         a whole stage (before: ahead of its first pass;
///                          after: behind its last)
/// Pipelines are textual MLIR pipeline element lists ("cse,my-pass{x=1}")
/// and run where their anchor runs: on the nested `module @kernels` for the
/// stage passes that run there, on the top-level module otherwise. strata
/// parses them once every plugin has loaded (so they may name any plugin's
/// passes) and refuses one that does not parse; an anchor that matches no
/// pass is reported as a warning.
class Registrar {
public:
  /// Calls `fn` on every dialect registry the compile path builds (and
  /// strata-opt's), so that IR using the plugin's dialects parses and its
  /// passes may create them. Dialects a pass creates must also be listed in
  /// its getDependentDialects().
  virtual void registerDialects(void (*fn)(mlir::DialectRegistry &)) = 0;

  /// Runs `pipeline` right before each pass (or stage) `anchor` names.
  virtual void insertBefore(const char *anchor, const char *pipeline) = 0;

  /// Runs `pipeline` right after each pass (or stage) `anchor` names.
  virtual void insertAfter(const char *anchor, const char *pipeline) = 0;

  /// Removes each pass `anchor` names (a pass anchor, not a stage).
  virtual void disablePass(const char *anchor) = 0;

  /// Runs `pipeline` instead of each pass `anchor` names.
  virtual void replacePass(const char *anchor, const char *pipeline) = 0;

  /// Runs `pipeline`, on the top-level module, instead of the whole stage
  /// `stage` ("graph", "fused", "kernel", "cpu" or "llvm"). Its output must
  /// be what the next stage expects (docs/compiler.md).
  virtual void replaceStage(const char *stage, const char *pipeline) = 0;

  /// Makes loading fail with `message` (a bad setting of the plugin's own,
  /// say); strata names the plugin and stops.
  virtual void error(const char *message) = 0;

protected:
  // strata owns the Registrar; a plugin never deletes one.
  ~Registrar() = default;
};

} // namespace plugin
} // namespace strata

extern "C" {

/// What strataGetPluginInfo() returns: a pointer to a static instance that
/// stays valid while the plugin is loaded (plugins are never unloaded).
struct StrataPluginInfo {
  /// STRATA_PLUGIN_API_VERSION as the plugin saw it. Always the first field.
  uint32_t apiVersion;
  /// LLVM_VERSION_MAJOR as the plugin saw it: the libMLIR.so it links.
  uint32_t llvmVersionMajor;
  /// A short unique name ("example"): the origin of the plugin's edits in
  /// messages and `strata explain`, and part of the compile cache key.
  const char *name;
  /// The plugin's own version ("1.0.0"), also part of the compile cache key:
  /// change it whenever the plugin's passes change what they generate, so
  /// that cached modules built by the old one are not reused.
  const char *version;
  /// Registers the plugin's passes and dialects and its pipeline edits.
  /// Called once, after the version checks.
  void (*registerPlugin)(strata::plugin::Registrar &registrar);
};

/// The entry point each plugin defines (and exports, STRATA_PLUGIN_EXPORT).
STRATA_PLUGIN_EXPORT const StrataPluginInfo *strataGetPluginInfo(void);

} // extern "C"

/// Initializes a StrataPluginInfo with this header's versions:
///   static const StrataPluginInfo info =
///       STRATA_PLUGIN_INFO("example", "1.0.0", registerExamplePlugin);
#define STRATA_PLUGIN_INFO(NAME, VERSION, REGISTER_FN)                         \
  StrataPluginInfo {                                                           \
    STRATA_PLUGIN_API_VERSION, LLVM_VERSION_MAJOR, NAME, VERSION, REGISTER_FN  \
  }

#endif // STRATA_PLUGIN_PLUGIN_H
