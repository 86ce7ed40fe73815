// RUN: strata-opt %s -split-input-file --strata-specialize-input-values='values="n:3;s:7;k:2;other:5"' | FileCheck %s
//
// strata-specialize-input-values (Specialize.cpp): a value whose shape the
// graph stage could not make static, or control flow that stayed, may
// depend on the value of a small input. Given values for those inputs
// become constants, the argument records the value the module then
// requires (strata.required_value), and the graph stage runs again. Only
// the inputs where the unknown starts are taken: a scale applied to a
// Range's result stays a run-time input.

// CHECK-LABEL: func.func @range_limit
// CHECK-SAME: (%arg0: tensor<i64> {graph.name = "n", strata.required_value = dense<3> : tensor<i64>}, %arg1: tensor<f32> {graph.name = "s"}) -> tensor<3xf32>
// CHECK: graph.mul %{{.*}}, %arg1 : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
func.func @range_limit(%n: tensor<i64> {graph.name = "n"}, %s: tensor<f32> {graph.name = "s"}) -> tensor<?xf32> {
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %r = graph.range %zero, %n, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %f = graph.cast %r : (tensor<?xi64>) -> tensor<?xf32>
  %y = graph.mul %f, %s : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// A Loop whose trip count is an input: specialized, then unrolled.
// CHECK-LABEL: func.func @trip_count
// CHECK-SAME: strata.required_value = dense<2> : tensor<i64>
// CHECK-NOT: graph.loop
// CHECK: return {{.*}} : tensor<2xf32>
func.func @trip_count(%k: tensor<i64> {graph.name = "k"}, %init: tensor<2xf32> {graph.name = "init"}) -> tensor<2xf32> {
  %true = graph.constant dense<true> : tensor<i1>
  %0 = graph.loop max %k : tensor<i64> while %true : tensor<i1> carried(%init : tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %a = graph.add %acc, %acc : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %cond, %a : tensor<i1>, tensor<2xf32>
  }
  return %0 : tensor<2xf32>
}

// -----

// Nothing needs a value: every input stays a run-time input, even those
// given.
// CHECK-LABEL: func.func @static
// CHECK-NOT: strata.required_value
func.func @static(%other: tensor<i64> {graph.name = "other"}) -> tensor<i64> {
  %y = graph.add %other, %other : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %y : tensor<i64>
}
