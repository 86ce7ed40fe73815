//===- HostLoop.cpp - ONNX Loop with a trip count known at run time -------===//
//
// "host.loop" runs an ONNX Loop whose trip count or condition is known only
// when the model runs (Mask R-CNN pastes each detection's mask into the
// image, Keypoint R-CNN turns each detection's heatmaps into points: one
// iteration per detection). The compiler unrolls every Loop whose trip count
// it knows; one left to run time computes on shapes of run time, so its body
// is host work: each body op is one of the runtime's host kernels
// (lib/Compiler/LibraryHostOps.cpp writes the body, HostOps.cpp runs its
// ops).
//
// The step's inputs are the Loop's operands (max trip count and condition
// when present, then the initial loop-carried values) followed by the outer
// values the body reads. Its attributes describe the body as a sub-plan over
// numbered values ("slots"): the step's inputs are slots 0..I-1, the body's
// arguments (iteration number, condition, carried values) the next ones, and
// each body op's results the ones after, in order:
//
//   has_max_trip_count, has_condition, num_carried: the Loop's operands;
//   outputs: which of the Loop's results are the step's outputs;
//   body: the host kernel of each body op ("host.slice", ...);
//   body_inputs: per op, a count and then the slots it reads;
//   body_outputs: per op, how many results it writes (to the next slots);
//   body_types: per body argument, then per op result: dtype, rank, dims
//     (-1 where the size is set when it runs);
//   body_yield: the slots the body yields (condition, carried, scans);
//   body_nodes: the ONNX node of each op, for messages;
//   op<K>.<key>: the attributes of body op K.
//
// Every iteration runs the body's kernels on host tensors; the carried
// values and the scan outputs are copied out of them, and the scan outputs
// are stacked along a new first axis at the end (ONNX's Loop).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace strata::rt::kernels {

namespace {

using Shape = std::vector<int64_t>;

struct BodyOp {
  Step step;
  KernelFn fn = nullptr;
  std::vector<int64_t> inputs, outputs;
};

struct SlotType {
  DType dtype = DType::F32;
  Shape shape;
};

/// The body, read from the step's attributes on its first run.
struct LoopPlan : KernelState {
  bool ready = false;
  bool hasMax = false, hasCondition = false;
  int64_t numCarried = 0;
  std::vector<int64_t> outputs;
  std::vector<BodyOp> ops;
  /// Types of the body's arguments and op results, from slot `argBase`.
  std::vector<SlotType> types;
  int64_t argBase = 0, numSlots = 0;
  std::vector<int64_t> yields;
  /// Per carried value, the body op that appends to it, or -1 (appendOp).
  std::vector<int64_t> appendOps;
  /// Per carried value: whether the slot it is yielded from is an op result
  /// that nothing else takes, so that it moves out instead of being copied.
  std::vector<bool> movable;
};

/// Reads a list of `count`-prefixed groups of slots.
std::vector<std::vector<int64_t>> groups(KernelContext &ctx, const char *key,
                                         size_t expected) {
  const std::vector<int64_t> &flat = ctx.attrInts(key);
  std::vector<std::vector<int64_t>> result;
  size_t at = 0;
  while (at < flat.size()) {
    int64_t count = flat[at++];
    if (count < 0 || static_cast<size_t>(count) > flat.size() - at)
      throw ctx.error(std::string("has a malformed '") + key + "'");
    result.emplace_back(flat.begin() + at, flat.begin() + at + count);
    at += count;
  }
  if (result.size() != expected)
    throw ctx.error(std::string("has ") + std::to_string(result.size()) +
                    " groups in '" + key + "' for " + std::to_string(expected) +
                    " body ops");
  return result;
}

/// How many times the body reads `slot` (as an op input or a yield).
int64_t uses(const LoopPlan &plan, int64_t slot) {
  int64_t n = 0;
  for (const BodyOp &op : plan.ops)
    for (int64_t in : op.inputs)
      n += in == slot;
  for (int64_t y : plan.yields)
    n += y == slot;
  return n;
}

/// A carried value that the body only extends, `c = Concat(c, x, ...)` along
/// the first axis, is how exporters write a list grown in a loop
/// (torchvision pastes each detection's mask so). Run as written, iteration
/// i copies the i values before it twice (the Concat, then the carried copy):
/// quadratic, 1.3 GB of copies for Mask R-CNN's 100 masks of 256x256. Such
/// a Concat is not run; each iteration keeps its other operands, and the
/// result is made once at the end, in linear time. `appendOps[c]` is the
/// body op of such a Concat, or -1.
void findAppends(KernelContext &ctx, LoopPlan &plan) {
  plan.appendOps.assign(plan.numCarried, -1);
  plan.movable.assign(plan.numCarried, false);
  int64_t firstResult = plan.argBase + 2 + plan.numCarried;
  for (int64_t c = 0; c < plan.numCarried; ++c) {
    int64_t arg = plan.argBase + 2 + c, yield = plan.yields[1 + c];
    plan.movable[c] = yield >= firstResult && uses(plan, yield) == 1;
    if (!plan.movable[c] || uses(plan, arg) != 1)
      continue;
    const SlotType &type = plan.types[2 + c];
    for (size_t k = 0; k < plan.ops.size(); ++k) {
      const BodyOp &op = plan.ops[k];
      if (op.outputs.size() != 1 || op.outputs[0] != yield)
        continue;
      if (op.step.name != "host.concat" || op.inputs.size() < 2 ||
          op.inputs[0] != arg || type.dtype == DType::String ||
          type.shape.empty())
        break;
      KernelContext probe(op.step, ctx.stepIndex(), ctx.module(), {}, {},
                          ctx.pool());
      int64_t axis = probe.attrInt("axis");
      if (axis == 0 || axis == -static_cast<int64_t>(type.shape.size()))
        plan.appendOps[c] = static_cast<int64_t>(k);
      break;
    }
  }
}

/// Concatenates `pieces` after `first` along the first axis (appendOps).
Tensor concatRows(KernelContext &ctx, const Tensor &first,
                  const std::vector<Tensor> &pieces) {
  Shape shape = first.shape();
  for (const Tensor &p : pieces) {
    const Shape &ps = p.shape();
    if (ps.size() != shape.size() ||
        !std::equal(ps.begin() + 1, ps.end(), shape.begin() + 1))
      throw ctx.error("appends a value of shape " + shapeToString(ps) +
                      " to a carried value of shape " + shapeToString(shape) +
                      " along the first axis; the other sizes must agree");
    shape[0] += ps[0];
  }
  Tensor t = Tensor::uninitialized(first.dtype(), shape);
  auto *bytes = static_cast<uint8_t *>(t.rawData());
  auto append = [&](const Tensor &p) {
    if (p.byteSize())
      std::memcpy(bytes, p.rawData(), p.byteSize());
    bytes += p.byteSize();
  };
  append(first);
  for (const Tensor &p : pieces)
    append(p);
  return t;
}

void parse(KernelContext &ctx, LoopPlan &plan) {
  plan.hasMax = ctx.attrInt("has_max_trip_count") != 0;
  plan.hasCondition = ctx.attrInt("has_condition") != 0;
  plan.numCarried = ctx.attrInt("num_carried");
  plan.outputs = ctx.attrInts("outputs");
  auto numInputs = static_cast<int64_t>(ctx.numInputs());
  int64_t operands = plan.hasMax + plan.hasCondition + plan.numCarried;
  if (plan.numCarried < 0 || operands > numInputs)
    throw ctx.error("has " + std::to_string(numInputs) + " inputs for " +
                    std::to_string(operands) + " Loop operands");
  const std::vector<std::string> &names = ctx.attrStrings("body");
  const std::vector<std::string> &nodes = ctx.attrStrings("body_nodes");
  if (nodes.size() != names.size())
    throw ctx.error("has " + std::to_string(nodes.size()) + " body nodes for " +
                    std::to_string(names.size()) + " body ops");
  auto ins = groups(ctx, "body_inputs", names.size());
  const std::vector<int64_t> &outs = ctx.attrInts("body_outputs");
  if (outs.size() != names.size())
    throw ctx.error("has " + std::to_string(outs.size()) +
                    " result counts in 'body_outputs' for " +
                    std::to_string(names.size()) + " body ops");
  plan.argBase = numInputs;
  int64_t numArgs = 2 + plan.numCarried;
  // Types: the body's arguments, then every op result in order.
  const std::vector<int64_t> &typeList = ctx.attrInts("body_types");
  size_t at = 0;
  auto nextType = [&]() {
    if (at + 2 > typeList.size())
      throw ctx.error("has too few 'body_types'");
    SlotType t;
    int64_t dtype = typeList[at++], rank = typeList[at++];
    if (dtype < 0 || dtype >= static_cast<int64_t>(kNumDTypes) || rank < 0 ||
        static_cast<size_t>(rank) > typeList.size() - at)
      throw ctx.error("has a malformed 'body_types'");
    t.dtype = static_cast<DType>(dtype);
    t.shape.assign(typeList.begin() + at, typeList.begin() + at + rank);
    at += rank;
    return t;
  };
  for (int64_t a = 0; a < numArgs; ++a)
    plan.types.push_back(nextType());
  int64_t slot = plan.argBase + numArgs;
  for (size_t k = 0; k < names.size(); ++k) {
    BodyOp op;
    op.step.kind = StepKind::Library;
    op.step.name = names[k];
    if (!nodes[k].empty())
      op.step.sourceNodes.push_back(nodes[k]);
    op.fn = lookupKernel(names[k]);
    if (!op.fn || names[k] == "host.loop")
      throw ctx.error("has a body op '" + names[k] +
                      "' that is not one of the runtime's host kernels");
    std::string own = "op" + std::to_string(k) + ".";
    for (const Attribute &a : ctx.step().attributes)
      if (a.key.compare(0, own.size(), own) == 0) {
        Attribute copy = a;
        copy.key = a.key.substr(own.size());
        op.step.attributes.push_back(std::move(copy));
      }
    for (int64_t in : ins[k])
      if (in < 0 || in >= slot)
        throw ctx.error("body op " + std::to_string(k) + " reads slot " +
                        std::to_string(in) + " before it is written");
    op.inputs = ins[k];
    if (outs[k] < 0)
      throw ctx.error("body op " + std::to_string(k) + " writes " +
                      std::to_string(outs[k]) + " results");
    for (int64_t o = 0; o < outs[k]; ++o) {
      plan.types.push_back(nextType());
      op.outputs.push_back(slot++);
    }
    plan.ops.push_back(std::move(op));
  }
  plan.numSlots = slot;
  plan.yields = ctx.attrInts("body_yield");
  if (static_cast<int64_t>(plan.yields.size()) < 1 + plan.numCarried)
    throw ctx.error("yields " + std::to_string(plan.yields.size()) +
                    " values for " + std::to_string(plan.numCarried) +
                    " carried values and the condition");
  for (int64_t y : plan.yields)
    if (y < 0 || y >= slot)
      throw ctx.error("yields slot " + std::to_string(y) +
                      ", which the body does not write");
  int64_t results = static_cast<int64_t>(plan.yields.size()) - 1;
  if (plan.outputs.size() != ctx.numOutputs())
    throw ctx.error("names " + std::to_string(plan.outputs.size()) +
                    " Loop results for " + std::to_string(ctx.numOutputs()) +
                    " outputs");
  for (int64_t r : plan.outputs)
    if (r < 0 || r >= results)
      throw ctx.error("has no Loop result " + std::to_string(r));
  findAppends(ctx, plan);
  plan.ready = true;
}

/// A host tensor holding a copy of `view`.
Tensor copyOf(KernelContext &ctx, const TensorView &view) {
  if (view.dtype == DType::String)
    throw ctx.error("carries strings, which the host loop does not copy");
  Tensor t = Tensor::uninitialized(view.dtype, view.shape);
  if (t.byteSize())
    std::memcpy(t.rawData(), view.data, t.byteSize());
  return t;
}

/// The iteration number (i64) or the condition (i1): one element, of the
/// body argument's rank.
Tensor scalar(KernelContext &ctx, DType dtype, const Shape &shape,
              int64_t value) {
  if (shape.size() > 1)
    throw ctx.error("has a body argument of rank " +
                    std::to_string(shape.size()) +
                    " for the iteration number or the condition");
  Tensor t = Tensor::zeros(dtype, Shape(shape.size(), 1));
  if (dtype == DType::I1 || dtype == DType::U8)
    *static_cast<uint8_t *>(t.rawData()) = value != 0;
  else
    *static_cast<int64_t *>(t.rawData()) = value;
  return t;
}

int64_t firstInteger(KernelContext &ctx, const TensorView &v,
                     const char *what) {
  if (v.numElements() != 1)
    throw ctx.error(std::string("has a ") + what + " of " + describe(v) +
                    "; expected one element");
  switch (v.dtype) {
  case DType::I64:
    return *static_cast<const int64_t *>(v.data);
  case DType::I32:
    return *static_cast<const int32_t *>(v.data);
  case DType::I1:
  case DType::U8:
    return *static_cast<const uint8_t *>(v.data);
  default:
    throw ctx.error(std::string("has a ") + what + " of " + describe(v) +
                    "; expected i64 or bool");
  }
}

void loop(KernelContext &ctx) {
  LoopPlan &plan = ctx.state<LoopPlan>();
  if (!plan.ready)
    parse(ctx, plan);
  size_t next = 0;
  int64_t maxTrips = std::numeric_limits<int64_t>::max();
  if (plan.hasMax)
    maxTrips = firstInteger(ctx, ctx.input(next++), "trip count");
  bool condition = true;
  if (plan.hasCondition)
    condition = firstInteger(ctx, ctx.input(next++), "condition") != 0;
  std::vector<Tensor> carried;
  for (int64_t c = 0; c < plan.numCarried; ++c)
    carried.push_back(copyOf(ctx, ctx.input(next++)));
  size_t numScans = plan.yields.size() - 1 - plan.numCarried;
  std::vector<std::vector<Tensor>> scans(numScans);

  // Per carried value that the body appends to (appendOps), each
  // iteration's rows; carried[c] stays the initial value until the end.
  std::vector<std::vector<Tensor>> appended(plan.numCarried);
  std::vector<Tensor> owned(plan.numSlots);
  std::vector<TensorView> views(plan.numSlots);
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    views[i] = ctx.input(i);
  int64_t trip = 0;
  for (; trip < maxTrips && condition; ++trip) {
    int64_t arg = plan.argBase;
    owned[arg] = scalar(ctx, DType::I64, plan.types[0].shape, trip);
    owned[arg + 1] = scalar(ctx, DType::I1, plan.types[1].shape, 1);
    for (int64_t c = 0; c < plan.numCarried; ++c)
      if (plan.appendOps[c] < 0)
        owned[arg + 2 + c] = std::move(carried[c]);
    for (int64_t a = 0; a < 2 + plan.numCarried; ++a)
      views[arg + a] = owned[arg + a].view();
    for (size_t k = 0; k < plan.ops.size(); ++k) {
      const BodyOp &op = plan.ops[k];
      auto append = std::find(plan.appendOps.begin(), plan.appendOps.end(),
                              static_cast<int64_t>(k));
      if (append != plan.appendOps.end()) {
        std::vector<Tensor> &rows = appended[append - plan.appendOps.begin()];
        for (size_t i = 1; i < op.inputs.size(); ++i)
          rows.push_back(copyOf(ctx, views[op.inputs[i]]));
        continue;
      }
      std::vector<TensorView> ins, outs;
      for (int64_t in : op.inputs)
        ins.push_back(views[in]);
      for (int64_t out : op.outputs) {
        const SlotType &t = plan.types[out - plan.argBase];
        outs.push_back(TensorView{t.dtype, t.shape, nullptr});
      }
      KernelContext sub(op.step, ctx.stepIndex(), ctx.module(), std::move(ins),
                        std::move(outs), ctx.pool());
      // The previous iteration's tensor is reused where it is large enough
      // (KernelContext::allocateOutput).
      for (size_t o = 0; o < op.outputs.size(); ++o)
        sub.bindHostOutput(o, &owned[op.outputs[o]]);
      try {
        op.fn(sub);
      } catch (const OutOfMemory &) {
        throw;
      } catch (const Error &e) {
        throw ctx.error("iteration " + std::to_string(trip) + ": " + e.what());
      }
      for (int64_t out : op.outputs)
        views[out] = owned[out].view();
    }
    if (plan.hasCondition)
      condition = firstInteger(ctx, views[plan.yields[0]], "condition") != 0;
    for (int64_t c = 0; c < plan.numCarried; ++c) {
      int64_t slot = plan.yields[1 + c];
      if (plan.appendOps[c] >= 0)
        continue;
      carried[c] =
          plan.movable[c] ? std::move(owned[slot]) : copyOf(ctx, views[slot]);
    }
    for (size_t s = 0; s < numScans; ++s)
      scans[s].push_back(
          copyOf(ctx, views[plan.yields[1 + plan.numCarried + s]]));
  }

  for (int64_t c = 0; c < plan.numCarried; ++c)
    if (plan.appendOps[c] >= 0 && !appended[c].empty())
      carried[c] = concatRows(ctx, carried[c], appended[c]);
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    auto r = static_cast<size_t>(plan.outputs[o]);
    if (r < static_cast<size_t>(plan.numCarried)) {
      const Tensor &value = carried[r];
      TensorView &out = ctx.allocateOutput(o, value.shape());
      if (value.byteSize())
        std::memcpy(out.data, value.rawData(), value.byteSize());
      continue;
    }
    const std::vector<Tensor> &slices = scans[r - plan.numCarried];
    // Each iteration's value, stacked along a new first axis; without
    // iterations, the declared shape with 0 rows (unknown sizes 0).
    Shape shape;
    if (slices.empty()) {
      shape = ctx.output(o).shape;
      for (int64_t &d : shape)
        d = d < 0 ? 0 : d;
      if (!shape.empty())
        shape[0] = 0;
    } else {
      shape = slices[0].shape();
      shape.insert(shape.begin(), static_cast<int64_t>(slices.size()));
    }
    TensorView &out = ctx.allocateOutput(o, shape);
    auto *bytes = static_cast<uint8_t *>(out.data);
    for (size_t s = 0; s < slices.size(); ++s) {
      if (slices[s].shape() != slices[0].shape())
        throw ctx.error("scan output " + std::to_string(r) + " has shape " +
                        shapeToString(slices[s].shape()) + " at iteration " +
                        std::to_string(s) + " and " +
                        shapeToString(slices[0].shape()) +
                        " at iteration 0; ONNX stacks equal shapes");
      if (slices[s].byteSize())
        std::memcpy(bytes + s * slices[s].byteSize(), slices[s].rawData(),
                    slices[s].byteSize());
    }
  }
}

} // namespace

void registerHostLoopKernel(
    const std::function<void(const std::string &, KernelFn)> &add) {
  add("host.loop", loop);
}

} // namespace strata::rt::kernels
