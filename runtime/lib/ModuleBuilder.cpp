//===- ModuleBuilder.cpp - Writing module files -----------------*- C++ -*-===//
//
// ModuleBuilder collects a module in plain structs and serializes it with
// the generated FlatBuffers code in finish(). It deliberately checks
// nothing: Module::load is the one place that decides what a valid module
// is, and tests use the builder to write invalid ones.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include "ModuleChecksum.h"
#include "module_generated.h"

#include <algorithm>
#include <cstring>
#include <fstream>

namespace strata::rt {

struct ModuleBuilder::State {
  uint16_t major = kFormatMajor, minor = kFormatMinor;
  std::string target = "cpu";
  std::vector<TensorSignature> inputs, outputs;
  std::vector<BufferInfo> buffers;
  /// The bytes of each constant buffer (empty for the others), or the
  /// borrowed bytes of a constant added by addConstantView.
  std::vector<std::vector<uint8_t>> constantBytes;
  std::vector<std::pair<const uint8_t *, size_t>> constantViews;
  uint64_t arenaSize = 0;
  std::vector<Step> steps;
  std::vector<uint8_t> code;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::vector<uint8_t> gpuCubin;
  std::string gpuPtx, gpuArch;
};

ModuleBuilder::ModuleBuilder() : state_(std::make_unique<State>()) {}
ModuleBuilder::~ModuleBuilder() = default;
ModuleBuilder::ModuleBuilder(ModuleBuilder &&) noexcept = default;
ModuleBuilder &ModuleBuilder::operator=(ModuleBuilder &&) noexcept = default;

void ModuleBuilder::setVersion(uint16_t major, uint16_t minor) {
  state_->major = major;
  state_->minor = minor;
}

void ModuleBuilder::setTarget(std::string target) {
  state_->target = std::move(target);
}

uint32_t ModuleBuilder::addBuffer(BufferInfo info,
                                  std::vector<uint8_t> constantBytes) {
  state_->buffers.push_back(std::move(info));
  state_->constantBytes.push_back(std::move(constantBytes));
  state_->constantViews.emplace_back(nullptr, 0);
  return static_cast<uint32_t>(state_->buffers.size() - 1);
}

uint32_t ModuleBuilder::addInput(std::string name, DType dtype,
                                 std::vector<int64_t> shape,
                                 std::vector<uint8_t> requiredValue) {
  BufferInfo info;
  info.kind = BufferKind::Input;
  info.dtype = dtype;
  info.shape = shape;
  uint32_t id = addBuffer(std::move(info));
  state_->inputs.push_back(
      {std::move(name), dtype, std::move(shape), id, std::move(requiredValue)});
  return id;
}

void ModuleBuilder::addOutput(std::string name, uint32_t buffer) {
  TensorSignature sig;
  sig.name = std::move(name);
  sig.buffer = buffer;
  if (buffer < state_->buffers.size()) {
    sig.dtype = state_->buffers[buffer].dtype;
    sig.shape = state_->buffers[buffer].shape;
  }
  state_->outputs.push_back(std::move(sig));
}

uint32_t ModuleBuilder::addArenaBuffer(DType dtype,
                                       std::vector<int64_t> shape) {
  uint64_t size = static_cast<uint64_t>(numElements(shape)) * dtypeSize(dtype);
  uint64_t offset = (state_->arenaSize + 63) / 64 * 64;
  return addArenaBuffer(dtype, std::move(shape), offset, size);
}

uint32_t ModuleBuilder::addArenaBuffer(DType dtype, std::vector<int64_t> shape,
                                       uint64_t offset, uint64_t size) {
  BufferInfo info;
  info.kind = BufferKind::Arena;
  info.dtype = dtype;
  info.shape = std::move(shape);
  info.offset = offset;
  info.size = size;
  state_->arenaSize = std::max(state_->arenaSize, offset + size);
  return addBuffer(std::move(info));
}

uint32_t ModuleBuilder::addConstant(DType dtype, std::vector<int64_t> shape,
                                    std::vector<uint8_t> bytes) {
  BufferInfo info;
  info.kind = BufferKind::Constant;
  info.dtype = dtype;
  info.shape = std::move(shape);
  return addBuffer(std::move(info), std::move(bytes));
}

uint32_t ModuleBuilder::addConstantView(DType dtype, std::vector<int64_t> shape,
                                        const uint8_t *data, size_t size) {
  uint32_t id = addConstant(dtype, std::move(shape), {});
  state_->constantViews[id] = {data, size};
  return id;
}

uint32_t ModuleBuilder::addStringConstant(std::vector<int64_t> shape,
                                          std::vector<std::string> values) {
  BufferInfo info;
  info.kind = BufferKind::Constant;
  info.dtype = DType::String;
  info.shape = std::move(shape);
  info.strings = std::move(values);
  return addBuffer(std::move(info));
}

uint32_t ModuleBuilder::addStringBuffer(std::vector<int64_t> shape) {
  return addHostBuffer(DType::String, std::move(shape));
}

uint32_t ModuleBuilder::addHostBuffer(DType dtype, std::vector<int64_t> shape) {
  BufferInfo info;
  info.kind = BufferKind::Host;
  info.dtype = dtype;
  info.shape = std::move(shape);
  return addBuffer(std::move(info));
}

uint32_t ModuleBuilder::addConstant(const Tensor &value) {
  if (value.dtype() == DType::String)
    return addStringConstant(value.shape(), value.strings());
  const auto *bytes = static_cast<const uint8_t *>(value.rawData());
  return addConstant(value.dtype(), value.shape(),
                     std::vector<uint8_t>(bytes, bytes + value.byteSize()));
}

void ModuleBuilder::setArenaSize(uint64_t size) { state_->arenaSize = size; }
void ModuleBuilder::addStep(Step step) {
  state_->steps.push_back(std::move(step));
}
void ModuleBuilder::setCode(std::vector<uint8_t> code) {
  state_->code = std::move(code);
}
void ModuleBuilder::addMetadata(std::string key, std::string value) {
  state_->metadata.emplace_back(std::move(key), std::move(value));
}
void ModuleBuilder::setGpuCubin(std::vector<uint8_t> cubin) {
  state_->gpuCubin = std::move(cubin);
}
void ModuleBuilder::setGpuPtx(std::string ptx) {
  state_->gpuPtx = std::move(ptx);
}
void ModuleBuilder::setGpuArch(std::string arch) {
  state_->gpuArch = std::move(arch);
}

/// A byte vector whose data starts at a 64-byte boundary of the finished
/// buffer (the schema's force_align: 64). This is what the generated
/// ForceVectorAlignment does, minus its debug assertion that the alignment
/// is at most FLATBUFFERS_MAX_ALIGNMENT (32); redefining that macro here
/// alone would give flatbuffers' inline functions two definitions in one
/// program. The builder grows its minimum alignment to 64, so the whole
/// buffer's size is a multiple of 64 and offsets from its start are aligned.
static flatbuffers::Offset<flatbuffers::Vector<uint8_t>>
createAlignedBytes(flatbuffers::FlatBufferBuilder &fbb, const uint8_t *data,
                   size_t size) {
  fbb.PreAlign(size, 64);
  return fbb.CreateVector(data, size);
}
static flatbuffers::Offset<flatbuffers::Vector<uint8_t>>
createAlignedBytes(flatbuffers::FlatBufferBuilder &fbb,
                   const std::vector<uint8_t> &bytes) {
  return createAlignedBytes(fbb, bytes.data(), bytes.size());
}

std::vector<uint8_t> ModuleBuilder::finish() const {
  const State &s = *state_;
  // The builder starts at the size of the bulk data it will hold (constants,
  // code, GPU images, each with its alignment) plus room for the tables:
  // grown from a small start it would double some twenty times for a model
  // of hundreds of megabytes, copying everything written so far each time
  // into freshly faulted pages (most of the module stage of BERT-base).
  size_t bulk = 1 << 20;
  for (const std::vector<uint8_t> &bytes : s.constantBytes)
    bulk += bytes.size() + 64;
  for (const auto &view : s.constantViews)
    bulk += view.second;
  bulk += s.code.size() + s.gpuCubin.size() + s.gpuPtx.size() + 3 * 64;
  for (const BufferInfo &b : s.buffers)
    for (const std::string &value : b.strings)
      bulk += value.size() + 8;
  flatbuffers::FlatBufferBuilder fbb(bulk);

  auto signatures = [&](const std::vector<TensorSignature> &sigs) {
    std::vector<flatbuffers::Offset<fb::TensorSignature>> out;
    for (const TensorSignature &sig : sigs)
      out.push_back(fb::CreateTensorSignatureDirect(
          fbb, sig.name.c_str(), static_cast<fb::ElementType>(sig.dtype),
          &sig.shape, sig.buffer,
          sig.requiredValue.empty() ? nullptr : &sig.requiredValue));
    return fbb.CreateVector(out);
  };
  auto inputs = signatures(s.inputs);
  auto outputs = signatures(s.outputs);

  std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
  for (size_t i = 0; i < s.buffers.size(); ++i) {
    const BufferInfo &b = s.buffers[i];
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> data;
    flatbuffers::Offset<
        flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
        strings;
    // A string constant has its table and no bytes (written even when
    // empty, so that a constant of zero strings is still told apart).
    bool stringConstant =
        b.kind == BufferKind::Constant && b.dtype == DType::String;
    if (stringConstant || !b.strings.empty()) // the latter: invalid, tests
      strings = fbb.CreateVectorOfStrings(b.strings);
    if (b.kind == BufferKind::Constant && !stringConstant)
      data = s.constantViews[i].first
                 ? createAlignedBytes(fbb, s.constantViews[i].first,
                                      s.constantViews[i].second)
                 : createAlignedBytes(fbb, s.constantBytes[i]);
    auto shape = fbb.CreateVector(b.shape);
    buffers.push_back(fb::CreateBuffer(fbb, static_cast<fb::BufferKind>(b.kind),
                                       static_cast<fb::ElementType>(b.dtype),
                                       shape, b.offset, b.size, data, strings));
  }
  auto bufferVector = fbb.CreateVector(buffers);

  std::vector<flatbuffers::Offset<fb::Step>> steps;
  for (const Step &step : s.steps) {
    std::vector<flatbuffers::Offset<fb::Attribute>> attrs;
    for (const Attribute &a : step.attributes) {
      auto key = fbb.CreateString(a.key);
      flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints;
      flatbuffers::Offset<flatbuffers::Vector<double>> floats;
      flatbuffers::Offset<flatbuffers::String> str;
      flatbuffers::Offset<
          flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
          strs;
      if (!a.ints.empty())
        ints = fbb.CreateVector(a.ints);
      if (!a.floats.empty())
        floats = fbb.CreateVector(a.floats);
      if (!a.str.empty())
        str = fbb.CreateString(a.str);
      if (!a.strs.empty())
        strs = fbb.CreateVectorOfStrings(a.strs);
      attrs.push_back(fb::CreateAttribute(fbb, key, ints, floats, str, strs));
    }
    std::vector<flatbuffers::Offset<flatbuffers::String>> nodes;
    for (const std::string &node : step.sourceNodes)
      nodes.push_back(fbb.CreateString(node));
    auto launch = [&](const std::optional<KernelLaunch> &l) {
      if (!l)
        return flatbuffers::Offset<fb::KernelLaunch>();
      std::vector<uint32_t> grid(l->grid, l->grid + 3),
          block(l->block, l->block + 3);
      return fb::CreateKernelLaunchDirect(
          fbb, &grid, &block, l->sharedBytes, l->persistent, l->waitsForGrids,
          l->tensorMaps.empty() ? nullptr : &l->tensorMaps);
    };
    auto cubinLaunch = launch(step.launch);
    auto ptxLaunch = launch(step.ptxLaunch);
    steps.push_back(fb::CreateStepDirect(
        fbb, static_cast<fb::StepKind>(step.kind), step.name.c_str(),
        &step.inputs, &step.outputs, &attrs, &nodes, cubinLaunch,
        step.ptxKernel.empty() ? nullptr : step.ptxKernel.c_str(), ptxLaunch));
  }
  auto stepVector = fbb.CreateVector(steps);

  std::vector<flatbuffers::Offset<fb::KeyValue>> metadata;
  for (const auto &[key, value] : s.metadata)
    metadata.push_back(
        fb::CreateKeyValueDirect(fbb, key.c_str(), value.c_str()));
  auto metadataVector = fbb.CreateVector(metadata);

  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> code;
  if (!s.code.empty())
    code = createAlignedBytes(fbb, s.code);
  auto target = fbb.CreateString(s.target);
  // Empty GPU fields are left out, so that CPU modules stay as they were.
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> gpuCubin;
  if (!s.gpuCubin.empty())
    gpuCubin = createAlignedBytes(fbb, s.gpuCubin);
  flatbuffers::Offset<flatbuffers::String> gpuPtx, gpuArch;
  if (!s.gpuPtx.empty())
    gpuPtx = fbb.CreateString(s.gpuPtx);
  if (!s.gpuArch.empty())
    gpuArch = fbb.CreateString(s.gpuArch);

  fb::Version version(s.major, s.minor);
  // From 1.3 the checksum field is written, first as a placeholder that is
  // not the default (FlatBuffers leaves out fields at their default), then
  // sealed with the hash of the finished bytes.
  bool checksum = s.major > 1 || (s.major == 1 && s.minor >= 3);
  auto root =
      fb::CreateModule(fbb, &version, target, inputs, outputs, bufferVector,
                       s.arenaSize, stepVector, code, metadataVector, gpuCubin,
                       gpuPtx, gpuArch, checksum ? ~uint64_t{0} : 0);
  // Size-prefixed, so that the loader can tell a truncated file.
  fb::FinishSizePrefixedModuleBuffer(fbb, root);
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(),
                             fbb.GetBufferPointer() + fbb.GetSize());
  if (checksum && !detail::sealModule(bytes))
    throw Error("internal error: the module just written has no checksum "
                "field");
  return bytes;
}

void ModuleBuilder::write(const std::string &path) const {
  std::vector<uint8_t> bytes = finish();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw Error("cannot open '" + path + "' for writing");
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw Error("cannot write '" + path + "'");
}

} // namespace strata::rt
