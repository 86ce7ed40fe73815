// RUN: strata-opt --strata-convert-graph-to-linalg %s | FileCheck %s

// The elementwise ops beyond the basic arithmetic: unsigned element types
// (signless inside the kernels, unsigned arith ops chosen from the graph
// types), mod, bit shifts, logical and bitwise ops, sign, round, the float
// classifications, clip, the inverse trigonometric and hyperbolic functions
// (computed in f32 for f16), integer pow with a float exponent.

// uiN operands enter through unrealized_conversion_casts; a lowered producer
// feeds a lowered user directly, and only values leaving the converted ops
// are cast back.
// CHECK-LABEL: func.func @unsigned(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xui8>, %[[B:[^:]+]]: tensor<4xui8>,
// CHECK-DAG: %[[SB:.+]] = builtin.unrealized_conversion_cast %[[B]] : tensor<4xui8> to tensor<4xi8>
// CHECK-DAG: %[[SA:.+]] = builtin.unrealized_conversion_cast %[[A]] : tensor<4xui8> to tensor<4xi8>
// CHECK: %[[DIV:.+]] = linalg.generic {{.*}} ins(%[[SA]], %[[SB]] : tensor<4xi8>, tensor<4xi8>) outs(%{{.+}} : tensor<4xi8>)
// CHECK: arith.divui %{{.+}}, %{{.+}} : i8
// CHECK: %[[UDIV:.+]] = builtin.unrealized_conversion_cast %[[DIV]] : tensor<4xi8> to tensor<4xui8>
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} ins(%[[DIV]], %[[SB]] : tensor<4xi8>, tensor<4xi8>)
// CHECK: arith.maxui %{{.+}}, %{{.+}} : i8
// CHECK: %[[UMAX:.+]] = builtin.unrealized_conversion_cast %[[MAX]] : tensor<4xi8> to tensor<4xui8>
// CHECK: arith.cmpi ugt, %{{.+}}, %{{.+}} : i8
// CHECK: arith.remui %{{.+}}, %{{.+}} : i8
// CHECK: arith.uitofp %{{.+}} : i8 to f32
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.fptoui %{{.+}} : f32 to i16
// CHECK: arith.minui %{{.+}}, %{{.+}} : i8
// CHECK: return %[[UDIV]], %[[UMAX]],
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>, %f: tensor<4xf32>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xui8>, tensor<4xf32>, tensor<4xi32>, tensor<4xui16>, tensor<4xui8>) {
  %0 = graph.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = graph.max %0, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = graph.greater %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %3 = graph.mod %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %4 = graph.cast %a : (tensor<4xui8>) -> tensor<4xf32>
  %5 = graph.cast %a : (tensor<4xui8>) -> tensor<4xi32>
  %6 = graph.cast %f : (tensor<4xf32>) -> tensor<4xui16>
  %7 = graph.min %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xui8>, tensor<4xui8>, tensor<4xi1>, tensor<4xui8>, tensor<4xf32>, tensor<4xi32>, tensor<4xui16>, tensor<4xui8>
}

// Mod with fmod = 0 on signed integers: the remainder takes the divisor's
// sign. With fmod = 1 on floats: remf (C fmod).
// CHECK-LABEL: func.func @mod(
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[REM:.+]] = arith.remsi %[[X]], %[[Y]] : i32
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[NZ:.+]] = arith.cmpi ne, %[[REM]], %[[ZERO]] : i32
// CHECK-NEXT: %[[RN:.+]] = arith.cmpi slt, %[[REM]], %[[ZERO]] : i32
// CHECK-NEXT: %[[YN:.+]] = arith.cmpi slt, %[[Y]], %[[ZERO]] : i32
// CHECK-NEXT: %[[DIFF:.+]] = arith.xori %[[RN]], %[[YN]] : i1
// CHECK-NEXT: %[[ADJ:.+]] = arith.andi %[[NZ]], %[[DIFF]] : i1
// CHECK-NEXT: %[[SUM:.+]] = arith.addi %[[REM]], %[[Y]] : i32
// CHECK-NEXT: %[[R:.+]] = arith.select %[[ADJ]], %[[SUM]], %[[REM]] : i32
// CHECK-NEXT: linalg.yield %[[R]] : i32
// CHECK: ^bb0(%[[FX:.+]]: f16, %[[FY:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[WX:.+]] = arith.extf %[[FX]] : f16 to f32
// CHECK-NEXT: %[[WY:.+]] = arith.extf %[[FY]] : f16 to f32
// CHECK-NEXT: %[[FR:.+]] = arith.remf %[[WX]], %[[WY]] : f32
// CHECK-NEXT: %[[NR:.+]] = arith.truncf %[[FR]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[NR]] : f16
func.func @mod(%a: tensor<6xi32>, %b: tensor<6xi32>, %c: tensor<6xf16>, %d: tensor<6xf16>) -> (tensor<6xi32>, tensor<6xf16>) {
  %0 = graph.mod %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %1 = graph.mod %c, %d {fmod = 1 : i64} : (tensor<6xf16>, tensor<6xf16>) -> tensor<6xf16>
  return %0, %1 : tensor<6xi32>, tensor<6xf16>
}

// Shifts by the bit width or more give 0 instead of arith's poison.
// CHECK-LABEL: func.func @bits(
// CHECK: ^bb0(%[[X:.+]]: i16, %[[N:.+]]: i16, %{{.+}}: i16):
// CHECK-NEXT: %[[S:.+]] = arith.shli %[[X]], %[[N]] : i16
// CHECK-NEXT: %[[W:.+]] = arith.constant 16 : i16
// CHECK-NEXT: %[[OK:.+]] = arith.cmpi ult, %[[N]], %[[W]] : i16
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0 : i16
// CHECK-NEXT: arith.select %[[OK]], %[[S]], %[[Z]] : i16
// CHECK: arith.shrui %{{.+}}, %{{.+}} : i16
// CHECK: arith.andi %{{.+}}, %{{.+}} : i32
// CHECK: arith.xori %{{.+}}, %{{.+}} : i32
// CHECK: %[[ONES:.+]] = arith.constant -1 : i32
// CHECK-NEXT: arith.xori %{{.+}}, %[[ONES]] : i32
// CHECK: arith.ori %{{.+}}, %{{.+}} : i1
// CHECK: %[[TRUE:.+]] = arith.constant true
// CHECK-NEXT: arith.xori %{{.+}}, %[[TRUE]] : i1
func.func @bits(%a: tensor<3xui16>, %b: tensor<3xui16>, %c: tensor<3xi32>, %d: tensor<3xi32>, %p: tensor<3xi1>, %q: tensor<3xi1>) -> (tensor<3xui16>, tensor<3xui16>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi1>, tensor<3xi1>) {
  %0 = graph.bit_shift %a, %b {direction = "LEFT"} : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  %1 = graph.bit_shift %a, %b {direction = "RIGHT"} : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  %2 = graph.bitwise_and %c, %d : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %3 = graph.bitwise_xor %c, %d : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %4 = graph.bitwise_not %c : (tensor<3xi32>) -> tensor<3xi32>
  %5 = graph.or %p, %q : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %6 = graph.not %p : (tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3xui16>, tensor<3xui16>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi1>, tensor<3xi1>
}

// Round is half to even; f16 goes through f32. Sign keeps NaN and 0.
// is_inf with only detect_negative compares with -inf; is_nan is unordered.
// CHECK-LABEL: func.func @float_ops(
// CHECK: ^bb0(%[[H:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[H]] : f16 to f32
// CHECK-NEXT: %[[R:.+]] = math.roundeven %[[W]] : f32
// CHECK-NEXT: arith.truncf %[[R]] : f32 to f16
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[POS:.+]] = arith.cmpf ogt, %[[X]], %[[Z]] : f32
// CHECK-NEXT: %[[NEG:.+]] = arith.cmpf olt, %[[X]], %[[Z]] : f32
// CHECK-NEXT: %[[M1:.+]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[IN:.+]] = arith.select %[[NEG]], %[[M1]], %[[X]] : f32
// CHECK-NEXT: %[[P1:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: arith.select %[[POS]], %[[P1]], %[[IN]] : f32
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: i1):
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[ISNEG:.+]] = arith.cmpf oeq, %[[X]], %[[NINF]] : f32
// CHECK-NEXT: linalg.yield %[[ISNEG]] : i1
// CHECK: arith.cmpf uno, %[[X:.+]], %[[X]] : f32
// CHECK: math.asin %{{.+}} : f32
// CHECK: math.acosh %{{.+}} : f32
// CHECK: ^bb0(%[[H:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[H]] : f16 to f32
// CHECK-NEXT: %[[T:.+]] = math.atanh %[[W]] : f32
// CHECK-NEXT: arith.truncf %[[T]] : f32 to f16
func.func @float_ops(%h: tensor<4xf16>, %x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) {
  %0 = graph.round %h : (tensor<4xf16>) -> tensor<4xf16>
  %1 = graph.sign %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.is_inf %x {detect_positive = 0 : i64} : (tensor<4xf32>) -> tensor<4xi1>
  %3 = graph.is_nan %x : (tensor<4xf32>) -> tensor<4xi1>
  %4 = graph.asin %x : (tensor<4xf32>) -> tensor<4xf32>
  %5 = graph.acosh %x : (tensor<4xf32>) -> tensor<4xf32>
  %6 = graph.atanh %h : (tensor<4xf16>) -> tensor<4xf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xf16>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>
}

// Clip reads its optional scalar bounds as broadcast operands: max first
// then min, so min > max gives max.
// CHECK-LABEL: func.func @clip(
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$SCALAR:.+]], #{{.+}}]
// CHECK: ^bb0(%[[X:.+]]: i8, %[[LO:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT: %[[R:.+]] = arith.maxsi %[[X]], %[[LO]] : i8
// CHECK-NEXT: linalg.yield %[[R]] : i8
// CHECK: ^bb0(%[[X:.+]]: f32, %[[LO:.+]]: f32, %[[HI:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[A:.+]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK-NEXT: %[[B:.+]] = arith.minimumf %[[A]], %[[HI]] : f32
// CHECK-NEXT: linalg.yield %[[B]] : f32
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[X]] : f32
func.func @clip(%x: tensor<3x4xi8>, %lo: tensor<i8>, %f: tensor<3xf32>, %a: tensor<f32>, %b: tensor<f32>) -> (tensor<3x4xi8>, tensor<3xf32>, tensor<3xf32>) {
  %0 = graph.clip %x min %lo : (tensor<3x4xi8>, tensor<i8>) -> tensor<3x4xi8>
  %1 = graph.clip %f min %a max %b : (tensor<3xf32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  %2 = graph.clip %f : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3x4xi8>, tensor<3xf32>, tensor<3xf32>
}

// An integer base with a float exponent is computed in f64 and truncated;
// a float base with an unsigned exponent converts it with uitofp.
// CHECK-LABEL: func.func @pow_types(
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: f32, %{{.+}}: i32):
// CHECK-NEXT: %[[WX:.+]] = arith.sitofp %[[X]] : i32 to f64
// CHECK-NEXT: %[[WY:.+]] = arith.extf %[[Y]] : f32 to f64
// CHECK-NEXT: %[[P:.+]] = math.powf %[[WX]], %[[WY]] : f64
// CHECK-NEXT: arith.fptosi %[[P]] : f64 to i32
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: i64, %{{.+}}: f32):
// CHECK-NEXT: %[[WY:.+]] = arith.uitofp %[[Y]] : i64 to f32
// CHECK-NEXT: math.powf %[[X]], %[[WY]] : f32
func.func @pow_types(%a: tensor<3xi32>, %b: tensor<3xf32>, %c: tensor<3xui64>) -> (tensor<3xi32>, tensor<3xf32>) {
  %0 = graph.pow %a, %b : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xi32>
  %1 = graph.pow %b, %c : (tensor<3xf32>, tensor<3xui64>) -> tensor<3xf32>
  return %0, %1 : tensor<3xi32>, tensor<3xf32>
}

// Not lowered: neg of an unsigned type (ONNX has none), a trigonometric
// function of integers, a dynamic-rank operand.
// CHECK-LABEL: func.func @unsupported(
// CHECK-NEXT: graph.neg
// CHECK-NEXT: graph.tan
// CHECK-NEXT: graph.round
// CHECK-NEXT: return
func.func @unsupported(%a: tensor<4xui8>, %f: tensor<*xf32>, %i: tensor<4xi32>) -> (tensor<4xui8>, tensor<4xi32>, tensor<*xf32>) {
  %0 = graph.neg %a : (tensor<4xui8>) -> tensor<4xui8>
  %1 = graph.tan %i : (tensor<4xi32>) -> tensor<4xi32>
  %2 = graph.round %f : (tensor<*xf32>) -> tensor<*xf32>
  return %0, %1, %2 : tensor<4xui8>, tensor<4xi32>, tensor<*xf32>
}
