//===- tensorproto.cpp - fuzz target: ONNX TensorProto bytes ----*- C++ -*-===//
//
// tensorio's TensorProto reader (the conformance data sets' .pb files) on
// arbitrary bytes: a tensor or a TensorIOError, never anything else.
//
//===----------------------------------------------------------------------===//

#include "strata/TensorIO/TensorIO.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    strata::tio::NamedTensor t =
        strata::tio::parseTensorProto(data, size, "fuzz.pb");
    (void)t;
  } catch (const strata::tio::TensorIOError &) {
  }
  return 0;
}
