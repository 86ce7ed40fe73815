// RUN: strata-opt %s -split-input-file --strata-run-time-shapes | FileCheck %s
// RUN: strata-opt %s -split-input-file --strata-run-time-shapes=all=true | FileCheck %s --check-prefix=ALL
// RUN: strata-opt %s -split-input-file --strata-run-time-shapes=target=cuda | FileCheck %s --check-prefix=GPU
// The same options from the module's #strata.compile, as the stages pass them:
// RUN: strata-opt %s -split-input-file --strata-compile-options=host-kernels=true --strata-run-time-shapes | FileCheck %s --check-prefix=ALL
// RUN: strata-opt %s -split-input-file --strata-compile-options=target=cuda --strata-run-time-shapes | FileCheck %s --check-prefix=GPU
//
// strata-run-time-shapes (RunTimeShapes.cpp): every op that reads what a
// value-dependent op (here NonZero) wrote, transitively, is marked to run
// as a host kernel (strata.host); ops before it and beside it are not. A
// run-time If whose branches yield different shapes becomes guards, the
// branches' ops and a merge. On the CPU a host op whose result's shape is
// static (Size) ends the region: what reads it is generated code again; on
// a GPU the region goes on.

// CHECK-LABEL: func.func @tail
// CHECK: %[[POS:.*]] = graph.greater %arg0, %{{.*}} : (tensor<6xf32>, tensor<f32>) -> tensor<6xi1>
// CHECK-NOT: strata.host
// CHECK: %[[NZ:.*]] = graph.non_zero %[[POS]]
// CHECK-NOT: strata.host
// CHECK: %[[T:.*]] = graph.transpose %[[NZ]] {perm = array<i64: 1, 0>, strata.host}
// CHECK: %[[G:.*]] = graph.gather_nd %arg0, %[[T]] {strata.host}
// CHECK: %[[S:.*]] = graph.shape %[[G]] {strata.host}
// The relu reads only the input: generated code.
// CHECK: graph.relu %arg0 :
// ALL-LABEL: func.func @tail
// ALL: graph.greater {{.*}}strata.host
// ALL: graph.relu {{.*}}strata.host
func.func @tail(%arg0: tensor<6xf32>) -> (tensor<1xi64>, tensor<6xf32>) {
  %c = graph.constant dense<2.500000e-01> : tensor<f32>
  %0 = graph.greater %arg0, %c : (tensor<6xf32>, tensor<f32>) -> tensor<6xi1>
  %1 = graph.non_zero %0 : (tensor<6xi1>) -> tensor<1x?xi64>
  %2 = graph.transpose %1 {perm = array<i64: 1, 0>} : (tensor<1x?xi64>) -> tensor<?x1xi64>
  %3 = graph.gather_nd %arg0, %2 : (tensor<6xf32>, tensor<?x1xi64>) -> tensor<?xf32>
  %4 = graph.shape %3 : (tensor<?xf32>) -> tensor<1xi64>
  %5 = graph.relu %arg0 : (tensor<6xf32>) -> tensor<6xf32>
  return %4, %5 : tensor<1xi64>, tensor<6xf32>
}

// -----

// The If of torchvision's batched_nms: an empty result when nothing is left,
// else a computation on the values. Each branch reads the values through a
// guard of its own; the result is a merge; a yielded constant stays as it is.
// CHECK-LABEL: func.func @branches
// CHECK: %[[V:.*]] = graph.compress %arg0, %{{.*}} : (tensor<5xf32>, tensor<5xi1>) -> tensor<?xf32>
// CHECK: %[[C:.*]] = graph.equal %{{[^{]*}} : (tensor<i64>, tensor<i64>) -> tensor<i1>
// GPU-LABEL: func.func @branches
// GPU: graph.size {{.*}}strata.host
// GPU: graph.equal {{.*}}strata.host
// CHECK-NOT: graph.if
// CHECK: %[[G:.*]] = graph.guard %[[C]], %[[V]] {expect = false, strata.host}
// CHECK: %[[D:.*]] = graph.add %[[G]], %[[G]] {strata.host}
// CHECK: graph.merge %[[C]], %{{.*}}, %[[D]] {strata.host} : (tensor<i1>, tensor<0xf32>, tensor<?xf32>) -> tensor<?xf32>
func.func @branches(%arg0: tensor<5xf32>) -> tensor<?xf32> {
  %zero = graph.constant dense<0.000000e+00> : tensor<f32>
  %none = graph.constant dense<0> : tensor<i64>
  %empty = graph.constant dense<> : tensor<0xf32>
  %0 = graph.greater %arg0, %zero : (tensor<5xf32>, tensor<f32>) -> tensor<5xi1>
  %1 = graph.compress %arg0, %0 : (tensor<5xf32>, tensor<5xi1>) -> tensor<?xf32>
  %2 = graph.size %1 : (tensor<?xf32>) -> tensor<i64>
  %3 = graph.equal %2, %none : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %4 = graph.if %3 : tensor<i1> -> tensor<?xf32> {
    graph.yield %empty : tensor<0xf32>
  } else {
    %5 = graph.add %1, %1 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    graph.yield %5 : tensor<?xf32>
  }
  return %4 : tensor<?xf32>
}

// -----

// An If inside a branch: its condition and values come in through the outer
// branch's guards, and its merge is the outer else value.
// CHECK-LABEL: func.func @nested
// CHECK: %[[C:.*]] = graph.equal
// CHECK: %[[V:.*]] = graph.guard %[[C]], %{{.*}} {expect = false, strata.host}
// CHECK: %[[C2:.*]] = graph.guard %[[C]], %arg1 {expect = false, strata.host}
// CHECK: %[[T:.*]] = graph.guard %[[C2]], %[[V]] {expect = true, strata.host}
// CHECK: %[[A:.*]] = graph.add %[[T]], %[[T]]
// CHECK: %[[E:.*]] = graph.guard %[[C2]], %[[V]] {expect = false, strata.host}
// CHECK: %[[N:.*]] = graph.neg %[[E]]
// CHECK: %[[M:.*]] = graph.merge %[[C2]], %[[A]], %[[N]]
// CHECK: graph.merge %[[C]], %{{.*}}, %[[M]]
func.func @nested(%arg0: tensor<5xf32>, %c2: tensor<i1>) -> tensor<?xf32> {
  %zero = graph.constant dense<0.000000e+00> : tensor<f32>
  %none = graph.constant dense<0> : tensor<i64>
  %empty = graph.constant dense<> : tensor<0xf32>
  %0 = graph.greater %arg0, %zero : (tensor<5xf32>, tensor<f32>) -> tensor<5xi1>
  %1 = graph.compress %arg0, %0 : (tensor<5xf32>, tensor<5xi1>) -> tensor<?xf32>
  %2 = graph.size %1 : (tensor<?xf32>) -> tensor<i64>
  %3 = graph.equal %2, %none : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %4 = graph.if %3 : tensor<i1> -> tensor<?xf32> {
    graph.yield %empty : tensor<0xf32>
  } else {
    %5 = graph.if %c2 : tensor<i1> -> tensor<?xf32> {
      %6 = graph.add %1, %1 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      graph.yield %6 : tensor<?xf32>
    } else {
      %7 = graph.neg %1 : (tensor<?xf32>) -> tensor<?xf32>
      graph.yield %7 : tensor<?xf32>
    }
    graph.yield %5 : tensor<?xf32>
  }
  return %4 : tensor<?xf32>
}

// -----

// An op that no generated code takes but a host kernel does runs on the
// host, and its reader stays generated code (its result's shape is static).
// CHECK-LABEL: func.func @no_codegen
// CHECK: graph.mel_weight_matrix {{.*}}{strata.host}
// CHECK: graph.relu %{{.*}} : (tensor<9x8xf32>)
func.func @no_codegen(%n: tensor<i32>, %d: tensor<i32>, %r: tensor<i32>) -> tensor<9x8xf32> {
  %lo = graph.constant dense<0.000000e+00> : tensor<f32>
  %hi = graph.constant dense<4.096000e+03> : tensor<f32>
  %0 = graph.mel_weight_matrix %n, %d, %r, %lo, %hi : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<9x8xf32>
  %1 = graph.relu %0 : (tensor<9x8xf32>) -> tensor<9x8xf32>
  return %1 : tensor<9x8xf32>
}
