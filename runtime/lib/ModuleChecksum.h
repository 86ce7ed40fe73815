//===- ModuleChecksum.h - a module's content checksum -----------*- C++ -*-===//
//
// Internal to the runtime: the builder writes the checksum
// (detail::sealModule, declared in Runtime.h), the loader checks it.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_MODULECHECKSUM_H
#define STRATA_RUNTIME_LIB_MODULECHECKSUM_H

#include <cstddef>
#include <cstdint>
#include <optional>

namespace strata::rt::detail {

/// Where Module.checksum's 8 bytes lie in a verified size-prefixed module
/// buffer; nothing when the module has none (written before format 1.3).
std::optional<size_t> checksumOffset(const uint8_t *base, size_t size);

/// XXH3-64 of the buffer with the 8 bytes at `offset` taken as zero.
uint64_t moduleChecksum(const uint8_t *base, size_t size, size_t offset);

} // namespace strata::rt::detail

#endif // STRATA_RUNTIME_LIB_MODULECHECKSUM_H
