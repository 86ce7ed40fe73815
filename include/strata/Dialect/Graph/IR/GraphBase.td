//===- GraphBase.td - strata graph dialect base definitions -*- tablegen -*-===//
//
// The graph dialect is strata's graph layer: value-semantic ops on builtin
// tensors that mirror the numeric operators of ONNX (numpy broadcasting,
// ONNX attribute names and defaults), plus a few core ops that the
// decompositions produce. Later layers (fusion, library-vs-codegen, tiling)
// read and annotate these ops.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_GRAPH_BASE_TD
#define STRATA_GRAPH_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "strata/Dialect/Graph/IR/GraphInterfaces.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::strata::graph";
  let summary = "strata's graph layer: tensor ops with ONNX semantics";
  let description = [{
    Ops on builtin tensor types (ranked with static or dynamic dimensions,
    or unranked). Symbolic dimension names from ONNX (`dim_param`) are kept
    as the `graph.dim_params` argument and result attributes of the entry
    function; inside the graph they are dynamic (`?`) dimensions.
    Every op implements `InferShapesOpInterface`, which the
    `strata-graph-infer-shapes` pass uses to refine result types.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 0;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

include "strata/Dialect/Graph/IR/GraphTypes.td"

// Base class for every graph op. Ops infer their result shapes from their
// operands through the InferShapes interface.
class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic,
         !listconcat(traits, [DeclareOpInterfaceMethods<Graph_InferShapesOpInterface>])>;

// The default syntax for ops whose operands are all required (or a single
// variadic list): `graph.add %a, %b {attrs} : (types) -> types`.
class Graph_SimpleOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure])> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// Unary elementwise: result has the operand's shape.
class Graph_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Graph_SimpleOp<mnemonic, traits> {
  let arguments = (ins AnyTensor:$input);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferResultTypes(
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferUnaryElementwise(getOperation(), types);
    }
    ::mlir::LogicalResult $cppClass::verify() {
      return verifyUnaryElementwise(getOperation());
    }
  }];
}

// Unary elementwise whose result element type is the operand's.
class Graph_UnarySameTypeOp<string mnemonic, list<Trait> traits = []>
    : Graph_UnaryOp<mnemonic, !listconcat(traits, [SameOperandsAndResultElementType])>;

// Binary elementwise with numpy (multidirectional) broadcasting.
class Graph_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Graph_SimpleOp<mnemonic, traits> {
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let results = (outs AnyTensor:$output);
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferResultTypes(
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return inferBroadcastElementwise(getOperation(), types);
    }
    ::mlir::LogicalResult $cppClass::verify() {
      return verifyBroadcastElementwise(getOperation());
    }
  }];
}

// Binary ops whose result element type equals the operands' (arithmetic).
class Graph_ArithBinaryOp<string mnemonic, list<Trait> traits = []>
    : Graph_BinaryOp<mnemonic, !listconcat(traits, [SameOperandsAndResultElementType])>;

#endif // STRATA_GRAPH_BASE_TD
