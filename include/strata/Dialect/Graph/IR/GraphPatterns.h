//===- GraphPatterns.h - rewrite helpers shared by op families --*- C++ -*-===//
//
// Ops that take a list (axes, split sizes) or a scalar (an axis, TopK's k)
// either as an attribute or as a run-time operand are canonical in the
// attribute form. One helper moves a constant operand into the attribute for
// all of them. Another builds the splat constants rewrites need (a zero, a
// one, a scalar of an operand's element type).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_DIALECT_GRAPH_IR_GRAPHPATTERNS_H
#define STRATA_DIALECT_GRAPH_IR_GRAPHPATTERNS_H

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace strata::graph {

/// The permutation a transpose applies to a value of rank `rank`: its `perm`
/// attribute, or the reversed axes when it has none.
inline llvm::SmallVector<int64_t> transposePermutation(TransposeOp op,
                                                       int64_t rank) {
  if (std::optional<llvm::ArrayRef<int64_t>> perm = op.getPerm())
    return llvm::to_vector(*perm);
  return llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank)));
}

/// Whether `perm` holds each of 0 .. size - 1 once.
inline bool isPermutation(llvm::ArrayRef<int64_t> perm) {
  llvm::SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(perm.size()) || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

/// Reads a constant scalar (one element) as a double (integers and floats).
inline std::optional<double> constantScalar(mlir::Value value) {
  mlir::DenseElementsAttr attr;
  if (!value || !mlir::matchPattern(value, mlir::m_Constant(&attr)) ||
      attr.getNumElements() != 1)
    return std::nullopt;
  mlir::Attribute element = *attr.getValues<mlir::Attribute>().begin();
  if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(element))
    return i.getType().isUnsignedInteger()
               ? double(i.getValue().getZExtValue())
               : double(i.getValue().getSExtValue());
  if (auto f = llvm::dyn_cast<mlir::FloatAttr>(element))
    return f.getValueAsDouble();
  return std::nullopt;
}

/// A graph.constant of `type` with every element `value` (converted to the
/// element type: floats as floats, integers truncated toward zero).
inline mlir::Value createSplatConstant(mlir::OpBuilder &builder,
                                       mlir::Location loc,
                                       mlir::RankedTensorType type,
                                       double value) {
  mlir::Type element = type.getElementType();
  mlir::Attribute scalar =
      mlir::isa<mlir::FloatType>(element)
          ? mlir::Attribute(mlir::FloatAttr::get(element, value))
          : mlir::Attribute(
                mlir::IntegerAttr::get(element, static_cast<int64_t>(value)));
  return ConstantOp::create(builder, loc,
                            mlir::cast<mlir::ElementsAttr>(
                                mlir::DenseElementsAttr::get(type, scalar)));
}

/// Creates `OpTy` with an unranked result of `element` type, then gives the
/// result the type the op's shape function computes from its operands: for
/// rewrites that build ops whose result shapes they do not spell out.
template <typename OpTy, typename... Args>
mlir::Value createInferred(mlir::OpBuilder &builder, mlir::Location loc,
                           mlir::Type element, Args &&...args) {
  auto op = OpTy::create(builder, loc, mlir::UnrankedTensorType::get(element),
                         std::forward<Args>(args)...);
  llvm::SmallVector<mlir::Type> types;
  if (mlir::succeeded(op.inferResultTypes(types)) && types.size() == 1)
    op->getResult(0).setType(types.front());
  return op->getResult(0);
}

/// A sequence's elements when an op in the graph lists them:
/// graph.sequence_construct, or graph.sequence_empty (none). Sequence inputs
/// are bound to such ops (docs/compiler.md).
inline std::optional<mlir::OperandRange> getListedElements(mlir::Value seq) {
  mlir::Operation *def = seq.getDefiningOp();
  if (auto construct = llvm::dyn_cast_or_null<SequenceConstructOp>(def))
    return construct.getInputs();
  if (auto empty = llvm::dyn_cast_or_null<SequenceEmptyOp>(def))
    return mlir::OperandRange(empty->operand_begin(), empty->operand_end());
  return std::nullopt;
}

/// When `operand` (an optional operand of `op`) holds a constant and the
/// attribute `attrName` is absent, replaces the operand with the attribute
/// that `makeAttr` builds from the constant's values (null: leave the op).
inline mlir::LogicalResult moveConstantOperandToAttr(
    mlir::PatternRewriter &rewriter, mlir::Operation *op,
    mlir::MutableOperandRange operand, llvm::StringRef attrName,
    llvm::function_ref<mlir::Attribute(llvm::ArrayRef<int64_t>)> makeAttr) {
  if (operand.empty() || op->getAttr(attrName))
    return mlir::failure();
  llvm::SmallVector<int64_t> values;
  if (failed(getConstantIntValues(operand[0].get(), values)))
    return mlir::failure();
  mlir::Attribute attr = makeAttr(values);
  if (!attr)
    return mlir::failure();
  rewriter.modifyOpInPlace(op, [&] {
    op->setAttr(attrName, attr);
    operand.clear();
  });
  return mlir::success();
}

/// `makeAttr` for list attributes (DenseI64ArrayAttr).
inline mlir::Attribute i64ArrayAttr(mlir::MLIRContext *context,
                                    llvm::ArrayRef<int64_t> values) {
  return mlir::DenseI64ArrayAttr::get(context, values);
}

/// `makeAttr` for scalar attributes (I64Attr): only a single value converts.
inline mlir::Attribute i64ScalarAttr(mlir::MLIRContext *context,
                                     llvm::ArrayRef<int64_t> values) {
  if (values.size() != 1)
    return {};
  return mlir::IntegerAttr::get(mlir::IntegerType::get(context, 64),
                                values.front());
}

} // namespace strata::graph

#endif // STRATA_DIALECT_GRAPH_IR_GRAPHPATTERNS_H
