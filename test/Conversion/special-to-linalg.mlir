// RUN: strata-opt --strata-convert-graph-to-linalg %s | FileCheck %s

// The special ops: resize reads constant tap tables (computed from the
// static shapes and constant scales), scatters are scf.for loops that carry
// the output tensor, einsum is one generic built from the equation, and
// max_pool with a used indices result is a generic with two outputs.

// The einsum tests' maps (printed at the top of the module).
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[DIAG:.+]] = affine_map<(d0, d1) -> (d0, d1, d1)>

// Nearest, asymmetric, 2 -> 4 on the last axis: the index table holds the
// source position of each output column; the other axes read the output
// position directly.
// CHECK-LABEL: func.func @resize_nearest(
// CHECK: %[[TABLE:.+]] = arith.constant dense<{{\[}}[0], [0], [1], [1]]> : tensor<4x1xi64>
// CHECK: linalg.generic {{.*}} ins(%[[TABLE]] : tensor<4x1xi64>) outs(%{{.+}} : tensor<1x2x4xf32>)
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x2x2xf32>
func.func @resize_nearest(%x: tensor<1x2x2xf32>) -> tensor<1x2x4xf32> {
  %s = graph.constant dense<[1.0, 1.0, 2.0]> : tensor<3xf32>
  %0 = graph.resize %x scales %s {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x2x2xf32>, tensor<3xf32>) -> tensor<1x2x4xf32>
  return %0 : tensor<1x2x4xf32>
}

// Linear, align_corners, 2 -> 3: source positions 0, 0.5, 1. As in ONNX's
// reference, a source on an input position takes its left neighbour with
// weight 0 (clamped to the edge) and itself with weight 1. The taps are
// summed over a reduction dim per resized axis.
// CHECK-LABEL: func.func @resize_linear(
// CHECK-DAG: arith.constant dense<{{\[}}[0, 0], [0, 1], [0, 1]]> : tensor<3x2xi64>
// CHECK-DAG: arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00], [5.000000e-01, 5.000000e-01], [0.000000e+00, 1.000000e+00]]> : tensor<3x2xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @resize_linear(%x: tensor<2x2xf32>) -> tensor<2x3xf32> {
  %sizes = graph.constant dense<[2, 3]> : tensor<2xi64>
  %0 = graph.resize %x sizes %sizes {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Scales known only at run time: the tables are computed in the kernel
// (one generic per axis, in f64), every axis being resampled.
// CHECK-LABEL: func.func @resize_runtime_scales(
// CHECK-SAME: %{{[^:]+}}: tensor<2x2xf32>, %[[S:[^:]+]]: tensor<2xf32>
// CHECK: tensor.extract %[[S]][%{{.+}}] : tensor<2xf32>
// CHECK: %[[T:.+]]:3 = linalg.generic {{.*}} outs(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x2xi64>, tensor<2x2xf32>, tensor<2x2xi1>)
// CHECK: math.ceil %{{.+}} : f64
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]
func.func @resize_runtime_scales(%x: tensor<2x2xf32>, %s: tensor<2xf32>) -> tensor<2x4xf32> {
  %0 = graph.resize %x scales %s {mode = "linear"} : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// Linear interpolation of integers is not lowered.
// CHECK-LABEL: func.func @resize_linear_int(
// CHECK: graph.resize
func.func @resize_linear_int(%x: tensor<2x2xi32>) -> tensor<2x4xi32> {
  %s = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = graph.resize %x scales %s {mode = "linear"} : (tensor<2x2xi32>, tensor<2xf32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// Updates in order: a loop over the updates carrying the data tensor.
// CHECK-LABEL: func.func @scatter_elements(
// CHECK-SAME: %[[DATA:[^:]+]]: tensor<1x5xf32>
// CHECK: scf.for {{.*}} iter_args(%[[T0:.+]] = %[[DATA]]) -> (tensor<1x5xf32>)
// CHECK: scf.for {{.*}} iter_args(%[[T1:.+]] = %[[T0]]) -> (tensor<1x5xf32>)
// CHECK: %[[OLD:.+]] = tensor.extract %[[T1]]
// CHECK: %[[NEW:.+]] = arith.addf %[[OLD]], %{{.+}} : f32
// CHECK: tensor.insert %[[NEW]] into %[[T1]]
func.func @scatter_elements(%data: tensor<1x5xf32>, %indices: tensor<1x2xi64>, %updates: tensor<1x2xf32>) -> tensor<1x5xf32> {
  %0 = graph.scatter_elements %data, %indices, %updates {axis = 1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  return %0 : tensor<1x5xf32>
}

// CHECK-LABEL: func.func @scatter_nd(
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: tensor.insert
func.func @scatter_nd(%data: tensor<4x4xf32>, %indices: tensor<2x1xi64>, %updates: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = graph.scatter_nd %data, %indices, %updates {reduction = "mul"} : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// Batch matmul: i and k parallel, j a reduction.
// CHECK-LABEL: func.func @einsum_batch_matmul(
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
func.func @einsum_batch_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = graph.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// A repeated letter reads the diagonal.
// CHECK-LABEL: func.func @einsum_diagonal(
// CHECK: linalg.generic {indexing_maps = [#[[DIAG]], #{{.+}}]
func.func @einsum_diagonal(%a: tensor<2x3x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.einsum %a {equation = "...ii->...i"} : (tensor<2x3x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @max_pool_indices(
// CHECK: %[[POOL:.+]]:2 = linalg.generic {{.*}} outs(%{{.+}}, %{{.+}} : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
// CHECK: arith.cmpf ogt
// CHECK: return %[[POOL]]#0, %[[POOL]]#1
func.func @max_pool_indices(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
  %0, %1 = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return %0, %1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
}

// Quantization rounds half to even and saturates.
// CHECK-LABEL: func.func @quantize(
// CHECK: math.roundeven
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.trunci %{{.+}} : i32 to i8
func.func @quantize(%x: tensor<2x3xf32>, %s: tensor<f32>, %zp: tensor<ui8>) -> tensor<2x3xui8> {
  %0 = graph.quantize_linear %x, %s zero_point %zp : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}
