// RUN: strata-opt %s -split-input-file | strata-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func @select_branch
func.func @select_branch(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: graph.if %{{.*}} : tensor<i1> -> tensor<4xf32> {
  // CHECK: graph.yield %{{.*}} : tensor<4xf32>
  // CHECK: } else {
  %0 = graph.if %c : tensor<i1> -> tensor<4xf32> {
    %1 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %1 : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @counted_loop
func.func @counted_loop(%n: tensor<i64>, %init: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  // CHECK: graph.loop max %{{.*}} : tensor<i64> carried(%{{.*}} : tensor<2xf32>) -> tensor<2xf32>, tensor<?x2xf32> {
  // CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<i1>, %{{.*}}: tensor<2xf32>):
  %0:2 = graph.loop max %n : tensor<i64> carried(%init : tensor<2xf32>) -> tensor<2xf32>, tensor<?x2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %1 = graph.add %acc, %acc : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %cond, %1, %1 : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<?x2xf32>
}

// -----

// CHECK-LABEL: func @running_sum
func.func @running_sum(%init: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // CHECK: graph.scan(%{{.*}}, %{{.*}}) {num_scan_inputs = 1 : i64}
  %0:2 = graph.scan(%init, %xs) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%s: tensor<2xf32>, %x: tensor<2xf32>):
    %1 = graph.add %s, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %1, %1 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}
