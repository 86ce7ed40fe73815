//===- Version.h - strata's version -----------------------------*- C++ -*-===//
//
// One place for the version `strata --version` prints, module files record
// and the compile cache keys on: a release that changes what the compiler
// emits bumps it, so that no cache entry of an older strata is reused (the
// compiler binary's identity is part of the key as well, for builds between
// releases).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_VERSION_H
#define STRATA_VERSION_H

#define STRATA_VERSION_STRING "0.3.0"

#endif // STRATA_VERSION_H
