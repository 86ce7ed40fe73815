//===- NNOps.td - matmul, convolution, pooling, norms ------*- tablegen -*-===//
//
// The neural-network ops: matrix products, convolutions and pooling,
// normalizations, recurrent networks, quantization, and the sampling,
// detection and signal-processing ops. Attribute names and defaults are
// ONNX's; where ONNX has optional outputs the op always produces them.
//
//===----------------------------------------------------------------------===//

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

def Graph_ConvChannelsLastOp : Graph_Op<"conv_channels_last", [Pure]> {
  let summary = "N-d convolution on channels-last tensors (the cuda target's "
                "cuDNN convolutions)";
  let description = [{
    Input [N, D..., C], weight [M, k..., C/group] (each filter's kernel
    offsets row-major, its channels innermost), optional bias [M]; the result
    is [N, D_out..., M]. Not an ONNX op: strata-conv-to-gemm makes it from a
    graph.conv whose step cuDNN takes ("cudnn.conv", docs/gpu.md), so every
    attribute is explicit. `pads` holds the begin pads of every spatial axis,
    then the end pads. It has no generated lowering.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$weight,
                       Optional<AnyTensor>:$bias,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<I64Attr, "1">:$group);
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

def Graph_ConvTransposeOp : Graph_Op<"conv_transpose", [Pure]> {
  let summary = "N-d transposed convolution (ONNX ConvTranspose)";
  let description = [{
    Input (N, C, D...), weight (C, M/group, k...). The output spatial size is
    `output_shape` when given, otherwise
    stride * (in - 1) + output_padding + dilation * (k - 1) + 1 - pads
    (with `auto_pad` SAME_*: in * stride).
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$weight,
                       Optional<AnyTensor>:$bias,
                       DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$output_padding,
                       OptionalAttr<DenseI64ArrayAttr>:$output_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_ConvIntegerOp : Graph_Op<"conv_integer", [Pure, AttrSizedOperandSegments]> {
  let summary = "integer convolution with zero points, accumulating in i32";
  let arguments = (ins TensorOf<[I8, UI8]>:$input, TensorOf<[I8, UI8]>:$weight,
                       Optional<TensorOf<[I8, UI8]>>:$input_zero_point,
                       Optional<TensorOf<[I8, UI8]>>:$weight_zero_point,
                       DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs TensorOf<[I32]>:$output);
  let assemblyFormat = [{
    $input `,` $weight (`input_zero_point` $input_zero_point^)?
    (`weight_zero_point` $weight_zero_point^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_QLinearConvOp : Graph_Op<"qlinear_conv", [Pure]> {
  let summary = "quantized convolution (ONNX QLinearConv)";
  let description = [{
    Scales and zero points are scalars, or 1-D per output channel for the
    weight. The optional bias is i32, one value per output channel.
  }];
  let arguments = (ins TensorOf<[I8, UI8]>:$input, TensorOf<[F32]>:$input_scale,
                       TensorOf<[I8, UI8]>:$input_zero_point,
                       TensorOf<[I8, UI8]>:$weight, TensorOf<[F32]>:$weight_scale,
                       TensorOf<[I8, UI8]>:$weight_zero_point,
                       TensorOf<[F32]>:$output_scale,
                       TensorOf<[I8, UI8]>:$output_zero_point,
                       Optional<TensorOf<[I32]>>:$bias,
                       DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs TensorOf<[I8, UI8]>:$output);
  let assemblyFormat = [{
    $input `,` $input_scale `,` $input_zero_point `,` $weight `,`
    $weight_scale `,` $weight_zero_point `,` $output_scale `,`
    $output_zero_point (`bias` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// Windowed pooling over the spatial axes of an (N, C, D...) input. `pads`
// holds the begin pads of every spatial axis then the end pads; the importer
// resolves `auto_pad` into `pads` when the input shape is known.
class Graph_PoolOp<string mnemonic, dag extraArgs, dag outs>
    : Graph_SimpleOp<mnemonic> {
  let arguments = !con((ins AnyTensor:$input,
                       DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                       DefaultValuedAttr<I64Attr, "0">:$ceil_mode,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       DenseI64ArrayAttr:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides), extraArgs);
  let results = outs;
  let hasVerifier = 1;
}

def Graph_MaxPoolOp : Graph_PoolOp<"max_pool",
    (ins DefaultValuedAttr<I64Attr, "0">:$storage_order),
    (outs AnyTensor:$output, TensorOf<[I64]>:$indices)> {
  let summary = "max pooling; `indices` are flattened input positions";
}

def Graph_AveragePoolOp : Graph_PoolOp<"average_pool",
    (ins DefaultValuedAttr<I64Attr, "0">:$count_include_pad),
    (outs AnyTensor:$output)> {
  let summary = "average pooling (padding counted when count_include_pad)";
}

def Graph_LpPoolOp : Graph_PoolOp<"lp_pool",
    (ins DefaultValuedAttr<I64Attr, "2">:$p), (outs AnyTensor:$output)> {
  let summary = "Lp-norm pooling";
}

// Pooling over all spatial axes: (N, C, D...) -> (N, C, 1...).
class Graph_GlobalPoolOp<string mnemonic, dag extraArgs = (ins)>
    : Graph_SimpleOp<mnemonic, [SameOperandsAndResultElementType]> {
  let arguments = !con((ins AnyTensor:$input), extraArgs);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_GlobalAveragePoolOp : Graph_GlobalPoolOp<"global_average_pool"> {
  let summary = "mean over all spatial axes";
}
def Graph_GlobalMaxPoolOp : Graph_GlobalPoolOp<"global_max_pool"> {
  let summary = "max over all spatial axes";
}
def Graph_GlobalLpPoolOp : Graph_GlobalPoolOp<"global_lp_pool",
    (ins DefaultValuedAttr<I64Attr, "2">:$p)> {
  let summary = "Lp norm over all spatial axes";
}

def Graph_MaxUnpoolOp : Graph_Op<"max_unpool", [Pure]> {
  let summary = "scatters pooled values back to the positions in `indices`";
  let description = [{
    The output spatial size is `output_shape` (a constant or computed full
    shape) when given, otherwise (in - 1) * stride + kernel - pads.
  }];
  let arguments = (ins AnyTensor:$input, TensorOf<[I64]>:$indices,
                       Optional<TensorOf<[I64]>>:$output_shape,
                       DenseI64ArrayAttr:$kernel_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $input `,` $indices (`output_shape` $output_shape^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_MaxRoiPoolOp : Graph_SimpleOp<"max_roi_pool"> {
  let summary = "max pooling of regions (rois: (R, 5) = batch, x1, y1, x2, y2)";
  let arguments = (ins AnyTensor:$input, AnyTensor:$rois,
                       DenseI64ArrayAttr:$pooled_shape,
                       DefaultValuedAttr<F32Attr, "1.0">:$spatial_scale);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_RoiAlignOp : Graph_SimpleOp<"roi_align"> {
  let summary = "bilinear region pooling (rois: (R, 4), batch_indices: (R))";
  let arguments = (ins AnyTensor:$input, AnyTensor:$rois,
                       TensorOf<[I64]>:$batch_indices,
                       DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode,
                       DefaultValuedAttr<StrAttr, "\"avg\"">:$mode,
                       DefaultValuedAttr<I64Attr, "1">:$output_height,
                       DefaultValuedAttr<I64Attr, "1">:$output_width,
                       DefaultValuedAttr<I64Attr, "0">:$sampling_ratio,
                       DefaultValuedAttr<F32Attr, "1.0">:$spatial_scale);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

def Graph_LRNOp : Graph_SimpleOp<"lrn", [SameOperandsAndResultType]> {
  let summary = "local response normalization across `size` channels";
  let arguments = (ins AnyTensor:$input,
                       DefaultValuedAttr<F32Attr, "0.0001">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.75">:$beta,
                       DefaultValuedAttr<F32Attr, "1.0">:$bias,
                       I64Attr:$size);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_BatchNormOp : Graph_SimpleOp<"batch_norm"> {
  let summary = "batch normalization over axis 1 (ONNX BatchNormalization)";
  let description = [{
    Inference mode (training_mode = 0) normalizes with `input_mean` and
    `input_var`, and `running_mean`/`running_var` equal them. Training mode
    normalizes with the batch statistics and updates the running ones with
    `momentum`.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$scale, AnyTensor:$bias,
                       AnyTensor:$input_mean, AnyTensor:$input_var,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.9">:$momentum,
                       DefaultValuedAttr<I64Attr, "0">:$training_mode);
  let results = (outs AnyTensor:$output, AnyTensor:$running_mean,
                      AnyTensor:$running_var);
  let hasVerifier = 1;
}

def Graph_InstanceNormOp : Graph_SimpleOp<"instance_norm"> {
  let summary = "normalizes each (sample, channel) over the spatial axes";
  let arguments = (ins AnyTensor:$input, AnyTensor:$scale, AnyTensor:$bias,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_GroupNormOp : Graph_SimpleOp<"group_norm"> {
  let summary = "normalizes each of `num_groups` channel groups per sample";
  let description = [{
    `scale` and `bias` have one entry per group (ONNX opset 18) or one per
    channel (opset 21); when the counts are equal the two agree.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$scale, AnyTensor:$bias,
                       I64Attr:$num_groups,
                       DefaultValuedAttr<F32Attr, "1e-5">:$epsilon);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_MeanVarianceNormOp : Graph_SimpleOp<"mean_variance_norm",
    [SameOperandsAndResultType]> {
  let summary = "(X - mean(X)) / sqrt(var(X)) over `axes`";
  let arguments = (ins AnyTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Recurrent networks
//===----------------------------------------------------------------------===//

// ONNX RNN/GRU/LSTM. X is (seq, batch, input) (layout 1: batch first); W is
// (dirs, gates * hidden, input), R (dirs, gates * hidden, hidden), B (dirs,
// 2 * gates * hidden). Y is (seq, dirs, batch, hidden) (layout 1: (batch,
// seq, dirs, hidden)); Y_h and Y_c are (dirs, batch, hidden) (layout 1:
// (batch, dirs, hidden)). All results are produced; ONNX's optional outputs
// just go unused.
class Graph_RecurrentOp<string mnemonic, dag extraOperands, dag extraAttrs,
                        dag outs, string extraFormat>
    : Graph_Op<mnemonic, [Pure, AttrSizedOperandSegments]> {
  let arguments = !con(
      (ins AnyTensor:$input, AnyTensor:$weight, AnyTensor:$recurrence,
           Optional<AnyTensor>:$bias,
           Optional<TensorOf<[I32]>>:$sequence_lens,
           Optional<AnyTensor>:$initial_h),
      extraOperands,
      (ins OptionalAttr<DenseF32ArrayAttr>:$activation_alpha,
           OptionalAttr<DenseF32ArrayAttr>:$activation_beta,
           OptionalAttr<StrArrayAttr>:$activations,
           OptionalAttr<F32Attr>:$clip,
           DefaultValuedAttr<StrAttr, "\"forward\"">:$direction,
           I64Attr:$hidden_size,
           DefaultValuedAttr<I64Attr, "0">:$layout),
      extraAttrs);
  let results = outs;
  let assemblyFormat = !strconcat([{
    $input `,` $weight `,` $recurrence (`bias` $bias^)?
    (`sequence_lens` $sequence_lens^)? (`initial_h` $initial_h^)?
  }], extraFormat, [{ attr-dict `:` functional-type(operands, results) }]);
  let hasVerifier = 1;
}

def Graph_RNNOp : Graph_RecurrentOp<"rnn", (ins), (ins),
    (outs AnyTensor:$y, AnyTensor:$y_h), ""> {
  let summary = "simple recurrent network (one gate, default activation Tanh)";
}

def Graph_GRUOp : Graph_RecurrentOp<"gru", (ins),
    (ins DefaultValuedAttr<I64Attr, "0">:$linear_before_reset),
    (outs AnyTensor:$y, AnyTensor:$y_h), ""> {
  let summary = "gated recurrent unit (gates z, r, h)";
}

def Graph_LSTMOp : Graph_RecurrentOp<"lstm",
    (ins Optional<AnyTensor>:$initial_c, Optional<AnyTensor>:$peepholes),
    (ins DefaultValuedAttr<I64Attr, "0">:$input_forget),
    (outs AnyTensor:$y, AnyTensor:$y_h, AnyTensor:$y_c),
    "(`initial_c` $initial_c^)? (`peepholes` $peepholes^)?"> {
  let summary = "long short-term memory (gates i, o, f, c; peepholes (dirs, 3 * hidden))";
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Graph_EinsumOp : Graph_SimpleOp<"einsum"> {
  let summary = "Einstein summation over the operands (ONNX Einsum)";
  let description = [{
    `equation` is "term,term,...[->term]"; a term is letters and at most one
    "..." (broadcast dimensions). Without "->" the output holds the letters
    that appear once, in alphabetical order, after the broadcast dimensions.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs, StrAttr:$equation);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_DetOp : Graph_SimpleOp<"det", [SameOperandsAndResultElementType]> {
  let summary = "determinant of the square matrices in the last two axes";
  let arguments = (ins AnyTensor:$input);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_MatMulIntegerOp : Graph_Op<"matmul_integer", [Pure, AttrSizedOperandSegments]> {
  let summary = "integer matmul with zero points, accumulating in i32";
  let arguments = (ins TensorOf<[I8, UI8]>:$lhs, TensorOf<[I8, UI8]>:$rhs,
                       Optional<TensorOf<[I8, UI8]>>:$lhs_zero_point,
                       Optional<TensorOf<[I8, UI8]>>:$rhs_zero_point);
  let results = (outs TensorOf<[I32]>:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs (`lhs_zero_point` $lhs_zero_point^)?
    (`rhs_zero_point` $rhs_zero_point^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_QLinearMatMulOp : Graph_SimpleOp<"qlinear_matmul"> {
  let summary = "quantized matmul (ONNX QLinearMatMul)";
  let arguments = (ins TensorOf<[I8, UI8]>:$lhs, TensorOf<[F32]>:$lhs_scale,
                       TensorOf<[I8, UI8]>:$lhs_zero_point,
                       TensorOf<[I8, UI8]>:$rhs, TensorOf<[F32]>:$rhs_scale,
                       TensorOf<[I8, UI8]>:$rhs_zero_point,
                       TensorOf<[F32]>:$output_scale,
                       TensorOf<[I8, UI8]>:$output_zero_point);
  let results = (outs TensorOf<[I8, UI8]>:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

def Graph_QuantizeLinearOp : Graph_Op<"quantize_linear", [Pure]> {
  let summary = "saturate(round(x / scale) + zero_point) to i8 or ui8";
  let description = [{
    `scale` and `zero_point` are scalars (per tensor) or 1-D along `axis`
    (per axis). Without a zero point the result is ui8 with zero point 0.
  }];
  let arguments = (ins TensorOf<[F32, I32]>:$input, TensorOf<[F32]>:$scale,
                       Optional<TensorOf<[I8, UI8]>>:$zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs TensorOf<[I8, UI8]>:$output);
  let assemblyFormat = [{
    $input `,` $scale (`zero_point` $zero_point^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_DequantizeLinearOp : Graph_Op<"dequantize_linear", [Pure]> {
  let summary = "(x - zero_point) * scale";
  let arguments = (ins TensorOf<[I8, UI8, I32]>:$input, TensorOf<[F32]>:$scale,
                       Optional<TensorOf<[I8, UI8, I32]>>:$zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs TensorOf<[F32]>:$output);
  let assemblyFormat = [{
    $input `,` $scale (`zero_point` $zero_point^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_DynamicQuantizeLinearOp : Graph_SimpleOp<"dynamic_quantize_linear"> {
  let summary = "quantizes to ui8 with a scale and zero point from the data range";
  let arguments = (ins TensorOf<[F32]>:$input);
  let results = (outs TensorOf<[UI8]>:$output, TensorOf<[F32]>:$scale,
                      TensorOf<[UI8]>:$zero_point);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Sampling, detection, signal processing
//===----------------------------------------------------------------------===//

def Graph_GridSampleOp : Graph_SimpleOp<"grid_sample"> {
  let summary = "samples (N, C, D...) at the normalized grid (N, D_out..., r-2)";
  let arguments = (ins AnyTensor:$input, AnyTensor:$grid,
                       DefaultValuedAttr<I64Attr, "0">:$align_corners,
                       DefaultValuedAttr<StrAttr, "\"bilinear\"">:$mode,
                       DefaultValuedAttr<StrAttr, "\"zeros\"">:$padding_mode);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_NonMaxSuppressionOp : Graph_Op<"non_max_suppression",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "selects boxes by score, dropping overlapping ones";
  let description = [{
    boxes (batch, boxes, 4), scores (batch, classes, boxes). The result holds
    one (batch, class, box) row per selected box; how many is known only at
    run time, so its first dimension is dynamic.
  }];
  let arguments = (ins TensorOf<[F32]>:$boxes, TensorOf<[F32]>:$scores,
                       Optional<TensorOf<[I64]>>:$max_output_boxes_per_class,
                       Optional<TensorOf<[F32]>>:$iou_threshold,
                       Optional<TensorOf<[F32]>>:$score_threshold,
                       DefaultValuedAttr<I64Attr, "0">:$center_point_box);
  let results = (outs TensorOf<[I64]>:$selected_indices);
  let assemblyFormat = [{
    $boxes `,` $scores (`max_output_boxes_per_class` $max_output_boxes_per_class^)?
    (`iou_threshold` $iou_threshold^)? (`score_threshold` $score_threshold^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_DFTOp : Graph_Op<"dft", [Pure]> {
  let summary = "discrete Fourier transform along `axis` (ONNX DFT, opset 17)";
  let description = [{
    The last axis of the input is 1 (real) or 2 (complex); the output is
    complex (last axis 2). `dft_length` (a scalar, default the axis size)
    pads or truncates the signal; `onesided` keeps the first
    dft_length / 2 + 1 frequencies.
  }];
  let arguments = (ins AnyTensor:$input,
                       Optional<TensorOf<[I32, I64]>>:$dft_length,
                       DefaultValuedAttr<I64Attr, "1">:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$inverse,
                       DefaultValuedAttr<I64Attr, "0">:$onesided);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $input (`length` $dft_length^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_STFTOp : Graph_Op<"stft", [Pure, AttrSizedOperandSegments]> {
  let summary = "short-time Fourier transform (ONNX STFT)";
  let description = [{
    signal (batch, length, 1 or 2), scalar frame_step, optional window
    (frame_length) and scalar frame_length. The output is (batch, frames,
    bins, 2) with frames = (length - frame_length) / frame_step + 1 and
    bins = frame_length / 2 + 1 when onesided, else frame_length.
  }];
  let arguments = (ins AnyTensor:$signal, TensorOf<[I32, I64]>:$frame_step,
                       Optional<AnyTensor>:$window,
                       Optional<TensorOf<[I32, I64]>>:$frame_length,
                       DefaultValuedAttr<I64Attr, "1">:$onesided);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $signal `,` $frame_step (`window` $window^)?
    (`frame_length` $frame_length^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_MelWeightMatrixOp : Graph_SimpleOp<"mel_weight_matrix"> {
  let summary = "mel filter bank: (dft_length / 2 + 1, num_mel_bins) weights";
  let description = [{
    The result element type is ONNX's `output_datatype`.
  }];
  let arguments = (ins TensorOf<[I32, I64]>:$num_mel_bins,
                       TensorOf<[I32, I64]>:$dft_length,
                       TensorOf<[I32, I64]>:$sample_rate,
                       AnyTensor:$lower_edge_hertz,
                       AnyTensor:$upper_edge_hertz);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

#endif // STRATA_GRAPH_NN_OPS_TD
