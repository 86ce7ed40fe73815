//===- Scatter.cpp - scatter, top-k and max-pool indices --------*- C++ -*-===//
//
// Ops whose output positions depend on data: scatter_elements and
// scatter_nd apply their updates in order (a later update of the same
// position wins, or is combined with the reduction), so they are scf.for
// nests over the updates that carry the output tensor and write it with
// tensor.insert; one-shot bufferization makes those stores in place. top_k
// selects, per row, the best element that comes after the previously
// selected one in the (value, index) order: k passes over the row, no
// sorting buffer. max_pool with its indices result is a linalg.generic with
// two outputs (value and flattened input position); max_unpool is the
// scatter loop again.
//
//===----------------------------------------------------------------------===//

#include "Builders.h"
#include "Patterns.h"
#include "Special.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::detail;
using namespace strata::detail::special;
namespace graph = strata::graph;

/// Combines the current element with an update under a scatter reduction;
/// `type` is the graph element type (it tells unsigned integers apart).
static Value combine(OpBuilder &b, Location loc, StringRef reduction, Type type,
                     Value current, Value update) {
  bool isFloat = isa<FloatType>(type);
  bool isUnsigned = type.isUnsignedInteger();
  if (reduction == "add")
    return isFloat ? (Value)arith::AddFOp::create(b, loc, current, update)
                   : (Value)arith::AddIOp::create(b, loc, current, update);
  if (reduction == "mul")
    return isFloat ? (Value)arith::MulFOp::create(b, loc, current, update)
                   : (Value)arith::MulIOp::create(b, loc, current, update);
  if (reduction == "max") {
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, current, update);
    if (isUnsigned)
      return arith::MaxUIOp::create(b, loc, current, update);
    return arith::MaxSIOp::create(b, loc, current, update);
  }
  if (reduction == "min") {
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, current, update);
    if (isUnsigned)
      return arith::MinUIOp::create(b, loc, current, update);
    return arith::MinSIOp::create(b, loc, current, update);
  }
  return update;
}

static bool supportedReduction(StringRef reduction, Type type) {
  if (reduction == "none")
    return isMovableScalar(type);
  if (!llvm::is_contained({"add", "mul", "max", "min"}, reduction))
    return false;
  return isComputeFloat(type) || (isa<IntegerType>(type) && !type.isInteger(1));
}

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

static Lowering lowerScatterElements(graph::ScatterElementsOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto data = cast<RankedTensorType>(op.getData().getType());
  auto indices = cast<RankedTensorType>(op.getIndices().getType());
  std::string reduction = op.getReduction().str();
  Type element = data.getElementType();
  if (!supportedReduction(reduction, element) ||
      indices.getShape() !=
          cast<RankedTensorType>(op.getUpdates().getType()).getShape() ||
      indices.getRank() != data.getRank())
    return nullptr;
  auto axis = graph::normalizeAxis(int64_t(op.getAxis()), data.getRank());
  if (!axis)
    return nullptr;
  if (indices.getNumElements() > 0 && data.getDimSize(*axis) == 0)
    return nullptr;
  int64_t axisSize = data.getDimSize(*axis);
  return single([=, axis = *axis](OpBuilder &b, Location loc,
                                  ValueRange operands,
                                  RankedTensorType) -> Value {
    Value indexTensor = operands[1], updates = operands[2];
    return loopOver(
        b, loc, indices.getShape(), operands[0],
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange carried) -> SmallVector<Value> {
          Value index = tensor::ExtractOp::create(b, loc, indexTensor, ivs);
          SmallVector<Value> target(ivs);
          target[axis] = wrapIndex(b, loc, index, axisSize);
          Value update = tensor::ExtractOp::create(b, loc, updates, ivs);
          if (reduction != "none") {
            Value current =
                tensor::ExtractOp::create(b, loc, carried[0], target);
            update = combine(b, loc, reduction, element, current, update);
          }
          return {tensor::InsertOp::create(b, loc, update, carried[0], target)
                      .getResult()};
        })[0];
  });
}

static Lowering lowerScatterND(graph::ScatterNDOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto data = cast<RankedTensorType>(op.getData().getType());
  auto indices = cast<RankedTensorType>(op.getIndices().getType());
  auto updates = cast<RankedTensorType>(op.getUpdates().getType());
  std::string reduction = op.getReduction().str();
  Type element = data.getElementType();
  if (!supportedReduction(reduction, element) || indices.getRank() < 1)
    return nullptr;
  int64_t k = indices.getDimSize(indices.getRank() - 1);
  int64_t batch = indices.getRank() - 1;
  // updates = indices.shape[:-1] + data.shape[k:].
  if (k > data.getRank() || updates.getRank() != batch + data.getRank() - k)
    return nullptr;
  for (int64_t d = 0; d < batch; ++d)
    if (updates.getDimSize(d) != indices.getDimSize(d))
      return nullptr;
  for (int64_t d = k; d < data.getRank(); ++d)
    if (updates.getDimSize(batch + d - k) != data.getDimSize(d))
      return nullptr;
  for (int64_t d = 0; d < k; ++d)
    if (data.getDimSize(d) == 0 && updates.getNumElements() > 0)
      return nullptr;
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType) -> Value {
    Value indexTensor = operands[1], updateTensor = operands[2];
    return loopOver(
        b, loc, updates.getShape(), operands[0],
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange carried) -> SmallVector<Value> {
          SmallVector<Value> target;
          SmallVector<Value> at(ivs.take_front(batch));
          at.push_back(Value());
          for (int64_t j = 0; j < k; ++j) {
            at.back() = indexConstant(b, loc, j);
            Value index = tensor::ExtractOp::create(b, loc, indexTensor, at);
            target.push_back(wrapIndex(b, loc, index, data.getDimSize(j)));
          }
          llvm::append_range(target, ivs.drop_front(batch));
          Value update = tensor::ExtractOp::create(b, loc, updateTensor, ivs);
          if (reduction != "none") {
            Value current =
                tensor::ExtractOp::create(b, loc, carried[0], target);
            update = combine(b, loc, reduction, element, current, update);
          }
          return {tensor::InsertOp::create(b, loc, update, carried[0], target)
                      .getResult()};
        })[0];
  });
}

//===----------------------------------------------------------------------===//
// TopK
//===----------------------------------------------------------------------===//

/// a > b (or a < b when `greater` is false) for the graph element `type`.
static Value compare(OpBuilder &b, Location loc, Type type, bool greater,
                     Value lhs, Value rhs) {
  if (isa<FloatType>(type))
    return arith::CmpFOp::create(
        b, loc, greater ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
        lhs, rhs);
  bool isUnsigned = type.isUnsignedInteger();
  arith::CmpIPredicate predicate =
      greater
          ? (isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
          : (isUnsigned ? arith::CmpIPredicate::ult
                        : arith::CmpIPredicate::slt);
  return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
}

static Value equal(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isa<FloatType>(lhs.getType()))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lhs, rhs);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, rhs);
}

static Lowering lowerTopK(graph::TopKOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto values = cast<RankedTensorType>(op.getValues().getType());
  Type element = input.getElementType();
  if (input.getRank() == 0 || values.getRank() != input.getRank() ||
      !(isComputeFloat(element) ||
        (isa<IntegerType>(element) && !element.isInteger(1))))
    return nullptr;
  auto axis = graph::normalizeAxis(int64_t(op.getAxis()), input.getRank());
  if (!axis)
    return nullptr;
  // A K computed at run time must equal the static result size, which is
  // what the kernel uses.
  int64_t k = values.getDimSize(*axis);
  if ((op.getK() && int64_t(*op.getK()) != k) || k > input.getDimSize(*axis))
    return nullptr;
  bool largest = op.getLargest() != 0;
  return [=, axis = *axis](
             OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Value in = operands[0];
    int64_t n = input.getDimSize(axis);
    SmallVector<int64_t> rows(input.getShape());
    rows[axis] = 1;
    SmallVector<Value> init;
    for (RankedTensorType type : results)
      init.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                             type.getElementType()));
    if (k == 0)
      return init;
    Type signless = getSignlessType(element);
    return loopOver(
        b, loc, rows, init,
        [&](OpBuilder &b, Location loc, ValueRange row,
            ValueRange carried) -> SmallVector<Value> {
          // Pass r picks the best element after (prevValue, prevIndex) in
          // the order: better value first, then smaller index.
          Value zeroValue = scalarConstant(b, loc, signless, 0);
          Value minusOne = indexConstant(b, loc, -1);
          SmallVector<Value> passInit{carried[0], carried[1], zeroValue,
                                      minusOne};
          SmallVector<Value> done = loopOver(
              b, loc, {k}, passInit,
              [&](OpBuilder &b, Location loc, ValueRange r,
                  ValueRange state) -> SmallVector<Value> {
                Value prevValue = state[2], prevIndex = state[3];
                Value first =
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          r[0], indexConstant(b, loc, 0));
                SmallVector<Value> scanInit{zeroValue, minusOne};
                SmallVector<Value> best = loopOver(
                    b, loc, {n}, scanInit,
                    [&](OpBuilder &b, Location loc, ValueRange i,
                        ValueRange best) -> SmallVector<Value> {
                      SmallVector<Value> at(row);
                      at[axis] = i[0];
                      Value v = tensor::ExtractOp::create(b, loc, in, at);
                      // After prev: worse value, or equal and later index.
                      Value worse =
                          compare(b, loc, element, !largest, v, prevValue);
                      Value tie = arith::AndIOp::create(
                          b, loc, equal(b, loc, v, prevValue),
                          arith::CmpIOp::create(b, loc,
                                                arith::CmpIPredicate::sgt, i[0],
                                                prevIndex));
                      Value eligible = arith::OrIOp::create(
                          b, loc, first,
                          arith::OrIOp::create(b, loc, worse, tie));
                      // Better than the best so far (ties keep the earlier
                      // index), or the first eligible one.
                      Value none = arith::CmpIOp::create(
                          b, loc, arith::CmpIPredicate::slt, best[1],
                          indexConstant(b, loc, 0));
                      Value better = arith::OrIOp::create(
                          b, loc, none,
                          compare(b, loc, element, largest, v, best[0]));
                      Value take =
                          arith::AndIOp::create(b, loc, eligible, better);
                      return {
                          arith::SelectOp::create(b, loc, take, v, best[0]),
                          arith::SelectOp::create(b, loc, take, i[0], best[1])};
                    });
                SmallVector<Value> out(row);
                out[axis] = r[0];
                Value index64 =
                    arith::IndexCastOp::create(b, loc, b.getI64Type(), best[1]);
                Value values =
                    tensor::InsertOp::create(b, loc, best[0], state[0], out);
                Value indices =
                    tensor::InsertOp::create(b, loc, index64, state[1], out);
                return {values, indices, best[0], best[1]};
              });
          return {done[0], done[1]};
        });
  };
}

//===----------------------------------------------------------------------===//
// MaxPool with indices
//===----------------------------------------------------------------------===//

static Lowering lowerMaxPoolWithIndices(graph::MaxPoolOp op) {
  // Without users of the indices, NN.cpp lowers max_pool.
  if (op.getIndices().use_empty() || !allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  Type element = input.getElementType();
  int64_t rank = input.getRank();
  int64_t spatial = rank - 2;
  if (rank < 3 || !(element.isF32() || element.isF64() || element.isF16()) ||
      op.getAutoPad() != "NOTSET")
    return nullptr;
  ArrayRef<int64_t> kernel = op.getKernelShape();
  if (int64_t(kernel.size()) != spatial)
    return nullptr;
  SmallVector<int64_t> strides(spatial, 1), dilations(spatial, 1),
      pads(2 * spatial, 0);
  if (auto s = op.getStrides())
    strides = llvm::to_vector(*s);
  if (auto d = op.getDilations())
    dilations = llvm::to_vector(*d);
  if (auto p = op.getPads())
    pads = llvm::to_vector(*p);
  if (int64_t(strides.size()) != spatial ||
      int64_t(dilations.size()) != spatial ||
      int64_t(pads.size()) != 2 * spatial)
    return nullptr;
  bool columnMajor = op.getStorageOrder() != 0;
  return [=](OpBuilder &b, Location loc, ValueRange operands,
             ArrayRef<RankedTensorType> results) -> SmallVector<Value> {
    Value x = operands[0];
    // Dims: the output dims, then one window dim per spatial axis.
    int64_t numDims = rank + spatial;
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(b.getAffineDimExpr(d));
    AffineMap outMap = AffineMap::get(numDims, 0, outExprs, b.getContext());
    // The window is iterated through a dummy input of the kernel's shape.
    Value window = tensor::EmptyOp::create(b, loc, kernel, element);
    SmallVector<AffineExpr> windowExprs;
    for (int64_t d = 0; d < spatial; ++d)
      windowExprs.push_back(b.getAffineDimExpr(rank + d));
    AffineMap windowMap =
        AffineMap::get(numDims, 0, windowExprs, b.getContext());
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.append(spatial, utils::IteratorType::reduction);
    Value lowest = arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(
            element,
            APFloat::getInf(cast<FloatType>(element).getFloatSemantics(),
                            /*Negative=*/true)));
    Value values = filledTensor(b, loc, results[0], lowest);
    Value indices = filledTensor(b, loc, results[1],
                                 scalarConstant(b, loc, b.getI64Type(), 0));
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{results[0], results[1]}, ValueRange{window},
        ValueRange{values, indices}, {windowMap, outMap, outMap}, iterators,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          SmallVector<Value> at;
          for (int64_t d = 0; d < 2; ++d)
            at.push_back(linalg::IndexOp::create(b, loc, d));
          Value inside;
          for (int64_t s = 0; s < spatial; ++s) {
            Value o = linalg::IndexOp::create(b, loc, 2 + s);
            Value w = linalg::IndexOp::create(b, loc, rank + s);
            // o * stride + w * dilation - pad_begin.
            Value pos = arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, o,
                                      indexConstant(b, loc, strides[s])),
                arith::MulIOp::create(b, loc, w,
                                      indexConstant(b, loc, dilations[s])));
            pos = arith::SubIOp::create(b, loc, pos,
                                        indexConstant(b, loc, pads[s]));
            Value lo = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                             pos, indexConstant(b, loc, 0));
            Value hi = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::slt, pos,
                indexConstant(b, loc, input.getDimSize(2 + s)));
            Value both = arith::AndIOp::create(b, loc, lo, hi);
            inside =
                inside ? arith::AndIOp::create(b, loc, inside, both) : both;
            at.push_back(clampIndex(b, loc, pos, input.getDimSize(2 + s)));
          }
          Value v = tensor::ExtractOp::create(b, loc, x, at);
          // Flattened position: (n * C + c) * prod(spatial) + the spatial
          // offset, row-major or (storage_order 1) column-major.
          Value flat = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, at[0],
                                    indexConstant(b, loc, input.getDimSize(1))),
              at[1]);
          Value offset = indexConstant(b, loc, 0);
          for (int64_t i = 0; i < spatial; ++i) {
            int64_t s = columnMajor ? spatial - 1 - i : i;
            offset = arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(
                    b, loc, offset,
                    indexConstant(b, loc, input.getDimSize(2 + s))),
                at[2 + s]);
          }
          int64_t area = 1;
          for (int64_t s = 0; s < spatial; ++s)
            area *= input.getDimSize(2 + s);
          flat = arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, flat, indexConstant(b, loc, area)),
              offset);
          Value better = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OGT, v, args[1]);
          Value take = arith::AndIOp::create(b, loc, inside, better);
          Value flat64 =
              arith::IndexCastOp::create(b, loc, b.getI64Type(), flat);
          linalg::YieldOp::create(
              b, loc,
              ValueRange{
                  arith::SelectOp::create(b, loc, take, v, args[1]),
                  arith::SelectOp::create(b, loc, take, flat64, args[2])});
        });
    return {generic.getResult(0), generic.getResult(1)};
  };
}

//===----------------------------------------------------------------------===//
// MaxUnpool
//===----------------------------------------------------------------------===//

/// Zeros, with each input element written at the position its index
/// names; in order, so a repeated index keeps the later element. ONNX's
/// indices are flattened positions in the default unpooled shape ((in - 1)
/// * stride + kernel - pads per spatial axis), which the output (given an
/// explicit output_shape) may exceed: the position is decoded against the
/// default shape and written at the same coordinates of the output.
static Lowering lowerMaxUnpool(graph::MaxUnpoolOp op) {
  if (!allStaticTensors(op))
    return nullptr;
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto indices = cast<RankedTensorType>(op.getIndices().getType());
  auto output = cast<RankedTensorType>(op.getOutput().getType());
  int64_t rank = input.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> kernel = op.getKernelShape();
  if (rank < 3 || output.getRank() != rank ||
      indices.getShape() != input.getShape() ||
      int64_t(kernel.size()) != spatial ||
      !isArithScalar(getSignlessType(input.getElementType())))
    return nullptr;
  SmallVector<int64_t> strides(spatial, 1), pads(2 * spatial, 0);
  if (auto s = op.getStrides())
    strides = llvm::to_vector(*s);
  if (auto p = op.getPads())
    pads = llvm::to_vector(*p);
  if (int64_t(strides.size()) != spatial || int64_t(pads.size()) != 2 * spatial)
    return nullptr;
  SmallVector<int64_t> unpooled{input.getDimSize(0), input.getDimSize(1)};
  for (int64_t s = 0; s < spatial; ++s) {
    unpooled.push_back((input.getDimSize(2 + s) - 1) * strides[s] + kernel[s] -
                       pads[s] - pads[s + spatial]);
    if (unpooled.back() < 1)
      return nullptr;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (output.getDimSize(d) < 1 && input.getNumElements() > 0)
      return nullptr;
  return single([=](OpBuilder &b, Location loc, ValueRange operands,
                    RankedTensorType type) -> Value {
    Value zeros = filledTensor(
        b, loc, type, scalarConstant(b, loc, type.getElementType(), 0));
    Value x = operands[0], index = operands[1];
    return loopOver(
        b, loc, input.getShape(), zeros,
        [&](OpBuilder &b, Location loc, ValueRange ivs,
            ValueRange carried) -> SmallVector<Value> {
          Value rest =
              toIndex(b, loc, tensor::ExtractOp::create(b, loc, index, ivs));
          SmallVector<Value> at(rank);
          for (int64_t d = rank - 1; d >= 0; --d) {
            Value size = indexConstant(b, loc, unpooled[d]);
            at[d] =
                clampIndex(b, loc, arith::RemSIOp::create(b, loc, rest, size),
                           type.getDimSize(d));
            rest = arith::DivSIOp::create(b, loc, rest, size);
          }
          Value v = tensor::ExtractOp::create(b, loc, x, ivs);
          return {
              tensor::InsertOp::create(b, loc, v, carried[0], at).getResult()};
        })[0];
  });
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Lowering special::getScatterLowering(Operation *op) {
  return llvm::TypeSwitch<Operation *, Lowering>(op)
      .Case(
          [](graph::ScatterElementsOp op) { return lowerScatterElements(op); })
      .Case([](graph::ScatterNDOp op) { return lowerScatterND(op); })
      .Case([](graph::TopKOp op) { return lowerTopK(op); })
      .Case([](graph::MaxPoolOp op) { return lowerMaxPoolWithIndices(op); })
      .Case([](graph::MaxUnpoolOp op) { return lowerMaxUnpool(op); })
      .Default([](Operation *) { return nullptr; });
}
