//===- LibraryValueShaped.cpp - ops of value-dependent shapes ---*- C++ -*-===//
//
// NonZero, Compress, Unique and NonMaxSuppression produce as many elements
// as their input's values select, so no kernel compiled for static shapes
// can write them. They run as the runtime's host kernels
// (runtime/lib/kernels/ValueShaped.cpp), on every target, into Host buffers
// whose value-dependent dimensions the step sets when it runs
// (docs/runtime.md, "Value-dependent shapes"):
//
//   graph.non_zero              -> "host.nonzero"
//   graph.compress              -> "host.compress"   (axis)
//   graph.unique                -> "host.unique"     (sorted, axis)
//   graph.non_max_suppression   -> "host.non_max_suppression"
//                                  (center_point_box, optional_inputs)
//
// Such a value may flow to the model's outputs and to other host steps;
// generated code needs static shapes, so a kernel reading one is a compile
// error naming its node (Specialize.cpp, verifyStaticShapes).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
namespace graph = strata::graph;

bool strata::isValueShapedOp(Operation *op) {
  return isa<graph::NonZeroOp, graph::CompressOp, graph::UniqueOp,
             graph::NonMaxSuppressionOp>(op);
}

std::optional<strata::LibraryMatch>
strata::matchValueShapedKernel(Operation *op, const LibraryRequest &,
                               std::string &whyNot) {
  MLIRContext *context = op->getContext();
  auto i64 = [&](int64_t value) {
    return IntegerAttr::get(IntegerType::get(context, 64), value);
  };
  LibraryMatch match;
  // An optional axis attribute, made non-negative for the runtime.
  auto setAxis = [&](std::optional<int64_t> axis, Value input) {
    if (!axis)
      return;
    int64_t rank = cast<ShapedType>(input.getType()).getRank();
    match.attrs.set("axis", i64(*axis < 0 ? *axis + rank : *axis));
  };
  match.ops.push_back(op);
  match.joinReasons.push_back("");
  for (OpOperand &operand : op->getOpOperands())
    match.inputs.push_back(&operand);
  const char *why = "its result's size depends on the values: the runtime's "
                    "host kernel sizes it when it runs";
  match.reason = std::string(op->getName().stripDialect()) + ": " + why;
  if (isa<graph::NonZeroOp>(op)) {
    match.library = "host.nonzero";
    return match;
  }
  if (auto compress = dyn_cast<graph::CompressOp>(op)) {
    match.library = "host.compress";
    setAxis(compress.getAxis(), compress.getInput());
    return match;
  }
  if (auto unique = dyn_cast<graph::UniqueOp>(op)) {
    match.library = "host.unique";
    match.attrs.set("sorted", i64(unique.getSorted()));
    setAxis(unique.getAxis(), unique.getInput());
    return match;
  }
  if (auto nms = dyn_cast<graph::NonMaxSuppressionOp>(op)) {
    match.library = "host.non_max_suppression";
    match.attrs.set("center_point_box", i64(nms.getCenterPointBox()));
    // Which of the three optional operands follow boxes and scores.
    SmallVector<int64_t> present = {nms.getMaxOutputBoxesPerClass() != nullptr,
                                    nms.getIouThreshold() != nullptr,
                                    nms.getScoreThreshold() != nullptr};
    match.attrs.set("optional_inputs",
                    DenseI64ArrayAttr::get(context, present));
    return match;
  }
  whyNot = "no host kernel for " + op->getName().getStringRef().str();
  return std::nullopt;
}
