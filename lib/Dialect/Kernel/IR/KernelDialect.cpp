//===- KernelDialect.cpp - strata's kernel-layer dialect --------*- C++ -*-===//

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::kernel;

#include "strata/Dialect/Kernel/IR/KernelDialect.cpp.inc"

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
  if (llvm::is_contained({"tile", "attrs", "gemm", "attention", "windows"},
                         key))
    return expect<DictionaryAttr>("a dictionary");
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
  if (key == "launch" || key == "ptx_launch")
    return expect<LaunchAttr>("a #strata.launch");
  return fail() << "is not an attribute of the kernel layer (its attributes "
                   "are declared in KernelBase.td)";
}

LogicalResult KernelDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  return AttributeChecker(op, attr).check();
}
