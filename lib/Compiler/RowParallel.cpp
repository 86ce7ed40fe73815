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
#include "CompilerUtils.h"
#include "Decisions.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/Runtime/Runtime.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
namespace kernel = strata::kernel;
namespace graph = strata::graph;
using strata::staticTensorType;

namespace {
enum class Use { Rows, Whole };
} // namespace

static int64_t normalize(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Whether `shape` starts with `lead`.
static bool hasLead(ArrayRef<int64_t> shape, ArrayRef<int64_t> lead) {
  return shape.size() >= lead.size() && shape.take_front(lead.size()) == lead;
}

/// Whether an operand of `type`, broadcast numpy-style (right-aligned)
/// against a result of rank `rank`, is 1 or absent at every leading
/// position [0, k): read whole by every block.
static bool broadcastOverLead(RankedTensorType type, int64_t rank, int64_t k) {
  int64_t offset = rank - type.getRank(); // result position of dim 0
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (offset + i < k && type.getDimSize(i) != 1)
      return false;
  return true;
}

/// How `op` reads each operand when the rows are its results' leading
/// dimensions `lead` collapsed, or false (with `why`) when those rows are
/// not independent.
static bool classify(Operation *op, ArrayRef<int64_t> lead,
                     SmallVectorImpl<Use> &uses, std::string &why) {
  auto result = staticTensorType(op->getResult(0));
  int64_t rank = result.getRank();
  int64_t k = lead.size();
  std::string dims =
      k == 1 ? "dimension 0" : "dimensions 0 to " + std::to_string(k - 1);
  auto allRows = [&] {
    for (Value operand : op->getOperands()) {
      auto type = staticTensorType(operand);
      if (!type || type.getRank() != rank || !hasLead(type.getShape(), lead)) {
        why = "an operand does not have the kernel's rows";
        return false;
      }
      uses.push_back(Use::Rows);
    }
    return true;
  };
  // An axis attribute at or past the rows' dimensions.
  auto axisPastRows = [&](int64_t axis, int64_t axisRank) {
    return normalize(axis, axisRank) >= k;
  };
  if (strata::isLowerableElementwise(op)) {
    for (Value operand : op->getOperands()) {
      auto type = staticTensorType(operand);
      if (!type) {
        why = "an operand has no static shape";
        return false;
      }
      if (type.getRank() == rank && hasLead(type.getShape(), lead))
        uses.push_back(Use::Rows);
      else if (broadcastOverLead(type, rank, k))
        uses.push_back(Use::Whole);
      else {
        why = "an operand's " + dims + " are neither the rows nor broadcast";
        return false;
      }
    }
    return true;
  }
  if (isa<graph::SoftmaxOp, graph::LogSoftmaxOp, graph::HardmaxOp,
          graph::ArgMaxOp, graph::ArgMinOp>(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    int64_t inputRank = staticTensorType(op->getOperand(0)).getRank();
    if (!axis || !axisPastRows(axis.getInt(), inputRank)) {
      why = "it reduces along " + dims;
      return false;
    }
    if (op->getNumOperands() != 1 ||
        !hasLead(staticTensorType(op->getOperand(0)).getShape(), lead)) {
      why = "its operand does not have the kernel's rows";
      return false;
    }
    uses.push_back(Use::Rows);
    return true;
  }
  if (auto norm = dyn_cast<graph::LayerNormOp>(op)) {
    int64_t inputRank = staticTensorType(norm->getOperand(0)).getRank();
    if (!axisPastRows(static_cast<int64_t>(norm.getAxis()), inputRank)) {
      why = "it normalizes over " + dims;
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
    int64_t inputRank = staticTensorType(op->getOperand(0)).getRank();
    for (int64_t axis : axes.asArrayRef())
      if (!axisPastRows(axis, inputRank)) {
        why = "it reduces along " + dims;
        return false;
      }
    return allRows();
  }
  if (auto matmul = dyn_cast<graph::MatMulOp>(op)) {
    auto lhs = staticTensorType(matmul.getLhs());
    auto rhs = staticTensorType(matmul.getRhs());
    // The rows are the left operand's batch dimensions and at most its M.
    if (!lhs || !rhs || lhs.getRank() < 2 || lhs.getRank() < rhs.getRank() ||
        lhs.getRank() != rank || k > rank - 1 ||
        !hasLead(lhs.getShape(), lead)) {
      why = "its left operand's " + dims + " are not the kernel's rows";
      return false;
    }
    uses.push_back(Use::Rows);
    // The right operand's batch dimensions, right-aligned to the result's
    // [0, rank - 2).
    int64_t batchOffset = rank - rhs.getRank();
    bool whole = true;
    for (int64_t i = 0; i + 2 < rhs.getRank(); ++i)
      if (batchOffset + i < k && rhs.getDimSize(i) != 1)
        whole = false;
    if (whole)
      uses.push_back(Use::Whole);
    else if (rhs.getRank() == rank && k <= rank - 2 &&
             hasLead(rhs.getShape(), lead))
      uses.push_back(Use::Rows);
    else {
      why = "its right operand's batch dimensions are neither the rows nor "
            "broadcast";
      return false;
    }
    return true;
  }
  if (auto transpose = dyn_cast<graph::TransposeOp>(op)) {
    std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
    bool keeps = perm && static_cast<int64_t>(perm->size()) >= k;
    for (int64_t i = 0; keeps && i < k; ++i)
      keeps = (*perm)[i] == i;
    if (!keeps) {
      why = "it moves " + dims;
      return false;
    }
    return allRows();
  }
  if (isa<graph::ConcatOp>(op)) {
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    if (!axis || !axisPastRows(axis.getInt(), rank)) {
      why = "it concatenates along " + dims;
      return false;
    }
    return allRows();
  }
  why = "the row analysis does not know how its rows depend on its operands "
        "(it knows elementwise ops, reductions, softmax, layer norm, matmul, "
        "transposes and concats)";
  return false;
}

int64_t strata::rowElementBytes(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits == 1 ? 1 : bits / 8;
}

/// "[2, 3]" for reasons, as the runtime writes shapes.
static std::string shapeText(ArrayRef<int64_t> shape) {
  return strata::rt::shapeToString(shape.vec());
}

/// "Softmax_4 (graph.softmax)" for reasons.
static std::string describe(Operation *op) {
  std::string node = strata::describeOp(op);
  std::string name = op->getName().getStringRef().str();
  return node == name ? name : node + " (" + name + ")";
}

/// The split with the rows the first `k` dimensions of the kernel's first
/// result, collapsed; see planRows.
static std::optional<strata::RowPlan>
planRowsFor(func::FuncOp kernel, int64_t k, std::optional<int64_t> rowsPerBlock,
            std::string &why) {
  using strata::RowPlan;
  Block &body = kernel.getBody().front();
  Operation *ret = body.getTerminator();
  if (ret->getNumOperands() == 0) {
    why = "the kernel has no results";
    return std::nullopt;
  }
  auto first = staticTensorType(ret->getOperand(0));
  if (!first || first.getRank() == 0) {
    why = "the kernel's first result is a scalar (no rows)";
    return std::nullopt;
  }
  if (first.getRank() < k) {
    why =
        "the kernel's first result has rank " + std::to_string(first.getRank());
    return std::nullopt;
  }
  RowPlan plan;
  plan.dims = k;
  plan.lead.assign(first.getShape().begin(), first.getShape().begin() + k);
  plan.rows = 1;
  for (int64_t d : plan.lead)
    plan.rows *= d;
  if (plan.rows < 2) {
    why = "the kernel's first result has " + std::to_string(plan.rows) +
          " row (dimension 0); a split needs at least 2";
    return std::nullopt;
  }
  std::string rowsText =
      std::to_string(plan.rows) + " rows" +
      (k == 1 ? "" : " (dimensions 0 to " + std::to_string(k - 1) + ")");
  llvm::DenseSet<Value> whole;
  auto isRowValue = [&](Value v) {
    auto type = staticTensorType(v);
    return type && hasLead(type.getShape(), plan.lead);
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
    // An op that reads only whole values (a weight's cast, a mask's) is
    // computed whole by every block, when that costs no more than one row
    // of the kernel's first result.
    auto readWhole = [&](Value v) {
      return whole.contains(v) || (isa<BlockArgument>(v) && !isRowValue(v) &&
                                   !plan.rowValues.contains(v));
    };
    int64_t rowCost = first.getNumElements() / plan.rows;
    bool cheapWhole =
        op.getNumOperands() > 0 && llvm::all_of(op.getOperands(), readWhole);
    for (Value result : op.getResults()) {
      auto type = staticTensorType(result);
      cheapWhole &=
          type && !isRowValue(result) && type.getNumElements() <= rowCost;
    }
    if (cheapWhole) {
      for (Value operand : op.getOperands())
        whole.insert(operand);
      for (Value result : op.getResults())
        whole.insert(result);
      continue;
    }
    for (Value result : op.getResults())
      if (!isRowValue(result)) {
        auto type = staticTensorType(result);
        why = describe(&op) + "'s result " +
              (type && type.getRank() >= 1
                   ? "has dimension 0 of " + std::to_string(type.getDimSize(0))
                   : std::string("is a scalar")) +
              ", not the kernel's " + rowsText;
        if (k > 1 && type && type.getRank() >= 1)
          why = describe(&op) + "'s result " + shapeText(type.getShape()) +
                " does not start with the rows " + shapeText(plan.lead);
        return std::nullopt;
      }
    SmallVector<Use> uses;
    std::string opWhy;
    if (!classify(&op, plan.lead, uses, opWhy) ||
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
        std::max(rowElements, staticTensorType(v).getNumElements() / plan.rows);
  // A block lies within dimension k - 1, so that it is a box: [1, ..., 1,
  // block, rest...].
  int64_t inner = plan.lead.back();
  if (rowsPerBlock) {
    if (*rowsPerBlock < 1 || inner % *rowsPerBlock != 0) {
      why = std::to_string(*rowsPerBlock) + " rows per block does not divide " +
            (k == 1
                 ? "the kernel's " + rowsText
                 : "dimension " + std::to_string(k - 1) + " (" +
                       std::to_string(inner) + ") of the kernel's " + rowsText);
      return std::nullopt;
    }
    plan.block = *rowsPerBlock;
    plan.source = "forced";
  } else {
    plan.block = plan.rows;
    for (int64_t d = 1; d <= inner && d < plan.rows; ++d)
      if (inner % d == 0 && d * rowElements >= strata::kMinBlockElements) {
        plan.block = d;
        break;
      }
    if (plan.block == plan.rows) {
      why = "too small: " + rowsText + " of at most " +
            std::to_string(rowElements) + " elements; a block needs at least " +
            std::to_string(strata::kMinBlockElements) +
            " elements to be worth a thread";
      return std::nullopt;
    }
    plan.source = "heuristic: the fewest rows per block that hold at least " +
                  std::to_string(strata::kMinBlockElements) + " elements, at " +
                  std::to_string(rowElements) + " per row";
    if (k > 1)
      plan.source += ", rows over dimensions 0 to " + std::to_string(k - 1);
  }

  auto stride = [&](Value v) -> int64_t {
    if (!plan.rowValues.contains(v))
      return 0;
    auto type = staticTensorType(v);
    return plan.block * (type.getNumElements() / plan.rows) *
           strata::rowElementBytes(type.getElementType());
  };
  for (BlockArgument arg : body.getArguments())
    plan.blockStrides.push_back(stride(arg));
  for (Value v : ret->getOperands())
    plan.blockStrides.push_back(stride(v));
  return plan;
}

std::optional<strata::RowPlan>
strata::planRows(func::FuncOp kernel, std::optional<int64_t> rowsPerBlock,
                 std::string *whyNot, std::optional<int64_t> leadingDims) {
  std::string unused;
  std::string &why = whyNot ? *whyNot : unused;
  if (!rowsPerBlock)
    if (auto recorded = kernel::get<kernel::ParallelBlock>(kernel)) {
      rowsPerBlock = recorded.getInt();
      // Recorded without dimensions: over dimension 0.
      auto dims = kernel::get<kernel::ParallelDims>(kernel);
      leadingDims = dims ? dims.getInt() : 1;
    }
  if (leadingDims)
    return planRowsFor(kernel, *leadingDims, rowsPerBlock, why);
  // Otherwise the most leading dimensions that split: a batch-1
  // transformer's [1, S, D] kernels then split over S, an attention's
  // [B, H, S, S] softmax over B * H * S rows. A forced block (a decisions
  // file's tile) counts the same rows, those `strata explain` shows, over
  // the most dimensions whose last one it divides: GPT-2's LayerNorm over
  // [8, 1024, 768] takes blocks of 4 of its 8192 rows.
  Block &body = kernel.getBody().front();
  Operation *ret = body.getTerminator();
  int64_t maxDims = 1;
  if (ret->getNumOperands())
    if (auto first = staticTensorType(ret->getOperand(0)))
      maxDims = std::max<int64_t>(1, first.getRank());
  // A forced block that fits no rows says so for the most dimensions whose
  // rows were independent (its message starts with the block) too.
  std::string wider;
  for (int64_t k = maxDims; k > 1; --k) {
    std::string whyK;
    if (std::optional<RowPlan> plan =
            planRowsFor(kernel, k, rowsPerBlock, whyK))
      return plan;
    if (rowsPerBlock && wider.empty() &&
        llvm::StringRef(whyK).starts_with(std::to_string(*rowsPerBlock) +
                                          " rows per block"))
      wider = whyK;
  }
  std::optional<RowPlan> plan = planRowsFor(kernel, 1, rowsPerBlock, why);
  if (!plan && !wider.empty())
    why = wider + "; over dimension 0 alone, " + why;
  return plan;
}

void strata::applyRowPlan(func::FuncOp kernel, const RowPlan &plan) {
  auto shrink = [&](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    for (int64_t i = 0; i + 1 < plan.dims; ++i)
      shape[i] = 1;
    shape[plan.dims - 1] = plan.block;
    v.setType(type.clone(shape));
  };
  for (Value v : plan.rowValues)
    shrink(v);
  Block &body = kernel.getBody().front();
  kernel.setType(FunctionType::get(kernel.getContext(), body.getArgumentTypes(),
                                   body.getTerminator()->getOperandTypes()));
}
