//===- Session.cpp - Running a module ---------------------------*- C++ -*-===//
//
// The kernel registry, KernelContext and Session. A session loads the
// module's generated code, resolves every step's kernel and allocates the
// arena when it is created, so that a module it cannot run is rejected
// before the first input arrives; run() then only binds views and calls
// kernels in plan order. Generated kernels follow the ABI of docs/runtime.md:
// one call per chunk of their `parallel` range, spread over the pool.
// Host buffers (tensors of strings, and tensors of numbers whose shape
// depends on values) never touch the arena: the session holds each as a
// Tensor of its own, which a library step may replace when the buffer's
// shape is only known at run time (KernelContext::allocateOutput,
// setStringOutput).
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include "Branches.h"
#include "CodeLoader.h"
#include "FaultInjection.h"
#include "cuda/CudaExecutor.h"
#include "kernels/Kernels.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
#include <unordered_map>

namespace strata::rt {

//===----------------------------------------------------------------------===//
// Kernel registry
//===----------------------------------------------------------------------===//

namespace {
struct Registry {
  std::mutex mutex;
  std::unordered_map<std::string, KernelFn> kernels;

  Registry() {
    kernels::registerBasicKernels(
        [this](const std::string &name, KernelFn fn) { kernels[name] = fn; });
    kernels::registerDnnlKernels(
        [this](const std::string &name, KernelFn fn) { kernels[name] = fn; });
    kernels::registerStringKernels(
        [this](const std::string &name, KernelFn fn) { kernels[name] = fn; });
    kernels::registerValueShapedKernels(
        [this](const std::string &name, KernelFn fn) { kernels[name] = fn; });
    kernels::registerHostOpKernels(
        [this](const std::string &name, KernelFn fn) { kernels[name] = fn; });
    kernels::registerHostLoopKernel(
        [this](const std::string &name, KernelFn fn) { kernels[name] = fn; });
  }
};

Registry &registry() {
  // Built on first use: no dependence on static initialization order.
  static Registry instance;
  return instance;
}
} // namespace

void registerKernel(const std::string &name, KernelFn fn) {
  if (!fn)
    throw Error("registerKernel: null function for '" + name + "'");
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.kernels[name] = fn;
}

KernelFn lookupKernel(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.kernels.find(name);
  return it == r.kernels.end() ? nullptr : it->second;
}

//===----------------------------------------------------------------------===//
// KernelContext
//===----------------------------------------------------------------------===//

Error KernelContext::error(const std::string &message) const {
  return Error("strata module '" + module_.name() +
               "': " + step_.describe(index_) + ": " + message);
}

const TensorView &KernelContext::input(size_t i) const {
  if (i >= inputs_.size())
    throw error("has no input " + std::to_string(i));
  return inputs_[i];
}

const TensorView &KernelContext::output(size_t i) const {
  if (i >= outputs_.size())
    throw error("has no output " + std::to_string(i));
  return outputs_[i];
}

KernelState::~KernelState() = default;

bool KernelContext::inputIsConstant(size_t i) const {
  // A kernel run by another kernel (host.loop's body) reads values of that
  // kernel, not module buffers: none is a constant.
  if (step_.inputs.empty() && i < inputs_.size())
    return false;
  if (i >= step_.inputs.size())
    throw error("has no input " + std::to_string(i));
  return module_.buffers()[step_.inputs[i]].kind == BufferKind::Constant;
}

bool KernelContext::hasAttr(const std::string &key) const {
  for (const Attribute &a : step_.attributes)
    if (a.key == key)
      return true;
  return false;
}

const Attribute &KernelContext::attr(const std::string &key) const {
  for (const Attribute &a : step_.attributes)
    if (a.key == key)
      return a;
  throw error("has no attribute '" + key + "'");
}

int64_t KernelContext::attrInt(const std::string &key) const {
  const Attribute &a = attr(key);
  if (a.ints.size() != 1)
    throw error("attribute '" + key + "' is not one integer");
  return a.ints[0];
}

const std::vector<int64_t> &
KernelContext::attrInts(const std::string &key) const {
  const Attribute &a = attr(key);
  if (!a.floats.empty() || !a.str.empty())
    throw error("attribute '" + key + "' is not a list of integers");
  return a.ints;
}

double KernelContext::attrFloat(const std::string &key) const {
  const Attribute &a = attr(key);
  if (a.floats.size() != 1)
    throw error("attribute '" + key + "' is not one float");
  return a.floats[0];
}

const std::vector<double> &
KernelContext::attrFloats(const std::string &key) const {
  const Attribute &a = attr(key);
  if (!a.ints.empty() || !a.str.empty())
    throw error("attribute '" + key + "' is not a list of floats");
  return a.floats;
}

const std::string &KernelContext::attrString(const std::string &key) const {
  const Attribute &a = attr(key);
  if (!a.ints.empty() || !a.floats.empty() || !a.strs.empty())
    throw error("attribute '" + key + "' is not a string");
  return a.str;
}

const std::vector<std::string> &
KernelContext::attrStrings(const std::string &key) const {
  const Attribute &a = attr(key);
  if (!a.ints.empty() || !a.floats.empty() || !a.str.empty())
    throw error("attribute '" + key + "' is not a list of strings");
  return a.strs;
}

void KernelContext::bindHostOutput(size_t i, Tensor *storage) {
  if (i >= outputs_.size())
    throw error("has no output " + std::to_string(i));
  if (hostOutputs_.size() < outputs_.size())
    hostOutputs_.resize(outputs_.size(), nullptr);
  hostOutputs_[i] = storage;
}

Tensor *KernelContext::hostOutput(size_t i) const {
  return i < hostOutputs_.size() ? hostOutputs_[i] : nullptr;
}

void KernelContext::checkOutputShape(size_t i,
                                     const std::vector<int64_t> &shape) const {
  if (i >= outputs_.size())
    throw error("has no output " + std::to_string(i));
  const TensorView &out = outputs_[i];
  try {
    (void)rt::numElements(shape);
  } catch (const Error &e) {
    throw error("output " + std::to_string(i) + ": " + e.what());
  }
  bool dynamic = false;
  bool fits = shape.size() == out.shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d) {
    dynamic |= out.shape[d] < 0;
    fits = out.shape[d] < 0 || out.shape[d] == shape[d];
  }
  const char *type = dtypeName(out.dtype);
  if (!fits)
    throw error("output " + std::to_string(i) + " is " + type +
                shapeToString(out.shape) + " but the step produced " + type +
                shapeToString(shape));
  if (dynamic && !hostOutput(i))
    throw error("output " + std::to_string(i) + " has the run-time shape " +
                type + shapeToString(out.shape) +
                " but the executor gave it no storage (bindHostOutput)");
}

TensorView &KernelContext::allocateOutput(size_t i,
                                          std::vector<int64_t> shape) {
  checkOutputShape(i, shape);
  TensorView &out = outputs_[i];
  Tensor *storage = hostOutput(i);
  if (!storage) {
    // The arena: the storage is the plan's and the shape is the declared
    // one (checkOutputShape allows no other without bound storage).
    if (!out.data && out.numElements())
      throw error("output " + std::to_string(i) + " has no storage");
    return out;
  }
  // The storage of the previous run (or iteration) when it is large enough:
  // a fresh allocation of tens of MB costs a page fault per page every run.
  if (storage->reuseStorageFor(out.dtype, shape)) {
    out.shape = storage->shape();
    out.data = storage->view().data;
    return out;
  }
  // Made before the bound tensor is replaced, so that a failure leaves the
  // output as it was. The session names the step of an OutOfMemory. Not
  // zero-filled: a kernel writes all of its output, as it must in the arena,
  // and filling a large host tensor first cost as much as computing it
  // (Mask R-CNN's [1000, 256, 7, 7] RoI features, 50 MB).
  Tensor fresh;
  try {
    fresh = Tensor::uninitialized(out.dtype, std::move(shape));
  } catch (const OutOfMemory &e) {
    throw OutOfMemory("output " + std::to_string(i) + ": " + e.what());
  }
  *storage = std::move(fresh);
  out.shape = storage->shape();
  out.data = storage->view().data;
  return out;
}

void KernelContext::setStringOutput(size_t i, std::vector<int64_t> shape,
                                    std::vector<std::string> values) {
  if (i >= outputs_.size())
    throw error("has no output " + std::to_string(i));
  TensorView &out = outputs_[i];
  if (out.dtype != DType::String)
    throw error("output " + std::to_string(i) + " is " + dtypeName(out.dtype) +
                ", not a tensor of strings");
  checkOutputShape(i, shape);
  int64_t count = rt::numElements(shape);
  if (static_cast<uint64_t>(count) != static_cast<uint64_t>(values.size()))
    throw error("output " + std::to_string(i) + ": " +
                std::to_string(values.size()) + " strings for shape " +
                shapeToString(shape));
  if (Tensor *storage = hostOutput(i)) {
    *storage = Tensor::fromStrings(std::move(shape), std::move(values));
    out.shape = storage->shape();
    out.data = storage->data<std::string>();
    return;
  }
  auto *elements = static_cast<std::string *>(out.data);
  if (count && !elements)
    throw error("output " + std::to_string(i) + " has no storage");
  for (int64_t k = 0; k < count; ++k)
    elements[k] = std::move(values[k]);
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

SessionOptions::Cuda SessionOptions::Cuda::resolved() const {
  Cuda r = *this;
  auto env = [](const char *name) -> const char * {
    const char *value = std::getenv(name);
    return value && *value ? value : nullptr;
  };
  // "0" turns a switch off; anything else leaves it on.
  auto flag = [&](std::optional<bool> &field, const char *name) {
    if (!field) {
      const char *value = env(name);
      field = !(value && std::string(value) == "0");
    }
  };
  auto number = [&](std::optional<double> &field, const char *name,
                    double fallback) {
    if (field)
      return;
    field = fallback;
    if (const char *value = env(name)) {
      char *end = nullptr;
      double v = std::strtod(value, &end);
      if (*end || !(v >= 0))
        throw Error(std::string(name) + " must be a number >= 0, not '" +
                    value + "'");
      field = v;
    }
  };
  auto count = [&](const char *name, unsigned long low,
                   unsigned long high) -> std::optional<unsigned long> {
    const char *value = env(name);
    if (!value)
      return std::nullopt;
    char *end = nullptr;
    unsigned long n = std::strtoul(value, &end, 10);
    if (*end || value[0] == '-' || n < low || n > high)
      throw Error(std::string(name) + " must be a whole number from " +
                  std::to_string(low) + " to " + std::to_string(high) +
                  ", not '" + value + "'");
    return n;
  };
  flag(r.tuneLibrary, "STRATA_CUBLASLT_TUNE");
  number(r.tuneMinFlops, "STRATA_CUBLASLT_TUNE_MIN_FLOPS", 1e9);
  if (!r.libraryCandidates)
    r.libraryCandidates = static_cast<int>(
        count("STRATA_CUBLASLT_CANDIDATES", 1, 64).value_or(32));
  number(r.splitMinFlops, "STRATA_CUBLASLT_SPLIT_MIN_FLOPS", 4e9);
  flag(r.classBatch, "STRATA_CUBLASLT_CLASS_BATCH");
  if (!r.persistentBlocks)
    r.persistentBlocks = static_cast<unsigned>(
        count("STRATA_CUDA_PERSISTENT_BLOCKS", 1, UINT_MAX).value_or(0));
  flag(r.gridDependency, "STRATA_CUDA_PDL");
  if (!r.ptxOnly) {
    const char *image = env("STRATA_CUDA_IMAGE");
    r.ptxOnly = image && std::string(image) == "ptx";
  }
  if (!r.libraryChoices) {
    const char *file = env("STRATA_CUBLASLT_CHOICES");
    r.libraryChoices = file ? file : "";
  }
  if (*r.libraryCandidates < 1 || *r.libraryCandidates > 64)
    throw Error("SessionOptions::Cuda::libraryCandidates must be from 1 to "
                "64, not " +
                std::to_string(*r.libraryCandidates));
  return r;
}

Session::Session(std::shared_ptr<const Module> module, SessionOptions options)
    : module_(std::move(module)),
      // A CUDA session's work runs on the GPU; its pool stays unused.
      pool_(module_ && module_->target() == "cuda" ? 1 : options.threads) {
  if (!module_)
    throw Error("Session: no module");
  try {
    create(options);
  } catch (const std::bad_alloc &) {
    // What the containers below allocate; the arena and the tensors report
    // their own sizes.
    throw OutOfMemory("strata module '" + module_->name() +
                      "': out of memory while creating a session");
  }
}

void Session::create(const SessionOptions &options) {
  const Module &m = *module_;
  tracing_ = options.trace;
  created_ = std::chrono::steady_clock::now();
  profile_ = options.profile || options.trace;
  if (profile_)
    stepTimes_.assign(m.steps().size(), 0.0);
  auto fail = [&](const std::string &what) {
    throw Error("strata module '" + m.name() + "': " + what);
  };
  // A CUDA module whose every step is a host kernel ("string.*" for
  // strings, which GPUs do not do; "host.*" for outputs whose shape
  // depends on values) has nothing for the GPU; it runs here, on the host,
  // once the GPU has been found as for any CUDA module. Modules that mix
  // host steps with GPU work are refused by the CUDA executor
  // (docs/runtime.md, "Strings").
  bool hostOnly = m.target() == "cuda" && !m.steps().empty() && !m.gpuCubin() &&
                  !m.gpuPtx();
  for (const Step &step : m.steps())
    hostOnly &= step.isHostKernel();
  if (m.target() == "cuda" && !hostOnly) {
    // The CUDA executor owns the device side; this session keeps the host
    // inputs and outputs (setInput, output) as for the CPU.
    cuda_ = detail::createCudaExecutor(m, options);
    inputs_.resize(m.inputs().size());
    inputSet_.assign(m.inputs().size(), false);
    outputTargets_.assign(m.outputs().size(), nullptr);
    inputDevice_.assign(m.inputs().size(), 0);
    outputDevice_.assign(m.outputs().size(), 0);
    return;
  }
  if (hostOnly) {
    std::string why;
    if (!cudaAvailable(&why))
      throw Error(why);
  } else if (m.target() != "cpu")
    fail("targets '" + m.target() +
         "'; this runtime runs 'cpu' and 'cuda' modules");

  size_t numSteps = m.steps().size();
  kernels_.assign(numSteps, nullptr);
  generated_.assign(numSteps, nullptr);
  parallel_.assign(numSteps, 1);
  pointers_.resize(numSteps);
  states_.resize(numSteps);
  for (size_t i = 0; i < numSteps; ++i) {
    const Step &step = m.steps()[i];
    if (step.kind == StepKind::Library) {
      kernels_[i] = lookupKernel(step.name);
      if (!kernels_[i])
        fail(step.describe(i) + " calls unknown library kernel '" + step.name +
             "'");
      continue;
    }
    // Checked before the code is loaded: this is a plan error whatever the
    // code holds.
    for (const std::vector<uint32_t> *ids : {&step.inputs, &step.outputs})
      for (uint32_t id : *ids)
        if (m.buffers()[id].dtype == DType::String)
          fail(step.describe(i) + " is a generated kernel, but buffer " +
               std::to_string(id) +
               " holds strings (only library kernels take strings)");
    if (!code_)
      code_ = m.loadCode();
    std::string why;
    generated_[i] =
        reinterpret_cast<GeneratedKernelFn>(code_->function(step.name, why));
    if (!generated_[i])
      fail(step.describe(i) + " is a generated kernel, but " + why);
    for (const Attribute &a : step.attributes) {
      if (a.key != "parallel")
        continue;
      if (a.ints.size() != 1 || !a.floats.empty() || !a.str.empty() ||
          a.ints[0] < 1)
        fail(step.describe(i) +
             ": attribute 'parallel' must be one integer >= 1");
      parallel_[i] = a.ints[0];
    }
    // The generated code was compiled for fixed shapes and aligned memory
    // (the ABI); a plan that breaks that would make it read out of bounds.
    auto checkBuffer = [&](uint32_t id) {
      const BufferInfo &b = m.buffers()[id];
      for (int64_t d : b.shape)
        if (d < 0)
          fail(step.describe(i) + " is a generated kernel for static shapes, " +
               "but buffer " + std::to_string(id) + " has shape " +
               shapeToString(b.shape));
      if (b.kind == BufferKind::Arena && b.offset % 64 != 0)
        fail(step.describe(i) + " is a generated kernel, which needs 64-byte " +
             "aligned buffers, but buffer " + std::to_string(id) +
             " is at arena offset " + std::to_string(b.offset));
    };
    for (uint32_t id : step.inputs)
      checkBuffer(id);
    for (uint32_t id : step.outputs)
      checkBuffer(id);
    pointers_[i].resize(step.inputs.size() + step.outputs.size());
  }

  if (m.arenaSize() > SIZE_MAX)
    fail("the arena of " + std::to_string(m.arenaSize()) +
         " bytes does not fit in memory");
  // Not zeroed: the plan writes every arena buffer before reading it, and
  // touching every page of a large arena up front would cost real time.
  try {
    arena_ = detail::allocateAligned(static_cast<size_t>(m.arenaSize()),
                                     "its arena", /*zero=*/false);
  } catch (const OutOfMemory &e) {
    throw OutOfMemory("strata module '" + m.name() + "': " + e.what());
  }

  views_.resize(m.buffers().size());
  hostBuffers_.resize(m.buffers().size());
  for (size_t i = 0; i < m.buffers().size(); ++i) {
    const BufferInfo &b = m.buffers()[i];
    TensorView &v = views_[i];
    v.dtype = b.dtype;
    v.shape = b.shape;
    if (b.kind == BufferKind::Arena) {
      v.data = arena_.get() + b.offset;
    } else if (b.kind == BufferKind::Constant && b.dtype == DType::String) {
      v.data = const_cast<std::string *>(b.strings.data());
    } else if (b.kind == BufferKind::Constant) {
      // Kernels get constants read-only through KernelContext::input.
      v.data = const_cast<uint8_t *>(b.data);
    } else if (b.kind == BufferKind::Host) {
      // A static shape is allocated now; a run-time one by its step.
      bool isStatic = true;
      for (int64_t d : b.shape)
        isStatic &= d >= 0;
      if (isStatic) {
        try {
          hostBuffers_[i] = Tensor::zeros(b.dtype, b.shape);
        } catch (const OutOfMemory &e) {
          throw OutOfMemory("strata module '" + m.name() + "': buffer " +
                            std::to_string(i) + ": " + e.what());
        }
        v.data = hostBuffers_[i].view().data;
      }
    }
  }
  inputs_.resize(m.inputs().size());
  inputSet_.assign(m.inputs().size(), false);
  outputTargets_.assign(m.outputs().size(), nullptr);
  inputDevice_.assign(m.inputs().size(), 0);
  outputDevice_.assign(m.outputs().size(), 0);
}

Session::~Session() = default;

/// "'x' (its inputs are 'a', 'b')" for a name not in `signatures`.
static std::string unknownName(const std::string &name, const char *what,
                               const std::vector<TensorSignature> &signatures) {
  std::string known;
  for (const TensorSignature &sig : signatures)
    known += (known.empty() ? "'" : ", '") + sig.name + "'";
  return "'" + name + "' (its " + what + "s are " +
         (known.empty() ? std::string("none") : known) + ")";
}

size_t Session::inputIndex(const std::string &name) const {
  const auto &inputs = module_->inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == name)
      return i;
  throw Error("strata module '" + module_->name() + "' has no input named " +
              unknownName(name, "input", inputs));
}

size_t Session::outputIndex(const std::string &name) const {
  const auto &outputs = module_->outputs();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == name)
      return i;
  throw Error("strata module '" + module_->name() + "' has no output named " +
              unknownName(name, "output", outputs));
}

void Session::setInput(const std::string &name, const Tensor &tensor) {
  setInput(inputIndex(name), tensor);
}

void Session::setInput(size_t index, const Tensor &tensor) {
  checkInput(index, tensor.view());
  // The copy is made before the bound tensor is replaced: when it cannot be
  // made, the input keeps what it had.
  try {
    inputs_[index] = tensor;
  } catch (const OutOfMemory &e) {
    throw OutOfMemory("strata module '" + module_->name() + "': input '" +
                      module_->inputs()[index].name + "': " + e.what());
  } catch (const std::bad_alloc &) {
    throw OutOfMemory("strata module '" + module_->name() + "': input '" +
                      module_->inputs()[index].name + "': out of memory");
  }
  bindInput(index);
}

void Session::setInput(size_t index, Tensor &&tensor) {
  checkInput(index, tensor.view());
  inputs_[index] = std::move(tensor);
  bindInput(index);
}

void Session::unsetInput(size_t index) {
  if (index >= inputSet_.size())
    throw Error("strata module '" + module_->name() + "' has no input " +
                std::to_string(index) + " (it has " +
                std::to_string(inputSet_.size()) + ")");
  inputSet_[index] = false;
  inputs_[index] = Tensor();
  inputDevice_[index] = 0;
  if (!cuda_)
    views_[module_->inputs()[index].buffer].data = nullptr;
}

void Session::setInputView(const std::string &name, const TensorView &view) {
  setInputView(inputIndex(name), view);
}

void Session::setInputView(size_t index, const TensorView &view) {
  checkInput(index, view);
  size_t elementSize = view.dtype == DType::String ? 0 : dtypeSize(view.dtype);
  bool inPlace = !cuda_ && elementSize != 0 &&
                 reinterpret_cast<uintptr_t>(view.data) % elementSize == 0;
  if (!inPlace) {
    Tensor copy = Tensor::zeros(view.dtype, view.shape);
    if (view.dtype == DType::String)
      std::copy_n(static_cast<const std::string *>(view.data),
                  copy.numElements(), copy.strings().begin());
    else if (copy.byteSize())
      std::memcpy(copy.rawData(), view.data, copy.byteSize());
    inputs_[index] = std::move(copy);
    bindInput(index);
    return;
  }
  // The bound tensor's storage is not needed any more.
  inputs_[index] = Tensor();
  bindInput(index, view);
}

void Session::setOutputView(const std::string &name, const TensorView &view) {
  setOutputView(outputIndex(name), view);
}

const TensorSignature &Session::outputSignature(size_t index) const {
  if (index >= module_->outputs().size())
    throw Error("strata module '" + module_->name() + "' has no output " +
                std::to_string(index));
  return module_->outputs()[index];
}

void Session::checkOutputTarget(size_t index, DType dtype,
                                const std::vector<int64_t> &shape,
                                bool null) const {
  const Module &m = *module_;
  const TensorSignature &sig = outputSignature(index);
  std::string who = "strata module '" + m.name() + "': output '" + sig.name +
                    "' (" + dtypeName(sig.dtype) + shapeToString(sig.shape) +
                    ")";
  if (sig.dtype == DType::String)
    throw Error(who + " is a tensor of strings, which the session keeps");
  if (std::any_of(sig.shape.begin(), sig.shape.end(),
                  [](int64_t d) { return d < 0; }))
    throw Error(who + " has a shape set at run time; it cannot be written "
                      "into memory of a fixed size");
  if (dtype != sig.dtype || shape != sig.shape)
    throw Error(who + " cannot be written into " + dtypeName(dtype) +
                shapeToString(shape));
  if (null && numElements(sig.shape) != 0)
    throw Error(who + ": the memory to write it into is null");
}

void Session::setOutputView(size_t index, const TensorView &view) {
  checkOutputTarget(index, view.dtype, view.shape, view.data == nullptr);
  outputTargets_[index] = view.data;
  outputDevice_[index] = 0;
}

void Session::setInputDevice(size_t index, DType dtype,
                             const std::vector<int64_t> &shape,
                             uint64_t address) {
  const Module &m = *module_;
  if (!cuda_)
    throw Error("strata module '" + m.name() +
                "': inputs in device memory are for CUDA sessions; this "
                "session runs on the CPU");
  // checkInput reads a value that sets a shape: on the host only.
  if (index < m.inputs().size() && !m.inputs()[index].requiredValue.empty())
    throw Error("strata module '" + m.name() + "': input '" +
                m.inputs()[index].name +
                "' sets a shape, so its value is checked on the host: give "
                "it in host memory");
  // A stand-in for the device memory: only its address's nullness is read.
  TensorView view{dtype, shape,
                  reinterpret_cast<void *>(static_cast<uintptr_t>(address))};
  checkInput(index, view);
  inputs_[index] = Tensor();
  inputSet_[index] = true;
  inputDevice_[index] = address;
}

void Session::setOutputDevice(size_t index, uint64_t address) {
  const Module &m = *module_;
  if (!cuda_)
    throw Error("strata module '" + m.name() +
                "': outputs into device memory are for CUDA sessions; this "
                "session runs on the CPU");
  const TensorSignature &sig = outputSignature(index);
  checkOutputTarget(index, sig.dtype, sig.shape, address == 0);
  outputTargets_[index] = nullptr;
  outputDevice_[index] = address;
}

void Session::unsetOutputView(size_t index) {
  outputSignature(index);
  outputTargets_[index] = nullptr;
  outputDevice_[index] = 0;
}

std::string valuesToString(DType dtype, const std::vector<int64_t> &shape,
                           const std::vector<uint8_t> &bytes) {
  std::string text;
  bool printed = kernels::dispatchNumeric(dtype, [&](auto zero) {
    using T = decltype(zero);
    size_t n = bytes.size() / sizeof(T);
    for (size_t i = 0; i < n; ++i) {
      T value;
      std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
      std::ostringstream os;
      if constexpr (sizeof(T) == 1)
        os << static_cast<int>(value);
      else
        os << value;
      text += (i ? ", " : "") + os.str();
    }
  });
  if (!printed)
    return "(" + std::to_string(bytes.size()) + " bytes)";
  return shape.empty() ? text : "[" + text + "]";
}

void Session::checkInput(size_t index, const TensorView &tensor) const {
  const auto &inputs = module_->inputs();
  if (index >= inputs.size())
    throw Error("strata module '" + module_->name() + "' has no input " +
                std::to_string(index) + " (it has " +
                std::to_string(inputs.size()) + ")");
  const TensorSignature &sig = inputs[index];
  std::string who = "strata module '" + module_->name() + "': input '" +
                    sig.name + "' expects " + dtypeName(sig.dtype) +
                    shapeToString(sig.shape) + ", got ";
  std::string got =
      std::string(dtypeName(tensor.dtype)) + shapeToString(tensor.shape);
  if (tensor.dtype != sig.dtype)
    throw Error(who + got + " (element type differs)");
  if (tensor.shape.size() != sig.shape.size())
    throw Error(who + got + " (rank differs)");
  for (size_t d = 0; d < sig.shape.size(); ++d) {
    if (tensor.shape[d] < 0)
      throw Error(who + got + " (dimension " + std::to_string(d) +
                  " is negative)");
    if (sig.shape[d] != -1 && sig.shape[d] != tensor.shape[d])
      throw Error(who + got + " (dimension " + std::to_string(d) + " differs)");
  }
  if (tensor.data == nullptr && tensor.numElements() != 0)
    throw Error(who + got + " (no data)");
  if (!sig.requiredValue.empty() &&
      (tensor.byteSize() != sig.requiredValue.size() ||
       std::memcmp(tensor.data, sig.requiredValue.data(),
                   sig.requiredValue.size()) != 0))
    throw Error("strata module '" + module_->name() + "': input '" + sig.name +
                "' sets a shape, and the module was compiled for its value " +
                valuesToString(sig.dtype, sig.shape, sig.requiredValue) +
                ", not " +
                valuesToString(tensor.dtype, tensor.shape,
                               {static_cast<const uint8_t *>(tensor.data),
                                static_cast<const uint8_t *>(tensor.data) +
                                    tensor.byteSize()}) +
                "; compile it for this value (strata run and conformance do)");
}

void Session::bindInput(size_t index) {
  bindInput(index, inputs_[index].view());
}

void Session::bindInput(size_t index, const TensorView &view) {
  inputSet_[index] = true;
  inputDevice_[index] = 0;
  if (cuda_)
    return; // Copied to the device by run().
  // The buffer takes the tensor's actual shape (dynamic dimensions bound).
  TensorView &v = views_[module_->inputs()[index].buffer];
  v.shape = view.shape;
  v.data = view.data;
}

void Session::run() {
  const Module &m = *module_;
  for (size_t i = 0; i < inputSet_.size(); ++i)
    if (!inputSet_[i])
      throw Error("strata module '" + m.name() + "': input '" +
                  m.inputs()[i].name + "' was not set");
  ran_ = false;
  uint32_t run = runs_++;
  if (cuda_) {
    auto start = std::chrono::steady_clock::now();
    std::vector<double> before = stepTimes_;
    cuda_->run(inputs_, outputs_, outputTargets_, inputDevice_, outputDevice_,
               profile_ ? &stepTimes_ : nullptr);
    outputsInCaller_ = outputTargets_;
    for (size_t i = 0; i < outputDevice_.size(); ++i)
      if (outputDevice_[i])
        outputsInCaller_[i] =
            reinterpret_cast<void *>(static_cast<uintptr_t>(outputDevice_[i]));
    if (tracing_) {
      double at = std::chrono::duration<double>(start - created_).count();
      for (size_t i = 0; i < stepTimes_.size(); ++i) {
        double d = stepTimes_[i] - before[i];
        trace_.push_back({run, static_cast<uint32_t>(i), at, d});
        at += d;
      }
    }
    ran_ = true;
    return;
  }
  // Buffers of the branch a run-time If did not take (docs/runtime.md,
  // "Run-time branches"): a step that reads one is skipped, and its outputs
  // are skipped with it.
  skipped_.assign(m.buffers().size(), 0);
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const Step &step = m.steps()[i];
    if (detail::skipsBranchStep(
            m, i, skipped_,
            [&](uint32_t id) -> const TensorView & { return views_[id]; }))
      continue;
    auto start = profile_ ? std::chrono::steady_clock::now()
                          : std::chrono::steady_clock::time_point();
    // Adds this step's time when profiling, however the step ends.
    struct StepTimer {
      Session &session;
      size_t index;
      std::chrono::steady_clock::time_point start;
      uint32_t run;
      ~StepTimer() {
        if (!session.profile_)
          return;
        double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
        session.stepTimes_[index] += seconds;
        if (session.tracing_)
          session.trace_.push_back(
              {run, static_cast<uint32_t>(index),
               std::chrono::duration<double>(start - session.created_).count(),
               seconds});
      }
    } timer{*this, i, start, run};
    // A failed allocation names the step it stopped; the next run starts
    // over from the first step.
    try {
      runStep(i);
    } catch (const OutOfMemory &e) {
      throw OutOfMemory("strata module '" + m.name() +
                        "': " + step.describe(i) + ": " + e.what());
    } catch (const std::bad_alloc &) {
      throw OutOfMemory("strata module '" + m.name() +
                        "': " + step.describe(i) + ": out of memory");
    }
  }
  collectOutputs();
  outputsInCaller_ = outputTargets_;
  ran_ = true;
}

/// One step of a CPU run: its kernel on the views of its buffers.
void Session::runStep(size_t i) {
  const Module &m = *module_;
  const Step &step = m.steps()[i];
  if (step.kind == StepKind::Kernel) {
    runGenerated(i);
    return;
  }
  std::vector<TensorView> ins, outs;
  for (uint32_t id : step.inputs)
    ins.push_back(views_[id]);
  for (uint32_t id : step.outputs) {
    outs.push_back(views_[id]);
    // A host buffer's kernel sees its declared shape (-1 where the step
    // decides), not the shape the previous run gave it.
    if (m.buffers()[id].kind == BufferKind::Host)
      outs.back().shape = m.buffers()[id].shape;
  }
  KernelContext ctx(step, i, m, std::move(ins), std::move(outs), pool_,
                    &states_[i]);
  for (size_t k = 0; k < step.outputs.size(); ++k)
    if (m.buffers()[step.outputs[k]].kind == BufferKind::Host)
      ctx.bindHostOutput(k, &hostBuffers_[step.outputs[k]]);
  // Host buffers may have been given new storage (and their run-time
  // shape); the session's views follow, even when the kernel then failed,
  // so that none is left pointing at storage that was replaced.
  auto takeHostViews = [&] {
    for (size_t k = 0; k < step.outputs.size(); ++k) {
      uint32_t id = step.outputs[k];
      if (m.buffers()[id].kind != BufferKind::Host)
        continue;
      views_[id].shape = ctx.output(k).shape;
      views_[id].data = ctx.output(k).data;
    }
  };
  try {
    kernels_[i](ctx);
  } catch (...) {
    takeHostViews();
    throw;
  }
  takeHostViews();
  for (size_t k = 0; k < step.outputs.size(); ++k) {
    const TensorView &v = views_[step.outputs[k]];
    if (m.buffers()[step.outputs[k]].kind != BufferKind::Host)
      continue;
    for (int64_t d : v.shape)
      if (d < 0)
        throw Error("strata module '" + m.name() + "': " + step.describe(i) +
                    " did not set the run-time shape " + "of its output " +
                    std::to_string(k) + " (" + dtypeName(v.dtype) +
                    shapeToString(v.shape) + ")");
  }
}

/// Copies the outputs of a finished run (the session's buffers are
/// overwritten by the next run).
void Session::collectOutputs() {
  const Module &m = *module_;
  outputs_.clear();
  for (const TensorSignature &sig : m.outputs()) {
    const TensorView &v = views_[sig.buffer];
    auto failed = [&](const std::string &why) {
      outputs_.clear();
      return OutOfMemory("strata module '" + m.name() + "': output '" +
                         sig.name + "': " + why);
    };
    if (v.dtype == DType::String) {
      int64_t count = v.numElements();
      const auto *elements = static_cast<const std::string *>(v.data);
      std::vector<std::string> values;
      try {
        if (detail::injectedAllocationFailure())
          throw std::bad_alloc();
        if (count)
          values.assign(elements, elements + count);
      } catch (const std::bad_alloc &) {
        throw failed("cannot allocate a copy of its " + std::to_string(count) +
                     " strings");
      }
      outputs_.push_back(Tensor::fromStrings(v.shape, std::move(values)));
      continue;
    }
    if (void *target = outputTargets_[outputs_.size()]) {
      // setOutputView: the caller's memory, of the output's static shape.
      if (size_t bytes =
              static_cast<size_t>(v.numElements()) * dtypeSize(v.dtype))
        std::memcpy(target, v.data, bytes);
      outputs_.emplace_back();
      continue;
    }
    Tensor t;
    try {
      t = Tensor::uninitialized(v.dtype, v.shape);
    } catch (const OutOfMemory &e) {
      throw failed(e.what());
    }
    if (size_t bytes = t.byteSize())
      std::memcpy(t.rawData(), v.data, bytes);
    outputs_.push_back(std::move(t));
  }
}

void Session::runGenerated(size_t index) {
  const Step &step = module_->steps()[index];
  // Input views are rebound by setInput, so the pointers are refreshed on
  // every run.
  std::vector<void *> &pointers = pointers_[index];
  size_t n = 0;
  for (uint32_t id : step.inputs)
    pointers[n++] = views_[id].data;
  for (uint32_t id : step.outputs)
    pointers[n++] = views_[id].data;
  GeneratedKernelFn fn = generated_[index];
  void *const *buffers = pointers.data();
  int64_t extent = parallel_[index];
  // One contiguous chunk per thread: the generated loops are uniform, and a
  // larger range per call lets each call amortize its setup.
  int64_t threads = pool_.numThreads();
  int64_t grain = (extent + threads - 1) / threads;
  pool_.parallelFor(0, extent, grain, [&](int64_t begin, int64_t end) {
    fn(buffers, begin, end);
  });
}

std::string Session::stepChoice(size_t index) const {
  return index < states_.size() && states_[index] ? states_[index]->describe()
                                                  : std::string();
}

const Tensor &Session::output(const std::string &name) const {
  return output(outputIndex(name));
}

const Tensor &Session::output(size_t index) const {
  const TensorSignature &sig = outputSignature(index);
  if (!ran_)
    throw Error("strata module '" + module_->name() + "': output '" + sig.name +
                "' is not available before a successful run()");
  if (outputsInCaller_[index])
    throw Error("strata module '" + module_->name() + "': output '" + sig.name +
                "' of the last run was written into the caller's memory "
                "(setOutputView), not kept by the session");
  return outputs_[index];
}

} // namespace strata::rt
