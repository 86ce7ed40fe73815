//===- CublasLt.cpp - cuBLASLt matrix products, loaded at run time -*- C++
//-*-===//
//
// Loading cuBLASLt (as CudaDriver.cpp loads the driver: dlopen on first use,
// the handle never closed) and running the "cublaslt.matmul" steps.
//
// Row-major operands in a column-major library: a row-major [R, C] matrix is
// the column-major [C, R] matrix with the same bytes, its transpose. So the
// row-major D = op(A) op(B) is computed as the column-major
// D^T = op(B)^T op(A)^T: cuBLASLt's first operand is the step's B and its
// second the step's A, each described as stored (rows and columns swapped)
// with the transposition flag the step's trans_a / trans_b gives. D^T has N
// rows, so cuBLASLt's bias vector (one value per row of its D) is the
// model's bias over N, as ONNX's Gemm and MatMul + Add broadcast it.
//
//===----------------------------------------------------------------------===//

#include "CublasLt.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace strata::rt::cuda {

namespace {

struct Loaded {
  BlasLt lt;
  /// Empty when the library is usable; otherwise the message to throw.
  std::string error;
};

Loaded load() {
  Loaded out;
  std::vector<std::string> candidates;
  if (const char *path = std::getenv("STRATA_CUBLASLT"); path && *path)
    candidates.push_back(path);
  candidates.push_back("libcublasLt.so.13");
  candidates.push_back("libcublasLt.so.12");
  for (const char *var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char *dir = std::getenv(var); dir && *dir)
      for (const char *so : {"libcublasLt.so.13", "libcublasLt.so.12"})
        candidates.push_back(std::string(dir) + "/lib64/" + so);
  for (const char *so : {"libcublasLt.so.13", "libcublasLt.so.12"})
    candidates.push_back(std::string("/usr/local/cuda/lib64/") + so);

  std::string tried;
  void *library = nullptr;
  for (const std::string &candidate : candidates) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      out.lt.path = candidate;
      break;
    }
    const char *why = dlerror();
    tried += "\n  " + candidate + ": " + (why ? why : "dlopen failed");
  }
  if (!library) {
    out.error = "strata: the module's cublaslt.matmul steps need NVIDIA's "
                "cuBLASLt (libcublasLt.so.13 or .so.12, from the CUDA "
                "toolkit or the nvidia-cublas package); set STRATA_CUBLASLT "
                "to its path. Tried:" +
                tried;
    return out;
  }
  std::string missing;
#define STRATA_CUBLASLT_RESOLVE(fn)                                            \
  out.lt.fn = reinterpret_cast<decltype(out.lt.fn)>(dlsym(library, #fn));      \
  if (!out.lt.fn)                                                              \
    missing += (missing.empty() ? "" : ", ") + std::string(#fn);
  STRATA_CUBLASLT_FUNCTIONS(STRATA_CUBLASLT_RESOLVE)
#undef STRATA_CUBLASLT_RESOLVE
  if (!missing.empty()) {
    out.error = "strata: " + out.lt.path + " lacks the cuBLASLt entry points " +
                missing + " (a cuBLASLt older than 12.0?)";
    return out;
  }
  out.lt.version = out.lt.cublasLtGetVersion();
  if (out.lt.version < 120000)
    out.error = "strata: " + out.lt.path + " is cuBLASLt " +
                std::to_string(out.lt.version) +
                "; cublaslt.matmul steps need 12.0 or newer";
  return out;
}

cudaDataType_t dataType(DType type) {
  switch (type) {
  case DType::F32:
    return CUDA_R_32F;
  case DType::F16:
    return CUDA_R_16F;
  default:
    return CUDA_R_16BF;
  }
}

/// The largest power of two up to 256 dividing `value` (0 divides all).
uint32_t alignmentOf(uint64_t value) {
  uint32_t align = 256;
  while (align > 1 && value % align)
    align /= 2;
  return align;
}

int64_t product(const std::vector<int64_t> &dims, size_t count) {
  int64_t p = 1;
  for (size_t i = 0; i < count; ++i)
    p *= dims[i];
  return p;
}

/// The batch dimensions (all but the last two) without leading ones.
std::vector<int64_t> batchDims(const std::vector<int64_t> &shape) {
  std::vector<int64_t> dims(shape.begin(), shape.end() - 2);
  size_t first = 0;
  while (first < dims.size() && dims[first] == 1)
    ++first;
  return std::vector<int64_t>(dims.begin() + first, dims.end());
}

} // namespace

const BlasLt &blasLt() {
  static const Loaded loaded = load();
  if (!loaded.error.empty())
    throw Error(loaded.error);
  return loaded.lt;
}

std::string statusText(const BlasLt &lt, cublasStatus_t status) {
  const char *name = lt.cublasLtGetStatusName(status);
  const char *text = lt.cublasLtGetStatusString(status);
  return std::string(name ? name : "CUBLAS_STATUS_?") + " (" +
         (text ? text : "unknown status") + ")";
}

LtMatmul::LtMatmul(const BlasLt &lt, const Driver &driver,
                   cublasLtHandle_t handle, const Module &module,
                   const Step &step, const std::vector<CUdeviceptr> &pointers,
                   size_t workspaceBytes, const LtOptions &options,
                   const std::string &who)
    : lt_(lt), driver_(driver), handle_(handle), options_(options),
      workspaceBytes_(workspaceBytes) {
  // A failure gives back what was made so far: no destructor runs then.
  try {
    prepare(module, step, pointers, workspaceBytes, who);
  } catch (...) {
    release();
    throw;
  }
}

void LtMatmul::prepare(const Module &module, const Step &step,
                       const std::vector<CUdeviceptr> &pointers,
                       size_t workspaceBytes, const std::string &who) {
  auto fail = [&](const std::string &what) -> void {
    throw Error(who + ": " + what);
  };
  auto intAttr = [&](const char *key, int64_t fallback) {
    for (const Attribute &a : step.attributes)
      if (a.key == key) {
        if (a.ints.size() != 1 || (a.ints[0] != 0 && a.ints[0] != 1))
          fail(std::string("attribute '") + key + "' must be 0 or 1");
        return a.ints[0];
      }
    return fallback;
  };
  auto floatAttr = [&](const char *key, double fallback) {
    for (const Attribute &a : step.attributes)
      if (a.key == key) {
        if (a.floats.size() != 1)
          fail(std::string("attribute '") + key + "' must be one float");
        return a.floats[0];
      }
    return fallback;
  };
  std::string activation;
  for (const Attribute &a : step.attributes)
    if (a.key == "activation")
      activation = a.str;
  bool transA = intAttr("trans_a", 0), transB = intAttr("trans_b", 0);
  bool hasBias = intAttr("has_bias", 0), hasC = intAttr("has_c", 0);
  alpha_ = static_cast<float>(floatAttr("alpha", 1.0));
  beta_ = hasC ? static_cast<float>(floatAttr("beta", 1.0)) : 0.0f;
  if (activation != "" && activation != "relu" && activation != "gelu_tanh")
    fail("activation '" + activation +
         "' is not one of cuBLASLt's epilogues (relu, gelu_tanh)");
  size_t expected = 2 + hasBias + hasC;
  if (step.inputs.size() != expected || step.outputs.size() != 1 ||
      pointers.size() != expected + 1)
    fail("cublaslt.matmul takes A, B" +
         std::string(hasBias ? ", the bias" : "") + (hasC ? ", C" : "") +
         " and one output; the step has " + std::to_string(step.inputs.size()) +
         " inputs and " + std::to_string(step.outputs.size()) + " outputs");

  const auto &buffers = module.buffers();
  const BufferInfo &a = buffers[step.inputs[0]];
  const BufferInfo &b = buffers[step.inputs[1]];
  const BufferInfo &d = buffers[step.outputs[0]];
  DType type = d.dtype;
  if (type != DType::F32 && type != DType::F16 && type != DType::BF16)
    fail(std::string("cublaslt.matmul computes f32, f16 or bf16, not ") +
         dtypeName(type));
  for (uint32_t id : step.inputs)
    if (buffers[id].dtype != type)
      fail(std::string("every operand must be ") + dtypeName(type) +
           "; buffer " + std::to_string(id) + " is " +
           dtypeName(buffers[id].dtype));
  if (a.shape.size() < 2 || b.shape.size() < 2 || d.shape.size() < 2)
    fail("A, B and the output must be matrices or batches of them; their "
         "shapes are " +
         shapeToString(a.shape) + ", " + shapeToString(b.shape) + " and " +
         shapeToString(d.shape));
  size_t ra = a.shape.size(), rb = b.shape.size(), rd = d.shape.size();
  int64_t m = a.shape[ra - (transA ? 1 : 2)],
          k = a.shape[ra - (transA ? 2 : 1)];
  int64_t kb = b.shape[rb - (transB ? 1 : 2)],
          n = b.shape[rb - (transB ? 2 : 1)];
  if (k != kb || d.shape[rd - 2] != m || d.shape[rd - 1] != n || !m || !n || !k)
    fail("shapes " + shapeToString(a.shape) + (transA ? "^T" : "") + " x " +
         shapeToString(b.shape) + (transB ? "^T" : "") + " -> " +
         shapeToString(d.shape) + " are not a non-empty matrix product");

  k_ = k;
  // Every operand's batch is the output's or absent.
  int64_t batch = product(d.shape, rd - 2);
  std::vector<int64_t> outBatch = batchDims(d.shape);
  auto batchStride = [&](const BufferInfo &x, const char *what) -> int64_t {
    std::vector<int64_t> dims = batchDims(x.shape);
    if (dims.empty())
      return 0;
    if (dims != outBatch)
      fail(std::string(what) + "'s batch dimensions in " +
           shapeToString(x.shape) + " neither match the output's " +
           shapeToString(d.shape) + " nor are absent");
    return x.shape[x.shape.size() - 2] * x.shape[x.shape.size() - 1];
  };
  int64_t strideA = batchStride(a, "A"), strideB = batchStride(b, "B");
  size_t next = 2;
  CUdeviceptr bias = 0;
  if (hasBias) {
    const BufferInfo &x = buffers[step.inputs[next]];
    if (numElements(x.shape) != n || (!x.shape.empty() && x.shape.back() != n))
      fail("the bias " + shapeToString(x.shape) + " must hold N = " +
           std::to_string(n) + " values along the last dimension");
    bias = pointers[next++];
  }
  int64_t strideC = 0;
  CUdeviceptr stepC = 0;
  if (hasC) {
    const BufferInfo &x = buffers[step.inputs[next]];
    if (x.shape.size() < 2 || x.shape[x.shape.size() - 2] != m ||
        x.shape.back() != n)
      fail("C " + shapeToString(x.shape) + " must be [..., " +
           std::to_string(m) + ", " + std::to_string(n) + "]");
    strideC = batchStride(x, "C");
    stepC = pointers[next++];
  }
  CUdeviceptr stepA = pointers[0], stepB = pointers[1], stepD = pointers.back();

  auto check = [&](cublasStatus_t s, const char *call) {
    if (s != CUBLAS_STATUS_SUCCESS)
      fail(std::string(call) + " failed with " + statusText(lt_, s));
  };
  cudaDataType_t dt = dataType(type);
  cublasOperation_t opA = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (activation == "relu")
    epilogue = hasBias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  else if (activation == "gelu_tanh")
    epilogue = hasBias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  else if (hasBias)
    epilogue = CUBLASLT_EPILOGUE_BIAS;
  // A part's descriptor: the transpositions, the epilogue, and the bias
  // from `biasAt` on (the part's first column).
  auto describe = [&](cublasLtMatmulDesc_t *out, CUdeviceptr biasAt) {
    check(lt_.cublasLtMatmulDescCreate(out, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
    auto set = [&](cublasLtMatmulDescAttributes_t key, const void *value,
                   size_t size) {
      check(lt_.cublasLtMatmulDescSetAttribute(*out, key, value, size),
            "cublasLtMatmulDescSetAttribute");
    };
    set(CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA));
    set(CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB));
    set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
    if (hasBias) {
      const void *biasPointer = reinterpret_cast<const void *>(biasAt);
      set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasPointer, sizeof(biasPointer));
    }
  };
  if (batch > INT32_MAX)
    fail("a batch of " + std::to_string(batch) +
         " matrices exceeds cuBLASLt's limit");

  summary_ = std::string(dtypeName(type)) + " " +
             (batch > 1 ? std::to_string(batch) + " x " : "") +
             std::to_string(m) + "x" + std::to_string(k) + "x" +
             std::to_string(n);
  std::string extras = std::string(hasBias ? "bias" : "") +
                       (hasC ? std::string(hasBias ? "+" : "") + "C" : "") +
                       (activation.empty() ? "" : "+" + activation);
  if (!extras.empty())
    summary_ += ", " + (extras[0] == '+' ? extras.substr(1) : extras);

  // One matrix as cuBLASLt sees it: column-major, `rows` x `cols` with
  // columns `ld` elements apart, `stride` elements between batches.
  struct Operand {
    CUdeviceptr p;
    int64_t rows, cols, ld, stride;
  };
  size_t element = dtypeSize(type);
  auto addPart = [&](Operand a, Operand b, Operand c, Operand d, int64_t count,
                     CUdeviceptr biasPointer) {
    auto layout = [&](cublasLtMatrixLayout_t *out, const Operand &x) {
      check(lt_.cublasLtMatrixLayoutCreate(out, dt, x.rows, x.cols, x.ld),
            "cublasLtMatrixLayoutCreate");
      if (count == 1)
        return;
      int32_t n32 = static_cast<int32_t>(count);
      check(lt_.cublasLtMatrixLayoutSetAttribute(
                *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n32, sizeof(n32)),
            "cublasLtMatrixLayoutSetAttribute");
      check(lt_.cublasLtMatrixLayoutSetAttribute(
                *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &x.stride,
                sizeof(x.stride)),
            "cublasLtMatrixLayoutSetAttribute");
    };
    Part &p = parts_.emplace_back();
    describe(&p.desc, biasPointer);
    layout(&p.layoutA, a);
    layout(&p.layoutB, b);
    layout(&p.layoutC, c);
    layout(&p.layoutD, d);
    p.a = a.p, p.b = b.p, p.c = c.p, p.d = d.p;
    p.m = d.cols * count, p.n = d.rows;

    // The heuristic's choice for these buffers' alignment (its default
    // assumes 256 bytes, which arena buffers and batch strides need not
    // have).
    auto align = [&](const Operand &x) {
      return std::min(alignmentOf(x.p),
                      count == 1 ? 256u
                                 : alignmentOf(uint64_t(x.stride) * element));
    };
    cublasLtMatmulPreference_t preference = nullptr;
    check(lt_.cublasLtMatmulPreferenceCreate(&preference),
          "cublasLtMatmulPreferenceCreate");
    uint64_t maxWorkspace = workspaceBytes;
    uint32_t alignments[4] = {align(a), align(b), align(c), align(d)};
    cublasStatus_t s = lt_.cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
        sizeof(maxWorkspace));
    const cublasLtMatmulPreferenceAttributes_t alignKeys[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && s == CUBLAS_STATUS_SUCCESS; ++i)
      s = lt_.cublasLtMatmulPreferenceSetAttribute(
          preference, alignKeys[i], &alignments[i], sizeof(alignments[i]));
    int wanted = std::clamp(options_.candidates, 1, kMaxCandidates);
    cublasLtMatmulHeuristicResult_t results[kMaxCandidates] = {};
    int found = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
      s = lt_.cublasLtMatmulAlgoGetHeuristic(
          handle_, p.desc, p.layoutA, p.layoutB, p.layoutC, p.layoutD,
          preference, wanted, results, &found);
    lt_.cublasLtMatmulPreferenceDestroy(preference);
    std::string what = summary_;
    if (p.m != batch * m || p.n != n)
      what += " (its " + partShape(parts_.size() - 1) + " part)";
    if (s != CUBLAS_STATUS_SUCCESS)
      fail("choosing a cuBLASLt algorithm for " + what +
           ": cublasLtMatmulAlgoGetHeuristic failed with " +
           statusText(lt_, s));
    if (found < 1)
      fail("cuBLASLt has no algorithm for " + what +
           " with these alignments (A " + std::to_string(alignments[1]) +
           ", B " + std::to_string(alignments[0]) + " bytes)");
    for (int i = 0; i < found; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS)
        p.algos.push_back(results[i].algo);
    if (p.algos.empty())
      fail("cuBLASLt has no usable algorithm for " + what);
  };

  // Output rows that are not a multiple of 16 bytes: a product per class of
  // rows that start at the same offset from a 16-byte boundary, when the
  // product is large enough for the extra calls not to matter (see the
  // header). The step's A must then be rows of K (not transposed) and its B
  // stored [N, K] (trans_b), both with 16-byte aligned rows, so that a class
  // of rows (every u-th row of A) and a range of columns (rows of B) are
  // matrices with aligned rows too; a batch folds into the rows when B is
  // shared and A and C are not. A bias is read from each part's first
  // column on, from a copy at an aligned address where that column is not
  // (BiasCopy in the header).
  int64_t u = static_cast<int64_t>(16 / element);
  int64_t rowsAll = batch * m;
  // By default 4e9, about 10 microseconds of misaligned product.
  double minFlops = options_.splitMinFlops;
  bool foldable =
      batch == 1 || (strideB == 0 && strideA != 0 && (!hasC || strideC != 0));
  bool split = (n * int64_t(element)) % 16 != 0 && u > 1 && !transA && transB &&
               foldable && (k * int64_t(element)) % 16 == 0 && n > 2 * u &&
               rowsAll >= u && alignmentOf(stepA) >= 16 &&
               alignmentOf(stepB) >= 16 && alignmentOf(stepD) >= 16 &&
               (!hasC || alignmentOf(stepC) >= 16) &&
               2.0 * double(rowsAll) * double(n) * double(k) >= minFlops;
  CUdeviceptr cOrD = hasC ? stepC : stepD; // beta is 0 without C: unread
  auto at = [&](CUdeviceptr p, int64_t elements) {
    return p + CUdeviceptr(elements) * element;
  };
  // Columns [first, first + columns) of every row, in D's own (unaligned)
  // rows: the thin products beside the classes of aligned rows (below).
  auto addColumns = [&](int64_t first, int64_t columns,
                        CUdeviceptr biasPointer) {
    addPart({at(stepB, first * k), k, columns, k, 0}, {stepA, k, rowsAll, k, 0},
            {at(cOrD, first), columns, rowsAll, n, 0},
            {at(stepD, first), columns, rowsAll, n, 0}, 1, biasPointer);
  };
  // The classes as one batched product (docs/gpu.md, "Output rows that
  // are not 16-byte aligned"): class j starts at column j * s with
  // s = u - n mod u, which is aligned in row j (j n + j s = j (n + s), a
  // multiple of u), so consecutive classes are n + s elements apart in D
  // and C, s rows apart in the weight and one row apart in A: strided
  // batches. They take the same columns (a multiple of u, so that every
  // class ends in range) and the same rows (every u-th). One launch
  // instead of u: no ramp and tail per class (GPT-2's LM head, 8 classes).
  // Not with a bias, whose classes would start unaligned (7 elements
  // apart for bf16); LtOptions::classBatch off (STRATA_CUBLASLT_CLASS_BATCH
  // =0) keeps the class calls.
  int64_t s = u - n % u;
  int64_t batchedColumns = (n - (u - 1) * s) / u * u;
  if (split && !hasBias && rowsAll % u == 0 && batchedColumns >= u &&
      options_.classBatch) {
    int64_t rows = rowsAll / u, left = (u - 1) * s;
    // Columns [0, left) and [batchedColumns, n) of every row, in D's own
    // (unaligned) rows; the classes write some of those again, with the
    // same values.
    addColumns(0, left, 0);
    addPart({stepB, k, batchedColumns, k, s * k}, {stepA, k, rows, u * k, k},
            {cOrD, batchedColumns, rows, u * n, n + s},
            {stepD, batchedColumns, rows, u * n, n + s}, u, 0);
    parts_.back().classes = u;
    addColumns(batchedColumns, n - batchedColumns, 0);
    summary_ += ", as 3 products: rows of " + std::to_string(n * element) +
                " bytes, " + std::to_string(u) +
                " classes of aligned rows in one batched product";
    return;
  }
  if (split) {
    // Class j's first column whose address is 16-byte aligned, and how
    // many columns from there it takes: a multiple of 16 bytes too, since
    // cuBLASLt's fast kernels also need that of the rows' extent (on the
    // H200, GPT-2's 1024 x 50256 classes took 0.11 ms, 50250 columns 0.32
    // and an odd count 0.77).
    auto firstColumn = [&](int64_t j) { return (u - (j * n) % u) % u; };
    auto classColumns = [&](int64_t j) { return (n - firstColumn(j)) / u * u; };
    int64_t left = 0, right = 0;
    for (int64_t j = 0; j < u; ++j) {
      left = std::max(left, firstColumn(j));
      right = std::max(right, n - firstColumn(j) - classColumns(j));
    }
    // The bias from each part's first column, at a 16-byte aligned address:
    // the bias itself where it is, else a copy (BiasCopy in the header).
    std::map<int64_t, CUdeviceptr> biasFrom;
    if (hasBias) {
      std::vector<int64_t> shifts;
      for (int64_t j = 0; j < u; ++j)
        shifts.push_back(firstColumn(j));
      shifts.push_back(n - right);
      size_t total = 0;
      for (int64_t f : shifts)
        if (alignmentOf(bias + f * element) < 16 && !biasFrom.count(f)) {
          biasFrom[f] = total;
          total += (size_t(n - f) * element + 255) / 256 * 256;
        }
      if (total) {
        CUresult r = driver_.cuMemAlloc(&biasCopyMemory_, total);
        if (r != CUDA_SUCCESS)
          fail("cuMemAlloc of " + std::to_string(total) +
               " bytes for the bias from unaligned columns failed with " +
               errorText(driver_, r));
      }
      for (auto &[f, at] : biasFrom) {
        at += biasCopyMemory_;
        biasCopies_.push_back(
            {at, bias + CUdeviceptr(f) * element, size_t(n - f) * element});
      }
    }
    auto biasAt = [&](int64_t f) -> CUdeviceptr {
      auto it = biasFrom.find(f);
      return it == biasFrom.end() ? bias + CUdeviceptr(f) * element
                                  : it->second;
    };
    // Columns [0, left) and [n - right, n) of every row, in D's own
    // (unaligned) rows, around the classes; they write some of those
    // columns again, with the same values.
    addColumns(0, left, biasAt(0));
    for (int64_t j = 0; j < u; ++j) {
      int64_t first = firstColumn(j), columns = classColumns(j);
      int64_t rows = (rowsAll - j + u - 1) / u;
      addPart({at(stepB, first * k), k, columns, k, 0},
              {at(stepA, j * k), k, rows, u * k, 0},
              {at(cOrD, j * n + first), columns, rows, u * n, 0},
              {at(stepD, j * n + first), columns, rows, u * n, 0}, 1,
              biasAt(first));
    }
    addColumns(n - right, right, biasAt(n - right));
    summary_ += ", as " + std::to_string(parts_.size()) +
                " products: rows of " + std::to_string(n * element) + " bytes";
    if (!biasCopies_.empty())
      summary_ += ", the bias copied to " + std::to_string(biasCopies_.size()) +
                  " aligned addresses per run";
    return;
  }
  // A batch of products that share B (a linear layer on [..., M, K]
  // activations: ViT's [197, 1, 768] at batch 1, ConvNeXt's pointwise
  // convolutions as [N * 56, 56, 96], a decode step's [8, 1, 2048]) is one
  // product of batch x M rows: A, C and D are contiguous [batch, M, .], so
  // their rows follow on across the batch. As a strided batch, cuBLASLt ran
  // one small product per batch entry, each reading all of B (8 products of
  // one row for the decode step's projections, 197 for ViT's).
  if (batch > 1 && foldable && !transA) {
    addPart({stepB, transB ? k : n, transB ? n : k, transB ? k : n, 0},
            {stepA, k, rowsAll, k, 0}, {cOrD, n, rowsAll, n, 0},
            {stepD, n, rowsAll, n, 0}, 1, bias);
    summary_ += ", as one product of " + std::to_string(rowsAll) + " rows";
    return;
  }
  // cuBLASLt's A is the step's B, and its B the step's A (the file comment).
  addPart({stepB, transB ? k : n, transB ? n : k, transB ? k : n, strideB},
          {stepA, transA ? m : k, transA ? k : m, transA ? m : k, strideA},
          {cOrD, n, m, n, hasC ? strideC : m * n}, {stepD, n, m, n, m * n},
          batch, bias);
}

LtMatmul::~LtMatmul() { release(); }

void LtMatmul::release() noexcept {
  if (biasCopyMemory_)
    driver_.cuMemFree(biasCopyMemory_);
  for (Part &p : parts_)
    for (cublasLtMatrixLayout_t l :
         {p.layoutA, p.layoutB, p.layoutC, p.layoutD})
      if (l)
        lt_.cublasLtMatrixLayoutDestroy(l);
  for (Part &p : parts_)
    if (p.desc)
      lt_.cublasLtMatmulDescDestroy(p.desc);
  biasCopyMemory_ = 0;
  parts_.clear();
}

cublasStatus_t LtMatmul::runPart(size_t index, CUdeviceptr workspace,
                                 size_t workspaceBytes, CUstream stream) const {
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  const Part &p = parts_[index];
  return lt_.cublasLtMatmul(
      handle_, p.desc, &alpha_, ptr(p.a), p.layoutA, ptr(p.b), p.layoutB,
      &beta_, ptr(p.c), p.layoutC, ptr(p.d), p.layoutD, &p.algos[p.chosen],
      ptr(workspace), workspaceBytes, reinterpret_cast<cudaStream_t>(stream));
}

std::string LtMatmul::pin(size_t index, const cublasLtMatmulAlgo_t &algo) {
  Part &p = parts_[index];
  cublasLtMatmulHeuristicResult_t result = {};
  cublasStatus_t s =
      lt_.cublasLtMatmulAlgoCheck(handle_, p.desc, p.layoutA, p.layoutB,
                                  p.layoutC, p.layoutD, &algo, &result);
  if (s != CUBLAS_STATUS_SUCCESS)
    return "cuBLASLt does not run it for this product "
           "(cublasLtMatmulAlgoCheck: " +
           statusText(lt_, s) + ")";
  if (result.workspaceSize > workspaceBytes_)
    return "it needs " + std::to_string(result.workspaceSize) +
           " bytes of workspace, more than the session's " +
           std::to_string(workspaceBytes_);
  auto same = [&](const cublasLtMatmulAlgo_t &other) {
    return std::memcmp(&other, &algo, sizeof(algo)) == 0;
  };
  auto found = std::find_if(p.algos.begin(), p.algos.end(), same);
  if (found == p.algos.end()) {
    p.algos.push_back(algo);
    found = p.algos.end() - 1;
  }
  p.chosen = static_cast<size_t>(found - p.algos.begin());
  p.tunedMs = -1;
  p.pinned = true;
  return "";
}

std::string LtMatmul::partShape(size_t index) const {
  const Part &p = parts_[index];
  if (p.classes > 1)
    return std::to_string(p.classes) + " x " + std::to_string(p.m / p.classes) +
           "x" + std::to_string(k_) + "x" + std::to_string(p.n);
  return std::to_string(p.m) + "x" + std::to_string(k_) + "x" +
         std::to_string(p.n);
}

std::string LtMatmul::run(CUdeviceptr workspace, size_t workspaceBytes,
                          CUstream stream) const {
  for (const BiasCopy &copy : biasCopies_)
    if (CUresult r =
            driver_.cuMemcpyDtoDAsync(copy.to, copy.from, copy.bytes, stream);
        r != CUDA_SUCCESS)
      return "cuMemcpyDtoDAsync (the bias of " + summary_ +
             " to an aligned address) failed with " + errorText(driver_, r);
  for (size_t i = 0; i < parts_.size(); ++i)
    if (cublasStatus_t s = runPart(i, workspace, workspaceBytes, stream);
        s != CUBLAS_STATUS_SUCCESS)
      return "cublasLtMatmul (" + summary_ +
             (parts_.size() > 1 ? ", part " + partShape(i) : "") +
             ") failed with " + statusText(lt_, s);
  return {};
}

} // namespace strata::rt::cuda
