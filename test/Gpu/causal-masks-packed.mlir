// transformers 5 builds a decoder's causal mask without an attention mask as
// causal AND "same packed sequence": the sequence ids are a CumSum of the
// positions' steps (find_packed_sequence_indices), read per query and per key
// by GatherND. Every input is a constant, so canonicalization folds the ids
// (CumSum and GatherND of constants) and strata-causal-masks reads the rest:
// the bias becomes the causal Where.
// RUN: strata-opt %s -split-input-file --canonicalize --strata-causal-masks | FileCheck %s

// CHECK-LABEL: func.func @packed_causal
// CHECK-NOT: graph.cum_sum
// CHECK-NOT: graph.gather_nd
// CHECK: %[[S:.*]] = graph.matmul
// CHECK: %[[TRI:.*]] = graph.trilu %{{.*}} k %{{.*}} : (tensor<8x8xi1>, tensor<i64>) -> tensor<8x8xi1>
// CHECK: graph.where %[[TRI]], %{{.*}}, %[[S]]
// CHECK-NOT: graph.add
// CHECK: graph.softmax
func.func @packed_causal(%q: tensor<2x2x8x64xf16>, %k: tensor<2x2x8x64xf16>, %v: tensor<2x2x8x64xf16>) -> tensor<2x2x8x64xf16> {
  %cat = graph.constant dense<[[-1, 0, 1, 2, 3, 4, 5, 6, 7], [-1, 0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<2x9xi64>
  %one = graph.constant dense<[1]> : tensor<1xi64>
  %zero = graph.constant dense<[0]> : tensor<1xi64>
  %last = graph.constant dense<[-1]> : tensor<1xi64>
  %big = graph.constant dense<[9223372036854775807]> : tensor<1xi64>
  %head = graph.slice %cat, %zero, %last axes %one : (tensor<2x9xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8xi64>
  %tail = graph.slice %cat, %one, %big axes %one : (tensor<2x9xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8xi64>
  %diff = graph.sub %tail, %head : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %step = graph.equal %diff, %c1 : (tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi1>
  %jump = graph.not %step : (tensor<2x8xi1>) -> tensor<2x8xi1>
  %jumps = graph.cast %jump {to = i64} : (tensor<2x8xi1>) -> tensor<2x8xi64>
  %ids = graph.cum_sum %jumps {axis = 1 : i64} : (tensor<2x8xi64>) -> tensor<2x8xi64>
  %qi = graph.constant dense<[[[[[0, 0]], [[0, 1]], [[0, 2]], [[0, 3]], [[0, 4]], [[0, 5]], [[0, 6]], [[0, 7]]]], [[[[1, 0]], [[1, 1]], [[1, 2]], [[1, 3]], [[1, 4]], [[1, 5]], [[1, 6]], [[1, 7]]]]]> : tensor<2x1x8x1x2xi64>
  %ki = graph.constant dense<[[[[[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [0, 6], [0, 7]]]], [[[[1, 0], [1, 1], [1, 2], [1, 3], [1, 4], [1, 5], [1, 6], [1, 7]]]]]> : tensor<2x1x1x8x2xi64>
  %qid = graph.gather_nd %ids, %qi : (tensor<2x8xi64>, tensor<2x1x8x1x2xi64>) -> tensor<2x1x8x1xi64>
  %kid = graph.gather_nd %ids, %ki : (tensor<2x8xi64>, tensor<2x1x1x8x2xi64>) -> tensor<2x1x1x8xi64>
  %same = graph.equal %qid, %kid : (tensor<2x1x8x1xi64>, tensor<2x1x1x8xi64>) -> tensor<2x1x8x8xi1>
  %pk = graph.constant dense<[[[[0, 1, 2, 3, 4, 5, 6, 7]]]]> : tensor<1x1x1x8xi64>
  %pq = graph.constant dense<[[[[0], [1], [2], [3], [4], [5], [6], [7]]]]> : tensor<1x1x8x1xi64>
  %seen = graph.less_equal %pk, %pq : (tensor<1x1x1x8xi64>, tensor<1x1x8x1xi64>) -> tensor<1x1x8x8xi1>
  %t = graph.constant dense<true> : tensor<i1>
  %a = graph.and %t, %seen : (tensor<i1>, tensor<1x1x8x8xi1>) -> tensor<1x1x8x8xi1>
  %keep = graph.and %a, %same : (tensor<1x1x8x8xi1>, tensor<2x1x8x8xi1>) -> tensor<2x1x8x8xi1>
  %f0 = graph.constant dense<0.0> : tensor<f16>
  %low = graph.constant dense<-65504.0> : tensor<f16>
  %bias = graph.where %keep, %f0, %low : (tensor<2x1x8x8xi1>, tensor<f16>, tensor<f16>) -> tensor<2x1x8x8xf16>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x8x64xf16>) -> tensor<2x2x64x8xf16>
  %s = graph.matmul %q, %kt : (tensor<2x2x8x64xf16>, tensor<2x2x64x8xf16>) -> tensor<2x2x8x8xf16>
  %b = graph.add %s, %bias : (tensor<2x2x8x8xf16>, tensor<2x1x8x8xf16>) -> tensor<2x2x8x8xf16>
  %p = graph.softmax %b : (tensor<2x2x8x8xf16>) -> tensor<2x2x8x8xf16>
  %o = graph.matmul %p, %v : (tensor<2x2x8x8xf16>, tensor<2x2x8x64xf16>) -> tensor<2x2x8x64xf16>
  return %o : tensor<2x2x8x64xf16>
}

// -----

// Row 1 packs two sequences (positions 0..3 twice): its mask is causal within
// each, not causal, and stays a bias.
// CHECK-LABEL: func.func @two_sequences
// CHECK-NOT: graph.trilu
// CHECK: graph.add
// CHECK: graph.softmax
func.func @two_sequences(%q: tensor<2x2x8x64xf16>, %k: tensor<2x2x8x64xf16>, %v: tensor<2x2x8x64xf16>) -> tensor<2x2x8x64xf16> {
  %cat = graph.constant dense<[[-1, 0, 1, 2, 3, 4, 5, 6, 7], [-1, 0, 1, 2, 3, 0, 1, 2, 3]]> : tensor<2x9xi64>
  %one = graph.constant dense<[1]> : tensor<1xi64>
  %zero = graph.constant dense<[0]> : tensor<1xi64>
  %last = graph.constant dense<[-1]> : tensor<1xi64>
  %big = graph.constant dense<[9223372036854775807]> : tensor<1xi64>
  %head = graph.slice %cat, %zero, %last axes %one : (tensor<2x9xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8xi64>
  %tail = graph.slice %cat, %one, %big axes %one : (tensor<2x9xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8xi64>
  %diff = graph.sub %tail, %head : (tensor<2x8xi64>, tensor<2x8xi64>) -> tensor<2x8xi64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %step = graph.equal %diff, %c1 : (tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi1>
  %jump = graph.not %step : (tensor<2x8xi1>) -> tensor<2x8xi1>
  %jumps = graph.cast %jump {to = i64} : (tensor<2x8xi1>) -> tensor<2x8xi64>
  %ids = graph.cum_sum %jumps {axis = 1 : i64} : (tensor<2x8xi64>) -> tensor<2x8xi64>
  %qi = graph.constant dense<[[[[[0, 0]], [[0, 1]], [[0, 2]], [[0, 3]], [[0, 4]], [[0, 5]], [[0, 6]], [[0, 7]]]], [[[[1, 0]], [[1, 1]], [[1, 2]], [[1, 3]], [[1, 4]], [[1, 5]], [[1, 6]], [[1, 7]]]]]> : tensor<2x1x8x1x2xi64>
  %ki = graph.constant dense<[[[[[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [0, 6], [0, 7]]]], [[[[1, 0], [1, 1], [1, 2], [1, 3], [1, 4], [1, 5], [1, 6], [1, 7]]]]]> : tensor<2x1x1x8x2xi64>
  %qid = graph.gather_nd %ids, %qi : (tensor<2x8xi64>, tensor<2x1x8x1x2xi64>) -> tensor<2x1x8x1xi64>
  %kid = graph.gather_nd %ids, %ki : (tensor<2x8xi64>, tensor<2x1x1x8x2xi64>) -> tensor<2x1x1x8xi64>
  %same = graph.equal %qid, %kid : (tensor<2x1x8x1xi64>, tensor<2x1x1x8xi64>) -> tensor<2x1x8x8xi1>
  %pk = graph.constant dense<[[[[0, 1, 2, 3, 4, 5, 6, 7]]]]> : tensor<1x1x1x8xi64>
  %pq = graph.constant dense<[[[[0], [1], [2], [3], [4], [5], [6], [7]]]]> : tensor<1x1x8x1xi64>
  %seen = graph.less_equal %pk, %pq : (tensor<1x1x1x8xi64>, tensor<1x1x8x1xi64>) -> tensor<1x1x8x8xi1>
  %t = graph.constant dense<true> : tensor<i1>
  %a = graph.and %t, %seen : (tensor<i1>, tensor<1x1x8x8xi1>) -> tensor<1x1x8x8xi1>
  %keep = graph.and %a, %same : (tensor<1x1x8x8xi1>, tensor<2x1x8x8xi1>) -> tensor<2x1x8x8xi1>
  %f0 = graph.constant dense<0.0> : tensor<f16>
  %low = graph.constant dense<-65504.0> : tensor<f16>
  %bias = graph.where %keep, %f0, %low : (tensor<2x1x8x8xi1>, tensor<f16>, tensor<f16>) -> tensor<2x1x8x8xf16>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x8x64xf16>) -> tensor<2x2x64x8xf16>
  %s = graph.matmul %q, %kt : (tensor<2x2x8x64xf16>, tensor<2x2x64x8xf16>) -> tensor<2x2x8x8xf16>
  %b = graph.add %s, %bias : (tensor<2x2x8x8xf16>, tensor<2x1x8x8xf16>) -> tensor<2x2x8x8xf16>
  %p = graph.softmax %b : (tensor<2x2x8x8xf16>) -> tensor<2x2x8x8xf16>
  %o = graph.matmul %p, %v : (tensor<2x2x8x8xf16>, tensor<2x2x8x64xf16>) -> tensor<2x2x8x64xf16>
  return %o : tensor<2x2x8x64xf16>
}

