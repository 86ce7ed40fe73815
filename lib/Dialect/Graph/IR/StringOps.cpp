//===- StringOps.cpp - string graph ops -------------------------*- C++ -*-===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace strata::graph;
