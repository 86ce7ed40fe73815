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

// A 1x1 convolution at stride 1 without padding reads every input point in
// place. With at least 128 output points per image it is one batched product
// per image, W [F, C] . X [C, P] in NCHW order, the weight broadcast over the
// images and the bias added per filter: no gather and no transposes.
// CHECK-LABEL: func.func @pointwise_wide
// CHECK-NOT: graph.transpose
// CHECK: %[[X:.*]] = graph.reshape %arg0, {{.*}} -> tensor<2x4x256xf32>
// CHECK: %[[W:.*]] = graph.reshape %arg1, {{.*}} -> tensor<8x4xf32>
// CHECK: %[[P:.*]] = graph.matmul %[[W]], %[[X]] : (tensor<8x4xf32>, tensor<2x4x256xf32>) -> tensor<2x8x256xf32>
// CHECK: %[[B:.*]] = graph.reshape %arg2, {{.*}} -> tensor<8x1xf32>
// CHECK: %[[S:.*]] = graph.add %[[P]], %[[B]]
// CHECK: graph.reshape %[[S]], {{.*}} -> tensor<2x8x16x16xf32>
// CHECK-NOT: graph.transpose
func.func @pointwise_wide(%x: tensor<2x4x16x16xf32>, %w: tensor<8x4x1x1xf32>, %b: tensor<8xf32>) -> tensor<2x8x16x16xf32> {
  %y = graph.conv %x, %w bias %b : (tensor<2x4x16x16xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
  return %y : tensor<2x8x16x16xf32>
}

// With one image the two forms multiply the same matrices: the batched one,
// without the transposes, at any size.
// CHECK-LABEL: func.func @pointwise_one_image
// CHECK-NOT: graph.transpose
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<1x4x25xf32>) -> tensor<1x8x25xf32>
func.func @pointwise_one_image(%x: tensor<1x4x5x5xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<1x8x5x5xf32> {
  %y = graph.conv %x, %w : (tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x5x5xf32>
  return %y : tensor<1x8x5x5xf32>
}

// Fewer points per image over several images: each image's product would be
// narrower than cuBLASLt's tiles, so im2col's one product over all images'
// points, its input read in place (no gather).
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: graph.gather
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x25x1xf32>) -> tensor<2x25x4x1xf32>
// CHECK: graph.gemm {{.*}} {transB = 1 : i64} : (tensor<50x4xf32>, tensor<8x4xf32>) -> tensor<50x8xf32>
func.func @pointwise(%x: tensor<2x4x5x5xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<2x8x5x5xf32> {
  %y = graph.conv %x, %w : (tensor<2x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x5x5xf32>
  return %y : tensor<2x8x5x5xf32>
}

// Depthwise (group = channels): the windows offset-major (index and mask
// [KK, P]) times the weight per channel and offset, summed over the offsets.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: graph.gemm
// CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<1x3x36xf32>, tensor<9x36xi64>) -> tensor<1x3x9x36xf32>
// CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<1x3x9x36xf32>, tensor<9x36xf32>) -> tensor<1x3x9x36xf32>
// CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<1x3x9x36xf32>, tensor<1x3x9x1xf32>) -> tensor<1x3x9x36xf32>
// CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 2>, keepdims = 0 : i64} : (tensor<1x3x9x36xf32>) -> tensor<1x3x36xf32>
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

// Depthwise convolutions at real sizes (bench/gpu/depthwise.py: 3x3 at 56x56
// and at stride 2, 5x5, 7x7, each padded, against float64), the same way.
// RUN: %python %S/../../bench/gpu/depthwise.py %t/dw > /dev/null
// RUN: for c in dw3_mbv2 dw3_s2 dw5_effnet dw7_convnext; do bash %S/Inputs/conv_to_gemm_on_cpu.sh %t/dw/$c %t || exit 1; done | FileCheck %s --check-prefix=DW
// DW: dw3_mbv2: 0 conv left, 0 gemm, 1 gather
// DW: dw3_s2: 0 conv left, 0 gemm, 1 gather
// DW: dw5_effnet: 0 conv left, 0 gemm, 1 gather
// DW: dw7_convnext: 0 conv left, 0 gemm, 1 gather
//
// On the GPU the gather, the mask, the weight and the sum are one kernel,
// one thread per output point (docs/gpu.md, "Reductions of many points").
// RUN: strata compile %t/dw/dw7_convnext/model.onnx --target=cuda --compile-to=gpu --no-cache -o - | FileCheck %s --check-prefix=DWGPU
// DWGPU: func.func private @strata_per_fused_gather_mul_reduce_sum_{{[0-9]+}}({{.*}}gpu_reason = "one reduction: 1176 block(s) of 256 threads per kernel; each thread one output point, its 49 reduced elements in a loop"{{.*}}strata.launch = #strata.launch<elementwise, grid = [1176, 1, 1]
