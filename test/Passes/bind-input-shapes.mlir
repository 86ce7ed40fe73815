// RUN: strata-opt %s -split-input-file -verify-diagnostics --strata-bind-input-shapes='shapes="x:2x3;s:2;s[0]:4;s[1]:3;o:1;o[0]:2;e:0"' | FileCheck %s
//
// strata-bind-input-shapes (Specialize.cpp): dynamic dimensions take the
// bound shapes, and sequence and optional inputs become the tensors they
// hold in this specialization (docs/compiler.md, "Sequences and optionals
// at the boundary"): `s` = {N} and `s[i]` bind a sequence of N tensors,
// `o` = {1} and `o[0]` an optional that holds a tensor, `e` = {0} an empty
// one. Each tensor becomes an argument named after its place; ops at the
// top of the body rebuild the value.

// CHECK-LABEL: func.func @structured
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32> {graph.name = "x"}, %[[S0:.*]]: tensor<4xi64> {graph.name = "s[0]"}, %[[S1:.*]]: tensor<3xi64> {graph.name = "s[1]"}, %[[O:.*]]: tensor<2xf32> {graph.name = "o[0]"})
// CHECK-DAG: %[[SEQ:.*]] = graph.sequence_construct %[[S0]], %[[S1]] : (tensor<4xi64>, tensor<3xi64>) -> !graph.seq<tensor<*xi64>>
// CHECK-DAG: %[[OPT:.*]] = graph.optional %[[O]] : tensor<2xf32> -> !graph.opt<tensor<?xf32>>
// CHECK-DAG: %[[E:.*]] = graph.optional {type = tensor<?xf32>} -> !graph.opt<tensor<?xf32>>
// CHECK: graph.sequence_length %[[SEQ]]
// CHECK: graph.optional_has_element %[[OPT]]
// CHECK: graph.optional_has_element %[[E]]
func.func @structured(%x: tensor<?x3xf32> {graph.name = "x"}, %s: !graph.seq<tensor<*xi64>> {graph.name = "s"}, %o: !graph.opt<tensor<?xf32>> {graph.name = "o"}, %e: !graph.opt<tensor<?xf32>> {graph.name = "e"}) -> (tensor<?x3xf32>, tensor<i64>, tensor<i1>, tensor<i1>) {
  %n = graph.sequence_length %s : (!graph.seq<tensor<*xi64>>) -> tensor<i64>
  %h = graph.optional_has_element %o : (!graph.opt<tensor<?xf32>>) -> tensor<i1>
  %g = graph.optional_has_element %e : (!graph.opt<tensor<?xf32>>) -> tensor<i1>
  %y = graph.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %y, %n, %h, %g : tensor<?x3xf32>, tensor<i64>, tensor<i1>, tensor<i1>
}

// -----

// A sequence input without its elements' shapes is an error naming the
// binding it needs.
// expected-error @below {{input 'q' is a sequence; give its length, --input-shape q=N, then the shape of each tensor it holds (q[0]=..., q[1]=...)}}
func.func @unbound(%q: !graph.seq<tensor<?xf32>> {graph.name = "q"}) -> tensor<i64> {
  %n = graph.sequence_length %q : (!graph.seq<tensor<?xf32>>) -> tensor<i64>
  return %n : tensor<i64>
}
