// The loss lowerings of strata-convert-graph-to-linalg compose with upstream
// bufferization and lowering to LLVM and compute the values ONNX defines.
// Expected values come from the numpy references in ONNX's backend tests
// (compute_negative_log_likelihood_loss and softmaxcrossentropy in
// onnx/backend/test/case/node).
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

// (N, C, d1) with class weights and ignore_index -1: the mean divides the
// weighted sum 1.375 by the applied weights 0.5 + 4 + 1 + 2 + 1 = 8.5 (the
// ignored element adds neither).
// CHECK: sizes = []
// CHECK-NEXT: [0.161765]
func.func @nll_mean_weight_ii(%x: tensor<3x4x2xf32>, %t: tensor<3x2xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = graph.negative_log_likelihood_loss %x, %t weight %w {ignore_index = -1 : i64, reduction = "mean"} : (tensor<3x4x2xf32>, tensor<3x2xi64>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Reduction none: the target's shape; the ignored element is 0 although its
// class (-1) is out of range.
// CHECK: sizes = [3, 2]
// CHECK-NEXT: [0.75,   0.75]
// CHECK-NEXT: [-0,   0]
// CHECK-NEXT: [-0.75,   -0.5]
func.func @nll_none_ii(%x: tensor<3x4x2xf32>, %t: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %0 = graph.negative_log_likelihood_loss %x, %t {ignore_index = -1 : i64, reduction = "none"} : (tensor<3x4x2xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// (N, C) with i32 targets: sum, and mean over the N elements.
// CHECK: sizes = []
// CHECK-NEXT: [0.25]
// CHECK: sizes = []
// CHECK-NEXT: [0.0833333]
func.func @nll_sum(%x: tensor<3x5xf32>, %t: tensor<3xi32>) -> tensor<f32> {
  %0 = graph.negative_log_likelihood_loss %x, %t {reduction = "sum"} : (tensor<3x5xf32>, tensor<3xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @nll_mean(%x: tensor<3x5xf32>, %t: tensor<3xi32>) -> tensor<f32> {
  %0 = graph.negative_log_likelihood_loss %x, %t : (tensor<3x5xf32>, tensor<3xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Softmax cross entropy with the log-probabilities. The second row's score
// of 100 would overflow exp without subtracting the row maximum; its
// log-probabilities are x - 100 up to exp(-99), which the reference's
// log(softmax) in f32 misses by up to 0.02 (it gives -100.976 and a loss of
// 101.428).
// CHECK: sizes = []
// CHECK-NEXT: [101.452]
// CHECK: sizes = [2, 5]
// CHECK-NEXT: [-4.45191,   -3.45191,   -2.45191,   -1.45191,   -0.451914]
// CHECK-NEXT: [-101,   -100,   -99,   -99.5,   0]
func.func @sce_sum(%s: tensor<2x5xf32>, %l: tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>) {
  %0, %1 = graph.softmax_cross_entropy_loss %s, %l {reduction = "sum"} : (tensor<2x5xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>)
  return %0, %1 : tensor<f32>, tensor<2x5xf32>
}

// (N, C, d1) with weights and ignore_index 5, beyond the classes: the
// softmax runs over axis 1 and the ignored label reads nothing.
// CHECK: sizes = []
// CHECK-NEXT: [1.56663]
// CHECK: sizes = [2, 3, 2]
// CHECK:      [-2.16985,   -0.241311]
// CHECK-NEXT: [-3.16985,   -3.24131]
// CHECK-NEXT: [-0.169846,   -1.74131]
// CHECK:      [-2.40761,   -1.34901]
// CHECK-NEXT: [-1.40761,   -0.349012]
// CHECK-NEXT: [-0.407606,   -3.34901]
func.func @sce_mean_weight_ii(%s: tensor<2x3x2xf32>, %l: tensor<2x2xi64>, %w: tensor<3xf32>) -> (tensor<f32>, tensor<2x3x2xf32>) {
  %0, %1 = graph.softmax_cross_entropy_loss %s, %l weights %w {ignore_index = 5 : i64} : (tensor<2x3x2xf32>, tensor<2x2xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<2x3x2xf32>)
  return %0, %1 : tensor<f32>, tensor<2x3x2xf32>
}

func.func @main() {
  %x = arith.constant dense<[[[-0.75, -0.5], [-0.25, 0.0], [0.25, 0.5], [0.75, -0.75]], [[-0.5, -0.25], [0.0, 0.25], [0.5, 0.75], [-0.75, -0.5]], [[-0.25, 0.0], [0.25, 0.5], [0.75, -0.75], [-0.5, -0.25]]]> : tensor<3x4x2xf32>
  %t = arith.constant dense<[[0, 3], [1, -1], [2, 1]]> : tensor<3x2xi64>
  %w = arith.constant dense<[0.5, 1.0, 2.0, 4.0]> : tensor<4xf32>
  %a = call @nll_mean_weight_ii(%x, %t, %w) : (tensor<3x4x2xf32>, tensor<3x2xi64>, tensor<4xf32>) -> tensor<f32>
  %a_u = tensor.cast %a : tensor<f32> to tensor<*xf32>
  call @print(%a_u) : (tensor<*xf32>) -> ()
  %b = call @nll_none_ii(%x, %t) : (tensor<3x4x2xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  %b_u = tensor.cast %b : tensor<3x2xf32> to tensor<*xf32>
  call @print(%b_u) : (tensor<*xf32>) -> ()

  %x2 = arith.constant dense<[[-0.75, -0.5, -0.25, 0.0, 0.25], [-0.5, -0.25, 0.0, 0.25, 0.5], [-0.25, 0.0, 0.25, 0.5, 0.75]]> : tensor<3x5xf32>
  %t2 = arith.constant dense<[4, 0, 1]> : tensor<3xi32>
  %c = call @nll_sum(%x2, %t2) : (tensor<3x5xf32>, tensor<3xi32>) -> tensor<f32>
  %c_u = tensor.cast %c : tensor<f32> to tensor<*xf32>
  call @print(%c_u) : (tensor<*xf32>) -> ()
  %d = call @nll_mean(%x2, %t2) : (tensor<3x5xf32>, tensor<3xi32>) -> tensor<f32>
  %d_u = tensor.cast %d : tensor<f32> to tensor<*xf32>
  call @print(%d_u) : (tensor<*xf32>) -> ()

  %s = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, 0.0, 1.0, 0.5, 100.0]]> : tensor<2x5xf32>
  %l = arith.constant dense<[4, 0]> : tensor<2xi64>
  %e, %e_lp = call @sce_sum(%s, %l) : (tensor<2x5xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x5xf32>)
  %e_u = tensor.cast %e : tensor<f32> to tensor<*xf32>
  call @print(%e_u) : (tensor<*xf32>) -> ()
  %e_lp_u = tensor.cast %e_lp : tensor<2x5xf32> to tensor<*xf32>
  call @print(%e_lp_u) : (tensor<*xf32>) -> ()

  %s3 = arith.constant dense<[[[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]], [[0.0, 0.0], [1.0, 1.0], [2.0, -2.0]]]> : tensor<2x3x2xf32>
  %l3 = arith.constant dense<[[2, 1], [0, 5]]> : tensor<2x2xi64>
  %w3 = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %f, %f_lp = call @sce_mean_weight_ii(%s3, %l3, %w3) : (tensor<2x3x2xf32>, tensor<2x2xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<2x3x2xf32>)
  %f_u = tensor.cast %f : tensor<f32> to tensor<*xf32>
  call @print(%f_u) : (tensor<*xf32>) -> ()
  %f_lp_u = tensor.cast %f_lp : tensor<2x3x2xf32> to tensor<*xf32>
  call @print(%f_lp_u) : (tensor<*xf32>) -> ()
  return
}
