//===- ModuleTest.cpp - Tests of module loading and validation --*- C++ -*-===//
//
// Round trips through ModuleBuilder and Module::load, and every way a file
// can be wrong: truncation at every length, flipped bytes, a foreign
// identifier, another major version, buffer ids out of range, inconsistent
// buffers. Each must end in an rt::Error that names the file and the
// problem, never in a crash (the sanitizer build checks the "never").
//
//===----------------------------------------------------------------------===//

#include "TestModules.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace strata::rt;
using namespace strata::rt::test;
using ::testing::HasSubstr;

namespace {

std::string tempPath(const std::string &name) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/strata-rt-" +
         std::to_string(::getpid()) + "-" + name;
}

std::string loadError(std::vector<uint8_t> bytes,
                      const std::string &name = "bad.strata") {
  return errorOf([&] { Module::loadFromMemory(std::move(bytes), name); });
}

} // namespace

TEST(Module, RoundTripFromMemory) {
  auto m = Module::loadFromMemory(addModuleBytes(), "add.strata");
  EXPECT_EQ(m->name(), "add.strata");
  EXPECT_EQ(m->versionMajor(), kFormatMajor);
  EXPECT_EQ(m->versionMinor(), kFormatMinor);
  EXPECT_EQ(m->target(), "cpu");
  ASSERT_EQ(m->inputs().size(), 1u);
  EXPECT_EQ(m->inputs()[0].name, "x");
  EXPECT_EQ(m->inputs()[0].dtype, DType::F32);
  EXPECT_EQ(m->inputs()[0].shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(m->outputs().size(), 1u);
  EXPECT_EQ(m->outputs()[0].name, "y");
  ASSERT_EQ(m->buffers().size(), 3u);
  EXPECT_EQ(m->buffers()[0].kind, BufferKind::Input);
  const BufferInfo &c = m->buffers()[1];
  EXPECT_EQ(c.kind, BufferKind::Constant);
  ASSERT_EQ(c.dataSize, 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<const float *>(c.data)[5], 60.f);
  EXPECT_EQ(m->buffers()[2].kind, BufferKind::Arena);
  EXPECT_GE(m->arenaSize(), 24u);
  ASSERT_EQ(m->steps().size(), 1u);
  const Step &s = m->steps()[0];
  EXPECT_EQ(s.kind, StepKind::Library);
  EXPECT_EQ(s.name, "add.f32");
  EXPECT_EQ(s.inputs, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(s.outputs, (std::vector<uint32_t>{2}));
  EXPECT_EQ(s.sourceNodes, (std::vector<std::string>{"Add_0"}));
  ASSERT_EQ(s.attributes.size(), 1u);
  EXPECT_EQ(s.attributes[0].str, "unused");
  ASSERT_NE(m->metadataValue("source"), nullptr);
  EXPECT_EQ(*m->metadataValue("source"), "add.onnx");
  EXPECT_EQ(m->metadataValue("missing"), nullptr);
  EXPECT_EQ(m->codeSize(), 0u);
}

// A constant whose bytes the builder borrows (addConstantView, the
// compiler's weights) is written as one whose bytes it owns: the same file,
// and the loaded constant holds those bytes, 64-byte aligned.
TEST(Module, BorrowedConstantBytesWriteTheSameModule) {
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * 0.5f - 7.f;
  const auto *raw = reinterpret_cast<const uint8_t *>(values.data());
  size_t size = values.size() * sizeof(float);
  auto build = [&](bool borrowed) {
    ModuleBuilder b;
    uint32_t x = b.addInput("x", DType::F32, {1000});
    uint32_t c = borrowed
                     ? b.addConstantView(DType::F32, {1000}, raw, size)
                     : b.addConstant(DType::F32, {1000},
                                     std::vector<uint8_t>(raw, raw + size));
    uint32_t y = b.addArenaBuffer(DType::F32, {1000});
    Step add;
    add.kind = StepKind::Library;
    add.name = "add.f32";
    add.inputs = {x, c};
    add.outputs = {y};
    b.addStep(add);
    b.addOutput("y", y);
    return b.finish();
  };
  std::vector<uint8_t> owned = build(false), borrowed = build(true);
  EXPECT_EQ(owned, borrowed);
  auto m = Module::loadFromMemory(std::move(borrowed), "borrowed.strata");
  const BufferInfo &c = m->buffers()[1];
  ASSERT_EQ(c.kind, BufferKind::Constant);
  ASSERT_EQ(c.dataSize, size);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data) % 64, 0u);
  EXPECT_EQ(std::memcmp(c.data, raw, size), 0);
}

TEST(Module, RoundTripThroughFile) {
  ModuleBuilder b = addModuleBuilder();
  std::vector<uint8_t> code = {0x7f, 'E', 'L', 'F', 1, 2, 3};
  b.setCode(code);
  std::string path = tempPath("add.strata");
  b.write(path);
  auto m = Module::load(path);
  std::remove(path.c_str());
  EXPECT_EQ(m->name(), path);
  ASSERT_EQ(m->codeSize(), code.size());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m->code()) % 64, 0u);
  EXPECT_EQ(std::vector<uint8_t>(m->code(), m->code() + m->codeSize()), code);
  EXPECT_EQ(m->steps().size(), 1u);
}

TEST(Module, MissingFile) {
  std::string path = tempPath("does-not-exist.strata");
  std::string msg = errorOf([&] { Module::load(path); });
  EXPECT_THAT(msg, HasSubstr(path));
  EXPECT_THAT(msg, HasSubstr("cannot open"));
}

TEST(Module, DirectoryIsNotAModule) {
  std::string msg = errorOf([&] { Module::load("/"); });
  EXPECT_THAT(msg, HasSubstr("strata module '/': is not a regular file"));
}

TEST(Module, TruncatedAtEveryLength) {
  std::vector<uint8_t> bytes = addModuleBytes();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + cut);
    std::string msg = loadError(prefix, "cut.strata");
    EXPECT_THAT(msg, HasSubstr("'cut.strata'")) << "cut at " << cut;
    EXPECT_THAT(msg, HasSubstr("truncated")) << "cut at " << cut;
  }
}

TEST(Module, TruncatedFileOnDisk) {
  std::vector<uint8_t> bytes = addModuleBytes();
  std::string path = tempPath("truncated.strata");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()),
              static_cast<std::streamsize>(bytes.size() / 2));
  }
  std::string msg = errorOf([&] { Module::load(path); });
  std::remove(path.c_str());
  EXPECT_THAT(msg, HasSubstr(path));
  EXPECT_THAT(msg, HasSubstr("truncated"));
}

TEST(Module, TrailingGarbage) {
  std::vector<uint8_t> bytes = addModuleBytes();
  bytes.push_back(0);
  EXPECT_THAT(loadError(bytes), HasSubstr("1 bytes of trailing garbage"));
}

TEST(Module, CorruptedOffsetFailsVerification) {
  std::vector<uint8_t> bytes = addModuleBytes();
  // The root table offset (after the size prefix) pointing past the end.
  bytes[4] = 0xf0;
  bytes[5] = 0xff;
  EXPECT_THAT(loadError(bytes), HasSubstr("FlatBuffers verification failed"));
}

// Every flipped byte of a module, wherever it lies (a weight, the code, a
// table, padding, the checksum itself), is caught by the checksum.
TEST(Module, ChecksumCatchesEveryFlippedByte) {
  std::vector<uint8_t> bytes = addModuleBytes();
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    std::vector<uint8_t> copy = bytes;
    copy[pos] ^= 0x01;
    EXPECT_THAT(loadError(copy, "flipped.strata"),
                HasSubstr("'flipped.strata'"))
        << pos;
  }
}

// The constant's 4 bytes overwritten: the buffer verifies (the values are
// only data), and the checksum names the corruption.
TEST(Module, OverwrittenWeightsAreCorruption) {
  std::vector<uint8_t> bytes = addModuleBytes();
  float sixty = 60.f;
  auto it = std::search(bytes.begin(), bytes.end(),
                        reinterpret_cast<uint8_t *>(&sixty),
                        reinterpret_cast<uint8_t *>(&sixty) + sizeof(float));
  ASSERT_NE(it, bytes.end());
  std::fill(it, it + 4, 0xff); // a NaN
  std::string msg = loadError(bytes, "model.strata");
  EXPECT_THAT(msg, HasSubstr("'model.strata'"));
  EXPECT_THAT(msg, HasSubstr("do not match the checksum the compiler "
                             "recorded"));
}

// Modules of format 1.2 and before have no checksum and still load.
TEST(Module, ModulesBeforeTheChecksumLoad) {
  ModuleBuilder b = addModuleBuilder();
  b.setVersion(kFormatMajor, 2);
  std::vector<uint8_t> bytes = b.finish();
  EXPECT_FALSE(detail::sealModule(bytes)); // no field to seal
  auto m = Module::loadFromMemory(bytes, "old.strata");
  EXPECT_EQ(m->versionMinor(), 2);
}

// Flip every bit pattern of every byte position once and reseal the
// checksum, so that the flip reaches the loader's other checks: each result
// must either load (the byte was data, e.g. a constant) and then run or
// fail with an Error, or fail to load with an Error. Nothing may crash.
TEST(Module, FlippedBytesNeverCrash) {
  std::vector<uint8_t> bytes = addModuleBytes();
  size_t loaded = 0, rejected = 0;
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> copy = bytes;
      copy[pos] ^= mask;
      detail::sealModule(copy);
      std::shared_ptr<const Module> m;
      try {
        m = Module::loadFromMemory(copy, "flipped.strata");
      } catch (const Error &e) {
        EXPECT_THAT(e.what(), HasSubstr("'flipped.strata'"));
        ++rejected;
        continue;
      }
      ++loaded;
      try {
        Session session(m);
        for (size_t i = 0; i < m->inputs().size(); ++i) {
          std::vector<int64_t> shape = m->inputs()[i].shape;
          for (int64_t &d : shape)
            d = d < 0 ? 1 : d;
          session.setInput(i, Tensor::zeros(m->inputs()[i].dtype, shape));
        }
        session.run();
      } catch (const Error &) {
        // Rejected at session creation or by a kernel's checks: fine.
      }
    }
  }
  RecordProperty("loaded", static_cast<int>(loaded));
  RecordProperty("rejected", static_cast<int>(rejected));
  // Both outcomes happen: the test exercises the validation and the run.
  EXPECT_GT(loaded, 0u);
  EXPECT_GT(rejected, 0u);
}

TEST(Module, WrongIdentifier) {
  std::vector<uint8_t> bytes = addModuleBytes();
  bytes[8] = 'O';
  bytes[9] = 'N';
  bytes[10] = 'N';
  bytes[11] = 'X';
  std::string msg = loadError(bytes, "model.onnx");
  EXPECT_THAT(msg, HasSubstr("'model.onnx'"));
  EXPECT_THAT(msg, HasSubstr("not a strata module"));
  EXPECT_THAT(msg, HasSubstr("'ONNX'"));
}

TEST(Module, NotAFlatBuffer) {
  std::string text = "this is a text file, certainly not a module\n";
  std::string msg = loadError(std::vector<uint8_t>(text.begin(), text.end()));
  EXPECT_THAT(msg, HasSubstr("not a strata module"));
}

TEST(Module, WrongMajorVersion) {
  ModuleBuilder b = addModuleBuilder();
  b.setVersion(kFormatMajor + 1, 3);
  std::string msg = loadError(b.finish(), "future.strata");
  EXPECT_THAT(msg, HasSubstr("'future.strata'"));
  EXPECT_THAT(msg, HasSubstr("format version " +
                             std::to_string(kFormatMajor + 1) + ".3"));
  EXPECT_THAT(msg, HasSubstr(std::to_string(kFormatMajor) + ".x"));
}

TEST(Module, NewerMinorVersionLoads) {
  ModuleBuilder b = addModuleBuilder();
  b.setVersion(kFormatMajor, kFormatMinor + 5);
  auto m = Module::loadFromMemory(b.finish(), "minor.strata");
  EXPECT_EQ(m->versionMinor(), kFormatMinor + 5);
}

TEST(Module, StepInputOutOfRange) {
  ModuleBuilder b = addModuleBuilder();
  Step s;
  s.name = "copy";
  s.inputs = {7};
  s.outputs = {2};
  b.addStep(s);
  std::string msg = loadError(b.finish());
  EXPECT_THAT(msg, HasSubstr("step 1 ('copy')"));
  EXPECT_THAT(msg, HasSubstr("refers to buffer 7 which does not exist"));
}

TEST(Module, StepOutputOutOfRange) {
  ModuleBuilder b = addModuleBuilder();
  Step s;
  s.name = "copy";
  s.inputs = {0};
  s.outputs = {3};
  s.sourceNodes = {"Identity_4"};
  b.addStep(s);
  std::string msg = loadError(b.finish());
  EXPECT_THAT(msg, HasSubstr("step 1 ('copy', from ONNX node 'Identity_4')"));
  EXPECT_THAT(msg, HasSubstr("buffer 3 which does not exist"));
}

TEST(Module, StepWritesConstant) {
  ModuleBuilder b = addModuleBuilder();
  Step s;
  s.name = "copy";
  s.inputs = {2};
  s.outputs = {1};
  b.addStep(s);
  EXPECT_THAT(loadError(b.finish()),
              HasSubstr("writes buffer 1 which is not an arena buffer"));
}

TEST(Module, OutputOutOfRange) {
  ModuleBuilder b = addModuleBuilder();
  b.addOutput("z", 42);
  EXPECT_THAT(loadError(b.finish()),
              HasSubstr("output 1 ('z') refers to buffer 42 which does not "
                        "exist"));
}

TEST(Module, InputBufferWithoutInput) {
  ModuleBuilder b = addModuleBuilder();
  BufferInfo orphan;
  orphan.kind = BufferKind::Input;
  orphan.shape = {2};
  b.addBuffer(orphan);
  EXPECT_THAT(loadError(b.finish()),
              HasSubstr("buffer 3 is an input buffer but no input refers"));
}

TEST(Module, OutputsMayNameInputsAndExtraBuffers) {
  ModuleBuilder b = addModuleBuilder();
  uint32_t z = b.addArenaBuffer(DType::I64, {3});
  b.addOutput("z", z);
  b.addOutput("x_again", 0);
  auto m = Module::loadFromMemory(b.finish(), "ok.strata");
  ASSERT_EQ(m->outputs().size(), 3u);
  EXPECT_EQ(m->outputs()[1].dtype, DType::I64);
  EXPECT_EQ(m->outputs()[2].buffer, 0u);
}

TEST(Module, ArenaBufferOutsideArena) {
  ModuleBuilder b = addModuleBuilder();
  b.addArenaBuffer(DType::F32, {4}, /*offset=*/64, /*size=*/16);
  b.setArenaSize(70);
  EXPECT_THAT(loadError(b.finish()),
              HasSubstr("buffer 3 (offset 64, size 16) lies outside the "
                        "arena of 70 bytes"));
}

TEST(Module, ArenaOffsetOverflow) {
  ModuleBuilder b = addModuleBuilder();
  b.addArenaBuffer(DType::U8, {4}, /*offset=*/UINT64_MAX - 1, /*size=*/4);
  b.setArenaSize(1024);
  EXPECT_THAT(loadError(b.finish()), HasSubstr("lies outside the arena"));
}

TEST(Module, ArenaBufferTooSmall) {
  ModuleBuilder b = addModuleBuilder();
  b.addArenaBuffer(DType::F64, {4}, /*offset=*/0, /*size=*/16);
  EXPECT_THAT(loadError(b.finish()),
              HasSubstr("buffer 3 has 16 bytes in the arena but its type "
                        "f64[4] needs 32"));
}

TEST(Module, ArenaBufferMustBeStatic) {
  ModuleBuilder b = addModuleBuilder();
  b.addArenaBuffer(DType::F32, {-1, 4}, 0, 16);
  EXPECT_THAT(loadError(b.finish()), HasSubstr("it must be static"));
}

TEST(Module, ConstantSizeMismatch) {
  ModuleBuilder b = addModuleBuilder();
  b.addConstant(DType::I32, {2, 2}, std::vector<uint8_t>(12));
  EXPECT_THAT(loadError(b.finish()),
              HasSubstr("buffer 3 is a constant of type i32[2, 2] with 12 "
                        "bytes, expected 16"));
}

TEST(Module, HugeShapeDoesNotOverflow) {
  ModuleBuilder b = addModuleBuilder();
  b.addConstant(DType::F64, {INT64_MAX / 2, 4}, std::vector<uint8_t>(8));
  EXPECT_THAT(loadError(b.finish()), HasSubstr("too many elements"));
}

TEST(Module, DuplicateInputNames) {
  ModuleBuilder b = addModuleBuilder();
  b.addInput("x", DType::F32, {1});
  EXPECT_THAT(loadError(b.finish()), HasSubstr("two inputs are named 'x'"));
}
