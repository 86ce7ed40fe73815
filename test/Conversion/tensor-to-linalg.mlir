// RUN: strata-opt --strata-convert-graph-to-linalg %s -split-input-file | FileCheck %s --enable-var-scope

// Shape and data movement graph ops on static shapes become tensor and
// linalg ops; ops with dynamic shapes stay graph ops.

// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME: %[[X:.+]]: tensor<2x3x4xf32>
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[E:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3]] output_shape [2, 1, 3, 4] : tensor<2x3x4xf32> into tensor<2x1x3x4xf32>
// CHECK: %[[F:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: %[[R:.+]] = tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK: return %[[C]], %[[E]], %[[R]]
// CHECK-NOT: graph.
func.func @reshapes(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x1x3x4xf32>, tensor<4x6xf32>) {
  %0 = graph.flatten %x {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = graph.unsqueeze %x {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x1x3x4xf32>
  %shape = graph.constant dense<[4, 6]> : tensor<2xi64>
  %2 = graph.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  return %0, %1, %2 : tensor<6x4xf32>, tensor<2x1x3x4xf32>, tensor<4x6xf32>
}

// -----

// A transpose is a generic whose input map permutes the output's indices,
// so that elementwise producers and consumers fuse with it.
// CHECK-DAG: #[[$READ:.+]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @transpose(
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$READ]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.+}} : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<4x2x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat_split(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xf32>, %[[B:[^:]+]]: tensor<2x5xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x8xf32>
// CHECK: %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK: %[[I1:.+]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 5] [1, 1]
// CHECK: tensor.extract_slice %[[I1]][0, 0] [2, 6] [1, 1] : tensor<2x8xf32> to tensor<2x6xf32>
// CHECK: tensor.extract_slice %[[I1]][0, 6] [2, 2] [1, 1] : tensor<2x8xf32> to tensor<2x2xf32>
func.func @concat_split(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x6xf32>, tensor<2x2xf32>) {
  %0 = graph.concat %a, %b {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %1:2 = graph.split %0 {axis = 1 : i64, split = array<i64: 6, 2>} : (tensor<2x8xf32>) -> (tensor<2x6xf32>, tensor<2x2xf32>)
  return %1#0, %1#1 : tensor<2x6xf32>, tensor<2x2xf32>
}

// -----

// Positive steps: one extract_slice (starts clamped, negative ends counted
// from the end).
// CHECK-LABEL: func.func @slice_positive(
// CHECK: tensor.extract_slice %{{.+}}[1, 0] [3, 2] [2, 3] : tensor<7x5xf32> to tensor<3x2xf32>
func.func @slice_positive(%x: tensor<7x5xf32>) -> tensor<3x2xf32> {
  %starts = graph.constant dense<[1, -100]> : tensor<2xi64>
  %ends = graph.constant dense<[-1, 9223372036854775807]> : tensor<2xi64>
  %steps = graph.constant dense<[2, 3]> : tensor<2xi64>
  %axes = graph.constant dense<[0, 1]> : tensor<2xi64>
  %0 = graph.slice %x, %starts, %ends axes %axes steps %steps : (tensor<7x5xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Gather: the indices are read through the indexing map, wrapped when
// negative and clamped, then used to extract from the data.
// CHECK-DAG: #[[$IDX:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[DATA:[^:]+]]: tensor<2x5x3xf32>, %[[IND:[^:]+]]: tensor<4xi32>
// CHECK: linalg.generic {indexing_maps = [#[[$IDX]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[IND]] : tensor<4xi32>)
// CHECK: ^bb0(%[[I:.+]]: i32, %{{.+}}: f32):
// CHECK: %[[D0:.+]] = linalg.index 0
// CHECK: %[[D2:.+]] = linalg.index 2
// CHECK: %[[CAST:.+]] = arith.index_cast %[[I]] : i32 to index
// CHECK: arith.cmpi slt, %[[CAST]]
// CHECK: arith.select
// CHECK: arith.maxsi
// CHECK: %[[POS:.+]] = arith.minsi
// CHECK: tensor.extract %[[DATA]][%[[D0]], %[[POS]], %[[D2]]] : tensor<2x5x3xf32>
func.func @gather(%data: tensor<2x5x3xf32>, %indices: tensor<4xi32>) -> tensor<2x4x3xf32> {
  %0 = graph.gather %data, %indices {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<4xi32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// Expand broadcasts through the indexing map.
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-LABEL: func.func @expand(
// CHECK: linalg.generic {indexing_maps = [#[[$B]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.+}} : tensor<1x4xf32>) outs(%{{.+}} : tensor<2x3x4xf32>)
func.func @expand(%x: tensor<1x4xf32>) -> tensor<2x3x4xf32> {
  %shape = graph.constant dense<[2, 3, 1]> : tensor<3xi64>
  %0 = graph.expand %x, %shape : (tensor<1x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Constant padding selects the pad value outside the input.
// CHECK-LABEL: func.func @pad_constant(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3xf32>, %[[V:[^:]+]]: tensor<f32>
// CHECK: %[[PADV:.+]] = tensor.extract %[[V]][] : tensor<f32>
// CHECK: linalg.generic
// CHECK: %[[IN:.+]] = tensor.extract %[[X]]
// CHECK: arith.select %{{.+}}, %[[IN]], %[[PADV]] : f32
func.func @pad_constant(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<3x6xf32> {
  %pads = graph.constant dense<[1, 2, 0, 1]> : tensor<4xi64>
  %0 = graph.pad %x, %pads value %v : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// CHECK-LABEL: func.func @constant_of_shape(
// CHECK: %[[V:.+]] = arith.constant 7 : i32
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xi32>
// CHECK: linalg.fill ins(%[[V]] : i32) outs(%[[E]] : tensor<2x3xi32>)
func.func @constant_of_shape(%shape: tensor<2xi64>) -> tensor<2x3xi32> {
  %0 = graph.constant_of_shape %shape {value = dense<7> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// Trilu keeps j - i >= k (upper) and zeroes the rest.
// CHECK-LABEL: func.func @triu(
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.generic
// CHECK: %[[I:.+]] = linalg.index 0
// CHECK: %[[J:.+]] = linalg.index 1
// CHECK: %[[D:.+]] = arith.subi %[[J]], %[[I]]
// CHECK: %[[KEEP:.+]] = arith.cmpi sge, %[[D]]
// CHECK: arith.select %[[KEEP]], %{{.+}}, %[[ZERO]]
func.func @triu(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = graph.trilu %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Dynamic shapes are not lowered.
// CHECK-LABEL: func.func @dynamic(
// CHECK: graph.transpose
// CHECK: graph.concat
func.func @dynamic(%x: tensor<?x3xf32>) -> (tensor<3x?xf32>, tensor<?x3xf32>) {
  %0 = graph.transpose %x : (tensor<?x3xf32>) -> tensor<3x?xf32>
  %1 = graph.concat %x, %x {axis = 0 : i64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0, %1 : tensor<3x?xf32>, tensor<?x3xf32>
}
