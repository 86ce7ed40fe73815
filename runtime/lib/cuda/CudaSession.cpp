//===- CudaSession.cpp - Running CUDA modules -------------------*- C++ -*-===//
//
// The CUDA executor behind Session for modules whose target is "cuda"
// (docs/runtime.md, "The CUDA executor"). At creation it checks the plan
// (before touching the driver, so that a bad module is named as such on any
// machine), loads the module's cubin or else JIT-compiles its PTX into the
// device's primary context, resolves and checks every kernel step against
// the launch limits, allocates the arena, the constants and the inputs on
// the device (one allocation each) and copies the constants once. A run
// copies the inputs in, launches the steps in plan order on the session's
// stream (or replays the CUDA graph captured from them), copies the outputs
// out and synchronizes once. Library steps ("cublaslt.matmul",
// "cudnn.conv") run on the same stream, inside the same graph, with one
// workspace per library and session (CudaLibrarySteps.cpp).
//
// Every driver call runs with the session's context pushed on the calling
// thread and popped again, so the caller's own current context is left as
// it was and a session may be used from any thread (one at a time).
//
//===----------------------------------------------------------------------===//
#include "CudaSession.h"

namespace strata::rt {
namespace cudasession {

CudaSession::CudaSession(const Module &module, const SessionOptions &options)
    : module_(module), options_(options.cuda),
      prefix_("strata module '" + module.name() + "'") {
  useGraph_ = options_.graphs;
  try {
    options_ = options_.resolved();
  } catch (const Error &e) {
    failPlan(e.what());
  }
  checkPlan();
  d_ = &cuda::driver();
  try {
    initialize();
  } catch (...) {
    release();
    throw;
  }
}

/// The buffer of `step`'s operand `operand`: its inputs, then its outputs
/// (the kernel ABI's order).
static uint32_t operandBuffer(const Step &step, uint32_t operand) {
  return operand < step.inputs.size()
             ? step.inputs[operand]
             : step.outputs[operand - step.inputs.size()];
}

/// The tensor maps of a launch of `step`, checked against its operands and
/// what cuTensorMapEncodeTiled accepts (so that a bad module fails here,
/// naming the step, not in the driver). The loader has checked that there
/// are 7 numbers a map.
static std::vector<TensorMapSpec> checkTensorMaps(const Module &m,
                                                  const Step &step,
                                                  const std::string &who,
                                                  const KernelLaunch &launch) {
  auto fail = [&](const std::string &what) -> void {
    throw Error("strata module '" + m.name() + "': " + who +
                ": launch's tensor_maps " + what);
  };
  const std::vector<int64_t> &numbers = launch.tensorMaps;
  size_t operands = step.inputs.size() + step.outputs.size();
  std::vector<TensorMapSpec> maps;
  for (size_t k = 0; k + 7 <= numbers.size(); k += 7) {
    const int64_t *v = &numbers[k];
    std::string map = "map " + std::to_string(k / 7);
    if (v[0] < 0 || static_cast<size_t>(v[0]) >= operands)
      fail("(" + map + ") names operand " + std::to_string(v[0]) +
           "; the step has " + std::to_string(operands));
    uint32_t id = operandBuffer(step, static_cast<uint32_t>(v[0]));
    const BufferInfo &b = m.buffers()[id];
    if (b.dtype != DType::BF16 && b.dtype != DType::F16 &&
        b.dtype != DType::F32)
      fail("(" + map + ") is over buffer " + std::to_string(id) + " of " +
           dtypeName(b.dtype) + "; tensor maps take bf16, f16 and f32");
    uint64_t element = dtypeSize(b.dtype);
    uint64_t bytes = numElements(b.shape) * element;
    TensorMapSpec t;
    t.operand = static_cast<uint32_t>(v[0]);
    bool positive = v[1] > 0 && v[2] > 0 && v[3] > 0;
    t.inner = positive ? uint64_t(v[1]) : 0;
    t.outer = positive ? uint64_t(v[2]) : 0;
    t.strideBytes = positive ? uint64_t(v[3]) : 0;
    if (!positive || t.inner >> 32 || t.outer >> 32 ||
        t.inner * element > t.strideBytes || t.strideBytes % 16 != 0 ||
        t.outer * t.strideBytes > bytes)
      fail("(" + map + ") describes " + std::to_string(v[2]) + " rows of " +
           std::to_string(v[1]) + " elements " + std::to_string(v[3]) +
           " bytes apart; buffer " + std::to_string(id) + " holds " +
           std::to_string(bytes) +
           " bytes, and rows must be 16-byte multiples apart");
    bool boxes = v[4] >= 1 && v[4] <= 256 && v[5] >= 1 && v[5] <= 256;
    bool swizzle = v[6] == 0 || v[6] == 32 || v[6] == 64 || v[6] == 128;
    if (!boxes || !swizzle ||
        (v[6] ? uint64_t(v[4]) * element > uint64_t(v[6])
              : uint64_t(v[4]) * element % 16 != 0))
      fail("(" + map + ") has boxes of " + std::to_string(v[4]) + "x" +
           std::to_string(v[5]) + " and a swizzle of " + std::to_string(v[6]) +
           " bytes: boxes are 1 to 256 a side, the swizzle 0, 32, 64 or 128 "
           "bytes, a box's rows at most the swizzle's bytes (16-byte "
           "multiples without one)");
    t.boxInner = static_cast<uint32_t>(v[4]);
    t.boxOuter = static_cast<uint32_t>(v[5]);
    t.swizzle = static_cast<uint32_t>(v[6]);
    maps.push_back(t);
  }
  return maps;
}

/// What can be checked without a GPU: that every step is a kernel whose
/// launch the ABI allows (or a cuBLASLt or cuDNN call, a convolution's
/// shapes checked against its attributes), that shapes are static and
/// aligned, and that there is GPU code for the kernel steps.
void CudaSession::checkPlan() {
  const Module &m = module_;
  for (const TensorSignature &sig : m.inputs())
    for (int64_t dim : sig.shape)
      if (dim < 0)
        failPlan("input '" + sig.name + "' has the dynamic shape " +
                 shapeToString(sig.shape) +
                 "; the CUDA executor runs static shapes only (the compiler "
                 "specializes them)");
  bool hasKernels = false;
  shapes_.resize(m.steps().size());
  onHost_.assign(m.buffers().size(), 0);
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const Step &step = m.steps()[i];
    std::string who = step.describe(i);
    // A host kernel runs on the CPU, and what it writes stays there.
    if (step.isHostKernel()) {
      hasHostSteps_ = true;
      for (uint32_t id : step.outputs)
        onHost_[id] = 1;
      continue;
    }
    auto checkBuffer = [&](uint32_t id) {
      const BufferInfo &b = m.buffers()[id];
      if (onHost_[id])
        failPlan(who + " runs on the GPU, but buffer " + std::to_string(id) +
                 " is written by a host step and lives on the host (the "
                 "compiler runs everything computed from a host step on the "
                 "host)");
      if (b.kind == BufferKind::Host)
        failPlan(who + " runs on the GPU, but buffer " + std::to_string(id) +
                 " is a host buffer (" + dtypeName(b.dtype) +
                 shapeToString(b.shape) + "), which only host kernels use");
      for (int64_t d : b.shape)
        if (d < 0)
          failPlan(who + " runs on the GPU for static shapes, but buffer " +
                   std::to_string(id) + " has shape " + shapeToString(b.shape));
      if (b.kind == BufferKind::Arena && b.offset % kKernelAlign != 0)
        failPlan(who +
                 " runs on the GPU, which needs 64-byte aligned buffers, but "
                 "buffer " +
                 std::to_string(id) + " is at arena offset " +
                 std::to_string(b.offset));
    };
    for (uint32_t id : step.inputs)
      checkBuffer(id);
    for (uint32_t id : step.outputs)
      checkBuffer(id);
    if (step.kind == StepKind::Library) {
      if (step.name == kLtMatmul) {
#if !STRATA_HAVE_CUBLASLT
        failPlan(who + " calls " + kLtMatmul +
                 ", but this runtime was built without cublasLt.h (the CUDA "
                 "toolkit's), so it cannot run cuBLASLt steps");
#endif
      } else if (step.name == kDnnConv) {
#if STRATA_HAVE_CUDNN
        cuda::ConvShape::read(m, step, stepWhere(i));
#else
        failPlan(who + " calls " + kDnnConv +
                 ", but this runtime was built without cudnn.h (cuDNN 9's, "
                 "next to the CUDA toolkit's cuda.h), so it cannot run cuDNN "
                 "steps");
#endif
      } else {
        failPlan(who + " calls library kernel '" + step.name +
                 "', but the module targets 'cuda', whose executor runs "
                 "generated kernels, " +
                 kLtMatmul + " and " + kDnnConv);
      }
      continue;
    }
    hasKernels = true;
    LaunchShape &shape = shapes_[i];
    // The loader has checked that a kernel step of a CUDA module has a
    // launch, its extents and its field sizes.
    auto spec = [&](const KernelLaunch &launch) {
      return LaunchSpec{&launch, checkTensorMaps(m, step, who, launch)};
    };
    if (!step.launch)
      failPlan(who + " is a GPU kernel without a launch");
    shape.cubin = spec(*step.launch);
    if (step.ptxLaunch)
      shape.ptx = spec(*step.ptxLaunch);
  }
  // Host buffers (strings, values of run-time shape) are written by host
  // steps, on the host; one no step writes has no value anywhere.
  for (const TensorSignature &sig : m.outputs())
    if (m.buffers()[sig.buffer].kind == BufferKind::Host &&
        !onHost_[sig.buffer])
      failPlan("output '" + sig.name + "' is host buffer " +
               std::to_string(sig.buffer) + " (" + dtypeName(sig.dtype) +
               shapeToString(sig.shape) +
               "), which no host step writes: the CUDA executor holds host "
               "buffers for the host steps that write them");
  if (hasKernels && !m.gpuCubin() && !m.gpuPtx())
    failPlan("has generated-kernel steps but no GPU code (the module has "
             "neither gpu_cubin nor gpu_ptx)");
}

void CudaSession::initialize() {
  const Driver &d = *d_;
  if (options_.device < 0 || options_.device >= d.deviceCount)
    failPlan("asks for CUDA device " + std::to_string(options_.device) +
             ", but this machine has " + std::to_string(d.deviceCount) +
             (d.deviceCount == 1 ? " device" : " devices"));
  std::string where =
      prefix_ + ": opening CUDA device " + std::to_string(options_.device);
  check(d, d.cuDeviceGet(&device_, options_.device), "cuDeviceGet", where);
  char name[256] = {};
  check(d, d.cuDeviceGetName(name, sizeof(name) - 1, device_),
        "cuDeviceGetName", where);
  info_.deviceName = name;
  int major = 0, minor = 0;
  check(d,
        d.cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
        "cuDeviceGetAttribute", where);
  check(d,
        d.cuDeviceGetAttribute(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
        "cuDeviceGetAttribute", where);
  info_.deviceArch = "sm_" + std::to_string(major) + std::to_string(minor);
  // Programmatic dependent launch: Hopper on, with cuLaunchKernelEx (CUDA
  // 12 drivers); off by option (STRATA_CUDA_PDL=0), to measure what it
  // gives.
  gridDependency_ =
      major >= 9 && d.cuLaunchKernelEx && *options_.gridDependency;
  // The primary context is the one the CUDA runtime (and so PyTorch and
  // the vendor libraries) uses: sharing it keeps one context per device.
  check(d, d.cuDevicePrimaryCtxRetain(&context_, device_),
        "cuDevicePrimaryCtxRetain", where);
  ContextScope scope(d, context_, where);
  check(d, d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
        where);
  loadImage();
  resolveKernels();
  allocate();
  prepareLibrarySteps();
  prepareHostSteps();
}

/// The host steps' kernels, and host tensors for the buffers they write
/// (those of a static shape; the others get theirs when a step writes them)
/// and for the device buffers they read.
void CudaSession::prepareHostSteps() {
  if (!hasHostSteps_)
    return;
  const Module &m = module_;
  hostKernels_.assign(m.steps().size(), nullptr);
  hostStates_.resize(m.steps().size());
  hostTensors_.resize(m.buffers().size());
  auto give = [&](uint32_t id) {
    const BufferInfo &b = m.buffers()[id];
    if (!hostTensors_[id].shape().empty() || b.kind == BufferKind::Constant ||
        std::any_of(b.shape.begin(), b.shape.end(),
                    [](int64_t d) { return d < 0; }))
      return;
    hostTensors_[id] = Tensor::zeros(b.dtype, b.shape);
  };
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const Step &step = m.steps()[i];
    if (!step.isHostKernel())
      continue;
    hostKernels_[i] = lookupKernel(step.name);
    if (!hostKernels_[i])
      throw Error(stepWhere(i) + " names host kernel '" + step.name +
                  "', which this runtime does not have");
    for (uint32_t id : step.inputs)
      give(id);
    for (uint32_t id : step.outputs)
      give(id);
  }
  pool_ = std::make_unique<ThreadPool>(0);
  // Each host step waits for the GPU's work before it: one graph of all
  // steps cannot hold them.
  useGraph_ = false;
  info_.graphFallback = "the plan has host steps (ops on shapes known only "
                        "at run time), which run on the CPU between the "
                        "GPU's kernels: the kernels are launched one by one";
}

/// Host step `index`: waits for the GPU, copies the device buffers it reads
/// to the host, and runs its kernel there.
void CudaSession::runHostStep(size_t index) {
  const Driver &d = *d_;
  const Module &m = module_;
  const Step &step = m.steps()[index];
  auto view = [&](uint32_t id) {
    const BufferInfo &b = m.buffers()[id];
    if (b.kind == BufferKind::Constant && !onHost_[id])
      return TensorView{b.dtype, b.shape, const_cast<uint8_t *>(b.data)};
    return hostTensors_[id].view();
  };
  // The copies queue behind the GPU's steps before this one on the stream;
  // one synchronization waits for both.
  for (uint32_t id : step.inputs) {
    const BufferInfo &b = m.buffers()[id];
    if (onHost_[id] || skipped_[id] || b.kind == BufferKind::Constant)
      continue;
    if (size_t bytes = hostTensors_[id].byteSize())
      check(d,
            d.cuMemcpyDtoHAsync(hostTensors_[id].rawData(), address_[id], bytes,
                                stream_),
            "cuMemcpyDtoHAsync",
            stepWhere(index) + ": copying buffer " + std::to_string(id) +
                " to the host");
  }
  check(d, d.cuStreamSynchronize(stream_), "cuStreamSynchronize",
        stepWhere(index) +
            ": waiting for the GPU's steps before it (kernels run "
            "asynchronously; SessionOptions::profile names the one that "
            "fails)");
  std::vector<TensorView> views(m.buffers().size());
  auto viewOf = [&](uint32_t id) -> const TensorView & {
    return views[id] = view(id);
  };
  if (detail::skipsBranchStep(m, index, skipped_, viewOf))
    return;
  std::vector<TensorView> ins, outs;
  for (uint32_t id : step.inputs)
    ins.push_back(view(id));
  // An output's kernel sees its declared type and shape (-1 where the step
  // decides), not what the previous run left.
  for (uint32_t id : step.outputs)
    outs.push_back(TensorView{m.buffers()[id].dtype, m.buffers()[id].shape,
                              hostTensors_[id].view().data});
  KernelContext ctx(step, index, m, std::move(ins), std::move(outs), *pool_,
                    &hostStates_[index]);
  for (size_t k = 0; k < step.outputs.size(); ++k)
    ctx.bindHostOutput(k, &hostTensors_[step.outputs[k]]);
  hostKernels_[index](ctx);
  for (size_t k = 0; k < step.outputs.size(); ++k)
    for (int64_t dim : hostTensors_[step.outputs[k]].shape())
      if (dim < 0)
        throw Error(stepWhere(index) + " did not set the run-time shape of " +
                    "its output " + std::to_string(k));
}

/// A run of a plan with host steps: GPU steps launched one by one, host
/// steps in order between them.
void CudaSession::runWithHostSteps(std::vector<double> *stepTimes) {
  const Module &m = module_;
  skipped_.assign(m.buffers().size(), 0);
  if (stepTimes)
    createEvents();
  for (size_t i = 0; i < m.steps().size(); ++i) {
    if (!m.steps()[i].isHostKernel()) {
      launchTimed(i, stepTimes);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    runHostStep(i);
    if (stepTimes)
      (*stepTimes)[i] += std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  }
  ++info_.directRuns;
}

void CudaSession::loadImage() {
  const Driver &d = *d_;
  const Module &m = module_;
  if (!m.gpuCubin() && !m.gpuPtx())
    return; // No kernel steps (checkPlan): nothing to load.
  std::string cubinArch =
      m.gpuArch().empty() ? "an unnamed architecture" : m.gpuArch();
  // ptxOnly (STRATA_CUDA_IMAGE=ptx) loads the PTX even where the cubin
  // would run: the path later GPUs take (the portable PTX, docs/gpu.md),
  // tested on this one.
  bool ptxOnly = *options_.ptxOnly && m.gpuPtx();
  if (ptxOnly) {
    info_.cubinRejected = "STRATA_CUDA_IMAGE=ptx";
  } else if (m.gpuCubin()) {
    CUresult r = d.cuModuleLoadData(&image_, m.gpuCubin());
    if (r == CUDA_SUCCESS) {
      info_.loadedImage = "cubin";
      return;
    }
    image_ = nullptr;
    std::string where = prefix_ + ": loading its cubin (for " + cubinArch +
                        ") on " + info_.deviceName + " (" + info_.deviceArch +
                        ")";
    if (!cubinDoesNotFit(r))
      cuda::fail(d, r, "cuModuleLoadData", where);
    std::string error = errorText(d, r);
    info_.cubinRejected = "cuModuleLoadData failed with " + error +
                          " for its cubin (for " + cubinArch + ")";
    if (!m.gpuPtx())
      throw Error(where + ": the GPU cannot run it (cuModuleLoadData failed " +
                  "with " + error +
                  ") and the module has no PTX to JIT-compile instead");
  } else {
    info_.cubinRejected = "the module has no cubin";
  }
  {
    // Said once per module and device architecture, not once per session.
    static std::mutex mutex;
    static std::set<std::string> told;
    std::lock_guard<std::mutex> lock(mutex);
    if (told.insert(m.name() + "\n" + info_.deviceArch).second)
      std::cerr << "strata: "
                << (ptxOnly ? "STRATA_CUDA_IMAGE=ptx: not loading the cubin"
                            : "no cubin for " + info_.deviceArch)
                << " in the module '" << m.name() << "'; JIT-compiling its PTX"
                << (m.gpuCubin() ? " (its cubin is for " + cubinArch + ")"
                                 : std::string())
                << "\n";
  }
  std::string log(16384, '\0');
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER,
                         CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(
                                    static_cast<uintptr_t>(log.size() - 1))};
  CUresult r = d.cuModuleLoadDataEx(&image_, m.gpuPtx(), 2, keys, values);
  if (r != CUDA_SUCCESS) {
    image_ = nullptr;
    log.resize(std::strlen(log.c_str()));
    std::string hint;
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      hint = "; the PTX is newer than this driver (CUDA " +
             cuda::versionString(d.version) + "): update the NVIDIA driver";
    throw Error(prefix_ + ": JIT-compiling its PTX for " + info_.deviceArch +
                ": cuModuleLoadDataEx failed with " + errorText(d, r) + hint +
                (log.empty() ? "" : "\n" + log));
  }
  info_.loadedImage = "ptx";
}

void CudaSession::resolveKernels() {
  const Driver &d = *d_;
  const Module &m = module_;
  auto deviceAttr = [&](CUdevice_attribute attr, const std::string &where) {
    int value = 0;
    check(d, d.cuDeviceGetAttribute(&value, attr, device_),
          "cuDeviceGetAttribute", where);
    return value;
  };
  std::string where = prefix_ + ": reading the limits of " + info_.deviceName;
  const int maxGrid[3] = {
      deviceAttr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, where),
      deviceAttr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, where),
      deviceAttr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, where)};
  const int maxBlock[3] = {
      deviceAttr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, where),
      deviceAttr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, where),
      deviceAttr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, where)};
  const int maxShared =
      deviceAttr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, where);
  const int multiprocessors =
      deviceAttr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, where);
  const char *image = info_.loadedImage == "cubin" ? "cubin" : "PTX";

  std::map<std::string, CUfunction> functions;
  launches_.resize(m.steps().size());
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const Step &step = m.steps()[i];
    if (step.kind == StepKind::Library)
      continue; // prepareLibrarySteps(), once the buffers exist
    std::string who = stepWhere(i);
    Launch &l = launches_[i];
    LaunchShape &variants = shapes_[i];
    // The PTX's own kernel and launch where the step gives them (the
    // portable PTX's variant of a kernel whose cubin form needs wgmma).
    bool ownPtx = variants.ownPtx =
        info_.loadedImage == "ptx" && variants.ptx.launch;
    const LaunchSpec &shape = variants.taken();
    const KernelLaunch &launch = *shape.launch;
    const std::string &kernel = ownPtx ? step.ptxKernel : step.name;
    auto found = functions.find(kernel);
    if (found == functions.end()) {
      CUfunction fn = nullptr;
      CUresult r = d.cuModuleGetFunction(&fn, image_, kernel.c_str());
      if (r == CUDA_ERROR_NOT_FOUND)
        throw Error(who +
                    " is a generated kernel, but the module's GPU code "
                    "(its " +
                    std::string(image) + ") has no kernel '" + kernel +
                    "' (cuModuleGetFunction failed with " + errorText(d, r) +
                    ")");
      check(d, r, "cuModuleGetFunction", who);
      found = functions.emplace(kernel, fn).first;
    }
    l.function = found->second;
    std::copy(launch.grid, launch.grid + 3, l.grid);
    std::copy(launch.block, launch.block + 3, l.block);
    l.sharedBytes = launch.sharedBytes;
    info_.ownPtxLaunches += ownPtx;
    l.gridDependency = launch.waitsForGrids && gridDependency_;
    info_.programmaticLaunches += l.gridDependency;

    // The ABI: one device pointer per input, then per output. Drivers with
    // cuFuncGetParamInfo let a mismatch surface here, not as a fault.
    size_t numArgs = step.inputs.size() + step.outputs.size() +
                     (shape.tensorMaps.empty() ? 0 : 1);
    if (launch.persistent) {
      // A persistent kernel's blocks each take every grid-th piece of its
      // work: no more of them than the SMs hold at once, or than
      // options_.persistentBlocks (STRATA_CUDA_PERSISTENT_BLOCKS) says
      // (tests: several pieces a block on small cases).
      uint64_t most = uint64_t(multiprocessors) * launch.persistent;
      if (unsigned cap = *options_.persistentBlocks;
          cap && (!most || most > cap))
        most = cap;
      if (most && l.grid[0] > most)
        l.grid[0] = static_cast<unsigned>(most);
    }
    if (!shape.tensorMaps.empty() && !d.cuTensorMapEncodeTiled)
      throw Error(who + " copies through TMA tensor maps, but the NVIDIA "
                        "driver lacks cuTensorMapEncodeTiled (CUDA 12.0)");
    if (d.cuFuncGetParamInfo) {
      // The driver answers CUDA_ERROR_INVALID_VALUE past the last
      // parameter; a kernel's parameters take at most 32764 bytes, which
      // bounds the count.
      size_t count = 0;
      bool known = true;
      for (; count < 32768; ++count) {
        size_t offset = 0, size = 0;
        CUresult r = d.cuFuncGetParamInfo(l.function, count, &offset, &size);
        if (r == CUDA_ERROR_INVALID_VALUE)
          break;
        if (r != CUDA_SUCCESS) {
          known = false; // No parameter information: nothing to check.
          break;
        }
        if (size != sizeof(CUdeviceptr))
          throw Error(who + ": parameter " + std::to_string(count) +
                      " of kernel '" + kernel + "' takes " +
                      std::to_string(size) +
                      " bytes; the ABI passes only device pointers (" +
                      std::to_string(sizeof(CUdeviceptr)) + " bytes)");
      }
      if (known && count != numArgs)
        throw Error(who + ": kernel '" + kernel + "' takes " +
                    std::to_string(count) +
                    " parameters, but the step passes " +
                    std::to_string(step.inputs.size()) + " inputs and " +
                    std::to_string(step.outputs.size()) +
                    " outputs (one device pointer each)");
    }

    auto funcAttr = [&](CUfunction_attribute attr) {
      int value = 0;
      check(d, d.cuFuncGetAttribute(&value, attr, l.function),
            "cuFuncGetAttribute", who);
      return value;
    };
    static const char *const axis[3] = {"x", "y", "z"};
    for (int k = 0; k < 3; ++k) {
      if (l.grid[k] > static_cast<unsigned>(maxGrid[k]))
        throw Error(who + ": grid " + axis[k] + " = " +
                    std::to_string(l.grid[k]) + " exceeds the GPU's " +
                    std::to_string(maxGrid[k]));
      if (l.block[k] > static_cast<unsigned>(maxBlock[k]))
        throw Error(who + ": block " + axis[k] + " = " +
                    std::to_string(l.block[k]) + " exceeds the GPU's " +
                    std::to_string(maxBlock[k]));
    }
    uint64_t threads =
        uint64_t(l.block[0]) * uint64_t(l.block[1]) * uint64_t(l.block[2]);
    // Depends on the kernel's registers as well as on the GPU.
    int maxThreads = funcAttr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    if (threads > static_cast<uint64_t>(maxThreads))
      throw Error(who + ": a block of " + std::to_string(l.block[0]) + "x" +
                  std::to_string(l.block[1]) + "x" +
                  std::to_string(l.block[2]) + " = " + std::to_string(threads) +
                  " threads; kernel '" + kernel + "' allows at most " +
                  std::to_string(maxThreads) + " on this GPU");
    int staticShared = funcAttr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    if (uint64_t(staticShared) + l.sharedBytes > uint64_t(maxShared))
      throw Error(who + ": kernel '" + kernel + "' needs " +
                  std::to_string(staticShared) + " bytes of static and " +
                  std::to_string(l.sharedBytes) +
                  " bytes of dynamic shared memory; a block may have at "
                  "most " +
                  std::to_string(maxShared) + " on this GPU");
    // Above 48 KiB a kernel must opt in to its dynamic shared memory.
    if (static_cast<int>(l.sharedBytes) >
        funcAttr(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES))
      check(d,
            d.cuFuncSetAttribute(
                l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                static_cast<int>(l.sharedBytes)),
            "cuFuncSetAttribute", who);
  }
}

void CudaSession::allocate() {
  const Driver &d = *d_;
  const Module &m = module_;
  const auto &buffers = m.buffers();
  address_.assign(buffers.size(), 0);

  std::string where = prefix_ + ": allocating its arena of " +
                      std::to_string(m.arenaSize()) + " bytes on the GPU";
  if (m.arenaSize())
    check(d, d.cuMemAlloc(&arena_, m.arenaSize()), "cuMemAlloc", where);

  // Constants and inputs each get one allocation, every tensor in it at a
  // 256-byte boundary.
  uint64_t constantBytes = 0, inputBytes = 0;
  std::vector<uint64_t> offset(buffers.size(), 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInfo &b = buffers[i];
    if (b.kind == BufferKind::Constant) {
      offset[i] = constantBytes;
      constantBytes = alignUp(constantBytes + b.dataSize, kDeviceAlign);
    } else if (b.kind == BufferKind::Input) {
      offset[i] = inputBytes;
      inputBytes = alignUp(
          inputBytes + numElements(b.shape) * dtypeSize(b.dtype), kDeviceAlign);
    }
  }
  if (constantBytes)
    check(d, d.cuMemAlloc(&constants_, constantBytes), "cuMemAlloc",
          prefix_ + ": allocating " + std::to_string(constantBytes) +
              " bytes for its constants on the GPU");
  inputBytes_ = inputBytes;
  if (inputBytes)
    check(d, d.cuMemAlloc(&inputs_, inputBytes), "cuMemAlloc",
          prefix_ + ": allocating " + std::to_string(inputBytes) +
              " bytes for its inputs on the GPU");
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInfo &b = buffers[i];
    switch (b.kind) {
    case BufferKind::Arena:
      address_[i] = arena_ + b.offset;
      break;
    case BufferKind::Constant:
      address_[i] = constants_ + offset[i];
      if (b.dataSize)
        check(d, d.cuMemcpyHtoDAsync(address_[i], b.data, b.dataSize, stream_),
              "cuMemcpyHtoDAsync",
              prefix_ + ": copying constant buffer " + std::to_string(i) +
                  " to the GPU");
      break;
    case BufferKind::Input:
      address_[i] = inputs_ + offset[i];
      break;
    case BufferKind::Host: // only host kernels use it (checkPlan)
      break;
    }
  }

  // Staging for the run boundaries: the inputs, then the outputs.
  uint64_t stagingBytes = 0;
  for (const TensorSignature &sig : m.inputs()) {
    inputStaging_.push_back(stagingBytes);
    stagingBytes = alignUp(stagingBytes + sig.byteSize(), kKernelAlign);
  }
  for (const TensorSignature &sig : m.outputs()) {
    outputStaging_.push_back(stagingBytes);
    if (onHost_[sig.buffer])
      continue; // copied from its host tensor
    stagingBytes = alignUp(stagingBytes + sig.byteSize(), kKernelAlign);
  }
  if (options_.pinnedStaging && stagingBytes) {
    void *host = nullptr;
    // Page-locked memory is a scarce system resource; without it the
    // copies still work from pageable memory, only synchronously.
    if (d.cuMemAllocHost(&host, stagingBytes) == CUDA_SUCCESS)
      staging_ = static_cast<uint8_t *>(host);
  }

  for (size_t i = 0; i < launches_.size(); ++i) {
    const Step &step = m.steps()[i];
    Launch &l = launches_[i];
    for (uint32_t id : step.inputs)
      l.args.push_back(address_[id]);
    for (uint32_t id : step.outputs)
      l.args.push_back(address_[id]);
  }

  // The TMA tensor maps, encoded now that the buffers have addresses (they
  // never move), in one allocation: each step with maps gets a pointer to
  // its own after its outputs.
  std::vector<CUtensorMap> maps;
  std::vector<size_t> firstMap(launches_.size(), 0);
  for (size_t i = 0; i < launches_.size(); ++i) {
    const Step &step = m.steps()[i];
    firstMap[i] = maps.size();
    for (size_t k = 0; k < shapes_[i].taken().tensorMaps.size(); ++k) {
      const TensorMapSpec &t = shapes_[i].taken().tensorMaps[k];
      uint32_t id = operandBuffer(step, t.operand);
      DType dtype = buffers[id].dtype;
      CUtensorMapDataType type =
          dtype == DType::BF16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
          : dtype == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
      cuuint64_t dims[2] = {t.inner, t.outer};
      cuuint64_t strides[1] = {t.strideBytes};
      cuuint32_t box[2] = {t.boxInner, t.boxOuter};
      cuuint32_t elementStrides[2] = {1, 1};
      CUtensorMapSwizzle swizzle = t.swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                   : t.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                   : t.swizzle == 32
                                       ? CU_TENSOR_MAP_SWIZZLE_32B
                                       : CU_TENSOR_MAP_SWIZZLE_NONE;
      CUtensorMap map;
      check(d,
            d.cuTensorMapEncodeTiled(
                &map, type, 2, reinterpret_cast<void *>(address_[id]), dims,
                strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            "cuTensorMapEncodeTiled",
            stepWhere(i) + ": encoding tensor map " + std::to_string(k) +
                " (buffer " + std::to_string(id) + ", " +
                std::to_string(t.outer) + "x" + std::to_string(t.inner) +
                " in boxes of " + std::to_string(t.boxOuter) + "x" +
                std::to_string(t.boxInner) + ")");
      maps.push_back(map);
    }
  }
  if (!maps.empty()) {
    size_t bytes = maps.size() * sizeof(CUtensorMap);
    std::string what = prefix_ + ": its " + std::to_string(maps.size()) +
                       " TMA tensor maps (" + std::to_string(bytes) + " bytes)";
    check(d, d.cuMemAlloc(&tensorMaps_, bytes), "cuMemAlloc",
          what + ", allocating them");
    check(d, d.cuMemcpyHtoDAsync(tensorMaps_, maps.data(), bytes, stream_),
          "cuMemcpyHtoDAsync", what + ", copying them to the GPU");
  }
  for (size_t i = 0; i < launches_.size(); ++i) {
    Launch &l = launches_[i];
    if (!shapes_[i].taken().tensorMaps.empty())
      l.args.push_back(tensorMaps_ + firstMap[i] * sizeof(CUtensorMap));
    for (CUdeviceptr &arg : l.args)
      l.params.push_back(&arg);
  }
  check(d, d.cuStreamSynchronize(stream_), "cuStreamSynchronize",
        prefix_ + ": copying its constants to the GPU");
}

void CudaSession::release() noexcept {
  if (!d_ || !context_)
    return;
  const Driver &d = *d_;
  // Errors are ignored: after a fault the context refuses everything, and
  // what is left must still be given back as far as it can be.
  if (d.cuCtxPushCurrent(context_) == CUDA_SUCCESS) {
    if (stream_)
      d.cuStreamSynchronize(stream_);
    if (graphExec_)
      d.cuGraphExecDestroy(graphExec_);
    if (graph_)
      d.cuGraphDestroy(graph_);
    for (CUevent e : events_)
      if (e)
        d.cuEventDestroy(e);
    if (image_)
      d.cuModuleUnload(image_);
    // The library steps' descriptors, before their handles.
    launches_.clear();
#if STRATA_HAVE_CUBLASLT
    if (ltHandle_)
      cuda::blasLt().cublasLtDestroy(static_cast<cublasLtHandle_t>(ltHandle_));
#endif
#if STRATA_HAVE_CUDNN
    if (dnnHandle_)
      cuda::dnn().cudnnDestroy(static_cast<cudnnHandle_t>(dnnHandle_));
#endif
    for (CUdeviceptr p : {arena_, constants_, inputs_, ltWorkspace_,
                          dnnWorkspace_, tensorMaps_})
      if (p)
        d.cuMemFree(p);
    if (staging_)
      d.cuMemFreeHost(staging_);
    if (stream_)
      d.cuStreamDestroy(stream_);
    CUcontext popped;
    d.cuCtxPopCurrent(&popped);
  }
  d.cuDevicePrimaryCtxRelease(device_);
  context_ = nullptr;
}

std::string CudaSession::launch(size_t index) const {
  const Launch &l = launches_[index];
#if STRATA_HAVE_CUBLASLT
  if (l.lt) {
    return l.lt->run(ltWorkspace_, kLtWorkspaceBytes, stream_);
  }
#endif
#if STRATA_HAVE_CUDNN
  // One cudnnBackendExecute of a plan and variant pack built at creation,
  // on the stream cuDNN's handle was given then: capturable.
  if (l.conv)
    return l.conv->run(stream_);
#endif
  if (l.gridDependency) {
    CUlaunchAttribute overlap = {};
    overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {};
    config.gridDimX = l.grid[0];
    config.gridDimY = l.grid[1];
    config.gridDimZ = l.grid[2];
    config.blockDimX = l.block[0];
    config.blockDimY = l.block[1];
    config.blockDimZ = l.block[2];
    config.sharedMemBytes = l.sharedBytes;
    config.hStream = stream_;
    config.attrs = &overlap;
    config.numAttrs = 1;
    CUresult r = d_->cuLaunchKernelEx(
        &config, l.function, const_cast<void **>(l.params.data()), nullptr);
    if (r == CUDA_SUCCESS)
      return {};
    return "cuLaunchKernelEx (programmatic dependent launch) failed with " +
           errorText(*d_, r);
  }
  CUresult r = d_->cuLaunchKernel(
      l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
      l.block[2], l.sharedBytes, stream_, const_cast<void **>(l.params.data()),
      nullptr);
  if (r == CUDA_SUCCESS)
    return {};
  return "cuLaunchKernel failed with " + errorText(*d_, r);
}

/// The steps one launch at a time; with `stepTimes`, each between two
/// events and synchronized, so that a kernel that fails is named.
void CudaSession::launchAll(std::vector<double> *stepTimes) {
  if (stepTimes)
    createEvents();
  for (size_t i = 0; i < launches_.size(); ++i)
    launchTimed(i, stepTimes);
}

/// The profiling events, one start and one end per step (all or none:
/// after a failed creation the next profiled run tries again).
void CudaSession::createEvents() {
  const Driver &d = *d_;
  if (!events_.empty())
    return;
  std::vector<CUevent> events(2 * launches_.size(), nullptr);
  for (CUevent &e : events) {
    if (CUresult r = d.cuEventCreate(&e, CU_EVENT_DEFAULT); r != CUDA_SUCCESS) {
      e = nullptr;
      for (CUevent made : events)
        if (made)
          d.cuEventDestroy(made);
      cuda::fail(d, r, "cuEventCreate",
                 prefix_ + ": creating the events that time its steps");
    }
  }
  events_ = std::move(events);
}

/// Enqueues step `i`; with `stepTimes`, between two events and synchronized,
/// so that a kernel that fails is named.
void CudaSession::launchTimed(size_t i, std::vector<double> *stepTimes) {
  const Driver &d = *d_;
  if (stepTimes)
    check(d, d.cuEventRecord(events_[2 * i], stream_), "cuEventRecord",
          stepWhere(i));
  if (std::string error = launch(i); !error.empty())
    throw Error(stepWhere(i) + ": " + error);
  if (!stepTimes)
    return;
  check(d, d.cuEventRecord(events_[2 * i + 1], stream_), "cuEventRecord",
        stepWhere(i));
  check(d, d.cuEventSynchronize(events_[2 * i + 1]), "cuEventSynchronize",
        stepWhere(i) + ": running the kernel");
  float ms = 0;
  check(d, d.cuEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]),
        "cuEventElapsedTime", stepWhere(i));
  (*stepTimes)[i] += ms / 1000.0;
}

/// Records the steps into a CUDA graph; on failure says why once, keeps the
/// reason in info_ and leaves graphs off for the session.
bool CudaSession::captureGraph() {
  const Driver &d = *d_;
  auto giveUp = [&](const std::string &why) {
    useGraph_ = false;
    info_.graphFallback = why;
    std::cerr << prefix_ << ": capturing its steps into a CUDA graph failed ("
              << why << "); its runs launch the kernels one by one\n";
    return false;
  };
  // Thread-local mode: other threads' CUDA calls do not break the capture.
  CUresult r =
      d.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (r != CUDA_SUCCESS)
    return giveUp("cuStreamBeginCapture failed with " + errorText(d, r));
  for (size_t i = 0; i < launches_.size(); ++i) {
    if (std::string error = launch(i); !error.empty()) {
      CUgraph partial = nullptr;
      d.cuStreamEndCapture(stream_, &partial);
      if (partial)
        d.cuGraphDestroy(partial);
      return giveUp(module_.steps()[i].describe(i) + ": " + error);
    }
  }
  if ((r = d.cuStreamEndCapture(stream_, &graph_)) != CUDA_SUCCESS) {
    graph_ = nullptr;
    return giveUp("cuStreamEndCapture failed with " + errorText(d, r));
  }
  if ((r = d.cuGraphInstantiateWithFlags(&graphExec_, graph_, 0)) !=
      CUDA_SUCCESS) {
    graphExec_ = nullptr;
    d.cuGraphDestroy(graph_);
    graph_ = nullptr;
    return giveUp("cuGraphInstantiateWithFlags failed with " + errorText(d, r));
  }
  ++info_.graphCaptures;
  return true;
}

/// One run's launches: the CUDA graph, captured on first use, or the steps
/// one by one (with `stepTimes`, or when graphs are off).
void CudaSession::launchSteps(std::vector<double> *stepTimes) {
  if (hasHostSteps_) {
    runWithHostSteps(stepTimes);
    return;
  }
  // Device buffers are fixed for the session's life (the arena, constants
  // and inputs are allocated once, inputs are copied into their buffer), so
  // a graph captured once stays valid for every later run.
  if (stepTimes || !useGraph_ || launches_.empty() ||
      (!graphExec_ && !captureGraph())) {
    launchAll(stepTimes);
    ++info_.directRuns;
  } else {
    check(*d_, d_->cuGraphLaunch(graphExec_, stream_), "cuGraphLaunch",
          prefix_ + ": launching the CUDA graph of its steps");
    ++info_.graphRuns;
  }
}

/// The runs are enqueued back to back, each between its own two events, and
/// synchronized once at the end, as the benchmark times torch's calls
/// (bench/gpu/run.py, time_torch): the GPU is never idle between runs and no
/// launch waits for the host.
std::vector<double> CudaSession::timeRuns(int runs) {
  const Driver &d = *d_;
  std::string where = prefix_ + ": timing its runs on the GPU";
  ContextScope scope(d, context_, where);
  EventSet events(d, 2 * size_t(std::max(runs, 0)), where);
  for (int i = 0; i < runs; ++i) {
    check(d, d.cuEventRecord(events[2 * i], stream_), "cuEventRecord", where);
    launchSteps(nullptr);
    check(d, d.cuEventRecord(events[2 * i + 1], stream_), "cuEventRecord",
          where);
  }
  check(d, d.cuStreamSynchronize(stream_), "cuStreamSynchronize",
        where + " (kernels run asynchronously; SessionOptions::profile "
                "names the step that fails)");
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    float t = 0;
    check(d, d.cuEventElapsedTime(&t, events[2 * i], events[2 * i + 1]),
          "cuEventElapsedTime", where);
    ms.push_back(t);
  }
  return ms;
}

void CudaSession::run(const std::vector<Tensor> &inputs,
                      std::vector<Tensor> &outputs,
                      const std::vector<void *> &targets,
                      const std::vector<uint64_t> &deviceInputs,
                      const std::vector<uint64_t> &deviceTargets,
                      std::vector<double> *stepTimes) {
  const Driver &d = *d_;
  const Module &m = module_;
  ContextScope scope(d, context_, prefix_ + ": running on the GPU");
  for (size_t i = 0; i < m.inputs().size(); ++i) {
    const TensorSignature &sig = m.inputs()[i];
    if (i < deviceInputs.size() && deviceInputs[i]) {
      // The caller's device memory (Session::setInputDevice), of the
      // signature's static shape.
      if (size_t bytes = sig.byteSize())
        check(d,
              d.cuMemcpyDtoDAsync(address_[sig.buffer], deviceInputs[i], bytes,
                                  stream_),
              "cuMemcpyDtoDAsync",
              prefix_ + ": copying input '" + sig.name +
                  "' from the caller's device memory");
      continue;
    }
    size_t bytes = inputs[i].byteSize();
    if (!bytes)
      continue;
    const void *source = inputs[i].rawData();
    if (staging_) {
      std::memcpy(staging_ + inputStaging_[i], source, bytes);
      source = staging_ + inputStaging_[i];
    }
    check(d, d.cuMemcpyHtoDAsync(address_[sig.buffer], source, bytes, stream_),
          "cuMemcpyHtoDAsync",
          prefix_ + ": copying input '" + sig.name + "' to the GPU");
  }

  launchSteps(stepTimes);

  // Each output goes to the caller's memory when it gave some, else to a
  // new tensor; through the page-locked staging when there is one.
  std::vector<Tensor> results(m.outputs().size());
  std::vector<void *> destinations(m.outputs().size());
  std::vector<size_t> sizes(m.outputs().size());
  for (size_t i = 0; i < m.outputs().size(); ++i) {
    const TensorSignature &sig = m.outputs()[i];
    if (onHost_[sig.buffer]) {
      // Written by a host step, of its run-time shape; copied below, once
      // the GPU's work before it is done.
      continue;
    }
    if (i < deviceTargets.size() && deviceTargets[i]) {
      // The caller's device memory (Session::setOutputDevice).
      if (size_t bytes = sig.byteSize())
        check(d,
              d.cuMemcpyDtoDAsync(deviceTargets[i], address_[sig.buffer], bytes,
                                  stream_),
              "cuMemcpyDtoDAsync",
              prefix_ + ": copying output '" + sig.name +
                  "' into the caller's device memory");
      continue;
    }
    if (i < targets.size() && targets[i]) {
      destinations[i] = targets[i];
      sizes[i] = sig.byteSize();
    } else {
      results[i] = Tensor::zeros(sig.dtype, sig.shape);
      destinations[i] = results[i].rawData();
      sizes[i] = results[i].byteSize();
    }
    size_t bytes = sizes[i];
    if (!bytes)
      continue;
    void *target = staging_ ? staging_ + outputStaging_[i] : destinations[i];
    check(d, d.cuMemcpyDtoHAsync(target, address_[sig.buffer], bytes, stream_),
          "cuMemcpyDtoHAsync",
          prefix_ + ": copying output '" + sig.name + "' from the GPU");
  }
  // Kernels run asynchronously: a fault shows up here, not at its launch.
  check(d, d.cuStreamSynchronize(stream_), "cuStreamSynchronize",
        prefix_ + ": running its steps on the GPU (kernels run " +
            "asynchronously; SessionOptions::profile synchronizes after " +
            "each step and names the one that fails)");
  if (staging_)
    for (size_t i = 0; i < results.size(); ++i)
      if (size_t bytes = sizes[i])
        std::memcpy(destinations[i], staging_ + outputStaging_[i], bytes);
  for (size_t i = 0; i < m.outputs().size(); ++i) {
    uint32_t id = m.outputs()[i].buffer;
    if (!onHost_[id])
      continue;
    const Tensor &value = hostTensors_[id];
    if (i < deviceTargets.size() && deviceTargets[i]) {
      // Of its static shape (Session::setOutputDevice refuses others).
      if (size_t bytes = value.byteSize()) {
        check(d,
              d.cuMemcpyHtoDAsync(deviceTargets[i], value.rawData(), bytes,
                                  stream_),
              "cuMemcpyHtoDAsync",
              prefix_ + ": copying output '" + m.outputs()[i].name +
                  "' into the caller's device memory");
        check(d, d.cuStreamSynchronize(stream_), "cuStreamSynchronize",
              prefix_ + ": copying output '" + m.outputs()[i].name +
                  "' into the caller's device memory");
      }
    } else if (i < targets.size() && targets[i]) {
      if (size_t bytes = value.byteSize())
        std::memcpy(targets[i], value.rawData(), bytes);
    } else {
      results[i] = value;
    }
  }
  outputs = std::move(results);
}
} // namespace cudasession

bool cudaBackendBuilt() { return true; }

bool cudaAvailable(std::string *why) {
  try {
    cuda::driver();
    return true;
  } catch (const Error &e) {
    if (why)
      *why = e.what();
    return false;
  }
}

std::unique_ptr<detail::CudaExecutor>
detail::createCudaExecutor(const Module &module,
                           const SessionOptions &options) {
  return std::make_unique<cudasession::CudaSession>(module, options);
}

} // namespace strata::rt
