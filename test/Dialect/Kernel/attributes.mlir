// RUN: strata-opt %s | strata-opt | FileCheck %s

// The kernel layer's attributes print and parse back as they are: the
// launch with the fields that differ from their defaults, in a fixed order.

// CHECK-LABEL: func.func private @rows
// CHECK-SAME: strata.kind = "codegen"
// CHECK-SAME: strata.launch = #strata.launch<block_ops, grid = [16, 1, 1], block = [128, 1, 1], shared = 0, static_shared = 512>
// CHECK-SAME: strata.nodes = ["n0", "n1"]
// CHECK-SAME: strata.parallel_block = 4 : i64
func.func private @rows(tensor<64x8xf32>) -> tensor<64x8xf32> attributes {
  strata.kernel, strata.kind = "codegen", strata.category = "per",
  strata.nodes = ["n0", "n1"], strata.fused_because = [], strata.not_fused = [],
  strata.parallel_rows = 64 : i64, strata.parallel_block = 4 : i64,
  strata.launch = #strata.launch<block_ops, static_shared = 512,
                                 block = [128, 1, 1], grid = [16, 1, 1]>}

// CHECK-LABEL: func.func private @gemm
// CHECK-SAME: strata.launch = #strata.launch<gemm, grid = [4, 1, 1], block = [384, 1, 1], shared = 197696, persistent = 1, tensor_maps = [0, 320, 256, 640, 64, 128, 128], waits_for_grids>
// CHECK-SAME: strata.ptx_kernel = "gemm_ptx"
// CHECK-SAME: strata.ptx_launch = #strata.launch<gemm, grid = [8, 1, 1], block = [256, 1, 1], shared = 0>
func.func private @gemm(tensor<4xf32>) -> tensor<4xf32> attributes {
  strata.kernel, strata.kind = "codegen", strata.template = "gemm",
  strata.launch = #strata.launch<gemm, grid = [4, 1, 1], block = [384, 1, 1],
      shared = 197696, persistent = 1, waits_for_grids,
      tensor_maps = [0, 320, 256, 640, 64, 128, 128]>,
  strata.ptx_kernel = "gemm_ptx",
  strata.ptx_launch = #strata.launch<gemm, grid = [8, 1, 1], block = [256, 1, 1]>}

// CHECK-LABEL: func.func private @matmul
// CHECK-SAME: strata.library = "cublaslt.matmul"
func.func private @matmul(tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {strata.kernel, strata.kind = "library",
                strata.library = "cublaslt.matmul", strata.attrs = {trans_b = 1 : i64}}

// CHECK-LABEL: func.func private @conv_sum
// CHECK-SAME: strata.accumulates = 2 : i64
func.func private @conv_sum(tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    attributes {strata.kernel, strata.kind = "library",
                strata.library = "dnnl.conv", strata.accumulates = 2 : i64}
