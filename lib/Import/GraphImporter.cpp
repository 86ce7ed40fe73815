//===- GraphImporter.cpp - ONNX graph to func.func -------------*- C++ -*-===//
//
// Converts a loaded, checked and shape-inferred ONNX graph (and its
// subgraphs) into graph-dialect ops: types, initializers, then each node
// through its registered converter, reporting every problem it finds.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/schema.h>

#include <cstring>

using namespace mlir;

namespace strata::onnx_import {

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

GraphImporter::GraphImporter(MLIRContext *context, StringRef fileName,
                             int64_t opset, const ConverterRegistry &registry)
    : ctx(context), b(context), fileName(fileName.str()), opset(opset),
      registry(registry) {}

Value GraphImporter::lookup(const std::string &name) const {
  auto it = values.find(name);
  return it == values.end() ? Value() : it->second;
}

void GraphImporter::bind(const std::string &name, Value value) {
  values[name] = value;
}

Type GraphImporter::knownType(const std::string &name) const {
  auto it = valueTypes.find(name);
  if (it == valueTypes.end())
    return {};
  std::string ignored;
  return convertTypeProto(*it->second, ignored);
}

Type GraphImporter::convertTypeProto(const onnx::TypeProto &type,
                                     std::string &whyNot) const {
  if (type.has_sequence_type()) {
    if (!type.sequence_type().has_elem_type()) {
      whyNot = "a sequence type without an element type";
      return {};
    }
    Type element = convertTypeProto(type.sequence_type().elem_type(), whyNot);
    return element ? graph::SequenceType::get(ctx, element) : Type();
  }
  if (type.has_optional_type()) {
    if (!type.optional_type().has_elem_type()) {
      whyNot = "an optional type without an element type";
      return {};
    }
    Type element = convertTypeProto(type.optional_type().elem_type(), whyNot);
    return element ? graph::OptionalType::get(ctx, element) : Type();
  }
  if (!type.has_tensor_type()) {
    whyNot = type.has_map_type() ? "a map type" : "an unknown kind of type";
    return {};
  }
  int32_t elem = type.tensor_type().elem_type();
  Type element = convertElementType(ctx, elem);
  if (!element) {
    whyNot = "element type " + elementTypeName(elem);
    return {};
  }
  if (!type.tensor_type().has_shape())
    return UnrankedTensorType::get(element);
  SmallVector<int64_t> shape;
  for (const auto &dim : type.tensor_type().shape().dim())
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                        ? dim.dim_value()
                        : ShapedType::kDynamic);
  return RankedTensorType::get(shape, element);
}

Type GraphImporter::convertType(const onnx::TypeProto &type, Location loc,
                                StringRef what) {
  std::string whyNot;
  Type result = convertTypeProto(type, whyNot);
  if (!result)
    emitError(loc) << what << " has " << whyNot
                   << ", which strata does not support";
  return result;
}

FailureOr<ElementsAttr>
GraphImporter::convertTensor(const onnx::TensorProto &tensor, Location loc) {
  using TP = onnx::TensorProto;
  std::string name = tensor.name().empty() ? "<constant>" : tensor.name();
  Type element = convertElementType(ctx, tensor.data_type());
  if (!element) {
    emitError(loc) << "tensor '" << name << "' has element type "
                   << elementTypeName(tensor.data_type())
                   << ", which strata does not support";
    return failure();
  }
  if (tensor.data_type() == TP::STRING) {
    SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
    int64_t count = 1;
    for (int64_t dim : shape) {
      if (dim < 0) {
        emitError(loc) << "tensor '" << name << "' has an invalid dimension "
                       << dim;
        return failure();
      }
      count *= dim;
    }
    if (count != tensor.string_data_size()) {
      emitError(loc) << "tensor '" << name << "' holds "
                     << tensor.string_data_size()
                     << " strings but its shape needs " << count;
      return failure();
    }
    SmallVector<StringRef> strings(tensor.string_data().begin(),
                                   tensor.string_data().end());
    return cast<ElementsAttr>(DenseStringElementsAttr::get(
        RankedTensorType::get(shape, element), strings));
  }
  if (tensor.data_location() == TP::EXTERNAL) {
    emitError(loc) << "tensor '" << name
                   << "' still refers to external data after loading";
    return failure();
  }
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0 || (dim > 0 && count > (int64_t(1) << 40) / dim)) {
      emitError(loc) << "tensor '" << name << "' has an invalid dimension "
                     << dim;
      return failure();
    }
    shape.push_back(dim);
    count *= dim;
  }
  auto type = RankedTensorType::get(shape, element);
  unsigned bits = element.getIntOrFloatBitWidth();
  unsigned bytes = bits == 1 ? 1 : bits / 8;

  // Gather the values as raw little-endian bytes of the element width.
  std::string raw;
  if (tensor.has_raw_data()) {
    raw = tensor.raw_data();
  } else {
    switch (tensor.data_type()) {
    case TP::FLOAT:
      raw.assign(reinterpret_cast<const char *>(tensor.float_data().data()),
                 tensor.float_data_size() * 4);
      break;
    case TP::DOUBLE:
      raw.assign(reinterpret_cast<const char *>(tensor.double_data().data()),
                 tensor.double_data_size() * 8);
      break;
    case TP::INT64:
      raw.assign(reinterpret_cast<const char *>(tensor.int64_data().data()),
                 tensor.int64_data_size() * 8);
      break;
    case TP::UINT32:
    case TP::UINT64:
      for (uint64_t v : tensor.uint64_data())
        raw.append(reinterpret_cast<const char *>(&v), bytes);
      break;
    default: // int32_data holds every narrower type, one value per entry.
      for (int32_t v : tensor.int32_data())
        raw.append(reinterpret_cast<const char *>(&v), bytes);
      break;
    }
  }
  if (int64_t(raw.size()) != count * int64_t(bytes)) {
    emitError(loc) << "tensor '" << name << "' holds " << raw.size() / bytes
                   << " values but its shape [" << shape << "] needs " << count;
    return failure();
  }
  if (element.isInteger(1)) {
    SmallVector<bool> bools;
    for (char c : raw)
      bools.push_back(c != 0);
    return cast<ElementsAttr>(DenseElementsAttr::get(type, bools));
  }
  return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(raw.data(), raw.size())));
}

/// Converters may assume every input the operator's schema marks as required
/// is present; a model that omits one is reported here.
static LogicalResult checkRequiredInputs(NodeImporter &importer,
                                         const onnx::NodeProto &node) {
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), int(importer.opset()), node.domain());
  if (!schema)
    return success(); // Unknown ops are reported by the converter lookup.
  const auto &formals = schema->inputs();
  for (size_t i = 0; i < formals.size(); ++i) {
    if (formals[i].GetOption() != onnx::OpSchema::Single)
      continue;
    if (int(i) >= node.input_size() || node.input(i).empty())
      return importer.fail("required input " + Twine(i) + " ('" +
                           formals[i].GetName() + "') is missing");
  }
  return success();
}

Location GraphImporter::nodeLocation(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty()
                         ? node.op_type() + "#" + std::to_string(index)
                         : node.name();
  return NameLoc::get(StringAttr::get(ctx, name));
}

void GraphImporter::recordValueTypes(const onnx::GraphProto &graph) {
  for (const auto &vi : graph.input())
    valueTypes[vi.name()] = &vi.type();
  for (const auto &vi : graph.value_info())
    valueTypes[vi.name()] = &vi.type();
  for (const auto &vi : graph.output())
    valueTypes[vi.name()] = &vi.type();
}

bool GraphImporter::importInitializers(const onnx::GraphProto &graph) {
  bool ok = true;
  if (graph.sparse_initializer_size() > 0) {
    emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
        << "sparse initializers are not supported ('"
        << graph.sparse_initializer(0).values().name() << "')";
    ok = false;
  }
  for (const auto &init : graph.initializer()) {
    Location loc = NameLoc::get(b.getStringAttr(init.name()));
    auto attr = convertTensor(init, loc);
    if (failed(attr)) {
      ok = false;
      continue;
    }
    bind(init.name(), graph::ConstantOp::create(b, loc, *attr));
  }
  return ok;
}

bool GraphImporter::importNodes(const onnx::GraphProto &graph) {
  bool ok = true;
  for (auto [index, item] : llvm::enumerate(graph.node())) {
    const onnx::NodeProto &node = item;
    Location loc = nodeLocation(node, index);
    NodeImporter importer(*this, node, loc, opset);
    auto poisonOutputs = [&] {
      for (const auto &out : node.output())
        poisoned.insert(out);
    };
    bool skip = false;
    for (const auto &in : node.input()) {
      if (in.empty() || lookup(in))
        continue;
      if (!poisoned.contains(in))
        importer.emitError("input '" + in + "' is not defined before use");
      skip = true;
    }
    if (skip) {
      ok = false;
      poisonOutputs();
      continue;
    }
    if (failed(checkRequiredInputs(importer, node))) {
      ok = false;
      poisonOutputs();
      continue;
    }
    const ConvertFn *convert = registry.lookup(node.domain(), node.op_type());
    if (!convert) {
      importer.emitError("unsupported operator");
      ok = false;
      poisonOutputs();
      continue;
    }
    LogicalResult converted = failure();
    try {
      converted = (*convert)(importer);
    } catch (const std::exception &e) {
      importer.emitError(Twine("conversion failed: ") + e.what());
    }
    for (const std::string &attr : importer.unreadAttributes())
      importer.emitError("unsupported attribute '" + attr + "'");
    if (failed(converted) || importer.hadError()) {
      if (!importer.hadError())
        importer.emitError("conversion failed");
      ok = false;
      poisonOutputs();
      continue;
    }
    for (const auto &out : node.output())
      if (!out.empty() && !lookup(out)) {
        importer.emitError("output '" + out + "' is not produced");
        ok = false;
        poisoned.insert(out);
      }
  }
  return ok;
}

LogicalResult GraphImporter::importSubgraph(const onnx::GraphProto &graph,
                                            Region &region,
                                            ArrayRef<Type> argTypes,
                                            Location loc) {
  // Subgraph names shadow outer ones only inside the subgraph.
  llvm::StringMap<Value> outer = values;
  OpBuilder::InsertionGuard guard(b);
  recordValueTypes(graph);
  Block *block = b.createBlock(&region);
  bool ok = true;
  for (auto [i, vi] : llvm::enumerate(graph.input())) {
    Type type =
        i < argTypes.size() && argTypes[i]
            ? argTypes[i]
            : convertType(vi.type(), loc, "subgraph input '" + vi.name() + "'");
    if (!type) {
      ok = false;
      type = UnrankedTensorType::get(Float32Type::get(ctx));
    }
    bind(vi.name(), block->addArgument(type, loc));
  }
  ok &= importInitializers(graph);
  ok &= importNodes(graph);
  SmallVector<Value> results;
  for (const auto &vi : graph.output()) {
    if (Value v = lookup(vi.name())) {
      results.push_back(v);
      continue;
    }
    if (!poisoned.contains(vi.name()))
      emitError(loc) << "subgraph output '" << vi.name()
                     << "' is not produced by any node";
    ok = false;
  }
  if (ok)
    graph::YieldOp::create(b, loc, results);
  values = std::move(outer);
  return success(ok);
}

LogicalResult GraphImporter::importGraph(const onnx::GraphProto &graph,
                                         ModuleOp module, StringRef name) {
  bool ok = true;
  Location fileLoc = FileLineColLoc::get(ctx, fileName, 0, 0);
  recordValueTypes(graph);

  llvm::StringSet<> initializers;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());

  // Function arguments: graph inputs that are not initializers.
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> args;
  for (const auto &vi : graph.input()) {
    if (initializers.contains(vi.name()))
      continue;
    Type type =
        convertType(vi.type(), fileLoc, "graph input '" + vi.name() + "'");
    if (!type) {
      ok = false;
      type = UnrankedTensorType::get(Float32Type::get(ctx));
    }
    argTypes.push_back(type);
    args.push_back(&vi);
  }

  b.setInsertionPointToEnd(module.getBody());
  auto func =
      func::FuncOp::create(b, fileLoc, name, b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  auto dimParams = [&](const onnx::TypeProto &type) -> ArrayAttr {
    if (!type.has_tensor_type() || !type.tensor_type().has_shape())
      return {};
    SmallVector<Attribute> names;
    bool any = false;
    for (const auto &dim : type.tensor_type().shape().dim()) {
      names.push_back(b.getStringAttr(dim.dim_param()));
      any |= !dim.dim_param().empty();
    }
    return any ? b.getArrayAttr(names) : ArrayAttr();
  };
  for (auto [i, vi] : llvm::enumerate(args)) {
    bind(vi->name(), entry->getArgument(i));
    func.setArgAttr(i, "graph.name", b.getStringAttr(vi->name()));
    if (ArrayAttr params = dimParams(vi->type()))
      func.setArgAttr(i, "graph.dim_params", params);
  }

  ok &= importInitializers(graph);
  ok &= importNodes(graph);

  SmallVector<Value> results;
  for (const auto &vi : graph.output()) {
    Value v = lookup(vi.name());
    if (!v) {
      if (!poisoned.contains(vi.name()))
        emitError(fileLoc) << "graph output '" << vi.name()
                           << "' is not produced by any node";
      ok = false;
      continue;
    }
    results.push_back(v);
  }
  if (!ok) {
    func.erase();
    return failure();
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, vi] : llvm::enumerate(graph.output())) {
    func.setResultAttr(i, "graph.name", b.getStringAttr(vi.name()));
    if (ArrayAttr params = dimParams(vi.type()))
      func.setResultAttr(i, "graph.dim_params", params);
  }
  return success();
}

} // namespace strata::onnx_import
