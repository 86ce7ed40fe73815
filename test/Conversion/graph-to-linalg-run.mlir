// The linalg-on-tensors form that strata-convert-graph-to-linalg produces
// composes with upstream's one-shot bufferization and lowering to LLVM, and
// computes the right values (broadcast add over a dynamic dimension, then
// exp) when run by the JIT.
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

// CHECK: rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1]
// CHECK-NEXT: [1, 1, 1]
// CHECK-NEXT: [20.0855, 20.0855, 20.0855]

func.func private @printMemrefF32(memref<*xf32>)

func.func @add_exp(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = graph.add %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %1 = graph.exp %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}

func.func @main() {
  %a = arith.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[0.0, -1.0, -2.0]> : tensor<3xf32>
  %dynamic = tensor.cast %a : tensor<2x3xf32> to tensor<?x3xf32>
  %r = call @add_exp(%dynamic, %b) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %unranked = tensor.cast %r : tensor<?x3xf32> to tensor<*xf32>
  %buffer = bufferization.to_buffer %unranked : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%buffer) : (memref<*xf32>) -> ()
  return
}
