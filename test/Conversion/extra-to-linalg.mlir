// RUN: strata-opt --strata-convert-graph-to-linalg %s | FileCheck %s

// The Extra family: optimizer steps are one multi-result generic per
// optimized tensor; a run-time cum_sum axis or reduce_sum axis list selects
// among per-candidate computations with scf.index_switch; the ops it cannot
// lower (dynamic shapes, inference-mode batch norm is NN's) are left alone
// or lowered by their own family.

// Two tensors: two generics, each producing (x', v'); results regrouped as
// (x1', x2', v1', v2').
// CHECK-LABEL: func.func @momentum(
// CHECK: %[[A:.+]]:2 = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: %[[B:.+]]:2 = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
// CHECK: return %[[A]]#0, %[[B]]#0, %[[A]]#1, %[[B]]#1
// CHECK-NOT: graph.momentum
func.func @momentum(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<2xf32>, %x2: tensor<3x4xf32>, %g1: tensor<2xf32>, %g2: tensor<3x4xf32>, %v1: tensor<2xf32>, %v2: tensor<3x4xf32>) -> (tensor<2xf32>, tensor<3x4xf32>, tensor<2xf32>, tensor<3x4xf32>) {
  %0:4 = graph.momentum %r, %t, %x1, %x2, %g1, %g2, %v1, %v2 {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "nesterov", norm_coefficient = 0.0 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3x4xf32>, tensor<2xf32>, tensor<3x4xf32>, tensor<2xf32>, tensor<3x4xf32>) -> (tensor<2xf32>, tensor<3x4xf32>, tensor<2xf32>, tensor<3x4xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<2xf32>, tensor<3x4xf32>, tensor<2xf32>, tensor<3x4xf32>
}

// Adam's bias correction is computed once, outside the generic.
// CHECK-LABEL: func.func @adam(
// CHECK: math.powf
// CHECK: math.powf
// CHECK: linalg.generic
// CHECK-NOT: graph.adam
func.func @adam(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf64>, %g: tensor<2xf64>, %v: tensor<2xf64>, %h: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) {
  %0:3 = graph.adam %r, %t, %x, %g, %v, %h : (tensor<f32>, tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xf64>)
  return %0#0, %0#1, %0#2 : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>
}

// Training mode: two reductions to per-channel statistics, then the output.
// CHECK-LABEL: func.func @batch_norm_training(
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]
// CHECK-NOT: graph.batch_norm
func.func @batch_norm_training(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = graph.batch_norm %x, %s, %b, %m, %v {training_mode = 1 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// Dynamic shapes stay graph ops.
// CHECK-LABEL: func.func @batch_norm_dynamic(
// CHECK: graph.batch_norm
func.func @batch_norm_dynamic(%x: tensor<?x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<?x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = graph.batch_norm %x, %s, %b, %m, %v {training_mode = 1 : i64} : (tensor<?x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// Rank 3: cases 0 and 1, axis 2 as the default.
// CHECK-LABEL: func.func @cum_sum_dynamic(
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK: case 1 {
// CHECK: default {
// CHECK-NOT: graph.cum_sum
func.func @cum_sum_dynamic(%x: tensor<2x3x4xi32>, %axis: tensor<i32>) -> tensor<2x3x4xi32> {
  %0 = graph.cum_sum %x, %axis {reverse = 1 : i64} : (tensor<2x3x4xi32>, tensor<i32>) -> tensor<2x3x4xi32>
  return %0 : tensor<2x3x4xi32>
}

// 3x2x2 -> 3x2 reduces axis 1 (mask 2) or axis 2 (mask 4, the default).
// CHECK-LABEL: func.func @reduce_sum_dynamic(
// CHECK: scf.index_switch
// CHECK: case 2 {
// CHECK: default {
// CHECK-NOT: graph.reduce_sum
func.func @reduce_sum_dynamic(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> tensor<3x2xf32> {
  %0 = graph.reduce_sum %x, %axes {keepdims = 0 : i64} : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
