//===- Recurrent.cpp - Recurrent graph ops to linalg ---------------------===//
//
// Lowers the graph dialect's recurrent networks (RNN, GRU, LSTM)
// to linalg on tensors. See Patterns.h for the contract.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;

bool strata::detail::canLowerRecurrent(Operation *op) {
  (void)op;
  return false;
}

void strata::detail::populateRecurrentToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  (void)converter;
  (void)patterns;
}
