//===- Tensor.cpp - Element types, tensors and aligned memory ---*- C++ -*-===//
//
// The helpers for element types, and Tensor, whose storage is 64-byte
// aligned like the arena and the module's constants so that kernels can use
// aligned vector loads on any of them. A tensor of strings holds
// std::string objects instead; asking it for bytes is an Error.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"
#include "strata/Runtime/Testing.h"

#include "FaultInjection.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace strata::rt {

size_t dtypeSize(DType type) {
  switch (type) {
  case DType::F64:
  case DType::I64:
  case DType::U64:
    return 8;
  case DType::F32:
  case DType::I32:
  case DType::U32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
  case DType::U16:
    return 2;
  case DType::I1:
  case DType::I8:
  case DType::U8:
    return 1;
  case DType::String:
    throw Error("a tensor of strings has no element size in bytes (its "
                "elements are std::string objects)");
  }
  throw Error("invalid element type " +
              std::to_string(static_cast<unsigned>(type)));
}

const char *dtypeName(DType type) {
  static const char *const names[kNumDTypes] = {
      "f32", "f64", "f16", "bf16", "i1",  "i8",  "i16",
      "i32", "i64", "u8",  "u16",  "u32", "u64", "string"};
  unsigned index = static_cast<unsigned>(type);
  return index < kNumDTypes ? names[index] : "<invalid>";
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::string result = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      result += ", ";
    result += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return result + "]";
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      throw Error("shape " + shapeToString(shape) + " is not static");
    // Shapes come from files; a corrupted dimension must not overflow.
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      throw Error("shape " + shapeToString(shape) + " has too many elements");
    count *= dim;
  }
  return count;
}

//===----------------------------------------------------------------------===//
// Fault injection (strata/Runtime/Testing.h)
//===----------------------------------------------------------------------===//

/// Allocations left before the armed failure; negative when none is armed.
static std::atomic<int64_t> allocationsBeforeFailure{-1};

void testing::failAllocationAfter(uint64_t n) {
  allocationsBeforeFailure.store(static_cast<int64_t>(std::min<uint64_t>(
                                     n, std::numeric_limits<int64_t>::max())),
                                 std::memory_order_relaxed);
}

bool testing::clearAllocationFailure() {
  return allocationsBeforeFailure.exchange(-1, std::memory_order_relaxed) >= 0;
}

bool detail::injectedAllocationFailure() {
  int64_t left = allocationsBeforeFailure.load(std::memory_order_relaxed);
  // The one that takes the count from 0 to -1 fails; at -1 the hook is
  // disarmed again.
  while (left >= 0)
    if (allocationsBeforeFailure.compare_exchange_weak(
            left, left - 1, std::memory_order_relaxed))
      return left == 0;
  return false;
}

namespace detail {

void throwTypeMismatch(DType actual, const char *requested) {
  throw Error(std::string("a tensor of ") + dtypeName(actual) +
              " accessed as " + requested);
}

void throwStringBytes(const char *what) {
  throw Error(std::string("a tensor of strings has no bytes: ") + what +
              " is meaningless for it (use strings() or data<std::string>())");
}

void AlignedFree::operator()(void *p) const { std::free(p); }

/// This machine's physical memory in bytes (the largest value when the
/// system does not say), asked once: every run allocates its outputs.
static uint64_t physicalMemory() {
  static const uint64_t memory = [] {
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pageSize <= 0)
      return std::numeric_limits<uint64_t>::max();
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
  }();
  return memory;
}

static void checkFitsInMemory(uint64_t bytes, const std::string &what) {
  uint64_t memory = physicalMemory();
  if (bytes > memory)
    throw OutOfMemory("cannot allocate " + std::to_string(bytes) +
                      " bytes for " + what + ": more than this machine's " +
                      std::to_string(memory) + " bytes of memory");
}

AlignedPtr allocateAligned(size_t bytes, const std::string &what, bool zero) {
  // A size past the machine's memory (a corrupted or absurd module) is an
  // Error before any allocation; posix_memalign reports other failures
  // instead of throwing, and they become an Error that names what it was for.
  checkFitsInMemory(bytes, what);
  void *p = nullptr;
  if (injectedAllocationFailure() ||
      posix_memalign(&p, 64, bytes ? bytes : 64) != 0 || !p)
    throw OutOfMemory("cannot allocate " + std::to_string(bytes) +
                      " bytes for " + what);
  if (zero)
    std::memset(p, 0, bytes);
  return AlignedPtr(static_cast<uint8_t *>(p));
}

} // namespace detail

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  return allocate(dtype, std::move(shape), /*zero=*/true);
}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> shape) {
  return allocate(dtype, std::move(shape), /*zero=*/false);
}

Tensor Tensor::allocate(DType dtype, std::vector<int64_t> shape, bool zero) {
  Tensor t;
  t.dtype_ = dtype;
  t.numElements_ = rt::numElements(shape);
  if (dtype == DType::String) {
    if (static_cast<uint64_t>(t.numElements_) >
        std::numeric_limits<size_t>::max() / sizeof(std::string))
      throw Error("tensor of shape " + shapeToString(shape) + " is too large");
    detail::checkFitsInMemory(static_cast<uint64_t>(t.numElements_) *
                                  sizeof(std::string),
                              "a tensor of strings " + shapeToString(shape));
    t.shape_ = std::move(shape);
    try {
      if (detail::injectedAllocationFailure())
        throw std::bad_alloc();
      t.strings_.resize(static_cast<size_t>(t.numElements_));
    } catch (const std::bad_alloc &) {
      throw OutOfMemory("cannot allocate a tensor of strings" +
                        shapeToString(t.shape_));
    }
    return t;
  }
  size_t elementSize = dtypeSize(dtype);
  if (static_cast<uint64_t>(t.numElements_) >
      std::numeric_limits<size_t>::max() / elementSize)
    throw Error("tensor of shape " + shapeToString(shape) + " is too large");
  t.shape_ = std::move(shape);
  t.capacity_ = t.numElements_ * elementSize;
  t.storage_ = detail::allocateAligned(
      t.capacity_,
      std::string("a tensor of ") + dtypeName(dtype) + shapeToString(t.shape_),
      zero);
  return t;
}

bool Tensor::reuseStorageFor(DType dtype, const std::vector<int64_t> &shape) {
  if (!storage_ || dtype == DType::String || dtype_ == DType::String)
    return false;
  int64_t count = rt::numElements(shape);
  size_t elementSize = dtypeSize(dtype);
  if (count < 0 || static_cast<uint64_t>(count) > capacity_ / elementSize)
    return false;
  dtype_ = dtype;
  shape_ = shape;
  numElements_ = count;
  return true;
}

Tensor Tensor::fromStrings(std::vector<int64_t> shape,
                           std::vector<std::string> values) {
  Tensor t;
  t.dtype_ = DType::String;
  t.numElements_ = rt::numElements(shape);
  if (static_cast<uint64_t>(values.size()) !=
      static_cast<uint64_t>(t.numElements_))
    throw Error("Tensor::fromStrings: " + std::to_string(values.size()) +
                " strings for shape " + shapeToString(shape));
  t.shape_ = std::move(shape);
  t.strings_ = std::move(values);
  return t;
}

std::vector<std::string> &Tensor::strings() {
  if (dtype_ != DType::String)
    detail::throwTypeMismatch(dtype_, "strings");
  return strings_;
}

const std::vector<std::string> &Tensor::strings() const {
  return const_cast<Tensor *>(this)->strings();
}

Tensor::Tensor(const Tensor &other)
    : dtype_(other.dtype_), shape_(other.shape_),
      numElements_(other.numElements_) {
  if (!other.strings_.empty()) {
    try {
      if (detail::injectedAllocationFailure())
        throw std::bad_alloc();
      strings_ = other.strings_;
    } catch (const std::bad_alloc &) {
      throw OutOfMemory("cannot allocate a copy of a tensor of strings" +
                        shapeToString(shape_));
    }
  }
  if (other.storage_) {
    capacity_ = other.byteSize();
    storage_ =
        detail::allocateAligned(other.byteSize(),
                                std::string("a copy of a tensor of ") +
                                    dtypeName(dtype_) + shapeToString(shape_),
                                /*zero=*/false);
    std::memcpy(storage_.get(), other.storage_.get(), other.byteSize());
  }
}

Tensor &Tensor::operator=(const Tensor &other) {
  if (this != &other)
    *this = Tensor(other);
  return *this;
}

} // namespace strata::rt
