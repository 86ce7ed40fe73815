// RUN: strata-opt %s -split-input-file | strata-opt -split-input-file | FileCheck %s
// RUN: strata-opt %s -split-input-file --strata-graph-infer-shapes | FileCheck %s --check-prefix=INFER

// CHECK-LABEL: func @optimizers
// INFER-LABEL: func @optimizers
func.func @optimizers(%r: tensor<f32>, %t: tensor<i64>, %x1: tensor<2xf32>, %x2: tensor<3x4xf32>,
                      %g1: tensor<2xf32>, %g2: tensor<3x4xf32>, %v1: tensor<2xf32>, %v2: tensor<3x4xf32>,
                      %h1: tensor<2xf32>, %h2: tensor<3x4xf32>) {
  // CHECK: graph.adagrad %{{.*}} {decay_factor = 1.000000e-01 : f32, epsilon = 1.000000e-07 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %0:2 = graph.adagrad %r, %t, %x1, %g1, %h1 {decay_factor = 0.1 : f32, epsilon = 1.0e-7 : f32}
      : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  // INFER: graph.momentum {{.*}} -> (tensor<2xf32>, tensor<3x4xf32>, tensor<2xf32>, tensor<3x4xf32>)
  // CHECK: graph.momentum %{{.*}} {alpha = 0.949999988 : f32, beta = 1.000000e+00 : f32, mode = "nesterov", norm_coefficient = 0.00999999977 : f32}
  %1:4 = graph.momentum %r, %t, %x1, %x2, %g1, %g2, %v1, %v2
      {alpha = 0.95 : f32, beta = 1.0 : f32, mode = "nesterov", norm_coefficient = 0.01 : f32}
      : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3x4xf32>, tensor<2xf32>, tensor<3x4xf32>, tensor<2xf32>, tensor<3x4xf32>)
      -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  // INFER: graph.adam {{.*}} -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  // CHECK: graph.adam %{{.*}} {alpha = 0.949999988 : f32, norm_coefficient_post = 1.000000e-03 : f32}
  %2:3 = graph.adam %r, %t, %x1, %g1, %v1, %h1 {alpha = 0.95 : f32, norm_coefficient_post = 0.001 : f32}
      : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
      -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

// CHECK-LABEL: func @gradient
// INFER-LABEL: func @gradient
func.func @gradient(%a: tensor<3xf32>, %b: tensor<3xf32>, %z: tensor<3xf32>) -> (tensor<3xf32>, tensor<*xf32>) {
  %c = graph.add %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %d = graph.mul %c, %z : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.gradient of %{{.*}} wrt(%{{.*}}) at(%{{.*}}) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %0 = graph.gradient of %c wrt(%a) at(%a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.gradient of %{{.*}} wrt(%{{.*}}, %{{.*}}) given(%{{.*}}) at(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  // INFER: graph.gradient {{.*}} -> (tensor<3xf32>, tensor<3xf32>)
  %1:2 = graph.gradient of %d wrt(%a, %b) given(%z) at(%a, %b, %z)
      : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
      -> (tensor<*xf32>, tensor<*xf32>)
  return %0, %1#0 : tensor<3xf32>, tensor<*xf32>
}
