// Numbers from lowered elementwise ops, run by the JIT after upstream's
// bufferization and LLVM lowering: unsigned division, max and wrapping add
// (printed after a ui8 -> i32 cast, which zero-extends), ONNX Mod with both
// sign rules, and Round (half to even). Expected values from numpy
// (floor_divide/maximum on uint8, mod, fmod, round).
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

// 200/3, 250/7, 10/3, 255/16 as uint8 (as int8 200 would be -56).
// CHECK: [66,  35,  3,  15]
// max(quotient, divisor): the last one is 16.
// CHECK: [66,  35,  3,  16]
// 200 + 3 etc. wrap modulo 256: 250 + 7 = 1, 255 + 16 = 15.
// CHECK: [203,  1,  13,  15]
// Mod, fmod = 0: the sign of the divisor.
// CHECK: [0,  -2,  5,  0,  2,  3]
// Mod, fmod = 1: the sign of the dividend.
// CHECK: [-0.1,  0.4,  5,  0.1,  -0.4,  3]
// Round: half to even.
// CHECK: [0,  2,  2,  -0,  -2,  2,  3,  -3]

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)

// The kernel takes i8 and reinterprets it as ui8 with a same-width cast: a
// ui8 function argument would reach bufferization through an
// unrealized_conversion_cast, which it cannot bufferize.
func.func @unsigned(%a8: tensor<4xi8>, %b8: tensor<4xi8>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %a = graph.cast %a8 : (tensor<4xi8>) -> tensor<4xui8>
  %b = graph.cast %b8 : (tensor<4xi8>) -> tensor<4xui8>
  %0 = graph.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = graph.max %0, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = graph.add %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %3 = graph.cast %0 : (tensor<4xui8>) -> tensor<4xi32>
  %4 = graph.cast %1 : (tensor<4xui8>) -> tensor<4xi32>
  %5 = graph.cast %2 : (tensor<4xui8>) -> tensor<4xi32>
  return %3, %4, %5 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

func.func @mod(%a: tensor<6xi32>, %b: tensor<6xi32>, %c: tensor<6xf32>, %d: tensor<6xf32>) -> (tensor<6xi32>, tensor<6xf32>) {
  %0 = graph.mod %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %1 = graph.mod %c, %d {fmod = 1 : i64} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  return %0, %1 : tensor<6xi32>, tensor<6xf32>
}

func.func @round(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = graph.round %x : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

func.func @printI32(%t: tensor<?xi32>) {
  %u = tensor.cast %t : tensor<?xi32> to tensor<*xi32>
  %m = bufferization.to_buffer %u : tensor<*xi32> to memref<*xi32>
  call @printMemrefI32(%m) : (memref<*xi32>) -> ()
  return
}

func.func @printF32(%t: tensor<?xf32>) {
  %u = tensor.cast %t : tensor<?xf32> to tensor<*xf32>
  %m = bufferization.to_buffer %u : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  // The bits of 200, 250, 10, 255 as ui8 (arith has no ui8 constants).
  %a8 = arith.constant dense<[-56, -6, 10, -1]> : tensor<4xi8>
  %b8 = arith.constant dense<[3, 7, 3, 16]> : tensor<4xi8>
  %q, %m, %s = call @unsigned(%a8, %b8) : (tensor<4xi8>, tensor<4xi8>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>)
  %q1 = tensor.cast %q : tensor<4xi32> to tensor<?xi32>
  %m1 = tensor.cast %m : tensor<4xi32> to tensor<?xi32>
  %s1 = tensor.cast %s : tensor<4xi32> to tensor<?xi32>
  call @printI32(%q1) : (tensor<?xi32>) -> ()
  call @printI32(%m1) : (tensor<?xi32>) -> ()
  call @printI32(%s1) : (tensor<?xi32>) -> ()

  %x = arith.constant dense<[-4, 7, 5, 4, -7, 8]> : tensor<6xi32>
  %y = arith.constant dense<[2, -3, 8, -2, 3, 5]> : tensor<6xi32>
  %fx = arith.constant dense<[-4.3, 7.2, 5.0, 4.3, -7.2, 8.0]> : tensor<6xf32>
  %fy = arith.constant dense<[2.1, -3.4, 8.0, -2.1, 3.4, 5.0]> : tensor<6xf32>
  %im, %fm = call @mod(%x, %y, %fx, %fy) : (tensor<6xi32>, tensor<6xi32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<6xi32>, tensor<6xf32>)
  %im1 = tensor.cast %im : tensor<6xi32> to tensor<?xi32>
  %fm1 = tensor.cast %fm : tensor<6xf32> to tensor<?xf32>
  call @printI32(%im1) : (tensor<?xi32>) -> ()
  call @printF32(%fm1) : (tensor<?xf32>) -> ()

  %r = arith.constant dense<[0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6, -2.6]> : tensor<8xf32>
  %rr = call @round(%r) : (tensor<8xf32>) -> tensor<8xf32>
  %rr1 = tensor.cast %rr : tensor<8xf32> to tensor<?xf32>
  call @printF32(%rr1) : (tensor<?xf32>) -> ()
  return
}
