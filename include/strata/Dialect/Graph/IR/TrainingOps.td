//===- TrainingOps.td - training graph ops -----------------*- tablegen -*-===//
//
// The operators of ONNX's "ai.onnx.preview.training" domain: the optimizers
// Adagrad, Momentum and Adam, which update several tensors at once, and
// Gradient, the symbolic derivative of one value of the graph.
//
// The optimizers take the learning rate R and the update count T (scalars),
// then groups of n tensors each (the tensors being optimized, their
// gradients, and per-optimizer state), and return the updated tensors
// followed by the updated state, group by group.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_TRAINING_OPS_TD
#define STRATA_GRAPH_TRAINING_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"

def Graph_TrainingFloat : TensorOf<[F32, F64]>;

class Graph_OptimizerOp<string mnemonic, list<Trait> traits = []>
    : Graph_SimpleOp<mnemonic, traits> {
  let results = (outs Variadic<Graph_TrainingFloat>:$outputs);
  let hasVerifier = 1;
}

def Graph_AdagradOp : Graph_OptimizerOp<"adagrad"> {
  let summary = "one ADAGRAD step on n tensors";
  let description = [{
    Inputs: R, T, X_1..X_n, G_1..G_n (gradients), H_1..H_n (accumulated
    squared gradients). Results: the new X_1..X_n, then the new H_1..H_n.
    The effective learning rate is R / (1 + T * decay_factor).
  }];
  let arguments = (ins Graph_TrainingFloat:$r, TensorOf<[I64]>:$t,
                       Variadic<Graph_TrainingFloat>:$inputs,
                       DefaultValuedAttr<F32Attr, "1e-6f">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.0f">:$decay_factor,
                       DefaultValuedAttr<F32Attr, "0.0f">:$norm_coefficient);
}

def Graph_MomentumOp : Graph_OptimizerOp<"momentum"> {
  let summary = "one step of SGD with standard or Nesterov momentum on n tensors";
  let description = [{
    Inputs: R, T, X_1..X_n, G_1..G_n (gradients), V_1..V_n (momentums).
    Results: the new X_1..X_n, then the new V_1..V_n. `mode` is "standard"
    or "nesterov".
  }];
  let arguments = (ins Graph_TrainingFloat:$r, TensorOf<[I64]>:$t,
                       Variadic<Graph_TrainingFloat>:$inputs,
                       F32Attr:$alpha, F32Attr:$beta,
                       F32Attr:$norm_coefficient, StrAttr:$mode);
}

def Graph_AdamOp : Graph_OptimizerOp<"adam"> {
  let summary = "one Adam step on n tensors";
  let description = [{
    Inputs: R, T, X_1..X_n, G_1..G_n (gradients), V_1..V_n (accumulated
    gradients), H_1..H_n (accumulated squared gradients). Results: the new
    X_1..X_n, V_1..V_n, then H_1..H_n.
  }];
  let arguments = (ins Graph_TrainingFloat:$r, TensorOf<[I64]>:$t,
                       Variadic<Graph_TrainingFloat>:$inputs,
                       DefaultValuedAttr<F32Attr, "0.9f">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.999f">:$beta,
                       DefaultValuedAttr<F32Attr, "0.0f">:$norm_coefficient,
                       DefaultValuedAttr<F32Attr, "0.0f">:$norm_coefficient_post,
                       DefaultValuedAttr<F32Attr, "1e-6f">:$epsilon);
}

def Graph_GradientOp : Graph_Op<"gradient", [Pure, AttrSizedOperandSegments]> {
  let summary = "the gradient of `y` with respect to each of `xs`";
  let description = [{
    `xs` (differentiated) and `zs` (not differentiated) are values of the
    graph that, together, determine `y` (ONNX's attributes name them). The
    op evaluates the derivative of the computation from them to `y` at the
    point where `xs` and `zs` take the values `inputs` (one per value of
    `xs`, then one per value of `zs`, in order; usually the values
    themselves). Result i is dy/dxs[i], with the shape of xs[i].
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs,
                       Variadic<AnyTensor>:$xs,
                       Variadic<AnyTensor>:$zs,
                       AnyTensor:$y);
  let results = (outs Variadic<TensorOf<[F16, F32, F64]>>:$outputs);
  let assemblyFormat = [{
    `of` $y `wrt` `(` $xs `)` (`given` `(` $zs^ `)`)? `at` `(` $inputs `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_TRAINING_OPS_TD
