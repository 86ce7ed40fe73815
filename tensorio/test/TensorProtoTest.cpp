//===- TensorProtoTest.cpp - TensorProto files ------------------*- C++ -*-===//
//
// TensorProtos with data in the typed fields (fixtures/pb, written by
// onnx.helper) and files of the installed ONNX test data, each checked
// against onnx.numpy_helper's reading of the same file; round trips of every
// element type; truncated and malformed files; and a sweep over every .pb of
// the test data that checks each file the model declares as a tensor reads
// with the declared element type.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <iostream>
#include <set>

using namespace strata::tio;
using namespace strata::tio::test;

namespace {

/// Same type, shape and values as numpy's reading (NaN matching NaN).
void expectSameAsNumpy(const HostTensor &t, const HostTensor &ref,
                       const std::string &what) {
  EXPECT_EQ(t.type, ref.type) << what;
  EXPECT_EQ(t.shape, ref.shape) << what;
  CompareResult r = allClose(t, ref, 0, 0);
  EXPECT_TRUE(r.passed) << what << ": " << r.summary();
  if (!isFloatingPoint(t.type))
    EXPECT_EQ(t.bytes, ref.bytes) << what;
}

TEST(TensorProto, ReadsTypedFieldsLikeNumpyHelper) {
  for (const char *name :
       {"typed_float", "typed_double", "typed_int32", "typed_int64",
        "typed_int8", "typed_int16", "typed_uint8", "typed_uint16",
        "typed_uint32", "typed_uint64", "typed_bool", "typed_float16",
        "typed_scalar", "typed_empty"}) {
    NamedTensor t = readTensorProto(fixture(std::string("pb/") + name + ".pb"));
    EXPECT_EQ(t.name, name);
    HostTensor ref = readNpy(fixture(std::string("pb/") + name + ".npy"));
    expectSameAsNumpy(t.tensor, ref, name);
  }
  NamedTensor f16 = readTensorProto(fixture("pb/typed_float16.pb"));
  EXPECT_EQ(f16.tensor.elementAsDouble(0), 1.5);
  EXPECT_EQ(f16.tensor.elementAsDouble(5), 65504.0);
  NamedTensor scalar = readTensorProto(fixture("pb/typed_scalar.pb"));
  EXPECT_TRUE(scalar.tensor.shape.empty());
  EXPECT_EQ(scalar.tensor.elementAsDouble(0), 4.25);
}

TEST(TensorProto, ReadsBfloat16Bits) {
  NamedTensor t = readTensorProto(fixture("pb/typed_bfloat16.pb"));
  EXPECT_EQ(t.tensor.type, ElementType::BF16);
  EXPECT_EQ(t.tensor.shape, (std::vector<int64_t>{2, 3}));
  // onnx 1.12's numpy_helper widens bfloat16 to float32.
  HostTensor ref = readNpy(fixture("pb/typed_bfloat16.npy"));
  ASSERT_EQ(ref.type, ElementType::F32);
  for (size_t i = 0; i < 6; ++i) {
    double mine = t.tensor.elementAsDouble(i), theirs = ref.elementAsDouble(i);
    if (std::isnan(theirs))
      EXPECT_TRUE(std::isnan(mine)) << i;
    else
      EXPECT_EQ(mine, theirs) << i;
  }
  EXPECT_EQ(t.tensor.elementAsDouble(0), 1.5);
}

TEST(TensorProto, ReadsConformanceDataLikeNumpyHelper) {
  struct Case {
    const char *rel, *ref;
    ElementType type;
    std::vector<int64_t> shape;
  } cases[] = {
      {"node/test_add/test_data_set_0/input_0.pb",
       "data_test_add_input_0",
       ElementType::F32,
       {3, 4, 5}},
      {"node/test_cast_FLOAT_to_FLOAT16/test_data_set_0/output_0.pb",
       "data_test_cast_FLOAT_to_FLOAT16_output_0",
       ElementType::F16,
       {3, 4}},
      {"node/test_and2d/test_data_set_0/output_0.pb",
       "data_test_and2d_output_0",
       ElementType::Bool,
       {3, 4}},
      {"node/test_argmax_default_axis_example/test_data_set_0/output_0.pb",
       "data_test_argmax_default_axis_example_output_0",
       ElementType::I64,
       {1, 2}},
      {"node/test_bitshift_left_uint64/test_data_set_0/input_0.pb",
       "data_test_bitshift_left_uint64_input_0",
       ElementType::U64,
       {3}},
      {"node/test_max_int16/test_data_set_0/input_0.pb",
       "data_test_max_int16_input_0",
       ElementType::I16,
       {3}},
      {"node/test_bernoulli/test_data_set_0/input_0.pb",
       "data_test_bernoulli_input_0",
       ElementType::F64,
       {10}},
  };
  for (const Case &c : cases) {
    NamedTensor t = readTensorProto(testData(c.rel));
    EXPECT_EQ(t.tensor.type, c.type) << c.rel;
    EXPECT_EQ(t.tensor.shape, c.shape) << c.rel;
    expectSameAsNumpy(
        t.tensor, readNpy(fixture(std::string("pb/") + c.ref + ".npy")), c.rel);
  }
  EXPECT_EQ(
      readTensorProto(testData("node/test_add/test_data_set_0/input_0.pb"))
          .name,
      "x");
}

TEST(TensorProto, RoundTripsEveryType) {
  ScratchDir dir;
  for (ElementType type : allElementTypes()) {
    for (std::vector<int64_t> shape :
         std::vector<std::vector<int64_t>>{{2, 3}, {}, {0, 4}}) {
      HostTensor t = patternTensor(type, shape);
      std::string path = dir / "t.pb";
      writeTensorProto(path, t, std::string("name_") + elementTypeName(type));
      NamedTensor back = readTensorProto(path);
      EXPECT_EQ(back.name, std::string("name_") + elementTypeName(type));
      EXPECT_EQ(back.tensor.type, t.type);
      EXPECT_EQ(back.tensor.shape, t.shape);
      EXPECT_EQ(back.tensor.bytes, t.bytes) << elementTypeName(type);
    }
  }
}

TEST(TensorProto, EveryTruncationIsAnError) {
  for (const char *rel : {"node/test_add/test_data_set_0/input_0.pb",
                          "node/test_and2d/test_data_set_0/output_0.pb"}) {
    std::vector<uint8_t> bytes = fileBytes(testData(rel));
    for (size_t n = 0; n < bytes.size(); ++n) {
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
      EXPECT_THROW(parseTensorProto(prefix.data(), prefix.size(), rel),
                   TensorIOError)
          << rel << " cut to " << n << " bytes";
    }
  }
  std::vector<uint8_t> typed = fileBytes(fixture("pb/typed_float.pb"));
  for (size_t n = 0; n < typed.size(); ++n) {
    std::vector<uint8_t> prefix(typed.begin(), typed.begin() + n);
    try {
      // A cut between fields can leave a valid message with fewer values;
      // what must never happen is a tensor whose bytes do not match it.
      NamedTensor t = parseTensorProto(prefix.data(), prefix.size(), "cut");
      EXPECT_NO_THROW(t.tensor.validate());
      EXPECT_EQ(t.tensor.shape, (std::vector<int64_t>{2, 3}));
    } catch (const TensorIOError &) {
    }
  }
}

std::string errorOf(const std::vector<uint8_t> &bytes) {
  try {
    parseTensorProto(bytes.data(), bytes.size(), "mem.pb");
  } catch (const TensorIOError &e) {
    return e.what();
  }
  return "";
}

TEST(TensorProto, MalformedFilesAreErrors) {
  // Hand-encoded protobuf: 0x08 dims, 0x10 data_type, 0x28 int32_data,
  // 0x4a raw_data, 0x38 int64_data, 0x70 data_location.
  EXPECT_NE(errorOf({0xff, 0xff, 0xff}).find("parse error"), std::string::npos);
  EXPECT_NE(errorOf({0x08, 0x02}).find("no data_type"), std::string::npos);
  EXPECT_NE(errorOf({0x08, 0x01, 0x10, 0x03, 0x28, 0xac, 0x02})
                .find("int32_data[0] = 300 is out of range"),
            std::string::npos);
  EXPECT_NE(errorOf({0x08, 0x02, 0x10, 0x01, 0x4a, 0x04, 0, 0, 0, 0})
                .find("needs 8 bytes but raw_data has 4"),
            std::string::npos);
  EXPECT_NE(errorOf({0x08, 0x02, 0x10, 0x07, 0x38, 0x05})
                .find("needs 2 elements but int64_data holds 1"),
            std::string::npos);
  // dims = -1 (ten-byte varint).
  EXPECT_NE(errorOf({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                     0x01, 0x10, 0x01})
                .find("negative dimension"),
            std::string::npos);
  // dims 2^40 three times: the element count overflows.
  std::vector<uint8_t> huge;
  for (int i = 0; i < 3; ++i)
    huge.insert(huge.end(), {0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20});
  huge.insert(huge.end(), {0x10, 0x01});
  EXPECT_NE(errorOf(huge).find("too many elements"), std::string::npos);
  // dims 2^40 with no data: refused before anything is allocated.
  EXPECT_NE(errorOf({0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x10, 0x01})
                .find("needs 1099511627776 elements but float_data holds 0"),
            std::string::npos);
  EXPECT_NE(errorOf({0x10, 0x0e}).find("COMPLEX64"), std::string::npos);
  EXPECT_NE(errorOf({0x10, 0x01, 0x70, 0x01}).find("external data"),
            std::string::npos);

  // STRING tensors keep their elements in string_data; raw_data cannot
  // hold them.
  NamedTensor strings = readTensorProto(
      testData("node/test_cast_FLOAT_to_STRING/test_data_set_0/output_0.pb"));
  EXPECT_EQ(strings.tensor.type, ElementType::String);
  EXPECT_EQ(strings.tensor.shape, (std::vector<int64_t>{3, 4}));
  ASSERT_EQ(strings.tensor.strings.size(), 12u);
  EXPECT_EQ(strings.tensor.strings[0], "0.9767611");
  EXPECT_EQ(strings.tensor.strings[3], "0.039187793");
  EXPECT_TRUE(strings.tensor.bytes.empty());
  // data_type STRING (8), dims [2], one string_data entry: too few.
  EXPECT_NE(errorOf({0x08, 0x02, 0x10, 0x08, 0x32, 0x01, 0x61})
                .find("needs 2 elements but string_data holds 1"),
            std::string::npos);
  // data_type STRING with raw_data.
  EXPECT_NE(errorOf({0x08, 0x01, 0x10, 0x08, 0x4a, 0x01, 0x61})
                .find("STRING TensorProto with raw_data"),
            std::string::npos);
  HostTensor words = makeStringTensor({2}, {"a\nb", ""});
  NamedTensor back;
  ASSERT_NO_THROW(
      back = parseTensorProto(reinterpret_cast<const uint8_t *>(
                                  encodeTensorProto(words, "w").data()),
                              encodeTensorProto(words, "w").size(), "w.pb"));
  EXPECT_EQ(back.tensor.strings, words.strings);
  EXPECT_EQ(back.name, "w");
  EXPECT_EQ(words.elementToString(0), "\"a\\x0ab\"");
  EXPECT_TRUE(allClose(words, words, 0, 0).passed);
  EXPECT_FALSE(
      allClose(words, makeStringTensor({2}, {"a\nb", "x"}), 0, 0).passed);
  EXPECT_THROW(readTensorProto(testData("node/test_identity_sequence/"
                                        "test_data_set_0/input_0.pb")),
               TensorIOError);
  EXPECT_THROW(readTensorProto("/nonexistent.pb"), TensorIOError);
}

/// The value types of a graph's inputs that are not initializers, in order,
/// and of its outputs.
struct Signature {
  std::vector<const onnx::TypeProto *> inputs, outputs;
};

Signature signatureOf(const onnx::GraphProto &graph) {
  Signature sig;
  std::set<std::string> initializers;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());
  for (const auto &in : graph.input())
    if (!initializers.count(in.name()))
      sig.inputs.push_back(&in.type());
  for (const auto &out : graph.output())
    sig.outputs.push_back(&out.type());
  return sig;
}

TEST(TensorProto, SweepOfAllConformanceData) {
  std::vector<TestCase> cases =
      findCases({testData("node"), testData("pytorch-converted"),
                 testData("pytorch-operator"), testData("simple")});
  size_t tensors = 0, others = 0, bf16AsU16 = 0;
  for (const TestCase &c : cases) {
    onnx::ModelProto model;
    std::vector<uint8_t> bytes = fileBytes(c.modelPath);
    ASSERT_TRUE(model.ParseFromArray(bytes.data(), bytes.size())) << c.dir;
    Signature sig = signatureOf(model.graph());
    for (const TestDataSet &set : c.dataSets) {
      for (bool isInput : {true, false}) {
        const auto &files = isInput ? set.inputs : set.outputs;
        const auto &types = isInput ? sig.inputs : sig.outputs;
        for (size_t k = 0; k < files.size(); ++k) {
          bool declaredTensor =
              k < types.size() && types[k]->has_tensor_type() &&
              types[k]->tensor_type().elem_type() != onnx::TensorProto::STRING;
          try {
            NamedTensor t = readTensorProto(files[k]);
            t.tensor.validate();
            if (declaredTensor) {
              ++tensors;
              // The element type written back is the one the model declares.
              onnx::TensorProto mine;
              ASSERT_TRUE(mine.ParseFromString(encodeTensorProto(t.tensor)));
              int declared = types[k]->tensor_type().elem_type();
              // ONNX 1.12's generator had no numpy bfloat16 and saved bf16
              // data as UINT16 bits; a runner bitcasts those.
              if (declared == onnx::TensorProto::BFLOAT16 &&
                  mine.data_type() == onnx::TensorProto::UINT16)
                ++bf16AsU16;
              else
                EXPECT_EQ(mine.data_type(), declared) << files[k];
            } else {
              ++others;
            }
          } catch (const TensorIOError &e) {
            EXPECT_FALSE(declaredTensor) << e.what();
            ++others;
          }
        }
      }
    }
  }
  std::cout << "tensors read: " << tensors
            << ", bf16 stored as u16: " << bf16AsU16
            << ", non-tensor files: " << others << "\n";
  EXPECT_EQ(cases.size(), 1072u);
  EXPECT_GT(tensors, 3000u);
  EXPECT_LT(others, 200u);
  EXPECT_GT(bf16AsU16, 0u);
}

} // namespace
