//===- Values.cpp - ONNX sequences and optionals ----------------*- C++ -*-===//
//
// Values that are not tensors: the ONNX test data stores a sequence input or
// output as a serialized onnx.SequenceProto and an optional as an
// onnx.OptionalProto (onnx-data.proto), whose tensors are TensorProtos. A
// model's signature says which kind each input and output is. A compiled
// module takes and gives tensors only, so a value is flattened into named
// tensors (its leaves) and assembled back from them.
//
// Protobuf parses many byte strings as many message types, so a successful
// parse proves little; the checks below make a file of another kind an
// error wherever its bytes allow: fields the message does not have (a
// TensorProto's dims or raw_data read as a SequenceProto), values that do
// not agree with elem_type, an OptionalProto field given more than once (a
// SequenceProto of several tensors read as an optional), and each element
// checked as readTensorProto checks a file.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <onnx/onnx-data_pb.h>

#include <google/protobuf/unknown_field_set.h>

#include <limits>
#include <set>

using namespace strata::tio;
using Kind = HostValue::Kind;

//===----------------------------------------------------------------------===//
// HostValue and ValueType
//===----------------------------------------------------------------------===//

HostValue HostValue::fromTensor(HostTensor tensor) {
  HostValue value;
  value.kind = Kind::Tensor;
  value.tensor = std::move(tensor);
  return value;
}

HostValue HostValue::sequence(std::vector<HostValue> elements) {
  HostValue value;
  value.kind = Kind::Sequence;
  value.elements = std::move(elements);
  return value;
}

HostValue HostValue::optional() {
  HostValue value;
  value.kind = Kind::Optional;
  return value;
}

HostValue HostValue::optional(HostValue held) {
  HostValue value;
  value.kind = Kind::Optional;
  value.elements.push_back(std::move(held));
  return value;
}

std::string HostValue::describe() const {
  if (kind == Kind::Tensor)
    return tensor.describe();
  std::string text = kind == Kind::Sequence ? "seq[" : "opt[";
  constexpr size_t shown = 8;
  for (size_t i = 0; i < elements.size() && i < shown; ++i)
    text += (i ? ", " : "") + elements[i].describe();
  if (elements.size() > shown)
    text += ", ... (" + std::to_string(elements.size()) + " elements)";
  return text + "]";
}

const char *strata::tio::valueKindName(Kind kind) {
  switch (kind) {
  case Kind::Tensor:
    return "tensor";
  case Kind::Sequence:
    return "sequence";
  case Kind::Optional:
    return "optional";
  }
  return "unknown";
}

ValueType ValueType::tensor() { return ValueType(); }

ValueType ValueType::sequenceOf(ValueType element) {
  ValueType type;
  type.kind = Kind::Sequence;
  type.element.push_back(std::move(element));
  return type;
}

ValueType ValueType::optionalOf(ValueType element) {
  ValueType type;
  type.kind = Kind::Optional;
  type.element.push_back(std::move(element));
  return type;
}

std::string ValueType::describe() const {
  if (kind == Kind::Tensor)
    return "tensor";
  std::string inner = element.size() == 1 ? element[0].describe() : "?";
  return (kind == Kind::Sequence ? "seq<" : "opt<") + inner + ">";
}

bool ValueType::operator==(const ValueType &other) const {
  return kind == other.kind && element == other.element;
}

namespace {

/// The element type of a sequence or optional type; throws for a malformed
/// ValueType (built by hand without its element).
const ValueType &elementOf(const ValueType &type, const std::string &what) {
  if (type.element.size() != 1)
    throw TensorIOError(what + ": the declared type " + type.describe() +
                        " has " + std::to_string(type.element.size()) +
                        " element types (a " + valueKindName(type.kind) +
                        " has one)");
  return type.element[0];
}

//===----------------------------------------------------------------------===//
// Model signatures
//===----------------------------------------------------------------------===//

ValueType convertType(const onnx::TypeProto &type, const std::string &what) {
  switch (type.value_case()) {
  case onnx::TypeProto::kTensorType:
    return ValueType::tensor();
  case onnx::TypeProto::kSequenceType:
    if (!type.sequence_type().has_elem_type())
      throw TensorIOError(what + " is a sequence without an element type");
    return ValueType::sequenceOf(
        convertType(type.sequence_type().elem_type(), what));
  case onnx::TypeProto::kOptionalType:
    if (!type.optional_type().has_elem_type())
      throw TensorIOError(what + " is an optional without an element type");
    return ValueType::optionalOf(
        convertType(type.optional_type().elem_type(), what));
  case onnx::TypeProto::kMapType:
    throw TensorIOError(what + " is or holds a map, which is not supported");
  case onnx::TypeProto::kSparseTensorType:
    throw TensorIOError(what +
                        " is or holds a sparse tensor, which is not supported");
  default:
    throw TensorIOError(what + " has no type");
  }
}

ModelSignature parseSignature(const uint8_t *data, size_t size,
                              const std::string &path) {
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw TensorIOError(path + ": file too large for an ONNX model");
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    throw TensorIOError(path + ": not a valid ONNX model (onnx.ModelProto "
                               "parse error)");
  if (!model.has_graph())
    throw TensorIOError(path + ": the ONNX model has no graph");
  const onnx::GraphProto &graph = model.graph();
  std::set<std::string> initializers;
  for (const onnx::TensorProto &init : graph.initializer())
    initializers.insert(init.name());
  ModelSignature signature;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    signature.inputs.emplace_back(
        input.name(),
        convertType(input.type(), path + ": input '" + input.name() + "'"));
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    signature.outputs.emplace_back(
        output.name(),
        convertType(output.type(), path + ": output '" + output.name() + "'"));
  return signature;
}

//===----------------------------------------------------------------------===//
// SequenceProto and OptionalProto
//===----------------------------------------------------------------------===//

// SequenceProto and OptionalProto number their elem_type values alike.
static_assert(static_cast<int>(onnx::SequenceProto::TENSOR) ==
                  static_cast<int>(onnx::OptionalProto::TENSOR) &&
              static_cast<int>(onnx::SequenceProto::SEQUENCE) ==
                  static_cast<int>(onnx::OptionalProto::SEQUENCE) &&
              static_cast<int>(onnx::SequenceProto::OPTIONAL) ==
                  static_cast<int>(onnx::OptionalProto::OPTIONAL) &&
              static_cast<int>(onnx::SequenceProto::MAP) ==
                  static_cast<int>(onnx::OptionalProto::MAP) &&
              static_cast<int>(onnx::SequenceProto::SPARSE_TENSOR) ==
                  static_cast<int>(onnx::OptionalProto::SPARSE_TENSOR));

/// The elem_type that holds values of \p kind.
int elemTypeFor(Kind kind) {
  switch (kind) {
  case Kind::Tensor:
    return onnx::SequenceProto::TENSOR;
  case Kind::Sequence:
    return onnx::SequenceProto::SEQUENCE;
  case Kind::Optional:
    return onnx::SequenceProto::OPTIONAL;
  }
  return onnx::SequenceProto::UNDEFINED;
}

/// "a tensor", "a seq<tensor>", "an opt<tensor>".
std::string withArticle(const ValueType &type) {
  return (type.kind == Kind::Optional ? "an " : "a ") + type.describe();
}

std::string elemTypeName(int elemType) {
  if (onnx::SequenceProto::DataType_IsValid(elemType))
    return onnx::SequenceProto::DataType_Name(
        static_cast<onnx::SequenceProto::DataType>(elemType));
  return "unknown elem_type " + std::to_string(elemType);
}

/// Refuses fields the message type does not have (what another message
/// type's bytes leave behind).
void checkNoUnknownFields(const google::protobuf::Message &message,
                          const char *typeName, const std::string &what) {
  if (!message.GetReflection()->GetUnknownFields(message).empty())
    throw TensorIOError(what + ": not an onnx." + typeName +
                        " (it has fields an onnx." + typeName +
                        " does not; is it another kind of value?)");
}

HostValue convertTensor(const onnx::TensorProto &proto,
                        const std::string &what) {
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    throw TensorIOError(what + ": cannot re-encode the tensor");
  return HostValue::fromTensor(
      parseTensorProto(reinterpret_cast<const uint8_t *>(bytes.data()),
                       bytes.size(), what)
          .tensor);
}

HostValue convertSequence(const onnx::SequenceProto &proto,
                          const ValueType &type, const std::string &what);
HostValue convertOptional(const onnx::OptionalProto &proto,
                          const ValueType &type, const std::string &what);

/// Checks a container's elem_type against the values it holds and against
/// the declared element type; false for an UNDEFINED elem_type.
bool checkElemType(int elemType, const char *typeName,
                   const std::vector<std::pair<int, int>> &heldCounts,
                   const ValueType &declared, const std::string &what) {
  if (!onnx::SequenceProto::DataType_IsValid(elemType))
    throw TensorIOError(what + ": onnx." + typeName + " with " +
                        elemTypeName(elemType));
  if (elemType == onnx::SequenceProto::MAP ||
      elemType == onnx::SequenceProto::SPARSE_TENSOR)
    throw TensorIOError(what + ": onnx." + typeName + " of " +
                        elemTypeName(elemType) +
                        " values, which are not supported");
  // heldCounts: (elem_type whose field it is, how many values it holds).
  for (auto [fieldType, count] : heldCounts)
    if (count && fieldType != elemType)
      throw TensorIOError(what + ": onnx." + typeName + " with elem_type " +
                          elemTypeName(elemType) + " holds " +
                          elemTypeName(fieldType) + " values");
  if (elemType == onnx::SequenceProto::UNDEFINED)
    return false;
  if (elemType != elemTypeFor(declared.kind))
    throw TensorIOError(what + ": holds " + elemTypeName(elemType) +
                        " values where the model declares " +
                        withArticle(declared));
  return true;
}

HostValue convertSequence(const onnx::SequenceProto &proto,
                          const ValueType &type, const std::string &what) {
  checkNoUnknownFields(proto, "SequenceProto", what);
  const ValueType &element = elementOf(type, what);
  checkElemType(
      proto.elem_type(), "SequenceProto",
      {{onnx::SequenceProto::TENSOR, proto.tensor_values_size()},
       {onnx::SequenceProto::SPARSE_TENSOR, proto.sparse_tensor_values_size()},
       {onnx::SequenceProto::SEQUENCE, proto.sequence_values_size()},
       {onnx::SequenceProto::MAP, proto.map_values_size()},
       {onnx::SequenceProto::OPTIONAL, proto.optional_values_size()}},
      element, what);
  // An UNDEFINED elem_type with no values (checked above) is an empty
  // sequence.
  HostValue value = HostValue::sequence({});
  auto at = [&](int i) { return what + ": element " + std::to_string(i); };
  for (int i = 0; i < proto.tensor_values_size(); ++i)
    value.elements.push_back(convertTensor(proto.tensor_values(i), at(i)));
  for (int i = 0; i < proto.sequence_values_size(); ++i)
    value.elements.push_back(
        convertSequence(proto.sequence_values(i), element, at(i)));
  for (int i = 0; i < proto.optional_values_size(); ++i)
    value.elements.push_back(
        convertOptional(proto.optional_values(i), element, at(i)));
  return value;
}

HostValue convertOptional(const onnx::OptionalProto &proto,
                          const ValueType &type, const std::string &what) {
  checkNoUnknownFields(proto, "OptionalProto", what);
  const ValueType &element = elementOf(type, what);
  bool defined = checkElemType(
      proto.elem_type(), "OptionalProto",
      {{onnx::OptionalProto::TENSOR, proto.has_tensor_value()},
       {onnx::OptionalProto::SPARSE_TENSOR, proto.has_sparse_tensor_value()},
       {onnx::OptionalProto::SEQUENCE, proto.has_sequence_value()},
       {onnx::OptionalProto::MAP, proto.has_map_value()},
       {onnx::OptionalProto::OPTIONAL, proto.has_optional_value()}},
      element, what);
  if (!defined)
    return HostValue::optional();
  std::string held = what + ": its value";
  switch (element.kind) {
  case Kind::Tensor:
    if (!proto.has_tensor_value())
      break;
    return HostValue::optional(convertTensor(proto.tensor_value(), held));
  case Kind::Sequence:
    if (!proto.has_sequence_value())
      break;
    return HostValue::optional(
        convertSequence(proto.sequence_value(), element, held));
  case Kind::Optional:
    if (!proto.has_optional_value())
      break;
    return HostValue::optional(
        convertOptional(proto.optional_value(), element, held));
  }
  throw TensorIOError(what + ": onnx.OptionalProto with elem_type " +
                      elemTypeName(proto.elem_type()) + " holds no value");
}

/// An OptionalProto's value fields are singular, and protobuf merges a
/// field given twice; a SequenceProto's repeated values (the same field
/// numbers) would so read as one merged value. Refuses that.
void checkSingularValues(const uint8_t *data, size_t size,
                         const std::string &what) {
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromArray(data, static_cast<int>(size)))
    return; // the typed parse has reported it
  std::map<int, int> counts;
  for (int i = 0; i < fields.field_count(); ++i)
    if (fields.field(i).number() >= 3 && ++counts[fields.field(i).number()] > 1)
      throw TensorIOError(what + ": not an onnx.OptionalProto (it holds more "
                                 "than one value; is it a SequenceProto?)");
}

HostValue parseValueBytes(const uint8_t *data, size_t size,
                          const ValueType &type, const std::string &what) {
  if (type.kind == Kind::Tensor)
    return HostValue::fromTensor(parseTensorProto(data, size, what).tensor);
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw TensorIOError(what + ": file too large for a " +
                        valueKindName(type.kind));
  if (type.kind == Kind::Sequence) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromArray(data, static_cast<int>(size)))
      throw TensorIOError(what +
                          ": not a valid onnx.SequenceProto (parse error)");
    return convertSequence(proto, type, what);
  }
  onnx::OptionalProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    throw TensorIOError(what +
                        ": not a valid onnx.OptionalProto (parse error)");
  checkSingularValues(data, size, what);
  return convertOptional(proto, type, what);
}

/// Whether the value of \p type named \p name has any leaf.
bool hasLeaves(
    const std::string &name, const ValueType &type,
    const std::function<const HostTensor *(const std::string &)> &lookup) {
  if (type.kind == Kind::Tensor)
    return lookup(name) != nullptr;
  return hasLeaves(name + "[0]", elementOf(type, name), lookup);
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

CompareResult failed(const std::string &where, const std::string &message,
                     double rtol, double atol) {
  CompareResult result;
  result.rtol = rtol;
  result.atol = atol;
  result.message = (where.empty() ? "" : "element " + where + ": ") + message;
  return result;
}

/// Compares \p actual and \p expected, found at the element path \p where
/// ("" at the top, "2", "1.0"), adding passing tensors' counts to \p total.
/// Returns the first failure, or a passed result.
CompareResult compareValues(const HostValue &actual, const HostValue &expected,
                            double rtol, double atol, const std::string &where,
                            CompareResult &total) {
  if (actual.kind != expected.kind)
    return failed(where,
                  std::string("kind mismatch: actual is a ") +
                      valueKindName(actual.kind) + " (" + actual.describe() +
                      "), expected a " + valueKindName(expected.kind) + " (" +
                      expected.describe() + ")",
                  rtol, atol);
  if (actual.kind == Kind::Tensor) {
    CompareResult result = allClose(actual.tensor, expected.tensor, rtol, atol);
    if (!result.passed) {
      if (!where.empty())
        // summary() without its "FAILED: ", named after the element.
        result.message = "element " + where + ": " + result.summary().substr(8);
      return result;
    }
    total.numElements += result.numElements;
    total.maxAbsError = std::max(total.maxAbsError, result.maxAbsError);
    total.maxRelError = std::max(total.maxRelError, result.maxRelError);
    return result;
  }
  if (actual.kind == Kind::Sequence &&
      actual.elements.size() != expected.elements.size())
    return failed(where,
                  "sequence length mismatch: actual " +
                      std::to_string(actual.elements.size()) +
                      " elements, expected " +
                      std::to_string(expected.elements.size()),
                  rtol, atol);
  if (actual.kind == Kind::Optional &&
      actual.elements.empty() != expected.elements.empty())
    return failed(where,
                  std::string("optional mismatch: actual ") +
                      (actual.elements.empty()
                           ? "is empty"
                           : "holds " + actual.elements[0].describe()) +
                      ", expected " +
                      (expected.elements.empty()
                           ? "empty"
                           : "to hold " + expected.elements[0].describe()),
                  rtol, atol);
  for (size_t i = 0; i < actual.elements.size(); ++i) {
    std::string inner = (where.empty() ? "" : where + ".") + std::to_string(i);
    CompareResult result = compareValues(
        actual.elements[i], expected.elements[i], rtol, atol, inner, total);
    if (!result.passed)
      return result;
  }
  CompareResult result;
  result.passed = true;
  return result;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

ModelSignature strata::tio::readModelSignature(const std::string &modelPath) {
  return detail::reportingOutOfMemory(modelPath, [&] {
    std::vector<uint8_t> bytes = detail::readFileBytes(modelPath);
    return parseSignature(bytes.data(), bytes.size(), modelPath);
  });
}

HostValue strata::tio::parseValueProto(const uint8_t *data, size_t size,
                                       const ValueType &type,
                                       const std::string &what) {
  return detail::reportingOutOfMemory(
      what, [&] { return parseValueBytes(data, size, type, what); });
}

HostValue strata::tio::readValueProto(const std::string &path,
                                      const ValueType &type) {
  std::vector<uint8_t> bytes = detail::readFileBytes(path);
  return parseValueProto(bytes.data(), bytes.size(), type, path);
}

void strata::tio::flattenValue(
    const std::string &name, const HostValue &value,
    std::vector<std::pair<std::string, HostTensor>> &leaves,
    std::map<std::string, std::vector<int64_t>> &bindings) {
  switch (value.kind) {
  case Kind::Tensor:
    leaves.emplace_back(name, value.tensor);
    bindings[name] = value.tensor.shape;
    return;
  case Kind::Sequence:
  case Kind::Optional:
    if (value.kind == Kind::Optional && value.elements.size() > 1)
      throw TensorIOError("optional '" + name + "' holds " +
                          std::to_string(value.elements.size()) +
                          " values (at most one)");
    bindings[name] = {static_cast<int64_t>(value.elements.size())};
    for (size_t i = 0; i < value.elements.size(); ++i)
      flattenValue(name + "[" + std::to_string(i) + "]", value.elements[i],
                   leaves, bindings);
    return;
  }
}

HostValue strata::tio::assembleValue(
    const std::string &name, const ValueType &type,
    const std::function<const HostTensor *(const std::string &)> &lookup) {
  if (type.kind == Kind::Tensor) {
    const HostTensor *tensor = lookup(name);
    if (!tensor)
      throw TensorIOError("no tensor named '" + name + "'");
    return HostValue::fromTensor(*tensor);
  }
  const ValueType &element = elementOf(type, name);
  if (type.kind == Kind::Optional) {
    std::string held = name + "[0]";
    if (!hasLeaves(held, element, lookup))
      return HostValue::optional();
    return HostValue::optional(assembleValue(held, element, lookup));
  }
  HostValue value = HostValue::sequence({});
  for (size_t i = 0;; ++i) {
    std::string item = name + "[" + std::to_string(i) + "]";
    if (!hasLeaves(item, element, lookup))
      return value;
    value.elements.push_back(assembleValue(item, element, lookup));
  }
}

CompareResult strata::tio::allClose(const HostValue &actual,
                                    const HostValue &expected, double rtol,
                                    double atol) {
  if (actual.kind == Kind::Tensor && expected.kind == Kind::Tensor)
    return allClose(actual.tensor, expected.tensor, rtol, atol);
  CompareResult total;
  total.rtol = rtol;
  total.atol = atol;
  CompareResult result = compareValues(actual, expected, rtol, atol, "", total);
  if (!result.passed)
    return result;
  total.passed = true;
  return total;
}
