//===- ModuleWriter.cpp - memory plan and the module file -------*- C++ -*-===//
//
// Turns a partitioned entry function into the runtime's execution plan:
//
// - every value gets a buffer: inputs are bound by the caller, constants are
//   stored in the module, kernel results live in the arena;
// - reshape-like ops are views: a buffer record at the same arena offset
//   with the new shape (a view of a constant is the constant's bytes under
//   the new shape; a view of a model input is taken of a copy, since input
//   buffers are bound per run);
// - the arena is planned by liveness: walking the steps in order, a
//   buffer's space is released after the last step that reads it (or any
//   view of it), and each new result takes the lowest 64-byte aligned gap
//   that fits (first fit). Model outputs are never released.
//   A library call that adds onto an input (kernel::Accumulates) takes
//   that input's space instead when it is the input's last reader.
// - strings never enter the arena (docs/runtime.md, "Strings"): a string
//   constant is stored as a table of strings, and every string result of a
//   step gets a Host buffer of its own that the session holds. Only those
//   may keep a dynamic dimension (StringNormalizer's output is as long as
//   the words it keeps): the step sets it at run time.
// - a result of numbers whose shape depends on values (NonZero, Unique,
//   NonMaxSuppression: a host step, LibraryValueShaped.cpp) gets a Host
//   buffer too, sized by its step at run time; the graph stage has checked
//   that only host steps and the model's outputs read it.
//
// For the cuda target (Gpu.h) every step is a generated kernel launched
// with the grid and block the gpu stage recorded on its declaration, and
// the copy of a model input that views read is a generated copy kernel.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Gpu.h"

#include "strata/Compiler/Compiler.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/Runtime/Runtime.h"
#include "strata/Version.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Config/llvm-config.h"

#include <algorithm>
#include <climits>
#include <map>

using namespace mlir;
using namespace strata;
namespace graph = strata::graph;
namespace rt = strata::rt;

std::optional<rt::DType> strata::toRuntimeType(Type type) {
  if (isa<graph::StringType>(type))
    return rt::DType::String;
  if (type.isF32())
    return rt::DType::F32;
  if (type.isF64())
    return rt::DType::F64;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isBF16())
    return rt::DType::BF16;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  bool isUnsigned = integer.isUnsigned();
  switch (integer.getWidth()) {
  case 1:
    return rt::DType::I1;
  case 8:
    return isUnsigned ? rt::DType::U8 : rt::DType::I8;
  case 16:
    return isUnsigned ? rt::DType::U16 : rt::DType::I16;
  case 32:
    return isUnsigned ? rt::DType::U32 : rt::DType::I32;
  case 64:
    return isUnsigned ? rt::DType::U64 : rt::DType::I64;
  default:
    return std::nullopt;
  }
}

/// The little-endian row-major bytes of a constant (i1 as one byte each).
static std::optional<std::vector<uint8_t>> constantBytes(ElementsAttr attr) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  Type element = dense.getElementType();
  int64_t count = dense.getNumElements();
  std::vector<uint8_t> bytes;
  if (element.isInteger(1)) {
    bytes.reserve(count);
    for (bool b : dense.getValues<bool>())
      bytes.push_back(b ? 1 : 0);
    return bytes;
  }
  if (!element.isIntOrFloat())
    return std::nullopt;
  size_t width = element.getIntOrFloatBitWidth() / 8;
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    bytes.resize(width * count);
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(bytes.data() + i * width, raw.data(), width);
  } else {
    bytes.assign(raw.begin(), raw.end());
  }
  return bytes;
}

/// The bytes of a constant as its attribute stores them, when those are
/// the module's bytes (a dense, non-splat constant of a type of whole
/// bytes), else empty: constantBytes must then build them.
static ArrayRef<char> rawBytes(ElementsAttr attr) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || dense.isSplat() || dense.getNumElements() == 0)
    return {};
  Type element = dense.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return {};
  ArrayRef<char> raw = dense.getRawData();
  size_t width = element.getIntOrFloatBitWidth() / 8;
  if (raw.size() != width * static_cast<size_t>(dense.getNumElements()))
    return {};
  return raw;
}

namespace {

enum class SlotKind { Input, Constant, Arena, Host };

/// A buffer of the plan. Views share their root's storage.
struct Slot {
  SlotKind kind = SlotKind::Arena;
  rt::DType dtype = rt::DType::F32;
  std::vector<int64_t> shape;
  int root = -1;
  std::vector<uint8_t> bytes; // constant roots
  /// A constant root's bytes as its attribute holds them, when they are the
  /// module's bytes already (borrowed: the context outlives the builder).
  ArrayRef<char> raw;
  std::vector<std::string> strings; // constant roots of strings
  uint64_t size = 0, offset = 0;
  int lastUse = -1; // roots: the last step reading it (INT_MAX: output)
  uint32_t buffer = 0;
};

struct PlannedStep {
  rt::Step step;
  std::vector<int> inputs, outputs;
  /// The input the step adds its one result onto (kernel::Accumulates),
  /// or -1: the result may take that input's space when it is its last
  /// reader.
  int accumulates = -1;
};

class Planner {
public:
  Planner(ModuleOp module, func::FuncOp entry, const GpuCode *gpu)
      : module(module), entry(entry), gpu(gpu) {}
  LogicalResult run(const CompileOptions &options,
                    const std::vector<uint8_t> &sharedObject,
                    std::vector<uint8_t> &out);

private:
  FailureOr<int> newSlot(SlotKind kind, Value value, Operation *where);
  int slotOf(Value v) { return slots.lookup(v); }
  LogicalResult addStepForCall(func::CallOp call);
  LogicalResult addView(Operation *op);
  LogicalResult addLaunch(func::FuncOp kernel, rt::Step &step);
  LogicalResult checkHostSteps(StringRef target);
  void planArena();
  int inPlaceInput(const PlannedStep &step, int now) const;

  ModuleOp module;
  func::FuncOp entry;
  /// The GPU code, for the cuda target; null for the CPU.
  const GpuCode *gpu;
  std::vector<Slot> all;
  llvm::DenseMap<Value, int> slots;
  llvm::DenseMap<int, int> inputCopies; // input slot -> its copy
  std::vector<PlannedStep> steps;
};

} // namespace

FailureOr<int> Planner::newSlot(SlotKind kind, Value value, Operation *where) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  std::optional<rt::DType> dtype =
      type ? toRuntimeType(type.getElementType()) : std::nullopt;
  bool isString = dtype == rt::DType::String;
  // A string result, or one whose shape depends on values, lives in a Host
  // buffer, whose dynamic dimensions the step writing it sets at run time.
  if (kind == SlotKind::Arena && type && (isString || !type.hasStaticShape()))
    kind = SlotKind::Host;
  if (!type || !dtype || (!type.hasStaticShape() && kind != SlotKind::Host)) {
    where->emitError("cannot hold a value of type ")
        << value.getType() << " in a buffer of the plan";
    return failure();
  }
  Slot slot;
  slot.kind = kind;
  slot.dtype = *dtype;
  for (int64_t d : type.getShape())
    slot.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  slot.root = static_cast<int>(all.size());
  slot.size = kind == SlotKind::Host || isString
                  ? 0
                  : static_cast<uint64_t>(type.getNumElements()) *
                        rt::dtypeSize(*dtype);
  all.push_back(std::move(slot));
  slots[value] = all.size() - 1;
  return static_cast<int>(all.size() - 1);
}

static rt::Attribute toRuntimeAttribute(StringRef key, Attribute value) {
  rt::Attribute a;
  a.key = key.str();
  if (auto i = dyn_cast<IntegerAttr>(value))
    a.ints.push_back(i.getValue().getSExtValue());
  else if (auto f = dyn_cast<FloatAttr>(value))
    a.floats.push_back(f.getValueAsDouble());
  else if (auto s = dyn_cast<StringAttr>(value))
    a.str = s.str();
  else if (auto ints = dyn_cast<DenseI64ArrayAttr>(value))
    a.ints.assign(ints.asArrayRef().begin(), ints.asArrayRef().end());
  else if (auto floats = dyn_cast<DenseF64ArrayAttr>(value))
    a.floats.assign(floats.asArrayRef().begin(), floats.asArrayRef().end());
  else if (auto array = dyn_cast<ArrayAttr>(value))
    // Lists of strings (StringNormalizer's stop words).
    for (Attribute element : array)
      if (auto s = dyn_cast<StringAttr>(element))
        a.strs.push_back(s.str());
  return a;
}

LogicalResult Planner::addStepForCall(func::CallOp call) {
  auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
  auto kind = callee ? kernel::get<kernel::Kind>(callee) : StringAttr();
  if (!kind)
    return call.emitError("internal error: call to a function that is not a "
                          "kernel");
  PlannedStep planned;
  rt::Step &step = planned.step;
  if (kind.getValue() == "codegen" && gpu) {
    step.kind = rt::StepKind::Kernel;
    step.name = callee.getSymName().str();
    if (failed(addLaunch(callee, step)))
      return failure();
  } else if (kind.getValue() == "codegen") {
    step.kind = rt::StepKind::Kernel;
    step.name = callee.getSymName().str();
    auto rows = kernel::get<kernel::ParallelRows>(callee);
    auto block = kernel::get<kernel::ParallelBlock>(callee);
    if (rows && block && block.getInt() > 0) {
      rt::Attribute parallel;
      parallel.key = "parallel";
      parallel.ints.push_back(rows.getInt() / block.getInt());
      step.attributes.push_back(std::move(parallel));
    }
  } else {
    step.kind = rt::StepKind::Library;
    auto library = kernel::get<kernel::Library>(callee);
    if (!library)
      return callee.emitError("library kernel without strata.library");
    step.name = library.str();
    if (auto attrs = kernel::get<kernel::LibraryAttrs>(callee))
      for (NamedAttribute attr : attrs)
        step.attributes.push_back(
            toRuntimeAttribute(attr.getName(), attr.getValue()));
    if (auto accumulates = kernel::get<kernel::Accumulates>(callee))
      planned.accumulates = accumulates.getInt();
  }
  if (auto nodes = kernel::get<kernel::Nodes>(callee))
    for (Attribute node : nodes)
      step.sourceNodes.push_back(cast<StringAttr>(node).str());
  for (Value operand : call.getOperands())
    planned.inputs.push_back(slotOf(operand));
  for (Value result : call.getResults()) {
    FailureOr<int> slot = newSlot(SlotKind::Arena, result, call);
    if (failed(slot))
      return failure();
    planned.outputs.push_back(*slot);
  }
  steps.push_back(std::move(planned));
  return success();
}

/// A launch as the module file's typed table (format 1.6). The attribute's
/// verifier has checked the extents; what fits no 32-bit field is an
/// internal error.
static FailureOr<rt::KernelLaunch> runtimeLaunch(func::FuncOp kernel,
                                                 kernel::LaunchAttr launch) {
  rt::KernelLaunch out;
  auto fits = [](int64_t v) { return v >= 0 && v <= int64_t(UINT32_MAX); };
  bool valid = launch.getGrid().size() == 3 && launch.getBlock().size() == 3 &&
               fits(launch.getShared()) && fits(launch.getPersistent());
  for (size_t k = 0; valid && k < 3; ++k) {
    valid = fits(launch.getGrid()[k]) && fits(launch.getBlock()[k]);
    out.grid[k] = static_cast<uint32_t>(launch.getGrid()[k]);
    out.block[k] = static_cast<uint32_t>(launch.getBlock()[k]);
  }
  if (!valid)
    return kernel.emitError("internal error: kernel ")
           << kernel.getSymName() << "'s launch " << launch
           << " does not fit the module file's 32-bit launch fields";
  out.sharedBytes = static_cast<uint32_t>(launch.getShared());
  // A persistent kernel walks its tiles with a stride of its grid: the
  // runtime launches at most `persistent` blocks per SM.
  out.persistent = static_cast<uint32_t>(launch.getPersistent());
  // The kernel waits for the grids before it at its entry: the runtime may
  // launch it with programmatic dependent launch (docs/runtime.md).
  out.waitsForGrids = launch.getWaitsForGrids();
  // TMA tensor maps the runtime encodes and passes after the outputs.
  out.tensorMaps.assign(launch.getTensorMaps().begin(),
                        launch.getTensorMaps().end());
  return out;
}

/// The launch the gpu stage recorded on a kernel's declaration, as the
/// step's typed launch that the CUDA executor reads.
LogicalResult Planner::addLaunch(func::FuncOp kernel, rt::Step &step) {
  auto launch = kernel::get<kernel::Launch>(kernel);
  if (!launch)
    return kernel.emitError("kernel ")
           << kernel.getSymName() << " has no GPU launch ("
           << kernel::name<kernel::Launch>()
           << "): the module is not at the llvm stage of the cuda target";
  FailureOr<rt::KernelLaunch> cubin = runtimeLaunch(kernel, launch);
  if (failed(cubin))
    return failure();
  step.launch = std::move(*cubin);
  // The portable PTX's own kernel and launch, where they differ from the
  // cubin's (CudaTarget.cpp, recordPortableLaunches).
  if (auto ptxKernel = kernel::get<kernel::PtxKernel>(kernel)) {
    auto ptx = kernel::get<kernel::PtxLaunch>(kernel);
    if (!ptx)
      return kernel.emitError("internal error: kernel ")
             << kernel.getSymName()
             << " names its portable PTX's kernel without its launch";
    FailureOr<rt::KernelLaunch> portable = runtimeLaunch(kernel, ptx);
    if (failed(portable))
      return failure();
    step.ptxKernel = ptxKernel.str();
    step.ptxLaunch = std::move(*portable);
  }
  return success();
}

LogicalResult Planner::addView(Operation *op) {
  int source = slotOf(op->getOperand(0));
  int root = all[source].root;
  // Strings have no arena bytes to view; the partitioner makes their
  // reshapes "string.copy" steps (LibraryStrings.cpp).
  if (all[root].dtype == rt::DType::String)
    return op->emitError("a view of a tensor of strings: strings are copied "
                         "by the runtime's string kernels, which the "
                         "partitioner did not choose (are libraries off?)");
  if (all[root].kind == SlotKind::Input) {
    // Input buffers are bound per run: view a copy made by the plan.
    auto it = inputCopies.find(root);
    if (it == inputCopies.end()) {
      Slot copy = all[root];
      copy.kind = SlotKind::Arena;
      copy.root = all.size();
      all.push_back(copy);
      PlannedStep planned;
      planned.step.kind = rt::StepKind::Library;
      planned.step.name = "copy";
      if (gpu) {
        // The gpu stage generated a copy kernel for each such size.
        std::string name = gpuCopyKernelName(copy.size);
        auto kernel = module.lookupSymbol<func::FuncOp>(name);
        if (!kernel)
          return op->emitError("internal error: no GPU copy kernel ")
                 << name << " for the view of a model input";
        planned.step.kind = rt::StepKind::Kernel;
        planned.step.name = name;
        if (failed(addLaunch(kernel, planned.step)))
          return failure();
      }
      planned.step.sourceNodes.push_back(getNodeName(op));
      planned.inputs.push_back(root);
      planned.outputs.push_back(copy.root);
      steps.push_back(std::move(planned));
      it = inputCopies.insert({root, copy.root}).first;
    }
    root = it->second;
  }
  FailureOr<int> slot = newSlot(all[root].kind, op->getResult(0), op);
  if (failed(slot))
    return failure();
  all[*slot].root = root;
  if (all[root].kind == SlotKind::Constant) {
    all[*slot].bytes = all[root].bytes;
    all[*slot].raw = all[root].raw;
  }
  return success();
}

/// On a GPU target, host steps (strings, the ops on shapes known only at run
/// time) run on the CPU between the GPU's steps, and what they write stays
/// on the host: the CUDA executor copies device buffers to host steps, not
/// back (docs/runtime.md). strata-run-time-shapes runs everything computed
/// from a value-dependent op on the host; a GPU step reading a host step's
/// value (a string cast to numbers) is refused here, naming both nodes,
/// rather than written into a module no session would run.
LogicalResult Planner::checkHostSteps(StringRef target) {
  std::map<int, const PlannedStep *> writer;
  for (const PlannedStep &planned : steps) {
    if (planned.step.isHostKernel()) {
      for (int slot : planned.outputs)
        writer[all[slot].root] = &planned;
      continue;
    }
    for (int slot : planned.inputs) {
      auto found = writer.find(all[slot].root);
      if (found == writer.end())
        continue;
      auto node = [](const PlannedStep &p) {
        return p.step.sourceNodes.empty()
                   ? "step '" + p.step.name + "'"
                   : "ONNX node '" + p.step.sourceNodes.front() + "'";
      };
      return entry.emitError()
             << node(planned) << " runs on the GPU, but reads what "
             << node(*found->second) << " computes on the host ("
             << found->second->step.name << "); the " << target
             << " target copies values from the GPU to host steps, not "
                "back (compile for --target=cpu to run it)";
    }
  }
  return success();
}

/// The input slot whose space the one result of `step` (at position `now`)
/// may take, or -1: the input the step adds onto (PlannedStep::accumulates),
/// when it is a whole arena buffer of the result's size that no later step
/// and no other operand of this step reads.
int Planner::inPlaceInput(const PlannedStep &step, int now) const {
  if (step.accumulates < 0 || step.outputs.size() != 1 ||
      step.accumulates >= static_cast<int>(step.inputs.size()))
    return -1;
  int input = step.inputs[step.accumulates];
  const Slot &in = all[input], &root = all[in.root];
  const Slot &out = all[step.outputs.front()];
  if (root.kind != SlotKind::Arena || root.lastUse != now ||
      out.kind != SlotKind::Arena || out.root != step.outputs.front() ||
      in.size != out.size || root.size != out.size)
    return -1;
  for (auto [i, other] : llvm::enumerate(step.inputs))
    if (static_cast<int>(i) != step.accumulates && all[other].root == in.root)
      return -1;
  return input;
}

void Planner::planArena() {
  // Liveness of roots: the last step reading any view of them.
  for (auto [index, step] : llvm::enumerate(steps))
    for (int slot : step.inputs) {
      Slot &root = all[all[slot].root];
      root.lastUse = std::max(root.lastUse, static_cast<int>(index));
    }
  for (Value v : entry.getBody().front().getTerminator()->getOperands())
    all[all[slotOf(v)].root].lastUse = INT_MAX;

  struct Live {
    uint64_t offset, size;
    int root;
  };
  std::vector<Live> live; // sorted by offset
  for (auto [index, step] : llvm::enumerate(steps)) {
    int now = static_cast<int>(index);
    live.erase(std::remove_if(
                   live.begin(), live.end(),
                   [&](const Live &l) { return all[l.root].lastUse < now; }),
               live.end());
    if (int reused = inPlaceInput(step, now); reused >= 0) {
      // The result takes the space of the input it adds onto, which this
      // step reads last: the library writes in place, without a copy.
      Slot &slot = all[step.outputs.front()];
      auto pos = llvm::find_if(
          live, [&](const Live &l) { return l.root == all[reused].root; });
      slot.offset = pos->offset;
      pos->root = step.outputs.front();
      slot.lastUse = std::max(slot.lastUse, now);
      continue;
    }
    for (int out : step.outputs) {
      Slot &slot = all[out];
      if (slot.kind != SlotKind::Arena || slot.root != out)
        continue;
      uint64_t offset = 0;
      auto pos = live.begin();
      for (; pos != live.end(); ++pos) {
        if (pos->offset >= offset + slot.size && slot.size > 0)
          break;
        offset = std::max(offset, (pos->offset + pos->size + 63) / 64 * 64);
      }
      slot.offset = offset;
      live.insert(pos, Live{offset, slot.size, out});
      // A result nobody reads is still written: keep it until its step ends.
      slot.lastUse = std::max(slot.lastUse, static_cast<int>(index));
    }
  }
}

LogicalResult Planner::run(const CompileOptions &options,
                           const std::vector<uint8_t> &sharedObject,
                           std::vector<uint8_t> &out) {
  for (BlockArgument arg : entry.getArguments())
    if (failed(newSlot(SlotKind::Input, arg, entry)))
      return failure();
  for (Operation &op : entry.getBody().front().without_terminator()) {
    if (auto constant = dyn_cast<graph::ConstantOp>(op)) {
      if (auto strings =
              dyn_cast<DenseStringElementsAttr>(constant.getValue())) {
        FailureOr<int> slot = newSlot(SlotKind::Constant, constant, &op);
        if (failed(slot))
          return failure();
        int64_t count = strings.getNumElements();
        std::vector<std::string> &values = all[*slot].strings;
        values.reserve(count);
        if (strings.isSplat())
          values.assign(count, strings.getSplatValue<StringRef>().str());
        else
          for (StringRef value : strings.getValues<StringRef>())
            values.push_back(value.str());
        continue;
      }
      FailureOr<int> slot = newSlot(SlotKind::Constant, constant, &op);
      if (failed(slot))
        return failure();
      if (ArrayRef<char> raw = rawBytes(constant.getValue()); !raw.empty()) {
        all[*slot].raw = raw;
        continue;
      }
      std::optional<std::vector<uint8_t>> bytes =
          constantBytes(constant.getValue());
      if (!bytes)
        return op.emitError("cannot store this constant in the module");
      all[*slot].bytes = std::move(*bytes);
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (failed(addStepForCall(call)))
        return failure();
      continue;
    }
    if (isViewOp(&op)) {
      if (failed(addView(&op)))
        return failure();
      continue;
    }
    return op.emitError("internal error: the plan cannot run this op "
                        "(partitioning left it outside a kernel)");
  }
  if (gpu && failed(checkHostSteps(options.target)))
    return failure();
  planArena();

  rt::ModuleBuilder builder;
  builder.setTarget(options.target);
  builder.setCode(sharedObject);
  if (gpu) {
    builder.setGpuPtx(gpu->ptx);
    builder.setGpuCubin(gpu->cubin);
    builder.setGpuArch(gpu->arch);
  }
  for (auto [index, slot] : llvm::enumerate(all)) {
    switch (slot.kind) {
    case SlotKind::Input: {
      // An input the module was specialized on (strata.required_value,
      // Specialize.cpp) carries the value a session must be given.
      std::vector<uint8_t> required;
      if (auto value = entry.getArgAttrOfType<ElementsAttr>(
              static_cast<unsigned>(index),
              kernel::name<kernel::RequiredValue>()))
        if (std::optional<std::vector<uint8_t>> bytes = constantBytes(value))
          required = std::move(*bytes);
      slot.buffer =
          builder.addInput(getArgumentName(entry, static_cast<unsigned>(index)),
                           slot.dtype, slot.shape, std::move(required));
      break;
    }
    case SlotKind::Constant:
      slot.buffer =
          slot.dtype == rt::DType::String
              ? builder.addStringConstant(slot.shape, slot.strings)
          : !slot.raw.empty()
              ? builder.addConstantView(
                    slot.dtype, slot.shape,
                    reinterpret_cast<const uint8_t *>(slot.raw.data()),
                    slot.raw.size())
              : builder.addConstant(slot.dtype, slot.shape,
                                    std::move(slot.bytes));
      break;
    case SlotKind::Host:
      slot.buffer = builder.addHostBuffer(slot.dtype, slot.shape);
      break;
    case SlotKind::Arena: {
      const Slot &root = all[slot.root];
      slot.buffer = builder.addArenaBuffer(slot.dtype, slot.shape, root.offset,
                                           root.size);
      break;
    }
    }
  }
  for (PlannedStep &planned : steps) {
    for (int s : planned.inputs)
      planned.step.inputs.push_back(all[s].buffer);
    for (int s : planned.outputs)
      planned.step.outputs.push_back(all[s].buffer);
    builder.addStep(std::move(planned.step));
  }
  for (auto [index, value] :
       llvm::enumerate(entry.getBody().front().getTerminator()->getOperands()))
    builder.addOutput(getResultName(entry, index), all[slotOf(value)].buffer);

  if (auto source = module->getAttrOfType<StringAttr>("graph.source"))
    builder.addMetadata("source", source.str());
  builder.addMetadata("compiler", "strata " STRATA_VERSION_STRING
                                  " (LLVM " LLVM_VERSION_STRING ")");
  if (gpu) {
    builder.addMetadata("gpu_arch", gpu->arch);
    if (!gpu->ptxArch.empty() && gpu->ptxArch != gpu->arch)
      builder.addMetadata("gpu_ptx_arch", gpu->ptxArch);
  } else
    builder.addMetadata("cpu", options.cpu);
  out = builder.finish();
  return success();
}

LogicalResult strata::writeModule(ModuleOp module,
                                  const CompileOptions &options,
                                  const std::vector<uint8_t> &sharedObject,
                                  std::vector<uint8_t> &moduleBytes) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");
  try {
    return Planner(module, entry, nullptr)
        .run(options, sharedObject, moduleBytes);
  } catch (const rt::Error &e) {
    return module.emitError("writing the module failed: ") << e.what();
  }
}

LogicalResult strata::writeGpuModule(ModuleOp module,
                                     const CompileOptions &options,
                                     const GpuCode &code,
                                     std::vector<uint8_t> &moduleBytes) {
  func::FuncOp entry = getEntryFunction(module);
  if (!entry)
    return module.emitError("the module has no entry function");
  try {
    return Planner(module, entry, &code).run(options, {}, moduleBytes);
  } catch (const rt::Error &e) {
    return module.emitError("writing the module failed: ") << e.what();
  }
}
