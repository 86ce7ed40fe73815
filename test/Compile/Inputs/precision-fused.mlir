// A module at the fused stage, written by hand for strata-lower-precision
// (precision.test): generated kernels, cuBLASLt matmuls (which take the low
// type), a oneDNN matmul (which does not), a view between kernels, a kernel
// that stores a value in bf16 itself, a kernel split into row blocks that
// reads a weight whole, and i64 / f64 values.
module {
  func.func private @strata_poi_relu_0(%arg0: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi"} {
    %0 = graph.relu %arg0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = graph.neg %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.func private @strata_lib_matmul_1(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>) -> tensor<4x16xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "cublaslt.matmul", strata.category = "lib"} {
    %0 = graph.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    return %0 : tensor<4x16xf32>
  }
  func.func private @strata_poi_sigmoid_2(%arg0: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi"} {
    %0 = graph.sigmoid %arg0 : (tensor<64xf32>) -> tensor<64xf32>
    %1 = graph.cast %0 : (tensor<64xf32>) -> tensor<64xbf16>
    %2 = graph.cast %1 : (tensor<64xbf16>) -> tensor<64xf32>
    return %0, %2 : tensor<64xf32>, tensor<64xf32>
  }
  func.func private @strata_lib_matmul_3(%arg0: tensor<4x8xf32>, %arg1: tensor<8x4xf32>) -> tensor<4x4xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "dnnl.matmul", strata.category = "lib"} {
    %0 = graph.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
  func.func private @strata_red_reduce_sum_4(%arg0: tensor<64xf32>, %arg1: tensor<4x4xf32>, %arg2: tensor<4xi64>, %arg3: tensor<4xf64>) -> tensor<4x4xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "red"} {
    %0 = graph.reshape %arg0, %arg2 : (tensor<64xf32>, tensor<4xi64>) -> tensor<4x4x2x2xf32>
    %1 = graph.reduce_sum %0 {axes = array<i64: 2, 3>, keepdims = 0 : i64} : (tensor<4x4x2x2xf32>) -> tensor<4x4xf32>
    %2 = graph.add %1, %arg1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    return %2 : tensor<4x4xf32>
  }
  func.func private @strata_lib_matmul_5(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>) -> tensor<4x16xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "cublaslt.matmul", strata.category = "lib"} {
    %0 = graph.matmul %arg0, %arg1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    return %0 : tensor<4x16xf32>
  }
  func.func private @strata_poi_exp_6(%arg0: tensor<4x16xf32>, %arg1: tensor<256x64xf32>) -> (tensor<4x16xf32>, tensor<256x64xf32>) attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi"} {
    %0 = graph.exp %arg0 : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %1 = graph.exp %arg1 : (tensor<256x64xf32>) -> tensor<256x64xf32>
    return %0, %1 : tensor<4x16xf32>, tensor<256x64xf32>
  }
  func.func private @strata_mm_matmul_7(%arg0: tensor<256x64xf32>, %arg1: tensor<64x64xf32>) -> tensor<256x64xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "mm", strata.parallel_block = 64 : i64, strata.parallel_rows = 256 : i64} {
    %0 = graph.matmul %arg0, %arg1 : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
    return %0 : tensor<256x64xf32>
  }
  func.func @main(%arg0: tensor<4x8xf32> {graph.name = "x"}, %arg1: tensor<8x4xf32> {graph.name = "w"}, %arg2: tensor<4xf64> {graph.name = "d"}, %arg3: tensor<256x64xf32> {graph.name = "rows"}) -> (tensor<4x4xf32> {graph.name = "y"}, tensor<64xf32> {graph.name = "z"}, tensor<4x16xf32> {graph.name = "e"}, tensor<256x64xf32> {graph.name = "r"}) {
    %w = graph.constant dense<[[1.0, 1.00390625, 1.001953125, 3.0e+38, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<8x16xf32>
    %w2 = graph.constant dense<2.0> : tensor<8x16xf32>
    %shape = graph.constant dense<[4, 4, 2, 2]> : tensor<4xi64>
    %shape64 = graph.constant dense<64> : tensor<1xi64>
    %rw = graph.constant dense<0.5> : tensor<64x64xf32>
    %0:2 = call @strata_poi_relu_0(%arg0) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
    %1 = call @strata_lib_matmul_1(%0#0, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %2 = graph.reshape %1, %shape64 : (tensor<4x16xf32>, tensor<1xi64>) -> tensor<64xf32>
    %3:2 = call @strata_poi_sigmoid_2(%2) : (tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>)
    %4 = call @strata_lib_matmul_3(%0#1, %arg1) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    %5 = call @strata_red_reduce_sum_4(%3#1, %4, %shape, %arg2) : (tensor<64xf32>, tensor<4x4xf32>, tensor<4xi64>, tensor<4xf64>) -> tensor<4x4xf32>
    %6 = call @strata_lib_matmul_5(%arg0, %w2) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %7:2 = call @strata_poi_exp_6(%6, %arg3) : (tensor<4x16xf32>, tensor<256x64xf32>) -> (tensor<4x16xf32>, tensor<256x64xf32>)
    %8 = call @strata_mm_matmul_7(%7#1, %rw) : (tensor<256x64xf32>, tensor<64x64xf32>) -> tensor<256x64xf32>
    return %5, %3#0, %7#0, %8 : tensor<4x4xf32>, tensor<64xf32>, tensor<4x16xf32>, tensor<256x64xf32>
  }
}
