// The special-op lowerings compose with upstream bufferization (scf.for
// over tensors included) and lowering to LLVM, and compute what ONNX's
// reference implementations compute; the expected values come from numpy:
// scatter with a duplicate index (the later update wins, or both add up),
// linear resize with align_corners, top-k with ties (the earlier index
// first), det with a row swap, einsum as a matmul, and max_unpool.
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
func.func private @printMemrefI64(memref<*xi64>)

func.func @print(%t: tensor<*xf32>) {
  %buffer = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%buffer) : (memref<*xf32>) -> ()
  return
}

func.func @printI64(%t: tensor<*xi64>) {
  %buffer = bufferization.to_buffer %t : tensor<*xi64> to memref<*xi64>
  call @printMemrefI64(%buffer) : (memref<*xi64>) -> ()
  return
}

// CHECK: sizes = [1, 5]
// CHECK-NEXT: [1, 2.2, 3, 3.3, 5]
// CHECK: sizes = [1, 5]
// CHECK-NEXT: [1, 5.3, 3, 7.3, 5]
// CHECK: sizes = [2, 3]
// CHECK-NEXT: [1, 1.5, 2]
// CHECK-NEXT: [3, 3.5, 4]
// CHECK: sizes = [1, 2]
// CHECK-NEXT: [3, 3]
// CHECK: sizes = [1, 2]
// CHECK-NEXT: [0, 2]
// CHECK: sizes = [1, 3]
// CHECK-NEXT: [1, 2, 3]
// CHECK: sizes = [1, 3]
// CHECK-NEXT: [1, 3, 0]
// CHECK: sizes = [2]
// CHECK-NEXT: [18, -1]
// CHECK: sizes = [2, 2]
// CHECK-NEXT: [19, 22]
// CHECK-NEXT: [43, 50]
// CHECK: sizes = [1, 1, 4, 4]
// CHECK-NEXT: {{\[}}[0, 0, 0, 0],
// CHECK-NEXT: [0, 5, 0, 6],
// CHECK-NEXT: [0, 0, 0, 0],
// CHECK-NEXT: [0, 7, 0, 8]]]]
func.func @main() {
  %data = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0]]> : tensor<1x5xf32>
  %indices = arith.constant dense<[[1, 1, 3]]> : tensor<1x3xi64>
  %updates = arith.constant dense<[[1.1, 2.2, 3.3]]> : tensor<1x3xf32>
  %s0 = graph.scatter_elements %data, %indices, %updates {axis = 1 : i64} : (tensor<1x5xf32>, tensor<1x3xi64>, tensor<1x3xf32>) -> tensor<1x5xf32>
  %s1 = graph.scatter_elements %data, %indices, %updates {axis = -1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x3xi64>, tensor<1x3xf32>) -> tensor<1x5xf32>
  %c0 = tensor.cast %s0 : tensor<1x5xf32> to tensor<*xf32>
  call @print(%c0) : (tensor<*xf32>) -> ()
  %c1 = tensor.cast %s1 : tensor<1x5xf32> to tensor<*xf32>
  call @print(%c1) : (tensor<*xf32>) -> ()

  %x = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %sizes = arith.constant dense<[2, 3]> : tensor<2xi64>
  %r = graph.resize %x sizes %sizes {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %c2 = tensor.cast %r : tensor<2x3xf32> to tensor<*xf32>
  call @print(%c2) : (tensor<*xf32>) -> ()

  %t = arith.constant dense<[[3.0, 1.0, 3.0, 2.0]]> : tensor<1x4xf32>
  %v0, %i0 = graph.top_k %t {k = 2 : i64} : (tensor<1x4xf32>) -> (tensor<1x2xf32>, tensor<1x2xi64>)
  %v1, %i1 = graph.top_k %t {k = 3 : i64, largest = 0 : i64} : (tensor<1x4xf32>) -> (tensor<1x3xf32>, tensor<1x3xi64>)
  %c3 = tensor.cast %v0 : tensor<1x2xf32> to tensor<*xf32>
  call @print(%c3) : (tensor<*xf32>) -> ()
  %c4 = tensor.cast %i0 : tensor<1x2xi64> to tensor<*xi64>
  call @printI64(%c4) : (tensor<*xi64>) -> ()
  %c5 = tensor.cast %v1 : tensor<1x3xf32> to tensor<*xf32>
  call @print(%c5) : (tensor<*xf32>) -> ()
  %c6 = tensor.cast %i1 : tensor<1x3xi64> to tensor<*xi64>
  call @printI64(%c6) : (tensor<*xi64>) -> ()

  %m = arith.constant dense<[[[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]]> : tensor<2x3x3xf32>
  %d = graph.det %m : (tensor<2x3x3xf32>) -> tensor<2xf32>
  %c7 = tensor.cast %d : tensor<2xf32> to tensor<*xf32>
  call @print(%c7) : (tensor<*xf32>) -> ()

  %a = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %e = graph.einsum %a, %b {equation = "ij,jk"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c8 = tensor.cast %e : tensor<2x2xf32> to tensor<*xf32>
  call @print(%c8) : (tensor<*xf32>) -> ()

  %u = arith.constant dense<[[[[5.0, 6.0], [7.0, 8.0]]]]> : tensor<1x1x2x2xf32>
  %ui = arith.constant dense<[[[[5, 7], [13, 15]]]]> : tensor<1x1x2x2xi64>
  %un = graph.max_unpool %u, %ui {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) -> tensor<1x1x4x4xf32>
  %c9 = tensor.cast %un : tensor<1x1x4x4xf32> to tensor<*xf32>
  call @print(%c9) : (tensor<*xf32>) -> ()
  return
}
