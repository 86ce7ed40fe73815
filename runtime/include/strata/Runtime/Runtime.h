//===- Runtime.h - The strata runtime API -----------------------*- C++ -*-===//
//
// The runtime loads a compiled module (a FlatBuffers file, see
// runtime/schema/module.fbs and docs/runtime.md), checks it, and runs its
// plan. It links neither LLVM nor MLIR: a machine that only runs models needs
// this library and the vendor libraries its kernels call.
//
// Every failure is reported as an Error whose message names the module file,
// the step or the tensor concerned; the runtime never reads a module buffer
// that flatbuffers::Verifier has not accepted.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_RUNTIME_H
#define STRATA_RUNTIME_RUNTIME_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata::rt {

namespace detail {
class LoadedCode;
class CudaExecutor;
} // namespace detail
struct CudaSessionInfo;

/// Everything the runtime reports goes through this exception.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// An allocation the runtime needed failed (the machine's memory, or a size
/// larger than it). An Error like any other, naming what the memory was for;
/// the C API reports it as STRATA_ERROR_OUT_OF_MEMORY. Nothing is left half
/// done: the module, session or tensor involved stays usable (a session keeps
/// its earlier inputs) and the next request may succeed.
class OutOfMemory : public Error {
public:
  explicit OutOfMemory(const std::string &message) : Error(message) {}
};

/// The module format version this runtime writes; it reads any module of the
/// same major version.
constexpr uint16_t kFormatMajor = 1;
// 1.1: Module.gpu_cubin, gpu_ptx and gpu_arch (CUDA modules).
// 1.2: the String element type, Host buffers, Buffer.strings (string
// constants) and Attribute.strs.
// 1.3: Module.checksum, XXH3-64 of the file's bytes, checked on load.
// 1.4: Host buffers of numbers (value-dependent shapes).
// 1.5: TensorSignature.required_value (inputs specialized on their value).
// 1.6: Step.launch, ptx_kernel and ptx_launch: a GPU kernel's launch as a
// typed table, no longer step attributes (CUDA modules before 1.6 are
// refused with a message that says to compile them again).
constexpr uint16_t kFormatMinor = 6;

//===----------------------------------------------------------------------===//
// Element types and tensors
//===----------------------------------------------------------------------===//

/// Element types; the numbering matches fb::ElementType in module.fbs.
enum class DType : uint8_t {
  F32 = 0,
  F64,
  F16,
  BF16,
  I1,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  /// Strings (ONNX STRING; UTF-8 by convention). A tensor of strings owns a
  /// std::vector<std::string>, not bytes: it has no byte size or raw data,
  /// and its buffers live outside the arena (BufferKind::Host).
  String
};
constexpr unsigned kNumDTypes = 14;

/// Bytes per element (i1 is stored as one byte per element). Throws Error
/// for String, whose elements have no fixed size.
size_t dtypeSize(DType type);
/// The ONNX-style spelling: "f32", "bf16", "i1", ...
const char *dtypeName(DType type);
/// "[2, 3, ?]" with ? for dynamic (-1) dimensions.
std::string shapeToString(const std::vector<int64_t> &shape);
/// A small tensor's values (its raw bytes) for a message: "4", or "[0.5,
/// 2]" for a tensor of rank 1 or more ("(N bytes)" for types printed no
/// other way).
std::string valuesToString(DType dtype, const std::vector<int64_t> &shape,
                           const std::vector<uint8_t> &bytes);
/// The number of elements of a static shape; throws Error for negative
/// dimensions or when the count overflows.
int64_t numElements(const std::vector<int64_t> &shape);

/// Whether elements of `type` may be accessed as T. f16 and bf16 have no C++
/// type here, so they are accessed as their raw uint16_t bits.
template <typename T> constexpr bool dtypeHolds(DType type) {
  if constexpr (std::is_same_v<T, float>)
    return type == DType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return type == DType::F64;
  else if constexpr (std::is_same_v<T, bool>)
    return type == DType::I1;
  else if constexpr (std::is_same_v<T, int8_t>)
    return type == DType::I8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return type == DType::I16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return type == DType::I32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return type == DType::I64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return type == DType::U8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return type == DType::U16 || type == DType::F16 || type == DType::BF16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return type == DType::U32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return type == DType::U64;
  else if constexpr (std::is_same_v<T, std::string>)
    return type == DType::String;
  else
    static_assert(!std::is_same_v<T, T>, "no strata element type for T");
}

namespace detail {
[[noreturn]] void throwTypeMismatch(DType actual, const char *requested);
/// The Error for asking a tensor of strings for its bytes (`what`).
[[noreturn]] void throwStringBytes(const char *what);
template <typename T> const char *cTypeName() {
  if constexpr (std::is_same_v<T, float>)
    return "float";
  else if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_same_v<T, std::string>)
    return "std::string";
  else if constexpr (std::is_signed_v<T>)
    return "a signed integer";
  else
    return "an unsigned integer";
}

/// Memory from posix_memalign, 64-byte aligned so that vector loads of any
/// width and cache lines line up; freed with free().
struct AlignedFree {
  void operator()(void *p) const;
};
using AlignedPtr = std::unique_ptr<uint8_t, AlignedFree>;
/// Throws OutOfMemory (naming `what` and the size) when the memory is not
/// there. `zero` fills it with zero bytes; callers that overwrite it anyway
/// skip the cost.
AlignedPtr allocateAligned(size_t bytes, const std::string &what,
                           bool zero = true);
/// Writes a module buffer's checksum (format 1.3, Module.checksum) from its
/// bytes: the builder seals every module it writes, and tests that edit a
/// module's bytes on purpose reseal it to reach the loader's other checks.
/// False, leaving the bytes alone, when the buffer fails FlatBuffers
/// verification or has no checksum field.
bool sealModule(std::vector<uint8_t> &bytes);
} // namespace detail

/// A non-owning view of a tensor: what kernels receive. For strings, `data`
/// points at numElements() std::string objects (as<std::string>()).
struct TensorView {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  void *data = nullptr;

  int64_t numElements() const { return rt::numElements(shape); }
  size_t byteSize() const { return numElements() * dtypeSize(dtype); }
  template <typename T> T *as() const {
    if (!dtypeHolds<T>(dtype))
      detail::throwTypeMismatch(dtype, detail::cTypeName<T>());
    return static_cast<T *>(data);
  }
};

/// A tensor that owns its (64-byte aligned) storage. Copies are deep. A
/// tensor of strings owns a std::vector<std::string> instead: data<
/// std::string>() and strings() reach it, byteSize() and rawData() throw.
class Tensor {
public:
  Tensor() = default;
  /// A tensor of `shape` (every dimension static) filled with zero bytes
  /// (empty strings for String).
  static Tensor zeros(DType dtype, std::vector<int64_t> shape);
  /// The same without filling the numbers: for storage the caller writes
  /// whole before anything reads it (strings are still empty).
  static Tensor uninitialized(DType dtype, std::vector<int64_t> shape);
  /// Makes this tensor a `dtype` tensor of `shape` in the storage it has,
  /// when that storage is large enough (its numbers are then whatever they
  /// were); returns false, changing nothing, when it is not or the tensor
  /// holds strings. Executors keep a run-time-shaped buffer's storage across
  /// runs so: a fresh large allocation costs a page fault per page.
  bool reuseStorageFor(DType dtype, const std::vector<int64_t> &shape);
  /// A tensor of strings; `values` has one string per element (row-major).
  static Tensor fromStrings(std::vector<int64_t> shape,
                            std::vector<std::string> values);
  /// A tensor holding `values`, whose C++ type must match `dtype`.
  template <typename T>
  static Tensor fromValues(DType dtype, std::vector<int64_t> shape,
                           const std::vector<T> &values) {
    Tensor t = zeros(dtype, std::move(shape));
    if (static_cast<int64_t>(values.size()) != t.numElements())
      throw Error("Tensor::fromValues: " + std::to_string(values.size()) +
                  " values for shape " + shapeToString(t.shape()));
    T *out = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i)
      out[i] = values[i];
    return t;
  }

  Tensor(const Tensor &other);
  Tensor &operator=(const Tensor &other);
  Tensor(Tensor &&) noexcept = default;
  Tensor &operator=(Tensor &&) noexcept = default;

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numElements() const { return numElements_; }
  /// Throws Error for strings (their elements have no fixed size).
  size_t byteSize() const { return numElements_ * dtypeSize(dtype_); }

  /// The bytes; throws Error for strings, which are not bytes.
  void *rawData() {
    if (dtype_ == DType::String)
      detail::throwStringBytes("rawData()");
    return storage_.get();
  }
  const void *rawData() const { return const_cast<Tensor *>(this)->rawData(); }
  /// Typed access; throws Error when T does not match the element type.
  template <typename T> T *data() {
    if (!dtypeHolds<T>(dtype_))
      detail::throwTypeMismatch(dtype_, detail::cTypeName<T>());
    if constexpr (std::is_same_v<T, std::string>)
      return strings_.data();
    else
      return reinterpret_cast<T *>(storage_.get());
  }
  template <typename T> const T *data() const {
    return const_cast<Tensor *>(this)->data<T>();
  }
  /// The elements of a tensor of strings; throws Error for other types.
  std::vector<std::string> &strings();
  const std::vector<std::string> &strings() const;
  TensorView view() const {
    void *data =
        dtype_ == DType::String
            ? static_cast<void *>(const_cast<std::string *>(strings_.data()))
            : static_cast<void *>(storage_.get());
    return TensorView{dtype_, shape_, data};
  }

private:
  static Tensor allocate(DType dtype, std::vector<int64_t> shape, bool zero);

  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  int64_t numElements_ = 0;
  /// The bytes storage_ holds (at least byteSize()).
  size_t capacity_ = 0;
  detail::AlignedPtr storage_;
  std::vector<std::string> strings_;
};

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

/// A model input or output as the caller sees it.
struct TensorSignature {
  std::string name;
  DType dtype = DType::F32;
  /// -1 marks a dynamic dimension.
  std::vector<int64_t> shape;
  /// The buffer that holds the tensor.
  uint32_t buffer = 0;
  /// Inputs only (format 1.5): when not empty, the bytes the input must
  /// hold. The compiler specialized the module on this value because a
  /// shape depends on it (docs/compiler.md, "Values that set shapes");
  /// Session::setInput refuses any other.
  std::vector<uint8_t> requiredValue;

  /// The bytes of a tensor of this signature; for static shapes only.
  size_t byteSize() const {
    return static_cast<size_t>(numElements(shape)) * dtypeSize(dtype);
  }
};

/// Host (format 1.2): a tensor that the session holds outside the arena;
/// its -1 dimensions are set at run time by the library step writing it.
/// Strings (1.2) always live there; from 1.4 a host buffer may hold numbers
/// of any type too (outputs whose shape depends on values: NonZero, Unique,
/// ...). Only library kernels read or write host buffers of numbers.
enum class BufferKind : uint8_t { Arena = 0, Constant, Input, Host };

struct BufferInfo {
  BufferKind kind = BufferKind::Arena;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Arena buffers: where they live in the arena and the bytes reserved.
  uint64_t offset = 0;
  uint64_t size = 0;
  /// Constant buffers: the bytes, in place in the module (64-byte aligned).
  const uint8_t *data = nullptr;
  size_t dataSize = 0;
  /// Constant buffers of strings: the elements, row-major.
  std::vector<std::string> strings;
};

/// A step attribute. Scalars are one-element lists.
struct Attribute {
  std::string key;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::string str;
  /// A list of strings (format 1.2).
  std::vector<std::string> strs;
};

enum class StepKind : uint8_t { Kernel = 0, Library };

/// Format 1.6: how a generated GPU kernel is launched (fb::KernelLaunch).
/// The loader checks the extents and the field sizes; what depends on the
/// device and on the step's buffers is checked by the CUDA executor.
struct KernelLaunch {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedBytes = 0;
  /// Blocks per SM of a persistent kernel (1 to 64); 0: not persistent.
  uint32_t persistent = 0;
  /// The kernel waits for the grids before it (programmatic dependent
  /// launch).
  bool waitsForGrids = false;
  /// TMA tensor maps, 7 numbers each (docs/runtime.md).
  std::vector<int64_t> tensorMaps;
};

struct Step {
  StepKind kind = StepKind::Library;
  std::string name;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  std::vector<Attribute> attributes;
  std::vector<std::string> sourceNodes;
  /// Format 1.6, the generated kernels of GPU modules: the launch, and the
  /// portable PTX's own kernel and launch where they differ from the
  /// cubin's (both or neither).
  std::optional<KernelLaunch> launch;
  std::string ptxKernel;
  std::optional<KernelLaunch> ptxLaunch;

  /// "step 3 ('add.f32', from ONNX node 'Add_0')", for error messages.
  std::string describe(size_t index) const;
  /// Whether it is one of the runtime's host kernels ("string.*" for
  /// strings, "host.*" for results whose shape depends on values), which
  /// run on the host whatever the module's target.
  bool isHostKernel() const;
};

/// A loaded and validated module. Immutable; sessions share it.
class Module {
public:
  /// Reads, verifies and validates a module file; throws Error naming the
  /// file and what is wrong with it.
  static std::shared_ptr<const Module> load(const std::string &path);
  /// The same for bytes in memory; `name` stands for the file in messages.
  static std::shared_ptr<const Module>
  loadFromMemory(std::vector<uint8_t> bytes, std::string name);

  const std::string &name() const { return name_; }
  uint16_t versionMajor() const { return major_; }
  uint16_t versionMinor() const { return minor_; }
  const std::string &target() const { return target_; }
  const std::vector<TensorSignature> &inputs() const { return inputs_; }
  const std::vector<TensorSignature> &outputs() const { return outputs_; }
  const std::vector<BufferInfo> &buffers() const { return buffers_; }
  uint64_t arenaSize() const { return arenaSize_; }
  const std::vector<Step> &steps() const { return steps_; }
  /// The generated kernels' machine code, in place in the module.
  const uint8_t *code() const { return code_; }
  size_t codeSize() const { return codeSize_; }
  const std::vector<std::pair<std::string, std::string>> &metadata() const {
    return metadata_;
  }
  /// The value of metadata `key`, or nullptr.
  const std::string *metadataValue(const std::string &key) const;

  /// CUDA modules (target "cuda"): the kernels as a cubin (an ELF image for
  /// one GPU architecture, in place in the module; nullptr when absent), as
  /// PTX (nullptr when absent; NUL-terminated, in place) and the
  /// architecture the cubin was built for ("sm_90a"; empty when not given).
  const uint8_t *gpuCubin() const { return gpuCubin_; }
  size_t gpuCubinSize() const { return gpuCubinSize_; }
  const char *gpuPtx() const { return gpuPtx_; }
  size_t gpuPtxSize() const { return gpuPtxSize_; }
  const std::string &gpuArch() const { return gpuArch_; }

private:
  friend class Session;
  Module() = default;
  void parse();
  /// code() loaded into the process (see CodeLoader.cpp): loaded by the
  /// first session that needs it, shared by the module's sessions and
  /// unloaded when the last of them is gone. Throws Error naming the module.
  std::shared_ptr<detail::LoadedCode> loadCode() const;

  std::string name_;
  /// The file's bytes, 64-byte aligned so that constants are too.
  detail::AlignedPtr bytes_;
  size_t numBytes_ = 0;
  uint16_t major_ = 0, minor_ = 0;
  std::string target_;
  std::vector<TensorSignature> inputs_, outputs_;
  std::vector<BufferInfo> buffers_;
  uint64_t arenaSize_ = 0;
  std::vector<Step> steps_;
  const uint8_t *code_ = nullptr;
  size_t codeSize_ = 0;
  std::vector<std::pair<std::string, std::string>> metadata_;
  const uint8_t *gpuCubin_ = nullptr;
  size_t gpuCubinSize_ = 0;
  const char *gpuPtx_ = nullptr;
  size_t gpuPtxSize_ = 0;
  std::string gpuArch_;
  mutable std::mutex codeMutex_;
  mutable std::weak_ptr<detail::LoadedCode> loadedCode_;
};

/// Writes modules: used by the compiler and by tests. It does not validate
/// (so that tests can write broken modules); Module::load does.
class ModuleBuilder {
public:
  ModuleBuilder();
  ~ModuleBuilder();
  ModuleBuilder(ModuleBuilder &&) noexcept;
  ModuleBuilder &operator=(ModuleBuilder &&) noexcept;

  void setVersion(uint16_t major, uint16_t minor);
  void setTarget(std::string target);
  /// Adds an Input buffer and the input signature that refers to it.
  uint32_t addInput(std::string name, DType dtype, std::vector<int64_t> shape,
                    std::vector<uint8_t> requiredValue = {});
  /// Adds an output signature for `buffer`, taking the buffer's type and
  /// shape (f32 and rank 0 when there is no such buffer).
  void addOutput(std::string name, uint32_t buffer);
  /// Adds an arena buffer placed after the existing ones (64-byte aligned)
  /// and grows the arena to hold it.
  uint32_t addArenaBuffer(DType dtype, std::vector<int64_t> shape);
  /// Adds an arena buffer at a given place (for a memory planner that reuses
  /// space); the arena grows to cover it.
  uint32_t addArenaBuffer(DType dtype, std::vector<int64_t> shape,
                          uint64_t offset, uint64_t size);
  /// Adds a constant with its bytes.
  uint32_t addConstant(DType dtype, std::vector<int64_t> shape,
                       std::vector<uint8_t> bytes);
  /// Adds a constant whose `size` bytes at `data` are borrowed, not copied:
  /// they must stay alive and unchanged until finish() or write() returns
  /// (the compiler's constants, which its MLIR context holds, so that a
  /// model's hundreds of megabytes of weights are copied once, into the
  /// module, rather than twice).
  uint32_t addConstantView(DType dtype, std::vector<int64_t> shape,
                           const uint8_t *data, size_t size);
  /// Adds a constant of strings (one per element, row-major).
  uint32_t addStringConstant(std::vector<int64_t> shape,
                             std::vector<std::string> values);
  /// Either of the above, from a tensor.
  uint32_t addConstant(const Tensor &value);
  /// Adds a Host buffer of strings; -1 dimensions are set at run time by
  /// the step that writes it.
  uint32_t addStringBuffer(std::vector<int64_t> shape);
  /// Adds a Host buffer of any element type (format 1.4 for numbers).
  uint32_t addHostBuffer(DType dtype, std::vector<int64_t> shape);
  /// Adds a raw buffer record, for tests that need an inconsistent one.
  uint32_t addBuffer(BufferInfo info, std::vector<uint8_t> constantBytes = {});
  void setArenaSize(uint64_t size);
  void addStep(Step step);
  void setCode(std::vector<uint8_t> code);
  void addMetadata(std::string key, std::string value);
  /// CUDA modules: the cubin, the PTX and the cubin's architecture
  /// ("sm_90a"); empty values are left out of the module.
  void setGpuCubin(std::vector<uint8_t> cubin);
  void setGpuPtx(std::string ptx);
  void setGpuArch(std::string arch);

  /// The module's bytes.
  std::vector<uint8_t> finish() const;
  /// Writes finish() to `path`; throws Error when the file cannot be written.
  void write(const std::string &path) const;

private:
  struct State;
  std::unique_ptr<State> state_;
};

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

/// The threads of the kernels' parallel loops: OpenMP's, the same threads
/// that run oneDNN's library steps (docs/runtime.md, "Threads"). Between
/// the steps of a run they stay awake for a short spin, then sleep.
class ThreadPool {
public:
  /// `threads` counts the calling thread: 1 runs everything inline; 0 means
  /// one per hardware thread.
  explicit ThreadPool(unsigned threads);
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned numThreads() const { return threads_; }

  /// Calls fn(b, e) on chunks [b, e) of at most `grain` indices that together
  /// cover [begin, end) exactly once, and returns when all are done. The
  /// first exception a chunk throws is rethrown here (the remaining chunks
  /// are skipped). Calls from inside a chunk run inline. Calls from several
  /// threads at once each get a team of their own.
  void parallelFor(int64_t begin, int64_t end, int64_t grain,
                   const std::function<void(int64_t, int64_t)> &fn);

private:
  unsigned threads_;
};

/// The base of what a library kernel keeps for one step between the runs of
/// a session (a oneDNN primitive, packed weights, ...): see
/// KernelContext::state. The session owns it and destroys it with itself.
class KernelState {
public:
  /// Defined in the library, which thus holds the vtable and type info that
  /// KernelContext::state's dynamic_cast relies on.
  virtual ~KernelState();
  /// What the kernel chose at run time for its step, for profiles (`strata
  /// bench --profile`): the implementation and why ("winograd: timed ...");
  /// "" when there was no choice.
  virtual std::string describe() const { return ""; }
};

/// What a library kernel gets for one step.
class KernelContext {
public:
  /// `state` is the step's slot in its session; without one, state() lives
  /// only as long as the context.
  KernelContext(const Step &step, size_t index, const Module &module,
                std::vector<TensorView> inputs, std::vector<TensorView> outputs,
                ThreadPool &pool, std::unique_ptr<KernelState> *state = nullptr)
      : step_(step), index_(index), module_(module), inputs_(std::move(inputs)),
        outputs_(std::move(outputs)), pool_(pool),
        stateSlot_(state ? state : &localState_) {}
  // The state slot may point into the context itself.
  KernelContext(const KernelContext &) = delete;
  KernelContext &operator=(const KernelContext &) = delete;

  size_t numInputs() const { return inputs_.size(); }
  size_t numOutputs() const { return outputs_.size(); }
  /// Kernels must not write their inputs (they may be constants).
  const TensorView &input(size_t i) const;
  const TensorView &output(size_t i) const;
  ThreadPool &pool() const { return pool_; }
  const Step &step() const { return step_; }
  /// The module and the step's index in it: a kernel that runs other
  /// kernels (host.loop's body) gives them contexts of their own.
  const Module &module() const { return module_; }
  size_t stepIndex() const { return index_; }
  /// Whether input `i` is a module constant: its bytes never change, so a
  /// kernel may keep work derived from them (reordered weights) in state().
  bool inputIsConstant(size_t i) const;

  /// The step's state: a T (derived from KernelState) that the session keeps
  /// from one run to the next; value-initialized on first use. A step has one
  /// state, so a kernel uses one T; asking for another type is an Error.
  template <typename T> T &state() {
    static_assert(std::is_base_of_v<KernelState, T>,
                  "kernel state must derive from KernelState");
    std::unique_ptr<KernelState> &slot = *stateSlot_;
    if (!slot)
      slot = std::make_unique<T>();
    if (T *typed = dynamic_cast<T *>(slot.get()))
      return *typed;
    throw error("keeps kernel state of another type");
  }

  bool hasAttr(const std::string &key) const;
  /// These throw Error naming the step when the attribute is missing or
  /// has another kind.
  int64_t attrInt(const std::string &key) const;
  const std::vector<int64_t> &attrInts(const std::string &key) const;
  double attrFloat(const std::string &key) const;
  const std::vector<double> &attrFloats(const std::string &key) const;
  const std::string &attrString(const std::string &key) const;
  /// A list of strings (an attribute without values is an empty list).
  const std::vector<std::string> &attrStrings(const std::string &key) const;

  /// Gives output `i` its storage for `shape` and returns its view, to be
  /// filled by the kernel, which must write every element. An output the
  /// executor bound to host storage (bindHostOutput: a Host buffer) gets a
  /// new tensor of `shape`, not zero-filled (as an arena buffer is not),
  /// which must keep the rank and the static dimensions (a -1
  /// dimension takes any size >= 0). Any other output (the arena) must have
  /// exactly `shape` and keeps its storage. Throws Error naming the step
  /// when the shape does not fit, OutOfMemory when the tensor cannot be
  /// allocated. The view stays valid until the output is given storage
  /// again.
  TensorView &allocateOutput(size_t i, std::vector<int64_t> shape);
  /// Writes output `i`, a tensor of strings: `values` (row-major) of
  /// `shape`, with the rules of allocateOutput.
  void setStringOutput(size_t i, std::vector<int64_t> shape,
                       std::vector<std::string> values);
  /// For executors: the tensor that holds output `i` (a Host buffer), so
  /// that allocateOutput and setStringOutput can give it a shape decided at
  /// run time.
  void bindHostOutput(size_t i, Tensor *storage);

  /// An Error naming the module and the step: for kernels' own checks.
  Error error(const std::string &message) const;

private:
  const Attribute &attr(const std::string &key) const;

  const Step &step_;
  size_t index_;
  const Module &module_;
  std::vector<TensorView> inputs_, outputs_;
  /// The shape output `i` takes (allocateOutput's checks); throws Error.
  void checkOutputShape(size_t i, const std::vector<int64_t> &shape) const;
  /// The tensor bound to output `i`, or nullptr.
  Tensor *hostOutput(size_t i) const;

  /// bindHostOutput's tensors, by output index (null where not bound).
  std::vector<Tensor *> hostOutputs_;
  ThreadPool &pool_;
  std::unique_ptr<KernelState> localState_;
  std::unique_ptr<KernelState> *stateSlot_;
};

using KernelFn = void (*)(KernelContext &);

/// Adds (or replaces) a library kernel. Thread-safe; sessions resolve names
/// when they are created.
void registerKernel(const std::string &name, KernelFn fn);
/// The kernel registered under `name`, or nullptr.
KernelFn lookupKernel(const std::string &name);

/// A generated kernel (a Kernel step): an exported function of Module::code()
/// that gets the data pointers of the step's inputs followed by its outputs
/// and computes the part [begin, end) of its `parallel` range
/// (docs/runtime.md).
using GeneratedKernelFn = void (*)(void *const *buffers, int64_t begin,
                                   int64_t end);

struct SessionOptions {
  /// Threads of the session's pool, counting the caller (0: one per hardware
  /// thread).
  unsigned threads = 1;
  /// Time every step (steady clock around each call); see stepTimes().
  /// CUDA modules time each step with CUDA events instead and synchronize
  /// after it, without a CUDA graph, so that a failing kernel is named.
  bool profile = false;

  /// Record when each step of each run starts and how long it takes (see
  /// traceEvents(); implies `profile`).
  bool trace = false;

  /// Options for modules whose target is "cuda" (docs/runtime.md, "The CUDA
  /// executor"); other modules ignore them.
  struct Cuda {
    /// The CUDA device ordinal to run on.
    int device = 0;
    /// Capture the steps into a CUDA graph on the first run and replay it on
    /// later runs (false: launch every kernel on every run).
    bool graphs = true;
    /// Stage inputs and outputs in page-locked host memory, so that the
    /// copies between host and device are asynchronous DMA transfers.
    bool pinnedStaging = true;

    // What follows is for measuring and for pinning what a session runs.
    // Unset, each takes its environment variable (read when the session is
    // made), else the default; set, it wins over the environment.

    /// Time cuBLASLt's candidate algorithms for each large product (and
    /// cuDNN's execution plans for each large convolution) when the session
    /// is made, and keep the fastest; false keeps the libraries' heuristic
    /// pick, the same in every session (a deployment that must run what was
    /// tested). STRATA_CUBLASLT_TUNE (0: off); default on.
    std::optional<bool> tuneLibrary;
    /// Products and convolutions of fewer operations keep the heuristic's
    /// pick: STRATA_CUBLASLT_TUNE_MIN_FLOPS; default 1e9.
    std::optional<double> tuneMinFlops;
    /// Candidates asked of cuBLASLt's heuristic per product (1 to 64):
    /// STRATA_CUBLASLT_CANDIDATES; default 32.
    std::optional<int> libraryCandidates;
    /// A product whose output rows are not 16-byte aligned is split into
    /// aligned parts from this many operations:
    /// STRATA_CUBLASLT_SPLIT_MIN_FLOPS; default 4e9.
    std::optional<double> splitMinFlops;
    /// Such a split's classes of rows as one batched call (false: a call
    /// each): STRATA_CUBLASLT_CLASS_BATCH (0: off); default on.
    std::optional<bool> classBatch;
    /// At most this many blocks of a persistent kernel (0: as many as are
    /// resident): STRATA_CUDA_PERSISTENT_BLOCKS; default 0.
    std::optional<unsigned> persistentBlocks;
    /// Programmatic dependent launch where the GPU has it (sm_90 on):
    /// STRATA_CUDA_PDL (0: off); default on.
    std::optional<bool> gridDependency;
    /// Load the module's portable PTX even where its cubin would run (the
    /// path later GPUs take): STRATA_CUDA_IMAGE=ptx; default off.
    std::optional<bool> ptxOnly;
    /// A file of cuBLASLt algorithms to run instead of choosing them, as a
    /// session that chose them wrote it (CudaSessionInfo::libraryChoices;
    /// docs/runtime.md, "Pinning cuBLASLt's choices"), so that a deployment
    /// runs what was tested: STRATA_CUBLASLT_CHOICES; default none. A
    /// choice that does not fit its step is an Error naming both.
    std::optional<std::string> libraryChoices;

    /// These options with every unset one taken from its environment
    /// variable or its default; throws Error naming a variable whose value
    /// is not what it should be.
    Cuda resolved() const;
  } cuda;
};

/// One step of one run, as SessionOptions::trace records it: seconds since
/// the session was made. CPU steps are timed on the host around the call;
/// CUDA steps by CUDA events around each, placed one after the other from
/// the run's start (the profiled run synchronizes after every step).
struct StepEvent {
  uint32_t run = 0;
  uint32_t step = 0;
  double start = 0;
  double duration = 0;
};

/// Runs one module: owns the arena, the bound inputs and the outputs of the
/// last run. Not thread-safe; use one session per concurrent caller.
class Session {
public:
  /// Loads the module's code when it has Kernel steps, resolves every step's
  /// kernel and allocates the arena; throws Error naming the step whose
  /// kernel is unknown or missing.
  explicit Session(std::shared_ptr<const Module> module,
                   SessionOptions options = {});
  ~Session();

  const Module &module() const { return *module_; }

  /// Binds an input (the tensor is copied); throws Error when its element
  /// type or shape does not fit the signature.
  void setInput(const std::string &name, const Tensor &tensor);
  void setInput(size_t index, const Tensor &tensor);
  /// The same, taking the tensor over instead of copying it.
  void setInput(size_t index, Tensor &&tensor);
  /// Binds an input to memory the caller owns, without a copy: run() reads
  /// `view.data` in place, so it must hold the input, unchanged, until the
  /// input is set again or the session is destroyed. Memory not aligned to
  /// its element type, strings and CUDA sessions (which upload inputs) are
  /// copied as setInput copies. Throws Error as setInput does.
  void setInputView(size_t index, const TensorView &view);
  void setInputView(const std::string &name, const TensorView &view);
  /// Forgets input `index` (and the memory a view bound): run() refuses to
  /// start until it is set again.
  void unsetInput(size_t index);
  /// Has every run write output `index` into memory the caller owns (no
  /// tensor of the session's, no copy beyond the one into `view`): `view`
  /// must have the output's element type and its static shape, and stay
  /// valid until the output is unbound or bound again or the session is
  /// destroyed. output(index) then refuses: the caller holds the values.
  /// Strings and outputs whose shape is set at run time cannot be bound.
  /// Throws Error naming the output.
  void setOutputView(size_t index, const TensorView &view);
  void setOutputView(const std::string &name, const TensorView &view);
  /// Goes back to a tensor of the session's for output `index`.
  void unsetOutputView(size_t index);
  /// CUDA sessions: binds input `index` to device memory the caller owns,
  /// `address` (a CUdeviceptr valid in the primary context of the session's
  /// device, where PyTorch's and CuPy's allocations live) holding the input
  /// as `dtype` and `shape` (checked as setInput checks them). Each run
  /// copies it into the session's buffer device to device on the session's
  /// stream: no copy through the host. Whatever wrote it must have finished
  /// before run() (the caller synchronizes its stream). Unbound as a view is
  /// (unsetInput, or setting the input again). Throws Error for a CPU
  /// session and for an input whose value sets a shape (checked on the
  /// host).
  void setInputDevice(size_t index, DType dtype,
                      const std::vector<int64_t> &shape, uint64_t address);
  /// CUDA sessions: each run copies output `index` into device memory the
  /// caller owns (`address`, as for setInputDevice; the output's element
  /// type and static shape) device to device; run() returns once it is
  /// written. output(index) then refuses, as for setOutputView, and
  /// unsetOutputView unbinds it. Throws Error as setOutputView does, and
  /// for a CPU session.
  void setOutputDevice(size_t index, uint64_t address);
  /// The index of input `name`; throws Error naming the inputs when the
  /// module has no such input. Likewise for outputs.
  size_t inputIndex(const std::string &name) const;
  size_t outputIndex(const std::string &name) const;
  /// Runs the steps in order; every input must have been set.
  void run();
  /// An output of the last run.
  /// With SessionOptions::profile: the seconds each step has taken, summed
  /// over all runs so far (indexed like Module::steps()); empty otherwise.
  const std::vector<double> &stepTimes() const { return stepTimes_; }
  /// What step `index`'s kernel chose when it ran (KernelState::describe):
  /// "" for a step that has not run, or made no choice.
  std::string stepChoice(size_t index) const;
  /// With SessionOptions::trace: every step of every run so far (cleared by
  /// clearTrace(), as after warm-up runs); empty otherwise.
  const std::vector<StepEvent> &traceEvents() const { return trace_; }
  void clearTrace() { trace_.clear(); }
  const Tensor &output(const std::string &name) const;
  const Tensor &output(size_t index) const;

private:
  friend CudaSessionInfo cudaSessionInfo(const Session &session);
  friend std::vector<double> cudaTimeRuns(Session &session, int runs);

  /// The constructor's work, whose failed allocations it reports.
  void create(const SessionOptions &options);
  /// run()'s parts on the CPU: one step, then the copies of the outputs.
  void runStep(size_t index);
  void collectOutputs();
  /// Checks a tensor (its element type, shape and, for strings, elements)
  /// against input `index`'s signature.
  void checkInput(size_t index, const TensorView &tensor) const;
  /// Marks input `index` set and points its buffer at `view` (the bound
  /// tensor's, or the caller's memory).
  void bindInput(size_t index);
  void bindInput(size_t index, const TensorView &view);

  void runGenerated(size_t index);

  std::shared_ptr<const Module> module_;
  ThreadPool pool_;
  std::shared_ptr<detail::LoadedCode> code_;
  detail::AlignedPtr arena_;
  /// Per step: the library kernel (Library steps) or the generated function,
  /// its `parallel` extent and its buffers' pointers (Kernel steps).
  std::vector<KernelFn> kernels_;
  std::vector<GeneratedKernelFn> generated_;
  std::vector<int64_t> parallel_;
  std::vector<std::vector<void *>> pointers_;
  /// Library kernels' KernelContext::state, one slot per step.
  std::vector<std::unique_ptr<KernelState>> states_;
  std::vector<TensorView> views_;
  std::vector<Tensor> inputs_;
  std::vector<bool> inputSet_;
  /// Host buffers (strings, and numbers whose shape is set at run time),
  /// by buffer id; empty tensors for the others.
  std::vector<Tensor> hostBuffers_;
  /// Per buffer, during a run: whether the step writing it was skipped (a
  /// branch of a run-time If that the run did not take).
  std::vector<uint8_t> skipped_;
  std::vector<Tensor> outputs_;
  /// Per output: the caller's memory it is written into
  /// (setOutputView), or nullptr.
  std::vector<void *> outputTargets_;
  /// Per input and output: the caller's device memory it is read from or
  /// written into (setInputDevice, setOutputDevice), or 0.
  std::vector<uint64_t> inputDevice_, outputDevice_;
  /// Output `index`'s signature; throws Error when there is no such output.
  const TensorSignature &outputSignature(size_t index) const;
  /// Checks that output `index` may be written into `dtype`/`shape` memory
  /// of the caller's (setOutputView, setOutputDevice); throws Error.
  void checkOutputTarget(size_t index, DType dtype,
                         const std::vector<int64_t> &shape, bool null) const;
  /// outputTargets_ as the last run found it: output() refuses the outputs
  /// it wrote into the caller's memory.
  std::vector<void *> outputsInCaller_;
  bool ran_ = false;
  bool profile_ = false;
  std::vector<double> stepTimes_;
  bool tracing_ = false;
  uint32_t runs_ = 0;
  std::chrono::steady_clock::time_point created_;
  std::vector<StepEvent> trace_;
  /// Modules whose target is "cuda": the CUDA executor (lib/cuda), which
  /// then owns the device side; the members above hold the host inputs and
  /// outputs.
  std::unique_ptr<detail::CudaExecutor> cuda_;
};

} // namespace strata::rt

#endif // STRATA_RUNTIME_RUNTIME_H
