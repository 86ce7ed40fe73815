//===- ImportNN.cpp - matmul, convolution, pooling, norms -------*- C++ -*-===//
//
// Converters of ONNX's neural-network operators: convolutions and pooling
// (auto_pad is resolved into explicit pads where the input's spatial sizes
// are known), normalizations, recurrent networks, quantization, and the
// detection and signal-processing ops.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

/// Reads an optional floats attribute into a DenseF32ArrayAttr.
DenseF32ArrayAttr floatsOrNull(NodeImporter &n, StringRef name) {
  auto values = n.floatsAttr(name);
  return values ? n.builder().getDenseF32ArrayAttr(*values)
                : DenseF32ArrayAttr();
}

IntegerAttr i64(NodeImporter &n, StringRef name, int64_t defaultValue) {
  return n.builder().getI64IntegerAttr(n.intAttr(name, defaultValue));
}

FloatAttr f32(NodeImporter &n, StringRef name, float defaultValue) {
  return n.builder().getF32FloatAttr(n.floatAttr(name, defaultValue));
}

StringAttr str(NodeImporter &n, StringRef name, StringRef defaultValue) {
  return n.builder().getStringAttr(n.stringAttr(name, defaultValue));
}

/// The window attributes of a convolution or pooling node.
struct WindowAttrs {
  StringAttr autoPad;
  DenseI64ArrayAttr kernelShape, strides, dilations, pads;
};

/// Reads a node's window attributes. When the kernel size is known (from
/// kernel_shape or a static `weight`) and, for SAME_*, the input's spatial
/// sizes are static, auto_pad is resolved into explicit pads (ONNX's rule:
/// the output has ceil(in / stride) positions, the odd pad going to the end
/// for SAME_UPPER and to the beginning for SAME_LOWER), so later layers only
/// see explicit pads. A convolution also gets kernel_shape from its weight.
FailureOr<WindowAttrs> readWindow(NodeImporter &n, Value input,
                                  Value weight = {}) {
  OpBuilder &b = n.builder();
  WindowAttrs w;
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  auto kernel = n.intsAttr("kernel_shape");
  auto strides = n.intsAttr("strides");
  auto dilations = n.intsAttr("dilations");
  auto pads = n.intsAttr("pads");
  if (!kernel && weight) {
    auto type = cast<TensorType>(weight.getType());
    if (type.hasRank() && type.getRank() > 2 && type.hasStaticShape())
      kernel = llvm::to_vector(type.getShape().drop_front(2));
  }
  if (autoPad != "NOTSET" && kernel) {
    int64_t spatial = kernel->size();
    auto in = cast<TensorType>(input.getType());
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    bool known = in.hasRank() && in.getRank() == spatial + 2 &&
                 (!strides || int64_t(strides->size()) == spatial) &&
                 (!dilations || int64_t(dilations->size()) == spatial) &&
                 (!same || llvm::none_of(in.getShape().drop_front(2),
                                         ShapedType::isDynamic));
    if (autoPad == "VALID" || known) {
      SmallVector<int64_t> resolved(2 * spatial, 0);
      for (int64_t i = 0; same && i < spatial; ++i) {
        int64_t stride = strides ? (*strides)[i] : 1;
        int64_t dilation = dilations ? (*dilations)[i] : 1;
        int64_t size = in.getDimSize(i + 2);
        if (stride < 1 || dilation < 1)
          return n.fail("strides and dilations must be positive");
        int64_t effective = dilation * ((*kernel)[i] - 1) + 1;
        int64_t total = graph::samePadding(size, effective, stride);
        int64_t small = total / 2, big = total - small;
        resolved[i] = autoPad == "SAME_UPPER" ? small : big;
        resolved[i + spatial] = autoPad == "SAME_UPPER" ? big : small;
      }
      // ONNX says pads must not accompany auto_pad; the resolved ones win.
      pads = resolved;
      autoPad = "NOTSET";
    }
  }
  w.autoPad = b.getStringAttr(autoPad);
  auto toAttr = [&](const std::optional<SmallVector<int64_t>> &values) {
    return values ? b.getDenseI64ArrayAttr(*values) : DenseI64ArrayAttr();
  };
  w.kernelShape = toAttr(kernel);
  w.strides = toAttr(strides);
  w.dilations = toAttr(dilations);
  w.pads = toAttr(pads);
  return w;
}

/// Reads a pooling node's window; kernel_shape is required.
FailureOr<WindowAttrs> readPoolWindow(NodeImporter &n) {
  if (!n.hasAttr("kernel_shape"))
    return n.fail("the required attribute 'kernel_shape' is missing");
  return readWindow(n, n.input(0));
}

/// The `p` of LpPool and GlobalLpPool: a float in their first versions, an
/// int since.
IntegerAttr readP(NodeImporter &n) {
  const onnx::AttributeProto *p = n.rawAttr("p");
  int64_t value = !p                                         ? 2
                  : p->type() == onnx::AttributeProto::FLOAT ? int64_t(p->f())
                                                             : p->i();
  return n.builder().getI64IntegerAttr(value);
}

Type i64Type(NodeImporter &n) { return n.builder().getI64Type(); }
Type f32Type(NodeImporter &n) { return n.builder().getF32Type(); }
Type u8Type(NodeImporter &n) {
  return IntegerType::get(n.context(), 8, IntegerType::Unsigned);
}

/// Converts RNN, GRU and LSTM; the three share inputs and attributes.
/// hidden_size defaults to R's last dimension when the attribute is absent.
template <typename OpTy> LogicalResult convertRecurrent(NodeImporter &n) {
  OpBuilder &b = n.builder();
  std::optional<int64_t> hidden = n.optionalIntAttr("hidden_size");
  if (!hidden) {
    auto r = cast<TensorType>(n.input(2).getType());
    if (!r.hasRank() || r.getRank() != 3 || r.isDynamicDim(2))
      return n.fail("hidden_size is missing and R's shape does not give it");
    hidden = r.getDimSize(2);
  }
  ArrayAttr activations;
  if (auto names = n.stringsAttr("activations")) {
    SmallVector<Attribute> attrs;
    for (const std::string &name : *names)
      attrs.push_back(b.getStringAttr(name));
    activations = b.getArrayAttr(attrs);
  }
  FloatAttr clip = n.hasAttr("clip") ? f32(n, "clip", 0.0f) : FloatAttr();
  DenseF32ArrayAttr alpha = floatsOrNull(n, "activation_alpha");
  DenseF32ArrayAttr beta = floatsOrNull(n, "activation_beta");
  StringAttr direction = str(n, "direction", "forward");
  IntegerAttr hiddenSize = b.getI64IntegerAttr(*hidden);
  IntegerAttr layout = i64(n, "layout", 0);
  SmallVector<Type> types;
  unsigned results = std::is_same_v<OpTy, graph::LSTMOp> ? 3 : 2;
  for (unsigned i = 0; i < results; ++i)
    types.push_back(n.outputType(i));
  OpTy op;
  if constexpr (std::is_same_v<OpTy, graph::LSTMOp>)
    op = n.create<OpTy>(types, n.input(0), n.input(1), n.input(2), n.input(3),
                        n.input(4), n.input(5), n.input(6), n.input(7), alpha,
                        beta, activations, clip, direction, hiddenSize, layout,
                        i64(n, "input_forget", 0));
  else if constexpr (std::is_same_v<OpTy, graph::GRUOp>)
    op = n.create<OpTy>(types, n.input(0), n.input(1), n.input(2), n.input(3),
                        n.input(4), n.input(5), alpha, beta, activations, clip,
                        direction, hiddenSize, layout,
                        i64(n, "linear_before_reset", 0));
  else
    op = n.create<OpTy>(types, n.input(0), n.input(1), n.input(2), n.input(3),
                        n.input(4), n.input(5), alpha, beta, activations, clip,
                        direction, hiddenSize, layout);
  return n.setOutputs(op->getResults());
}

} // namespace

static void registerLinearAlgebra(ConverterRegistry &r) {
  r.add("MatMul", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(
        n.create<graph::MatMulOp>(n.outputType(0), n.input(0), n.input(1)));
  });
  r.add("Gemm", [](NodeImporter &n) -> LogicalResult {
    OpBuilder &b = n.builder();
    // Before opset 7, `broadcast` allowed C to broadcast; Gemm always
    // broadcasts C (unidirectionally), which covers both settings.
    if (n.opset() < 7)
      n.ignoreAttr("broadcast");
    return n.setOutput(n.create<graph::GemmOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2),
        b.getF32FloatAttr(n.floatAttr("alpha", 1.0f)),
        b.getF32FloatAttr(n.floatAttr("beta", 1.0f)),
        b.getI64IntegerAttr(n.intAttr("transA", 0)),
        b.getI64IntegerAttr(n.intAttr("transB", 0))));
  });
  r.add("MatMulInteger", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::MatMulIntegerOp>(
        n.outputType(0, n.builder().getI32Type()), n.input(0), n.input(1),
        n.input(2), n.input(3)));
  });
  r.add("QLinearMatMul", [](NodeImporter &n) -> LogicalResult {
    Type element = getElementTypeOrSelf(n.input(7).getType());
    return n.setOutput(n.create<graph::QLinearMatMulOp>(
        n.outputType(0, element), n.input(0), n.input(1), n.input(2),
        n.input(3), n.input(4), n.input(5), n.input(6), n.input(7)));
  });
  r.add("Einsum", [](NodeImporter &n) -> LogicalResult {
    if (!n.hasAttr("equation"))
      return n.fail("the required attribute 'equation' is missing");
    return n.setOutput(n.create<graph::EinsumOp>(n.outputType(0), n.inputs(),
                                                 str(n, "equation", "")));
  });
  r.add("Det", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::DetOp>(n.outputType(0), n.input(0)));
  });
}

static void registerConvolutions(ConverterRegistry &r) {
  r.add("Conv", [](NodeImporter &n) -> LogicalResult {
    auto w = readWindow(n, n.input(0), n.input(1));
    if (failed(w))
      return failure();
    return n.setOutput(n.create<graph::ConvOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2), w->autoPad,
        w->dilations, i64(n, "group", 1), w->kernelShape, w->pads, w->strides));
  });
  r.add("ConvInteger", [](NodeImporter &n) -> LogicalResult {
    auto w = readWindow(n, n.input(0), n.input(1));
    if (failed(w))
      return failure();
    return n.setOutput(n.create<graph::ConvIntegerOp>(
        n.outputType(0, n.builder().getI32Type()), n.input(0), n.input(1),
        n.input(2), n.input(3), w->autoPad, w->dilations, i64(n, "group", 1),
        w->kernelShape, w->pads, w->strides));
  });
  r.add("QLinearConv", [](NodeImporter &n) -> LogicalResult {
    auto w = readWindow(n, n.input(0), n.input(3));
    if (failed(w))
      return failure();
    Type element = getElementTypeOrSelf(n.input(7).getType());
    return n.setOutput(n.create<graph::QLinearConvOp>(
        n.outputType(0, element), n.input(0), n.input(1), n.input(2),
        n.input(3), n.input(4), n.input(5), n.input(6), n.input(7), n.input(8),
        w->autoPad, w->dilations, i64(n, "group", 1), w->kernelShape, w->pads,
        w->strides));
  });
  // The output size of a transposed convolution under auto_pad depends on
  // output_shape and output_padding too, so its attributes are kept as they
  // are; the op's shape inference applies ONNX's rule.
  r.add("ConvTranspose", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::ConvTransposeOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2),
        str(n, "auto_pad", "NOTSET"), n.intsAttrOrNull("dilations"),
        i64(n, "group", 1), n.intsAttrOrNull("kernel_shape"),
        n.intsAttrOrNull("output_padding"), n.intsAttrOrNull("output_shape"),
        n.intsAttrOrNull("pads"), n.intsAttrOrNull("strides")));
  });
}

static void registerPooling(ConverterRegistry &r) {
  r.add("MaxPool", [](NodeImporter &n) -> LogicalResult {
    auto w = readPoolWindow(n);
    if (failed(w))
      return failure();
    auto op = n.create<graph::MaxPoolOp>(
        TypeRange{n.outputType(0), n.outputType(1, i64Type(n))}, n.input(0),
        w->autoPad, i64(n, "ceil_mode", 0), w->dilations, w->kernelShape,
        w->pads, w->strides, i64(n, "storage_order", 0));
    return n.setOutputs(op->getResults());
  });
  r.add("AveragePool", [](NodeImporter &n) -> LogicalResult {
    auto w = readPoolWindow(n);
    if (failed(w))
      return failure();
    return n.setOutput(n.create<graph::AveragePoolOp>(
        n.outputType(0), n.input(0), w->autoPad, i64(n, "ceil_mode", 0),
        w->dilations, w->kernelShape, w->pads, w->strides,
        i64(n, "count_include_pad", 0)));
  });
  r.add("LpPool", [](NodeImporter &n) -> LogicalResult {
    auto w = readPoolWindow(n);
    if (failed(w))
      return failure();
    return n.setOutput(n.create<graph::LpPoolOp>(
        n.outputType(0), n.input(0), w->autoPad, i64(n, "ceil_mode", 0),
        w->dilations, w->kernelShape, w->pads, w->strides, readP(n)));
  });
  r.add("GlobalAveragePool", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(
        n.create<graph::GlobalAveragePoolOp>(n.outputType(0), n.input(0)));
  });
  r.add("GlobalMaxPool", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(
        n.create<graph::GlobalMaxPoolOp>(n.outputType(0), n.input(0)));
  });
  r.add("GlobalLpPool", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(
        n.create<graph::GlobalLpPoolOp>(n.outputType(0), n.input(0), readP(n)));
  });
  r.add("MaxUnpool", [](NodeImporter &n) -> LogicalResult {
    if (!n.hasAttr("kernel_shape"))
      return n.fail("the required attribute 'kernel_shape' is missing");
    return n.setOutput(n.create<graph::MaxUnpoolOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2),
        n.intsAttrOrNull("kernel_shape"), n.intsAttrOrNull("pads"),
        n.intsAttrOrNull("strides")));
  });
  r.add("MaxRoiPool", [](NodeImporter &n) -> LogicalResult {
    if (!n.hasAttr("pooled_shape"))
      return n.fail("the required attribute 'pooled_shape' is missing");
    return n.setOutput(n.create<graph::MaxRoiPoolOp>(
        n.outputType(0), n.input(0), n.input(1),
        n.intsAttrOrNull("pooled_shape"), f32(n, "spatial_scale", 1.0f)));
  });
  r.add("RoiAlign", [](NodeImporter &n) -> LogicalResult {
    // RoiAlign-10 had no coordinate_transformation_mode and behaved like
    // output_half_pixel; opset 16 made half_pixel the default.
    StringRef defaultMode = n.opset() < 16 ? "output_half_pixel" : "half_pixel";
    return n.setOutput(n.create<graph::RoiAlignOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2),
        str(n, "coordinate_transformation_mode", defaultMode),
        str(n, "mode", "avg"), i64(n, "output_height", 1),
        i64(n, "output_width", 1), i64(n, "sampling_ratio", 0),
        f32(n, "spatial_scale", 1.0f)));
  });
}

static void registerNormalizations(ConverterRegistry &r) {
  r.add("LayerNormalization", [](NodeImporter &n) -> LogicalResult {
    OpBuilder &b = n.builder();
    Type f32 = b.getF32Type();
    auto op = n.create<graph::LayerNormOp>(
        TypeRange{n.outputType(0), n.outputType(1, f32), n.outputType(2, f32)},
        n.input(0), n.input(1), n.input(2),
        b.getI64IntegerAttr(n.intAttr("axis", -1)),
        b.getF32FloatAttr(n.floatAttr("epsilon", 1e-5f)),
        b.getI64IntegerAttr(n.intAttr("stash_type", 1)));
    return n.setOutputs(op->getResults());
  });
  r.add("LRN", [](NodeImporter &n) -> LogicalResult {
    if (!n.hasAttr("size"))
      return n.fail("the required attribute 'size' is missing");
    return n.setOutput(n.create<graph::LRNOp>(
        n.outputType(0), n.input(0), f32(n, "alpha", 1e-4f),
        f32(n, "beta", 0.75f), f32(n, "bias", 1.0f), i64(n, "size", 1)));
  });
  r.add("BatchNormalization", [](NodeImporter &n) -> LogicalResult {
    if (n.opset() < 9) {
      // Models that could not be converted to opset 17: `spatial` = 0
      // (per-element statistics) has no equivalent; is_test only selects
      // which outputs are meaningful.
      if (n.intAttr("spatial", 1) != 1)
        return n.fail("spatial = 0 (per-element statistics) is not supported");
      n.ignoreAttr("is_test");
      n.ignoreAttr("consumed_inputs");
    }
    if (n.opset() < 14 && (n.hasOutput(3) || n.hasOutput(4)))
      return n.fail("the saved_mean and saved_var outputs of training mode "
                    "before opset 14 are not supported");
    Type statsElement = getElementTypeOrSelf(n.input(3).getType());
    // Before opset 14 training was signalled by requesting the running
    // statistics as outputs.
    int64_t training = n.opset() >= 14  ? n.intAttr("training_mode", 0)
                       : n.opset() >= 9 ? int64_t(n.numOutputs() > 1)
                                        : 0;
    auto op = n.create<graph::BatchNormOp>(
        TypeRange{n.outputType(0), n.outputType(1, statsElement),
                  n.outputType(2, statsElement)},
        n.input(0), n.input(1), n.input(2), n.input(3), n.input(4),
        f32(n, "epsilon", 1e-5f), f32(n, "momentum", 0.9f),
        n.builder().getI64IntegerAttr(training));
    return n.setOutputs(op->getResults());
  });
  r.add("InstanceNormalization", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(
        n.create<graph::InstanceNormOp>(n.outputType(0), n.input(0), n.input(1),
                                        n.input(2), f32(n, "epsilon", 1e-5f)));
  });
  r.add("GroupNormalization", [](NodeImporter &n) -> LogicalResult {
    if (!n.hasAttr("num_groups"))
      return n.fail("the required attribute 'num_groups' is missing");
    IntegerAttr groups = i64(n, "num_groups", 1);
    FloatAttr epsilon = f32(n, "epsilon", 1e-5f);
    // Opset 21's stash_type picks the precision of the statistics; the
    // result is the same up to rounding.
    n.ignoreAttr("stash_type");
    // An opset-18 op the ONNX library has no schema for, so nothing has
    // checked its inputs before (found by fuzz-import: a missing bias made
    // an op with a null operand).
    static const char *const names[] = {"X", "scale", "bias"};
    for (unsigned i = 0; i < 3; ++i)
      if (!n.input(i))
        return n.fail("required input " + Twine(i) + " ('" + names[i] +
                      "') is missing");
    return n.setOutput(n.create<graph::GroupNormOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2), groups, epsilon));
  });
  r.add("MeanVarianceNormalization", [](NodeImporter &n) -> LogicalResult {
    SmallVector<int64_t> axes = {0, 2, 3};
    if (n.opset() < 9) {
      // MeanVarianceNormalization-1 chose the axes with across_channels.
      if (n.intAttr("normalize_variance", 1) != 1)
        return n.fail("normalize_variance = 0 is not supported");
      if (n.intAttr("across_channels", 0))
        axes = {0, 1, 2, 3};
    } else if (auto given = n.intsAttr("axes")) {
      axes = *given;
    }
    return n.setOutput(n.create<graph::MeanVarianceNormOp>(
        n.outputType(0), n.input(0), n.builder().getDenseI64ArrayAttr(axes)));
  });
}

static void registerQuantization(ConverterRegistry &r) {
  r.add("QuantizeLinear", [](NodeImporter &n) -> LogicalResult {
    Value zeroPoint = n.input(2);
    Type element =
        zeroPoint ? getElementTypeOrSelf(zeroPoint.getType()) : u8Type(n);
    return n.setOutput(n.create<graph::QuantizeLinearOp>(
        n.outputType(0, element), n.input(0), n.input(1), zeroPoint,
        i64(n, "axis", 1)));
  });
  r.add("DequantizeLinear", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::DequantizeLinearOp>(
        n.outputType(0, f32Type(n)), n.input(0), n.input(1), n.input(2),
        i64(n, "axis", 1)));
  });
  r.add("DynamicQuantizeLinear", [](NodeImporter &n) -> LogicalResult {
    auto op = n.create<graph::DynamicQuantizeLinearOp>(
        TypeRange{n.outputType(0, u8Type(n)), n.outputType(1, f32Type(n)),
                  n.outputType(2, u8Type(n))},
        n.input(0));
    return n.setOutputs(op->getResults());
  });
}

static void registerRecurrent(ConverterRegistry &r) {
  r.add("RNN", convertRecurrent<graph::RNNOp>);
  r.add("GRU", convertRecurrent<graph::GRUOp>);
  r.add("LSTM", convertRecurrent<graph::LSTMOp>);
}

static void registerSamplingAndSignal(ConverterRegistry &r) {
  r.add("GridSample", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::GridSampleOp>(
        n.outputType(0), n.input(0), n.input(1), i64(n, "align_corners", 0),
        str(n, "mode", "bilinear"), str(n, "padding_mode", "zeros")));
  });
  r.add("NonMaxSuppression", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::NonMaxSuppressionOp>(
        n.outputType(0, i64Type(n)), n.input(0), n.input(1), n.input(2),
        n.input(3), n.input(4), i64(n, "center_point_box", 0)));
  });
  r.add("DFT", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::DFTOp>(
        n.outputType(0), n.input(0), n.input(1), i64(n, "axis", 1),
        i64(n, "inverse", 0), i64(n, "onesided", 0)));
  });
  r.add("STFT", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(
        n.create<graph::STFTOp>(n.outputType(0), n.input(0), n.input(1),
                                n.input(2), n.input(3), i64(n, "onesided", 1)));
  });
  r.add("MelWeightMatrix", [](NodeImporter &n) -> LogicalResult {
    int64_t dataType = n.intAttr("output_datatype", onnx::TensorProto::FLOAT);
    Type element = convertElementType(n.context(), int32_t(dataType));
    if (!element)
      return n.fail("output_datatype " + elementTypeName(int32_t(dataType)) +
                    " is not supported");
    return n.setOutput(n.create<graph::MelWeightMatrixOp>(
        n.outputType(0, element), n.input(0), n.input(1), n.input(2),
        n.input(3), n.input(4)));
  });
}

void strata::onnx_import::registerNNConverters(ConverterRegistry &r) {
  registerLinearAlgebra(r);
  registerConvolutions(r);
  registerPooling(r);
  registerNormalizations(r);
  registerQuantization(r);
  registerRecurrent(r);
  registerSamplingAndSignal(r);
}
