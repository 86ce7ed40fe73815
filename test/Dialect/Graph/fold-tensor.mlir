// RUN: strata-opt %s -split-input-file --canonicalize | FileCheck %s

// The exporters' shape computation folds away once the input shape is
// static: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
// CHECK-LABEL: func @shape_chain
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  // CHECK-NEXT: %[[SHAPE:.*]] = graph.constant dense<[2, 12]> : tensor<2xi64>
  // CHECK-NEXT: %[[R:.*]] = graph.reshape %{{.*}}, %[[SHAPE]]
  // CHECK-NEXT: return %[[R]]
  %s = graph.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %i0 = graph.constant dense<0> : tensor<i64>
  %d0 = graph.gather %s, %i0 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %u0 = graph.unsqueeze %d0 {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %st = graph.constant dense<[1]> : tensor<1xi64>
  %en = graph.constant dense<[3]> : tensor<1xi64>
  %rest = graph.slice %s, %st, %en : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %prod = graph.constant dense<[12]> : tensor<1xi64>
  %shape = graph.concat %u0, %prod {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %r : tensor<2x12xf32>
}

// -----

// A dynamic dimension keeps Shape, but the static slice of it folds.
// CHECK-LABEL: func @shape_partial
func.func @shape_partial(%x: tensor<?x3xf32>) -> (tensor<2xi64>, tensor<1xi64>, tensor<i64>) {
  // CHECK-DAG: %[[ALL:.*]] = graph.shape %{{.*}} : (tensor<?x3xf32>) -> tensor<2xi64>
  // CHECK-DAG: %[[LAST:.*]] = graph.constant dense<3> : tensor<1xi64>
  // CHECK-DAG: %[[SIZE:.*]] = graph.size
  // CHECK: return %[[ALL]], %[[LAST]], %[[SIZE]]
  %0 = graph.shape %x : (tensor<?x3xf32>) -> tensor<2xi64>
  %1 = graph.shape %x {start = -1 : i64} : (tensor<?x3xf32>) -> tensor<1xi64>
  %2 = graph.size %x : (tensor<?x3xf32>) -> tensor<i64>
  return %0, %1, %2 : tensor<2xi64>, tensor<1xi64>, tensor<i64>
}

// -----

// CHECK-LABEL: func @size_static
func.func @size_static(%x: tensor<2x3xf32>) -> tensor<i64> {
  // CHECK: graph.constant dense<6> : tensor<i64>
  %0 = graph.size %x : (tensor<2x3xf32>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// CHECK-LABEL: func @constant_of_shape
func.func @constant_of_shape() -> tensor<2x3xi32> {
  // CHECK: graph.constant dense<7> : tensor<2x3xi32>
  %s = graph.constant dense<[2, 3]> : tensor<2xi64>
  %0 = graph.constant_of_shape %s {value = dense<7> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func @range
func.func @range() -> (tensor<3xi64>, tensor<4xf32>) {
  // CHECK-DAG: graph.constant dense<[10, 7, 4]> : tensor<3xi64>
  // CHECK-DAG: graph.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 1.500000e+00]> : tensor<4xf32>
  %a = graph.constant dense<10> : tensor<i64>
  %b = graph.constant dense<1> : tensor<i64>
  %c = graph.constant dense<-3> : tensor<i64>
  %0 = graph.range %a, %b, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<3xi64>
  %fa = graph.constant dense<0.0> : tensor<f32>
  %fb = graph.constant dense<1.9> : tensor<f32>
  %fc = graph.constant dense<0.5> : tensor<f32>
  %1 = graph.range %fa, %fb, %fc : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return %0, %1 : tensor<3xi64>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @reshapes_of_constants
func.func @reshapes_of_constants(%x: tensor<2x3xf32>) -> (tensor<6xi32>, tensor<3x2xi32>, tensor<1x3x2xi32>, tensor<2x3xf32>) {
  // CHECK-DAG: graph.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  // CHECK-DAG: graph.constant dense<{{\[\[}}1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
  // CHECK-DAG: graph.constant dense<{{\[\[\[}}1, 4], [2, 5], [3, 6]]]> : tensor<1x3x2xi32>
  // CHECK: return {{.*}}, {{.*}}, {{.*}}, %arg0
  %c = graph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %f = graph.flatten %c {axis = 0 : i64} : (tensor<2x3xi32>) -> tensor<1x6xi32>
  %s = graph.squeeze %f : (tensor<1x6xi32>) -> tensor<6xi32>
  %t = graph.transpose %c : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %u = graph.unsqueeze %t {axes = array<i64: 0>} : (tensor<3x2xi32>) -> tensor<1x3x2xi32>
  %id = graph.flatten %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %s, %t, %u, %id : tensor<6xi32>, tensor<3x2xi32>, tensor<1x3x2xi32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @slices
func.func @slices(%x: tensor<4x4xf32>) -> (tensor<2xi64>, tensor<4x4xf32>, tensor<2xi64>) {
  // CHECK-DAG: %[[A:.*]] = graph.constant dense<[40, 20]> : tensor<2xi64>
  // CHECK-DAG: %[[B:.*]] = graph.constant dense<[30, 10]> : tensor<2xi64>
  // CHECK: return %[[A]], %arg0, %[[B]]
  %c = graph.constant dense<[10, 20, 30, 40]> : tensor<4xi64>
  %st = graph.constant dense<[-1]> : tensor<1xi64>
  %en = graph.constant dense<[-9223372036854775807]> : tensor<1xi64>
  %step = graph.constant dense<[-2]> : tensor<1xi64>
  %0 = graph.slice %c, %st, %en steps %step : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %zero = graph.constant dense<[0]> : tensor<1xi64>
  %big = graph.constant dense<[100]> : tensor<1xi64>
  %axis = graph.constant dense<[1]> : tensor<1xi64>
  %1 = graph.slice %x, %zero, %big axes %axis : (tensor<4x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x4xf32>
  %st2 = graph.constant dense<[2]> : tensor<1xi64>
  %2 = graph.slice %c, %st2, %en steps %step : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %0, %1, %2 : tensor<2xi64>, tensor<4x4xf32>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func @split_concat
func.func @split_concat() -> (tensor<1xi64>, tensor<3xi64>, tensor<2x2xi64>) {
  // CHECK-DAG: graph.constant dense<1> : tensor<1xi64>
  // CHECK-DAG: graph.constant dense<[2, 3, 4]> : tensor<3xi64>
  // CHECK-DAG: graph.constant dense<{{\[\[}}1, 2], [9, 9]]> : tensor<2x2xi64>
  %c = graph.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %0:2 = graph.split %c {split = array<i64: 1, 3>} : (tensor<4xi64>) -> (tensor<1xi64>, tensor<3xi64>)
  %a = graph.constant dense<[[1, 2]]> : tensor<1x2xi64>
  %b = graph.constant dense<9> : tensor<1x2xi64>
  %1 = graph.concat %a, %b {axis = 0 : i64} : (tensor<1x2xi64>, tensor<1x2xi64>) -> tensor<2x2xi64>
  return %0#0, %0#1, %1 : tensor<1xi64>, tensor<3xi64>, tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func @gather_expand
func.func @gather_expand(%x: tensor<3xf32>) -> (tensor<2x2xi64>, tensor<2x3xf32>, tensor<3xf32>) {
  // CHECK-DAG: graph.constant dense<{{\[\[}}30, 10], [20, 30]]> : tensor<2x2xi64>
  // CHECK-DAG: graph.constant dense<1.500000e+00> : tensor<2x3xf32>
  // CHECK: return {{.*}}, {{.*}}, %arg0
  %c = graph.constant dense<[10, 20, 30]> : tensor<3xi64>
  %i = graph.constant dense<[[-1, 0], [1, 2]]> : tensor<2x2xi64>
  %0 = graph.gather %c, %i : (tensor<3xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  %splat = graph.constant dense<1.5> : tensor<1xf32>
  %shape = graph.constant dense<[2, 3]> : tensor<2xi64>
  %1 = graph.expand %splat, %shape : (tensor<1xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %ones = graph.constant dense<[1]> : tensor<1xi64>
  %2 = graph.expand %x, %ones : (tensor<3xf32>, tensor<1xi64>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<2x2xi64>, tensor<2x3xf32>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func @windows
func.func @windows() -> (tensor<4xf32>, tensor<3xf32>, tensor<3xf64>) {
  // CHECK-DAG: graph.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 5.000000e-01]> : tensor<4xf32>
  // CHECK-DAG: graph.constant dense<[0.0869565{{[0-9]*}}, 1.000000e+00, 0.0869565{{[0-9]*}}]> : tensor<3xf32>
  // CHECK-DAG: graph.constant dense<[{{.*}}E-17, 0.99999999999999988, {{.*}}E-17]> : tensor<3xf64>
  %n4 = graph.constant dense<4> : tensor<i64>
  %n3 = graph.constant dense<3> : tensor<i64>
  %0 = graph.hann_window %n4 : (tensor<i64>) -> tensor<4xf32>
  %1 = graph.hamming_window %n3 {periodic = 0 : i64} : (tensor<i64>) -> tensor<3xf32>
  %2 = graph.blackman_window %n3 {periodic = 0 : i64} : (tensor<i64>) -> tensor<3xf64>
  return %0, %1, %2 : tensor<4xf32>, tensor<3xf32>, tensor<3xf64>
}

// -----

// Outside training, Dropout is the identity with an all-true mask.
// CHECK-LABEL: func @dropout_inference
func.func @dropout_inference(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi1>) {
  // CHECK-NOT: graph.dropout
  // CHECK: %[[MASK:.*]] = graph.constant dense<true> : tensor<2xi1>
  // CHECK: return %arg0, %[[MASK]]
  %r = graph.constant dense<0.5> : tensor<f32>
  %0:2 = graph.dropout %x ratio %r : (tensor<2xf32>, tensor<f32>) -> (tensor<2xf32>, tensor<2xi1>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi1>
}

// -----

// CHECK-LABEL: func @dropout_training
func.func @dropout_training(%x: tensor<2xf32>, %t: tensor<i1>) -> tensor<2xf32> {
  // CHECK: graph.dropout
  %0:2 = graph.dropout %x training_mode %t : (tensor<2xf32>, tensor<i1>) -> (tensor<2xf32>, tensor<2xi1>)
  return %0#0 : tensor<2xf32>
}

// -----

// Random ops are neither merged nor erased when unused.
// CHECK-LABEL: func @random_not_pure
func.func @random_not_pure(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // CHECK-COUNT-2: graph.random_normal
  // CHECK: graph.random_uniform_like
  // CHECK: graph.bernoulli
  %0 = graph.random_normal {shape = array<i64: 2>} : () -> tensor<2xf32>
  %1 = graph.random_normal {shape = array<i64: 2>} : () -> tensor<2xf32>
  %2 = graph.random_uniform_like %x : (tensor<2xf32>) -> tensor<2xf32>
  %3 = graph.bernoulli %x : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Constant axes, sizes and K operands move into the attributes, the
// canonical form; the result types are unchanged.
// CHECK-LABEL: func @constant_operands_to_attrs
func.func @constant_operands_to_attrs(%x: tensor<?x1x6xf32>) -> (tensor<?x6xf32>, tensor<?x1x1x6xf32>, tensor<?x1x?xf32>, tensor<?x1x?xf32>, tensor<?x1x?xf32>, tensor<?x1x?xi64>) {
  // CHECK: graph.squeeze %{{.*}} {axes = array<i64: 1>} : (tensor<?x1x6xf32>) -> tensor<?x6xf32>
  // CHECK: graph.unsqueeze %{{.*}} {axes = array<i64: 2>} : (tensor<?x1x6xf32>) -> tensor<?x1x1x6xf32>
  // CHECK: graph.split %{{.*}} {axis = 2 : i64, split = array<i64: 2, 4>} : (tensor<?x1x6xf32>) -> (tensor<?x1x?xf32>, tensor<?x1x?xf32>)
  // CHECK: graph.top_k %{{.*}} {k = 3 : i64} : (tensor<?x1x6xf32>) -> (tensor<?x1x?xf32>, tensor<?x1x?xi64>)
  %a = graph.constant dense<[1]> : tensor<1xi64>
  %u = graph.constant dense<[2]> : tensor<1xi64>
  %s = graph.constant dense<[2, 4]> : tensor<2xi64>
  %k = graph.constant dense<[3]> : tensor<1xi64>
  %0 = graph.squeeze %x, %a : (tensor<?x1x6xf32>, tensor<1xi64>) -> tensor<?x6xf32>
  %1 = graph.unsqueeze %x, %u : (tensor<?x1x6xf32>, tensor<1xi64>) -> tensor<?x1x1x6xf32>
  %2:2 = graph.split %x, %s {axis = 2 : i64} : (tensor<?x1x6xf32>, tensor<2xi64>) -> (tensor<?x1x?xf32>, tensor<?x1x?xf32>)
  %v, %i = graph.top_k %x, %k : (tensor<?x1x6xf32>, tensor<1xi64>) -> (tensor<?x1x?xf32>, tensor<?x1x?xi64>)
  return %0, %1, %2#0, %2#1, %v, %i : tensor<?x6xf32>, tensor<?x1x1x6xf32>, tensor<?x1x?xf32>, tensor<?x1x?xf32>, tensor<?x1x?xf32>, tensor<?x1x?xi64>
}

// -----

// Operands computed at run time stay.
// CHECK-LABEL: func @dynamic_operands_stay
func.func @dynamic_operands_stay(%x: tensor<?x1x6xf32>, %a: tensor<1xi64>, %k: tensor<1xi64>) -> (tensor<*xf32>, tensor<?x1x?xf32>, tensor<?x1x?xi64>) {
  // CHECK: graph.squeeze %{{.*}}, %{{.*}} : (tensor<?x1x6xf32>, tensor<1xi64>)
  // CHECK: graph.top_k %{{.*}}, %{{.*}} : (tensor<?x1x6xf32>, tensor<1xi64>)
  %0 = graph.squeeze %x, %a : (tensor<?x1x6xf32>, tensor<1xi64>) -> tensor<*xf32>
  %v, %i = graph.top_k %x, %k : (tensor<?x1x6xf32>, tensor<1xi64>) -> (tensor<?x1x?xf32>, tensor<?x1x?xi64>)
  return %0, %v, %i : tensor<*xf32>, tensor<?x1x?xf32>, tensor<?x1x?xi64>
}

// -----

// A Pad of zeros is its data (torch exports one before some pools); any
// other pad stays.
// CHECK-LABEL: func @zero_pad
// CHECK-NEXT: graph.constant dense<[0, 0, 1, 0, 0, 0, 0, 0]>
// CHECK-NEXT: %[[P:.+]] = graph.pad %arg0
// CHECK-NEXT: return %arg0, %[[P]]
func.func @zero_pad(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x4x3xf32>) {
  %zeros = graph.constant dense<0> : tensor<8xi64>
  %same = graph.pad %x, %zeros : (tensor<1x2x3x3xf32>, tensor<8xi64>) -> tensor<1x2x3x3xf32>
  %one = graph.constant dense<[0, 0, 1, 0, 0, 0, 0, 0]> : tensor<8xi64>
  %grown = graph.pad %x, %one : (tensor<1x2x3x3xf32>, tensor<8xi64>) -> tensor<1x2x4x3xf32>
  return %same, %grown : tensor<1x2x3x3xf32>, tensor<1x2x4x3xf32>
}

// -----

// A constant broadcast by numpy's rules, and a small scatter into a constant
// (Swin's shifted-window mask writes region numbers so): both fold.
// CHECK-LABEL: func @expand_scatter
func.func @expand_scatter() -> (tensor<2x3xi64>, tensor<3x2xf32>, tensor<3x2xf32>) {
  // CHECK-DAG: graph.constant dense<{{\[\[}}0, 1, 2], [0, 1, 2]]> : tensor<2x3xi64>
  // CHECK-DAG: graph.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00], [5.000000e+00, 6.000000e+00], [1.000000e+00, 2.000000e+00]]> : tensor<3x2xf32>
  // CHECK-NOT: graph.scatter_nd
  // CHECK: graph.scatter_nd %{{.*}} {reduction = "add"}
  %r = graph.constant dense<[0, 1, 2]> : tensor<3xi64>
  %shape = graph.constant dense<[2, 3]> : tensor<2xi64>
  %0 = graph.expand %r, %shape : (tensor<3xi64>, tensor<2xi64>) -> tensor<2x3xi64>
  %zeros = graph.constant dense<0.0> : tensor<3x2xf32>
  %idx = graph.constant dense<[[2], [-2]]> : tensor<2x1xi64>
  %upd = graph.constant dense<[[1.0, 2.0], [5.0, 6.0]]> : tensor<2x2xf32>
  %1 = graph.scatter_nd %zeros, %idx, %upd : (tensor<3x2xf32>, tensor<2x1xi64>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %2 = graph.scatter_nd %zeros, %idx, %upd {reduction = "add"} : (tensor<3x2xf32>, tensor<2x1xi64>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %0, %1, %2 : tensor<2x3xi64>, tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// Compress with a constant condition is a gather of the selected slices;
// without an axis, of the flattened input.
// CHECK-LABEL: func @compress_constant_condition
// CHECK-NOT: graph.compress
// CHECK-DAG: %[[J:.*]] = graph.constant dense<[1, 5]> : tensor<2xi64>
// CHECK-DAG: %[[S:.*]] = graph.constant dense<6> : tensor<1xi64>
// CHECK-DAG: %[[I:.*]] = graph.constant dense<[0, 2]> : tensor<2xi64>
// CHECK: %[[G:.*]] = graph.gather %arg0, %[[I]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
// CHECK: %[[F:.*]] = graph.reshape %arg0, %[[S]] : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
// CHECK: %[[H:.*]] = graph.gather %[[F]], %[[J]] : (tensor<6xf32>, tensor<2xi64>) -> tensor<2xf32>
// CHECK: return %[[G]], %[[H]]
func.func @compress_constant_condition(%x: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  %c = graph.constant dense<[true, false, true]> : tensor<3xi1>
  %0 = graph.compress %x, %c {axis = -1 : i64} : (tensor<2x3xf32>, tensor<3xi1>) -> tensor<2x2xf32>
  %d = graph.constant dense<[false, true, false, false, false, true]> : tensor<6xi1>
  %1 = graph.compress %x, %d : (tensor<2x3xf32>, tensor<6xi1>) -> tensor<2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2xf32>
}

// -----

// A slice of a slice is one slice of the first's data: Swin's patch merging
// (every second row, then every second column) reads x once, strided; the
// composition holds for negative steps (a reversal, then a prefix of it:
// rows 7, 5, 3 of x, down to an end before index 0 written as INT64_MIN).
// CHECK-LABEL: func @slice_of_slice
// CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1> : tensor<2xi64>
// CHECK-DAG: %[[EIGHT:.*]] = graph.constant dense<8> : tensor<2xi64>
// CHECK-DAG: %[[AXES:.*]] = graph.constant dense<[1, 2]> : tensor<2xi64>
// CHECK-DAG: %[[TWO:.*]] = graph.constant dense<2> : tensor<2xi64>
// CHECK-DAG: %[[RSTART:.*]] = graph.constant dense<[7, 0]> : tensor<2xi64>
// CHECK-DAG: %[[REND:.*]] = graph.constant dense<[2, 7]> : tensor<2xi64>
// CHECK-DAG: %[[RSTEP:.*]] = graph.constant dense<[-2, 2]> : tensor<2xi64>
// CHECK: %[[A:.*]] = graph.slice %arg0, %[[ONE]], %[[EIGHT]] axes %[[AXES]] steps %[[TWO]] : {{.*}} -> tensor<2x4x4x4xf32>
// CHECK: %[[B:.*]] = graph.slice %arg0, %[[RSTART]], %[[REND]] axes %[[AXES]] steps %[[RSTEP]] : {{.*}} -> tensor<2x3x4x4xf32>
// CHECK: return %[[A]], %[[B]]
func.func @slice_of_slice(%x: tensor<2x8x8x4xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>) {
  %s = graph.constant dense<[1]> : tensor<1xi64>
  %e = graph.constant dense<[1000]> : tensor<1xi64>
  %a1 = graph.constant dense<[1]> : tensor<1xi64>
  %a2 = graph.constant dense<[2]> : tensor<1xi64>
  %st = graph.constant dense<[2]> : tensor<1xi64>
  %m1 = graph.constant dense<[-1]> : tensor<1xi64>
  %z = graph.constant dense<[0]> : tensor<1xi64>
  %big = graph.constant dense<[-1000]> : tensor<1xi64>
  %0 = graph.slice %x, %s, %e axes %a1 steps %st : (tensor<2x8x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x8x4xf32>
  %1 = graph.slice %0, %s, %e axes %a2 steps %st : (tensor<2x4x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x4x4xf32>
  %2 = graph.slice %0, %m1, %big axes %a1 steps %m1 : (tensor<2x4x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x4x8x4xf32>
  %3 = graph.slice %2, %z, %m1 axes %a1 : (tensor<2x4x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3x8x4xf32>
  %4 = graph.slice %3, %z, %e axes %a2 steps %st : (tensor<2x3x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3x4x4xf32>
  return %1, %4 : tensor<2x4x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// Down to index 0 with a negative step: the end is INT64_MIN, not -1
// (which ONNX would read as the last index).
// CHECK-LABEL: func @slice_reversed_to_zero
// CHECK: %[[END:.*]] = graph.constant dense<-9223372036854775808> : tensor<1xi64>
// CHECK: graph.slice %arg0, %{{.*}}, %[[END]]
// CHECK-SAME: -> tensor<3xf32>
func.func @slice_reversed_to_zero(%x: tensor<6xf32>) -> tensor<3xf32> {
  %s = graph.constant dense<[4]> : tensor<1xi64>
  %e = graph.constant dense<[-1000]> : tensor<1xi64>
  %m1 = graph.constant dense<[-1]> : tensor<1xi64>
  %z = graph.constant dense<[0]> : tensor<1xi64>
  %two = graph.constant dense<[2]> : tensor<1xi64>
  %five = graph.constant dense<[5]> : tensor<1xi64>
  %0 = graph.slice %x, %s, %e axes %z steps %m1 : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xf32>
  %2 = graph.slice %0, %z, %five axes %z steps %two : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}

// -----

// Gather of a Shape folds where the dimensions it picks are static, even
// though others are not (MultiScaleRoIAlign's `x.shape[1] == 1` on [?, 1]).
// CHECK-LABEL: func @gather_static_dims_of_shape
// CHECK-NOT: graph.gather
// CHECK: %[[C:.*]] = graph.constant dense<1> : tensor<1xi64>
// CHECK: return %[[C]]
func.func @gather_static_dims_of_shape(%x: tensor<?x1xf32>) -> tensor<1xi64> {
  %s = graph.shape %x : (tensor<?x1xf32>) -> tensor<2xi64>
  %i = graph.constant dense<[1]> : tensor<1xi64>
  %d = graph.gather %s, %i : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %d : tensor<1xi64>
}

// The dynamic dimension stays a gather.
// CHECK-LABEL: func @gather_dynamic_dim_of_shape
// CHECK: graph.gather
func.func @gather_dynamic_dim_of_shape(%x: tensor<?x1xf32>) -> tensor<1xi64> {
  %s = graph.shape %x : (tensor<?x1xf32>) -> tensor<2xi64>
  %i = graph.constant dense<[0]> : tensor<1xi64>
  %d = graph.gather %s, %i : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %d : tensor<1xi64>
}

// -----

// GatherNDs of constants fold: whole tuples, a tuple's prefix (slices), a
// batch dimension and a negative index.
// CHECK-LABEL: func @fold_gather_nd
// CHECK-NOT: graph.gather_nd
// CHECK-DAG: graph.constant dense<[0, 3]> : tensor<2xi64>
// CHECK-DAG: graph.constant dense<{{\[}}[2, 3], [0, 1]]> : tensor<2x2xi64>
// CHECK-DAG: graph.constant dense<[1, 2]> : tensor<2xi64>
func.func @fold_gather_nd() -> (tensor<2xi64>, tensor<2x2xi64>, tensor<2xi64>) {
  %d = graph.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>
  %whole = graph.constant dense<[[0, 0], [1, -1]]> : tensor<2x2xi64>
  %0 = graph.gather_nd %d, %whole : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2xi64>
  %rows = graph.constant dense<[[1], [0]]> : tensor<2x1xi64>
  %1 = graph.gather_nd %d, %rows : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<2x2xi64>
  %2 = graph.gather_nd %d, %rows {batch_dims = 1 : i64} : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<2xi64>
  return %0, %1, %2 : tensor<2xi64>, tensor<2x2xi64>, tensor<2xi64>
}
