//===- Session.cpp - Running a module ---------------------------*- C++ -*-===//
//
// The kernel registry, KernelContext and Session. A session resolves every
// step's kernel and allocates the arena when it is created, so that a module
// it cannot run is rejected before the first input arrives; run() then only
// binds views and calls kernels in plan order.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include "kernels/Kernels.h"

#include <cstring>
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
  if (!a.ints.empty() || !a.floats.empty())
    throw error("attribute '" + key + "' is not a string");
  return a.str;
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

Session::Session(std::shared_ptr<const Module> module, SessionOptions options)
    : module_(std::move(module)), pool_(options.threads) {
  if (!module_)
    throw Error("Session: no module");
  const Module &m = *module_;
  auto fail = [&](const std::string &what) {
    throw Error("strata module '" + m.name() + "': " + what);
  };
  if (m.target() != "cpu")
    fail("targets '" + m.target() + "'; this runtime runs 'cpu' modules");

  for (size_t i = 0; i < m.steps().size(); ++i) {
    const Step &step = m.steps()[i];
    if (step.kind == StepKind::Kernel)
      fail(step.describe(i) +
           " is a generated kernel; this runtime does not load generated "
           "code yet");
    KernelFn fn = lookupKernel(step.name);
    if (!fn)
      fail(step.describe(i) + " calls unknown library kernel '" + step.name +
           "'");
    kernels_.push_back(fn);
  }

  if (m.arenaSize() > SIZE_MAX)
    fail("the arena of " + std::to_string(m.arenaSize()) +
         " bytes does not fit in memory");
  // Not zeroed: the plan writes every arena buffer before reading it, and
  // touching every page of a large arena up front would cost real time.
  arena_ = detail::allocateAligned(static_cast<size_t>(m.arenaSize()),
                                   "the arena of module '" + m.name() + "'",
                                   /*zero=*/false);

  views_.resize(m.buffers().size());
  for (size_t i = 0; i < m.buffers().size(); ++i) {
    const BufferInfo &b = m.buffers()[i];
    TensorView &v = views_[i];
    v.dtype = b.dtype;
    v.shape = b.shape;
    if (b.kind == BufferKind::Arena)
      v.data = arena_.get() + b.offset;
    else if (b.kind == BufferKind::Constant)
      // Kernels get constants read-only through KernelContext::input.
      v.data = const_cast<uint8_t *>(b.data);
  }
  inputs_.resize(m.inputs().size());
  inputSet_.assign(m.inputs().size(), false);
}

Session::~Session() = default;

size_t Session::inputIndex(const std::string &name) const {
  const auto &inputs = module_->inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == name)
      return i;
  throw Error("strata module '" + module_->name() + "' has no input named '" +
              name + "'");
}

size_t Session::outputIndex(const std::string &name) const {
  const auto &outputs = module_->outputs();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == name)
      return i;
  throw Error("strata module '" + module_->name() + "' has no output named '" +
              name + "'");
}

void Session::setInput(const std::string &name, const Tensor &tensor) {
  setInput(inputIndex(name), tensor);
}

void Session::setInput(size_t index, const Tensor &tensor) {
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
      std::string(dtypeName(tensor.dtype())) + shapeToString(tensor.shape());
  if (tensor.dtype() != sig.dtype)
    throw Error(who + got + " (element type differs)");
  if (tensor.shape().size() != sig.shape.size())
    throw Error(who + got + " (rank differs)");
  for (size_t d = 0; d < sig.shape.size(); ++d)
    if (sig.shape[d] != -1 && sig.shape[d] != tensor.shape()[d])
      throw Error(who + got + " (dimension " + std::to_string(d) + " differs)");
  inputs_[index] = tensor;
  inputSet_[index] = true;
  // The buffer takes the tensor's actual shape (dynamic dimensions bound).
  TensorView &v = views_[sig.buffer];
  v.shape = inputs_[index].shape();
  v.data = inputs_[index].rawData();
}

void Session::run() {
  const Module &m = *module_;
  for (size_t i = 0; i < inputSet_.size(); ++i)
    if (!inputSet_[i])
      throw Error("strata module '" + m.name() + "': input '" +
                  m.inputs()[i].name + "' was not set");
  ran_ = false;
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const Step &step = m.steps()[i];
    std::vector<TensorView> ins, outs;
    for (uint32_t id : step.inputs)
      ins.push_back(views_[id]);
    for (uint32_t id : step.outputs)
      outs.push_back(views_[id]);
    KernelContext ctx(step, i, m, std::move(ins), std::move(outs), pool_);
    kernels_[i](ctx);
  }
  outputs_.clear();
  for (const TensorSignature &sig : m.outputs()) {
    const TensorView &v = views_[sig.buffer];
    Tensor t = Tensor::zeros(v.dtype, v.shape);
    if (size_t bytes = t.byteSize())
      std::memcpy(t.rawData(), v.data, bytes);
    outputs_.push_back(std::move(t));
  }
  ran_ = true;
}

const Tensor &Session::output(const std::string &name) const {
  return output(outputIndex(name));
}

const Tensor &Session::output(size_t index) const {
  if (index >= module_->outputs().size())
    throw Error("strata module '" + module_->name() + "' has no output " +
                std::to_string(index));
  if (!ran_)
    throw Error("strata module '" + module_->name() + "': output '" +
                module_->outputs()[index].name +
                "' is not available before a successful run()");
  return outputs_[index];
}

} // namespace strata::rt
