//===- WrongVersionPlugin.cpp - built for another API -----------*- C++ -*-===//
//
// What a plugin built against another strata's headers looks like to this
// one: everything is in order except STRATA_PLUGIN_API_VERSION, which CMake
// overrides (STRATA_TEST_PLUGIN_API_VERSION). The loader must refuse it by
// its version alone and never call its registration function.
//
//===----------------------------------------------------------------------===//

#include "strata/Plugin/Plugin.h"

#include <cstdio>
#include <cstdlib>

#undef STRATA_PLUGIN_API_VERSION
#define STRATA_PLUGIN_API_VERSION STRATA_TEST_PLUGIN_API_VERSION

namespace {

void registerWrongVersionPlugin(strata::plugin::Registrar &) {
  // A loader that reaches this has trusted a struct of another layout.
  std::fputs("wrong-version plugin: registration must not be called\n", stderr);
  std::abort();
}

} // namespace

extern "C" STRATA_PLUGIN_EXPORT const StrataPluginInfo *strataGetPluginInfo() {
  static const StrataPluginInfo info =
      STRATA_PLUGIN_INFO("wrong-version", "1.0.0", registerWrongVersionPlugin);
  return &info;
}
