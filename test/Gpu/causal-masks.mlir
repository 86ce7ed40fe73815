// strata-causal-masks (CausalMasks.cpp): an attention block's additive
// causal mask computed from constants becomes the causal Where the flash
// kernel reads as a causal mask. The rewrite's values are checked on the CPU
// in attention.test; here, its IR and what it leaves alone.
// RUN: strata-opt %s -split-input-file --strata-causal-masks | FileCheck %s

// Positions compared (torch's dynamo export): keys j <= i kept with 0, the
// others get float16's lowest. The add becomes Where(Trilu(k = 1), -inf, S)
// and the mask's computation goes.
// CHECK-LABEL: func.func @causal
// CHECK-NOT: graph.less_equal
// CHECK: %[[S:.*]] = graph.matmul
// CHECK: %[[ALL:.*]] = graph.constant dense<true> : tensor<64x64xi1>
// CHECK: %[[K:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK: %[[TRI:.*]] = graph.trilu %[[ALL]] k %[[K]] : (tensor<64x64xi1>, tensor<i64>) -> tensor<64x64xi1>
// CHECK: %[[INF:.*]] = graph.constant dense<0xFC00> : tensor<f16>
// CHECK: graph.where %[[TRI]], %[[INF]], %[[S]]
// CHECK-NOT: graph.add
// CHECK: graph.softmax
func.func @causal(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %pk = graph.constant dense<[[[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]]]]> : tensor<1x1x1x64xi64>
  %s4 = graph.constant dense<[1, 1, 64, 1]> : tensor<4xi64>
  %pq = graph.reshape %pk, %s4 : (tensor<1x1x1x64xi64>, tensor<4xi64>) -> tensor<1x1x64x1xi64>
  %seen = graph.less_equal %pk, %pq : (tensor<1x1x1x64xi64>, tensor<1x1x64x1xi64>) -> tensor<1x1x64x64xi1>
  %t = graph.constant dense<true> : tensor<i1>
  %keep = graph.and %t, %seen : (tensor<i1>, tensor<1x1x64x64xi1>) -> tensor<1x1x64x64xi1>
  %zero = graph.constant dense<0.0> : tensor<f16>
  %low = graph.constant dense<-65504.0> : tensor<f16>
  %bias = graph.where %keep, %zero, %low : (tensor<1x1x64x64xi1>, tensor<f16>, tensor<f16>) -> tensor<1x1x64x64xf16>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %s = graph.matmul %q, %kt : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %b = graph.add %s, %bias : (tensor<1x2x64x64xf16>, tensor<1x1x64x64xf16>) -> tensor<1x2x64x64xf16>
  %p = graph.softmax %b : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %o = graph.matmul %p, %v : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

// The mask keeps keys j >= i (not causal): a bias as before.
// CHECK-LABEL: func.func @anticausal
// CHECK-NOT: graph.trilu
// CHECK: graph.greater_equal
// CHECK: graph.add
func.func @anticausal(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %pk = graph.constant dense<[[[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]]]]> : tensor<1x1x1x64xi64>
  %s4 = graph.constant dense<[1, 1, 64, 1]> : tensor<4xi64>
  %pq = graph.reshape %pk, %s4 : (tensor<1x1x1x64xi64>, tensor<4xi64>) -> tensor<1x1x64x1xi64>
  %keep = graph.greater_equal %pk, %pq : (tensor<1x1x1x64xi64>, tensor<1x1x64x1xi64>) -> tensor<1x1x64x64xi1>
  %zero = graph.constant dense<0.0> : tensor<f16>
  %low = graph.constant dense<-65504.0> : tensor<f16>
  %bias = graph.where %keep, %zero, %low : (tensor<1x1x64x64xi1>, tensor<f16>, tensor<f16>) -> tensor<1x1x64x64xf16>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %s = graph.matmul %q, %kt : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %b = graph.add %s, %bias : (tensor<1x2x64x64xf16>, tensor<1x1x64x64xf16>) -> tensor<1x2x64x64xf16>
  %p = graph.softmax %b : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %o = graph.matmul %p, %v : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

// A fill that a score could outweigh (-100) does not mask: a bias as before.
// CHECK-LABEL: func.func @weak_fill
// CHECK-NOT: graph.trilu
// CHECK: graph.add
func.func @weak_fill(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %pk = graph.constant dense<[[[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]]]]> : tensor<1x1x1x64xi64>
  %s4 = graph.constant dense<[1, 1, 64, 1]> : tensor<4xi64>
  %pq = graph.reshape %pk, %s4 : (tensor<1x1x1x64xi64>, tensor<4xi64>) -> tensor<1x1x64x1xi64>
  %keep = graph.less_equal %pk, %pq : (tensor<1x1x1x64xi64>, tensor<1x1x64x1xi64>) -> tensor<1x1x64x64xi1>
  %zero = graph.constant dense<0.0> : tensor<f16>
  %low = graph.constant dense<-100.0> : tensor<f16>
  %bias = graph.where %keep, %zero, %low : (tensor<1x1x64x64xi1>, tensor<f16>, tensor<f16>) -> tensor<1x1x64x64xf16>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %s = graph.matmul %q, %kt : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %b = graph.add %s, %bias : (tensor<1x2x64x64xf16>, tensor<1x1x64x64xf16>) -> tensor<1x2x64x64xf16>
  %p = graph.softmax %b : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %o = graph.matmul %p, %v : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

// The mask comes from an input (a padding mask): not a constant, a bias.
// CHECK-LABEL: func.func @input_mask
// CHECK-NOT: graph.trilu
// CHECK: graph.add
func.func @input_mask(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>, %keep: tensor<1x1x64x64xi1>) -> tensor<1x2x64x64xf16> {
  %zero = graph.constant dense<0.0> : tensor<f16>
  %low = graph.constant dense<-65504.0> : tensor<f16>
  %bias = graph.where %keep, %zero, %low : (tensor<1x1x64x64xi1>, tensor<f16>, tensor<f16>) -> tensor<1x1x64x64xf16>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %s = graph.matmul %q, %kt : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %b = graph.add %s, %bias : (tensor<1x2x64x64xf16>, tensor<1x1x64x64xf16>) -> tensor<1x2x64x64xf16>
  %p = graph.softmax %b : (tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  %o = graph.matmul %p, %v : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}
