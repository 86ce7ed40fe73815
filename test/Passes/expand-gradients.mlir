// RUN: strata-opt %s -split-input-file -verify-diagnostics --strata-expand-gradients | FileCheck %s
//
// An op without a derivative rule named by its ONNX node, as imported (a
// NameLoc with no file position, which -verify-diagnostics cannot place):
// the IR is in the ONNX-IR comment lines below, the message checked on
// stderr.
// RUN: sed -n 's|^// ONNX-IR: ||p' %s | not strata-opt --strata-expand-gradients 2>&1 | FileCheck %s --check-prefix=NAMED
//
// strata-expand-gradients (Gradients.cpp): each graph.gradient (ONNX's
// Gradient, dy/dxs at a point) becomes the graph ops that compute it by
// reverse-mode differentiation: the forward ops from xs to y cloned at the
// evaluation point, y's adjoint ones, each op adding its operands'
// adjoints back to xs (reduced over broadcast dimensions), zeros for an x
// that y does not depend on. This checks the rule of each op, broadcasting,
// accumulation over two uses, the evaluation point, and the errors.

// NAMED: error: loc("e"): Gradient: no derivative rule for 'graph.exp' (ONNX node 'e'); strata differentiates add, sub, mul, div, neg and identity
// ONNX-IR: func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
// ONNX-IR:   %y = graph.exp %a : (tensor<3xf32>) -> tensor<3xf32> loc("e")
// ONNX-IR:   %g = graph.gradient of %y wrt(%a) at(%a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> loc("grad")
// ONNX-IR:   return %g : tensor<3xf32> loc("out")
// ONNX-IR: } loc("graph")

// y = (a + b) * c with respect to a and c: dy/da = 1 * c, dy/dc = 1 * (a + b),
// the sum being the forward clone's.
// CHECK-LABEL: func.func @add_mul
// CHECK-NOT: graph.gradient
// CHECK: %[[S:.*]] = graph.add %arg0, %arg1
// CHECK: graph.mul %[[S]], %arg2
// CHECK: %[[S2:.*]] = graph.add %arg0, %arg1
// CHECK: graph.mul %[[S2]], %arg2
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK: %[[DA:.*]] = graph.mul %[[ONE]], %arg2
// CHECK: %[[DC:.*]] = graph.mul %[[ONE]], %[[S2]]
// CHECK: return %[[DA]], %[[DC]]
// CHECK-NOT: graph.gradient
func.func @add_mul(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %s = graph.add %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = graph.mul %s, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %g:2 = graph.gradient of %y wrt(%a, %c) at(%a, %c) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %g#0, %g#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// y = a - b with b broadcast over a's rows: dy/db = -1 summed over the
// rows (keepdims) and reshaped to b's shape.
// CHECK-LABEL: func.func @sub_broadcast
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK: %[[NEG:.*]] = graph.neg %[[ONE]]
// CHECK: %[[SUM:.*]] = graph.reduce_sum %[[NEG]] {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[SHAPE:.*]] = graph.constant dense<3> : tensor<1xi64>
// CHECK: %[[DB:.*]] = graph.reshape %[[SUM]], %[[SHAPE]] : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<3xf32>
// CHECK: return %[[DB]]
func.func @sub_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %y = graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %g = graph.gradient of %y wrt(%b) at(%b) : (tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

// y = a / d evaluated where a takes the value %p: dy/da = 1 / d,
// dy/dd = -(1 * p) / (d * d); the forward clone reads p.
// CHECK-LABEL: func.func @div_at_point
// CHECK: graph.div %arg0, %arg1
// CHECK: graph.div %arg2, %arg1
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK: %[[DA:.*]] = graph.div %[[ONE]], %arg1
// CHECK-DAG: %[[DD2:.*]] = graph.mul %arg1, %arg1
// CHECK-DAG: %[[GP:.*]] = graph.mul %[[ONE]], %arg2
// CHECK: %[[Q:.*]] = graph.div %[[GP]], %[[DD2]]
// CHECK: %[[DD:.*]] = graph.neg %[[Q]]
// CHECK: return %[[DA]], %[[DD]]
func.func @div_at_point(%a: tensor<3xf32>, %d: tensor<3xf32>, %p: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %y = graph.div %a, %d : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %g:2 = graph.gradient of %y wrt(%a, %d) at(%p, %d) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %g#0, %g#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// y = -(i * i), i an identity of a: i's two uses add their adjoints,
// which the identity passes to a.
// CHECK-LABEL: func.func @square
// CHECK: graph.identity %arg0
// CHECK: %[[I:.*]] = graph.identity %arg0
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK: %[[N:.*]] = graph.neg %[[ONE]]
// CHECK: %[[L:.*]] = graph.mul %[[N]], %[[I]]
// CHECK: %[[R:.*]] = graph.mul %[[N]], %[[I]]
// CHECK: %[[DA:.*]] = graph.add %[[L]], %[[R]]
// CHECK: return %[[DA]]
func.func @square(%a: tensor<3xf32>) -> tensor<3xf32> {
  %i = graph.identity %a : (tensor<3xf32>) -> tensor<3xf32>
  %sq = graph.mul %i, %i : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = graph.neg %sq : (tensor<3xf32>) -> tensor<3xf32>
  %g = graph.gradient of %y wrt(%a) at(%a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

// y does not depend on b: its gradient is zeros of b's shape.
// CHECK-LABEL: func.func @independent
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: return %[[Z]]
func.func @independent(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.neg %a : (tensor<3xf32>) -> tensor<3xf32>
  %g = graph.gradient of %y wrt(%b) at(%b) : (tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %g : tensor<2xf32>
}

// -----

// An op on the path without a derivative rule.
func.func @no_rule(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{Gradient: no derivative rule for 'graph.exp'; strata differentiates add, sub, mul, div, neg and identity}}
  %y = graph.exp %a : (tensor<3xf32>) -> tensor<3xf32>
  %g = graph.gradient of %y wrt(%a) at(%a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  %y = graph.neg %a : (tensor<?xf32>) -> tensor<?xf32>
  // expected-error @+1 {{Gradient needs static shapes, got 'tensor<?xf32>'}}
  %g = graph.gradient of %y wrt(%a) at(%a) : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %g : tensor<?xf32>
}
