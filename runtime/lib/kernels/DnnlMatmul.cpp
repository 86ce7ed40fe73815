//===- DnnlMatmul.cpp - "dnnl.matmul": oneDNN matrix products ---*- C++ -*-===//
//
// Output = activation(alpha * op(A) op(B) + beta * C) with numpy-style batch
// broadcasting (ONNX MatMul and Gemm, with a fused bias and activation).
// Transposition is expressed through the strides of A's and B's descriptors,
// so nothing is copied. oneDNN adds a bias before its output scale, so the
// native bias is used only when alpha and beta are 1 and C is a row of N
// values (the case its fast kernels take); any other C is broadcast into the
// output first and added by a sum post-op scaled by beta.
//
// When B is a module constant (a layer's weights), the primitive chooses
// B's layout (format_tag::any: oneDNN's blocked panels for its kernels) and
// B is reordered into it once, on the first run, and kept in the step's
// state; otherwise the product reads B's stored layout, and oneDNN packs
// it inside every call.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"

#include <algorithm>
#include <cstring>

namespace strata::rt::kernels::dnnl_support {

namespace {

struct MatmulState : KernelState {
  std::vector<int64_t> key;
  dnnl::matmul primitive;
  dnnl::memory::desc a, b, bias, dst;
  bool nativeBias = false;
  /// B in the primitive's layout, when B is a constant that the primitive
  /// wants in another, and the constant it was reordered from.
  bool packedWeights = false;
  dnnl::reorder weightsReorder;
  dnnl::memory weights;
  const void *weightsFrom = nullptr;
  /// C padded to the output's rank (leading 1s), when it is broadcast into
  /// the output before the product.
  std::vector<int64_t> broadcastC;
  dnnl::stream stream;
};

using Dims = std::vector<int64_t>;

Dims padLeading(const Dims &dims, size_t rank) {
  Dims padded(rank - dims.size(), 1);
  padded.insert(padded.end(), dims.begin(), dims.end());
  return padded;
}

/// Writes C (padded to the output's rank, each dimension 1 or the output's)
/// into every element of `out`.
void broadcastInto(KernelContext &ctx, const float *c, const Dims &cDims,
                   float *out, const Dims &outDims) {
  size_t rank = outDims.size();
  int64_t n = outDims.back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    rows *= outDims[d];
  // C's strides, 0 along broadcast dimensions.
  Dims cStrides(rank, 0);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    cStrides[d] = cDims[d] == 1 ? 0 : stride;
    stride *= cDims[d];
  }
  int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(n, 1));
  ctx.pool().parallelFor(0, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t offset = 0, rest = row;
      for (size_t d = rank - 1; d-- > 0;) {
        offset += (rest % outDims[d]) * cStrides[d];
        rest /= outDims[d];
      }
      float *dst = out + row * n;
      if (cDims.back() == n && n != 1)
        std::memcpy(dst, c + offset, n * sizeof(float));
      else
        std::fill(dst, dst + n, c[offset]);
    }
  });
}

} // namespace

void matmul(KernelContext &ctx) {
  checkOperands(ctx, 2, 3);
  const TensorView &a = ctx.input(0), &b = ctx.input(1);
  // The output's view: the arena's, or a Host buffer's of a shape set below
  // (a product on rows known only at run time: RunTimeShapes.cpp).
  const TensorView *outView = &ctx.output(0);
  const TensorView *c = ctx.numInputs() == 3 ? &ctx.input(2) : nullptr;
  auto shapes = [&] {
    std::string s = shapeToString(a.shape) + " x " + shapeToString(b.shape);
    if (c)
      s += " + " + shapeToString(c->shape);
    return s + " -> " + shapeToString(outView->shape);
  };
  int64_t transA = ctx.hasAttr("trans_a") ? ctx.attrInt("trans_a") : 0;
  int64_t transB = ctx.hasAttr("trans_b") ? ctx.attrInt("trans_b") : 0;
  if ((transA != 0 && transA != 1) || (transB != 0 && transB != 1))
    throw ctx.error("attributes 'trans_a' and 'trans_b' must be 0 or 1");
  float alpha = static_cast<float>(numberAttr(ctx, "alpha", 1.0));
  float beta = static_cast<float>(numberAttr(ctx, "beta", 1.0));

  if (a.shape.size() < 2 || b.shape.size() < 2)
    throw ctx.error("expects A and B of rank >= 2, got " + shapes());
  size_t rank = std::max(a.shape.size(), b.shape.size());
  if (rank > DNNL_MAX_NDIMS)
    throw ctx.error("supports ranks up to " + std::to_string(DNNL_MAX_NDIMS) +
                    ", got " + shapes());
  Dims aDims = padLeading(a.shape, rank), bDims = padLeading(b.shape, rank);
  int64_t m = aDims[rank - 2 + transA], k = aDims[rank - 1 - transA];
  int64_t kB = bDims[rank - 2 + transB], n = bDims[rank - 1 - transB];
  if (k != kB)
    throw ctx.error("has inner dimensions " + std::to_string(k) + " and " +
                    std::to_string(kB) + " that differ: " + shapes());
  Dims outDims(rank);
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (aDims[d] != bDims[d] && aDims[d] != 1 && bDims[d] != 1)
      throw ctx.error("has batch dimensions that do not broadcast: " +
                      shapes());
    outDims[d] = aDims[d] == 1 ? bDims[d] : aDims[d];
  }
  outDims[rank - 2] = m;
  outDims[rank - 1] = n;
  if (outView->shape != outDims) {
    bool runTime = std::any_of(outView->shape.begin(), outView->shape.end(),
                               [](int64_t d) { return d < 0; });
    if (!runTime)
      throw ctx.error("expects the output shape " + shapeToString(outDims) +
                      ", got " + shapes());
  }
  const TensorView &out = ctx.allocateOutput(0, outDims);
  Dims cDims;
  if (c) {
    bool fits = c->shape.size() <= rank;
    if (fits) {
      cDims = padLeading(c->shape, rank);
      for (size_t d = 0; d < rank; ++d)
        fits = fits && (cDims[d] == 1 || cDims[d] == outDims[d]);
    }
    if (!fits)
      throw ctx.error("has a C that does not broadcast to the output: " +
                      shapes());
  }
  if (out.numElements() == 0)
    return;
  if (k == 0)
    throw ctx.error("does not support an empty inner dimension: " + shapes());

  translateErrors(ctx, [&] {
    ScopedOmpThreads threads(ctx);
    MatmulState &state = ctx.state<MatmulState>();
    std::vector<int64_t> key = shapeKey(ctx);
    if (state.key != key) {
      state.key.clear();
      // Logical [..., M, K] and [..., K, N] over the stored layouts.
      auto logical = [](Dims dims, bool transposed) {
        dnnl::memory::dims strides = rowMajorStrides(dims);
        size_t r = dims.size();
        if (transposed) {
          std::swap(dims[r - 1], dims[r - 2]);
          std::swap(strides[r - 1], strides[r - 2]);
        }
        return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
      };
      // A product of one matrix B (its batch dimensions all 1) by stored
      // rows of A is one 2-D product of all of A's rows: oneDNN keeps a
      // batched B in its stored layout, while a 2-D one may be packed.
      bool flat = !transA && rank > 2;
      for (size_t d = 0; flat && d + 2 < rank; ++d)
        flat = bDims[d] == 1;
      Dims aShape = aDims, bShape = bDims, outShape = outDims,
           biasShape = cDims;
      if (flat) {
        aShape = {out.numElements() / n, k};
        bShape = {bDims[rank - 2], bDims[rank - 1]};
        outShape = {out.numElements() / n, n};
        if (c)
          biasShape = {1, cDims.back()};
      }
      state.a = logical(aShape, transA);
      state.b = logical(bShape, transB);
      state.dst = rowMajorDesc(outShape);
      bool rowBias = c && alpha == 1.f && beta == 1.f && cDims.back() == n;
      for (size_t d = 0; rowBias && d + 1 < rank; ++d)
        rowBias = cDims[d] == 1;
      state.nativeBias = rowBias;
      state.broadcastC = c && !rowBias ? cDims : Dims();
      dnnl::primitive_attr attr;
      if (alpha != 1.f)
        attr.set_output_scales(0, {alpha});
      dnnl::post_ops ops;
      if (!state.broadcastC.empty())
        ops.append_sum(beta);
      appendActivation(ctx, ops);
      attr.set_post_ops(ops);
      std::unique_ptr<dnnl::matmul::desc> desc;
      dnnl::memory::desc anyWeights(state.b.dims(),
                                    dnnl::memory::data_type::f32,
                                    dnnl::memory::format_tag::any);
      const dnnl::memory::desc &weightsDesc =
          ctx.inputIsConstant(1) ? anyWeights : state.b;
      if (state.nativeBias) {
        state.bias = rowMajorDesc(biasShape);
        desc = std::make_unique<dnnl::matmul::desc>(state.a, weightsDesc,
                                                    state.bias, state.dst);
      } else {
        desc = std::make_unique<dnnl::matmul::desc>(state.a, weightsDesc,
                                                    state.dst);
      }
      dnnl::matmul::primitive_desc pd(*desc, attr, cpuEngine());
      state.primitive = dnnl::matmul(pd);
      state.packedWeights = pd.weights_desc() != state.b;
      state.weights = dnnl::memory();
      state.weightsFrom = nullptr;
      if (state.packedWeights) {
        state.weights = dnnl::memory(pd.weights_desc(), cpuEngine());
        state.weightsReorder = dnnl::reorder(dnnl::reorder::primitive_desc(
            cpuEngine(), state.b, cpuEngine(), pd.weights_desc()));
      }
      state.stream = dnnl::stream(cpuEngine());
      state.key = std::move(key);
    }

    float *dst = out.as<float>();
    if (!state.broadcastC.empty() && !(c->data == out.data && cDims == outDims))
      broadcastInto(ctx, c->as<float>(), state.broadcastC, dst, outDims);
    const dnnl::engine &engine = cpuEngine();
    dnnl::memory weights(state.b, engine, b.data);
    if (state.packedWeights) {
      // Only a constant is packed (above), and its bytes never change.
      if (state.weightsFrom != b.data) {
        state.weightsReorder.execute(state.stream, weights, state.weights);
        state.weightsFrom = b.data;
      }
      weights = state.weights;
    }
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, dnnl::memory(state.a, engine, a.data)},
        {DNNL_ARG_WEIGHTS, weights},
        {DNNL_ARG_DST, dnnl::memory(state.dst, engine, dst)}};
    if (state.nativeBias)
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(state.bias, engine, c->data));
    state.primitive.execute(state.stream, args);
    state.stream.wait();
  });
}

} // namespace strata::rt::kernels::dnnl_support
