// RUN: strata-opt %s -split-input-file --canonicalize | FileCheck %s
// Constant folding and algebraic identities of the elementwise ops.

// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %0 = graph.add %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %1 = graph.add %zero, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.sub %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %3 = graph.mul %one, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.div %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %5 = graph.pow %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %6 = graph.max %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NOT: graph.
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// No identity when the constant broadcasts the operand to a larger shape,
// when it is not the neutral element, or for 0 - x and 1 / x.
// CHECK-LABEL: func @not_identities
func.func @not_identities(%x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %zeros = graph.constant dense<0.0> : tensor<2x3xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  // CHECK: graph.add
  %0 = graph.add %x, %zeros : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.mul
  %1 = graph.mul %x, %zero : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  // CHECK: graph.sub
  %2 = graph.sub %zero, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.div
  %3 = graph.div %one, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func @fold_unary
func.func @fold_unary() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<2xi1>) {
  %c = graph.constant dense<[-1.5, -0.5, 0.5, 2.5]> : tensor<4xf32>
  %i = graph.constant dense<[-7, 0, 3, 9]> : tensor<4xi32>
  %b = graph.constant dense<[true, false]> : tensor<2xi1>
  // CHECK-DAG: graph.constant dense<[-2.000000e+00, -1.000000e+00, 0.000000e+00, 2.000000e+00]> : tensor<4xf32>
  %0 = graph.floor %c : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-DAG: graph.constant dense<[-1.000000e+00, -0.000000e+00, 1.000000e+00, 3.000000e+00]> : tensor<4xf32>
  %1 = graph.ceil %c : (tensor<4xf32>) -> tensor<4xf32>
  // Round half to even.
  // CHECK-DAG: graph.constant dense<[-2.000000e+00, -0.000000e+00, 0.000000e+00, 2.000000e+00]> : tensor<4xf32>
  %2 = graph.round %c : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-DAG: graph.constant dense<[-1, 0, 1, 1]> : tensor<4xi32>
  %3 = graph.sign %i : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK-DAG: graph.constant dense<[false, true]> : tensor<2xi1>
  %4 = graph.not %b : (tensor<2xi1>) -> tensor<2xi1>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<2xi1>
}

// -----

// fmod = 0: the remainder has the divisor's sign; fmod = 1: the dividend's.
// CHECK-LABEL: func @fold_mod
func.func @fold_mod() -> (tensor<4xi32>, tensor<4xi32>, tensor<2xf32>) {
  %a = graph.constant dense<[-7, 7, -7, 7]> : tensor<4xi32>
  %b = graph.constant dense<[3, 3, -3, -3]> : tensor<4xi32>
  %fa = graph.constant dense<[-7.5, 7.5]> : tensor<2xf32>
  %fb = graph.constant dense<2.0> : tensor<f32>
  // CHECK-DAG: graph.constant dense<[2, 1, -1, -2]> : tensor<4xi32>
  %0 = graph.mod %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK-DAG: graph.constant dense<[-1, 1, -1, 1]> : tensor<4xi32>
  %1 = graph.mod %a, %b {fmod = 1 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK-DAG: graph.constant dense<[-1.500000e+00, 1.500000e+00]> : tensor<2xf32>
  %2 = graph.mod %fa, %fb {fmod = 1 : i64} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<2xf32>
}

// -----

// Division by zero is left for run time.
// CHECK-LABEL: func @no_fold_mod_zero
func.func @no_fold_mod_zero() -> tensor<2xi32> {
  %a = graph.constant dense<[5, 6]> : tensor<2xi32>
  %b = graph.constant dense<[2, 0]> : tensor<2xi32>
  // CHECK: graph.mod
  %0 = graph.mod %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// CHECK-LABEL: func @fold_bit_shift
func.func @fold_bit_shift() -> (tensor<3xui8>, tensor<3xui8>) {
  %a = graph.constant dense<[16, 255, 1]> : tensor<3xui8>
  %s = graph.constant dense<[1, 4, 8]> : tensor<3xui8>
  // CHECK-DAG: graph.constant dense<[32, 240, 0]> : tensor<3xui8>
  %0 = graph.bit_shift %a, %s {direction = "LEFT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  // CHECK-DAG: graph.constant dense<[8, 15, 0]> : tensor<3xui8>
  %1 = graph.bit_shift %a, %s {direction = "RIGHT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  return %0, %1 : tensor<3xui8>, tensor<3xui8>
}

// -----

// CHECK-LABEL: func @fold_logic
func.func @fold_logic(%x: tensor<2xi1>) -> (tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2xi1>, tensor<2xi1>) {
  %a = graph.constant dense<[true, false]> : tensor<2xi1>
  %b = graph.constant dense<[[true], [false]]> : tensor<2x1xi1>
  // CHECK-DAG: graph.constant dense<{{\[\[}}true, false], [false, false]]> : tensor<2x2xi1>
  %0 = graph.and %a, %b : (tensor<2xi1>, tensor<2x1xi1>) -> tensor<2x2xi1>
  // CHECK-DAG: graph.constant dense<{{\[\[}}true, true], [true, false]]> : tensor<2x2xi1>
  %1 = graph.or %a, %b : (tensor<2xi1>, tensor<2x1xi1>) -> tensor<2x2xi1>
  // CHECK-DAG: graph.constant dense<{{\[\[}}false, true], [true, false]]> : tensor<2x2xi1>
  %2 = graph.xor %a, %b : (tensor<2xi1>, tensor<2x1xi1>) -> tensor<2x2xi1>
  %3 = graph.and %x, %x : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %4 = graph.or %x, %x : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %arg0, %arg0
  return %0, %1, %2, %3, %4 : tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2xi1>, tensor<2xi1>
}

// -----

// Comparisons fold with broadcasting to i1.
// CHECK-LABEL: func @fold_compare
func.func @fold_compare() -> (tensor<2x2xi1>, tensor<2x2xi1>) {
  %a = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = graph.constant dense<[[1.0], [3.0]]> : tensor<2x1xf32>
  // CHECK-DAG: graph.constant dense<{{\[\[}}true, false], [true, true]]> : tensor<2x2xi1>
  %0 = graph.less_equal %a, %b : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<2x2xi1>
  // CHECK-DAG: graph.constant dense<{{\[\[}}true, true], [false, false]]> : tensor<2x2xi1>
  %1 = graph.greater_equal %a, %b : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<2x2xi1>
  return %0, %1 : tensor<2x2xi1>, tensor<2x2xi1>
}
