// RUN: strata-opt %s --strata-graph-infer-shapes | FileCheck %s
// The NN ops' shape functions refine unknown result types.

// CHECK-LABEL: func @refine
func.func @refine(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %wt: tensor<4x3x2x2xf32>,
                  %seq: tensor<7x2x5xf32>, %lw: tensor<2x12x5xf32>, %lr: tensor<2x12x3xf32>,
                  %a: tensor<3x4xf32>, %b: tensor<4x6xf32>, %sig: tensor<1x16x1xf32>,
                  %boxes: tensor<1x5x4xf32>, %scores: tensor<1x1x5xf32>) {
  // CHECK: graph.conv {{.*}} -> tensor<2x8x5x5xf32>
  %0 = graph.conv %x, %w {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<*xf32>
  // CHECK: graph.conv_transpose {{.*}} -> tensor<2x3x19x19xf32>
  %1 = graph.conv_transpose %x, %wt {strides = array<i64: 2, 2>, output_padding = array<i64: 1, 1>}
      : (tensor<2x4x9x9xf32>, tensor<4x3x2x2xf32>) -> tensor<*xf32>
  // CHECK: graph.max_pool {{.*}} -> (tensor<2x4x5x5xf32>, tensor<2x4x5x5xi64>)
  %2:2 = graph.max_pool %x {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<2x4x9x9xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  // CHECK: graph.average_pool {{.*}} -> tensor<2x4x3x3xf32>
  %3 = graph.average_pool %x {auto_pad = "SAME_LOWER", kernel_shape = array<i64: 3, 3>, strides = array<i64: 3, 3>}
      : (tensor<2x4x9x9xf32>) -> tensor<*xf32>
  // CHECK: graph.lstm {{.*}} -> (tensor<7x2x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x3xf32>)
  %4:3 = graph.lstm %seq, %lw, %lr {direction = "bidirectional", hidden_size = 3 : i64}
      : (tensor<7x2x5xf32>, tensor<2x12x5xf32>, tensor<2x12x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  // CHECK: graph.einsum {{.*}} -> tensor<6x3xf32>
  %5 = graph.einsum %a, %b {equation = "ij,jk->ki"} : (tensor<3x4xf32>, tensor<4x6xf32>) -> tensor<*xf32>
  // CHECK: graph.dft {{.*}} -> tensor<1x9x2xf32>
  %6 = graph.dft %sig {onesided = 1 : i64} : (tensor<1x16x1xf32>) -> tensor<*xf32>
  %step = graph.constant dense<4> : tensor<i64>
  %len = graph.constant dense<8> : tensor<i64>
  // CHECK: graph.stft {{.*}} -> tensor<1x3x5x2xf32>
  %7 = graph.stft %sig, %step frame_length %len : (tensor<1x16x1xf32>, tensor<i64>, tensor<i64>) -> tensor<*xf32>
  // CHECK: graph.non_max_suppression {{.*}} -> tensor<?x3xi64>
  %8 = graph.non_max_suppression %boxes, %scores : (tensor<1x5x4xf32>, tensor<1x1x5xf32>) -> tensor<*xi64>
  return
}
