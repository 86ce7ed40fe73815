//===- ValuesTest.cpp - Sequences, optionals and model signatures ---------===//
//
// SequenceProto and OptionalProto files of the installed ONNX test data and
// hand-built ones (nested, empty), model signatures, the leaf names and
// bindings of flattenValue and their round trip through assembleValue,
// truncated files and files of another kind, the comparison of values, and
// a sweep reading every .pb of the test data by its model's signature.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <onnx/onnx-data_pb.h>

#include <iostream>

using namespace strata::tio;
using namespace strata::tio::test;
using Kind = HostValue::Kind;

namespace {

using Leaves = std::vector<std::pair<std::string, HostTensor>>;
using Bindings = std::map<std::string, std::vector<int64_t>>;

const ValueType tensorType = ValueType::tensor();
const ValueType seqOfTensors = ValueType::sequenceOf(ValueType::tensor());

HostTensor i64s(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return tensorOf(ElementType::I64, std::move(shape), values);
}

HostTensor f32s(std::vector<int64_t> shape, std::vector<float> values) {
  return tensorOf(ElementType::F32, std::move(shape), values);
}

/// Same structure and byte-identical tensors.
bool sameValue(const HostValue &a, const HostValue &b) {
  if (a.kind != b.kind || a.elements.size() != b.elements.size())
    return false;
  if (a.kind == Kind::Tensor)
    return a.tensor.type == b.tensor.type && a.tensor.shape == b.tensor.shape &&
           a.tensor.bytes == b.tensor.bytes &&
           a.tensor.strings == b.tensor.strings;
  for (size_t i = 0; i < a.elements.size(); ++i)
    if (!sameValue(a.elements[i], b.elements[i]))
      return false;
  return true;
}

/// The message of the TensorIOError \p f throws ("" when it does not).
template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const TensorIOError &e) {
    return e.what();
  }
  return "";
}

std::vector<uint8_t> bytesOf(const google::protobuf::Message &message) {
  std::string text = message.SerializeAsString();
  return {text.begin(), text.end()};
}

HostValue parse(const std::vector<uint8_t> &bytes, const ValueType &type) {
  return parseValueProto(bytes.data(), bytes.size(), type, "mem.pb");
}

void setTensor(onnx::TensorProto *proto, const HostTensor &tensor) {
  ASSERT_TRUE(proto->ParseFromString(encodeTensorProto(tensor)));
}

/// Assembles \p type named \p name from \p leaves.
HostValue assembleFrom(const Leaves &leaves, const std::string &name,
                       const ValueType &type) {
  return assembleValue(name, type,
                       [&](const std::string &leaf) -> const HostTensor * {
                         for (const auto &[n, t] : leaves)
                           if (n == leaf)
                             return &t;
                         return nullptr;
                       });
}

TEST(Values, ReadsSequenceOfTensors) {
  std::string path =
      testData("node/test_sequence_insert_at_back/test_data_set_0/input_0.pb");
  HostValue value = readValueProto(path, seqOfTensors);
  HostValue expected =
      HostValue::sequence({HostValue::fromTensor(i64s({4}, {1, 2, 3, 4})),
                           HostValue::fromTensor(i64s({3}, {5, 6, 7})),
                           HostValue::fromTensor(i64s({2}, {8, 9}))});
  EXPECT_TRUE(sameValue(value, expected)) << value.describe();
  EXPECT_EQ(value.describe(), "seq[i64[4], i64[3], i64[2]]");
}

TEST(Values, ReadsEmptyOptionalAndEmptySequence) {
  HostValue empty = readValueProto(
      testData("node/test_optional_has_element_empty/test_data_set_0/"
               "input_0.pb"),
      ValueType::optionalOf(tensorType));
  EXPECT_EQ(empty.kind, Kind::Optional);
  EXPECT_TRUE(empty.elements.empty());
  EXPECT_EQ(empty.describe(), "opt[]");
  // elem_type TENSOR and no values.
  HostValue none = readValueProto(
      testData("node/test_loop13_seq/test_data_set_0/input_2.pb"),
      seqOfTensors);
  EXPECT_EQ(none.kind, Kind::Sequence);
  EXPECT_TRUE(none.elements.empty());
}

TEST(Values, ReadsOptionalOfSequence) {
  std::string dir =
      testData("node/test_optional_get_element_sequence/test_data_set_0/");
  HostValue in =
      readValueProto(dir + "input_0.pb", ValueType::optionalOf(seqOfTensors));
  HostValue held = HostValue::sequence({HostValue::fromTensor(
      tensorOf<int32_t>(ElementType::I32, {4}, {1, 2, 3, 4}))});
  EXPECT_TRUE(sameValue(in, HostValue::optional(held))) << in.describe();
  EXPECT_EQ(in.describe(), "opt[seq[i32[4]]]");
  // The model's output (OptionalGetElement) is the sequence it holds.
  HostValue out = readValueProto(dir + "output_0.pb", seqOfTensors);
  EXPECT_TRUE(sameValue(out, held)) << out.describe();
  // The optional tensor of test_loop16_seq_none: a 0-d f32.
  HostValue scalar = readValueProto(
      testData("node/test_loop16_seq_none/test_data_set_0/input_2.pb"),
      ValueType::optionalOf(seqOfTensors));
  EXPECT_EQ(scalar.describe(), "opt[seq[f32[]]]");
}

TEST(Values, ReadsNestedHandBuiltFiles) {
  // seq<opt<tensor>>: [present, empty, present].
  onnx::SequenceProto seq;
  seq.set_elem_type(onnx::SequenceProto::OPTIONAL);
  for (int i = 0; i < 3; ++i) {
    onnx::OptionalProto *opt = seq.add_optional_values();
    if (i == 1)
      continue; // elem_type UNDEFINED: empty
    opt->set_elem_type(onnx::OptionalProto::TENSOR);
    setTensor(opt->mutable_tensor_value(), f32s({2}, {1.0f * i, 2.0f}));
  }
  ValueType type = ValueType::sequenceOf(ValueType::optionalOf(tensorType));
  HostValue value = parse(bytesOf(seq), type);
  EXPECT_EQ(value.describe(), "seq[opt[f32[2]], opt[], opt[f32[2]]]");

  // seq<seq<tensor>>: [[a], [], [b, c]], and opt<opt<tensor>>.
  onnx::SequenceProto outer;
  outer.set_elem_type(onnx::SequenceProto::SEQUENCE);
  for (int n : {1, 0, 2}) {
    onnx::SequenceProto *inner = outer.add_sequence_values();
    inner->set_elem_type(onnx::SequenceProto::TENSOR);
    for (int j = 0; j < n; ++j)
      setTensor(inner->add_tensor_values(), i64s({1}, {j}));
  }
  HostValue nested = parse(bytesOf(outer), ValueType::sequenceOf(seqOfTensors));
  EXPECT_EQ(nested.describe(), "seq[seq[i64[1]], seq[], seq[i64[1], i64[1]]]");
  onnx::OptionalProto twice;
  twice.set_elem_type(onnx::OptionalProto::OPTIONAL);
  twice.mutable_optional_value()->set_elem_type(onnx::OptionalProto::TENSOR);
  setTensor(twice.mutable_optional_value()->mutable_tensor_value(),
            i64s({}, {7}));
  EXPECT_EQ(parse(bytesOf(twice),
                  ValueType::optionalOf(ValueType::optionalOf(tensorType)))
                .describe(),
            "opt[opt[i64[]]]");
}

TEST(Values, ReadsModelSignatures) {
  ModelSignature insert = readModelSignature(
      testData("node/test_sequence_insert_at_back/model.onnx"));
  ASSERT_EQ(insert.inputs.size(), 2u);
  EXPECT_EQ(insert.inputs[0].first, "sequence");
  EXPECT_EQ(insert.inputs[0].second, seqOfTensors);
  EXPECT_EQ(insert.inputs[1].first, "tensor");
  EXPECT_EQ(insert.inputs[1].second, tensorType);
  ASSERT_EQ(insert.outputs.size(), 1u);
  EXPECT_EQ(insert.outputs[0].first, "output_sequence");
  EXPECT_EQ(insert.outputs[0].second.describe(), "seq<tensor>");

  ModelSignature empty = readModelSignature(
      testData("node/test_optional_has_element_empty/model.onnx"));
  ASSERT_EQ(empty.inputs.size(), 1u);
  EXPECT_EQ(empty.inputs[0].first, "optional_input");
  EXPECT_EQ(empty.inputs[0].second, ValueType::optionalOf(tensorType));
  ASSERT_EQ(empty.outputs.size(), 1u);
  EXPECT_EQ(empty.outputs[0].second, tensorType);

  ModelSignature getSeq = readModelSignature(
      testData("node/test_optional_get_element_sequence/model.onnx"));
  ASSERT_EQ(getSeq.inputs.size(), 1u);
  EXPECT_EQ(getSeq.inputs[0].second.describe(), "opt<seq<tensor>>");
  ASSERT_EQ(getSeq.outputs.size(), 1u);
  EXPECT_EQ(getSeq.outputs[0].second, seqOfTensors);
  EXPECT_NE(getSeq.inputs[0].second, ValueType::optionalOf(tensorType));

  // IR version 3: the weights are listed as inputs too, and left out.
  ModelSignature conv =
      readModelSignature(testData("pytorch-converted/test_Conv2d/model.onnx"));
  ASSERT_EQ(conv.inputs.size(), 1u);
  EXPECT_EQ(conv.inputs[0].first, "0");
  ASSERT_EQ(conv.outputs.size(), 1u);
  EXPECT_EQ(conv.outputs[0].first, "3");
}

TEST(Values, SignatureErrorsNameTheFile) {
  ScratchDir dir;
  std::string missing = dir / "missing.onnx";
  EXPECT_NE(errorOf([&] { readModelSignature(missing); }).find(missing),
            std::string::npos);
  std::string garbage = dir / "garbage.onnx";
  writeBytes(garbage, {0xff, 0xff, 0xff});
  EXPECT_EQ(errorOf([&] { readModelSignature(garbage); }),
            garbage + ": not a valid ONNX model (onnx.ModelProto parse error)");

  onnx::ModelProto model;
  onnx::ValueInfoProto *in = model.mutable_graph()->add_input();
  in->set_name("m");
  in->mutable_type()->mutable_map_type()->set_key_type(
      onnx::TensorProto::INT64);
  std::string mapModel = dir / "map.onnx";
  writeBytes(mapModel, bytesOf(model));
  EXPECT_EQ(errorOf([&] { readModelSignature(mapModel); }),
            mapModel + ": input 'm' is or holds a map, which is not supported");
  std::string noGraph = dir / "nograph.onnx";
  writeBytes(noGraph, {});
  EXPECT_EQ(errorOf([&] { readModelSignature(noGraph); }),
            noGraph + ": the ONNX model has no graph");
}

TEST(Values, FlattenNamesLeavesAndBindings) {
  HostTensor a = f32s({2}, {1, 2}), b = f32s({1, 3}, {3, 4, 5}),
             c = f32s({}, {6});
  Leaves leaves;
  Bindings bindings;
  flattenValue("x", HostValue::fromTensor(a), leaves, bindings);
  flattenValue(
      "s",
      HostValue::sequence({HostValue::fromTensor(a), HostValue::fromTensor(b),
                           HostValue::fromTensor(c)}),
      leaves, bindings);
  flattenValue("o",
               HostValue::optional(HostValue::sequence(
                   {HostValue::fromTensor(b), HostValue::fromTensor(c)})),
               leaves, bindings);
  flattenValue("e", HostValue::optional(), leaves, bindings);
  flattenValue("n", HostValue::sequence({}), leaves, bindings);
  flattenValue(
      "ss",
      HostValue::sequence({HostValue::sequence({HostValue::fromTensor(a)}),
                           HostValue::sequence({HostValue::fromTensor(b),
                                                HostValue::fromTensor(c)})}),
      leaves, bindings);
  std::vector<std::string> names;
  for (const auto &leaf : leaves)
    names.push_back(leaf.first);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "s[0]", "s[1]", "s[2]",
                                             "o[0][0]", "o[0][1]", "ss[0][0]",
                                             "ss[1][0]", "ss[1][1]"}));
  EXPECT_EQ(leaves[2].second.shape, b.shape);
  Bindings expected = {
      {"x", {2}},      {"s", {3}},        {"s[0]", {2}},  {"s[1]", {1, 3}},
      {"s[2]", {}},    {"o", {1}},        {"o[0]", {2}},  {"o[0][0]", {1, 3}},
      {"o[0][1]", {}}, {"e", {0}},        {"n", {0}},     {"ss", {2}},
      {"ss[0]", {1}},  {"ss[0][0]", {2}}, {"ss[1]", {2}}, {"ss[1][0]", {1, 3}},
      {"ss[1][1]", {}}};
  EXPECT_EQ(bindings, expected);

  HostValue bad = HostValue::optional(HostValue::fromTensor(a));
  bad.elements.push_back(HostValue::fromTensor(a));
  EXPECT_EQ(errorOf([&] { flattenValue("bad", bad, leaves, bindings); }),
            "optional 'bad' holds 2 values (at most one)");
}

TEST(Values, AssembleInvertsFlatten) {
  HostTensor a = f32s({2}, {1, 2}), b = i64s({3}, {3, 4, 5});
  struct Case {
    ValueType type;
    HostValue value;
  } cases[] = {
      {tensorType, HostValue::fromTensor(a)},
      {seqOfTensors, HostValue::sequence(
                         {HostValue::fromTensor(a), HostValue::fromTensor(b)})},
      {seqOfTensors, HostValue::sequence({})},
      {ValueType::optionalOf(tensorType), HostValue::optional()},
      {ValueType::optionalOf(tensorType),
       HostValue::optional(HostValue::fromTensor(b))},
      {ValueType::optionalOf(seqOfTensors),
       HostValue::optional(HostValue::sequence(
           {HostValue::fromTensor(a), HostValue::fromTensor(a)}))},
      {ValueType::sequenceOf(seqOfTensors),
       HostValue::sequence({HostValue::sequence({HostValue::fromTensor(a)}),
                            HostValue::sequence({HostValue::fromTensor(b),
                                                 HostValue::fromTensor(a)})})},
  };
  for (const Case &c : cases) {
    Leaves leaves;
    Bindings bindings;
    flattenValue("v", c.value, leaves, bindings);
    HostValue back = assembleFrom(leaves, "v", c.type);
    EXPECT_TRUE(sameValue(back, c.value))
        << c.value.describe() << " came back as " << back.describe();
  }

  // What leaves cannot say: an optional holding an empty sequence has no
  // leaves and comes back empty; an empty inner sequence ends the outer one.
  Leaves leaves;
  Bindings bindings;
  flattenValue("o", HostValue::optional(HostValue::sequence({})), leaves,
               bindings);
  EXPECT_TRUE(leaves.empty());
  EXPECT_EQ(bindings, (Bindings{{"o", {1}}, {"o[0]", {0}}}));
  EXPECT_EQ(
      assembleFrom(leaves, "o", ValueType::optionalOf(seqOfTensors)).describe(),
      "opt[]");
  leaves.clear();
  flattenValue(
      "s",
      HostValue::sequence({HostValue::sequence({}),
                           HostValue::sequence({HostValue::fromTensor(a)})}),
      leaves, bindings);
  EXPECT_EQ(
      assembleFrom(leaves, "s", ValueType::sequenceOf(seqOfTensors)).describe(),
      "seq[]");

  // A missing tensor is an error; a sequence ends at its first gap.
  EXPECT_EQ(errorOf([&] { assembleFrom({}, "y", tensorType); }),
            "no tensor named 'y'");
  Leaves gap = {{"s[0]", a}, {"s[2]", b}};
  EXPECT_EQ(assembleFrom(gap, "s", seqOfTensors).describe(), "seq[f32[2]]");
}

TEST(Values, TruncatedFilesAreErrors) {
  for (const char *rel :
       {"node/test_sequence_insert_at_back/test_data_set_0/input_0.pb",
        "node/test_optional_get_element_sequence/test_data_set_0/input_0.pb"}) {
    std::string path = testData(rel);
    ModelSignature signature = readModelSignature(
        testData(std::string(rel).substr(0, std::string(rel).find("/test_d")) +
                 "/model.onnx"));
    const ValueType &type = signature.inputs[0].second;
    std::vector<uint8_t> bytes = fileBytes(path);
    // Cut inside the last tensor's raw_data.
    std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 1);
    std::string message =
        errorOf([&] { parseValueProto(cut.data(), cut.size(), type, path); });
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    // Any cut: an error, or (between fields) a smaller valid value; never
    // a crash or another exception.
    for (size_t n = 0; n < bytes.size(); ++n) {
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
      try {
        HostValue v = parseValueProto(prefix.data(), prefix.size(), type, rel);
        Leaves leaves;
        Bindings bindings;
        flattenValue("v", v, leaves, bindings);
        for (const auto &leaf : leaves)
          EXPECT_NO_THROW(leaf.second.validate());
      } catch (const TensorIOError &) {
      }
    }
    ScratchDir dir;
    writeBytes(dir / "cut.pb", cut);
    EXPECT_THROW(readValueProto(dir / "cut.pb", type), TensorIOError);
  }
}

TEST(Values, FilesOfAnotherKindAreErrors) {
  std::string tensorFile = testData("node/test_add/test_data_set_0/input_0.pb");
  std::string seqFile =
      testData("node/test_sequence_insert_at_back/test_data_set_0/input_0.pb");
  std::string optSeqFile = testData(
      "node/test_optional_get_element_sequence/test_data_set_0/input_0.pb");
  std::string emptyOptFile = testData(
      "node/test_optional_has_element_empty/test_data_set_0/input_0.pb");
  ValueType optTensor = ValueType::optionalOf(tensorType);
  struct Case {
    std::string path;
    ValueType type;
    std::string error;
  } cases[] = {
      {tensorFile, seqOfTensors, "not an onnx.SequenceProto"},
      {tensorFile, optTensor, "not an onnx.OptionalProto"},
      {seqFile, tensorType, "segmented TensorProto"},
      {seqFile, optTensor, "holds more than one value"},
      {seqFile, ValueType::sequenceOf(seqOfTensors),
       "holds TENSOR values where the model declares a seq<tensor>"},
      {optSeqFile, optTensor,
       "holds SEQUENCE values where the model declares a tensor"},
      // Its name lands in dims: too many elements (any error naming the
      // file will do).
      {optSeqFile, tensorType, ""},
      {emptyOptFile, tensorType, "no data_type"},
  };
  for (const Case &c : cases) {
    std::string message = errorOf([&] { readValueProto(c.path, c.type); });
    EXPECT_EQ(message.rfind(c.path + ": ", 0), 0u)
        << c.path << " as " << c.type.describe() << ": " << message;
    EXPECT_NE(message.find(c.error), std::string::npos)
        << c.path << " as " << c.type.describe() << ": " << message;
  }

  // Values that disagree with elem_type, and unsupported element kinds.
  onnx::SequenceProto seq;
  seq.set_elem_type(onnx::SequenceProto::SEQUENCE);
  setTensor(seq.add_tensor_values(), f32s({1}, {1}));
  EXPECT_EQ(errorOf([&] { parse(bytesOf(seq), seqOfTensors); }),
            "mem.pb: onnx.SequenceProto with elem_type SEQUENCE holds TENSOR "
            "values");
  seq.Clear();
  seq.set_elem_type(onnx::SequenceProto::MAP);
  EXPECT_EQ(errorOf([&] { parse(bytesOf(seq), seqOfTensors); }),
            "mem.pb: onnx.SequenceProto of MAP values, which are not "
            "supported");
  seq.set_elem_type(42);
  EXPECT_EQ(errorOf([&] { parse(bytesOf(seq), seqOfTensors); }),
            "mem.pb: onnx.SequenceProto with unknown elem_type 42");
  onnx::OptionalProto opt;
  opt.set_elem_type(onnx::OptionalProto::TENSOR);
  EXPECT_EQ(errorOf([&] { parse(bytesOf(opt), optTensor); }),
            "mem.pb: onnx.OptionalProto with elem_type TENSOR holds no value");
  // A bad tensor inside is named by its place.
  seq.Clear();
  seq.set_elem_type(onnx::SequenceProto::TENSOR);
  setTensor(seq.add_tensor_values(), f32s({1}, {1}));
  onnx::TensorProto *broken = seq.add_tensor_values();
  broken->set_data_type(onnx::TensorProto::FLOAT);
  broken->add_dims(3);
  broken->set_raw_data(std::string(8, '\0'));
  EXPECT_EQ(errorOf([&] { parse(bytesOf(seq), seqOfTensors); }),
            "mem.pb: element 1: f32[3] needs 12 bytes but raw_data has 8");
  // A malformed type (a sequence without its element type).
  ValueType bare;
  bare.kind = Kind::Sequence;
  EXPECT_NE(errorOf([&] {
              readValueProto(seqFile, bare);
            }).find("has 0 element types"),
            std::string::npos);
}

TEST(Values, ComparisonChecksStructureAndValues) {
  HostValue expected =
      HostValue::sequence({HostValue::fromTensor(f32s({2}, {1, 2})),
                           HostValue::fromTensor(f32s({3}, {3, 4, 5}))});
  CompareResult same = allClose(expected, expected, 1e-3, 1e-5);
  EXPECT_TRUE(same.passed) << same.summary();
  EXPECT_EQ(same.numElements, 5);
  EXPECT_EQ(same.summary().rfind("PASSED: 5 elements within", 0), 0u)
      << same.summary();

  HostValue off = expected;
  off.elements[1] = HostValue::fromTensor(f32s({3}, {3, 4.5f, 5}));
  CompareResult differs = allClose(off, expected, 1e-3, 1e-5);
  EXPECT_FALSE(differs.passed);
  EXPECT_EQ(differs.numMismatches, 1);
  EXPECT_EQ(differs.worstCoords, (std::vector<int64_t>{1}));
  EXPECT_EQ(differs.summary().rfind(
                "FAILED: element 1: 1 of 3 elements differ; worst at [1]: "
                "actual 4.5, expected 4",
                0),
            0u)
      << differs.summary();

  HostValue shorter = HostValue::sequence({expected.elements[0]});
  EXPECT_EQ(allClose(shorter, expected, 1e-3, 1e-5).summary(),
            "FAILED: sequence length mismatch: actual 1 elements, expected 2");
  EXPECT_EQ(allClose(expected.elements[0], expected, 1e-3, 1e-5).summary(),
            "FAILED: kind mismatch: actual is a tensor (f32[2]), expected a "
            "sequence (seq[f32[2], f32[3]])");
  EXPECT_EQ(allClose(HostValue::optional(), HostValue::optional(expected), 0, 0)
                .summary(),
            "FAILED: optional mismatch: actual is empty, expected to hold "
            "seq[f32[2], f32[3]]");
  CompareResult nested =
      allClose(HostValue::optional(off), HostValue::optional(expected), 0, 0);
  EXPECT_EQ(nested.summary().rfind("FAILED: element 0.1: 1 of 3 elements", 0),
            0u)
      << nested.summary();
  CompareResult typeInside =
      allClose(HostValue::sequence({HostValue::fromTensor(i64s({2}, {1, 2}))}),
               HostValue::sequence({expected.elements[0]}), 0, 0);
  EXPECT_EQ(typeInside.summary(), "FAILED: element 0: element type mismatch: "
                                  "actual i64, expected f32");
  EXPECT_TRUE(
      allClose(HostValue::optional(), HostValue::optional(), 0, 0).passed);

  // Tensors compare exactly as the tensor overload does.
  HostTensor x = f32s({2}, {1, 2}), y = f32s({2}, {1, 2.5f});
  EXPECT_EQ(allClose(HostValue::fromTensor(x), HostValue::fromTensor(y), 0, 0)
                .summary(),
            allClose(x, y, 0, 0).summary());
}

TEST(Values, FailedAllocationsAreErrors) {
  std::string path =
      testData("node/test_sequence_insert_at_back/test_data_set_0/input_0.pb");
  HostValue expected = readValueProto(path, seqOfTensors);
  for (uint64_t n = 0;; ++n) {
    ASSERT_LT(n, 100u);
    strata::tio::testing::failAllocationAfter(n);
    std::string message = errorOf([&] {
      EXPECT_TRUE(sameValue(readValueProto(path, seqOfTensors), expected));
    });
    bool pending = strata::tio::testing::clearAllocationFailure();
    if (message.empty()) {
      EXPECT_TRUE(pending);
      EXPECT_GT(n, 3u); // the file and each of the three tensors
      break;
    }
    EXPECT_FALSE(pending);
    EXPECT_EQ(message.rfind(path, 0), 0u) << message;
    EXPECT_NE(message.find("cannot allocate"), std::string::npos) << message;
  }
}

TEST(Values, SweepOfAllConformanceData) {
  std::vector<TestCase> cases =
      findCases({testData("node"), testData("pytorch-converted"),
                 testData("pytorch-operator"), testData("simple")});
  size_t files = 0, sequences = 0, optionals = 0;
  for (const TestCase &c : cases) {
    ModelSignature signature = readModelSignature(c.modelPath);
    for (const TestDataSet &set : c.dataSets) {
      ASSERT_EQ(set.inputs.size(), signature.inputs.size()) << set.dir;
      ASSERT_EQ(set.outputs.size(), signature.outputs.size()) << set.dir;
      for (bool isInput : {true, false}) {
        const auto &paths = isInput ? set.inputs : set.outputs;
        const auto &declared = isInput ? signature.inputs : signature.outputs;
        for (size_t k = 0; k < paths.size(); ++k) {
          const auto &[name, type] = declared[k];
          HostValue value;
          ASSERT_NO_THROW(value = readValueProto(paths[k], type)) << paths[k];
          ++files;
          sequences += type.kind == Kind::Sequence;
          optionals += type.kind == Kind::Optional;
          Leaves leaves;
          Bindings bindings;
          flattenValue(name, value, leaves, bindings);
          for (const auto &leaf : leaves)
            EXPECT_NO_THROW(leaf.second.validate()) << paths[k];
          if (type.kind == Kind::Tensor)
            EXPECT_EQ(bindings.at(name), value.tensor.shape);
          HostValue back = assembleFrom(leaves, name, type);
          // An optional holding an empty sequence has no leaves (see
          // assembleValue); the data has none.
          EXPECT_TRUE(sameValue(back, value))
              << paths[k] << ": " << value.describe() << " came back as "
              << back.describe();
        }
      }
    }
  }
  std::cout << "files read: " << files << ", sequences: " << sequences
            << ", optionals: " << optionals << "\n";
  EXPECT_EQ(cases.size(), 1072u);
  EXPECT_GT(files, 3000u);
  EXPECT_EQ(sequences, 43u);
  EXPECT_EQ(optionals, 8u);
}

} // namespace
