// RUN: strata-opt %s -split-input-file --strata-graph-lower-control-flow | FileCheck %s

// A run-time condition over branches of one static type: both branches
// computed, the results selected.
// CHECK-LABEL: func @select_branch
// CHECK-NOT: graph.if
// CHECK: %[[C:.*]] = graph.reshape %arg0, %{{.*}} : (tensor<1xi1>, tensor<0xi64>) -> tensor<i1>
// CHECK: %[[T:.*]] = graph.relu %arg1
// CHECK: %[[E:.*]] = graph.neg %arg1
// CHECK: %[[R:.*]] = graph.where %[[C]], %[[T]], %[[E]] : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: return %[[R]]
func.func @select_branch(%c: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.if %c : tensor<1xi1> -> tensor<4xf32> {
    %1 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %1 : tensor<4xf32>
  } else {
    %2 = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %2 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Branches that yield different shapes need a run-time branch: left alone.
// CHECK-LABEL: func @different_shapes
// CHECK: graph.if
func.func @different_shapes(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<2xf32>) -> tensor<?xf32> {
  %0 = graph.if %c : tensor<i1> -> tensor<?xf32> {
    graph.yield %x : tensor<4xf32>
  } else {
    graph.yield %y : tensor<2xf32>
  }
  return %0 : tensor<?xf32>
}

// -----

// A branch with a side effect (dropout in training mode draws random
// numbers) is not run speculatively.
// CHECK-LABEL: func @side_effect
// CHECK: graph.if
func.func @side_effect(%c: tensor<i1>, %x: tensor<4xf32>, %t: tensor<i1>) -> tensor<4xf32> {
  %0 = graph.if %c : tensor<i1> -> tensor<4xf32> {
    %1:2 = graph.dropout %x training_mode %t : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
    graph.yield %1#0 : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A scan of three steps, unrolled: a running sum (state) whose partial sums
// are stacked (scan output).
// CHECK-LABEL: func @running_sum
// CHECK-NOT: graph.scan
// CHECK-DAG: %[[I0:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK-DAG: %[[I1:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK-DAG: %[[I2:.*]] = graph.constant dense<2> : tensor<i64>
// CHECK: %[[X0:.*]] = graph.gather %arg1, %[[I0]] : (tensor<3x2xf32>, tensor<i64>) -> tensor<2xf32>
// CHECK: %[[S1:.*]] = graph.add %arg0, %[[X0]]
// CHECK: %[[X1:.*]] = graph.gather %arg1, %[[I1]]
// CHECK: %[[S2:.*]] = graph.add %[[S1]], %[[X1]]
// CHECK: %[[X2:.*]] = graph.gather %arg1, %[[I2]]
// CHECK: %[[S3:.*]] = graph.add %[[S2]], %[[X2]]
// CHECK: %[[U1:.*]] = graph.unsqueeze %[[S1]] {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK: %[[U2:.*]] = graph.unsqueeze %[[S2]]
// CHECK: %[[U3:.*]] = graph.unsqueeze %[[S3]]
// CHECK: %[[ST:.*]] = graph.concat %[[U1]], %[[U2]], %[[U3]] {axis = 0 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK: return %[[S3]], %[[ST]]
func.func @running_sum(%init: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %0:2 = graph.scan(%init, %xs) {num_scan_inputs = 1 : i64} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%s: tensor<2xf32>, %x: tensor<2xf32>):
    %1 = graph.add %s, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %1, %1 : tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

// Reverse directions: the input is read from its last slice and the output
// is stacked from the back, along axis 1.
// CHECK-LABEL: func @reversed
// CHECK-DAG: %[[I0:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK-DAG: %[[I1:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK: %[[X1:.*]] = graph.gather %arg0, %[[I1]] {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
// CHECK: %[[Y1:.*]] = graph.relu %[[X1]]
// CHECK: %[[X0:.*]] = graph.gather %arg0, %[[I0]] {axis = 1 : i64}
// CHECK: %[[Y0:.*]] = graph.relu %[[X0]]
// CHECK: %[[U0:.*]] = graph.unsqueeze %[[Y0]] {axes = array<i64: 1>} : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK: %[[U1:.*]] = graph.unsqueeze %[[Y1]]
// CHECK: graph.concat %[[U0]], %[[U1]] {axis = 1 : i64} : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
func.func @reversed(%xs: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = graph.scan(%xs) {num_scan_inputs = 1 : i64, scan_input_axes = array<i64: 1>, scan_input_directions = array<i64: 1>, scan_output_axes = array<i64: -1>, scan_output_directions = array<i64: 1>} : (tensor<3x2xf32>) -> tensor<3x2xf32> {
  ^bb0(%x: tensor<3xf32>):
    %1 = graph.relu %x : (tensor<3xf32>) -> tensor<3xf32>
    graph.yield %1 : tensor<3xf32>
  }
  return %0 : tensor<3x2xf32>
}

// -----

// A counted loop (TorchScript's `for i in range(2)`): unrolled, the
// iteration number a constant in each copy (which then folds: x + 0 is x),
// the scan output stacked.
// CHECK-LABEL: func @counted_loop
// CHECK-NOT: graph.loop
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[A2:.*]] = graph.add %arg0, %[[ONE]]
// CHECK: %[[U1:.*]] = graph.unsqueeze %arg0 {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK: %[[U2:.*]] = graph.unsqueeze %[[A2]]
// CHECK: %[[S:.*]] = graph.concat %[[U1]], %[[U2]] {axis = 0 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
// CHECK: return %[[A2]], %[[S]]
func.func @counted_loop(%init: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %n = graph.constant dense<2> : tensor<i64>
  %true = graph.constant dense<true> : tensor<i1>
  %0:2 = graph.loop max %n : tensor<i64> while %true : tensor<i1> carried(%init : tensor<2xf32>) -> tensor<2xf32>, tensor<?x2xf32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>):
    %f = graph.cast %i : (tensor<i64>) -> tensor<f32>
    %1 = graph.add %acc, %f : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    graph.yield %cond, %1, %1 : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<?x2xf32>
}

// -----

// The body decides when to stop: left for the target.
// CHECK-LABEL: func @while_loop
// CHECK: graph.loop
func.func @while_loop(%init: tensor<f32>) -> tensor<f32> {
  %n = graph.constant dense<10> : tensor<i64>
  %0 = graph.loop max %n : tensor<i64> carried(%init : tensor<f32>) -> tensor<f32> {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<f32>):
    %1 = graph.add %acc, %acc : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %2 = graph.less %1, %init : (tensor<f32>, tensor<f32>) -> tensor<i1>
    graph.yield %2, %1 : tensor<i1>, tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// A SequenceMap over a listed sequence: one copy of the body per position,
// the tensor operand passed to each, the results listed again.
// CHECK-LABEL: func @unroll_sequence_map
// CHECK-NOT: graph.sequence_map
// CHECK: %[[A:.*]] = graph.add %arg0, %arg2
// CHECK: %[[B:.*]] = graph.add %arg1, %arg2
// CHECK: %[[S:.*]] = graph.sequence_construct %[[A]], %[[B]]
// CHECK: return %[[S]]
func.func @unroll_sequence_map(%a: tensor<3xf32>, %b: tensor<3xf32>, %bias: tensor<3xf32>) -> !graph.seq<tensor<3xf32>> {
  %s = graph.sequence_construct %a, %b : (tensor<3xf32>, tensor<3xf32>) -> !graph.seq<tensor<3xf32>>
  %0 = graph.sequence_map %s, %bias : (!graph.seq<tensor<3xf32>>, tensor<3xf32>) -> !graph.seq<tensor<3xf32>> {
  ^bb0(%x: tensor<3xf32>, %y: tensor<3xf32>):
    %1 = graph.add %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    graph.sequence_map_yield %1 : tensor<3xf32>
  }
  return %0 : !graph.seq<tensor<3xf32>>
}

// -----

// A SequenceMap over a sequence whose elements are not listed stays.
// CHECK-LABEL: func @sequence_map_unknown
// CHECK: graph.sequence_map
func.func @sequence_map_unknown(%s: !graph.seq<tensor<3xf32>>) -> !graph.seq<tensor<3xf32>> {
  %0 = graph.sequence_map %s : (!graph.seq<tensor<3xf32>>) -> !graph.seq<tensor<3xf32>> {
  ^bb0(%x: tensor<3xf32>):
    %1 = graph.neg %x : (tensor<3xf32>) -> tensor<3xf32>
    graph.sequence_map_yield %1 : tensor<3xf32>
  }
  return %0 : !graph.seq<tensor<3xf32>>
}

// -----

// Branches yielding sequences that list as many tensors of one type:
// selected element by element.
// CHECK-LABEL: func @select_sequences
// CHECK-NOT: graph.if
// CHECK: %[[W:.*]] = graph.where %arg0, %arg1, %arg2 : (tensor<i1>, tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// CHECK: %[[S:.*]] = graph.sequence_construct %[[W]]
// CHECK: return %[[S]]
func.func @select_sequences(%c: tensor<i1>, %x: tensor<5xf32>, %y: tensor<5xf32>) -> !graph.seq<tensor<5xf32>> {
  %0 = graph.if %c : tensor<i1> -> !graph.seq<tensor<5xf32>> {
    %1 = graph.sequence_construct %x : (tensor<5xf32>) -> !graph.seq<tensor<5xf32>>
    graph.yield %1 : !graph.seq<tensor<5xf32>>
  } else {
    %2 = graph.sequence_construct %y : (tensor<5xf32>) -> !graph.seq<tensor<5xf32>>
    graph.yield %2 : !graph.seq<tensor<5xf32>>
  }
  return %0 : !graph.seq<tensor<5xf32>>
}
