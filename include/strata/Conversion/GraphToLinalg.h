//===- GraphToLinalg.h - graph ops to linalg on tensors ---------*- C++ -*-===//
//
// The kernel layer's entry: which graph ops have a linalg lowering, and the
// patterns that perform it (also run as strata-convert-graph-to-linalg).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_CONVERSION_GRAPHTOLINALG_H
#define STRATA_CONVERSION_GRAPHTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace strata {

/// Whether strata-convert-graph-to-linalg lowers `op` with its current types
/// (false for non-graph ops). The compiler's partitioner puts only such ops
/// into generated kernels.
bool isLowerableToLinalg(mlir::Operation *op);

/// Whether `op` is one of the elementwise ops (numpy broadcasting, one
/// result element from the operand elements at the same index) that the
/// lowering handles.
bool isLowerableElementwise(mlir::Operation *op);

/// Adds every family's lowering patterns. `converter` maps the types of the
/// ops' operands (uiN element types become iN inside kernels).
void populateGraphToLinalgPatterns(mlir::TypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);

} // namespace strata

#endif // STRATA_CONVERSION_GRAPHTOLINALG_H
