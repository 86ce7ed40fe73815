//===- GraphOpDefs1.cpp - generated graph op definitions, shard 1 -*- C++
//-*-===//
//
// The TableGen-generated op classes are compiled in shards so that a build
// compiles them in parallel (see include/strata/Dialect/Graph/IR/
// CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace strata::graph;

#define GET_OP_DEFS_1
#include "strata/Dialect/Graph/IR/GraphOps.cpp.inc"
