//===- RowParallel.cpp - splitting kernels into row blocks ------*- C++ -*-===//
//
// See RowParallel.h. The analysis is deliberately a whitelist: an op takes
// part only when its row dependence is known exactly (elementwise ops with
// numpy broadcasting, reductions and softmax-like ops away from dimension 0,
// layer norm, matmul, transposes and concats that keep dimension 0). Any
// other op makes the kernel run whole, on one thread.
//
//===----------------------------------------------------------------------===//

#include "RowParallel.h"
#include "Decisions.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
namespace graph = strata::graph;

/// A block should hold at least this many elements of its largest row value:
/// smaller blocks cost more in calls than they gain in threads.
static constexpr int64_t kMinBlockElements = 4096;

namespace {
enum class Use { Rows, Whole };
} // namespace

static RankedTensorType staticTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

static int64_t normalize(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// How `op` reads each operand, or false (with `why`) when its rows are not
/// independent.
static bool classify(Operation *op, int64_t rows, SmallVectorImpl<Use> &uses,
                     std::string &why) {
  auto result = staticTensor(op->getResult(0));
  int64_t rank = result.getRank();
  auto allRows = [&] {
    for (Value operand : op->getOperands()) {
      auto type = staticTensor(operand);
      if (!type || type.getRank() != rank || type.getDimSize(0) != rows) {
        why = "an operand does not have the kernel's rows";
        return false;
      }
      uses.push_back(Use::Rows);
    }
    return true;
  };
  if (strata::isLowerableElementwise(op)) {
    for (Value operand : op->getOperands()) {
      auto type = staticTensor(operand);
      if (!type) {
        why = "an operand has no static shape";
        return false;
      }
      if (type.getRank() == rank && type.getDimSize(0) == rows)
        uses.push_back(Use::Rows);
      else if (type.getRank() < rank || type.getDimSize(0) == 1)
        uses.push_back(Use::Whole);
      else {
        why = "an operand's dimension 0 is neither the rows nor broadcast";
        return false;
      }
    }
    return true;
  }
  if (isa<graph::SoftmaxOp, graph::LogSoftmaxOp, graph::HardmaxOp,
          graph::ArgMaxOp, graph::ArgMinOp>(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    int64_t inputRank = staticTensor(op->getOperand(0)).getRank();
    if (!axis || normalize(axis.getInt(), inputRank) == 0) {
      why = "it reduces along dimension 0";
      return false;
    }
    if (op->getNumOperands() != 1 ||
        staticTensor(op->getOperand(0)).getDimSize(0) != rows) {
      why = "its operand does not have the kernel's rows";
      return false;
    }
    uses.push_back(Use::Rows);
    return true;
  }
  if (auto norm = dyn_cast<graph::LayerNormOp>(op)) {
    int64_t inputRank = staticTensor(norm->getOperand(0)).getRank();
    if (normalize(static_cast<int64_t>(norm.getAxis()), inputRank) < 1) {
      why = "it normalizes over dimension 0";
      return false;
    }
    uses.push_back(Use::Rows);
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      uses.push_back(Use::Whole);
    return true;
  }
  if (op->getName().getStringRef().starts_with("graph.reduce_")) {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    if (op->getNumOperands() != 1 || !axes || axes.empty()) {
      why = "it reduces over every dimension or over axes known at run time";
      return false;
    }
    int64_t inputRank = staticTensor(op->getOperand(0)).getRank();
    for (int64_t axis : axes.asArrayRef())
      if (normalize(axis, inputRank) == 0) {
        why = "it reduces along dimension 0";
        return false;
      }
    return allRows();
  }
  if (auto matmul = dyn_cast<graph::MatMulOp>(op)) {
    auto lhs = staticTensor(matmul.getLhs());
    auto rhs = staticTensor(matmul.getRhs());
    if (!lhs || !rhs || lhs.getRank() < 2 || lhs.getRank() < rhs.getRank() ||
        lhs.getRank() != rank || lhs.getDimSize(0) != rows) {
      why = "its left operand's dimension 0 is not the kernel's rows";
      return false;
    }
    uses.push_back(Use::Rows);
    if (lhs.getRank() == 2 || rhs.getRank() < lhs.getRank() ||
        rhs.getDimSize(0) == 1)
      uses.push_back(Use::Whole);
    else if (rhs.getDimSize(0) == rows)
      uses.push_back(Use::Rows);
    else {
      why = "its right operand's batch dimension is neither the rows nor "
            "broadcast";
      return false;
    }
    return true;
  }
  if (auto transpose = dyn_cast<graph::TransposeOp>(op)) {
    std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
    if (!perm || perm->empty() || (*perm)[0] != 0) {
      why = "it moves dimension 0";
      return false;
    }
    return allRows();
  }
  if (isa<graph::ConcatOp>(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    if (!axis || normalize(axis.getInt(), rank) == 0) {
      why = "it concatenates along dimension 0";
      return false;
    }
    return allRows();
  }
  why = "the row analysis does not know how its rows depend on its operands "
        "(it knows elementwise ops, reductions, softmax, layer norm, matmul, "
        "transposes and concats)";
  return false;
}

static int64_t elementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits == 1 ? 1 : bits / 8;
}

/// "Softmax_4 (graph.softmax)" for reasons.
static std::string describe(Operation *op) {
  std::string node = strata::describeOp(op);
  std::string name = op->getName().getStringRef().str();
  return node == name ? name : node + " (" + name + ")";
}

std::optional<strata::RowPlan>
strata::planRows(func::FuncOp kernel, std::optional<int64_t> rowsPerBlock,
                 std::string *whyNot) {
  std::string unused;
  std::string &why = whyNot ? *whyNot : unused;
  if (!rowsPerBlock)
    if (auto recorded =
            kernel->getAttrOfType<IntegerAttr>("strata.parallel_block"))
      rowsPerBlock = recorded.getInt();
  Block &body = kernel.getBody().front();
  Operation *ret = body.getTerminator();
  if (ret->getNumOperands() == 0) {
    why = "the kernel has no results";
    return std::nullopt;
  }
  auto first = staticTensor(ret->getOperand(0));
  if (!first || first.getRank() == 0) {
    why = "the kernel's first result is a scalar (no rows)";
    return std::nullopt;
  }
  if (first.getDimSize(0) < 2) {
    why = "the kernel's first result has " +
          std::to_string(first.getDimSize(0)) +
          " row (dimension 0); a split needs at least 2";
    return std::nullopt;
  }
  RowPlan plan;
  plan.rows = first.getDimSize(0);
  std::string rowsText = std::to_string(plan.rows) + " rows";
  llvm::DenseSet<Value> whole;
  auto isRowValue = [&](Value v) {
    auto type = staticTensor(v);
    return type && type.getRank() >= 1 && type.getDimSize(0) == plan.rows;
  };
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0) {
      why = describe(&op) + " has regions; the row analysis does not look "
                            "inside them";
      return std::nullopt;
    }
    if (isa<graph::ConstantOp>(op)) {
      whole.insert(op.getResult(0));
      continue;
    }
    for (Value result : op.getResults())
      if (!isRowValue(result)) {
        auto type = staticTensor(result);
        why = describe(&op) + "'s result " +
              (type && type.getRank() >= 1
                   ? "has dimension 0 of " + std::to_string(type.getDimSize(0))
                   : std::string("is a scalar")) +
              ", not the kernel's " + rowsText;
        return std::nullopt;
      }
    SmallVector<Use> uses;
    std::string opWhy;
    if (!classify(&op, plan.rows, uses, opWhy) ||
        uses.size() != op.getNumOperands()) {
      why = describe(&op) + " does not keep rows independent: " + opWhy;
      return std::nullopt;
    }
    for (auto [operand, use] : llvm::zip(op.getOperands(), uses)) {
      if (use == Use::Rows) {
        if (whole.contains(operand) || !isRowValue(operand) ||
            (!isa<BlockArgument>(operand) &&
             !plan.rowValues.contains(operand))) {
          bool constant = operand.getDefiningOp() &&
                          isa<graph::ConstantOp>(operand.getDefiningOp());
          why = describe(&op) +
                (constant ? " reads a constant by rows (constants are read "
                            "whole, not split)"
                          : " reads by rows a value another op reads whole");
          return std::nullopt;
        }
        plan.rowValues.insert(operand);
      } else {
        if (plan.rowValues.contains(operand)) {
          why = describe(&op) + " reads whole a value other ops read by rows";
          return std::nullopt;
        }
        whole.insert(operand);
      }
    }
    for (Value result : op.getResults())
      plan.rowValues.insert(result);
  }
  for (Value v : ret->getOperands())
    if (!plan.rowValues.contains(v)) {
      why = "a result of the kernel is not computed by rows";
      return std::nullopt;
    }

  // Rows per block: the fewest that give every block enough work.
  int64_t rowElements = 1;
  for (Value v : plan.rowValues)
    rowElements =
        std::max(rowElements, staticTensor(v).getNumElements() / plan.rows);
  if (rowsPerBlock) {
    if (*rowsPerBlock < 1 || plan.rows % *rowsPerBlock != 0) {
      why = std::to_string(*rowsPerBlock) +
            " rows per block does not divide the kernel's " + rowsText;
      return std::nullopt;
    }
    plan.block = *rowsPerBlock;
    plan.source = "forced";
  } else {
    plan.block = plan.rows;
    for (int64_t d = 1; d < plan.rows; ++d)
      if (plan.rows % d == 0 && d * rowElements >= kMinBlockElements) {
        plan.block = d;
        break;
      }
    if (plan.block == plan.rows) {
      why = "too small: " + rowsText + " of at most " +
            std::to_string(rowElements) + " elements; a block needs at least " +
            std::to_string(kMinBlockElements) +
            " elements to be worth a thread";
      return std::nullopt;
    }
    plan.source = "heuristic: the fewest rows per block that hold at least " +
                  std::to_string(kMinBlockElements) + " elements, at " +
                  std::to_string(rowElements) + " per row";
  }

  auto stride = [&](Value v) -> int64_t {
    if (!plan.rowValues.contains(v))
      return 0;
    auto type = staticTensor(v);
    return plan.block * (type.getNumElements() / plan.rows) *
           elementBytes(type.getElementType());
  };
  for (BlockArgument arg : body.getArguments())
    plan.blockStrides.push_back(stride(arg));
  for (Value v : ret->getOperands())
    plan.blockStrides.push_back(stride(v));
  return plan;
}

void strata::applyRowPlan(func::FuncOp kernel, const RowPlan &plan) {
  auto shrink = [&](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = plan.block;
    v.setType(type.clone(shape));
  };
  for (Value v : plan.rowValues)
    shrink(v);
  Block &body = kernel.getBody().front();
  kernel.setType(FunctionType::get(kernel.getContext(), body.getArgumentTypes(),
                                   body.getTerminator()->getOperandTypes()));
}
