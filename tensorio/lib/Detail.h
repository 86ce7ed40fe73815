//===- Detail.h - Helpers shared by the tensorio sources --------*- C++ -*-===//
//
// File reading and writing with errors that name the file, and checked
// arithmetic on tensor sizes. Private to the library.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TENSORIO_LIB_DETAIL_H
#define STRATA_TENSORIO_LIB_DETAIL_H

#include "strata/TensorIO/TensorIO.h"

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

/// numElements * elementSize(type), or throws on overflow.
uint64_t checkedByteSize(int64_t numElements, ElementType type,
                         const std::string &what);

/// "[3, 4, 5]".
std::string formatShape(const std::vector<int64_t> &shape);

} // namespace strata::tio::detail

#endif // STRATA_TENSORIO_LIB_DETAIL_H
