// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @shape_not_1d(%x: tensor<2x3xf32>) -> tensor<2x1xi64> {
  // expected-error @+1 {{result #0 has type 'tensor<2x1xi64>', incompatible with the inferred type 'tensor<2xi64>'}}
  %0 = graph.shape %x : (tensor<2x3xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

func.func @constant_of_shape_value(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{value must hold exactly one element}}
  %0 = graph.constant_of_shape %s {value = dense<1.0> : tensor<2xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @constant_of_shape_type(%s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{incompatible with the inferred type 'tensor<?x?xi32>'}}
  %0 = graph.constant_of_shape %s {value = dense<1> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @constant_of_shape_rank(%s: tensor<2x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{shape operand must be 1-D}}
  %0 = graph.constant_of_shape %s {value = dense<1.0> : tensor<1xf32>} : (tensor<2x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @constant_of_shape_negative() -> tensor<*xf32> {
  %s = graph.constant dense<[2, -1]> : tensor<2xi64>
  // expected-error @+1 {{has a negative dimension}}
  %0 = graph.constant_of_shape %s {value = dense<1.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @range_types(%a: tensor<i64>, %b: tensor<i32>) -> tensor<?xi64> {
  // expected-error @+1 {{operand element type 'i32' differs from the result's 'i64'}}
  %0 = graph.range %a, %b, %a : (tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @range_scalars(%a: tensor<i64>, %b: tensor<2xi64>) -> tensor<?xi64> {
  // expected-error @+1 {{start, limit and delta must be scalars}}
  %0 = graph.range %a, %b, %a : (tensor<i64>, tensor<2xi64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @range_result(%a: tensor<i64>) -> tensor<?x?xi64> {
  // expected-error @+1 {{incompatible with the inferred type 'tensor<?xi64>'}}
  %0 = graph.range %a, %a, %a : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?x?xi64>
  return %0 : tensor<?x?xi64>
}

// -----

func.func @range_zero_delta(%a: tensor<i64>) -> tensor<?xi64> {
  %d = graph.constant dense<0> : tensor<i64>
  // expected-error @+1 {{delta must not be zero}}
  %0 = graph.range %a, %a, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @eye_like_rank(%x: tensor<2x2x2xf32>) -> tensor<2x2x2xf32> {
  // expected-error @+1 {{input must be 2-D}}
  %0 = graph.eye_like %x : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}

// -----

func.func @flatten_axis(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{axis 3 is out of range for rank 2}}
  %0 = graph.flatten %x {axis = 3 : i64} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @flatten_type(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  // expected-error @+1 {{result element type 'f16' differs from the input's 'f32'}}
  %0 = graph.flatten %x : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

func.func @squeeze_axes(%x: tensor<2x1xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axes [1, -1] are out of range or repeated for rank 2}}
  %0 = graph.squeeze %x {axes = array<i64: 1, -1>} : (tensor<2x1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @squeeze_not_one(%x: tensor<2x1xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{cannot squeeze a dimension other than 1}}
  %0 = graph.squeeze %x {axes = array<i64: 0>} : (tensor<2x1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_axes(%x: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axes [2] are out of range or repeated for result rank 2}}
  %0 = graph.unsqueeze %x {axes = array<i64: 2>} : (tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @depth_to_space_blocksize(%x: tensor<1x8x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{blocksize must be in [1, 65536], got 0}}
  %0 = graph.depth_to_space %x {blocksize = 0 : i64} : (tensor<1x8x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @depth_to_space_rank(%x: tensor<8x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{input must be 4-D (NCHW)}}
  %0 = graph.depth_to_space %x {blocksize = 2 : i64} : (tensor<8x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @depth_to_space_mode(%x: tensor<1x8x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{mode must be DCR or CRD, got 'XYZ'}}
  %0 = graph.depth_to_space %x {blocksize = 2 : i64, mode = "XYZ"} : (tensor<1x8x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @depth_to_space_channels(%x: tensor<1x6x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{channels 6 are not divisible by blocksize^2 = 4}}
  %0 = graph.depth_to_space %x {blocksize = 2 : i64} : (tensor<1x6x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @space_to_depth_spatial(%x: tensor<1x1x3x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{are not divisible by blocksize 2}}
  %0 = graph.space_to_depth %x {blocksize = 2 : i64} : (tensor<1x1x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_rank(%x: tensor<4xf32>, %s: tensor<1x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{starts, ends, axes and steps must be 1-D}}
  %0 = graph.slice %x, %s, %s : (tensor<4xf32>, tensor<1x1xi64>, tensor<1x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_lengths(%x: tensor<4x4xf32>, %s: tensor<1xi64>, %e: tensor<2xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{starts, ends, axes and steps differ in length}}
  %0 = graph.slice %x, %s, %e : (tensor<4x4xf32>, tensor<1xi64>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<4xf32>, %s: tensor<1xi64>) -> tensor<*xf32> {
  %steps = graph.constant dense<0> : tensor<1xi64>
  // expected-error @+1 {{steps must not be zero}}
  %0 = graph.slice %x, %s, %s steps %steps : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_axes(%x: tensor<4xf32>, %s: tensor<1xi64>) -> tensor<*xf32> {
  %axes = graph.constant dense<1> : tensor<1xi64>
  // expected-error @+1 {{axes are out of range or repeated for rank 1}}
  %0 = graph.slice %x, %s, %s axes %axes : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @split_none(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs at least one result}}
  graph.split %x : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @split_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{split has 3 sizes for 2 results}}
  %0:2 = graph.split %x {split = array<i64: 1, 1, 2>} : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @split_negative(%x: tensor<?xf32>) {
  // expected-error @+1 {{split sizes must not be negative}}
  %0:2 = graph.split %x {split = array<i64: -1, 5>} : (tensor<?xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @split_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0:2 = graph.split %x {axis = 1 : i64} : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @split_sizes(%x: tensor<4xf32>) {
  // expected-error @+1 {{cannot split dimension 4 into 2 parts of the given sizes}}
  %0:2 = graph.split %x {split = array<i64: 1, 2>} : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @expand_rank(%x: tensor<4xf32>, %s: tensor<1x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{shape operand must be 1-D}}
  %0 = graph.expand %x, %s : (tensor<4xf32>, tensor<1x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @expand_negative(%x: tensor<4xf32>) -> tensor<*xf32> {
  %s = graph.constant dense<[-2, 4]> : tensor<2xi64>
  // expected-error @+1 {{shape [-2, 4] has a negative dimension}}
  %0 = graph.expand %x, %s : (tensor<4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @expand_broadcast(%x: tensor<4xf32>) -> tensor<*xf32> {
  %s = graph.constant dense<[2, 3]> : tensor<2xi64>
  // expected-error @+1 {{cannot broadcast 'tensor<4xf32>' to [2, 3]}}
  %0 = graph.expand %x, %s : (tensor<4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @tile_rank(%x: tensor<4xf32>, %r: tensor<1x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{repeats must be 1-D}}
  %0 = graph.tile %x, %r : (tensor<4xf32>, tensor<1x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @tile_count(%x: tensor<4xf32>, %r: tensor<2xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{repeats has 2 entries for an input of rank 1}}
  %0 = graph.tile %x, %r : (tensor<4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @tile_negative(%x: tensor<?xf32>) -> tensor<*xf32> {
  %r = graph.constant dense<-1> : tensor<1xi64>
  // expected-error @+1 {{repeats must not be negative}}
  %0 = graph.tile %x, %r : (tensor<?xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_mode(%x: tensor<4xf32>, %p: tensor<2xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{mode must be constant, reflect or edge, got 'wrap'}}
  %0 = graph.pad %x, %p {mode = "wrap"} : (tensor<4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_pads_rank(%x: tensor<4xf32>, %p: tensor<2x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{pads must be 1-D}}
  %0 = graph.pad %x, %p : (tensor<4xf32>, tensor<2x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_value_scalar(%x: tensor<4xf32>, %p: tensor<2xi64>, %v: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{constant_value must be a scalar}}
  %0 = graph.pad %x, %p value %v : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_value_type(%x: tensor<4xf32>, %p: tensor<2xi64>, %v: tensor<i32>) -> tensor<*xf32> {
  // expected-error @+1 {{constant_value element type differs from the data's}}
  %0 = graph.pad %x, %p value %v : (tensor<4xf32>, tensor<2xi64>, tensor<i32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_length(%x: tensor<4xf32>, %p: tensor<4xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{pads has 4 entries; an input of rank 1 needs 2}}
  %0 = graph.pad %x, %p : (tensor<4xf32>, tensor<4xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_crop(%x: tensor<4xf32>) -> tensor<*xf32> {
  %p = graph.constant dense<[-3, -2]> : tensor<2xi64>
  // expected-error @+1 {{pads crop a dimension below zero}}
  %0 = graph.pad %x, %p : (tensor<4xf32>, tensor<2xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @trilu_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input must have rank >= 2}}
  %0 = graph.trilu %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @trilu_k(%x: tensor<4x4xf32>, %k: tensor<2xi64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{k must be a scalar}}
  %0 = graph.trilu %x k %k : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @reverse_sequence_axes(%x: tensor<4x4xf32>, %l: tensor<4xi64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{batch_axis and time_axis must be 0 and 1 in some order, got 1 and 1}}
  %0 = graph.reverse_sequence %x, %l {time_axis = 1 : i64} : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @reverse_sequence_rank(%x: tensor<4xf32>, %l: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{input must have rank >= 2}}
  %0 = graph.reverse_sequence %x, %l : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reverse_sequence_lens_rank(%x: tensor<4x4xf32>, %l: tensor<4x1xi64>) -> tensor<4x4xf32> {
  // expected-error @+1 {{sequence_lens must be 1-D}}
  %0 = graph.reverse_sequence %x, %l : (tensor<4x4xf32>, tensor<4x1xi64>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @reverse_sequence_lens(%x: tensor<4x3xf32>, %l: tensor<4xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{sequence_lens has 4 entries for a batch of 3}}
  %0 = graph.reverse_sequence %x, %l : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gather_index(%x: tensor<3xf32>) -> tensor<f32> {
  %i = graph.constant dense<3> : tensor<i64>
  // expected-error @+1 {{index 3 is out of range for dimension 3}}
  %0 = graph.gather %x, %i : (tensor<3xf32>, tensor<i64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @gather_elements_rank(%x: tensor<3x3xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{indices rank 1 differs from the data rank 2}}
  %0 = graph.gather_elements %x, %i : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gather_elements_axis(%x: tensor<3xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0 = graph.gather_elements %x, %i {axis = 1 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gather_nd_batch(%x: tensor<3x3xf32>, %i: tensor<3x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{batch_dims 2 or the index tuple length}}
  %0 = graph.gather_nd %x, %i {batch_dims = 2 : i64} : (tensor<3x3xf32>, tensor<3x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @scatter_reduction(%x: tensor<3xf32>, %i: tensor<1xi64>, %u: tensor<1xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{reduction must be none, add, mul, max or min, got 'sub'}}
  %0 = graph.scatter_elements %x, %i, %u {reduction = "sub"} : (tensor<3xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @scatter_updates(%x: tensor<3xf32>, %i: tensor<1xi64>, %u: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{updates 'tensor<2xf32>' differ in shape from the indices 'tensor<1xi64>'}}
  %0 = graph.scatter_elements %x, %i, %u : (tensor<3xf32>, tensor<1xi64>, tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @scatter_nd_indices(%x: tensor<3xf32>, %i: tensor<1x2xi64>, %u: tensor<1xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{do not index data of rank 1}}
  %0 = graph.scatter_nd %x, %i, %u : (tensor<3xf32>, tensor<1x2xi64>, tensor<1xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @scatter_nd_updates(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{updates 'tensor<2x3xf32>' must have shape [2, 4]}}
  %0 = graph.scatter_nd %x, %i, %u : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @one_hot_depth(%i: tensor<3xi64>, %d: tensor<2xi64>, %v: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{depth must be a scalar}}
  %0 = graph.one_hot %i, %d, %v : (tensor<3xi64>, tensor<2xi64>, tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @one_hot_values(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{values must hold [off, on]}}
  %0 = graph.one_hot %i, %d, %v : (tensor<3xi64>, tensor<i64>, tensor<3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @one_hot_axis(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.one_hot %i, %d, %v {axis = 2 : i64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @one_hot_negative_depth(%i: tensor<3xi64>, %v: tensor<2xf32>) -> tensor<*xf32> {
  %d = graph.constant dense<-1> : tensor<i64>
  // expected-error @+1 {{depth must not be negative}}
  %0 = graph.one_hot %i, %d, %v : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @compress_condition(%x: tensor<3xf32>, %c: tensor<3x1xi1>) -> tensor<*xf32> {
  // expected-error @+1 {{condition must be 1-D}}
  %0 = graph.compress %x, %c : (tensor<3xf32>, tensor<3x1xi1>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @compress_axis(%x: tensor<3xf32>, %c: tensor<3xi1>) -> tensor<*xf32> {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0 = graph.compress %x, %c {axis = 1 : i64} : (tensor<3xf32>, tensor<3xi1>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @non_zero_rank(%x: tensor<3xf32>) -> tensor<?xi64> {
  // expected-error @+1 {{incompatible with the inferred type 'tensor<1x?xi64>'}}
  %0 = graph.non_zero %x : (tensor<3xf32>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @resize_neither(%x: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{needs scales or sizes}}
  %0 = graph.resize %x : (tensor<1x1x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_both(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>, %z: tensor<4xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{takes scales or sizes, not both}}
  %0 = graph.resize %x scales %s sizes %z : (tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<4xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_mode(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{mode must be nearest, linear or cubic, got 'area'}}
  %0 = graph.resize %x scales %s {mode = "area"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_transform(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{unknown coordinate_transformation_mode 'corner'}}
  %0 = graph.resize %x scales %s {coordinate_transformation_mode = "corner"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_nearest(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{unknown nearest_mode 'round'}}
  %0 = graph.resize %x scales %s {nearest_mode = "round"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_rank(%x: tensor<1x1x2x2xf32>, %s: tensor<4x1xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{scales and sizes must be 1-D}}
  %0 = graph.resize %x scales %s : (tensor<1x1x2x2xf32>, tensor<4x1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_length(%x: tensor<1x1x2x2xf32>, %s: tensor<3xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{scales or sizes has 3 entries for an input of rank 4}}
  %0 = graph.resize %x sizes %s : (tensor<1x1x2x2xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @resize_scales(%x: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  %s = graph.constant dense<[1.0, 1.0, 0.0, 2.0]> : tensor<4xf32>
  // expected-error @+1 {{scales must be positive}}
  %0 = graph.resize %x scales %s : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @top_k_negative(%x: tensor<4xf32>) {
  // expected-error @+1 {{k must not be negative, got -1}}
  %0:2 = graph.top_k %x {k = -1 : i64} : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}

// -----

func.func @top_k_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0:2 = graph.top_k %x {k = 1 : i64, axis = 1 : i64} : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}

// -----

func.func @top_k_large(%x: tensor<4xf32>) {
  // expected-error @+1 {{k = 5 exceeds the dimension 4}}
  %0:2 = graph.top_k %x {k = 5 : i64} : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}

// -----

func.func @unique_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0:4 = graph.unique %x {axis = 1 : i64} : (tensor<4xf32>) -> (tensor<*xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>)
  return
}

// -----

func.func @dropout_ratio(%x: tensor<4xf32>, %r: tensor<2xf32>) {
  // expected-error @+1 {{ratio must be a scalar}}
  %0:2 = graph.dropout %x ratio %r : (tensor<4xf32>, tensor<2xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_training(%x: tensor<4xf32>, %t: tensor<2xi1>) {
  // expected-error @+1 {{training_mode must be a scalar}}
  %0:2 = graph.dropout %x training_mode %t : (tensor<4xf32>, tensor<2xi1>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_ratio_range(%x: tensor<4xf32>) {
  %r = graph.constant dense<1.5> : tensor<f32>
  // expected-error @+1 {{ratio must be in [0, 1), got 1.5}}
  %0:2 = graph.dropout %x ratio %r : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @window_size(%n: tensor<2xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{size must be a scalar}}
  %0 = graph.hann_window %n : (tensor<2xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @window_result(%n: tensor<i64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{incompatible with the inferred type 'tensor<?xf32>'}}
  %0 = graph.hamming_window %n : (tensor<i64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @window_negative() -> tensor<?xf32> {
  %n = graph.constant dense<-3> : tensor<i64>
  // expected-error @+1 {{size must not be negative, got -3}}
  %0 = graph.blackman_window %n : (tensor<i64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @random_shape() -> tensor<*xf32> {
  // expected-error @+1 {{shape [2, -1] has a negative dimension}}
  %0 = graph.random_normal {shape = array<i64: 2, -1>} : () -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @random_bounds() -> tensor<2xf32> {
  // expected-error @+1 {{high 0.000000e+00 is below low 1.000000e+00}}
  %0 = graph.random_uniform {high = 0.0 : f32, low = 1.0 : f32, shape = array<i64: 2>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @random_like_bounds(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{high -1.000000e+00 is below low 0.000000e+00}}
  %0 = graph.random_uniform_like %x {high = -1.0 : f32} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @bernoulli_input(%x: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+1 {{input must hold float probabilities}}
  %0 = graph.bernoulli %x : (tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @squeeze_both_forms(%x: tensor<2x1xf32>, %a: tensor<1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{takes its axes either as the `axes` attribute or as an operand, not both}}
  %0 = graph.squeeze %x, %a {axes = array<i64: 1>} : (tensor<2x1xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @squeeze_axes_operand_rank(%x: tensor<2x1xf32>, %a: tensor<1x1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{axes operand must be 1-D, got 'tensor<1x1xi64>'}}
  %0 = graph.squeeze %x, %a : (tensor<2x1xf32>, tensor<1x1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @squeeze_too_many_axes(%x: tensor<2x1xf32>, %a: tensor<3xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{has 3 axes for an input of rank 2}}
  %0 = graph.squeeze %x, %a : (tensor<2x1xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @squeeze_dynamic_not_one(%x: tensor<2x3xf32>, %a: tensor<1xi64>) -> tensor<*xf32> {
  // Neither dimension is 1, so no axis can be squeezed.
  // expected-error @+1 {{cannot squeeze a dimension other than 1}}
  %0 = graph.squeeze %x, %a : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @squeeze_axes_operand_type(%x: tensor<2x1xf32>, %a: tensor<1xi32>) -> tensor<*xf32> {
  // expected-error @+1 {{operand #1 must be tensor of 64-bit signless integer values}}
  %0 = graph.squeeze %x, %a : (tensor<2x1xf32>, tensor<1xi32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_no_axes(%x: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{needs axes, as the `axes` attribute or an operand}}
  %0 = graph.unsqueeze %x : (tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_both_forms(%x: tensor<2xf32>, %a: tensor<1xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{takes its axes either as the `axes` attribute or as an operand, not both}}
  %0 = graph.unsqueeze %x, %a {axes = array<i64: 0>} : (tensor<2xf32>, tensor<1xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unsqueeze_dynamic_rank(%x: tensor<2xf32>, %a: tensor<2xi64>) -> tensor<2x1xf32> {
  // Two new axes make rank 3.
  // expected-error @+1 {{result #0 has type 'tensor<2x1xf32>', incompatible with the inferred type 'tensor<?x?x?xf32>'}}
  %0 = graph.unsqueeze %x, %a : (tensor<2xf32>, tensor<2xi64>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @split_both_forms(%x: tensor<4xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{takes its split either as the `split` attribute or as an operand, not both}}
  %0:2 = graph.split %x, %s {split = array<i64: 2, 2>} : (tensor<4xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @split_operand_count(%x: tensor<4xf32>, %s: tensor<3xi64>) {
  // expected-error @+1 {{split operand has 3 sizes for 2 results}}
  %0:2 = graph.split %x, %s : (tensor<4xf32>, tensor<3xi64>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @split_operand_rank(%x: tensor<4xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{split operand must be 1-D, got 'tensor<i64>'}}
  %0:2 = graph.split %x, %s : (tensor<4xf32>, tensor<i64>) -> (tensor<*xf32>, tensor<*xf32>)
  return
}

// -----

func.func @top_k_no_k(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs k, as the `k` attribute or an operand}}
  %v, %i = graph.top_k %x : (tensor<4xf32>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}

// -----

func.func @top_k_both_forms(%x: tensor<4xf32>, %k: tensor<1xi64>) {
  // expected-error @+1 {{takes k either as the `k` attribute or as an operand, not both}}
  %v, %i = graph.top_k %x, %k {k = 2 : i64} : (tensor<4xf32>, tensor<1xi64>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}

// -----

func.func @top_k_operand_shape(%x: tensor<4xf32>, %k: tensor<2xi64>) {
  // expected-error @+1 {{k operand must hold a single value, got 'tensor<2xi64>'}}
  %v, %i = graph.top_k %x, %k : (tensor<4xf32>, tensor<2xi64>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}

// -----

func.func @top_k_constant_operand_too_large(%x: tensor<4xf32>) {
  %k = graph.constant dense<[5]> : tensor<1xi64>
  // expected-error @+1 {{k = 5 exceeds the dimension 4}}
  %v, %i = graph.top_k %x, %k : (tensor<4xf32>, tensor<1xi64>) -> (tensor<*xf32>, tensor<*xi64>)
  return
}
