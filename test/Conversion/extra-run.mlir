// The Extra family's lowerings (optimizer steps, training-mode batch
// normalization, cum_sum and reduce_sum with run-time axes, integer
// tfidf_vectorizer) compose with upstream bufferization and lowering to LLVM
// and compute the values ONNX defines. Expected values come from the numpy
// references of ONNX's backend tests (momentum.py, adagrad.py, adam.py,
// batchnorm.py, tfidfvectorizer.py) and numpy.
//
// RUN: strata-opt --strata-convert-graph-to-linalg %s \
// RUN: | mlir-opt --one-shot-bufferize=bufferize-function-boundaries \
// RUN:     --convert-linalg-to-loops --lower-affine --convert-scf-to-cf \
// RUN:     --convert-math-to-llvm --convert-math-to-funcs --convert-math-to-libm \
// RUN:     --arith-expand --expand-strided-metadata --lower-affine \
// RUN:     --convert-arith-to-llvm --finalize-memref-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%t: tensor<*xf32>) {
  %buffer = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%buffer) : (memref<*xf32>) -> ()
  return
}

func.func @momentum(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = graph.momentum %r, %t, %x, %g, %v {alpha = 0.9 : f32, beta = 0.5 : f32, mode = "standard", norm_coefficient = 0.01 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

func.func @nesterov(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = graph.momentum %r, %t, %x, %g, %v {alpha = 0.9 : f32, beta = 0.5 : f32, mode = "nesterov", norm_coefficient = 0.01 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

func.func @adagrad(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %h: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = graph.adagrad %r, %t, %x, %g, %h {decay_factor = 0.1 : f32, epsilon = 1.0e-6 : f32, norm_coefficient = 0.01 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

func.func @adam(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<3xf32>, %g: tensor<3xf32>, %v: tensor<3xf32>, %h: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = graph.adam %r, %t, %x, %g, %v, %h {norm_coefficient = 0.01 : f32, norm_coefficient_post = 0.001 : f32} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

func.func @batch_norm(%x: tensor<2x3x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = graph.batch_norm %x, %s, %b, %m, %v {momentum = 0.8 : f32, training_mode = 1 : i64} : (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>
}

func.func @cum_sum(%x: tensor<2x3xf32>, %axis: tensor<i64>) -> tensor<2x3xf32> {
  %0 = graph.cum_sum %x, %axis {exclusive = 1 : i64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

func.func @reduce_sum(%x: tensor<3x2x2xf32>, %axes: tensor<1xi64>) -> tensor<3x2xf32> {
  %0 = graph.reduce_sum %x, %axes {keepdims = 0 : i64} : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

func.func @tfidf(%x: tensor<12xi32>) -> tensor<7xf32> {
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 5 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0, 4>, ngram_indexes = array<i64: 0, 1, 2, 3, 4, 5, 6>, pool_int64s = array<i64: 2, 3, 5, 4, 5, 6, 7, 8, 6, 7>} : (tensor<12xi32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

func.func @idf_batch(%x: tensor<2x6xi64>) -> tensor<2x7xf32> {
  %0 = graph.tfidf_vectorizer %x {max_gram_length = 2 : i64, max_skip_count = 5 : i64, min_gram_length = 1 : i64, mode = "IDF", ngram_counts = array<i64: 0, 4>, ngram_indexes = array<i64: 0, 1, 2, 3, 4, 5, 6>, pool_int64s = array<i64: 2, 3, 5, 4, 5, 6, 7, 8, 6, 7>, weights = array<f32: 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0>} : (tensor<2x6xi64>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}

// Standard momentum at T = 0: the gradient's coefficient is 1, not beta.
// CHECK: [0.94,  -2.041,  3.07]
// CHECK: [0.6,  0.41,  -0.7]
// Nesterov at T = 3.
// CHECK: [0.91795,  -2.04955,  3.11635]
// CHECK: [0.345,  0.295,  -0.215]
// Adagrad at T = 2 (rate 0.1 / 1.2).
// CHECK: [0.929177,  -2.03811,  3.07256]
// CHECK: [0.3601,  0.2529,  1.2409]
// Adam at T = 3 with bias correction and both norm coefficients.
// CHECK: [0.992638,  -2.00448,  2.99249]
// CHECK: [0.141,  0.203,  0.173]
// CHECK: [0.20006,  0.399653,  0.600341]
// Batch statistics over axes 0 and 2; running ones with momentum 0.8.
// CHECK: sizes = [2, 3, 2]
// CHECK:      [-0.507091,  0.16903]
// CHECK-NEXT: [1.89443,  3.68328]
// CHECK-NEXT: [-1.75377,  -1.1507{{[56]}}]
// CHECK:      [1.52127,  -1.18321]
// CHECK-NEXT: [-1.68328,  0.105574]
// CHECK-NEXT: [-0.547736,  -0.547736]
// CHECK: [0.75,  0.4,  1.05]
// CHECK: [1.2375,  2.6,  2.5375]
// Exclusive cum_sum along axis -1 (wrapped to 1), then along axis 0.
// CHECK:      [0,  1,  3]
// CHECK-NEXT: [0,  4,  9]
// CHECK:      [0,  0,  0]
// CHECK-NEXT: [1,  2,  3]
// reduce_sum 3x2x2 -> 3x2 over axis 1, then over axis -1 (wrapped to 2).
// CHECK:      [25,  3]
// CHECK-NEXT: [70,  3]
// CHECK-NEXT: [115,  3]
// CHECK:      [6,  22]
// CHECK-NEXT: [31,  42]
// CHECK-NEXT: [56,  62]
// TF of unigrams (counted once) and bigrams with up to 5 skips: the
// bigram (7, 8) occurs at distances 1, 3 and 6.
// CHECK: [0,  3,  1,  0,  1,  3,  1]
// IDF per row: the weight of each n-gram that occurs at all.
// CHECK:      [0,  1,  0,  0,  0,  0,  0]
// CHECK-NEXT: [0,  0,  2,  0,  4,  5,  6]
func.func @main() {
  %r = arith.constant dense<0.1> : tensor<f32>
  %t0 = arith.constant dense<0> : tensor<i64>
  %t2 = arith.constant dense<2> : tensor<i64>
  %t3 = arith.constant dense<3> : tensor<i64>
  %x = arith.constant dense<[1.0, -2.0, 3.0]> : tensor<3xf32>
  %g = arith.constant dense<[0.5, 0.25, -1.0]> : tensor<3xf32>
  %v = arith.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %h = arith.constant dense<[0.2, 0.4, 0.6]> : tensor<3xf32>

  %m:2 = call @momentum(%r, %t0, %x, %g, %v) : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %m0 = tensor.cast %m#0 : tensor<3xf32> to tensor<*xf32>
  call @print(%m0) : (tensor<*xf32>) -> ()
  %m1 = tensor.cast %m#1 : tensor<3xf32> to tensor<*xf32>
  call @print(%m1) : (tensor<*xf32>) -> ()

  %n:2 = call @nesterov(%r, %t3, %x, %g, %v) : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %n0 = tensor.cast %n#0 : tensor<3xf32> to tensor<*xf32>
  call @print(%n0) : (tensor<*xf32>) -> ()
  %n1 = tensor.cast %n#1 : tensor<3xf32> to tensor<*xf32>
  call @print(%n1) : (tensor<*xf32>) -> ()

  %a:2 = call @adagrad(%r, %t2, %x, %g, %v) : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %a0 = tensor.cast %a#0 : tensor<3xf32> to tensor<*xf32>
  call @print(%a0) : (tensor<*xf32>) -> ()
  %a1 = tensor.cast %a#1 : tensor<3xf32> to tensor<*xf32>
  call @print(%a1) : (tensor<*xf32>) -> ()

  %d:3 = call @adam(%r, %t3, %x, %g, %v, %h) : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %d0 = tensor.cast %d#0 : tensor<3xf32> to tensor<*xf32>
  call @print(%d0) : (tensor<*xf32>) -> ()
  %d1 = tensor.cast %d#1 : tensor<3xf32> to tensor<*xf32>
  call @print(%d1) : (tensor<*xf32>) -> ()
  %d2 = tensor.cast %d#2 : tensor<3xf32> to tensor<*xf32>
  call @print(%d2) : (tensor<*xf32>) -> ()

  %bx = arith.constant dense<[[[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]], [[4.0, 0.0], [-1.0, 1.0], [2.0, 2.0]]]> : tensor<2x3x2xf32>
  %bs = arith.constant dense<[1.0, 2.0, 0.5]> : tensor<3xf32>
  %bb = arith.constant dense<[0.0, 1.0, -1.0]> : tensor<3xf32>
  %bm = arith.constant dense<[0.5, 0.0, 1.0]> : tensor<3xf32>
  %bv = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %bn:3 = call @batch_norm(%bx, %bs, %bb, %bm, %bv) : (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2xf32>, tensor<3xf32>, tensor<3xf32>)
  %bn0 = tensor.cast %bn#0 : tensor<2x3x2xf32> to tensor<*xf32>
  call @print(%bn0) : (tensor<*xf32>) -> ()
  %bn1 = tensor.cast %bn#1 : tensor<3xf32> to tensor<*xf32>
  call @print(%bn1) : (tensor<*xf32>) -> ()
  %bn2 = tensor.cast %bn#2 : tensor<3xf32> to tensor<*xf32>
  call @print(%bn2) : (tensor<*xf32>) -> ()

  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %last = arith.constant dense<-1> : tensor<i64>
  %first = arith.constant dense<0> : tensor<i64>
  %c1 = call @cum_sum(%c, %last) : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  %c1_u = tensor.cast %c1 : tensor<2x3xf32> to tensor<*xf32>
  call @print(%c1_u) : (tensor<*xf32>) -> ()
  %c0 = call @cum_sum(%c, %first) : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  %c0_u = tensor.cast %c0 : tensor<2x3xf32> to tensor<*xf32>
  call @print(%c0_u) : (tensor<*xf32>) -> ()

  %rx = arith.constant dense<[[[5.0, 1.0], [20.0, 2.0]], [[30.0, 1.0], [40.0, 2.0]], [[55.0, 1.0], [60.0, 2.0]]]> : tensor<3x2x2xf32>
  %axis1 = arith.constant dense<[1]> : tensor<1xi64>
  %axism1 = arith.constant dense<[-1]> : tensor<1xi64>
  %r1 = call @reduce_sum(%rx, %axis1) : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
  %r1_u = tensor.cast %r1 : tensor<3x2xf32> to tensor<*xf32>
  call @print(%r1_u) : (tensor<*xf32>) -> ()
  %r2 = call @reduce_sum(%rx, %axism1) : (tensor<3x2x2xf32>, tensor<1xi64>) -> tensor<3x2xf32>
  %r2_u = tensor.cast %r2 : tensor<3x2xf32> to tensor<*xf32>
  call @print(%r2_u) : (tensor<*xf32>) -> ()

  %tx = arith.constant dense<[1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8]> : tensor<12xi32>
  %tf = call @tfidf(%tx) : (tensor<12xi32>) -> tensor<7xf32>
  %tf_u = tensor.cast %tf : tensor<7xf32> to tensor<*xf32>
  call @print(%tf_u) : (tensor<*xf32>) -> ()
  %ix = arith.constant dense<[[1, 1, 3, 3, 3, 7], [8, 6, 7, 5, 6, 8]]> : tensor<2x6xi64>
  %idf = call @idf_batch(%ix) : (tensor<2x6xi64>) -> tensor<2x7xf32>
  %idf_u = tensor.cast %idf : tensor<2x7xf32> to tensor<*xf32>
  call @print(%idf_u) : (tensor<*xf32>) -> ()
  return
}
