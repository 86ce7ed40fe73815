//===- Passes.td - strata conversion passes ----------------*- tablegen -*-===//
//
// Passes that lower strata's graph dialect into upstream MLIR dialects: the
// first steps of the kernel layer.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_CONVERSION_PASSES_TD
#define STRATA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGraphToLinalgPass
    : Pass<"strata-convert-graph-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower elementwise graph ops on ranked tensors to linalg";
  let description = [{
    Rewrites the graph dialect's elementwise ops whose operands and results
    are ranked tensors into `linalg.generic` ops on tensors, with `arith` and
    `math` ops in the body and `tensor.empty` for the outputs:

    - unary float ops: abs, neg, exp, log, sqrt, reciprocal, relu, sigmoid,
      tanh, erf, floor, ceil, sin, cos, and gelu (exact, via erf; the tanh
      approximation also lowers); abs, neg and relu also on signless
      integers;
    - add, sub, mul, div, max, min and pow, on floats and signless integers
      (integer div truncates; pow also takes an integer or other float
      exponent, as ONNX Pow allows);
    - equal, less, greater, less_equal and greater_equal (i1 results);
    - where, and cast between float types, between float and signless
      integer types and between signless integer types (ONNX Cast
      semantics, i1 included).

    Operands broadcast like numpy: ranks are aligned on the right, and a
    dimension of static size 1 is read at index 0 through the operand's
    indexing map. An output dimension is static when the declared result
    type or any operand has a static size other than 1 there; otherwise it
    takes its size from `tensor.dim` of the first operand that is dynamic
    there (operands of static size 1 broadcast against it).

    Assumption: a dynamic operand dimension equals the output's size at run
    time, i.e. it is never a 1 that broadcasts against a larger size, and
    several operands dynamic in one dimension are equal. (Upstream's
    tosa-to-linalg emits a run-time broadcast there; strata leaves that case
    to the later layers, which specialise on the bound input shapes.)

    Ops it does not handle (other element types, unranked tensors, other
    graph ops) are left untouched, so the pass can run on any module.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // STRATA_CONVERSION_PASSES_TD
