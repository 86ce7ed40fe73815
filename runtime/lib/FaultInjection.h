//===- FaultInjection.h - The runtime's side of Testing.h -------*- C++ -*-===//
//
// What the allocation points call (strata/Runtime/Testing.h arms it).
// Private to the library.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_FAULTINJECTION_H
#define STRATA_RUNTIME_LIB_FAULTINJECTION_H

namespace strata::rt::detail {

/// Counts one allocation; true when testing::failAllocationAfter armed a
/// failure for this one (the caller then fails as if the memory were not
/// there).
bool injectedAllocationFailure();

} // namespace strata::rt::detail

#endif // STRATA_RUNTIME_LIB_FAULTINJECTION_H
