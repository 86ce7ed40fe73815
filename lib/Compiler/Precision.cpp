//===- Precision.cpp - f16/bf16 storage between kernels ---------*- C++ -*-===//
//
// strata-lower-precision{precision=bf16|f16}, the fused stage's pass behind
// `--precision=fp16|bf16`: the model runs with its tensors stored in the low
// type between kernels and computed in f32 inside them, as TensorRT's fp16
// mode does. Memory traffic between kernels and the weights halve; every
// sum (matmul, reduction, norm, softmax) still accumulates in f32.
//
// After strata-partition the entry function holds constants, views and one
// call per kernel. Values linked by views form one buffer; a buffer of f32
// is stored in the low type when its producer and every reader take it:
//
//   - a graph.constant does (converted here, round to nearest even);
//   - a generated kernel does: its parameter or result is retyped, with a
//     graph.cast to f32 after entry and one to the low type before return,
//     so its ops compute in f32 as before. A kernel split into row blocks
//     keeps the parameters it reads whole in f32 (RowParallel.h plans every
//     value of such a kernel by rows: a cast of a whole weight has none);
//   - a library kernel does when its library takes the low type
//     (libraryTakes), and then for all its f32 operands and results at once
//     (its body ops are retyped: the library computes in f32 itself);
//   - the model's inputs and outputs do not: the interface stays f32.
//
// Integers, booleans, f64 and tensors already in a 16-bit type are left
// alone. The module records the choice (strata.precision) and each kernel
// whose interface changed says how (strata.storage), for `strata explain`.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"
#include "RowParallel.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace strata {
#define GEN_PASS_DEF_LOWERPRECISIONPASS
#include "Passes.h.inc"
} // namespace strata

#define DEBUG_TYPE "strata-lower-precision"

using namespace mlir;
namespace kernel = strata::kernel;
namespace graph = strata::graph;

/// Whether the runtime's library kernel `library` reads and writes tensors
/// of `elementType`. oneDNN's steps take f32 only; cuBLASLt's matmul takes
/// f16 and bf16 operands, bias and result, with f32 compute.
bool strata::libraryTakes(StringRef library, Type elementType) {
  if (elementType.isF32())
    return true;
  if (library == "cublaslt.matmul")
    return elementType.isF16() || elementType.isBF16();
  return false;
}

namespace {

/// An f32 tensor: what the pass may store in the low type.
bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

Type withElement(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// gather(cast(x)) -> cast(gather(x)) for each gather reading the widened
/// parameter `widened` as its data: the kernel then reads the elements it
/// picks in the low type and widens them one by one, inside the loop that
/// consumes them. Left as it was, the cast widens the whole parameter into
/// a temporary first (a gather reads its data through tensor.extract, which
/// linalg's fusion does not follow): an embedding table cast whole per run,
/// a depthwise convolution's windows split from their sum into ops over a
/// scratch buffer, one block for the kernel.
void sinkBelowGathers(graph::CastOp widened) {
  OpBuilder builder(widened->getContext());
  Value arg = widened.getInput();
  Type low = cast<RankedTensorType>(arg.getType()).getElementType();
  for (OpOperand &use : llvm::make_early_inc_range(widened->getUses())) {
    Operation *gather = use.getOwner();
    if (use.getOperandNumber() != 0 ||
        !isa<graph::GatherOp, graph::GatherElementsOp, graph::GatherNDOp>(
            gather))
      continue;
    Value result = gather->getResult(0);
    Type wide = result.getType();
    builder.setInsertionPointAfter(gather);
    auto widenedResult =
        graph::CastOp::create(builder, gather->getLoc(), wide, result);
    result.replaceAllUsesExcept(widenedResult.getResult(), widenedResult);
    result.setType(withElement(wide, low));
    use.set(arg);
  }
}

/// "0, 2 and 3".
std::string listText(ArrayRef<unsigned> items) {
  std::string text;
  for (auto [i, item] : llvm::enumerate(items)) {
    if (i)
      text += i + 1 == items.size() ? " and " : ", ";
    text += std::to_string(item);
  }
  return text;
}

/// One buffer of the entry function: a value and the views of it.
struct Buffer {
  SmallVector<Value> values;
  bool lowered = true;
};

class LowerPrecision {
public:
  LowerPrecision(ModuleOp module, func::FuncOp entry, Type low, StringRef name)
      : module(module), entry(entry), symbols(module), low(low), name(name) {}

  void run();

private:
  /// The kernel a call runs, when it is one (called once, so its interface
  /// is this call's alone).
  func::FuncOp kernelOf(Operation *op);
  bool kernelTakes(func::FuncOp kernel, bool isResult, unsigned index);
  bool producerTakes(Value root);
  bool readerTakes(OpOperand &use);
  void lowerConstant(graph::ConstantOp constant);
  void lowerGenerated(func::FuncOp kernel, ArrayRef<unsigned> params,
                      ArrayRef<unsigned> results);
  void lowerLibrary(func::FuncOp kernel);

  ModuleOp module;
  func::FuncOp entry;
  SymbolTable symbols;
  Type low;
  StringRef name;
  llvm::DenseMap<Operation *, unsigned> callCounts;
  /// Parameters of row-split generated kernels that are read whole.
  llvm::DenseMap<Operation *, llvm::DenseSet<unsigned>> readWhole;
  /// Each entry-function value's buffer (the root value of its views).
  llvm::DenseMap<Value, Value> rootOf;
  llvm::MapVector<Value, Buffer> buffers;
};

} // namespace

func::FuncOp LowerPrecision::kernelOf(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return {};
  auto kernel = symbols.lookup<func::FuncOp>(call.getCallee());
  if (!kernel || !kernel::has<kernel::IsKernel>(kernel) ||
      kernel.isDeclaration() || callCounts.lookup(kernel) != 1)
    return {};
  return kernel;
}

bool LowerPrecision::kernelTakes(func::FuncOp kernel, bool isResult,
                                 unsigned index) {
  auto kind = kernel::get<kernel::Kind>(kernel);
  if (!kind)
    return false;
  if (kind.getValue() == "library") {
    auto library = kernel::get<kernel::Library>(kernel);
    return library && strata::libraryTakes(library.getValue(), low);
  }
  if (kind.getValue() != "codegen")
    return false;
  if (isResult)
    return true;
  auto whole = readWhole.find(kernel);
  return whole == readWhole.end() || !whole->second.contains(index);
}

bool LowerPrecision::producerTakes(Value root) {
  if (isa<BlockArgument>(root))
    return false; // a model input
  Operation *op = root.getDefiningOp();
  if (auto constant = dyn_cast<graph::ConstantOp>(op))
    return isa<DenseElementsAttr>(constant.getValue());
  if (func::FuncOp kernel = kernelOf(op))
    return kernelTakes(kernel, /*isResult=*/true,
                       cast<OpResult>(root).getResultNumber());
  return false;
}

bool LowerPrecision::readerTakes(OpOperand &use) {
  Operation *op = use.getOwner();
  if (strata::isViewOp(op))
    return use.getOperandNumber() == 0; // the view is the same buffer
  if (func::FuncOp kernel = kernelOf(op))
    return kernelTakes(kernel, /*isResult=*/false, use.getOperandNumber());
  return false; // the model's result, or an op this pass does not know
}

void LowerPrecision::lowerConstant(graph::ConstantOp constant) {
  auto dense = cast<DenseElementsAttr>(constant.getValue());
  const llvm::fltSemantics &semantics =
      cast<FloatType>(low).getFloatSemantics();
  bool overflow = false;
  DenseElementsAttr converted = dense.mapValues(low, [&](const APFloat &value) {
    APFloat copy = value;
    bool losesInfo;
    APFloat::opStatus status =
        copy.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    overflow |= (status & APFloat::opOverflow) != 0;
    return copy.bitcastToAPInt();
  });
  if (overflow)
    constant.emitWarning("a weight exceeds the range of ")
        << name << "; it is stored as infinity";
  constant.setValueAttr(converted);
  Value(constant.getResult()).setType(converted.getType());
}

void LowerPrecision::lowerGenerated(func::FuncOp kernel,
                                    ArrayRef<unsigned> params,
                                    ArrayRef<unsigned> results) {
  Block &body = kernel.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  for (unsigned index : params) {
    BlockArgument arg = body.getArgument(index);
    Type f32Type = arg.getType();
    arg.setType(withElement(f32Type, low));
    auto widened = graph::CastOp::create(builder, arg.getLoc(), f32Type, arg);
    arg.replaceAllUsesExcept(widened.getResult(), widened);
    sinkBelowGathers(widened);
    // A cast of the widened value back to the low type (the model stored it
    // in that type itself) reads the parameter as it is.
    for (Operation *user : llvm::make_early_inc_range(widened->getUsers()))
      if (auto narrow = dyn_cast<graph::CastOp>(user))
        if (narrow.getType() == arg.getType()) {
          narrow.replaceAllUsesWith(arg);
          narrow.erase();
        }
    if (widened->use_empty())
      widened->erase();
  }
  Operation *ret = body.getTerminator();
  builder.setInsertionPoint(ret);
  for (unsigned index : results) {
    Value value = ret->getOperand(index);
    Type lowType = withElement(value.getType(), low);
    Value stored;
    // A value widened from the low type is returned as it was.
    if (auto widened = value.getDefiningOp<graph::CastOp>())
      if (widened.getInput().getType() == lowType)
        stored = widened.getInput();
    if (!stored)
      stored = graph::CastOp::create(builder, value.getLoc(), lowType, value);
    ret->setOperand(index, stored);
    if (Operation *widened = value.getDefiningOp();
        widened && isa<graph::CastOp>(widened) && widened->use_empty())
      widened->erase();
  }
  kernel.setType(FunctionType::get(kernel.getContext(), body.getArgumentTypes(),
                                   ret->getOperandTypes()));
  std::string note = name.str() + " storage for ";
  if (!params.empty())
    note += std::string(params.size() == 1 ? "parameter " : "parameters ") +
            listText(params);
  if (!params.empty() && !results.empty())
    note += " and ";
  if (!results.empty())
    note += std::string(results.size() == 1 ? "result " : "results ") +
            listText(results);
  note += "; computed in f32 (casts inside the kernel)";
  kernel::set<kernel::Storage>(kernel,
                               StringAttr::get(kernel.getContext(), note));
}

void LowerPrecision::lowerLibrary(func::FuncOp kernel) {
  // The body says what the step computes; with its operands and results in
  // the low type, so are its values (the library still computes in f32).
  Block &body = kernel.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (isF32Tensor(arg.getType()))
      arg.setType(withElement(arg.getType(), low));
  body.walk([&](Operation *op) {
    if (auto constant = dyn_cast<graph::ConstantOp>(op))
      if (isF32Tensor(constant.getType()) &&
          isa<DenseElementsAttr>(constant.getValue())) {
        lowerConstant(constant);
        return;
      }
    for (Value result : op->getResults())
      if (isF32Tensor(result.getType()))
        result.setType(withElement(result.getType(), low));
  });
  kernel.setType(FunctionType::get(kernel.getContext(), body.getArgumentTypes(),
                                   body.getTerminator()->getOperandTypes()));
  auto library = kernel::get<kernel::Library>(kernel);
  kernel::set<kernel::Storage>(
      kernel, StringAttr::get(kernel.getContext(),
                              name.str() + " operands and results: " +
                                  library.getValue().str() + " takes " +
                                  name.str() + " and computes in f32"));
}

void LowerPrecision::run() {
  // Calls per kernel: a kernel called twice would need one interface for
  // both calls (the partitioner outlines each group once, so none is).
  module.walk([&](func::CallOp call) {
    if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
      ++callCounts[callee];
  });
  for (auto kernel : module.getOps<func::FuncOp>()) {
    if (!kernel::has<kernel::ParallelBlock>(kernel) || kernel.isDeclaration())
      continue;
    // The split the kernel records (its block and leading dimensions).
    std::optional<strata::RowPlan> plan = strata::planRows(kernel);
    auto &whole = readWhole[kernel];
    for (BlockArgument arg : kernel.getArguments())
      if (!plan || !plan->rowValues.contains(arg))
        whole.insert(arg.getArgNumber());
  }

  // The buffers: each f32 value not defined by a view, with its views.
  for (Value arg : entry.getArguments())
    if (isF32Tensor(arg.getType())) {
      rootOf[arg] = arg;
      buffers[arg].values.push_back(arg);
    }
  for (Operation &op : entry.getBody().front()) {
    if (strata::isViewOp(&op)) {
      auto root = rootOf.find(op.getOperand(0));
      if (root != rootOf.end()) {
        rootOf[op.getResult(0)] = root->second;
        buffers[root->second].values.push_back(op.getResult(0));
      }
      continue;
    }
    for (Value result : op.getResults())
      if (isF32Tensor(result.getType())) {
        rootOf[result] = result;
        buffers[result].values.push_back(result);
      }
  }

  // Which buffers every producer and reader takes in the low type.
  for (auto &[root, buffer] : buffers) {
    buffer.lowered = producerTakes(root);
    for (Value value : buffer.values)
      for (OpOperand &use : value.getUses())
        buffer.lowered = buffer.lowered && readerTakes(use);
  }
  // A library step takes the low type for all its f32 operands and results
  // or for none: it has one type. Keeping one buffer f32 keeps the others.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation &op : entry.getBody().front()) {
      func::FuncOp kernel = kernelOf(&op);
      auto kind = kernel ? kernel::get<kernel::Kind>(kernel) : nullptr;
      if (!kind || kind.getValue() != "library")
        continue;
      SmallVector<Value> values(op.getOperands());
      llvm::append_range(values, op.getResults());
      SmallVector<Buffer *> interface;
      for (Value value : values) {
        auto root = rootOf.find(value);
        if (root != rootOf.end())
          interface.push_back(&buffers.find(root->second)->second);
      }
      if (llvm::all_of(interface, [](Buffer *b) { return b->lowered; }) ||
          llvm::none_of(interface, [](Buffer *b) { return b->lowered; }))
        continue;
      for (Buffer *buffer : interface)
        buffer->lowered = false;
      changed = true;
    }
  }

  // Retype: constants, views and call results in the entry function, then
  // each kernel whose interface changed.
  auto isLowered = [&](Value value) {
    auto root = rootOf.find(value);
    return root != rootOf.end() && buffers.find(root->second)->second.lowered;
  };
  for (auto &[root, buffer] : buffers) {
    if (!buffer.lowered)
      continue;
    if (auto constant = root.getDefiningOp<graph::ConstantOp>())
      lowerConstant(constant);
    for (Value value : buffer.values)
      if (isF32Tensor(value.getType()))
        value.setType(withElement(value.getType(), low));
  }
  for (Operation &op : entry.getBody().front()) {
    func::FuncOp kernel = kernelOf(&op);
    if (!kernel)
      continue;
    SmallVector<unsigned> params, results;
    for (auto [i, operand] : llvm::enumerate(op.getOperands()))
      if (isLowered(operand))
        params.push_back(i);
    for (auto [i, result] : llvm::enumerate(op.getResults()))
      if (isLowered(result))
        results.push_back(i);
    if (params.empty() && results.empty()) {
      // Say why a library step keeps f32, next to the steps that do not.
      auto library = kernel::get<kernel::Library>(kernel);
      if (!library)
        continue;
      std::string why =
          "f32: " + library.getValue().str() +
          (strata::libraryTakes(library.getValue(), low)
               ? " takes " + name.str() +
                     ", but not for every operand and result of this step "
                     "(the model's inputs and outputs, and buffers that a "
                     "step taking f32 only reads, stay f32)"
               : std::string(" takes f32 only"));
      kernel::set<kernel::Storage>(kernel,
                                   StringAttr::get(module.getContext(), why));
      continue;
    }
    if (kernel::get<kernel::Kind>(kernel).getValue() == "library")
      lowerLibrary(kernel);
    else
      lowerGenerated(kernel, params, results);
  }

  kernel::set<kernel::Precision>(module,
                                 StringAttr::get(module.getContext(), name));
}

namespace {

struct LowerPrecisionPass
    : strata::impl::LowerPrecisionPassBase<LowerPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The module's #strata.compile, unless the pass is given its own.
    std::string type = precision.hasValue()
                           ? std::string(precision)
                           : strata::recordedCompileOptions(module).precision;
    if (type == "" || type == "fp32")
      return;
    Type low;
    if (type == "bf16")
      low = BFloat16Type::get(module.getContext());
    else if (type == "f16" || type == "fp16")
      low = Float16Type::get(module.getContext());
    else {
      module.emitError("strata-lower-precision: unknown precision '")
          << type << "' (bf16 or f16)";
      return signalPassFailure();
    }
    func::FuncOp entry = strata::getEntryFunction(module);
    if (!entry) {
      module.emitError("strata-lower-precision: the module has no entry "
                       "function");
      return signalPassFailure();
    }
    LowerPrecision(module, entry, low, low.isF16() ? "f16" : "bf16").run();
  }
};

} // namespace
