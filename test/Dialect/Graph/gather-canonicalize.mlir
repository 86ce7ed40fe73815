// RUN: strata-opt %s -split-input-file --canonicalize | FileCheck %s

// nn.MultiheadAttention's packed in-projection as torch's dynamo exporter
// writes it: the [T, B, 3, E] projection unsqueezed, transposed to
// [3, T, B, 1, E] and squeezed (`proj.unflatten(-1, (3, E)).unsqueeze(0)
// .transpose(0, -2).squeeze(-2)`), then Q, K and V picked by index. The
// unit dimensions cancel before the transpose, and each pick reads the
// projection itself: no transpose is left.
// CHECK-LABEL: func @packed_in_projection
// CHECK-SAME: (%[[P:.*]]: tensor<5x2x3x8xf16>
// CHECK-NOT: graph.transpose
// CHECK-NOT: squeeze
// CHECK: %[[Q:.*]] = graph.gather %[[P]], %{{.*}} {axis = 2 : i64} : (tensor<5x2x3x8xf16>, tensor<i64>) -> tensor<5x2x8xf16>
// CHECK: %[[K:.*]] = graph.gather %[[P]], %{{.*}} {axis = 2 : i64} : (tensor<5x2x3x8xf16>, tensor<i64>) -> tensor<5x2x8xf16>
// CHECK: %[[V:.*]] = graph.gather %[[P]], %{{.*}} {axis = 2 : i64} : (tensor<5x2x3x8xf16>, tensor<i64>) -> tensor<5x2x8xf16>
// CHECK-NOT: graph.transpose
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @packed_in_projection(%p: tensor<5x2x3x8xf16>) -> (tensor<5x2x8xf16>, tensor<5x2x8xf16>, tensor<5x2x8xf16>) {
  %i0 = graph.constant dense<0> : tensor<i64>
  %i1 = graph.constant dense<1> : tensor<i64>
  %i2 = graph.constant dense<2> : tensor<i64>
  %u = graph.unsqueeze %p {axes = array<i64: 0>} : (tensor<5x2x3x8xf16>) -> tensor<1x5x2x3x8xf16>
  %t = graph.transpose %u {perm = array<i64: 3, 1, 2, 0, 4>} : (tensor<1x5x2x3x8xf16>) -> tensor<3x5x2x1x8xf16>
  %s = graph.squeeze %t {axes = array<i64: -2>} : (tensor<3x5x2x1x8xf16>) -> tensor<3x5x2x8xf16>
  %q = graph.gather %s, %i0 : (tensor<3x5x2x8xf16>, tensor<i64>) -> tensor<5x2x8xf16>
  %k = graph.gather %s, %i1 : (tensor<3x5x2x8xf16>, tensor<i64>) -> tensor<5x2x8xf16>
  %v = graph.gather %s, %i2 : (tensor<3x5x2x8xf16>, tensor<i64>) -> tensor<5x2x8xf16>
  return %q, %k, %v : tensor<5x2x8xf16>, tensor<5x2x8xf16>, tensor<5x2x8xf16>
}

// -----

// A squeeze of a transpose alone: the unit dimension goes first.
// CHECK-LABEL: func @squeeze_first
// CHECK: %[[S:.*]] = graph.squeeze %{{.*}} {axes = array<i64: 1>} : (tensor<4x1x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: graph.transpose %[[S]] {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
func.func @squeeze_first(%x: tensor<4x1x6xf32>) -> tensor<6x4xf32> {
  %t = graph.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<4x1x6xf32>) -> tensor<6x1x4xf32>
  %s = graph.squeeze %t {axes = array<i64: 1>} : (tensor<6x1x4xf32>) -> tensor<6x4xf32>
  return %s : tensor<6x4xf32>
}

// -----

// timm's and Swin's form: qkv [B, N, 3, H, D] permuted to [3, B, H, N, D],
// then qkv[i]: the pick is of the projection, and a transpose of its own
// [B, N, H, D] to [B, H, N, D] is left for the reader.
// CHECK-LABEL: func @permuted_qkv
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x3x4x8xf16>
// CHECK: %[[G:.*]] = graph.gather %[[X]], %{{.*}} {axis = 2 : i64} : (tensor<2x5x3x4x8xf16>, tensor<i64>) -> tensor<2x5x4x8xf16>
// CHECK-NEXT: %[[T:.*]] = graph.transpose %[[G]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x5x4x8xf16>) -> tensor<2x4x5x8xf16>
// CHECK-NEXT: return %[[T]]
func.func @permuted_qkv(%x: tensor<2x5x3x4x8xf16>) -> tensor<2x4x5x8xf16> {
  %i = graph.constant dense<1> : tensor<i64>
  %t = graph.transpose %x {perm = array<i64: 2, 0, 3, 1, 4>} : (tensor<2x5x3x4x8xf16>) -> tensor<3x2x4x5x8xf16>
  %k = graph.gather %t, %i : (tensor<3x2x4x5x8xf16>, tensor<i64>) -> tensor<2x4x5x8xf16>
  return %k : tensor<2x4x5x8xf16>
}

// -----

// A pick along a later axis: gather(transpose(x, [1, 0, 2]), i, axis 2)
// picks from x's axis 2 too, and the transpose stays on the rest.
// CHECK-LABEL: func @inner_axis
// CHECK: %[[G:.*]] = graph.gather %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<3x4x5xf32>, tensor<i64>) -> tensor<3x4xf32>
// CHECK-NEXT: graph.transpose %[[G]] {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
func.func @inner_axis(%x: tensor<3x4x5xf32>) -> tensor<4x3xf32> {
  %i = graph.constant dense<4> : tensor<i64>
  %t = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<3x4x5xf32>) -> tensor<4x3x5xf32>
  %g = graph.gather %t, %i {axis = 2 : i64} : (tensor<4x3x5xf32>, tensor<i64>) -> tensor<4x3xf32>
  return %g : tensor<4x3xf32>
}

// -----

// The transpose has another reader, or the index is not a scalar: kept.
// CHECK-LABEL: func @kept
// CHECK: graph.transpose
// CHECK: graph.gather
// CHECK: graph.gather
func.func @kept(%x: tensor<3x4x5xf32>, %i: tensor<2xi64>) -> (tensor<4x3x5xf32>, tensor<5x3xf32>, tensor<2x3x5xf32>) {
  %i0 = graph.constant dense<0> : tensor<i64>
  %t = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<3x4x5xf32>) -> tensor<4x3x5xf32>
  %g = graph.gather %t, %i0 : (tensor<4x3x5xf32>, tensor<i64>) -> tensor<3x5xf32>
  %h = graph.transpose %g {perm = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %u = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<3x4x5xf32>) -> tensor<4x3x5xf32>
  %v = graph.gather %u, %i : (tensor<4x3x5xf32>, tensor<2xi64>) -> tensor<2x3x5xf32>
  return %t, %h, %v : tensor<4x3x5xf32>, tensor<5x3xf32>, tensor<2x3x5xf32>
}
