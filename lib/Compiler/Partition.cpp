//===- Partition.cpp - the graph layer's kernel decisions -------*- C++ -*-===//
//
// Groups the entry function's ops into kernels and outlines each group into
// a private function, so that every decision is in the IR:
//
//   func.func private @k2_matmul_add_relu(...) attributes {strata.kernel,
//       strata.kind = "codegen", strata.nodes = ["MatMul_0", "Add_1", ...]}
//
// The entry function keeps graph.constant ops, reshape-like ops that become
// views of their operand's buffer (no kernel, no copy), and one func.call per
// kernel in execution order.
//
// Grouping rule: the ops are visited in program order and a generated kernel
// grows while each next op consumes a value the kernel produces (a chain, a
// reduction with its producers and consumers, a matmul with its epilogue);
// any other op closes it. Kernels are therefore contiguous runs of a
// topological order, which makes them convex: no path leaves a kernel and
// comes back, so outlining cannot create a cycle. Small constants (splats and
// up to kInlineConstantElements elements) are cloned into the kernels that
// use them so that codegen can fold them; larger ones are passed as buffers.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Library.h"
#include "RowParallel.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>
#include <deque>

using namespace mlir;
using namespace strata;
namespace graph = strata::graph;

static constexpr int64_t kInlineConstantElements = 64;
static constexpr size_t kMaxKernelOps = 48;

func::FuncOp strata::getEntryFunction(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      return func;
  return nullptr;
}

static std::string nameAttr(DictionaryAttr attrs, const char *fallback,
                            unsigned index) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("graph.name"))
      return name.str();
  return fallback + std::to_string(index);
}

std::string strata::getArgumentName(func::FuncOp func, unsigned index) {
  return nameAttr(func.getArgAttrDict(index), "input", index);
}

std::string strata::getResultName(func::FuncOp func, unsigned index) {
  return nameAttr(func.getResultAttrDict(index), "output", index);
}

std::string strata::getNodeName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "";
}

bool strata::isViewOp(Operation *op) {
  if (!isa<graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp,
           graph::UnsqueezeOp, graph::IdentityOp>(op))
    return false;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return in && out && in.hasStaticShape() && out.hasStaticShape() &&
         in.getElementType() == out.getElementType() &&
         in.getNumElements() == out.getNumElements();
}

static bool isInlinableConstant(Operation *op) {
  auto constant = dyn_cast<graph::ConstantOp>(op);
  if (!constant)
    return false;
  auto value = constant.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    if (dense.isSplat())
      return true;
  return value.getNumElements() <= kInlineConstantElements;
}

namespace {
struct Group {
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> members;
  /// Set for a library step (its inputs are in the library's order).
  std::optional<strata::LibraryMatch> library;
};
} // namespace

/// "k3_matmul_add_relu": the kernel's index and what it computes, in a
/// C identifier (kernel names are symbols of the shared object).
static std::string kernelName(size_t index, const Group &group) {
  std::string name = "k" + std::to_string(index);
  constexpr size_t kNamedOps = 4;
  for (auto [i, op] : llvm::enumerate(group.ops)) {
    if (i == kNamedOps) {
      name += "_etc" + std::to_string(group.ops.size() - kNamedOps);
      break;
    }
    name += "_";
    for (char c : op->getName().stripDialect())
      name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  }
  return name;
}

static void outline(ModuleOp module, func::FuncOp entry, const Group &group,
                    size_t index) {
  MLIRContext *context = module.getContext();
  // Operands from outside the group, in first-use order; small constants
  // are cloned in instead.
  // A library kernel takes its operands in its own order, repeats included
  // (x @ x passes x twice); a generated kernel takes each value once.
  llvm::SetVector<Value> inputSet;
  SmallVector<Value> inputs;
  llvm::SetVector<Operation *> inlined;
  if (group.library)
    for (OpOperand *operand : group.library->inputs)
      inputs.push_back(operand->get());
  for (Operation *op : group.ops)
    for (Value operand : op->getOperands()) {
      if (group.library)
        break;
      Operation *def = operand.getDefiningOp();
      if (def && group.members.contains(def))
        continue;
      if (def && isInlinableConstant(def))
        inlined.insert(def);
      else
        inputSet.insert(operand);
    }
  if (!group.library)
    inputs.assign(inputSet.begin(), inputSet.end());
  SmallVector<Value> outputs;
  for (Operation *op : group.ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !group.members.contains(user);
          }))
        outputs.push_back(result);

  SmallVector<Type> inputTypes, outputTypes;
  for (Value v : inputs)
    inputTypes.push_back(v.getType());
  for (Value v : outputs)
    outputTypes.push_back(v.getType());

  OpBuilder builder(context);
  builder.setInsertionPoint(entry);
  std::string name = kernelName(index, group);
  if (group.library)
    name = "lib" + name.substr(1);
  auto kernel =
      func::FuncOp::create(builder, group.ops.front()->getLoc(), name,
                           FunctionType::get(context, inputTypes, outputTypes));
  kernel.setPrivate();
  kernel->setAttr("strata.kernel", UnitAttr::get(context));
  if (group.library) {
    kernel->setAttr("strata.kind", StringAttr::get(context, "library"));
    kernel->setAttr("strata.library",
                    StringAttr::get(context, group.library->library));
    kernel->setAttr("strata.attrs",
                    group.library->attrs.getDictionary(context));
    kernel->setAttr("strata.reason",
                    StringAttr::get(context, group.library->reason));
  } else {
    kernel->setAttr("strata.kind", StringAttr::get(context, "codegen"));
  }
  SmallVector<Attribute> nodes;
  for (Operation *op : group.ops)
    if (std::string node = getNodeName(op); !node.empty())
      nodes.push_back(StringAttr::get(context, node));
  kernel->setAttr("strata.nodes", ArrayAttr::get(context, nodes));

  Block *body = kernel.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [value, arg] : llvm::zip(inputs, body->getArguments()))
    if (!mapping.contains(value))
      mapping.map(value, arg);
  for (Operation *op : inlined)
    builder.clone(*op, mapping);
  for (Operation *op : group.ops)
    builder.clone(*op, mapping);
  SmallVector<Value> results;
  for (Value v : outputs)
    results.push_back(mapping.lookup(v));
  func::ReturnOp::create(builder, group.ops.back()->getLoc(), results);
  if (!group.library)
    if (std::optional<RowPlan> plan = planRows(kernel)) {
      // Threads split the kernel's rows (RowParallel.h).
      auto i64 = IntegerType::get(context, 64);
      kernel->setAttr("strata.parallel_rows",
                      IntegerAttr::get(i64, plan->rows));
      kernel->setAttr("strata.parallel_block",
                      IntegerAttr::get(i64, plan->block));
    }

  // The call takes the group's place (after its last op: every input is
  // defined before some group op, and no op between the group's ops uses
  // its results, since the group is a contiguous run).
  builder.setInsertionPointAfter(group.ops.back());
  auto call =
      func::CallOp::create(builder, group.ops.back()->getLoc(), kernel, inputs);
  for (auto [value, result] : llvm::zip(outputs, call.getResults()))
    value.replaceAllUsesWith(result);
  for (Operation *op : llvm::reverse(group.ops))
    op->erase();
}

LogicalResult strata::partitionIntoKernels(ModuleOp module,
                                           const CompileOptions &options) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");

  // Weights stored transposed (Gemm's transB, as PyTorch's Linear exports
  // it) are transposed once here instead of on every run.
  for (auto gemm : llvm::make_early_inc_range(entry.getOps<graph::GemmOp>())) {
    DenseElementsAttr weights;
    if (!gemm.getTransB() || !matchPattern(gemm.getB(), m_Constant(&weights)))
      continue;
    auto type = cast<RankedTensorType>(weights.getType());
    if (type.getRank() != 2 || !type.getElementType().isIntOrFloat() ||
        type.getElementType().isInteger(1) || weights.isSplat())
      continue;
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
    ArrayRef<char> from = weights.getRawData();
    std::vector<char> to(from.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(&to[(c * rows + r) * width], &from[(r * cols + c) * width],
                    width);
    auto transposedType =
        RankedTensorType::get({cols, rows}, type.getElementType());
    OpBuilder builder(gemm);
    auto transposed = graph::ConstantOp::create(
        builder, gemm.getB().getLoc(),
        cast<ElementsAttr>(
            DenseElementsAttr::getFromRawBuffer(transposedType, to)));
    gemm.getBMutable().assign(transposed);
    gemm.setTransB(0);
  }

  // A result with no elements needs no kernel: it becomes an empty constant
  // (kernels with zero-size buffers cannot take the bare-pointer calling
  // convention, and have nothing to compute).
  for (Operation &op : llvm::make_early_inc_range(
           entry.getBody().front().without_terminator())) {
    if (isa<graph::ConstantOp>(op) || op.getNumResults() == 0 ||
        op.getNumRegions() != 0)
      continue;
    bool allEmpty = llvm::all_of(op.getResults(), [](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return type && type.hasStaticShape() && type.getNumElements() == 0;
    });
    if (!allEmpty)
      continue;
    OpBuilder builder(&op);
    for (Value result : op.getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      auto empty =
          graph::ConstantOp::create(builder, op.getLoc(),
                                    cast<ElementsAttr>(DenseElementsAttr::get(
                                        type, ArrayRef<Attribute>{})));
      result.replaceAllUsesWith(empty.getResult());
    }
    op.erase();
  }

  // Unsupported ops are all reported before giving up.
  bool failedAny = false;
  std::deque<Group> groups; // stable addresses: `current` points in
  Group *current = nullptr;
  llvm::SmallPtrSet<Operation *, 16> claimed; // library epilogues
  for (Operation &op : entry.getBody().front().without_terminator()) {
    if (isa<graph::ConstantOp>(op) || claimed.contains(&op))
      continue;
    if (options.useLibraries)
      if (std::optional<LibraryMatch> match = matchLibraryKernel(&op)) {
        groups.emplace_back();
        Group &group = groups.back();
        group.ops = match->ops;
        group.members.insert(match->ops.begin(), match->ops.end());
        claimed.insert(match->ops.begin(), match->ops.end());
        group.library = std::move(*match);
        current = nullptr;
        continue;
      }
    bool feedsFromCurrent =
        current && llvm::any_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && current->members.contains(def);
        });
    if (isViewOp(&op) && !(feedsFromCurrent && isLowerableToLinalg(&op))) {
      // A view of a buffer. It closes the current kernel when it reads from
      // it (the kernel must produce the buffer before the view exists).
      if (feedsFromCurrent)
        current = nullptr;
      continue;
    }
    if (!isLowerableToLinalg(&op)) {
      InFlightDiagnostic diag = op.emitError();
      diag << "'" << op.getName() << "' ";
      if (std::string node = getNodeName(&op); !node.empty())
        diag << "(ONNX node '" << node << "') ";
      diag << "with operand types " << op.getOperandTypes()
           << " has no implementation on the " << options.target
           << " target yet";
      failedAny = true;
      current = nullptr;
      continue;
    }
    if (feedsFromCurrent && current->ops.size() < kMaxKernelOps) {
      current->ops.push_back(&op);
      current->members.insert(&op);
      continue;
    }
    groups.emplace_back();
    current = &groups.back();
    current->ops.push_back(&op);
    current->members.insert(&op);
  }
  if (failedAny)
    return failure();
  // `groups` is no longer appended to, so the pointers above stay valid
  // until here; outlining erases the grouped ops.
  for (auto [index, group] : llvm::enumerate(groups))
    outline(module, entry, group, index);
  // Constants that only kernels read were cloned into them.
  for (Operation &op :
       llvm::make_early_inc_range(entry.getBody().front().without_terminator()))
    if (isa<graph::ConstantOp>(op) && op.use_empty())
      op.erase();
  return success();
}
