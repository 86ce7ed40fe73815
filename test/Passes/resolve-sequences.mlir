// RUN: strata-opt %s -split-input-file --strata-resolve-sequences | FileCheck %s
//
// strata-resolve-sequences (Sequences.cpp): a sequence the entry function
// builds and takes apart itself has a length known at compile time. The
// pass follows it as the list of tensors it holds and rewrites its reads
// into tensor ops: a constant position picks its element, a run-time
// position selects with graph.where (the position wrapped when negative),
// SequenceLength becomes a constant, SplitToSequence a split,
// ConcatFromSequence a concat; the sequence ops go and the function's
// result types take the more precise types. A sequence or optional the
// function returns becomes the tensors it holds (one result each). A
// sequence whose elements are unknown, or read at a run-time position among
// elements of different types, stays.

// Constant position and length: the element itself and a constant; the
// result type refined from tensor<?x3xf32>.
// CHECK-LABEL: func.func @constant_position
// CHECK-SAME: -> (tensor<2x3xf32>, tensor<i64>)
// CHECK-NOT: graph.sequence
// CHECK: %[[N:.*]] = graph.constant dense<2> : tensor<i64>
// CHECK-NOT: graph.sequence
// CHECK: return %arg1, %[[N]] : tensor<2x3xf32>, tensor<i64>
func.func @constant_position(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<?x3xf32>, tensor<i64>) {
  %s = graph.sequence_construct %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> !graph.seq<tensor<2x3xf32>>
  %one = graph.constant dense<1> : tensor<i64>
  %x = graph.sequence_at %s, %one : (!graph.seq<tensor<2x3xf32>>, tensor<i64>) -> tensor<?x3xf32>
  %n = graph.sequence_length %s : (!graph.seq<tensor<2x3xf32>>) -> tensor<i64>
  return %x, %n : tensor<?x3xf32>, tensor<i64>
}

// -----

// A run-time position p among three elements: p wrapped (p < 0 ? p + 3 :
// p), then where(p == 0, a, where(p == 1, b, c)).
// CHECK-LABEL: func.func @runtime_position
// CHECK-NOT: graph.sequence
// CHECK: %[[Z:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK: %[[NEG:.*]] = graph.less %arg3, %[[Z]]
// CHECK: %[[THREE:.*]] = graph.constant dense<3> : tensor<i64>
// CHECK: %[[WRAPPED:.*]] = graph.add %arg3, %[[THREE]]
// CHECK: %[[P:.*]] = graph.where %[[NEG]], %[[WRAPPED]], %arg3
// CHECK: %[[ONE:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK: %[[IS1:.*]] = graph.equal %[[P]], %[[ONE]]
// CHECK: %[[BC:.*]] = graph.where %[[IS1]], %arg1, %arg2 : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[ZERO:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK: %[[IS0:.*]] = graph.equal %[[P]], %[[ZERO]]
// CHECK: %[[R:.*]] = graph.where %[[IS0]], %arg0, %[[BC]]
// CHECK-NOT: graph.sequence
// CHECK: return %[[R]]
func.func @runtime_position(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>, %p: tensor<i64>) -> tensor<3xf32> {
  %s = graph.sequence_construct %a, %b, %c : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> !graph.seq<tensor<3xf32>>
  %x = graph.sequence_at %s, %p : (!graph.seq<tensor<3xf32>>, tensor<i64>) -> tensor<3xf32>
  return %x : tensor<3xf32>
}

// -----

// Insert at the back, insert at the front, erase the last: [a], [b, a],
// [b]; element 0 is b and the length 1.
// CHECK-LABEL: func.func @insert_erase
// CHECK-SAME: -> (tensor<3xf32>, tensor<i64>)
// CHECK-NOT: graph.sequence
// CHECK: %[[N:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK-NOT: graph.sequence
// CHECK: return %arg1, %[[N]]
func.func @insert_erase(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<*xf32>, tensor<i64>) {
  %e = graph.sequence_empty f32 : !graph.seq<tensor<*xf32>>
  %0 = graph.sequence_insert %e, %a : (!graph.seq<tensor<*xf32>>, tensor<3xf32>) -> !graph.seq<tensor<*xf32>>
  %zero = graph.constant dense<0> : tensor<i64>
  %1 = graph.sequence_insert %0, %b at %zero : (!graph.seq<tensor<*xf32>>, tensor<3xf32>, tensor<i64>) -> !graph.seq<tensor<*xf32>>
  %2 = graph.sequence_erase %1 : (!graph.seq<tensor<*xf32>>) -> !graph.seq<tensor<*xf32>>
  %x = graph.sequence_at %2, %zero : (!graph.seq<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
  %n = graph.sequence_length %2 : (!graph.seq<tensor<*xf32>>) -> tensor<i64>
  return %x, %n : tensor<*xf32>, tensor<i64>
}

// -----

// Erase at a run-time position p from [a, b]: slot 0 holds a when 0 < p,
// else b.
// CHECK-LABEL: func.func @erase_runtime
// CHECK-SAME: -> tensor<3xf32>
// CHECK-NOT: graph.sequence
// CHECK: %[[P:.*]] = graph.where %{{.*}}, %{{.*}}, %arg2 : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[ZERO:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK: %[[BEFORE:.*]] = graph.less %[[ZERO]], %[[P]]
// CHECK: %[[R:.*]] = graph.where %[[BEFORE]], %arg0, %arg1
// CHECK-NOT: graph.sequence
// CHECK: return %[[R]]
func.func @erase_runtime(%a: tensor<3xf32>, %b: tensor<3xf32>, %p: tensor<i64>) -> tensor<*xf32> {
  %s = graph.sequence_construct %a, %b : (tensor<3xf32>, tensor<3xf32>) -> !graph.seq<tensor<3xf32>>
  %1 = graph.sequence_erase %s at %p : (!graph.seq<tensor<3xf32>>, tensor<i64>) -> !graph.seq<tensor<3xf32>>
  %zero = graph.constant dense<0> : tensor<i64>
  %x = graph.sequence_at %1, %zero : (!graph.seq<tensor<3xf32>>, tensor<i64>) -> tensor<*xf32>
  return %x : tensor<*xf32>
}

// -----

// Split into columns (squeezed), stacked back as rows: a transpose written
// with sequences becomes split, squeeze, unsqueeze and concat.
// CHECK-LABEL: func.func @split_and_stack
// CHECK-SAME: -> tensor<3x2xf32>
// CHECK-NOT: graph.sequence
// CHECK-NOT: graph.split_to_sequence
// CHECK: %[[P:.*]]:3 = graph.split %arg0 {axis = 1 : i64, split = array<i64: 1, 1, 1>} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK: %[[S0:.*]] = graph.squeeze %[[P]]#0 {axes = array<i64: 1>} : (tensor<2x1xf32>) -> tensor<2xf32>
// CHECK: %[[S1:.*]] = graph.squeeze %[[P]]#1
// CHECK: %[[S2:.*]] = graph.squeeze %[[P]]#2
// CHECK: %[[U0:.*]] = graph.unsqueeze %[[S0]] {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK: %[[U1:.*]] = graph.unsqueeze %[[S1]]
// CHECK: %[[U2:.*]] = graph.unsqueeze %[[S2]]
// CHECK: %[[R:.*]] = graph.concat %[[U0]], %[[U1]], %[[U2]] {axis = 0 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK-NOT: graph.concat_from_sequence
// CHECK: return %[[R]] : tensor<3x2xf32>
func.func @split_and_stack(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %s = graph.split_to_sequence %x {axis = 1 : i64, keepdims = 0 : i64} : (tensor<2x3xf32>) -> !graph.seq<tensor<2xf32>>
  %y = graph.concat_from_sequence %s {axis = 0 : i64, new_axis = 1 : i64} : (!graph.seq<tensor<2xf32>>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// A sequence or optional the function returns becomes the tensors it
// holds, named after the result: `y[i]` for element i, `z[0]` for what an
// optional holds, nothing for an empty one.
// CHECK-LABEL: func.func @returned
// CHECK-SAME: -> (tensor<3xf32> {graph.name = "y[0]"}, tensor<2xf32> {graph.name = "y[1]"}, tensor<3xf32> {graph.name = "z[0]"}, tensor<i64> {graph.name = "n"})
// CHECK-NOT: graph.sequence
// CHECK-NOT: graph.optional
// CHECK: return %arg0, %arg1, %arg0, %{{.*}} : tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<i64>
func.func @returned(%a: tensor<3xf32>, %b: tensor<2xf32>) -> (!graph.seq<tensor<?xf32>> {graph.name = "y"}, !graph.opt<tensor<3xf32>> {graph.name = "z"}, !graph.opt<tensor<3xf32>> {graph.name = "none"}, tensor<i64> {graph.name = "n"}) {
  %s = graph.sequence_construct %a, %b : (tensor<3xf32>, tensor<2xf32>) -> !graph.seq<tensor<?xf32>>
  %o = graph.optional %a : tensor<3xf32> -> !graph.opt<tensor<3xf32>>
  %e = graph.optional {type = tensor<3xf32>} -> !graph.opt<tensor<3xf32>>
  %n = graph.sequence_length %s : (!graph.seq<tensor<?xf32>>) -> tensor<i64>
  return %s, %o, %e, %n : !graph.seq<tensor<?xf32>>, !graph.opt<tensor<3xf32>>, !graph.opt<tensor<3xf32>>, tensor<i64>
}

// -----

// A returned sequence whose elements are not known (split at run-time
// sizes: only the count is) stays, for the target to report.
// CHECK-LABEL: func.func @returned_unknown
// CHECK: %[[S:.*]] = graph.split_to_sequence
// CHECK: return %[[S]] : !graph.seq<tensor<?xf32>>
func.func @returned_unknown(%x: tensor<6xf32>, %sizes: tensor<2xi64>) -> !graph.seq<tensor<?xf32>> {
  %s = graph.split_to_sequence %x split %sizes : (tensor<6xf32>, tensor<2xi64>) -> !graph.seq<tensor<?xf32>>
  return %s : !graph.seq<tensor<?xf32>>
}

// -----

// A run-time position among elements of two shapes: no where can select
// between them, so the sequence stays.
// CHECK-LABEL: func.func @mixed_types
// CHECK-SAME: -> tensor<?xf32>
// CHECK: %[[S:.*]] = graph.sequence_construct %arg0, %arg1
// CHECK: %[[X:.*]] = graph.sequence_at %[[S]], %arg2
// CHECK-NOT: graph.where
// CHECK: return %[[X]]
func.func @mixed_types(%a: tensor<3xf32>, %b: tensor<4xf32>, %p: tensor<i64>) -> tensor<?xf32> {
  %s = graph.sequence_construct %a, %b : (tensor<3xf32>, tensor<4xf32>) -> !graph.seq<tensor<?xf32>>
  %x = graph.sequence_at %s, %p : (!graph.seq<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32>
  return %x : tensor<?xf32>
}
