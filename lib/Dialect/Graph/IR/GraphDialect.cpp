//===- GraphDialect.cpp - strata graph dialect ------------------*- C++ -*-===//

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace strata::graph;

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include "strata/Dialect/Graph/IR/GraphDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "strata/Dialect/Graph/IR/GraphTypes.cpp.inc"

void GraphDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "strata/Dialect/Graph/IR/GraphTypes.cpp.inc"
      >();
  registerGraphDialectOperations(this);
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}
