// RUN: strata-opt %s -split-input-file --strata-channels-last | FileCheck %s
//
// strata-channels-last (Layouts.cpp, fused stage, cpu target): chooses which
// image buffers [N, C, H, W] lie channels-last. A buffer does when its
// producer can write it so (a dnnl.conv, dnnl.pool or dnnl.concat step, or
// an elementwise generated kernel), every reader can read it so (oneDNN's
// conv as X or sum, pool as X, concat; elementwise generated kernels), at
// least one of them is a oneDNN step, and it is not a model result nor
// read through a view. The choice is recorded on the oneDNN steps as
// strata.attrs layouts (dst_layout, src_layout = "channels_last"), on
// generated kernels as strata.channels_last_args/results, and in words in
// strata.layouts. A generated kernel's row split over [N, C] is redone over
// the layout's own rows [N, H] (strata.channels_last_rows), or dropped when
// those make no block. The bodies and the entry function are unchanged.

// conv -> relu -> conv, small: the buffers on both sides of the relu are
// channels-last; the relu's split over [N, C] rows (parallel_dims = 2) is
// not contiguous channels-last and 16 rows of 128 elements make no block
// of 4096, so it runs whole.
// CHECK-LABEL: func.func private @strata_lib_conv_0
// CHECK-SAME: strata.attrs = {dst_layout = "channels_last", pads = array<i64: 1, 1, 1, 1>}
// CHECK-SAME: strata.layouts = "output channels-last: every reader is a oneDNN step or a generated kernel (no conversion)"
// CHECK-LABEL: func.func private @strata_poi_relu_1
// CHECK-SAME: strata.channels_last_args = array<i64: 0>, strata.channels_last_results = array<i64: 0>
// CHECK-NOT: strata.channels_last_rows
// CHECK-SAME: strata.layouts = "reads operand 0 channels-last, as oneDNN writes it; writes result 0 channels-last for the oneDNN steps that read it"
// CHECK-NOT: strata.parallel_
// CHECK-SAME: strata.tile = {source = "no split: its rows over dimensions 0 to 1 are not contiguous in its channels-last buffers, and they do not split over [N, dimension 2]"}
// CHECK-NEXT: graph.relu %arg0 : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// CHECK-LABEL: func.func private @strata_lib_conv_2
// CHECK-SAME: strata.attrs = {pads = array<i64: 1, 1, 1, 1>, src_layout = "channels_last"}
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = call @strata_lib_conv_0(%arg0, %arg1)
// CHECK: %[[B:.*]] = call @strata_poi_relu_1(%[[A]])
// CHECK: %[[C:.*]] = call @strata_lib_conv_2(%[[B]], %arg1)
// CHECK: return %[[C]]
module {
  func.func private @strata_lib_conv_0(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "dnnl.conv", strata.category = "lib", strata.attrs = {pads = array<i64: 1, 1, 1, 1>}} {
    %0 = graph.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
    return %0 : tensor<1x8x16x16xf32>
  }
  func.func private @strata_poi_relu_1(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi", strata.parallel_rows = 8 : i64, strata.parallel_block = 4 : i64, strata.parallel_dims = 2 : i64} {
    %0 = graph.relu %x : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    return %0 : tensor<1x8x16x16xf32>
  }
  func.func private @strata_lib_conv_2(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "dnnl.conv", strata.category = "lib", strata.attrs = {pads = array<i64: 1, 1, 1, 1>}} {
    %0 = graph.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
    return %0 : tensor<1x8x16x16xf32>
  }
  func.func @main(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
    %0 = call @strata_lib_conv_0(%x, %w) : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
    %1 = call @strata_poi_relu_1(%0) : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    %2 = call @strata_lib_conv_2(%1, %w) : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
    return %2 : tensor<1x8x16x16xf32>
  }
}

// -----

// conv -> bias add + relu -> pool, larger: the kernel's split is redone
// over the channels-last rows [N, H] = 64 rows of 32 x 64 = 2048 elements,
// two rows per block (4096 elements); the per-channel bias [32, 1, 1] is
// read whole by every block.
// CHECK-LABEL: func.func private @strata_lib_conv_0
// CHECK-SAME: strata.attrs = {dst_layout = "channels_last"}
// CHECK-LABEL: func.func private @strata_poi_add_relu_1
// CHECK-SAME: strata.channels_last_args = array<i64: 0>, strata.channels_last_results = array<i64: 0>, strata.channels_last_rows
// CHECK-NOT: strata.parallel_dims
// CHECK-SAME: strata.parallel_block = 2 : i64, strata.parallel_rows = 64 : i64, strata.tile = {blocks = 32 : i64, rows = 64 : i64, rows_per_block = 2 : i64, source = "channels-last rows: [N, dimension 2] of its channels-last buffers, the fewest rows per block that hold at least 4096 elements, at 2048 per row"}
// CHECK-LABEL: func.func private @strata_lib_pool_2
// CHECK-SAME: strata.attrs = {src_layout = "channels_last"}
module {
  func.func private @strata_lib_conv_0(%x: tensor<1x32x64x64xf32>, %w: tensor<32x32x1x1xf32>) -> tensor<1x32x64x64xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "dnnl.conv", strata.category = "lib"} {
    %0 = graph.conv %x, %w : (tensor<1x32x64x64xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x64x64xf32>
    return %0 : tensor<1x32x64x64xf32>
  }
  func.func private @strata_poi_add_relu_1(%x: tensor<1x32x64x64xf32>, %b: tensor<32x1x1xf32>) -> tensor<1x32x64x64xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi", strata.parallel_rows = 32 : i64, strata.parallel_block = 4 : i64, strata.parallel_dims = 2 : i64} {
    %0 = graph.add %x, %b : (tensor<1x32x64x64xf32>, tensor<32x1x1xf32>) -> tensor<1x32x64x64xf32>
    %1 = graph.relu %0 : (tensor<1x32x64x64xf32>) -> tensor<1x32x64x64xf32>
    return %1 : tensor<1x32x64x64xf32>
  }
  func.func private @strata_lib_pool_2(%x: tensor<1x32x64x64xf32>) -> tensor<1x32x32x32xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "dnnl.pool", strata.category = "lib"} {
    %0 = graph.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x32x64x64xf32>) -> tensor<1x32x32x32xf32>
    return %0 : tensor<1x32x32x32xf32>
  }
  func.func @main(%x: tensor<1x32x64x64xf32>, %w: tensor<32x32x1x1xf32>, %b: tensor<32x1x1xf32>) -> tensor<1x32x32x32xf32> {
    %0 = call @strata_lib_conv_0(%x, %w) : (tensor<1x32x64x64xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x64x64xf32>
    %1 = call @strata_poi_add_relu_1(%0, %b) : (tensor<1x32x64x64xf32>, tensor<32x1x1xf32>) -> tensor<1x32x64x64xf32>
    %2 = call @strata_lib_pool_2(%1) : (tensor<1x32x64x64xf32>) -> tensor<1x32x32x32xf32>
    return %2 : tensor<1x32x32x32xf32>
  }
}

// -----

// The conv's result is also a result of the model, and the softmax kernel
// is not elementwise: everything stays row-major, no layout recorded.
// CHECK-LABEL: func.func private @strata_lib_conv_0
// CHECK-NOT: channels_last
// CHECK-NOT: strata.layouts
// CHECK-LABEL: func.func @main
module {
  func.func private @strata_lib_conv_0(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x1x1xf32>) -> tensor<1x8x16x16xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "dnnl.conv", strata.category = "lib"} {
    %0 = graph.conv %x, %w : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x16x16xf32>
    return %0 : tensor<1x8x16x16xf32>
  }
  func.func private @strata_poi_relu_1(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi"} {
    %0 = graph.relu %x : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    return %0 : tensor<1x8x16x16xf32>
  }
  func.func private @strata_per_softmax_2(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "per"} {
    %0 = graph.softmax %x : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    return %0 : tensor<1x8x16x16xf32>
  }
  func.func private @strata_lib_conv_3(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x1x1xf32>) -> tensor<1x8x16x16xf32> attributes {strata.kernel, strata.kind = "library", strata.library = "dnnl.conv", strata.category = "lib"} {
    %0 = graph.conv %x, %w : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x16x16xf32>
    return %0 : tensor<1x8x16x16xf32>
  }
  func.func @main(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x1x1xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) {
    %0 = call @strata_lib_conv_0(%x, %w) : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x16x16xf32>
    %1 = call @strata_poi_relu_1(%0) : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    %2 = call @strata_per_softmax_2(%1) : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    %3 = call @strata_lib_conv_3(%2, %w) : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x16x16xf32>
    return %0, %1, %3 : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>
  }
}
