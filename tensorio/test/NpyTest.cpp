//===- NpyTest.cpp - Reading and writing .npy files -------------*- C++ -*-===//
//
// Round trips of every element type and of 0-d and empty tensors; files
// written by numpy (fixtures/npy, from make_fixtures.py) read back with the
// bytes numpy reports and re-encode to the identical file; and every
// truncation and a sweep of corrupted headers fail with a TensorIOError
// (the sanitizer build shows they do so without touching memory out of
// bounds).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <sstream>

using namespace strata::tio;
using namespace strata::tio::test;

namespace {

std::vector<uint8_t> withHeader(const std::string &dict,
                                const std::vector<uint8_t> &data,
                                uint8_t major = 1) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  std::string header = dict + "\n";
  size_t len = header.size();
  out.push_back(len & 0xff);
  out.push_back((len >> 8) & 0xff);
  if (major != 1) {
    out.push_back((len >> 16) & 0xff);
    out.push_back((len >> 24) & 0xff);
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string errorOf(const std::vector<uint8_t> &bytes) {
  try {
    parseNpy(bytes.data(), bytes.size(), "mem.npy");
  } catch (const TensorIOError &e) {
    return e.what();
  }
  return "";
}

TEST(Npy, RoundTripsEveryType) {
  ScratchDir dir;
  for (ElementType type : allElementTypes()) {
    HostTensor t = patternTensor(type, {2, 3, 4});
    std::string path = dir / (std::string(elementTypeName(type)) + ".npy");
    writeNpy(path, t);
    HostTensor back = readNpy(path);
    // bf16 has no numpy dtype: it is stored as its bits in '<u2'.
    if (type == ElementType::BF16) {
      EXPECT_EQ(back.type, ElementType::U16);
      back = bitcast(back, ElementType::BF16);
    }
    EXPECT_EQ(back.type, t.type) << elementTypeName(type);
    EXPECT_EQ(back.shape, t.shape) << elementTypeName(type);
    EXPECT_EQ(back.bytes, t.bytes) << elementTypeName(type);
  }
}

TEST(Npy, RoundTripsZeroDimAndEmptyTensors) {
  for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{
           {}, {0}, {0, 3}, {2, 0, 5}, {1}, {1, 1, 1, 1, 1, 1, 1, 1}}) {
    for (ElementType type : {ElementType::F32, ElementType::I64,
                             ElementType::Bool, ElementType::F16}) {
      HostTensor t = patternTensor(type, shape);
      std::vector<uint8_t> bytes = encodeNpy(t);
      EXPECT_EQ(bytes.size() % 64, t.bytes.size() % 64); // data is aligned
      HostTensor back = parseNpy(bytes.data(), bytes.size(), "mem");
      EXPECT_EQ(back.type, t.type);
      EXPECT_EQ(back.shape, t.shape);
      EXPECT_EQ(back.bytes, t.bytes);
    }
  }
}

TEST(Npy, HugeHeaderUsesVersion2) {
  // 30000 dimensions of 1 make a header past the 64 KiB of format 1.0.
  HostTensor t =
      patternTensor(ElementType::I32, std::vector<int64_t>(30000, 1));
  std::vector<uint8_t> bytes = encodeNpy(t);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - t.bytes.size()) % 64, 0u);
  HostTensor back = parseNpy(bytes.data(), bytes.size(), "mem");
  EXPECT_EQ(back.shape, t.shape);
  EXPECT_EQ(back.bytes, t.bytes);
}

TEST(Npy, ReadsFilesWrittenByNumpy) {
  std::ifstream manifest(fixture("npy/manifest.txt"));
  ASSERT_TRUE(manifest.good());
  std::string name, typeName, dims;
  int count = 0;
  while (manifest >> name >> typeName) {
    // An empty shape (0-d) leaves the dims column empty.
    std::getline(manifest, dims);
    std::vector<int64_t> shape;
    std::stringstream ss(dims);
    for (std::string dim; std::getline(ss, dim, ',');)
      if (dim.find_first_not_of(' ') != std::string::npos)
        shape.push_back(std::stoll(dim));
    std::string npyPath = fixture("npy/" + name + ".npy");
    HostTensor t = readNpy(npyPath);
    EXPECT_EQ(elementTypeName(t.type), typeName) << name;
    EXPECT_EQ(t.shape, shape) << name;
    EXPECT_EQ(t.bytes, fileBytes(fixture("npy/" + name + ".bin"))) << name;
    // Version 1.0 files re-encode to exactly what numpy wrote.
    if (name.find("_v") == std::string::npos)
      EXPECT_EQ(encodeNpy(t), fileBytes(npyPath)) << name;
    ++count;
  }
  EXPECT_EQ(count, 19);
}

TEST(Npy, NumpyValuesSpotChecks) {
  HostTensor f32 = readNpy(fixture("npy/f32.npy"));
  EXPECT_TRUE(std::isnan(f32.elementAsDouble(0)));
  EXPECT_EQ(f32.elementAsDouble(1), INFINITY);
  EXPECT_EQ(f32.elementAsDouble(2), -INFINITY);
  EXPECT_TRUE(std::signbit(f32.elementAsDouble(3)));
  EXPECT_EQ(f32.elementAsDouble(6), -3.0);
  EXPECT_EQ(f32.elementAsDouble(11), -0.5);
  HostTensor f16 = readNpy(fixture("npy/f16.npy"));
  EXPECT_EQ(f16.elementAsDouble(5), 65504.0); // float16 max
  EXPECT_EQ(f16.elementAsDouble(4), 0x1p-16); // subnormal: tiny / 4
  EXPECT_EQ(f16.elementAsDouble(9), -1.5);
  HostTensor i64 = readNpy(fixture("npy/i64.npy"));
  EXPECT_EQ(i64.elementToString(0), "-9223372036854775808");
  EXPECT_EQ(i64.elementToString(1), "9223372036854775807");
  HostTensor u64 = readNpy(fixture("npy/u64.npy"));
  EXPECT_EQ(u64.elementToString(1), "18446744073709551615");
  HostTensor b = readNpy(fixture("npy/bool.npy"));
  EXPECT_EQ(b.elementToString(0), "true");
  EXPECT_EQ(b.elementToString(1), "false");
  HostTensor scalar = readNpy(fixture("npy/scalar_f32.npy"));
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.elementAsDouble(0), 3.5);
}

TEST(Npy, RefusesUnsupportedNumpyFiles) {
  auto expectError = [](const std::string &file, const std::string &part) {
    std::string path = fixture("npy/bad/" + file);
    try {
      readNpy(path);
      ADD_FAILURE() << file << " was accepted";
    } catch (const TensorIOError &e) {
      std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_NE(message.find(part), std::string::npos) << message;
    }
  };
  expectError("fortran.npy", "Fortran-order");
  expectError("big_endian.npy", "big-endian");
  expectError("complex.npy", "unsupported .npy dtype '<c8'");
  expectError("structured.npy", "structured dtypes");
  expectError("object.npy", "unsupported .npy dtype '|O'");
}

TEST(Npy, StringArrays) {
  // numpy's '<U3' holds UTF-32 code units, NUL-padded; '|S3' bytes.
  auto utf32 = [](std::u32string text, size_t width) {
    std::vector<uint8_t> out;
    text.resize(width, U'\0');
    for (char32_t c : text)
      for (int b = 0; b < 4; ++b)
        out.push_back(static_cast<uint8_t>(c >> (8 * b)));
    return out;
  };
  std::vector<uint8_t> data = utf32(U"ab", 3);
  std::vector<uint8_t> second = utf32(U"\u00dfx\U0001F600", 3);
  data.insert(data.end(), second.begin(), second.end());
  std::vector<uint8_t> bytes = withHeader(
      "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", data, 1);
  HostTensor t = parseNpy(bytes.data(), bytes.size(), "mem");
  EXPECT_EQ(t.type, ElementType::String);
  EXPECT_EQ(t.strings,
            (std::vector<std::string>{"ab", "\xc3\x9fx\xf0\x9f\x98\x80"}));
  // Written back as '<U3' (the longest element in code points), same bytes.
  std::vector<uint8_t> back = encodeNpy(t);
  EXPECT_EQ(std::vector<uint8_t>(back.end() - data.size(), back.end()), data);
  EXPECT_EQ(parseNpy(back.data(), back.size(), "back").strings, t.strings);

  bytes =
      withHeader("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }",
                 {'a', 0, 0, 'x', 'y', 'z'}, 1);
  EXPECT_EQ(parseNpy(bytes.data(), bytes.size(), "mem").strings,
            (std::vector<std::string>{"a", "xyz"}));
  // Too few data bytes for the width; a width that is not a number.
  bytes =
      withHeader("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }",
                 utf32(U"ab", 3), 1);
  EXPECT_THROW(parseNpy(bytes.data(), bytes.size(), "mem"), TensorIOError);
  bytes = withHeader(
      "{'descr': '<Ux', 'fortran_order': False, 'shape': (1,), }", {}, 1);
  EXPECT_THROW(parseNpy(bytes.data(), bytes.size(), "mem"), TensorIOError);
  // Invalid UTF-8 cannot be written as unicode.
  EXPECT_THROW(encodeNpy(makeStringTensor({1}, {"\xff"})), TensorIOError);
}

TEST(Npy, AcceptsHeaderVariants) {
  std::vector<uint8_t> data = {1, 0, 2, 0, 3, 0};
  for (const std::string &dict :
       {"{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }",
        "{\"shape\": (3L,), \"descr\": \"=i2\", \"fortran_order\": False}",
        "{'descr':'<i2','fortran_order':False,'shape':[3]}    ",
        "{'descr': '<i2', 'fortran_order': False, 'shape': (3, )}"}) {
    for (uint8_t major : {1, 2, 3}) {
      std::vector<uint8_t> bytes = withHeader(dict, data, major);
      HostTensor t = parseNpy(bytes.data(), bytes.size(), "mem");
      EXPECT_EQ(t.type, ElementType::I16) << dict;
      EXPECT_EQ(t.shape, std::vector<int64_t>{3}) << dict;
      EXPECT_EQ(t.elementAsDouble(2), 3.0) << dict;
    }
  }
  // Single-byte types carry no byte order, whatever the marker.
  std::vector<uint8_t> bytes = withHeader(
      "{'descr': '>u1', 'fortran_order': False, 'shape': (2,)}", {7, 8});
  EXPECT_EQ(parseNpy(bytes.data(), bytes.size(), "mem").type, ElementType::U8);
}

TEST(Npy, MalformedHeadersAreErrors) {
  std::vector<uint8_t> six(6, 0);
  struct Case {
    std::string dict;
    std::string error;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
       "expected a non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(4294967296, 4294967296, 4294967296)}",
       "too many elements"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       "dimension too large"},
      {"{'descr': '<f4', 'shape': (1,)}", "expected exactly the keys"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
       "unsupported value"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
       "unsupported value"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 'x'}",
       "wrong kind of value"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
       "expected '}'"},
      {"{'descr': '<f4', 'descr': '<f4', 'shape': (1,)}", "duplicate key"},
      {"{'descr': 'f4', 'fortran_order': False, 'shape': (1,)}", "byte order"},
      {"{'descr': '<f3', 'fortran_order': False, 'shape': (1,)}",
       "unsupported .npy dtype"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk",
       "unexpected text"},
      {"{'descr': '<f\\4', 'fortran_order': False, 'shape': (1,)}",
       "escape sequences"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", "expected"},
      {"", "expected '{'"},
      {"{'descr': '<i2', 'fortran_order': False, 'shape': (2,)}",
       "bytes after the data"},
      {"{'descr': '<i2', 'fortran_order': False, 'shape': (4,)}",
       "truncated .npy file"},
      {"{'descr': '|b1', 'fortran_order': False, 'shape': (6,)}",
       "bool .npy data holds byte"},
  };
  for (const Case &c : cases) {
    std::vector<uint8_t> data = six;
    if (c.error.find("bool") != std::string::npos)
      data = {0, 1, 2, 0, 1, 0};
    std::string message = errorOf(withHeader(c.dict, data));
    EXPECT_NE(message.find("mem.npy"), std::string::npos) << c.dict;
    EXPECT_NE(message.find(c.error), std::string::npos)
        << c.dict << " -> " << message;
  }
  EXPECT_NE(errorOf({'x', 'y'}).find("not a .npy file"), std::string::npos);
  // Strings of width 0 hold no bytes, so the file would not bound their
  // count (found by fuzz-npy); NumPy never writes them.
  std::string zeroWidth = errorOf(withHeader(
      "{'descr': '<U0', 'fortran_order': False, 'shape': (1, 1000000, "
      "1000000, 1000000)}",
      {}));
  EXPECT_NE(zeroWidth.find("dtype '<U0' has width 0, which NumPy never "
                           "writes"),
            std::string::npos)
      << zeroWidth;
  std::vector<uint8_t> v4 = withHeader("{}", {});
  v4[6] = 4;
  EXPECT_NE(errorOf(v4).find("unsupported .npy format version 4.0"),
            std::string::npos);
}

TEST(Npy, EveryTruncationIsAnError) {
  for (const char *name : {"npy/f32.npy", "npy/f32_v2.npy", "npy/f32_v3.npy",
                           "npy/scalar_i64.npy"}) {
    std::vector<uint8_t> bytes = fileBytes(fixture(name));
    for (size_t n = 0; n < bytes.size(); ++n) {
      // A copy of exactly n bytes, so ASan catches any read past the end.
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
      EXPECT_THROW(parseNpy(prefix.data(), prefix.size(), name), TensorIOError)
          << name << " cut to " << n << " bytes";
    }
  }
}

TEST(Npy, CorruptedHeaderBytesNeverCrash) {
  std::vector<uint8_t> original = fileBytes(fixture("npy/i32.npy"));
  // Every header byte replaced by a selection of troublesome values: each
  // must parse or throw TensorIOError, never crash or over-read.
  for (size_t pos = 0; pos < 128 && pos < original.size(); ++pos) {
    for (uint8_t value : {0x00, 0x01, 0x22, 0x27, 0x28, 0x29, 0x2c, 0x30, 0x39,
                          0x4c, 0x5b, 0x5c, 0x7b, 0x7d, 0x80, 0xff}) {
      std::vector<uint8_t> bytes = original;
      bytes[pos] = value;
      try {
        HostTensor t = parseNpy(bytes.data(), bytes.size(), "fuzz");
        EXPECT_NO_THROW(t.validate());
      } catch (const TensorIOError &) {
      }
    }
  }
}

TEST(Npy, MissingFileNamesThePath) {
  try {
    readNpy("/nonexistent/dir/x.npy");
    FAIL();
  } catch (const TensorIOError &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.npy: cannot open"),
              std::string::npos);
  }
  HostTensor t = patternTensor(ElementType::F32, {2});
  EXPECT_THROW(writeNpy("/nonexistent/dir/x.npy", t), TensorIOError);
}

TEST(Npy, InvalidTensorIsNotWritten) {
  HostTensor t = patternTensor(ElementType::F32, {2, 2});
  t.bytes.pop_back();
  EXPECT_THROW(encodeNpy(t), TensorIOError);
  t.shape = {-1};
  EXPECT_THROW(encodeNpy(t), TensorIOError);
}

} // namespace
