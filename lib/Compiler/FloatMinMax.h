//===- FloatMinMax.h - arith's float min/max as LLVM intrinsics -*- C++ -*-===//
//
// arith.maxnumf, minnumf, maximumf and minimumf as the LLVM intrinsics of
// the same semantics (llvm.maxnum, llvm.minnum, llvm.maximum,
// llvm.minimum). arith-expand, which both targets' llvm pipelines need for
// other ops, would otherwise expand each into two compares and two selects:
// on NVPTX a fifth of the flash kernel's instructions per key step, on x86
// a softmax's row maximum that LLVM's loop vectorizer did not recognize as
// a reduction (it ran one element at a time). As intrinsics, NVPTX emits
// one max/min instruction and LLVM vectorizes the reductions.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_COMPILER_FLOATMINMAX_H
#define STRATA_LIB_COMPILER_FLOATMINMAX_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {

/// f16, bf16, f32 or f64, or a 1-D vector of one: what LLVM's float
/// intrinsics take as they are (8-bit floats become integers).
inline bool isLlvmFloat(mlir::Type type) {
  if (auto vector = mlir::dyn_cast<mlir::VectorType>(type)) {
    if (vector.getRank() != 1 || vector.isScalable())
      return false;
    type = vector.getElementType();
  }
  return mlir::isa<mlir::Float16Type, mlir::BFloat16Type, mlir::Float32Type,
                   mlir::Float64Type>(type);
}

template <typename From, typename To>
struct FloatMinMaxToLlvm : mlir::OpRewritePattern<From> {
  using mlir::OpRewritePattern<From>::OpRewritePattern;
  mlir::LogicalResult
  matchAndRewrite(From op, mlir::PatternRewriter &rewriter) const override {
    if (!isLlvmFloat(op.getType()))
      return mlir::failure();
    rewriter.replaceOpWithNewOp<To>(op, op.getType(), op.getLhs(), op.getRhs());
    return mlir::success();
  }
};

inline void
populateFloatMinMaxToLlvmPatterns(mlir::RewritePatternSet &patterns) {
  using namespace mlir;
  patterns.add<FloatMinMaxToLlvm<arith::MaxNumFOp, LLVM::MaxNumOp>,
               FloatMinMaxToLlvm<arith::MinNumFOp, LLVM::MinNumOp>,
               FloatMinMaxToLlvm<arith::MaximumFOp, LLVM::MaximumOp>,
               FloatMinMaxToLlvm<arith::MinimumFOp, LLVM::MinimumOp>>(
      patterns.getContext());
}

} // namespace strata

#endif // STRATA_LIB_COMPILER_FLOATMINMAX_H
