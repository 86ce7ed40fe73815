//===- NNOps.cpp - matmul, convolution, pooling, norms ----------*- C++ -*-===//
//
// Shape inference and verifiers of the neural-network ops. Most ops check
// their operands in one routine that serves both: shape inference runs it
// silently, the verifier runs it reporting the problem.
//
// This file has the products, normalizations, recurrent networks, Einsum,
// quantization and signal ops; ConvOps.cpp the convolutions and pooling
// (their sliding windows); NNOpsCommon.h the checking they share.
//
//===----------------------------------------------------------------------===//

#include "NNOpsCommon.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace strata::graph;
using namespace strata::graph::nn_ops;

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

/// numpy matmul shape: 1-D operands are promoted and the added axis removed.
static FailureOr<SmallVector<int64_t>> matmulShape(ArrayRef<int64_t> lhs,
                                                   ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return failure();
  SmallVector<int64_t> a(lhs), b(rhs);
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  if (!dimsCompatible(a.back(), b[b.size() - 2]))
    return failure();
  auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2),
                               ArrayRef<int64_t>(b).drop_back(2));
  if (!batch)
    return failure();
  SmallVector<int64_t> shape = *batch;
  if (!lhsVector)
    shape.push_back(a[a.size() - 2]);
  if (!rhsVector)
    shape.push_back(b.back());
  return shape;
}

LogicalResult MatMulOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto lhs = cast<TensorType>(getLhs().getType());
  auto rhs = cast<TensorType>(getRhs().getType());
  if (!lhs.hasRank() || !rhs.hasRank()) {
    types.push_back(withShape(getType(), std::nullopt));
    return success();
  }
  auto shape = matmulShape(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return failure();
  types.push_back(withShape(getType(), ArrayRef<int64_t>(*shape)));
  return success();
}

LogicalResult MatMulOp::verify() {
  auto lhs = cast<TensorType>(getLhs().getType());
  auto rhs = cast<TensorType>(getRhs().getType());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("operand element types differ: ")
           << lhs.getElementType() << " vs " << rhs.getElementType();
  if (lhs.hasRank() && rhs.hasRank() &&
      failed(matmulShape(lhs.getShape(), rhs.getShape())))
    return emitOpError("operand shapes ")
           << lhs << " and " << rhs << " are not matmul-compatible";
  return success();
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto a = cast<TensorType>(getA().getType());
  auto b = cast<TensorType>(getB().getType());
  if (!a.hasRank() || !b.hasRank()) {
    types.push_back(RankedTensorType::get({kDynamic, kDynamic},
                                          getElementTypeOrSelf(getType())));
    return success();
  }
  if (a.getRank() != 2 || b.getRank() != 2)
    return failure();
  int64_t m = a.getDimSize(getTransA() ? 1 : 0);
  int64_t k = a.getDimSize(getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(getTransB() ? 0 : 1);
  if (!dimsCompatible(k, kb))
    return failure();
  types.push_back(withShape(getType(), ArrayRef<int64_t>{m, n}));
  return success();
}

LogicalResult GemmOp::verify() {
  auto a = cast<TensorType>(getA().getType());
  auto b = cast<TensorType>(getB().getType());
  if ((a.hasRank() && a.getRank() != 2) || (b.hasRank() && b.getRank() != 2))
    return emitOpError("A and B must be 2-D, got ") << a << " and " << b;
  SmallVector<Type> types;
  if (failed(inferResultTypes(types)))
    return emitOpError("inner dimensions of A ")
           << a << " and B " << b << " differ (transA = " << getTransA()
           << ", transB = " << getTransB() << ")";
  if (getC()) {
    auto c = cast<TensorType>(getC().getType());
    auto result = cast<TensorType>(types.front());
    if (c.hasRank() && result.hasRank() &&
        !broadcastShapes(c.getShape(), result.getShape()))
      return emitOpError("C ") << c << " does not broadcast to " << result;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

LogicalResult LRNOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(getInput().getType());
  return success();
}

LogicalResult LRNOp::verify() {
  int64_t size = getSize();
  if (size < 1)
    return emitOpError("size must be >= 1, got ") << size;
  auto input = tensorType(getInput());
  if (input.hasRank() && input.getRank() < 2)
    return emitOpError("input must have rank >= 2 (N, C, ...), got ") << input;
  return success();
}

/// Checks that each of `params` is 1-D with one entry per channel of an
/// (N, C, ...) input.
static LogicalResult
checkPerChannel(TensorType input, ArrayRef<std::pair<Value, StringRef>> params,
                const Check &check) {
  if (input.hasRank() && input.getRank() < 2)
    return check.fail("input must have rank >= 2 (N, C, ...), got ", input);
  for (auto [value, name] : params)
    if (failed(checkVector(value, dimOf(input, 1), name, check)))
      return failure();
  return success();
}

static LogicalResult inferBatchNorm(BatchNormOp op,
                                    SmallVectorImpl<Type> &types,
                                    const Check &check) {
  auto input = tensorType(op.getInput());
  if (failed(checkFlag(op.getTrainingMode(), "training_mode", check)))
    return failure();
  if (tensorType(op.getScale()).getElementType() !=
      tensorType(op.getBias()).getElementType())
    return check.fail("scale and bias element types differ");
  Type statsElement = tensorType(op.getInputMean()).getElementType();
  if (tensorType(op.getInputVar()).getElementType() != statsElement)
    return check.fail("input_mean and input_var element types differ");
  if (failed(checkPerChannel(input,
                             {{op.getScale(), "scale"},
                              {op.getBias(), "bias"},
                              {op.getInputMean(), "input_mean"},
                              {op.getInputVar(), "input_var"}},
                             check)))
    return failure();
  types.push_back(input);
  auto stats = RankedTensorType::get({dimOf(input, 1)}, statsElement);
  types.push_back(stats);
  types.push_back(stats);
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(BatchNormOp, inferBatchNorm)

static LogicalResult inferInstanceNorm(InstanceNormOp op,
                                       SmallVectorImpl<Type> &types,
                                       const Check &check) {
  auto input = tensorType(op.getInput());
  if (failed(checkPerChannel(
          input, {{op.getScale(), "scale"}, {op.getBias(), "bias"}}, check)))
    return failure();
  types.push_back(input);
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(InstanceNormOp, inferInstanceNorm)

static LogicalResult inferGroupNorm(GroupNormOp op,
                                    SmallVectorImpl<Type> &types,
                                    const Check &check) {
  auto input = tensorType(op.getInput());
  int64_t groups = op.getNumGroups();
  if (groups < 1)
    return check.fail("num_groups must be >= 1, got ", groups);
  if (input.hasRank() && input.getRank() < 2)
    return check.fail("input must have rank >= 2 (N, C, ...), got ", input);
  int64_t channels = dimOf(input, 1);
  if (!ShapedType::isDynamic(channels) && channels % groups != 0)
    return check.fail("channels ", channels,
                      " are not divisible by num_groups ", groups);
  for (auto [value, name] :
       {std::pair(op.getScale(), "scale"), std::pair(op.getBias(), "bias")}) {
    auto type = tensorType(value);
    if (!type.hasRank())
      continue;
    if (type.getRank() != 1 || (!dimsCompatible(type.getDimSize(0), groups) &&
                                !dimsCompatible(type.getDimSize(0), channels)))
      return check.fail(name,
                        " must be 1-D with num_groups or channels entries, "
                        "got ",
                        type);
  }
  types.push_back(input);
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(GroupNormOp, inferGroupNorm)

LogicalResult
MeanVarianceNormOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  types.push_back(getInput().getType());
  return success();
}

LogicalResult MeanVarianceNormOp::verify() {
  auto input = tensorType(getInput());
  if (!input.hasRank())
    return success();
  SmallVector<int64_t> seen;
  for (int64_t axis : getAxes()) {
    auto normalized = normalizeAxis(axis, input.getRank());
    if (!normalized)
      return emitOpError("axis ")
             << axis << " is out of range for rank " << input.getRank();
    if (llvm::is_contained(seen, *normalized))
      return emitOpError("axis ") << axis << " is repeated";
    seen.push_back(*normalized);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RNN, GRU, LSTM
//===----------------------------------------------------------------------===//

/// Shape inference of the recurrent ops; `gates` is 1 (RNN), 3 (GRU) or 4
/// (LSTM) and `activationsPerDirection` the number of activation functions
/// one direction uses. `initialC` and `peepholes` are LSTM's.
template <typename OpTy>
static LogicalResult
inferRecurrent(OpTy op, int64_t gates, int64_t activationsPerDirection,
               Value initialC, Value peepholes, SmallVectorImpl<Type> &types,
               const Check &check) {
  StringRef direction = op.getDirection();
  if (failed(checkOneOf(direction, {"forward", "reverse", "bidirectional"},
                        "direction", check)) ||
      failed(checkFlag(op.getLayout(), "layout", check)))
    return failure();
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t hidden = op.getHiddenSize();
  if (hidden < 1)
    return check.fail("hidden_size must be >= 1, got ", hidden);
  if (auto clip = op.getClip(); clip && !(clip->convertToDouble() > 0))
    return check.fail("clip must be positive");
  if (std::optional<ArrayAttr> activations = op.getActivations()) {
    if (int64_t(activations->size()) != activationsPerDirection * dirs)
      return check.fail("expected ", activationsPerDirection * dirs,
                        " activations (", activationsPerDirection,
                        " per direction), got ", activations->size());
    for (Attribute a : *activations)
      if (failed(checkOneOf(cast<StringAttr>(a).getValue(),
                            {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu",
                             "ThresholdedRelu", "ScaledTanh", "HardSigmoid",
                             "Elu", "Softsign", "Softplus"},
                            "activation", check)))
        return failure();
  }
  auto input = tensorType(op.getInput());
  Type element = input.getElementType();
  if (input.hasRank() && input.getRank() != 3)
    return check.fail("input must be 3-D, got ", input);
  bool batchFirst = op.getLayout() == 1;
  int64_t seq = dimOf(input, batchFirst ? 1 : 0);
  int64_t batch = dimOf(input, batchFirst ? 0 : 1);
  int64_t inputSize = dimOf(input, 2);
  SmallVector<int64_t> stateShape =
      batchFirst ? SmallVector<int64_t>{batch, dirs, hidden}
                 : SmallVector<int64_t>{dirs, batch, hidden};
  auto expect = [&](Value value, ArrayRef<int64_t> shape,
                    StringRef name) -> LogicalResult {
    if (!value)
      return success();
    auto type = tensorType(value);
    if (type.getElementType() != element)
      return check.fail(name, " element type ", type.getElementType(),
                        " differs from the input's ", element);
    if (type.hasRank() &&
        failed(verifyCompatibleShape(type.getShape(), shape))) {
      std::string expected;
      for (int64_t d : shape)
        expected += (expected.empty() ? "" : "x") +
                    (ShapedType::isDynamic(d) ? "?" : std::to_string(d));
      return check.fail(name, " must have shape ", expected, ", got ", type);
    }
    return success();
  };
  if (failed(expect(op.getWeight(), {dirs, gates * hidden, inputSize},
                    "weight")) ||
      failed(expect(op.getRecurrence(), {dirs, gates * hidden, hidden},
                    "recurrence")) ||
      failed(expect(op.getBias(), {dirs, 2 * gates * hidden}, "bias")) ||
      failed(expect(op.getInitialH(), stateShape, "initial_h")) ||
      failed(expect(initialC, stateShape, "initial_c")) ||
      failed(expect(peepholes, {dirs, 3 * hidden}, "peepholes")))
    return failure();
  if (Value lens = op.getSequenceLens())
    if (failed(checkVector(lens, batch, "sequence_lens", check)))
      return failure();
  SmallVector<int64_t> yShape =
      batchFirst ? SmallVector<int64_t>{batch, seq, dirs, hidden}
                 : SmallVector<int64_t>{seq, dirs, batch, hidden};
  types.push_back(RankedTensorType::get(yShape, element));
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    types.push_back(RankedTensorType::get(stateShape, element));
  return success();
}

LogicalResult RNNOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferRecurrent(*this, 1, 1, Value(), Value(), types,
                        Check(*this, false));
}

LogicalResult RNNOp::verify() {
  SmallVector<Type> types;
  return inferRecurrent(*this, 1, 1, Value(), Value(), types,
                        Check(*this, true));
}

LogicalResult GRUOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferRecurrent(*this, 3, 2, Value(), Value(), types,
                        Check(*this, false));
}

LogicalResult GRUOp::verify() {
  Check check(*this, true);
  if (failed(checkFlag(getLinearBeforeReset(), "linear_before_reset", check)))
    return failure();
  SmallVector<Type> types;
  return inferRecurrent(*this, 3, 2, Value(), Value(), types, check);
}

LogicalResult LSTMOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferRecurrent(*this, 4, 3, getInitialC(), getPeepholes(), types,
                        Check(*this, false));
}

LogicalResult LSTMOp::verify() {
  Check check(*this, true);
  if (failed(checkFlag(getInputForget(), "input_forget", check)))
    return failure();
  SmallVector<Type> types;
  return inferRecurrent(*this, 4, 3, getInitialC(), getPeepholes(), types,
                        check);
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

namespace {
/// One term of an einsum equation: its letters in order and where the
/// ellipsis ("...") sits among them (-1 when absent).
struct EinsumTerm {
  SmallVector<char> labels;
  int64_t ellipsis = -1;
};
} // namespace

static FailureOr<EinsumTerm> parseEinsumTerm(StringRef text,
                                             const Check &check) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '.') {
      if (!text.substr(i).starts_with("...") || term.ellipsis >= 0)
        return check.fail("malformed ellipsis in einsum term \"", text, "\"");
      term.ellipsis = term.labels.size();
      i += 3;
      continue;
    }
    if (!llvm::isAlpha(text[i]))
      return check.fail("invalid character '", text.substr(i, 1),
                        "' in einsum term \"", text, "\"");
    term.labels.push_back(text[i++]);
  }
  return term;
}

/// Parses `equation` into its input terms and output term. Without "->" the
/// output is implicit: the ellipsis (if any input has one) and then the
/// letters used exactly once, in alphabetical order.
static LogicalResult parseEinsum(StringRef equation,
                                 SmallVectorImpl<EinsumTerm> &inputs,
                                 EinsumTerm &output, const Check &check) {
  std::string compact;
  for (char c : equation)
    if (!llvm::isSpace(c))
      compact.push_back(c);
  StringRef eq(compact);
  size_t arrow = eq.find("->");
  StringRef lhs = eq.substr(0, arrow);
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  bool anyEllipsis = false;
  for (StringRef text : terms) {
    auto term = parseEinsumTerm(text, check);
    if (failed(term))
      return failure();
    anyEllipsis |= term->ellipsis >= 0;
    inputs.push_back(std::move(*term));
  }
  if (arrow == StringRef::npos) {
    std::map<char, int> counts;
    for (const EinsumTerm &term : inputs)
      for (char c : term.labels)
        ++counts[c];
    output.ellipsis = anyEllipsis ? 0 : -1;
    for (auto [c, count] : counts)
      if (count == 1)
        output.labels.push_back(c);
    return success();
  }
  auto term = parseEinsumTerm(eq.substr(arrow + 2), check);
  if (failed(term))
    return failure();
  output = std::move(*term);
  if (output.ellipsis >= 0 && !anyEllipsis)
    return check.fail("the einsum output has an ellipsis but no input does");
  for (auto [i, label] : llvm::enumerate(output.labels)) {
    char c = label;
    if (llvm::is_contained(ArrayRef(output.labels).take_front(i), c))
      return check.fail("einsum output letter '", StringRef(&c, 1),
                        "' is repeated");
    if (llvm::none_of(inputs, [&](const EinsumTerm &t) {
          return llvm::is_contained(t.labels, c);
        }))
      return check.fail("einsum output letter '", StringRef(&c, 1),
                        "' does not appear in any input");
  }
  return success();
}

static LogicalResult inferEinsum(EinsumOp op, SmallVectorImpl<Type> &types,
                                 const Check &check) {
  SmallVector<EinsumTerm> terms;
  EinsumTerm output;
  if (failed(parseEinsum(op.getEquation(), terms, output, check)))
    return failure();
  if (terms.size() != op.getInputs().size())
    return check.fail("equation \"", op.getEquation(), "\" has ", terms.size(),
                      " input terms but the op has ", op.getInputs().size(),
                      " operands");
  Type element = getElementTypeOrSelf(op.getType());
  std::map<char, int64_t> sizes;
  SmallVector<int64_t> broadcast;
  bool anyUnranked = false;
  for (auto [index, term, value] : llvm::enumerate(terms, op.getInputs())) {
    auto type = tensorType(value);
    if (type.getElementType() != element)
      return check.fail("operand #", index, " element type ",
                        type.getElementType(), " differs from the result's ",
                        element);
    if (!type.hasRank()) {
      anyUnranked = true;
      continue;
    }
    int64_t letters = term.labels.size(), rank = type.getRank();
    if (term.ellipsis < 0 ? rank != letters : rank < letters)
      return check.fail("operand #", index, " has rank ", rank,
                        " but its einsum term has ", letters, " letters",
                        term.ellipsis < 0 ? "" : " and an ellipsis");
    int64_t ellipsisRank = rank - letters;
    for (auto [j, c] : llvm::enumerate(term.labels)) {
      int64_t dim = type.getDimSize(
          term.ellipsis >= 0 && int64_t(j) >= term.ellipsis ? j + ellipsisRank
                                                            : j);
      auto [it, inserted] = sizes.try_emplace(c, dim);
      if (inserted || ShapedType::isDynamic(dim))
        continue;
      if (!ShapedType::isDynamic(it->second) && it->second != dim)
        return check.fail("einsum letter '", StringRef(&c, 1), "' has sizes ",
                          it->second, " and ", dim);
      it->second = dim;
    }
    if (term.ellipsis >= 0) {
      auto next = broadcastShapes(
          broadcast, type.getShape().slice(term.ellipsis, ellipsisRank));
      if (!next)
        return check.fail("the ellipsis dimensions of operand #", index,
                          " do not broadcast with the other operands'");
      broadcast = std::move(*next);
    }
  }
  if (anyUnranked && output.ellipsis >= 0) {
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  SmallVector<int64_t> shape;
  for (auto [j, c] : llvm::enumerate(output.labels)) {
    if (int64_t(j) == output.ellipsis)
      shape.append(broadcast);
    auto it = sizes.find(c);
    shape.push_back(it == sizes.end() ? kDynamic : it->second);
  }
  if (output.ellipsis == int64_t(output.labels.size()))
    shape.append(broadcast);
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(EinsumOp, inferEinsum)

//===----------------------------------------------------------------------===//
// Det
//===----------------------------------------------------------------------===//

static LogicalResult inferDet(DetOp op, SmallVectorImpl<Type> &types,
                              const Check &check) {
  auto input = tensorType(op.getInput());
  if (!input.hasRank()) {
    types.push_back(input);
    return success();
  }
  int64_t rank = input.getRank();
  if (rank < 2)
    return check.fail("input must have rank >= 2, got ", input);
  if (!dimsCompatible(input.getDimSize(rank - 1), input.getDimSize(rank - 2)))
    return check.fail("input matrices must be square, got ", input);
  types.push_back(withShape(input, input.getShape().drop_back(2)));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(DetOp, inferDet)

//===----------------------------------------------------------------------===//
// MatMulInteger, QLinearMatMul
//===----------------------------------------------------------------------===//

/// numpy matmul of two operands, with result element type `element`.
static LogicalResult inferMatMulLike(Value lhsValue, Value rhsValue,
                                     Type element, SmallVectorImpl<Type> &types,
                                     const Check &check) {
  auto lhs = tensorType(lhsValue), rhs = tensorType(rhsValue);
  if (!lhs.hasRank() || !rhs.hasRank()) {
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  auto shape = matmulShape(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return check.fail("operand shapes ", lhs, " and ", rhs,
                      " are not matmul-compatible");
  types.push_back(RankedTensorType::get(*shape, element));
  return success();
}

/// The number of rows of a matmul operand (per-row zero points) and of
/// columns of the right one (per-column zero points).
static int64_t rowsOf(Value value) {
  auto type = tensorType(value);
  return type.hasRank() && type.getRank() >= 2
             ? type.getDimSize(type.getRank() - 2)
             : kDynamic;
}
static int64_t colsOf(Value value) {
  auto type = tensorType(value);
  return type.hasRank() && type.getRank() >= 2
             ? type.getDimSize(type.getRank() - 1)
             : kDynamic;
}

static LogicalResult inferMatMulInteger(MatMulIntegerOp op,
                                        SmallVectorImpl<Type> &types,
                                        const Check &check) {
  if (failed(checkZeroPoint(op.getLhsZeroPoint(),
                            tensorType(op.getLhs()).getElementType(),
                            "lhs_zero_point", check, rowsOf(op.getLhs()))) ||
      failed(checkZeroPoint(op.getRhsZeroPoint(),
                            tensorType(op.getRhs()).getElementType(),
                            "rhs_zero_point", check, colsOf(op.getRhs()))))
    return failure();
  return inferMatMulLike(op.getLhs(), op.getRhs(),
                         getElementTypeOrSelf(op.getType()), types, check);
}

SHAPE_FUNCTION_IS_VERIFIER(MatMulIntegerOp, inferMatMulInteger)

static LogicalResult inferQLinearMatMul(QLinearMatMulOp op,
                                        SmallVectorImpl<Type> &types,
                                        const Check &check) {
  Type outElement = getElementTypeOrSelf(op.getType());
  if (failed(checkZeroPoint(op.getLhsZeroPoint(),
                            tensorType(op.getLhs()).getElementType(),
                            "lhs_zero_point", check, rowsOf(op.getLhs()))) ||
      failed(checkZeroPoint(op.getRhsZeroPoint(),
                            tensorType(op.getRhs()).getElementType(),
                            "rhs_zero_point", check, colsOf(op.getRhs()))) ||
      failed(checkZeroPoint(op.getOutputZeroPoint(), outElement,
                            "output_zero_point", check)))
    return failure();
  if (!isScalarLike(op.getOutputScale()))
    return check.fail("output_scale must be a scalar");
  if (!isScalarLike(op.getLhsScale()) &&
      failed(checkVector(op.getLhsScale(), rowsOf(op.getLhs()), "lhs_scale",
                         check)))
    return failure();
  if (!isScalarLike(op.getRhsScale()) &&
      failed(checkVector(op.getRhsScale(), colsOf(op.getRhs()), "rhs_scale",
                         check)))
    return failure();
  return inferMatMulLike(op.getLhs(), op.getRhs(), outElement, types, check);
}

SHAPE_FUNCTION_IS_VERIFIER(QLinearMatMulOp, inferQLinearMatMul)

//===----------------------------------------------------------------------===//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
//===----------------------------------------------------------------------===//

/// Scale and zero point are scalars (per tensor) or 1-D along `axis` (per
/// axis); the zero point has the scale's shape.
static LogicalResult checkQuantParams(Value inputValue, Value scaleValue,
                                      Value zeroPoint, int64_t axis,
                                      const Check &check) {
  auto input = tensorType(inputValue), scale = tensorType(scaleValue);
  if (scale.hasRank() && scale.getRank() > 1)
    return check.fail("scale must be a scalar or 1-D, got ", scale);
  if (scale.hasRank() && scale.getRank() == 1 && input.hasRank()) {
    auto normalized = normalizeAxis(axis, input.getRank());
    if (!normalized)
      return check.fail("axis ", axis, " is out of range for rank ",
                        input.getRank());
    if (!dimsCompatible(scale.getDimSize(0), 1) &&
        !dimsCompatible(scale.getDimSize(0), input.getDimSize(*normalized)))
      return check.fail("scale has ", scale.getDimSize(0),
                        " entries but the input has ",
                        input.getDimSize(*normalized), " along axis ", axis);
  }
  if (zeroPoint) {
    auto zp = tensorType(zeroPoint);
    if (zp.hasRank() && scale.hasRank() &&
        failed(verifyCompatibleShape(zp, scale)))
      return check.fail("zero_point ", zp, " must have the scale's shape ",
                        scale);
  }
  return success();
}

static LogicalResult inferQuantizeLinear(QuantizeLinearOp op,
                                         SmallVectorImpl<Type> &types,
                                         const Check &check) {
  if (failed(checkQuantParams(op.getInput(), op.getScale(), op.getZeroPoint(),
                              op.getAxis(), check)))
    return failure();
  Type element =
      op.getZeroPoint()
          ? tensorType(op.getZeroPoint()).getElementType()
          : IntegerType::get(op.getContext(), 8, IntegerType::Unsigned);
  if (getElementTypeOrSelf(op.getType()) != element)
    return check.fail("result element type must be ", element,
                      " (the zero point's, or ui8 without one)");
  auto input = tensorType(op.getInput());
  types.push_back(
      input.hasRank()
          ? TensorType(RankedTensorType::get(input.getShape(), element))
          : TensorType(UnrankedTensorType::get(element)));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(QuantizeLinearOp, inferQuantizeLinear)

static LogicalResult inferDequantizeLinear(DequantizeLinearOp op,
                                           SmallVectorImpl<Type> &types,
                                           const Check &check) {
  auto input = tensorType(op.getInput());
  if (failed(checkQuantParams(op.getInput(), op.getScale(), op.getZeroPoint(),
                              op.getAxis(), check)))
    return failure();
  if (op.getZeroPoint() &&
      tensorType(op.getZeroPoint()).getElementType() != input.getElementType())
    return check.fail("zero_point element type differs from the input's ",
                      input.getElementType());
  Type element = getElementTypeOrSelf(op.getType());
  types.push_back(
      input.hasRank()
          ? TensorType(RankedTensorType::get(input.getShape(), element))
          : TensorType(UnrankedTensorType::get(element)));
  return success();
}

LogicalResult
DequantizeLinearOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  return inferDequantizeLinear(*this, types, Check(*this, false));
}

LogicalResult DequantizeLinearOp::verify() {
  SmallVector<Type> types;
  return inferDequantizeLinear(*this, types, Check(*this, true));
}

LogicalResult
DynamicQuantizeLinearOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = tensorType(getInput());
  auto u8 = IntegerType::get(getContext(), 8, IntegerType::Unsigned);
  types.push_back(input.hasRank()
                      ? TensorType(RankedTensorType::get(input.getShape(), u8))
                      : TensorType(UnrankedTensorType::get(u8)));
  types.push_back(RankedTensorType::get({}, input.getElementType()));
  types.push_back(RankedTensorType::get({}, u8));
  return success();
}

// The ODS constraints fix the element types and the InferShapes interface
// checks the result shapes (scalar scale and zero point); no other property
// can be malformed.
LogicalResult DynamicQuantizeLinearOp::verify() { return success(); }

//===----------------------------------------------------------------------===//
// GridSample, NonMaxSuppression
//===----------------------------------------------------------------------===//

static LogicalResult inferGridSample(GridSampleOp op,
                                     SmallVectorImpl<Type> &types,
                                     const Check &check) {
  if (failed(checkFlag(op.getAlignCorners(), "align_corners", check)) ||
      failed(checkOneOf(op.getMode(),
                        {"bilinear", "nearest", "bicubic", "linear", "cubic"},
                        "mode", check)) ||
      failed(checkOneOf(op.getPaddingMode(), {"zeros", "border", "reflection"},
                        "padding_mode", check)))
    return failure();
  auto input = tensorType(op.getInput()), grid = tensorType(op.getGrid());
  if (!isa<FloatType>(grid.getElementType()))
    return check.fail("grid must hold floats, got ", grid);
  Type element = getElementTypeOrSelf(op.getType());
  if (element != input.getElementType())
    return check.fail("result element type differs from the input's");
  if (input.hasRank() && input.getRank() < 3)
    return check.fail("input must have rank >= 3 (N, C, D...), got ", input);
  if (!input.hasRank() || !grid.hasRank()) {
    types.push_back(UnrankedTensorType::get(element));
    return success();
  }
  int64_t rank = input.getRank();
  if (grid.getRank() != rank ||
      !dimsCompatible(grid.getDimSize(rank - 1), rank - 2))
    return check.fail("grid must be (N, D_out..., ", rank - 2, ") for input ",
                      input, ", got ", grid);
  if (!dimsCompatible(input.getDimSize(0), grid.getDimSize(0)))
    return check.fail("input and grid batch sizes differ");
  int64_t batch = ShapedType::isDynamic(input.getDimSize(0))
                      ? grid.getDimSize(0)
                      : input.getDimSize(0);
  SmallVector<int64_t> shape = {batch, input.getDimSize(1)};
  shape.append(grid.getShape().begin() + 1, grid.getShape().end() - 1);
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(GridSampleOp, inferGridSample)

LogicalResult
NonMaxSuppressionOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  // One row per selected box: only the run time knows how many.
  types.push_back(RankedTensorType::get(
      {kDynamic, 3}, getSelectedIndices().getType().getElementType()));
  return success();
}

LogicalResult NonMaxSuppressionOp::verify() {
  Check check(*this, true);
  if (failed(checkFlag(getCenterPointBox(), "center_point_box", check)))
    return failure();
  auto boxes = tensorType(getBoxes()), scores = tensorType(getScores());
  if (boxes.hasRank() &&
      (boxes.getRank() != 3 || !dimsCompatible(boxes.getDimSize(2), 4)))
    return check.fail("boxes must be (batch, boxes, 4), got ", boxes);
  if (scores.hasRank() && scores.getRank() != 3)
    return check.fail("scores must be (batch, classes, boxes), got ", scores);
  if (!dimsCompatible(dimOf(boxes, 0), dimOf(scores, 0)) ||
      !dimsCompatible(dimOf(boxes, 1), dimOf(scores, 2)))
    return check.fail("boxes ", boxes, " and scores ", scores,
                      " disagree on the batch or box count");
  for (auto [value, name] :
       {std::pair(getMaxOutputBoxesPerClass(), "max_output_boxes_per_class"),
        std::pair(getIouThreshold(), "iou_threshold"),
        std::pair(getScoreThreshold(), "score_threshold")})
    if (value && !isScalarLike(value))
      return check.fail(name, " must be a scalar, got ", value.getType());
  return success();
}

//===----------------------------------------------------------------------===//
// DFT, STFT, MelWeightMatrix
//===----------------------------------------------------------------------===//

static LogicalResult inferDFT(DFTOp op, SmallVectorImpl<Type> &types,
                              const Check &check) {
  if (failed(checkFlag(op.getInverse(), "inverse", check)) ||
      failed(checkFlag(op.getOnesided(), "onesided", check)))
    return failure();
  if (op.getInverse() && op.getOnesided())
    return check.fail("inverse and onesided cannot both be set");
  auto input = tensorType(op.getInput());
  Type element = input.getElementType();
  if (getElementTypeOrSelf(op.getType()) != element)
    return check.fail("result element type differs from the input's");
  std::optional<int64_t> length;
  if (Value dftLength = op.getDftLength()) {
    if (!isScalarLike(dftLength))
      return check.fail("dft_length must be a scalar");
    length = constantScalar(dftLength);
    if (!length)
      length = kDynamic;
    else if (*length < 1)
      return check.fail("dft_length must be positive, got ", *length);
  }
  if (!input.hasRank()) {
    types.push_back(input);
    return success();
  }
  int64_t rank = input.getRank();
  if (rank < 2 || (!dimsCompatible(input.getDimSize(rank - 1), 1) &&
                   !dimsCompatible(input.getDimSize(rank - 1), 2)))
    return check.fail("input must be (batch, signal..., 1 or 2), got ", input);
  auto axis = normalizeAxis(op.getAxis(), rank);
  if (!axis || *axis == rank - 1)
    return check.fail("axis ", op.getAxis(),
                      " must name a signal axis of the rank-", rank, " input");
  SmallVector<int64_t> shape(input.getShape());
  int64_t n = length ? *length : shape[*axis];
  if (op.getOnesided() && !ShapedType::isDynamic(n))
    n = n / 2 + 1;
  shape[*axis] = n;
  shape.back() = 2;
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(DFTOp, inferDFT)

static LogicalResult inferSTFT(STFTOp op, SmallVectorImpl<Type> &types,
                               const Check &check) {
  if (failed(checkFlag(op.getOnesided(), "onesided", check)))
    return failure();
  auto signal = tensorType(op.getSignal());
  Type element = signal.getElementType();
  if (getElementTypeOrSelf(op.getType()) != element)
    return check.fail("result element type differs from the signal's");
  if (signal.hasRank() &&
      (signal.getRank() != 3 || (!dimsCompatible(signal.getDimSize(2), 1) &&
                                 !dimsCompatible(signal.getDimSize(2), 2))))
    return check.fail("signal must be (batch, length, 1 or 2), got ", signal);
  if (!isScalarLike(op.getFrameStep()))
    return check.fail("frame_step must be a scalar");
  std::optional<int64_t> step = constantScalar(op.getFrameStep());
  if (step && *step < 1)
    return check.fail("frame_step must be positive, got ", *step);
  int64_t frameLength = kDynamic;
  if (Value window = op.getWindow()) {
    if (tensorType(window).getElementType() != element)
      return check.fail("window element type differs from the signal's");
    if (failed(checkVector(window, kDynamic, "window", check)))
      return failure();
    frameLength = dimOf(tensorType(window), 0);
  }
  if (Value length = op.getFrameLength()) {
    if (!isScalarLike(length))
      return check.fail("frame_length must be a scalar");
    if (std::optional<int64_t> value = constantScalar(length)) {
      if (*value < 1)
        return check.fail("frame_length must be positive, got ", *value);
      if (!dimsCompatible(frameLength, *value))
        return check.fail("frame_length ", *value,
                          " differs from the window size ", frameLength);
      frameLength = *value;
    }
  }
  int64_t length = dimOf(signal, 1), frames = kDynamic;
  if (step && !ShapedType::isDynamic(length) &&
      !ShapedType::isDynamic(frameLength)) {
    if (frameLength > length)
      return check.fail("frame length ", frameLength,
                        " exceeds the signal length ", length);
    frames = (length - frameLength) / *step + 1;
  }
  int64_t bins = frameLength;
  if (op.getOnesided() && !ShapedType::isDynamic(bins))
    bins = bins / 2 + 1;
  types.push_back(
      RankedTensorType::get({dimOf(signal, 0), frames, bins, 2}, element));
  return success();
}

SHAPE_FUNCTION_IS_VERIFIER(STFTOp, inferSTFT)

LogicalResult
MelWeightMatrixOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  std::optional<int64_t> bins = constantScalar(getNumMelBins());
  std::optional<int64_t> dftLength = constantScalar(getDftLength());
  types.push_back(RankedTensorType::get(
      {dftLength ? *dftLength / 2 + 1 : kDynamic, bins.value_or(kDynamic)},
      getElementTypeOrSelf(getType())));
  return success();
}

LogicalResult MelWeightMatrixOp::verify() {
  for (Value operand : getOperands())
    if (!isScalarLike(operand))
      return emitOpError("operands must be scalars, got ") << operand.getType();
  if (tensorType(getLowerEdgeHertz()).getElementType() !=
          tensorType(getUpperEdgeHertz()).getElementType() ||
      !isa<FloatType>(tensorType(getLowerEdgeHertz()).getElementType()))
    return emitOpError(
        "lower_edge_hertz and upper_edge_hertz must be floats of one type");
  for (auto [value, name] : {std::pair(getNumMelBins(), "num_mel_bins"),
                             std::pair(getDftLength(), "dft_length"),
                             std::pair(getSampleRate(), "sample_rate")})
    if (std::optional<int64_t> v = constantScalar(value); v && *v < 1)
      return emitOpError(name) << " must be positive, got " << *v;
  return success();
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inferResultTypes(SmallVectorImpl<Type> &types) {
  auto input = cast<TensorType>(getInput().getType());
  types.push_back(input);
  if (!input.hasRank()) {
    types.push_back(withShape(getMean().getType(), std::nullopt));
    types.push_back(withShape(getInvStdDev().getType(), std::nullopt));
    return success();
  }
  auto axis = normalizeAxis(getAxis(), input.getRank());
  if (!axis)
    return failure();
  SmallVector<int64_t> stats(input.getShape());
  for (int64_t i = *axis; i < input.getRank(); ++i)
    stats[i] = 1;
  types.push_back(withShape(getMean().getType(), ArrayRef<int64_t>(stats)));
  types.push_back(
      withShape(getInvStdDev().getType(), ArrayRef<int64_t>(stats)));
  return success();
}

LogicalResult LayerNormOp::verify() {
  auto input = cast<TensorType>(getInput().getType());
  if (input.hasRank() && !normalizeAxis(getAxis(), input.getRank()))
    return emitOpError("axis ")
           << getAxis() << " is out of range for rank " << input.getRank();
  return success();
}
