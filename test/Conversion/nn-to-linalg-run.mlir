// The NN lowerings of strata-convert-graph-to-linalg compose with upstream
// bufferization and lowering to LLVM and compute the values ONNX defines.
// Expected values were computed with numpy: np.matmul for the broadcast
// batch, an explicit loop nest over np.pad(x) for the grouped convolution,
// and the windows of the ceil-mode max pooling by hand.
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

// [2, 1, 2, 3] x [3, 3, 2]: both batch dims broadcast.
// CHECK: sizes = [2, 3, 2, 2]
// CHECK:      [-5, -2]
// CHECK-NEXT: [-32, -20]
// CHECK:      [13, 16]
// CHECK-NEXT: [40, 52]
// CHECK:      [31, 34]
// CHECK-NEXT: [112, 124]
// CHECK:      [-59, -38]
// CHECK-NEXT: [-86, -56]
// CHECK:      [67, 88]
// CHECK-NEXT: [94, 124]
// CHECK:      [193, 214]
// CHECK-NEXT: [274, 304]
func.func @matmul_broadcast(%a: tensor<2x1x2x3xf32>, %b: tensor<3x3x2xf32>) -> tensor<2x3x2x2xf32> {
  %0 = graph.matmul %a, %b : (tensor<2x1x2x3xf32>, tensor<3x3x2xf32>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// Two groups of two channels, asymmetric pads (top 1, right 1), strides
// [2, 1], bias.
// CHECK: sizes = [1, 2, 2, 3]
// CHECK:      [-9.5, -10.5, -8.5]
// CHECK-NEXT: [-5.5, -6.5, -13.5]
// CHECK:      [17, 18, 28]
// CHECK-NEXT: [-8, -8, 25]
func.func @conv_group2(%x: tensor<1x4x3x3xf32>, %w: tensor<2x2x2x2xf32>, %bias: tensor<2xf32>) -> tensor<1x2x2x3xf32> {
  %0 = graph.conv %x, %w bias %bias {group = 2 : i64, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 1>} : (tensor<1x4x3x3xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// 3x3 windows, stride 2 over 4x4 with ceil_mode: the second window of each
// axis covers rows/columns 2..3 only.
// CHECK: sizes = [1, 1, 2, 2]
// CHECK:      [10, 11]
// CHECK-NEXT: [14, 15]
func.func @max_pool_ceil(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0:2 = graph.max_pool %x {ceil_mode = 1 : i64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return %0#0 : tensor<1x1x2x2xf32>
}

// Average pooling with pads [1, 1, 0, 0] and count_include_pad = 0: each
// mean is over the input positions only. Windows: rows {-1..1} and {1..3},
// columns likewise.
// CHECK: sizes = [1, 1, 2, 2]
// CHECK:      [2.5, 4]
// CHECK-NEXT: [8.5, 10]
func.func @average_pool_pads(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = graph.average_pool %x {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

func.func @main() {
  %a = arith.constant dense<[[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]], [[[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]]> : tensor<2x1x2x3xf32>
  %b = arith.constant dense<[[[-5.0, -4.0], [-3.0, -2.0], [-1.0, 0.0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]]> : tensor<3x3x2xf32>
  %mm = call @matmul_broadcast(%a, %b) : (tensor<2x1x2x3xf32>, tensor<3x3x2xf32>) -> tensor<2x3x2x2xf32>
  %mm_u = tensor.cast %mm : tensor<2x3x2x2xf32> to tensor<*xf32>
  call @print(%mm_u) : (tensor<*xf32>) -> ()

  %x = arith.constant dense<[[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]], [[9.0, 10.0, 11.0], [12.0, 13.0, 14.0], [15.0, 16.0, 17.0]], [[18.0, 19.0, 20.0], [21.0, 22.0, 23.0], [24.0, 25.0, 26.0]], [[27.0, 28.0, 29.0], [30.0, 31.0, 32.0], [33.0, 34.0, 35.0]]]]> : tensor<1x4x3x3xf32>
  %w = arith.constant dense<[[[[-1.0, 0.0], [1.0, -1.0]], [[0.0, 1.0], [-1.0, 0.0]]], [[[1.0, -1.0], [0.0, 1.0]], [[-1.0, 0.0], [1.0, -1.0]]]]> : tensor<2x2x2x2xf32>
  %bias = arith.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %c = call @conv_group2(%x, %w, %bias) : (tensor<1x4x3x3xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x3xf32>
  %c_u = tensor.cast %c : tensor<1x2x2x3xf32> to tensor<*xf32>
  call @print(%c_u) : (tensor<*xf32>) -> ()

  %p_in = arith.constant dense<[[[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]]]> : tensor<1x1x4x4xf32>
  %mp = call @max_pool_ceil(%p_in) : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  %mp_u = tensor.cast %mp : tensor<1x1x2x2xf32> to tensor<*xf32>
  call @print(%mp_u) : (tensor<*xf32>) -> ()
  %ap = call @average_pool_pads(%p_in) : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  %ap_u = tensor.cast %ap : tensor<1x1x2x2xf32> to tensor<*xf32>
  call @print(%ap_u) : (tensor<*xf32>) -> ()
  return
}
