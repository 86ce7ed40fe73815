//===- HostTensor.cpp - Host tensors and file helpers -----------*- C++ -*-===//
//
// The element-type table, HostTensor's accessors, the f16/bf16 widening
// conversions, and the checked file and size helpers the format readers use.
// Sizes come from untrusted files, so every product is overflow-checked
// before anything is allocated or indexed.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

using namespace strata::tio;

namespace {
struct TypeInfo {
  ElementType type;
  const char *name;
  size_t size;
  bool isFloat;
};

// Indexed by the enum's value; the order must match the declaration.
constexpr TypeInfo kTypes[] = {
    {ElementType::F32, "f32", 4, true},
    {ElementType::F64, "f64", 8, true},
    {ElementType::F16, "f16", 2, true},
    {ElementType::BF16, "bf16", 2, true},
    {ElementType::Bool, "bool", 1, false},
    {ElementType::I8, "i8", 1, false},
    {ElementType::I16, "i16", 2, false},
    {ElementType::I32, "i32", 4, false},
    {ElementType::I64, "i64", 8, false},
    {ElementType::U8, "u8", 1, false},
    {ElementType::U16, "u16", 2, false},
    {ElementType::U32, "u32", 4, false},
    {ElementType::U64, "u64", 8, false},
    {ElementType::String, "string", 0, false},
};

const TypeInfo &info(ElementType type) {
  return kTypes[static_cast<size_t>(type)];
}

template <typename T> T load(const uint8_t *p) {
  // memcpy, not a cast: the bytes carry no alignment guarantee.
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

std::string formatDouble(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  // %.17g round-trips a double; try shorter forms first so that 1.5 prints
  // as "1.5", not "1.5000000000000000".
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  return buf;
}

std::string formatFloat(float value) {
  if (std::isnan(value) || std::isinf(value))
    return formatDouble(value);
  char buf[64];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtof(buf, nullptr) == value)
      break;
  }
  return buf;
}
} // namespace

const std::vector<ElementType> &strata::tio::allElementTypes() {
  static const std::vector<ElementType> types = [] {
    std::vector<ElementType> result;
    for (const TypeInfo &t : kTypes)
      if (t.type != ElementType::String)
        result.push_back(t.type);
    return result;
  }();
  return types;
}

const char *strata::tio::elementTypeName(ElementType type) {
  return info(type).name;
}

std::optional<ElementType>
strata::tio::parseElementType(std::string_view name) {
  for (const TypeInfo &t : kTypes)
    if (name == t.name)
      return t.type;
  return std::nullopt;
}

size_t strata::tio::elementSize(ElementType type) {
  if (type == ElementType::String)
    throw TensorIOError("a tensor of strings has no element size in bytes");
  return info(type).size;
}

bool strata::tio::isFloatingPoint(ElementType type) {
  return info(type).isFloat;
}

float strata::tio::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  uint32_t out;
  if (exponent == 0x1f) {
    // Inf or NaN; keep the payload so NaNs stay NaNs.
    out = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;
  } else {
    // Subnormal half: value = mantissa * 2^-24, exact in float.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    std::memcpy(&out, &magnitude, sizeof(out));
    out |= sign;
  }
  float result;
  std::memcpy(&result, &out, sizeof(result));
  return result;
}

float strata::tio::bfloat16ToFloat(uint16_t bits) {
  uint32_t out = static_cast<uint32_t>(bits) << 16;
  float result;
  std::memcpy(&result, &out, sizeof(result));
  return result;
}

int64_t HostTensor::numElements() const {
  return detail::checkedNumElements(shape, "tensor");
}

void HostTensor::validate() const {
  if (type == ElementType::String) {
    int64_t count = numElements();
    if (!bytes.empty() ||
        static_cast<uint64_t>(strings.size()) != static_cast<uint64_t>(count))
      throw TensorIOError("tensor " + describe() + " needs " +
                          std::to_string(count) + " strings and no bytes but " +
                          "holds " + std::to_string(strings.size()) +
                          " strings and " + std::to_string(bytes.size()) +
                          " bytes");
    return;
  }
  if (!strings.empty())
    throw TensorIOError("tensor " + describe() + " holds strings");
  uint64_t expected =
      detail::checkedByteSize(numElements(), type, "tensor " + describe());
  if (bytes.size() != expected)
    throw TensorIOError("tensor " + describe() + " needs " +
                        std::to_string(expected) + " bytes but holds " +
                        std::to_string(bytes.size()));
}

double HostTensor::elementAsDouble(size_t i) const {
  if (type == ElementType::String)
    throw TensorIOError("tensor " + describe() +
                        ": a string has no numeric value");
  const uint8_t *p = bytes.data() + i * elementSize(type);
  switch (type) {
  case ElementType::F32:
    return load<float>(p);
  case ElementType::F64:
    return load<double>(p);
  case ElementType::F16:
    return halfToFloat(load<uint16_t>(p));
  case ElementType::BF16:
    return bfloat16ToFloat(load<uint16_t>(p));
  case ElementType::Bool:
    return *p != 0;
  case ElementType::I8:
    return load<int8_t>(p);
  case ElementType::I16:
    return load<int16_t>(p);
  case ElementType::I32:
    return load<int32_t>(p);
  case ElementType::I64:
    return static_cast<double>(load<int64_t>(p));
  case ElementType::U8:
    return *p;
  case ElementType::U16:
    return load<uint16_t>(p);
  case ElementType::U32:
    return load<uint32_t>(p);
  case ElementType::U64:
    return static_cast<double>(load<uint64_t>(p));
  case ElementType::String:
    break;
  }
  return 0;
}

std::string HostTensor::elementToString(size_t i) const {
  if (type == ElementType::String) {
    // Quoted, with control bytes escaped so that messages stay one line.
    std::string out = "\"";
    for (char c : strings[i]) {
      auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (u < 0x20 || u == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", u);
        out += buf;
      } else {
        out += c;
      }
    }
    return out + "\"";
  }
  const uint8_t *p = bytes.data() + i * elementSize(type);
  switch (type) {
  case ElementType::F32:
    return formatFloat(load<float>(p));
  case ElementType::F16:
  case ElementType::BF16:
    return formatFloat(static_cast<float>(elementAsDouble(i)));
  case ElementType::F64:
    return formatDouble(load<double>(p));
  case ElementType::Bool:
    return *p ? "true" : "false";
  case ElementType::I64:
    return std::to_string(load<int64_t>(p));
  case ElementType::U64:
    return std::to_string(load<uint64_t>(p));
  default:
    // The remaining integer types are exact in double.
    return std::to_string(static_cast<int64_t>(elementAsDouble(i)));
  }
}

std::string HostTensor::describe() const {
  std::string result = std::string(elementTypeName(type)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      result += "x";
    result += std::to_string(shape[i]);
  }
  return result + "]";
}

HostTensor strata::tio::makeTensor(ElementType type, std::vector<int64_t> shape,
                                   const void *data, size_t sizeInBytes) {
  HostTensor tensor;
  tensor.type = type;
  tensor.shape = std::move(shape);
  const auto *begin = static_cast<const uint8_t *>(data);
  tensor.bytes.assign(begin, begin + sizeInBytes);
  tensor.validate();
  return tensor;
}

HostTensor strata::tio::makeStringTensor(std::vector<int64_t> shape,
                                         std::vector<std::string> strings) {
  HostTensor tensor;
  tensor.type = ElementType::String;
  tensor.shape = std::move(shape);
  tensor.strings = std::move(strings);
  tensor.validate();
  return tensor;
}

HostTensor strata::tio::bitcast(HostTensor tensor, ElementType type) {
  if (elementSize(tensor.type) != elementSize(type))
    throw TensorIOError(std::string("cannot bitcast ") + tensor.describe() +
                        " to " + elementTypeName(type) +
                        ": element sizes differ");
  tensor.type = type;
  return tensor;
}

//===----------------------------------------------------------------------===//
// detail
//===----------------------------------------------------------------------===//

std::vector<uint8_t>
strata::tio::detail::readFileBytes(const std::string &path) {
  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"),
                                              &std::fclose);
  if (!file)
    throw TensorIOError(path + ": cannot open: " + std::strerror(errno));
  // Sized once for a regular file; a pipe or a file that grows is read in
  // chunks. Either way a failed allocation names the file.
  struct stat status;
  uint64_t expected = 0;
  if (fstat(fileno(file.get()), &status) == 0 && S_ISREG(status.st_mode))
    expected = static_cast<uint64_t>(status.st_size);
  std::vector<uint8_t> bytes;
  allocateOrThrow(path, std::to_string(expected) + " bytes for the file",
                  [&] { bytes.reserve(expected); });
  uint8_t buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) {
    try {
      bytes.insert(bytes.end(), buffer, buffer + n);
    } catch (const std::bad_alloc &) {
      throw TensorIOError(path + ": cannot allocate " +
                          std::to_string(bytes.size() + n) +
                          " bytes for the file");
    }
  }
  if (std::ferror(file.get()))
    throw TensorIOError(path + ": read error");
  return bytes;
}

//===----------------------------------------------------------------------===//
// Fault injection (testing::failAllocationAfter)
//===----------------------------------------------------------------------===//

/// Allocations left before the armed failure; negative when none is armed.
static std::atomic<int64_t> allocationsBeforeFailure{-1};

void strata::tio::testing::failAllocationAfter(uint64_t n) {
  allocationsBeforeFailure.store(static_cast<int64_t>(std::min<uint64_t>(
                                     n, std::numeric_limits<int64_t>::max())),
                                 std::memory_order_relaxed);
}

bool strata::tio::testing::clearAllocationFailure() {
  return allocationsBeforeFailure.exchange(-1, std::memory_order_relaxed) >= 0;
}

bool strata::tio::detail::injectedAllocationFailure() {
  int64_t left = allocationsBeforeFailure.load(std::memory_order_relaxed);
  while (left >= 0)
    if (allocationsBeforeFailure.compare_exchange_weak(
            left, left - 1, std::memory_order_relaxed))
      return left == 0;
  return false;
}

void strata::tio::detail::writeFileBytes(const std::string &path,
                                         const void *data, size_t size) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    throw TensorIOError(path + ": cannot create: " + std::strerror(errno));
  bool ok = std::fwrite(data, 1, size, file) == size;
  // fclose flushes, so its failure is a write failure too.
  ok = (std::fclose(file) == 0) && ok;
  if (!ok)
    throw TensorIOError(path + ": write error");
}

int64_t
strata::tio::detail::checkedNumElements(const std::vector<int64_t> &shape,
                                        const std::string &what) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      throw TensorIOError(what + ": negative dimension " + std::to_string(dim) +
                          " in shape " + formatShape(shape));
    if (__builtin_mul_overflow(count, dim, &count))
      throw TensorIOError(what + ": shape " + formatShape(shape) +
                          " has too many elements");
  }
  return count;
}

void strata::tio::detail::checkFitsInMemory(uint64_t bytes,
                                            const std::string &what,
                                            const std::string &forWhat) {
  static const uint64_t memory = [] {
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0)
      return std::numeric_limits<uint64_t>::max();
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
  }();
  if (bytes > memory)
    throw TensorIOError(what + ": cannot allocate " + forWhat + " (" +
                        std::to_string(bytes) +
                        " bytes, more than this "
                        "machine's " +
                        std::to_string(memory) + ")");
}

uint64_t strata::tio::detail::checkedByteSize(int64_t numElements,
                                              ElementType type,
                                              const std::string &what) {
  if (type == ElementType::String)
    return 0; // No bytes: the strings are held apart.
  int64_t size;
  if (__builtin_mul_overflow(numElements,
                             static_cast<int64_t>(elementSize(type)), &size))
    throw TensorIOError(what + ": byte size overflows");
  return static_cast<uint64_t>(size);
}

std::string
strata::tio::detail::formatShape(const std::vector<int64_t> &shape) {
  std::string result = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      result += ", ";
    result += std::to_string(shape[i]);
  }
  return result + "]";
}
