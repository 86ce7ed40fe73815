// The normalization and dropout lowerings of strata-convert-graph-to-linalg
// compose with upstream bufferization and lowering to LLVM and compute the
// values ONNX defines. Expected values come from numpy: the two-pass
// mean/variance formula of ONNX's LayerNormalization reference (also for
// instance and group normalization, with GroupNormalization's reshape to
// (N, G, -1)), MeanVarianceNormalization's function body, and a loop over
// LRN's channel windows.
//
// RUN: strata-opt --strata-convert-graph-to-linalg %s \
// RUN: | mlir-opt --one-shot-bufferize=bufferize-function-boundaries \
// RUN:     --convert-linalg-to-loops --lower-affine --convert-scf-to-cf \
// RUN:     --convert-math-to-llvm --convert-math-to-funcs --convert-math-to-libm \
// RUN:     --arith-expand --expand-strided-metadata --lower-affine \
// RUN:     --convert-arith-to-llvm --finalize-memref-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%t: tensor<*xf32>) {
  %buffer = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%buffer) : (memref<*xf32>) -> ()
  return
}

// Axis -2 of a 2x2x3 input: each sample is normalized over its 2x3 block;
// the 1x3 scale broadcasts over the rows. Mean and InvStdDev are 2x1x1.
// CHECK: sizes = [2, 2, 3]
// CHECK:      [-0.852245,   -1.69031,   -1.16903]
// CHECK-NEXT: [0.669031,   1.35225,   -0.154847]
// CHECK:      [0.0291294,   -0.941741,   -1.03363]
// CHECK-NEXT: [-0.778077,   0.672672,   -0.0246252]
// CHECK: sizes = [2, 1, 1]
// CHECK:      {{\[}}[3.66667]]
// CHECK:      {{\[}}[1.16667]]
// CHECK: sizes = [2, 1, 1]
// CHECK:      {{\[}}[0.507092]]
// CHECK:      {{\[}}[0.403603]]
func.func @layer_norm(%x: tensor<2x2x3xf32>, %s: tensor<1x3xf32>, %b: tensor<3xf32>) -> (tensor<2x2x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %y, %m, %i = graph.layer_norm %x, %s bias %b {axis = -2 : i64} : (tensor<2x2x3xf32>, tensor<1x3xf32>, tensor<3xf32>) -> (tensor<2x2x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %y, %m, %i : tensor<2x2x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

// Per (sample, channel) over the last axis, scale and bias per channel.
// CHECK: sizes = [2, 2, 3]
// CHECK:      [-1.22474,   0,   1.22474]
// CHECK-NEXT: [-1.13808,   0.465479,   3.6726]
// CHECK:      [-0.707091,   -0.707091,   1.41418]
// CHECK-NEXT: [-1.44949,   1,   3.44949]
func.func @instance_norm(%x: tensor<2x2x3xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2x2x3xf32> {
  %0 = graph.instance_norm %x, %s, %b : (tensor<2x2x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// Two groups of two channels; scale and bias per channel (4 entries).
// CHECK: sizes = [1, 4, 2]
// CHECK:      [-1.34164,   -0.447213]
// CHECK-NEXT: [0.894426,   2.68328]
// CHECK-NEXT: [-0.732048,   -0.732048]
// CHECK-NEXT: [-1.3094,   7.92819]
func.func @group_norm(%x: tensor<1x4x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x2xf32> {
  %0 = graph.group_norm %x, %s, %b {num_groups = 2 : i64} : (tensor<1x4x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// Over axes 0 and 2: statistics per row index of the middle axis.
// CHECK: sizes = [2, 2, 3]
// CHECK:      [-0.156174,   0.780869,   1.71791]
// CHECK-NEXT: [0.111803,   0.447214,   1.11803]
// CHECK:      [-1.09322,   -1.09322,   -0.156174]
// CHECK-NEXT: [-1.90066,   -0.559017,   0.782624]
func.func @mvn(%x: tensor<2x2x3xf32>) -> tensor<2x2x3xf32> {
  %0 = graph.mean_variance_norm %x {axes = array<i64: 0, 2>} : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// Windows of 3 (one channel each side) and of 4 (one before, two after),
// cut at the edges.
// CHECK: sizes = [1, 4, 1]
// CHECK:      [0.737788]
// CHECK-NEXT: [1.03722]
// CHECK-NEXT: [1.08099]
// CHECK-NEXT: [1.56318]
// CHECK: sizes = [1, 4, 1]
// CHECK:      [0.583693]
// CHECK-NEXT: [0.826261]
// CHECK-NEXT: [1.26129]
// CHECK-NEXT: [1.81168]
func.func @lrn3(%x: tensor<1x4x1xf32>) -> tensor<1x4x1xf32> {
  %0 = graph.lrn %x {alpha = 3.000000e-01 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32, size = 3 : i64} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}
func.func @lrn4(%x: tensor<1x4x1xf32>) -> tensor<1x4x1xf32> {
  %0 = graph.lrn %x {alpha = 3.000000e-01 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32, size = 4 : i64} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}

// Dropout of ones with ratio 0.5. Outside training: the input and an
// all-true mask. In training with ratio 0: the same. In training with
// ratio 0.5: kept elements are scaled to 2, dropped ones are 0, and the
// mask (printed as 0/1) says which.
// CHECK: sizes = [2, 2, 8]
// CHECK-COUNT-4: [1,   1,   1,   1,   1,   1,   1,   1]
// CHECK: sizes = [2, 2, 8]
// CHECK-COUNT-4: [1,   1,   1,   1,   1,   1,   1,   1]
// CHECK: sizes = [2, 2, 8]
// CHECK-COUNT-4: [{{[02]}},   {{[02]}},   {{[02]}},   {{[02]}},   {{[02]}},   {{[02]}},   {{[02]}},   {{[02]}}]
// CHECK: sizes = [2, 2, 8]
// CHECK-COUNT-4: [{{[01]}},   {{[01]}},   {{[01]}},   {{[01]}},   {{[01]}},   {{[01]}},   {{[01]}},   {{[01]}}]
// The output is twice the mask everywhere (first sum: |y - 2 mask|), and
// neither almost all nor almost none of the 32 draws are kept (second sum).
// CHECK: sizes = []
// CHECK-NEXT: [0]
// CHECK: sizes = []
// CHECK-NEXT: [{{(9|1[0-9]|2[0-3])}}]
func.func @dropout(%x: tensor<2x2x8xf32>, %r: tensor<f32>, %t: tensor<i1>) -> (tensor<2x2x8xf32>, tensor<2x2x8xi1>) {
  %y, %m = graph.dropout %x ratio %r training_mode %t {seed = 7 : i64} : (tensor<2x2x8xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x2x8xf32>, tensor<2x2x8xi1>)
  return %y, %m : tensor<2x2x8xf32>, tensor<2x2x8xi1>
}

func.func @mask_as_f32(%m: tensor<2x2x8xi1>) -> tensor<2x2x8xf32> {
  %init = tensor.empty() : tensor<2x2x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : tensor<2x2x8xi1>) outs(%init : tensor<2x2x8xf32>) {
  ^bb0(%in: i1, %out: f32):
    %f = arith.uitofp %in : i1 to f32
    linalg.yield %f : f32
  } -> tensor<2x2x8xf32>
  return %0 : tensor<2x2x8xf32>
}

func.func @check_dropout(%y: tensor<2x2x8xf32>, %m: tensor<2x2x8xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %0:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%y, %m : tensor<2x2x8xf32>, tensor<2x2x8xf32>) outs(%init, %init : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %k: f32, %diff: f32, %kept: f32):
    %two = arith.constant 2.0 : f32
    %k2 = arith.mulf %k, %two : f32
    %d = arith.subf %a, %k2 : f32
    %ad = math.absf %d : f32
    %nd = arith.addf %diff, %ad : f32
    %nk = arith.addf %kept, %k : f32
    linalg.yield %nd, %nk : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}

func.func @main() {
  %x = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]], [[0.0, 0.0, 1.0], [-2.0, 2.0, 6.0]]]> : tensor<2x2x3xf32>
  %s = arith.constant dense<[[1.0, 2.0, 0.5]]> : tensor<1x3xf32>
  %b = arith.constant dense<[0.5, 0.0, -1.0]> : tensor<3xf32>
  %y, %m, %i = call @layer_norm(%x, %s, %b) : (tensor<2x2x3xf32>, tensor<1x3xf32>, tensor<3xf32>) -> (tensor<2x2x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %y_u = tensor.cast %y : tensor<2x2x3xf32> to tensor<*xf32>
  call @print(%y_u) : (tensor<*xf32>) -> ()
  %m_u = tensor.cast %m : tensor<2x1x1xf32> to tensor<*xf32>
  call @print(%m_u) : (tensor<*xf32>) -> ()
  %i_u = tensor.cast %i : tensor<2x1x1xf32> to tensor<*xf32>
  call @print(%i_u) : (tensor<*xf32>) -> ()

  %is = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %ib = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %in = call @instance_norm(%x, %is, %ib) : (tensor<2x2x3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x3xf32>
  %in_u = tensor.cast %in : tensor<2x2x3xf32> to tensor<*xf32>
  call @print(%in_u) : (tensor<*xf32>) -> ()

  %g = arith.constant dense<[[[1.0, 3.0], [5.0, 7.0], [2.0, 2.0], [2.0, 6.0]]]> : tensor<1x4x2xf32>
  %gs = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %gb = arith.constant dense<[0.0, 0.0, 1.0, 1.0]> : tensor<4xf32>
  %gn = call @group_norm(%g, %gs, %gb) : (tensor<1x4x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2xf32>
  %gn_u = tensor.cast %gn : tensor<1x4x2xf32> to tensor<*xf32>
  call @print(%gn_u) : (tensor<*xf32>) -> ()

  %mv = call @mvn(%x) : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  %mv_u = tensor.cast %mv : tensor<2x2x3xf32> to tensor<*xf32>
  call @print(%mv_u) : (tensor<*xf32>) -> ()

  %l = arith.constant dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %l3 = call @lrn3(%l) : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %l3_u = tensor.cast %l3 : tensor<1x4x1xf32> to tensor<*xf32>
  call @print(%l3_u) : (tensor<*xf32>) -> ()
  %l4 = call @lrn4(%l) : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %l4_u = tensor.cast %l4 : tensor<1x4x1xf32> to tensor<*xf32>
  call @print(%l4_u) : (tensor<*xf32>) -> ()

  %ones = arith.constant dense<1.0> : tensor<2x2x8xf32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %false = arith.constant dense<false> : tensor<i1>
  %true = arith.constant dense<true> : tensor<i1>
  %d0, %d0m = call @dropout(%ones, %half, %false) : (tensor<2x2x8xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x2x8xf32>, tensor<2x2x8xi1>)
  %d0_u = tensor.cast %d0 : tensor<2x2x8xf32> to tensor<*xf32>
  call @print(%d0_u) : (tensor<*xf32>) -> ()
  %d1, %d1m = call @dropout(%ones, %zero, %true) : (tensor<2x2x8xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x2x8xf32>, tensor<2x2x8xi1>)
  %d1_u = tensor.cast %d1 : tensor<2x2x8xf32> to tensor<*xf32>
  call @print(%d1_u) : (tensor<*xf32>) -> ()
  %d2, %d2m = call @dropout(%ones, %half, %true) : (tensor<2x2x8xf32>, tensor<f32>, tensor<i1>) -> (tensor<2x2x8xf32>, tensor<2x2x8xi1>)
  %mf = call @mask_as_f32(%d2m) : (tensor<2x2x8xi1>) -> tensor<2x2x8xf32>
  %diff, %kept = call @check_dropout(%d2, %mf) : (tensor<2x2x8xf32>, tensor<2x2x8xf32>) -> (tensor<f32>, tensor<f32>)
  %d2_u = tensor.cast %d2 : tensor<2x2x8xf32> to tensor<*xf32>
  call @print(%d2_u) : (tensor<*xf32>) -> ()
  %mf_u = tensor.cast %mf : tensor<2x2x8xf32> to tensor<*xf32>
  call @print(%mf_u) : (tensor<*xf32>) -> ()
  %diff_u = tensor.cast %diff : tensor<f32> to tensor<*xf32>
  call @print(%diff_u) : (tensor<*xf32>) -> ()
  %kept_u = tensor.cast %kept : tensor<f32> to tensor<*xf32>
  call @print(%kept_u) : (tensor<*xf32>) -> ()
  return
}
