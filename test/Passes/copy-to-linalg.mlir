// RUN: strata-opt %s -split-input-file --strata-copy-to-linalg | FileCheck %s
//
// strata-copy-to-linalg (Passes.cpp): every memref.copy becomes a
// linalg.copy of the same source and target, which lowers to loops instead
// of a call of MLIR's runner library (memrefCopy) that a strided copy
// would need. Nested modules (the kernels) are rewritten too; other ops
// stay.

// A strided view copied into a contiguous buffer.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: memref.copy
// CHECK: %[[V:.*]] = memref.subview %arg0[0, 1] [4, 2] [1, 1]
// CHECK: linalg.copy ins(%[[V]] : memref<4x2xf32, strided<[8, 1], offset: 1>>) outs(%arg1 : memref<4x2xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @strided(%a: memref<4x8xf32>, %b: memref<4x2xf32>) {
  %v = memref.subview %a[0, 1] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1], offset: 1>>
  memref.copy %v, %b : memref<4x2xf32, strided<[8, 1], offset: 1>> to memref<4x2xf32>
  return
}

// -----

// Two copies in a kernel of module @kernels, in order; the add between
// them stays as it was.
// CHECK-LABEL: module @kernels
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%arg0 : memref<3xf32>) outs(%arg1 : memref<3xf32>)
// CHECK: linalg.add ins(%arg1, %arg0 : memref<3xf32>, memref<3xf32>) outs(%arg2 : memref<3xf32>)
// CHECK: linalg.copy ins(%arg2 : memref<3xf32>) outs(%arg1 : memref<3xf32>)
// CHECK-NOT: memref.copy
module {
  module @kernels {
    func.func @kernel(%a: memref<3xf32>, %b: memref<3xf32>, %c: memref<3xf32>) {
      memref.copy %a, %b : memref<3xf32> to memref<3xf32>
      linalg.add ins(%b, %a : memref<3xf32>, memref<3xf32>) outs(%c : memref<3xf32>)
      memref.copy %c, %b : memref<3xf32> to memref<3xf32>
      return
    }
  }
}
