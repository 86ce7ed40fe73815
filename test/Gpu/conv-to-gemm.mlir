// RUN: strata-opt %s --strata-conv-to-gemm | FileCheck %s

// The cuda target's convolutions without a library (ConvToGemm.cpp).
// A 3x3 convolution, stride 2, padding 1, with a bias: one gather reads the
// windows of every output point from the flattened input with a constant
// index ([points, offsets]), a constant mask zeroes the padding, a transpose
// makes the columns [N * P, C * KK], and one product takes the weight as it
// is, read as [F, C * KK] (transB), with the bias; the result is put back as
// [N, F, H, W]. (The values of index and mask are checked by running: the
// conformance cases' convolutions, on the H200 and with this pass on the CPU.)
// CHECK-LABEL: func.func @conv3x3
// CHECK: %[[FLAT:.*]] = graph.reshape %arg0, {{.*}} -> tensor<2x4x64xf32>
// CHECK: %[[IDX:.*]] = graph.constant {{.*}} : tensor<16x9xi64>
// CHECK: %[[G:.*]] = graph.gather %[[FLAT]], %[[IDX]] {axis = 2 : i64} : (tensor<2x4x64xf32>, tensor<16x9xi64>) -> tensor<2x4x16x9xf32>
// CHECK: %[[MASK:.*]] = graph.constant {{.*}} : tensor<16x9xf32>
// CHECK: %[[M:.*]] = graph.mul %[[G]], %[[MASK]]
// CHECK: %[[T:.*]] = graph.transpose %[[M]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x16x9xf32>) -> tensor<2x16x4x9xf32>
// CHECK: %[[COLS:.*]] = graph.reshape %[[T]], {{.*}} -> tensor<32x36xf32>
// CHECK: %[[W:.*]] = graph.reshape %arg1, {{.*}} -> tensor<6x36xf32>
// CHECK: %[[Y:.*]] = graph.gemm %[[COLS]], %[[W]] bias %arg2 {transB = 1 : i64} : (tensor<32x36xf32>, tensor<6x36xf32>, tensor<6xf32>) -> tensor<32x6xf32>
// CHECK: %[[R:.*]] = graph.reshape %[[Y]], {{.*}} -> tensor<2x4x4x6xf32>
// CHECK: %[[OUT:.*]] = graph.transpose %[[R]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x4x4x6xf32>) -> tensor<2x6x4x4xf32>
// CHECK: return %[[OUT]]
func.func @conv3x3(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x4x4xf32> {
  %y = graph.conv %x, %w bias %b {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  return %y : tensor<2x6x4x4xf32>
}

// A 1x1 convolution at stride 1 reads the input in place: no gather.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: graph.gather
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x25x1xf32>) -> tensor<2x25x4x1xf32>
// CHECK: graph.gemm {{.*}} {transB = 1 : i64} : (tensor<50x4xf32>, tensor<8x4xf32>) -> tensor<50x8xf32>
func.func @pointwise(%x: tensor<2x4x5x5xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<2x8x5x5xf32> {
  %y = graph.conv %x, %w : (tensor<2x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x5x5xf32>
  return %y : tensor<2x8x5x5xf32>
}

// Depthwise (group = channels): the same windows, then a sum over the
// offsets of each offset's column times its weight per channel.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: graph.gemm
// CHECK: graph.gather
// CHECK-COUNT-9: graph.mul %{{.*}}, %{{.*}} : (tensor<1x3x36xf32>, tensor<3x1xf32>) -> tensor<1x3x36xf32>
// CHECK: graph.reshape %{{.*}} -> tensor<1x3x6x6xf32>
func.func @depthwise(%x: tensor<1x3x6x6xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32> {
  %y = graph.conv %x, %w {group = 3 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x6x6xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32>
  return %y : tensor<1x3x6x6xf32>
}

// Other grouped convolutions stay convolutions.
// CHECK-LABEL: func.func @grouped
// CHECK: graph.conv
func.func @grouped(%x: tensor<1x4x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %y = graph.conv %x, %w {group = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// The rewrite's values: conformance cases' convolutions through the pass and
// then the CPU stages, against their stored outputs (strides with asymmetric
// padding, SAME padding, dilation, 1-D and 3-D, depthwise; a depthwise one
// with a channel multiplier and a grouped one stay convolutions).
// RUN: rm -rf %t && mkdir -p %t
// RUN: for c in node/test_conv_with_strides_and_asymmetric_padding node/test_conv_with_autopad_same pytorch-converted/test_Conv2d_dilated pytorch-converted/test_Conv1d_stride pytorch-converted/test_Conv3d_stride pytorch-converted/test_Conv2d_depthwise pytorch-converted/test_Conv2d_depthwise_with_multiplier pytorch-converted/test_Conv2d_groups; do bash %S/Inputs/conv_to_gemm_on_cpu.sh %onnx_testdata/$c %t || exit 1; done | FileCheck %s --check-prefix=ONCPU
// ONCPU: test_conv_with_strides_and_asymmetric_padding: 0 conv left, 1 gemm, 1 gather
// ONCPU: test_conv_with_autopad_same: 0 conv left, 1 gemm, 1 gather
// ONCPU: test_Conv2d_dilated: 0 conv left, 1 gemm, 1 gather
// ONCPU: test_Conv1d_stride: 0 conv left, 1 gemm, 1 gather
// ONCPU: test_Conv3d_stride: 0 conv left, 1 gemm, 1 gather
// ONCPU: test_Conv2d_depthwise: 0 conv left, 0 gemm, 1 gather
// ONCPU: test_Conv2d_depthwise_with_multiplier: 1 conv left, 0 gemm, 0 gather
// ONCPU: test_Conv2d_groups: 1 conv left, 0 gemm, 0 gather
