// RUN: strata-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{attribute 'strata.kind' is "bogus"; expected one of "codegen", "library"}}
func.func private @k() attributes {strata.kind = "bogus"}

// -----

// expected-error @+1 {{attribute 'strata.kind' is "library", and the op names no library function (strata.library)}}
func.func private @k() attributes {strata.kind = "library"}

// -----

// expected-error @+1 {{attribute 'strata.nodes' must be an array of strings, and holds 3 : i64}}
func.func private @k() attributes {strata.nodes = ["a", 3]}

// -----

// expected-error @+1 {{attribute 'strata.parallel_block' is 0; it must be positive}}
func.func private @k() attributes {strata.parallel_block = 0 : i64}

// -----

// expected-error @+1 {{attribute 'strata.reason' must be a string, not 7 : i64}}
func.func private @k() attributes {strata.reason = 7}

// -----

// expected-error @+1 {{attribute 'strata.gpu_grid' is not an attribute of the kernel layer}}
func.func private @k() attributes {strata.gpu_grid = array<i64: 1, 1, 1>}

// -----

// expected-error @+1 {{attribute 'strata.template' is "conv"; expected one of "gemm", "flash_attention"}}
func.func private @k() attributes {strata.template = "conv"}

// -----

// expected-error @+1 {{attribute 'strata.launch' must be a #strata.launch}}
func.func private @k() attributes {strata.launch = [1, 1, 1]}

// -----

// expected-error @+1 {{a launch's grid is three positive extents, not [4, 1]}}
func.func private @k() attributes {strata.launch = #strata.launch<rows, grid = [4, 1], block = [1, 1, 1]>}

// -----

// expected-error @+1 {{a launch's block has 2048 threads; a block holds at most 1024}}
func.func private @k() attributes {strata.launch = #strata.launch<rows, grid = [1, 1, 1], block = [1024, 2, 1]>}

// -----

// expected-error @+1 {{a launch's shared is -4; it cannot be negative}}
func.func private @k() attributes {strata.launch = #strata.launch<rows, grid = [1, 1, 1], block = [1, 1, 1], shared = -4>}

// -----

// expected-error @+1 {{a launch's tensor maps are 7 numbers each, not 3 in all}}
func.func private @k() attributes {strata.launch = #strata.launch<rows, grid = [1, 1, 1], block = [1, 1, 1], tensor_maps = [0, 1, 2]>}

// -----

// expected-error @+1 {{unknown launch field 'threads'}}
func.func private @k() attributes {strata.launch = #strata.launch<rows, grid = [1, 1, 1], threads = [1, 1, 1]>}

// -----

// expected-error @+1 {{'grid' is given twice}}
func.func private @k() attributes {strata.launch = #strata.launch<rows, grid = [1, 1, 1], grid = [2, 1, 1]>}

// -----

// expected-error @+1 {{attribute 'strata.channels_last_args' holds 1; expected increasing argument positions below 1}}
func.func private @k(tensor<1x2x3x4xf32>) attributes {strata.channels_last_args = array<i64: 1>}

// -----

// expected-error @+1 {{attribute 'strata.channels_last_results' names result 0 of type 'tensor<2x3xf32>'; channels-last needs a tensor of rank 3 to 5}}
func.func private @k() -> tensor<2x3xf32> attributes {strata.channels_last_results = array<i64: 0>}

// -----

// expected-error @+1 {{attribute 'strata.channels_last_rows' needs channels-last results (strata.channels_last_results)}}
func.func private @k(tensor<1x2x3x4xf32>) attributes {strata.channels_last_args = array<i64: 0>, strata.channels_last_rows}

// -----

// expected-error @+1 {{attribute 'strata.accumulates' is 2; the kernel has 2 arguments}}
func.func private @k(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> attributes {strata.accumulates = 2 : i64}

// -----

// expected-error @+1 {{attribute 'strata.accumulates' names argument 0 of type 'tensor<2x4xf32>'; it must have the type of the kernel's one result}}
func.func private @k(tensor<2x4xf32>, tensor<4xf32>) -> tensor<4xf32> attributes {strata.accumulates = 0 : i64}

// -----

// expected-error @+1 {{attribute 'strata.gemm' must be a #strata.gemm, not {rows = 128 : i64}}}
func.func private @k() attributes {strata.gemm = {rows = 128}}

// -----

// expected-error @+1 {{a GEMM's tile_columns (256) do not divide its 128 columns}}
func.func private @k() attributes {strata.gemm = #strata.gemm<rows = 128, columns = 128, depth = 64, type = bf16, tile_columns = 256, a = 0, w = 1>}

// -----

// expected-error @+1 {{a GEMM's type is bf16 or f16, not 'f32'}}
func.func private @k() attributes {strata.gemm = #strata.gemm<rows = 128, columns = 128, depth = 64, type = f32, tile_columns = 128, a = 0, w = 1>}

// -----

// expected-error @+1 {{a GEMM's depth is 0; it must be positive}}
func.func private @k() attributes {strata.gemm = #strata.gemm<rows = 128, columns = 128, depth = 0, type = f16, tile_columns = 128, a = 0, w = 1>}

// -----

// expected-error @+1 {{attribute 'strata.gemm' names argument 1; the kernel has 1 arguments}}
func.func private @k(tensor<128x64xbf16>) attributes {strata.gemm = #strata.gemm<rows = 128, columns = 128, depth = 64, type = bf16, tile_columns = 128, a = 0, w = 1>}

// -----

// expected-error @+1 {{an attention block's batch (3) is not the product of its batch_dims (2)}}
func.func private @k() attributes {strata.attention = #strata.attention<q = <arg = 0, offset = 0, batch_strides = [0], row_stride = 64>, k = <arg = 1, offset = 0, batch_strides = [0], row_stride = 64>, v = <arg = 2, offset = 0, batch_strides = [0], row_stride = 64>, o = <offset = 0, batch_strides = [0], row_stride = 64>, batch_dims = [2], batch = 3, seq_q = 64, seq_k = 64, head_dim = 64, query_rows = 64, scale = 1.0, type = bf16>}

// -----

// expected-error @+1 {{an attention block's o is its result: it has no arg}}
func.func private @k() attributes {strata.attention = #strata.attention<q = <arg = 0, offset = 0, batch_strides = [], row_stride = 64>, k = <arg = 1, offset = 0, batch_strides = [], row_stride = 64>, v = <arg = 2, offset = 0, batch_strides = [], row_stride = 64>, o = <arg = 3, offset = 0, batch_strides = [], row_stride = 64>, batch_dims = [], batch = 1, seq_q = 64, seq_k = 64, head_dim = 64, query_rows = 64, scale = 1.0, type = bf16>}

// -----

// expected-error @+1 {{an attention block's k has 0 batch strides for 1 batch dimensions}}
func.func private @k() attributes {strata.attention = #strata.attention<q = <arg = 0, offset = 0, batch_strides = [0], row_stride = 64>, k = <arg = 1, offset = 0, batch_strides = [], row_stride = 64>, v = <arg = 2, offset = 0, batch_strides = [0], row_stride = 64>, o = <offset = 0, batch_strides = [0], row_stride = 64>, batch_dims = [1], batch = 1, seq_q = 64, seq_k = 64, head_dim = 64, query_rows = 64, scale = 1.0, type = bf16>}

// -----

// expected-error @+2 {{an attention bias's type is f32, bf16 or f16, not 'i8'}}
// expected-error @+1 {{failed to parse Kernel_AttentionAttr parameter 'bias'}}
func.func private @k() attributes {strata.attention = #strata.attention<q = <arg = 0, offset = 0, batch_strides = [], row_stride = 64>, k = <arg = 1, offset = 0, batch_strides = [], row_stride = 64>, v = <arg = 2, offset = 0, batch_strides = [], row_stride = 64>, o = <offset = 0, batch_strides = [], row_stride = 64>, batch_dims = [], batch = 1, seq_q = 64, seq_k = 64, head_dim = 64, query_rows = 64, scale = 1.0, type = bf16, bias = <arg = 3, batch_strides = [], row_stride = 0, key_stride = 1, factor = 1.0, type = i8>>}

// -----

// expected-error @+1 {{attribute 'strata.attention' names argument 2; the kernel has 2 arguments}}
func.func private @k(tensor<64x64xbf16>, tensor<64x64xbf16>) attributes {strata.attention = #strata.attention<q = <arg = 0, offset = 0, batch_strides = [], row_stride = 64>, k = <arg = 1, offset = 0, batch_strides = [], row_stride = 64>, v = <arg = 2, offset = 0, batch_strides = [], row_stride = 64>, o = <offset = 0, batch_strides = [], row_stride = 64>, batch_dims = [], batch = 1, seq_q = 64, seq_k = 64, head_dim = 64, query_rows = 64, scale = 1.0, type = bf16>}

// -----

// expected-error @+2 {{expected true or false}}
// expected-error @+1 {{failed to parse Kernel_AttentionAttr parameter 'zero_masked_rows'}}
func.func private @k() attributes {strata.attention = #strata.attention<q = <arg = 0, offset = 0, batch_strides = [], row_stride = 64>, k = <arg = 1, offset = 0, batch_strides = [], row_stride = 64>, v = <arg = 2, offset = 0, batch_strides = [], row_stride = 64>, o = <offset = 0, batch_strides = [], row_stride = 64>, batch_dims = [], batch = 1, seq_q = 64, seq_k = 64, head_dim = 64, query_rows = 64, scale = 1.0, type = bf16, zero_masked_rows = 1>}

// -----

// expected-error @+1 {{attribute 'strata.compile' belongs on the module}}
func.func private @k() attributes {strata.compile = #strata.compile<target = "cuda">}

// -----

// expected-error @+1 {{a compile's shape of input 'x' is an array<i64>, not [3, 8]}}
module attributes {strata.compile = #strata.compile<input_shapes = {x = [3, 8]}>} {}

// -----

// expected-error @+1 {{a compile names its target}}
module attributes {strata.compile = #strata.compile<target = "">} {}
