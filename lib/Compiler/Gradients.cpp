//===- Gradients.cpp - ONNX Gradient by reverse-mode AD ---------*- C++ -*-===//
//
// ai.onnx.preview.training's Gradient op asks for dy/dx for values x and y
// of the graph itself, evaluated at a given point (its `inputs`, usually x's
// own values). strata-expand-gradients (graph stage) rewrites each into the
// graph ops that compute it, by reverse-mode differentiation:
//
//   1. the forward computation from xs (and zs) to y is cloned with xs and
//      zs replaced by the evaluation point (CSE folds the clone away when the
//      point is the values themselves);
//   2. the adjoint of y is ones (ONNX's Gradient differentiates y's sum);
//   3. the clones are visited from y back to xs, each op adding its
//      operands' adjoints (add, sub, mul, div, neg, identity), reduced over
//      broadcast dimensions to the operand's shape;
//   4. result i is the adjoint of xs[i] (zeros when y does not depend on it).
//
// An op on the path without a rule is an error naming it and the node.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SetVector.h"

namespace strata {
#define GEN_PASS_DEF_EXPANDGRADIENTSPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace graph = strata::graph;

namespace {

class Differentiator {
public:
  Differentiator(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  LogicalResult expand(graph::GradientOp op) {
    // The ops between the xs/zs and y, in program order.
    llvm::SetVector<Value> roots;
    for (Value v : op.getXs())
      roots.insert(v);
    for (Value v : op.getZs())
      roots.insert(v);
    llvm::SetVector<Operation *> path;
    if (failed(collect(op.getY(), roots, path)))
      return failure();
    SmallVector<Operation *> ordered(path.begin(), path.end());
    llvm::sort(ordered, [](Operation *a, Operation *c) {
      return a->isBeforeInBlock(c);
    });

    // The forward computation at the evaluation point.
    IRMapping point;
    for (auto [x, at] : llvm::zip(op.getXs(), op.getInputs()))
      point.map(x, at);
    for (auto [z, at] :
         llvm::zip(op.getZs(), op.getInputs().drop_front(op.getXs().size())))
      point.map(z, at);
    SmallVector<Operation *> clones;
    for (Operation *forward : ordered)
      clones.push_back(b.clone(*forward, point));
    Value y = point.lookupOrDefault(op.getY());

    adjoints[y] = ones(cast<RankedTensorType>(y.getType()));
    for (Operation *clone : llvm::reverse(clones)) {
      Value result = clone->getResult(0);
      auto it = adjoints.find(result);
      if (it == adjoints.end())
        continue;
      if (failed(backward(clone, it->second)))
        return failure();
    }
    for (auto [x, result] : llvm::zip(op.getXs(), op.getOutputs())) {
      Value at = point.lookupOrDefault(x);
      auto it = adjoints.find(at);
      Value grad = it != adjoints.end()
                       ? it->second
                       : zeros(cast<RankedTensorType>(x.getType()));
      result.replaceAllUsesWith(grad);
    }
    return success();
  }

private:
  /// The ops whose results lie on a path from `roots` to `v`.
  LogicalResult collect(Value v, const llvm::SetVector<Value> &roots,
                        llvm::SetVector<Operation *> &path) {
    if (roots.contains(v))
      return success();
    Operation *def = v.getDefiningOp();
    if (!def || isa<graph::ConstantOp>(def) || path.contains(def))
      return success();
    if (def->getNumResults() != 1 || def->getNumRegions() != 0)
      return unsupported(def);
    size_t before = path.size();
    for (Value operand : def->getOperands())
      if (failed(collect(operand, roots, path)))
        return failure();
    // Only ops that depend on a root matter.
    bool dependent = path.size() > before ||
                     llvm::any_of(def->getOperands(),
                                  [&](Value o) { return roots.contains(o); });
    if (dependent)
      path.insert(def);
    return success();
  }

  LogicalResult unsupported(Operation *op) {
    InFlightDiagnostic diag =
        op->emitError("Gradient: no derivative rule for '")
        << op->getName() << "'";
    if (std::string node = strata::getNodeName(op); !node.empty())
      diag << " (ONNX node '" << node << "')";
    diag << "; strata differentiates add, sub, mul, div, neg and identity";
    return failure();
  }

  Value filled(RankedTensorType type, double value) {
    return graph::createSplatConstant(b, loc, type, value);
  }
  Value ones(RankedTensorType type) { return filled(type, 1.0); }
  Value zeros(RankedTensorType type) { return filled(type, 0.0); }

  /// `g` (the shape of a broadcast result) summed down to `operand`'s shape.
  Value unbroadcast(Value g, Value operand) {
    auto gType = cast<RankedTensorType>(g.getType());
    auto type = cast<RankedTensorType>(operand.getType());
    if (gType.getShape() == type.getShape())
      return g;
    int64_t lead = gType.getRank() - type.getRank();
    SmallVector<int64_t> axes, kept;
    for (int64_t d = 0; d < gType.getRank(); ++d) {
      bool broadcast = d < lead || (type.getDimSize(d - lead) == 1 &&
                                    gType.getDimSize(d) != 1);
      if (broadcast)
        axes.push_back(d);
      kept.push_back(broadcast ? 1 : gType.getDimSize(d));
    }
    Value summed = graph::ReduceSumOp::create(
        b, loc, gType.clone(kept), g, b.getDenseI64ArrayAttr(axes),
        b.getI64IntegerAttr(1), b.getI64IntegerAttr(0));
    SmallVector<int64_t> shape(type.getShape());
    auto shapeType = RankedTensorType::get({static_cast<int64_t>(shape.size())},
                                           b.getI64Type());
    Value target = graph::ConstantOp::create(
        b, loc,
        cast<ElementsAttr>(DenseIntElementsAttr::get(shapeType, shape)));
    return graph::ReshapeOp::create(b, loc, type, summed, target);
  }

  void accumulate(Value operand, Value g) {
    g = unbroadcast(g, operand);
    auto it = adjoints.find(operand);
    if (it == adjoints.end()) {
      adjoints[operand] = g;
      return;
    }
    it->second = graph::AddOp::create(b, loc, operand.getType(), it->second, g);
  }

  Value mul(Value x, Value y) {
    return graph::MulOp::create(b, loc, broadcastType(x, y), x, y);
  }
  Value div(Value x, Value y) {
    return graph::DivOp::create(b, loc, broadcastType(x, y), x, y);
  }
  Value neg(Value x) { return graph::NegOp::create(b, loc, x.getType(), x); }

  static Type broadcastType(Value x, Value y) {
    auto a = cast<RankedTensorType>(x.getType());
    auto c = cast<RankedTensorType>(y.getType());
    int64_t rank = std::max(a.getRank(), c.getRank());
    SmallVector<int64_t> shape(rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t da = d - (rank - a.getRank()), dc = d - (rank - c.getRank());
      int64_t sa = da >= 0 ? a.getDimSize(da) : 1;
      int64_t sc = dc >= 0 ? c.getDimSize(dc) : 1;
      shape[d] = sa == 1 ? sc : sa;
    }
    return a.clone(shape);
  }

  LogicalResult backward(Operation *op, Value g) {
    if (isa<graph::AddOp>(op)) {
      accumulate(op->getOperand(0), g);
      accumulate(op->getOperand(1), g);
    } else if (isa<graph::SubOp>(op)) {
      accumulate(op->getOperand(0), g);
      accumulate(op->getOperand(1), neg(g));
    } else if (isa<graph::MulOp>(op)) {
      accumulate(op->getOperand(0), mul(g, op->getOperand(1)));
      accumulate(op->getOperand(1), mul(g, op->getOperand(0)));
    } else if (isa<graph::DivOp>(op)) {
      Value a = op->getOperand(0), d = op->getOperand(1);
      accumulate(a, div(g, d));
      // d(a / d)/dd = -a / d^2
      accumulate(d, neg(div(mul(g, a), mul(d, d))));
    } else if (isa<graph::NegOp>(op)) {
      accumulate(op->getOperand(0), neg(g));
    } else if (isa<graph::IdentityOp>(op)) {
      accumulate(op->getOperand(0), g);
    } else {
      return unsupported(op);
    }
    return success();
  }

  OpBuilder &b;
  Location loc;
  llvm::DenseMap<Value, Value> adjoints;
};

struct ExpandGradientsPass
    : strata::impl::ExpandGradientsPassBase<ExpandGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<graph::GradientOp> gradients;
    getOperation().walk([&](graph::GradientOp op) { gradients.push_back(op); });
    for (graph::GradientOp op : gradients) {
      for (Value v : op->getOperands()) {
        auto type = dyn_cast<RankedTensorType>(v.getType());
        if (!type || !type.hasStaticShape()) {
          op.emitError("Gradient needs static shapes, got ") << v.getType();
          return signalPassFailure();
        }
      }
      OpBuilder b(op);
      Differentiator differentiator(b, op.getLoc());
      if (failed(differentiator.expand(op)))
        return signalPassFailure();
      op.erase();
    }
  }
};

} // namespace
