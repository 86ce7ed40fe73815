//===- Loss.cpp - LossAndNorm graph ops to linalg ---------------------===//
//
// Lowers the graph dialect's losses (negative log likelihood, softmax cross
// entropy) and normalizations (layer, instance, group, mean-variance, LRN) to
// linalg on tensors. See Patterns.h for the contract.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;

bool strata::detail::canLowerLossAndNorm(Operation *op) {
  (void)op;
  return false;
}

void strata::detail::populateLossAndNormToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  (void)converter;
  (void)patterns;
}
