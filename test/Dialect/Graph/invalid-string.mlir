// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @action(%x: tensor<4x!graph.string>) -> tensor<4x!graph.string> {
  // expected-error @+1 {{'graph.string_normalizer' op case_change_action must be LOWER, UPPER or NONE, got 'lower'}}
  %0 = graph.string_normalizer %x {case_change_action = "lower"} : (tensor<4x!graph.string>) -> tensor<4x!graph.string>
  return %0 : tensor<4x!graph.string>
}

// -----

func.func @batch(%x: tensor<2x4x!graph.string>) -> tensor<*x!graph.string> {
  // expected-error @+1 {{'graph.string_normalizer' op input must have shape [C] or [1, C], got 'tensor<2x4x!graph.string>'}}
  %0 = graph.string_normalizer %x : (tensor<2x4x!graph.string>) -> tensor<*x!graph.string>
  return %0 : tensor<*x!graph.string>
}

// -----

func.func @not_strings(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'graph.string_normalizer' op operand #0 must be tensor of string values, but got 'tensor<4xi32>'}}
  %0 = graph.string_normalizer %x : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @mode(%x: tensor<6xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.tfidf_vectorizer' op mode must be TF, IDF or TFIDF, got 'BM25'}}
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64,
      mode = "BM25", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0>, pool_int64s = array<i64: 5>}
      : (tensor<6xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gram_lengths(%x: tensor<6xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.tfidf_vectorizer' op gram lengths must satisfy 1 <= min_gram_length (2) <= max_gram_length (1)}}
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 2 : i64,
      mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0>, pool_int64s = array<i64: 5>}
      : (tensor<6xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_kind(%x: tensor<6x!graph.string>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.tfidf_vectorizer' op string input needs pool_strings}}
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64,
      mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0>, pool_int64s = array<i64: 5>}
      : (tensor<6x!graph.string>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @two_pools(%x: tensor<6xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.tfidf_vectorizer' op needs exactly one of pool_strings and pool_int64s}}
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64,
      mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0>, pool_int64s = array<i64: 5>,
      pool_strings = ["a"]} : (tensor<6xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @partial_bigram(%x: tensor<6xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.tfidf_vectorizer' op the 2-grams of the pool (items 1 to 4) do not make whole 2-grams}}
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64,
      mode = "TF", ngram_counts = array<i64: 0, 1>, ngram_indexes = array<i64: 0, 1>, pool_int64s = array<i64: 5, 1, 2, 3>}
      : (tensor<6xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @index_count(%x: tensor<6xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.tfidf_vectorizer' op ngram_indexes has 2 entries, but the pool holds 3 n-grams}}
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64,
      mode = "TF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 0, 1>, pool_int64s = array<i64: 5, 1, 2, 3>}
      : (tensor<6xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @weights(%x: tensor<6xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.tfidf_vectorizer' op weights has 2 entries, expected 1 (one per n-gram)}}
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64,
      mode = "IDF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0>, pool_int64s = array<i64: 5>,
      weights = array<f32: 1.0, 2.0>} : (tensor<6xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @width(%x: tensor<6xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.tfidf_vectorizer' op result #0 has type 'tensor<3xf32>', incompatible with the inferred type 'tensor<5xf32>'}}
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64,
      mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 4>, pool_int64s = array<i64: 5>}
      : (tensor<6xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
