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

// The GEMM and attention kernels' parameters: every field named; the
// attention operands print without their name inside #strata.attention;
// fields at their defaults (an operand's arg, causal_offset, bias,
// zero_masked_rows) are left out.

// CHECK-LABEL: func.func private @gemm_params
// CHECK-SAME: strata.gemm = #strata.gemm<rows = 256, columns = 128, depth = 192, type = bf16, tile_columns = 128, a = 0, w = 1>
func.func private @gemm_params(tensor<256x192xbf16>, tensor<192x128xbf16>) -> tensor<256x128xbf16>
    attributes {strata.kernel, strata.kind = "codegen", strata.template = "gemm",
                strata.gemm = #strata.gemm<w = 1, a = 0, rows = 256, columns = 128,
                                           depth = 192, type = bf16, tile_columns = 128>}

// CHECK-LABEL: func.func private @attention_params
// CHECK-SAME: strata.attention = #strata.attention<q = <arg = 0, offset = 0, batch_strides = [8192, 0], row_stride = 64>, k = <arg = 1, offset = 64, batch_strides = [8192, 0], row_stride = 192>, v = <arg = 2, offset = 0, batch_strides = [8192, 0], row_stride = 64>, o = <offset = 0, batch_strides = [8192, 0], row_stride = 64>, batch_dims = [2, 1], batch = 2, seq_q = 128, seq_k = 128, head_dim = 64, query_rows = 64, scale = 1.250000e-01, type = f16, causal_offset = 0, bias = <arg = 3, batch_strides = [128, 0], row_stride = 0, key_stride = 1, factor = -2.500000e-01, type = f32>, zero_masked_rows = true>
// CHECK-LABEL: func.func private @attention_plain
// CHECK-SAME: #strata.attention<q = <arg = 0, offset = 0, batch_strides = [], row_stride = 64>, k = <arg = 1, offset = 0, batch_strides = [], row_stride = 64>, v = <arg = 2, offset = 0, batch_strides = [], row_stride = 64>, o = <offset = 0, batch_strides = [], row_stride = 64>, batch_dims = [], batch = 1, seq_q = 64, seq_k = 64, head_dim = 64, query_rows = 64, scale = 1.000000e+00, type = bf16>}
func.func private @attention_params(tensor<2x128x64xf16>, tensor<2x128x192xf16>, tensor<2x128x64xf16>, tensor<2x1x1x128xf32>) -> tensor<2x128x64xf16>
    attributes {strata.kernel, strata.kind = "codegen", strata.template = "flash_attention",
                strata.attention = #strata.attention<
                    q = <arg = 0, offset = 0, batch_strides = [8192, 0], row_stride = 64>,
                    k = <arg = 1, offset = 64, batch_strides = [8192, 0], row_stride = 192>,
                    v = <arg = 2, offset = 0, batch_strides = [8192, 0], row_stride = 64>,
                    o = <offset = 0, batch_strides = [8192, 0], row_stride = 64>,
                    batch_dims = [2, 1], batch = 2, seq_q = 128, seq_k = 128,
                    head_dim = 64, query_rows = 64, scale = 0.125, type = f16,
                    causal_offset = 0, zero_masked_rows = true,
                    bias = <arg = 3, batch_strides = [128, 0], row_stride = 0,
                            key_stride = 1, factor = -0.25, type = f32>>}
func.func private @attention_plain(tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
    attributes {strata.attention = #strata.attention<
                    q = <arg = 0, offset = 0, batch_strides = [], row_stride = 64>,
                    k = <arg = 1, offset = 0, batch_strides = [], row_stride = 64>,
                    v = <arg = 2, offset = 0, batch_strides = [], row_stride = 64>,
                    o = <offset = 0, batch_strides = [], row_stride = 64>,
                    batch_dims = [], batch = 1, seq_q = 64, seq_k = 64,
                    head_dim = 64, query_rows = 64, scale = 1.0, type = bf16>}

// The compile's options on the module.
// CHECK: module attributes {strata.compile = #strata.compile<target = "rocm", arch = "gfx942", host_kernels = true, input_values = {n = array<f64: 2.500000e+00>}>}
module attributes {strata.compile = #strata.compile<target = "rocm", arch = "gfx942", host_kernels = true, input_values = {n = array<f64: 2.5>}>} {}
