// Numbers from lowered reductions, run by the JIT after upstream's
// bufferization and LLVM lowering: reduce_sum without keepdims, arg_max with
// select_last_index, softmax and log_softmax, cum_sum exclusive + reverse.
// Expected values from numpy (sum(axis=1); argmax over the reversed rows;
// exp(x - max) / sum; the reversed cumulative sum minus x).
//
// RUN: strata-opt --strata-convert-graph-to-linalg %s \
// RUN: | mlir-opt --one-shot-bufferize=bufferize-function-boundaries \
// RUN:     --convert-linalg-to-loops --convert-scf-to-cf --convert-math-to-llvm \
// RUN:     --convert-math-to-funcs --convert-math-to-libm --arith-expand \
// RUN:     --convert-arith-to-llvm --expand-strided-metadata \
// RUN:     --finalize-memref-to-llvm --convert-cf-to-llvm --convert-func-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

// reduce_sum over axis 1 of arange(1, 13).reshape(3, 2, 2), keepdims = 0.
// CHECK: sizes = [3, 2]
// CHECK-NEXT: [4,   6]
// CHECK-NEXT: [12,   14]
// CHECK-NEXT: [20,   22]
// arg_max along axis 1 of [[1, 5, 5, 2], [7, 7, 0, 7]]: last of the ties,
// then first of the ties (keepdims = 0).
// CHECK: [2,  3]
// CHECK: [1,  0]
// softmax and log_softmax of [[1, 2, 3], [0, 0, 0]] along the last axis.
// CHECK: [0.0900306,   0.244728,   0.665241]
// CHECK-NEXT: [0.333333,   0.333333,   0.333333]
// CHECK: [-2.40761,   -1.40761,   -0.407606]
// CHECK-NEXT: [-1.09861,   -1.09861,   -1.09861]
// cum_sum of [1, 2, 3, 4, 5], exclusive and reversed.
// CHECK: [14,  12,  9,  5,  0]

func.func private @printMemrefI64(memref<*xi64>)
func.func private @printMemrefF32(memref<*xf32>)

func.func @sum(%x: tensor<3x2x2xf32>) -> tensor<3x2xf32> {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<3x2x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

func.func @arg_max(%x: tensor<2x4xf32>) -> (tensor<2xi64>, tensor<2xi64>) {
  %0 = graph.arg_max %x {axis = 1 : i64, keepdims = 0 : i64, select_last_index = 1 : i64} : (tensor<2x4xf32>) -> tensor<2xi64>
  %1 = graph.arg_max %x {axis = 1 : i64, keepdims = 0 : i64} : (tensor<2x4xf32>) -> tensor<2xi64>
  return %0, %1 : tensor<2xi64>, tensor<2xi64>
}

func.func @softmax(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = graph.softmax %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.log_softmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

func.func @cum_sum(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = graph.cum_sum %x {axis = 0 : i64, exclusive = 1 : i64, reverse = 1 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

func.func @printF32(%t: tensor<*xf32>) {
  %m = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

func.func @printI64(%t: tensor<*xi64>) {
  %m = bufferization.to_buffer %t : tensor<*xi64> to memref<*xi64>
  call @printMemrefI64(%m) : (memref<*xi64>) -> ()
  return
}

func.func @main() {
  %x = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]], [[9.0, 10.0], [11.0, 12.0]]]> : tensor<3x2x2xf32>
  %s = call @sum(%x) : (tensor<3x2x2xf32>) -> tensor<3x2xf32>
  %s1 = tensor.cast %s : tensor<3x2xf32> to tensor<*xf32>
  call @printF32(%s1) : (tensor<*xf32>) -> ()

  %a = arith.constant dense<[[1.0, 5.0, 5.0, 2.0], [7.0, 7.0, 0.0, 7.0]]> : tensor<2x4xf32>
  %last, %first = call @arg_max(%a) : (tensor<2x4xf32>) -> (tensor<2xi64>, tensor<2xi64>)
  %last1 = tensor.cast %last : tensor<2xi64> to tensor<*xi64>
  %first1 = tensor.cast %first : tensor<2xi64> to tensor<*xi64>
  call @printI64(%last1) : (tensor<*xi64>) -> ()
  call @printI64(%first1) : (tensor<*xi64>) -> ()

  %b = arith.constant dense<[[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]> : tensor<2x3xf32>
  %sm, %lsm = call @softmax(%b) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %sm1 = tensor.cast %sm : tensor<2x3xf32> to tensor<*xf32>
  %lsm1 = tensor.cast %lsm : tensor<2x3xf32> to tensor<*xf32>
  call @printF32(%sm1) : (tensor<*xf32>) -> ()
  call @printF32(%lsm1) : (tensor<*xf32>) -> ()

  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %cs = call @cum_sum(%c) : (tensor<5xf32>) -> tensor<5xf32>
  %cs1 = tensor.cast %cs : tensor<5xf32> to tensor<*xf32>
  call @printF32(%cs1) : (tensor<*xf32>) -> ()
  return
}
