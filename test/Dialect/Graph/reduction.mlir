// RUN: strata-opt %s -split-input-file | strata-opt | FileCheck %s
// Round trip of the reductions (attribute and operand axes), arg reductions,
// the softmax family, cumsum and the losses.

// CHECK-LABEL: func @reduce_attr
func.func @reduce_attr(%x: tensor<3x4x5xf32>) {
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 1>} : (tensor<3x4x5xf32>) -> tensor<3x1x5xf32>
  %0 = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<3x4x5xf32>) -> tensor<3x1x5xf32>
  // CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: -1, 0>, keepdims = 0 : i64} : (tensor<3x4x5xf32>) -> tensor<4xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: -1, 0>, keepdims = 0 : i64} : (tensor<3x4x5xf32>) -> tensor<4xf32>
  // CHECK: graph.reduce_max %{{.*}} : (tensor<3x4x5xf32>) -> tensor<1x1x1xf32>
  %2 = graph.reduce_max %x : (tensor<3x4x5xf32>) -> tensor<1x1x1xf32>
  // CHECK: graph.reduce_min %{{.*}} {keepdims = 0 : i64} : (tensor<3x4x5xf32>) -> tensor<f32>
  %3 = graph.reduce_min %x {keepdims = 0 : i64} : (tensor<3x4x5xf32>) -> tensor<f32>
  // CHECK: graph.reduce_prod %{{.*}} {axes = array<i64>, noop_with_empty_axes = 1 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %4 = graph.reduce_prod %x {axes = array<i64>, noop_with_empty_axes = 1 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  // CHECK: graph.reduce_l1
  %5 = graph.reduce_l1 %x {axes = array<i64: 2>} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>
  // CHECK: graph.reduce_l2
  %6 = graph.reduce_l2 %x {axes = array<i64: 2>} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>
  // CHECK: graph.reduce_log_sum
  %7 = graph.reduce_log_sum %x {axes = array<i64: 2>} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>
  // CHECK: graph.reduce_log_sum_exp
  %8 = graph.reduce_log_sum_exp %x {axes = array<i64: 2>} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>
  // CHECK: graph.reduce_sum_square
  %9 = graph.reduce_sum_square %x {axes = array<i64: 2>} : (tensor<3x4x5xf32>) -> tensor<3x4x1xf32>
  return
}

// -----

// Axes computed at run time: with keepdims the rank is kept (dimensions of
// size 1 stay 1); without, the rank follows from the number of axes.
// CHECK-LABEL: func @reduce_dynamic_axes
func.func @reduce_dynamic_axes(%x: tensor<3x1x5xf32>, %a: tensor<2xi64>, %b: tensor<?xi64>) {
  // CHECK: graph.reduce_sum %{{.*}}, %{{.*}} : (tensor<3x1x5xf32>, tensor<2xi64>) -> tensor<?x1x?xf32>
  %0 = graph.reduce_sum %x, %a : (tensor<3x1x5xf32>, tensor<2xi64>) -> tensor<?x1x?xf32>
  // CHECK: graph.reduce_sum %{{.*}}, %{{.*}} {keepdims = 0 : i64} : (tensor<3x1x5xf32>, tensor<2xi64>) -> tensor<?xf32>
  %1 = graph.reduce_sum %x, %a {keepdims = 0 : i64} : (tensor<3x1x5xf32>, tensor<2xi64>) -> tensor<?xf32>
  // CHECK: graph.reduce_max %{{.*}}, %{{.*}} {keepdims = 0 : i64} : (tensor<3x1x5xf32>, tensor<?xi64>) -> tensor<*xf32>
  %2 = graph.reduce_max %x, %b {keepdims = 0 : i64} : (tensor<3x1x5xf32>, tensor<?xi64>) -> tensor<*xf32>
  // CHECK: graph.reduce_mean %{{.*}}, %{{.*}} {noop_with_empty_axes = 1 : i64} : (tensor<3x1x5xf32>, tensor<?xi64>) -> tensor<?x1x?xf32>
  %3 = graph.reduce_mean %x, %b {noop_with_empty_axes = 1 : i64} : (tensor<3x1x5xf32>, tensor<?xi64>) -> tensor<?x1x?xf32>
  return
}

// -----

// CHECK-LABEL: func @arg_reduce
func.func @arg_reduce(%x: tensor<3x4xf32>) {
  // CHECK: graph.arg_max %{{.*}} {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x1xi64>
  %0 = graph.arg_max %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x1xi64>
  // CHECK: graph.arg_min %{{.*}} {axis = -1 : i64, keepdims = 0 : i64, select_last_index = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi64>
  %1 = graph.arg_min %x {axis = -1 : i64, keepdims = 0 : i64, select_last_index = 1 : i64} : (tensor<3x4xf32>) -> tensor<3xi64>
  return
}

// -----

// CHECK-LABEL: func @softmax_family
func.func @softmax_family(%x: tensor<3x4xf32>) {
  // CHECK: graph.softmax %{{.*}} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %0 = graph.softmax %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK: graph.log_softmax %{{.*}} {axis = 0 : i64}
  %1 = graph.log_softmax %x {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK: graph.hardmax %{{.*}} {axis = 1 : i64}
  %2 = graph.hardmax %x {axis = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

// CHECK-LABEL: func @cum_sum
func.func @cum_sum(%x: tensor<3x4xf32>, %axis: tensor<i32>) {
  // CHECK: graph.cum_sum %{{.*}} {axis = 1 : i64, exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %0 = graph.cum_sum %x {axis = 1 : i64, exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK: graph.cum_sum %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<i32>) -> tensor<3x4xf32>
  %1 = graph.cum_sum %x, %axis : (tensor<3x4xf32>, tensor<i32>) -> tensor<3x4xf32>
  return
}

// -----

// CHECK-LABEL: func @losses
func.func @losses(%x: tensor<3x5x2xf32>, %t: tensor<3x2xi64>, %w: tensor<5xf32>) {
  // CHECK: graph.negative_log_likelihood_loss %{{.*}}, %{{.*}} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<f32>
  %0 = graph.negative_log_likelihood_loss %x, %t : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<f32>
  // CHECK: graph.negative_log_likelihood_loss %{{.*}}, %{{.*}} weight %{{.*}} {ignore_index = -1 : i64, reduction = "none"} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> tensor<3x2xf32>
  %1 = graph.negative_log_likelihood_loss %x, %t weight %w {ignore_index = -1 : i64, reduction = "none"} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> tensor<3x2xf32>
  // CHECK: graph.softmax_cross_entropy_loss %{{.*}}, %{{.*}} {reduction = "sum"} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  %2:2 = graph.softmax_cross_entropy_loss %x, %t {reduction = "sum"} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  // CHECK: graph.softmax_cross_entropy_loss %{{.*}}, %{{.*}} weights %{{.*}} {reduction = "none"} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> (tensor<3x2xf32>, tensor<3x5x2xf32>)
  %3:2 = graph.softmax_cross_entropy_loss %x, %t weights %w {reduction = "none"} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> (tensor<3x2xf32>, tensor<3x5x2xf32>)
  return
}
