//===- StringOps.td - string graph ops ---------------------*- tablegen -*-===//
//
// ONNX's text-processing operators. String tensors have the !graph.string
// element type.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_STRING_OPS_TD
#define STRATA_GRAPH_STRING_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"

// The !graph.string element type, named "string" in constraint messages.
def Graph_StringElement
    : Type<CPred<"::llvm::isa<::strata::graph::StringType>($_self)">, "string",
           "::strata::graph::StringType">;

def Graph_StringNormalizerOp : Graph_SimpleOp<"string_normalizer"> {
  let summary = "removes stop words, then changes the case of strings";
  let description = [{
    The input is a [C] or [1, C] string tensor. Elements equal to one of
    `stopwords` (compared ignoring case unless `is_case_sensitive` is 1) are
    removed, then the rest are lowercased, uppercased or kept according to
    `case_change_action` ("LOWER", "UPPER", "NONE") under `locale`. Without
    stop words the shape is kept; otherwise the last dimension is known only
    at run time (an input whose elements are all removed gives one empty
    string).
  }];
  let arguments = (ins TensorOf<[Graph_StringElement]>:$input,
                       DefaultValuedAttr<StrAttr, "\"NONE\"">:$case_change_action,
                       DefaultValuedAttr<I64Attr, "0">:$is_case_sensitive,
                       OptionalAttr<StrAttr>:$locale,
                       OptionalAttr<StrArrayAttr>:$stopwords);
  let results = (outs TensorOf<[Graph_StringElement]>:$output);
  let hasVerifier = 1;
}

def Graph_TfIdfVectorizerOp : Graph_SimpleOp<"tfidf_vectorizer"> {
  let summary = "counts the n-grams of a pool in each row of the input";
  let description = [{
    The input is a [C] or [N, C] tensor of strings or integers. The pool
    (`pool_strings` for string input, `pool_int64s` for integer input) holds
    the n-grams sorted by length: `ngram_counts[k]` is where the
    (k + 1)-grams start. N-grams of `min_gram_length` to `max_gram_length`
    items, skipping up to `max_skip_count` items between consecutive ones,
    are counted; the i-th pool n-gram's count goes to output position
    `ngram_indexes[i]`, weighted according to `mode` ("TF", "IDF", "TFIDF")
    by `weights`. The output is [max(ngram_indexes) + 1] or
    [N, max(ngram_indexes) + 1] floats.
  }];
  let arguments = (ins TensorOf<[Graph_StringElement, I32, I64]>:$input,
                       I64Attr:$max_gram_length,
                       I64Attr:$min_gram_length,
                       I64Attr:$max_skip_count,
                       StrAttr:$mode,
                       DenseI64ArrayAttr:$ngram_counts,
                       DenseI64ArrayAttr:$ngram_indexes,
                       OptionalAttr<DenseI64ArrayAttr>:$pool_int64s,
                       OptionalAttr<StrArrayAttr>:$pool_strings,
                       OptionalAttr<DenseF32ArrayAttr>:$weights);
  let results = (outs TensorOf<[F32]>:$output);
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_STRING_OPS_TD
