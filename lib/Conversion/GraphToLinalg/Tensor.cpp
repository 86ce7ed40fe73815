//===- Tensor.cpp - Tensor graph ops to linalg -------------------------*- C++
//-*-===//
//
// Lowers the graph dialect's shape and data movement ops (transpose, concat,
// slice, gather, pad, expand, tile, ...) to linalg on tensors. See Patterns.h
// for the contract.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;

bool strata::detail::canLowerTensor(Operation *op) {
  (void)op;
  return false;
}

void strata::detail::populateTensorToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  (void)converter;
  (void)patterns;
}
