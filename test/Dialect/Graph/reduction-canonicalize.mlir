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
