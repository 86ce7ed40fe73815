// strata-pad-attention (AttentionPadding.cpp): attention blocks the flash
// kernel takes only once padded to its shapes. The rewrite's values are
// checked on the CPU in attention.test; here, its IR.
// RUN: strata-opt %s --strata-pad-attention | FileCheck %s

// ViT's 197 tokens: Q, K (before its transpose) and V padded with zeros
// to 256 rows, the keys past 197 masked by a [256] bias of 0 and -inf added
// after the first product, the result sliced back to 197 rows.
// CHECK-LABEL: func.func @tokens197
// CHECK-DAG: graph.constant dense<[0, 0, 0, 0, 0, 0, 59, 0]> : tensor<8xi64>
// CHECK-DAG: %[[V:.*]] = graph.pad %arg2, {{.*}} -> tensor<1x2x256x64xbf16>
// CHECK-DAG: %[[K:.*]] = graph.pad %arg1, {{.*}} -> tensor<1x2x256x64xbf16>
// CHECK-DAG: %[[Q:.*]] = graph.pad %arg0, {{.*}} -> tensor<1x2x256x64xbf16>
// CHECK: %[[KT:.*]] = graph.transpose %[[K]] {{.*}} -> tensor<1x2x64x256xbf16>
// CHECK: %[[S:.*]] = graph.matmul %[[Q]], %[[KT]] {strata.attention_padding = "padded from 197 x 197, head dim 64 to 256 x 256, head dim 64"} {{.*}} -> tensor<1x2x256x256xbf16>
// CHECK: %[[MASK:.*]] = graph.constant dense<"0x{{(0000){197}(80FF){59}["]}}> : tensor<256xbf16>
// CHECK: %[[MASKED:.*]] = graph.add %[[S]], %[[MASK]] {{.*}} -> tensor<1x2x256x256xbf16>
// CHECK: graph.cast %[[MASKED]] {{.*}} -> tensor<1x2x256x256xf32>
// CHECK: graph.softmax {{.*}} -> tensor<1x2x256x256xf32>
// CHECK: %[[O:.*]] = graph.matmul {{.*}}, %[[V]] {{.*}} -> tensor<1x2x256x64xbf16>
// CHECK: %[[OUT:.*]] = graph.slice %[[O]], {{.*}} -> tensor<1x2x197x64xbf16>
// CHECK: return %[[OUT]]
func.func @tokens197(%q: tensor<1x2x197x64xbf16>, %k: tensor<1x2x197x64xbf16>, %v: tensor<1x2x197x64xbf16>) -> tensor<1x2x197x64xbf16> {
  %c = graph.constant dense<1.250000e-01> : tensor<f32>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x197x64xbf16>) -> tensor<1x2x64x197xbf16>
  %s = graph.matmul %q, %kt : (tensor<1x2x197x64xbf16>, tensor<1x2x64x197xbf16>) -> tensor<1x2x197x197xbf16>
  %sf = graph.cast %s : (tensor<1x2x197x197xbf16>) -> tensor<1x2x197x197xf32>
  %ss = graph.mul %sf, %c : (tensor<1x2x197x197xf32>, tensor<f32>) -> tensor<1x2x197x197xf32>
  %p = graph.softmax %ss : (tensor<1x2x197x197xf32>) -> tensor<1x2x197x197xf32>
  %pb = graph.cast %p : (tensor<1x2x197x197xf32>) -> tensor<1x2x197x197xbf16>
  %o = graph.matmul %pb, %v : (tensor<1x2x197x197xbf16>, tensor<1x2x197x64xbf16>) -> tensor<1x2x197x64xbf16>
  return %o : tensor<1x2x197x64xbf16>
}

// Head dimension 32 padded to 64 with whole 64-row sequences: no mask, the
// result's columns sliced back.
// CHECK-LABEL: func.func @dim32
// CHECK-NOT: graph.add
// CHECK: graph.matmul {{.*}} -> tensor<4x64x64xf16>
// CHECK: graph.matmul {{.*}} -> tensor<4x64x64xf16>
// CHECK: graph.slice {{.*}} -> tensor<4x64x32xf16>
func.func @dim32(%q: tensor<4x64x32xf16>, %k: tensor<4x64x32xf16>, %v: tensor<4x64x32xf16>) -> tensor<4x64x32xf16> {
  %kt = graph.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<4x64x32xf16>) -> tensor<4x32x64xf16>
  %s = graph.matmul %q, %kt : (tensor<4x64x32xf16>, tensor<4x32x64xf16>) -> tensor<4x64x64xf16>
  %p = graph.softmax %s : (tensor<4x64x64xf16>) -> tensor<4x64x64xf16>
  %o = graph.matmul %p, %v : (tensor<4x64x64xf16>, tensor<4x64x32xf16>) -> tensor<4x64x32xf16>
  return %o : tensor<4x64x32xf16>
}

// A padding mask [B, 1, 1, T] as the model's bias: padded with -inf along
// its keys; no second mask.
// CHECK-LABEL: func.func @keymask
// CHECK-DAG: %[[NEGINF:.*]] = graph.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[BIAS:.*]] = graph.pad %arg3, {{.*}} value %[[NEGINF]] {{.*}} -> tensor<2x1x1x128xf32>
// CHECK: graph.add {{.*}}, %[[BIAS]] {{.*}} -> tensor<2x2x128x128xf32>
// CHECK-NOT: graph.add
// CHECK: graph.slice {{.*}} -> tensor<2x2x100x64xbf16>
func.func @keymask(%q: tensor<2x2x100x64xbf16>, %k: tensor<2x2x100x64xbf16>, %v: tensor<2x2x100x64xbf16>, %m: tensor<2x1x1x100xf32>) -> tensor<2x2x100x64xbf16> {
  %c = graph.constant dense<1.250000e-01> : tensor<f32>
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x100x64xbf16>) -> tensor<2x2x64x100xbf16>
  %s = graph.matmul %q, %kt : (tensor<2x2x100x64xbf16>, tensor<2x2x64x100xbf16>) -> tensor<2x2x100x100xbf16>
  %sf = graph.cast %s : (tensor<2x2x100x100xbf16>) -> tensor<2x2x100x100xf32>
  %ss = graph.mul %sf, %c : (tensor<2x2x100x100xf32>, tensor<f32>) -> tensor<2x2x100x100xf32>
  %sb = graph.add %ss, %m : (tensor<2x2x100x100xf32>, tensor<2x1x1x100xf32>) -> tensor<2x2x100x100xf32>
  %p = graph.softmax %sb : (tensor<2x2x100x100xf32>) -> tensor<2x2x100x100xf32>
  %pb = graph.cast %p : (tensor<2x2x100x100xf32>) -> tensor<2x2x100x100xbf16>
  %o = graph.matmul %pb, %v : (tensor<2x2x100x100xbf16>, tensor<2x2x100x64xbf16>) -> tensor<2x2x100x64xbf16>
  return %o : tensor<2x2x100x64xbf16>
}

// One query row against 256 keys (a decode step) would be 64 times the
// work: left as it is, with the reason on the first product.
// CHECK-LABEL: func.func @decode
// CHECK-NOT: graph.pad
// CHECK: graph.matmul {{.*}} {strata.attention_padding = "not padded: 1 x 256, head dim 64 to 64 x 256, head dim 64 would multiply the work by 64 (at most 4)"}
func.func @decode(%q: tensor<8x1x64xbf16>, %k: tensor<8x256x64xbf16>, %v: tensor<8x256x64xbf16>) -> tensor<8x1x64xbf16> {
  %kt = graph.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<8x256x64xbf16>) -> tensor<8x64x256xbf16>
  %s = graph.matmul %q, %kt : (tensor<8x1x64xbf16>, tensor<8x64x256xbf16>) -> tensor<8x1x256xbf16>
  %p = graph.softmax %s : (tensor<8x1x256xbf16>) -> tensor<8x1x256xbf16>
  %o = graph.matmul %p, %v : (tensor<8x1x256xbf16>, tensor<8x256x64xbf16>) -> tensor<8x1x64xbf16>
  return %o : tensor<8x1x64xbf16>
}
