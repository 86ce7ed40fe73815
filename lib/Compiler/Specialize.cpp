//===- Specialize.cpp - bind dynamic input dimensions -----------*- C++ -*-===//
//
// strata compiles one static-shape specialization at a time (docs/compiler.md,
// "Dynamic dimensions"): the caller binds every dynamic input dimension, the
// graph stage propagates the shapes, and code generation sees static types
// only. A run of `strata run`/`conformance` on a model with a symbolic batch
// compiles (and caches) one specialization per distinct input shape.
//
// The exceptions are values whose size depends on tensor values and that
// the runtime's host kernels produce: strings (StringNormalizer removing
// stop words) and the results of NonZero, Compress, Unique and
// NonMaxSuppression. They live in Host buffers that the runtime sizes when
// the step writing them runs (docs/runtime.md, "Strings" and
// "Value-dependent shapes"), so such a value may stay dynamic as long as
// only host steps and the model's outputs read it. Anything else is an
// error naming its node.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Library.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"

#include <set>

using namespace mlir;
namespace graph = strata::graph;

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s + "]";
}

namespace {

/// Replaces the entry's sequence and optional arguments by the tensors they
/// hold in this specialization (docs/compiler.md, "Sequences and optionals
/// at the boundary"). A sequence `s` is bound by `s` = {N} and its elements
/// by `s[0]` ... `s[N-1]`; an optional `o` by `o` = {0} (empty) or {1} and
/// the value it holds by `o[0]`. Each tensor in them becomes an argument of
/// that name (a "leaf"), and ops at the top of the body rebuild the value
/// (graph.sequence_construct, graph.sequence_empty, graph.optional) for the
/// graph stage to resolve, as it does sequences the model builds itself.
class StructuredInputs {
public:
  StructuredInputs(func::FuncOp entry, const strata::CompileOptions &options,
                   std::set<std::string> &used)
      : entry(entry), options(options), used(used), b(entry.getContext()) {
    b.setInsertionPointToStart(&entry.getBody().front());
  }

  /// Flattens every structured argument; false after an error.
  bool run() {
    bool ok = true;
    for (unsigned i = 0; i < entry.getNumArguments();) {
      BlockArgument arg = entry.getArgument(i);
      if (!isa<graph::SequenceType, graph::OptionalType>(arg.getType())) {
        ++i;
        continue;
      }
      std::string name = strata::getArgumentName(entry, i);
      next = i + 1;
      Value value = materialize(name, arg.getType(), arg.getLoc());
      if (!value) {
        ok = false;
        ++i;
        continue;
      }
      arg.replaceAllUsesWith(value);
      (void)entry.eraseArgument(i);
      // The leaves were inserted after `arg`, which is gone.
      i = next - 1;
    }
    return ok;
  }

private:
  /// The value of `type` named `name`, its leaves added as arguments at
  /// `next`; null after an error.
  Value materialize(const std::string &name, Type type, Location loc) {
    if (auto tensor = dyn_cast<TensorType>(type))
      return leaf(name, tensor, loc);
    auto it = options.inputShapes.find(name);
    bool isSequence = isa<graph::SequenceType>(type);
    if (it == options.inputShapes.end() || it->second.size() != 1 ||
        it->second[0] < 0 || (!isSequence && it->second[0] > 1)) {
      emitError(entry.getLoc())
          << "input '" << name << "' is "
          << (isSequence ? "a sequence; give its length, --input-shape "
                         : "an optional; say whether it holds a value, "
                           "--input-shape ")
          << name << (isSequence ? "=N" : "=0 or =1")
          << ", then the shape of each tensor it holds (" << name << "[0]=..."
          << (isSequence ? ", " + name + "[1]=..." : "") << ")";
      return nullptr;
    }
    used.insert(name);
    int64_t count = it->second[0];
    if (auto seq = dyn_cast<graph::SequenceType>(type)) {
      auto element = dyn_cast<TensorType>(seq.getElementType());
      if (!element) {
        emitError(entry.getLoc()) << "input '" << name << "' is a sequence of "
                                  << seq.getElementType()
                                  << ", which strata does not take as an input";
        return nullptr;
      }
      if (count == 0)
        return graph::SequenceEmptyOp::create(
            b, loc, type, TypeAttr::get(element.getElementType()));
      SmallVector<Value> elements;
      for (int64_t i = 0; i < count; ++i) {
        Value v = leaf(name + "[" + std::to_string(i) + "]", element, loc);
        if (!v)
          return nullptr;
        elements.push_back(v);
      }
      return graph::SequenceConstructOp::create(b, loc, type, elements);
    }
    auto opt = cast<graph::OptionalType>(type);
    if (count == 0)
      return graph::OptionalOp::create(b, loc, type, Value(),
                                       TypeAttr::get(opt.getElementType()));
    Value held = materialize(name + "[0]", opt.getElementType(), loc);
    if (!held)
      return nullptr;
    return graph::OptionalOp::create(b, loc, type, held, TypeAttr());
  }

  /// A new argument `name` for a tensor of declared type `declared`, with
  /// the shape bound to `name` (checked later with every other input).
  Value leaf(const std::string &name, TensorType declared, Location loc) {
    auto it = options.inputShapes.find(name);
    if (it == options.inputShapes.end()) {
      emitError(entry.getLoc())
          << "input '" << name << "' needs its shape (--input-shape " << name
          << "=...)";
      return nullptr;
    }
    // The binding is applied (and checked against a ranked declaration)
    // by the loop over tensor arguments that follows.
    Type type = declared;
    if (!isa<RankedTensorType>(declared))
      type = RankedTensorType::get(it->second, declared.getElementType());
    auto attrs = b.getDictionaryAttr(
        b.getNamedAttr("graph.name", b.getStringAttr(name)));
    (void)entry.insertArgument(next, type, attrs, loc);
    return entry.getArgument(next++);
  }

  func::FuncOp entry;
  const strata::CompileOptions &options;
  std::set<std::string> &used;
  OpBuilder b;
  unsigned next = 0;
};

} // namespace

LogicalResult strata::bindInputShapes(ModuleOp module,
                                      const CompileOptions &options) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");

  std::set<std::string> used;
  if (!StructuredInputs(entry, options, used).run())
    return failure();
  SmallVector<Type> argTypes;
  bool failedAny = false;
  for (BlockArgument arg : entry.getArguments()) {
    std::string name = getArgumentName(entry, arg.getArgNumber());
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type) {
      emitError(entry.getLoc())
          << "input '" << name << "' has type " << arg.getType() << "; the "
          << options.target << " target needs inputs that are ranked tensors";
      failedAny = true;
      argTypes.push_back(arg.getType());
      continue;
    }
    auto it = options.inputShapes.find(name);
    if (it == options.inputShapes.end()) {
      if (!type.hasStaticShape()) {
        emitError(entry.getLoc())
            << "input '" << name << "' has the dynamic shape "
            << shapeString(type.getShape())
            << "; give its shape (e.g. --input-shape " << name << "=...)";
        failedAny = true;
      }
      argTypes.push_back(type);
      continue;
    }
    used.insert(name);
    const std::vector<int64_t> &shape = it->second;
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; })) {
      emitError(entry.getLoc())
          << "input '" << name << "' was given the shape " << shapeString(shape)
          << ", which has a negative dimension";
      failedAny = true;
      argTypes.push_back(type);
      continue;
    }
    bool fits = static_cast<int64_t>(shape.size()) == type.getRank();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = type.isDynamicDim(d) || type.getDimSize(d) == shape[d];
    if (!fits) {
      // The model declares another shape. Exporters write declarations from
      // one trace, and the ONNX test data itself has inputs that contradict
      // them (CastLike's `like`): follow the data, say so, and let the graph
      // stage report any op that cannot take it (naming the node).
      emitWarning(entry.getLoc())
          << "input '" << name << "' is declared "
          << shapeString(type.getShape()) << " but given " << shapeString(shape)
          << "; compiling for the given shape";
    }
    argTypes.push_back(type.clone(shape));
  }
  for (const auto &given : options.inputShapes) {
    const auto &name = given.first;
    if (!used.count(name) && !llvm::any_of(entry.getArguments(), [&](auto a) {
          return getArgumentName(entry, a.getArgNumber()) == name;
        })) {
      emitError(entry.getLoc()) << "a shape was given for '" << name
                                << "', which is not an input of the model";
      failedAny = true;
    }
  }
  if (failedAny)
    return failure();

  for (auto [arg, type] : llvm::zip(entry.getArguments(), argTypes))
    arg.setType(type);
  entry.setType(FunctionType::get(module.getContext(), argTypes,
                                  entry.getFunctionType().getResults()));
  return success();
}

/// Whether `v` is sized when the program runs, in a Host buffer: strings,
/// and the results of the host kernels of value-shaped ops.
static bool sizedAtRunTime(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.hasStaticShape())
    return false;
  if (isa<graph::StringType>(type.getElementType()))
    return true;
  Operation *def = v.getDefiningOp();
  return def && (strata::isValueShapedOp(def) || strata::onRunTimeShapes(def));
}

/// The entry's arguments that `roots` are computed from.
static std::set<unsigned> inputsBehind(func::FuncOp entry,
                                       ArrayRef<Value> roots) {
  llvm::SmallPtrSet<Operation *, 32> seen;
  std::set<unsigned> reached;
  SmallVector<Value> work(roots);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &entry.getBody().front())
        reached.insert(arg.getArgNumber());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def && seen.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return reached;
}

/// Whether code generation cannot take `op` as the graph stage left it: a
/// result of unknown shape (not sized at run time by a host kernel), a
/// sequence or optional, or control flow that stayed.
static bool needsCompileTimeValues(Operation *op) {
  if (isa<graph::IfOp, graph::LoopOp, graph::ScanOp, graph::SequenceMapOp>(op))
    return true;
  return llvm::any_of(op->getResults(), [](Value result) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    return (!type || !type.hasStaticShape()) && !sizedAtRunTime(result);
  });
}

LogicalResult strata::specializeInputValues(ModuleOp module,
                                            const CompileOptions &options,
                                            bool &changed) {
  changed = false;
  func::FuncOp entry = getEntryFunction(module);
  if (!entry || options.inputValues.empty())
    return success();
  // The inputs whose values the ops that need them depend on. Only ops
  // where the unknown starts count, not the ops downstream that inherit a
  // dynamic operand (a Mul of a Range's result by a scale input must not
  // specialize the scale); the pass repeats once those are resolved.
  auto unknownTensor = [](Value v) {
    auto type = dyn_cast<TensorType>(v.getType());
    return type && !type.hasStaticShape() && !sizedAtRunTime(v);
  };
  SmallVector<Value> roots;
  entry.walk([&](Operation *op) {
    if (needsCompileTimeValues(op) &&
        llvm::none_of(op->getOperands(), unknownTensor))
      llvm::append_range(roots, op->getOperands());
  });
  std::set<unsigned> reached = inputsBehind(entry, roots);
  OpBuilder b(entry.getBody());
  for (unsigned index : reached) {
    BlockArgument arg = entry.getArgument(index);
    std::string name = getArgumentName(entry, index);
    auto given = options.inputValues.find(name);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (given == options.inputValues.end() || arg.use_empty() || !type ||
        !type.hasStaticShape() ||
        static_cast<int64_t>(given->second.size()) != type.getNumElements())
      continue;
    Type element = type.getElementType();
    SmallVector<Attribute> values;
    for (double value : given->second) {
      if (auto floatType = dyn_cast<FloatType>(element))
        values.push_back(FloatAttr::get(floatType, value));
      else if (auto intType = dyn_cast<IntegerType>(element))
        values.push_back(IntegerAttr::get(
            intType, APInt(intType.getWidth(), static_cast<int64_t>(value),
                           /*isSigned=*/true, /*implicitTrunc=*/true)));
    }
    if (values.size() != given->second.size())
      continue; // an element type the values cannot be written in
    auto attr = DenseElementsAttr::get(type, values);
    Value constant =
        graph::ConstantOp::create(b, arg.getLoc(), cast<ElementsAttr>(attr));
    arg.replaceAllUsesWith(constant);
    // The module records the value; a session refuses any other.
    entry.setArgAttr(
        index, strata::kernel::name<strata::kernel::RequiredValue>(), attr);
    changed = true;
  }
  return success();
}

LogicalResult strata::verifyStaticShapes(ModuleOp module,
                                         const CompileOptions &options) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");
  // Every value must now be static: code generation and the memory plan
  // need sizes. The exceptions are values whose size depends on tensor
  // values and which live in Host buffers that the runtime sizes when the
  // step writing them runs: strings, and the results of the host kernels of
  // value-shaped ops (NonZero, Compress, Unique, NonMaxSuppression). Only
  // host steps and the model's outputs may read those. Report the first op
  // at fault (its consumers would only repeat the message).
  auto target = options.target;
  // Pre-order, so that a host loop's body (host kernels on shapes of run
  // time, host.loop) is skipped rather than checked.
  WalkResult walk = entry.walk<WalkOrder::PreOrder>([&](Operation *op) {
    // A value sized at run time read by generated code, or by a view that
    // would need arena bytes.
    if (!isHostOp(op) && !isa<func::ReturnOp>(op)) {
      for (Value operand : op->getOperands()) {
        if (!sizedAtRunTime(operand))
          continue;
        InFlightDiagnostic diag = op->emitError()
                                  << strata::describeNode(op) << " reads ";
        if (Operation *def = operand.getDefiningOp())
          diag << "the result of " << strata::describeNode(def);
        else
          diag << "an input";
        diag << ", whose shape "
             << shapeString(
                    cast<RankedTensorType>(operand.getType()).getShape())
             << " is only known at run time (it depends on tensor values); "
                "on the "
             << target
             << " target only the runtime's host kernels (strings, NonZero, "
                "Compress, Unique, NonMaxSuppression) and the model's outputs "
                "may read such a value";
        return WalkResult::interrupt();
      }
    }
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (type && type.hasStaticShape())
        continue;
      if (sizedAtRunTime(result))
        continue;
      if (type) {
        InFlightDiagnostic diag = op->emitError("the shape of this result, ")
                                  << shapeString(type.getShape())
                                  << ", is not known at compile time (it "
                                     "depends on tensor values); the "
                                  << target << " target needs static shapes";
        // The small inputs it depends on, whose values would make it static
        // (CompileOptions::inputValues).
        std::string names;
        for (unsigned index :
             inputsBehind(entry, llvm::to_vector(op->getOperands()))) {
          auto argType =
              dyn_cast<RankedTensorType>(entry.getArgument(index).getType());
          if (!argType || !argType.hasStaticShape() ||
              argType.getNumElements() >
                  static_cast<int64_t>(
                      strata::CompileOptions::kMaxValueElements) ||
              !argType.getElementType().isIntOrFloat())
            continue;
          std::string name = getArgumentName(entry, index);
          names += (names.empty() ? "" : ", ") + ("'" + name + "'");
        }
        if (!names.empty())
          diag << "; it depends on the value of input " << names
               << ": give it with --input-value NAME=V... (strata run and "
                  "conformance pass the values of the inputs they are given)";
        // Say where a run-time size comes from when it flows into numbers.
        for (Value operand : op->getOperands())
          if (sizedAtRunTime(operand)) {
            diag << " (" << strata::describeNode(op)
                 << " reads the value-dependent result of ";
            if (Operation *def = operand.getDefiningOp())
              diag << strata::describeNode(def);
            else
              diag << "an input";
            diag << ")";
            break;
          }
      } else {
        op->emitError("produces ")
            << result.getType() << ", which the " << target
            << " target cannot hold in a buffer";
      }
      return WalkResult::interrupt();
    }
    if (isa<graph::LoopOp>(op) && isHostOp(op))
      return WalkResult::skip();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult strata::specializeShapes(ModuleOp module,
                                       const CompileOptions &options) {
  if (failed(bindInputShapes(module, options)))
    return failure();
  PassManager pm(module.getContext());
  graph::buildGraphPipeline(pm);
  if (failed(pm.run(module)))
    return failure();
  return verifyStaticShapes(module, options);
}
