//===- Passes.cpp - the compile stages' own passes --------------*- C++ -*-===//
//
// The steps of the compile path that are strata's own, as MLIR passes so that
// every stage is a pass pipeline (Pipeline.h): strata-opt runs them alone,
// plugins anchor on their names, and a failure in one writes MLIR's crash
// reproducer. Each takes its part of CompileOptions as pass options, so a
// reproducer's pipeline text carries everything needed to rerun it.
//
//   strata-bind-input-shapes{shapes="x:3x8;y:"}
//   strata-verify-static-shapes{target=cpu}
//   strata-partition{target=cpu libraries=true decisions=FILE}
//   strata-outline-kernels
//   strata-copy-to-linalg
//   strata-approximate-math
//   strata-float-min-max-to-llvm
//   strata-collapse-dims
//   strata-vectorize-inner-loops
//   strata-results-in-place
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "CompilerUtils.h"
#include "FloatMinMax.h"
#include "RowParallel.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

namespace strata {
#define GEN_PASS_DEF_BINDINPUTSHAPESPASS
#define GEN_PASS_DEF_VERIFYSTATICSHAPESPASS
#define GEN_PASS_DEF_SPECIALIZEINPUTVALUESPASS
#define GEN_PASS_DEF_PARTITIONPASS
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#define GEN_PASS_DEF_COPYTOLINALGPASS
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#define GEN_PASS_DEF_FLOATMINMAXTOLLVMPASS
#define GEN_PASS_DEF_COLLAPSEDIMSPASS
#define GEN_PASS_DEF_NUMBERCONSTANTSPASS
#define GEN_PASS_DEF_VECTORIZEINNERLOOPSPASS
#define GEN_PASS_DEF_RESULTSINPLACEPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace kernel = strata::kernel;
namespace graph = strata::graph;

/// "name:e0<sep>e1;name2:..." as pass options write the bindings of input
/// shapes and of input values, into `map` (replacing what it held).
/// `parse` reads one element (false when it is not one); `form` and `bad`
/// word the errors.
template <typename T>
static LogicalResult decodeBindings(
    llvm::StringRef text, std::map<std::string, std::vector<T>> &map,
    char separator, llvm::StringRef form,
    std::string (*bad)(llvm::StringRef part, llvm::StringRef binding),
    bool (*parse)(llvm::StringRef, T &), std::string &error) {
  map.clear();
  llvm::SmallVector<llvm::StringRef> bindings;
  text.split(bindings, ';', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef binding : bindings) {
    size_t colon = binding.rfind(':');
    if (colon == llvm::StringRef::npos) {
      error = "'" + binding.str() + "' is not " + form.str();
      return failure();
    }
    std::vector<T> &list = map[binding.take_front(colon).str()];
    llvm::SmallVector<llvm::StringRef> parts;
    binding.drop_front(colon + 1).split(parts, separator, -1,
                                        /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts) {
      T value;
      if (!parse(part, value)) {
        error = bad(part, binding);
        return failure();
      }
      list.push_back(value);
    }
  }
  return success();
}

LogicalResult
strata::decodeInputShapes(llvm::StringRef text,
                          std::map<std::string, std::vector<int64_t>> &shapes,
                          std::string &error) {
  return decodeBindings<int64_t>(
      text, shapes, 'x', "name:d0xd1x...",
      [](llvm::StringRef part, llvm::StringRef binding) {
        return "bad dimension '" + part.str() + "' in '" + binding.str() + "'";
      },
      [](llvm::StringRef part, int64_t &d) {
        return !part.getAsInteger(10, d);
      },
      error);
}

LogicalResult
strata::decodeInputValues(llvm::StringRef text,
                          std::map<std::string, std::vector<double>> &values,
                          std::string &error) {
  return decodeBindings<double>(
      text, values, ',', "name:v0,v1,...",
      [](llvm::StringRef part, llvm::StringRef binding) {
        return "'" + part.str() + "' in '" + binding.str() +
               "' is not a number";
      },
      [](llvm::StringRef part, double &v) {
        std::string number = part.trim().str();
        char *end = nullptr;
        v = std::strtod(number.c_str(), &end);
        return !number.empty() && !*end;
      },
      error);
}

namespace {

struct SpecializeInputValuesPass
    : strata::impl::SpecializeInputValuesPassBase<SpecializeInputValuesPass> {
  using Base::Base;
  /// Each round needs an input the last one did not substitute, so the
  /// rounds are bounded by the inputs given; this caps the graph stage's
  /// reruns on models with many.
  static constexpr int kMaxRounds = 8;

  void runOnOperation() override {
    strata::CompileOptions options =
        strata::recordedCompileOptions(getOperation());
    std::string error;
    if (values.hasValue() &&
        failed(strata::decodeInputValues(values, options.inputValues, error))) {
      getOperation().emitError("strata-specialize-input-values: ") << error;
      return signalPassFailure();
    }
    // Each round substitutes the inputs where values first become unknown;
    // the graph stage then folds the constants (shapes, trip counts and
    // sequences become static, as if the model had them as constants),
    // which may expose the next such op downstream.
    for (int round = 0; round < kMaxRounds; ++round) {
      bool changed = false;
      if (failed(
              strata::specializeInputValues(getOperation(), options, changed)))
        return signalPassFailure();
      if (!changed)
        return;
      OpPassManager pm(ModuleOp::getOperationName());
      strata::graph::buildGraphPipeline(pm);
      pm.addPass(strata::createResolveSequencesPass());
      if (failed(runPipeline(pm, getOperation())))
        return signalPassFailure();
    }
  }
};

struct BindInputShapesPass
    : strata::impl::BindInputShapesPassBase<BindInputShapesPass> {
  using Base::Base;

  void runOnOperation() override {
    strata::CompileOptions options =
        strata::recordedCompileOptions(getOperation());
    strata::overrideIfGiven(target, options.target);
    std::string error;
    if (shapes.hasValue() &&
        failed(strata::decodeInputShapes(shapes, options.inputShapes, error))) {
      getOperation().emitError("strata-bind-input-shapes: ") << error;
      return signalPassFailure();
    }
    if (failed(strata::bindInputShapes(getOperation(), options)))
      signalPassFailure();
  }
};

struct VerifyStaticShapesPass
    : strata::impl::VerifyStaticShapesPassBase<VerifyStaticShapesPass> {
  using Base::Base;

  void runOnOperation() override {
    strata::CompileOptions options =
        strata::recordedCompileOptions(getOperation());
    strata::overrideIfGiven(target, options.target);
    if (failed(strata::verifyStaticShapes(getOperation(), options)))
      signalPassFailure();
  }
};

struct PartitionPass : strata::impl::PartitionPassBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    strata::CompileOptions options =
        strata::recordedCompileOptions(getOperation());
    strata::overrideIfGiven(target, options.target);
    strata::overrideIfGiven(arch, options.cpu);
    strata::overrideIfGiven(libraries, options.useLibraries);
    strata::overrideIfGiven(decisions, options.decisionsFile);
    if (failed(strata::partitionIntoKernels(getOperation(), options)))
      signalPassFailure();
  }
};

/// tensor<...xuiN> as tensor<...xiN>; other types unchanged.
Type signless(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  auto integer =
      tensor ? dyn_cast<IntegerType>(tensor.getElementType()) : IntegerType();
  if (!integer || integer.isSignless())
    return type;
  return tensor.clone(IntegerType::get(type.getContext(), integer.getWidth()));
}

/// Gives a kernel a signature of signless integers (arith, and so the
/// lowered code, knows no unsigned types; the bytes are the same). Casts to
/// and from the graph ops' unsigned types are inserted at the boundary; they
/// cancel against the graph-to-linalg conversion's own casts.
void makeSignatureSignless(func::FuncOp func) {
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  SmallVector<Type> inputs, results;
  for (BlockArgument arg : entry.getArguments()) {
    Type original = arg.getType(), converted = signless(original);
    inputs.push_back(converted);
    if (converted == original)
      continue;
    arg.setType(converted);
    auto cast = UnrealizedConversionCastOp::create(b, func.getLoc(), original,
                                                   ValueRange{arg});
    arg.replaceAllUsesExcept(cast.getResult(0), cast);
  }
  func.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Type original = operand.get().getType(), converted = signless(original);
      if (converted != original)
        operand.set(UnrealizedConversionCastOp::create(
                        b, ret.getLoc(), converted, ValueRange{operand.get()})
                        .getResult(0));
    }
  });
  for (Type type : func.getFunctionType().getResults())
    results.push_back(signless(type));
  func.setType(FunctionType::get(func.getContext(), inputs, results));
}

/// Moves the bodies of the generated kernels into `module @kernels`, where
/// the kernel, cpu and llvm stages lower them; the top level keeps each as a
/// declaration with its decisions (the memory plan and the module file read
/// those). A row-parallel kernel's copy is rewritten for one block of rows
/// and its declaration records each buffer's bytes per block
/// (strata.block_strides) for the object stage's wrapper.
struct OutlineKernelsPass
    : strata::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    if (strata::getKernelsModule(module)) {
      module.emitError("the module already has its kernels outlined (it is "
                       "past the fused stage)");
      return signalPassFailure();
    }
    OpBuilder builder(context);
    builder.setInsertionPointToEnd(module.getBody());
    auto kernels = ModuleOp::create(builder, module.getLoc(), "kernels");
    builder.setInsertionPointToEnd(kernels.getBody());
    for (auto func :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      auto kind = kernel::get<kernel::Kind>(func);
      if (!kind || kind.getValue() != "codegen" || func.isDeclaration())
        continue;
      auto copy = cast<func::FuncOp>(builder.clone(*func));
      copy.setPublic();
      // The decisions stay on the declaration; the copy keeps its name.
      for (NamedAttribute attr : llvm::to_vector(copy->getDiscardableAttrs()))
        copy->removeDiscardableAttr(attr.getName());
      if (auto block = kernel::get<kernel::ParallelBlock>(func);
          block && kernel::has<kernel::ChannelsLastRows>(func)) {
        kernel::set<kernel::BlockStrides>(
            func, builder.getDenseI64ArrayAttr(
                      strata::applyChannelsLastRows(copy, block.getInt())));
      } else if (block) {
        // Recorded without dimensions: over dimension 0.
        int64_t dims = 1;
        if (auto d = kernel::get<kernel::ParallelDims>(func))
          dims = d.getInt();
        std::optional<strata::RowPlan> plan =
            strata::planRows(copy, block.getInt(), nullptr, dims);
        if (!plan || plan->block != block.getInt()) {
          func.emitError("internal error: the kernel's row split changed "
                         "between partitioning and codegen");
          return signalPassFailure();
        }
        strata::applyRowPlan(copy, *plan);
        kernel::set<kernel::BlockStrides>(
            func, builder.getDenseI64ArrayAttr(plan->blockStrides));
      }
      makeSignatureSignless(copy);
      // Inputs may be constants or other steps' live results: bufferization
      // must copy rather than write into them.
      for (unsigned i = 0; i < copy.getNumArguments(); ++i)
        copy.setArgAttr(i, "bufferization.writable",
                        BoolAttr::get(context, false));
      func.eraseBody();
      func.setPrivate();
    }
    // Constants cloned into kernels become arith constants, which
    // bufferization turns into read-only globals.
    kernels.walk([](graph::ConstantOp constant) {
      OpBuilder b(constant);
      auto value = dyn_cast<TypedAttr>(constant.getValue());
      if (!value)
        return;
      Value replacement =
          arith::ConstantOp::create(b, constant.getLoc(), value).getResult();
      constant.replaceAllUsesWith(replacement);
      constant.erase();
    });
  }
};

/// A memref.copy between strided buffers lowers to a call of MLIR's runner
/// library (memrefCopy), which kernels must not need: copy with linalg
/// instead, which becomes loops.
struct CopyToLinalgPass : strata::impl::CopyToLinalgPassBase<CopyToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};

/// The CPU kernels' transcendental functions as polynomials in plain
/// arithmetic (MLIR's math approximations, as IREE's CPU backend uses them)
/// instead of calls of libm's scalar expf, tanhf, erff and logf. A call
/// stops LLVM's loop vectorizer, so an elementwise kernel with a sigmoid,
/// SiLU, GELU or softmax ran one element at a time at libm's speed; as
/// arithmetic it vectorizes like the rest of the loop (bench/RESULTS.md,
/// 2026-12-03). The approximations are accurate to
/// a few ulp in f32 (test/Compile/math.test checks them against float64);
/// f16 and bf16 operands are computed in f32. Sine and cosine stay libm
/// calls: the polynomial's range reduction loses accuracy on the large
/// angles rotary embeddings take.
struct ApproximateMathPass
    : strata::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    auto approximated = [](StringRef name) {
      return llvm::is_contained(
          {math::ExpOp::getOperationName(), math::ExpM1Op::getOperationName(),
           math::LogOp::getOperationName(), math::Log1pOp::getOperationName(),
           math::Log2Op::getOperationName(), math::TanhOp::getOperationName(),
           math::ErfOp::getOperationName(), math::ErfcOp::getOperationName()},
          name);
    };
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, approximated);
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// arith's float min and max as LLVM's intrinsics (FloatMinMax.h says why):
/// a softmax's row maximum is a reduction LLVM's loop vectorizer takes as
/// llvm.maximum, not as the compares and selects arith-expand makes of it.
struct FloatMinMaxToLlvmPass
    : strata::impl::FloatMinMaxToLlvmPassBase<FloatMinMaxToLlvmPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    strata::populateFloatMinMaxToLlvmPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// A kernel's loop nest follows its tensors' shapes, so an elementwise op on
/// [1, 672, 14, 14] became loops whose innermost runs 14 times: too short
/// for LLVM's loop vectorizer, which only vectorizes the innermost loop, so
/// SiLU there ran scalar. This merges each run of consecutive loops that every
/// operand reads contiguously, in order, and that iterate alike (all parallel
/// or all reduction) into one loop, as IREE's dimension collapsing does:
/// elementwise ops become one loop over the whole block, a global average
/// pool a loop over channels around one over the 196 positions. The
/// operands are collapsed with tensor.collapse_shape, which bufferizes to a
/// view. CPU kernels only: the GPU's mapping reads the ops' shapes.
static SmallVector<ReassociationIndices> collapsibleDims(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  auto iterators = op.getIteratorTypesArray();
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices group;
  auto close = [&] {
    if (group.size() > 1)
      groups.push_back(group);
    group.clear();
  };
  for (int64_t dim = 0, e = op.getNumLoops(); dim < e; ++dim) {
    if (!group.empty()) {
      ReassociationIndices longer = group;
      longer.push_back(dim);
      if (iterators[dim] == iterators[group.front()] &&
          linalg::areDimSequencesPreserved(maps, {longer})) {
        group = longer;
        continue;
      }
      close();
    }
    group.push_back(dim);
  }
  close();
  return groups;
}

struct CollapseDimsPass : strata::impl::CollapseDimsPassBase<CollapseDimsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateCollapseDimensions(patterns, collapsibleDims);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// LLVM's loop vectorizer only vectorizes innermost loops, and its full
/// unrolling runs first: an innermost loop of a few dozen iterations (the
/// channels of a channels-last kernel, 32 in EfficientNet's first blocks)
/// was unrolled whole, which made the loop around it (the image's columns,
/// 128 bytes apart) the innermost one, vectorized with gathers and
/// scatters: a squeeze-excite scale at 112x112x32 ran 7x slower than at
/// 56x56x144 (bench/RESULTS.md). An innermost loop whose every store
/// writes consecutive elements as it iterates (its induction variable is
/// the last index) is the one to vectorize: it is marked so that LLVM does
/// not unroll it (llvm.loop.unroll.disable), and the vectorizer, which
/// still widens and interleaves it, takes it. Loops that carry a value or
/// store elsewhere (reductions) keep LLVM's unrolling, which gives them
/// their instruction-level parallelism; so do loops too short for a
/// vector, and loops with no loop around them (nothing else to vectorize).
constexpr int64_t kMinVectorizedTrip = 8;

bool storesAlongInductionVariable(scf::ForOp loop) {
  Value iv = loop.getInductionVar();
  bool any = false, all = true;
  loop.getBody()->walk([&](Operation *op) {
    if (isa<scf::ForOp, scf::WhileOp, scf::ParallelOp>(op))
      all = false;
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      any = true;
      auto type = store.getMemRefType();
      all &= !store.getIndices().empty() && store.getIndices().back() == iv &&
             type.getLayout().isIdentity();
    }
  });
  return any && all;
}

struct VectorizeInnerLoopsPass
    : strata::impl::VectorizeInnerLoopsPassBase<VectorizeInnerLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    Attribute noUnroll = strata::noUnrollAnnotation(&getContext());
    getOperation().walk([&](scf::ForOp loop) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      if (loop.getNumResults() != 0 || !trips ||
          trips->getSExtValue() < kMinVectorizedTrip ||
          !loop->getParentOfType<scf::ForOp>() ||
          !storesAlongInductionVariable(loop))
        return;
      loop->setAttr("llvm.loop_annotation", noUnroll);
    });
  }
};

/// buffer-results-to-out-params makes a returned allocation the kernel's
/// out-parameter, but not an allocation the kernel returns through a view:
/// a transpose whose result is reshaped (an attention's heads merged,
/// [1, 12, 128, 64] -> [1, 128, 768]) was computed into a heap temporary,
/// then copied into the out-parameter, on every call (and a temporary past
/// malloc's mmap threshold costs page faults each time: 0.9 ms for
/// BERT-base's 393 KB). This computes it into the out-parameter through the
/// inverse view instead: copy(collapse_shape(alloc), out) becomes
/// alloc = expand_shape(out), and the copy goes. Only when nothing else
/// reads the out-parameter and nothing uses the allocation after the copy.
struct ResultsInPlacePass
    : strata::impl::ResultsInPlacePassBase<ResultsInPlacePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies)
      (void)writeInPlace(copy);
  }

  static LogicalResult writeInPlace(memref::CopyOp copy) {
    auto out = dyn_cast<BlockArgument>(copy.getTarget());
    Operation *view = copy.getSource().getDefiningOp();
    if (!out || !view || !isa<func::FuncOp>(out.getOwner()->getParentOp()) ||
        !out.hasOneUse() || !copy.getSource().hasOneUse() ||
        !isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(view))
      return failure();
    auto alloc = view->getOperand(0).getDefiningOp<memref::AllocOp>();
    auto outType = cast<MemRefType>(out.getType());
    if (!alloc || !alloc.getType().hasStaticShape() ||
        !alloc.getType().getLayout().isIdentity() ||
        !outType.getLayout().isIdentity() ||
        alloc->getBlock() != copy->getBlock())
      return failure();
    // Nothing may use the allocation after the copy (a dealloc included).
    for (Operation *user : alloc->getUsers()) {
      if (user == view)
        continue;
      Operation *at = copy->getBlock()->findAncestorOpInBlock(*user);
      if (!at || !at->isBeforeInBlock(copy))
        return failure();
    }
    OpBuilder b(alloc);
    Value inPlace;
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(view))
      inPlace = memref::ExpandShapeOp::create(
          b, alloc.getLoc(), alloc.getType().getShape(), out,
          collapse.getReassociationIndices());
    else
      inPlace = memref::CollapseShapeOp::create(
          b, alloc.getLoc(), out,
          cast<memref::ExpandShapeOp>(view).getReassociationIndices());
    if (inPlace.getType() != alloc.getType()) {
      inPlace.getDefiningOp()->erase();
      return failure();
    }
    copy.erase();
    view->erase();
    alloc.replaceAllUsesWith(inPlace);
    alloc.erase();
    return success();
  }
};

/// One-shot bufferization turns each constant tensor into a memref.global
/// named in the order it visits the functions, which for functions that do
/// not call each other is a hash order: the same model compiled twice got
/// its constants in different orders and names, and so different bytes.
/// This gives them the order and names of their first use, kernel by kernel
/// in the module's order.
struct NumberConstantsPass
    : strata::impl::NumberConstantsPassBase<NumberConstantsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::SetVector<memref::GlobalOp> order;
    SymbolTable table(module);
    module.walk([&](memref::GetGlobalOp get) {
      if (auto global = table.lookup<memref::GlobalOp>(get.getName()))
        if (global.getConstant())
          order.insert(global);
    });
    for (auto global : module.getOps<memref::GlobalOp>())
      if (global.getConstant())
        order.insert(global);
    // Two renamings, so that no new name meets an old one.
    MLIRContext *context = module.getContext();
    SmallVector<memref::GlobalOp> globals(order.begin(), order.end());
    for (StringRef prefix : {"__strata_renaming_", "__constant_"})
      for (size_t index = 0; index < globals.size(); ++index) {
        memref::GlobalOp global = globals[index];
        auto name = StringAttr::get(context, prefix + std::to_string(index));
        if (failed(SymbolTable::replaceAllSymbolUses(global, name, module))) {
          global.emitError("cannot rename the constant");
          return signalPassFailure();
        }
        SymbolTable::setSymbolName(global, name);
      }
    Block &body = module.getBodyRegion().front();
    for (memref::GlobalOp global : llvm::reverse(globals))
      global->moveBefore(&body, body.begin());
  }
};

} // namespace

LogicalResult strata::verifyLoweredToLlvm(ModuleOp kernels,
                                          StringRef intrinsics) {
  Operation *notLowered = nullptr;
  kernels.walk([&](Operation *op) {
    Dialect *dialect = op->getDialect();
    if (op != kernels && !notLowered &&
        (!dialect || (dialect->getNamespace() != "llvm" &&
                      dialect->getNamespace() != intrinsics)))
      notLowered = op;
  });
  if (notLowered)
    return notLowered->emitError("the kernels are not in the LLVM dialect "
                                 "(the module is not at the llvm stage): '")
           << notLowered->getName() << "' remains";
  return success();
}

void strata::attachLoopAnnotations(ModuleOp kernels) {
  kernels.walk([](Operation *op) {
    auto annotation =
        op->getAttrOfType<LLVM::LoopAnnotationAttr>("llvm.loop_annotation");
    if (!annotation)
      return;
    if (auto br = dyn_cast<LLVM::BrOp>(op))
      br.setLoopAnnotationAttr(annotation);
    else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
      condBr.setLoopAnnotationAttr(annotation);
    op->removeAttr("llvm.loop_annotation");
  });
}

Attribute strata::noUnrollAnnotation(MLIRContext *context) {
  return LLVM::LoopAnnotationAttr::get(
      context, {}, {}, {},
      LLVM::LoopUnrollAttr::get(context, BoolAttr::get(context, true), {}, {},
                                {}, {}, {}, {}),
      {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});
}

ModuleOp strata::getKernelsModule(ModuleOp module) {
  for (auto nested : module.getOps<ModuleOp>())
    if (nested.getSymName() && *nested.getSymName() == "kernels")
      return nested;
  return nullptr;
}

void strata::registerCompilerPasses() {
  static bool done = [] {
    registerCompileOptionsPass();
    registerBindInputShapesPass();
    registerVerifyStaticShapesPass();
    registerRunTimeShapesPass();
    registerSpecializeInputValuesPass();
    registerExpandGradientsPass();
    registerResolveSequencesPass();
    registerLowerPrecisionPass();
    registerConvToGemmPass();
    registerCausalMasksPass();
    registerPadAttentionPass();
    registerFoldHeadRepeatsPass();
    registerGatherSlicesPass();
    registerSplitReductionsPass();
    registerPartitionPass();
    registerChannelsLastPass();
    registerOutlineKernelsPass();
    registerApplyLayoutsPass();
    registerCollapseDimsPass();
    registerCopyToLinalgPass();
    registerApproximateMathPass();
    registerFloatMinMaxToLlvmPass();
    registerNumberConstantsPass();
    registerVectorizeInnerLoopsPass();
    registerResultsInPlacePass();
    return true;
  }();
  (void)done;
}
