// RUN: strata-opt --strata-convert-graph-to-linalg %s -split-input-file | FileCheck %s --enable-var-scope

// RNN, GRU and LSTM on static shapes: the input projection X * W^T (plus
// the biases) for every step at once, then one scf.for per direction whose
// steps multiply the carried state by R^T, combine the gates elementwise,
// copy the new state over the carried one and insert it into Y.

// CHECK-DAG: #[[$BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-DAG: #[[$X:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG: #[[$W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// CHECK-DAG: #[[$XW:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$HR_H:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$HR_R:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$HR_OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @rnn_forward(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x1x3xf32>, %[[W:[^:]+]]: tensor<1x4x3xf32>, %[[R:[^:]+]]: tensor<1x4x4xf32>, %[[B:[^:]+]]: tensor<1x8xf32>
// CHECK-DAG: %[[WB:.+]] = tensor.extract_slice %[[B]][0, 0] [1, 4] [1, 1] : tensor<1x8xf32> to tensor<1x4xf32>
// CHECK-DAG: %[[RB:.+]] = tensor.extract_slice %[[B]][0, 4] [1, 4] [1, 1] : tensor<1x8xf32> to tensor<1x4xf32>
// CHECK: %[[BIASES:.+]] = linalg.generic {indexing_maps = [#[[$BIAS]], #[[$BIAS]], {{.+}}]{{.*}} ins(%[[WB]], %[[RB]] : {{.+}}) outs(%{{.+}} : tensor<1x2x1x4xf32>)
// CHECK: arith.addf
// CHECK: %[[XW:.+]] = linalg.generic {indexing_maps = [#[[$X]], #[[$W]], #[[$XW]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[X]], %[[W]] : tensor<2x1x3xf32>, tensor<1x4x3xf32>) outs(%[[BIASES]] : tensor<1x2x1x4xf32>)
// CHECK: %[[Y0:.+]] = tensor.empty() : tensor<2x1x1x4xf32>
// CHECK: %[[YH0:.+]] = tensor.empty() : tensor<1x1x4xf32>
// CHECK: %[[RD:.+]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<1x4x4xf32> to tensor<4x4xf32>
// CHECK: %[[H0:.+]] = linalg.fill {{.+}} -> tensor<1x4xf32>
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:.+]] = %[[H0]], %[[Y:.+]] = %[[Y0]]) -> (tensor<1x4xf32>, tensor<2x1x1x4xf32>)
// CHECK:   %[[XWT:.+]] = tensor.extract_slice %[[XW]][0, %[[T]], 0, 0] [1, 1, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> to tensor<1x4xf32>
// CHECK:   %[[HR:.+]] = linalg.generic {indexing_maps = [#[[$HR_H]], #[[$HR_R]], #[[$HR_OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[H]], %[[RD]] : tensor<1x4xf32>, tensor<4x4xf32>)
// CHECK:   %[[NEW:.+]] = linalg.generic
// CHECK:     math.tanh
// CHECK:   %[[COPY:.+]] = linalg.copy ins(%[[NEW]] : tensor<1x4xf32>) outs(%[[H]] : tensor<1x4xf32>)
// CHECK:   %[[YT:.+]] = tensor.insert_slice %[[NEW]] into %[[Y]][%[[T]], 0, 0, 0] [1, 1, 1, 4] [1, 1, 1, 1] : tensor<1x4xf32> into tensor<2x1x1x4xf32>
// CHECK:   scf.yield %[[COPY]], %[[YT]]
// CHECK: %[[YH:.+]] = tensor.insert_slice %[[LOOP]]#0 into %[[YH0]][0, 0, 0] [1, 1, 4] [1, 1, 1]
// CHECK: return %[[LOOP]]#1, %[[YH]]
func.func @rnn_forward(%x: tensor<2x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x8xf32>) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>) {
  %0:2 = graph.rnn %x, %w, %r bias %b {hidden_size = 4 : i64} : (tensor<2x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>, tensor<1x8xf32>) -> (tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
  return %0#0, %0#1 : tensor<2x1x1x4xf32>, tensor<1x1x4xf32>
}

// -----

// GRU without linear_before_reset: the state is multiplied by the z and r
// rows of R, then (r . H) by Rh. Y is unused, so the loop carries only H.
// CHECK-LABEL: func.func @gru_reset_first(
// CHECK-SAME: %{{[^:]+}}: tensor<5x2x3xf32>, %{{[^:]+}}: tensor<1x12x3xf32>, %[[R:[^:]+]]: tensor<1x12x4xf32>
// CHECK-DAG: %[[RZR:.+]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<1x12x4xf32> to tensor<8x4xf32>
// CHECK-DAG: %[[RH:.+]] = tensor.extract_slice %[[R]][0, 8, 0] [1, 4, 4] [1, 1, 1] : tensor<1x12x4xf32> to tensor<4x4xf32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:.+]] = %{{.+}}) -> (tensor<2x4xf32>) {
// CHECK:   %[[HR:.+]] = linalg.generic {{.+}} ins(%[[H]], %[[RZR]] : tensor<2x4xf32>, tensor<8x4xf32>) outs(%{{.+}} : tensor<2x8xf32>)
// CHECK:   %[[RESET:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[H]] : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:     math.exp
// CHECK:     arith.mulf
// CHECK:   %[[RHH:.+]] = linalg.generic {{.+}} ins(%[[RESET]], %[[RH]] : tensor<2x4xf32>, tensor<4x4xf32>) outs(%{{.+}} : tensor<2x4xf32>)
// CHECK:   %[[NEW:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %[[RHH]], %[[H]] :
// CHECK:     math.tanh
// CHECK:   %[[COPY:.+]] = linalg.copy ins(%[[NEW]] : tensor<2x4xf32>) outs(%[[H]] : tensor<2x4xf32>)
// CHECK:   scf.yield %[[COPY]] : tensor<2x4xf32>
// CHECK-NOT: graph.gru
func.func @gru_reset_first(%x: tensor<5x2x3xf32>, %w: tensor<1x12x3xf32>, %r: tensor<1x12x4xf32>) -> tensor<1x2x4xf32> {
  %0:2 = graph.gru %x, %w, %r {hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x12x3xf32>, tensor<1x12x4xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>)
  return %0#1 : tensor<1x2x4xf32>
}

// -----

// LSTM, reverse, with sequence_lens and peepholes: steps run from the last
// time index down; entries past their length keep the states (selects on
// t < lens[n]) and get zero Y rows. Peepholes are read per hidden unit and
// the lengths per batch entry.
// CHECK-DAG: #[[$HIDDEN:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$BATCH:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @lstm_reverse_lens(
// CHECK-SAME: %[[LENS:[^:]+]]: tensor<2xi32>, %[[P:[^:]+]]: tensor<1x12xf32>
// CHECK-DAG: %[[PI:.+]] = tensor.extract_slice %[[P]][0, 0] [1, 4] [1, 1] : tensor<1x12xf32> to tensor<4xf32>
// CHECK-DAG: %[[PO:.+]] = tensor.extract_slice %[[P]][0, 4] [1, 4] [1, 1] : tensor<1x12xf32> to tensor<4xf32>
// CHECK-DAG: %[[PF:.+]] = tensor.extract_slice %[[P]][0, 8] [1, 4] [1, 1] : tensor<1x12xf32> to tensor<4xf32>
// CHECK: scf.for %[[S:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:.+]] = %{{.+}}, %[[C:.+]] = %{{.+}}, %[[Y:.+]] = %{{.+}}) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x1x2x4xf32>)
// CHECK:   %[[LAST:.+]] = arith.constant 4 : index
// CHECK:   %[[T:.+]] = arith.subi %[[LAST]], %[[S]] : index
// CHECK:   %[[T32:.+]] = arith.index_cast %[[T]] : index to i32
// CHECK:   %[[NEW:.+]]:3 = linalg.generic {indexing_maps = [{{(#map[0-9]*, )+}}#[[$HIDDEN]], #[[$HIDDEN]], #[[$HIDDEN]], {{#map[0-9]*}}, {{#map[0-9]*}}, #[[$BATCH]], {{.+}}]{{.*}} ins({{(%[^,]+, )+}}%[[PI]], %[[PO]], %[[PF]], %[[H]], %[[C]], %[[LENS]] :
// CHECK:     %[[VALID:.+]] = arith.cmpi slt, %[[T32]], %{{.+}} : i32
// CHECK:     arith.select %[[VALID]]
// CHECK:     arith.select %[[VALID]]
// CHECK:     arith.select %[[VALID]]
// CHECK:   linalg.copy ins(%[[NEW]]#0 : tensor<2x4xf32>) outs(%[[H]] : tensor<2x4xf32>)
// CHECK:   linalg.copy ins(%[[NEW]]#1 : tensor<2x4xf32>) outs(%[[C]] : tensor<2x4xf32>)
// CHECK:   tensor.insert_slice %[[NEW]]#2 into %[[Y]][%[[T]], 0, 0, 0] [1, 1, 2, 4]
func.func @lstm_reverse_lens(%x: tensor<5x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x16x4xf32>, %l: tensor<2xi32>, %p: tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %0:3 = graph.lstm %x, %w, %r sequence_lens %l peepholes %p {direction = "reverse", hidden_size = 4 : i64} : (tensor<5x2x3xf32>, tensor<1x16x3xf32>, tensor<1x16x4xf32>, tensor<2xi32>, tensor<1x12xf32>) -> (tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<5x1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
}

// -----

// Bidirectional, batch-first: X is read as (batch, seq, input); each
// direction has its loop (the second one reversed) and starts from a copy
// of its initial_h slice; Y rows go to (batch, t, direction) and Y_h to
// (batch, direction).
// CHECK-DAG: #[[$XBF:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1, d4)>
// CHECK-LABEL: func.func @gru_bidirectional_batch_first(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x5x3xf32>, %{{[^:]+}}: tensor<2x12x3xf32>, %[[R:[^:]+]]: tensor<2x12x4xf32>, %[[H0:[^:]+]]: tensor<2x2x4xf32>
// CHECK: %[[XW:.+]] = linalg.generic {indexing_maps = [#[[$XBF]], {{.+}} ins(%[[X]], {{.+}} outs(%{{.+}} : tensor<2x5x2x12xf32>)
// CHECK: %[[FWD_H0:.+]] = tensor.extract_slice %[[H0]][0, 0, 0] [2, 1, 4] [1, 1, 1] : tensor<2x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[FWD_INIT:.+]] = linalg.copy ins(%[[FWD_H0]] : tensor<2x4xf32>)
// CHECK: %[[FWD:.+]]:2 = scf.for %[[T:.+]] = {{.+}} iter_args(%{{.+}} = %[[FWD_INIT]], %{{.+}} = %{{.+}})
// CHECK:   tensor.extract_slice %[[XW]][0, %[[T]], 0, 0] [1, 1, 2, 12]
// CHECK:   tensor.insert_slice %{{.+}} into %{{.+}}[0, %[[T]], 0, 0] [2, 1, 1, 4]
// CHECK: %[[YH_FWD:.+]] = tensor.insert_slice %[[FWD]]#0 into %{{.+}}[0, 0, 0] [2, 1, 4]
// CHECK: tensor.extract_slice %[[R]][1, 0, 0] [1, 12, 4]
// CHECK: %[[BWD_H0:.+]] = tensor.extract_slice %[[H0]][0, 1, 0] [2, 1, 4] [1, 1, 1] : tensor<2x2x4xf32> to tensor<2x4xf32>
// CHECK: %[[BWD_INIT:.+]] = linalg.copy ins(%[[BWD_H0]] : tensor<2x4xf32>)
// CHECK: %[[BWD:.+]]:2 = scf.for %[[S:.+]] = {{.+}} iter_args(%{{.+}} = %[[BWD_INIT]], %{{.+}} = %[[FWD]]#1)
// CHECK:   %[[T2:.+]] = arith.subi %{{.+}}, %[[S]] : index
// CHECK:   tensor.extract_slice %[[XW]][1, %[[T2]], 0, 0] [1, 1, 2, 12]
// CHECK:   tensor.insert_slice %{{.+}} into %{{.+}}[0, %[[T2]], 1, 0] [2, 1, 1, 4]
// CHECK: %[[YH:.+]] = tensor.insert_slice %[[BWD]]#0 into %[[YH_FWD]][0, 1, 0] [2, 1, 4]
// CHECK: return %[[BWD]]#1, %[[YH]]
func.func @gru_bidirectional_batch_first(%x: tensor<2x5x3xf32>, %w: tensor<2x12x3xf32>, %r: tensor<2x12x4xf32>, %h: tensor<2x2x4xf32>) -> (tensor<2x5x2x4xf32>, tensor<2x2x4xf32>) {
  %0:2 = graph.gru %x, %w, %r initial_h %h {direction = "bidirectional", hidden_size = 4 : i64, layout = 1 : i64, linear_before_reset = 1 : i64} : (tensor<2x5x3xf32>, tensor<2x12x3xf32>, tensor<2x12x4xf32>, tensor<2x2x4xf32>) -> (tensor<2x5x2x4xf32>, tensor<2x2x4xf32>)
  return %0#0, %0#1 : tensor<2x5x2x4xf32>, tensor<2x2x4xf32>
}

// -----

// Dynamic shapes and f16 are not lowered: the op stays.
// CHECK-LABEL: func.func @rnn_dynamic(
// CHECK: graph.rnn
func.func @rnn_dynamic(%x: tensor<?x1x3xf32>, %w: tensor<1x4x3xf32>, %r: tensor<1x4x4xf32>) -> tensor<1x1x4xf32> {
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 4 : i64} : (tensor<?x1x3xf32>, tensor<1x4x3xf32>, tensor<1x4x4xf32>) -> (tensor<?x1x1x4xf32>, tensor<1x1x4xf32>)
  return %0#1 : tensor<1x1x4xf32>
}

// -----

// CHECK-LABEL: func.func @rnn_f16(
// CHECK: graph.rnn
func.func @rnn_f16(%x: tensor<2x1x3xf16>, %w: tensor<1x4x3xf16>, %r: tensor<1x4x4xf16>) -> tensor<1x1x4xf16> {
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 4 : i64} : (tensor<2x1x3xf16>, tensor<1x4x3xf16>, tensor<1x4x4xf16>) -> (tensor<2x1x1x4xf16>, tensor<1x1x4xf16>)
  return %0#1 : tensor<1x1x4xf16>
}
