// RUN: strata-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the reductions, arg reductions, softmax family, cumsum
// and losses.

func.func @reduce_axes_range(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{axes [2] are out of range or repeated for an input of rank 2}}
  %0 = graph.reduce_sum %x {axes = array<i64: 2>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @reduce_axes_repeated(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{axes [1, -1] are out of range or repeated for an input of rank 2}}
  %0 = graph.reduce_mean %x {axes = array<i64: 1, -1>} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  return
}

// -----

func.func @reduce_keepdims(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{keepdims must be 0 or 1, got 2}}
  %0 = graph.reduce_max %x {keepdims = 2 : i64} : (tensor<3x4xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @reduce_noop_flag(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{noop_with_empty_axes must be 0 or 1, got -1}}
  %0 = graph.reduce_min %x {noop_with_empty_axes = -1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @reduce_both_axes(%x: tensor<3x4xf32>, %a: tensor<1xi64>) {
  // expected-error @+1 {{takes its axes either as the `axes` attribute or as an operand, not both}}
  %0 = graph.reduce_sum %x, %a {axes = array<i64: 0>} : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reduce_axes_rank(%x: tensor<3x4xf32>, %a: tensor<1x1xi64>) {
  // expected-error @+1 {{axes operand must be 1-D, got 'tensor<1x1xi64>'}}
  %0 = graph.reduce_sum %x, %a : (tensor<3x4xf32>, tensor<1x1xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reduce_axes_count(%x: tensor<3x4xf32>, %a: tensor<3xi64>) {
  // expected-error @+1 {{has 3 axes for an input of rank 2}}
  %0 = graph.reduce_sum %x, %a : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reduce_axes_element(%x: tensor<3x4xf32>, %a: tensor<1xi32>) {
  // expected-error @+1 {{operand #1 must be tensor of 64-bit signless integer values, but got 'tensor<1xi32>'}}
  %0 = graph.reduce_sum %x, %a : (tensor<3x4xf32>, tensor<1xi32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reduce_constant_axes_range(%x: tensor<3x4xf32>) {
  %a = graph.constant dense<[5]> : tensor<1xi64>
  // expected-error @+1 {{axes [5] are out of range or repeated for an input of rank 2}}
  %0 = graph.reduce_sum %x, %a : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reduce_result(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{result #0 has type 'tensor<3xf32>', incompatible with the inferred type 'tensor<3x1xf32>'}}
  %0 = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @reduce_dynamic_result(%x: tensor<3x4xf32>, %a: tensor<1xi64>) {
  // expected-error @+1 {{result #0 has type 'tensor<?xf32>', incompatible with the inferred type 'tensor<?x?xf32>'}}
  %0 = graph.reduce_sum %x, %a : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<?xf32>
  return
}

// -----

func.func @arg_max_axis(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{axis 2 is out of range for an input of rank 2}}
  %0 = graph.arg_max %x {axis = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x4xi64>
  return
}

// -----

func.func @arg_min_flag(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{select_last_index must be 0 or 1, got 3}}
  %0 = graph.arg_min %x {select_last_index = 3 : i64} : (tensor<3x4xf32>) -> tensor<1x4xi64>
  return
}

// -----

func.func @arg_max_result(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{result #0 must be tensor of 64-bit signless integer values}}
  %0 = graph.arg_max %x : (tensor<3x4xf32>) -> tensor<1x4xi32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{axis -3 is out of range for an input of rank 2}}
  %0 = graph.softmax %x {axis = -3 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @cum_sum_both(%x: tensor<3x4xf32>, %a: tensor<i64>) {
  // expected-error @+1 {{takes its axis either as the `axis` attribute or as an operand, not both}}
  %0 = graph.cum_sum %x, %a {axis = 0 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  return
}

// -----

func.func @cum_sum_none(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{needs an `axis` attribute or an axis operand}}
  %0 = graph.cum_sum %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @cum_sum_axis_shape(%x: tensor<3x4xf32>, %a: tensor<2xi64>) {
  // expected-error @+1 {{axis operand must be a scalar, got 'tensor<2xi64>'}}
  %0 = graph.cum_sum %x, %a : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  return
}

// -----

func.func @cum_sum_axis_range(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{axis 2 is out of range for an input of rank 2}}
  %0 = graph.cum_sum %x {axis = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @cum_sum_constant_axis_range(%x: tensor<3x4xf32>) {
  %a = graph.constant dense<-3> : tensor<i32>
  // expected-error @+1 {{axis -3 is out of range for an input of rank 2}}
  %0 = graph.cum_sum %x, %a : (tensor<3x4xf32>, tensor<i32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @cum_sum_flag(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{exclusive must be 0 or 1, got 2}}
  %0 = graph.cum_sum %x {axis = 0 : i64, exclusive = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @loss_reduction(%x: tensor<3x5xf32>, %t: tensor<3xi64>) {
  // expected-error @+1 {{reduction must be "none", "sum" or "mean", got "max"}}
  %0 = graph.negative_log_likelihood_loss %x, %t {reduction = "max"} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>
  return
}

// -----

func.func @loss_input_element(%x: tensor<3x5xi32>, %t: tensor<3xi64>) {
  // expected-error @+1 {{input must have a floating-point element type, got 'i32'}}
  %0 = graph.negative_log_likelihood_loss %x, %t : (tensor<3x5xi32>, tensor<3xi64>) -> tensor<i32>
  return
}

// -----

func.func @loss_result_element(%x: tensor<3x5xf32>, %t: tensor<3xi64>) {
  // expected-error @+1 {{result element types must match the scores's}}
  %0:2 = graph.softmax_cross_entropy_loss %x, %t : (tensor<3x5xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf16>)
  return
}

// -----

func.func @loss_input_rank(%x: tensor<5xf32>, %t: tensor<i64>) {
  // expected-error @+1 {{input must have rank >= 2 (N, C, ...), got 'tensor<5xf32>'}}
  %0 = graph.negative_log_likelihood_loss %x, %t : (tensor<5xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @loss_target_rank(%x: tensor<3x5x2xf32>, %t: tensor<3xi64>) {
  // expected-error @+1 {{target rank must be one less than the input's: 'tensor<3xi64>' vs 'tensor<3x5x2xf32>'}}
  %0 = graph.negative_log_likelihood_loss %x, %t : (tensor<3x5x2xf32>, tensor<3xi64>) -> tensor<f32>
  return
}

// -----

func.func @loss_target_dim(%x: tensor<3x5x2xf32>, %t: tensor<3x4xi64>) {
  // expected-error @+1 {{labels dimension 1 is 4, but the scores has 2}}
  %0:2 = graph.softmax_cross_entropy_loss %x, %t : (tensor<3x5x2xf32>, tensor<3x4xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  return
}

// -----

func.func @loss_target_element(%x: tensor<3x5xf32>, %t: tensor<3xf32>) {
  // expected-error @+1 {{operand #1 must be tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = graph.negative_log_likelihood_loss %x, %t : (tensor<3x5xf32>, tensor<3xf32>) -> tensor<f32>
  return
}

// -----

func.func @loss_weight_element(%x: tensor<3x5xf32>, %t: tensor<3xi64>, %w: tensor<5xf64>) {
  // expected-error @+1 {{weight element type 'f64' differs from the input's}}
  %0 = graph.negative_log_likelihood_loss %x, %t weight %w : (tensor<3x5xf32>, tensor<3xi64>, tensor<5xf64>) -> tensor<f32>
  return
}

// -----

func.func @loss_weight_rank(%x: tensor<3x5xf32>, %t: tensor<3xi64>, %w: tensor<5x1xf32>) {
  // expected-error @+1 {{weights must be 1-D, got 'tensor<5x1xf32>'}}
  %0:2 = graph.softmax_cross_entropy_loss %x, %t weights %w : (tensor<3x5xf32>, tensor<3xi64>, tensor<5x1xf32>) -> (tensor<f32>, tensor<3x5xf32>)
  return
}

// -----

func.func @loss_weight_size(%x: tensor<3x5xf32>, %t: tensor<3xi64>, %w: tensor<4xf32>) {
  // expected-error @+1 {{weight has 4 elements for 5 classes}}
  %0 = graph.negative_log_likelihood_loss %x, %t weight %w : (tensor<3x5xf32>, tensor<3xi64>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @loss_result_shape(%x: tensor<3x5xf32>, %t: tensor<3xi64>) {
  // expected-error @+1 {{result #0 has type 'tensor<f32>', incompatible with the inferred type 'tensor<3xf32>'}}
  %0 = graph.negative_log_likelihood_loss %x, %t {reduction = "none"} : (tensor<3x5xf32>, tensor<3xi64>) -> tensor<f32>
  return
}
