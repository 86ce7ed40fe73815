//===- GraphInterfaces.td - graph dialect interfaces -------*- tablegen -*-===//

#ifndef STRATA_GRAPH_INTERFACES_TD
#define STRATA_GRAPH_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Graph_InferShapesOpInterface : OpInterface<"InferShapesOpInterface"> {
  let cppNamespace = "::strata::graph";
  let description = [{
    Computes result types from the operand types (and constant operands
    where an op's shape depends on values, such as Reshape's shape). The
    computed types may be less precise than the current ones (a dynamic
    dimension where the op already has a static one); callers join the two.
    Returns failure when the operands are inconsistent; the op's verifier
    reports why.
  }];
  let methods = [
    InterfaceMethod<
      "Computes the result types; one entry per result.",
      "::mlir::LogicalResult", "inferResultTypes",
      (ins "::llvm::SmallVectorImpl<::mlir::Type> &":$types)>,
  ];
  let verify = [{ return ::strata::graph::verifyInferredResultTypes($_op); }];
}

#endif // STRATA_GRAPH_INTERFACES_TD
