//===- ReductionOps.td - reductions and normalizing ops ----*- tablegen -*-===//
//
// Reductions take their axes as an attribute in canonical form: the importer
// moves a constant ONNX axes input (opset 13/18) there, and canonicalization
// does the same for axes that become constant later. Axes computed at run
// time stay an operand (`dynamic_axes`); the result rank is then known only
// with keepdims = 1 (or from the number of axes). Later layers can rely on
// the attribute whenever the axes are constant. CumSum's axis works the
// same way.
// The losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) live here
// as well: they reduce over the class dimension and the batch.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_REDUCTION_OPS_TD
#define STRATA_GRAPH_REDUCTION_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"

// Reductions over `axes` (empty: all axes, unless noop_with_empty_axes), or
// over an optional `dynamic_axes` operand for axes only known at run time.
// At most one of `axes` and `dynamic_axes` is present. ReductionOps.cpp
// defines shape inference, the verifier and the canonicalization that moves
// a constant `dynamic_axes` into `axes`.
class Graph_ReduceAxesOp<string mnemonic> : Graph_Op<mnemonic, [Pure]> {
  let arguments = (ins AnyTensor:$input,
                       Optional<TensorOf<[I64]>>:$dynamic_axes,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       DefaultValuedAttr<I64Attr, "1">:$keepdims,
                       DefaultValuedAttr<I64Attr, "0">:$noop_with_empty_axes);
  let results = (outs AnyTensor:$output);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [
    // The attribute form, which is what the graph layer normally holds.
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$input,
                   "::mlir::DenseI64ArrayAttr":$axes,
                   "::mlir::IntegerAttr":$keepdims,
                   "::mlir::IntegerAttr":$noop_with_empty_axes), [{
      build($_builder, $_state, output, input, ::mlir::Value(), axes,
            keepdims, noop_with_empty_axes);
    }]>
  ];
}

foreach p = [["reduce_sum", "ReduceSum"], ["reduce_mean", "ReduceMean"],
             ["reduce_max", "ReduceMax"], ["reduce_min", "ReduceMin"],
             ["reduce_prod", "ReduceProd"], ["reduce_l1", "ReduceL1"],
             ["reduce_l2", "ReduceL2"], ["reduce_log_sum", "ReduceLogSum"],
             ["reduce_log_sum_exp", "ReduceLogSumExp"],
             ["reduce_sum_square", "ReduceSumSquare"]] in {
  def "Graph_" # p[1] # "Op" : Graph_ReduceAxesOp<p[0]> {
    let summary = p[0] # " over `axes` (all axes when absent)";
  }
}

class Graph_ArgReduceOp<string mnemonic> : Graph_SimpleOp<mnemonic> {
  let arguments = (ins AnyTensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedAttr<I64Attr, "1">:$keepdims,
                       DefaultValuedAttr<I64Attr, "0">:$select_last_index);
  let results = (outs TensorOf<[I64]>:$output);
  let hasVerifier = 1;
}
def Graph_ArgMaxOp : Graph_ArgReduceOp<"arg_max"> {
  let summary = "index of the largest element along `axis`";
}
def Graph_ArgMinOp : Graph_ArgReduceOp<"arg_min"> {
  let summary = "index of the smallest element along `axis`";
}

class Graph_AxisOp<string mnemonic, int defaultAxis>
    : Graph_SimpleOp<mnemonic> {
  let arguments = (ins AnyTensor:$input,
                       DefaultValuedAttr<I64Attr, "" # defaultAxis>:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}
def Graph_SoftmaxOp : Graph_AxisOp<"softmax", -1> {
  let summary = "softmax along `axis` (opset 13 semantics)";
}
def Graph_LogSoftmaxOp : Graph_AxisOp<"log_softmax", -1> {
  let summary = "log of softmax along `axis` (opset 13 semantics)";
}
def Graph_HardmaxOp : Graph_AxisOp<"hardmax", -1> {
  let summary = "one-hot of the first maximum along `axis`";
}

def Graph_CumSumOp : Graph_Op<"cum_sum", [Pure]> {
  let summary = "cumulative sum along `axis`";
  let description = [{
    The axis is the `axis` attribute, or, when ONNX's axis input is computed
    at run time, the scalar `dynamic_axis` operand (exactly one is present;
    canonicalization turns a constant `dynamic_axis` into the attribute).
  }];
  let arguments = (ins AnyTensor:$input,
                       Optional<TensorOf<[I32, I64]>>:$dynamic_axis,
                       OptionalAttr<I64Attr>:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$exclusive,
                       DefaultValuedAttr<I64Attr, "0">:$reverse);
  let results = (outs AnyTensor:$output);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Graph_NegativeLogLikelihoodLossOp
    : Graph_Op<"negative_log_likelihood_loss", [Pure]> {
  let summary = "negative log likelihood loss (ONNX NegativeLogLikelihoodLoss)";
  let description = [{
    `input` is (N, C) or (N, C, d1, ..., dk) log-probabilities, `target`
    (N) or (N, d1, ..., dk) class indices and `weight` optional per-class
    weights (C). Targets equal to `ignore_index` contribute nothing.
    `reduction` is "none" (the result has the target's shape), "sum" or
    "mean" (a scalar; "mean" divides by the sum of the applied weights).
  }];
  let arguments = (ins AnyTensor:$input, TensorOf<[I32, I64]>:$target,
                       Optional<AnyTensor>:$weight,
                       OptionalAttr<I64Attr>:$ignore_index,
                       DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
  let results = (outs AnyTensor:$loss);
  let assemblyFormat = [{
    $input `,` $target (`weight` $weight^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_SoftmaxCrossEntropyLossOp
    : Graph_Op<"softmax_cross_entropy_loss", [Pure]> {
  let summary = "softmax cross-entropy loss (ONNX SoftmaxCrossEntropyLoss)";
  let description = [{
    The negative log likelihood loss of log_softmax(`scores`) along the
    class dimension (1). `scores` is (N, C) or (N, C, d1, ..., dk), `labels`
    (N) or (N, d1, ..., dk), `weights` optional per-class weights (C).
    Results: the loss (labels' shape for reduction "none", else a scalar)
    and the log probabilities (the scores' shape).
  }];
  let arguments = (ins AnyTensor:$scores, TensorOf<[I32, I64]>:$labels,
                       Optional<AnyTensor>:$weights,
                       OptionalAttr<I64Attr>:$ignore_index,
                       DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
  let results = (outs AnyTensor:$output, AnyTensor:$log_prob);
  let assemblyFormat = [{
    $scores `,` $labels (`weights` $weights^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_REDUCTION_OPS_TD
