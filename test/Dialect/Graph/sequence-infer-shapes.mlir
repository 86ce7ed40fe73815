// RUN: strata-opt %s --strata-graph-infer-shapes | FileCheck %s
// Shape inference refines the tensor results of sequence ops. (Sequence and
// optional results keep their declared types.)

// CHECK-LABEL: func @refine
func.func @refine(%x: tensor<6x4xf32>, %seq: !graph.seq<tensor<2x3xf32>>, %p: tensor<i64>,
                  %o: !graph.opt<tensor<7xi32>>) {
  // CHECK: graph.sequence_at {{.*}} -> tensor<2x3xf32>
  %0 = graph.sequence_at %seq, %p : (!graph.seq<tensor<2x3xf32>>, tensor<i64>) -> tensor<*xf32>
  // CHECK: graph.concat_from_sequence {{.*}} -> tensor<?x3xf32>
  %1 = graph.concat_from_sequence %seq {axis = 0 : i64} : (!graph.seq<tensor<2x3xf32>>) -> tensor<*xf32>
  // CHECK: graph.concat_from_sequence {{.*}} -> tensor<2x3x?xf32>
  %2 = graph.concat_from_sequence %seq {axis = 2 : i64, new_axis = 1 : i64} : (!graph.seq<tensor<2x3xf32>>) -> tensor<*xf32>
  // CHECK: graph.optional_get_element {{.*}} -> tensor<7xi32>
  %4 = graph.optional_get_element %o : (!graph.opt<tensor<7xi32>>) -> tensor<*xi32>
  return
}
