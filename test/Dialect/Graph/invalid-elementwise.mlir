// RUN: strata-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the elementwise ops.

func.func @unary_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.floor' op result #0 has type 'tensor<3x2xf32>', incompatible with the inferred type 'tensor<2x3xf32>'}}
  %0 = graph.floor %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @unary_element(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = graph.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return
}

// -----

func.func @is_nan_result(%x: tensor<2xf32>) {
  // expected-error @+1 {{result #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.is_nan %x : (tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @binary_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operands are not broadcast-compatible: 'tensor<2x3xf32>' 'tensor<4xf32>'}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @binary_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result #0 has type 'tensor<3xf32>', incompatible with the inferred type 'tensor<2x3xf32>'}}
  %0 = graph.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @compare_elements(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  // expected-error @+1 {{requires the same element type for all operands}}
  %0 = graph.less %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  return
}

// -----

func.func @compare_result(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.greater_equal %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @compare_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{operands are not broadcast-compatible}}
  %0 = graph.equal %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xi1>
  return
}

// -----

func.func @logic_operands(%a: tensor<3xi32>) {
  // expected-error @+1 {{operand #0 must be tensor of 1-bit signless integer values}}
  %0 = graph.and %a, %a : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  return
}

// -----

func.func @mod_fmod(%a: tensor<3xi32>) {
  // expected-error @+1 {{fmod must be 0 or 1, got 2}}
  %0 = graph.mod %a, %a {fmod = 2 : i64} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return
}

// -----

func.func @mod_float(%a: tensor<3xf32>) {
  // expected-error @+1 {{floating-point operands ('f32') require fmod = 1}}
  %0 = graph.mod %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @mod_bool(%a: tensor<3xi1>) {
  // expected-error @+1 {{expects integer or floating-point operands, got 'i1'}}
  %0 = graph.mod %a, %a : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return
}

// -----

func.func @bit_shift_direction(%a: tensor<3xui8>) {
  // expected-error @+1 {{direction must be "LEFT" or "RIGHT", got "UP"}}
  %0 = graph.bit_shift %a, %a {direction = "UP"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  return
}

// -----

func.func @bit_shift_signed(%a: tensor<3xi8>) {
  // expected-error @+1 {{expects unsigned integer operands, got 'i8'}}
  %0 = graph.bit_shift %a, %a {direction = "LEFT"} : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  return
}

// -----

func.func @prelu_slope(%x: tensor<2x1xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{slope 'tensor<2x3xf32>' does not broadcast to the input 'tensor<2x1xf32>'}}
  %0 = graph.prelu %x, %s : (tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gelu_approximate(%x: tensor<3xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "erf"}}
  %0 = graph.gelu %x {approximate = "erf"} : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @where_elements(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<3xf16>) {
  // expected-error @+1 {{x, y and the result must share an element type}}
  %0 = graph.where %c, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

func.func @where_broadcast(%c: tensor<2xi1>, %x: tensor<3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{operands are not broadcast-compatible}}
  %0 = graph.where %c, %x, %y : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @clip_bound_element(%x: tensor<3xf32>, %lo: tensor<f16>) {
  // expected-error @+1 {{bound element type 'f16' differs from the input's}}
  %0 = graph.clip %x min %lo : (tensor<3xf32>, tensor<f16>) -> tensor<3xf32>
  return
}

// -----

func.func @clip_bound_shape(%x: tensor<3xf32>, %hi: tensor<2xf32>) {
  // expected-error @+1 {{bounds must be scalars, got 'tensor<2xf32>'}}
  %0 = graph.clip %x max %hi : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @clip_result(%x: tensor<3xf32>) {
  // expected-error @+1 {{result element type differs from the input's}}
  %0 = graph.clip %x : (tensor<3xf32>) -> tensor<3xf64>
  return
}

// -----

func.func @cast_shape(%x: tensor<3xf32>) {
  // expected-error @+1 {{'graph.cast' op result #0 has type 'tensor<4xi32>', incompatible with the inferred type 'tensor<3xi32>'}}
  %0 = graph.cast %x : (tensor<3xf32>) -> tensor<4xi32>
  return
}
