// RUN: strata-opt --strata-convert-graph-to-linalg %s | FileCheck %s

// Elementwise graph ops on ranked tensors become linalg.generic ops on
// tensors; broadcasting is in the indexing maps.

// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$LAST:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[$SCALAR2:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$SCALAR0:.+]] = affine_map<() -> ()>

// CHECK-LABEL: func.func @unary_f32(
// CHECK-SAME: %[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[R0:.+]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[E0]] : tensor<2x3xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[V:.+]] = math.absf %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<2x3xf32>
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.tanh
// CHECK: math.erf
// CHECK: math.floor
// CHECK: return %[[R0]],
// CHECK-NOT: graph.
func.func @unary_f32(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = graph.abs %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.exp %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.log %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.sqrt %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = graph.tanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.erf %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = graph.floor %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @unary_f16(
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: math.ceil %[[IN]] : f16
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: math.sin %[[IN]] : f16
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: math.cos %[[IN]] : f16
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f16
// CHECK-NEXT: arith.divf %[[ONE]], %[[IN]] : f16
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT: arith.maximumf %[[IN]], %[[ZERO]] : f16
func.func @unary_f16(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) {
  %0 = graph.ceil %x : (tensor<4xf16>) -> tensor<4xf16>
  %1 = graph.sin %x : (tensor<4xf16>) -> tensor<4xf16>
  %2 = graph.cos %x : (tensor<4xf16>) -> tensor<4xf16>
  %3 = graph.reciprocal %x : (tensor<4xf16>) -> tensor<4xf16>
  %4 = graph.relu %x : (tensor<4xf16>) -> tensor<4xf16>
  return %0, %1, %2, %3, %4 : tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>
}

// sigmoid(x) = 1 / (1 + exp(-x)).
// CHECK-LABEL: func.func @sigmoid_bf16(
// CHECK: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : bf16
// CHECK-NEXT: %[[NEG:.+]] = arith.negf %[[IN]] : bf16
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[NEG]] : bf16
// CHECK-NEXT: %[[DEN:.+]] = arith.addf %[[ONE]], %[[EXP]] : bf16
// CHECK-NEXT: %[[RES:.+]] = arith.divf %[[ONE]], %[[DEN]] : bf16
// CHECK-NEXT: linalg.yield %[[RES]] : bf16
func.func @sigmoid_bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = graph.sigmoid %x : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))); the tanh form too.
// CHECK-LABEL: func.func @gelu_f64(
// CHECK: ^bb0(%[[IN:.+]]: f64, %{{.+}}: f64):
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f64
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-DAG: %[[RSQRT2:.+]] = arith.constant 0.70710678118654757 : f64
// CHECK: %[[S:.+]] = arith.mulf %[[IN]], %[[RSQRT2]] : f64
// CHECK-NEXT: %[[ERF:.+]] = math.erf %[[S]] : f64
// CHECK-NEXT: %[[F:.+]] = arith.addf %[[ONE]], %[[ERF]] : f64
// CHECK-NEXT: %[[H:.+]] = arith.mulf %[[IN]], %[[HALF]] : f64
// CHECK-NEXT: %[[G:.+]] = arith.mulf %[[H]], %[[F]] : f64
// CHECK-NEXT: linalg.yield %[[G]] : f64
// CHECK: ^bb0(%{{.+}}: f64, %{{.+}}: f64):
// CHECK: arith.constant 4.471500e-02 : f64
// CHECK: arith.constant 0.79788456080286541 : f64
// CHECK: math.tanh
func.func @gelu_f64(%x: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %0 = graph.gelu %x : (tensor<4xf64>) -> tensor<4xf64>
  %1 = graph.gelu %x {approximate = "tanh"} : (tensor<4xf64>) -> tensor<4xf64>
  return %0, %1 : tensor<4xf64>, tensor<4xf64>
}

// CHECK-LABEL: func.func @unary_int(
// CHECK: ^bb0(%[[IN:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: math.absi %[[IN]] : i32
// CHECK: ^bb0(%[[IN:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: arith.subi %[[ZERO]], %[[IN]] : i32
// CHECK: ^bb0(%[[IN:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: arith.maxsi %[[IN]], %[[ZERO]] : i32
func.func @unary_int(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = graph.abs %x : (tensor<4xi32>) -> tensor<4xi32>
  %1 = graph.neg %x : (tensor<4xi32>) -> tensor<4xi32>
  %2 = graph.relu %x : (tensor<4xi32>) -> tensor<4xi32>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @binary_f32(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xf32>, %[[B:[^:]+]]: tensor<2x3xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<2x3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: arith.addf %[[L]], %[[R]] : f32
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.divf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: math.powf
func.func @binary_f32(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.div %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.max %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = graph.min %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.pow %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @binary_int(
// CHECK: ^bb0(%[[L:.+]]: i64, %[[R:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT: arith.addi %[[L]], %[[R]] : i64
// CHECK: arith.subi
// CHECK: arith.muli
// CHECK: arith.divsi
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: math.ipowi
func.func @binary_int(%a: tensor<4xi64>, %b: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %0 = graph.add %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = graph.sub %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = graph.mul %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %3 = graph.div %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %4 = graph.max %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %5 = graph.min %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %6 = graph.pow %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// ONNX Pow allows an exponent type other than the base's.
// CHECK-LABEL: func.func @pow_mixed(
// CHECK: ^bb0(%[[L:.+]]: f32, %[[R:.+]]: i32, %{{.+}}: f32):
// CHECK-NEXT: %[[E:.+]] = arith.sitofp %[[R]] : i32 to f32
// CHECK-NEXT: math.powf %[[L]], %[[E]] : f32
// CHECK: ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f16, %{{.+}}: f32):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[R]] : f16 to f32
// CHECK-NEXT: math.powf %[[L]], %[[W]] : f32
func.func @pow_mixed(%a: tensor<4xf32>, %b: tensor<4xi32>, %c: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.pow %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  %1 = graph.pow %a, %c : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// Trailing dimensions align; the missing leading one is dropped from the map.
// CHECK-LABEL: func.func @broadcast_2x3_3(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x3xf32>, %[[B:[^:]+]]: tensor<3xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$LAST]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<2x3xf32>)
func.func @broadcast_2x3_3(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Static size-1 dimensions are read at index 0.
// CHECK-LABEL: func.func @broadcast_4x1_1x5(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4x1xf32>, %[[B:[^:]+]]: tensor<1x5xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$COL]], #[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<4x1xf32>, tensor<1x5xf32>) outs(%[[E]] : tensor<4x5xf32>)
// CHECK: arith.mulf
func.func @broadcast_4x1_1x5(%a: tensor<4x1xf32>, %b: tensor<1x5xf32>) -> tensor<4x5xf32> {
  %0 = graph.mul %a, %b : (tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// CHECK-LABEL: func.func @broadcast_rank0(
// CHECK-SAME: %[[A:[^:]+]]: tensor<f32>, %[[B:[^:]+]]: tensor<2x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$SCALAR2]], #[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<f32>, tensor<2x3xf32>)
// CHECK: arith.subf
func.func @broadcast_rank0(%a: tensor<f32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.sub %a, %b : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @rank0(
// CHECK-SAME: %[[A:[^:]+]]: tensor<f32>, %[[B:[^:]+]]: tensor<f32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<f32>
// CHECK: linalg.generic {indexing_maps = [#[[$SCALAR0]], #[[$SCALAR0]], #[[$SCALAR0]]], iterator_types = []} ins(%[[A]], %[[B]] : tensor<f32>, tensor<f32>) outs(%[[E]] : tensor<f32>)
// CHECK: arith.addf
func.func @rank0(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = graph.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Both dynamic: assumed equal; the size comes from the first operand.
// CHECK-LABEL: func.func @dynamic_same(
// CHECK-SAME: %[[A:[^:]+]]: tensor<?x3xf32>, %[[B:[^:]+]]: tensor<?x3xf32>)
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[D0:.+]] = tensor.dim %[[A]], %[[C0]] : tensor<?x3xf32>
// CHECK: %[[E:.+]] = tensor.empty(%[[D0]]) : tensor<?x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]], #[[$ID2]]], {{.*}} ins(%[[A]], %[[B]] : tensor<?x3xf32>, tensor<?x3xf32>) outs(%[[E]] : tensor<?x3xf32>)
func.func @dynamic_same(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = graph.add %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// A dynamic dimension against a static 1 takes its size from the dynamic
// operand; the 1 broadcasts.
// CHECK-LABEL: func.func @dynamic_vs_one(
// CHECK-SAME: %[[A:[^:]+]]: tensor<1x?xf32>, %[[B:[^:]+]]: tensor<?x1xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[B]], %[[C0]] : tensor<?x1xf32>
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[A]], %[[C1]] : tensor<1x?xf32>
// CHECK: %[[E:.+]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ROW]], #[[$COL]], #[[$ID2]]], {{.*}} ins(%[[A]], %[[B]] : tensor<1x?xf32>, tensor<?x1xf32>) outs(%[[E]] : tensor<?x?xf32>)
func.func @dynamic_vs_one(%a: tensor<1x?xf32>, %b: tensor<?x1xf32>) -> tensor<?x?xf32> {
  %0 = graph.add %a, %b : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @dynamic_vs_static(
// CHECK-SAME: %[[A:[^:]+]]: tensor<?x3xf32>, %[[B:[^:]+]]: tensor<3xf32>)
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[D0:.+]] = tensor.dim %[[A]], %[[C0]] : tensor<?x3xf32>
// CHECK: %[[E:.+]] = tensor.empty(%[[D0]]) : tensor<?x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$LAST]], #[[$ID2]]], {{.*}} ins(%[[A]], %[[B]] : tensor<?x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<?x3xf32>)
// CHECK: arith.divf
func.func @dynamic_vs_static(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = graph.div %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @dynamic_unary(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x?xf32>)
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x?xf32>
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x?xf32>
// CHECK: %[[E:.+]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<?x?xf32>) outs(%[[E]] : tensor<?x?xf32>)
// CHECK: math.exp
func.func @dynamic_unary(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = graph.exp %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// Before shape inference the declared result may be less static than the
// operands show: compute the static shape, cast back to the declared type.
// CHECK-LABEL: func.func @refined_result(
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.*}} outs(%[[E]] : tensor<2x3xf32>)
// CHECK: %[[C:.+]] = tensor.cast %[[R]] : tensor<2x3xf32> to tensor<?x?xf32>
// CHECK: return %[[C]] : tensor<?x?xf32>
func.func @refined_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<?x?xf32> {
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @compare_f32(
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xi1>
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$LAST]], #[[$ID2]]], {{.*}} outs(%[[E]] : tensor<2x3xi1>)
// CHECK-NEXT: ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f32, %{{.+}}: i1):
// CHECK-NEXT: %[[V:.+]] = arith.cmpf oeq, %[[L]], %[[R]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : i1
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf oge
func.func @compare_f32(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) {
  %0 = graph.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = graph.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = graph.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %3 = graph.less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %4 = graph.greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0, %1, %2, %3, %4 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>
}

// CHECK-LABEL: func.func @compare_int(
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi sgt, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi sle, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : i32
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : i1
func.func @compare_int(%a: tensor<4xi32>, %b: tensor<4xi32>, %c: tensor<4xi1>, %d: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = graph.equal %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %1 = graph.less %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %2 = graph.greater %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %3 = graph.less_equal %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %4 = graph.greater_equal %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %5 = graph.equal %c, %d : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// Three-way broadcasting: (2x1, 3, scalar) -> 2x3.
// CHECK-LABEL: func.func @where(
// CHECK-SAME: %[[C:[^:]+]]: tensor<2x1xi1>, %[[X:[^:]+]]: tensor<3xf32>, %[[Y:[^:]+]]: tensor<f32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$COL]], #[[$LAST]], #[[$SCALAR2]], #[[$ID2]]], {{.*}} ins(%[[C]], %[[X]], %[[Y]] : tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[IC:.+]]: i1, %[[IX:.+]]: f32, %[[IY:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[V:.+]] = arith.select %[[IC]], %[[IX]], %[[IY]] : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @where(%c: tensor<2x1xi1>, %x: tensor<3xf32>, %y: tensor<f32>) -> tensor<2x3xf32> {
  %0 = graph.where %c, %x, %y : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @cast(
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: arith.truncf %{{.+}} : f32 to f16
// f16 -> bf16 goes through f32.
// CHECK: %[[W:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK-NEXT: arith.truncf %[[W]] : f32 to bf16
// CHECK: arith.fptosi %{{.+}} : f32 to i32
// To bool: nonzero (NaN included) is true.
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: arith.cmpf une, %{{.+}}, %[[Z]] : f32
// CHECK: arith.sitofp %{{.+}} : i32 to f32
// From bool: 0 or 1.
// CHECK: arith.uitofp %{{.+}} : i1 to f32
// CHECK: arith.extsi %{{.+}} : i32 to i64
// CHECK: arith.trunci %{{.+}} : i32 to i8
func.func @cast(%f: tensor<4xf32>, %h: tensor<4xf16>, %i: tensor<4xi32>, %b: tensor<4xi1>) -> (tensor<4xf64>, tensor<4xf16>, tensor<4xbf16>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi8>) {
  %0 = graph.cast %f : (tensor<4xf32>) -> tensor<4xf64>
  %1 = graph.cast %f : (tensor<4xf32>) -> tensor<4xf16>
  %2 = graph.cast %h : (tensor<4xf16>) -> tensor<4xbf16>
  %3 = graph.cast %f : (tensor<4xf32>) -> tensor<4xi32>
  %4 = graph.cast %f : (tensor<4xf32>) -> tensor<4xi1>
  %5 = graph.cast %i : (tensor<4xi32>) -> tensor<4xf32>
  %6 = graph.cast %b : (tensor<4xi1>) -> tensor<4xf32>
  %7 = graph.cast %i : (tensor<4xi32>) -> tensor<4xi64>
  %8 = graph.cast %i : (tensor<4xi32>) -> tensor<4xi8>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4xf64>, tensor<4xf16>, tensor<4xbf16>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi8>
}

// Ops the pass does not lower stay as they are: a matmul with a dynamic
// dimension, ops ONNX does not define on unsigned types, unranked tensors,
// float-only ops on integers. Their ranked float
// users still lower.
// CHECK-LABEL: func.func @unsupported(
// CHECK-SAME: %[[A:[^:]+]]: tensor<?x3xf32>, %[[B:[^:]+]]: tensor<3x4xf32>, %[[U:[^:]+]]: tensor<4xui8>, %[[X:[^:]+]]: tensor<*xf32>, %[[I:[^:]+]]: tensor<4xi32>)
// CHECK-NEXT: %[[MM:.+]] = graph.matmul %[[A]], %[[B]] : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[UA:.+]] = graph.neg %[[U]] : (tensor<4xui8>) -> tensor<4xui8>
// CHECK-NEXT: %[[UE:.+]] = graph.exp %[[X]] : (tensor<*xf32>) -> tensor<*xf32>
// CHECK-NEXT: %[[IE:.+]] = graph.exp %[[I]] : (tensor<4xi32>) -> tensor<4xi32>
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<?x4xf32>)
// CHECK: math.exp
// CHECK: return %[[MM]], %[[UA]], %[[UE]], %[[IE]], %[[R]]
func.func @unsupported(%a: tensor<?x3xf32>, %b: tensor<3x4xf32>, %u: tensor<4xui8>, %x: tensor<*xf32>, %i: tensor<4xi32>) -> (tensor<?x4xf32>, tensor<4xui8>, tensor<*xf32>, tensor<4xi32>, tensor<?x4xf32>) {
  %0 = graph.matmul %a, %b : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %1 = graph.neg %u : (tensor<4xui8>) -> tensor<4xui8>
  %2 = graph.exp %x : (tensor<*xf32>) -> tensor<*xf32>
  %3 = graph.exp %i : (tensor<4xi32>) -> tensor<4xi32>
  %4 = graph.exp %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0, %1, %2, %3, %4 : tensor<?x4xf32>, tensor<4xui8>, tensor<*xf32>, tensor<4xi32>, tensor<?x4xf32>
}

// The pass lowers, it does not fold: ops on constants become linalg too
// (folding would leave a graph.constant behind; canonicalize does that).
// CHECK-LABEL: func.func @constants_not_folded(
// CHECK: %[[C:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[C]], %[[C]] : tensor<2xf32>, tensor<2xf32>)
// CHECK: arith.addf
// CHECK: return %[[R]] : tensor<2xf32>
func.func @constants_not_folded() -> tensor<2xf32> {
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = graph.add %c, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
