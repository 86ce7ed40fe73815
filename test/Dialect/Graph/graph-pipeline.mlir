// RUN: strata-opt %s --strata-graph-pipeline | FileCheck %s

// The graph stage folds shape arithmetic, decomposes composite ops, refines
// shapes and removes duplicates.
// CHECK-LABEL: func @stage
// CHECK-SAME: (%[[X:.*]]: tensor<2x6xf32>) -> tensor<3x4xf32>
func.func @stage(%x: tensor<2x6xf32>) -> tensor<*xf32> {
  %a = graph.constant dense<3> : tensor<1xi64>
  %b = graph.constant dense<4> : tensor<1xi64>
  // The shape [3, 4] is computed by a concat of constants: it folds.
  %shape = graph.concat %a, %b {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // CHECK: %[[R:.*]] = graph.reshape %[[X]], %{{.*}} : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  %0 = graph.reshape %x, %shape : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<*xf32>
  // Softsign decomposes into core elementwise ops.
  // CHECK-NOT: graph.softsign
  // CHECK: graph.abs %[[R]]
  %1 = graph.softsign %0 : (tensor<*xf32>) -> tensor<*xf32>
  // Two identical ops become one.
  // CHECK-COUNT-1: graph.exp
  %2 = graph.exp %1 : (tensor<*xf32>) -> tensor<*xf32>
  %3 = graph.exp %1 : (tensor<*xf32>) -> tensor<*xf32>
  %4 = graph.add %2, %3 : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  // CHECK: return %{{.*}} : tensor<3x4xf32>
  return %4 : tensor<*xf32>
}
