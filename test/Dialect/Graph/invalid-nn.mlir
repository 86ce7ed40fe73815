// RUN: strata-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the neural-network ops.

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+1 {{input has 4 channels but the weight 'tensor<6x3x3x3xf32>' expects 3 x group 1}}
  %0 = graph.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_group_output(%x: tensor<1x4x8x8xf32>, %w: tensor<5x2x3x3xf32>) {
  // expected-error @+1 {{output channels 5 are not divisible by group 2}}
  %0 = graph.conv %x, %w {group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<5x2x3x3xf32>) -> tensor<1x5x6x6xf32>
  return
}

// -----

func.func @conv_group_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{group must be positive, got 0}}
  %0 = graph.conv %x, %w {group = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_strides_length(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{strides has 1 entries, expected 2 for 2 spatial axes}}
  %0 = graph.conv %x, %w {strides = array<i64: 2>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x?x?xf32>
  return
}

// -----

func.func @conv_pads_length(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{pads has 2 entries, expected 4 for 2 spatial axes}}
  %0 = graph.conv %x, %w {pads = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x?x?xf32>
  return
}

// -----

func.func @conv_negative_pad(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{pads entries must be >= 0, got -1}}
  %0 = graph.conv %x, %w {pads = array<i64: -1, 0, 0, 0>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x?x?xf32>
  return
}

// -----

func.func @conv_auto_pad(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{unknown auto_pad "SAME" (expected one of NOTSET, SAME_UPPER, SAME_LOWER, VALID)}}
  %0 = graph.conv %x, %w {auto_pad = "SAME"} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv_pads_with_auto_pad(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{pads cannot be combined with auto_pad "SAME_UPPER"}}
  %0 = graph.conv %x, %w {auto_pad = "SAME_UPPER", pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv_kernel_shape(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{kernel_shape entry 2 differs from the weight's spatial size 3 along axis 0}}
  %0 = graph.conv %x, %w {kernel_shape = array<i64: 2, 3>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_window_too_large(%x: tensor<1x4x2x2xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{window of size 3 (with dilation) does not fit the padded input of size 2 along spatial axis 0}}
  %0 = graph.conv %x, %w : (tensor<1x4x2x2xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x?x?xf32>
  return
}

// -----

func.func @conv_rank(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{input must have rank >= 3, got rank 2}}
  %0 = graph.conv %x, %w : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{bias must be 1-D with 4 entries, got 'tensor<3xf32>'}}
  %0 = graph.conv %x, %w bias %b : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_result(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{result #0 has type 'tensor<1x4x8x8xf32>', incompatible with the inferred type 'tensor<1x4x6x6xf32>'}}
  %0 = graph.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<3x3x3x3xf32>) {
  // expected-error @+1 {{input has 4 channels but the weight 'tensor<3x3x3x3xf32>' expects 3}}
  %0 = graph.conv_transpose %x, %w : (tensor<1x4x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{output_padding has 1 entries, expected 2 for 2 spatial axes}}
  %0 = graph.conv_transpose %x, %w {output_padding = array<i64: 1>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return
}

// -----

func.func @conv_transpose_output_shape(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{output_shape entry 4 is smaller than the input size 8 along spatial axis 0}}
  %0 = graph.conv_transpose %x, %w {output_shape = array<i64: 4, 4>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @conv_integer_zero_point(%x: tensor<1x1x3x3xui8>, %w: tensor<1x1x2x2xui8>, %zp: tensor<i8>) {
  // expected-error @+1 {{input_zero_point element type 'i8' differs from the data's 'ui8'}}
  %0 = graph.conv_integer %x, %w input_zero_point %zp : (tensor<1x1x3x3xui8>, tensor<1x1x2x2xui8>, tensor<i8>) -> tensor<1x1x2x2xi32>
  return
}

// -----

func.func @qlinear_conv_scale(%x: tensor<1x1x3x3xui8>, %w: tensor<1x1x2x2xui8>, %zp: tensor<ui8>, %s: tensor<f32>, %s2: tensor<2xf32>) {
  // expected-error @+1 {{input_scale and output_scale must be scalars}}
  %0 = graph.qlinear_conv %x, %s2, %zp, %w, %s, %zp, %s, %zp
      : (tensor<1x1x3x3xui8>, tensor<2xf32>, tensor<ui8>, tensor<1x1x2x2xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x2x2xui8>
  return
}

// -----

func.func @pool_rank(%x: tensor<1x3x8xf32>) {
  // expected-error @+1 {{input rank 3 does not match kernel_shape of 2 spatial axes (rank 4 expected)}}
  %0 = graph.average_pool %x {kernel_shape = array<i64: 2, 2>} : (tensor<1x3x8xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{kernel_shape entries must be >= 1, got 0}}
  %0 = graph.average_pool %x {kernel_shape = array<i64: 0, 2>} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @pool_stride(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{strides entries must be >= 1, got 0}}
  %0:2 = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}

// -----

func.func @pool_storage_order(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{storage_order must be 0 or 1, got 2}}
  %0:2 = graph.max_pool %x {kernel_shape = array<i64: 2, 2>, storage_order = 2 : i64} : (tensor<1x3x8x8xf32>) -> (tensor<1x3x7x7xf32>, tensor<1x3x7x7xi64>)
  return
}

// -----

func.func @pool_ceil_mode(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{ceil_mode must be 0 or 1, got 3}}
  %0 = graph.average_pool %x {kernel_shape = array<i64: 2, 2>, ceil_mode = 3 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @pool_count_include_pad(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{count_include_pad must be 0 or 1, got 2}}
  %0 = graph.average_pool %x {kernel_shape = array<i64: 2, 2>, count_include_pad = 2 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @lp_pool_p(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{p must be >= 1, got 0}}
  %0 = graph.lp_pool %x {kernel_shape = array<i64: 2, 2>, p = 0 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @pool_empty_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{kernel_shape must not be empty}}
  %0 = graph.lp_pool %x {kernel_shape = array<i64>} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @pool_result_type(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{result element type differs from the input's}}
  %0 = graph.average_pool %x {kernel_shape = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf16>
  return
}

// -----

func.func @global_pool_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{input must have rank >= 2 (N, C, ...), got 'tensor<8xf32>'}}
  %0 = graph.global_average_pool %x : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @global_lp_pool_p(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{p must be >= 1, got 0}}
  %0 = graph.global_lp_pool %x {p = 0 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32>
  return
}

// -----

func.func @max_unpool_indices(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x3x3xi64>) {
  // expected-error @+1 {{indices 'tensor<1x1x3x3xi64>' must have the input's shape 'tensor<1x1x2x2xf32>'}}
  %0 = graph.max_unpool %x, %i {kernel_shape = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xi64>) -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @max_unpool_output_shape(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>, %s: tensor<3xi64>) {
  // expected-error @+1 {{output_shape must be 1-D with 4 entries, got 'tensor<3xi64>'}}
  %0 = graph.max_unpool %x, %i output_shape %s {kernel_shape = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<3xi64>) -> tensor<*xf32>
  return
}

// -----

func.func @max_roi_pool_rois(%x: tensor<1x8x16x16xf32>, %rois: tensor<3x4xf32>) {
  // expected-error @+1 {{rois must be (num_rois, 5), got 'tensor<3x4xf32>'}}
  %0 = graph.max_roi_pool %x, %rois {pooled_shape = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>, tensor<3x4xf32>) -> tensor<3x8x2x2xf32>
  return
}

// -----

func.func @max_roi_pool_shape(%x: tensor<1x8x16x16xf32>, %rois: tensor<3x5xf32>) {
  // expected-error @+1 {{pooled_shape must have 2 entries, got 1}}
  %0 = graph.max_roi_pool %x, %rois {pooled_shape = array<i64: 2>} : (tensor<1x8x16x16xf32>, tensor<3x5xf32>) -> tensor<3x8x2x2xf32>
  return
}

// -----

func.func @roi_align_mode(%x: tensor<1x8x16x16xf32>, %rois: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{unknown mode "min" (expected one of avg, max)}}
  %0 = graph.roi_align %x, %rois, %i {mode = "min"} : (tensor<1x8x16x16xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x8x1x1xf32>
  return
}

// -----

func.func @roi_align_indices(%x: tensor<1x8x16x16xf32>, %rois: tensor<3x4xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{batch_indices must be 1-D with 3 entries, got 'tensor<2xi64>'}}
  %0 = graph.roi_align %x, %rois, %i : (tensor<1x8x16x16xf32>, tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x8x1x1xf32>
  return
}

// -----

func.func @roi_align_input(%x: tensor<8x16x16xf32>, %rois: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{input must be 4-D (N, C, H, W), got 'tensor<8x16x16xf32>'}}
  %0 = graph.roi_align %x, %rois, %i : (tensor<8x16x16xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x?x1x1xf32>
  return
}

// -----

func.func @lrn_size(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{size must be >= 1, got 0}}
  %0 = graph.lrn %x {size = 0 : i64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @batch_norm_scale(%x: tensor<2x6x4x4xf32>, %c: tensor<6xf32>, %s: tensor<5xf32>) {
  // expected-error @+1 {{scale must be 1-D with 6 entries, got 'tensor<5xf32>'}}
  %0:3 = graph.batch_norm %x, %s, %c, %c, %c : (tensor<2x6x4x4xf32>, tensor<5xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>)
  return
}

// -----

func.func @batch_norm_training_mode(%x: tensor<2x6x4x4xf32>, %c: tensor<6xf32>) {
  // expected-error @+1 {{training_mode must be 0 or 1, got 2}}
  %0:3 = graph.batch_norm %x, %c, %c, %c, %c {training_mode = 2 : i64} : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>)
  return
}

// -----

func.func @batch_norm_stats_types(%x: tensor<2x6x4x4xf32>, %c: tensor<6xf32>, %h: tensor<6xf16>) {
  // expected-error @+1 {{input_mean and input_var element types differ}}
  %0:3 = graph.batch_norm %x, %c, %c, %c, %h : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf16>) -> (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>)
  return
}

// -----

func.func @instance_norm_bias(%x: tensor<2x6x4x4xf32>, %c: tensor<6xf32>, %b: tensor<6x1xf32>) {
  // expected-error @+1 {{bias must be 1-D with 6 entries, got 'tensor<6x1xf32>'}}
  %0 = graph.instance_norm %x, %c, %b : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6x1xf32>) -> tensor<2x6x4x4xf32>
  return
}

// -----

func.func @group_norm_groups(%x: tensor<2x6x4x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{channels 6 are not divisible by num_groups 4}}
  %0 = graph.group_norm %x, %g, %g {num_groups = 4 : i64} : (tensor<2x6x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x6x4x4xf32>
  return
}

// -----

func.func @group_norm_scale(%x: tensor<2x6x4x4xf32>, %g: tensor<4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{scale must be 1-D with num_groups or channels entries, got 'tensor<4xf32>'}}
  %0 = graph.group_norm %x, %g, %c {num_groups = 3 : i64} : (tensor<2x6x4x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x6x4x4xf32>
  return
}

// -----

func.func @group_norm_zero(%x: tensor<2x6x4x4xf32>, %g: tensor<6xf32>) {
  // expected-error @+1 {{num_groups must be >= 1, got 0}}
  %0 = graph.group_norm %x, %g, %g {num_groups = 0 : i64} : (tensor<2x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4x4xf32>
  return
}

// -----

func.func @mvn_axes(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{axis 3 is out of range for rank 3}}
  %0 = graph.mean_variance_norm %x {axes = array<i64: 0, 2, 3>} : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  return
}

// -----

func.func @mvn_repeated(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{axis -1 is repeated}}
  %0 = graph.mean_variance_norm %x {axes = array<i64: 2, -1>} : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  return
}

// -----

func.func @rnn_direction(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) {
  // expected-error @+1 {{unknown direction "backward" (expected one of forward, reverse, bidirectional)}}
  %0:2 = graph.rnn %x, %w, %r {direction = "backward", hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @rnn_weight(%x: tensor<5x2x3xf32>, %w: tensor<1x8x3xf32>, %r: tensor<1x4x4xf32>) {
  // expected-error @+1 {{weight must have shape 1x4x3, got 'tensor<1x8x3xf32>'}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x8x3xf32>, tensor<1x4x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @rnn_activations(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) {
  // expected-error @+1 {{expected 1 activations (1 per direction), got 2}}
  %0:2 = graph.rnn %x, %w, %r {activations = ["Tanh", "Tanh"], hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @rnn_activation_name(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) {
  // expected-error @+1 {{unknown activation "Gelu"}}
  %0:2 = graph.rnn %x, %w, %r {activations = ["Gelu"], hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @rnn_hidden(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) {
  // expected-error @+1 {{hidden_size must be >= 1, got 0}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 0 : i64} : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @gru_bias(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>, %b: tensor<1x12xf32>) {
  // expected-error @+1 {{bias must have shape 1x24, got 'tensor<1x12xf32>'}}
  %0:2 = graph.gru %x, %w, %r bias %b {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>, tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @gru_linear_before_reset(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>) {
  // expected-error @+1 {{linear_before_reset must be 0 or 1, got 2}}
  %0:2 = graph.gru %x, %w, %r {hidden_size = 4 : i64, linear_before_reset = 2 : i64} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @lstm_initial_c(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %c: tensor<1x3x4xf32>) {
  // expected-error @+1 {{initial_c must have shape 1x2x4, got 'tensor<1x3x4xf32>'}}
  %0:3 = graph.lstm %x, %w, %r initial_c %c {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x3x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @lstm_clip(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) {
  // expected-error @+1 {{clip must be positive}}
  %0:3 = graph.lstm %x, %w, %r {hidden_size = 4 : i64, clip = -1.0 : f32} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @lstm_input_rank(%x: tensor<5x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) {
  // expected-error @+1 {{input must be 3-D, got 'tensor<5x3xf32>'}}
  %0:3 = graph.lstm %x, %w, %r {hidden_size = 4 : i64} : (tensor<5x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @einsum_operands(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{equation "ij,jk->ik" has 2 input terms but the op has 1 operands}}
  %0 = graph.einsum %a {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @einsum_rank(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{operand #0 has rank 2 but its einsum term has 3 letters}}
  %0 = graph.einsum %a {equation = "ijk->i"} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @einsum_sizes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{einsum letter 'j' has sizes 3 and 4}}
  %0 = graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @einsum_character(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{invalid character '1' in einsum term "i1"}}
  %0 = graph.einsum %a {equation = "i1"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @einsum_output_letter(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{einsum output letter 'k' does not appear in any input}}
  %0 = graph.einsum %a {equation = "ij->k"} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @einsum_ellipsis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{malformed ellipsis in einsum term "..i"}}
  %0 = graph.einsum %a {equation = "..i"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @einsum_repeated_output(%a: tensor<2x2xf32>) {
  // expected-error @+1 {{einsum output letter 'i' is repeated}}
  %0 = graph.einsum %a {equation = "ij->ii"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @einsum_output_ellipsis(%a: tensor<2x2xf32>) {
  // expected-error @+1 {{the einsum output has an ellipsis but no input does}}
  %0 = graph.einsum %a {equation = "ij->...i"} : (tensor<2x2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @det_square(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{input matrices must be square, got 'tensor<2x3xf32>'}}
  %0 = graph.det %a : (tensor<2x3xf32>) -> tensor<f32>
  return
}

// -----

func.func @det_rank(%a: tensor<3xf32>) {
  // expected-error @+1 {{input must have rank >= 2, got 'tensor<3xf32>'}}
  %0 = graph.det %a : (tensor<3xf32>) -> tensor<f32>
  return
}

// -----

func.func @matmul_integer_shapes(%a: tensor<4x2xui8>, %b: tensor<3x3xui8>) {
  // expected-error @+1 {{operand shapes 'tensor<4x2xui8>' and 'tensor<3x3xui8>' are not matmul-compatible}}
  %0 = graph.matmul_integer %a, %b : (tensor<4x2xui8>, tensor<3x3xui8>) -> tensor<4x3xi32>
  return
}

// -----

func.func @matmul_integer_zero_point(%a: tensor<4x2xui8>, %b: tensor<2x3xui8>, %zp: tensor<5xui8>) {
  // expected-error @+1 {{lhs_zero_point must be 1-D with 4 entries, got 'tensor<5xui8>'}}
  %0 = graph.matmul_integer %a, %b lhs_zero_point %zp : (tensor<4x2xui8>, tensor<2x3xui8>, tensor<5xui8>) -> tensor<4x3xi32>
  return
}

// -----

func.func @qlinear_matmul_output_zero_point(%a: tensor<4x2xui8>, %s: tensor<f32>, %zp: tensor<ui8>, %izp: tensor<i8>) {
  // expected-error @+1 {{output_zero_point element type 'i8' differs from the data's 'ui8'}}
  %0 = graph.qlinear_matmul %a, %s, %zp, %a, %s, %zp, %s, %izp
      : (tensor<4x2xui8>, tensor<f32>, tensor<ui8>, tensor<4x2xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<i8>) -> tensor<4x2xui8>
  return
}

// -----

func.func @quantize_result(%x: tensor<2x3xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{result element type must be 'ui8' (the zero point's, or ui8 without one)}}
  %0 = graph.quantize_linear %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi8>
  return
}

// -----

func.func @quantize_axis(%x: tensor<2x3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.quantize_linear %x, %s {axis = 2 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xui8>
  return
}

// -----

func.func @quantize_scale_size(%x: tensor<2x3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{scale has 3 entries but the input has 2 along axis 0}}
  %0 = graph.quantize_linear %x, %s {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xui8>
  return
}

// -----

func.func @quantize_scale_rank(%x: tensor<2x3xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{scale must be a scalar or 1-D, got 'tensor<2x3xf32>'}}
  %0 = graph.quantize_linear %x, %s : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xui8>
  return
}

// -----

func.func @dequantize_zero_point(%x: tensor<2x3xi8>, %s: tensor<3xf32>, %zp: tensor<i8>) {
  // expected-error @+1 {{zero_point 'tensor<i8>' must have the scale's shape 'tensor<3xf32>'}}
  %0 = graph.dequantize_linear %x, %s zero_point %zp : (tensor<2x3xi8>, tensor<3xf32>, tensor<i8>) -> tensor<2x3xf32>
  return
}

// -----

func.func @dequantize_zero_point_type(%x: tensor<2x3xi8>, %s: tensor<f32>, %zp: tensor<ui8>) {
  // expected-error @+1 {{zero_point element type differs from the input's 'i8'}}
  %0 = graph.dequantize_linear %x, %s zero_point %zp : (tensor<2x3xi8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  return
}

// -----

func.func @grid_sample_grid(%x: tensor<1x2x4x4xf32>, %g: tensor<1x6x6x3xf32>) {
  // expected-error @+1 {{grid must be (N, D_out..., 2) for input 'tensor<1x2x4x4xf32>', got 'tensor<1x6x6x3xf32>'}}
  %0 = graph.grid_sample %x, %g : (tensor<1x2x4x4xf32>, tensor<1x6x6x3xf32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

func.func @grid_sample_mode(%x: tensor<1x2x4x4xf32>, %g: tensor<1x6x6x2xf32>) {
  // expected-error @+1 {{unknown padding_mode "wrap" (expected one of zeros, border, reflection)}}
  %0 = graph.grid_sample %x, %g {padding_mode = "wrap"} : (tensor<1x2x4x4xf32>, tensor<1x6x6x2xf32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

func.func @grid_sample_batch(%x: tensor<1x2x4x4xf32>, %g: tensor<2x6x6x2xf32>) {
  // expected-error @+1 {{input and grid batch sizes differ}}
  %0 = graph.grid_sample %x, %g : (tensor<1x2x4x4xf32>, tensor<2x6x6x2xf32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

func.func @nms_boxes(%b: tensor<1x6x5xf32>, %s: tensor<1x2x6xf32>) {
  // expected-error @+1 {{boxes must be (batch, boxes, 4), got 'tensor<1x6x5xf32>'}}
  %0 = graph.non_max_suppression %b, %s : (tensor<1x6x5xf32>, tensor<1x2x6xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_counts(%b: tensor<1x6x4xf32>, %s: tensor<1x2x5xf32>) {
  // expected-error @+1 {{boxes 'tensor<1x6x4xf32>' and scores 'tensor<1x2x5xf32>' disagree on the batch or box count}}
  %0 = graph.non_max_suppression %b, %s : (tensor<1x6x4xf32>, tensor<1x2x5xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_threshold(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %t: tensor<2xf32>) {
  // expected-error @+1 {{iou_threshold must be a scalar, got 'tensor<2xf32>'}}
  %0 = graph.non_max_suppression %b, %s iou_threshold %t : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<2xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_result(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>) {
  // expected-error @+1 {{result #0 has type 'tensor<?x2xi64>', incompatible with the inferred type 'tensor<?x3xi64>'}}
  %0 = graph.non_max_suppression %b, %s : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<?x2xi64>
  return
}

// -----

func.func @dft_axis(%x: tensor<3x10x1xf32>) {
  // expected-error @+1 {{axis 2 must name a signal axis of the rank-3 input}}
  %0 = graph.dft %x {axis = 2 : i64} : (tensor<3x10x1xf32>) -> tensor<3x10x2xf32>
  return
}

// -----

func.func @dft_inverse_onesided(%x: tensor<3x10x1xf32>) {
  // expected-error @+1 {{inverse and onesided cannot both be set}}
  %0 = graph.dft %x {inverse = 1 : i64, onesided = 1 : i64} : (tensor<3x10x1xf32>) -> tensor<3x6x2xf32>
  return
}

// -----

func.func @dft_complex(%x: tensor<3x10x3xf32>) {
  // expected-error @+1 {{input must be (batch, signal..., 1 or 2), got 'tensor<3x10x3xf32>'}}
  %0 = graph.dft %x : (tensor<3x10x3xf32>) -> tensor<3x10x2xf32>
  return
}

// -----

func.func @dft_length(%x: tensor<3x10x1xf32>) {
  %len = graph.constant dense<0> : tensor<i64>
  // expected-error @+1 {{dft_length must be positive, got 0}}
  %0 = graph.dft %x length %len : (tensor<3x10x1xf32>, tensor<i64>) -> tensor<3x?x2xf32>
  return
}

// -----

func.func @stft_frame_length(%x: tensor<3x10x1xf32>, %w: tensor<4xf32>) {
  %step = graph.constant dense<2> : tensor<i64>
  %len = graph.constant dense<5> : tensor<i64>
  // expected-error @+1 {{frame_length 5 differs from the window size 4}}
  %0 = graph.stft %x, %step window %w frame_length %len : (tensor<3x10x1xf32>, tensor<i64>, tensor<4xf32>, tensor<i64>) -> tensor<3x?x?x2xf32>
  return
}

// -----

func.func @stft_too_long(%x: tensor<3x10x1xf32>, %w: tensor<12xf32>) {
  %step = graph.constant dense<2> : tensor<i64>
  // expected-error @+1 {{frame length 12 exceeds the signal length 10}}
  %0 = graph.stft %x, %step window %w : (tensor<3x10x1xf32>, tensor<i64>, tensor<12xf32>) -> tensor<3x?x?x2xf32>
  return
}

// -----

func.func @stft_signal(%x: tensor<3x10xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{signal must be (batch, length, 1 or 2), got 'tensor<3x10xf32>'}}
  %0 = graph.stft %x, %step : (tensor<3x10xf32>, tensor<i64>) -> tensor<3x?x?x2xf32>
  return
}

// -----

func.func @stft_step(%x: tensor<3x10x1xf32>) {
  %step = graph.constant dense<0> : tensor<i64>
  // expected-error @+1 {{frame_step must be positive, got 0}}
  %0 = graph.stft %x, %step : (tensor<3x10x1xf32>, tensor<i64>) -> tensor<3x?x?x2xf32>
  return
}

// -----

func.func @mel_operands(%n: tensor<2xi64>, %l: tensor<i64>, %r: tensor<i64>, %lo: tensor<f32>, %hi: tensor<f32>) {
  // expected-error @+1 {{operands must be scalars, got 'tensor<2xi64>'}}
  %0 = graph.mel_weight_matrix %n, %l, %r, %lo, %hi : (tensor<2xi64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @mel_edges(%n: tensor<i64>, %lo: tensor<f32>, %hi: tensor<f16>) {
  // expected-error @+1 {{lower_edge_hertz and upper_edge_hertz must be floats of one type}}
  %0 = graph.mel_weight_matrix %n, %n, %n, %lo, %hi : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f16>) -> tensor<?x?xf32>
  return
}

// -----

func.func @conv_element_types(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf16>) {
  // expected-error @+1 {{input, weight and bias element types differ}}
  %0 = graph.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_weight_rank(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3xf32>) {
  // expected-error @+1 {{weight rank 3 differs from input rank 4}}
  %0 = graph.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_input_group(%x: tensor<1x5x8x8xf32>, %w: tensor<4x?x3x3xf32>) {
  // expected-error @+1 {{input channels 5 are not divisible by group 2}}
  %0 = graph.conv %x, %w {group = 2 : i64} : (tensor<1x5x8x8xf32>, tensor<4x?x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_transpose_empty(%x: tensor<1x4x1x1xf32>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{the output would be empty along spatial axis 0 (pads exceed the transposed window)}}
  %0 = graph.conv_transpose %x, %w {pads = array<i64: 1, 0, 0, 0>} : (tensor<1x4x1x1xf32>, tensor<4x3x1x1xf32>) -> tensor<1x3x?x1xf32>
  return
}

// -----

func.func @conv_transpose_group(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x3x3xf32>) {
  // expected-error @+1 {{input channels 3 are not divisible by group 2}}
  %0 = graph.conv_transpose %x, %w {group = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x6x10x10xf32>
  return
}

// -----

func.func @conv_transpose_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must be 1-D with 3 entries, got 'tensor<4xf32>'}}
  %0 = graph.conv_transpose %x, %w bias %b : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x3x10x10xf32>
  return
}

// -----

func.func @qlinear_conv_weight_scale(%x: tensor<1x2x3x3xui8>, %w: tensor<4x2x2x2xui8>, %zp: tensor<ui8>, %s: tensor<f32>, %ws: tensor<3xf32>) {
  // expected-error @+1 {{weight_scale must be 1-D with 4 entries, got 'tensor<3xf32>'}}
  %0 = graph.qlinear_conv %x, %s, %zp, %w, %ws, %zp, %s, %zp
      : (tensor<1x2x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<4x2x2x2xui8>, tensor<3xf32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xui8>
  return
}

// -----

func.func @qlinear_conv_zero_point(%x: tensor<1x2x3x3xui8>, %w: tensor<4x2x2x2xui8>, %zp: tensor<ui8>, %s: tensor<f32>, %xzp: tensor<2xui8>) {
  // expected-error @+1 {{input_zero_point must be a scalar, got 'tensor<2xui8>'}}
  %0 = graph.qlinear_conv %x, %s, %xzp, %w, %s, %zp, %s, %zp
      : (tensor<1x2x3x3xui8>, tensor<f32>, tensor<2xui8>, tensor<4x2x2x2xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x2x2xui8>
  return
}

// -----

func.func @pool_window(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{window of size 5 (with dilation) does not fit the padded input of size 2 along spatial axis 0}}
  %0:2 = graph.max_pool %x {kernel_shape = array<i64: 3, 1>, dilations = array<i64: 2, 1>} : (tensor<1x3x2x2xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}

// -----

func.func @pool_pads_auto_pad(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{pads cannot be combined with auto_pad "VALID"}}
  %0 = graph.average_pool %x {auto_pad = "VALID", kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @max_unpool_empty(%x: tensor<1x1x1x1xf32>, %i: tensor<1x1x1x1xi64>) {
  // expected-error @+1 {{the output would be empty along spatial axis 0}}
  %0 = graph.max_unpool %x, %i {kernel_shape = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 0>} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xi64>) -> tensor<*xf32>
  return
}

// -----

func.func @max_unpool_output_shape_value(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) {
  %s = graph.constant dense<[1, 1, 0, 4]> : tensor<4xi64>
  // expected-error @+1 {{output_shape entries must be positive, got 0}}
  %0 = graph.max_unpool %x, %i output_shape %s {kernel_shape = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<*xf32>
  return
}

// -----

func.func @max_roi_pool_size(%x: tensor<1x8x16x16xf32>, %rois: tensor<3x5xf32>) {
  // expected-error @+1 {{output size must be positive, got 0 x 2}}
  %0 = graph.max_roi_pool %x, %rois {pooled_shape = array<i64: 0, 2>} : (tensor<1x8x16x16xf32>, tensor<3x5xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @max_roi_pool_types(%x: tensor<1x8x16x16xf32>, %rois: tensor<3x5xf16>) {
  // expected-error @+1 {{rois element type differs from the input's}}
  %0 = graph.max_roi_pool %x, %rois {pooled_shape = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>, tensor<3x5xf16>) -> tensor<3x8x2x2xf32>
  return
}

// -----

func.func @roi_align_transformation(%x: tensor<1x8x16x16xf32>, %rois: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{unknown coordinate_transformation_mode "align_corners"}}
  %0 = graph.roi_align %x, %rois, %i {coordinate_transformation_mode = "align_corners"} : (tensor<1x8x16x16xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x8x1x1xf32>
  return
}

// -----

func.func @roi_align_sampling(%x: tensor<1x8x16x16xf32>, %rois: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{sampling_ratio must be >= 0, got -1}}
  %0 = graph.roi_align %x, %rois, %i {sampling_ratio = -1 : i64} : (tensor<1x8x16x16xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x8x1x1xf32>
  return
}

// -----

func.func @lrn_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{input must have rank >= 2 (N, C, ...), got 'tensor<4xf32>'}}
  %0 = graph.lrn %x {size = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @batch_norm_scale_bias(%x: tensor<2x6xf32>, %c: tensor<6xf32>, %h: tensor<6xf16>) {
  // expected-error @+1 {{scale and bias element types differ}}
  %0:3 = graph.batch_norm %x, %c, %h, %c, %c : (tensor<2x6xf32>, tensor<6xf32>, tensor<6xf16>, tensor<6xf32>, tensor<6xf32>) -> (tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>)
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<6xf32>, %c: tensor<6xf32>) {
  // expected-error @+1 {{input must have rank >= 2 (N, C, ...), got 'tensor<6xf32>'}}
  %0:3 = graph.batch_norm %x, %c, %c, %c, %c : (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<6xf32>, tensor<?xf32>, tensor<?xf32>)
  return
}

// -----

func.func @group_norm_rank(%x: tensor<6xf32>, %c: tensor<6xf32>) {
  // expected-error @+1 {{input must have rank >= 2 (N, C, ...), got 'tensor<6xf32>'}}
  %0 = graph.group_norm %x, %c, %c {num_groups = 1 : i64} : (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  return
}

// -----

func.func @rnn_layout(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) {
  // expected-error @+1 {{layout must be 0 or 1, got 2}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 4 : i64, layout = 2 : i64} : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @rnn_element_type(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf16>, %r: tensor<1x4x4xf32>) {
  // expected-error @+1 {{weight element type 'f16' differs from the input's 'f32'}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x4x3xf16>, tensor<1x4x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @rnn_sequence_lens(%x: tensor<5x2x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %l: tensor<3xi32>) {
  // expected-error @+1 {{sequence_lens must be 1-D with 2 entries, got 'tensor<3xi32>'}}
  %0:2 = graph.rnn %x, %w, %r sequence_lens %l {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<3xi32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @lstm_input_forget(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>) {
  // expected-error @+1 {{input_forget must be 0 or 1, got 5}}
  %0:3 = graph.lstm %x, %w, %r {hidden_size = 4 : i64, input_forget = 5 : i64} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @lstm_peepholes(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %p: tensor<1x16xf32>) {
  // expected-error @+1 {{peepholes must have shape 1x12, got 'tensor<1x16xf32>'}}
  %0:3 = graph.lstm %x, %w, %r peepholes %p {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<1x16xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return
}

// -----

func.func @einsum_element_type(%a: tensor<2x3xf32>, %b: tensor<3x2xf16>) {
  // expected-error @+1 {{operand #1 element type 'f16' differs from the result's 'f32'}}
  %0 = graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x2xf16>) -> tensor<2x2xf32>
  return
}

// -----

func.func @einsum_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+1 {{the ellipsis dimensions of operand #1 do not broadcast with the other operands'}}
  %0 = graph.einsum %a, %b {equation = "...j,...j->..."} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @qlinear_matmul_scale(%a: tensor<4x2xui8>, %s: tensor<f32>, %zp: tensor<ui8>, %s2: tensor<2xf32>) {
  // expected-error @+1 {{output_scale must be a scalar}}
  %0 = graph.qlinear_matmul %a, %s, %zp, %a, %s, %zp, %s2, %zp
      : (tensor<4x2xui8>, tensor<f32>, tensor<ui8>, tensor<4x2xui8>, tensor<f32>, tensor<ui8>, tensor<2xf32>, tensor<ui8>) -> tensor<4x2xui8>
  return
}

// -----

func.func @qlinear_matmul_lhs_scale(%a: tensor<4x2xui8>, %b: tensor<2x3xui8>, %s: tensor<f32>, %zp: tensor<ui8>, %s2: tensor<2xf32>) {
  // expected-error @+1 {{lhs_scale must be 1-D with 4 entries, got 'tensor<2xf32>'}}
  %0 = graph.qlinear_matmul %a, %s2, %zp, %b, %s, %zp, %s, %zp
      : (tensor<4x2xui8>, tensor<2xf32>, tensor<ui8>, tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  return
}

// -----

func.func @grid_sample_grid_type(%x: tensor<1x2x4x4xf32>, %g: tensor<1x6x6x2xi32>) {
  // expected-error @+1 {{grid must hold floats, got 'tensor<1x6x6x2xi32>'}}
  %0 = graph.grid_sample %x, %g : (tensor<1x2x4x4xf32>, tensor<1x6x6x2xi32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

func.func @grid_sample_result(%x: tensor<1x2x4x4xf32>, %g: tensor<1x6x6x2xf32>) {
  // expected-error @+1 {{result element type differs from the input's}}
  %0 = graph.grid_sample %x, %g : (tensor<1x2x4x4xf32>, tensor<1x6x6x2xf32>) -> tensor<1x2x6x6xf16>
  return
}

// -----

func.func @grid_sample_rank(%x: tensor<2x4xf32>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{input must have rank >= 3 (N, C, D...), got 'tensor<2x4xf32>'}}
  %0 = graph.grid_sample %x, %g : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @grid_sample_align(%x: tensor<1x2x4x4xf32>, %g: tensor<1x6x6x2xf32>) {
  // expected-error @+1 {{align_corners must be 0 or 1, got 2}}
  %0 = graph.grid_sample %x, %g {align_corners = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<1x6x6x2xf32>) -> tensor<1x2x6x6xf32>
  return
}

// -----

func.func @nms_scores(%b: tensor<1x6x4xf32>, %s: tensor<2x6xf32>) {
  // expected-error @+1 {{scores must be (batch, classes, boxes), got 'tensor<2x6xf32>'}}
  %0 = graph.non_max_suppression %b, %s : (tensor<1x6x4xf32>, tensor<2x6xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_center(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>) {
  // expected-error @+1 {{center_point_box must be 0 or 1, got 2}}
  %0 = graph.non_max_suppression %b, %s {center_point_box = 2 : i64} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @dft_length_scalar(%x: tensor<3x10x1xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{dft_length must be a scalar}}
  %0 = graph.dft %x length %l : (tensor<3x10x1xf32>, tensor<2xi64>) -> tensor<3x?x2xf32>
  return
}

// -----

func.func @dft_result(%x: tensor<3x10x1xf32>) {
  // expected-error @+1 {{result element type differs from the input's}}
  %0 = graph.dft %x : (tensor<3x10x1xf32>) -> tensor<3x10x2xf16>
  return
}

// -----

func.func @dft_inverse_flag(%x: tensor<3x10x1xf32>) {
  // expected-error @+1 {{inverse must be 0 or 1, got 3}}
  %0 = graph.dft %x {inverse = 3 : i64} : (tensor<3x10x1xf32>) -> tensor<3x10x2xf32>
  return
}

// -----

func.func @stft_step_scalar(%x: tensor<3x10x1xf32>, %step: tensor<2xi64>) {
  // expected-error @+1 {{frame_step must be a scalar}}
  %0 = graph.stft %x, %step : (tensor<3x10x1xf32>, tensor<2xi64>) -> tensor<3x?x?x2xf32>
  return
}

// -----

func.func @stft_window_type(%x: tensor<3x10x1xf32>, %step: tensor<i64>, %w: tensor<4xf16>) {
  // expected-error @+1 {{window element type differs from the signal's}}
  %0 = graph.stft %x, %step window %w : (tensor<3x10x1xf32>, tensor<i64>, tensor<4xf16>) -> tensor<3x?x3x2xf32>
  return
}

// -----

func.func @stft_length_scalar(%x: tensor<3x10x1xf32>, %step: tensor<i64>, %l: tensor<2xi64>) {
  // expected-error @+1 {{frame_length must be a scalar}}
  %0 = graph.stft %x, %step frame_length %l : (tensor<3x10x1xf32>, tensor<i64>, tensor<2xi64>) -> tensor<3x?x?x2xf32>
  return
}

// -----

func.func @stft_length_positive(%x: tensor<3x10x1xf32>, %step: tensor<i64>) {
  %l = graph.constant dense<0> : tensor<i64>
  // expected-error @+1 {{frame_length must be positive, got 0}}
  %0 = graph.stft %x, %step frame_length %l : (tensor<3x10x1xf32>, tensor<i64>, tensor<i64>) -> tensor<3x?x?x2xf32>
  return
}

// -----

func.func @stft_onesided(%x: tensor<3x10x1xf32>, %step: tensor<i64>) {
  // expected-error @+1 {{onesided must be 0 or 1, got 4}}
  %0 = graph.stft %x, %step {onesided = 4 : i64} : (tensor<3x10x1xf32>, tensor<i64>) -> tensor<3x?x?x2xf32>
  return
}

// -----

func.func @mel_positive(%l: tensor<i64>, %lo: tensor<f32>) {
  %n = graph.constant dense<0> : tensor<i64>
  // expected-error @+1 {{num_mel_bins must be positive, got 0}}
  %0 = graph.mel_weight_matrix %n, %l, %l, %lo, %lo : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x0xf32>
  return
}
