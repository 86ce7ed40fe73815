//===- Cudnn.cpp - cuDNN convolutions, loaded at run time -------*- C++ -*-===//
//
// Loading cuDNN (as CublasLt.cpp loads cuBLASLt: dlopen on first use, the
// handle never closed) and running the "cudnn.conv" steps through cuDNN 9's
// backend API: descriptors set attribute by attribute and finalized, an
// operation graph of the convolution and its fused pointwise operations,
// the heuristics' engine configs made into execution plans, and a variant
// pack (the tensors' device addresses and the workspace) per plan.
//
// Channels-last tensors in cuDNN: cuDNN names a tensor's dimensions in the
// order N, C, spatial... whatever its layout, and the strides say where
// each lies. X [N, H, W, C] is the cuDNN tensor of dimensions [N, C, H, W]
// and strides [H W C, 1, W C, C]; the weight [F, KH, KW, C/g] is
// [F, C/g, KH, KW] with strides [KH KW C/g, 1, KW C/g, C/g] (cuDNN infers
// the groups from X's channels over the weight's); the bias is [1, F, 1, 1]
// with strides [F, 1, F, F], broadcast over N and the spatial dimensions.
// cuDNN convolves 2 or 3 spatial dimensions: a 1-D convolution is a 2-D one
// whose first spatial dimension is 1.
//
//===----------------------------------------------------------------------===//

#include "Cudnn.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <numeric>

namespace strata::rt::cuda {

namespace {

struct Loaded {
  Dnn dnn;
  /// Empty when the library is usable; otherwise the message to throw.
  std::string error;
};

/// "9.19.0" for cudnnGetVersion's 91900.
std::string versionText(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) +
         "." + std::to_string(v % 100);
}

Loaded load() {
  Loaded out;
  std::string tried;
  void *library =
      openCudaLibrary("STRATA_CUDNN", {"libcudnn.so.9"}, out.dnn.path, tried);
  if (!library) {
    out.error = "strata: the module's cudnn.conv steps need NVIDIA's cuDNN 9 "
                "(libcudnn.so.9, which comes with the CUDA toolkit's cuDNN "
                "or the nvidia-cudnn-cu13 package that PyTorch installs); "
                "set STRATA_CUDNN to its path and put its directory on "
                "LD_LIBRARY_PATH (cuDNN opens its sub-libraries by name). "
                "Tried:" +
                tried;
    return out;
  }
  std::string missing;
#define STRATA_CUDNN_RESOLVE(fn)                                               \
  out.dnn.fn = reinterpret_cast<decltype(out.dnn.fn)>(dlsym(library, #fn));    \
  if (!out.dnn.fn)                                                             \
    missing += (missing.empty() ? "" : ", ") + std::string(#fn);
  STRATA_CUDNN_FUNCTIONS(STRATA_CUDNN_RESOLVE)
#undef STRATA_CUDNN_RESOLVE
  if (!missing.empty()) {
    out.error = "strata: " + out.dnn.path + " lacks the cuDNN entry points " +
                missing + " (a cuDNN older than 9.0?)";
    return out;
  }
  out.dnn.version = out.dnn.cudnnGetVersion();
  if (out.dnn.version < 90000)
    out.error = "strata: " + out.dnn.path + " is cuDNN " +
                versionText(out.dnn.version) +
                "; cudnn.conv steps need 9.0 or newer";
  return out;
}

cudnnDataType_t dataType(DType type) {
  switch (type) {
  case DType::F32:
    return CUDNN_DATA_FLOAT;
  case DType::F16:
    return CUDNN_DATA_HALF;
  default:
    return CUDNN_DATA_BFLOAT16;
  }
}

/// The largest power of two up to 16 dividing `p`: what cuDNN is told of a
/// tensor's alignment (CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT).
int64_t alignmentOf(CUdeviceptr p) {
  int64_t align = 16;
  while (align > 1 && p % CUdeviceptr(align))
    align /= 2;
  return align;
}

int64_t productOf(const std::vector<int64_t> &values) {
  return std::accumulate(values.begin(), values.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// "2x14x14x32".
std::string joined(const std::vector<int64_t> &values,
                   const char *separator = "x") {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? separator : "") + std::to_string(values[i]);
  return out;
}

/// "1" when every value is 1, else "2x1".
std::string uniform(const std::vector<int64_t> &values) {
  bool same = std::all_of(values.begin(), values.end(),
                          [&](int64_t v) { return v == values[0]; });
  return same && !values.empty() ? std::to_string(values[0]) : joined(values);
}

[[noreturn]] void failStep(const std::string &who, const std::string &what) {
  throw Error(who + ": " + what);
}

/// cuDNN's dimensions of a channels-last tensor [outer, spatial..., inner]:
/// [outer, inner, spatial...].
std::vector<int64_t> cudnnDims(int64_t outer, int64_t inner,
                               const std::vector<int64_t> &spatial) {
  std::vector<int64_t> dims = {outer, inner};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  return dims;
}

/// The strides of cudnnDims' dimensions in the channels-last layout.
std::vector<int64_t> channelsLastStrides(int64_t inner,
                                         const std::vector<int64_t> &spatial) {
  std::vector<int64_t> strides(spatial.size() + 2);
  strides[1] = 1;
  int64_t stride = inner;
  for (size_t i = spatial.size(); i-- > 0;) {
    strides[2 + i] = stride;
    stride *= spatial[i];
  }
  strides[0] = stride;
  return strides;
}

// The variant packs' unique ids of the step's tensors; the virtual ones
// between the operations follow from kFirstVirtual.
constexpr int64_t kX = 1, kW = 2, kBias = 3, kZ = 4, kY = 5, kFirstVirtual = 16;

} // namespace

const Dnn &dnn() {
  static const Loaded loaded = load();
  if (!loaded.error.empty())
    throw Error(loaded.error);
  return loaded.dnn;
}

std::string statusText(const Dnn &dnn, cudnnStatus_t status) {
  const char *name = dnn.cudnnGetErrorString(status);
  std::string text = name && *name
                         ? std::string(name)
                         : "CUDNN_STATUS_" + std::to_string(int(status));
  char last[2048] = {};
  dnn.cudnnGetLastErrorString(last, sizeof(last));
  if (*last)
    text += std::string(" (cuDNN: ") + last + ")";
  if (status == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED ||
      status == CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE)
    text += "; cuDNN opens its sub-libraries (libcudnn_graph.so.9, "
            "libcudnn_engines_*.so.9) by name: put the directory of " +
            dnn.path + " on LD_LIBRARY_PATH";
  return text;
}

ConvShape ConvShape::read(const Module &module, const Step &step,
                          const std::string &who) {
  auto fail = [&](const std::string &what) { failStep(who, what); };
  auto find = [&](const char *key) -> const Attribute * {
    for (const Attribute &a : step.attributes)
      if (a.key == key)
        return &a;
    return nullptr;
  };
  auto flag = [&](const char *key) {
    const Attribute *a = find(key);
    if (!a)
      return false;
    if (a->ints.size() != 1 || (a->ints[0] != 0 && a->ints[0] != 1))
      fail(std::string("attribute '") + key + "' must be 0 or 1");
    return a->ints[0] == 1;
  };
  ConvShape x;
  x.hasBias = flag("has_bias");
  x.hasZ = flag("has_z");
  if (const Attribute *a = find("activation"))
    x.activation = a->str;
  if (x.activation != "" && x.activation != "relu")
    fail("activation '" + x.activation +
         "' is not one that cudnn.conv fuses (relu, or none)");
  size_t expected = 2 + x.hasBias + x.hasZ;
  if (step.inputs.size() != expected || step.outputs.size() != 1)
    fail("cudnn.conv takes X, W" + std::string(x.hasBias ? ", the bias" : "") +
         (x.hasZ ? ", Z" : "") + " and one output; the step has " +
         std::to_string(step.inputs.size()) + " inputs and " +
         std::to_string(step.outputs.size()) + " outputs");

  const auto &buffers = module.buffers();
  const BufferInfo &in = buffers[step.inputs[0]];
  const BufferInfo &w = buffers[step.inputs[1]];
  const BufferInfo &y = buffers[step.outputs[0]];
  x.type = y.dtype;
  if (x.type != DType::F32 && x.type != DType::F16 && x.type != DType::BF16)
    fail(std::string("cudnn.conv computes f32, f16 or bf16, not ") +
         dtypeName(x.type));
  for (uint32_t id : step.inputs)
    if (buffers[id].dtype != x.type)
      fail(std::string("every operand must be ") + dtypeName(x.type) +
           " as the output is; buffer " + std::to_string(id) + " is " +
           dtypeName(buffers[id].dtype));
  size_t rank = in.shape.size();
  std::string shapes = "X " + shapeToString(in.shape) + ", W " +
                       shapeToString(w.shape) + " and Y " +
                       shapeToString(y.shape);
  if (rank < 3 || rank > 5 || w.shape.size() != rank || y.shape.size() != rank)
    fail(shapes + " must be channels-last tensors of one rank, 3 to 5 "
                  "([N, spatial..., C], 1 to 3 spatial dimensions)");
  for (const std::vector<int64_t> *s : {&in.shape, &w.shape, &y.shape})
    for (int64_t dim : *s)
      if (dim < 1)
        fail(shapes + " must not be empty");
  size_t d = x.spatial = rank - 2;

  auto ints = [&](const char *key, size_t count, int64_t fallback,
                  int64_t least) {
    const Attribute *a = find(key);
    if (!a)
      return std::vector<int64_t>(count, fallback);
    if (a->ints.size() != count)
      fail(std::string("attribute '") + key + "' must be " +
           std::to_string(count) + " integers for " + std::to_string(d) +
           " spatial dimensions; it has " + std::to_string(a->ints.size()));
    for (int64_t v : a->ints)
      if (v < least)
        fail(std::string("attribute '") + key + "' is [" +
             joined(a->ints, ", ") + "]; each must be at least " +
             std::to_string(least));
    return a->ints;
  };
  x.strides = ints("strides", d, 1, 1);
  x.dilations = ints("dilations", d, 1, 1);
  std::vector<int64_t> pads = ints("pads", 2 * d, 0, 0);
  x.padBegin.assign(pads.begin(), pads.begin() + d);
  x.padEnd.assign(pads.begin() + d, pads.end());
  x.group = ints("group", 1, 1, 1)[0];

  x.n = in.shape[0];
  x.c = in.shape.back();
  x.f = w.shape[0];
  int64_t perGroup = w.shape.back();
  x.in.assign(in.shape.begin() + 1, in.shape.end() - 1);
  x.kernel.assign(w.shape.begin() + 1, w.shape.end() - 1);
  x.out.assign(y.shape.begin() + 1, y.shape.end() - 1);
  if (x.c != x.group * perGroup || x.f % x.group != 0)
    fail("X has C = " + std::to_string(x.c) + " channels and W " +
         shapeToString(w.shape) + " " + std::to_string(x.f) + " filters of " +
         std::to_string(perGroup) + " channels: with " +
         std::to_string(x.group) +
         " group(s), C must be the groups times W's last dimension and the "
         "filters a multiple of the groups");
  if (y.shape[0] != x.n || y.shape.back() != x.f)
    fail("Y " + shapeToString(y.shape) + " must be [" + std::to_string(x.n) +
         ", ..., " + std::to_string(x.f) + "] for X " +
         shapeToString(in.shape) + " and W " + shapeToString(w.shape));
  std::vector<int64_t> expectedOut(d);
  bool fits = true;
  for (size_t i = 0; i < d; ++i) {
    int64_t span = x.in[i] + x.padBegin[i] + x.padEnd[i] -
                   x.dilations[i] * (x.kernel[i] - 1) - 1;
    if (span < 0)
      fail("the kernel's spatial dimension " + std::to_string(i) + " (" +
           std::to_string(x.kernel[i]) + ", dilation " +
           std::to_string(x.dilations[i]) + ") spans more than X's " +
           std::to_string(x.in[i]) + " with its pads");
    expectedOut[i] = span / x.strides[i] + 1;
    fits &= expectedOut[i] == x.out[i];
  }
  if (!fits)
    fail("Y " + shapeToString(y.shape) + " does not match X " +
         shapeToString(in.shape) + " and W " + shapeToString(w.shape) +
         " with strides [" + joined(x.strides, ", ") + "], dilations [" +
         joined(x.dilations, ", ") + "] and pads [" + joined(pads, ", ") +
         "]: its spatial extents must be [" + joined(expectedOut, ", ") + "]");
  size_t next = 2;
  if (x.hasBias) {
    const BufferInfo &bias = buffers[step.inputs[next++]];
    if (numElements(bias.shape) != x.f || bias.shape.empty() ||
        bias.shape.back() != x.f)
      fail("the bias " + shapeToString(bias.shape) +
           " must hold F = " + std::to_string(x.f) + " values");
  }
  if (x.hasZ) {
    const BufferInfo &z = buffers[step.inputs[next++]];
    if (z.shape != y.shape)
      fail("Z " + shapeToString(z.shape) + " must have Y's shape " +
           shapeToString(y.shape));
  }
  return x;
}

double ConvShape::flops() const {
  return 2.0 * double(n) * double(productOf(out)) * double(f) *
         double(productOf(kernel)) * double(c / group);
}

std::string ConvShape::summary() const {
  auto tensor = [&](const std::vector<int64_t> &spatial, int64_t channels) {
    std::vector<int64_t> dims = {n};
    dims.insert(dims.end(), spatial.begin(), spatial.end());
    dims.push_back(channels);
    return joined(dims);
  };
  std::string text = std::string(dtypeName(type)) + " conv " + tensor(in, c) +
                     " -> " + tensor(out, f) + ", " + joined(kernel) +
                     " stride " + uniform(strides);
  if (std::any_of(dilations.begin(), dilations.end(),
                  [](int64_t v) { return v != 1; }))
    text += " dilation " + uniform(dilations);
  if (padBegin == padEnd) {
    text += " pad " + uniform(padBegin);
  } else {
    std::vector<int64_t> pads = padBegin;
    pads.insert(pads.end(), padEnd.begin(), padEnd.end());
    text += " pads [" + joined(pads, ", ") + "]";
  }
  text += ", groups " + std::to_string(group);
  std::string fused = std::string(hasBias ? "+bias" : "") + (hasZ ? "+z" : "") +
                      (activation.empty() ? "" : "+" + activation);
  if (!fused.empty())
    text += ", " + fused;
  return text;
}

DnnConv::DnnConv(const Dnn &dnn, cudnnHandle_t handle, const Module &module,
                 const Step &step, const std::vector<CUdeviceptr> &pointers,
                 int64_t workspaceLimit, size_t maxPlans,
                 const std::string &who)
    : dnn_(dnn), handle_(handle),
      maxPlans_(std::clamp<size_t>(maxPlans, 1, kMaxPlans)),
      workspaceLimit_(workspaceLimit), who_(who) {
  // A failure gives back what was made so far: no destructor runs then.
  try {
    prepare(module, step, pointers);
  } catch (...) {
    release();
    throw;
  }
}

DnnConv::~DnnConv() { release(); }

void DnnConv::fail(const std::string &what) const { failStep(who_, what); }

void DnnConv::check(cudnnStatus_t s, const std::string &call) const {
  if (s != CUDNN_STATUS_SUCCESS)
    fail(call + " failed with " + statusText(dnn_, s));
}

cudnnBackendDescriptor_t DnnConv::make(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t d = nullptr;
  check(dnn_.cudnnBackendCreateDescriptor(type, &d),
        "cudnnBackendCreateDescriptor (" + summary_ + ")");
  owned_.push_back(d);
  return d;
}

void DnnConv::dropLast() noexcept {
  dnn_.cudnnBackendDestroyDescriptor(owned_.back());
  owned_.pop_back();
}

void DnnConv::set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                  cudnnBackendAttributeType_t type, int64_t count,
                  const void *values, const char *what) {
  check(dnn_.cudnnBackendSetAttribute(d, name, type, count, values),
        std::string("cudnnBackendSetAttribute (") + what + " of " + summary_ +
            ")");
}

void DnnConv::finalize(cudnnBackendDescriptor_t d, const char *what) {
  check(dnn_.cudnnBackendFinalize(d),
        std::string("cudnnBackendFinalize (") + what + " of " + summary_ + ")");
}

cudnnBackendDescriptor_t DnnConv::tensor(int64_t uid, cudnnDataType_t type,
                                         const std::vector<int64_t> &dims,
                                         const std::vector<int64_t> &strides,
                                         int64_t alignment, bool isVirtual) {
  cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const char *what = "a tensor";
  set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, what);
  set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, int64_t(dims.size()),
      dims.data(), what);
  set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, int64_t(strides.size()),
      strides.data(), what);
  set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what);
  set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment,
      what);
  if (isVirtual) {
    bool yes = true;
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes, what);
  }
  finalize(t, "a tensor");
  return t;
}

void DnnConv::prepare(const Module &module, const Step &step,
                      const std::vector<CUdeviceptr> &pointers) {
  shape_ = ConvShape::read(module, step, who_);
  const ConvShape &x = shape_;
  summary_ = x.summary();
  if (pointers.size() != step.inputs.size() + 1)
    fail("the session passes " + std::to_string(pointers.size()) +
         " device addresses for the step's " +
         std::to_string(step.inputs.size() + 1) + " operands");

  // 1-D as 2-D over a unit first spatial dimension (the file comment).
  std::vector<int64_t> in = x.in, kernel = x.kernel, out = x.out;
  std::vector<int64_t> strides = x.strides, dilations = x.dilations;
  std::vector<int64_t> padBegin = x.padBegin, padEnd = x.padEnd;
  if (x.spatial == 1) {
    for (auto *v : {&in, &kernel, &out, &strides, &dilations})
      v->insert(v->begin(), 1);
    padBegin.insert(padBegin.begin(), 0);
    padEnd.insert(padEnd.begin(), 0);
  }
  int64_t spatial = int64_t(in.size());
  cudnnDataType_t type = dataType(x.type);
  int64_t perGroup = x.c / x.group;

  cudnnBackendDescriptor_t xT =
      tensor(kX, type, cudnnDims(x.n, x.c, in), channelsLastStrides(x.c, in),
             alignmentOf(pointers[0]), false);
  cudnnBackendDescriptor_t wT = tensor(
      kW, type, cudnnDims(x.f, perGroup, kernel),
      channelsLastStrides(perGroup, kernel), alignmentOf(pointers[1]), false);
  std::vector<int64_t> yDims = cudnnDims(x.n, x.f, out);
  std::vector<int64_t> yStrides = channelsLastStrides(x.f, out);
  cudnnBackendDescriptor_t yT =
      tensor(kY, type, yDims, yStrides, alignmentOf(pointers.back()), false);
  auto address = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  uids_ = {kX, kW, kY};
  addresses_ = {address(pointers[0]), address(pointers[1]),
                address(pointers.back())};
  size_t next = 2;
  cudnnBackendDescriptor_t biasT = nullptr, zT = nullptr;
  if (x.hasBias) {
    std::vector<int64_t> ones(size_t(spatial), 1);
    biasT = tensor(kBias, type, cudnnDims(1, x.f, ones),
                   channelsLastStrides(x.f, ones), alignmentOf(pointers[next]),
                   false);
    uids_.push_back(kBias);
    addresses_.push_back(address(pointers[next++]));
  }
  if (x.hasZ) {
    zT = tensor(kZ, type, yDims, yStrides, alignmentOf(pointers[next]), false);
    uids_.push_back(kZ);
    addresses_.push_back(address(pointers[next++]));
  }

  // Each operation's result: Y for the last, a virtual f32 tensor (never
  // in memory) before it.
  size_t pointwise = x.hasBias + x.hasZ + !x.activation.empty();
  int64_t nextVirtual = kFirstVirtual;
  auto result = [&]() {
    if (pointwise == 0)
      return yT;
    --pointwise;
    return tensor(nextVirtual++, CUDNN_DATA_FLOAT, yDims, yStrides, 16, true);
  };

  cudnnBackendDescriptor_t conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  {
    const char *what = "the convolution";
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
        &compute, what);
    set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1,
        &mode, what);
    set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1,
        &spatial, what);
    set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial,
        dilations.data(), what);
    set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial,
        strides.data(), what);
    set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial,
        padBegin.data(), what);
    set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial,
        padEnd.data(), what);
    finalize(conv, what);
  }
  std::vector<cudnnBackendDescriptor_t> ops;
  cudnnBackendDescriptor_t current = result();
  {
    const char *what = "the convolution's operation";
    cudnnBackendDescriptor_t op =
        make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    float alpha = 1, beta = 0;
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xT, what);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wT, what);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &current, what);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv, what);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1,
        &alpha, what);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1,
        &beta, what);
    finalize(op, what);
    ops.push_back(op);
  }
  // current = mode(current[, b]), in f32.
  auto addPointwise = [&](cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t b,
                          const char *what) {
    cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode,
        what);
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision,
        what);
    finalize(pw, what);
    cudnnBackendDescriptor_t y = result();
    cudnnBackendDescriptor_t op =
        make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, what);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        1, &current, what);
    if (b)
      set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        1, &y, what);
    finalize(op, what);
    ops.push_back(op);
    current = y;
  };
  if (x.hasBias)
    addPointwise(CUDNN_POINTWISE_ADD, biasT, "the bias's addition");
  if (x.hasZ)
    addPointwise(CUDNN_POINTWISE_ADD, zT, "Z's addition");
  if (x.activation == "relu")
    addPointwise(CUDNN_POINTWISE_RELU_FWD, nullptr, "the ReLU");

  cudnnBackendDescriptor_t graph =
      make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  // The handle is deprecated here from cuDNN 9.x on, and required before.
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_,
      "the operation graph");
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      int64_t(ops.size()), ops.data(), "the operation graph");
  finalize(graph, "the operation graph");

  // The heuristics' engine configs, best first; their fallback list when
  // none of those gives a plan. For f32 data, engines that round the inputs
  // to TF32 only when no other has a plan: cuDNN 9.14 on the H100 offers
  // nothing else for a convolution with fused pointwise operations (9.19
  // has an exact runtime-compiled engine), where a plain one has exact f32
  // engines.
  Skipped skipped;
  addPlans(graph, CUDNN_HEUR_MODE_A, false, skipped);
  if (plans_.empty())
    addPlans(graph, CUDNN_HEUR_MODE_FALLBACK, false, skipped);
  if (plans_.empty() && skipped.tf32) {
    addPlans(graph, CUDNN_HEUR_MODE_A, true, skipped);
    if (plans_.empty())
      addPlans(graph, CUDNN_HEUR_MODE_FALLBACK, true, skipped);
  }
  if (plans_.empty()) {
    char last[2048] = {};
    dnn_.cudnnGetLastErrorString(last, sizeof(last));
    std::string fused =
        x.hasBias || x.hasZ || !x.activation.empty()
            ? " and its fused " + std::string(x.hasBias ? "bias, " : "") +
                  (x.hasZ ? "Z, " : "") + (x.activation.empty() ? "" : "ReLU, ")
            : std::string();
    if (!fused.empty())
      fused.resize(fused.size() - 2);
    fail("cuDNN " + versionText(dnn_.version) +
         " has no execution plan for the convolution" + fused + " (" +
         summary_ + "; X " + joined(cudnnDims(x.n, x.c, in)) + ", W " +
         joined(cudnnDims(x.f, perGroup, kernel)) + ", Y " + joined(yDims) +
         " as cuDNN's N, C, spatial...): of the heuristics' " +
         std::to_string(skipped.configs) + " engine configs, " +
         std::to_string(skipped.converted) +
         " convert the inputs to a narrower type, " +
         std::to_string(skipped.unfinalized) + " did not finalize and " +
         std::to_string(skipped.workspace) + " need more than " +
         std::to_string(workspaceLimit_) +
         " bytes of workspace. cuDNN's last error: " +
         (*last ? std::string(last) : std::string("none")) +
         ". Fused graphs take runtime-fusion engines, which compile with "
         "NVRTC: libnvrtc.so.13 (of CUDA 13; .12 for a cuDNN built for "
         "CUDA 12) must be on the loader's path");
  }
}

void DnnConv::addPlans(cudnnBackendDescriptor_t graph,
                       cudnnBackendHeurMode_t mode, bool tf32,
                       Skipped &skipped) {
  cudnnBackendDescriptor_t heuristics =
      make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const char *what = "the heuristics";
  set(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph, what);
  set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode,
      what);
  // A mode that has nothing for the graph may refuse it: the next mode, or
  // the error that no plan was found, follows.
  if (dnn_.cudnnBackendFinalize(heuristics) != CUDNN_STATUS_SUCCESS)
    return;
  int64_t count = 0;
  if (dnn_.cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                    nullptr) != CUDNN_STATUS_SUCCESS ||
      count < 1)
    return;
  // cuDNN fills descriptors made here.
  std::vector<cudnnBackendDescriptor_t> configs;
  for (int64_t i = 0; i < count; ++i)
    configs.push_back(make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
  int64_t got = 0;
  check(dnn_.cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                      &got, configs.data()),
        "cudnnBackendGetAttribute (the heuristics' engine configs of " +
            summary_ + ")");
  got = std::min(got, count);
  if (!tf32)
    skipped.configs += size_t(got);
  for (int64_t i = 0; i < got && plans_.size() < maxPlans_; ++i) {
    cudnnBackendDescriptor_t config = configs[size_t(i)];
    Plan p;
    // The engine's index and notes, read through the config; what cannot be
    // read is left out of the report.
    bool converted = false;
    cudnnBackendDescriptor_t engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t n = 0;
    if (dnn_.cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                      &engine) == CUDNN_STATUS_SUCCESS &&
        n == 1) {
      int64_t index = -1;
      if (dnn_.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                        CUDNN_TYPE_INT64, 1, &n,
                                        &index) == CUDNN_STATUS_SUCCESS)
        p.engine = index;
      cudnnBackendBehaviorNote_t behavior[32];
      if (dnn_.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                        CUDNN_TYPE_BEHAVIOR_NOTE, 32, &n,
                                        behavior) == CUDNN_STATUS_SUCCESS)
        for (int64_t k = 0; k < std::min<int64_t>(n, 32); ++k)
          p.runtimeCompiled |=
              behavior[k] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
      // As PyTorch: inputs converted to a narrower type are never taken,
      // and for f32 data the tensor cores (TF32) only as a last resort.
      cudnnBackendNumericalNote_t numerical[32];
      if (dnn_.cudnnBackendGetAttribute(engine,
                                        CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                        CUDNN_TYPE_NUMERICAL_NOTE, 32, &n,
                                        numerical) == CUDNN_STATUS_SUCCESS)
        for (int64_t k = 0; k < std::min<int64_t>(n, 32); ++k) {
          converted |= numerical[k] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
          p.tf32 |= shape_.type == DType::F32 &&
                    numerical[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        }
    }
    // The TF32 pass (tf32) takes only what the first one left for it.
    if (converted || p.tf32 != tf32) {
      if (!tf32) {
        skipped.converted += converted;
        skipped.tf32 += p.tf32 && !converted;
      }
      continue;
    }
    cudnnBackendDescriptor_t plan =
        make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_,
        "an execution plan");
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config, "an execution plan");
    // A config that does not finalize (a runtime-fusion engine without
    // NVRTC, one that does not take these shapes) is skipped.
    if (dnn_.cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS ||
        dnn_.cudnnBackendGetAttribute(
            plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
            &n, &p.workspace) != CUDNN_STATUS_SUCCESS) {
      dropLast();
      ++skipped.unfinalized;
      continue;
    }
    if (p.workspace > workspaceLimit_) {
      dropLast();
      ++skipped.workspace;
      continue;
    }
    p.plan = plan;
    plans_.push_back(p);
  }
}

int64_t DnnConv::maxWorkspaceBytes() const {
  int64_t most = 0;
  for (const Plan &p : plans_)
    most = std::max(most, p.workspace);
  return most;
}

void DnnConv::setWorkspace(CUdeviceptr workspace, int64_t bytes) {
  releasePacks();
  void *at = reinterpret_cast<void *>(workspace);
  const char *what = "a variant pack";
  for (Plan &p : plans_) {
    if (p.workspace > bytes)
      continue;
    cudnnBackendDescriptor_t pack = nullptr;
    check(dnn_.cudnnBackendCreateDescriptor(
              CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack),
          "cudnnBackendCreateDescriptor (" + summary_ + ")");
    p.pack = pack;
    set(p.pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
        int64_t(uids_.size()), uids_.data(), what);
    set(p.pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
        int64_t(addresses_.size()), addresses_.data(), what);
    set(p.pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &at,
        what);
    finalize(p.pack, what);
  }
}

std::string DnnConv::engine() const {
  const Plan &p = plans_[chosen_];
  return (p.engine < 0 ? std::string("an engine of unknown index")
                       : "engine " + std::to_string(p.engine)) +
         (p.runtimeCompiled ? ", runtime-compiled" : "") +
         (p.tf32 ? ", TF32" : "");
}

std::string DnnConv::run(CUstream) const {
  const Plan &p = plans_[chosen_];
  if (!p.pack)
    return "cudnn.conv (" + summary_ + ", " + engine() + ") needs " +
           std::to_string(p.workspace) +
           " bytes of workspace, more than its variant pack was given";
  cudnnStatus_t s = dnn_.cudnnBackendExecute(handle_, p.plan, p.pack);
  if (s == CUDNN_STATUS_SUCCESS)
    return {};
  return "cudnnBackendExecute (" + summary_ + ", " + engine() +
         ") failed with " + statusText(dnn_, s);
}

void DnnConv::releasePacks() noexcept {
  for (Plan &p : plans_)
    if (p.pack) {
      dnn_.cudnnBackendDestroyDescriptor(p.pack);
      p.pack = nullptr;
    }
}

void DnnConv::release() noexcept {
  releasePacks();
  while (!owned_.empty())
    dropLast();
  plans_.clear();
}

} // namespace strata::rt::cuda
