// RUN: strata-opt %s -split-input-file --strata-vectorize-inner-loops | FileCheck %s
//
// strata-vectorize-inner-loops (Passes.cpp): an innermost loop whose every
// store writes consecutive elements (its induction variable is the last
// index) is marked "do not unroll", so that LLVM vectorizes it rather than
// unrolling it whole and vectorizing the loop around it with gathers.

// A channels-last scale: [rows, 112, 32] times a [32] vector. The channel
// loop (32 iterations) is the one to vectorize; the loops around it are
// left alone.
// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[NOUNROLL:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @scale
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK: } {llvm.loop_annotation = #[[NOUNROLL]]}
// CHECK-NEXT: }
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @scale(%s: memref<32xf32>, %x: memref<2x112x32xf32>,
                 %y: memref<2x112x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c112 = arith.constant 112 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c112 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        %a = memref.load %s[%k] : memref<32xf32>
        %b = memref.load %x[%i, %j, %k] : memref<2x112x32xf32>
        %p = arith.mulf %a, %b : f32
        memref.store %p, %y[%i, %j, %k] : memref<2x112x32xf32>
      }
    }
  }
  return
}

// -----

// A reduction's innermost loop stores to the same element on every
// iteration: LLVM's unrolling stays (its instruction-level parallelism).
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @row_sum(%x: memref<64x64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %k = %c0 to %c64 step %c1 {
      %a = memref.load %x[%i, %k] : memref<64x64xf32>
      %b = memref.load %y[%i] : memref<64xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%i] : memref<64xf32>
    }
  }
  return
}

// -----

// Too short for a vector (3 channels), a loop that carries a value, a
// transposing store (the induction variable is not the last index) and a
// loop with no loop around it keep LLVM's defaults.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @left_alone(%x: memref<64x3xf32>, %y: memref<64x3xf32>,
                      %t: memref<64x64xf32>, %v: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %k = %c0 to %c3 step %c1 {
      %a = memref.load %x[%i, %k] : memref<64x3xf32>
      memref.store %a, %y[%i, %k] : memref<64x3xf32>
    }
  }
  %r = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc0 = %zero) -> f32 {
    %inner = scf.for %k = %c0 to %c64 step %c1 iter_args(%acc = %acc0) -> f32 {
      %a = memref.load %t[%i, %k] : memref<64x64xf32>
      %s = arith.addf %acc, %a : f32
      scf.yield %s : f32
    }
    scf.yield %inner : f32
  }
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %k = %c0 to %c64 step %c1 {
      %a = memref.load %t[%i, %k] : memref<64x64xf32>
      memref.store %a, %t[%k, %i] : memref<64x64xf32>
    }
  }
  scf.for %k = %c0 to %c64 step %c1 {
    %a = memref.load %v[%k] : memref<64xf32>
    memref.store %a, %v[%k] : memref<64xf32>
  }
  return %r : f32
}
