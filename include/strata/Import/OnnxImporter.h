//===- OnnxImporter.h - ONNX model to graph dialect -------------*- C++ -*-===//
//
// Imports an ONNX model (binary protobuf, or ONNX's textual syntax for
// `.onnxtxt` files) into a module holding one func.func of graph ops.
// Errors are reported through the MLIRContext's diagnostic engine; every
// diagnostic about a node is located at that node (its ONNX name) and names
// the op type and opset. One import reports all unsupported nodes.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_IMPORT_ONNXIMPORTER_H
#define STRATA_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace strata {

struct ImportOptions {
  /// Models of an older default-domain opset are converted to this one with
  /// ONNX's version converter (when it can), so the converters see one set of
  /// operator semantics.
  int64_t targetOpset = 17;
  /// Run ONNX's model checker.
  bool runChecker = true;
  /// Run ONNX's shape inference (with data propagation) before converting.
  bool runShapeInference = true;
  /// Name of the entry function.
  std::string entryName = "main";
  /// Import a model whose default-domain opset is newer than strata knows
  /// as the newest one it knows, with a warning (--allow-newer-opset): an
  /// operator whose meaning changed in the newer opset may compute wrong
  /// results. Off, such a model is refused.
  bool allowNewerOpset = false;
};

/// Imports the model at `path` (ONNX's textual syntax when it ends in
/// `.onnxtxt`); external data is read from the file's folder. Returns null
/// after reporting errors.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &context,
                                                 llvm::StringRef path,
                                                 const ImportOptions &options);

/// A model already in memory.
struct OnnxSource {
  /// The serialized ModelProto, or the text of an `.onnxtxt` model.
  llvm::StringRef bytes;
  /// What messages and the module's `graph.source` call the model.
  llvm::StringRef name;
  /// The folder that external data locations are relative to; empty: a
  /// tensor with external data is refused.
  llvm::StringRef dataDir;
  /// ONNX's textual syntax instead of a protobuf.
  bool text = false;
};

/// Imports a model from memory (what importOnnxFile does after reading the
/// file). Returns null after reporting errors.
mlir::OwningOpRef<mlir::ModuleOp> importOnnx(mlir::MLIRContext &context,
                                             const OnnxSource &source,
                                             const ImportOptions &options);

/// Registers the dialects an imported module uses.
void registerImportDialects(mlir::DialectRegistry &registry);

} // namespace strata

#endif // STRATA_IMPORT_ONNXIMPORTER_H
