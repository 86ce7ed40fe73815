//===- RunTimeShapes.cpp - the ops that run on shapes of run time ---------===//
//
// After the graph stage and the specializations on input values, a value
// whose shape is still unknown comes from an op whose result size depends
// on tensor values (NonZero, Compress, Unique, NonMaxSuppression) or from a
// run-time If whose branches yield different shapes. Generated code is
// compiled for static shapes, so everything computed from such a value runs
// as the runtime's host kernels (LibraryHostOps.cpp,
// runtime/lib/kernels/HostOps.cpp): this is the tail of a detection model
// (boxes and scores after the threshold, TopK, NMS, the final gathers),
// whose tensors are small. The pass
//
// 1. turns each If that is left (its condition known only at run time, its
//    branches yielding shapes that differ) into dataflow: the branches' ops
//    move before it, every value a branch reads from outside passes through
//    a graph.guard of that branch, and each result is a graph.merge of the
//    two yielded values. The runtime skips the steps of the branch not
//    taken (docs/runtime.md, "Run-time branches"), so a branch runs only
//    when ONNX would run it;
// 2. marks (kernel::Host) every op that reads what a host op wrote,
//    transitively from the value-dependent ops and the guards: the
//    partitioner gives each a host step of its own, and the module writer a
//    Host buffer to each result whose shape is set when it runs. An op that
//    no generated code takes but a host kernel does (MelWeightMatrix) is
//    marked too, without marking its readers (its result's shape is
//    static); with `all` (--host-kernels), every op that has a host kernel.
//
// A Loop left by the graph stage (its trip count or condition known only at
// run time) is marked as well: its body runs as host kernels, once per
// iteration (host.loop, runtime/lib/kernels/HostLoop.cpp).
//
// Ops on run-time shapes that no host kernel takes are refused by the
// partitioner, naming the node and the value-dependent op behind it.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Library.h"
#include "Passes.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"
#include "strata/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

#include "strata/Runtime/Runtime.h"

namespace strata {
#define GEN_PASS_DEF_RUNTIMESHAPESPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace graph = strata::graph;

namespace {

/// Rewrites `op` into guards, its branches' ops and merges (see above).
void guardBranches(graph::IfOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value condition = op.getCondition();
  SmallVector<Value> yielded[2];
  Region *branches[] = {&op.getThenBranch(), &op.getElseBranch()};
  for (auto [index, branch] : llvm::enumerate(branches)) {
    bool expect = index == 0;
    Region *region = branch;
    Block &block = region->front();
    // One guard per outer value the branch reads, made before its first use.
    llvm::DenseMap<Value, Value> guarded;
    auto guard = [&](Value v) {
      auto [it, inserted] = guarded.try_emplace(v, Value());
      if (inserted) {
        auto g = graph::GuardOp::create(b, loc, v.getType(), condition, v,
                                        b.getBoolAttr(expect));
        it->second = g.getOutput();
      }
      return it->second;
    };
    auto isOuter = [&](Value v) {
      return !region->isAncestor(v.getParentRegion());
    };
    auto yield = cast<graph::YieldOp>(block.getTerminator());
    for (Operation &inner :
         llvm::make_early_inc_range(block.without_terminator())) {
      // Operands of the op and of the ops nested in it (an inner If's
      // branches) that come from outside this branch. Constants stay
      // unguarded: an op that reads only constants is pure and runs either
      // way.
      inner.walk([&](Operation *nested) {
        for (OpOperand &operand : nested->getOpOperands()) {
          Value v = operand.get();
          if (!isOuter(v) || v.getDefiningOp<graph::ConstantOp>())
            continue;
          operand.set(guard(v));
        }
      });
      inner.moveBefore(op);
    }
    // A value from outside is there whichever branch runs: the merge reads
    // it as it is.
    llvm::append_range(yielded[index], yield.getValues());
  }
  SmallVector<Value> results;
  for (auto [thenValue, elseValue, result] :
       llvm::zip(yielded[0], yielded[1], op.getResults())) {
    auto merge = graph::MergeOp::create(b, loc, result.getType(), condition,
                                        thenValue, elseValue);
    results.push_back(merge.getOutput());
  }
  op.replaceAllUsesWith(results);
  op.erase();
}

/// Whether the If left by the graph stage (its condition known only at run
/// time) can run as guarded branches: it and its branches' ops produce
/// tensors only (sequences and optionals have no host buffers).
bool takesGuards(graph::IfOp op) {
  auto tensors = [](Operation *o) {
    return llvm::all_of(o->getResultTypes(),
                        [](Type t) { return isa<TensorType>(t); });
  };
  WalkResult walk = op->walk([&](Operation *inner) {
    return tensors(inner) ? WalkResult::advance() : WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

struct RunTimeShapesPass
    : strata::impl::RunTimeShapesPassBase<RunTimeShapesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp entry = strata::getEntryFunction(getOperation());
    if (!entry)
      return;
    Block &body = entry.getBody().front();
    // Outer Ifs first: an inner one moves to the entry with its branch and
    // is taken on a later round.
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation &op : llvm::make_early_inc_range(body)) {
        auto ifOp = dyn_cast<graph::IfOp>(op);
        if (!ifOp || !takesGuards(ifOp))
          continue;
        guardBranches(ifOp);
        changed = true;
      }
    }
    // Forward through the block: a guard or merge runs on the host, and so
    // does an op that reads what a value-dependent op or such an op wrote.
    // (Value-dependent ops and string ops have host kernels of their own.)
    // An op that no generated code takes but a host kernel does runs on the
    // host too (MelWeightMatrix), without making its readers host ops: its
    // result has a static shape.
    MLIRContext *context = &getContext();
    llvm::SmallPtrSet<Operation *, 32> runTime, derived;
    strata::CompileOptions options =
        strata::recordedCompileOptions(getOperation());
    strata::overrideIfGiven(target, options.target);
    strata::overrideIfGiven(all, options.hostKernels);
    const strata::Target *found = strata::lookupTarget(options);
    bool hostMemory = found && !found->facts(options).gpu;
    for (Operation &op : body.without_terminator()) {
      if (strata::isValueShapedOp(&op) || strata::isStringOp(&op) ||
          isa<graph::ConstantOp>(op))
        continue;
      bool hasKernel = static_cast<bool>(strata::rt::lookupKernel(
          ("host." + op.getName().stripDialect()).str()));
      // A Loop the graph stage left (its trip count or condition known only
      // at run time, or too long to unroll) runs its body as host kernels
      // (host.loop); its constants move out of it, becoming the step's
      // inputs like any outer value the body reads.
      if (auto loop = dyn_cast<graph::LoopOp>(op))
        for (Operation &inner :
             llvm::make_early_inc_range(loop.getBody().front()))
          if (isa<graph::ConstantOp>(inner))
            inner.moveBefore(&op);
      bool host = isa<graph::GuardOp, graph::MergeOp, graph::LoopOp>(op);
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp())
          host = host || strata::isValueShapedOp(def) || runTime.contains(def);
      // The fallback takes static results only: an unknown shape from an
      // input's value is the user's to give (--input-value), which makes
      // it generated code.
      bool staticResults = llvm::all_of(op.getResultTypes(), [](Type t) {
        auto tensor = dyn_cast<RankedTensorType>(t);
        return tensor && tensor.hasStaticShape();
      });
      // Where generated code runs in the host's memory, a host op whose
      // results have static shapes ends the host region: its readers read
      // an arena buffer like any other, and are generated code again unless
      // they read another run-time value. Longformer's global attention
      // scatters its rows by indices from NonZero (ScatterND over a static
      // [batch, heads, sequence, sequence]); every layer after it was host
      // ops, and no host kernel takes a LayerNorm. A guarded branch's ops
      // stay host ops (the runtime skips them as a whole), and so does any
      // op whose result's shape is unknown, whatever it reads. On a GPU a
      // generated kernel cannot read what a host step wrote: there the
      // region goes on to the end.
      bool unknownShape = llvm::any_of(op.getResultTypes(), [](Type t) {
        auto tensor = dyn_cast<RankedTensorType>(t);
        return tensor && !tensor.hasStaticShape();
      });
      // Computed, at any distance, from a value only a run can give: an
      // unknown shape there is the run's to set, so a host op's (an input's
      // value that sets a shape is the user's to give instead).
      bool fromRunTime = llvm::any_of(op.getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && (strata::isValueShapedOp(def) || derived.contains(def));
      });
      host = host || (unknownShape && fromRunTime);
      if (host || fromRunTime)
        derived.insert(&op);
      if (host && !(hostMemory && staticResults && !isa<graph::GuardOp>(op)))
        runTime.insert(&op);
      if (host ||
          (hasKernel && (options.hostKernels ||
                         (staticResults && !strata::isLowerableToLinalg(&op)))))
        strata::kernel::set<strata::kernel::Host>(&op, UnitAttr::get(context));
    }
  }
};

} // namespace
