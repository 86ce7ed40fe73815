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
// Every decision comes with its reason in words (LibraryMatch::reason,
// joinReasons, refused, and `whyNot` when there is no match), which the
// partitioner keeps in the IR for `strata explain`.
//
//===----------------------------------------------------------------------===//

#include "Library.h"
#include "CompilerUtils.h"
#include "Decisions.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
namespace graph = strata::graph;
using strata::LibraryMatch;
using strata::LibraryRequest;

static constexpr int64_t kMinLibraryFlops = 32 * 32 * 32;

static bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32();
}

static int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

/// "f32", "i64", "tensor<?xf32>" for messages about operand types.
static std::string typeText(Value v) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (type && type.hasStaticShape())
    os << type.getElementType();
  else
    os << v.getType();
  return text;
}

/// Whether `v` is available before `anchor` runs (so using it in the fused
/// step keeps the group convex).
static bool definedBefore(Value v, Operation *anchor) {
  if (isa<BlockArgument>(v))
    return true;
  Operation *def = v.getDefiningOp();
  return def->getBlock() == anchor->getBlock() && def->isBeforeInBlock(anchor);
}

std::optional<double> strata::splatFloatConstant(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

std::optional<int64_t> strata::splatIntConstant(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APInt>().getSExtValue();
}

/// A scalar f32 constant's value (oneDNN's post-ops take f32 bounds).
static std::optional<double> scalarConstant(Value v) {
  if (!v || !getElementTypeOrSelf(v.getType()).isF32())
    return std::nullopt;
  return strata::splatFloatConstant(v);
}

/// The elements from which an activation that oneDNN computes slowly is
/// generated rather than fused (EpilogueBuilder::costlierThanGenerated).
constexpr int64_t kMinGeneratedActivation = 16384;

namespace {
/// Grows a match's epilogue, recording why each reader of the step's value
/// joined or did not.
struct EpilogueBuilder {
  LibraryMatch &match;
  const LibraryRequest &request;
  /// "matmul" or "convolution", for reasons.
  StringRef what;
  /// The library, for reasons.
  StringRef vendor = "oneDNN";

  Value result() { return match.ops.back()->getResult(0); }

  void refuse(Operation *op, const std::string &why) {
    for (auto &entry : match.refused)
      if (entry.first == op)
        return;
    match.refused.push_back({op, why});
  }

  /// The sole reader of the step's current value, or null when there is
  /// none or several (those are refused, with the reason).
  Operation *soleUser() {
    Value v = result();
    if (v.use_empty())
      return nullptr;
    if (v.hasOneUse())
      return *v.getUsers().begin();
    unsigned users = std::distance(v.getUses().begin(), v.getUses().end());
    for (Operation *user : v.getUsers())
      refuse(user, "the " + what.str() + "'s result has " +
                       std::to_string(users) + " readers; " + vendor.str() +
                       "'s epilogue can only extend a value nothing else "
                       "reads");
    return nullptr;
  }

  /// Whether the decisions file keeps `op` out of the step (refused then).
  bool vetoed(Operation *op) {
    if (!request.epilogueVeto)
      return false;
    std::string why = request.epilogueVeto(match.ops, op);
    if (why.empty())
      return false;
    refuse(op, why);
    return true;
  }

  void join(Operation *op, const std::string &why) {
    match.ops.push_back(op);
    match.joinReasons.push_back(why);
  }

  /// The add reading the current value, and its other operand, when that
  /// operand can be an input of the step: of the result's element type,
  /// computed before the step starts, not the result itself. Otherwise the
  /// add (if any) is refused with the reason.
  std::pair<graph::AddOp, OpOperand *> addCandidate() {
    Value v = result();
    Operation *user = soleUser();
    auto add = dyn_cast_or_null<graph::AddOp>(user);
    if (!add)
      return {};
    if (vetoed(add))
      return {};
    if (add.getType() != v.getType()) {
      refuse(add, "the add broadcasts the " + what.str() +
                      "'s result to a larger shape; " + vendor.str() +
                      " writes the result's own shape");
      return {};
    }
    OpOperand *other = &add->getOpOperand(add.getLhs() == v ? 1 : 0);
    if (other->get() == v) {
      refuse(add, "the add reads the " + what.str() + "'s result twice");
      return {};
    }
    auto otherType = dyn_cast<RankedTensorType>(other->get().getType());
    if (!otherType || !otherType.hasStaticShape() ||
        otherType.getElementType() !=
            cast<RankedTensorType>(v.getType()).getElementType()) {
      refuse(add, "the added tensor is " + typeText(other->get()) + "; " +
                      vendor.str() + " adds tensors of the " + what.str() +
                      "'s element type, " + typeText(v));
      return {};
    }
    if (!definedBefore(other->get(), match.ops.front())) {
      refuse(add, "the added tensor is computed after the " + what.str() +
                      " starts; fusing it would need the step to wait for "
                      "it (not convex)");
      return {};
    }
    return {add, other};
  }

  /// addCandidate for oneDNN: the bias or sum input. `sameShape`: the other
  /// operand must have the output's type (oneDNN's sum post-op).
  std::pair<graph::AddOp, OpOperand *> addEpilogue(bool sameShape) {
    auto [add, other] = addCandidate();
    if (!add)
      return {};
    if (sameShape && other->get().getType() != result().getType()) {
      refuse(add, "the added tensor's shape differs from the output's; "
                  "oneDNN's sum post-op adds a tensor of the output's shape");
      return {};
    }
    return {add, other};
  }

  static bool isActivation(Operation *op) {
    return isa<graph::ReluOp, graph::SigmoidOp, graph::TanhOp, graph::GeluOp,
               graph::ClipOp>(op);
  }

  /// The gate g of a gated activation x * g(x) on the current value x, as
  /// exporters write SiLU (x * sigmoid(x)) and hard swish (x *
  /// hardsigmoid(x): x * clip(x / 6 + 0.5, 0, 1), timm's x * relu6(x + 3) /
  /// 6, the importer's expansion of ONNX HardSwish): x has two readers, a
  /// chain of single-reader elementwise ops on x alone (the gate) and the
  /// multiply of x by the chain's end. Returns the chain, the multiply last,
  /// and the oneDNN activation it equals, or nothing.
  std::pair<SmallVector<Operation *>, std::string> gatedActivation() {
    Value v = result();
    SmallVector<Operation *> users;
    for (OpOperand &use : v.getUses())
      users.push_back(use.getOwner());
    if (users.size() != 2 || users[0] == users[1])
      return {};
    for (int start = 0; start < 2; ++start) {
      auto mul = dyn_cast<graph::MulOp>(users[1 - start]);
      if (!mul || mul.getType() != v.getType() || !isF32Tensor(mul.getResult()))
        continue;
      SmallVector<Operation *> chain;
      Value current = v;
      Operation *op = users[start];
      while (op != mul.getOperation() && chain.size() < 6) {
        if (op->getNumResults() != 1 ||
            op->getResult(0).getType() != v.getType() ||
            !op->getResult(0).hasOneUse())
          break;
        chain.push_back(op);
        current = op->getResult(0);
        op = *current.getUsers().begin();
      }
      if (op != mul.getOperation() || chain.empty())
        continue;
      bool operands = (mul.getLhs() == v && mul.getRhs() == current) ||
                      (mul.getRhs() == v && mul.getLhs() == current);
      if (!operands)
        continue;
      std::string kind = gateKind(chain, v);
      if (kind.empty())
        continue;
      chain.push_back(mul);
      return {chain, kind};
    }
    return {};
  }

  /// One op of a gate at x, when it is elementwise on the chain's value and
  /// scalar constants.
  static std::optional<double> gateStep(Operation *op, Value in, double x) {
    auto binary = [&](auto apply) -> std::optional<double> {
      Value lhs = op->getOperand(0), rhs = op->getOperand(1);
      if (lhs == in)
        if (std::optional<double> c = scalarConstant(rhs))
          return apply(x, *c);
      if (rhs == in)
        if (std::optional<double> c = scalarConstant(lhs))
          return apply(*c, x);
      return std::nullopt;
    };
    if (isa<graph::SigmoidOp>(op))
      return 1.0 / (1.0 + std::exp(-x));
    if (isa<graph::ReluOp>(op))
      return std::max(x, 0.0);
    if (auto hs = dyn_cast<graph::HardSigmoidOp>(op))
      return std::clamp(hs.getAlpha().convertToDouble() * x +
                            hs.getBeta().convertToDouble(),
                        0.0, 1.0);
    if (auto clip = dyn_cast<graph::ClipOp>(op)) {
      std::optional<double> lo = scalarConstant(clip.getMin());
      std::optional<double> hi = scalarConstant(clip.getMax());
      if ((clip.getMin() && !lo) || (clip.getMax() && !hi) ||
          clip.getInput() != in)
        return std::nullopt;
      return std::min(std::max(x, lo.value_or(-HUGE_VAL)),
                      hi.value_or(HUGE_VAL));
    }
    if (op->getNumOperands() != 2)
      return std::nullopt;
    if (isa<graph::AddOp>(op))
      return binary([](double a, double b) { return a + b; });
    if (isa<graph::SubOp>(op))
      return binary([](double a, double b) { return a - b; });
    if (isa<graph::MulOp>(op))
      return binary([](double a, double b) { return a * b; });
    if (isa<graph::DivOp>(op))
      return binary([](double a, double b) { return a / b; });
    if (isa<graph::MinOp>(op))
      return binary([](double a, double b) { return std::min(a, b); });
    if (isa<graph::MaxOp>(op))
      return binary([](double a, double b) { return std::max(a, b); });
    return std::nullopt;
  }

  /// "swish" or "hard_swish" when the chain computes sigmoid(x) or
  /// clip(x / 6 + 0.5, 0, 1): evaluated at points on both sides of every
  /// kink and through both tails, so that any way of writing the gate
  /// matches and nothing else does.
  static std::string gateKind(ArrayRef<Operation *> chain, Value x0) {
    static const double points[] = {-40.0, -7.0, -3.5, -3.0, -2.0, -0.75,
                                    -0.1,  0.0,  0.3,  1.0,  2.9,  3.0,
                                    3.2,   6.0,  9.0,  40.0};
    bool swish = true, hardSwish = true;
    for (double x : points) {
      double g = x;
      Value in = x0;
      for (Operation *op : chain) {
        std::optional<double> next = gateStep(op, in, g);
        if (!next)
          return "";
        g = *next;
        in = op->getResult(0);
      }
      double sigmoid = 1.0 / (1.0 + std::exp(-x));
      double hard = std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
      swish &= std::abs(g - sigmoid) <= 1e-6;
      hardSwish &= std::abs(g - hard) <= 1e-6;
    }
    return swish ? "swish" : hardSwish ? "hard_swish" : "";
  }

  /// Why `op`, the sole reader of the step's value, is not a post-op.
  std::string notAPostOp(Operation *op) {
    std::string name = op->getName().getStringRef().str();
    bool hasAdd = match.ops.size() > 1 || match.inputs.size() > 2;
    if (isa<graph::AddOp>(op) && hasAdd)
      return "a second add: the " + what.str() +
             "'s one added input (bias or sum) is taken; only an activation "
             "can follow";
    if (isActivation(op))
      return name + " does not read the " + what.str() +
             "'s result as its input, or is not f32";
    return name + " is not an activation oneDNN fuses as a post-op (relu, "
                  "sigmoid, tanh, gelu, clip, x * sigmoid(x), hard swish)";
  }

  /// Whether oneDNN's post-op for `kind` costs more than computing it in a
  /// kernel of strata's own: the activations oneDNN 2.6 evaluates through
  /// its exp polynomial (sigmoid, tanh, GELU, swish) add 0.4-0.6 ns an
  /// element to a convolution or matmul, where a separate generated kernel
  /// (MLIR's polynomials, vectorized; its own read and write of the tensor
  /// included) takes about 0.2 ns: EfficientNet-B0 1.1x faster at 1 thread,
  /// 1.1-1.3x at 2 (bench/RESULTS.md, 2026-12-04). Below
  /// kMinGeneratedActivation elements (a squeeze-excite's gate on [N, C, 1,
  /// 1]) the post-op stays: there a step of its own costs more than the
  /// exp. Relu, clip and hard swish are a few instructions in either.
  std::string costlierThanGenerated(StringRef kind) {
    if (kind != "swish" && kind != "sigmoid" && kind != "tanh" &&
        kind != "gelu_erf" && kind != "gelu_tanh")
      return "";
    auto type = cast<RankedTensorType>(result().getType());
    if (!type.hasStaticShape() ||
        type.getNumElements() < kMinGeneratedActivation)
      return "";
    return kind.str() + " over " + std::to_string(type.getNumElements()) +
           " elements: oneDNN's post-op evaluates it at several times the "
           "cost of a generated kernel's polynomial, that kernel's own read "
           "and write included; generated instead";
  }

  /// Adds the activation reading the current value if oneDNN has it.
  void activationEpilogue() {
    if (auto [gatedOps, kind] = gatedActivation(); !gatedOps.empty()) {
      const auto &gate = gatedOps; // for the lambda below
      for (Operation *op : gate)
        if (vetoed(op))
          return;
      if (std::string why = costlierThanGenerated(kind); !why.empty()) {
        // The more telling reason replaces the two-readers one that the
        // search for an added input gave x's readers.
        llvm::erase_if(match.refused, [&](const auto &entry) {
          return llvm::is_contained(gate, entry.first);
        });
        for (Operation *op : gate)
          refuse(op, why);
        return;
      }
      match.attrs.set("activation",
                      StringAttr::get(gate.front()->getContext(), kind));
      std::string why =
          kind == "swish"
              ? "x * sigmoid(x) (SiLU): oneDNN's swish post-op"
              : "x * hardsigmoid(x) (hard swish): oneDNN's hardswish post-op";
      for (Operation *op : gate)
        join(op, why);
      return;
    }
    Operation *user = soleUser();
    if (!user || vetoed(user))
      return;
    MLIRContext *context = user->getContext();
    // On rows counted at run time (a host step's epilogue) the result is
    // f32 of run-time shape.
    auto f32 = [&](Value v) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      return isF32Tensor(v) || (strata::onRunTimeShapes(user) && type &&
                                type.getElementType().isF32());
    };
    if (user->getNumResults() != 1 || user->getOperand(0) != result() ||
        !f32(user->getResult(0)) || !isActivation(user)) {
      refuse(user, notAPostOp(user));
      return;
    }
    auto set = [&](StringRef kind) {
      match.attrs.set("activation", StringAttr::get(context, kind));
    };
    auto setFloat = [&](StringRef key, double value) {
      match.attrs.set(key, FloatAttr::get(Float64Type::get(context), value));
    };
    std::string kind;
    if (isa<graph::ReluOp>(user)) {
      kind = "relu";
    } else if (isa<graph::SigmoidOp>(user)) {
      kind = "sigmoid";
    } else if (isa<graph::TanhOp>(user)) {
      kind = "tanh";
    } else if (auto gelu = dyn_cast<graph::GeluOp>(user)) {
      kind = gelu.getApproximate() == "tanh" ? "gelu_tanh" : "gelu_erf";
    } else {
      auto clip = cast<graph::ClipOp>(user);
      std::optional<double> lo = scalarConstant(clip.getMin());
      std::optional<double> hi = scalarConstant(clip.getMax());
      if ((clip.getMin() && !lo) || (clip.getMax() && !hi)) {
        refuse(user, "the clip's bounds are not constants; oneDNN's clip "
                     "post-op takes them at compile time");
        return;
      }
      kind = "clip";
      setFloat("activation_alpha", lo.value_or(-3.4028234663852886e38));
      setFloat("activation_beta", hi.value_or(3.4028234663852886e38));
    }
    if (std::string why = costlierThanGenerated(kind); !why.empty()) {
      refuse(user, why);
      return;
    }
    set(kind);
    join(user, kind + " activation: a oneDNN post-op");
  }

  /// Readers of the step's final value: the post-op chain ended before them.
  void finish() {
    Value v = result();
    for (Operation *user : v.getUsers())
      refuse(user, vendor.str() + "'s epilogue ends with one activation; the " +
                       what.str() + "'s fused epilogue is complete");
  }
};
} // namespace

/// "4 x 16x16x16" (batch x MxKxN) for matmul reasons.
static std::string matmulShape(RankedTensorType out, int64_t k) {
  int64_t batch = 1;
  for (int64_t d :
       out.getShape().drop_back(std::min<int64_t>(2, out.getRank())))
    batch *= d;
  int64_t m = out.getRank() >= 2 ? out.getDimSize(out.getRank() - 2) : 1;
  int64_t n = out.getRank() >= 1 ? out.getDimSize(out.getRank() - 1) : 1;
  std::string text = batch == 1 ? "" : std::to_string(batch) + " x ";
  return text + std::to_string(m) + "x" + std::to_string(k) + "x" +
         std::to_string(n);
}

static std::optional<LibraryMatch>
matchMatmul(Operation *op, const LibraryRequest &request, std::string &whyNot) {
  MLIRContext *context = op->getContext();
  LibraryMatch match;
  match.library = "dnnl.matmul";
  // Rows known only at run time (RunTimeShapes.cpp): the kernel takes the
  // shapes when it runs.
  bool runTime = strata::onRunTimeShapes(op);
  auto f32 = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return isF32Tensor(v) || (runTime && type && type.getElementType().isF32());
  };
  Value result = op->getResult(0);
  if (!f32(result)) {
    whyNot = "dnnl.matmul computes f32; this " +
             op->getName().stripDialect().str() + " computes " +
             typeText(result);
    return std::nullopt;
  }
  auto outType = cast<RankedTensorType>(result.getType());
  int64_t k = 0;
  if (auto matmul = dyn_cast<graph::MatMulOp>(op)) {
    if (!f32(matmul.getLhs()) || !f32(matmul.getRhs())) {
      whyNot = "dnnl.matmul takes f32 operands; this matmul's are " +
               typeText(matmul.getLhs()) + " and " + typeText(matmul.getRhs());
      return std::nullopt;
    }
    if (rankOf(matmul.getLhs()) < 2 || rankOf(matmul.getRhs()) < 2) {
      whyNot = "a matmul with a vector operand (rank 1): dnnl.matmul takes "
               "matrices";
      return std::nullopt;
    }
    k = cast<RankedTensorType>(matmul.getLhs().getType()).getShape().back();
    match.inputs = {&op->getOpOperand(0), &op->getOpOperand(1)};
  } else if (auto gemm = dyn_cast<graph::GemmOp>(op)) {
    if (!f32(gemm.getA()) || !f32(gemm.getB()) ||
        (gemm.getC() && !f32(gemm.getC()))) {
      whyNot = "dnnl.matmul takes f32 operands; this gemm's are " +
               typeText(gemm.getA()) + " and " + typeText(gemm.getB());
      return std::nullopt;
    }
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
    whyNot = "no library kernel for " + op->getName().getStringRef().str();
    return std::nullopt;
  }
  int64_t flops = outType.hasStaticShape() ? outType.getNumElements() * k
                                           : kMinLibraryFlops;
  std::string size =
      outType.hasStaticShape()
          ? op->getName().stripDialect().str() + " of " +
                matmulShape(outType, k) + " = " + std::to_string(flops) +
                " multiply-adds"
          : op->getName().stripDialect().str() + " on rows known at run time";
  if (flops < kMinLibraryFlops && !request.forced) {
    whyNot = size + " is below oneDNN's threshold of " +
             std::to_string(kMinLibraryFlops) +
             " (call overhead would dominate)";
    return std::nullopt;
  }
  match.ops.push_back(op);
  match.joinReasons.push_back("");
  EpilogueBuilder epilogue{match, request, op->getName().stripDialect()};
  if (match.inputs.size() == 2) {
    auto [add, bias] = epilogue.addEpilogue(/*sameShape=*/false);
    if (add) {
      match.inputs.push_back(bias);
      epilogue.join(add, "bias add: dnnl.matmul's bias input");
    }
  }
  epilogue.activationEpilogue();
  epilogue.finish();
  if (flops < kMinLibraryFlops)
    match.reason = "forced by the decisions file (f32 " + size +
                   ", below the threshold of " +
                   std::to_string(kMinLibraryFlops) + ")";
  else
    match.reason =
        "f32 " + size + ", at least oneDNN's threshold of " +
        std::to_string(kMinLibraryFlops) + ": oneDNN's blocked kernels" +
        (request.forced ? " (also asked for by the decisions file)" : "");
  return match;
}

/// A convolution's or pool's optional per-dimension attribute, or `n`
/// copies of ONNX's default `fill` when the model leaves it out.
static SmallVector<int64_t> valuesOr(std::optional<ArrayRef<int64_t>> values,
                                     int64_t n, int64_t fill) {
  return values ? SmallVector<int64_t>(values->begin(), values->end())
                : SmallVector<int64_t>(n, fill);
}

/// Whether `conv` has a shape oneDNN's Winograd convolution takes.
/// Winograd's F(2x2, 3x3) and F(4x4, 3x3) take 2.25 and 4 times fewer
/// multiplications than a direct 3x3 convolution, at the cost of
/// transforming the input and output tiles; oneDNN 2.6 has them for AVX-512
/// machines, for 3x3 kernels at stride and dilation 1 without groups.
/// Whether one pays depends on the channels, the image, the machine and the
/// thread count: measured on ResNet, GoogLeNet, DenseNet and SqueezeNet's
/// shapes it took half the time of the direct kernel at 64-512 channels on
/// 7-56 pixels a side on one thread, and up to twice the time at 16-48
/// input channels or at a channel count its blocking splits badly (96 ->
/// 208), more often so on two threads (bench/RESULTS.md, 2026-12-07). So
/// the compiler only names the candidates, and the runtime times both
/// kernels on the session's threads when the step first runs and keeps the
/// faster (docs/runtime.md, "Convolutions: Winograd, timed").
static bool winogradShape(graph::ConvOp conv) {
  auto input = dyn_cast<RankedTensorType>(conv.getInput().getType());
  auto weight = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  if (!input || !weight || !input.hasStaticShape() ||
      !weight.hasStaticShape() || input.getRank() != 4 || conv.getGroup() != 1)
    return false;
  auto ones = [](std::optional<ArrayRef<int64_t>> values) {
    return !values || llvm::all_of(*values, [](int64_t v) { return v == 1; });
  };
  return ones(conv.getStrides()) && ones(conv.getDilations()) &&
         weight.getDimSize(2) == 3 && weight.getDimSize(3) == 3;
}

/// The `winograd` mark of `conv`'s step (0: none, 1: timed, 2: forced) and
/// its reason ("" with no mark and no decision). Candidates have the shape
/// and at least 16 channels on each side. The decisions file's "algorithm"
/// entry overrides that: "direct" drops the mark, "winograd" forces the
/// Winograd kernel without timing, and "timed" times any convolution of the
/// shape, below 16 channels too.
static std::pair<int64_t, std::string>
winogradMark(graph::ConvOp conv, const LibraryRequest &request) {
  const std::string &forced = request.convAlgorithm;
  std::string by =
      " (" + request.convAlgorithmEntry + " of the decisions file)";
  if (forced == "direct")
    return {0, "the direct kernel, never Winograd" + by};
  if (!winogradShape(conv))
    return {0, ""};
  if (forced == "winograd")
    return {2, "oneDNN's Winograd convolution, without timing" + by};
  if (forced == "timed")
    return {1, "oneDNN's Winograd convolution timed against the direct one "
               "when the step first runs (the faster is kept)" +
                   by};
  // Below 16 channels on either side the tile transforms outweigh the saved
  // products (a first convolution over RGB).
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  if (weight.getDimSize(0) < 16 || weight.getDimSize(1) < 16)
    return {0, ""};
  return {1, "a 3x3 convolution at stride 1: oneDNN's Winograd convolution "
             "is a candidate, timed against the direct one on the session's "
             "threads when the step first runs (the faster is kept)"};
}

static std::optional<LibraryMatch> matchConv(graph::ConvOp conv,
                                             const LibraryRequest &request,
                                             std::string &whyNot) {
  MLIRContext *context = conv->getContext();
  // Images known only at run time (RunTimeShapes.cpp: a detector's mask and
  // keypoint heads over its detections): the kernel takes the shapes when
  // it runs.
  bool runTime = strata::onRunTimeShapes(conv);
  auto f32 = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return isF32Tensor(v) || (runTime && type && type.getElementType().isF32());
  };
  if (!f32(conv.getInput()) || !f32(conv.getWeight()) ||
      !f32(conv.getOutput()) || (conv.getBias() && !f32(conv.getBias()))) {
    whyNot = "dnnl.conv takes f32 tensors; this convolution's input is " +
             typeText(conv.getInput());
    return std::nullopt;
  }
  int64_t rank = rankOf(conv.getInput());
  if (rank < 3 || rank > 5) {
    whyNot = "a convolution with " + std::to_string(rank - 2) +
             " spatial dimensions; dnnl.conv takes 1 to 3";
    return std::nullopt;
  }
  if (conv.getAutoPad() != "NOTSET") {
    whyNot = "auto_pad " + conv.getAutoPad().str() +
             " was not resolved into explicit pads; dnnl.conv takes pads";
    return std::nullopt;
  }
  int64_t spatial = rank - 2;
  LibraryMatch match;
  match.library = "dnnl.conv";
  match.inputs = {&conv->getOpOperand(0), &conv->getOpOperand(1)};
  if (conv.getBias())
    match.inputs.push_back(&conv.getBiasMutable()[0]);
  auto i64 = IntegerType::get(context, 64);
  match.attrs.set(
      "strides",
      DenseI64ArrayAttr::get(context, valuesOr(conv.getStrides(), spatial, 1)));
  match.attrs.set("dilations",
                  DenseI64ArrayAttr::get(
                      context, valuesOr(conv.getDilations(), spatial, 1)));
  match.attrs.set(
      "pads", DenseI64ArrayAttr::get(context,
                                     valuesOr(conv.getPads(), 2 * spatial, 0)));
  match.attrs.set("group", IntegerAttr::get(i64, conv.getGroup()));
  match.ops.push_back(conv);
  match.joinReasons.push_back("");
  EpilogueBuilder epilogue{match, request, "convolution"};
  // A residual add of the output's shape becomes oneDNN's sum post-op.
  auto [add, other] = epilogue.addEpilogue(/*sameShape=*/true);
  if (add) {
    match.accumulates = match.inputs.size();
    match.inputs.push_back(other);
    epilogue.join(add, "residual add: oneDNN's sum post-op");
  }
  epilogue.activationEpilogue();
  epilogue.finish();
  match.reason = "f32 convolution: oneDNN's JIT kernels beat generated "
                 "loops at every size";
  auto [winograd, why] = winogradMark(conv, request);
  if (winograd)
    match.attrs.set("winograd", IntegerAttr::get(i64, winograd));
  if (!why.empty())
    match.reason += "; " + why;
  if (request.forced)
    match.reason += " (also asked for by the decisions file)";
  return match;
}

/// The dnnl.pool step of the pool `op` (its input is operand 0).
static LibraryMatch dnnlPoolMatch(Operation *op, const LibraryRequest &request,
                                  StringRef name, StringRef kind,
                                  ArrayRef<int64_t> kernel,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations,
                                  ArrayRef<int64_t> pads, std::string reason) {
  MLIRContext *context = op->getContext();
  LibraryMatch match;
  match.library = "dnnl.pool";
  match.inputs = {&op->getOpOperand(0)};
  match.attrs.set("kind", StringAttr::get(context, kind));
  match.attrs.set("kernel", DenseI64ArrayAttr::get(context, kernel));
  match.attrs.set("strides", DenseI64ArrayAttr::get(context, strides));
  match.attrs.set("dilations", DenseI64ArrayAttr::get(context, dilations));
  match.attrs.set("pads", DenseI64ArrayAttr::get(context, pads));
  match.ops.push_back(op);
  match.joinReasons.push_back("");
  EpilogueBuilder epilogue{match, request, name};
  epilogue.finish();
  match.reason = std::move(reason);
  if (request.forced)
    match.reason += " (also asked for by the decisions file)";
  return match;
}

/// Max and average pooling → "dnnl.pool" (runtime/lib/kernels/DnnlPool.cpp):
/// oneDNN's JIT kernels, channels-last between oneDNN steps (Layouts.cpp).
/// The generated alternative walks each window's few taps in the innermost
/// loop, which LLVM cannot vectorize.
template <typename PoolOp>
static std::optional<LibraryMatch>
matchPool(PoolOp pool, const LibraryRequest &request, std::string &whyNot) {
  Operation *op = pool.getOperation();
  Value input = pool.getInput(), output = pool.getOutput();
  std::string name = op->getName().stripDialect().str();
  if (!isF32Tensor(input) || !isF32Tensor(output)) {
    whyNot = "dnnl.pool takes f32 tensors; this " + name + "'s input is " +
             typeText(input);
    return std::nullopt;
  }
  auto inType = cast<RankedTensorType>(input.getType());
  auto outType = cast<RankedTensorType>(output.getType());
  int64_t rank = inType.getRank();
  if (rank < 3 || rank > 5 || !inType.hasStaticShape() ||
      !outType.hasStaticShape()) {
    whyNot = "dnnl.pool takes 1 to 3 spatial dimensions of static size; "
             "this " +
             name + "'s input is " + typeText(input);
    return std::nullopt;
  }
  if (pool.getAutoPad() != "NOTSET") {
    whyNot = "auto_pad " + pool.getAutoPad().str() +
             " was not resolved into explicit pads; dnnl.pool takes pads";
    return std::nullopt;
  }
  std::string kind;
  if constexpr (std::is_same_v<PoolOp, graph::MaxPoolOp>) {
    if (!pool.getIndices().use_empty()) {
      whyNot = "the max pool's indices are read; dnnl.pool computes values "
               "only";
      return std::nullopt;
    }
    kind = "max";
  } else {
    kind = pool.getCountIncludePad() ? "avg_include_pad" : "avg_exclude_pad";
  }
  int64_t spatial = rank - 2;
  SmallVector<int64_t> kernel(pool.getKernelShape());
  SmallVector<int64_t> strides = valuesOr(pool.getStrides(), spatial, 1);
  SmallVector<int64_t> dilations = valuesOr(pool.getDilations(), spatial, 1);
  SmallVector<int64_t> pads = valuesOr(pool.getPads(), 2 * spatial, 0);
  if (static_cast<int64_t>(kernel.size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial) {
    whyNot = "the " + name + "'s attributes do not match its " +
             std::to_string(spatial) + " spatial dimensions";
    return std::nullopt;
  }
  // oneDNN cannot compute a last window that starts in the right padding
  // (ceil_mode can ask for one; ONNX Runtime and PyTorch drop it).
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t last = (outType.getDimSize(2 + i) - 1) * strides[i] - pads[i];
    if (last >= inType.getDimSize(2 + i)) {
      whyNot = "the " + name + "'s last window in spatial dimension " +
               std::to_string(i) +
               " lies entirely in the padding; dnnl.pool cannot compute it";
      return std::nullopt;
    }
  }
  return dnnlPoolMatch(op, request, name, kind, kernel, strides, dilations,
                       pads,
                       "f32 " + name +
                           ": oneDNN's JIT kernels (the generated loops walk "
                           "each window's few taps innermost, which does not "
                           "vectorize)");
}

/// GlobalAveragePool → "dnnl.pool", a window as large as the image: beside
/// oneDNN's convolutions (a squeeze-and-excitation block's pool, a CNN's
/// head) it reads their channels-last buffer where it lies, summing along
/// the channels in vectors, instead of a generated reduction that made the
/// convolution before it write row-major.
static std::optional<LibraryMatch>
matchGlobalAveragePool(graph::GlobalAveragePoolOp pool,
                       const LibraryRequest &request, std::string &whyNot) {
  Operation *op = pool.getOperation();
  Value input = op->getOperand(0), output = op->getResult(0);
  if (!isF32Tensor(input) || !isF32Tensor(output)) {
    whyNot = "dnnl.pool takes f32 tensors; this global_average_pool's input "
             "is " +
             typeText(input);
    return std::nullopt;
  }
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = inType.getRank();
  if (rank < 3 || rank > 5 || !inType.hasStaticShape()) {
    whyNot = "dnnl.pool takes 1 to 3 spatial dimensions of static size; "
             "this global_average_pool's input is " +
             typeText(input);
    return std::nullopt;
  }
  int64_t spatial = rank - 2;
  SmallVector<int64_t> kernel(inType.getShape().drop_front(2));
  SmallVector<int64_t> ones(spatial, 1), zeros(2 * spatial, 0);
  return dnnlPoolMatch(op, request, "global_average_pool", "avg_exclude_pad",
                       kernel, ones, ones, zeros,
                       "f32 global_average_pool: oneDNN's average pool over "
                       "the whole image, which reads the channels-last "
                       "buffers of the oneDNN steps around it");
}

/// A channel concat of image tensors ([N, C, D...], 2 or 3 spatial dims) →
/// "dnnl.concat". Beside oneDNN's convolutions and pools (Inception,
/// SqueezeNet, DenseNet blocks) it reads and writes their channels-last
/// buffers (Layouts.cpp), where a generated concat is a row-major copy that
/// needs every convolution around it to convert. Other concats (sequences,
/// shapes, rank 3 and below) stay generated and fuse with their neighbours.
static std::optional<LibraryMatch> matchConcat(graph::ConcatOp concat,
                                               const LibraryRequest &request,
                                               std::string &whyNot) {
  MLIRContext *context = concat->getContext();
  auto outType = dyn_cast<RankedTensorType>(concat.getType());
  if (!outType || !outType.hasStaticShape() || outType.getRank() < 4 ||
      outType.getRank() > 5) {
    whyNot = "dnnl.concat takes image tensors [N, C, D...] of 2 or 3 spatial "
             "dimensions; this concat makes " +
             typeText(concat.getOutput());
    return std::nullopt;
  }
  int64_t axis = concat.getAxis();
  if (axis < 0)
    axis += outType.getRank();
  if (axis != 1) {
    whyNot = "a concat along axis " + std::to_string(axis) +
             "; dnnl.concat joins channels (axis 1)";
    return std::nullopt;
  }
  for (Value input : concat.getInputs())
    if (!isF32Tensor(input) ||
        !cast<RankedTensorType>(input.getType()).hasStaticShape()) {
      whyNot = "dnnl.concat takes static f32 tensors; an input is " +
               typeText(input);
      return std::nullopt;
    }
  LibraryMatch match;
  match.library = "dnnl.concat";
  for (OpOperand &input : concat->getOpOperands())
    match.inputs.push_back(&input);
  match.attrs.set("axis", IntegerAttr::get(IntegerType::get(context, 64), 1));
  match.ops.push_back(concat);
  match.joinReasons.push_back("");
  EpilogueBuilder epilogue{match, request, "concat"};
  epilogue.finish();
  match.reason = "f32 channel concat of images: oneDNN's concat, which reads "
                 "and writes the channels-last buffers of the oneDNN steps "
                 "around it";
  if (request.forced)
    match.reason += " (also asked for by the decisions file)";
  return match;
}

/// The batch dimensions of a matmul operand or result (all but the last
/// two) without leading ones.
static SmallVector<int64_t> batchDims(RankedTensorType type) {
  ArrayRef<int64_t> dims = type.getShape().drop_back(2);
  while (!dims.empty() && dims.front() == 1)
    dims = dims.drop_front();
  return SmallVector<int64_t>(dims);
}

/// "cublaslt.matmul" (runtime/lib/cuda/CublasLt.h has the contract): any
/// matrix product of f32, f16 or bf16 whose operands' batches are the
/// result's or absent, with up to two adds (a bias over the last dimension,
/// a tensor of the result's shape) and a ReLU or tanh-GELU fused into
/// cuBLASLt's epilogue. There is no size threshold: generated GPU matrix
/// products compute one output per thread without tensor cores, so cuBLASLt
/// wins at every size, and a launch inside a CUDA graph costs microseconds.
static std::optional<LibraryMatch> matchCublasLt(Operation *op,
                                                 const LibraryRequest &request,
                                                 std::string &whyNot) {
  MLIRContext *context = op->getContext();
  auto i64 = IntegerType::get(context, 64);
  auto f64 = Float64Type::get(context);
  std::string name = op->getName().stripDialect().str();
  Value result = op->getResult(0);
  auto outType = dyn_cast<RankedTensorType>(result.getType());
  Type element = outType ? outType.getElementType() : Type();
  if (!outType || !outType.hasStaticShape() ||
      !isa<Float32Type, Float16Type, BFloat16Type>(element)) {
    whyNot = "cublaslt.matmul computes f32, f16 or bf16; this " + name +
             " computes " + typeText(result);
    return std::nullopt;
  }
  LibraryMatch match;
  match.library = "cublaslt.matmul";
  match.inputs = {&op->getOpOperand(0), &op->getOpOperand(1)};
  bool transA = false, transB = false;
  double alpha = 1, beta = 1;
  Value gemmC;
  if (auto gemm = dyn_cast<graph::GemmOp>(op)) {
    transA = gemm.getTransA();
    transB = gemm.getTransB();
    alpha = gemm.getAlpha().convertToDouble();
    beta = gemm.getBeta().convertToDouble();
    gemmC = gemm.getC();
  }
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getElementType() != element || !type.hasStaticShape()) {
      whyNot = "cublaslt.matmul takes operands of the result's type; this " +
               name + " reads " + typeText(v) + " and computes " +
               typeText(result);
      return std::nullopt;
    }
  }
  auto aType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto bType = cast<RankedTensorType>(op->getOperand(1).getType());
  if (aType.getRank() < 2 || bType.getRank() < 2) {
    whyNot = "a matmul with a vector operand (rank 1): cublaslt.matmul takes "
             "matrices";
    return std::nullopt;
  }
  if (outType.getNumElements() == 0 ||
      aType.getDimSize(aType.getRank() - (transA ? 2 : 1)) == 0) {
    whyNot = "an empty matrix product";
    return std::nullopt;
  }
  SmallVector<int64_t> outBatch = batchDims(outType);
  for (RankedTensorType t : {aType, bType}) {
    SmallVector<int64_t> dims = batchDims(t);
    if (!dims.empty() && dims != outBatch) {
      whyNot = "an operand's batch dimensions broadcast partly against the "
               "other's; cublaslt.matmul takes batches that are the "
               "result's or absent";
      return std::nullopt;
    }
  }
  int64_t n = outType.getShape().back();
  int64_t m = outType.getDimSize(outType.getRank() - 2);
  auto isBias = [&](RankedTensorType t) {
    return t.getNumElements() == n && t.getRank() >= 1 &&
           t.getShape().back() == n;
  };
  // The C of the result's shape (its batch the result's or absent).
  auto isFullC = [&](RankedTensorType t) {
    if (t.getRank() < 2 || t.getDimSize(t.getRank() - 2) != m ||
        t.getShape().back() != n)
      return false;
    SmallVector<int64_t> dims = batchDims(t);
    return dims.empty() || dims == outBatch;
  };
  bool hasBias = false, hasC = false;
  if (gemmC) {
    auto cType = cast<RankedTensorType>(gemmC.getType());
    if (isBias(cType) && beta == 1.0) {
      hasBias = true;
    } else if (isFullC(cType)) {
      hasC = true;
    } else {
      whyNot = "the gemm's C " + typeText(gemmC) +
               " is neither a bias over N (with beta 1) nor of the result's "
               "shape, the two forms cuBLASLt adds";
      return std::nullopt;
    }
    match.inputs.push_back(&op->getOpOperand(2));
  }
  match.ops.push_back(op);
  match.joinReasons.push_back("");
  EpilogueBuilder epilogue{match, request, name, "cuBLASLt"};
  // Adds: a bias over N and a tensor of the result's shape, in either order.
  while (!hasBias || !hasC) {
    auto [add, other] = epilogue.addCandidate();
    if (!add)
      break;
    auto otherType = cast<RankedTensorType>(other->get().getType());
    if (!hasBias && isBias(otherType) && alpha == 1.0) {
      hasBias = true;
      match.inputs.insert(match.inputs.begin() + 2, other);
      epilogue.join(add, "bias add: cuBLASLt's bias epilogue");
      continue;
    }
    if (!hasC && isFullC(otherType) && (!gemmC || hasBias)) {
      hasC = true;
      beta = 1.0;
      match.inputs.push_back(other);
      epilogue.join(add, "residual add: cuBLASLt's C input (beta = 1)");
      continue;
    }
    epilogue.refuse(add, "the added tensor " + typeText(other->get()) +
                             " is neither a bias over N nor of the result's "
                             "shape (or that input is taken)");
    break;
  }
  if (Operation *user = epilogue.soleUser(); user && !epilogue.vetoed(user)) {
    auto gelu = dyn_cast<graph::GeluOp>(user);
    bool sameType = user->getNumResults() == 1 &&
                    user->getOperand(0) == epilogue.result() &&
                    user->getResult(0).getType() == result.getType();
    if (sameType && isa<graph::ReluOp>(user)) {
      match.attrs.set("activation", StringAttr::get(context, "relu"));
      epilogue.join(user, "relu activation: cuBLASLt's ReLU epilogue");
    } else if (sameType && gelu && gelu.getApproximate() == "tanh") {
      match.attrs.set("activation", StringAttr::get(context, "gelu_tanh"));
      epilogue.join(user, "tanh-approximated gelu: cuBLASLt's GELU epilogue");
    } else if (gelu) {
      epilogue.refuse(user, "cuBLASLt's GELU epilogue is the tanh "
                            "approximation; this gelu is the exact (erf) one, "
                            "a generated kernel of its own");
    } else {
      epilogue.refuse(user, user->getName().getStringRef().str() +
                                " is not an epilogue cuBLASLt fuses (bias, "
                                "residual add, relu, tanh-approximated gelu)");
    }
  }
  epilogue.finish();
  match.attrs.set("trans_a", IntegerAttr::get(i64, transA ? 1 : 0));
  match.attrs.set("trans_b", IntegerAttr::get(i64, transB ? 1 : 0));
  match.attrs.set("alpha", FloatAttr::get(f64, alpha));
  match.attrs.set("beta", FloatAttr::get(f64, hasC ? beta : 0.0));
  match.attrs.set("has_bias", IntegerAttr::get(i64, hasBias ? 1 : 0));
  match.attrs.set("has_c", IntegerAttr::get(i64, hasC ? 1 : 0));
  int64_t k = aType.getDimSize(aType.getRank() - (transA ? 2 : 1));
  std::string type;
  llvm::raw_string_ostream(type) << element;
  match.reason =
      type + " " + name + " of " + matmulShape(outType, k) + " = " +
      std::to_string(outType.getNumElements() * k) + " multiply-adds: " +
      (isa<Float32Type>(element)
           ? "cuBLASLt in full fp32 (no TF32, so results stay those of an "
             "fp32 product)"
           : "cuBLASLt's tensor-core kernels with fp32 accumulation") +
      "; generated GPU matrix products compute one output per thread";
  // A batch that shares B (a linear layer on [..., M, K] activations): the
  // runtime runs it as one product of all its rows (CublasLt.cpp), which
  // reads B once, rather than one product per batch entry.
  int64_t batch = outType.getNumElements() / (m * n);
  bool cShared =
      hasC &&
      batchDims(cast<RankedTensorType>(match.inputs.back()->get().getType()))
          .empty();
  if (batch > 1 && !transA && batchDims(bType).empty() &&
      !batchDims(aType).empty() && !cShared)
    match.reason += "; its batch shares B: the runtime runs it as one "
                    "product of " +
                    std::to_string(batch * m) + " rows";
  // Output rows that are not 16-byte aligned (GPT-2's 50257 logits): the
  // runtime's row classes, or cuBLASLt's slower kernels (docs/gpu.md,
  // "Output rows that are not 16-byte aligned").
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  if ((n * bytes) % 16 != 0) {
    match.reason += "; its output rows (" + std::to_string(n * bytes) +
                    " bytes) are not 16-byte aligned: ";
    if (!transA && transB && strata::rowClassesNeedWeightRowsOfK(n, k, element))
      match.reason += "the runtime runs a large one as classes of rows that "
                      "are";
    else
      match.reason += std::string(transA ? "A is transposed"
                                         : "its weight is stored [K, N]") +
                      ", so cuBLASLt runs it on its slower kernels";
  }
  if (request.forced)
    match.reason += " (also asked for by the decisions file)";
  return match;
}

/// "cudnn.conv" (runtime/lib/cuda/Cudnn.h has the contract): a
/// channels-last convolution (strata-conv-to-gemm made it for cuDNN) with
/// its bias, then a residual add of the result's shape and a ReLU that
/// follow it, in cuDNN's graph as pointwise ops after the convolution.
static std::optional<LibraryMatch>
matchCudnnConv(graph::ConvChannelsLastOp conv, const LibraryRequest &request,
               std::string &whyNot) {
  MLIRContext *context = conv->getContext();
  auto i64 = IntegerType::get(context, 64);
  auto outType = dyn_cast<RankedTensorType>(conv.getType());
  Type element = outType ? outType.getElementType() : Type();
  if (!outType || !outType.hasStaticShape() ||
      !isa<Float32Type, Float16Type, BFloat16Type>(element)) {
    whyNot = "cudnn.conv computes f32, f16 or bf16; this convolution "
             "computes " +
             typeText(conv.getResult());
    return std::nullopt;
  }
  for (Value v : conv->getOperands())
    if (auto type = dyn_cast<RankedTensorType>(v.getType());
        !type || !type.hasStaticShape() || type.getElementType() != element) {
      whyNot = "cudnn.conv takes operands of the result's type; this "
               "convolution reads " +
               typeText(v);
      return std::nullopt;
    }
  LibraryMatch match;
  match.library = "cudnn.conv";
  match.inputs = {&conv->getOpOperand(0), &conv->getOpOperand(1)};
  bool hasBias = conv.getBias() != nullptr;
  if (hasBias)
    match.inputs.push_back(&conv->getOpOperand(2));
  match.ops.push_back(conv);
  match.joinReasons.push_back("");
  EpilogueBuilder epilogue{match, request, "convolution", "cuDNN"};
  bool hasZ = false;
  if (auto [add, other] = epilogue.addCandidate(); add) {
    if (other->get().getType() == outType) {
      hasZ = true;
      match.inputs.push_back(other);
      epilogue.join(add, "residual add: a pointwise add in cuDNN's graph "
                         "after the convolution");
    } else {
      epilogue.refuse(add, "the added tensor " + typeText(other->get()) +
                               " is not of the result's shape, the tensor "
                               "cuDNN's graph adds");
    }
  }
  if (Operation *user = epilogue.soleUser(); user && !epilogue.vetoed(user)) {
    if (isa<graph::ReluOp>(user) &&
        user->getResult(0).getType() == conv.getType()) {
      match.attrs.set("activation", StringAttr::get(context, "relu"));
      epilogue.join(user, "relu activation: a pointwise ReLU in cuDNN's graph");
    } else {
      epilogue.refuse(user, user->getName().getStringRef().str() +
                                " is not an op cuDNN's convolution step fuses "
                                "(a residual add, relu)");
    }
  }
  epilogue.finish();
  match.attrs.set("strides", conv.getStridesAttr());
  match.attrs.set("dilations", conv.getDilationsAttr());
  match.attrs.set("pads", conv.getPadsAttr());
  match.attrs.set("group", IntegerAttr::get(i64, conv.getGroup()));
  match.attrs.set("has_bias", IntegerAttr::get(i64, hasBias ? 1 : 0));
  match.attrs.set("has_z", IntegerAttr::get(i64, hasZ ? 1 : 0));
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  std::string kernel;
  for (int64_t k : weight.getShape().drop_front().drop_back())
    kernel += (kernel.empty() ? "" : "x") + std::to_string(k);
  std::string type;
  llvm::raw_string_ostream(type) << element;
  int64_t group = conv.getGroup();
  bool depthwise =
      group > 1 &&
      group ==
          cast<RankedTensorType>(conv.getInput().getType()).getShape().back();
  std::string what =
      type + " " + kernel + (depthwise ? " depthwise" : "") + " convolution" +
      (group > 1 && !depthwise ? " in " + std::to_string(group) + " groups"
                               : "");
  match.reason =
      what + " reading windows (" +
      std::to_string(outType.getNumElements() *
                     ShapedType::getNumElements(weight.getShape()) /
                     weight.getDimSize(0)) +
      " multiply-adds): cuDNN's implicit-GEMM kernels read them in place on "
      "tensor cores, where the generated form writes " +
      (group > 1 ? "nothing but sums on CUDA cores"
                 : "every window as im2col columns before its product");
  if (request.convAlgorithm == "cudnn")
    match.reason = what + ": cuDNN's step, as " + request.convAlgorithmEntry +
                   " of the decisions file asks";
  else if (request.forced)
    match.reason += " (also asked for by the decisions file)";
  return match;
}

bool strata::rowClassesNeedWeightRowsOfK(int64_t n, int64_t k,
                                         Type elementType) {
  if (!isa<FloatType>(elementType))
    return false;
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  return bytes > 0 && (n * bytes) % 16 != 0 && (k * bytes) % 16 == 0;
}

std::string strata::libraryVendor(StringRef library) {
  if (library.starts_with("dnnl."))
    return "oneDNN";
  if (library.starts_with("cublaslt."))
    return "cuBLASLt";
  if (library.starts_with("cudnn."))
    return "cuDNN";
  return "the runtime";
}

bool strata::isLibraryAnchor(Operation *op) {
  return isa<graph::MatMulOp, graph::GemmOp, graph::ConvOp,
             graph::ConvChannelsLastOp>(op);
}

std::optional<LibraryMatch>
strata::matchLibraryKernel(Operation *op, const LibraryRequest &request,
                           std::string &whyNot) {
  if (isStringOp(op))
    return matchStringKernel(op, request, whyNot);
  if (isValueShapedOp(op))
    return matchValueShapedKernel(op, request, whyNot);
  if (onRunTimeShapes(op)) {
    // A product on rows known only at run time (a detection head over its
    // proposals): oneDNN's matmul takes its shapes when it runs, so it is
    // the library's whatever the size; other ops run as host kernels.
    if (request.library == TargetFacts::Library::OneDnn &&
        isa<graph::MatMulOp, graph::GemmOp>(op)) {
      LibraryRequest anySize = request;
      anySize.forced = true;
      std::optional<LibraryMatch> match = matchMatmul(op, anySize, whyNot);
      if (match)
        match->reason = "f32 " + op->getName().stripDialect().str() +
                        " on rows known only at run time: oneDNN's blocked "
                        "kernels, for any size";
      return match;
    }
    // The same for a convolution over images counted at run time, with its
    // bias and activation fused as on static shapes (on other targets it
    // is the host step host.conv, oneDNN's too).
    if (auto conv = dyn_cast<graph::ConvOp>(op);
        conv && request.library == TargetFacts::Library::OneDnn) {
      LibraryRequest anySize = request;
      anySize.forced = true;
      std::optional<LibraryMatch> match = matchConv(conv, anySize, whyNot);
      if (match) {
        match->reason = "f32 convolution over images counted only at run "
                        "time: oneDNN's JIT kernels, the primitive made for "
                        "each new shape";
        return match;
      }
    }
    return matchHostOpKernel(op, request, whyNot);
  }
  switch (request.library) {
  case TargetFacts::Library::None:
    whyNot = "no library kernel for " + op->getName().getStringRef().str() +
             " on the " + request.targetName +
             " target (it has no vendor "
             "library)";
    return std::nullopt;
  case TargetFacts::Library::CublasLt:
    if (isa<graph::MatMulOp, graph::GemmOp>(op))
      return matchCublasLt(op, request, whyNot);
    if (auto conv = dyn_cast<graph::ConvChannelsLastOp>(op))
      return matchCudnnConv(conv, request, whyNot);
    whyNot = "no library kernel for " + op->getName().getStringRef().str() +
             " on the " + request.targetName +
             " target (cuBLASLt takes matrix products, cuDNN the "
             "convolutions strata-conv-to-gemm gives it)";
    return std::nullopt;
  case TargetFacts::Library::OneDnn:
    break;
  }
  if (isa<graph::MatMulOp, graph::GemmOp>(op))
    return matchMatmul(op, request, whyNot);
  if (auto conv = dyn_cast<graph::ConvOp>(op))
    return matchConv(conv, request, whyNot);
  if (auto pool = dyn_cast<graph::MaxPoolOp>(op))
    return matchPool(pool, request, whyNot);
  if (auto pool = dyn_cast<graph::AveragePoolOp>(op))
    return matchPool(pool, request, whyNot);
  if (auto pool = dyn_cast<graph::GlobalAveragePoolOp>(op))
    return matchGlobalAveragePool(pool, request, whyNot);
  if (auto concat = dyn_cast<graph::ConcatOp>(op))
    return matchConcat(concat, request, whyNot);
  whyNot = "no library kernel for " + op->getName().getStringRef().str();
  return std::nullopt;
}
