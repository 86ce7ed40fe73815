// RUN: strata-opt %s -split-input-file | strata-opt | FileCheck %s
// Round trip of the neural-network ops.

// CHECK-LABEL: func @convolutions
func.func @convolutions(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>,
                        %wt: tensor<4x3x3x3xf32>) -> (tensor<1x6x4x4xf32>, tensor<1x6x17x17xf32>, tensor<1x6x10x10xf32>) {
  // CHECK: graph.conv %{{.*}}, %{{.*}} bias %{{.*}} {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %0 = graph.conv %x, %w bias %b {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  // CHECK: graph.conv_transpose %{{.*}}, %{{.*}} {group = 2 : i64, strides = array<i64: 2, 2>}
  %1 = graph.conv_transpose %x, %wt {group = 2 : i64, strides = array<i64: 2, 2>}
      : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x17x17xf32>
  // CHECK: graph.conv_transpose {{.*}}output_shape = array<i64: 10, 10>
  %2 = graph.conv_transpose %x, %wt {group = 2 : i64, output_shape = array<i64: 10, 10>}
      : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x10x10xf32>
  return %0, %1, %2 : tensor<1x6x4x4xf32>, tensor<1x6x17x17xf32>, tensor<1x6x10x10xf32>
}

// -----

// CHECK-LABEL: func @quantized_convolutions
func.func @quantized_convolutions(%x: tensor<1x1x3x3xui8>, %w: tensor<1x1x2x2xui8>, %zp: tensor<ui8>,
                                  %s: tensor<f32>, %bias: tensor<1xi32>) -> (tensor<1x1x2x2xi32>, tensor<1x1x2x2xui8>) {
  // CHECK: graph.conv_integer %{{.*}}, %{{.*}} input_zero_point %{{.*}} :
  %0 = graph.conv_integer %x, %w input_zero_point %zp
      : (tensor<1x1x3x3xui8>, tensor<1x1x2x2xui8>, tensor<ui8>) -> tensor<1x1x2x2xi32>
  // CHECK: graph.qlinear_conv {{.*}} bias %{{.*}} :
  %1 = graph.qlinear_conv %x, %s, %zp, %w, %s, %zp, %s, %zp bias %bias
      : (tensor<1x1x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<1x1x2x2xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>, tensor<1xi32>) -> tensor<1x1x2x2xui8>
  return %0, %1 : tensor<1x1x2x2xi32>, tensor<1x1x2x2xui8>
}

// -----

// CHECK-LABEL: func @pooling
func.func @pooling(%x: tensor<1x3x32x32xf32>, %d: tensor<?x3x?x?xf32>) {
  // CHECK: graph.max_pool %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x32x32xf32>) -> (tensor<1x3x16x16xf32>, tensor<1x3x16x16xi64>)
  %0:2 = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x3x32x32xf32>) -> (tensor<1x3x16x16xf32>, tensor<1x3x16x16xi64>)
  // CHECK: graph.max_pool {{.*}}ceil_mode = 1
  %1:2 = graph.max_pool %x {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, storage_order = 1 : i64}
      : (tensor<1x3x32x32xf32>) -> (tensor<1x3x16x16xf32>, tensor<1x3x16x16xi64>)
  // CHECK: graph.average_pool {{.*}}count_include_pad = 1
  %2 = graph.average_pool %x {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x32xf32>
  // CHECK: graph.average_pool {{.*}}auto_pad = "SAME_UPPER"
  %3 = graph.average_pool %d {auto_pad = "SAME_UPPER", kernel_shape = array<i64: 3, 3>}
      : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>
  // CHECK: graph.lp_pool {{.*}}p = 3
  %4 = graph.lp_pool %x {kernel_shape = array<i64: 4, 4>, p = 3 : i64, strides = array<i64: 4, 4>}
      : (tensor<1x3x32x32xf32>) -> tensor<1x3x8x8xf32>
  // CHECK: graph.global_average_pool
  %5 = graph.global_average_pool %x : (tensor<1x3x32x32xf32>) -> tensor<1x3x1x1xf32>
  // CHECK: graph.global_max_pool
  %6 = graph.global_max_pool %d : (tensor<?x3x?x?xf32>) -> tensor<?x3x1x1xf32>
  // CHECK: graph.global_lp_pool {{.*}}p = 1
  %7 = graph.global_lp_pool %x {p = 1 : i64} : (tensor<1x3x32x32xf32>) -> tensor<1x3x1x1xf32>
  // CHECK: graph.max_unpool %{{.*}}, %{{.*}} {kernel_shape
  %8 = graph.max_unpool %0#0, %0#1 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x3x16x16xf32>, tensor<1x3x16x16xi64>) -> tensor<1x3x32x32xf32>
  return
}

// -----

// CHECK-LABEL: func @unpool_output_shape
func.func @unpool_output_shape(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x5x5xf32> {
  %shape = graph.constant dense<[1, 1, 5, 5]> : tensor<4xi64>
  // CHECK: graph.max_unpool %{{.*}}, %{{.*}} output_shape %{{.*}} {kernel_shape
  %0 = graph.max_unpool %x, %i output_shape %shape {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

// CHECK-LABEL: func @regions
func.func @regions(%x: tensor<1x8x16x16xf32>, %rois5: tensor<3x5xf32>, %rois4: tensor<3x4xf32>,
                   %idx: tensor<3xi64>) -> (tensor<3x8x2x2xf32>, tensor<3x8x5x5xf32>) {
  // CHECK: graph.max_roi_pool {{.*}}pooled_shape = array<i64: 2, 2>
  %0 = graph.max_roi_pool %x, %rois5 {pooled_shape = array<i64: 2, 2>, spatial_scale = 5.000000e-01 : f32}
      : (tensor<1x8x16x16xf32>, tensor<3x5xf32>) -> tensor<3x8x2x2xf32>
  // CHECK: graph.roi_align {{.*}}mode = "max"
  %1 = graph.roi_align %x, %rois4, %idx {mode = "max", output_height = 5 : i64, output_width = 5 : i64, sampling_ratio = 2 : i64}
      : (tensor<1x8x16x16xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x8x5x5xf32>
  return %0, %1 : tensor<3x8x2x2xf32>, tensor<3x8x5x5xf32>
}

// -----

// CHECK-LABEL: func @normalizations
func.func @normalizations(%x: tensor<2x6x4x4xf32>, %c: tensor<6xf32>, %g: tensor<3xf32>) {
  // CHECK: graph.lrn {{.*}}size = 3
  %0 = graph.lrn %x {size = 3 : i64, alpha = 2.000000e-04 : f32} : (tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  // CHECK: graph.batch_norm {{.*}} -> (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>)
  %1:3 = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 1.000000e-03 : f32, training_mode = 1 : i64}
      : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>)
  // CHECK: graph.instance_norm
  %2 = graph.instance_norm %x, %c, %c : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  // CHECK: graph.group_norm {{.*}}num_groups = 3
  %3 = graph.group_norm %x, %g, %g {num_groups = 3 : i64} : (tensor<2x6x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x6x4x4xf32>
  // CHECK: graph.group_norm {{.*}}num_groups = 2
  %4 = graph.group_norm %x, %c, %c {num_groups = 2 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  // CHECK: graph.mean_variance_norm {{.*}}axes = array<i64: 0, 2, 3>
  %5 = graph.mean_variance_norm %x {axes = array<i64: 0, 2, 3>} : (tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32>
  return
}

// -----

// CHECK-LABEL: func @recurrent
func.func @recurrent(%x: tensor<5x2x3xf32>, %w1: tensor<1x4x3xf32>, %r1: tensor<1x4x4xf32>,
                     %w3: tensor<2x12x3xf32>, %r3: tensor<2x12x4xf32>, %b3: tensor<2x24xf32>,
                     %lens: tensor<2xi32>, %h2: tensor<2x2x4xf32>,
                     %w4: tensor<1x16x3xf32>, %r4: tensor<1x16x4xf32>, %h1: tensor<1x2x4xf32>,
                     %p: tensor<1x12xf32>, %xb: tensor<2x5x3xf32>) {
  // CHECK: graph.rnn %{{.*}}, %{{.*}}, %{{.*}} {activations = ["Relu"], hidden_size = 4 : i64}
  %0:2 = graph.rnn %x, %w1, %r1 {activations = ["Relu"], hidden_size = 4 : i64}
      : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  // CHECK: graph.gru {{.*}} bias %{{.*}} sequence_lens %{{.*}} initial_h %{{.*}} {clip = 3.000000e+00 : f32, direction = "bidirectional"
  %1:2 = graph.gru %x, %w3, %r3 bias %b3 sequence_lens %lens initial_h %h2 {direction = "bidirectional", hidden_size = 4 : i64, linear_before_reset = 1 : i64, clip = 3.000000e+00 : f32}
      : (tensor<5x2x3xf32>, tensor<2x12x3xf32>, tensor<2x12x4xf32>, tensor<2x24xf32>, tensor<2xi32>, tensor<2x2x4xf32>) -> (tensor<5x2x2x4xf32>, tensor<2x2x4xf32>)
  // CHECK: graph.lstm {{.*}} initial_c %{{.*}} peepholes %{{.*}} {
  %2:3 = graph.lstm %x, %w4, %r4 initial_h %h1 initial_c %h1 peepholes %p {hidden_size = 4 : i64, input_forget = 1 : i64,
      activations = ["Sigmoid", "Tanh", "HardSigmoid"], activation_alpha = array<f32: 1.0, 2.0>}
      : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x12xf32>)
      -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  // CHECK: graph.lstm {{.*}}layout = 1
  %3:3 = graph.lstm %xb, %w4, %r4 {hidden_size = 4 : i64, layout = 1 : i64}
      : (tensor<2x5x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (tensor<2x5x1x4xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>)
  return
}

// -----

// CHECK-LABEL: func @linear_algebra
func.func @linear_algebra(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %m: tensor<7x3x3xf32>,
                          %v: tensor<4xf32>) {
  // CHECK: graph.einsum %{{.*}}, %{{.*}} {equation = "bij,bjk->bik"}
  %0 = graph.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // Implicit output: letters used once, alphabetically.
  // CHECK: graph.einsum {{.*}}equation = "...ij"}{{.*}} -> tensor<7x3x3xf32>
  %1 = graph.einsum %m {equation = "...ij"} : (tensor<7x3x3xf32>) -> tensor<7x3x3xf32>
  // CHECK: graph.einsum {{.*}}equation = "...ii->...i"
  %2 = graph.einsum %m {equation = "...ii->...i"} : (tensor<7x3x3xf32>) -> tensor<7x3xf32>
  // CHECK: graph.einsum {{.*}}equation = "i,i"
  %3 = graph.einsum %v, %v {equation = "i,i"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  // CHECK: graph.det
  %4 = graph.det %m : (tensor<7x3x3xf32>) -> tensor<7xf32>
  return
}

// -----

// CHECK-LABEL: func @quantization
func.func @quantization(%x: tensor<2x3xf32>, %s: tensor<f32>, %zp: tensor<i8>, %s3: tensor<3xf32>,
                        %zp3: tensor<3xui8>, %q: tensor<2x3xi8>, %a: tensor<4x2xui8>, %b: tensor<2x3xi8>,
                        %uzp: tensor<ui8>) {
  // CHECK: graph.quantize_linear %{{.*}}, %{{.*}} zero_point %{{.*}} : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %0 = graph.quantize_linear %x, %s zero_point %zp : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  // CHECK: graph.quantize_linear %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xui8>
  %1 = graph.quantize_linear %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xui8>
  // The default axis (1) is elided.
  // CHECK: graph.quantize_linear %{{.*}}, %{{.*}} zero_point %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
  %2 = graph.quantize_linear %x, %s3 zero_point %zp3 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
  // CHECK: graph.dequantize_linear
  %3 = graph.dequantize_linear %q, %s zero_point %zp : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  // CHECK: graph.dynamic_quantize_linear
  %4:3 = graph.dynamic_quantize_linear %x : (tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>)
  // CHECK: graph.matmul_integer %{{.*}}, %{{.*}} lhs_zero_point %{{.*}} rhs_zero_point %{{.*}} :
  %5 = graph.matmul_integer %a, %b lhs_zero_point %uzp rhs_zero_point %zp
      : (tensor<4x2xui8>, tensor<2x3xi8>, tensor<ui8>, tensor<i8>) -> tensor<4x3xi32>
  // CHECK: graph.qlinear_matmul
  %6 = graph.qlinear_matmul %a, %s, %uzp, %b, %s, %zp, %s, %uzp
      : (tensor<4x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x3xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  return
}

// -----

// CHECK-LABEL: func @sampling_and_signal
func.func @sampling_and_signal(%x: tensor<1x2x4x4xf32>, %grid: tensor<1x6x6x2xf32>,
                               %boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>,
                               %max: tensor<1xi64>, %iou: tensor<1xf32>,
                               %sig: tensor<3x10x1xf32>, %window: tensor<4xf32>) {
  // CHECK: graph.grid_sample {{.*}}mode = "nearest"
  %0 = graph.grid_sample %x, %grid {align_corners = 1 : i64, mode = "nearest", padding_mode = "border"}
      : (tensor<1x2x4x4xf32>, tensor<1x6x6x2xf32>) -> tensor<1x2x6x6xf32>
  // CHECK: graph.non_max_suppression %{{.*}}, %{{.*}} max_output_boxes_per_class %{{.*}} iou_threshold %{{.*}} {center_point_box = 1 : i64} : {{.*}} -> tensor<?x3xi64>
  %1 = graph.non_max_suppression %boxes, %scores max_output_boxes_per_class %max iou_threshold %iou {center_point_box = 1 : i64}
      : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<?x3xi64>
  // CHECK: graph.dft %{{.*}} {onesided = 1 : i64}
  %2 = graph.dft %sig {onesided = 1 : i64} : (tensor<3x10x1xf32>) -> tensor<3x6x2xf32>
  %len = graph.constant dense<16> : tensor<i64>
  // CHECK: graph.dft %{{.*}} length %{{.*}} {inverse = 1 : i64}
  %3 = graph.dft %sig length %len {inverse = 1 : i64} : (tensor<3x10x1xf32>, tensor<i64>) -> tensor<3x16x2xf32>
  %step = graph.constant dense<2> : tensor<i64>
  // CHECK: graph.stft %{{.*}}, %{{.*}} window %{{.*}} :
  %4 = graph.stft %sig, %step window %window : (tensor<3x10x1xf32>, tensor<i64>, tensor<4xf32>) -> tensor<3x4x3x2xf32>
  // CHECK: graph.stft %{{.*}}, %{{.*}} frame_length %{{.*}} {onesided = 0 : i64}
  %5 = graph.stft %sig, %step frame_length %step {onesided = 0 : i64} : (tensor<3x10x1xf32>, tensor<i64>, tensor<i64>) -> tensor<3x5x2x2xf32>
  %bins = graph.constant dense<8> : tensor<i64>
  %rate = graph.constant dense<8000> : tensor<i64>
  %lo = graph.constant dense<0.0> : tensor<f32>
  %hi = graph.constant dense<4000.0> : tensor<f32>
  // CHECK: graph.mel_weight_matrix {{.*}} -> tensor<9x8xf32>
  %6 = graph.mel_weight_matrix %bins, %len, %rate, %lo, %hi
      : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<9x8xf32>
  return
}

// -----

// Unranked operands: what can be known is inferred, the rest stays unknown.
// CHECK-LABEL: func @unranked
func.func @unranked(%x: tensor<*xf32>, %i: tensor<*xi64>, %q: tensor<*xui8>, %s: tensor<*xf32>,
                    %i32: tensor<*xi32>) {
  // CHECK: graph.conv
  %0 = graph.conv %x, %x {auto_pad = "SAME_UPPER"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  // CHECK: graph.conv_transpose
  %1 = graph.conv_transpose %x, %x : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  // CHECK: graph.conv_integer
  %2 = graph.conv_integer %q, %q : (tensor<*xui8>, tensor<*xui8>) -> tensor<*xi32>
  // CHECK: graph.qlinear_conv
  %3 = graph.qlinear_conv %q, %s, %q, %q, %s, %q, %s, %q : (tensor<*xui8>, tensor<*xf32>, tensor<*xui8>, tensor<*xui8>, tensor<*xf32>, tensor<*xui8>, tensor<*xf32>, tensor<*xui8>) -> tensor<*xui8>
  // CHECK: graph.max_pool
  %4:2 = graph.max_pool %x {kernel_shape = array<i64: 2, 2>} : (tensor<*xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  // CHECK: graph.global_average_pool
  %5 = graph.global_average_pool %x : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: graph.max_unpool
  %6 = graph.max_unpool %x, %i output_shape %i {kernel_shape = array<i64: 2, 2>} : (tensor<*xf32>, tensor<*xi64>, tensor<*xi64>) -> tensor<*xf32>
  // CHECK: graph.roi_align {{.*}} -> tensor<?x?x1x1xf32>
  %7 = graph.roi_align %x, %x, %i : (tensor<*xf32>, tensor<*xf32>, tensor<*xi64>) -> tensor<?x?x1x1xf32>
  // CHECK: graph.batch_norm {{.*}} -> (tensor<*xf32>, tensor<?xf32>, tensor<?xf32>)
  %8:3 = graph.batch_norm %x, %x, %x, %x, %x : (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) -> (tensor<*xf32>, tensor<?xf32>, tensor<?xf32>)
  // CHECK: graph.group_norm
  %9 = graph.group_norm %x, %x, %x {num_groups = 2 : i64} : (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  // CHECK: graph.lstm {{.*}} -> (tensor<?x1x?x4xf32>, tensor<1x?x4xf32>, tensor<1x?x4xf32>)
  %10:3 = graph.lstm %x, %x, %x {hidden_size = 4 : i64} : (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) -> (tensor<?x1x?x4xf32>, tensor<1x?x4xf32>, tensor<1x?x4xf32>)
  // CHECK: graph.einsum {{.*}} -> tensor<?x?xf32>
  %11 = graph.einsum %x, %x {equation = "ij,jk->ik"} : (tensor<*xf32>, tensor<*xf32>) -> tensor<?x?xf32>
  // CHECK: graph.det
  %12 = graph.det %x : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: graph.matmul_integer
  %13 = graph.matmul_integer %q, %q : (tensor<*xui8>, tensor<*xui8>) -> tensor<*xi32>
  // CHECK: graph.dequantize_linear
  %14 = graph.dequantize_linear %i32, %s : (tensor<*xi32>, tensor<*xf32>) -> tensor<*xf32>
  // CHECK: graph.grid_sample
  %15 = graph.grid_sample %x, %x : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  // CHECK: graph.dft
  %16 = graph.dft %x length %i : (tensor<*xf32>, tensor<*xi64>) -> tensor<*xf32>
  // CHECK: graph.stft {{.*}} -> tensor<?x?x?x2xf32>
  %17 = graph.stft %x, %i window %x : (tensor<*xf32>, tensor<*xi64>, tensor<*xf32>) -> tensor<?x?x?x2xf32>
  // CHECK: graph.mel_weight_matrix {{.*}} -> tensor<?x?xf32>
  %18 = graph.mel_weight_matrix %i, %i, %i, %s, %s : (tensor<*xi64>, tensor<*xi64>, tensor<*xi64>, tensor<*xf32>, tensor<*xf32>) -> tensor<?x?xf32>
  // CHECK: graph.non_max_suppression
  %19 = graph.non_max_suppression %x, %x : (tensor<*xf32>, tensor<*xf32>) -> tensor<?x3xi64>
  return
}
