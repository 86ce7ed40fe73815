// RUN: strata-opt --strata-collapse-dims --canonicalize %s | FileCheck %s
//
// CPU kernels merge the loops every operand reads contiguously, so that the
// innermost loop is long enough for LLVM's vectorizer.

// An elementwise op on [1, 21, 14, 14] is one loop of 4116.
// CHECK-LABEL: func.func @elementwise(
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0, 1, 2, 3]] : tensor<1x21x14x14xf32> into tensor<4116xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK: tensor.expand_shape
func.func @elementwise(%x: tensor<1x21x14x14xf32>) -> tensor<1x21x14x14xf32> {
  %init = tensor.empty() : tensor<1x21x14x14xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x21x14x14xf32>) outs(%init : tensor<1x21x14x14xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = math.exp %in : f32
    linalg.yield %1 : f32
  } -> tensor<1x21x14x14xf32>
  return %0 : tensor<1x21x14x14xf32>
}

// A global average pool's sum: the images and channels merge, and so do
// the positions it sums over; the two groups stay apart.
// CHECK-LABEL: func.func @pool(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}ins(%{{.+}} : tensor<1344x196xf32>)
func.func @pool(%x: tensor<2x672x14x14xf32>) -> tensor<2x672xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2x672xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<2x672xf32>) -> tensor<2x672xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<2x672x14x14xf32>) outs(%fill : tensor<2x672xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %1 = arith.addf %in, %acc : f32
    linalg.yield %1 : f32
  } -> tensor<2x672xf32>
  return %0 : tensor<2x672xf32>
}

// A broadcast operand ([C, 1, 1] against [C, H, W]) keeps H and W apart
// from C: only the dimensions every operand reads contiguously merge.
// CHECK-LABEL: func.func @broadcast(
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<8x36xf32>, tensor<8xf32>)
func.func @broadcast(%x: tensor<8x6x6xf32>, %s: tensor<8xf32>) -> tensor<8x6x6xf32> {
  %init = tensor.empty() : tensor<8x6x6xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : tensor<8x6x6xf32>, tensor<8xf32>) outs(%init : tensor<8x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %1 = arith.mulf %a, %b : f32
    linalg.yield %1 : f32
  } -> tensor<8x6x6xf32>
  return %0 : tensor<8x6x6xf32>
}

// A transpose's read does not merge the dimensions it swaps.
// CHECK-LABEL: func.func @transpose(
// CHECK: iterator_types = ["parallel", "parallel", "parallel"]
func.func @transpose(%x: tensor<4x5x6xf32>) -> tensor<5x4x6xf32> {
  %init = tensor.empty() : tensor<5x4x6xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x5x6xf32>) outs(%init : tensor<5x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<5x4x6xf32>
  return %0 : tensor<5x4x6xf32>
}
