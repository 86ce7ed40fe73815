// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @if_yield_count(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.if' op else branch yields 0 values, expected 1}}
  %0 = graph.if %c : tensor<i1> -> tensor<4xf32> {
    graph.yield %x : tensor<4xf32>
  } else {
    graph.yield
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @if_yield_type(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.if' op then branch value #0 has type 'tensor<4xi32>', expected 'tensor<4xf32>'}}
  %0 = graph.if %c : tensor<i1> -> tensor<4xf32> {
    graph.yield %y : tensor<4xi32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @if_condition_shape(%c: tensor<2xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.if' op condition must hold one element, got 'tensor<2xi1>'}}
  %0 = graph.if %c : tensor<2xi1> -> tensor<4xf32> {
    graph.yield %x : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @loop_arguments(%n: tensor<i64>, %init: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.loop' op body takes 2 arguments, expected 3 (iteration, condition, 1 carried)}}
  %0 = graph.loop max %n : tensor<i64> carried(%init : tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>):
    graph.yield %cond, %init : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @loop_yields(%n: tensor<i64>, %init: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.loop' op body yields 1 values, expected 2}}
  %0 = graph.loop max %n : tensor<i64> carried(%init : tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    graph.yield %cond : tensor<i1>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @scan_inputs(%init: tensor<2xf32>, %xs: tensor<3x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'graph.scan' op num_scan_inputs 3 must be in [1, 2]}}
  %0 = graph.scan(%init, %xs) {num_scan_inputs = 3 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<2xf32> {
  ^bb0(%s: tensor<2xf32>, %x: tensor<2xf32>):
    graph.yield %s : tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

func.func @scan_axes(%init: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // expected-error @+1 {{'graph.scan' op scan_input_axes has 2 entries, expected 1}}
  %0:2 = graph.scan(%init, %xs) {num_scan_inputs = 1 : i64, scan_input_axes = array<i64: 0, 1>} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%s: tensor<2xf32>, %x: tensor<2xf32>):
    graph.yield %s, %x : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}
