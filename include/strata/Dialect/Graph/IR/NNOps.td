//===- NNOps.td - matmul, convolution, pooling, norms ------*- tablegen -*-===//

#ifndef STRATA_GRAPH_NN_OPS_TD
#define STRATA_GRAPH_NN_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"

def Graph_MatMulOp : Graph_SimpleOp<"matmul"> {
  let summary = "numpy matmul: batched, broadcasting the batch dimensions";
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_GemmOp : Graph_Op<"gemm", [Pure]> {
  let summary = "alpha * op(A) @ op(B) + beta * C (C broadcasts)";
  let arguments = (ins AnyTensor:$a, AnyTensor:$b, Optional<AnyTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<I64Attr, "0">:$transA,
                       DefaultValuedAttr<I64Attr, "0">:$transB);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $a `,` $b (`bias` $c^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_ConvOp : Graph_Op<"conv", [Pure]> {
  let summary = "N-d convolution (ONNX Conv)";
  let description = [{
    Input NCHW..., weight (M, C/group, k...). `pads` holds the begin pads of
    every spatial axis then the end pads. The importer resolves `auto_pad`
    into explicit `pads` when the input shape is known.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$weight,
                       Optional<AnyTensor>:$bias,
                       DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_LayerNormOp : Graph_Op<"layer_norm", [Pure]> {
  let summary = "layer normalization over the axes from `axis` to the last";
  let arguments = (ins AnyTensor:$input, AnyTensor:$scale,
                       Optional<AnyTensor>:$bias,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs AnyTensor:$output, AnyTensor:$mean, AnyTensor:$inv_std_dev);
  let assemblyFormat = [{
    $input `,` $scale (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_NN_OPS_TD
