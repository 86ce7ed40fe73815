//===- ControlFlowOps.td - If, Loop, Scan ------------------*- tablegen -*-===//
//
// ONNX's control-flow operators with their subgraphs as regions. Regions may
// use values defined outside them (ONNX subgraphs capture outer names), so
// the ops are not IsolatedFromAbove.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_CONTROL_FLOW_OPS_TD
#define STRATA_GRAPH_CONTROL_FLOW_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Graph_YieldOp : Op<Graph_Dialect, "yield",
    [Pure, Terminator, ReturnLike,
     ParentOneOf<["IfOp", "LoopOp", "ScanOp"]>]> {
  let summary = "returns a subgraph's outputs to the enclosing op";
  let arguments = (ins Variadic<Graph_AnyValue>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Graph_IfOp : Graph_Op<"if", [RecursiveMemoryEffects, NoRegionArguments]> {
  let summary = "runs one of two subgraphs (ONNX If)";
  let arguments = (ins TensorOf<[I1]>:$condition);
  let results = (outs Variadic<Graph_AnyValue>:$outputs);
  let regions = (region SizedRegion<1>:$then_branch,
                        SizedRegion<1>:$else_branch);
  let assemblyFormat = [{
    $condition `:` type($condition) (`->` type($outputs)^)? $then_branch
    `else` $else_branch attr-dict
  }];
  let hasVerifier = 1;
  // A condition known at compile time (an exporter's `if x.size(1) != ...`
  // once the shapes are bound) inlines the branch it takes.
  let hasCanonicalizer = 1;
}

// A run-time If as dataflow, in the style of TensorFlow's Switch and Merge:
// strata-run-time-branches moves each branch's ops before the If, passes
// every value a branch reads from outside it through a guard of that
// branch, and merges each pair of yielded values. The runtime skips a guard
// whose condition is not `expect`, and with it every step that reads what a
// skipped step would have written (docs/runtime.md, "Run-time branches").
def Graph_GuardOp : Graph_Op<"guard", [Pure]> {
  let summary = "`value` inside the branch taken when `condition` is `expect`";
  let arguments = (ins TensorOf<[I1]>:$condition, AnyTensor:$value,
                       BoolAttr:$expect);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $condition `,` $value attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferResultTypes(
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(getValue().getType());
      return ::mlir::success();
    }
  }];
}

def Graph_MergeOp : Graph_Op<"merge", [Pure]> {
  let summary = "the value of the branch that ran: `then_value` when "
                "`condition` is true, else `else_value`";
  let arguments = (ins TensorOf<[I1]>:$condition, AnyTensor:$then_value,
                       AnyTensor:$else_value);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $condition `,` $then_value `,` $else_value attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferResultTypes(
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      ::mlir::Type type = unionTypes(getThenValue().getType(),
                                     getElseValue().getType());
      if (!type)
        return ::mlir::failure();
      types.push_back(type);
      return ::mlir::success();
    }
  }];
}

def Graph_LoopOp : Graph_Op<"loop",
    [RecursiveMemoryEffects, AttrSizedOperandSegments]> {
  let summary = "a counted and/or conditional loop (ONNX Loop)";
  let description = [{
    The body's block arguments are (iteration number: tensor<i64>,
    condition: tensor<i1>, loop-carried values...). It yields (condition,
    loop-carried values..., scan outputs...). The results are the final
    loop-carried values followed by each scan output stacked along a new
    leading axis.
  }];
  let arguments = (ins Optional<AnyTensor>:$max_trip_count,
                       Optional<AnyTensor>:$condition,
                       Variadic<Graph_AnyValue>:$initial);
  let results = (outs Variadic<Graph_AnyValue>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`max` $max_trip_count^ `:` type($max_trip_count))?
    (`while` $condition^ `:` type($condition))?
    (`carried` `(` $initial^ `:` type($initial) `)`)?
    (`->` type($outputs)^)? $body attr-dict
  }];
  let hasVerifier = 1;
}

def Graph_ScanOp : Graph_Op<"scan", [RecursiveMemoryEffects]> {
  let summary = "iterates a subgraph over slices of its scan inputs (ONNX Scan)";
  let description = [{
    Operands are the initial states followed by `num_scan_inputs` scan
    inputs. The body takes (states..., one slice of each scan input...) and
    yields (states..., one slice of each scan output...). Results are the
    final states followed by the stacked scan outputs.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$num_scan_inputs,
                       OptionalAttr<DenseI64ArrayAttr>:$scan_input_axes,
                       OptionalAttr<DenseI64ArrayAttr>:$scan_input_directions,
                       OptionalAttr<DenseI64ArrayAttr>:$scan_output_axes,
                       OptionalAttr<DenseI64ArrayAttr>:$scan_output_directions);
  let results = (outs Variadic<AnyTensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body
  }];
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_CONTROL_FLOW_OPS_TD
