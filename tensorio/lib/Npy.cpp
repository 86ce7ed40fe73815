//===- Npy.cpp - Reading and writing .npy files -----------------*- C++ -*-===//
//
// The .npy format is a magic string, a version, a header length, and a
// Python dict literal ({'descr': '<f4', 'fortran_order': False, 'shape':
// (3, 4), }) followed by the raw array bytes. The header is parsed with a
// small recursive-descent parser over the literal subset numpy writes rather
// than by pattern matching, so reordered keys, double quotes, extra spaces,
// trailing commas and Python 2 long suffixes ("3L") are all accepted, and
// anything else is refused with a message. Every offset is checked against the
// buffer size before it is read.
//
// Strings: numpy's fixed-width dtypes are read into tensors of strings,
// unicode ('<U<n>': n UTF-32 code units per element, encoded here as UTF-8)
// and bytes ('|S<n>': n bytes per element, taken as they are); both pad with
// NULs, which are removed. Object arrays ('|O') hold pickles and are refused.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include "strata/Runtime/Utf8.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

using namespace strata::tio;

namespace {
constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy pads the header so that the data starts 64-byte aligned.
constexpr size_t kAlign = 64;

/// A value in the header dict: a string, a bool or a tuple of integers.
struct PyValue {
  enum Kind { String, Bool, Tuple } kind = String;
  std::string text;
  bool boolean = false;
  std::vector<int64_t> ints;
};

class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::string &what)
      : text(text), what(what) {}

  std::map<std::string, PyValue> parseDict() {
    std::map<std::string, PyValue> dict;
    expect('{');
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key = parseString();
      expect(':');
      PyValue value = parseValue();
      if (!dict.emplace(key, std::move(value)).second)
        fail("duplicate key '" + key + "'");
      skipSpace();
      if (consume(','))
        continue;
      expect('}');
      break;
    }
    skipSpace();
    if (pos != text.size())
      fail("unexpected text after the header dict");
    return dict;
  }

private:
  [[noreturn]] void fail(const std::string &problem) const {
    throw TensorIOError(what + ": malformed .npy header: " + problem +
                        " (at offset " + std::to_string(pos) + " of \"" +
                        std::string(text) + "\")");
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c))
      fail(std::string("expected '") + c + "'");
  }

  std::string parseString() {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      fail("expected a string");
    char quote = text[pos++];
    std::string result;
    while (pos < text.size() && text[pos] != quote) {
      // Escapes never occur in the dtype strings we accept; refuse them
      // rather than mis-read them.
      if (text[pos] == '\\')
        fail("escape sequences in strings are not supported");
      result += text[pos++];
    }
    if (pos >= text.size())
      fail("unterminated string");
    ++pos;
    return result;
  }

  int64_t parseInt() {
    skipSpace();
    size_t start = pos;
    uint64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      unsigned digit = text[pos] - '0';
      if (value > (static_cast<uint64_t>(INT64_MAX) - digit) / 10)
        fail("dimension too large");
      value = value * 10 + digit;
      ++pos;
    }
    if (pos == start)
      fail("expected a non-negative integer");
    // Python 2 numpy wrote longs as "3L".
    if (pos < text.size() && (text[pos] == 'L' || text[pos] == 'l'))
      ++pos;
    return static_cast<int64_t>(value);
  }

  PyValue parseValue() {
    skipSpace();
    PyValue value;
    if (pos >= text.size())
      fail("expected a value");
    char c = text[pos];
    if (c == '\'' || c == '"') {
      value.kind = PyValue::String;
      value.text = parseString();
      return value;
    }
    if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      ++pos;
      value.kind = PyValue::Tuple;
      while (true) {
        skipSpace();
        if (consume(close))
          break;
        if (pos < text.size() && (text[pos] == '(' || text[pos] == '[' ||
                                  text[pos] == '\'' || text[pos] == '"'))
          fail("structured dtypes and nested sequences are not supported");
        value.ints.push_back(parseInt());
        if (consume(','))
          continue;
        expect(close);
        break;
      }
      return value;
    }
    for (auto [word, boolean] : {std::pair{"True", true}, {"False", false}}) {
      size_t len = std::strlen(word);
      if (text.substr(pos, len) == word) {
        pos += len;
        value.kind = PyValue::Bool;
        value.boolean = boolean;
        return value;
      }
    }
    fail("unsupported value");
  }

  std::string_view text;
  const std::string &what;
  size_t pos = 0;
};

/// Maps a dtype descr like "<f4" to an element type.
ElementType parseDescr(const std::string &descr, const std::string &what) {
  auto bad = [&](const std::string &why) -> TensorIOError {
    return TensorIOError(what + ": unsupported .npy dtype '" + descr +
                         "': " + why);
  };
  if (descr.size() < 2)
    throw bad("expected a byte order, a kind and a size, e.g. '<f4'");
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order != '<' && order != '>' && order != '=' && order != '|')
    throw bad("expected a byte order '<', '>', '=' or '|'");

  static const std::pair<const char *, ElementType> kCodes[] = {
      {"f2", ElementType::F16}, {"f4", ElementType::F32},
      {"f8", ElementType::F64}, {"b1", ElementType::Bool},
      {"?", ElementType::Bool}, {"i1", ElementType::I8},
      {"i2", ElementType::I16}, {"i4", ElementType::I32},
      {"i8", ElementType::I64}, {"u1", ElementType::U8},
      {"u2", ElementType::U16}, {"u4", ElementType::U32},
      {"u8", ElementType::U64},
  };
  for (auto [name, type] : kCodes) {
    if (code != name)
      continue;
    // '>' only matters for multi-byte types; numpy itself writes '|' for
    // single bytes but accepts '>i1' too.
    if (order == '>' && elementSize(type) > 1)
      throw bad("big-endian data is not supported (convert with "
                "arr.astype(arr.dtype.newbyteorder('<')))");
    return type;
  }
  throw bad("supported dtypes are f2 f4 f8 b1 i1 i2 i4 i8 u1 u2 u4 u8");
}

const char *descrFor(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "<f4";
  case ElementType::F64:
    return "<f8";
  case ElementType::F16:
    return "<f2";
  case ElementType::BF16:
    // No numpy dtype; keep the bits (see writeNpy's documentation).
    return "<u2";
  case ElementType::Bool:
    return "|b1";
  case ElementType::I8:
    return "|i1";
  case ElementType::I16:
    return "<i2";
  case ElementType::I32:
    return "<i4";
  case ElementType::I64:
    return "<i8";
  case ElementType::U8:
    return "|u1";
  case ElementType::U16:
    return "<u2";
  case ElementType::U32:
    return "<u4";
  case ElementType::U64:
    return "<u8";
  case ElementType::String:
    break; // its width depends on the data (encodeNpy)
  }
  return "";
}

/// numpy's fixed-width string dtypes: 'U' (UTF-32 code units) or 'S'
/// (bytes), with the number of units per element; kind 0 when `descr` is
/// not one.
struct StringDescr {
  char kind = 0;
  uint64_t units = 0;
  size_t unitBytes = 0;
};

StringDescr parseStringDescr(const std::string &descr,
                             const std::string &what) {
  StringDescr out;
  if (descr.size() < 2 || (descr[1] != 'U' && descr[1] != 'S'))
    return out;
  if (descr[1] == 'U' && descr[0] == '>')
    throw TensorIOError(what + ": unsupported .npy dtype '" + descr +
                        "': big-endian data is not supported");
  if (descr.size() == 2 || descr.size() > 12 ||
      descr.find_first_not_of("0123456789", 2) != std::string::npos)
    throw TensorIOError(what + ": unsupported .npy dtype '" + descr +
                        "': expected a width, e.g. '<U8'");
  out.kind = descr[1];
  out.units = std::stoull(descr.substr(2));
  out.unitBytes = out.kind == 'U' ? 4 : 1;
  return out;
}

uint32_t readLE(const uint8_t *p, size_t n) {
  uint32_t value = 0;
  for (size_t i = 0; i < n; ++i)
    value |= static_cast<uint32_t>(p[i]) << (8 * i);
  return value;
}
} // namespace

static HostTensor parseNpyBytes(const uint8_t *data, size_t size,
                                const std::string &what);

HostTensor strata::tio::parseNpy(const uint8_t *data, size_t size,
                                 const std::string &what) {
  return detail::reportingOutOfMemory(
      what, [&] { return parseNpyBytes(data, size, what); });
}

static HostTensor parseNpyBytes(const uint8_t *data, size_t size,
                                const std::string &what) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "tensorio assumes a little-endian host");
  if (size < kMagicLen + 2 || std::memcmp(data, kMagic, kMagicLen) != 0)
    throw TensorIOError(what + ": not a .npy file (no \\x93NUMPY magic)");
  uint8_t major = data[kMagicLen], minor = data[kMagicLen + 1];
  size_t lengthBytes;
  if (major == 1 && minor == 0)
    lengthBytes = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    lengthBytes = 4;
  else
    throw TensorIOError(what + ": unsupported .npy format version " +
                        std::to_string(major) + "." + std::to_string(minor) +
                        " (supported: 1.0, 2.0, 3.0)");
  size_t prefix = kMagicLen + 2 + lengthBytes;
  if (size < prefix)
    throw TensorIOError(what + ": truncated .npy file (no header length)");
  uint64_t headerLen = readLE(data + kMagicLen + 2, lengthBytes);
  if (headerLen > size - prefix)
    throw TensorIOError(what + ": truncated .npy file (header of " +
                        std::to_string(headerLen) + " bytes, file has " +
                        std::to_string(size - prefix) + " after the prefix)");
  // Versions 1 and 2 are latin-1 and 3 is UTF-8; the keys and values we
  // accept are ASCII either way.
  std::string_view header(reinterpret_cast<const char *>(data + prefix),
                          headerLen);
  std::map<std::string, PyValue> dict = HeaderParser(header, what).parseDict();

  auto get = [&](const char *key, PyValue::Kind kind) -> const PyValue & {
    auto it = dict.find(key);
    if (it == dict.end())
      throw TensorIOError(what + ": malformed .npy header: no '" + key +
                          "' key");
    if (it->second.kind != kind)
      throw TensorIOError(what + ": malformed .npy header: '" + key +
                          "' has the wrong kind of value");
    return it->second;
  };
  if (dict.size() != 3)
    throw TensorIOError(what + ": malformed .npy header: expected exactly "
                               "the keys descr, fortran_order and shape");
  const std::string &descr = get("descr", PyValue::String).text;
  if (descr == "|O" || descr == "O")
    throw TensorIOError(what + ": unsupported .npy dtype '" + descr +
                        "': object arrays hold pickled Python objects; save "
                        "strings with a fixed-width dtype (arr.astype(str))");
  StringDescr strings = parseStringDescr(descr, what);
  ElementType type =
      strings.kind ? ElementType::String : parseDescr(descr, what);
  if (get("fortran_order", PyValue::Bool).boolean)
    throw TensorIOError(what + ": Fortran-order .npy arrays are not supported "
                               "(save with np.ascontiguousarray)");

  if (strings.kind) {
    HostTensor tensor;
    tensor.type = ElementType::String;
    tensor.shape = get("shape", PyValue::Tuple).ints;
    int64_t count = detail::checkedNumElements(tensor.shape, what);
    uint64_t width = strings.units * strings.unitBytes;
    // NumPy makes 'U0' and 'S0' arrays 'U1' and 'S1': a width of 0 holds no
    // bytes, so nothing in the file would bound the count (found by
    // fuzz-npy: a 128-byte file asking for 2^44 strings).
    if (width == 0)
      throw TensorIOError(what + ": .npy string dtype '" + descr +
                          "' has width 0, which NumPy never writes");
    uint64_t dataSize;
    if (__builtin_mul_overflow(static_cast<uint64_t>(count), width, &dataSize))
      throw TensorIOError(what + ": .npy string data size overflows");
    size_t available = size - prefix - headerLen;
    if (dataSize != available)
      throw TensorIOError(what + ": .npy file has " +
                          std::to_string(available) + " data bytes, but " +
                          tensor.describe() + " of '" + descr + "' needs " +
                          std::to_string(dataSize));
    const uint8_t *p = data + prefix + headerLen;
    // The strings themselves must fit too (their bytes are in the file,
    // but each is an object).
    std::string forWhat =
        std::to_string(count) + " strings for " + tensor.describe();
    uint64_t objectBytes;
    if (__builtin_mul_overflow(static_cast<uint64_t>(count),
                               uint64_t(sizeof(std::string)), &objectBytes))
      objectBytes = std::numeric_limits<uint64_t>::max();
    detail::checkFitsInMemory(objectBytes, what, forWhat);
    detail::allocateOrThrow(what, forWhat,
                            [&] { tensor.strings.resize(count); });
    for (int64_t i = 0; i < count; ++i, p += width) {
      std::string &s = tensor.strings[i];
      if (strings.kind == 'S') {
        s.assign(reinterpret_cast<const char *>(p), width);
      } else {
        for (uint64_t u = 0; u < strings.units; ++u) {
          uint32_t cp = readLE(p + 4 * u, 4);
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            throw TensorIOError(what + ": element " + std::to_string(i) +
                                " holds an invalid code point");
          if (cp == 0) // numpy pads with NULs and strips them on reading
            break;
          strata::utf8::append(s, cp);
        }
      }
      s.erase(s.find_last_not_of('\0') + 1);
    }
    return tensor;
  }

  HostTensor tensor;
  tensor.type = type;
  tensor.shape = get("shape", PyValue::Tuple).ints;
  int64_t count = detail::checkedNumElements(tensor.shape, what);
  uint64_t dataSize = detail::checkedByteSize(count, type, what);
  size_t available = size - prefix - headerLen;
  if (dataSize > available)
    throw TensorIOError(what + ": truncated .npy file: " + tensor.describe() +
                        " needs " + std::to_string(dataSize) +
                        " data bytes, file has " + std::to_string(available));
  if (dataSize < available)
    throw TensorIOError(what + ": .npy file has " +
                        std::to_string(available - dataSize) +
                        " bytes after the data of " + tensor.describe());
  const uint8_t *begin = data + prefix + headerLen;
  detail::allocateOrThrow(
      what,
      std::to_string(dataSize) + " bytes for the data of " + tensor.describe(),
      [&] { tensor.bytes.assign(begin, begin + dataSize); });
  if (type == ElementType::Bool)
    for (uint8_t b : tensor.bytes)
      if (b > 1)
        throw TensorIOError(what + ": bool .npy data holds byte " +
                            std::to_string(b) + " (expected 0 or 1)");
  return tensor;
}

HostTensor strata::tio::readNpy(const std::string &path) {
  std::vector<uint8_t> bytes = detail::readFileBytes(path);
  return parseNpy(bytes.data(), bytes.size(), path);
}

std::vector<uint8_t> strata::tio::encodeNpy(const HostTensor &tensor) {
  tensor.validate();
  // Strings as numpy's '<U<n>', n the longest element in code points.
  std::vector<uint8_t> stringData;
  std::string stringDescr;
  if (tensor.type == ElementType::String) {
    std::vector<std::u32string> points(tensor.strings.size());
    size_t width = 1; // numpy's narrowest unicode dtype is '<U1'
    for (size_t i = 0; i < tensor.strings.size(); ++i) {
      if (!strata::utf8::decode(tensor.strings[i], points[i]))
        throw TensorIOError("cannot write " + tensor.describe() +
                            " as .npy: element " + std::to_string(i) +
                            " is not valid UTF-8");
      width = std::max(width, points[i].size());
    }
    stringDescr = "<U" + std::to_string(width);
    stringData.assign(points.size() * width * 4, 0);
    for (size_t i = 0; i < points.size(); ++i)
      for (size_t k = 0; k < points[i].size(); ++k)
        for (size_t b = 0; b < 4; ++b)
          stringData[(i * width + k) * 4 + b] =
              static_cast<uint8_t>(points[i][k] >> (8 * b));
  }
  // Byte for byte what numpy 1.x's np.save writes for version 1.0, so files
  // compare equal to numpy's: shape as a Python tuple repr, a trailing ", }",
  // then spaces and a newline up to a multiple of 64 bytes.
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    if (i)
      shape += ", ";
    shape += std::to_string(tensor.shape[i]);
  }
  if (tensor.shape.size() == 1)
    shape += ",";
  shape += ")";
  std::string header =
      std::string("{'descr': '") +
      (stringDescr.empty() ? descrFor(tensor.type) : stringDescr.c_str()) +
      "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy leaves room for the first dimension to grow to 21 digits (for
  // appending in place).
  if (!tensor.shape.empty()) {
    size_t digits = std::to_string(tensor.shape[0]).size();
    header.append(digits < 21 ? 21 - digits : 0, ' ');
  }
  // A header past 64 KiB (only with thousands of dimensions) needs 2.0 and
  // its 4-byte length.
  uint8_t major = header.size() + kAlign + 1 > 0xffff ? 2 : 1;
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t unpadded = kMagicLen + 2 + lengthBytes + header.size() + 1;
  // Like numpy, always at least one space (a whole 64 when already aligned).
  header.append(kAlign - unpadded % kAlign, ' ');
  header += '\n';

  std::vector<uint8_t> out(kMagic, kMagic + kMagicLen);
  out.push_back(major);
  out.push_back(0);
  for (size_t i = 0; i < lengthBytes; ++i)
    out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), tensor.bytes.begin(), tensor.bytes.end());
  out.insert(out.end(), stringData.begin(), stringData.end());
  return out;
}

void strata::tio::writeNpy(const std::string &path, const HostTensor &tensor) {
  std::vector<uint8_t> bytes = encodeNpy(tensor);
  detail::writeFileBytes(path, bytes.data(), bytes.size());
}
