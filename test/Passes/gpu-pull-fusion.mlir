// RUN: strata-opt %s -split-input-file --strata-gpu-pull-fusion | FileCheck %s
//
// strata-gpu-pull-fusion (GpuPullFusion.cpp): a generated pointwise kernel
// of several ops becomes one all-parallel linalg.generic over its result,
// each element read through the chain from its own position; reads at the
// loop indices become the generic's inputs, the others tensor.extract, and
// a concat's parts are chosen with scf.if so that only one is read. Kernels
// of other categories, with a reduction, or with results of different
// shapes are left as they are.

// Swin's patch merging: two strided slices into a concat, then a bias.
// CHECK-LABEL: module @kernels
// CHECK-LABEL: func.func @strata_poi_merge
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<2x4x4x8xf32>
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%arg2 : tensor<8xf32>) outs(%[[OUT]] : tensor<2x4x4x8xf32>)
// CHECK: ^bb0(%[[BIAS:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[I0:.*]] = linalg.index 0
// CHECK-DAG: %[[I1:.*]] = linalg.index 1
// CHECK-DAG: %[[I2:.*]] = linalg.index 2
// CHECK-DAG: %[[I3:.*]] = linalg.index 3
// The second part (channels 4 to 7), else the first.
// CHECK: %[[C:.*]] = arith.addi %[[I3]], %c-4
// CHECK: %[[SECOND:.*]] = arith.cmpi sge, %[[I3]], %c4
// CHECK: %[[PICK:.*]] = scf.if %[[SECOND]] -> (f32) {
// CHECK: %[[R:.*]] = arith.muli %[[I1]], %c2
// CHECK: %[[R1:.*]] = arith.addi %[[R]], %c1
// CHECK: %[[W:.*]] = arith.muli %[[I2]], %c2
// CHECK: %[[E:.*]] = tensor.extract %arg1[%[[I0]], %[[R1]], %[[W]], %[[C]]] : tensor<2x8x8x4xf32>
// CHECK: scf.yield %[[E]]
// CHECK: } else {
// CHECK: %[[F:.*]] = tensor.extract %arg0[%[[I0]], %[[I1]], %[[I2]], %[[I3]]] : tensor<2x4x4x4xf32>
// CHECK: scf.yield %[[F]]
// CHECK: }
// CHECK: %[[SUM:.*]] = arith.addf %[[PICK]], %[[BIAS]]
// CHECK: linalg.yield %[[SUM]]
// CHECK: return %[[G]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d3)>
module {
  func.func private @strata_poi_merge(tensor<2x4x4x4xf32>, tensor<2x8x8x4xf32>, tensor<8xf32>) -> tensor<2x4x4x8xf32> attributes {strata.category = "poi", strata.kernel, strata.kind = "codegen"}
  module @kernels {
    func.func @strata_poi_merge(%a: tensor<2x4x4x4xf32>, %x: tensor<2x8x8x4xf32>, %b: tensor<8xf32>) -> tensor<2x4x4x8xf32> {
      %s = tensor.extract_slice %x[0, 1, 0, 0] [2, 4, 4, 4] [1, 2, 2, 1] : tensor<2x8x8x4xf32> to tensor<2x4x4x4xf32>
      %e = tensor.empty() : tensor<2x4x4x8xf32>
      %0 = tensor.insert_slice %a into %e[0, 0, 0, 0] [2, 4, 4, 4] [1, 1, 1, 1] : tensor<2x4x4x4xf32> into tensor<2x4x4x8xf32>
      %1 = tensor.insert_slice %s into %0[0, 0, 0, 4] [2, 4, 4, 4] [1, 1, 1, 1] : tensor<2x4x4x4xf32> into tensor<2x4x4x8xf32>
      %e2 = tensor.empty() : tensor<2x4x4x8xf32>
      %2 = linalg.generic {indexing_maps = [#id4, #bias, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %b : tensor<2x4x4x8xf32>, tensor<8xf32>) outs(%e2 : tensor<2x4x4x8xf32>) {
      ^bb0(%in: f32, %bi: f32, %out: f32):
        %3 = arith.addf %in, %bi : f32
        linalg.yield %3 : f32
      } -> tensor<2x4x4x8xf32>
      return %2 : tensor<2x4x4x8xf32>
    }
  }
}

// -----

// A transpose, then a pad of its rows (an attention operand padded for the
// flash kernel): the rows past the input's read the padding value, the
// others the input at the transposed position.
// CHECK-LABEL: func.func @strata_poi_transpose_pad
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<2x8x4xf16>)
// CHECK-DAG: %[[I0:.*]] = linalg.index 0
// CHECK-DAG: %[[I1:.*]] = linalg.index 1
// CHECK-DAG: %[[I2:.*]] = linalg.index 2
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[I1]], %c5
// CHECK: scf.if %[[IN]] -> (f16) {
// CHECK: tensor.extract %arg0[%[[I1]], %[[I0]], %[[I2]]] : tensor<5x2x4xf16>
// CHECK: } else {
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f16
// CHECK: scf.yield %[[Z]]
#t_in = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
#t_out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func private @strata_poi_transpose_pad(tensor<5x2x4xf16>) -> tensor<2x8x4xf16> attributes {strata.category = "poi", strata.kernel, strata.kind = "codegen"}
  module @kernels {
    func.func @strata_poi_transpose_pad(%x: tensor<5x2x4xf16>) -> tensor<2x8x4xf16> {
      %e = tensor.empty() : tensor<2x5x4xf16>
      %t = linalg.generic {indexing_maps = [#t_in, #t_out], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<5x2x4xf16>) outs(%e : tensor<2x5x4xf16>) {
      ^bb0(%in: f16, %out: f16):
        linalg.yield %in : f16
      } -> tensor<2x5x4xf16>
      %p = tensor.pad %t low[0, 0, 0] high[0, 3, 0] {
      ^bb0(%i: index, %j: index, %k: index):
        %z = arith.constant 0.0 : f16
        tensor.yield %z : f16
      } : tensor<2x5x4xf16> to tensor<2x8x4xf16>
      return %p : tensor<2x8x4xf16>
    }
  }
}

// -----

// Left as they are: a kernel with a reduction, a kernel whose results
// differ in shape, and a kernel that is not pointwise.
// CHECK-LABEL: func.func @strata_poi_reduce
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}"reduction"
// CHECK-LABEL: func.func @strata_poi_two_shapes
// CHECK: tensor.extract_slice
// CHECK: tensor.extract_slice
// CHECK-LABEL: func.func @strata_per_slices
// CHECK: tensor.extract_slice
// CHECK: tensor.insert_slice
#r_in = affine_map<(d0, d1) -> (d0, d1)>
#r_out = affine_map<(d0, d1) -> (d0)>
module {
  func.func private @strata_poi_reduce(tensor<4x8xf32>) -> tensor<4xf32> attributes {strata.category = "poi", strata.kernel, strata.kind = "codegen"}
  func.func private @strata_poi_two_shapes(tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x2xf32>) attributes {strata.category = "poi", strata.kernel, strata.kind = "codegen"}
  func.func private @strata_per_slices(tensor<4x8xf32>) -> tensor<4x8xf32> attributes {strata.category = "per", strata.kernel, strata.kind = "codegen"}
  module @kernels {
    func.func @strata_poi_reduce(%x: tensor<4x8xf32>) -> tensor<4xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %r = linalg.generic {indexing_maps = [#r_in, #r_out], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
      ^bb0(%in: f32, %acc: f32):
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      } -> tensor<4xf32>
      return %r : tensor<4xf32>
    }
    func.func @strata_poi_two_shapes(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x2xf32>) {
      %a = tensor.extract_slice %x[0, 0] [4, 4] [1, 2] : tensor<4x8xf32> to tensor<4x4xf32>
      %b = tensor.extract_slice %a[0, 0] [4, 2] [1, 2] : tensor<4x4xf32> to tensor<4x2xf32>
      return %a, %b : tensor<4x4xf32>, tensor<4x2xf32>
    }
    func.func @strata_per_slices(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %a = tensor.extract_slice %x[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
      %r = tensor.insert_slice %a into %x[0, 4] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
      return %r : tensor<4x8xf32>
    }
  }
}

// -----

// A value the kernel returns in two layouts (EfficientNet's SiLU, read
// channels-last by the next convolution and channels-first by its
// squeeze-and-excitation pool): one generic over the first result's shape,
// the second result written through the transpose's permutation, the SiLU
// computed once per element. The permutation: position (n, h, w, c) of the
// first result is (n, c, h, w) of the second.
// CHECK: #[[PERM:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-LABEL: func.func @strata_poi_two_layouts
// CHECK-DAG: %[[E0:.*]] = tensor.empty() : tensor<2x3x4x8xf32>
// CHECK-DAG: %[[E1:.*]] = tensor.empty() : tensor<2x8x3x4xf32>
// CHECK: %[[G:.*]]:2 = linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[ID]], #[[PERM]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x3x4x8xf32>) outs(%[[E0]], %[[E1]] : tensor<2x3x4x8xf32>, tensor<2x8x3x4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[S:.*]] = arith.mulf %[[X]], %{{.*}}
// CHECK-NOT: arith.mulf
// CHECK: linalg.yield %[[S]], %[[S]] : f32, f32
// CHECK: return %[[G]]#0, %[[G]]#1
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
module {
  func.func private @strata_poi_two_layouts(tensor<2x3x4x8xf32>) -> (tensor<2x3x4x8xf32>, tensor<2x8x3x4xf32>) attributes {strata.category = "poi", strata.kernel, strata.kind = "codegen"}
  module @kernels {
    func.func @strata_poi_two_layouts(%x: tensor<2x3x4x8xf32>) -> (tensor<2x3x4x8xf32>, tensor<2x8x3x4xf32>) {
      %e = tensor.empty() : tensor<2x3x4x8xf32>
      %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4x8xf32>) outs(%e : tensor<2x3x4x8xf32>) {
      ^bb0(%in: f32, %out: f32):
        %n = arith.negf %in : f32
        %ex = math.exp %n : f32
        %one = arith.constant 1.0 : f32
        %d = arith.addf %ex, %one : f32
        %sig = arith.divf %one, %d : f32
        %r = arith.mulf %in, %sig : f32
        linalg.yield %r : f32
      } -> tensor<2x3x4x8xf32>
      %e2 = tensor.empty() : tensor<2x8x3x4xf32>
      %t = linalg.generic {indexing_maps = [#nhwc, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x3x4x8xf32>) outs(%e2 : tensor<2x8x3x4xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<2x8x3x4xf32>
      return %s, %t : tensor<2x3x4x8xf32>, tensor<2x8x3x4xf32>
    }
  }
}
