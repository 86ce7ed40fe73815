//===- Detail.h - Helpers shared by the tensorio sources --------*- C++ -*-===//
//
// File reading and writing with errors that name the file, and checked
// arithmetic on tensor sizes. Private to the library.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TENSORIO_LIB_DETAIL_H
#define STRATA_TENSORIO_LIB_DETAIL_H

#include "strata/TensorIO/TensorIO.h"

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::tio::detail {

/// The whole file, or a TensorIOError naming \p path.
std::vector<uint8_t> readFileBytes(const std::string &path);

/// Writes \p size bytes to \p path (replacing it), or throws.
void writeFileBytes(const std::string &path, const void *data, size_t size);

/// The element count of \p shape, or throws a TensorIOError starting with
/// \p what when a dimension is negative or the product overflows int64.
int64_t checkedNumElements(const std::vector<int64_t> &shape,
                           const std::string &what);

/// Throws a TensorIOError "<what>: cannot allocate <forWhat> (N bytes, more
/// than this machine's M)" when \p bytes exceed the machine's physical
/// memory: a size a file sets without holding the bytes (strings of width
/// 0) is refused before any allocation.
void checkFitsInMemory(uint64_t bytes, const std::string &what,
                       const std::string &forWhat);

/// numElements * elementSize(type), or throws on overflow.
uint64_t checkedByteSize(int64_t numElements, ElementType type,
                         const std::string &what);

/// "[3, 4, 5]".
std::string formatShape(const std::vector<int64_t> &shape);

/// Counts one allocation for testing::failAllocationAfter; true when this
/// one is to fail.
bool injectedAllocationFailure();

/// Runs \p allocate, which sizes a container; a failed allocation (a
/// std::bad_alloc or std::length_error, or one testing::failAllocationAfter
/// injected) becomes a TensorIOError "<what>: cannot allocate <forWhat>".
template <typename F>
void allocateOrThrow(const std::string &what, const std::string &forWhat,
                     F &&allocate) {
  try {
    if (injectedAllocationFailure())
      throw std::bad_alloc();
    allocate();
  } catch (const std::bad_alloc &) {
    throw TensorIOError(what + ": cannot allocate " + forWhat);
  } catch (const std::length_error &) {
    throw TensorIOError(what + ": cannot allocate " + forWhat);
  }
}

/// Runs \p parse; a std::bad_alloc it lets out (from protobuf, or a small
/// container) becomes a TensorIOError "<what>: out of memory".
template <typename F>
auto reportingOutOfMemory(const std::string &what, F &&parse) {
  try {
    return parse();
  } catch (const std::bad_alloc &) {
    throw TensorIOError(what + ": out of memory while reading it");
  }
}

} // namespace strata::tio::detail

#endif // STRATA_TENSORIO_LIB_DETAIL_H
