// RUN: strata-opt %s -split-input-file --strata-results-in-place | FileCheck %s
//
// strata-results-in-place (Passes.cpp): a kernel result computed into a
// temporary and copied into its out-parameter through a view is computed
// into the out-parameter through the inverse view, and the copy goes.

// An attention's heads merged: the transpose writes the out-parameter.
// CHECK-LABEL: func.func @merge_heads
// CHECK-SAME: (%[[X:.+]]: memref<1x12x128x64xf32>, %[[OUT:.+]]: memref<1x128x768xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[V:.+]] = memref.expand_shape %[[OUT]] {{\[}}[0], [1], [2, 3]] output_shape [1, 128, 12, 64]
// CHECK: linalg.transpose ins(%[[X]] : {{.*}}) outs(%[[V]] : memref<1x128x12x64xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @merge_heads(%x: memref<1x12x128x64xf32>, %out: memref<1x128x768xf32>) {
  %t = memref.alloc() {alignment = 64 : i64} : memref<1x128x12x64xf32>
  linalg.transpose ins(%x : memref<1x12x128x64xf32>) outs(%t : memref<1x128x12x64xf32>) permutation = [0, 2, 1, 3]
  %v = memref.collapse_shape %t [[0], [1], [2, 3]] : memref<1x128x12x64xf32> into memref<1x128x768xf32>
  memref.copy %v, %out : memref<1x128x768xf32> to memref<1x128x768xf32>
  return
}

// -----

// The other way round: heads split from a flat result.
// CHECK-LABEL: func.func @split_heads
// CHECK-NOT: memref.alloc
// CHECK: memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<1x128x12x64xf32> into memref<1x128x768xf32>
// CHECK-NOT: memref.copy
// CHECK: return
func.func @split_heads(%x: memref<1x128x768xf32>, %out: memref<1x128x12x64xf32>) {
  %t = memref.alloc() : memref<1x128x768xf32>
  linalg.copy ins(%x : memref<1x128x768xf32>) outs(%t : memref<1x128x768xf32>)
  %v = memref.expand_shape %t [[0], [1], [2, 3]] output_shape [1, 128, 12, 64] : memref<1x128x768xf32> into memref<1x128x12x64xf32>
  memref.copy %v, %out : memref<1x128x12x64xf32> to memref<1x128x12x64xf32>
  return
}

// -----

// The temporary is read after the copy, or the out-parameter is read by the
// kernel: the copy stays.
// CHECK-LABEL: func.func @read_after
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK-LABEL: func.func @out_read
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @read_after(%x: memref<4x8xf32>, %out: memref<32xf32>, %more: memref<4x8xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  linalg.copy ins(%x : memref<4x8xf32>) outs(%t : memref<4x8xf32>)
  %v = memref.collapse_shape %t [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  memref.copy %v, %out : memref<32xf32> to memref<32xf32>
  linalg.copy ins(%t : memref<4x8xf32>) outs(%more : memref<4x8xf32>)
  return
}
func.func @out_read(%x: memref<4x8xf32>, %out: memref<32xf32>, %more: memref<32xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  linalg.copy ins(%x : memref<4x8xf32>) outs(%t : memref<4x8xf32>)
  %v = memref.collapse_shape %t [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  memref.copy %v, %out : memref<32xf32> to memref<32xf32>
  linalg.copy ins(%out : memref<32xf32>) outs(%more : memref<32xf32>)
  return
}
