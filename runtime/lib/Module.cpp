//===- Module.cpp - Loading and validating module files ---------*- C++ -*-===//
//
// Module::load reads a module file into 64-byte aligned memory (so that the
// constants in it are aligned too), checks the file identifier and the size
// prefix (which catches truncation), runs
// flatbuffers::Verifier and only then reads the buffer. The checks after
// verification are the ones FlatBuffers cannot make: the format version,
// enum ranges, that every buffer id a step or signature names exists, that
// arena buffers lie inside the arena and that constants have exactly the
// bytes their type and shape need (string constants: one string per element,
// each checked by the verifier), that strings stay out of the arena, and
// that generated kernels leave host buffers of numbers alone.
// Sessions rely on these checks and do not repeat them.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include "FaultInjection.h"
#include "ModuleChecksum.h"
#include "module_generated.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <type_traits>

namespace strata::rt {

static_assert(static_cast<int>(fb::ElementType::MAX) + 1 == kNumDTypes,
              "DType and fb::ElementType must list the same types");
static_assert(static_cast<int>(fb::ElementType::String) ==
                  static_cast<int>(DType::String),
              "DType and fb::ElementType must number types alike");
static_assert(static_cast<int>(fb::BufferKind::Host) ==
                  static_cast<int>(BufferKind::Host),
              "BufferKind must match fb::BufferKind");
static_assert(static_cast<int>(fb::StepKind::Library) ==
                  static_cast<int>(StepKind::Library),
              "StepKind must match fb::StepKind");

namespace {

/// Collects the module's name so that every message names the file.
struct Reporter {
  const std::string &name;
  [[noreturn]] void fail(const std::string &what) const {
    throw Error("strata module '" + name + "': " + what);
  }
};

std::string hex64(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

std::string str(const flatbuffers::String *s) {
  return s ? std::string(s->c_str(), s->size()) : std::string();
}

/// The elements of a scalar vector. The verifier only checks that a
/// vector's length is 4-byte aligned, so in a corrupted file a vector of
/// 8-byte values (shapes, attributes) may be misaligned: the bytes are copied
/// rather than loaded in place, which is defined for any alignment.
template <typename T, typename U>
std::vector<T> vec(const flatbuffers::Vector<U> *v) {
  static_assert(std::is_scalar_v<U>, "vec() copies scalar vectors only");
  if (!v)
    return {};
  std::vector<T> out(v->size());
  const uint8_t *bytes = v->Data();
  for (size_t i = 0; i < out.size(); ++i) {
    U value;
    std::memcpy(&value, bytes + i * sizeof(U), sizeof(U));
    out[i] = static_cast<T>(flatbuffers::EndianScalar(value));
  }
  return out;
}

DType checkedType(fb::ElementType type, const Reporter &r,
                  const std::string &where) {
  auto raw = static_cast<int>(type);
  if (raw < 0 || raw >= static_cast<int>(kNumDTypes))
    r.fail(where + " has invalid element type " + std::to_string(raw));
  return static_cast<DType>(raw);
}

void checkShape(const std::vector<int64_t> &shape, bool allowDynamic,
                const Reporter &r, const std::string &where) {
  for (int64_t dim : shape) {
    if (dim == -1 && allowDynamic)
      continue;
    if (dim < 0)
      r.fail(where + " has invalid shape " + std::to_string(dim) +
             (allowDynamic ? "" : " (it must be static)"));
  }
}

/// A step's launch (format 1.6), with its extents and field sizes checked.
std::optional<KernelLaunch> kernelLaunch(const fb::KernelLaunch *l,
                                         const Reporter &r,
                                         const std::string &where) {
  if (!l)
    return std::nullopt;
  KernelLaunch launch;
  auto extents = [&](const flatbuffers::Vector<uint32_t> *v, uint32_t *out,
                     const char *what) {
    std::vector<uint32_t> values = vec<uint32_t>(v);
    bool valid = values.size() == 3;
    for (size_t k = 0; valid && k < 3; ++k)
      valid = (out[k] = values[k]) >= 1;
    if (!valid)
      r.fail(where + " has the " + what + " " +
             shapeToString(std::vector<int64_t>(values.begin(), values.end())) +
             "; it must be three extents >= 1 (x, y, z)");
  };
  extents(l->grid(), launch.grid, "grid");
  extents(l->block(), launch.block, "block");
  launch.sharedBytes = l->shared_bytes();
  launch.persistent = l->persistent();
  if (launch.persistent > 64)
    r.fail(where + " is persistent with " + std::to_string(launch.persistent) +
           " blocks per SM; at most 64 are allowed");
  launch.waitsForGrids = l->waits_for_grids();
  launch.tensorMaps = vec<int64_t>(l->tensor_maps());
  if (launch.tensorMaps.size() % 7 != 0)
    r.fail(where + " has " + std::to_string(launch.tensorMaps.size()) +
           " tensor-map numbers; each map has 7 (operand, inner and outer "
           "extents, outer stride in bytes, box inner and outer, swizzle)");
  return launch;
}

/// Which steps have launches: every generated kernel of a GPU module and
/// nothing else. Before format 1.6, a GPU module's launches were step
/// attributes, which this runtime no longer reads.
void checkLaunches(const Step &step, const Reporter &r, const std::string &who,
                   const std::string &target, uint16_t major, uint16_t minor) {
  bool any = step.launch || step.ptxLaunch || !step.ptxKernel.empty();
  if (step.kind != StepKind::Kernel || target != "cuda") {
    if (any)
      r.fail(who + " has a GPU launch, but it is " +
             (step.kind == StepKind::Kernel
                  ? "a generated kernel of a '" + target + "' module"
                  : std::string("a library call")));
    return;
  }
  if (minor < 6)
    r.fail("format " + std::to_string(major) + "." + std::to_string(minor) +
           " records a GPU kernel's launch as step attributes, which this "
           "runtime (format " +
           std::to_string(kFormatMajor) + "." + std::to_string(kFormatMinor) +
           ") no longer reads: compile the model again with this strata");
  if (!step.launch)
    r.fail(who + " is a GPU kernel without a launch (grid, block, shared "
                 "memory)");
  if (step.ptxKernel.empty() != !step.ptxLaunch)
    r.fail(who + " has the portable PTX's own " +
           (step.ptxKernel.empty() ? "launch but not its kernel"
                                   : "kernel but not its launch") +
           "; a step has both or neither");
}

/// The element count of a static shape, or fails when it overflows.
int64_t elementCount(const std::vector<int64_t> &shape, const Reporter &r,
                     const std::string &where) {
  try {
    return numElements(shape);
  } catch (const Error &e) {
    r.fail(where + ": " + e.what());
  }
}

/// The bytes a static shape of `type` needs, or fails when that overflows.
uint64_t byteSize(DType type, const std::vector<int64_t> &shape,
                  const Reporter &r, const std::string &where) {
  int64_t elements = elementCount(shape, r, where);
  uint64_t size = dtypeSize(type);
  if (static_cast<uint64_t>(elements) >
      std::numeric_limits<uint64_t>::max() / size)
    r.fail(where + " has too many elements");
  return static_cast<uint64_t>(elements) * size;
}

TensorSignature readSignature(const fb::TensorSignature *sig, const char *kind,
                              size_t index, const Reporter &r) {
  TensorSignature out;
  out.name = str(sig->name());
  std::string where =
      std::string(kind) + " " + std::to_string(index) + " ('" + out.name + "')";
  out.dtype = checkedType(sig->type(), r, where);
  out.shape = vec<int64_t>(sig->shape());
  checkShape(out.shape, /*allowDynamic=*/true, r, where);
  out.buffer = sig->buffer();
  if (sig->required_value()) {
    out.requiredValue = vec<uint8_t>(sig->required_value());
    if (std::string(kind) != "input")
      r.fail(where + " has a required value, which only inputs may have");
    if (out.dtype == DType::String)
      r.fail(where + " is of strings and has a required value");
    bool dynamic = std::any_of(out.shape.begin(), out.shape.end(),
                               [](int64_t d) { return d < 0; });
    if (dynamic ||
        out.requiredValue.size() != byteSize(out.dtype, out.shape, r, where))
      r.fail(where + " has a required value of " +
             std::to_string(out.requiredValue.size()) +
             " bytes, which does not match its type");
  }
  return out;
}

} // namespace

bool Step::isHostKernel() const {
  return kind == StepKind::Library &&
         (name.rfind("string.", 0) == 0 || name.rfind("host.", 0) == 0);
}

std::string Step::describe(size_t index) const {
  std::string result = "step " + std::to_string(index) + " ('" + name + "'";
  if (!sourceNodes.empty()) {
    result +=
        sourceNodes.size() == 1 ? ", from ONNX node " : ", from ONNX nodes ";
    for (size_t i = 0; i < sourceNodes.size(); ++i)
      result += (i ? ", '" : "'") + sourceNodes[i] + "'";
  }
  return result + ")";
}

std::shared_ptr<const Module> Module::load(const std::string &path) {
  auto fail = [&](const std::string &what) {
    throw Error("strata module '" + path + "': " + what);
  };
  // A directory opens as a stream on Linux and reports a bogus size; ask
  // the file system what the path is first.
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    fail("cannot open the file");
  if (!std::filesystem::is_regular_file(status))
    fail("is not a regular file");
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec)
    fail("cannot read the file's size");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("cannot open the file");
  std::shared_ptr<Module> module;
  try {
    module.reset(new Module());
    module->name_ = path;
    module->numBytes_ = static_cast<size_t>(size);
    module->bytes_ =
        detail::allocateAligned(module->numBytes_, "the file's bytes",
                                /*zero=*/false);
    if (!in.read(reinterpret_cast<char *>(module->bytes_.get()),
                 static_cast<std::streamsize>(size)))
      fail("cannot read the file");
    module->parse();
  } catch (const OutOfMemory &e) {
    throw OutOfMemory("strata module '" + path + "': " + e.what());
  } catch (const std::bad_alloc &) {
    throw OutOfMemory("strata module '" + path +
                      "': out of memory while loading it");
  }
  return module;
}

std::shared_ptr<const Module> Module::loadFromMemory(std::vector<uint8_t> bytes,
                                                     std::string name) {
  std::shared_ptr<Module> module;
  try {
    module.reset(new Module());
    module->name_ = name;
    module->numBytes_ = bytes.size();
    // std::vector's storage is only 16-byte aligned; copy so that the
    // constants are at 64-byte boundaries as the format promises.
    module->bytes_ =
        detail::allocateAligned(module->numBytes_, "the module's bytes",
                                /*zero=*/false);
    if (!bytes.empty())
      std::memcpy(module->bytes_.get(), bytes.data(), bytes.size());
    module->parse();
  } catch (const OutOfMemory &e) {
    throw OutOfMemory("strata module '" + name + "': " + e.what());
  } catch (const std::bad_alloc &) {
    throw OutOfMemory("strata module '" + name +
                      "': out of memory while loading it");
  }
  return module;
}

const std::string *Module::metadataValue(const std::string &key) const {
  for (const auto &[k, v] : metadata_)
    if (k == key)
      return &v;
  return nullptr;
}

namespace {

/// The module's root, once the header (size prefix, root offset,
/// identifier), FlatBuffers' verifier, the version and the checksum have
/// passed; sets the version read.
const fb::Module *verifiedRoot(const uint8_t *base, size_t numBytes,
                               const Reporter &r, uint16_t &major,
                               uint16_t &minor) {
  // The header is the size prefix, the root offset and the identifier. The
  // size prefix is what catches truncation: the verifier alone cannot see
  // a cut that only removes trailing padding.
  constexpr size_t prefixSize = sizeof(flatbuffers::uoffset_t);
  constexpr size_t headerSize =
      2 * sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength;
  if (numBytes < headerSize)
    r.fail("the file is truncated (" + std::to_string(numBytes) +
           " bytes, shorter than a module header)");
  if (!fb::SizePrefixedModuleBufferHasIdentifier(base)) {
    std::string found(reinterpret_cast<const char *>(base) + 2 * prefixSize,
                      flatbuffers::kFileIdentifierLength);
    for (char &c : found)
      if (c < 0x20 || c > 0x7e)
        c = '?';
    r.fail("not a strata module (file identifier '" + found +
           "', expected 'STRM')");
  }
  uint64_t declared = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(base);
  if (declared + prefixSize > numBytes)
    r.fail("the file is truncated (" + std::to_string(numBytes) +
           " bytes, its header says " + std::to_string(declared + prefixSize) +
           ")");
  if (declared + prefixSize < numBytes)
    r.fail("the file has " + std::to_string(numBytes - declared - prefixSize) +
           " bytes of trailing garbage after the module");
  if (numBytes >= FLATBUFFERS_MAX_BUFFER_SIZE)
    r.fail("the file is larger than FlatBuffers' 2 GiB limit");
  flatbuffers::Verifier verifier(base, numBytes);
  if (!fb::VerifySizePrefixedModuleBuffer(verifier))
    r.fail("the file is corrupted (FlatBuffers verification failed)");

  // Verified: from here on the buffer may be read.
  const fb::Module *m = fb::GetSizePrefixedModule(base);
  major = m->version()->major();
  minor = m->version()->minor();
  if (major != kFormatMajor)
    r.fail("format version " + std::to_string(major) + "." +
           std::to_string(minor) + " is not supported (this runtime reads " +
           std::to_string(kFormatMajor) + ".x)");
  // Before anything else is read: the bytes must be the compiler's.
  if (std::optional<size_t> at = detail::checksumOffset(base, numBytes)) {
    uint64_t recorded = flatbuffers::ReadScalar<uint64_t>(base + *at);
    uint64_t actual = detail::moduleChecksum(base, numBytes, *at);
    if (recorded != actual)
      r.fail("the file is corrupted: its bytes do not match the checksum "
             "the compiler recorded (XXH3-64 " +
             hex64(actual) + ", recorded " + hex64(recorded) + ")");
  } else if (minor >= 3) {
    r.fail("the file has no checksum, which format " + std::to_string(major) +
           "." + std::to_string(minor) +
           " records (it was edited or written by another tool)");
  }
  return m;
}

/// Buffer `i` of the module, checked: its kind, type and shape, and its
/// bytes in an arena of `arenaSize` bytes or in the file.
BufferInfo readBuffer(const fb::Buffer *b, size_t i, uint64_t arenaSize,
                      const Reporter &r) {
  std::string where = "buffer " + std::to_string(i);
  BufferInfo info;
  auto kind = static_cast<int>(b->kind());
  if (kind < 0 || kind > static_cast<int>(fb::BufferKind::MAX))
    r.fail(where + " has invalid kind " + std::to_string(kind));
  info.kind = static_cast<BufferKind>(kind);
  info.dtype = checkedType(b->type(), r, where);
  info.shape = vec<int64_t>(b->shape());
  // Host buffers may have -1 dimensions: the step writing them sets
  // them at run time.
  checkShape(info.shape,
             /*allowDynamic=*/info.kind == BufferKind::Input ||
                 info.kind == BufferKind::Host,
             r, where);
  bool isString = info.dtype == DType::String;
  if (isString && info.kind == BufferKind::Arena)
    r.fail(where + " is an arena buffer of strings (strings live in "
                   "host buffers, outside the arena)");
  if (b->strings() && !(isString && info.kind == BufferKind::Constant))
    r.fail(where + " has a string table but is not a constant of "
                   "strings");
  switch (info.kind) {
  case BufferKind::Host:
    break;
  case BufferKind::Arena: {
    info.offset = b->offset();
    info.size = b->size();
    uint64_t needed = byteSize(info.dtype, info.shape, r, where);
    if (info.size < needed)
      r.fail(where + " has " + std::to_string(info.size) +
             " bytes in the arena but its type " + dtypeName(info.dtype) +
             shapeToString(info.shape) + " needs " + std::to_string(needed));
    if (info.offset > arenaSize || info.size > arenaSize - info.offset)
      r.fail(where + " (offset " + std::to_string(info.offset) + ", size " +
             std::to_string(info.size) + ") lies outside the arena of " +
             std::to_string(arenaSize) + " bytes");
    // Kernels access elements directly; a misaligned element is UB.
    if (info.offset % dtypeSize(info.dtype) != 0)
      r.fail(where + " has offset " + std::to_string(info.offset) +
             ", not a multiple of its element size");
    break;
  }
  case BufferKind::Constant: {
    if (isString) {
      // The verifier has checked every string of the table (offsets,
      // lengths, terminators); what is left is that there is one per
      // element and no byte data beside them.
      int64_t count = elementCount(info.shape, r, where);
      size_t have = b->strings() ? b->strings()->size() : 0;
      if (static_cast<uint64_t>(have) != static_cast<uint64_t>(count))
        r.fail(where + " is a constant of type string" +
               shapeToString(info.shape) + " with " + std::to_string(have) +
               " strings, expected " + std::to_string(count));
      if (b->data() && b->data()->size())
        r.fail(where + " is a constant of strings but also has " +
               std::to_string(b->data()->size()) + " bytes of data");
      try {
        if (detail::injectedAllocationFailure())
          throw std::bad_alloc();
        info.strings.reserve(have);
        if (have)
          for (const flatbuffers::String *value : *b->strings())
            info.strings.push_back(str(value));
      } catch (const std::bad_alloc &) {
        throw OutOfMemory("cannot allocate the " + std::to_string(have) +
                          " strings of " + where);
      }
      break;
    }
    uint64_t needed = byteSize(info.dtype, info.shape, r, where);
    size_t have = b->data() ? b->data()->size() : 0;
    if (have != needed)
      r.fail(where + " is a constant of type " + dtypeName(info.dtype) +
             shapeToString(info.shape) + " with " + std::to_string(have) +
             " bytes, expected " + std::to_string(needed));
    if (have) {
      info.data = b->data()->data();
      info.dataSize = have;
      if (reinterpret_cast<uintptr_t>(info.data) % 64 != 0)
        r.fail(where + ": the constant's bytes are not 64-byte aligned");
    }
    break;
  }
  case BufferKind::Input:
    break;
  }
  return info;
}

/// Fails unless `id` names one of `buffers`.
void checkBufferId(const std::vector<BufferInfo> &buffers, uint32_t id,
                   const std::string &who, const Reporter &r) {
  if (id >= buffers.size())
    r.fail(who + " refers to buffer " + std::to_string(id) +
           " which does not exist (the module has " +
           std::to_string(buffers.size()) + " buffers)");
}

/// The model's inputs and outputs, each checked against its buffer: an
/// input's must be an input buffer that no other input uses, and every
/// input buffer must have its input.
void readSignatures(const fb::Module *m, const std::vector<BufferInfo> &buffers,
                    const Reporter &r, std::vector<TensorSignature> &inputs,
                    std::vector<TensorSignature> &outputs) {
  auto checkSignature = [&](const TensorSignature &sig,
                            const std::string &who) {
    checkBufferId(buffers, sig.buffer, who, r);
    const BufferInfo &b = buffers[sig.buffer];
    if (b.dtype != sig.dtype || b.shape != sig.shape)
      r.fail(who + " is " + dtypeName(sig.dtype) + shapeToString(sig.shape) +
             " but its buffer " + std::to_string(sig.buffer) + " is " +
             dtypeName(b.dtype) + shapeToString(b.shape));
  };

  std::vector<bool> inputBound(buffers.size(), false);
  if (auto *declared = m->inputs()) {
    for (flatbuffers::uoffset_t i = 0; i < declared->size(); ++i) {
      TensorSignature sig = readSignature(declared->Get(i), "input", i, r);
      std::string who = "input " + std::to_string(i) + " ('" + sig.name + "')";
      checkSignature(sig, who);
      if (buffers[sig.buffer].kind != BufferKind::Input)
        r.fail(who + " refers to buffer " + std::to_string(sig.buffer) +
               " which is not an input buffer");
      if (inputBound[sig.buffer])
        r.fail(who + " refers to buffer " + std::to_string(sig.buffer) +
               " which another input already uses");
      inputBound[sig.buffer] = true;
      for (const TensorSignature &other : inputs)
        if (other.name == sig.name)
          r.fail("two inputs are named '" + sig.name + "'");
      inputs.push_back(std::move(sig));
    }
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].kind == BufferKind::Input && !inputBound[i])
      r.fail("buffer " + std::to_string(i) +
             " is an input buffer but no input refers to it");
  if (auto *declared = m->outputs()) {
    for (flatbuffers::uoffset_t i = 0; i < declared->size(); ++i) {
      TensorSignature sig = readSignature(declared->Get(i), "output", i, r);
      checkSignature(sig,
                     "output " + std::to_string(i) + " ('" + sig.name + "')");
      for (const TensorSignature &other : outputs)
        if (other.name == sig.name)
          r.fail("two outputs are named '" + sig.name + "'");
      outputs.push_back(std::move(sig));
    }
  }
}

/// Step `i` of the plan, checked: its kind and name, the buffers it reads
/// and writes, its attributes and its GPU launches.
Step readStep(const fb::Step *s, size_t i,
              const std::vector<BufferInfo> &buffers, const Reporter &r,
              const std::string &target, uint16_t major, uint16_t minor) {
  Step step;
  step.name = str(s->name());
  if (auto *nodes = s->source_nodes())
    for (const flatbuffers::String *node : *nodes)
      step.sourceNodes.push_back(str(node));
  std::string who = step.describe(i);
  auto kind = static_cast<int>(s->kind());
  if (kind < 0 || kind > static_cast<int>(fb::StepKind::MAX))
    r.fail(who + " has invalid kind " + std::to_string(kind));
  step.kind = static_cast<StepKind>(kind);
  if (step.name.empty())
    r.fail(who + " has an empty name");
  step.inputs = vec<uint32_t>(s->inputs());
  step.outputs = vec<uint32_t>(s->outputs());
  for (uint32_t id : step.inputs)
    checkBufferId(buffers, id, who, r);
  for (uint32_t id : step.outputs) {
    checkBufferId(buffers, id, who, r);
    if (buffers[id].kind != BufferKind::Arena &&
        buffers[id].kind != BufferKind::Host)
      r.fail(who + " writes buffer " + std::to_string(id) +
             " which is not an arena buffer (nor a host buffer)");
  }
  // Host buffers of numbers (1.4) may change storage and shape at run
  // time, which generated code, compiled for fixed buffers, cannot
  // follow. (Strings are refused for generated kernels by the session.)
  if (step.kind == StepKind::Kernel)
    for (const std::vector<uint32_t> *ids : {&step.inputs, &step.outputs})
      for (uint32_t id : *ids)
        if (buffers[id].kind == BufferKind::Host &&
            buffers[id].dtype != DType::String)
          r.fail(who + " is a generated kernel, but it " +
                 (ids == &step.inputs ? "reads" : "writes") + " buffer " +
                 std::to_string(id) + ", a host buffer of " +
                 dtypeName(buffers[id].dtype) +
                 shapeToString(buffers[id].shape) +
                 " (only library kernels use host buffers)");
  if (auto *attrs = s->attributes()) {
    for (const fb::Attribute *a : *attrs) {
      Attribute attr;
      attr.key = str(a->key());
      attr.ints = vec<int64_t>(a->ints());
      attr.floats = vec<double>(a->floats());
      attr.str = str(a->str());
      if (auto *strs = a->strs())
        for (const flatbuffers::String *value : *strs)
          attr.strs.push_back(str(value));
      for (const Attribute &other : step.attributes)
        if (other.key == attr.key)
          r.fail(who + " has two attributes '" + attr.key + "'");
      step.attributes.push_back(std::move(attr));
    }
  }
  step.launch = kernelLaunch(s->launch(), r, who + "'s launch");
  step.ptxKernel = str(s->ptx_kernel());
  step.ptxLaunch =
      kernelLaunch(s->ptx_launch(), r, who + "'s portable PTX launch");
  checkLaunches(step, r, who, target, major, minor);
  return step;
}

/// Fails unless `arch` is empty or sm_<digits> with at most one lower-case
/// suffix letter.
void checkGpuArch(const std::string &arch, const Reporter &r) {
  if (!arch.empty()) {
    // sm_<digits> with an optional feature suffix letter (sm_90a, sm_100f).
    bool valid = arch.size() > 3 && arch.compare(0, 3, "sm_") == 0;
    size_t i = 3;
    while (valid && i < arch.size() &&
           std::isdigit(static_cast<unsigned char>(arch[i])))
      ++i;
    valid = valid && i > 3 &&
            (i == arch.size() ||
             (i + 1 == arch.size() &&
              std::islower(static_cast<unsigned char>(arch[i]))));
    if (!valid)
      r.fail("gpu_arch '" + arch +
             "' is not a GPU architecture (expected e.g. 'sm_90a')");
  }
}

} // namespace

void Module::parse() {
  Reporter r{name_};
  const fb::Module *m =
      verifiedRoot(bytes_.get(), numBytes_, r, major_, minor_);
  target_ = str(m->target());
  arenaSize_ = m->arena_size();
  if (auto *buffers = m->buffers())
    for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i)
      buffers_.push_back(readBuffer(buffers->Get(i), i, arenaSize_, r));
  readSignatures(m, buffers_, r, inputs_, outputs_);
  if (auto *steps = m->steps())
    for (flatbuffers::uoffset_t i = 0; i < steps->size(); ++i)
      steps_.push_back(
          readStep(steps->Get(i), i, buffers_, r, target_, major_, minor_));

  if (auto *code = m->code()) {
    code_ = code->data();
    codeSize_ = code->size();
  }
  if (auto *metadata = m->metadata())
    for (const fb::KeyValue *kv : *metadata)
      metadata_.emplace_back(str(kv->key()), str(kv->value()));

  // GPU code (format 1.1). The driver is the judge of the images
  // themselves; what is checked here is what would make it misread them.
  if (auto *cubin = m->gpu_cubin(); cubin && cubin->size()) {
    gpuCubin_ = cubin->data();
    gpuCubinSize_ = cubin->size();
  }
  if (auto *ptx = m->gpu_ptx(); ptx && ptx->size()) {
    // The driver reads PTX up to its first NUL (the verifier has checked
    // the terminating one); an embedded NUL would silently cut the code.
    if (const void *nul = std::memchr(ptx->c_str(), 0, ptx->size()))
      r.fail("the GPU code's PTX contains a NUL byte at offset " +
             std::to_string(static_cast<const char *>(nul) - ptx->c_str()) +
             " of " + std::to_string(ptx->size()));
    gpuPtx_ = ptx->c_str();
    gpuPtxSize_ = ptx->size();
  }
  gpuArch_ = str(m->gpu_arch());
  checkGpuArch(gpuArch_, r);
}

} // namespace strata::rt
