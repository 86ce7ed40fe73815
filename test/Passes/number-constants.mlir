// RUN: strata-opt %s -split-input-file --strata-number-constants | FileCheck %s
//
// strata-number-constants (Passes.cpp): one-shot bufferization names the
// constant memref.globals in the order it visits the functions, a hash
// order for functions that do not call each other. The pass renames the
// constant globals __constant_0, __constant_1, ... in the order of their
// first memref.get_global, function by function in the module's order
// (unused ones last), moves them to the start of the module in that order,
// and updates the uses. Globals that are not constant keep their names.
// (In the pipeline it runs on module @kernels after bufferization.)

// @first reads [1, 2, 3] first, @second then reads [4, 5, 6]; the i32
// constant nobody reads comes last. @state is not constant: not renamed,
// left after the constants.
// CHECK-LABEL: module
// CHECK-NEXT: memref.global "private" constant @__constant_0 : memref<3xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> {alignment = 64 : i64}
// CHECK-NEXT: memref.global "private" constant @__constant_1 : memref<3xf32> = dense<[4.000000e+00, 5.000000e+00, 6.000000e+00]> {alignment = 64 : i64}
// CHECK-NEXT: memref.global "private" constant @__constant_2 : memref<2xi32> = dense<7>
// CHECK-NEXT: memref.global "private" @state : memref<3xf32>
// CHECK-LABEL: func.func @first
// CHECK: memref.get_global @__constant_0 : memref<3xf32>
// CHECK: memref.get_global @state : memref<3xf32>
// CHECK-LABEL: func.func @second
// CHECK: %[[A:.*]] = memref.get_global @__constant_1 : memref<3xf32>
// CHECK: %[[B:.*]] = memref.get_global @__constant_0 : memref<3xf32>
// CHECK: linalg.add ins(%[[A]], %[[B]] : memref<3xf32>, memref<3xf32>)
// CHECK-NOT: __constant_3xf32
// CHECK-NOT: __constant_2xi32
module {
  memref.global "private" constant @__constant_3xf32_0 : memref<3xf32> = dense<[4.0, 5.0, 6.0]> {alignment = 64 : i64}
  memref.global "private" @state : memref<3xf32> = dense<0.0>
  memref.global "private" constant @__constant_3xf32 : memref<3xf32> = dense<[1.0, 2.0, 3.0]> {alignment = 64 : i64}
  memref.global "private" constant @__constant_2xi32 : memref<2xi32> = dense<7>
  func.func @first(%out: memref<3xf32>) {
    %b = memref.get_global @__constant_3xf32 : memref<3xf32>
    %s = memref.get_global @state : memref<3xf32>
    linalg.add ins(%b, %s : memref<3xf32>, memref<3xf32>) outs(%out : memref<3xf32>)
    return
  }
  func.func @second(%out: memref<3xf32>) {
    %a = memref.get_global @__constant_3xf32_0 : memref<3xf32>
    %b = memref.get_global @__constant_3xf32 : memref<3xf32>
    linalg.add ins(%a, %b : memref<3xf32>, memref<3xf32>) outs(%out : memref<3xf32>)
    return
  }
}

// -----

// Names already in the target form, in the wrong order: they swap (the
// renaming goes through temporary names, so no new name meets an old one),
// and each use still reads the same values.
// CHECK-LABEL: module
// CHECK-NEXT: memref.global "private" constant @__constant_0 : memref<2xf32> = dense<[3.000000e+00, 4.000000e+00]>
// CHECK-NEXT: memref.global "private" constant @__constant_1 : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK-LABEL: func.func @kernel
// CHECK: %[[X:.*]] = memref.get_global @__constant_0 : memref<2xf32>
// CHECK: %[[Y:.*]] = memref.get_global @__constant_1 : memref<2xf32>
// CHECK: linalg.sub ins(%[[X]], %[[Y]] : memref<2xf32>, memref<2xf32>)
// CHECK-NOT: __strata_renaming
module {
  memref.global "private" constant @__constant_0 : memref<2xf32> = dense<[1.0, 2.0]>
  memref.global "private" constant @__constant_1 : memref<2xf32> = dense<[3.0, 4.0]>
  func.func @kernel(%out: memref<2xf32>) {
    %x = memref.get_global @__constant_1 : memref<2xf32>
    %y = memref.get_global @__constant_0 : memref<2xf32>
    linalg.sub ins(%x, %y : memref<2xf32>, memref<2xf32>) outs(%out : memref<2xf32>)
    return
  }
}
