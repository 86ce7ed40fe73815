//===- NodeImporter.cpp - per-node conversion context ----------*- C++ -*-===//

#include "NodeImporter.h"
#include "GraphImporter.h"

#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

namespace strata::onnx_import {

NodeImporter::NodeImporter(GraphImporter &graph, const onnx::NodeProto &node,
                           Location loc, int64_t opset)
    : graph(graph), nodeProto(node), location(loc), opsetVersion(opset) {}

OpBuilder &NodeImporter::builder() { return graph.builder(); }
MLIRContext *NodeImporter::context() { return graph.context(); }

Value NodeImporter::input(unsigned i) const {
  if (int(i) >= nodeProto.input_size() || nodeProto.input(i).empty())
    return {};
  return graph.lookup(nodeProto.input(i));
}

SmallVector<Value> NodeImporter::inputs() const {
  SmallVector<Value> result;
  for (unsigned i = 0; i < numInputs(); ++i)
    if (Value v = input(i))
      result.push_back(v);
  return result;
}

bool NodeImporter::hasOutput(unsigned i) const {
  return int(i) < nodeProto.output_size() && !nodeProto.output(i).empty();
}

Type NodeImporter::outputType(unsigned i, Type fallbackElement) {
  if (hasOutput(i))
    if (Type known = graph.knownType(nodeProto.output(i)))
      return known;
  if (!fallbackElement) {
    Value first = input(0);
    fallbackElement = first ? getElementTypeOrSelf(first.getType())
                            : Type(Float32Type::get(context()));
  }
  return UnrankedTensorType::get(fallbackElement);
}

const onnx::AttributeProto *NodeImporter::rawAttr(StringRef name) {
  for (const auto &attr : nodeProto.attribute())
    if (attr.name() == name) {
      readAttrs.insert(attr.name());
      return &attr;
    }
  return nullptr;
}

bool NodeImporter::hasAttr(StringRef name) const {
  for (const auto &attr : nodeProto.attribute())
    if (attr.name() == name)
      return true;
  return false;
}

void NodeImporter::ignoreAttr(StringRef name) { readAttrs.insert(name.str()); }

int64_t NodeImporter::intAttr(StringRef name, int64_t defaultValue) {
  return optionalIntAttr(name).value_or(defaultValue);
}

std::optional<int64_t> NodeImporter::optionalIntAttr(StringRef name) {
  const auto *attr = rawAttr(name);
  if (!attr)
    return std::nullopt;
  return attr->i();
}

float NodeImporter::floatAttr(StringRef name, float defaultValue) {
  const auto *attr = rawAttr(name);
  return attr ? attr->f() : defaultValue;
}

std::string NodeImporter::stringAttr(StringRef name, StringRef defaultValue) {
  const auto *attr = rawAttr(name);
  return attr ? attr->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>> NodeImporter::intsAttr(StringRef name) {
  const auto *attr = rawAttr(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

DenseI64ArrayAttr NodeImporter::intsAttrOrNull(StringRef name) {
  auto values = intsAttr(name);
  return values ? builder().getDenseI64ArrayAttr(*values) : DenseI64ArrayAttr();
}

std::optional<SmallVector<float>> NodeImporter::floatsAttr(StringRef name) {
  const auto *attr = rawAttr(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<float>(attr->floats().begin(), attr->floats().end());
}

std::optional<SmallVector<std::string>>
NodeImporter::stringsAttr(StringRef name) {
  const auto *attr = rawAttr(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<std::string>(attr->strings().begin(),
                                  attr->strings().end());
}

LogicalResult NodeImporter::constantInts(unsigned i, StringRef what,
                                         SmallVectorImpl<int64_t> &values) {
  Value v = input(i);
  if (!v)
    return fail("input " + Twine(i) + " (" + what + ") is missing");
  if (failed(graph::getConstantIntValues(v, values)))
    return fail("input '" + nodeProto.input(i) + "' (" + what +
                ") must be a constant; computed " + what +
                " are not supported");
  return success();
}

InFlightDiagnostic NodeImporter::emitError(const Twine &message) {
  errored = true;
  std::string name =
      nodeProto.name().empty() ? std::string("<unnamed>") : nodeProto.name();
  std::string op = nodeProto.domain().empty() || nodeProto.domain() == "ai.onnx"
                       ? nodeProto.op_type()
                       : nodeProto.domain() + "." + nodeProto.op_type();
  return mlir::emitError(location)
         << "node '" << name << "' (" << op << ", opset " << opsetVersion
         << "): " << message;
}

void NodeImporter::refine(Operation *op) {
  // First join ONNX's declared result types with what the operands imply
  // (ONNX may know less, e.g. an unranked type where the operand is ranked).
  if (auto iface = dyn_cast<graph::InferShapesOpInterface>(op)) {
    SmallVector<Type> inferred;
    if (succeeded(iface.inferResultTypes(inferred)) &&
        inferred.size() == op->getNumResults()) {
      for (auto [result, type] : llvm::zip(op->getResults(), inferred)) {
        Type joined = graph::joinTypes(result.getType(), type);
        if (!joined) {
          emitError("ONNX shape inference gives ")
              << result.getType() << " but the operands imply " << type;
          return;
        }
        result.setType(joined);
      }
    }
  }
  // Then verify each op as it is made, so a malformed node is reported at
  // the node even when other nodes fail and the module is never verified.
  if (failed(mlir::verify(op, /*verifyRecursively=*/false)))
    errored = true;
}

LogicalResult NodeImporter::setOutputs(ValueRange values) {
  unsigned next = 0;
  for (unsigned i = 0; i < numOutputs(); ++i) {
    if (next >= values.size())
      break;
    Value value = values[next++];
    if (!hasOutput(i))
      continue;
    graph.bind(nodeProto.output(i), value);
  }
  return success();
}

SmallVector<std::string> NodeImporter::unreadAttributes() const {
  SmallVector<std::string> result;
  for (const auto &attr : nodeProto.attribute())
    if (!readAttrs.count(attr.name()))
      result.push_back(attr.name());
  return result;
}

void ConverterRegistry::add(StringRef opType, ConvertFn fn, StringRef domain) {
  converters[(domain + "::" + opType).str()] = std::move(fn);
}

const ConvertFn *ConverterRegistry::lookup(StringRef domain,
                                           StringRef opType) const {
  if (domain == "ai.onnx")
    domain = "";
  auto it = converters.find((domain + "::" + opType).str());
  return it == converters.end() ? nullptr : &it->second;
}

Type convertElementType(MLIRContext *ctx, int32_t dataType) {
  using TP = onnx::TensorProto;
  switch (dataType) {
  case TP::FLOAT:
    return Float32Type::get(ctx);
  case TP::DOUBLE:
    return Float64Type::get(ctx);
  case TP::FLOAT16:
    return Float16Type::get(ctx);
  case TP::BFLOAT16:
    return BFloat16Type::get(ctx);
  case TP::BOOL:
    return IntegerType::get(ctx, 1);
  case TP::INT8:
    return IntegerType::get(ctx, 8);
  case TP::INT16:
    return IntegerType::get(ctx, 16);
  case TP::INT32:
    return IntegerType::get(ctx, 32);
  case TP::INT64:
    return IntegerType::get(ctx, 64);
  case TP::UINT8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case TP::UINT16:
    return IntegerType::get(ctx, 16, IntegerType::Unsigned);
  case TP::UINT32:
    return IntegerType::get(ctx, 32, IntegerType::Unsigned);
  case TP::UINT64:
    return IntegerType::get(ctx, 64, IntegerType::Unsigned);
  case TP::STRING:
    return graph::StringType::get(ctx);
  default:
    return {};
  }
}

std::string elementTypeName(int32_t dataType) {
  if (onnx::TensorProto_DataType_IsValid(dataType))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

} // namespace strata::onnx_import
