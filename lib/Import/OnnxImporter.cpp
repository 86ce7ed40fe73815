//===- OnnxImporter.cpp - ONNX model to graph dialect -----------*- C++ -*-===//
//
// Loading (binary or text), external data, ONNX's checker, version
// conversion and shape inference, then the graph conversion. libonnx reports
// problems by throwing; every call into it is wrapped so a malformed model is
// a diagnostic, never a crash.
//
//===----------------------------------------------------------------------===//

#include "strata/Import/OnnxImporter.h"
#include "GraphImporter.h"
#include "OpsetBridge.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/checker.h>
#include <onnx/defs/parser.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <memory>
#include <mutex>

#include <sys/stat.h>

using namespace mlir;
using namespace strata::onnx_import;

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

namespace {

const ConverterRegistry &converterRegistry() {
  static const ConverterRegistry registry = [] {
    ConverterRegistry r;
    registerElementwiseConverters(r);
    registerReductionConverters(r);
    registerTensorConverters(r);
    registerNNConverters(r);
    registerControlFlowConverters(r);
    registerSequenceConverters(r);
    registerStringConverters(r);
    registerTrainingConverters(r);
    return r;
  }();
  return registry;
}

/// A libonnx exception message on one line: its messages span several lines,
/// with the node they concern in a trailing "==> Context:" part.
std::string oneLine(const char *what) {
  std::string out;
  bool space = false;
  for (const char *p = what; *p; ++p) {
    if (*p == '\n' || *p == '\r' || *p == '\t' || *p == ' ') {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += *p;
  }
  return out;
}

/// Resolves one tensor's external data inside `modelDir`, replacing it with
/// raw_data. Refuses anything that could read outside the folder.
LogicalResult loadExternalData(onnx::TensorProto &tensor, StringRef modelDir,
                               Location loc) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &entry : tensor.external_data()) {
    const std::string &key = entry.key();
    if (key == "location") {
      location = entry.value();
      continue;
    }
    if (key != "offset" && key != "length")
      continue; // "checksum" and others do not affect the bytes read.
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(entry.value().c_str(), &end, 10);
    if (entry.value().empty() || *end != '\0' || errno != 0 ||
        entry.value()[0] == '-') {
      emitError(loc) << "tensor '" << tensor.name() << "': external data "
                     << key << " '" << entry.value()
                     << "' is not a non-negative integer";
      return failure();
    }
    (key == "offset" ? offset : length.emplace()) = v;
  }
  auto reject = [&](const Twine &why) {
    emitError(loc) << "tensor '" << tensor.name() << "': external data '"
                   << location << "' " << why;
    return failure();
  };
  if (location.empty())
    return reject("has no location");
  if (modelDir.empty())
    return reject("cannot be read: the model was given as bytes, without a "
                  "folder to read its external data from");
  if (llvm::sys::path::is_absolute(location) || location[0] == '/' ||
      location[0] == '\\')
    return reject("is an absolute path; only files inside the model's "
                  "folder are allowed");
  for (StringRef part : llvm::make_range(llvm::sys::path::begin(location),
                                         llvm::sys::path::end(location)))
    if (part == "..")
      return reject("contains '..'; only files inside the model's folder are "
                    "allowed");
  if (location.find('\\') != std::string::npos ||
      location.find('\0') != std::string::npos)
    return reject("contains a backslash or NUL");
  // Walk every component so that no symlink, at any depth, can redirect the
  // read outside the folder.
  SmallString<256> path(modelDir);
  for (StringRef part : llvm::make_range(llvm::sys::path::begin(location),
                                         llvm::sys::path::end(location))) {
    if (part == ".")
      continue;
    llvm::sys::path::append(path, part);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0)
      return reject("does not exist");
    if (S_ISLNK(st.st_mode))
      return reject("is or passes through a symbolic link; links are refused");
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return reject("is not a regular file");
  uint64_t size = st.st_size;
  if (offset > size)
    return reject("offset " + Twine(offset) + " is past the end of the file (" +
                  Twine(size) + " bytes)");
  uint64_t len = length.value_or(size - offset);
  if (len > size - offset)
    return reject("range [" + Twine(offset) + ", " + Twine(offset) + " + " +
                  Twine(len) + ") is past the end of the file (" + Twine(size) +
                  " bytes)");
  auto buffer = llvm::MemoryBuffer::getFileSlice(path, len, offset);
  if (!buffer)
    return reject("cannot be read: " + buffer.getError().message());
  tensor.set_raw_data((*buffer)->getBufferStart(), len);
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  return success();
}

/// Loads external data of every initializer and Constant value in `graph`
/// (and its subgraphs).
LogicalResult loadAllExternalData(onnx::GraphProto &graph, StringRef modelDir,
                                  Location loc) {
  bool ok = true;
  auto visit = [&](onnx::TensorProto &t) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      ok &= succeeded(loadExternalData(t, modelDir, loc));
  };
  for (auto &init : *graph.mutable_initializer())
    visit(init);
  for (auto &node : *graph.mutable_node())
    for (auto &attr : *node.mutable_attribute()) {
      if (attr.has_t())
        visit(*attr.mutable_t());
      if (attr.has_g())
        ok &= succeeded(loadAllExternalData(*attr.mutable_g(), modelDir, loc));
      for (auto &g : *attr.mutable_graphs())
        ok &= succeeded(loadAllExternalData(g, modelDir, loc));
    }
  return success(ok);
}

/// Resize before opset 11 (and Upsample, which the converter turns into
/// Resize) sampled with asymmetric coordinates and floor rounding; Resize-11+
/// defaults to half_pixel. ONNX 1.12's adapter does not write the old
/// behaviour out, so spell it out on every converted Resize that does not
/// say otherwise.
void keepResize10Semantics(onnx::GraphProto &graph) {
  auto setDefault = [](onnx::NodeProto &node, const char *name,
                       const char *value) {
    for (const auto &attr : node.attribute())
      if (attr.name() == name)
        return;
    auto *attr = node.add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s(value);
  };
  for (auto &node : *graph.mutable_node()) {
    if (node.op_type() == "Resize" &&
        (node.domain().empty() || node.domain() == "ai.onnx")) {
      setDefault(node, "coordinate_transformation_mode", "asymmetric");
      setDefault(node, "nearest_mode", "floor");
    }
    for (auto &attr : *node.mutable_attribute())
      if (attr.has_g())
        keepResize10Semantics(*attr.mutable_g());
  }
}

/// True when a graph (or subgraph) declares a value that is not a tensor.
bool hasNonTensorValues(const onnx::GraphProto &graph) {
  auto nonTensor = [](const onnx::ValueInfoProto &vi) {
    return vi.has_type() && !vi.type().has_tensor_type();
  };
  if (llvm::any_of(graph.input(), nonTensor) ||
      llvm::any_of(graph.output(), nonTensor) ||
      llvm::any_of(graph.value_info(), nonTensor))
    return true;
  for (const auto &node : graph.node())
    for (const auto &attr : node.attribute()) {
      if (attr.has_g() && hasNonTensorValues(attr.g()))
        return true;
      for (const auto &g : attr.graphs())
        if (hasNonTensorValues(g))
          return true;
    }
  return false;
}

/// The first output of `graph` (or of a subgraph inside it) that no node,
/// input or initializer of its scope defines, or null. ONNX's checker lets
/// such a model through, and its IR builder (used by the version converter)
/// crashes on it.
const std::string *undefinedOutput(const onnx::GraphProto &graph,
                                   llvm::StringSet<> scope) {
  for (const auto &in : graph.input())
    scope.insert(in.name());
  for (const auto &init : graph.initializer())
    scope.insert(init.name());
  for (const auto &init : graph.sparse_initializer())
    scope.insert(init.values().name());
  for (const auto &node : graph.node()) {
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        if (const std::string *name = undefinedOutput(attr.g(), scope))
          return name;
      for (const auto &g : attr.graphs())
        if (const std::string *name = undefinedOutput(g, scope))
          return name;
    }
    for (const auto &out : node.output())
      scope.insert(out);
  }
  for (const auto &out : graph.output())
    if (!scope.contains(out.name()))
      return &out.name();
  return nullptr;
}

/// ONNX's operator schemas, with the shape-inference functions that crash
/// on some malformed models guarded: the guard checks what the function
/// assumes and fails inference (an onnx::InferenceError, reported as an
/// error naming the node) when it does not hold. ONNX 1.12's checker does
/// not look at shapes, so shape inference is the first to see them. Found by
/// fuzz-import (docs/testing.md); each guard has a BadInput test.
class GuardedSchemas final : public onnx::ISchemaRegistry {
public:
  using Guard = void (*)(onnx::InferenceContext &);

  static const GuardedSchemas &instance() {
    static const GuardedSchemas schemas;
    return schemas;
  }

  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
    Guard guard = guardFor(domain, key);
    if (!schema || !guard || !schema->has_type_and_shape_inference_function())
      return schema;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<onnx::OpSchema> &copy = guarded[schema];
    if (!copy) {
      copy = std::make_unique<onnx::OpSchema>(*schema);
      onnx::InferenceFunction infer =
          schema->GetTypeAndShapeInferenceFunction();
      copy->TypeAndShapeInferenceFunction(
          [guard, infer](onnx::InferenceContext &ctx) {
            guard(ctx);
            infer(ctx);
          });
    }
    return copy.get();
  }

private:
  /// The rank of input `index` when its shape is known, else -1.
  static int rankOf(onnx::InferenceContext &ctx, size_t index) {
    if (index >= ctx.getNumInputs())
      return -1;
    const onnx::TypeProto *type = ctx.getInputType(index);
    if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
      return -1;
    return type->tensor_type().shape().dim_size();
  }

  /// A convolution's input X and weight W: the shape function reads W's
  /// spatial dimensions and indexes the attributes sized by X's with them,
  /// past their end when W has more dimensions.
  template <size_t X, size_t W>
  static void convolutionRanks(onnx::InferenceContext &ctx) {
    int x = rankOf(ctx, X), w = rankOf(ctx, W);
    if (x >= 0 && w >= 0 && x != w)
      fail_shape_inference("the weight has rank ", w, ", the input rank ", x,
                           "; they must be equal");
  }

  /// A window's strides, dilations and kernel sizes: the shape functions
  /// divide by them (SIGFPE on a stride of 0).
  static void positiveWindow(onnx::InferenceContext &ctx) {
    for (const char *name : {"strides", "dilations", "kernel_shape"})
      if (const onnx::AttributeProto *attr = ctx.getAttribute(name))
        for (int64_t value : attr->ints())
          if (value < 1)
            fail_shape_inference("attribute ", name, " holds ", value,
                                 "; every value must be at least 1");
  }

  template <size_t X, size_t W>
  static void convolution(onnx::InferenceContext &ctx) {
    positiveWindow(ctx);
    convolutionRanks<X, W>(ctx);
  }

  static Guard guardFor(const std::string &domain, const std::string &op) {
    if (!domain.empty() && domain != "ai.onnx")
      return nullptr;
    if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose")
      return convolution<0, 1>;
    if (op == "QLinearConv")
      return convolution<0, 3>;
    if (op == "AveragePool" || op == "MaxPool" || op == "LpPool" ||
        op == "MaxUnpool")
      return positiveWindow;
    return nullptr;
  }

  mutable std::mutex mutex;
  mutable llvm::DenseMap<const onnx::OpSchema *,
                         std::unique_ptr<onnx::OpSchema>>
      guarded;
};

/// How deep graphs nest in an ONNX text model: the deepest nesting of braces
/// outside strings and comments. ONNX's parser recurses for every level
/// (a stack overflow at some tens of thousands); a binary model cannot nest
/// deeper than protobuf's recursion limit lets it parse (100 messages).
size_t textNestingDepth(StringRef text) {
  size_t depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#') {
      i = text.find('\n', i);
      if (i == StringRef::npos)
        break;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

/// The deepest text model read: far more than any model nests (a binary
/// one cannot nest past about 33 graphs), far less than overflows the stack
/// (an ASan build of strata overflows its 8 MiB between 600 and 1000
/// levels, in the importer's own recursion).
constexpr size_t kMaxTextNesting = 256;

int64_t defaultOpset(const onnx::ModelProto &model) {
  for (const auto &op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx")
      return op.version();
  return 0;
}

} // namespace

namespace strata {

void registerImportDialects(DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, func::FuncDialect>();
}

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, StringRef path,
                                     const ImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true);
  if (!buffer) {
    context.loadDialect<graph::GraphDialect, func::FuncDialect>();
    emitError(FileLineColLoc::get(&context, path, 0, 0))
        << "cannot read '" << path << "': " << buffer.getError().message();
    return nullptr;
  }
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  OnnxSource source{(*buffer)->getBuffer(), path, dir,
                    path.ends_with(".onnxtxt")};
  return importOnnx(context, source, options);
}

OwningOpRef<ModuleOp> importOnnx(MLIRContext &context, const OnnxSource &source,
                                 const ImportOptions &options) {
  context.loadDialect<graph::GraphDialect, func::FuncDialect>();
  StringRef path = source.name;
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  auto fail = [&](const Twine &message) -> OwningOpRef<ModuleOp> {
    emitError(fileLoc) << message;
    return nullptr;
  };

  StringRef bytes = source.bytes;
  onnx::ModelProto model;
  if (source.text) {
    if (size_t depth = textNestingDepth(bytes); depth > kMaxTextNesting)
      return fail("not a valid ONNX text model: its graphs nest " +
                  Twine(depth) + " deep, more than the " +
                  Twine(kMaxTextNesting) + " strata reads");
    // The parser reads up to a NUL, and throws where a number does not
    // parse (std::stol's std::invalid_argument and std::out_of_range).
    std::string text = bytes.str();
    try {
      auto status = onnx::OnnxParser::Parse(model, text.c_str());
      if (!status.IsOK())
        return fail("not a valid ONNX text model: " + status.ErrorMessage());
    } catch (const std::logic_error &e) {
      return fail("not a valid ONNX text model: a number in it does not "
                  "parse or is out of range (" +
                  oneLine(e.what()) + ")");
    } catch (const std::exception &e) {
      return fail("not a valid ONNX text model: " + oneLine(e.what()));
    }
  } else if (bytes.size() > size_t(INT_MAX) ||
             !model.ParseFromArray(bytes.data(), int(bytes.size()))) {
    return fail("not a valid ONNX model (the protobuf does not parse; the "
                "file may be truncated or not an ONNX file)");
  }
  if (!model.has_graph())
    return fail("the model has no graph");
  if (model.graph().node_size() == 0 && model.graph().output_size() == 0)
    return fail("the model's graph is empty");
  if (const std::string *name = undefinedOutput(model.graph(), {}))
    return fail("graph output '" + *name +
                "' is not produced by any node, input or initializer");

  if (failed(
          loadAllExternalData(*model.mutable_graph(), source.dataDir, fileLoc)))
    return nullptr;

  // IR versions after the library's (9: float8 types, 10: int4 and function
  // overloads, 11: float4) add element types and function fields but keep
  // the graph's structure, and any current exporter writes them: read such a
  // model as the library's own IR version. A tensor of one of the new types is
  // refused later, naming it, where the importer maps element types.
  if (model.ir_version() > onnx::IR_VERSION)
    model.set_ir_version(onnx::IR_VERSION);

  // Opsets newer than the ONNX library's (torch.onnx's default exporter
  // writes 18 and later) are brought back to its newest first, so that its
  // checker, converter and shape inference can read the model.
  int64_t libraryOpset =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance()
          .Map()
          .at(onnx::ONNX_DOMAIN)
          .second;
  int64_t opset = defaultOpset(model);
  bool checkable = true;
  if (opset > kNewestBridgedOpset) {
    std::string newest = std::to_string(kNewestBridgedOpset);
    if (!options.allowNewerOpset)
      return fail("the model's opset " + std::to_string(opset) +
                  " is newer than strata knows (" + newest +
                  "); export it with an opset of at most " + newest +
                  ", or pass --allow-newer-opset to read it as opset " +
                  newest + " at your own risk");
    emitWarning(fileLoc) << "the model's opset " << opset
                         << " is newer than strata knows; reading it as opset "
                         << newest
                         << " (--allow-newer-opset): an operator whose "
                            "meaning changed since may compute wrong results";
    for (auto &op : *model.mutable_opset_import())
      if (op.domain().empty() || op.domain() == "ai.onnx")
        op.set_version(kNewestBridgedOpset);
    opset = kNewestBridgedOpset;
  }
  if (opset > libraryOpset) {
    bool failedAny = false;
    if (!bridgeToOpset(
            model, opset, libraryOpset,
            [&](const std::string &message) {
              emitError(fileLoc) << message;
              failedAny = true;
            },
            checkable) ||
        failedAny)
      return nullptr;
  }

  if (options.runChecker && checkable) {
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception &e) {
      return fail("the ONNX checker rejects the model: " + oneLine(e.what()));
    }
  }

  // The version converter's IR holds tensors only: it would drop sequence and
  // optional types, so such models are imported at their own opset.
  if (opset > 0 && opset < options.targetOpset &&
      !hasNonTensorValues(model.graph())) {
    try {
      model = onnx::version_conversion::ConvertVersion(
          model, int(options.targetOpset));
      if (opset < 11)
        keepResize10Semantics(*model.mutable_graph());
      opset = options.targetOpset;
    } catch (const std::exception &e) {
      emitWarning(fileLoc) << "cannot convert opset " << opset << " to "
                           << options.targetOpset << " (" << oneLine(e.what())
                           << "); importing at opset " << opset;
    }
  }

  if (options.runShapeInference) {
    try {
      onnx::ShapeInferenceOptions inferOptions(/*check_type=*/true,
                                               /*strict_mode=*/1,
                                               /*data_prop=*/true);
      onnx::shape_inference::InferShapes(model, &GuardedSchemas::instance(),
                                         inferOptions);
    } catch (const std::exception &e) {
      return fail("ONNX shape inference fails: " + oneLine(e.what()));
    }
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  (*module)->setAttr("graph.source", StringAttr::get(&context, path));
  (*module)->setAttr("graph.opset",
                     IntegerAttr::get(IntegerType::get(&context, 64), opset));
  if (!model.producer_name().empty())
    (*module)->setAttr("graph.producer",
                       StringAttr::get(&context, model.producer_name()));
  GraphImporter importer(&context, path, opset, converterRegistry());
  if (failed(importer.importGraph(model.graph(), *module, options.entryName)))
    return nullptr;
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace strata
