//===- ImportTensor.cpp - shape and data-movement ONNX ops ------*- C++ -*-===//
//
// Converters of ONNX's tensor, generator and random ops. Models are mostly
// converted to opset 17 before import; when that conversion fails the
// converters also accept the older attribute forms (Slice, Pad, Squeeze,
// Split, TopK, Upsample) by turning the attributes into the constant inputs
// of the newer forms, or the reverse where the graph op keeps an attribute.
//
// Converters fold what they create when the operands are constant, so that
// the shape computations exporters emit (Shape -> Gather -> Concat ->
// Reshape) become constants during import and later nodes see static shapes.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeImporter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

namespace {

IntegerAttr i64(NodeImporter &n, int64_t value) {
  return n.builder().getI64IntegerAttr(value);
}

FloatAttr f32(NodeImporter &n, float value) {
  return n.builder().getF32FloatAttr(value);
}

StringAttr str(NodeImporter &n, StringRef value) {
  return n.builder().getStringAttr(value);
}

/// An optional float attribute (a random seed) as an F32Attr, or null.
FloatAttr optionalF32(NodeImporter &n, StringRef name) {
  if (!n.hasAttr(name))
    return {};
  return f32(n, n.floatAttr(name, 0.0f));
}

/// A graph.constant holding `values` as a 1-D i64 tensor.
Value constantI64(NodeImporter &n, ArrayRef<int64_t> values) {
  auto type =
      RankedTensorType::get({int64_t(values.size())}, n.builder().getI64Type());
  return graph::ConstantOp::create(n.builder(), n.loc(),
                                   DenseElementsAttr::get(type, values));
}

/// A graph.constant holding `values` as a 1-D f32 tensor.
Value constantF32(NodeImporter &n, ArrayRef<float> values) {
  auto type =
      RankedTensorType::get({int64_t(values.size())}, n.builder().getF32Type());
  return graph::ConstantOp::create(n.builder(), n.loc(),
                                   DenseElementsAttr::get(type, values));
}

/// Binds the node's outputs to `op`'s results, or to what they fold to: a
/// value the op forwards, or a new graph.constant.
LogicalResult setFolded(NodeImporter &n, Operation *op) {
  SmallVector<OpFoldResult> folded;
  SmallVector<Value> values;
  if (succeeded(op->fold(folded)) && folded.size() == op->getNumResults()) {
    for (auto [result, fold] : llvm::zip(op->getResults(), folded)) {
      if (auto value = dyn_cast<Value>(fold)) {
        if (value.getType() != result.getType())
          break;
        values.push_back(value);
        continue;
      }
      auto attr = dyn_cast<ElementsAttr>(cast<Attribute>(fold));
      if (!attr || attr.getType() != result.getType())
        break;
      values.push_back(graph::ConstantOp::create(n.builder(), n.loc(), attr));
    }
  }
  if (values.size() != op->getNumResults() || values.empty())
    return n.setOutputs(op->getResults());
  op->erase();
  return n.setOutputs(values);
}

/// The element type an ONNX `dtype`-like attribute selects; `fallback` when
/// the attribute is absent. Null (after an error) for unsupported types.
Type dtypeAttr(NodeImporter &n, StringRef name, Type fallback) {
  auto dtype = n.optionalIntAttr(name);
  if (!dtype)
    return fallback;
  Type element = convertElementType(n.context(), int32_t(*dtype));
  if (!element)
    n.emitError("attribute '" + name + "' selects element type " +
                elementTypeName(int32_t(*dtype)) +
                ", which strata does not support");
  return element;
}

/// Converts a TensorProto attribute value through the graph importer's
/// tensor conversion (the same one initializers use).
FailureOr<ElementsAttr> convertTensorAttr(NodeImporter &n,
                                          const onnx::TensorProto &tensor) {
  if (tensor.data_type() == onnx::TensorProto::STRING)
    return n.fail("string tensors are not supported");
  auto attr = n.graphImporter().convertTensor(tensor, n.loc());
  if (failed(attr))
    return n.fail("cannot convert the tensor value");
  return attr;
}

//===----------------------------------------------------------------------===//
// Constants and generators
//===----------------------------------------------------------------------===//

LogicalResult convertConstant(NodeImporter &n) {
  for (StringRef name : {"sparse_value", "value_string", "value_strings"})
    if (n.hasAttr(name)) {
      n.ignoreAttr(name);
      return n.fail(
          Twine("attribute '") + name + "' is not supported: strata has no " +
          (name == "sparse_value" ? "sparse" : "string") + " tensors");
    }
  OpBuilder &b = n.builder();
  ElementsAttr value;
  if (const auto *attr = n.rawAttr("value")) {
    auto converted = convertTensorAttr(n, attr->t());
    if (failed(converted))
      return failure();
    value = *converted;
  } else if (const auto *attr = n.rawAttr("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   attr->f());
  } else if (auto floats = n.floatsAttr("value_floats")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({int64_t(floats->size())}, b.getF32Type()),
        ArrayRef<float>(*floats));
  } else if (const auto *attr = n.rawAttr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   int64_t(attr->i()));
  } else if (auto ints = n.intsAttr("value_ints")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({int64_t(ints->size())}, b.getI64Type()),
        ArrayRef<int64_t>(*ints));
  } else {
    return n.fail("needs one of the attributes value, value_float(s) or "
                  "value_int(s)");
  }
  return n.setOutput(graph::ConstantOp::create(b, n.loc(), value));
}

LogicalResult convertConstantOfShape(NodeImporter &n) {
  ElementsAttr value;
  if (const auto *attr = n.rawAttr("value")) {
    auto converted = convertTensorAttr(n, attr->t());
    if (failed(converted))
      return failure();
    value = *converted;
  } else {
    value = DenseElementsAttr::get(
        RankedTensorType::get({1}, n.builder().getF32Type()), 0.0f);
  }
  auto op = n.create<graph::ConstantOfShapeOp>(
      n.outputType(0, value.getElementType()), n.input(0), value);
  return setFolded(n, op);
}

LogicalResult convertEyeLike(NodeImporter &n) {
  Type element =
      dtypeAttr(n, "dtype", getElementTypeOrSelf(n.input(0).getType()));
  if (!element)
    return failure();
  return n.setOutput(n.create<graph::EyeLikeOp>(
      n.outputType(0, element), n.input(0), i64(n, n.intAttr("k", 0))));
}

template <typename OpTy> LogicalResult convertWindow(NodeImporter &n) {
  Type element = dtypeAttr(n, "output_datatype", n.builder().getF32Type());
  if (!element)
    return failure();
  auto op = n.create<OpTy>(n.outputType(0, element), n.input(0),
                           i64(n, n.intAttr("periodic", 1)));
  return setFolded(n, op);
}

/// RandomNormal and RandomUniform: the shape is an attribute.
template <typename OpTy>
LogicalResult convertRandom(NodeImporter &n, StringRef a, float aDefault,
                            StringRef b, float bDefault) {
  Type element = dtypeAttr(n, "dtype", n.builder().getF32Type());
  if (!element)
    return failure();
  auto shape = n.intsAttr("shape");
  if (!shape)
    return n.fail("missing required attribute 'shape'");
  return n.setOutput(
      n.create<OpTy>(n.outputType(0, element), f32(n, n.floatAttr(a, aDefault)),
                     f32(n, n.floatAttr(b, bDefault)), optionalF32(n, "seed"),
                     n.builder().getDenseI64ArrayAttr(*shape)));
}

/// RandomNormalLike and RandomUniformLike: the shape is the input's.
template <typename OpTy>
LogicalResult convertRandomLike(NodeImporter &n, StringRef a, float aDefault,
                                StringRef b, float bDefault) {
  Type element =
      dtypeAttr(n, "dtype", getElementTypeOrSelf(n.input(0).getType()));
  if (!element)
    return failure();
  if (!isa<FloatType>(element))
    return n.fail("random values of non-float element type are not "
                  "supported");
  return n.setOutput(n.create<OpTy>(
      n.outputType(0, element), n.input(0), f32(n, n.floatAttr(a, aDefault)),
      f32(n, n.floatAttr(b, bDefault)), optionalF32(n, "seed")));
}

//===----------------------------------------------------------------------===//
// Reshaping
//===----------------------------------------------------------------------===//

/// A list ONNX gives as an attribute in old opsets and as an optional input
/// `i` in new ones: the attribute form when the list is known at import time
/// (attribute or constant input), else the computed input, which the op
/// takes as its dynamic operand.
struct ListOperand {
  std::optional<SmallVector<int64_t>> values;
  Value dynamic;
};

ListOperand listOperand(NodeImporter &n, StringRef attrName, unsigned i) {
  ListOperand list;
  if (auto attr = n.intsAttr(attrName)) {
    list.values = *attr;
  } else if (Value input = n.input(i)) {
    SmallVector<int64_t> values;
    if (succeeded(graph::getConstantIntValues(input, values)))
      list.values = values;
    else
      list.dynamic = input;
  }
  return list;
}

DenseI64ArrayAttr listAttr(NodeImporter &n, const ListOperand &list) {
  return list.values ? n.builder().getDenseI64ArrayAttr(*list.values)
                     : DenseI64ArrayAttr();
}

/// Squeeze and Unsqueeze: axes are an attribute before opset 13, an input
/// after.
LogicalResult convertSqueeze(NodeImporter &n) {
  ListOperand axes = listOperand(n, "axes", 1);
  auto op = n.create<graph::SqueezeOp>(n.outputType(0), n.input(0),
                                       axes.dynamic, listAttr(n, axes));
  return setFolded(n, op);
}

LogicalResult convertUnsqueeze(NodeImporter &n) {
  ListOperand axes = listOperand(n, "axes", 1);
  if (!axes.values && !axes.dynamic)
    return n.fail("needs axes");
  auto op = n.create<graph::UnsqueezeOp>(n.outputType(0), n.input(0),
                                         axes.dynamic, listAttr(n, axes));
  return setFolded(n, op);
}

//===----------------------------------------------------------------------===//
// Slicing, joining, padding
//===----------------------------------------------------------------------===//

LogicalResult convertSlice(NodeImporter &n) {
  Value starts, ends, axes, steps;
  if (n.opset() < 10) {
    // Opset 1-9: starts, ends and axes are attributes.
    auto startsAttr = n.intsAttr("starts");
    auto endsAttr = n.intsAttr("ends");
    if (!startsAttr || !endsAttr)
      return n.fail("needs the attributes starts and ends");
    starts = constantI64(n, *startsAttr);
    ends = constantI64(n, *endsAttr);
    if (auto axesAttr = n.intsAttr("axes"))
      axes = constantI64(n, *axesAttr);
  } else {
    starts = n.input(1);
    ends = n.input(2);
    axes = n.input(3);
    steps = n.input(4);
  }
  auto op = n.create<graph::SliceOp>(n.outputType(0), n.input(0), starts, ends,
                                     axes, steps);
  return setFolded(n, op);
}

LogicalResult convertSplit(NodeImporter &n) {
  // Sizes: an attribute before opset 13, an input after.
  ListOperand split = listOperand(n, "split", 1);
  unsigned parts = n.numOutputs();
  if (auto numOutputs = n.optionalIntAttr("num_outputs");
      numOutputs && *numOutputs != int64_t(parts))
    return n.fail("num_outputs is " + Twine(*numOutputs) +
                  " but the node has " + Twine(parts) + " outputs");
  SmallVector<Type> types;
  for (unsigned i = 0; i < parts; ++i)
    types.push_back(n.outputType(i));
  auto op = n.create<graph::SplitOp>(types, n.input(0), split.dynamic,
                                     i64(n, n.intAttr("axis", 0)),
                                     listAttr(n, split));
  return setFolded(n, op);
}

LogicalResult convertPad(NodeImporter &n) {
  Value pads, value;
  if (n.opset() < 11) {
    // Opset 1-10: pads and the fill value are attributes.
    auto padsAttr = n.intsAttr("pads");
    if (!padsAttr)
      padsAttr = n.intsAttr("paddings"); // Opset 1's name.
    if (!padsAttr)
      return n.fail("needs the attribute pads");
    pads = constantI64(n, *padsAttr);
    Type element = getElementTypeOrSelf(n.input(0).getType());
    float fill = n.floatAttr("value", 0.0f);
    auto scalar = RankedTensorType::get({}, element);
    Attribute fillAttr;
    if (isa<FloatType>(element))
      fillAttr = FloatAttr::get(element, fill);
    else if (isa<IntegerType>(element))
      fillAttr = IntegerAttr::get(element, int64_t(fill));
    if (!fillAttr)
      return n.fail("unsupported element type");
    value = graph::ConstantOp::create(n.builder(), n.loc(),
                                      DenseElementsAttr::get(scalar, fillAttr));
  } else {
    if (n.numInputs() > 3)
      return n.fail("the axes input (opset 18) is not supported");
    pads = n.input(1);
    value = n.input(2);
  }
  return n.setOutput(
      n.create<graph::PadOp>(n.outputType(0), n.input(0), pads, value,
                             str(n, n.stringAttr("mode", "constant"))));
}

//===----------------------------------------------------------------------===//
// Resampling
//===----------------------------------------------------------------------===//

/// An empty constant (exporters pass one for an unused roi or scales) or an
/// absent input: both mean "not given".
Value nonEmptyInput(NodeImporter &n, unsigned i) {
  Value v = n.input(i);
  if (!v)
    return {};
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (type && type.hasStaticShape() && type.getNumElements() == 0)
    return {};
  return v;
}

LogicalResult convertResize(NodeImporter &n) {
  Value roi, scales, sizes;
  std::string transform, nearest;
  if (n.opset() < 11) {
    // Opset 10: (X, scales), with Upsample's asymmetric coordinates.
    scales = n.input(1);
    transform = "asymmetric";
    nearest = "floor";
  } else {
    roi = nonEmptyInput(n, 1);
    scales = nonEmptyInput(n, 2);
    sizes = nonEmptyInput(n, 3);
    transform = n.stringAttr("coordinate_transformation_mode", "half_pixel");
    nearest = n.stringAttr("nearest_mode", "round_prefer_floor");
  }
  OpBuilder &b = n.builder();
  auto op = n.create<graph::ResizeOp>(
      n.outputType(0), n.input(0), roi, scales, sizes,
      b.getStringAttr(transform), f32(n, n.floatAttr("cubic_coeff_a", -0.75f)),
      i64(n, n.intAttr("exclude_outside", 0)),
      f32(n, n.floatAttr("extrapolation_value", 0.0f)),
      str(n, n.stringAttr("mode", "nearest")), b.getStringAttr(nearest));
  return n.setOutput(op);
}

/// Upsample (opset 7-9) is Resize with asymmetric coordinates and floor
/// rounding; its scales are an attribute before opset 9.
LogicalResult convertUpsample(NodeImporter &n) {
  Value scales;
  if (auto attr = n.floatsAttr("scales"))
    scales = constantF32(n, *attr);
  else
    scales = n.input(1);
  if (!scales)
    return n.fail("needs scales");
  std::string mode = n.stringAttr("mode", "nearest");
  if (mode == "bilinear") // Opset 7's name for it.
    mode = "linear";
  OpBuilder &b = n.builder();
  return n.setOutput(n.create<graph::ResizeOp>(
      n.outputType(0), n.input(0), Value(), scales, Value(),
      b.getStringAttr("asymmetric"), f32(n, -0.75f), i64(n, 0), f32(n, 0.0f),
      b.getStringAttr(mode), b.getStringAttr("floor")));
}

//===----------------------------------------------------------------------===//
// Selection, Dropout
//===----------------------------------------------------------------------===//

LogicalResult convertTopK(NodeImporter &n) {
  // K: an attribute before opset 10, a one-element input after; a computed
  // input becomes the op's `dynamic_k` operand.
  std::optional<int64_t> k = n.optionalIntAttr("k");
  Value dynamicK;
  if (!k) {
    Value input = n.input(1);
    if (!input)
      return n.fail("needs K");
    SmallVector<int64_t> values;
    if (succeeded(graph::getConstantIntValues(input, values))) {
      if (values.size() != 1)
        return n.fail("K must hold one value");
      k = values.front();
    } else {
      dynamicK = input;
    }
  }
  auto op = n.create<graph::TopKOp>(
      TypeRange{n.outputType(0), n.outputType(1, n.builder().getI64Type())},
      n.input(0), dynamicK, k ? i64(n, *k) : IntegerAttr(),
      i64(n, n.intAttr("axis", -1)), i64(n, n.intAttr("largest", 1)),
      i64(n, n.intAttr("sorted", 1)));
  return n.setOutputs(op->getResults());
}

LogicalResult convertUnique(NodeImporter &n) {
  Type i64Type = n.builder().getI64Type();
  auto axis = n.optionalIntAttr("axis");
  auto op = n.create<graph::UniqueOp>(
      TypeRange{n.outputType(0), n.outputType(1, i64Type),
                n.outputType(2, i64Type), n.outputType(3, i64Type)},
      n.input(0), axis ? i64(n, *axis) : IntegerAttr(),
      i64(n, n.intAttr("sorted", 1)));
  return n.setOutputs(op->getResults());
}

LogicalResult convertDropout(NodeImporter &n) {
  OpBuilder &b = n.builder();
  Value ratio = n.input(1), training = n.input(2);
  if (n.opset() < 12) {
    // Opset 1-11: ratio is an attribute and there is no training mode
    // (is_test, before opset 7, only ever selected inference here).
    ratio = graph::ConstantOp::create(
        b, n.loc(),
        DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                               n.floatAttr("ratio", 0.5f)));
    n.ignoreAttr("is_test");
    n.ignoreAttr("consumed_inputs");
    if (n.opset() < 10 && n.hasOutput(1))
      return n.fail("the mask output of opset 1-9, of the data's element "
                    "type, is not supported");
  }
  auto seed = n.optionalIntAttr("seed");
  auto op = n.create<graph::DropoutOp>(
      TypeRange{n.outputType(0), n.outputType(1, b.getI1Type())}, n.input(0),
      ratio, training, seed ? i64(n, *seed) : IntegerAttr());
  return n.setOutputs(op->getResults());
}

} // namespace

void strata::onnx_import::registerTensorConverters(ConverterRegistry &r) {
  // Constants and generators.
  r.add("Constant", convertConstant);
  r.add("ConstantOfShape", convertConstantOfShape);
  r.add("Range", [](NodeImporter &n) -> LogicalResult {
    return setFolded(n, n.create<graph::RangeOp>(n.outputType(0), n.input(0),
                                                 n.input(1), n.input(2)));
  });
  r.add("EyeLike", convertEyeLike);
  r.add("HannWindow", convertWindow<graph::HannWindowOp>);
  r.add("HammingWindow", convertWindow<graph::HammingWindowOp>);
  r.add("BlackmanWindow", convertWindow<graph::BlackmanWindowOp>);
  r.add("RandomNormal", [](NodeImporter &n) {
    return convertRandom<graph::RandomNormalOp>(n, "mean", 0.0f, "scale", 1.0f);
  });
  r.add("RandomUniform", [](NodeImporter &n) {
    return convertRandom<graph::RandomUniformOp>(n, "high", 1.0f, "low", 0.0f);
  });
  r.add("RandomNormalLike", [](NodeImporter &n) {
    return convertRandomLike<graph::RandomNormalLikeOp>(n, "mean", 0.0f,
                                                        "scale", 1.0f);
  });
  r.add("RandomUniformLike", [](NodeImporter &n) {
    return convertRandomLike<graph::RandomUniformLikeOp>(n, "high", 1.0f, "low",
                                                         0.0f);
  });
  r.add("Bernoulli", [](NodeImporter &n) -> LogicalResult {
    Type element =
        dtypeAttr(n, "dtype", getElementTypeOrSelf(n.input(0).getType()));
    if (!element)
      return failure();
    return n.setOutput(n.create<graph::BernoulliOp>(
        n.outputType(0, element), n.input(0), optionalF32(n, "seed")));
  });

  // Shapes.
  r.add("Shape", [](NodeImporter &n) -> LogicalResult {
    auto end = n.optionalIntAttr("end");
    return setFolded(
        n, n.create<graph::ShapeOp>(n.outputType(0, n.builder().getI64Type()),
                                    n.input(0), i64(n, n.intAttr("start", 0)),
                                    end ? i64(n, *end) : IntegerAttr()));
  });
  r.add("Size", [](NodeImporter &n) -> LogicalResult {
    return setFolded(
        n, n.create<graph::SizeOp>(n.outputType(0, n.builder().getI64Type()),
                                   n.input(0)));
  });

  // Reshaping.
  r.add("Reshape", [](NodeImporter &n) -> LogicalResult {
    Value shape = n.input(1);
    if (n.opset() < 5) {
      // Opset 1-4: the shape is an attribute.
      auto attr = n.intsAttr("shape");
      if (!attr)
        return n.fail("needs the attribute shape");
      shape = constantI64(n, *attr);
      n.ignoreAttr("consumed_inputs");
    }
    return setFolded(
        n, n.create<graph::ReshapeOp>(n.outputType(0), n.input(0), shape,
                                      i64(n, n.intAttr("allowzero", 0))));
  });
  r.add("Flatten", [](NodeImporter &n) -> LogicalResult {
    return setFolded(n,
                     n.create<graph::FlattenOp>(n.outputType(0), n.input(0),
                                                i64(n, n.intAttr("axis", 1))));
  });
  r.add("Squeeze", convertSqueeze);
  r.add("Unsqueeze", convertUnsqueeze);
  r.add("Transpose", [](NodeImporter &n) -> LogicalResult {
    return setFolded(n,
                     n.create<graph::TransposeOp>(n.outputType(0), n.input(0),
                                                  n.intsAttrOrNull("perm")));
  });
  r.add("DepthToSpace", [](NodeImporter &n) -> LogicalResult {
    auto blocksize = n.optionalIntAttr("blocksize");
    if (!blocksize)
      return n.fail("missing required attribute 'blocksize'");
    return n.setOutput(n.create<graph::DepthToSpaceOp>(
        n.outputType(0), n.input(0), i64(n, *blocksize),
        str(n, n.stringAttr("mode", "DCR"))));
  });
  r.add("SpaceToDepth", [](NodeImporter &n) -> LogicalResult {
    auto blocksize = n.optionalIntAttr("blocksize");
    if (!blocksize)
      return n.fail("missing required attribute 'blocksize'");
    return n.setOutput(n.create<graph::SpaceToDepthOp>(
        n.outputType(0), n.input(0), i64(n, *blocksize)));
  });

  // Slicing, joining, broadcasting, padding.
  r.add("Concat", [](NodeImporter &n) -> LogicalResult {
    auto axis = n.optionalIntAttr("axis");
    if (!axis && n.opset() < 4)
      axis = 1; // Opset 1-3's default.
    if (!axis)
      return n.fail("missing required attribute 'axis'");
    return setFolded(n, n.create<graph::ConcatOp>(n.outputType(0), n.inputs(),
                                                  i64(n, *axis)));
  });
  r.add("Slice", convertSlice);
  r.add("Split", convertSplit);
  r.add("Expand", [](NodeImporter &n) -> LogicalResult {
    return setFolded(
        n, n.create<graph::ExpandOp>(n.outputType(0), n.input(0), n.input(1)));
  });
  r.add("Tile", [](NodeImporter &n) -> LogicalResult {
    if (n.numInputs() > 2)
      return n.fail("the opset 1 form (tiles, axis inputs) is not supported");
    return n.setOutput(
        n.create<graph::TileOp>(n.outputType(0), n.input(0), n.input(1)));
  });
  r.add("Pad", convertPad);
  r.add("Trilu", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::TriluOp>(n.outputType(0), n.input(0),
                                                n.input(1),
                                                i64(n, n.intAttr("upper", 1))));
  });
  r.add("ReverseSequence", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::ReverseSequenceOp>(
        n.outputType(0), n.input(0), n.input(1),
        i64(n, n.intAttr("batch_axis", 1)), i64(n, n.intAttr("time_axis", 0))));
  });

  // Gathers and scatters.
  r.add("Gather", [](NodeImporter &n) -> LogicalResult {
    return setFolded(
        n, n.create<graph::GatherOp>(n.outputType(0), n.input(0), n.input(1),
                                     i64(n, n.intAttr("axis", 0))));
  });
  r.add("GatherElements", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::GatherElementsOp>(
        n.outputType(0), n.input(0), n.input(1), i64(n, n.intAttr("axis", 0))));
  });
  r.add("GatherND", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(
        n.create<graph::GatherNDOp>(n.outputType(0), n.input(0), n.input(1),
                                    i64(n, n.intAttr("batch_dims", 0))));
  });
  auto scatterElements = [](NodeImporter &n) -> LogicalResult {
    // Scatter (deprecated in opset 11) is ScatterElements without reduction.
    return n.setOutput(n.create<graph::ScatterElementsOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2),
        i64(n, n.intAttr("axis", 0)),
        str(n, n.stringAttr("reduction", "none"))));
  };
  r.add("ScatterElements", scatterElements);
  r.add("Scatter", scatterElements);
  r.add("ScatterND", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::ScatterNDOp>(
        n.outputType(0), n.input(0), n.input(1), n.input(2),
        str(n, n.stringAttr("reduction", "none"))));
  });
  r.add("OneHot", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::OneHotOp>(
        n.outputType(0, getElementTypeOrSelf(n.input(2).getType())), n.input(0),
        n.input(1), n.input(2), i64(n, n.intAttr("axis", -1))));
  });
  r.add("Compress", [](NodeImporter &n) -> LogicalResult {
    auto axis = n.optionalIntAttr("axis");
    return n.setOutput(
        n.create<graph::CompressOp>(n.outputType(0), n.input(0), n.input(1),
                                    axis ? i64(n, *axis) : IntegerAttr()));
  });
  r.add("NonZero", [](NodeImporter &n) -> LogicalResult {
    return n.setOutput(n.create<graph::NonZeroOp>(
        n.outputType(0, n.builder().getI64Type()), n.input(0)));
  });

  // Resampling, selection, dropout.
  r.add("Resize", convertResize);
  r.add("Upsample", convertUpsample);
  r.add("TopK", convertTopK);
  r.add("Unique", convertUnique);
  r.add("Dropout", convertDropout);
}
