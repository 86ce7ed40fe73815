//===- TensorOps.td - shape and data-movement graph ops ----*- tablegen -*-===//
//
// Ops that move or reshape data. Where ONNX passes a shape or index list as a
// tensor input that may be computed at run time (Reshape's shape, Slice's
// starts), the op keeps it as an operand; canonicalization folds constant
// ones.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_TENSOR_OPS_TD
#define STRATA_GRAPH_TENSOR_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Graph_ConstantOp : Graph_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "output"]>]> {
  let summary = "a constant tensor (weights, ONNX Constant nodes)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
      build($_builder, $_state, value.getType(), value);
    }]>
  ];
}

def Graph_ReshapeOp : Graph_SimpleOp<"reshape"> {
  let summary = "reshape to `shape` (ONNX: 0 copies a dimension, -1 infers)";
  let arguments = (ins AnyTensor:$data, TensorOf<[I64]>:$shape,
                       DefaultValuedAttr<I64Attr, "0">:$allowzero);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_SimpleOp<"transpose"> {
  let summary = "permute dimensions (`perm` absent: reverse them)";
  let arguments = (ins AnyTensor:$input, OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ConcatOp : Graph_SimpleOp<"concat"> {
  let summary = "concatenate along `axis`";
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_GatherOp : Graph_SimpleOp<"gather"> {
  let summary = "gather slices of `data` along `axis` at `indices`";
  let arguments = (ins AnyTensor:$data, TensorOf<[I32, I64]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_TENSOR_OPS_TD
