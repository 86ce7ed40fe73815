// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @groups(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>) {
  // expected-error @+1 {{'graph.adagrad' op takes 2 tensors after R and T, expected a positive multiple of 3 (X, G, H)}}
  %0:2 = graph.adagrad %r, %t, %x, %g : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return
}

// -----

func.func @companion(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'graph.momentum' op V_1 has type 'tensor<3xf32>', but X_1 has type 'tensor<2xf32>'}}
  %0:2 = graph.momentum %r, %t, %x, %g, %v {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "standard", norm_coefficient = 0.0 : f32}
      : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  return
}

// -----

func.func @mode(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>) {
  // expected-error @+1 {{'graph.momentum' op mode must be 'standard' or 'nesterov', got 'heavy'}}
  %0:2 = graph.momentum %r, %t, %x, %x, %x {alpha = 0.9 : f32, beta = 1.0 : f32, mode = "heavy", norm_coefficient = 0.0 : f32}
      : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return
}

// -----

func.func @results(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>) {
  // expected-error @+1 {{'graph.adam' op has 2 results, expected 3 for 1 optimized tensors}}
  %0:2 = graph.adam %r, %t, %x, %x, %x, %x
      : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return
}

// -----

func.func @rate(%r: tensor<2xf32>, %t: tensor<i64>, %x: tensor<2xf32>) {
  // expected-error @+1 {{'graph.adagrad' op R must be a scalar, got 'tensor<2xf32>'}}
  %0:2 = graph.adagrad %r, %t, %x, %x, %x : (tensor<2xf32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return
}

// -----

func.func @int_tensors(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xi32>) {
  // expected-error @+1 {{'graph.adagrad' op operand #2 must be variadic of tensor of 32-bit float or 64-bit float values, but got 'tensor<2xi32>'}}
  %0:2 = graph.adagrad %r, %t, %x, %x, %x : (tensor<f32>, tensor<i64>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>)
  return
}

// -----

func.func @gradient_results(%a: tensor<3xf32>) {
  // expected-error @+1 {{'graph.gradient' op has 2 results, expected one per value of xs (1)}}
  %0:2 = graph.gradient of %a wrt(%a) at(%a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @gradient_inputs(%a: tensor<3xf32>, %z: tensor<3xf32>) {
  // expected-error @+1 {{'graph.gradient' op takes 1 inputs, expected 2 (one per value of xs and zs)}}
  %0 = graph.gradient of %a wrt(%a) given(%z) at(%a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @gradient_input_type(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.gradient' op input #0 has type 'tensor<4xf32>', but the value it stands for has type 'tensor<3xf32>'}}
  %0 = graph.gradient of %a wrt(%a) at(%b) : (tensor<4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @gradient_shape(%a: tensor<3xf32>) {
  // expected-error @+1 {{'graph.gradient' op result #0 has type 'tensor<4xf32>', incompatible with the inferred type 'tensor<3xf32>'}}
  %0 = graph.gradient of %a wrt(%a) at(%a) : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}
