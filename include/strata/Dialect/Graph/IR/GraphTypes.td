//===- GraphTypes.td - graph dialect types -----------------*- tablegen -*-===//
//
// ONNX values that are not numeric tensors: string elements, sequences of
// tensors and optional values. Numeric tensors use the builtin tensor type.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_TYPES_TD
#define STRATA_GRAPH_TYPES_TD

include "mlir/IR/AttrTypeBase.td"

class Graph_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Graph_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Graph_StringType : Graph_Type<"String", "string"> {
  let summary = "an ONNX string, as a tensor element type";
  let description = [{
    `tensor<2x!graph.string>` is an ONNX STRING tensor. String constants are
    DenseStringElementsAttr values of such types.
  }];
}

def Graph_SequenceType : Graph_Type<"Sequence", "seq"> {
  let summary = "an ONNX sequence: an ordered list of tensors of one type";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Graph_OptionalType : Graph_Type<"Optional", "opt"> {
  let summary = "an ONNX optional: a value of the element type, or none";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def Graph_AnySequence : Type<CPred<"::llvm::isa<::strata::graph::SequenceType>($_self)">,
                             "sequence", "::strata::graph::SequenceType">;
def Graph_AnyOptional : Type<CPred<"::llvm::isa<::strata::graph::OptionalType>($_self)">,
                             "optional", "::strata::graph::OptionalType">;
// Any ONNX value: a tensor, a sequence or an optional.
def Graph_AnyValue : AnyTypeOf<[AnyTensor, Graph_AnySequence, Graph_AnyOptional]>;

#endif // STRATA_GRAPH_TYPES_TD
