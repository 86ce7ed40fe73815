// RUN: strata-opt --strata-convert-graph-to-linalg %s -split-input-file | FileCheck %s --enable-var-scope

// Losses on static shapes: each target element reads its class's
// log-probability and weight through tensor.extract (the class is data);
// sum and mean fold that into one reduction carrying the summed losses and
// the summed applied weights.

// Reduction none over (N, C, d1) with i32 targets, class weights and
// ignore_index: the class is clamped into [0, C) for the reads and ignored
// elements select 0.
// CHECK-LABEL: func.func @nll_none(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x5x3xf32>, %[[T:[^:]+]]: tensor<2x3xi32>, %[[W:[^:]+]]: tensor<5xf32>
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]} ins(%[[T]] : tensor<2x3xi32>) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK: ^bb0(%[[CLS:.+]]: i32, %{{.+}}: f32):
// CHECK-DAG: %[[I0:.+]] = linalg.index 0
// CHECK-DAG: %[[I1:.+]] = linalg.index 1
// CHECK: %[[WIDE:.+]] = arith.extsi %[[CLS]] : i32 to i64
// CHECK: %[[LOW:.+]] = arith.maxsi
// CHECK: %[[C:.+]] = arith.minsi %[[LOW]], %{{.+}} : index
// CHECK: %[[LOGP:.+]] = tensor.extract %[[X]][%[[I0]], %[[C]], %[[I1]]] : tensor<2x5x3xf32>
// CHECK: %[[WEIGHT:.+]] = tensor.extract %[[W]][%[[C]]] : tensor<5xf32>
// CHECK: %[[NEG:.+]] = arith.negf %[[LOGP]]
// CHECK: %[[LOSS:.+]] = arith.mulf %[[NEG]], %[[WEIGHT]]
// CHECK: %[[II:.+]] = arith.constant -100 : i64
// CHECK: %[[IGNORED:.+]] = arith.cmpi eq, %[[WIDE]], %[[II]] : i64
// CHECK: %[[OUT:.+]] = arith.select %[[IGNORED]], %{{.+}}, %[[LOSS]] : f32
// CHECK: linalg.yield %[[OUT]] : f32
func.func @nll_none(%x: tensor<2x5x3xf32>, %t: tensor<2x3xi32>, %w: tensor<5xf32>) -> tensor<2x3xf32> {
  %0 = graph.negative_log_likelihood_loss %x, %t weight %w {ignore_index = -100 : i64, reduction = "none"} : (tensor<2x5x3xf32>, tensor<2x3xi32>, tensor<5xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Mean: one reduction over every target dim with two scalar accumulators,
// then the summed losses over the summed weights (1 each without weights).
// CHECK-DAG: #[[$NONE:.+]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @nll_mean(
// CHECK: %[[SUMS:.+]]:2 = linalg.generic {indexing_maps = [#{{.+}}, #[[$NONE]], #[[$NONE]]], iterator_types = ["reduction", "reduction", "reduction"]} ins(%{{.+}} : tensor<2x3x4xi64>) outs(%{{.+}}, %{{.+}} : tensor<f32>, tensor<f32>)
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[L:.+]] = arith.addf %{{.+}}, %{{.+}} : f32
// CHECK: %[[N:.+]] = arith.addf %{{.+}}, %[[ONE]] : f32
// CHECK: linalg.yield %[[L]], %[[N]]
// CHECK: linalg.generic {{.+}} ins(%[[SUMS]]#0, %[[SUMS]]#1 : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
func.func @nll_mean(%x: tensor<2x7x3x4xf32>, %t: tensor<2x3x4xi64>) -> tensor<f32> {
  %0 = graph.negative_log_likelihood_loss %x, %t : (tensor<2x7x3x4xf32>, tensor<2x3x4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Sum: no division.
// CHECK-LABEL: func.func @nll_sum(
// CHECK: linalg.generic {{.+}} iterator_types = ["reduction"]
// CHECK-NOT: arith.divf
// CHECK: return
func.func @nll_sum(%x: tensor<3x5xf64>, %t: tensor<3xi64>) -> tensor<f64> {
  %0 = graph.negative_log_likelihood_loss %x, %t {reduction = "sum"} : (tensor<3x5xf64>, tensor<3xi64>) -> tensor<f64>
  return %0 : tensor<f64>
}

// -----

// Softmax cross entropy in f16: log_softmax along the classes in f32 (max,
// then the sum of exp(x - max)), rounded to f16 for the log_prob result,
// while the loss reads the f32 values.
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @sce_f16(
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[$KEPT]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.+}} : tensor<2x4x3xf16>) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[MAX]] : tensor<2x4x3xf16>, tensor<2x3xf32>)
// CHECK: math.exp
// CHECK: %[[LOGP:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[MAX]], %[[SUM]] : tensor<2x4x3xf16>, tensor<2x3xf32>, tensor<2x3xf32>) outs(%{{.+}} : tensor<2x4x3xf32>)
// CHECK: math.log
// CHECK: %[[LOSS:.+]] = linalg.generic
// CHECK: tensor.extract %[[LOGP]][
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: %[[LP16:.+]] = linalg.generic {{.+}} ins(%[[LOGP]] : tensor<2x4x3xf32>) outs(%{{.+}} : tensor<2x4x3xf16>)
// CHECK: arith.truncf
// CHECK: return %[[LOSS]], %[[LP16]]
func.func @sce_f16(%s: tensor<2x4x3xf16>, %l: tensor<2x3xi64>) -> (tensor<2x3xf16>, tensor<2x4x3xf16>) {
  %0, %1 = graph.softmax_cross_entropy_loss %s, %l {reduction = "none"} : (tensor<2x4x3xf16>, tensor<2x3xi64>) -> (tensor<2x3xf16>, tensor<2x4x3xf16>)
  return %0, %1 : tensor<2x3xf16>, tensor<2x4x3xf16>
}

// -----

// Dynamic shapes are left to the graph op.
// CHECK-LABEL: func.func @nll_dynamic(
// CHECK: graph.negative_log_likelihood_loss
// CHECK-LABEL: func.func @sce_dynamic(
// CHECK: graph.softmax_cross_entropy_loss
func.func @nll_dynamic(%x: tensor<?x5xf32>, %t: tensor<?xi64>) -> tensor<f32> {
  %0 = graph.negative_log_likelihood_loss %x, %t : (tensor<?x5xf32>, tensor<?xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @sce_dynamic(%s: tensor<3x?xf32>, %l: tensor<3xi64>) -> (tensor<f32>, tensor<3x?xf32>) {
  %0, %1 = graph.softmax_cross_entropy_loss %s, %l : (tensor<3x?xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<3x?xf32>)
  return %0, %1 : tensor<f32>, tensor<3x?xf32>
}
