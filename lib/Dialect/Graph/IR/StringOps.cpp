//===- StringOps.cpp - string graph ops -------------------------*- C++ -*-===//
//
// Verifiers and shape inference of StringNormalizer and TfIdfVectorizer.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

using namespace mlir;
using namespace strata::graph;

//===----------------------------------------------------------------------===//
// StringNormalizer
//===----------------------------------------------------------------------===//

LogicalResult
StringNormalizerOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  TensorType input = getInput().getType();
  if (!input.hasRank()) {
    types.push_back(input);
    return success();
  }
  if (input.getRank() < 1 || input.getRank() > 2)
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  // Stop words remove a number of elements known only at run time.
  if (getStopwords() && !getStopwords()->empty())
    shape.back() = kDynamic;
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult StringNormalizerOp::verify() {
  StringRef action = getCaseChangeAction();
  if (action != "LOWER" && action != "UPPER" && action != "NONE")
    return emitOpError("case_change_action must be LOWER, UPPER or NONE, "
                       "got '")
           << action << "'";
  if (getIsCaseSensitive() != 0 && getIsCaseSensitive() != 1)
    return emitOpError("is_case_sensitive must be 0 or 1, got ")
           << getIsCaseSensitive();
  TensorType input = getInput().getType();
  if (!input.hasRank())
    return success();
  if (input.getRank() < 1 || input.getRank() > 2)
    return emitOpError("input must have shape [C] or [1, C], got ") << input;
  if (input.getRank() == 2 && !ShapedType::isDynamic(input.getDimSize(0)) &&
      input.getDimSize(0) != 1)
    return emitOpError("input must have shape [C] or [1, C], got ") << input;
  return success();
}

//===----------------------------------------------------------------------===//
// TfIdfVectorizer
//===----------------------------------------------------------------------===//

LogicalResult
TfIdfVectorizerOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> indexes = getNgramIndexes();
  if (indexes.empty() || llvm::any_of(indexes, [](int64_t i) { return i < 0; }))
    return failure();
  int64_t width = *llvm::max_element(indexes) + 1;
  Type f32 = Float32Type::get(getContext());
  TensorType input = getInput().getType();
  if (!input.hasRank()) {
    types.push_back(UnrankedTensorType::get(f32));
    return success();
  }
  if (input.getRank() == 1)
    types.push_back(RankedTensorType::get({width}, f32));
  else if (input.getRank() == 2)
    types.push_back(RankedTensorType::get({input.getDimSize(0), width}, f32));
  else
    return failure();
  return success();
}

LogicalResult TfIdfVectorizerOp::verify() {
  StringRef mode = getMode();
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return emitOpError("mode must be TF, IDF or TFIDF, got '") << mode << "'";
  if (getMinGramLength() < 1 || getMaxGramLength() < getMinGramLength())
    return emitOpError("gram lengths must satisfy 1 <= min_gram_length (")
           << getMinGramLength() << ") <= max_gram_length ("
           << getMaxGramLength() << ")";
  if (getMaxSkipCount() < 0)
    return emitOpError("max_skip_count must not be negative, got ")
           << getMaxSkipCount();

  // The pool must match the input: strings for string input, int64s for
  // integer input.
  TensorType input = getInput().getType();
  bool strings = isa<StringType>(input.getElementType());
  if (getPoolStrings().has_value() == getPoolInt64s().has_value())
    return emitOpError("needs exactly one of pool_strings and pool_int64s");
  if (strings != getPoolStrings().has_value())
    return emitOpError(strings ? "string input needs pool_strings"
                               : "integer input needs pool_int64s");
  int64_t poolSize = strings ? int64_t(getPoolStrings()->size())
                             : int64_t(getPoolInt64s()->size());

  // ngram_counts[k] is where the (k + 1)-grams start in the pool; each
  // segment holds whole n-grams, and there is one output index per n-gram.
  ArrayRef<int64_t> counts = getNgramCounts();
  if (counts.empty())
    return emitOpError("ngram_counts must not be empty");
  int64_t ngrams = 0;
  for (auto [k, start] : llvm::enumerate(counts)) {
    int64_t end = k + 1 < counts.size() ? counts[k + 1] : poolSize;
    if (start < 0 || end < start || end > poolSize)
      return emitOpError("ngram_counts [")
             << counts << "] must be non-decreasing offsets into a pool of "
             << poolSize << " items";
    int64_t n = k + 1;
    if ((end - start) % n != 0)
      return emitOpError("the ")
             << n << "-grams of the pool (items " << start << " to " << end
             << ") do not make whole " << n << "-grams";
    ngrams += (end - start) / n;
  }
  ArrayRef<int64_t> indexes = getNgramIndexes();
  if (int64_t(indexes.size()) != ngrams)
    return emitOpError("ngram_indexes has ")
           << indexes.size() << " entries, but the pool holds " << ngrams
           << " n-grams";
  if (indexes.empty() || llvm::any_of(indexes, [](int64_t i) { return i < 0; }))
    return emitOpError("ngram_indexes must be non-empty and non-negative");
  if (getWeights() && getWeights()->size() != indexes.size())
    return emitOpError("weights has ")
           << getWeights()->size() << " entries, expected " << indexes.size()
           << " (one per n-gram)";
  if (input.hasRank() && input.getRank() != 1 && input.getRank() != 2)
    return emitOpError("input must have rank 1 or 2, got ") << input;
  return success();
}
