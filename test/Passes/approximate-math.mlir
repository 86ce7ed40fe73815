// RUN: strata-opt %s -split-input-file --strata-approximate-math | FileCheck %s
//
// strata-approximate-math (Passes.cpp): in CPU kernels, exp, expm1, log,
// log1p, log2, tanh, erf and erfc become polynomials in plain arithmetic
// (MLIR's math approximations), which LLVM vectorizes, instead of libm
// calls, which stop its loop vectorizer; f16 and bf16 are computed in f32.
// Other math functions (sine and cosine among them) stay. Their accuracy is
// checked by test/Compile/math.test; here, the IR: the math op gone, the
// polynomial's arithmetic in its place, the ops the pass leaves kept.

// exp(x) = 2^n * e^r: n = floor(x * log2(e) + 1/2), e^r a polynomial in r,
// 2^n built in the exponent bits.
// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: math.fma %{{.*}}, %[[LOG2E]], %[[HALF]] : f32
// CHECK: math.floor
// CHECK-COUNT-5: math.fma
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.shli
// CHECK: %[[TWO_N:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[R:.*]] = arith.mulf %{{.*}}, %[[TWO_N]] : f32
// CHECK: return %[[R]] : f32
// CHECK-NOT: math.exp
func.func @exp(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// -----

// tanh(x): x clamped to [-7.99881172, 7.99881172], then a rational
// function (an odd polynomial over an even one); x itself for |x| < 4e-4.
// CHECK-LABEL: func.func @tanh
// CHECK-NOT: math.tanh
// CHECK-DAG: %[[SMALL:.*]] = arith.constant 4.000000e-04 : f32
// CHECK-DAG: %[[HI:.*]] = arith.constant 7.99881172 : f32
// CHECK: %[[LT:.*]] = arith.cmpf ult, %arg0, %[[HI]] : f32
// CHECK: arith.select %[[LT]], %arg0, %[[HI]] : f32
// CHECK: %[[ABS:.*]] = math.absf %arg0 : f32
// CHECK: %[[TINY:.*]] = arith.cmpf olt, %[[ABS]], %[[SMALL]] : f32
// CHECK-COUNT-6: math.fma
// CHECK: %[[P:.*]] = arith.mulf
// CHECK-COUNT-3: math.fma
// CHECK: %[[Q:.*]] = arith.divf %[[P]], %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.select %[[TINY]], %{{.*}}, %[[Q]] : f32
// CHECK: return %[[R]] : f32
// CHECK-NOT: math.tanh
func.func @tanh(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// -----

// erf of an f16: extended to f32, a rational function of |x| (its
// coefficients chosen by the range of |x|; 2/sqrt(pi) = 1.12837911 near 0),
// the sign restored, then truncated back to f16.
// CHECK-LABEL: func.func @erf_f16
// CHECK-NOT: math.erf
// CHECK-DAG: arith.constant 1.12837911 : f32
// CHECK: %[[X:.*]] = arith.extf %arg0 : f16 to f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[X]]
// CHECK: math.fma
// CHECK: arith.divf
// CHECK: %[[S:.*]] = arith.select %[[NEG]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK: return %[[R]] : f16
// CHECK-NOT: math.erf
func.func @erf_f16(%x: f16) -> f16 {
  %0 = math.erf %x : f16
  return %0 : f16
}

// -----

// log1p(x) as log(1 + x) (exponent and mantissa split out of the bits, a
// polynomial in the mantissa, n * ln 2 added), corrected by x / ((1 + x) - 1).
// CHECK-LABEL: func.func @log1p
// CHECK-NOT: math.log
// CHECK-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[U:.*]] = arith.addf %arg0, %[[ONE]] : f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: math.fma %{{.*}}, %[[LN2]], %{{.*}} : f32
// CHECK: arith.subf %[[U]], %[[ONE]] : f32
// CHECK: %[[R:.*]] = arith.select
// CHECK: return %[[R]] : f32
// CHECK-NOT: math.log
func.func @log1p(%x: f32) -> f32 {
  %0 = math.log1p %x : f32
  return %0 : f32
}

// -----

// Functions the pass does not approximate stay as they are (sine and
// cosine would lose accuracy at the large angles of rotary embeddings).
// CHECK-LABEL: func.func @not_approximated
// CHECK-NEXT: %[[S:.*]] = math.sin %arg0 : f32
// CHECK-NEXT: %[[C:.*]] = math.cos %arg0 : f32
// CHECK-NEXT: %[[Q:.*]] = math.sqrt %arg0 : f32
// CHECK-NEXT: %[[E:.*]] = math.exp2 %arg0 : f32
// CHECK-NEXT: return %[[S]], %[[C]], %[[Q]], %[[E]]
func.func @not_approximated(%x: f32) -> (f32, f32, f32, f32) {
  %0 = math.sin %x : f32
  %1 = math.cos %x : f32
  %2 = math.sqrt %x : f32
  %3 = math.exp2 %x : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// -----

// Vector math (a kernel that LLVM's vectorizer does not have to find): the
// approximation builds vector ops, whose dialect the pass loads itself.
// CHECK-LABEL: func.func @tanh_vector
// CHECK-NOT: math.tanh
// CHECK: arith.cmpf {{.*}} : vector<8xf32>
// CHECK: return {{.*}} : vector<8xf32>
func.func @tanh_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.tanh %x : vector<8xf32>
  return %0 : vector<8xf32>
}
