//===- ReductionOps.td - reductions and normalizing ops ----*- tablegen -*-===//
//
// Reductions take their axes as an attribute: the importer requires ONNX's
// axes input (opset 13/18) to be a constant and moves it here, so later
// layers never see data-dependent reduction axes.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_REDUCTION_OPS_TD
#define STRATA_GRAPH_REDUCTION_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"

foreach p = [["reduce_sum", "ReduceSum"], ["reduce_mean", "ReduceMean"],
             ["reduce_max", "ReduceMax"], ["reduce_min", "ReduceMin"],
             ["reduce_prod", "ReduceProd"], ["reduce_l1", "ReduceL1"],
             ["reduce_l2", "ReduceL2"], ["reduce_log_sum", "ReduceLogSum"],
             ["reduce_log_sum_exp", "ReduceLogSumExp"],
             ["reduce_sum_square", "ReduceSumSquare"]] in {
  def "Graph_" # p[1] # "Op" : Graph_ReduceOp<p[0]> {
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

def Graph_CumSumOp : Graph_SimpleOp<"cum_sum"> {
  let summary = "cumulative sum along `axis`";
  let arguments = (ins AnyTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$exclusive,
                       DefaultValuedAttr<I64Attr, "0">:$reverse);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_REDUCTION_OPS_TD
