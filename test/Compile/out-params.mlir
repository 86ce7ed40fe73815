// RUN: strata-opt --strata-stage-cpu %s | FileCheck %s
//
// The cpu stage merges a kernel's loops on tensors (strata-collapse-dims),
// so the kernel returns a view of what it computed. Bufferized, that view
// must fold back to its allocation before the results become
// out-parameters: the kernel then computes straight into the buffer the
// runtime passes, with no allocation of its own and no copy.

// CHECK-LABEL: func.func @strata_poi_relu_0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<1x21x14x14xf32>, %[[Y:[a-z0-9]+]]: memref<1x21x14x14xf32>)
// CHECK-NOT: memref.alloc
// CHECK: memref.collapse_shape %[[Y]] {{\[}}[0, 1, 2, 3]] : memref<1x21x14x14xf32> into memref<4116xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return
module {
  func.func private @strata_poi_relu_0(tensor<1x21x14x14xf32>) -> tensor<1x21x14x14xf32> attributes {strata.kernel, strata.kind = "codegen", strata.category = "poi"}
  module @kernels {
    func.func @strata_poi_relu_0(%x: tensor<1x21x14x14xf32> {bufferization.writable = false}) -> tensor<1x21x14x14xf32> {
      %zero = arith.constant 0.0 : f32
      %init = tensor.empty() : tensor<1x21x14x14xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x21x14x14xf32>) outs(%init : tensor<1x21x14x14xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.maximumf %in, %zero : f32
        linalg.yield %1 : f32
      } -> tensor<1x21x14x14xf32>
      return %0 : tensor<1x21x14x14xf32>
    }
  }
}
