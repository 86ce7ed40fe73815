//===- ReductionOps.cpp - reductions, softmax, cumsum -----------*- C++ -*-===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata::graph;

/// Verifies that `axis` is within the rank of `op`'s first operand.
static LogicalResult verifyAxisInRange(Operation *op, int64_t axis,
                                       StringRef name = "axis") {
  auto type = cast<TensorType>(op->getOperand(0).getType());
  if (type.hasRank() && !normalizeAxis(axis, type.getRank()))
    return op->emitOpError() << name << " " << axis
                             << " is out of range for an input of rank "
                             << type.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// ArgMax / ArgMin
//===----------------------------------------------------------------------===//

template <typename Op>
static LogicalResult inferArgReduce(Op op, SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(op.getInput().getType());
  if (!input.hasRank()) {
    types.push_back(withShape(op.getType(), std::nullopt));
    return success();
  }
  auto axis = normalizeAxis(op.getAxis(), input.getRank());
  if (!axis)
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  if (op.getKeepdims())
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  types.push_back(withShape(op.getType(), ArrayRef<int64_t>(shape)));
  return success();
}

LogicalResult ArgMaxOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferArgReduce(*this, types);
}
LogicalResult ArgMaxOp::verify() { return verifyAxisInRange(*this, getAxis()); }
LogicalResult ArgMinOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferArgReduce(*this, types);
}
LogicalResult ArgMinOp::verify() { return verifyAxisInRange(*this, getAxis()); }

//===----------------------------------------------------------------------===//
// Softmax family and CumSum: the result has the input's type.
//===----------------------------------------------------------------------===//

#define SAME_TYPE_AXIS_OP(Op)                                                  \
  LogicalResult Op::inferResultTypes(SmallVectorImpl<Type> &types) {           \
    types.push_back(getInput().getType());                                     \
    return success();                                                          \
  }                                                                            \
  LogicalResult Op::verify() { return verifyAxisInRange(*this, getAxis()); }

SAME_TYPE_AXIS_OP(SoftmaxOp)
SAME_TYPE_AXIS_OP(LogSoftmaxOp)
SAME_TYPE_AXIS_OP(HardmaxOp)
SAME_TYPE_AXIS_OP(CumSumOp)
#undef SAME_TYPE_AXIS_OP
