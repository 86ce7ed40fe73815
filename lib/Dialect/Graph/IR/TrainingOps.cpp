//===- TrainingOps.cpp - training graph ops ---------------------*- C++ -*-===//
//
// Verifiers and shape inference of the optimizers and of Gradient.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata::graph;

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// The result types of an optimizer updating n tensors with `groups` groups
/// of n inputs (X, G, then state): the new X take the X types, and each
/// state group's results take the types of that group's inputs.
static LogicalResult inferOptimizer(ValueRange inputs, unsigned groups,
                                    unsigned numResults,
                                    SmallVectorImpl<Type> &types) {
  if (inputs.empty() || inputs.size() % groups != 0)
    return failure();
  unsigned n = inputs.size() / groups;
  if (numResults != n * (groups - 1))
    return failure();
  // Results: X (group 0), then the state groups 2, 3, ... (gradients, group
  // 1, are not returned).
  for (unsigned i = 0; i < n; ++i)
    types.push_back(inputs[i].getType());
  for (unsigned group = 2; group < groups; ++group)
    for (unsigned i = 0; i < n; ++i)
      types.push_back(inputs[group * n + i].getType());
  return success();
}

/// Checks an optimizer: R and T scalars, `groups` groups of n tensors whose
/// i-th members agree in type, and one result per returned tensor.
static LogicalResult verifyOptimizer(Operation *op, Value r, Value t,
                                     ValueRange inputs, unsigned groups,
                                     StringRef groupNames) {
  for (auto [value, name] : {std::pair{r, "R"}, std::pair{t, "T"}}) {
    auto type = cast<TensorType>(value.getType());
    if (type.hasRank() && type.getRank() != 0 &&
        !(type.hasStaticShape() && type.getNumElements() == 1))
      return op->emitOpError() << name << " must be a scalar, got " << type;
  }
  if (inputs.empty() || inputs.size() % groups != 0)
    return op->emitOpError("takes ")
           << inputs.size() << " tensors after R and T, expected a positive "
           << "multiple of " << groups << " (" << groupNames << ")";
  SmallVector<StringRef> names;
  groupNames.split(names, ", ");
  unsigned n = inputs.size() / groups;
  for (unsigned i = 0; i < n; ++i) {
    Type x = inputs[i].getType();
    for (unsigned group = 1; group < groups; ++group) {
      Type other = inputs[group * n + i].getType();
      if (!joinTypes(x, other))
        return op->emitOpError()
               << names[group] << "_" << i + 1 << " has type " << other
               << ", but " << names[0] << "_" << i + 1 << " has type " << x;
    }
  }
  if (op->getNumResults() != n * (groups - 1))
    return op->emitOpError("has ")
           << op->getNumResults() << " results, expected " << n * (groups - 1)
           << " for " << n << " optimized tensors";
  return success();
}

LogicalResult AdagradOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferOptimizer(getInputs(), 3, getNumResults(), types);
}

LogicalResult AdagradOp::verify() {
  return verifyOptimizer(*this, getR(), getT(), getInputs(), 3, "X, G, H");
}

LogicalResult MomentumOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferOptimizer(getInputs(), 3, getNumResults(), types);
}

LogicalResult MomentumOp::verify() {
  if (getMode() != "standard" && getMode() != "nesterov")
    return emitOpError("mode must be 'standard' or 'nesterov', got '")
           << getMode() << "'";
  return verifyOptimizer(*this, getR(), getT(), getInputs(), 3, "X, G, V");
}

LogicalResult AdamOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferOptimizer(getInputs(), 4, getNumResults(), types);
}

LogicalResult AdamOp::verify() {
  return verifyOptimizer(*this, getR(), getT(), getInputs(), 4, "X, G, V, H");
}

//===----------------------------------------------------------------------===//
// Gradient
//===----------------------------------------------------------------------===//

LogicalResult GradientOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  if (getXs().size() != getNumResults())
    return failure();
  // dy/dx has the shape of x; its (floating-point) element type is the one
  // the result declares, which x's need not be.
  for (auto [x, result] : llvm::zip(getXs(), getOutputs().getTypes())) {
    auto xType = cast<TensorType>(x.getType());
    types.push_back(xType.hasRank() ? withShape(result, xType.getShape())
                                    : withShape(result, std::nullopt));
  }
  return success();
}

LogicalResult GradientOp::verify() {
  if (getXs().empty())
    return emitOpError("needs at least one value in xs");
  if (getNumResults() != getXs().size())
    return emitOpError("has ")
           << getNumResults() << " results, expected one per value of xs ("
           << getXs().size() << ")";
  size_t expected = getXs().size() + getZs().size();
  if (getInputs().size() != expected)
    return emitOpError("takes ") << getInputs().size() << " inputs, expected "
                                 << expected << " (one per value of xs and zs)";
  auto names = llvm::concat<Value>(getXs(), getZs());
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getInputs(), names))) {
    auto [input, value] = pair;
    if (!joinTypes(input.getType(), value.getType()))
      return emitOpError("input #")
             << i << " has type " << input.getType()
             << ", but the value it stands for has type " << value.getType();
  }
  return success();
}
