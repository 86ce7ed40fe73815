//===- Gemm.cpp - products whose epilogue the GEMM kernel fuses -----------===//
//
// See Gemm.h.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "Decisions.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
namespace graph = strata::graph;
namespace kernel = strata::kernel;

std::string strata::GemmMatch::describe() const {
  std::string text = type + " " + std::to_string(rows) + "x" +
                     std::to_string(depth) + "x" + std::to_string(columns);
  if (ops.size() > 1) {
    text += " with ";
    for (size_t i = 1; i < ops.size(); ++i)
      text += (i > 1 ? ", " : "") +
              ops[i]->getName().getStringRef().drop_front(6).str();
  }
  return text;
}

int64_t strata::GemmMatch::tileColumns(std::string *why) const {
  auto say = [&](std::string text) {
    if (why)
      *why = std::move(text);
  };
  if (columns % kGemmWideTileColumns) {
    say("its " + std::to_string(columns) + " columns are no multiple of " +
        std::to_string(kGemmWideTileColumns));
    return kGemmTileColumns;
  }
  // Ops an epilogue applies in a few instructions a value.
  auto cheap = [](Operation *op) {
    return isa<graph::AddOp, graph::SubOp, graph::MulOp, graph::DivOp,
               graph::MaxOp, graph::MinOp, graph::NegOp, graph::AbsOp,
               graph::ReluOp, graph::LeakyReluOp, graph::ClipOp, graph::CastOp,
               graph::IdentityOp>(op);
  };
  auto costly = llvm::find_if(llvm::drop_begin(ops),
                              [&](Operation *op) { return !cheap(op); });
  if (costly != ops.end() && depth < kGemmWideCostlyDepth) {
    say("its epilogue's " +
        (*costly)->getName().getStringRef().drop_front(6).str() +
        " would wait for the tensor cores at K = " + std::to_string(depth) +
        " (< " + std::to_string(kGemmWideCostlyDepth) +
        "): each consumer warpgroup takes its own tiles, one's epilogue "
        "under the other's products");
    return kGemmTileColumns;
  }
  say("both consumer warpgroups on each tile");
  return kGemmWideTileColumns;
}

kernel::GemmAttr strata::GemmMatch::toAttr(Builder &b,
                                           ArrayRef<Value> inputs) const {
  auto argOf = [&](Value v) -> int64_t {
    auto it = llvm::find(inputs, v);
    return it == inputs.end() ? -1 : it - inputs.begin();
  };
  Type element = type == "f16" ? Type(b.getF16Type()) : b.getBF16Type();
  return kernel::GemmAttr::get(b.getContext(), rows, columns, depth, element,
                               tileColumns(), argOf(ops.front()->getOperand(0)),
                               argOf(ops.front()->getOperand(1)));
}

std::optional<strata::GemmMatch> strata::matchGemm(
    Operation *op, const std::function<bool(Operation *)> &isCloned,
    const std::function<std::string(ArrayRef<Operation *>, Operation *)> &veto,
    std::string &whyNot) {
  if (!isa<graph::MatMulOp>(op)) {
    whyNot = "not a MatMul";
    return std::nullopt;
  }
  auto a = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto w = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
  auto y = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!a || !w || !y || !a.hasStaticShape() || !w.hasStaticShape() ||
      !y.hasStaticShape()) {
    whyNot = "its shapes are not static";
    return std::nullopt;
  }
  Type element = a.getElementType();
  if (!(element.isBF16() || element.isF16()) || w.getElementType() != element ||
      y.getElementType() != element) {
    whyNot = "it takes bf16 or f16 operands and result";
    return std::nullopt;
  }
  if (a.getRank() < 2 || w.getRank() != 2) {
    whyNot = "it takes A [..., M, K] and a matrix W [K, N]";
    return std::nullopt;
  }
  GemmMatch match;
  match.type = element.isBF16() ? "bf16" : "f16";
  match.depth = w.getDimSize(0);
  match.columns = w.getDimSize(1);
  match.rows = a.getNumElements() / std::max<int64_t>(1, match.depth);
  if (match.columns % kGemmTileColumns || match.depth % kGemmTileDepth ||
      match.depth == 0) {
    whyNot = "its tiles (" + std::to_string(kGemmTileColumns) + " columns, " +
             std::to_string(kGemmTileDepth) + " deep) do not divide " +
             std::to_string(match.rows) + "x" + std::to_string(match.depth) +
             "x" + std::to_string(match.columns);
    return std::nullopt;
  }
  if (match.rows < kGemmTileRows) {
    whyNot = "its " + std::to_string(match.rows) +
             " rows are fewer than a tile's " + std::to_string(kGemmTileRows);
    return std::nullopt;
  }
  int64_t padding = gemmTileRowCount(match.rows) * kGemmTileRows - match.rows;
  if (padding * kGemmMostPaddingRows > match.rows) {
    whyNot = "its " + std::to_string(match.rows) + " rows in tiles of " +
             std::to_string(kGemmTileRows) + " would compute " +
             std::to_string(padding) + " rows of padding, more than 1/" +
             std::to_string(kGemmMostPaddingRows) + " of them";
    return std::nullopt;
  }
  match.ops.push_back(op);

  // The epilogue: while the value has one reader, an elementwise op of the
  // product's shape and type whose other operands the kernel reads per
  // column, per element or once.
  Value value = op->getResult(0);
  while (value.hasOneUse()) {
    Operation *next = *value.getUsers().begin();
    if (!strata::isLowerableElementwise(next) || next->getNumResults() != 1 ||
        next->getResult(0).getType() != y || !veto(match.ops, next).empty())
      break;
    bool readable = true;
    for (Value operand : next->getOperands()) {
      if (operand == value)
        continue;
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      Operation *def = operand.getDefiningOp();
      if (!type || !type.hasStaticShape() || type.getElementType() != element ||
          (def && isCloned(def)) ||
          (def && !def->isBeforeInBlock(op) && !isa<graph::ConstantOp>(def))) {
        readable = false;
        break;
      }
      // Per column: ones, then N (or nothing); once: all ones; per element:
      // the product's shape.
      ArrayRef<int64_t> shape = type.getShape();
      bool perElement = type == y;
      bool leadingOnes =
          llvm::all_of(shape.drop_back(), [](int64_t d) { return d == 1; });
      bool perColumn =
          leadingOnes && type.getRank() <= y.getRank() &&
          (shape.empty() || shape.back() == 1 || shape.back() == match.columns);
      if (!perElement && !perColumn) {
        readable = false;
        break;
      }
    }
    if (!readable)
      break;
    match.ops.push_back(next);
    value = next->getResult(0);
  }
  return match;
}
