//===- npy.cpp - fuzz target: .npy bytes ------------------------*- C++ -*-===//
//
// tensorio's .npy parser on arbitrary bytes: a tensor or a TensorIOError,
// never anything else.
//
//===----------------------------------------------------------------------===//

#include "strata/TensorIO/TensorIO.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    strata::tio::HostTensor t = strata::tio::parseNpy(data, size, "fuzz.npy");
    (void)t;
  } catch (const strata::tio::TensorIOError &) {
  }
  return 0;
}
