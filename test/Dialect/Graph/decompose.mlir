// RUN: strata-opt %s -split-input-file --strata-graph-decompose --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s
// Every decomposition pattern; all ops created keep the replaced op's
// location.

// CHECK-LABEL: func @reduce_sum_square
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>
func.func @reduce_sum_square(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // CHECK: %[[SQ:.*]] = graph.mul %[[X]], %[[X]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("n")
  // CHECK: graph.reduce_sum %[[SQ]] {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32> loc("n")
  // CHECK-NOT: graph.reduce_sum_square
  %0 = graph.reduce_sum_square %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32> loc("n")
  return %0 : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func @reduce_l1
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>
func.func @reduce_l1(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // CHECK: %[[ABS:.*]] = graph.abs %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("n")
  // CHECK: graph.reduce_sum %[[ABS]] {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<2xf32> loc("n")
  %0 = graph.reduce_l1 %x {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<2xf32> loc("n")
  return %0 : tensor<2xf32>
}

// -----

// Axes computed at run time are passed on.
// CHECK-LABEL: func @reduce_l2_dynamic_axes
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32> {{.*}}, %[[A:[^:]*]]: tensor<1xi64>
func.func @reduce_l2_dynamic_axes(%x: tensor<2x3xf32>, %a: tensor<1xi64>) -> tensor<?x?xf32> {
  // CHECK: %[[SQ:.*]] = graph.mul %[[X]], %[[X]] {{.*}} loc("n")
  // CHECK: %[[SUM:.*]] = graph.reduce_sum %[[SQ]], %[[A]] : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<?x?xf32> loc("n")
  // CHECK: graph.sqrt %[[SUM]] : (tensor<?x?xf32>) -> tensor<?x?xf32> loc("n")
  %0 = graph.reduce_l2 %x, %a : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<?x?xf32> loc("n")
  return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @reduce_log_sum
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>
func.func @reduce_log_sum(%x: tensor<2x3xf32>) -> tensor<1x1xf32> {
  // CHECK: %[[SUM:.*]] = graph.reduce_sum %[[X]] : (tensor<2x3xf32>) -> tensor<1x1xf32> loc("n")
  // CHECK: graph.log %[[SUM]] : (tensor<1x1xf32>) -> tensor<1x1xf32> loc("n")
  %0 = graph.reduce_log_sum %x : (tensor<2x3xf32>) -> tensor<1x1xf32> loc("n")
  return %0 : tensor<1x1xf32>
}

// -----

// log(sum(exp(x - m))) + m with m = max(x) (infinite maxima replaced by 0),
// m computed with keepdims = 1 to shift x and with the op's keepdims to add.
// CHECK-LABEL: func @reduce_log_sum_exp
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>
func.func @reduce_log_sum_exp(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32> loc("n")
  // CHECK: %[[M1:.*]] = graph.reduce_max %[[X]] {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32> loc("n")
  // CHECK: %[[INF1:.*]] = graph.is_inf %[[M1]] : (tensor<2x1xf32>) -> tensor<2x1xi1> loc("n")
  // CHECK: %[[S1:.*]] = graph.where %[[INF1]], %[[ZERO]], %[[M1]] : {{.*}} -> tensor<2x1xf32> loc("n")
  // CHECK: %[[D:.*]] = graph.sub %[[X]], %[[S1]] : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32> loc("n")
  // CHECK: %[[E:.*]] = graph.exp %[[D]] {{.*}} loc("n")
  // CHECK: %[[SUM:.*]] = graph.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<2xf32> loc("n")
  // CHECK: %[[LOG:.*]] = graph.log %[[SUM]] {{.*}} loc("n")
  // CHECK: %[[M2:.*]] = graph.reduce_max %[[X]] {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<2xf32> loc("n")
  // CHECK: %[[INF2:.*]] = graph.is_inf %[[M2]] {{.*}} loc("n")
  // CHECK: %[[S2:.*]] = graph.where %[[INF2]], %[[ZERO]], %[[M2]] {{.*}} loc("n")
  // CHECK: graph.add %[[LOG]], %[[S2]] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("n")
  %0 = graph.reduce_log_sum_exp %x {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x3xf32>) -> tensor<2xf32> loc("n")
  return %0 : tensor<2xf32>
}

// -----

// Integer reductions whose decomposition needs float math stay.
// CHECK-LABEL: func @reduce_int
func.func @reduce_int(%x: tensor<2x3xi32>) -> (tensor<1x1xi32>, tensor<1x1xi32>) {
  // CHECK: graph.reduce_l2
  %0 = graph.reduce_l2 %x : (tensor<2x3xi32>) -> tensor<1x1xi32>
  // CHECK: graph.reduce_log_sum_exp
  %1 = graph.reduce_log_sum_exp %x : (tensor<2x3xi32>) -> tensor<1x1xi32>
  return %0, %1 : tensor<1x1xi32>, tensor<1x1xi32>
}

// -----

// CHECK-LABEL: func @leaky_relu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x?xf32>
func.func @leaky_relu(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  // CHECK-DAG: %[[ALPHA:.*]] = graph.constant dense<1.000000e-01> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32> loc("n")
  // CHECK: %[[POS:.*]] = graph.max %[[X]], %[[ZERO]] : (tensor<2x?xf32>, tensor<f32>) -> tensor<2x?xf32> loc("n")
  // CHECK: %[[NEG:.*]] = graph.min %[[X]], %[[ZERO]] {{.*}} loc("n")
  // CHECK: %[[SCALED:.*]] = graph.mul %[[NEG]], %[[ALPHA]] {{.*}} loc("n")
  // CHECK: graph.add %[[POS]], %[[SCALED]] {{.*}} loc("n")
  %0 = graph.leaky_relu %x {alpha = 0.1 : f32} : (tensor<2x?xf32>) -> tensor<2x?xf32> loc("n")
  return %0 : tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func @elu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<*xf32>
func.func @elu(%x: tensor<*xf32>) -> tensor<*xf32> {
  // CHECK-DAG: %[[ALPHA:.*]] = graph.constant dense<2.000000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32> loc("n")
  // CHECK: %[[POS:.*]] = graph.max %[[X]], %[[ZERO]] : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32> loc("n")
  // CHECK: %[[MIN:.*]] = graph.min %[[X]], %[[ZERO]] {{.*}} loc("n")
  // CHECK: %[[EXP:.*]] = graph.exp %[[MIN]] {{.*}} loc("n")
  // CHECK: %[[EM1:.*]] = graph.sub %[[EXP]], %[[ONE]] {{.*}} loc("n")
  // CHECK: %[[NEG:.*]] = graph.mul %[[EM1]], %[[ALPHA]] {{.*}} loc("n")
  // CHECK: graph.add %[[POS]], %[[NEG]] {{.*}} loc("n")
  %0 = graph.elu %x {alpha = 2.0 : f32} : (tensor<*xf32>) -> tensor<*xf32> loc("n")
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func @selu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @selu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-DAG: %[[GAMMA:.*]] = graph.constant dense<3.000000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ALPHA:.*]] = graph.constant dense<2.000000e+00> : tensor<f32> loc("n")
  // CHECK: %[[POS:.*]] = graph.max %[[X]]
  // CHECK: %[[MIN:.*]] = graph.min %[[X]]
  // CHECK: %[[EXP:.*]] = graph.exp %[[MIN]]
  // CHECK: %[[EM1:.*]] = graph.sub %[[EXP]]
  // CHECK: %[[NEG:.*]] = graph.mul %[[EM1]], %[[ALPHA]]
  // CHECK: %[[SUM:.*]] = graph.add %[[POS]], %[[NEG]]
  // CHECK: graph.mul %[[SUM]], %[[GAMMA]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("n")
  %0 = graph.selu %x {alpha = 2.0 : f32, gamma = 3.0 : f32} : (tensor<4xf32>) -> tensor<4xf32> loc("n")
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @celu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @celu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-DAG: %[[ALPHA:.*]] = graph.constant dense<2.000000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32> loc("n")
  // CHECK: %[[POS:.*]] = graph.max %[[X]], %[[ZERO]]
  // CHECK: %[[DIV:.*]] = graph.div %[[X]], %[[ALPHA]]
  // CHECK: %[[EXP:.*]] = graph.exp %[[DIV]]
  // CHECK: %[[EM1:.*]] = graph.sub %[[EXP]], %[[ONE]]
  // CHECK: %[[MUL:.*]] = graph.mul %[[EM1]], %[[ALPHA]]
  // CHECK: %[[NEG:.*]] = graph.min %[[MUL]], %[[ZERO]]
  // CHECK: graph.add %[[POS]], %[[NEG]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("n")
  %0 = graph.celu %x {alpha = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32> loc("n")
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @hard_sigmoid
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @hard_sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-DAG: %[[ALPHA:.*]] = graph.constant dense<2.500000e-01> : tensor<f32> loc("n")
  // CHECK-DAG: %[[BETA:.*]] = graph.constant dense<7.500000e-01> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32> loc("n")
  // CHECK: %[[MUL:.*]] = graph.mul %[[X]], %[[ALPHA]]
  // CHECK: %[[ADD:.*]] = graph.add %[[MUL]], %[[BETA]]
  // CHECK: %[[MIN:.*]] = graph.min %[[ADD]], %[[ONE]]
  // CHECK: graph.max %[[MIN]], %[[ZERO]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("n")
  %0 = graph.hard_sigmoid %x {alpha = 0.25 : f32, beta = 0.75 : f32} : (tensor<4xf32>) -> tensor<4xf32> loc("n")
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @hard_swish
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @hard_swish(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-DAG: %[[SIXTH:.*]] = graph.constant dense<0.166666672> : tensor<f32> loc("n")
  // CHECK-DAG: %[[HALF:.*]] = graph.constant dense<5.000000e-01> : tensor<f32> loc("n")
  // CHECK: %[[MUL:.*]] = graph.mul %[[X]], %[[SIXTH]]
  // CHECK: %[[ADD:.*]] = graph.add %[[MUL]], %[[HALF]]
  // CHECK: %[[MIN:.*]] = graph.min %[[ADD]]
  // CHECK: %[[GATE:.*]] = graph.max %[[MIN]]
  // CHECK: graph.mul %[[X]], %[[GATE]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("n")
  %0 = graph.hard_swish %x : (tensor<4xf32>) -> tensor<4xf32> loc("n")
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @thresholded_relu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @thresholded_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-DAG: %[[ALPHA:.*]] = graph.constant dense<1.500000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32> loc("n")
  // CHECK: %[[GT:.*]] = graph.greater %[[X]], %[[ALPHA]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1> loc("n")
  // CHECK: graph.where %[[GT]], %[[X]], %[[ZERO]] : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("n")
  %0 = graph.thresholded_relu %x {alpha = 1.5 : f32} : (tensor<4xf32>) -> tensor<4xf32> loc("n")
  return %0 : tensor<4xf32>
}

// -----

// max(x, 0) + log(1 + exp(-|x|)): exp never overflows.
// CHECK-LABEL: func @softplus
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @softplus(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[POS:.*]] = graph.max %[[X]]
  // CHECK: %[[ABS:.*]] = graph.abs %[[X]]
  // CHECK: %[[NEG:.*]] = graph.neg %[[ABS]]
  // CHECK: %[[EXP:.*]] = graph.exp %[[NEG]]
  // CHECK: %[[ADD:.*]] = graph.add %[[EXP]]
  // CHECK: %[[LOG:.*]] = graph.log %[[ADD]]
  // CHECK: graph.add %[[POS]], %[[LOG]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("n")
  %0 = graph.softplus %x : (tensor<4xf32>) -> tensor<4xf32> loc("n")
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @softsign
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @softsign(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[ABS:.*]] = graph.abs %[[X]] {{.*}} loc("n")
  // CHECK: %[[DEN:.*]] = graph.add %[[ABS]], %{{.*}} {{.*}} loc("n")
  // CHECK: graph.div %[[X]], %[[DEN]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("n")
  %0 = graph.softsign %x : (tensor<4xf32>) -> tensor<4xf32> loc("n")
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @shrink
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @shrink(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-DAG: %[[BIAS:.*]] = graph.constant dense<2.500000e-01> : tensor<f32> loc("n")
  // CHECK-DAG: %[[LAMBD:.*]] = graph.constant dense<1.500000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[NLAMBD:.*]] = graph.constant dense<-1.500000e+00> : tensor<f32> loc("n")
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32> loc("n")
  // CHECK: %[[GT:.*]] = graph.greater %[[X]], %[[LAMBD]]
  // CHECK: %[[SUB:.*]] = graph.sub %[[X]], %[[BIAS]]
  // CHECK: %[[INNER:.*]] = graph.where %[[GT]], %[[SUB]], %[[ZERO]]
  // CHECK: %[[LT:.*]] = graph.less %[[X]], %[[NLAMBD]]
  // CHECK: %[[ADD:.*]] = graph.add %[[X]], %[[BIAS]]
  // CHECK: graph.where %[[LT]], %[[ADD]], %[[INNER]] : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("n")
  %0 = graph.shrink %x {bias = 0.25 : f32, lambd = 1.5 : f32} : (tensor<4xf32>) -> tensor<4xf32> loc("n")
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @prelu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xi32> {{.*}}, %[[S:[^:]*]]: tensor<3xi32>
func.func @prelu(%x: tensor<2x3xi32>, %s: tensor<3xi32>) -> tensor<2x3xi32> {
  // CHECK: %[[ZERO:.*]] = graph.constant dense<0> : tensor<i32> loc("n")
  // CHECK: %[[LT:.*]] = graph.less %[[X]], %[[ZERO]] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi1> loc("n")
  // CHECK: %[[MUL:.*]] = graph.mul %[[X]], %[[S]] : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32> loc("n")
  // CHECK: graph.where %[[LT]], %[[MUL]], %[[X]] : (tensor<2x3xi1>, tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32> loc("n")
  %0 = graph.prelu %x, %s : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32> loc("n")
  return %0 : tensor<2x3xi32>
}

// -----

// Ops that later layers map to kernels stay.
// CHECK-LABEL: func @kept
func.func @kept(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: graph.softmax
  %0 = graph.softmax %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.log_softmax
  %1 = graph.log_softmax %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// GELU as examples/make_examples.py writes it: (x * (erf(x * 0.7071..) + 1)) * 0.5.
// CHECK-LABEL: func @gelu_example
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x128xf32>
func.func @gelu_example(%x: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %c = graph.constant dense<0.707106769> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.mul %x, %c : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32> loc("gelu_scale")
  %1 = graph.erf %0 : (tensor<?x128xf32>) -> tensor<?x128xf32> loc("gelu_erf")
  %2 = graph.add %1, %one : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32> loc("gelu_add")
  %3 = graph.mul %x, %2 : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32> loc("gelu_mul")
  %4 = graph.mul %3, %half : (tensor<?x128xf32>, tensor<f32>) -> tensor<?x128xf32> loc("gelu_half")
  // CHECK-NOT: graph.erf
  // CHECK: %[[G:.*]] = graph.gelu %[[X]] : (tensor<?x128xf32>) -> tensor<?x128xf32> loc(fused["gelu_scale", "gelu_erf", "gelu_add", "gelu_mul", "gelu_half"])
  // CHECK-NEXT: return %[[G]]
  return %4 : tensor<?x128xf32>
}

// -----

// PyTorch's export: x * 0.5 * (1 + erf(x / sqrt(2))), constants first.
// CHECK-LABEL: func @gelu_torch
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @gelu_torch(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.div %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.add %one, %1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NOT: graph.erf
  // CHECK: %[[G:.*]] = graph.gelu %[[X]] : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: return %[[G]]
  return %4 : tensor<4xf32>
}

// -----

// The other association: x * (0.5 * (erf(0.7071.. * x) + 1)).
// CHECK-LABEL: func @gelu_right
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>
func.func @gelu_right(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<0.707106769> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.mul %c, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.erf %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %half, %2 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %x, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[G:.*]] = graph.gelu %[[X]]
  // CHECK-NEXT: return %[[G]]
  return %4 : tensor<4xf32>
}

// -----

// Not GELU: the erf argument is another value, or the constant is wrong.
// CHECK-LABEL: func @not_gelu
func.func @not_gelu(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = graph.constant dense<0.707106769> : tensor<f32>
  %c2 = graph.constant dense<0.6> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.mul %y, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = graph.mul %x, %c2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = graph.erf %5 : (tensor<4xf32>) -> tensor<4xf32>
  %7 = graph.add %6, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = graph.mul %x, %7 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = graph.mul %8, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK-NOT: graph.gelu
  // CHECK: return
  return %4, %9 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A ranked x whose product is declared unranked is left alone: graph.gelu's
// operand and result must agree in rankedness.
// CHECK-LABEL: func @not_gelu_rankedness
func.func @not_gelu_rankedness(%x: tensor<4xf32>) -> tensor<*xf32> {
  %c = graph.constant dense<0.707106769> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.mul %x, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<*xf32>
  // CHECK-NOT: graph.gelu
  // CHECK: graph.erf
  return %4 : tensor<*xf32>
}

// -----

// GELU's tanh form as HF's NewGELU (GPT-2, GPT-J, T5 v1.1) writes it and
// torch.onnx exports it: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 *
// pow(x, 3)))).
// CHECK-LABEL: func @gelu_tanh_pow
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x3072xf32>
func.func @gelu_tanh_pow(%x: tensor<8x3072xf32>) -> tensor<8x3072xf32> {
  %half = graph.constant dense<0.5> : tensor<f32>
  %three = graph.constant dense<3.0> : tensor<f32>
  %a = graph.constant dense<0.044715> : tensor<f32>
  %k = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %0 = graph.mul %half, %x : (tensor<f32>, tensor<8x3072xf32>) -> tensor<8x3072xf32> loc("h")
  %1 = graph.pow %x, %three : (tensor<8x3072xf32>, tensor<f32>) -> tensor<8x3072xf32> loc("p")
  %2 = graph.mul %a, %1 : (tensor<f32>, tensor<8x3072xf32>) -> tensor<8x3072xf32> loc("m")
  %3 = graph.add %x, %2 : (tensor<8x3072xf32>, tensor<8x3072xf32>) -> tensor<8x3072xf32> loc("s")
  %4 = graph.mul %k, %3 : (tensor<f32>, tensor<8x3072xf32>) -> tensor<8x3072xf32> loc("k")
  %5 = graph.tanh %4 : (tensor<8x3072xf32>) -> tensor<8x3072xf32> loc("t")
  %6 = graph.add %one, %5 : (tensor<f32>, tensor<8x3072xf32>) -> tensor<8x3072xf32> loc("o")
  %7 = graph.mul %0, %6 : (tensor<8x3072xf32>, tensor<8x3072xf32>) -> tensor<8x3072xf32> loc("r")
  // CHECK-NOT: graph.tanh
  // CHECK: %[[G:.*]] = graph.gelu %[[X]] {approximate = "tanh"} : (tensor<8x3072xf32>) -> tensor<8x3072xf32> loc(fused["h", "p", "m", "s", "k", "t", "o", "r"])
  // CHECK-NEXT: return %[[G]]
  return %7 : tensor<8x3072xf32>
}

// -----

// HF's FastGELU and BLOOM's bloom_gelu_forward, in float16: x * 0.5 * (1 +
// tanh(0.79788456 * x * (1 + 0.044715 * x * x))), the constants rounded to
// float16.
// CHECK-LABEL: func @gelu_tanh_factored_f16
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x64xf16>
func.func @gelu_tanh_factored_f16(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %half = graph.constant dense<0.5> : tensor<f16>
  %a = graph.constant dense<0.044715> : tensor<f16>
  %k = graph.constant dense<0.79788456> : tensor<f16>
  %one = graph.constant dense<1.0> : tensor<f16>
  %0 = graph.mul %x, %half : (tensor<4x64xf16>, tensor<f16>) -> tensor<4x64xf16>
  %1 = graph.mul %x, %k : (tensor<4x64xf16>, tensor<f16>) -> tensor<4x64xf16>
  %2 = graph.mul %a, %x : (tensor<f16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %3 = graph.mul %2, %x : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %4 = graph.add %one, %3 : (tensor<f16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %5 = graph.mul %1, %4 : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %6 = graph.tanh %5 : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %7 = graph.add %6, %one : (tensor<4x64xf16>, tensor<f16>) -> tensor<4x64xf16>
  %8 = graph.mul %0, %7 : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  // CHECK: %[[G:.*]] = graph.gelu %[[X]] {approximate = "tanh"} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  // CHECK-NEXT: return %[[G]]
  return %8 : tensor<4x64xf16>
}

// -----

// The cube as x * x * x (the GPU LM-head cases), the scale divided in: x *
// (0.5 * (1 + tanh((x + x * x * x * 0.044715) / 1.2533141)))
// (1 / sqrt(2/pi) = 1.2533141).
// CHECK-LABEL: func @gelu_tanh_cube_div
// CHECK-SAME: (%[[X:[^:]*]]: tensor<16xf32>
func.func @gelu_tanh_cube_div(%x: tensor<16xf32>) -> tensor<16xf32> {
  %half = graph.constant dense<0.5> : tensor<f32>
  %a = graph.constant dense<0.044715> : tensor<f32>
  %d = graph.constant dense<1.25331414> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %0 = graph.mul %x, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %1 = graph.mul %0, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %2 = graph.mul %1, %a : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %3 = graph.add %x, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %4 = graph.div %3, %d : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %5 = graph.tanh %4 : (tensor<16xf32>) -> tensor<16xf32>
  %6 = graph.add %5, %one : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %7 = graph.mul %half, %6 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %8 = graph.mul %x, %7 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  // CHECK: %[[G:.*]] = graph.gelu %[[X]] {approximate = "tanh"}
  // CHECK-NEXT: return %[[G]]
  return %8 : tensor<16xf32>
}

// -----

// Not GELU: a wrong cubic coefficient (0.05), a square where the cube
// should be, an exponent of 4, and a cube of another value.
// CHECK-LABEL: func @not_gelu_tanh
func.func @not_gelu_tanh(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %half = graph.constant dense<0.5> : tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %three = graph.constant dense<3.0> : tensor<f32>
  %four = graph.constant dense<4.0> : tensor<f32>
  %a = graph.constant dense<0.044715> : tensor<f32>
  %b = graph.constant dense<0.05> : tensor<f32>
  %k = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %hx = graph.mul %half, %x : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %cube = graph.pow %x, %three : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %square = graph.pow %x, %two : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %fourth = graph.pow %x, %four : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %ycube = graph.pow %y, %three : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %m0 = graph.mul %b, %cube : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %s0 = graph.add %x, %m0 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %k0 = graph.mul %k, %s0 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %t0 = graph.tanh %k0 : (tensor<16xf32>) -> tensor<16xf32>
  %o0 = graph.add %one, %t0 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %r0 = graph.mul %hx, %o0 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %m1 = graph.mul %a, %square : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %s1 = graph.add %x, %m1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %k1 = graph.mul %k, %s1 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %t1 = graph.tanh %k1 : (tensor<16xf32>) -> tensor<16xf32>
  %o1 = graph.add %one, %t1 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %r1 = graph.mul %hx, %o1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %m2 = graph.mul %a, %fourth : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %s2 = graph.add %x, %m2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %k2 = graph.mul %k, %s2 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %t2 = graph.tanh %k2 : (tensor<16xf32>) -> tensor<16xf32>
  %o2 = graph.add %one, %t2 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %r2 = graph.mul %hx, %o2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %m3 = graph.mul %a, %ycube : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %s3 = graph.add %x, %m3 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %k3 = graph.mul %k, %s3 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %t3 = graph.tanh %k3 : (tensor<16xf32>) -> tensor<16xf32>
  %o3 = graph.add %one, %t3 : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %r3 = graph.mul %hx, %o3 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  // CHECK-NOT: graph.gelu
  // CHECK: return
  return %r0, %r1, %r2, %r3 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
