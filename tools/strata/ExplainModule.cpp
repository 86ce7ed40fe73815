//===- ExplainModule.cpp - strata explain of a compiled module ------------===//
//
// `strata explain model.strata`: what a compiled module holds, read back from
// the file alone (the runtime loads and verifies it; nothing is compiled):
// where it came from, its target, inputs and outputs (and the values it was
// specialized on), its memory, and its plan step by step: each step's kind
// (a library call, a generated kernel, a host kernel), the kernel's name
// (which says what it fused), the ONNX nodes it computes, its operands and
// attributes. The reasons behind the decisions are in the fused stage's IR,
// which a module does not carry: `strata explain model.onnx` gives them.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "Explain.h"

#include "strata/Runtime/Runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace json = llvm::json;
namespace rt = strata::rt;

namespace {

const char *kindName(const rt::Step &step) {
  if (step.isHostKernel())
    return "host";
  return step.kind == rt::StepKind::Kernel ? "kernel" : "library";
}

const char *bufferKind(rt::BufferKind kind) {
  switch (kind) {
  case rt::BufferKind::Arena:
    return "arena";
  case rt::BufferKind::Constant:
    return "constant";
  case rt::BufferKind::Input:
    return "input";
  case rt::BufferKind::Host:
    return "host";
  }
  return "?";
}

/// "f32[1, 3, 224, 224]"; "f32[?, 64]" where a dimension is set at run time.
std::string typeText(rt::DType dtype, const std::vector<int64_t> &shape) {
  return rt::dtypeName(dtype) + rt::shapeToString(shape);
}

/// A GPU kernel's launch as text: "grid 14x1x1, block 512x1x1, 197696 B
/// of shared memory, persistent (1 block per SM), waits for the grids
/// before it, 3 TMA tensor maps".
std::string launchText(const rt::KernelLaunch &l) {
  auto extents = [](const uint32_t *v) {
    return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" +
           std::to_string(v[2]);
  };
  std::string text = "grid " + extents(l.grid) + ", block " + extents(l.block) +
                     ", " + std::to_string(l.sharedBytes) +
                     " B of shared memory";
  if (l.persistent)
    text += ", persistent (" + std::to_string(l.persistent) +
            (l.persistent == 1 ? " block" : " blocks") + " per SM)";
  if (l.waitsForGrids)
    text += ", waits for the grids before it";
  if (size_t maps = l.tensorMaps.size() / 7)
    text += ", " + std::to_string(maps) + " TMA tensor map" +
            (maps == 1 ? "" : "s");
  return text;
}

json::Object launchJson(const rt::KernelLaunch &l) {
  return json::Object{
      {"grid", json::Array{l.grid[0], l.grid[1], l.grid[2]}},
      {"block", json::Array{l.block[0], l.block[1], l.block[2]}},
      {"shared_bytes", l.sharedBytes},
      {"persistent", l.persistent},
      {"waits_for_grids", l.waitsForGrids},
      {"tensor_maps", static_cast<int64_t>(l.tensorMaps.size() / 7)}};
}

/// An attribute's value as text: "1", "[3, 3]", "gelu_tanh".
std::string attributeText(const rt::Attribute &a) {
  std::vector<std::string> parts;
  for (int64_t v : a.ints)
    parts.push_back(std::to_string(v));
  for (double v : a.floats)
    parts.push_back(llvm::formatv("{0}", v).str());
  if (!a.str.empty())
    parts.push_back(a.str);
  for (const std::string &s : a.strs)
    parts.push_back("'" + s + "'");
  if (parts.size() == 1)
    return parts[0];
  return "[" + llvm::join(parts, ", ") + "]";
}

/// "x: f32[1, 64]" with " (compiled for the value 4)" for inputs the
/// module was specialized on.
std::string signatureText(const rt::TensorSignature &sig) {
  std::string text = sig.name + ": " + typeText(sig.dtype, sig.shape);
  if (sig.requiredValue.empty())
    return text;
  return text + " (compiled for the value " +
         rt::valuesToString(sig.dtype, sig.shape, sig.requiredValue) + ")";
}

/// What both forms of the explanation say about a module: its metadata,
/// its constants' bytes, names for the buffers the model's inputs and
/// outputs are, and its steps counted by kind.
struct ModuleFacts {
  explicit ModuleFacts(const rt::Module &m);

  /// What a step reads or writes: "input 'x'" or the buffer's kind, then
  /// its type.
  std::vector<std::string> operands(const std::vector<uint32_t> &ids) const;
  /// The input whose arena space a step's output takes (a convolution
  /// adding onto a residual it reads last writes over it), or -1.
  int inPlaceOf(const rt::Step &step, uint32_t output) const;

  const rt::Module &m;
  std::map<std::string, std::string> metadata;
  uint64_t constantBytes = 0;
  std::map<uint32_t, std::string> named;
  std::map<std::string, size_t> libraryCalls;
  size_t kernels = 0, hosts = 0, libraries = 0;
  /// "1.6".
  std::string format;
};

ModuleFacts::ModuleFacts(const rt::Module &m)
    : m(m), metadata(m.metadata().begin(), m.metadata().end()) {
  for (const rt::BufferInfo &b : m.buffers())
    if (b.kind == rt::BufferKind::Constant)
      constantBytes += b.dataSize;
  for (const rt::TensorSignature &sig : m.inputs())
    named[sig.buffer] = "input '" + sig.name + "'";
  for (const rt::TensorSignature &sig : m.outputs())
    named[sig.buffer] = "output '" + sig.name + "'";
  for (const rt::Step &step : m.steps()) {
    if (step.isHostKernel())
      ++hosts;
    else if (step.kind == rt::StepKind::Kernel)
      ++kernels;
    else
      ++libraryCalls[step.name];
  }
  libraries = m.steps().size() - kernels - hosts;
  format =
      std::to_string(m.versionMajor()) + "." + std::to_string(m.versionMinor());
}

std::vector<std::string>
ModuleFacts::operands(const std::vector<uint32_t> &ids) const {
  std::vector<std::string> out;
  for (uint32_t id : ids) {
    const rt::BufferInfo &b = m.buffers()[id];
    auto it = named.find(id);
    out.push_back(
        (it != named.end() ? it->second : std::string(bufferKind(b.kind))) +
        " " + typeText(b.dtype, b.shape));
  }
  return out;
}

int ModuleFacts::inPlaceOf(const rt::Step &step, uint32_t output) const {
  const rt::BufferInfo &out = m.buffers()[output];
  if (out.kind != rt::BufferKind::Arena || out.size == 0)
    return -1;
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const rt::BufferInfo &in = m.buffers()[step.inputs[i]];
    if (in.kind == rt::BufferKind::Arena && in.offset == out.offset &&
        in.size == out.size)
      return static_cast<int>(i);
  }
  return -1;
}

/// `strata explain --json m.strata`.
void printJson(const ModuleFacts &f, const std::string &path) {
  const rt::Module &m = f.m;
  json::Array inputs, outputs, steps;
  for (const rt::TensorSignature &sig : m.inputs())
    inputs.push_back(json::Object{{"name", sig.name},
                                  {"type", typeText(sig.dtype, sig.shape)},
                                  {"text", signatureText(sig)}});
  for (const rt::TensorSignature &sig : m.outputs())
    outputs.push_back(json::Object{{"name", sig.name},
                                   {"type", typeText(sig.dtype, sig.shape)}});
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const rt::Step &step = m.steps()[i];
    json::Array reads, writes, nodes;
    for (std::string &text : f.operands(step.inputs))
      reads.push_back(std::move(text));
    json::Array inPlace;
    for (std::string &text : f.operands(step.outputs))
      writes.push_back(std::move(text));
    for (size_t w = 0; w < step.outputs.size(); ++w)
      if (int of = f.inPlaceOf(step, step.outputs[w]); of >= 0)
        inPlace.push_back(
            json::Object{{"write", static_cast<int64_t>(w)}, {"read", of}});
    for (const std::string &node : step.sourceNodes)
      nodes.push_back(node);
    json::Object attributes;
    for (const rt::Attribute &a : step.attributes)
      attributes[a.key] = attributeText(a);
    json::Object entry{{"index", static_cast<int64_t>(i)},
                       {"kind", kindName(step)},
                       {"name", step.name},
                       {"nodes", std::move(nodes)},
                       {"reads", std::move(reads)},
                       {"writes", std::move(writes)},
                       {"in_place", std::move(inPlace)},
                       {"attributes", std::move(attributes)}};
    if (step.launch)
      entry["launch"] = launchJson(*step.launch);
    if (step.ptxLaunch) {
      entry["ptx_kernel"] = step.ptxKernel;
      entry["ptx_launch"] = launchJson(*step.ptxLaunch);
    }
    steps.push_back(std::move(entry));
  }
  json::Object meta;
  for (const auto &[key, value] : f.metadata)
    meta[key] = value;
  json::Object out{
      {"module", path},
      {"format", f.format},
      {"target", m.target()},
      {"metadata", std::move(meta)},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"arena_bytes", static_cast<int64_t>(m.arenaSize())},
      {"constant_bytes", static_cast<int64_t>(f.constantBytes)},
      {"code_bytes", static_cast<int64_t>(m.codeSize())},
      {"steps", std::move(steps)},
      {"summary",
       json::Object{{"steps", static_cast<int64_t>(m.steps().size())},
                    {"library_calls", static_cast<int64_t>(f.libraries)},
                    {"generated_kernels", static_cast<int64_t>(f.kernels)},
                    {"host_kernels", static_cast<int64_t>(f.hosts)}}}};
  if (!m.gpuArch().empty())
    out["gpu"] =
        json::Object{{"arch", m.gpuArch()},
                     {"cubin_bytes", static_cast<int64_t>(m.gpuCubinSize())},
                     {"ptx_bytes", static_cast<int64_t>(m.gpuPtxSize())}};
  llvm::outs() << llvm::formatv("{0:2}", json::Value(std::move(out))) << "\n";
}

/// `strata explain m.strata`.
void printText(const ModuleFacts &f, const std::string &path) {
  const rt::Module &m = f.m;
  llvm::raw_ostream &os = llvm::outs();
  os << "strata explain " << path << " (a compiled module, format " << f.format
     << ")\n";
  auto line = [&](llvm::StringRef label, const std::string &text) {
    os << "  " << label << ": " << text << "\n";
  };
  if (f.metadata.count("source"))
    line("compiled from", f.metadata.at("source"));
  if (f.metadata.count("compiler"))
    line("compiler", f.metadata.at("compiler"));
  std::string target = m.target();
  if (!m.gpuArch().empty())
    target +=
        " (" + m.gpuArch() +
        (m.gpuCubinSize()
             ? ", cubin " + strata::driver::humanBytes(m.gpuCubinSize())
             : std::string(", no cubin")) +
        (m.gpuPtxSize() ? ", PTX " + strata::driver::humanBytes(m.gpuPtxSize())
                        : "") +
        ")";
  else if (f.metadata.count("cpu"))
    target += " (" + f.metadata.at("cpu") + ")";
  line("target", target);
  std::vector<std::string> ins, outs;
  for (const rt::TensorSignature &sig : m.inputs())
    ins.push_back(signatureText(sig));
  for (const rt::TensorSignature &sig : m.outputs())
    outs.push_back(signatureText(sig));
  line("inputs", ins.empty() ? "none" : llvm::join(ins, "; "));
  line("outputs", llvm::join(outs, "; "));
  line("memory",
       "arena " + strata::driver::humanBytes(m.arenaSize()) + ", constants " +
           strata::driver::humanBytes(f.constantBytes) +
           (m.codeSize()
                ? ", host code " + strata::driver::humanBytes(m.codeSize())
                : std::string()));
  os << "\n";
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const rt::Step &step = m.steps()[i];
    os << "#" << i << " " << step.name << "\n";
    os << "    kind: " << kindName(step)
       << (step.kind == rt::StepKind::Kernel
               ? " (generated; its name says what it fused)"
           : step.isHostKernel() ? " (the runtime's host kernel)"
                                 : " (a vendor library call)")
       << "\n";
    if (!step.sourceNodes.empty()) {
      std::vector<std::string> nodes;
      for (const std::string &node : step.sourceNodes)
        nodes.push_back("'" + node + "'");
      os << "    ONNX nodes: " << llvm::join(nodes, ", ") << "\n";
    }
    std::vector<std::string> reads = f.operands(step.inputs),
                             writes = f.operands(step.outputs);
    for (size_t i = 0; i < writes.size(); ++i)
      if (int of = f.inPlaceOf(step, step.outputs[i]); of >= 0)
        writes[i] += " (in place of reads[" + std::to_string(of) + "])";
    if (!reads.empty())
      os << "    reads: " << llvm::join(reads, "; ") << "\n";
    os << "    writes: " << llvm::join(writes, "; ") << "\n";
    // A GPU kernel's launch, and the portable PTX's own where it differs;
    // a CPU kernel's attributes are details of its threads (rows split
    // over them); a library call's say what it computes.
    if (step.launch)
      os << "    launch: " << launchText(*step.launch) << "\n";
    if (step.ptxLaunch)
      os << "    portable PTX: kernel " << step.ptxKernel << ", "
         << launchText(*step.ptxLaunch) << "\n";
    if (step.kind == rt::StepKind::Library && !step.attributes.empty()) {
      std::vector<std::string> attributes;
      for (const rt::Attribute &a : step.attributes)
        attributes.push_back(a.key + " = " + attributeText(a));
      os << "    attributes: " << llvm::join(attributes, ", ") << "\n";
    }
  }
  std::vector<std::string> calls;
  for (const auto &[name, count] : f.libraryCalls)
    calls.push_back(name + " " + std::to_string(count));
  os << "\nsummary: " << m.steps().size() << " steps: " << f.libraries
     << " library calls"
     << (calls.empty() ? "" : " (" + llvm::join(calls, ", ") + ")") << ", "
     << f.kernels << " generated kernels, " << f.hosts << " host kernels\n"
     << "(the reasons behind these decisions: strata explain on the model)\n";
}

} // namespace

using strata::driver::humanBytes;

int strata::driver::explainModuleFile(const std::string &path, bool asJson) {
  std::shared_ptr<const rt::Module> loaded;
  try {
    loaded = rt::Module::load(path);
  } catch (const rt::Error &e) {
    llvm::errs() << path << ": error: " << e.what() << "\n";
    return 1;
  }
  ModuleFacts facts(*loaded);
  if (asJson)
    printJson(facts, path);
  else
    printText(facts, path);
  return 0;
}
