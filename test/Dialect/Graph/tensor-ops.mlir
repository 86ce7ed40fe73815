// RUN: strata-opt %s | strata-opt | FileCheck %s

// Round trip of every shape, data-movement, constant, window and random op.

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<2x?x4xf32>) -> (tensor<2xi64>, tensor<i64>, tensor<2x3xf32>, tensor<?xi64>, tensor<4x4xf32>) {
  // CHECK: graph.shape %{{.*}} {end = -1 : i64} : (tensor<2x?x4xf32>) -> tensor<2xi64>
  %0 = graph.shape %x {start = 0 : i64, end = -1 : i64} : (tensor<2x?x4xf32>) -> tensor<2xi64>
  // CHECK: graph.size %{{.*}} : (tensor<2x?x4xf32>) -> tensor<i64>
  %1 = graph.size %x : (tensor<2x?x4xf32>) -> tensor<i64>
  // CHECK: graph.constant_of_shape %{{.*}} {value = dense<1.000000e+00> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<2x3xf32>
  %c = graph.constant dense<[2, 3]> : tensor<2xi64>
  %2 = graph.constant_of_shape %c {value = dense<1.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<2x3xf32>
  // CHECK: graph.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %3 = graph.range %1, %1, %1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  // CHECK: graph.eye_like %{{.*}} {k = 1 : i64} : (tensor<4x4xi32>) -> tensor<4x4xf32>
  %e = graph.constant dense<0> : tensor<4x4xi32>
  %4 = graph.eye_like %e {k = 1 : i64} : (tensor<4x4xi32>) -> tensor<4x4xf32>
  return %0, %1, %2, %3, %4 : tensor<2xi64>, tensor<i64>, tensor<2x3xf32>, tensor<?xi64>, tensor<4x4xf32>
}

// CHECK-LABEL: func @reshaping
func.func @reshaping(%x: tensor<2x1x4xf32>, %y: tensor<1x8x2x2xf32>) {
  // CHECK: graph.flatten %{{.*}} {axis = 2 : i64} : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
  %0 = graph.flatten %x {axis = 2 : i64} : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
  // CHECK: graph.squeeze %{{.*}} {axes = array<i64: 1>} : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
  %1 = graph.squeeze %x {axes = array<i64: 1>} : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
  // CHECK: graph.squeeze %{{.*}} : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
  %2 = graph.squeeze %x : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
  // CHECK: graph.unsqueeze %{{.*}} {axes = array<i64: 0, -1>} : (tensor<2x1x4xf32>) -> tensor<1x2x1x4x1xf32>
  %3 = graph.unsqueeze %x {axes = array<i64: 0, -1>} : (tensor<2x1x4xf32>) -> tensor<1x2x1x4x1xf32>
  // CHECK: graph.depth_to_space %{{.*}} {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
  %4 = graph.depth_to_space %y {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: graph.space_to_depth %{{.*}} {blocksize = 2 : i64} : (tensor<1x8x2x2xf32>) -> tensor<1x32x1x1xf32>
  %5 = graph.space_to_depth %y {blocksize = 2 : i64} : (tensor<1x8x2x2xf32>) -> tensor<1x32x1x1xf32>
  return
}

// CHECK-LABEL: func @slicing
func.func @slicing(%x: tensor<10x20xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>, %shape: tensor<3xi64>) {
  %starts = graph.constant dense<[1, -5]> : tensor<2xi64>
  %ends = graph.constant dense<[9, 1000]> : tensor<2xi64>
  %axes = graph.constant dense<[0, 1]> : tensor<2xi64>
  %steps = graph.constant dense<[2, 1]> : tensor<2xi64>
  // CHECK: graph.slice %{{.*}}, %{{.*}}, %{{.*}} axes %{{.*}} steps %{{.*}} : (tensor<10x20xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x5xf32>
  %0 = graph.slice %x, %starts, %ends axes %axes steps %steps : (tensor<10x20xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x5xf32>
  // CHECK: graph.slice %{{.*}}, %{{.*}}, %{{.*}} : (tensor<10x20xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x20xf32>
  %1 = graph.slice %x, %s, %e : (tensor<10x20xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x20xf32>
  // CHECK: graph.split %{{.*}} {axis = 1 : i64, split = array<i64: 5, 15>} : (tensor<10x20xf32>) -> (tensor<10x5xf32>, tensor<10x15xf32>)
  %2:2 = graph.split %x {axis = 1 : i64, split = array<i64: 5, 15>} : (tensor<10x20xf32>) -> (tensor<10x5xf32>, tensor<10x15xf32>)
  // CHECK: graph.split %{{.*}} : (tensor<10x20xf32>) -> (tensor<4x20xf32>, tensor<4x20xf32>, tensor<2x20xf32>)
  %3:3 = graph.split %x {axis = 0 : i64} : (tensor<10x20xf32>) -> (tensor<4x20xf32>, tensor<4x20xf32>, tensor<2x20xf32>)
  // CHECK: graph.expand %{{.*}}, %{{.*}} : (tensor<10x20xf32>, tensor<3xi64>) -> tensor<?x10x20xf32>
  %4 = graph.expand %x, %shape : (tensor<10x20xf32>, tensor<3xi64>) -> tensor<?x10x20xf32>
  %reps = graph.constant dense<[2, 1]> : tensor<2xi64>
  // CHECK: graph.tile %{{.*}}, %{{.*}} : (tensor<10x20xf32>, tensor<2xi64>) -> tensor<20x20xf32>
  %5 = graph.tile %x, %reps : (tensor<10x20xf32>, tensor<2xi64>) -> tensor<20x20xf32>
  %pads = graph.constant dense<[1, 0, 1, 2]> : tensor<4xi64>
  %zero = graph.constant dense<0.0> : tensor<f32>
  // CHECK: graph.pad %{{.*}}, %{{.*}} value %{{.*}} {mode = "reflect"} : (tensor<10x20xf32>, tensor<4xi64>, tensor<f32>) -> tensor<12x22xf32>
  %6 = graph.pad %x, %pads value %zero {mode = "reflect"} : (tensor<10x20xf32>, tensor<4xi64>, tensor<f32>) -> tensor<12x22xf32>
  // CHECK: graph.pad %{{.*}}, %{{.*}} : (tensor<10x20xf32>, tensor<4xi64>) -> tensor<12x22xf32>
  %7 = graph.pad %x, %pads : (tensor<10x20xf32>, tensor<4xi64>) -> tensor<12x22xf32>
  %k = graph.constant dense<1> : tensor<i64>
  // CHECK: graph.trilu %{{.*}} k %{{.*}} {upper = 0 : i64} : (tensor<10x20xf32>, tensor<i64>) -> tensor<10x20xf32>
  %8 = graph.trilu %x k %k {upper = 0 : i64} : (tensor<10x20xf32>, tensor<i64>) -> tensor<10x20xf32>
  %lens = graph.constant dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]> : tensor<20xi64>
  // CHECK: graph.reverse_sequence %{{.*}}, %{{.*}} : (tensor<10x20xf32>, tensor<20xi64>) -> tensor<10x20xf32>
  %9 = graph.reverse_sequence %x, %lens : (tensor<10x20xf32>, tensor<20xi64>) -> tensor<10x20xf32>
  return
}

// CHECK-LABEL: func @gathers
func.func @gathers(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>, %nd: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // CHECK: graph.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  %0 = graph.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  // CHECK: graph.gather_nd %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  %1 = graph.gather_nd %x, %nd : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  // CHECK: graph.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = "add"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  %2 = graph.scatter_elements %x, %i, %0 {axis = 1 : i64, reduction = "add"} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  // CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "mul"} : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %3 = graph.scatter_nd %x, %nd, %u {reduction = "mul"} : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %depth = graph.constant dense<5> : tensor<i64>
  %values = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  // CHECK: graph.one_hot %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<3x2xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x5x2xf32>
  %4 = graph.one_hot %i, %depth, %values {axis = 1 : i64} : (tensor<3x2xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x5x2xf32>
  %cond = graph.constant dense<[true, false, true]> : tensor<3xi1>
  // CHECK: graph.compress %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<3x4xf32>, tensor<3xi1>) -> tensor<2x4xf32>
  %5 = graph.compress %x, %cond {axis = 0 : i64} : (tensor<3x4xf32>, tensor<3xi1>) -> tensor<2x4xf32>
  // CHECK: graph.compress %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<3xi1>) -> tensor<2xf32>
  %6 = graph.compress %x, %cond : (tensor<3x4xf32>, tensor<3xi1>) -> tensor<2xf32>
  // CHECK: graph.non_zero %{{.*}} : (tensor<3x4xf32>) -> tensor<2x?xi64>
  %7 = graph.non_zero %x : (tensor<3x4xf32>) -> tensor<2x?xi64>
  return
}

// CHECK-LABEL: func @resize_select
func.func @resize_select(%x: tensor<1x1x2x2xf32>, %sizes: tensor<4xi64>) {
  %scales = graph.constant dense<[1.0, 1.0, 2.0, 1.5]> : tensor<4xf32>
  // CHECK: graph.resize %{{.*}} scales %{{.*}} {mode = "linear"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x3xf32>
  %0 = graph.resize %x scales %scales {mode = "linear"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x3xf32>
  // CHECK: graph.resize %{{.*}} sizes %{{.*}} {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = 1 : i64, extrapolation_value = 1.000000e+00 : f32, mode = "cubic", nearest_mode = "floor"} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %1 = graph.resize %x sizes %sizes {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.5 : f32, exclude_outside = 1 : i64, extrapolation_value = 1.0 : f32, mode = "cubic", nearest_mode = "floor"} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %roi = graph.constant dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>
  // CHECK: graph.resize %{{.*}} roi %{{.*}} sizes %{{.*}} {coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x1x2x2xf32>, tensor<8xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %2 = graph.resize %x roi %roi sizes %sizes {coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x1x2x2xf32>, tensor<8xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  // CHECK: graph.top_k %{{.*}} {axis = 3 : i64, k = 1 : i64, largest = 0 : i64} : (tensor<1x1x2x2xf32>) -> (tensor<1x1x2x1xf32>, tensor<1x1x2x1xi64>)
  %3:2 = graph.top_k %x {k = 1 : i64, axis = 3 : i64, largest = 0 : i64, sorted = 1 : i64} : (tensor<1x1x2x2xf32>) -> (tensor<1x1x2x1xf32>, tensor<1x1x2x1xi64>)
  // CHECK: graph.unique %{{.*}} : (tensor<1x1x2x2xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
  %4:4 = graph.unique %x : (tensor<1x1x2x2xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
  // CHECK: graph.unique %{{.*}} {axis = 2 : i64, sorted = 0 : i64} : (tensor<1x1x2x2xf32>) -> (tensor<1x1x?x2xf32>, tensor<?xi64>, tensor<2xi64>, tensor<?xi64>)
  %5:4 = graph.unique %x {axis = 2 : i64, sorted = 0 : i64} : (tensor<1x1x2x2xf32>) -> (tensor<1x1x?x2xf32>, tensor<?xi64>, tensor<2xi64>, tensor<?xi64>)
  return
}

// CHECK-LABEL: func @dropout_windows_random
func.func @dropout_windows_random(%x: tensor<3x4xf32>, %n: tensor<i64>) {
  %ratio = graph.constant dense<0.25> : tensor<f32>
  %train = graph.constant dense<true> : tensor<i1>
  // CHECK: graph.dropout %{{.*}} ratio %{{.*}} training_mode %{{.*}} {seed = 7 : i64} : (tensor<3x4xf32>, tensor<f32>, tensor<i1>) -> (tensor<3x4xf32>, tensor<3x4xi1>)
  %0:2 = graph.dropout %x ratio %ratio training_mode %train {seed = 7 : i64} : (tensor<3x4xf32>, tensor<f32>, tensor<i1>) -> (tensor<3x4xf32>, tensor<3x4xi1>)
  // CHECK: graph.hann_window %{{.*}} {periodic = 0 : i64} : (tensor<i64>) -> tensor<?xf32>
  %1 = graph.hann_window %n {periodic = 0 : i64} : (tensor<i64>) -> tensor<?xf32>
  // CHECK: graph.hamming_window %{{.*}} : (tensor<i64>) -> tensor<?xf64>
  %2 = graph.hamming_window %n : (tensor<i64>) -> tensor<?xf64>
  // CHECK: graph.blackman_window %{{.*}} : (tensor<i64>) -> tensor<?xf32>
  %3 = graph.blackman_window %n : (tensor<i64>) -> tensor<?xf32>
  // CHECK: graph.random_normal {mean = 1.000000e+00 : f32, scale = 2.000000e+00 : f32, seed = 3.000000e+00 : f32, shape = array<i64: 2, 3>} : () -> tensor<2x3xf32>
  %4 = graph.random_normal {mean = 1.0 : f32, scale = 2.0 : f32, seed = 3.0 : f32, shape = array<i64: 2, 3>} : () -> tensor<2x3xf32>
  // CHECK: graph.random_uniform {shape = array<i64: 5>} : () -> tensor<5xf64>
  %5 = graph.random_uniform {shape = array<i64: 5>} : () -> tensor<5xf64>
  // CHECK: graph.random_normal_like %{{.*}} : (tensor<3x4xf32>) -> tensor<3x4xf16>
  %6 = graph.random_normal_like %x : (tensor<3x4xf32>) -> tensor<3x4xf16>
  // CHECK: graph.random_uniform_like %{{.*}} {high = 2.000000e+00 : f32, low = -2.000000e+00 : f32} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %7 = graph.random_uniform_like %x {high = 2.0 : f32, low = -2.0 : f32} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  // CHECK: graph.bernoulli %{{.*}} : (tensor<3x4xf32>) -> tensor<3x4xi1>
  %8 = graph.bernoulli %x : (tensor<3x4xf32>) -> tensor<3x4xi1>
  return
}
