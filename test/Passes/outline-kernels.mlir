// RUN: strata-opt %s -split-input-file -verify-diagnostics --strata-outline-kernels | FileCheck %s
//
// strata-outline-kernels (Passes.cpp), the kernel stage's first pass: the
// bodies of the generated kernels (strata.kind = "codegen") move into a new
// module @kernels, public, without the decisions, their inputs marked
// bufferization.writable = false, unsigned integers in their signature
// made signless (casts at the boundary), graph.constants turned into
// arith.constants. The top level keeps each as a private declaration with
// its decisions. A row-parallel kernel's copy computes one block of rows
// and its declaration records each buffer's bytes per block
// (strata.block_strides). Library kernels stay as they are. A module that
// already has its kernels outlined is an error, as is a row split that no
// longer holds.

// CHECK-LABEL: module {
// The generated kernel: a declaration with its decisions.
// CHECK: func.func private @strata_poi_add_0(tensor<4xui8>, tensor<4xf32>) -> (tensor<4xui8>, tensor<4xf32>) attributes {strata.category = "poi", strata.kernel, strata.kind = "codegen"}
// CHECK-NOT: graph.add
// The library kernel: unchanged, body and all.
// CHECK: func.func private @strata_lib_matmul_1(%arg0: tensor<4x8xf32>, %arg1: tensor<8x4xf32>) -> tensor<4x4xf32> attributes {{{.*}}strata.kind = "library"{{.*}}} {
// CHECK-NEXT: graph.matmul %arg0, %arg1
// The row-parallel kernel: 64-row blocks of 64 f32 (16384 bytes) for the
// input and the result, the weight read whole (0).
// CHECK: func.func private @strata_mm_matmul_2(tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32> attributes {strata.block_strides = array<i64: 16384, 0, 16384>, {{.*}}strata.parallel_block = 64 : i64
// CHECK: func.func @main
// CHECK: call @strata_poi_add_0(%arg0, %arg1)
// CHECK: call @strata_lib_matmul_1(%arg2, %arg3)
// CHECK: call @strata_mm_matmul_2(%arg4, %arg5)
// CHECK: module @kernels {
// CHECK-NEXT: func.func @strata_poi_add_0(%arg0: tensor<4xi8> {bufferization.writable = false}, %arg1: tensor<4xf32> {bufferization.writable = false}) -> (tensor<4xi8>, tensor<4xf32>) {
// CHECK-NEXT: %[[X:.*]] = builtin.unrealized_conversion_cast %arg0 : tensor<4xi8> to tensor<4xui8>
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT: %[[F:.*]] = graph.add %arg1, %[[C]]
// CHECK-NEXT: %[[U:.*]] = graph.add %[[X]], %[[X]] : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK-NEXT: %[[I:.*]] = builtin.unrealized_conversion_cast %[[U]] : tensor<4xui8> to tensor<4xi8>
// CHECK-NEXT: return %[[I]], %[[F]] : tensor<4xi8>, tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.func @strata_mm_matmul_2(%arg0: tensor<64x64xf32> {bufferization.writable = false}, %arg1: tensor<64x64xf32> {bufferization.writable = false}) -> tensor<64x64xf32> {
// CHECK-NEXT: graph.matmul %arg0, %arg1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
// CHECK-NOT: strata_lib_matmul_1
// CHECK-NOT: graph.constant
module {
  func.func private @strata_poi_add_0(%arg0: tensor<4xui8>, %arg1: tensor<4xf32>) -> (tensor<4xui8>, tensor<4xf32>) attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi"} {
    %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %0 = graph.add %arg1, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = graph.add %arg0, %arg0 : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    return %1, %0 : tensor<4xui8>, tensor<4xf32>
  }
  func.func private @strata_lib_matmul_1(%arg0: tensor<4x8xf32>, %arg1: tensor<8x4xf32>) -> tensor<4x4xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "dnnl.matmul", strata.category = "lib"} {
    %0 = graph.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
  func.func private @strata_mm_matmul_2(%arg0: tensor<256x64xf32>, %arg1: tensor<64x64xf32>) -> tensor<256x64xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "mm", strata.parallel_block = 64 : i64, strata.parallel_rows = 256 : i64} {
    %0 = graph.matmul %arg0, %arg1 : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
    return %0 : tensor<256x64xf32>
  }
  func.func @main(%x: tensor<4xui8>, %y: tensor<4xf32>, %a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %r: tensor<256x64xf32>, %w: tensor<64x64xf32>) -> (tensor<4xui8>, tensor<4xf32>, tensor<4x4xf32>, tensor<256x64xf32>) {
    %0:2 = call @strata_poi_add_0(%x, %y) : (tensor<4xui8>, tensor<4xf32>) -> (tensor<4xui8>, tensor<4xf32>)
    %1 = call @strata_lib_matmul_1(%a, %b) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    %2 = call @strata_mm_matmul_2(%r, %w) : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
    return %0#0, %0#1, %1, %2 : tensor<4xui8>, tensor<4xf32>, tensor<4x4xf32>, tensor<256x64xf32>
  }
}

// -----

// The partitioner chose blocks of 64 rows; a block of 48 is not a split
// the row analysis makes of 256 rows.
module {
  // expected-error @+1 {{internal error: the kernel's row split changed between partitioning and codegen}}
  func.func private @strata_mm_matmul_0(%arg0: tensor<256x64xf32>, %arg1: tensor<64x64xf32>) -> tensor<256x64xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "mm", strata.parallel_block = 48 : i64, strata.parallel_rows = 256 : i64} {
    %0 = graph.matmul %arg0, %arg1 : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
    return %0 : tensor<256x64xf32>
  }
  func.func @main(%r: tensor<256x64xf32>, %w: tensor<64x64xf32>) -> tensor<256x64xf32> {
    %0 = call @strata_mm_matmul_0(%r, %w) : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
    return %0 : tensor<256x64xf32>
  }
}

// -----

// expected-error @+1 {{the module already has its kernels outlined (it is past the fused stage)}}
module {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  module @kernels {
  }
}
