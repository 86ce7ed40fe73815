//===- cache.cpp - fuzz target: a compile cache entry -----------*- C++ -*-===//
//
// A cache entry as a lookup reads it (tools/strata/CacheManifest.h): the
// manifest's JSON, then the module's bytes checked against it. The input is
// the manifest's text, a NUL, then the module's bytes (without a NUL, all of
// it is the manifest). What a lookup then does with a module that passes,
// Module::loadFromMemory, is fuzz-module's target.
//
//===----------------------------------------------------------------------===//

#include "CacheManifest.h"

#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const void *nul = std::memchr(data, 0, size);
  size_t textSize = nul ? static_cast<const uint8_t *>(nul) - data : size;
  llvm::StringRef text(reinterpret_cast<const char *>(data), textSize);
  llvm::ArrayRef<uint8_t> module;
  if (nul)
    module = llvm::ArrayRef<uint8_t>(data + textSize + 1, size - textSize - 1);

  strata::driver::Manifest manifest;
  if (!strata::driver::parseManifest(text, "fuzz.json", manifest).empty())
    return 0;
  (void)manifest.modelHash();
  (void)manifest.part("input shapes");
  (void)strata::driver::checkModuleBytes(manifest, module, "fuzz.strata");
  return 0;
}
