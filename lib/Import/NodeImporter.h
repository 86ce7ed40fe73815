//===- NodeImporter.h - per-node conversion context -------------*- C++ -*-===//
//
// Converters turn one ONNX node into graph ops through a NodeImporter, which
// hands out the node's inputs as MLIR values, reads attributes (tracking
// which were read, so an attribute no converter understood is reported), and
// builds diagnostics that name the node, its op type and the opset.
//
// To add an op: write a converter in the family's Import*.cpp file and add it
// to that file's register function. Read every attribute the op defines, or
// call ignoreAttr() for ones that do not change the result.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_IMPORT_NODEIMPORTER_H
#define STRATA_LIB_IMPORT_NODEIMPORTER_H

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <set>

namespace strata::onnx_import {

class GraphImporter;

class NodeImporter {
public:
  NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
               mlir::Location loc, int64_t opset);

  const onnx::NodeProto &node() const { return nodeProto; }
  mlir::OpBuilder &builder();
  /// The importer of the enclosing graph (for subgraphs and tensors).
  GraphImporter &graphImporter() { return graph; }
  mlir::Location loc() const { return location; }
  mlir::MLIRContext *context();
  /// The default-domain opset the model is imported at.
  int64_t opset() const { return opsetVersion; }

  /// Number of inputs, counting empty (omitted optional) ones.
  unsigned numInputs() const { return nodeProto.input_size(); }
  /// The i-th input, or a null value when it is absent or empty.
  mlir::Value input(unsigned i) const;
  /// All non-empty inputs.
  llvm::SmallVector<mlir::Value> inputs() const;
  /// Number of outputs the node declares, counting empty ones.
  unsigned numOutputs() const { return nodeProto.output_size(); }
  /// True when output i is present (non-empty name).
  bool hasOutput(unsigned i) const;

  /// The type ONNX shape inference gave output `i`; when unknown, an
  /// unranked tensor of `fallbackElement` (or of input 0's element type).
  mlir::Type outputType(unsigned i, mlir::Type fallbackElement = {});

  /// Attribute access. Every read marks the attribute as understood.
  bool hasAttr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue);
  std::optional<int64_t> optionalIntAttr(llvm::StringRef name);
  float floatAttr(llvm::StringRef name, float defaultValue);
  std::string stringAttr(llvm::StringRef name, llvm::StringRef defaultValue);
  std::optional<llvm::SmallVector<int64_t>> intsAttr(llvm::StringRef name);
  std::optional<llvm::SmallVector<float>> floatsAttr(llvm::StringRef name);
  /// An ints attribute as a DenseI64ArrayAttr; null when absent (for ops'
  /// OptionalAttr<DenseI64ArrayAttr> arguments).
  mlir::DenseI64ArrayAttr intsAttrOrNull(llvm::StringRef name);
  std::optional<llvm::SmallVector<std::string>>
  stringsAttr(llvm::StringRef name);
  const onnx::AttributeProto *rawAttr(llvm::StringRef name);
  /// Marks attributes as understood without reading them (they do not change
  /// the result, such as a random seed of an inference-mode Dropout).
  void ignoreAttr(llvm::StringRef name);

  /// Reads input `i` as constant integers; reports an error naming `what`
  /// when it is not constant.
  mlir::LogicalResult constantInts(unsigned i, llvm::StringRef what,
                                   llvm::SmallVectorImpl<int64_t> &values);

  /// Emits an error at the node: "node 'n' (Op, opset N): <message>".
  mlir::InFlightDiagnostic emitError(const llvm::Twine &message);
  mlir::LogicalResult fail(const llvm::Twine &message) {
    return emitError(message), mlir::failure();
  }
  /// Fails without a diagnostic of its own, for a failure already reported
  /// at its cause (a node inside a subgraph).
  mlir::LogicalResult failReported() {
    errored = true;
    return mlir::failure();
  }

  /// Binds the node's outputs, in order, refining each op result with the
  /// op's own shape inference first. Empty output names are skipped.
  mlir::LogicalResult setOutputs(mlir::ValueRange values);
  mlir::LogicalResult setOutput(mlir::Value value) {
    return setOutputs(mlir::ValueRange(value));
  }

  /// Creates `OpTy` with the given result types and operands and attributes,
  /// then joins its result types with what its shape inference computes.
  template <typename OpTy, typename... Args> OpTy create(Args &&...args) {
    auto op = OpTy::create(builder(), loc(), std::forward<Args>(args)...);
    refine(op.getOperation());
    return op;
  }

  /// Joins `op`'s result types with its shape inference; records a
  /// conflict as an error.
  void refine(mlir::Operation *op);

  /// Attributes present on the node that no read touched.
  llvm::SmallVector<std::string> unreadAttributes() const;
  bool hadError() const { return errored; }

private:
  GraphImporter &graph;
  const onnx::NodeProto &nodeProto;
  mlir::Location location;
  int64_t opsetVersion;
  std::set<std::string> readAttrs;
  bool errored = false;
};

using ConvertFn = std::function<mlir::LogicalResult(NodeImporter &)>;

/// Maps "domain::OpType" (the default domain is "") to converters.
class ConverterRegistry {
public:
  void add(llvm::StringRef opType, ConvertFn fn, llvm::StringRef domain = "");
  const ConvertFn *lookup(llvm::StringRef domain, llvm::StringRef opType) const;

private:
  llvm::StringMap<ConvertFn> converters;
};

// Each family file registers its converters.
void registerElementwiseConverters(ConverterRegistry &registry);
void registerReductionConverters(ConverterRegistry &registry);
void registerTensorConverters(ConverterRegistry &registry);
void registerNNConverters(ConverterRegistry &registry);
void registerControlFlowConverters(ConverterRegistry &registry);
void registerSequenceConverters(ConverterRegistry &registry);
void registerStringConverters(ConverterRegistry &registry);
void registerTrainingConverters(ConverterRegistry &registry);

/// Converts an ONNX element type (TensorProto::DataType) to MLIR (STRING is
/// !graph.string); null when unsupported (complex types, FLOAT8).
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t dataType);
/// A readable name of an ONNX element type ("FLOAT", "STRING").
std::string elementTypeName(int32_t dataType);

} // namespace strata::onnx_import

#endif // STRATA_LIB_IMPORT_NODEIMPORTER_H
