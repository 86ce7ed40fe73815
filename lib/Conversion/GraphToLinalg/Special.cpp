//===- Special.cpp - Special graph ops to linalg ----------------*- C++ -*-===//
//
// Lowers the graph dialect's resampling (resize, grid sample), scatter,
// selection (top-k, max-pool indices), quantization, signal and other
// special ops to linalg on tensors. See Patterns.h for the contract and
// Special.h for how the work is split over files.
//
// Ops whose result depends on the order of their updates (scatter with
// duplicate indices) are loops: `scf.for` over tensors with
// `tensor.insert`, which one-shot bufferization turns into in-place stores.
//
//===----------------------------------------------------------------------===//

#include "Special.h"
#include "Builders.h"
#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace strata::detail;
using namespace strata::detail::special;

std::optional<SmallVector<double>> special::constantFloats(Value value) {
  DenseFPElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> values;
  for (APFloat v : attr.getValues<APFloat>()) {
    bool lost;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v.convertToDouble());
  }
  return values;
}

Value special::denseConstant(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape, Type type,
                             ArrayRef<double> values) {
  auto tensorType = RankedTensorType::get(shape, type);
  DenseElementsAttr attr;
  if (auto floatType = dyn_cast<FloatType>(type)) {
    SmallVector<APFloat> elements;
    for (double v : values) {
      APFloat f(v);
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      elements.push_back(f);
    }
    attr = DenseElementsAttr::get(tensorType, elements);
  } else {
    unsigned width = type.getIntOrFloatBitWidth();
    SmallVector<APInt> elements;
    for (double v : values)
      elements.push_back(APInt(width, int64_t(v), /*isSigned=*/width > 1,
                               /*implicitTrunc=*/true));
    attr = DenseElementsAttr::get(tensorType, elements);
  }
  return arith::ConstantOp::create(b, loc, attr);
}

Value special::filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                            Value value) {
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::FillOp::create(b, loc, value, init).getResult(0);
}

SmallVector<Value> special::loopOver(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape, ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange ivs,
                                    ValueRange carried)>
        body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t size : shape) {
    lbs.push_back(indexConstant(b, loc, 0));
    ubs.push_back(indexConstant(b, loc, size));
    steps.push_back(indexConstant(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, init,
      [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange carried) {
        SmallVector<Value> next = body(b, loc, ivs, carried);
        return scf::ValueVector(next.begin(), next.end());
      });
  return nest.results;
}

static Lowering getLowering(Operation *op) {
  if (!isa_and_present<strata::graph::GraphDialect>(op->getDialect()))
    return nullptr;
  for (auto get : {getSamplingLowering, getScatterLowering, getQuantLowering,
                   getMiscLowering})
    if (Lowering lowering = get(op))
      return lowering;
  return nullptr;
}

bool strata::detail::canLowerSpecial(Operation *op) {
  return bool(getLowering(op));
}

void strata::detail::populateSpecialToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  // The scatter loops are scf.for: the pass declares scf as a dependent
  // dialect (Passes.td).
  addPlannedLowering(converter, patterns, getLowering, "special");
}
