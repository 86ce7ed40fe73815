//===- Misc.cpp - einsum, det and signal ops to linalg ----------*- C++ -*-===//
//
// einsum becomes one linalg.generic whose loop dims are the equation's
// letters (after the broadcast dims of "..."): each operand's map lists its
// letters, a repeated letter reading a diagonal, and the letters missing
// from the output are reductions. det is Gaussian elimination with partial
// pivoting in scf loops over a copy of each matrix. DFT and STFT are one
// generic each with a reduction over the signal, in f64; the windows are
// constants of the static result length.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Patterns.h"
#include "Special.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace strata::detail;
using namespace strata::detail::special;
namespace graph = strata::graph;

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

namespace {
/// An einsum equation resolved against static operand shapes. Loop dim
/// numbering: the broadcast ("...") dims first, then letters in order of
/// first appearance.
struct EinsumPlan {
  int64_t numDims = 0;
  SmallVector<int64_t> dimSizes;
  /// Per operand, per operand axis: the loop dim (or -1 for a broadcast
  /// axis of size 1, read at index 0).
  SmallVector<SmallVector<int64_t>> operandDims;
  SmallVector<int64_t> outputDims;
};
} // namespace

static std::optional<EinsumPlan> planEinsum(StringRef equation,
                                            ArrayRef<RankedTensorType> inputs,
                                            RankedTensorType output) {
  std::string eq;
  for (char c : equation)
    if (c != ' ')
      eq.push_back(c);
  std::string lhs = eq, rhs;
  bool explicitOutput = false;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    explicitOutput = true;
  }
  SmallVector<StringRef> terms;
  StringRef(lhs).split(terms, ',');
  if (terms.size() != inputs.size())
    return std::nullopt;
  // The broadcast rank: the most dims any "..." stands for.
  int64_t ellipsisRank = 0;
  SmallVector<int64_t> termEllipsis;
  for (auto [term, type] : llvm::zip(terms, inputs)) {
    size_t dots = term.find("...");
    int64_t letters = int64_t(term.size()) - (dots == StringRef::npos ? 0 : 3);
    int64_t e = dots == StringRef::npos ? 0 : type.getRank() - letters;
    if (e < 0 || (dots == StringRef::npos && letters != type.getRank()))
      return std::nullopt;
    termEllipsis.push_back(e);
    ellipsisRank = std::max(ellipsisRank, e);
  }
  EinsumPlan plan;
  plan.numDims = ellipsisRank;
  plan.dimSizes.assign(ellipsisRank, 1);
  std::map<char, int64_t> letterDim;
  std::map<char, int> letterCount;
  for (auto [t, term] : llvm::enumerate(terms)) {
    RankedTensorType type = inputs[t];
    SmallVector<int64_t> dims;
    int64_t axis = 0;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.substr(i).starts_with("...")) {
        int64_t e = termEllipsis[t];
        for (int64_t j = 0; j < e; ++j, ++axis) {
          int64_t dim = ellipsisRank - e + j;
          int64_t size = type.getDimSize(axis);
          if (size == 1 && plan.dimSizes[dim] != 1) {
            dims.push_back(-1);
            continue;
          }
          if (plan.dimSizes[dim] != 1 && plan.dimSizes[dim] != size)
            return std::nullopt;
          plan.dimSizes[dim] = size;
          dims.push_back(dim);
        }
        i += 2;
        continue;
      }
      char c = term[i];
      if (!llvm::isAlpha(c))
        return std::nullopt;
      ++letterCount[c];
      auto [it, inserted] = letterDim.try_emplace(c, plan.numDims);
      if (inserted) {
        ++plan.numDims;
        plan.dimSizes.push_back(type.getDimSize(axis));
      } else if (plan.dimSizes[it->second] != type.getDimSize(axis)) {
        return std::nullopt;
      }
      dims.push_back(it->second);
      ++axis;
    }
    plan.operandDims.push_back(dims);
  }
  // A size-1 broadcast axis marked before a larger one was seen: recheck.
  for (auto [t, dims] : llvm::enumerate(plan.operandDims))
    for (auto [axis, dim] : llvm::enumerate(dims))
      if (dim >= 0 && dim < ellipsisRank &&
          inputs[t].getDimSize(axis) != plan.dimSizes[dim]) {
        if (inputs[t].getDimSize(axis) != 1)
          return std::nullopt;
        dim = -1;
      }
  if (explicitOutput) {
    for (size_t i = 0; i < rhs.size(); ++i) {
      if (StringRef(rhs).substr(i).starts_with("...")) {
        for (int64_t d = 0; d < ellipsisRank; ++d)
          plan.outputDims.push_back(d);
        i += 2;
        continue;
      }
      auto it = letterDim.find(rhs[i]);
      if (it == letterDim.end() ||
          llvm::is_contained(plan.outputDims, it->second))
        return std::nullopt;
      plan.outputDims.push_back(it->second);
    }
  } else {
    for (int64_t d = 0; d < ellipsisRank; ++d)
      plan.outputDims.push_back(d);
    for (auto [c, count] : letterCount) // std::map: alphabetical
      if (count == 1)
        plan.outputDims.push_back(letterDim[c]);
  }
  if (int64_t(plan.outputDims.size()) != output.getRank())
    return std::nullopt;
  for (auto [axis, dim] : llvm::enumerate(plan.outputDims))
    if (output.getDimSize(axis) != plan.dimSizes[dim])
      return std::nullopt;
  return plan;
}

static Lowering lowerEinsum(graph::EinsumOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  Type element = output.getElementType();
  if (!(isComputeFloat(element) || element.isSignlessInteger()) ||
      element.isInteger(1))
    return nullptr;
  SmallVector<RankedTensorType> inputs;
  for (Value v : op.getInputs()) {
    inputs.push_back(cast<RankedTensorType>(v.getType()));
    if (inputs.back().getElementType() != element)
      return nullptr;
  }
  auto plan = planEinsum(op.getEquation(), inputs, output);
  if (!plan)
    return nullptr;
  return single([=, plan = *plan](OpBuilder &b, Location loc,
                                  ValueRange operands,
                                  RankedTensorType type) -> Value {
    SmallVector<AffineMap> maps;
    for (const auto &dims : plan.operandDims) {
      SmallVector<AffineExpr> exprs;
      for (int64_t d : dims)
        exprs.push_back(d < 0 ? b.getAffineConstantExpr(0)
                              : b.getAffineDimExpr(d));
      maps.push_back(AffineMap::get(plan.numDims, 0, exprs, b.getContext()));
    }
    SmallVector<AffineExpr> outExprs;
    for (int64_t d : plan.outputDims)
      outExprs.push_back(b.getAffineDimExpr(d));
    maps.push_back(AffineMap::get(plan.numDims, 0, outExprs, b.getContext()));
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < plan.numDims; ++d)
      iterators.push_back(llvm::is_contained(plan.outputDims, d)
                              ? utils::IteratorType::parallel
                              : utils::IteratorType::reduction);
    bool isFloat = isa<FloatType>(element);
    Value init = filledTensor(b, loc, type, scalarConstant(b, loc, element, 0));
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, operands, ValueRange{init}, maps,
               iterators,
               [&](OpBuilder &b, Location loc, ValueRange args) {
                 Value product = args[0];
                 for (Value v : args.drop_front().drop_back())
                   product =
                       isFloat
                           ? (Value)arith::MulFOp::create(b, loc, product, v)
                           : (Value)arith::MulIOp::create(b, loc, product, v);
                 Value sum = isFloat ? (Value)arith::AddFOp::create(
                                           b, loc, args.back(), product)
                                     : (Value)arith::AddIOp::create(
                                           b, loc, args.back(), product);
                 linalg::YieldOp::create(b, loc, sum);
               })
        .getResult(0);
  });
}

//===----------------------------------------------------------------------===//
// DFT
//===----------------------------------------------------------------------===//

/// out[..., k, c] = sum_j x[..., j] * exp(-+2 pi i j k / L), one generic with
/// a reduction dim j over the signal (zero beyond the input, truncated at
/// L); the twiddle angle uses (j * k) mod L so it stays small.
/// Component `c` (0: real, 1: imaginary) of (re + i im) rotated by `angle`
/// (e^{-i angle} for a forward transform, e^{+i angle} for an inverse one):
/// one term of a DFT sum.
static Value rotatedComponent(OpBuilder &b, Location loc, Value re, Value im,
                              Value angle, bool inverse, Value c) {
  Value cos = math::CosOp::create(b, loc, angle);
  Value sin = math::SinOp::create(b, loc, angle);
  if (!inverse)
    sin = arith::NegFOp::create(b, loc, sin);
  // (re + i im)(cos + i sin).
  Value real =
      arith::SubFOp::create(b, loc, arith::MulFOp::create(b, loc, re, cos),
                            arith::MulFOp::create(b, loc, im, sin));
  Value imag =
      arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, re, sin),
                            arith::MulFOp::create(b, loc, im, cos));
  Value isReal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c,
                                       indexConstant(b, loc, 0));
  return arith::SelectOp::create(b, loc, isReal, real, imag);
}

static Lowering lowerDFT(graph::DFTOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  Type element = input.getElementType();
  int64_t rank = input.getRank();
  if (!(element.isF32() || element.isF64()) ||
      output.getElementType() != element || rank < 2 ||
      output.getRank() != rank || output.getDimSize(rank - 1) != 2 ||
      (input.getDimSize(rank - 1) != 1 && input.getDimSize(rank - 1) != 2))
    return nullptr;
  auto axis = graph::normalizeAxis(int64_t(op.getAxis()), rank);
  if (!axis || *axis == rank - 1)
    return nullptr;
  int64_t signal = input.getDimSize(*axis);
  int64_t length = signal;
  if (op.getDftLength()) {
    auto given = constantInts(op.getDftLength());
    if (!given || given->size() != 1)
      return nullptr;
    length = (*given)[0];
  }
  bool onesided = op.getOnesided() != 0, inverse = op.getInverse() != 0;
  if (length < 1 ||
      output.getDimSize(*axis) != (onesided ? length / 2 + 1 : length))
    return nullptr;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != *axis && output.getDimSize(d) != input.getDimSize(d))
      return nullptr;
  bool complex = input.getDimSize(rank - 1) == 2;
  return single([=, axis = *axis](OpBuilder &b, Location loc,
                                  ValueRange operands,
                                  RankedTensorType type) -> Value {
    Value x = operands[0];
    // Dims: the output dims, then j.
    int64_t numDims = rank + 1;
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(b.getAffineDimExpr(d));
    // A dummy operand of extent L gives j its range.
    Value range =
        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{length}, element);
    SmallVector<AffineMap> maps{
        AffineMap::get(numDims, 0, b.getAffineDimExpr(rank), b.getContext()),
        AffineMap::get(numDims, 0, outExprs, b.getContext())};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    // The sums (and twiddles) are computed in f64: f32 cancellation would
    // leave errors far above the tolerance on near-zero outputs.
    Type f64 = b.getF64Type();
    auto accType = RankedTensorType::get(type.getShape(), f64);
    Value init = filledTensor(b, loc, accType, scalarConstant(b, loc, f64, 0));
    Value sum =
        linalg::GenericOp::create(
            b, loc, TypeRange{accType}, ValueRange{range}, ValueRange{init},
            maps, iterators,
            [&](OpBuilder &b, Location loc, ValueRange args) {
              SmallVector<Value> ivs;
              for (int64_t d = 0; d <= rank; ++d)
                ivs.push_back(linalg::IndexOp::create(b, loc, d));
              Value j = ivs[rank], k = ivs[axis], c = ivs[rank - 1];
              SmallVector<Value> at(ivs.begin(), ivs.begin() + rank);
              at[axis] = clampIndex(b, loc, j, signal);
              at[rank - 1] = indexConstant(b, loc, 0);
              Value zero = scalarConstant(b, loc, f64, 0);
              Value inSignal =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j,
                                        indexConstant(b, loc, signal));
              auto read = [&]() {
                return convertNumeric(
                    b, loc, tensor::ExtractOp::create(b, loc, x, at), f64);
              };
              Value re =
                  arith::SelectOp::create(b, loc, inSignal, read(), zero);
              Value im = zero;
              if (complex) {
                at[rank - 1] = indexConstant(b, loc, 1);
                im = arith::SelectOp::create(b, loc, inSignal, read(), zero);
              }
              Value jk = arith::RemUIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, j, k),
                  indexConstant(b, loc, length));
              Value jkFloat = arith::UIToFPOp::create(
                  b, loc, f64,
                  arith::IndexCastUIOp::create(b, loc, b.getI64Type(), jk));
              Value angle = arith::MulFOp::create(
                  b, loc, jkFloat,
                  scalarConstant(b, loc, f64, 2 * M_PI / double(length)));
              Value term = rotatedComponent(b, loc, re, im, angle, inverse, c);
              linalg::YieldOp::create(
                  b, loc,
                  ValueRange{arith::AddFOp::create(b, loc, args[1], term)});
            })
            .getResult(0);
    Value scale =
        scalarConstant(b, loc, f64, inverse ? 1.0 / double(length) : 1.0);
    return buildIndexedGeneric(
        b, loc, type, sum, b.getMultiDimIdentityMap(rank),
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
          return convertNumeric(
              b, loc, arith::MulFOp::create(b, loc, args[0], scale), element);
        });
  });
}

//===----------------------------------------------------------------------===//
// Det
//===----------------------------------------------------------------------===//

/// Gaussian elimination with partial pivoting on a copy of each matrix:
/// the determinant is the product of the pivots, negated per row swap.
static Lowering lowerDet(graph::DetOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  Type element = input.getElementType();
  int64_t rank = input.getRank();
  if (!(element.isF32() || element.isF64()) || rank < 2 ||
      input.getDimSize(rank - 1) != input.getDimSize(rank - 2))
    return nullptr;
  int64_t n = input.getDimSize(rank - 1);
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value x = operands[0];
    auto matrixType = RankedTensorType::get({n, n}, element);
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), element).getResult();
    ArrayRef<int64_t> batch = input.getShape().drop_back(2);
    return loopOver(
        b, loc, batch, init,
        [&](OpBuilder &b, Location loc, ValueRange bivs,
            ValueRange carried) -> SmallVector<Value> {
          // The matrix at this batch position, as an n x n tensor.
          SmallVector<OpFoldResult> offsets(bivs.begin(), bivs.end()),
              sizes(rank - 2, b.getIndexAttr(1)),
              strides(rank, b.getIndexAttr(1));
          offsets.append(2, b.getIndexAttr(0));
          sizes.append({b.getIndexAttr(n), b.getIndexAttr(n)});
          Value a = tensor::ExtractSliceOp::create(b, loc, matrixType, x,
                                                   offsets, sizes, strides);
          Value one = scalarConstant(b, loc, element, 1);
          Value zero = scalarConstant(b, loc, element, 0);
          auto at = [&](OpBuilder &b, Location loc, Value m, Value r,
                        Value c) -> Value {
            return tensor::ExtractOp::create(b, loc, m, ValueRange{r, c});
          };
          SmallVector<Value> done = loopOver(
              b, loc, {n}, {a, one},
              [&](OpBuilder &b, Location loc, ValueRange col,
                  ValueRange state) -> SmallVector<Value> {
                Value k = col[0], m = state[0], det = state[1];
                // The pivot: the largest |m[r][k]| for r >= k.
                auto pivotLoop = scf::ForOp::create(
                    b, loc, k, indexConstant(b, loc, n),
                    indexConstant(b, loc, 1), ValueRange{zero, k},
                    [&](OpBuilder &b, Location loc, Value r, ValueRange best) {
                      Value v =
                          math::AbsFOp::create(b, loc, at(b, loc, m, r, k));
                      Value better = arith::CmpFOp::create(
                          b, loc, arith::CmpFPredicate::OGT, v, best[0]);
                      scf::YieldOp::create(
                          b, loc,
                          ValueRange{arith::SelectOp::create(b, loc, better, v,
                                                             best[0]),
                                     arith::SelectOp::create(b, loc, better, r,
                                                             best[1])});
                    });
                Value p = pivotLoop.getResult(1);
                // Swap rows k and p (a no-op when p == k).
                SmallVector<Value> swapped =
                    loopOver(b, loc, {n}, {m},
                             [&](OpBuilder &b, Location loc, ValueRange c,
                                 ValueRange s) -> SmallVector<Value> {
                               Value rowK = at(b, loc, s[0], k, c[0]);
                               Value rowP = at(b, loc, s[0], p, c[0]);
                               Value t = tensor::InsertOp::create(
                                   b, loc, rowP, s[0], ValueRange{k, c[0]});
                               t = tensor::InsertOp::create(
                                   b, loc, rowK, t, ValueRange{p, c[0]});
                               return {t};
                             });
                m = swapped[0];
                Value moved = arith::CmpIOp::create(
                    b, loc, arith::CmpIPredicate::ne, p, k);
                det = arith::SelectOp::create(
                    b, loc, moved, arith::NegFOp::create(b, loc, det), det);
                Value pivot = at(b, loc, m, k, k);
                det = arith::MulFOp::create(b, loc, det, pivot);
                Value singular = arith::CmpFOp::create(
                    b, loc, arith::CmpFPredicate::OEQ, pivot, zero);
                // Eliminate below the pivot (nothing to do when singular).
                auto rows = scf::ForOp::create(
                    b, loc,
                    arith::AddIOp::create(b, loc, k, indexConstant(b, loc, 1)),
                    indexConstant(b, loc, n), indexConstant(b, loc, 1),
                    ValueRange{m},
                    [&](OpBuilder &b, Location loc, Value r, ValueRange s) {
                      Value f = arith::DivFOp::create(
                          b, loc, at(b, loc, s[0], r, k), pivot);
                      f = arith::SelectOp::create(b, loc, singular, zero, f);
                      auto cols = scf::ForOp::create(
                          b, loc, k, indexConstant(b, loc, n),
                          indexConstant(b, loc, 1), ValueRange{s[0]},
                          [&](OpBuilder &b, Location loc, Value c,
                              ValueRange t) {
                            Value v = arith::SubFOp::create(
                                b, loc, at(b, loc, t[0], r, c),
                                arith::MulFOp::create(b, loc, f,
                                                      at(b, loc, t[0], k, c)));
                            scf::YieldOp::create(
                                b, loc,
                                ValueRange{tensor::InsertOp::create(
                                    b, loc, v, t[0], ValueRange{r, c})});
                          });
                      scf::YieldOp::create(b, loc, cols.getResults());
                    });
                return {rows.getResult(0), det};
              });
          return {tensor::InsertOp::create(b, loc, done[1], carried[0], bivs)
                      .getResult()};
        })[0];
  });
}

//===----------------------------------------------------------------------===//
// STFT
//===----------------------------------------------------------------------===//

/// out[b, f, k, c] = sum_{j < L} x[b, f * step + j] w[j] exp(-2 pi i j k / L)
/// in f64, like DFT. The frame step and the frame length may be known only
/// at run time; the reduction then runs over the longest frame length the
/// static output allows and masks the rest.
static Lowering lowerSTFT(graph::STFTOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto signal = cast<RankedTensorType>(op.getSignal().getType());
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  Type element = signal.getElementType();
  if (!(element.isF32() || element.isF64()) ||
      output.getElementType() != element || signal.getRank() != 3 ||
      output.getRank() != 4 || output.getDimSize(3) != 2 ||
      output.getDimSize(0) != signal.getDimSize(0) ||
      (signal.getDimSize(2) != 1 && signal.getDimSize(2) != 2) ||
      signal.getDimSize(1) == 0)
    return nullptr;
  if (cast<RankedTensorType>(op.getFrameStep().getType()).getNumElements() != 1)
    return nullptr;
  bool onesided = op.getOnesided() != 0;
  int64_t bins = output.getDimSize(2);
  std::optional<int64_t> frameLength;
  if (Value window = op.getWindow()) {
    auto type = cast<RankedTensorType>(window.getType());
    if (type.getRank() != 1 || type.getElementType() != element)
      return nullptr;
    frameLength = type.getDimSize(0);
  }
  if (Value length = op.getFrameLength()) {
    if (cast<RankedTensorType>(length.getType()).getNumElements() != 1)
      return nullptr;
    if (auto given = constantInts(length)) {
      if (frameLength && *frameLength != (*given)[0])
        return nullptr;
      frameLength = (*given)[0];
    }
  } else if (!frameLength) {
    return nullptr;
  }
  // The longest frame length the number of bins allows.
  int64_t bound = frameLength ? *frameLength : onesided ? 2 * bins - 1 : bins;
  if (bound < 1 || bound > signal.getDimSize(1) ||
      (frameLength && bins != (onesided ? bound / 2 + 1 : bound)))
    return nullptr;
  std::optional<int64_t> step;
  if (auto given = constantInts(op.getFrameStep()))
    step = (*given)[0];
  bool hasWindow = bool(op.getWindow());
  bool hasLength = bool(op.getFrameLength());
  bool complex = signal.getDimSize(2) == 2;
  int64_t samples = signal.getDimSize(1);
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value x = operands[0];
    unsigned next = 2;
    Value window = hasWindow ? operands[next++] : Value();
    Value lengthTensor = hasLength ? operands[next] : Value();
    Value length = frameLength
                       ? indexConstant(b, loc, *frameLength)
                       : toIndex(b, loc, extractFirst(b, loc, lengthTensor));
    Value stepValue = step ? indexConstant(b, loc, *step)
                           : toIndex(b, loc, extractFirst(b, loc, operands[1]));
    Type f64 = b.getF64Type();
    auto accType = RankedTensorType::get(type.getShape(), f64);
    Value init = filledTensor(b, loc, accType, scalarConstant(b, loc, f64, 0));
    Value range =
        tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{bound}, f64);
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < 4; ++d)
      outExprs.push_back(b.getAffineDimExpr(d));
    SmallVector<AffineMap> maps{
        AffineMap::get(5, 0, b.getAffineDimExpr(4), b.getContext()),
        AffineMap::get(5, 0, outExprs, b.getContext())};
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value sum =
        linalg::GenericOp::create(
            b, loc, TypeRange{accType}, ValueRange{range}, ValueRange{init},
            maps, iterators,
            [&](OpBuilder &b, Location loc, ValueRange args) {
              SmallVector<Value> ivs;
              for (int64_t d = 0; d < 5; ++d)
                ivs.push_back(linalg::IndexOp::create(b, loc, d));
              Value batch = ivs[0], frame = ivs[1], k = ivs[2], c = ivs[3],
                    j = ivs[4];
              Value pos = arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, frame, stepValue), j);
              Value inFrame = arith::AndIOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j,
                                        length),
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, pos,
                                        indexConstant(b, loc, samples)));
              Value zero = scalarConstant(b, loc, f64, 0);
              SmallVector<Value> at{batch, clampIndex(b, loc, pos, samples),
                                    indexConstant(b, loc, 0)};
              auto read = [&]() -> Value {
                Value v = convertNumeric(
                    b, loc, tensor::ExtractOp::create(b, loc, x, at), f64);
                if (window)
                  v = arith::MulFOp::create(
                      b, loc, v,
                      convertNumeric(
                          b, loc,
                          tensor::ExtractOp::create(
                              b, loc, window,
                              ValueRange{clampIndex(b, loc, j, bound)}),
                          f64));
                return arith::SelectOp::create(b, loc, inFrame, v, zero);
              };
              Value re = read(), im = zero;
              if (complex) {
                at[2] = indexConstant(b, loc, 1);
                im = read();
              }
              // Angle 2 pi ((j k) mod L) / L; L >= 1 where it matters.
              Value safeLength = arith::MaxSIOp::create(
                  b, loc, length, indexConstant(b, loc, 1));
              Value jk = arith::RemUIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, j, k), safeLength);
              auto toF64 = [&](Value index) -> Value {
                return arith::UIToFPOp::create(
                    b, loc, f64,
                    arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                                 index));
              };
              Value angle = arith::DivFOp::create(
                  b, loc,
                  arith::MulFOp::create(b, loc, toF64(jk),
                                        scalarConstant(b, loc, f64, 2 * M_PI)),
                  toF64(safeLength));
              Value term = rotatedComponent(b, loc, re, im, angle,
                                            /*inverse=*/false, c);
              linalg::YieldOp::create(
                  b, loc,
                  ValueRange{arith::AddFOp::create(b, loc, args[1], term)});
            })
            .getResult(0);
    return buildIndexedGeneric(
        b, loc, type, sum, b.getMultiDimIdentityMap(4),
        [&](OpBuilder &b, Location loc, ValueRange, ValueRange args) -> Value {
          return convertNumeric(b, loc, args[0], element);
        });
  });
}

//===----------------------------------------------------------------------===//
// Windows
//===----------------------------------------------------------------------===//

/// The window is a function of its length alone, which the static result
/// shape gives (a size computed at run time must match it): a constant.
static Lowering lowerWindow(Operation *op, ArrayRef<double> coefficients,
                            bool periodic) {
  auto result = staticTensorType(op->getResult(0));
  if (!result || result.getRank() != 1 ||
      !isArithScalar(getSignlessType(result.getElementType())) ||
      result.getElementType().isInteger(1))
    return nullptr;
  if (auto size = constantInts(op->getOperand(0)))
    if (size->size() != 1 || (*size)[0] != result.getDimSize(0))
      return nullptr;
  int64_t n = result.getDimSize(0);
  SmallVector<double> values;
  // sum_i (-1)^i a_i cos(2 pi i k / N), N = n when periodic, else n - 1.
  double denominator = periodic ? double(n) : double(n - 1);
  for (int64_t k = 0; k < n; ++k) {
    double v = 0;
    for (auto [i, a] : llvm::enumerate(coefficients))
      v += (i % 2 ? -a : a) *
           (i == 0 ? 1.0
                   : std::cos(2 * M_PI * double(i) * double(k) / denominator));
    values.push_back(v);
  }
  return single([=](OpBuilder &b, Location loc, ValueRange,
                    RankedTensorType type) -> Value {
    return denseConstant(b, loc, type.getShape(), type.getElementType(),
                         values);
  });
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Lowering special::getMiscLowering(Operation *op) {
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case([](graph::EinsumOp op) { return lowerEinsum(op); })
      .Case([](graph::DFTOp op) { return lowerDFT(op); })
      .Case([](graph::DetOp op) { return lowerDet(op); })
      .Case([](graph::STFTOp op) { return lowerSTFT(op); })
      .Case([](graph::HannWindowOp op) {
        return lowerWindow(op, {0.5, 0.5}, op.getPeriodic() != 0);
      })
      .Case([](graph::HammingWindowOp op) {
        return lowerWindow(op, {25.0 / 46, 21.0 / 46}, op.getPeriodic() != 0);
      })
      .Case([](graph::BlackmanWindowOp op) {
        return lowerWindow(op, {0.42, 0.5, 0.08}, op.getPeriodic() != 0);
      })
      .Default([](Operation *) { return nullptr; });
}
