//===- GraphImporter.h - ONNX graph to func.func ----------------*- C++ -*-===//

#ifndef STRATA_LIB_IMPORT_GRAPHIMPORTER_H
#define STRATA_LIB_IMPORT_GRAPHIMPORTER_H

#include "NodeImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

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
  /// Converts an initializer or Constant value to an attribute.
  mlir::FailureOr<mlir::ElementsAttr>
  convertTensor(const onnx::TensorProto &tensor, mlir::Location loc);

  /// The location of a node: its name (or "<OpType>#index" when unnamed)
  /// inside the model file.
  mlir::Location nodeLocation(const onnx::NodeProto &node, int index);

private:
  mlir::MLIRContext *ctx;
  mlir::OpBuilder b;
  std::string fileName;
  int64_t opset;
  const ConverterRegistry &registry;
  llvm::StringMap<mlir::Value> values;
  llvm::StringMap<const onnx::TypeProto *> valueTypes;
};

} // namespace strata::onnx_import

#endif // STRATA_LIB_IMPORT_GRAPHIMPORTER_H
