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

/// How `op` reads each operand, or false when its rows are not independent.
static bool classify(Operation *op, int64_t rows, SmallVectorImpl<Use> &uses) {
  auto result = staticTensor(op->getResult(0));
  int64_t rank = result.getRank();
  auto allRows = [&] {
    for (Value operand : op->getOperands()) {
      auto type = staticTensor(operand);
      if (!type || type.getRank() != rank || type.getDimSize(0) != rows)
        return false;
      uses.push_back(Use::Rows);
    }
    return true;
  };
  if (strata::isLowerableElementwise(op)) {
    for (Value operand : op->getOperands()) {
      auto type = staticTensor(operand);
      if (!type)
        return false;
      if (type.getRank() == rank && type.getDimSize(0) == rows)
        uses.push_back(Use::Rows);
      else if (type.getRank() < rank || type.getDimSize(0) == 1)
        uses.push_back(Use::Whole);
      else
        return false;
    }
    return true;
  }
  if (isa<graph::SoftmaxOp, graph::LogSoftmaxOp, graph::HardmaxOp,
          graph::ArgMaxOp, graph::ArgMinOp>(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    int64_t inputRank = staticTensor(op->getOperand(0)).getRank();
    return axis && normalize(axis.getInt(), inputRank) != 0 &&
           op->getNumOperands() == 1 &&
           staticTensor(op->getOperand(0)).getDimSize(0) == rows &&
           (uses.push_back(Use::Rows), true);
  }
  if (auto norm = dyn_cast<graph::LayerNormOp>(op)) {
    int64_t inputRank = staticTensor(norm->getOperand(0)).getRank();
    if (normalize(static_cast<int64_t>(norm.getAxis()), inputRank) < 1)
      return false;
    uses.push_back(Use::Rows);
    for (unsigned i = 1; i < op->getNumOperands(); ++i)
      uses.push_back(Use::Whole);
    return true;
  }
  if (op->getName().getStringRef().starts_with("graph.reduce_")) {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    if (op->getNumOperands() != 1 || !axes || axes.empty())
      return false;
    int64_t inputRank = staticTensor(op->getOperand(0)).getRank();
    for (int64_t axis : axes.asArrayRef())
      if (normalize(axis, inputRank) == 0)
        return false;
    return allRows();
  }
  if (auto matmul = dyn_cast<graph::MatMulOp>(op)) {
    auto lhs = staticTensor(matmul.getLhs());
    auto rhs = staticTensor(matmul.getRhs());
    if (!lhs || !rhs || lhs.getRank() < 2 || lhs.getRank() < rhs.getRank() ||
        lhs.getRank() != rank || lhs.getDimSize(0) != rows)
      return false;
    uses.push_back(Use::Rows);
    if (lhs.getRank() == 2 || rhs.getRank() < lhs.getRank() ||
        rhs.getDimSize(0) == 1)
      uses.push_back(Use::Whole);
    else if (rhs.getDimSize(0) == rows)
      uses.push_back(Use::Rows);
    else
      return false;
    return true;
  }
  if (auto transpose = dyn_cast<graph::TransposeOp>(op)) {
    std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
    return perm && !perm->empty() && (*perm)[0] == 0 && allRows();
  }
  if (isa<graph::ConcatOp>(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    return axis && normalize(axis.getInt(), rank) != 0 && allRows();
  }
  return false;
}

static int64_t elementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits == 1 ? 1 : bits / 8;
}

std::optional<strata::RowPlan> strata::planRows(func::FuncOp kernel) {
  Block &body = kernel.getBody().front();
  Operation *ret = body.getTerminator();
  if (ret->getNumOperands() == 0)
    return std::nullopt;
  auto first = staticTensor(ret->getOperand(0));
  if (!first || first.getRank() == 0 || first.getDimSize(0) < 2)
    return std::nullopt;
  RowPlan plan;
  plan.rows = first.getDimSize(0);
  llvm::DenseSet<Value> whole;
  auto isRowValue = [&](Value v) {
    auto type = staticTensor(v);
    return type && type.getRank() >= 1 && type.getDimSize(0) == plan.rows;
  };
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0)
      return std::nullopt;
    if (isa<graph::ConstantOp>(op)) {
      whole.insert(op.getResult(0));
      continue;
    }
    for (Value result : op.getResults())
      if (!isRowValue(result))
        return std::nullopt;
    SmallVector<Use> uses;
    if (!classify(&op, plan.rows, uses) || uses.size() != op.getNumOperands())
      return std::nullopt;
    for (auto [operand, use] : llvm::zip(op.getOperands(), uses)) {
      if (use == Use::Rows) {
        if (whole.contains(operand) || !isRowValue(operand) ||
            (!isa<BlockArgument>(operand) && !plan.rowValues.contains(operand)))
          return std::nullopt;
        plan.rowValues.insert(operand);
      } else {
        if (plan.rowValues.contains(operand))
          return std::nullopt;
        whole.insert(operand);
      }
    }
    for (Value result : op.getResults())
      plan.rowValues.insert(result);
  }
  for (Value v : ret->getOperands())
    if (!plan.rowValues.contains(v))
      return std::nullopt;

  // Rows per block: the fewest that give every block enough work.
  int64_t rowElements = 1;
  for (Value v : plan.rowValues)
    rowElements =
        std::max(rowElements, staticTensor(v).getNumElements() / plan.rows);
  plan.block = plan.rows;
  for (int64_t d = 1; d < plan.rows; ++d)
    if (plan.rows % d == 0 && d * rowElements >= kMinBlockElements) {
      plan.block = d;
      break;
    }
  if (plan.block == plan.rows)
    return std::nullopt;

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
