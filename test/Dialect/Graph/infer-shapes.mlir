// RUN: strata-opt %s -split-input-file -strata-graph-infer-shapes -verify-diagnostics | FileCheck %s

// Unknown result types are refined from the operands, down the chain, and
// the function signature follows the returned values.
// CHECK-LABEL: func @chain
// CHECK-SAME: -> tensor<4x8xf32>
func.func @chain(%x: tensor<4x3xf32>, %w: tensor<3x8xf32>, %b: tensor<8xf32>) -> tensor<*xf32> {
  // CHECK: graph.matmul {{.*}} -> tensor<4x8xf32>
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x8xf32>) -> tensor<*xf32>
  // CHECK: graph.add {{.*}} -> tensor<4x8xf32>
  %1 = graph.add %0, %b : (tensor<*xf32>, tensor<8xf32>) -> tensor<*xf32>
  // CHECK: graph.relu {{.*}} -> tensor<4x8xf32>
  %2 = graph.relu %1 : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: return {{.*}} : tensor<4x8xf32>
  return %2 : tensor<*xf32>
}

// -----

// Symbolic (dynamic) dimensions propagate; static sizes from either side win.
// CHECK-LABEL: func @dynamic_batch
func.func @dynamic_batch(%x: tensor<?x16xf32> {graph.dim_params = ["batch", ""]}) -> tensor<*xf32> {
  // CHECK: graph.reduce_sum {{.*}} -> tensor<?x1xf32>
  %0 = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x16xf32>) -> tensor<*xf32>
  // CHECK: graph.transpose {{.*}} -> tensor<1x?xf32>
  %1 = graph.transpose %0 : (tensor<*xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// A declared static size is kept when the operands leave it dynamic.
// CHECK-LABEL: func @keeps_declared
func.func @keeps_declared(%x: tensor<?x16xf32>) -> tensor<8x16xf32> {
  // CHECK: graph.exp {{.*}} -> tensor<8x16xf32>
  %0 = graph.exp %x : (tensor<?x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Constant shape operands make Reshape's result static.
// CHECK-LABEL: func @reshape_constant
func.func @reshape_constant(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %shape = graph.constant dense<[0, -1]> : tensor<2xi64>
  // CHECK: graph.reshape {{.*}} -> tensor<2x12xf32>
  %0 = graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
