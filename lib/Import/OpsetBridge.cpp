//===- OpsetBridge.cpp - newer opsets to the ONNX library's newest --------===//
//
// torch.onnx's default exporter (dynamo=True since torch 2.9) writes opset 18
// and later; Debian's libonnx knows operator schemas up to opset 17 only, so
// its checker, version converter and shape inference cannot read such a
// model. This file rewrites the default domain's nodes from their newer forms
// into the forms of the newest opset the library knows, so that everything
// after it (checker, shape inference, the converters) sees one set of
// semantics, as for a model converted up from an older opset.
//
// Most of what opsets 18-22 changed only widened type constraints (float8,
// int4, bfloat16): those nodes stay as they are. The rest:
//   - Reduce* (18) take their axes as an input: a constant one becomes the
//     attribute again; noop_with_empty_axes with no axes becomes Identity.
//   - Split (18) names its output count: it equals the number of outputs.
//   - Resize (18, 19), AveragePool (19), LpPool (18), Cast/CastLike (19),
//     QuantizeLinear/DequantizeLinear (19, 21) gained attributes whose
//     defaults are the old behaviour: defaults are dropped, anything else is
//     refused.
//   - GridSample (20) renamed its modes (linear, cubic).
//   - Gelu (20) and Mish (18) are new ops with opset-17 formulas: they are
//     written out (Erf or Tanh form; Softplus, Tanh), with constants cast to
//     the input's type by CastLike; the graph stage folds the casts and forms
//     graph.gelu again (strata-graph-decompose).
//   - Col2Im (18), torch's `fold`, is written out as Reshape, Slice, Pad and
//     Sum (writeCol2Im).
// GroupNormalization and the Bitwise ops, which strata's converters read in
// their new forms, stay (the ONNX checker is then skipped: it has no schema
// for them). The importer keeps the model's own opset for its messages and the
// converters: every node they see has a form valid at both.
// A node that cannot be brought back (a new op with no formula here, a
// non-constant axes input, a new attribute value) is reported by name, and
// every such node is reported before the import stops.
//
//===----------------------------------------------------------------------===//

#include "OpsetBridge.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/defs/tensor_proto_util.h>

#include <cmath>

using namespace strata::onnx_import;

namespace {

/// Ops that a version in (17, kNewestBridgedOpset] changed only by widening
/// their type constraints, or whose new form is handled below.
const llvm::StringSet<> &typeOnlyChanges() {
  static const llvm::StringSet<> ops = {
      // 19
      "Constant", "Equal", "Identity", "If", "Loop", "Reshape", "Scan", "Shape",
      "Size",
      // 20
      "ConstantOfShape", "IsInf", "IsNaN",
      // 21
      "Flatten", "Squeeze", "Transpose", "Unsqueeze",
      // 22
      "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Bernoulli", "Conv",
      "ConvTranspose", "Cos", "Cosh", "Det", "Dropout", "Elu", "EyeLike", "GRU",
      "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "HardSigmoid",
      "HardSwish", "InstanceNormalization", "LSTM", "LpNormalization",
      "MaxPool", "MaxRoiPool", "MaxUnpool", "Multinomial",
      // 18 (optional inputs may be tensors), 21 (float8 types)
      "OptionalGetElement", "OptionalHasElement", "QLinearMatMul",
      "NegativeLogLikelihoodLoss", "RNN", "RandomNormal", "RandomNormalLike",
      "RandomUniform", "RandomUniformLike", "RoiAlign", "Round", "Selu", "Sin",
      "Sinh", "Softplus", "Softsign", "Tan", "ThresholdedRelu"};
  return ops;
}

bool isReduction(llvm::StringRef op) {
  return op == "ReduceL1" || op == "ReduceL2" || op == "ReduceLogSum" ||
         op == "ReduceLogSumExp" || op == "ReduceMax" || op == "ReduceMean" ||
         op == "ReduceMin" || op == "ReduceProd" || op == "ReduceSumSquare";
}

/// Constants visible in a graph: its initializers and Constant nodes, and
/// those of the graphs around it.
struct Scope {
  const Scope *outer = nullptr;
  llvm::StringMap<const onnx::TensorProto *> tensors;

  const onnx::TensorProto *find(const std::string &name) const {
    for (const Scope *s = this; s; s = s->outer) {
      auto it = s->tensors.find(name);
      if (it != s->tensors.end())
        return it->second;
    }
    return nullptr;
  }
};

/// An integer tensor's values (int64 or int32, raw or typed), through
/// libonnx's own reader; nothing for other types or malformed data.
std::optional<std::vector<int64_t>> readInts(const onnx::TensorProto &t) {
  try {
    if (t.data_type() == onnx::TensorProto::INT64)
      return onnx::ParseData<int64_t>(&t);
    if (t.data_type() == onnx::TensorProto::INT32) {
      std::vector<int32_t> values = onnx::ParseData<int32_t>(&t);
      return std::vector<int64_t>(values.begin(), values.end());
    }
  } catch (const std::exception &) {
  }
  return std::nullopt;
}

const onnx::AttributeProto *findAttr(const onnx::NodeProto &n,
                                     llvm::StringRef name) {
  for (const auto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

void eraseAttr(onnx::NodeProto &n, llvm::StringRef name) {
  auto *attrs = n.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i)
    if (attrs->Get(i).name() == name) {
      attrs->DeleteSubrange(i, 1);
      return;
    }
}

class Bridge {
public:
  Bridge(int64_t from, llvm::function_ref<void(const std::string &)> report)
      : from(from), report(report) {}

  bool run(onnx::GraphProto &graph, const Scope *outer) {
    Scope scope;
    scope.outer = outer;
    for (const auto &init : graph.initializer())
      scope.tensors[init.name()] = &init;
    for (const auto &node : graph.node())
      if (node.op_type() == "Constant" && node.output_size() == 1)
        if (const auto *value = findAttr(node, "value");
            value && value->has_t())
          scope.tensors[node.output(0)] = &value->t();

    bool ok = true;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(graph.mutable_node());
    for (auto &node : nodes) {
      for (auto &attr : *node.mutable_attribute()) {
        if (attr.has_g())
          ok &= run(*attr.mutable_g(), &scope);
        for (auto &g : *attr.mutable_graphs())
          ok &= run(g, &scope);
      }
      if (!node.domain().empty() && node.domain() != "ai.onnx") {
        *graph.add_node() = std::move(node);
        continue;
      }
      ok &= convert(node, scope, graph);
    }
    return ok;
  }

  /// False once a node is kept that the ONNX library has no schema for.
  bool checkable = true;

private:
  int64_t from;
  llvm::function_ref<void(const std::string &)> report;
  int64_t fresh = 0;

  std::string describe(const onnx::NodeProto &n) const {
    std::string name = n.name().empty() ? "<" + n.op_type() + ">" : n.name();
    return "node '" + name + "' (" + n.op_type() + ", opset " +
           std::to_string(from) + ")";
  }

  bool refuse(const onnx::NodeProto &n, const std::string &why) {
    report(describe(n) + ": " + why);
    return false;
  }

  /// Refuses a node whose attribute `name` is set to something other than
  /// the behaviour of opset 17, and drops it otherwise.
  bool
  dropDefault(onnx::NodeProto &n, llvm::StringRef name,
              llvm::function_ref<bool(const onnx::AttributeProto &)> isOld) {
    const onnx::AttributeProto *attr = findAttr(n, name);
    if (!attr)
      return true;
    if (!isOld(*attr))
      return refuse(n, "attribute '" + name.str() +
                           "' asks for behaviour that opset 17 does not have");
    eraseAttr(n, name);
    return true;
  }

  std::string freshName(const onnx::NodeProto &n, llvm::StringRef what) {
    return n.output(0) + "__strata_" + what.str() + "_" +
           std::to_string(fresh++);
  }

  onnx::NodeProto &add(onnx::GraphProto &g, const onnx::NodeProto &like,
                       llvm::StringRef op, std::vector<std::string> inputs,
                       std::string output) {
    onnx::NodeProto &n = *g.add_node();
    n.set_op_type(op.str());
    n.set_name(like.name().empty() ? output : like.name() + "/" + op.str());
    for (auto &in : inputs)
      n.add_input(in);
    n.add_output(output);
    return n;
  }

  /// A scalar float constant cast to the type of `like` (CastLike, opset 15).
  std::string constantLike(onnx::GraphProto &g, const onnx::NodeProto &node,
                           double value, const std::string &like) {
    std::string raw = freshName(node, "c");
    onnx::NodeProto &c = add(g, node, "Constant", {}, raw);
    onnx::AttributeProto *attr = c.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto *t = attr->mutable_t();
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(float(value));
    std::string cast = freshName(node, "c");
    add(g, node, "CastLike", {raw, like}, cast);
    return cast;
  }

  std::string emit(onnx::GraphProto &g, const onnx::NodeProto &node,
                   llvm::StringRef op, std::vector<std::string> inputs) {
    std::string out = freshName(node, llvm::StringRef(op).lower());
    add(g, node, op, std::move(inputs), out);
    return out;
  }

  /// Gelu(x) = x * 0.5 * (1 + erf(x / sqrt(2))), or with approximate=tanh
  /// x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))); the last Mul
  /// writes the node's output.
  bool writeGelu(onnx::GraphProto &g, const onnx::NodeProto &n) {
    std::string mode = "none";
    if (const auto *a = findAttr(n, "approximate"))
      mode = a->s();
    if (mode != "none" && mode != "tanh")
      return refuse(n, "unknown approximate '" + mode + "'");
    const std::string &x = n.input(0);
    std::string inner;
    if (mode == "none") {
      inner = emit(g, n, "Erf",
                   {emit(g, n, "Div", {x, constantLike(g, n, M_SQRT2, x)})});
    } else {
      std::string cube = emit(g, n, "Mul", {x, emit(g, n, "Mul", {x, x})});
      std::string poly =
          emit(g, n, "Add",
               {x, emit(g, n, "Mul", {cube, constantLike(g, n, 0.044715, x)})});
      inner = emit(g, n, "Tanh",
                   {emit(g, n, "Mul",
                         {poly, constantLike(g, n, std::sqrt(2 / M_PI), x)})});
    }
    std::string onePlus =
        emit(g, n, "Add", {inner, constantLike(g, n, 1.0, x)});
    std::string half = emit(g, n, "Mul", {x, constantLike(g, n, 0.5, x)});
    add(g, n, "Mul", {half, onePlus}, n.output(0));
    return true;
  }

  /// A 1-D int64 constant.
  std::string intsConstant(onnx::GraphProto &g, const onnx::NodeProto &node,
                           llvm::ArrayRef<int64_t> values) {
    std::string out = freshName(node, "i");
    onnx::NodeProto &c = add(g, node, "Constant", {}, out);
    onnx::AttributeProto *attr = c.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto *t = attr->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values)
      t->add_int64_data(v);
    return out;
  }

  /// Col2Im (18), torch's `fold`: the adjoint of im2col. Each of the block's
  /// kernel offsets scatters its columns into the padded image with the
  /// stride's step, and the offsets' images add up:
  ///   x [N, C*K1*..*Kr, O1*..*Or] -> [N, C, K1..Kr, O1..Or];
  ///   per offset k: its slice as [N, C, O1, 1, .., Or, 1], padded at the end
  ///   of each unit axis to the stride ([N, C, O1, s1, ..]), flattened to
  ///   [N, C, O1*s1, ..] (each column at its strided position), padded to
  ///   start at k*d; the Sum of all offsets, cropped by the Col2Im's pads.
  /// image_shape and block_shape must be constants (torch writes them so).
  bool writeCol2Im(onnx::GraphProto &g, const onnx::NodeProto &n,
                   const Scope &scope) {
    auto constant = [&](int i) -> std::optional<std::vector<int64_t>> {
      if (n.input_size() <= i)
        return std::nullopt;
      const onnx::TensorProto *t = scope.find(n.input(i));
      return t ? readInts(*t) : std::nullopt;
    };
    std::optional<std::vector<int64_t>> image = constant(1),
                                        block = constant(2);
    if (!image || !block)
      return refuse(n, "image_shape and block_shape must be constants");
    size_t rank = image->size();
    if (rank == 0 || block->size() != rank)
      return refuse(n, "image_shape and block_shape must have the same, "
                       "non-zero length");
    auto ints = [&](llvm::StringRef name, int64_t fill, size_t count) {
      std::vector<int64_t> v(count, fill);
      if (const auto *a = findAttr(n, name))
        v.assign(a->ints().begin(), a->ints().end());
      return v;
    };
    std::vector<int64_t> dil = ints("dilations", 1, rank),
                         str = ints("strides", 1, rank),
                         pads = ints("pads", 0, 2 * rank);
    if (dil.size() != rank || str.size() != rank || pads.size() != 2 * rank)
      return refuse(n, "dilations, strides and pads must match the image's "
                       "rank");
    std::vector<int64_t> blocks(rank), padded(rank), total(rank);
    for (size_t i = 0; i < rank; ++i) {
      if ((*block)[i] < 1 || dil[i] < 1 || str[i] < 1 || pads[i] < 0 ||
          pads[rank + i] < 0)
        return refuse(n, "block sizes, dilations and strides must be "
                         "positive and pads not negative");
      padded[i] = (*image)[i] + pads[i] + pads[rank + i];
      int64_t span = dil[i] * ((*block)[i] - 1) + 1;
      if (padded[i] < span)
        return refuse(n, "the block does not fit in the padded image");
      blocks[i] = (padded[i] - span) / str[i] + 1;
      // What the strided columns of every offset cover; at least the padded
      // image, so that the crop below stays inside.
      total[i] =
          std::max(padded[i], dil[i] * ((*block)[i] - 1) + blocks[i] * str[i]);
    }
    // [N, C, K1..Kr, O1..Or]: 0 keeps N, -1 finds C.
    std::vector<int64_t> split = {0, -1};
    split.insert(split.end(), block->begin(), block->end());
    split.insert(split.end(), blocks.begin(), blocks.end());
    std::string x =
        emit(g, n, "Reshape", {n.input(0), intsConstant(g, n, split)});
    std::vector<int64_t> unitShape = {0, -1}, stridePads(4 + 4 * rank, 0),
                         flatShape = {0, -1};
    for (size_t i = 0; i < rank; ++i) {
      unitShape.push_back(blocks[i]);
      unitShape.push_back(1);
      stridePads[2 + 2 * rank + 2 + 2 * i + 1] = str[i] - 1;
      flatShape.push_back(blocks[i] * str[i]);
    }
    std::vector<int64_t> kernelAxes(rank);
    for (size_t i = 0; i < rank; ++i)
      kernelAxes[i] = int64_t(2 + i);
    std::string axes = intsConstant(g, n, kernelAxes);
    std::vector<std::string> terms;
    std::vector<int64_t> k(rank, 0);
    for (bool more = true; more;) {
      std::vector<int64_t> ends(rank);
      for (size_t i = 0; i < rank; ++i)
        ends[i] = k[i] + 1;
      std::string t =
          emit(g, n, "Slice",
               {x, intsConstant(g, n, k), intsConstant(g, n, ends), axes});
      t = emit(g, n, "Reshape", {t, intsConstant(g, n, unitShape)});
      t = emit(g, n, "Pad", {t, intsConstant(g, n, stridePads)});
      t = emit(g, n, "Reshape", {t, intsConstant(g, n, flatShape)});
      std::vector<int64_t> place(4 + 2 * rank, 0);
      for (size_t i = 0; i < rank; ++i) {
        place[2 + i] = k[i] * dil[i];
        place[4 + rank + i] = total[i] - k[i] * dil[i] - blocks[i] * str[i];
      }
      terms.push_back(emit(g, n, "Pad", {t, intsConstant(g, n, place)}));
      // The next offset, the last axis fastest.
      more = false;
      for (size_t i = rank; i-- > 0;) {
        if (++k[i] < (*block)[i]) {
          more = true;
          break;
        }
        k[i] = 0;
      }
    }
    std::string sum = emit(g, n, "Sum", terms);
    std::vector<int64_t> starts(rank), stops(rank);
    for (size_t i = 0; i < rank; ++i) {
      starts[i] = pads[i];
      stops[i] = pads[i] + (*image)[i];
    }
    add(g, n, "Slice",
        {sum, intsConstant(g, n, starts), intsConstant(g, n, stops), axes},
        n.output(0));
    return true;
  }

  bool convert(onnx::NodeProto &node, const Scope &scope,
               onnx::GraphProto &graph) {
    llvm::StringRef op = node.op_type();
    auto keep = [&] {
      *graph.add_node() = std::move(node);
      return true;
    };
    if (typeOnlyChanges().contains(op))
      return keep();

    if (isReduction(op)) {
      bool noop = false;
      if (const auto *a = findAttr(node, "noop_with_empty_axes"))
        noop = a->i() != 0;
      eraseAttr(node, "noop_with_empty_axes");
      std::vector<int64_t> axes;
      if (node.input_size() >= 2 && !node.input(1).empty()) {
        const onnx::TensorProto *t = scope.find(node.input(1));
        std::optional<std::vector<int64_t>> values;
        if (t)
          values = readInts(*t);
        if (!values)
          return refuse(node, "its axes are not a constant (opset 17 takes "
                              "them as an attribute)");
        axes = *values;
        node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
      }
      if (axes.empty() && noop) {
        node.set_op_type("Identity");
        node.clear_attribute();
        return keep();
      }
      if (!axes.empty()) {
        onnx::AttributeProto *attr = node.add_attribute();
        attr->set_name("axes");
        attr->set_type(onnx::AttributeProto::INTS);
        for (int64_t a : axes)
          attr->add_ints(a);
      }
      return keep();
    }
    if (op == "Split") {
      if (const auto *a = findAttr(node, "num_outputs")) {
        if (a->i() != node.output_size())
          return refuse(node, "num_outputs differs from its outputs' count");
        eraseAttr(node, "num_outputs");
      }
      return keep();
    }
    if (op == "Pad") {
      if (node.input_size() >= 4 && !node.input(3).empty())
        return refuse(node, "padding chosen axes (its 'axes' input) is not "
                            "supported yet");
      if (const auto *a = findAttr(node, "mode"); a && a->s() == "wrap")
        return refuse(node, "mode 'wrap' is not supported yet");
      return keep();
    }
    if (op == "Resize") {
      bool ok = dropDefault(node, "antialias",
                            [](const auto &a) { return a.i() == 0; }) &&
                dropDefault(node, "keep_aspect_ratio_policy",
                            [](const auto &a) { return a.s() == "stretch"; });
      if (const auto *a = findAttr(node, "coordinate_transformation_mode");
          ok && a && a->s() == "half_pixel_symmetric")
        return refuse(node, "coordinate_transformation_mode "
                            "'half_pixel_symmetric' is not supported yet");
      return ok && keep();
    }
    if (op == "AveragePool" || op == "LpPool") {
      bool ok = dropDefault(node, "dilations", [](const auto &a) {
        return llvm::all_of(a.ints(), [](int64_t d) { return d == 1; });
      });
      if (op == "LpPool")
        ok = ok && dropDefault(node, "ceil_mode",
                               [](const auto &a) { return a.i() == 0; });
      return ok && keep();
    }
    if (op == "Cast" || op == "CastLike") {
      // saturate only concerns float8 targets, which strata refuses anyway.
      eraseAttr(node, "saturate");
      return keep();
    }
    if (op == "QuantizeLinear" || op == "DequantizeLinear") {
      eraseAttr(node, "saturate");
      bool ok = dropDefault(node, "block_size",
                            [](const auto &a) { return a.i() == 0; }) &&
                dropDefault(node, "output_dtype",
                            [](const auto &a) { return a.i() == 0; });
      return ok && keep();
    }
    if (op == "ScatterElements" || op == "ScatterND") {
      if (const auto *a = findAttr(node, "reduction");
          a && (a->s() == "max" || a->s() == "min"))
        return refuse(node, "reduction '" + a->s() + "' is not supported yet");
      return keep();
    }
    if (op == "GridSample") {
      for (auto &attr : *node.mutable_attribute())
        if (attr.name() == "mode") {
          if (attr.s() == "linear")
            attr.set_s("bilinear");
          else if (attr.s() == "cubic")
            attr.set_s("bicubic");
        }
      return keep();
    }
    if (op == "Gelu")
      return writeGelu(graph, node);
    if (op == "Col2Im")
      return writeCol2Im(graph, node, scope);
    if (op == "Mish") {
      // x * tanh(softplus(x))
      const std::string &x = node.input(0);
      std::string t =
          emit(graph, node, "Tanh", {emit(graph, node, "Softplus", {x})});
      add(graph, node, "Mul", {x, t}, node.output(0));
      return true;
    }

    // New ops that strata's converters read as they are; the ONNX library
    // has no schema for them, so its checker cannot look at the model.
    if (op == "GroupNormalization" || op == "BitwiseNot" ||
        op == "BitwiseAnd" || op == "BitwiseOr" || op == "BitwiseXor") {
      checkable = false;
      return keep();
    }
    static const llvm::StringSet<> newer = {
        "AffineGrid",   "CenterCropPad",  "DeformConv",   "DFT",
        "ImageDecoder", "RegexFullMatch", "StringConcat", "StringSplit"};
    if (newer.contains(op))
      return refuse(node, "this operator's opset-18+ form has no opset-17 "
                          "equivalent in strata yet");
    return keep(); // unchanged since opset 17 or before
  }
};

} // namespace

bool strata::onnx_import::bridgeToOpset(
    onnx::ModelProto &model, int64_t from, int64_t to,
    llvm::function_ref<void(const std::string &)> report, bool &checkable) {
  Bridge bridge(from, report);
  if (!bridge.run(*model.mutable_graph(), nullptr))
    return false;
  checkable = bridge.checkable;
  for (auto &op : *model.mutable_opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx")
      op.set_version(to);
  return true;
}
