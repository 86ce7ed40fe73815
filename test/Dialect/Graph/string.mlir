// RUN: strata-opt %s -split-input-file | strata-opt -split-input-file | FileCheck %s
// RUN: strata-opt %s -split-input-file --strata-graph-infer-shapes | FileCheck %s --check-prefix=INFER

// CHECK-LABEL: func @normalize
// INFER-LABEL: func @normalize
func.func @normalize(%x: tensor<4x!graph.string>, %y: tensor<1x3x!graph.string>)
    -> (tensor<?x!graph.string>, tensor<*x!graph.string>) {
  // CHECK: graph.string_normalizer %{{.*}} {case_change_action = "LOWER", is_case_sensitive = 1 : i64, stopwords = ["monday"]} : (tensor<4x!graph.string>) -> tensor<?x!graph.string>
  %0 = graph.string_normalizer %x {case_change_action = "LOWER", is_case_sensitive = 1 : i64, stopwords = ["monday"]}
      : (tensor<4x!graph.string>) -> tensor<?x!graph.string>
  // Without stop words the shape is kept.
  // CHECK: graph.string_normalizer %{{.*}} {case_change_action = "UPPER", locale = "en_US"} : (tensor<1x3x!graph.string>) -> tensor<*x!graph.string>
  // INFER: graph.string_normalizer {{.*}} -> tensor<1x3x!graph.string>
  %1 = graph.string_normalizer %y {case_change_action = "UPPER", locale = "en_US"}
      : (tensor<1x3x!graph.string>) -> tensor<*x!graph.string>
  return %0, %1 : tensor<?x!graph.string>, tensor<*x!graph.string>
}

// -----

// CHECK-LABEL: func @vectorize
// INFER-LABEL: func @vectorize
func.func @vectorize(%x: tensor<2x6xi32>, %s: tensor<5x!graph.string>) -> (tensor<*xf32>, tensor<*xf32>) {
  // CHECK: graph.tfidf_vectorizer %{{.*}} {{.*}}pool_int64s = array<i64: 2, 3, 5, 4, 5, 6, 7, 8, 6, 7>} : (tensor<2x6xi32>) -> tensor<*xf32>
  // INFER: graph.tfidf_vectorizer {{.*}} -> tensor<2x7xf32>
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 0 : i64, min_gram_length = 2 : i64,
      mode = "TF", ngram_counts = array<i64: 0, 4>, ngram_indexes = array<i64: 0, 1, 2, 3, 4, 5, 6>,
      pool_int64s = array<i64: 2, 3, 5, 4, 5, 6, 7, 8, 6, 7>} : (tensor<2x6xi32>) -> tensor<*xf32>
  // CHECK: graph.tfidf_vectorizer %{{.*}} {{.*}}pool_strings = ["a", "b", "a", "c"], weights = array<f32: 1.000000e+00, 5.000000e-01, 2.000000e+00>} : (tensor<5x!graph.string>) -> tensor<*xf32>
  // INFER: graph.tfidf_vectorizer {{.*}} -> tensor<4xf32>
  %1 = graph.tfidf_vectorizer %s {max_gram_length = 2 : i64, max_skip_count = 1 : i64, min_gram_length = 1 : i64,
      mode = "TFIDF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 3, 0, 1>,
      pool_strings = ["a", "b", "a", "c"], weights = array<f32: 1.0, 0.5, 2.0>} : (tensor<5x!graph.string>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}
