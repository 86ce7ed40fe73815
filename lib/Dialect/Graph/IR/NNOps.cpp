//===- NNOps.cpp - matmul, convolution, pooling, norms ----------*- C++ -*-===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata::graph;

/// True when two dimension sizes can be equal at run time.
static bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

/// numpy matmul shape: 1-D operands are promoted and the added axis removed.
static FailureOr<SmallVector<int64_t>> matmulShape(ArrayRef<int64_t> lhs,
                                                   ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return failure();
  SmallVector<int64_t> a(lhs), b(rhs);
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  if (!dimsCompatible(a.back(), b[b.size() - 2]))
    return failure();
  auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2),
                               ArrayRef<int64_t>(b).drop_back(2));
  if (!batch)
    return failure();
  SmallVector<int64_t> shape = *batch;
  if (!lhsVector)
    shape.push_back(a[a.size() - 2]);
  if (!rhsVector)
    shape.push_back(b.back());
  return shape;
}

LogicalResult MatMulOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto lhs = cast<TensorType>(getLhs().getType());
  auto rhs = cast<TensorType>(getRhs().getType());
  if (!lhs.hasRank() || !rhs.hasRank()) {
    types.push_back(withShape(getType(), std::nullopt));
    return success();
  }
  auto shape = matmulShape(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return failure();
  types.push_back(withShape(getType(), ArrayRef<int64_t>(*shape)));
  return success();
}

LogicalResult MatMulOp::verify() {
  auto lhs = cast<TensorType>(getLhs().getType());
  auto rhs = cast<TensorType>(getRhs().getType());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("operand element types differ: ")
           << lhs.getElementType() << " vs " << rhs.getElementType();
  if (lhs.hasRank() && rhs.hasRank() &&
      failed(matmulShape(lhs.getShape(), rhs.getShape())))
    return emitOpError("operand shapes ")
           << lhs << " and " << rhs << " are not matmul-compatible";
  return success();
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto a = cast<TensorType>(getA().getType());
  auto b = cast<TensorType>(getB().getType());
  if (!a.hasRank() || !b.hasRank()) {
    types.push_back(RankedTensorType::get({kDynamic, kDynamic},
                                          getElementTypeOrSelf(getType())));
    return success();
  }
  if (a.getRank() != 2 || b.getRank() != 2)
    return failure();
  int64_t m = a.getDimSize(getTransA() ? 1 : 0);
  int64_t k = a.getDimSize(getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(getTransB() ? 0 : 1);
  if (!dimsCompatible(k, kb))
    return failure();
  types.push_back(withShape(getType(), ArrayRef<int64_t>{m, n}));
  return success();
}

LogicalResult GemmOp::verify() {
  auto a = cast<TensorType>(getA().getType());
  auto b = cast<TensorType>(getB().getType());
  if ((a.hasRank() && a.getRank() != 2) || (b.hasRank() && b.getRank() != 2))
    return emitOpError("A and B must be 2-D, got ") << a << " and " << b;
  SmallVector<Type> types;
  if (failed(inferResultTypes(types)))
    return emitOpError("inner dimensions of A ")
           << a << " and B " << b << " differ (transA = " << getTransA()
           << ", transB = " << getTransB() << ")";
  if (getC()) {
    auto c = cast<TensorType>(getC().getType());
    auto result = cast<TensorType>(types.front());
    if (c.hasRank() && result.hasRank() &&
        !broadcastShapes(c.getShape(), result.getShape()))
      return emitOpError("C ") << c << " does not broadcast to " << result;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

/// Output size of one spatial axis of a convolution or pooling window.
static int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride,
                              int64_t dilation, int64_t padBegin,
                              int64_t padEnd) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return kDynamic;
  int64_t effective = dilation * (kernel - 1) + 1;
  return (in + padBegin + padEnd - effective) / stride + 1;
}

LogicalResult ConvOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(getInput().getType());
  auto weight = cast<TensorType>(getWeight().getType());
  if (!input.hasRank() || !weight.hasRank()) {
    types.push_back(withShape(getType(), std::nullopt));
    return success();
  }
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1 || weight.getRank() != input.getRank())
    return failure();
  auto attrOr = [&](std::optional<ArrayRef<int64_t>> attr, int64_t size,
                    int64_t fill) {
    if (attr && int64_t(attr->size()) == size)
      return llvm::to_vector(*attr);
    return SmallVector<int64_t>(size, fill);
  };
  SmallVector<int64_t> strides = attrOr(getStrides(), spatial, 1);
  SmallVector<int64_t> dilations = attrOr(getDilations(), spatial, 1);
  SmallVector<int64_t> pads = attrOr(getPads(), 2 * spatial, 0);
  SmallVector<int64_t> shape = {input.getDimSize(0), weight.getDimSize(0)};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.getDimSize(i + 2);
    int64_t kernel = weight.getDimSize(i + 2);
    if (getAutoPad() == "SAME_UPPER" || getAutoPad() == "SAME_LOWER") {
      shape.push_back(ShapedType::isDynamic(in)
                          ? kDynamic
                          : (in + strides[i] - 1) / strides[i]);
    } else if (getAutoPad() == "VALID") {
      shape.push_back(
          convOutputSize(in, kernel, strides[i], dilations[i], 0, 0));
    } else {
      shape.push_back(convOutputSize(in, kernel, strides[i], dilations[i],
                                     pads[i], pads[i + spatial]));
    }
  }
  types.push_back(withShape(getType(), ArrayRef<int64_t>(shape)));
  return success();
}

LogicalResult ConvOp::verify() {
  auto input = cast<TensorType>(getInput().getType());
  auto weight = cast<TensorType>(getWeight().getType());
  StringRef autoPad = getAutoPad();
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER" && autoPad != "VALID")
    return emitOpError("unknown auto_pad \"") << autoPad << "\"";
  if (getGroup() < 1)
    return emitOpError("group must be positive, got ") << getGroup();
  if (!input.hasRank() || !weight.hasRank())
    return success();
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1)
    return emitOpError("input must have rank >= 3, got ") << input;
  if (weight.getRank() != input.getRank())
    return emitOpError("weight rank ")
           << weight.getRank() << " differs from input rank "
           << input.getRank();
  int64_t channels = input.getDimSize(1), perGroup = weight.getDimSize(1);
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(perGroup) &&
      channels != perGroup * getGroup())
    return emitOpError("input has ")
           << channels << " channels but weight expects " << perGroup
           << " x group " << getGroup();
  auto checkSize = [&](std::optional<ArrayRef<int64_t>> attr, int64_t size,
                       StringRef name) -> LogicalResult {
    if (attr && int64_t(attr->size()) != size)
      return emitOpError(name) << " has " << attr->size() << " entries, "
                               << size << " expected";
    return success();
  };
  if (failed(checkSize(getStrides(), spatial, "strides")) ||
      failed(checkSize(getDilations(), spatial, "dilations")) ||
      failed(checkSize(getKernelShape(), spatial, "kernel_shape")) ||
      failed(checkSize(getPads(), 2 * spatial, "pads")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(getInput().getType());
  types.push_back(input);
  if (!input.hasRank()) {
    types.push_back(withShape(getMean().getType(), std::nullopt));
    types.push_back(withShape(getInvStdDev().getType(), std::nullopt));
    return success();
  }
  auto axis = normalizeAxis(getAxis(), input.getRank());
  if (!axis)
    return failure();
  SmallVector<int64_t> stats(input.getShape());
  for (int64_t i = *axis; i < input.getRank(); ++i)
    stats[i] = 1;
  types.push_back(withShape(getMean().getType(), ArrayRef<int64_t>(stats)));
  types.push_back(
      withShape(getInvStdDev().getType(), ArrayRef<int64_t>(stats)));
  return success();
}

LogicalResult LayerNormOp::verify() {
  auto input = cast<TensorType>(getInput().getType());
  if (input.hasRank() && !normalizeAxis(getAxis(), input.getRank()))
    return emitOpError("axis ") << getAxis() << " is out of range for rank "
                                << input.getRank();
  return success();
}
