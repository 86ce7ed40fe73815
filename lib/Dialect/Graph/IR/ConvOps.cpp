//===- ConvOps.cpp - convolutions and pooling ---------------------------===//
//
// Shape inference and verifiers of the ops that slide a window over their
// input: Conv, ConvInteger, QLinearConv, ConvTranspose and the pooling ops
// (NNOps.td). One routine per op serves both (NNOpsCommon.h).
//
//===----------------------------------------------------------------------===//

#include "NNOpsCommon.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace strata::graph;
using namespace strata::graph::nn_ops;

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

/// A channels-last convolution: input [N, D..., C], weight [M, k..., C/g],
/// result [N, D_out..., M] (strata-conv-to-gemm makes it; every attribute
/// is explicit). The same window arithmetic as Conv's, on the permuted axes.
static LogicalResult inferConvChannelsLast(ConvChannelsLastOp op,
                                           SmallVectorImpl<Type> &types,
                                           const Check &check) {
  auto input = dyn_cast<RankedTensorType>(op.getInput().getType());
  auto weight = dyn_cast<RankedTensorType>(op.getWeight().getType());
  if (!input || !weight)
    return check.fail("takes ranked input and weight");
  Type element = input.getElementType();
  if (weight.getElementType() != element ||
      (op.getBias() && tensorType(op.getBias()).getElementType() != element))
    return check.fail("input, weight and bias element types differ");
  int64_t rank = input.getRank(), spatial = rank - 2, group = op.getGroup();
  if (spatial < 1 || weight.getRank() != rank)
    return check.fail("input and weight must share a rank of at least 3, got ",
                      rank, " and ", weight.getRank());
  if (group < 1)
    return check.fail("group must be positive, got ", group);
  Window w;
  w.strides = op.getStrides();
  w.dilations = op.getDilations();
  w.pads = op.getPads();
  if (int64_t(op.getStrides().size()) != spatial ||
      int64_t(op.getDilations().size()) != spatial ||
      int64_t(op.getPads().size()) != 2 * spatial)
    return check.fail("strides, dilations and pads need ", spatial, ", ",
                      spatial, " and ", 2 * spatial, " entries");
  if (failed(checkWindowAttrs(w, spatial, check)))
    return failure();
  int64_t channels = input.getDimSize(rank - 1);
  int64_t perGroup = weight.getDimSize(rank - 1);
  int64_t filters = weight.getDimSize(0);
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(perGroup) &&
      channels != perGroup * group)
    return check.fail("input has ", channels, " channels but the weight ",
                      weight, " expects ", perGroup, " x group ", group);
  if (!ShapedType::isDynamic(filters) && filters % group != 0)
    return check.fail("output channels ", filters,
                      " are not divisible by group ", group);
  if (op.getBias() && failed(checkVector(op.getBias(), filters, "bias", check)))
    return failure();
  auto sizes = windowOutputSizes(input.getShape().slice(1, spatial),
                                 weight.getShape().slice(1, spatial), w, check);
  if (failed(sizes))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0)};
  shape.append(*sizes);
  shape.push_back(filters);
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(ConvChannelsLastOp, inferConvChannelsLast)

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
