// RUN: strata-opt %s -split-input-file | strata-opt -split-input-file | FileCheck %s
// RUN: strata-opt %s -split-input-file --strata-graph-infer-shapes | FileCheck %s --check-prefix=INFER

// Squeeze, Unsqueeze, Split and TopK with their axes, sizes or K computed at
// run time: the operand forms round-trip, and shape inference keeps what is
// known without the values.

// CHECK-LABEL: func @squeeze_dynamic
// CHECK: graph.squeeze %{{.*}}, %{{.*}} : (tensor<3x1x4xf32>, tensor<1xi64>) -> tensor<3x4xf32>
// CHECK: graph.squeeze %{{.*}}, %{{.*}} : (tensor<?x1x4xf32>, tensor<1xi64>) -> tensor<*xf32>
// CHECK: graph.squeeze %{{.*}}, %{{.*}} : (tensor<3x1x4xf32>, tensor<?xi64>) -> tensor<*xf32>
// INFER-LABEL: func @squeeze_dynamic
// The two static dimensions other than 1 are what is left of rank 3 - 1.
// INFER: graph.squeeze {{.*}} -> tensor<3x4xf32>
// INFER: graph.squeeze {{.*}} -> tensor<?x?xf32>
// INFER: graph.squeeze {{.*}} -> tensor<*xf32>
func.func @squeeze_dynamic(%x: tensor<3x1x4xf32>, %y: tensor<?x1x4xf32>, %a: tensor<1xi64>, %n: tensor<?xi64>) -> (tensor<3x4xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = graph.squeeze %x, %a : (tensor<3x1x4xf32>, tensor<1xi64>) -> tensor<3x4xf32>
  %1 = graph.squeeze %y, %a : (tensor<?x1x4xf32>, tensor<1xi64>) -> tensor<*xf32>
  %2 = graph.squeeze %x, %n : (tensor<3x1x4xf32>, tensor<?xi64>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<3x4xf32>, tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func @unsqueeze_dynamic
// CHECK: graph.unsqueeze %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
// CHECK: graph.unsqueeze %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<?xi64>) -> tensor<*xf32>
// INFER-LABEL: func @unsqueeze_dynamic
// INFER: graph.unsqueeze {{.*}} -> tensor<?x?x?x?xf32>
// INFER: graph.unsqueeze {{.*}} -> tensor<*xf32>
func.func @unsqueeze_dynamic(%x: tensor<3x4xf32>, %a: tensor<2xi64>, %n: tensor<?xi64>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = graph.unsqueeze %x, %a : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<*xf32>
  %1 = graph.unsqueeze %x, %n : (tensor<3x4xf32>, tensor<?xi64>) -> tensor<*xf32>
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func @split_dynamic
// CHECK: graph.split %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<3x6xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
// INFER-LABEL: func @split_dynamic
// INFER: graph.split {{.*}} -> (tensor<3x?xf32>, tensor<3x?xf32>)
func.func @split_dynamic(%x: tensor<3x6xf32>, %s: tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>) {
  %0:2 = graph.split %x, %s {axis = 1 : i64} : (tensor<3x6xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  return %0#0, %0#1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func @top_k_dynamic
// CHECK: graph.top_k %{{.*}}, %{{.*}} {largest = 0 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<*xf32>, tensor<*xi64>)
// INFER-LABEL: func @top_k_dynamic
// INFER: graph.top_k {{.*}} -> (tensor<3x?xf32>, tensor<3x?xi64>)
func.func @top_k_dynamic(%x: tensor<3x4xf32>, %k: tensor<1xi64>) -> (tensor<*xf32>, tensor<*xi64>) {
  %v, %i = graph.top_k %x, %k {largest = 0 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<*xf32>, tensor<*xi64>)
  return %v, %i : tensor<*xf32>, tensor<*xi64>
}
