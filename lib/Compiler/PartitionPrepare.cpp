//===- PartitionPrepare.cpp - the entry function before the walk ----------===//
//
// Rewrites of the entry function that the partitioner makes before it groups
// ops into kernels (partitionIntoKernels): GEMM weights stored the way the
// product reads them (transposed once at compile time, by rows when they
// are not aligned for cuBLASLt), transposes of constant weights folded, and
// results with no elements made empty constants.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Gpu.h"
#include "PartitionGroup.h"
#include "RowParallel.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>
#include <deque>

using namespace mlir;
using namespace strata;
using namespace strata::partition;
namespace graph = strata::graph;

/// `v` viewed with `shape` (a graph.reshape; `v` itself when it has it).
static Value reshapeTo(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
  if (type == v.getType())
    return v;
  auto shapeType =
      RankedTensorType::get({int64_t(shape.size())}, b.getI64Type());
  Value shapeValue = graph::ConstantOp::create(
      b, loc, DenseElementsAttr::get(shapeType, shape));
  return graph::ReshapeOp::create(b, loc, type, v, shapeValue);
}

/// x @ wᵀ (+ bias over N) for a matrix w [N, K], as one Gemm with transB:
/// x's leading dimensions folded into rows by views, the product viewed
/// with `yType`'s shape. cuBLASLt reads w's rows of K, which are 16-byte
/// aligned when the product's rows of N need not be: the runtime then runs
/// it as classes of rows that are (runtime/lib/cuda/CublasLt.h).
static Value gemmByRowsOfK(OpBuilder &b, Location loc, Value x, Value w,
                           Value bias, RankedTensorType yType) {
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t n = wType.getDimSize(0), k = wType.getDimSize(1);
  int64_t rows = cast<RankedTensorType>(x.getType()).getNumElements() /
                 std::max<int64_t>(k, 1);
  if (bias)
    bias = reshapeTo(b, loc, bias, {n});
  Value product = graph::GemmOp::create(
      b, loc, RankedTensorType::get({rows, n}, yType.getElementType()),
      reshapeTo(b, loc, x, {rows, k}), w, bias, b.getF32FloatAttr(1.0f),
      b.getF32FloatAttr(1.0f), b.getI64IntegerAttr(0), b.getI64IntegerAttr(1));
  return reshapeTo(b, loc, product, yType.getShape());
}

/// A constant matrix's elements transposed: [rows, cols] -> [cols, rows].
static DenseElementsAttr transposeMatrix(DenseElementsAttr weights) {
  auto type = cast<RankedTensorType>(weights.getType());
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
  ArrayRef<char> from = weights.getRawData();
  std::vector<char> to(from.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&to[(c * rows + r) * width], &from[(r * cols + c) * width],
                  width);
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get({cols, rows}, type.getElementType()), to);
}

/// Gemm's constant transB weights (as PyTorch's Linear exports them) are
/// transposed once here instead of on every run; on the GPU with
/// libraries, not when the product's rows are unaligned and the weight's
/// stored rows are not (rowClassesNeedWeightRowsOfK).
void partition::pretransposeGemmWeights(func::FuncOp entry, bool gpuLibraries) {
  for (auto gemm : llvm::make_early_inc_range(entry.getOps<graph::GemmOp>())) {
    DenseElementsAttr weights;
    if (!gemm.getTransB() || !matchPattern(gemm.getB(), m_Constant(&weights)))
      continue;
    auto type = cast<RankedTensorType>(weights.getType());
    if (type.getRank() != 2 || !type.getElementType().isIntOrFloat() ||
        type.getElementType().isInteger(1) || weights.isSplat())
      continue;
    if (gpuLibraries &&
        rowClassesNeedWeightRowsOfK(type.getDimSize(0), type.getDimSize(1),
                                    type.getElementType()))
      continue;
    OpBuilder builder(gemm);
    auto transposed =
        graph::ConstantOp::create(builder, gemm.getB().getLoc(),
                                  cast<ElementsAttr>(transposeMatrix(weights)));
    gemm.getBMutable().assign(transposed);
    gemm.setTransB(0);
  }
}

/// On the GPU with libraries, MatMul(x, w) with a constant matrix w [K, N]
/// whose product has unaligned rows (rowClassesNeedWeightRowsOfK: a Linear to
/// 30522 or 50257 outputs, exported with its weight pretransposed) becomes
/// Gemm(x, wᵀ) with transB, wᵀ stored [N, K] once here, x's batch
/// dimensions folded into its rows by views; an Add of N values right
/// after it becomes the Gemm's C (cuBLASLt's bias epilogue).
void partition::storeUnalignedWeightsByRows(func::FuncOp entry) {
  for (auto matmul :
       llvm::make_early_inc_range(entry.getOps<graph::MatMulOp>())) {
    DenseElementsAttr weights;
    auto xType = dyn_cast<RankedTensorType>(matmul.getLhs().getType());
    auto yType = dyn_cast<RankedTensorType>(matmul.getType());
    if (!matchPattern(matmul.getRhs(), m_Constant(&weights)) || !xType ||
        !yType || xType.getRank() < 2 || !xType.hasStaticShape() ||
        !yType.hasStaticShape() || weights.isSplat())
      continue;
    auto wType = cast<RankedTensorType>(weights.getType());
    if (wType.getRank() != 2 ||
        !rowClassesNeedWeightRowsOfK(wType.getDimSize(1), wType.getDimSize(0),
                                     wType.getElementType()))
      continue;
    int64_t n = wType.getDimSize(1);
    // The bias: an Add of [N] (or [1, ..., N]) values, the product's only
    // reader.
    Operation *last = matmul;
    Value bias;
    if (matmul->hasOneUse())
      if (auto add = dyn_cast<graph::AddOp>(*matmul->user_begin())) {
        Value other =
            add.getLhs() == matmul.getResult() ? add.getRhs() : add.getLhs();
        auto type = dyn_cast<RankedTensorType>(other.getType());
        if (other != matmul.getResult() && add.getType() == yType && type &&
            type.hasStaticShape() && type.getNumElements() == n &&
            type.getShape().back() == n &&
            type.getElementType() == yType.getElementType()) {
          last = add;
          bias = other;
        }
      }
    OpBuilder b(last);
    Location loc =
        last == matmul.getOperation()
            ? matmul.getLoc()
            : FusedLoc::get(b.getContext(), {matmul.getLoc(), last->getLoc()});
    Value w =
        graph::ConstantOp::create(b, matmul.getRhs().getLoc(),
                                  cast<ElementsAttr>(transposeMatrix(weights)));
    Value y = gemmByRowsOfK(b, loc, matmul.getLhs(), w, bias, yType);
    last->getResult(0).replaceAllUsesWith(y);
    if (last != matmul)
      last->erase();
    matmul.erase();
  }
}

/// On the GPU, MatMul(x, Transpose(w)) with a matrix w (a tied embedding's
/// output projection, x @ wteᵀ) becomes Gemm(x, w) with transB, x's batch
/// dimensions folded into its rows by views: cuBLASLt reads w transposed in
/// place. A transpose kernel would write all of w again on every run, and
/// its result's rows (N elements) need not be 16-byte aligned, which keeps
/// cuBLASLt off its fastest kernels; w's rows (K elements) usually are.
void partition::foldTransposedWeights(func::FuncOp entry) {
  for (auto matmul :
       llvm::make_early_inc_range(entry.getOps<graph::MatMulOp>())) {
    auto transpose = matmul.getRhs().getDefiningOp<graph::TransposeOp>();
    if (!transpose || !transpose.getOutput().hasOneUse())
      continue;
    auto wType = dyn_cast<RankedTensorType>(transpose.getInput().getType());
    auto xType = dyn_cast<RankedTensorType>(matmul.getLhs().getType());
    auto yType = dyn_cast<RankedTensorType>(matmul.getType());
    if (!wType || !xType || !yType || wType.getRank() != 2 ||
        xType.getRank() < 2 || !xType.hasStaticShape() ||
        !wType.hasStaticShape() || !yType.hasStaticShape() ||
        !isa<FloatType>(wType.getElementType()))
      continue;
    if (std::optional<ArrayRef<int64_t>> perm = transpose.getPerm();
        perm && (*perm)[0] != 1)
      continue;
    OpBuilder b(matmul);
    Location loc =
        FusedLoc::get(b.getContext(), {transpose.getLoc(), matmul.getLoc()});
    Value y = gemmByRowsOfK(b, loc, matmul.getLhs(), transpose.getInput(),
                            Value(), yType);
    matmul.replaceAllUsesWith(y);
    matmul.erase();
    transpose.erase();
  }
}

/// A result with no elements needs no kernel: it becomes an empty constant
/// (kernels with zero-size buffers cannot take the bare-pointer calling
/// convention, and have nothing to compute).
void partition::foldEmptyResults(func::FuncOp entry) {
  for (Operation &op : llvm::make_early_inc_range(
           entry.getBody().front().without_terminator())) {
    if (isa<graph::ConstantOp>(op) || op.getNumResults() == 0 ||
        op.getNumRegions() != 0)
      continue;
    bool allEmpty = llvm::all_of(op.getResults(), [](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return type && type.hasStaticShape() && type.getNumElements() == 0;
    });
    if (!allEmpty)
      continue;
    OpBuilder builder(&op);
    for (Value result : op.getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      auto empty =
          graph::ConstantOp::create(builder, op.getLoc(),
                                    cast<ElementsAttr>(DenseElementsAttr::get(
                                        type, ArrayRef<Attribute>{})));
      result.replaceAllUsesWith(empty.getResult());
    }
    op.erase();
  }
}
