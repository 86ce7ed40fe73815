//===- GpuPullFusion.cpp - a pointwise kernel as one all-parallel op ------===//
//
// strata-gpu-pull-fusion (GPU targets, kernels still on tensors, before
// bufferization) rewrites a generated pointwise kernel whose body is several
// ops into one all-parallel linalg.generic over its result: each output
// element computes, from its own position, where every op before it would
// have read ("pulls" its value through the chain), the way Inductor writes a
// pointwise kernel from index expressions.
//
// Why: strata-gpu-map spreads a body of one all-parallel op over the whole
// grid; a body of several ops (slices, then a concat; a transpose, a concat
// and an add; a pad after a transpose) runs them one after another in a
// block per row block, and when the row analysis cannot split the kernel
// (slices and concats across its rows, a row count with no useful divisor)
// that is one thread block for the whole tensor: Swin-T's patch merging at
// batch 32 took 7 of its 13 ms so, ViT-B's class-token concat 0.1 ms. Pulled,
// no intermediate tensor is written at all, and every output element is one
// thread's work.
//
// What it pulls through: linalg ops whose loops are all parallel and whose
// result is written through a permutation (elementwise generics, transposes,
// broadcasts, fills, gathers: `tensor.extract` in a body is pulled too),
// tensor.extract_slice, tensor.insert_slice (a concat: the element comes
// from the slice when the position lies in it, else from the destination;
// an scf.if, so that only the chosen side is read), tensor.pad,
// collapse_shape and expand_shape, tensor.cast. The kernel's arguments and
// constants are read where the chain leads: as the generic's inputs with an
// indexing map when the position is the loop indices themselves (so the
// GPU mapping may read 16 bytes at a time), else with `tensor.extract`.
// A result of another shape than the first is taken when it is a
// transpose of a tensor of the first's shape (a value the kernel returns in
// two layouts, as the layout pass leaves one that a channels-last consumer
// and a channels-first one both read): it is written through the
// permutation, one element per position of the first result's shape
// (EfficientNet's SiLU before its squeeze-and-excitation pool, at batch 1,
// was one thread block for 400,000 elements). A kernel with any other op (a
// reduction, a matmul), or whose results differ in shape otherwise, is left
// as it is. Values read at several positions are
// recomputed at each (memoized per position within a branch), which suits
// the cheap ops of pointwise kernels.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>
#include <vector>

namespace strata {
#define GEN_PASS_DEF_GPUPULLFUSIONPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace kernel = strata::kernel;

namespace {

/// Whether `op` is a linalg op the puller can read one element of: all
/// loops parallel, tensors only, each result written through a permutation.
bool isPullableLinalg(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops())
    return false;
  for (OpOperand &init : linalgOp.getDpsInitsMutable())
    if (!linalgOp.getMatchingIndexingMap(&init).isPermutation())
      return false;
  // Ops with regions inside the body would need their linalg.index and
  // tensor.extract ops pulled too.
  for (Operation &inner : linalgOp.getBlock()->without_terminator())
    if (inner.getNumRegions() != 0)
      return false;
  return true;
}

bool allStatic(ArrayRef<int64_t> values) {
  return llvm::none_of(values, ShapedType::isDynamic);
}

/// The ops of a kernel body the puller handles, by structure alone.
bool isPullable(Operation *op) {
  if (isPullableLinalg(op))
    return true;
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return allStatic(slice.getStaticOffsets()) &&
           allStatic(slice.getStaticSizes()) &&
           allStatic(slice.getStaticStrides());
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return allStatic(insert.getStaticOffsets()) &&
           allStatic(insert.getStaticSizes()) &&
           allStatic(insert.getStaticStrides());
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    return allStatic(pad.getStaticLow()) && allStatic(pad.getStaticHigh()) &&
           pad.getConstantPaddingValue();
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             tensor::EmptyOp>(op);
}

/// Builds the body of the pulled generic: the value of any tensor of the
/// kernel at a position, as scalar ops.
class Puller {
public:
  Puller(OpBuilder &b, Location loc, ArrayRef<Value> ivs,
         ArrayRef<int64_t> extents)
      : b(b), loc(loc), ivs(ivs), extents(extents) {
    scopes.emplace_back();
  }

  /// The element of `tensor` at `at`, or failure.
  FailureOr<Value> pull(Value tensor, ArrayRef<Value> at);

  /// Reads of arguments and constants that became the generic's inputs:
  /// the tensor and its indexing map, each standing in the body for the
  /// argument of `top` (the block being built) at the same position.
  Block *top = nullptr;
  SmallVector<std::pair<Value, AffineMap>> inputs;

private:
  using Key = std::pair<const void *, std::vector<const void *>>;

  Value constant(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value add(Value a, int64_t c) {
    if (c == 0)
      return a;
    if (std::optional<int64_t> k = getConstantIntValue(a))
      return constant(*k + c);
    return arith::AddIOp::create(b, loc, a, constant(c));
  }
  Value mul(Value a, int64_t c) {
    if (c == 1)
      return a;
    if (std::optional<int64_t> k = getConstantIntValue(a))
      return constant(*k * c);
    return arith::MulIOp::create(b, loc, a, constant(c));
  }
  Value divide(Value a, int64_t c) {
    if (c == 1)
      return a;
    if (std::optional<int64_t> k = getConstantIntValue(a))
      return constant(*k / c);
    return arith::DivUIOp::create(b, loc, a, constant(c));
  }
  Value rem(Value a, int64_t c) {
    if (std::optional<int64_t> k = getConstantIntValue(a))
      return constant(*k % c);
    return arith::RemUIOp::create(b, loc, a, constant(c));
  }
  Value andAll(ArrayRef<Value> conditions) {
    Value all;
    for (Value c : conditions)
      all = all ? arith::AndIOp::create(b, loc, all, c).getResult() : c;
    return all;
  }
  /// lo <= v < hi, or null when always true.
  Value within(Value v, int64_t lo, int64_t hi, int64_t extent) {
    SmallVector<Value> conditions;
    if (lo > 0)
      conditions.push_back(arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sge, v, constant(lo)));
    if (hi < extent)
      conditions.push_back(arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::slt, v, constant(hi)));
    return conditions.empty() ? Value() : andAll(conditions);
  }

  /// `then` in the positions where `condition` holds, else `otherwise`;
  /// each side built in its own branch, so only the chosen one reads.
  FailureOr<Value> choose(Value condition, Type type,
                          function_ref<FailureOr<Value>()> then,
                          function_ref<FailureOr<Value>()> otherwise);

  Value leaf(Value tensor, ArrayRef<Value> at);
  FailureOr<Value> pullLinalg(linalg::LinalgOp op, unsigned result,
                              ArrayRef<Value> at);

  OpBuilder &b;
  Location loc;
  ArrayRef<Value> ivs;
  ArrayRef<int64_t> extents;
  /// Memoized elements, one map per branch being built.
  std::vector<std::map<Key, Value>> scopes;
};

FailureOr<Value> Puller::choose(Value condition, Type type,
                                function_ref<FailureOr<Value>()> then,
                                function_ref<FailureOr<Value>()> otherwise) {
  if (!condition)
    return then();
  auto branch = scf::IfOp::create(b, loc, TypeRange{type}, condition,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  for (auto [region, fn] : {std::pair{&branch.getThenRegion(), then},
                            std::pair{&branch.getElseRegion(), otherwise}}) {
    Block *block = &region->front();
    if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
      block->back().erase();
    b.setInsertionPointToEnd(block);
    scopes.emplace_back();
    FailureOr<Value> value = fn();
    scopes.pop_back();
    if (failed(value))
      return failure();
    scf::YieldOp::create(b, loc, *value);
  }
  return branch.getResult(0);
}

Value Puller::leaf(Value tensor, ArrayRef<Value> at) {
  auto type = cast<RankedTensorType>(tensor.getType());
  // At the top of the body (a read inside a branch must stay there), where
  // the position is the loop indices themselves or constants, each loop's
  // extent the tensor's dimension (linalg infers the loops from every
  // operand): an input of the generic through an indexing map, which the GPU
  // mapping may read 16 bytes at a time.
  SmallVector<AffineExpr> exprs;
  bool mapped = b.getInsertionBlock() == top;
  for (auto [d, v] : llvm::enumerate(at)) {
    if (!mapped)
      break;
    if (std::optional<int64_t> k = getConstantIntValue(v)) {
      exprs.push_back(b.getAffineConstantExpr(*k));
      continue;
    }
    auto it = llvm::find(ivs, v);
    if (it == ivs.end() || extents[it - ivs.begin()] != type.getDimSize(d))
      mapped = false;
    else
      exprs.push_back(b.getAffineDimExpr(it - ivs.begin()));
  }
  if (!mapped)
    return tensor::ExtractOp::create(b, loc, tensor, at);
  auto map = AffineMap::get(ivs.size(), 0, exprs, b.getContext());
  for (auto [i, input] : llvm::enumerate(inputs))
    if (input.first == tensor && input.second == map)
      return top->getArgument(i);
  // Inputs come before the outputs' arguments.
  inputs.push_back({tensor, map});
  return top->insertArgument(inputs.size() - 1, type.getElementType(), loc);
}

FailureOr<Value> Puller::pull(Value tensor, ArrayRef<Value> at) {
  Key key{tensor.getAsOpaquePointer(), {}};
  for (Value v : at)
    key.second.push_back(v.getAsOpaquePointer());
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    if (auto found = it->find(key); found != it->end())
      return found->second;

  FailureOr<Value> value = failure();
  Operation *def = tensor.getDefiningOp();
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!def || isa<arith::ConstantOp>(def)) {
    value = leaf(tensor, at);
  } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
    value = pullLinalg(linalgOp, cast<OpResult>(tensor).getResultNumber(), at);
  } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<Value> from;
    unsigned j = 0;
    for (auto [d, offset, stride] :
         llvm::enumerate(slice.getStaticOffsets(), slice.getStaticStrides())) {
      if (dropped.test(d))
        from.push_back(constant(offset));
      else
        from.push_back(add(mul(at[j++], stride), offset));
    }
    value = pull(slice.getSource(), from);
  } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
    llvm::SmallBitVector dropped = insert.getDroppedDims();
    SmallVector<Value> conditions, from;
    for (auto [d, offset, size, stride] :
         llvm::enumerate(insert.getStaticOffsets(), insert.getStaticSizes(),
                         insert.getStaticStrides())) {
      int64_t extent = type.getDimSize(d);
      Value shifted = add(at[d], -offset);
      if (Value c =
              within(at[d], offset, offset + (size - 1) * stride + 1, extent))
        conditions.push_back(c);
      if (stride != 1 && size > 1)
        conditions.push_back(
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                  rem(shifted, stride), constant(0)));
      if (!dropped.test(d))
        from.push_back(divide(shifted, stride));
    }
    // Into an empty tensor, the first part of a concat: every position
    // that reaches it lies in it (the other parts were tested first), and
    // the empty tensor's elements are never read.
    Value condition =
        conditions.empty() || insert.getDest().getDefiningOp<tensor::EmptyOp>()
            ? Value()
            : andAll(conditions);
    value = choose(
        condition, type.getElementType(),
        [&] { return pull(insert.getSource(), from); },
        [&] { return pull(insert.getDest(), at); });
  } else if (auto pad = dyn_cast<tensor::PadOp>(def)) {
    auto source = pad.getSourceType();
    SmallVector<Value> conditions, from;
    for (auto [d, low] : llvm::enumerate(pad.getStaticLow())) {
      if (Value c = within(at[d], low, low + source.getDimSize(d),
                           type.getDimSize(d)))
        conditions.push_back(c);
      from.push_back(add(at[d], -low));
    }
    Value padding = pad.getConstantPaddingValue();
    Value condition = conditions.empty() ? Value() : andAll(conditions);
    value = choose(
        condition, type.getElementType(),
        [&] { return pull(pad.getSource(), from); },
        [&]() -> FailureOr<Value> {
          // A constant defined inside the pad's region is cloned here.
          if (Operation *op = padding.getDefiningOp();
              op && pad->isProperAncestor(op))
            return b.clone(*op)->getResult(0);
          return padding;
        });
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    auto source = collapse.getSrcType();
    SmallVector<Value> from(source.getRank());
    for (auto [r, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      Value linear = at[r];
      for (int64_t k = group.size() - 1; k >= 0; --k) {
        int64_t extent = source.getDimSize(group[k]);
        from[group[k]] = k == 0 ? linear : rem(linear, extent);
        if (k > 0)
          linear = divide(linear, extent);
      }
    }
    value = pull(collapse.getSrc(), from);
  } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    SmallVector<Value> from;
    for (ReassociationIndices group : expand.getReassociationIndices()) {
      Value linear;
      for (int64_t d : group) {
        Value term = at[d];
        linear = linear ? arith::AddIOp::create(
                              b, loc, mul(linear, type.getDimSize(d)), term)
                              .getResult()
                        : term;
      }
      from.push_back(linear);
    }
    value = pull(expand.getSrc(), from);
  } else if (auto cast = dyn_cast<tensor::CastOp>(def)) {
    value = pull(cast.getSource(), at);
  } else if (isa<tensor::EmptyOp>(def)) {
    // Only read where a chain of inserts covers it (a concat's parts): the
    // branch never runs, but must yield something.
    value = arith::ConstantOp::create(b, loc, type.getElementType(),
                                      b.getZeroAttr(type.getElementType()))
                .getResult();
  }
  if (failed(value))
    return failure();
  scopes.back()[key] = *value;
  return value;
}

FailureOr<Value> Puller::pullLinalg(linalg::LinalgOp op, unsigned result,
                                    ArrayRef<Value> at) {
  if (!isPullableLinalg(op))
    return failure();
  // The op's loop indices at this element of result `result`.
  AffineMap resultMap = op.getMatchingIndexingMap(op.getDpsInitOperand(result));
  SmallVector<Value> loops(op.getNumLoops());
  for (unsigned i = 0; i < resultMap.getNumResults(); ++i)
    loops[resultMap.getDimPosition(i)] = at[i];
  auto positionOf = [&](AffineMap map) {
    SmallVector<Value> position;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        position.push_back(loops[d.getPosition()]);
      else if (auto c = dyn_cast<AffineConstantExpr>(e))
        position.push_back(constant(c.getValue()));
      else
        position.push_back(affine::AffineApplyOp::create(
            b, loc, AffineMap::get(map.getNumDims(), 0, e), loops));
    }
    return position;
  };
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (arg.use_empty())
      continue;
    Value v = operand.get();
    if (!isa<RankedTensorType>(v.getType())) {
      mapping.map(arg, v);
      continue;
    }
    FailureOr<Value> element =
        pull(v, positionOf(op.getMatchingIndexingMap(&operand)));
    if (failed(element))
      return failure();
    mapping.map(arg, *element);
  }
  for (Operation &inner : op.getBlock()->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), loops[index.getDim()]);
      continue;
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
      SmallVector<Value> position;
      for (Value i : extract.getIndices())
        position.push_back(mapping.lookupOrDefault(i));
      FailureOr<Value> element = pull(extract.getTensor(), position);
      if (failed(element))
        return failure();
      mapping.map(extract.getResult(), *element);
      continue;
    }
    b.clone(inner, mapping);
  }
  Operation *yield = op.getBlock()->getTerminator();
  return mapping.lookupOrDefault(yield->getOperand(result));
}

/// For a result `v` whose shape is not `first`'s: the permutation map that
/// takes a position of `first`'s shape to a position of `v`, when `v` is a
/// transpose (an all-parallel linalg op that writes through a permutation)
/// of a tensor of `first`'s shape, as the layout pass leaves a value that
/// one consumer reads channels-last and another channels-first. Iterating
/// over `first`'s positions then reaches each element of `v` once, at the
/// element the transpose reads, so the chain that computes both is pulled
/// once per position. Else none (the kernel is left as it is).
static std::optional<AffineMap> resultPermutation(Value v,
                                                  RankedTensorType first) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  auto type = cast<RankedTensorType>(v.getType());
  if (!op || !isPullableLinalg(op) || !type.hasStaticShape() ||
      type.getRank() != first.getRank() || op.getNumDpsInputs() != 1 ||
      op.getNumLoops() != static_cast<unsigned>(first.getRank()))
    return std::nullopt;
  OpOperand *input = op.getDpsInputOperand(0);
  auto inputType = dyn_cast<RankedTensorType>(input->get().getType());
  if (!inputType || inputType.getShape() != first.getShape())
    return std::nullopt;
  AffineMap inputMap = op.getMatchingIndexingMap(input);
  AffineMap outputMap = op.getMatchingIndexingMap(
      op.getDpsInitOperand(cast<OpResult>(v).getResultNumber()));
  if (!inputMap.isPermutation() || !outputMap.isPermutation())
    return std::nullopt;
  // Loop l reads the input at inputMap(l) and writes at outputMap(l): the
  // input's position p is written at outputMap(inputMap^-1(p)).
  AffineMap map = outputMap.compose(inversePermutation(inputMap));
  for (unsigned k = 0; k < map.getNumResults(); ++k)
    if (type.getDimSize(k) != first.getDimSize(map.getDimPosition(k)))
      return std::nullopt;
  return map;
}

/// Rewrites `body` into one generic when it can; true if it did.
bool pullFuse(func::FuncOp body) {
  Block &block = body.front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  if (ret.getNumOperands() == 0)
    return false;
  auto type = dyn_cast<RankedTensorType>(ret.getOperand(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0)
    return false;
  int64_t rank = type.getRank();
  // Each result's indexing map over the loops of the first result's shape:
  // the identity, or for a transposed copy the permutation that takes the
  // first result's position to its own (resultPermutation).
  SmallVector<AffineMap> outputMaps;
  for (Value v : ret.getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return false;
    if (t.getShape() == type.getShape()) {
      outputMaps.push_back(
          AffineMap::getMultiDimIdentityMap(rank, body.getContext()));
      continue;
    }
    std::optional<AffineMap> map = resultPermutation(v, type);
    if (!map)
      return false;
    outputMaps.push_back(*map);
  }
  // Worth it only for a body of several ops that write tensors; one
  // all-parallel op already spreads over the grid, and a lone slice becomes
  // a copy that does.
  int64_t tensorOps = 0;
  for (Operation &op : block.without_terminator()) {
    if (isa<arith::ConstantOp>(op) || op.getNumResults() == 0 ||
        !isa<RankedTensorType>(op.getResult(0).getType()))
      continue;
    if (!isPullable(&op))
      return false;
    if (!isa<tensor::EmptyOp>(op))
      ++tensorOps;
  }
  if (tensorOps < 2)
    return false;

  OpBuilder b(ret);
  Location loc = body.getLoc();
  SmallVector<Value> inits;
  for (Value v : ret.getOperands()) {
    auto t = cast<RankedTensorType>(v.getType());
    inits.push_back(
        tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType()));
  }
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  // The body is built in a generic without inputs, whose block gains an
  // argument before the outputs' for each input the puller finds; the
  // generic with those inputs then takes the body.
  auto draft =
      linalg::GenericOp::create(b, loc, TypeRange(ValueRange(inits)),
                                ValueRange{}, inits, outputMaps, iterators);
  Block *top = b.createBlock(&draft.getRegion());
  for (Value init : inits)
    top->addArgument(cast<RankedTensorType>(init.getType()).getElementType(),
                     loc);
  OpBuilder inner = OpBuilder::atBlockBegin(top);
  SmallVector<Value> ivs;
  for (int64_t d = 0; d < rank; ++d)
    ivs.push_back(linalg::IndexOp::create(inner, loc, d));
  Puller puller(inner, loc, ivs, type.getShape());
  puller.top = top;
  SmallVector<Value> elements;
  for (auto [v, map] : llvm::zip(ret.getOperands(), outputMaps)) {
    SmallVector<Value> at;
    for (unsigned k = 0; k < map.getNumResults(); ++k)
      at.push_back(ivs[map.getDimPosition(k)]);
    FailureOr<Value> element = puller.pull(v, at);
    if (failed(element)) {
      draft->erase();
      for (Value init : inits)
        init.getDefiningOp()->erase();
      return false;
    }
    elements.push_back(*element);
  }
  linalg::YieldOp::create(inner, loc, elements);

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (auto [tensor, map] : puller.inputs) {
    inputs.push_back(tensor);
    maps.push_back(map);
  }
  maps.append(outputMaps.begin(), outputMaps.end());
  b.setInsertionPoint(ret);
  auto generic = linalg::GenericOp::create(b, loc, TypeRange(ValueRange(inits)),
                                           inputs, inits, maps, iterators);
  generic.getRegion().takeBody(draft.getRegion());
  draft->erase();
  ret->setOperands(generic.getResults());
  // What fed the old results is dead now.
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op != generic.getOperation() && isOpTriviallyDead(op))
      op->erase();
  return true;
}

struct GpuPullFusionPass
    : strata::impl::GpuPullFusionPassBase<GpuPullFusionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleOp kernels = strata::getKernelsModule(module);
    if (!kernels)
      return;
    for (auto decl : module.getOps<func::FuncOp>()) {
      auto kind = kernel::get<kernel::Kind>(decl);
      auto category = kernel::get<kernel::Category>(decl);
      if (!kind || kind.getValue() != "codegen" || !category ||
          category.getValue() != "poi" || kernel::has<kernel::Template>(decl))
        continue;
      auto body = kernels.lookupSymbol<func::FuncOp>(decl.getSymName());
      if (!body || body.isDeclaration())
        continue;
      if (pullFuse(body))
        kernel::set<kernel::GpuReason>(
            decl, StringAttr::get(&getContext(),
                                  "its ops pulled into one all-parallel op "
                                  "(strata-gpu-pull-fusion): each output "
                                  "element reads through the chain of "
                                  "slices, concats, pads and elementwise ops "
                                  "from its own position"));
    }
  }
};

} // namespace
