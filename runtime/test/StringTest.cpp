//===- StringTest.cpp - Tests of tensors of strings -------------*- C++ -*-===//
//
// Strings through the runtime (docs/runtime.md, "Strings"): tensors that
// refuse to be read as bytes, string constants and host buffers through
// ModuleBuilder and Module::load, a corrupted or truncated string table, the
// load-time rules that keep strings out of the arena, and the host kernels
// (string.normalizer with an output shape set at run time, string.cast both
// ways, string.copy) run by a session.
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include <cmath>
#include <cstring>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

std::string loadError(std::vector<uint8_t> bytes) {
  return errorOf(
      [&] { Module::loadFromMemory(std::move(bytes), "strings.strata"); });
}

Step libraryStep(std::string name, std::vector<uint32_t> inputs,
                 std::vector<uint32_t> outputs) {
  Step step;
  step.kind = StepKind::Library;
  step.name = std::move(name);
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.sourceNodes = {"Node_0"};
  return step;
}

Attribute strsAttr(std::string key, std::vector<std::string> values) {
  Attribute a;
  a.key = std::move(key);
  a.strs = std::move(values);
  return a;
}

/// words: string[?] = StringNormalizer(x: string[4], stop words "monday",
/// UPPER); numbers: f32[3] = Cast(c), c a string constant; text: string[3]
/// = Cast(numbers).
std::vector<uint8_t> stringModuleBytes() {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::String, {4});
  uint32_t words = b.addStringBuffer({-1});
  Step normalize = libraryStep("string.normalizer", {x}, {words});
  normalize.attributes.push_back({"case_change_action", {}, {}, "UPPER"});
  normalize.attributes.push_back({"is_case_sensitive", {0}, {}, ""});
  normalize.attributes.push_back(strsAttr("stopwords", {"monday"}));
  b.addStep(normalize);
  uint32_t c =
      b.addConstant(Tensor::fromStrings({3}, {"1.5", "-INF", "MARKER_1e3"}));
  (void)c;
  uint32_t c2 = b.addStringConstant({3}, {"1.5", "-inf", " 2e3 "});
  uint32_t numbers = b.addArenaBuffer(DType::F32, {3});
  b.addStep(libraryStep("string.cast", {c2}, {numbers}));
  uint32_t text = b.addStringBuffer({3});
  b.addStep(libraryStep("string.cast", {numbers}, {text}));
  uint32_t reshaped = b.addStringBuffer({3, 1});
  b.addStep(libraryStep("string.copy", {text}, {reshaped}));
  b.addOutput("words", words);
  b.addOutput("numbers", numbers);
  b.addOutput("text", reshaped);
  return b.finish();
}

} // namespace

TEST(StringTensor, BytesAreRefused) {
  Tensor t = Tensor::fromStrings({2}, {"a", "bc"});
  EXPECT_EQ(t.dtype(), DType::String);
  EXPECT_EQ(t.data<std::string>()[1], "bc");
  EXPECT_THAT(errorOf([&] { (void)t.byteSize(); }),
              HasSubstr("no element size"));
  EXPECT_THAT(errorOf([&] { (void)t.rawData(); }), HasSubstr("rawData()"));
  EXPECT_THAT(errorOf([&] { (void)t.data<float>(); }),
              HasSubstr("a tensor of string accessed as float"));
  Tensor f = Tensor::zeros(DType::F32, {1});
  EXPECT_THAT(errorOf([&] { (void)f.strings(); }), HasSubstr("strings"));
  Tensor copy = t;
  t.strings()[0] = "changed";
  EXPECT_EQ(copy.strings()[0], "a");
  EXPECT_EQ(Tensor::zeros(DType::String, {2, 2}).strings(),
            std::vector<std::string>(4));
  EXPECT_THAT(errorOf([] { Tensor::fromStrings({3}, {"a"}); }),
              HasSubstr("1 strings for shape [3]"));
  EXPECT_STREQ(dtypeName(DType::String), "string");
}

TEST(StringModule, RoundTrip) {
  auto m = Module::loadFromMemory(stringModuleBytes(), "strings.strata");
  EXPECT_EQ(m->versionMinor(), kFormatMinor);
  EXPECT_EQ(m->inputs()[0].dtype, DType::String);
  const BufferInfo &words = m->buffers()[1];
  EXPECT_EQ(words.kind, BufferKind::Host);
  EXPECT_EQ(words.shape, (std::vector<int64_t>{-1}));
  const BufferInfo &c = m->buffers()[2];
  EXPECT_EQ(c.kind, BufferKind::Constant);
  EXPECT_EQ(c.strings, (std::vector<std::string>{"1.5", "-INF", "MARKER_1e3"}));
  EXPECT_EQ(m->steps()[0].attributes[2].strs,
            (std::vector<std::string>{"monday"}));
  EXPECT_EQ(m->outputs()[0].shape, (std::vector<int64_t>{-1}));
}

TEST(StringModule, TruncatedAtEveryLength) {
  std::vector<uint8_t> bytes = stringModuleBytes();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::string msg = loadError({bytes.begin(), bytes.begin() + cut});
    EXPECT_THAT(msg, HasSubstr("'strings.strata'")) << "cut at " << cut;
    EXPECT_THAT(msg, HasSubstr("truncated")) << "cut at " << cut;
  }
}

TEST(StringModule, CorruptedStringTable) {
  std::vector<uint8_t> bytes = stringModuleBytes();
  const char marker[] = "MARKER_1e3";
  auto it = std::search(bytes.begin(), bytes.end(), marker,
                        marker + std::strlen(marker));
  ASSERT_NE(it, bytes.end());
  size_t at = it - bytes.begin();
  ASSERT_GE(at, 4u);
  // The string's length runs past the end of the file.
  std::vector<uint8_t> tooLong = bytes;
  tooLong[at - 1] = 0x7f;
  detail::sealModule(tooLong); // fails verification: left alone
  EXPECT_THAT(loadError(tooLong), HasSubstr("FlatBuffers verification failed"));
  // The length stops short of the terminating NUL the verifier requires.
  std::vector<uint8_t> noTerminator = bytes;
  noTerminator[at - 4] = 3;
  EXPECT_THAT(loadError(noTerminator),
              HasSubstr("FlatBuffers verification failed"));
  // Every single flipped byte of the table: an Error or a valid module.
  for (size_t i = at - 8; i < at + sizeof(marker); ++i) {
    std::vector<uint8_t> flipped = bytes;
    flipped[i] ^= 0xff;
    detail::sealModule(flipped);
    try {
      Module::loadFromMemory(flipped, "flipped.strata");
    } catch (const Error &) {
    }
  }
}

TEST(StringModule, StringsStayOutOfTheArena) {
  {
    ModuleBuilder b;
    b.addBuffer({BufferKind::Arena, DType::String, {2}, 0, 64});
    b.setArenaSize(64);
    EXPECT_THAT(loadError(b.finish()),
                HasSubstr("buffer 0 is an arena buffer of strings"));
  }
  {
    // Host buffers of numbers load from format 1.4 on (ValueShapedTest.cpp).
    ModuleBuilder b;
    b.addBuffer({BufferKind::Host, DType::F32, {2}});
    EXPECT_EQ(
        Module::loadFromMemory(b.finish(), "host.strata")->buffers()[0].dtype,
        DType::F32);
  }
  {
    ModuleBuilder b;
    b.addStringConstant({3}, {"a", "b"});
    EXPECT_THAT(loadError(b.finish()),
                HasSubstr("constant of type string[3] with 2 strings, "
                          "expected 3"));
  }
  {
    ModuleBuilder b;
    BufferInfo info{BufferKind::Constant, DType::F32, {1}};
    info.strings = {"x"};
    b.addBuffer(info, std::vector<uint8_t>(4));
    EXPECT_THAT(loadError(b.finish()),
                HasSubstr("has a string table but is not a constant of "
                          "strings"));
  }
  {
    // A generated kernel may not touch strings.
    ModuleBuilder b;
    uint32_t x = b.addInput("x", DType::String, {1});
    uint32_t y = b.addStringBuffer({1});
    Step step = libraryStep("k", {x}, {y});
    step.kind = StepKind::Kernel;
    b.addStep(step);
    b.setCode({0x7f, 'E', 'L', 'F'});
    auto m = Module::loadFromMemory(b.finish(), "kernel.strata");
    EXPECT_THAT(errorOf([&] { Session s(m); }), HasSubstr("holds strings"));
  }
}

TEST(StringModule, OlderMinorVersionLoads) {
  ModuleBuilder b = addModuleBuilder();
  b.setVersion(kFormatMajor, 1);
  auto m = Module::loadFromMemory(b.finish(), "old.strata");
  EXPECT_EQ(m->versionMinor(), 1);
  Session s(m);
  s.setInput("x", Tensor::zeros(DType::F32, {2, 3}));
  s.run();
  EXPECT_EQ(s.output("y").data<float>()[5], 60.f);
}

TEST(StringSession, RunsTheStringKernels) {
  auto m = Module::loadFromMemory(stringModuleBytes(), "strings.strata");
  Session s(m);
  EXPECT_THAT(errorOf([&] { s.setInput("x", Tensor::zeros(DType::F32, {4})); }),
              HasSubstr("expects string[4], got f32[4]"));
  s.setInput(
      "x", Tensor::fromStrings({4}, {"Monday", "tuesday", "monday", "Straße"}));
  s.run();
  const Tensor &words = s.output("words");
  EXPECT_EQ(words.shape(), (std::vector<int64_t>{2}));
  // The C.UTF-8 (or en_US.UTF-8) locale maps ß to itself in towupper.
  EXPECT_EQ(words.strings()[0], "TUESDAY");
  EXPECT_EQ(words.strings()[1].substr(0, 4), "STRA");
  const Tensor &numbers = s.output("numbers");
  EXPECT_EQ(numbers.data<float>()[0], 1.5f);
  EXPECT_TRUE(std::isinf(numbers.data<float>()[1]) &&
              numbers.data<float>()[1] < 0);
  EXPECT_EQ(numbers.data<float>()[2], 2000.f);
  const Tensor &text = s.output("text");
  EXPECT_EQ(text.shape(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(text.strings(), (std::vector<std::string>{"1.5", "-INF", "2000"}));

  // The run-time shape follows the values from one run to the next; all
  // stop words give one empty string.
  s.setInput("x", Tensor::fromStrings({4}, {"monday", "MONDAY", "x", "y"}));
  s.run();
  EXPECT_EQ(s.output("words").strings(), (std::vector<std::string>{"X", "Y"}));
  s.setInput(
      "x", Tensor::fromStrings({4}, {"monday", "MONDAY", "Monday", "monDay"}));
  s.run();
  EXPECT_EQ(s.output("words").shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(s.output("words").strings(), (std::vector<std::string>{""}));

  // Invalid UTF-8 is an error naming the element and the step.
  s.setInput("x", Tensor::fromStrings({4}, {"a", "\xff", "b", "c"}));
  std::string msg = errorOf([&] { s.run(); });
  EXPECT_THAT(msg, HasSubstr("'strings.strata'"));
  EXPECT_THAT(msg, HasSubstr("Node_0"));
  EXPECT_THAT(msg, HasSubstr("element 1"));
}

TEST(StringSession, CastErrorsNameTheElement) {
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::String, {2});
  uint32_t y = b.addArenaBuffer(DType::I32, {2});
  b.addStep(libraryStep("string.cast", {x}, {y}));
  b.addOutput("y", y);
  auto m = Module::loadFromMemory(b.finish(), "cast.strata");
  Session s(m);
  s.setInput("x", Tensor::fromStrings({2}, {"+42", "100.5"}));
  s.run();
  EXPECT_EQ(s.output("y").data<int32_t>()[0], 42);
  EXPECT_EQ(s.output("y").data<int32_t>()[1], 100);
  s.setInput("x", Tensor::fromStrings({2}, {"7", "seven"}));
  EXPECT_THAT(errorOf([&] { s.run(); }),
              HasSubstr("element 1 ('seven') is not a number of type i32"));
  s.setInput("x", Tensor::fromStrings({2}, {"7", "1e10"}));
  EXPECT_THAT(errorOf([&] { s.run(); }), HasSubstr("element 1"));
}

TEST(StringSession, StaticOutputMustKeepItsShape) {
  // A normalizer writing a host buffer declared [2]: removing a stop word
  // from 3 words gives 2, but from 2 words gives 1, which is refused.
  ModuleBuilder b;
  uint32_t x = b.addInput("x", DType::String, {-1});
  uint32_t y = b.addStringBuffer({2});
  Step step = libraryStep("string.normalizer", {x}, {y});
  step.attributes.push_back(strsAttr("stopwords", {"a"}));
  b.addStep(step);
  b.addOutput("y", y);
  auto m = Module::loadFromMemory(b.finish(), "norm.strata");
  Session s(m);
  s.setInput("x", Tensor::fromStrings({3}, {"a", "b", "c"}));
  s.run();
  EXPECT_EQ(s.output("y").strings(), (std::vector<std::string>{"b", "c"}));
  s.setInput("x", Tensor::fromStrings({2}, {"a", "b"}));
  EXPECT_THAT(errorOf([&] { s.run(); }),
              HasSubstr("output 0 is string[2] but the step produced "
                        "string[1]"));
}
