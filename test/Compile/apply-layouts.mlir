// RUN: strata-opt --strata-apply-layouts %s | FileCheck %s
//
// strata-apply-layouts makes a generated kernel read and write the buffers
// the fused stage chose channels-last (strata.channels_last_args/results on
// its declaration). The signature stays logical ([N, C, H, W]); the body
// views the bytes as [N, H, W, C].
// CHECK-DAG: #[[ID:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[PERM:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>

module {
  func.func private @bn_relu(tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi", strata.channels_last_args = array<i64: 0>, strata.channels_last_results = array<i64: 0>}
  func.func private @mixed(tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x4x3x2xf32>) attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi", strata.channels_last_args = array<i64: 1>}
  func.func private @untouched(tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi"}
  module @kernels {
    // A per-channel scale and a ReLU: the generic reads and writes the
    // channels-last views, its loops in that order, the channel innermost;
    // the result is computed in a view of a logical buffer, which bufferizes
    // to the kernel's out-parameter.
    // CHECK-LABEL: func.func @bn_relu(
    // CHECK-SAME: %[[X:.+]]: tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
    // CHECK: %[[XF:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : tensor<1x4x2x3xf32> into tensor<24xf32>
    // CHECK: %[[XP:.+]] = tensor.expand_shape %[[XF]] {{\[}}[0, 1, 2, 3]] output_shape [1, 2, 3, 4] : tensor<24xf32> into tensor<1x2x3x4xf32>
    // CHECK: %[[BUF:.+]] = tensor.empty() : tensor<1x4x2x3xf32>
    // CHECK-NEXT: %[[BF:.+]] = tensor.collapse_shape %[[BUF]]
    // CHECK-NEXT: %[[BP:.+]] = tensor.expand_shape %[[BF]] {{.*}} into tensor<1x2x3x4xf32>
    // CHECK-NEXT: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[XP]], %{{.+}} : tensor<1x2x3x4xf32>, tensor<4xf32>) outs(%[[BP]] : tensor<1x2x3x4xf32>)
    // CHECK: %[[YF:.+]] = tensor.collapse_shape %[[Y]]
    // CHECK: %[[YL:.+]] = tensor.expand_shape %[[YF]] {{.*}} into tensor<1x4x2x3xf32>
    // CHECK: return %[[YL]]
    func.func @bn_relu(%x: tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32> {
      %scale = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %zero = arith.constant 0.0 : f32
      %init = tensor.empty() : tensor<1x4x2x3xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %scale : tensor<1x4x2x3xf32>, tensor<4xf32>) outs(%init : tensor<1x4x2x3xf32>) {
      ^bb0(%in: f32, %s: f32, %out: f32):
        %1 = arith.mulf %in, %s : f32
        %2 = arith.maximumf %1, %zero : f32
        linalg.yield %2 : f32
      } -> tensor<1x4x2x3xf32>
      return %0 : tensor<1x4x2x3xf32>
    }

    // One channels-last input beside a row-major one: the generic reads it
    // through a permuted map; an op that is not a generic gets a transpose
    // of the view.
    // CHECK-LABEL: func.func @mixed(
    // CHECK-SAME: %[[A:.+]]: tensor<1x4x2x3xf32>, %[[B:.+]]: tensor<1x4x2x3xf32>)
    // CHECK: %[[BP:.+]] = tensor.expand_shape {{.*}} into tensor<1x2x3x4xf32>
    // CHECK: %[[BT:.+]] = linalg.transpose ins(%[[BP]] : tensor<1x2x3x4xf32>) outs(%{{.+}} : tensor<1x4x2x3xf32>) permutation = [0, 3, 1, 2]
    // CHECK: linalg.generic {indexing_maps = [#[[PERM]], #[[ID]], #[[PERM]]]{{.*}} ins(%[[A]], %[[BP]] : tensor<1x4x2x3xf32>, tensor<1x2x3x4xf32>)
    // CHECK: linalg.transpose ins(%[[BT]] : tensor<1x4x2x3xf32>)
    func.func @mixed(%a: tensor<1x4x2x3xf32>, %b: tensor<1x4x2x3xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x4x3x2xf32>) {
      %init = tensor.empty() : tensor<1x4x2x3xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %b : tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) outs(%init : tensor<1x4x2x3xf32>) {
      ^bb0(%in: f32, %in2: f32, %out: f32):
        %1 = arith.addf %in, %in2 : f32
        linalg.yield %1 : f32
      } -> tensor<1x4x2x3xf32>
      %tinit = tensor.empty() : tensor<1x4x3x2xf32>
      %t = linalg.transpose ins(%b : tensor<1x4x2x3xf32>) outs(%tinit : tensor<1x4x3x2xf32>) permutation = [0, 1, 3, 2]
      return %0, %t : tensor<1x4x2x3xf32>, tensor<1x4x3x2xf32>
    }

    // Without the attributes a kernel stays as it is.
    // CHECK-LABEL: func.func @untouched(
    // CHECK-NOT: tensor.collapse_shape
    // CHECK: return
    func.func @untouched(%x: tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32> {
      return %x : tensor<1x4x2x3xf32>
    }
  }
}
