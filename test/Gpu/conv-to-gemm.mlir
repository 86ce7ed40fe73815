// RUN: strata-opt %s --strata-conv-to-gemm | FileCheck %s

// The cuda target's convolutions without a library (ConvToGemm.cpp), all
// computed channels-last. A 3x3 convolution, stride 2, padding 1, with a
// bias: the input transposed to [N, H, W, C] and viewed as [N, HW, C]; one
// gather reads the windows of every output point with a constant index
// ([points, offsets]), a constant mask zeroes the padding, and the result
// is the columns [N * P, KK * C] as they are; one product takes the weight
// permuted to [F, K..., C] at compile time (a constant; here an argument,
// so a transpose), read as [F, KK * C] (transB), with the bias; the result
// [N * P, F] is put back as [N, F, H, W]. (The values of index and mask are
// checked by running: the conformance cases' convolutions, on the H200 and
// with this pass on the CPU, below.)
// CHECK-LABEL: func.func @conv3x3
// CHECK: %[[T:.*]] = graph.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x4x8x8xf32>) -> tensor<2x8x8x4xf32>
// CHECK: %[[FLAT:.*]] = graph.reshape %[[T]], {{.*}} -> tensor<2x64x4xf32>
// CHECK: %[[G:.*]] = graph.gather %[[FLAT]], %{{.*}} {axis = 1 : i64} : (tensor<2x64x4xf32>, tensor<16x9xi64>) -> tensor<2x16x9x4xf32>
// CHECK: %[[M:.*]] = graph.mul %[[G]], %{{.*}} : (tensor<2x16x9x4xf32>, tensor<16x9x1xf32>) -> tensor<2x16x9x4xf32>
// CHECK: %[[COLS:.*]] = graph.reshape %[[M]], {{.*}} -> tensor<32x36xf32>
// CHECK: %[[WT:.*]] = graph.transpose %arg1 {perm = array<i64: 0, 2, 3, 1>} : (tensor<6x4x3x3xf32>) -> tensor<6x3x3x4xf32>
// CHECK: %[[W:.*]] = graph.reshape %[[WT]], {{.*}} -> tensor<6x36xf32>
// CHECK: %[[Y:.*]] = graph.gemm %[[COLS]], %[[W]] bias %arg2 {transB = 1 : i64} : (tensor<32x36xf32>, tensor<6x36xf32>, tensor<6xf32>) -> tensor<32x6xf32>
// CHECK: %[[R:.*]] = graph.reshape %[[Y]], {{.*}} -> tensor<2x4x4x6xf32>
// CHECK: %[[OUT:.*]] = graph.transpose %[[R]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x4x4x6xf32>) -> tensor<2x6x4x4xf32>
// CHECK: return %[[OUT]]
func.func @conv3x3(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x4x4xf32> {
  %y = graph.conv %x, %w bias %b {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  return %y : tensor<2x6x4x4xf32>
}

// A 1x1 convolution at stride 1 without padding whose neighbours are all
// channels-first (no 3x3, strided or depthwise convolution or max pooling
// reachable through elementwise ops) keeps NCHW: per image the product
// W [F, C] . X [C, P], one batched product with the weight broadcast over
// the images and the bias added per filter; no gather, no transposes.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: graph.transpose
// CHECK: %[[X:.*]] = graph.reshape %arg0, {{.*}} -> tensor<2x4x256xf32>
// CHECK: %[[W:.*]] = graph.reshape %arg1, {{.*}} -> tensor<8x4xf32>
// CHECK: %[[P:.*]] = graph.matmul %[[W]], %[[X]] : (tensor<8x4xf32>, tensor<2x4x256xf32>) -> tensor<2x8x256xf32>
// CHECK: graph.add %[[P]], %{{.*}}
// CHECK-NOT: graph.transpose
func.func @pointwise(%x: tensor<2x4x16x16xf32>, %w: tensor<8x4x1x1xf32>, %b: tensor<8xf32>) -> tensor<2x8x16x16xf32> {
  %y = graph.conv %x, %w bias %b : (tensor<2x4x16x16xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
  return %y : tensor<2x8x16x16xf32>
}

// Fewer than 128 points per image over several images: each image's product
// would be narrower than cuBLASLt's tiles, so one product over all images'
// points, channels-last; the input is the columns (no gather).
// CHECK-LABEL: func.func @pointwise_small_maps
// CHECK-NOT: graph.gather
// CHECK: graph.gemm %{{.*}}, %{{.*}} {transB = 1 : i64} : (tensor<50x4xf32>, tensor<8x4xf32>) -> tensor<50x8xf32>
func.func @pointwise_small_maps(%x: tensor<2x4x5x5xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<2x8x5x5xf32> {
  %y = graph.conv %x, %w : (tensor<2x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<2x8x5x5xf32>
  return %y : tensor<2x8x5x5xf32>
}

// A chain as CNNs have it: conv, ReLU, conv, residual add, ReLU, global
// average pooling. The 3x3 convolution puts the chain channels-last, its
// 1x1 neighbour included. The transposes between the convolutions cancel (the
// ReLU and the add run channels-last), the ReLU and the residual add move
// next to the products that cuBLASLt's epilogue takes (on [N * P, F], no
// view between), a constant weight is permuted at compile time, and the
// pooling reduces over the points with the channels innermost: one
// transpose is left, the input's.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: graph.transpose
// CHECK-NOT: graph.transpose
// CHECK: %[[C1:.*]] = graph.gemm {{.*}} bias %arg1 {transB = 1 : i64} : (tensor<128x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<128x8xf32>
// CHECK-NEXT: %[[R1:.*]] = graph.relu %[[C1]] : (tensor<128x8xf32>) -> tensor<128x8xf32>
// CHECK: %[[C2:.*]] = graph.gemm %{{.*}}, %{{.*}} {transB = 1 : i64} : (tensor<128x72xf32>, tensor<8x72xf32>) -> tensor<128x8xf32>
// CHECK: %[[S:.*]] = graph.add %[[C2]], %[[R1]] : (tensor<128x8xf32>, tensor<128x8xf32>) -> tensor<128x8xf32>
// CHECK: %[[R2:.*]] = graph.relu %[[S]] : (tensor<128x8xf32>) -> tensor<128x8xf32>
// CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x64x8xf32>) -> tensor<2x8xf32>
// CHECK-NOT: graph.transpose
func.func @chain(%x: tensor<2x4x8x8xf32>, %b1: tensor<8xf32>) -> tensor<2x8x1x1xf32> {
  %w1 = graph.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[1.0]], [[2.0]], [[3.0]], [[5.0]]]]> : tensor<8x4x1x1xf32>
  %w2 = graph.constant dense<0.5> : tensor<8x8x3x3xf32>
  %c1 = graph.conv %x, %w1 bias %b1 : (tensor<2x4x8x8xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  %r1 = graph.relu %c1 : (tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %c2 = graph.conv %r1, %w2 {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x8x8xf32>
  %s = graph.add %c2, %r1 : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %r2 = graph.relu %s : (tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %p = graph.global_average_pool %r2 : (tensor<2x8x8x8xf32>) -> tensor<2x8x1x1xf32>
  return %p : tensor<2x8x1x1xf32>
}

// Max pooling after a convolution: the windows gathered channels-last, an
// axis per kernel dimension, the padding's offsets -inf, the largest kept.
// CHECK-LABEL: func.func @max_pool
// CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x64x4xf32>, tensor<16x3x3xi64>) -> tensor<1x16x3x3x4xf32>
// CHECK: graph.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<16x3x3x1xi1>, tensor<1x16x3x3x4xf32>, tensor<1xf32>) -> tensor<1x16x3x3x4xf32>
// CHECK: graph.reduce_max %{{.*}} {axes = array<i64: 2, 3>, keepdims = 0 : i64} : (tensor<1x16x3x3x4xf32>) -> tensor<1x16x4xf32>
func.func @max_pool(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %c = graph.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p, %i = graph.max_pool %c {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
  return %p : tensor<1x4x4x4xf32>
}

// Depthwise (group = channels): the windows [N, P, K0, K1, C] times the
// weight per offset and channel, summed over the offsets' two axes.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: graph.gemm
// CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x36x3xf32>, tensor<36x3x3xi64>) -> tensor<1x36x3x3x3xf32>
// CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<1x36x3x3x3xf32>, tensor<36x3x3x1xf32>) -> tensor<1x36x3x3x3xf32>
// CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<1x36x3x3x3xf32>, tensor<1x1x3x3x3xf32>) -> tensor<1x36x3x3x3xf32>
// CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 2, 3>, keepdims = 0 : i64} : (tensor<1x36x3x3x3xf32>) -> tensor<1x36x3xf32>
// CHECK: graph.reshape %{{.*}} -> tensor<1x6x6x3xf32>
func.func @depthwise(%x: tensor<1x3x6x6xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32> {
  %y = graph.conv %x, %w {group = 3 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x6x6xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32>
  return %y : tensor<1x3x6x6xf32>
}

// Other grouped convolutions (2 groups of 2 channels, 2 filters each): the
// windows [N, P, K0, K1, g, Cg, 1] read as [N, P, K0, K1, Cg, g, 1], times
// the weight [K0, K1, Cg, g, Fg], summed over the offsets and each group's
// channels into [N, P, g, Fg], which is [N, O..., F].
// CHECK-LABEL: func.func @grouped
// CHECK-NOT: graph.conv
// CHECK: graph.reshape %{{.*}} -> tensor<1x36x2x2x1xf32>
// CHECK: %[[G:.*]] = graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x36x2x2x1xf32>, tensor<16x3x3xi64>) -> tensor<1x16x3x3x2x2x1xf32>
// CHECK: %[[GT:.*]] = graph.transpose %[[G]] {perm = array<i64: 0, 1, 2, 3, 5, 4, 6>}
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 3, 4, 2, 0, 1>} : (tensor<2x2x2x3x3xf32>) -> tensor<3x3x2x2x2xf32>
// CHECK: graph.mul %[[GT]], %{{.*}} : (tensor<1x16x3x3x2x2x1xf32>, tensor<1x1x3x3x2x2x2xf32>) -> tensor<1x16x3x3x2x2x2xf32>
// CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 2, 3, 4>, keepdims = 0 : i64} : (tensor<1x16x3x3x2x2x2xf32>) -> tensor<1x16x2x2xf32>
// CHECK: graph.reshape %{{.*}} : (tensor<1x16x2x2xf32>, tensor<4xi64>) -> tensor<1x4x4x4xf32>
// CHECK-NOT: graph.conv
func.func @grouped(%x: tensor<1x4x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %y = graph.conv %x, %w {group = 2 : i64} : (tensor<1x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// The rewrite's values: conformance cases' convolutions through the pass and
// then the CPU stages, against their stored outputs (strides with asymmetric
// padding, SAME padding, dilation, 1-D and 3-D, depthwise, depthwise with
// a channel multiplier, grouped).
// RUN: rm -rf %t && mkdir -p %t
// RUN: for c in node/test_conv_with_strides_and_asymmetric_padding node/test_conv_with_autopad_same pytorch-converted/test_Conv2d_dilated pytorch-converted/test_Conv1d_stride pytorch-converted/test_Conv3d_stride pytorch-converted/test_Conv2d_depthwise pytorch-converted/test_Conv2d_depthwise_with_multiplier pytorch-converted/test_Conv2d_groups; do bash %S/Inputs/rewrite_on_cpu.sh strata-conv-to-gemm %onnx_testdata/$c %t graph.conv graph.gemm graph.gather || exit 1; done | FileCheck %s --check-prefix=ONCPU
// ONCPU: test_conv_with_strides_and_asymmetric_padding: 0 graph.conv, 1 graph.gemm, 1 graph.gather
// ONCPU: test_conv_with_autopad_same: 0 graph.conv, 1 graph.gemm, 1 graph.gather
// ONCPU: test_Conv2d_dilated: 0 graph.conv, 1 graph.gemm, 1 graph.gather
// ONCPU: test_Conv1d_stride: 0 graph.conv, 1 graph.gemm, 1 graph.gather
// ONCPU: test_Conv3d_stride: 0 graph.conv, 1 graph.gemm, 1 graph.gather
// ONCPU: test_Conv2d_depthwise: 0 graph.conv, 0 graph.gemm, 1 graph.gather
// ONCPU: test_Conv2d_depthwise_with_multiplier: 0 graph.conv, 0 graph.gemm, 1 graph.gather
// ONCPU: test_Conv2d_groups: 0 graph.conv, 0 graph.gemm, 1 graph.gather

// Depthwise and grouped convolutions at real sizes (bench/gpu/depthwise.py:
// 3x3 at 56x56 and at stride 2, 5x5, 7x7, each padded; ResNeXt's 32 groups of
// 4, RegNet's groups of 8 at stride 2, two groups of 64; against float64),
// the same way.
// RUN: %python %S/../../bench/gpu/depthwise.py %t/dw > /dev/null
// RUN: for c in dw3_mbv2 dw3_s2 dw5_effnet dw7_convnext g32_resnext g8_regnet_s2 g2_wide; do bash %S/Inputs/rewrite_on_cpu.sh strata-conv-to-gemm %t/dw/$c %t graph.conv graph.gemm graph.gather || exit 1; done | FileCheck %s --check-prefix=DW
// DW: dw3_mbv2: 0 graph.conv, 0 graph.gemm, 1 graph.gather
// DW: dw3_s2: 0 graph.conv, 0 graph.gemm, 1 graph.gather
// DW: dw5_effnet: 0 graph.conv, 0 graph.gemm, 1 graph.gather
// DW: dw7_convnext: 0 graph.conv, 0 graph.gemm, 1 graph.gather
// DW: g32_resnext: 0 graph.conv, 0 graph.gemm, 1 graph.gather
// DW: g8_regnet_s2: 0 graph.conv, 0 graph.gemm, 1 graph.gather
// DW: g2_wide: 0 graph.conv, 0 graph.gemm, 1 graph.gather
//
// On the GPU the gather, the mask, the weight and the sum are one kernel,
// each thread 4 consecutive channels of an output point (docs/gpu.md,
// "Reductions of many points").
// RUN: strata compile %t/dw/dw7_convnext/model.onnx --target=cuda --compile-to=gpu --no-cache -o - | FileCheck %s --check-prefix=DWGPU
// DWGPU: func.func private @strata_per_fused_gather_mul_reduce_sum_add_{{[0-9]+}}({{.*}}gpu_reason = "one reduction: 294 block(s) of 256 threads per kernel; the reduction's result finished by one elementwise op in the same thread; each thread 4 consecutive output points, their 49 reduced elements in one loop; its windows' index and padding computed from the loops, not loaded (strata-gpu-window-indices)"{{.*}}strata.launch = #strata.launch<elementwise, grid = [294, 1, 1]
//
// A grouped convolution is one such kernel too, the bias added per group's
// filters and the ReLU after it applied by the thread that summed the point
// (ResNeXt's groups of 4: each thread 4 consecutive filters of a group); as
// a convolution it was one thread block for the whole tensor.
// RUN: strata compile %t/dw/g32_resnext/model.onnx --target=cuda --compile-to=gpu --no-cache -o - | FileCheck %s --check-prefix=GROUPEDGPU
// GROUPEDGPU-NOT: block_ops
// GROUPEDGPU: func.func private @strata_per_fused_gather_mul_transpose_reduce_sum_etc2_{{[0-9]+}}({{.*}}gpu_reason = "one reduction: 392 block(s) of 256 threads per kernel; the reduction's result finished by one elementwise op in the same thread; each thread 4 consecutive output points, their 36 reduced elements in one loop; its windows' index and padding computed from the loops, not loaded (strata-gpu-window-indices)"
// GROUPEDGPU-NOT: block_ops
