//===- NNOpsCommon.h - the checking the NN ops share -------------*- C++
//-*-===//
//
// One routine per op both infers its result types and, reporting, verifies
// it (Check, SHAPE_FUNCTION_IS_VERIFIER); the operand checks that
// NNOps.cpp and ConvOps.cpp share. Private to the dialect's IR library.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_DIALECT_GRAPH_IR_NNOPSCOMMON_H
#define STRATA_LIB_DIALECT_GRAPH_IR_NNOPSCOMMON_H

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

namespace strata::graph::nn_ops {

using namespace mlir;

/// True when two dimension sizes can be equal at run time.
inline bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Shape inference and the verifier of each op below share one routine: it
/// runs silently for inference and reports through the op for verification,
/// so an op the verifier accepts always has a shape, and vice versa.
class Check {
public:
  Check(Operation *op, bool report) : op(op), report(report) {}

  /// Fails, reporting the message when verifying.
  template <typename... Args> LogicalResult fail(Args &&...args) const {
    if (report) {
      InFlightDiagnostic diag = op->emitOpError();
      (diag << ... << std::forward<Args>(args));
    }
    return failure();
  }

private:
  Operation *op;
  bool report;
};

/// Most ops here have one function that both infers the result types and,
/// with a reporting Check, names what is wrong: it is the op's shape
/// function and its verifier.
#define SHAPE_FUNCTION_IS_VERIFIER(Op, shapeFunction)                          \
  LogicalResult Op::inferResultTypes(SmallVectorImpl<Type> &types) {           \
    return shapeFunction(*this, types, Check(*this, false));                   \
  }                                                                            \
  LogicalResult Op::verify() {                                                 \
    SmallVector<Type> types;                                                   \
    return shapeFunction(*this, types, Check(*this, true));                    \
  }

inline TensorType tensorType(Value value) {
  return cast<TensorType>(value.getType());
}

/// The size of dimension `i` of a ranked tensor, or kDynamic when the
/// tensor is unranked.
inline int64_t dimOf(TensorType type, int64_t i) {
  return type.hasRank() ? type.getDimSize(i) : kDynamic;
}

/// True when `value` is a scalar or a one-element 1-D tensor (the forms
/// ONNX accepts for per-tensor scales, zero points and thresholds).
inline bool isScalarLike(Value value) {
  auto type = tensorType(value);
  if (!type.hasRank())
    return true;
  return type.getRank() == 0 ||
         (type.getRank() == 1 && dimsCompatible(type.getDimSize(0), 1));
}

/// Checks that `value` is 1-D with `size` entries (when known).
inline LogicalResult checkVector(Value value, int64_t size, StringRef name,
                                 const Check &check) {
  auto type = tensorType(value);
  if (!type.hasRank())
    return success();
  if (type.getRank() != 1 || !dimsCompatible(type.getDimSize(0), size))
    return check.fail(name, " must be 1-D with ",
                      ShapedType::isDynamic(size) ? std::string("?")
                                                  : std::to_string(size),
                      " entries, got ", type);
  return success();
}

/// Reads a constant scalar (or one-element) integer operand.
inline std::optional<int64_t> constantScalar(Value value) {
  SmallVector<int64_t> values;
  if (!value || failed(getConstantIntValues(value, values)) ||
      values.size() != 1)
    return std::nullopt;
  return values.front();
}

inline LogicalResult checkFlag(int64_t value, StringRef name,
                               const Check &check) {
  if (value != 0 && value != 1)
    return check.fail(name, " must be 0 or 1, got ", value);
  return success();
}

inline LogicalResult checkOneOf(StringRef value, ArrayRef<StringRef> allowed,
                                StringRef name, const Check &check) {
  if (llvm::is_contained(allowed, value))
    return success();
  std::string list;
  for (StringRef a : allowed)
    list += (list.empty() ? "" : ", ") + a.str();
  return check.fail("unknown ", name, " \"", value, "\" (expected one of ",
                    list, ")");
}

/// Checks that a zero point has the element type of the data it belongs to
/// and is a scalar (or, where `perChannel` is known, 1-D with that size).
inline LogicalResult checkZeroPoint(Value zeroPoint, Type element,
                                    StringRef name, const Check &check,
                                    std::optional<int64_t> perChannel = {}) {
  if (!zeroPoint)
    return success();
  auto type = tensorType(zeroPoint);
  if (type.getElementType() != element)
    return check.fail(name, " element type ", type.getElementType(),
                      " differs from the data's ", element);
  if (isScalarLike(zeroPoint))
    return success();
  if (perChannel)
    return checkVector(zeroPoint, *perChannel, name, check);
  return check.fail(name, " must be a scalar, got ", type);
}

} // namespace strata::graph::nn_ops

#endif // STRATA_LIB_DIALECT_GRAPH_IR_NNOPSCOMMON_H
