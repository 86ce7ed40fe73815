//===- GraphToLinalg.cpp - the graph to linalg pass -------------*- C++ -*-===//
//
// strata-convert-graph-to-linalg: composes the op families of Patterns.h into
// one partial conversion. Ops no family lowers stay graph ops, so the pass
// runs on any module; the compiler's partitioner only puts ops for which
// isLowerableToLinalg holds into generated kernels.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Conversion/Passes.h"
#include "strata/Dialect/Graph/IR/GraphDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace strata {
#define GEN_PASS_DEF_CONVERTGRAPHTOLINALGPASS
#include "strata/Conversion/Passes.h.inc"
} // namespace strata

using namespace mlir;

bool strata::isLowerableToLinalg(Operation *op) {
  if (!isa_and_present<graph::GraphDialect>(op->getDialect()))
    return false;
  return detail::canLowerElementwise(op) || detail::canLowerReduction(op) ||
         detail::canLowerTensor(op) || detail::canLowerNN(op) ||
         detail::canLowerLossAndNorm(op) || detail::canLowerSpecial(op) ||
         detail::canLowerRecurrent(op) || detail::canLowerExtra(op);
}

bool strata::isLowerableElementwise(Operation *op) {
  return isa_and_present<graph::GraphDialect>(op->getDialect()) &&
         detail::canLowerElementwise(op);
}

void strata::populateGraphToLinalgPatterns(TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  detail::populateElementwiseToLinalgPatterns(converter, patterns);
  detail::populateReductionToLinalgPatterns(converter, patterns);
  detail::populateTensorToLinalgPatterns(converter, patterns);
  detail::populateNNToLinalgPatterns(converter, patterns);
  detail::populateLossAndNormToLinalgPatterns(converter, patterns);
  detail::populateSpecialToLinalgPatterns(converter, patterns);
  detail::populateRecurrentToLinalgPatterns(converter, patterns);
  detail::populateExtraToLinalgPatterns(converter, patterns);
}

void strata::detail::addSignlessTypeConversion(TypeConverter &converter) {
  // Later additions take precedence: the identity is the fallback.
  converter.addConversion([](Type type) { return type; });
  converter.addConversion(
      [](IntegerType type) -> Type { return detail::getSignlessType(type); });
  converter.addConversion([](RankedTensorType type) -> Type {
    return type.clone(detail::getSignlessType(type.getElementType()));
  });
  converter.addConversion([](UnrankedTensorType type) -> Type {
    return UnrankedTensorType::get(
        detail::getSignlessType(type.getElementType()));
  });
  // uiN and iN values have the same bits: a cast that the next lowering (or
  // reconcile-unrealized-casts, once both sides are lowered) removes.
  auto materialize = [](OpBuilder &builder, Type type, ValueRange inputs,
                        Location loc) -> Value {
    if (inputs.size() != 1)
      return Value();
    return UnrealizedConversionCastOp::create(builder, loc, type, inputs)
        .getResult(0);
  };
  converter.addSourceMaterialization(materialize);
  converter.addTargetMaterialization(materialize);
}

namespace {
/// Lowers any op for which the family's planner has a lowering.
struct PlannedLowering : ConversionPattern {
  PlannedLowering(const TypeConverter &converter, MLIRContext *context,
                  strata::detail::LoweringPlanner planner, StringRef family)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context),
        planner(planner), family(family.str()) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    strata::detail::Lowering lowering = planner(op);
    if (!lowering)
      return rewriter.notifyMatchFailure(op,
                                         "not a lowerable " + family + " op");
    SmallVector<RankedTensorType> results;
    for (Type type : op->getResultTypes()) {
      auto converted = dyn_cast_or_null<RankedTensorType>(
          getTypeConverter()->convertType(type));
      if (!converted)
        return rewriter.notifyMatchFailure(op, "result type does not convert");
      results.push_back(converted);
    }
    rewriter.replaceOp(op, lowering(rewriter, op->getLoc(), operands, results));
    return success();
  }

  strata::detail::LoweringPlanner planner;
  std::string family;
};
} // namespace

void strata::detail::addPlannedLowering(TypeConverter &converter,
                                        RewritePatternSet &patterns,
                                        LoweringPlanner planner,
                                        StringRef family) {
  patterns.add<PlannedLowering>(converter, patterns.getContext(), planner,
                                family);
}

namespace {
struct ConvertGraphToLinalgPass
    : strata::impl::ConvertGraphToLinalgPassBase<ConvertGraphToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // A partial conversion, not a greedy rewrite: it neither folds nor erases
    // the graph ops it leaves alone, so unsupported ops stay exactly as they
    // were. Folding is off for the ops it lowers too: a folded graph op would
    // become a graph.constant (the dialect's materializer) instead of linalg,
    // and constant folding is the graph stage's canonicalizer's job anyway.
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect>();
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !strata::isLowerableToLinalg(op); });

    TypeConverter converter;
    strata::detail::addSignlessTypeConversion(converter);
    RewritePatternSet patterns(context);
    strata::populateGraphToLinalgPatterns(converter, patterns);
    ConversionConfig config;
    config.foldingMode = DialectConversionFoldingMode::Never;
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
