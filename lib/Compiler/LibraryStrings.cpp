//===- LibraryStrings.cpp - string ops as host library steps ----*- C++ -*-===//
//
// Ops on string tensors run as the runtime's host kernels for strings
// (runtime/lib/kernels/Strings.cpp), on every target: generated code cannot
// hold a std::string, and the memory plan keeps strings out of the arena
// (docs/runtime.md, "Strings").
//
// - graph.string_normalizer -> "string.normalizer" (its output's last
//   dimension may only be known at run time: the plan gives it a Host
//   buffer that the step sizes);
// - graph.cast between strings and f32, f64 or 8- to 64-bit integers ->
//   "string.cast";
// - reshapes and identities of strings -> "string.copy" (a buffer view
//   needs arena bytes, which strings do not have).
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Library.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
namespace graph = strata::graph;

static bool isStringTensor(Type type) {
  auto tensor = dyn_cast<TensorType>(type);
  return tensor && isa<graph::StringType>(tensor.getElementType());
}

bool strata::isStringOp(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isStringTensor) ||
         llvm::any_of(op->getResultTypes(), isStringTensor);
}

/// Whether "string.cast" converts strings from and to `type`.
static bool isCastableNumber(Type type) {
  if (type.isF32() || type.isF64())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  return integer && integer.getWidth() >= 8 && integer.getWidth() <= 64 &&
         llvm::isPowerOf2_32(integer.getWidth());
}

std::optional<strata::LibraryMatch>
strata::matchStringKernel(Operation *op, const LibraryRequest &,
                          std::string &whyNot) {
  MLIRContext *context = op->getContext();
  LibraryMatch match;
  match.ops.push_back(op);
  match.joinReasons.push_back("");
  if (auto normalizer = dyn_cast<graph::StringNormalizerOp>(op)) {
    match.library = "string.normalizer";
    match.inputs = {&op->getOpOperand(0)};
    match.attrs.set("case_change_action",
                    StringAttr::get(context, normalizer.getCaseChangeAction()));
    match.attrs.set("is_case_sensitive",
                    IntegerAttr::get(
                        IntegerType::get(context, 64),
                        static_cast<int64_t>(normalizer.getIsCaseSensitive())));
    if (std::optional<StringRef> locale = normalizer.getLocale())
      match.attrs.set("locale", StringAttr::get(context, *locale));
    if (ArrayAttr stopwords = normalizer.getStopwordsAttr())
      match.attrs.set("stopwords", stopwords);
    match.reason = "StringNormalizer on strings: the runtime's host string "
                   "kernel (generated code does not take strings)";
    return match;
  }
  if (isa<graph::CastOp>(op)) {
    Type from = cast<TensorType>(op->getOperand(0).getType()).getElementType();
    Type to = cast<TensorType>(op->getResult(0).getType()).getElementType();
    bool fromString = isa<graph::StringType>(from);
    bool toString = isa<graph::StringType>(to);
    Type number = fromString ? to : from;
    if (fromString && toString) {
      // A cast of strings to strings is a copy.
      match.library = "string.copy";
    } else if (!isCastableNumber(number)) {
      whyNot = "string.cast converts strings from and to f32, f64 and 8- to "
               "64-bit integers, not " +
               typeString(number);
      return std::nullopt;
    } else {
      match.library = "string.cast";
    }
    match.inputs = {&op->getOpOperand(0)};
    match.reason = std::string("a cast ") + (fromString ? "from" : "to") +
                   " strings: the runtime's host string kernel (generated "
                   "code does not take strings)";
    return match;
  }
  if (isa<graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp,
          graph::UnsqueezeOp, graph::IdentityOp>(op) &&
      isStringTensor(op->getOperand(0).getType()) &&
      isStringTensor(op->getResult(0).getType())) {
    match.library = "string.copy";
    match.inputs = {&op->getOpOperand(0)};
    match.reason = "a reshape of strings: a copy on the host (strings have "
                   "no arena bytes to view)";
    return match;
  }
  whyNot = "no runtime kernel for " + op->getName().getStringRef().str() +
           " on string tensors (the runtime's string kernels take "
           "StringNormalizer, Cast and reshapes)";
  return std::nullopt;
}
