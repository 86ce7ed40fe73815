// RUN: strata-opt --strata-convert-graph-to-linalg %s | FileCheck %s

// Reductions become linalg.generic ops with reduction iterators that
// accumulate into a linalg.fill of the identity; keepdims restores the unit
// dims with tensor.expand_shape.

// CHECK-DAG: #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$DROP1:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWS:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0, d1) -> ()>

// Axes known at run time: with keepdims, the static shapes say which dims
// reduce (here dim 1).
// CHECK-LABEL: func.func @sum_keepdims(
// CHECK-SAME: %[[X:[^:]+]]: tensor<3x2x2xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x2xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<3x2xf32>)
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$DROP1]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<3x2x2xf32>) outs(%[[F]] : tensor<3x2xf32>)
// CHECK: arith.addf
// CHECK: %[[R:.+]] = tensor.expand_shape %[[S]] {{\[}}[0, 1], [2]] output_shape [3, 1, 2] : tensor<3x2xf32> into tensor<3x1x2xf32>
// CHECK: return %[[R]]
func.func @sum_keepdims(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> tensor<3x1x2xf32> {
  %0 = graph.reduce_sum %x, %axes : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x1x2xf32>
  return %0 : tensor<3x1x2xf32>
}

// f16 mean accumulates in f32, divides by the count and rounds once; an
// unsigned max starts from 0 and uses maxui; min starts from +inf.
// CHECK-LABEL: func.func @kinds(
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f16, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[W]] : f32
// CHECK: ^bb0(%[[V:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT: %[[N:.+]] = arith.constant 5.000000e+00 : f32
// CHECK-NEXT: %[[M:.+]] = arith.divf %[[V]], %[[N]] : f32
// CHECK-NEXT: arith.truncf %[[M]] : f32 to f16
// CHECK: %[[UZERO:.+]] = arith.constant 0 : i8
// CHECK: linalg.fill ins(%[[UZERO]] : i8)
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: arith.maxui
// CHECK: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK: linalg.fill ins(%[[INF]] : f32)
// CHECK: arith.minimumf
func.func @kinds(%h: tensor<2x5xf16>, %u: tensor<2x5xui8>, %x: tensor<2x5xf32>) -> (tensor<2xf16>, tensor<ui8>, tensor<2x1xf32>) {
  %0 = graph.reduce_mean %h {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x5xf16>) -> tensor<2xf16>
  %1 = graph.reduce_max %u {keepdims = 0 : i64} : (tensor<2x5xui8>) -> tensor<ui8>
  %2 = graph.reduce_min %x {axes = array<i64: -1>} : (tensor<2x5xf32>) -> tensor<2x1xf32>
  return %0, %1, %2 : tensor<2xf16>, tensor<ui8>, tensor<2x1xf32>
}

// arg_max with select_last_index: ties move to the later index (oge).
// CHECK-LABEL: func.func @arg_max(
// CHECK: %[[R:.+]]:2 = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROWS]], #[[$ROWS]]], iterator_types = ["parallel", "reduction"]}
// CHECK: ^bb0(%[[IN:.+]]: f32, %[[BEST:.+]]: f32, %[[IDX:.+]]: i64):
// CHECK-NEXT: %[[GE:.+]] = arith.cmpf oge, %[[IN]], %[[BEST]] : f32
// CHECK-NEXT: %[[I:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[I64:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[NB:.+]] = arith.select %[[GE]], %[[IN]], %[[BEST]] : f32
// CHECK-NEXT: %[[NI:.+]] = arith.select %[[GE]], %[[I64]], %[[IDX]] : i64
// CHECK-NEXT: linalg.yield %[[NB]], %[[NI]] : f32, i64
// CHECK: tensor.expand_shape %[[R]]#1 {{\[}}[0, 1]] output_shape [2, 1]
func.func @arg_max(%x: tensor<2x4xf32>) -> tensor<2x1xi64> {
  %0 = graph.arg_max %x {axis = 1 : i64, select_last_index = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// softmax: max, then the sum of exp(x - max), then exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax(
// CHECK: arith.maximumf
// CHECK: ^bb0(%[[X:.+]]: f32, %[[M:.+]]: f32, %[[S:.+]]: f32):
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[D]] : f32
// CHECK-NEXT: arith.addf %[[S]], %[[E]] : f32
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-LABEL: func.func @log_softmax(
// CHECK: %[[L:.+]] = math.log
// CHECK-NEXT: arith.subf %{{.+}}, %[[L]] : f32
func.func @softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.softmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @log_softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.log_softmax %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// cum_sum: an extra reduction dim j over the axis; reverse exclusive takes
// j > i, plain cum_sum j <= i. A constant axis operand works like the
// attribute.
// CHECK-LABEL: func.func @cum_sum(
// CHECK: linalg.generic {indexing_maps = [#[[$SWAP:.+]], #[[$OUT:.+]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[J:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[T:.+]] = arith.cmpi ugt, %[[J]], %[[I]] : index
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[T:.+]] = arith.cmpi ule, %[[J]], %[[I]] : index
func.func @cum_sum(%x: tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
  %0 = graph.cum_sum %x {axis = -1 : i64, exclusive = 1 : i64, reverse = 1 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %axis = graph.constant dense<0> : tensor<i32>
  %1 = graph.cum_sum %x, %axis : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
  return %0, %1 : tensor<2x3xi32>, tensor<2x3xi32>
}

// Not lowered: dynamic shapes. (Axes known only at run time are the Extra
// family's: extra-to-linalg.mlir.)
// CHECK-LABEL: func.func @unsupported(
// CHECK-NEXT: graph.reduce_sum
// CHECK-NEXT: graph.softmax
// CHECK-NEXT: return
func.func @unsupported(%d: tensor<?x4xf32>) -> (tensor<?xf32>, tensor<?x4xf32>) {
  %0 = graph.reduce_sum %d {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<?x4xf32>) -> tensor<?xf32>
  %1 = graph.softmax %d : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0, %1 : tensor<?xf32>, tensor<?x4xf32>
}
