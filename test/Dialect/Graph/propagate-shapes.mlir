// RUN: strata-opt %s --strata-graph-propagate-shapes | FileCheck %s

// torch's `x.view(B, S, heads, D // heads)` then `.view(-1, last)`: each
// Reshape's target comes from the Shape of the value before it, two levels
// deep. Once the input's shape is bound, one pass folds the whole chain,
// and the two views, static now, compose into one.
// CHECK-LABEL: func.func @view_chain
// CHECK-SAME: -> tensor<40x16xf32>
// CHECK-NOT: graph.shape
// CHECK-NOT: graph.gather
// CHECK: %[[Y:.*]] = graph.reshape %arg0, %{{.*}} : (tensor<2x5x64xf32>, tensor<2xi64>) -> tensor<40x16xf32>
// CHECK-NEXT: return %[[Y]] : tensor<40x16xf32>
func.func @view_chain(%arg0: tensor<2x5x64xf32>) -> tensor<?x?xf32> {
    %0 = graph.shape %arg0 : (tensor<2x5x64xf32>) -> tensor<3xi64>
    %1 = graph.constant dense<0> : tensor<i64>
    %2 = graph.constant dense<1> : tensor<i64>
    %3 = graph.constant dense<2> : tensor<i64>
    %4 = graph.constant dense<4> : tensor<i64>
    %5 = graph.gather %0, %1 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
    %6 = graph.gather %0, %2 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
    %7 = graph.gather %0, %3 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
    %8 = graph.div %7, %4 : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %9 = graph.constant dense<0> : tensor<1xi64>
    %10 = graph.unsqueeze %5 {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
    %11 = graph.unsqueeze %6 {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
    %12 = graph.constant dense<4> : tensor<1xi64>
    %13 = graph.unsqueeze %8 {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
    %14 = graph.concat %10, %11, %12, %13 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %15 = graph.reshape %arg0, %14 : (tensor<2x5x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
    %16 = graph.shape %15 : (tensor<?x?x?x?xf32>) -> tensor<4xi64>
    %17 = graph.constant dense<3> : tensor<i64>
    %18 = graph.gather %16, %17 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %19 = graph.unsqueeze %18 {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
    %20 = graph.constant dense<-1> : tensor<1xi64>
    %21 = graph.concat %20, %19 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %22 = graph.reshape %15, %21 : (tensor<?x?x?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    return %22 : tensor<?x?xf32>
}

// expand(n, -1, -1) as the TorchScript exporter writes it: the sizes go
// through Where(Equal(sizes, -1), ones, sizes), which folds to [2, 1, 64].
// CHECK-LABEL: func.func @expand_minus_one
// CHECK-NOT: graph.where
// CHECK: graph.expand %{{.*}}, %{{.*}} : (tensor<1x1x64xf32>, tensor<3xi64>) -> tensor<2x1x64xf32>
func.func @expand_minus_one(%token: tensor<1x1x64xf32>) -> tensor<?x?x64xf32> {
  %sizes = graph.constant dense<[2, -1, -1]> : tensor<3xi64>
  %minus = graph.constant dense<-1> : tensor<3xi64>
  %ones = graph.constant dense<1> : tensor<3xi64>
  %eq = graph.equal %sizes, %minus : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %shape = graph.where %eq, %ones, %sizes : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %y = graph.expand %token, %shape : (tensor<1x1x64xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// A scripted helper's `if q.size(-2) != k.size(-2)`, as TorchScript exports
// DeBERTa's relative positions: with the shapes bound the condition folds,
// and the If becomes the branch it takes, its value at the branch's shape.
// CHECK-LABEL: func.func @if_on_shapes
// CHECK-SAME: -> tensor<1x5x5xf32>
// CHECK-NOT: graph.if
// CHECK: %[[Y:.*]] = graph.neg %arg1 : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
// CHECK: return %[[Y]]
func.func @if_on_shapes(%q: tensor<2x5x8xf32>, %bias: tensor<1x5x5xf32>) -> tensor<*xf32> {
  %s = graph.shape %q : (tensor<2x5x8xf32>) -> tensor<3xi64>
  %i = graph.constant dense<1> : tensor<i64>
  %n = graph.gather %s, %i : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %five = graph.constant dense<5> : tensor<i64>
  %eq = graph.equal %n, %five : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %ne = graph.not %eq : (tensor<i1>) -> tensor<i1>
  %y = graph.if %ne : tensor<i1> -> tensor<*xf32> {
    %t = graph.unsqueeze %bias {axes = array<i64: 0>} : (tensor<1x5x5xf32>) -> tensor<1x1x5x5xf32>
    graph.yield %t : tensor<1x1x5x5xf32>
  } else {
    %e = graph.neg %bias : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    graph.yield %e : tensor<1x5x5xf32>
  }
  return %y : tensor<*xf32>
}

// -----

// Branches that yield [0] and [?] give the If [?] (what either may hold),
// not [0]: torchvision's batched_nms returns an empty tensor or NMS's
// selection.
// CHECK-LABEL: func.func @if_of_two_shapes
// CHECK: graph.if %{{.*}} : tensor<i1> -> tensor<?xi64>
// CHECK: return %{{.*}} : tensor<?xi64>
func.func @if_of_two_shapes(%c: tensor<i1>, %x: tensor<?xi64>) -> tensor<*xi64> {
  %empty = graph.constant dense<> : tensor<0xi64>
  %y = graph.if %c : tensor<i1> -> tensor<*xi64> {
    graph.yield %empty : tensor<0xi64>
  } else {
    %n = graph.neg %x : (tensor<?xi64>) -> tensor<?xi64>
    graph.yield %n : tensor<?xi64>
  }
  return %y : tensor<*xi64>
}
