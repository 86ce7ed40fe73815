// RUN: strata-opt %s -split-input-file --canonicalize | FileCheck %s
// reshape(transpose(reshape(x))) is transpose(reshape(x)) when the reshapes
// only regroup the leading dimensions the transpose keeps (the reshape folds
// away when it gives x's own shape); a transpose of unit dimensions alone is
// a reshape.

// torch's dynamo exporter's K^T of attention: [B, H, T, D] -> [B*H, T, D],
// transposed, back to [B, H, D, T].
// CHECK-LABEL: func @batched_transpose
// CHECK-SAME: (%[[K:.*]]: tensor<2x12x16x8xf16>)
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x12x16x8xf16>) -> tensor<2x12x8x16xf16>
// CHECK-NEXT: return %[[T]]
func.func @batched_transpose(%k: tensor<2x12x16x8xf16>) -> tensor<2x12x8x16xf16> {
  %s3 = graph.constant dense<[24, 16, 8]> : tensor<3xi64>
  %s4 = graph.constant dense<[2, 12, 8, 16]> : tensor<4xi64>
  %0 = graph.reshape %k, %s3 : (tensor<2x12x16x8xf16>, tensor<3xi64>) -> tensor<24x16x8xf16>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<24x16x8xf16>) -> tensor<24x8x16xf16>
  %2 = graph.reshape %1, %s4 : (tensor<24x8x16xf16>, tensor<4xi64>) -> tensor<2x12x8x16xf16>
  return %2 : tensor<2x12x8x16xf16>
}

// -----

// The inner reshape splits a leading dimension; the outer merges it back.
// CHECK-LABEL: func @split_leading
// CHECK-NEXT: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1>} : (tensor<6x4x5xf32>) -> tensor<6x5x4xf32>
// CHECK-NEXT: return
func.func @split_leading(%x: tensor<6x4x5xf32>) -> tensor<6x5x4xf32> {
  %s4 = graph.constant dense<[2, 3, 4, 5]> : tensor<4xi64>
  %s3 = graph.constant dense<[6, 5, 4]> : tensor<3xi64>
  %0 = graph.reshape %x, %s4 : (tensor<6x4x5xf32>, tensor<4xi64>) -> tensor<2x3x4x5xf32>
  %1 = graph.transpose %0 {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x3x4x5xf32>) -> tensor<2x3x5x4xf32>
  %2 = graph.reshape %1, %s3 : (tensor<2x3x5x4xf32>, tensor<3xi64>) -> tensor<6x5x4xf32>
  return %2 : tensor<6x5x4xf32>
}

// -----

// Grouped-query attention's K^T: the repeat [1, 4, 8, T, D] merged straight
// into the product's batch [32, T, D]. The merge becomes a reshape to
// [1, 32, T, D] (the form of transformers' repeat_kv), then one transpose.
// CHECK-LABEL: func @grouped_transpose
// CHECK-SAME: (%[[K:.*]]: tensor<1x4x8x16x8xf16>)
// CHECK: %[[S:.*]] = graph.constant dense<[1, 32, 16, 8]> : tensor<4xi64>
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[K]], %[[S]] : (tensor<1x4x8x16x8xf16>, tensor<4xi64>) -> tensor<1x32x16x8xf16>
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[R]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x32x16x8xf16>) -> tensor<1x32x8x16xf16>
// CHECK-NEXT: return %[[T]]
func.func @grouped_transpose(%k: tensor<1x4x8x16x8xf16>) -> tensor<1x32x8x16xf16> {
  %s3 = graph.constant dense<[32, 16, 8]> : tensor<3xi64>
  %s4 = graph.constant dense<[1, 32, 8, 16]> : tensor<4xi64>
  %0 = graph.reshape %k, %s3 : (tensor<1x4x8x16x8xf16>, tensor<3xi64>) -> tensor<32x16x8xf16>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<32x16x8xf16>) -> tensor<32x8x16xf16>
  %2 = graph.reshape %1, %s4 : (tensor<32x8x16xf16>, tensor<4xi64>) -> tensor<1x32x8x16xf16>
  return %2 : tensor<1x32x8x16xf16>
}

// -----

// The outer reshape merges dimensions the transpose moved: kept as it is.
// CHECK-LABEL: func @merges_moved
// CHECK: graph.reshape
// CHECK: graph.transpose
// CHECK: graph.reshape
func.func @merges_moved(%x: tensor<2x3x4x5xf32>) -> tensor<6x20xf32> {
  %s3 = graph.constant dense<[6, 4, 5]> : tensor<3xi64>
  %s2 = graph.constant dense<[6, 20]> : tensor<2xi64>
  %0 = graph.reshape %x, %s3 : (tensor<2x3x4x5xf32>, tensor<3xi64>) -> tensor<6x4x5xf32>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<6x4x5xf32>) -> tensor<6x5x4xf32>
  %2 = graph.reshape %1, %s2 : (tensor<6x5x4xf32>, tensor<2xi64>) -> tensor<6x20xf32>
  return %2 : tensor<6x20xf32>
}

// -----

// The inner reshape regroups the dimensions the transpose moves ([6, 4] is
// not [2, 12]): kept.
// CHECK-LABEL: func @regroups_moved
// CHECK: graph.reshape
// CHECK: graph.transpose
// CHECK: graph.reshape
func.func @regroups_moved(%x: tensor<2x12xf32>) -> tensor<2x12xf32> {
  %s2 = graph.constant dense<[6, 4]> : tensor<2xi64>
  %s3 = graph.constant dense<[2, 12]> : tensor<2xi64>
  %0 = graph.reshape %x, %s2 : (tensor<2x12xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %1 = graph.transpose %0 {perm = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %2 = graph.reshape %1, %s3 : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %2 : tensor<2x12xf32>
}

// -----

// The transpose has another reader: one transpose, not two.
// CHECK-LABEL: func @shared_transpose
// CHECK-COUNT-1: graph.transpose
// CHECK-NOT: graph.transpose
func.func @shared_transpose(%k: tensor<2x3x4x5xf32>) -> (tensor<2x3x5x4xf32>, tensor<6x5x4xf32>) {
  %s3 = graph.constant dense<[6, 4, 5]> : tensor<3xi64>
  %s4 = graph.constant dense<[2, 3, 5, 4]> : tensor<4xi64>
  %0 = graph.reshape %k, %s3 : (tensor<2x3x4x5xf32>, tensor<3xi64>) -> tensor<6x4x5xf32>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<6x4x5xf32>) -> tensor<6x5x4xf32>
  %2 = graph.reshape %1, %s4 : (tensor<6x5x4xf32>, tensor<4xi64>) -> tensor<2x3x5x4xf32>
  return %2, %1 : tensor<2x3x5x4xf32>, tensor<6x5x4xf32>
}

// -----

// A transpose that moves only dimensions of size 1 is a reshape (a view).
// CHECK-LABEL: func @unit_transpose
// CHECK-NOT: graph.transpose
// CHECK: %[[S:.*]] = graph.constant dense<[197, 1, 768]> : tensor<3xi64>
// CHECK: graph.reshape %{{.*}}, %[[S]] : (tensor<1x197x768xf16>, tensor<3xi64>) -> tensor<197x1x768xf16>
// CHECK-NOT: graph.transpose
// CHECK: return
func.func @unit_transpose(%x: tensor<1x197x768xf16>, %y: tensor<1x1x5xf32>) -> (tensor<197x1x768xf16>, tensor<1x1x5xf32>) {
  %0 = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<1x197x768xf16>) -> tensor<197x1x768xf16>
  %1 = graph.transpose %y {perm = array<i64: 1, 0, 2>} : (tensor<1x1x5xf32>) -> tensor<1x1x5xf32>
  return %0, %1 : tensor<197x1x768xf16>, tensor<1x1x5xf32>
}

// -----

// Dimensions larger than 1 change their order: a transpose.
// CHECK-LABEL: func @real_transpose
// CHECK: graph.transpose
func.func @real_transpose(%x: tensor<1x197x12x64xf16>) -> tensor<1x12x197x64xf16> {
  %0 = graph.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x197x12x64xf16>) -> tensor<1x12x197x64xf16>
  return %0 : tensor<1x12x197x64xf16>
}

// -----

// An activation after a reshape moves before it (GPT-2's FC1: addmm on
// [B*S, K], viewed back to [B, S, N], then its GELU), so that the product's
// epilogue sees it.
// CHECK-LABEL: func @activation_before_reshape
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x12xf16>
// CHECK: %[[G:.*]] = graph.gelu %[[X]] {approximate = "tanh"} : (tensor<8x12xf16>) -> tensor<8x12xf16>
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[G]], %{{.*}} : (tensor<8x12xf16>, tensor<3xi64>) -> tensor<2x4x12xf16>
// CHECK-NEXT: return %[[R]]
func.func @activation_before_reshape(%x: tensor<8x12xf16>) -> tensor<2x4x12xf16> {
  %s = graph.constant dense<[2, 4, 12]> : tensor<3xi64>
  %0 = graph.reshape %x, %s : (tensor<8x12xf16>, tensor<3xi64>) -> tensor<2x4x12xf16>
  %1 = graph.gelu %0 {approximate = "tanh"} : (tensor<2x4x12xf16>) -> tensor<2x4x12xf16>
  return %1 : tensor<2x4x12xf16>
}

// -----

// Not when the reshape's input or result has another reader, nor for an op
// that is not an activation.
// CHECK-LABEL: func @activation_stays
// CHECK: graph.reshape
// CHECK-NEXT: graph.relu
// CHECK: graph.reshape
// CHECK-NEXT: graph.relu
// CHECK: graph.reshape
// CHECK-NEXT: graph.exp
func.func @activation_stays(%x: tensor<8x12xf32>, %y: tensor<8x12xf32>, %z: tensor<8x12xf32>) -> (tensor<2x4x12xf32>, tensor<8x12xf32>, tensor<2x4x12xf32>, tensor<2x4x12xf32>, tensor<2x4x12xf32>) {
  %s = graph.constant dense<[2, 4, 12]> : tensor<3xi64>
  %0 = graph.reshape %x, %s : (tensor<8x12xf32>, tensor<3xi64>) -> tensor<2x4x12xf32>
  %1 = graph.relu %0 : (tensor<2x4x12xf32>) -> tensor<2x4x12xf32>
  %2 = graph.reshape %y, %s : (tensor<8x12xf32>, tensor<3xi64>) -> tensor<2x4x12xf32>
  %3 = graph.relu %2 : (tensor<2x4x12xf32>) -> tensor<2x4x12xf32>
  %4 = graph.reshape %z, %s : (tensor<8x12xf32>, tensor<3xi64>) -> tensor<2x4x12xf32>
  %5 = graph.exp %4 : (tensor<2x4x12xf32>) -> tensor<2x4x12xf32>
  return %1, %x, %3, %2, %5 : tensor<2x4x12xf32>, tensor<8x12xf32>, tensor<2x4x12xf32>, tensor<2x4x12xf32>, tensor<2x4x12xf32>
}

// -----

// torch's dynamo export of nn.MultiheadAttention (torchvision's ViT): K^T
// is a transpose of K's [H, T, D] transpose, then viewed as [1, H, D, T].
// The transposes compose, and the view moves before the transpose, so K^T
// is one transpose of K's buffer, as the attention matcher reads it.
// CHECK-LABEL: func @mha_key_transpose
// CHECK-SAME: (%[[K:[^:]*]]: tensor<197x1x768xf16>
// CHECK: %[[V:.*]] = graph.reshape %[[K]], %{{.*}} : (tensor<197x1x768xf16>, tensor<4xi64>) -> tensor<1x197x12x64xf16>
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[V]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x197x12x64xf16>) -> tensor<1x12x64x197xf16>
// CHECK-NEXT: return %[[T]]
func.func @mha_key_transpose(%k: tensor<197x1x768xf16>) -> tensor<1x12x64x197xf16> {
  %s3 = graph.constant dense<[197, 12, 64]> : tensor<3xi64>
  %s4 = graph.constant dense<[1, 12, 64, 197]> : tensor<4xi64>
  %0 = graph.reshape %k, %s3 : (tensor<197x1x768xf16>, tensor<3xi64>) -> tensor<197x12x64xf16>
  %1 = graph.transpose %0 {perm = array<i64: 1, 0, 2>} : (tensor<197x12x64xf16>) -> tensor<12x197x64xf16>
  %2 = graph.transpose %1 {perm = array<i64: 0, 2, 1>} : (tensor<12x197x64xf16>) -> tensor<12x64x197xf16>
  %3 = graph.reshape %2, %s4 : (tensor<12x64x197xf16>, tensor<4xi64>) -> tensor<1x12x64x197xf16>
  return %3 : tensor<1x12x64x197xf16>
}

// -----

// Not when the inner transpose has another reader.
// CHECK-LABEL: func @transposes_stay
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 1, 0, 2>}
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1>}
func.func @transposes_stay(%x: tensor<2x3x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x4x2xf32>) {
  %0 = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  return %0, %1 : tensor<3x2x4xf32>, tensor<3x4x2xf32>
}

// -----

// The same K^T at batch 32: [T, B*H, D] transposed to [B*H, D, T], then
// split into [B, H, D, T]. The split moves before the transpose: one
// transpose of K viewed [T, B, H, D].
// CHECK-LABEL: func @mha_key_transpose_batch
// CHECK-SAME: (%[[K:[^:]*]]: tensor<197x32x768xf16>
// CHECK: %[[V:.*]] = graph.reshape %[[K]], %{{.*}} : (tensor<197x32x768xf16>, tensor<4xi64>) -> tensor<197x32x12x64xf16>
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[V]] {perm = array<i64: 1, 2, 3, 0>} : (tensor<197x32x12x64xf16>) -> tensor<32x12x64x197xf16>
// CHECK-NEXT: return %[[T]]
func.func @mha_key_transpose_batch(%k: tensor<197x32x768xf16>) -> tensor<32x12x64x197xf16> {
  %s3 = graph.constant dense<[197, 384, 64]> : tensor<3xi64>
  %s4 = graph.constant dense<[32, 12, 64, 197]> : tensor<4xi64>
  %0 = graph.reshape %k, %s3 : (tensor<197x32x768xf16>, tensor<3xi64>) -> tensor<197x384x64xf16>
  %1 = graph.transpose %0 {perm = array<i64: 1, 0, 2>} : (tensor<197x384x64xf16>) -> tensor<384x197x64xf16>
  %2 = graph.transpose %1 {perm = array<i64: 0, 2, 1>} : (tensor<384x197x64xf16>) -> tensor<384x64x197xf16>
  %3 = graph.reshape %2, %s4 : (tensor<384x64x197xf16>, tensor<4xi64>) -> tensor<32x12x64x197xf16>
  return %3 : tensor<32x12x64x197xf16>
}

// -----

// A split in the middle: [6, 20] transposed to [20, 6], then [4, 5, 6].
// CHECK-LABEL: func @split_after_transpose
// CHECK: graph.reshape %{{.*}} : (tensor<6x20xf32>, tensor<3xi64>) -> tensor<6x4x5xf32>
// CHECK-NEXT: graph.transpose %{{.*}} {perm = array<i64: 1, 2, 0>} : (tensor<6x4x5xf32>) -> tensor<4x5x6xf32>
func.func @split_after_transpose(%x: tensor<6x20xf32>) -> tensor<4x5x6xf32> {
  %s = graph.constant dense<[4, 5, 6]> : tensor<3xi64>
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<6x20xf32>) -> tensor<20x6xf32>
  %1 = graph.reshape %0, %s : (tensor<20x6xf32>, tensor<3xi64>) -> tensor<4x5x6xf32>
  return %1 : tensor<4x5x6xf32>
}

// -----

// Not a split of the transpose's dimensions: [6, 20] -> [20, 6] -> [8, 15]
// regroups across them.
// CHECK-LABEL: func @regroup_stays
// CHECK: graph.transpose
// CHECK-NEXT: graph.reshape
func.func @regroup_stays(%x: tensor<6x20xf32>) -> tensor<8x15xf32> {
  %s = graph.constant dense<[8, 15]> : tensor<2xi64>
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<6x20xf32>) -> tensor<20x6xf32>
  %1 = graph.reshape %0, %s : (tensor<20x6xf32>, tensor<2xi64>) -> tensor<8x15xf32>
  return %1 : tensor<8x15xf32>
}
