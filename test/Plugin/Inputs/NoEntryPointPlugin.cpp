//===- NoEntryPointPlugin.cpp - a library that is not a plugin --*- C++ -*-===//
//
// The usual mistake: the entry point is written without Plugin.h and without
// extern "C", so its symbol is C++-mangled and strata finds no
// strataGetPluginInfo in the library.
//
//===----------------------------------------------------------------------===//

__attribute__((visibility("default"))) const void *strataGetPluginInfo() {
  return nullptr;
}
