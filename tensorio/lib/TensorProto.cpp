//===- TensorProto.cpp - ONNX TensorProto files -----------------*- C++ -*-===//
//
// The ONNX test data stores each input and output as a serialized
// onnx.TensorProto. Writers put the data either in raw_data (little-endian
// bytes) or in one of the typed repeated fields, whose choice depends on the
// element type (onnx.proto: FLOAT16, BFLOAT16, BOOL and the small integer
// types all live in int32_data). Protobuf parses almost any bytes as some
// message, so a successful parse proves little: the element count implied by
// dims is checked against the data actually present before any copy, which
// also catches files holding a SequenceProto or OptionalProto instead.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <limits>

using namespace strata::tio;
using onnx::TensorProto;

namespace {
std::optional<ElementType> fromOnnxType(int32_t dataType) {
  switch (dataType) {
  case TensorProto::FLOAT:
    return ElementType::F32;
  case TensorProto::DOUBLE:
    return ElementType::F64;
  case TensorProto::FLOAT16:
    return ElementType::F16;
  case TensorProto::BFLOAT16:
    return ElementType::BF16;
  case TensorProto::BOOL:
    return ElementType::Bool;
  case TensorProto::INT8:
    return ElementType::I8;
  case TensorProto::INT16:
    return ElementType::I16;
  case TensorProto::INT32:
    return ElementType::I32;
  case TensorProto::INT64:
    return ElementType::I64;
  case TensorProto::UINT8:
    return ElementType::U8;
  case TensorProto::UINT16:
    return ElementType::U16;
  case TensorProto::UINT32:
    return ElementType::U32;
  case TensorProto::UINT64:
    return ElementType::U64;
  case TensorProto::STRING:
    return ElementType::String;
  default:
    return std::nullopt;
  }
}

TensorProto::DataType toOnnxType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return TensorProto::FLOAT;
  case ElementType::F64:
    return TensorProto::DOUBLE;
  case ElementType::F16:
    return TensorProto::FLOAT16;
  case ElementType::BF16:
    return TensorProto::BFLOAT16;
  case ElementType::Bool:
    return TensorProto::BOOL;
  case ElementType::I8:
    return TensorProto::INT8;
  case ElementType::I16:
    return TensorProto::INT16;
  case ElementType::I32:
    return TensorProto::INT32;
  case ElementType::I64:
    return TensorProto::INT64;
  case ElementType::U8:
    return TensorProto::UINT8;
  case ElementType::U16:
    return TensorProto::UINT16;
  case ElementType::U32:
    return TensorProto::UINT32;
  case ElementType::U64:
    return TensorProto::UINT64;
  case ElementType::String:
    return TensorProto::STRING;
  }
  return TensorProto::UNDEFINED;
}

std::string onnxTypeName(int32_t dataType) {
  if (TensorProto::DataType_IsValid(dataType))
    return TensorProto::DataType_Name(
        static_cast<TensorProto::DataType>(dataType));
  return "unknown data_type " + std::to_string(dataType);
}

/// Copies a repeated field into \p out, narrowing each value to Target after
/// checking its range (int32_data holding 300 for an int8 tensor is a broken
/// file, not something to wrap silently).
template <typename Target, typename Field>
void copyNarrowed(const Field &field, int64_t lo, int64_t hi,
                  std::vector<uint8_t> &out, const std::string &what,
                  const char *fieldName) {
  for (int i = 0; i < field.size(); ++i) {
    auto value = static_cast<int64_t>(field.Get(i));
    if (value < lo || value > hi)
      throw TensorIOError(what + ": " + fieldName + "[" + std::to_string(i) +
                          "] = " + std::to_string(value) +
                          " is out of range for the tensor's type");
    Target narrowed = static_cast<Target>(value);
    std::memcpy(out.data() + i * sizeof(Target), &narrowed, sizeof(Target));
  }
}
} // namespace

static NamedTensor parseTensorProtoBytes(const uint8_t *data, size_t size,
                                         const std::string &what);

NamedTensor strata::tio::parseTensorProto(const uint8_t *data, size_t size,
                                          const std::string &what) {
  return detail::reportingOutOfMemory(
      what, [&] { return parseTensorProtoBytes(data, size, what); });
}

static NamedTensor parseTensorProtoBytes(const uint8_t *data, size_t size,
                                         const std::string &what) {
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw TensorIOError(what + ": file too large for a TensorProto");
  TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    throw TensorIOError(what + ": not a valid onnx.TensorProto (parse error)");

  if (proto.data_type() == TensorProto::UNDEFINED)
    throw TensorIOError(what + ": TensorProto has no data_type (is it a "
                               "SequenceProto, MapProto or OptionalProto?)");
  std::optional<ElementType> type = fromOnnxType(proto.data_type());
  if (!type)
    throw TensorIOError(what + ": unsupported TensorProto element type " +
                        onnxTypeName(proto.data_type()));
  if (proto.data_location() == TensorProto::EXTERNAL)
    throw TensorIOError(what + ": TensorProto with external data is not "
                               "supported");
  if (proto.has_segment())
    // A SequenceProto or OptionalProto parses as a TensorProto whose field 3
    // (their element) lands in segment, so say so.
    throw TensorIOError(what + ": segmented TensorProto is not supported (or "
                               "the file holds a SequenceProto or "
                               "OptionalProto, not a tensor)");

  NamedTensor result;
  result.name = proto.name();
  HostTensor &tensor = result.tensor;
  tensor.type = *type;
  tensor.shape.assign(proto.dims().begin(), proto.dims().end());
  int64_t count = detail::checkedNumElements(tensor.shape, what);
  uint64_t byteSize = detail::checkedByteSize(count, *type, what);

  auto checkCount = [&](int fieldSize, const char *fieldName) {
    if (static_cast<uint64_t>(fieldSize) != static_cast<uint64_t>(count))
      throw TensorIOError(what + ": " + tensor.describe() + " needs " +
                          std::to_string(count) + " elements but " + fieldName +
                          " holds " + std::to_string(fieldSize));
  };

  if (*type == ElementType::String) {
    // Strings are only ever in string_data (onnx.proto: raw_data cannot
    // hold them).
    if (proto.has_raw_data())
      throw TensorIOError(what + ": a STRING TensorProto with raw_data (ONNX "
                                 "keeps strings in string_data)");
    checkCount(proto.string_data_size(), "string_data");
    detail::allocateOrThrow(
        what, std::to_string(count) + " strings for " + tensor.describe(), [&] {
          tensor.strings.assign(proto.string_data().begin(),
                                proto.string_data().end());
        });
    return result;
  }

  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != byteSize)
      throw TensorIOError(what + ": " + tensor.describe() + " needs " +
                          std::to_string(byteSize) +
                          " bytes but raw_data has " +
                          std::to_string(raw.size()));
    detail::allocateOrThrow(
        what,
        std::to_string(byteSize) + " bytes for the data of " +
            tensor.describe(),
        [&] { tensor.bytes.assign(raw.begin(), raw.end()); });
    if (*type == ElementType::Bool)
      for (uint8_t &b : tensor.bytes)
        b = b != 0; // raw bools are one byte each; normalise to 0/1
    return result;
  }

  // Check the element count against the field before allocating: dims come
  // from the file and may claim terabytes (a non-tensor file parsed as a
  // TensorProto often does).
  switch (*type) {
  case ElementType::F32:
    checkCount(proto.float_data_size(), "float_data");
    break;
  case ElementType::F64:
    checkCount(proto.double_data_size(), "double_data");
    break;
  case ElementType::I64:
    checkCount(proto.int64_data_size(), "int64_data");
    break;
  case ElementType::U32:
  case ElementType::U64:
    checkCount(proto.uint64_data_size(), "uint64_data");
    break;
  default:
    checkCount(proto.int32_data_size(), "int32_data");
    break;
  }
  detail::allocateOrThrow(what,
                          std::to_string(byteSize) + " bytes for the data of " +
                              tensor.describe(),
                          [&] { tensor.bytes.resize(byteSize); });
  // memcpy from an empty field's null data() is undefined even for 0 bytes.
  auto copyBytes = [&](const void *src) {
    if (byteSize)
      std::memcpy(tensor.bytes.data(), src, byteSize);
  };
  switch (*type) {
  case ElementType::F32:
    copyBytes(proto.float_data().data());
    break;
  case ElementType::F64:
    copyBytes(proto.double_data().data());
    break;
  case ElementType::I64:
    copyBytes(proto.int64_data().data());
    break;
  case ElementType::I32:
    copyBytes(proto.int32_data().data());
    break;
  case ElementType::I16:
    copyNarrowed<int16_t>(proto.int32_data(), INT16_MIN, INT16_MAX,
                          tensor.bytes, what, "int32_data");
    break;
  case ElementType::I8:
    copyNarrowed<int8_t>(proto.int32_data(), INT8_MIN, INT8_MAX, tensor.bytes,
                         what, "int32_data");
    break;
  case ElementType::U8:
    copyNarrowed<uint8_t>(proto.int32_data(), 0, UINT8_MAX, tensor.bytes, what,
                          "int32_data");
    break;
  case ElementType::Bool:
    copyNarrowed<uint8_t>(proto.int32_data(), 0, 1, tensor.bytes, what,
                          "int32_data");
    break;
  case ElementType::U16:
  case ElementType::F16:
  case ElementType::BF16:
    // FLOAT16 and BFLOAT16 values are stored as their uint16 bit patterns.
    copyNarrowed<uint16_t>(proto.int32_data(), 0, UINT16_MAX, tensor.bytes,
                           what, "int32_data");
    break;
  case ElementType::U32:
    copyNarrowed<uint32_t>(proto.uint64_data(), 0, UINT32_MAX, tensor.bytes,
                           what, "uint64_data");
    break;
  case ElementType::U64:
    copyBytes(proto.uint64_data().data());
    break;
  case ElementType::String:
    break; // read above
  }
  return result;
}

NamedTensor strata::tio::readTensorProto(const std::string &path) {
  std::vector<uint8_t> bytes = detail::readFileBytes(path);
  return parseTensorProto(bytes.data(), bytes.size(), path);
}

std::string strata::tio::encodeTensorProto(const HostTensor &tensor,
                                           const std::string &name) {
  tensor.validate();
  TensorProto proto;
  if (!name.empty())
    proto.set_name(name);
  proto.set_data_type(toOnnxType(tensor.type));
  for (int64_t dim : tensor.shape)
    proto.add_dims(dim);
  if (tensor.type == ElementType::String)
    for (const std::string &s : tensor.strings)
      proto.add_string_data(s);
  else
    proto.set_raw_data(tensor.bytes.data(), tensor.bytes.size());
  std::string out;
  if (!proto.SerializeToString(&out))
    throw TensorIOError("cannot serialize " + tensor.describe() +
                        " as a TensorProto");
  return out;
}

void strata::tio::writeTensorProto(const std::string &path,
                                   const HostTensor &tensor,
                                   const std::string &name) {
  std::string bytes = encodeTensorProto(tensor, name);
  detail::writeFileBytes(path, bytes.data(), bytes.size());
}
