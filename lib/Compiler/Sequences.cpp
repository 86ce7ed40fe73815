//===- Sequences.cpp - sequences of known length become tensors -*- C++ -*-===//
//
// The memory plan has tensors only. But a sequence that a model builds and
// takes apart itself (SequenceConstruct / SplitToSequence ... SequenceAt /
// ConcatFromSequence / SequenceLength) has a length known at compile time,
// even when the positions it is indexed with are run-time inputs. This pass
// (strata-resolve-sequences, in the graph stage) follows each such sequence
// as the list of tensor values it holds and rewrites the reads into tensor
// ops:
//
//   - a constant position is resolved at compile time;
//   - a run-time position p selects among the candidates with `where`
//     (SequenceAt: where(p == 0, s0, where(p == 1, s1, ...)); insert and
//     erase likewise per resulting slot), which needs the elements to have
//     one static type;
//   - SequenceLength becomes a constant, ConcatFromSequence a concat (of
//     unsqueezed tensors, with new_axis).
//
// A sequence that reaches the function's results, a control-flow op, or an
// op this pass does not know stays, and the graph stage reports it as before.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/IR/GraphPatterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"

#include <optional>

namespace strata {
#define GEN_PASS_DEF_RESOLVESEQUENCESPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace graph = strata::graph;

namespace {

/// What is known of a sequence value: its length, and its elements when
/// their values are known (SplitToSequence with run-time sizes knows only
/// the count).
struct KnownSequence {
  int64_t length = 0;
  SmallVector<Value> elements;
  bool hasElements() const {
    return static_cast<int64_t>(elements.size()) == length;
  }
};

/// A constant scalar position, if it is one.
std::optional<int64_t> constantPosition(Value position) {
  DenseIntElementsAttr attr;
  if (!position || !matchPattern(position, m_Constant(&attr)) ||
      attr.getNumElements() != 1)
    return std::nullopt;
  return (*attr.begin()).getSExtValue();
}

class Resolver {
public:
  explicit Resolver(OpBuilder &b) : b(b) {}

  /// Tries to resolve `op`, which reads or makes a sequence. Returns
  /// success when `op` was handled (and may be erased once unused).
  LogicalResult visit(Operation *op) {
    b.setInsertionPoint(op);
    loc = op->getLoc();
    if (auto empty = dyn_cast<graph::SequenceEmptyOp>(op))
      return define(empty.getOutput(), KnownSequence{});
    if (auto construct = dyn_cast<graph::SequenceConstructOp>(op)) {
      KnownSequence seq;
      seq.elements.assign(construct.getInputs().begin(),
                          construct.getInputs().end());
      seq.length = seq.elements.size();
      return define(construct.getOutput(), seq);
    }
    if (auto split = dyn_cast<graph::SplitToSequenceOp>(op))
      return splitToSequence(split);
    auto known = [&](Value v) -> KnownSequence * {
      auto it = sequences.find(v);
      return it == sequences.end() ? nullptr : &it->second;
    };
    if (auto insert = dyn_cast<graph::SequenceInsertOp>(op)) {
      KnownSequence *in = known(insert.getInputSequence());
      if (!in || !in->hasElements())
        return failure();
      return this->insert(insert, *in);
    }
    if (auto erase = dyn_cast<graph::SequenceEraseOp>(op)) {
      KnownSequence *in = known(erase.getInputSequence());
      if (!in || !in->hasElements() || in->length == 0)
        return failure();
      return this->erase(erase, *in);
    }
    if (auto at = dyn_cast<graph::SequenceAtOp>(op)) {
      KnownSequence *in = known(at.getInputSequence());
      if (!in || !in->hasElements() || in->length == 0)
        return failure();
      std::optional<Value> value = select(*in, at.getPosition());
      if (!value)
        return failure();
      return replace(at.getOutput(), *value);
    }
    if (auto length = dyn_cast<graph::SequenceLengthOp>(op)) {
      KnownSequence *in = known(length.getInputSequence());
      if (!in)
        return failure();
      auto type = cast<RankedTensorType>(length.getOutput().getType());
      return replace(length.getOutput(),
                     scalar(type.getElementType(), in->length));
    }
    if (auto concat = dyn_cast<graph::ConcatFromSequenceOp>(op)) {
      KnownSequence *in = known(concat.getInputSequence());
      if (!in || !in->hasElements() || in->length == 0)
        return failure();
      return concatFromSequence(concat, *in);
    }
    return failure();
  }

  /// The tensors `value` holds, each with its name suffix ("[i]" for a
  /// sequence's element i, "[0]" for what an optional holds), when they are
  /// known: the leaves of a sequence or optional result (docs/compiler.md,
  /// "Sequences and optionals at the boundary").
  std::optional<SmallVector<std::pair<std::string, Value>>>
  leaves(Value value) {
    SmallVector<std::pair<std::string, Value>> out;
    if (isa<TensorType>(value.getType())) {
      out.push_back({"", value});
      return out;
    }
    if (isa<graph::OptionalType>(value.getType())) {
      auto wrap = value.getDefiningOp<graph::OptionalOp>();
      if (!wrap)
        return std::nullopt;
      if (!wrap.getInput())
        return out;
      auto held = leaves(wrap.getInput());
      if (!held)
        return std::nullopt;
      for (auto &[suffix, v] : *held)
        out.push_back({"[0]" + suffix, v});
      return out;
    }
    auto it = sequences.find(value);
    if (it == sequences.end() || !it->second.hasElements())
      return std::nullopt;
    for (auto [i, element] : llvm::enumerate(it->second.elements))
      out.push_back({"[" + std::to_string(i) + "]", element});
    return out;
  }

private:
  LogicalResult define(Value sequence, KnownSequence seq) {
    sequences[sequence] = std::move(seq);
    return success();
  }

  /// Replaces a tensor result; the function's result types follow later.
  LogicalResult replace(Value from, Value to) {
    from.replaceAllUsesWith(to);
    return success();
  }

  Value scalar(Type elementType, int64_t value) {
    return graph::createSplatConstant(b, loc,
                                      RankedTensorType::get({}, elementType),
                                      static_cast<double>(value));
  }

  /// `p` as a position in [0, n): negative positions count from the back
  /// (`n` is the sequence length, or length + 1 for an insert).
  Value normalize(Value p, int64_t n) {
    Type element = cast<ShapedType>(p.getType()).getElementType();
    auto scalarType = RankedTensorType::get({}, element);
    auto boolType = RankedTensorType::get({}, b.getI1Type());
    Value negative =
        graph::LessOp::create(b, loc, boolType, p, scalar(element, 0));
    Value wrapped =
        graph::AddOp::create(b, loc, scalarType, p, scalar(element, n));
    return graph::WhereOp::create(b, loc, scalarType, negative, wrapped, p);
  }

  /// i == p (and i < p), as scalar booleans.
  Value equals(Value p, int64_t i) {
    Type element = cast<ShapedType>(p.getType()).getElementType();
    return graph::EqualOp::create(b, loc,
                                  RankedTensorType::get({}, b.getI1Type()), p,
                                  scalar(element, i));
  }
  Value less(int64_t i, Value p) {
    Type element = cast<ShapedType>(p.getType()).getElementType();
    return graph::LessOp::create(b, loc,
                                 RankedTensorType::get({}, b.getI1Type()),
                                 scalar(element, i), p);
  }

  Value where(Value condition, Value x, Value y) {
    return graph::WhereOp::create(b, loc, x.getType(), condition, x, y);
  }

  /// Whether run-time selection among `values` is possible: one static
  /// type for all.
  static bool oneStaticType(ArrayRef<Value> values) {
    if (values.empty())
      return true;
    auto type = dyn_cast<RankedTensorType>(values.front().getType());
    return type && type.hasStaticShape() &&
           llvm::all_of(values, [&](Value v) { return v.getType() == type; });
  }

  /// The element at `position` (constant or run-time).
  std::optional<Value> select(const KnownSequence &seq, Value position) {
    if (std::optional<int64_t> p = constantPosition(position)) {
      int64_t i = *p < 0 ? *p + seq.length : *p;
      if (i < 0 || i >= seq.length)
        return std::nullopt;
      return seq.elements[i];
    }
    if (!oneStaticType(seq.elements))
      return std::nullopt;
    Value p = normalize(position, seq.length);
    Value result = seq.elements.back();
    for (int64_t i = seq.length - 2; i >= 0; --i)
      result = where(equals(p, i), seq.elements[i], result);
    return result;
  }

  LogicalResult insert(graph::SequenceInsertOp op, const KnownSequence &in) {
    KnownSequence out;
    out.length = in.length + 1;
    Value tensor = op.getTensor();
    Value position = op.getPosition();
    std::optional<int64_t> constant =
        position ? constantPosition(position) : std::optional(in.length);
    if (constant) {
      int64_t at = *constant < 0 ? *constant + in.length : *constant;
      if (at < 0 || at > in.length)
        return failure();
      out.elements = in.elements;
      out.elements.insert(out.elements.begin() + at, tensor);
      return define(op.getOutput(), out);
    }
    SmallVector<Value> all(in.elements);
    all.push_back(tensor);
    if (!oneStaticType(all))
      return failure();
    Value p = normalize(position, in.length);
    // Slot i holds old[i] before p, the new tensor at p, old[i - 1] after.
    for (int64_t i = 0; i < out.length; ++i) {
      Value after =
          i >= 1 ? where(equals(p, i), tensor, in.elements[i - 1]) : tensor;
      out.elements.push_back(
          i < in.length ? where(less(i, p), in.elements[i], after) : after);
    }
    return define(op.getOutput(), out);
  }

  LogicalResult erase(graph::SequenceEraseOp op, const KnownSequence &in) {
    KnownSequence out;
    out.length = in.length - 1;
    Value position = op.getPosition();
    std::optional<int64_t> constant =
        position ? constantPosition(position) : std::optional(in.length - 1);
    if (constant) {
      int64_t at = *constant < 0 ? *constant + in.length : *constant;
      if (at < 0 || at >= in.length)
        return failure();
      out.elements = in.elements;
      out.elements.erase(out.elements.begin() + at);
      return define(op.getOutput(), out);
    }
    if (!oneStaticType(in.elements))
      return failure();
    Value p = normalize(position, in.length);
    // Slot i holds old[i] before p and old[i + 1] from p on.
    for (int64_t i = 0; i < out.length; ++i)
      out.elements.push_back(
          where(less(i, p), in.elements[i], in.elements[i + 1]));
    return define(op.getOutput(), out);
  }

  LogicalResult splitToSequence(graph::SplitToSequenceOp op) {
    auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!type || !type.hasStaticShape())
      return failure();
    int64_t rank = type.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return failure();
    int64_t extent = type.getDimSize(axis);
    SmallVector<int64_t> sizes;
    bool squeeze = false;
    if (Value split = op.getSplit()) {
      auto splitType = dyn_cast<RankedTensorType>(split.getType());
      DenseIntElementsAttr values;
      bool constant = matchPattern(split, m_Constant(&values));
      if (splitType && splitType.getRank() == 1 && splitType.hasStaticShape() &&
          !constant) {
        // Run-time sizes: the count is known, the elements are not.
        KnownSequence seq;
        seq.length = splitType.getDimSize(0);
        return define(op.getOutput(), seq);
      }
      if (!constant)
        return failure();
      if (values.getNumElements() == 1 && splitType.getRank() == 0) {
        int64_t chunk = (*values.begin()).getSExtValue();
        if (chunk <= 0)
          return failure();
        for (int64_t at = 0; at < extent; at += chunk)
          sizes.push_back(std::min(chunk, extent - at));
      } else {
        for (const APInt &size : values)
          sizes.push_back(size.getSExtValue());
      }
    } else {
      sizes.assign(extent, 1);
      squeeze = op.getKeepdims() == 0;
    }
    KnownSequence seq;
    seq.length = sizes.size();
    if (sizes.empty())
      return define(op.getOutput(), seq);
    SmallVector<Type> types;
    for (int64_t size : sizes) {
      SmallVector<int64_t> shape(type.getShape());
      shape[axis] = size;
      types.push_back(type.clone(shape));
    }
    auto parts = graph::SplitOp::create(b, loc, types, op.getInput(), Value(),
                                        b.getI64IntegerAttr(axis),
                                        b.getDenseI64ArrayAttr(sizes));
    for (Value part : parts.getOutputs()) {
      if (!squeeze) {
        seq.elements.push_back(part);
        continue;
      }
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + axis);
      seq.elements.push_back(graph::SqueezeOp::create(
          b, loc, type.clone(shape), part, b.getDenseI64ArrayAttr({axis})));
    }
    return define(op.getOutput(), seq);
  }

  LogicalResult concatFromSequence(graph::ConcatFromSequenceOp op,
                                   const KnownSequence &in) {
    auto first = dyn_cast<RankedTensorType>(in.elements.front().getType());
    if (!first || !first.hasStaticShape())
      return failure();
    bool stack = op.getNewAxis() != 0;
    int64_t rank = first.getRank() + (stack ? 1 : 0);
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return failure();
    SmallVector<Value> parts;
    int64_t total = 0;
    for (Value element : in.elements) {
      auto type = dyn_cast<RankedTensorType>(element.getType());
      if (!type || !type.hasStaticShape() || type.getRank() != first.getRank())
        return failure();
      SmallVector<int64_t> shape(type.getShape());
      if (stack) {
        shape.insert(shape.begin() + axis, 1);
        element = graph::UnsqueezeOp::create(b, loc, type.clone(shape), element,
                                             b.getDenseI64ArrayAttr({axis}));
      }
      total += shape[axis];
      parts.push_back(element);
    }
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(parts.front().getType()).getShape());
    shape[axis] = total;
    Value result = graph::ConcatOp::create(b, loc, first.clone(shape), parts,
                                           b.getI64IntegerAttr(axis));
    return replace(op.getOutput(), result);
  }

  OpBuilder &b;
  Location loc = b.getUnknownLoc();
  llvm::DenseMap<Value, KnownSequence> sequences;
};

struct ResolveSequencesPass
    : strata::impl::ResolveSequencesPassBase<ResolveSequencesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp entry = strata::getEntryFunction(getOperation());
    if (!entry)
      return;
    OpBuilder b(&getContext());
    Resolver resolver(b);
    SmallVector<Operation *> handled;
    for (Operation &op :
         llvm::make_early_inc_range(entry.getBody().front().getOperations()))
      if (isa<graph::SequenceEmptyOp, graph::SequenceConstructOp,
              graph::SequenceInsertOp, graph::SequenceEraseOp,
              graph::SequenceAtOp, graph::SequenceLengthOp,
              graph::SplitToSequenceOp, graph::ConcatFromSequenceOp>(op) &&
          succeeded(resolver.visit(&op)))
        handled.push_back(&op);
    // A sequence or optional result becomes the tensors it holds, named
    // `y[0]`, `y[1]`, ... (an empty one: none), as inputs are bound.
    Operation *ret = entry.getBody().front().getTerminator();
    SmallVector<Value> results;
    SmallVector<DictionaryAttr> resultAttrs;
    bool flattened = false;
    for (auto [i, value] : llvm::enumerate(ret->getOperands())) {
      std::optional<SmallVector<std::pair<std::string, Value>>> held;
      if (!isa<TensorType>(value.getType()))
        held = resolver.leaves(value);
      if (!held) {
        results.push_back(value);
        resultAttrs.push_back(entry.getResultAttrDict(i));
        continue;
      }
      flattened = true;
      std::string name = strata::getResultName(entry, i);
      for (auto &[suffix, leaf] : *held) {
        results.push_back(leaf);
        resultAttrs.push_back(b.getDictionaryAttr(
            b.getNamedAttr("graph.name", b.getStringAttr(name + suffix))));
      }
    }
    if (flattened) {
      ret->setOperands(results);
      entry.setType(FunctionType::get(&getContext(),
                                      entry.getFunctionType().getInputs(),
                                      ret->getOperandTypes()));
      entry.setAllResultAttrs(resultAttrs);
    }
    // Sequence ops whose results nothing reads any more go, last first.
    for (Operation *op : llvm::reverse(handled))
      if (op->use_empty())
        op->erase();
    // So do the optionals that only wrapped a flattened result.
    for (Operation &op : llvm::make_early_inc_range(
             llvm::reverse(entry.getBody().front().getOperations())))
      if (isa<graph::OptionalOp>(op) && op.use_empty())
        op.erase();
    // Results may now have more precise types.
    entry.setType(FunctionType::get(&getContext(),
                                    entry.getFunctionType().getInputs(),
                                    ret->getOperandTypes()));
  }
};

} // namespace
