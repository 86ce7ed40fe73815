//===- TensorOps.td - shape and data-movement graph ops ----*- tablegen -*-===//
//
// Ops that move or reshape data, create constants or random values, and the
// window functions. Where ONNX passes a shape or index list as a tensor input
// that may be computed at run time (Reshape's shape, Slice's starts), the op
// keeps it as an operand; canonicalization folds constant ones. Lists that
// ONNX models nearly always give as constants (Squeeze/Unsqueeze axes, Split
// sizes, TopK's K) are attributes in canonical form: the importer moves
// constant inputs there, and only computed ones stay an optional operand
// (`dynamic_axes`, `dynamic_split`, `dynamic_k`), which canonicalization
// moves into the attribute once it becomes constant.
//
// ONNX attributes that select an output element type (EyeLike's dtype, the
// random ops' dtype, the windows' output_datatype) are carried by the result
// type, not by an attribute.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_TENSOR_OPS_TD
#define STRATA_GRAPH_TENSOR_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

// Ops with optional operands: keyword-labelled operands, then the types.
class Graph_OptOperandsOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

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

def Graph_ShapeOp : Graph_SimpleOp<"shape"> {
  let summary = "the input's dimensions [start, end) as a 1-D i64 tensor";
  let arguments = (ins AnyTensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs TensorOf<[I64]>:$output);
  let hasFolder = 1;
}

def Graph_SizeOp : Graph_SimpleOp<"size"> {
  let summary = "the input's element count as a 0-D i64 tensor";
  let arguments = (ins AnyTensor:$input);
  let results = (outs 0DTensorOf<[I64]>:$output);
  let hasFolder = 1;
}

def Graph_ConstantOfShapeOp : Graph_SimpleOp<"constant_of_shape"> {
  let summary = "a tensor of the given shape filled with `value`";
  let description = [{
    `value` is a one-element tensor whose element type is the result's
    (ONNX's default is a float 0).
  }];
  let arguments = (ins TensorOf<[I64]>:$shape, ElementsAttr:$value);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_RangeOp : Graph_SimpleOp<"range"> {
  let summary = "start, start + delta, ... up to (excluding) limit";
  let arguments = (ins AnyTensor:$start, AnyTensor:$limit, AnyTensor:$delta);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_EyeLikeOp : Graph_SimpleOp<"eye_like"> {
  let summary = "2-D tensor of the input's shape with ones on diagonal `k`";
  let arguments = (ins AnyTensor:$input, DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reshaping
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_SimpleOp<"reshape"> {
  let summary = "reshape to `shape` (ONNX: 0 copies a dimension, -1 infers)";
  let description = [{
    Canonicalization turns reshape(transpose(reshape(x))), where the reshapes
    only merge and split again the leading dimensions that the transpose
    keeps in place, into one transpose of x (a batched product's operand
    transposed as [B*H, T, D], as torch's exporters write attention's K^T).
  }];
  let arguments = (ins AnyTensor:$data, TensorOf<[I64]>:$shape,
                       DefaultValuedAttr<I64Attr, "0">:$allowzero);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_FlattenOp : Graph_SimpleOp<"flatten"> {
  let summary = "reshape to 2-D: dimensions before `axis`, and from it on";
  let arguments = (ins AnyTensor:$input, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SqueezeOp : Graph_SimpleOp<"squeeze"> {
  let summary = "remove size-1 dimensions (`axes` absent: every one)";
  let description = [{
    The axes are the `axes` attribute or, when ONNX's axes input is computed
    at run time, the 1-D `dynamic_axes` operand; at most one is present
    (neither: every size-1 dimension). Canonicalization moves a constant
    `dynamic_axes` into the attribute.
  }];
  let arguments = (ins AnyTensor:$input,
                       Optional<TensorOf<[I64]>>:$dynamic_axes,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let builders = [
    // The attribute form, which is what the graph layer normally holds.
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$input,
                   "::mlir::DenseI64ArrayAttr":$axes), [{
      build($_builder, $_state, output, input, ::mlir::Value(), axes);
    }]>
  ];
}

def Graph_UnsqueezeOp : Graph_SimpleOp<"unsqueeze"> {
  let summary = "insert size-1 dimensions at `axes` (of the result)";
  let description = [{
    The axes are the `axes` attribute or, when ONNX's axes input is computed
    at run time, the 1-D `dynamic_axes` operand; exactly one is present.
    Canonicalization moves a constant `dynamic_axes` into the attribute.
  }];
  let arguments = (ins AnyTensor:$input,
                       Optional<TensorOf<[I64]>>:$dynamic_axes,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let builders = [
    // The attribute form, which is what the graph layer normally holds.
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$input,
                   "::mlir::DenseI64ArrayAttr":$axes), [{
      build($_builder, $_state, output, input, ::mlir::Value(), axes);
    }]>
  ];
}

def Graph_TransposeOp : Graph_SimpleOp<"transpose"> {
  let summary = "permute dimensions (`perm` absent: reverse them)";
  let description = [{
    Canonicalization turns a transpose that moves only dimensions of size 1
    (the other dimensions keep their order) into a reshape: the elements
    keep their order, so it is a view, not a copy.
  }];
  let arguments = (ins AnyTensor:$input, OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_DepthToSpaceOp : Graph_SimpleOp<"depth_to_space"> {
  let summary = "move NCHW channel blocks into spatial blocks (DCR or CRD)";
  let arguments = (ins AnyTensor:$input, I64Attr:$blocksize,
                       DefaultValuedAttr<StrAttr, "\"DCR\"">:$mode);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_SpaceToDepthOp : Graph_SimpleOp<"space_to_depth"> {
  let summary = "move NCHW spatial blocks into channels";
  let arguments = (ins AnyTensor:$input, I64Attr:$blocksize);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Slicing, joining, broadcasting
//===----------------------------------------------------------------------===//

def Graph_ConcatOp : Graph_SimpleOp<"concat"> {
  let summary = "concatenate along `axis`";
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_OptOperandsOp<"slice", [AttrSizedOperandSegments]> {
  let summary = "strided slice (ONNX Slice: clamped starts/ends, any steps)";
  let description = [{
    `axes` absent: the first len(starts) axes; `steps` absent: all 1.
  }];
  let arguments = (ins AnyTensor:$data, TensorOf<[I32, I64]>:$starts,
                       TensorOf<[I32, I64]>:$ends,
                       Optional<TensorOf<[I32, I64]>>:$axes,
                       Optional<TensorOf<[I32, I64]>>:$steps);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $data `,` $starts `,` $ends (`axes` $axes^)? (`steps` $steps^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_SplitOp : Graph_SimpleOp<"split"> {
  let summary = "split along `axis` into the results (sizes `split`)";
  let description = [{
    The sizes are the `split` attribute or, when ONNX's split input is
    computed at run time, the 1-D `dynamic_split` operand; at most one is
    present. Canonicalization moves a constant `dynamic_split` into the
    attribute. Neither: equal parts, the last one smaller when the dimension
    does not divide evenly (ONNX opset 18 semantics, which opset 17's equal
    split is a special case of).
  }];
  let arguments = (ins AnyTensor:$input,
                       Optional<TensorOf<[I64]>>:$dynamic_split,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       OptionalAttr<DenseI64ArrayAttr>:$split);
  let results = (outs Variadic<AnyTensor>:$outputs);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let builders = [
    // The attribute form, which is what the graph layer normally holds.
    OpBuilder<(ins "::mlir::TypeRange":$outputs, "::mlir::Value":$input,
                   "::mlir::IntegerAttr":$axis,
                   "::mlir::DenseI64ArrayAttr":$split), [{
      build($_builder, $_state, outputs, input, ::mlir::Value(), axis, split);
    }]>
  ];
}

def Graph_ExpandOp : Graph_SimpleOp<"expand"> {
  let summary = "broadcast the input to `shape` (numpy rules, both ways)";
  let arguments = (ins AnyTensor:$input, TensorOf<[I64]>:$shape);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TileOp : Graph_SimpleOp<"tile"> {
  let summary = "repeat the input `repeats[i]` times along each axis i";
  let arguments = (ins AnyTensor:$input, TensorOf<[I64]>:$repeats);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_PadOp : Graph_OptOperandsOp<"pad"> {
  let summary = "pad with a constant, by reflection or by edge replication";
  let description = [{
    `pads` holds the begin pads of every axis, then the end pads; negative
    pads crop.
  }];
  let arguments = (ins AnyTensor:$data, TensorOf<[I64]>:$pads,
                       Optional<AnyTensor>:$constant_value,
                       DefaultValuedAttr<StrAttr, "\"constant\"">:$mode);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $data `,` $pads (`value` $constant_value^)? attr-dict
    `:` functional-type(operands, results)
  }];
  // All-zero pads: the data itself (torch exports one before some pools).
  let hasFolder = 1;
}

def Graph_TriluOp : Graph_OptOperandsOp<"trilu"> {
  let summary = "keep the upper (or lower) triangle of the last two axes";
  let arguments = (ins AnyTensor:$input, Optional<TensorOf<[I64]>>:$k,
                       DefaultValuedAttr<I64Attr, "1">:$upper);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $input (`k` $k^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_ReverseSequenceOp : Graph_SimpleOp<"reverse_sequence"> {
  let summary = "reverse the first sequence_lens[b] steps of each batch b";
  let arguments = (ins AnyTensor:$input, TensorOf<[I64]>:$sequence_lens,
                       DefaultValuedAttr<I64Attr, "1">:$batch_axis,
                       DefaultValuedAttr<I64Attr, "0">:$time_axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gathers and scatters
//===----------------------------------------------------------------------===//

def Graph_GatherOp : Graph_SimpleOp<"gather"> {
  let summary = "gather slices of `data` along `axis` at `indices`";
  let arguments = (ins AnyTensor:$data, TensorOf<[I32, I64]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_GatherElementsOp : Graph_SimpleOp<"gather_elements"> {
  let summary = "out[i][j] = data[indices[i][j]][j] (for axis 0), any rank";
  let arguments = (ins AnyTensor:$data, TensorOf<[I32, I64]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_GatherNDOp : Graph_SimpleOp<"gather_nd"> {
  let summary = "gather slices of `data` at index tuples (last indices axis)";
  let arguments = (ins AnyTensor:$data, TensorOf<[I64]>:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_ScatterElementsOp : Graph_SimpleOp<"scatter_elements"> {
  let summary = "data with updates written (or reduced) at indices on `axis`";
  let arguments = (ins AnyTensor:$data, TensorOf<[I32, I64]>:$indices,
                       AnyTensor:$updates,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_ScatterNDOp : Graph_SimpleOp<"scatter_nd"> {
  let summary = "data with update slices written (or reduced) at index tuples";
  let arguments = (ins AnyTensor:$data, TensorOf<[I64]>:$indices,
                       AnyTensor:$updates,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$reduction);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_OneHotOp : Graph_SimpleOp<"one_hot"> {
  let summary = "one-hot encode indices; values = [off, on]";
  let arguments = (ins AnyTensor:$indices, AnyTensor:$depth, AnyTensor:$values,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
}

def Graph_CompressOp : Graph_SimpleOp<"compress"> {
  let summary = "select the slices along `axis` where condition is true";
  let description = [{
    `axis` absent: the input is flattened first.
  }];
  let arguments = (ins AnyTensor:$input, TensorOf<[I1]>:$condition,
                       OptionalAttr<I64Attr>:$axis);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  // A constant condition makes it a gather (of the flattened input when
  // `axis` is absent).
  let hasCanonicalizer = 1;
}

def Graph_NonZeroOp : Graph_SimpleOp<"non_zero"> {
  let summary = "indices of the nonzero elements, shape (rank, count)";
  let arguments = (ins AnyTensor:$input);
  let results = (outs TensorOf<[I64]>:$output);
}

//===----------------------------------------------------------------------===//
// Resampling
//===----------------------------------------------------------------------===//

def Graph_ResizeOp : Graph_OptOperandsOp<"resize", [AttrSizedOperandSegments]> {
  let summary = "resize by `scales` or to `sizes` (ONNX Resize)";
  let description = [{
    Exactly one of `scales` and `sizes` is given; `roi` matters only for
    coordinate_transformation_mode "tf_crop_and_resize".
  }];
  let arguments = (ins AnyTensor:$input, Optional<AnyTensor>:$roi,
      Optional<TensorOf<[F32]>>:$scales, Optional<TensorOf<[I64]>>:$sizes,
      DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode,
      DefaultValuedAttr<F32Attr, "-0.75">:$cubic_coeff_a,
      DefaultValuedAttr<I64Attr, "0">:$exclude_outside,
      DefaultValuedAttr<F32Attr, "0.0">:$extrapolation_value,
      DefaultValuedAttr<StrAttr, "\"nearest\"">:$mode,
      DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = [{
    $input (`roi` $roi^)? (`scales` $scales^)? (`sizes` $sizes^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

def Graph_TopKOp : Graph_SimpleOp<"top_k"> {
  let summary = "the `k` largest (or smallest) elements along `axis`";
  let description = [{
    K is the `k` attribute or, when ONNX's K input is computed at run time,
    the one-element 1-D `dynamic_k` operand; exactly one is present.
    Canonicalization moves a constant `dynamic_k` into the attribute.
  }];
  let arguments = (ins AnyTensor:$input,
                       Optional<TensorOf<[I64]>>:$dynamic_k,
                       OptionalAttr<I64Attr>:$k,
                       DefaultValuedAttr<I64Attr, "-1">:$axis,
                       DefaultValuedAttr<I64Attr, "1">:$largest,
                       DefaultValuedAttr<I64Attr, "1">:$sorted);
  let results = (outs AnyTensor:$values, TensorOf<[I64]>:$indices);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [
    // The attribute form, which is what the graph layer normally holds.
    OpBuilder<(ins "::mlir::TypeRange":$results, "::mlir::Value":$input,
                   "::mlir::IntegerAttr":$k, "::mlir::IntegerAttr":$axis,
                   "::mlir::IntegerAttr":$largest,
                   "::mlir::IntegerAttr":$sorted), [{
      build($_builder, $_state, results, input, ::mlir::Value(), k, axis,
            largest, sorted);
    }]>
  ];
}

def Graph_UniqueOp : Graph_SimpleOp<"unique"> {
  let summary = "unique elements (or slices along `axis`) and index maps";
  let description = [{
    Results: the unique values, the index of each one's first occurrence,
    the index of each input element in the unique values, and the counts.
  }];
  let arguments = (ins AnyTensor:$input, OptionalAttr<I64Attr>:$axis,
                       DefaultValuedAttr<I64Attr, "1">:$sorted);
  let results = (outs AnyTensor:$output, TensorOf<[I64]>:$indices,
                      TensorOf<[I64]>:$inverse_indices, TensorOf<[I64]>:$counts);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dropout, windows, random values
//===----------------------------------------------------------------------===//

def Graph_DropoutOp : Graph_Op<"dropout", [AttrSizedOperandSegments]> {
  let summary = "dropout; the identity unless training_mode is true";
  let description = [{
    Not Pure: in training mode it draws random numbers. Canonicalization
    replaces it by its input when training_mode is absent or constant
    false, or the ratio is a constant 0 (the mask is then all true).
  }];
  let arguments = (ins AnyTensor:$data, Optional<AnyTensor>:$ratio,
                       Optional<TensorOf<[I1]>>:$training_mode,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs AnyTensor:$output, TensorOf<[I1]>:$mask);
  let assemblyFormat = [{
    $data (`ratio` $ratio^)? (`training_mode` $training_mode^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

class Graph_WindowOp<string mnemonic, string what>
    : Graph_SimpleOp<mnemonic> {
  let summary = what # " window of `size` samples (periodic or symmetric)";
  let arguments = (ins TensorOf<[I32, I64]>:$size,
                       DefaultValuedAttr<I64Attr, "1">:$periodic);
  let results = (outs TensorOf<[AnyFloat, AnyInteger]>:$output);
  let hasVerifier = 1;
  let hasFolder = 1;
}
def Graph_BlackmanWindowOp : Graph_WindowOp<"blackman_window", "Blackman">;
def Graph_HammingWindowOp : Graph_WindowOp<"hamming_window", "Hamming">;
def Graph_HannWindowOp : Graph_WindowOp<"hann_window", "Hann">;

// Random ops are deliberately not Pure: without memory-effect traits they
// count as having unknown side effects, so CSE never merges two draws and
// dead-code elimination keeps them (their seed would otherwise be lost).
class Graph_RandomOp<string mnemonic, string what, dag args>
    : Graph_Op<mnemonic> {
  let summary = what;
  let arguments = args;
  let results = (outs TensorOf<[AnyFloat]>:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_RandomNormalOp : Graph_RandomOp<"random_normal",
    "samples of N(mean, scale^2) in a tensor of shape `shape`",
    (ins DefaultValuedAttr<F32Attr, "0.0">:$mean,
         DefaultValuedAttr<F32Attr, "1.0">:$scale,
         OptionalAttr<F32Attr>:$seed, DenseI64ArrayAttr:$shape)>;
def Graph_RandomUniformOp : Graph_RandomOp<"random_uniform",
    "samples of U[low, high) in a tensor of shape `shape`",
    (ins DefaultValuedAttr<F32Attr, "1.0">:$high,
         DefaultValuedAttr<F32Attr, "0.0">:$low,
         OptionalAttr<F32Attr>:$seed, DenseI64ArrayAttr:$shape)>;
def Graph_RandomNormalLikeOp : Graph_RandomOp<"random_normal_like",
    "samples of N(mean, scale^2) in a tensor of the input's shape",
    (ins AnyTensor:$input, DefaultValuedAttr<F32Attr, "0.0">:$mean,
         DefaultValuedAttr<F32Attr, "1.0">:$scale,
         OptionalAttr<F32Attr>:$seed)> {
  // Any mean and scale are valid; the shape comes from the input.
  let hasVerifier = 0;
}
def Graph_RandomUniformLikeOp : Graph_RandomOp<"random_uniform_like",
    "samples of U[low, high) in a tensor of the input's shape",
    (ins AnyTensor:$input, DefaultValuedAttr<F32Attr, "1.0">:$high,
         DefaultValuedAttr<F32Attr, "0.0">:$low,
         OptionalAttr<F32Attr>:$seed)>;
def Graph_BernoulliOp : Graph_RandomOp<"bernoulli",
    "1 with probability input[i], else 0",
    (ins AnyTensor:$input, OptionalAttr<F32Attr>:$seed)> {
  let results = (outs TensorOf<[AnyFloat, AnyInteger]>:$output);
}

#endif // STRATA_GRAPH_TENSOR_OPS_TD
