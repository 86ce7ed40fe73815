// RUN: strata-opt %s -split-input-file | strata-opt | FileCheck %s
// Round trip of the elementwise ops: unary math, activations with their
// ONNX attributes, broadcasting arithmetic, comparisons, logic, where, clip.

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<2x3xf32>, %b: tensor<4xi1>, %u: tensor<4xui8>) {
  // CHECK: graph.floor %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = graph.floor %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.ceil
  %1 = graph.ceil %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.round
  %2 = graph.round %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.sign
  %3 = graph.sign %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.sin
  %4 = graph.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.cos
  %5 = graph.cos %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.tan
  %6 = graph.tan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.asin
  %7 = graph.asin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.acos
  %8 = graph.acos %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.atan
  %9 = graph.atan %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.sinh
  %10 = graph.sinh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.cosh
  %11 = graph.cosh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.asinh
  %12 = graph.asinh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.acosh
  %13 = graph.acosh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.atanh
  %14 = graph.atanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.softplus
  %15 = graph.softplus %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.softsign
  %16 = graph.softsign %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.hard_swish
  %17 = graph.hard_swish %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.not %{{.*}} : (tensor<4xi1>) -> tensor<4xi1>
  %18 = graph.not %b : (tensor<4xi1>) -> tensor<4xi1>
  // CHECK: graph.bitwise_not %{{.*}} : (tensor<4xui8>) -> tensor<4xui8>
  %19 = graph.bitwise_not %u : (tensor<4xui8>) -> tensor<4xui8>
  // CHECK: graph.is_nan %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %20 = graph.is_nan %x : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.is_inf %{{.*}} {detect_negative = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %21 = graph.is_inf %x {detect_negative = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.cast %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %22 = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return
}

// -----

// CHECK-LABEL: func @activations
func.func @activations(%x: tensor<?x3xf32>) {
  // CHECK: graph.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %0 = graph.leaky_relu %x {alpha = 0.1 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: graph.elu %{{.*}} {alpha = 2.000000e+00 : f32}
  %1 = graph.elu %x {alpha = 2.0 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: graph.selu %{{.*}} {alpha = 2.000000e+00 : f32, gamma = 3.000000e+00 : f32}
  %2 = graph.selu %x {alpha = 2.0 : f32, gamma = 3.0 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: graph.celu %{{.*}} :
  %3 = graph.celu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: graph.hard_sigmoid %{{.*}} {alpha = 5.000000e-01 : f32, beta = 6.000000e-01 : f32}
  %4 = graph.hard_sigmoid %x {alpha = 0.5 : f32, beta = 0.6 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: graph.thresholded_relu %{{.*}} {alpha = 2.000000e+00 : f32}
  %5 = graph.thresholded_relu %x {alpha = 2.0 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: graph.shrink %{{.*}} {bias = 1.500000e+00 : f32, lambd = 1.500000e+00 : f32}
  %6 = graph.shrink %x {bias = 1.5 : f32, lambd = 1.5 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: graph.gelu %{{.*}} {approximate = "tanh"}
  %7 = graph.gelu %x {approximate = "tanh"} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

// CHECK-LABEL: func @binary
func.func @binary(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %u: tensor<3xui16>,
                  %f: tensor<2x3xf32>, %s: tensor<3xf32>) {
  // CHECK: graph.mod %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %0 = graph.mod %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK: graph.mod %{{.*}}, %{{.*}} {fmod = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.mod %f, %s {fmod = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.bit_shift %{{.*}}, %{{.*}} {direction = "RIGHT"} : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  %2 = graph.bit_shift %u, %u {direction = "RIGHT"} : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  // CHECK: graph.prelu %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = graph.prelu %f, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.pow %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<2x3xf32>
  %4 = graph.pow %f, %b : (tensor<2x3xf32>, tensor<3xi32>) -> tensor<2x3xf32>
  return
}

// -----

// Comparisons broadcast; their result is i1.
// CHECK-LABEL: func @compare
func.func @compare(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<?x1xf32>) {
  // CHECK: graph.equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %0 = graph.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.less %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %1 = graph.less %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.greater %{{.*}}, %{{.*}} : (tensor<?x1xf32>, tensor<3xf32>) -> tensor<?x3xi1>
  %2 = graph.greater %c, %b : (tensor<?x1xf32>, tensor<3xf32>) -> tensor<?x3xi1>
  // CHECK: graph.less_equal
  %3 = graph.less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: graph.greater_equal
  %4 = graph.greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return
}

// -----

// CHECK-LABEL: func @logic
func.func @logic(%a: tensor<2x3xi1>, %b: tensor<3xi1>) {
  // CHECK: graph.and %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %0 = graph.and %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: graph.or
  %1 = graph.or %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: graph.xor
  %2 = graph.xor %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  return
}

// -----

// CHECK-LABEL: func @where_clip
func.func @where_clip(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<f32>,
                      %i: tensor<4xi8>, %lo: tensor<i8>) {
  // CHECK: graph.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %0 = graph.where %c, %x, %y : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK: graph.clip %{{.*}} min %{{.*}} : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
  %1 = graph.clip %i min %lo : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
  // CHECK: graph.clip %{{.*}} max %{{.*}} : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
  %2 = graph.clip %i max %lo : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
  // CHECK: graph.clip %{{.*}} min %{{.*}} max %{{.*}} : (tensor<3xf32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  %3 = graph.clip %x min %y max %y : (tensor<3xf32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  // CHECK: graph.clip %{{.*}} : (tensor<3xf32>) -> tensor<3xf32>
  %4 = graph.clip %x : (tensor<3xf32>) -> tensor<3xf32>
  return
}
