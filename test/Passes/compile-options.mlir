// RUN: strata-opt %s -split-input-file --strata-compile-options='target=cuda arch=sm_90a libraries=false precision=bf16 decisions=keep.json shapes="x:3x8;s:" values="n:4"' | FileCheck %s
// RUN: strata-opt %s -split-input-file --strata-compile-options=target=cuda --strata-compile-options=precision=fp16 | FileCheck %s --check-prefix=KEEP
// RUN: strata-opt %s -split-input-file --strata-compile-options | FileCheck %s --check-prefix=DEFAULT
// RUN: not strata-opt %s -split-input-file --strata-compile-options=precision=fp8 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not strata-opt %s -split-input-file --strata-compile-options='shapes=x:3xq' 2>&1 | FileCheck %s --check-prefix=BADSHAPE
//
// strata-compile-options (CompileOptionsAttr.cpp) records the compile's
// options on the module as #strata.compile, which the stages' passes read;
// options not given keep the recorded ones, and fields at their defaults
// are not printed.

// CHECK: module attributes {strata.compile = #strata.compile<target = "cuda", arch = "sm_90a", libraries = false, precision = "bf16", decisions = "keep.json", input_shapes = {s = array<i64>, x = array<i64: 3, 8>}, input_values = {n = array<f64: 4.000000e+00>}>}
// KEEP: module attributes {strata.compile = #strata.compile<target = "cuda", precision = "fp16">}
// DEFAULT: module attributes {strata.compile = #strata.compile<>}
// BAD: error: a compile's precision is fp32, fp16 or bf16, not "fp8"
// BADSHAPE: error: strata-compile-options: shapes: bad dimension 'q' in 'x:3xq'
module {
  func.func @main(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    return %x : tensor<?x8xf32>
  }
}
