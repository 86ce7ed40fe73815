//===- strata-bench-gpu.cpp - Timing compiled modules on the GPU -*- C++
//-*-===//
//
// The strata side of the GPU benchmark (bench/gpu/run.py, docs/benchmarks.md
// "GPU benchmark"). It links only the runtime (no LLVM, no MLIR), so it can be
// carried to the GPU machine with a few shared libraries.
//
//   strata-bench-gpu run m.strata --inputs DIR [--outputs DIR] [--json FILE]
//       [--warmup N] [--min-runs N] [--max-runs N] [--target-ms T]
//
// 1. Correctness: a Session (the runtime exactly as an application uses it)
//    gets DIR/<input name>.bin (raw little-endian bytes; DIR/input_<K>.bin
//    when there is no file of that name), runs once, and each output is
//    written to DIR/output_<K>.bin for the caller to check.
// 2. Time, device only: the module's kernel steps are launched as the
//    executor launches them (same cubin or PTX, grid, block, dynamic shared
//    memory, one device pointer per input and output), captured into one
//    CUDA graph, and each replay is timed between two CUDA events: the median
//    over runs, after warm-up. Nothing is copied between host and device
//    inside the timed region, which is how the peers (torch, JAX) are timed
//    too. The arena is poisoned (0xFF bytes) first, and the outputs of these
//    replays are compared byte for byte with the Session's, so the timed
//    kernels are the checked ones.
// 3. Time, per step: a Session with SessionOptions::profile runs the steps
//    one at a time between CUDA events (the runtime's own step timing); the
//    sum per run excludes launch gaps. Reported beside (2), and the only
//    device time when (2) cannot run (a step that is not a generated kernel).
// Modules for the CPU are timed with the host clock around Session::run,
// for testing the harness on a machine without a GPU.
//
//   strata-bench-gpu selftest-module --cubin F --ptx F -o m.strata
//       [--rows R] [--cols C]
//
// Writes a module for the workload gelu_add_bf16 around the hand-written
// kernel in selftest/gelu_add.cu: it tests the harness's strata path on the
// GPU before the compiler emits CUDA. Its timings are not strata's.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Cuda.h"
#include "strata/Runtime/Runtime.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace strata::rt;

namespace {

[[noreturn]] void fail(const std::string &message) { throw Error(message); }

void check(CUresult r, const char *call, const std::string &where) {
  if (r == CUDA_SUCCESS)
    return;
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  fail(where + ": " + call + " failed with " + (name ? name : "?") + " (" +
       (text ? text : "?") + ")");
}
#define CU(call, where) check((call), #call, (where))

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("cannot read " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string &path, const void *data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char *>(data),
            static_cast<std::streamsize>(size));
  if (!out)
    fail("cannot write " + path);
}

bool exists(const std::string &path) { return std::ifstream(path).good(); }

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

std::string num(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

struct Stats {
  double median = 0, min = 0, mean = 0;
  size_t runs = 0;
};

Stats stats(std::vector<double> ms) {
  Stats s;
  s.runs = ms.size();
  if (ms.empty())
    return s;
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  s.median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  s.min = ms.front();
  for (double v : ms)
    s.mean += v;
  s.mean /= n;
  return s;
}

std::string statsJson(const Stats &s) {
  return "{\"median_ms\": " + num(s.median) + ", \"min_ms\": " + num(s.min) +
         ", \"mean_ms\": " + num(s.mean) +
         ", \"runs\": " + std::to_string(s.runs) + "}";
}

struct Options {
  std::string module, inputs, outputs, json;
  int warmup = 10, minRuns = 20, maxRuns = 500;
  double targetMs = 300;
  bool replay = true, profile = true;
};

/// How many timed runs give about `targetMs` of work at `estimateMs` each.
size_t runsFor(const Options &o, double estimateMs) {
  double n = estimateMs > 0 ? o.targetMs / estimateMs : o.maxRuns;
  return static_cast<size_t>(std::clamp(n, static_cast<double>(o.minRuns),
                                        static_cast<double>(o.maxRuns)));
}

int64_t attrInt(const Step &step, const char *key, size_t i, int64_t dflt) {
  for (const Attribute &a : step.attributes)
    if (a.key == key && a.ints.size() > i)
      return a.ints[i];
  return dflt;
}

//===----------------------------------------------------------------------===//
// Device-only replay of a CUDA module's kernel steps
//===----------------------------------------------------------------------===//

class Replay {
public:
  explicit Replay(const Module &m) : m_(m) {
    const std::string where = "replaying '" + m.name() + "'";
    CU(cuInit(0), where);
    CU(cuDeviceGet(&device_, 0), where);
    CU(cuDevicePrimaryCtxRetain(&ctx_, device_), where);
    CU(cuCtxSetCurrent(ctx_), where);
    if (m.gpuCubin() &&
        cuModuleLoadData(&image_, m.gpuCubin()) == CUDA_SUCCESS) {
      loaded_ = "cubin";
    } else if (m.gpuPtx()) {
      image_ = nullptr;
      CU(cuModuleLoadDataEx(&image_, m.gpuPtx(), 0, nullptr, nullptr),
         where + ": JIT-compiling the PTX");
      loaded_ = "ptx";
    } else {
      fail(where + ": the GPU takes neither the module's cubin nor its PTX");
    }
    // Buffers: the arena in one allocation (poisoned), then one allocation
    // per constant and per input.
    const auto &bufs = m.buffers();
    address_.assign(bufs.size(), 0);
    if (m.arenaSize()) {
      CU(cuMemAlloc(&arena_, m.arenaSize()), where + ": the arena");
      CU(cuMemsetD8(arena_, 0xFF, m.arenaSize()), where + ": poisoning");
    }
    for (size_t b = 0; b < bufs.size(); ++b) {
      const BufferInfo &info = bufs[b];
      if (info.kind == BufferKind::Arena) {
        address_[b] = arena_ + info.offset;
        continue;
      }
      size_t bytes = info.kind == BufferKind::Constant
                         ? info.dataSize
                         : numElements(info.shape) * dtypeSize(info.dtype);
      if (!bytes)
        continue;
      CU(cuMemAlloc(&address_[b], bytes), where + ": a buffer");
      owned_.push_back(address_[b]);
      if (info.kind == BufferKind::Constant)
        CU(cuMemcpyHtoD(address_[b], info.data, bytes), where + ": constants");
    }
    CU(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), where);
    std::map<std::string, CUfunction> fns;
    for (size_t i = 0; i < m.steps().size(); ++i) {
      const Step &s = m.steps()[i];
      if (s.kind != StepKind::Kernel)
        fail(s.describe(i) + " is not a generated kernel: the replay runs "
                             "only kernel steps");
      Launch l;
      auto f = fns.find(s.name);
      if (f == fns.end()) {
        CUfunction fn;
        CU(cuModuleGetFunction(&fn, image_, s.name.c_str()), s.describe(i));
        f = fns.emplace(s.name, fn).first;
      }
      l.fn = f->second;
      for (int k = 0; k < 3; ++k) {
        l.grid[k] = static_cast<unsigned>(attrInt(s, "grid", k, 1));
        l.block[k] = static_cast<unsigned>(attrInt(s, "block", k, 1));
      }
      l.shared = static_cast<unsigned>(attrInt(s, "shared_bytes", 0, 0));
      if (l.shared > 48 * 1024)
        CU(cuFuncSetAttribute(l.fn,
                              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              static_cast<int>(l.shared)),
           s.describe(i));
      for (uint32_t b : s.inputs)
        l.ptrs.push_back(address_[b]);
      for (uint32_t b : s.outputs)
        l.ptrs.push_back(address_[b]);
      launches_.push_back(std::move(l));
    }
    for (Launch &l : launches_)
      for (CUdeviceptr &p : l.ptrs)
        l.params.push_back(&p);
  }

  ~Replay() {
    cuCtxSetCurrent(ctx_);
    if (exec_)
      cuGraphExecDestroy(exec_);
    if (graph_)
      cuGraphDestroy(graph_);
    for (CUevent e : events_)
      cuEventDestroy(e);
    if (stream_)
      cuStreamDestroy(stream_);
    for (CUdeviceptr p : owned_)
      cuMemFree(p);
    if (arena_)
      cuMemFree(arena_);
    if (image_)
      cuModuleUnload(image_);
    cuDevicePrimaryCtxRelease(device_);
  }

  void setInput(size_t i, const Tensor &t) {
    const TensorSignature &sig = m_.inputs()[i];
    if (t.byteSize())
      CU(cuMemcpyHtoD(address_[sig.buffer], t.rawData(), t.byteSize()),
         "replay: input '" + sig.name + "'");
  }

  /// Captures the launches into a graph; false (and `why`) when it fails.
  bool capture(std::string &why) {
    CUresult r = cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL);
    if (r == CUDA_SUCCESS) {
      for (const Launch &l : launches_)
        if ((r = launch(l)) != CUDA_SUCCESS)
          break;
      CUgraph g = nullptr;
      CUresult e = cuStreamEndCapture(stream_, &g);
      if (r == CUDA_SUCCESS)
        r = e;
      graph_ = g;
    }
    if (r == CUDA_SUCCESS)
      r = cuGraphInstantiate(&exec_, graph_, 0);
    if (r != CUDA_SUCCESS) {
      const char *name = nullptr;
      cuGetErrorName(r, &name);
      why = std::string("graph capture failed with ") + (name ? name : "?");
      exec_ = nullptr;
      return false;
    }
    return true;
  }

  void once() {
    if (exec_) {
      CU(cuGraphLaunch(exec_, stream_), "replay: cuGraphLaunch");
    } else {
      for (size_t i = 0; i < launches_.size(); ++i)
        CU(launch(launches_[i]), m_.steps()[i].describe(i));
    }
  }

  void sync() { CU(cuStreamSynchronize(stream_), "replay: running the steps"); }

  /// `runs` timed replays, each between two events; milliseconds each.
  std::vector<double> time(size_t runs) {
    while (events_.size() < 2 * runs) {
      CUevent e;
      CU(cuEventCreate(&e, CU_EVENT_DEFAULT), "replay: cuEventCreate");
      events_.push_back(e);
    }
    for (size_t i = 0; i < runs; ++i) {
      CU(cuEventRecord(events_[2 * i], stream_), "replay: cuEventRecord");
      once();
      CU(cuEventRecord(events_[2 * i + 1], stream_), "replay: cuEventRecord");
    }
    sync();
    std::vector<double> ms(runs);
    for (size_t i = 0; i < runs; ++i) {
      float t = 0;
      CU(cuEventElapsedTime(&t, events_[2 * i], events_[2 * i + 1]),
         "replay: cuEventElapsedTime");
      ms[i] = t;
    }
    return ms;
  }

  /// `runs` replays back to back between two events: the mean, in ms.
  double timeBackToBack(size_t runs) {
    time(1); // Makes sure two events exist.
    CU(cuEventRecord(events_[0], stream_), "replay: cuEventRecord");
    for (size_t i = 0; i < runs; ++i)
      once();
    CU(cuEventRecord(events_[1], stream_), "replay: cuEventRecord");
    sync();
    float t = 0;
    CU(cuEventElapsedTime(&t, events_[0], events_[1]), "replay: elapsed");
    return t / runs;
  }

  std::vector<uint8_t> output(size_t i) {
    const TensorSignature &sig = m_.outputs()[i];
    std::vector<uint8_t> bytes(numElements(sig.shape) * dtypeSize(sig.dtype));
    if (!bytes.empty())
      CU(cuMemcpyDtoH(bytes.data(), address_[sig.buffer], bytes.size()),
         "replay: output '" + sig.name + "'");
    return bytes;
  }

  const std::string &loaded() const { return loaded_; }
  bool graphed() const { return exec_ != nullptr; }

private:
  struct Launch {
    CUfunction fn = nullptr;
    unsigned grid[3], block[3], shared = 0;
    std::vector<CUdeviceptr> ptrs;
    std::vector<void *> params;
  };
  CUresult launch(const Launch &l) const {
    return cuLaunchKernel(l.fn, l.grid[0], l.grid[1], l.grid[2], l.block[0],
                          l.block[1], l.block[2], l.shared, stream_,
                          const_cast<void **>(l.params.data()), nullptr);
  }

  const Module &m_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  CUmodule image_ = nullptr;
  std::string loaded_;
  CUdeviceptr arena_ = 0;
  std::vector<CUdeviceptr> address_, owned_;
  CUstream stream_ = nullptr;
  std::vector<Launch> launches_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  std::vector<CUevent> events_;
};

//===----------------------------------------------------------------------===//
// The run command
//===----------------------------------------------------------------------===//

std::vector<Tensor> readInputs(const Module &m, const std::string &dir) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < m.inputs().size(); ++i) {
    const TensorSignature &sig = m.inputs()[i];
    for (int64_t d : sig.shape)
      if (d < 0)
        fail("input '" + sig.name + "' has a dynamic shape " +
             shapeToString(sig.shape) + "; the benchmark needs static ones");
    std::string path = dir + "/" + sig.name + ".bin";
    if (!exists(path))
      path = dir + "/input_" + std::to_string(i) + ".bin";
    std::vector<uint8_t> bytes = readFile(path);
    Tensor t = Tensor::zeros(sig.dtype, sig.shape);
    if (bytes.size() != t.byteSize())
      fail(path + " holds " + std::to_string(bytes.size()) + " bytes; input '" +
           sig.name + "' (" + dtypeName(sig.dtype) + " " +
           shapeToString(sig.shape) + ") takes " +
           std::to_string(t.byteSize()));
    if (!bytes.empty())
      std::memcpy(t.rawData(), bytes.data(), bytes.size());
    out.push_back(std::move(t));
  }
  return out;
}

std::string signaturesJson(const std::vector<TensorSignature> &sigs) {
  std::string s = "[";
  for (size_t i = 0; i < sigs.size(); ++i) {
    if (i)
      s += ", ";
    s += "{\"name\": " + jsonString(sigs[i].name) +
         ", \"dtype\": " + jsonString(dtypeName(sigs[i].dtype)) +
         ", \"shape\": " + jsonString(shapeToString(sigs[i].shape)) + "}";
  }
  return s + "]";
}

int runCommand(const Options &o) {
  using clock = std::chrono::steady_clock;
  auto module = Module::load(o.module);
  const Module &m = *module;
  bool isCuda = m.target() == "cuda";
  std::vector<Tensor> inputs = readInputs(m, o.inputs);
  std::ostringstream js;
  js << "{\"module\": " << jsonString(o.module)
     << ", \"target\": " << jsonString(m.target())
     << ", \"steps\": " << m.steps().size()
     << ", \"inputs\": " << signaturesJson(m.inputs())
     << ", \"outputs\": " << signaturesJson(m.outputs());

  // 1. The Session's result.
  SessionOptions so;
  so.threads = isCuda ? 1 : 0;
  Session session(module, so);
  for (size_t i = 0; i < inputs.size(); ++i)
    session.setInput(i, inputs[i]);
  auto t0 = clock::now();
  session.run();
  double firstMs =
      std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  js << ", \"first_run_ms\": " << num(firstMs);
  if (isCuda) {
    CudaSessionInfo info = cudaSessionInfo(session);
    js << ", \"device\": " << jsonString(info.deviceName)
       << ", \"arch\": " << jsonString(info.deviceArch)
       << ", \"loaded_image\": " << jsonString(info.loadedImage);
  }
  if (!o.outputs.empty())
    for (size_t i = 0; i < m.outputs().size(); ++i) {
      const Tensor &t = session.output(i);
      writeFile(o.outputs + "/output_" + std::to_string(i) + ".bin",
                t.rawData(), t.byteSize());
    }
  // End to end (host inputs in, host outputs out), a few runs: for context.
  {
    std::vector<double> ms;
    for (int i = 0; i < 3; ++i) {
      auto a = clock::now();
      session.run();
      ms.push_back(
          std::chrono::duration<double, std::milli>(clock::now() - a).count());
    }
    js << ", \"session_run\": " << statsJson(stats(ms));
  }

  if (!isCuda) {
    // CPU modules (harness tests): the host clock around Session::run.
    for (int i = 0; i < o.warmup; ++i)
      session.run();
    auto a = clock::now();
    session.run();
    double est =
        std::chrono::duration<double, std::milli>(clock::now() - a).count();
    std::vector<double> ms;
    for (size_t i = 0, n = runsFor(o, est); i < n; ++i) {
      auto b = clock::now();
      session.run();
      ms.push_back(
          std::chrono::duration<double, std::milli>(clock::now() - b).count());
    }
    js << ", \"method\": \"host clock around Session::run (cpu module)\""
       << ", \"time\": " << statsJson(stats(ms)) << "}\n";
  } else {
    std::string method, replayError;
    Stats best;
    // 2. Device-only replay.
    if (o.replay) {
      try {
        Replay r(m);
        for (size_t i = 0; i < inputs.size(); ++i)
          r.setInput(i, inputs[i]);
        std::string why;
        bool graphed = r.capture(why);
        r.once();
        r.sync();
        size_t mismatched = 0;
        for (size_t i = 0; i < m.outputs().size(); ++i) {
          std::vector<uint8_t> got = r.output(i);
          const uint8_t *want =
              static_cast<const uint8_t *>(session.output(i).rawData());
          for (size_t k = 0; k < got.size(); ++k)
            mismatched += got[k] != want[k];
        }
        for (int i = 0; i < o.warmup; ++i)
          r.once();
        r.sync();
        std::vector<double> est = r.time(3);
        size_t n = runsFor(o, stats(est).median);
        Stats s = stats(r.time(n));
        double b2b = r.timeBackToBack(n);
        js << ", \"replay\": {\"graph\": " << (graphed ? "true" : "false")
           << ", \"graph_fallback\": " << jsonString(why)
           << ", \"image\": " << jsonString(r.loaded())
           << ", \"bytes_differing_from_session\": " << mismatched
           << ", \"time\": " << statsJson(s)
           << ", \"back_to_back_mean_ms\": " << num(b2b) << "}";
        if (mismatched == 0) {
          best = s;
          method = graphed ? "CUDA graph of the module's kernels, CUDA events "
                             "around each replay"
                           : "the module's kernels launched one by one, CUDA "
                             "events around each run";
        } else {
          replayError = "the replay's outputs differ from the Session's in " +
                        std::to_string(mismatched) + " bytes";
        }
      } catch (const Error &e) {
        replayError = e.what();
      }
      if (!replayError.empty())
        js << ", \"replay_error\": " << jsonString(replayError);
    }
    // 3. The runtime's own per-step timing.
    if (o.profile) {
      SessionOptions po;
      po.profile = true;
      Session prof(module, po);
      for (size_t i = 0; i < inputs.size(); ++i)
        prof.setInput(i, inputs[i]);
      prof.run(); // Warm-up.
      std::vector<double> last = prof.stepTimes(), perRun;
      std::vector<double> stepSum(last.size(), 0);
      size_t n = std::max<size_t>(5, std::min<size_t>(o.minRuns, 20));
      for (size_t k = 0; k < n; ++k) {
        prof.run();
        const std::vector<double> &now = prof.stepTimes();
        double total = 0;
        for (size_t i = 0; i < now.size(); ++i) {
          total += now[i] - last[i];
          stepSum[i] += now[i] - last[i];
        }
        last = now;
        perRun.push_back(total * 1e3);
      }
      Stats s = stats(perRun);
      js << ", \"profile\": {\"time\": " << statsJson(s)
         << ", \"per_step_mean_ms\": [";
      for (size_t i = 0; i < stepSum.size(); ++i)
        js << (i ? ", " : "") << num(stepSum[i] * 1e3 / n);
      js << "], \"step_names\": [";
      for (size_t i = 0; i < m.steps().size(); ++i)
        js << (i ? ", " : "") << jsonString(m.steps()[i].name);
      js << "]}";
      if (method.empty()) {
        best = s;
        method = "sum of the runtime's per-step CUDA-event times "
                 "(SessionOptions::profile; launch gaps excluded)";
      }
    }
    if (method.empty())
      fail("no device time: " + replayError);
    js << ", \"method\": " << jsonString(method)
       << ", \"time\": " << statsJson(best) << "}\n";
  }
  if (o.json.empty())
    std::cout << js.str();
  else
    writeFile(o.json, js.str().data(), js.str().size());
  return 0;
}

//===----------------------------------------------------------------------===//
// The self-test module
//===----------------------------------------------------------------------===//

int selftestModule(const std::map<std::string, std::string> &args) {
  auto get = [&](const char *k, const char *dflt) {
    auto it = args.find(k);
    if (it != args.end())
      return it->second;
    if (!dflt)
      fail(std::string("selftest-module needs --") + k);
    return std::string(dflt);
  };
  int64_t rows = std::stoll(get("rows", "16384"));
  int64_t cols = std::stoll(get("cols", "4096"));
  int64_t n = rows * cols;
  if (n % 8)
    fail("rows x cols must be a multiple of 8");
  const int64_t block = 256, perThread = 8;
  ModuleBuilder b;
  b.setTarget("cuda");
  uint32_t a = b.addInput("a", DType::BF16, {rows, cols});
  uint32_t bb = b.addInput("b", DType::BF16, {rows, cols});
  uint32_t r = b.addInput("r", DType::BF16, {rows, cols});
  uint32_t y = b.addArenaBuffer(DType::BF16, {rows, cols});
  b.addOutput("y", y);
  int64_t grid = (n / perThread + block - 1) / block;
  b.addStep(
      Step{StepKind::Kernel,
           "selftest_gelu_add_bf16",
           {a, bb, r},
           {y},
           {{"grid", {grid, 1, 1}, {}, ""}, {"block", {block, 1, 1}, {}, ""}},
           {"hand-written stand-in (bench self-test)"}});
  std::vector<uint8_t> cubin = readFile(get("cubin", nullptr));
  std::vector<uint8_t> ptx = readFile(get("ptx", nullptr));
  b.setGpuCubin(cubin);
  b.setGpuArch("sm_90a");
  b.setGpuPtx(std::string(ptx.begin(), ptx.end()));
  b.addMetadata("strata.bench.selftest",
                "hand-written kernel, not compiler output");
  b.write(get("o", nullptr));
  return 0;
}

void usage() {
  std::cerr
      << "usage: strata-bench-gpu run m.strata --inputs DIR [--outputs DIR] "
         "[--json FILE] [--warmup N] [--min-runs N] [--max-runs N] "
         "[--target-ms T] [--no-replay] [--no-profile]\n"
         "       strata-bench-gpu selftest-module --cubin F --ptx F -o OUT "
         "[--rows R] [--cols C]\n";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    usage();
    return 2;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "run") {
      Options o;
      for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
          if (i + 1 >= argc)
            fail(a + " needs a value");
          return argv[++i];
        };
        if (a == "--inputs")
          o.inputs = value();
        else if (a == "--outputs")
          o.outputs = value();
        else if (a == "--json")
          o.json = value();
        else if (a == "--warmup")
          o.warmup = std::stoi(value());
        else if (a == "--min-runs")
          o.minRuns = std::stoi(value());
        else if (a == "--max-runs")
          o.maxRuns = std::stoi(value());
        else if (a == "--target-ms")
          o.targetMs = std::stod(value());
        else if (a == "--no-replay")
          o.replay = false;
        else if (a == "--no-profile")
          o.profile = false;
        else if (!a.empty() && a[0] != '-' && o.module.empty())
          o.module = a;
        else
          fail("unknown argument " + a);
      }
      if (o.module.empty() || o.inputs.empty()) {
        usage();
        return 2;
      }
      o.maxRuns = std::max(o.maxRuns, o.minRuns);
      return runCommand(o);
    }
    if (cmd == "selftest-module") {
      std::map<std::string, std::string> args;
      for (int i = 2; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k.rfind("--", 0) == 0)
          k = k.substr(2);
        else if (k.rfind("-", 0) == 0)
          k = k.substr(1);
        args[k] = argv[i + 1];
      }
      return selftestModule(args);
    }
    usage();
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "strata-bench-gpu: " << e.what() << "\n";
    return 1;
  }
}
