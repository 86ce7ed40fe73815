//===- ModuleChecksum.cpp - a module's content checksum ---------*- C++ -*-===//
//
// From format 1.3 a module records XXH3-64 of all its bytes (with the
// checksum's own 8 bytes taken as zero) in Module.checksum. The verifier
// proves a buffer safe to read, not that it is the buffer the compiler
// wrote: a few overwritten bytes of a weight or of the kernels' code load
// fine and compute garbage. The checksum catches those before anything
// runs. XXH3 (libxxhash, header-only here so the runtime gains no shared
// library) hashes at memory speed, so every load can afford it.
//
//===----------------------------------------------------------------------===//

#include "ModuleChecksum.h"
#include "strata/Runtime/Runtime.h"

#include "module_generated.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstring>

namespace strata::rt::detail {

std::optional<size_t> checksumOffset(const uint8_t *base, size_t size) {
  const fb::Module *m = fb::GetSizePrefixedModule(base);
  // The generated accessors hide Table::GetAddressOf (Module inherits it
  // privately); the layout is the Table's.
  const uint8_t *field =
      reinterpret_cast<const flatbuffers::Table *>(m)->GetAddressOf(
          fb::Module::VT_CHECKSUM);
  if (!field || field < base || field + sizeof(uint64_t) > base + size)
    return std::nullopt;
  return static_cast<size_t>(field - base);
}

uint64_t moduleChecksum(const uint8_t *base, size_t size, size_t offset) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, base, offset);
  const uint8_t zeros[sizeof(uint64_t)] = {};
  XXH3_64bits_update(&state, zeros, sizeof(zeros));
  size_t after = offset + sizeof(uint64_t);
  XXH3_64bits_update(&state, base + after, size - after);
  return XXH3_64bits_digest(&state);
}

bool sealModule(std::vector<uint8_t> &bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!fb::VerifySizePrefixedModuleBuffer(verifier))
    return false;
  std::optional<size_t> offset = checksumOffset(bytes.data(), bytes.size());
  if (!offset)
    return false;
  uint64_t sum = moduleChecksum(bytes.data(), bytes.size(), *offset);
  flatbuffers::WriteScalar(bytes.data() + *offset, sum);
  return true;
}

} // namespace strata::rt::detail
