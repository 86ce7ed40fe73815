// RUN: strata-opt %s -split-input-file --strata-gather-slices | FileCheck %s
//
// strata-gather-slices (GatherSlices.cpp, GPU targets): a concat whose
// operands are all slices (step 1, constant bounds) of one tensor along the
// concat's axis becomes one graph.gather of that tensor with the
// concatenated indices (torch.roll, reversals); the slices go when nothing
// else reads them. Concats of slices of two tensors, or of slices along
// another axis, stay.

// torch.roll by 2 along axis 1: x[:, 3:5] ++ x[:, 0:3] is x gathered at
// [3, 4, 0, 1, 2].
// CHECK-LABEL: func.func @roll
// CHECK-NOT: graph.slice
// CHECK-NOT: graph.concat
// CHECK: %[[I:.*]] = graph.constant dense<[3, 4, 0, 1, 2]> : tensor<5xi64>
// CHECK: %[[G:.*]] = graph.gather %arg0, %[[I]] {axis = 1 : i64} : (tensor<2x5xf32>, tensor<5xi64>) -> tensor<2x5xf32>
// CHECK-NOT: graph.slice
// CHECK-NOT: graph.concat
// CHECK: return %[[G]]
func.func @roll(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %s3 = graph.constant dense<3> : tensor<1xi64>
  %e5 = graph.constant dense<5> : tensor<1xi64>
  %s0 = graph.constant dense<0> : tensor<1xi64>
  %ax = graph.constant dense<1> : tensor<1xi64>
  %a = graph.slice %x, %s3, %e5 axes %ax : (tensor<2x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  %b = graph.slice %x, %s0, %s3 axes %ax : (tensor<2x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
  %r = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  return %r : tensor<2x5xf32>
}

// -----

// A reversal of three rows, with a negative start (-1: row 2) and no axes
// (axis 0). The slice of row 0 is also returned, so it stays; the others
// go. (Axis 0, the default, is not printed.)
// CHECK-LABEL: func.func @reverse_rows
// CHECK-DAG: %[[C0:.*]] = graph.constant dense<0> : tensor<1xi64>
// CHECK-DAG: %[[C1:.*]] = graph.constant dense<1> : tensor<1xi64>
// CHECK: %[[ROW0:.*]] = graph.slice %arg0, %[[C0]], %[[C1]] :
// CHECK-NOT: graph.slice
// CHECK: %[[I:.*]] = graph.constant dense<[2, 1, 0]> : tensor<3xi64>
// CHECK: %[[G:.*]] = graph.gather %arg0, %[[I]] : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
// CHECK-NOT: graph.concat
// CHECK: return %[[G]], %[[ROW0]]
func.func @reverse_rows(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<1x4xf32>) {
  %m1 = graph.constant dense<-1> : tensor<1xi64>
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %c1 = graph.constant dense<1> : tensor<1xi64>
  %c2 = graph.constant dense<2> : tensor<1xi64>
  %c3 = graph.constant dense<3> : tensor<1xi64>
  %r2 = graph.slice %x, %m1, %c3 : (tensor<3x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4xf32>
  %r1 = graph.slice %x, %c1, %c2 : (tensor<3x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4xf32>
  %r0 = graph.slice %x, %c0, %c1 : (tensor<3x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x4xf32>
  %r = graph.concat %r2, %r1, %r0 {axis = 0 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %r, %r0 : tensor<3x4xf32>, tensor<1x4xf32>
}

// -----

// Slices of two different tensors: not a roll, the concat stays.
// CHECK-LABEL: func.func @two_tensors
// CHECK-NOT: graph.gather
// CHECK: %[[A:.*]] = graph.slice %arg0
// CHECK: %[[B:.*]] = graph.slice %arg1
// CHECK: %[[R:.*]] = graph.concat %[[A]], %[[B]] {axis = 0 : i64}
// CHECK-NOT: graph.gather
// CHECK: return %[[R]]
func.func @two_tensors(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %c2 = graph.constant dense<2> : tensor<1xi64>
  %c4 = graph.constant dense<4> : tensor<1xi64>
  %a = graph.slice %x, %c2, %c4 : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  %b = graph.slice %y, %c0, %c2 : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  %r = graph.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Slices along axis 1 concatenated along axis 0: not a roll, stays.
// CHECK-LABEL: func.func @other_axis
// CHECK-NOT: graph.gather
// CHECK: %[[A:.*]] = graph.slice %arg0
// CHECK: %[[B:.*]] = graph.slice %arg0
// CHECK: %[[R:.*]] = graph.concat %[[A]], %[[B]] {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
// CHECK-NOT: graph.gather
// CHECK: return %[[R]]
func.func @other_axis(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %c2 = graph.constant dense<2> : tensor<1xi64>
  %c4 = graph.constant dense<4> : tensor<1xi64>
  %ax = graph.constant dense<1> : tensor<1xi64>
  %a = graph.slice %x, %c2, %c4 axes %ax : (tensor<2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  %b = graph.slice %x, %c0, %c2 axes %ax : (tensor<2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  %r = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// -----

// Every second element (step 2): not a contiguous slice, stays.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: graph.gather
// CHECK: graph.slice %arg0, {{.*}} steps
// CHECK: graph.concat
// CHECK-NOT: graph.gather
func.func @strided(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = graph.constant dense<0> : tensor<1xi64>
  %c2 = graph.constant dense<2> : tensor<1xi64>
  %c4 = graph.constant dense<4> : tensor<1xi64>
  %a = graph.slice %x, %c0, %c4 steps %c2 : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  %b = graph.slice %x, %c2, %c4 : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
  %r = graph.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
