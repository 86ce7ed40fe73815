// RUN: strata-opt %s -split-input-file -verify-diagnostics --strata-verify-static-shapes | FileCheck %s
//
// The same check on IR whose every op carries its ONNX node's name as its
// location, as the importer gives it (a NameLoc with no file position, so
// -verify-diagnostics cannot place its errors): the IR is in the ONNX-IR
// comment lines below, and the message is checked on stderr.
// RUN: sed -n 's|^// ONNX-IR: ||p' %s | not strata-opt --strata-verify-static-shapes=target=cuda 2>&1 | FileCheck %s --check-prefix=NAMED
//
// strata-verify-static-shapes (Specialize.cpp, verifyStaticShapes): after
// the graph stage every value of the entry function must have a static
// shape. The exceptions are values sized at run time by the runtime's host
// kernels (strings, NonZero, Compress, Unique, NonMaxSuppression), which
// only host steps and the model's outputs may read. The first op at fault
// is reported, naming ONNX nodes by their NameLoc locations (an op without
// one by its operation name). The pass rewrites nothing: this checks its
// errors, and that static modules and run-time-sized values returned
// directly pass unchanged.

// Every op named, as imported, on the cuda target (the target option
// names it in the message):
// NAMED: error: loc("add"): ONNX node 'add' reads the result of ONNX node 'nz', whose shape [1, ?] is only known at run time (it depends on tensor values); on the cuda target only the runtime's host kernels
// ONNX-IR: func.func @main(%x: tensor<4xf32>) -> tensor<1x?xi64> {
// ONNX-IR:   %0 = graph.non_zero %x : (tensor<4xf32>) -> tensor<1x?xi64> loc("nz")
// ONNX-IR:   %1 = graph.add %0, %0 : (tensor<1x?xi64>, tensor<1x?xi64>) -> tensor<1x?xi64> loc("add")
// ONNX-IR:   return %1 : tensor<1x?xi64> loc("out")
// ONNX-IR: } loc("graph")

// All static: no error, nothing rewritten.
// CHECK-LABEL: func.func @static
// CHECK: %[[R:.*]] = graph.relu %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: return %[[R]]
func.func @static(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A NonZero result that only the model's outputs read: its host step sizes
// it at run time, so it may stay dynamic.
// CHECK-LABEL: func.func @non_zero_returned
// CHECK: %[[NZ:.*]] = graph.non_zero %arg0 : (tensor<4xf32>) -> tensor<1x?xi64>
// CHECK: return %[[NZ]] : tensor<1x?xi64>
func.func @non_zero_returned(%x: tensor<4xf32>) -> tensor<1x?xi64> {
  %0 = graph.non_zero %x : (tensor<4xf32>) -> tensor<1x?xi64> loc("nz")
  return %0 : tensor<1x?xi64>
}

// -----

// Strings with stop words removed: sized at run time by the host step,
// returned directly.
// CHECK-LABEL: func.func @strings_returned
// CHECK: %[[S:.*]] = graph.string_normalizer %arg0 {{.*}} -> tensor<?x!graph.string>
// CHECK: return %[[S]]
func.func @strings_returned(%x: tensor<4x!graph.string>) -> tensor<?x!graph.string> {
  %0 = graph.string_normalizer %x {case_change_action = "LOWER", is_case_sensitive = 1 : i64, stopwords = ["monday"]} : (tensor<4x!graph.string>) -> tensor<?x!graph.string>
  return %0 : tensor<?x!graph.string>
}

// -----

// A reshape to a shape held in a tensor's values: a dynamic result of an
// op that generated code runs.
func.func @dynamic_result(%x: tensor<6xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  // expected-error @+1 {{the shape of this result, [?, ?], is not known at compile time (it depends on tensor values); the cpu target needs static shapes}}
  %0 = graph.reshape %x, %s : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Only the first op at fault is reported: not the relu that reads the
// reshape's dynamic result (it would only repeat the message).
func.func @first_only(%x: tensor<6xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{the shape of this result, [?], is not known at compile time}}
  %0 = graph.reshape %x, %s : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32>
  %1 = graph.relu %0 : (tensor<?xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// Generated code (an add) reading a NonZero result: the NonZero named by
// its ONNX node, the add (no NameLoc) by its operation name.
func.func @non_zero_read(%x: tensor<4xf32>) -> tensor<1x?xi64> {
  %0 = graph.non_zero %x : (tensor<4xf32>) -> tensor<1x?xi64> loc("nz")
  // expected-error @+1 {{'graph.add' reads the result of ONNX node 'nz', whose shape [1, ?] is only known at run time (it depends on tensor values); on the cpu target only the runtime's host kernels (strings, NonZero, Compress, Unique, NonMaxSuppression) and the model's outputs may read such a value}}
  %1 = graph.add %0, %0 : (tensor<1x?xi64>, tensor<1x?xi64>) -> tensor<1x?xi64>
  return %1 : tensor<1x?xi64>
}

// -----

// Neither op named: both by their operation names.
func.func @non_zero_read_unnamed(%x: tensor<4xf32>) -> tensor<1x?xi64> {
  %0 = graph.non_zero %x : (tensor<4xf32>) -> tensor<1x?xi64>
  // expected-error @+1 {{'graph.neg' reads the result of 'graph.non_zero', whose shape [1, ?] is only known at run time}}
  %1 = graph.neg %0 : (tensor<1x?xi64>) -> tensor<1x?xi64>
  return %1 : tensor<1x?xi64>
}

// -----

// A host step (a cast from strings) may read the run-time-sized strings,
// but its own dynamic result of numbers is not sized at run time: the
// message says where the size came from.
func.func @host_step_dynamic_result(%x: tensor<4x!graph.string>) -> tensor<?xf32> {
  %0 = graph.string_normalizer %x {case_change_action = "LOWER", is_case_sensitive = 1 : i64, stopwords = ["monday"]} : (tensor<4x!graph.string>) -> tensor<?x!graph.string> loc("norm")
  // expected-error @+1 {{the shape of this result, [?], is not known at compile time (it depends on tensor values); the cpu target needs static shapes ('graph.cast' reads the value-dependent result of ONNX node 'norm')}}
  %1 = graph.cast %0 : (tensor<?x!graph.string>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// A value the target cannot hold in a buffer (a sequence left after the
// graph stage).
func.func @sequence(%a: tensor<2xf32>) -> tensor<i64> {
  // expected-error @+1 {{produces '!graph.seq<tensor<2xf32>>', which the cpu target cannot hold in a buffer}}
  %0 = graph.sequence_construct %a, %a : (tensor<2xf32>, tensor<2xf32>) -> !graph.seq<tensor<2xf32>>
  %1 = graph.sequence_length %0 : (!graph.seq<tensor<2xf32>>) -> tensor<i64>
  return %1 : tensor<i64>
}

// -----

// expected-error @+1 {{the module has no entry function}}
module {
  func.func private @declared(tensor<2xf32>) -> tensor<2xf32>
}
