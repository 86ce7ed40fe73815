//===- ImportString.cpp - string ONNX ops -----------------------*- C++ -*-===//
//
// Converters of ONNX's text-processing operators, StringNormalizer and
// TfIdfVectorizer. Their attributes map one to one onto the graph ops'.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

/// Reads an optional strings attribute into an ArrayAttr (null if absent).
ArrayAttr stringsOrNull(NodeImporter &n, StringRef name) {
  auto values = n.stringsAttr(name);
  if (!values)
    return {};
  SmallVector<StringRef> refs(values->begin(), values->end());
  return n.builder().getStrArrayAttr(refs);
}

LogicalResult convertStringNormalizer(NodeImporter &n) {
  Value input = n.input(0);
  if (!isa<graph::StringType>(getElementTypeOrSelf(input.getType())))
    return n.fail("the input must be a string tensor");
  OpBuilder &b = n.builder();
  StringAttr locale;
  if (n.hasAttr("locale"))
    locale = b.getStringAttr(n.stringAttr("locale", ""));
  auto op = n.create<graph::StringNormalizerOp>(
      n.outputType(0), input,
      b.getStringAttr(n.stringAttr("case_change_action", "NONE")),
      b.getI64IntegerAttr(n.intAttr("is_case_sensitive", 0)), locale,
      stringsOrNull(n, "stopwords"));
  return n.setOutput(op);
}

LogicalResult convertTfIdfVectorizer(NodeImporter &n) {
  OpBuilder &b = n.builder();
  // Every attribute but the pools and weights is required.
  auto maxGram = n.optionalIntAttr("max_gram_length");
  auto minGram = n.optionalIntAttr("min_gram_length");
  auto maxSkip = n.optionalIntAttr("max_skip_count");
  auto counts = n.intsAttrOrNull("ngram_counts");
  auto indexes = n.intsAttrOrNull("ngram_indexes");
  bool hasMode = n.hasAttr("mode");
  std::string mode = n.stringAttr("mode", "");
  const char *missing = !maxGram   ? "max_gram_length"
                        : !minGram ? "min_gram_length"
                        : !maxSkip ? "max_skip_count"
                        : !hasMode ? "mode"
                        : !counts  ? "ngram_counts"
                        : !indexes ? "ngram_indexes"
                                   : nullptr;
  if (missing)
    return n.fail(Twine("missing required attribute '") + missing + "'");
  DenseF32ArrayAttr weights;
  if (auto values = n.floatsAttr("weights"))
    weights = b.getDenseF32ArrayAttr(*values);
  auto op = n.create<graph::TfIdfVectorizerOp>(
      n.outputType(0, Float32Type::get(n.context())), n.input(0),
      b.getI64IntegerAttr(*maxGram), b.getI64IntegerAttr(*minGram),
      b.getI64IntegerAttr(*maxSkip), b.getStringAttr(mode), counts, indexes,
      n.intsAttrOrNull("pool_int64s"), stringsOrNull(n, "pool_strings"),
      weights);
  return n.setOutput(op);
}

} // namespace

void strata::onnx_import::registerStringConverters(ConverterRegistry &r) {
  r.add("StringNormalizer", convertStringNormalizer);
  r.add("TfIdfVectorizer", convertTfIdfVectorizer);
}
