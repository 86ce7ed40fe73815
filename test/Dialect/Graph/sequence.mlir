// RUN: strata-opt %s -split-input-file | strata-opt -split-input-file | FileCheck %s
// Sequence and optional ops round-trip; their result types are checked
// against the operands.

// CHECK-LABEL: func @build_and_read
func.func @build_and_read(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %p: tensor<i64>)
    -> (tensor<?x3xf32>, tensor<i64>, tensor<?x3xf32>) {
  // CHECK: graph.sequence_empty f32 : !graph.seq<tensor<*xf32>>
  %e = graph.sequence_empty f32 : !graph.seq<tensor<*xf32>>
  // CHECK: graph.sequence_insert %{{.*}}, %{{.*}} : (!graph.seq<tensor<*xf32>>, tensor<2x3xf32>) -> !graph.seq<tensor<*xf32>>
  %0 = graph.sequence_insert %e, %a : (!graph.seq<tensor<*xf32>>, tensor<2x3xf32>) -> !graph.seq<tensor<*xf32>>
  // CHECK: graph.sequence_construct %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<4x3xf32>) -> !graph.seq<tensor<?x3xf32>>
  %1 = graph.sequence_construct %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> !graph.seq<tensor<?x3xf32>>
  // CHECK: graph.sequence_insert %{{.*}}, %{{.*}} at %{{.*}} : (!graph.seq<tensor<?x3xf32>>, tensor<2x3xf32>, tensor<i64>) -> !graph.seq<tensor<?x3xf32>>
  %2 = graph.sequence_insert %1, %a at %p : (!graph.seq<tensor<?x3xf32>>, tensor<2x3xf32>, tensor<i64>) -> !graph.seq<tensor<?x3xf32>>
  // CHECK: graph.sequence_erase %{{.*}} at %{{.*}} : (!graph.seq<tensor<?x3xf32>>, tensor<i64>) -> !graph.seq<tensor<?x3xf32>>
  %3 = graph.sequence_erase %2 at %p : (!graph.seq<tensor<?x3xf32>>, tensor<i64>) -> !graph.seq<tensor<?x3xf32>>
  // CHECK: graph.sequence_erase %{{.*}} : (!graph.seq<tensor<?x3xf32>>) -> !graph.seq<tensor<?x3xf32>>
  %4 = graph.sequence_erase %3 : (!graph.seq<tensor<?x3xf32>>) -> !graph.seq<tensor<?x3xf32>>
  // CHECK: graph.sequence_at %{{.*}}, %{{.*}} : (!graph.seq<tensor<?x3xf32>>, tensor<i64>) -> tensor<?x3xf32>
  %5 = graph.sequence_at %4, %p : (!graph.seq<tensor<?x3xf32>>, tensor<i64>) -> tensor<?x3xf32>
  // CHECK: graph.sequence_length %{{.*}} : (!graph.seq<tensor<?x3xf32>>) -> tensor<i64>
  %6 = graph.sequence_length %4 : (!graph.seq<tensor<?x3xf32>>) -> tensor<i64>
  // CHECK: graph.concat_from_sequence %{{.*}} {axis = 0 : i64} : (!graph.seq<tensor<?x3xf32>>) -> tensor<?x3xf32>
  %7 = graph.concat_from_sequence %4 {axis = 0 : i64} : (!graph.seq<tensor<?x3xf32>>) -> tensor<?x3xf32>
  return %5, %6, %7 : tensor<?x3xf32>, tensor<i64>, tensor<?x3xf32>
}

// -----

// CHECK-LABEL: func @split_and_stack
func.func @split_and_stack(%x: tensor<6x4xf32>, %s: tensor<i64>) -> tensor<6x?xf32> {
  // CHECK: graph.split_to_sequence %{{.*}} {axis = 1 : i64, keepdims = 0 : i64} : (tensor<6x4xf32>) -> !graph.seq<tensor<6xf32>>
  %0 = graph.split_to_sequence %x {axis = 1 : i64, keepdims = 0 : i64} : (tensor<6x4xf32>) -> !graph.seq<tensor<6xf32>>
  // CHECK: graph.split_to_sequence %{{.*}} split %{{.*}} : (tensor<6x4xf32>, tensor<i64>) -> !graph.seq<tensor<?x4xf32>>
  %1 = graph.split_to_sequence %x split %s : (tensor<6x4xf32>, tensor<i64>) -> !graph.seq<tensor<?x4xf32>>
  // CHECK: graph.concat_from_sequence %{{.*}} {axis = -1 : i64, new_axis = 1 : i64} : (!graph.seq<tensor<6xf32>>) -> tensor<6x?xf32>
  %2 = graph.concat_from_sequence %0 {axis = -1 : i64, new_axis = 1 : i64} : (!graph.seq<tensor<6xf32>>) -> tensor<6x?xf32>
  // CHECK: graph.concat_from_sequence %{{.*}} {axis = 0 : i64, new_axis = 1 : i64} : (!graph.seq<tensor<?x4xf32>>) -> tensor<?x?x4xf32>
  %3 = graph.concat_from_sequence %1 {axis = 0 : i64, new_axis = 1 : i64} : (!graph.seq<tensor<?x4xf32>>) -> tensor<?x?x4xf32>
  return %2 : tensor<6x?xf32>
}

// -----

// CHECK-LABEL: func @map
func.func @map(%xs: !graph.seq<tensor<?x3xf32>>, %bias: tensor<3xf32>)
    -> (!graph.seq<tensor<?x3xf32>>, !graph.seq<tensor<2xi64>>) {
  // CHECK: graph.sequence_map %{{.*}}, %{{.*}} : (!graph.seq<tensor<?x3xf32>>, tensor<3xf32>) -> (!graph.seq<tensor<?x3xf32>>, !graph.seq<tensor<2xi64>>) {
  // CHECK-NEXT: ^bb0(%{{.*}}: tensor<?x3xf32>, %{{.*}}: tensor<3xf32>):
  // CHECK: graph.sequence_map_yield %{{.*}}, %{{.*}} : tensor<?x3xf32>, tensor<2xi64>
  %0:2 = graph.sequence_map %xs, %bias : (!graph.seq<tensor<?x3xf32>>, tensor<3xf32>) -> (!graph.seq<tensor<?x3xf32>>, !graph.seq<tensor<2xi64>>) {
  ^bb0(%x: tensor<?x3xf32>, %b: tensor<3xf32>):
    %1 = graph.add %x, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    %2 = graph.shape %x : (tensor<?x3xf32>) -> tensor<2xi64>
    graph.sequence_map_yield %1, %2 : tensor<?x3xf32>, tensor<2xi64>
  }
  return %0#0, %0#1 : !graph.seq<tensor<?x3xf32>>, !graph.seq<tensor<2xi64>>
}

// -----

// CHECK-LABEL: func @optionals
func.func @optionals(%x: tensor<2xf32>, %o: !graph.opt<!graph.seq<tensor<5xf32>>>)
    -> (tensor<i1>, tensor<i1>, tensor<2xf32>, !graph.seq<tensor<5xf32>>, tensor<i1>) {
  // CHECK: graph.optional %{{.*}} : tensor<2xf32> -> !graph.opt<tensor<2xf32>>
  %0 = graph.optional %x : tensor<2xf32> -> !graph.opt<tensor<2xf32>>
  // CHECK: graph.optional {type = !graph.seq<tensor<5xf32>>} -> !graph.opt<!graph.seq<tensor<5xf32>>>
  %1 = graph.optional {type = !graph.seq<tensor<5xf32>>} -> !graph.opt<!graph.seq<tensor<5xf32>>>
  // CHECK: graph.optional_has_element %{{.*}} : (!graph.opt<tensor<2xf32>>) -> tensor<i1>
  %2 = graph.optional_has_element %0 : (!graph.opt<tensor<2xf32>>) -> tensor<i1>
  %3 = graph.optional_has_element %1 : (!graph.opt<!graph.seq<tensor<5xf32>>>) -> tensor<i1>
  // CHECK: graph.optional_get_element %{{.*}} : (!graph.opt<tensor<2xf32>>) -> tensor<2xf32>
  %4 = graph.optional_get_element %0 : (!graph.opt<tensor<2xf32>>) -> tensor<2xf32>
  // CHECK: graph.optional_get_element %{{.*}} : (!graph.opt<!graph.seq<tensor<5xf32>>>) -> !graph.seq<tensor<5xf32>>
  %5 = graph.optional_get_element %o : (!graph.opt<!graph.seq<tensor<5xf32>>>) -> !graph.seq<tensor<5xf32>>
  // Opset 18: a plain tensor counts as present.
  // CHECK: graph.optional_has_element %{{.*}} : (tensor<2xf32>) -> tensor<i1>
  %6 = graph.optional_has_element %x : (tensor<2xf32>) -> tensor<i1>
  return %2, %3, %4, %5, %6 : tensor<i1>, tensor<i1>, tensor<2xf32>, !graph.seq<tensor<5xf32>>, tensor<i1>
}
