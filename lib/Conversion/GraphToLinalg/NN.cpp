//===- NN.cpp - NN graph ops to linalg -------------------------*- C++ -*-===//
//
// Lowers the graph dialect's matmul, gemm, convolution, pooling and
// normalization ops to linalg on tensors. See Patterns.h for the contract.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;

bool strata::detail::canLowerNN(Operation *op) {
  (void)op;
  return false;
}

void strata::detail::populateNNToLinalgPatterns(TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  (void)converter;
  (void)patterns;
}
