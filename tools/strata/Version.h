//===- Version.h - strata's version for the driver --------------*- C++ -*-===//
#ifndef STRATA_TOOLS_STRATA_VERSION_H
#define STRATA_TOOLS_STRATA_VERSION_H

#include "strata/Version.h"

namespace strata::driver {

constexpr const char *kStrataVersion = STRATA_VERSION_STRING;

} // namespace strata::driver

#endif // STRATA_TOOLS_STRATA_VERSION_H
