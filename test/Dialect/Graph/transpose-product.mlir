// RUN: strata-opt %s -split-input-file --canonicalize | FileCheck %s

// nn.MultiheadAttention with batch_first as torch's dynamo exporter writes
// its in-projection: x [B, T, E] switched to [T, B, E], projected with the
// bias added, Q and K picked from [T, B, 3, E] and their heads split out
// with a transpose each. The switch moves past the product and composes
// with the heads' transposes: the product reads x, and each pick is one
// transpose of the projection's [B, T, H, D] view.
// CHECK-LABEL: func @batch_first_in_projection
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>, %[[W:.*]]: tensor<8x24xf32>, %[[B:.*]]: tensor<24xf32>)
// CHECK-NOT: graph.transpose
// CHECK: %[[M:.*]] = graph.matmul %[[X]], %[[W]] : (tensor<2x5x8xf32>, tensor<8x24xf32>) -> tensor<2x5x24xf32>
// CHECK: graph.add %[[M]], %[[B]] : (tensor<2x5x24xf32>, tensor<24xf32>) -> tensor<2x5x24xf32>
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x5x2x4xf32>) -> tensor<2x2x5x4xf32>
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x5x2x4xf32>) -> tensor<2x2x4x5xf32>
// CHECK-NOT: graph.transpose
func.func @batch_first_in_projection(%x: tensor<2x5x8xf32>, %w: tensor<8x24xf32>, %b: tensor<24xf32>) -> (tensor<2x2x5x4xf32>, tensor<2x2x4x5xf32>) {
  %s4 = graph.constant dense<[5, 2, 3, 8]> : tensor<4xi64>
  %h4 = graph.constant dense<[5, 2, 2, 4]> : tensor<4xi64>
  %i0 = graph.constant dense<0> : tensor<i64>
  %i1 = graph.constant dense<1> : tensor<i64>
  %t = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x5x8xf32>) -> tensor<5x2x8xf32>
  %m = graph.matmul %t, %w : (tensor<5x2x8xf32>, tensor<8x24xf32>) -> tensor<5x2x24xf32>
  %a = graph.add %m, %b : (tensor<5x2x24xf32>, tensor<24xf32>) -> tensor<5x2x24xf32>
  %r = graph.reshape %a, %s4 : (tensor<5x2x24xf32>, tensor<4xi64>) -> tensor<5x2x3x8xf32>
  %q = graph.gather %r, %i0 {axis = 2 : i64} : (tensor<5x2x3x8xf32>, tensor<i64>) -> tensor<5x2x8xf32>
  %k = graph.gather %r, %i1 {axis = 2 : i64} : (tensor<5x2x3x8xf32>, tensor<i64>) -> tensor<5x2x8xf32>
  %qh = graph.reshape %q, %h4 : (tensor<5x2x8xf32>, tensor<4xi64>) -> tensor<5x2x2x4xf32>
  %qt = graph.transpose %qh {perm = array<i64: 1, 2, 0, 3>} : (tensor<5x2x2x4xf32>) -> tensor<2x2x5x4xf32>
  %kh = graph.reshape %k, %h4 : (tensor<5x2x8xf32>, tensor<4xi64>) -> tensor<5x2x2x4xf32>
  %kt = graph.transpose %kh {perm = array<i64: 1, 2, 3, 0>} : (tensor<5x2x2x4xf32>) -> tensor<2x2x4x5xf32>
  return %qt, %kt : tensor<2x2x5x4xf32>, tensor<2x2x4x5xf32>
}

// -----

// The product is read by something other than a view that ends in a
// transpose: moved, the transpose would be a kernel on the wider product.
// CHECK-LABEL: func @read_whole
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 1, 0, 2>} : (tensor<2x5x8xf32>) -> tensor<5x2x8xf32>
// CHECK-NEXT: graph.matmul
// CHECK-NEXT: graph.relu
func.func @read_whole(%x: tensor<2x5x8xf32>, %w: tensor<8x24xf32>) -> tensor<5x2x24xf32> {
  %t = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x5x8xf32>) -> tensor<5x2x8xf32>
  %m = graph.matmul %t, %w : (tensor<5x2x8xf32>, tensor<8x24xf32>) -> tensor<5x2x24xf32>
  %r = graph.relu %m : (tensor<5x2x24xf32>) -> tensor<5x2x24xf32>
  return %r : tensor<5x2x24xf32>
}

// -----

// A transpose that moves the last dimension permutes the product's
// columns: kept.
// CHECK-LABEL: func @moves_columns
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1>} : (tensor<2x8x5xf32>) -> tensor<2x5x8xf32>
// CHECK-NEXT: graph.matmul
func.func @moves_columns(%x: tensor<2x8x5xf32>, %w: tensor<8x24xf32>) -> tensor<2x2x5x12xf32> {
  %s = graph.constant dense<[2, 5, 2, 12]> : tensor<4xi64>
  %t = graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x8x5xf32>) -> tensor<2x5x8xf32>
  %m = graph.matmul %t, %w : (tensor<2x5x8xf32>, tensor<8x24xf32>) -> tensor<2x5x24xf32>
  %r = graph.reshape %m, %s : (tensor<2x5x24xf32>, tensor<4xi64>) -> tensor<2x5x2x12xf32>
  %u = graph.transpose %r {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x5x2x12xf32>) -> tensor<2x2x5x12xf32>
  return %u : tensor<2x2x5x12xf32>
}

// -----

// The out-projection as the dynamo exporter writes it: the heads' output
// [B, H, T, D] transposed to [T, B, H, D], viewed [T*B, E], projected, and
// switched back to [B, T, E] before the residual add. The switch moves to
// the product's rows and composes with the heads' transpose: one head
// merge, the product, and the add reading the product's view.
// CHECK-LABEL: func @batch_first_out_projection
// CHECK-SAME: (%[[O:.*]]: tensor<2x2x5x4xf32>
// CHECK: %[[T:.*]] = graph.transpose %[[O]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x5x4xf32>) -> tensor<2x5x2x4xf32>
// CHECK: %[[A:.*]] = graph.reshape %[[T]], %{{.*}} : (tensor<2x5x2x4xf32>, tensor<2xi64>) -> tensor<10x8xf32>
// CHECK: %[[G:.*]] = graph.gemm %[[A]], %{{.*}} bias %{{.*}} {transB = 1 : i64}
// CHECK: %[[V:.*]] = graph.reshape %[[G]], %{{.*}} : (tensor<10x8xf32>, tensor<3xi64>) -> tensor<2x5x8xf32>
// CHECK-NOT: graph.transpose
// CHECK: graph.add %[[V]]
func.func @batch_first_out_projection(%o: tensor<2x2x5x4xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %res: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %s2 = graph.constant dense<[10, 8]> : tensor<2xi64>
  %s3 = graph.constant dense<[5, 2, 8]> : tensor<3xi64>
  %t = graph.transpose %o {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x2x5x4xf32>) -> tensor<5x2x2x4xf32>
  %r = graph.reshape %t, %s2 : (tensor<5x2x2x4xf32>, tensor<2xi64>) -> tensor<10x8xf32>
  %g = graph.gemm %r, %w bias %b {transB = 1 : i64} : (tensor<10x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<10x8xf32>
  %v = graph.reshape %g, %s3 : (tensor<10x8xf32>, tensor<3xi64>) -> tensor<5x2x8xf32>
  %u = graph.transpose %v {perm = array<i64: 1, 0, 2>} : (tensor<5x2x8xf32>) -> tensor<2x5x8xf32>
  %y = graph.add %u, %res : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  return %y : tensor<2x5x8xf32>
}

// -----

// A transposed A (transA), or an A that is not a view of a transpose: the
// switch stays after the product.
// CHECK-LABEL: func @out_projection_kept
// CHECK: graph.gemm
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 1, 0, 2>} : (tensor<5x2x8xf32>) -> tensor<2x5x8xf32>
// CHECK: graph.gemm
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 1, 0, 2>} : (tensor<5x2x8xf32>) -> tensor<2x5x8xf32>
func.func @out_projection_kept(%o: tensor<2x2x5x4xf32>, %a: tensor<10x8xf32>, %w: tensor<8x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>) {
  %s2 = graph.constant dense<[8, 10]> : tensor<2xi64>
  %s3 = graph.constant dense<[5, 2, 8]> : tensor<3xi64>
  %t = graph.transpose %o {perm = array<i64: 3, 1, 0, 2>} : (tensor<2x2x5x4xf32>) -> tensor<4x2x2x5xf32>
  %r = graph.reshape %t, %s2 : (tensor<4x2x2x5xf32>, tensor<2xi64>) -> tensor<8x10xf32>
  %g = graph.gemm %r, %w {transA = 1 : i64} : (tensor<8x10xf32>, tensor<8x8xf32>) -> tensor<10x8xf32>
  %v = graph.reshape %g, %s3 : (tensor<10x8xf32>, tensor<3xi64>) -> tensor<5x2x8xf32>
  %u = graph.transpose %v {perm = array<i64: 1, 0, 2>} : (tensor<5x2x8xf32>) -> tensor<2x5x8xf32>
  %h = graph.gemm %a, %w : (tensor<10x8xf32>, tensor<8x8xf32>) -> tensor<10x8xf32>
  %hv = graph.reshape %h, %s3 : (tensor<10x8xf32>, tensor<3xi64>) -> tensor<5x2x8xf32>
  %hu = graph.transpose %hv {perm = array<i64: 1, 0, 2>} : (tensor<5x2x8xf32>) -> tensor<2x5x8xf32>
  return %u, %hu : tensor<2x5x8xf32>, tensor<2x5x8xf32>
}

// -----

// A transpose of a merge of a transpose: the merge's groups move whole, so
// the two transposes compose and the merge comes last.
// CHECK-LABEL: func @across_merge
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5x4xf32>)
// CHECK: %[[T:.*]] = graph.transpose %[[X]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK: graph.reshape %[[T]], %{{.*}} : (tensor<2x5x3x4xf32>, tensor<3xi64>) -> tensor<2x5x12xf32>
// CHECK-NOT: graph.transpose
func.func @across_merge(%x: tensor<2x3x5x4xf32>) -> tensor<2x5x12xf32> {
  %s = graph.constant dense<[5, 2, 12]> : tensor<3xi64>
  %t = graph.transpose %x {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<5x2x3x4xf32>
  %r = graph.reshape %t, %s : (tensor<5x2x3x4xf32>, tensor<3xi64>) -> tensor<5x2x12xf32>
  %u = graph.transpose %r {perm = array<i64: 1, 0, 2>} : (tensor<5x2x12xf32>) -> tensor<2x5x12xf32>
  return %u : tensor<2x5x12xf32>
}

// -----

// nn.MultiheadAttention's head merge as torch's TorchScript exporter writes
// it, batch first: [B*H, T, D] -> [T, B*H, D], viewed [T, B, E], switched
// to [B, T, E]. The reshape splits B*H and merges H*D (the shapes refine
// to [T, B, H, D]), so the two transposes are one of x viewed [B, H, T, D].
// CHECK-LABEL: func @across_split_and_merge
// CHECK-SAME: (%[[X:.*]]: tensor<8x10x12xf32>)
// CHECK: %[[V:.*]] = graph.reshape %[[X]], %{{.*}} : (tensor<8x10x12xf32>, tensor<4xi64>) -> tensor<2x4x10x12xf32>
// CHECK: %[[T:.*]] = graph.transpose %[[V]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x10x12xf32>) -> tensor<2x10x4x12xf32>
// CHECK: graph.reshape %[[T]], %{{.*}} : (tensor<2x10x4x12xf32>, tensor<3xi64>) -> tensor<2x10x48xf32>
// CHECK-NOT: graph.transpose
func.func @across_split_and_merge(%x: tensor<8x10x12xf32>) -> tensor<2x10x48xf32> {
  %s = graph.constant dense<[10, 2, 48]> : tensor<3xi64>
  %t = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<8x10x12xf32>) -> tensor<10x8x12xf32>
  %r = graph.reshape %t, %s : (tensor<10x8x12xf32>, tensor<3xi64>) -> tensor<10x2x48xf32>
  %u = graph.transpose %r {perm = array<i64: 1, 0, 2>} : (tensor<10x2x48xf32>) -> tensor<2x10x48xf32>
  return %u : tensor<2x10x48xf32>
}

// -----

// A reshape whose dimensions straddle the other's ([6, 4] to [4, 6]): the
// shapes have no common refinement, and both transposes stay.
// CHECK-LABEL: func @straddling_reshape
// CHECK: graph.transpose
// CHECK: graph.reshape
// CHECK: graph.transpose
func.func @straddling_reshape(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %s = graph.constant dense<[4, 6]> : tensor<2xi64>
  %t = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %r = graph.reshape %t, %s : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %u = graph.transpose %r {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  return %u : tensor<6x4xf32>
}

// -----

// A scalar added after the product varies along no dimension: it moves
// with the product like a bias.
// CHECK-LABEL: func @scalar_bias
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>
// CHECK: %[[M:.*]] = graph.matmul %[[X]], %{{.*}} : (tensor<2x5x8xf32>, tensor<8x24xf32>) -> tensor<2x5x24xf32>
// CHECK: graph.add %[[M]], %{{.*}} : (tensor<2x5x24xf32>, tensor<f32>) -> tensor<2x5x24xf32>
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x5x2x12xf32>) -> tensor<2x2x5x12xf32>
// CHECK-NOT: graph.transpose
func.func @scalar_bias(%x: tensor<2x5x8xf32>, %w: tensor<8x24xf32>, %s: tensor<f32>) -> tensor<2x2x5x12xf32> {
  %h = graph.constant dense<[5, 2, 2, 12]> : tensor<4xi64>
  %t = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x5x8xf32>) -> tensor<5x2x8xf32>
  %m = graph.matmul %t, %w : (tensor<5x2x8xf32>, tensor<8x24xf32>) -> tensor<5x2x24xf32>
  %a = graph.add %m, %s : (tensor<5x2x24xf32>, tensor<f32>) -> tensor<5x2x24xf32>
  %r = graph.reshape %a, %h : (tensor<5x2x24xf32>, tensor<4xi64>) -> tensor<5x2x2x12xf32>
  %u = graph.transpose %r {perm = array<i64: 1, 2, 0, 3>} : (tensor<5x2x2x12xf32>) -> tensor<2x2x5x12xf32>
  return %u : tensor<2x2x5x12xf32>
}
