// A plugin's dialect (Registrar::registerDialects): with the example plugin
// loaded, IR in the `example` dialect parses and the dialect checks its
// attributes; without it, the dialect is unknown.
//
// RUN: env STRATA_PLUGIN_PATHS=%example_plugin STRATA_EXAMPLE_PLUGIN=none strata-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not strata-opt %s -split-input-file 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: operation being parsed with an unregistered dialect

// CHECK-LABEL: func.func @counted
// CHECK-SAME:  attributes {example.linalg_ops = 0 : i64, example.op_count = 1 : i64}
// CHECK:       "example.marker"() : () -> ()
func.func @counted() attributes {example.linalg_ops = 0 : i64, example.op_count = 1 : i64} {
  "example.marker"() : () -> ()
  return
}

// -----

// expected-error @+1 {{'example.op_count' must be a non-negative integer}}
func.func @negative() attributes {example.op_count = -1 : i64} {
  "example.marker"() : () -> ()
  return
}

// -----

// expected-error @+1 {{unknown attribute 'example.colour' of the example dialect}}
func.func @unknown() attributes {example.colour = "red"} {
  "example.marker"() : () -> ()
  return
}
