//===- strata-bench-gpu.cpp - Timing compiled modules on the GPU -*- C++
//-*-===//
//
// The strata side of the GPU benchmark (bench/gpu/run.py, docs/benchmarks.md
// "GPU benchmark"). It links only the runtime (no LLVM, no MLIR), so it can be
// carried to the GPU machine with a few shared libraries.
//
//   strata-bench-gpu run m.strata --inputs DIR [--outputs DIR] [--json FILE]
//       [--warmup N] [--min-runs N] [--max-runs N] [--target-ms T]
//       [--times FILE] [--library-choices FILE] [--save-library-choices FILE]
//
// 1. Correctness: a Session (the runtime exactly as an application uses it)
//    gets DIR/<input name>.bin (raw little-endian bytes; DIR/input_<K>.bin
//    when there is no file of that name), runs once, and each output is
//    written to DIR/output_<K>.bin for the caller to check.
// 2. Time, device only, the reported time: the Session's own runs without
//    their copies (cudaTimeRuns: its CUDA graph of every step, kernels and
//    cuBLASLt calls alike, on the inputs already on the device), each
//    between two CUDA events: the median over runs, after warm-up. Nothing
//    is copied between host and device inside the timed region, which is how
//    the peers (torch, JAX) are timed too. The graph timed is the one whose
//    outputs (1) wrote. The JSON has the median, the minimum, the mean and
//    the 10th and 90th percentiles; --times FILE writes every run's time,
//    one a line, in run order.
// 3. Time, per step: a Session with SessionOptions::profile runs the steps
//    one at a time between CUDA events (the runtime's own step timing); the
//    sum per run excludes launch gaps. Reported beside (2) for the steps'
//    shares, and the device time only when (2) fails.
// --save-library-choices writes the cuBLASLt algorithms the first session
// chose (CudaSessionInfo::libraryChoices); --library-choices pins every
// session's to such a file (SessionOptions::Cuda::libraryChoices).
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
  double median = 0, min = 0, mean = 0, p10 = 0, p90 = 0;
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
  // Nearest rank.
  s.p10 = ms[size_t(0.1 * double(n - 1) + 0.5)];
  s.p90 = ms[size_t(0.9 * double(n - 1) + 0.5)];
  for (double v : ms)
    s.mean += v;
  s.mean /= n;
  return s;
}

std::string statsJson(const Stats &s) {
  return "{\"median_ms\": " + num(s.median) + ", \"min_ms\": " + num(s.min) +
         ", \"mean_ms\": " + num(s.mean) + ", \"p10_ms\": " + num(s.p10) +
         ", \"p90_ms\": " + num(s.p90) +
         ", \"runs\": " + std::to_string(s.runs) + "}";
}

struct Options {
  std::string module, inputs, outputs, json, times;
  /// cuBLASLt's algorithms: pinned from this file; written to that one.
  std::string libraryChoices, saveLibraryChoices;
  int warmup = 10, minRuns = 20, maxRuns = 500;
  double targetMs = 300;
  bool profile = true;
  /// Replay the Session's CUDA graph (false: launch its steps one by one).
  bool graph = true;
};

/// How many timed runs give about `targetMs` of work at `estimateMs` each.
size_t runsFor(const Options &o, double estimateMs) {
  double n = estimateMs > 0 ? o.targetMs / estimateMs : o.maxRuns;
  return static_cast<size_t>(std::clamp(n, static_cast<double>(o.minRuns),
                                        static_cast<double>(o.maxRuns)));
}

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
  so.cuda.graphs = o.graph;
  if (!o.libraryChoices.empty())
    so.cuda.libraryChoices = o.libraryChoices;
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
       << ", \"loaded_image\": " << jsonString(info.loadedImage)
       << ", \"programmatic_launches\": " << info.programmaticLaunches
       << ", \"own_ptx_launches\": " << info.ownPtxLaunches
       << ", \"library_calls\": [";
    for (size_t i = 0; i < info.libraryCalls.size(); ++i)
      js << (i ? ", " : "") << jsonString(info.libraryCalls[i]);
    js << "]";
    if (!o.saveLibraryChoices.empty())
      writeFile(o.saveLibraryChoices, info.libraryChoices.data(),
                info.libraryChoices.size());
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
    std::string method, sessionError;
    Stats best;
    // 2. The Session's own device runs (cudaTimeRuns): its CUDA graph of
    // every step, kernels and cuBLASLt calls alike, the inputs already on the
    // device. This is the time reported when it works.
    try {
      // Warm-up on the device alone: Session::run would copy the inputs and
      // outputs each time, which the timed runs leave out.
      cudaTimeRuns(session, o.warmup);
      size_t n = runsFor(o, stats(cudaTimeRuns(session, 3)).median);
      std::vector<double> times = cudaTimeRuns(session, int(n));
      if (!o.times.empty()) {
        std::ofstream file(o.times);
        for (double t : times)
          file << t << "\n";
        if (!file)
          fail("could not write " + o.times);
      }
      Stats s = stats(times);
      CudaSessionInfo info = cudaSessionInfo(session);
      bool graphed = info.graphFallback.empty() && info.graphRuns > 0;
      js << ", \"session_replay\": {\"graph\": " << (graphed ? "true" : "false")
         << ", \"graph_fallback\": " << jsonString(info.graphFallback)
         << ", \"time\": " << statsJson(s) << "}";
      best = s;
      method = graphed ? "the Session's CUDA graph of all its steps (kernels "
                         "and library calls), CUDA events around each replay "
                         "(cudaTimeRuns)"
                       : "the Session's steps launched one by one, CUDA "
                         "events around each run (cudaTimeRuns)";
    } catch (const Error &e) {
      sessionError = e.what();
      js << ", \"session_replay_error\": " << jsonString(sessionError);
    }
    // 3. The runtime's own per-step timing.
    if (o.profile) {
      SessionOptions po;
      po.profile = true;
      if (!o.libraryChoices.empty())
        po.cuda.libraryChoices = o.libraryChoices;
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
      fail("no device time: " + sessionError);
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
  Step step{StepKind::Kernel,
            "selftest_gelu_add_bf16",
            {a, bb, r},
            {y},
            {},
            {"hand-written stand-in (bench self-test)"}};
  step.launch = KernelLaunch{};
  step.launch->grid[0] = static_cast<uint32_t>(grid);
  step.launch->block[0] = static_cast<uint32_t>(block);
  b.addStep(step);
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
         "[--target-ms T] [--no-profile] [--no-graph] [--times FILE] "
         "[--library-choices FILE] [--save-library-choices FILE]\n"
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
        else if (a == "--times")
          o.times = value();
        else if (a == "--target-ms")
          o.targetMs = std::stod(value());
        else if (a == "--no-profile")
          o.profile = false;
        else if (a == "--no-graph")
          o.graph = false;
        else if (a == "--library-choices")
          o.libraryChoices = value();
        else if (a == "--save-library-choices")
          o.saveLibraryChoices = value();
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
