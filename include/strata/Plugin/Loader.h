//===- Loader.h - loading run-time plugins ----------------------*- C++ -*-===//
//
// strata's side of strata/Plugin/Plugin.h: loads the shared libraries named in
// STRATA_PLUGIN_PATHS, checks their API version, and applies what they
// register to the process's pipeline edits (strata::getPipelineEdits()) and
// dialect registrations. The tools call loadPluginsFromEnvironment() once, at
// the start of main, before they parse options or build a pipeline; the
// compile cache keys on loadedPlugins().
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_PLUGIN_LOADER_H
#define STRATA_PLUGIN_LOADER_H

#include <string>
#include <vector>

namespace strata {
namespace plugin {

/// A plugin that loaded and registered.
struct LoadedPlugin {
  /// StrataPluginInfo::name and ::version.
  std::string name;
  std::string version;
  /// The path it was loaded from, as given.
  std::string path;
};

/// Loads every plugin named in STRATA_PLUGIN_PATHS (paths separated by ':';
/// empty entries are skipped; a path given twice loads once), in order,
/// checks their pipelines (checkPluginPipelines), then warns on stderr about
/// each edit whose anchor matches no pass of any stage. Returns false with a
/// message in `error` at the first plugin that cannot be loaded or whose
/// pipeline is not valid; the tools print it and exit.
bool loadPluginsFromEnvironment(std::string &error);

/// Loads one plugin: a missing file, a file that is not a shared object, a
/// library without strataGetPluginInfo, another API or LLVM version, a
/// name another loaded plugin has, and a registration that fails are
/// refused with a message naming the path. Loading the same path again does
/// nothing and succeeds.
bool loadPlugin(const std::string &path, std::string &error);

/// Parses every pipeline the loaded plugins inserted or replaced something
/// with (registering strata's and MLIR's passes first), so that a pass name
/// or option that does not exist is reported at start-up, naming the plugin,
/// rather than when a stage is built. After loadPlugin(), since a pipeline
/// may name the passes of a plugin loaded after it.
bool checkPluginPipelines(std::string &error);

/// The plugins loaded so far, in load order.
const std::vector<LoadedPlugin> &loadedPlugins();

/// "origin: what" for each pipeline edit whose anchor matches no pass of any
/// stage (built with representative options); loadPluginsFromEnvironment
/// prints these as warnings.
std::vector<std::string> unmatchedPluginEdits();

} // namespace plugin
} // namespace strata

#endif // STRATA_PLUGIN_LOADER_H
