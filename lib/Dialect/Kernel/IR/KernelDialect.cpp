//===- KernelDialect.cpp - strata's kernel-layer dialect --------*- C++ -*-===//

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::kernel;

#include "strata/Dialect/Kernel/IR/KernelDialect.cpp.inc"

//===----------------------------------------------------------------------===//
// Parameters of the declarative formats (KernelBase.td)
//===----------------------------------------------------------------------===//

namespace strata::kernel {

/// `[1, 2, 3]`, or `[]`.
FailureOr<SmallVector<int64_t>> parseI64List(AsmParser &parser) {
  SmallVector<int64_t> values;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            return parser.parseInteger(values.emplace_back());
          }))
    return failure();
  return values;
}

void printI64List(AsmPrinter &printer, ArrayRef<int64_t> values) {
  printer << "[";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

/// An f64 as MLIR prints floats (AsmPrinter::printFloat): exactly, so that
/// it parses back to the same bits.
FailureOr<llvm::APFloat> parseF64(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(value);
}

/// `true` or `false`.
FailureOr<bool> parseFlag(AsmParser &parser) {
  SMLoc at = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(at, "expected true or false");
}

} // namespace strata::kernel

#define GET_ATTRDEF_CLASSES
#include "strata/Dialect/Kernel/IR/KernelAttrs.cpp.inc"

void KernelDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "strata/Dialect/Kernel/IR/KernelAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #strata.launch
//===----------------------------------------------------------------------===//

/// The most threads a block may have on every GPU strata targets.
static constexpr int64_t kMaxThreadsPerBlock = 1024;
/// The numbers of one TMA tensor map (docs/runtime.md): the operand, the
/// inner and outer extents, the outer stride in bytes, the box, the swizzle.
static constexpr size_t kTensorMapFields = 7;

LogicalResult LaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef mapping, ArrayRef<int64_t> grid,
                                 ArrayRef<int64_t> block, int64_t shared,
                                 int64_t staticShared, int64_t scratch,
                                 int64_t vector, int64_t persistent,
                                 ArrayRef<int64_t> tensorMaps,
                                 bool waitsForGrids) {
  if (mapping.empty())
    return emitError() << "a launch names its mapping";
  auto extents = [&](StringRef what, ArrayRef<int64_t> dims) -> LogicalResult {
    if (dims.size() != 3 || llvm::any_of(dims, [](int64_t d) { return d < 1; }))
      return emitError() << "a launch's " << what
                         << " is three positive extents, not ["
                         << llvm::make_range(dims.begin(), dims.end()) << "]";
    return success();
  };
  if (failed(extents("grid", grid)) || failed(extents("block", block)))
    return failure();
  int64_t threads = block[0] * block[1] * block[2];
  if (threads > kMaxThreadsPerBlock)
    return emitError() << "a launch's block has " << threads
                       << " threads; a block holds at most "
                       << kMaxThreadsPerBlock;
  for (auto [what, value] : {std::pair<StringRef, int64_t>{"shared", shared},
                             {"static_shared", staticShared},
                             {"scratch", scratch},
                             {"vector", vector},
                             {"persistent", persistent}})
    if (value < 0)
      return emitError() << "a launch's " << what << " is " << value
                         << "; it cannot be negative";
  if (tensorMaps.size() % kTensorMapFields != 0)
    return emitError() << "a launch's tensor maps are " << kTensorMapFields
                       << " numbers each, not " << tensorMaps.size()
                       << " in all";
  return success();
}

int64_t LaunchAttr::threadsPerBlock() const {
  ArrayRef<int64_t> block = getBlock();
  return block[0] * block[1] * block[2];
}

LaunchAttr LaunchAttr::withWaitForGrids() const {
  return LaunchAttr::get(getContext(), getMapping(), getGrid(), getBlock(),
                         getShared(), getStaticShared(), getScratch(),
                         getVector(), getPersistent(), getTensorMaps(),
                         /*waitsForGrids=*/true);
}

// #strata.launch<mapping, grid = [x, y, z], block = [x, y, z], key = value,
// ..., waits_for_grids>: the mapping, then the geometry, then the fields
// that differ from their defaults.
void LaunchAttr::print(AsmPrinter &printer) const {
  auto list = [&](ArrayRef<int64_t> values) {
    printer << "[";
    llvm::interleaveComma(values, printer);
    printer << "]";
  };
  printer << "<" << getMapping() << ", grid = ";
  list(getGrid());
  printer << ", block = ";
  list(getBlock());
  printer << ", shared = " << getShared();
  for (auto [key, value] :
       {std::pair<StringRef, int64_t>{"static_shared", getStaticShared()},
        {"scratch", getScratch()},
        {"vector", getVector()},
        {"persistent", getPersistent()}})
    if (value)
      printer << ", " << key << " = " << value;
  if (!getTensorMaps().empty()) {
    printer << ", tensor_maps = ";
    list(getTensorMaps());
  }
  if (getWaitsForGrids())
    printer << ", waits_for_grids";
  printer << ">";
}

Attribute LaunchAttr::parse(AsmParser &parser, Type) {
  std::string mapping;
  SmallVector<int64_t> grid, block, tensorMaps;
  int64_t shared = 0, staticShared = 0, scratch = 0, vector = 0, persistent = 0;
  bool waitsForGrids = false;
  SMLoc start = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeywordOrString(&mapping))
    return {};
  auto parseList = [&](SmallVectorImpl<int64_t> &values) {
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Square, [&]() -> ParseResult {
          return parser.parseInteger(values.emplace_back());
        });
  };
  llvm::StringSet<> seen;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc at = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return {};
    if (!seen.insert(key).second) {
      parser.emitError(at) << "'" << key << "' is given twice";
      return {};
    }
    if (key == "waits_for_grids") {
      waitsForGrids = true;
      continue;
    }
    if (parser.parseEqual())
      return {};
    int64_t *scalar = llvm::StringSwitch<int64_t *>(key)
                          .Case("shared", &shared)
                          .Case("static_shared", &staticShared)
                          .Case("scratch", &scratch)
                          .Case("vector", &vector)
                          .Case("persistent", &persistent)
                          .Default(nullptr);
    SmallVectorImpl<int64_t> *list =
        llvm::StringSwitch<SmallVectorImpl<int64_t> *>(key)
            .Case("grid", &grid)
            .Case("block", &block)
            .Case("tensor_maps", &tensorMaps)
            .Default(nullptr);
    if (scalar) {
      if (parser.parseInteger(*scalar))
        return {};
    } else if (list) {
      if (failed(parseList(*list)))
        return {};
    } else {
      parser.emitError(at) << "unknown launch field '" << key
                           << "' (expected grid, block, shared, "
                              "static_shared, scratch, vector, persistent, "
                              "tensor_maps or waits_for_grids)";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<LaunchAttr>(
      start, parser.getContext(), mapping, grid, block, shared, staticShared,
      scratch, vector, persistent, tensorMaps, waitsForGrids);
}

//===----------------------------------------------------------------------===//
// #strata.gemm, #strata.attention
//===----------------------------------------------------------------------===//

namespace {
/// Whether `type` is one of the tensor-core types the kernels take.
bool isHalfType(Type type) { return type && (type.isBF16() || type.isF16()); }

LogicalResult positive(function_ref<InFlightDiagnostic()> emitError,
                       StringRef owner,
                       ArrayRef<std::pair<StringRef, int64_t>> fields) {
  for (auto [what, value] : fields)
    if (value < 1)
      return emitError() << owner << "'s " << what << " is " << value
                         << "; it must be positive";
  return success();
}

LogicalResult notNegative(function_ref<InFlightDiagnostic()> emitError,
                          StringRef owner, StringRef what,
                          ArrayRef<int64_t> values) {
  for (int64_t value : values)
    if (value < 0)
      return emitError() << owner << "'s " << what << " is " << value
                         << "; it cannot be negative";
  return success();
}
} // namespace

LogicalResult GemmAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t rows, int64_t columns, int64_t depth,
                               Type type, int64_t tileColumns, int64_t a,
                               int64_t w) {
  if (failed(positive(emitError, "a GEMM",
                      {{"rows", rows},
                       {"columns", columns},
                       {"depth", depth},
                       {"tile_columns", tileColumns}})) ||
      failed(notNegative(emitError, "a GEMM", "argument", {a, w})))
    return failure();
  if (!isHalfType(type))
    return emitError() << "a GEMM's type is bf16 or f16, not " << type;
  if (columns % tileColumns)
    return emitError() << "a GEMM's tile_columns (" << tileColumns
                       << ") do not divide its " << columns << " columns";
  return success();
}

LogicalResult AttentionOperandAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t arg, int64_t offset,
    ArrayRef<int64_t> batchStrides, int64_t rowStride) {
  if (arg < -1)
    return emitError() << "an attention operand's arg is " << arg
                       << "; it is a kernel argument, or absent for the result";
  if (failed(positive(emitError, "an attention operand",
                      {{"row_stride", rowStride}})))
    return failure();
  return failure(failed(notNegative(emitError, "an attention operand", "offset",
                                    {offset})) ||
                 failed(notNegative(emitError, "an attention operand",
                                    "batch stride", batchStrides)));
}

LogicalResult
AttentionBiasAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t arg, ArrayRef<int64_t> batchStrides,
                          int64_t rowStride, int64_t keyStride,
                          llvm::APFloat factor, Type type) {
  if (failed(notNegative(emitError, "an attention bias", "arg", {arg})) ||
      failed(notNegative(emitError, "an attention bias", "stride",
                         {rowStride, keyStride})) ||
      failed(notNegative(emitError, "an attention bias", "batch stride",
                         batchStrides)))
    return failure();
  if (!type || !(type.isF32() || isHalfType(type)))
    return emitError() << "an attention bias's type is f32, bf16 or f16, not "
                       << type;
  return success();
}

LogicalResult AttentionAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, AttentionOperandAttr q,
    AttentionOperandAttr k, AttentionOperandAttr v, AttentionOperandAttr o,
    ArrayRef<int64_t> batchDims, int64_t batch, int64_t seqQ, int64_t seqK,
    int64_t headDim, int64_t queryRows, llvm::APFloat scale, Type type,
    std::optional<int64_t> causalOffset, AttentionBiasAttr bias,
    bool zeroMaskedRows) {
  if (failed(positive(emitError, "an attention block",
                      {{"batch", batch},
                       {"seq_q", seqQ},
                       {"seq_k", seqK},
                       {"head_dim", headDim},
                       {"query_rows", queryRows}})))
    return failure();
  if (failed(notNegative(emitError, "an attention block", "batch dimension",
                         batchDims)))
    return failure();
  int64_t product = llvm::product_of(batchDims);
  if (product != batch)
    return emitError() << "an attention block's batch (" << batch
                       << ") is not the product of its batch_dims (" << product
                       << ")";
  if (!isHalfType(type))
    return emitError() << "an attention block's type is bf16 or f16, not "
                       << type;
  for (auto [name, operand] :
       {std::pair<StringRef, AttentionOperandAttr>("q", q),
        {"k", k},
        {"v", v},
        {"o", o}}) {
    if (!operand)
      return emitError() << "an attention block has no operand " << name;
    if ((operand.getArg() >= 0) == (name == "o"))
      return emitError() << "an attention block's " << name
                         << (name == "o" ? " is its result: it has no arg"
                                         : " needs the kernel argument it "
                                           "is read from (arg)");
    if (operand.getBatchStrides().size() != batchDims.size())
      return emitError() << "an attention block's " << name << " has "
                         << operand.getBatchStrides().size()
                         << " batch strides for " << batchDims.size()
                         << " batch dimensions";
  }
  if (bias && bias.getBatchStrides().size() != batchDims.size())
    return emitError() << "an attention block's bias has "
                       << bias.getBatchStrides().size() << " batch strides for "
                       << batchDims.size() << " batch dimensions";
  return success();
}

//===----------------------------------------------------------------------===//
// #strata.compile
//===----------------------------------------------------------------------===//

LogicalResult CompileAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  StringRef target, StringRef arch,
                                  bool libraries, bool hostKernels,
                                  StringRef precision, StringRef decisions,
                                  DictionaryAttr inputShapes,
                                  DictionaryAttr inputValues) {
  if (target.empty())
    return emitError() << "a compile names its target";
  if (arch.empty())
    return emitError() << "a compile names its processor (\"native\" for "
                          "the default)";
  if (!llvm::is_contained({"", "fp32", "fp16", "bf16"}, precision))
    return emitError() << "a compile's precision is fp32, fp16 or bf16, not \""
                       << precision << "\"";
  if (inputShapes)
    for (NamedAttribute entry : inputShapes) {
      auto dims = dyn_cast<DenseI64ArrayAttr>(entry.getValue());
      if (!dims)
        return emitError() << "a compile's shape of input '"
                           << entry.getName().getValue()
                           << "' is an array<i64>, not " << entry.getValue();
      if (llvm::any_of(dims.asArrayRef(), [](int64_t d) { return d < 0; }))
        return emitError() << "a compile's shape of input '"
                           << entry.getName().getValue()
                           << "' has a negative dimension";
    }
  if (inputValues)
    for (NamedAttribute entry : inputValues)
      if (!isa<DenseF64ArrayAttr>(entry.getValue()))
        return emitError() << "a compile's values of input '"
                           << entry.getName().getValue()
                           << "' are an array<f64>, not " << entry.getValue();
  return success();
}

//===----------------------------------------------------------------------===//
// The discardable attributes
//===----------------------------------------------------------------------===//

namespace {
/// Checks one `strata.*` attribute of an op: its type and, where the
/// attribute takes only some values, its value.
class AttributeChecker {
public:
  AttributeChecker(Operation *op, NamedAttribute attribute)
      : op(op), name(attribute.getName().getValue()),
        value(attribute.getValue()) {}

  LogicalResult check();

private:
  InFlightDiagnostic fail() {
    return op->emitOpError() << "attribute '" << name << "' ";
  }
  template <typename A> LogicalResult expect(StringRef what) {
    if (isa<A>(value))
      return success();
    return fail() << "must be " << what << ", not " << value;
  }
  LogicalResult oneOf(ArrayRef<StringRef> allowed);
  LogicalResult strings();
  LogicalResult count(bool positive);
  LogicalResult positions(bool ofArguments);
  LogicalResult accumulatedArgument();
  LogicalResult arguments(ArrayRef<int64_t> positions);

  Operation *op;
  StringRef name;
  Attribute value;
};
} // namespace

LogicalResult AttributeChecker::oneOf(ArrayRef<StringRef> allowed) {
  if (failed(expect<StringAttr>("a string")))
    return failure();
  if (llvm::is_contained(allowed, cast<StringAttr>(value).getValue()))
    return success();
  InFlightDiagnostic diag = fail() << "is " << value << "; expected one of ";
  llvm::interleaveComma(allowed, diag,
                        [&](StringRef s) { diag << "\"" << s << "\""; });
  return diag;
}

LogicalResult AttributeChecker::strings() {
  if (failed(expect<ArrayAttr>("an array of strings")))
    return failure();
  for (Attribute element : cast<ArrayAttr>(value))
    if (!isa<StringAttr>(element))
      return fail() << "must be an array of strings, and holds " << element;
  return success();
}

LogicalResult AttributeChecker::count(bool positive) {
  if (failed(expect<IntegerAttr>("an integer")))
    return failure();
  int64_t n = cast<IntegerAttr>(value).getInt();
  if (n > 0 || (!positive && n == 0))
    return success();
  return fail() << "is " << n << "; it must be "
                << (positive ? "positive" : "zero or more");
}

/// Increasing positions of a function's arguments or results, each a
/// tensor of rank 3 to 5 (an image batch: [N, C, spatial...]).
LogicalResult AttributeChecker::positions(bool ofArguments) {
  if (failed(expect<DenseI64ArrayAttr>("an array<i64>")))
    return failure();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return fail() << "belongs on a kernel's function";
  ArrayRef<Type> types =
      ofArguments ? function.getArgumentTypes() : function.getResultTypes();
  int64_t previous = -1;
  for (int64_t position : cast<DenseI64ArrayAttr>(value).asArrayRef()) {
    if (position <= previous || position >= static_cast<int64_t>(types.size()))
      return fail() << "holds " << position << "; expected increasing "
                    << (ofArguments ? "argument" : "result")
                    << " positions below " << types.size();
    auto tensor = dyn_cast<RankedTensorType>(types[position]);
    if (!tensor || tensor.getRank() < 3 || tensor.getRank() > 5)
      return fail() << "names " << (ofArguments ? "argument " : "result ")
                    << position << " of type " << types[position]
                    << "; channels-last needs a tensor of rank 3 to 5";
    previous = position;
  }
  return success();
}

/// The position of an argument of the function's own type as its one
/// result, which the kernel adds its result onto.
LogicalResult AttributeChecker::accumulatedArgument() {
  if (failed(count(/*positive=*/false)))
    return failure();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return fail() << "belongs on a kernel's function";
  ArrayRef<Type> args = function.getArgumentTypes();
  ArrayRef<Type> results = function.getResultTypes();
  int64_t position = cast<IntegerAttr>(value).getInt();
  if (position >= static_cast<int64_t>(args.size()))
    return fail() << "is " << position << "; the kernel has " << args.size()
                  << " arguments";
  if (results.size() != 1 || results.front() != args[position])
    return fail() << "names argument " << position << " of type "
                  << args[position]
                  << "; it must have the type of the kernel's one result";
  return success();
}

/// The kernel arguments a template's parameters name exist.
LogicalResult AttributeChecker::arguments(ArrayRef<int64_t> positions) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return fail() << "belongs on a kernel's function";
  int64_t count = function.getNumArguments();
  for (int64_t position : positions)
    if (position >= count)
      return fail() << "names argument " << position << "; the kernel has "
                    << count << " arguments";
  return success();
}

LogicalResult AttributeChecker::check() {
  StringRef key =
      name.drop_front(KernelDialect::getDialectNamespace().size() + 1);
  if (key == "kernel" || key == "host")
    return expect<UnitAttr>("a unit attribute");
  if (key == "channels_last_rows") {
    if (failed(expect<UnitAttr>("a unit attribute")))
      return failure();
    if (!has<ChannelsLastResults>(op))
      return fail() << "needs channels-last results ("
                    << strata::kernel::name<ChannelsLastResults>() << ")";
    return success();
  }
  if (key == "kind") {
    if (failed(oneOf({kCodegen, kLibrary})))
      return failure();
    if (isLibrary(op) && !has<Library>(op))
      return fail() << "is \"library\", and the op names no library "
                       "function ("
                    << strata::kernel::name<Library>() << ")";
    return success();
  }
  if (key == "template")
    return oneOf({"gemm", "flash_attention"});
  if (llvm::is_contained({"category", "reason", "library", "storage", "layouts",
                          "precision", "gpu_reason", "gpu_distribute",
                          "ptx_kernel", "attention_padding"},
                         key))
    return expect<StringAttr>("a string");
  if (llvm::is_contained({"nodes", "fused_because", "not_fused"}, key))
    return strings();
  if (llvm::is_contained({"tile", "attrs", "windows"}, key))
    return expect<DictionaryAttr>("a dictionary");
  if (key == "gemm") {
    if (failed(expect<GemmAttr>("a #strata.gemm")))
      return failure();
    auto gemm = cast<GemmAttr>(value);
    return arguments({gemm.getA(), gemm.getW()});
  }
  if (key == "attention") {
    if (failed(expect<AttentionAttr>("a #strata.attention")))
      return failure();
    auto attention = cast<AttentionAttr>(value);
    SmallVector<int64_t> args = {attention.getQ().getArg(),
                                 attention.getK().getArg(),
                                 attention.getV().getArg()};
    if (attention.getBias())
      args.push_back(attention.getBias().getArg());
    return arguments(args);
  }
  if (key == "parallel_rows" || key == "parallel_dims")
    return count(/*positive=*/false);
  if (key == "accumulates")
    return accumulatedArgument();
  if (key == "parallel_block" || key == "max_threads")
    return count(/*positive=*/true);
  if (key == "block_strides")
    return expect<DenseI64ArrayAttr>("an array<i64>");
  if (key == "channels_last_args" || key == "channels_last_results")
    return positions(key == "channels_last_args");
  if (key == "compile") {
    if (!isa<ModuleOp>(op))
      return fail() << "belongs on the module";
    return expect<CompileAttr>("a #strata.compile");
  }
  if (key == "launch" || key == "ptx_launch")
    return expect<LaunchAttr>("a #strata.launch");
  return fail() << "is not an attribute of the kernel layer (its attributes "
                   "are declared in KernelBase.td)";
}

LogicalResult KernelDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  return AttributeChecker(op, attr).check();
}
