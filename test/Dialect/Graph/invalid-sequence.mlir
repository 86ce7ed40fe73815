// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @empty_dtype() -> !graph.seq<tensor<*xf32>> {
  // expected-error @+1 {{'graph.sequence_empty' op dtype must be an element type, got 'tensor<f32>'}}
  %0 = graph.sequence_empty tensor<f32> : !graph.seq<tensor<*xf32>>
  return %0 : !graph.seq<tensor<*xf32>>
}

// -----

func.func @construct_nothing() -> !graph.seq<tensor<*xf32>> {
  // expected-error @+1 {{'graph.sequence_construct' op needs at least one tensor}}
  %0 = graph.sequence_construct : () -> !graph.seq<tensor<*xf32>>
  return %0 : !graph.seq<tensor<*xf32>>
}

// -----

func.func @construct_mixed(%a: tensor<2xf32>, %b: tensor<2xi32>) -> !graph.seq<tensor<2xf32>> {
  // expected-error @+1 {{'graph.sequence_construct' op input #1 has type 'tensor<2xi32>', but the sequence's tensors have element type 'f32'}}
  %0 = graph.sequence_construct %a, %b : (tensor<2xf32>, tensor<2xi32>) -> !graph.seq<tensor<2xf32>>
  return %0 : !graph.seq<tensor<2xf32>>
}

// -----

func.func @construct_result(%a: tensor<2xf32>) -> !graph.seq<tensor<*xf64>> {
  // expected-error @+1 {{'graph.sequence_construct' op result #0 has type '!graph.seq<tensor<*xf64>>', incompatible with the inferred type '!graph.seq<tensor<2xf32>>'}}
  %0 = graph.sequence_construct %a : (tensor<2xf32>) -> !graph.seq<tensor<*xf64>>
  return %0 : !graph.seq<tensor<*xf64>>
}

// -----

func.func @insert_type(%s: !graph.seq<tensor<*xf32>>, %t: tensor<2xi64>) -> !graph.seq<tensor<*xf32>> {
  // expected-error @+1 {{'graph.sequence_insert' op cannot insert a tensor of type 'tensor<2xi64>' into a sequence of 'tensor<*xf32>'}}
  %0 = graph.sequence_insert %s, %t : (!graph.seq<tensor<*xf32>>, tensor<2xi64>) -> !graph.seq<tensor<*xf32>>
  return %0 : !graph.seq<tensor<*xf32>>
}

// -----

func.func @insert_position(%s: !graph.seq<tensor<*xf32>>, %t: tensor<2xf32>, %p: tensor<2xi64>) -> !graph.seq<tensor<*xf32>> {
  // expected-error @+1 {{'graph.sequence_insert' op position must hold one element, got 'tensor<2xi64>'}}
  %0 = graph.sequence_insert %s, %t at %p : (!graph.seq<tensor<*xf32>>, tensor<2xf32>, tensor<2xi64>) -> !graph.seq<tensor<*xf32>>
  return %0 : !graph.seq<tensor<*xf32>>
}

// -----

func.func @at_nested(%s: !graph.seq<!graph.seq<tensor<f32>>>, %p: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{'graph.sequence_at' op input sequence must be a sequence of tensors, got '!graph.seq<!graph.seq<tensor<f32>>>'}}
  %0 = graph.sequence_at %s, %p : (!graph.seq<!graph.seq<tensor<f32>>>, tensor<i64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @at_result(%s: !graph.seq<tensor<2xf32>>, %p: tensor<i64>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.sequence_at' op result #0 has type 'tensor<3xf32>', incompatible with the inferred type 'tensor<2xf32>'}}
  %0 = graph.sequence_at %s, %p : (!graph.seq<tensor<2xf32>>, tensor<i64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @split_axis(%x: tensor<2x3xf32>) -> !graph.seq<tensor<*xf32>> {
  // expected-error @+1 {{'graph.split_to_sequence' op axis 2 is out of range for an input of rank 2}}
  %0 = graph.split_to_sequence %x {axis = 2 : i64} : (tensor<2x3xf32>) -> !graph.seq<tensor<*xf32>>
  return %0 : !graph.seq<tensor<*xf32>>
}

// -----

func.func @split_sum(%x: tensor<6xf32>) -> !graph.seq<tensor<?xf32>> {
  %s = graph.constant dense<[2, 3]> : tensor<2xi64>
  // expected-error @+1 {{'graph.split_to_sequence' op split sizes [2, 3] add up to 5, but the axis has size 6}}
  %0 = graph.split_to_sequence %x split %s : (tensor<6xf32>, tensor<2xi64>) -> !graph.seq<tensor<?xf32>>
  return %0 : !graph.seq<tensor<?xf32>>
}

// -----

func.func @split_chunk(%x: tensor<6xf32>) -> !graph.seq<tensor<?xf32>> {
  %s = graph.constant dense<0> : tensor<i64>
  // expected-error @+1 {{'graph.split_to_sequence' op split size must be positive, got 0}}
  %0 = graph.split_to_sequence %x split %s : (tensor<6xf32>, tensor<i64>) -> !graph.seq<tensor<?xf32>>
  return %0 : !graph.seq<tensor<?xf32>>
}

// -----

func.func @split_rank(%x: tensor<6xf32>, %s: tensor<1x2xi64>) -> !graph.seq<tensor<?xf32>> {
  // expected-error @+1 {{'graph.split_to_sequence' op split must be a scalar or a 1-D tensor, got 'tensor<1x2xi64>'}}
  %0 = graph.split_to_sequence %x split %s : (tensor<6xf32>, tensor<1x2xi64>) -> !graph.seq<tensor<?xf32>>
  return %0 : !graph.seq<tensor<?xf32>>
}

// -----

func.func @concat_new_axis(%s: !graph.seq<tensor<2x3xf32>>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.concat_from_sequence' op new_axis must be 0 or 1, got 2}}
  %0 = graph.concat_from_sequence %s {axis = 0 : i64, new_axis = 2 : i64} : (!graph.seq<tensor<2x3xf32>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_axis(%s: !graph.seq<tensor<2x3xf32>>) -> tensor<*xf32> {
  // expected-error @+1 {{'graph.concat_from_sequence' op axis 2 is out of range for tensors of rank 2}}
  %0 = graph.concat_from_sequence %s {axis = 2 : i64} : (!graph.seq<tensor<2x3xf32>>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @map_arguments(%s: !graph.seq<tensor<2xf32>>, %t: tensor<2xf32>) -> !graph.seq<tensor<2xf32>> {
  // expected-error @+1 {{'graph.sequence_map' op body takes 1 arguments, expected 2 (one per operand)}}
  %0 = graph.sequence_map %s, %t : (!graph.seq<tensor<2xf32>>, tensor<2xf32>) -> !graph.seq<tensor<2xf32>> {
  ^bb0(%x: tensor<2xf32>):
    graph.sequence_map_yield %x : tensor<2xf32>
  }
  return %0 : !graph.seq<tensor<2xf32>>
}

// -----

func.func @map_argument_type(%s: !graph.seq<tensor<2xf32>>) -> !graph.seq<tensor<3xf32>> {
  // expected-error @+1 {{'graph.sequence_map' op body argument #0 has type 'tensor<3xf32>', but operand #0 provides 'tensor<2xf32>'}}
  %0 = graph.sequence_map %s : (!graph.seq<tensor<2xf32>>) -> !graph.seq<tensor<3xf32>> {
  ^bb0(%x: tensor<3xf32>):
    graph.sequence_map_yield %x : tensor<3xf32>
  }
  return %0 : !graph.seq<tensor<3xf32>>
}

// -----

func.func @map_yields(%s: !graph.seq<tensor<2xf32>>) -> !graph.seq<tensor<2xf32>> {
  // expected-error @+1 {{'graph.sequence_map' op body yields 2 values, expected 1}}
  %0 = graph.sequence_map %s : (!graph.seq<tensor<2xf32>>) -> !graph.seq<tensor<2xf32>> {
  ^bb0(%x: tensor<2xf32>):
    graph.sequence_map_yield %x, %x : tensor<2xf32>, tensor<2xf32>
  }
  return %0 : !graph.seq<tensor<2xf32>>
}

// -----

func.func @map_result(%s: !graph.seq<tensor<2xf32>>) -> !graph.seq<tensor<2xi32>> {
  // expected-error @+1 {{'graph.sequence_map' op result #0 has type '!graph.seq<tensor<2xi32>>', incompatible with the inferred type '!graph.seq<tensor<2xf32>>'}}
  %0 = graph.sequence_map %s : (!graph.seq<tensor<2xf32>>) -> !graph.seq<tensor<2xi32>> {
  ^bb0(%x: tensor<2xf32>):
    graph.sequence_map_yield %x : tensor<2xf32>
  }
  return %0 : !graph.seq<tensor<2xi32>>
}

// -----

func.func @map_yield_parent(%x: tensor<2xf32>) {
  // expected-error @+1 {{'graph.sequence_map_yield' op expects parent op 'graph.sequence_map'}}
  graph.sequence_map_yield %x : tensor<2xf32>
}

// -----

func.func @optional_nothing() -> !graph.opt<tensor<f32>> {
  // expected-error @+1 {{'graph.optional' op needs an input or a type attribute}}
  %0 = graph.optional -> !graph.opt<tensor<f32>>
  return %0 : !graph.opt<tensor<f32>>
}

// -----

func.func @optional_type(%x: tensor<2xf32>) -> !graph.opt<tensor<2xf32>> {
  // expected-error @+1 {{'graph.optional' op type attribute 'tensor<2xi64>' does not match the input type 'tensor<2xf32>'}}
  %0 = graph.optional %x : tensor<2xf32> {type = tensor<2xi64>} -> !graph.opt<tensor<2xf32>>
  return %0 : !graph.opt<tensor<2xf32>>
}

// -----

func.func @get_element_nested(%o: !graph.opt<!graph.opt<tensor<f32>>>) -> tensor<f32> {
  // expected-error @+1 {{'graph.optional_get_element' op the optional must hold a tensor or a sequence, got '!graph.opt<!graph.opt<tensor<f32>>>'}}
  %0 = graph.optional_get_element %o : (!graph.opt<!graph.opt<tensor<f32>>>) -> tensor<f32>
  return %0 : tensor<f32>
}
