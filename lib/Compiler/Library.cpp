//===- Library.cpp - which ops go to vendor libraries -----------*- C++ -*-===//
//
// The library half of the partitioner's decisions: f32 matmul, gemm and
// convolution become oneDNN steps ("dnnl.matmul", "dnnl.conv"; the runtime's
// contract is in docs/runtime.md), with their epilogue fused as oneDNN
// post-ops: a bias add, a residual add (convolution), and one activation.
//
// When oneDNN wins: always for convolution (blocked layouts, JIT kernels per
// ISA), and for matmuls of at least kMinLibraryFlops multiply-adds; smaller
// ones stay generated code, where the call and primitive overheads would
// dominate and fusion with neighbours is worth more.
//
// An epilogue op joins only when the value it extends has no other user and
// its other operand is defined before the anchor op, so the group stays
// convex and the call can take the place of its last op.
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
namespace graph = strata::graph;
using strata::LibraryMatch;

static constexpr int64_t kMinLibraryFlops = 32 * 32 * 32;

static bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32();
}

static int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// Whether `v` is available before `anchor` runs (so using it in the fused
/// step keeps the group convex).
static bool definedBefore(Value v, Operation *anchor) {
  if (isa<BlockArgument>(v))
    return true;
  Operation *def = v.getDefiningOp();
  return def->getBlock() == anchor->getBlock() && def->isBeforeInBlock(anchor);
}

/// The single user of `v`, if it has exactly one use.
static Operation *soleUser(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  return *v.getUsers().begin();
}

/// A scalar float constant's value.
static std::optional<double> scalarConstant(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isF32())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// Adds the activation `op` to `match` if oneDNN has it.
static bool matchActivation(Operation *op, LibraryMatch &match,
                            MLIRContext *context) {
  auto set = [&](StringRef kind) {
    match.attrs.set("activation", StringAttr::get(context, kind));
  };
  auto setFloat = [&](StringRef key, double value) {
    match.attrs.set(key, FloatAttr::get(Float64Type::get(context), value));
  };
  if (isa<graph::ReluOp>(op)) {
    set("relu");
  } else if (isa<graph::SigmoidOp>(op)) {
    set("sigmoid");
  } else if (isa<graph::TanhOp>(op)) {
    set("tanh");
  } else if (auto gelu = dyn_cast<graph::GeluOp>(op)) {
    set(gelu.getApproximate() == "tanh" ? "gelu_tanh" : "gelu_erf");
  } else if (auto clip = dyn_cast<graph::ClipOp>(op)) {
    std::optional<double> lo = scalarConstant(clip.getMin());
    std::optional<double> hi = scalarConstant(clip.getMax());
    if ((clip.getMin() && !lo) || (clip.getMax() && !hi))
      return false;
    set("clip");
    setFloat("activation_alpha", lo.value_or(-3.4028234663852886e38));
    setFloat("activation_beta", hi.value_or(3.4028234663852886e38));
  } else {
    return false;
  }
  return true;
}

/// Extends `match` with the activation that consumes its current result.
static void addActivationEpilogue(LibraryMatch &match, MLIRContext *context) {
  Operation *user = soleUser(match.ops.back()->getResult(0));
  if (!user || user->getNumResults() != 1 ||
      user->getOperand(0) != match.ops.back()->getResult(0) ||
      !isF32Tensor(user->getResult(0)))
    return;
  if (matchActivation(user, match, context))
    match.ops.push_back(user);
}

/// The add that consumes `result` and its other operand, if any.
static std::pair<graph::AddOp, OpOperand *> addEpilogue(Value result,
                                                        Operation *anchor) {
  auto add = dyn_cast_or_null<graph::AddOp>(soleUser(result));
  if (!add || add.getType() != result.getType())
    return {};
  OpOperand *other = &add->getOpOperand(add.getLhs() == result ? 1 : 0);
  if (other->get() == result || !isF32Tensor(other->get()) ||
      !definedBefore(other->get(), anchor))
    return {};
  return {add, other};
}

static std::optional<LibraryMatch> matchMatmul(Operation *op) {
  MLIRContext *context = op->getContext();
  LibraryMatch match;
  match.library = "dnnl.matmul";
  Value result = op->getResult(0);
  if (!isF32Tensor(result))
    return std::nullopt;
  auto outType = cast<RankedTensorType>(result.getType());
  int64_t k = 0;
  if (auto matmul = dyn_cast<graph::MatMulOp>(op)) {
    if (!isF32Tensor(matmul.getLhs()) || !isF32Tensor(matmul.getRhs()) ||
        rankOf(matmul.getLhs()) < 2 || rankOf(matmul.getRhs()) < 2)
      return std::nullopt;
    k = cast<RankedTensorType>(matmul.getLhs().getType()).getShape().back();
    match.inputs = {&op->getOpOperand(0), &op->getOpOperand(1)};
  } else if (auto gemm = dyn_cast<graph::GemmOp>(op)) {
    if (!isF32Tensor(gemm.getA()) || !isF32Tensor(gemm.getB()) ||
        (gemm.getC() && !isF32Tensor(gemm.getC())))
      return std::nullopt;
    auto aType = cast<RankedTensorType>(gemm.getA().getType());
    k = aType.getShape()[gemm.getTransA() ? 0 : 1];
    match.inputs = {&op->getOpOperand(0), &op->getOpOperand(1)};
    if (gemm.getC())
      match.inputs.push_back(&gemm.getCMutable()[0]);
    auto i64 = IntegerType::get(context, 64);
    auto f64 = Float64Type::get(context);
    match.attrs.set("trans_a", IntegerAttr::get(i64, gemm.getTransA() ? 1 : 0));
    match.attrs.set("trans_b", IntegerAttr::get(i64, gemm.getTransB() ? 1 : 0));
    match.attrs.set("alpha",
                    FloatAttr::get(f64, gemm.getAlpha().convertToDouble()));
    match.attrs.set("beta",
                    FloatAttr::get(f64, gemm.getBeta().convertToDouble()));
  } else {
    return std::nullopt;
  }
  if (outType.getNumElements() * k < kMinLibraryFlops)
    return std::nullopt;
  match.ops.push_back(op);
  if (match.inputs.size() == 2) {
    auto [add, bias] = addEpilogue(result, op);
    if (add) {
      match.inputs.push_back(bias);
      match.ops.push_back(add);
    }
  }
  addActivationEpilogue(match, context);
  match.reason = "f32 matmul of " +
                 std::to_string(outType.getNumElements() * k) +
                 " multiply-adds: oneDNN's blocked kernels";
  return match;
}

static std::optional<LibraryMatch> matchConv(graph::ConvOp conv) {
  MLIRContext *context = conv->getContext();
  if (!isF32Tensor(conv.getInput()) || !isF32Tensor(conv.getWeight()) ||
      !isF32Tensor(conv.getOutput()) ||
      (conv.getBias() && !isF32Tensor(conv.getBias())))
    return std::nullopt;
  int64_t rank = rankOf(conv.getInput());
  if (rank < 3 || rank > 5 || conv.getAutoPad() != "NOTSET")
    return std::nullopt;
  int64_t spatial = rank - 2;
  auto orOnes = [&](std::optional<ArrayRef<int64_t>> v, int64_t n,
                    int64_t fill) {
    return v ? SmallVector<int64_t>(v->begin(), v->end())
             : SmallVector<int64_t>(n, fill);
  };
  LibraryMatch match;
  match.library = "dnnl.conv";
  match.inputs = {&conv->getOpOperand(0), &conv->getOpOperand(1)};
  if (conv.getBias())
    match.inputs.push_back(&conv.getBiasMutable()[0]);
  auto i64 = IntegerType::get(context, 64);
  match.attrs.set(
      "strides",
      DenseI64ArrayAttr::get(context, orOnes(conv.getStrides(), spatial, 1)));
  match.attrs.set(
      "dilations",
      DenseI64ArrayAttr::get(context, orOnes(conv.getDilations(), spatial, 1)));
  match.attrs.set("pads", DenseI64ArrayAttr::get(
                              context, orOnes(conv.getPads(), 2 * spatial, 0)));
  match.attrs.set("group", IntegerAttr::get(i64, conv.getGroup()));
  match.ops.push_back(conv);
  // A residual add of the output's shape becomes oneDNN's sum post-op.
  auto [add, other] = addEpilogue(conv.getOutput(), conv);
  if (add && other->get().getType() == conv.getOutput().getType()) {
    match.inputs.push_back(other);
    match.ops.push_back(add);
  }
  addActivationEpilogue(match, context);
  match.reason = "f32 convolution: oneDNN's JIT kernels";
  return match;
}

std::optional<LibraryMatch> strata::matchLibraryKernel(Operation *op) {
  if (isa<graph::MatMulOp, graph::GemmOp>(op))
    return matchMatmul(op);
  if (auto conv = dyn_cast<graph::ConvOp>(op))
    return matchConv(conv);
  return std::nullopt;
}
