//===- Recurrent.cpp - Recurrent graph ops to linalg ------------*- C++ -*-===//
//
// Lowers the graph dialect's recurrent networks (RNN, GRU, LSTM) to linalg
// on tensors with one scf.for over the time steps per direction. See
// Patterns.h for the contract.
//
// Shapes are static. The input projection X * W^T, together with the biases
// that do not depend on the state, is one contraction over every direction
// and step before the loops. A step then only multiplies the carried hidden
// state by R^T and combines the gates in one elementwise linalg.generic (GRU
// without linear_before_reset needs a second product, (r . H) * Rh^T, between
// two such generics). The loop carries the hidden state, LSTM's cell state
// and the Y result, into which each step inserts its hidden state. The new
// states are copied over the carried ones and the loops start from copies
// of initial_h/initial_c, so that one-shot bufferization (which rejects
// loops yielding new buffers) updates all three in place without ever
// writing into an operand.
//
// Semantics are ONNX's; where ONNX is silent they follow onnxruntime:
// - activation_alpha/activation_beta are consumed in order by the activations
//   that take the parameter (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh,
//   HardSigmoid, Elu for alpha; Affine, ScaledTanh, HardSigmoid for beta);
//   missing ones take the ONNX operators' defaults;
// - clip bounds the input of every activation, LSTM's h(C) included, but not
//   the carried cell state;
// - LSTM's input_forget couples the gates as f = 1 - i;
// - with sequence_lens, batch entry n runs its first lens[n] steps (the
//   reverse direction from step lens[n] - 1 down to 0): the state is left
//   unchanged on the other steps, whose Y rows are 0, so Y_h and Y_c are the
//   states after the last valid step (the initial state when lens[n] is 0).
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Patterns.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>

using namespace mlir;
using namespace strata::detail;
namespace graph = strata::graph;

namespace {

enum class CellKind { RNN, GRU, LSTM };

/// One of ONNX's recurrent activation functions with its parameters.
struct Activation {
  enum Kind {
    Relu,
    Tanh,
    Sigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
  };
  Kind kind;
  double alpha = 0, beta = 0;
};

/// What the lowering needs to know about a recurrent op; built only for ops
/// the lowering supports.
struct Plan {
  CellKind cell;
  int64_t dirs, seq, batch, inputSize, hidden, gates;
  bool batchFirst;
  /// Whether direction d (0 or 1) runs from the last step to the first.
  bool reverse[2];
  bool linearBeforeReset = false, inputForget = false;
  std::optional<double> clip;
  /// `perDirection` activations (f; f, g; f, g, h) for each direction.
  SmallVector<Activation> activations;
  unsigned perDirection;
  Type element;

  const Activation &activation(int64_t direction, unsigned index) const {
    return activations[direction * perDirection + index];
  }
};

/// The converted operands of a recurrent op; absent optionals are null.
struct Operands {
  Value input, weight, recurrence, bias, lens, initialH, initialC, peepholes;
};

} // namespace

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

static std::optional<Activation::Kind> activationKind(StringRef name) {
  return llvm::StringSwitch<std::optional<Activation::Kind>>(name)
      .Case("Relu", Activation::Relu)
      .Case("Tanh", Activation::Tanh)
      .Case("Sigmoid", Activation::Sigmoid)
      .Case("Affine", Activation::Affine)
      .Case("LeakyRelu", Activation::LeakyRelu)
      .Case("ThresholdedRelu", Activation::ThresholdedRelu)
      .Case("ScaledTanh", Activation::ScaledTanh)
      .Case("HardSigmoid", Activation::HardSigmoid)
      .Case("Elu", Activation::Elu)
      .Case("Softsign", Activation::Softsign)
      .Case("Softplus", Activation::Softplus)
      .Default(std::nullopt);
}

/// The activations of every direction with their parameters, or nullopt for
/// an unknown name or a list of the wrong length.
static std::optional<SmallVector<Activation>>
planActivations(std::optional<ArrayAttr> names,
                std::optional<ArrayRef<float>> alphas,
                std::optional<ArrayRef<float>> betas,
                ArrayRef<StringRef> defaults, int64_t dirs) {
  SmallVector<StringRef> list;
  if (names) {
    for (Attribute name : *names) {
      auto string = dyn_cast<StringAttr>(name);
      if (!string)
        return std::nullopt;
      list.push_back(string.getValue());
    }
  } else {
    for (int64_t d = 0; d < dirs; ++d)
      list.append(defaults.begin(), defaults.end());
  }
  if (int64_t(list.size()) != int64_t(defaults.size()) * dirs)
    return std::nullopt;
  ArrayRef<float> alphaList = alphas.value_or(ArrayRef<float>());
  ArrayRef<float> betaList = betas.value_or(ArrayRef<float>());
  size_t nextAlpha = 0, nextBeta = 0;
  auto take = [](ArrayRef<float> values, size_t &next, double fallback) {
    return next < values.size() ? double(values[next++]) : fallback;
  };
  SmallVector<Activation> result;
  for (StringRef name : list) {
    std::optional<Activation::Kind> kind = activationKind(name);
    if (!kind)
      return std::nullopt;
    Activation activation{*kind};
    switch (*kind) {
    case Activation::Affine:
    case Activation::ScaledTanh:
      activation.alpha = take(alphaList, nextAlpha, 1.0);
      activation.beta =
          take(betaList, nextBeta, *kind == Activation::Affine ? 0.0 : 1.0);
      break;
    case Activation::HardSigmoid:
      activation.alpha = take(alphaList, nextAlpha, 0.2);
      activation.beta = take(betaList, nextBeta, 0.5);
      break;
    case Activation::LeakyRelu:
      activation.alpha = take(alphaList, nextAlpha, 0.01);
      break;
    case Activation::ThresholdedRelu:
    case Activation::Elu:
      activation.alpha = take(alphaList, nextAlpha, 1.0);
      break;
    default:
      break;
    }
    result.push_back(activation);
  }
  return result;
}

/// The plan for `op` (of a recurrent op class), or nullopt when the lowering
/// does not handle it.
template <typename OpTy>
static std::optional<Plan> planFor(OpTy op, CellKind cell,
                                   ArrayRef<StringRef> defaultActivations) {
  if (!allStaticTensors(op))
    return std::nullopt;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  Type element = input.getElementType();
  // Activations are computed in the element type; the math lowerings used
  // downstream cover f32 and f64.
  if ((!element.isF32() && !element.isF64()) || input.getRank() != 3)
    return std::nullopt;
  int64_t layout = int64_t(op.getLayout());
  StringRef direction = op.getDirection();
  if ((layout != 0 && layout != 1) ||
      (direction != "forward" && direction != "reverse" &&
       direction != "bidirectional"))
    return std::nullopt;

  Plan plan;
  plan.cell = cell;
  plan.element = element;
  plan.batchFirst = layout == 1;
  plan.dirs = direction == "bidirectional" ? 2 : 1;
  plan.reverse[0] = direction == "reverse";
  plan.reverse[1] = true;
  plan.seq = input.getDimSize(plan.batchFirst ? 1 : 0);
  plan.batch = input.getDimSize(plan.batchFirst ? 0 : 1);
  plan.inputSize = input.getDimSize(2);
  plan.hidden = int64_t(op.getHiddenSize());
  plan.gates = cell == CellKind::RNN ? 1 : cell == CellKind::GRU ? 3 : 4;
  plan.perDirection = defaultActivations.size();
  if (plan.hidden < 1)
    return std::nullopt;
  if (std::optional<APFloat> clip = op.getClip()) {
    plan.clip = clip->convertToDouble();
    if (!(*plan.clip > 0))
      return std::nullopt;
  }

  // The verifier checks these shapes; they are rechecked here because the
  // lowering indexes by them.
  int64_t gateRows = plan.gates * plan.hidden;
  auto hasShape = [&](Value value, ArrayRef<int64_t> shape) {
    if (!value)
      return true;
    auto type = cast<RankedTensorType>(value.getType());
    return type.getShape() == shape && type.getElementType() == element;
  };
  SmallVector<int64_t> stateShape =
      plan.batchFirst
          ? SmallVector<int64_t>{plan.batch, plan.dirs, plan.hidden}
          : SmallVector<int64_t>{plan.dirs, plan.batch, plan.hidden};
  SmallVector<int64_t> yShape =
      plan.batchFirst
          ? SmallVector<int64_t>{plan.batch, plan.seq, plan.dirs, plan.hidden}
          : SmallVector<int64_t>{plan.seq, plan.dirs, plan.batch, plan.hidden};
  if (!hasShape(op.getWeight(), {plan.dirs, gateRows, plan.inputSize}) ||
      !hasShape(op.getRecurrence(), {plan.dirs, gateRows, plan.hidden}) ||
      !hasShape(op.getBias(), {plan.dirs, 2 * gateRows}) ||
      !hasShape(op.getInitialH(), stateShape) ||
      !hasShape(op->getResult(0), yShape))
    return std::nullopt;
  for (Value state : op->getResults().drop_front())
    if (!hasShape(state, stateShape))
      return std::nullopt;
  if (Value lens = op.getSequenceLens()) {
    auto type = cast<RankedTensorType>(lens.getType());
    if (type.getShape() != ArrayRef<int64_t>{plan.batch})
      return std::nullopt;
  }
  if constexpr (std::is_same_v<OpTy, graph::LSTMOp>) {
    if (!hasShape(op.getInitialC(), stateShape) ||
        !hasShape(op.getPeepholes(), {plan.dirs, 3 * plan.hidden}))
      return std::nullopt;
    plan.inputForget = op.getInputForget() != 0;
  }
  if constexpr (std::is_same_v<OpTy, graph::GRUOp>)
    plan.linearBeforeReset = op.getLinearBeforeReset() != 0;

  std::optional<SmallVector<Activation>> activations =
      planActivations(op.getActivations(), op.getActivationAlpha(),
                      op.getActivationBeta(), defaultActivations, plan.dirs);
  if (!activations)
    return std::nullopt;
  plan.activations = std::move(*activations);
  return plan;
}

static std::optional<Plan> planRecurrent(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Plan>>(op)
      .Case(
          [](graph::RNNOp op) { return planFor(op, CellKind::RNN, {"Tanh"}); })
      .Case([](graph::GRUOp op) {
        return planFor(op, CellKind::GRU, {"Sigmoid", "Tanh"});
      })
      .Case([](graph::LSTMOp op) {
        return planFor(op, CellKind::LSTM, {"Sigmoid", "Tanh", "Tanh"});
      })
      .Default([](Operation *) { return std::nullopt; });
}

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

static Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type element) {
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  return linalg::FillOp::create(b, loc, scalarConstant(b, loc, element, 0),
                                init)
      .getResult(0);
}

/// The slice of `source` at `offsets` with `sizes`, as a tensor of `shape`
/// (the sizes without their unit dimensions).
static Value slice(OpBuilder &b, Location loc, Value source,
                   ArrayRef<OpFoldResult> offsets, ArrayRef<int64_t> sizes,
                   ArrayRef<int64_t> shape) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto type = RankedTensorType::get(shape, sourceType.getElementType());
  SmallVector<OpFoldResult> sizeValues,
      strides(sizes.size(), b.getIndexAttr(1));
  for (int64_t size : sizes)
    sizeValues.push_back(b.getIndexAttr(size));
  return tensor::ExtractSliceOp::create(b, loc, type, source, offsets,
                                        sizeValues, strides);
}

/// Writes `value` into `dest` at `offsets` with `sizes` (`value`'s shape is
/// `sizes` without unit dimensions).
static Value insert(OpBuilder &b, Location loc, Value value, Value dest,
                    ArrayRef<OpFoldResult> offsets, ArrayRef<int64_t> sizes) {
  SmallVector<OpFoldResult> sizeValues,
      strides(sizes.size(), b.getIndexAttr(1));
  for (int64_t size : sizes)
    sizeValues.push_back(b.getIndexAttr(size));
  return tensor::InsertSliceOp::create(b, loc, value, dest, offsets, sizeValues,
                                       strides);
}

static SmallVector<OpFoldResult> indexAttrs(OpBuilder &b,
                                            ArrayRef<int64_t> values) {
  SmallVector<OpFoldResult> result;
  for (int64_t value : values)
    result.push_back(b.getIndexAttr(value));
  return result;
}

/// acc[m, n] + sum_k a[m, k] * bt[n, k]: the product with a transposed
/// right operand, as ONNX stores W and R.
static Value matmulTransposed(OpBuilder &b, Location loc, Value a, Value bt,
                              Value acc) {
  MLIRContext *context = b.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {m, k}, context),
                                 AffineMap::get(3, 0, {n, k}, context),
                                 AffineMap::get(3, 0, {m, n}, context)};
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{a, bt},
             ValueRange{acc}, maps, iterators,
             [](OpBuilder &b, Location loc, ValueRange args) {
               Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
               linalg::YieldOp::create(
                   b, loc,
                   ValueRange{arith::AddFOp::create(b, loc, args[2], product)});
             })
      .getResult(0);
}

namespace {
/// An operand of a step's elementwise generic over (batch, hidden).
struct StepInput {
  enum Broadcast { Full, PerHidden, PerBatch };
  Value value;
  Broadcast broadcast = Full;
};
} // namespace

/// A linalg.generic over (batch, hidden) that writes `outputs` (tensors of
/// that shape), whose element values `body` computes from the inputs' and
/// the outputs' current ones (block arguments in that order).
static SmallVector<Value> stepGeneric(
    OpBuilder &b, Location loc, ArrayRef<StepInput> inputs, ValueRange outputs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *context = b.getContext();
  AffineExpr n, h;
  bindDims(context, n, h);
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;
  for (const StepInput &input : inputs) {
    values.push_back(input.value);
    switch (input.broadcast) {
    case StepInput::Full:
      maps.push_back(AffineMap::get(2, 0, {n, h}, context));
      break;
    case StepInput::PerHidden:
      maps.push_back(AffineMap::get(2, 0, {h}, context));
      break;
    case StepInput::PerBatch:
      maps.push_back(AffineMap::get(2, 0, {n}, context));
      break;
    }
  }
  maps.append(outputs.size(), AffineMap::get(2, 0, {n, h}, context));
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, outputs.getTypes(), values, outputs, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, body(b, loc, args));
      });
  return SmallVector<Value>(generic.getResults());
}

/// A new (batch, hidden) tensor for a step's intermediate results.
static Value stepTensor(OpBuilder &b, Location loc, const Plan &plan) {
  return tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{plan.batch, plan.hidden}, plan.element);
}

/// `activation(x)`, with x clipped to [-clip, clip] first when given.
static Value activate(OpBuilder &b, Location loc, const Activation &activation,
                      std::optional<double> clip, Value x) {
  Type type = x.getType();
  auto constant = [&](double value) {
    return scalarConstant(b, loc, type, value);
  };
  if (clip) {
    x = arith::MaximumFOp::create(b, loc, x, constant(-*clip));
    x = arith::MinimumFOp::create(b, loc, x, constant(*clip));
  }
  auto zero = [&] { return constant(0); };
  auto one = [&] { return constant(1); };
  auto mul = [&](Value l, Value r) {
    return arith::MulFOp::create(b, loc, l, r).getResult();
  };
  auto add = [&](Value l, Value r) {
    return arith::AddFOp::create(b, loc, l, r).getResult();
  };
  auto less = [&](Value l, Value r) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, l, r)
        .getResult();
  };
  double alpha = activation.alpha, beta = activation.beta;
  switch (activation.kind) {
  case Activation::Relu:
    return arith::MaximumFOp::create(b, loc, x, zero());
  case Activation::Tanh:
    return math::TanhOp::create(b, loc, x);
  case Activation::Sigmoid: {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, one(), add(one(), e));
  }
  case Activation::Affine:
    return add(mul(constant(alpha), x), constant(beta));
  case Activation::LeakyRelu:
    return arith::SelectOp::create(b, loc, less(x, zero()),
                                   mul(constant(alpha), x), x);
  case Activation::ThresholdedRelu:
    return arith::SelectOp::create(b, loc, less(x, constant(alpha)), zero(), x);
  case Activation::ScaledTanh:
    return mul(constant(alpha),
               math::TanhOp::create(b, loc, mul(constant(beta), x)));
  case Activation::HardSigmoid: {
    Value linear = add(mul(constant(alpha), x), constant(beta));
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, linear, zero()), one());
  }
  case Activation::Elu: {
    Value e =
        arith::SubFOp::create(b, loc, math::ExpOp::create(b, loc, x), one());
    return arith::SelectOp::create(b, loc, less(x, zero()),
                                   mul(constant(alpha), e), x);
  }
  case Activation::Softsign:
    return arith::DivFOp::create(b, loc, x,
                                 add(one(), math::AbsFOp::create(b, loc, x)));
  case Activation::Softplus: {
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|), which neither overflows nor
    // loses small values.
    Value negAbs =
        arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x));
    Value tail =
        math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, negAbs));
    return add(arith::MaximumFOp::create(b, loc, x, zero()), tail);
  }
  }
  llvm_unreachable("unknown activation");
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

/// X * W^T for every direction and step, plus the biases that do not depend
/// on the state: [dirs, seq, batch, gates * hidden]. GRU with
/// linear_before_reset keeps Rbh out (it is added inside r . (H Rh^T + Rbh)).
static Value buildProjection(OpBuilder &b, Location loc, const Plan &plan,
                             const Operands &operands) {
  MLIRContext *context = b.getContext();
  int64_t gateRows = plan.gates * plan.hidden;
  SmallVector<int64_t> shape = {plan.dirs, plan.seq, plan.batch, gateRows};
  Value init;
  if (operands.bias) {
    Value wb = slice(b, loc, operands.bias, indexAttrs(b, {0, 0}),
                     {plan.dirs, gateRows}, {plan.dirs, gateRows});
    Value rb = slice(b, loc, operands.bias, indexAttrs(b, {0, gateRows}),
                     {plan.dirs, gateRows}, {plan.dirs, gateRows});
    bool keepRbh = plan.cell == CellKind::GRU && plan.linearBeforeReset;
    auto type = RankedTensorType::get(shape, plan.element);
    AffineExpr d, t, n, j;
    bindDims(context, d, t, n, j);
    AffineMap perGate = AffineMap::get(4, 0, {d, j}, context);
    init = buildIndexedGeneric(
        b, loc, type, ValueRange{wb, rb}, {perGate, perGate},
        [&](OpBuilder &b, Location loc, ValueRange ivs, ValueRange args) {
          Value sum = arith::AddFOp::create(b, loc, args[0], args[1]);
          if (!keepRbh)
            return sum;
          Value isH =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, ivs[3],
                                    indexConstant(b, loc, 2 * plan.hidden));
          return arith::SelectOp::create(b, loc, isH, args[0], sum).getResult();
        });
  } else {
    init = zeros(b, loc, shape, plan.element);
  }

  AffineExpr d, t, n, j, k;
  bindDims(context, d, t, n, j, k);
  AffineMap xMap = plan.batchFirst ? AffineMap::get(5, 0, {n, t, k}, context)
                                   : AffineMap::get(5, 0, {t, n, k}, context);
  SmallVector<AffineMap> maps = {xMap, AffineMap::get(5, 0, {d, j, k}, context),
                                 AffineMap::get(5, 0, {d, t, n, j}, context)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()},
             ValueRange{operands.input, operands.weight}, ValueRange{init},
             maps, iterators,
             [](OpBuilder &b, Location loc, ValueRange args) {
               Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
               linalg::YieldOp::create(
                   b, loc,
                   ValueRange{arith::AddFOp::create(b, loc, args[2], product)});
             })
      .getResult(0);
}

namespace {
/// The per-direction values a time step reads.
struct DirectionInputs {
  int64_t direction;
  /// R rows multiplied with the state before the gates (all of R, or z and r
  /// for GRU without linear_before_reset) and, for the latter, Rh.
  Value recurrence, recurrenceH;
  /// GRU with linear_before_reset: Rbh, or null without a bias.
  Value biasRh;
  /// LSTM peepholes i, o, f, or null.
  Value peephole[3];
};

/// The states after a step and the step's Y rows.
struct StepResult {
  Value h, c, y;
};
} // namespace

/// One time step at time `t` from states `h` (and `c`): the new states and
/// the values written to Y.
static StepResult buildStep(OpBuilder &b, Location loc, const Plan &plan,
                            const Operands &operands,
                            const DirectionInputs &dir, Value projection,
                            Value t, Value h, Value c) {
  int64_t batch = plan.batch, hidden = plan.hidden;
  int64_t gateRows = plan.gates * hidden;
  Value xw = slice(
      b, loc, projection,
      {b.getIndexAttr(dir.direction), t, b.getIndexAttr(0), b.getIndexAttr(0)},
      {1, 1, batch, gateRows}, {batch, gateRows});
  auto recurrenceRows =
      cast<RankedTensorType>(dir.recurrence.getType()).getDimSize(0);
  Value hr =
      matmulTransposed(b, loc, h, dir.recurrence,
                       zeros(b, loc, {batch, recurrenceRows}, plan.element));
  auto gate = [&](Value source, int64_t index) {
    return slice(b, loc, source, indexAttrs(b, {0, index * hidden}),
                 {batch, hidden}, {batch, hidden});
  };

  // Steps at or past a batch entry's length keep its state and write zeros.
  Value step32;
  bool masked = bool(operands.lens);
  if (masked)
    step32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), t);
  auto activation = [&](unsigned index, OpBuilder &b, Location loc, Value x) {
    return activate(b, loc, plan.activation(dir.direction, index), plan.clip,
                    x);
  };

  // The last generic of a step computes the new states (and, with
  // sequence_lens, the Y rows) from `inputs`, the previous states and the
  // lengths; `cell` computes the new states from the first two. They are
  // then copied over the carried states: one-shot bufferization requires
  // scf.for to yield values in the iteration arguments' buffers, and a copy
  // into the argument keeps that property through the canonicalization and
  // fusion that run before bufferization (an output operand the body does
  // not read would be replaced by a new tensor).
  using CellBody = function_ref<SmallVector<Value>(OpBuilder &, Location,
                                                   ValueRange, Value, Value)>;
  auto finish = [&](SmallVector<StepInput> inputs, CellBody cell) {
    unsigned cellInputs = inputs.size();
    bool hasC = bool(c);
    inputs.push_back({h});
    if (hasC)
      inputs.push_back({c});
    if (masked)
      inputs.push_back({operands.lens, StepInput::PerBatch});
    SmallVector<Value> outputs;
    unsigned numResults = (hasC ? 2 : 1) + (masked ? 1 : 0);
    for (unsigned i = 0; i < numResults; ++i)
      outputs.push_back(stepTensor(b, loc, plan));
    SmallVector<Value> results = stepGeneric(
        b, loc, inputs, outputs,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value hPrev = args[cellInputs];
          Value cPrev = hasC ? args[cellInputs + 1] : Value();
          SmallVector<Value> next =
              cell(b, loc, args.take_front(cellInputs), hPrev, cPrev);
          if (!masked)
            return next;
          Value lens = args[inputs.size() - 1];
          Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                              step32, lens);
          SmallVector<Value> out;
          out.push_back(arith::SelectOp::create(b, loc, valid, next[0], hPrev));
          if (hasC)
            out.push_back(
                arith::SelectOp::create(b, loc, valid, next[1], cPrev));
          out.push_back(arith::SelectOp::create(
              b, loc, valid, next[0], scalarConstant(b, loc, plan.element, 0)));
          return out;
        });
    auto copyInto = [&](Value value, Value dest) {
      return linalg::CopyOp::create(b, loc, value, dest).getResult(0);
    };
    StepResult result;
    result.h = copyInto(results[0], h);
    result.c = hasC ? copyInto(results[1], c) : Value();
    result.y = masked ? results.back() : results[0];
    return result;
  };

  switch (plan.cell) {
  case CellKind::RNN:
    return finish({{gate(xw, 0)}, {gate(hr, 0)}},
                  [&](OpBuilder &b, Location loc, ValueRange args, Value,
                      Value) -> SmallVector<Value> {
                    Value sum = arith::AddFOp::create(b, loc, args[0], args[1]);
                    return {activation(0, b, loc, sum)};
                  });

  case CellKind::GRU: {
    // Gates z, r, h. H = (1 - z) . h~ + z . H_prev.
    auto blend = [&](OpBuilder &b, Location loc, Value z, Value candidate,
                     Value hPrev) -> Value {
      Value one = scalarConstant(b, loc, plan.element, 1);
      Value keep = arith::MulFOp::create(b, loc, z, hPrev);
      Value update = arith::MulFOp::create(
          b, loc, arith::SubFOp::create(b, loc, one, z), candidate);
      return arith::AddFOp::create(b, loc, update, keep);
    };
    if (plan.linearBeforeReset) {
      SmallVector<StepInput> inputs = {{gate(xw, 0)}, {gate(hr, 0)},
                                       {gate(xw, 1)}, {gate(hr, 1)},
                                       {gate(xw, 2)}, {gate(hr, 2)}};
      if (dir.biasRh)
        inputs.push_back({dir.biasRh, StepInput::PerHidden});
      return finish(
          inputs,
          [&](OpBuilder &b, Location loc, ValueRange args, Value hPrev,
              Value) -> SmallVector<Value> {
            Value z = activation(
                0, b, loc, arith::AddFOp::create(b, loc, args[0], args[1]));
            Value r = activation(
                0, b, loc, arith::AddFOp::create(b, loc, args[2], args[3]));
            Value recurrent = args[5];
            if (args.size() > 6)
              recurrent = arith::AddFOp::create(b, loc, recurrent, args[6]);
            Value candidate =
                activation(1, b, loc,
                           arith::AddFOp::create(
                               b, loc, args[4],
                               arith::MulFOp::create(b, loc, r, recurrent)));
            return {blend(b, loc, z, candidate, hPrev)};
          });
    }
    // r . H_prev first, then its product with Rh.
    Value resetState = stepGeneric(
        b, loc, {{gate(xw, 1)}, {gate(hr, 1)}, {h}}, stepTensor(b, loc, plan),
        [&](OpBuilder &b, Location loc, ValueRange args) -> SmallVector<Value> {
          Value r = activation(0, b, loc,
                               arith::AddFOp::create(b, loc, args[0], args[1]));
          return {arith::MulFOp::create(b, loc, r, args[2])};
        })[0];
    Value resetProduct =
        matmulTransposed(b, loc, resetState, dir.recurrenceH,
                         zeros(b, loc, {batch, hidden}, plan.element));
    return finish(
        {{gate(xw, 0)}, {gate(hr, 0)}, {gate(xw, 2)}, {resetProduct}},
        [&](OpBuilder &b, Location loc, ValueRange args, Value hPrev,
            Value) -> SmallVector<Value> {
          Value z = activation(0, b, loc,
                               arith::AddFOp::create(b, loc, args[0], args[1]));
          Value candidate = activation(
              1, b, loc, arith::AddFOp::create(b, loc, args[2], args[3]));
          return {blend(b, loc, z, candidate, hPrev)};
        });
  }

  case CellKind::LSTM: {
    // Gates i, o, f, c; peepholes i, o, f.
    SmallVector<StepInput> inputs;
    for (int64_t g = 0; g < 4; ++g) {
      inputs.push_back({gate(xw, g)});
      inputs.push_back({gate(hr, g)});
    }
    bool peepholes = bool(dir.peephole[0]);
    if (peepholes)
      for (Value p : dir.peephole)
        inputs.push_back({p, StepInput::PerHidden});
    return finish(
        inputs,
        [&](OpBuilder &b, Location loc, ValueRange args, Value,
            Value cPrev) -> SmallVector<Value> {
          auto pre = [&](int64_t g) -> Value {
            return arith::AddFOp::create(b, loc, args[2 * g], args[2 * g + 1]);
          };
          // Adds peephole p's product with the cell state `cell`.
          auto peep = [&](Value x, int64_t p, Value cell) -> Value {
            if (!peepholes)
              return x;
            return arith::AddFOp::create(
                b, loc, x, arith::MulFOp::create(b, loc, args[8 + p], cell));
          };
          Value i = activation(0, b, loc, peep(pre(0), 0, cPrev));
          Value f;
          if (plan.inputForget)
            f = arith::SubFOp::create(
                b, loc, scalarConstant(b, loc, plan.element, 1), i);
          else
            f = activation(0, b, loc, peep(pre(2), 2, cPrev));
          Value candidate = activation(1, b, loc, pre(3));
          Value cell = arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, f, cPrev),
              arith::MulFOp::create(b, loc, i, candidate));
          Value o = activation(0, b, loc, peep(pre(1), 1, cell));
          Value hNew =
              arith::MulFOp::create(b, loc, o, activation(2, b, loc, cell));
          return {hNew, cell};
        });
  }
  }
  llvm_unreachable("unknown cell");
}

/// The lowered results of a recurrent op: Y, Y_h and (LSTM) Y_c. Y is only
/// computed when `needY` (an unused Y is left uninitialized).
static SmallVector<Value> lowerRecurrent(OpBuilder &b, Location loc,
                                         const Plan &plan,
                                         const Operands &operands,
                                         ArrayRef<RankedTensorType> results,
                                         bool needY) {
  int64_t batch = plan.batch, hidden = plan.hidden;
  int64_t gateRows = plan.gates * hidden;
  bool lstm = plan.cell == CellKind::LSTM;
  Value projection = buildProjection(b, loc, plan, operands);

  auto empty = [&](RankedTensorType type) -> Value {
    return tensor::EmptyOp::create(b, loc, type.getShape(),
                                   type.getElementType());
  };
  Value y = empty(results[0]);
  Value yh = empty(results[1]);
  Value yc = lstm ? empty(results[2]) : Value();

  // Where direction d's state lives in initial_h/initial_c, Y_h and Y_c.
  auto stateOffsets = [&](int64_t d) {
    return plan.batchFirst ? indexAttrs(b, {0, d, 0})
                           : indexAttrs(b, {d, 0, 0});
  };
  SmallVector<int64_t> stateSizes =
      plan.batchFirst ? SmallVector<int64_t>{batch, 1, hidden}
                      : SmallVector<int64_t>{1, batch, hidden};
  // The loops update their states in place, so they start from new tensors:
  // a copy of initial_h/initial_c, never the operand itself (a kernel's
  // arguments are buffers other steps may still read).
  auto initialState = [&](Value initial, int64_t d) -> Value {
    if (!initial)
      return zeros(b, loc, {batch, hidden}, plan.element);
    Value state =
        slice(b, loc, initial, stateOffsets(d), stateSizes, {batch, hidden});
    return linalg::CopyOp::create(b, loc, state, stepTensor(b, loc, plan))
        .getResult(0);
  };

  for (int64_t d = 0; d < plan.dirs; ++d) {
    DirectionInputs dir;
    dir.direction = d;
    bool resetFirst = plan.cell == CellKind::GRU && !plan.linearBeforeReset;
    int64_t rows = resetFirst ? 2 * hidden : gateRows;
    dir.recurrence =
        slice(b, loc, operands.recurrence, indexAttrs(b, {d, 0, 0}),
              {1, rows, hidden}, {rows, hidden});
    if (resetFirst)
      dir.recurrenceH =
          slice(b, loc, operands.recurrence, indexAttrs(b, {d, 2 * hidden, 0}),
                {1, hidden, hidden}, {hidden, hidden});
    if (plan.cell == CellKind::GRU && plan.linearBeforeReset && operands.bias)
      dir.biasRh = slice(b, loc, operands.bias,
                         indexAttrs(b, {d, gateRows + 2 * hidden}), {1, hidden},
                         {hidden});
    if (lstm && operands.peepholes)
      for (int64_t p = 0; p < 3; ++p)
        dir.peephole[p] =
            slice(b, loc, operands.peepholes, indexAttrs(b, {d, p * hidden}),
                  {1, hidden}, {hidden});

    SmallVector<Value> carried = {initialState(operands.initialH, d)};
    if (lstm)
      carried.push_back(initialState(operands.initialC, d));
    if (needY)
      carried.push_back(y);
    Value lower = indexConstant(b, loc, 0);
    Value upper = indexConstant(b, loc, plan.seq);
    Value one = indexConstant(b, loc, 1);
    auto loop = scf::ForOp::create(
        b, loc, lower, upper, one, carried,
        [&](OpBuilder &b, Location loc, Value step, ValueRange state) {
          Value t = step;
          if (plan.reverse[d])
            t = arith::SubIOp::create(
                b, loc, indexConstant(b, loc, plan.seq - 1), step);
          StepResult next = buildStep(b, loc, plan, operands, dir, projection,
                                      t, state[0], lstm ? state[1] : Value());
          SmallVector<Value> yielded = {next.h};
          if (lstm)
            yielded.push_back(next.c);
          if (needY) {
            SmallVector<OpFoldResult> offsets =
                plan.batchFirst
                    ? SmallVector<OpFoldResult>{b.getIndexAttr(0), t,
                                                b.getIndexAttr(d),
                                                b.getIndexAttr(0)}
                    : SmallVector<OpFoldResult>{t, b.getIndexAttr(d),
                                                b.getIndexAttr(0),
                                                b.getIndexAttr(0)};
            SmallVector<int64_t> sizes =
                plan.batchFirst ? SmallVector<int64_t>{batch, 1, 1, hidden}
                                : SmallVector<int64_t>{1, 1, batch, hidden};
            yielded.push_back(
                insert(b, loc, next.y, state.back(), offsets, sizes));
          }
          scf::YieldOp::create(b, loc, yielded);
        });
    yh = insert(b, loc, loop.getResult(0), yh, stateOffsets(d), stateSizes);
    if (lstm)
      yc = insert(b, loc, loop.getResult(1), yc, stateOffsets(d), stateSizes);
    if (needY)
      y = loop.getResults().back();
  }

  SmallVector<Value> values = {y, yh};
  if (lstm)
    values.push_back(yc);
  return values;
}

bool strata::detail::canLowerRecurrent(Operation *op) {
  return planRecurrent(op).has_value();
}

namespace {

template <typename OpTy> struct RecurrentToLinalg : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<Plan> plan = planRecurrent(op);
    if (!plan)
      return rewriter.notifyMatchFailure(op, "unsupported recurrent op");
    SmallVector<RankedTensorType> results;
    for (Type type : op->getResultTypes()) {
      auto converted = dyn_cast_or_null<RankedTensorType>(
          this->getTypeConverter()->convertType(type));
      if (!converted)
        return rewriter.notifyMatchFailure(op, "result type does not convert");
      results.push_back(converted);
    }
    Operands operands;
    operands.input = adaptor.getInput();
    operands.weight = adaptor.getWeight();
    operands.recurrence = adaptor.getRecurrence();
    operands.bias = adaptor.getBias();
    operands.lens = adaptor.getSequenceLens();
    operands.initialH = adaptor.getInitialH();
    if constexpr (std::is_same_v<OpTy, graph::LSTMOp>) {
      operands.initialC = adaptor.getInitialC();
      operands.peepholes = adaptor.getPeepholes();
    }
    rewriter.replaceOp(op,
                       lowerRecurrent(rewriter, op.getLoc(), *plan, operands,
                                      results, !op->getResult(0).use_empty()));
    return success();
  }
};

} // namespace

void strata::detail::populateRecurrentToLinalgPatterns(
    TypeConverter &converter, RewritePatternSet &patterns) {
  // The time loops are scf.for: the pass declares scf as a dependent
  // dialect (Passes.td).
  MLIRContext *context = patterns.getContext();
  patterns.add<RecurrentToLinalg<graph::RNNOp>, RecurrentToLinalg<graph::GRUOp>,
               RecurrentToLinalg<graph::LSTMOp>>(converter, context);
}
