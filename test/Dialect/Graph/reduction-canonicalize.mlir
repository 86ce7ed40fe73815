// RUN: strata-opt %s -split-input-file --canonicalize | FileCheck %s
// Constant axes operands become the canonical attribute form.

// CHECK-LABEL: func @reduce_constant_axes
func.func @reduce_constant_axes(%x: tensor<3x4x5xf32>) -> tensor<?x?x?xf32> {
  %axes = graph.constant dense<[0, -1]> : tensor<2xi64>
  // CHECK-NOT: graph.constant
  // CHECK: graph.reduce_sum %{{[^,]*}} {axes = array<i64: 0, -1>} : (tensor<3x4x5xf32>) -> tensor<?x?x?xf32>
  %0 = graph.reduce_sum %x, %axes : (tensor<3x4x5xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// An empty constant keeps its meaning: all axes, or none with
// noop_with_empty_axes.
// CHECK-LABEL: func @reduce_empty_axes
func.func @reduce_empty_axes(%x: tensor<3x4xf32>) -> (tensor<1x1xf32>, tensor<3x4xf32>) {
  %axes = graph.constant dense<> : tensor<0xi64>
  // CHECK: graph.reduce_max %{{[^,]*}} {axes = array<i64>} : (tensor<3x4xf32>) -> tensor<1x1xf32>
  %0 = graph.reduce_max %x, %axes : (tensor<3x4xf32>, tensor<0xi64>) -> tensor<1x1xf32>
  // CHECK: graph.reduce_max %{{[^,]*}} {axes = array<i64>, noop_with_empty_axes = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = graph.reduce_max %x, %axes {noop_with_empty_axes = 1 : i64} : (tensor<3x4xf32>, tensor<0xi64>) -> tensor<3x4xf32>
  return %0, %1 : tensor<1x1xf32>, tensor<3x4xf32>
}

// -----

// Computed axes stay an operand.
// CHECK-LABEL: func @reduce_computed_axes
func.func @reduce_computed_axes(%x: tensor<3x4xf32>, %axes: tensor<1xi64>) -> tensor<?x?xf32> {
  // CHECK: graph.reduce_sum %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %0 = graph.reduce_sum %x, %axes : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @cum_sum_constant_axis
func.func @cum_sum_constant_axis(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %axis = graph.constant dense<-1> : tensor<i32>
  // CHECK: graph.cum_sum %{{[^,]*}} {axis = -1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %0 = graph.cum_sum %x, %axis {reverse = 1 : i64} : (tensor<3x4xf32>, tensor<i32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Reductions of small constants fold: torchvision's detection transform
// takes the max of its image sizes, in float, to size its padding.
// CHECK-LABEL: func @fold_constant_reductions
// CHECK-DAG: %[[MAX:.*]] = graph.constant dense<3.200000e+02> : tensor<f32>
// CHECK-DAG: %[[SUM:.*]] = graph.constant dense<[5, 7, 9]> : tensor<3xi64>
// CHECK-DAG: %[[MEAN:.*]] = graph.constant dense<{{\[\[}}2.000000e+00], [5.000000e+00]]> : tensor<2x1xf32>
// CHECK-DAG: %[[MIN:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK-DAG: %[[PROD:.*]] = graph.constant dense<{{\[\[}}4, 10, 18]]> : tensor<1x3xi64>
// CHECK-NOT: graph.reduce
// CHECK: return %[[MAX]], %[[SUM]], %[[MEAN]], %[[MIN]], %[[PROD]]
func.func @fold_constant_reductions() -> (tensor<f32>, tensor<3xi64>, tensor<2x1xf32>, tensor<i64>, tensor<1x3xi64>) {
  %sizes = graph.constant dense<[3.0e+02, 3.2e+02]> : tensor<2xf32>
  %m = graph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %f = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = graph.reduce_max %sizes {keepdims = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
  %1 = graph.reduce_sum %m {axes = array<i64: 0>, keepdims = 0 : i64} : (tensor<2x3xi64>) -> tensor<3xi64>
  %2 = graph.reduce_mean %f {axes = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %3 = graph.reduce_min %m {keepdims = 0 : i64} : (tensor<2x3xi64>) -> tensor<i64>
  %4 = graph.reduce_prod %m {axes = array<i64: 0>} : (tensor<2x3xi64>) -> tensor<1x3xi64>
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<3xi64>, tensor<2x1xf32>, tensor<i64>, tensor<1x3xi64>
}

// -----

// A reduction over a value that is not constant stays.
// CHECK-LABEL: func @reduction_of_input
// CHECK: graph.reduce_max
func.func @reduction_of_input(%x: tensor<2xf32>) -> tensor<f32> {
  %0 = graph.reduce_max %x {keepdims = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CumSums of constants fold (transformers' packed-sequence ids are a CumSum
// of the positions' steps): along the axis, exclusive and reversed too.
// CHECK-LABEL: func @fold_constant_cum_sums
// CHECK-NOT: graph.cum_sum
// CHECK-DAG: graph.constant dense<{{\[}}[1, 3, 6], [4, 9, 15]]> : tensor<2x3xi64>
// CHECK-DAG: graph.constant dense<{{\[}}[4.000000e+00, 5.000000e+00, 6.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<2x3xf32>
func.func @fold_constant_cum_sums() -> (tensor<2x3xi64>, tensor<2x3xf32>) {
  %i = graph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = graph.cum_sum %i {axis = 1 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  %f = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %1 = graph.cum_sum %f {axis = -2 : i64, exclusive = 1 : i64, reverse = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xi64>, tensor<2x3xf32>
}

// -----

// A mean or max over every spatial axis of an image batch is the global
// pool (torch's dynamo exporter writes adaptive_avg_pool2d(x, 1) as
// ReduceMean over [2, 3]); without keepdims the pool is viewed as [N, C].
// Other axes, ranks and integer elements stay reductions.
// CHECK-LABEL: func @reduce_as_global_pool
// CHECK: %[[MEAN:.*]] = graph.global_average_pool %arg0 : (tensor<2x8x7x7xf32>) -> tensor<2x8x1x1xf32>
// CHECK: %[[MAX:.*]] = graph.global_max_pool %arg1 : (tensor<?x8x3x4x5xbf16>) -> tensor<?x8x1x1x1xbf16>
// CHECK: %[[FLAT:.*]] = graph.reshape %[[MAX]], %{{.*}} : (tensor<?x8x1x1x1xbf16>, tensor<2xi64>) -> tensor<?x8xbf16>
// CHECK: graph.reduce_mean %arg0 {axes = array<i64: 1, 2, 3>}
// CHECK: graph.reduce_mean %arg2 {axes = array<i64: 2>}
// CHECK: graph.reduce_max %arg3 {axes = array<i64: 2, 3>}
// CHECK: return %[[MEAN]], %[[FLAT]]
func.func @reduce_as_global_pool(%x: tensor<2x8x7x7xf32>, %v: tensor<?x8x3x4x5xbf16>, %s: tensor<2x8x7xf32>, %i: tensor<2x8x7x7xi32>) -> (tensor<2x8x1x1xf32>, tensor<?x8xbf16>, tensor<2x1x1x1xf32>, tensor<2x8x1xf32>, tensor<2x8x1x1xi32>) {
  %axes = graph.constant dense<[3, 2]> : tensor<2xi64>
  %0 = graph.reduce_mean %x, %axes : (tensor<2x8x7x7xf32>, tensor<2xi64>) -> tensor<2x8x1x1xf32>
  %1 = graph.reduce_max %v {axes = array<i64: -1, 2, 3>, keepdims = 0 : i64} : (tensor<?x8x3x4x5xbf16>) -> tensor<?x8xbf16>
  %2 = graph.reduce_mean %x {axes = array<i64: 1, 2, 3>} : (tensor<2x8x7x7xf32>) -> tensor<2x1x1x1xf32>
  %3 = graph.reduce_mean %s {axes = array<i64: 2>} : (tensor<2x8x7xf32>) -> tensor<2x8x1xf32>
  %4 = graph.reduce_max %i {axes = array<i64: 2, 3>} : (tensor<2x8x7x7xi32>) -> tensor<2x8x1x1xi32>
  return %0, %1, %2, %3, %4 : tensor<2x8x1x1xf32>, tensor<?x8xbf16>, tensor<2x1x1x1xf32>, tensor<2x8x1xf32>, tensor<2x8x1x1xi32>
}
