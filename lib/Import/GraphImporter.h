//===- GraphImporter.h - ONNX graph to func.func ----------------*- C++ -*-===//

#ifndef STRATA_LIB_IMPORT_GRAPHIMPORTER_H
#define STRATA_LIB_IMPORT_GRAPHIMPORTER_H

#include "NodeImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

namespace strata::onnx_import {

/// Converts one ONNX GraphProto into the body of a func.func.
class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext *context, llvm::StringRef fileName,
                int64_t opset, const ConverterRegistry &registry);

  /// Builds `func` named `name` into `module`. Fails after reporting every
  /// problem found.
  mlir::LogicalResult importGraph(const onnx::GraphProto &graph,
                                  mlir::ModuleOp module, llvm::StringRef name);

  /// Imports a subgraph (If branch, Loop or Scan body) into a new block of
  /// `region` at the builder's position: one block argument per subgraph
  /// input (typed `argTypes[i]` when given, else the input's declared type),
  /// its nodes, then a graph.yield of its outputs. Values of enclosing graphs
  /// stay visible, as ONNX scoping requires.
  mlir::LogicalResult importSubgraph(const onnx::GraphProto &graph,
                                     mlir::Region &region,
                                     llvm::ArrayRef<mlir::Type> argTypes,
                                     mlir::Location loc);

  mlir::OpBuilder &builder() { return b; }
  mlir::MLIRContext *context() { return ctx; }
  mlir::Value lookup(const std::string &name) const;
  void bind(const std::string &name, mlir::Value value);
  /// The type ONNX recorded for a value name (graph input/output or
  /// value_info); null when unknown.
  mlir::Type knownType(const std::string &name) const;

  /// Converts a tensor type proto; null (after an error at `loc`) for
  /// unsupported element types.
  mlir::Type convertType(const onnx::TypeProto &type, mlir::Location loc,
                         llvm::StringRef what);
  /// The same without a diagnostic: null, with the reason in `whyNot`.
  mlir::Type convertTypeProto(const onnx::TypeProto &type,
                              std::string &whyNot) const;
  /// Converts an initializer or Constant value to an attribute.
  mlir::FailureOr<mlir::ElementsAttr>
  convertTensor(const onnx::TensorProto &tensor, mlir::Location loc);

  /// The location of a node: its name (or "<OpType>#index" when unnamed)
  /// inside the model file.
  mlir::Location nodeLocation(const onnx::NodeProto &node, int index);

private:
  void recordValueTypes(const onnx::GraphProto &graph);
  /// Each returns false after reporting problems; they continue past errors
  /// so one import reports everything.
  bool importInitializers(const onnx::GraphProto &graph);
  bool importNodes(const onnx::GraphProto &graph);

  mlir::MLIRContext *ctx;
  mlir::OpBuilder b;
  std::string fileName;
  int64_t opset;
  const ConverterRegistry &registry;
  llvm::StringMap<mlir::Value> values;
  llvm::StringMap<const onnx::TypeProto *> valueTypes;
  /// Names whose producer failed: nodes that consume them are skipped
  /// without a second diagnostic, so each problem is reported once.
  llvm::StringSet<> poisoned;
};

} // namespace strata::onnx_import

#endif // STRATA_LIB_IMPORT_GRAPHIMPORTER_H
