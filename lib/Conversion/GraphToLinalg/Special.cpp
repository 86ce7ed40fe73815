//===- Special.cpp - Special graph ops to linalg ---------------------===//
//
// Lowers the graph dialect's resampling (resize, grid sample), scatter,
// quantization, signal and other special ops to linalg on tensors. See
// Patterns.h for the contract.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;

bool strata::detail::canLowerSpecial(Operation *op) {
  (void)op;
  return false;
}

void strata::detail::populateSpecialToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  (void)converter;
  (void)patterns;
}
