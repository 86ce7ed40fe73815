// RUN: strata-opt --strata-convert-graph-to-linalg %s -split-input-file | FileCheck %s --enable-var-scope

// Matmul, gemm, convolution, pooling and batch normalization on static
// shapes become linalg named ops where one fits, generics otherwise.

// A batch of rows against one matrix: one linalg.matmul on collapsed rows.
// CHECK-LABEL: func.func @matmul_rows(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3x4xf32>, %[[B:[^:]+]]: tensor<4x5xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<6x5xf32>)
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[ROWS]], %[[B]] : tensor<6x4xf32>, tensor<4x5xf32>) outs(%[[INIT]] : tensor<6x5xf32>)
// CHECK: tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [2, 3, 5]
func.func @matmul_rows(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// Equal batch dims: batch_matmul; f16 accumulates in f32, rounded once.
// CHECK-LABEL: func.func @matmul_batched_f16(
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<6x3x4xf16>, tensor<6x4x5xf16>) outs(%{{.+}} : tensor<6x3x5xf32>)
// CHECK: linalg.generic
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @matmul_batched_f16(%a: tensor<2x3x3x4xf16>, %b: tensor<2x3x4x5xf16>) -> tensor<2x3x3x5xf16> {
  %0 = graph.matmul %a, %b : (tensor<2x3x3x4xf16>, tensor<2x3x4x5xf16>) -> tensor<2x3x3x5xf16>
  return %0 : tensor<2x3x3x5xf16>
}

// -----

// Broadcast batch dims: a generic contraction reading index 0 of size-1
// batch dims. 1-D operands are promoted and the added axes dropped.
// CHECK-DAG: #[[$LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul_broadcast(
// CHECK: linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-LABEL: func.func @matmul_vector(
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x4xf32>, tensor<4x5xf32>)
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<1x5xf32> into tensor<5xf32>
func.func @matmul_broadcast(%a: tensor<1x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = graph.matmul %a, %b : (tensor<1x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}
func.func @matmul_vector(%a: tensor<4xf32>, %b: tensor<4x5xf32>) -> tensor<5xf32> {
  %0 = graph.matmul %a, %b : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Gemm: transposes, matmul, then alpha * AB + beta * C with C broadcast.
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gemm(
// CHECK: linalg.transpose ins(%{{.+}} : tensor<4x3xf32>) outs(%{{.+}} : tensor<3x4xf32>) permutation = [1, 0]
// CHECK: %[[MM:.+]] = linalg.matmul
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$C]], #{{.+}}], {{.*}} ins(%[[MM]], %{{.+}} : tensor<3x5xf32>, tensor<5xf32>)
// CHECK: %[[ALPHA:.+]] = arith.constant 2.500000e-01 : f32
// CHECK: arith.mulf %{{.+}}, %[[ALPHA]]
// CHECK: %[[BETA:.+]] = arith.constant 3.500000e-01 : f32
// CHECK: arith.mulf %{{.+}}, %[[BETA]]
// CHECK: arith.addf
func.func @gemm(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %c: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = graph.gemm %a, %b bias %c {alpha = 0.25 : f32, beta = 0.35 : f32, transA = 1 : i64} : (tensor<4x3xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Conv: pad the input (fill + insert_slice), start from the bias, then the
// named convolution; groups split the channel axes.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x3x5x5xf32>, %[[W:[^:]+]]: tensor<4x3x3x3xf32>, %[[B:[^:]+]]: tensor<4xf32>
// CHECK: %[[PADDED:.+]] = tensor.insert_slice %[[X]] into %{{.+}}[0, 0, 1, 1] [1, 3, 5, 5] [1, 1, 1, 1] : tensor<1x3x5x5xf32> into tensor<1x3x7x7xf32>
// CHECK: %[[INIT:.+]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4xf32>) outs(%{{.+}} : tensor<1x4x3x3xf32>)
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PADDED]], %[[W]] : tensor<1x3x7x7xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x3x3xf32>)
// CHECK-LABEL: func.func @conv_grouped(
// CHECK: linalg.conv_2d_ngchw_gfchw {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x2x2x5x5xf32>, tensor<2x3x2x3x3xf32>) outs(%{{.+}} : tensor<1x2x3x3x3xf32>)
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x3x3xf32> into tensor<1x6x3x3xf32>
// CHECK-LABEL: func.func @conv_1d(
// CHECK: linalg.conv_1d_ncw_fcw
func.func @conv(%x: tensor<1x3x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x3x3xf32> {
  %0 = graph.conv %x, %w bias %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}
func.func @conv_grouped(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %0 = graph.conv %x, %w {group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}
func.func @conv_1d(%x: tensor<1x2x8xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x6xf32> {
  %0 = graph.conv %x, %w : (tensor<1x2x8xf32>, tensor<3x2x3xf32>) -> tensor<1x3x6xf32>
  return %0 : tensor<1x3x6xf32>
}

// -----

// Max pooling pads with -inf (here for ceil_mode's last window) and uses
// the named op; its unused indices are not computed.
// CHECK-LABEL: func.func @max_pool(
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PADDED:.+]] = tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x5x5xf32>
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PADDED]], %{{.+}} : tensor<1x2x5x5xf32>, tensor<3x3xf32>)
// CHECK-LABEL: func.func @max_pool_indices(
// CHECK: linalg.generic {{.*}} outs(%{{.+}}, %{{.+}} : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
// CHECK-NOT: graph.max_pool
func.func @max_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %0:2 = graph.max_pool %x {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  return %0#0 : tensor<1x2x2x2xf32>
}
func.func @max_pool_indices(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xi64> {
  %0:2 = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  return %0#1 : tensor<1x2x2x2xi64>
}

// -----

// Average pooling divides the window sums by a constant per output
// position: 4 inside, 2 and 1 where the padding is excluded.
// CHECK-LABEL: func.func @average_pool(
// CHECK: %[[SUM:.+]] = linalg.pooling_nchw_sum
// CHECK: %[[COUNT:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[COUNT]] : tensor<1x1x2x2xf32>, tensor<2x2xf32>)
// CHECK: arith.divf
func.func @average_pool(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %0 = graph.average_pool %x {kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// CHECK-LABEL: func.func @global_average_pool(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: %[[N:.+]] = arith.constant 2.000000e+01 : f32
// CHECK: arith.divf %{{.+}}, %[[N]]
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2, 3]] output_shape [2, 3, 1, 1]
func.func @global_average_pool(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32> {
  %0 = graph.global_average_pool %x : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  return %0 : tensor<2x3x1x1xf32>
}

// -----

// Inference batch normalization: one generic reading the per-channel
// parameters at d1; the running statistics are the inputs.
// CHECK-DAG: #[[$CH:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @batch_norm(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>, %{{[^:]+}}: tensor<3xf32>, %{{[^:]+}}: tensor<3xf32>, %[[MEAN:[^:]+]]: tensor<3xf32>, %[[VAR:[^:]+]]: tensor<3xf32>
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[$CH]], #[[$CH]], #[[$CH]], #[[$CH]], #{{.+}}]
// CHECK: math.rsqrt
// CHECK: return %[[Y]], %[[MEAN]], %[[VAR]]
func.func @batch_norm(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = graph.batch_norm %x, %s, %b, %m, %v : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}
