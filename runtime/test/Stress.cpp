//===- Stress.cpp - Many sessions of shared modules on many threads -------===//
//
//   strata-runtime-stress [--workers N] [--runs M] [--session-threads T]
//                         [--input-sets K] MODULE...
//
// Proves the runtime's concurrency guarantees (docs/runtime.md, "Threads"):
// one Module shared by many Sessions on many threads, each Session used by
// one thread at a time. Each module is loaded once and shared. For K
// deterministic input sets a single session on this thread computes the
// reference outputs first. Then N worker threads each run M requests; a
// request picks a module and an input set, binds the inputs, runs and
// compares every output byte for byte with the reference (a session with
// the same thread count computes the same bytes: chunk boundaries do not
// depend on timing). Workers also drop their session of a module every few
// requests and make a new one, so that sessions are created and destroyed
// (and generated code loaded and unloaded) while others run.
//
// Run under ThreadSanitizer by scripts/test.sh (the tsan-stress test); the
// exit status is 1 on any mismatch or error, with the first ones printed.
// CUDA modules work the same way (each session has its own stream): on a GPU
// machine, runtime/test/cuda/device-stress.sh runs the GPU suite's modules
// so, with cuBLASLt's algorithms pinned (STRATA_CUBLASLT_TUNE=0), since
// sessions that time them may choose others and round differently.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace strata::rt;

namespace {

struct Options {
  unsigned workers = 8;
  unsigned runs = 100;
  unsigned sessionThreads = 1;
  unsigned inputSets = 3;
  std::vector<std::string> modules;
};

/// Deterministic values for input `input` of set `set`: floats in [-1, 1],
/// integers in [0, 4) (valid indices for gathers and embeddings), booleans.
Tensor makeInput(const TensorSignature &sig, unsigned set, size_t input) {
  std::vector<int64_t> shape = sig.shape;
  for (int64_t &d : shape)
    if (d < 0)
      d = 2;
  Tensor t = Tensor::zeros(sig.dtype, shape);
  uint64_t state = 0x9E3779B97F4A7C15ull * (set + 1) + 7919 * (input + 1);
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  int64_t n = t.numElements();
  switch (sig.dtype) {
  case DType::F32:
    for (int64_t i = 0; i < n; ++i)
      t.data<float>()[i] = static_cast<float>(next() % 2001) / 1000.f - 1.f;
    break;
  case DType::F64:
    for (int64_t i = 0; i < n; ++i)
      t.data<double>()[i] = static_cast<double>(next() % 2001) / 1000. - 1.;
    break;
  case DType::F16:
  case DType::BF16:
    // The same values, rounded to 16 bits (a GPU model's weights and
    // activations): bf16 is a float's top half, f16 a conversion.
    for (int64_t i = 0; i < n; ++i) {
      float v = static_cast<float>(next() % 2001) / 1000.f - 1.f;
      uint16_t bits;
      if (sig.dtype == DType::F16) {
        _Float16 h = static_cast<_Float16>(v);
        std::memcpy(&bits, &h, 2);
      } else {
        uint32_t word;
        std::memcpy(&word, &v, 4);
        bits = static_cast<uint16_t>(word >> 16);
      }
      static_cast<uint16_t *>(t.rawData())[i] = bits;
    }
    break;
  case DType::I64:
    for (int64_t i = 0; i < n; ++i)
      t.data<int64_t>()[i] = next() % 4;
    break;
  case DType::I32:
    for (int64_t i = 0; i < n; ++i)
      t.data<int32_t>()[i] = next() % 4;
    break;
  case DType::I1:
    for (int64_t i = 0; i < n; ++i)
      t.data<bool>()[i] = next() % 2;
    break;
  case DType::String:
    throw Error("input '" + sig.name +
                "' is a tensor of strings, which the "
                "stress test does not make");
  default:
    // Other types: small byte patterns are valid values for every one.
    for (size_t i = 0; i < t.byteSize(); ++i)
      static_cast<uint8_t *>(t.rawData())[i] = next() % 4;
  }
  return t;
}

struct Case {
  std::shared_ptr<const Module> module;
  /// Per input set: the inputs, and the reference outputs.
  std::vector<std::vector<Tensor>> inputs;
  std::vector<std::vector<Tensor>> outputs;
};

bool sameBytes(const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return false;
  if (a.dtype() == DType::String)
    return a.strings() == b.strings();
  return std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
}

int usage() {
  std::cerr << "usage: strata-runtime-stress [--workers N] [--runs M] "
               "[--session-threads T] [--input-sets K] MODULE...\n";
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto number = [&](unsigned &out) {
      if (i + 1 >= argc)
        return false;
      char *end = nullptr;
      unsigned long v = std::strtoul(argv[++i], &end, 10);
      out = static_cast<unsigned>(v);
      return *end == 0 && v > 0;
    };
    bool ok = true;
    if (arg == "--workers")
      ok = number(o.workers);
    else if (arg == "--runs")
      ok = number(o.runs);
    else if (arg == "--session-threads")
      ok = number(o.sessionThreads);
    else if (arg == "--input-sets")
      ok = number(o.inputSets);
    else if (!arg.empty() && arg[0] != '-')
      o.modules.push_back(arg);
    else
      ok = false;
    if (!ok)
      return usage();
  }
  if (o.modules.empty())
    return usage();

  std::vector<Case> cases;
  try {
    for (const std::string &path : o.modules) {
      auto started = std::chrono::steady_clock::now();
      Case c;
      c.module = Module::load(path);
      Session reference(c.module, {o.sessionThreads});
      for (unsigned set = 0; set < o.inputSets; ++set) {
        std::vector<Tensor> inputs, outputs;
        for (size_t i = 0; i < c.module->inputs().size(); ++i) {
          inputs.push_back(makeInput(c.module->inputs()[i], set, i));
          reference.setInput(i, inputs.back());
        }
        reference.run();
        for (size_t i = 0; i < c.module->outputs().size(); ++i)
          outputs.push_back(reference.output(i));
        c.inputs.push_back(std::move(inputs));
        c.outputs.push_back(std::move(outputs));
      }
      // Where a run that stalls stopped (CUDA modules' sessions load code
      // and time library candidates first).
      std::cerr << "strata-runtime-stress: reference of " << path << " ("
                << c.module->target() << ") in "
                << std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started)
                       .count()
                << " s\n";
      cases.push_back(std::move(c));
    }
  } catch (const Error &e) {
    std::cerr << "strata-runtime-stress: " << e.what() << "\n";
    return 1;
  }

  std::atomic<uint64_t> done{0}, mismatches{0}, errors{0};
  std::mutex reportMutex;
  unsigned reported = 0;
  auto report = [&](const std::string &what) {
    std::lock_guard<std::mutex> lock(reportMutex);
    if (reported++ < 10)
      std::cerr << "strata-runtime-stress: " << what << "\n";
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < o.workers; ++w)
    workers.emplace_back([&, w] {
      std::vector<std::unique_ptr<Session>> sessions(cases.size());
      for (unsigned r = 0; r < o.runs; ++r) {
        size_t k = (w + r) % cases.size();
        unsigned set = (w * 7 + r) % o.inputSets;
        const Case &c = cases[k];
        try {
          // A fresh session now and then: creation and destruction (and
          // the loading and unloading of generated code) race with runs.
          if (!sessions[k] || (r + w) % 5 == 0)
            sessions[k] = std::make_unique<Session>(
                c.module, SessionOptions{o.sessionThreads});
          Session &s = *sessions[k];
          for (size_t i = 0; i < c.inputs[set].size(); ++i)
            s.setInput(i, c.inputs[set][i]);
          s.run();
          for (size_t i = 0; i < c.outputs[set].size(); ++i)
            if (!sameBytes(s.output(i), c.outputs[set][i])) {
              ++mismatches;
              report("worker " + std::to_string(w) + ", run " +
                     std::to_string(r) + ": " + c.module->name() +
                     ", input set " + std::to_string(set) + ": output '" +
                     c.module->outputs()[i].name +
                     "' differs from the single-threaded reference");
            }
        } catch (const std::exception &e) {
          ++errors;
          report("worker " + std::to_string(w) + ", run " + std::to_string(r) +
                 ": " + e.what());
        }
        ++done;
      }
    });
  for (std::thread &t : workers)
    t.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::cout << "strata-runtime-stress: " << done.load() << " runs of "
            << cases.size() << " module(s) on " << o.workers
            << " threads (sessions of " << o.sessionThreads << " thread(s), "
            << o.inputSets << " input sets) in " << seconds
            << " s: " << mismatches.load() << " mismatches, " << errors.load()
            << " errors\n";
  return mismatches.load() || errors.load() ? 1 : 0;
}
