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
  std::string tried;
  void *library = openCudaLibrary("STRATA_CUBLASLT",
                                  {"libcublasLt.so.13", "libcublasLt.so.12"},
                                  out.lt.path, tried);
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
      workspaceBytes_(workspaceBytes), who_(who) {
  // A failure gives back what was made so far: no destructor runs then.
  try {
    prepare(module, step, pointers);
  } catch (...) {
    release();
    throw;
  }
}

/// What a cublaslt.matmul step asks for, checked against its buffers:
/// D = alpha op(A) op(B) (+ beta C) (+ bias, then the activation), a batch
/// of such products with each operand's batch stride (0: shared), and the
/// operands' device addresses.
struct LtMatmul::Product {
  DType type = DType::F32;
  size_t element = 4;
  bool transA = false, transB = false, hasBias = false, hasC = false;
  std::string activation;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  CUdeviceptr a = 0, b = 0, c = 0, d = 0, bias = 0;
  /// The rows of every product together.
  int64_t rows() const { return batch * m; }
  /// C where the step has one, else D: beta is 0 without C, so it is unread.
  CUdeviceptr cOrD() const { return hasC ? c : d; }
  /// Whether the batch folds into the rows: B shared, A and C not.
  bool foldable() const {
    return batch == 1 ||
           (strideB == 0 && strideA != 0 && (!hasC || strideC != 0));
  }
  /// The address `elements` elements past `p`.
  CUdeviceptr at(CUdeviceptr p, int64_t elements) const {
    return p + CUdeviceptr(elements) * element;
  }
};

void LtMatmul::fail(const std::string &what) const {
  throw Error(who_ + ": " + what);
}

void LtMatmul::check(cublasStatus_t s, const char *call) const {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(std::string(call) + " failed with " + statusText(lt_, s));
}

LtMatmul::Product LtMatmul::readStep(const Module &module, const Step &step,
                                     const std::vector<CUdeviceptr> &pointers) {
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
  Product x;
  for (const Attribute &a : step.attributes)
    if (a.key == "activation")
      x.activation = a.str;
  x.transA = intAttr("trans_a", 0), x.transB = intAttr("trans_b", 0);
  x.hasBias = intAttr("has_bias", 0), x.hasC = intAttr("has_c", 0);
  alpha_ = static_cast<float>(floatAttr("alpha", 1.0));
  beta_ = x.hasC ? static_cast<float>(floatAttr("beta", 1.0)) : 0.0f;
  if (x.activation != "" && x.activation != "relu" &&
      x.activation != "gelu_tanh")
    fail("activation '" + x.activation +
         "' is not one of cuBLASLt's epilogues (relu, gelu_tanh)");
  size_t expected = 2 + x.hasBias + x.hasC;
  if (step.inputs.size() != expected || step.outputs.size() != 1 ||
      pointers.size() != expected + 1)
    fail("cublaslt.matmul takes A, B" +
         std::string(x.hasBias ? ", the bias" : "") + (x.hasC ? ", C" : "") +
         " and one output; the step has " + std::to_string(step.inputs.size()) +
         " inputs and " + std::to_string(step.outputs.size()) + " outputs");

  const auto &buffers = module.buffers();
  const BufferInfo &a = buffers[step.inputs[0]];
  const BufferInfo &b = buffers[step.inputs[1]];
  const BufferInfo &d = buffers[step.outputs[0]];
  x.type = d.dtype;
  if (x.type != DType::F32 && x.type != DType::F16 && x.type != DType::BF16)
    fail(std::string("cublaslt.matmul computes f32, f16 or bf16, not ") +
         dtypeName(x.type));
  x.element = dtypeSize(x.type);
  for (uint32_t id : step.inputs)
    if (buffers[id].dtype != x.type)
      fail(std::string("every operand must be ") + dtypeName(x.type) +
           "; buffer " + std::to_string(id) + " is " +
           dtypeName(buffers[id].dtype));
  if (a.shape.size() < 2 || b.shape.size() < 2 || d.shape.size() < 2)
    fail("A, B and the output must be matrices or batches of them; "
         "their shapes are " +
         shapeToString(a.shape) + ", " + shapeToString(b.shape) + " and " +
         shapeToString(d.shape));
  size_t ra = a.shape.size(), rb = b.shape.size(), rd = d.shape.size();
  x.m = a.shape[ra - (x.transA ? 1 : 2)];
  x.k = a.shape[ra - (x.transA ? 2 : 1)];
  int64_t kb = b.shape[rb - (x.transB ? 1 : 2)];
  x.n = b.shape[rb - (x.transB ? 2 : 1)];
  if (x.k != kb || d.shape[rd - 2] != x.m || d.shape[rd - 1] != x.n || !x.m ||
      !x.n || !x.k)
    fail("shapes " + shapeToString(a.shape) + (x.transA ? "^T" : "") + " x " +
         shapeToString(b.shape) + (x.transB ? "^T" : "") + " -> " +
         shapeToString(d.shape) + " are not a non-empty matrix product");

  // Every operand's batch is the output's or absent.
  x.batch = product(d.shape, rd - 2);
  std::vector<int64_t> outBatch = batchDims(d.shape);
  auto batchStride = [&](const BufferInfo &operand,
                         const char *what) -> int64_t {
    std::vector<int64_t> dims = batchDims(operand.shape);
    if (dims.empty())
      return 0;
    if (dims != outBatch)
      fail(std::string(what) + "'s batch dimensions in " +
           shapeToString(operand.shape) + " neither match the output's " +
           shapeToString(d.shape) + " nor are absent");
    return operand.shape[operand.shape.size() - 2] *
           operand.shape[operand.shape.size() - 1];
  };
  x.strideA = batchStride(a, "A"), x.strideB = batchStride(b, "B");
  size_t next = 2;
  if (x.hasBias) {
    const BufferInfo &bias = buffers[step.inputs[next]];
    if (numElements(bias.shape) != x.n ||
        (!bias.shape.empty() && bias.shape.back() != x.n))
      fail("the bias " + shapeToString(bias.shape) + " must hold N = " +
           std::to_string(x.n) + " values along the last dimension");
    x.bias = pointers[next++];
  }
  if (x.hasC) {
    const BufferInfo &c = buffers[step.inputs[next]];
    if (c.shape.size() < 2 || c.shape[c.shape.size() - 2] != x.m ||
        c.shape.back() != x.n)
      fail("C " + shapeToString(c.shape) + " must be [..., " +
           std::to_string(x.m) + ", " + std::to_string(x.n) + "]");
    x.strideC = batchStride(c, "C");
    x.c = pointers[next++];
  }
  x.a = pointers[0], x.b = pointers[1], x.d = pointers.back();
  if (x.batch > INT32_MAX)
    fail("a batch of " + std::to_string(x.batch) +
         " matrices exceeds cuBLASLt's limit");
  return x;
}

void LtMatmul::prepare(const Module &module, const Step &step,
                       const std::vector<CUdeviceptr> &pointers) {
  Product x = readStep(module, step, pointers);
  k_ = x.k;
  summary_ = std::string(dtypeName(x.type)) + " " +
             (x.batch > 1 ? std::to_string(x.batch) + " x " : "") +
             std::to_string(x.m) + "x" + std::to_string(x.k) + "x" +
             std::to_string(x.n);
  std::string extras = std::string(x.hasBias ? "bias" : "") +
                       (x.hasC ? std::string(x.hasBias ? "+" : "") + "C" : "") +
                       (x.activation.empty() ? "" : "+" + x.activation);
  if (!extras.empty())
    summary_ += ", " + (extras[0] == '+' ? extras.substr(1) : extras);

  if (splitRows(x))
    return;
  int64_t m = x.m, n = x.n, k = x.k;
  // A batch of products that share B (a linear layer on [..., M, K]
  // activations: ViT's [197, 1, 768] at batch 1, ConvNeXt's pointwise
  // convolutions as [N * 56, 56, 96], a decode step's [8, 1, 2048]) is one
  // product of batch x M rows: A, C and D are contiguous [batch, M, .], so
  // their rows follow on across the batch. As a strided batch, cuBLASLt ran
  // one small product per batch entry, each reading all of B (8 products of
  // one row for the decode step's projections, 197 for ViT's).
  if (x.batch > 1 && x.foldable() && !x.transA) {
    int64_t rowsAll = x.rows();
    addPart(x, {x.b, x.transB ? k : n, x.transB ? n : k, x.transB ? k : n, 0},
            {x.a, k, rowsAll, k, 0}, {x.cOrD(), n, rowsAll, n, 0},
            {x.d, n, rowsAll, n, 0}, 1, x.bias);
    summary_ += ", as one product of " + std::to_string(rowsAll) + " rows";
    return;
  }
  // cuBLASLt's A is the step's B, and its B the step's A (the file comment).
  addPart(
      x, {x.b, x.transB ? k : n, x.transB ? n : k, x.transB ? k : n, x.strideB},
      {x.a, x.transA ? m : k, x.transA ? k : m, x.transA ? m : k, x.strideA},
      {x.cOrD(), n, m, n, x.hasC ? x.strideC : m * n}, {x.d, n, m, n, m * n},
      x.batch, x.bias);
}

/// Output rows that are not a multiple of 16 bytes: a product per class of
/// rows that start at the same offset from a 16-byte boundary, when the
/// product is large enough for the extra calls not to matter (see the
/// header). The step's A must then be rows of K (not transposed) and its B
/// stored [N, K] (trans_b), both with 16-byte aligned rows, so that a class
/// of rows (every u-th row of A) and a range of columns (rows of B) are
/// matrices with aligned rows too; a batch folds into the rows when B is
/// shared and A and C are not. A bias is read from each part's first column
/// on, from a copy at an aligned address where that column is not
/// (BiasCopy in the header). Returns whether the product was split.
bool LtMatmul::splitRows(const Product &x) {
  int64_t n = x.n, k = x.k;
  size_t element = x.element;
  int64_t u = static_cast<int64_t>(16 / element);
  int64_t rowsAll = x.rows();
  // By default 4e9, about 10 microseconds of misaligned product.
  double minFlops = options_.splitMinFlops;
  bool split = (n * int64_t(element)) % 16 != 0 && u > 1 && !x.transA &&
               x.transB && x.foldable() && (k * int64_t(element)) % 16 == 0 &&
               n > 2 * u && rowsAll >= u && alignmentOf(x.a) >= 16 &&
               alignmentOf(x.b) >= 16 && alignmentOf(x.d) >= 16 &&
               (!x.hasC || alignmentOf(x.c) >= 16) &&
               2.0 * double(rowsAll) * double(n) * double(k) >= minFlops;
  if (!split)
    return false;
  CUdeviceptr cOrD = x.cOrD();
  // Columns [first, first + columns) of every row, in D's own (unaligned)
  // rows: the thin products beside the classes of aligned rows (below).
  auto addColumns = [&](int64_t first, int64_t columns,
                        CUdeviceptr biasPointer) {
    addPart(x, {x.at(x.b, first * k), k, columns, k, 0},
            {x.a, k, rowsAll, k, 0},
            {x.at(cOrD, first), columns, rowsAll, n, 0},
            {x.at(x.d, first), columns, rowsAll, n, 0}, 1, biasPointer);
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
  if (!x.hasBias && rowsAll % u == 0 && batchedColumns >= u &&
      options_.classBatch) {
    int64_t rows = rowsAll / u, left = (u - 1) * s;
    // Columns [0, left) and [batchedColumns, n) of every row, in D's own
    // (unaligned) rows; the classes write some of those again, with the
    // same values.
    addColumns(0, left, 0);
    addPart(x, {x.b, k, batchedColumns, k, s * k}, {x.a, k, rows, u * k, k},
            {cOrD, batchedColumns, rows, u * n, n + s},
            {x.d, batchedColumns, rows, u * n, n + s}, u, 0);
    parts_.back().classes = u;
    addColumns(batchedColumns, n - batchedColumns, 0);
    summary_ += ", as 3 products: rows of " + std::to_string(n * element) +
                " bytes, " + std::to_string(u) +
                " classes of aligned rows in one batched product";
    return true;
  }
  // Class j's first column whose address is 16-byte aligned, and how many
  // columns from there it takes: a multiple of 16 bytes too, since
  // cuBLASLt's fast kernels also need that of the rows' extent (on the
  // H200, GPT-2's 1024 x 50256 classes took 0.11 ms, 50250 columns 0.32
  // and an odd count 0.77).
  auto firstColumn = [&](int64_t j) { return (u - (j * n) % u) % u; };
  auto classColumns = [&](int64_t j) { return (n - firstColumn(j)) / u * u; };
  int64_t left = 0, right = 0;
  std::vector<int64_t> shifts;
  for (int64_t j = 0; j < u; ++j) {
    left = std::max(left, firstColumn(j));
    right = std::max(right, n - firstColumn(j) - classColumns(j));
    shifts.push_back(firstColumn(j));
  }
  shifts.push_back(n - right);
  // The bias from each part's first column, at a 16-byte aligned address:
  // the bias itself where it is, else a copy.
  std::map<int64_t, CUdeviceptr> copies = copyBias(x, shifts);
  auto biasAt = [&](int64_t f) -> CUdeviceptr {
    auto it = copies.find(f);
    return it == copies.end() ? x.at(x.bias, f) : it->second;
  };
  // Columns [0, left) and [n - right, n) of every row, in D's own
  // (unaligned) rows, around the classes; they write some of those columns
  // again, with the same values.
  addColumns(0, left, biasAt(0));
  for (int64_t j = 0; j < u; ++j) {
    int64_t first = firstColumn(j), columns = classColumns(j);
    int64_t rows = (rowsAll - j + u - 1) / u;
    addPart(x, {x.at(x.b, first * k), k, columns, k, 0},
            {x.at(x.a, j * k), k, rows, u * k, 0},
            {x.at(cOrD, j * n + first), columns, rows, u * n, 0},
            {x.at(x.d, j * n + first), columns, rows, u * n, 0}, 1,
            biasAt(first));
  }
  addColumns(n - right, right, biasAt(n - right));
  summary_ += ", as " + std::to_string(parts_.size()) + " products: rows of " +
              std::to_string(n * element) + " bytes";
  if (!biasCopies_.empty())
    summary_ += ", the bias copied to " + std::to_string(biasCopies_.size()) +
                " aligned addresses per run";
  return true;
}

/// Copies of the bias from column `f` on, at 16-byte aligned addresses, for
/// each first column `f` of a split's parts (`shifts`) where the bias itself
/// is not aligned there (BiasCopy in the header); made here, filled by each
/// run. Returns each copy's address by its first column.
std::map<int64_t, CUdeviceptr>
LtMatmul::copyBias(const Product &x, const std::vector<int64_t> &shifts) {
  std::map<int64_t, CUdeviceptr> biasFrom;
  if (x.hasBias) {
    size_t total = 0;
    for (int64_t f : shifts)
      if (alignmentOf(x.at(x.bias, f)) < 16 && !biasFrom.count(f)) {
        biasFrom[f] = total;
        total += (size_t(x.n - f) * x.element + 255) / 256 * 256;
      }
    if (total) {
      CUresult r = driver_.cuMemAlloc(&biasCopyMemory_, total);
      if (r != CUDA_SUCCESS)
        fail("cuMemAlloc of " + std::to_string(total) +
             " bytes for the bias from unaligned columns failed "
             "with " +
             errorText(driver_, r));
    }
    for (auto &[f, at] : biasFrom) {
      at += biasCopyMemory_;
      biasCopies_.push_back({at, x.at(x.bias, f), size_t(x.n - f) * x.element});
    }
  }
  return biasFrom;
}

/// One cuBLASLt call: its descriptor (the transpositions, the epilogue, and
/// the bias from `biasPointer` on: the part's first column), the four
/// layouts (a strided batch of `count` when more than one), and the
/// heuristic's algorithms for the operands' alignment.
void LtMatmul::addPart(const Product &x, const Operand &a, const Operand &b,
                       const Operand &c, const Operand &d, int64_t count,
                       CUdeviceptr biasPointer) {
  cudaDataType_t dt = dataType(x.type);
  cublasOperation_t opA = x.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = x.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (x.activation == "relu")
    epilogue = x.hasBias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  else if (x.activation == "gelu_tanh")
    epilogue = x.hasBias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  else if (x.hasBias)
    epilogue = CUBLASLT_EPILOGUE_BIAS;
  auto layout = [&](cublasLtMatrixLayout_t *out, const Operand &operand) {
    check(lt_.cublasLtMatrixLayoutCreate(out, dt, operand.rows, operand.cols,
                                         operand.ld),
          "cublasLtMatrixLayoutCreate");
    if (count == 1)
      return;
    int32_t n32 = static_cast<int32_t>(count);
    check(lt_.cublasLtMatrixLayoutSetAttribute(
              *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n32, sizeof(n32)),
          "cublasLtMatrixLayoutSetAttribute");
    check(lt_.cublasLtMatrixLayoutSetAttribute(
              *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
              &operand.stride, sizeof(operand.stride)),
          "cublasLtMatrixLayoutSetAttribute");
  };
  Part &p = parts_.emplace_back();
  check(lt_.cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        "cublasLtMatmulDescCreate");
  auto set = [&](cublasLtMatmulDescAttributes_t key, const void *value,
                 size_t size) {
    check(lt_.cublasLtMatmulDescSetAttribute(p.desc, key, value, size),
          "cublasLtMatmulDescSetAttribute");
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA));
  set(CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB));
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
  if (x.hasBias) {
    const void *biasAt = reinterpret_cast<const void *>(biasPointer);
    set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasAt, sizeof(biasAt));
  }
  layout(&p.layoutA, a);
  layout(&p.layoutB, b);
  layout(&p.layoutC, c);
  layout(&p.layoutD, d);
  p.a = a.p, p.b = b.p, p.c = c.p, p.d = d.p;
  p.m = d.cols * count, p.n = d.rows;
  std::string what = summary_;
  if (p.m != x.rows() || p.n != x.n)
    what += " (its " + partShape(parts_.size() - 1) + " part)";
  // The heuristic's choice for these buffers' alignment (its default
  // assumes 256 bytes, which arena buffers and batch strides need not
  // have).
  auto align = [&](const Operand &operand) {
    return std::min(
        alignmentOf(operand.p),
        count == 1 ? 256u : alignmentOf(uint64_t(operand.stride) * x.element));
  };
  uint32_t alignments[4] = {align(a), align(b), align(c), align(d)};
  chooseAlgorithms(p, alignments, what);
}

/// The heuristic's algorithms for a part whose operands have `alignments`
/// (cuBLASLt's A, B, C and D), at most LtOptions::candidates of them.
void LtMatmul::chooseAlgorithms(Part &p, const uint32_t (&alignments)[4],
                                const std::string &what) {
  cublasLtMatmulPreference_t preference = nullptr;
  check(lt_.cublasLtMatmulPreferenceCreate(&preference),
        "cublasLtMatmulPreferenceCreate");
  uint64_t maxWorkspace = workspaceBytes_;
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
    s = lt_.cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.layoutA,
                                           p.layoutB, p.layoutC, p.layoutD,
                                           preference, wanted, results, &found);
  lt_.cublasLtMatmulPreferenceDestroy(preference);
  if (s != CUBLAS_STATUS_SUCCESS)
    fail("choosing a cuBLASLt algorithm for " + what +
         ": cublasLtMatmulAlgoGetHeuristic failed with " + statusText(lt_, s));
  if (found < 1)
    fail("cuBLASLt has no algorithm for " + what +
         " with these alignments (A " + std::to_string(alignments[1]) + ", B " +
         std::to_string(alignments[0]) + " bytes)");
  for (int i = 0; i < found; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS)
      p.algos.push_back(results[i].algo);
  if (p.algos.empty())
    fail("cuBLASLt has no usable algorithm for " + what);
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
