// RUN: strata-opt %s -split-input-file --strata-graph-propagate-shapes | FileCheck %s
//
// Sequences and optionals the graph lists (as bound inputs are) fold:
// SequenceLength to a constant, SequenceAt at a constant position to the
// element (after its type is refined to the element's), OptionalHasElement
// to a constant and OptionalGetElement to the value held.

// CHECK-LABEL: func @listed_sequence
// CHECK-DAG: %[[N:.*]] = graph.constant dense<2> : tensor<i64>
// CHECK-DAG: %[[Z:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK: return %[[N]], %arg1, %[[Z]] : tensor<i64>, tensor<2xf32>, tensor<i64>
func.func @listed_sequence(%a: tensor<3xf32>, %b: tensor<2xf32>) -> (tensor<i64>, tensor<?xf32>, tensor<i64>) {
  %s = graph.sequence_construct %a, %b : (tensor<3xf32>, tensor<2xf32>) -> !graph.seq<tensor<?xf32>>
  %n = graph.sequence_length %s : (!graph.seq<tensor<?xf32>>) -> tensor<i64>
  %p = graph.constant dense<-1> : tensor<i64>
  %x = graph.sequence_at %s, %p : (!graph.seq<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32>
  %e = graph.sequence_empty f32 : !graph.seq<tensor<*xf32>>
  %m = graph.sequence_length %e : (!graph.seq<tensor<*xf32>>) -> tensor<i64>
  return %n, %x, %m : tensor<i64>, tensor<?xf32>, tensor<i64>
}

// -----

// CHECK-LABEL: func @listed_optional
// CHECK-DAG: %[[T:.*]] = graph.constant dense<true> : tensor<i1>
// CHECK-DAG: %[[F:.*]] = graph.constant dense<false> : tensor<i1>
// CHECK: return %[[T]], %[[F]], %arg0 : tensor<i1>, tensor<i1>, tensor<2xf32>
func.func @listed_optional(%a: tensor<2xf32>) -> (tensor<i1>, tensor<i1>, tensor<?xf32>) {
  %o = graph.optional %a : tensor<2xf32> -> !graph.opt<tensor<?xf32>>
  %e = graph.optional {type = tensor<2xf32>} -> !graph.opt<tensor<2xf32>>
  %h = graph.optional_has_element %o : (!graph.opt<tensor<?xf32>>) -> tensor<i1>
  %g = graph.optional_has_element %e : (!graph.opt<tensor<2xf32>>) -> tensor<i1>
  %x = graph.optional_get_element %o : (!graph.opt<tensor<?xf32>>) -> tensor<?xf32>
  return %h, %g, %x : tensor<i1>, tensor<i1>, tensor<?xf32>
}

// -----

// At a run-time position nothing folds.
// CHECK-LABEL: func @runtime_position
// CHECK: graph.sequence_at
func.func @runtime_position(%a: tensor<3xf32>, %p: tensor<i64>) -> tensor<?xf32> {
  %s = graph.sequence_construct %a, %a : (tensor<3xf32>, tensor<3xf32>) -> !graph.seq<tensor<?xf32>>
  %x = graph.sequence_at %s, %p : (!graph.seq<tensor<?xf32>>, tensor<i64>) -> tensor<?xf32>
  return %x : tensor<?xf32>
}
