//===- Patterns.h - graph to linalg lowering families -----------*- C++ -*-===//
//
// strata-convert-graph-to-linalg is split by op family, one file each:
// Elementwise.cpp, Reduction.cpp, Tensor.cpp (shape and data movement) and
// NN.cpp (matmul, convolution, pooling, normalization). Each family says
// which ops it lowers (`canLower*`, consulted by the pass's legality check
// and by the compiler's partitioner) and adds its patterns.
//
// Contract for every family: `canLower*(op)` is true exactly when the
// family's patterns will rewrite `op`; the patterns produce linalg, tensor,
// arith and math ops on tensors whose element types are signless (uiN
// tensors arrive converted to iN by the type converter; a family that cares
// about unsignedness reads it from the original op's types).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_CONVERSION_GRAPHTOLINALG_PATTERNS_H
#define STRATA_LIB_CONVERSION_GRAPHTOLINALG_PATTERNS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>

namespace strata::detail {

/// Computes one element of an op's result from one element of each operand
/// (a `linalg.generic` body, without the yield).
using BodyBuilder = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                              mlir::ValueRange)>;

/// Scalar helpers shared by the families (defined in Elementwise.cpp). Types
/// named `from`/`to`/`type` are the graph op's element types, which may be
/// unsigned; the values themselves are signless.

/// Signless (i1 included) or unsigned integer types.
bool isSupportedInt(mlir::Type type);
/// `type` with an unsigned integer made signless (other types unchanged).
mlir::Type getSignlessType(mlir::Type type);
/// Converts `value` (of the signless form of `from`) to the signless form of
/// `to` with ONNX Cast semantics, reading signedness from `from` and `to`.
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, mlir::Type from, mlir::Type to);

/// Makes uiN tensors (and scalars) iN and leaves other types alone, with
/// unrealized_conversion_cast materializations both ways: what every
/// family's patterns expect of the pass's converter (defined in
/// GraphToLinalg.cpp).
void addSignlessTypeConversion(mlir::TypeConverter &converter);

/// Builds the replacement values of an op from its (converted, signless)
/// operands and result types.
using Lowering = std::function<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange operands,
    llvm::ArrayRef<mlir::RankedTensorType> results)>;

/// A family's planner: how it lowers `op`, or null when it does not. The
/// family's canLower* is `bool(planner(op))`, which keeps it exact.
using LoweringPlanner = Lowering (*)(mlir::Operation *op);

/// Adds the conversion pattern that rewrites every op `planner` has a
/// lowering for (`family` names it in match-failure messages).
void addPlannedLowering(mlir::TypeConverter &converter,
                        mlir::RewritePatternSet &patterns,
                        LoweringPlanner planner, llvm::StringRef family);

bool canLowerElementwise(mlir::Operation *op);
void populateElementwiseToLinalgPatterns(mlir::TypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);

bool canLowerReduction(mlir::Operation *op);
void populateReductionToLinalgPatterns(mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);

bool canLowerTensor(mlir::Operation *op);
void populateTensorToLinalgPatterns(mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);

bool canLowerNN(mlir::Operation *op);
void populateNNToLinalgPatterns(mlir::TypeConverter &converter,
                                mlir::RewritePatternSet &patterns);

/// Losses and normalizations (Loss.cpp, Norm.cpp).
bool canLowerLossAndNorm(mlir::Operation *op);
void populateLossAndNormToLinalgPatterns(mlir::TypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);

/// The normalization half of that family (Norm.cpp), composed by Loss.cpp.
bool canLowerNorm(mlir::Operation *op);
void populateNormToLinalgPatterns(mlir::TypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);

/// Resampling, scatter, quantization, signal and other ops (Sampling.cpp,
/// Quant.cpp, Misc.cpp).
bool canLowerSpecial(mlir::Operation *op);
void populateSpecialToLinalgPatterns(mlir::TypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);

/// Recurrent networks: RNN, GRU, LSTM (Recurrent.cpp).
bool canLowerRecurrent(mlir::Operation *op);
void populateRecurrentToLinalgPatterns(mlir::TypeConverter &converter,
                                       mlir::RewritePatternSet &patterns);

/// Optimizer updates (Momentum, Adagrad, Adam), training-mode batch
/// normalization, cum_sum and reduce_sum with run-time axes, and integer
/// tfidf_vectorizer (Extra.cpp).
bool canLowerExtra(mlir::Operation *op);
void populateExtraToLinalgPatterns(mlir::TypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);

} // namespace strata::detail

#endif // STRATA_LIB_CONVERSION_GRAPHTOLINALG_PATTERNS_H
