//===- NNOps.cpp - matmul, convolution, pooling, norms ----------*- C++ -*-===//
//
// Shape inference and verifiers of the neural-network ops. Most ops check
// their operands in one routine that serves both: shape inference runs it
// silently, the verifier runs it reporting the problem.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

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
// Shared checking
//===----------------------------------------------------------------------===//

namespace {

/// Shape inference and the verifier of each op below share one routine: it
/// runs silently for inference and reports through the op for verification,
/// so an op the verifier accepts always has a shape, and vice versa.
class Check {
public:
  Check(Operation *op, bool report) : op(op), report(report) {}

  /// Fails, reporting the message when verifying.
  template <typename... Args> LogicalResult fail(Args &&...args) const {
    if (report) {
      InFlightDiagnostic diag = op->emitOpError();
      (diag << ... << std::forward<Args>(args));
    }
    return failure();
  }

private:
  Operation *op;
  bool report;
};

} // namespace

/// Most ops here have one function that both infers the result types and,
/// with a reporting Check, names what is wrong: it is the op's shape
/// function and its verifier.
#define SHAPE_FUNCTION_IS_VERIFIER(Op, shapeFunction)                          \
  LogicalResult Op::inferResultTypes(SmallVectorImpl<Type> &types) {           \
    return shapeFunction(*this, types, Check(*this, false));                   \
  }                                                                            \
  LogicalResult Op::verify() {                                                 \
    SmallVector<Type> types;                                                   \
    return shapeFunction(*this, types, Check(*this, true));                    \
  }

static TensorType tensorType(Value value) {
  return cast<TensorType>(value.getType());
}

/// The size of dimension `i` of a ranked tensor, or kDynamic when the
/// tensor is unranked.
static int64_t dimOf(TensorType type, int64_t i) {
  return type.hasRank() ? type.getDimSize(i) : kDynamic;
}

/// True when `value` is a scalar or a one-element 1-D tensor (the forms
/// ONNX accepts for per-tensor scales, zero points and thresholds).
static bool isScalarLike(Value value) {
  auto type = tensorType(value);
  if (!type.hasRank())
    return true;
  return type.getRank() == 0 ||
         (type.getRank() == 1 && dimsCompatible(type.getDimSize(0), 1));
}

/// Checks that `value` is 1-D with `size` entries (when known).
static LogicalResult checkVector(Value value, int64_t size, StringRef name,
                                 const Check &check) {
  auto type = tensorType(value);
  if (!type.hasRank())
    return success();
  if (type.getRank() != 1 || !dimsCompatible(type.getDimSize(0), size))
    return check.fail(name, " must be 1-D with ",
                      ShapedType::isDynamic(size) ? std::string("?")
                                                  : std::to_string(size),
                      " entries, got ", type);
  return success();
}

/// Reads a constant scalar (or one-element) integer operand.
static std::optional<int64_t> constantScalar(Value value) {
  SmallVector<int64_t> values;
  if (!value || failed(getConstantIntValues(value, values)) ||
      values.size() != 1)
    return std::nullopt;
  return values.front();
}

static LogicalResult checkFlag(int64_t value, StringRef name,
                               const Check &check) {
  if (value != 0 && value != 1)
    return check.fail(name, " must be 0 or 1, got ", value);
  return success();
}

static LogicalResult checkOneOf(StringRef value, ArrayRef<StringRef> allowed,
                                StringRef name, const Check &check) {
  if (llvm::is_contained(allowed, value))
    return success();
  std::string list;
  for (StringRef a : allowed)
    list += (list.empty() ? "" : ", ") + a.str();
  return check.fail("unknown ", name, " \"", value, "\" (expected one of ",
                    list, ")");
}

//===----------------------------------------------------------------------===//
// Sliding windows (convolution and pooling)
//===----------------------------------------------------------------------===//

namespace {
/// The window attributes shared by convolutions and pooling ops.
struct Window {
  StringRef autoPad = "NOTSET";
  std::optional<ArrayRef<int64_t>> kernelShape, strides, dilations, pads;
  bool ceilMode = false;
};
} // namespace

static SmallVector<int64_t> attrOr(std::optional<ArrayRef<int64_t>> attr,
                                   int64_t size, int64_t fill) {
  if (attr && int64_t(attr->size()) == size)
    return llvm::to_vector(*attr);
  return SmallVector<int64_t>(size, fill);
}

/// Checks the window attributes of an op with `spatial` spatial axes (-1
/// when unknown: the list lengths are not checked).
static LogicalResult checkWindowAttrs(const Window &w, int64_t spatial,
                                      const Check &check) {
  if (failed(checkOneOf(w.autoPad,
                        {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"},
                        "auto_pad", check)))
    return failure();
  if (w.pads && w.autoPad != "NOTSET")
    return check.fail("pads cannot be combined with auto_pad \"", w.autoPad,
                      "\"");
  auto checkList = [&](std::optional<ArrayRef<int64_t>> attr, int64_t size,
                       int64_t min, StringRef name) -> LogicalResult {
    if (!attr)
      return success();
    if (spatial >= 0 && int64_t(attr->size()) != size)
      return check.fail(name, " has ", attr->size(), " entries, expected ",
                        size, " for ", spatial, " spatial axes");
    for (int64_t v : *attr)
      if (v < min)
        return check.fail(name, " entries must be >= ", min, ", got ", v);
    return success();
  };
  return success(
      succeeded(checkList(w.kernelShape, spatial, 1, "kernel_shape")) &&
      succeeded(checkList(w.strides, spatial, 1, "strides")) &&
      succeeded(checkList(w.dilations, spatial, 1, "dilations")) &&
      succeeded(checkList(w.pads, 2 * spatial, 0, "pads")));
}

/// Output sizes of the spatial axes `in` for windows of size `kernel`
/// (ONNX's convolution/pooling shape rule). Fails when a window does not fit
/// the padded input.
static FailureOr<SmallVector<int64_t>>
windowOutputSizes(ArrayRef<int64_t> in, ArrayRef<int64_t> kernel,
                  const Window &w, const Check &check) {
  int64_t spatial = in.size();
  SmallVector<int64_t> strides = attrOr(w.strides, spatial, 1);
  SmallVector<int64_t> dilations = attrOr(w.dilations, spatial, 1);
  SmallVector<int64_t> pads = attrOr(w.pads, 2 * spatial, 0);
  SmallVector<int64_t> sizes;
  for (int64_t i = 0; i < spatial; ++i) {
    if (ShapedType::isDynamic(in[i]) || ShapedType::isDynamic(kernel[i])) {
      sizes.push_back(kDynamic);
      continue;
    }
    int64_t effective = dilations[i] * (kernel[i] - 1) + 1;
    int64_t padded = in[i];
    if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER")
      padded += samePadding(in[i], effective, strides[i]);
    else if (w.autoPad != "VALID")
      padded += pads[i] + pads[i + spatial];
    int64_t span = padded - effective;
    if (span < 0)
      return check.fail("window of size ", effective,
                        " (with dilation) does not fit the padded input of "
                        "size ",
                        padded, " along spatial axis ", i);
    sizes.push_back(
        (w.ceilMode ? llvm::divideCeil(span, strides[i]) : span / strides[i]) +
        1);
  }
  return sizes;
}

/// Shape of a convolution: input (N, C, D...), weight (M, C/group, k...).
/// The result is (N, M, D_out...) with element type `element`.
static LogicalResult inferConvLike(Value inputValue, Value weightValue,
                                   Value bias, int64_t group, const Window &w,
                                   Type element, SmallVectorImpl<Type> &types,
                                   const Check &check) {
  auto input = tensorType(inputValue), weight = tensorType(weightValue);
  if (group < 1)
    return check.fail("group must be positive, got ", group);
  int64_t rank = input.hasRank()    ? input.getRank()
                 : weight.hasRank() ? weight.getRank()
                                    : -1;
  if (rank < 0) {
    if (failed(checkWindowAttrs(w, -1, check)))
      return failure();
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  int64_t spatial = rank - 2;
  if (spatial < 1)
    return check.fail("input must have rank >= 3, got rank ", rank);
  if (input.hasRank() && weight.hasRank() && weight.getRank() != rank)
    return check.fail("weight rank ", weight.getRank(),
                      " differs from input rank ", rank);
  if (failed(checkWindowAttrs(w, spatial, check)))
    return failure();
  int64_t channels = dimOf(input, 1), perGroup = dimOf(weight, 1);
  int64_t outChannels = dimOf(weight, 0);
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(perGroup) &&
      channels != perGroup * group)
    return check.fail("input has ", channels, " channels but the weight ",
                      weight, " expects ", perGroup, " x group ", group);
  if (!ShapedType::isDynamic(channels) && channels % group != 0)
    return check.fail("input channels ", channels,
                      " are not divisible by group ", group);
  if (!ShapedType::isDynamic(outChannels) && outChannels % group != 0)
    return check.fail("output channels ", outChannels,
                      " are not divisible by group ", group);
  SmallVector<int64_t> kernel;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t fromWeight = dimOf(weight, i + 2);
    if (w.kernelShape && !dimsCompatible((*w.kernelShape)[i], fromWeight))
      return check.fail("kernel_shape entry ", (*w.kernelShape)[i],
                        " differs from the weight's spatial size ", fromWeight,
                        " along axis ", i);
    kernel.push_back(w.kernelShape ? (*w.kernelShape)[i] : fromWeight);
  }
  if (bias && failed(checkVector(bias, outChannels, "bias", check)))
    return failure();
  if (!input.hasRank()) {
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  auto sizes =
      windowOutputSizes(input.getShape().drop_front(2), kernel, w, check);
  if (failed(sizes))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0), outChannels};
  shape.append(*sizes);
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

/// Checks that a zero point has the element type of the data it belongs to
/// and is a scalar (or, where `perChannel` is known, 1-D with that size).
static LogicalResult checkZeroPoint(Value zeroPoint, Type element,
                                    StringRef name, const Check &check,
                                    std::optional<int64_t> perChannel = {}) {
  if (!zeroPoint)
    return success();
  auto type = tensorType(zeroPoint);
  if (type.getElementType() != element)
    return check.fail(name, " element type ", type.getElementType(),
                      " differs from the data's ", element);
  if (isScalarLike(zeroPoint))
    return success();
  if (perChannel)
    return checkVector(zeroPoint, *perChannel, name, check);
  return check.fail(name, " must be a scalar, got ", type);
}

//===----------------------------------------------------------------------===//
// Conv, ConvInteger, QLinearConv
//===----------------------------------------------------------------------===//

static Window convWindow(StringRef autoPad,
                         std::optional<ArrayRef<int64_t>> kernelShape,
                         std::optional<ArrayRef<int64_t>> strides,
                         std::optional<ArrayRef<int64_t>> dilations,
                         std::optional<ArrayRef<int64_t>> pads) {
  Window w;
  w.autoPad = autoPad;
  w.kernelShape = kernelShape;
  w.strides = strides;
  w.dilations = dilations;
  w.pads = pads;
  return w;
}

static LogicalResult inferConv(ConvOp op, SmallVectorImpl<Type> &types,
                               const Check &check) {
  Type element = tensorType(op.getInput()).getElementType();
  if (tensorType(op.getWeight()).getElementType() != element ||
      (op.getBias() && tensorType(op.getBias()).getElementType() != element))
    return check.fail("input, weight and bias element types differ");
  return inferConvLike(
      op.getInput(), op.getWeight(), op.getBias(), op.getGroup(),
      convWindow(op.getAutoPad(), op.getKernelShape(), op.getStrides(),
                 op.getDilations(), op.getPads()),
      getElementTypeOrSelf(op.getType()), types, check);
}

SHAPE_FUNCTION_IS_VERIFIER(ConvOp, inferConv)

static LogicalResult inferConvInteger(ConvIntegerOp op,
                                      SmallVectorImpl<Type> &types,
                                      const Check &check) {
  auto weight = tensorType(op.getWeight());
  if (failed(checkZeroPoint(op.getInputZeroPoint(),
                            tensorType(op.getInput()).getElementType(),
                            "input_zero_point", check)) ||
      failed(checkZeroPoint(op.getWeightZeroPoint(), weight.getElementType(),
                            "weight_zero_point", check, dimOf(weight, 0))))
    return failure();
  return inferConvLike(op.getInput(), op.getWeight(), Value(), op.getGroup(),
                       convWindow(op.getAutoPad(), op.getKernelShape(),
                                  op.getStrides(), op.getDilations(),
                                  op.getPads()),
                       getElementTypeOrSelf(op.getType()), types, check);
}

SHAPE_FUNCTION_IS_VERIFIER(ConvIntegerOp, inferConvInteger)

static LogicalResult inferQLinearConv(QLinearConvOp op,
                                      SmallVectorImpl<Type> &types,
                                      const Check &check) {
  auto weight = tensorType(op.getWeight());
  Type outElement = getElementTypeOrSelf(op.getType());
  if (!isScalarLike(op.getInputScale()) || !isScalarLike(op.getOutputScale()))
    return check.fail("input_scale and output_scale must be scalars");
  if (!isScalarLike(op.getWeightScale()) &&
      failed(checkVector(op.getWeightScale(), dimOf(weight, 0), "weight_scale",
                         check)))
    return failure();
  if (failed(checkZeroPoint(op.getInputZeroPoint(),
                            tensorType(op.getInput()).getElementType(),
                            "input_zero_point", check)) ||
      failed(checkZeroPoint(op.getWeightZeroPoint(), weight.getElementType(),
                            "weight_zero_point", check, dimOf(weight, 0))) ||
      failed(checkZeroPoint(op.getOutputZeroPoint(), outElement,
                            "output_zero_point", check)))
    return failure();
  return inferConvLike(
      op.getInput(), op.getWeight(), op.getBias(), op.getGroup(),
      convWindow(op.getAutoPad(), op.getKernelShape(), op.getStrides(),
                 op.getDilations(), op.getPads()),
      outElement, types, check);
}

SHAPE_FUNCTION_IS_VERIFIER(QLinearConvOp, inferQLinearConv)

//===----------------------------------------------------------------------===//
// ConvTranspose
//===----------------------------------------------------------------------===//

/// Input (N, C, D...), weight (C, M/group, k...); see the op description.
static LogicalResult inferConvTranspose(ConvTransposeOp op,
                                        SmallVectorImpl<Type> &types,
                                        const Check &check) {
  auto input = tensorType(op.getInput()), weight = tensorType(op.getWeight());
  Type element = input.getElementType();
  if (weight.getElementType() != element ||
      (op.getBias() && tensorType(op.getBias()).getElementType() != element))
    return check.fail("input, weight and bias element types differ");
  int64_t group = op.getGroup();
  if (group < 1)
    return check.fail("group must be positive, got ", group);
  Window w = convWindow(op.getAutoPad(), op.getKernelShape(), op.getStrides(),
                        op.getDilations(), op.getPads());
  int64_t rank = input.hasRank()    ? input.getRank()
                 : weight.hasRank() ? weight.getRank()
                                    : -1;
  int64_t spatial = rank < 0 ? -1 : rank - 2;
  if (rank >= 0 && spatial < 1)
    return check.fail("input must have rank >= 3, got rank ", rank);
  if (input.hasRank() && weight.hasRank() && weight.getRank() != rank)
    return check.fail("weight rank ", weight.getRank(),
                      " differs from input rank ", rank);
  if (failed(checkWindowAttrs(w, spatial, check)))
    return failure();
  for (auto [attr, name] : {std::pair(op.getOutputPadding(), "output_padding"),
                            std::pair(op.getOutputShape(), "output_shape")}) {
    if (!attr)
      continue;
    if (spatial >= 0 && int64_t(attr->size()) != spatial)
      return check.fail(name, " has ", attr->size(), " entries, expected ",
                        spatial, " for ", spatial, " spatial axes");
    for (int64_t v : *attr)
      if (v < 0)
        return check.fail(name, " entries must be >= 0, got ", v);
  }
  if (!dimsCompatible(dimOf(input, 1), dimOf(weight, 0)))
    return check.fail("input has ", dimOf(input, 1),
                      " channels but the weight ", weight, " expects ",
                      dimOf(weight, 0));
  int64_t channels = dimOf(weight, 0);
  if (!ShapedType::isDynamic(channels) && channels % group != 0)
    return check.fail("input channels ", channels,
                      " are not divisible by group ", group);
  int64_t perGroup = dimOf(weight, 1);
  int64_t outChannels =
      ShapedType::isDynamic(perGroup) ? kDynamic : perGroup * group;
  if (op.getBias() &&
      failed(checkVector(op.getBias(), outChannels, "bias", check)))
    return failure();
  if (rank < 0) {
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  SmallVector<int64_t> strides = attrOr(w.strides, spatial, 1);
  SmallVector<int64_t> dilations = attrOr(w.dilations, spatial, 1);
  SmallVector<int64_t> pads = attrOr(w.pads, 2 * spatial, 0);
  SmallVector<int64_t> outputPadding =
      attrOr(op.getOutputPadding(), spatial, 0);
  SmallVector<int64_t> shape = {dimOf(input, 0), outChannels};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = dimOf(input, i + 2);
    int64_t kernel = w.kernelShape ? (*w.kernelShape)[i] : dimOf(weight, i + 2);
    if (w.kernelShape && !dimsCompatible(kernel, dimOf(weight, i + 2)))
      return check.fail("kernel_shape entry ", kernel,
                        " differs from the weight's spatial size ",
                        dimOf(weight, i + 2), " along axis ", i);
    if (op.getOutputShape()) {
      int64_t out = (*op.getOutputShape())[i];
      if (!ShapedType::isDynamic(in) && out < in)
        return check.fail("output_shape entry ", out,
                          " is smaller than the input size ", in,
                          " along spatial axis ", i);
      shape.push_back(out);
      continue;
    }
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel)) {
      shape.push_back(kDynamic);
      continue;
    }
    int64_t effective = dilations[i] * (kernel - 1) + 1;
    int64_t padTotal = pads[i] + pads[i + spatial];
    // ONNX pads SAME_* transposed convolutions by (effective - stride).
    if (w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER")
      padTotal = std::max<int64_t>(0, effective - strides[i]);
    else if (w.autoPad == "VALID")
      padTotal = 0;
    int64_t out =
        strides[i] * (in - 1) + outputPadding[i] + effective - padTotal;
    if (out < 1)
      return check.fail("the output would be empty along spatial axis ", i,
                        " (pads exceed the transposed window)");
    shape.push_back(out);
  }
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(ConvTransposeOp, inferConvTranspose)

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Shape of a windowed pooling op: (N, C, D...) -> (N, C, D_out...). Pushes
/// one type per result (MaxPool's indices have the output's shape, i64).
static LogicalResult inferPool(Operation *op, const Window &w,
                               SmallVectorImpl<Type> &types,
                               const Check &check) {
  auto input = tensorType(op->getOperand(0));
  int64_t spatial = w.kernelShape->size();
  if (spatial < 1)
    return check.fail("kernel_shape must not be empty");
  if (input.hasRank() && input.getRank() != spatial + 2)
    return check.fail("input rank ", input.getRank(),
                      " does not match kernel_shape of ", spatial,
                      " spatial axes (rank ", spatial + 2, " expected)");
  if (failed(checkWindowAttrs(w, spatial, check)))
    return failure();
  std::optional<SmallVector<int64_t>> shape;
  if (input.hasRank()) {
    auto sizes = windowOutputSizes(input.getShape().drop_front(2),
                                   *w.kernelShape, w, check);
    if (failed(sizes))
      return failure();
    shape = SmallVector<int64_t>{input.getDimSize(0), input.getDimSize(1)};
    shape->append(*sizes);
  }
  auto shapeRef = shape ? std::optional<ArrayRef<int64_t>>(*shape)
                        : std::optional<ArrayRef<int64_t>>();
  types.push_back(withShape(input, shapeRef));
  if (op->getNumResults() > 1)
    types.push_back(withShape(op->getResult(1).getType(), shapeRef));
  return success();
}

template <typename OpTy> static Window poolWindow(OpTy op) {
  Window w = convWindow(op.getAutoPad(), op.getKernelShape(), op.getStrides(),
                        op.getDilations(), op.getPads());
  w.ceilMode = op.getCeilMode() != 0;
  return w;
}

/// Checks shared by the pooling ops before their shape inference.
template <typename OpTy>
static LogicalResult inferPoolOp(OpTy op, SmallVectorImpl<Type> &types,
                                 const Check &check) {
  if (failed(checkFlag(op.getCeilMode(), "ceil_mode", check)))
    return failure();
  if (getElementTypeOrSelf(op->getResult(0).getType()) !=
      tensorType(op->getOperand(0)).getElementType())
    return check.fail("result element type differs from the input's");
  return inferPool(op, poolWindow(op), types, check);
}

LogicalResult MaxPoolOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferPoolOp(*this, types, Check(*this, false));
}

LogicalResult MaxPoolOp::verify() {
  Check check(*this, true);
  if (failed(checkFlag(getStorageOrder(), "storage_order", check)))
    return failure();
  SmallVector<Type> types;
  return inferPoolOp(*this, types, check);
}

LogicalResult AveragePoolOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferPoolOp(*this, types, Check(*this, false));
}

LogicalResult AveragePoolOp::verify() {
  Check check(*this, true);
  if (failed(checkFlag(getCountIncludePad(), "count_include_pad", check)))
    return failure();
  SmallVector<Type> types;
  return inferPoolOp(*this, types, check);
}

LogicalResult LpPoolOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferPoolOp(*this, types, Check(*this, false));
}

LogicalResult LpPoolOp::verify() {
  Check check(*this, true);
  // I64Attr getters return the value as unsigned; compare it signed.
  int64_t p = getP();
  if (p < 1)
    return check.fail("p must be >= 1, got ", p);
  SmallVector<Type> types;
  return inferPoolOp(*this, types, check);
}

/// (N, C, D...) -> (N, C, 1...).
static LogicalResult inferGlobalPool(Operation *op,
                                     SmallVectorImpl<Type> &types,
                                     const Check &check) {
  auto input = tensorType(op->getOperand(0));
  if (!input.hasRank()) {
    types.push_back(input);
    return success();
  }
  if (input.getRank() < 2)
    return check.fail("input must have rank >= 2 (N, C, ...), got ", input);
  SmallVector<int64_t> shape(input.getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  types.push_back(withShape(input, ArrayRef<int64_t>(shape)));
  return success();
}

LogicalResult
GlobalAveragePoolOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferGlobalPool(*this, types, Check(*this, false));
}

LogicalResult GlobalAveragePoolOp::verify() {
  SmallVector<Type> types;
  return inferGlobalPool(*this, types, Check(*this, true));
}

SHAPE_FUNCTION_IS_VERIFIER(GlobalMaxPoolOp, inferGlobalPool)

LogicalResult GlobalLpPoolOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferGlobalPool(*this, types, Check(*this, false));
}

LogicalResult GlobalLpPoolOp::verify() {
  Check check(*this, true);
  // I64Attr getters return the value as unsigned; compare it signed.
  int64_t p = getP();
  if (p < 1)
    return check.fail("p must be >= 1, got ", p);
  SmallVector<Type> types;
  return inferGlobalPool(*this, types, check);
}

static LogicalResult inferMaxUnpool(MaxUnpoolOp op,
                                    SmallVectorImpl<Type> &types,
                                    const Check &check) {
  auto input = tensorType(op.getInput());
  ArrayRef<int64_t> kernel = op.getKernelShape();
  int64_t spatial = kernel.size();
  Window w =
      convWindow("NOTSET", kernel, op.getStrides(), std::nullopt, op.getPads());
  if (spatial < 1)
    return check.fail("kernel_shape must not be empty");
  if (input.hasRank() && input.getRank() != spatial + 2)
    return check.fail("input rank ", input.getRank(),
                      " does not match kernel_shape of ", spatial,
                      " spatial axes (rank ", spatial + 2, " expected)");
  if (failed(checkWindowAttrs(w, spatial, check)))
    return failure();
  auto indices = tensorType(op.getIndices());
  if (input.hasRank() && indices.hasRank() &&
      failed(verifyCompatibleShape(input, indices)))
    return check.fail("indices ", indices, " must have the input's shape ",
                      input);
  if (Value outputShape = op.getOutputShape()) {
    if (failed(checkVector(outputShape, spatial + 2, "output_shape", check)))
      return failure();
    SmallVector<int64_t> values;
    if (succeeded(getConstantIntValues(outputShape, values))) {
      // checkVector has checked the count: constants have static shapes.
      for (int64_t v : values)
        if (v < 1)
          return check.fail("output_shape entries must be positive, got ", v);
      types.push_back(withShape(input, ArrayRef<int64_t>(values)));
    } else {
      types.push_back(withShape(input, ArrayRef<int64_t>(SmallVector<int64_t>(
                                           spatial + 2, kDynamic))));
    }
    return success();
  }
  if (!input.hasRank()) {
    types.push_back(input);
    return success();
  }
  SmallVector<int64_t> strides = attrOr(op.getStrides(), spatial, 1);
  SmallVector<int64_t> pads = attrOr(op.getPads(), 2 * spatial, 0);
  SmallVector<int64_t> shape = {input.getDimSize(0), input.getDimSize(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.getDimSize(i + 2);
    if (ShapedType::isDynamic(in)) {
      shape.push_back(kDynamic);
      continue;
    }
    int64_t out =
        (in - 1) * strides[i] + kernel[i] - pads[i] - pads[i + spatial];
    if (out < 1)
      return check.fail("the output would be empty along spatial axis ", i);
    shape.push_back(out);
  }
  types.push_back(withShape(input, ArrayRef<int64_t>(shape)));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(MaxUnpoolOp, inferMaxUnpool)

/// Region pooling: input (N, C, H, W), rois (R, roiSize) -> (R, C, h, w).
static LogicalResult inferRoiPool(Operation *op, int64_t roiSize,
                                  int64_t height, int64_t width,
                                  SmallVectorImpl<Type> &types,
                                  const Check &check) {
  auto input = tensorType(op->getOperand(0));
  auto rois = tensorType(op->getOperand(1));
  if (height < 1 || width < 1)
    return check.fail("output size must be positive, got ", height, " x ",
                      width);
  if (input.hasRank() && input.getRank() != 4)
    return check.fail("input must be 4-D (N, C, H, W), got ", input);
  if (rois.getElementType() != input.getElementType())
    return check.fail("rois element type differs from the input's");
  if (rois.hasRank() &&
      (rois.getRank() != 2 || !dimsCompatible(rois.getDimSize(1), roiSize)))
    return check.fail("rois must be (num_rois, ", roiSize, "), got ", rois);
  types.push_back(
      RankedTensorType::get({dimOf(rois, 0), dimOf(input, 1), height, width},
                            input.getElementType()));
  return success();
}

static LogicalResult inferMaxRoiPool(MaxRoiPoolOp op,
                                     SmallVectorImpl<Type> &types,
                                     const Check &check) {
  if (op.getPooledShape().size() != 2)
    return check.fail("pooled_shape must have 2 entries, got ",
                      op.getPooledShape().size());
  return inferRoiPool(op, 5, op.getPooledShape()[0], op.getPooledShape()[1],
                      types, check);
}

SHAPE_FUNCTION_IS_VERIFIER(MaxRoiPoolOp, inferMaxRoiPool)

static LogicalResult inferRoiAlign(RoiAlignOp op, SmallVectorImpl<Type> &types,
                                   const Check &check) {
  if (failed(checkOneOf(op.getMode(), {"avg", "max"}, "mode", check)) ||
      failed(checkOneOf(op.getCoordinateTransformationMode(),
                        {"half_pixel", "output_half_pixel"},
                        "coordinate_transformation_mode", check)))
    return failure();
  if (int64_t(op.getSamplingRatio()) < 0)
    return check.fail("sampling_ratio must be >= 0, got ",
                      int64_t(op.getSamplingRatio()));
  if (failed(checkVector(op.getBatchIndices(),
                         dimOf(tensorType(op.getRois()), 0), "batch_indices",
                         check)))
    return failure();
  return inferRoiPool(op, 4, op.getOutputHeight(), op.getOutputWidth(), types,
                      check);
}

SHAPE_FUNCTION_IS_VERIFIER(RoiAlignOp, inferRoiAlign)

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

LogicalResult LRNOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(getInput().getType());
  return success();
}

LogicalResult LRNOp::verify() {
  int64_t size = getSize();
  if (size < 1)
    return emitOpError("size must be >= 1, got ") << size;
  auto input = tensorType(getInput());
  if (input.hasRank() && input.getRank() < 2)
    return emitOpError("input must have rank >= 2 (N, C, ...), got ") << input;
  return success();
}

/// Checks that each of `params` is 1-D with one entry per channel of an
/// (N, C, ...) input.
static LogicalResult
checkPerChannel(TensorType input, ArrayRef<std::pair<Value, StringRef>> params,
                const Check &check) {
  if (input.hasRank() && input.getRank() < 2)
    return check.fail("input must have rank >= 2 (N, C, ...), got ", input);
  for (auto [value, name] : params)
    if (failed(checkVector(value, dimOf(input, 1), name, check)))
      return failure();
  return success();
}

static LogicalResult inferBatchNorm(BatchNormOp op,
                                    SmallVectorImpl<Type> &types,
                                    const Check &check) {
  auto input = tensorType(op.getInput());
  if (failed(checkFlag(op.getTrainingMode(), "training_mode", check)))
    return failure();
  if (tensorType(op.getScale()).getElementType() !=
      tensorType(op.getBias()).getElementType())
    return check.fail("scale and bias element types differ");
  Type statsElement = tensorType(op.getInputMean()).getElementType();
  if (tensorType(op.getInputVar()).getElementType() != statsElement)
    return check.fail("input_mean and input_var element types differ");
  if (failed(checkPerChannel(input,
                             {{op.getScale(), "scale"},
                              {op.getBias(), "bias"},
                              {op.getInputMean(), "input_mean"},
                              {op.getInputVar(), "input_var"}},
                             check)))
    return failure();
  types.push_back(input);
  auto stats = RankedTensorType::get({dimOf(input, 1)}, statsElement);
  types.push_back(stats);
  types.push_back(stats);
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(BatchNormOp, inferBatchNorm)

static LogicalResult inferInstanceNorm(InstanceNormOp op,
                                       SmallVectorImpl<Type> &types,
                                       const Check &check) {
  auto input = tensorType(op.getInput());
  if (failed(checkPerChannel(
          input, {{op.getScale(), "scale"}, {op.getBias(), "bias"}}, check)))
    return failure();
  types.push_back(input);
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(InstanceNormOp, inferInstanceNorm)

static LogicalResult inferGroupNorm(GroupNormOp op,
                                    SmallVectorImpl<Type> &types,
                                    const Check &check) {
  auto input = tensorType(op.getInput());
  int64_t groups = op.getNumGroups();
  if (groups < 1)
    return check.fail("num_groups must be >= 1, got ", groups);
  if (input.hasRank() && input.getRank() < 2)
    return check.fail("input must have rank >= 2 (N, C, ...), got ", input);
  int64_t channels = dimOf(input, 1);
  if (!ShapedType::isDynamic(channels) && channels % groups != 0)
    return check.fail("channels ", channels,
                      " are not divisible by num_groups ", groups);
  for (auto [value, name] :
       {std::pair(op.getScale(), "scale"), std::pair(op.getBias(), "bias")}) {
    auto type = tensorType(value);
    if (!type.hasRank())
      continue;
    if (type.getRank() != 1 || (!dimsCompatible(type.getDimSize(0), groups) &&
                                !dimsCompatible(type.getDimSize(0), channels)))
      return check.fail(name,
                        " must be 1-D with num_groups or channels entries, "
                        "got ",
                        type);
  }
  types.push_back(input);
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(GroupNormOp, inferGroupNorm)

LogicalResult
MeanVarianceNormOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(getInput().getType());
  return success();
}

LogicalResult MeanVarianceNormOp::verify() {
  auto input = tensorType(getInput());
  if (!input.hasRank())
    return success();
  SmallVector<int64_t> seen;
  for (int64_t axis : getAxes()) {
    auto normalized = normalizeAxis(axis, input.getRank());
    if (!normalized)
      return emitOpError("axis ")
             << axis << " is out of range for rank " << input.getRank();
    if (llvm::is_contained(seen, *normalized))
      return emitOpError("axis ") << axis << " is repeated";
    seen.push_back(*normalized);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RNN, GRU, LSTM
//===----------------------------------------------------------------------===//

/// Shape inference of the recurrent ops; `gates` is 1 (RNN), 3 (GRU) or 4
/// (LSTM) and `activationsPerDirection` the number of activation functions
/// one direction uses. `initialC` and `peepholes` are LSTM's.
template <typename OpTy>
static LogicalResult
inferRecurrent(OpTy op, int64_t gates, int64_t activationsPerDirection,
               Value initialC, Value peepholes, SmallVectorImpl<Type> &types,
               const Check &check) {
  StringRef direction = op.getDirection();
  if (failed(checkOneOf(direction, {"forward", "reverse", "bidirectional"},
                        "direction", check)) ||
      failed(checkFlag(op.getLayout(), "layout", check)))
    return failure();
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t hidden = op.getHiddenSize();
  if (hidden < 1)
    return check.fail("hidden_size must be >= 1, got ", hidden);
  if (auto clip = op.getClip(); clip && !(clip->convertToDouble() > 0))
    return check.fail("clip must be positive");
  if (std::optional<ArrayAttr> activations = op.getActivations()) {
    if (int64_t(activations->size()) != activationsPerDirection * dirs)
      return check.fail("expected ", activationsPerDirection * dirs,
                        " activations (", activationsPerDirection,
                        " per direction), got ", activations->size());
    for (Attribute a : *activations)
      if (failed(checkOneOf(cast<StringAttr>(a).getValue(),
                            {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu",
                             "ThresholdedRelu", "ScaledTanh", "HardSigmoid",
                             "Elu", "Softsign", "Softplus"},
                            "activation", check)))
        return failure();
  }
  auto input = tensorType(op.getInput());
  Type element = input.getElementType();
  if (input.hasRank() && input.getRank() != 3)
    return check.fail("input must be 3-D, got ", input);
  bool batchFirst = op.getLayout() == 1;
  int64_t seq = dimOf(input, batchFirst ? 1 : 0);
  int64_t batch = dimOf(input, batchFirst ? 0 : 1);
  int64_t inputSize = dimOf(input, 2);
  SmallVector<int64_t> stateShape =
      batchFirst ? SmallVector<int64_t>{batch, dirs, hidden}
                 : SmallVector<int64_t>{dirs, batch, hidden};
  auto expect = [&](Value value, ArrayRef<int64_t> shape,
                    StringRef name) -> LogicalResult {
    if (!value)
      return success();
    auto type = tensorType(value);
    if (type.getElementType() != element)
      return check.fail(name, " element type ", type.getElementType(),
                        " differs from the input's ", element);
    if (type.hasRank() &&
        failed(verifyCompatibleShape(type.getShape(), shape))) {
      std::string expected;
      for (int64_t d : shape)
        expected += (expected.empty() ? "" : "x") +
                    (ShapedType::isDynamic(d) ? "?" : std::to_string(d));
      return check.fail(name, " must have shape ", expected, ", got ", type);
    }
    return success();
  };
  if (failed(expect(op.getWeight(), {dirs, gates * hidden, inputSize},
                    "weight")) ||
      failed(expect(op.getRecurrence(), {dirs, gates * hidden, hidden},
                    "recurrence")) ||
      failed(expect(op.getBias(), {dirs, 2 * gates * hidden}, "bias")) ||
      failed(expect(op.getInitialH(), stateShape, "initial_h")) ||
      failed(expect(initialC, stateShape, "initial_c")) ||
      failed(expect(peepholes, {dirs, 3 * hidden}, "peepholes")))
    return failure();
  if (Value lens = op.getSequenceLens())
    if (failed(checkVector(lens, batch, "sequence_lens", check)))
      return failure();
  SmallVector<int64_t> yShape =
      batchFirst ? SmallVector<int64_t>{batch, seq, dirs, hidden}
                 : SmallVector<int64_t>{seq, dirs, batch, hidden};
  types.push_back(RankedTensorType::get(yShape, element));
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    types.push_back(RankedTensorType::get(stateShape, element));
  return success();
}

LogicalResult RNNOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferRecurrent(*this, 1, 1, Value(), Value(), types,
                        Check(*this, false));
}

LogicalResult RNNOp::verify() {
  SmallVector<Type> types;
  return inferRecurrent(*this, 1, 1, Value(), Value(), types,
                        Check(*this, true));
}

LogicalResult GRUOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferRecurrent(*this, 3, 2, Value(), Value(), types,
                        Check(*this, false));
}

LogicalResult GRUOp::verify() {
  Check check(*this, true);
  if (failed(checkFlag(getLinearBeforeReset(), "linear_before_reset", check)))
    return failure();
  SmallVector<Type> types;
  return inferRecurrent(*this, 3, 2, Value(), Value(), types, check);
}

LogicalResult LSTMOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferRecurrent(*this, 4, 3, getInitialC(), getPeepholes(), types,
                        Check(*this, false));
}

LogicalResult LSTMOp::verify() {
  Check check(*this, true);
  if (failed(checkFlag(getInputForget(), "input_forget", check)))
    return failure();
  SmallVector<Type> types;
  return inferRecurrent(*this, 4, 3, getInitialC(), getPeepholes(), types,
                        check);
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

namespace {
/// One term of an einsum equation: its letters in order and where the
/// ellipsis ("...") sits among them (-1 when absent).
struct EinsumTerm {
  SmallVector<char> labels;
  int64_t ellipsis = -1;
};
} // namespace

static FailureOr<EinsumTerm> parseEinsumTerm(StringRef text,
                                             const Check &check) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '.') {
      if (!text.substr(i).starts_with("...") || term.ellipsis >= 0)
        return check.fail("malformed ellipsis in einsum term \"", text, "\"");
      term.ellipsis = term.labels.size();
      i += 3;
      continue;
    }
    if (!llvm::isAlpha(text[i]))
      return check.fail("invalid character '", text.substr(i, 1),
                        "' in einsum term \"", text, "\"");
    term.labels.push_back(text[i++]);
  }
  return term;
}

/// Parses `equation` into its input terms and output term. Without "->" the
/// output is implicit: the ellipsis (if any input has one) and then the
/// letters used exactly once, in alphabetical order.
static LogicalResult parseEinsum(StringRef equation,
                                 SmallVectorImpl<EinsumTerm> &inputs,
                                 EinsumTerm &output, const Check &check) {
  std::string compact;
  for (char c : equation)
    if (!llvm::isSpace(c))
      compact.push_back(c);
  StringRef eq(compact);
  size_t arrow = eq.find("->");
  StringRef lhs = eq.substr(0, arrow);
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  bool anyEllipsis = false;
  for (StringRef text : terms) {
    auto term = parseEinsumTerm(text, check);
    if (failed(term))
      return failure();
    anyEllipsis |= term->ellipsis >= 0;
    inputs.push_back(std::move(*term));
  }
  if (arrow == StringRef::npos) {
    std::map<char, int> counts;
    for (const EinsumTerm &term : inputs)
      for (char c : term.labels)
        ++counts[c];
    output.ellipsis = anyEllipsis ? 0 : -1;
    for (auto [c, count] : counts)
      if (count == 1)
        output.labels.push_back(c);
    return success();
  }
  auto term = parseEinsumTerm(eq.substr(arrow + 2), check);
  if (failed(term))
    return failure();
  output = std::move(*term);
  if (output.ellipsis >= 0 && !anyEllipsis)
    return check.fail("the einsum output has an ellipsis but no input does");
  for (auto [i, label] : llvm::enumerate(output.labels)) {
    char c = label;
    if (llvm::is_contained(ArrayRef(output.labels).take_front(i), c))
      return check.fail("einsum output letter '", StringRef(&c, 1),
                        "' is repeated");
    if (llvm::none_of(inputs, [&](const EinsumTerm &t) {
          return llvm::is_contained(t.labels, c);
        }))
      return check.fail("einsum output letter '", StringRef(&c, 1),
                        "' does not appear in any input");
  }
  return success();
}

static LogicalResult inferEinsum(EinsumOp op, SmallVectorImpl<Type> &types,
                                 const Check &check) {
  SmallVector<EinsumTerm> terms;
  EinsumTerm output;
  if (failed(parseEinsum(op.getEquation(), terms, output, check)))
    return failure();
  if (terms.size() != op.getInputs().size())
    return check.fail("equation \"", op.getEquation(), "\" has ", terms.size(),
                      " input terms but the op has ", op.getInputs().size(),
                      " operands");
  Type element = getElementTypeOrSelf(op.getType());
  std::map<char, int64_t> sizes;
  SmallVector<int64_t> broadcast;
  bool anyUnranked = false;
  for (auto [index, term, value] : llvm::enumerate(terms, op.getInputs())) {
    auto type = tensorType(value);
    if (type.getElementType() != element)
      return check.fail("operand #", index, " element type ",
                        type.getElementType(), " differs from the result's ",
                        element);
    if (!type.hasRank()) {
      anyUnranked = true;
      continue;
    }
    int64_t letters = term.labels.size(), rank = type.getRank();
    if (term.ellipsis < 0 ? rank != letters : rank < letters)
      return check.fail("operand #", index, " has rank ", rank,
                        " but its einsum term has ", letters, " letters",
                        term.ellipsis < 0 ? "" : " and an ellipsis");
    int64_t ellipsisRank = rank - letters;
    for (auto [j, c] : llvm::enumerate(term.labels)) {
      int64_t dim = type.getDimSize(
          term.ellipsis >= 0 && int64_t(j) >= term.ellipsis ? j + ellipsisRank
                                                            : j);
      auto [it, inserted] = sizes.try_emplace(c, dim);
      if (inserted || ShapedType::isDynamic(dim))
        continue;
      if (!ShapedType::isDynamic(it->second) && it->second != dim)
        return check.fail("einsum letter '", StringRef(&c, 1), "' has sizes ",
                          it->second, " and ", dim);
      it->second = dim;
    }
    if (term.ellipsis >= 0) {
      auto next = broadcastShapes(
          broadcast, type.getShape().slice(term.ellipsis, ellipsisRank));
      if (!next)
        return check.fail("the ellipsis dimensions of operand #", index,
                          " do not broadcast with the other operands'");
      broadcast = std::move(*next);
    }
  }
  if (anyUnranked && output.ellipsis >= 0) {
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  SmallVector<int64_t> shape;
  for (auto [j, c] : llvm::enumerate(output.labels)) {
    if (int64_t(j) == output.ellipsis)
      shape.append(broadcast);
    auto it = sizes.find(c);
    shape.push_back(it == sizes.end() ? kDynamic : it->second);
  }
  if (output.ellipsis == int64_t(output.labels.size()))
    shape.append(broadcast);
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(EinsumOp, inferEinsum)

//===----------------------------------------------------------------------===//
// Det
//===----------------------------------------------------------------------===//

static LogicalResult inferDet(DetOp op, SmallVectorImpl<Type> &types,
                              const Check &check) {
  auto input = tensorType(op.getInput());
  if (!input.hasRank()) {
    types.push_back(input);
    return success();
  }
  int64_t rank = input.getRank();
  if (rank < 2)
    return check.fail("input must have rank >= 2, got ", input);
  if (!dimsCompatible(input.getDimSize(rank - 1), input.getDimSize(rank - 2)))
    return check.fail("input matrices must be square, got ", input);
  types.push_back(withShape(input, input.getShape().drop_back(2)));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(DetOp, inferDet)

//===----------------------------------------------------------------------===//
// MatMulInteger, QLinearMatMul
//===----------------------------------------------------------------------===//

/// numpy matmul of two operands, with result element type `element`.
static LogicalResult inferMatMulLike(Value lhsValue, Value rhsValue,
                                     Type element, SmallVectorImpl<Type> &types,
                                     const Check &check) {
  auto lhs = tensorType(lhsValue), rhs = tensorType(rhsValue);
  if (!lhs.hasRank() || !rhs.hasRank()) {
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  auto shape = matmulShape(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return check.fail("operand shapes ", lhs, " and ", rhs,
                      " are not matmul-compatible");
  types.push_back(RankedTensorType::get(*shape, element));
  return success();
}

/// The number of rows of a matmul operand (per-row zero points) and of
/// columns of the right one (per-column zero points).
static int64_t rowsOf(Value value) {
  auto type = tensorType(value);
  return type.hasRank() && type.getRank() >= 2
             ? type.getDimSize(type.getRank() - 2)
             : kDynamic;
}
static int64_t colsOf(Value value) {
  auto type = tensorType(value);
  return type.hasRank() && type.getRank() >= 2
             ? type.getDimSize(type.getRank() - 1)
             : kDynamic;
}

static LogicalResult inferMatMulInteger(MatMulIntegerOp op,
                                        SmallVectorImpl<Type> &types,
                                        const Check &check) {
  if (failed(checkZeroPoint(op.getLhsZeroPoint(),
                            tensorType(op.getLhs()).getElementType(),
                            "lhs_zero_point", check, rowsOf(op.getLhs()))) ||
      failed(checkZeroPoint(op.getRhsZeroPoint(),
                            tensorType(op.getRhs()).getElementType(),
                            "rhs_zero_point", check, colsOf(op.getRhs()))))
    return failure();
  return inferMatMulLike(op.getLhs(), op.getRhs(),
                         getElementTypeOrSelf(op.getType()), types, check);
}

SHAPE_FUNCTION_IS_VERIFIER(MatMulIntegerOp, inferMatMulInteger)

static LogicalResult inferQLinearMatMul(QLinearMatMulOp op,
                                        SmallVectorImpl<Type> &types,
                                        const Check &check) {
  Type outElement = getElementTypeOrSelf(op.getType());
  if (failed(checkZeroPoint(op.getLhsZeroPoint(),
                            tensorType(op.getLhs()).getElementType(),
                            "lhs_zero_point", check, rowsOf(op.getLhs()))) ||
      failed(checkZeroPoint(op.getRhsZeroPoint(),
                            tensorType(op.getRhs()).getElementType(),
                            "rhs_zero_point", check, colsOf(op.getRhs()))) ||
      failed(checkZeroPoint(op.getOutputZeroPoint(), outElement,
                            "output_zero_point", check)))
    return failure();
  if (!isScalarLike(op.getOutputScale()))
    return check.fail("output_scale must be a scalar");
  if (!isScalarLike(op.getLhsScale()) &&
      failed(checkVector(op.getLhsScale(), rowsOf(op.getLhs()), "lhs_scale",
                         check)))
    return failure();
  if (!isScalarLike(op.getRhsScale()) &&
      failed(checkVector(op.getRhsScale(), colsOf(op.getRhs()), "rhs_scale",
                         check)))
    return failure();
  return inferMatMulLike(op.getLhs(), op.getRhs(), outElement, types, check);
}

SHAPE_FUNCTION_IS_VERIFIER(QLinearMatMulOp, inferQLinearMatMul)

//===----------------------------------------------------------------------===//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
//===----------------------------------------------------------------------===//

/// Scale and zero point are scalars (per tensor) or 1-D along `axis` (per
/// axis); the zero point has the scale's shape.
static LogicalResult checkQuantParams(Value inputValue, Value scaleValue,
                                      Value zeroPoint, int64_t axis,
                                      const Check &check) {
  auto input = tensorType(inputValue), scale = tensorType(scaleValue);
  if (scale.hasRank() && scale.getRank() > 1)
    return check.fail("scale must be a scalar or 1-D, got ", scale);
  if (scale.hasRank() && scale.getRank() == 1 && input.hasRank()) {
    auto normalized = normalizeAxis(axis, input.getRank());
    if (!normalized)
      return check.fail("axis ", axis, " is out of range for rank ",
                        input.getRank());
    if (!dimsCompatible(scale.getDimSize(0), 1) &&
        !dimsCompatible(scale.getDimSize(0), input.getDimSize(*normalized)))
      return check.fail("scale has ", scale.getDimSize(0),
                        " entries but the input has ",
                        input.getDimSize(*normalized), " along axis ", axis);
  }
  if (zeroPoint) {
    auto zp = tensorType(zeroPoint);
    if (zp.hasRank() && scale.hasRank() &&
        failed(verifyCompatibleShape(zp, scale)))
      return check.fail("zero_point ", zp, " must have the scale's shape ",
                        scale);
  }
  return success();
}

static LogicalResult inferQuantizeLinear(QuantizeLinearOp op,
                                         SmallVectorImpl<Type> &types,
                                         const Check &check) {
  if (failed(checkQuantParams(op.getInput(), op.getScale(), op.getZeroPoint(),
                              op.getAxis(), check)))
    return failure();
  Type element =
      op.getZeroPoint()
          ? tensorType(op.getZeroPoint()).getElementType()
          : IntegerType::get(op.getContext(), 8, IntegerType::Unsigned);
  if (getElementTypeOrSelf(op.getType()) != element)
    return check.fail("result element type must be ", element,
                      " (the zero point's, or ui8 without one)");
  auto input = tensorType(op.getInput());
  types.push_back(
      input.hasRank()
          ? TensorType(RankedTensorType::get(input.getShape(), element))
          : TensorType(UnrankedTensorType::get(element)));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(QuantizeLinearOp, inferQuantizeLinear)

static LogicalResult inferDequantizeLinear(DequantizeLinearOp op,
                                           SmallVectorImpl<Type> &types,
                                           const Check &check) {
  auto input = tensorType(op.getInput());
  if (failed(checkQuantParams(op.getInput(), op.getScale(), op.getZeroPoint(),
                              op.getAxis(), check)))
    return failure();
  if (op.getZeroPoint() &&
      tensorType(op.getZeroPoint()).getElementType() != input.getElementType())
    return check.fail("zero_point element type differs from the input's ",
                      input.getElementType());
  Type element = getElementTypeOrSelf(op.getType());
  types.push_back(
      input.hasRank()
          ? TensorType(RankedTensorType::get(input.getShape(), element))
          : TensorType(UnrankedTensorType::get(element)));
  return success();
}

LogicalResult
DequantizeLinearOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferDequantizeLinear(*this, types, Check(*this, false));
}

LogicalResult DequantizeLinearOp::verify() {
  SmallVector<Type> types;
  return inferDequantizeLinear(*this, types, Check(*this, true));
}

LogicalResult
DynamicQuantizeLinearOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = tensorType(getInput());
  auto u8 = IntegerType::get(getContext(), 8, IntegerType::Unsigned);
  types.push_back(input.hasRank()
                      ? TensorType(RankedTensorType::get(input.getShape(), u8))
                      : TensorType(UnrankedTensorType::get(u8)));
  types.push_back(RankedTensorType::get({}, input.getElementType()));
  types.push_back(RankedTensorType::get({}, u8));
  return success();
}

// The ODS constraints fix the element types and the InferShapes interface
// checks the result shapes (scalar scale and zero point); no other property
// can be malformed.
LogicalResult DynamicQuantizeLinearOp::verify() { return success(); }

//===----------------------------------------------------------------------===//
// GridSample, NonMaxSuppression
//===----------------------------------------------------------------------===//

static LogicalResult inferGridSample(GridSampleOp op,
                                     SmallVectorImpl<Type> &types,
                                     const Check &check) {
  if (failed(checkFlag(op.getAlignCorners(), "align_corners", check)) ||
      failed(checkOneOf(op.getMode(),
                        {"bilinear", "nearest", "bicubic", "linear", "cubic"},
                        "mode", check)) ||
      failed(checkOneOf(op.getPaddingMode(), {"zeros", "border", "reflection"},
                        "padding_mode", check)))
    return failure();
  auto input = tensorType(op.getInput()), grid = tensorType(op.getGrid());
  if (!isa<FloatType>(grid.getElementType()))
    return check.fail("grid must hold floats, got ", grid);
  Type element = getElementTypeOrSelf(op.getType());
  if (element != input.getElementType())
    return check.fail("result element type differs from the input's");
  if (input.hasRank() && input.getRank() < 3)
    return check.fail("input must have rank >= 3 (N, C, D...), got ", input);
  if (!input.hasRank() || !grid.hasRank()) {
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  int64_t rank = input.getRank();
  if (grid.getRank() != rank ||
      !dimsCompatible(grid.getDimSize(rank - 1), rank - 2))
    return check.fail("grid must be (N, D_out..., ", rank - 2, ") for input ",
                      input, ", got ", grid);
  if (!dimsCompatible(input.getDimSize(0), grid.getDimSize(0)))
    return check.fail("input and grid batch sizes differ");
  int64_t batch = ShapedType::isDynamic(input.getDimSize(0))
                      ? grid.getDimSize(0)
                      : input.getDimSize(0);
  SmallVector<int64_t> shape = {batch, input.getDimSize(1)};
  shape.append(grid.getShape().begin() + 1, grid.getShape().end() - 1);
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(GridSampleOp, inferGridSample)

LogicalResult
NonMaxSuppressionOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  // One row per selected box: only the run time knows how many.
  types.push_back(RankedTensorType::get(
      {kDynamic, 3}, getSelectedIndices().getType().getElementType()));
  return success();
}

LogicalResult NonMaxSuppressionOp::verify() {
  Check check(*this, true);
  if (failed(checkFlag(getCenterPointBox(), "center_point_box", check)))
    return failure();
  auto boxes = tensorType(getBoxes()), scores = tensorType(getScores());
  if (boxes.hasRank() &&
      (boxes.getRank() != 3 || !dimsCompatible(boxes.getDimSize(2), 4)))
    return check.fail("boxes must be (batch, boxes, 4), got ", boxes);
  if (scores.hasRank() && scores.getRank() != 3)
    return check.fail("scores must be (batch, classes, boxes), got ", scores);
  if (!dimsCompatible(dimOf(boxes, 0), dimOf(scores, 0)) ||
      !dimsCompatible(dimOf(boxes, 1), dimOf(scores, 2)))
    return check.fail("boxes ", boxes, " and scores ", scores,
                      " disagree on the batch or box count");
  for (auto [value, name] :
       {std::pair(getMaxOutputBoxesPerClass(), "max_output_boxes_per_class"),
        std::pair(getIouThreshold(), "iou_threshold"),
        std::pair(getScoreThreshold(), "score_threshold")})
    if (value && !isScalarLike(value))
      return check.fail(name, " must be a scalar, got ", value.getType());
  return success();
}

//===----------------------------------------------------------------------===//
// DFT, STFT, MelWeightMatrix
//===----------------------------------------------------------------------===//

static LogicalResult inferDFT(DFTOp op, SmallVectorImpl<Type> &types,
                              const Check &check) {
  if (failed(checkFlag(op.getInverse(), "inverse", check)) ||
      failed(checkFlag(op.getOnesided(), "onesided", check)))
    return failure();
  if (op.getInverse() && op.getOnesided())
    return check.fail("inverse and onesided cannot both be set");
  auto input = tensorType(op.getInput());
  Type element = input.getElementType();
  if (getElementTypeOrSelf(op.getType()) != element)
    return check.fail("result element type differs from the input's");
  std::optional<int64_t> length;
  if (Value dftLength = op.getDftLength()) {
    if (!isScalarLike(dftLength))
      return check.fail("dft_length must be a scalar");
    length = constantScalar(dftLength);
    if (!length)
      length = kDynamic;
    else if (*length < 1)
      return check.fail("dft_length must be positive, got ", *length);
  }
  if (!input.hasRank()) {
    types.push_back(input);
    return success();
  }
  int64_t rank = input.getRank();
  if (rank < 2 || (!dimsCompatible(input.getDimSize(rank - 1), 1) &&
                   !dimsCompatible(input.getDimSize(rank - 1), 2)))
    return check.fail("input must be (batch, signal..., 1 or 2), got ", input);
  auto axis = normalizeAxis(op.getAxis(), rank);
  if (!axis || *axis == rank - 1)
    return check.fail("axis ", op.getAxis(),
                      " must name a signal axis of the rank-", rank, " input");
  SmallVector<int64_t> shape(input.getShape());
  int64_t n = length ? *length : shape[*axis];
  if (op.getOnesided() && !ShapedType::isDynamic(n))
    n = n / 2 + 1;
  shape[*axis] = n;
  shape.back() = 2;
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(DFTOp, inferDFT)

static LogicalResult inferSTFT(STFTOp op, SmallVectorImpl<Type> &types,
                               const Check &check) {
  if (failed(checkFlag(op.getOnesided(), "onesided", check)))
    return failure();
  auto signal = tensorType(op.getSignal());
  Type element = signal.getElementType();
  if (getElementTypeOrSelf(op.getType()) != element)
    return check.fail("result element type differs from the signal's");
  if (signal.hasRank() &&
      (signal.getRank() != 3 || (!dimsCompatible(signal.getDimSize(2), 1) &&
                                 !dimsCompatible(signal.getDimSize(2), 2))))
    return check.fail("signal must be (batch, length, 1 or 2), got ", signal);
  if (!isScalarLike(op.getFrameStep()))
    return check.fail("frame_step must be a scalar");
  std::optional<int64_t> step = constantScalar(op.getFrameStep());
  if (step && *step < 1)
    return check.fail("frame_step must be positive, got ", *step);
  int64_t frameLength = kDynamic;
  if (Value window = op.getWindow()) {
    if (tensorType(window).getElementType() != element)
      return check.fail("window element type differs from the signal's");
    if (failed(checkVector(window, kDynamic, "window", check)))
      return failure();
    frameLength = dimOf(tensorType(window), 0);
  }
  if (Value length = op.getFrameLength()) {
    if (!isScalarLike(length))
      return check.fail("frame_length must be a scalar");
    if (std::optional<int64_t> value = constantScalar(length)) {
      if (*value < 1)
        return check.fail("frame_length must be positive, got ", *value);
      if (!dimsCompatible(frameLength, *value))
        return check.fail("frame_length ", *value,
                          " differs from the window size ", frameLength);
      frameLength = *value;
    }
  }
  int64_t length = dimOf(signal, 1), frames = kDynamic;
  if (step && !ShapedType::isDynamic(length) &&
      !ShapedType::isDynamic(frameLength)) {
    if (frameLength > length)
      return check.fail("frame length ", frameLength,
                        " exceeds the signal length ", length);
    frames = (length - frameLength) / *step + 1;
  }
  int64_t bins = frameLength;
  if (op.getOnesided() && !ShapedType::isDynamic(bins))
    bins = bins / 2 + 1;
  types.push_back(
      RankedTensorType::get({dimOf(signal, 0), frames, bins, 2}, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(STFTOp, inferSTFT)

LogicalResult
MelWeightMatrixOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  std::optional<int64_t> bins = constantScalar(getNumMelBins());
  std::optional<int64_t> dftLength = constantScalar(getDftLength());
  types.push_back(RankedTensorType::get(
      {dftLength ? *dftLength / 2 + 1 : kDynamic, bins.value_or(kDynamic)},
      getElementTypeOrSelf(getType())));
  return success();
}

LogicalResult MelWeightMatrixOp::verify() {
  for (Value operand : getOperands())
    if (!isScalarLike(operand))
      return emitOpError("operands must be scalars, got ") << operand.getType();
  if (tensorType(getLowerEdgeHertz()).getElementType() !=
          tensorType(getUpperEdgeHertz()).getElementType() ||
      !isa<FloatType>(tensorType(getLowerEdgeHertz()).getElementType()))
    return emitOpError(
        "lower_edge_hertz and upper_edge_hertz must be floats of one type");
  for (auto [value, name] : {std::pair(getNumMelBins(), "num_mel_bins"),
                             std::pair(getDftLength(), "dft_length"),
                             std::pair(getSampleRate(), "sample_rate")})
    if (std::optional<int64_t> v = constantScalar(value); v && *v < 1)
      return emitOpError(name) << " must be positive, got " << *v;
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
    return emitOpError("axis ")
           << getAxis() << " is out of range for rank " << input.getRank();
  return success();
}
