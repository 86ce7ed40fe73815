//===- DnnlConcat.cpp - "dnnl.concat": oneDNN concatenation -----*- C++ -*-===//
//
// Joins [N, C_i, D...] inputs along the channel axis (attribute `axis`,
// which must be 1) into [N, sum C_i, D...]. Each input may be row-major or
// channels-last (`src_layout_<i>`), and so may the output (`dst_layout`):
// the compiler gives a concat between convolutions channels-last buffers
// (Layouts.cpp), so that the branches of an Inception or SqueezeNet block
// need no conversion on either side.
//
// When every buffer is channels-last (the usual case between convolutions),
// the kernel copies each pixel's channels itself, rows of pixels split over
// the session's threads: oneDNN 2.6's concat ("simple:any") was about twice
// as slow there at 2 threads, and SqueezeNet's concats were a sixth of its
// run (bench/RESULTS.md, 2026-12-06 22:30). Any other mix of layouts is
// oneDNN's concat, which converts as it copies.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"
#include "Omp.h"

#include <cstring>

namespace strata::rt::kernels::dnnl_support {

namespace {

struct ConcatState : KernelState {
  std::vector<int64_t> key;
  dnnl::concat primitive;
  std::vector<dnnl::memory::desc> srcs;
  dnnl::memory::desc dst;
  dnnl::stream stream;
};

/// Whether the attribute `name` says channels-last (absent: row-major).
bool channelsLast(const KernelContext &ctx, const std::string &name) {
  return ctx.hasAttr(name) && ctx.attrString(name) == "channels_last";
}

/// Copies channels-last inputs into a channels-last output: each pixel's
/// row of channels is the inputs' rows one after another.
void concatChannelsLast(KernelContext &ctx) {
  const TensorView &out = ctx.output(0);
  int64_t pixels = out.numElements() / out.shape[1];
  size_t n = ctx.numInputs();
  std::vector<const char *> srcs(n);
  std::vector<size_t> bytes(n);
  for (size_t i = 0; i < n; ++i) {
    srcs[i] = static_cast<const char *>(ctx.input(i).data);
    bytes[i] = static_cast<size_t>(ctx.input(i).shape[1]) * sizeof(float);
  }
  size_t rowBytes = static_cast<size_t>(out.shape[1]) * sizeof(float);
  char *dst = static_cast<char *>(out.data);
  auto share = [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      char *row = dst + static_cast<size_t>(p) * rowBytes;
      for (size_t i = 0; i < n; ++i) {
        std::memcpy(row, srcs[i] + static_cast<size_t>(p) * bytes[i], bytes[i]);
        row += bytes[i];
      }
    }
  };
  ScopedOmpThreads threads(ctx);
  omp::shareOverThreads(pixels, share);
}

} // namespace

void concat(KernelContext &ctx) {
  // DNNL_ARG_MULTIPLE_SRC + i numbers the inputs below DNNL_ARG_MULTIPLE_DST.
  checkOperands(ctx, 1, DNNL_ARG_MULTIPLE_DST - DNNL_ARG_MULTIPLE_SRC);
  const TensorView &out = ctx.output(0);
  int64_t axis = ctx.hasAttr("axis") ? ctx.attrInt("axis") : 1;
  size_t rank = out.shape.size();
  if (axis != 1 || rank < 3)
    throw ctx.error("joins [N, C, D...] tensors along axis 1; got axis " +
                    std::to_string(axis) + " of a rank-" +
                    std::to_string(rank) + " output");
  int64_t channels = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    const TensorView &x = ctx.input(i);
    bool fits = x.shape.size() == rank;
    for (size_t d = 0; fits && d < rank; ++d)
      fits = d == 1 || x.shape[d] == out.shape[d];
    if (!fits)
      throw ctx.error("input " + std::to_string(i) + " " +
                      shapeToString(x.shape) + " does not match the output " +
                      shapeToString(out.shape) + " outside axis 1");
    channels += x.shape[1];
  }
  if (channels != out.shape[1])
    throw ctx.error("the inputs have " + std::to_string(channels) +
                    " channels in all; the output " + shapeToString(out.shape) +
                    " has " + std::to_string(out.shape[1]));
  if (out.numElements() == 0)
    return;
  bool allChannelsLast = channelsLast(ctx, "dst_layout");
  for (size_t i = 0; allChannelsLast && i < ctx.numInputs(); ++i)
    allChannelsLast = channelsLast(ctx, "src_layout_" + std::to_string(i));
  if (allChannelsLast)
    return concatChannelsLast(ctx);

  translateErrors(ctx, [&] {
    ScopedOmpThreads threads(ctx);
    ConcatState &state = ctx.state<ConcatState>();
    std::vector<int64_t> key = shapeKey(ctx);
    if (state.key != key) {
      state.key.clear();
      state.srcs.clear();
      for (size_t i = 0; i < ctx.numInputs(); ++i)
        state.srcs.push_back(activationDesc(
            ctx, "src_layout_" + std::to_string(i), ctx.input(i).shape));
      state.dst = activationDesc(ctx, "dst_layout", out.shape);
      state.primitive = dnnl::concat(
          dnnl::concat::primitive_desc(state.dst, 1, state.srcs, cpuEngine()));
      state.stream = dnnl::stream(cpuEngine());
      state.key = std::move(key);
    }
    const dnnl::engine &engine = cpuEngine();
    std::unordered_map<int, dnnl::memory> args;
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i),
                   dnnl::memory(state.srcs[i], engine, ctx.input(i).data));
    args.emplace(DNNL_ARG_DST, dnnl::memory(state.dst, engine, out.data));
    state.primitive.execute(state.stream, args);
    state.stream.wait();
  });
}

} // namespace strata::rt::kernels::dnnl_support
