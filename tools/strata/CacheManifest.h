//===- CacheManifest.h - a compile cache entry's manifest ------*- C++ -*-===//
//
// A cache entry is KEY.strata (the module) and KEY.json (its manifest: the
// key, the key's parts one by one, the module's size and SHA-256). A
// manifest is read back from a directory other processes write into, so
// it is untrusted input: reading it and checking a module against it take
// bytes, not files, and depend on LLVM's Support library alone, so that
// fuzz/cache.cpp runs the same code (docs/testing.md, "Fuzzing").
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TOOLS_STRATA_CACHEMANIFEST_H
#define STRATA_TOOLS_STRATA_CACHEMANIFEST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::driver {

/// The manifest format this binary writes and reads.
constexpr int kManifestFormat = 1;

/// One part of a cache key ("input shapes") and its fields ("x" -> "[3, 8]"),
/// in a fixed order.
struct KeyPart {
  std::string name;
  std::vector<std::pair<std::string, std::string>> fields;
};

/// What a manifest says.
struct Manifest {
  std::string key;
  std::string modelPath;
  std::string created;
  std::string moduleHash;
  uint64_t moduleBytes = 0;
  std::vector<KeyPart> parts;

  const KeyPart *part(llvm::StringRef name) const;
  /// The model's SHA-256 as the key recorded it, or "".
  std::string modelHash() const;
};

/// Lower-case hex SHA-256 of `data`.
std::string sha256Hex(llvm::ArrayRef<uint8_t> data);
std::string sha256Hex(llvm::StringRef data);

/// Reads a manifest's text (`file` names it in messages); "" on success,
/// else what is wrong with it.
std::string parseManifest(llvm::StringRef text, const std::string &file,
                          Manifest &manifest);

/// Checks a module's bytes against its manifest (size, then SHA-256); "" or
/// what is wrong, naming `moduleFile`.
std::string checkModuleBytes(const Manifest &manifest,
                             llvm::ArrayRef<uint8_t> bytes,
                             const std::string &moduleFile);

} // namespace strata::driver

#endif // STRATA_TOOLS_STRATA_CACHEMANIFEST_H
