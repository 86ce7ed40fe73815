// RUN: strata-opt --strata-convert-graph-to-linalg %s -split-input-file | FileCheck %s --enable-var-scope

// Normalizations and dropout on static shapes: the mean and the variance are
// reductions into a tensor of the kept dims (two passes), and one parallel
// generic applies them with the scale and bias.

// Layer norm over the last axis: the scale and bias are read along it, the
// statistics at the leading dims; Mean and InvStdDev get their unit dim back.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$LAST:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[S:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x3x4xf32>)
// CHECK: arith.addf
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<2x3xf32>)
// CHECK: arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: %[[SQ:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<2x3x4xf32>, tensor<2x3xf32>)
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: %[[INV:.+]] = linalg.generic {{.+}} ins(%[[SQ]] : tensor<2x3xf32>)
// CHECK: math.sqrt
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ROW]], #[[$LAST]], #[[$LAST]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MEAN]], %[[INV]], %[[S]], %[[B]] :
// CHECK: %[[M:.+]] = tensor.expand_shape %[[MEAN]] {{\[}}[0], [1, 2]] output_shape [2, 3, 1]
// CHECK: %[[I:.+]] = tensor.expand_shape %[[INV]] {{\[}}[0], [1, 2]] output_shape [2, 3, 1]
// CHECK: return %[[Y]], %[[M]], %[[I]]
func.func @layer_norm(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>) {
  %y, %m, %i = graph.layer_norm %x, %s bias %b : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  return %y, %m, %i : tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
}

// -----

// f16 accumulates in f32 and rounds once; axis 0 reduces everything into a
// rank-0 statistic. A scale without bias, broadcast along its unit dim.
// CHECK-DAG: #[[$NONE:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$SCALE:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @layer_norm_f16(
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$NONE]]], iterator_types = ["reduction", "reduction"]}
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$NONE]], #[[$NONE]], #[[$SCALE]], #{{.+}}], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: tensor.expand_shape %{{.+}} : tensor<1xf32> into tensor<1x1xf32>
func.func @layer_norm_f16(%x: tensor<2x3xf16>, %s: tensor<1x3xf16>) -> (tensor<2x3xf16>, tensor<1x1xf32>, tensor<1x1xf32>) {
  %y, %m, %i = graph.layer_norm %x, %s {axis = 0 : i64} : (tensor<2x3xf16>, tensor<1x3xf16>) -> (tensor<2x3xf16>, tensor<1x1xf32>, tensor<1x1xf32>)
  return %y, %m, %i : tensor<2x3xf16>, tensor<1x1xf32>, tensor<1x1xf32>
}

// -----

// Dynamic shapes are left to the graph op.
// CHECK-LABEL: func.func @layer_norm_dynamic(
// CHECK: graph.layer_norm
// CHECK-NOT: linalg.generic
func.func @layer_norm_dynamic(%x: tensor<?x4xf32>, %s: tensor<4xf32>) -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %y, %m, %i = graph.layer_norm %x, %s : (tensor<?x4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x1xf32>)
  return %y, %m, %i : tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x1xf32>
}

// -----

// Instance norm: statistics per (n, c), scale and bias per channel.
// CHECK-DAG: #[[$NC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @instance_norm(
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$NC]], #[[$NC]], #[[$C]], #[[$C]], #{{.+}}]
func.func @instance_norm(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %0 = graph.instance_norm %x, %s, %b {epsilon = 0.01 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Group norm views (N, C, D) as (N, G, C/G, D); a per-group scale is read at
// the group, a per-channel bias at g * C/G + k.
// CHECK-DAG: #[[$GROUP:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[$CHANNEL:.+]] = affine_map<(d0, d1, d2, d3) -> (d1 * 3 + d2)>
// CHECK-LABEL: func.func @group_norm(
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3]] output_shape [2, 2, 3, 5] : tensor<2x6x5xf32> into tensor<2x2x3x5xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}, #[[$GROUP]], #[[$CHANNEL]], #{{.+}}]
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2], [3]] : tensor<2x2x3x5xf32> into tensor<2x6x5xf32>
func.func @group_norm(%x: tensor<2x6x5xf32>, %s: tensor<2xf32>, %b: tensor<6xf32>) -> tensor<2x6x5xf32> {
  %0 = graph.group_norm %x, %s, %b {num_groups = 2 : i64} : (tensor<2x6x5xf32>, tensor<2xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  return %0 : tensor<2x6x5xf32>
}

// -----

// Mean-variance normalization: the epsilon is added after the square root.
// CHECK-LABEL: func.func @mvn(
// CHECK: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: %[[ROOT:.+]] = math.sqrt
// CHECK-NEXT: %[[DEN:.+]] = arith.addf %[[ROOT]], %{{.+}} : f32
// CHECK: arith.divf %{{.+}}, %[[DEN]] : f32
func.func @mvn(%x: tensor<3x3x3x1xf32>) -> tensor<3x3x3x1xf32> {
  %0 = graph.mean_variance_norm %x {axes = array<i64: 0, 2, 3>} : (tensor<3x3x3x1xf32>) -> tensor<3x3x3x1xf32>
  return %0 : tensor<3x3x3x1xf32>
}

// -----

// LRN: the squares go into a copy padded by (size - 1) / 2 channels before
// and the rest after; the window sum reads channel c + j.
// CHECK-DAG: #[[$WINDOW:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
// CHECK-DAG: #[[$J:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-LABEL: func.func @lrn(
// CHECK: %[[PAD:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x8x2x2xf32>)
// CHECK: %[[SQ:.+]] = tensor.insert_slice %{{.+}} into %[[PAD]][0, 1, 0, 0] [1, 5, 2, 2] [1, 1, 1, 1]
// CHECK: %[[WIN:.+]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$WINDOW]], #[[$J]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[SQ]], %[[WIN]] :
// CHECK: math.powf
func.func @lrn(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
  %0 = graph.lrn %x {size = 4 : i64} : (tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
  return %0 : tensor<1x5x2x2xf32>
}

// -----

// Dropout without training_mode: the input and an all-true mask.
// CHECK-LABEL: func.func @dropout_inference(
// CHECK-SAME: %[[X:[^:]+]]: tensor<3x4xf32>
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK: %[[MASK:.+]] = linalg.fill ins(%[[TRUE]] : i1) outs(%{{.+}} : tensor<3x4xi1>)
// CHECK: return %[[X]], %[[MASK]]
func.func @dropout_inference(%x: tensor<3x4xf32>, %r: tensor<f32>) -> (tensor<3x4xf32>, tensor<3x4xi1>) {
  %y, %m = graph.dropout %x ratio %r : (tensor<3x4xf32>, tensor<f32>) -> (tensor<3x4xf32>, tensor<3x4xi1>)
  return %y, %m : tensor<3x4xf32>, tensor<3x4xi1>
}

// -----

// A run-time training_mode: one generic draws per element and writes both
// results; outside training everything is kept and scaled by 1.
// CHECK-LABEL: func.func @dropout_training(
// CHECK-SAME: %[[X:[^:]+]]: tensor<3x4xf16>, %[[R:[^:]+]]: tensor<f32>, %[[T:[^:]+]]: tensor<i1>
// CHECK-DAG: %[[TRAINING:.+]] = tensor.extract %[[T]][]
// CHECK-DAG: %[[RATIO:.+]] = tensor.extract %[[R]][]
// CHECK: %[[SCALE:.+]] = arith.select %[[TRAINING]]
// CHECK: %{{.+}}:2 = linalg.generic {{.+}} ins(%[[X]] : tensor<3x4xf16>) outs(%{{.+}}, %{{.+}} : tensor<3x4xf16>, tensor<3x4xi1>)
// CHECK: arith.uitofp %{{.+}} : i64 to f32
// CHECK: %[[DRAWN:.+]] = arith.cmpf oge, %{{.+}}, %[[RATIO]] : f32
// CHECK: %[[OFF:.+]] = arith.xori %[[TRAINING]], %{{.+}} : i1
// CHECK: %[[KEEP:.+]] = arith.ori %[[OFF]], %[[DRAWN]] : i1
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: linalg.yield %{{.+}}, %[[KEEP]] : f16, i1
func.func @dropout_training(%x: tensor<3x4xf16>, %r: tensor<f32>, %t: tensor<i1>) -> (tensor<3x4xf16>, tensor<3x4xi1>) {
  %y, %m = graph.dropout %x ratio %r training_mode %t : (tensor<3x4xf16>, tensor<f32>, tensor<i1>) -> (tensor<3x4xf16>, tensor<3x4xi1>)
  return %y, %m : tensor<3x4xf16>, tensor<3x4xi1>
}
