//===- SequenceOps.td - sequence and optional graph ops ----*- tablegen -*-===//
//
// ONNX's sequence operators (on `!graph.seq<T>`, an ordered list of tensors
// of type T) and optional operators (on `!graph.opt<T>`, a T or nothing).
//
// A sequence type's element type is the union of its tensors' types: a
// dimension is static only where every tensor agrees on it, and it is
// unranked where their ranks differ. Positions (SequenceAt, SequenceInsert,
// SequenceErase) are run-time scalars, kept as operands; the sequence length
// is not part of the type.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_SEQUENCE_OPS_TD
#define STRATA_GRAPH_SEQUENCE_OPS_TD

include "strata/Dialect/Graph/IR/GraphBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

// A scalar position into a sequence (ONNX allows int32 and int64).
def Graph_SequencePosition : TensorOf<[I32, I64]>;

// A tensor or a sequence: what an optional can hold.
def Graph_TensorOrSequence : AnyTypeOf<[AnyTensor, Graph_AnySequence]>;

class Graph_SequenceOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Building and reading sequences
//===----------------------------------------------------------------------===//

def Graph_SequenceEmptyOp : Graph_SequenceOp<"sequence_empty"> {
  let summary = "an empty sequence of tensors of element type `dtype`";
  let description = [{
    `dtype` is ONNX's dtype attribute as an MLIR element type (ONNX's default
    is float); the result is a sequence of unranked tensors of it.
  }];
  let arguments = (ins TypeAttr:$dtype);
  let results = (outs Graph_AnySequence:$output);
  let assemblyFormat = "$dtype attr-dict `:` qualified(type($output))";
}

def Graph_SequenceConstructOp : Graph_SequenceOp<"sequence_construct"> {
  let summary = "a sequence of the given tensors, in order";
  let arguments = (ins Variadic<AnyTensor>:$inputs);
  let results = (outs Graph_AnySequence:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Graph_SequenceInsertOp : Graph_SequenceOp<"sequence_insert"> {
  let summary = "inserts a tensor into a sequence at `position` (default: the end)";
  let description = [{
    `position` is a scalar in [-n, n] for a sequence of n tensors; negative
    values count from the back.
  }];
  let arguments = (ins Graph_AnySequence:$input_sequence, AnyTensor:$tensor,
                       Optional<Graph_SequencePosition>:$position);
  let results = (outs Graph_AnySequence:$output);
  let assemblyFormat = [{
    $input_sequence `,` $tensor (`at` $position^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Graph_SequenceAtOp : Graph_SequenceOp<"sequence_at"> {
  let summary = "the tensor at `position` (in [-n, n - 1]) of a sequence";
  let arguments = (ins Graph_AnySequence:$input_sequence,
                       Graph_SequencePosition:$position);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_SequenceEraseOp : Graph_SequenceOp<"sequence_erase"> {
  let summary = "removes the tensor at `position` (default: the last one)";
  let arguments = (ins Graph_AnySequence:$input_sequence,
                       Optional<Graph_SequencePosition>:$position);
  let results = (outs Graph_AnySequence:$output);
  let assemblyFormat = [{
    $input_sequence (`at` $position^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Graph_SequenceLengthOp : Graph_SequenceOp<"sequence_length"> {
  let summary = "the number of tensors in a sequence, as a 0-D i64 tensor";
  let arguments = (ins Graph_AnySequence:$input_sequence);
  let results = (outs 0DTensorOf<[I64]>:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Converting between tensors and sequences
//===----------------------------------------------------------------------===//

def Graph_SplitToSequenceOp : Graph_SequenceOp<"split_to_sequence"> {
  let summary = "splits a tensor along `axis` into a sequence of tensors";
  let description = [{
    Without `split`, the input is split into slices of size 1, which lose
    the axis unless `keepdims` is 1. A scalar `split` gives chunks of that
    size (the last may be smaller); a 1-D `split` gives one chunk per entry,
    of that size (the sizes add up to the axis' size). `keepdims` only
    applies without `split`.
  }];
  let arguments = (ins AnyTensor:$input,
                       Optional<TensorOf<[I32, I64]>>:$split,
                       DefaultValuedAttr<I64Attr, "0">:$axis,
                       DefaultValuedAttr<I64Attr, "1">:$keepdims);
  let results = (outs Graph_AnySequence:$output);
  let assemblyFormat = [{
    $input (`split` $split^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_ConcatFromSequenceOp : Graph_SequenceOp<"concat_from_sequence"> {
  let summary = "concatenates (or, with new_axis = 1, stacks) a sequence's tensors";
  let description = [{
    The tensors must agree on every dimension but `axis`. With `new_axis` =
    1 they are stacked along a new axis at `axis` (in [-r - 1, r] for
    tensors of rank r), like numpy.stack; otherwise `axis` is in [-r, r - 1].
  }];
  let arguments = (ins Graph_AnySequence:$input_sequence, I64Attr:$axis,
                       DefaultValuedAttr<I64Attr, "0">:$new_axis);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// SequenceMap
//===----------------------------------------------------------------------===//

def Graph_SequenceMapOp : Graph_Op<"sequence_map", [RecursiveMemoryEffects]> {
  let summary = "applies a subgraph to each position of the input sequences";
  let description = [{
    The body runs once per tensor of `input_sequence`. Its block arguments
    are, for each operand, the tensor at the current position (sequence
    operands, which must all have the same length) or the operand itself
    (tensor operands). Each result is the sequence of the body's
    corresponding yielded tensors. The body may use values defined outside
    it, as ONNX subgraphs capture enclosing names.
  }];
  let arguments = (ins Graph_AnySequence:$input_sequence,
                       Variadic<Graph_TensorOrSequence>:$additional_inputs);
  let results = (outs Variadic<Graph_AnySequence>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input_sequence (`,` $additional_inputs^)? attr-dict `:`
    functional-type(operands, results) $body
  }];
  let hasVerifier = 1;
}

def Graph_SequenceMapYieldOp : Op<Graph_Dialect, "sequence_map_yield",
    [Pure, Terminator, ReturnLike, HasParent<"SequenceMapOp">]> {
  let summary = "returns one position's tensors from a graph.sequence_map body";
  let arguments = (ins Variadic<AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Optionals
//===----------------------------------------------------------------------===//

def Graph_OptionalOp : Graph_SequenceOp<"optional"> {
  let summary = "wraps a tensor or sequence in an optional, or makes an empty one";
  let description = [{
    With an operand, the result holds it. Without one, the result is an
    empty optional of element type `type` (ONNX's type attribute), which is
    then required.
  }];
  let arguments = (ins Optional<Graph_TensorOrSequence>:$input,
                       OptionalAttr<TypeAttr>:$type);
  let results = (outs Graph_AnyOptional:$output);
  let assemblyFormat = [{
    ($input^ `:` qualified(type($input)))? attr-dict `->` qualified(type($output))
  }];
}

def Graph_OptionalHasElementOp : Graph_SequenceOp<"optional_has_element"> {
  let summary = "whether an optional holds a value, as a 0-D i1 tensor";
  let description = [{
    From opset 18 the operand may also be a tensor or a sequence, which
    always counts as present.
  }];
  let arguments = (ins Graph_AnyValue:$input);
  let results = (outs 0DTensorOf<[I1]>:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_OptionalGetElementOp : Graph_SequenceOp<"optional_get_element"> {
  let summary = "the value an optional holds (undefined when it is empty)";
  let description = [{
    From opset 18 the operand may also be a tensor or a sequence, which is
    returned unchanged.
  }];
  let arguments = (ins Graph_AnyValue:$input);
  let results = (outs Graph_TensorOrSequence:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

#endif // STRATA_GRAPH_SEQUENCE_OPS_TD
